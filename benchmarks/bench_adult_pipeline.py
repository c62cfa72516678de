"""The README's and the gallery's pipeline on UCI Adult: a ``ColumnTransformer`` of diffprivlib's
``StandardScaler`` (public bounds) on the numeric columns and a ``OneHotEncoder`` of the public
categories, then diffprivlib's ``LogisticRegression``, tuned over ``data_norm`` as the gallery's
``examples/plot_pipeline_replacement.py`` tunes it (12,000 training rows, 8,000 test rows, total
ε = 2.5).

Per train/test split (``random_state`` = split) and seed, test accuracy and seconds of:

* ``D`` -- the untuned default (``data_norm=2``) fitted once at the whole budget (its epsilons
  set so that the fit costs it, as the searches price a candidate);
* ``L`` -- ``GridSearchCV(cv=5)`` over the same candidates, each priced at the whole budget, and
  its refit: non-private tuning, the time reference;
* ``R1`` -- ``DPRandomSearchCV`` with its defaults on the default alone (repetition, no tuning);
* ``random`` -- ``DPRandomSearchCV`` with its defaults over the grid (its runs batched:
  ``E[K] = 1000``, every run fitted and scored on all rows);
* ``random, 100 per candidate`` -- the same search at ``n_iter=400``: a hundred runs per
  candidate, where ``GridSearchCV``'s time grows with the candidates (``bench_small_spaces``
  measures the same on noisier fits);
* ``random one by one`` -- the same search as it ran before its runs of this pipeline were
  batched: ``E[K] = 50``, a validation part of 0.2, every run a diffprivlib fit;
* ``grid`` -- ``DPGridSearchCV`` with its defaults.

Every method runs under one BLAS thread, one after the other in a cell, so the time ratios over
L are interleaved measurements. Run: ``python -m benchmarks.bench_adult_pipeline [--splits 3]
[--seeds 3] [--quick]``; writes ``benchmarks/results/adult_pipeline.{json,md}``
(``adult_pipeline_quick`` for the smoke run: one split, one seed, 3,000 training rows). Without
``adult.csv`` the rows are synthetic look-alikes (the report says so).
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression, StandardScaler
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from threadpoolctl import threadpool_limits

from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune.datasets import ADULT_FRAME_CATEGORIES, ADULT_FRAME_NUMERIC, load_adult_frame
from skdptune.estimators import set_total_epsilon
from skdptune.evaluation import _holdout

from ._common import DEFAULT_DATA, PricedModel, write_result

TOTAL_EPSILON = 2.5
NUMERIC = {name: bounds for name, (_, bounds) in ADULT_FRAME_NUMERIC.items()}
CATEGORIES = {name: list(values) for name, (_, values) in ADULT_FRAME_CATEGORIES.items()}
GRID = {"clf__data_norm": [0.5, 1.0, 2.0, 4.0]}
DEFAULT = {"clf__data_norm": 2.0}
METHODS = ("D", "L", "R1", "random", "random, 100 per candidate", "random one by one",
           "grid")


def private_pipeline():
    """The gallery's private pipeline (its untuned default: ``data_norm=2``)."""
    bounds = (np.array([lo for lo, _ in NUMERIC.values()], dtype=float),
              np.array([hi for _, hi in NUMERIC.values()], dtype=float))
    return Pipeline([
        ("prep", ColumnTransformer([
            ("num", StandardScaler(bounds=bounds, epsilon=0.5), list(NUMERIC)),
            ("cat", OneHotEncoder(categories=list(CATEGORIES.values()),
                                  handle_unknown="ignore", sparse_output=False),
             list(CATEGORIES)),
        ])),
        ("clf", LogisticRegression(epsilon=1.0, data_norm=DEFAULT["clf__data_norm"])),
    ])


def _seeded(estimator, seed):
    """Every DP step's noise seeded (the references are reproducible, as the searches are)."""
    return estimator.set_params(**{k: seed for k in estimator.get_params()
                                   if k == "random_state" or k.endswith("__random_state")})


def fit_method(method, seed, X_train, y_train):
    """The fitted model of ``method`` (its predictions are scored by the caller)."""
    common = {"epsilon": TOTAL_EPSILON, "classes": [0, 1], "random_state": seed,
              "accountant": BudgetAccountant()}
    if method == "D":
        model = set_total_epsilon(clone(private_pipeline()), TOTAL_EPSILON, n_classes=2)
        return _seeded(model, seed).fit(X_train, y_train)
    if method == "L":
        priced = PricedModel(_seeded(private_pipeline(), seed), TOTAL_EPSILON)
        grid = {f"model__{k}": v for k, v in GRID.items()}
        return GridSearchCV(priced, grid, cv=5).fit(X_train, y_train)
    if method == "R1":
        space = {k: [v] for k, v in DEFAULT.items()}
        return DPRandomSearchCV(private_pipeline(), space, **common).fit(X_train, y_train)
    if method == "random":
        return DPRandomSearchCV(private_pipeline(), GRID, **common).fit(X_train, y_train)
    if method == "random, 100 per candidate":
        return DPRandomSearchCV(private_pipeline(), GRID, n_iter=100 * len(GRID["clf__data_norm"]),
                                **common).fit(X_train, y_train)
    if method == "random one by one":
        search = DPRandomSearchCV(private_pipeline(), GRID, n_iter=50, validation_size=0.2,
                                  **common)
        with mock.patch.object(_holdout, "supports_batched_fits",
                               lambda *args, **kwargs: False):
            return search.fit(X_train, y_train)
    return DPGridSearchCV(private_pipeline(), GRID, **common).fit(X_train, y_train)


def run_cell(X, y, split, seed, train_size, test_size):
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=train_size, test_size=test_size, random_state=split)
    out = {"split": split, "seed": seed, "majority": float(max(y_test.mean(),
                                                               1 - y_test.mean()))}
    for method in METHODS:
        start = time.perf_counter()
        fitted = fit_method(method, 100 * split + seed, X_train, y_train)
        out[f"{method} seconds"] = time.perf_counter() - start
        out[method] = float(np.mean(fitted.predict(X_test) == y_test))
    return out


def _report(cells, name, train_size):
    def sd(values):
        return values.std(ddof=1) if len(values) > 1 else float("nan")

    def paired(method, base):
        diff = np.array([c[method] - c[base] for c in cells])
        return f"{diff.mean():+.4f} ± {sd(diff) / np.sqrt(len(diff)):.4f}"

    lines = [
        "# The README's pipeline on Adult", "",
        f"{name}: {train_size} training rows, the gallery's `ColumnTransformer` (diffprivlib "
        "`StandardScaler` on the numeric columns, `OneHotEncoder` of the public categories) and "
        "diffprivlib's `LogisticRegression` over `data_norm` ∈ {0.5, 1, 2, 4}, total ε = "
        f"{TOTAL_EPSILON}; {len(cells)} cells (splits × seeds), one BLAS thread. Test accuracy "
        "(mean ± sd, [min, max]), the paired difference to R1 and to D (mean ± standard error), "
        "and seconds over L's in the same cell (median [min, max]; mean). "
        f"Majority-class rate {np.mean([c['majority'] for c in cells]):.3f}. "
        "`python -m benchmarks.bench_adult_pipeline`.", "",
        "| method | accuracy | − R1 | − D | time / L |", "|---|---|---|---|---|"]
    for method in METHODS:
        values = np.array([c[method] for c in cells])
        ratios = np.array([c[f"{method} seconds"] / c["L seconds"] for c in cells])
        lines.append(
            f"| {method} | {values.mean():.4f} ± {sd(values):.4f} [{values.min():.4f}, "
            f"{values.max():.4f}] | {paired(method, 'R1')} | {paired(method, 'D')} | "
            f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}]; "
            f"{ratios.mean():.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="path of adult.csv")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: one split, one seed, 3,000 training rows")
    args = parser.parse_args(argv)
    splits, seeds, train_size, test_size = ((1, 1, 3000, 2000) if args.quick
                                            else (args.splits, args.seeds, 12000, 8000))
    name_out = "adult_pipeline_quick" if args.quick else "adult_pipeline"
    X, y, name = load_adult_frame(args.data)
    cells = []
    with threadpool_limits(limits=1, user_api="blas"):
        for split in range(splits):
            for seed in range(seeds):
                cells.append(run_cell(X, y, split, seed, train_size, test_size))
                print({k: round(v, 4) if isinstance(v, float) else v
                       for k, v in cells[-1].items()}, flush=True)
                # after every cell: a run cut short keeps what it did
                write_result(name_out, _report(cells, name, train_size), {"cells": cells})
    print(_report(cells, name, train_size))


if __name__ == "__main__":
    main()
