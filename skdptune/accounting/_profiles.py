"""Privacy profiles of private selection: ``delta(eps)`` of the best of ``K`` runs, directly.

The approach of Koskela, Redberg & Wang (ICML 2024, "Privacy Profiles for Private
Selection"): bound the hockey-stick divergence of the repeated-and-selected mechanism from the
privacy profile of its base run, instead of going through Renyi DP. The bound implemented here
is derived in ``docs/accounting.md`` (section 7.6) for a **pure** ``eps_0``-DP base run and any
law of ``K`` with probability generating function ``f``:

    delta(eps) <= B(eps) = int_0^1 [f'(v) - e^(eps - eps0) f'(G_min(v))]_+ dv,
    G_min(v) = max(e^-eps0 v, 1 - e^eps0 (1 - v)),

for every pair of neighbouring datasets (replace-one, or any relation under which the base
run is ``eps_0``-DP). With ``u = G_min(v)`` and ``c = 1 / (1 + e^eps0)``, ``B`` is
``L + e^(-2 eps0) R`` where ``L`` and ``R`` integrate ``[e^eps0 f'(G_max(u)) - e^eps f'(u)]_+``
over ``[0, c]`` and ``[c, 1]`` (``G_max`` the inverse of ``G_min``). The integrand is positive
on one interval around ``c`` (shown per law in the docs), whose ends are found by root
finding, and its antiderivative is ``f`` itself: a closed form. ``B(eps) = 0`` from
``eps = log r(c)`` on, a pure-DP bound below Corollary 3's ``(2 + eta) eps0``.

Laws of ``K`` (all with ``f'`` finite on [0, 1]): truncated negative binomial ``D_{eta,gamma}``
(``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``), ``"poisson"``, ``"fixed"`` and
``"binomial"`` (``trials`` runs, each kept with probability ``mean / trials``; accounting only,
no search draws it yet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from scipy.optimize import brentq

from ._checks import _check_epsilon, _check_positive_int, _check_probability

#: relative rounding slack added to the closed form before it is compared with a target
#: ``delta`` (the four terms of B are summed with their signs; their absolute values bound the
#: magnitudes that rounding acts on, each PGF value being accurate to a few ulp)
_ROUNDING_SLACK = 1e-12

_LAWS = ("logarithmic", "geometric", "negative_binomial", "poisson", "fixed", "binomial")


@dataclass(frozen=True)
class _Law:
    """A law of ``K`` through its PGF ``f`` and ``log f'`` (up to a constant).

    Both take a point ``x`` of [0, 1] *and its complement* ``xc = 1 - x``, computed by the caller
    without cancellation, so that values near ``x = 1`` keep their relative precision.
    """

    name: str
    mean: float
    eta: float | None = None     # truncated negative binomial
    gamma: float | None = None   # truncated negative binomial
    trials: int | None = None    # binomial, fixed

    def pgf(self, x: float, xc: float) -> float:
        if self.name == "poisson":
            return math.exp(-self.mean * xc)
        if self.name == "fixed":
            return x ** self.trials
        if self.name == "binomial":
            return math.exp(self.trials * math.log1p(-(self.mean / self.trials) * xc))
        # truncated negative binomial: 1 - (1 - gamma) x = xc + gamma x (no cancellation)
        log_s = math.log(xc + self.gamma * x) if xc + self.gamma * x > 0 else -math.inf
        t = -math.log(self.gamma)
        if self.eta == 0.0:
            return -log_s / t
        return math.expm1(-self.eta * log_s) / math.expm1(self.eta * t)

    def log_derivative(self, x: float, xc: float) -> float:
        """``log f'(x)`` up to an additive constant (the same for every ``x``)."""
        if self.name == "poisson":
            return -self.mean * xc
        if self.name == "fixed":
            return (self.trials - 1) * math.log(x) if self.trials > 1 else 0.0
        if self.name == "binomial":
            return (self.trials - 1) * math.log1p(-(self.mean / self.trials) * xc)
        return -(1.0 + self.eta) * math.log(xc + self.gamma * x)


def _law(distribution: str, mean: float, eta: float | None, trials: int | None) -> _Law:
    """Validated law; the truncated negative binomial's ``gamma`` is the sampler's own."""
    from ._repetition import (  # late import: _repetition uses this module
        _check_mean,
        _resolve_distribution,
        truncated_negative_binomial_gamma,
    )

    if distribution not in _LAWS:
        raise ValueError(f"distribution must be one of {_LAWS}; got {distribution!r}")
    if distribution == "binomial":
        if trials is None:
            raise ValueError("distribution='binomial' needs trials (its number of trials)")
        trials = _check_positive_int(trials, "trials (the number of trials of 'binomial')")
        mean = float(mean)
        if not (math.isfinite(mean) and 0.0 < mean <= trials):
            raise ValueError(f"the binomial mean must be in (0, trials={trials}]; got {mean!r}")
        return _Law("binomial", mean, trials=trials)
    distribution, eta = _resolve_distribution(distribution, eta)
    mean = _check_mean(mean, distribution)
    if distribution == "fixed":
        return _Law("fixed", mean, trials=int(mean))
    if distribution == "poisson":
        return _Law("poisson", mean)
    gamma = truncated_negative_binomial_gamma(mean, eta)
    if gamma >= 1.0:
        return _Law("fixed", 1.0, trials=1)  # mean 1: K = 1 surely
    return _Law("truncated_negative_binomial", mean, eta=eta, gamma=gamma)


# --------------------------------------------------------------------------------------------
# The bound B(eps) for a pure eps0-DP base run
# --------------------------------------------------------------------------------------------


def _points(eps0: float) -> tuple[float, float]:
    """``(c, p) = (1 / (1 + e^eps0), e^eps0 / (1 + e^eps0))``, without overflow."""
    tail = math.exp(-eps0)
    return tail / (1.0 + tail), 1.0 / (1.0 + tail)


def _log_ratio_left(law: _Law, eps0: float, u: float) -> float:
    """``log r(u)`` on ``[0, c]``: ``eps0 + log f'(e^eps0 u) - log f'(u)``."""
    if law.name == "fixed":
        return law.trials * eps0  # f' = n x^(n-1): the ratio is constant here
    x = math.exp(eps0) * u
    return eps0 + law.log_derivative(x, 1.0 - x) - law.log_derivative(u, 1.0 - u)


def _log_ratio_right(law: _Law, eps0: float, v: float) -> float:
    """``log r(1 - v)`` on ``[c, 1]``: ``eps0 + log f'(1 - e^-eps0 v) - log f'(1 - v)``."""
    w = math.exp(-eps0) * v
    return eps0 + law.log_derivative(1.0 - w, w) - law.log_derivative(1.0 - v, v)


def _peak_log_ratio(law: _Law, eps0: float) -> float:
    """``log r(c)``: the largest likelihood ratio of the selection (its pure-DP bound)."""
    c, p = _points(eps0)
    if law.name == "fixed":
        return law.trials * eps0
    return eps0 + law.log_derivative(p, c) - law.log_derivative(c, p)


def _profile_terms(law: _Law, eps0: float, epsilon: float) -> tuple[float, float]:
    """``(B(epsilon), rounding slack)`` for a pure ``eps0``-DP base run."""
    if epsilon >= _peak_log_ratio(law, eps0):
        return 0.0, 0.0
    c, p = _points(eps0)
    e0 = math.exp(eps0)
    # the positive set is [u1, 1 - v2] (r is non-decreasing on [0, c], non-increasing on [c, 1])
    if _log_ratio_left(law, eps0, 0.0) >= epsilon:
        u1 = 0.0
    else:
        u1 = brentq(lambda u: _log_ratio_left(law, eps0, u) - epsilon, 0.0, c,
                    xtol=1e-300, rtol=1e-15, maxiter=500)
    if eps0 >= epsilon:  # r(1) = e^eps0
        v2 = 0.0
    else:
        v2 = brentq(lambda v: _log_ratio_right(law, eps0, v) - epsilon, 0.0, p,
                    xtol=1e-300, rtol=1e-15, maxiter=500)
    f = law.pgf
    x1 = e0 * u1
    w2 = v2 / e0
    # left part, L: int_{u1}^{c} e^eps0 f'(e^eps0 u) - e^eps f'(u) du
    t1 = f(p, c) - f(x1, 1.0 - x1)
    t2 = _scaled(epsilon, f(c, p) - f(u1, 1.0 - u1))
    # right part, e^-2eps0 R: e^-2eps0 int_c^{1 - v2} e^eps0 f'(G_max(u)) - e^eps f'(u) du
    t3 = f(1.0 - w2, w2) - f(p, c)
    t4 = _scaled(epsilon - 2.0 * eps0, f(1.0 - v2, v2) - f(c, p))
    bound = (t1 - t2) + (t3 - t4)
    slack = _ROUNDING_SLACK * (abs(t1) + abs(t2) + abs(t3) + abs(t4))
    if not math.isfinite(slack):  # cannot happen in exact arithmetic (t2 <= t1, t4 <= t3)
        return 1.0, 0.0
    return max(0.0, bound), slack


def _scaled(log_factor: float, difference: float) -> float:
    """``e^log_factor * difference`` without overflowing in the factor (the product of an
    integral over the positive set is at most 1; beyond the float range it is ``inf``)."""
    if difference <= 0.0:
        return 0.0
    exponent = log_factor + math.log(difference)
    return math.exp(exponent) if exponent < 709.0 else math.inf


@lru_cache(maxsize=4096)
def _profile_delta(law: _Law, eps0: float, epsilon: float) -> float:
    """Upper bound on ``delta(epsilon)`` including the rounding slack, capped at 1."""
    bound, slack = _profile_terms(law, eps0, epsilon)
    return min(1.0, bound + slack)


@lru_cache(maxsize=4096)
def _profile_epsilon(law: _Law, eps0: float, delta: float) -> float:
    """Smallest ``epsilon`` (up to bisection resolution, rounded up) with ``delta(eps) <= delta``.

    Bisection on ``[0, log r(c)]`` whose upper end always satisfies the bound (checked, not
    assumed): the returned value is one at which ``B + slack <= delta`` was evaluated.
    """
    if eps0 == 0.0:
        return 0.0
    if not math.isfinite(eps0):
        return math.inf
    hi = _peak_log_ratio(law, eps0)  # B = 0 there
    if delta >= 1.0 or _profile_delta(law, eps0, 0.0) <= delta:
        return 0.0
    if delta <= 0.0:
        return hi
    lo = 0.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if _profile_delta(law, eps0, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def repetition_profile_delta(base_epsilon: float, epsilon: float, distribution: str,
                             mean: float, eta: float | None = None,
                             trials: int | None = None) -> float:
    """Privacy profile ``delta(epsilon)`` of the best of ``K`` runs of an ``eps_0``-DP run.

    Rule (replace-one; derived in ``docs/accounting.md`` section 7.6 after Koskela, Redberg &
    Wang 2024): for a pure ``eps_0``-DP base run whose outputs are ranked by a total order (the
    noisy score), ``K`` drawn independently of the data with PGF ``f`` and only the best run
    released (nothing when ``K = 0``), every pair of neighbouring datasets satisfies
    ``H_{e^eps}(A(D) || A(D')) <= int_0^1 [f'(v) - e^(eps - eps0) f'(G(v))]_+ dv`` with
    ``G(v) = max(e^-eps0 v, 1 - e^eps0 (1 - v))``. The integral is evaluated in closed form
    (plus a relative rounding slack of ``1e-12``), so the value is an upper bound.

    Parameters
    ----------
    base_epsilon : float
        Pure-DP parameter ``eps_0`` of one run.
    epsilon : float
        Where to evaluate the profile, ``>= 0``.
    distribution : str
        ``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``, ``"poisson"``, ``"fixed"``
        or ``"binomial"``.
    mean : float
        ``E[K]`` (the number of runs for ``"fixed"``).
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.
    trials : int or None
        Number of trials of ``"binomial"`` (``K ~ Binomial(trials, mean / trials)``).

    Returns
    -------
    float
        ``delta`` in [0, 1] such that the selection is ``(epsilon, delta)``-DP.

    Examples
    --------
    >>> from skdptune.accounting import repetition_profile_delta
    >>> d = repetition_profile_delta(1.0, 2.5, "geometric", 10.0)
    >>> 0.0 < d < 1e-2
    True
    >>> repetition_profile_delta(1.0, 3.0, "geometric", 10.0)  # beyond the largest ratio
    0.0
    """
    eps0 = _check_epsilon(base_epsilon, "base_epsilon")
    epsilon = _check_epsilon(epsilon, "epsilon")
    law = _law(distribution, mean, eta, trials)
    if eps0 == 0.0:
        return 0.0
    if not math.isfinite(eps0):
        return 1.0
    return _profile_delta(law, eps0, epsilon)


def repetition_profile_epsilon(base_epsilon: float, distribution: str, mean: float,
                               eta: float | None = None, delta: float = 0.0,
                               trials: int | None = None) -> float:
    """``epsilon`` at ``delta`` of the best of ``K`` runs, from the privacy profile.

    The smallest ``epsilon`` with :func:`repetition_profile_delta` ``<= delta``, found by
    bisection whose returned end is always one where the bound was checked (it errs upward,
    by at most ``1e-12`` relative). ``delta = 0`` gives the profile's pure-DP bound
    ``log r(c) = eps_0 + log f'(p) - log f'(1 - p)``, ``p = e^eps0 / (1 + e^eps0)``: for the
    truncated negative binomial ``eps_0 + (1 + eta) log((e^eps0 + gamma) / (1 + gamma e^eps0))``
    (below Corollary 3's ``(2 + eta) eps_0``), for Poisson ``eps_0 + mu tanh(eps_0 / 2)``, for
    ``n`` fixed runs ``n eps_0``. Replace-one.

    Parameters
    ----------
    base_epsilon : float
        Pure-DP parameter ``eps_0`` of one run.
    distribution : str
        As in :func:`repetition_profile_delta`.
    mean : float
        ``E[K]`` (the number of runs for ``"fixed"``).
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.
    delta : float, default=0.0
        Target ``delta``.
    trials : int or None
        Number of trials of ``"binomial"``.

    Returns
    -------
    float
        ``epsilon``.

    Examples
    --------
    >>> from skdptune.accounting import repetition_profile_epsilon, repetition_rdp_epsilon
    >>> profile = repetition_profile_epsilon(1.0, "geometric", 10.0, delta=1e-6)
    >>> rdp = repetition_rdp_epsilon(1.0, "geometric", 10.0, None, 1e-6)
    >>> round(profile, 3), round(rdp, 3)
    (2.59, 3.0)
    """
    eps0 = _check_epsilon(base_epsilon, "base_epsilon")
    delta = _check_probability(delta, "delta")
    law = _law(distribution, mean, eta, trials)
    return _profile_epsilon(law, eps0, delta)
