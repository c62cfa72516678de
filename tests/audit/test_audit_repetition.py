"""Statistical audit of randomized repetition (docs/random_search.md, sections 1 and 4;
Papernot & Steinke (2022), "Hyperparameter tuning with Renyi differential privacy").

The whole repetition mechanism is run exactly as ``DPRandomSearchCV`` runs it -- ``K`` drawn by
:meth:`RandomizedRepetition.sample`, ``K`` independent runs of a base mechanism ``Q``, the best
run chosen by :meth:`RandomizedRepetition.select` and nothing else released -- on a synthetic
base mechanism whose epsilon is known exactly:

* ``Q`` is binary randomized response, the dominating pair of every ``eps``-DP run (Kairouz, Oh
  & Viswanath 2015). Its output is its own "noisy score": 1 is better than 0. On ``D`` it
  outputs 1 with probability ``p = e^eps / (1 + e^eps)``, on the neighbour ``D'`` with
  ``1 - p``; so ``Q`` is exactly ``eps``-DP.
* The repetition ``A`` outputs the best bit, or ``BOT`` when ``K = 0`` (Poisson only: the
  search then returns a data-independent fallback). With ``f`` the probability generating
  function of ``K`` (P&S eq. 7), ``P_A(BOT) = f(0)``, ``P_A(0) = f(P_Q(0)) - f(0)`` and
  ``P_A(1) = 1 - f(P_Q(0))``: the empirical frequencies are checked against this closed form,
  written here from the paper and independent of the library's pmf.

For each law the empirical lower bound on epsilon (Clopper--Pearson, 95 %, events fixed in
advance with a Bonferroni correction, ``tests/audit/_audit.py``) must not exceed the epsilon the
library reports for the repetition (``event_cost`` of ``RandomizedRepetition.privacy_event``).
Poisson has no pure-DP bound: its claim is ``(eps, delta)`` at ``delta = 1e-5`` and the audit
checks ``P_D(S) <= e^eps P_D'(S) + delta`` with the Clopper--Pearson bounds instead.

Each audit also catches a broken variant:

* *fixed K*: exactly ``n_iter`` runs while claiming the law's bound. On this pair the best of
  ``k`` randomized-response bits is exactly ``k * eps``-DP (output 0 means all ``k`` bits were
  0), so the claim is false and the audit flags it;
* *K released*: the right law of ``K``, but ``K`` is released with the winner (what an
  ``n_runs_ = K`` attribute would have done; docs/random_search.md, section 2.3). Conditional
  on ``K = k`` the output is again ``k * eps``-DP, so the ``(2 + eta) eps`` claim is false --
  the reason ``DPRandomSearchCV`` releases neither ``K`` nor the losing runs.

The default-suite audits use 20 000 runs per side; the ``slow`` ones 200 000 and more
settings. Every audit is seeded, hence deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import numpy as np
import pytest
from _audit import cp_lower, cp_upper, family_audit

from skdptune.accounting import event_cost
from skdptune.selection._repetition import RandomizedRepetition

BOT = "bot"  # the data-independent output when K = 0
TARGET_DELTA = 1e-5  # conversion delta of the (eps, delta) claims (Poisson, RDP route)
N_FAST = 20_000
N_SLOW = 200_000
ALPHA = 0.05


# --------------------------------------------------------------------------------------------
# the mechanism under audit
# --------------------------------------------------------------------------------------------


def rr_one_probability(epsilon: float, side: str) -> float:
    """P[Q = 1] on ``D`` (``side="D"``) or on its neighbour ``D'``."""
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return p if side == "D" else 1.0 - p


def run_repetition(law: RandomizedRepetition, p_one: float, n_runs: int, seed: int, *,
                   release_k: bool = False, k_cap: int = 8) -> list:
    """``n_runs`` independent outputs of the best-of-K repetition of randomized response.

    ``release_k=True`` is the broken variant that releases ``min(K, k_cap)`` with the winner
    (a post-processing of releasing ``K``).
    """
    rng = np.random.RandomState(seed)
    n_runs_each = [law.sample(rng) for _ in range(n_runs)]  # K: never released when sound
    # all runs of Q at once (i.i.d. bits; the same law as drawing them run by run)
    scores = (rng.uniform(size=sum(n_runs_each)) < p_one).astype(float)
    outcomes, start = [], 0
    for k in n_runs_each:
        if k == 0:
            outcomes.append(BOT)
            continue
        noisy_scores = scores[start:start + k]
        start += k
        best = int(noisy_scores[law.select(noisy_scores)])
        outcomes.append((min(k, k_cap), best) if release_k else best)
    return outcomes


def pgf(law: RandomizedRepetition, x: float) -> float:
    """``f(x) = E[x^K]`` from the paper's closed forms (P&S eq. 7), not from the library pmf."""
    if law.distribution == "fixed":
        return x ** int(law.mean)
    if law.distribution == "poisson":
        return math.exp(law.mean * (x - 1.0))
    gamma, eta = law.gamma, law.eta
    if eta == 0.0:
        return math.log1p(-(1.0 - gamma) * x) / math.log(gamma)
    return ((1.0 - (1.0 - gamma) * x) ** -eta - 1.0) / (gamma ** -eta - 1.0)


def output_probabilities(law: RandomizedRepetition, p_one: float) -> dict:
    """Closed-form law of the output of ``A`` (without releasing K)."""
    f0, fq = pgf(law, 0.0), pgf(law, 1.0 - p_one)
    return {BOT: f0, 0: fq - f0, 1: 1.0 - fq}


def exact_epsilon(law: RandomizedRepetition, epsilon: float, delta: float = 0.0) -> float:
    """Exact (eps, delta) curve of ``A`` on this pair: max over output events, both directions."""
    pd = output_probabilities(law, rr_one_probability(epsilon, "D"))
    pq = output_probabilities(law, rr_one_probability(epsilon, "D'"))
    worst = 0.0
    for event in output_events(law):
        a, b = sum(pd[o] for o in event), sum(pq[o] for o in event)
        for num, den in ((a, b), (b, a)):
            if num - delta > 0.0:
                worst = max(worst, math.log((num - delta) / den))
    return worst


def output_events(law: RandomizedRepetition) -> list[frozenset]:
    """The output events audited, fixed before any run (all non-trivial unions of outputs)."""
    if law.distribution == "poisson":
        atoms = (BOT, 0, 1)
        return [frozenset(a for a, keep in zip(atoms, mask, strict=True) if keep)
                for mask in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1))]
    return [frozenset({0}), frozenset({1})]


def claimed(law: RandomizedRepetition, epsilon: float, delta: float) -> tuple[float, float]:
    """What the library reports for the repetition of an ``epsilon``-DP run."""
    return event_cost(law.privacy_event(epsilon, 0.0), delta=delta)


# --------------------------------------------------------------------------------------------
# (eps, delta) audit: P_D(S) <= e^eps P_D'(S) + delta with Clopper--Pearson bounds
# --------------------------------------------------------------------------------------------


def approximate_dp_audit(outcomes_p, outcomes_q, events, delta: float,
                         alpha: float = ALPHA) -> float:
    """Largest ``eps`` lower bound at ``delta`` over ``events`` and both directions.

    For each event ``S`` and direction, ``(eps, delta)``-DP implies
    ``eps >= log((P[S] - delta) / P'[S]) >= log((CP_lower - delta) / CP_upper)`` with
    probability ``1 - alpha`` when every one-sided bound is taken at
    ``alpha / (4 * len(events))`` (two bounds per direction, two directions, Bonferroni).
    Returns 0 when no event gives a positive bound.
    """
    count_p, count_q = Counter(outcomes_p), Counter(outcomes_q)
    n_p, n_q = len(outcomes_p), len(outcomes_q)
    level = alpha / (4 * len(events))
    best = 0.0
    for event in events:
        k_p = sum(count_p[o] for o in event)
        k_q = sum(count_q[o] for o in event)
        for k_num, n_num, k_den, n_den in ((k_p, n_p, k_q, n_q), (k_q, n_q, k_p, n_p)):
            lower = cp_lower(k_num, n_num, level) - delta
            if lower > 0.0:
                best = max(best, math.log(lower / cp_upper(k_den, n_den, level)))
    return best


# --------------------------------------------------------------------------------------------
# helpers shared by the audits
# --------------------------------------------------------------------------------------------


def simulate_both_sides(law, epsilon, n_runs, seed, release_k=False):
    """Outputs on ``D`` and on ``D'`` (cached: the broken fixed-K runs serve several claims)."""
    return _simulate(law.distribution, law.mean, law.eta, epsilon, n_runs, seed, release_k)


@cache
def _simulate(distribution, mean, eta, epsilon, n_runs, seed, release_k):
    law = RandomizedRepetition(distribution, mean, eta)
    return tuple(
        tuple(run_repetition(law, rr_one_probability(epsilon, side), n_runs, seed + shift,
                             release_k=release_k))
        for shift, side in enumerate(("D", "D'"))
    )


def check_frequencies(law, epsilon, outcomes, side):
    """Empirical output frequencies agree with the PGF closed form (99.9 % CP intervals)."""
    expected = output_probabilities(law, rr_one_probability(epsilon, side))
    counts = Counter(outcomes)
    for output, prob in expected.items():
        k = counts[output]
        lo, hi = cp_lower(k, len(outcomes), 5e-4), cp_upper(k, len(outcomes), 5e-4)
        assert lo <= prob <= hi, (law.distribution, side, output, k / len(outcomes), prob)


def report(label, lower_bound, claim, exact=None):
    extra = "" if exact is None else f", exact eps of A on the pair {exact:.3f}"
    print(f"\n[audit repetition] {label}: lower bound {lower_bound:.3f} vs claim {claim:.3f}"
          f"{extra}")


def pure_dp_audit(law, epsilon, n_runs, seed, *, claim_law=None, release_k=False):
    """(lower bound, claimed pure epsilon, exact epsilon of the sound mechanism)."""
    claim_law = law if claim_law is None else claim_law
    claim, claim_delta = claimed(claim_law, epsilon, 0.0)
    assert claim_delta == 0.0
    outcomes_p, outcomes_q = simulate_both_sides(law, epsilon, n_runs, seed, release_k)
    if release_k:
        events = [frozenset({(k, 0)}) for k in range(1, 9)]
    else:
        events = output_events(law)
        check_frequencies(law, epsilon, outcomes_p, "D")
        check_frequencies(law, epsilon, outcomes_q, "D'")
    result = family_audit(outcomes_p, outcomes_q, events, alpha=ALPHA)
    return result.epsilon_lb, claim, exact_epsilon(law, epsilon)


# --------------------------------------------------------------------------------------------
# default suite: pure-DP laws (Corollary 3), eps_Q = 1, E[K] = 10
# --------------------------------------------------------------------------------------------

PURE_LAWS = [("logarithmic", None), ("geometric", None), ("negative_binomial", 0.5)]
EPS_Q, MEAN = 1.0, 10


@pytest.mark.parametrize(("distribution", "eta"), PURE_LAWS)
def test_repetition_is_within_its_pure_bound(distribution, eta):
    law = RandomizedRepetition(distribution, MEAN, eta)
    lower_bound, claim, exact = pure_dp_audit(law, EPS_Q, N_FAST, seed=11)
    report(f"{distribution} eta={law.eta:g} eps_Q={EPS_Q:g} E[K]={MEAN} (sound)",
           lower_bound, claim, exact)
    assert claim == pytest.approx((2.0 + law.eta) * EPS_Q)
    assert exact <= claim  # the arithmetic: Corollary 3 covers this pair
    assert lower_bound <= claim
    assert lower_bound > 0.5 * exact  # the audit has power: it sees most of the true epsilon


@pytest.mark.parametrize(("distribution", "eta"), PURE_LAWS)
def test_fixed_number_of_runs_with_the_repetition_claim_is_flagged(distribution, eta):
    law = RandomizedRepetition(distribution, MEAN, eta)
    broken = RandomizedRepetition("fixed", MEAN)  # always K = n_iter
    lower_bound, claim, exact = pure_dp_audit(broken, EPS_Q, N_FAST, seed=23, claim_law=law)
    report(f"BROKEN fixed K={MEAN} claiming {distribution} eta={law.eta:g}", lower_bound,
           claim, exact)
    assert exact == pytest.approx(MEAN * EPS_Q)  # best of k RR bits: exactly k * eps
    assert lower_bound > claim


def test_releasing_k_with_the_winner_is_flagged():
    law = RandomizedRepetition("logarithmic", MEAN)
    lower_bound, claim, _ = pure_dp_audit(law, EPS_Q, N_FAST, seed=37, release_k=True)
    report(f"BROKEN logarithmic E[K]={MEAN} releasing K", lower_bound, claim)
    assert lower_bound > claim


# --------------------------------------------------------------------------------------------
# default suite: Poisson (Theorem 6, corrected), (eps, delta) claim
# --------------------------------------------------------------------------------------------

POISSON_MEAN = 5


def approximate_audit(law, claim_law, n_runs, seed, epsilon=EPS_Q):
    claim, claim_delta = claimed(claim_law, epsilon, TARGET_DELTA)
    outcomes_p, outcomes_q = simulate_both_sides(law, epsilon, n_runs, seed)
    if law.distribution == "poisson":
        check_frequencies(law, epsilon, outcomes_p, "D")
        check_frequencies(law, epsilon, outcomes_q, "D'")
    events = output_events(claim_law)
    lower_bound = approximate_dp_audit(outcomes_p, outcomes_q, events, claim_delta)
    return lower_bound, claim, claim_delta, exact_epsilon(law, epsilon, claim_delta)


def test_poisson_repetition_is_within_its_approximate_dp_bound():
    law = RandomizedRepetition("poisson", POISSON_MEAN)
    with pytest.raises(ValueError, match="delta"):
        claimed(law, EPS_Q, 0.0)  # no pure bound
    lower_bound, claim, claim_delta, exact = approximate_audit(law, law, N_FAST, seed=41)
    report(f"poisson mu={POISSON_MEAN} eps_Q={EPS_Q:g} at delta={claim_delta:g} (sound)",
           lower_bound, claim, exact)
    assert claim_delta == pytest.approx(TARGET_DELTA)
    assert exact <= claim
    assert lower_bound <= claim
    assert lower_bound > 0.5 * exact


def test_poisson_claim_with_a_fixed_number_of_runs_is_flagged():
    law = RandomizedRepetition("poisson", POISSON_MEAN)
    broken = RandomizedRepetition("fixed", POISSON_MEAN)
    lower_bound, claim, claim_delta, exact = approximate_audit(broken, law, N_FAST, seed=43)
    report(f"BROKEN fixed K={POISSON_MEAN} claiming poisson at delta={claim_delta:g}",
           lower_bound, claim, exact)
    assert lower_bound > claim


# --------------------------------------------------------------------------------------------
# slow: more runs, more settings (pure bound, RDP route at delta, negative eta)
# --------------------------------------------------------------------------------------------

SLOW_LAWS = [*PURE_LAWS, ("negative_binomial", -0.5)]
SLOW_PURE = [(d, eta, eps, mean) for d, eta in SLOW_LAWS for eps, mean in ((0.5, 30), (3.0, 10))]
# Broken variant in the slow suite: always K = 10. (With K = 30 at eps_Q = 0.5 the violation
# sits on the event "all 30 bits are 0", of probability 6e-7 on either side: invisible to
# 2e5 runs. An audit only sees what its sample can reach.)
BROKEN_K = 10


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "eta", "epsilon", "mean"), SLOW_PURE)
def test_slow_pure_bound_audit(distribution, eta, epsilon, mean):
    law = RandomizedRepetition(distribution, mean, eta)
    lower_bound, claim, exact = pure_dp_audit(law, epsilon, N_SLOW, seed=101)
    report(f"{distribution} eta={law.eta:g} eps_Q={epsilon:g} E[K]={mean} (sound, slow)",
           lower_bound, claim, exact)
    assert exact <= claim
    assert lower_bound <= claim


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 3.0])
@pytest.mark.parametrize(("distribution", "eta"), SLOW_LAWS)
def test_slow_fixed_runs_flagged(distribution, eta, epsilon):
    law = RandomizedRepetition(distribution, BROKEN_K, eta)
    broken = RandomizedRepetition("fixed", BROKEN_K)
    lower_bound, claim, exact = pure_dp_audit(broken, epsilon, N_SLOW, seed=103, claim_law=law)
    report(f"BROKEN fixed K={BROKEN_K} claiming {distribution} eta={law.eta:g} "
           f"eps_Q={epsilon:g} (slow)", lower_bound, claim, exact)
    assert lower_bound > claim


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "eta", "epsilon", "mean"), [
    ("logarithmic", None, 3.0, 2), ("geometric", None, 1.0, 2), ("geometric", None, 3.0, 5),
    ("poisson", None, 1.0, 5), ("poisson", None, 2.0, 2),
])
def test_slow_rdp_route_audit(distribution, eta, epsilon, mean):
    """Few runs: the reported epsilon is the RDP bound at delta, below the pure bound."""
    law = RandomizedRepetition(distribution, mean, eta)
    lower_bound, claim, claim_delta, exact = approximate_audit(law, law, N_SLOW, seed=107,
                                                           epsilon=epsilon)
    report(f"{distribution} eps_Q={epsilon:g} E[K]={mean} RDP route at delta={claim_delta:g}"
           " (sound, slow)", lower_bound, claim, exact)
    if law.is_truncated_negative_binomial:
        assert claim < (2.0 + law.eta) * epsilon  # the RDP bound was the one reported
    assert exact <= claim
    assert lower_bound <= claim
