"""Benchmark of privacy_utility_front: DPareto against random sampling.

Run ``python -m benchmarks.bench_pareto [--data PATH] [--quick] [--reps R]`` (or everything
through ``python -m benchmarks.run``). Writes ``results/pareto.md`` / ``.json`` / ``.png``;
``docs/pareto.md`` shows them.

As in Avent et al.'s Table 2: the hypervolume of the front found by DPareto (``n_initial``
random points, then Bayesian optimisation) against random sampling with the same number of
evaluations (``n_iter=0``), over ``R`` repetitions. Repetition ``r`` seeds both with ``r``, so
they share their random initial points (and the noise of those points' fits); the table gives
the mean paired difference with a 95 % t-interval. Two tasks on Adult (synthetic data when the
file is absent), a subsample of the training rows as the data of the front:

* **pipeline** -- diffprivlib ``StandardScaler(bounds=(0, 1))`` then ``LogisticRegression``;
  the privacy is the sum of the two epsilons, the utility depends on both and on ``C``;
* **search** -- ``DPRandomSearchCV`` over ``C`` with the model's epsilon, the epsilon of the
  noisy validation scores and the expected number of runs ``n_iter`` as the front's
  parameters; its privacy is its data-independent ``planned_privacy`` -- the question "how
  much of my budget should tuning get?".

The wall time of the BO overhead (surrogates and acquisition) is reported as a ratio to the
time spent in the oracles (the fits), both measured inside ``privacy_utility_front``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from diffprivlib.models import LogisticRegression, StandardScaler
from joblib import Parallel, delayed
from scipy import stats
from scipy.stats import loguniform
from sklearn.pipeline import Pipeline

from benchmarks._common import (
    CLASSES,
    DEFAULT_DATA,
    load_split,
    markdown_table,
    pyplot,
    save_figure,
    write_result,
)
from skdptune import DPRandomSearchCV, privacy_utility_front
from skdptune.pareto import NotPrivateWarning


def pipeline_task(n_features: int) -> tuple:
    """Scaler epsilon + model epsilon + C; the epsilon ranges sum to at most 10 (paper's v)."""
    pipe = Pipeline([
        ("scaler", StandardScaler(bounds=(0.0, 1.0))),
        # after scaling, rows have norm about sqrt(n_features); longer rows are clipped
        ("clf", LogisticRegression(data_norm=math.sqrt(n_features))),
    ])
    space = {"scaler__epsilon": (0.01, 5.0, "log"), "clf__epsilon": (0.01, 5.0, "log"),
             "clf__C": (1e-2, 1e2, "log")}
    return pipe, space


def search_task(n_features: int) -> tuple:
    """DPRandomSearchCV over C; the front explores its model epsilon, score epsilon, n_iter."""
    # a validation part: a run costs max(model epsilon, score epsilon), as when the saved front
    # was measured (without one, the default for this batched model, it costs their sum)
    search = DPRandomSearchCV(
        LogisticRegression(data_norm=math.sqrt(n_features)), {"C": loguniform(1e-2, 1e2)},
        epsilon=None, validation_size=0.2, classes=CLASSES)  # as configured: the space sets it
    space = {"estimator__epsilon": (0.01, 3.0, "log"), "epsilon_score": (0.01, 3.0, "log"),
             "n_iter": (1.0, 10.0)}
    return search, space


TASKS = {"pipeline": pipeline_task, "search": search_task}
# Adult is 76 % negative: with accuracy, the near-constant predictors of tiny epsilons score
# like the majority class by luck; balanced accuracy gives them 0.5
SCORING = "balanced_accuracy"


def one_repetition(task: str, X, y, rep: int, opts) -> dict:
    """DPareto and random sampling with seed ``rep``: hypervolume histories and timings."""
    warnings.filterwarnings("ignore", category=NotPrivateWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # scipy, via diffprivlib
    estimator, space = TASKS[task](X.shape[1])
    out = {"task": task, "rep": rep, "n_evals": opts.n_evals,
           "n_proposals": opts.n_evals - opts.n_initial}
    for method, n_initial in (("dpareto", opts.n_initial), ("random", opts.n_evals)):
        start = time.perf_counter()
        front = privacy_utility_front(estimator, space, X, y, scoring=SCORING, cv=opts.cv,
                                      n_repeats=opts.n_repeats, n_initial=n_initial,
                                      n_iter=opts.n_evals - n_initial, random_state=rep)
        out[method] = {
            "hypervolume": front.hypervolume_history.tolist(),
            "anti_ideal": list(front.anti_ideal),
            "epsilon": front.epsilon.tolist(), "utility": front.utility.tolist(),
            "pareto": front.pareto_mask.tolist(),
            "proposal_seconds": float(front.proposal_time.sum()),
            "evaluation_seconds": float(front.evaluation_time.sum()),
            "wall_seconds": time.perf_counter() - start,
        }
    return out


def t_interval(values) -> tuple[float, float, float]:
    """Mean and two-sided 95 % t-interval of the mean."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(
        len(values)))
    return mean, mean - half, mean + half


def summary_rows(records: list[dict], tasks: list[str]) -> list[list]:
    rows = []
    for task in tasks:
        mine = [r for r in records if r["task"] == task]
        bo = [r["dpareto"]["hypervolume"][-1] for r in mine]
        rnd = [r["random"]["hypervolume"][-1] for r in mine]
        mean, lo, hi = t_interval(np.subtract(bo, rnd))
        overhead = [r["dpareto"]["proposal_seconds"] / r["dpareto"]["evaluation_seconds"]
                    for r in mine]
        per_proposal = [r["dpareto"]["proposal_seconds"] / r["n_proposals"] for r in mine]
        wins = sum(b > r for b, r in zip(bo, rnd, strict=True))
        rows.append([task, f"{np.mean(bo):.3f} ± {np.std(bo, ddof=1):.3f}",
                     f"{np.mean(rnd):.3f} ± {np.std(rnd, ddof=1):.3f}",
                     f"{mean:+.3f} ({lo:+.3f}, {hi:+.3f})", f"{wins}/{len(mine)}",
                     f"{np.mean(overhead):.2f}", f"{np.mean(per_proposal):.2f} s"])
    return rows


def plot_histories(records: list[dict], tasks: list[str], name: str) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(2, len(tasks), figsize=(5 * len(tasks), 8), squeeze=False)
    for col, task in enumerate(tasks):
        mine = [r for r in records if r["task"] == task]
        ax = axes[0, col]
        for method, colour in (("dpareto", "C0"), ("random", "C1")):
            hv = np.array([r[method]["hypervolume"] for r in mine])
            k = np.arange(1, hv.shape[1] + 1)
            ax.plot(k, hv.mean(axis=0), color=colour, label=method)
            ax.fill_between(k, hv.min(axis=0), hv.max(axis=0), color=colour, alpha=0.15)
        ax.axvline(mine[0]["n_evals"] - mine[0]["n_proposals"] + 0.5, color="0.5", ls=":")
        ax.set(title=f"{task}: hypervolume (mean, min-max)", xlabel="evaluations")
        ax.legend(loc="lower right")
        ax = axes[1, col]
        for method, colour in (("dpareto", "C0"), ("random", "C1")):
            run = mine[0][method]
            eps, util = np.array(run["epsilon"]), np.array(run["utility"])
            front = np.array(run["pareto"])
            order = np.argsort(eps[front])
            ax.scatter(eps, util, s=10, color=colour, alpha=0.4)
            ax.step(eps[front][order], util[front][order], where="post", color=colour,
                    label=f"{method} front (repetition 0)")
        ax.set(xscale="log", xlabel="epsilon", ylabel=f"utility ({SCORING})")
        ax.legend(loc="lower right")
    save_figure(fig, name)


def markdown(report: dict, suffix: str) -> str:
    header = ["task", "DPareto hypervolume", "random hypervolume",
              "mean difference (95 % CI)", "DPareto wins", "BO overhead / fit time",
              "BO time per proposal"]
    return "\n".join([
        "# privacy_utility_front: DPareto against random sampling\n",
        f"Data: {report['data']}, {report['n_rows']} training rows (the proxy data of the "
        f"front). {report['n_evals']} evaluations per front ({report['n_initial']} random + "
        f"{report['n_evals'] - report['n_initial']} by BO for DPareto; all random for the "
        f"baseline, whose first {report['n_initial']} points are DPareto's), utility = mean "
        f"over {report['n_repeats']} repeats of {report['cv']}-fold cross-validated "
        f"{report['scoring']}, "
        f"{report['reps']} repetitions (hypervolume mean ± sd over repetitions; the "
        "difference is paired by repetition, with a two-sided 95 % t-interval). Default "
        f"anti-ideal points: {report['anti_ideal']}. Spaces: {report['spaces']}.\n",
        markdown_table(header, summary_rows(report["records"], report["tasks"])),
        "\n\"BO overhead / fit time\": seconds spent fitting the two Gaussian processes and "
        "maximising HVPoI, divided by the seconds spent in the privacy and utility oracles "
        "(the DP fits), for the DPareto runs. Single-threaded BLAS, "
        f"{report['n_jobs']} repetitions in parallel; total {report['seconds']:.0f} s.\n",
        f"![hypervolume](pareto{suffix}.png)",
    ])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA),
                   help="path to adult.csv (synthetic data when absent)")
    p.add_argument("--quick", action="store_true", help="small smoke run (about a minute)")
    p.add_argument("--reps", type=int, default=8, help="repetitions (>= 5 for the table)")
    p.add_argument("--n-rows", type=int, default=4000, help="training rows used")
    p.add_argument("--n-jobs", type=int, default=2, help="repetitions run in parallel")
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    return p


def options(args) -> argparse.Namespace:
    quick = args.quick
    return argparse.Namespace(
        suffix="_quick" if quick else "", reps=2 if quick else args.reps,
        n_rows=1000 if quick else args.n_rows, n_initial=4 if quick else 8,
        n_evals=10 if quick else 30, cv=3, n_repeats=2, n_jobs=args.n_jobs, tasks=args.tasks,
    )


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    opts = options(args)
    X_train, _, y_train, _, name = load_split(args.data)
    X, y = X_train[:opts.n_rows], y_train[:opts.n_rows]
    start = time.perf_counter()
    jobs = [(task, rep) for task in opts.tasks for rep in range(opts.reps)]
    records = Parallel(n_jobs=opts.n_jobs, verbose=5)(
        delayed(one_repetition)(task, X, y, rep, opts) for task, rep in jobs)
    report = {
        "data": name, "n_rows": len(X), "n_evals": opts.n_evals, "n_initial": opts.n_initial,
        "cv": opts.cv, "n_repeats": opts.n_repeats, "reps": opts.reps, "n_jobs": opts.n_jobs,
        "tasks": opts.tasks, "scoring": SCORING,
        "anti_ideal": {task: next(r["dpareto"]["anti_ideal"] for r in records
                                  if r["task"] == task) for task in opts.tasks},
        "spaces": {task: TASKS[task](X.shape[1])[1] for task in opts.tasks},
        "seconds": time.perf_counter() - start, "records": records,
    }
    write_result(f"pareto{opts.suffix}", markdown(report, opts.suffix), report)
    plot_histories(records, opts.tasks, f"pareto{opts.suffix}")


if __name__ == "__main__":
    main()
