"""The law of the number of runs K: sampler, pmf and their agreement with E[K]."""

import math

import numpy as np
import pytest

from skdptune.selection._repetition import RandomizedRepetition

LAWS = [
    ("logarithmic", None),
    ("geometric", None),
    ("negative_binomial", 0.5),
    ("negative_binomial", 3.0),
    ("negative_binomial", -0.5),
    ("poisson", None),
]


@pytest.mark.parametrize("distribution, eta", LAWS)
@pytest.mark.parametrize("mean", [2.0, 10.0])
def test_pmf_sums_to_one_with_the_requested_mean(distribution, eta, mean):
    law = RandomizedRepetition(distribution, mean, eta)
    k = np.arange(0, 20000)
    p = law.pmf(k)
    assert p.sum() == pytest.approx(1.0, abs=1e-6)
    assert (p * k).sum() == pytest.approx(mean, rel=1e-4)
    if distribution != "poisson":
        assert p[0] == 0.0


@pytest.mark.parametrize("distribution, eta", LAWS)
def test_sampler_empirical_mean_and_frequencies(distribution, eta):
    mean, n = 5.0, 40000
    law = RandomizedRepetition(distribution, mean, eta)
    rng = np.random.RandomState(0)
    draws = np.array([law.sample(rng) for _ in range(n)])
    # heavy tails for eta <= 0: compare with a generous 5-sigma band from the pmf's variance
    k = np.arange(0, 50000)
    p = law.pmf(k)
    sd = math.sqrt((p * k**2).sum() - mean**2)
    assert abs(draws.mean() - mean) < 5 * sd / math.sqrt(n)
    for value in (0, 1, 2, 3):
        expected = p[value]
        se = math.sqrt(max(expected * (1 - expected), 1e-12) / n)
        assert abs(np.mean(draws == value) - expected) < 5 * se + 1e-9


def test_fixed_runs_exactly_mean():
    law = RandomizedRepetition("fixed", 7)
    assert {law.sample(np.random.RandomState(s)) for s in range(5)} == {7}


@pytest.mark.parametrize("kwargs", [
    {"distribution": "uniform", "mean": 3},
    {"distribution": "logarithmic", "mean": 0.5},
    {"distribution": "negative_binomial", "mean": 3},
    {"distribution": "negative_binomial", "mean": 3, "eta": -1.0},
    {"distribution": "geometric", "mean": 3, "eta": 0.0},
    {"distribution": "fixed", "mean": 2.5},
])
def test_invalid_laws(kwargs):
    with pytest.raises(ValueError):
        RandomizedRepetition(**kwargs)


def test_select_is_argmax_first_on_ties():
    assert RandomizedRepetition.select(np.array([0.1, 0.7, 0.7, 0.2])) == 1


def test_privacy_event_carries_the_law():
    event = RandomizedRepetition("geometric", 4.0).privacy_event(0.5, 0.0)
    assert (event.distribution, event.mean, event.eta) == ("geometric", 4.0, 1.0)
    assert event.base.epsilon == 0.5
