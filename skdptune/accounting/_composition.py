"""Composition of many pure-DP mechanisms: basic and optimal (Kairouz, Oh & Viswanath)."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
from dp_accounting import RandomizedResponseDpEvent
from scipy.special import gammaln

from . import _decimal
from ._checks import _check_epsilon, _check_nonnegative_int, _check_probability

# --------------------------------------------------------------------------------------------
# Optimal composition of pure DP (Kairouz, Oh & Viswanath 2015)
# --------------------------------------------------------------------------------------------


def kov_optimal_composition_epsilon(epsilon: float, k: int, delta: float) -> float:
    """Smallest ``eps_tot`` such that every k-fold composition of ``epsilon``-DP is
    ``(eps_tot, delta)``-DP.

    Rule (Kairouz, Oh & Viswanath 2015, Theorem 3.3; in the closed form of Murtagh & Vadhan
    2016, Theorem 1.5): the k-fold composition of ``epsilon``-DP mechanisms is
    ``(eps_tot, delta)``-DP iff ``delta >= delta_k(eps_tot)`` where

        delta_k(x) = (1 + e^eps)^-k * sum_{l=0}^{k} C(k, l) max(0, e^{l eps} - e^{x + (k-l) eps}),

    the hockey-stick divergence of k independent binary randomized responses, which dominate
    every ``epsilon``-DP mechanism. The bound is exact (optimal) and holds for adaptive
    composition and any neighbouring relation, hence replace-one. ``delta_k`` is decreasing and,
    between consecutive breakpoints ``(2l - k) eps``, of the form ``A - B e^x``: the root is
    found in closed form, in log-space, then raised float by float until
    :func:`_exact_delta_k` holds there (the root is a difference of logarithms of magnitude
    ``k eps``: rounded to nearest it sat below the exact root, where ``delta_k`` was up to 1.7
    times ``delta``). Never exceeds ``k * epsilon``; equals it for ``delta = 0``.

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter of each mechanism.
    k : int
        Number of mechanisms.
    delta : float
        Target ``delta`` in [0, 1].

    Returns
    -------
    float
        ``eps_tot``.
    """
    eps = _check_epsilon(epsilon, "epsilon")
    k = _check_nonnegative_int(k, "k")
    delta = _check_probability(delta, "delta")
    if k == 0 or eps == 0.0:
        return 0.0
    if not math.isfinite(eps):
        return math.inf
    if delta == 0.0:
        return k * eps
    l = np.arange(k + 1)
    log_norm = k * float(np.logaddexp(0.0, eps))
    log_binom = gammaln(k + 1) - gammaln(l + 1) - gammaln(k - l + 1)
    log_a = log_binom + l * eps - log_norm          # P-mass of "l ones"
    log_b = log_binom + (k - l) * eps - log_norm    # Q-mass of the same outcome
    # suffix sums: active set {l >= m} on the interval [(2m - 2 - k) eps, (2m - k) eps]
    suffix_a = np.logaddexp.accumulate(log_a[::-1])[::-1]
    suffix_b = np.logaddexp.accumulate(log_b[::-1])[::-1]

    def delta_at_breakpoint(m: int) -> float:
        # delta_k((2m - k) eps): the terms l > m are active, the term l = m is zero
        if m >= k:
            return 0.0
        x = (2 * m - k) * eps
        return math.exp(suffix_a[m + 1]) * -math.expm1(x + suffix_b[m + 1] - suffix_a[m + 1])

    m_min = (k + 1) // 2  # smallest m with breakpoint (2m - k) eps >= 0
    m = k
    while m > m_min and delta_at_breakpoint(m - 1) <= delta:
        m -= 1
    # the root lies in [max(0, (2m - 2 - k) eps), (2m - k) eps]; active set {l >= m}
    lower, upper = max(0.0, (2 * m - 2 - k) * eps), (2 * m - k) * eps
    log_a_m, log_b_m = suffix_a[m], suffix_b[m]
    ratio = delta * math.exp(-log_a_m)
    root = lower if ratio >= 1.0 else log_a_m + math.log1p(-ratio) - log_b_m
    # raised until the exact sum holds; at k eps nothing is active (delta_k = 0 exactly)
    root = float(min(max(root, lower), upper, k * eps))
    return _decimal.raised_until(root, lambda x: _exact_delta_k(eps, k, x, delta, log_a) <= delta,
                                 limit=k * eps)


def _exact_delta_k(eps: float, k: int, x: float, delta: float, log_a: np.ndarray) -> float:
    """An upper bound on ``delta_k(x)`` that rounding cannot undercut, rounded up to a float.

    ``delta_k(x) = sum_{l: (2l - k) eps > x} a_l (1 - e^{x - (2l - k) eps})``, ``a_l = C(k, l)
    e^{l eps} / (1 + e^eps)^k``, a sum of positive terms. The float root's cancellation is in
    ``x - (2l - k) eps``, computed in :mod:`decimal` to 50 digits beyond its magnitude (far
    below one ulp of ``x``) before ``expm1``. The masses come
    from the float logarithms ``log_a`` (sums of ``gammaln`` values and ``l eps`` of magnitude at
    most ``M = k log(k + 1) + k eps``, each within a few ulp: an absolute error far below
    ``1e-12 M``), so the sum, taken exactly (``math.fsum``), is raised by the relative margin
    ``1e-12 (1 + M)`` and the float error of each factor. Terms whose mass lies below
    ``delta e^-60`` are bounded together by their count times the largest of them."""
    first = max(0, math.floor((x / eps + k) / 2.0) - 1)
    ctx = _decimal.log_context(k * eps)
    x_exact, eps_exact = Decimal(x), Decimal(eps)
    terms, dropped, largest_dropped = [], 0, -math.inf
    cutoff = math.log(delta) - 60.0
    for l in range(first, k + 1):
        gap = ctx.subtract(x_exact, ctx.multiply(2 * l - k, eps_exact))
        if gap >= 0:
            continue  # inactive: e^{l eps} <= e^{x + (k - l) eps}
        if float(log_a[l]) + 1e-6 < cutoff:
            dropped += 1
            largest_dropped = max(largest_dropped, float(log_a[l]))
            continue
        terms.append(math.exp(float(log_a[l])) * -math.expm1(float(gap)))
    margin = 1e-12 * (1.0 + k * math.log(k + 1.0) + k * eps) + 8 * 2.0 ** -52
    bound = math.fsum(terms) * (1.0 + margin)
    if dropped:
        bound += dropped * math.exp(largest_dropped + 1e-6)
    return math.nextafter(bound, math.inf)


# --------------------------------------------------------------------------------------------
# Self-composition
# --------------------------------------------------------------------------------------------


def self_composition_cost(epsilon: float, base_delta: float, count: int,
                          delta: float) -> tuple[float, float, str]:
    """``(eps, delta, rule)`` of ``count`` adaptive runs of an ``(epsilon, base_delta)``-DP
    mechanism on the same rows, spending at most ``delta`` on the conversion.

    Rule: the smaller ``epsilon`` of basic composition, ``(count * epsilon, count *
    base_delta)``, and of the optimal composition of Kairouz, Oh & Viswanath (2015, Theorem 3.3:
    ``count`` runs of ``(epsilon, base_delta)``-DP are ``(eps_k, 1 - (1 - base_delta)^count
    (1 - delta))``-DP with ``eps_k`` = :func:`kov_optimal_composition_epsilon` ``(epsilon,
    count, delta)``). Replace-one, like every rule here.

    Returns
    -------
    (float, float, str)
        ``epsilon``, ``delta`` and the name of the rule that gave them.
    """
    eps = _check_epsilon(epsilon, "epsilon")
    base_delta = _check_probability(base_delta, "base_delta")
    count = _check_nonnegative_int(count, "count")
    delta = _check_probability(delta, "delta")
    basic = (count * eps, min(1.0, count * base_delta), "basic composition")
    if count <= 1 or delta <= 0.0 or eps == 0.0:
        return basic
    optimal = kov_optimal_composition_epsilon(eps, count, delta)
    if optimal >= basic[0]:
        return basic
    total_delta = -math.expm1(count * math.log1p(-base_delta) + math.log1p(-delta))
    rule = f"optimal composition (Kairouz, Oh & Viswanath) at delta={delta:.3g}"
    return optimal, total_delta, rule


def _randomized_response_event(epsilon: float):
    """dp-accounting's binary randomized response with likelihood ratio ``e^epsilon``."""
    return RandomizedResponseDpEvent(noise_parameter=_rr_noise_parameter(epsilon), num_buckets=2)


def _rr_noise_parameter(epsilon: float) -> float:
    """``2 / (1 + e^eps)``, the noise parameter of binary randomized response, without overflow."""
    return 2.0 * math.exp(-epsilon) / (1.0 + math.exp(-epsilon))
