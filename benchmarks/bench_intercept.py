"""The intercept of diffprivlib's ``LogisticRegression``: the model as diffprivlib fits it
against the constant-column reformulation, at equal charge.

diffprivlib fits ``fit_intercept=True`` with the intercept unregularised; where its mechanism
adds no ridge (``epsilon > 2 ln(1 + sqrt(q^2 + 1) C / 4)``) no finite epsilon bounds that model
(skdptune.estimators.models._logistic). The reformulation fits ``fit_intercept=False`` on
``[clip_to_norm(X, q), c]`` (a public constant column ``c``) at ``data_norm = hypot(q, c)``;
``coef_ = w[:d]``, ``intercept_ = c w[d]``. Its intercept is regularised as
``b^2 / (2 C n c^2)`` and it costs what a model without intercept at ``hypot(q, c)`` costs.
Per task (the easy variant: features in [0, 1]), ``data_norm`` q in {1, sqrt(d)}, ``C`` and
target total ``T``, over seeds (a fresh stratified 75/25 split and fresh noise each), the test
accuracy of:

* ``old``: diffprivlib ``LogisticRegression(fit_intercept=True, data_norm=q, C=C)`` at the
  epsilon ``new(c=1)`` gets (the earlier pricing charged the old model what it charges
  ``new(c=1)`` where the mechanism adds no ridge);
* ``new(c)``, c in {0.25, 0.5, 1, 2, q}: each at the diffprivlib epsilon whose charge
  ``logistic_regression_epsilon(epsilon, hypot(q, c), C, False, 2)`` is ``T`` (bisection);
* ``non-private``: scikit-learn's ``LogisticRegression(C=C)`` on the same clipped rows (for
  scale; it does not regularise its intercept either).

Every model predicts the test rows clipped to q, as its training rows were: diffprivlib's
``predict`` takes the rows unclipped, and at q = 1 that mismatch, not the intercept, decides
the accuracy (a model with its intercept shrunk to 0 is unaffected, as its decision ignores the
rows' scale); the accuracy on unclipped rows is kept too (summary and JSON). The old model's
runaway -- ``|intercept_| > 1e3`` -- is counted.

Run: ``python -m benchmarks.bench_intercept [--tasks adult credit churn default] [--seeds 20]
[--n-jobs 2] [--data PATH] [--quick]``; writes ``benchmarks/results/intercept.{json,md}``
(``intercept_quick`` for the smoke run: Adult only, 2 seeds, C in {0.01, 1}, T in {1, 4}).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from diffprivlib.validation import clip_to_norm
from sklearn.linear_model import LogisticRegression as NonPrivateLogisticRegression
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import threadpool_limits

from skdptune.estimators.models._logistic import logistic_regression_epsilon

from ._common import DEFAULT_DATA, markdown_table, write_result
from ._tasks import TASKS
from .bench_suite import split, task_data

TASK_NAMES = ("adult", "credit", "churn", "default")
C_VALUES = (0.01, 0.1, 1.0, 10.0)
TOTALS = (0.5, 1.0, 2.0, 4.0)
#: the constant column's values; "q" is the data norm itself
CONSTANTS = (0.25, 0.5, 1.0, 2.0, "q")
#: the data norms of the easy variant: 1 and the public bound sqrt(d)
NORMS = ("1", "sqrt(d)")
SEEDS = 20
#: the old model's intercept has run away when its magnitude exceeds this
RUNAWAY = 1e3
N_CLASSES = 2
OLD, NONPRIVATE = "old", "non-private"
#: the constant whose epsilon the old model gets
OLD_PRICED_AS = 1.0
QUICK = {"tasks": ["adult"], "seeds": 2, "C": (0.01, 1.0), "totals": (1.0, 4.0)}


def new_name(c) -> str:
    return "new(c=q)" if c == "q" else f"new(c={c:g})"


#: each new(c)'s constant; the old model is priced as new(c=OLD_PRICED_AS)
PRICED_AS = {OLD: OLD_PRICED_AS, **{new_name(c): c for c in CONSTANTS}}
PRIVATE = tuple(PRICED_AS)
METHODS = (*PRIVATE, NONPRIVATE)


def data_norm(label: str, n_features: int) -> float:
    return math.sqrt(n_features) if label == "sqrt(d)" else float(label)


def constant(c, q: float) -> float:
    return q if c == "q" else float(c)


def charge(epsilon: float, q: float, c: float, C: float) -> float:
    """What skdptune charges ``new(c)`` fitted at ``epsilon``: a model without intercept at
    data norm ``hypot(q, c)`` (the appended column is public, the rows' norm at most that)."""
    return logistic_regression_epsilon(epsilon, math.hypot(q, c), C, False, N_CLASSES)


def epsilon_for_charge(total: float, q: float, c: float, C: float) -> float:
    """The largest diffprivlib ``epsilon`` whose :func:`charge` is at most ``total``.

    Bisection: the charge is nondecreasing in ``epsilon`` and never below it, so the answer
    lies in ``[0, total]``.
    """
    if charge(total, q, c, C) <= total:
        return total
    lo, hi = 0.0, total
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            return lo
        if charge(mid, q, c, C) <= total:
            lo = mid
        else:
            hi = mid


def branch_point(norm: float, C: float) -> float:
    """diffprivlib's ``Vector`` mechanism adds no ridge above this epsilon (rows of norm
    ``norm``: ``hypot(q, 1)`` for the old model, ``hypot(q, c)`` for ``new(c)``)."""
    return 2.0 * math.log1p(norm * C / 4.0)


def noise_epsilon(epsilon: float, norm: float, C: float) -> float:
    """The epsilon that sets the mechanism's noise scale ``2 norm / e'``: ``epsilon - branch``
    without ridge, ``epsilon / 2`` with one."""
    branch = branch_point(norm, C)
    return epsilon - branch if epsilon > branch else epsilon / 2.0


def in_dead_zone(epsilon: float, norm: float, C: float) -> bool:
    """Just above the branch point (``branch < epsilon < 1.5 branch``): no ridge and more noise
    than the ridge branch has at the branch point, where the charge is no higher."""
    branch = branch_point(norm, C)
    return branch < epsilon < 1.5 * branch


# == the fits ==================================================================================
def fit_old(X, y, q, C, epsilon, seed):
    """``(coef, intercept)`` of diffprivlib's model as it fits it."""
    model = LogisticRegression(epsilon=epsilon, data_norm=q, C=C, random_state=seed,
                               accountant=BudgetAccountant()).fit(X, y)
    return model.coef_[0], float(model.intercept_[0])


def fit_constant_column(X_clipped, y, q, c, C, epsilon, seed):
    """``(coef, intercept)`` of the reformulation: no intercept on ``[X_clipped, c]`` at data
    norm ``hypot(q, c)``; the intercept is ``c`` times the constant column's weight."""
    X_aug = np.column_stack([X_clipped, np.full(len(X_clipped), c)])
    model = LogisticRegression(epsilon=epsilon, data_norm=math.hypot(q, c), C=C,
                               fit_intercept=False, random_state=seed,
                               accountant=BudgetAccountant()).fit(X_aug, y)
    w = model.coef_[0]
    return w[:-1], c * float(w[-1])


def fit_nonprivate(X_clipped, y, C):
    model = NonPrivateLogisticRegression(C=C, max_iter=1000).fit(X_clipped, y)
    return model.coef_[0], float(model.intercept_[0])


def accuracy(coef, intercept, X, y) -> float:
    """The accuracy of ``predict`` (class 1 where the decision function is positive)."""
    return float(np.mean((X @ coef + intercept > 0) == (y == 1)))


def seed_run(X, y, max_rows, q, seed, C_values, totals, epsilons):
    """Every (C, T, method) of one split and noise seed: ``{(C, T, method): record}``."""
    out = {}
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        # diffprivlib's convergence warnings: the fits are meant as diffprivlib runs them
        warnings.simplefilter("ignore")
        X_train, X_test, y_train, y_test = split(X, y, seed, max_rows)
        X_train = clip_to_norm(X_train, q)
        X_test_clipped = clip_to_norm(X_test, q)

        def record(coef, intercept):
            return {"accuracy": accuracy(coef, intercept, X_test_clipped, y_test),
                    "accuracy_unclipped_test": accuracy(coef, intercept, X_test, y_test),
                    "intercept": intercept}

        for C in C_values:
            reference = record(*fit_nonprivate(X_train, y_train, C))
            for T in totals:
                out[C, T, NONPRIVATE] = reference
                fitted = {}  # c = q coincides with c = 1 when q = 1: one fit
                for c in CONSTANTS:
                    value = constant(c, q)
                    if value not in fitted:
                        fitted[value] = record(*fit_constant_column(
                            X_train, y_train, q, value, C, epsilons[C, T, value], seed))
                    out[C, T, new_name(c)] = fitted[value]
                out[C, T, OLD] = record(*fit_old(X_train, y_train, q, C,
                                                 epsilons[C, T, OLD_PRICED_AS], seed))
    return out


def run(tasks, seeds, C_values, totals, data_path, n_jobs):
    """The cells: one per (task, data norm, C, T), each with every method's per-seed values."""
    cells = []
    for name in tasks:
        data = task_data(name, data_path)
        X, y = data.features("easy"), data.y
        d = X.shape[1]
        for label in NORMS:
            q = data_norm(label, d)
            epsilons = {(C, T, constant(c, q)): epsilon_for_charge(T, q, constant(c, q), C)
                        for C in C_values for T in totals for c in (*CONSTANTS, OLD_PRICED_AS)}
            start = time.perf_counter()
            runs = Parallel(n_jobs=n_jobs)(
                delayed(seed_run)(X, y, TASKS[name].max_rows, q, seed, C_values, totals,
                                  epsilons) for seed in range(seeds))
            for C in C_values:
                for T in totals:
                    methods = {}
                    for method in METHODS:
                        rows = [r[C, T, method] for r in runs]
                        entry = {key: [row[key] for row in rows] for key in rows[0]}
                        if method != NONPRIVATE:
                            c = constant(PRICED_AS[method], q)
                            eps = epsilons[C, T, c]
                            norm = math.hypot(q, c)  # the old model's rows too (c = 1)
                            entry = {"c": None if method == OLD else c, "epsilon": eps,
                                     "charge": charge(eps, q, c, C),
                                     "noise_epsilon": noise_epsilon(eps, norm, C),
                                     "no_ridge": eps > branch_point(norm, C),
                                     "dead_zone": in_dead_zone(eps, norm, C), **entry}
                        methods[method] = entry
                    cells.append({
                        "task": name, "n_features": d, "norm": label, "data_norm": q, "C": C,
                        "T": T, "old_no_ridge": methods[OLD]["no_ridge"], "methods": methods})
            print(f"{name} q={label} ({q:.3g}): {time.perf_counter() - start:.1f}s", flush=True)
    return cells


# == the report ================================================================================
def _mean_sd(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def runaways(cell, method=OLD, threshold=RUNAWAY) -> int:
    return int(np.sum(np.abs(cell["methods"][method]["intercept"]) > threshold))


def difference(cell, method, base, metric="accuracy"):
    """Mean and sd over seeds of the paired accuracy difference ``method - base``."""
    a = np.asarray(cell["methods"][method][metric])
    b = np.asarray(cell["methods"][base][metric])
    return _mean_sd(a - b)


def verdict(mean: float, sd: float) -> str:
    """Better / worse when the mean paired difference exceeds one sd of it, else within."""
    if mean > sd:
        return "better"
    if mean < -sd:
        return "worse"
    return "within"


def _counts(cells, method, base, metric="accuracy") -> str:
    verdicts = [verdict(*difference(cell, method, base, metric)) for cell in cells]
    return " / ".join(str(verdicts.count(v)) for v in ("better", "within", "worse"))


def _mean_ranks(cells, metric="accuracy") -> dict:
    """Each ``new(c)``'s rank among the constants by mean accuracy, averaged over the cells."""
    ranks = {c: [] for c in CONSTANTS}
    for cell in cells:
        means = [-np.mean(cell["methods"][new_name(c)][metric]) for c in CONSTANTS]
        for c, rank in zip(CONSTANTS, _ranks(means), strict=True):
            ranks[c].append(rank)
    return {c: float(np.mean(r)) for c, r in ranks.items()}


def _ranks(values):
    """Ranks from 1, ties sharing their mean rank (q = 1 makes new(c=q) equal new(c=1))."""
    values = np.asarray(values)
    return [1 + np.sum(values < v) + (np.sum(values == v) - 1) / 2 for v in values]


def summary_table(cells, metric="accuracy") -> str:
    ranks = _mean_ranks(cells, metric)
    one = new_name(1.0)
    rows = []
    for c in CONSTANTS:
        method = new_name(c)
        to_old = [difference(cell, method, OLD, metric)[0] for cell in cells]
        to_one = [difference(cell, method, one, metric)[0] for cell in cells]
        rows.append([method, f"{np.mean(to_old):+.4f}", f"{np.median(to_old):+.4f}",
                     f"{min(to_old):+.3f} / {max(to_old):+.3f}",
                     _counts(cells, method, OLD, metric), f"{np.mean(to_one):+.4f}",
                     _counts(cells, method, one, metric), f"{ranks[c]:.2f}"])
    return markdown_table(
        ["method", "mean Δ vs old", "median Δ vs old", "worst / best cell Δ vs old",
         "better / within / worse vs old",
         "mean Δ vs new(c=1)", "better / within / worse vs new(c=1)", "mean rank among c"],
        rows)


def by_table(cells, key, values, base, title) -> str:
    """Mean accuracy difference to ``base`` per ``new(c)``, cells grouped by ``key``."""
    rows = []
    for c in CONSTANTS:
        row = [new_name(c)]
        for value in values:
            group = [cell for cell in cells if cell[key] == value]
            diffs = [difference(cell, new_name(c), base)[0] for cell in group]
            row.append(f"{np.mean(diffs):+.4f} ({_counts(group, new_name(c), base)})")
        rows.append(row)
    return markdown_table([f"Δ vs {base}, by {title}", *(f"{title} = {v}" for v in values)],
                          rows)


def runaway_table(cells) -> str:
    """Per method: seeds whose intercept is large and its largest magnitude; the last column
    counts the runaways in the cells where the old model's intercept has no ridge."""
    no_ridge = [cell for cell in cells if cell["old_no_ridge"]]
    rows = []
    for method in METHODS:
        n = sum(len(cell["methods"][method]["intercept"]) for cell in cells)
        largest = max(np.max(np.abs(cell["methods"][method]["intercept"])) for cell in cells)
        rows.append([method, f"{sum(runaways(cell, method) for cell in cells)}/{n}",
                     f"{sum(runaways(cell, method, 1e2) for cell in cells)}/{n}",
                     f"{largest:.0f}", sum(runaways(cell, method) for cell in no_ridge)])
    # escaped: a bare "|" would split the Markdown cell
    return markdown_table(["method", rf"seeds with \|b\| > {RUNAWAY:g}",
                           r"seeds with \|b\| > 100", r"largest \|b\|",
                           rf"seeds with \|b\| > {RUNAWAY:g} where old has no ridge "
                           f"({len(no_ridge)} cells)"], rows)


def dead_zone_table(cells) -> str:
    """Each ``new(c)``'s difference to the old model in the cells where its own epsilon falls
    in diffprivlib's dead zone (:func:`in_dead_zone`), in the others, and in those where
    neither its epsilon nor the old model's does."""
    def group_diff(group, method):
        diffs = [difference(cell, method, OLD)[0] for cell in group]
        return (f"{len(group)}: {np.mean(diffs):+.4f} ({_counts(group, method, OLD)})"
                if group else "0")

    rows = []
    for c in CONSTANTS:
        method = new_name(c)
        dead = [cell["methods"][method]["dead_zone"] for cell in cells]
        old_dead = [cell["methods"][OLD]["dead_zone"] for cell in cells]
        rows.append([method,
                     group_diff([cell for cell, x in zip(cells, dead, strict=True) if x], method),
                     group_diff([cell for cell, x in zip(cells, dead, strict=True) if not x],
                                method),
                     group_diff([cell for cell, x, o in zip(cells, dead, old_dead, strict=True)
                                 if not (x or o)], method)])
    return markdown_table(["method (cells: mean Δ vs old (better / within / worse))",
                           "its ε in the dead zone", "its ε outside",
                           "neither its ε nor old's in the dead zone"], rows)


def task_table(cells) -> str:
    rows = []
    for cell in cells:
        means = {m: _mean_sd(cell["methods"][m]["accuracy"]) for m in METHODS}
        best = max(means[m][0] for m in PRIVATE)
        row = [f"{cell['T']:g}", f"{cell['C']:g}",
               f"{cell['methods'][OLD]['epsilon']:.3f}" + (" †" if cell["old_no_ridge"] else "")]
        for method in METHODS:
            mean, sd = means[method]
            text = f"{mean:.3f} ± {sd:.3f}"
            if method in PRIVATE and mean == best:
                text = f"**{text}**"
            if method == OLD and runaways(cell):
                text += f" ({runaways(cell)} runaway)"
            row.append(text)
        rows.append(row)
    return markdown_table(["T", "C", "ε old = ε new(1)", *METHODS], rows)


def epsilon_table(cells) -> str:
    """Each method's diffprivlib epsilon and noise epsilon at data norm 1 (the same for every
    task); ‡ marks the dead zone."""
    rows = []
    first = cells[0]["task"]
    for cell in cells:
        if cell["task"] != first or cell["norm"] != "1":
            continue
        row = [f"{cell['T']:g}", f"{cell['C']:g}"]
        for c in CONSTANTS[:-1]:
            entry = cell["methods"][new_name(c)]
            row.append(f"{entry['epsilon']:.3f} ({entry['noise_epsilon']:.3f}"
                       + (", no ridge" if entry["no_ridge"] else "")
                       + (") ‡" if entry["dead_zone"] else ")"))
        rows.append(row)
    return markdown_table(["T", "C", *(f"ε (ε') {new_name(c)}" for c in CONSTANTS[:-1])], rows)


def report(cells, meta) -> str:
    tasks = list(dict.fromkeys(cell["task"] for cell in cells))
    C_values = sorted({cell["C"] for cell in cells})
    totals = sorted({cell["T"] for cell in cells})
    lines = [
        "# The intercept: diffprivlib's model against the constant-column reformulation", "",
        "Test accuracy, mean ± sd over "
        f"{meta['seeds']} seeds (a fresh stratified 75/25 split and fresh noise each), easy "
        "variant (features in [0, 1]). `old`: diffprivlib `LogisticRegression(fit_intercept="
        "True, data_norm=q, C)` at the epsilon of `new(c=1)`. `new(c)`: `fit_intercept=False` "
        "on `[clip_to_norm(X, q), c]` at `data_norm = hypot(q, c)`, its diffprivlib epsilon set "
        "by bisection so that `logistic_regression_epsilon(ε, hypot(q, c), C, False, 2)` = T. "
        "`non-private`: scikit-learn on the same clipped rows, same C. All predict the test "
        "rows clipped to q, as their training rows (diffprivlib's `predict` takes them "
        "unclipped: last table of the summary). "
        f"Command: `{meta['command']}`; {meta['runtime_s']:.0f} s on {meta['n_jobs']} "
        "worker(s).", "",
        f"Cells: {len(cells)} = {len(tasks)} tasks × {len(NORMS)} data norms (1, sqrt(d)) × "
        f"{len(C_values)} C × {len(totals)} T. Paired differences per seed (same split, same "
        "noise seed); a cell is *better* / *worse* when the mean difference exceeds one sd of "
        "the differences, else *within*. At q = 1, `new(c=q)` is `new(c=1)`.", "",
        "## Summary over all cells", "",
        summary_table(cells), "",
        by_table(cells, "C", C_values, OLD, "C"), "",
        by_table(cells, "T", totals, OLD, "T"), "",
        by_table(cells, "norm", list(NORMS), OLD, "norm"), "",
        by_table(cells, "C", C_values, new_name(1.0), "C"), "",
        "The same summary on unclipped test rows (as diffprivlib's `predict`; at q = sqrt(d) "
        "nothing is clipped, at q = 1 the rows' scale at test time differs from training, "
        "which favours an intercept shrunk to 0):", "",
        summary_table(cells, "accuracy_unclipped_test"), "",
        "## diffprivlib's dead zone", "",
        "diffprivlib's mechanism adds no ridge above `ε_b = 2 ln(1 + hypot(q, c) C / 4)` and "
        "then sets its noise by `ε' = ε - ε_b`; below, by `ε' = ε / 2` with a ridge. Just "
        "above the branch point (`ε_b < ε < 1.5 ε_b`) the noise is larger than at the branch "
        "point, with no ridge, at no lower charge: the accuracy there drops (e.g. new(c=0.5) "
        "at q = 1, C = 1, T = 0.5 has `ε' = 0.007`). Where each c's epsilon lands decides much "
        "of the per-cell ranking; the old model and new(c=1) always share their branch.", "",
        dead_zone_table(cells), "",
        "## The intercept's magnitude (the runaway)", "",
        "Seeds with a large `|intercept_|` (for new(c): `c` times the constant's weight), over "
        "all cells; last column: the old model in the cells where diffprivlib adds no ridge "
        "(its intercept unregularised).", "",
        runaway_table(cells), "",
        "## The epsilons at data norm 1", "",
        "diffprivlib `epsilon` of each `new(c)` at charge T (the old model gets that of "
        "`new(c=1)`) and, in brackets, the noise epsilon ε' of diffprivlib's mechanism; ‡: "
        "the dead zone.", "",
        epsilon_table(cells), "",
        "## Per task", "",
        "Bold: the best private mean. †: the old model in diffprivlib's no-ridge branch."]
    for task in tasks:
        for label in NORMS:
            group = [c for c in cells if c["task"] == task and c["norm"] == label]
            if not group:
                continue
            value = "" if label == "1" else f" = {group[0]['data_norm']:.3g}"
            lines += ["", f"### {task} (d = {group[0]['n_features']}), data_norm = {label}{value}",
                      "", task_table(group)]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="+", default=list(TASK_NAMES), choices=list(TASKS))
    p.add_argument("--seeds", type=int, default=SEEDS)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: Adult, 2 seeds, C in {0.01, 1}, T in {1, 4}")
    args = p.parse_args(argv)
    if args.quick:
        tasks, seeds, C_values, totals = (QUICK["tasks"], QUICK["seeds"], QUICK["C"],
                                          QUICK["totals"])
    else:
        tasks, seeds, C_values, totals = args.tasks, args.seeds, C_VALUES, TOTALS
    command = "python -m benchmarks.bench_intercept" + (" --quick" if args.quick else "")
    start = time.perf_counter()
    cells = run(tasks, seeds, C_values, totals, args.data, args.n_jobs)
    meta = {"command": command, "seeds": seeds, "tasks": tasks, "n_jobs": args.n_jobs,
            "runtime_s": time.perf_counter() - start, "runaway_threshold": RUNAWAY}
    name = "intercept_quick" if args.quick else "intercept"
    print(write_result(name, report(cells, meta), {"meta": meta, "cells": cells}))


if __name__ == "__main__":
    main()
