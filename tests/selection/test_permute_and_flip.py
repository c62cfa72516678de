"""Unit tests of the permute-and-flip selector. The privacy audit is in tests/audit/."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from skdptune.accounting import event_cost
from skdptune.events import PermuteAndFlipEvent
from skdptune.selection import PermuteAndFlipSelector, Selection


def exact_probabilities(utilities, epsilon, sensitivity):
    """Permute-and-flip's output law by enumerating the orders (McKenna & Sheldon, Alg. 1)."""
    u = np.asarray(utilities, dtype=float)
    accept = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
    probs = np.zeros(len(u))
    orders = list(itertools.permutations(range(len(u))))
    for order in orders:
        reach = 1.0
        for s in order:
            probs[s] += reach * accept[s] / len(orders)
            reach *= 1 - accept[s]
    return probs


def test_privacy_event_and_result_shape():
    pf = PermuteAndFlipSelector(0.7, sensitivity=0.01, random_state=0)
    assert pf.privacy_event() == PermuteAndFlipEvent(epsilon=0.7)
    assert event_cost(pf.privacy_event()) == pytest.approx((0.7, 0.0))
    result = pf.select(np.array([0.2, 0.4, 0.3]))
    assert isinstance(result, Selection)
    assert result.trace == () and result.fallback is False
    assert isinstance(result.index, int) and 0 <= result.index < 3


def test_output_law_matches_permute_and_flip():
    utilities = np.array([0.50, 0.53, 0.56])
    epsilon, sensitivity = 1.0, 0.02
    expected = exact_probabilities(utilities, epsilon, sensitivity)
    pf = PermuteAndFlipSelector(epsilon, sensitivity=sensitivity,
                                random_state=np.random.RandomState(1))
    draws = np.bincount([pf.select(utilities).index for _ in range(3000)], minlength=3)
    assert stats.chisquare(draws, 3000 * expected).pvalue > 0.001
    # sanity of the reference: the best candidate is the most likely
    assert expected.argmax() == 2 and math.isclose(expected.sum(), 1.0)


def test_clear_winner_is_selected():
    utilities = np.array([0.5, 0.5, 0.9, 0.5, 0.5])
    picks = [PermuteAndFlipSelector(1.0, sensitivity=1 / 1000, random_state=s)
             .select(utilities).index for s in range(100)]
    assert picks.count(2) >= 99


def test_same_seed_same_result_different_seeds_differ():
    utilities = np.array([0.5, 0.51, 0.52, 0.53])
    a = PermuteAndFlipSelector(1.0, sensitivity=0.05, random_state=7)
    b = PermuteAndFlipSelector(1.0, sensitivity=0.05, random_state=7)
    assert a.select(utilities) == b.select(utilities) == a.select(utilities)
    picks = {PermuteAndFlipSelector(1.0, sensitivity=0.05, random_state=s)
             .select(utilities).index for s in range(30)}
    assert len(picks) > 1


def test_secure_rng_path_runs():
    result = PermuteAndFlipSelector(1.0, sensitivity=0.05).select(np.array([0.1, 0.9]))
    assert result.index in (0, 1)


def test_noise_comes_from_diffprivlib(monkeypatch):
    import diffprivlib.mechanisms

    seen = []
    original = diffprivlib.mechanisms.PermuteAndFlip.randomise

    def spy(self, value=None):
        seen.append((self.epsilon, self.sensitivity, self.monotonic))
        return original(self, value)

    monkeypatch.setattr(diffprivlib.mechanisms.PermuteAndFlip, "randomise", spy)
    PermuteAndFlipSelector(0.4, sensitivity=0.02, random_state=0).select(np.array([0.3, 0.6]))
    # monotonic=False: under replace-one a utility can move either way
    assert seen == [(0.4, 0.02, False)]


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-2.0), "epsilon"),
    (dict(epsilon=float("inf")), "epsilon"), (dict(epsilon=None), "epsilon"),
    (dict(sensitivity=0.0), "sensitivity"), (dict(sensitivity=float("nan")), "sensitivity"),
    (dict(random_state=1.5), "random_state"),
])
def test_invalid_parameters(kwargs, match):
    params = dict(epsilon=1.0, sensitivity=0.01)
    params.update(kwargs)
    epsilon = params.pop("epsilon")
    with pytest.raises(ValueError, match=match):
        PermuteAndFlipSelector(epsilon, **params)


@pytest.mark.parametrize("bad", [np.array([]), np.array([[0.1, 0.2]]), np.array([0.25, 1.25]),
                                 np.array([np.inf, 0.5]), np.array([-0.75])])
def test_invalid_utilities_raise_without_values(bad):
    with pytest.raises(ValueError) as info:
        PermuteAndFlipSelector(1.0, sensitivity=0.01, random_state=0).select(bad)
    for token in ("0.25", "1.25", "inf", "-0.75"):
        assert token not in str(info.value)


def test_no_utility_leaks():
    secret = np.array([0.6180339887, 0.7071067811, 0.5772156649])
    pf = PermuteAndFlipSelector(1.0, sensitivity=0.001, random_state=0)
    before = dict(vars(pf))
    result = pf.select(secret.copy())
    assert vars(pf) == before
    values = [v for v in vars(pf).values() if isinstance(v, (float, np.ndarray))]
    values += [result.index]
    for v in values:
        assert not np.isclose(np.asarray(v, dtype=float), secret[:, None]).any()
