"""Unit tests of the doubling-step SVT selector: arithmetic, invariants, API, no leaks.

The statistical privacy audit is in ``tests/audit/test_audit_svt.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdptune.accounting import event_cost, svt_max_above
from skdptune.events import DoublingSVTEvent
from skdptune.selection import DoublingSVT, Selection, _svt

RECORD_KEYS = {"round", "threshold_base", "step", "outcome", "selected"}


def counts(trace):
    above = sum(r["outcome"] == "above" for r in trace)
    return above, len(trace) - above


def replay(trace, utility_floor, granularity):
    """Re-derive every public field of the trace from the outcomes alone."""
    units, step = 0, 1
    for i, record in enumerate(trace, start=1):
        assert record["round"] == i
        assert record["step"] == step
        assert record["threshold_base"] == pytest.approx(utility_floor + (units + step)
                                                         * granularity)
        if record["outcome"] == "above":
            assert isinstance(record["selected"], int)
            units += step
            step *= 2
        else:
            assert record["outcome"] == "none" and record["selected"] is None
            step //= 2
    return units, step


# ---------------------------------------------------------------- arithmetic and events

@pytest.mark.parametrize("floor, g, n_above", [
    (0.5, 0.05, 10),
    (0.1, 0.3, 3),       # 0.9 / 0.3 == 3.0000000000000004 in floating point
    (0.5, 0.1, 5),
    (0.9, 0.05, 2),      # 0.09999999999999998 / 0.05 == 1.9999999999999996
    (0.7, 0.1, 3),       # 0.30000000000000004 / 0.1 == 3.0000000000000004
    (0.0, 0.3, 4),
    (0.0, 1.0, 1),
    (0.5, 0.7, 1),
    (0.0, 0.25, 4),
    (0.999, 0.5, 1),
])
def test_max_above_is_ceil_with_float_tolerance(floor, g, n_above):
    svt = DoublingSVT(1.0, sensitivity=0.01, granularity=g, utility_floor=floor)
    assert svt.max_above == n_above
    # N * g reaches 1 - u0 (up to rounding), (N - 1) * g does not
    assert n_above * g >= (1 - floor) - 1e-12
    assert (n_above - 1) * g < (1 - floor) - 1e-12


@pytest.mark.parametrize("epsilon, floor, g", [(1.0, 0.5, 0.05), (0.3, 0.0, 0.1),
                                               (2.0, 0.9, 0.05), (5.0, 0.5, 0.5)])
def test_epsilon_round_and_privacy_event(epsilon, floor, g):
    svt = DoublingSVT(epsilon, sensitivity=0.02, granularity=g, utility_floor=floor)
    n_above = svt.max_above
    assert svt.epsilon_round == pytest.approx(2 * epsilon / (3 * n_above + 1))
    # the sound bound N * eps0 + (N + 1) * eps0 / 2 spends exactly the stated epsilon
    eps0 = svt.epsilon_round
    assert n_above * eps0 + (n_above + 1) * eps0 / 2 == pytest.approx(epsilon)
    event = svt.privacy_event()
    assert isinstance(event, DoublingSVTEvent)
    assert event == DoublingSVTEvent(max_above=n_above, epsilon_round=eps0)


@pytest.mark.parametrize("floor, g", [(0.5, 0.05), (0.7, 0.1), (0.0, 0.3), (0.999, 0.5)])
def test_selector_and_accounting_agree(floor, g):
    """The guard's N is the accounting's N, and the event costs exactly ``epsilon``."""
    svt = DoublingSVT(1.7, sensitivity=0.01, granularity=g, utility_floor=floor)
    assert svt.max_above == svt_max_above(floor, g)
    assert event_cost(svt.privacy_event()) == pytest.approx((1.7, 0.0))


def test_privacy_event_available_before_select_and_unchanged_by_it():
    svt = DoublingSVT(1.0, sensitivity=0.01, random_state=0)
    before = svt.privacy_event()
    svt.select(np.linspace(0, 1, 7))
    assert svt.privacy_event() == before


# ---------------------------------------------------------------- trace and invariants

def test_trace_structure_and_replay():
    svt = DoublingSVT(2.0, sensitivity=0.001, granularity=0.05, utility_floor=0.5,
                      random_state=3)
    result = svt.select(np.array([0.55, 0.8, 0.62, 0.7]))
    assert isinstance(result, Selection)
    assert isinstance(result.trace, tuple) and len(result.trace) >= 1
    for record in result.trace:
        assert set(record) == RECORD_KEYS
    units, step = replay(result.trace, 0.5, 0.05)
    assert step == 0 or units >= svt.max_above
    aboves = [r["selected"] for r in result.trace if r["outcome"] == "above"]
    assert result.fallback is (not aboves)
    assert result.index == (aboves[-1] if aboves else 0)


def _random_utilities(rng):
    kind = rng.randint(5)
    n = rng.randint(1, 8)
    if kind == 0:
        return np.ones(n)                                   # adversarial for the guard
    if kind == 1:
        return np.zeros(n)
    if kind == 2:
        return rng.choice([0.0, 1.0], size=n)
    return rng.uniform(size=n)


@pytest.mark.parametrize("floor, g", [(0.5, 0.05), (0.9, 0.05), (0.0, 0.3), (0.7, 0.1),
                                      (0.0, 1.0), (0.5, 0.125)])
def test_round_counts_never_exceed_the_accounted_caps(floor, g):
    """<= N above rounds, <= N + 1 none rounds, and the tighter facts proved in the docs."""
    rng = np.random.RandomState(0)
    for run in range(150):
        # large epsilon and tiny sensitivity make noise small, so all-ones utilities push
        # the threshold up as fast as possible; small epsilon makes the trajectory erratic
        epsilon = [50.0, 1.0, 0.05][run % 3]
        svt = DoublingSVT(epsilon, sensitivity=rng.choice([1e-4, 0.01, 0.2]),
                          granularity=g, utility_floor=floor, random_state=run)
        result = svt.select(_random_utilities(rng))
        n_above = svt.max_above
        above, none = counts(result.trace)
        assert above <= n_above
        assert none <= n_above + 1
        # sharper, as proved in docs/selection.md: none <= above + 1, the cost of every
        # transcript is at most (3N - 1) eps0 / 2 and there are at most 2N - 1 rounds
        assert none <= above + 1
        assert above + none / 2 <= (3 * n_above - 1) / 2
        assert len(result.trace) <= 2 * n_above - 1
        replay(result.trace, floor, g)


def _guard_hits(n_runs=300):
    """All-ones utilities under heavy noise: how often the guard (not step == 0) ends a run."""
    hits, max_above_seen = 0, 0
    for seed in range(n_runs):
        svt = DoublingSVT(0.3, sensitivity=0.2, granularity=0.25, utility_floor=0.5,
                          random_state=seed)
        result = svt.select(np.ones(3))
        units, step = replay(result.trace, 0.5, 0.25)
        above, _ = counts(result.trace)
        max_above_seen = max(max_above_seen, above)
        hits += step > 0
    return hits, max_above_seen, svt.max_above


def test_guard_caps_above_rounds_on_all_ones():
    hits, max_above_seen, n_above = _guard_hits()
    assert n_above == 2
    assert hits > 0                      # the guard, not step == 0, ended some runs
    assert max_above_seen == n_above     # ... and it capped them at exactly N above rounds


def test_without_the_guard_above_rounds_exceed_n(monkeypatch):
    # the invariant above can fail: remove the guard and runs go past N above rounds
    monkeypatch.setattr(_svt, "_guard_reached", lambda units, max_above: False)
    _, max_above_seen, n_above = _guard_hits()
    assert max_above_seen > n_above


def test_fallback_when_nothing_is_ever_above():
    svt = DoublingSVT(50.0, sensitivity=1e-4, granularity=0.05, utility_floor=0.9,
                      random_state=0)
    result = svt.select(np.zeros(4))
    assert result.fallback is True
    assert result.index == 0
    assert [r["outcome"] for r in result.trace] == ["none"]
    assert result.trace[0]["selected"] is None


def test_clear_winner_is_selected_most_of_the_time():
    utilities = np.array([0.5, 0.5, 0.9, 0.5, 0.5])
    wins = 0
    for seed in range(100):
        svt = DoublingSVT(1.0, sensitivity=1 / 1000, granularity=0.05, utility_floor=0.5,
                          random_state=seed)
        wins += svt.select(utilities).index == 2
    assert wins >= 90


def test_order_shuffle_is_valid_and_selects_the_winner():
    utilities = np.array([0.5, 0.5, 0.9, 0.5, 0.5])
    wins = 0
    for seed in range(60):
        svt = DoublingSVT(1.0, sensitivity=1 / 1000, order="shuffle", random_state=seed)
        result = svt.select(utilities)
        replay(result.trace, 0.5, 0.05)
        above, none = counts(result.trace)
        assert above <= svt.max_above and none <= svt.max_above + 1
        wins += result.index == 2
    assert wins >= 50


def test_shuffle_spreads_the_choice_among_tied_candidates():
    utilities = np.full(4, 0.95)
    fixed = [DoublingSVT(1.0, sensitivity=1e-4, random_state=s).select(utilities).index
             for s in range(40)]
    shuffled = [DoublingSVT(1.0, sensitivity=1e-4, order="shuffle",
                            random_state=s).select(utilities).index for s in range(40)]
    # the fixed order favours the first candidates; a fresh permutation per round does not
    assert fixed.count(3) < shuffled.count(3)
    assert set(shuffled) == {0, 1, 2, 3}


# ---------------------------------------------------------------- randomness

def test_same_seed_same_result_and_repeated_calls_agree():
    utilities = np.array([0.6, 0.62, 0.61, 0.58])
    a = DoublingSVT(1.0, sensitivity=0.01, random_state=42)
    b = DoublingSVT(1.0, sensitivity=0.01, random_state=42)
    assert a.select(utilities) == b.select(utilities)
    assert a.select(utilities) == a.select(utilities)  # an int seeds every call afresh


def test_different_seeds_give_different_transcripts():
    utilities = np.array([0.6, 0.62, 0.61, 0.58])
    transcripts = {
        tuple((r["outcome"], r["selected"])
              for r in DoublingSVT(1.0, sensitivity=0.01, random_state=s).select(utilities).trace)
        for s in range(20)
    }
    assert len(transcripts) > 3


def test_random_state_instance_is_advanced():
    utilities = np.array([0.6, 0.62, 0.61, 0.58])
    svt = DoublingSVT(1.0, sensitivity=0.01, random_state=np.random.RandomState(0))
    results = {tuple((r["outcome"], r["selected"]) for r in svt.select(utilities).trace)
               for _ in range(20)}
    assert len(results) > 3


def test_secure_rng_path_runs():
    svt = DoublingSVT(1.0, sensitivity=0.01, order="shuffle")  # random_state=None
    result = svt.select(np.array([0.5, 0.9, 0.7]))
    assert 0 <= result.index < 3
    assert len(result.trace) >= 1


def test_noise_comes_from_diffprivlib_laplace(monkeypatch):
    import diffprivlib.mechanisms

    calls = []
    original = diffprivlib.mechanisms.Laplace.randomise

    def spy(self, value):
        calls.append((self.sensitivity, self.epsilon))
        return original(self, value)

    monkeypatch.setattr(diffprivlib.mechanisms.Laplace, "randomise", spy)
    monkeypatch.setattr(np.random, "laplace", lambda *a, **k: pytest.fail("numpy laplace"))
    svt = DoublingSVT(1.0, sensitivity=0.01, random_state=0)
    svt.select(np.array([0.7, 0.8]))
    eps0 = svt.epsilon_round
    assert calls and {c[1] for c in calls} == {eps0}
    assert {c[0] for c in calls} <= {2 * 0.01, 4 * 0.01}
    assert 2 * 0.01 in {c[0] for c in calls}  # the threshold


# ---------------------------------------------------------------- validation and leaks

@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("inf")), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon="1"), "epsilon"),
    (dict(sensitivity=0.0), "sensitivity"),
    (dict(sensitivity=-0.1), "sensitivity"),
    (dict(sensitivity=float("inf")), "sensitivity"),
    (dict(granularity=0.0), "granularity"),
    (dict(granularity=-0.05), "granularity"),
    (dict(granularity=float("nan")), "granularity"),
    (dict(granularity=1e-320), "granularity"),
    (dict(utility_floor=1.0), "utility_floor"),
    (dict(utility_floor=-0.1), "utility_floor"),
    (dict(utility_floor=float("nan")), "utility_floor"),
    (dict(order="random"), "order"),
    (dict(random_state="seed"), "random_state"),
])
def test_invalid_parameters_raise_before_any_data(kwargs, match):
    params = dict(epsilon=1.0, sensitivity=0.01)
    params.update(kwargs)
    epsilon = params.pop("epsilon")
    with pytest.raises(ValueError, match=match):
        DoublingSVT(epsilon, **params)


SECRET = np.array([0.6180339887, 0.7071067811, 0.5772156649])


@pytest.mark.parametrize("bad", [np.array([]), np.ones((2, 2)), np.array([0.3, 1.5]),
                                 np.array([0.3, np.nan]), np.array([-0.2, 0.5]),
                                 ["a", "b"]])
def test_invalid_utilities_raise_without_values(bad):
    svt = DoublingSVT(1.0, sensitivity=0.01, random_state=0)
    with pytest.raises(ValueError) as info:
        svt.select(bad)
    message = str(info.value)
    for token in ("1.5", "nan", "-0.2", "0.3", "'a'"):
        assert token not in message


def _contains_utilities(obj, utilities, depth=0):
    """Whether ``obj`` holds the utilities or any single utility value."""
    if depth > 4:
        return False
    if isinstance(obj, np.ndarray):
        return (obj.shape == utilities.shape and np.allclose(obj, utilities)) or any(
            np.isclose(obj, v).any() for v in utilities) if obj.dtype.kind == "f" else False
    if isinstance(obj, float):
        return any(math.isclose(obj, v) for v in utilities)
    if isinstance(obj, dict):
        return any(_contains_utilities(v, utilities, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return any(_contains_utilities(v, utilities, depth + 1) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return _contains_utilities(vars(obj), utilities, depth + 1)
    return False


def test_no_utility_leaks_into_selector_or_result():
    svt = DoublingSVT(1.0, sensitivity=0.001, granularity=0.05, utility_floor=0.5,
                      random_state=0)
    before = dict(vars(svt))
    result = svt.select(SECRET.copy())
    assert vars(svt) == before  # select stores nothing
    assert not _contains_utilities(vars(svt), SECRET)
    assert not _contains_utilities(result, SECRET)
    assert not _contains_utilities(list(result.trace), SECRET)


def test_no_output_while_selecting(capsys, caplog, recwarn):
    DoublingSVT(1.0, sensitivity=0.001, random_state=0).select(SECRET.copy())
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert not caplog.records
    assert len(recwarn) == 0


def test_module_constants_are_the_sound_multipliers():
    # the audits monkeypatch these; library code must keep the sound values
    assert _svt.THRESHOLD_NOISE_MULTIPLIER == 2.0
    assert _svt.QUERY_NOISE_MULTIPLIER == 4.0
