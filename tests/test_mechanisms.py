"""diffprivlib's mechanisms with their parameters checked on the first draw: the same draws
(skdptune/_mechanisms.py)."""

from __future__ import annotations

import numpy as np
import pytest
from diffprivlib import mechanisms as dp

from skdptune import _mechanisms


def _laplace(cls, seed):
    return cls(epsilon=0.7, delta=0.0, sensitivity=0.3, random_state=np.random.RandomState(seed))


def _vector(cls, seed):
    return cls(epsilon=1.3, dimension=5, alpha=0.01, function_sensitivity=0.25,
               data_sensitivity=2.0, n=400, random_state=np.random.RandomState(seed))


@pytest.mark.parametrize("make, value", [(_laplace, 0.25), (_vector, lambda w: 0.0)])
def test_the_draws_are_diffprivlibs(make, value):
    """Many draws in a row, and draws after reseeding the generator in place (how the searches
    use one mechanism for many fits), are diffprivlib's own, bit for bit."""
    mine = make(getattr(_mechanisms, make.__name__[1:].capitalize()), 3)
    theirs = make(getattr(dp, make.__name__[1:].capitalize()), 3)

    def draws(mechanism):
        out = []
        for _ in range(50):
            drawn = mechanism.randomise(value)
            out.append(drawn(np.ones(5)) if callable(drawn) else drawn)
        for seed in (11, 12, 11):
            mechanism._rng.seed(seed)
            drawn = mechanism.randomise(value)
            out.append(drawn(np.ones(5)) if callable(drawn) else drawn)
        return [float(v).hex() for v in out]

    assert draws(mine) == draws(theirs)


def test_the_checks_run_on_the_first_draw():
    """A parameter made invalid before the first draw is refused as diffprivlib refuses it; one
    changed after the first draw is not read again (nothing changes them in skdptune)."""
    mine, theirs = _laplace(_mechanisms.Laplace, 0), _laplace(dp.Laplace, 0)
    for mechanism in (mine, theirs):
        mechanism.sensitivity = -1.0
        with pytest.raises(ValueError):
            mechanism.randomise(0.5)
    mine, theirs = _laplace(_mechanisms.Laplace, 0), _laplace(dp.Laplace, 0)
    mine.randomise(0.5)
    theirs.randomise(0.5)
    with pytest.raises(TypeError):
        theirs.randomise("a string")
    mine.randomise(0.5)  # checked once: a later call is not checked again
    calls = []
    original = dp.Laplace._check_all
    try:
        dp.Laplace._check_all = lambda self, value: calls.append(value) or original(self, value)
        fresh = _laplace(_mechanisms.Laplace, 0)
        for v in (0.1, 0.2, 0.3):
            fresh.randomise(v)
    finally:
        dp.Laplace._check_all = original
    assert calls == [0.1]
