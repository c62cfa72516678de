"""Weighted partition utilities (DPGridSearchCV with a scorer that requests ``sample_weight``).

Privacy rests on one property: partition ``i``'s utility depends on partition ``i``'s rows and
their weights only, and lies in [0, 1]. These tests check it on both evaluation paths -- the
batched LogisticRegression solve (which computes accuracy itself) and the one-by-one fits --:
weighted utilities equal a direct computation; the weights of one partition cannot move another
partition's utility (bit for bit); a weighted score that fails gives ``error_score``; and the
searches check the weights before any private computation.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from sklearn import config_context
from sklearn.datasets import make_classification
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import KFold

from skdptune import DomainError, DPGridSearchCV
from skdptune._seeding import SeedPlan
from skdptune.evaluation._batched import _utility
from skdptune.evaluation._partitions import PartitionEvaluator
from skdptune.evaluation._scores import check_bounded_scorer
from skdptune.public import make_padding

#: the batched path (diffprivlib LogisticRegression with data_norm) and the one-by-one path
ESTIMATORS = {
    "batched": (LogisticRegression(epsilon=1.0, data_norm=2.0), [{"C": 0.1}, {"C": 1.0}]),
    "one-by-one": (GaussianNB(epsilon=1.0, bounds=(0.0, 1.0)),
                   [{"var_smoothing": 1e-9}, {"var_smoothing": 1e-2}]),
}


def _data(n=1200, seed=0):
    X, y = make_classification(n_samples=n, n_features=4, n_informative=3, n_redundant=0,
                               random_state=seed)
    weights = np.random.RandomState(seed + 1).uniform(0.0, 3.0, n)
    return np.clip((X + 4) / 8, 0, 1), y, weights


def _evaluator(estimator, X, y, scoring, *, cv=0.25, error_score=0.0, k=12):
    return PartitionEvaluator(
        estimator, check_bounded_scorer(scoring, (0.0, 1.0), estimator), n_partitions=k, cv=cv,
        inner_epsilon="scaled", n_jobs=1, pre_dispatch="2*n_jobs", error_score=error_score,
        seeds=SeedPlan(0), padding=make_padding(X, y, np.unique(y)))


def _weighted_mean_of_labels(estimator, X, y, sample_weight=None):
    """A scorer that ignores the model: its value is a direct function of the rows' labels and
    weights, so the test can compute each partition's utility by hand."""
    return float(np.average(y, weights=sample_weight))


@pytest.mark.parametrize("path", ESTIMATORS)
def test_weighted_utilities_equal_a_direct_computation(path):
    X, y, w = _data()
    est, candidates = ESTIMATORS[path]
    cv = KFold(n_splits=2)  # no shuffle: the validation rows are known
    evaluator = _evaluator(est, X, y, _weighted_mean_of_labels, cv=cv)
    out = evaluator.evaluate_partitions(X, y, candidates, {},
                                        score_params={"sample_weight": w})
    expected = [np.mean([np.average(y[rows[te]], weights=w[rows[te]])
                         for _, te in cv.split(rows)])
                for rows in evaluator.partitions(len(X))]
    for row in out:
        np.testing.assert_allclose(row, expected, rtol=1e-12)
    # the check can fail: unweighted, the utilities are the plain means
    unweighted = evaluator.evaluate_partitions(X, y, candidates, {})
    assert np.abs(unweighted - out).max() > 1e-3


@pytest.mark.parametrize("path", ESTIMATORS)
def test_weighted_accuracy_equals_scikit_learns_on_the_same_models(path):
    """The accuracy the searches compute themselves (batched: from the coefficients; one-by-one:
    ``_scores._accuracy``), weighted, equals scikit-learn's weighted accuracy_score on the same
    partition models (same seeds: same fits)."""
    X, y, w = _data()
    est, candidates = ESTIMATORS[path]
    ours = _evaluator(est, X, y, "accuracy").evaluate_partitions(
        X, y, candidates, {}, score_params={"sample_weight": w})
    sklearn_scorer = make_scorer(accuracy_score)
    theirs = _evaluator(est, X, y, sklearn_scorer).evaluate_partitions(
        X, y, candidates, {}, score_params={"sample_weight": w})
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    unweighted = _evaluator(est, X, y, "accuracy").evaluate_partitions(X, y, candidates, {})
    assert np.abs(unweighted - ours).max() > 1e-3
    # weights all one: exactly the unweighted utilities
    ones = _evaluator(est, X, y, "accuracy").evaluate_partitions(
        X, y, candidates, {}, score_params={"sample_weight": np.ones(len(X))})
    np.testing.assert_allclose(ones, unweighted, rtol=0, atol=1e-15)


def test_batched_accuracy_weights_each_validation_row():
    rng = np.random.RandomState(3)
    X, classes = rng.standard_normal((50, 3)), np.array([0, 1])
    y = rng.randint(0, 2, 50)
    w = rng.uniform(0, 2, 50)
    coef, intercept = rng.standard_normal((1, 3)), rng.standard_normal(1)
    scorer = check_bounded_scorer("accuracy", None, LogisticRegression())
    predicted = classes[((X @ coef.T + intercept)[:, 0] > 0).astype(int)]
    assert _utility(scorer, None, classes, coef, intercept, X, y,
                    {"sample_weight": w}) == pytest.approx(
        accuracy_score(y, predicted, sample_weight=w), abs=1e-15)


@pytest.mark.parametrize("scoring", ["accuracy", "model-free"])
@pytest.mark.parametrize("path", ESTIMATORS)
def test_one_partitions_weights_cannot_move_another_partitions_utility(path, scoring):
    X, y, w = _data()
    est, candidates = ESTIMATORS[path]
    scoring = _weighted_mean_of_labels if scoring == "model-free" else scoring
    evaluator = _evaluator(est, X, y, scoring)
    part = evaluator.partitions(len(X))[4]
    changed = w.copy()
    changed[part] = np.random.RandomState(9).uniform(0.0, 100.0, len(part))
    before = evaluator.evaluate_partitions(X, y, candidates, {},
                                           score_params={"sample_weight": w})
    after = evaluator.evaluate_partitions(X, y, candidates, {},
                                          score_params={"sample_weight": changed})
    np.testing.assert_array_equal(np.delete(after, 4, axis=1), np.delete(before, 4, axis=1))
    assert not np.array_equal(after[:, 4], before[:, 4])  # the check can fail
    assert np.all((after >= 0) & (after <= 1))


@pytest.mark.parametrize("path", ESTIMATORS)
def test_a_failed_weighted_score_gives_error_score(path):
    """All validation weights of a partition zero: its weighted mean is undefined (numpy
    raises), so that partition gets ``error_score``; nothing escapes and no other partition
    moves."""
    X, y, w = _data()
    est, candidates = ESTIMATORS[path]
    evaluator = _evaluator(est, X, y, "accuracy", error_score=0.375)
    part = evaluator.partitions(len(X))[2]
    zero = w.copy()
    zero[part] = 0.0
    clean = evaluator.evaluate_partitions(X, y, candidates, {},
                                          score_params={"sample_weight": w})
    out = evaluator.evaluate_partitions(X, y, candidates, {},
                                        score_params={"sample_weight": zero})
    assert np.all(out[:, 2] == 0.375)
    np.testing.assert_array_equal(np.delete(out, 2, axis=1), np.delete(clean, 2, axis=1))


def _weighted_search(accountant, **kw):
    scorer = make_scorer(accuracy_score).set_score_request(sample_weight=True)
    est = LogisticRegression(epsilon=1.0, data_norm=2.0).set_fit_request(sample_weight=False)
    return DPGridSearchCV(est, {"C": [0.1, 1.0, 10.0]}, epsilon=2.0, scoring=scorer,
                          score_bounds=(0, 1), classes=[0, 1], random_state=0,
                          accountant=accountant, **kw)


def test_weighted_search_costs_what_the_unweighted_one_costs():
    """End to end: weights change neither the cost nor the sensitivity (a partition utility is
    in [0, 1] whatever the weights), and the user's weights are not mutated."""
    X, y, w = _data(n=2000)
    w_before = w.copy()
    with config_context(enable_metadata_routing=True):
        weighted = _weighted_search(BudgetAccountant()).fit(X, y, sample_weight=w)
        plain = _weighted_search(BudgetAccountant()).fit(X, y)
    np.testing.assert_array_equal(w, w_before)
    assert weighted.privacy_spent_.epsilon == plain.privacy_spent_.epsilon == 2.0
    assert weighted.sensitivity_ == plain.sensitivity_ == 1 / weighted.n_partitions_
    assert weighted.best_params_ in weighted.cv_results_["params"]


@pytest.mark.parametrize("bad, error", [
    (lambda w: np.where(np.arange(len(w)) == 7, np.nan, w), DomainError),
    (lambda w: np.where(np.arange(len(w)) == 7, -1.0, w), DomainError),
    (lambda w: np.where(np.arange(len(w)) == 7, np.inf, w), DomainError),
    (lambda w: w[:-1], ValueError),
    (lambda w: np.column_stack([w, w]), ValueError),
    (lambda w: w.astype(str), ValueError),
    (lambda w: 2.0, ValueError),
])
def test_bad_weights_are_refused_before_any_private_computation(bad, error, monkeypatch):
    X, y, w = _data(n=600)
    acc = BudgetAccountant()

    def never(*args, **kwargs):  # the private region must not be entered
        raise AssertionError("private computation started")

    monkeypatch.setattr("skdptune._base.run_private", never)
    with config_context(enable_metadata_routing=True):
        with pytest.raises(error, match="sample_weight"):
            _weighted_search(acc).fit(X, y, sample_weight=bad(w))
    assert acc.spent_budget == []
