"""The GP of DP-GIBO: gradient weights, covariance trace, data-independent acquisition."""

import numpy as np
import pytest

from skdptune.selection._gp_gradient import RBFGradientModel, _TraceWithOneMore


def smooth(Z):
    return np.sin(2 * Z[:, 0]) + (Z[:, 1] - 0.3) ** 2


def smooth_gradient(theta):
    return np.array([2 * np.cos(2 * theta[0]), 2 * (theta[1] - 0.3)])


def test_posterior_mean_gradient_matches_a_known_smooth_function():
    theta = np.array([0.4, 0.6])
    offsets = np.stack(np.meshgrid(np.linspace(-0.1, 0.1, 5), np.linspace(-0.1, 0.1, 5)), -1)
    Z = theta + offsets.reshape(-1, 2)
    gp = RBFGradientModel(lengthscale=0.5, noise=1e-8)
    y = smooth(Z)
    gradient = (y - y.mean()) @ gp.gradient_weights(theta, Z)
    np.testing.assert_allclose(gradient, smooth_gradient(theta), atol=5e-3)


def test_vectorised_per_example_gradients_equal_the_loop():
    rng = np.random.RandomState(0)
    theta, Z = rng.uniform(size=3), rng.uniform(size=(7, 3))
    Y = rng.uniform(size=(20, 7))  # 20 examples' losses at 7 points
    gp = RBFGradientModel(lengthscale=0.4, noise=0.01)
    centred = Y - Y.mean(axis=1, keepdims=True)
    vectorised = centred @ gp.gradient_weights(theta, Z)
    K = gp.kernel(Z, Z) + (gp.noise + 1e-10) * np.eye(7)
    k = gp.kernel(theta[None, :], Z)[0]
    J = -(theta[:, None] - Z.T) / gp.lengthscale**2 * k[None, :]
    loop = np.array([J @ np.linalg.solve(K, row) for row in centred])
    np.testing.assert_allclose(vectorised, loop, rtol=1e-8, atol=1e-10)


def test_covariance_trace_shrinks_with_points_and_equals_the_prior_without():
    gp = RBFGradientModel(lengthscale=0.3, signal_variance=2.0, noise=0.01)
    theta = np.array([0.5, 0.5, 0.5])
    prior = gp.gradient_covariance_trace(theta, np.empty((0, 3)))
    assert prior == pytest.approx(3 * 2.0 / 0.3**2)
    points = np.empty((0, 3))
    traces = [prior]
    for z in np.random.RandomState(1).uniform(0.4, 0.6, size=(6, 3)):
        points = np.vstack([points, z])
        traces.append(gp.gradient_covariance_trace(theta, points))
    assert all(b <= a + 1e-9 for a, b in zip(traces, traces[1:], strict=False))
    assert traces[-1] < 0.5 * prior


def test_acquisition_is_deterministic_inside_the_cube_and_informative():
    gp = RBFGradientModel(lengthscale=0.3)
    theta = np.array([0.9, 0.1])
    a = gp.acquire(theta, None, 3, np.random.RandomState(5))
    b = gp.acquire(theta, None, 3, np.random.RandomState(5))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 2) and np.all((a >= 0) & (a <= 1))
    random_points = np.clip(theta + 0.3 * np.random.RandomState(0).standard_normal((3, 2)), 0, 1)
    assert gp.gradient_covariance_trace(theta, a) < gp.gradient_covariance_trace(theta,
                                                                                random_points)


@pytest.mark.parametrize("noise", [0.0, 0.01])
@pytest.mark.parametrize("n_points", [0, 1, 5])
def test_rank_one_scores_equal_the_trace_of_the_augmented_points(n_points, noise):
    rng = np.random.RandomState(n_points)
    gp = RBFGradientModel(lengthscale=0.35, signal_variance=1.5, noise=noise)
    theta, Z = rng.uniform(size=3), rng.uniform(size=(n_points, 3))
    C = rng.uniform(size=(40, 3))
    trace = _TraceWithOneMore(gp, theta, Z)
    direct = [gp.gradient_covariance_trace(theta, np.vstack([Z, c])) for c in C]
    np.testing.assert_allclose(trace.values(C), direct, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([trace.value_and_gradient(c)[0] for c in C], direct,
                               rtol=1e-9, atol=1e-9)


def test_rank_one_scores_near_existing_points_without_noise():
    """Candidates 1e-3 from a query point, noise 0: the Schur complement is small and the
    diagonal jitter of the factorisation decides the value (leaving it out errs by 5e-7)."""
    rng = np.random.RandomState(5)
    gp = RBFGradientModel(lengthscale=0.35, signal_variance=1.5, noise=0.0)
    theta, Z = rng.uniform(size=3), rng.uniform(size=(5, 3))
    C = Z[:3] + 1e-3 * rng.standard_normal((3, 3))
    direct = [gp.gradient_covariance_trace(theta, np.vstack([Z, c])) for c in C]
    np.testing.assert_allclose(_TraceWithOneMore(gp, theta, Z).values(C), direct, rtol=1e-9)


@pytest.mark.parametrize("n_points", [0, 1, 5])
def test_analytic_gradient_of_the_acquisition_objective(n_points):
    rng = np.random.RandomState(10 + n_points)
    gp = RBFGradientModel(lengthscale=0.3, noise=0.01)
    theta, Z = rng.uniform(size=3), rng.uniform(size=(n_points, 3))
    trace = _TraceWithOneMore(gp, theta, Z)
    for z in rng.uniform(size=(10, 3)):
        _, gradient = trace.value_and_gradient(z)
        h = 1e-6
        numeric = [(trace.value_and_gradient(z + h * e)[0]
                    - trace.value_and_gradient(z - h * e)[0]) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


def _reference_acquire(gp, theta, Z, n_points, rng, n_candidates=256):
    """The acquisition without the rank-one update: a Cholesky factorisation per candidate and
    finite-difference L-BFGS-B (the implementation it replaced)."""
    from scipy.optimize import minimize

    points = np.empty((0, theta.size)) if Z is None else Z
    for _ in range(n_points):
        def objective(z, current=points):
            return gp.gradient_covariance_trace(theta, np.vstack([current, z[None, :]]))
        candidates = np.clip(
            theta + rng.standard_normal((n_candidates, theta.size)) * gp.lengthscale, 0, 1)
        scores = [objective(c) for c in candidates]
        start = candidates[int(np.argmin(scores))]
        refined = minimize(objective, start, method="L-BFGS-B", bounds=[(0, 1)] * theta.size,
                           options={"maxiter": 50})
        points = np.vstack([points, refined.x if refined.fun <= min(scores) else start])
    return points[len(points) - n_points:]


@pytest.mark.parametrize("seed", range(6))
def test_acquisition_is_as_informative_as_the_direct_implementation(seed):
    rng = np.random.RandomState(seed)
    d = 2 + seed % 3
    gp = RBFGradientModel(lengthscale=0.3 * np.sqrt(d), noise=0.01)
    theta, Z = rng.uniform(size=d), rng.uniform(size=(2 * seed, d))
    fast = gp.acquire(theta, Z, 3, np.random.RandomState(seed))
    direct = _reference_acquire(gp, theta, Z, 3, np.random.RandomState(seed))
    assert fast.shape == direct.shape == (3, d)
    after = [gp.gradient_covariance_trace(theta, np.vstack([Z, new])) for new in (fast, direct)]
    assert after[0] <= after[1] * (1 + 1e-4)  # L-BFGS-B stops within its tolerances


@pytest.mark.parametrize("kw", [{"lengthscale": 0.0}, {"lengthscale": 1.0, "noise": -1.0},
                                {"lengthscale": float("inf")}])
def test_invalid_hyperparameters(kw):
    with pytest.raises(ValueError):
        RBFGradientModel(**kw)
