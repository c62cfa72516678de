"""The private step of DP-GIBO: a clipped mean of per-example gradients plus Gaussian noise.

Privacy argument (replace-one neighbours on the **validation rows**; the models that produced the
losses are fixed -- they are functions of the disjoint train rows only):

* ``G = (Y - c) @ W``: row ``i`` is validation example ``i``'s gradient estimate. ``Y[i]`` holds
  example ``i``'s losses at the query points, ``c`` is a per-example constant (its own mean
  loss) and ``W`` comes from the GP and the query points (data-independent), so row ``i``
  depends on example ``i`` only;
* each row is clipped to l2-norm ``B`` and the rows are averaged: replacing one example moves one
  term of the mean by at most ``2B``, so the mean has l2-sensitivity ``2B / m``;
* Gaussian noise of standard deviation ``sigma = (2B / m) / mu_step`` per coordinate makes the
  release ``mu_step``-GDP (Dong, Roth & Su 2022, Theorem 2.7). The noise comes from
  diffprivlib's ``GaussianAnalytic``, calibrated on the GDP curve: at ``eps_c = mu_step`` and
  ``delta_c = delta_mu(eps_c)`` the analytic Gaussian mechanism's scale is exactly
  ``sensitivity / mu_step`` (Balle & Wang 2018 calibrate to the same tight curve); the code
  checks the scale it obtained and never uses less noise;
* ``T`` such steps, adaptively (each step's query points depend on earlier noisy gradients),
  compose to ``sqrt(T) * mu_step``-GDP (Dong, Roth & Su, Corollary 3.3): ``mu_step = mu /
  sqrt(T)`` gives ``mu``-GDP for the whole optimisation.

The exact gradients never leave :meth:`NoisyGradient.step`.
"""

from __future__ import annotations

import math

import numpy as np
from diffprivlib.mechanisms import GaussianAnalytic

from ..accounting import gdp_delta
from ..events import GaussianDPEvent

__all__ = ["NoisyGradient", "clipped_mean"]


def clipped_mean(gradients: np.ndarray, clip: float) -> np.ndarray:
    """Mean of the rows of ``gradients`` after clipping each to l2-norm ``clip``.

    Replace-one sensitivity (l2) of the result: ``2 * clip / len(gradients)``.
    """
    gradients = np.asarray(gradients, dtype=float)
    norms = np.linalg.norm(gradients, axis=1)
    factors = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return np.mean(gradients * factors[:, None], axis=0)


class NoisyGradient:
    """``T`` noisy clipped-mean gradient releases, ``mu``-GDP in total on the validation rows.

    Parameters
    ----------
    mu : float
        GDP budget of all ``n_steps`` releases together.
    n_steps : int
        ``T``.
    clip : float
        ``B``: per-example gradients are clipped to this l2-norm.
    random_state : int, RandomState or None
        ``None``: diffprivlib's secure generator.
    """

    def __init__(self, mu: float, n_steps: int, clip: float, random_state=None) -> None:
        if not (math.isfinite(mu) and mu > 0):
            raise ValueError(f"mu must be finite and positive; got {mu!r}")
        if int(n_steps) != n_steps or n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer; got {n_steps!r}")
        if not (math.isfinite(clip) and clip > 0):
            raise ValueError(f"clip must be finite and positive; got {clip!r}")
        self.mu = float(mu)
        self.n_steps = int(n_steps)
        self.clip = float(clip)
        self.random_state = random_state

    @property
    def mu_step(self) -> float:
        """GDP parameter of one release: ``mu / sqrt(T)``."""
        return self.mu / math.sqrt(self.n_steps)

    def sensitivity(self, m: int) -> float:
        """l2 replace-one sensitivity of the clipped mean over ``m`` examples: ``2B / m``."""
        return 2.0 * self.clip / int(m)

    def noise_scale(self, m: int) -> float:
        """Standard deviation of the noise per coordinate: ``(2B / m) / mu_step``."""
        return self.sensitivity(m) / self.mu_step

    def noise_norm(self, m: int, n_dims: int) -> float:
        """Root-mean-square l2 norm of the noise vector of one release in ``n_dims``
        dimensions: ``noise_scale(m) * sqrt(n_dims)``. Public. The released mean has norm at
        most ``clip`` whatever the data: at or above it, every released gradient is at least
        as much noise as signal."""
        return self.noise_scale(m) * math.sqrt(int(n_dims))

    def privacy_event(self) -> GaussianDPEvent:
        """Cost description of all ``T`` releases: ``mu``-GDP on the validation rows."""
        return GaussianDPEvent(self.mu, name=f"{self.n_steps} noisy gradients ({self.mu:g}-GDP)")

    def mechanism(self, m: int, random_state=None) -> GaussianAnalytic:
        """diffprivlib's analytic Gaussian mechanism with a scale of at least ``noise_scale(m)``
        (above it by about 1e-9 relative)."""
        mu_step = self.mu_step
        # (mu_step, delta_mu(mu_step))-DP calibrates the analytic Gaussian mechanism to exactly
        # sensitivity / mu_step; a hair smaller delta gives a hair more noise, never less --
        # the check below is what the GDP guarantee rests on (diffprivlib's calibration is a
        # float bisection)
        for margin in (1e-9, 1e-7, 1e-5):
            delta = gdp_delta(mu_step, mu_step) * (1.0 - margin)
            mechanism = GaussianAnalytic(epsilon=mu_step, delta=delta,
                                         sensitivity=self.sensitivity(m),
                                         random_state=random_state)
            if math.sqrt(mechanism.variance(0.0)) >= self.noise_scale(m):
                return mechanism
        raise RuntimeError("the calibrated Gaussian noise is below the GDP requirement")

    def step(self, per_example_gradients: np.ndarray, random_state=None) -> np.ndarray:
        """One release: clipped mean of the rows plus Gaussian noise. PRIVATE input."""
        gradients = np.asarray(per_example_gradients, dtype=float)
        mean = clipped_mean(gradients, self.clip)
        mechanism = self.mechanism(len(gradients), random_state)
        return np.array([mechanism.randomise(float(v)) for v in mean])
