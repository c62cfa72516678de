"""diffprivlib's ``StandardScaler`` fitted by many runs on the same rows: the exact statistics
once, each run's noise its own.

A repetition search on a ``Pipeline`` of diffprivlib's ``StandardScaler`` and
``LogisticRegression`` (:mod:`._batched_runs`) fits the scaler once per run, every run on *the
same rows*. diffprivlib's ``StandardScaler.fit`` (0.6.6, ``partial_fit`` on a fresh scaler)
clips the rows to ``bounds``, then for every feature clips its column again, takes its exact
mean (and variance), and draws a noisy one with a ``LaplaceTruncated`` mechanism (the variances,
after all the means, with a ``LaplaceBoundedDomain`` one), each at ``epsilon / (2 d)``
(``epsilon / d`` without ``with_std``), from one generator: ``check_random_state`` of its
``random_state`` -- a ``RandomState`` of the seed, or, unseeded, diffprivlib's secure generator,
which every mechanism then makes for itself. About 10 ms a fit on 32 features: two mechanisms
made and checked per feature, a column copied and clipped twice per statistic.

Here (:class:`ScalerStatistics`) the exact statistics and the mechanisms of one setting --
``bounds``, ``with_mean``, ``with_std`` and the scaler's ``epsilon`` -- are computed once, by
the same code on the same arrays (diffprivlib's ``check_bounds`` and ``clip_to_bounds``,
numpy's ``nanmean`` / ``nanvar`` of each feature's raveled column), and a run's draw
(:meth:`ScalerStatistics.fitted`) reads its generator as ``fit`` reads it, in the same order,
through :func:`skdptune._mechanisms.truncated_many` and
:func:`~skdptune._mechanisms.bounded_domain_many` (diffprivlib's sampler and arithmetic
elementwise), then combines the draws with ``partial_fit``'s own arithmetic: the fitted
attributes ``fit`` sets (``mean_``, ``var_``, ``scale_``, ``n_samples_seen_``,
``n_features_in_``, and ``bounds`` as ``fit`` rewrites it), bit for bit
(tests/evaluation/test_batched_scaler.py).

**Privacy.** A run's scaler is ``fit``'s ``(epsilon, 0)``-DP release: the same mechanisms on the
same exact statistics, with the run's own noise. What the runs share is a deterministic
function of the rows and a public setting, exactly what each one-by-one fit computes for
itself; no run reads another's noise, and the statistics never leave this module.

Only what ``fit`` reads is supported: dense rows without missing values (the batched path
refuses others before it gets here) and public ``bounds`` (``None`` makes ``fit`` read the
rows' range: such a scaler is never batched, :func:`batched_scaler`).
"""

from __future__ import annotations

import secrets

import numpy as np
from diffprivlib.models import StandardScaler
from diffprivlib.validation import check_bounds, clip_to_bounds
from sklearn.preprocessing._data import _handle_zeros_in_scale

from .._mechanisms import (
    LaplaceBoundedDomain,
    LaplaceTruncated,
    bounded_domain_many,
    truncated_many,
)

__all__ = ["ScalerStatistics", "batched_scaler", "bounds_centre", "scaler_transform"]


def batched_scaler(step) -> bool:
    """Whether ``step`` is a scaler :class:`ScalerStatistics` reproduces: diffprivlib's
    ``StandardScaler`` itself (not a subclass, whose ``fit`` may differ) with public ``bounds``,
    and ``copy=True`` (with ``copy=False`` its ``transform`` writes the scaled values into its
    input, which a later step or branch reading the same array would see). A public fact of the
    step."""
    return type(step) is StandardScaler and step.bounds is not None and step.copy is True


class ScalerStatistics:
    """The exact statistics of the rows ``Z`` (dense, finite, ``(n, d)`` floats) under one
    scaler setting: the ``bounds``, ``with_mean`` and ``with_std`` of ``scaler`` (an unfitted
    diffprivlib ``StandardScaler``; its ``epsilon`` and ``random_state`` are the runs' own).
    PRIVATE: exact statistics of the rows."""

    def __init__(self, scaler, Z):
        self.with_mean, self.with_std = bool(scaler.with_mean), bool(scaler.with_std)
        n, d = Z.shape
        self.d = d
        self.bounds = check_bounds(scaler.bounds, d)  # as fit rewrites them
        clipped = clip_to_bounds(Z, self.bounds)
        self.count = np.sum(~np.isnan(clipped), axis=0)
        # diffprivlib's nanmean / nanvar with axis=0: per feature, its bounds (an entry of the
        # checked bounds, taken with a list index as diffprivlib takes it), checked again, and
        # the feature's raveled column clipped again
        self._features = []
        means, variances = np.empty(d), np.empty(d)
        for j in range(d):
            feature_bounds = (self.bounds[0][[j]], self.bounds[1][[j]])
            lower, upper = check_bounds(feature_bounds, shape=0, dtype=None)
            column = clip_to_bounds(np.ravel(clipped[:, j]), feature_bounds)
            means[j], variances[j] = np.nanmean(column), np.nanvar(column)
            self._features.append((lower, upper, column.size))
        self.means, self.variances = means, variances
        self._mechanisms = {}

    def _mechanisms_of(self, epsilon, seeded):
        """The mean and variance mechanisms of every feature at the scaler's ``epsilon``, made
        once (``seeded``: sharing one ``RandomState``, reseeded for each run; else each with
        diffprivlib's secure generator), as diffprivlib's ``_mean`` and ``_var`` make them."""
        key = (float(epsilon), seeded)
        if key not in self._mechanisms:
            per_feature = (epsilon / 2 if self.with_std else epsilon) / self.d
            generator = np.random.RandomState() if seeded else None
            means, variances = [], []
            for lower, upper, size in self._features:
                means.append(LaplaceTruncated(
                    epsilon=per_feature, delta=0, sensitivity=(upper - lower) / size,
                    lower=lower, upper=upper, random_state=generator))
                if self.with_std:
                    variances.append(LaplaceBoundedDomain(
                        epsilon=per_feature, delta=0,
                        sensitivity=((upper - lower) / size) ** 2 * (size - 1), lower=0,
                        upper=((upper - lower) ** 2) / 4, random_state=generator))
            for mechanism in variances:
                mechanism._scale = mechanism._find_scale()
            self._mechanisms[key] = (generator, means, variances)
        return self._mechanisms[key]

    def fitted(self, epsilon, seed):
        """The fitted attributes ``StandardScaler(epsilon=epsilon, random_state=seed, ...)``'s
        ``fit`` sets on these rows (``seed``: an int, or ``None`` for diffprivlib's secure
        generator). PRIVATE until released with the run."""
        out = {"bounds": self.bounds, "n_features_in_": self.d}
        seen = np.zeros(self.d, dtype=np.int64)
        if not self.with_mean and not self.with_std:
            out.update(mean_=None, var_=None, scale_=None)
            seen = seen + self.count
        else:
            generator, means, variances = self._mechanisms_of(epsilon, seed is not None)
            if seed is None:
                generator = secrets.SystemRandom()
            else:
                generator.seed(int(seed))  # fit's check_random_state(seed)
            # partial_fit's first call: last mean and variance 0.0, last count 0
            last_count = np.zeros(self.d, dtype=np.int64)
            last_sum = .0 * last_count
            new_sum = truncated_many(means, self.means, generator) * self.count
            seen = last_count + self.count
            out["mean_"] = (last_sum + new_sum) / seen
            out["var_"] = out["scale_"] = None
            if self.with_std:
                unnormalised = bounded_domain_many(variances, self.variances,
                                                   generator) * self.count
                out["var_"] = unnormalised / seen  # the last count is 0 for every feature
                out["scale_"] = _handle_zeros_in_scale(np.sqrt(out["var_"]))
        out["n_samples_seen_"] = seen[0] if np.ptp(seen) == 0 else seen
        return out


def scaler_transform(fitted, with_mean):
    """``(shift, scale)`` per feature: what a scaler with the fitted attributes ``fitted``
    (:meth:`ScalerStatistics.fitted`) subtracts and divides by in ``transform`` -- its
    ``mean_`` (0 without ``with_mean``) and its ``scale_`` (1 without ``with_std``)."""
    d = fitted["n_features_in_"]
    shift = fitted["mean_"] if with_mean else np.zeros(d)
    scale = fitted["scale_"] if fitted["scale_"] is not None else np.ones(d)
    return shift, scale


def bounds_centre(bounds):
    """The middle of a scaler's checked ``bounds`` (per feature): a public point the batched
    runs centre the rows at before their shared products (:mod:`._batched_runs`)."""
    return (np.asarray(bounds[0], dtype=float) + np.asarray(bounds[1], dtype=float)) / 2
