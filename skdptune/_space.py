"""Continuous search spaces: a box of real parameters, some on a log scale (the "space" role).

A box space is written as a dict from (nested) parameter names to bounds::

    {"clf__C": (1e-3, 1e2, "log"), "clf__epsilon": (0.1, 10.0, "log"), "l1_ratio": (0.0, 1.0)}

``(low, high)`` is a uniform (linear) range, ``(low, high, "log")`` a logarithmic one. Methods
that search continuously (Bayesian optimisation, gradient-informed search) work on the unit
cube ``[0, 1]^d`` and map its points to parameters with :meth:`BoxSpace.from_unit`; the uniform
distribution on the cube is then log-uniform on the log-scaled parameters.

Every dimension owns a slice of the cube's coordinates: one for a scalar range, one per entry
for an :class:`ArrayRange` (an array-valued parameter, e.g. the per-feature ``bounds`` of
diffprivlib's ``GaussianNB`` -- a box with a shape), one per step for an :class:`EpsilonSplit`
(how a fixed privacy budget is shared among a pipeline's DP steps)::

    {"bounds": ArrayRange(low=[[-9] * 4, [0.1] * 4], high=[[-0.1] * 4, [9] * 4], as_tuple=True),
     "budget": EpsilonSplit(["scaler__epsilon", "clf__epsilon"])}

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
from sklearn.utils import check_random_state

__all__ = ["ArrayRange", "BoxSpace", "EpsilonSplit", "check_box_space"]

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

    # the dimension protocol of BoxSpace: coordinates <-> parameters
    n_coords = 1

    @property
    def param_names(self) -> tuple[str, ...]:
        return (self.name,)

    def coords(self, params: Mapping[str, Any]) -> np.ndarray:
        return np.array([self.to_unit(float(params[self.name]))])

    def params(self, z: np.ndarray) -> dict[str, Any]:
        return {self.name: self.from_unit(z[0])}


class ArrayRange:
    """An array-valued parameter: every entry in its own range, on a linear or log scale.

    Parameters
    ----------
    low, high : array-like
        Bounds of every entry (broadcast to a common shape, the parameter's shape); finite,
        ``low < high`` entrywise, ``low > 0`` on a log scale.
    log : bool or array-like of bool, default=False
        Log scale, for every entry or entry by entry (broadcast like ``low``), e.g. linear
        lower bounds and log-scaled upper bounds.
    as_tuple : bool, default=False
        Give the value as a tuple over the first axis (diffprivlib's ``bounds=(lower,
        upper)``) instead of an array.

    Notes
    -----
    In ``DPGIBOSearchCV``'s ``param_space`` an ``ArrayRange`` is a box dimension; in
    ``DPRandomSearchCV``'s ``param_distributions`` it is a distribution (:meth:`rvs`: every
    entry drawn independently, uniformly on its scale -- log-uniform on a log scale), whose
    ranges are public: the cost of a diffprivlib ``GaussianNB`` whose ``bounds`` it draws is
    bounded by the box's worst point (docs/privacy.md), which a distribution without ranges
    cannot say.

    Examples
    --------
    >>> bounds = ArrayRange(low=[[-9.0, -9.0], [0.1, 0.1]], high=[[-0.1, -0.1], [9.0, 9.0]],
    ...                     as_tuple=True)
    >>> space = BoxSpace({"bounds": bounds})
    >>> lower, upper = space.from_unit([0.0, 1.0, 1.0, 0.0])["bounds"]
    >>> lower.tolist(), upper.tolist()
    ([-9.0, -0.1], [9.0, 0.1])
    >>> lower, upper = bounds.rvs(random_state=0)
    >>> bool(((-9.0 <= lower) & (lower <= -0.1) & (0.1 <= upper) & (upper <= 9.0)).all())
    True
    """

    def __init__(self, low: Any, high: Any, *, log: bool = False, as_tuple: bool = False):
        low_a, high_a = np.broadcast_arrays(np.asarray(low, dtype=float),
                                            np.asarray(high, dtype=float))
        if low_a.size == 0:
            raise ValueError("ArrayRange needs at least one entry.")
        if not (np.all(np.isfinite(low_a)) and np.all(np.isfinite(high_a))):
            raise ValueError("ArrayRange bounds must be finite.")
        if not np.all(low_a < high_a):
            raise ValueError("ArrayRange needs low < high in every entry.")
        if not np.all(np.isfinite(high_a - low_a)):  # the map from the cube would overflow
            raise ValueError("ArrayRange needs a finite width high - low in every entry.")
        log_a = np.broadcast_to(np.asarray(log, dtype=bool), low_a.shape).copy()
        if not np.all(low_a[log_a] > 0):
            raise ValueError("A log-scaled ArrayRange needs low > 0 in every log entry.")
        if as_tuple and low_a.ndim < 1:
            raise ValueError("as_tuple needs an array with at least one axis.")
        self.low, self.high, self.log = low_a.copy(), high_a.copy(), log_a
        self.as_tuple = bool(as_tuple)

    def __repr__(self) -> str:
        log = bool(self.log.all()) if self.log.all() or not self.log.any() else "mixed"
        return f"ArrayRange(shape={self.low.shape}, log={log}, as_tuple={self.as_tuple})"

    def rvs(self, random_state=None):
        """One value drawn from the box: every entry independently, uniformly on its scale
        (``scipy.stats``' ``rvs`` protocol, which ``DPRandomSearchCV`` and scikit-learn's
        ``ParameterSampler`` call). The draw stays within ``[low, high]`` entrywise.

        Parameters
        ----------
        random_state : None, int, numpy ``RandomState`` or ``Generator``
            As for ``scipy.stats`` distributions (``None``: numpy's global generator).
        """
        rng = random_state if hasattr(random_state, "uniform") \
            else check_random_state(random_state)
        return _ArrayDimension("value", self).params(rng.uniform(size=self.low.size))["value"]


@dataclass(frozen=True)
class _ArrayDimension:
    name: str
    spec: ArrayRange

    @property
    def n_coords(self) -> int:
        return int(self.spec.low.size)

    @property
    def param_names(self) -> tuple[str, ...]:
        return (self.name,)

    def _ends(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.spec.low.ravel(), self.spec.high.ravel()
        return self._forward(low), self._forward(high)

    def _forward(self, value: np.ndarray) -> np.ndarray:
        log = self.spec.log.ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(log, np.log(np.where(log, value, 1.0)), value)

    def coords(self, params: Mapping[str, Any]) -> np.ndarray:
        value = params[self.name]
        shape = self.spec.low.shape
        if self.spec.as_tuple:  # e.g. diffprivlib's bounds=(lower, upper), scalars broadcast
            value = np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape[1:])
                              for v in value])
        value = np.broadcast_to(np.asarray(value, dtype=float), shape).ravel()
        lo, hi = self._ends()
        return (self._forward(value) - lo) / (hi - lo)

    def params(self, z: np.ndarray) -> dict[str, Any]:
        lo, hi = self._ends()
        x = lo + np.clip(z, 0.0, 1.0) * (hi - lo)
        log = self.spec.log.ravel()
        value = x.copy()
        value[log] = np.exp(x[log])  # only there: exp of a large linear entry overflows
        value = np.clip(value, self.spec.low.ravel(), self.spec.high.ravel())
        value = value.reshape(self.spec.low.shape)
        return {self.name: tuple(value) if self.spec.as_tuple else value}

    def describe(self) -> str:
        return repr(self.spec)


class EpsilonSplit:
    """How a fixed privacy budget is shared among the DP steps of a pipeline.

    Sets the ``epsilon`` parameters ``names`` to shares that sum to 1; a search in budget
    mode rescales them proportionally to the budget it gives each fit, so the split moves and
    the cost does not. One cube coordinate per step: raw weights ``min_share + (1 - min_share)
    * z`` in ``[min_share, 1]``, normalised to sum to 1, so that no step of ``k`` gets less
    than ``min_share / (min_share + k - 1)`` of the budget.

    Parameters
    ----------
    names : sequence of str
        Nested ``epsilon`` parameter names, e.g. ``["scaler__epsilon", "clf__epsilon"]``.
    min_share : float, default=0.05
        Smallest raw weight, in (0, 1).

    Examples
    --------
    >>> space = BoxSpace({"split": EpsilonSplit(["scaler__epsilon", "clf__epsilon"])})
    >>> shares = space.from_unit([1.0, 0.0])
    >>> round(shares["scaler__epsilon"], 4), round(shares["clf__epsilon"], 4)
    (0.9524, 0.0476)
    """

    def __init__(self, names, *, min_share: float = 0.05) -> None:
        names = tuple(names)
        if len(names) < 2 or len(set(names)) != len(names):
            raise ValueError("EpsilonSplit needs at least two distinct epsilon parameters.")
        bad = [n for n in names if not isinstance(n, str) or n.rpartition("__")[2] != "epsilon"]
        if bad:
            raise ValueError(f"EpsilonSplit names must be epsilon parameters; got {bad}.")
        if not 0 < min_share < 1:
            raise ValueError(f"min_share must be in (0, 1); got {min_share!r}.")
        self.names, self.min_share = names, float(min_share)

    def __repr__(self) -> str:
        return f"EpsilonSplit({list(self.names)!r}, min_share={self.min_share:g})"


@dataclass(frozen=True)
class _SplitDimension:
    name: str
    spec: EpsilonSplit

    @property
    def n_coords(self) -> int:
        return len(self.spec.names)

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.spec.names

    def coords(self, params: Mapping[str, Any]) -> np.ndarray:
        shares = np.array([float(params[n]) for n in self.spec.names])
        raw = shares / shares.max()  # the largest raw weight is taken to be 1
        return np.clip((raw - self.spec.min_share) / (1 - self.spec.min_share), 0.0, 1.0)

    def params(self, z: np.ndarray) -> dict[str, Any]:
        raw = self.spec.min_share + (1 - self.spec.min_share) * np.clip(z, 0.0, 1.0)
        return dict(zip(self.spec.names, (raw / raw.sum()).tolist(), strict=True))

    def describe(self) -> str:
        return repr(self.spec)


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
    >>> space.from_unit([1.0, 0.25])
    {'C': 100.0, 'alpha': 0.25}
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
        """The estimator parameters the space sets (an ``EpsilonSplit`` sets several)."""
        return tuple(name for dim in self._dims for name in dim.param_names)

    @property
    def n_dims(self) -> int:
        return sum(dim.n_coords for dim in self._dims)

    def dimension_of(self) -> dict[str, Any]:
        """Parameter name -> the dimension (range, array range, split) that sets it."""
        return {name: dim for dim in self._dims for name in dim.param_names}

    def _slices(self):
        start = 0
        for dim in self._dims:
            yield dim, slice(start, start + dim.n_coords)
            start += dim.n_coords

    def to_unit(self, params: Mapping[str, Any]) -> np.ndarray:
        """The point of the unit cube for ``params`` (a dict holding every name of the space)."""
        missing = [name for name in self.names if name not in params]
        if missing:
            raise ValueError(f"Parameters missing from {dict(params)!r}: {missing}.")
        return np.concatenate([dim.coords(params) for dim in self._dims])

    def from_unit(self, z: Any) -> dict[str, Any]:
        """The parameters at point ``z`` of the unit cube (clipped into the cube first)."""
        z = np.asarray(z, dtype=float)
        if z.shape != (self.n_dims,):
            raise ValueError(f"Expected a point of shape ({self.n_dims},), got {z.shape}.")
        out: dict[str, Any] = {}
        for dim, part in self._slices():
            out.update(dim.params(z[part]))
        return out

    def array_ranges(self) -> dict[str, ArrayRange]:
        """Parameter name -> its :class:`ArrayRange`, for the array-valued dimensions."""
        return {dim.name: dim.spec for dim in self._dims if isinstance(dim, _ArrayDimension)}

    def share_extremes(self) -> list[np.ndarray]:
        """Points of the cube, the centre elsewhere, at which each step of each
        :class:`EpsilonSplit` gets its largest and its smallest share (no repeats)."""
        points: list[np.ndarray] = []
        for dim, part in self._slices():
            if not isinstance(dim, _SplitDimension):
                continue
            for i in range(dim.n_coords):
                for own, others in ((1.0, 0.0), (0.0, 1.0)):
                    z = np.full(self.n_dims, 0.5)
                    z[part] = others
                    z[part.start + i] = own
                    if not any(np.array_equal(z, seen) for seen in points):
                        points.append(z)
        return points

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


def _check_dimension(name: Any, spec: Any):
    if not isinstance(name, str) or not name:
        raise ValueError(f"Parameter names must be non-empty strings; got {name!r}.")
    if isinstance(spec, ArrayRange):
        return _ArrayDimension(name, spec)
    if isinstance(spec, EpsilonSplit):
        return _SplitDimension(name, spec)
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
