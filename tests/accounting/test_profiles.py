"""The privacy-profile bound of randomized repetition against exact worst-case values.

``repetition_profile_delta`` bounds the hockey-stick divergence ``delta(eps)`` of "run a pure
``eps_0``-DP mechanism ``K`` times, release the best run" for every base mechanism
(``docs/accounting.md`` section 7.6). Here it is checked against the **exact** ``delta(eps)``
of the selection for concrete ``eps_0``-DP bases, which no sound bound may undercut:

* binary randomized response (the dominating pair of every ``eps_0``-DP mechanism; 1 scores
  better than 0): the selection releases the best bit;
* ``m``-level randomized response: the bit plus an independent uniform level in ``1..m`` that
  breaks ties (scores ``(bit, level)``, ordered lexicographically). Still exactly
  ``eps_0``-DP, and a **stronger** lower bound than the binary one -- ties are what make the
  binary selection cheap. As ``m`` grows it approaches the worst case of the derivation.

The output law of the selection is computed exactly from the PGF ``f`` of ``K`` (written here
from the laws' closed forms): with the outcomes in increasing order and ``F_i`` the base
mechanism's CDF, ``P[best = i] = f(F_i) - f(F_{i-1})`` and ``P[K = 0] = f(0)`` (no output).
The grids of settings run in the default suite in a few seconds; the numbers behind the table
of ``docs/accounting.md`` 7.6 come from the same helpers.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from skdptune.accounting import (
    event_cost,
    kov_optimal_composition_epsilon,
    repetition_cost,
    repetition_profile_delta,
    repetition_profile_epsilon,
    repetition_pure_epsilon,
    repetition_rdp_epsilon,
    truncated_negative_binomial_gamma,
)
from skdptune.events import EpsilonDeltaEvent, RepeatAndSelectEvent

LEVELS = 1000  # m of the m-level randomized response


# --------------------------------------------------------------------------------------------
# exact selection of randomized-response bases
# --------------------------------------------------------------------------------------------


def pgf_of(distribution, mean, eta=None, trials=None):
    """``f(x) = E[x^K]`` (vectorised) from the laws' closed forms (P&S eq. 7 for D_{eta,gamma})."""
    if distribution == "poisson":
        return lambda x: np.exp(mean * (np.asarray(x, float) - 1.0))
    if distribution == "fixed":
        return lambda x: np.asarray(x, float) ** int(mean)
    if distribution == "binomial":
        prob = mean / trials
        return lambda x: (1.0 - prob + prob * np.asarray(x, float)) ** trials
    eta = {"logarithmic": 0.0, "geometric": 1.0}.get(distribution, eta)
    gamma = truncated_negative_binomial_gamma(mean, eta)  # the law the sampler draws from
    if eta == 0.0:
        return lambda x: np.log1p(-(1.0 - gamma) * np.asarray(x, float)) / math.log(gamma)
    return lambda x: (((1.0 - (1.0 - gamma) * np.asarray(x, float)) ** -eta - 1.0)
                      / (gamma ** -eta - 1.0))


def selection_laws(eps0, f, levels):
    """Output laws of the best of K runs of m-level randomized response on D and on D'.

    Outcomes in increasing order: (0, 1), ..., (0, m), (1, 1), ..., (1, m); ``P_D[bit = 1] =
    e^eps0 / (1 + e^eps0)``, reversed on D'. Returns the two probability vectors of the
    released outcome (the common ``f(0)`` of "no run" left out: it cancels).
    """
    p = 1.0 / (1.0 + math.exp(-eps0))
    laws = []
    for p_one in (p, 1.0 - p):
        masses = np.concatenate([np.full(levels, (1.0 - p_one) / levels),
                                 np.full(levels, p_one / levels)])
        cdf = np.minimum(np.cumsum(masses), 1.0)
        values = f(np.concatenate([[0.0], cdf]))
        laws.append(np.diff(values))
    return laws


def exact_delta(eps0, f, epsilon, levels=1):
    """Exact delta(eps) of the selection on this pair of neighbours, worse of both directions."""
    law_d, law_d2 = selection_laws(eps0, f, levels)
    e = math.exp(epsilon)
    return max(float(np.maximum(law_d - e * law_d2, 0.0).sum()),
               float(np.maximum(law_d2 - e * law_d, 0.0).sum()))


def exact_epsilon(eps0, f, delta, levels=1):
    """Smallest eps with exact_delta(eps) <= delta (bisection to 1e-10)."""
    if exact_delta(eps0, f, 0.0, levels) <= delta:
        return 0.0
    hi = 1.0
    while exact_delta(eps0, f, hi, levels) > delta:
        hi *= 2.0
    return brentq(lambda e: exact_delta(eps0, f, e, levels) - delta, 0.0, hi, xtol=1e-10)


LAWS = [("logarithmic", None, None), ("geometric", None, None), ("negative_binomial", 0.5, None),
        ("negative_binomial", -0.5, None), ("negative_binomial", 2.0, None),
        ("poisson", None, None), ("fixed", None, None), ("binomial", None, "2x")]


def law_args(law, mean):
    distribution, eta, trials = law
    return distribution, eta, (2 * mean if trials == "2x" else trials)


# --------------------------------------------------------------------------------------------
# soundness: never below the exact values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("law", LAWS, ids=lambda law: f"{law[0]}-{law[1]}")
@pytest.mark.parametrize("mean", [2, 10, 100])
@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0, 2.0])
def test_profile_is_never_below_the_exact_selection(law, mean, eps0):
    distribution, eta, trials = law_args(law, mean)
    f = pgf_of(distribution, mean, eta, trials)
    for delta in (1e-3, 1e-6, 1e-9):
        eps = repetition_profile_epsilon(eps0, distribution, mean, eta, delta, trials)
        for levels in (1, LEVELS):
            # the reported epsilon holds for these bases
            assert exact_delta(eps0, f, eps, levels) <= delta * (1 + 1e-9), (levels, delta)
    # the whole profile lies above the exact one, on a grid of epsilons
    peak = repetition_profile_epsilon(eps0, distribution, mean, eta, 0.0, trials)
    for epsilon in np.linspace(0.0, peak * 1.05, 23):
        bound = repetition_profile_delta(eps0, epsilon, distribution, mean, eta, trials)
        assert bound >= exact_delta(eps0, f, epsilon, LEVELS) - 1e-15, epsilon


@pytest.mark.parametrize("law", [law for law in LAWS if law[0] != "fixed"],
                         ids=lambda law: f"{law[0]}-{law[1]}")
@pytest.mark.parametrize(("eps0", "mean"), [(0.1, 100), (0.5, 10), (2.0, 10), (2.0, 100)])
def test_profile_is_nearly_exact_at_small_delta(law, eps0, mean):
    """The bound against the exact epsilon of a 20 000-level randomized-response base, so it
    cannot be loosened unnoticed. Where the mass of ``f`` below the quantile ``c`` dominates
    (E[K] c <= 15) it is within 0.5 % (+ 0.005); where the outcomes above ``c`` dominate
    (E[K] c large: Poisson(100) at eps0 = 0.1) its upper part costs at most ``2 eps0`` more,
    the known slack of the derivation (docs/accounting.md 7.6)."""
    distribution, eta, trials = law_args(law, mean)
    f = pgf_of(distribution, mean, eta, trials)
    for delta in (1e-6, 1e-9):
        eps = repetition_profile_epsilon(eps0, distribution, mean, eta, delta, trials)
        truth = exact_epsilon(eps0, f, delta, 20_000)
        assert truth <= eps <= truth + 2 * eps0 + 1e-3, (delta, eps, truth)
        if mean / (1 + math.exp(eps0)) <= 15:  # E[K] c
            assert eps <= truth * 1.005 + 0.005, (delta, eps, truth)


def test_a_broken_bound_is_caught():
    """The exact values have teeth: the profile at half the base epsilon is undercut."""
    f = pgf_of("geometric", 10)
    eps = repetition_profile_epsilon(0.5, "geometric", 10, None, 1e-6)
    assert exact_delta(1.0, f, eps, LEVELS) > 1e-6
    # and the m-level base is strictly worse than the binary one (ties make it cheap)
    assert exact_epsilon(1.0, f, 1e-6, LEVELS) > exact_epsilon(1.0, f, 1e-6, 1) + 0.5


# --------------------------------------------------------------------------------------------
# the closed form against the integral it evaluates
# --------------------------------------------------------------------------------------------


def integral_bound(eps0, f, epsilon, n=400_001):
    """int_0^1 [f'(v) - e^(eps - eps0) f'(G(v))]_+ dv, G(v) = max(e^-eps0 v, 1 - e^eps0 (1 - v)),
    by the trapezoid rule with f' by central differences (the docs' definition of the bound)."""
    v = np.linspace(0.0, 1.0, n)
    g = np.maximum(math.exp(-eps0) * v, 1.0 - math.exp(eps0) * (1.0 - v))
    h = 1e-7

    def fprime(x):
        upper, lower = np.minimum(x + h, 1.0), np.maximum(x - h, 0.0)
        return (f(upper) - f(lower)) / (upper - lower)

    y = np.maximum(fprime(v) - math.exp(epsilon - eps0) * fprime(g), 0.0)
    return float(np.sum((y[1:] + y[:-1]) * np.diff(v)) / 2)


@pytest.mark.parametrize("law", LAWS, ids=lambda law: f"{law[0]}-{law[1]}")
@pytest.mark.parametrize(("eps0", "mean"), [(0.5, 3), (1.0, 10), (2.0, 5)])
def test_closed_form_equals_the_integral(law, eps0, mean):
    distribution, eta, trials = law_args(law, mean)
    f = pgf_of(distribution, mean, eta, trials)
    peak = repetition_profile_epsilon(eps0, distribution, mean, eta, 0.0, trials)
    for epsilon in (0.3 * peak, 0.7 * peak, 0.95 * peak):
        ours = repetition_profile_delta(eps0, epsilon, distribution, mean, eta, trials)
        reference = integral_bound(eps0, f, epsilon)
        assert ours == pytest.approx(min(1.0, reference), rel=2e-4, abs=1e-9)


# --------------------------------------------------------------------------------------------
# pure limit, monotonicity, determinism
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("mean", [2.0, 10.0, 1000.0])
def test_pure_limit_closed_forms(eps0, mean):
    e = math.exp(eps0)
    for distribution, eta in (("logarithmic", 0.0), ("geometric", 1.0),
                              ("negative_binomial", -0.5), ("negative_binomial", 2.0)):
        gamma = truncated_negative_binomial_gamma(mean, eta)
        expected = eps0 + (1 + eta) * math.log((e + gamma) / (1 + gamma * e))
        shape = eta if distribution == "negative_binomial" else None
        ours = repetition_profile_epsilon(eps0, distribution, mean, shape, 0.0)
        assert ours == pytest.approx(expected, rel=1e-12)
        assert ours < repetition_pure_epsilon(eps0, distribution, shape)  # below Cor. 3
        assert repetition_profile_delta(eps0, ours, distribution, mean, shape) == 0.0
    # Poisson: the pure-DP limit eps0 + mu tanh(eps0 / 2) (docs/accounting.md, section 7.6)
    ours = repetition_profile_epsilon(eps0, "poisson", mean, None, 0.0)
    assert ours == pytest.approx(eps0 + mean * math.tanh(eps0 / 2), rel=1e-12)
    # n fixed runs: n eps0 (composition), binomial in between
    n = int(mean)
    assert repetition_profile_epsilon(eps0, "fixed", n, None, 0.0) == pytest.approx(n * eps0)
    p, c = e / (1 + e), 1 / (1 + e)
    prob = mean / (2 * n)
    expected = eps0 + (2 * n - 1) * math.log((1 - prob + prob * p) / (1 - prob + prob * c))
    ours = repetition_profile_epsilon(eps0, "binomial", mean, None, 0.0, trials=2 * n)
    assert ours == pytest.approx(expected, rel=1e-12)


def test_monotone_and_deterministic():
    deltas = [repetition_profile_delta(1.0, e, "geometric", 10.0) for e in np.linspace(0, 3, 31)]
    assert all(a >= b for a, b in itertools.pairwise(deltas))
    epsilons = [repetition_profile_epsilon(1.0, "geometric", 10.0, None, d)
                for d in (1e-12, 1e-9, 1e-6, 1e-3, 0.1)]
    assert epsilons == sorted(epsilons, reverse=True)
    by_mean = [repetition_profile_epsilon(1.0, "poisson", m, None, 1e-6) for m in (1, 3, 10, 30)]
    assert by_mean == sorted(by_mean)
    by_base = [repetition_profile_epsilon(e, "logarithmic", 10, None, 1e-6) for e in (.1, .5, 1)]
    assert by_base == sorted(by_base)
    # the same inputs give bit-identical outputs (no randomness, no state)
    first = repetition_profile_epsilon(0.7, "negative_binomial", 12.5, 0.3, 1e-7)
    from skdptune.accounting import _profiles

    _profiles._profile_epsilon.cache_clear()
    _profiles._profile_delta.cache_clear()
    assert repetition_profile_epsilon(0.7, "negative_binomial", 12.5, 0.3, 1e-7) == first


def test_edges_and_validation():
    assert repetition_profile_epsilon(0.0, "geometric", 10.0, None, 1e-6) == 0.0
    assert repetition_profile_delta(0.0, 0.0, "geometric", 10.0) == 0.0
    assert repetition_profile_epsilon(1.0, "geometric", 10.0, None, 1.0) == 0.0
    # one run surely: between the exact epsilon of randomized response at 1e-6 and eps_0
    one_run = repetition_profile_epsilon(1.0, "geometric", 1.0, None, 1e-6)
    assert math.log(math.e - 1e-6 * (1 + math.e)) <= one_run <= 1.0
    assert repetition_profile_epsilon(1.0, "fixed", 1, None, 0.0) == pytest.approx(1.0)
    assert repetition_profile_epsilon(math.inf, "geometric", 10.0, None, 1e-6) == math.inf
    with pytest.raises(ValueError, match="trials"):
        repetition_profile_epsilon(1.0, "binomial", 3.0, None, 1e-6)
    with pytest.raises(ValueError, match="binomial mean"):
        repetition_profile_epsilon(1.0, "binomial", 3.0, None, 1e-6, trials=2)
    with pytest.raises(ValueError, match="distribution"):
        repetition_profile_delta(1.0, 1.0, "uniform", 3.0)
    with pytest.raises(ValueError, match="eta"):
        repetition_profile_delta(1.0, 1.0, "negative_binomial", 3.0)
    with pytest.raises(ValueError, match="epsilon"):
        repetition_profile_delta(1.0, -1.0, "geometric", 3.0)
    with pytest.raises(ValueError, match="delta"):
        repetition_profile_epsilon(1.0, "geometric", 3.0, None, 2.0)


# --------------------------------------------------------------------------------------------
# in the repetition cost: the minimum of all bounds
# --------------------------------------------------------------------------------------------

# (eps0, distribution, mean, delta): settings of the table in docs/accounting.md 7.6
TABLE = [(eps0, d, mean, 1e-6) for eps0 in (0.1, 1.0, 2.0)
         for d in ("logarithmic", "geometric", "poisson") for mean in (2, 10, 100)]


@pytest.mark.parametrize(("eps0", "distribution", "mean", "delta"), TABLE)
def test_profile_beats_the_renyi_bound(eps0, distribution, mean, delta):
    profile = repetition_profile_epsilon(eps0, distribution, mean, None, delta)
    rdp = repetition_rdp_epsilon(eps0, distribution, mean, None, delta)
    pure = math.inf if distribution == "poisson" else repetition_pure_epsilon(eps0, distribution)
    assert profile < rdp
    eps, used = repetition_cost(eps0, 0.0, distribution, mean, None, delta)
    assert eps == min(profile, rdp, pure)
    if profile < pure:
        assert used == delta
        line = event_cost(RepeatAndSelectEvent(EpsilonDeltaEvent(eps0), distribution, mean),
                          delta)
        assert line == (eps, used)


def test_fixed_runs_take_the_profile_where_it_beats_optimal_composition():
    # releasing only the best of n runs is a post-processing of their composition, and with
    # many runs far cheaper (the runs that lose are hidden); with few it is KOV's value
    for eps0, n in ((0.5, 50), (1.0, 100), (0.1, 100)):
        kov = kov_optimal_composition_epsilon(eps0, n, 1e-6)
        profile = repetition_profile_epsilon(eps0, "fixed", n, None, 1e-6)
        assert profile < 0.6 * kov
        assert repetition_cost(eps0, 0.0, "fixed", n, None, 1e-6)[0] == profile
    for eps0, n in ((0.5, 10), (2.0, 20)):
        kov = kov_optimal_composition_epsilon(eps0, n, 1e-6)
        profile = repetition_profile_epsilon(eps0, "fixed", n, None, 1e-6)
        assert profile == pytest.approx(kov, rel=1e-8)
        assert repetition_cost(eps0, 0.0, "fixed", n, None, 1e-6)[0] == min(kov, profile)


def test_binomial_runs_tend_to_poisson_runs():
    """Binomial(trials, mean / trials) -> Poisson(mean): so do the bounds. With few trials the
    law is more concentrated (fewer draws of K = 0 or 1, a utility gain) but, at the same mean,
    not cheaper: its PGF is steeper near 1 (pure limits 2 mu log((1+p)/(1+c)) vs mu tanh)."""
    for eps0, mean in ((0.5, 5), (1.0, 10)):
        poisson = repetition_profile_epsilon(eps0, "poisson", mean, None, 1e-6)
        by_trials = [repetition_profile_epsilon(eps0, "binomial", mean, None, 1e-6, trials=t)
                     for t in (2 * mean, 10 * mean, 1000 * mean)]
        assert by_trials == sorted(by_trials, reverse=True)
        assert by_trials[-1] == pytest.approx(poisson, rel=2e-3)
        assert by_trials[0] > poisson


def test_many_runs_no_overflow_and_still_sound():
    """e^eps overflows past eps ~ 709 while the pure limit of Poisson(1e4) is 4622: the closed
    form works with logs. The selection of the best of many runs stays cheap at delta > 0."""
    for distribution, mean in (("poisson", 1e4), ("fixed", 5000)):
        eps = repetition_profile_epsilon(1.0, distribution, mean, None, 1e-6)
        truth = exact_epsilon(1.0, pgf_of(distribution, mean), 1e-6, 20_000)
        assert truth <= eps <= truth + 2.0 + 0.01  # (20 000 levels: truth 0.004 low)
        assert repetition_cost(1.0, 0.0, distribution, mean, None, 1e-6) == (eps, 1e-6)
    assert repetition_profile_epsilon(1.0, "poisson", 1e4, None, 0.0) == pytest.approx(
        1.0 + 1e4 * math.tanh(0.5))


# --------------------------------------------------------------------------------------------
# where floats cancel: the reported figure against exact values in 60-digit arithmetic
# --------------------------------------------------------------------------------------------
# A review found the float closed form undercut by exact lower bounds: at eps_0 >= ~6 the terms
# of B agree to more digits than a double holds (eps_0 = 15, E[K] = 50, delta = 1e-10: the true
# delta at the reported epsilon was 1.55e-8), at E[K] = 1 + 1e-15 ``1 - (1 - gamma) x`` kept
# none of its digits (epsilon 0.961 reported for what is one 1-DP run), and the root of optimal
# composition sat below the exact one (delta_k 1.74 times the target). Each test below fails on
# the float code.


def exact_uniform_level_delta(eps0, epsilon, distribution, mean, eta=None):
    """Exact ``delta(epsilon)`` of the best of K runs of randomized response with a continuous
    uniform tie-breaking level (still exactly ``eps_0``-DP), on its bit-0 outcomes -- a lower
    bound no sound figure may cross: ``(f(p) - f(p y1)) - e^eps (f(c) - f(c y1))`` where
    ``log(p f'(p y) / (c f'(c y))) = eps`` at ``y1`` (the ratio increases in ``y`` for these
    laws). In mpmath at 60 digits, the laws from their closed forms."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 60
    if distribution == "poisson":
        mu = mp.mpf(mean)
        f, log_fp = (lambda x: mp.exp(mu * (x - 1))), (lambda x: mu * x)
    else:
        eta = {"logarithmic": 0.0, "geometric": 1.0}.get(distribution, eta)
        gamma = mp.mpf(truncated_negative_binomial_gamma(mean, eta))  # the sampler's own
        beta, e = 1 - gamma, mp.mpf(eta)
        if eta == 0.0:
            f = lambda x: mp.log(1 - beta * x) / mp.log(gamma)  # noqa: E731
        else:
            f = lambda x: ((1 - beta * x) ** -e - 1) / (gamma ** -e - 1)  # noqa: E731
        log_fp = lambda x: -(e + 1) * mp.log(1 - beta * x)  # noqa: E731
    e0 = mp.exp(mp.mpf(eps0))
    c, p = 1 / (1 + e0), e0 / (1 + e0)
    h = lambda y: mp.log(p / c) + log_fp(p * y) - log_fp(c * y) - epsilon  # noqa: E731
    if h(1) <= 0:
        return 0.0
    y1 = mp.mpf(0) if h(0) >= 0 else mp.findroot(h, (mp.mpf(0), mp.mpf(1)), solver="anderson")
    return float((f(p) - f(p * y1)) - mp.exp(mp.mpf(epsilon)) * (f(c) - f(c * y1)))


@pytest.mark.parametrize("distribution,eta", [("geometric", None), ("logarithmic", None),
                                              ("negative_binomial", 0.5), ("poisson", None)])
@pytest.mark.parametrize("eps0", [5.0, 10.0, 15.0, 20.0])
def test_reported_delta_holds_at_large_base_epsilon(distribution, eta, eps0):
    for mean, delta in ((50.0, 1e-8), (50.0, 1e-12), (2000.0, 1e-10)):
        eps, reported = repetition_cost(eps0, 0.0, distribution, mean, eta, delta)
        truth = exact_uniform_level_delta(eps0, eps, distribution, mean, eta)
        assert truth <= reported, (mean, delta, eps, truth)
        if ("profile" in repetition_rule(eps0, distribution, mean, eta, delta)
                and distribution != "poisson" and mean / (1.0 + math.exp(eps0)) <= 1.0):
            # and not loose where the mass below c dominates (a truncated negative binomial,
            # E[K] c <= 1; elsewhere the derivation's known slack,
            # test_profile_is_nearly_exact_at_small_delta): this base already needs a tenth of
            # the reported delta
            assert truth >= 0.1 * reported, (mean, delta, eps, truth)


def repetition_rule(eps0, distribution, mean, eta, delta):
    from skdptune.accounting._repetition import _repetition

    return _repetition(eps0, 0.0, distribution, mean, eta, delta)[2]


@pytest.mark.parametrize("excess", [1e-15, 1e-13, 1e-11])
@pytest.mark.parametrize("distribution,eta", [("geometric", None), ("logarithmic", None),
                                              ("negative_binomial", 0.5),
                                              ("negative_binomial", -0.5)])
def test_a_mean_just_above_one_costs_about_one_run(excess, distribution, eta):
    for eps0, delta in ((1.0, 1e-6), (0.5, 1e-9)):
        eps, reported = repetition_cost(eps0, 0.0, distribution, 1.0 + excess, eta, delta)
        truth = exact_uniform_level_delta(eps0, eps, distribution, 1.0 + excess, eta)
        assert truth <= reported, (eps0, eps, truth)
        # one eps0-DP run alone: randomized response's delta at eps
        one_run = (math.exp(eps0) - math.exp(eps)) / (1.0 + math.exp(eps0))
        assert one_run <= reported * (1 + 1e-9), (eps0, eps)


@pytest.mark.parametrize("mean", [1e-6, 1e-4, 0.5])
def test_poisson_below_one_run_on_average(mean):
    for eps0, delta in ((5.0, 1e-14), (1.0, 1e-9)):
        eps = repetition_profile_epsilon(eps0, "poisson", mean, None, delta)
        assert exact_uniform_level_delta(eps0, eps, "poisson", mean) <= delta


def test_optimal_composition_rounds_up():
    """The root of KOV's ``delta_k`` is never below the exact one: ``delta_k`` at the returned
    value, summed in 60 digits, is at most the target."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 60

    def delta_k(eps, k, x):
        eps, x = mp.mpf(eps), mp.mpf(x)
        total = mp.fsum(mp.binomial(k, l) * (mp.exp(l * eps) - mp.exp(x + (k - l) * eps))
                        for l in range(k + 1) if l * eps > x + (k - l) * eps)
        return total / (1 + mp.exp(eps)) ** k

    for eps, k, delta in itertools.product([0.01, 0.1, 1.0, 10.0], [2, 10, 100, 1000],
                                           [1e-3, 1e-6, 1e-9, 1e-12]):
        found = kov_optimal_composition_epsilon(eps, k, delta)
        assert delta_k(eps, k, found) <= delta, (eps, k, delta, found)
    # the case of docs/accounting.md, section 5: 10000 - 1.05e-12 is no float, the safe one
    # is 10000
    assert kov_optimal_composition_epsilon(10.0, 1000, 1e-12) == 10000.0


def test_extreme_laws_raise_or_report_instead_of_overflowing():
    # e^eps0 overflows a float: the profile route reports its pure bound
    eps, _ = repetition_cost(710.0, 0.0, "geometric", 10.0, None, 1e-6)
    assert 710.0 < eps <= 3 * 710.0
    # gamma = exp(-9.2e6) is below the float range: a clear error, not an OverflowError
    with pytest.raises(ValueError, match="below the smallest float"):
        repetition_cost(1.0, 0.0, "negative_binomial", 1e4, -0.999999, 1e-6)


def test_lemma_20_runs_are_not_rounded_down(monkeypatch):
    """With ``delta_0 > 0`` the bounds are computed for ``K' ~ D_{eta, gamma'}``, ``1 - gamma' =
    (1 - gamma)(1 - delta_0)``: rounded so that ``1 - gamma'`` is not below it (at ``E[K]``
    near 1 it is about 1e-15, and one rounding of ``gamma'`` moved it by 10 %)."""
    from skdptune.accounting import _repetition

    seen = []
    original = _repetition._profile_epsilon
    monkeypatch.setattr(_repetition, "_profile_epsilon",
                        lambda law, eps0, delta: seen.append(law) or original(law, eps0, delta))
    for mean in (1.0 + 3e-15, 1.0 + 7e-13, 1.5, 10.0):
        for delta0 in (1e-9, 0.3):
            seen.clear()
            repetition_cost(1.0, delta0, "geometric", mean, None, 1e-6)
            beta = 1.0 - truncated_negative_binomial_gamma(mean, 1.0)
            if seen:
                assert 1.0 - seen[0].gamma >= beta * (1.0 - delta0), (mean, delta0)


def test_corners_where_floats_cannot_resolve_the_positive_set_give_figures():
    """Inputs where floats cannot resolve the positive set (gamma ~ 1e-201, c below 1e-295,
    1 - p = 0, a ratio that never reaches epsilon) used to raise from ``brentq`` or ``math``:
    the float root is only a guess that the decimal bracket checks, and beyond ``eps_0 = 300``
    the route reports its pure bound."""
    for args, base in ((("negative_binomial", 100.0, -0.99), 1.0),
                       (("fixed", 100.0, None), 15.0), (("fixed", 2.0, None), 37.0),
                       (("negative_binomial", 10.0, -0.9), 20.0),
                       (("negative_binomial", 1e4, 200.0), 1.0),
                       (("geometric", 10.0, None), 690.0)):
        distribution, mean, eta = args
        eps, _ = repetition_cost(base, 0.0, distribution, mean, eta, 1e-6)
        assert base <= eps <= repetition_cost(base, 0.0, distribution, mean, eta, 0.0)[0] * 1.0001
    assert 0.0 <= repetition_profile_delta(0.5, 0.6787133663248331, "logarithmic", 1.5) < 1e-20
    assert repetition_profile_epsilon(2.4e6, "geometric", 10.0, None, 1e-6) >= 2.4e6


def test_optimal_composition_at_a_breakpoint():
    """A target within float error of ``delta_k`` at a breakpoint: the breakpoint itself was
    returned unchecked, 2e-14 relative too low (docs/accounting.md, section 5)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 100
    for eps, k, delta in ((0.01, 10, 2.0326133325846736e-05), (5.0, 1000, 0.03686696211409472)):
        found = kov_optimal_composition_epsilon(eps, k, delta)
        e, x = mp.mpf(eps), mp.mpf(found)
        exact = mp.fsum(mp.binomial(k, l) * (mp.exp(l * e) - mp.exp(x + (k - l) * e))
                        for l in range(k + 1) if l * e > x + (k - l) * e) / (1 + mp.exp(e)) ** k
        assert exact <= delta, (eps, k, found)
