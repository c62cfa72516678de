"""The model-family benchmark (docs/benchmark_families.md): does private tuning pay beyond
logistic regression?

Run ``python -m benchmarks.bench_families [--quick] [--families nb tree pipeline] [--seeds N]
[--from-seed K] [--epsilons ...] [--tasks ...] [--variants ...] [--methods ...]
[--report-only] [--fresh] [--data adult.csv]`` (or through ``python -m benchmarks.run``).
Writes ``results/families.{md,json}`` (``families_quick.*`` with ``--quick``).

The classification suite (``bench_suite.py``) tunes diffprivlib's ``LogisticRegression`` over
``C`` x ``data_norm``, where the searches' runs are batched. Here the same tasks and variants
are tuned for diffprivlib's ``GaussianNB``, ``DecisionTreeClassifier`` and a ``Pipeline`` of
its ``StandardScaler`` (a DP step) and ``LogisticRegression`` (``benchmarks/_families.py``),
every fit one by one -- but, on the pipeline, the repetition's runs, batched since 2026-12-07
(with the batched defaults: ``E[K] = 1000``, no validation part), and DPGridSearchCV's
partition fits, solved together per partition since the same day --, at each total epsilon over
several seeds: held-out test accuracy (and balanced accuracy) of

* **D** -- the untuned default, its epsilons set so that its fit costs the whole budget;
* **L** -- non-private ``GridSearchCV(cv=5)`` over the same DP models, each candidate priced
  at the whole budget: the limit, NOT private;
* **R1** -- DPRandomSearchCV with its defaults on the default alone: repetition, no tuning;
* **DPGridSearchCV**, **DPRandomSearchCV** (over the grid) and **DPGIBOSearchCV** (over the
  family's box), each with the library's defaults at the total epsilon.

Tables as the regression benchmark's (``benchmarks/_cells.py``): gap closed where L - D is
clear, the goal, each search against R1, and each method's time over L's in the same cell.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.base import clone
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import GridSearchCV, train_test_split
from threadpoolctl import threadpool_limits

from benchmarks import _cells
from benchmarks._common import CLASSES, DEFAULT_DATA, RESULTS, PricedModel, write_result
from benchmarks._families import FAMILIES, Family
from benchmarks._tasks import TASKS
from benchmarks.bench_suite import Store
from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune.estimators import set_total_epsilon

METHODS = {
    "D": "D: untuned default, whole budget",
    "L": "L: GridSearchCV(cv=5) over the DP models, whole budget (NOT private)",
    "R1": "R1: DPRandomSearchCV on the default alone (repetition, no tuning)",
    "grid": "DPGridSearchCV",
    "random": "DPRandomSearchCV",
    "gibo": "DPGIBOSearchCV (the family's box)",
    "random_fitrows": "DPRandomSearchCV, validation_size=0: every run fitted and scored on all "
                      "rows (a lever of the one-by-one runs; the batched runs' default)",
    "random_runs1000": "DPRandomSearchCV, n_iter=1000: twenty times the one-by-one runs' "
                       "E[K] = 50 (a lever of the one-by-one runs; the batched runs' default)",
}
SEARCHES = ("R1", "grid", "random", "gibo", "random_fitrows", "random_runs1000")
TUNERS = ("grid", "random", "gibo", "random_fitrows", "random_runs1000")
DEFAULT_METHODS = ("D", "L", "R1", "grid", "random", "gibo")
TEST_SIZE = 0.25
EPSILONS = (1.0, 2.0, 4.0)
#: the tasks measured by default (the smaller ones: every fit is one by one) and the rows of
#: each (a data-independent random subset when a task has more)
DEFAULT_TASKS = ("credit", "churn", "adult")
MAX_ROWS = 10_000


# == the one place where searches are built =====================================================
def make_search(method: str, family: Family, total_epsilon: float, seed: int):
    """An unfitted private search whose ``epsilon`` is ``total_epsilon`` (tuning + model), with
    the library's defaults otherwise, on the family's untuned default."""
    common = {"epsilon": total_epsilon, "classes": CLASSES, "random_state": seed, "n_jobs": 1,
              "accountant": BudgetAccountant()}
    estimator = family.estimator()
    if method == "R1":
        return DPRandomSearchCV(estimator, {k: [v] for k, v in family.default().items()},
                                **common)
    if method == "grid":
        return DPGridSearchCV(estimator, family.grid(), **common)
    if method == "random":
        return DPRandomSearchCV(estimator, family.grid(), **common)
    if method == "random_fitrows":
        return DPRandomSearchCV(estimator, family.grid(), validation_size=0, **common)
    if method == "random_runs1000":
        return DPRandomSearchCV(estimator, family.grid(), n_iter=1000, **common)
    if method == "gibo":
        return DPGIBOSearchCV(estimator, family.box(), **common)
    raise ValueError(f"unknown search {method!r}; expected one of {SEARCHES}")


def _family(cell: dict, X) -> Family:
    return Family(cell["family"], cell["variant"], X.shape[1])


def fit_method(cell: dict, method: str, X_train, y_train, X_test, y_test) -> dict:
    """Fit one method: test accuracy and balanced accuracy, its pick, cost and seconds."""
    family, total, seed = _family(cell, X_train), cell["total_epsilon"], cell["seed"]
    start = time.perf_counter()
    spent = (total, 0.0)
    if method == "D":
        fitted = set_total_epsilon(clone(family.estimator()), total, n_classes=len(CLASSES))
        _seed(fitted, seed)
        fitted.fit(X_train, y_train)
        params = family.default()
    elif method == "L":
        model = family.estimator()
        _seed(model, seed)
        fitted = GridSearchCV(PricedModel(model, total),
                              {f"model__{k}": v for k, v in family.grid().items()}, cv=5,
                              n_jobs=1)
        fitted.fit(X_train, y_train)
        params = {k.removeprefix("model__"): v for k, v in fitted.best_params_.items()}
    else:
        fitted = make_search(method, family, total, seed).fit(X_train, y_train)
        spent = _cells.spent(fitted, total)
        params = fitted.best_params_
    seconds = time.perf_counter() - start
    predicted = fitted.predict(X_test)
    return {"accuracy": float(accuracy_score(y_test, predicted)),
            "balanced_accuracy": float(balanced_accuracy_score(y_test, predicted)),
            "seconds": seconds, "epsilon": spent[0], "delta": spent[1],
            "params": _cells.jsonable({k: v for k, v in params.items()
                                       if not k.endswith("epsilon") and k != "budget"})}


def _seed(estimator, seed: int) -> None:
    """Seed every DP step's noise (the references are reproducible, as the searches are)."""
    estimator.set_params(**{k: seed for k in estimator.get_params()
                            if k == "random_state" or k.endswith("__random_state")})


# == data ======================================================================================
_LOADED: dict = {}


def task_data(name: str, data_path):
    if name not in _LOADED:
        _LOADED[name] = TASKS[name].loader(data_path)
    return _LOADED[name]


def split(cell: dict):
    """A stratified train/test split per seed, after a data-independent row subset."""
    data = task_data(cell["task_name"], cell["data_path"])
    X, y = data.features(cell["variant"]), data.y
    if len(y) > MAX_ROWS:
        rows = np.sort(np.random.default_rng(cell["seed"]).choice(len(y), MAX_ROWS,
                                                                   replace=False))
        X, y = X[rows], y[rows]
    return train_test_split(X, y, test_size=TEST_SIZE, stratify=y, random_state=cell["seed"])


BENCH = _cells.CellBench(
    name="families", methods=METHODS, searches=SEARCHES, tuners=TUNERS,
    default_methods=DEFAULT_METHODS, default_search="random", metric="accuracy",
    metric_name="accuracy", fit=fit_method, split=split)


def markdown(report: dict) -> str:
    cells = report["cells"]
    epsilons = " / ".join(f"{e:g}" for e in sorted({float(c["total_epsilon"])
                                                     for c in cells.values()}))
    sizes = sorted({(c["task"], c["n_train"]) for c in cells.values()})
    return "\n".join([
        "# Model-family benchmark: private tuning beyond logistic regression\n",
        "Generated by `python -m benchmarks.bench_families` (docs/benchmark_families.md "
        "explains the columns). diffprivlib `GaussianNB` (`nb`), `DecisionTreeClassifier` "
        "(`tree`) and a `Pipeline` of its `StandardScaler` and `LogisticRegression` "
        "(`pipeline`) on the classification suite's tasks (benchmarks/_families.py has the "
        "defaults, grids and boxes); every fit one by one but, on the pipeline, DPRandomSearchCV's "
        "runs (R1's included), batched since 2026-12-07, and DPGridSearchCV's partition fits, "
        "solved together per partition since the same day; every search with the library's "
        "defaults at the total ε (tuning + returned model; DPGIBOSearchCV's default δ = 1e-6, "
        "the others δ = 0); D and L's candidates priced at the total. Held-out test accuracy "
        f"(stratified 25 % test split per seed). Training rows: "
        f"{', '.join(f'{t} {n}' for t, n in sizes) or '–'}. Wall time of the runs that filled "
        f"this file: {_cells.run_minutes(report)}.\n",
        *_cells.standard_sections(BENCH, report, epsilons),
        "\n## Test balanced accuracy (mean ± sd over seeds; a diagnostic)\n",
        _cells.metric_table(BENCH, report, "balanced_accuracy") if cells else "(no cells)",
        "",
    ])


# == command line ==============================================================================
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="adult.csv (the adult task)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: credit, one seed, ε=2; writes families_quick.*")
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    _cells.add_cell_arguments(p, BENCH, TASKS, seeds=5)
    return p


def options(args) -> argparse.Namespace:
    return _cells.cell_options(args, BENCH, seeds=(5, 1), epsilons=(list(EPSILONS), [2.0]),
                               tasks=(list(DEFAULT_TASKS), ["credit"]), data=args.data,
                               families=args.families)


def main(argv=None) -> None:
    opts = options(parser().parse_args(argv))
    warnings.filterwarnings("ignore")  # too-few-rows warnings of small partitions, etc.
    store = Store(RESULTS / f"families{opts.suffix}.json", fresh=opts.fresh)
    if not opts.report_only:
        start = time.perf_counter()
        groups = []
        for name in opts.tasks:
            try:
                task_data(name, opts.data)
            except (ImportError, FileNotFoundError) as exc:
                print(f"[families] skipping {name}: {exc}", flush=True)
                continue
            groups += [{"task": f"{family}:{name}", "family": family, "task_name": name,
                        "data_path": opts.data, "variant": variant}
                       for family in opts.families for variant in opts.variants]
        # one BLAS thread for every method, so that the time ratios compare the algorithms
        with threadpool_limits(limits=1, user_api="blas"):
            _cells.run_cells(BENCH, opts, store, groups)
        _cells.record_run(store, opts, argv, start)
    path = write_result(f"families{opts.suffix}", markdown(store.report))
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
