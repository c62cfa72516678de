"""Bad input, measured: one table over every public entry point.

Each row is a mistake a user can make. For every row the test asserts that

* the exception has the expected type;
* its message names the offending parameter (so the user knows what to change);
* nothing was charged to the user's ``BudgetAccountant`` (a mistake is not a release);
* the user's ``X`` and ``y`` and the estimator's parameters are unchanged.

The same accountant is handed to the search *and* to the diffprivlib estimator, so a charge by
an inner fit would show as well as a charge by the search.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, KMeans
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.utils import BudgetError
from scipy.stats import expon
from sklearn import config_context
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skdptune import (
    DomainError,
    DPGIBOSearchCV,
    DPGridSearchCV,
    DPRandomSearchCV,
    NonPrivateComponentError,
    PrivacyLeakError,
    estimator_privacy,
    privacy_utility_front,
)
from skdptune import accounting as acc_fn
from skdptune.events import EpsilonDeltaEvent
from skdptune.linear_model import SSPRegressor

N = 400


def _data(kind="classification"):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(N, 3))
    if kind == "regression":
        return X, X @ np.array([0.5, -0.2, 0.1])
    if kind == "regression-outside":  # a target beyond the declared bounds_y (-1, 1)
        return X, 3.0 * (X @ np.array([0.5, -0.2, 0.1]))
    return X, (X[:, 0] > 0).astype(int)


@dataclass
class Case:
    """``call(estimator, X, y, accountant)`` must raise ``exc`` naming ``names`` (any of them).

    ``absent``: options that do not exist for that entry point and must not be suggested.
    """

    id: str
    call: Callable[[Any, Any, Any, BudgetAccountant], Any]
    exc: type
    names: tuple[str, ...]
    estimator: Callable[[BudgetAccountant], Any] = None
    data: str = "classification"
    absent: tuple[str, ...] = ()  # regular expressions the message must not match


def nb(acc):
    return GaussianNB(bounds=(-1.0, 1.0), accountant=acc)


def dplr(acc):
    return DPLogisticRegression(epsilon=1.0, data_norm=2.0, accountant=acc)


def linreg(acc):
    return SSPRegressor(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), accountant=acc)


def linreg_leaking(acc):
    return SSPRegressor(epsilon=1.0, bounds_X=(-1, 1), accountant=acc)


GRID = {"var_smoothing": [1e-9, 1e-3]}
DIST = {"var_smoothing": [1e-9, 1e-3]}
BOX = {"var_smoothing": (1e-9, 1e-1, "log")}


def _search(cls, space, **defaults):
    """``fit(**kw)``: a case's call of ``cls`` (space, ``classes=[0, 1]`` and ``defaults``
    unless ``kw`` sets them; ``fit_params`` go to ``fit``)."""
    def make(**kw):
        kw = {"space": space, "classes": [0, 1], **defaults, **kw}
        search_space, fit_params = kw.pop("space"), kw.pop("fit_params", {})
        return lambda est, X, y, acc: cls(est, search_space, accountant=acc, **kw).fit(
            X, y, **fit_params)
    return make


grid = _search(DPGridSearchCV, GRID)
rand = _search(DPRandomSearchCV, DIST, n_iter=2)
gibo = _search(DPGIBOSearchCV, BOX, n_iter=1)


def fit_with(search, X=None, y=None):
    """``search`` fitted on transformed data: ``X(X)``, ``y(y)``."""
    def call(est, X_, y_, acc):
        return search(est, X(X_) if X else X_, y(y_) if y else y_, acc)
    return call


def front(**kw):
    space = kw.pop("space", {"epsilon": (0.1, 1.0, "log")})
    kw.setdefault("cv", 2)
    kw.setdefault("n_repeats", 1)
    kw.setdefault("n_initial", 1)
    kw.setdefault("n_iter", 0)
    return lambda est, X, y, acc: privacy_utility_front(est, space, X, y, **kw)


def routed(kind, *, scorer_requests=None, fit_request=False, score_request=None, **fit_kw):
    """A search fitted with metadata routing enabled and ``fit_kw`` as fit parameters
    (callables of ``(X, y)``). ``scorer_requests``: the grid's scorer is an accuracy scorer
    with these ``set_score_request`` arguments; ``score_request``: the estimator's own."""
    def call(est, X, y, acc):
        with config_context(enable_metadata_routing=True):
            if fit_request is not None:
                est.set_fit_request(sample_weight=fit_request)
            if score_request is not None:
                est.set_score_request(sample_weight=score_request)
            kw = {}
            if scorer_requests is not None:
                kw = {"scoring": make_scorer(accuracy_score).set_score_request(
                    **scorer_requests), "score_bounds": (0, 1)}
            search = {"grid": grid, "random": rand, "gibo": gibo}[kind]
            params = {name: make(X, y) for name, make in fit_kw.items()}
            return search(**kw, fit_params=params)(est, X, y, acc)
    return call


def _weights_with(value):
    def make(X, y):
        w = np.ones(len(X))
        w[5] = value
        return w
    return make


def fn(function, *args, **kw):
    return lambda est, X, y, acc: function(*args, **kw)


def _with_nan(X):
    X = X.copy()
    X[3, 1] = np.nan
    return X


IPE = InvalidParameterError

CASES = [
    # ---- DPGridSearchCV ----------------------------------------------------------------------
    Case("grid-epsilon-zero", grid(epsilon=0.0), IPE, ("epsilon",)),
    Case("grid-epsilon-string", grid(epsilon="1"), IPE, ("epsilon",)),
    Case("grid-selection", grid(selection="best"), IPE, ("selection",)),
    Case("grid-n_partitions-zero", grid(n_partitions=0), IPE, ("n_partitions",)),
    Case("grid-n_partitions-too-many", grid(n_partitions=300), ValueError,
         ("n_partitions", "min_partition_size")),
    Case("grid-min_partition_size-too-large", grid(min_partition_size=1000), ValueError,
         ("min_partition_size",)),
    Case("grid-granularity", grid(granularity=0.0), IPE, ("granularity",)),
    Case("grid-utility_floor", grid(utility_floor=1.5), IPE, ("utility_floor",)),
    Case("grid-svt_order", grid(svt_order="random"), IPE, ("svt_order",)),
    Case("grid-inner_epsilon", grid(inner_epsilon="huge"), IPE, ("inner_epsilon",)),
    Case("grid-scoring-unbounded", grid(scoring="neg_mean_squared_error"), ValueError,
         ("score_bounds",)),
    Case("grid-scoring-unknown", grid(scoring="no_such_scorer"), ValueError, ("scoring",)),
    Case("grid-score_bounds-reversed", grid(score_bounds=(1.0, 0.0)), ValueError,
         ("score_bounds",)),
    Case("grid-cv", grid(cv=1.5), IPE, ("cv",)),
    Case("grid-error_score-range", grid(error_score=2.0), ValueError, ("error_score",)),
    Case("grid-error_score-string", grid(error_score="ignore"), IPE, ("error_score",)),
    Case("grid-n_jobs", grid(n_jobs="two"), IPE, ("n_jobs",)),
    Case("grid-verbose", grid(verbose=-1), IPE, ("verbose",)),
    Case("grid-random_state", grid(random_state="seed"), IPE, ("random_state",)),
    Case("grid-pre_dispatch", grid(pre_dispatch=1.5), IPE, ("pre_dispatch",)),
    Case("grid-accountant", lambda est, X, y, acc: DPGridSearchCV(
        est, GRID, classes=[0, 1], accountant="mine").fit(X, y), IPE, ("accountant",)),
    Case("grid-estimator-none", lambda est, X, y, acc: DPGridSearchCV(
        None, GRID, accountant=acc).fit(X, y), IPE, ("estimator",)),
    Case("grid-classes-missing", grid(classes=None), ValueError, ("classes",)),
    Case("grid-classes-one-label", grid(classes=[0]), ValueError, ("classes",)),
    Case("grid-classes-for-regressor", grid(classes=[0, 1], space={"epsilon": [1.0]}),
         ValueError, ("classes",), estimator=linreg, data="regression"),
    Case("grid-label-not-declared", grid(classes=[0, 2]), DomainError, ("classes",)),
    Case("grid-param_grid-unknown-name", grid(space={"no_such_param": [1]}), ValueError,
         ("no_such_param",)),
    Case("grid-param_grid-not-a-list", grid(space={"var_smoothing": 1e-9}), TypeError,
         ("var_smoothing",)),
    Case("grid-param_grid-type", grid(space="var_smoothing"), IPE, ("param_grid",)),
    Case("grid-leaky-estimator", grid(), PrivacyLeakError, ("bounds",),
         estimator=lambda acc: GaussianNB(accountant=acc)),
    Case("grid-nonprivate-component", grid(space={"logisticregression__C": [1.0]}),
         NonPrivateComponentError, ("standardscaler",),
         estimator=lambda acc: make_pipeline(StandardScaler(), dplr(acc)),
         absent=("allow_nonprivate",)),
    Case("grid-X-1d", fit_with(grid(), X=lambda X: X[:, 0]), ValueError, ("X",)),
    Case("grid-X-nan", fit_with(grid(), X=_with_nan), DomainError, ("X",)),
    Case("grid-y-missing", fit_with(grid(), y=lambda y: None), ValueError, ("y",)),
    Case("grid-y-length", fit_with(grid(), y=lambda y: y[:-1]), ValueError, ("y",)),
    Case("grid-y-2d", fit_with(grid(), y=lambda y: np.column_stack([y, y])), ValueError,
         ("y",)),
    Case("grid-budget-exceeded", lambda est, X, y, acc: DPGridSearchCV(
        est, GRID, classes=[0, 1], accountant=BudgetAccountant(epsilon=0.5)).fit(X, y),
         BudgetError, ("accountant",)),
    # metadata: checked before any private computation (routing: scikit-learn's errors)
    Case("grid-sample_weight-nan", routed("grid", scorer_requests={"sample_weight": True},
                                          sample_weight=_weights_with(np.nan)),
         DomainError, ("sample_weight",)),
    Case("grid-sample_weight-negative", routed("grid", scorer_requests={"sample_weight": True},
                                               sample_weight=_weights_with(-1.0)),
         DomainError, ("sample_weight",)),
    Case("grid-sample_weight-inf", routed("grid", scorer_requests={"sample_weight": True},
                                          sample_weight=_weights_with(np.inf)),
         DomainError, ("sample_weight",)),
    Case("grid-sample_weight-length", routed(
        "grid", scorer_requests={"sample_weight": True},
        sample_weight=lambda X, y: np.ones(len(X) - 1)), ValueError, ("sample_weight",)),
    Case("grid-sample_weight-2d", routed(
        "grid", scorer_requests={"sample_weight": True},
        sample_weight=lambda X, y: np.ones((len(X), 2))), ValueError, ("sample_weight",)),
    Case("grid-sample_weight-strings", routed(
        "grid", scorer_requests={"sample_weight": True},
        sample_weight=lambda X, y: np.full(len(X), "1")), ValueError, ("sample_weight",)),
    Case("grid-sample_weight-scalar-for-scorer", routed(
        "grid", scorer_requests={"sample_weight": True}, sample_weight=lambda X, y: 2.0),
         ValueError, ("sample_weight",)),
    Case("grid-score-metadata-not-row-aligned", routed(
        "grid", scorer_requests={"extra": True}, extra=lambda X, y: np.ones(7)),
         ValueError, ("'extra'",)),
    Case("grid-fit-sample_weight-nan-no-routing", grid(
        fit_params={"sample_weight": np.where(np.arange(N) == 3, np.nan, 1.0)}),
         DomainError, ("sample_weight",)),
    Case("grid-metadata-unrequested", routed("grid", no_such=lambda X, y: np.ones(len(X))),
         TypeError, ("no_such",)),
    Case("grid-metadata-request-unset", routed("grid", fit_request=None,
                                               sample_weight=lambda X, y: np.ones(len(X))),
         UnsetMetadataPassedError, ("sample_weight",)),
    Case("grid-groups-without-splitter", routed("grid", groups=lambda X, y: np.arange(len(X))),
         TypeError, ("groups",)),
    # ---- DPRandomSearchCV --------------------------------------------------------------------
    Case("random-n_iter", rand(n_iter=0), IPE, ("n_iter",)),
    Case("random-distribution", rand(distribution="uniform"), IPE, ("distribution",)),
    Case("random-eta-range", rand(distribution="negative_binomial", eta=-1.0), IPE, ("eta",)),
    Case("random-eta-missing", rand(distribution="negative_binomial"), ValueError, ("eta",)),
    Case("random-eta-conflict", rand(distribution="geometric", eta=0.5), ValueError, ("eta",)),
    Case("random-poisson-needs-delta", rand(distribution="poisson"), ValueError, ("delta",)),
    Case("random-delta-one", rand(delta=1.0), IPE, ("delta",)),
    Case("random-validation_size", rand(validation_size=1.0), IPE, ("validation_size",)),
    Case("random-validation_size-no-train-rows", rand(validation_size=0.9999), ValueError,
         ("validation_size",)),
    Case("random-scoring-unknown", rand(scoring="r2"), ValueError, ("scoring",)),
    Case("random-target-outside-the-declared-range", rand(classes=None,
                                                          space={"alpha": [1.0, 10.0]}),
         DomainError, ("bounds_y",), estimator=linreg, data="regression-outside",
         absent=(r"(?<!score_)clip\b",)),
    Case("random-score_clip-negative", rand(scoring="log_loss", score_clip=-1.0), IPE,
         ("score_clip",),
         absent=(r"(?<!score_)clip\b",)),
    Case("random-score_clip-unused", rand(score_clip=1.0), ValueError, ("score_clip",),
         absent=(r"(?<!score_)clip\b",)),
    Case("random-epsilon-below-floor", rand(epsilon=0.5, epsilon_score=1.0), ValueError,
         ("epsilon",)),
    Case("random-epsilon_score", rand(epsilon_score=0.0), IPE, ("epsilon_score",)),
    Case("random-epsilon-in-space", rand(epsilon=2.0, space={"epsilon": [0.5, 1.0]}),
         ValueError, ("epsilon",)),
    Case("random-ranking-multiclass", rand(scoring="roc_auc", classes=[0, 1, 2]), ValueError,
         ("scoring",)),
    Case("random-regressor-without-target-bounds", rand(classes=None,
                                                        space={"alpha": [1.0, 10.0]}),
         PrivacyLeakError, ("bounds_y",), estimator=linreg_leaking, data="regression",
         absent=(r"(?<!score_)clip\b",)),
    Case("random-kmeans-refused", rand(classes=None, space={"n_clusters": [2, 3]}),
         NonPrivateComponentError, ("KMeans", "empty"),
         estimator=lambda acc: KMeans(epsilon=1.0, bounds=(-1, 1), accountant=acc)),
    Case("random-weighted-scorer", routed("random", score_request=True,
                                          sample_weight=lambda X, y: np.ones(len(X))),
         ValueError, ("sample_weight",), absent=(r"(?<!score_)clip\b",)),
    # ---- DPGIBOSearchCV ----------------------------------------------------------------------
    Case("gibo-epsilon", gibo(epsilon=-1.0), IPE, ("epsilon",)),
    Case("gibo-delta-zero", gibo(delta=0.0), IPE, ("delta",)),
    Case("gibo-tuning_share", gibo(tuning_share=1.0), IPE, ("tuning_share",)),
    Case("gibo-batch_size", gibo(batch_size=0), IPE, ("batch_size",)),
    Case("gibo-train_split", gibo(train_split="random"), IPE, ("train_split",)),
    Case("gibo-clip", gibo(clip=0.0), IPE, ("clip",)),
    Case("gibo-learning_rate", gibo(learning_rate=-0.1), IPE, ("learning_rate",)),
    Case("gibo-lengthscale", gibo(lengthscale=0.0), IPE, ("lengthscale",)),
    Case("gibo-noise", gibo(noise=-1.0), IPE, ("noise",)),
    Case("gibo-scoring-ranking", gibo(scoring="roc_auc"), ValueError, ("scoring",)),
    Case("gibo-score_clip-unused", gibo(score_clip=2.0), ValueError, ("score_clip",),
         absent=(r"(?<!score_)clip\b",)),
    Case("gibo-space-reversed", gibo(space={"var_smoothing": (1e-1, 1e-9, "log")}), ValueError,
         ("var_smoothing",)),
    Case("gibo-space-list", gibo(space={"var_smoothing": [1e-9, 1e-3]}), ValueError,
         ("var_smoothing",)),
    Case("gibo-space-type", gibo(space=[BOX]), IPE, ("param_space",)),
    Case("gibo-weighted-scorer", routed("gibo", score_request=True,
                                        sample_weight=lambda X, y: np.ones(len(X))),
         ValueError, ("sample_weight",), estimator=dplr),
    # ---- estimator_privacy -------------------------------------------------------------------
    Case("privacy-nonprivate", lambda est, X, y, acc: estimator_privacy(LogisticRegression()),
         NonPrivateComponentError, ("estimator",)),
    Case("privacy-not-an-estimator", lambda est, X, y, acc: estimator_privacy("model"),
         TypeError, ("estimator",)),
    Case("privacy-space-type", lambda est, X, y, acc: estimator_privacy(est, "C"), TypeError,
         ("space",), estimator=dplr),
    Case("privacy-space-unknown-name", lambda est, X, y, acc: estimator_privacy(
        est, {"no_such_param": [1]}), ValueError, ("no_such_param",), estimator=dplr),
    Case("privacy-space-infinite-epsilon", lambda est, X, y, acc: estimator_privacy(
        est, {"epsilon": [1.0, math.inf]}), ValueError, ("epsilon",), estimator=dplr),
    Case("privacy-space-unbounded-distribution", lambda est, X, y, acc: estimator_privacy(
        est, {"epsilon": expon()}), ValueError, ("epsilon",), estimator=dplr),
    Case("privacy-allow_nonprivate-type", lambda est, X, y, acc: estimator_privacy(
        est, allow_nonprivate="yes"), TypeError, ("allow_nonprivate",), estimator=dplr),
    # ---- accounting functions ----------------------------------------------------------------
    Case("kov-epsilon", fn(acc_fn.kov_optimal_composition_epsilon, -1.0, 3, 1e-6), ValueError,
         ("epsilon",)),
    Case("kov-k", fn(acc_fn.kov_optimal_composition_epsilon, 1.0, 2.5, 1e-6), ValueError, ("k",)),
    Case("kov-delta", fn(acc_fn.kov_optimal_composition_epsilon, 1.0, 3, 2.0), ValueError,
         ("delta",)),
    Case("gdp_epsilon-mu", fn(acc_fn.gdp_epsilon, -1.0, 1e-6), ValueError, ("mu",)),
    Case("gdp_epsilon-delta", fn(acc_fn.gdp_epsilon, 1.0, -0.1), ValueError, ("delta",)),
    Case("gdp_delta-epsilon", fn(acc_fn.gdp_delta, 1.0, float("nan")), ValueError,
         ("epsilon",)),
    Case("repetition-distribution", fn(acc_fn.repetition_epsilon, 1.0, 0.0, "uniform", 3.0),
         ValueError, ("distribution",)),
    Case("repetition-mean", fn(acc_fn.repetition_epsilon, 1.0, 0.0, "logarithmic", 0.5),
         ValueError, ("mean",)),
    Case("repetition-base_delta", fn(acc_fn.repetition_epsilon, 1.0, 1.0, "logarithmic", 3.0),
         ValueError, ("base_delta",)),
    Case("repetition-pure-eta", fn(acc_fn.repetition_pure_epsilon, 1.0, "negative_binomial",
                                   eta=-2.0), ValueError, ("eta",)),
    Case("tnb-gamma-mean", fn(acc_fn.truncated_negative_binomial_gamma, 0.5, 0.0), ValueError,
         ("mean",)),
    Case("svt-max_above", fn(acc_fn.doubling_svt_epsilon, 0, 1.0), ValueError,
         ("max_above",)),
    Case("svt-epsilon_round", fn(acc_fn.doubling_svt_epsilon, 3, -1.0), ValueError,
         ("epsilon_round",)),
    Case("svt_max_above-granularity", fn(acc_fn.svt_max_above, 0.5, 0.0), ValueError,
         ("granularity",)),
    Case("svt_max_above-utility_floor", fn(acc_fn.svt_max_above, 1.5, 0.1), ValueError,
         ("utility_floor",)),
    Case("sequential-costs", fn(acc_fn.sequential_composition, [(-1.0, 0.0)]), ValueError,
         ("epsilon",)),
    Case("self_composition-count", fn(acc_fn.self_composition_cost, 1.0, 0.0, -1, 1e-6),
         ValueError, ("count",)),
    Case("event_cost-event", fn(acc_fn.event_cost, (1.0, 0.0)), TypeError, ("event",)),
    Case("event_cost-delta", fn(acc_fn.event_cost, EpsilonDeltaEvent(1.0, 0.0, "x"), 2.0),
         ValueError, ("delta",)),
    # ---- privacy_utility_front ---------------------------------------------------------------
    Case("front-space-empty", front(space={}), ValueError, ("space",)),
    Case("front-space-reversed", front(space={"epsilon": (1.0, 0.1)}), ValueError,
         ("epsilon",)),
    Case("front-n_repeats", front(n_repeats=0), ValueError, ("n_repeats",)),
    Case("front-n_initial", front(n_initial=0), ValueError, ("n_initial",)),
    Case("front-anti_ideal", front(anti_ideal=(1.0,)), ValueError, ("anti_ideal",)),
    Case("front-privacy", front(privacy="estimator_privacy"), ValueError, ("privacy",)),
    Case("front-scoring-unbounded", front(scoring="neg_log_loss"), ValueError,
         ("anti_ideal",)),
    Case("front-leaky-estimator", front(), PrivacyLeakError, ("bounds",),
         estimator=lambda acc: GaussianNB(accountant=acc)),
    Case("front-space-unknown-name", front(space={"no_such_param": (0.0, 1.0)}), ValueError,
         ("no_such_param",)),
]


def _params_snapshot(estimator):
    if estimator is None:
        return None
    return {key: repr(value) for key, value in estimator.get_params(deep=True).items()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case):
    acc = BudgetAccountant()
    X, y = _data(case.data)
    X_before, y_before = X.copy(), y.copy()
    estimator = (case.estimator or nb)(acc)
    params_before = _params_snapshot(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. privacy_utility_front's NotPrivateWarning
        with pytest.raises(case.exc) as info:
            case.call(estimator, X, y, acc)
    message = str(info.value)
    assert any(name in message for name in case.names), (
        f"{type(info.value).__name__} does not name {case.names}: {message}")
    for pattern in case.absent:
        assert not re.search(pattern, message), f"names a non-existent option: {message}"
    assert acc.spent_budget == [], "a mistake was charged"
    assert np.array_equal(X, X_before) and np.array_equal(y, y_before), "the data were mutated"
    assert _params_snapshot(estimator) == params_before, "the estimator was mutated"


def test_the_table_is_large_and_covers_every_entry_point():
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
    prefixes = {c.id.split("-")[0] for c in CASES}
    assert {"grid", "random", "gibo", "privacy", "front", "kov", "repetition"} <= prefixes
