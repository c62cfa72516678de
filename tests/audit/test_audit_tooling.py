"""Tests of the audit tooling itself: intervals, the epsilon lower bound, event selection.

An audit is only as good as its statistics, so each piece is checked against closed forms and
by simulation on mechanisms whose epsilon is known exactly (randomized response).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _audit import (
    clopper_pearson,
    cp_lower,
    cp_upper,
    epsilon_lower_bound,
    family_audit,
    split_audit,
)
from scipy import stats


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_clopper_pearson_closed_forms_at_the_edges(n):
    lo, hi = clopper_pearson(0, n, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / n))
    lo, hi = clopper_pearson(n, n, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / n))


@pytest.mark.parametrize("k, n", [(1, 10), (37, 200), (500, 1000), (3, 10000)])
def test_clopper_pearson_inverts_the_binomial_tails(k, n):
    lo, hi = cp_lower(k, n, 0.025), cp_upper(k, n, 0.025)
    assert lo < k / n < hi
    # the exact interval: P(X >= k | lo) = P(X <= k | hi) = 2.5 %
    assert stats.binom.sf(k - 1, n, lo) == pytest.approx(0.025, rel=1e-6)
    assert stats.binom.cdf(k, n, hi) == pytest.approx(0.025, rel=1e-6)


def test_clopper_pearson_covers_at_least_nominally():
    rng = np.random.RandomState(0)
    p, n = 0.07, 300
    ks = rng.binomial(n, p, size=4000)
    covered = np.mean([cp_lower(k, n, 0.025) <= p <= cp_upper(k, n, 0.025) for k in ks])
    assert covered >= 0.95


def test_invalid_counts():
    with pytest.raises(ValueError):
        cp_lower(5, 4, 0.05)
    with pytest.raises(ValueError):
        cp_upper(0, 0, 0.05)


def randomized_response(epsilon, n, rng, truth):
    """Report ``truth`` with probability e^eps / (1 + e^eps): exactly eps-DP."""
    keep = rng.uniform(size=n) < math.exp(epsilon) / (1 + math.exp(epsilon))
    return [truth if k else 1 - truth for k in keep]


def test_lower_bound_is_close_to_but_below_a_tight_mechanism():
    rng = np.random.RandomState(1)
    eps = 1.0
    a = randomized_response(eps, 200_000, rng, 1)
    b = randomized_response(eps, 200_000, rng, 0)
    lb = epsilon_lower_bound(a.count(1), len(a), b.count(1), len(b))
    assert 0.95 < lb <= eps


def test_lower_bound_covers_the_true_epsilon():
    """Over repeated experiments the bound exceeds the truth in at most ~alpha of them."""
    rng = np.random.RandomState(2)
    eps, n, trials = 1.0, 2000, 400
    p, q = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    above = sum(
        epsilon_lower_bound(rng.binomial(n, p), n, rng.binomial(n, q), n) > eps
        for _ in range(trials)
    )
    assert above / trials <= 0.05


def test_lower_bound_is_zero_without_evidence():
    assert epsilon_lower_bound(0, 100, 0, 100) == 0.0
    assert epsilon_lower_bound(50, 100, 50, 100) == 0.0


def uniform_outcomes(rng, n_outcomes, n):
    return [int(x) for x in rng.randint(n_outcomes, size=n)]


def test_choosing_the_event_on_the_same_runs_is_biased_and_the_split_is_not():
    """Identical distributions (true epsilon 0) over many outcomes: picking the best-looking
    event and bounding it on the same runs "finds" privacy loss; the split audit does not."""
    rng = np.random.RandomState(3)
    naive_positive = split_positive = 0
    trials = 60
    for _ in range(trials):
        a, b = uniform_outcomes(rng, 40, 2000), uniform_outcomes(rng, 40, 2000)
        # choosing and evaluating on the same runs: both "halves" are the whole sample
        naive_positive += split_audit(a * 2, b * 2).epsilon_lb > 0
        split_positive += split_audit(a, b).epsilon_lb > 0
    assert naive_positive / trials > 0.2      # the uncorrected maximum is not a valid bound
    assert split_positive / trials <= 0.1     # the split keeps the error rate near alpha


def test_family_audit_bonferroni_controls_the_error_rate():
    rng = np.random.RandomState(4)
    trials, positives = 60, 0
    events = [[o] for o in range(40)]
    for _ in range(trials):
        a, b = uniform_outcomes(rng, 40, 2000), uniform_outcomes(rng, 40, 2000)
        positives += family_audit(a, b, events).epsilon_lb > 0
    assert positives / trials <= 0.1


@pytest.mark.parametrize("audit", ["split", "family"])
def test_audits_find_most_of_a_known_epsilon_in_either_direction(audit):
    rng = np.random.RandomState(5)
    eps = 1.5
    a = randomized_response(eps, 40_000, rng, 0)   # the likely outcome differs per side,
    b = randomized_response(eps, 40_000, rng, 1)   # so both directions carry the loss
    if audit == "split":
        result = split_audit(a, b)
    else:
        result = family_audit(a, b, [[0], [1]])
    assert 0.8 * eps < result.epsilon_lb <= eps
    assert result.direction in ("D/D'", "D'/D")
    assert len(result.event) == 1
    assert "eps_lb" in str(result)


def test_split_audit_unions_outcomes_with_equal_ratios():
    """Splitting one high-ratio outcome into many rare ones must not lose power: the audit
    takes unions of the top-ranked outcomes."""
    rng = np.random.RandomState(6)
    eps, n = 1.0, 40_000
    pa = np.array([0.05] * 8 + [0.6])
    pb = np.concatenate([pa[:8] * math.exp(-eps), [0.0]])
    pb[-1] = 1 - pb[:8].sum()
    a = [int(x) for x in rng.choice(9, size=n, p=pa)]
    b = [int(x) for x in rng.choice(9, size=n, p=pb)]
    result = split_audit(a, b)
    assert len(result.event) > 1
    assert 0.8 * eps < result.epsilon_lb <= eps
