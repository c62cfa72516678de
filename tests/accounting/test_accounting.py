"""Every accounting rule against a closed form or an independent computation.

The independent implementations here (brute-force privacy-loss enumeration, Theorem 2 / 6 of
Papernot & Steinke optimised on fine grids, series sums of probability generating functions)
are written from the papers' formulas and share no code with ``skdptune.accounting``.
"""

from __future__ import annotations

import itertools
import json
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp
from scipy.stats import norm

from skdptune.accounting import (
    PrivacyComponent,
    PrivacyReport,
    doubling_svt_epsilon,
    doubling_svt_round_epsilon,
    event_cost,
    gdp_delta,
    gdp_epsilon,
    kov_optimal_composition_epsilon,
    parallel_composition,
    privacy_report,
    repetition_cost,
    repetition_epsilon,
    repetition_lemma20_delta,
    repetition_profile_epsilon,
    repetition_pure_epsilon,
    repetition_rdp_epsilon,
    sequential_composition,
    svt_max_above,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_mean,
)
from skdptune.accounting import _repetition as acc_repetition
from skdptune.events import (
    ComposedEvent,
    DoublingSVTEvent,
    EpsilonDeltaEvent,
    GaussianDPEvent,
    LaplaceEvent,
    ParallelEvent,
    PermuteAndFlipEvent,
    PrivacyEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
)

# --------------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------------


def test_sequential_composition_sums():
    assert sequential_composition([(1.0, 1e-6), (0.5, 0.0), (2.0, 1e-5)]) == pytest.approx(
        (3.5, 1.1e-5))
    assert sequential_composition([]) == (0.0, 0.0)
    assert sequential_composition(iter([(0.25, 0.0)] * 4)) == (1.0, 0.0)


def test_parallel_composition_is_componentwise_max():
    assert parallel_composition([(1.0, 1e-6), (0.5, 1e-5), (2.0, 0.0)]) == (2.0, 1e-5)
    assert parallel_composition([]) == (0.0, 0.0)


# --------------------------------------------------------------------------------------------
# doubling-step SVT
# --------------------------------------------------------------------------------------------


def test_doubling_svt_epsilon_closed_form():
    eps0 = 0.0625
    assert doubling_svt_epsilon(5, eps0) == pytest.approx(5 * eps0 + 3 * eps0)
    assert doubling_svt_epsilon(1, 1.0) == pytest.approx(2.0)
    assert doubling_svt_epsilon(10, 0.0) == 0.0


@pytest.mark.parametrize("n", [1, 2, 5, 17, 100])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.7])
def test_doubling_svt_round_epsilon_inverts(n, epsilon):
    eps0 = doubling_svt_round_epsilon(epsilon, n)
    assert eps0 == pytest.approx(2 * epsilon / (3 * n + 1))
    assert doubling_svt_epsilon(n, eps0) == pytest.approx(epsilon, rel=1e-14)


@pytest.mark.parametrize(("u0", "g", "expected"), [
    (0.5, 0.1, 5), (0.0, 0.1, 10), (0.3, 0.1, 7), (0.7, 0.1, 3), (0.9, 0.1, 1),
    (0.5, 0.15, 4), (0.5, 0.3, 2), (0.0, 0.3, 4), (0.8, 0.05, 4), (0.0, 1.0, 1), (0.0, 2.0, 1),
])
def test_svt_max_above_floating_point_cases(u0, g, expected):
    assert svt_max_above(u0, g) == expected


def test_svt_max_above_matches_exact_rational_arithmetic():
    for a in range(0, 100, 3):
        for b in (2, 3, 5, 7, 10, 20, 25, 50, 100):
            u0, g = Fraction(a, 100), Fraction(1, b)
            exact = max(1, math.ceil((1 - u0) / g))
            assert svt_max_above(float(u0), float(g)) == exact, (u0, g)


def _svt_transcript_costs(n: int) -> set[tuple[int, int]]:
    """(above, none) counts of every transcript of the doubling-step dynamics (exact integers).

    State: u = u0 + m g (integer m), step = 2^j. A round runs while u < 1, i.e. m < N, and
    step >= 1, i.e. j >= 0. Above: m += 2^j, j += 1. None: j -= 1.
    """
    counts = set()

    def walk(m, j, above, none):
        if m >= n or j < 0:
            counts.add((above, none))
            return
        walk(m + 2 ** j, j + 1, above + 1, none)
        walk(m, j - 1, above, none + 1)

    walk(0, 0, 0, 0)
    return counts


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_svt_bound_covers_every_transcript(n):
    """At most N above and N + 1 none rounds (the claim behind doubling_svt_epsilon)."""
    counts = _svt_transcript_costs(n)
    assert max(a for a, _ in counts) == n
    assert max(b for _, b in counts) <= n + 1
    worst = max(a + b / 2 for a, b in counts)
    assert worst <= doubling_svt_epsilon(n, 1.0)
    # the counting is not tight (see docs/accounting.md): the worst transcript costs (3N - 1)/2
    assert worst == pytest.approx((3 * n - 1) / 2)


def test_svt_validation():
    with pytest.raises(ValueError):
        svt_max_above(1.0, 0.1)
    with pytest.raises(ValueError):
        svt_max_above(0.5, 0.0)
    with pytest.raises(ValueError):
        doubling_svt_epsilon(0, 0.1)
    with pytest.raises(ValueError):
        doubling_svt_epsilon(2.5, 0.1)


# --------------------------------------------------------------------------------------------
# Kairouz-Oh-Viswanath optimal composition
# --------------------------------------------------------------------------------------------


def _brute_force_delta(epsilon: float, k: int, eps_total: float) -> float:
    """Hockey-stick divergence of k-fold binary randomized response, enumerating 2^k outcomes."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    q = 1 - p
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=k):
        ones = sum(outcome)
        prob_p = p ** ones * q ** (k - ones)
        prob_q = q ** ones * p ** (k - ones)
        total += max(0.0, prob_p - math.exp(eps_total) * prob_q)
    return total


def _brute_force_epsilon(epsilon: float, k: int, delta: float) -> float:
    if _brute_force_delta(epsilon, k, 0.0) <= delta:
        return 0.0
    return brentq(lambda x: _brute_force_delta(epsilon, k, x) - delta, 0.0, k * epsilon,
                  xtol=1e-13)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 10])
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-3, 0.05, 0.3])
def test_kov_matches_brute_force(k, epsilon, delta):
    ours = kov_optimal_composition_epsilon(epsilon, k, delta)
    assert ours == pytest.approx(_brute_force_epsilon(epsilon, k, delta), abs=1e-9)
    assert _brute_force_delta(epsilon, k, ours) <= delta * (1 + 1e-9) + 1e-15
    assert ours <= k * epsilon


@pytest.mark.parametrize("k", [1, 7, 100, 5000])
@pytest.mark.parametrize("epsilon", [0.01, 0.3, 2.0])
def test_kov_limits(k, epsilon):
    assert kov_optimal_composition_epsilon(epsilon, k, 0.0) == pytest.approx(k * epsilon)
    values = [kov_optimal_composition_epsilon(epsilon, k, d) for d in (1e-9, 1e-6, 1e-3, 0.1)]
    assert all(v <= k * epsilon for v in values)
    assert values == sorted(values, reverse=True)  # decreasing in delta
    # never above the advanced composition theorem (Dwork, Rothblum & Vadhan 2010)
    advanced = (epsilon * math.sqrt(2 * k * math.log(1 / 1e-6))
                + k * epsilon * math.expm1(epsilon))
    assert values[1] <= advanced + 1e-12


def test_kov_trivial_cases():
    assert kov_optimal_composition_epsilon(1.0, 0, 1e-5) == 0.0
    assert kov_optimal_composition_epsilon(0.0, 10, 1e-5) == 0.0
    assert kov_optimal_composition_epsilon(1.0, 10, 1.0) == 0.0


# --------------------------------------------------------------------------------------------
# Gaussian DP
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 1.0, 3.0, 8.0])
def test_gdp_delta_formula(mu, epsilon):
    direct = norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)
    assert gdp_delta(mu, epsilon) == pytest.approx(direct, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_gdp_epsilon_round_trip(mu, delta):
    eps = gdp_epsilon(mu, delta)
    assert gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu, eps) == pytest.approx(delta, rel=1e-6)


def test_gdp_known_value_and_gaussian_mechanism():
    from dp_accounting import get_epsilon_gaussian

    assert gdp_epsilon(1.0, 1e-5) == pytest.approx(4.377178, abs=1e-5)
    # sensitivity-1 Gaussian noise with sigma = 1/mu is exactly mu-GDP (Balle & Wang 2018)
    for mu in (0.5, 1.0, 2.0):
        assert gdp_epsilon(mu, 1e-6) == pytest.approx(get_epsilon_gaussian(1 / mu, 1e-6),
                                                      rel=1e-6)


def test_gdp_edges():
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_epsilon(1.0, 0.0) == math.inf
    assert gdp_epsilon(0.1, 0.5) == 0.0  # delta above the total variation distance
    assert gdp_delta(0.0, 1.0) == 0.0


# --------------------------------------------------------------------------------------------
# dp-accounting PLD count trap
# --------------------------------------------------------------------------------------------


def _rr_event(epsilon):
    from dp_accounting import RandomizedResponseDpEvent

    return RandomizedResponseDpEvent(noise_parameter=2 / (1 + math.exp(epsilon)), num_buckets=2)


def _pld_epsilon(events_and_counts, delta):
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    for event, count in events_and_counts:
        accountant.compose(event, count=count)
    return accountant.get_epsilon(delta)


def test_dp_accounting_pld_ignores_count_regression():
    """dp-accounting 0.6.0: the PLD accountant reports ONE run for T-fold randomized response.

    The library composes pure DP with the exact closed form (KOV) and never calls the PLD
    accountant; this test keeps the trap of docs/accounting.md, section 8, documented. If it
    fails, dp-accounting honours the count now: update docs/accounting.md, section 8, and this
    test.
    """
    from dp_accounting import SelfComposedDpEvent

    eps, count, delta = 0.5, 10, 1e-5
    single = _pld_epsilon([(_rr_event(eps), 1)], delta)
    with_count = _pld_epsilon([(_rr_event(eps), count)], delta)
    self_composed = _pld_epsilon([(SelfComposedDpEvent(_rr_event(eps), count), 1)], delta)
    separate = _pld_epsilon([(_rr_event(eps), 1)] * count, delta)
    correct = kov_optimal_composition_epsilon(eps, count, delta)
    assert correct > 5 * single
    assert separate == pytest.approx(correct, abs=0.01)  # separate compose calls are right
    trap_msg = "dp-accounting no longer ignores the count (trap fixed?): update the docs"
    assert with_count == pytest.approx(single, rel=1e-9), trap_msg
    assert self_composed == pytest.approx(single, rel=1e-9), trap_msg


def _log_space_kov_delta(epsilon: float, k: int, eps_total: float) -> float:
    """log of the hockey-stick of k-fold randomized response, summed in log space (no overflow)."""
    from scipy.special import gammaln, logsumexp

    l = np.arange(k + 1)
    log_binom = gammaln(k + 1) - gammaln(l + 1) - gammaln(k - l + 1)
    log_norm = k * np.logaddexp(0.0, epsilon)
    log_p = log_binom + l * epsilon - log_norm
    log_q = log_binom + (k - l) * epsilon - log_norm
    active = log_p > eps_total + log_q
    terms = log_p[active] + np.log(-np.expm1(eps_total + log_q[active] - log_p[active]))
    return float(logsumexp(terms)) if terms.size else -math.inf


def test_kov_is_finite_where_the_pld_accountant_overflowed():
    """eps = 2, 400 runs, delta = 1e-6 (docs/accounting.md, section 8). The answer, 719.57,
    exceeds log(max float) = 709.78, so any computation of e^eps overflows (dp-accounting's PLD
    returned inf; the PLD wrapper built on it was dropped). KOV works in log space and is
    exact."""
    ours = kov_optimal_composition_epsilon(2.0, 400, 1e-6)
    assert ours == pytest.approx(719.5722, abs=1e-3)
    assert _log_space_kov_delta(2.0, 400, ours) <= math.log(1e-6) + 1e-9
    assert _log_space_kov_delta(2.0, 400, ours - 1e-3) > math.log(1e-6)


# --------------------------------------------------------------------------------------------
# truncated negative binomial
# --------------------------------------------------------------------------------------------


def _tnb_log_pmf(k: np.ndarray, gamma: float, eta: float) -> np.ndarray:
    """log P[K = k] of Definition 1 (Papernot & Steinke), k >= 1."""
    if eta == 0:
        return k * math.log1p(-gamma) - np.log(k) - math.log(math.log(1 / gamma))
    # P[K=k] = (1-gamma)^k * eta / (gamma^-eta - 1) * Gamma(k + eta) / (Gamma(1 + eta) k!)
    return (k * math.log1p(-gamma) + math.log(eta / (gamma ** -eta - 1))
            + gammaln(k + eta) - gammaln(1 + eta) - gammaln(k + 1))


def _tnb_mean_formula(gamma: float, eta: float) -> float:
    if eta == 0:
        return (1 - gamma) / (gamma * math.log(1 / gamma))
    return eta * (1 - gamma) / (gamma * (1 - gamma ** eta))


CASES_MEAN_ETA = [(m, eta) for m in (1.5, 3.0, 10.0, 100.0) for eta in
                  (-0.9, -0.5, -0.1, 0.0, 0.5, 1.0, 2.0, 7.0)]


@pytest.mark.parametrize(("mean", "eta"), CASES_MEAN_ETA)
def test_gamma_solver_reproduces_mean(mean, eta):
    gamma = truncated_negative_binomial_gamma(mean, eta)
    assert 0 < gamma < 1
    assert _tnb_mean_formula(gamma, eta) == pytest.approx(mean, rel=1e-9)
    assert truncated_negative_binomial_mean(gamma, eta) <= mean  # rounded towards small E[K]
    if gamma > 1e-4:  # series sum of k P[K = k] (heavier tails are too long to sum)
        k = np.arange(1, int(60 / gamma) + 2, dtype=float)
        pmf = np.exp(_tnb_log_pmf(k, gamma, eta))
        assert pmf.sum() == pytest.approx(1.0, rel=1e-9)
        assert float(np.sum(k * pmf)) == pytest.approx(mean, rel=1e-8)


def test_gamma_solver_special_values():
    assert truncated_negative_binomial_gamma(10.0, 1.0) == pytest.approx(0.1)
    assert truncated_negative_binomial_gamma(1.0, 0.0) == 1.0
    with pytest.raises(ValueError):
        truncated_negative_binomial_gamma(0.5, 0.0)
    with pytest.raises(ValueError):
        truncated_negative_binomial_gamma(10.0, -1.0)


# --------------------------------------------------------------------------------------------
# randomized repetition: pure bounds
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("distribution", "eta", "factor"), [
    ("logarithmic", None, 2.0), ("geometric", None, 3.0), ("negative_binomial", 0.0, 2.0),
    ("negative_binomial", 0.5, 2.5), ("negative_binomial", 1.0, 3.0),
    ("negative_binomial", 2.0, 4.0), ("negative_binomial", -0.5, 1.5),
])
def test_pure_bound_is_corollary_3(distribution, eta, factor):
    for eps in (0.1, 1.0, 2.5):
        assert repetition_pure_epsilon(eps, distribution, eta) == pytest.approx(factor * eps)
        # delta = 0: only the pure bound is available
        assert repetition_cost(eps, 0.0, distribution, 10.0, eta, 0.0) == pytest.approx(
            (factor * eps, 0.0))


def test_pure_bound_poisson_and_fixed():
    assert repetition_pure_epsilon(1.0, "poisson") == math.inf
    assert repetition_pure_epsilon(0.3, "fixed", mean=7) == pytest.approx(2.1)
    with pytest.raises(ValueError):
        repetition_pure_epsilon(0.3, "fixed")
    with pytest.raises(ValueError):
        repetition_pure_epsilon(0.3, "geometric", eta=0.0)
    with pytest.raises(ValueError):
        repetition_pure_epsilon(0.3, "negative_binomial")
    with pytest.raises(ValueError):
        repetition_pure_epsilon(0.3, "uniform")


# --------------------------------------------------------------------------------------------
# randomized repetition: RDP bounds vs an independent implementation of Theorems 2 and 6
# --------------------------------------------------------------------------------------------

# lambda - 1 on a fine log grid, for both lambda and lambda-hat
_FINE = 1.0 + np.geomspace(1e-4, 1e8, 20000)


def _rr_renyi(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """D_lambda(P || Q) of the two-point distributions P = (e^eps, 1)/(1+e^eps), Q = reversed."""
    log_p = np.array([epsilon, 0.0]) - np.logaddexp(0.0, epsilon)
    log_q = log_p[::-1]
    terms = orders[:, None] * log_p[None, :] + (1 - orders[:, None]) * log_q[None, :]
    return logsumexp(terms, axis=1) / (orders - 1)


def _rdp_to_dp(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """Monotone envelope, then eps = r + log(1 - 1/a) - log(delta a)/(a - 1) (CKS20 Prop. 12)."""
    envelope = np.minimum.accumulate(rdp[::-1])[::-1]
    eps = envelope + np.log1p(-1 / orders) - np.log(delta * orders) / (orders - 1)
    return float(max(0.0, np.min(eps)))


def _independent_theorem2(epsilon, mean, eta, delta):
    gamma = brentq(lambda g: _tnb_mean_formula(g, eta) - mean, 1e-300, 1 - 1e-15,
                   xtol=1e-300, rtol=1e-15)
    d = _rr_renyi(epsilon, _FINE)
    constant = (1 + eta) * np.min((1 - 1 / _FINE) * d + math.log(1 / gamma) / _FINE)
    return _rdp_to_dp(_FINE, d + constant + math.log(mean) / (_FINE - 1), delta)


def _independent_theorem6(epsilon, mu, delta):
    """Theorem 6 corrected for P[K=0] > 0: e^{(l-1)D} <= e^-mu + mu e^{(l-1)(eps(l) + mu dhat)}."""
    kink = 1 + 1 / math.expm1(epsilon)  # e^eps-hat = 1 + 1/(lambda - 1) reaches e^eps here
    orders = np.sort(np.append(_FINE, kink))
    d = _rr_renyi(epsilon, orders)
    eps_hat = np.log1p(1 / (orders - 1))
    p_good = math.exp(epsilon) / (1 + math.exp(epsilon))
    delta_hat = np.maximum(0.0, p_good - np.exp(eps_hat) * (1 - p_good))
    log_bound = np.logaddexp(-mu, math.log(mu) + (orders - 1) * (d + mu * delta_hat))
    return _rdp_to_dp(orders, log_bound / (orders - 1), delta)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("mean", [2.0, 10.0, 1000.0])
@pytest.mark.parametrize(("distribution", "eta"), [
    ("logarithmic", None), ("geometric", None), ("negative_binomial", 0.5),
    ("negative_binomial", 2.0), ("negative_binomial", -0.5),
])
def test_theorem2_matches_independent_implementation(epsilon, mean, distribution, eta):
    delta = 1e-6
    ours = repetition_rdp_epsilon(epsilon, distribution, mean, eta, delta)
    shape = {"logarithmic": 0.0, "geometric": 1.0}.get(distribution, eta)
    reference = _independent_theorem2(epsilon, mean, shape, delta)
    assert ours >= reference * (1 - 1e-6)  # never claims more than Theorem 2 proves
    assert ours <= reference * 1.01


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("mu", [0.3, 1.0, 10.0, 1000.0])
def test_theorem6_matches_independent_implementation(epsilon, mu):
    ours = repetition_rdp_epsilon(epsilon, "poisson", mu, None, 1e-6)
    reference = _independent_theorem6(epsilon, mu, 1e-6)
    assert ours >= reference * (1 - 1e-6)
    assert ours <= reference * 1.01


def test_printed_theorem6_fails_for_small_mean_and_corrected_bound_holds():
    """Exact Renyi divergence of Poisson repetition of randomized response vs the bounds.

    Outputs: bot (K = 0, data-independent), bad, good; the best of K draws.
    """
    eps, mu = 1.0, 0.5

    def log_output(p_good):
        return np.array([-mu, math.log(math.exp(-mu * p_good) - math.exp(-mu)),
                         math.log(-math.expm1(-mu * p_good))])

    p_good = math.exp(eps) / (1 + math.exp(eps))
    a, b = log_output(p_good), log_output(1 - p_good)
    for lam in (1.1, 1.5, 2.0):  # e^eps <= 1 + 1/(lam - 1): delta-hat = 0
        exact = max(logsumexp(lam * a + (1 - lam) * b), logsumexp(lam * b + (1 - lam) * a))
        exact /= lam - 1
        base = _rr_renyi(eps, np.array([lam]))[0]
        printed = base + math.log(mu) / (lam - 1)
        corrected = math.log(math.exp(-mu) + mu * math.exp((lam - 1) * base)) / (lam - 1)
        assert exact > printed  # the printed Theorem 6 is false here (it is even negative)
        assert exact <= corrected + 1e-12


def test_own_theorem2_equals_dp_accounting_for_nonnegative_eta():
    """The in-house evaluation (used for eta < 0) agrees with dp-accounting where both apply."""
    for epsilon, mean, eta in itertools.product((0.1, 1.0), (2.0, 50.0), (0.0, 1.0, 3.0)):
        gamma = truncated_negative_binomial_gamma(mean, eta)
        own = acc_repetition._tnb_theorem2_epsilon(epsilon, eta, gamma, 1e-6)
        rdp = acc_repetition._tnb_rdp_epsilon(epsilon, eta, gamma, 1e-6)
        assert own == pytest.approx(rdp, rel=1e-6)


def test_min_of_pure_rdp_and_profile():
    # few runs: Theorem 2 beats Corollary 3, and the privacy profile beats both
    pure = repetition_pure_epsilon(1.0, "geometric")
    rdp = repetition_rdp_epsilon(1.0, "geometric", 2.0, None, 1e-6)
    profile = repetition_profile_epsilon(1.0, "geometric", 2.0, None, 1e-6)
    assert profile < rdp < pure
    assert repetition_cost(1.0, 0.0, "geometric", 2.0, None, 1e-6) == (profile, 1e-6)
    # many runs: Theorem 2 loses to Corollary 3, the profile still wins (it spends delta)
    rdp = repetition_rdp_epsilon(1.0, "geometric", 100.0, None, 1e-6)
    profile = repetition_profile_epsilon(1.0, "geometric", 100.0, None, 1e-6)
    assert profile < pure < rdp
    assert repetition_cost(1.0, 0.0, "geometric", 100.0, None, 1e-6) == (profile, 1e-6)
    # delta = 0: the pure bound, nothing else
    assert repetition_cost(1.0, 0.0, "geometric", 100.0, None, 0.0) == (pure, 0.0)
    assert repetition_epsilon(1.0, 0.0, "geometric", 100.0, None, 0.0) == pure


def test_poisson_requires_delta():
    with pytest.raises(ValueError, match="delta > 0"):
        repetition_epsilon(1.0, 0.0, "poisson", 10.0, None, 0.0)
    with pytest.raises(ValueError, match="delta > 0"):
        event_cost(RepeatAndSelectEvent(EpsilonDeltaEvent(1.0), "poisson", 10.0))
    eps, delta = repetition_cost(1.0, 0.0, "poisson", 10.0, None, 1e-6)
    assert eps == min(repetition_rdp_epsilon(1.0, "poisson", 10.0, None, 1e-6),
                      repetition_profile_epsilon(1.0, "poisson", 10.0, None, 1e-6))
    assert delta == 1e-6


def test_fixed_repetition_is_composition():
    assert repetition_cost(0.5, 0.0, "fixed", 10, None, 0.0) == (5.0, 0.0)
    eps, delta = repetition_cost(0.5, 0.0, "fixed", 10, None, 1e-6)
    assert eps == pytest.approx(kov_optimal_composition_epsilon(0.5, 10, 1e-6))
    assert eps < 5.0 and delta == pytest.approx(1e-6)
    # base delta: KOV Theorem 3.3, 1 - (1 - delta0)^n (1 - delta)
    eps, delta = repetition_cost(0.5, 1e-7, "fixed", 10, None, 1e-6)
    assert delta == pytest.approx(1 - (1 - 1e-7) ** 10 * (1 - 1e-6), rel=1e-9)
    assert repetition_cost(0.5, 1e-7, "fixed", 10, None, 0.0) == pytest.approx(
        (5.0, 1 - (1 - 1e-7) ** 10), rel=1e-9)
    with pytest.raises(ValueError):
        repetition_cost(0.5, 0.0, "fixed", 2.5, None, 0.0)


def test_mean_one_costs_the_base_run():
    assert repetition_cost(0.7, 1e-8, "logarithmic", 1.0, None, 1e-6) == (0.7, 1e-8)


# --------------------------------------------------------------------------------------------
# Lemma 20 / Corollary 21: base runs with delta_0 > 0
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mean", "eta"), [(3.0, 0.0), (10.0, 1.0), (10.0, 0.5), (5.0, 2.0),
                                           (3.0, -0.5)])
@pytest.mark.parametrize("delta0", [1e-6, 1e-3, 0.05])
def test_lemma20_against_series(mean, eta, delta0):
    distribution, shape = ("negative_binomial", eta)
    gamma = truncated_negative_binomial_gamma(mean, eta)
    k = np.arange(1, int(80 / gamma) + 2, dtype=float)
    pmf = np.exp(_tnb_log_pmf(k, gamma, eta))
    pgf = float(np.sum(pmf * (1 - delta0) ** k))
    assert repetition_lemma20_delta(delta0, distribution, mean, shape) == pytest.approx(
        1 - pgf, rel=1e-7)
    # K', with P[K'=k] proportional to P[K=k] (1-delta0)^k, is D_{eta, gamma'}
    reduced = pmf * (1 - delta0) ** k / pgf
    gamma_prime = 1 - (1 - gamma) * (1 - delta0)
    np.testing.assert_allclose(reduced, np.exp(_tnb_log_pmf(k, gamma_prime, eta)), rtol=1e-7,
                               atol=1e-300)


def test_lemma20_poisson_and_fixed():
    assert repetition_lemma20_delta(1e-4, "poisson", 30.0) == pytest.approx(1 - math.exp(-3e-3))
    assert repetition_lemma20_delta(1e-4, "fixed", 30) == pytest.approx(1 - (1 - 1e-4) ** 30)
    assert repetition_lemma20_delta(0.0, "geometric", 30.0) == 0.0


def test_repetition_with_base_delta():
    delta0, delta = 1e-6, 1e-6
    # pure route (delta = 0): ((2 + eta) eps0, delta')
    dprime = repetition_lemma20_delta(delta0, "geometric", 100.0)
    assert dprime == pytest.approx(100 * delta0, rel=1e-3)  # about E[K] delta0
    assert repetition_cost(1.0, delta0, "geometric", 100.0, None, 0.0) == pytest.approx(
        (3.0, dprime))
    # profile route: the bound for K' ~ D_{eta, gamma'} with delta + delta'
    for mean in (2.0, 100.0):
        eps, used = repetition_cost(1.0, delta0, "geometric", mean, None, delta)
        dprime = repetition_lemma20_delta(delta0, "geometric", mean)
        gamma_prime = 1 - (1 - truncated_negative_binomial_gamma(mean, 1.0)) * (1 - delta0)
        assert used == pytest.approx(delta + dprime)
        assert eps == pytest.approx(repetition_profile_epsilon(
            1.0, "geometric", 1 / gamma_prime, None, delta), rel=1e-9)
        assert eps <= repetition_profile_epsilon(1.0, "geometric", mean, None, delta)
        assert eps < min(3.0, repetition_rdp_epsilon(1.0, "geometric", mean, None, delta))
    # Poisson (Corollary 21): K' ~ Poisson(mu (1 - delta0)), delta + 1 - exp(-mu delta0)
    eps, used = repetition_cost(1.0, 1e-4, "poisson", 20.0, None, delta)
    assert used == pytest.approx(delta + 1 - math.exp(-20 * 1e-4))
    assert eps == pytest.approx(min(
        repetition_rdp_epsilon(1.0, "poisson", 20 * (1 - 1e-4), None, delta),
        repetition_profile_epsilon(1.0, "poisson", 20 * (1 - 1e-4), None, delta)), rel=1e-12)
    with pytest.raises(ValueError):
        repetition_cost(1.0, 1.0, "poisson", 20.0, None, delta)


# --------------------------------------------------------------------------------------------
# events, reports
# --------------------------------------------------------------------------------------------


def test_event_cost_of_every_event():
    assert event_cost(EpsilonDeltaEvent(1.5, 1e-6)) == (1.5, 1e-6)
    assert event_cost(LaplaceEvent(0.3)) == (0.3, 0.0)
    assert event_cost(PermuteAndFlipEvent(0.7)) == (0.7, 0.0)
    assert event_cost(DoublingSVTEvent(5, 0.0625)) == pytest.approx((0.5, 0.0))
    assert event_cost(GaussianDPEvent(1.0), delta=1e-5) == (gdp_epsilon(1.0, 1e-5), 1e-5)
    assert event_cost(GaussianDPEvent(0.0)) == (0.0, 0.0)
    with pytest.raises(ValueError):
        event_cost(GaussianDPEvent(1.0))
    repetition = RepeatAndSelectEvent(EpsilonDeltaEvent(0.5, 0.0), "geometric", 10.0)
    assert event_cost(repetition, delta=1e-6) == repetition_cost(0.5, 0.0, "geometric", 10.0,
                                                                 None, 1e-6)


def test_event_cost_rejects_unknown_events():
    class Unknown(PrivacyEvent):
        pass

    with pytest.raises(TypeError):
        event_cost(Unknown())
    with pytest.raises(TypeError):
        event_cost(ComposedEvent((LaplaceEvent(1.0), "not an event")))
    with pytest.raises(TypeError):
        event_cost(RepeatAndSelectEvent(LaplaceEvent(1.0), "geometric", 10.0))


def test_nested_composed_and_parallel():
    inner = ParallelEvent((LaplaceEvent(1.0), EpsilonDeltaEvent(2.0, 1e-6),
                           ComposedEvent((LaplaceEvent(0.5), LaplaceEvent(0.25)))))
    outer = ComposedEvent((inner, DoublingSVTEvent(2, 0.1), ComposedEvent((LaplaceEvent(0.1),))))
    assert event_cost(outer) == pytest.approx((2.0 + 0.35 + 0.1, 1e-6))


def test_delta_is_split_between_parts_that_use_it():
    mu, delta = 1.0, 1e-5
    repeated = SelfComposedEvent(EpsilonDeltaEvent(0.1, 0.0), 20)
    both = ComposedEvent((GaussianDPEvent(mu), LaplaceEvent(1.0), repeated))
    eps, used = event_cost(both, delta)
    assert used == pytest.approx(delta)
    assert eps == pytest.approx(gdp_epsilon(mu, delta / 2) + 1.0
                                + event_cost(repeated, delta / 2)[0])
    # a parallel event hands its whole share to every part
    parallel = ParallelEvent((GaussianDPEvent(mu), GaussianDPEvent(2 * mu)))
    assert event_cost(parallel, delta) == (gdp_epsilon(2 * mu, delta), delta)
    report = privacy_report([("a", GaussianDPEvent(mu)), ("b", LaplaceEvent(1.0)),
                             ("c", parallel)], delta=delta)
    assert report.delta == pytest.approx(delta)
    assert report.components[0].delta == pytest.approx(delta / 2)
    assert report.components[1].delta == 0.0


@pytest.fixture
def report():
    return privacy_report([
        ("tuning: doubling SVT selection", DoublingSVTEvent(5, 0.0625)),
        ("returned model", EpsilonDeltaEvent(1.0, 1e-7)),
    ])


def test_privacy_report_totals_and_detail(report):
    assert report.epsilon == pytest.approx(1.5)
    assert report.delta == pytest.approx(1e-7)
    assert report.components[0] == PrivacyComponent(
        "tuning: doubling SVT selection", 0.5, 0.0, "doubling SVT, N=5 above rounds, eps0=0.0625")
    assert report.neighbouring == "replace-one (bounded DP)"
    assert report.composition == "sequential"


def test_privacy_report_unpacks_renders_serialises_pickles(report):
    eps, delta = report
    assert (eps, delta) == (report.epsilon, report.delta)
    text = str(report)
    lines = text.splitlines()
    assert lines[0].split() == ["component", "epsilon", "delta", "detail"]
    assert any(line.startswith("TOTAL") and "1.5" in line for line in lines)
    assert "replace-one" in lines[-1]
    assert "doubling SVT, N=5 above rounds, eps0=0.0625" in text
    # the epsilon column is aligned
    header_end = lines[0].index("epsilon") + len("epsilon")
    assert all(line[header_end - 1] != " " for line in lines[2:4])
    as_dict = report.as_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["components"][1] == {"name": "returned model", "epsilon": 1.0,
                                        "delta": 1e-7, "detail": "(1, 1e-07)-DP mechanism"}
    assert pickle.loads(pickle.dumps(report)) == report
    assert isinstance(PrivacyReport(1.0, 0.0, [PrivacyComponent("x", 1.0, 0.0)]).components,
                      tuple)


def test_privacy_report_repetition_detail():
    event = RepeatAndSelectEvent(EpsilonDeltaEvent(1.0), "geometric", 100.0)
    line = privacy_report([("tuning", event)], delta=0.0).components[0]
    assert line.epsilon == 3.0 and line.delta == 0.0
    assert "geometric" in line.detail and "Cor. 3" in line.detail
    line = privacy_report([("tuning", event)], delta=1e-6).components[0]
    assert line.epsilon < 3.0 and line.delta == 1e-6
    assert "privacy profile" in line.detail


# -- self-composition (the M fits of DP-GIBO) ----------------------------------------------------
@pytest.mark.parametrize("epsilon, count, delta", [(0.05, 40, 1e-6), (0.5, 3, 1e-6),
                                                   (0.1, 100, 1e-5), (1.0, 1, 1e-6)])
def test_self_composition_is_the_smaller_of_basic_and_optimal(epsilon, count, delta):
    from skdptune.accounting import kov_optimal_composition_epsilon, self_composition_cost
    from skdptune.events import EpsilonDeltaEvent, SelfComposedEvent

    eps, used, rule = self_composition_cost(epsilon, 0.0, count, delta)
    optimal = kov_optimal_composition_epsilon(epsilon, count, delta) if count > 1 else math.inf
    assert eps == pytest.approx(min(count * epsilon, optimal))
    assert ("optimal" in rule) == (optimal < count * epsilon)
    assert used == pytest.approx(delta if "optimal" in rule else 0.0)
    event = SelfComposedEvent(EpsilonDeltaEvent(epsilon), count)
    assert event_cost(event, delta) == (eps, used)


def test_self_composition_of_approximate_dp_adds_the_base_deltas():
    from skdptune.accounting import kov_optimal_composition_epsilon, self_composition_cost

    eps, dlt, _ = self_composition_cost(0.05, 1e-7, 50, 1e-6)
    assert eps == pytest.approx(kov_optimal_composition_epsilon(0.05, 50, 1e-6))
    assert dlt == pytest.approx(1 - (1 - 1e-7) ** 50 * (1 - 1e-6))
    assert self_composition_cost(0.05, 1e-7, 50, 0.0) == (2.5, pytest.approx(5e-6),
                                                          "basic composition")


# -- report lines with a breakdown (privacy_spent_ of a pipeline) -------------------------------
def test_privacy_report_lines_with_parts_render_serialise_and_keep_the_numbers():
    parts = (PrivacyComponent("scaler (diffprivlib.models.StandardScaler)", 0.5, 0.0,
                              "as configured"),
             PrivacyComponent("clf (diffprivlib.models.LogisticRegression)", 2.0, 0.0,
                              "max over the search space (epsilon from 0.1 to 2)"))
    plain = privacy_report([("tuning", PermuteAndFlipEvent(1.0)),
                            ("returned model", EpsilonDeltaEvent(2.5))])
    report = privacy_report([("tuning", PermuteAndFlipEvent(1.0)),
                             ("returned model", EpsilonDeltaEvent(2.5), list(parts))])
    # the numbers are those of the report without the breakdown
    assert (report.epsilon, report.delta) == (plain.epsilon, plain.delta) == (3.5, 0.0)
    assert [(c.epsilon, c.delta) for c in report.components] == [(1.0, 0.0), (2.5, 0.0)]
    assert report.components[1].parts == parts and report.components[0].parts == ()
    lines = report.to_text(width=200).splitlines()
    model = next(i for i, line in enumerate(lines) if line.startswith("returned model"))
    assert lines[model + 1].startswith("  - scaler (diffprivlib.models.StandardScaler)")
    assert lines[model + 2].startswith("  - clf (diffprivlib.models.LogisticRegression)")
    assert lines[model + 2].rstrip().endswith("max over the search space (epsilon from 0.1 to 2)")
    assert lines[model + 3].startswith("---") and lines[model + 4].startswith("TOTAL")
    # epsilon column aligned for parts too
    end = lines[0].index("epsilon") + len("epsilon")
    assert lines[model + 2][end - 1] == "2" and lines[model + 1][end - 3:end] == "0.5"
    as_dict = report.as_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["components"][1]["parts"][1]["epsilon"] == 2.0
    assert "parts" not in as_dict["components"][0]
    assert plain.as_dict()["components"] == [
        {k: v for k, v in c.items() if k != "parts"} for c in as_dict["components"]]
    assert pickle.loads(pickle.dumps(report)) == report
    with pytest.raises(TypeError, match="PrivacyComponent"):
        privacy_report([("returned model", EpsilonDeltaEvent(1.0), [("x", 1.0)])])
    with pytest.raises(ValueError, match="name, event"):
        privacy_report([("returned model",)])


def test_privacy_report_with_estimator_parts_end_to_end():
    """What privacy_spent_ shows once a search passes estimator_privacy_parts for its model."""
    from diffprivlib.models import LogisticRegression, StandardScaler
    from sklearn.pipeline import make_pipeline

    from skdptune import estimator_privacy
    from skdptune.estimators import estimator_privacy_parts

    pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1)),
                         LogisticRegression(epsilon=1.0, data_norm=1.0))
    space = {"logisticregression__epsilon": [0.1, 2.0]}
    eps, dlt = estimator_privacy(pipe, space)
    report = privacy_report([("returned model (refit on all rows)", EpsilonDeltaEvent(eps, dlt),
                              estimator_privacy_parts(pipe, space))])
    text = str(report)
    assert "- standardscaler (diffprivlib.models.StandardScaler)" in text
    assert "- logisticregression (diffprivlib.models.LogisticRegression)" in text
    assert "max over the search space (epsilon from 0.1 to 2)" in text
    assert report.epsilon == 2.5


@pytest.mark.parametrize("width", [100, 80, 60])
def test_the_report_fits_its_width_and_wraps_the_details_without_losing_a_word(width):
    """``str(report)`` fits a 100-column terminal: long details wrap under their column, or
    below their line when long names leave the column too little room; every word stays."""
    long = ("objective perturbation's bound for this data_norm and C, above diffprivlib's "
            "epsilon (docs/privacy.md); max over the search space (epsilon from 1 to 1)")
    report = PrivacyReport(2.0, 0.0, (
        PrivacyComponent("tuning: permute-and-flip selection", 1.0, 0.0, "permute-and-flip"),
        PrivacyComponent("returned model (refit on all rows)", 1.0, 0.0, long)))
    for text in (report.to_text(width), *([str(report)] if width == 100 else [])):
        lines = text.splitlines()
        assert max(map(len, lines)) <= width
        assert " ".join(" ".join(lines).split()).count(long) == 1
        rules = [i for i, text in enumerate(lines) if set(text) == {"-"}]
        assert len(rules) == 2 and lines[rules[1] + 1].startswith("TOTAL")
    narrow = PrivacyReport(1.0, 0.0, (PrivacyComponent(
        "a component with a very long name " * 2, 1.0, 0.0, long),)).to_text(width)
    # a name is never cut: the lines of the figures may pass the width, the details do not
    assert all(len(text) <= width for text in narrow.splitlines() if text.startswith("    "))
    assert " ".join(" ".join(narrow.splitlines()).split()).count(long) == 1
