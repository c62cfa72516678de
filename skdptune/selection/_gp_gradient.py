"""The Gaussian-process model of DP-GIBO: gradient estimates and where to query next.

Gradient-informative Bayesian optimisation (GIBO; Müller, von Rohr & Trimpe 2021; made private
by the DP-GIBO paper on scalable differentially private Bayesian optimisation) follows the
gradient of a GP posterior mean of the validation loss. This module holds the GP part. It
never sees data: it takes query points and returns *weights*, and the private part
(:mod:`skdptune.selection._noisy_gradient`) applies them to the per-example losses. So the
acquisition -- which points to query next -- depends only on the kernel and on the points
queried so far, which are themselves post-processing of released (noisy) gradients. It is
data-independent, and a test swaps the dataset to show it.

The GP
------
Zero-mean-after-centring GP on the unit cube with the isotropic RBF kernel
``k(x, z) = s2 * exp(-||x - z||^2 / (2 l^2))`` and observation noise ``noise`` (its variance,
covering the randomness of a DP fit). The hyperparameters ``(l, s2, noise)`` are fixed and
public -- never fitted on private losses, which would make them a release.

With query points ``Z`` (N x d), ``K = k(Z, Z) + noise * I`` and, at the current point
``theta``, ``J = d/dtheta k(theta, Z)`` (d x N, column ``j`` equal to
``-(theta - z_j) / l^2 * k(theta, z_j)``):

* gradient of the posterior mean for observations ``y``: ``J K^-1 (y - c)``. It is **linear in
  y**: with ``W = K^-1 J^T`` (N x d) the gradient is ``(y - c) @ W``, so the per-example
  gradients of a whole matrix of per-example losses are one product ``(Y - c) @ W``;
* posterior covariance of the gradient: ``(s2 / l^2) I - J K^-1 J^T``. Its trace measures how
  uncertain the gradient estimate still is; GIBO places new points to minimise it (greedily, one
  point at a time, as the GIBO authors do).

Adding one point ``z`` to ``Z`` changes the trace by a rank-one term (block inverse of ``K``):
``trace(Z + z) = trace(Z) - ||g - J a||^2 / s`` with ``b = k(Z, z)``, ``a = K^-1 b``,
``s = k(z, z) + noise - b . a`` (the Schur complement) and ``g = d/dtheta k(theta, z)``. The
acquisition scores its random candidates with it in one vectorised pass and refines the best
with its analytic gradient in ``z``, instead of a Cholesky factorisation per candidate and
finite differences (the public acquisition was 45 % of a DPGIBOSearchCV fit on Adult).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize

__all__ = ["RBFGradientModel"]


class RBFGradientModel:
    """GP with a fixed isotropic RBF kernel on the unit cube, for gradients at a point.

    Parameters
    ----------
    lengthscale : float
        ``l``, in unit-cube units.
    signal_variance : float, default=1.0
        ``s2``; the gradient weights do not depend on it (only on ``noise / s2``), the
        covariance trace scales with it.
    noise : float, default=0.01
        Observation-noise variance, relative to the loss scale of the observations.
    """

    def __init__(self, lengthscale: float, signal_variance: float = 1.0,
                 noise: float = 0.01) -> None:
        for name, value in (("lengthscale", lengthscale), ("signal_variance", signal_variance)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be finite and positive; got {value!r}")
        if not (math.isfinite(noise) and noise >= 0):
            raise ValueError(f"noise must be finite and non-negative; got {noise!r}")
        self.lengthscale = float(lengthscale)
        self.signal_variance = float(signal_variance)
        self.noise = float(noise)

    # -- kernel -----------------------------------------------------------------------------
    def kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``k(A, B)``, shape ``(len(A), len(B))``."""
        A, B = np.atleast_2d(A), np.atleast_2d(B)
        sq = (np.sum(A**2, axis=1)[:, None] + np.sum(B**2, axis=1)[None, :] - 2.0 * A @ B.T)
        return self.signal_variance * np.exp(-np.maximum(sq, 0.0) / (2.0 * self.lengthscale**2))

    def _kernel_gradient(self, theta: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """``J = d/dtheta k(theta, Z)``, shape ``(d, N)``."""
        k = self.kernel(theta[None, :], Z)[0]
        return -(theta[:, None] - Z.T) / self.lengthscale**2 * k[None, :]

    def _factor(self, Z: np.ndarray):
        K = self.kernel(Z, Z) + (self.noise + 1e-10 * self.signal_variance) * np.eye(len(Z))
        return cho_factor(K, lower=True)

    # -- what the private part uses -----------------------------------------------------------
    def gradient_weights(self, theta: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """``W`` (N x d) such that the posterior-mean gradient at ``theta`` is ``(y - c) @ W``.

        ``c`` is the prior mean (a constant, or a per-example constant: the gradient of a
        constant is zero, and ``W`` is applied after centring).
        """
        theta, Z = _check_point(theta), _check_points(Z, theta)
        J = self._kernel_gradient(theta, Z)
        return cho_solve(self._factor(Z), J.T)

    def gradient_covariance_trace(self, theta: np.ndarray, Z: np.ndarray) -> float:
        """Trace of the posterior covariance of the gradient at ``theta`` given points ``Z``."""
        theta = _check_point(theta)
        prior = theta.size * self.signal_variance / self.lengthscale**2
        if Z is None or len(Z) == 0:
            return float(prior)
        Z = _check_points(Z, theta)
        J = self._kernel_gradient(theta, Z)
        return float(prior - np.sum(J * cho_solve(self._factor(Z), J.T).T))

    # -- acquisition (data-independent) -------------------------------------------------------
    def acquire(self, theta: np.ndarray, Z: np.ndarray | None, n_points: int,
                rng: np.random.RandomState, *, n_candidates: int = 256) -> np.ndarray:
        """``n_points`` new query points in the unit cube, chosen greedily to minimise the
        gradient-covariance trace at ``theta``.

        Each point: the best of ``n_candidates`` random candidates around ``theta`` (Gaussian
        steps of one lengthscale, clipped into the cube), refined by L-BFGS-B inside the cube.
        Reads nothing but ``theta``, the points and ``rng``.
        """
        theta = _check_point(theta)
        d = theta.size
        points = np.empty((0, d)) if Z is None else _check_points(Z, theta)
        for _ in range(int(n_points)):
            trace = _TraceWithOneMore(self, theta, points)
            steps = rng.standard_normal((n_candidates, d)) * self.lengthscale
            candidates = np.clip(theta[None, :] + steps, 0.0, 1.0)
            scores = trace.values(candidates)
            best = int(np.argmin(scores))
            refined = minimize(trace.value_and_gradient, candidates[best], jac=True,
                               method="L-BFGS-B", bounds=[(0.0, 1.0)] * d,
                               options={"maxiter": 50})
            chosen = refined.x if refined.fun <= scores[best] else candidates[best]
            points = np.vstack([points, np.clip(chosen, 0.0, 1.0)])
        return points[len(points) - int(n_points):]


class _TraceWithOneMore:
    """The gradient-covariance trace at ``theta`` given the points ``Z`` and one more point, as a
    function of that point (the rank-one update of the module docstring)."""

    def __init__(self, gp: RBFGradientModel, theta: np.ndarray, Z: np.ndarray) -> None:
        self.gp, self.theta, self.Z = gp, theta, Z
        self.base = gp.gradient_covariance_trace(theta, Z)
        # k(z, z) plus the diagonal _factor adds
        self.c = gp.signal_variance * (1.0 + 1e-10) + gp.noise
        if len(Z):
            self.factor = gp._factor(Z)
            self.J = gp._kernel_gradient(theta, Z)

    def values(self, C: np.ndarray) -> np.ndarray:
        """The trace after adding each row of ``C`` (m x d) on its own; shape ``(m,)``."""
        G = self.gp._kernel_gradient(self.theta, C)  # d x m: g of every candidate
        if not len(self.Z):
            return self.base - np.sum(G**2, axis=0) / self.c
        B = self.gp.kernel(self.Z, C)
        A = cho_solve(self.factor, B)
        U = G - self.J @ A
        return self.base - np.sum(U**2, axis=0) / (self.c - np.sum(B * A, axis=0))

    def value_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        """The trace after adding ``z``, and its gradient in ``z``."""
        l2 = self.gp.lengthscale**2
        r = z - self.theta
        k_theta = self.gp.kernel(self.theta[None, :], z[None, :])[0, 0]
        u = r / l2 * k_theta  # g = d/dtheta k(theta, z)
        Du = k_theta / l2 * (np.eye(z.size) - np.outer(r, r) / l2)  # d g_p / d z_q
        s, ds = self.c, np.zeros(z.size)
        if len(self.Z):
            b = self.gp.kernel(self.Z, z[None, :])[:, 0]
            Db = -(z[None, :] - self.Z) / l2 * b[:, None]  # N x d
            a = cho_solve(self.factor, b)
            s = s - b @ a
            ds = -2.0 * Db.T @ a
            u = u - self.J @ a
            Du = Du - self.J @ cho_solve(self.factor, Db)
        q = u @ u
        return float(self.base - q / s), -2.0 * (Du.T @ u) / s + q / s**2 * ds


def _check_point(theta) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta must be a finite 1-d point; got shape {theta.shape}")
    return theta


def _check_points(Z, theta: np.ndarray) -> np.ndarray:
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    if Z.shape[1] != theta.size:
        raise ValueError(f"points must have {theta.size} coordinates; got shape {Z.shape}")
    return Z
