"""The benchmark suite's harness (docs/benchmark_suite.md): "one command, one table".

Run ``python -m benchmarks.bench_suite [--data PATH] [--quick] [--seeds N] [--epsilons ...]
[--tasks ...] [--variants ...] [--methods ...] [--parts suite timing crossover draws]
[--report-only]`` (or through ``python -m benchmarks.run``). Writes
``results/suite.{md,json}`` and ``results/suite_*.png`` (``suite_quick*`` with ``--quick``);
``docs/benchmark_suite.md`` explains the columns.

* **suite** -- on real binary tasks (``benchmarks/_tasks.py``), each in an *easy default* and a
  *hard default* variant, diffprivlib ``LogisticRegression`` over C x data_norm (20
  candidates), at total epsilon (tuning + returned model) 1, 2, 4 over several seeds: held-out
  test accuracy of D (the untuned default, whole budget), L (non-private ``GridSearchCV(cv=5)``
  over the same DP models at the whole budget: the limit, NOT private), DPGridSearchCV,
  DPRandomSearchCV (refit=True and refit=False) and the naive fixed-10 composition baseline
  (exactly 10 runs accounted by composition; refit=True and refit=False). Headline: the gap closed
  (X - D) / (L - D).
* **timing** -- DPGridSearchCV / GridSearchCV(cv=5) on the same grid at n_jobs=1, and
  DPGridSearchCV n_jobs=1 / n_jobs=2 (ratios; the machine is shared).
* **crossover** -- on the largest task (AER/Fertility, 254k rows), accuracy of
  subsample-and-aggregate (DPGridSearchCV) and repetition (DPRandomSearchCV) against the
  number of training rows, at total epsilon 2.
* **draws** -- a diagnostic: the model D, DPGridSearchCV and the default DPRandomSearchCV
  return, against fresh noise draws of the same model (accuracy and minority-class
  collapses), at total epsilon 1 over 3 seeds.

Every finished cell is saved at once into the JSON, and a rerun skips the cells it already has
(``--fresh`` starts over), so a long run can be split into several commands. Every search is
built by one function, :func:`make_search`, which gives each private method the same total
epsilon.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ParameterGrid, train_test_split
from threadpoolctl import threadpool_limits

from benchmarks._common import (
    CLASSES,
    DEFAULT_DATA,
    RESULTS,
    code_versions,
    markdown_table,
    pyplot,
    save_figure,
    stamped,
    timed_cpu_job,
    timed_fit,
    write_result,
)
from benchmarks._tasks import CROSSOVER_TASK, TASKS, VARIANTS, default_params, search_grid
from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune.estimators import set_total_epsilon
from skdptune.evaluation import _holdout
from skdptune.random import SCORE_SHARE_ON_FIT_ROWS

#: method key -> label. D and L are references; the others are built by make_search.
METHODS = {
    "D": "D: untuned default, whole budget",
    "L": "L: GridSearchCV(cv=5) over the DP models, whole budget (NOT private)",
    "R": "R: the best candidate fitted as one run of the search at E[K] = 1000 with a validation "
         "part (NOT private)",
    "grid": "DPGridSearchCV (defaults: auto tuning share, partition fits in miniature)",
    "grid_before": "DPGridSearchCV, earlier defaults (½ tuning, C not rescaled)",
    "random": "DPRandomSearchCV refit=True, logarithmic law",
    "random_norefit": "DPRandomSearchCV refit=False, logarithmic law (the defaults before the "
                      "geometric law)",
    "random_geometric": "DPRandomSearchCV geometric law, refit=False, n_iter=10 (the defaults "
                        "before n_iter=None)",
    "random_geometric_30": "DPRandomSearchCV geometric law, refit=False, n_iter=30",
    "random_geometric_50": "DPRandomSearchCV geometric law, refit=False, n_iter=50 (the default "
                           "E[K] before batched runs got 1000)",
    "random_geometric_100": "DPRandomSearchCV geometric law, refit=False, n_iter=100",
    "random_geometric_200": "DPRandomSearchCV geometric law, refit=False, n_iter=200",
    "random_geometric_1000": "DPRandomSearchCV geometric law, refit=False, n_iter=1000 (the "
                             "runs batched), validation_size=0.2 (the defaults before "
                             "validation_size=None)",
    "random_fitrows_50": "n_iter=50 and validation_size=0 (every run fitted and scored on all "
                         "rows)",
    "random_fitrows_500": "n_iter=500 and validation_size=0 (every run fitted and scored on all "
                          "rows, the runs batched: the defaults at half their runs)",
    "random_fitrows_1000": "DPRandomSearchCV defaults (geometric law, refit=False, n_iter=None and "
                           "validation_size=None: E[K] = 1000 and every run fitted and scored "
                           "on all rows, the runs batched)",
    "random_fitrows_2000": "n_iter=2000 and validation_size=0 (every run fitted and scored on all "
                           "rows, the runs batched: the previous defaults)",
    "random_fitrows_3000": "DPRandomSearchCV defaults but n_iter=3000",
    "random_share10": "n_iter=1000, validation_size=0, the noisy score gets 10 % of a run's ε",
    "random_share33": "n_iter=1000, validation_size=0, the noisy score gets 33 % of a run's ε",
    "random_share50": "n_iter=1000, validation_size=0, the noisy score gets 50 % of a run's ε",
    "random_50_val10": "n_iter=50 and validation_size=0.1",
    "random_50_val30": "n_iter=50 and validation_size=0.3",
    "random_nb05_50": "n_iter=50 and the negative binomial law, η = 0.5 (2.5 ε_Q per run)",
    "random_nb05_1000": "n_iter=1000, validation_size=0.2 and the negative binomial law, "
                        "η = 0.5",
    "fixed10": "naive fixed-10, refit=True",
    "fixed10_norefit": "naive fixed-10, refit=False",
    "grid_parts300": "DPGridSearchCV, min_partition_size=300 (fewer, larger partitions)",
    "grid_parts1000": "DPGridSearchCV, min_partition_size=1000 (fewer, larger partitions)",
    "grid_balanced": "DPGridSearchCV selecting by balanced accuracy (a one-class candidate "
                     "scores 0.5 on every partition)",
}
SEARCHES = ("grid", "grid_before", "random", "random_norefit", "random_geometric",
            "random_geometric_30", "random_geometric_50", "random_geometric_100",
            "random_geometric_200", "random_geometric_1000", "random_fitrows_50",
            "random_fitrows_500", "random_fitrows_1000", "random_fitrows_2000",
            "random_fitrows_3000", "random_share10", "random_share33", "random_share50",
            "random_nb05_1000", "fixed10", "fixed10_norefit", "grid_parts300", "grid_parts1000",
            "grid_balanced")
#: the search the docs recommend first (docs/choosing.md): DPRandomSearchCV with its defaults
DEFAULT_SEARCH = "random_fitrows_1000"
#: every other DPRandomSearchCV method has a validation part of this share (the default
#: before validation_size=None), so that its saved cells keep their meaning
VALIDATION_SIZE = 0.2
#: the search whose one run R imitates (its run is fitted on the train part)
RUN_CEILING_SEARCH = "random_geometric_1000"
#: one setting of the search at E[K] = 50 changed (the "Levers" table, against LEVER_BASE)
LEVERS = ("random_50_val10", "random_50_val30", "random_nb05_50")
LEVER_BASE = "random_geometric_50"
#: one setting of the library's default search (E[K] = 1000 without a validation part)
#: changed: the second "Levers" table, against DEFAULT_LEVER_BASE
DEFAULT_LEVERS = ("random_fitrows_500", "random_fitrows_2000", "random_fitrows_3000",
                  "random_share10", "random_share33", "random_share50")
DEFAULT_LEVER_BASE = "random_fitrows_1000"
#: one setting of DPGridSearchCV changed: the third "Levers" table, against its defaults
GRID_LEVERS = ("grid_parts300", "grid_parts1000", "grid_balanced")
GRID_LEVER_BASE = "grid"
#: DPGridSearchCV's settings: its defaults and the levers'
GRID_SETTINGS = {"grid": {}, "grid_parts300": {"min_partition_size": 300},
                 "grid_parts1000": {"min_partition_size": 1000},
                 "grid_balanced": {"scoring": "balanced_accuracy"}}
#: the noisy score's share of a run's epsilon eps_Q = eps_model + epsilon_score (the default:
#: SCORE_SHARE_ON_FIT_ROWS / (1 + SCORE_SHARE_ON_FIT_ROWS) = 20 %)
SCORE_SHARES = {"random_share10": 0.10, "random_share33": 1 / 3, "random_share50": 0.50}
#: DPGridSearchCV's earlier defaults: half of the total for the tuning (and no C rescaling)
GRID_TUNING_SHARE = 0.5
N_ITER = 10  # E[K] of DPRandomSearchCV, exactly K for the naive baseline
TEST_SIZE = 0.25
EPSILONS = (1.0, 2.0, 4.0)
CROSSOVER_EPSILON = 2.0
CROSSOVER_SIZES = (2000, 8000, 32000, 128000, None)  # None: all training rows
CROSSOVER_METHODS = ("D", "grid", "grid_before", "random", "random_norefit", "random_geometric",
                     "random_geometric_50", "random_geometric_1000", "random_fitrows_1000",
                     "random_fitrows_2000")
#: timed fits: DPGridSearchCV at n_jobs 1 and 2, GridSearchCV(cv=5) as is and under 1-thread
#: BLAS at n_jobs 1 and 2 (its own speed-up), and the machine's own speed-up on a CPU-bound
#: joblib job (timed_cpu_job)
#: noise draws per candidate of the run ceiling R
RUN_CEILING_DRAWS = 3
#: the draws part: the model each of these methods returns, refitted with this many noise draws
DRAW_METHODS = ("D", "grid", DEFAULT_SEARCH)
RELEASE_DRAWS = 20
#: a model has collapsed when it predicts the minority class for this share of the test rows
COLLAPSE_SHARE = 0.95
TIMINGS = ("dp_1", "dp_2", "gridsearchcv_1", "gridsearchcv_1_1blas", "gridsearchcv_2_1blas",
           "cpu_1", "cpu_2")


# == the one place where searches are built =====================================================
def model(params: dict, epsilon: float, seed: int | None = None) -> LogisticRegression:
    """diffprivlib's logistic regression with its own throwaway accountant."""
    return LogisticRegression(epsilon=epsilon, random_state=seed,
                              accountant=BudgetAccountant(), **params)


class PricedLogisticRegression(LogisticRegression):
    """diffprivlib's logistic regression that *costs* ``cost`` (for the references D, L, R).

    diffprivlib's ``LogisticRegression`` costs more than its ``epsilon`` when ``data_norm > 1``
    (docs/privacy.md), and the searches charge what it costs: a reference fitted at
    ``epsilon = total`` would spend more than the searches it is compared with. ``fit`` sets
    ``epsilon`` to the largest value whose cost, for the two classes of these tasks, is at most
    ``cost`` (``skdptune.estimators.set_total_epsilon``), for each candidate of L separately.
    """

    def __init__(self, cost=1.0, data_norm=None, C=1.0, random_state=None, accountant=None):
        super().__init__(epsilon=cost, data_norm=data_norm, C=C, random_state=random_state,
                         accountant=accountant)
        self.cost = cost

    def fit(self, X, y, sample_weight=None):
        plain = LogisticRegression(epsilon=1.0, data_norm=self.data_norm, C=self.C)
        self.epsilon = set_total_epsilon(plain, self.cost, n_classes=len(CLASSES)).epsilon
        return super().fit(X, y, sample_weight)


def priced_model(params: dict, cost: float, seed: int | None = None) -> LogisticRegression:
    """:class:`PricedLogisticRegression` with its own throwaway accountant."""
    return PricedLogisticRegression(cost=cost, random_state=seed, accountant=BudgetAccountant(),
                                    **params)


def make_search(method: str, estimator, space: dict, total_epsilon: float, seed: int):
    """An unfitted private search whose ``privacy_spent_`` is ``total_epsilon`` (tuning + model).

    ``estimator``'s own epsilon is overwritten: every search's ``epsilon`` is the total
    (budget mode). ``"grid"`` is DPGridSearchCV with its defaults; ``"grid_before"`` its
    earlier defaults (half of the total for the tuning, ``C`` not rescaled in the partition
    fits).
    """
    common = {"classes": CLASSES, "random_state": seed, "n_jobs": 1,
              "accountant": BudgetAccountant()}
    if method in GRID_SETTINGS:
        return DPGridSearchCV(estimator, space, epsilon=total_epsilon, **GRID_SETTINGS[method],
                              **common)
    if method == "grid_before":
        return DPGridSearchCV(estimator, space, epsilon=total_epsilon,
                              tuning_share=GRID_TUNING_SHARE, inner_params="same", **common)
    laws = {"random": ("logarithmic", True, N_ITER),
            "random_norefit": ("logarithmic", False, N_ITER),
            "random_geometric": ("geometric", False, N_ITER),
            "random_geometric_30": ("geometric", False, 30),
            "random_geometric_50": ("geometric", False, 50),
            "random_geometric_100": ("geometric", False, 100),
            "random_geometric_200": ("geometric", False, 200),
            "random_geometric_1000": ("geometric", False, 1000),
            "fixed10": ("fixed", True, N_ITER), "fixed10_norefit": ("fixed", False, N_ITER)}
    nb05 = {"distribution": "negative_binomial", "eta": 0.5, "validation_size": VALIDATION_SIZE,
            "n_iter": 1000}
    levers = {"random_fitrows_50": {"validation_size": 0, "n_iter": 50},
              "random_fitrows_500": {"validation_size": 0, "n_iter": 500},
              "random_fitrows_1000": {},  # the library's defaults
              "random_fitrows_2000": {"validation_size": 0, "n_iter": 2000},
              "random_fitrows_3000": {"n_iter": 3000},
              "random_50_val10": {"validation_size": 0.1, "n_iter": 50},
              "random_50_val30": {"validation_size": 0.3, "n_iter": 50},
              "random_nb05_50": {**nb05, "n_iter": 50},
              "random_nb05_1000": nb05}
    if method in SCORE_SHARES:  # geometric law, delta = 0, refit=False: 3 eps_Q is the total
        levers[method] = {"epsilon_score": SCORE_SHARES[method] * total_epsilon / 3,
                          "validation_size": 0, "n_iter": 1000}
    if method in levers:
        return DPRandomSearchCV(estimator, space, epsilon=total_epsilon, **levers[method],
                                **common)
    if method not in laws:
        raise ValueError(f"unknown search {method!r}; expected one of {sorted(laws)}")
    distribution, refit, n_iter = laws[method]
    return DPRandomSearchCV(estimator, space, n_iter=n_iter, distribution=distribution,
                            epsilon=total_epsilon, refit=refit,
                            validation_size=VALIDATION_SIZE, **common)


def fit_method(method: str, X_train, y_train, X_test, y_test, variant: str, total: float,
               seed: int) -> dict:
    """Fit one method on the training rows; test accuracy, chosen parameters and seconds."""
    start = time.perf_counter()
    if method == "R":  # scored on the test rows inside (a mean over noise draws)
        accuracy, params = run_ceiling(X_train, y_train, X_test, y_test, variant, total, seed)
        return {"accuracy": accuracy, "seconds": time.perf_counter() - start,
                "C": float(params["C"]), "data_norm": float(params["data_norm"])}
    fitted, params = fit_estimator(method, X_train, y_train, variant, total, seed)
    seconds = time.perf_counter() - start
    return {"accuracy": float(fitted.score(X_test, y_test)), "seconds": seconds,
            "C": float(params["C"]), "data_norm": float(params["data_norm"])}


def fit_estimator(method: str, X_train, y_train, variant: str, total: float, seed: int):
    """Fit D, L or a search (``make_search``) on the training rows: ``(fitted, its params)``.

    A search is checked to spend exactly ``total`` and, for the library's default, to still be
    the defaults the tables say it is.
    """
    d = X_train.shape[1]
    default, space = default_params(variant, d), search_grid(variant, d)
    if method == "D":
        fitted = priced_model(default, total, seed).fit(X_train, y_train)
        params = default
    elif method == "L":
        fitted = GridSearchCV(priced_model(default, total, seed), space, cv=5, n_jobs=1)
        fitted.fit(X_train, y_train)
        params = fitted.best_params_
    else:
        fitted = make_search(method, model(default, 1.0), space, total, seed)
        fitted.fit(X_train, y_train)
        spent = fitted.privacy_spent_.epsilon
        tuning = fitted.privacy_spent_.components[0]
        if method == DEFAULT_SEARCH and ("E[K]=1000" not in tuning.detail
                                         or "all rows" not in tuning.parts[1].name):
            raise AssertionError(f"{method}: the defaults are no longer E[K] = 1000 without a "
                                 "validation part here")
        if method in SCORE_SHARES and not np.isclose(
                tuning.parts[2].epsilon / tuning.parts[0].epsilon, SCORE_SHARES[method]):
            raise AssertionError(f"{method}: the score does not get its share of a run's ε")
        if not np.isclose(spent, total, rtol=1e-9) or spent > total * (1 + 1e-12):
            raise AssertionError(f"{method} spent epsilon={spent}, not the total {total}")
        params = fitted.best_params_
    return fitted, params


def run_ceiling(X_train, y_train, X_test, y_test, variant: str, total: float, seed: int):
    """R, a diagnostic (NOT private): the best candidate fitted as one run of the search at
    ``E[K] = 1000`` with a validation part (``RUN_CEILING_SEARCH``).

    That search returns one run's model: a candidate fitted with the run's epsilon (its
    share of the total, from the search's own accounting) on the run's training rows (all but
    the ``validation_size`` share). R fits every candidate that way with
    ``RUN_CEILING_DRAWS`` noise draws, scores them on the test rows, and keeps the best
    candidate's mean. It is no ceiling of the search: the search returns the best of ``K``
    noise draws, picked by a validation score, and draws of one candidate differ by about
    ±0.01 in accuracy (docs/benchmark_suite.md). Returns that mean and the candidate's
    parameters.
    """
    d = X_train.shape[1]
    default, space = default_params(variant, d), search_grid(variant, d)
    search = make_search(RUN_CEILING_SEARCH, model(default, 1.0), space, total, seed)
    # the model epsilon of one run, from the search's own (public) budget-mode accounting
    epsilon_run = search.planned_privacy(len(y_train)).components[0].parts[1].epsilon
    n = len(y_train)
    rows = np.random.default_rng([seed, 7]).permutation(n)[
        int(np.ceil(search.validation_size * n)):]
    best = None
    for index, params in enumerate(ParameterGrid(space)):
        params = default | params
        accuracies = []
        for draw in range(RUN_CEILING_DRAWS):
            noise_seed = int(np.random.SeedSequence([seed, index, draw]).generate_state(1)[0])
            fitted = priced_model(params, epsilon_run, noise_seed).fit(X_train[rows],
                                                                       y_train[rows])
            accuracies.append(fitted.score(X_test, y_test))
        if best is None or np.mean(accuracies) > best[0]:
            best = (float(np.mean(accuracies)), params)
    return best


# == data ======================================================================================
_LOADED: dict = {}


def task_data(name: str, data_path: str | None):
    if name not in _LOADED:
        _LOADED[name] = TASKS[name].loader(data_path)
    return _LOADED[name]


def split(X, y, seed: int, max_rows: int | None = None, n_train: int | None = None):
    """A stratified train/test split per seed; optionally a data-independent row subset first
    (``max_rows``) or fewer training rows (``n_train``, a random subset of the train part)."""
    rng = np.random.default_rng(seed)
    if max_rows is not None and len(y) > max_rows:
        rows = np.sort(rng.choice(len(y), size=max_rows, replace=False))
        X, y = X[rows], y[rows]
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=seed, stratify=y)
    if n_train is not None and n_train < len(y_train):
        rows = np.sort(rng.choice(len(y_train), size=n_train, replace=False))
        X_train, y_train = X_train[rows], y_train[rows]
    return X_train, X_test, y_train, y_test


# == the cache of finished cells ===============================================================
#: the entries of a results file (``runs``: one per command that wrote to it)
PARTS = ("cells", "crossover", "timing", "random_timing", "draws", "runs")


class Store:
    """The result JSON, rewritten after every finished cell (resumable runs)."""

    def __init__(self, path: Path, fresh: bool):
        """``fresh``: start over -- the saved file is removed at once, so that neither this
        command's refreshes nor the commands started after it bring its cells back."""
        self.path = path
        self.report = {part: {} for part in PARTS}
        self.own: set = set()
        if fresh:
            path.unlink(missing_ok=True)
        elif path.exists():
            self.report.update(json.loads(path.read_text()))

    def mark(self, part: str, key: str) -> None:
        """Record that this process wrote ``report[part][key]`` (it wins over the file)."""
        self.own.add((part, key))

    def refresh(self) -> None:
        """Take in what other processes saved meanwhile: every entry this process did not
        write itself comes from the file, so parts can run as separate concurrent commands
        without redoing or overwriting each other's cells. Dicts are updated in place."""
        if self.path.exists():
            on_disk = json.loads(self.path.read_text())
            for part in PARTS:
                mine = self.report[part]
                for key, value in on_disk.get(part, {}).items():
                    if (part, key) not in self.own:
                        mine[key] = value

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.refresh()
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")  # one per process: no clash
        tmp.write_text(json.dumps(self.report, indent=1, default=float))
        os.replace(tmp, self.path)


def merge_results(store: Store, other: dict) -> None:
    """Take every method result of ``other`` (another results file, e.g. one method rerun with
    ``--suffix``) into ``store``, cell by cell and crossover entry by entry, replacing the same
    methods, and its timings task by task (a task's timings are interleaved repetitions: they
    replace the task's old ones whole); save."""
    store.refresh()
    for part in ("cells", "crossover"):
        for key, entry in other.get(part, {}).items():
            mine = store.report[part].setdefault(
                key, {k: v for k, v in entry.items() if k != "methods"} | {"methods": {}})
            mine["methods"].update(entry["methods"])
            store.mark(part, key)
    for part in ("timing", "random_timing", "draws"):
        for key, entry in other.get(part, {}).items():
            store.report[part][key] = entry
            store.mark(part, key)
    store.save()


def cell_key(*parts) -> str:
    return "|".join(str(p) for p in parts)


def available_tasks(opts, part: str) -> dict:
    """The data of ``opts.tasks``; a task whose data is missing is skipped, and said so."""
    tasks = {}
    for name in opts.tasks:
        try:
            tasks[name] = task_data(name, opts.data)
        except (FileNotFoundError, ImportError) as exc:
            print(f"[{part}] skipping {name}: {exc}", flush=True)
    return tasks


def run_suite(opts, store: Store) -> None:
    """Seeds outermost: a run stopped early still covers every task and variant."""
    cells = store.report["cells"]
    tasks = available_tasks(opts, "suite")
    for seed in range(opts.from_seed, opts.seeds):
        for name, data in tasks.items():
            for variant in opts.variants:
                for total in opts.epsilons:
                    run_cell(opts, store, cells, name, data, variant, total, seed)


def run_cell(opts, store, cells, name, data, variant, total, seed) -> None:
    store.refresh()
    key = cell_key(name, variant, total, seed)
    cell = cells.setdefault(key, {"task": name, "variant": variant, "total_epsilon": total,
                                  "seed": seed, "methods": {}})
    todo = [m for m in opts.methods if m not in cell["methods"]]
    if not todo:
        return
    store.mark("cells", key)
    X = data.features(variant)
    X_train, X_test, y_train, y_test = split(X, data.y, seed, TASKS[name].max_rows)
    cell.update(n_train=len(y_train), n_test=len(y_test), n_features=X.shape[1])
    for method in todo:
        cell["methods"][method] = stamped(fit_method(method, X_train, y_train, X_test, y_test,
                                                     variant, total, seed))
    store.save()
    accs = {m: round(r["accuracy"], 3) for m, r in cell["methods"].items()}
    print(f"[suite] {key}: {accs}", flush=True)


def run_timing(opts, store: Store) -> None:
    """Interleaved repetitions (the three fits see the same load); ratios only."""
    timing = store.report["timing"]
    for name in opts.timing_tasks:
        done = timing.get(name, {})
        if all(len(done.get(k, [])) >= opts.timing_reps for k in TIMINGS):
            continue
        task = TASKS[name]
        data = task_data(name, opts.data)
        X_train, _, y_train, _ = split(data.features("easy"), data.y, 0, task.max_rows)
        d = X_train.shape[1]
        space, default = search_grid("easy", d), default_params("easy", d)

        def dp(n_jobs, default=default, space=space):
            search = make_search("grid", model(default, 1.0), space, CROSSOVER_EPSILON, 0)
            return search.set_params(n_jobs=n_jobs)

        plain = GridSearchCV(priced_model(default, CROSSOVER_EPSILON * (1 - GRID_TUNING_SHARE), 0),
                             space, cv=5, n_jobs=1)
        plain_2 = clone(plain).set_params(n_jobs=2)
        dp(2).fit(X_train[:2000], y_train[:2000])  # warm-up: start the joblib workers untimed
        timed_cpu_job(2)
        times = {key: [] for key in TIMINGS}
        for _ in range(opts.timing_reps):
            times["dp_1"].append(timed_fit(dp(1), X_train, y_train))
            times["gridsearchcv_1"].append(timed_fit(plain, X_train, y_train))
            # skdptune fits under one BLAS thread (many small fits); time scikit-learn so too
            times["gridsearchcv_1_1blas"].append(timed_fit(plain, X_train, y_train, True))
            # scikit-learn's own speed-up on the same work (its workers get one BLAS thread)
            times["gridsearchcv_2_1blas"].append(timed_fit(plain_2, X_train, y_train, True))
            times["dp_2"].append(timed_fit(dp(2), X_train, y_train))
            times["cpu_1"].append(timed_cpu_job(1))
            times["cpu_2"].append(timed_cpu_job(2))
        store.mark("timing", name)
        timing[name] = {**times, "n_train": len(y_train), "n_candidates": 20,
                        "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
        store.save()
        print(f"[timing] {name}: {times}", flush=True)


#: DPRandomSearchCV's runs batched (its default for a plain LogisticRegression) and one by one,
#: at E[K] = 50 and 1000, with a validation part, against GridSearchCV(cv=5)
#: (L, under one BLAS thread)
RANDOM_TIMINGS = ("batched_50", "one_by_one_50", "batched_1000", "one_by_one_1000", "L_1blas")
#: the library's default search without a validation part, batched, at E[K] = 1000 (the
#: default), 2000 (the default before) and 3000, and L, timed in their own interleaved
#: repetitions
DEFAULT_TIMINGS = ("runs_1000", "runs_2000", "runs_3000", "L_1blas")


@contextmanager
def one_by_one_runs():
    """DPRandomSearchCV with its batched runs switched off (every run a diffprivlib ``fit``)."""
    real = _holdout.supports_batched_fits
    _holdout.supports_batched_fits = lambda *args, **kwargs: False
    try:
        yield
    finally:
        _holdout.supports_batched_fits = real


def run_random_timing(opts, store: Store) -> None:
    """Interleaved repetitions, n_jobs=1, the easy variant at total epsilon 2; ratios only.

    Two sets per task, each interleaved with its own GridSearchCV timings: the batched and
    one-by-one runs (``RANDOM_TIMINGS``) and the library's defaults (``DEFAULT_TIMINGS``,
    stored under ``"defaults"``); a set already complete in the store is not run again."""
    timing = store.report["random_timing"]
    for name in opts.random_timing_tasks:
        done = timing.get(name, {})
        paths_done = all(len(done.get(k, [])) >= opts.timing_reps for k in RANDOM_TIMINGS)
        defaults_done = all(len(done.get("defaults", {}).get(k, [])) >= opts.timing_reps
                            for k in DEFAULT_TIMINGS)
        if paths_done and defaults_done:
            continue
        data = task_data(name, opts.data)
        X_train, _, y_train, _ = split(data.features("easy"), data.y, 0, TASKS[name].max_rows)
        d = X_train.shape[1]
        space, default = search_grid("easy", d), default_params("easy", d)

        def search(method, seed, default=default, space=space):
            return make_search(method, model(default, 1.0), space, CROSSOVER_EPSILON, seed)

        def fit(method, seed, X_train=X_train, y_train=y_train):
            return timed_fit(search(method, seed), X_train, y_train)

        plain = GridSearchCV(priced_model(default, CROSSOVER_EPSILON, 0), space, cv=5, n_jobs=1)
        entry = dict(done)
        if not paths_done:
            times = {key: [] for key in RANDOM_TIMINGS}
            for rep in range(opts.timing_reps):
                for n_iter in (50, 1000):
                    method = f"random_geometric_{n_iter}"
                    # the same seed on both paths: the same number of runs K
                    times[f"batched_{n_iter}"].append(fit(method, rep))
                    with one_by_one_runs():
                        times[f"one_by_one_{n_iter}"].append(fit(method, rep))
                times["L_1blas"].append(timed_fit(plain, X_train, y_train, True))
            entry.update(times)
        if not defaults_done:
            times = {key: [] for key in DEFAULT_TIMINGS}
            for rep in range(opts.timing_reps):
                for runs in (1000, 2000, 3000):
                    times[f"runs_{runs}"].append(fit(f"random_fitrows_{runs}", rep))
                times["L_1blas"].append(timed_fit(plain, X_train, y_train, True))
            entry["defaults"] = times
        store.mark("random_timing", name)
        timing[name] = {**entry, "n_train": len(y_train),
                        "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
        store.save()
        print(f"[random timing] {name}: {entry}", flush=True)


def run_crossover(opts, store: Store) -> None:
    crossover = store.report["crossover"]
    try:
        data = task_data(CROSSOVER_TASK, opts.data)
    except ImportError as exc:
        print(f"[crossover] skipped: {exc}", flush=True)
        return
    X = data.features(opts.crossover_variant)
    for seed in range(opts.crossover_seeds):  # seeds outermost, as in run_suite
        for n_train in opts.crossover_sizes:
            store.refresh()
            key = cell_key(n_train or "all", seed)
            cell = crossover.setdefault(key, {"seed": seed, "methods": {}})
            todo = [m for m in CROSSOVER_METHODS
                    if m in opts.methods and m not in cell["methods"]]
            if not todo:
                continue
            store.mark("crossover", key)
            X_train, X_test, y_train, y_test = split(X, data.y, seed, n_train=n_train)
            cell.update(n_train=len(y_train), variant=opts.crossover_variant)
            for method in todo:
                cell["methods"][method] = stamped(fit_method(
                    method, X_train, y_train, X_test, y_test, opts.crossover_variant,
                    CROSSOVER_EPSILON, seed))
            store.save()
            accs = {m: round(r["accuracy"], 3) for m, r in cell["methods"].items()}
            print(f"[crossover] n={len(y_train)} seed={seed}: {accs}", flush=True)


def run_draws(opts, store: Store) -> None:
    """How much of a method's result is the luck of its returned model's noise (a diagnostic,
    NOT private: it refits on the same rows and scores on the test rows).

    For each method of ``DRAW_METHODS`` the model it returns -- D itself, DPGridSearchCV's model
    (one fit of the chosen candidate), DPRandomSearchCV's model (the winning run's) -- is
    refitted ``RELEASE_DRAWS`` times with fresh noise: the same estimator, parameters and
    ``epsilon``, on the same training rows. Saved per draw: test accuracy and whether it
    collapsed (the minority class of the training labels predicted for ``COLLAPSE_SHARE`` of
    the test rows); and the returned model's own accuracy and collapse. The searches are run
    again with their cell's seed, so their returned model is the suite's (the harness checks
    the accuracy against the suite's cell when it has one).
    """
    draws = store.report["draws"]
    cells = store.report["cells"]
    tasks = available_tasks(opts, "draws")
    for seed in range(opts.draw_seeds):
        for name, data in tasks.items():
            for variant in opts.variants:
                for total in opts.draw_epsilons:
                    store.refresh()
                    key = cell_key(name, variant, total, seed)
                    entry = draws.setdefault(key, {"task": name, "variant": variant,
                                                   "total_epsilon": total, "seed": seed,
                                                   "methods": {}})
                    todo = [m for m in DRAW_METHODS
                            if m in opts.methods and m not in entry["methods"]]
                    if not todo:
                        continue
                    store.mark("draws", key)
                    X = data.features(variant)
                    X_train, X_test, y_train, y_test = split(X, data.y, seed,
                                                             TASKS[name].max_rows)
                    for method in todo:
                        entry["methods"][method] = stamped(released_draws(
                            method, X_train, y_train, X_test, y_test, variant, total, seed))
                        suite = cells.get(key, {}).get("methods", {}).get(method)
                        returned = entry["methods"][method]["returned"]
                        if suite is not None and not np.isclose(suite["accuracy"], returned):
                            raise AssertionError(f"[draws] {key} {method}: returned accuracy "
                                                 f"{returned} != the suite's {suite['accuracy']}")
                    store.save()
                    summary = {m: (round(r["returned"], 3), round(np.mean(r["accuracy"]), 3),
                                   sum(r["collapsed"])) for m, r in entry["methods"].items()}
                    print(f"[draws] {key}: {summary}", flush=True)


def released_draws(method: str, X_train, y_train, X_test, y_test, variant: str, total: float,
                   seed: int) -> dict:
    fitted, params = fit_estimator(method, X_train, y_train, variant, total, seed)
    returned = getattr(fitted, "best_estimator_", fitted)
    labels, counts = np.unique(y_train, return_counts=True)
    minority = labels[np.argmin(counts)]

    def collapsed(estimator) -> bool:
        return bool(np.mean(estimator.predict(X_test) == minority) >= COLLAPSE_SHARE)

    accuracy, collapses = [], []
    for draw in range(RELEASE_DRAWS):
        noise_seed = int(np.random.SeedSequence([seed, 11, draw]).generate_state(1)[0])
        again = clone(returned).set_params(random_state=noise_seed,
                                           accountant=BudgetAccountant())
        again.fit(X_train, y_train)
        accuracy.append(float(again.score(X_test, y_test)))
        collapses.append(collapsed(again))
    return {"returned": float(fitted.score(X_test, y_test)), "returned_collapsed":
            collapsed(fitted), "epsilon": float(returned.epsilon), "C": float(params["C"]),
            "data_norm": float(params["data_norm"]), "accuracy": accuracy,
            "collapsed": collapses}


# == tables ====================================================================================
def group_cells(cells: dict) -> dict:
    """(task, variant, epsilon) -> list of cells (one per seed)."""
    groups: dict = {}
    for cell in cells.values():
        key = (cell["task"], cell["variant"], float(cell["total_epsilon"]))
        groups.setdefault(key, []).append(cell)
    return groups


def paired(cells: list, method: str, reference: str = "D",
           metric: str = "accuracy") -> np.ndarray:
    """Per-seed differences of ``metric`` (test accuracy here; the regression benchmark's
    R^2) method - reference over the seeds that have both."""
    return np.array([c["methods"][method][metric] - c["methods"][reference][metric]
                     for c in cells if method in c["methods"] and reference in c["methods"]])


def _std(values: np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else float("nan")


def gap_entry(cells: list, method: str, spread: str = "sd",
              metric: str = "accuracy") -> dict | None:
    """The gap closed by ``method`` in one (task, variant, epsilon) group.

    With per-seed paired differences ``L - D`` and ``X - D`` (same split and seed): when
    ``mean(L - D)`` exceeds two standard deviations of the ``L - D`` differences, the gap
    closed is ``mean(X - D) / mean(L - D)``; otherwise the entry is ``mean(X - D)`` alone. The
    method is flagged when ``mean(X - D)`` is below ``-std(X - D)`` (below D by more than one
    standard deviation). ``spread="se"`` reads "standard deviation" as the standard error of
    the mean instead (``std / sqrt(seeds)``): more cells count as a real gap, and a smaller
    drop below D is flagged.
    """
    x_d, l_d = paired(cells, method, metric=metric), paired(cells, "L", metric=metric)
    if len(x_d) == 0 or len(l_d) == 0:
        return None
    shrink = np.sqrt(len(l_d)) if spread == "se" else 1.0
    gap, sd = float(np.mean(l_d)), _std(l_d) / shrink
    significant = bool(len(l_d) > 1 and gap > 2 * sd)
    mean_x = float(np.mean(x_d))
    return {"x_minus_d": mean_x, "l_minus_d": gap, "sd_l_minus_d": sd,
            "significant": significant, "gap_closed": mean_x / gap if significant else None,
            "below_d": bool(len(x_d) > 1 and mean_x < -_std(x_d) / shrink),
            "n_seeds": len(x_d)}


def _entry_text(entry: dict | None) -> str:
    if entry is None:
        return "–"
    text = (f"{entry['gap_closed']:+.2f}" if entry["significant"]
            else f"Δ{entry['x_minus_d']:+.3f}")
    return text + (" ⚠" if entry["below_d"] else "")


def _limit_text(cells: list) -> str:
    """Mean L - D, starred when it does not exceed two standard deviations."""
    entry = gap_entry(cells, "L")
    if entry is None:
        return "–"
    return f"{entry['l_minus_d']:.3f}" + ("" if entry["significant"] else "*")


def gap_table(report: dict) -> str:
    groups = group_cells(report["cells"])
    epsilons = sorted({e for _, _, e in groups})
    methods = [m for m in SEARCHES if any(m in c["methods"] for cs in groups.values()
                                          for c in cs)]
    rows = []
    for task, variant in dict.fromkeys((t, v) for t, v, _ in sorted(groups)):
        per_eps = [groups.get((task, variant, e), []) for e in epsilons]
        seeds = max(len(cs) for cs in per_eps)
        n_train = next(c["n_train"] for cs in per_eps for c in cs)
        l_d = " / ".join(_limit_text(cs) for cs in per_eps)
        rows.append([f"{task} {variant} (n={n_train}, {seeds} seeds)", l_d,
                     *[" / ".join(_entry_text(gap_entry(cs, m)) for cs in per_eps)
                       for m in methods]])
    eps_text = " / ".join(f"{e:g}" for e in epsilons)
    return markdown_table([f"task, variant (ε = {eps_text})", "L − D", *[METHODS[m]
                                                                        for m in methods]], rows)


def goal_table(report: dict) -> str:
    """Every search against the suite's goal (docs/benchmark_suite.md, "Reading the tables"),
    over all (task, variant, epsilon) groups: where L - D exceeds two standard deviations, how
    often the gap closed is >= 0.8 (and its median); everywhere, how often the search is below
    D by more than one standard deviation."""
    groups = group_cells(report["cells"])
    rows = []
    for m in SEARCHES:
        label = METHODS[m] + (" (**the library's default**)" if m == DEFAULT_SEARCH else "")
        for spread, name in (("sd", "per-seed sd"), ("se", "standard error")):
            entries = [e for cs in groups.values()
                       if (e := gap_entry(cs, m, spread)) is not None]
            if not entries:
                continue
            closed = [e["gap_closed"] for e in entries if e["significant"]]
            rows.append([label, name, str(len(entries)), str(len(closed)),
                         f"{sum(c >= 0.8 for c in closed)} / {len(closed)}",
                         f"{np.median(closed):+.2f}" if closed else "–",
                         f"{sum(e['below_d'] for e in entries)} / {len(entries)}"])
    return markdown_table(["search", "'standard deviation' read as", "cells",
                           "cells with L − D > 2 sd", "gap closed ≥ 0.8 there",
                           "median gap closed there", "below D by > 1 sd"], rows)


def lever_table(report: dict, levers: tuple = LEVERS, base: str = LEVER_BASE) -> str:
    """Each lever against its base search, on the same splits and seeds: mean paired
    difference of test accuracy ± its standard error, per cell, then pooled per variant."""
    groups = group_cells(report["cells"])
    levers = [m for m in levers if any(m in c["methods"] for cs in groups.values()
                                       for c in cs)]
    if not levers:
        return "(not run)"

    def diffs(cells, m):
        return np.array([c["methods"][m]["accuracy"] - c["methods"][base]["accuracy"]
                         for c in cells if m in c["methods"] and base in c["methods"]])

    def text(d):
        return f"{d.mean():+.3f} ± {d.std(ddof=1) / np.sqrt(len(d)):.3f}" if len(d) > 1 else "–"

    rows = [[task, variant, f"{eps:g}", *[text(diffs(cells, m)) for m in levers]]
            for (task, variant, eps), cells in sorted(groups.items())
            if any(m in c["methods"] for m in levers for c in cells)]
    for variant in VARIANTS:
        cells = [c for (_, v, _), cs in groups.items() if v == variant for c in cs]
        if cells:
            rows.append([f"**all {variant}**", "", "", *[f"**{text(diffs(cells, m))}**"
                                                          for m in levers]])
    return markdown_table(["task", "variant", "ε", *[METHODS[m] for m in levers]], rows)


def accuracy_table(report: dict) -> str:
    groups = group_cells(report["cells"])
    methods = [m for m in METHODS if any(m in c["methods"] for cs in groups.values()
                                         for c in cs)]
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        row = [task, variant, f"{eps:g}"]
        for m in methods:
            acc = np.array([c["methods"][m]["accuracy"] for c in cells if m in c["methods"]])
            row.append(f"{acc.mean():.3f} ± {_std(acc):.3f}" if len(acc) else "–")
        rows.append(row)
    return markdown_table(["task", "variant", "ε", *methods], rows)


def picks_table(report: dict) -> str:
    """How often each method picked the default's data_norm, and its median C (diagnostic)."""
    groups = group_cells(report["cells"])
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        row = [task, variant, f"{eps:g}"]
        for m in ("L", *SEARCHES):
            picks = [c["methods"][m] for c in cells if m in c["methods"]]
            row.append(" ".join(f"{p['data_norm']:.3g}/{p['C']:g}" for p in picks) or "–")
        rows.append(row)
    return markdown_table(["task", "variant", "ε", "L", *SEARCHES], rows)


def draws_table(report: dict) -> str:
    """Per (task, variant, ε): each method's returned model against fresh draws of it."""
    groups = group_cells(report["draws"])
    methods = [m for m in DRAW_METHODS if any(m in e["methods"] for es in groups.values()
                                              for e in es)]
    rows = []
    for (task, variant, eps), entries in sorted(groups.items()):
        row = [task, variant, f"{eps:g}", str(len(entries))]
        for m in methods:
            results = [e["methods"][m] for e in entries if m in e["methods"]]
            if not results:
                row += ["–", "–"]
                continue
            returned = np.array([r["returned"] for r in results])
            n_collapsed = sum(r["returned_collapsed"] for r in results)
            draws = np.concatenate([r["accuracy"] for r in results])
            share = np.mean(np.concatenate([r["collapsed"] for r in results]))
            row += [f"{returned.mean():.3f} ({n_collapsed}/{len(results)})",
                    f"{draws.mean():.3f} ± {_std(draws):.3f} ({share:.0%})"]
        rows.append(row)
    header = ["task", "variant", "ε", "seeds"]
    for m in methods:
        header += [f"{m}: returned (collapsed)", f"{m}: {RELEASE_DRAWS} fresh draws (collapsed)"]
    return markdown_table(header, rows)


def timing_table(report: dict) -> str:
    rows = []
    for name, t in report["timing"].items():
        dp1, dp2, plain = (np.array(t[k]) for k in ("dp_1", "dp_2", "gridsearchcv_1"))
        one_blas = np.array(t.get("gridsearchcv_1_1blas", []))
        two_blas = np.array(t.get("gridsearchcv_2_1blas", []))
        cpu1, cpu2 = np.array(t.get("cpu_1", [])), np.array(t.get("cpu_2", []))
        rows.append([name, t["n_train"], t["n_candidates"], len(dp1),
                     f"{t.get('load_average', float('nan')):.1f} / {t.get('cpus', '?')}",
                     _ratio(dp1 / plain), _ratio(dp1 / one_blas) if len(one_blas) else "–",
                     _ratio(dp1 / dp2),
                     _ratio(one_blas / two_blas) if len(two_blas) else "–",
                     _ratio(cpu1 / cpu2) if len(cpu2) else "–",
                     _ratio((dp1 / dp2) / (cpu1 / cpu2)) if len(cpu2) else "–"])
    return markdown_table(["task (easy)", "n_train", "|S|", "reps", "load avg / CPUs",
                           "DPGridSearchCV / GridSearchCV(cv=5), n_jobs=1",
                           "same, GridSearchCV under 1-thread BLAS",
                           "DPGridSearchCV speed-up n_jobs=2 over n_jobs=1",
                           "GridSearchCV's (1-thread BLAS), same ratio",
                           "the machine's: CPU-bound joblib job, same ratio",
                           "DPGridSearchCV's / the machine's, per repetition"], rows)


def random_timing_table(report: dict) -> str:
    rows = []
    for name, t in report["random_timing"].items():
        if not all(k in t for k in RANDOM_TIMINGS):
            continue
        b50, s50, b1k, s1k, plain = (np.array(t[k]) for k in RANDOM_TIMINGS)
        rows.append([name, t["n_train"], len(plain),
                     f"{t.get('load_average', float('nan')):.1f} / {t.get('cpus', '?')}",
                     _ratio(s50 / b50), _ratio(s1k / b1k), _ratio(b50 / plain),
                     _ratio(b1k / plain), _ratio(s50 / plain)])
    return markdown_table(["task (easy)", "n_train", "reps", "load avg / CPUs",
                           "speed-up of the batched runs, E[K] = 50",
                           "same, E[K] = 1000",
                           "E[K] = 50 batched / GridSearchCV(cv=5)",
                           "E[K] = 1000 batched / GridSearchCV(cv=5)",
                           "E[K] = 50 one by one / GridSearchCV(cv=5)"], rows)


def default_timing_table(report: dict) -> str:
    rows = []
    for name, t in report["random_timing"].items():
        if "defaults" not in t:
            continue
        default, runs_2000, runs_3000, plain = (np.array(t["defaults"][k])
                                                for k in DEFAULT_TIMINGS)
        rows.append([name, t["n_train"], len(plain), _ratio(default / plain),
                     _ratio(runs_2000 / plain), _ratio(runs_2000 / default),
                     _ratio(runs_3000 / plain), _ratio(runs_3000 / default)])
    return markdown_table(["task (easy)", "n_train", "reps",
                           "defaults (E[K] = 1000) / GridSearchCV(cv=5)",
                           "n_iter=2000 (the defaults before) / GridSearchCV(cv=5)",
                           "n_iter=2000 / defaults",
                           "n_iter=3000 / GridSearchCV(cv=5)",
                           "n_iter=3000 / defaults"], rows)


def _ratio(values) -> str:
    values = np.asarray(values, dtype=float)
    return f"{np.median(values):.2f} [{values.min():.2f}, {values.max():.2f}]"


def crossover_rows(report: dict) -> dict:
    """n_train -> method -> accuracies."""
    rows: dict = {}
    for cell in report["crossover"].values():
        for m, r in cell["methods"].items():
            rows.setdefault(cell["n_train"], {}).setdefault(m, []).append(r["accuracy"])
    return dict(sorted(rows.items()))


def _measured(by_n: dict, method: str) -> bool:
    """Whether ``method`` has a crossover result at some ``n`` (``crossover_rows``)."""
    return any(by_method.get(method) for by_method in by_n.values())


def crossover_table(report: dict) -> str:
    rows, by_n = [], crossover_rows(report)
    methods = [m for m in CROSSOVER_METHODS if _measured(by_n, m)]
    for n, by_method in by_n.items():
        row = [n]
        for m in methods:
            acc = np.array(by_method.get(m, []))
            row.append(f"{acc.mean():.3f} ± {_std(acc):.3f} ({len(acc)})" if len(acc) else "–")
        rows.append(row)
    return markdown_table(["n_train", *[METHODS[m] for m in methods]], rows)


def _seconds(report: dict) -> str:
    """The wall time of the commands that filled ``report``, then its code versions."""
    runs = report.get("runs", {}).values()
    minutes = ", ".join(f"{'+'.join(r.get('parts', ['cells']))} {r['seconds'] / 60:.0f} min"
                        for r in runs) or "–"
    return f"{minutes}. {code_versions(report)}"


def markdown(report: dict, suffix: str) -> str:
    config = report.get("config", {})
    lines = [
        "# Benchmark suite: private tuning against the untuned default at equal total ε\n",
        "Generated by `python -m benchmarks.bench_suite` (docs/benchmark_suite.md explains "
        "the columns). diffprivlib `LogisticRegression`, 20 candidates (C x data_norm, "
        "benchmarks/_tasks.py); held-out test accuracy (stratified 25 % test split per seed); "
        f"DPRandomSearchCV and the naive baseline with n_iter = {config.get('n_iter', N_ITER)}"
        " unless the method says otherwise; DPRandomSearchCV with its defaults (geometric law, "
        "`refit=False`, `n_iter=None` and `validation_size=None`: E[K] = 1000 and no "
        "validation part here, where the runs are batched), without a validation part at "
        "E[K] = 500, 2000 (the defaults before) and 3000, and with a validation part "
        f"(`validation_size={VALIDATION_SIZE:g}`, the default before) at E[K] = 10, 30, 50, "
        "100, 200 (the cells of the goal only) and 1000, and "
        "with the "
        "logarithmic law (the defaults before the geometric law); DPGridSearchCV with its "
        "defaults "
        "(`tuning_share=\"auto\"`, partition fits as the returned model in miniature) and "
        "with its earlier defaults ("
        f"{config.get('grid_tuning_share', GRID_TUNING_SHARE):.0%} of the total for the "
        "tuning, `C` not rescaled); every private method spends exactly the total ε. "
        "Rows used per task "
        f"(a random subset when capped): `{config.get('max_rows', {})}`. R (a diagnostic, "
        "NOT private): every candidate fitted as one run of the search at E[K] = 1000 with a "
        "validation part (the run's ε, its 80 % of the rows), its test accuracy averaged over "
        f"{RUN_CEILING_DRAWS} noise draws, the best candidate's mean. Wall time of the "
        f"runs that filled this file: {_seconds(report)}.\n",
        "## Gap closed\n",
        "Per task, variant and total ε (tuning + returned model; the three values of a cell "
        "are ε = " + " / ".join(f"{e:g}" for e in sorted({
            float(c["total_epsilon"]) for c in report["cells"].values()})) + "): "
        "(X − D) / (L − D) from per-seed paired differences where L − D exceeds two standard "
        "deviations of those differences; otherwise `Δ` = X − D (accuracy points), and L − D "
        "is starred. ⚠: X below D by more than one standard deviation of X − D. D = the "
        "untuned default with the whole budget, L = non-private GridSearchCV(cv=5) over the "
        "same DP models with the whole budget (the limit; NOT private).\n",
        gap_table(report) if report["cells"] else "(no cells)",
        "\n## Against the goal\n",
        "The suite's goal for the library's default search: close ≥ 80 % of L − D wherever it "
        "exceeds two standard deviations, and never fall below D by more than one standard "
        "deviation. Counts over the (task, variant, ε) cells above.\n",
        goal_table(report) if report["cells"] else "(no cells)",
        "\n## Levers around the search at E[K] = 50\n",
        "One setting of DPRandomSearchCV at `n_iter=50` (geometric law, "
        "`validation_size=0.2`, `refit=False`: the library's default before `n_iter=None` meant "
        "1000 for batched runs) changed at the same total ε: test accuracy minus that search's "
        "on the same splits and seeds, mean ± standard error (per cell, then pooled over the "
        "cells of a variant). Positive: the lever wins.\n",
        lever_table(report) if report["cells"] else "(no cells)",
        "\n## Levers around the search at E[K] = 1000 without a validation part\n",
        "One setting of DPRandomSearchCV at `n_iter=1000` and `validation_size=0` (the "
        "library's defaults) changed at the "
        "same total ε (fewer or more runs -- 2000 was the default before --, or another share of "
        "a run's ε for its noisy score; the default gives the score "
        f"{SCORE_SHARE_ON_FIT_ROWS / (1 + SCORE_SHARE_ON_FIT_ROWS):.0%}): test accuracy minus "
        "that search's on the same splits and seeds, mean ± standard error.\n",
        lever_table(report, DEFAULT_LEVERS, DEFAULT_LEVER_BASE) if report["cells"]
        else "(no cells)",
        "\n## Levers around DPGridSearchCV\n",
        "One setting of DPGridSearchCV changed at the same total ε -- fewer, larger partitions "
        "(the selection's sensitivity 1/k grows as the partition models improve), or the "
        "partitions scored by balanced accuracy, on which a candidate that predicts one class "
        "scores 0.5 whatever the class balance: test accuracy minus the grid's with its "
        "defaults on the same splits and seeds, mean ± standard error.\n",
        lever_table(report, GRID_LEVERS, GRID_LEVER_BASE) if report["cells"] else "(no cells)",
        "\n## Test accuracy (mean ± std over seeds)\n",
        accuracy_table(report) if report["cells"] else "(no cells)",
        "\n## Timing (ratios only; the machine is shared)\n",
        "DPGridSearchCV (20 candidates, its defaults) against GridSearchCV(cv=5) on the same grid "
        "and estimator, both n_jobs=1; and DPGridSearchCV n_jobs=1 time / n_jobs=2 time "
        "(> 1: n_jobs=2 is faster), next to GridSearchCV's own speed-up on the same grid "
        "(both under one BLAS thread). Median [min, max] over interleaved repetitions. The "
        "last two columns are the machine's own ceiling, measured in the same repetitions: 8 "
        "equal pure-Python CPU-bound tasks through joblib (no serial part, no memory traffic), "
        "n_jobs=1 time / n_jobs=2 time; the search's speed-up over it, per repetition, reads "
        "the search against what the machine gave at that moment (1: as parallel as a job "
        "with no serial part).\n",
        timing_table(report) if report["timing"] else "(not run)",
        "\n## DPRandomSearchCV: batched runs and more runs (ratios only)\n",
        "DPRandomSearchCV with a validation part (geometric law, `refit=False`, "
        f"`validation_size={VALIDATION_SIZE:g}`, total ε = "
        f"{CROSSOVER_EPSILON:g}, n_jobs=1), its runs batched (the default for a plain "
        "diffprivlib `LogisticRegression`) or one by one (every run a diffprivlib `fit`; the "
        "same seed, so the same number of runs), at E[K] = 50 and 1000, and "
        "against GridSearchCV(cv=5) over the same 20 candidates under one BLAS thread (L: "
        "100 fits on 80 % of the rows). Median [min, max] over interleaved repetitions (a "
        "different seed, so a different K, per repetition).\n",
        random_timing_table(report) if report.get("random_timing") else "(not run)",
        "\nThe library's defaults (`E[K] = 1000`, no validation part: every run fitted and "
        "scored on all rows, the runs batched) against the same search with `n_iter=2000` (the "
        "defaults before) and `n_iter=3000`, and against GridSearchCV(cv=5), in their own "
        "interleaved repetitions.\n",
        default_timing_table(report)
        if any("defaults" in t for t in report.get("random_timing", {}).values())
        else "(not run)",
        f"\n## Crossover in n ({TASKS[CROSSOVER_TASK].source}, total ε = "
        f"{CROSSOVER_EPSILON:g}, variant {report['crossover_variant']})\n",
        "Test accuracy, mean ± std (seeds), against the number of training rows (a random "
        "subset of the train part).\n",
        crossover_table(report) if report["crossover"] else "(not run)",
        "\n## The returned model against fresh noise draws of it (diagnostic)\n",
        "Each method's returned model -- D; DPGridSearchCV's (one fit of the chosen candidate "
        "at the model's share); DPRandomSearchCV's defaults (the winning run's model) -- next "
        f"to {RELEASE_DRAWS} refits of the same estimator (same parameters and `epsilon`, same "
        "training rows, fresh noise): test accuracy, mean over seeds and (the number of "
        "returned models that collapsed), and mean ± std over all draws (their share that "
        f"collapsed). Collapsed: the minority class predicted for ≥ {COLLAPSE_SHARE:.0%} of the "
        "test rows. A search whose returned model beats its own fresh draws selected a lucky "
        "draw; one below them drew an unlucky one. NOT private (refits and test scores).\n",
        draws_table(report) if report.get("draws") else "(not run)",
        "\n## Chosen data_norm/C per seed (diagnostic)\n",
        picks_table(report) if report["cells"] else "(no cells)",
        "",
    ]
    if report["cells"]:
        lines.append(f"![gap closed](suite{suffix}_gap.png)")
    if report["crossover"]:
        lines.append(f"![crossover](suite{suffix}_crossover.png)")
    return "\n".join(lines)


# == plots =====================================================================================
def plot_gap(report: dict, name: str) -> None:
    """Per (task, variant): mean X - D of every search (bars, standard-error whiskers) next to
    the limit L - D (black tick) at each epsilon; hatched: below D by > 1 sd (per seed)."""
    plt = pyplot()
    groups = group_cells(report["cells"])
    pairs = list(dict.fromkeys((t, v) for t, v, _ in sorted(groups)))
    epsilons = sorted({e for _, _, e in groups})
    methods = [m for m in SEARCHES if any(m in c["methods"] for cs in groups.values()
                                          for c in cs)]
    fig, axes = plt.subplots(len(pairs), 1, figsize=(9, 2.0 * len(pairs) + 1.2),
                             squeeze=False, constrained_layout=True)
    width = 0.8 / max(len(methods), 1)
    for ax, (task, variant) in zip(axes[:, 0], pairs, strict=True):
        for i, eps in enumerate(epsilons):
            cells = groups.get((task, variant, eps), [])
            limit = paired(cells, "L")
            if len(limit):
                ax.hlines(np.mean(limit), i - 0.45, i + 0.45, color="black", linewidth=1.5)
            for j, m in enumerate(methods):
                diffs, entry = paired(cells, m), gap_entry(cells, m)
                if entry is None:
                    continue
                x = i + (j - (len(methods) - 1) / 2) * width
                se = _std(diffs) / np.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
                ax.bar(x, np.mean(diffs), width, yerr=se, color=f"C{j}", error_kw={"lw": 0.6},
                       hatch="//" if entry["below_d"] else None)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(epsilons)), [f"total ε = {e:g}" for e in epsilons])
        ax.set_xlim(-0.5, len(epsilons) - 0.5)
        ax.set_ylabel(f"{task} {variant}\nX − D", fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=f"C{j}") for j in range(len(methods))]
    handles.append(plt.Line2D([0], [0], color="black", linewidth=1.5))
    fig.legend(handles, [METHODS[m] for m in methods] + ["L − D (the limit, not private)"],
               fontsize=7, ncol=2, loc="outside upper center", title_fontsize=8,
               title="test accuracy above the untuned default D (mean ± standard error over "
                     "seeds); hatched: below D by > 1 sd")
    save_figure(fig, name)


def plot_crossover(report: dict, name: str) -> None:
    plt = pyplot()
    rows = crossover_rows(report)
    ns = list(rows)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for j, m in enumerate(CROSSOVER_METHODS):  # a method keeps its colour when one is missing
        if not _measured(rows, m):
            continue
        values = [np.array(rows[n].get(m, [np.nan])) for n in ns]
        ax.errorbar(ns, [v.mean() for v in values],
                    yerr=[v.std(ddof=1) if len(v) > 1 else 0.0 for v in values],
                    marker="o", capsize=3, color=f"C{j}", label=METHODS[m])
    ax.set_xscale("log")
    ax.set_xlabel("training rows n")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=7)
    ax.set_title(f"{TASKS[CROSSOVER_TASK].source}, total ε = {CROSSOVER_EPSILON:g}",
                 fontsize=9)
    save_figure(fig, name)


def render(report: dict, suffix: str) -> Path:
    stem = f"suite{suffix}"
    path = write_result(stem, markdown(report, suffix))  # the JSON is the Store's
    if report["cells"]:
        plot_gap(report, f"{stem}_gap")
    if report["crossover"]:
        plot_crossover(report, f"{stem}_crossover")
    return path


# == command line ==============================================================================
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="path to adult.csv")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 2 small tasks, 2 seeds, ε=2; writes suite_quick.*")
    p.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default 10)")
    p.add_argument("--from-seed", type=int, default=0,
                   help="start at this seed (split a long run between concurrent commands)")
    p.add_argument("--epsilons", type=float, nargs="+", default=None)
    p.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=None)
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                   help="D and L are needed for the gap closed")
    p.add_argument("--parts", nargs="+",
                   choices=("suite", "timing", "random_timing", "crossover", "draws"),
                   default=["suite", "timing", "random_timing", "crossover", "draws"])
    p.add_argument("--random-timing-tasks", nargs="+", choices=sorted(TASKS), default=None)
    p.add_argument("--timing-tasks", nargs="+", choices=sorted(TASKS), default=None)
    p.add_argument("--timing-reps", type=int, default=None)
    p.add_argument("--crossover-seeds", type=int, default=None)
    p.add_argument("--crossover-sizes", type=int, nargs="+", default=None,
                   help="training rows; 0 means all (default 2000 8000 32000 128000 0)")
    p.add_argument("--crossover-variant", choices=VARIANTS, default="easy")
    p.add_argument("--draw-seeds", type=int, default=None, help="seeds of the draws part "
                   "(default 3)")
    p.add_argument("--draw-epsilons", type=float, nargs="+", default=None,
                   help="total epsilons of the draws part (default 1)")
    p.add_argument("--report-only", action="store_true",
                   help="re-render the tables and plots from the saved JSON")
    p.add_argument("--fresh", action="store_true", help="ignore the saved cells")
    p.add_argument("--suffix", default=None,
                   help="results file suffix: results/suite<SUFFIX>.{json,md} (default: none, "
                        "or _quick with --quick); e.g. to rerun one method beside a running "
                        "job, then --merge-from the file")
    p.add_argument("--merge-from", default=None, metavar="JSON",
                   help="copy the methods and crossover entries of another results file into "
                        "this one (they replace the same entries), then write the report")
    return p


def options(args) -> argparse.Namespace:
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else (small if quick else full)

    sizes = pick(args.crossover_sizes, list(CROSSOVER_SIZES), [2000, 8000])
    return argparse.Namespace(
        data=args.data,
        suffix=args.suffix if args.suffix is not None else ("_quick" if quick else ""),
        merge_from=args.merge_from,
        seeds=pick(args.seeds, 10, 2), from_seed=args.from_seed,
        epsilons=pick(args.epsilons, list(EPSILONS), [2.0]),
        tasks=pick(args.tasks, list(TASKS), ["default", "credit"]), variants=args.variants,
        methods=args.methods, parts=args.parts,
        timing_tasks=pick(args.timing_tasks, ["adult", "fertility"], ["credit"]),
        random_timing_tasks=pick(args.random_timing_tasks, ["credit", "churn", "adult"],
                                 ["credit"]),
        timing_reps=pick(args.timing_reps, 3, 1),
        crossover_seeds=pick(args.crossover_seeds, 3, 1),
        crossover_sizes=[s or None for s in sizes], crossover_variant=args.crossover_variant,
        draw_seeds=pick(args.draw_seeds, 3, 1),
        draw_epsilons=pick(args.draw_epsilons, [1.0], [2.0]),
        report_only=args.report_only, fresh=args.fresh,
    )


def main(argv=None) -> None:
    opts = options(parser().parse_args(argv))
    warnings.filterwarnings("ignore")  # diffprivlib/scipy deprecations and convergence noise
    store = Store(RESULTS / f"suite{opts.suffix}.json", fresh=opts.fresh)
    report = store.report
    report.setdefault("crossover_variant", opts.crossover_variant)
    if opts.merge_from:
        merge_results(store, json.loads(Path(opts.merge_from).read_text()))
    if not opts.report_only:
        report["config"] = {
            "n_iter": N_ITER, "grid_tuning_share": GRID_TUNING_SHARE, "test_size": TEST_SIZE,
            "max_rows": {t: task.max_rows for t, task in TASKS.items()},
            "crossover_epsilon": CROSSOVER_EPSILON,
        }
        start = time.perf_counter()
        # one BLAS thread for the accuracy parts (the machine is shared; DP searches fit under
        # one thread anyway); the timing part measures each search as a user runs it
        with threadpool_limits(limits=1, user_api="blas"):
            if "suite" in opts.parts:
                run_suite(opts, store)
            if "crossover" in opts.parts:
                run_crossover(opts, store)
            if "draws" in opts.parts:
                run_draws(opts, store)
        if "timing" in opts.parts:
            run_timing(opts, store)
        if "random_timing" in opts.parts:
            run_random_timing(opts, store)
        run = {"parts": opts.parts, "seconds": time.perf_counter() - start,
               "argv": list(argv) if argv is not None else None}
        run_key = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}"
        store.mark("runs", run_key)
        report["runs"][run_key] = run
        store.save()
    print(f"wrote {render(report, opts.suffix)}", flush=True)


if __name__ == "__main__":
    main()
