"""All partition fits of one diffprivlib ``LogisticRegression`` candidate in one solver call.

The subsample-and-aggregate evaluator (:mod:`._partitions`) fits a candidate on each of ``k``
partitions (times the inner splits). Fitted one by one, each tiny fit pays diffprivlib's and
scikit-learn's fixed costs (validation, estimator copies, a Python-level L-BFGS loop). The ``k``
objectives are independent, so their *sum* is minimised by the stacked minimisers: one L-BFGS
call over the ``k x (d + 1)`` stacked parameters, whose objective and gradient take one
vectorised pass over all rows, fits every partition at once.

What each partition model is: the candidate fitted on the partition's training rows plus the
public padding rows, with diffprivlib's objective
(``diffprivlib.models.logistic_regression._logistic_regression_path``) with the intercept as
skdptune fits it (:func:`skdptune.estimators.sound_fitting`: a weight of a constant column ``c``,
regularised like the others)

    mean_i logloss(y_i, x_i . w + c v) + ||theta||^2 / (2 C N) + (beta . theta) / N
    + delta ||theta||^2 / 2,        theta = (w, v), rows clipped to L2 norm ``data_norm``,

where ``beta`` and ``delta`` are drawn by diffprivlib's own :class:`~diffprivlib.mechanisms.Vector`
mechanism (from the generator the one-by-one fit would use: the same seed when the search is
seeded, diffprivlib's secure generator otherwise) and read back from the perturbation it applies;
multi-class labels are fitted one-vs-rest with ``epsilon / n_classes`` each, in class order, as
diffprivlib does. Two settings of ``(epsilon, C, N)``:

* **the returned model in miniature** (``model_rows`` given; the subsample-and-aggregate
  default): ``epsilon`` and ``C`` are the returned model's and ``N`` is the number of rows the
  returned model is fitted on, so the mechanism -- its noise, its ``delta``, and its choice
  between diffprivlib's two regimes (``epsilon' = epsilon - 2 ln(1 + C s / 4) <= 0`` halves
  ``epsilon`` and adds the ridge ``delta``) -- and the ridge ``1 / (C N)`` are exactly the
  returned model's. Only the empirical risk is the partition's instead of all rows'. Rescaling
  ``epsilon`` and ``C`` by ``N / n`` instead (what the one-by-one path does for other estimators)
  matches the noise and the ridge only while the returned model stays in diffprivlib's first
  regime: a candidate whose returned model falls into the second one (large ``C * data_norm`` at
  a small ``epsilon``, a much noisier model) would look as good as in the first on the
  partitions, and be selected;
* **the fit's own settings** (``model_rows=None``): ``epsilon``, ``C`` after the partition
  rescaling of :func:`~._partitions._partition_fit_settings` and ``N`` the fit's own rows --
  exactly the model the one-by-one path fits with diffprivlib.

Only the optimiser's path differs from diffprivlib's: the stacked
L-BFGS stops when *every* partition's gradient is below ``tol`` (diffprivlib's ``pgtol``), so
each partition model is at least as converged as its one-by-one fit.

The partition models are never released (only a private selector's output over their mean
utilities is), and a partition whose fit or score fails gets ``error_score``, as in the
one-by-one path. Everything here runs inside :func:`skdptune._private.silenced`.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp
from diffprivlib.validation import clip_to_norm
from sklearn import get_config
from sklearn.pipeline import Pipeline
from sklearn.utils import check_array
from sklearn.utils.validation import _check_method_params, _get_feature_names

from .._mechanisms import Vector
from .._private import LEAKS, silenced
from .._seeding import derived_seeds
from ..estimators import (
    branch_of,
    final_step_after_free_steps,
    iter_dp_components,
    private_branch,
)
from ..estimators.models import INTERCEPT_COLUMN, adapter_for, row_norm
from . import _scores
from ._batched_scaler import batched_scaler
from ._fit import fitting, instantiate

__all__ = ["batched_model", "batched_partition_utilities", "dense_numeric", "is_frame",
           "model_path", "model_rows", "numeric_frame", "plain_model_rows", "scaled_model",
           "scaler_step", "shares_statistics", "solves_in_batches", "steps_give_dense_rows",
           "supports_batched_fits", "tight_models"]


def batched_model(template, *, pipelines=False, statistics=False, scaled=False):
    """The model the batched fits solve for ``template``, or ``None``.

    A model its family says the batched solvers fit
    (:meth:`~skdptune.estimators.models.ModelAdapter.batched`): a plain diffprivlib
    ``LogisticRegression``, not a subclass, with a public ``data_norm`` and no ``warm_start``;
    with ``pipelines``, also such a model as the last step of a ``Pipeline`` whose other
    components are data-independent transformers
    (:func:`skdptune.estimators.final_step_after_free_steps`). With ``statistics``, also a
    model whose runs share the exact statistics of their rows (:func:`shares_statistics`), alone
    only: the pipeline path decides on public padding rows (:func:`steps_give_dense_rows`),
    which a regressor has none of. With ``scaled``, also the model of a pipeline whose DP
    scaler the batched runs reproduce (:func:`scaled_model`).
    """
    if statistics and shares_statistics(template):
        return template
    if scaled and (model := scaled_model(template)) is not None:
        return model
    model = template
    if pipelines and adapter_for(template) is None:
        model = final_step_after_free_steps(template)
    return model if solves_in_batches(model) else None


def scaled_model(template):
    """The model of a ``Pipeline`` (not a subclass) of data-independent steps, then a scaler
    step (:func:`scaler_step`: diffprivlib's ``StandardScaler`` with public ``bounds``, or a
    ``ColumnTransformer`` holding one beside data-independent branches), then a model the
    batched logistic solvers fit (:func:`solves_in_batches`) -- whose runs :mod:`._batched_runs`
    fits with each run's scaler drawn from shared statistics (:mod:`._batched_scaler`) --, else
    ``None``. Public: the template's structure and parameters."""
    if type(template) is not Pipeline or len(template.steps) < 2:
        return None
    model = template.steps[-1][1]
    if scaler_step(template.steps[-2][1]) is None or not solves_in_batches(model):
        return None
    return model if final_step_after_free_steps(template[:-1]) is not None else None


def scaler_step(step):
    """``(scaler, branch)`` of a step whose runs' scalers the batched runs draw from shared
    statistics: diffprivlib's ``StandardScaler`` with public ``bounds``
    (:func:`~._batched_scaler.batched_scaler`) as the step itself (``branch`` ``None``), or as
    the one private branch of a ``ColumnTransformer`` (:func:`~skdptune.estimators.private_branch`:
    ``branch`` its name); else ``None``. Public: the step's structure."""
    if batched_scaler(step):
        return step, None
    branch = private_branch(step)
    if branch is None:
        return None
    return (branch_of(step, branch), branch) if batched_scaler(branch_of(step, branch)) else None


def solves_in_batches(model) -> bool:
    """Whether the batched logistic solvers fit ``model`` itself (:func:`batched_model`)."""
    family = adapter_for(model)
    return family is not None and family.batched(model) and not family.batched_statistics


def shares_statistics(model) -> bool:
    """Whether the batched runs of a repetition search fit ``model`` from the exact statistics
    of their rows, computed once per setting (:mod:`._batched_ssp`: skdptune's
    ``SSPRegressor`` with public bounds)."""
    family = adapter_for(model)
    return family is not None and family.batched_statistics and family.batched(model)


def model_path(template) -> str:
    """The path of :func:`batched_model` in ``template``, from which its seed is derived
    (:func:`skdptune.estimators.seed_dp_components`): ``""`` for the model itself."""
    ((path, _),) = iter_dp_components(template)
    return path


def dense_numeric(X) -> bool:
    """Whether ``X`` is what the batched fits read: a 2-D ``numpy`` array of numbers (anything
    else goes through diffprivlib's own conversion, one by one)."""
    return isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "biuf"


def model_rows(Z):
    """``Z`` as diffprivlib's ``LogisticRegression.fit`` reads it: a dense numeric array as
    is; anything else as scikit-learn's ``check_array`` converts it (a numeric frame, an
    object array of numbers), or ``None`` where the fit raises -- on anything it cannot
    convert, and on sparse rows, which its ``clip_to_norm`` refuses."""
    if dense_numeric(Z):
        return Z
    if sp.issparse(Z):
        return None
    try:
        return check_array(Z, dtype=np.float64)
    except Exception:
        return None


def steps_give_dense_rows(steps, padding) -> bool:
    """Whether the data-independent ``steps`` before a model (an unfitted ``Pipeline``, not
    modified) turn the public padding rows, fitted and transformed alone, into a dense numeric
    array: the batched paths ask it of public rows so that whether they run, or hand every fit
    to diffprivlib's own conversion one by one, is the same on every dataset (an audit found
    a choice made from the rows let one record move every partition: docs/grid_search.md).
    Public."""
    if padding is None:
        return False
    if not steps.steps:
        return dense_numeric(padding.X)
    try:
        with silenced(), fitting():
            Z = copy.deepcopy(steps).fit_transform(padding.X, padding.y)
    except LEAKS:
        raise
    except Exception:
        return False
    return dense_numeric(Z) and len(Z) == len(padding)


def is_frame(X) -> bool:
    """Whether ``X`` is a pandas ``DataFrame`` (pandas is not imported to ask)."""
    return type(X).__name__ == "DataFrame" and type(X).__module__.split(".")[0] == "pandas"


def numeric_frame(X):
    """``(rows, names)`` of a pandas ``DataFrame`` that diffprivlib's ``fit`` reads as a plain
    array of floats -- every column of a ``numpy`` numeric dtype --: the float array its
    conversion makes (scikit-learn's ``check_array``: ``np.asarray(X, dtype=float)``) and the
    feature names scikit-learn records (``feature_names_in_``; ``None`` when no column name is
    a string). ``None`` for anything else: extension dtypes (nullable integers, categoricals)
    and mixed column names, which scikit-learn converts or refuses its own way. The schema is
    public; only the dtypes and names are read to decide."""
    if not is_frame(X):
        return None
    if not all(isinstance(dtype, np.dtype) and dtype.kind in "biuf" for dtype in X.dtypes):
        return None
    try:
        names = _get_feature_names(X)
    except TypeError:  # mixed column names: the one-by-one fit raises the same
        return None
    return np.asarray(X, dtype=float), names


def plain_model_rows(templates, X, *, statistics=False):
    """``(rows, names)``: ``X`` as the batched fits of plain models read it -- a numeric
    ``DataFrame`` as its float array and feature names (:func:`numeric_frame`) when every
    template is a plain model (``statistics``: :func:`batched_model`'s) -- or ``(X, None)``
    (pipelines get the frame: their steps may select columns by name)."""
    frame = (numeric_frame(X) if all(batched_model(t, statistics=statistics) is t
                                     for t in templates) else None)
    return (X, None) if frame is None else frame


def supports_batched_fits(templates, X, fit_params, error_score, *, pipelines=False,
                          statistics=False, scaled=False) -> bool:
    """Whether every candidate can go through the batched path.

    Every template has a :func:`batched_model` (``pipelines``, ``statistics``, ``scaled``: its
    options; a pipeline's rows are checked once transformed, :mod:`._batched_runs`); a plain
    model needs a dense numeric ``numpy`` array ``X``. No fit parameters (diffprivlib ignores
    ``sample_weight`` anyway, with a warning) and ``error_score`` not ``"raise"`` (debugging
    goes through the one-by-one path, which lets the original exception out).
    """
    if error_score == "raise" or fit_params or get_config()["assume_finite"]:
        return False  # (assume_finite: diffprivlib would fit non-finite rows)
    numeric = dense_numeric(X)
    models = [batched_model(t, pipelines=pipelines, statistics=statistics, scaled=scaled)
              for t in templates]
    return all(model is not None and (numeric or model is not t)
               for model, t in zip(models, templates, strict=True))


#: Largest ``tol`` of a batched run: both optimisers stop once the gradient is below it, at
#: points that differ by about that much; above it the models differ visibly (one in ten
#: predictions at ``tol = 1e-2``), so such runs are fitted one by one
BATCHED_MAX_TOL = 1e-3


def tight_models(templates) -> bool:
    """Every template has a batched model (:func:`batched_model`), fitted from
    shared statistics (exact: :mod:`._batched_ssp`) or with ``tol`` at most
    :data:`BATCHED_MAX_TOL`."""
    models = [batched_model(t, pipelines=True, statistics=True, scaled=True) for t in templates]
    return all(m is not None and (shares_statistics(m) or float(m.tol) <= BATCHED_MAX_TOL)
               for m in models)


# --------------------------------------------------------------------------------------------
# One fit's settings and noise
# --------------------------------------------------------------------------------------------


def _fit_settings(template, settings: dict) -> dict:
    """The parameters of one partition fit (epsilon and C after the partition rescaling)."""
    est = batched_model(instantiate(template, **settings), pipelines=True)
    est._validate_params()
    return {"epsilon": float(est.epsilon), "C": float(est.C), "data_norm": float(est.data_norm),
            "fit_intercept": bool(est.fit_intercept), "tol": float(est.tol),
            "max_iter": int(est.max_iter)}


def vector_mechanism(epsilon, C, data_norm, fit_intercept, n_rows, dimension, rng):
    """diffprivlib's :class:`~diffprivlib.mechanisms.Vector` as ``_logistic_regression_path``
    constructs it for one binary problem, drawing from ``rng`` (its checks run once:
    :class:`skdptune._mechanisms.Vector`).

    diffprivlib keeps a ``RandomState`` it is given (``check_random_state`` returns it as
    is), so one mechanism serves every fit with these settings: re-seeding ``rng`` in place
    before a fit gives that fit exactly the draws of a mechanism built with
    ``RandomState(seed)`` (tests/evaluation/test_batched.py checks this through the public API, so a
    diffprivlib that copied the generator would fail it). ``rng=None``: diffprivlib's secure
    generator, created once and shared by the fits -- independent draws all the same.
    """
    sensitivity = row_norm(data_norm, fit_intercept)
    return Vector(epsilon=epsilon, dimension=dimension, alpha=1.0 / C,
                  function_sensitivity=0.25, data_sensitivity=sensitivity, n=n_rows,
                  random_state=rng)


def perturbation(mechanism):
    """``(beta, delta)`` of one objective perturbation drawn by ``mechanism``.

    The mechanism is applied to the zero function; its output is
    ``x -> beta . x / n + delta ||x||^2 / 2``, from whose gradient at ``0`` and at the all-ones
    vector both are read back.
    """
    dimension, n_rows = mechanism.dimension, mechanism.n
    noisy = mechanism.randomise(lambda x: (0.0, np.zeros(dimension)))
    grad_at_zero = noisy(np.zeros(dimension))[1]
    grad_at_one = noisy(np.ones(dimension))[1]
    return grad_at_zero * n_rows, float(grad_at_one[0] - grad_at_zero[0])


def row_weights(n_rows, model_rows=None, n_padding=0):
    """Weights of one fit's rows in its empirical risk (the last ``n_padding`` are padding).

    ``model_rows=None``: diffprivlib's mean over the fit's rows. Otherwise the miniature of a
    model on ``N = model_rows`` rows (padding included): its empirical risk in expectation --
    ``1 / N`` per padding row, as in that model, and the partition's mean loss standing for the
    rest, ``(N - n_padding) / N``. (With equal weights, a few padding rows would pin the
    intercept of a 75-row partition fit as they never do in the returned model.)
    """
    if model_rows is None:
        return np.full(n_rows, 1.0 / n_rows)
    noise_rows, own = int(model_rows), n_rows - n_padding
    return np.concatenate([np.full(own, (noise_rows - n_padding) / (noise_rows * own)),
                           np.full(n_padding, 1.0 / noise_rows)])


# --------------------------------------------------------------------------------------------
# The stacked problem
# --------------------------------------------------------------------------------------------


def logistic_terms(raw, y):
    """The logistic loss ``log(1 + e^z) - y z`` and its derivative ``expit(z) - y`` of margins
    ``z = raw`` (overwritten) and labels ``y`` in {0, 1} (broadcast against ``raw``), elementwise.

    Both from one exponential, ``e = exp(-|z|)`` in ``[0, 1]`` (no overflow):
    ``log(1 + e^z) = max(z, 0) + log1p(e)`` and ``expit(z) = 1 / (1 + e)`` or ``e / (1 + e)``.
    In place where it can: the passes are bound by these elementwise operations.
    """
    e = np.abs(raw)
    np.negative(e, out=e)
    np.exp(e, out=e)
    terms = np.log1p(e)
    residual = np.maximum(raw, 0.0)
    terms += residual
    residual.fill(1.0)
    np.copyto(residual, e, where=raw < 0)
    e += 1.0
    residual /= e
    raw *= y
    terms -= raw
    residual -= y
    return terms, residual


#: Bytes of the stacked rows of one block of problems in a pass: the pass reads a block's
#: rows twice (margins, then gradient), and the second read should find them in a core's
#: cache. Measured on the suite's partition problems (77 rows, 9 to 26 columns, 10 to 16 MB
#: per group): 1.4 to 2.4 times faster per pass than one pass over all problems.
PROBLEM_BLOCK_BYTES = 2**20


class _Problems:
    """``P`` independent binary problems, rows padded to a common length (weight 0)."""

    def __init__(self, X, y, w, quad, linear, tol, max_iter):
        """Stacked arrays: rows ``X`` ``(P, m, D)`` (the last column the intercept's: a problem
        without one has zeros there and a unit quadratic term, so that coordinate stays 0),
        labels ``y`` and row weights ``w`` ``(P, m)``, quadratic and linear terms ``(P, D)``,
        ``tol`` and ``max_iter`` ``(P,)``."""
        self.X, self.y, self.w, self.quad, self.linear = X, y, w, quad, linear
        self.tol, self.max_iter = tol, max_iter
        self.P, self.D = X.shape[0], X.shape[2]

    def subset(self, keep):
        """The problems ``keep`` (a boolean mask) only."""
        return _Problems(self.X[keep], self.y[keep], self.w[keep], self.quad[keep],
                         self.linear[keep], self.tol[keep], self.max_iter[keep])

    def loss_gradient(self, W, idx):
        """Per-problem objectives ``(len(idx),)`` and gradients ``(len(idx), D)`` at ``W``.

        In blocks of problems (:data:`PROBLEM_BLOCK_BYTES`); each problem's products are its
        own matrix products, so its values do not depend on the blocks."""
        n, whole = len(idx), len(idx) == self.P
        per_block = max(1, PROBLEM_BLOCK_BYTES // max(self.X[:1].nbytes, 1))
        loss, grad = np.empty(n), np.empty((n, self.D))
        for start in range(0, n, per_block):
            block = slice(start, min(start + per_block, n))
            rows = block if whole else idx[block]
            X, w = self.X[rows], self.w[rows]
            terms, residual = logistic_terms(np.matmul(X, W[block, :, None])[:, :, 0],
                                             self.y[rows])
            terms *= w
            loss[block] = np.sum(terms, axis=1)
            residual *= w
            grad[block] = np.matmul(residual[:, None, :], X)[:, 0, :]
        quad, linear = (self.quad, self.linear) if whole else (self.quad[idx], self.linear[idx])
        grad += quad * W + linear
        loss += np.sum((0.5 * quad * W + linear) * W, axis=1)
        return loss, grad


def _two_loop(g, S, Y, rho, newest):
    """L-BFGS directions ``-H g`` of every problem from its stored pairs.

    ``S``, ``Y``: ``(memory, P, D)``, ``rho``: ``(memory, P)``, slot ``newest`` holds the last
    pair; a pair with ``rho == 0`` is absent (it contributes nothing).
    """
    memory = len(rho)
    order = [(newest - j) % memory for j in range(memory)]
    q = g.copy()
    alpha = np.zeros((memory, len(g)))
    gamma = np.zeros(len(g))
    for slot in order:  # newest to oldest
        alpha[slot] = rho[slot] * np.einsum("pd,pd->p", S[slot], q)
        q -= alpha[slot][:, None] * Y[slot]
        unset = (gamma == 0) & (rho[slot] > 0)
        if unset.any():  # initial Hessian scale s.y / y.y of the newest stored pair
            yy = np.einsum("pd,pd->p", Y[slot][unset], Y[slot][unset])
            gamma[unset] = 1.0 / (rho[slot][unset] * yy)
    r = q * np.where(gamma > 0, gamma, 1.0)[:, None]
    for slot in reversed(order):  # oldest to newest
        beta = rho[slot] * np.einsum("pd,pd->p", Y[slot], r)
        r += (alpha[slot] - beta)[:, None] * S[slot]
    return -r


def _wolfe_search(problems, act, x0, f0, direction, slope, step, *, c1=1e-3, c2=0.9,
                  tries=30):
    """Weak-Wolfe line search of every problem at once (bisection and extrapolation).

    Per problem: accept ``step`` when the objective decreased enough (``c1``, Armijo) and the
    slope flattened enough (``c2``), as scipy's L-BFGS-B line search does with its defaults
    ``ftol=1e-3, gtol=0.9``; halve towards the last acceptable step when it did not decrease
    enough (first by quadratic interpolation), extrapolate (x4, scipy's ``xtrapu``) while the
    slope stays steep. Returns the new
    points, objectives and gradients (the best point with sufficient decrease found).
    """
    P = len(act)
    lo, hi = np.zeros(P), np.full(P, np.inf)
    x_best, f_best = x0.copy(), f0.copy()
    g_best = np.zeros_like(x0)
    found = np.zeros(P, bool)
    pending = np.arange(P)
    for _ in range(tries):
        x_try = x0[pending] + step[pending, None] * direction[pending]
        f_try, g_try = problems.loss_gradient(x_try, act[pending])
        armijo = f_try <= f0[pending] + c1 * step[pending] * slope[pending]
        steep = np.einsum("pd,pd->p", g_try, direction[pending]) < c2 * slope[pending]
        better = armijo & ((~found[pending]) | (f_try <= f_best[pending]))
        idx = pending[better]
        x_best[idx], f_best[idx], g_best[idx] = x_try[better], f_try[better], g_try[better]
        found[idx] = True
        too_long = ~armijo
        too_short = armijo & steep
        # quadratic interpolation of the objective along the line, safeguarded to [0.1, 0.5]
        # of the step (plain halving needs more evaluations on weakly regularised fits)
        t = step[pending]
        curvature = f_try - f0[pending] - slope[pending] * t
        interpolated = np.clip(-slope[pending] * t * t / (2 * np.maximum(curvature, 1e-300)),
                               0.1 * t, 0.5 * t)
        hi[pending[too_long]] = step[pending[too_long]]
        lo[pending[too_short]] = step[pending[too_short]]
        again = too_long | too_short
        pending = pending[again]
        if not len(pending):
            break
        interpolated = interpolated[again]
        step[pending] = np.where(np.isinf(hi[pending]), 4.0 * lo[pending],
                                 np.where(lo[pending] == 0, interpolated,
                                          0.5 * (lo[pending] + hi[pending])))
    missing = np.flatnonzero(~found)  # no sufficient decrease at all: stay (the fit stops)
    if len(missing):
        f_best[missing], g_best[missing] = problems.loss_gradient(x0[missing], act[missing])
    return x_best, f_best, g_best


def lbfgs(problems, *, memory=10, factr=64.0):
    """Minimise every problem with its own L-BFGS, in lockstep: ``(P, D)`` solutions.

    Each problem has its own memory, weak-Wolfe line search (:func:`_wolfe_search`) and stopping
    rules --
    those of ``scipy.optimize.fmin_l_bfgs_b(factr=64, pgtol=tol, maxiter=max_iter)`` (each
    problem's ``tol`` and ``max_iter``) as
    diffprivlib calls it: largest gradient entry ``<= tol``, relative decrease of the objective
    ``<= factr * machine epsilon``, or ``max_iter`` iterations. Only the function evaluations
    are shared (one vectorised pass over the rows of the problems still running).
    """
    P, D = problems.P, problems.D
    solution = np.zeros((P, D))
    ids = np.arange(P)  # the problems of the working set
    x = np.zeros((P, D))
    f, g = problems.loss_gradient(x, ids)
    S, Y = np.zeros((memory, P, D)), np.zeros((memory, P, D))
    rho = np.zeros((memory, P))
    nit = np.zeros(P, int)
    done = np.abs(g).max(axis=1) <= problems.tol
    threshold = factr * np.finfo(float).eps
    it = 0
    while not done.all():
        if 4 * done.sum() >= len(done):  # drop the finished problems once they are a quarter:
            # fewer copies of the stacked rows; until then the passes skip them (act)
            solution[ids[done]] = x[done]
            keep = ~done
            ids, problems, done = ids[keep], problems.subset(keep), done[keep]
            x, f, g, nit = x[keep], f[keep], g[keep], nit[keep]
            S, Y, rho = S[:, keep], Y[:, keep], rho[:, keep]
        act = np.flatnonzero(~done)
        sel = slice(None) if len(act) == len(done) else act  # views when all are running
        gk = g[sel]
        rho_act = rho[:, sel]
        direction = _two_loop(gk, S[:, sel], Y[:, sel], rho_act, (it - 1) % memory)
        slope = np.einsum("pd,pd->p", gk, direction)
        uphill = slope >= 0
        if uphill.any():  # restart from steepest descent
            direction[uphill] = -gk[uphill]
            rho[:, act[uphill]] = 0.0
            rho_act = rho[:, sel]
            slope = np.einsum("pd,pd->p", gk, direction)
        first = ~(rho_act > 0).any(axis=0)
        step = np.where(first, np.minimum(1.0, 1.0 / np.linalg.norm(direction, axis=1)), 1.0)
        x_new, f_new, g_new = _wolfe_search(problems, act, x[sel], f[sel], direction, slope,
                                            step)
        s, yv = x_new - x[sel], g_new - gk
        sy = np.einsum("pd,pd->p", s, yv)
        keep = sy > 1e-10 * np.einsum("pd,pd->p", yv, yv)  # curvature: store the pair
        slot = it % memory
        S[slot, sel], Y[slot, sel] = s, yv
        rho[slot, sel] = np.where(keep, 1.0 / np.where(keep, sy, 1.0), 0.0)
        f_old = f[sel].copy()
        x[sel], f[sel], g[sel] = x_new, f_new, g_new
        nit[sel] += 1
        it += 1
        scale = np.maximum(np.maximum(np.abs(f_old), np.abs(f_new)), 1.0)
        finished = ((np.abs(g_new).max(axis=1) <= problems.tol[sel])
                    | ((f_old - f_new) <= threshold * scale)
                    | (nit[sel] >= problems.max_iter[sel]))
        done[act[finished]] = True
    solution[ids] = x
    return solution


# --------------------------------------------------------------------------------------------
# One candidate on every partition
# --------------------------------------------------------------------------------------------


def is_accuracy(scorer) -> bool:
    return getattr(scorer, "scorer", None) is getattr(_scores, "_accuracy", False)


def predicted_indices(decision):
    """Indices into ``classes_`` of a linear classifier's predictions from its decision values
    ``(rows, 1 or classes)``, as scikit-learn's ``predict`` takes them: the sign for one
    column, the ``argmax`` otherwise."""
    return (decision[:, 0] > 0).astype(int) if decision.shape[1] == 1 \
        else decision.argmax(axis=1)


def _utility(scorer, template, classes, coef, intercept, X_test, y_test, score_params=None):
    """The partition model's bounded utility on its validation rows.

    ``score_params``: the scorer's metadata of these validation rows (e.g. ``sample_weight``);
    the accuracy scorer is computed here directly, weighted as ``_scores._accuracy`` weighs it
    (``np.average``; all-zero weights raise, so the partition gets ``error_score``).
    """
    if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
        raise ValueError("the fit failed")
    if not np.isfinite(X_test).all():
        raise ValueError("non-finite validation rows")  # predict raises in the one-by-one path
    score_params = score_params or {}
    if is_accuracy(scorer) and set(score_params) <= {"sample_weight"}:
        predicted = classes[predicted_indices(X_test @ coef.T + intercept)]
        weights = score_params.get("sample_weight")
        correct = predicted == y_test
        accuracy = float(np.mean(correct) if weights is None
                         else np.average(correct, weights=weights))
        return _scores._to_unit(accuracy, scorer.lo, scorer.hi)
    model = template.__class__.__new__(template.__class__)
    model.__dict__.update(template.__dict__)
    model.classes_, model.coef_, model.intercept_ = classes, coef, intercept
    model.n_features_in_ = coef.shape[1]
    model.n_iter_ = np.zeros(len(coef), dtype=np.int32)
    return float(scorer(model, X_test, y_test, **score_params))


class _Rows:
    """The rows every fit of one call draws from, prepared once for all fits.

    One array: the private rows, the public padding rows, one zero row (it fills the shorter
    problems of a stack, with weight 0); labels as codes into the sorted label set (``-1`` for
    the zero row); each row's finiteness; the rows clipped to each ``data_norm`` (clipping is
    row by row, so the rows of a fit clipped here are bitwise those of ``clip_to_norm`` of the
    fit's own rows).
    """

    def __init__(self, X, y, padding, padded=0):
        X = np.asarray(X, dtype=float)
        self.n, self.d = X.shape
        self.n_padding = padded if padding is None else len(padding.y)
        self.padded = padded
        pad_X = np.zeros((0, self.d)) if padding is None else np.asarray(padding.X, dtype=float)
        self.X = np.vstack([X, pad_X, np.zeros((1, self.d))])
        self.filler = len(self.X) - 1
        labels = np.asarray(y) if padding is None else np.concatenate([y, np.asarray(padding.y)])
        if len(labels) != self.filler:  # the private rows, then the padding
            raise ValueError("rows and labels of different lengths")  # diffprivlib raises
        self.classes, codes = np.unique(labels, return_inverse=True)
        self.codes = np.append(codes.ravel(), -1)
        self.finite = np.isfinite(self.X).all(axis=1)
        self._clipped = {}

    def clipped(self, data_norm):
        if data_norm not in self._clipped:
            self._clipped[data_norm] = clip_to_norm(self.X, data_norm)
        return self._clipped[data_norm]

    def fit_rows(self, train):
        """Row numbers of a fit on ``train`` (then the padding), its class codes and the codes
        of its binary problems' positive classes (one-vs-rest beyond two classes, as
        diffprivlib), or ``False`` when diffprivlib's fit fails (fewer than two classes,
        non-finite values). With ``padded`` rows, ``train`` ends with its own padding rows
        (rows transformed fit by fit, :func:`~._partitions.transformed_units`)."""
        rows = (np.asarray(train) if self.padded
                else np.concatenate([train, np.arange(self.n, self.n + self.n_padding)]))
        present = np.unique(self.codes[rows])
        if len(present) < 2 or not self.finite[rows].all():
            return False
        return rows, present, (present[1:] if len(present) == 2 else present).tolist()


def _stack(rows, fit_rows, units, kinds, codes, betas, deltas):
    """The stacked :class:`_Problems` (tests/evaluation/test_batched.py builds every problem the
    plain way, fit by fit, and checks the arrays are equal).

    Problem ``p`` is the binary problem of class code ``codes[p]`` on unit ``units[p]``
    (``fit_rows[unit]``) with the noise ``(betas[p], deltas[p])``; ``kinds[p]`` indexes
    the fit settings ``(data_norm, intercept, l2, noise_rows, model_rows, tol, max_iter)``.
    """
    P, d = len(units), rows.d
    units, codes, deltas = np.asarray(units), np.asarray(codes), np.asarray(deltas)
    settings = np.array(kinds[1], dtype=object)[np.asarray(kinds[0])]
    used = np.unique(units)
    m = max(len(fit_rows[u][0]) for u in used)
    index = np.full((len(fit_rows), m), rows.filler)
    for u in used:
        index[u, :len(fit_rows[u][0])] = fit_rows[u][0]
    index = index[units]
    X = np.zeros((P, m, d + 1))
    norms = settings[:, 0].astype(float)
    for norm in np.unique(norms):
        sel = np.flatnonzero(norms == norm)
        X[sel, :, :d] = rows.clipped(float(norm))[index[sel]]
    intercept = settings[:, 1].astype(bool)
    X[:, :, d] = ((index != rows.filler) & intercept[:, None]) * INTERCEPT_COLUMN
    y = (rows.codes[index] == codes[:, None]).astype(float)
    # row weights: one row per (unit, model rows), each problem takes its own
    keys = {}
    weight_of = np.array([keys.setdefault((u, mr), len(keys))
                          for u, mr in zip(units.tolist(), settings[:, 4], strict=True)])
    table = np.zeros((len(keys), m))
    for (u, model_rows), k in keys.items():
        weights = row_weights(len(fit_rows[u][0]), model_rows, rows.n_padding)
        table[k, :len(weights)] = weights
    w = table[weight_of]
    ridge = settings[:, 2].astype(float) + deltas
    quad = np.empty((P, d + 1))
    quad[:, :d] = ridge[:, None]
    # the intercept's weight is regularised like the others; without one it stays at 0
    quad[:, d] = np.where(intercept, ridge, 1.0)
    noise = np.zeros((P, d + 1))
    for p, beta in enumerate(betas):
        noise[p, :len(beta)] = beta
    linear = noise / settings[:, 3].astype(float)[:, None]
    return _Problems(X, y, w, quad, linear, settings[:, 5].astype(float),
                                 settings[:, 6].astype(int))


def _accuracy_utility(scorer, present, coef, intercept, X_test, test_codes,
                      sample_weight=None):
    """:func:`_utility` for the accuracy scorer, with the labels as codes: the same
    decision values, hence the same predictions and the same (weighted) accuracy."""
    if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
        raise ValueError("the fit failed")
    predicted = present[predicted_indices(X_test @ coef.T + intercept)]
    correct = predicted == test_codes
    accuracy = (np.count_nonzero(correct) / len(test_codes) if sample_weight is None
                else float(np.average(correct, weights=sample_weight)))
    return _scores._to_unit(accuracy, scorer.lo, scorer.hi)


def batched_partition_utilities(jobs, units, X, y, scorer, padding, error_score,
                                score_params=None, *, padded=0):
    """Utilities of candidates on their fit units, one array per job. PRIVATE.

    All fits of all jobs are solved together (:func:`lbfgs`). Each fit is the one the module
    docstring describes, on its training rows plus the padding, with its noise drawn
    from the generator of its seed; only the set-up is shared between fits (the rows clipped
    once per ``data_norm``, one :func:`vector_mechanism` per setting, the validation rows of a
    unit taken once for all candidates).

    Parameters
    ----------
    jobs : list of (template, seeds, settings_of, model_rows)
        ``template``: a :func:`~._fit.candidate_template` with a :func:`batched_model` (a
        pipeline's steps before it have transformed ``X`` already: ``padded``); ``seeds``: the
        seed of each unit's fit, the seed the one-by-one path would give it (an int array, or
        ``None``: secure noise);
        ``settings_of``: ``n_train -> instantiate()`` keyword arguments; ``model_rows``: the rows
        of the returned model when the fits are that model in miniature (its epsilon and ``C``
        from ``settings_of``), else ``None`` (module docstring).
    units : list of (train, test)
        Global row indices of each fit's training and validation rows (every job fits every
        unit).
    padding : Padding or None
        Public rows appended to every fit.
    score_params : dict or None
        Metadata for the scorer (row-aligned arrays are restricted to each fit's validation
        rows; they never reach a fit).
    padded : int
        With ``padding=None``: every unit's training rows end with this many padding rows of
        its own (the rows of :func:`~._partitions.transformed_units`; ``score_params`` must
        then be empty: they are aligned with the untransformed rows).
    """
    error = float(error_score)
    rows = _Rows(X, y, padding, padded)
    outs = [np.full(len(units), error) for _ in jobs]
    generator = np.random.RandomState()
    mechanisms, kinds = {}, {}
    fit_rows = [None] * len(units)
    units_of, kind_of, codes, betas, deltas = [], [], [], [], []
    owners = []
    for job, (template, seeds, settings_of, model_rows) in enumerate(jobs):
        fits, noise = {}, {}
        # the generator each one-by-one fit would get: diffprivlib's check_random_state of the
        # seed the search gives the model (_derived_seed(seed, its path): "" for the root)
        path = model_path(template)
        noise_seeds = None if seeds is None else derived_seeds(seeds, path).tolist()
        for u, (train, _test) in enumerate(units):
            try:
                if fit_rows[u] is None:
                    fit_rows[u] = rows.fit_rows(train)
                if fit_rows[u] is False:
                    continue  # diffprivlib raises: the fit fails
                n_train = len(train) - rows.padded  # the partition's own rows
                if n_train not in fits:
                    fits[n_train] = _fit_settings(template, settings_of(n_train))
                fit_indices, present, positives = fit_rows[u]
                noise_rows = len(fit_indices) if model_rows is None else int(model_rows)
                key = (n_train, len(positives), noise_rows)
                if key not in noise:  # the mechanism and the settings of these fits
                    fit = fits[n_train]
                    setting = (fit["epsilon"] / len(positives), fit["C"], fit["data_norm"],
                               fit["fit_intercept"], noise_rows,
                               rows.d + int(fit["fit_intercept"]))
                    if setting not in mechanisms:
                        mechanisms[setting] = vector_mechanism(
                            *setting, None if seeds is None else generator)
                    kind = (fit["data_norm"], fit["fit_intercept"],
                            1.0 / (fit["C"] * noise_rows), noise_rows, model_rows, fit["tol"],
                            fit["max_iter"])
                    noise[key] = (mechanisms[setting], kinds.setdefault(kind, len(kinds)))
                mechanism, kind = noise[key]
                if noise_seeds is not None:
                    generator.seed(noise_seeds[u])
                drawn = [perturbation(mechanism) for _ in positives]
            except LEAKS:
                raise
            except Exception:
                continue
            owners.append((job, u, present, len(units_of), len(drawn)))
            units_of += [u] * len(drawn)
            kind_of += [kind] * len(drawn)
            codes += positives
            for beta, delta in drawn:
                betas.append(beta)
                deltas.append(delta)
    if not owners:
        return outs
    stacked = _stack(rows, fit_rows, units_of, (kind_of, list(kinds)), codes, betas, deltas)
    try:
        solution = lbfgs(stacked)
    except Exception:
        # never expected; if it happens, one fit's failure must not fail the others (the
        # sensitivity of the aggregate rests on it): solve every fit alone
        solution = np.full((stacked.P, rows.d + 1), np.nan)
        for _, _, _, first, count in owners:
            alone = np.zeros(stacked.P, bool)
            alone[first:first + count] = True
            try:
                solution[first:first + count] = lbfgs(stacked.subset(alone))
            except Exception:
                pass  # NaN coefficients: its utility becomes error_score below
    d = rows.d
    X = np.asarray(X, dtype=float)
    accuracy = is_accuracy(scorer)
    validation = {}
    for job, u, present, first, count in owners:
        theta = solution[first:first + count]
        if u not in validation:
            test = units[u][1]
            X_test = X[test]
            validation[u] = (X_test, np.asarray(y)[test], rows.codes[test],
                             bool(np.isfinite(X_test).all()))
        X_test, y_test, test_codes, finite = validation[u]
        try:
            params = (_check_method_params(X, params=score_params, indices=units[u][1])
                      if score_params else {})
            if accuracy and finite and set(params) <= {"sample_weight"}:
                outs[job][u] = _accuracy_utility(scorer, present, theta[:, :d],
                                                 theta[:, d] * INTERCEPT_COLUMN,
                                                 X_test, test_codes,
                                                 params.get("sample_weight"))
            else:
                outs[job][u] = _utility(scorer, batched_model(jobs[job][0], pipelines=True),
                                        rows.classes[present],
                                        theta[:, :d], theta[:, d] * INTERCEPT_COLUMN,
                                        X_test, y_test, params)
        except LEAKS:
            raise
        except Exception:
            outs[job][u] = error
    return outs
