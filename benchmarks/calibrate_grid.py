"""Calibrate the defaults of DPGridSearchCV by measurement (docs/calibration.md).

Run ``python -m benchmarks.calibrate_grid [--data PATH] [--quick] [--experiment NAME ...]``.

What is measured: the test accuracy of the model that DPGridSearchCV returns, at a total
budget (tuning epsilon + model epsilon), for each setting of the evaluator
(``min_partition_size``, inner ``cv``, ``inner_epsilon``), of the SVT (``granularity``,
``utility_floor``) and of the split of the budget between tuning and model.

How. A DPGridSearchCV fit is three stages: (candidate x partition) utilities
(``PartitionEvaluator``), a private selector over their means, and a refit of the selected
candidate on all rows. The functions below run each stage with the library's own classes and
with the seed streams that ``DPGridSearchCV(random_state=seed)`` uses, so that one utility
matrix per evaluator setting serves every selector, budget and tuning share, and every
candidate's refit is computed once per (seed, model epsilon). Every model is priced as the
search prices it in budget mode (``_common.pricing``: its epsilons set so that a fit costs the
model's share under skdptune's accounting). ``bench_grid`` checks that this decomposition
reproduces ``DPGridSearchCV`` exactly. A setting's score is the refit's test
accuracy averaged over ``--draws`` independent selection draws (the expectation over the
selector's noise), then mean +- std over seeds (seeds vary partitions, inner splits, inner
fit noise and refit noise; the train/test split is fixed).

The utilities are exact, private values of the training rows: they stay in memory (and in the
optional ``--cache`` folder, outside the repository) and are never written to the results.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from diffprivlib.models import DecisionTreeClassifier, GaussianNB, LogisticRegression
from sklearn.model_selection import ParameterGrid

from benchmarks._common import (
    DEFAULT_DATA,
    load_split,
    markdown_table,
    mean_std,
    padding,
    pricing,
    write_result,
)
from skdptune._seeding import SeedPlan
from skdptune.evaluation._fit import fit_on_rows, prepare_clone
from skdptune.evaluation._partitions import PartitionEvaluator, auto_n_partitions
from skdptune.evaluation._scores import check_bounded_scorer
from skdptune.selection import DoublingSVT, PermuteAndFlipSelector

# diffprivlib warns about its own defaults (e.g. max_iter); the searches turn real privacy
# leaks into errors, so the rest is noise in benchmark output
warnings.filterwarnings("ignore", module="diffprivlib")
warnings.filterwarnings("ignore", category=UserWarning)

INF = math.inf
TOTAL_EPSILONS = (0.5, 1.0, 2.0, 4.0)
#: environment variable naming a folder where utility matrices are kept between runs
CACHE_ENV = "SKDPTUNE_BENCH_CACHE"


def default_cache() -> Path | None:
    """The matrix cache folder from ``$SKDPTUNE_BENCH_CACHE`` (no cache when unset)."""
    folder = os.environ.get(CACHE_ENV)
    return Path(folder) if folder else None


# -- search spaces -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """A diffprivlib model family and its search space; ``fixed`` is the untuned default."""

    name: str
    model: type
    fixed: dict
    grid: object

    def estimator(self, epsilon: float, **params):
        """The base estimator with model budget ``epsilon``."""
        return self.model(epsilon=epsilon, **{**self.fixed, **params})

    def candidates(self) -> list[dict]:
        return list(ParameterGrid(self.grid))


def make_cases(n_features: int) -> dict[str, Case]:
    """Search spaces where tuning matters on Adult (features scaled to [0, 1] publicly)."""
    norm = math.sqrt(n_features)  # the public bound on a row's L2 norm
    return {
        "logistic": Case(
            "logistic", LogisticRegression, {"data_norm": norm},
            {"data_norm": [0.5, 1.0, 2.0, norm], "C": [0.01, 1.0]}),
        "naive_bayes": Case(
            "naive_bayes", GaussianNB, {"bounds": (0.0, 1.0)},
            {"bounds": [(0.0, 0.25), (0.0, 0.5), (0.0, 1.0)], "var_smoothing": [1e-9, 0.3]}),
        # diffprivlib's RandomForestClassifier is refused (docs/privacy.md): its single tree
        "tree": Case(
            "tree", DecisionTreeClassifier, {"bounds": (0.0, 1.0), "classes": [0, 1]},
            {"max_depth": [2, 4, 6, 8]}),
    }


# -- evaluator settings and the utility matrix -------------------------------------------------
@dataclass(frozen=True)
class Evaluation:
    """The evaluator settings of DPGridSearchCV (defaults as in the library)."""

    min_partition_size: int = 100
    cv: float | int = 0.25
    inner_epsilon: str | float = "scaled"

    def label(self) -> str:
        inner = "inf" if self.inner_epsilon == INF else self.inner_epsilon
        return f"size={self.min_partition_size}, cv={self.cv}, inner={inner}"

    def depends_on_model_epsilon(self) -> bool:
        return self.inner_epsilon in ("same", "scaled")


@dataclass
class Data:
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    name: str


def load_data(path, n_train: int | None = None) -> Data:
    """The fixed split of the benchmarks (optionally the first ``n_train`` training rows)."""
    X_train, X_test, y_train, y_test, name = load_split(path)
    if n_train is not None:
        X_train, y_train = X_train[:n_train], y_train[:n_train]
    return Data(X_train, X_test, y_train, y_test, name)


class UtilityStore:
    """(candidate x partition) utility matrices, computed once per setting (memory + disk)."""

    def __init__(self, data: Data, n_jobs: int = 1, cache: Path | None = None):
        self.data = data
        self.n_jobs = n_jobs
        self.cache = cache
        self.fit_seconds: dict[tuple, float] = {}
        self._memory: dict[tuple, np.ndarray] = {}

    def _key(self, case, setting, model_epsilon, seed) -> tuple:
        eps = model_epsilon if setting.depends_on_model_epsilon() else None
        # "priced": the partition fits priced as the search prices them (matrices cached
        # before the pricing are not reused)
        return (case.name, repr(case.grid), len(self.data.X_train), setting, eps, seed,
                "priced")

    def _path(self, key) -> Path | None:
        if self.cache is None:
            return None
        digest = hashlib.sha1(repr(key).encode()).hexdigest()[:20]
        return self.cache / f"{self.data.name}-{digest}.npz"

    def get(self, case: Case, setting: Evaluation, model_epsilon: float, seed: int):
        """Exact utilities ``(n_candidates, k)`` -- private, kept out of the results."""
        key = self._key(case, setting, model_epsilon, seed)
        if key not in self._memory:
            self._memory[key] = self._load_or_compute(key, case, setting, model_epsilon, seed)
        return self._memory[key]

    def _load_or_compute(self, key, case, setting, model_epsilon, seed):
        path = self._path(key)
        if path is not None and path.exists():
            stored = np.load(path)
            self.fit_seconds[key] = float(stored["seconds"])
            return stored["utilities"]
        start = time.perf_counter()
        utilities = partition_utilities(case, self.data, setting, model_epsilon, seed,
                                        self.n_jobs)
        self.fit_seconds[key] = time.perf_counter() - start
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, utilities=utilities, seconds=self.fit_seconds[key])
        return utilities

    def seconds(self, case, setting, model_epsilon, seed) -> float:
        return self.fit_seconds[self._key(case, setting, model_epsilon, seed)]


def partition_utilities(case: Case, data: Data, setting: Evaluation, model_epsilon: float,
                        seed: int, n_jobs: int = 1) -> np.ndarray:
    """Exact per-partition utilities, as ``DPGridSearchCV(random_state=seed)`` computes them
    in budget mode (every candidate priced at ``model_epsilon``)."""
    estimator = case.estimator(model_epsilon)
    k = auto_n_partitions(len(data.X_train), setting.min_partition_size)
    evaluator = PartitionEvaluator(
        estimator, check_bounded_scorer(None, None, estimator), n_partitions=k,
        cv=setting.cv, inner_epsilon=setting.inner_epsilon, n_jobs=n_jobs,
        pre_dispatch="2*n_jobs", error_score=0.0, seeds=SeedPlan(seed),
        padding=padding(data.X_train, data.y_train), epsilons=pricing(model_epsilon))
    return evaluator.evaluate_partitions(data.X_train, data.y_train, case.candidates(), {})


def refit_accuracies(case: Case, data: Data, model_epsilon: float, seed: int) -> np.ndarray:
    """Test accuracy of every candidate refitted on all rows as DPGridSearchCV refits it (each
    candidate priced at ``model_epsilon``, as the search prices it in budget mode)."""
    refit_seed = SeedPlan(seed).seed("refit")
    accuracies = []
    for params in case.candidates():
        model = prepare_clone(case.estimator(model_epsilon), params, seed=refit_seed,
                              **pricing(model_epsilon))
        fit_on_rows(model, data.X_train, data.y_train, None, {},
                    padding=padding(data.X_train, data.y_train))
        accuracies.append(model.score(data.X_test, data.y_test))
    return np.asarray(accuracies)


# -- selectors ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Selector:
    """A private selector of DPGridSearchCV: permute-and-flip or the doubling SVT."""

    method: str = "permute_and_flip"  # or "svt"
    granularity: float = 0.05
    utility_floor: float = 0.5
    order: str = "fixed"

    def build(self, epsilon: float, n_partitions: int, random_state):
        if self.method == "permute_and_flip":
            return PermuteAndFlipSelector(epsilon, sensitivity=1.0 / n_partitions,
                                          random_state=random_state)
        return DoublingSVT(epsilon, sensitivity=1.0 / n_partitions,
                           granularity=self.granularity, utility_floor=self.utility_floor,
                           order=self.order, random_state=random_state)

    def label(self) -> str:
        if self.method == "permute_and_flip":
            return "permute-and-flip"
        return f"SVT g={self.granularity}, u0={self.utility_floor}, order={self.order}"


def selection_draws(selector: Selector, utilities: np.ndarray, epsilon: float, seed: int,
                    draws: int) -> list:
    """``draws`` independent selections over the mean utilities (released outputs only)."""
    mean = utilities.mean(axis=1)
    seeds = SeedPlan(seed)
    return [selector.build(epsilon, utilities.shape[1], seeds.seed("selection", r)).select(mean)
            for r in range(draws)]


# -- one measured configuration ----------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    case: str
    setting: Evaluation
    selector: Selector
    total_epsilon: float
    tuning_share: float = 0.5

    @property
    def tuning_epsilon(self) -> float:
        return self.total_epsilon * self.tuning_share

    @property
    def model_epsilon(self) -> float:
        return self.total_epsilon - self.tuning_epsilon


class Calibrator:
    """Measures configurations over seeds, sharing utility matrices and refits."""

    def __init__(self, data: Data, cases: dict[str, Case], seeds, draws: int, n_jobs: int,
                 cache: Path | None):
        self.data = data
        self.cases = cases
        self.seeds = list(seeds)
        self.draws = draws
        self.store = UtilityStore(data, n_jobs, cache)
        self._refits: dict[tuple, np.ndarray] = {}

    def refits(self, case: Case, model_epsilon: float, seed: int) -> np.ndarray:
        key = (case.name, model_epsilon, seed)
        if key not in self._refits:
            self._refits[key] = refit_accuracies(case, self.data, model_epsilon, seed)
        return self._refits[key]

    def measure(self, config: Config) -> dict:
        """Per-seed expected accuracy of the returned model, and SVT statistics."""
        case = self.cases[config.case]
        per_seed, rounds, fallbacks, seconds = [], [], [], []
        for seed in self.seeds:
            utilities = self.store.get(case, config.setting, config.model_epsilon, seed)
            accuracy = self.refits(case, config.model_epsilon, seed)
            picks = selection_draws(config.selector, utilities, config.tuning_epsilon, seed,
                                    self.draws)
            per_seed.append(float(np.mean([accuracy[p.index] for p in picks])))
            rounds.append(float(np.mean([len(p.trace) for p in picks])))
            fallbacks.append(float(np.mean([p.fallback for p in picks])))
            seconds.append(self.store.seconds(case, config.setting, config.model_epsilon, seed))
        return {"accuracy": per_seed, "rounds": rounds, "fallback": fallbacks,
                "evaluation_seconds": seconds}

    def references(self, case_name: str, model_epsilon: float) -> dict:
        """Oracle (best candidate) and uniform-choice accuracy at a model budget."""
        table = np.array([self.refits(self.cases[case_name], model_epsilon, s)
                          for s in self.seeds])
        return {"oracle": table.max(axis=1).tolist(), "uniform": table.mean(axis=1).tolist()}


# -- experiments -------------------------------------------------------------------------------
@dataclass
class Options:
    cases: list
    epsilons: tuple
    sizes: tuple = (50, 100, 200, 400)
    inner: tuple = ("same", "scaled", INF)
    cvs: tuple = (0.25, 0.5, 2, 3)
    cv_inner: tuple = (INF,)
    shares: tuple = (0.25, 0.5, 0.75)
    granularities: tuple = (0.01, 0.025, 0.05, 0.1)
    floors: tuple = (0.5, 0.7)
    recommended: Evaluation = field(default_factory=Evaluation)


def partitions_experiment(cal: Calibrator, opt: Options):
    """min_partition_size x inner_epsilon (cv = 0.25, permute-and-flip, half/half split)."""
    for case, inner, size, eps in itertools.product(opt.cases, opt.inner, opt.sizes,
                                                    opt.epsilons):
        yield Config(case, Evaluation(size, 0.25, inner), Selector(), eps)


def cv_experiment(cal: Calibrator, opt: Options):
    """Inner validation inside each partition (size from the recommendation)."""
    size = opt.recommended.min_partition_size
    for case, inner, cv, eps in itertools.product(opt.cases, opt.cv_inner, opt.cvs,
                                                  opt.epsilons):
        yield Config(case, Evaluation(size, cv, inner), Selector(), eps)


def share_experiment(cal: Calibrator, opt: Options):
    """Share of the total budget spent on tuning (recommended evaluator, permute-and-flip)."""
    for case, share, eps in itertools.product(opt.cases, opt.shares, opt.epsilons):
        yield Config(case, opt.recommended, Selector(), eps, share)


def svt_experiment(cal: Calibrator, opt: Options):
    """SVT granularity x utility floor (recommended evaluator), permute-and-flip for reference."""
    for case, eps in itertools.product(opt.cases, opt.epsilons):
        yield Config(case, opt.recommended, Selector(), eps)
        for g, u0 in itertools.product(opt.granularities, opt.floors):
            yield Config(case, opt.recommended, Selector("svt", g, u0), eps)


EXPERIMENTS = {
    "partitions": partitions_experiment,
    "cv": cv_experiment,
    "share": share_experiment,
    "svt": svt_experiment,
}
# which Config fields label a row in each experiment's table
ROW_LABELS = {
    "partitions": lambda c: (c.setting.inner_epsilon, c.setting.min_partition_size),
    "cv": lambda c: (c.setting.inner_epsilon, c.setting.cv),
    "share": lambda c: (c.tuning_share,),
    "svt": lambda c: (c.selector.label(),),
}
ROW_HEADERS = {
    "partitions": ["inner_epsilon", "min_partition_size"],
    "cv": ["inner_epsilon", "inner cv"],
    "share": ["tuning share"],
    "svt": ["selector"],
}


def _fmt_label(value) -> str:
    return "inf" if value == INF else str(value)


def run_experiment(cal: Calibrator, name: str, opt: Options) -> tuple[str, list[dict]]:
    """Markdown tables (one per case) and the raw records of one experiment."""
    records = []
    for config in EXPERIMENTS[name](cal, opt):
        start = time.perf_counter()
        result = cal.measure(config)
        records.append({"experiment": name, "case": config.case,
                        "labels": [_fmt_label(v) for v in ROW_LABELS[name](config)],
                        "setting": config.setting.label(), "selector": config.selector.label(),
                        "total_epsilon": config.total_epsilon,
                        "tuning_share": config.tuning_share, **result})
        print(f"[calibrate:{name}] {config.case} {records[-1]['labels']} "
              f"eps={config.total_epsilon}: {mean_std(result['accuracy'])} "
              f"({time.perf_counter() - start:.0f}s)", flush=True)
    return experiment_tables(cal, name, records, opt), records


def experiment_tables(cal: Calibrator, name: str, records: list[dict], opt: Options) -> str:
    """One table per case: rows = settings, columns = total epsilon (mean +- std accuracy)."""
    parts = [f"## {name}: {EXPERIMENTS[name].__doc__.strip()}"]
    for case in opt.cases:
        rows = [r for r in records if r["case"] == case]
        if not rows:
            continue
        epsilons = sorted({r["total_epsilon"] for r in rows})
        header = ROW_HEADERS[name] + [f"eps={e:g}" for e in epsilons]
        if name == "svt":
            header += ["rounds", "fallback"]
        body = []
        for labels in dict.fromkeys(tuple(r["labels"]) for r in rows):
            cells = {r["total_epsilon"]: r for r in rows if tuple(r["labels"]) == labels}
            line = list(labels) + [mean_std(cells[e]["accuracy"]) if e in cells else "—"
                                   for e in epsilons]
            if name == "svt":
                line += [f"{np.mean([np.mean(c['rounds']) for c in cells.values()]):.1f}",
                         f"{np.mean([np.mean(c['fallback']) for c in cells.values()]):.2f}"]
            body.append(line)
        body += reference_rows(cal, case, epsilons, len(ROW_HEADERS[name]), name)
        parts += [f"\n### {case}\n", markdown_table(header, body)]
    return "\n".join(parts)


def reference_rows(cal: Calibrator, case: str, epsilons, n_labels: int, name: str) -> list:
    """Oracle / uniform-choice rows at the half/half model budget (not private)."""
    if name == "share":
        return []
    extra = ["", ""] if name == "svt" else []
    rows = []
    for kind in ("oracle", "uniform"):
        label = {"oracle": "best candidate (oracle, not private)",
                 "uniform": "uniformly random candidate"}[kind]
        cells = [mean_std(cal.references(case, e / 2)[kind]) for e in epsilons]
        rows.append([label] + [""] * (n_labels - 1) + cells + extra)
    return rows


# -- command line ------------------------------------------------------------------------------
def parse_inner(value: str):
    return INF if value == "inf" else (value if value in ("same", "scaled") else float(value))


def build_options(args, cases) -> Options:
    recommended = Evaluation(args.size, args.cv, parse_inner(args.inner))
    if args.quick:
        return Options(cases=args.cases, epsilons=(1.0,), sizes=(50, 200), cvs=(0.25, 2),
                       shares=(0.25, 0.5), granularities=(0.05,), floors=(0.5,),
                       recommended=recommended)
    epsilons = tuple(args.epsilons) if args.epsilons else TOTAL_EPSILONS
    return Options(cases=args.cases, epsilons=epsilons, sizes=tuple(args.sizes),
                   inner=tuple(parse_inner(v) for v in args.inner_values),
                   cv_inner=tuple(parse_inner(v) for v in args.cv_inner),
                   shares=tuple(args.shares), recommended=recommended)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--quick", action="store_true", help="tiny smoke run")
    p.add_argument("--experiment", nargs="+", default=list(EXPERIMENTS),
                   choices=list(EXPERIMENTS))
    p.add_argument("--cases", nargs="+", default=["logistic", "naive_bayes"])
    p.add_argument("--epsilons", nargs="+", type=float, help="total budgets")
    p.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 200, 400],
                   help="min_partition_size values of the partitions experiment")
    p.add_argument("--inner-values", nargs="+", default=["same", "scaled", "inf"])
    p.add_argument("--cv-inner", nargs="+", default=["scaled"],
                   help="inner_epsilon values of the cv experiment")
    p.add_argument("--shares", nargs="+", type=float, default=[0.25, 0.5, 0.75],
                   help="tuning shares of the share experiment")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--draws", type=int, default=50, help="selection draws per matrix")
    p.add_argument("--size", type=int, default=100, help="recommended min_partition_size")
    p.add_argument("--cv", type=float, default=0.25, help="recommended inner cv")
    p.add_argument("--inner", default="scaled", help="recommended inner_epsilon")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--cache", type=Path, default=default_cache(),
                   help=f"folder for utility matrices, outside the repository (${CACHE_ENV})")
    p.add_argument("--tag", default="", help="suffix of the result files")
    return p


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    if args.cv >= 1:
        args.cv = int(args.cv)
    data = load_data(args.data, n_train=6000 if args.quick else None)
    cases = make_cases(data.X_train.shape[1])
    seeds = range(2 if args.quick else args.seeds)
    cal = Calibrator(data, cases, seeds, 5 if args.quick else args.draws, args.n_jobs,
                     args.cache)
    opt = build_options(args, cases)
    for name in args.experiment:
        markdown, records = run_experiment(cal, name, opt)
        header = (f"# Calibration of DPGridSearchCV: {name}\n\ndata: {data.name}, "
                  f"{len(data.X_train)} training rows, {len(cal.seeds)} seeds, "
                  f"{cal.draws} selection draws per seed; cells: test accuracy of the "
                  "returned model, mean ± std over seeds; budgets split half/half between "
                  "tuning and model unless stated.\n\n")
        tag = f"_{args.tag}" if args.tag else ("_quick" if args.quick else "")
        write_result(f"calibration_{name}{tag}", header + markdown,
                     {"records": records, "argv": json.loads(json.dumps(vars(args),
                                                                        default=str))})


if __name__ == "__main__":
    main()
