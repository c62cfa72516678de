"""diffprivlib's ``GaussianNB``: its cost under replace-one neighbours, for fixed bounds and
for bounds drawn from a box.

diffprivlib sizes its noise for a record added or removed. A record whose label changes moves
one unit between two of the class counts (each drawn at ``epsilon / 3``: 2/3), leaves one
class's sums of ``x`` and of squared deviations and joins another's (the sums drawn at
``epsilon / (3 d)`` per feature for a change of ``upper - lower``, while leaving a class moves
its sum by ``|x| <= max(|lower|, |upper|)``: (2/3) R; the squared deviations within their own
sensitivity: 2/3). So one unit of its ``epsilon`` costs **4/3 + (2/3) R**, with ``R`` the mean
over the features of ``max(|lower|, |upper|) / (upper - lower)`` (docs/privacy.md,
"diffprivlib's models under replace-one"). ``R >= 1/2``, with equality for bounds symmetric
around 0 (5/3); bounds ``[0, 1]`` give 2; bounds far from 0 much more (``[10, 11]``: 26/3). A
record that keeps its label costs at most 2/3.
"""

from __future__ import annotations

import fractions
import math
from typing import Any

import numpy as np
from diffprivlib.models import GaussianNB
from sklearn.naive_bayes import GaussianNB as _SklearnGaussianNB

from ..._params import get_params
from ..._space import ArrayRange
from ._adapter import ModelAdapter

__all__ = ["GaussianNBAdapter", "box_bounds_factor"]


def _bounds_factor(bounds: Any) -> fractions.Fraction | float:
    """The factor for fixed ``bounds`` (a pair of scalars or arrays), exact; ``inf`` when no
    bound is known: a distribution over the bounds, a feature's bounds not finite, in the
    wrong order, with an infinite float width, or equal and not 0."""
    try:
        lower, upper = bounds
        lower, upper = np.broadcast_arrays(np.ravel(np.asarray(lower, dtype=float)),
                                           np.ravel(np.asarray(upper, dtype=float)))
    except (TypeError, ValueError):  # a distribution over the bounds: no worst case known
        return math.inf
    ratios = []
    for low, high in zip(lower.tolist(), upper.tolist(), strict=True):
        if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(high - low)
                and low <= high):
            return math.inf  # diffprivlib's own width would be inf or NaN
        reach = fractions.Fraction(max(abs(low), abs(high)))
        if reach == 0:
            ratios.append(fractions.Fraction(0))  # a feature that is 0 in every row
            continue
        width = fractions.Fraction(high) - fractions.Fraction(low)
        if width <= 0:
            return math.inf
        ratios.append(reach / width)
    mean_ratio = sum(ratios, fractions.Fraction(0)) / len(ratios)
    return fractions.Fraction(4, 3) + fractions.Fraction(2, 3) * mean_ratio


def box_bounds_factor(box: ArrayRange) -> fractions.Fraction | float:
    """The factor of a ``GaussianNB`` whose ``bounds`` are drawn from ``box``:
    ``4/3 + (2/3) mean_j sup R_j``, the supremum over every point of the box, exact.

    ``box`` holds, per feature ``j``, a lower bound ``l`` in ``[a, b]`` and an upper bound
    ``u`` in ``[c, d]`` (its first axis: ``(lower, upper)``; a scalar pair applies to every
    feature, as diffprivlib broadcasts it). The features' ranges are independent, so the
    supremum of the mean of ``R_j = max(|l|, |u|) / (u - l)`` is the mean of the suprema, and
    each supremum is attained at one of the four corners ``(l, u)`` of its rectangle when
    ``b < c``:

    * ``sup R = max(sup |l| / (u - l), sup |u| / (u - l))``;
    * ``|l| / (u - l)`` falls as ``u`` grows, so its supremum has ``u = c``; on ``l < c``,
      ``l / (c - l)`` rises with ``l`` where ``l >= 0`` and ``-l / (c - l)`` is monotone where
      ``l <= 0`` (its derivative is ``-c / (c - l)^2``), so the maximum over ``[a, b]`` is at
      ``a`` or ``b``;
    * ``|u| / (u - l)`` rises with ``l``, so its supremum has ``l = b``; over ``u`` in
      ``[c, d]`` it is monotone on each side of 0 (derivatives ``-b / (u - b)^2`` and
      ``b / (u - b)^2``) and 0 at ``u = 0``, so its maximum is at ``c`` or ``d``.

    When ``b >= c`` the box holds points with ``u - l`` as small as one likes (or
    ``u <= l``): ``inf``, no bounded cost (the searches refuse it before any data is read; a
    box whose lower bounds stay below its upper bounds has one); so does a box whose widest
    point's width ``d - a`` overflows a float, as fixed bounds do.
    """
    if box.low.ndim < 1 or box.low.shape[0] != 2:
        return math.inf  # not a pair (lower, upper)
    ratios = []
    for a, b, c, d in zip(*(np.ravel(part).tolist() for part in (
            box.low[0], box.high[0], box.low[1], box.high[1])), strict=True):
        if not (b < c and math.isfinite(d - a)):  # diffprivlib's own float width: finite
            return math.inf
        corners = [(low, high) for low in (a, b) for high in (c, d)]
        ratios.append(max(
            fractions.Fraction(max(abs(low), abs(high)))
            / (fractions.Fraction(high) - fractions.Fraction(low)) for low, high in corners))
    return fractions.Fraction(4, 3) + fractions.Fraction(2, 3) * (
        sum(ratios, fractions.Fraction(0)) / len(ratios))


class GaussianNBAdapter(ModelAdapter):
    """diffprivlib's ``GaussianNB``: ``epsilon`` times the factor of its bounds (module
    docstring); bounds drawn from an :class:`~skdptune.ArrayRange` (``DPRandomSearchCV``,
    ``DPGIBOSearchCV``'s box) are priced at the box's supremum, :func:`box_bounds_factor`."""

    models = (GaussianNB,)
    replaces = {_SklearnGaussianNB: "use diffprivlib.models.GaussianNB(bounds=...)"}
    leak_params = {"bounds": "bounds=(lower, upper) with public per-feature bounds"}
    pair_params = ("bounds",)
    cost_params = ("bounds",)
    #: bounds whose factor, 5/3, is at most that of any point of a box a search accepts
    #: (every feature's ``max(|l|, |u|) / (u - l) >= 1/2`` once ``l < u``)
    least_cost_params = {"bounds": (-1.0, 1.0)}
    counterpart = _SklearnGaussianNB
    counterpart_params = ("priors", "var_smoothing")

    def replace_one_factor(self, estimator: Any) -> fractions.Fraction | float:
        bounds = get_params(estimator, deep=False)["bounds"]
        if isinstance(bounds, ArrayRange):
            return box_bounds_factor(bounds)
        return _bounds_factor(bounds)

    def unbounded_reason(self, estimator: Any) -> str:
        if self.draws_cost(estimator):
            return ("its bounds are drawn from an ArrayRange in which a feature's lower bound "
                    "can reach its upper bound, where the cost grows without limit: keep every "
                    "lower bound's range below its upper bound's (e.g. lower in [0, 9], upper "
                    "in [10, 1e6]); or whose widest pair's width overflows a float; or that is "
                    "not a pair (lower, upper) along its first axis")
        return ("its bounds are drawn from a distribution other than an ArrayRange (give an "
                "ArrayRange or a list of bounds), or a feature's bounds are not finite numbers "
                "with lower < upper (or lower == upper == 0) whose difference is finite")

    def draws_cost(self, estimator: Any) -> bool:
        return isinstance(get_params(estimator, deep=False)["bounds"], ArrayRange)
