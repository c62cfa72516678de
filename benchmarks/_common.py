"""Shared pieces of the benchmarks: data, output folder, pricing, tables and timing.

Real data: ``--data path/to/adult.csv`` (never committed); synthetic data otherwise. The results
go to ``benchmarks/results/``, or to the folder ``$SKDPTUNE_BENCH_RESULTS`` names (the smoke
test of the benchmarks writes there, outside the repository).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import train_test_split

from skdptune.datasets import load_classification
from skdptune.estimators import set_total_epsilon
from skdptune.public import make_padding

#: environment variable naming another results folder (the smoke test's)
RESULTS_ENV = "SKDPTUNE_BENCH_RESULTS"
RESULTS = Path(os.environ.get(RESULTS_ENV) or Path(__file__).resolve().parent / "results")
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv"
#: the public label set of every benchmark task (binary classification)
CLASSES = np.array([0, 1])


@functools.cache
def code_version() -> str:
    """The commit of the code that measures: ``git``'s short hash of ``HEAD``, with ``+dirty``
    when the package or the benchmarks differ from it, or ``"unknown"`` outside a checkout.
    Every result a benchmark stores carries it (:func:`stamped`), so that a results file filled
    by several commands shows when its cells come from different code."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, check=True,
                              capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--", "skdptune",
                                  "benchmarks/*.py"], cwd=root, check=True,
                                 capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if changed else "")


def stamped(result: dict) -> dict:
    """``result`` (one method's, in a results file) with the :func:`code_version` measuring."""
    return {**result, "code": code_version()}


def code_versions(report: dict) -> str:
    """A results file's code versions: how many method results (of its cells, crossover and
    draws) each measured, most first (``unrecorded``: results stored before the versions
    were), as a sentence for the file's header."""
    results = [result for part in ("cells", "crossover", "draws")
               for cell in report.get(part, {}).values()
               for result in cell.get("methods", {}).values()]
    counts = Counter(r.get("code", "unrecorded") for r in results)
    listed = ", ".join(f"{version} ({n})" for version, n in counts.most_common()) or "–"
    return f"Code that measured its results (commit, results): {listed}"


def padding(X, y):
    """The public padding rows the searches add to every fit (staged computations need them)."""
    return make_padding(X, y, CLASSES)


def pricing(cost: float) -> dict:
    """Settings of ``skdptune.evaluation._fit.instantiate`` that price a model as the searches
    price theirs in budget mode: its diffprivlib epsilons set so that one fit *costs* ``cost``
    under skdptune's accounting (replace-one factors, the sound bound of ``LogisticRegression``)
    for the tasks' two classes. A reference fitted at a nominal ``epsilon`` would spend more
    than the searches it is compared with."""
    return {"epsilon_total": float(cost), "n_classes": len(CLASSES)}


class PricedModel(ClassifierMixin, BaseEstimator):
    """``model`` with its epsilons set at every ``fit`` so that the fit costs ``cost``
    (:func:`pricing`). For the non-private cross-validated references (``GridSearchCV`` /
    ``RandomizedSearchCV`` over ``model__<param>``): each candidate is priced separately, as
    the searches price theirs. NOT private as a search: the references tune for free."""

    def __init__(self, model=None, cost=1.0):
        self.model = model
        self.cost = cost

    def fit(self, X, y):
        self.model_ = set_total_epsilon(clone(self.model), self.cost, n_classes=len(CLASSES))
        self.model_.fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def load_split(path=None, *, test_size=0.25, seed=0, n_samples=30000):
    """``(X_train, X_test, y_train, y_test, name)`` with features in [0, 1]."""
    X, y, name = load_classification(path, n_samples=n_samples, random_state=seed)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=seed, stratify=y)
    return X_train, X_test, y_train, y_test, name


@contextmanager
def timer(into: dict, key: str):
    """Wall-clock seconds of the block, stored in ``into[key]``."""
    start = time.perf_counter()
    yield
    into[key] = time.perf_counter() - start


def mean_std(values) -> str:
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} ± {values.std(ddof=1) if len(values) > 1 else 0.0:.3f}"


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(name: str, markdown: str, data: dict | None = None) -> Path:
    """Write ``results/<name>.md`` (and ``.json`` with the raw numbers); return the md path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.md"
    path.write_text(markdown + "\n")
    if data is not None:
        (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1, default=float))
    return path


@contextmanager
def method_timer(cls, names=("fit",)):
    """Sum the wall-clock seconds spent inside ``cls.<name>`` calls (in this process only).

    Yields a dict ``{name: seconds}`` that fills while the block runs; nested calls of the same
    method (e.g. a ``fit`` calling ``super().fit``) are counted once. The original methods are
    restored on exit.
    """
    totals = dict.fromkeys(names, 0.0)
    originals = {name: getattr(cls, name) for name in names}
    own = {name for name in names if name in vars(cls)}  # not inherited: restore, else delete
    depth = dict.fromkeys(names, 0)

    def wrap(name, method):
        def timed(self, *args, **kwargs):
            depth[name] += 1
            start = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                depth[name] -= 1
                if depth[name] == 0:
                    totals[name] += time.perf_counter() - start
        return timed

    for name, method in originals.items():
        setattr(cls, name, wrap(name, method))
    try:
        yield totals
    finally:
        for name, method in originals.items():
            if name in own:
                setattr(cls, name, method)
            else:
                delattr(cls, name)


def save_figure(fig, name: str) -> Path:
    """Write ``results/<name>.png`` and close the figure; return the path."""
    import matplotlib.pyplot as plt

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def pyplot():
    """matplotlib's pyplot with the non-interactive Agg backend (benchmarks run headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _spin(n: int) -> int:
    """Pure-Python arithmetic: CPU time, no memory traffic and no shared state."""
    total = 0
    for i in range(n):
        total += i * i
    return total


def timed_cpu_job(n_jobs: int, n_tasks: int = 8, size: int = 1_000_000) -> float:
    """Wall-clock seconds of ``n_tasks`` equal, independent CPU-bound tasks through joblib.

    The time at ``n_jobs=1`` over the time at ``n_jobs=2`` is what the machine gives a perfectly
    parallel job of the same length as a search's fit (workers warm, no serial part): the
    ceiling against which a search's own speed-up is read on a shared machine.
    """
    from sklearn.utils.parallel import Parallel, delayed

    start = time.perf_counter()
    Parallel(n_jobs=n_jobs)(delayed(_spin)(size) for _ in range(n_tasks))
    return time.perf_counter() - start


def timed_fit(estimator, X, y, single_blas: bool = False) -> float:
    """Wall-clock seconds of ``estimator.fit(X, y)``, optionally under single-threaded BLAS.

    skdptune runs its many small fits with one BLAS thread (``single_threaded_blas``); timing a
    scikit-learn search both ways separates that effect from the algorithms' own cost.
    """
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    if single_blas:
        with threadpool_limits(limits=1, user_api="blas"):
            estimator.fit(X, y)
    else:
        estimator.fit(X, y)
    return time.perf_counter() - start
