"""Events -> ``(epsilon, delta)``: the dispatch behind ``event_cost`` and ``privacy_report``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Context, Decimal

from ..events import (
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
from ._checks import _check_epsilon, _check_nonnegative, _check_probability
from ._composition import self_composition_cost
from ._decimal import to_float_up
from ._gaussian import gdp_epsilon
from ._laws import _TNB, _resolve_distribution
from ._repetition import _repetition
from ._report import (
    PrivacyComponent,
    PrivacyReport,
    _fmt,
    parallel_composition,
    sequential_composition,
)
from ._svt import doubling_svt_epsilon

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
    ``SelfComposedEvent``        :func:`self_composition_cost` (basic or optimal composition)
    ``ComposedEvent``            :func:`sequential_composition` of the parts, its
                                 ``GaussianDPEvent`` parts first composed into one
                                 ``sqrt(sum mu_i^2)``-GDP event (Dong, Roth & Su Cor. 3.3)
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


def privacy_report(components: Sequence[tuple[str, PrivacyEvent]
                                      | tuple[str, PrivacyEvent, Sequence[PrivacyComponent]]],
                   delta: float = 0.0) -> PrivacyReport:
    """Cost each named event and compose them sequentially into a :class:`PrivacyReport`.

    Parameters
    ----------
    components : sequence of (str, PrivacyEvent) or (str, PrivacyEvent, parts)
        The private steps, all on the same rows, in the order they run; the string names the
        line of the report. An optional third item is the line's breakdown (a sequence of
        :class:`PrivacyComponent`, e.g. ``estimator_privacy_parts`` of the returned model),
        shown under the line; it does not change any figure.
    delta : float, default=0.0
        Conversion budget, split equally between the components that use one (see
        :func:`event_cost`).

    Returns
    -------
    PrivacyReport
        Totals by basic sequential composition, with one line per component.
    """
    delta = _check_probability(delta, "delta")
    components = [tuple(item) for item in components]
    for item in components:
        if len(item) not in (2, 3):
            raise ValueError(f"a report component is (name, event) or (name, event, parts); "
                             f"got {len(item)} items")
    events = [item[1] for item in components]
    shares = _delta_shares(events, delta)
    lines = []
    for item, share in zip(components, shares, strict=True):
        cost = _cost(item[1], share)
        parts = tuple(item[2]) if len(item) == 3 else ()
        for part in parts:
            if not isinstance(part, PrivacyComponent):
                raise TypeError(f"the parts of a report line are PrivacyComponent objects; "
                                f"got {type(part).__name__}")
        lines.append(PrivacyComponent(str(item[0]), cost.epsilon, cost.delta, cost.detail,
                                      parts))
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
    if isinstance(event, SelfComposedEvent):
        return event.count > 1 and event.base.epsilon > 0
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
    if isinstance(event, SelfComposedEvent):
        if not isinstance(event.base, EpsilonDeltaEvent):
            raise TypeError(f"SelfComposedEvent.base must be an EpsilonDeltaEvent; "
                            f"got {type(event.base).__name__}")
        eps, dlt, rule = self_composition_cost(event.base.epsilon, event.base.delta,
                                               event.count, delta)
        return _Cost(eps, dlt, f"{int(event.count)} x ({_fmt(event.base.epsilon)}, "
                               f"{_fmt(event.base.delta)})-DP on the same rows; {rule}")
    if isinstance(event, ComposedEvent):
        events = _gaussians_merged(event.events)
        shares = _delta_shares(events, delta)
        parts = [_cost(part, share) for part, share in zip(events, shares, strict=True)]
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


def _gaussians_merged(events: Sequence[PrivacyEvent]) -> list[PrivacyEvent]:
    """``events`` with their ``GaussianDPEvent`` parts replaced by one, in the first one's place:
    ``mu_1 .. mu_k``-GDP mechanisms compose (adaptively, interleaved with any others) into
    ``sqrt(mu_1^2 + .. + mu_k^2)``-GDP (Dong, Roth & Su 2022, Corollary 3.3; trade-off functions
    compose commutatively, their Proposition 3.2), whose conversion at one ``delta`` share is
    far below ``k`` conversions at ``delta / k`` each. ``mu`` is rounded up."""
    gaussians = [i for i, part in enumerate(events) if isinstance(part, GaussianDPEvent)]
    if len(gaussians) < 2:
        return list(events)
    mus = [_check_nonnegative(events[i].mu, "mu") for i in gaussians]
    ctx = Context(prec=60, rounding=ROUND_CEILING)  # every operation rounds up
    squares = Decimal(0)
    for mu in mus:
        squares = ctx.add(squares, ctx.multiply(Decimal(mu), Decimal(mu)))
    mu = math.inf if math.inf in mus else to_float_up(ctx.sqrt(squares))
    merged = GaussianDPEvent(mu, name=f"{_fmt(mu)}-GDP: {len(mus)} Gaussian DP parts composed")
    return [merged if i == gaussians[0] else part for i, part in enumerate(events)
            if i == gaussians[0] or i not in gaussians]


def _names(events: Iterable[PrivacyEvent]) -> str:
    return ", ".join(str(getattr(event, "name", type(event).__name__)) for event in events)
