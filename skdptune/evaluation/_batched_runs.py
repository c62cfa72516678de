"""The runs of a repetition search on diffprivlib's ``LogisticRegression``, fitted together.

One run of :class:`~skdptune.DPRandomSearchCV` (the base algorithm ``Q``, :mod:`._holdout`)
fits a candidate on the train part plus the public padding rows and scores it on the
validation part. Every run fits *the same rows*; runs differ only in their settings (``C``,
``data_norm``, ``epsilon`` ...) and their noise. Fitted one by one, a run on a few thousand rows
costs mostly diffprivlib's and scipy's fixed costs (validation, a Python-level L-BFGS loop), and
a search with many runs is thousands of them. Here the runs' objectives -- each exactly
diffprivlib's (:mod:`._batched`) -- are minimised together by :func:`newton`, every run with
its own Newton iteration, line search and stopping rule; a pass over the rows is one matrix
product for all runs of a (``data_norm``, ``fit_intercept``) setting (``rows x features`` times
``features x runs``), on the rows clipped once per setting -- or, when the settings are many (a
continuous ``data_norm``), one product for all runs with each run's clipping a factor per row
(:class:`_SharedRows`). The rows are never copied per run, and a pass reads them in blocks that
keep its ``rows x runs`` arrays in the core's cache. The Hessians, which only steer the steps,
are computed apart from the passes and only for the runs that go on: for all of them at once
from the pairwise products of about :data:`HESSIAN_ROWS` rows (evenly spaced; fewer for a
run's first Hessians, :data:`EARLY_HESSIAN_ROWS`) times every run's curvatures. Newton's
iteration needs about 5 to 7 passes and one Hessian fewer per run where diffprivlib's L-BFGS,
run in lockstep, needed 21 (credit, churn) to 40 (Adult) in the default search.

**What a run releases is unchanged.** Its model is the ``LogisticRegression`` instance the
one-by-one path would fit (the same :func:`~._fit.instantiate`: the same parameters, seed and
epsilon scale), with the fitted attributes diffprivlib's ``fit`` sets (``classes_``, ``coef_``,
``intercept_``, ``n_features_in_``; ``n_iter_`` is not set: a released model never carries it,
:func:`skdptune.estimators.strip_nonprivate_attributes`) and its throwaway accountant charged as
diffprivlib's ``fit`` charges it. The coefficients minimise the same objective with the same
noise -- drawn by diffprivlib's ``Vector`` mechanism from the generator the one-by-one fit would
use (the same seed when the search is seeded, diffprivlib's secure generator otherwise) -- so
they equal the one-by-one model's up to the optimiser's tolerance
(tests/evaluation/test_batched_runs.py): both optimisers stop once the gradient is below
``tol`` -- Newton's iteration once it is below a tenth of it (:data:`NEWTON_TOL_SHARE`) --, at
points about that far apart (at diffprivlib's default ``tol = 1e-4`` the two
models' predictions agreed on at least 99.5 % of the rows in the trials measured,
docs/random_search.md section 2.1; runs with ``tol`` above ``1e-3`` are fitted one by one,
:func:`skdptune.evaluation._holdout._batchable`). The Laplace noise of the score and the
selection are the one-by-one path's own code (:mod:`._holdout`), and so are the per-example
utilities -- but for accuracy, where :func:`run_accuracies` computes ``predict``'s decision
values of all runs in one matrix product.

**Privacy.** The argument of :mod:`._holdout` is untouched: a run is a DP fit of the train rows
(objective perturbation, whose guarantee, as diffprivlib's, is stated for the exact minimiser
of the run's objective) and a noisy score of the validation rows. Which optimiser approximates
the minimiser is no part of the guarantee: diffprivlib's L-BFGS and the Newton iteration here
both release a deterministic function of the rows and the run's own noise, a point whose
gradient is below ``tol`` and so, the objective being ``lambda``-strongly convex (its ridge
plus the mechanism's ``delta``, on every coordinate), within ``sqrt(D) tol / lambda`` of that
minimiser -- the idealisation of analysing the minimiser is the one-by-one path's as well.
The repetition's analysis needs runs independent given the data. Every problem's iterates,
Hessians, line search and stopping read its own noise and objective only, and a column of
:func:`run_accuracies`'s product is one run's decision values; runs meet only in the rounding
of shared matrix products, whose order of summation follows the arrays' shapes (which problems
are still running) -- a coupling at the level of the last bit, the same idealisation as
analysing the minimiser rather than the optimiser's approximation of it.

**Pipelines with a DP scaler** (:func:`_scaled_pipeline_runs`). Where diffprivlib's
``StandardScaler`` (public bounds) stands between the data-independent steps and the model, each
run's scaler is drawn from statistics computed once (:mod:`._batched_scaler`: its ``fit``'s
attributes, bit for bit) and its model sees the rows as that scaler transforms them. The runs
still share the rows: a pass is one matrix product of the untransformed rows with every run's
weights divided by its scale, corrected for its shift, each row's clipping a factor per run
(:class:`_AffineRows`). The privacy argument is the one above, the scaler's release being
``fit``'s own.

**Where the shared solve stops short.** A problem whose gradient is still above its tolerance
after the shared solve -- it stopped at the iteration limit or found no acceptable step -- is
solved again alone, from zero, by ``scipy.optimize.fmin_l_bfgs_b`` with diffprivlib's
settings, on the same objective: where the optimiser's stopping decides the model, it is the
optimiser diffprivlib uses that decides it. (Every objective has a ridge on every coordinate, the
intercept's included -- :func:`skdptune.estimators.sound_fitting` -- so each has a unique
minimiser.)

**Failures.** When the train rows cannot be fitted -- fewer than two classes or non-finite
values, where diffprivlib's ``fit`` raises -- every run fails as one by one, and the evaluator
stops the search with ``PrivateFitError``. Any other exception
while setting up or solving returns ``None``: the caller then fits every run one by one (the
same outputs). Everything here runs inside :func:`skdptune._private.silenced`.
"""

from __future__ import annotations

import copy
import math

import numpy as np
from diffprivlib.validation import clip_to_norm
from scipy import optimize
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import _safe_indexing, check_array
from sklearn.utils.validation import FLOAT_DTYPES, _get_feature_names

from .._private import LEAKS
from ..estimators import branch_of
from ..estimators.models import INTERCEPT_COLUMN
from . import _scores
from ._batched import (
    _Rows,
    dense_numeric,
    is_frame,
    model_rows,
    perturbation,
    predicted_indices,
    scaled_model,
    scaler_step,
    shares_statistics,
    solves_in_batches,
    steps_give_dense_rows,
    vector_mechanism,
)
from ._batched_scaler import ScalerStatistics, bounds_centre, scaler_transform
from ._batched_ssp import fit_statistics_runs
from ._fit import (
    DeferredModel,
    DeferredPipeline,
    PreparedTemplate,
    fit_and_utility,
    fit_settings,
    fitted_as_fit,
    fitting,
    rows_of,
    steps_key,
)

__all__ = ["fit_runs", "pipeline_accuracies", "run_accuracies", "unit_utilities"]

#: A Hessian is summed over about this many of the rows (or all; :func:`curvature_rows`).
#: Passes per run on churn (5,282 rows, 33 coefficients) in the default search, with the
#: early Hessians below: 9.5 at 1024 rows, 6.8 at 2048, 5.7 over every row, the least time
#: near 2048 (1536 within the noise). In double precision: single precision's matrix
#: products were faster but, in one environment (numpy 2.0's OpenBLAS), rounded differently
#: in a joblib worker than in the main process, and the searches' results must not depend on
#: ``n_jobs``
HESSIAN_ROWS = 2048
#: ... except a problem's first Hessians, after its first, second and third steps: summed over
#: about this many rows each. Far from the minimiser a Newton step halves the gradient at best
#: (its norm fell to 0.35 of itself in the median over the first two steps, credit's default
#: search), whatever the Hessian's precision, and the pairwise products of few rows cost little;
#: near it the full Hessian keeps the convergence quadratic. The default search's iterations
#: took 0.80-0.87 of their time with them (credit, churn; Adult's, bound by the passes, the
#: same), for 0.3-0.4 more passes per run
EARLY_HESSIAN_ROWS = (256, 256, 1024)
#: The Hessians of :class:`_AffineRows` (runs of a pipeline with a DP scaler) are summed over
#: about this many rows, their first ones (at zero, then after the first and second steps)
#: over these: on churn's DP-scaler pipeline (the default search, 1,818 runs of 4,229 rows)
#: every row's Hessians (stride 1) took 7.7 passes and 6.6 Hessians per run and 0.73 of the
#: time of :data:`HESSIAN_ROWS` and :data:`EARLY_HESSIAN_ROWS` (every second row: 11.0 passes,
#: 10.0 Hessians) -- the passes cost more here (each row's clipping factor and shift)
AFFINE_HESSIAN_ROWS = 4096
AFFINE_EARLY_HESSIAN_ROWS = (512, 1024, 2048)
#: ... and after those a problem's Hessian is computed at every third iteration and kept in
#: between (near the minimiser the steps still converge, a little slower): the default search
#: on churn's easy variant took 0.76-0.84 of the time of a Hessian at every iteration (3
#: seeds, the same models' picks), 2 or 5 gave less
AFFINE_HESSIAN_EVERY = 3
#: Upper bound on the bytes of the rows' pairwise products kept between Hessians (one array of
#: about ``HESSIAN_ROWS x D (D + 1) / 2`` values per setting); beyond it they
#: are formed again for every Hessian
PAIRS_BYTES = 64 * 2**20
#: Newton's iteration stops once the largest gradient entry is below this share of ``tol``
#: (diffprivlib's rule with a tenth of its threshold): its steps are long, and one that lands
#: just below ``tol`` leaves the point up to ``||g|| / lambda`` from the minimiser, where
#: L-BFGS's shorter last steps usually stop nearer (a step further cost 7 % more passes)
NEWTON_TOL_SHARE = 0.1
#: Upper bound on the bytes of one ``rows x runs`` array of a pass: the runs are solved in
#: chunks of at most this many (rows x runs) entries (a pass holds a few such arrays).
CHUNK_BYTES = 32 * 2**20
#: Upper bound on the bytes of the rows clipped to every distinct ``data_norm`` of the runs,
#: kept for the passes when the norms are few; beyond it the clipping is a factor per row
CLIPPED_BYTES = 256 * 2**20
#: Bytes of one ``rows x problems`` array of a block of rows in a pass (the passes go through
#: the rows in such blocks, meant to stay in a core's cache) ...
BLOCK_BYTES = 256 * 2**10
#: ... unless that is fewer rows than this (many problems: larger arrays, fewer blocks)
MIN_BLOCK_ROWS = 256
#: Entries (rows x trial points) of a pass that cost little more than its fixed overhead: a
#: Newton step's backtracking tries as many of its next halvings in one pass as keep the pass
#: this small (on few rows, as a partition fit's, several; on many rows, one at a time)
SPECULATIVE_ENTRIES = 2**14


class _SharedRows:
    """``P`` binary logistic problems on one set of rows (the ``_Problems`` of :mod:`._batched`
    with the rows shared instead of stacked).

    ``X``: the rows ``(m, d)`` scaled to unit norm, and ``row_norms`` their L2 norms (zero
    rows, and rows whose norm overflows, are zero with norm 0); problem ``p`` sees
    them clipped to ``norms[p]`` (``clip_to_norm`` scales a row by ``min(1, norm / ||x||)``)
    and the constant column of :data:`~skdptune.estimators.models.INTERCEPT_COLUMN` when
    ``intercept[p]`` (zeros otherwise: the problem's unit quadratic term keeps that coordinate
    at 0). ``clipped[(norm, intercept)]``: those rows with
    that column, when the settings are few (:data:`CLIPPED_BYTES`): the problems of one setting
    then share one matrix product; otherwise (a continuous ``data_norm`` gives every run its
    own norm) every problem's clipping is applied to the products as a factor per row, and no
    clipped copy is kept. ``labels[:, k]``: 1 where a row's class is the ``k``-th positive
    class, and ``label_of[p]`` its column; ``weight``: the row weight, diffprivlib's mean
    (``1 / m``); ``quad``, ``linear`` ``(P, d + 1)``: the ridge plus the mechanism's ``delta``,
    and ``beta / m``; ``tol``, ``max_iter`` ``(P,)``. ``pairs``: the rows' pairwise products
    the Hessians keep (:meth:`hessians`), shared with every :meth:`subset`.
    """

    def __init__(self, X, row_norms, clipped, norms, intercept, labels, label_of, weight, quad,
                 linear, tol, max_iter, pairs=None):
        self.X, self.row_norms, self.clipped = X, row_norms, clipped
        self.norms, self.intercept = norms, intercept
        self.labels, self.label_of, self.weight = labels, label_of, weight
        self.quad, self.linear, self.tol, self.max_iter = quad, linear, tol, max_iter
        self.P, self.D = len(norms), X.shape[1] + 1
        self.pairs = {} if pairs is None else pairs

    #: the rows of a problem's first Hessians after zero (then :meth:`hessians`' default)
    early_rows = EARLY_HESSIAN_ROWS
    #: after those, a problem's Hessian is computed at every this-many iterations, and kept
    hessian_every = 1

    def subset(self, keep):
        """The problems ``keep`` (a boolean mask or a slice) only."""
        return _SharedRows(self.X, self.row_norms, self.clipped, self.norms[keep],
                           self.intercept[keep], self.labels, self.label_of[keep], self.weight,
                           self.quad[keep], self.linear[keep], self.tol[keep],
                           self.max_iter[keep], self.pairs)

    def _settings(self, idx):
        """The problems ``idx`` grouped by their (``norm``, ``intercept``) setting: pairs of
        the setting and the positions in ``idx`` of its problems."""
        norms, intercept = self.norms[idx], self.intercept[idx]
        for key in sorted(set(zip(norms.tolist(), intercept.tolist(), strict=True))):
            yield key, np.flatnonzero((norms == key[0]) & (intercept == key[1]))

    def loss_gradient(self, W, idx):
        """Per-problem objectives ``(len(idx),)`` and gradients ``(len(idx), D)`` at ``W``.

        The rows are taken in blocks (:func:`_blocks`: the ``rows x problems`` arrays of
        a block stay in the core's cache: the pass is bound by the elementwise exponentials,
        not by memory traffic); each block's margins, terms and gradient are computed and
        summed before the next block is read.
        """
        loss, grad = np.zeros(len(idx)), np.zeros((len(idx), self.D))
        if self.clipped is None:
            self._pass_scaled(W, idx, loss, grad)
        else:
            for key, at in self._settings(idx):
                X, Wt, labels = self.clipped[key], W[at].T, self.label_of[idx[at]]
                block_loss, block_grad = np.zeros(len(at)), np.zeros((self.D, len(at)))
                for rows in _blocks(len(X), len(at)):
                    raw = X[rows] @ Wt  # (block rows, problems)
                    residual = self._terms(raw, rows, labels, block_loss)
                    block_grad += X[rows].T @ residual
                loss[at], grad[at] = block_loss, block_grad.T
        loss *= self.weight
        grad *= self.weight
        quad, linear = self.quad[idx], self.linear[idx]
        grad += quad * W + linear
        loss += np.sum((0.5 * quad * W + linear) * W, axis=1)
        return loss, grad

    def hessians(self, W, idx, rows=None):
        """The Hessians ``(len(idx), D, D)`` at ``W``: the loss's curvature ``expit(z) (1 -
        expit(z))`` summed over about ``rows`` (default :data:`HESSIAN_ROWS`) of the rows
        (:func:`curvature_rows`) and scaled to all rows, plus the ridge on every coordinate.

        One matrix product per setting for all its problems: the sampled rows' pairwise
        products ``x_j x_k`` (``j <= k``) times the problems' curvatures, unpacked into
        symmetric matrices.
        """
        stride = curvature_stride(len(self.X), HESSIAN_ROWS if rows is None else rows)
        sample = np.arange(0, len(self.X), stride)
        d = self.D - 1
        H = np.empty((len(idx), self.D, self.D))
        if self.clipped is None:
            # the clipped row is u min(||x||, c): its products are u_j u_k times min(...)^2
            intercept, norms = self.intercept[idx], self.norms[idx]
            U = self.X[sample]
            scale = np.minimum(self.row_norms[sample, None], norms[None, :])
            raw = U @ W[:, :d].T
            raw *= scale
            raw += np.where(intercept, W[:, d] * INTERCEPT_COLUMN, 0.0)
            curvature = _curvature(raw)
            column = np.where(intercept, INTERCEPT_COLUMN, 0.0)
            H[:, d, d] = curvature.sum(axis=0) * column ** 2
            curvature *= scale
            H[:, :d, d] = H[:, d, :d] = (U.T @ curvature).T * column[:, None]
            curvature *= scale
            H[:, :d, :d] = self._unpacked(self._pairs((None, stride), U), curvature)
        else:
            for key, at in self._settings(idx):
                X = self.clipped[key][sample]
                H[at] = self._unpacked(self._pairs((key, stride), X),
                                       _curvature(X @ W[at].T))
        H *= self.weight * len(self.X) / len(sample)
        H[:, np.arange(self.D), np.arange(self.D)] += self.quad[idx]
        return H

    def _pairs(self, key, rows):
        """The pairwise products ``x_j x_k`` (``j <= k``) of ``rows`` (``key``: their setting
        and the stride that sampled them -- two strides can sample as many rows), one row of
        the result per pair ``(j, k)`` in ``np.triu_indices`` order, kept while they fit in
        :data:`PAIRS_BYTES`. Formed from slices (``x_j`` times ``x_j, ..., x_D``), not by
        indexing the columns per pair (ten times the time)."""
        if key in self.pairs:
            return self.pairs[key]
        columns = np.ascontiguousarray(rows.T)
        D = len(columns)
        pairs, start = np.empty((D * (D + 1) // 2, rows.shape[0])), 0
        for j in range(D):
            np.multiply(columns[j], columns[j:], out=pairs[start:start + D - j])
            start += D - j
        if sum(kept.nbytes for kept in self.pairs.values()) + pairs.nbytes <= PAIRS_BYTES:
            self.pairs[key] = pairs
        return pairs

    @staticmethod
    def _unpacked(pairs, curvature):
        """``sum_i curvature[i, p] x_i x_i^T`` ``(P, D, D)`` from the rows' pairwise products
        (:meth:`_pairs`)."""
        D = (math.isqrt(8 * len(pairs) + 1) - 1) // 2
        j, k = np.triu_indices(D)
        sums = pairs @ curvature
        H = np.empty((curvature.shape[1], D, D))
        H[:, j, k] = sums.T
        H[:, k, j] = H[:, j, k]
        return H

    def at_zero(self):
        """:meth:`loss_gradient` and :meth:`hessians` at ``W = 0``, where every problem
        starts.

        There every margin is 0, so the data terms depend on a problem's setting (clipping,
        intercept, positive class) only: one pass over one problem of each setting, without
        its quadratic and linear terms, which are then added per problem (at zero the
        objective is the data term alone)."""
        settings = list(zip(self.norms.tolist(), self.intercept.tolist(),
                            self.label_of.tolist(), strict=True))
        index = {setting: k for k, setting in enumerate(dict.fromkeys(settings))}
        of = np.array([index[setting] for setting in settings])
        first = np.zeros(self.P, dtype=bool)
        first[np.unique(of, return_index=True)[1]] = True  # in index order
        data = self.subset(first)
        data.quad, data.linear = np.zeros_like(data.quad), np.zeros_like(data.linear)
        zero, every = np.zeros((data.P, self.D)), np.arange(data.P)
        loss, grad = data.loss_gradient(zero, every)
        H = data.hessians(zero, every)[of]
        H[:, np.arange(self.D), np.arange(self.D)] += self.quad
        return loss[of], grad[of] + self.linear, H

    def _pass_scaled(self, W, idx, loss, grad):
        """The loss terms with every problem's clipping applied as a factor per row: the row
        clipped to ``c`` is ``x min(1, c / ||x||) = u min(||x||, c)`` with ``u`` the row
        scaled to unit norm (``X`` holds ``u``; a zero row, or one whose norm overflows --
        ``clip_to_norm`` divides it by infinity -- is zero), so no product overflows."""
        d = self.D - 1
        intercept, norms, labels = self.intercept[idx], self.norms[idx], self.label_of[idx]
        Wt, offset = W[:, :d].T, np.where(intercept, W[:, d] * INTERCEPT_COLUMN, 0.0)
        grad_t = np.zeros((d, len(idx)))
        for rows in _blocks(len(self.X), len(idx)):
            scale = np.minimum(self.row_norms[rows, None], norms[None, :])
            raw = self.X[rows] @ Wt
            raw *= scale
            raw += offset
            residual = self._terms(raw, rows, labels, loss)
            grad[:, d] += residual.sum(axis=0)
            residual *= scale
            grad_t += self.X[rows].T @ residual
        grad[:, d] = np.where(intercept, grad[:, d] * INTERCEPT_COLUMN, 0.0)
        grad[:, :d] = grad_t.T

    def _terms(self, raw, rows, labels, loss):
        """Adds to ``loss`` the unweighted loss sums of the rows ``rows`` from their margins
        ``raw`` ``(rows, problems)`` (overwritten) under the label columns ``labels``, and
        returns the residuals ``expit(raw) - y`` (:func:`logistic_sums`)."""
        y = self.labels[rows, labels[0], None] if _one_value(labels) \
            else self.labels[rows][:, labels]
        sums, residual = logistic_sums(raw, y)
        loss += sums
        return residual


class _AffineRows(_SharedRows):
    """``P`` binary logistic problems on rows that each problem standardises its own way: the
    runs of a pipeline whose DP scaler (:mod:`._batched_scaler`) released ``shift[p]`` (its
    ``mean_``, or 0 without centring) and ``scale[p]`` (its ``scale_``, or 1) before the model.

    Problem ``p`` sees row ``i`` as the model's fit sees it: ``z = (x_i - shift[p]) / scale[p]``
    (the scaler's ``transform``), clipped to the model's ``data_norm`` -- ``z / max(1, ||z|| /
    data_norm)``, :func:`~diffprivlib.validation.clip_to_norm` --, which is ``factors[i, p] z``
    with the factor computed from that very ``z`` (:func:`transformed_factors`), then the
    intercept column. ``X``: the rows as they enter the scaler, shared by every problem, so a
    pass is still one matrix product for all of them: ``z . w = (x . (w / scale) - shift .
    (w / scale))``, and the gradient and Hessian are the rows' sums (``sum_i r_i f_i x_i``, its
    pairwise products) corrected for the shift and divided by the scale. Equal to the clipped
    rows' arithmetic up to rounding (the Newton iteration converges to the same minimiser).
    ``clipped`` is ``None``: the passes are :meth:`_pass_scaled`'s, with these factors.
    """

    def __init__(self, X, factors, shift, scale, intercept, labels, label_of, weight, quad,
                 linear, tol, max_iter, pairs=None):
        super().__init__(X, None, None, np.zeros(len(shift)), intercept, labels, label_of,
                         weight, quad, linear, tol, max_iter, pairs)
        self.factors, self.shift, self.scale = factors, shift, scale

    def subset(self, keep):
        out = super().subset(keep)
        return _AffineRows(self.X, self.factors[:, keep], self.shift[keep], self.scale[keep],
                           out.intercept, self.labels, out.label_of, self.weight, out.quad,
                           out.linear, out.tol, out.max_iter, self.pairs)

    def _margins(self, X, factors, W, idx):
        """The margins ``(rows, problems)`` of the rows ``X`` (their ``factors``) at ``W``."""
        d = self.D - 1
        weights = W[:, :d] / self.scale[idx]
        raw = X @ weights.T
        raw -= np.sum(self.shift[idx] * weights, axis=1)
        raw *= factors
        raw += np.where(self.intercept[idx], W[:, d] * INTERCEPT_COLUMN, 0.0)
        return raw

    def _factors(self, rows, idx):
        """The clipping factors of the rows ``rows`` (a slice or an index array) for the
        problems ``idx`` (a view where ``idx`` is every problem, in order)."""
        block = self.factors[rows]
        if len(idx) == self.P and (idx == np.arange(self.P)).all():
            return block
        return block[:, idx]

    def _pass_scaled(self, W, idx, loss, grad):
        d = self.D - 1
        labels = self.label_of[idx]
        grad_t, sums = np.zeros((d, len(idx))), np.zeros(len(idx))
        for rows in _blocks(len(self.X), len(idx)):
            factors = self._factors(rows, idx)
            residual = self._terms(self._margins(self.X[rows], factors, W, idx), rows,
                                   labels, loss)
            grad[:, d] += residual.sum(axis=0)
            residual *= factors
            sums += residual.sum(axis=0)
            grad_t += self.X[rows].T @ residual
        grad[:, d] = np.where(self.intercept[idx], grad[:, d] * INTERCEPT_COLUMN, 0.0)
        grad[:, :d] = (grad_t.T - self.shift[idx] * sums[:, None]) / self.scale[idx]

    early_rows = AFFINE_EARLY_HESSIAN_ROWS
    hessian_every = AFFINE_HESSIAN_EVERY

    def hessians(self, W, idx, rows=None):
        stride = curvature_stride(len(self.X), AFFINE_HESSIAN_ROWS if rows is None else rows)
        sample = np.arange(0, len(self.X), stride)
        d = self.D - 1
        X, factors = self.X[sample], self._factors(sample, idx)
        shift, scale = self.shift[idx], self.scale[idx]
        curvature = _curvature(self._margins(X, factors, W, idx))
        column = np.where(self.intercept[idx], INTERCEPT_COLUMN, 0.0)
        H = np.empty((len(idx), self.D, self.D))
        H[:, d, d] = curvature.sum(axis=0) * column ** 2
        curvature *= factors
        cross = ((X.T @ curvature).T - shift * curvature.sum(axis=0)[:, None]) / scale
        H[:, :d, d] = H[:, d, :d] = cross * column[:, None]
        curvature *= factors
        # sum_i a_i (x_i - s)(x_i - s)^T from the rows' own sums S2 = sum a x x^T, S1 = sum a x,
        # S0 = sum a: S2 - v s^T - s v^T with v = S1 - S0 s / 2; then divided by the scales
        second = self._unpacked(self._pairs(("affine", stride), X), curvature)
        v = (X.T @ curvature).T
        v -= 0.5 * curvature.sum(axis=0)[:, None] * shift
        outer = v[:, :, None] * shift[:, None, :]
        second -= outer
        second -= outer.transpose(0, 2, 1)
        inverse = 1.0 / scale
        second *= inverse[:, :, None]
        second *= inverse[:, None, :]
        H[:, :d, :d] = second
        H *= self.weight * len(self.X) / len(sample)
        H[:, np.arange(self.D), np.arange(self.D)] += self.quad[idx]
        return H

    def at_zero(self):
        """:meth:`loss_gradient` and :meth:`hessians` at ``W = 0`` for every problem (the data
        terms there depend on each problem's own standardisation; the Hessians over the rows
        of a first step's, :data:`AFFINE_EARLY_HESSIAN_ROWS`)."""
        zero, every = np.zeros((self.P, self.D)), np.arange(self.P)
        loss, grad = self.loss_gradient(zero, every)
        return loss, grad, self.hessians(zero, every, self.early_rows[0])


#: A run's clipping factors come from the matrix products of :func:`transformed_factors` where
#: their rounding bound is below this share of ``data_norm ** 2`` on every row; otherwise from
#: its transformed rows
FACTOR_BOUND_SHARE = 1e-8


def transformed_factors(X, shifts, scales, data_norms):
    """``(factors, finite)``: the clipping factors ``(rows, runs)`` ``1 / max(1, ||z|| /
    data_norm)`` of the rows ``z = (X - shift) / scale`` (the scaler's ``transform``, then
    :func:`~diffprivlib.validation.clip_to_norm`) of every run (``shifts``, ``scales`` ``(runs,
    d)``, ``data_norms`` ``(runs,)``), and whether each run's transformed values are all finite
    (where not, the model's fit raises on such rows; its factors are 0). ``X`` and ``shifts``
    are centred at the same public point (:func:`_scaled_pipeline_runs`: the middle of the
    scaler's bounds), which keeps the terms below small where the rows lie near their bounds.

    The squared norms of all runs from two matrix products, ``A - 2 B + C`` with ``A = sum_j
    x_j^2 / c_j^2``, ``B = sum_j x_j s_j / c_j^2`` and ``C = sum_j s_j^2 / c_j^2``, and their
    rounding bound ``(d + 8) eps (A + 2 |B| + C)``: the factor is taken from the squared norm
    plus its bound -- never above diffprivlib's, so a clipped row's norm never exceeds
    ``data_norm`` beyond the last rounding, as with ``clip_to_norm`` -- where the bound is below
    :data:`FACTOR_BOUND_SHARE` of the larger of ``data_norm ** 2`` and the squared norm on every
    row (it then moves a factor by at most that share). A run where it is not (rows far from
    the bounds, where the terms cancel), or where a term is not finite, has its factors
    computed from its transformed rows as ``clip_to_norm`` computes them."""
    inverse = 1.0 / scales ** 2
    constant = np.sum(shifts ** 2 * inverse, axis=1)
    squared = (X * X) @ inverse.T
    cross = X @ (shifts * inverse).T
    cross *= 2.0
    bound = np.abs(cross)
    bound += squared
    bound += constant
    bound *= (X.shape[1] + 8) * np.finfo(float).eps
    squared -= cross
    del cross
    squared += constant
    np.maximum(squared, 0.0, out=squared)
    exact = ~((bound <= FACTOR_BOUND_SHARE * np.maximum(squared, data_norms ** 2)).all(axis=0)
              & np.isfinite(squared).all(axis=0))
    squared += bound
    del bound
    norms = np.sqrt(squared, out=squared)
    finite = np.ones(len(scales), dtype=bool)
    for r in np.flatnonzero(exact):
        Z = X - shifts[r]
        Z /= scales[r]
        norms[:, r] = np.linalg.norm(Z, axis=1)
        finite[r] = np.isfinite(norms[:, r]).all() or np.isfinite(Z).all()
    norms /= data_norms
    np.maximum(norms, 1.0, out=norms)
    factors = np.divide(1.0, norms, out=norms)
    factors[:, ~finite] = 0.0
    return factors, finite


#: Margins below ``-MARGIN_FLOOR`` are raised to it in :func:`logistic_sums`: there
#: ``exp(-z)`` stays finite, and the loss term and ``expit`` are below ``1e-304``
MARGIN_FLOOR = 700.0


def logistic_sums(raw, y):
    """The column sums of the logistic loss ``log(1 + e^z) - y z`` and the residuals
    ``expit(z) - y`` of margins ``z = raw`` ``(rows, problems)`` (overwritten) and labels ``y``
    in {0, 1}, a column ``(rows, 1)`` or one per problem.

    With ``z`` raised to ``-MARGIN_FLOOR`` where below it (:data:`MARGIN_FLOOR`) and ``E =
    exp(-z)``, finite: ``expit(z) = 1 / (1 + E)``, and the loss term ``z + log(1 + E) - y z``,
    its sums of ``z`` and ``y z`` reductions (a matrix-vector product for a column of labels),
    ``y z`` taken on the margins as given. Seven elementwise operations besides the reductions
    (a raise, a negation, an exponential, an addition, a division, a logarithm and the labels'
    subtraction) -- the passes are bound by them; a form through ``exp(-|z|)`` and ``sign(z)``
    needed eleven, and numpy's ``sign`` cost more than the exponential. Both agree with the
    elementwise forms up to rounding: ``expit`` to a relative ``1e-16`` (where a margin is
    below the floor, to ``1e-304`` absolute), the loss's sum to the rounding of the sums of
    ``|z|`` (a negative margin's term is ``z + log(1 + E)``, a difference of two numbers near
    ``|z|``).
    """
    labels_times_margins = y[:, 0] @ raw if y.shape[1] == 1 else (y * raw).sum(axis=0)
    np.maximum(raw, -MARGIN_FLOOR, out=raw)
    sums = raw.sum(axis=0)
    sums -= labels_times_margins
    np.negative(raw, out=raw)
    np.exp(raw, out=raw)
    raw += 1.0
    residual = np.divide(1.0, raw)
    np.log(raw, out=raw)
    sums += raw.sum(axis=0)
    residual -= y
    return sums, residual


def curvature_stride(m, rows):
    """The stride ``k`` of :func:`curvature_rows`: the largest that keeps at least ``rows`` of
    the ``m`` rows (1, every row, when ``m < 2 rows``)."""
    return max(1, m // max(rows, 1))


def curvature_rows(m, rows):
    """The rows a Hessian is summed over: every ``k``-th of the ``m`` rows
    (:func:`curvature_stride`), spread over all the rows whatever their order. A fixed choice,
    never read from the rows' values."""
    return np.arange(0, m, curvature_stride(m, rows))


def _curvature(raw):
    """``expit(z) (1 - expit(z)) = e / (1 + e)^2`` with ``e = exp(-|z|)`` (no overflow), from
    the margins ``raw`` (overwritten)."""
    np.abs(raw, out=raw)
    np.negative(raw, out=raw)
    np.exp(raw, out=raw)
    denominator = raw + 1.0
    denominator *= denominator
    raw /= denominator
    return raw


def _one_value(values) -> bool:
    return len(values) > 0 and bool((values == values[0]).all())


def _blocks(m, problems):
    """Row slices of at most :data:`BLOCK_BYTES` per ``rows x problems`` array (at least
    :data:`MIN_BLOCK_ROWS` rows, so a pass over few problems is not a loop over tiny blocks)."""
    size = max(MIN_BLOCK_ROWS, BLOCK_BYTES // (8 * max(problems, 1)))
    return [slice(start, min(start + size, m)) for start in range(0, m, size)]


def newton(problems, *, c1=1e-4, tries=30):
    """Minimise every problem with its own Newton iteration, in lockstep: ``(P, D)`` points
    and whether each converged.

    Every problem starts at zero, as diffprivlib's L-BFGS, and stops with diffprivlib's rule,
    largest gradient entry ``<= tol`` (times :data:`NEWTON_TOL_SHARE`), or after ``max_iter``
    iterations. An iteration solves its own Newton system -- the objective's Hessian
    (:meth:`_SharedRows.hessians`: the loss's curvature summed over about
    :data:`HESSIAN_ROWS` of the rows -- fewer for the problem's first three Hessians after
    zero, :data:`EARLY_HESSIAN_ROWS` --, plus the ridge on every coordinate) -- and backtracks
    (halving) until the step decreases the objective enough (Armijo, ``c1``) or halves the
    gradient's norm (where the decrease is below the objective's rounding); a problem that
    finds no such step within ``tries`` stops, unconverged. Where the system's solution is not
    a descent direction (rounding that outweighs a tiny ridge), the step is the
    gradient scaled by the Hessian's diagonal (its magnitudes) instead. After a full step that
    fails, a problem's next halvings are tried several in one pass where the rows are few
    (:data:`SPECULATIVE_ENTRIES`): it takes the first that passes, the step it takes when
    they are tried one at a time. Every evaluation is one shared pass over the rows
    (objective and gradient of the problems still running,
    :meth:`_SharedRows.loss_gradient`; at the start, one pass per setting,
    :meth:`_SharedRows.at_zero`), and a Hessian is computed only where a problem goes on;
    what a problem's iterates read is its own objective only.
    """
    x = np.zeros((problems.P, problems.D))
    f, g, H = problems.at_zero()
    tol = problems.tol * NEWTON_TOL_SHARE
    converged = np.abs(g).max(axis=1) <= tol
    running = ~converged
    iterations = np.zeros(problems.P, dtype=int)
    diagonal = np.arange(problems.D)
    while True:
        running &= ~converged & (iterations < problems.max_iter)
        act = np.flatnonzero(running)
        if not len(act):
            return x, converged
        gk = g[act]
        direction = -np.linalg.solve(H[act], gk[:, :, None])[:, :, 0]
        slope = np.einsum("pd,pd->p", gk, direction)
        ascent = ~(slope < 0)
        if ascent.any():
            scale = np.abs(H[act[ascent]][:, diagonal, diagonal])
            direction[ascent] = -gk[ascent] / np.where(scale > 0, scale, 1.0)
            slope[ascent] = np.einsum("pd,pd->p", gk[ascent], direction[ascent])
        norm = np.linalg.norm(gk, axis=1)
        step, pending, tried = np.ones(len(act)), np.arange(len(act)), 0
        while len(pending) and tried < tries:
            # the next halvings of the pending steps, k of them in one pass (the first pass:
            # the full step alone); each problem takes the first that passes, as when they
            # are tried one at a time
            k = 1 if tried == 0 else max(1, min(tries - tried, SPECULATIVE_ENTRIES
                                                // (len(problems.X) * len(pending))))
            steps = (step[pending, None] * 0.5 ** np.arange(k)).ravel()
            trying = np.repeat(pending, k)
            at = act[trying]
            trial = x[at] + steps[:, None] * direction[trying]
            f_try, g_try = problems.loss_gradient(trial, at)
            accept = (np.isfinite(f_try) & np.isfinite(g_try).all(axis=1)
                      & ((f_try <= f[at] + c1 * steps * slope[trying])
                         | (np.linalg.norm(g_try, axis=1) <= 0.5 * norm[trying])))
            accept = accept.reshape(len(pending), k)
            found = accept.any(axis=1)
            first = np.flatnonzero(found) * k + accept[found].argmax(axis=1)
            won = at[first]
            x[won], f[won], g[won] = trial[first], f_try[first], g_try[first]
            step[pending] *= 0.5 ** k
            pending, tried = pending[~found], tried + k
        running[act[pending]] = False  # no acceptable step: stops unconverged
        iterations[act] += 1
        converged[act] = np.abs(g[act]).max(axis=1) <= tol[act]
        going = act[running[act] & ~converged[act] & (iterations[act] < problems.max_iter[act])]
        # each problem's Hessian over the rows its own iteration count sets (EARLY_HESSIAN_ROWS),
        # after the early ones at every ``hessian_every``-th iteration (kept in between)
        early = problems.early_rows
        later = iterations[going] - len(early)
        going = going[(later <= 0) | ((later - 1) % problems.hessian_every == 0)]
        rows = np.array(early + (None,))[np.minimum(iterations[going], len(early) + 1) - 1]
        for count in dict.fromkeys(rows.tolist()):
            at = going[rows == count]
            H[at] = problems.hessians(x[at], at, count)


def _solved_alone(problems, q):
    """Problem ``q`` minimised by ``scipy.optimize.fmin_l_bfgs_b`` from zero with
    diffprivlib's settings (``factr=64``, ``pgtol=tol``, ``maxiter=max_iter``)."""
    keep = np.zeros(problems.P, dtype=bool)
    keep[q] = True
    one, at = problems.subset(keep), np.zeros(1, dtype=int)

    def objective(w):
        loss, grad = one.loss_gradient(w[None, :], at)
        return float(loss[0]), grad[0]

    solution, _, _ = optimize.fmin_l_bfgs_b(objective, np.zeros(one.D), factr=64,
                                            pgtol=float(one.tol[0]),
                                            maxiter=int(one.max_iter[0]))
    return solution


def fit_runs(templates, fit_seeds, X, y, train, padding, epsilons, keys=None):
    """The fitted models of the runs ``templates`` on the rows ``train`` plus ``padding``.

    ``templates``: plain diffprivlib ``LogisticRegression`` templates, or pipelines ending in
    one after data-independent steps (:func:`~._batched.batched_model`) -- or after those and
    diffprivlib's ``StandardScaler`` (:func:`~._batched.scaled_model`: the runs are
    :class:`~._fit.DeferredPipeline` objects) --, or plain models whose
    runs share the statistics of their rows (:func:`~._batched.shares_statistics`:
    :mod:`._batched_ssp`). ``fit_seeds[r]``: the
    seed the one-by-one path gives run ``r``'s :func:`~._fit.instantiate` (``None``:
    diffprivlib's secure noise). ``keys[r]``: a hashable key of run ``r``'s candidate (runs
    with equal keys have equal templates), or ``None``; the runs of one key are copied from one
    :class:`~._fit.PreparedTemplate`, which equals :func:`~._fit.instantiate` and skips its
    walks of the parameters. ``epsilons``: a factor on the DP epsilons, or
    :func:`~._fit.instantiate`'s settings (:func:`~._fit.fit_settings`). Returns a list with
    a fitted model or ``None`` (a failed fit) per run, or ``None`` when the batched path could
    not run (the caller fits one by one). A plain ``LogisticRegression`` or ``SSPRegressor``
    run's model is a :class:`~._fit.DeferredModel` (built by :func:`~._fit.built`): its
    estimator is made for the winning run only.
    PRIVATE: the models are released only through the evaluator's selection.
    """
    keys = keys or [None] * len(templates)
    try:
        prepared = _prepared(templates, epsilons, keys)
    except LEAKS:
        raise
    except Exception:
        return None
    return fit_prepared_runs(prepared, fit_seeds, X, y, train, padding, keys)


def fit_prepared_runs(prepared, fit_seeds, X, y, train, padding, keys):
    """:func:`fit_runs` of runs whose templates are already prepared (``prepared[r]``: run
    ``r``'s :class:`~._fit.PreparedTemplate`, shared by the runs of a key; ``keys`` given)."""
    try:
        # a run's estimator is its prepared copy with the run's seed: the same class and
        # parameters but random_state
        from_statistics = [shares_statistics(p.estimator) for p in prepared]
        if any(from_statistics):  # mixed with other models, or padded: one by one
            return (fit_statistics_runs(prepared, fit_seeds, X, y, train)
                    if all(from_statistics) and padding is None else None)
        if all(solves_in_batches(p.estimator) for p in prepared):
            return _deferred_runs(prepared, fit_seeds, X, y, train, padding, keys)
        # pipelines with a DP scaler before the model, and pipelines of free steps only: each
        # kind solved together (a space may hold both, e.g. a step set to a scaler or not)
        kinds = {}  # the runs of a key share their prepared template
        for p in prepared:
            if id(p) not in kinds:
                kinds[id(p)] = scaled_model(p.estimator) is not None
        scaled = [kinds[id(p)] for p in prepared]
        out = [None] * len(prepared)
        for kind in (True, False):
            runs = [r for r, s in enumerate(scaled) if s is kind]
            if not runs:
                continue
            part = ([prepared[r] for r in runs], [fit_seeds[r] for r in runs])
            models = (_scaled_pipeline_runs(*part, X, y, train, padding,
                                            [keys[r] for r in runs]) if kind
                      else _fit_pipeline_runs(_instantiated(*part), X, y, train, padding,
                                              [keys[r] for r in runs]))
            if models is None:
                return None
            for r, model in zip(runs, models, strict=True):
                out[r] = model
        return out
    except LEAKS:
        raise
    except Exception:
        return None


def _prepared(templates, epsilons, keys):
    """Every run's :class:`~._fit.PreparedTemplate` (whose ``instantiate(seed)`` is the run's
    estimator as :func:`~._fit.instantiate` makes it one by one): one per key, shared by the
    key's runs, and one per run without a key."""
    made, out, settings = {}, [], fit_settings(epsilons)
    for template, key in zip(templates, keys, strict=True):
        if key is None:
            out.append(PreparedTemplate(template, **settings))
            continue
        if key not in made:
            made[key] = PreparedTemplate(template, **settings)
        out.append(made[key])
    return out


def _instantiated(prepared, fit_seeds):
    """Every run's estimator (``prepared``: :func:`_prepared`)."""
    return [p.instantiate(seed) for p, seed in zip(prepared, fit_seeds, strict=True)]


def _deferred_runs(prepared, fit_seeds, X, y, train, padding, keys):
    """:func:`_solved_runs` of plain ``LogisticRegression`` runs, as :class:`DeferredModel`
    objects (``prepared``: :func:`_prepared`)."""
    noise_seeds = [p.random_state(seed) for p, seed in zip(prepared, fit_seeds, strict=True)]
    solved = _solved_runs([p.estimator for p in prepared], noise_seeds, X, y, train, padding,
                          keys)
    return [None if fitted is None else DeferredModel(p, seed, **fitted)
            for p, seed, fitted in zip(prepared, fit_seeds, solved, strict=True)]


def _fit_pipeline_runs(pipelines, X, y, train, padding, keys):
    """The runs of pipelines, fitted: their steps before the last are data-independent.

    A pipeline's ``fit`` fits those steps on the train rows plus the padding, transforms them,
    and fits its last step on the result. Every run fits the same rows, and the steps learn
    nothing from them (no noise, no ``random_state``), so the runs whose candidates set these
    steps alike share one fit of them (``sklearn.pipeline.Pipeline`` slicing, the calls of
    ``Pipeline.fit``): each run's pipeline gets a copy of the fitted steps and its last step
    fitted by :func:`_solved_runs` on the transformed rows, converted as diffprivlib's ``fit``
    converts them (:func:`~._batched.model_rows`; where that raises, or a step drops rows,
    every run of the group fails, as one by one).

    Whether the batched path runs at all is decided on public rows: steps that do not turn the
    padding rows alone into a dense numeric array (a sparse or pandas output) return ``None``,
    and diffprivlib's own conversion decides every run, one by one. The two paths approximate
    the same minimiser but are not equal to the last decision, so which one the runs take must
    not follow the private rows (an audit found a grid search that let one record decide it;
    docs/grid_search.md, "Partition fits that mimic the returned model").
    """
    final = pipelines[0].steps[-1][0]
    groups = {}
    for r, key in enumerate(keys):
        groups.setdefault(steps_key(key, final, r), []).append(r)
    out = [None] * len(pipelines)
    if not all(steps_give_dense_rows(pipelines[runs[0]][:-1], padding)
               for runs in groups.values()):
        return None
    for runs in groups.values():
        # the rows afresh for every group: a step may change its input in place
        X_rows, y_rows, _ = rows_of(X, y, train, {}, padding=padding)
        prefix = pipelines[runs[0]][:-1]
        with fitting():
            Z = model_rows(prefix.fit_transform(X_rows, y_rows) if prefix.steps else X_rows)
        if Z is None or len(Z) != len(y_rows):
            continue  # diffprivlib's fit raises on these rows: every run of the group fails
        final_steps = [pipelines[r].steps[-1][1] for r in runs]
        solved = _solved_runs(final_steps, [step.random_state for step in final_steps], Z,
                              y_rows, np.arange(len(Z)), None, [keys[r] for r in runs])
        models = [None if fitted is None else fitted_as_fit(step, fitted)
                  for step, fitted in zip(final_steps, solved, strict=True)]
        for r, model in zip(runs, models, strict=True):
            if model is not None:
                pipe = pipelines[r]
                pipe.steps = ([(name, copy.deepcopy(step)) for name, step in prefix.steps]
                              + [pipe.steps[-1]])
                out[r] = pipe
    return out


def _scaled_pipeline_runs(prepared, fit_seeds, X, y, train, padding, keys):
    """The runs of pipelines ending in a scaler step and a model
    (:func:`~._batched.scaled_model`), as :class:`~._fit.DeferredPipeline` objects.

    The runs whose candidates set the steps before the model alike form a group (as in
    :func:`_fit_pipeline_runs`): its data-independent steps are fitted once on the train rows
    plus the padding, and their output is read as the scaler step reads it
    (:func:`_scaler_rows`: the scaler's input ``Zs``, as its ``fit`` reads it, and the rows
    ``Z`` the model reads before the scaler's ``transform``, its columns ``block``). Each run's
    scaler is drawn from the group's exact statistics with the run's own seed
    (:class:`~._batched_scaler.ScalerStatistics`: ``fit``'s attributes, bit for bit), and its
    model is solved with the others on ``Z`` as that scaler transforms it (:class:`_AffineRows`:
    the same objective, noise and stopping rule as :func:`_solved_runs` on the transformed
    rows). Rows that the model's fit would refuse (non-finite values, fewer than two classes)
    fail every run of the group, as one by one. Whether this path runs is decided on public
    facts only (the template, the type of ``X``, the padding rows:
    :func:`~._batched.steps_give_dense_rows`).
    """
    first = prepared[0].estimator
    final = first.steps[-1][0]
    if len(first.steps) == 2 and scaler_step(first.steps[0][1])[1] is None \
            and not dense_numeric(X):
        return None  # the scaler itself reads X: a frame's names are its fit's to record
    groups = {}
    for r, key in enumerate(keys):
        groups.setdefault(steps_key(key, final, r), []).append(r)
    if not all(steps_give_dense_rows(_free_part(prepared[runs[0]].estimator), padding)
               for runs in groups.values()):
        return None
    out = [None] * len(prepared)
    for runs in groups.values():
        template = prepared[runs[0]].estimator
        scaler, branch = scaler_step(template.steps[-2][1])
        # the rows afresh for every group: a step may change its input in place
        X_rows, y_rows, _ = rows_of(X, y, train, {}, padding=padding)
        prefix = copy.deepcopy(template[:-2])
        try:
            with fitting():
                rows = prefix.fit_transform(X_rows, y_rows) if prefix.steps else X_rows
            read = _scaler_rows(template.steps[-2], branch, rows, y_rows)
        except LEAKS:
            raise
        except _OneByOne:
            return None
        except Exception:
            continue  # the pipeline's fit raises on these rows: every run of the group fails
        Zs, Z, block, image, names = read
        if not np.isfinite(Z).all():
            continue  # the model's fit raises on the transformed rows: every run fails
        try:
            with fitting():
                scaler._validate_params()
                statistics = ScalerStatistics(scaler, Zs)
        except LEAKS:
            raise
        except Exception:
            continue  # the scaler's fit raises: every run of the group fails
        # every shared product reads the rows and the shifts centred at the middle of the
        # scaler's bounds (public): near their bounds the terms stay small, where the rows'
        # own magnitude (a timestamp, say) would cancel in them
        centre = np.zeros(Z.shape[1])
        centre[block] = bounds_centre(statistics.bounds)
        scalers, transforms = [], []
        with fitting():
            for r in runs:
                p = prepared[r]
                step = p.estimator.steps[-2][1]
                run_scaler = step if branch is None else branch_of(step, branch)
                fitted = statistics.fitted(run_scaler.epsilon,
                                           p.component_seed(run_scaler, fit_seeds[r]))
                if names is not None:
                    fitted["feature_names_in_"] = names
                scalers.append(fitted)
                shift, scale = np.zeros_like(centre), np.ones_like(centre)
                shift[block], scale[block] = scaler_transform(fitted, scaler.with_mean)
                transforms.append((shift - centre, scale))
        models = [prepared[r].estimator.steps[-1][1] for r in runs]
        solved = _solved_runs(models, [prepared[r].component_seed(model, fit_seeds[r])
                                       for r, model in zip(runs, models, strict=True)],
                              Z - centre, y_rows, np.arange(len(Z)), None,
                              [keys[r] for r in runs], transforms)
        steps = prefix.steps + ([] if image is None else [(template.steps[-2][0], image)])
        for r, fitted_scaler, fitted_model in zip(runs, scalers, solved, strict=True):
            if fitted_model is not None:
                out[r] = DeferredPipeline(prepared[r], fit_seeds[r], steps, fitted_scaler,
                                          fitted_model, branch, block)
    return out


class _OneByOne(Exception):
    """The runs' rows are read in a way the batched scaler does not reproduce: every run goes
    one by one (raised on public facts: the types and dtypes of the rows, the template)."""


def _free_part(template):
    """The data-independent steps of a :func:`~._batched.scaled_model` template up to its
    model's input, the scaler's columns untransformed: its steps before the scaler step, then
    (for a ``ColumnTransformer``) the transformer with its scaler branch passing its columns
    through (:func:`_image`). An unfitted ``Pipeline`` of copies."""
    name, step = template.steps[-2]
    branch = scaler_step(step)[1]
    free = copy.deepcopy(template[:-2])
    if branch is not None:
        free.steps.append((name, _image(step, branch)))
    return free


def _image(step, branch):
    """A copy of the ``ColumnTransformer`` ``step``, its branch ``branch`` a
    :class:`_ScalerInput` (unfitted): its output is the transformer's with that branch's
    columns as they enter it, and its fit records them at the branch's turn."""
    image = copy.deepcopy(step)
    image.transformers = [(name, _ScalerInput() if name == branch else trans, columns)
                          for name, trans, columns in image.transformers]
    return image


class _ScalerInput(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """The scaler's stand-in in a :func:`_image`. ``fit`` records its input at the branch's turn
    (``rows_``: a copy, as the scaler's ``check_array`` converts it -- floats of the input's
    float type, finite --, so a later branch that writes into its input cannot change it;
    ``names_``: the feature names the scaler would record); ``transform`` returns its input as
    a new float array, as the scaler's ``transform`` returns a new one (a later branch writing
    into its own input then leaves the block alone, for the runs' scores too). PRIVATE:
    :func:`_scaler_rows` takes the record and deletes it."""

    def fit(self, X, y=None):
        self.rows_ = check_array(X, dtype=FLOAT_DTYPES, copy=True)
        self.names_ = _get_feature_names(X)
        self.n_features_in_ = self.rows_.shape[1]
        return self

    def transform(self, X):
        return np.array(X, dtype=float)


def _scaler_rows(step, branch, rows, y):
    """``(Zs, Z, block, image, names)``: how the scaler step ``(name, step)`` (its scaler the
    step itself, or its branch ``branch``) reads ``rows``, the output of the data-independent
    steps before it. ``Zs``: the scaler's input as its ``fit`` reads it (floats; ``names``, the
    feature names it records, or ``None``); ``Z``: the rows the model reads, before the scaler's
    ``transform`` (the scaler's columns, ``block``, as ``Zs``); ``image``: for a
    ``ColumnTransformer``, the transformer fitted with the branch a :class:`_ScalerInput`
    (:func:`_image`; its record taken), else ``None``. Raises :class:`_OneByOne` where the
    scaler's ``transform`` keeps float32 or where the model's input is not a plain array, and
    what the pipeline's fit raises on these rows."""
    if branch is None:
        Z = model_rows(rows)
        if Z is None or len(Z) != len(y):
            raise ValueError("the scaler's fit raises on these rows")
        if Z.dtype.kind == "f" and Z.dtype != np.float64:
            raise _OneByOne  # the scaler's transform keeps float32 rows in float32
        Z = np.asarray(Z, dtype=float)  # as the scaler's fit converts them
        return Z, Z, slice(0, Z.shape[1]), None, None
    if not (isinstance(rows, np.ndarray) or is_frame(rows)):
        raise _OneByOne  # the transformer converts other rows its own way
    image = _image(step[1], branch)
    with fitting():
        out = image.fit_transform(rows, y)
    # the record taken at once: the image is kept (the runs' prefix), not the rows
    recorder = vars(next(trans for name, trans, _ in image.transformers_ if name == branch))
    Zs, names = recorder.pop("rows_", None), recorder.pop("names_", None)
    if not isinstance(out, np.ndarray):
        raise _OneByOne  # a frame output: the model records its column names
    block = image.output_indices_[branch]
    if Zs is None or block.stop == block.start:
        raise _OneByOne  # no column selected: the transformer does not fit the scaler
    if Zs.dtype != np.float64 or Zs.shape[1] != block.stop - block.start:
        raise _OneByOne  # float32 columns: the scaler's transform keeps float32
    Z = model_rows(out)
    if Z is None or len(Z) != len(y):
        raise ValueError("the model's fit raises on these rows")
    Z = np.array(Z, dtype=float)
    Z[:, block] = Zs
    return Zs, Z, block, image, names


def _solved_runs(estimators, noise_seeds, X, y, train, padding, keys=None,
                 transforms=None):
    """The fitted attributes of the runs, solved together: a dict per run (``classes_``,
    ``coef_``, ``intercept_``, ``n_features_in_``), or ``None`` (a failed fit).

    ``estimators[r]``: run ``r``'s ``LogisticRegression`` or an estimator with its parameters
    (its ``random_state`` is not read), ``noise_seeds[r]`` its ``random_state``. ``keys``: the
    runs' candidate keys (:func:`fit_runs`). Runs of one key are copies of one prepared
    template that differ in their seed only, so their parameters are validated once
    (diffprivlib's ``fit`` validates them first; the seeds are the search's own integers).
    ``transforms[r]``: run ``r``'s scaler as ``(shift, scale)`` arrays -- its model is fitted on
    ``(X - shift) / scale`` (:class:`_AffineRows`; a run whose transformed rows are not finite
    fails) -- or ``None`` for the rows as they are."""
    rows = _Rows(X, y, padding)
    fitted = rows.fit_rows(np.asarray(train))
    if fitted is False:
        return [None] * len(estimators)  # diffprivlib raises on every run
    indices, present, positives = fitted
    m, d = len(indices), rows.d
    generator = np.random.RandomState()
    mechanisms, labels = {}, {}
    # one entry per binary problem: its run, setting, positive class, terms and stopping rules
    problems = {key: [] for key in ("run", "norm", "intercept", "label", "quad", "linear", "tol",
                                    "max_iter")}
    validated = set()
    for r, (est, noise_seed, key) in enumerate(zip(estimators, noise_seeds,
                                                   keys or [None] * len(estimators),
                                                   strict=True)):
        if key is None or key not in validated:
            est._validate_params()
            validated.add(key)
        norm, intercept = float(est.data_norm), bool(est.fit_intercept)
        if not (noise_seed is None or isinstance(noise_seed, (int, np.integer))):
            raise TypeError("a random_state the batched path does not reproduce")
        setting = (float(est.epsilon) / len(positives), float(est.C), norm, intercept, m,
                   d + int(intercept))
        if setting not in mechanisms:
            mechanisms[setting] = vector_mechanism(
                *setting, None if noise_seed is None else generator)
        if noise_seed is not None:
            generator.seed(int(noise_seed))  # the one-by-one fit's check_random_state(seed)
        for code in positives:  # one-vs-rest in class order, the draws in diffprivlib's order
            beta, delta = perturbation(mechanisms[setting])
            quad = np.full(d + 1, 1.0 / (est.C * m) + delta)
            if not intercept:
                quad[d] = 1.0  # keeps the absent intercept's weight at 0
            linear = np.zeros(d + 1)
            linear[:len(beta)] = beta / m
            for entry, value in (("run", r), ("norm", norm), ("intercept", intercept),
                                 ("label", labels.setdefault(code, len(labels))),
                                 ("quad", quad), ("linear", linear), ("tol", float(est.tol)),
                                 ("max_iter", int(est.max_iter))):
                problems[entry].append(value)
    problems = {key: np.array(values) for key, values in problems.items()}
    codes = rows.codes[indices]
    label_array = np.zeros((m, len(labels)))
    for code, k in labels.items():
        label_array[:, k] = codes == code
    owner, n_problems = problems["run"], len(problems["run"])
    chunk = max(1, CHUNK_BYTES // (8 * m))
    theta = np.empty((n_problems, d + 1))
    failed = set()
    for start, shared in _chunks(rows.X[indices], problems, label_array, chunk, transforms,
                                 failed):
        # the margins' exponentials under- and overflow harmlessly (exp(-|z|) in [0, 1]):
        # whatever numpy's error settings, as diffprivlib's own loss
        with np.errstate(all="ignore"):
            solution, converged = newton(shared)
            # a problem the shared solve left with a gradient above its tolerance (stopped by
            # the iteration limit or the line search) is solved again alone by scipy's
            # L-BFGS-B as diffprivlib calls it, whose stopping there decides the model
            for q in np.flatnonzero(~converged):
                solution[q] = _solved_alone(shared, q)
        theta[start:start + shared.P] = solution
    classes = rows.classes[present]
    out = []
    for r, est in enumerate(estimators):
        if r in failed:
            out.append(None)  # its transformed rows are not finite: the model's fit raises
            continue
        coef = theta[owner == r]
        out.append({"classes_": classes, "coef_": coef[:, :d].copy(),
                    "intercept_": (coef[:, d] * INTERCEPT_COLUMN if est.fit_intercept
                                   else np.zeros(len(coef))),
                    "n_features_in_": d})
    return out


def _chunks(X_fit, problems, label_array, chunk, transforms, failed):
    """``(start, rows)``: the problems in chunks of at most ``chunk``, each chunk's
    :class:`_SharedRows` -- or, with ``transforms`` (each run's ``(shift, scale)``), its
    :class:`_AffineRows`, whose runs with non-finite transformed rows are added to ``failed``
    (their factors 0: their solutions are discarded)."""
    m, d = X_fit.shape
    n_problems, owner = len(problems["run"]), problems["run"]
    if transforms is None:
        with np.errstate(all="ignore"):
            row_norms = np.linalg.norm(X_fit, axis=1)
            finite = np.isfinite(row_norms) & (row_norms > 0)
            row_norms[~finite] = 0.0
            units = np.where(finite[:, None],
                             X_fit / np.where(finite, row_norms, 1.0)[:, None], 0.0)
        # the rows clipped to each (norm, intercept) of the runs, with the intercept column
        # (ones, or zeros), when they are few; else the clipping is a factor per row
        distinct = sorted(set(zip(problems["norm"].tolist(), problems["intercept"].tolist(),
                                  strict=True)))
        clipped = ({(norm, intercept): np.hstack([clip_to_norm(X_fit, norm),
                                                   np.full((m, 1),
                                                           INTERCEPT_COLUMN * intercept)])
                    for norm, intercept in distinct}
                   if len(distinct) * (X_fit.nbytes + 8 * m) <= CLIPPED_BYTES else None)
        every = _SharedRows(units, row_norms, clipped, problems["norm"], problems["intercept"],
                            label_array, problems["label"], 1.0 / m, problems["quad"],
                            problems["linear"], problems["tol"], problems["max_iter"])
        for start in range(0, n_problems, chunk):
            yield start, every.subset(slice(start, start + chunk))
        return
    shift = np.array([transforms[r][0] for r in owner]).reshape(n_problems, d)
    scale = np.array([transforms[r][1] for r in owner]).reshape(n_problems, d)
    pairs = {}
    for start in range(0, n_problems, chunk):
        part = slice(start, min(start + chunk, n_problems))
        # one column per run of the chunk (a run's binary problems share it)
        runs, first, of = np.unique(owner[part], return_index=True, return_inverse=True)
        with np.errstate(all="ignore"):
            factors, finite = transformed_factors(X_fit, shift[part][first],
                                                  scale[part][first],
                                                  problems["norm"][part][first])
        failed.update(runs[~finite].tolist())
        of = of.ravel()
        if len(of) != len(runs) or (of != np.arange(len(of))).any():
            factors = factors[:, of]
        yield start, _AffineRows(X_fit, factors, shift[part], scale[part],
                                 problems["intercept"][part], label_array,
                                 problems["label"][part], 1.0 / m, problems["quad"][part],
                                 problems["linear"][part], problems["tol"][part],
                                 problems["max_iter"][part], pairs)


def run_accuracies(models, X_val, y_val):
    """Every fitted run's per-example accuracy utilities on ``X_val``, from one matrix product.

    ``models``: the plain ``LogisticRegression`` runs of :func:`fit_runs` (models or their
    :class:`DeferredModel` objects; ``None``: a failed run, left ``None``). The utilities are
    :class:`~._scores.AccuracyScore`'s -- 1 where the prediction equals the label -- with
    ``predict``'s arithmetic up to the rounding of the product: decision values ``X_val @ coef_.T +
    intercept_`` in float64 (as ``predict`` computes them for float64, float32 or integer rows),
    their sign or ``argmax``, then ``classes_`` (two classes shared by the runs: the products'
    transpose, whose sign picks for every run at once which rows' labels it predicts). Only the
    product is shared by all runs; its last bits can differ from one run's own matrix-vector
    product, so a prediction whose decision value is within rounding of 0 can differ from
    ``predict``'s (a run's utilities still depend on its own model and the rows only). Returns
    ``None`` where ``predict`` would compute otherwise -- a run that is not a plain
    ``LogisticRegression``, rows that are not a finite 2-D ``numpy`` array (no subclass such as
    ``np.matrix``) of integers or of floats of at most 64 bits (long doubles keep their precision in
    ``predict``; non-finite rows make it raise), or labels that are not a 1-D ``numpy`` array -- and
    the caller scores run by run. The utilities are boolean arrays (a mean of 0/1 values is exact
    either way; a group holds every run's, so a byte per row rather than eight keeps its memory
    small when ``K`` exceeds ``E[K]``). PRIVATE: the exact utilities.
    """
    fitted = [m for m in models if m is not None]
    if (not fitted
            or not all(isinstance(m, (DeferredModel, _Linear)) or solves_in_batches(m)
                       for m in fitted)
            or type(X_val) is not np.ndarray or X_val.ndim != 2
            or not (X_val.dtype.kind in "biu"
                    or (X_val.dtype.kind == "f" and X_val.dtype.itemsize <= 8))
            or type(y_val) is not np.ndarray or y_val.ndim != 1
            or len(y_val) != len(X_val)):
        return None
    X_val = np.asarray(X_val, dtype=float)
    k, d = fitted[0].coef_.shape
    if (X_val.shape[1] != d or not np.isfinite(X_val).all()
            or any(m.coef_.shape != (k, d) for m in fitted)):
        return None
    per_chunk = max(1, CHUNK_BYTES // (8 * k * max(len(X_val), 1)))
    utilities = []
    for start in range(0, len(fitted), per_chunk):
        chunk = fitted[start:start + per_chunk]
        coef = np.concatenate([m.coef_ for m in chunk])
        intercept = np.concatenate([np.broadcast_to(m.intercept_, (k,)) for m in chunk])
        classes = chunk[0].classes_
        if k == 1 and all(np.array_equal(m.classes_, classes) for m in chunk):
            # two classes, the same for every run: a run's prediction is the second class
            # where its decision value is positive, and right where the label is that class
            decision = coef @ X_val.T
            decision += intercept[:, None]
            first, second = y_val == classes[0], y_val == classes[1]
            # np.where(decision > 0, second, first) in two operations on a byte per entry
            right = decision > 0
            right &= first ^ second
            right ^= first
            utilities.extend(right)
            continue
        decision = X_val @ coef.T + intercept
        for j, model in enumerate(chunk):
            indices = predicted_indices(decision[:, j * k:(j + 1) * k])
            utilities.append(model.classes_[indices] == y_val)
    it = iter(utilities)
    return [None if m is None else next(it) for m in models]


class _Linear:
    """A run's decision function as a linear model (what :func:`run_accuracies` reads)."""

    def __init__(self, coef, intercept, classes):
        self.coef_, self.intercept_, self.classes_ = coef, intercept, classes


def pipeline_accuracies(models, X_val, y_val):
    """:func:`run_accuracies` of the :class:`~._fit.DeferredPipeline` runs of
    :func:`fit_runs` (``None``: a failed run, left ``None``) on the validation rows ``X_val``:
    per group of runs that share their fitted data-independent steps, the rows transformed by
    those steps once (a copy of ``X_val`` each time: a step may change its input in place),
    and every run's pipeline decision as one linear model on them
    (:meth:`~._fit.DeferredPipeline.linear`: its scaler's ``transform`` folded into its model's
    coefficients, on the rows centred at the middle of the scaler's bounds,
    :func:`~._batched_scaler.bounds_centre`; the same predictions up to the rounding of a
    decision value within rounding of 0, as :func:`run_accuracies`). ``None`` where
    :func:`run_accuracies` declines a group (the caller scores run by run). PRIVATE: the exact
    utilities."""
    out, groups = [None] * len(models), {}
    for r, model in enumerate(models):
        if model is not None:
            groups.setdefault(id(model.prefix), []).append(r)
    for runs in groups.values():
        rows = copy.copy(X_val) if isinstance(X_val, np.ndarray) else copy.deepcopy(X_val)
        for _, step in models[runs[0]].prefix:
            if step is not None and step != "passthrough":
                rows = step.transform(rows)
        if not dense_numeric(rows):
            return None
        centre = models[runs[0]].centre()
        views = [_Linear(*models[r].linear(centre), models[r].model["classes_"]) for r in runs]
        accuracies = run_accuracies(views, rows - centre, y_val)
        if accuracies is None:
            return None
        for r, utilities in zip(runs, accuracies, strict=True):
            out[r] = utilities
    return out


def unit_utilities(jobs, units, X, y, scorer, padding, error_score, settings_of):
    """Utilities of candidates on the fit units of the subsample-and-aggregate evaluator
    (:mod:`._partitions`), one array per job (``(len(units),)``). PRIVATE.

    ``jobs``: ``(template, fit_seeds, key)`` per candidate -- a pipeline with diffprivlib's
    ``StandardScaler`` before its model (:func:`~._batched.scaled_model`), its seed per unit
    (``None``: diffprivlib's secure noise) and its :func:`~._fit.candidate_key`; ``units``:
    ``(train, test)`` row numbers into ``X`` and ``y`` (a ``numpy`` array), each one partition
    fit with train and validation rows (the evaluator fails the others before any solve, on
    every batched path); ``settings_of(n_train)``: :func:`~._fit.instantiate`'s settings of a
    fit on ``n_train`` rows, the same for every candidate. The scorer is the accuracy's.

    Per unit, the candidates' fits are solved together as the runs of a repetition search are
    (:func:`fit_runs`: the same noise as their one-by-one fits, the same minimisers up to the
    optimiser's tolerance) and scored from one product (:func:`pipeline_accuracies`); a failed
    fit's utility is ``error_score``. Where either step cannot run on the unit, its candidates
    are fitted and scored one by one (:func:`~._fit.fit_and_utility`, the evaluator's other
    path). Either way a unit's utilities are a function of its own rows and seeds: the choice
    reads those rows only, so one record, which lies in one partition, moves one partition's
    utilities (the sensitivity ``1/k`` of :mod:`._partitions`).
    """
    templates = [template for template, _, _ in jobs]
    keys = [key for _, _, key in jobs]
    out = np.empty((len(jobs), len(units)))
    made = {}  # the candidates prepared once per size of the units' train rows
    for u, (train, test) in enumerate(units):
        seeds = [None if fit_seeds is None else int(fit_seeds[u]) for _, fit_seeds, _ in jobs]
        settings = settings_of(len(train))
        try:
            if len(train) not in made:
                made[len(train)] = _prepared(templates, settings, keys)
            models = fit_prepared_runs(made[len(train)], seeds, X, y, train, padding, keys)
        except LEAKS:
            raise
        except Exception:  # settings that do not apply: as one by one, below
            models = None
        accuracies = None
        if models is not None:
            try:
                accuracies = pipeline_accuracies(models, _safe_indexing(X, test), y[test])
            except LEAKS:
                raise
            except Exception:
                accuracies = None
        if accuracies is None:  # this unit's candidates one by one
            out[:, u] = [_unit_utility(template, settings, seed, X, y, train, test, scorer,
                                       padding, error_score)
                         for template, seed in zip(templates, seeds, strict=True)]
            continue
        out[:, u] = [error_score if utilities is None
                     else _scores._to_unit(float(np.mean(utilities)), scorer.lo, scorer.hi)
                     for utilities in accuracies]
    return list(out)


def _unit_utility(template, settings, seed, X, y, train, test, scorer, padding, error_score):
    """One candidate's utility on one unit, fitted one by one as the evaluator's other path
    fits it (settings that do not apply: a failed fit)."""
    try:
        prepared = PreparedTemplate(template, **settings)
    except LEAKS:
        raise
    except Exception:
        return error_score
    return fit_and_utility(prepared, X, y, train, test, scorer, fit_params={},
                           error_score=error_score, padding=padding, seed=seed)
