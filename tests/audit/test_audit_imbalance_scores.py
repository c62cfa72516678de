"""Audit of the noisy release of the imbalance-aware scores (docs/random_search.md section 2.7).

For each :class:`~skdptune.evaluation._scores.ConfusionScore`, the pair of neighbouring
validation parts that the proof says is (nearly) worst is scored by a fixed model, and the
score is released by the search's mechanism (that of ``_holdout.ScoreNoise``: diffprivlib's
Laplace with ``sensitivity_of_mean(m)``) many times on each side, with a claim of ``EPSILON``.
Events: the release above thresholds fixed in advance from the two exact values (a Bonferroni
family). The empirical lower bound must stay below the claim; with the sensitivity halved -- a
bound the brute force of tests/evaluation/test_imbalance_scores.py also rejects -- it must
exceed it. Seeded noise: deterministic.
"""

import numpy as np
import pytest
from _audit import family_audit

from skdptune.evaluation import _holdout
from skdptune.evaluation._scores import ConfusionScore

EPSILON = 1.0
RUNS = 10_000
M = 20


class Echo:
    def predict(self, X):
        return np.asarray(X)[:, 0]


def _worst_pair(name, n_classes):
    """``(labels, predictions)`` of two neighbouring parts of ``M`` rows (the last row
    replaced) whose scores differ by (nearly) the sensitivity."""
    if name == "f1":  # M - 1 false negatives; the last row a false negative, then a true one
        labels = np.ones(M, dtype=int)
        return (labels, np.zeros(M, dtype=int)), (labels, np.r_[np.zeros(M - 1, int), 1])
    if n_classes == 2:  # one correct row of class 0 moves to class 1, where it is wrong
        labels, predictions = np.r_[0, np.ones(M - 1, int)], np.r_[0, np.ones(M - 1, int)]
        return (labels, predictions), (np.ones(M, dtype=int), predictions)
    # three classes (the brute-force worst case at M = 20, 0.93 of the bound): the smallest
    # class, whose other rows are all wrong, loses its one correct row to another class
    labels = np.r_[np.zeros(5, int), np.ones(6, int), np.full(8, 2)]
    predictions = np.r_[np.ones(11, int), np.full(8, 2), 0]
    return (np.r_[labels, 0], predictions), (np.r_[labels, 1], predictions)


class Halved(ConfusionScore):
    def sensitivity_of_mean(self, m):
        return super().sensitivity_of_mean(m) / 2


def _audit(score, pair):
    (labels, predictions), (labels2, predictions2) = pair
    contributions = [score(Echo(), np.c_[p], y) for y, p in ((labels, predictions),
                                                             (labels2, predictions2))]
    low, high = sorted(float(np.mean(c)) for c in contributions)
    thresholds = [low, (low + high) / 2, high, high + score.sensitivity_of_mean(M)]

    def outcomes(c, side):
        # the mechanism of _holdout.ScoreNoise, built once per side (seeding a generator
        # per release would take a millisecond each)
        mechanism = _holdout.Laplace(epsilon=EPSILON, delta=0.0,
                                     sensitivity=score.sensitivity_of_mean(M), random_state=side)
        value = float(np.mean(c))
        return [int(np.searchsorted(thresholds, mechanism.randomise(value)))
                for _ in range(RUNS)]

    events = [range(j, len(thresholds) + 1) for j in range(1, len(thresholds) + 1)]
    return family_audit(outcomes(contributions[0], 0), outcomes(contributions[1], 1), events)


CASES = [("balanced_accuracy", 2), ("balanced_accuracy", 3), ("f1", 2)]
# the pairs' gaps as a share of the sensitivity: attained, 13/14 (the brute-force worst at
# M = 20), M / (M + 1)
GAP_SHARES = [1.0, 13 / 14, M / (M + 1)]


@pytest.mark.parametrize(("case", "share"), list(zip(CASES, GAP_SHARES, strict=True)))
def test_worst_pairs_gaps(case, share):
    score = ConfusionScore(case[0], range(case[1]))
    values = [np.mean(score(Echo(), np.c_[p], y)) for y, p in _worst_pair(*case)]
    assert abs(values[0] - values[1]) == pytest.approx(share * score.sensitivity_of_mean(M))


@pytest.mark.parametrize(("name", "n_classes"), CASES)
def test_noisy_release_is_within_its_claim(name, n_classes):
    result = _audit(ConfusionScore(name, range(n_classes)), _worst_pair(name, n_classes))
    assert result.epsilon_lb <= EPSILON
    assert result.epsilon_lb >= 0.5 * EPSILON  # the pair is a hard one: the audit has power


@pytest.mark.parametrize(("name", "n_classes"), CASES)
def test_halved_sensitivity_is_flagged(name, n_classes):
    result = _audit(Halved(name, range(n_classes)), _worst_pair(name, n_classes))
    assert result.epsilon_lb > EPSILON
