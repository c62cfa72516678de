"""Randomized repetition (Papernot & Steinke 2022, generalising Liu & Talwar 2019).

Run an ``(eps_Q, delta_Q)``-DP base algorithm ``Q`` a random number ``K`` of times, drawn
independently of the data, and release only the best run (highest noisy score) -- its
parameters, noisy score and trained model. The privacy of the whole depends on the law of
``K`` (see :func:`skdptune.accounting.repetition_epsilon`):

===================== ========================================= ========================
``distribution``      law of K (mean ``mean``)                  pure-DP bound (Cor. 3)
===================== ========================================= ========================
``"logarithmic"``     truncated negative binomial, eta = 0       2 eps_Q
``"geometric"``       truncated negative binomial, eta = 1       3 eps_Q
``"negative_binomial"`` truncated negative binomial, eta > -1    (2 + eta) eps_Q
``"poisson"``         Poisson(mean)                              none (delta > 0)
``"fixed"``           exactly ``mean`` runs (baseline)           mean * eps_Q
===================== ========================================= ========================

What must NOT be released: ``K`` itself and the outputs of the losing runs. Conditional on
``K = k`` the best of ``k`` runs can cost up to ``k * eps_Q`` (e.g. the maximum of ``k``
randomized-response bits), so releasing ``K`` alongside the winner voids the bound; releasing
every run's noisy score is plain ``K``-fold composition. The searches therefore keep neither.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import poisson

from ..accounting import truncated_negative_binomial_gamma
from ..events import EpsilonDeltaEvent, RepeatAndSelectEvent

__all__ = ["RandomizedRepetition", "DISTRIBUTION_ETA"]

# eta of the truncated negative binomial for the named special cases
DISTRIBUTION_ETA = {"logarithmic": 0.0, "geometric": 1.0}
_DISTRIBUTIONS = ("logarithmic", "geometric", "negative_binomial", "poisson", "fixed")


class RandomizedRepetition:
    """Law of the number of runs ``K`` and the selection of the best run.

    Parameters
    ----------
    distribution : {"logarithmic", "geometric", "negative_binomial", "poisson", "fixed"}
        Law of ``K``.
    mean : float
        ``E[K]`` (for ``"fixed"``: the exact number of runs, an integer).
    eta : float or None
        Shape of the truncated negative binomial, in (-1, inf); required for
        ``"negative_binomial"`` only.
    """

    def __init__(self, distribution: str, mean: float, eta: float | None = None) -> None:
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {_DISTRIBUTIONS}; got {distribution!r}")
        if not (math.isfinite(mean) and mean >= 1):
            raise ValueError(f"the expected number of runs must be >= 1; got {mean!r}")
        if distribution == "negative_binomial":
            if eta is None or not (eta > -1 and math.isfinite(eta)):
                raise ValueError("distribution='negative_binomial' needs eta in (-1, inf); "
                                 f"got {eta!r}")
        elif eta is not None and distribution in DISTRIBUTION_ETA:
            if eta != DISTRIBUTION_ETA[distribution]:
                raise ValueError(f"distribution={distribution!r} fixes eta="
                                 f"{DISTRIBUTION_ETA[distribution]}; got eta={eta!r}")
        if distribution == "fixed" and mean != int(mean):
            raise ValueError(f"distribution='fixed' needs an integer number of runs; got {mean}")
        self.distribution = distribution
        self.mean = float(mean)
        self.eta = DISTRIBUTION_ETA.get(distribution, eta)
        # the sampler must use exactly the gamma the accounting assumes
        self.gamma = (truncated_negative_binomial_gamma(self.mean, self.eta)
                      if self.is_truncated_negative_binomial else None)

    @property
    def is_truncated_negative_binomial(self) -> bool:
        return self.distribution in ("logarithmic", "geometric", "negative_binomial")

    def privacy_event(self, epsilon_run: float, delta_run: float = 0.0) -> RepeatAndSelectEvent:
        """Cost description of the repetition of an ``(epsilon_run, delta_run)``-DP run."""
        return RepeatAndSelectEvent(
            base=EpsilonDeltaEvent(epsilon_run, delta_run, "one run"),
            distribution=self.distribution, mean=self.mean, eta=self.eta,
            name=f"randomized repetition ({self.distribution}, E[K]={self.mean:g})",
        )

    def sample(self, rng: np.random.RandomState) -> int:
        """Draw ``K`` (data-independent). Never release the value."""
        if self.distribution == "fixed":
            return int(self.mean)
        if self.distribution == "poisson":
            return int(rng.poisson(self.mean))
        return self._sample_truncated_negative_binomial(rng)

    def _first_probability(self) -> float:
        """P[K = 1] of the truncated negative binomial."""
        gamma, eta = self.gamma, self.eta
        if gamma >= 1.0:  # E[K] = 1: K = 1 surely
            return 1.0
        if eta == 0.0:
            return (1.0 - gamma) / math.log(1.0 / gamma)
        return eta * (1.0 - gamma) / (gamma ** (-eta) - 1.0)

    def _sample_truncated_negative_binomial(self, rng) -> int:
        """Exact inverse-CDF draw from P[K=k] = C(k+eta-1, k) (1-gamma)^k / Z, k >= 1.

        ``Z = (gamma^-eta - 1)`` for eta != 0 and ``log(1/gamma)`` for eta = 0 (logarithmic);
        successive probabilities follow ``p(k+1) / p(k) = (k + eta) / (k + 1) * (1 - gamma)``.
        """
        q, eta = 1.0 - self.gamma, self.eta
        p = self._first_probability()
        u = rng.uniform()
        k, cdf = 1, p
        while cdf < u and p > 0.0:
            p *= (k + eta) / (k + 1) * q
            k += 1
            cdf += p
        return k

    def pmf(self, k) -> np.ndarray:
        """P[K = k] for integers ``k >= 0`` (for tests and plots)."""
        k = np.asarray(k, dtype=int)
        if self.distribution == "poisson":
            return poisson.pmf(k, self.mean)
        if self.distribution == "fixed":
            return (k == self.mean).astype(float)
        probabilities = np.zeros(int(k.max()) + 1)
        p = self._first_probability()
        for j in range(1, len(probabilities)):
            probabilities[j] = p
            p *= (j + self.eta) / (j + 1) * (1.0 - self.gamma)
        return probabilities[k]

    def selection_noise(self, noise_scale: float) -> float:
        """How far the best noisy score's run lands from the best run, in expectation at most,
        for scores released with Laplace noise of scale ``noise_scale``: ``2 b (ln E[K] + 1)``.
        Public (``E[K]`` and ``b`` are).

        The selected run's true score is at least its noisy score minus its noise, its noisy
        score at least the best run's, and that at least the best run's true score minus its
        noise: the loss is at most ``2 max_i |Z_i|`` over the ``K`` runs. ``|Z_i|`` is
        exponential with mean ``b``, and the maximum of ``K`` of them has mean ``b H_K <=
        b (ln K + 1)`` (``H_K`` the harmonic number; 0 when ``K = 0``); by Jensen's inequality
        ``E[ln K] <= ln E[K]`` (for ``"poisson"`` over ``K >= 1``, where the bound, increasing
        in ``P[K >= 1]``, is largest at 1). So the expected loss is below
        ``2 b (ln E[K] + 1)``: many runs choose among many noise draws, and the largest of
        them grows like ``ln E[K]``.
        """
        return float(2.0 * noise_scale * (math.log(self.mean) + 1.0))

    @staticmethod
    def select(noisy_scores: np.ndarray) -> int:
        """Index of the best run (highest noisy score; ties: the first)."""
        return int(np.argmax(noisy_scores))
