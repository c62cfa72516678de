"""scikit-learn's ``model_selection/tests/test_search.py``, ported to the private searches.

Each test names the scikit-learn test it ports. The estimators are diffprivlib models with
public ``bounds`` / ``data_norm`` / ``classes`` (no ``PrivacyLeakWarning``), or pipelines of them
with data-independent steps. Where scikit-learn's mock estimators check what reaches ``fit``,
the port uses a subclass of a diffprivlib model (``_dp_double``), because a search refuses
any component that is neither differentially private nor data-independent.

Every adaptation says why (``ADAPTED: ...``); tests of behaviour that privacy forbids assert the
refusal, its message and that nothing was charged (``REFUSED: ...``). scikit-learn tests that do
not apply to any differentially private estimator are listed in ``NOT_APPLICABLE`` with the
reason. The counts are in docs/sklearn_differences.md.

Searches are built through :func:`make_search` only, so a change of a search's budget
parameters (e.g. the meaning of ``epsilon``) is adapted in one place.
"""

from __future__ import annotations

import io
import pickle
import re
import warnings
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from diffprivlib import BudgetAccountant
from diffprivlib.models import PCA, GaussianNB, KMeans, LogisticRegression
from scipy.stats import loguniform
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.impute import SimpleImputer
from sklearn.metrics import accuracy_score, f1_score, make_scorer, roc_auc_score
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    LeaveOneGroupOut,
    LeavePGroupsOut,
    ParameterGrid,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import (
    DPGIBOSearchCV,
    DPGridSearchCV,
    DPRandomSearchCV,
    NonPrivateComponentError,
    TooFewRowsWarning,
)
from skdptune._base import _param_arrays
from skdptune.estimators.models._registry import _BY_CLASS
from skdptune.linear_model import SSPRegressor

#: scikit-learn tests that no differentially private estimator can exercise (not counted as
#: ported): name -> reason
NOT_APPLICABLE = {
    "test_validate_parameter_input[ParameterGrid/ParameterSampler]": "tests scikit-learn's "
    "ParameterGrid/ParameterSampler themselves, which the searches reuse unchanged",
    "test_parameter_grid": "ParameterGrid itself",
    "test_param_sampler": "ParameterSampler itself",
    "test_parameters_sampler_replacement": "ParameterSampler itself",
    "test_grid_search_precomputed_kernel(_error_nonsquare)": "no diffprivlib model takes a "
    "precomputed kernel",
    "test_search_cv_pairwise_property_*": "no diffprivlib model is pairwise",
    "test_grid_search_with_multioutput_data": "no diffprivlib classifier is multi-output",
    "test_search_cv_sample_weight_equivalence": "diffprivlib models ignore sample_weight",
    "test_stochastic_gradient_loss_param": "SGDClassifier-specific",
    "test_custom_run_search / test__custom_fit_no_run_search": "the private searches are "
    "extended through _search_space/_plan_tuning/_run_tuning, not _run_search "
    "(docs/sklearn_differences.md)",
    "test_search_cv_results_rank_tie_breaking / test_grid_search_correct_score_results": "they "
    "read exact scores, which are never released",
    "test_search_cv_using_minimal_compatible_estimator": "the minimal estimators are not "
    "differentially private (refused: see test_nonprivate_step_is_refused_with_what_to_do)",
    "test_array_api_search_cv_classifier": "diffprivlib does not support the array API",
    "test_random_search_bad_cv / test_grid_search_cv_splits_consistency": "they need cv "
    "iterables over all rows; refused, see test_empty_cv_iterator_error",
    "test_callable_multimetric_*": "a callable returning a dict of metrics is refused like "
    "test_refit_callable (see test_callable_multimetric_scoring_is_refused)",
}

CLASSES = [0, 1]
BOUNDS = (-6.0, 6.0)


def nb(**kw):
    kw.setdefault("epsilon", 2.0)
    kw.setdefault("bounds", BOUNDS)
    return GaussianNB(**kw)


def lr(**kw):
    kw.setdefault("epsilon", 2.0)
    return LogisticRegression(data_norm=12.0, **kw)


def make_search(kind, estimator, space, *, strong_selection=False, **kw):
    """The one place searches are built: a fresh accountant, public labels, small settings.

    ``strong_selection`` gives the selection a generous budget, for tests that assert which
    candidate a clear utility gap selects.
    """
    if strong_selection and kind == "grid":
        kw.setdefault("epsilon", 4.0)
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("random_state", 0)
    # is_classifier reads _estimator_type (scikit-learn < 1.6) or the tags (>= 1.6; 1.8 removed
    # _estimator_type), and a Pipeline's is its last step's on both
    from sklearn.base import is_classifier

    if is_classifier(estimator):
        kw.setdefault("classes", CLASSES)
    if kind == "grid":
        kw.setdefault("min_partition_size", 50)
        return DPGridSearchCV(estimator, space, **kw)
    if kind == "random":
        kw.setdefault("n_iter", 3)
        return DPRandomSearchCV(estimator, space, **kw)
    if kind == "gibo":
        kw.setdefault("n_iter", 2)
        return DPGIBOSearchCV(estimator, space, **kw)
    raise ValueError(kind)


NB_SPACE = {"var_smoothing": [1e-9, 1e-3, 1e-1]}
GIBO_SPACE = {"C": (0.1, 10.0, "log")}


def spaces(kind):
    """A small space for GaussianNB (grid, random) or LogisticRegression (GIBO)."""
    return (lr(), GIBO_SPACE) if kind == "gibo" else (nb(), NB_SPACE)


def spent(search):
    return list(search.accountant.spent_budget)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=600, n_features=4, n_informative=3, n_redundant=0,
                               random_state=0)
    return np.clip(X, *BOUNDS), y


def _dp_double(base, **checks):
    """A subclass of a diffprivlib model that asserts what reaches ``fit`` (like scikit-learn's
    ``CheckingClassifier``), registered as its parent's model family so that the search treats
    it as the diffprivlib component it is (the fit is the parent's DP fit). Where the family fits
    with a sound subclass (``sound_fit``) or fits its unreleased models with a faster one
    (``unreleased_fit``), the double's family fits with a double of each."""

    def fit(self, X, y=None, sample_weight=None, **fit_params):
        if "check_X" in checks:
            assert checks["check_X"](X), f"unexpected X: {type(X)}"
        if "check_y" in checks:
            assert checks["check_y"](y), f"unexpected y: {type(y)}"
        expected = checks.get("expected_fit_params", [])
        missing = [name for name in expected if name not in fit_params]
        if missing:
            raise AssertionError(f"Expected fit parameter(s) {missing} not seen.")
        for name in expected:
            if len(fit_params[name]) != len(X):
                raise AssertionError(f"Fit parameter {name} has length "
                                     f"{len(fit_params[name])}; expected {len(X)}.")
        if "record_weights" in checks:  # a list shared by the copies fitted in this process
            checks["record_weights"].append(
                None if sample_weight is None else np.array(sample_weight, dtype=float))
        if checks.get("fit_once"):
            assert not hasattr(self, "has_been_fit_"), "fitted twice"
            self.has_been_fit_ = True
        self.fit_params_ = {k: v for k, v in fit_params.items() if np.isscalar(v)}
        parent = type(self).__mro__[1]  # ``base``, or the family's sound subclass
        return parent.fit(self, X, y) if y is not None else parent.fit(self, X)

    cls = type(f"Checking{base.__name__}", (base,), {"fit": fit})
    # skdptune finds a model's family by its exact class: the double belongs to its parent's
    family = _BY_CLASS[base]
    doubles = {name: type(f"Checking{fitted.__name__}", (fitted,), {"fit": fit})
               for name in ("sound_fit", "unreleased_fit")
               if (fitted := getattr(family, name)) is not None}
    if doubles:
        family = type(f"Checking{type(family).__name__}", (type(family),), doubles)()
    _BY_CLASS[cls] = family
    return cls


# ==============================================================================================
# Delegation
# ==============================================================================================

@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_grid_search(kind, data):
    """Port of test_grid_search: delegation smoke test and a bad scoring name.

    ADAPTED: scikit-learn asserts which candidate wins on a mock whose score is a step
    function; the private selection is randomized, so the port asserts that the winner is a
    candidate and that ``cv_results_`` lists the space. A bad scoring name fails before any data
    is read and charges nothing.
    """
    X, y = data
    space = {"C": [0.1, 1.0, 10.0]} if kind != "gibo" else GIBO_SPACE
    search = make_search(kind, lr(), space).fit(X, y)
    if kind == "grid":
        assert search.best_params_["C"] in space["C"]
        assert search.cv_results_["param_C"].data.tolist() == space["C"]
    search.score(X, y)
    np.testing.assert_array_equal(search.predict_proba(X),
                                  search.best_estimator_.predict_proba(X))
    np.testing.assert_array_equal(search.decision_function(X),
                                  search.best_estimator_.decision_function(X))
    np.testing.assert_array_equal(search.predict(X), search.best_estimator_.predict(X))
    np.testing.assert_array_equal(search.predict_log_proba(X),
                                  search.best_estimator_.predict_log_proba(X))
    assert not hasattr(search, "transform")

    bad = make_search(kind, lr(), space, scoring="sklearn")
    with pytest.raises(ValueError):
        bad.fit(X, y)
    assert spent(bad) == []


def test_transform_inverse_transform_round_trip():
    """Port of test_transform_inverse_transform_round_trip (and the transform delegation of
    test_grid_search) with diffprivlib's PCA keeping every component.

    ADAPTED: PCA's score (mean log-likelihood) is unbounded, so the search needs public
    ``score_bounds``.
    """
    X, _ = make_blobs(n_samples=600, n_features=3, random_state=0)
    X = np.clip(X, -12, 12)
    search = make_search("grid", PCA(n_components=3, epsilon=2.0, bounds=(-12, 12),
                                     data_norm=21.0),
                         {"whiten": [False]}, score_bounds=(-30.0, 0.0)).fit(X)
    np.testing.assert_allclose(search.inverse_transform(search.transform(X)), X, atol=1e-8)
    np.testing.assert_array_equal(search.transform(X), search.best_estimator_.transform(X))
    np.testing.assert_array_equal(search.score_samples(X),
                                  search.best_estimator_.score_samples(X))


@pytest.mark.parametrize("kind", ["grid", "random"])
def test_search_cv_score_samples_error(kind, data):
    """Port of test_search_cv_score_samples_error: same outer and inner messages."""
    X, y = data
    search = make_search(kind, nb(), NB_SPACE).fit(X, y)
    outer = f"'{type(search).__name__}' has no attribute 'score_samples'"
    with pytest.raises(AttributeError, match=outer) as info:
        search.score_samples(X)
    assert isinstance(info.value.__cause__, AttributeError)
    assert str(info.value.__cause__) == "'GaussianNB' object has no attribute 'score_samples'"


def test_predict_proba_disabled():
    """Port of test_predict_proba_disabled: an estimator without predict_proba."""
    X, _ = make_blobs(n_samples=400, centers=3, n_features=2, random_state=0)
    X = np.clip(X, -12, 12)
    search = make_search("grid", PCA(epsilon=2.0, bounds=(-12, 12), data_norm=17.0),
                         {"n_components": [1, 2]}, scoring=lambda est, X, y=None: 0.5,
                         score_bounds=(0, 1)).fit(X)
    assert not hasattr(search, "predict_proba")
    assert not hasattr(search, "decision_function")


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_n_features_in(kind, data):
    """Port of test_n_features_in."""
    X, y = data
    est, space = spaces(kind)
    search = make_search(kind, est, space)
    assert not hasattr(search, "n_features_in_")
    search.fit(X, y)
    assert search.n_features_in_ == X.shape[1]


def test_classes__property(data):
    """Port of test_classes__property."""
    X, y = data
    search = make_search("grid", nb(), NB_SPACE).fit(X, y)
    np.testing.assert_array_equal(search.best_estimator_.classes_, search.classes_)

    Xr = X
    yr = X @ np.array([1.0, -1.0, 0.5, 0.0])
    reg = make_search("grid", SSPRegressor(epsilon=2.0, bounds_X=BOUNDS, bounds_y=(-15, 15)),
                      {"alpha": [1.0, 10.0]}).fit(Xr, yr)
    assert not hasattr(reg, "classes_")

    assert not hasattr(make_search("grid", nb(), NB_SPACE), "classes_")
    no_refit = make_search("grid", nb(), NB_SPACE, refit=False).fit(X, y)
    assert not hasattr(no_refit, "classes_")


# ==============================================================================================
# Scoring
# ==============================================================================================

def test_grid_search_no_score(data):
    """Port of test_grid_search_no_score: an estimator without ``score`` needs a scoring."""
    X, y = data
    NoScore = _dp_double(GaussianNB)
    NoScore.score = property(lambda self: (_ for _ in ()).throw(AttributeError("no score")))
    with_score = make_search("grid", nb(), NB_SPACE, scoring="accuracy").fit(X, y)
    no_score = make_search("grid", NoScore(epsilon=2.0, bounds=BOUNDS), NB_SPACE,
                           scoring="accuracy").fit(X, y)
    # same seed, same utilities: the same private selection
    assert no_score.best_params_ == with_score.best_params_
    assert no_score.score(X, y) == with_score.score(X, y)

    search = make_search("grid", NoScore(epsilon=2.0, bounds=BOUNDS), NB_SPACE)
    with pytest.raises(TypeError, match="no scoring"):
        search.fit(X, y)
    assert spent(search) == []


def test_grid_search_score_method(data):
    """Port of test_grid_search_score_method: ``score`` uses the search's scoring.

    ADAPTED: scikit-learn compares searches with each other; the DP models of two searches
    differ, so each score is compared with the metric computed on its own returned model.
    """
    X, y = data
    by_default = make_search("grid", lr(), {"C": [0.1]}).fit(X, y)
    accuracy = make_search("grid", lr(), {"C": [0.1]}, scoring="accuracy").fit(X, y)
    auc = make_search("grid", lr(), {"C": [0.1]}, scoring="roc_auc").fit(X, y)
    assert accuracy.score(X, y) == pytest.approx(
        accuracy_score(y, accuracy.best_estimator_.predict(X)))
    assert by_default.score(X, y) == pytest.approx(
        accuracy_score(y, by_default.best_estimator_.predict(X)))
    assert auc.score(X, y) == pytest.approx(
        roc_auc_score(y, auc.best_estimator_.decision_function(X)))
    assert auc.score(X, y) != accuracy.score(X, y)


def test_grid_search_sparse_scoring(data):
    """Port of test_grid_search_sparse_scoring (dense part; sparse: test_grid_search_sparse).

    ADAPTED: a callable scorer has no known range, so it needs ``score_bounds``; without them it
    is refused before the data is read. With the range of f1 the utilities, hence the seeded
    selection and model, are those of ``scoring="f1"``.
    """
    X, y = data
    space = {"C": [0.1, 1.0]}
    f1 = make_search("grid", lr(), space, scoring="f1").fit(X, y)

    def f1_loss(y_true, y_pred):
        return -f1_score(y_true, y_pred)

    F1Loss = make_scorer(f1_loss, greater_is_better=False)
    unbounded = make_search("grid", lr(), space, scoring=F1Loss)
    with pytest.raises(ValueError, match=r"score_bounds=\(lo, hi\) is required"):
        unbounded.fit(X, y)
    assert spent(unbounded) == []
    loss = make_search("grid", lr(), space, scoring=F1Loss, score_bounds=(0.0, 1.0)).fit(X, y)
    assert loss.best_params_ == f1.best_params_
    np.testing.assert_array_equal(loss.predict(X), f1.predict(X))


def test_unsupervised_grid_search():
    """Port of test_unsupervised_grid_search.

    REFUSED: it searches a clusterer, and diffprivlib's only one, KMeans, is refused by every
    search (its update leaves an empty cluster's centre un-noised; docs/privacy.md): the
    refusal names why, before any data is read, and nothing is charged.
    """
    X, y = make_blobs(n_samples=1500, centers=3, n_features=2, cluster_std=0.5, random_state=0)
    X = np.clip(X, -12, 12)
    search = make_search("grid", KMeans(epsilon=4.0, bounds=(-12, 12)),
                         {"n_clusters": [2, 3, 4]}, scoring="adjusted_rand_score",
                         score_bounds=(-0.5, 1.0), min_partition_size=150)
    with pytest.raises(NonPrivateComponentError, match="not differentially private as "
                                                       "implemented"):
        search.fit(X, y)
    assert spent(search) == []


def test_gridsearch_no_predict():
    """Port of test_gridsearch_no_predict: a two-argument scorer ``scorer(estimator, X)``.

    ADAPTED: KernelDensity is not private, so diffprivlib's PCA stands in (it has no predict
    either); the scorer's range is declared with ``score_bounds``; ``best_score_`` (an exact
    score) does not exist.
    """
    X, _ = make_blobs(n_samples=1000, cluster_std=0.1, random_state=1,
                      centers=[[0, 1], [1, 0], [0, 0]])

    def custom_scoring(estimator, X):
        return 42 if estimator.n_components == 2 else 0

    search = make_search("grid", PCA(epsilon=2.0, bounds=(-2, 2), data_norm=3.0),
                         {"n_components": [1, 2]}, scoring=custom_scoring,
                         score_bounds=(0, 42)).fit(X)
    assert search.best_params_["n_components"] == 2
    assert search.score(X) == 42
    assert not hasattr(search, "best_score_")


# ==============================================================================================
# Multi-metric scoring and refit
# ==============================================================================================

@pytest.mark.parametrize("kind", ["grid", "random"])
def test_multimetric_selects_by_the_refit_metric(kind, data):
    """Port of test_grid_search_cv_results_multimetric / test_random_search_cv_results_multimetric.

    ADAPTED: no per-metric scores exist in ``cv_results_``. Selection by a named metric is the
    selection by that metric alone (same seed, same result); ``scorer_`` is the dict of
    scorers; ``score`` uses the refit metric.
    """
    X, y = data
    multi_scoring = (["accuracy", "log_loss"] if kind == "random"
                     else {"acc": "accuracy", "f1": "f1"})
    refit = "accuracy" if kind == "random" else "acc"
    multi = make_search(kind, lr(), {"C": [0.01, 1.0, 100.0]}, scoring=multi_scoring,
                        refit=refit).fit(X, y)
    # a metric name in refit refits on all rows, so the single-metric twin does too
    single = make_search(kind, lr(), {"C": [0.01, 1.0, 100.0]}, scoring="accuracy",
                         refit=True).fit(X, y)
    assert multi.best_params_ == single.best_params_
    np.testing.assert_array_equal(multi.predict(X), single.predict(X))
    assert isinstance(multi.scorer_, dict) and set(multi.scorer_) == set(multi_scoring)
    assert multi.score(X, y) == pytest.approx(accuracy_score(y, multi.predict(X)))
    assert not any("score" in key and key != "noisy_score" for key in multi.cv_results_)


def test_other_metrics_are_never_computed_on_private_data(data):
    """The non-selecting metrics run in the dry run (synthetic rows) only, never on the data."""
    X, y = data
    seen = []

    def spy(estimator, X_, y_):
        seen.append(bool(np.isin(np.asarray(X_)[:, 0], X[:, 0]).any()))  # a private row?
        return 0.5

    make_search("grid", nb(), NB_SPACE, scoring={"acc": "accuracy", "spy": spy},
                refit="acc").fit(X, y)
    assert seen and not any(seen)  # called on the dry run's synthetic rows only
    # the check can fail: the same spy as the selecting metric sees private rows
    seen.clear()
    make_search("grid", nb(), NB_SPACE, scoring={"acc": "accuracy", "spy": spy},
                refit="spy", score_bounds=(0, 1)).fit(X, y)
    assert any(seen)


def test_no_refit(data):
    """Port of test_no_refit.

    ADAPTED: DPRandomSearchCV with ``refit=False`` returns the winning run's model (already
    trained and paid for), unlike scikit-learn. REFUSED: ``refit=False`` with several metrics
    (scikit-learn then selects nothing; a private search must select by one metric).
    """
    X, y = data
    search = make_search("grid", lr(), {"C": [0.1, 1.0, 10.0]}, refit=False).fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert hasattr(search, "best_index_") and hasattr(search, "best_params_")
    for name in ("predict", "predict_proba", "predict_log_proba", "decision_function",
                 "score_samples", "transform", "inverse_transform"):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'") as info:
            getattr(search, name)(X)
        if name in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
            assert isinstance(info.value.__cause__, AttributeError)
            assert (f"`refit=False`. {name} is available only after refitting on the best "
                    "parameters") in str(info.value.__cause__)

    rand = make_search("random", lr(), {"C": [0.1, 1.0]}, refit=False).fit(X, y)
    assert hasattr(rand, "best_estimator_")

    scoring = {"acc": "accuracy", "prec": "precision"}
    for refit in [True, "recall", "accuracy", False]:
        bad = make_search("grid", lr(), {"C": [1.0]}, refit=refit, scoring=scoring)
        with pytest.raises(ValueError, match="For multi-metric scoring, the parameter refit "
                                             "must be set to a scorer key"):
            bad.fit(X, y)
        assert spent(bad) == []


def test_refit_string_single_metric(data):
    """``refit`` may name the single metric (its scorer name or "score"); another name is an
    error that says what to do."""
    X, y = data
    for refit in ("f1", "score"):
        make_search("grid", lr(), {"C": [1.0]}, scoring="f1", refit=refit).fit(X, y)
    bad = make_search("grid", lr(), {"C": [1.0]}, scoring="f1", refit="accuracy")
    with pytest.raises(ValueError, match="Use refit=True, or pass several metrics"):
        bad.fit(X, y)
    assert spent(bad) == []


@pytest.mark.parametrize("name", ["test_refit_callable", "test_refit_callable_invalid_type",
                                  "test_refit_callable_out_bound",
                                  "test_refit_callable_multi_metric"])
@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_refit_callable(name, kind, data):
    """REFUSED (ports of the four refit-callable tests): a callable refit chooses the index by
    reading exact scores of the private data; it is refused before any data is read."""
    X, y = data
    est, space = spaces(kind)
    kw = {"scoring": {"a": "accuracy", "b": "accuracy"}} if name.endswith("multi_metric") \
        else {}
    values = {"test_refit_callable": lambda r: 0, "test_refit_callable_invalid_type":
              lambda r: None, "test_refit_callable_out_bound": lambda r: 2,
              "test_refit_callable_multi_metric": lambda r: 0}
    search = make_search(kind, est, space, refit=values[name], **kw)
    with pytest.raises(ValueError, match="does not accept a callable refit: it chooses the "
                                         "best index by reading cv_results_ scores") as info:
        search.fit(X, y)
    assert "refit='<metric>'" in str(info.value)
    assert spent(search) == []


def test_callable_multimetric_scoring_is_refused(data):
    """REFUSED: a callable that returns a dict of metrics (test_callable_multimetric_*); the
    dry run finds it on synthetic data, and the message says what to do instead."""
    X, y = data

    def several(estimator, X_, y_):
        return {"a": 1.0, "b": 0.0}

    search = make_search("grid", nb(), NB_SPACE, scoring=several, score_bounds=(0, 1))
    with pytest.raises(ValueError, match="pass scoring as a dict of single-metric scorers"):
        search.fit(X, y)
    assert spent(search) == []


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_search_train_scores_set_to_false(kind, data):
    """Port of test_search_train_scores_set_to_false; REFUSED: ``return_train_score=True``."""
    X, y = data
    est, space = spaces(kind)
    make_search(kind, est, space, return_train_score=False).fit(X, y)
    search = make_search(kind, est, space, return_train_score=True)
    with pytest.raises(ValueError, match="train scores are exact scores of the private data"):
        search.fit(X, y)
    assert spent(search) == []


def test_refit(data):
    """Port of test_refit: every fit, including the refit, uses a fresh clone."""
    X, y = data
    Once = _dp_double(GaussianNB, fit_once=True)
    make_search("grid", Once(epsilon=2.0, bounds=BOUNDS), NB_SPACE, scoring="precision",
                refit=True).fit(X, y)


# ==============================================================================================
# cv_results_
# ==============================================================================================

@pytest.mark.parametrize("kind", ["grid", "random"])
def test_search_cv_results(kind, data):
    """Port of test_grid_search_cv_results / test_random_search_cv_results.

    ADAPTED: ``cv_results_`` holds only released information -- ``params``, typed masked
    ``param_*`` arrays and ``selected`` (plus the winner's ``noisy_score`` in random search).
    No ``mean_test_score``/``split*_``/``rank_test_score`` (exact scores), no ``*_time`` (timing
    is outside the guarantee and nothing would use it). DPRandomSearchCV lists the winning run
    only (the number of runs is not released).
    """
    X, y = data
    space = [{"C": [0.1, 1.0], "fit_intercept": [True]}, {"max_iter": [50, 100]}]
    search = make_search(kind, lr(), space).fit(X, y)
    results = search.cv_results_
    n = len(results["params"])
    assert n == (4 if kind == "grid" else 1)
    assert not [k for k in results if re.search(r"test_|train_|rank_|_time", k)]
    for key in results:
        if key.startswith("param_"):
            assert isinstance(results[key], np.ma.MaskedArray) and len(results[key]) == n
    assert results["selected"].sum() == 1 and results["selected"][search.best_index_]
    assert results["params"][search.best_index_] == search.best_params_
    if kind == "grid":
        assert results["param_C"].dtype == np.float64
        np.testing.assert_array_equal(results["param_C"].mask, [False, False, True, True])
        np.testing.assert_array_equal(results["param_max_iter"].mask,
                                      [True, True, False, False])
        assert results["param_fit_intercept"].dtype == bool
    else:
        assert set(results) - {"params", "selected", "noisy_score"} == {
            f"param_{k}" for k in results["params"][0]}


def test_search_cv_timing(data):
    """Port of test_search_cv_timing. ADAPTED: no timing is stored, ``refit_time_`` included
    (a fitted search is shared; its refit's duration follows the data)."""
    X, y = data
    for refit in (True, False):
        search = make_search("grid", nb(), NB_SPACE, refit=refit).fit(X, y)
        assert not [k for k in search.cv_results_ if k.endswith("_time")]
        assert not [k for k in vars(search) if "time" in k]


def test_search_cv_results_none_param(data):
    """Port of test_search_cv_results_none_param (``priors`` instead of ``random_state``)."""
    X, y = data
    search = make_search("grid", nb(), {"priors": [(0.5, 0.5), None]}).fit(X, y)
    assert search.cv_results_["param_priors"].dtype == object
    assert search.cv_results_["param_priors"][1] is None


@pytest.mark.parametrize("candidate_params, key, dtype, values, mask", [
    ([{"a": 1}, {"a": 2}], "param_a", np.int64, [1, 2], [False, False]),
    ([{"a": 1.0}, {"b": "x"}], "param_a", np.float64, [1.0, 0.0], [False, True]),
    ([{"a": 1.0}, {"b": "x"}], "param_b", object, [None, "x"], [True, False]),
    ([{"a": None}, {"a": 2}], "param_a", object, [None, 2], [False, False]),
    ([{"a": [1]}, {"a": [2, 3]}], "param_a", object, [[1], [2, 3]], [False, False]),
    ([{"a": (1, 2)}, {"a": (3, 4)}], "param_a", object, [(1, 2), (3, 4)], [False, False]),
    ([{"a": {"option": "A"}}, {"a": None}], "param_a", object, [{"option": "A"}, None],
     [False, False]),
])
def test_yield_masked_array_for_each_param(candidate_params, key, dtype, values, mask):
    """Port of test_yield_masked_array_for_each_param and test_cv_results_dtype_issue_29074:
    ``param_*`` arrays are typed as scikit-learn 1.5+ builds them."""
    array = _param_arrays(candidate_params)[key]
    assert array.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(array.mask, mask)
    for i, (value, masked) in enumerate(zip(values, mask, strict=True)):
        if not masked:
            assert array[i] == value


def test_yield_masked_array_no_runtime_warning():
    """Port of test_yield_masked_array_no_runtime_warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _param_arrays([{"param": i} for i in range(1000)])


def test_cv_results_multi_size_array():
    """Port of test_cv_results_multi_size_array (arrays of different sizes as values)."""
    arrays = _param_arrays([{"knots": np.zeros((10, 2))}, {"knots": np.zeros((11, 2))}])
    assert arrays["param_knots"].dtype == object


def test_search_with_estimators_issue_29157(data):
    """Port of test_search_with_estimators_issue_29157 / test_grid_search_pipeline_steps:
    estimators as parameter values give an object array of unfitted clones' originals.

    ADAPTED: OneHotEncoder/OrdinalEncoder are not private here; two diffprivlib models are.
    """
    X, y = data
    pipe = Pipeline([("clf", nb())])
    grid = {"clf": [nb(), lr()]}
    search = make_search("grid", pipe, grid).fit(X, y)
    values = search.cv_results_["param_clf"]
    assert values.dtype == object
    assert isinstance(values[0], GaussianNB) and isinstance(values[1], LogisticRegression)
    assert not hasattr(values[0], "theta_") and not hasattr(values[1], "coef_")
    assert values[0] is not search.best_estimator_.steps[-1][1]
    assert not hasattr(grid["clf"][0], "theta_") and not hasattr(grid["clf"][1], "coef_")


def test_search_with_2d_array(data):
    """Port of test_search_with_2d_array: tuple values stay tuples in an object array."""
    X, y = data
    search = make_search("random", nb(), {"priors": [(0.5, 0.5), (0.3, 0.7)]}).fit(X, y)
    result = search.cv_results_["param_priors"]
    assert result.dtype == object and isinstance(result[0], tuple)


# ==============================================================================================
# Fit parameters, groups, input formats
# ==============================================================================================

@pytest.mark.parametrize("kind", ["grid", "random"])
def test_SearchCV_with_fit_params(kind):
    """Port of test_SearchCV_with_fit_params (a regressor: see the padding test below).

    ADAPTED: a missing or misaligned fit parameter is found by the dry run on synthetic data:
    ``ValueError`` quoting the estimator's own message, nothing charged.
    """
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = X.sum(axis=1)
    Checking = _dp_double(SSPRegressor, expected_fit_params=["spam", "eggs"])
    est = Checking(epsilon=2.0, bounds_X=(-1, 1), bounds_y=(-3, 3))
    space = {"fit_intercept": [True, False]}
    search = make_search(kind, est, space)  # scored on the declared target range
    with pytest.raises(ValueError, match=re.escape("Expected fit parameter(s) ['eggs'] not "
                                                   "seen.")):
        search.fit(X, y, spam=np.ones(300))
    with pytest.raises(ValueError, match="Fit parameter spam has length 1; expected"):
        search.fit(X, y, spam=np.ones(1), eggs=np.zeros(300))
    assert spent(search) == []
    search.fit(X, y, spam=np.ones(300), eggs=np.zeros(300))


def test_row_aligned_fit_params_of_a_classifier_are_refused(data):
    """REFUSED: a classifier's fits get one public padding row per declared class; a
    row-aligned fit parameter other than sample_weight cannot be extended to them."""
    X, y = data
    Checking = _dp_double(GaussianNB, expected_fit_params=["spam"])
    search = make_search("grid", Checking(epsilon=2.0, bounds=BOUNDS), NB_SPACE)
    with pytest.raises(ValueError, match="cannot be extended to the public padding rows"):
        search.fit(X, y, spam=np.ones(len(X)))
    assert spent(search) == []


@pytest.mark.parametrize("kind", ["grid", "random"])
def test_scalar_fit_param(kind, data):
    """Ports of test_scalar_fit_param and test_scalar_fit_param_compat: non-row-aligned fit
    parameters (scalars, tuples of arrays, callables) reach every fit unchanged."""
    X, y = data
    Checking = _dp_double(GaussianNB)
    search = make_search(kind, Checking(epsilon=2.0, bounds=BOUNDS), NB_SPACE)
    search.fit(X, y, r=42, tuple_of_arrays=(X[:5], y[:5]), callable_param=len)
    assert search.best_estimator_.fit_params_ == {"r": 42}


def test_grid_search_groups(data):
    """Port of test_grid_search_groups: ``groups`` goes to the inner splitter of each partition.

    ADAPTED: a group splitter without ``groups`` fails in the public trial of the splitter,
    before any data is read, with scikit-learn's message; nothing is charged.
    """
    X, y = data
    groups = np.random.RandomState(0).randint(0, 3, len(X))
    for cv in [LeaveOneGroupOut(), LeavePGroupsOut(2), GroupKFold(n_splits=3),
               GroupShuffleSplit()]:
        search = make_search("grid", nb(), {"var_smoothing": [1e-9]}, cv=cv)
        with pytest.raises(ValueError, match="The 'groups' parameter should not be None."):
            search.fit(X, y)
        assert spent(search) == []
        search.fit(X, y, groups=groups)
    for cv in [StratifiedKFold(), StratifiedShuffleSplit()]:
        make_search("grid", nb(), {"var_smoothing": [1e-9]}, cv=cv).fit(X, y)


def test_groups_reach_the_inner_splitter(data):
    """Each inner split of each partition keeps whole groups apart."""
    X, y = data
    groups = np.arange(len(X)) % 7
    seen = []

    class Recording(GroupKFold):
        def split(self, X_, y_=None, groups_=None):
            for train, test in super().split(X_, y_, groups_):
                seen.append(set(groups_[train]) & set(groups_[test]))
                yield train, test

    make_search("grid", nb(), NB_SPACE, cv=Recording(n_splits=3)).fit(X, y, groups=groups)
    assert len(seen) > 3 and not any(seen)


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_groups_without_a_splitter_are_refused(kind, data):
    """REFUSED: ``groups`` where no splitter can use them (a holdout split, or the grid's own
    float/int cv); the message says what to do instead."""
    X, y = data
    est, space = spaces(kind)
    search = make_search(kind, est, space)
    with pytest.raises(ValueError, match=r"cv=GroupKFold\(n_splits=3\)"):
        search.fit(X, y, groups=np.arange(len(X)) % 3)
    assert spent(search) == []


def test_groups_under_metadata_routing(data):
    """``groups`` reaches the splitter with scikit-learn's metadata routing enabled too."""
    X, y = data
    with config_context(enable_metadata_routing=True):
        search = make_search("grid", nb(), NB_SPACE, cv=GroupKFold(n_splits=3))
        search.fit(X, y, groups=np.arange(len(X)) % 5)
    assert search.best_params_ in search.cv_results_["params"]


def test_X_as_list_and_y_as_list(data):
    """Ports of test_X_as_list and test_y_as_list. ADAPTED: a list ``X`` reaches the estimator
    as an object array of its rows as given (numpy would choose a list's dtype from all its
    values, and every subset's from its own: docs/privacy.md); ``y`` as a list."""
    X, y = data
    Checking = _dp_double(GaussianNB,
                          check_X=lambda x: isinstance(x, np.ndarray) and x.dtype == object,
                          check_y=lambda v: isinstance(v, list))
    search = make_search("grid", Checking(epsilon=2.0, bounds=BOUNDS), NB_SPACE,
                         cv=KFold(n_splits=3))
    search.fit(X.tolist(), y.tolist()).score(X, y)
    assert "params" in search.cv_results_


@pytest.mark.parametrize("kind", ["grid", "random"])
def test_pandas_input(kind, data):
    """Port of test_pandas_input: a DataFrame and a Series reach the estimator as such."""
    X, y = data
    X_df, y_ser = pd.DataFrame(X), pd.Series(y)
    Checking = _dp_double(GaussianNB, check_X=lambda x: isinstance(x, pd.DataFrame),
                          check_y=lambda v: isinstance(v, pd.Series))
    search = make_search(kind, Checking(epsilon=2.0, bounds=BOUNDS), NB_SPACE)
    search.fit(X_df, y_ser).score(X_df, y_ser)
    search.predict(X_df)
    assert "params" in search.cv_results_


def test_grid_search_error(data):
    """Port of test_grid_search_error: X and y of different lengths; nothing charged."""
    X, y = data
    search = make_search("grid", nb(), NB_SPACE)
    with pytest.raises(ValueError):
        search.fit(X[:580], y)
    assert spent(search) == []


def test_grid_search_sparse(data):
    """REFUSED (port of test_grid_search_sparse and the sparse half of
    test_grid_search_sparse_scoring): diffprivlib's models reject sparse input. The dry run
    finds it on synthetic data of the same format; nothing is charged."""
    X, y = data
    search = make_search("grid", lr(), {"C": [0.1, 1.0]})
    with pytest.raises(ValueError, match="Dry run failed before any private data was read"):
        search.fit(sp.csr_matrix(X), y)
    assert spent(search) == []


def test_gridsearch_nd():
    """REFUSED (port of test_gridsearch_nd): a private search takes a 2-d X (its public format
    is checked before anything is read)."""
    X_4d = np.zeros((200, 5, 3, 2))
    search = make_search("grid", nb(), NB_SPACE)
    with pytest.raises(ValueError, match="Expected a 2-d X"):
        search.fit(X_4d, np.arange(200) % 2)
    assert spent(search) == []


def test_grid_search_allows_nans(data):
    """Port of test_grid_search_allows_nans.

    ADAPTED: SimpleImputer(strategy="mean") learns the column means without privacy and is
    refused, naming the step (and no opt-out the search does not have); an imputer with a
    public constant (a FunctionTransformer) is data-independent and works.
    """
    X, y = data
    X = X.copy()
    X[2, :] = np.nan
    refused = make_search("grid", Pipeline([("imputer", SimpleImputer()), ("clf", nb())]),
                          {"clf__var_smoothing": [1e-9, 1e-3]})
    with pytest.raises(NonPrivateComponentError, match="'imputer'") as info:
        refused.fit(X, y)
    assert "allow_nonprivate" not in str(info.value)
    assert "has no opt-out" in str(info.value)
    assert spent(refused) == []
    imputer = FunctionTransformer(np.nan_to_num)
    make_search("grid", Pipeline([("imputer", imputer), ("clf", nb())]),
                {"clf__var_smoothing": [1e-9, 1e-3]}).fit(X, y)


def test_nonprivate_step_is_refused_with_what_to_do(data):
    """A non-private step: the message names it and a private replacement, no opt-out."""
    from sklearn.preprocessing import StandardScaler

    X, y = data
    for kind in ("grid", "random"):
        search = make_search(kind, Pipeline([("scale", StandardScaler()), ("clf", nb())]),
                             {"clf__var_smoothing": [1e-9]})
        with pytest.raises(NonPrivateComponentError) as info:
            search.fit(X, y)
        message = str(info.value)
        assert "diffprivlib.models.StandardScaler(bounds=...)" in message
        assert "allow_nonprivate" not in message
        assert spent(search) == []


# ==============================================================================================
# Failures and error_score
# ==============================================================================================

def _fail_above(X, limit):
    if np.abs(X).max() > limit:
        raise ValueError("Failing classifier failed as required")
    return X


@pytest.mark.usefixtures("unforeseen_failures")
def test_grid_search_failing_classifier(data):
    """Port of test_grid_search_failing_classifier.

    ADAPTED: the failures happen on the private rows only (the limit passes the dry run's
    synthetic rows), the failed candidate's partitions get ``error_score`` -- ``np.nan`` counts
    as the minimum utility 0, the ranking scikit-learn gives NaN -- and no FitFailedWarning is
    emitted: how many fits failed is a count over private data.
    """
    X, y = data
    X = X * 1.5  # |x| up to 9: the candidate with limit 5 fails on every partition
    pipe = Pipeline([("check", FunctionTransformer(_fail_above, kw_args={"limit": 100})),
                     ("clf", nb(bounds=(-9.0, 9.0)))])
    space = {"check__kw_args": [{"limit": 100}, {"limit": 5}, {"limit": 50}]}
    for error_score in (0.0, np.nan):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # public, data-independent: the search may warn that it has too few rows here
            warnings.filterwarnings("ignore", category=TooFewRowsWarning)
            search = make_search("grid", pipe, space, refit=False, error_score=error_score,
                                 strong_selection=True).fit(X, y)
        assert search.best_params_ != {"check__kw_args": {"limit": 5}}


def test_a_failure_the_dry_run_sees_charges_nothing(data):
    """ADAPTED (test_grid_search_failing_classifier with a data-independent failure): a
    candidate that fails on any data is a configuration mistake, found by the dry run."""
    X, y = data
    pipe = Pipeline([("check", FunctionTransformer(_fail_above)), ("clf", nb())])
    search = make_search("grid", pipe, {"check__kw_args": [{"limit": 100}, {"limit": -1}]})
    with pytest.raises(ValueError, match="Failing classifier failed as required"):
        search.fit(X, y)
    assert spent(search) == []


@pytest.mark.usefixtures("unforeseen_failures")
def test_grid_search_classifier_all_fits_fail(data):
    """ADAPTED (port of test_grid_search_classifier_all_fits_fail): scikit-learn raises "All the
    fits failed"; that is an event on the private data, so the private search releases its
    (randomized) selection and no exception or warning."""
    X, y = data
    pipe = Pipeline([("check", FunctionTransformer(_fail_above, kw_args={"limit": 3})),
                     ("clf", nb())])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # public, data-independent: the search may warn that it has too few rows here
        warnings.filterwarnings("ignore", category=TooFewRowsWarning)
        search = make_search("grid", pipe, {"clf__var_smoothing": [1e-9, 1e-3]},
                             refit=False).fit(X * 2, y)
    assert search.best_params_ in search.cv_results_["params"]


@pytest.mark.usefixtures("unforeseen_failures")
def test_grid_search_failing_classifier_raise(data):
    """Port of test_grid_search_failing_classifier_raise (plus the debugging warning)."""
    X, y = data
    pipe = Pipeline([("check", FunctionTransformer(_fail_above, kw_args={"limit": 3})),
                     ("clf", nb())])
    search = make_search("grid", pipe, {"clf__var_smoothing": [1e-9]}, refit=False,
                         error_score="raise")
    with pytest.warns(UserWarning, match="voids the differential privacy guarantee"):
        with pytest.raises(ValueError, match="Failing classifier failed as required"):
            search.fit(X * 2, y)


def test_searchcv_raise_warning_with_non_finite_score(data):
    """ADAPTED (port of test_searchcv_raise_warning_with_non_finite_score): a NaN score is the
    minimum utility and no warning is emitted (whether scores are finite depends on the data)."""
    X, y = data

    def nan_for_small(estimator, X_, y_):
        return np.nan if estimator.var_smoothing < 1e-2 else 0.5

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # public, data-independent: the search may warn that it has too few rows here
        warnings.filterwarnings("ignore", category=TooFewRowsWarning)
        search = make_search("grid", nb(), NB_SPACE, scoring=nan_for_small,
                             score_bounds=(0, 1), strong_selection=True).fit(X, y)
    assert search.best_params_ == {"var_smoothing": 1e-1}


@pytest.mark.parametrize("error_score", [-0.5, 2.0, np.inf])
def test_error_score_outside_the_utility_scale_is_refused(error_score, data):
    X, y = data
    search = make_search("grid", nb(), NB_SPACE, error_score=error_score)
    with pytest.raises(ValueError, match=r"utility in \[0, 1\].*or np.nan"):
        search.fit(X, y)
    assert spent(search) == []


# ==============================================================================================
# Parameters, pickling, clone, pipelines, n_jobs
# ==============================================================================================

@pytest.mark.parametrize("bad, error, message", [
    ({"var_smoothing": 1}, TypeError, "Parameter grid for parameter 'var_smoothing' needs to "
                                      "be a list or a numpy array, but got 1 (of type int)"),
    ({"var_smoothing": []}, ValueError, "Parameter grid for parameter 'var_smoothing' need to "
                                        "be a non-empty sequence, got: []"),
    ({"var_smoothing": "1,2,3"}, TypeError, "needs to be a list or a numpy array, but got "
                                            "'1,2,3' (of type str)"),
    ({"var_smoothing": np.ones((3, 2))}, ValueError, ""),
    (0, TypeError, ""),
])
def test_grid_search_bad_param_grid(bad, error, message, data):
    """Port of test_grid_search_bad_param_grid and test_validate_parameter_input: the grid is
    checked before any data is read; nothing is charged."""
    X, y = data
    search = make_search("grid", nb(), bad)
    with pytest.raises(error, match=re.escape(message)):
        search.fit(X, y)
    assert spent(search) == []


def test_grid_search_when_param_grid_includes_range(data):
    """Port of test_grid_search_when_param_grid_includes_range."""
    X, y = data
    search = make_search("grid", lr(), {"max_iter": range(50, 53)}).fit(X, y)
    assert search.best_params_["max_iter"] in range(50, 53)


def test_trivial_cv_results_attr(data):
    """Port of test_trivial_cv_results_attr."""
    X, y = data
    assert hasattr(make_search("grid", nb(), {"var_smoothing": [1e-9]}).fit(X, y),
                   "cv_results_")
    assert hasattr(make_search("random", nb(), {"var_smoothing": [1e-9]}, n_iter=1).fit(X, y),
                   "cv_results_")


def test_grid_search_one_grid_point(data):
    """Port of test_grid_search_one_grid_point.

    ADAPTED: scikit-learn compares the refit with a direct fit; DP fits are noisy, so the port
    checks the returned model's parameters and that a seeded search is reproducible.
    """
    X, y = data
    params = {"C": [2.0], "max_iter": [80]}
    a = make_search("grid", lr(), params).fit(X, y)
    b = make_search("grid", lr(), params).fit(X, y)
    assert a.best_estimator_.C == 2.0 and a.best_estimator_.max_iter == 80
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_pickle(kind, data):
    """Port of test_pickle."""
    X, y = data
    est, space = spaces(kind)
    search = make_search(kind, est, space).fit(X, y)
    restored = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_almost_equal(search.predict(X), restored.predict(X))
    assert restored.privacy_spent_.epsilon == search.privacy_spent_.epsilon


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_clone(kind):
    """clone keeps every parameter (nested ones too) and the shared accountant."""
    est, space = spaces(kind)
    search = make_search(kind, est, space)
    copy = clone(search)
    assert copy.accountant is search.accountant
    params, copied = search.get_params(), copy.get_params()
    assert params.keys() == copied.keys()
    assert copied["estimator__epsilon"] == params["estimator__epsilon"]
    copy.set_params(estimator__epsilon=0.5)
    assert search.estimator.epsilon != 0.5


def test_search_estimator_param(data):
    """Port of test_search_estimator_param: a step set from the grid; the grid is unchanged."""
    X, y = data
    params = {"clf": [lr(C=1.0)], "clf__C": [0.01]}
    # ADAPTED: the step is a classifier from the start (scikit-learn's test starts from None):
    # the search's estimator type -- classifier, hence a declared label set -- is public and
    # read from the estimator it is given
    pipe = Pipeline([("trs", FunctionTransformer()), ("clf", lr(C=5.0))])
    search = make_search("grid", pipe, params, classes=CLASSES, scoring="accuracy").fit(X, y)
    assert params["clf"][0].C == 1.0
    assert search.best_estimator_.named_steps["clf"].C == 0.01


def test_search_in_a_pipeline(data):
    """A search as a pipeline step and a pipeline as the searched estimator, nested names."""
    X, y = data
    inner = Pipeline([("scale", FunctionTransformer(lambda Z: Z / 2)),
                      ("clf", nb(bounds=(-3.0, 3.0)))])
    outer = Pipeline([("id", FunctionTransformer()),
                      ("search", make_search("grid", inner,
                                             {"clf__var_smoothing": [1e-9, 1e-2]}))])
    outer.fit(X, y)
    assert outer.predict(X).shape == (len(X),)
    assert "search__estimator__clf__epsilon" in outer.get_params()


@pytest.mark.parametrize("kind, kw", [("grid", {}), ("random", {}),
                                      ("random", {"n_iter": 250, "distribution": "fixed"})])
def test_n_jobs_consistency(kind, kw, data):
    """Results do not depend on n_jobs, to the last bit (seeds follow the candidate and
    partition, not the worker; batched runs are solved in groups cut whatever n_jobs is:
    250 runs are two groups)."""
    X, y = data
    one = make_search(kind, lr(), {"C": [0.1, 1.0, 10.0]}, n_jobs=1, **kw).fit(X, y)
    two = make_search(kind, lr(), {"C": [0.1, 1.0, 10.0]}, n_jobs=2, **kw).fit(X, y)
    assert one.best_params_ == two.best_params_
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)


def test_search_cv_verbose_3(data):
    """ADAPTED (port of test_search_cv_verbose_3): verbose output never shows a score."""
    X, y = data
    out = io.StringIO()
    with redirect_stdout(out):
        make_search("grid", lr(), {"C": [0.1]}, scoring="accuracy", verbose=3).fit(X, y)
    assert out.getvalue() and not re.search(r"score=|test=|train=", out.getvalue())


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_score_rejects_params_with_no_routing_enabled(kind, data):
    """Port of test_score_rejects_params_with_no_routing_enabled."""
    X, y = data
    est, space = spaces(kind)
    search = make_search(kind, est, space).fit(X, y)
    with pytest.raises(ValueError, match="is only supported if"):
        search.score(X, y, metadata=1)


def test_search_html_repr(data):
    """Port of test_search_html_repr with diffprivlib models."""
    X, y = data
    pipe = Pipeline([("id", FunctionTransformer()), ("clf", nb())])
    search = make_search("grid", pipe, {"clf": [nb(), lr()]}, refit=False)
    # scikit-learn >= 1.6 wraps the estimator's name in a <div>; 1.4 in a <label>: match the
    # name as an element's text, whatever the element
    shows_nb = re.compile(r">GaussianNB<")
    with config_context(display="diagram"):
        assert shows_nb.search(search._repr_html_())
    search.fit(X, y)
    with config_context(display="diagram"):
        assert shows_nb.search(search._repr_html_())


def test_empty_cv_iterator_error(data):
    """REFUSED (port of test_empty_cv_iterator_error): ``cv`` is applied inside each partition,
    so an iterable of splits over all rows is refused by the parameter validation (before any
    data is read); pass a splitter object."""
    X, y = data
    search = make_search("grid", nb(), NB_SPACE, cv=iter([]))
    with pytest.raises(ValueError, match="The 'cv' parameter of DPGridSearchCV must be"):
        search.fit(X, y)
    assert spent(search) == []


def test_random_search_with_distributions(data):
    """DPRandomSearchCV with scipy distributions, as RandomizedSearchCV (param_* typed)."""
    X, y = data
    search = make_search("random", lr(), {"C": loguniform(0.01, 10)}).fit(X, y)
    assert search.cv_results_["param_C"].dtype == np.float64



# ==============================================================================================
# Metadata routing (scikit-learn's test_search.py "Metadata Routing Tests" and the search rows
# of sklearn/tests/test_metaestimators_metadata_routing.py)
# ==============================================================================================

KINDS = ["grid", "random", "gibo"]


def routing_search(kind, estimator=None, **kw):
    """A search whose estimator (a diffprivlib model or a recording double) is given."""
    est, space = spaces(kind)
    return make_search(kind, estimator if estimator is not None else est, space, **kw)


def recording_scorer(calls, **requests):
    """``make_scorer`` of weighted accuracy that records what each call received (scikit-learn's
    ``ConsumingScorer``). The metric runs inside the private region, where an assertion would
    only become ``error_score``: tests assert on ``calls`` afterwards."""
    def metric(y_true, y_pred, sample_weight=None, metadata=None):
        calls.append({"y": np.asarray(y_true), "sample_weight": sample_weight,
                      "metadata": metadata})
        return accuracy_score(y_true, y_pred, sample_weight=sample_weight)
    return make_scorer(metric).set_score_request(**requests)


def private_calls(calls):
    """Calls on private rows: the metadata are the rows' ids (distinct); the dry run's synthetic
    metadata are ones."""
    return [c for c in calls if c["metadata"] is not None
            and len(set(np.asarray(c["metadata"]).tolist())) == len(c["metadata"]) > 1]


@pytest.mark.parametrize("kind", KINDS)
def test_default_request(kind):
    """Port of test_default_request: nothing is requested by default (a group splitter
    requests ``groups``, as in scikit-learn)."""
    from sklearn.utils.metadata_routing import MetadataRouter

    routing = routing_search(kind).get_metadata_routing()
    assert isinstance(routing, MetadataRouter)
    assert routing.consumes("fit", ["sample_weight", "metadata", "groups"]) == set()
    assert routing.consumes("score", ["sample_weight", "metadata"]) == set()
    grouped = make_search("grid", nb(), NB_SPACE, cv=GroupKFold(n_splits=3))
    assert grouped.get_metadata_routing().consumes("fit", ["groups", "sample_weight"]) == {
        "groups"}


@pytest.mark.parametrize("key", ["sample_weight", "metadata"])
@pytest.mark.parametrize("kind", KINDS)
def test_error_on_missing_requests_for_sub_estimator(kind, key, data):
    """Port of test_error_on_missing_requests_for_sub_estimator: metadata whose request is
    unset raises scikit-learn's UnsetMetadataPassedError, before any data is read."""
    from sklearn.exceptions import UnsetMetadataPassedError

    X, y = data
    Checking = _dp_double(GaussianNB if kind != "gibo" else LogisticRegression)
    est = Checking(epsilon=2.0, bounds=BOUNDS) if kind != "gibo" else \
        Checking(epsilon=2.0, data_norm=12.0)
    with config_context(enable_metadata_routing=True):
        search = routing_search(kind, est)
        if key == "sample_weight":
            # scikit-learn 1.4 says "... requested or not for", later versions "... or not
            # requested for"
            error, message = UnsetMetadataPassedError, (
                rf"\[{key}\] are passed but are not explicitly set as requested or not"
                rf"( requested)? for {type(est).__name__}\.fit")
        else:
            # ADAPTED: no diffprivlib fit declares `metadata` (scikit-learn's consuming
            # estimators do), so scikit-learn reports it as routed to no object (TypeError)
            error, message = TypeError, r"got unexpected argument\(s\) \{'metadata'\}"
        with pytest.raises(error, match=message):
            search.fit(X, y, **{key: np.ones(len(X))})
    assert spent(search) == []


@pytest.mark.parametrize("kind", KINDS)
def test_setting_request_on_sub_estimator_removes_error(kind, data):
    """Port of test_setting_request_on_sub_estimator_removes_error: a requested
    ``sample_weight`` reaches every fit of the estimator, restricted to its rows.

    ADAPTED: every fit of a classifier also gets the public padding rows, weighted 1; the
    ``metadata`` half of the test is refused for a classifier (a row-aligned fit parameter
    other than sample_weight cannot be extended to the padding rows: see
    test_row_aligned_fit_params_of_a_classifier_are_refused); scikit-learn's test also sets the
    scorer's request, which DPRandomSearchCV and DPGIBOSearchCV refuse (see
    test_weighted_scorer_is_refused_by_the_mean_based_searches).
    """
    X, y = data
    weights = np.random.RandomState(0).uniform(0.5, 2.0, len(X))
    record = []
    base = GaussianNB if kind != "gibo" else LogisticRegression
    Checking = _dp_double(base, record_weights=record)
    est = Checking(epsilon=2.0, bounds=BOUNDS) if kind != "gibo" else \
        Checking(epsilon=2.0, data_norm=12.0)
    with config_context(enable_metadata_routing=True):
        # scoring=None scores with the estimator's own score, which must say whether it wants
        # the weights too (scikit-learn's rule for its searches as well)
        est.set_fit_request(sample_weight=True).set_score_request(sample_weight=False)
        routing_search(kind, est).fit(X, y, sample_weight=weights)
    assert record and all(w is not None for w in record)
    fits = [w for w in record if not np.all(w == 1.0)]  # the dry run's weights are ones
    assert len(fits) >= 2  # inner fits and the returned model's
    private = set(np.round(weights, 12).tolist())
    for w in fits:
        assert np.all(w[-2:] == 1.0)  # the padding rows
        assert set(np.round(w[:-2], 12).tolist()) <= private  # a subset of the user's weights


@pytest.mark.parametrize("kind", KINDS)
def test_non_consuming_estimator_works(kind, data):
    """Port of test_non_consuming_estimator_works: routing enabled, no metadata."""
    X, y = data
    with config_context(enable_metadata_routing=True):
        search = routing_search(kind).fit(X, y)
        search.score(X, y)
    assert search.best_params_


@pytest.mark.parametrize("estimator", ["nb", "lr"])  # the one-by-one and the batched path
def test_multi_metric_search_forwards_metadata(estimator, data):
    """Port of test_multi_metric_search_forwards_metadata (DPGridSearchCV).

    ADAPTED: only the selecting metric is computed on the private data, so the consuming scorer
    is the ``refit`` metric (with a non-selecting consuming scorer, the metadata is accepted and
    never computed on: checked below). The metadata are the rows' ids, so the test checks that
    each call received the weights of exactly its validation rows, and that the validation rows
    of different partitions are disjoint.
    """
    X, y = data
    rng = np.random.RandomState(0)
    score_weights = rng.rand(len(X))
    ids = np.arange(len(X))
    est, space = (nb(), NB_SPACE) if estimator == "nb" else (lr(), {"C": [0.1, 1.0]})
    calls = []
    with config_context(enable_metadata_routing=True):
        scorer = recording_scorer(calls, sample_weight="score_weights",
                                  metadata="score_metadata")
        scoring = {"my_scorer": scorer, "accuracy": "accuracy"}
        search = make_search("grid", est, space, scoring=scoring, refit="my_scorer",
                             score_bounds=(0, 1))
        search.fit(X, y, score_weights=score_weights, score_metadata=ids)
    received = private_calls(calls)
    assert len(received) == len(ParameterGrid(space)) * search.n_partitions_
    validation_sets = set()
    for call in received:
        rows = np.asarray(call["metadata"])
        np.testing.assert_array_equal(call["sample_weight"], score_weights[rows])
        np.testing.assert_array_equal(call["y"], y[rows])
        validation_sets.add(frozenset(rows.tolist()))
    assert len(validation_sets) == search.n_partitions_
    assert sum(len(v) for v in validation_sets) == len(frozenset().union(*validation_sets))

    calls.clear()
    with config_context(enable_metadata_routing=True):
        scorer = recording_scorer(calls, sample_weight="score_weights",
                                  metadata="score_metadata")
        make_search("grid", est, space, scoring={"my_scorer": scorer, "accuracy": "accuracy"},
                    refit="accuracy").fit(X, y, score_weights=score_weights,
                                          score_metadata=ids)
    assert calls and not private_calls(calls)  # the dry run only


@pytest.mark.parametrize("kind", ["random", "gibo"])
def test_multi_metric_search_forwards_metadata_refused(kind, data):
    """REFUSED (port of test_multi_metric_search_forwards_metadata for RandomizedSearchCV):
    a noisy validation score is a mean over the validation rows, and a weighted mean has no
    bounded sensitivity without a public bound on the weights. Refused before any data is
    read, saying why and what to do instead; nothing charged."""
    X, y = data
    with config_context(enable_metadata_routing=True):
        scorer = recording_scorer([], sample_weight="score_weights")
        est, space = spaces(kind)
        selecting = "accuracy" if kind == "random" else "log_loss"
        search = make_search(kind, est, space, scoring={"my_scorer": scorer, selecting:
                                                        selecting}, refit=selecting)
        with pytest.raises(ValueError, match=r"cannot pass \['score_weights'\] to its scorer.*"
                                             r"no bounded sensitivity without a public bound "
                                             r"on the weights.*Use DPGridSearchCV"):
            search.fit(X, y, score_weights=np.ones(len(X)))
    assert spent(search) == []


@pytest.mark.parametrize("kind", ["random", "gibo"])
def test_weighted_scorer_is_refused_by_the_mean_based_searches(kind, data):
    """REFUSED (the scorer half of test_metadata_is_routed_correctly_to_scorer): the
    estimator's own score requesting sample_weight (scoring=None), as in scikit-learn."""
    X, y = data
    with config_context(enable_metadata_routing=True):
        est, space = spaces(kind)
        est = clone(est).set_fit_request(sample_weight=False).set_score_request(
            sample_weight=True)
        search = make_search(kind, est, space, accountant=BudgetAccountant())
        with pytest.raises(ValueError, match=r"cannot pass \['sample_weight'\] to its scorer"):
            search.fit(X, y, sample_weight=np.ones(len(X)))
        assert spent(search) == []
        # scoring the returned model on your own data may be weighted: it is not private
        search.fit(X, y)
        weights = np.linspace(0.1, 1.0, len(X))
        assert search.score(X, y, sample_weight=weights) == pytest.approx(
            search.best_estimator_.score(X, y, sample_weight=weights))


def test_metadata_is_routed_correctly_to_scorer(data):
    """Port of test_metadata_is_routed_correctly_to_scorer: ``fit`` and ``score`` route
    ``sample_weight`` to a requesting scorer; the estimator's fit, which does not request it,
    never receives it (the returned model included).

    ADAPTED: DPGridSearchCV only; the RandomizedSearchCV row is refused for the private
    random and GIBO searches (test_weighted_scorer_is_refused_by_the_mean_based_searches).
    """
    X, y = data
    weights = np.random.RandomState(1).uniform(0.0, 3.0, len(X))
    record, calls = [], []
    Checking = _dp_double(GaussianNB, record_weights=record)
    with config_context(enable_metadata_routing=True):
        est = Checking(epsilon=2.0, bounds=BOUNDS).set_fit_request(sample_weight=False)
        scorer = recording_scorer(calls, sample_weight=True)
        search = make_search("grid", est, NB_SPACE, scoring=scorer, score_bounds=(0, 1))
        search.fit(X, y, sample_weight=weights)
        assert record and all(w is None for w in record)
        assert any(c["sample_weight"] is not None and len(c["sample_weight"]) < len(X)
                   and set(c["sample_weight"]) <= set(weights) for c in calls)
        calls.clear()
        score = search.score(X, y, sample_weight=weights)
    assert len(calls) == 1 and calls[0]["sample_weight"] is weights
    assert score == pytest.approx(accuracy_score(y, search.predict(X), sample_weight=weights))


def test_metadata_is_routed_correctly_to_splitter(data):
    """Port of test_metadata_is_routed_correctly_to_splitter: ``groups`` and other metadata
    requested by a splitter reach it.

    ADAPTED: the splitter runs inside each partition, so it receives each partition's share of
    the metadata; DPGridSearchCV only (the other searches validate on a data-independent
    holdout and have no splitter: see test_groups_without_a_splitter_are_refused).
    """
    X, y = data
    ids = np.arange(len(X))
    seen = []

    class Consuming(GroupKFold):
        def split(self, X_, y_=None, groups=None, metadata=None):
            seen.append((np.asarray(groups), np.asarray(metadata)))
            return super().split(X_, y_, groups)

    groups = ids % 7
    with config_context(enable_metadata_routing=True):
        cv = Consuming(n_splits=3).set_split_request(groups=True, metadata=True)
        search = make_search("grid", nb().set_fit_request(sample_weight=False), NB_SPACE,
                             cv=cv)
        search.fit(X, y, groups=groups, metadata=ids)
    private = [(g, m) for g, m in seen if len(set(m.tolist())) == len(m) > 1]
    assert len(private) >= search.n_partitions_
    for g, m in private:
        np.testing.assert_array_equal(g, groups[m.astype(int)])


def test_metadata_routed_to_group_splitter(data):
    """Port of test_metadata_routed_to_group_splitter: a search with a group splitter inside
    ``cross_validate`` with routed ``groups`` (no "The 'groups' parameter should not be
    None")."""
    from sklearn.model_selection import cross_validate

    X, y = data
    groups = np.arange(len(X)) % 6
    with config_context(enable_metadata_routing=True):
        search = make_search("grid", nb(), NB_SPACE, cv=GroupKFold(n_splits=2),
                             min_partition_size=40)
        result = cross_validate(search, X, y, params={"groups": groups},
                                cv=GroupKFold(n_splits=2), scoring="accuracy")
    assert len(result["test_score"]) == 2
    assert len(spent(search)) == 2  # one charge per outer fold: the accountant is shared


@pytest.mark.parametrize("kind", KINDS)
def test_unrequested_metadata_is_refused(kind, data):
    """Metadata no object requests raises scikit-learn's TypeError before any data is read;
    nothing charged."""
    X, y = data
    with config_context(enable_metadata_routing=True):
        search = routing_search(kind)
        with pytest.raises(TypeError, match=r"unexpected argument\(s\) \{'no_such'\}"):
            search.fit(X, y, no_such=np.ones(len(X)))
    assert spent(search) == []


def test_routing_disabled_keeps_the_weights_away_from_the_scorer(data):
    """ADAPTED (port of test_unsupported_sample_weight_scorer): without metadata routing, fit
    parameters go to the estimator's fit (and ``groups`` to the splitter), never to the scorer
    -- as scikit-learn < 1.7 -- so no scorer can be handed weights it does not support, and
    there is nothing to warn about. scikit-learn 1.7 forwards sample_weight to a scorer that
    accepts it; docs/sklearn_differences.md says why the searches do not."""
    X, y = data
    record, calls = [], []

    def metric(y_true, y_pred, sample_weight=None):
        calls.append(sample_weight)
        return accuracy_score(y_true, y_pred, sample_weight=sample_weight)

    Checking = _dp_double(GaussianNB, record_weights=record)
    make_search("grid", Checking(epsilon=2.0, bounds=BOUNDS), NB_SPACE,
                scoring=make_scorer(metric), score_bounds=(0, 1)).fit(
        X, y, sample_weight=np.full(len(X), 2.0))
    assert calls and all(w is None for w in calls)
    assert record and all(w is not None for w in record)
