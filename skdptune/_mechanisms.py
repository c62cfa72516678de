"""diffprivlib's mechanisms applied to many values, their parameters checked on the first draw.

diffprivlib's ``randomise`` re-validates every parameter of its mechanism (``_check_all``) on
each call. Where skdptune applies one mechanism to many values -- the entries of
``SSPRegressor``'s statistics, the objective perturbations of thousands of batched logistic
fits -- nothing changes the mechanism's parameters between the calls, and every value is a
float, so the checks run on the first call only. The draws are ``randomise``'s own: the same
generator, read in the same order, and the same arithmetic (tests/test_mechanisms.py).

:meth:`Laplace.randomise_many` randomises a vector of values in one go: the uniforms
``randomise`` reads from the generator (four per value, in the same order) are read at once, and
diffprivlib's own sampler turns them into the noise elementwise -- the array ``[m.randomise(v)
for v in values]``, bit for bit, without a Python call per value.
"""

from __future__ import annotations

import diffprivlib.mechanisms as dp
import numpy as np

__all__ = ["Laplace", "Vector"]


class _ChecksOnce:
    """``_check_all`` on the first ``randomise`` only (the parameters are fixed by then)."""

    _checked = False

    def _check_all(self, value):
        if not self._checked:
            super()._check_all(value)
            self._checked = True
        return True


class Laplace(_ChecksOnce, dp.Laplace):
    """diffprivlib's :class:`~diffprivlib.mechanisms.Laplace`, its parameters checked once (on
    ``SSPRegressor``'s statistics they were two thirds of the noise's time)."""

    def randomise_many(self, values) -> np.ndarray:
        """``np.array([self.randomise(v) for v in values])`` (``values``: a 1-d array of
        floats): ``randomise``'s checks on the first value, its four uniforms per value read
        from the generator in the same order, its sampler and arithmetic applied elementwise."""
        values = np.asarray(values, dtype=float)
        if values.size == 0:
            return values.copy()
        self._check_all(float(values[0]))
        scale = self.sensitivity / (self.epsilon - np.log(1 - self.delta))
        u = _uniforms(self._rng, 4 * values.size).reshape(values.size, 4)
        standard = self._laplace_sampler(u[:, 0], u[:, 1], u[:, 2], u[:, 3])
        return values - scale * standard


class Vector(_ChecksOnce, dp.Vector):
    """diffprivlib's :class:`~diffprivlib.mechanisms.Vector`, its parameters checked once (10
    ms of 26 for 660 batched fits' draws)."""


def _uniforms(rng, count: int) -> np.ndarray:
    """``count`` successive ``rng.random()`` draws as an array: numpy's ``RandomState`` fills
    an array with the very doubles its successive calls return; any other generator
    (diffprivlib's secure ``secrets.SystemRandom``) is called once per draw."""
    if isinstance(rng, np.random.RandomState):
        return rng.random_sample(count)
    return np.array([rng.random() for _ in range(count)], dtype=float)
