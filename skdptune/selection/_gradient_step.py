"""The step rules of DP-GIBO: where the next point goes, from released gradients only.

A step rule is post-processing. It reads the current point (itself released), the **released**
noisy gradient of :meth:`~skdptune.selection._noisy_gradient.NoisyGradient.step` and public
constants -- the learning rate, the dimension and the noise scale ``sigma`` of the released
gradient, ``(2B/m) * sqrt(T) / mu`` per coordinate, a function of ``B``, ``m``, ``T`` and ``mu``
-- and nothing else. So it costs no privacy, and a test replays a search's released trajectory
from its released gradients alone.

Two rules:

* :class:`SignalToNoiseStep` (the default of :class:`~skdptune.DPGIBOSearchCV`): momentum of the
  released gradients, ``v_t`` (an exponential average with bias correction, weight ``beta``),
  normalised by the root mean square of their norms, ``r_t`` (the same average of
  ``||g_t||^2``), and shrunk by the public signal-to-noise estimate
  ``s_t = max(0, 1 - d sigma^2 / r_t^2)``::

      theta_{t+1} = clip(theta_t - lr * s_t * v_t / r_t, 0, 1)

  ``||v_t|| / r_t`` is at most 1 and near 1 only when successive gradients agree, so the step
  is about ``lr`` long where the gradient is consistent and shorter where it is mostly noise --
  whether that noise is the Gaussian mechanism's (which ``s_t`` removes in expectation:
  ``E||g_t||^2 = ||grad||^2 + d sigma^2``) or the DP fits' (which the averaging damps). Unlike
  AdaGrad, small coordinates stay small (one normalisation for all coordinates).
* :class:`AdaGradStep`: per-coordinate AdaGrad, the DP-GIBO reference's rule. Every coordinate
  moves by about ``lr / sqrt(t)`` whatever its signal, which turns noise into full steps on a
  flat objective.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["AdaGradStep", "SignalToNoiseStep"]


def _check(learning_rate: float, noise_scale: float) -> None:
    if not (math.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning_rate must be finite and positive; got {learning_rate!r}")
    if not (math.isfinite(noise_scale) and noise_scale >= 0):
        raise ValueError(f"noise_scale must be finite and non-negative; got {noise_scale!r}")


class SignalToNoiseStep:
    """Momentum step normalised by the gradients' RMS norm, shrunk by the public noise level.

    Parameters
    ----------
    learning_rate : float
        Step length (unit-cube units) when successive gradients agree and the noise is small.
    noise_scale : float
        Public standard deviation ``sigma`` of the Gaussian noise in each coordinate of a
        released gradient.
    momentum : float, default=0.5
        Weight ``beta`` of the past in both exponential averages (0: the latest gradient only,
        then ``v_t / r_t`` is a unit vector).
    """

    def __init__(self, learning_rate: float, noise_scale: float, momentum: float = 0.5) -> None:
        _check(learning_rate, noise_scale)
        if not (0.0 <= momentum < 1.0):
            raise ValueError(f"momentum must lie in [0, 1); got {momentum!r}")
        self.learning_rate = float(learning_rate)
        self.noise_scale = float(noise_scale)
        self.momentum = float(momentum)
        self._velocity = None
        self._square = 0.0
        self._weight = 0.0

    def shrinkage(self, mean_square_norm: float, n_dims: int) -> float:
        """``max(0, 1 - d sigma^2 / r^2)``: the estimated share of signal in ``r^2``."""
        if mean_square_norm <= 0.0:
            return 0.0
        return max(0.0, 1.0 - n_dims * self.noise_scale**2 / mean_square_norm)

    def __call__(self, theta: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        """The next point in the cube, from the current one and a **released** gradient."""
        gradient = np.asarray(gradient, dtype=float)
        beta = self.momentum
        if self._velocity is None:
            self._velocity = np.zeros_like(gradient)
        self._velocity = beta * self._velocity + (1.0 - beta) * gradient
        self._square = beta * self._square + (1.0 - beta) * float(gradient @ gradient)
        self._weight = beta * self._weight + (1.0 - beta)  # bias correction, as in Adam
        velocity, square = self._velocity / self._weight, self._square / self._weight
        if square <= 0.0:
            return np.asarray(theta, dtype=float).copy()
        step = self.shrinkage(square, gradient.size) * velocity / math.sqrt(square)
        return np.clip(theta - self.learning_rate * step, 0.0, 1.0)


class AdaGradStep:
    """Per-coordinate AdaGrad (the DP-GIBO reference's rule), for comparison.

    Parameters
    ----------
    learning_rate : float
        About the first step of each coordinate (unit-cube units).
    noise_scale : float
        Unused (the rule ignores the noise level); kept for a common signature.
    """

    def __init__(self, learning_rate: float, noise_scale: float = 0.0) -> None:
        _check(learning_rate, noise_scale)
        self.learning_rate = float(learning_rate)
        self.noise_scale = float(noise_scale)
        self._squares = None

    def __call__(self, theta: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        """The next point in the cube, from the current one and a **released** gradient."""
        gradient = np.asarray(gradient, dtype=float)
        if self._squares is None:
            self._squares = np.zeros_like(gradient)
        self._squares += gradient**2
        step = gradient / (np.sqrt(self._squares) + 1e-8)
        return np.clip(theta - self.learning_rate * step, 0.0, 1.0)
