"""The sound fits of skdptune.estimators.models, switched in for a fit
(skdptune.estimators.sound_fitting)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from diffprivlib import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier, GaussianNB, LogisticRegression
from diffprivlib.utils import PrivacyLeakWarning
from diffprivlib.validation import clip_to_norm
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV, estimator_privacy
from skdptune.estimators import sound_fitting, switch_to_sound_fits
from skdptune.estimators.models import (
    INTERCEPT_COLUMN,
    InterceptColumnLogisticRegression,
    SeparateStreamsDecisionTreeClassifier,
)
from skdptune.estimators.models._logistic import logistic_regression_epsilon


def _data(n=300, d=3, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), np.linspace(-1, 1, classes - 1))
    return X, y


def _fit(model, X, y):
    with sound_fitting(model):
        return model.fit(X, y)


@pytest.mark.parametrize("classes", [2, 3])
def test_the_fit_is_diffprivlibs_without_intercept_on_the_constant_column(classes):
    """The same noise, the same objective: the coefficients of diffprivlib's model without
    intercept, at data_norm sqrt(q^2 + 1), on the rows clipped to q with a column of ones."""
    X, y = _data(classes=classes)
    q = 1.5
    ours = _fit(LogisticRegression(epsilon=2.0, data_norm=q, C=0.5, random_state=7), X, y)
    rows = np.hstack([clip_to_norm(X, q), np.full((len(X), 1), INTERCEPT_COLUMN)])
    plain = LogisticRegression(epsilon=2.0, data_norm=math.hypot(q, 1.0), C=0.5,
                               fit_intercept=False, random_state=7).fit(rows, y)
    np.testing.assert_array_equal(ours.coef_, plain.coef_[:, :-1])
    np.testing.assert_array_equal(ours.intercept_, plain.coef_[:, -1] * INTERCEPT_COLUMN)
    assert ours.coef_.shape == (1 if classes == 2 else classes, 3)
    np.testing.assert_array_equal(ours.classes_, np.arange(classes))
    assert ours.n_features_in_ == 3
    # the model predicts as any diffprivlib model: decision values from coef_ and intercept_
    # on the rows as given (unclipped, as diffprivlib's predict takes them)
    with_column = np.hstack([X, np.full((len(X), 1), INTERCEPT_COLUMN)])
    np.testing.assert_array_equal(ours.predict(X), plain.predict(with_column))


def test_the_intercept_is_regularised_where_diffprivlibs_runs_away():
    """All rows of one class but two padding-like rows: with diffprivlib's first branch and a
    large noise term, its unregularised intercept has no minimiser and runs off; the
    regularised one stays finite for every seed."""
    X = np.array([[0.0], [1.0], [0.0], [0.0]])
    y = np.array([1, 1, 0, 1])
    runaway = 0
    for seed in range(15):  # diffprivlib's runs away in 12 of them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = LogisticRegression(data_norm=1.0, C=1.0, epsilon=1.0,
                                        random_state=seed).fit(X, y)
        ours = _fit(LogisticRegression(data_norm=1.0, C=1.0, epsilon=1.0, random_state=seed),
                    X, y)
        runaway += abs(theirs.intercept_[0]) > 1e6
        assert abs(ours.intercept_[0]) < 1e3
    assert runaway >= 5  # the contrast the test relies on


def test_feature_names_sparse_rows_and_warm_start():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = _fit(LogisticRegression(epsilon=1.0, data_norm=2.0, random_state=0), frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    assert model.n_features_in_ == 3
    # sparse rows fail exactly as diffprivlib's own fit fails on them
    errors = []
    for fit in (lambda m: m.fit(sp.csr_matrix(X), y), lambda m: _fit(m, sp.csr_matrix(X), y)):
        try:
            fit(LogisticRegression(epsilon=1.0, data_norm=2.0, random_state=0))
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 -- comparing the two paths' outcomes
            errors.append(type(exc))
    assert errors[0] == errors[1]
    # warm start: the previous solution (intercept included) is the starting point
    warm = LogisticRegression(epsilon=50.0, data_norm=2.0, warm_start=True, random_state=0,
                              tol=1e-8, max_iter=1000)
    _fit(warm, X, y)
    first = warm.intercept_.copy()
    _fit(warm, X, y)
    np.testing.assert_allclose(warm.intercept_, first, atol=1e-4)


def test_the_accountant_is_charged_epsilon_once_and_checked_first():
    X, y = _data()
    acc = BudgetAccountant()
    _fit(LogisticRegression(epsilon=0.7, data_norm=2.0, accountant=acc), X, y)
    assert acc.spent_budget == [(0.7, 0)]
    short = BudgetAccountant(epsilon=0.5)
    model = LogisticRegression(epsilon=0.7, data_norm=2.0, accountant=short)
    with pytest.raises(Exception, match="(?i)budget"):
        _fit(model, X, y)
    assert short.spent_budget == []


def test_data_norm_none_and_no_intercept_are_diffprivlibs_own_fit():
    X, y = _data()
    with pytest.warns(PrivacyLeakWarning):
        _fit(LogisticRegression(epsilon=1.0, data_norm=None), X, y)
    ours = _fit(LogisticRegression(epsilon=1.0, data_norm=2.0, fit_intercept=False,
                                   random_state=3), X, y)
    theirs = LogisticRegression(epsilon=1.0, data_norm=2.0, fit_intercept=False,
                                random_state=3).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, theirs.coef_)


def test_the_switch_covers_pipelines_restores_the_class_and_keeps_the_parameters():
    lr = LogisticRegression(epsilon=1.0, data_norm=2.0, C=0.3)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-5, 5), classes=[0, 1])
    pipe = make_pipeline(FunctionTransformer(), lr)
    params = lr.get_params()
    with sound_fitting(pipe):
        assert type(pipe[-1]) is InterceptColumnLogisticRegression
        assert pipe[-1].get_params() == params
    assert type(pipe[-1]) is LogisticRegression
    with pytest.raises(RuntimeError), sound_fitting(tree):
        assert type(tree) is SeparateStreamsDecisionTreeClassifier
        raise RuntimeError
    assert type(tree) is DecisionTreeClassifier
    nb = GaussianNB(bounds=(-5, 5))
    assert switch_to_sound_fits(nb) is nb and type(nb) is GaussianNB
    switch_to_sound_fits(pipe)  # for good: what a throwaway clone keeps
    assert type(pipe[-1]) is InterceptColumnLogisticRegression
    assert type(clone(pipe)[-1]) is InterceptColumnLogisticRegression


@pytest.mark.parametrize("search", ["grid", "random", "gibo"])
def test_every_search_returns_the_users_class_fitted_soundly(search, monkeypatch):
    """Every fit of a search (dry run, tuning, refit) goes through the sound class, and the
    returned model is the user's diffprivlib class with a finite intercept."""
    fitted = []
    real = InterceptColumnLogisticRegression.fit

    def spy(self, X, y, sample_weight=None):
        fitted.append(type(self))
        return real(self, X, y, sample_weight=sample_weight)

    monkeypatch.setattr(InterceptColumnLogisticRegression, "fit", spy)
    X, y = _data(n=600)
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    kw = {"classes": [0, 1], "random_state": 0, "accountant": BudgetAccountant()}
    if search == "grid":
        model = DPGridSearchCV(est, {"C": [0.01, 1.0]}, epsilon=2.0, **kw)
    elif search == "random":  # tol above the batched runs' limit: fitted one by one
        model = DPRandomSearchCV(est, {"C": [0.01, 1.0], "tol": [1e-2]}, n_iter=3, **kw)
    else:
        model = DPGIBOSearchCV(est, {"C": (0.01, 1.0)}, n_iter=2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    assert fitted and set(fitted) == {InterceptColumnLogisticRegression}
    assert type(model.best_estimator_) is LogisticRegression
    assert np.isfinite(model.best_estimator_.intercept_).all()
    assert set(model.predict(X)) <= {0, 1}


def test_the_price_is_the_no_intercept_models_at_the_longer_rows():
    est = LogisticRegression(epsilon=1.0, data_norm=3.0, C=0.01)
    expected = logistic_regression_epsilon(1.0, math.hypot(3.0, 1.0), 0.01, False, 2)
    assert estimator_privacy(est, n_classes=2)[0] == expected
