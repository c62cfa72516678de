"""The step rule of DP-GIBO: where the next point goes, from released gradients only.

A step rule is post-processing. It reads the current point (itself released), the **released**
noisy gradient of :meth:`~skdptune.selection._noisy_gradient.NoisyGradient.step` and public
constants -- the learning rate, the momentum, the dimension ``d`` and the noise scale ``sigma``
of a released gradient, ``(2B/m) * sqrt(T) / mu`` per coordinate (a function of ``B``, ``m``,
``T`` and ``mu``) -- and nothing else. So it costs no privacy, and a test replays a search's
released trajectory from its released gradients alone.

:class:`SignalToNoiseStep`: AdaGrad (the DP-GIBO reference's rule), shrunk by the public
signal-to-noise estimate of the released gradient::

    theta_{t+1} = clip(theta_t - lr * s_t * v_t / sqrt(S_t), 0, 1)
    s_t = max(0, 1 - d sigma^2 / r_t^2)

with ``S_t`` the per-coordinate sum of the squared released gradients (AdaGrad's accumulator),
``v_t`` the released gradient -- or, with ``momentum = beta > 0``, the bias-corrected
exponential average of the released gradients -- and ``r_t^2`` the same average of their squared
norms. Since ``E||g_t||^2 = ||grad||^2 + d sigma^2`` for a released ``g_t`` with Gaussian noise of
scale ``sigma``, ``s_t`` estimates the share of signal in it: a gradient that is no larger than
the mechanism's noise moves nothing, where plain AdaGrad (``s_t = 1``) would turn it into a
step of full size. The noise of the DP *fits* has no public scale; ``s_t`` cannot see it
(``docs/gibo.md`` measures what that costs).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SignalToNoiseStep"]


class SignalToNoiseStep:
    """AdaGrad steps shrunk by the public signal-to-noise estimate of the released gradient.

    Parameters
    ----------
    learning_rate : float
        AdaGrad's step size (unit-cube units): the first step of each coordinate is about
        ``learning_rate * s_1``.
    noise_scale : float
        Public standard deviation ``sigma`` of the Gaussian noise in each coordinate of a
        released gradient.
    momentum : float, default=0.0
        Weight ``beta`` of the past in the exponential averages ``v_t`` and ``r_t^2`` (0: the
        latest released gradient only).
    """

    def __init__(self, learning_rate: float, noise_scale: float, momentum: float = 0.0) -> None:
        if not (math.isfinite(learning_rate) and learning_rate > 0):
            raise ValueError(f"learning_rate must be finite and positive; got {learning_rate!r}")
        if not (math.isfinite(noise_scale) and noise_scale >= 0):
            raise ValueError(f"noise_scale must be finite and non-negative; got {noise_scale!r}")
        if not (0.0 <= momentum < 1.0):
            raise ValueError(f"momentum must lie in [0, 1); got {momentum!r}")
        self.learning_rate = float(learning_rate)
        self.noise_scale = float(noise_scale)
        self.momentum = float(momentum)
        self._velocity = None
        self._sums = None
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
            self._velocity, self._sums = np.zeros_like(gradient), np.zeros_like(gradient)
        self._velocity = beta * self._velocity + (1.0 - beta) * gradient
        self._square = beta * self._square + (1.0 - beta) * float(gradient @ gradient)
        self._weight = beta * self._weight + (1.0 - beta)  # bias correction, as in Adam
        self._sums += gradient**2
        velocity, square = self._velocity / self._weight, self._square / self._weight
        step = self.shrinkage(square, gradient.size) * velocity / (np.sqrt(self._sums) + 1e-12)
        return np.clip(theta - self.learning_rate * step, 0.0, 1.0)
