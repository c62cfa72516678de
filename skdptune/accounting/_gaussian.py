"""Gaussian differential privacy (Dong, Roth & Su 2022).

The privacy profile of ``mu``-GDP (their Corollary 2.13) is

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

With ``t = eps/mu - mu/2`` and the Mills ratio ``R(x) = Phi(-x) / phi(x)`` it reads

    delta = phi(t) (R(t) - R(t + mu)),

because ``e^eps phi(t + mu) = phi(t)`` exactly. This form never computes ``e^eps`` (no
overflow), and it isolates the one cancellation: for a small ``mu``, ``R(t) - R(t + mu)`` is
about ``mu (1 - t R(t))``, so a float evaluation loses ``log10(t / mu)`` digits (at ``mu = 1e-4``
the float route gave values 2e-9 low), and the float ``t`` itself loses digits when ``eps / mu``
and ``mu / 2`` nearly cancel (``mu >= 1e9``). As elsewhere in this package, floats search and
decimals report (docs/accounting.md §7.6): :func:`gdp_delta` returns an upper bound computed in
:mod:`decimal` at enough digits for the cancellation, and :func:`gdp_epsilon` returns an ``eps``
at which that bound was checked.

``R`` in decimals: Laplace's continued fraction ``R(x) = 1/(x + 1/(x + 2/(x + 3/(x + ...))))``
for ``x >= 4`` (all its elements are positive, so consecutive truncations bracket ``R``; the
number of terms, from an estimate, is raised by a quarter until two agree to the context's
precision), the series
``R(x) = sqrt(pi/2) e^(x^2/2) - sum_n x^(2n+1) / (2n+1)!!`` for ``|x| < 4`` (positive terms after
a sign; cancellation of at most ``e^8``, paid for in digits), and ``R(x) = 1/phi(x) - R(-x)`` for
``x <= -4`` (no cancellation).
"""

from __future__ import annotations

import math
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal

from scipy.optimize import brentq
from scipy.special import erfcx, log_ndtr

from ._checks import _check_epsilon, _check_nonnegative, _check_probability
from ._decimal import pi, raised_until, slack, to_float_up

# --------------------------------------------------------------------------------------------
# Gaussian differential privacy (Dong, Roth & Su 2022)
# --------------------------------------------------------------------------------------------


def gdp_delta(mu: float, epsilon: float) -> float:
    """``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` of ``mu``-GDP.

    Rule (Dong, Roth & Su 2022, Corollary 2.13): a mechanism is ``mu``-GDP iff it is
    ``(eps, delta(eps))``-DP for every ``eps >= 0``; exact, for the neighbouring relation the
    GDP statement is made for (replace-one here). The value returned is the smallest float at
    or above an upper bound on ``delta(eps)`` computed in :mod:`decimal` (module docstring):
    never below the exact value, and above it by little more than that last rounding
    (``2.2e-16`` relative).

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
    return min(1.0, to_float_up(_delta_upper(mu, eps)))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ``eps`` with ``gdp_delta(mu, eps) <= delta``: ``(eps, delta)``-DP of ``mu``-GDP.

    Rule: inverse of :func:`gdp_delta` (Dong, Roth & Su 2022, Corollary 2.13). The root is
    found in floats, on ``log delta`` as a function of ``t = eps/mu - mu/2``; the returned
    ``eps`` is then raised (by one ulp, then by doubling steps) until the decimal upper bound
    of :func:`gdp_delta` at it is at most ``delta``: never below the exact value. ``delta = 0``
    gives ``inf`` (for ``mu > 0``), as does an ``eps`` beyond the float range.

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
    # start the check just above the float root: its t is within about 1e-14 (1 + |t|) of the
    # exact root's, and eps = mu t + mu^2 / 2 is rounded
    eps, t = _float_root(mu, delta)
    if eps == 0.0 and _delta_upper(mu, 0.0) <= Decimal(delta):
        return 0.0
    margin = mu * _FLOAT_ROOT_MARGIN * (1.0 + abs(t)) + 2.0 * math.ulp(eps)
    return raised_until(eps + margin, lambda e: _delta_upper(mu, e) <= Decimal(delta))


def float_gdp_epsilon(mu: float, delta: float) -> float:
    """:func:`gdp_epsilon`'s float root, before the decimal check (for a search over ``mu``:
    within about ``1e-13`` relative of the exact value, on either side). ``0 < mu < inf``,
    ``0 < delta <= 1``."""
    return _float_root(mu, delta)[0]


def _float_root(mu: float, delta: float) -> tuple[float, float]:
    """``(eps, t)`` of the float root (:func:`float_gdp_epsilon`)."""
    target = math.log(delta)
    low = -mu / 2.0  # eps = 0
    if _log_delta_float(mu, low) <= target:
        return 0.0, low
    else:
        # delta(t) <= Phi(-t) <= e^(-t^2/2) / 2: beyond this t the profile is below delta
        high = math.sqrt(-2.0 * target) + 1.0
        # below t = -40, delta is within e^-800 of 1: start there (a bracket of width mu / 2
        # would take brentq past its iterations)
        start = max(low, -40.0)
        root = start if _log_delta_float(mu, start) <= target else brentq(
            lambda t: _log_delta_float(mu, t) - target, start, high, xtol=1e-14, rtol=1e-14)
        return max(0.0, mu * root + mu * (mu / 2.0)), root


# --------------------------------------------------------------------------------------------
# Floats: the search
# --------------------------------------------------------------------------------------------

#: margin on the float root's ``t``, relative to ``1 + |t|``, added before the decimal check (a
#: check costs about a millisecond; without the margin, half of the roots needed two to four)
_FLOAT_ROOT_MARGIN = 1e-13

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _mills_float(x: float) -> float:
    return math.sqrt(math.pi / 2.0) * float(erfcx(x / math.sqrt(2.0)))


def _log_delta_float(mu: float, t: float) -> float:
    """``log delta`` of ``mu``-GDP at ``t = eps/mu - mu/2`` in floats (a search only)."""
    if t < -30.0:  # R(t) overflows: delta = Phi(-t) - phi(t) R(t + mu), Phi(-t) near 1
        first = float(log_ndtr(-t))
        second = -t * t / 2.0 - _LOG_SQRT_2PI + math.log(_mills_float(t + mu))
        return first + math.log(-math.expm1(min(second - first, -1e-300)))
    here, there = _mills_float(t), _mills_float(t + mu)
    difference = here - there
    if difference <= 1e-6 * here:  # cancelled: the trapezoid of the decreasing 1 - s R(s)
        difference = mu * ((1.0 - t * here) + (1.0 - (t + mu) * there)) / 2.0
    if difference <= 0.0:
        return -math.inf
    return -t * t / 2.0 - _LOG_SQRT_2PI + math.log(difference)


# --------------------------------------------------------------------------------------------
# Decimals: the report
# --------------------------------------------------------------------------------------------

#: digits beyond those the arguments' magnitudes and the cancellation consume
_GUARD_DIGITS = 60
#: most digits spent on the cancellation of ``R(t) - R(t + mu)`` (beyond it, the bound is the
#: difference plus its error: still an upper bound)
_MAX_DIGITS = 2000
#: a ``t`` below which :func:`_delta_upper` returns 1 (``e^(t^2/2)`` would leave the decimal
#: exponent range)
_FAR_LEFT = -10**6
#: where the continued fraction takes over from the series
_SERIES_LIMIT = 4


def _delta_upper(mu: float, eps: float) -> Decimal:
    """An upper bound on ``delta(eps)`` of ``mu``-GDP (finite ``mu > 0``, finite ``eps``)."""
    size = math.log10(1.0 + eps / mu + mu)
    prec = _GUARD_DIGITS + 2 * math.ceil(size) + 4
    m, e = Decimal(mu), Decimal(eps)
    while True:
        ctx = Context(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN)
        t = ctx.subtract(ctx.divide(e, m), ctx.divide(m, 2))
        if t < _FAR_LEFT:  # delta is within e^(-t^2/2) of Phi(-t), near 1: bound it by 1
            return Decimal(1)
        here, there = _mills(t, ctx), _mills(ctx.add(t, m), ctx)
        error = slack(ctx, here, there)
        difference = ctx.subtract(here, there)
        if difference > error.scaleb(10) or prec >= _MAX_DIGITS:
            break
        lost = ctx.divide(here, max(difference, error)).adjusted()
        prec = min(_MAX_DIGITS, prec + max(lost, 10) + 10)
    # the rounding of t (two operations, each within half a unit in the last digit, of
    # magnitudes up to eps/mu + mu/2) moves delta by a relative (t + mu + 2) |dt| at most: the
    # derivative of delta in t is -mu phi(t) R(t + mu), and R(s) / (1 - s R(s)) <= s + 2
    t_error = Decimal(2 * (eps / mu + mu)).scaleb(1 - prec)
    relative = ctx.add(ctx.multiply(ctx.add(ctx.add(abs(t), m), 2), t_error),
                       slack(ctx, Decimal(1)))
    phi = ctx.divide(ctx.exp(ctx.divide(ctx.multiply(t, t), -2)),
                     ctx.sqrt(ctx.multiply(2, pi(ctx))))
    bound = ctx.multiply(ctx.multiply(phi, ctx.add(max(difference, Decimal(0)), error)),
                         ctx.add(1, relative))
    return max(bound, Decimal(0))


def _mills(x: Decimal, ctx: Context) -> Decimal:
    """The Mills ratio ``Phi(-x) / phi(x)`` in ``ctx`` (module docstring)."""
    if x >= _SERIES_LIMIT:
        return _mills_fraction(x, ctx)
    if x <= -_SERIES_LIMIT:
        return ctx.subtract(ctx.multiply(ctx.sqrt(ctx.multiply(2, pi(ctx))),
                                         ctx.exp(ctx.divide(ctx.multiply(x, x), 2))),
                            _mills_fraction(-x, ctx))
    # |x| < 4: the series loses up to log10(e^8) < 4 digits to the subtraction; pay for them
    inner = Context(prec=ctx.prec + 4, Emax=ctx.Emax, Emin=ctx.Emin)
    square = inner.multiply(x, x)
    term, total, n = x, x, 0
    floor = Decimal(1).scaleb(-inner.prec - 2)
    while True:
        n += 1
        term = inner.divide(inner.multiply(term, square), 2 * n + 1)  # an exact int
        total = inner.add(total, term)
        # the terms decrease by half or more from here: the tail is below the last term
        if abs(term) <= floor and inner.compare(2 * n + 3, inner.multiply(2, square)) >= 0:
            break
    lead = inner.multiply(inner.sqrt(inner.divide(pi(inner), 2)),
                          inner.exp(inner.divide(square, 2)))
    return ctx.plus(inner.subtract(lead, total))


def _mills_fraction(x: Decimal, ctx: Context) -> Decimal:
    """Laplace's continued fraction for ``x >= 4``, truncated where two consecutive
    truncations (which bracket the value) agree to ``ctx``'s precision."""

    def truncated(n: int) -> Decimal:
        tail = Decimal(0)
        for k in range(n, 0, -1):
            tail = ctx.divide(k, ctx.add(x, tail))
        return ctx.divide(1, ctx.add(x, tail))

    # about the number of terms the precision needs (measured: within 25 % from x = 4 to 40)
    n = int((ctx.prec * math.log(10.0) / float(x)) ** 2 / 4.0) + ctx.prec // 2
    while True:
        low, high = truncated(n), truncated(n + 1)
        if abs(low - high) <= low.scaleb(-ctx.prec):
            return max(low, high)
        n += n // 4 + 1
