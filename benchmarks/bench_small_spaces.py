"""How many runs a small space needs: DPRandomSearchCV's default number of runs against 100
runs per candidate, on spaces of 1, 2 and 4 candidates.

Where the runs are batched, ``n_iter=None`` means ``E[K] = 1000`` whatever the space.
``GridSearchCV(cv=5)`` fits each candidate five times, so its time grows with the number of
candidates and the default search's does not: on a space of few candidates the search takes
longer than GridSearchCV (the gallery's pipeline, four candidates: ``bench_adult_pipeline``).
Fewer runs on small spaces would meet GridSearchCV's time -- ``E[K] = 100 x`` the number of
candidates, every candidate expected a hundred times. This benchmark measures what it costs in
accuracy where the fits are noisy: the model-family benchmark's DP pipeline (diffprivlib's
``StandardScaler`` and ``LogisticRegression``, ``benchmarks/_families.py``) on its tasks and
variants, total ε = 2, spaces made of its untuned default and the next values of its grid's
second parameter at the default's ``C`` (``data_norm``, easy; the scaler's ``bounds``, hard).

Per task, variant, space and seed (the family benchmark's splits): test accuracy and seconds of

* ``L`` -- ``GridSearchCV(cv=5)`` over the space, each candidate priced at the whole budget
  (non-private: the time reference);
* ``default`` -- ``DPRandomSearchCV`` with its defaults (``E[K] = 1000``);
* ``per candidate`` -- the same search at ``n_iter = 100 x`` the space's candidates.

Every method runs under one BLAS thread, one after the other in a cell. Run ``python -m
benchmarks.bench_small_spaces [--seeds 8] [--tasks ...] [--quick]``; writes
``benchmarks/results/small_spaces.{md,json}`` (``small_spaces_quick`` for the smoke run: credit,
easy, one seed).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_limits

from benchmarks import bench_families
from benchmarks._common import CLASSES, DEFAULT_DATA, PricedModel, write_result
from benchmarks._families import HARD_UPPERS, Family
from skdptune import DPRandomSearchCV

TOTAL_EPSILON = 2.0
SIZES = (1, 2, 4)
RUNS_PER_CANDIDATE = 100
METHODS = ("L", "default", "per candidate")
TASKS = ("churn", "credit", "adult")


def spaces(family: Family) -> dict:
    """The spaces of 1, 2 and 4 candidates: the default first, then the grid's next values."""
    default = {k: [v] for k, v in family.default().items()}
    if family.variant == "easy":
        root = math.sqrt(family.d)
        name, values = "lr__data_norm", [root, 2 * root, root / 2, 4 * root]
    else:
        name = "scaler__bounds"
        values = [default[name][0], *[(0.0, u) for u in HARD_UPPERS if u != 1e4]]
    return {size: {**default, name: values[:size]} for size in SIZES}


def fit_method(method, family, space, seed, X_train, y_train):
    """The fitted ``method`` on ``space`` (its predictions are scored by the caller)."""
    if method == "L":
        model = family.estimator()
        bench_families._seed(model, seed)
        grid = {f"model__{k}": v for k, v in space.items()}
        return GridSearchCV(PricedModel(model, TOTAL_EPSILON), grid, cv=5).fit(X_train, y_train)
    size = int(np.prod([len(v) for v in space.values()]))
    n_iter = None if method == "default" else RUNS_PER_CANDIDATE * size
    return DPRandomSearchCV(family.estimator(), space, n_iter=n_iter, epsilon=TOTAL_EPSILON,
                            classes=CLASSES, random_state=seed,
                            accountant=BudgetAccountant()).fit(X_train, y_train)


def run_cell(task, variant, seed, data):
    X_train, X_test, y_train, y_test = bench_families.split(
        {"task_name": task, "data_path": data, "seed": seed, "variant": variant})
    family = Family("pipeline", variant, X_train.shape[1])
    out = {"task": task, "variant": variant, "seed": seed, "n_train": len(y_train)}
    for size, space in spaces(family).items():
        for method in METHODS:
            start = time.perf_counter()
            fitted = fit_method(method, family, space, seed, X_train, y_train)
            out[f"{size} {method} seconds"] = time.perf_counter() - start
            out[f"{size} {method}"] = float(np.mean(fitted.predict(X_test) == y_test))
    return out


def _time_ratios(cells, size):
    """Each search's seconds over L's on the spaces of ``size`` candidates (median)."""
    return {m: np.median([c[f"{size} {m} seconds"] / c[f"{size} L seconds"] for c in cells])
            for m in METHODS[1:]}


def _report(cells):
    def summary(values):
        se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
        return f"{values.mean():+.4f} ± {se:.4f}"

    lines = [
        "# How many runs a small space needs", "",
        "DPRandomSearchCV's default (`E[K] = 1000` where the runs are batched) against "
        f"{RUNS_PER_CANDIDATE} runs per candidate, on spaces of 1, 2 and 4 candidates of the "
        "model-family benchmark's DP pipeline (diffprivlib `StandardScaler` + "
        f"`LogisticRegression`), total ε = {TOTAL_EPSILON:g}, one BLAS thread. Per task and "
        "variant: the paired accuracy difference `per candidate − default` (mean ± standard "
        "error over seeds) and each search's time over `GridSearchCV(cv=5)`'s on the same "
        "space (median). `python -m benchmarks.bench_small_spaces`.", "",
        "| task | variant | seeds | candidates | accuracy, default | per candidate − default "
        "| default / L | per candidate / L |", "|---|---|---|---|---|---|---|---|"]
    groups = sorted({(c["task"], c["variant"]) for c in cells})
    for task, variant in groups:
        rows = [c for c in cells if (c["task"], c["variant"]) == (task, variant)]
        for size in SIZES:
            default = np.array([c[f"{size} default"] for c in rows])
            diff = np.array([c[f"{size} per candidate"] for c in rows]) - default
            ratio = _time_ratios(rows, size)
            lines.append(f"| {task} | {variant} | {len(rows)} | {size} | {default.mean():.4f} "
                         f"| {summary(diff)} | {ratio['default']:.2f} "
                         f"| {ratio['per candidate']:.2f} |")
    lines += ["", "Pooled over the tasks and variants:", "",
              "| candidates | cells | per candidate − default | default / L | "
              "per candidate / L |", "|---|---|---|---|---|"]
    for size in SIZES:
        diff = np.array([c[f"{size} per candidate"] - c[f"{size} default"] for c in cells])
        ratio = _time_ratios(cells, size)
        lines.append(f"| {size} | {len(cells)} | {summary(diff)} | {ratio['default']:.2f} | "
                     f"{ratio['per candidate']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: credit, easy, one seed")
    args = parser.parse_args(argv)
    seeds, tasks, variants = ((1, ["credit"], ["easy"]) if args.quick
                              else (args.seeds, args.tasks, ["easy", "hard"]))
    name = "small_spaces_quick" if args.quick else "small_spaces"
    cells = []
    with threadpool_limits(limits=1, user_api="blas"):
        for seed in range(seeds):
            for task in tasks:
                for variant in variants:
                    cells.append(run_cell(task, variant, seed, args.data))
                    print({k: round(v, 4) if isinstance(v, float) else v
                           for k, v in cells[-1].items()}, flush=True)
                    # after every cell: a run cut short keeps what it did
                    write_result(name, _report(cells), {"cells": cells})
    print(_report(cells))


if __name__ == "__main__":
    main()
