"""DPGIBOSearchCV with and without its guard, against D and DPRandomSearchCV (docs/gibo.md).

``python -m benchmarks.bench_gibo_guard [--data PATH] [--quick] [--tasks ...] [--seeds ...]
[--epsilons ...] [--methods ...] [--name NAME]``

On the benchmark suite's Adult task (``benchmarks/_tasks.py``: 24k training rows, 15 columns,
a stratified train/test split per seed), diffprivlib ``LogisticRegression`` over ``C`` and
``data_norm``:

* ``easy`` / ``hard`` -- the suite's two variants (features in [0, 1] by public ranges and
  ``data_norm = sqrt(d)``; raw features with the guess ``data_norm = 100``). GIBO's box spans
  the suite's grid (``C`` in [1e-2, 1e2], ``data_norm`` in [0.5, sqrt(d)] or [1, 1e6], log
  scales) and starts at the default; DPRandomSearchCV is the suite's default search over the
  suite's 20 candidates (``benchmarks.bench_suite.DEFAULT_SEARCH``).
* ``easy_wide`` -- the easy variant in a wide continuous box (``C`` in [1e-4, 1e4],
  ``data_norm`` in [1e-2, 1e3], log scales) whose good region is a small interior part around
  the default; DPRandomSearchCV (its defaults) draws log-uniformly from the same box. A task
  built to favour a local search from a good start.

Methods, every one at the same total epsilon: D (the untuned default, whole budget, priced as
the suite prices it), DPRandomSearchCV, DPGIBOSearchCV without the guard (``guard_share=0``)
and with it (the default ``guard_share=0.2``; ``--methods`` adds the shares 0.1 and 0.4, for
calibration on other seeds). Held-out test accuracy, mean ± standard deviation over seeds, and
the guard's choices. Writes ``results/<name>.{md,json}`` (default ``gibo_guard``; ``--quick``:
one seed on 3,000 training rows, ``gibo_guard_quick``).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from diffprivlib import BudgetAccountant
from threadpoolctl import threadpool_limits

from benchmarks._common import CLASSES, DEFAULT_DATA, markdown_table, mean_std, write_result
from benchmarks._tasks import default_params, search_grid
from benchmarks.bench_gibo import _LogUniform
from benchmarks.bench_suite import DEFAULT_SEARCH, fit_estimator, model, split, task_data
from skdptune import DPGIBOSearchCV, DPRandomSearchCV

#: DPGIBOSearchCV's guard_share per method (gibo_guard: the default)
GUARD_SHARES = {"gibo": 0.0, "gibo_guard": 0.2, "gibo_guard10": 0.1, "gibo_guard40": 0.4}
METHODS = ("D", "random", *GUARD_SHARES)
LABELS = {"D": "D: untuned default, whole budget", "random": "DPRandomSearchCV (defaults)",
          "gibo": "DPGIBOSearchCV, guard_share=0", "gibo_guard": "DPGIBOSearchCV + guard "
          "(default guard_share=0.2)", "gibo_guard10": "guard_share=0.1",
          "gibo_guard40": "guard_share=0.4"}
#: the wide box of easy_wide: (low, high) of C and data_norm, log scales
WIDE = {"C": (1e-4, 1e4), "data_norm": (1e-2, 1e3)}
TASKS = ("easy", "hard", "easy_wide")


def variant_of(task: str) -> str:
    return "hard" if task == "hard" else "easy"


def box(task: str, d: int) -> dict:
    if task == "easy_wide":
        return {name: (lo, hi, "log") for name, (lo, hi) in WIDE.items()}
    grid = search_grid(variant_of(task), d)
    return {name: (min(values), max(values), "log") for name, values in grid.items()}


def fit_method(method: str, task: str, X_train, y_train, total: float, seed: int):
    """``(fitted search or model, the guard's choice or None)``."""
    variant, d = variant_of(task), X_train.shape[1]
    if method == "D" or (method == "random" and task != "easy_wide"):
        fitted, _ = fit_estimator("D" if method == "D" else DEFAULT_SEARCH, X_train, y_train,
                                  variant, total, seed)
        return fitted, None
    estimator = model(default_params(variant, d), 1.0)
    common = {"epsilon": total, "classes": CLASSES, "random_state": seed, "n_jobs": 1,
              "accountant": BudgetAccountant()}
    if method == "random":
        space = {name: _LogUniform(lo, hi) for name, (lo, hi) in WIDE.items()}
        search = DPRandomSearchCV(estimator, space, **common)
    else:
        search = DPGIBOSearchCV(estimator, box(task, d), guard_share=GUARD_SHARES[method],
                                **common)
    search.fit(X_train, y_train)
    spent = search.privacy_spent_.epsilon
    if spent > total * (1 + 1e-12) or not math.isclose(spent, total, rel_tol=1e-9):
        raise AssertionError(f"{method} spent epsilon={spent}, not the total {total}")
    return search, getattr(search, "guard_choice_", None)


def run(tasks, seeds, epsilons, methods, data_path, n_train=None):
    X_all, y = None, None
    cells = []
    data = task_data("adult", data_path)
    with threadpool_limits(limits=1, user_api="blas"):
        for task in tasks:
            X_all, y = data.features(variant_of(task)), data.y
            for total in epsilons:
                for seed in seeds:
                    X_train, X_test, y_train, y_test = split(X_all, y, seed, n_train=n_train)
                    cell = {"task": task, "epsilon": total, "seed": seed}
                    for method in methods:
                        start = time.perf_counter()
                        fitted, choice = fit_method(method, task, X_train, y_train, total, seed)
                        cell[method] = float(fitted.score(X_test, y_test))
                        cell[f"{method}_seconds"] = time.perf_counter() - start
                        if method == "gibo_guard":
                            cell["guard_choice"] = choice
                    cells.append(cell)
                    print({k: (round(v, 3) if isinstance(v, float) else v)
                           for k, v in cell.items()}, flush=True)
    return cells


def report(cells, name, methods) -> str:
    lines = [f"# DPGIBOSearchCV's guard ({name})\n",
             "Produced by `python -m benchmarks.bench_gibo_guard`. Adult (the benchmark "
             "suite's task), diffprivlib `LogisticRegression` over `C` and `data_norm`; held-out "
             "test accuracy, mean ± standard deviation over seeds; every method at the same "
             "total ε. `start` counts the seeds on which the guard returned the start point.\n"]
    keys = sorted({(c["task"], c["epsilon"]) for c in cells}, key=lambda k: (TASKS.index(k[0]),
                                                                            k[1]))
    rows = []
    for task, total in keys:
        group = [c for c in cells if c["task"] == task and c["epsilon"] == total]
        row = [task, f"{total:g}", str(len(group))]
        row += [mean_std([c[m] for c in group]) for m in methods]
        row.append(f"{sum(c['guard_choice'] == 'start' for c in group)}/{len(group)}")
        rows.append(row)
    lines.append(markdown_table(["task", "ε", "seeds", *(LABELS[m] for m in methods),
                                 "start"], rows))
    times = {m: np.median([c[f"{m}_seconds"] for c in cells]) for m in methods}
    lines.append("\nMedian seconds per fit: " + ", ".join(f"{m} {t:.2f}"
                                                         for m, t in times.items()))
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    p.add_argument("--seeds", type=int, nargs="+", help="default: 0..4 (0 with --quick)")
    p.add_argument("--epsilons", type=float, nargs="+", default=[2.0])
    p.add_argument("--methods", nargs="+", default=["D", "random", "gibo", "gibo_guard"],
                   choices=METHODS,
                   help="gibo_guard is always run (its choices are counted)")
    p.add_argument("--name", help="results file name (default: gibo_guard, or gibo_guard_quick)")
    args = p.parse_args(argv)
    name = args.name or ("gibo_guard_quick" if args.quick else "gibo_guard")
    seeds = args.seeds or ([0] if args.quick else list(range(5)))
    methods = [m for m in METHODS if m in set(args.methods) | {"gibo_guard"}]
    cells = run(args.tasks, seeds, args.epsilons, methods, args.data,
                n_train=3000 if args.quick else None)
    markdown = report(cells, f"seeds {seeds[0]}-{seeds[-1]}", methods)
    write_result(name, markdown, {"cells": cells})
    print(markdown)


if __name__ == "__main__":
    main()
