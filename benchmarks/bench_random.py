"""Benchmark of DPRandomSearchCV: utility, runtime, privacy vs number of runs.

Run ``python -m benchmarks.bench_random [--data PATH] [--quick] [--parts ...]`` (or everything
through ``python -m benchmarks.run``). Writes ``results/random_*.md`` / ``.json`` / ``.png``;
``docs/random_search.md`` shows them.

* **utility** -- test accuracy at equal total epsilon (tuning + returned model) on Adult (or
  synthetic data) for diffprivlib's ``LogisticRegression`` over ``C`` (log-uniform) and
  ``data_norm`` (the clipping norm; rows have norm at most ``sqrt(15)``):
  ``DPRandomSearchCV`` (logarithmic and geometric laws, budget mode ``epsilon=total``; the
  logarithmic one also with ``refit=False``) against the naive composition baseline
  (``distribution="fixed"``, same ``n_iter``, budget mode), ``DPGridSearchCV`` on a grid over
  the same ranges (half of the total for the tuning, half for the model; library defaults
  otherwise), the untuned default model with the whole budget, a data-independent random draw
  from the space with the whole budget, and the non-private ``RandomizedSearchCV`` ceiling
  (tuning NOT private; reference only).
* **runtime** -- ``DPRandomSearchCV`` / ``RandomizedSearchCV(cv=5)`` with the same (expected)
  number of candidates, ``n_jobs`` 1 and 2, repetitions interleaved (the machine is shared:
  ratios, not seconds). skdptune fits under single-threaded BLAS (``single_threaded_blas``), so
  ``RandomizedSearchCV`` is timed both as is and under ``threadpool_limits(1, "blas")``.
* **privacy** -- epsilon at ``delta = 1e-6`` against ``E[K]`` for every law, the shape of
  Papernot & Steinke's Figure 4 (and the Renyi curves of their Figure 3). Their setting (a
  0.1-zCDP base) is reproduced with dp-accounting directly -- skdptune's accounting is for
  pure-DP base runs, which is what diffprivlib models are -- and skdptune's own accounting
  functions give the curves for pure ``eps_Q`` = 0.1 and 1.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from joblib import Parallel, delayed
from scipy.stats import loguniform
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from sklearn.model_selection import ParameterSampler, RandomizedSearchCV
from threadpoolctl import threadpool_limits

from benchmarks._common import (
    CLASSES,
    DEFAULT_DATA,
    PricedModel,
    load_split,
    markdown_table,
    mean_std,
    pyplot,
    save_figure,
    timed_fit,
    write_result,
)
from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune.accounting import repetition_cost

TOTAL_EPSILONS = (0.5, 1.0, 2.0, 4.0)
N_ITER = 10  # E[K] of the random searches, the number of runs of "fixed", RandomizedSearchCV's
DATA_NORMS = (0.5, 1.0, 2.0)  # plus the public bound sqrt(n_features)
TUNING_SHARE = 0.5  # DPGridSearchCV: share of the total given to the tuning
TARGET_DELTA = 1e-6  # Papernot & Steinke's Figure 4
PAPER_RHO = 0.1  # their base algorithm: 0.1-zCDP


def public_norm(n_features: int) -> float:
    """The public bound on a row's L2 norm (features in [0, 1])."""
    return math.sqrt(n_features)


def search_space(n_features: int) -> dict:
    return {"C": loguniform(1e-2, 1e2), "data_norm": [*DATA_NORMS, public_norm(n_features)]}


def search_grid(n_features: int) -> dict:
    """The grid of DPGridSearchCV over the same ranges."""
    return {"C": [1e-2, 1.0, 1e2], "data_norm": [*DATA_NORMS, public_norm(n_features)]}


#: a validation part, as when the saved results were measured (the default where the runs are
#: batched is now none: docs/random_search.md section 2.1; benchmarks/bench_suite.py measures it)
VALIDATION_SIZE = 0.2


def model(epsilon: float, n_features: int, **params) -> LogisticRegression:
    """diffprivlib's default logistic regression, with the public norm bound."""
    return LogisticRegression(epsilon=epsilon, data_norm=public_norm(n_features), **params)


# == utility ===================================================================================
def random_search(total, n_features, seed, distribution, refit=True):
    return DPRandomSearchCV(model(1.0, n_features), search_space(n_features), n_iter=N_ITER,
                            distribution=distribution, epsilon=total, refit=refit,
                            validation_size=VALIDATION_SIZE, classes=CLASSES,
                            random_state=seed, accountant=BudgetAccountant())


def utility_cell(data, total: float, seed: int) -> list[dict]:
    """Accuracy of every method at one (total epsilon, seed); one worker process."""
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # scipy, via diffprivlib
    X_train, X_test, y_train, y_test = data
    d = X_train.shape[1]
    out = []

    def record(method, estimator, **extra):
        out.append({"method": method, "total_epsilon": total, "seed": seed,
                    "accuracy": float(estimator.score(X_test, y_test)), **extra})

    with threadpool_limits(limits=1, user_api="blas"):
        for label, distribution, refit in (
            ("DPRandomSearchCV logarithmic", "logarithmic", True),
            ("DPRandomSearchCV logarithmic, refit=False", "logarithmic", False),
            ("DPRandomSearchCV geometric", "geometric", True),
            ("naive composition (fixed K, same n_iter)", "fixed", True),
        ):
            search = random_search(total, d, seed, distribution, refit).fit(X_train, y_train)
            assert search.privacy_spent_.epsilon <= total
            record(label, search, data_norm=float(search.best_params_["data_norm"]),
                   epsilon_run=float(search.epsilon_run_))

        tuning = TUNING_SHARE * total
        grid = DPGridSearchCV(model(total - tuning, d), search_grid(d), epsilon=total,
                              tuning_share=TUNING_SHARE,
                              classes=CLASSES, random_state=seed,
                              accountant=BudgetAccountant()).fit(X_train, y_train)
        assert grid.privacy_spent_.epsilon <= total * (1 + 1e-12)
        record("DPGridSearchCV (half tuning, half model)", grid,
               data_norm=float(grid.best_params_["data_norm"]))

        # the references are priced as the searches price their models (_common.pricing)
        default = PricedModel(model(total, d, random_state=seed, accountant=BudgetAccountant()),
                              total)
        record("untuned default, whole budget", default.fit(X_train, y_train),
               data_norm=public_norm(d))

        draw = next(iter(ParameterSampler(search_space(d), n_iter=1, random_state=seed)))
        random_model = PricedModel(model(total, d, random_state=seed, accountant=BudgetAccountant())
                                   .set_params(**draw), total)
        record("untuned random draw from the space, whole budget",
               random_model.fit(X_train, y_train), data_norm=float(draw["data_norm"]))

        space = {f"model__{name}": values for name, values in search_space(d).items()}
        ceiling = RandomizedSearchCV(PricedModel(model(total, d), total), space, n_iter=N_ITER,
                                     cv=5, random_state=seed).fit(X_train, y_train)
        record("RandomizedSearchCV ceiling (NOT private)", ceiling,
               data_norm=float(ceiling.best_params_["model__data_norm"]))
    return out


def run_utility(data, name: str, opts) -> None:
    tasks = [(total, seed) for seed in opts.seeds for total in opts.epsilons]
    start = time.perf_counter()
    cells = Parallel(n_jobs=opts.n_jobs, verbose=5)(
        delayed(utility_cell)(data, total, seed) for total, seed in tasks)
    records = [r for cell in cells for r in cell]
    X_train, X_test, y_train, y_test = data
    with threadpool_limits(limits=1, user_api="blas"):
        plain = SklearnLogisticRegression(max_iter=1000).fit(X_train, y_train)
    report = {
        "data": name, "n_train": len(X_train), "n_test": len(X_test), "n_iter": N_ITER,
        "seeds": list(opts.seeds), "tuning_share_grid": TUNING_SHARE,
        "space": {"C": "loguniform(1e-2, 1e2)",
                  "data_norm": [*DATA_NORMS, public_norm(X_train.shape[1])]},
        "grid": search_grid(X_train.shape[1]),
        "nonprivate_logistic_regression": float(plain.score(X_test, y_test)),
        "majority_class": float(max(np.mean(y_test), 1 - np.mean(y_test))),
        "seconds": time.perf_counter() - start, "records": records,
    }
    write_result(f"random_utility{opts.suffix}", utility_markdown(report, opts.suffix), report)
    plot_utility(report, f"random_utility{opts.suffix}")


def utility_markdown(report: dict, suffix: str) -> str:
    records = report["records"]
    epsilons = sorted({r["total_epsilon"] for r in records})
    means, medians = [], []
    for method in dict.fromkeys(r["method"] for r in records):
        mine = [r for r in records if r["method"] == method]
        cells = [[r for r in mine if r["total_epsilon"] == e] for e in epsilons]
        means.append([method, *[mean_std([r["accuracy"] for r in cell]) for cell in cells]])
        medians.append([method, *[f"{np.median([r['accuracy'] for r in cell]):.3f} "
                                  f"({sum(r['data_norm'] >= 2.0 for r in cell)}/{len(cell)})"
                                  for cell in cells]])
    header = ["method", *[f"ε={e:g}" for e in epsilons]]
    return "\n".join([
        "# DPRandomSearchCV: utility at equal total epsilon\n",
        f"Data: {report['data']} ({report['n_train']} training rows, {report['n_test']} test "
        f"rows). Test accuracy over {len(report['seeds'])} seeds (search / noise seed; fixed "
        "train/test split). Every private method spends exactly the total epsilon (tuning + "
        "returned model, pure DP, delta = 0). diffprivlib `LogisticRegression`, space "
        f"`C ~ {report['space']['C']}`, `data_norm in {report['space']['data_norm']}`; "
        f"`n_iter = {report['n_iter']}` (E[K] for the random searches, exactly K for the "
        "naive baseline and for the non-private ceiling); budget mode `epsilon=total`. "
        f"DPGridSearchCV: grid `{report['grid']}`, "
        f"{report['tuning_share_grid']:.0%} of the total for the tuning, the rest for the "
        "model, library defaults otherwise. The untuned models and the non-private ceiling "
        "are priced as the searches price theirs: each fit's epsilon set so that it costs "
        "the total under skdptune's accounting.\n",
        "## Mean ± standard deviation\n",
        markdown_table(header, means),
        "\n## Median (returned models with `data_norm >= 2`, the good region)\n",
        "A clipping norm below 2 is a disaster on this data (accuracy near or below the "
        "majority class), so accuracies are bimodal: the median and the count of good picks "
        "say more than the mean.\n",
        markdown_table(header, medians),
        f"\nReferences: non-private scikit-learn LogisticRegression "
        f"{report['nonprivate_logistic_regression']:.3f}; majority class "
        f"{report['majority_class']:.3f}.\n",
        f"![utility](random_utility{suffix}.png)",
    ])


def plot_utility(report: dict, name: str) -> None:
    """Left: mean ± std; right: median with the interquartile range (bimodal accuracies)."""
    plt = pyplot()
    records = report["records"]
    epsilons = sorted({r["total_epsilon"] for r in records})
    methods = list(dict.fromkeys(r["method"] for r in records))
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for i, method in enumerate(methods):
        values = [np.array([r["accuracy"] for r in records
                            if r["method"] == method and r["total_epsilon"] == e])
                  for e in epsilons]
        xs = np.array(epsilons) * (1 + 0.025 * (i - len(methods) / 2))  # keep bars apart
        style = {"marker": "o", "capsize": 3, "label": method,
                 "linestyle": "--" if "NOT private" in method else "-"}
        axes[0].errorbar(xs, [v.mean() for v in values], yerr=[v.std() for v in values],
                         **style)
        median = np.array([np.median(v) for v in values])
        low = median - np.array([np.quantile(v, 0.25) for v in values])
        high = np.array([np.quantile(v, 0.75) for v in values]) - median
        axes[1].errorbar(xs, median, yerr=[low, high], **style)
    for ax, title in zip(axes, ("mean ± std", "median, bars: 25-75 % quantiles"), strict=True):
        ax.axhline(report["majority_class"], color="grey", linewidth=0.8, linestyle=":")
        ax.set_xscale("log", base=2)
        ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
        ax.set_xlabel("total ε (tuning + returned model)")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("test accuracy")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"DPRandomSearchCV vs baselines ({report['data']}, "
                 f"{len(report['seeds'])} seeds)")
    save_figure(fig, name)


# == runtime ===================================================================================
def run_runtime(data, name: str, opts) -> None:
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    X, y = data[0], data[2]
    d = X.shape[1]

    def dp(distribution, n_jobs, seed=0):
        # the estimator as configured (epsilon=None, no budget mode): every fit uses the same
        # epsilon as RandomizedSearchCV's, since diffprivlib's fit time depends on it
        return DPRandomSearchCV(model(1.0, d), search_space(d), n_iter=N_ITER,
                                distribution=distribution, epsilon=None, n_jobs=n_jobs,
                                validation_size=VALIDATION_SIZE, classes=CLASSES,
                                random_state=seed, accountant=BudgetAccountant())

    def plain(n_jobs):
        return RandomizedSearchCV(model(1.0, d), search_space(d), n_iter=N_ITER, cv=5,
                                  n_jobs=n_jobs, random_state=0)

    report = {"data": name, "n_train": len(X), "n_iter": N_ITER, "reps": opts.reps,
              "by_n_jobs": {}}
    for n_jobs in (1, 2):
        timed_fit(dp("fixed", n_jobs), X, y)  # warm-up: start the joblib workers untimed
        times = {"dp_fixed": [], "rscv": [], "rscv_1blas": []}
        for _ in range(opts.reps):  # interleaved: the three searches see the same load
            times["dp_fixed"].append(timed_fit(dp("fixed", n_jobs), X, y))
            times["rscv"].append(timed_fit(plain(n_jobs), X, y))
            times["rscv_1blas"].append(timed_fit(plain(n_jobs), X, y, single_blas=True))
        dp_times = np.array(times["dp_fixed"])
        report["by_n_jobs"][n_jobs] = {
            "seconds": times,
            "ratio": (dp_times / np.array(times["rscv"])).tolist(),
            "ratio_1blas": (dp_times / np.array(times["rscv_1blas"])).tolist(),
        }
        print(f"[random:runtime] n_jobs={n_jobs}: {times}", flush=True)
    # the logarithmic law runs K ~ D_{0, gamma} times (E[K] = n_iter, heavy tail): mean over
    # seeds, against the fixed search timed in the same loop
    log_times, fixed_times = [], []
    for seed in opts.log_seeds:
        log_times.append(timed_fit(dp("logarithmic", 1, seed), X, y))
        fixed_times.append(timed_fit(dp("fixed", 1, seed), X, y))
    report["logarithmic_vs_fixed"] = {"seeds": list(opts.log_seeds), "logarithmic": log_times,
                                      "fixed": fixed_times}
    write_result(f"random_runtime{opts.suffix}", runtime_markdown(report), report)


def runtime_markdown(report: dict) -> str:
    rows = []
    for n_jobs, entry in report["by_n_jobs"].items():
        s = entry["seconds"]
        rows.append([n_jobs, f"{np.median(s['dp_fixed']):.1f}", f"{np.median(s['rscv']):.1f}",
                     f"{np.median(s['rscv_1blas']):.1f}",
                     _ratio(entry["ratio"]), _ratio(entry["ratio_1blas"])])
    log = report["logarithmic_vs_fixed"]
    return "\n".join([
        "# DPRandomSearchCV: runtime against RandomizedSearchCV\n",
        f"Data: {report['data']} ({report['n_train']} training rows); diffprivlib "
        f"`LogisticRegression(epsilon=1)`, the space of the utility benchmark, "
        f"{report['n_iter']} candidates; same model epsilon in both searches (no budget "
        "mode). DPRandomSearchCV with `distribution=\"fixed\"` (exactly "
        f"{report['n_iter']} runs: one fit on 80 % of the rows and one noisy validation score "
        "each, then the refit on all rows) vs `RandomizedSearchCV(cv=5)` (5 fits per "
        "candidate on 80 % of the rows, then the refit). Median seconds over "
        f"{report['reps']} interleaved repetitions, and the ratio DP / scikit-learn "
        "(median [min, max] of the paired ratios). The machine is shared: read the ratios, "
        "not the seconds. skdptune runs its fits under single-threaded BLAS; "
        "\"1-thread BLAS\" times RandomizedSearchCV under "
        "`threadpool_limits(1, \"blas\")` too.\n",
        markdown_table(["n_jobs", "DPRandomSearchCV (s)", "RandomizedSearchCV (s)",
                        "RandomizedSearchCV, 1-thread BLAS (s)", "ratio",
                        "ratio vs 1-thread BLAS"], rows),
        f"\nThe logarithmic law (E[K] = {report['n_iter']}, heavy tail) over seeds "
        f"{log['seeds']}: mean {np.mean(log['logarithmic']):.1f} s "
        f"(min {np.min(log['logarithmic']):.1f}, max {np.max(log['logarithmic']):.1f}) vs "
        f"{np.mean(log['fixed']):.1f} s for exactly {report['n_iter']} runs (n_jobs=1). Its "
        "time follows the realised K, which is not released: runtime is a side channel "
        "outside the guarantee.",
    ])


def _ratio(values) -> str:
    return f"{np.median(values):.2f} [{np.min(values):.2f}, {np.max(values):.2f}]"


# == privacy vs E[K] (Papernot & Steinke, Figures 3 and 4) =====================================
#: laws of the paper's figures: label -> dp-accounting shape (inf: Poisson)
PAPER_LAWS = {"logarithmic (η=0)": 0.0, "geometric (η=1)": 1.0, "η=5": 5.0, "Poisson": math.inf}
#: laws of skdptune: label -> (distribution, eta)
LIBRARY_LAWS = {
    "logarithmic (η=0)": ("logarithmic", None), "geometric (η=1)": ("geometric", None),
    "negative binomial η=0.5": ("negative_binomial", 0.5),
    "negative binomial η=-0.5": ("negative_binomial", -0.5),
    "Poisson": ("poisson", None), "fixed (composition)": ("fixed", None),
}
TABLE_MEANS = (2, 10, 100, 1000)


def paper_orders() -> np.ndarray:
    return np.concatenate([np.linspace(1.01, 60, 400), np.geomspace(60, 1e4, 100)[1:]])


def paper_rdp(mean: float, shape: float | None, orders) -> np.ndarray:
    """Renyi DP of the repetition of a 0.1-zCDP run (dp-accounting; shape None: K = mean)."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.dp_event import RepeatAndSelectDpEvent, ZCDpEvent
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(orders=list(orders),
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    base = ZCDpEvent(PAPER_RHO)
    if shape is None:
        accountant.compose(base, count=int(round(mean)))
    else:
        accountant.compose(RepeatAndSelectDpEvent(base, mean, shape))
    return accountant.rdp


def paper_epsilon(mean: float, shape: float | None) -> float:
    """epsilon at delta = 1e-6, as in the paper's Figure 4."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = paper_orders()
    return float(compute_epsilon(orders, paper_rdp(mean, shape, orders), TARGET_DELTA)[0])


def library_epsilon(eps_q: float, distribution: str, eta, mean: float) -> float:
    """What DPRandomSearchCV reports for the tuning: min(pure, RDP at delta) (composition)."""
    if distribution == "fixed":
        mean = max(1, int(round(mean)))
    return repetition_cost(eps_q, 0.0, distribution, mean, eta, TARGET_DELTA)[0]


def run_privacy(opts) -> None:
    means = np.unique(np.round(np.geomspace(1, 1e4, opts.n_means), 3))
    naive_means = np.unique(np.round(np.geomspace(1, 1e3, opts.n_means)).astype(int))
    paper = {label: [paper_epsilon(m, shape) for m in means]
             for label, shape in PAPER_LAWS.items()}
    paper["naive repetition (K = E[K])"] = [paper_epsilon(m, None) for m in naive_means]
    orders = np.linspace(1.01, 50, 200)
    figure3 = {"K = 1 (unrepeated)": (PAPER_RHO * orders).tolist(),
               "K = 10 (naive repetition)": paper_rdp(10, None, orders).tolist()}
    figure3.update({f"E[K] = 10, {label}": paper_rdp(10, shape, orders).tolist()
                    for label, shape in PAPER_LAWS.items()})
    library = {}
    for eps_q in opts.base_epsilons:
        library[eps_q] = {}
        for label, (distribution, eta) in LIBRARY_LAWS.items():
            xs = naive_means if distribution == "fixed" else means
            library[eps_q][label] = [library_epsilon(eps_q, distribution, eta, m) for m in xs]
    report = {"delta": TARGET_DELTA, "paper_rho": PAPER_RHO, "means": means.tolist(),
              "naive_means": naive_means.tolist(), "paper": paper, "figure3_orders":
              orders.tolist(), "figure3": figure3,
              "library": {str(k): v for k, v in library.items()},
              "table": privacy_table(opts.base_epsilons)}
    write_result(f"random_privacy{opts.suffix}", privacy_markdown(report, opts.suffix), report)
    plot_privacy(report, f"random_privacy{opts.suffix}")


def privacy_table(base_epsilons) -> list[dict]:
    rows = []
    for label, shape in PAPER_LAWS.items():
        rows.append({"setting": "paper (0.1-zCDP base)", "law": label,
                     **{str(m): paper_epsilon(m, shape) for m in TABLE_MEANS}})
    rows.append({"setting": "paper (0.1-zCDP base)", "law": "naive repetition",
                 **{str(m): paper_epsilon(m, None) for m in TABLE_MEANS}})
    for eps_q in base_epsilons:
        for label, (distribution, eta) in LIBRARY_LAWS.items():
            rows.append({"setting": f"skdptune (pure ε_Q = {eps_q:g})", "law": label,
                         **{str(m): library_epsilon(eps_q, distribution, eta, m)
                            for m in TABLE_MEANS}})
    return rows


def privacy_markdown(report: dict, suffix: str) -> str:
    header = ["setting", "law", *[f"E[K]={m}" for m in TABLE_MEANS]]
    body = [[r["setting"], r["law"], *[f"{r[str(m)]:.3f}" for m in TABLE_MEANS]]
            for r in report["table"]]
    return "\n".join([
        "# Privacy of randomized repetition against the expected number of runs\n",
        f"ε at δ = {report['delta']:g} of the best of K runs (Papernot & Steinke 2022, "
        "Figure 4). *Paper setting*: a 0.1-zCDP base run (their Figures 3-4), computed with "
        "dp-accounting's RDP accountant (`RepeatAndSelectDpEvent(ZCDpEvent(0.1), E[K], η)`, "
        "Poisson: η = ∞; naive: the run composed K = E[K] times). *skdptune*: what "
        "`DPRandomSearchCV` reports for the tuning with a pure ε_Q-DP base run (diffprivlib "
        "models are pure DP): `repetition_cost`, the smaller of the pure bound "
        "(2 + η) ε_Q (Corollary 3) and the RDP bound (Theorem 2; corrected Theorem 6 for "
        "Poisson) at δ; `fixed` is optimal composition (KOV) of K = E[K] runs.\n",
        markdown_table(header, body),
        f"\n![privacy vs E[K]](random_privacy{suffix}.png)",
    ])


def plot_privacy(report: dict, name: str) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2 + len(report["library"]), figsize=(19, 4.6))
    orders = report["figure3_orders"]
    for label, values in report["figure3"].items():
        axes[0].plot(orders, values, label=label)
    axes[0].set_xlabel("Rényi order λ")
    axes[0].set_ylabel("Rényi divergence bound")
    axes[0].set_ylim(0, 12)
    axes[0].set_title("Figure 3 setting: 0.1-zCDP base, E[K] = 10", fontsize=9)
    axes[0].legend(fontsize=6)

    def curves(ax, series, title):
        for label, values in series.items():
            xs = report["naive_means"] if ("naive" in label or "fixed" in label) \
                else report["means"]
            ax.plot(values, xs, label=label)
        ax.set_yscale("log")
        ax.set_xlabel(f"ε at δ = {report['delta']:g}")
        ax.set_ylabel("E[K] (expected number of runs)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6)

    curves(axes[1], report["paper"], "Figure 4 setting: 0.1-zCDP base (dp-accounting)")
    axes[1].set_xlim(0, 10)
    for ax, (eps_q, series) in zip(axes[2:], report["library"].items(), strict=True):
        curves(ax, series, f"skdptune accounting: pure ε_Q = {float(eps_q):g} base")
        ax.set_xlim(0, 12 * float(eps_q))
    fig.suptitle("Privacy of the best of K runs against E[K] (Papernot & Steinke, Figures 3-4)")
    save_figure(fig, name)


# == command line ==============================================================================
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA),
                   help="path to adult.csv (synthetic data when absent)")
    p.add_argument("--quick", action="store_true", help="small smoke run (about a minute)")
    p.add_argument("--parts", nargs="+", default=["privacy", "utility", "runtime"],
                   choices=["privacy", "utility", "runtime"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--n-jobs", type=int, default=2, help="workers for the utility part")
    return p


def options(args) -> argparse.Namespace:
    quick = args.quick
    return argparse.Namespace(
        suffix="_quick" if quick else "", n_train=3000 if quick else None,
        seeds=list(range(2 if quick else args.seeds)),
        epsilons=(1.0,) if quick else TOTAL_EPSILONS, n_jobs=args.n_jobs,
        reps=1 if quick else 3, log_seeds=range(2 if quick else 10),
        n_means=8 if quick else 40, base_epsilons=(0.1, 1.0),
    )


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    opts = options(args)
    X_train, X_test, y_train, y_test, name = load_split(args.data)
    if opts.n_train is not None:
        X_train, y_train = X_train[:opts.n_train], y_train[:opts.n_train]
    data = (X_train, X_test, y_train, y_test)
    if "privacy" in args.parts:
        run_privacy(opts)
    if "utility" in args.parts:
        run_utility(data, name, opts)
    if "runtime" in args.parts:
        run_runtime(data, name, opts)


if __name__ == "__main__":
    main()
