"""Randomized repetition: private selection from private candidates (Papernot & Steinke 2022)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting import NeighboringRelation
from dp_accounting.dp_event import RepeatAndSelectDpEvent
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

from ._checks import (
    _check_base_delta,
    _check_epsilon,
    _check_probability,
)
from ._composition import (
    _randomized_response_event,
    kov_optimal_composition_epsilon,
)
from ._laws import (
    _check_fixed_runs,
    _check_mean,
    _resolve_distribution,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_mean,
)
from ._profiles import _Law, _profile_epsilon

#: name of the privacy-profile bound in reports (docs/accounting.md section 7.6)
_PROFILE = "privacy profile (Koskela, Redberg & Wang style; docs/accounting.md 7.6)"

#: Renyi orders for the repetition bounds: log-spaced lambda - 1 in [1e-3, 1e7]. Denser than
#: dp-accounting's defaults at large orders, where the optimum of Theorem 2 for a pure-DP base
#: lies; 100 points stay within 0.2 % of a 2000-point grid (checked in the tests against a fine
#: independent optimisation) and keep one dp-accounting call at a few tens of milliseconds.
_RDP_ORDERS = tuple(float(x) for x in 1.0 + np.geomspace(1e-3, 1e7, 100))


# --------------------------------------------------------------------------------------------
# Randomized repetition (Papernot & Steinke 2022; docs/accounting.md, section 7)
# --------------------------------------------------------------------------------------------












def _tnb_pgf_complement(gamma: float, eta: float, delta0: float) -> float:
    """``1 - f(1 - delta0)`` for the PGF ``f`` of ``D_{eta, gamma}``, computed stably.

    ``f(x) = ((1 - (1-gamma) x)^-eta - 1) / (gamma^-eta - 1)`` (``eta != 0``) or
    ``log(1 - (1-gamma) x) / log(gamma)`` (``eta = 0``). With ``t = log(1/gamma)`` and
    ``d = log(1/gamma) - log(1/gamma')``, ``gamma' = 1 - (1-gamma)(1-delta0)``:
    ``1 - f = expm1(-eta d) / expm1(-eta t)`` (``eta != 0``), ``d / t`` (``eta = 0``).
    """
    if delta0 == 0.0:
        return 0.0
    if gamma >= 1.0:
        return delta0  # K = 1
    t = -math.log(gamma)
    d = math.log1p(delta0 * math.expm1(t))  # log(gamma' / gamma)
    if eta == 0.0:
        return min(1.0, d / t)
    return min(1.0, math.expm1(-eta * d) / math.expm1(-eta * t))


def repetition_pure_epsilon(base_epsilon: float, distribution: str, eta: float | None = None,
                            mean: float | None = None) -> float:
    """Pure-DP bound of the best of ``K`` runs of an ``base_epsilon``-DP algorithm.

    Rules (replace-one; any neighbouring relation):

    * truncated negative binomial (``"logarithmic"`` eta = 0, ``"geometric"`` eta = 1,
      ``"negative_binomial"`` eta in (-1, inf)): ``(2 + eta) * base_epsilon``, whatever the
      mean (Papernot & Steinke 2022, Corollary 3; eta = 1 is Liu & Talwar 2019);
    * ``"poisson"``: no pure bound (``inf``; ``P[K = k]`` has no useful pure-DP bound);
    * ``"fixed"``: ``mean * base_epsilon``, basic composition of the ``mean`` runs.

    Parameters
    ----------
    base_epsilon : float
        Pure-DP parameter of one run.
    distribution : str
        One of ``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``, ``"poisson"``,
        ``"fixed"``.
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.
    mean : float or None
        Number of runs, required for ``"fixed"`` only.

    Returns
    -------
    float
        ``epsilon`` (``delta = 0``), possibly ``inf``.
    """
    eps0 = _check_epsilon(base_epsilon, "base_epsilon")
    distribution, eta = _resolve_distribution(distribution, eta)
    if distribution == "fixed":
        if mean is None:
            raise ValueError("distribution='fixed' needs mean (the number of runs)")
        return _check_fixed_runs(mean) * eps0
    if distribution == "poisson":
        return 0.0 if eps0 == 0.0 else math.inf
    return (2.0 + eta) * eps0


def repetition_rdp_epsilon(base_epsilon: float, distribution: str, mean: float,
                           eta: float | None, delta: float) -> float:
    """RDP bound: ``epsilon`` at ``delta`` of the best of ``K`` runs of an ``eps_0``-DP run.

    Rules (replace-one): the base run is represented by its dominating pair, binary randomized
    response with ``noise_parameter = 2 / (1 + e^eps)``, whose Renyi divergences bound those of
    every ``base_epsilon``-DP mechanism at every order (Kairouz, Oh & Viswanath 2015 and the
    data-processing inequality).

    * truncated negative binomial, ``eta >= 0``: Papernot & Steinke 2022, Theorem 2, computed by
      dp-accounting's ``RepeatAndSelectDpEvent`` with ``RdpAccountant(REPLACE_ONE)`` on a dense
      grid of orders (the same grid is used for ``lambda`` and ``lambda-hat``);
    * ``eta in (-1, 0)``: dp-accounting rejects a negative shape, so Theorem 2 is evaluated
      here with the same grid and the same RDP -> DP conversion;
    * ``"poisson"``: Theorem 6 **corrected for** ``P[K = 0] > 0`` (as printed it fails for
      ``mean < 1``; see ``docs/accounting.md``), evaluated here with
      ``eps-hat = log(1 + 1/(lambda - 1))`` and the exact ``delta-hat`` of randomized
      response, ``max(0, (e^eps - e^eps-hat) / (1 + e^eps))``. dp-accounting's Poisson branch
      implements the printed formula and is not used.

    RDP is turned into ``(epsilon, delta)`` by dp-accounting's ``compute_epsilon``
    (Canonne, Kamath & Steinke 2020, Proposition 12), and monotonicity in the order is applied
    (Papernot & Steinke, Remark 5).

    Parameters
    ----------
    base_epsilon : float
        Pure-DP parameter of one run.
    distribution : str
        ``"logarithmic"``, ``"geometric"``, ``"negative_binomial"`` or ``"poisson"``.
    mean : float
        ``E[K]``.
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.
    delta : float
        Target ``delta`` of the conversion; ``0`` gives ``inf``.

    Returns
    -------
    float
        ``epsilon``.
    """
    eps0 = _check_epsilon(base_epsilon, "base_epsilon")
    distribution, eta = _resolve_distribution(distribution, eta)
    delta = _check_probability(delta, "delta")
    if distribution == "fixed":
        raise ValueError("distribution='fixed' is accounted by composition, not by Theorem 2/6; "
                         "use repetition_cost")
    mean = _check_mean(mean, distribution)
    if eps0 == 0.0:
        return 0.0
    if delta == 0.0 or not math.isfinite(eps0):
        return math.inf
    if distribution == "poisson":
        return _poisson_rdp_epsilon(eps0, mean, delta)
    return _tnb_rdp_epsilon(eps0, eta, truncated_negative_binomial_gamma(mean, eta), delta)


def repetition_lemma20_delta(base_delta: float, distribution: str, mean: float,
                             eta: float | None = None) -> float:
    """The ``delta' = 1 - f(1 - delta_0)`` that an ``(eps_0, delta_0)``-DP base run adds.

    Rule (Papernot & Steinke 2022, Lemma 20; Corollary 21 for Poisson): ``f`` is the PGF of
    ``K``. With probability ``f(1 - delta_0)`` none of the runs draws from the ``delta_0`` part
    of the base distributions, and the repeated algorithm is then the repetition, ``K'`` times,
    of a pure ``eps_0``-DP pair, with ``P[K' = k] = P[K = k] (1 - delta_0)^k / f(1 - delta_0)``:

    * Poisson(``mu``): ``delta' = 1 - exp(-mu delta_0)``, ``K' ~ Poisson(mu (1 - delta_0))``;
    * ``D_{eta, gamma}``: ``delta'`` from the PGF above, ``K' ~ D_{eta, gamma'}`` with
      ``gamma' = 1 - (1 - gamma)(1 - delta_0)`` (same ``eta``, smaller mean);
    * fixed ``n`` runs: ``delta' = 1 - (1 - delta_0)^n`` (Kairouz, Oh & Viswanath, Thm. 3.3).

    Parameters
    ----------
    base_delta : float
        ``delta_0`` of one run, in [0, 1).
    distribution : str
        Law of ``K``.
    mean : float
        ``E[K]`` (the number of runs for ``"fixed"``).
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.

    Returns
    -------
    float
        ``delta'``.
    """
    delta0 = _check_base_delta(base_delta)
    distribution, eta = _resolve_distribution(distribution, eta)
    mean = _check_mean(mean, distribution)
    if delta0 == 0.0:
        return 0.0
    if distribution == "poisson":
        return -math.expm1(-mean * delta0)
    if distribution == "fixed":
        return -math.expm1(mean * math.log1p(-delta0))
    return _tnb_pgf_complement(truncated_negative_binomial_gamma(mean, eta), eta, delta0)


def repetition_cost(base_epsilon: float, base_delta: float, distribution: str, mean: float,
                    eta: float | None = None, delta: float = 0.0) -> tuple[float, float]:
    """``(epsilon, delta)`` of releasing the best of ``K`` runs of an ``(eps_0, delta_0)``-DP run.

    Replace-one neighbouring relation. ``K`` is drawn independently of the data and must not be
    released (nor the losing runs).

    * truncated negative binomial: the smallest ``epsilon`` of the pure bound
      ``((2 + eta) eps_0, delta')`` (Corollary 3), the RDP bound
      ``(Theorem 2 at delta, delta + delta')`` and the privacy-profile bound
      ``(profile at delta, delta + delta')`` (:func:`repetition_profile_epsilon`);
    * Poisson: the smaller of ``(Theorem 6 at delta, delta + delta')`` and the privacy-profile
      bound; ``delta > 0`` is required;
    * fixed ``n`` runs: the smallest ``epsilon`` of basic composition
      ``(n eps_0, 1 - (1 - delta_0)^n)`` and, when ``delta > 0``, optimal composition and the
      privacy-profile bound, both ``(... at delta, 1 - (1 - delta_0)^n (1 - delta))``.

    The RDP and profile bounds are used only when ``delta > 0``.

    With ``delta_0 > 0`` the ``delta'`` of :func:`repetition_lemma20_delta` is added and the
    RDP and profile bounds are computed for the reduced number of runs ``K'`` of Lemma 20
    (Corollary 21 for Poisson): pure ``eps_0``-DP pairs repeated ``K'`` times. ``K = 1``
    surely (mean 1 for a truncated negative binomial) costs exactly the base run.

    Parameters
    ----------
    base_epsilon, base_delta : float
        ``(eps_0, delta_0)`` of one run.
    distribution : str
        ``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``, ``"poisson"`` or
        ``"fixed"``.
    mean : float
        ``E[K]`` (the number of runs for ``"fixed"``).
    eta : float or None
        Shape, required for ``"negative_binomial"`` only.
    delta : float, default=0.0
        Conversion budget for the RDP / optimal-composition bounds.

    Returns
    -------
    (float, float)
        ``(epsilon, delta)`` actually guaranteed.
    """
    epsilon, delta_used, _ = _repetition(base_epsilon, base_delta, distribution, mean, eta,
                                         delta)
    return epsilon, delta_used


def repetition_epsilon(base_epsilon: float, base_delta: float, distribution: str, mean: float,
                       eta: float | None = None, delta: float = 0.0) -> float:
    """``epsilon`` of :func:`repetition_cost` (same rules and arguments).

    Returns
    -------
    float
        ``epsilon``; its ``delta`` is ``repetition_cost(...)[1]``.
    """
    return repetition_cost(base_epsilon, base_delta, distribution, mean, eta, delta)[0]


def _repetition(base_epsilon: float, base_delta: float, distribution: str, mean: float,
                eta: float | None, delta: float) -> tuple[float, float, str]:
    """``(epsilon, delta, name of the bound used)`` of the repetition (see repetition_cost)."""
    eps0 = _check_epsilon(base_epsilon, "base_epsilon")
    delta0 = _check_base_delta(base_delta)
    distribution, eta = _resolve_distribution(distribution, eta)
    mean = _check_mean(mean, distribution)
    delta = _check_probability(delta, "delta")

    if distribution == "fixed":
        n = _check_fixed_runs(mean)
        delta_runs = -math.expm1(n * math.log1p(-delta0)) if delta0 else 0.0
        best = (n * eps0, delta_runs, "basic composition")
        if delta > 0.0 and n > 1:
            total_delta = -math.expm1(n * math.log1p(-delta0) + math.log1p(-delta))
            kov = kov_optimal_composition_epsilon(eps0, n, delta)
            if kov < best[0]:
                best = (kov, total_delta, "optimal composition (KOV Thm. 3.3)")
            profile = _profile_epsilon(_Law("fixed", float(n), trials=n), eps0, delta)
            if profile < best[0]:
                best = (profile, total_delta, _PROFILE)
        return best

    if distribution == "poisson":
        if delta <= 0.0 and eps0 > 0.0:
            raise ValueError("Poisson repetition has no pure-DP bound: give delta > 0 "
                             "(Papernot & Steinke 2022, Theorem 6)")
        delta_prime = -math.expm1(-mean * delta0)
        mean_prime = mean * (1.0 - delta0)  # Corollary 21: K' ~ Poisson(mu (1 - delta0))
        if eps0 == 0.0:
            return 0.0, delta_prime, "trivial (eps_0 = 0)"
        if not math.isfinite(eps0):
            return math.inf, min(1.0, delta + delta_prime), "eps_0 = inf"
        rdp = _poisson_rdp_epsilon(eps0, mean_prime, delta)
        profile = _profile_epsilon(_Law("poisson", mean_prime), eps0, delta)
        if profile < rdp:
            return profile, min(1.0, delta + delta_prime), _PROFILE
        return rdp, min(1.0, delta + delta_prime), "RDP (P&S Thm. 6, corrected for K = 0)"

    # truncated negative binomial
    if mean == 1.0:
        return eps0, delta0, "K = 1"
    gamma = truncated_negative_binomial_gamma(mean, eta)
    delta_prime = _tnb_pgf_complement(gamma, eta, delta0)
    pure = ((2.0 + eta) * eps0, delta_prime, "pure (P&S Cor. 3)")
    if delta <= 0.0 or eps0 == 0.0 or not math.isfinite(eps0):
        return pure
    # Lemma 20: K' ~ D_{eta, gamma'}, 1 - gamma' = (1 - gamma)(1 - delta0); gamma' rounded so
    # that 1 - gamma' (exact for gamma' >= 1/2) is not below it -- more runs, a larger bound
    # (at E[K] near 1, 1 - gamma' is about 1e-15 and one rounding of gamma' moves it by 10 %)
    gamma_prime = gamma
    if delta0 > 0.0:
        beta_prime = (1.0 - gamma) * (1.0 - delta0)
        gamma_prime = 1.0 - beta_prime
        while gamma_prime > 0.0 and 1.0 - gamma_prime < beta_prime:
            gamma_prime = math.nextafter(gamma_prime, 0.0)
    if gamma_prime >= 1.0:
        rdp_epsilon = profile_epsilon = eps0
    else:
        rdp_epsilon = _tnb_rdp_epsilon(eps0, eta, gamma_prime, delta)
        mean_prime = truncated_negative_binomial_mean(gamma_prime, eta)
        law = _Law("truncated_negative_binomial", mean_prime, eta=eta, gamma=gamma_prime)
        profile_epsilon = _profile_epsilon(law, eps0, delta)
    if profile_epsilon < min(rdp_epsilon, pure[0]):
        return profile_epsilon, min(1.0, delta + delta_prime), _PROFILE
    if rdp_epsilon < pure[0]:
        return rdp_epsilon, min(1.0, delta + delta_prime), "RDP (P&S Thm. 2)"
    return pure


def _randomized_response_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Renyi divergence of binary randomized response with ratio ``e^eps``, at each order > 1.

    ``P = (e^eps, 1) / (1 + e^eps)``, ``Q = (1, e^eps) / (1 + e^eps)``:
    ``D_lambda = log((e^{lambda eps} + e^{(1 - lambda) eps}) / (1 + e^eps)) / (lambda - 1)``.
    """
    numerator = np.logaddexp(orders * epsilon, (1.0 - orders) * epsilon)
    return (numerator - np.logaddexp(0.0, epsilon)) / (orders - 1.0)


def _rdp_to_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """Monotone envelope in the order, then dp-accounting's RDP -> (eps, delta) conversion."""
    envelope = np.minimum.accumulate(rdp[::-1])[::-1]  # D_a <= D_b for a <= b
    return float(compute_epsilon(orders, envelope, delta)[0])


def _dp_accounting_repeat_and_select(epsilon: float, mean: float, shape: float,
                                     delta: float) -> float:
    """dp-accounting's RDP accountant (replace-one, our orders) on a repeat-and-select event."""
    accountant = RdpAccountant(orders=list(_RDP_ORDERS),
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(RepeatAndSelectDpEvent(_randomized_response_event(epsilon), mean, shape))
    return float(accountant.get_epsilon(delta))


@lru_cache(maxsize=4096)
def _tnb_rdp_epsilon(epsilon: float, eta: float, gamma: float, delta: float) -> float:
    """Theorem 2 (P&S 2022), ``K ~ D_{eta, gamma}``, pure ``epsilon``-DP base, at ``delta``.

    ``eta >= 0`` goes through dp-accounting, which re-derives ``gamma`` from ``E[K]`` rounding
    towards smaller ``gamma`` (a larger bound), so the bound holds for this ``gamma``;
    ``eta < 0`` (rejected by dp-accounting) through :func:`_tnb_theorem2_epsilon`.
    """
    if eta >= 0.0:
        mean = truncated_negative_binomial_mean(gamma, eta)
        return _dp_accounting_repeat_and_select(epsilon, mean, eta, delta)
    return _tnb_theorem2_epsilon(epsilon, eta, gamma, delta)


def _tnb_theorem2_epsilon(epsilon: float, eta: float, gamma: float, delta: float) -> float:
    """Theorem 2 evaluated here (any ``eta > -1``), with dp-accounting's grid conventions.

    ``eps'(lam) = eps(lam) + (1 + eta) min_{lam-hat} [(1 - 1/lam-hat) eps(lam-hat)
    + log(1/gamma) / lam-hat] + log E[K] / (lam - 1)`` on the grid ``_RDP_ORDERS`` (for both
    orders), then monotonicity and the RDP -> DP conversion.
    """
    orders = np.asarray(_RDP_ORDERS)
    rdp = _randomized_response_rdp(epsilon, orders)
    mean = truncated_negative_binomial_mean(gamma, eta)
    log_inv_gamma = -math.log(gamma)
    constant = (1.0 + eta) * float(np.min((1.0 - 1.0 / orders) * rdp + log_inv_gamma / orders))
    bound = rdp + constant + math.log(mean) / (orders - 1.0)
    return _rdp_to_epsilon(orders, bound, delta)


@lru_cache(maxsize=4096)
def _poisson_rdp_epsilon(epsilon: float, mean: float, delta: float) -> float:
    """Theorem 6 (P&S 2022) as corrected for ``P[K = 0] > 0``, pure ``epsilon``-DP base.

    Theorem 6 as printed, ``eps'(lam) = eps(lam) + mu delta-hat + log(mu) / (lam - 1)``, is
    negative (hence false) for ``mu < 1`` at small orders: its proof (Lemma 7) assumes
    ``P[K = 0] = 0``. Writing ``A = e^-mu 1_bot + (1 - e^-mu) B`` with ``B`` the repetition for
    ``K | K >= 1``, joint convexity of ``exp((lam - 1) D_lam)`` and Lemma 7 for ``B`` give

        exp((lam - 1) D_lam(A || A')) <= e^-mu + mu exp((lam - 1)(eps(lam) + mu delta-hat)),

    valid for every ``mu > 0`` and within ``log(1 + e^-mu / mu) / (lam - 1)`` of the printed
    bound. ``eps-hat = log(1 + 1/(lam - 1))`` (the largest allowed) and ``delta-hat`` is the
    exact hockey-stick divergence of randomized response there,
    ``max(0, (e^eps - e^eps-hat) / (1 + e^eps))``, which bounds that of every ``epsilon``-DP
    pair. dp-accounting's Poisson branch implements the printed formula (with a looser
    ``delta-hat``) and is not used.
    """
    # delta-hat vanishes up to lam* = 1 + 1/(e^eps - 1), where the optimum usually lies: add it
    # and a few orders around it to the grid
    kink = 1.0 + math.exp(-epsilon) / -math.expm1(-epsilon)  # 1 + 1/(e^eps - 1)
    extra = 1.0 + (kink - 1.0) * np.geomspace(0.5, 2.0, 21)
    orders = np.unique(np.concatenate([_RDP_ORDERS, [kink], extra]))
    orders = orders[orders - 1.0 > 1e-6]  # a huge epsilon puts the kink at 1 + tiny
    rdp = _randomized_response_rdp(epsilon, orders)
    eps_hat = np.log1p(1.0 / (orders - 1.0))
    # (e^eps - e^eps_hat) / (1 + e^eps), written without overflow
    delta_hat = np.maximum(0.0, -np.expm1(eps_hat - epsilon) / (1.0 + math.exp(-epsilon)))
    exponent = math.log(mean) + (orders - 1.0) * (rdp + mean * delta_hat)
    bound = np.logaddexp(-mean, exponent) / (orders - 1.0)
    return _rdp_to_epsilon(orders, bound, delta)








