"""All partition fits of one diffprivlib ``LogisticRegression`` candidate in one solver call.

The subsample-and-aggregate evaluator (:mod:`._partitions`) fits a candidate on each of ``k``
partitions (times the inner splits). Fitted one by one, each tiny fit pays diffprivlib's and
scikit-learn's fixed costs (validation, estimator copies, a Python-level L-BFGS loop). The ``k``
objectives are independent, so their *sum* is minimised by the stacked minimisers: one L-BFGS
call over the ``k x (d + 1)`` stacked parameters, whose objective and gradient take one
vectorised pass over all rows, fits every partition at once.

What each partition model is: the candidate fitted on the partition's training rows plus the
public padding rows, with diffprivlib's objective
(``diffprivlib.models.logistic_regression._logistic_regression_path``)

    mean_i logloss(y_i, x_i . w + b) + ||w||^2 / (2 C N) + (beta . theta) / N
    + delta ||theta||^2 / 2,        theta = (w, b), rows clipped to L2 norm ``data_norm``,

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

import math

import numpy as np
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression
from diffprivlib.validation import clip_to_norm
from scipy.special import expit
from sklearn.utils.validation import _check_method_params

from .._estimators import _derived_seed
from . import _scores
from ._fit import instantiate

__all__ = ["supports_batched_fits", "batched_partition_utilities"]


def supports_batched_fits(templates, X, fit_params, error_score) -> bool:
    """Whether every candidate can go through the batched path.

    Plain diffprivlib ``LogisticRegression`` (not a subclass, not in a pipeline) with a public
    ``data_norm``, a dense numeric ``numpy`` array ``X``, no fit parameters (diffprivlib ignores
    ``sample_weight`` anyway, with a warning) and ``error_score`` not ``"raise"`` (debugging
    goes through the one-by-one path, which lets the original exception out).
    """
    return (error_score != "raise" and not fit_params and isinstance(X, np.ndarray)
            and X.ndim == 2 and X.dtype.kind in "biuf"
            and all(type(t) is LogisticRegression and t.data_norm is not None
                    and not t.warm_start for t in templates))


# --------------------------------------------------------------------------------------------
# One fit's settings and noise
# --------------------------------------------------------------------------------------------


def _fit_settings(template, settings: dict) -> dict:
    """The parameters of one partition fit (epsilon and C after the partition rescaling)."""
    est = instantiate(template, **settings)
    est._validate_params()
    return {"epsilon": float(est.epsilon), "C": float(est.C), "data_norm": float(est.data_norm),
            "fit_intercept": bool(est.fit_intercept), "tol": float(est.tol),
            "max_iter": int(est.max_iter)}


def _noise_generator(seed, generator):
    """The generator of the one-by-one fit: diffprivlib's ``check_random_state`` of the seed the
    search gives the estimator (``generator``, a ``RandomState`` of the caller's, re-seeded in
    place: the same state as a new ``RandomState(seed)``, fifty times cheaper), or ``None``
    (diffprivlib's secure generator)."""
    if seed is None:
        return None
    generator.seed(_derived_seed(seed, ""))
    return generator


def vector_perturbation(epsilon, C, data_norm, fit_intercept, n_rows, dimension, rng):
    """``(beta, delta)`` of one diffprivlib objective perturbation (``Vector`` mechanism).

    The mechanism is constructed as ``_logistic_regression_path`` does and applied to the zero
    function; its output is ``x -> beta . x / n + delta ||x||^2 / 2``, from whose gradient at
    ``0`` and at the all-ones vector both are read back.
    """
    sensitivity = math.sqrt(data_norm ** 2 + 1) if fit_intercept else data_norm
    mech = Vector(epsilon=epsilon, dimension=dimension, alpha=1.0 / C, function_sensitivity=0.25,
                  data_sensitivity=sensitivity, n=n_rows, random_state=rng)
    noisy = mech.randomise(lambda x: (0.0, np.zeros(dimension)))
    grad_at_zero = noisy(np.zeros(dimension))[1]
    grad_at_one = noisy(np.ones(dimension))[1]
    return grad_at_zero * n_rows, float(grad_at_one[0] - grad_at_zero[0])


# --------------------------------------------------------------------------------------------
# The stacked problem
# --------------------------------------------------------------------------------------------


class _Problems:
    """``P`` independent binary problems, rows padded to a common length (weight 0)."""

    def __init__(self, blocks):
        self.P = len(blocks)
        m = max(len(b["y"]) for b in blocks)
        d = blocks[0]["X"].shape[1]
        # one column for the intercept in every problem: a problem without one has a zero
        # column there and a unit quadratic term, so that coordinate stays 0
        self.D = d + 1
        self.X = np.zeros((self.P, m, self.D))
        self.y = np.zeros((self.P, m))
        self.w = np.zeros((self.P, m))
        self.quad = np.zeros((self.P, self.D))
        self.linear = np.zeros((self.P, self.D))
        for p, b in enumerate(blocks):
            n = len(b["y"])
            self.X[p, :n, :d] = b["X"]
            self.X[p, :n, d] = 1.0 if b["intercept"] else 0.0
            self.y[p, :n] = b["y"]
            self.w[p, :n] = b["row_weights"]
            self.quad[p, :d] = b["l2"] + b["delta"]
            self.quad[p, d] = b["delta"] if b["intercept"] else 1.0  # no l2 on the intercept
            self.linear[p, :len(b["beta"])] = b["beta"] / b["noise_rows"]
        self.tol = np.array([b["tol"] for b in blocks])
        self.max_iter = np.array([b["max_iter"] for b in blocks])

    def subset(self, keep):
        """The problems ``keep`` (a boolean mask) only."""
        out = object.__new__(_Problems)
        out.X, out.y, out.w = self.X[keep], self.y[keep], self.w[keep]
        out.quad, out.linear = self.quad[keep], self.linear[keep]
        out.tol, out.max_iter = self.tol[keep], self.max_iter[keep]
        out.P, out.D = len(out.X), self.D
        return out

    def loss_gradient(self, W, idx):
        """Per-problem objectives ``(len(idx),)`` and gradients ``(len(idx), D)`` at ``W``."""
        if len(idx) == self.P:
            X, y, w, quad, linear = self.X, self.y, self.w, self.quad, self.linear
        else:
            X, y, w = self.X[idx], self.y[idx], self.w[idx]
            quad, linear = self.quad[idx], self.linear[idx]
        raw = np.einsum("pmd,pd->pm", X, W)
        loss = np.sum((np.logaddexp(0.0, raw) - y * raw) * w, axis=1)
        grad = np.einsum("pmd,pm->pd", X, (expit(raw) - y) * w)
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
        if done.mean() >= 0.1:  # drop the finished problems from the working set
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


def _unit_blocks(X_rows, y_rows, fit, rng, model_rows=None, n_padding=0):
    """The binary problems of one fit (one, or one per class for one-vs-rest), or ``None``.

    ``X_rows`` ends with ``n_padding`` public padding rows. ``model_rows``: the rows ``N`` of
    the model this fit stands in for (padding included), or ``None`` for the fit's own rows.
    In the miniature, the noise and the ridge are that model's, and so is its empirical risk in
    expectation: the padding rows weigh ``1 / N`` each, as in the returned model, and the
    partition's mean loss stands for the rest, ``(N - n_padding) / N``. (With equal weights,
    a few padding rows would pin the intercept of a 75-row partition fit as they never do in
    the returned model.)
    """
    classes = np.unique(y_rows)
    if len(classes) < 2 or not np.isfinite(X_rows).all():
        return None, classes  # diffprivlib raises: the fit fails
    X_clipped = clip_to_norm(X_rows, fit["data_norm"])
    n, d = X_clipped.shape
    if model_rows is None:
        noise_rows = n
        row_weights = np.full(n, 1.0 / n)  # diffprivlib's mean over the fit's rows
    else:
        noise_rows = int(model_rows)
        own = n - n_padding
        row_weights = np.concatenate([np.full(own, (noise_rows - n_padding) / (noise_rows * own)),
                                      np.full(n_padding, 1.0 / noise_rows)])
    positives = classes[1:] if len(classes) == 2 else classes
    epsilon = fit["epsilon"] / len(positives)
    blocks = []
    for positive in positives:
        beta, delta = vector_perturbation(epsilon, fit["C"], fit["data_norm"],
                                          fit["fit_intercept"], noise_rows,
                                          d + int(fit["fit_intercept"]), rng)
        blocks.append({"X": X_clipped, "y": (y_rows == positive).astype(float),
                       "row_weights": row_weights, "l2": 1.0 / (fit["C"] * noise_rows),
                       "beta": beta, "delta": delta, "noise_rows": noise_rows,
                       "intercept": fit["fit_intercept"], "tol": fit["tol"],
                       "max_iter": fit["max_iter"]})
    return blocks, classes


def _is_accuracy(scorer) -> bool:
    return getattr(scorer, "scorer", None) is getattr(_scores, "_accuracy", False)


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
    if _is_accuracy(scorer) and set(score_params) <= {"sample_weight"}:
        decision = X_test @ coef.T + intercept
        if decision.shape[1] == 1:
            predicted = classes[(decision[:, 0] > 0).astype(int)]
        else:
            predicted = classes[decision.argmax(axis=1)]
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


def batched_partition_utilities(jobs, X, y, scorer, padding, error_score, score_params=None):
    """Utilities of candidates on their fit units, one array per job. PRIVATE.

    All fits of all jobs are solved together (:func:`lbfgs`).

    Parameters
    ----------
    jobs : list of (template, units, settings_of, model_rows)
        ``template``: a diffprivlib ``LogisticRegression`` from
        :func:`~._fit.candidate_template`; ``units``: ``(train, test, seed)`` of each fit --
        global row indices of its training and validation rows and the seed the one-by-one path
        would give it (``None``: secure noise); ``settings_of``: ``n_train -> instantiate()``
        keyword arguments; ``model_rows``: the rows of the returned model when the fits are
        that model in miniature (its epsilon and ``C`` from ``settings_of``), else ``None``
        (module docstring).
    padding : Padding or None
        Public rows appended to every fit.
    score_params : dict or None
        Metadata for the scorer (row-aligned arrays are restricted to each fit's validation
        rows; they never reach a fit).
    """
    error = float(error_score)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    pad_X = None if padding is None else np.asarray(padding.X, dtype=float)
    pad_y = None if padding is None else np.asarray(padding.y)
    outs = [np.full(len(units), error) for _, units, _, _ in jobs]
    generator = np.random.RandomState()
    blocks, owners = [], []
    for job, (template, units, settings_of, model_rows) in enumerate(jobs):
        fits = {}
        for u, (train, _test, seed) in enumerate(units):
            try:
                if len(train) not in fits:
                    fits[len(train)] = _fit_settings(template, settings_of(len(train)))
                X_rows, y_rows = X[train], y[train]
                if pad_X is not None:
                    X_rows = np.vstack([X_rows, pad_X])
                    y_rows = np.concatenate([y_rows, pad_y])
                unit_blocks, classes = _unit_blocks(
                    X_rows, y_rows, fits[len(train)], _noise_generator(seed, generator),
                    model_rows, 0 if pad_y is None else len(pad_y))
            except Exception:
                continue
            if unit_blocks is not None:
                owners.append((job, u, classes, len(blocks), len(unit_blocks)))
                blocks += unit_blocks
    if not blocks:
        return outs
    try:
        solution = lbfgs(_Problems(blocks))
    except Exception:
        # never expected; if it happens, one fit's failure must not fail the others (the
        # sensitivity of the aggregate rests on it): solve every fit alone
        solution = np.full((len(blocks), X.shape[1] + 1), np.nan)
        for _, _, _, first, count in owners:
            try:
                solution[first:first + count] = lbfgs(_Problems(blocks[first:first + count]))
            except Exception:
                pass  # NaN coefficients: its utility becomes error_score below
    d = X.shape[1]
    for job, u, classes, first, count in owners:
        theta = solution[first:first + count]
        test = jobs[job][1][u][1]
        try:
            params = (_check_method_params(X, params=score_params, indices=test)
                      if score_params else None)
            outs[job][u] = _utility(scorer, jobs[job][0], classes, theta[:, :d], theta[:, d],
                                    X[test], y[test], params)
        except Exception:
            outs[job][u] = error
    return outs
