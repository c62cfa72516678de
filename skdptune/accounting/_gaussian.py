"""Gaussian differential privacy (Dong, Roth & Su 2022)."""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr

from ._checks import _check_epsilon, _check_nonnegative, _check_probability

# --------------------------------------------------------------------------------------------
# Gaussian differential privacy (Dong, Roth & Su 2022)
# --------------------------------------------------------------------------------------------


def gdp_delta(mu: float, epsilon: float) -> float:
    """``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` of ``mu``-GDP.

    Rule (Dong, Roth & Su 2022, Corollary 2.13): a mechanism is ``mu``-GDP iff it is
    ``(eps, delta(eps))``-DP for every ``eps >= 0``; exact, for the neighbouring relation the
    GDP statement is made for (replace-one here). Computed in log-space with ``log_ndtr``.

    Parameters
    ----------
    mu : float
        GDP parameter (>= 0).
    epsilon : float
        ``eps >= 0``.

    Returns
    -------
    float
        ``delta``.
    """
    mu = _check_nonnegative(mu, "mu")
    eps = _check_epsilon(epsilon, "epsilon")
    if mu == 0.0 or math.isinf(eps):
        return 0.0
    if math.isinf(mu):
        return 1.0
    log_first = float(log_ndtr(-eps / mu + mu / 2.0))
    log_second = eps + float(log_ndtr(-eps / mu - mu / 2.0))
    if log_second >= log_first:
        return 0.0
    return float(math.exp(log_first) * -math.expm1(log_second - log_first))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ``eps`` with ``gdp_delta(mu, eps) <= delta``: ``(eps, delta)``-DP of ``mu``-GDP.

    Rule: inverse of :func:`gdp_delta` (Dong, Roth & Su 2022, Corollary 2.13), by root finding
    on ``log delta(eps)``; the returned ``eps`` is nudged up until ``gdp_delta(mu, eps) <=
    delta`` holds in floating point, so it is never below the exact value by more than
    rounding. ``delta = 0`` gives ``inf`` (for ``mu > 0``).

    Parameters
    ----------
    mu : float
        GDP parameter (>= 0).
    delta : float
        Target ``delta`` in [0, 1].

    Returns
    -------
    float
        ``eps``.
    """
    mu = _check_nonnegative(mu, "mu")
    delta = _check_probability(delta, "delta")
    if mu == 0.0:
        return 0.0
    if math.isinf(mu) or delta == 0.0:
        return math.inf
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    # zCDP upper bound (rho = mu^2 / 2): eps <= rho + 2 sqrt(rho log(1/delta)); then widen
    rho = mu * mu / 2.0
    upper = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1.0
    while gdp_delta(mu, upper) > delta:
        upper *= 2.0
    root = brentq(lambda eps: gdp_delta(mu, eps) / delta - 1.0, 0.0, upper,
                  xtol=1e-13, rtol=1e-13)
    while gdp_delta(mu, root) > delta:
        root = root + max(1e-13, 1e-13 * root)
    return float(root)
