"""The searches' fits with diffprivlib's bounded-domain Laplace scales found once, against
diffprivlib's own method: wall time and the same results.

``python -m benchmarks.bench_scales [--tasks credit churn] [--families nb pipeline]
[--methods grid random gibo] [--reps 2] [--data PATH]``

skdptune's fits find each scale of diffprivlib's ``LaplaceBoundedDomain`` once per process
(``skdptune/_scale_cache.py``), a new one by diffprivlib's bisection evaluated step for step
with each step's expression computed once; the families whose fits draw from it are
``GaussianNB`` (its variances) and the pipeline of a DP ``StandardScaler`` and
``LogisticRegression`` (the scaler's variances). Each search of the family benchmark
(``benchmarks/bench_families.py``'s ``make_search``: the library's defaults at total epsilon 2,
easy variant, its grid or box) is
fitted with the table and with diffprivlib's method left in place, in interleaved repetitions
(repetition ``r`` seeds the split and the search with ``r``), beside GridSearchCV(cv=5) over the
same candidates (L, plain diffprivlib, which the table never touches). Reported: each
search's time without the table over its time with it, and both over L's (median [min, max]
over the repetitions), and whether the two fits returned the same parameters and test accuracy
(the table changes no noise). Ratios only: absolute seconds depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks._common import DEFAULT_DATA, markdown_table, write_result
from benchmarks.bench_families import fit_method, split
from skdptune import _scale_cache

#: the families whose fits use the bounded-domain Laplace mechanism
FAMILIES = ("nb", "pipeline")
SEARCHES = ("grid", "random", "gibo")
TOTAL_EPSILON = 2.0


@contextlib.contextmanager
def diffprivlibs_method():
    """skdptune's fits with diffprivlib's ``_find_scale`` left in place (the module's check
    that it may replace it, answered no)."""
    real = _scale_cache._APPLIES
    _scale_cache._APPLIES = False
    try:
        yield
    finally:
        _scale_cache._APPLIES = real


def _fit_one(cell: dict, method: str) -> dict:
    X_train, X_test, y_train, y_test = split(cell)
    with threadpool_limits(limits=1, user_api="blas"):
        return fit_method(cell, method, X_train, y_train, X_test, y_test)


def measure(task: str, family: str, methods: tuple, reps: int, data_path: str) -> dict:
    entry = {"L": [], **{m: {"table": [], "diffprivlib": [], "same": []} for m in methods}}
    for rep in range(reps):
        cell = {"task": task, "task_name": task, "data_path": data_path, "family": family,
                "variant": "easy", "total_epsilon": TOTAL_EPSILON, "seed": rep}
        entry["L"].append(_fit_one(cell, "L")["seconds"])
        for method in methods:
            with_table = _fit_one(cell, method)
            with diffprivlibs_method():
                without = _fit_one(cell, method)
            times = entry[method]
            times["table"].append(with_table["seconds"])
            times["diffprivlib"].append(without["seconds"])
            times["same"].append(with_table["params"] == without["params"]
                                 and with_table["accuracy"] == without["accuracy"])
    entry["load_average"], entry["cpus"] = os.getloadavg()[0], os.cpu_count()
    return entry


def _ratio(a, b) -> str:
    ratios = np.array(a) / np.array(b)
    return f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}]"


def report(results: dict) -> str:
    rows = []
    for key, e in results.items():
        task, family = key.split("|")
        for method in (m for m in SEARCHES if m in e):
            t = e[method]
            rows.append([task, family, method, len(t["table"]),
                         f"{e['load_average']:.1f} / {e['cpus']}",
                         _ratio(t["diffprivlib"], t["table"]),
                         _ratio(t["diffprivlib"], e["L"]), _ratio(t["table"], e["L"]),
                         f"{sum(t['same'])} / {len(t['same'])}"])
    header = ["task (easy)", "family", "search", "reps", "load avg / CPUs",
              "diffprivlib's method / the table", "diffprivlib's method / L",
              "the table / L", "same parameters and test accuracy"]
    description = __doc__.split("\n\n")[2].replace("\n", " ")
    return ("## The bounded-domain Laplace scales found once\n\n" + description + "\n\n"
            + markdown_table(header, rows) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["credit", "churn"])
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--methods", nargs="+", choices=SEARCHES, default=list(SEARCHES))
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: credit, GaussianNB, the random search, one repetition")
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks, args.families, args.methods, args.reps = ["credit"], ["nb"], ["random"], 1
    name = "scales_quick" if args.quick else "scales"
    results = {}
    for task in args.tasks:
        for family in args.families:
            start = time.perf_counter()
            results[f"{task}|{family}"] = measure(task, family, tuple(args.methods), args.reps,
                                                  args.data)
            print(f"[scales] {task} {family}: {time.perf_counter() - start:.0f} s", flush=True)
            write_result(name, report(results), results)  # a run cut short keeps its cells
    print(report(results))


if __name__ == "__main__":
    main()
