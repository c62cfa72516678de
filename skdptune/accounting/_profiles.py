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

Numerics: the closed form subtracts terms that agree to more digits than a double holds (at
``eps_0 = 15``, ``e^eps f(c)`` and ``e^eps f(u1)`` agree to ten), so floats only *search*
(:func:`_float_bound`); the figure reported is one at which :func:`_exact_bound` evaluated
``B`` in :mod:`decimal` at enough digits, with the positive set's ends bracketed and the
integral over the bracket bounded (module ``_decimal``).

Laws of ``K`` (all with ``f'`` finite on [0, 1]): truncated negative binomial ``D_{eta,gamma}``
(``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``), ``"poisson"``, ``"fixed"`` and
``"binomial"`` (``trials`` runs, each kept with probability ``mean / trials``; accounting only,
no search draws it yet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal
from functools import lru_cache

from scipy.optimize import brentq

from . import _decimal
from ._checks import _check_epsilon, _check_positive_int, _check_probability
from ._laws import _check_mean, _resolve_distribution, truncated_negative_binomial_gamma

#: beyond this ``eps_0`` the profile is not evaluated (floats cannot resolve ``c = 1 / (1 +
#: e^eps0)`` near their limit, and the decimals need hundreds of digits): the route reports its
#: pure-DP bound ``log r(c)``, within a few hundredths of the profile there
_LARGEST_BASE_EPSILON = 300.0

#: relative margin by which the float ``log r(c)`` is raised beyond
#: :data:`_LARGEST_BASE_EPSILON` (a sum of three terms of magnitude ``(2 + eta) eps0`` at most,
#: each within a few ulp)
_PEAK_MARGIN = 1e-12

#: the float search aims this much (relatively) below the target ``delta``, so that its result
#: usually passes the exact check at once
_SEARCH_MARGIN = 1e-9

_LAWS = ("logarithmic", "geometric", "negative_binomial", "poisson", "fixed", "binomial")


@dataclass(frozen=True)
class _Law:
    """A law of ``K`` through its PGF ``f`` and its derivative ``f'``.

    Every function takes a point ``x`` of [0, 1] *and its complement* ``xc = 1 - x``, computed
    by the caller without cancellation, so that values near ``x = 1`` keep their relative
    precision. The float versions serve the search; the ``exact_`` versions take
    :class:`~decimal.Decimal` arguments and a context, and serve the reported figure. The
    truncated negative binomial is written with ``beta = 1 - gamma`` (exact: the sampler's
    ``gamma`` is a float) and ``log(1 - beta x)`` through ``log1p``: at ``E[K] = 1 + 1e-15``,
    ``beta`` is about ``1e-15`` and ``1 - beta x`` keeps none of its digits.
    """

    name: str
    mean: float
    eta: float | None = None     # truncated negative binomial
    gamma: float | None = None   # truncated negative binomial
    trials: int | None = None    # binomial, fixed

    # ---- floats (the search) ---------------------------------------------------------------

    def _log_s(self, x: float, xc: float) -> float:
        """``log(1 - beta x)``: through ``log1p`` unless ``beta x`` is large, then as
        ``log(gamma + beta xc)`` (both without cancellation)."""
        beta = 1.0 - self.gamma
        if beta * x <= 0.5:
            return math.log1p(-beta * x)
        inner = self.gamma + beta * xc
        return math.log(inner) if inner > 0.0 else -math.inf

    def pgf(self, x: float, xc: float) -> float:
        if self.name == "poisson":
            return math.exp(-self.mean * xc)
        if self.name == "fixed":
            return x ** self.trials
        if self.name == "binomial":
            return math.exp(self.trials * math.log1p(-(self.mean / self.trials) * xc))
        log_s = self._log_s(x, xc)
        log_gamma = self._log_s(1.0, 0.0)
        if self.eta == 0.0:
            return log_s / log_gamma
        return math.expm1(-self.eta * log_s) / math.expm1(-self.eta * log_gamma)

    def log_derivative(self, x: float, xc: float) -> float:
        """``log f'(x)`` up to an additive constant (the same for every ``x``)."""
        if self.name == "poisson":
            return -self.mean * xc
        if self.name == "fixed":
            return (self.trials - 1) * math.log(x) if self.trials > 1 else 0.0
        if self.name == "binomial":
            return (self.trials - 1) * math.log1p(-(self.mean / self.trials) * xc)
        return -(1.0 + self.eta) * self._log_s(x, xc)

    # ---- decimals (the reported figure) ----------------------------------------------------

    def _exact_log_s(self, x: Decimal, xc: Decimal, ctx: Context) -> Decimal:
        beta = ctx.subtract(1, Decimal(self.gamma))
        product = ctx.multiply(beta, x)
        if product <= Decimal("0.5"):
            return _decimal.ln1p(ctx.minus(product), ctx)
        return ctx.ln(ctx.add(Decimal(self.gamma), ctx.multiply(beta, xc)))

    def _exact_log_x(self, x: Decimal, xc: Decimal, ctx: Context) -> Decimal:
        """``log x`` (``x > 0``), through ``log1p(-xc)`` near 1."""
        return _decimal.ln1p(ctx.minus(xc), ctx) if xc <= Decimal("0.5") else ctx.ln(x)

    def exact_pgf(self, x: Decimal, xc: Decimal, ctx: Context) -> Decimal:
        if self.name == "poisson":
            return ctx.exp(ctx.minus(ctx.multiply(Decimal(self.mean), xc)))
        if self.name == "fixed":
            if x == 0:
                return Decimal(0)
            return ctx.exp(ctx.multiply(self.trials, self._exact_log_x(x, xc, ctx)))
        if self.name == "binomial":
            keep = ctx.divide(Decimal(self.mean), self.trials)
            return ctx.exp(ctx.multiply(self.trials,
                                        _decimal.ln1p(ctx.minus(ctx.multiply(keep, xc)), ctx)))
        log_s = self._exact_log_s(x, xc, ctx)
        log_gamma = self._exact_log_s(Decimal(1), Decimal(0), ctx)
        if self.eta == 0.0:
            return ctx.divide(log_s, log_gamma)
        eta = Decimal(self.eta)
        return ctx.divide(_decimal.expm1(ctx.minus(ctx.multiply(eta, log_s)), ctx),
                          _decimal.expm1(ctx.minus(ctx.multiply(eta, log_gamma)), ctx))

    def exact_derivative(self, x: Decimal, xc: Decimal, ctx: Context) -> Decimal:
        """``f'(x)`` itself (not up to a constant)."""
        if self.name == "poisson":
            mean = Decimal(self.mean)
            return ctx.multiply(mean, ctx.exp(ctx.minus(ctx.multiply(mean, xc))))
        if self.name == "fixed":
            if self.trials == 1:
                return Decimal(1)
            if x == 0:
                return Decimal(0)
            log_x = self._exact_log_x(x, xc, ctx)
            return ctx.multiply(self.trials, ctx.exp(ctx.multiply(self.trials - 1, log_x)))
        if self.name == "binomial":
            keep = ctx.divide(Decimal(self.mean), self.trials)
            log_y = _decimal.ln1p(ctx.minus(ctx.multiply(keep, xc)), ctx)
            return ctx.multiply(ctx.multiply(self.trials, keep),
                                ctx.exp(ctx.multiply(self.trials - 1, log_y)))
        beta = ctx.subtract(1, Decimal(self.gamma))
        log_s = self._exact_log_s(x, xc, ctx)
        log_gamma = self._exact_log_s(Decimal(1), Decimal(0), ctx)
        if self.eta == 0.0:  # f = log s / log gamma
            return ctx.divide(ctx.minus(ctx.multiply(beta, ctx.exp(ctx.minus(log_s)))),
                              log_gamma)
        eta = Decimal(self.eta)
        power = ctx.exp(ctx.minus(ctx.multiply(ctx.add(eta, 1), log_s)))
        return ctx.divide(ctx.multiply(ctx.multiply(eta, beta), power),
                          _decimal.expm1(ctx.minus(ctx.multiply(eta, log_gamma)), ctx))


def _law(distribution: str, mean: float, eta: float | None, trials: int | None) -> _Law:
    """Validated law; the truncated negative binomial's ``gamma`` is the sampler's own."""
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


def _roots(law: _Law, eps0: float, epsilon: float) -> tuple[float, float]:
    """Float approximations ``(u1, v2)`` of the ends of the positive set ``[u1, 1 - v2]`` (``r``
    is non-decreasing on ``[0, c]`` and non-increasing on ``[c, 1]``); 0 where the set reaches
    the end of its side."""
    c, p = _points(eps0)
    return (_float_root(lambda u: _log_ratio_left(law, eps0, u) - epsilon, c),
            0.0 if eps0 >= epsilon else  # r(1) = e^eps0
            _float_root(lambda v: _log_ratio_right(law, eps0, v) - epsilon, p))


def _float_root(excess, end: float) -> float:
    """Where the non-decreasing ``excess`` crosses 0 on ``[0, end]``, in floats; 0 where it is
    positive throughout, and ``end`` where floats cannot tell (no sign change within their
    precision, a root beyond ``brentq``'s reach, an overflow): a guess that
    :func:`_bracket` checks in decimals, widening to the whole side if it is wrong."""
    try:
        if excess(0.0) >= 0.0:
            return 0.0
        return brentq(excess, 0.0, end, xtol=1e-300, rtol=1e-15, maxiter=500)
    except (ArithmeticError, ValueError, RuntimeError):
        return end


def _float_bound(law: _Law, eps0: float, epsilon: float) -> float:
    """``B(epsilon)`` in floats: the search's guide, never reported (cancellation can take all
    of its digits at large ``eps_0``; :func:`_exact_bound` is what is reported)."""
    try:
        return _float_terms(law, eps0, epsilon)
    except (ArithmeticError, ValueError):  # an overflow: let the decimal check decide
        return 1.0


def _float_terms(law: _Law, eps0: float, epsilon: float) -> float:
    if epsilon >= _peak_log_ratio(law, eps0):
        return 0.0
    c, p = _points(eps0)
    u1, v2 = _roots(law, eps0, epsilon)
    f = law.pgf
    e0 = math.exp(eps0)
    x1, w2 = e0 * u1, v2 / e0
    # left part: int_{u1}^{c} e^eps0 f'(e^eps0 u) - e^eps f'(u) du
    left = (f(p, c) - f(x1, 1.0 - x1)) - _scaled(epsilon, f(c, p) - f(u1, 1.0 - u1))
    # right part: e^-2eps0 int_c^{1 - v2} e^eps0 f'(G_max(u)) - e^eps f'(u) du
    right = ((f(1.0 - w2, w2) - f(p, c))
             - _scaled(epsilon - 2.0 * eps0, f(1.0 - v2, v2) - f(c, p)))
    return max(0.0, left + right)


def _scaled(log_factor: float, difference: float) -> float:
    """``e^log_factor * difference`` without overflowing in the factor."""
    if difference <= 0.0:
        return 0.0
    exponent = log_factor + math.log(difference)
    return math.exp(exponent) if exponent < 709.0 else math.inf


#: how far around a float root the bracket checked in decimals is first sought
_BRACKET_WIDTHS = (1e-12, 1e-9, 1e-6, 1e-3)


def _exact_bound(law: _Law, eps0: float, epsilon: float) -> float:
    """An upper bound on ``B(epsilon)`` that rounding cannot undercut (``eps0 <=``
    :data:`_LARGEST_BASE_EPSILON`, ``epsilon`` below the peak).

    On each side of ``c`` the integrand is ``f'(u) (r(u) - e^eps)`` (times ``e^-2eps0`` on the
    right), whose sign changes once, from - to +, at the end ``u1`` of the positive set
    (``v2`` on the right, in ``v = 1 - u``). A bracket ``a <= u1 <= b`` is checked in decimals
    (``a = 0``, or the integrand is ``<= 0`` at ``a``; ``b = c``, or it is ``>= 0`` at ``b``),
    and the integral is taken from ``a``: it then also counts the negative sliver
    ``[a, u1]``, whose size is at most ``(b - a) (e^eps f'(b) - e^eps0 f'(e^eps0 a))`` (``f'``
    increases), added back. The terms are evaluated in a :func:`~._decimal.context` that
    covers ``e^eps`` and ``e^(2 eps0)``, and the result is raised by
    :func:`~._decimal.slack` of their magnitudes, then rounded up to a float.
    """
    ctx = _decimal.context(epsilon, 2.0 * eps0)
    one = Decimal(1)
    e0 = ctx.exp(Decimal(eps0))
    e_eps = ctx.exp(Decimal(epsilon))
    c = ctx.divide(one, ctx.add(one, e0))
    p = ctx.divide(e0, ctx.add(one, e0))
    f, fp = law.exact_pgf, law.exact_derivative
    u_star, v_star = _roots(law, eps0, epsilon)

    def left_sign(u: Decimal) -> Decimal:  # e^eps0 f'(e^eps0 u) - e^eps f'(u)
        x = ctx.multiply(e0, u)
        return ctx.subtract(ctx.multiply(e0, fp(x, ctx.subtract(one, x), ctx)),
                            ctx.multiply(e_eps, fp(u, ctx.subtract(one, u), ctx)))

    def right_sign(v: Decimal) -> Decimal:  # e^eps0 f'(1 - v / e^eps0) - e^eps f'(1 - v)
        w = ctx.divide(v, e0)
        return ctx.subtract(ctx.multiply(e0, fp(ctx.subtract(one, w), w, ctx)),
                            ctx.multiply(e_eps, fp(ctx.subtract(one, v), v, ctx)))

    a, b = _bracket(u_star, c, left_sign)
    a2, b2 = _bracket(v_star, p, right_sign)
    # left: int_a^c e^eps0 f'(e^eps0 u) - e^eps f'(u) du, plus the sliver
    x_a = ctx.multiply(e0, a)
    f_p, f_c = f(p, c, ctx), f(c, p, ctx)
    f_xa, f_a = f(x_a, ctx.subtract(one, x_a), ctx), f(a, ctx.subtract(one, a), ctx)
    sliver = ctx.multiply(ctx.subtract(b, a), max(Decimal(0), ctx.subtract(
        ctx.multiply(e_eps, fp(b, ctx.subtract(one, b), ctx)),
        ctx.multiply(e0, fp(x_a, ctx.subtract(one, x_a), ctx)))))
    left = [f_p, ctx.minus(f_xa), ctx.minus(ctx.multiply(e_eps, f_c)),
            ctx.multiply(e_eps, f_a), sliver]
    # right: e^-2eps0 int_c^{1 - a2} e^eps0 f'(1 - (1 - u) / e^eps0) - e^eps f'(u) du, plus
    # the sliver, in v = 1 - u
    scale = ctx.divide(e_eps, ctx.multiply(e0, e0))
    w_a2, w_b2 = ctx.divide(a2, e0), ctx.divide(b2, e0)
    sliver2 = ctx.divide(ctx.multiply(ctx.subtract(b2, a2), max(Decimal(0), ctx.subtract(
        ctx.multiply(e_eps, fp(ctx.subtract(one, a2), a2, ctx)),
        ctx.multiply(e0, fp(ctx.subtract(one, w_b2), w_b2, ctx))))), ctx.multiply(e0, e0))
    right = [f(ctx.subtract(one, w_a2), w_a2, ctx), ctx.minus(f_p),
             ctx.minus(ctx.multiply(scale, f(ctx.subtract(one, a2), a2, ctx))),
             ctx.multiply(scale, f_c), sliver2]
    total = Decimal(0)
    for term in left + right:
        total = ctx.add(total, term)
    total = ctx.add(total, _decimal.slack(ctx, *left, *right))
    return min(1.0, max(0.0, _decimal.to_float_up(total)))


def _bracket(root: float, end: Decimal, sign) -> tuple[Decimal, Decimal]:
    """``(a, b)`` in ``[0, end]`` around the float ``root`` with ``a = 0`` or ``sign(a) <= 0``,
    and ``b = end`` or ``sign(b) >= 0``, checked in decimals; widened until they hold."""
    def first(candidates, holds, fallback):
        for value in candidates:
            value = min(Decimal(value), end)
            if holds(value):
                return value
        return fallback

    a = Decimal(0) if root <= 0.0 else first(
        [root * (1.0 - w) for w in _BRACKET_WIDTHS], lambda x: sign(x) <= 0, Decimal(0))
    b = first([root * (1.0 + w) for w in _BRACKET_WIDTHS] if root > 0.0 else [0.0],
              lambda x: x >= a and sign(x) >= 0, end)
    return a, b


@lru_cache(maxsize=4096)
def _safe_peak(law: _Law, eps0: float) -> float:
    """``log r(c)`` rounded up: beyond it ``B = 0`` (the profile's pure-DP bound). The float
    value, raised to the decimal one where that is larger."""
    peak = _peak_log_ratio(law, eps0)
    if eps0 > _LARGEST_BASE_EPSILON:
        return peak * (1.0 + _PEAK_MARGIN) + 1e-300
    # the context covers c = 1 / (1 + e^eps0) in the complements the laws read
    ctx = _decimal.context(eps0)
    if law.name == "fixed":
        terms = [ctx.multiply(law.trials, Decimal(eps0))]
    else:
        e0 = ctx.exp(Decimal(eps0))
        c = ctx.divide(1, ctx.add(1, e0))
        p = ctx.divide(e0, ctx.add(1, e0))
        terms = [Decimal(eps0), ctx.ln(law.exact_derivative(p, c, ctx)),
                 ctx.minus(ctx.ln(law.exact_derivative(c, p, ctx)))]
    exact = _decimal.slack(ctx, *terms)
    for term in terms:
        exact = ctx.add(exact, term)
    return max(peak, _decimal.to_float_up(exact))


@lru_cache(maxsize=4096)
def _profile_delta(law: _Law, eps0: float, epsilon: float) -> float:
    """Upper bound on ``delta(epsilon)``, rounding included, capped at 1."""
    if epsilon >= _safe_peak(law, eps0):
        return 0.0
    if eps0 > _LARGEST_BASE_EPSILON:
        return 1.0
    return _exact_bound(law, eps0, epsilon)


@lru_cache(maxsize=4096)
def _profile_epsilon(law: _Law, eps0: float, delta: float) -> float:
    """Smallest ``epsilon`` (up to bisection resolution, rounded up) with ``delta(eps) <= delta``.

    A bisection in floats (:func:`_float_bound`, aimed :data:`_SEARCH_MARGIN` below
    ``delta``) proposes a value; it is returned if :func:`_profile_delta` holds there, else a
    bisection on :func:`_profile_delta` itself continues above it. Either way the returned value
    is one at which the exact bound was checked (or the peak, where ``B = 0``).
    """
    if eps0 == 0.0:
        return 0.0
    if not math.isfinite(eps0):
        return math.inf
    peak = _safe_peak(law, eps0)
    if delta >= 1.0:
        return 0.0
    if delta <= 0.0 or eps0 > _LARGEST_BASE_EPSILON:
        return peak
    if _profile_delta(law, eps0, 0.0) <= delta:
        return 0.0
    hi = _bisect(lambda eps: _float_bound(law, eps0, eps) <= delta * (1.0 - _SEARCH_MARGIN),
                 0.0, peak)
    if _profile_delta(law, eps0, hi) <= delta:
        return hi
    return _bisect(lambda eps: _profile_delta(law, eps0, eps) <= delta, hi, peak)


def _bisect(holds, lo: float, hi: float) -> float:
    """The upper end of a bisection of ``[lo, hi]`` (``holds(hi)`` true, ``holds(lo)`` false) to
    ``1e-12`` relative: a value at which ``holds`` was true (or ``hi`` itself)."""
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if holds(mid):
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
    with its rounding bounded (module docstring), so the value is an upper bound.

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
