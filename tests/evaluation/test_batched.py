"""The batched partition fits of diffprivlib's LogisticRegression (evaluation/_batched.py).

They must be the one-by-one fits of the subsample-and-aggregate evaluator up to the optimiser:
same objective, same noise (drawn by diffprivlib's Vector mechanism from the same seeds), same
failures (error_score for the failed partition only).
"""

import numpy as np
import pytest
from diffprivlib.mechanisms import Vector
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from diffprivlib.validation import clip_to_norm
from scipy import optimize, stats
from sklearn.datasets import make_classification
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer, OneHotEncoder, PolynomialFeatures

from skdptune._seeding import SeedPlan
from skdptune.estimators import sound_fitting
from skdptune.evaluation import _batched, _partitions
from skdptune.evaluation._batched import (
    _Problems,
    lbfgs,
    perturbation,
    row_weights,
    supports_batched_fits,
    vector_mechanism,
)
from skdptune.evaluation._fit import candidate_template
from skdptune.evaluation._partitions import PartitionEvaluator
from skdptune.evaluation._scores import check_bounded_scorer
from skdptune.public import make_padding


# -- the plain reference: one fit's problems built on their own, as diffprivlib's fit does ----
def vector_perturbation(epsilon, C, data_norm, fit_intercept, n_rows, dimension, rng):
    """``(beta, delta)`` of one objective perturbation from a fresh diffprivlib Vector."""
    return perturbation(vector_mechanism(epsilon, C, data_norm, fit_intercept, n_rows,
                                         dimension, rng))


def _unit_blocks(X_rows, y_rows, fit, rng, model_rows=None, n_padding=0):
    """The binary problems of one fit (one, or one per class for one-vs-rest), or ``None``:
    its own rows (ending with ``n_padding`` padding rows) clipped, fresh noise per problem;
    ``model_rows``: the returned model's rows N when the fit is its miniature."""
    classes = np.unique(y_rows)
    if len(classes) < 2 or not np.isfinite(X_rows).all():
        return None, classes  # diffprivlib raises: the fit fails
    X_clipped = clip_to_norm(X_rows, fit["data_norm"])
    n, d = X_clipped.shape
    noise_rows = n if model_rows is None else int(model_rows)
    weights = row_weights(n, model_rows, n_padding)
    positives = classes[1:] if len(classes) == 2 else classes
    epsilon = fit["epsilon"] / len(positives)
    blocks = []
    for positive in positives:
        beta, delta = vector_perturbation(epsilon, fit["C"], fit["data_norm"],
                                          fit["fit_intercept"], noise_rows,
                                          d + int(fit["fit_intercept"]), rng)
        blocks.append({"X": X_clipped, "y": (y_rows == positive).astype(float),
                       "row_weights": weights, "l2": 1.0 / (fit["C"] * noise_rows),
                       "beta": beta, "delta": delta, "noise_rows": noise_rows,
                       "intercept": fit["fit_intercept"], "tol": fit["tol"],
                       "max_iter": fit["max_iter"]})
    return blocks, classes


def _problems(blocks):
    """The stacked problems of ``blocks``, laid out one by one."""
    P, m, d = len(blocks), max(len(b["y"]) for b in blocks), blocks[0]["X"].shape[1]
    X, y, w = np.zeros((P, m, d + 1)), np.zeros((P, m)), np.zeros((P, m))
    quad, linear = np.zeros((P, d + 1)), np.zeros((P, d + 1))
    for p, b in enumerate(blocks):
        n = len(b["y"])
        X[p, :n, :d] = b["X"]
        X[p, :n, d] = 1.0 if b["intercept"] else 0.0
        y[p, :n] = b["y"]
        w[p, :n] = b["row_weights"]
        quad[p, :d] = b["l2"] + b["delta"]
        # the intercept is a regularised weight (InterceptColumnLogisticRegression)
        quad[p, d] = b["l2"] + b["delta"] if b["intercept"] else 1.0
        linear[p, :len(b["beta"])] = b["beta"] / b["noise_rows"]
    return _Problems(X, y, w, quad, linear, np.array([b["tol"] for b in blocks]),
                     np.array([b["max_iter"] for b in blocks]))


def _data(n=1500, d=5, classes=2, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=3, n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, random_state=seed)
    return np.clip((X + 4) / 8, 0, 1), y


def _evaluator(estimator, X, y, *, batched, seed=0, scoring=None, error_score=0.0,
               padding=True, cv=0.25, inner_params="scaled"):
    classes = np.unique(y)
    return PartitionEvaluator(
        estimator, check_bounded_scorer(scoring, None, estimator), n_partitions=len(X) // 100,
        cv=cv, inner_epsilon="scaled", inner_params=inner_params, n_jobs=1,
        pre_dispatch="2*n_jobs", error_score=error_score, seeds=SeedPlan(seed),
        padding=make_padding(X, y, classes) if padding else None, batched=batched)


CANDIDATES = [{"C": 0.1, "data_norm": 1.0}, {"C": 1.0, "data_norm": 2.5}, {"C": 0.01},
              {"C": 1.0, "fit_intercept": False}]


@pytest.mark.parametrize("n_classes, scoring, cv", [(2, None, 0.25), (3, None, 0.25),
                                                    (2, "balanced_accuracy", 2)])
def test_batched_utilities_equal_one_by_one_fits(n_classes, scoring, cv):
    # the fits' own settings (epsilon rescaled, C kept): the one-by-one fits exactly
    X, y = _data(classes=n_classes)
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    batched = _evaluator(est, X, y, batched=True, scoring=scoring, cv=cv, inner_params="same")
    single = _evaluator(est, X, y, batched=False, scoring=scoring, cv=cv, inner_params="same")
    a = batched.evaluate_partitions(X, y, CANDIDATES, {})
    b = single.evaluate_partitions(X, y, CANDIDATES, {})
    assert a.shape == b.shape == (len(CANDIDATES), 15)
    # same noise, same objective: the same model up to the optimiser's tolerance -- almost
    # every partition gets exactly the same validation score
    assert np.mean(a == b) >= 0.9
    assert np.abs(a.mean(axis=1) - b.mean(axis=1)).max() < 0.01
    # and the utilities are not trivial (the comparison could fail)
    assert a.std() > 0.01


def test_batched_noise_is_the_one_by_one_fits_noise():
    """Converged fits with the same seed have the same coefficients as the one-by-one fit."""
    X, y = _data(n=200)
    seed_of_fit = 12345
    est = LogisticRegression(epsilon=0.7, data_norm=1.5, C=0.3, tol=1e-10, max_iter=1000,
                             random_state=np.random.RandomState(seed_of_fit))
    with sound_fitting(est):
        est.fit(X, y)
    fit = {"epsilon": 0.7, "C": 0.3, "data_norm": 1.5, "fit_intercept": True, "tol": 1e-10,
           "max_iter": 1000}
    blocks, classes = _unit_blocks(X.astype(float), y, fit, np.random.RandomState(seed_of_fit))
    theta = lbfgs(_problems(blocks))[0]
    np.testing.assert_allclose(theta[:-1], est.coef_[0], atol=2e-3)
    np.testing.assert_allclose(theta[-1], est.intercept_[0], atol=2e-3)
    # a different seed gives a different model (the check above can fail)
    other, _ = _unit_blocks(X.astype(float), y, fit, np.random.RandomState(seed_of_fit + 1))
    assert np.abs(lbfgs(_problems(other))[0] - theta).max() > 1e-2


def test_noise_norm_follows_diffprivlibs_vector_mechanism():
    """||beta|| ~ Gamma(dimension, 2 * sensitivity / epsilon'), from the secure generator."""
    dim, epsilon, C, norm, n = 6, 2.0, 1.0, 1.0, 100
    draws = np.array([np.linalg.norm(vector_perturbation(epsilon, C, norm, True, n, dim,
                                                         None)[0]) for _ in range(400)])
    sensitivity = np.sqrt(norm ** 2 + 1)
    epsilon_p = epsilon - 2 * np.log(1 + 0.25 * sensitivity * C)
    scale = 2 * sensitivity / epsilon_p
    assert stats.kstest(draws, stats.gamma(dim, scale=scale).cdf).pvalue > 1e-3
    # the same mechanism driven directly: the two samples agree too
    mech = Vector(epsilon=epsilon, dimension=dim, alpha=1 / C, function_sensitivity=0.25,
                  data_sensitivity=sensitivity, n=n, random_state=np.random.RandomState(0))
    direct = [np.linalg.norm(mech.randomise(lambda x: (0.0, np.zeros(dim)))(np.zeros(dim))[1])
              * n for _ in range(400)]
    assert stats.ks_2samp(draws, direct).pvalue > 1e-3
    # a wrong scale is detected (the test can fail)
    assert stats.kstest(draws, stats.gamma(dim, scale=2 * scale).cdf).pvalue < 1e-6


def test_lockstep_lbfgs_reaches_scipys_optimum():
    X, y = _data(n=400)
    # a large epsilon keeps the noise's linear term on the (unpenalised) intercept below the
    # loss's slope: the objective is then bounded below (with more noise it may not be, and
    # diffprivlib's own fit runs to max_iter)
    fit = {"epsilon": 20.0, "C": 1.0, "data_norm": 2.0, "fit_intercept": True, "tol": 1e-8,
           "max_iter": 500}
    rng = np.random.RandomState(0)
    blocks = []
    for part in np.array_split(np.arange(400), 4):
        blocks += _unit_blocks(X[part], y[part], fit, rng)[0]
    problems = _problems(blocks)
    ours = lbfgs(problems)
    for p in range(problems.P):
        def objective(theta, p=p):
            f, g = problems.loss_gradient(theta[None], np.array([p]))
            return f[0], g[0]
        ref, _, _ = optimize.fmin_l_bfgs_b(objective, np.zeros(problems.D), factr=64,
                                           pgtol=1e-8, maxiter=500)
        np.testing.assert_allclose(ours[p], ref, atol=1e-5)


def _ragged_problems(n_parts=11, seed=0):
    """Stacked problems of partitions of different sizes (padded rows of weight 0)."""
    X, y = _data(n=600, seed=seed)
    fit = {"epsilon": 20.0, "C": 1.0, "data_norm": 2.0, "fit_intercept": True, "tol": 1e-8,
           "max_iter": 500}
    rng = np.random.RandomState(seed)
    cuts = np.sort(rng.choice(np.arange(20, 580), n_parts - 1, replace=False))
    blocks = []
    for part in np.split(np.arange(600), cuts):
        blocks += _unit_blocks(X[part], y[part], fit, rng)[0]
    return _problems(blocks)


def test_problem_blocks_are_the_plain_pass(monkeypatch):
    """The pass in blocks of problems (a partial last one, and a subset of the problems) gives
    each problem its plain objective and gradient, and bit for bit what one block gives."""
    problems = _ragged_problems()
    W = np.random.default_rng(1).normal(size=(problems.P, problems.D))
    subset = np.array([0, 3, 4, 7, 10])
    monkeypatch.setattr(_batched, "PROBLEM_BLOCK_BYTES", 10**12)
    whole = problems.loss_gradient(W, np.arange(problems.P))
    part = problems.loss_gradient(W[subset], subset)
    monkeypatch.setattr(_batched, "PROBLEM_BLOCK_BYTES", 3 * problems.X[0].nbytes)
    for a, b in zip(problems.loss_gradient(W, np.arange(problems.P)), whole, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(problems.loss_gradient(W[subset], subset), part, strict=True):
        np.testing.assert_array_equal(a, b)
    for q, p in enumerate(subset):  # the plain objective of problem p at W[p]
        X, y, w, theta = problems.X[p], problems.y[p], problems.w[p], W[p]
        z = X @ theta
        loss = np.sum(w * (np.logaddexp(0, z) - y * z))
        loss += np.sum((0.5 * problems.quad[p] * theta + problems.linear[p]) * theta)
        grad = X.T @ (w * (1 / (1 + np.exp(-z)) - y)) + problems.quad[p] * theta
        grad += problems.linear[p]
        np.testing.assert_allclose(part[0][q], loss, rtol=1e-12)
        np.testing.assert_allclose(part[1][q], grad, rtol=1e-10, atol=1e-12)


def test_each_lockstep_solution_is_the_problems_own():
    """Problems that stop at different iterations (their own max_iter) are solved as each
    alone: the working set dropping finished problems moves no other problem."""
    problems = _ragged_problems(n_parts=12)
    problems.max_iter[:] = 1 + np.arange(problems.P) * 3  # finishing one after another
    together = lbfgs(problems)
    for p in range(problems.P):
        keep = np.zeros(problems.P, dtype=bool)
        keep[p] = True
        np.testing.assert_array_equal(together[p], lbfgs(problems.subset(keep))[0])


def test_failed_partition_gets_error_score_others_unaffected():
    X, y = _data()
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    evaluator = _evaluator(est, X, y, batched=True, error_score=0.125)
    parts = evaluator.partitions(len(X))
    clean = evaluator.evaluate_partitions(X, y, CANDIDATES, {})
    broken = X.copy()
    broken[parts[3]] = np.nan  # diffprivlib's fit raises on this partition
    out = evaluator.evaluate_partitions(broken, y, CANDIDATES, {})
    assert np.all(out[:, 3] == 0.125)
    np.testing.assert_array_equal(np.delete(out, 3, axis=1), np.delete(clean, 3, axis=1))
    # without padding, a partition with one class fails in the one-by-one path: here too
    y1 = y.copy()
    y1[parts[5]] = 0
    a = _evaluator(est, X, y1, batched=True, error_score=0.125, padding=False,
                   inner_params="same")
    b = _evaluator(est, X, y1, batched=False, error_score=0.125, padding=False,
                   inner_params="same")
    ua = a.evaluate_partitions(X, y1, CANDIDATES, {})
    ub = b.evaluate_partitions(X, y1, CANDIDATES, {})
    assert np.all(ua[:, 5] == 0.125) and np.all(ub[:, 5] == 0.125)
    assert np.mean(ua == ub) >= 0.9


def _padded(X, y):
    padding = make_padding(X, y, np.unique(y))
    return (np.vstack([X, padding.X]).astype(float), np.concatenate([y, padding.y]),
            len(padding.y))


def test_miniature_on_all_rows_is_the_returned_model():
    """A miniature fitted on all N rows (padding included) is the returned model's problem:
    the same rows, weights, ridge and noise as the fit's own settings, and the one-by-one
    fit."""
    X, y = _data(n=300)
    Xp, yp, n_pad = _padded(X, y)
    fit = {"epsilon": 0.8, "C": 0.5, "data_norm": 1.5, "fit_intercept": True, "tol": 1e-10,
           "max_iter": 1000}
    own, _ = _unit_blocks(Xp, yp, fit, np.random.RandomState(3))
    mini, _ = _unit_blocks(Xp, yp, fit, np.random.RandomState(3), len(yp), n_pad)
    for key in ("row_weights", "beta", "X", "y"):
        np.testing.assert_allclose(mini[0][key], own[0][key], rtol=1e-12)
    assert mini[0]["l2"] == own[0]["l2"] and mini[0]["delta"] == own[0]["delta"]
    est = LogisticRegression(epsilon=0.8, data_norm=1.5, C=0.5, tol=1e-10, max_iter=1000,
                             random_state=np.random.RandomState(3))
    with sound_fitting(est):
        est.fit(Xp, yp)
    theta = lbfgs(_problems(mini))[0]
    np.testing.assert_allclose(theta[:-1], est.coef_[0], atol=2e-3)
    np.testing.assert_allclose(theta[-1], est.intercept_[0], atol=2e-3)


def test_miniature_has_the_returned_models_noise_ridge_and_padding_weight():
    """On a partition of m rows standing in for a model on N rows: weights (N - pad)/(N m) on
    the partition's rows and 1/N on each padding row, ridge 1/(C N), the linear noise term
    beta / N, and diffprivlib's regime of the *returned* model (epsilon' <= 0: delta > 0)."""
    X, y = _data(n=2000)
    part = np.arange(75)
    padding = make_padding(X, y, np.unique(y))
    Xm = np.vstack([X[part], padding.X]).astype(float)
    ym = np.concatenate([y[part], padding.y])
    n_pad, N = len(padding.y), 2000 + len(padding.y)
    # C * s / 4 = 25 * 2.2 / 4 > e^{epsilon/2} - 1: the returned model is in the second regime
    fit = {"epsilon": 1.0, "C": 25.0, "data_norm": 2.0, "fit_intercept": True, "tol": 1e-4,
           "max_iter": 100}
    blocks, _ = _unit_blocks(Xm, ym, fit, np.random.RandomState(0), N, n_pad)
    b = blocks[0]
    np.testing.assert_allclose(b["row_weights"][:75], (N - n_pad) / (N * 75))
    np.testing.assert_allclose(b["row_weights"][75:], 1.0 / N)
    assert np.isclose(b["row_weights"].sum(), 1.0)
    assert b["l2"] == 1.0 / (25.0 * N) and b["noise_rows"] == N
    s = np.sqrt(2.0 ** 2 + 1)
    expected_delta = (0.25 * s / np.expm1(1.0 / 4) - 1 / 25.0) / N  # diffprivlib, n = N
    assert np.isclose(b["delta"], expected_delta, rtol=1e-9)
    problems = _problems(blocks)
    np.testing.assert_allclose(problems.linear[0], b["beta"] / N)
    # the old stand-in (epsilon and C times N / m on the partition's own rows) misses the
    # regime: no delta, a much smaller noise -- the reason for the miniature
    factor = N / len(ym)
    old = dict(fit, epsilon=fit["epsilon"] * factor, C=fit["C"] * factor)
    stand_in, _ = _unit_blocks(Xm, ym, old, np.random.RandomState(0))
    assert stand_in[0]["delta"] == 0.0


def test_results_do_not_depend_on_n_jobs():
    X, y = _data()
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    one = _evaluator(est, X, y, batched=True)
    two = _evaluator(est, X, y, batched=True)
    two.n_jobs = 2
    np.testing.assert_array_equal(one.evaluate_partitions(X, y, CANDIDATES, {}),
                                  two.evaluate_partitions(X, y, CANDIDATES, {}))


def test_only_plain_logistic_regression_is_batched():
    X, y = _data()
    lr = LogisticRegression(epsilon=1.0, data_norm=2.0)
    templates = [candidate_template(lr, params) for params in CANDIDATES]
    assert supports_batched_fits(templates, X, {}, 0.0)
    assert not supports_batched_fits(templates, X, {}, "raise")
    assert not supports_batched_fits(templates, X, {"sample_weight": np.ones(len(X))}, 0.0)
    assert not supports_batched_fits(templates, X.tolist(), {}, 0.0)
    assert not supports_batched_fits([candidate_template(LogisticRegression(epsilon=1.0), {})],
                                     X, {}, 0.0)  # no data_norm: diffprivlib's leak path
    others = [make_pipeline(Normalizer(), lr), GaussianNB(epsilon=1.0, bounds=(0, 1))]
    assert not supports_batched_fits([candidate_template(e, {}) for e in others], X, {}, 0.0)


def test_a_numeric_frame_is_batched_as_its_float_array(monkeypatch):
    """A plain model's numeric DataFrame goes through the batched partition fits as the float
    array diffprivlib's fit makes of it: the array's utilities, bit for bit; other frames go
    one by one (the one-by-one utilities of the array)."""
    pd = pytest.importorskip("pandas")
    X, y = _data()
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    calls = []
    real = _partitions.PartitionEvaluator._evaluate_batched
    monkeypatch.setattr(_partitions.PartitionEvaluator, "_evaluate_batched",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    on_array = _evaluator(est, X, y, batched=True).evaluate_partitions(X, y, CANDIDATES, {})
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    calls.clear()
    # the padding rows made from the frame, as the search makes them
    on_frame = _evaluator(est, frame, y, batched=True).evaluate_partitions(frame, y,
                                                                           CANDIDATES, {})
    assert calls
    np.testing.assert_array_equal(on_frame, on_array)
    calls.clear()
    nullable = frame.astype({"x0": "Float64"})
    alone = _evaluator(est, nullable, y, batched=True).evaluate_partitions(nullable, y,
                                                                           CANDIDATES, {})
    assert not calls
    one_by_one = _evaluator(est, X, y, batched=False).evaluate_partitions(X, y, CANDIDATES, {})
    np.testing.assert_array_equal(alone, one_by_one)


def test_a_scorer_of_a_frame_gets_the_frame(monkeypatch):
    """A user's scorer of a numeric DataFrame sees the frame's validation rows and a model
    with its feature names, as one by one: the frame is read as floats only where the utility
    is the accuracy computed from the coefficients."""
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    seen = []

    def by_name(estimator, X_test, y_test):  # reads a column by its name
        seen.append((type(X_test).__name__, hasattr(estimator, "feature_names_in_")))
        return float(np.mean(estimator.predict(X_test)[X_test["x0"] > 0.5]
                             == np.asarray(y_test)[X_test["x0"] > 0.5]))

    est = LogisticRegression(epsilon=1.0, data_norm=2.0)

    def evaluator(batched):
        return PartitionEvaluator(
            est, check_bounded_scorer(by_name, (0.0, 1.0), est), n_partitions=len(X) // 100,
            cv=0.25, inner_epsilon="scaled", inner_params="scaled", n_jobs=1,
            pre_dispatch="2*n_jobs", error_score=0.0, seeds=SeedPlan(0),
            padding=make_padding(frame, y, np.unique(y)), batched=batched)

    utilities = evaluator(True).evaluate_partitions(frame, y, CANDIDATES, {})
    assert seen and set(seen) == {("DataFrame", True)}
    alone = evaluator(False).evaluate_partitions(frame, y, CANDIDATES, {})
    assert (utilities > 0).all()
    np.testing.assert_allclose(utilities, alone, atol=0.1)


def test_candidate_groups_cover_every_candidate_once():
    from skdptune.evaluation._partitions import BATCH_BYTES, _candidate_groups

    for n, size, jobs in [(20, 10**6, 1), (20, 10**6, 2), (20, BATCH_BYTES, 2), (3, 1, 4)]:
        groups = _candidate_groups(n, size, jobs)
        assert sorted(np.concatenate(groups).tolist()) == list(range(n))
        assert len(groups) == n or len(groups) % jobs == 0
    assert len(_candidate_groups(20, 10**6, 1)) == 2  # small problems are solved together
    assert len(_candidate_groups(20, BATCH_BYTES, 2)) == 20  # large ones one by one


def test_one_partition_does_not_move_the_others():
    """The sensitivity 1/k needs every other partition's utility to be exactly unchanged when
    one partition's records change -- also inside one stacked solve."""
    X, y = _data()
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    evaluator = _evaluator(est, X, y, batched=True)
    parts = evaluator.partitions(len(X))
    before = evaluator.evaluate_partitions(X, y, CANDIDATES, {})
    X2, y2 = X.copy(), y.copy()
    X2[parts[7]] = np.random.RandomState(1).uniform(0, 1, X2[parts[7]].shape) * 3
    y2[parts[7]] = 1 - y2[parts[7]]
    after = evaluator.evaluate_partitions(X2, y2, CANDIDATES, {})
    assert not np.array_equal(after[:, 7], before[:, 7])
    np.testing.assert_array_equal(np.delete(after, 7, axis=1), np.delete(before, 7, axis=1))


def test_a_failed_stacked_solve_falls_back_to_fits_alone(monkeypatch):
    from skdptune.evaluation import _batched

    X, y = _data()
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    expected = _evaluator(est, X, y, batched=True).evaluate_partitions(X, y, CANDIDATES, {})
    real = _batched.lbfgs

    def flaky(problems):
        if problems.P > 2:  # the stacked solve fails, the fits alone do not
            raise FloatingPointError("stacked")
        return real(problems)

    monkeypatch.setattr(_batched, "lbfgs", flaky)
    out = _evaluator(est, X, y, batched=True).evaluate_partitions(X, y, CANDIDATES, {})
    assert np.mean(out == expected) >= 0.9
    assert np.abs(out.mean(axis=1) - expected.mean(axis=1)).max() < 0.01


# --------------------------------------------------------------------------------------------
# The shared set-up computes exactly what one fit at a time computes
# --------------------------------------------------------------------------------------------


def _reference_utilities(evaluator, X, y, candidates, miniature, solved=None):
    """The partition utilities built the plain way: for every (candidate, unit) its own rows
    (``X[train]`` then the padding), clipped, a fresh diffprivlib ``Vector`` per binary
    problem drawing from ``RandomState`` of the fit's seed, then the same stacked solve and the
    same utility. Shape ``(len(candidates), k)``."""
    from skdptune.estimators import derived_seed as _derived_seed
    from skdptune.evaluation._batched import _utility
    from skdptune.evaluation._partitions import _fit_units

    n, d = X.shape
    pad = evaluator.padding
    n_pad = 0 if pad is None else len(pad.y)
    parts = evaluator.partitions(n)
    units = _fit_units(parts, evaluator.cv, y, evaluator.seeds)
    blocks, owners, templates = [], [], []
    for i, params in enumerate(candidates):
        est = candidate_template(LogisticRegression(epsilon=1.0, data_norm=2.0), params)
        templates.append(est)
        for u, (j, r, train, _test) in enumerate(units):
            X_rows = X[train] if pad is None else np.vstack([X[train], pad.X])
            y_rows = y[train] if pad is None else np.concatenate([y[train], pad.y])
            classes = np.unique(y_rows)
            if len(classes) < 2 or not np.isfinite(X_rows).all():
                continue
            m = len(y_rows)
            if miniature:  # the returned model's epsilon, C and rows
                epsilon, N = est.epsilon, n + n_pad
                weights = np.r_[np.full(len(train), (N - n_pad) / (N * len(train))),
                                np.full(n_pad, 1.0 / N)]
            else:  # inner_epsilon="scaled", inner_params="same": the fit's own rows
                epsilon, N = est.epsilon * n / len(train), m
                weights = np.full(m, 1.0 / m)
            seed = (evaluator.seeds.seed("fit", i, j) + r) % 2**32
            rng = np.random.RandomState(_derived_seed(seed, ""))
            positives = classes[1:] if len(classes) == 2 else classes
            dim = d + int(est.fit_intercept)
            sensitivity = np.sqrt(est.data_norm ** 2 + 1) if est.fit_intercept else est.data_norm
            owners.append((i, u, classes, len(blocks), len(positives)))
            for positive in positives:
                mech = Vector(epsilon=epsilon / len(positives), dimension=dim, alpha=1 / est.C,
                              function_sensitivity=0.25, data_sensitivity=sensitivity, n=N,
                              random_state=rng)
                noisy = mech.randomise(lambda x, dim=dim: (0.0, np.zeros(dim)))
                g0, g1 = noisy(np.zeros(dim))[1], noisy(np.ones(dim))[1]
                blocks.append({"X": clip_to_norm(X_rows, est.data_norm),
                               "y": (y_rows == positive).astype(float), "row_weights": weights,
                               "l2": 1.0 / (est.C * N), "beta": g0 * N,
                               "delta": float(g1[0] - g0[0]), "noise_rows": N,
                               "intercept": est.fit_intercept, "tol": est.tol,
                               "max_iter": est.max_iter})
    problems = _problems(blocks)
    if solved is not None:
        solved.append(problems)
    solution = lbfgs(problems)
    per_unit = np.full((len(candidates), len(units)), 0.0)
    for i, u, classes, first, count in owners:
        theta = solution[first:first + count]
        test = units[u][3]
        try:
            per_unit[i, u] = _utility(evaluator.scorer, templates[i], classes, theta[:, :d],
                                      theta[:, d], X[test], y[test])
        except ValueError:
            pass  # a non-finite validation row: error_score (0.0)
    owner = np.array([j for j, _, _, _ in units])
    counts = np.bincount(owner, minlength=len(parts))
    return np.stack([np.bincount(owner, weights=row, minlength=len(parts)) / counts
                     for row in per_unit])


@pytest.mark.parametrize("n_classes, miniature, cv, scoring", [
    (2, True, 0.25, None), (3, True, 0.25, None), (2, False, 2, None),
    (3, False, 0.25, "balanced_accuracy")])
def test_shared_set_up_gives_exactly_the_plain_fits(n_classes, miniature, cv, scoring,
                                                     monkeypatch):
    """The fast set-up (rows clipped once, one Vector per setting re-seeded per fit, seeds at
    once, stacked arrays gathered) changes nothing: every partition utility is bit-identical
    to the plain construction, with padding, a candidate without intercept, a partition with
    a non-finite value (error_score) and one fitted on a single class (no padding: fails)."""
    X, y = _data(n=1200, classes=n_classes, seed=n_classes)
    est = LogisticRegression(epsilon=1.0, data_norm=2.0)
    candidates = [{"C": 0.1, "data_norm": 1.0}, {"C": 30.0, "data_norm": 3.0},
                  {"C": 1.0, "fit_intercept": False}]
    evaluator = _evaluator(est, X, y, batched=True, seed=n_classes, cv=cv, scoring=scoring,
                           inner_params="scaled" if miniature else "same")
    parts = evaluator.partitions(len(X))
    X = X.copy()
    X[parts[2][0], 1] = np.inf
    from skdptune.evaluation import _batched

    solved, real = [], _batched.lbfgs
    monkeypatch.setattr(_batched, "lbfgs", lambda problems: solved.append(problems)
                        or real(problems))
    ours = evaluator.evaluate_partitions(X, y, candidates, {})
    expected = _reference_utilities(evaluator, X, y, candidates, miniature, solved)
    np.testing.assert_array_equal(ours, expected)
    # the very same objectives: every stacked array, bit for bit (one batched solve here)
    assert len(solved) == 2
    ours_stacked, plain = solved
    for name in ("X", "y", "w", "quad", "linear", "tol", "max_iter"):
        np.testing.assert_array_equal(getattr(ours_stacked, name), getattr(plain, name))
    assert np.all(ours[:, 2] == 0.0) and ours.std() > 0.05  # a failure; not trivial
    # without padding: a partition with one class fails, the others are the plain fits
    y1 = y.copy()
    y1[parts[4]] = y[0]
    if n_classes == 3:  # two classes only, different ones: one binary problem each
        y1[parts[6]] = 1 + y1[parts[6]] % 2
        y1[parts[7]] = y1[parts[7]] % 2
    bare = _evaluator(est, X, y1, batched=True, seed=n_classes, cv=cv, padding=False,
                      scoring=scoring, inner_params="scaled" if miniature else "same")
    ours = bare.evaluate_partitions(X, y1, candidates, {})
    np.testing.assert_array_equal(ours, _reference_utilities(bare, X, y1, candidates,
                                                             miniature))
    assert np.all(ours[:, 4] == 0.0)


def test_one_vector_mechanism_reseeded_draws_like_fresh_ones():
    """vector_mechanism is built once per setting and re-seeded per fit through the generator
    it holds: diffprivlib must keep that generator (check_random_state returns a RandomState as
    is). If an upgrade copied it, the draws would stop following the seeds and this fails."""

    generator = np.random.RandomState()
    shared = vector_mechanism(0.5, 4.0, 2.0, True, 1000, 6, generator)
    assert shared.random_state is generator
    draws = []
    for seed in (1, 2, 1):
        generator.seed(seed)
        beta, delta = perturbation(shared)
        fresh = vector_perturbation(0.5, 4.0, 2.0, True, 1000, 6, np.random.RandomState(seed))
        np.testing.assert_array_equal(beta, fresh[0])
        assert delta == fresh[1] and delta > 0  # the second regime: a ridge delta
        draws.append(beta)
    assert not np.array_equal(draws[0], draws[1])
    np.testing.assert_array_equal(draws[0], draws[2])
    # diffprivlib's parameter checks still run, on the first draw of a mechanism
    broken = vector_mechanism(0.5, 4.0, 2.0, True, 1000, 6, generator)
    broken.n = 0
    with pytest.raises(ValueError, match="n must be strictly positive"):
        perturbation(broken)


def test_candidate_groups_mix_every_parameter_value():
    """With the candidates' parameters, a grid is dealt so that every group holds each value
    about equally often (round-robin gives a 5 x 4 grid's two groups disjoint data_norms)."""
    from sklearn.model_selection import ParameterGrid

    from skdptune.evaluation._partitions import _candidate_groups

    grid = list(ParameterGrid({"C": [0.01, 0.1, 1.0, 10.0, 100.0],
                               "data_norm": [0.5, 1.0, 2.0, 2.8]}))
    for n_jobs, size in [(2, 10**6), (4, 10**6), (3, 10**6), (2, 10**9)]:
        groups = _candidate_groups(len(grid), size, n_jobs, grid)
        assert sorted(np.concatenate(groups).tolist()) == list(range(len(grid)))
        sizes = [len(g) for g in groups]
        assert max(sizes) - min(sizes) <= 1
        for name in ("C", "data_norm"):
            for value in {p[name] for p in grid}:
                held = [sum(grid[i][name] == value for i in g) for g in groups]
                assert max(held) - min(held) <= 1, (n_jobs, name, value, held)
    round_robin = _candidate_groups(len(grid), 10**6, 2)
    assert {grid[i]["data_norm"] for i in round_robin[0]} == {0.5, 2.0}  # what this fixes


# -- pipelines: data-independent steps before the model ----------------------------------------
CLIP = {"a_min": 0.0, "a_max": 0.9}


def _pipeline(*steps):
    return Pipeline([*steps, ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])


PIPELINE_CANDIDATES = [{"model__C": 0.1, "model__data_norm": 1.0}, {"model__C": 1.0},
                       {"model__C": 0.01, "poly__degree": 1}, {"model__fit_intercept": False},
                       {"model__C": 1.0, "poly__degree": 1}]


def _centre(Z):
    """Not a row-wise map: subtracts the mean of the rows it is given."""
    return Z - Z.mean(axis=0)


@pytest.mark.parametrize("n_classes, scoring, first", [
    (2, None, FunctionTransformer(np.clip, kw_args=CLIP)),
    (3, None, FunctionTransformer(np.clip, kw_args=CLIP)),
    (2, "balanced_accuracy", FunctionTransformer(_centre))])
def test_batched_pipeline_utilities_equal_one_by_one_fits(n_classes, scoring, first):
    """Every unit's rows are transformed as its one-by-one fit transforms them (a step that
    computes across rows too: transforming all rows at once would change every partition)."""
    X, y = _data(classes=n_classes)
    est = _pipeline(("first", first), ("poly", PolynomialFeatures(2, include_bias=False)))
    batched = _evaluator(est, X, y, batched=True, scoring=scoring, inner_params="same")
    single = _evaluator(est, X, y, batched=False, scoring=scoring, inner_params="same")
    a = batched.evaluate_partitions(X, y, PIPELINE_CANDIDATES, {})
    b = single.evaluate_partitions(X, y, PIPELINE_CANDIDATES, {})
    assert np.mean(a == b) >= 0.9
    assert np.abs(a.mean(axis=1) - b.mean(axis=1)).max() < 0.01
    assert a.std() > 0.01


def test_batched_pipeline_miniature_is_the_models_on_the_transformed_rows(monkeypatch):
    """The miniature (the default settings) of a pipeline whose steps map each row alone, and
    zero rows (the padding) to zero rows, is that of its model on the transformed rows: the
    same rows, padding weights, ridge and noise (the noise seeds aligned: a pipeline's model
    draws from the seed of its path, ``model``)."""
    X, y = _data(classes=3)
    steps = [("first", FunctionTransformer(np.clip, kw_args=CLIP)),
             ("poly", PolynomialFeatures(2, include_bias=False))]
    candidates = [c for c in PIPELINE_CANDIDATES if "poly__degree" not in c]
    monkeypatch.setattr(_batched, "model_path", lambda template: "")
    a = _evaluator(_pipeline(*steps), X, y, batched=True).evaluate_partitions(
        X, y, candidates, {})
    Z = Pipeline(steps).fit_transform(X)
    plain = [{k.removeprefix("model__"): v for k, v in c.items()} for c in candidates]
    b = _evaluator(LogisticRegression(epsilon=1.0, data_norm=2.0), Z, y,
                   batched=True).evaluate_partitions(Z, y, plain, {})
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    # the comparison can fail: without the padding weights of the miniature it does
    monkeypatch.setattr(_batched, "row_weights",
                        lambda n_rows, model_rows=None, n_padding=0: np.full(n_rows, 1 / n_rows))
    c = _evaluator(_pipeline(*steps), X, y, batched=True).evaluate_partitions(
        X, y, candidates, {})
    assert not np.allclose(a, c, rtol=0, atol=1e-12)


def _raise_above_two(Z):
    if (Z > 2).any():
        raise ValueError("a value above 2")
    return Z


def test_batched_pipeline_failures_are_the_one_by_one_failures():
    """A step that raises on one partition's rows fails that partition's fits only
    (error_score), as one by one; an output that is not a dense array goes one by one."""
    X, y = _data()
    X[7, 0] = 5.0  # one partition's rows make the step raise
    est = _pipeline(("first", FunctionTransformer(_raise_above_two)),
                    ("poly", PolynomialFeatures(2, include_bias=False)))
    batched = _evaluator(est, X, y, batched=True, inner_params="same", error_score=0.25)
    single = _evaluator(est, X, y, batched=False, inner_params="same", error_score=0.25)
    a = batched.evaluate_partitions(X, y, PIPELINE_CANDIDATES, {})
    b = single.evaluate_partitions(X, y, PIPELINE_CANDIDATES, {})
    failed = (b == 0.25).all(axis=0)
    assert failed.sum() == 1 and (a[:, failed] == 0.25).all()
    assert np.mean(a == b) >= 0.9
    # sparse rows: the evaluator's one-by-one path, exactly
    onehot = OneHotEncoder(categories=[[0, 1]] * 5, handle_unknown="ignore")
    sparse = _pipeline(("first", FunctionTransformer(np.round)), ("poly", onehot))
    Xr = np.round(X[:, :5].clip(0, 1))
    candidates = [{"model__C": 0.1}, {"model__C": 1.0}]
    np.testing.assert_array_equal(
        _evaluator(sparse, Xr, y, batched=True).evaluate_partitions(Xr, y, candidates, {}),
        _evaluator(sparse, Xr, y, batched=False).evaluate_partitions(Xr, y, candidates, {}))


def test_pipelines_of_data_independent_steps_are_batched(monkeypatch):
    X, y = _data()
    calls = []
    real = _partitions._candidates_utilities

    def spy(group, *args):
        calls.append([i for i, _ in group])
        return real(group, *args)

    monkeypatch.setattr(_partitions, "_candidates_utilities", spy)
    est = _pipeline(("first", FunctionTransformer(np.clip, kw_args=CLIP)),
                    ("poly", PolynomialFeatures(2, include_bias=False)))
    _evaluator(est, X, y, batched=True).evaluate_partitions(X, y, PIPELINE_CANDIDATES, {})
    # two settings of the steps (poly__degree 2 and 1): each its own rows
    assert sorted(i for group in calls for i in group) == list(range(5))
    assert not any({1, 2} <= set(group) or {0, 4} <= set(group) for group in calls)
    calls.clear()
    # a private step: diffprivlib's StandardScaler with public bounds is solved unit by unit
    # (tests/evaluation/test_batched_scaler.py), another private step goes one by one
    scaled = Pipeline([("scale", StandardScaler(bounds=(0, 1), epsilon=0.5)),
                       ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])
    _evaluator(scaled, X, y, batched=True).evaluate_partitions(X, y, [{"model__C": 1.0}], {})
    assert calls and all(group == [0] for group in calls)
    calls.clear()
    private = Pipeline([("scale", StandardScaler(bounds=(0, 1), epsilon=0.5, copy=False)),
                        ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])
    _evaluator(private, X, y, batched=True).evaluate_partitions(X, y, [{"model__C": 1.0}], {})
    assert calls == []


def _drop_far_rows(Z):
    return Z[(np.abs(Z - 0.5) <= 0.45).all(axis=1)]


def test_batched_pipeline_steps_that_drop_rows_fail_the_fit_as_one_by_one():
    X, y = _data()
    est = _pipeline(("first", FunctionTransformer(_drop_far_rows)),
                    ("poly", PolynomialFeatures(1, include_bias=False)))
    candidates = [{"model__C": 0.1}, {"model__C": 1.0}]
    a = _evaluator(est, X, y, batched=True, error_score=0.25).evaluate_partitions(
        X, y, candidates, {})
    b = _evaluator(est, X, y, batched=False, error_score=0.25).evaluate_partitions(
        X, y, candidates, {})
    assert (b == 0.25).mean() > 0.5  # most partitions lose a row
    np.testing.assert_array_equal(a == 0.25, b == 0.25)


def _first_column_if_led_high(Z):
    """A width that depends on the rows: none at all unless the first row starts above 0.5."""
    return Z[:, :1] if Z[0, 0] > 0.5 else Z[:, :0]


def _drop_empty_columns(Z):
    """A width that depends on the rows: the columns that are not 0 in every row."""
    Z = np.asarray(Z, dtype=float)
    return Z[:, (Z != 0).any(axis=0)]


def test_transformed_units_of_varying_width_are_stacked_by_width():
    """Widths that differ between fits cannot be stacked together: each width is its own
    stack, and a unit's rows are the same whatever the other units' widths."""
    X, y = _data(n=200)
    low, high = np.flatnonzero(X[:, 0] <= 0.5), np.flatnonzero(X[:, 0] > 0.5)
    units = [(0, 0, low[:50], low[50:60]), (1, 0, high[:50], high[50:60])]
    template = candidate_template(
        _pipeline(("first", FunctionTransformer(_first_column_if_led_high))), {})
    padding = make_padding(X, y, np.unique(y))
    stacks, failed = _partitions.transformed_units(template, X, y, units, padding)
    assert failed == [] and sorted(Z.shape[1] for Z, _, _ in stacks) == [0, 1]
    (alone, _, alone_units), = _partitions.transformed_units(template, X, y, units[1:],
                                                              padding)[0]
    Z, labels, rows = next(stack for stack in stacks if stack[0].shape[1] == 1)
    assert Z.shape == (50 + len(padding) + 10, 1) and len(labels) == len(Z)
    np.testing.assert_array_equal(Z, alone)
    assert [u[:2] for u in rows] == [u[:2] for u in alone_units] == [(1, 0)]


@pytest.mark.parametrize("kind", ["width", "format"])
def test_one_record_changes_the_utilities_of_its_own_partition_only(kind):
    """A data-independent step whose output width (or type) depends on the rows it sees
    (docs/grid_search.md, "Partition fits that mimic the returned model"). The batched fits
    (the returned model in miniature) and the one-by-one fits compute different utilities by
    design, so which path the partitions take must not depend on the data: a record that gives
    its own fits another width moved every partition to the one-by-one path before (59 of 60
    utilities changed, 19.7 times the sensitivity).
    Seeded: the noise is the same on both neighbours, so only the record's partition may
    change."""
    X, y = _data(n=1200, d=4)
    X = np.hstack([X, np.zeros((len(X), 1))])  # an indicator no record sets
    neighbour = X.copy()
    neighbour[17, -1] = 1.0
    step = (FunctionTransformer(_drop_empty_columns) if kind == "width"
            else FunctionTransformer(_sparse_if_indicator))
    est = _pipeline(("first", step))
    candidates = [{"model__C": 0.01}, {"model__C": 1.0}, {"model__C": 100.0}]
    evaluator = _evaluator(est, X, y, batched=True)
    before = evaluator.evaluate_partitions(X, y, candidates, {})
    after = _evaluator(est, neighbour, y, batched=True).evaluate_partitions(
        neighbour, y, candidates, {})
    own = [j for j, rows in enumerate(evaluator.partitions(len(X))) if 17 in rows]
    changed = np.flatnonzero((before != after).any(axis=0))
    assert set(changed.tolist()) <= set(own)
    assert np.abs(before - after).max() <= 1.0


def _sparse_if_indicator(Z):
    """A type that depends on the rows: sparse as soon as one row sets the last column."""
    import scipy.sparse as sp

    Z = np.asarray(Z, dtype=float)
    return sp.csr_matrix(Z) if Z[:, -1].any() else Z
