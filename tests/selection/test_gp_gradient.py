"""The GP of DP-GIBO: gradient weights, covariance trace, data-independent acquisition."""

import numpy as np
import pytest

from skdptune.selection._gp_gradient import RBFGradientModel


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


@pytest.mark.parametrize("kw", [{"lengthscale": 0.0}, {"lengthscale": 1.0, "noise": -1.0},
                                {"lengthscale": float("inf")}])
def test_invalid_hyperparameters(kw):
    with pytest.raises(ValueError):
        RBFGradientModel(**kw)
