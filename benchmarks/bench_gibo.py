"""DPGIBOSearchCV against the other searches and the baselines D and L (docs/benchmark_suite.md).

``python -m benchmarks.bench_gibo [--data PATH] [--quick] [--tasks ...] [--seeds ...]
[--budgets ...]``

Three tasks on Adult (public [0, 1] scaling of ``skdptune.datasets.load_adult``; synthetic data
of the same shape when the file is absent):

* ``nb_bounds`` (d = 12, the headline task: ten or more parameters): diffprivlib
  ``GaussianNB`` on the 6 numeric attributes in their raw units, tuning its per-feature
  clipping ``bounds`` -- a lower bound in [0, 9] (linear) and an upper bound in [10, 2e6]
  (log) per feature. The untuned default is
  the guess (0, 1e6) of a user who does not know the scales: its noise swamps every feature and
  it predicts the majority class, so tuning can pay (good bounds reach about 0.80 at epsilon 1).
* ``scaler_bounds`` (d = 12, a "hard default"): a diffprivlib ``StandardScaler`` and
  ``GaussianNB`` pipeline on the 6 numeric attributes in their raw units (age in years, fnlwgt
  up to 1.5e6, ...), tuning the scaler's per-feature ``bounds`` -- a lower bound in [0, 9] and
  an upper bound in [10, 2e6] (log) per feature, an ``ArrayRange``. The untuned default is the
  guess (0, 1e6) a user without the scales would make; tighter bounds cut the scaler's DP noise
  but clip more. Grid search does not apply (a 12-dimensional box).
* ``logistic`` (d = 2): diffprivlib ``LogisticRegression`` on all 15 features, tuning ``C`` and
  ``data_norm`` (both log scale).

At each total epsilon and seed, side by side: DPGIBOSearchCV (shared and disjoint train rows),
DPRandomSearchCV with ``E[K]`` = the number of GIBO fits (equal fits, budget mode),
DPGridSearchCV where the space allows (half tuning, half model), the untuned default with the
whole budget (D), and non-private GIBO (:class:`NonPrivateGIBO`: the same algorithm whose fits
get the returned model's epsilon and whose gradients get no noise, the returned model at the
same epsilon as the others: the limit L). Every model is priced as the searches price theirs
(``_common.pricing``: its epsilons set so that a fit costs its budget under skdptune's
accounting), the untuned default too. The gap closed is
``(X - D) / (L - D)``. The loss-vs-iteration plot refits the DP model (at the returned model's
epsilon) at every point of the GIBO trajectories and scores it on the test set.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from sklearn.metrics import accuracy_score
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from benchmarks._common import (
    CLASSES,
    DEFAULT_DATA,
    load_split,
    markdown_table,
    mean_std,
    padding,
    pricing,
    pyplot,
    save_figure,
    write_result,
)
from skdptune import ArrayRange, DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune._seeding import SeedPlan
from skdptune.datasets import _ADULT_NUMERIC
from skdptune.evaluation._fit import fit_on_rows, prepare_clone

N_ITER, TUNING_SHARE = 10, 0.5


class NonPrivateGIBO(DPGIBOSearchCV):
    """The limit L (NOT private): the same algorithm with its tuning for free.

    Every fit of the optimisation gets the *returned model's* epsilon (the DP models being
    tuned, at their own noise level, instead of the composed ``epsilon_fit``), and the
    gradients get no noise (an enormous ``mu``). Its ``privacy_spent_`` is meaningless.
    """

    def _plan_costs(self, space, box):
        costs = super()._plan_costs(space, box)
        return dataclasses.replace(costs, epsilon_fit=self._budget()[1], mu=1e9)


#: the fixed ranges of Adult's numeric attributes in raw units (skdptune.datasets)
RAW_LOW = np.array([lo for _, lo, _ in _ADULT_NUMERIC])
RAW_HIGH = np.array([hi for _, _, hi in _ADULT_NUMERIC])


def scaler_task(d):
    """Hard default: raw features of unknown scale; the user guesses scaler bounds (0, 1e6).

    Tuned: per feature, a lower bound in [0, 9] (linear) and an upper one in [10, 2e6] (log).
    """
    bounds = ArrayRange(low=[[0.0] * d, [10.0] * d], high=[[9.0] * d, [2e6] * d],
                        log=[[False] * d, [True] * d], as_tuple=True)

    def estimator(eps):
        return Pipeline([
            ("scaler", StandardScaler(epsilon=eps / 3, bounds=(0.0, 1e6))),
            ("nb", GaussianNB(epsilon=2 * eps / 3, bounds=(-5.0, 5.0))),
        ])

    return {
        "name": "scaler_bounds", "columns": slice(0, 6), "raw": True,
        "estimator": estimator, "box": {"scaler__bounds": bounds},
        "random": {"scaler__bounds": bounds}, "grid": None,
    }


def nb_bounds_task(d):
    """The headline d >= 10 task: GaussianNB's own per-feature bounds, raw units, default 1e6.

    Tuned: per feature, a lower bound in [0, 9] (linear) and an upper one in [10, 2e6] (log),
    as for ``scaler_bounds``; the two ranges apart, so that every point has a price (a
    ``GaussianNB``'s replace-one factor grows without limit as a lower bound nears its upper
    bound: docs/privacy.md)."""
    bounds = ArrayRange(low=[[0.0] * d, [10.0] * d], high=[[9.0] * d, [2e6] * d],
                        log=[[False] * d, [True] * d], as_tuple=True)
    return {
        "name": "nb_bounds", "columns": slice(0, 6), "raw": True,
        "estimator": lambda eps: GaussianNB(epsilon=eps, bounds=(0.0, 1e6)),
        "box": {"bounds": bounds}, "random": {"bounds": bounds}, "grid": None,
    }


def logistic_task(d):
    norm = float(np.sqrt(d))
    return {
        "name": "logistic", "columns": slice(None),
        "estimator": lambda eps: LogisticRegression(epsilon=eps, data_norm=norm),
        "box": {"C": (1e-3, 1e2, "log"), "data_norm": (0.1, norm, "log")},
        "random": {"C": _LogUniform(1e-3, 1e2), "data_norm": _LogUniform(0.1, norm)},
        "grid": {"C": [1e-3, 1e-2, 1e-1, 1.0, 10.0], "data_norm": [0.1, 0.4, 1.0, norm]},
    }


class _LogUniform:
    def __init__(self, low, high):
        self.low, self.high = np.log(low), np.log(high)

    def rvs(self, random_state=None):
        rng = np.random.RandomState(random_state) if not hasattr(random_state, "uniform") \
            else random_state
        return float(np.exp(rng.uniform(self.low, self.high)))

    def support(self):
        """``(low, high)``, as scipy's distributions give it: DPRandomSearchCV prices a
        ``LogisticRegression`` whose ``data_norm`` is drawn at its support's upper end."""
        return float(np.exp(self.low)), float(np.exp(self.high))


def _search_kw(seed):
    return {"classes": CLASSES, "random_state": seed, "accountant": BudgetAccountant()}


def gibo(task, total, seed, *, train_split="shared", cls=DPGIBOSearchCV):
    return cls(task["estimator"](1.0), task["box"], epsilon=total, tuning_share=TUNING_SHARE,
               n_iter=N_ITER, train_split=train_split, **_search_kw(seed))


def grid_search(task, total, seed):
    """DPGridSearchCV at the same total budget: half tuning, half the returned model."""
    return DPGridSearchCV(task["estimator"](total * (1 - TUNING_SHARE)), task["grid"],
                          epsilon=total, tuning_share=TUNING_SHARE, **_search_kw(seed))


def cell(task, data, total, seed):
    """Accuracy of every method, and the GIBO trajectories, at one (epsilon, seed)."""
    X_train, X_test, y_train, y_test = data
    out, trajectories = {}, {}
    timings = {}

    def run(name, search):
        start = time.perf_counter()
        search.fit(X_train, y_train)
        timings[name] = time.perf_counter() - start
        assert search.privacy_spent_.epsilon <= total * (1 + 1e-12)
        out[name] = float(accuracy_score(y_test, search.predict(X_test)))
        return search

    g = run("DPGIBOSearchCV (shared rows)", gibo(task, total, seed))
    trajectories["DPGIBOSearchCV"] = [r["params"] for r in g.trajectory_]
    n_fits = g.privacy_split_["n_fits"]
    run("DPGIBOSearchCV (disjoint chunks)", gibo(task, total, seed, train_split="disjoint"))
    run("DPRandomSearchCV (E[K] = GIBO fits)",
        # a validation part like DP-GIBO's, for equal fits on equal rows
        DPRandomSearchCV(task["estimator"](1.0), task["random"], n_iter=n_fits,
                         epsilon=total, validation_size=0.2, **_search_kw(seed)))
    if task["grid"] is not None:
        run("DPGridSearchCV (half tuning)", grid_search(task, total, seed))
    default = prepare_clone(task["estimator"](total), {}, seed=SeedPlan(seed).seed("refit"),
                            **pricing(total))
    fit_on_rows(default, X_train, y_train, None, {}, padding=padding(X_train, y_train))
    out["untuned default, whole budget (D)"] = float(default.score(X_test, y_test))
    c = run("non-private GIBO (L)", gibo(task, total, seed, cls=NonPrivateGIBO))
    trajectories["non-private GIBO"] = [r["params"] for r in c.trajectory_]
    curves = {name: _trajectory_accuracy(task, data, total, seed, points)
              for name, points in trajectories.items()}
    return out, curves, timings, n_fits


def _trajectory_accuracy(task, data, total, seed, points):
    """Test accuracy of the DP model (returned-model epsilon) at each trajectory point."""
    X_train, X_test, y_train, y_test = data
    accuracies = []
    for i, params in enumerate(points):
        model = prepare_clone(task["estimator"](total * (1 - TUNING_SHARE)), params,
                              seed=SeedPlan(seed).seed("refit", i),
                              **pricing(total * (1 - TUNING_SHARE)))
        fit_on_rows(model, X_train, y_train, None, {}, padding=padding(X_train, y_train))
        accuracies.append(float(model.score(X_test, y_test)))
    return accuracies


def gap_cell(values, d_values, l_values) -> str:
    """``mean ± std (median)``, with the gap closed when ``L - D`` exceeds two standard deviations.

    The rule of docs/benchmark_suite.md ("Reading the tables"): below that, ``(X - D) / (L - D)``
    divides by noise.
    """
    d, lim = np.mean(d_values), np.mean(l_values)
    spread = np.sqrt(np.var(d_values, ddof=1) + np.var(l_values, ddof=1)) \
        if len(d_values) > 1 else 0.0
    cell_text = f"{mean_std(values)} (median {np.median(values):.3f})"
    if lim - d > 2 * spread and lim > d:
        return f"{cell_text} (gap {(np.mean(values) - d) / (lim - d):+.2f})"
    return cell_text


def report(records, curves, timings, budgets, name):
    lines = [f"# DPGIBOSearchCV benchmark ({name})\n",
             "Produced by `python -m benchmarks.bench_gibo`. Test accuracy, mean ± std (and "
             "median) over seeds; the gap closed (X − D)/(L − D) of the means is shown only "
             "where L − D exceeds two standard deviations. Every method returns a model at the "
             "same epsilon (half the total) except the default (whole budget).\n"]
    for task, per_budget in records.items():
        lines.append(f"\n## {task}\n")
        methods = list(next(iter(per_budget.values()))[0].keys())
        measured = [b for b in budgets if b in per_budget]
        rows = []
        for method in methods:
            row = [method]
            for total in measured:
                runs = per_budget[total]
                row.append(gap_cell([r[method] for r in runs],
                                    [r["untuned default, whole budget (D)"] for r in runs],
                                    [r["non-private GIBO (L)"] for r in runs]))
            rows.append(row)
        lines.append(markdown_table(["method"] + [f"ε = {b:g}" for b in measured], rows))
        t = timings[task]
        lines.append("\nWall time relative to DPRandomSearchCV (same number of fits): " + ", ".join(
            f"{m} {np.median(v) / np.median(t['DPRandomSearchCV (E[K] = GIBO fits)']):.2f}×"
            for m, v in t.items()))
    return "\n".join(lines) + "\n"


#: final test accuracies drawn as horizontal references in the plot
REFERENCES = {"untuned default, whole budget (D)": ":", "DPRandomSearchCV (E[K] = GIBO fits)": "--"}


def plot(curves, budgets, name, records=None):
    """Test accuracy at each GIBO iterate (largest epsilon of each task), with D and the
    random search's final accuracy as horizontal references."""
    plt = pyplot()
    tasks = list(curves)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        if records is not None:
            runs = records[task][max(records[task])]
            for method, style in REFERENCES.items():
                ax.axhline(np.mean([r[method] for r in runs]), color="grey", linestyle=style,
                           label=f"{method} (final, mean)")
        for method, per_seed in curves[task].items():
            arr = np.array(per_seed)
            mean, std = arr.mean(axis=0), arr.std(axis=0)
            it = np.arange(1, arr.shape[1] + 1)
            ax.plot(it, mean, marker="o", label=method)
            ax.fill_between(it, mean - std, mean + std, alpha=0.2)
        ax.set_title(f"{task}, ε = {max(records[task]) if records else budgets[-1]:g}")
        ax.set_xlabel("iteration")
        ax.set_ylabel("test accuracy at the point")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, name)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--seeds", type=int, nargs="+", help="default: 0..4 (0, 1 with --quick)")
    p.add_argument("--budgets", type=float, nargs="+",
                   help="total epsilons; default: 1 2 4 for nb_bounds, 2 4 for the others "
                        "(2 with --quick)")
    p.add_argument("--split-seed", type=int, default=0,
                   help="seed of the train/test split (calibrate on another than the report's)")
    p.add_argument("--name", help="results file name (default: gibo, or gibo_quick)")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the tables and the plot from the saved JSON")
    args = p.parse_args(argv)
    name = args.name or ("gibo_quick" if args.quick else "gibo")
    if args.report_only:
        return _rewrite_report(name)
    seeds = args.seeds or (range(2) if args.quick else range(5))
    budgets = args.budgets or ([2.0] if args.quick else [1.0, 2.0, 4.0])
    X_train, X_test, y_train, y_test, data_name = load_split(args.data, seed=args.split_seed)
    n = 4000 if args.quick else 15000
    records, curves, timings = {}, {}, {}
    with threadpool_limits(limits=1, user_api="blas"):
        for make in (TASKS[t] for t in args.tasks):
            task = make(X_train.shape[1] if make is logistic_task else 6)
            cols = task["columns"]
            data = (X_train[:n, cols], X_test[:, cols], y_train[:n], y_test)
            if task.get("raw"):  # undo the public [0, 1] scaling: features of unknown scale
                data = (RAW_LOW + data[0] * (RAW_HIGH - RAW_LOW), RAW_LOW + data[1] * (
                    RAW_HIGH - RAW_LOW), data[2], data[3])
            records[task["name"]] = {}
            curves[task["name"]] = {}
            timings[task["name"]] = {}
            task_budgets = budgets if (args.budgets or args.quick or task["name"] == "nb_bounds") \
                else [b for b in budgets if b > 1.0]
            for total in task_budgets:
                records[task["name"]][total] = []
                for seed in seeds:
                    out, curve, t, n_fits = cell(task, data, total, seed)
                    records[task["name"]][total].append(out)
                    print(task["name"], total, seed, {k: round(v, 3) for k, v in out.items()},
                          flush=True)
                    for k, v in t.items():
                        timings[task["name"]].setdefault(k, []).append(v)
                    if total == task_budgets[-1]:
                        for k, v in curve.items():
                            curves[task["name"]].setdefault(k, []).append(v)
    markdown = report(records, curves, timings, budgets, f"{data_name}, n_train = {n}")
    write_result(name, markdown, {"records": {t: {str(b): v for b, v in r.items()}
                                              for t, r in records.items()},
                                  "curves": curves, "timings": timings})
    plot(curves, budgets, name, records)
    print(markdown)


TASKS = {"nb_bounds": nb_bounds_task, "scaler_bounds": scaler_task, "logistic": logistic_task}


def _rewrite_report(name):
    import json

    from benchmarks._common import RESULTS

    saved = json.loads((RESULTS / f"{name}.json").read_text())
    records = {t: {float(b): v for b, v in r.items()} for t, r in saved["records"].items()}
    budgets = sorted({b for per_budget in records.values() for b in per_budget})
    header = (RESULTS / f"{name}.md").read_text().splitlines()[0]
    markdown = report(records, saved["curves"], saved["timings"], budgets,
                      header.split("(", 1)[1].rstrip(")"))
    write_result(name, markdown, saved)
    plot(saved["curves"], budgets, name, records)
    print(markdown)


if __name__ == "__main__":
    main()
