"""Values of a search space and of a model's privacy parameters, as the pricing reads them.

A search-space entry is a list of values or a ``scipy.stats`` distribution (scikit-learn's
rule); a privacy parameter that a cost is increasing in (``epsilon``, ``delta``, a norm bound)
must be a finite real number, and one drawn from a distribution is priced at the upper end of
its support, which must then be finite.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["check_cost_value", "is_distribution", "is_listed", "upper_cost_value"]


def is_distribution(values: Any) -> bool:
    """Whether a search-space entry is a distribution (it has ``rvs``)."""
    return hasattr(values, "rvs")


def is_listed(spec: Any) -> bool:
    """Whether a search-space entry is a list of values (scikit-learn's rule: a sequence, not
    a string, without ``rvs``) rather than a distribution."""
    return (isinstance(spec, (Sequence, np.ndarray)) and not isinstance(spec, str)
            and not is_distribution(spec))


def check_cost_value(value: Any, name: str, label: str) -> float:
    """``value`` as a float: a finite real number, non-negative (``delta``: in ``[0, 1]``);
    ``label`` names where it comes from in the error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{label}: {name} must be a real number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{label}: {name}={value} gives an unbounded privacy cost.")
    if value < 0 or (name == "delta" and value > 1):
        allowed = "in [0, 1]" if name == "delta" else "non-negative"
        raise ValueError(f"{label}: {name} must be {allowed}, got {value}.")
    return value


def upper_cost_value(key: str, dist: Any, last: str) -> float:
    """The upper end of ``dist``'s support, checked as :func:`check_cost_value` checks the
    parameter ``last``: the worst case of a cost increasing in it. ``key`` names the entry."""
    if not hasattr(dist, "support"):
        raise ValueError(
            f"Cannot bound the privacy cost: the distribution for {key!r} has no support()."
        )
    lower, upper = (float(v) for v in dist.support())
    if not math.isfinite(upper):
        raise ValueError(
            f"The distribution for {key!r} has an unbounded support ({lower}, {upper}), so the "
            f"privacy cost over the search space is unbounded; use a distribution with a finite "
            f"upper end (e.g. scipy.stats.uniform or loguniform) or a list of values."
        )
    label = f"search-space distribution for {key!r}"
    check_cost_value(lower, last, label)
    return check_cost_value(upper, last, label)
