"""Continuous search spaces: a box of real parameters, some on a log scale (the "space" role).

A box space is written as a dict from (nested) parameter names to bounds::

    {"clf__C": (1e-3, 1e2, "log"), "clf__epsilon": (0.1, 10.0, "log"), "l1_ratio": (0.0, 1.0)}

``(low, high)`` is a uniform (linear) range, ``(low, high, "log")`` a logarithmic one. Methods
that search continuously (Bayesian optimisation, gradient-informed search) work on the unit
cube ``[0, 1]^d`` and map its points to parameters with :meth:`BoxSpace.from_unit`; the uniform
distribution on the cube is then log-uniform on the log-scaled parameters.

Every parameter owns a slice of the cube's coordinates (one coordinate for a scalar). An
array-valued parameter (a box with a shape, e.g. per-feature ``bounds``) can be added later as
another kind of dimension owning a wider slice, without changing this interface.

Integers and categorical choices are refused: rounding a continuous coordinate gives flat
regions that continuous searches handle badly. Use a grid or random search for them, or fix
them in the estimator.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BoxSpace", "check_box_space"]

_LOG = "log"


@dataclass(frozen=True)
class _RealDimension:
    """One real parameter in ``[low, high]``, linear or logarithmic."""

    name: str
    low: float
    high: float
    log: bool

    def _ends(self) -> tuple[float, float]:
        if self.log:
            return math.log(self.low), math.log(self.high)
        return self.low, self.high

    def to_unit(self, value: float) -> float:
        lo, hi = self._ends()
        x = math.log(value) if self.log else value
        return (x - lo) / (hi - lo)

    def from_unit(self, z: float) -> float:
        lo, hi = self._ends()
        x = lo + min(max(float(z), 0.0), 1.0) * (hi - lo)
        value = math.exp(x) if self.log else x
        # exp(log(high)) may overshoot high by an ulp: stay inside the declared range
        return min(max(value, self.low), self.high)

    def describe(self) -> str:
        scale = ", 'log'" if self.log else ""
        return f"({self.low:g}, {self.high:g}{scale})"


class BoxSpace:
    """A box of real parameters, mapped to and from the unit cube.

    Parameters
    ----------
    bounds : dict
        Parameter name -> ``(low, high)`` or ``(low, high, "log")`` with finite real bounds,
        ``low < high``, and ``low > 0`` on a log scale. Names are the estimator's (nested)
        parameter names, e.g. ``"clf__epsilon"``.

    Attributes
    ----------
    names : tuple of str
        The parameter names, in the order of the cube's coordinates.
    n_dims : int
        Dimension ``d`` of the unit cube.

    Raises
    ------
    ValueError
        Empty space, a name that is not a non-empty string, or bounds that are not a valid
        real range (integers, categorical lists and distributions are refused with advice).

    Examples
    --------
    >>> space = BoxSpace({"C": (1e-2, 1e2, "log"), "alpha": (0.0, 1.0)})
    >>> space.from_unit([0.5, 0.25])
    {'C': 1.0, 'alpha': 0.25}
    >>> space.to_unit({"C": 100.0, "alpha": 0.5}).tolist()
    [1.0, 0.5]
    """

    def __init__(self, bounds: Mapping[str, Any]) -> None:
        if not isinstance(bounds, Mapping) or not bounds:
            raise ValueError(
                "The space must be a non-empty dict of parameter name -> (low, high) or "
                f"(low, high, 'log'); got {bounds!r}."
            )
        self._dims = tuple(_check_dimension(name, spec) for name, spec in bounds.items())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dim.name for dim in self._dims)

    @property
    def n_dims(self) -> int:
        return len(self._dims)

    def to_unit(self, params: Mapping[str, float]) -> np.ndarray:
        """The point of the unit cube for ``params`` (a dict holding every name of the space)."""
        missing = [dim.name for dim in self._dims if dim.name not in params]
        if missing:
            raise ValueError(f"Parameters missing from {dict(params)!r}: {missing}.")
        return np.array([dim.to_unit(float(params[dim.name])) for dim in self._dims])

    def from_unit(self, z: Any) -> dict[str, float]:
        """The parameters at point ``z`` of the unit cube (clipped into the cube first)."""
        z = np.asarray(z, dtype=float)
        if z.shape != (self.n_dims,):
            raise ValueError(f"Expected a point of shape ({self.n_dims},), got {z.shape}.")
        return {dim.name: dim.from_unit(zi) for dim, zi in zip(self._dims, z, strict=True)}

    def corners(self) -> np.ndarray:
        """The ``2 ** n_dims`` corners of the unit cube, shape ``(2 ** n_dims, n_dims)``."""
        grid = np.indices((2,) * self.n_dims).reshape(self.n_dims, -1).T
        return grid.astype(float)

    def __repr__(self) -> str:
        inner = ", ".join(f"{dim.name!r}: {dim.describe()}" for dim in self._dims)
        return f"BoxSpace({{{inner}}})"


def check_box_space(space: Any) -> BoxSpace:
    """``space`` as a :class:`BoxSpace` (a ``BoxSpace`` is returned as is)."""
    return space if isinstance(space, BoxSpace) else BoxSpace(space)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_dimension(name: Any, spec: Any) -> _RealDimension:
    if not isinstance(name, str) or not name:
        raise ValueError(f"Parameter names must be non-empty strings; got {name!r}.")
    if hasattr(spec, "rvs"):
        raise ValueError(
            f"{name!r}: a scipy.stats distribution is not a box. Give the range instead, e.g. "
            f"(low, high, 'log') for loguniform(low, high)."
        )
    if isinstance(spec, list) or not isinstance(spec, tuple) or len(spec) not in (2, 3):
        raise ValueError(
            f"{name!r}: expected (low, high) or (low, high, 'log'); got {spec!r}. Lists of "
            "choices (categorical or integer parameters) are not supported by a continuous "
            "search: fix them in the estimator, or use a grid or random search."
        )
    low, high = spec[:2]
    scale = spec[2] if len(spec) == 3 else None
    if scale is not None and scale != _LOG:
        raise ValueError(f"{name!r}: the third element must be 'log'; got {scale!r}.")
    if not (_is_real(low) and _is_real(high)):
        raise ValueError(f"{name!r}: bounds must be real numbers; got {spec!r}.")
    if isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral):
        raise ValueError(
            f"{name!r}: both bounds are integers {spec!r}; integer-valued parameters are not "
            "supported by a continuous search. If the parameter takes real values, write the "
            f"bounds as floats, e.g. ({float(low)}, {float(high)})."
        )
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name!r}: bounds must be finite; got {spec!r}.")
    if not low < high:
        raise ValueError(f"{name!r}: low must be smaller than high; got {spec!r}.")
    if scale == _LOG and low <= 0:
        raise ValueError(f"{name!r}: a log scale needs low > 0; got {spec!r}.")
    return _RealDimension(name, low, high, scale == _LOG)
