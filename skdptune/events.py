"""Descriptions of private computations: what each private step of a search costs.

Like ``dp_accounting.DpEvent``, an event is a small frozen record that *describes* a private
computation with data-independent quantities only -- enough for :mod:`skdptune.accounting` to
turn it into ``(epsilon, delta)``, nothing about how it was implemented. Selectors, evaluators
and searches produce events; only :mod:`skdptune.accounting` interprets them.

Every event is stated for the replace-one neighbouring relation (bounded DP, ``n`` public):
two datasets are neighbours when they differ by replacing one record (one row of ``X`` with
its ``y`` and sample weight).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "PrivacyEvent",
    "EpsilonDeltaEvent",
    "DoublingSVTEvent",
    "PermuteAndFlipEvent",
    "LaplaceEvent",
    "RepeatAndSelectEvent",
    "ComposedEvent",
    "ParallelEvent",
    "GaussianDPEvent",
    "SelfComposedEvent",
]


@dataclass(frozen=True)
class PrivacyEvent:
    """Base class of all cost descriptions. ``name`` labels the component in reports."""


@dataclass(frozen=True)
class EpsilonDeltaEvent(PrivacyEvent):
    """A mechanism known to be ``(epsilon, delta)``-DP, e.g. one diffprivlib model fit."""

    epsilon: float
    delta: float = 0.0
    name: str = "mechanism"


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """One Laplace release of a query with ``sensitivity`` at budget ``epsilon`` (pure DP)."""

    epsilon: float
    name: str = "laplace"


@dataclass(frozen=True)
class DoublingSVTEvent(PrivacyEvent):
    """Doubling-step sparse vector selector (docs/selection.md, section 3).

    ``max_above`` is N = ceil((1 - u0) / g), the data-independent cap on "above" rounds that the
    ``u >= 1`` guard enforces; ``epsilon_round`` is the per-round budget eps0. The selector is pure
    ``N * eps0 + (N + 1) * eps0 / 2``-DP for every transcript.
    """

    max_above: int
    epsilon_round: float
    name: str = "doubling SVT selection"


@dataclass(frozen=True)
class PermuteAndFlipEvent(PrivacyEvent):
    """One permute-and-flip selection (McKenna & Sheldon 2020): pure ``epsilon``-DP."""

    epsilon: float
    name: str = "permute-and-flip selection"


@dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    """Randomized repetition of an ``(epsilon, delta)``-DP base run (Papernot & Steinke 2022).

    ``distribution`` is one of ``"logarithmic"``, ``"geometric"``, ``"negative_binomial"``
    (with ``eta`` in (-1, inf)), ``"poisson"`` or ``"fixed"``; ``mean`` is E[K] (for ``"fixed"``,
    the exact number of runs).
    """

    base: EpsilonDeltaEvent
    distribution: str
    mean: float
    eta: float | None = None
    name: str = "randomized repetition"


@dataclass(frozen=True)
class GaussianDPEvent(PrivacyEvent):
    """A ``mu``-GDP mechanism (Dong, Roth & Su), e.g. T noisy gradient steps of DP-GIBO."""

    mu: float
    name: str = "gaussian DP"


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Sequential composition: every event runs on the same rows."""

    events: tuple[PrivacyEvent, ...] = field(default_factory=tuple)
    name: str = "sequential composition"


@dataclass(frozen=True)
class ParallelEvent(PrivacyEvent):
    """Parallel composition: each event runs on its own disjoint, data-independent set of rows.

    Under replace-one the replaced record lives in exactly one part, so the cost is the
    (component-wise) maximum of the parts.
    """

    events: tuple[PrivacyEvent, ...] = field(default_factory=tuple)
    name: str = "parallel composition"


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``count`` runs of the same ``base`` mechanism on the same rows, possibly adaptively.

    E.g. the ``M`` model fits of DP-GIBO on a shared train part. Accounted by the optimal
    composition of Kairouz, Oh & Viswanath when it beats the sum.
    """

    base: EpsilonDeltaEvent
    count: int
    name: str = "self-composition"
