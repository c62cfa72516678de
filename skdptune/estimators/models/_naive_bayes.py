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

:class:`FeaturesAtOnceGaussianNB` draws the same model faster, for fits that are never released.
"""

from __future__ import annotations

import fractions
import math
from typing import Any

import numpy as np
from diffprivlib.models import GaussianNB
from diffprivlib.utils import check_random_state
from sklearn.naive_bayes import GaussianNB as _SklearnGaussianNB

from ..._mechanisms import bounded_domain_draws, bounded_domain_scales, truncated_draws
from ..._params import get_params
from ..._space import ArrayRange
from ._adapter import ModelAdapter

__all__ = ["FeaturesAtOnceGaussianNB", "GaussianNBAdapter", "box_bounds_factor",
           "draws_at_once", "noisy_means", "noisy_variances"]


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


def draws_at_once(epsilon, bounds, n_rows: int) -> bool:
    """Whether a ``GaussianNB`` fit of ``n_rows`` rows with these (checked) ``bounds`` draws its
    noise at once (:class:`FeaturesAtOnceGaussianNB`): its per-feature epsilon finite and
    positive, every feature's variance sensitivity -- at least ``(width / 2)^2`` -- a normal
    float (not 0 by underflow), and every variance domain ``[0, sensitivity n]`` finite (``n``
    at most the number of rows). Other settings are drawn by diffprivlib's own code."""
    lower, upper = (np.asarray(b, dtype=float) for b in bounds)
    local_epsilon = epsilon / 3 / lower.size
    diameter = upper - lower
    return bool(0 < local_epsilon < math.inf
                and np.all((diameter / 4) ** 2 >= np.finfo(float).tiny)
                and np.all(np.isfinite(diameter ** 2 * n_rows)))


def noisy_means(class_rows, counts, epsilon, bounds, generator):
    """diffprivlib's noisy means of every class (its rows, clipped, in ``class_rows``; its noisy
    count in ``counts``) and feature at once: ``LaplaceTruncated`` at ``epsilon / (3 d)`` on the
    class's sum, domain the bounds times the noisy count, divided by it (uniforms read class by
    class, feature by feature). Returns ``(means, sensitivity, domain)``: the variances'
    mechanisms' sensitivity ``max(mean - lower, upper - mean)^2`` and domain upper end
    ``sensitivity n``. ``generator``: diffprivlib's ``check_random_state(..., True)`` of the
    fit's."""
    lower, upper = (np.asarray(b, dtype=float) for b in bounds)
    n = np.asarray(counts, dtype=float)[:, None]
    # sums in float64 whatever the rows' float type (diffprivlib sums float32 columns
    # pairwise; a float64 running sum is as exact)
    sums = np.array([rows.sum(axis=0, dtype=np.float64) for rows in class_rows])
    means = truncated_draws(sums, epsilon / 3 / lower.size, upper - lower, lower * n,
                            upper * n, generator) / n
    sensitivity = np.maximum(means - lower, upper - means) ** 2
    return means, sensitivity, sensitivity * n


def noisy_variances(class_rows, counts, means, scales, domain, generator):
    """diffprivlib's noisy variances of every class and feature at once, given the noisy
    means and the variances' mechanisms (:func:`noisy_means`; ``scales`` found for them,
    :func:`~skdptune._mechanisms.bounded_domain_scales`): the squared deviations from the
    noisy mean drawn in ``[0, domain]`` by rejection, divided by the noisy count."""
    deviations = np.array([((rows - mean) ** 2).sum(axis=0, dtype=np.float64)
                           for rows, mean in zip(class_rows, means, strict=True)])
    n = np.asarray(counts, dtype=float)[:, None]
    return bounded_domain_draws(deviations, scales, 0.0, domain, generator) / n


class FeaturesAtOnceGaussianNB(GaussianNB):
    """diffprivlib's ``GaussianNB`` with the same model distribution, the noisy means and
    variances of every class and feature drawn at once.

    diffprivlib's fit draws the noisy class counts, then, per class and feature in turn, a
    noisy sum of the feature (a ``LaplaceTruncated`` mechanism at ``epsilon / (3 d)``,
    sensitivity the feature's width, domain its bounds times the class's noisy count ``n``)
    divided by ``n``, and a noisy sum of squared deviations from that noisy mean (a
    ``LaplaceBoundedDomain`` mechanism at the same epsilon, sensitivity ``max(mean - lower,
    upper - mean)^2``, domain ``[0, sensitivity n]``) divided by ``n``. Given the counts, each
    draw is independent of the others given its mechanism's parameters, and a variance's
    parameters depend on its own feature's noisy mean only. So, once diffprivlib's own code has
    checked the inputs, drawn the counts and gathered each class's rows (its
    ``_update_mean_variance`` records them here), all the means are drawn together
    (:func:`~skdptune._mechanisms.truncated_draws`), the variances' scales found together
    (:func:`~skdptune._mechanisms.bounded_domain_scales`: diffprivlib's bisection elementwise,
    the same floats) and the variances drawn together
    (:func:`~skdptune._mechanisms.bounded_domain_draws`), and written where diffprivlib writes
    them (a variance plus ``var_smoothing``). Every noisy value has the distribution
    diffprivlib gives it, from diffprivlib's sampler and arithmetic; the generator is read in
    another order, so a seeded fit is another draw than diffprivlib's.

    Unseeded, the draws come from diffprivlib's secure generator, as its mechanisms' do
    (numpy's global generator is never read); seeded, from the fit's ``RandomState``, in
    another order than diffprivlib's.

    Only where a fit is never released: a partition's model in the subsample-and-aggregate
    evaluator, whose utility alone leaves, bounded whatever the model (the adapter's
    :attr:`~._adapter.ModelAdapter.unreleased_fit`). Settings outside the ordinary -- an
    epsilon not finite and positive, a feature of width 0 or so narrow that a variance's
    sensitivity would underflow, a variance domain that overflows, a ``partial_fit`` -- are
    drawn by diffprivlib's own code.
    """

    #: a fit's classes waiting to be drawn together: ``None`` outside ``_partial_fit``
    _pending = None

    def _partial_fit(self, X, y, classes=None, _refit=False, sample_weight=None):
        # a fresh fit (``fit``) only: a later partial_fit combines with fitted statistics
        self._pending = [] if _refit else None
        try:
            super()._partial_fit(X, y, classes=classes, _refit=_refit,
                                 sample_weight=sample_weight)
            if self._pending:
                self._draw_pending()
        finally:
            for name in ("_pending", "_labels", "_rows"):
                vars(self).pop(name, None)
        return self

    def _noisy_class_counts(self, y, random_state):
        if self._pending is not None:
            # the labels in the order diffprivlib's loop visits them (one call per label), and
            # the number of rows, which bounds every noisy count
            self._labels, self._rows = np.unique(y), y.shape[0]
        return super()._noisy_class_counts(y, random_state)

    def _update_mean_variance(self, n_past, mu, var, X, random_state, sample_weight=None,
                              n_noisy=None):
        # the same answer for every class of a fit (n_noisy <= the number of rows): all are
        # drawn together, or all by diffprivlib's code
        ordinary = (self._pending is not None and n_noisy is not None and n_noisy >= 1
                    and n_past == 0 and sample_weight is None
                    and draws_at_once(self.epsilon, self.bounds, self._rows))
        if not ordinary:
            return super()._update_mean_variance(n_past, mu, var, X, random_state,
                                                 sample_weight=sample_weight, n_noisy=n_noisy)
        label = self._labels[len(self._pending)]
        self._pending.append((label, X, int(n_noisy), random_state))
        return mu, var  # written over once every class is drawn (_draw_pending)

    def _draw_pending(self):
        """Draw the recorded classes' means and variances together; write them over the
        placeholders diffprivlib wrote (variances plus ``var_smoothing``, as it adds it)."""
        labels, rows, counts, generators = zip(*self._pending, strict=True)
        # the fit's one generator, as diffprivlib's mechanisms take it: unseeded (numpy's
        # global generator), diffprivlib's secure generator, never numpy's global state
        random_state = check_random_state(generators[0], True)
        means, sensitivity, domain = noisy_means(rows, counts, self.epsilon, self.bounds,
                                                 random_state)
        scales = bounded_domain_scales(self.epsilon / 3 / means.shape[1], sensitivity, 0.0,
                                       domain)
        variances = noisy_variances(rows, counts, means, scales, domain, random_state)
        for label, mean, variance in zip(labels, means, variances, strict=True):
            i = self.classes_.searchsorted(label)
            self.theta_[i, :] = mean
            self.var_[i, :] = variance + self.epsilon_


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
    unreleased_fit = FeaturesAtOnceGaussianNB

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
