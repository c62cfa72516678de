"""Gaussian DP figures against exact values in high-precision arithmetic.

A review found the float evaluation of ``delta(eps) = Phi(-t) - e^eps Phi(-t - mu)`` (``t =
eps/mu - mu/2``) below the exact value: by 2e-9 relative at ``mu = 1e-4`` (the two log-CDFs
differ by about ``mu / t``), by a factor 0.9999 at ``mu = 1e-12`` (where ``gdp_epsilon``
returned 0 for a ``delta`` below the profile at 0), and by up to 1e30 at ``mu >= 1e9`` (``t``
itself cancelled); subnormal ``delta`` and ``mu >= 1.3e154`` crashed. The tests below fail on
that code. The reference is the profile in mpmath at 200+ digits, written as ``phi(t) (R(t) -
R(t + mu))`` with the Mills ratio ``R`` (exact, with no ``e^eps`` to overflow).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdptune.accounting import event_cost, gdp_delta, gdp_epsilon
from skdptune.events import ComposedEvent, GaussianDPEvent, LaplaceEvent
from skdptune.selection._noisy_gradient import NoisyGradient

mp = pytest.importorskip("mpmath")


def exact_delta(mu, eps):
    """The exact profile of ``mu``-GDP at ``eps`` (floats taken exactly), as an mpmath number."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    with mp.workdps(200 + 2 * int(mp.log10(1 + eps / mu + mu))):
        t = eps / mu - mu / 2

        def mills(x):
            return mp.sqrt(mp.pi / 2) * mp.exp(x * x / 2) * mp.erfc(x / mp.sqrt(2))

        if t < -30:
            return mp.ncdf(-t) - mp.npdf(t) * mills(t + mu)
        return mp.npdf(t) * (mills(t) - mills(t + mu))


#: (mu, eps): the cases where the float code fell below the exact value (above), small and
#: large mu, eps = 0, the far tail
DELTA_CASES = [
    (1.0003571e-4, 1.0042026e-3), (1e-4, 1e-3), (1e-4, 0.0), (1e-12, 0.0), (1e-12, 1e-11),
    (1e-8, 4e-8), (0.01, 0.05), (0.1, 0.0), (0.5, 1.0), (1.0, 4.377178), (2.0, 0.3),
    (5.0, 30.0), (50.0, 0.0), (50.0, 1500.0), (300.0, 45000.0), (1e6, 5e11 + 5e6),
    (1.0, 38.0),
]


@pytest.mark.parametrize("mu, eps", DELTA_CASES)
def test_gdp_delta_is_never_below_the_exact_profile(mu, eps):
    exact = exact_delta(mu, eps)
    got = gdp_delta(mu, eps)
    assert mp.mpf(got) >= exact
    assert mp.mpf(got) <= exact * (1 + mp.mpf(1e-15)) + mp.mpf(5e-324)


def test_gdp_delta_random_grid():
    rng = np.random.RandomState(0)
    for _ in range(150):
        mu = 10 ** rng.uniform(-6, 2.5)
        eps = float(max(0.0, mu * rng.uniform(-1, 8) + mu * mu / 2))
        exact = exact_delta(mu, eps)
        got = mp.mpf(gdp_delta(mu, eps))
        assert exact <= got <= exact * (1 + mp.mpf(1e-15)) + mp.mpf(5e-324), (mu, eps)


#: (mu, delta) for gdp_epsilon, with how close the exact delta at the answer must come to the
#: target (the float resolution of eps = mu t + mu^2 / 2 limits it at a large mu)
EPSILON_CASES = [
    (0.00011137483741087732, 2.4126036431001008e-29, 1e-9), (1e-12, 3.9893e-13, 1e-9),
    (1e-10, 1e-11, 1e-9), (1e-4, 1e-6, 1e-9), (0.5, 1e-6, 1e-9), (1.0, 1e-5, 1e-9),
    (3.0, 1e-12, 1e-9), (40.0, 1e-30, 1e-9), (1.0, 1e-310, 1e-9), (1.0, 5e-324, 1e-9),
    (1e9, 1e-30, 1e-3), (1e12, 1e-10, 1e-2),
]


@pytest.mark.parametrize("mu, delta, tightness", EPSILON_CASES)
def test_gdp_epsilon_is_sound_and_tight(mu, delta, tightness):
    eps = gdp_epsilon(mu, delta)
    exact = exact_delta(mu, eps)
    assert exact <= delta
    assert exact >= mp.mpf(delta) * (1 - tightness)


def test_gdp_epsilon_random_grid():
    rng = np.random.RandomState(1)
    for _ in range(80):
        mu, delta = 10 ** rng.uniform(-6, 2.5), 10 ** rng.uniform(-30, -1)
        eps = gdp_epsilon(mu, delta)
        exact = exact_delta(mu, eps)
        assert exact <= delta, (mu, delta)
        # tight, unless delta is above the profile at 0 (the total variation distance)
        assert eps == 0.0 or exact >= mp.mpf(delta) * (1 - 1e-9), (mu, delta)


def test_gdp_epsilon_at_extremes_gives_a_sound_figure():
    assert gdp_epsilon(1e155, 1e-5) == math.inf  # mu^2 / 2 leaves the float range
    eps = gdp_epsilon(1e100, 1e-30)  # no float eps resolves the root: the one just past it
    assert math.isfinite(eps) and exact_delta(1e100, eps) <= 1e-30
    assert gdp_epsilon(1e-300, 1e-6) == 0.0  # delta(0) = erf(mu / 2 sqrt 2) is below 1e-6
    assert gdp_delta(math.inf, 1.0) == 1.0 and gdp_delta(1.0, math.inf) == 0.0


def test_gaussian_parts_of_a_composition_compose_as_gdp():
    """k mu-GDP parts are sqrt(k) mu-GDP (Dong, Roth & Su Cor. 3.3): one conversion at the
    whole delta, not k at delta / k; interleaved with other events too."""
    delta = 1e-6
    for k, mu in [(2, 0.5), (10, 0.5), (100, 0.1)]:
        eps, used = event_cost(ComposedEvent(tuple(GaussianDPEvent(mu) for _ in range(k))),
                               delta)
        assert used == delta
        assert eps == pytest.approx(gdp_epsilon(math.sqrt(k) * mu, delta), rel=1e-12)
        assert eps < k * gdp_epsilon(mu, delta / k)
    mixed = ComposedEvent((GaussianDPEvent(0.3), LaplaceEvent(1.0), GaussianDPEvent(0.4)))
    eps, used = event_cost(mixed, delta)
    assert used == delta
    assert eps == pytest.approx(gdp_epsilon(0.5, delta) + 1.0, rel=1e-12)
    # the merged mu is rounded up: never below the exact root of the sum of squares
    mus = (0.1, 0.2, 0.7)
    eps = event_cost(ComposedEvent(tuple(GaussianDPEvent(m) for m in mus)), delta)[0]
    exact_mu = mp.sqrt(sum(mp.mpf(m) ** 2 for m in mus))
    assert exact_delta(exact_mu, eps) <= delta


@pytest.mark.parametrize("mu", [1e-3, 0.05, 0.7, 3.0, 12.0, 50.0])
@pytest.mark.parametrize("n_steps", [1, 10, 1000])
def test_noisy_gradient_noise_is_never_below_its_gdp_scale(mu, n_steps):
    """diffprivlib's analytic Gaussian calibration at (mu_step, delta_mu(mu_step)) is the GDP
    scale; above mu_step ~ 10 (delta near 1) it is ill-conditioned and gives more noise."""
    gradient = NoisyGradient(mu, n_steps, 0.5)
    for m in (7, 100, 5000):
        scale = math.sqrt(gradient.mechanism(m).variance(0.0))
        assert scale >= gradient.noise_scale(m)
        if gradient.mu_step < 10:
            assert scale <= gradient.noise_scale(m) * (1 + 1e-6)
