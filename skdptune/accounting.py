"""Cost descriptions -> ``(epsilon, delta)``: the one place where privacy arithmetic lives.

Every private step of a search returns a small event from :mod:`skdptune.events`;
:func:`event_cost` turns any event into ``(epsilon, delta)`` and :func:`privacy_report`
composes named events into a :class:`PrivacyReport`. The helpers below state each rule, its
neighbouring relation and its reference; ``docs/accounting.md`` gives the proofs.

All quantities are for the **replace-one** neighbouring relation (bounded DP, ``n`` public):
two datasets are neighbours when one record (a row of ``X`` with its ``y`` and sample weight) is
replaced by another. Every figure is computed from data-independent quantities only. This
module generates no noise and reads no data: it is pure arithmetic.

The ``delta`` convention
------------------------
Some costs are only finite once a target ``delta`` is chosen (Renyi-DP based repetition bounds,
Gaussian DP). Throughout this module ``delta`` is the *conversion budget*: the total ``delta``
that may be spent turning such guarantees into ``(epsilon, delta)``. Inside a
:class:`~skdptune.events.ComposedEvent` (and across the components of :func:`privacy_report`)
it is split equally between the parts that consume one, so the conversions together never
use more than ``delta``; a :class:`~skdptune.events.ParallelEvent` hands its whole share to
every part (only one part sees the replaced record). Deltas that are part of a mechanism's own
guarantee (an ``EpsilonDeltaEvent``'s ``delta``, the ``1 - f(1 - delta_0)`` of
Papernot & Steinke's Lemma 20) are added on top. The reported ``delta`` is always the one
actually used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, log_ndtr

from .events import (
    ComposedEvent,
    DoublingSVTEvent,
    EpsilonDeltaEvent,
    GaussianDPEvent,
    LaplaceEvent,
    ParallelEvent,
    PermuteAndFlipEvent,
    PrivacyEvent,
    RepeatAndSelectEvent,
)

__all__ = [
    "PrivacyComponent",
    "PrivacyReport",
    "event_cost",
    "privacy_report",
    "sequential_composition",
    "parallel_composition",
    "doubling_svt_epsilon",
    "doubling_svt_round_epsilon",
    "svt_max_above",
    "kov_optimal_composition_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "pld_compose_randomized_response_epsilon",
    "truncated_negative_binomial_mean",
    "truncated_negative_binomial_gamma",
    "repetition_pure_epsilon",
    "repetition_rdp_epsilon",
    "repetition_lemma20_delta",
    "repetition_cost",
    "repetition_epsilon",
]

NEIGHBOURING = "replace-one (bounded DP)"

#: eta of the truncated negative binomial for the named special cases (Papernot & Steinke).
_NAMED_ETA = {"logarithmic": 0.0, "geometric": 1.0}
_TNB = ("logarithmic", "geometric", "negative_binomial")
_DISTRIBUTIONS = (*_TNB, "poisson", "fixed")

#: Renyi orders for the repetition bounds: log-spaced lambda - 1 in [1e-3, 1e7]. Denser than
#: dp-accounting's defaults at large orders, where the optimum of Theorem 2 for a pure-DP base
#: lies; 100 points stay within 0.2 % of a 2000-point grid (checked in the tests against a fine
#: independent optimisation) and keep one dp-accounting call at a few tens of milliseconds.
_RDP_ORDERS = tuple(float(x) for x in 1.0 + np.geomspace(1e-3, 1e7, 100))


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivacyComponent:
    """One line of a :class:`PrivacyReport`: a named private step and its ``(epsilon, delta)``.

    Parameters
    ----------
    name : str
        What the step is (e.g. ``"tuning: doubling SVT selection"``).
    epsilon, delta : float
        Its cost under the replace-one neighbouring relation.
    detail : str, default=""
        How the cost was computed (mechanism, parameters, bound used).
    """

    name: str
    epsilon: float
    delta: float
    detail: str = ""


@dataclass(frozen=True)
class PrivacyReport:
    """Total ``(epsilon, delta)`` of a computation with its breakdown.

    ``eps, delta = report`` unpacks the total. ``str(report)`` is an aligned table;
    :meth:`as_dict` gives plain Python types (JSON-serialisable).

    Parameters
    ----------
    epsilon, delta : float
        The total cost.
    components : tuple of PrivacyComponent
        The parts, in the order they run.
    neighbouring : str, default="replace-one (bounded DP)"
        Neighbouring relation the figures are stated for.
    composition : str, default="sequential"
        How the components were combined into the total.
    """

    epsilon: float
    delta: float
    components: tuple[PrivacyComponent, ...] = field(default_factory=tuple)
    neighbouring: str = NEIGHBOURING
    composition: str = "sequential"

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", tuple(self.components))

    def __iter__(self) -> Iterator[float]:
        yield self.epsilon
        yield self.delta

    def as_dict(self) -> dict:
        """The report as plain Python types (floats, strings, lists, dicts)."""
        return {
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "neighbouring": str(self.neighbouring),
            "composition": str(self.composition),
            "components": [
                {key: (float(value) if key in ("epsilon", "delta") else str(value))
                 for key, value in asdict(component).items()}
                for component in self.components
            ],
        }

    def __str__(self) -> str:
        rows = [(c.name, _fmt(c.epsilon), _fmt(c.delta), c.detail) for c in self.components]
        total = (f"TOTAL ({self.composition})", _fmt(self.epsilon), _fmt(self.delta), "")
        header = ("component", "epsilon", "delta", "detail")
        widths = [max(len(row[i]) for row in [header, *rows, total]) for i in range(3)]

        def line(row: tuple[str, str, str, str]) -> str:
            text = (f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}"
                    f"  {row[3]}")
            return text.rstrip()

        body = [line(row) for row in rows]
        rule = "-" * max(len(text) for text in [line(header), *body, line(total)])
        return "\n".join([line(header), rule, *body, rule, line(total),
                          f"neighbouring datasets: {self.neighbouring}"])


def _fmt(value: float) -> str:
    return f"{value:.6g}"


# --------------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------------


def sequential_composition(costs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Basic sequential composition: ``(sum of epsilons, sum of deltas)``.

    Rule: running ``(eps_i, delta_i)``-DP mechanisms (possibly adaptively) on the same rows is
    ``(sum eps_i, sum delta_i)``-DP, for any neighbouring relation, hence for replace-one
    (Dwork & Roth 2014, Theorem 3.16).

    Parameters
    ----------
    costs : iterable of (float, float)
        ``(epsilon, delta)`` of each mechanism.

    Returns
    -------
    (float, float)
        The composed ``(epsilon, delta)``.
    """
    epsilon, delta = 0.0, 0.0
    for eps, dlt in costs:
        epsilon += float(eps)
        delta += float(dlt)
    return epsilon, min(delta, 1.0)


def parallel_composition(costs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Parallel composition: component-wise maximum ``(max epsilon, max delta)``.

    Rule: mechanisms that each read only their own part of a data-independent partition of the
    rows. Under replace-one the replaced record lies in exactly one part, so the pair of output
    distributions differs only through that part's mechanism: the whole is
    ``(max eps_i, max delta_i)``-DP (McSherry 2009, Theorem 4). (Under add/remove the same holds;
    replace-one *across* two parts is ruled out because the partition is data-independent and
    the replaced record keeps its position.)

    Parameters
    ----------
    costs : iterable of (float, float)
        ``(epsilon, delta)`` of each part.

    Returns
    -------
    (float, float)
        The composed ``(epsilon, delta)``; ``(0, 0)`` for no part.
    """
    epsilon, delta = 0.0, 0.0
    for eps, dlt in costs:
        epsilon = max(epsilon, float(eps))
        delta = max(delta, float(dlt))
    return epsilon, delta


# --------------------------------------------------------------------------------------------
# Doubling-step sparse vector technique (DESIGN.md 4.C)
# --------------------------------------------------------------------------------------------


def doubling_svt_epsilon(max_above: int, epsilon_round: float) -> float:
    """Pure-DP cost of the doubling-step SVT selector: ``N * eps0 + (N + 1) * eps0 / 2``.

    Rule (``docs/accounting.md``, "Doubling-step SVT"): an "above" round (threshold noise
    ``Lap(2 Delta / eps0)``, query noise ``Lap(4 Delta / eps0)``) is ``eps0``-DP, a "none"
    round ``eps0 / 2``-DP; the ``u >= 1`` guard allows at most ``N`` above rounds and the step
    dynamics at most ``N + 1`` none rounds in every transcript, so the selector is pure
    ``(3N + 1) eps0 / 2``-DP whatever the data. Utilities of sensitivity ``Delta`` under
    replace-one. Seeds: Ding et al. (000) Algorithm 1 with the guard of (003) line 29; the
    per-transcript bound replaces their data-dependent accounting.

    Parameters
    ----------
    max_above : int
        ``N``, the cap on above rounds (:func:`svt_max_above`).
    epsilon_round : float
        ``eps0``, the per-round budget.

    Returns
    -------
    float
        ``epsilon`` of the whole selector (``delta = 0``).
    """
    n = _check_positive_int(max_above, "max_above")
    eps0 = _check_epsilon(epsilon_round, "epsilon_round")
    return n * eps0 + (n + 1) * eps0 / 2.0


def doubling_svt_round_epsilon(epsilon: float, max_above: int) -> float:
    """Per-round budget ``eps0 = 2 epsilon / (3N + 1)`` so the selector costs ``epsilon``.

    Inverse of :func:`doubling_svt_epsilon` (same rule, replace-one).

    Parameters
    ----------
    epsilon : float
        Budget of the whole selector (pure DP).
    max_above : int
        ``N``, the cap on above rounds.

    Returns
    -------
    float
        ``eps0``.
    """
    n = _check_positive_int(max_above, "max_above")
    return 2.0 * _check_epsilon(epsilon, "epsilon") / (3 * n + 1)


def svt_max_above(utility_floor: float, granularity: float) -> int:
    """``N = ceil((1 - u0) / g)``: the most "above" rounds the ``u >= 1`` guard allows.

    Each above round raises the threshold by ``step * g >= g``, starting from ``u0``; a round
    runs only while ``u < 1``, so at most ``ceil((1 - u0) / g)`` above rounds happen (exact
    arithmetic). The quotient is rounded to the nearest integer when it is within a relative
    ``1e-9`` of it, so that ``(1 - 0.5) / 0.1 = 5.000000000000001`` gives 5, not 6.

    The selector must enforce the cap by *counting* above rounds (stop after ``N``) or by
    keeping ``u`` as ``u0 + m * g`` with an integer ``m``: in floating point,
    ``0.5 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 < 1`` and a plain ``u >= 1`` test would allow a sixth
    above round, which this ``N`` does not pay for.

    Parameters
    ----------
    utility_floor : float
        ``u0`` in [0, 1).
    granularity : float
        ``g`` > 0.

    Returns
    -------
    int
        ``N >= 1``.
    """
    u0, g = float(utility_floor), float(granularity)
    if not (math.isfinite(u0) and 0.0 <= u0 < 1.0):
        raise ValueError(f"utility_floor must be in [0, 1); got {utility_floor!r}")
    if not (math.isfinite(g) and g > 0.0):
        raise ValueError(f"granularity must be > 0; got {granularity!r}")
    quotient = (1.0 - u0) / g
    nearest = round(quotient)
    if abs(quotient - nearest) <= 1e-9 * max(1.0, abs(quotient)):
        return max(1, int(nearest))
    return max(1, math.ceil(quotient))


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
    found in closed form, in log-space. Never exceeds ``k * epsilon``; equals it for
    ``delta = 0``.

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
    if ratio >= 1.0:
        return lower
    root = log_a_m + math.log1p(-ratio) - log_b_m
    return float(min(max(root, lower), upper, k * eps))


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


# --------------------------------------------------------------------------------------------
# PLD composition of randomized response (dp-accounting), immune to the count trap
# --------------------------------------------------------------------------------------------


def pld_compose_randomized_response_epsilon(epsilon: float, count: int, delta: float,
                                            value_discretization_interval: float = 1e-4
                                            ) -> float:
    """``epsilon`` of the ``count``-fold composition of ``epsilon``-DP binary randomized response.

    Computed with dp-accounting's PLD accountant (``NeighboringRelation.REPLACE_ONE``,
    ``noise_parameter = 2 / (1 + e^eps)``, 2 buckets), which bounds every ``count``-fold
    composition of ``epsilon``-DP mechanisms because binary randomized response dominates
    them (Kairouz, Oh & Viswanath 2015).

    **dp-accounting trap** (seen with dp-accounting 0.6.0): the PLD accountant ignores the count
    of ``compose(event, count=T)`` and of ``SelfComposedDpEvent(RandomizedResponseDpEvent(...),
    T)`` for randomized response and reports the ``epsilon`` of a single run. This function
    calls ``compose(event)`` ``count`` separate times instead (cost linear in ``count``).

    Cross-check: the same quantity has the exact closed form
    :func:`kov_optimal_composition_epsilon`; the PLD value (pessimistic discretisation) is an
    upper bound on it, within the discretisation error. The function returns the larger of the
    two, so a wrong (too small) PLD answer can never lower the result below the exact optimum.

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter of each run.
    count : int
        Number of runs.
    delta : float
        Target ``delta`` in [0, 1].
    value_discretization_interval : float, default=1e-4
        PLD discretisation (smaller: tighter and slower).

    Returns
    -------
    float
        ``epsilon`` of the composition at ``delta``.
    """
    eps = _check_epsilon(epsilon, "epsilon")
    count = _check_nonnegative_int(count, "count")
    delta = _check_probability(delta, "delta")
    exact = kov_optimal_composition_epsilon(eps, count, delta)
    if count == 0 or eps == 0.0 or delta == 0.0 or _rr_noise_parameter(eps) == 0.0:
        return exact  # (a noise parameter of 0 would be treated as non-private by dp-accounting)
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import PLDAccountant

    event = _randomized_response_event(eps)
    accountant = PLDAccountant(NeighboringRelation.REPLACE_ONE,
                               value_discretization_interval=value_discretization_interval)
    for _ in range(count):  # NOT compose(event, count=count): dp-accounting ignores the count
        accountant.compose(event)
    return float(max(accountant.get_epsilon(delta), exact))


# --------------------------------------------------------------------------------------------
# Randomized repetition (Papernot & Steinke 2022, DESIGN.md 4.D)
# --------------------------------------------------------------------------------------------


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
    """``E[K]`` as a function of ``t = log(1/gamma) >= 0``."""
    if t == 0.0:
        return 1.0
    # E[K] = expm1(t) / ((1 - e^{-eta t}) / eta), and (1 - e^{-eta t}) / eta -> t as eta -> 0
    denominator = t if eta == 0.0 else -math.expm1(-eta * t) / eta
    return max(1.0, math.expm1(t) / denominator)


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
        while _tnb_mean_t(upper, eta) < mean:
            upper *= 2.0
        t = brentq(lambda s: math.log(_tnb_mean_t(s, eta)) - log_mean, 0.0, upper,
                   xtol=1e-15, rtol=4 * np.finfo(float).eps)
    gamma = math.exp(-t)
    while _tnb_mean_t(-math.log(gamma), eta) > mean:
        gamma = math.nextafter(gamma, 1.0)
    return gamma


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

    * truncated negative binomial: the smaller ``epsilon`` of the pure bound
      ``((2 + eta) eps_0, delta')`` (Corollary 3) and the RDP bound
      ``(Theorem 2 at delta, delta + delta')``;
    * Poisson: ``(Theorem 6 at delta, delta + delta')``; ``delta > 0`` is required;
    * fixed ``n`` runs: the smaller ``epsilon`` of basic composition
      ``(n eps_0, 1 - (1 - delta_0)^n)`` and, when ``delta > 0``, optimal composition
      ``(KOV at delta, 1 - (1 - delta_0)^n (1 - delta))``.

    With ``delta_0 > 0`` the ``delta'`` of :func:`repetition_lemma20_delta` is added and the
    RDP bound is computed for the reduced number of runs ``K'`` of Lemma 20 (Corollary 21 for
    Poisson): pure ``eps_0``-DP pairs repeated ``K'`` times. ``K = 1`` surely (mean 1 for a
    truncated negative binomial) costs exactly the base run.

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
            kov = kov_optimal_composition_epsilon(eps0, n, delta)
            if kov < best[0]:
                total_delta = -math.expm1(n * math.log1p(-delta0) + math.log1p(-delta))
                best = (kov, total_delta, "optimal composition (KOV Thm. 3.3)")
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
        return rdp, min(1.0, delta + delta_prime), "RDP (P&S Thm. 6, corrected for K = 0)"

    # truncated negative binomial
    if mean == 1.0:
        return eps0, delta0, "K = 1"
    gamma = truncated_negative_binomial_gamma(mean, eta)
    delta_prime = _tnb_pgf_complement(gamma, eta, delta0)
    pure = ((2.0 + eta) * eps0, delta_prime, "pure (P&S Cor. 3)")
    if delta <= 0.0 or eps0 == 0.0 or not math.isfinite(eps0):
        return pure
    gamma_prime = min(1.0, gamma + delta0 * (1.0 - gamma))  # Lemma 20: K' ~ D_{eta, gamma'}
    if gamma_prime >= 1.0:
        rdp_epsilon = eps0
    else:
        rdp_epsilon = _tnb_rdp_epsilon(eps0, eta, gamma_prime, delta)
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
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    envelope = np.minimum.accumulate(rdp[::-1])[::-1]  # D_a <= D_b for a <= b
    return float(compute_epsilon(orders, envelope, delta)[0])


def _randomized_response_event(epsilon: float):
    """dp-accounting's binary randomized response with likelihood ratio ``e^epsilon``."""
    from dp_accounting import RandomizedResponseDpEvent

    return RandomizedResponseDpEvent(noise_parameter=_rr_noise_parameter(epsilon), num_buckets=2)


def _rr_noise_parameter(epsilon: float) -> float:
    """``2 / (1 + e^eps)``, the noise parameter of binary randomized response, without overflow."""
    return 2.0 * math.exp(-epsilon) / (1.0 + math.exp(-epsilon))


def _dp_accounting_repeat_and_select(epsilon: float, mean: float, shape: float,
                                     delta: float) -> float:
    """dp-accounting's RDP accountant (replace-one, our orders) on a repeat-and-select event."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.dp_event import RepeatAndSelectDpEvent
    from dp_accounting.rdp import RdpAccountant

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


# --------------------------------------------------------------------------------------------
# Events -> (epsilon, delta)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cost:
    epsilon: float
    delta: float
    detail: str


def event_cost(event: PrivacyEvent, delta: float = 0.0) -> tuple[float, float]:
    """``(epsilon, delta)`` of any event of :mod:`skdptune.events` (replace-one).

    ============================ ==============================================================
    event                        cost
    ============================ ==============================================================
    ``EpsilonDeltaEvent``        ``(epsilon, delta)`` as stated
    ``LaplaceEvent``             ``(epsilon, 0)``
    ``PermuteAndFlipEvent``      ``(epsilon, 0)`` (McKenna & Sheldon 2020)
    ``DoublingSVTEvent``         ``(doubling_svt_epsilon(N, eps0), 0)``
    ``RepeatAndSelectEvent``     :func:`repetition_cost` (with the conversion ``delta``)
    ``GaussianDPEvent``          ``(gdp_epsilon(mu, delta), delta)``; needs ``delta > 0``
    ``ComposedEvent``            :func:`sequential_composition` of the parts
    ``ParallelEvent``            :func:`parallel_composition` of the parts
    ============================ ==============================================================

    Parameters
    ----------
    event : PrivacyEvent
        The cost description.
    delta : float, default=0.0
        Conversion budget for the events whose ``epsilon`` depends on a chosen ``delta``; split
        equally between the parts of a ``ComposedEvent`` that use one (see the module
        docstring). The returned ``delta`` is the one actually used.

    Returns
    -------
    (float, float)
        ``(epsilon, delta)``.

    Raises
    ------
    TypeError
        If the event is not one of the classes above.
    """
    cost = _cost(event, _check_probability(delta, "delta"))
    return cost.epsilon, cost.delta


def privacy_report(components: Sequence[tuple[str, PrivacyEvent]],
                   delta: float = 0.0) -> PrivacyReport:
    """Cost each named event and compose them sequentially into a :class:`PrivacyReport`.

    Parameters
    ----------
    components : sequence of (str, PrivacyEvent)
        The private steps, all on the same rows, in the order they run; the string names the
        line of the report.
    delta : float, default=0.0
        Conversion budget, split equally between the components that use one (see
        :func:`event_cost`).

    Returns
    -------
    PrivacyReport
        Totals by basic sequential composition, with one line per component.
    """
    delta = _check_probability(delta, "delta")
    events = [event for _, event in components]
    shares = _delta_shares(events, delta)
    lines = []
    for (name, event), share in zip(components, shares, strict=True):
        cost = _cost(event, share)
        lines.append(PrivacyComponent(str(name), cost.epsilon, cost.delta, cost.detail))
    epsilon, total_delta = sequential_composition((c.epsilon, c.delta) for c in lines)
    return PrivacyReport(epsilon, total_delta, tuple(lines))


def _uses_delta(event: PrivacyEvent) -> bool:
    """Whether the cost of ``event`` depends on the conversion ``delta``."""
    if isinstance(event, GaussianDPEvent):
        return event.mu > 0
    if isinstance(event, RepeatAndSelectEvent):
        return not (event.distribution == "fixed" and event.mean <= 1)
    if isinstance(event, ComposedEvent | ParallelEvent):
        return any(_uses_delta(part) for part in event.events)
    return False


def _delta_shares(events: Sequence[PrivacyEvent], delta: float) -> list[float]:
    users = [_uses_delta(event) for event in events]
    share = delta / max(1, sum(users))
    return [share if uses else 0.0 for uses in users]


def _cost(event: PrivacyEvent, delta: float) -> _Cost:
    if isinstance(event, EpsilonDeltaEvent):
        eps = _check_epsilon(event.epsilon, "epsilon")
        dlt = _check_probability(event.delta, "delta")
        return _Cost(eps, dlt, f"({_fmt(eps)}, {_fmt(dlt)})-DP mechanism")
    if isinstance(event, LaplaceEvent):
        eps = _check_epsilon(event.epsilon, "epsilon")
        return _Cost(eps, 0.0, f"Laplace mechanism, eps={_fmt(eps)}")
    if isinstance(event, PermuteAndFlipEvent):
        eps = _check_epsilon(event.epsilon, "epsilon")
        return _Cost(eps, 0.0, f"permute-and-flip, eps={_fmt(eps)}")
    if isinstance(event, DoublingSVTEvent):
        eps = doubling_svt_epsilon(event.max_above, event.epsilon_round)
        return _Cost(eps, 0.0, f"doubling SVT, N={int(event.max_above)} above rounds, "
                               f"eps0={_fmt(event.epsilon_round)}")
    if isinstance(event, RepeatAndSelectEvent):
        if not isinstance(event.base, EpsilonDeltaEvent):
            raise TypeError(f"RepeatAndSelectEvent.base must be an EpsilonDeltaEvent; "
                            f"got {type(event.base).__name__}")
        eps, dlt, bound = _repetition(event.base.epsilon, event.base.delta, event.distribution,
                                      event.mean, event.eta, delta)
        distribution, eta = _resolve_distribution(event.distribution, event.eta)
        law = f"{distribution}" + (f" (eta={_fmt(eta)})" if distribution in _TNB else "")
        runs = "runs" if distribution == "fixed" else "E[K]"
        return _Cost(eps, dlt, f"best of K runs, K {law}, {runs}={_fmt(event.mean)}, base "
                               f"({_fmt(event.base.epsilon)}, {_fmt(event.base.delta)})-DP; "
                               f"{bound}")
    if isinstance(event, GaussianDPEvent):
        mu = _check_nonnegative(event.mu, "mu")
        if mu == 0.0:
            return _Cost(0.0, 0.0, "0-GDP")
        if delta <= 0.0:
            raise ValueError(f"a {mu:g}-GDP event has no pure-DP bound: give delta > 0")
        return _Cost(gdp_epsilon(mu, delta), delta,
                     f"{_fmt(mu)}-GDP at delta={_fmt(delta)} (Dong, Roth & Su Cor. 2.13)")
    if isinstance(event, ComposedEvent):
        shares = _delta_shares(event.events, delta)
        parts = [_cost(part, share) for part, share in zip(event.events, shares, strict=True)]
        eps, dlt = sequential_composition((p.epsilon, p.delta) for p in parts)
        return _Cost(eps, dlt, f"sequential composition of {len(parts)} "
                               f"({_names(event.events)})")
    if isinstance(event, ParallelEvent):
        parts = [_cost(part, delta) for part in event.events]
        eps, dlt = parallel_composition((p.epsilon, p.delta) for p in parts)
        return _Cost(eps, dlt, f"parallel composition of {len(parts)} disjoint parts "
                               f"({_names(event.events)})")
    raise TypeError(f"cannot account for {type(event).__name__}: not an event of "
                    "skdptune.events")


def _names(events: Iterable[PrivacyEvent]) -> str:
    return ", ".join(str(getattr(event, "name", type(event).__name__)) for event in events)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _check_epsilon(value: float, name: str) -> float:
    value = float(value)
    if math.isnan(value) or value < 0.0:
        raise ValueError(f"{name} must be >= 0; got {value!r}")
    return value


def _check_nonnegative(value: float, name: str) -> float:
    return _check_epsilon(value, name)


def _check_probability(value: float, name: str) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {value!r}")
    return value


def _check_base_delta(value: float) -> float:
    value = float(value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"base_delta must be in [0, 1); got {value!r}")
    return value


def _check_nonnegative_int(value: int, name: str) -> int:
    if (isinstance(value, bool) or not math.isfinite(float(value)) or int(value) != value
            or value < 0):
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def _check_positive_int(value: int, name: str) -> int:
    value = _check_nonnegative_int(value, name)
    if value < 1:
        raise ValueError(f"{name} must be >= 1; got {value!r}")
    return value


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
