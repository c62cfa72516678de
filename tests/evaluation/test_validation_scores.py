"""Ranking and clustering scores of DPRandomSearchCV's noisy validation release.

The ranking scores' sensitivities are checked against brute force on small validation parts:
every replace-one neighbour of adversarial and random datasets, including label changes
(docs/random_search.md, section 2.6, derives the bounds).
"""

import itertools
import math

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score

from skdptune import DPRandomSearchCV
from skdptune.evaluation import _holdout
from skdptune.evaluation._scores import (
    RankingScore,
    SquaredDistanceScore,
    check_validation_score,
)


class Ranker:
    """A fitted binary 'model' whose decision function is the first feature."""

    classes_ = np.array([0, 1])

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, 0]


def _utility(name, values, labels):
    return float(np.mean(RankingScore(name)(Ranker(), np.c_[values], labels)))


@pytest.mark.parametrize("seed", range(5))
def test_ranking_utilities_are_the_metrics_times_a_public_constant_of_the_part(seed):
    rng = np.random.RandomState(seed)
    m = 57
    values = rng.randint(0, 12, size=m).astype(float)  # many ties
    labels = rng.randint(0, 2, size=m)
    n_pos = labels.sum()
    auc = _utility("roc_auc", values, labels) * (m * m // 4) / (n_pos * (m - n_pos))
    assert auc == pytest.approx(roc_auc_score(labels, values), abs=1e-12)
    ap = _utility("average_precision", values, labels) * m / n_pos
    assert ap == pytest.approx(average_precision_score(labels, values), abs=1e-12)


def test_ranking_utilities_stay_in_the_unit_interval_without_one_class():
    values = np.arange(6.0)
    for name in ("roc_auc", "average_precision"):
        assert _utility(name, values, np.zeros(6, dtype=int)) == 0.0
    assert _utility("average_precision", values, np.ones(6, dtype=int)) == 1.0
    # the largest U is at the most balanced split, perfectly ranked
    assert _utility("roc_auc", values, np.array([0, 0, 0, 1, 1, 1])) == 1.0


def _max_change(name, values, labels, grid):
    """Largest |u(D) - u(D')| over every replace-one neighbour D' (score in grid, any label)."""
    base = _utility(name, values, labels)
    worst = 0.0
    for i, v, label in itertools.product(range(len(values)), grid, (0, 1)):
        v2, l2 = values.copy(), labels.copy()
        v2[i], l2[i] = v, label
        worst = max(worst, abs(_utility(name, v2, l2) - base))
    return worst


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
@pytest.mark.parametrize("m", [2, 3, 5, 8])
def test_ranking_sensitivity_bound_holds_on_every_neighbour(name, m):
    bound = RankingScore(name).sensitivity_of_mean(m)
    grid = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0])
    rng = np.random.RandomState(m)
    datasets = [(np.arange(m, dtype=float), np.ones(m, dtype=int)),
                (np.arange(m, dtype=float), np.zeros(m, dtype=int)),
                (np.zeros(m), (np.arange(m) % 2).astype(int))]
    datasets += [(rng.choice(grid, size=m), rng.randint(0, 2, size=m)) for _ in range(15)]
    worst = max(_max_change(name, v, lab, grid) for v, lab in datasets)
    assert worst <= bound + 1e-12
    if name == "roc_auc" and m >= 2:
        assert worst == pytest.approx(bound)  # tight: one positive moved past m - 1 negatives


def test_ranking_sensitivities_closed_form():
    assert RankingScore("roc_auc").sensitivity_of_mean(100) == 99 / 2500
    assert RankingScore("roc_auc").sensitivity_of_mean(101) == 100 / 2550
    harmonic = sum(1 / k for k in range(1, 101))
    assert RankingScore("average_precision").sensitivity_of_mean(100) == pytest.approx(
        (2 * harmonic - 1) / 100)
    # against accuracy's 1/m: about 4x and 2 ln(m) x the noise
    assert RankingScore("roc_auc").sensitivity_of_mean(10_000) * 10_000 == pytest.approx(4, 1e-3)


def test_check_validation_score_refuses_what_it_cannot_bound():
    lr = DPLogisticRegression(data_norm=1.0)
    assert isinstance(check_validation_score("roc_auc", lr, np.array([0, 1])), RankingScore)
    with pytest.raises(ValueError, match="binary classifier only"):
        check_validation_score("roc_auc", lr, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="score_clip is not used"):
        check_validation_score("average_precision", lr, np.array([0, 1]), clip=1.0)


def _data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)


@pytest.mark.parametrize("scoring", ["roc_auc", "average_precision"])
@pytest.mark.parametrize("validation_size", [None, 0.2])
def test_random_search_releases_ranking_scores_with_their_sensitivity(scoring, validation_size,
                                                                      monkeypatch):
    """The noise's sensitivity is the ranking score's bound at the scored part's size: all
    rows by default for these batched runs, the validation part with one."""
    seen = []
    real = _holdout.Laplace

    def recording(**kw):
        seen.append(kw["sensitivity"])
        return real(**kw)

    monkeypatch.setattr(_holdout, "Laplace", recording)
    X, y = _data()
    acc = BudgetAccountant()
    search = DPRandomSearchCV(DPLogisticRegression(epsilon=1.0, data_norm=2.0),
                              {"C": [0.01, 1.0, 100.0]}, n_iter=3, scoring=scoring,
                              validation_size=validation_size, classes=[0, 1], random_state=0,
                              accountant=acc).fit(X, y)
    m = len(X) if validation_size is None else math.ceil(validation_size * len(X))
    assert seen and set(seen) == {RankingScore(scoring).sensitivity_of_mean(m)}
    assert acc.spent_budget == [(search.privacy_spent_.epsilon, search.privacy_spent_.delta)]
    assert search.score(X, y) == pytest.approx(
        (roc_auc_score if scoring == "roc_auc" else average_precision_score)(
            y, search.decision_function(X)))


def test_squared_distance_score():
    """The clusterers' score (no search can use it while diffprivlib's KMeans, its only
    clusterer, is refused: tests/test_side_channels.py)."""
    X = np.array([[0.0], [0.5], [2.0]])
    score = SquaredDistanceScore(clip=1.0)

    class Nearest:
        def transform(self, X):
            X = np.asarray(X, dtype=float)
            return np.abs(X - np.array([[0.0, 2.0]]))

    assert np.allclose(score(Nearest(), X, None), [1.0, 0.75, 1.0])
    assert np.allclose(SquaredDistanceScore(clip=0.1)(Nearest(), X, None), [1.0, 0.0, 1.0])
