"""The private step of DP-GIBO: clipping, sensitivity, noise scale, GDP accounting."""

import math

import numpy as np
import pytest

from skdptune.accounting import event_cost, gdp_delta, gdp_epsilon
from skdptune.selection._noisy_gradient import NoisyGradient, clipped_mean


def test_clipped_mean_has_sensitivity_2b_over_m_on_random_neighbours():
    rng = np.random.RandomState(0)
    clip, worst = 0.5, 0.0
    for _ in range(500):
        m, d = rng.randint(2, 30), rng.randint(1, 6)
        G = rng.standard_normal((m, d)) * rng.choice([0.01, 1.0, 100.0])
        G_prime = G.copy()
        G_prime[rng.randint(m)] = rng.standard_normal(d) * rng.choice([0.01, 1.0, 100.0])
        change = np.linalg.norm(clipped_mean(G, clip) - clipped_mean(G_prime, clip))
        worst = max(worst, change / (2 * clip / m))
        assert change <= 2 * clip / m + 1e-12
    assert worst > 0.9  # the bound is attained (opposite clipped vectors)


def test_noise_scale_is_sensitivity_over_mu_step_and_is_what_is_drawn():
    noisy = NoisyGradient(mu=1.0, n_steps=4, clip=0.5)
    assert noisy.mu_step == pytest.approx(0.5)
    assert noisy.noise_scale(100) == pytest.approx((2 * 0.5 / 100) / 0.5)
    mechanism = noisy.mechanism(100, random_state=0)
    draws = np.array([mechanism.randomise(0.0) for _ in range(20000)])
    assert draws.std() == pytest.approx(noisy.noise_scale(100), rel=0.03)
    assert math.sqrt(mechanism.variance(0.0)) >= noisy.noise_scale(100)


def test_step_returns_a_noisy_clipped_mean():
    noisy = NoisyGradient(mu=50.0, n_steps=1, clip=1.0)
    G = np.tile([3.0, 4.0], (1000, 1))  # norm 5, clipped to 1: (0.6, 0.8)
    np.testing.assert_allclose(noisy.step(G, random_state=0), [0.6, 0.8], atol=1e-3)


@pytest.mark.parametrize("mu, delta", [(0.5, 1e-6), (1.0, 1e-5), (2.0, 1e-6)])
def test_gdp_event_cost_is_the_closed_form(mu, delta):
    event = NoisyGradient(mu=mu, n_steps=9, clip=0.5).privacy_event()
    eps, used = event_cost(event, delta)
    assert used == delta
    assert eps == pytest.approx(gdp_epsilon(mu, delta))
    # Dong, Roth & Su Cor. 2.13: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    from scipy.stats import norm

    closed = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert closed == pytest.approx(delta, rel=1e-6)
    assert gdp_delta(mu, eps) <= delta


@pytest.mark.parametrize("n_steps, noise_multiplier", [(10, 4.0), (30, 8.0)])
def test_composed_gaussian_steps_match_dp_accounting(n_steps, noise_multiplier):
    """T Gaussian steps with noise multiplier sigma/Delta are sqrt(T)/multiplier-GDP."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    delta = 1e-6
    accountant = pld_privacy_accountant.PLDAccountant()
    event = dp_accounting.GaussianDpEvent(noise_multiplier)
    # separate compose calls: the count trap (docs/accounting.md, section 8)
    for _ in range(n_steps):
        accountant.compose(event)
    theirs = accountant.get_epsilon(delta)
    mu = math.sqrt(n_steps) / noise_multiplier
    ours = gdp_epsilon(mu, delta)
    assert ours == pytest.approx(theirs, rel=0.02)


@pytest.mark.parametrize("kw", [{"mu": 0.0}, {"n_steps": 0}, {"clip": -1.0}, {"n_steps": 1.5}])
def test_invalid_parameters(kw):
    params = {"mu": 1.0, "n_steps": 3, "clip": 0.5, **kw}
    with pytest.raises(ValueError):
        NoisyGradient(**params)
