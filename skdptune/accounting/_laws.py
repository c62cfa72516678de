"""The laws of the number of runs of a randomized repetition (Papernot & Steinke 2022).

The truncated negative binomial (``logarithmic``: eta = 0, ``geometric``: eta = 1, or any
eta in (-1, inf)), the Poisson and the fixed number of runs: their validation, and the
truncated negative binomial's ``gamma`` for a given mean. Both the repetition's bounds
(:mod:`._repetition`) and its privacy profiles (:mod:`._profiles`) read them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ._checks import _check_positive_int

#: eta of the truncated negative binomial for the named special cases (Papernot & Steinke).
_NAMED_ETA = {"logarithmic": 0.0, "geometric": 1.0}


_TNB = ("logarithmic", "geometric", "negative_binomial")


_DISTRIBUTIONS = (*_TNB, "poisson", "fixed")


def truncated_negative_binomial_mean(gamma: float, eta: float) -> float:
    """``E[K]`` of the truncated negative binomial ``D_{eta, gamma}`` (Papernot & Steinke, Def. 1).

    ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` for ``eta != 0`` and
    ``(1 - gamma) / (gamma log(1/gamma))`` for ``eta = 0`` (logarithmic); ``gamma = 1`` is the
    limit ``K = 1``. Computed with ``expm1`` in ``t = log(1/gamma)`` for stability.

    Parameters
    ----------
    gamma : float
        In (0, 1].
    eta : float
        In (-1, inf).

    Returns
    -------
    float
        ``E[K] >= 1``.
    """
    gamma = float(gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1]; got {gamma!r}")
    return _tnb_mean_t(-math.log(gamma), _check_eta(eta))


def _tnb_mean_t(t: float, eta: float) -> float:
    """``E[K]`` as a function of ``t = log(1/gamma) >= 0`` (``inf`` beyond the float range)."""
    log_mean = _tnb_log_mean_t(t, eta)
    return math.exp(log_mean) if log_mean < 709.0 else math.inf


def _tnb_log_mean_t(t: float, eta: float) -> float:
    """``log E[K]``, in log space: ``E[K] = expm1(t) / ((1 - e^{-eta t}) / eta)`` overflows
    for ``eta`` near -1, where ``(1 - e^{-eta t}) / eta = expm1(|eta| t) / |eta|``."""
    if t == 0.0:
        return 0.0
    if eta == 0.0:  # (1 - e^{-eta t}) / eta -> t as eta -> 0
        log_denominator = math.log(t)
    elif eta > 0.0:
        log_denominator = math.log(-math.expm1(-eta * t)) - math.log(eta)
    else:
        log_denominator = _log_expm1(-eta * t) - math.log(-eta)
    return max(0.0, _log_expm1(t) - log_denominator)


def _log_expm1(y: float) -> float:
    """``log(e^y - 1)`` for ``y > 0``, without overflow."""
    return y + math.log1p(-math.exp(-y)) if y > 1.0 else math.log(math.expm1(y))


def truncated_negative_binomial_gamma(mean: float, eta: float) -> float:
    """``gamma`` of the truncated negative binomial ``D_{eta, gamma}`` with ``E[K] = mean``.

    Solves :func:`truncated_negative_binomial_mean` ``= mean`` numerically (``E[K]`` is
    decreasing in ``gamma``; root finding on ``log(1/gamma)``), for every ``eta`` in
    ``(-1, inf)``. The result is rounded towards larger ``gamma`` so that
    ``E[K] <= mean``: a sampler that uses this ``gamma`` never runs more often on average than
    the accounting assumes. ``mean = 1`` gives ``gamma = 1``, the limit in which ``K = 1``
    surely (samplers must treat it as such).

    The repetition selector must draw ``K`` with exactly this ``gamma``: the accounting of
    :func:`repetition_cost` is computed for it.

    Parameters
    ----------
    mean : float
        ``E[K] >= 1``.
    eta : float
        Shape in (-1, inf); 0 is the logarithmic, 1 the geometric distribution.

    Returns
    -------
    float
        ``gamma`` in (0, 1].
    """
    eta = _check_eta(eta)
    mean = float(mean)
    if not (math.isfinite(mean) and mean >= 1.0):
        raise ValueError(f"the mean of a truncated negative binomial must be >= 1; got {mean!r}")
    if mean == 1.0:
        return 1.0
    if eta == 1.0:
        t = math.log(mean)  # geometric: E[K] = 1 / gamma
    else:
        log_mean = math.log(mean)
        upper = 1.0
        while _tnb_log_mean_t(upper, eta) < log_mean:
            upper *= 2.0
        t = brentq(lambda s: _tnb_log_mean_t(s, eta) - log_mean, 0.0, upper,
                   xtol=1e-15, rtol=4 * np.finfo(float).eps)
    gamma = math.exp(-t)
    if gamma == 0.0:
        raise ValueError(
            f"a truncated negative binomial with eta={eta!r} and mean {mean!r} needs gamma = "
            f"exp(-{t:.3g}), below the smallest float: use a larger eta or a smaller mean")
    while _tnb_mean_t(-math.log(gamma), eta) > mean:
        gamma = math.nextafter(gamma, 1.0)
    return gamma


def _check_eta(eta: float) -> float:
    eta = float(eta)
    if not (math.isfinite(eta) and eta > -1.0):
        raise ValueError(f"eta must be in (-1, inf); got {eta!r}")
    return eta


def _check_fixed_runs(mean: float) -> int:
    return _check_positive_int(mean, "the number of runs (mean) of distribution='fixed'")


def _check_mean(mean: float, distribution: str) -> float:
    if distribution == "fixed":
        return float(_check_fixed_runs(mean))
    mean = float(mean)
    if distribution == "poisson":
        if not (math.isfinite(mean) and mean > 0.0):
            raise ValueError(f"the Poisson mean must be > 0; got {mean!r}")
        return mean
    if not (math.isfinite(mean) and mean >= 1.0):
        raise ValueError(f"the mean of a truncated negative binomial must be >= 1; got {mean!r}")
    return mean


def _resolve_distribution(distribution: str, eta: float | None) -> tuple[str, float | None]:
    """Validate ``(distribution, eta)``; return the distribution and the eta it implies."""
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {_DISTRIBUTIONS}; got {distribution!r}")
    if distribution in _NAMED_ETA:
        if eta is not None and float(eta) != _NAMED_ETA[distribution]:
            raise ValueError(f"distribution={distribution!r} has eta={_NAMED_ETA[distribution]:g}; "
                             f"got eta={eta!r}")
        return distribution, _NAMED_ETA[distribution]
    if distribution == "negative_binomial":
        if eta is None:
            raise ValueError("distribution='negative_binomial' needs eta in (-1, inf)")
        return distribution, _check_eta(eta)
    return distribution, None
