"""The batched runs of DPRandomSearchCV on diffprivlib's LogisticRegression
(evaluation/_batched_runs.py).

A batched run must release what the one-by-one run releases: the same ``LogisticRegression``
instance (parameters, seed, epsilon scale), fitted to the same objective with the same noise,
so the same model up to the optimiser's tolerance; the same failures; and, through the search,
the same selection.
"""

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from diffprivlib.validation import clip_to_norm
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, PolynomialFeatures

from skdptune import DPRandomSearchCV
from skdptune.estimators import strip_nonprivate_attributes
from skdptune.evaluation import _batched_runs, _holdout
from skdptune.evaluation._batched_runs import _SharedRows, fit_runs, run_accuracies
from skdptune.evaluation._fit import (
    DeferredModel,
    PreparedTemplate,
    built,
    candidate_key,
    candidate_template,
    candidate_templates,
    fit_on_rows,
    instantiate,
)
from skdptune.evaluation._scores import AccuracyScore
from skdptune.public import make_padding


def _data(n=300, classes=2, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _templates(tol=1e-4, max_iter=100):
    base = LogisticRegression(epsilon=1.0, data_norm=1.0, tol=tol, max_iter=max_iter)
    return [candidate_template(base, params) for params in (
        {"C": 0.1, "data_norm": 0.5}, {"C": 1.0, "data_norm": 2.0}, {"C": 10.0},
        {"C": 1.0, "fit_intercept": False}, {"C": 0.01, "data_norm": 3.0})]


def _one_by_one(template, seed, X, y, train, padding, scale=0.7):
    return fit_on_rows(instantiate(template, seed=seed, epsilon_scale=scale), X, y, train, {},
                       padding=padding)


def _fitted_runs(*args):
    """:func:`fit_runs`'s models, a plain run's built from its :class:`DeferredModel`."""
    models = fit_runs(*args)
    return models if models is None else [built(model) for model in models]


def _assert_same_model(model, alone, X, atol):
    """The same model up to the optimiser: equal coefficients and intercepts. (Every objective
    has a ridge on the intercept too, so none runs away: InterceptColumnLogisticRegression.)"""
    assert model.coef_.shape == alone.coef_.shape
    assert np.isfinite(alone.intercept_).all() and np.abs(alone.intercept_).max() < 1e3
    np.testing.assert_allclose(model.coef_, alone.coef_, atol=atol)
    np.testing.assert_allclose(model.intercept_, alone.intercept_, atol=atol)


# -- the shared-rows problems: diffprivlib's objective, written out plainly ------------------
@pytest.mark.parametrize("block_rows", [None, 16, 7])  # 7: a partial last block
@pytest.mark.parametrize("pairs_bytes", [0, 2**20])  # the rows' pairs formed again, or kept
def test_shared_rows_objective_is_the_plain_one(monkeypatch, block_rows, pairs_bytes):
    """Each problem's objective, gradient and Hessian are diffprivlib's on its own clipped rows,
    in one block of rows or summed over several (``block_rows``); the Hessian (every row here)
    up to rounding."""
    monkeypatch.setattr(_batched_runs, "PAIRS_BYTES", pairs_bytes)
    if block_rows is not None:
        monkeypatch.setattr(_batched_runs, "BLOCK_BYTES", 0)
        monkeypatch.setattr(_batched_runs, "MIN_BLOCK_ROWS", block_rows)
    rng = np.random.RandomState(1)
    X, y = _data(n=80)
    X[5] = 0.0  # a zero row (clipping factor 1)
    # two problems of one setting (0.5, True) with different positive classes
    norms = np.array([0.5, 2.0, 0.5, 1.0, 2.0, 0.5])
    intercept = np.array([True, True, False, True, False, True])
    labels = np.stack([y == 1, y == 0], axis=1).astype(float)
    P, D = len(norms), X.shape[1] + 1
    label_of = np.array([0, 0, 1, 1, 0, 1])
    quad, linear = rng.uniform(0.01, 1, (P, D)), rng.normal(size=(P, D))
    clipped = {(norm, flag): np.hstack([clip_to_norm(X, norm), np.full((80, 1), float(flag))])
               for norm, flag in set(zip(norms.tolist(), intercept.tolist(), strict=True))}
    W = rng.normal(size=(P, D)) * 3
    # the rows clipped per norm (few norms) and the clipping as a factor per row (many)
    row_norms = np.linalg.norm(X, axis=1)
    units = X / np.where(row_norms > 0, row_norms, 1.0)[:, None]
    problems, by_factor = (
        _SharedRows(units, row_norms, kept, norms, intercept, labels, label_of, 1.0 / 80, quad,
                    linear, np.full(P, 1e-4), np.full(P, 100, int))
        for kept in (clipped, None))
    loss, grad = problems.loss_gradient(W, np.arange(P))
    factor_loss, factor_grad = by_factor.loss_gradient(W, np.arange(P))
    np.testing.assert_allclose(factor_loss, loss, rtol=1e-12)
    np.testing.assert_allclose(factor_grad, grad, rtol=1e-10, atol=1e-12)
    # each problem's Hessian, twice (the second from the pairs kept, if they are)
    hessians = []
    for kind in (problems, by_factor):
        hessians.append(kind.hessians(W, np.arange(P)))
        np.testing.assert_array_equal(kind.hessians(W, np.arange(P)), hessians[-1])
        # where every problem starts: one pass per setting, the same values
        zero = np.zeros((P, D))
        for shared, plain in zip(kind.at_zero(), (*kind.loss_gradient(zero, np.arange(P)),
                                                  kind.hessians(zero, np.arange(P))),
                                 strict=True):
            np.testing.assert_allclose(shared, plain, rtol=1e-12, atol=1e-15)
    for p in range(P):
        design = np.hstack([clip_to_norm(X, norms[p]), np.full((80, 1), float(intercept[p]))])
        z = design @ W[p]
        t = labels[:, label_of[p]]
        plain = (np.mean(np.log1p(np.exp(z)) - t * z) + 0.5 * quad[p] @ W[p] ** 2
                 + linear[p] @ W[p])
        plain_grad = design.T @ (1 / (1 + np.exp(-z)) - t) / 80 + quad[p] * W[p] + linear[p]
        assert loss[p] == pytest.approx(plain, rel=1e-12)
        np.testing.assert_allclose(grad[p], plain_grad, rtol=1e-10, atol=1e-12)
        curvature = 1 / (1 + np.exp(-z)) / (1 + np.exp(z))
        plain_hessian = design.T @ (design * curvature[:, None]) / 80 + np.diag(quad[p])
        for hessian in hessians:
            np.testing.assert_allclose(hessian[p], plain_hessian, rtol=1e-10, atol=1e-13)
    # a subset evaluates the same problems (the solver drops finished ones; the matrix
    # products may round differently with fewer columns)
    keep = np.array([True, False, True, True, False, True])
    sub_loss, sub_grad = problems.subset(keep).loss_gradient(W[keep], np.arange(keep.sum()))
    np.testing.assert_allclose(sub_loss, loss[keep], rtol=1e-13)
    np.testing.assert_allclose(sub_grad, grad[keep], rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("clipped", [True, False])
@pytest.mark.parametrize("rows", [None, 12])
def test_hessians_are_summed_over_evenly_spaced_rows(monkeypatch, clipped, rows):
    """Beyond twice HESSIAN_ROWS rows (or the rows asked for) a Hessian is summed over every
    k-th row only, scaled to all rows; the objective and the gradient stay sums over every
    row."""
    monkeypatch.setattr(_batched_runs, "BLOCK_BYTES", 0)
    monkeypatch.setattr(_batched_runs, "MIN_BLOCK_ROWS", 16)
    monkeypatch.setattr(_batched_runs, "HESSIAN_ROWS", 32)  # every 2nd of 80 rows
    rng = np.random.RandomState(2)
    X, y = _data(n=80)
    labels = (y == 1).astype(float)[:, None]
    P, D = 3, X.shape[1] + 1
    quad, linear = rng.uniform(0.01, 1, (P, D)), rng.normal(size=(P, D))
    W = rng.normal(size=(P, D))
    row_norms = np.linalg.norm(X, axis=1)
    design = np.hstack([clip_to_norm(X, 1.0), np.ones((80, 1))])
    problems = _SharedRows(X / row_norms[:, None], row_norms,
                           {(1.0, True): design} if clipped else None, np.ones(P),
                           np.ones(P, bool), labels, np.zeros(P, int), 1.0 / 80, quad, linear,
                           np.full(P, 1e-4), np.full(P, 100, int))
    loss, grad = problems.loss_gradient(W, np.arange(P))
    H = problems.hessians(W, np.arange(P), rows)
    sampled = np.arange(0, 80, 2 if rows is None else 6)  # 80 // 12: every 6th, 14 rows
    np.testing.assert_array_equal(_batched_runs.curvature_rows(80, rows or 32), sampled)
    for p in range(P):
        z = design[sampled] @ W[p]
        curvature = 1 / (1 + np.exp(-z)) / (1 + np.exp(z))
        plain = (design[sampled].T @ (design[sampled] * curvature[:, None]) / len(sampled)
                 + np.diag(quad[p]))
        np.testing.assert_allclose(H[p], plain, rtol=1e-10, atol=1e-13)
        z = design @ W[p]
        plain_grad = design.T @ (1 / (1 + np.exp(-z)) - labels[:, 0]) / 80 + quad[p] * W[p] \
            + linear[p]
        np.testing.assert_allclose(grad[p], plain_grad, rtol=1e-10, atol=1e-12)


def test_curvature_rows_spread_over_all_rows():
    assert _batched_runs.curvature_rows(100, 100).tolist() == list(range(100))
    assert _batched_runs.curvature_rows(199, 100).tolist() == list(range(199))
    assert _batched_runs.curvature_rows(200, 100).tolist() == list(range(0, 200, 2))
    assert _batched_runs.curvature_rows(50, 100).tolist() == list(range(50))
    assert _batched_runs.curvature_rows(10, 3).tolist() == [0, 3, 6, 9]


def test_a_problems_first_hessians_are_summed_over_fewer_rows(monkeypatch):
    """After a problem's first, second and third steps its Hessian is summed over the rows'
    early_rows (EARLY_HESSIAN_ROWS), later over HESSIAN_ROWS (the default, None); at zero
    (shared by a setting's problems) over HESSIAN_ROWS. The iterates still reach the same
    minimiser."""
    X, y = _data(n=400)
    row_norms = np.linalg.norm(X, axis=1)
    P, D = 4, X.shape[1] + 1
    rng = np.random.RandomState(5)

    def problems():
        return _SharedRows(X / row_norms[:, None], row_norms, None, np.full(P, 1.0),
                           np.ones(P, bool), (y == 1).astype(float)[:, None],
                           np.zeros(P, int), 1.0 / 400, np.full((P, D), 1e-3),
                           rng.normal(scale=0.5, size=(P, D)), np.full(P, 1e-9),
                           np.full(P, 1000, int))
    calls = []
    real = _SharedRows.hessians

    def spy(self, W, idx, rows=None):
        calls.append(rows)
        return real(self, W, idx, rows)
    monkeypatch.setattr(_SharedRows, "hessians", spy)
    monkeypatch.setattr(_SharedRows, "early_rows", (20, 40, 80))
    monkeypatch.setattr(_batched_runs, "HESSIAN_ROWS", 200)
    rng.seed(5)
    scheduled, converged = _batched_runs.newton(problems())
    assert converged.all() and len(calls) >= 6
    assert calls[:5] == [None, 20, 40, 80, None] and set(calls[5:]) == {None}
    monkeypatch.setattr(_SharedRows, "early_rows", ())
    rng.seed(5)
    full, converged = _batched_runs.newton(problems())
    assert converged.all()
    np.testing.assert_allclose(scheduled, full, atol=1e-8)


def test_runs_with_hessians_of_a_few_rows_are_diffprivlib_fits(monkeypatch):
    """Hessians from a sixth of the rows only steer the steps: converged runs are the
    one-by-one fits."""
    monkeypatch.setattr(_batched_runs, "BLOCK_BYTES", 0)
    monkeypatch.setattr(_batched_runs, "MIN_BLOCK_ROWS", 16)
    monkeypatch.setattr(_batched_runs, "HESSIAN_ROWS", 16)
    monkeypatch.setattr(_SharedRows, "early_rows", (4, 8, 8))
    X, y = _data(n=400)
    padding = make_padding(X, y, np.arange(2))
    train = np.arange(0, 400, 2)
    templates, seeds = _templates(tol=1e-10, max_iter=1000), [11, 22, 33, 44, 55]
    for template, seed, model in zip(templates, seeds, _fitted_runs(templates, seeds, X, y, train,
                                                               padding, 0.7), strict=True):
        _assert_same_model(model, _one_by_one(template, seed, X, y, train, padding), X,
                           atol=2e-3)


def test_many_clipping_norms_share_one_copy_of_the_rows(monkeypatch):
    """A continuous data_norm gives every run its own norm: beyond CLIPPED_BYTES no clipped
    copy per norm, the clipping a factor per row."""
    monkeypatch.setattr(_batched_runs, "CLIPPED_BYTES", 0)
    X, y = _data(n=400)
    padding = make_padding(X, y, np.array([0, 1]))
    base = LogisticRegression(epsilon=1.0, data_norm=1.0, tol=1e-10, max_iter=1000)
    norms = np.linspace(0.3, 3.0, 40)
    templates = [candidate_template(base, {"data_norm": float(c)}) for c in norms]
    seeds = list(range(40))
    batched = _fitted_runs(templates, seeds, X, y, np.arange(300), padding, 1.0)
    for template, seed, model in zip(templates[::8], seeds[::8], batched[::8], strict=True):
        alone = _one_by_one(template, seed, X, y, np.arange(300), padding, scale=1.0)
        _assert_same_model(model, alone, X, atol=2e-3)


@pytest.mark.parametrize("kept", [True, False])
def test_a_row_whose_norm_overflows_is_clipped_as_diffprivlib_clips_it(monkeypatch, kept):
    """A finite row of values near 1.7e308 has an infinite norm; ``clip_to_norm`` divides it by
    infinity (a zero row). Scaling the products instead would give inf x 0 = NaN in every
    run's gradient."""
    if not kept:
        monkeypatch.setattr(_batched_runs, "CLIPPED_BYTES", 0)
    X, y = _data(n=300)
    X[7] = [1.7e308, -1.7e308, 1e308, 0.5]
    padding = make_padding(X, y, np.array([0, 1]))
    templates = _templates(tol=1e-10, max_iter=1000)
    seeds = [1, 2, 3, 4, 5]
    for template, seed, model in zip(templates, seeds, _fitted_runs(templates, seeds, X, y,
                                                               np.arange(250), padding, 1.0),
                                     strict=True):
        alone = _one_by_one(template, seed, X, y, np.arange(250), padding, scale=1.0)
        assert np.isfinite(model.coef_).all()
        _assert_same_model(model, alone, X[np.arange(300) != 7], atol=2e-3)


def test_runs_ignore_numpy_error_settings():
    """Under np.seterr(all="raise") the exponentials of large margins do not switch paths."""
    X, y = _data(n=300)
    X *= 50.0  # margins in the hundreds
    padding = make_padding(X, y, np.array([0, 1]))
    templates = [candidate_template(LogisticRegression(epsilon=1.0, data_norm=80.0, C=100.0),
                                    {})]
    with np.errstate(all="raise"):
        models = _fitted_runs(templates, [3], X, y, np.arange(250), padding, 1.0)
    assert models is not None and models[0] is not None


# -- the runs: diffprivlib's fits -------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_runs_are_diffprivlib_fits_with_the_same_noise(n_classes):
    """Converged runs equal diffprivlib's fits of the same instances (same seeds)."""
    X, y = _data(n=400, classes=n_classes)
    classes = np.arange(n_classes)
    padding = make_padding(X, y, classes)
    train = np.arange(0, 400, 2)
    templates = _templates(tol=1e-10, max_iter=1000)
    seeds = [11, 22, 33, 44, 55]
    batched = _fitted_runs(templates, seeds, X, y, train, padding, 0.7)
    for template, seed, model in zip(templates, seeds, batched, strict=True):
        alone = _one_by_one(template, seed, X, y, train, padding)
        np.testing.assert_array_equal(model.classes_, alone.classes_)
        assert model.classes_.dtype == alone.classes_.dtype
        _assert_same_model(model, alone, X, atol=2e-3)
        params, alone_params = model.get_params(), alone.get_params()
        assert params.pop("accountant") is not alone_params.pop("accountant")  # throwaways
        assert params == alone_params
        assert model.accountant.spent_budget == alone.accountant.spent_budget
        # the released attributes: the same set once the non-private ones are stripped
        assert sorted(vars(strip_nonprivate_attributes(model))) == \
            sorted(vars(strip_nonprivate_attributes(alone)))
    # another seed draws other noise: the comparison above could fail
    other = _fitted_runs(templates[:1], [12], X, y, train, padding, 0.7)[0]
    assert np.abs(other.coef_ - batched[0].coef_).max() > 1e-2


def test_a_run_the_shared_solve_leaves_unconverged_is_solved_alone(monkeypatch):
    """Two iterations cannot bring a run on three classes to tol = 1e-10: the shared solve
    stops unconverged, and the run is solved again by scipy's L-BFGS-B from zero, as the
    one-by-one fit is -- where the iteration limit decides the model, the models are equal."""
    X, y = _data(n=400, classes=3)
    padding = make_padding(X, y, np.arange(3))
    train = np.arange(0, 400, 2)
    template = _templates(tol=1e-10, max_iter=2)[4]
    alone = []
    real = _batched_runs._solved_alone

    def spy(problems, q):
        alone.append(q)
        return real(problems, q)

    monkeypatch.setattr(_batched_runs, "_solved_alone", spy)
    model = _fitted_runs([template], [55], X, y, train, padding, 0.7)[0]
    reference = _one_by_one(template, 55, X, y, train, padding)
    assert alone == [0, 1, 2]  # no binary problem converged in the shared solve
    _assert_same_model(model, reference, X, atol=1e-12)
    # converged runs are not solved again: at max_iter=1000 the shared solve finishes
    alone.clear()
    converged = _fitted_runs([_templates(tol=1e-10, max_iter=1000)[4]], [55], X, y, train,
                         padding, 0.7)[0]
    assert not alone
    _assert_same_model(converged, _one_by_one(_templates(tol=1e-10, max_iter=1000)[4], 55, X,
                                              y, train, padding), X, atol=1e-6)


def test_runs_at_the_default_tolerance_predict_as_diffprivlib_fits():
    X, y = _data(n=2000, d=6, seed=3)
    padding = make_padding(X, y, np.array([0, 1]))
    train = np.arange(1500)
    templates = _templates()
    seeds = list(range(100, 100 + len(templates)))
    for template, seed, model in zip(templates, seeds, _fitted_runs(templates, seeds, X, y, train,
                                                               padding, 1.0), strict=True):
        alone = _one_by_one(template, seed, X, y, train, padding, scale=1.0)
        assert np.mean(model.predict(X) == alone.predict(X)) >= 0.99
        _assert_same_model(model, alone, X, atol=0.05)


def test_unseeded_runs_draw_fresh_noise():
    X, y = _data()
    padding = make_padding(X, y, np.array([0, 1]))
    templates = _templates()[:1] * 2
    a, b = _fitted_runs(templates, [None, None], X, y, np.arange(200), padding, 1.0)
    assert a.random_state is None and b.random_state is None
    assert np.abs(a.coef_ - b.coef_).max() > 1e-3


def test_chunks_give_the_same_runs(monkeypatch):
    X, y = _data(n=300, classes=3)
    padding = make_padding(X, y, np.arange(3))
    templates, seeds = _templates(), [1, 2, 3, 4, 5]
    whole = _fitted_runs(templates, seeds, X, y, np.arange(250), padding, 1.0)
    monkeypatch.setattr(_batched_runs, "CHUNK_BYTES", 8 * 260 * 2)  # two problems a chunk
    chunked = _fitted_runs(templates, seeds, X, y, np.arange(250), padding, 1.0)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)


def test_runs_of_one_candidate_are_validated_once(monkeypatch):
    """diffprivlib's fit validates the parameters first; runs of one key differ in their seed
    only, so one validation per key -- and an invalid candidate still fails its runs."""
    X, y = _data()
    padding = make_padding(X, y, np.array([0, 1]))
    good, bad = _templates()[0], candidate_template(LogisticRegression(), {"C": -1.0})
    calls = []
    real = LogisticRegression._validate_params

    def counted(self):
        calls.append(self.C)
        return real(self)

    monkeypatch.setattr(LogisticRegression, "_validate_params", counted)
    keys = [("a",), ("a",), ("b",), ("a",), None, None]
    models = _fitted_runs([good, good, _templates()[1], good, good, good], [1, 2, 3, 4, 5, 6], X, y,
                      np.arange(200), padding, 1.0, keys)
    assert all(m is not None for m in models)
    assert len(calls) == 4  # key "a", key "b", and each run without a key
    # the premise: runs of one key differ in their seed (and throwaway accountant) only
    runs = _batched_runs._instantiated(_batched_runs._prepared([good] * 3, 0.7, [("a",)] * 3),
                                       [1, 2, 3])
    params = [{k: v for k, v in run.get_params().items()
               if k not in ("random_state", "accountant")} for run in runs]
    assert params[0] == params[1] == params[2]
    assert len({run.random_state for run in runs}) == 3
    # an invalid candidate (a later key) makes the batched path give way to the one-by-one
    # runs, which raise as diffprivlib raises
    assert _fitted_runs([good, good, bad], [1, 2, 3], X, y, np.arange(200), padding, 1.0,
                    [("a",), ("a",), ("c",)]) is None


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_runs_accuracies_are_their_models_own(n_classes):
    X, y = _data(n=400, classes=n_classes, seed=4)
    padding = make_padding(X, y, np.arange(n_classes))
    templates = _templates()  # with and without an intercept
    models = _fitted_runs(templates, [1, 2, 3, 4, 5], X, y, np.arange(300), padding, 1.0)
    assert any(np.abs(m.intercept_).max() > 0.05 for m in models)
    models[2] = None  # a failed run stays failed
    X_val, y_val = X[300:], y[300:]
    shared = run_accuracies(models, X_val, y_val)
    score = AccuracyScore()
    for model, utilities in zip(models, shared, strict=True):
        if model is None:
            assert utilities is None
            continue
        np.testing.assert_array_equal(utilities, score(model, X_val, y_val))
    # integer rows: predict's float64 conversion
    ints = np.rint(X_val * 3).astype(int)
    for model, utilities in zip(models, run_accuracies(models, ints, y_val), strict=True):
        if model is not None:
            np.testing.assert_array_equal(utilities, score(model, ints, y_val))
    # a label no model predicts is wrong for every run
    unseen = y_val.copy()
    unseen[::7] = n_classes + 5
    for model, utilities in zip(models, run_accuracies(models, X_val, unseen), strict=True):
        if model is not None:
            np.testing.assert_array_equal(utilities, score(model, X_val, unseen))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_the_runs_accuracies_give_way_where_predict_does_more():
    X, y = _data(n=400, seed=4)
    padding = make_padding(X, y, np.array([0, 1]))
    models = _fitted_runs(_templates()[:2], [1, 2], X, y, np.arange(300), padding, 1.0)
    X_val, y_val = X[300:].copy(), y[300:]
    assert run_accuracies(models, X_val, y_val) is not None
    X_val[0, 0] = np.nan  # predict raises: the run is scored (and fails) on its own
    assert run_accuracies(models, X_val, y_val) is None
    assert run_accuracies(models, X[300:, :3], y_val) is None  # too few features
    assert run_accuracies(models, X[300:], y_val[:, None]) is None  # not 1-D labels
    assert run_accuracies(models, np.asmatrix(X[300:]), y_val) is None  # matrix semantics
    assert run_accuracies([None, None], X[300:], y_val) is None
    pipe = Pipeline([("lr", models[0])])
    assert run_accuracies([pipe, models[1]], X[300:], y_val) is None
    # long doubles: predict keeps their precision (rows that are 0 once cast to float64)
    tiny = X[300:].astype(np.longdouble) * np.longdouble("1e-4000")
    if np.finfo(np.longdouble).bits > 64 and (tiny != 0).all():
        assert run_accuracies(models, tiny, y_val) is None
    for dtype in (np.float32, np.float16, np.int64, bool):  # predict computes in float64
        rows = X[300:].astype(dtype)
        assert run_accuracies(models, rows, y_val) is not None


def test_the_search_releases_the_scores_of_run_by_run_accuracies(monkeypatch):
    """End to end: the shared product gives the noisy scores, the selection and the model of
    scoring every run with ``AccuracyScore`` on its own; other scores never take it."""
    X, y = _data(n=600, classes=3, seed=2)
    used = []
    real = _holdout.run_accuracies

    def spy(*args):
        out = real(*args)
        used.append(out is not None)
        return out

    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "run_accuracies", spy)
        shared = _search(n_jobs=1).fit(X, y)
        assert used and all(used)
        used.clear()
        _search(n_jobs=1, scoring="log_loss").fit(X, y)
        assert not used  # only the accuracy score is computed from the product
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "run_accuracies", lambda *args: None)
        alone = _search(n_jobs=1).fit(X, y)
    assert shared.best_params_ == alone.best_params_
    assert shared.best_score_ == alone.best_score_
    np.testing.assert_array_equal(shared.best_estimator_.coef_, alone.best_estimator_.coef_)


def _snapshot(template):
    """A template's parameters, its throwaway accountant as what it has spent."""
    return {name: value.total() if isinstance(value, BudgetAccountant) else value
            for name, value in template.get_params().items()}


def test_equal_candidates_share_one_template_that_no_fit_modifies(monkeypatch):
    base = LogisticRegression(epsilon=1.0, data_norm=1.0)
    candidates = [{"C": 1.0}, {"C": 0.1}, {"C": 1.0}, {"C": 1}, {"C": -0.0}, {"C": 0.0}]
    templates = candidate_templates(base, candidates)
    assert templates[0] is templates[2]
    assert len({id(t) for t in templates}) == 5  # 1 and 1.0, 0.0 and -0.0 are told apart
    for template, params in zip(templates, candidates, strict=True):
        assert _snapshot(template) == _snapshot(candidate_template(base, params))
    # through a search, batched and one by one: the templates stay as they were built
    X, y = _data(n=400)
    for batched in (True, False):
        made = []
        real = _holdout.candidate_templates

        def kept(*args, made=made, real=real):
            out = real(*args)
            made.extend((t, _snapshot(t)) for t in out)
            return out

        with monkeypatch.context() as mp:
            mp.setattr(_holdout, "candidate_templates", kept)
            if not batched:
                mp.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
            _search(n_jobs=1).fit(X, y)
        assert len(made) > len({id(t) for t, _ in made})  # runs shared templates
        for template, snapshot in made:
            assert not hasattr(template, "coef_")
            assert _snapshot(template) == snapshot


# -- failures ---------------------------------------------------------------------------------
def test_runs_fail_where_diffprivlib_fits_fail():
    X, y = _data()
    y_one = np.zeros_like(y)
    templates = _templates()[:2]
    # one class in the train part and no padding: diffprivlib raises, every run fails
    with pytest.raises(ValueError):
        _one_by_one(templates[0], 1, X, y_one, np.arange(100), None)
    assert _fitted_runs(templates, [1, 2], X, y_one, np.arange(100), None, 1.0) == [None, None]
    X_nan = X.copy()
    X_nan[3, 0] = np.nan
    assert _fitted_runs(templates, [1, 2], X_nan, y, np.arange(100), None, 1.0) == [None, None]
    # the padding makes the one-class train part fittable, as one by one
    padding = make_padding(X, y_one, np.array([0, 1]))
    assert all(m is not None for m in _fitted_runs(templates, [1, 2], X, y_one, np.arange(100),
                                               padding, 1.0))


def test_an_unexpected_error_falls_back_to_the_one_by_one_runs(monkeypatch):
    X, y = _data(n=400)
    expected = _search(n_jobs=1).fit(X, y)

    def broken(*args, **kwargs):
        raise RuntimeError("solver")

    monkeypatch.setattr(_batched_runs, "newton", broken)
    assert _fitted_runs(_templates()[:1], [1], X, y, np.arange(100), None, 1.0) is None
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
        one_by_one = _search(n_jobs=1).fit(X, y)
    fallback = _search(n_jobs=1).fit(X, y)
    assert fallback.best_params_ == one_by_one.best_params_
    assert fallback.best_score_ == one_by_one.best_score_
    np.testing.assert_array_equal(fallback.best_estimator_.coef_,
                                  one_by_one.best_estimator_.coef_)
    assert expected.best_params_ == one_by_one.best_params_


# -- through the search -----------------------------------------------------------------------
def _search(**params):
    space = {"C": [0.01, 0.1, 1.0, 10.0], "data_norm": [0.5, 1.0, 2.0],
             "fit_intercept": [True, False]}
    return DPRandomSearchCV(LogisticRegression(epsilon=1.0, data_norm=1.0), space, n_iter=40,
                            epsilon=2.0, classes=[0, 1, 2], random_state=3,
                            accountant=BudgetAccountant(), **params)


def _spy_batched_runs(mp):
    """The number of runs of every call of the batched path (``mp``: a monkeypatch)."""
    calls = []
    real = _holdout._noisy_runs_batched

    def spy(templates, *args):
        calls.append(len(templates))
        return real(templates, *args)

    mp.setattr(_holdout, "_noisy_runs_batched", spy)
    return calls


def _fits_on_both_paths(monkeypatch, make_search):
    """``make_search()`` fitted batched (at n_jobs 1 and 2; the batched path checked to run)
    and one by one, on the same data: the same selection, the same models up to the
    optimiser, the same report. Returns the data and the three searches."""
    X, y = _data(n=900, classes=3, seed=5)
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "RUNS_PER_GROUP", 5)  # several groups, for the two workers
        calls = _spy_batched_runs(mp)
        batched = make_search(n_jobs=1).fit(X, y)
        two = make_search(n_jobs=2).fit(X, y)
    # several groups (counted at n_jobs=1: at n_jobs=2 they run in the workers)
    assert calls and min(calls) >= 1 and len(calls) >= 2
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
        alone = make_search(n_jobs=1).fit(X, y)
    assert batched.best_params_ == alone.best_params_ == two.best_params_
    # the validation scores are the exact ones of nearly identical models, noised alike
    assert batched.best_score_ == pytest.approx(alone.best_score_, abs=2 / 180)
    assert np.mean(batched.predict(X) == alone.predict(X)) >= 0.99
    assert batched.privacy_spent_ == alone.privacy_spent_
    return X, batched, two, alone


def test_search_selects_as_with_one_by_one_runs(monkeypatch):
    _, batched, two, _ = _fits_on_both_paths(monkeypatch, _search)
    np.testing.assert_array_equal(two.best_estimator_.coef_, batched.best_estimator_.coef_)
    assert not hasattr(batched.best_estimator_, "n_iter_")


def test_search_uses_the_batched_runs_for_a_plain_logistic_regression(monkeypatch):
    calls = _spy_batched_runs(monkeypatch)
    X, y = _data(n=600, classes=3)
    _search(n_jobs=1).fit(X, y)
    # the K runs in one group per 500 expected runs (n_iter=40: one), whatever K is (480
    # train rows: no group exceeds a chunk)
    assert calls and min(calls) >= 1
    assert len(calls) == 1
    calls.clear()
    _search(n_jobs=1, error_score="raise").fit(X, y)  # debugging: one by one
    assert calls == []


def test_a_search_cuts_its_runs_by_its_expected_count(monkeypatch):
    """Through the search: the groups follow E[K] (n_iter=40 with 10 runs a group: four),
    not the realised K -- a K below 40 would otherwise get fewer."""
    X, y = _data(n=300)
    monkeypatch.setattr(_holdout, "RUNS_PER_GROUP", 10)
    seen = []
    for seed in (*range(6), 22):  # seed 22 draws K = 3
        calls = []
        with monkeypatch.context() as mp:
            calls = _spy_batched_runs(mp)
            _search(n_jobs=1).set_params(random_state=seed).fit(X, y)
        seen.append(sum(calls))
        assert len(calls) == 4  # empty groups included: the task count does not tell K
    assert any(4 <= k < 40 for k in seen)  # the case where the realised K would cut fewer
    assert any(k < 4 for k in seen)  # fewer runs than groups: still four tasks


def test_runs_are_grouped_by_their_expected_count_never_by_n_jobs():
    groups = _holdout.batched_groups
    # an even count above one (three would leave one of two workers idle a third of the time)
    assert [groups(k, 3000) for k in (1, 50, 999, 1000, 1499, 1500, 1999, 2000, 5000)] == [
        1, 1, 1, 2, 2, 4, 4, 4, 4]
    # more groups when one would exceed a chunk of CHUNK_BYTES (rows x runs)
    rows = _batched_runs.CHUNK_BYTES // (8 * 100)  # a chunk holds 100 runs
    assert groups(50, rows) == 1 and groups(1000, rows) == 10 and groups(500, rows) == 6
    # a search's groups follow its public expected number of runs, not the realised K
    assert [groups(k, 3000, 2000) for k in (150, 399, 2000, 2600)] == [4, 4, 4, 4]
    assert [groups(k, 3000, 1000) for k in (150, 1000, 1300)] == [2, 2, 2]
    assert [groups(k, 3000, 50) for k in (1, 150, 1300)] == [1, 1, 1]
    assert groups(3, 3000, 2000) == 4  # with it, empty groups rather than a count that tells K
    # large data: as many groups as the *expected* runs fill chunks, whatever K is (the count
    # of joblib tasks must not tell K); a larger K makes larger groups, which fit_runs and
    # run_accuracies cut into chunks themselves
    assert [groups(k, rows, 1000) for k in (150, 1000, 5000)] == [10, 10, 10]
    assert groups(1000, rows, 50) == 1 and groups(7, rows, 1000) == 10


def test_runs_are_batched_only_where_the_models_match():
    """Labels that are not a numpy array (the released classes_'s dtype follows the one-by-one
    fit's conversion; the evaluator converts plain ones first) and a loose tol (both
    optimisers stop early, at visibly different models) go one by one."""
    pd = pytest.importorskip("pandas")
    X, y = _data()
    templates = _templates()
    assert _holdout._batchable(templates, X, y, {}, 0.0)
    assert not _holdout._batchable(templates, X, pd.Series(y, dtype="Int64"), {}, 0.0)
    loose = [candidate_template(LogisticRegression(epsilon=1.0, data_norm=1.0, tol=1e-2), {})]
    assert not _holdout._batchable(loose, X, y, {}, 0.0)
    assert not _holdout._batchable(templates, X, y, {}, "raise")


def test_plain_labels_are_converted_as_diffprivlib_converts_them(monkeypatch):
    """A list or a pandas Series of a numpy dtype becomes the array diffprivlib's fit makes of
    it, so such labels take the batched path -- with the models and classes_ of numpy labels;
    a pandas extension dtype stays as it is (one by one)."""
    pd = pytest.importorskip("pandas")
    X, y = _data(n=600, classes=3)
    names = np.array(["low", "mid", "top"])[y]
    assert _holdout.labels_as_array(list(y)).dtype == y.dtype
    assert _holdout.labels_as_array(pd.Series(names, dtype=object)).dtype == object
    for extension in (pd.Series(y, dtype="Int64"), pd.Series(names, dtype="string")):
        assert _holdout.labels_as_array(extension) is extension
    calls = _spy_batched_runs(monkeypatch)
    for labels in (list(y), pd.Series(y, index=np.arange(600) + 7)):
        reference = _search().fit(X, np.asarray(labels))
        calls.clear()
        fitted = _search().fit(X, labels)
        assert calls  # batched
        assert fitted.best_params_ == reference.best_params_
        np.testing.assert_array_equal(fitted.best_estimator_.coef_,
                                      reference.best_estimator_.coef_)
        assert fitted.classes_.dtype == reference.classes_.dtype
    # an object column of words stays one when its labels become the declared classes
    # (a pandas string column would not batch)
    calls.clear()
    words = _search().set_params(classes=["low", "mid", "top"])
    words.fit(X, pd.Series(names, dtype=object))
    assert calls


def test_numeric_frames_are_read_as_diffprivlib_reads_them():
    """numeric_frame: the float array and feature names of a frame of numpy numeric columns;
    extension dtypes, non-numeric columns and mixed column names are left to diffprivlib."""
    pd = pytest.importorskip("pandas")
    from skdptune.evaluation._batched import numeric_frame

    X, _ = _data(n=20, d=3)
    frame = pd.DataFrame({"a": X[:, 0], "b": (X[:, 1] > 0), "c": (10 * X[:, 2]).astype(int)})
    rows, names = numeric_frame(frame)
    np.testing.assert_array_equal(rows, np.asarray(frame, dtype=float))
    assert rows.dtype == np.float64 and list(names) == ["a", "b", "c"]
    rows, names = numeric_frame(pd.DataFrame(X))  # integer column names: none recorded
    np.testing.assert_array_equal(rows, X)
    assert names is None
    for other in (frame.astype({"c": "Int64"}), frame.astype({"c": "category"}),
                  frame.assign(c=frame["c"].astype(str)), frame.rename(columns={"c": 3}),
                  X, X.tolist()):
        assert numeric_frame(other) is None


@pytest.mark.parametrize("columns", [["f0", "f1", "f2", "f3"], None])
def test_a_plain_model_batches_the_runs_of_a_numeric_frame(monkeypatch, columns):
    """A numeric DataFrame goes through the batched runs as the float array diffprivlib's fit
    makes of it: the models of the same search on that array, bit for bit, with the
    feature_names_in_ the fit on the frame records -- the one-by-one runs' models (the same
    attributes, the same selection)."""
    pd = pytest.importorskip("pandas")
    X, y = _data(n=900, classes=3, seed=5)
    frame = pd.DataFrame(X, columns=columns)
    calls = _spy_batched_runs(monkeypatch)
    on_frame = _search().fit(frame, y)
    assert calls  # batched
    on_array = _search().fit(X, y)
    assert on_frame.best_params_ == on_array.best_params_
    np.testing.assert_array_equal(on_frame.best_estimator_.coef_,
                                  on_array.best_estimator_.coef_)
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
        alone = _search().fit(frame, y)
    model, reference = on_frame.best_estimator_, alone.best_estimator_
    assert on_frame.best_params_ == alone.best_params_
    assert sorted(vars(model)) == sorted(vars(reference))
    if columns is None:
        assert not hasattr(model, "feature_names_in_")
    else:
        np.testing.assert_array_equal(model.feature_names_in_, reference.feature_names_in_)
        assert model.feature_names_in_.dtype == reference.feature_names_in_.dtype
    assert np.mean(on_frame.predict(frame) == alone.predict(frame)) >= 0.99


def test_a_pipeline_gets_the_numeric_frame_itself(monkeypatch):
    """A pipeline's runs on a numeric DataFrame get the frame (its steps may select columns by
    name), batched; the frame is read as floats for a plain model only."""
    pd = pytest.importorskip("pandas")
    X, y = _data(n=600, classes=2, d=3, seed=2)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    pipeline = Pipeline([("columns", ColumnTransformer([("keep", "passthrough", ["a", "b"])])),
                         ("model", LogisticRegression(epsilon=1.0, data_norm=1.5))])
    calls = _spy_batched_runs(monkeypatch)
    search = DPRandomSearchCV(pipeline, {"model__C": [0.1, 1.0, 10.0]}, n_iter=20, epsilon=2.0,
                              classes=[0, 1], random_state=0, accountant=BudgetAccountant())
    search.fit(frame, y)
    assert calls  # batched
    np.testing.assert_array_equal(search.best_estimator_[0].feature_names_in_, ["a", "b", "c"])
    assert search.best_estimator_[-1].coef_.shape == (1, 2)


# -- pipelines: data-independent steps before the model ----------------------------------------
CLIP = {"a_min": -0.8, "a_max": 0.8}


def _pipeline_templates(tol=1e-10, max_iter=1000):
    pipeline = Pipeline([("scale", FunctionTransformer(np.clip, kw_args=CLIP)),
                         ("poly", PolynomialFeatures(2, include_bias=False)),
                         ("model", LogisticRegression(epsilon=1.0, data_norm=1.0, tol=tol,
                                                      max_iter=max_iter))])
    return [candidate_template(pipeline, params) for params in (
        {"model__C": 0.1, "model__data_norm": 0.5}, {"model__C": 1.0, "poly__degree": 1},
        {"model__C": 10.0}, {"model__C": 1.0, "poly__degree": 1},
        {"model__fit_intercept": False, "scale__kw_args": {"a_min": -0.5, "a_max": 0.5}})]


def _assert_same_pipeline(model, alone, X):
    assert type(model) is Pipeline and model.get_params().keys() == alone.get_params().keys()
    for (name, step), (_, step_alone) in zip(model.steps[:-1], alone.steps[:-1], strict=True):
        assert sorted(vars(step)) == sorted(vars(step_alone)), name  # fitted as one by one
        np.testing.assert_array_equal(step.transform(X), step_alone.transform(X))
    params, alone_params = model[-1].get_params(), alone[-1].get_params()
    assert params.pop("accountant") is not alone_params.pop("accountant")
    assert params == alone_params  # the same seed, epsilon scale and candidate
    _assert_same_model(model[-1], alone[-1], model[:-1].transform(X), atol=2e-3)
    assert sorted(vars(strip_nonprivate_attributes(model[-1]))) == \
        sorted(vars(strip_nonprivate_attributes(alone[-1])))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_pipeline_runs_are_the_pipelines_fitted_one_by_one(n_classes):
    """Each run releases its own pipeline: the steps before the model fitted on the train
    rows plus the padding (shared between the runs whose candidates set them alike, copied
    into each), the model fitted on the transformed rows with the run's own noise."""
    X, y = _data(n=400, classes=n_classes)
    padding = make_padding(X, y, np.arange(n_classes))
    train = np.arange(0, 400, 2)
    templates = _pipeline_templates()
    seeds = [11, 22, 33, 44, 55]
    keys = [candidate_key(p) for p in (
        {"model__C": 0.1, "model__data_norm": 0.5}, {"model__C": 1.0, "poly__degree": 1},
        {"model__C": 10.0}, {"model__C": 1.0, "poly__degree": 1}, {})]
    keys[-1] = None  # an unhashable candidate (a dict value): its own steps
    batched = _fitted_runs(templates, seeds, X, y, train, padding, 0.7, keys)
    for template, seed, model in zip(templates, seeds, batched, strict=True):
        _assert_same_pipeline(model, _one_by_one(template, seed, X, y, train, padding), X)
    # runs 1 and 3: the same candidate and steps, other noise; the steps are copies
    assert batched[1][0] is not batched[3][0]
    assert np.abs(batched[1][-1].coef_ - batched[3][-1].coef_).max() > 1e-3


def test_pipeline_runs_take_a_data_frame_through_a_column_transformer():
    pd = pytest.importorskip("pandas")
    X, y = _data(n=300)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1],
                          "colour": np.where(X[:, 2] > 0, "red", "blue")})
    padding = make_padding(frame, y, np.array([0, 1]))

    def pipeline(sparse):
        columns = ColumnTransformer(
            [("onehot", OneHotEncoder(categories=[["blue", "red"]], handle_unknown="ignore",
                                      sparse_output=sparse), ["colour"])],
            remainder="passthrough", sparse_threshold=1.0 if sparse else 0.0)
        return candidate_template(Pipeline([
            ("columns", columns),
            ("model", LogisticRegression(epsilon=1.0, data_norm=2.0, tol=1e-10,
                                         max_iter=1000))]), {})

    dense = pipeline(sparse=False)
    (model,) = _fitted_runs([dense], [7], frame, y, np.arange(200), padding, 1.0)
    alone = _one_by_one(dense, 7, frame, y, np.arange(200), padding, scale=1.0)
    _assert_same_pipeline(model, alone, frame)
    # a sparse-enabled ColumnTransformer is made dense for the fits (its threshold would
    # choose the format from the data): batched as well, the same models
    sparse = pipeline(sparse=True)
    assert sparse.named_steps["columns"].sparse_threshold == 0
    (model,) = _fitted_runs([sparse], [7], frame, y, np.arange(200), padding, 1.0)
    _assert_same_pipeline(model, _one_by_one(sparse, 7, frame, y, np.arange(200), padding,
                                             scale=1.0), frame)


def test_pipeline_runs_fail_where_the_pipelines_fail_one_by_one():
    X, y = _data()
    padding = make_padding(X, y, np.array([0, 1]))
    template = _pipeline_templates()[0]
    # rows the steps make non-finite: every run fails, as one by one
    log = candidate_template(template, {"scale": FunctionTransformer(np.log),  # NaN below 0
                                        "poly": "passthrough"})
    with pytest.raises(ValueError), np.errstate(invalid="ignore", divide="ignore"):
        _one_by_one(log, 1, X, y, np.arange(100), padding)
    assert _fitted_runs([log] * 2, [1, 2], X, y, np.arange(100), padding, 1.0) == [None] * 2
    # a step that raises: the one-by-one runs decide (they raise too)
    def broken(Z):
        raise RuntimeError("transform")

    raising = candidate_template(template, {"scale": FunctionTransformer(broken)})
    assert _fitted_runs([raising], [1], X, y, np.arange(100), padding, 1.0) is None


def test_only_pipelines_of_data_independent_steps_are_batched():
    X, y = _data()
    model = LogisticRegression(epsilon=1.0, data_norm=1.0)
    free = Pipeline([("scale", FunctionTransformer(np.negative)), ("model", model)])
    assert _holdout._batchable([candidate_template(free, {})], X, y, {}, 0.0)
    assert _holdout._batchable([candidate_template(free, {})], X.tolist(), y, {}, 0.0)
    private_step = Pipeline([("scale", StandardScaler(bounds=(-1, 1), epsilon=0.5)),
                             ("scale_again", StandardScaler(bounds=(-1, 1), epsilon=0.5)),
                             ("model", model)])  # one DP scaler is batched: test_batched_scaler
    other_model = Pipeline([("scale", FunctionTransformer(np.negative)),
                            ("model", GaussianNB(bounds=(-1, 1)))])
    loose = Pipeline([("model", LogisticRegression(epsilon=1.0, data_norm=1.0, tol=1e-2))])
    for pipeline in (private_step, other_model, loose):
        assert not _holdout._batchable([candidate_template(pipeline, {})], X, y, {}, 0.0)


def _pipeline_search(**params):
    pipeline = Pipeline([("scale", FunctionTransformer(np.clip, kw_args=CLIP)),
                         ("poly", PolynomialFeatures(2, include_bias=False)),
                         ("model", LogisticRegression(epsilon=1.0, data_norm=1.0))])
    space = {"model__C": [0.01, 0.1, 1.0, 10.0], "model__data_norm": [0.5, 1.0, 2.0],
             "poly__degree": [1, 2]}
    return DPRandomSearchCV(pipeline, space, n_iter=40, epsilon=2.0, classes=[0, 1, 2],
                            random_state=3, accountant=BudgetAccountant(), **params)


def test_pipeline_search_selects_as_with_one_by_one_runs(monkeypatch):
    _, batched, two, _ = _fits_on_both_paths(monkeypatch, _pipeline_search)
    assert type(batched.best_estimator_) is Pipeline
    np.testing.assert_array_equal(two.best_estimator_[-1].coef_,
                                  batched.best_estimator_[-1].coef_)
    assert not hasattr(batched.best_estimator_[-1], "n_iter_")


def _drop_far_rows(Z):
    return Z[(np.abs(Z) <= 0.9).all(axis=1)]


def _double_in_place(Z):
    Z *= 2.0
    return Z


class _OwnFit(Pipeline):
    def fit(self, X, y=None, **params):
        return super().fit(np.asarray(X) * 0.5, y, **params)


def test_pipeline_corner_cases_of_the_batched_runs(monkeypatch):
    """A step that drops rows (diffprivlib refuses the misaligned labels one by one: the
    batched rows must not shift them), a step that doubles its input in place (every run
    and every setting of the steps gets its own rows), a subclass with its own fit, candidate
    values that compare equal but set different steps, and sklearn's assume_finite."""
    from sklearn import config_context

    X, y = _data()
    padding = make_padding(X, y, np.array([0, 1]))
    model = LogisticRegression(epsilon=1.0, data_norm=1.0)
    drop = candidate_template(Pipeline([("drop", FunctionTransformer(_drop_far_rows)),
                                        ("model", model)]), {})
    with pytest.raises(ValueError):
        _one_by_one(drop, 1, X, y, np.arange(200), padding)
    # every run fails, as one by one (not a fall back to the one-by-one path, which the rows
    # would then decide)
    assert _fitted_runs([drop], [1], X, y, np.arange(200), padding, 1.0) == [None]
    # in place: the second setting's rows are not the first's output
    base = Pipeline([("double", FunctionTransformer(_double_in_place)),
                     ("clip", FunctionTransformer(np.clip, kw_args=CLIP)), ("model", model)])
    params = [{"clip__kw_args": {"a_min": -0.5, "a_max": 0.5}}, {}]
    templates = [candidate_template(base, p) for p in params]
    keys = [candidate_key(p) for p in params]
    batched = _fitted_runs(templates, [1, 2], X, y, np.arange(200), padding, 1.0, keys)
    for template, seed, released in zip(templates, [1, 2], batched, strict=True):
        alone = _one_by_one(template, seed, X, y, np.arange(200), padding, scale=1.0)
        np.testing.assert_allclose(released[-1].coef_, alone[-1].coef_, atol=2e-3)
    search = DPRandomSearchCV(base, {"model__C": [0.1, 1.0]}, n_iter=6, epsilon=2.0,
                              classes=[0, 1], random_state=0).fit(X, y)
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
        alone = DPRandomSearchCV(base, {"model__C": [0.1, 1.0]}, n_iter=6, epsilon=2.0,
                                 classes=[0, 1], random_state=0).fit(X, y)
    assert search.best_score_ == pytest.approx(alone.best_score_, abs=2 / 60)
    # a subclass of Pipeline may fit otherwise: one by one
    own = candidate_template(_OwnFit([("clip", FunctionTransformer(np.clip, kw_args=CLIP)),
                                      ("model", model)]), {})
    assert not _holdout._batchable([own], X, y, {}, 0.0)
    # equal-comparing values, different steps
    assert candidate_key({"a": 0.0}) != candidate_key({"a": -0.0})
    assert candidate_key({"a": (1, 2)}) != candidate_key({"a": (True, 2)})
    assert candidate_key({"a": {"b": 1}}) == candidate_key({"a": {"b": 1}})
    assert candidate_key({"a": lambda z: z}) is None
    with config_context(assume_finite=True):
        assert not _holdout._batchable(_templates()[:1], X, y, {}, 0.0)


def _sparse_if_flagged(Z):
    """A type that depends on the rows: sparse as soon as one row sets the last column."""
    import scipy.sparse as sp

    Z = np.asarray(Z, dtype=float)
    return sp.csr_matrix(Z) if Z[:, -1].any() else Z


def test_whether_the_runs_are_batched_does_not_follow_the_rows():
    """The batched and the one-by-one fits approximate the same minimiser but differ in their
    last decisions, so the path must not be chosen from the private rows (as found in the grid
    search: docs/grid_search.md, "Partition fits that mimic the returned model"): it is chosen
    on the public padding rows, and rows that a step returns in another format are read as
    diffprivlib's fit reads them."""
    import scipy.sparse as sp

    X, y = _data()
    X = np.hstack([X, np.zeros((len(X), 1))])
    flagged = X.copy()
    flagged[5, -1] = 1.0  # one record of the train rows
    model = LogisticRegression(epsilon=1.0, data_norm=1.0)
    template = candidate_template(
        Pipeline([("flag", FunctionTransformer(_sparse_if_flagged)), ("model", model)]), {})
    padding = make_padding(X, y, np.array([0, 1]))
    train = np.arange(200)
    assert _fitted_runs([template], [1], X, y, train, padding, 1.0) is not None
    # batched on both neighbours: sparse rows fail the run, as diffprivlib's fit raises
    assert _fitted_runs([template], [1], flagged, y, train, padding, 1.0) == [None]
    with pytest.raises(TypeError, match="numpy array"):
        _one_by_one(template, 1, flagged, y, train, padding, scale=1.0)
    # steps that give the padding rows sparse output: one by one, on every dataset
    always = candidate_template(
        Pipeline([("sparse", FunctionTransformer(sp.csr_matrix)), ("model", model)]), {})
    assert _fitted_runs([always], [1], X, y, train, padding, 1.0) is None
    assert _fitted_runs([always], [1], flagged, y, train, padding, 1.0) is None


# -- the runs' models, made for the released run only -----------------------------------------
@pytest.mark.parametrize("seeds", [[11, 22, 33, 44, 55, 66], [None] * 6])
def test_a_deferred_model_builds_the_model_the_run_made_eagerly(seeds):
    """A plain run's :class:`DeferredModel` builds what the run's fit made before: its
    estimator (``instantiate`` with the run's seed and epsilons) with the fitted attributes of
    its solve -- the frame's feature names included --, its throwaway accountant charged;
    every build a new model, charged once."""
    X, y = _data(n=400, classes=3)
    padding = make_padding(X, y, np.arange(3))
    train = np.arange(0, 400, 2)
    templates = _templates()
    templates.append(templates[0])  # a candidate drawn twice: one prepared template
    keys = [("first",), ("second",), ("third",), ("fourth",), ("fifth",), ("first",)]
    deferred = fit_runs(templates, seeds, X, y, train, padding, 0.7, keys)
    assert all(type(model) is DeferredModel for model in deferred)
    names = np.array(["a", "b", "c", "d"], dtype=object)
    deferred[1].feature_names_in_ = names
    prepared = _batched_runs._prepared(templates, 0.7, keys)
    noise_seeds = [p.random_state(seed) for p, seed in zip(prepared, seeds, strict=True)]
    solved = _batched_runs._solved_runs([p.estimator for p in prepared], noise_seeds, X, y,
                                        train, padding, keys)
    for r, (template, seed, model, fitted) in enumerate(zip(templates, seeds, deferred, solved,
                                                            strict=True)):
        if seed is not None:  # what the run keeps is what its solve found
            kept = {name: value for name, value in vars(model).items()
                    if not name.startswith("_") and name != "feature_names_in_"}
            assert list(kept) == list(fitted)
            for name, value in fitted.items():
                np.testing.assert_array_equal(kept[name], value)
        eager = instantiate(template, seed=seed, epsilon_scale=0.7)
        for name in fitted:
            setattr(eager, name, getattr(model, name))
        if r == 1:
            eager.feature_names_in_ = names
        eager.accountant.spend(eager.epsilon, 0)
        once, again = model.build(), built(model)
        assert once is not again and once.accountant is not again.accountant
        for made in (once, again):
            assert type(made) is type(eager)
            params, eager_params = made.get_params(), eager.get_params()
            assert params.pop("accountant").spent_budget == \
                eager_params.pop("accountant").spent_budget == [(eager.epsilon, 0)]
            assert params == eager_params and made.random_state == eager.random_state
            assert list(vars(made)) == list(vars(eager))
            for name, value in vars(eager).items():
                if name != "accountant":
                    np.testing.assert_array_equal(getattr(made, name), value)
        # and the one-by-one fit's model, up to the optimiser
        if seed is not None:
            _assert_same_model(once, _one_by_one(template, seed, X, y, train, padding), X,
                               atol=0.05)
    # the runs' accuracies read a deferred model's fitted attributes as the model's
    X_val, y_val = X[300:], y[300:]
    for a, b in zip(run_accuracies(deferred, X_val, y_val),
                    run_accuracies([built(m) for m in deferred], X_val, y_val), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [None, 0, 7, 2**31])
@pytest.mark.parametrize("estimator", [
    LogisticRegression(epsilon=1.0, data_norm=1.0),
    LogisticRegression(epsilon=1.0, data_norm=1.0, random_state=5),  # cleared: a DP model
])
def test_a_prepared_templates_random_state_is_its_copys(estimator, seed):
    """``PreparedTemplate.random_state(seed)``: the ``random_state`` its ``instantiate(seed)``
    gets, without the copy."""
    prepared = PreparedTemplate(candidate_template(estimator, {"C": 2.0}), epsilon_scale=0.5)
    assert prepared.random_state(seed) == prepared.instantiate(seed).random_state
    if seed is not None:
        assert prepared.random_state(seed) != prepared.random_state(seed + 1)


@pytest.mark.parametrize("scoring", [None, "roc_auc"])
def test_a_search_builds_the_released_runs_model_only(monkeypatch, scoring):
    """Scored by accuracy (one product for all runs), a search makes one estimator -- the
    released run's, which is the model its deferred run describes; a score that reads the
    model makes every run's."""
    builds = []
    real = DeferredModel.build

    def counted(self):
        builds.append(self)
        return real(self)

    monkeypatch.setattr(DeferredModel, "build", counted)
    X, y = _data(n=300)
    search = DPRandomSearchCV(LogisticRegression(data_norm=2.0), {"C": [0.1, 1.0, 10.0]},
                              n_iter=40, distribution="fixed", epsilon=None, classes=[0, 1],
                              scoring=scoring, random_state=0).fit(X, y)
    assert len(builds) == (1 if scoring is None else 40)
    model = search.best_estimator_
    assert model.accountant.spent_budget == [(model.epsilon, 0)]
    if scoring is None:
        np.testing.assert_array_equal(model.coef_, builds[0].coef_)


def test_newton_steps_down_where_a_hessian_points_up(monkeypatch):
    """A Newton system whose solution is not a descent direction (a Hessian whose rounding
    outweighs a tiny ridge) gives way to a gradient step scaled by the Hessian's diagonal:
    with every Hessian negated, each problem still converges, to the minimiser."""
    X, y = _data(n=200)
    row_norms = np.linalg.norm(X, axis=1)
    P, D = 4, X.shape[1] + 1
    rng = np.random.RandomState(3)
    problems = _SharedRows(X / row_norms[:, None], row_norms, None, np.full(P, 1.0),
                           np.ones(P, bool), (y == 1).astype(float)[:, None],
                           np.zeros(P, int), 1.0 / 200, np.full((P, D), 0.05),
                           rng.normal(scale=0.1, size=(P, D)), np.full(P, 1e-6),
                           np.full(P, 1000, int))
    reference, converged = _batched_runs.newton(problems)
    assert converged.all()
    real = _SharedRows.hessians
    monkeypatch.setattr(_SharedRows, "hessians",
                        lambda self, W, idx, rows=None: -real(self, W, idx, rows))
    upside_down, converged = _batched_runs.newton(problems)
    assert converged.all()
    np.testing.assert_allclose(upside_down, reference, atol=1e-4)


def test_newton_tries_several_halvings_in_one_pass_and_takes_the_first_that_passes(
        monkeypatch):
    """A partition fit's problems: 60 rows, a ridge from 1e-2 to 1e-6 (large C), whose Newton
    steps overshoot and backtrack many halvings. Tried several in one pass, each iteration
    takes the step it takes when the halvings are tried one at a time: the same iterates, in
    fewer passes over the rows."""
    X, y = _data(n=60, d=6, seed=2)
    X[:, 0] += 2.0 * (y == 1)  # nearly separable: the unregularised minimiser is far away
    row_norms = np.linalg.norm(X, axis=1)
    P, D = 5, X.shape[1] + 1
    rng = np.random.RandomState(7)
    ridge = np.repeat([[1e-2], [1e-3], [1e-4], [1e-5], [1e-6]], D, axis=1)

    def run():
        problems = _SharedRows(X / row_norms[:, None], row_norms, None, np.full(P, 4.0),
                               np.ones(P, bool), (y == 1).astype(float)[:, None],
                               np.zeros(P, int), 1.0 / 60, ridge,
                               rng.normal(scale=0.05, size=(P, D)), np.full(P, 1e-4),
                               np.full(P, 100, int))
        passes, iterates = [0], []
        real_pass, real_hessians = problems.loss_gradient, problems.hessians

        def counted(W, idx):
            passes[0] += 1
            return real_pass(W, idx)

        def recorded(W, idx, rows=None):
            iterates.append((idx.copy(), W.copy()))
            return real_hessians(W, idx, rows)
        problems.loss_gradient, problems.hessians = counted, recorded
        rng.seed(7)
        x, converged = _batched_runs.newton(problems)
        return x, converged, passes[0], iterates

    monkeypatch.setattr(_batched_runs, "SPECULATIVE_ENTRIES", 0)  # one halving a pass
    x_one, converged_one, passes_one, iterates_one = run()
    monkeypatch.undo()
    x, converged, passes, iterates = run()
    assert passes_one > 2 * passes  # the backtracking was most of the passes
    np.testing.assert_array_equal(converged, converged_one)
    assert [idx.tolist() for idx, _ in iterates] == [idx.tolist() for idx, _ in iterates_one]
    # equal up to rounding (the passes hold other problems: the products' last bits); a
    # halving more or less would be a factor of two in the step
    for (_, W), (_, W_one) in zip(iterates, iterates_one, strict=True):
        np.testing.assert_allclose(W, W_one, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x, x_one, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("per_problem", [False, True])
def test_logistic_sums_are_the_elementwise_terms_summed(per_problem):
    """The loss summed by parts and the residuals equal the elementwise forms (scipy's
    ``log1p``/``expit``) up to rounding, at margins from 0 to far beyond exp's range, with a
    column of labels or one per problem."""
    from scipy.special import expit

    rng = np.random.RandomState(4)
    raw = rng.normal(scale=20, size=(300, 7))
    raw[:5] = [[0.0] * 7, [800.0] * 7, [-800.0] * 7, [1e-300] * 7, [-37.5] * 7]
    y = (rng.uniform(size=(300, 7 if per_problem else 1)) < 0.4).astype(float)
    terms = np.logaddexp(0.0, raw) - y * raw
    sums, residual = _batched_runs.logistic_sums(raw.copy(), y)
    np.testing.assert_allclose(sums, terms.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(residual, expit(raw) - y, rtol=0, atol=5e-16)


def test_samples_of_as_many_rows_keep_their_own_pairwise_products():
    """Of 15 rows, 2 and 3 asked for give strides 7 and 5, both 3 rows (0, 7, 14 and 0, 5,
    10): each Hessian is summed over its own rows' products, whichever came first (a table of
    products keyed by the number of rows handed the second the first's)."""
    rng = np.random.RandomState(7)
    X = rng.normal(size=(15, 3))
    row_norms = np.linalg.norm(X, axis=1)
    P, D = 2, 4
    design = np.hstack([clip_to_norm(X, 1.0), np.ones((15, 1))])
    problems = _SharedRows(X / row_norms[:, None], row_norms, {(1.0, True): design},
                           np.ones(P), np.ones(P, bool), (rng.uniform(size=(15, 1)) < 0.5) * 1.0,
                           np.zeros(P, int), 1.0 / 15, np.full((P, D), 0.1),
                           np.zeros((P, D)), np.full(P, 1e-4), np.full(P, 100, int))
    W = rng.normal(size=(P, D))
    for rows, picked in ((2, [0, 7, 14]), (3, [0, 5, 10])):
        assert _batched_runs.curvature_rows(15, rows).tolist() == picked
        H = problems.hessians(W, np.arange(P), rows)
        for p in range(P):
            z = design[picked] @ W[p]
            curvature = 1 / (1 + np.exp(-z)) / (1 + np.exp(z))
            plain = (design[picked].T @ (design[picked] * curvature[:, None]) / 3
                     + np.diag(np.full(D, 0.1)))
            np.testing.assert_allclose(H[p], plain, rtol=1e-10, atol=1e-13)
