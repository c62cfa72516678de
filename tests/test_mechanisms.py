"""diffprivlib's mechanisms with their parameters checked on the first draw, and Laplace's
draws for many values at once: the same draws (skdptune/_mechanisms.py)."""

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


class _Counting:
    """A generator of the secure kind's interface (``random()`` only, no arrays): a fixed
    stream, counted."""

    def __init__(self, seed):
        self._stream, self.calls = np.random.RandomState(seed), 0

    def random(self):
        self.calls += 1
        return float(self._stream.random_sample())


def _one_by_one(mechanism, values):
    return np.array([mechanism.randomise(float(v)) for v in values])


def _many_column_major(mechanism, values):
    """A broken twin: the uniforms read in another order (the first of every value first)."""
    values = np.asarray(values, dtype=float)
    u = mechanism._rng.random_sample(4 * values.size).reshape(4, values.size)
    scale = mechanism.sensitivity / (mechanism.epsilon - np.log(1 - mechanism.delta))
    return values - scale * mechanism._laplace_sampler(*u)


@pytest.mark.parametrize("size", [1, 2, 55, 400])
def test_laplace_draws_for_many_values_are_diffprivlibs(size):
    """``randomise_many`` is diffprivlib's ``randomise`` of each value in turn, bit for bit --
    values of every magnitude, generators reseeded in place between calls, and a generator
    without arrays (the secure kind) read as often; the order of the uniforms matters (a
    twin reading them in another order differs)."""
    rng = np.random.default_rng(size)
    values = rng.normal(size=size) * 10.0 ** rng.integers(-6, 6, size=size)
    for seed in (0, 7):
        mine, theirs = _laplace(_mechanisms.Laplace, seed), _laplace(dp.Laplace, seed)
        got = [mine.randomise_many(values) for _ in range(3)]
        mine._rng.seed(seed + 1)
        got.append(mine.randomise_many(values))
        expected = [_one_by_one(theirs, values) for _ in range(3)]
        theirs._rng.seed(seed + 1)
        expected.append(_one_by_one(theirs, values))
        for a, b in zip(got, expected, strict=True):
            assert [v.hex() for v in a.tolist()] == [v.hex() for v in b.tolist()]
    secure_mine, secure_theirs = _Counting(3), _Counting(3)
    a = _mechanisms.Laplace(epsilon=0.7, sensitivity=0.3, random_state=None)
    b = dp.Laplace(epsilon=0.7, sensitivity=0.3, random_state=None)
    a._rng, b._rng = secure_mine, secure_theirs
    np.testing.assert_array_equal(a.randomise_many(values), _one_by_one(b, values))
    assert secure_mine.calls == secure_theirs.calls == 4 * size
    if size > 1:
        twin = _many_column_major(_laplace(dp.Laplace, 0), values)
        assert not np.array_equal(twin, _one_by_one(_laplace(dp.Laplace, 0), values))


def test_laplace_draws_for_many_values_check_as_randomise():
    """Invalid parameters are refused before any draw; no values, no draw."""
    mechanism = _laplace(_mechanisms.Laplace, 0)
    mechanism.epsilon = -1.0
    with pytest.raises(ValueError):
        mechanism.randomise_many(np.ones(3))
    counting = _Counting(0)
    fresh = _mechanisms.Laplace(epsilon=1.0, sensitivity=1.0, random_state=None)
    fresh._rng = counting
    assert fresh.randomise_many(np.zeros(0)).shape == (0,)
    assert counting.calls == 0


def _feature_mechanisms(kind, rng, d, n, generator):
    """``d`` mechanisms of a scaler's kind (its means, or its variances) with their own
    bounds, as diffprivlib's ``_mean`` / ``_var`` make them."""
    lower = rng.uniform(-3, 0, d)
    upper = lower + rng.uniform(0.01, 4, d)
    epsilon = float(rng.uniform(0.002, 2))
    if kind == "truncated":
        return [_mechanisms.LaplaceTruncated(
            epsilon=epsilon, delta=0, sensitivity=(hi - lo) / n, lower=lo, upper=hi,
            random_state=generator) for lo, hi in zip(lower, upper, strict=True)], lower, upper
    made = [_mechanisms.LaplaceBoundedDomain(
        epsilon=epsilon, delta=0, sensitivity=((hi - lo) / n) ** 2 * (n - 1), lower=0,
        upper=(hi - lo) ** 2 / 4, random_state=generator) for lo, hi in zip(lower, upper,
                                                                             strict=True)]
    for mechanism in made:
        mechanism._scale = mechanism._find_scale()
    return made, np.zeros(d), (upper - lower) ** 2 / 4


@pytest.mark.parametrize("kind", ["truncated", "bounded"])
def test_a_scalers_draws_for_many_features_are_diffprivlibs(kind):
    """``truncated_many`` / ``bounded_domain_many`` are diffprivlib's ``randomise`` of each
    feature's mechanism in turn on one generator, bit for bit: values inside, on and beyond
    the domains, budgets small enough that most first tries of the bounded domain are
    rejected, and a generator of the secure kind (the same stream gives the same draws)."""
    draw = (_mechanisms.truncated_many if kind == "truncated"
            else _mechanisms.bounded_domain_many)
    rng = np.random.RandomState(11)
    for trial in range(40):
        d, n, seed = int(rng.randint(1, 40)), int(rng.randint(2, 500)), int(rng.randint(1e6))
        generator = np.random.RandomState(seed)
        made, lower, upper = _feature_mechanisms(kind, rng, d, n, generator)
        values = lower + (upper - lower) * rng.uniform(-0.3, 1.3, d)
        expected = [m.randomise(float(v)) for m, v in zip(made, values, strict=True)]
        generator.seed(seed)
        got = draw(made, values, generator)
        assert [float(v).hex() for v in got] == [float(v).hex() for v in expected]
        secure_mine, secure_theirs = _Counting(trial), _Counting(trial)
        for m in made:
            m._rng = secure_theirs
        expected = [m.randomise(float(v)) for m, v in zip(made, values, strict=True)]
        np.testing.assert_array_equal(draw(made, values, secure_mine), expected)
        assert secure_mine.calls >= secure_theirs.calls  # the bounded domain reads ahead


def test_a_scalers_bounded_draws_read_rejected_tries_as_diffprivlib():
    """A value whose first tries fall outside its domain takes its next tries from the
    following uniforms, two, then four at a time, each batch read row by row: a twin that
    restarts every value with a single try differs."""
    generator = np.random.RandomState(3)
    made = [_mechanisms.LaplaceBoundedDomain(epsilon=0.01, delta=0, sensitivity=1.0, lower=0,
                                             upper=1.0, random_state=generator)
            for _ in range(30)]
    for mechanism in made:
        mechanism._scale = mechanism._find_scale()
    values = np.full(30, 0.5)
    expected = [m.randomise(0.5) for m in made]
    generator.seed(3)
    np.testing.assert_array_equal(_mechanisms.bounded_domain_many(made, values, generator),
                                  expected)

    def one_try_at_a_time(value, scale, stream):
        while True:
            u = stream.random_sample(4)
            noisy = value + scale * dp.Laplace._laplace_sampler(*u)
            if 0 <= noisy <= 1:
                return noisy
    generator.seed(3)
    twin = [one_try_at_a_time(0.5, m._scale, generator) for m in made]
    assert not np.array_equal(twin, expected)


def test_a_scalers_draws_check_their_mechanisms():
    """Invalid parameters are refused before any draw."""
    made, lower, upper = _feature_mechanisms("truncated", np.random.RandomState(0), 3, 10,
                                             None)
    made[1].epsilon = -1.0
    with pytest.raises(ValueError):
        _mechanisms.truncated_many(made, lower, _Counting(0))


def _bounded_settings(rng, size):
    """Settings of GaussianNB's variance mechanisms: a sensitivity, a domain ``[0,
    sensitivity n]`` (``n = 1`` included: a domain as wide as the sensitivity), budgets from
    tiny to large."""
    sensitivity = rng.uniform(1e-3, 50, size) ** rng.choice([1, 2], size)
    count = rng.integers(1, 300, size).astype(float)
    count[:3] = 1
    epsilon = 10 ** rng.uniform(-3, 1, size)
    return epsilon, sensitivity, sensitivity * count


def test_the_bounded_domain_scales_are_diffprivlibs():
    """Every element's scale is the float diffprivlib's own ``_find_scale`` finds for it, bit
    for bit, whatever the others' settings (their bisections end after different numbers of
    halvings): a lockstep that stops every element with the first to converge differs."""
    rng = np.random.default_rng(5)
    epsilon, sensitivity, upper = _bounded_settings(rng, 300)
    expected = [dp.LaplaceBoundedDomain(epsilon=e, delta=0, sensitivity=s, lower=0,
                                        upper=u)._find_scale()
                for e, s, u in zip(epsilon, sensitivity, upper, strict=True)]
    got = _mechanisms.bounded_domain_scales(epsilon, sensitivity, 0.0, upper)
    assert [float(v).hex() for v in got] == [float(v).hex() for v in expected]
    # shapes broadcast: a (2, 150) grid of settings with one epsilon
    grid = _mechanisms.bounded_domain_scales(0.3, sensitivity.reshape(2, 150), 0.0,
                                             upper.reshape(2, 150))
    assert grid.shape == (2, 150)
    assert grid[1, 7] == dp.LaplaceBoundedDomain(
        epsilon=0.3, delta=0, sensitivity=sensitivity[157], lower=0, upper=upper[157]
    )._find_scale()
    assert len({v.hex() for v in expected}) == 300  # every setting its own scale


def test_truncated_draws_are_diffprivlibs_in_row_major_order():
    """``truncated_draws`` of an array is diffprivlib's ``LaplaceTruncated.randomise`` of each
    value in row-major order on one generator, bit for bit (values inside, on and beyond the
    bounds)."""
    rng = np.random.default_rng(2)
    values = rng.uniform(-30, 130, (3, 7))
    lower, upper = np.zeros(7), np.full(7, 100.0)
    sensitivity, epsilon = rng.uniform(0.5, 40, 7), 0.05
    generator = np.random.RandomState(9)
    expected = [[dp.LaplaceTruncated(epsilon=epsilon, delta=0, sensitivity=s, lower=lo,
                                     upper=hi, random_state=generator).randomise(float(v))
                 for v, s, lo, hi in zip(row, sensitivity, lower, upper, strict=True)]
                for row in values]
    generator.seed(9)
    got = _mechanisms.truncated_draws(values, epsilon, sensitivity, lower, upper, generator)
    np.testing.assert_array_equal(got, expected)
    assert np.any(got == 0.0) and np.any(got == 100.0)  # the bounds were reached


def test_bounded_domain_draws_have_diffprivlibs_distribution():
    """Each value's draw has the distribution of diffprivlib's ``randomise`` (the first of
    i.i.d. tries inside the domain): a value on the domain's edge at a scale twice the domain,
    where most tries are rejected, drawn 4,000 times by each (two-sample Kolmogorov-Smirnov);
    a twin that clips the first try to the domain instead of rejecting it is told apart."""
    from scipy.stats import ks_2samp

    mechanism = dp.LaplaceBoundedDomain(epsilon=0.5, delta=0, sensitivity=1.0, lower=0,
                                        upper=1.0, random_state=np.random.RandomState(4))
    scale = mechanism._find_scale()
    theirs = [mechanism.randomise(0.1) for _ in range(4000)]
    generator = np.random.RandomState(5)
    ours = _mechanisms.bounded_domain_draws(np.full(4000, 0.1), scale, 0.0, 1.0, generator)
    assert ours.shape == (4000,) and np.all((ours >= 0) & (ours <= 1))
    assert ks_2samp(ours, theirs).pvalue > 1e-3
    clipped = np.clip(0.1 + scale * _mechanisms._standard_laplace(generator, 4000), 0, 1)
    assert ks_2samp(clipped, theirs).pvalue < 1e-6
    # values beyond the domain are clipped to it first, as randomise clips them
    beyond = _mechanisms.bounded_domain_draws(np.array([[-5.0], [7.0]]), 1e-9, 0.0, 1.0,
                                              generator)
    assert beyond.shape == (2, 1)
    np.testing.assert_allclose(beyond.ravel(), [0.0, 1.0], atol=1e-6)


def test_bounded_domain_draws_bound_a_rounds_tries_and_refuse_a_bad_scale(record_calls):
    """Many values whose tries are mostly rejected: no round draws more than
    ``TRIES_PER_ROUND`` tries (a round's memory is bounded whatever the number of values), and
    every value still lands inside; a scale of 0 or NaN is refused (no try could be trusted to
    land inside: diffprivlib's loop would not end)."""
    calls = record_calls(_mechanisms, "_standard_laplace")
    out = _mechanisms.bounded_domain_draws(np.zeros(5000), 200.0, 0.0, 1.0,
                                           np.random.RandomState(0))
    assert np.all((out >= 0) & (out <= 1))
    tries = [count for _, count in calls]
    assert len(tries) > 3 and max(tries) <= _mechanisms.TRIES_PER_ROUND
    for scale in (0.0, np.nan):
        with pytest.raises(ValueError, match="finite and positive"):
            _mechanisms.bounded_domain_draws(np.zeros(3), scale, 0.0, 1.0,
                                             np.random.RandomState(0))
