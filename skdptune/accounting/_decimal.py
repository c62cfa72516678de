"""High-precision arithmetic for the final check of a reported figure.

A closed form evaluated in floating point can lose every digit to cancellation: the privacy
profile of repetition subtracts ``e^eps (f(c) - f(u))`` from a term of similar size, and at
``eps_0 = 15`` the two agree to more digits than a double holds; the root of optimal
composition is a difference of logarithms of magnitude ``k eps``, whose absolute rounding error
is about ``1e-12`` at ``k eps = 1e4`` -- as large as the ``delta`` it is solved for. The
searches for a figure may run in floats, but the figure *reported* is one at which a bound was
checked with the cancelling part done here, in Python's :mod:`decimal`: the whole profile at
enough digits (:func:`context`) that the cancellation leaves tens of correct digits, plus a
slack of ``1e20`` units in the last of them (:func:`slack`); for optimal composition the
differences ``x - (2l - k) eps``, to 50 digits beyond their magnitude (:func:`log_context`).
Arguments are floats converted exactly (``Decimal(float)`` is exact).
"""

from __future__ import annotations

import functools
import math
from decimal import Context, Decimal

#: digits kept beyond what the magnitudes of a computation consume
_GUARD_DIGITS = 50

#: the relative error allowed for (a chain of a few dozen correctly rounded operations, and
#: arguments whose rounding a PGF's condition number of up to 1e12 amplifies): the slack is
#: this many digits above the context's last
_SLACK_DIGITS = 20


def context(*log_magnitudes: float) -> Context:
    """A context whose precision covers quantities up to ``e^m`` for the given natural-log
    magnitudes ``m`` (and their reciprocals), plus :data:`_GUARD_DIGITS` digits."""
    spent = sum(abs(m) for m in log_magnitudes if math.isfinite(m)) / math.log(10.0)
    return Context(prec=_GUARD_DIGITS + math.ceil(spent))


def log_context(magnitude: float) -> Context:
    """A context for sums of terms ``e^y`` with ``|y|`` up to ``magnitude``, whose logarithms
    ``y`` (differences of quantities that large) must keep :data:`_GUARD_DIGITS` digits."""
    return Context(prec=_GUARD_DIGITS + math.ceil(math.log10(1.0 + abs(magnitude))))


def slack(ctx: Context, *magnitudes: Decimal) -> Decimal:
    """Upper bound on the rounding error of a sum of terms of the given magnitudes, each the
    result of a chain of operations in ``ctx``."""
    total = Decimal(0)
    for m in magnitudes:
        total = ctx.add(total, ctx.copy_abs(m))
    return total.scaleb(_SLACK_DIGITS - ctx.prec, ctx)


def ln1p(z: Decimal, ctx: Context) -> Decimal:
    """``log(1 + z)`` for ``z > -1`` to ``ctx``'s relative precision, also for tiny ``z``."""
    if abs(z) >= Decimal("1e-3"):
        return ctx.ln(ctx.add(1, z))
    return _series(z, ctx, lambda k, power: ctx.divide(power, k if k % 2 else -k))


def expm1(z: Decimal, ctx: Context) -> Decimal:
    """``e^z - 1`` to ``ctx``'s relative precision, also for tiny ``z``."""
    if abs(z) >= Decimal("1e-3"):
        return ctx.subtract(ctx.exp(z), 1)
    return _series(z, ctx, lambda k, power: ctx.divide(power, math.factorial(k)))


def _series(z: Decimal, ctx: Context, term) -> Decimal:
    """``sum_k term(k, z^k)`` (each term computed in ``ctx``) for ``|z| < 1e-3``, until a term
    falls below the precision (each term is at most ``1e-3`` of the one before)."""
    total, power, k = Decimal(0), Decimal(1), 0
    floor = abs(z).scaleb(-ctx.prec - 2, ctx)
    while True:
        k += 1
        power = ctx.multiply(power, z)
        step = term(k, power)
        total = ctx.add(total, step)
        if abs(step) <= floor:
            return total


@functools.lru_cache(maxsize=16)
def _pi(prec: int) -> Decimal:
    # Machin: pi = 16 atan(1/5) - 4 atan(1/239), each series summed to 10 digits beyond prec
    ctx = Context(prec=prec + 10)

    def atan_inverse(m: int) -> Decimal:
        total, power, k = Decimal(0), ctx.divide(1, m), 0
        floor = Decimal(1).scaleb(-ctx.prec - 2)
        while power > floor:
            total = ctx.add(total, ctx.divide(power, 2 * k + 1 if k % 2 == 0 else -(2 * k + 1)))
            power, k = ctx.divide(power, m * m), k + 1
        return total

    return ctx.subtract(ctx.multiply(16, atan_inverse(5)), ctx.multiply(4, atan_inverse(239)))


def pi(ctx: Context) -> Decimal:
    """``pi`` to ``ctx``'s precision."""
    return ctx.plus(_pi(ctx.prec))


def raised_until(value: float, holds, limit: float = math.inf) -> float:
    """``value``, raised until ``holds(value)`` (a check in decimals of a figure a float search
    proposed): by one ulp, then by steps that double from an ulp. Returns ``limit`` once the
    value reaches it (a figure known to hold there, or ``inf``)."""
    step = 0
    while value < limit and not holds(value):
        value = math.nextafter(value, math.inf) + math.ulp(value) * 2.0 ** step
        step += 1
    return min(value, limit)


def to_float_up(value: Decimal) -> float:
    """The smallest float ``>= value``."""
    out = float(value)
    return out if Decimal(out) >= value else math.nextafter(out, math.inf)
