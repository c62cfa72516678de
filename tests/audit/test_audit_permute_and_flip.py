"""Statistical privacy audit of the permute-and-flip selector (claim: pure epsilon-DP).

Adversarial pair (replace-one, sensitivity D): two candidates whose utilities move by D in
opposite directions, D = (c, c + 2D) and D' = (c + D, c + D). With permute-and-flip's
acceptance probability exp(eps (u_s - u_max) / (2 D)) the weaker candidate is chosen with
probability exp(-eps) / 2 on D and 1 / 2 on D', so the event "candidate 0" has privacy loss
exactly eps: the pair is tight and the sound selector's lower bound approaches the claim from
below. The broken variant treats the utilities as monotonic (``monotonic=True``, i.e. the
sensitivity halved), which is wrong under replace-one: its true loss on the pair is 2 eps.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from _audit import family_audit
from diffprivlib.mechanisms import PermuteAndFlip

from skdptune.selection import PermuteAndFlipSelector, _permute_and_flip

EPSILON = 1.0
SENSITIVITY = 0.05
D = np.array([0.5, 0.5 + 2 * SENSITIVITY])
D_PRIME = np.array([0.5 + SENSITIVITY, 0.5 + SENSITIVITY])
RUNS = 10_000
EVENTS = [[0], [1]]  # fixed in advance: each output, both directions (Bonferroni)


def sample(utilities, seed):
    selector = PermuteAndFlipSelector(EPSILON, sensitivity=SENSITIVITY,
                                      random_state=np.random.RandomState(seed))
    return [selector.select(utilities).index for _ in range(RUNS)]


def audit():
    return family_audit(sample(D, 11), sample(D_PRIME, 12), EVENTS)


def test_pair_is_a_neighbouring_pair_and_tight():
    assert np.all(np.abs(D - D_PRIME) <= SENSITIVITY + 1e-12)
    assert np.all((D >= 0) & (D <= 1) & (D_PRIME >= 0) & (D_PRIME <= 1))
    # exact law of the weaker candidate: exp(-eps)/2 versus 1/2 -> loss exactly eps
    p, q = math.exp(-EPSILON) / 2, 0.5
    assert math.log(q / p) == pytest.approx(EPSILON)


def test_audit_sound_permute_and_flip():
    start = time.perf_counter()
    result = audit()
    print(f"permute-and-flip sound: {result} vs claim {EPSILON} "
          f"({RUNS} runs/side, {time.perf_counter() - start:.1f}s)")
    assert result.epsilon_lb <= EPSILON
    assert result.epsilon_lb > 0.8 * EPSILON  # the pair is tight: the audit has power


def test_audit_catches_monotonic_permute_and_flip(monkeypatch):
    def broken(**kwargs):
        kwargs["monotonic"] = True  # halves the effective sensitivity: wrong for replace-one
        return PermuteAndFlip(**kwargs)

    monkeypatch.setattr(_permute_and_flip, "PermuteAndFlip", broken)
    result = audit()
    print(f"permute-and-flip monotonic (broken): {result} vs claim {EPSILON}")
    assert result.epsilon_lb > EPSILON
