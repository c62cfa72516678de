"""The privacy report and the two basic composition rules."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ._checks import _check_epsilon, _check_probability

NEIGHBOURING = "replace-one (bounded DP)"

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
    parts : tuple of PrivacyComponent, default=()
        Optional breakdown of this step (e.g. the steps of a pipeline, each with its own cost
        and whether it is a maximum over the search space). Informative only: the step's own
        ``epsilon`` and ``delta`` are what the totals use. Rendered indented under the step.
    """

    name: str
    epsilon: float
    delta: float
    detail: str = ""
    parts: tuple[PrivacyComponent, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))

    def as_dict(self) -> dict:
        """The line as plain Python types; ``"parts"`` only when there is a breakdown."""
        out = {"name": str(self.name), "epsilon": float(self.epsilon),
               "delta": float(self.delta), "detail": str(self.detail)}
        if self.parts:
            out["parts"] = [part.as_dict() for part in self.parts]
        return out


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

    Examples
    --------
    >>> from skdptune.accounting import privacy_report
    >>> from skdptune.events import EpsilonDeltaEvent, PermuteAndFlipEvent
    >>> report = privacy_report([("tuning", PermuteAndFlipEvent(1.0)),
    ...                          ("returned model", EpsilonDeltaEvent(0.5))])
    >>> epsilon, delta = report
    >>> epsilon, delta
    (1.5, 0.0)
    >>> [c.name for c in report.components]
    ['tuning', 'returned model']
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
            "components": [component.as_dict() for component in self.components],
        }

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self, width: int = 100) -> str:
        """The report as an aligned table at most ``width`` characters wide (``str(report)``:
        100, a terminal's common width): the detail column wraps under itself, or, when the
        names leave it too little room, below its line, indented."""
        rows = [row for c in self.components for row in _rows(c, 0)]
        total = (f"TOTAL ({self.composition})", _fmt(self.epsilon), _fmt(self.delta), "")
        header = ("component", "epsilon", "delta", "detail")
        widths = [max(len(row[i]) for row in [header, *rows, total]) for i in range(3)]
        start = sum(widths) + 6  # where the detail column begins
        room = width - start

        def line(row: tuple[str, str, str, str]) -> list[str]:
            head = (f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}")
            if not row[3]:
                return [head.rstrip()]
            if room >= _LEAST_DETAIL_ROOM:
                wrapped = textwrap.wrap(row[3], room, break_on_hyphens=False)
                return [f"{head}  {wrapped[0]}", *(" " * start + more for more in wrapped[1:])]
            return [head.rstrip(), *textwrap.wrap(row[3], width, initial_indent="    ",
                                                  subsequent_indent="    ",
                                                  break_on_hyphens=False)]

        lines = [line(header), *(line(row) for row in rows), line(total)]
        rule = "-" * min(width, max(len(text) for block in lines for text in block))
        return "\n".join([*lines[0], rule, *(t for block in lines[1:-1] for t in block), rule,
                          *lines[-1], f"neighbouring datasets: {self.neighbouring}"])


#: the least width the detail column keeps beside the figures before it moves below them
_LEAST_DETAIL_ROOM = 30


def _rows(component: PrivacyComponent, depth: int) -> list[tuple[str, str, str, str]]:
    """The table rows of a line and, indented below it, of its parts."""
    name = f"{'  ' * depth}{'- ' if depth else ''}{component.name}"
    rows = [(name, _fmt(component.epsilon), _fmt(component.delta), component.detail)]
    for part in component.parts:
        rows += _rows(part, depth + 1)
    return rows


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
        epsilon += _check_epsilon(eps, "epsilon")
        delta += _check_probability(dlt, "delta")
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
        epsilon = max(epsilon, _check_epsilon(eps, "epsilon"))
        delta = max(delta, _check_probability(dlt, "delta"))
    return epsilon, delta
