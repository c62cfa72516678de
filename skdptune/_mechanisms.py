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

__all__ = ["Laplace", "LaplaceBoundedDomain", "LaplaceTruncated", "Vector", "bounded_domain_many",
           "bounded_domain_scales", "bounded_domain_draws", "truncated_draws", "truncated_many"]

#: tries drawn at most in one round of :func:`bounded_domain_draws` (a few megabytes)
TRIES_PER_ROUND = 2**16


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
        return values - scale * _standard_laplace(self._rng, values.size)


class LaplaceTruncated(_ChecksOnce, dp.LaplaceTruncated):
    """diffprivlib's :class:`~diffprivlib.mechanisms.LaplaceTruncated`, its parameters checked
    once (a scaler's means, drawn for thousands of runs: :func:`truncated_many`)."""


class LaplaceBoundedDomain(_ChecksOnce, dp.LaplaceBoundedDomain):
    """diffprivlib's :class:`~diffprivlib.mechanisms.LaplaceBoundedDomain`, its parameters
    checked once (a scaler's variances: :func:`bounded_domain_many`)."""


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


def _standard_laplace(rng, count: int) -> np.ndarray:
    """``count`` draws of diffprivlib's Laplace sampler as ``randomise`` makes them one by one:
    four uniforms per draw from ``rng``, in order, through ``_laplace_sampler`` elementwise."""
    u = _uniforms(rng, 4 * count).reshape(count, 4)
    return dp.Laplace._laplace_sampler(u[:, 0], u[:, 1], u[:, 2], u[:, 3])


def truncated_many(mechanisms, values, rng) -> np.ndarray:
    """``np.array([m.randomise(v) for m, v in zip(mechanisms, values)])`` for diffprivlib
    ``LaplaceTruncated`` mechanisms sharing the generator ``rng`` (each its own sensitivity,
    epsilon and bounds): their parameters checked, the four uniforms per value read in
    ``randomise``'s order, diffprivlib's sampler and arithmetic applied elementwise -- the
    Laplace draw ``value - scale * standard`` at ``scale = sensitivity / (epsilon - log(1 -
    delta))``, then the truncation to ``[lower, upper]``."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values.copy()
    for mechanism, value in zip(mechanisms, values, strict=True):
        mechanism._check_all(float(value))
    scale = np.array([m.sensitivity / (m.epsilon - np.log(1 - m.delta)) for m in mechanisms])
    lower = np.array([m.lower for m in mechanisms], dtype=float)
    upper = np.array([m.upper for m in mechanisms], dtype=float)
    noisy = values - scale * _standard_laplace(rng, values.size)
    return np.where(noisy > upper, upper, np.where(noisy < lower, lower, noisy))


def truncated_draws(values, epsilon, sensitivity, lower, upper, rng) -> np.ndarray:
    """One draw of diffprivlib's ``LaplaceTruncated(epsilon=epsilon, delta=0,
    sensitivity=sensitivity, lower=lower, upper=upper)`` per value (arrays broadcast to
    ``values``' shape; the caller checks the parameters): ``randomise``'s sampler and arithmetic
    elementwise, four uniforms per value from ``rng``, read in row-major order of ``values``."""
    values = np.asarray(values, dtype=float)
    scale = np.asarray(sensitivity, dtype=float) / np.asarray(epsilon, dtype=float)  # delta = 0
    noisy = values - scale * _standard_laplace(rng, values.size).reshape(values.shape)
    return np.where(noisy > upper, upper, np.where(noisy < lower, lower, noisy))


def bounded_domain_scales(epsilon, sensitivity, lower, upper) -> np.ndarray:
    """The scale diffprivlib's ``LaplaceBoundedDomain(epsilon=epsilon, delta=0,
    sensitivity=sensitivity, lower=lower, upper=upper)._find_scale()`` finds, for arrays of
    settings (broadcast together) at once: its bisection run elementwise in lockstep, each
    element's interval halved until it stops shrinking, as ``_find_scale`` halves it (the
    steps of :func:`skdptune._scale_cache._bisected_scale` on arrays; an element whose interval
    has stopped shrinking keeps it while the others go on). Every ``sensitivity`` must be
    positive and every setting finite (the caller checks them)."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in (epsilon, sensitivity, lower, upper)))
    epsilon, sensitivity, lower, upper = (np.asarray(a, dtype=float).ravel() for a in
                                          np.broadcast_arrays(epsilon, sensitivity, lower, upper))
    diameter = upper - lower
    # the three exponents' numerators, negated: -s, -(D - s), -D
    numerators = -np.stack([sensitivity, diameter - sensitivity, diameter])

    def f(width):
        exponentials = np.exp(numerators / width)
        c = (2 - exponentials[0] - exponentials[1]) / (1 - exponentials[2])
        return sensitivity / (epsilon - np.log(c))  # delta = 0: log(1 - delta) is 0

    left = sensitivity / epsilon
    right = f(left)
    active = (right - left) * 2 > right - left
    while active.any():
        old_size = right - left
        middle = (right + left) / 2
        value = f(middle)
        np.copyto(left, middle, where=active & (value >= middle))
        np.copyto(right, middle, where=active & (value <= middle))
        active &= old_size > right - left
    return ((right + left) / 2).reshape(shape)


def bounded_domain_draws(values, scales, lower, upper, rng) -> np.ndarray:
    """One draw of diffprivlib's ``LaplaceBoundedDomain`` per value, at the given ``scales``
    (:func:`bounded_domain_scales`) on ``[lower, upper]`` (arrays broadcast to ``values``'
    shape): each value clipped to its domain, then ``value + scale * standard`` for i.i.d.
    draws of the Laplace sampler until one lies inside -- ``randomise``'s rejection, whose
    result is the first of an i.i.d. sequence of tries inside the domain, with the values'
    tries made together (``2^r`` more per value still outside in round ``r``, up to 100,000,
    as ``randomise`` grows its batches, and at most :data:`TRIES_PER_ROUND` tries in a round
    over all values: the memory of a round is bounded). The same distribution as
    ``randomise``, value by value; not its order of reading ``rng``. Every scale must be
    finite and positive (else ``ValueError``: no try could land inside a domain reliably)."""
    shape = np.shape(values)
    values, scales, lower, upper = (np.asarray(a, dtype=float).ravel() for a in
                                    np.broadcast_arrays(values, scales, lower, upper))
    if not np.all(np.isfinite(scales) & (scales > 0)):
        raise ValueError("every scale of a bounded-domain Laplace draw must be finite and positive")
    out = np.minimum(np.maximum(values, lower), upper)
    pending, tries = np.arange(out.size), 1
    while pending.size:
        tries = max(1, min(tries, TRIES_PER_ROUND // pending.size))
        standard = _standard_laplace(rng, pending.size * tries).reshape(pending.size, tries)
        noisy = out[pending, None] + scales[pending, None] * standard
        inside = (noisy >= lower[pending, None]) & (noisy <= upper[pending, None])
        found = inside.any(axis=1)
        first = np.argmax(inside, axis=1)
        out[pending[found]] = noisy[found, first[found]]
        pending, tries = pending[~found], min(100000, tries * 2)
    return out.reshape(shape)


def bounded_domain_many(mechanisms, values, rng) -> np.ndarray:
    """``np.array([m.randomise(v) for m, v in zip(mechanisms, values)])`` for diffprivlib
    ``LaplaceBoundedDomain`` mechanisms sharing the generator ``rng``, whose scales are found
    (``m._scale``). Each value is clipped to its domain and drawn by rejection as ``randomise``
    draws it: ``4 k`` uniforms read for ``k`` tries at once (``k`` = 1, 2, 4, ... up to 100,000;
    try ``t`` of a batch takes its rows' ``t``-th entries), the first try inside ``[lower,
    upper]`` taken.

    The uniforms are one stream (:class:`_Stream`), read ahead and turned into the sampler's
    factors ``log(1 - u)`` and ``cos(pi u)`` elementwise at once; each try is then
    ``value + scale * (log(1 - u1) cos(pi u2) + log(1 - u3) cos(pi u4))`` in the sampler's
    order of operations on those factors -- IEEE arithmetic on the same doubles, so the draws
    are ``randomise``'s, bit for bit. The generator is read ahead of the last draw: its state
    afterwards is not ``randomise``'s (the scaler reads it no further)."""
    values = np.asarray(values, dtype=float)
    for mechanism, value in zip(mechanisms, values, strict=True):
        mechanism._check_all(float(value))
    stream = _Stream(rng, 8 * values.size)
    out = []
    for mechanism, value in zip(mechanisms, values.tolist(), strict=True):
        value = max(min(value, mechanism.upper), mechanism.lower)
        samples = 1
        while True:
            found = stream.first_inside(value, mechanism._scale, mechanism.lower,
                                        mechanism.upper, samples)
            if found is not None:
                out.append(found)
                break
            samples = min(100000, samples * 2)
    return np.array(out, dtype=float)


class _Stream:
    """The uniforms of a generator read ahead, with the factors of diffprivlib's Laplace
    sampler, ``log(1 - u)`` and ``cos(pi u)``, computed for each at once (as the sampler
    computes them, elementwise)."""

    def __init__(self, rng, ahead):
        self.rng, self.ahead, self.at = rng, max(ahead, 4), 0
        self.logs, self.cosines = [], []

    def _read(self, count):
        while len(self.logs) < self.at + count:
            u = _uniforms(self.rng, max(count, self.ahead))
            self.logs.extend(np.log(1 - u).tolist())
            self.cosines.extend(np.cos(np.pi * u).tolist())

    def first_inside(self, value, scale, lower, upper, samples):
        """The first of ``samples`` tries (``4 samples`` uniforms, read as ``randomise`` reads
        them) inside ``[lower, upper]``, or ``None``; the uniforms are consumed either way."""
        self._read(4 * samples)
        at, logs, cosines = self.at, self.logs, self.cosines
        self.at += 4 * samples
        for t in range(samples):
            noisy = value + scale * (logs[at + t] * cosines[at + samples + t]
                                     + logs[at + 2 * samples + t]
                                     * cosines[at + 3 * samples + t])
            if lower <= noisy <= upper:
                return noisy
        return None
