"""Pipelines on the batched path: the searches on a pipeline against the same searches on
pre-transformed rows (docs/grid_search.md, docs/random_search.md section 2.1).

Each task's easy variant is given as a pipeline: the public scaling of ``benchmarks._tasks``
(``clip((x - lo) / (hi - lo), 0, 1)``, a ``FunctionTransformer`` with public constants) before
diffprivlib's ``LogisticRegression``, fitted on the raw features -- how a user writes it. Per
task, total epsilon and seed (the suite's stratified 75/25 split), test accuracy of:

* ``grid pipeline, one by one``: DPGridSearchCV's partition fits of the pipeline before this
  change -- diffprivlib fits with epsilon and ``C`` rescaled, the approximate miniature;
* ``grid pipeline, batched``: the same search now -- the exact miniature on rows transformed fit
  by fit (the batched path);
* ``grid plain``: DPGridSearchCV on the scaled rows (what the suite measures);

and the time of DPRandomSearchCV's runs on the pipeline, batched against one by one (its
defaults: ``E[K] = 50``; the same seed, so the same number of runs), as a ratio.

Run: ``python -m benchmarks.bench_pipelines [--tasks credit churn adult] [--seeds 5]
[--quick]``; writes ``benchmarks/results/pipelines.{json,md}`` (``pipelines_quick`` for the
smoke run: credit, one seed, total epsilon 1).
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune.evaluation import _holdout, _partitions

from ._common import DEFAULT_DATA, write_result
from ._tasks import TASKS, search_grid

EPSILONS = (1.0, 2.0, 4.0)
METHODS = ("grid pipeline, one by one", "grid pipeline, batched", "grid plain")


def public_scaling(X, lo, hi):
    """The easy variant's scaling with the public ranges (a row-wise map)."""
    return np.clip((np.asarray(X, dtype=float) - lo) / (hi - lo), 0.0, 1.0)


def _pipeline(lo, hi):
    return Pipeline([("scale", FunctionTransformer(public_scaling,
                                                   kw_args={"lo": lo, "hi": hi})),
                     ("model", LogisticRegression(accountant=BudgetAccountant()))])


def _one_by_one(module):
    return mock.patch.object(module, "supports_batched_fits", lambda *args, **kwargs: False)


def _cell(data, epsilon, seed):
    X_train, X_test, y_train, y_test = train_test_split(
        data.X_raw, data.y, test_size=0.25, random_state=seed, stratify=data.y)
    d = X_train.shape[1]
    space = search_grid("easy", d)
    pipe_space = {f"model__{k}": v for k, v in space.items()}
    common = {"epsilon": epsilon, "classes": [0, 1], "random_state": seed, "n_jobs": 1,
              "accountant": BudgetAccountant()}
    out = {}
    with _one_by_one(_partitions):
        search = DPGridSearchCV(_pipeline(data.lo, data.hi), pipe_space, **common)
        out[METHODS[0]] = search.fit(X_train, y_train).score(X_test, y_test)
    search = DPGridSearchCV(_pipeline(data.lo, data.hi), pipe_space, **common)
    out[METHODS[1]] = search.fit(X_train, y_train).score(X_test, y_test)
    scale = {"lo": data.lo, "hi": data.hi}
    search = DPGridSearchCV(LogisticRegression(accountant=BudgetAccountant()), space,
                            **{**common, "accountant": BudgetAccountant()})
    out[METHODS[2]] = search.fit(public_scaling(X_train, **scale), y_train).score(
        public_scaling(X_test, **scale), y_test)
    times = {}
    for name, patch in (("batched", None), ("one by one", _one_by_one(_holdout))):
        # a validation part, as when the saved results were measured
        search = DPRandomSearchCV(_pipeline(data.lo, data.hi), pipe_space, epsilon=epsilon,
                                  validation_size=0.2, classes=[0, 1], random_state=seed,
                                  n_jobs=1, accountant=BudgetAccountant())
        start = time.perf_counter()
        if patch is None:
            search.fit(X_train, y_train)
        else:
            with patch:
                search.fit(X_train, y_train)
        times[name] = time.perf_counter() - start
    out["random speed-up"] = times["one by one"] / times["batched"]
    return out


def _report(results):
    lines = ["# Pipelines on the batched path", "",
             "Easy variant given as a pipeline (public scaling in a `FunctionTransformer`, then "
             "diffprivlib's `LogisticRegression`), 20 candidates, total ε 1 / 2 / 4; test "
             "accuracy, mean ± std over seeds. Last column: DPRandomSearchCV's runs on the "
             "pipeline (defaults, `E[K] = 50`), one-by-one time / batched time, median [min, "
             "max] over all cells of the task. `python -m benchmarks.bench_pipelines`.", "",
             "| task | seeds | " + " | ".join(f"{m} (ε 1 / 2 / 4)" for m in METHODS)
             + " | DPRandomSearchCV batched speed-up |",
             "|---" * (len(METHODS) + 3) + "|"]
    for task, cells in results.items():
        row = [task, str(len({c["seed"] for c in cells}))]
        for method in METHODS:
            parts = []
            for eps in EPSILONS:
                values = [c[method] for c in cells if c["epsilon"] == eps]
                parts.append(f"{np.mean(values):.3f} ± {np.std(values):.3f}" if values
                             else "--")
            row.append(" / ".join(parts))
        speed = [c["random speed-up"] for c in cells]
        row.append(f"{np.median(speed):.2f} [{min(speed):.2f}, {max(speed):.2f}]")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["credit", "churn", "adult"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: credit, one seed, total epsilon 1")
    args = parser.parse_args(argv)
    tasks, seeds, epsilons = ((["credit"], 1, [1.0]) if args.quick
                              else (args.tasks, args.seeds, args.epsilons))
    name_out = "pipelines_quick" if args.quick else "pipelines"
    results = {}
    for name in tasks:
        task = TASKS[name]
        data = task.loader(args.data)
        cells = []
        for seed in range(seeds):
            for eps in epsilons:
                cell = _cell(data, eps, seed)
                cells.append({"seed": seed, "epsilon": eps, **cell})
                print(name, seed, eps, {k: round(v, 3) for k, v in cell.items()}, flush=True)
        results[name] = cells
        # after every task: a run cut short keeps what it did
        write_result(name_out, _report(results), results)
    print(_report(results))


if __name__ == "__main__":
    main()
