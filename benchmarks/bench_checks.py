"""What the magnitude check costs: a search on a pipeline with a private scaler in front of
the model, with the check (skdptune.public._magnitude: one probe fit per candidate template, before
the data is read, and one more bound in the domain read) against the same search with the
check switched off, in interleaved repetitions (ratios only; the machine is shared).

The pipeline is how a user writes the hard variant of a task: diffprivlib's ``StandardScaler``
with the task's public feature ranges as its bounds, then diffprivlib's
``LogisticRegression``; the space is the suite's C x data_norm grid (20 candidates). A plain
model (no private transformer: nothing to probe) is timed the same way as a control. Adult is
left out by default: diffprivlib's scaler draws its noise feature by feature, and on Adult's
108 one-hot features the grid's partition fits take minutes per search.

Run: ``python -m benchmarks.bench_checks [--tasks credit churn] [--reps 7] [--quick]``;
writes ``benchmarks/results/checks.{json,md}`` (``checks_quick`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
import warnings
from unittest import mock

from diffprivlib.models import LogisticRegression, StandardScaler
from sklearn.pipeline import Pipeline

from skdptune import DPGridSearchCV, DPRandomSearchCV, TooFewRowsWarning

from ._common import DEFAULT_DATA, markdown_table, write_result
from ._tasks import search_grid
from .bench_suite import TASKS, split, task_data

SEARCHES = ("DPGridSearchCV", "DPRandomSearchCV n_iter=50")


def _estimators(lo, hi):
    """``{name: (estimator, parameter prefix)}``."""
    scaler = StandardScaler(epsilon=0.5, bounds=(lo, hi))
    return {"private scaler -> model": (Pipeline([("scale", scaler),
                                                  ("model", LogisticRegression())]), "model__"),
            "model alone (control)": (LogisticRegression(), "")}


def _search(kind, estimator, space, seed):
    if kind == SEARCHES[0]:
        return DPGridSearchCV(estimator, space, epsilon=2.0, classes=[0, 1], random_state=seed)
    return DPRandomSearchCV(estimator, space, epsilon=2.0, classes=[0, 1], n_iter=50,
                            random_state=seed)


def _without_check(templates, synthetic):
    return [None] * len(templates)


def run(tasks, reps, data_path):
    warnings.filterwarnings("ignore", category=TooFewRowsWarning)
    results = []
    for name in tasks:
        data = task_data(name, data_path)
        X, _, y, _ = split(data.X_raw, data.y, 0, TASKS[name].max_rows)
        # the scaler standardises: the grid's data_norm values are those of the easy variant
        space = search_grid("easy", X.shape[1])
        for label, (estimator, prefix) in _estimators(data.lo, data.hi).items():
            grid = {prefix + key: values for key, values in space.items()}
            for kind in SEARCHES:
                times = {"with": [], "without": []}
                for rep in range(reps):
                    for mode in ("with", "without"):
                        search = _search(kind, estimator, grid, rep)
                        patch = (mock.patch("skdptune.public._preflight.magnitude_limits",
                                            _without_check)
                                 if mode == "without" else contextlib.nullcontext())
                        with patch:
                            start = time.perf_counter()
                            search.fit(X, y)
                            times[mode].append(time.perf_counter() - start)
                ratios = [a / b for a, b in zip(times["with"], times["without"], strict=True)]
                results.append({
                    "task": name, "n_train": len(X), "estimator": label, "search": kind,
                    "reps": reps, "ratio": ratios,
                    "extra_ms": [1e3 * (a - b) for a, b in zip(times["with"], times["without"],
                                                              strict=True)],
                })
                print(name, label, kind, f"{statistics.median(ratios):.3f}", flush=True)
    return results


def _cell(values, fmt):
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}, {fmt(max(values))}]"


def _report(results):
    rows = [[r["task"], r["n_train"], r["estimator"], r["search"], r["reps"],
             _cell(r["ratio"], "{:.3f}".format), _cell(r["extra_ms"], "{:+.0f}".format)]
            for r in results]
    return "\n".join([
        "# The magnitude check's cost", "",
        "Fit time with the check (skdptune.public._magnitude) over fit time without it, the same "
        "search and seed, interleaved repetitions: median [min, max]; and the difference in "
        "milliseconds (noisy: the machine is shared). `python -m benchmarks.bench_checks`.", "",
        markdown_table(["task", "n_train", "estimator", "search", "reps",
                        "with / without", "with - without (ms)"], rows)])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="+", default=["credit", "churn"])
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--quick", action="store_true", help="smoke run: credit, 2 repetitions")
    args = p.parse_args(argv)
    tasks, reps = (["credit"], 2) if args.quick else (args.tasks, args.reps)
    results = run(tasks, reps, args.data)
    name = "checks_quick" if args.quick else "checks"
    print(write_result(name, _report(results), {"results": results}))


if __name__ == "__main__":
    main()
