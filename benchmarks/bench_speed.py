"""DPRandomSearchCV's defaults against GridSearchCV(cv=5): wall and CPU time, and what it chose.

``python -m benchmarks.bench_speed [--tasks credit churn adult] [--reps 20] [--data PATH]
[--n-iter 500 2000] [--n-jobs 2]``

The library's default search (``E[K] = 1000`` batched runs fitted and scored on all rows,
benchmarks/bench_suite.py's ``DEFAULT_SEARCH``) and GridSearchCV(cv=5) over the same 20
candidates of the same diffprivlib estimator, n_jobs=1 (GridSearchCV under one BLAS thread, as
skdptune runs its fits), in interleaved repetitions on the easy variant at total epsilon 2:
the two fits of a repetition see the same load. Repetition ``r`` seeds the search with ``r``
(a different number of runs ``K`` per repetition). Reported: the ratios of the wall-clock and
CPU seconds (median [min, max] over the repetitions), the ratio of the mean wall-clock times,
and per repetition the candidate the search selected and its test accuracy, so that a change of
the solver can be checked to leave the selections alone. Ratios only: absolute seconds depend
on the machine and its load. A search's time grows with its ``K``, which follows the geometric
law around ``E[K]`` (median ``0.69 E[K]``, a tenth of the draws beyond ``2.3 E[K]``): the table
gives the mean of ``K / E[K]`` over the repetitions' seeds (:func:`runs_drawn`), and the mean
times' ratio estimates the ratio of expected times when that mean is near 1 (20 repetitions
by default; seeds 0-4 alone drew ``K / E[K]`` 1.82, 1.90, 0.68, 1.91, 1.78).

With ``--n-jobs J`` each repetition also times the defaults and GridSearchCV(cv=5) at
``n_jobs=J`` (GridSearchCV's workers under joblib's one BLAS thread each) and reports both
speed-ups, the ``n_jobs=1`` wall time over the ``n_jobs=J`` one, side by side
(results/speed_jobs.*), and whether the search chose the same candidate as at ``n_jobs=1`` (its
results must not depend on ``n_jobs``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_limits

from benchmarks._common import DEFAULT_DATA, markdown_table, write_result
from benchmarks._tasks import TASKS, default_params, search_grid
from benchmarks.bench_suite import (
    CROSSOVER_EPSILON,
    DEFAULT_SEARCH,
    make_search,
    model,
    priced_model,
    split,
    task_data,
)
from skdptune._seeding import SeedPlan
from skdptune.random import DEFAULT_N_ITER_BATCHED
from skdptune.selection._repetition import RandomizedRepetition


def _timed(estimator, X, y, single_blas: bool) -> tuple[float, float]:
    """``(wall, CPU)`` seconds of ``estimator.fit(X, y)``, optionally under one BLAS thread."""
    wall, cpu = time.perf_counter(), time.process_time()
    with threadpool_limits(limits=1 if single_blas else None, user_api="blas"):
        estimator.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu


def runs_drawn(search, seed: int) -> int:
    """The number of runs ``K`` of ``search`` (fitted) seeded with the int ``seed``, recomputed
    from public facts -- the seed and the law the search reports (``distribution``, ``eta``,
    ``n_iter_expected_``) -- as the search draws it (``SeedPlan(seed).rng("sampling")``), never
    read from the fit; tests/test_benchmarks.py checks it against the runs the search fitted.
    For reading the timings only: the library never releases ``K`` (a seeded search's ``K``
    is a function of its seed, an unseeded one's of fresh entropy)."""
    law = RandomizedRepetition(search.distribution, search.n_iter_expected_, search.eta)
    return law.sample(SeedPlan(seed).rng("sampling"))


def measure(name: str, data_path: str, reps: int, max_rows: int | None = None,
            n_iters: tuple = (), n_jobs: int = 1) -> dict:
    """Interleaved repetitions of the default search and GridSearchCV(cv=5) on task ``name``
    (and of the defaults at each ``n_iter`` of ``n_iters``, and of both at ``n_jobs``)."""
    data = task_data(name, data_path)
    rows = TASKS[name].max_rows if max_rows is None else max_rows
    X_train, X_test, y_train, y_test = split(data.features("easy"), data.y, 0, rows)
    d = X_train.shape[1]
    space, default = search_grid("easy", d), default_params("easy", d)
    grid = GridSearchCV(priced_model(default, CROSSOVER_EPSILON, 0), space, cv=5, n_jobs=1)
    entry = {"n_train": len(y_train), "wall": [], "cpu": [], "grid_wall": [], "grid_cpu": [],
             "chosen": [], "test_accuracy": [], "runs_over_expected": [],
             "other_runs": {str(k): {"wall": [], "cpu": [], "test_accuracy": []}
                            for k in n_iters},
             "parallel": ({"n_jobs": n_jobs, "wall": [], "grid_wall": [], "same_choice": []}
                          if n_jobs > 1 else None)}
    grid_parallel = GridSearchCV(priced_model(default, CROSSOVER_EPSILON, 0), space, cv=5,
                                 n_jobs=n_jobs)
    for rep in range(reps):
        search = make_search(DEFAULT_SEARCH, model(default, 1.0), space, CROSSOVER_EPSILON, rep)
        wall, cpu = _timed(search, X_train, y_train, single_blas=False)
        grid_wall, grid_cpu = _timed(grid, X_train, y_train, single_blas=True)
        for key, value in (("wall", wall), ("cpu", cpu), ("grid_wall", grid_wall),
                           ("grid_cpu", grid_cpu)):
            entry[key].append(value)
        entry["runs_over_expected"].append(runs_drawn(search, rep) / search.n_iter_expected_)
        entry["chosen"].append({k: float(v) for k, v in sorted(search.best_params_.items())})
        entry["test_accuracy"].append(float(search.score(X_test, y_test)))
        for k in n_iters:
            other = make_search(DEFAULT_SEARCH, model(default, 1.0), space, CROSSOVER_EPSILON,
                                rep).set_params(n_iter=k)
            wall, cpu = _timed(other, X_train, y_train, single_blas=False)
            times = entry["other_runs"][str(k)]
            times["wall"].append(wall)
            times["cpu"].append(cpu)
            times["test_accuracy"].append(float(other.score(X_test, y_test)))
        if entry["parallel"] is not None:
            parallel = make_search(DEFAULT_SEARCH, model(default, 1.0), space,
                                   CROSSOVER_EPSILON, rep).set_params(n_jobs=n_jobs)
            times = entry["parallel"]
            times["wall"].append(_timed(parallel, X_train, y_train, single_blas=False)[0])
            times["grid_wall"].append(_timed(grid_parallel, X_train, y_train,
                                             single_blas=False)[0])
            times["same_choice"].append(parallel.best_params_ == search.best_params_)
    entry["load_average"], entry["cpus"] = os.getloadavg()[0], os.cpu_count()
    return entry


def _ratio(entry: dict, kind: str, times: dict | None = None) -> str:
    """``times[kind]`` (default: the defaults') over GridSearchCV's, median [min, max]."""
    ratios = np.array((entry if times is None else times)[kind]) / np.array(entry[f"grid_{kind}"])
    return f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}]"


def other_runs_report(results: dict) -> str:
    """The defaults at other expected numbers of runs, against GridSearchCV(cv=5) in the same
    repetitions."""
    n_iters = sorted({int(k) for e in results.values() for k in e.get("other_runs", {})})
    rows = [[name, e["n_train"], len(e["wall"]),
             *[f"{_ratio(e, 'wall', e['other_runs'][str(k)])}; mean "
               f"{_mean_ratio(e, e['other_runs'][str(k)])}" for k in n_iters],
             f"{_ratio(e, 'wall')}; mean {_mean_ratio(e)}",
             *[f"{np.mean(e['other_runs'][str(k)]['test_accuracy']):.4f}" for k in n_iters],
             f"{np.mean(e['test_accuracy']):.4f}"]
            for name, e in results.items()]
    header = ["task (easy)", "n_train", "reps",
              *[f"E[K] = {k} / GridSearchCV(cv=5), wall" for k in n_iters],
              f"E[K] = {DEFAULT_N_ITER_BATCHED} (defaults) / GridSearchCV(cv=5), wall",
              *[f"E[K] = {k}: test accuracy (mean)" for k in n_iters],
              f"E[K] = {DEFAULT_N_ITER_BATCHED}: test accuracy (mean)"]
    return ("## DPRandomSearchCV's defaults at other expected numbers of runs\n\n"
            "The defaults with `n_iter=E[K]` (the same seed per repetition), timed in the same "
            "interleaved repetitions as the defaults and GridSearchCV(cv=5): wall-clock ratio "
            "to GridSearchCV, median [min, max] over the repetitions; the ratio of the mean "
            "times, with the seeds' mean K / E[K] (the defaults'; every E[K] draws K by the "
            "same inverse CDF from the same seed, so about the same quantiles); and the mean "
            "test accuracy (the benchmark suite measures the utility over seeds and tasks).\n\n"
            + markdown_table(header, rows) + "\n")


def parallel_report(results: dict) -> str:
    """The speed-ups of the defaults and of GridSearchCV(cv=5) at ``n_jobs`` workers."""
    def speedup(one, many):
        ratios = np.array(one) / np.array(many)
        return f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}]"

    rows = [[name, e["n_train"], len(e["wall"]), e["parallel"]["n_jobs"],
             speedup(e["wall"], e["parallel"]["wall"]),
             speedup(e["grid_wall"], e["parallel"]["grid_wall"]),
             f"{sum(e['parallel']['same_choice'])} / {len(e['parallel']['same_choice'])}"]
            for name, e in results.items() if e.get("parallel")]
    header = ["task (easy)", "n_train", "reps", "n_jobs", "defaults' speed-up",
              "GridSearchCV(cv=5)'s speed-up", "same candidate as at n_jobs=1"]
    return ("## Speed-up with more workers\n\n"
            "The `n_jobs=1` wall time over the `n_jobs=J` one (median [min, max] over the "
            "interleaved repetitions) of the defaults and of GridSearchCV(cv=5).\n\n"
            + markdown_table(header, rows) + "\n")


def _mean_ratio(entry: dict, times: dict | None = None) -> str:
    """The mean wall time of the defaults (or of ``times``) over GridSearchCV's, and the seeds'
    mean ``K / E[K]`` (older results did not record it: ``–``)."""
    ratio = np.sum((entry if times is None else times)["wall"]) / np.sum(entry["grid_wall"])
    drawn = entry.get("runs_over_expected")
    return f"{ratio:.2f} (K / E[K] {np.mean(drawn):.2f})" if drawn else f"{ratio:.2f} (–)"


def report(results: dict, heading: str = "DPRandomSearchCV's defaults against "
                                          "GridSearchCV(cv=5)") -> str:
    rows = [[name, e["n_train"], len(e["wall"]), f"{e['load_average']:.1f} / {e['cpus']}",
             _ratio(e, "wall"), _mean_ratio(e), _ratio(e, "cpu"),
             " ".join(f"{c['data_norm']:g}/{c['C']:g}" for c in e["chosen"]),
             " ".join(f"{a:.4f}" for a in e["test_accuracy"])]
            for name, e in results.items()]
    header = ["task (easy)", "n_train", "reps", "load avg / CPUs",
              "defaults / GridSearchCV(cv=5), wall",
              "mean wall / mean wall (the seeds' mean K / E[K])", "same, CPU",
              "chosen data_norm/C per repetition (seed)", "test accuracy per repetition"]
    description = __doc__.split("\n\n")[2].replace("\n", " ")  # the docstring's third paragraph
    return (f"## {heading}\n\n" + description
            + "\n\n" + markdown_table(header, rows) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["credit", "churn", "adult"],
                        choices=sorted(TASKS))
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    parser.add_argument("--n-iter", type=int, nargs="+", default=[],
                        help="also time the defaults at these expected numbers of runs "
                             "(results/speed_runs.*)")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="also time both searches at this many workers "
                             "(results/speed_jobs.*)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: adult, 2000 rows, one repetition")
    args = parser.parse_args(argv)
    tasks, reps, rows = (["adult"], 1, 2000) if args.quick else (args.tasks, args.reps, None)
    name_out = ("speed_quick" if args.quick else "speed_runs" if args.n_iter
                else "speed_jobs" if args.n_jobs > 1 else "speed")

    def text(results):
        if args.n_iter:
            parts = [other_runs_report(results)]
        elif args.n_jobs > 1:
            parts = [report(results, "DPRandomSearchCV's defaults against GridSearchCV(cv=5), "
                                     "beside the runs with more workers")]
        else:
            parts = [report(results)]
        if args.n_jobs > 1:
            parts.append(parallel_report(results))
        return "\n".join(parts)

    results = {}
    for name in tasks:
        results[name] = measure(name, args.data, reps, rows, tuple(args.n_iter), args.n_jobs)
        print(f"[speed] {name}: {results[name]}", flush=True)
        write_result(name_out, text(results), results)  # a run cut short keeps its tasks
    print(text(results))


if __name__ == "__main__":
    main()
