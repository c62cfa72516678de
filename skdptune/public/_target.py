"""The target range of a regressor: declared by the user on the model, public like ``n``.

A regressor's private fit needs public bounds on the target (its sensitivity is computed from
them), so they are part of the privacy contract: the search's domain is ``y`` within the
declared range (outside it :func:`~skdptune.public.check_domain` raises ``DomainError``), the
dry run's synthetic targets are drawn inside it, and the regression scores are bounded on its
scale (predictions clipped into it: :mod:`skdptune.evaluation._scores`). Nothing here reads
the data.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import is_regressor

from ..estimators import iter_dp_components
from ..estimators.models import adapter_for

__all__ = ["resolve_target_range"]


def resolve_target_range(estimator: Any, templates: list | None = None
                         ) -> tuple[float, float] | None:
    """The declared range ``(lower, upper)`` of a regressor's target, or ``None``.

    The search is over a regressor when the estimator **or any candidate** of the space is one
    (``templates``: the candidates' :func:`~skdptune.evaluation._fit.candidate_templates`).
    Each candidate's range is that of its private regressor (the parameter its family names,
    e.g. ``bounds_y``); candidates that declare different ranges give their union, the
    smallest interval holding every one: a target inside it is inside the domain of every
    candidate's guarantee, whose fit clips it to its own bounds.

    Raises
    ------
    ValueError
        A regressor whose private model declares no target range.
    """
    variants = [estimator] + list(templates or [])
    if not any(is_regressor(variant) for variant in variants):
        return None
    ranges = []
    for variant in variants:
        found = [r for _, c in iter_dp_components(variant)
                 if (family := adapter_for(c)) is not None
                 and (r := family.target_range(c)) is not None]
        if is_regressor(variant) and not found:
            raise ValueError(
                "A private search over a regressor needs the range of y as public information: "
                "give the private regressor bounds on the target (e.g. bounds_y=(lower, upper))."
                " Computed from y, the range would leak: one record with an extreme target "
                "would move it.")
        ranges += found
    lower = min(r[0] for r in ranges)
    upper = max(r[1] for r in ranges)
    if not lower < upper:
        raise ValueError(f"The target's declared range ({lower:g}, {upper:g}) is empty; give "
                         "bounds_y=(lower, upper) with lower < upper.")
    return lower, upper
