"""The bounded-domain Laplace scales found once: the same noise bit for bit, only while skdptune
fits, and nothing kept afterwards (skdptune/_scale_cache.py)."""

from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.mechanisms import LaplaceBoundedDomain
from diffprivlib.models import GaussianNB, StandardScaler
from diffprivlib.tools import nanvar, std, var

from skdptune import DPGridSearchCV, DPRandomSearchCV, _private, _scale_cache
from skdptune.evaluation import _fit

ORIGINAL = _scale_cache._DIFFPRIVLIB_FIND_SCALE

#: (epsilon, delta, sensitivity, lower, upper): small and large budgets, delta > 0, a
#: sensitivity at the diameter, an unbounded upper end (diffprivlib's PCA uses one), numpy
#: floats, integer bounds (GaussianNB's lower end), and settings that differ in one attribute
#: only -- each must get its own scale
SETTINGS = [(0.01, 0.0, 0.25, 0.0, 1.0), (0.5, 0.0, 1e-4, 0.0, 1.0), (4.0, 0.0, 2.0, -1.0, 1.0),
            (1.0, 1e-6, 0.3, 0.0, 10.0), (0.3, 0.0, 1.0, 0, 1.0), (2.0, 0.0, 5.0, 0.0, np.inf),
            (np.float64(0.7), 0.0, np.float64(1 / 3), np.float64(0.0), np.float64(4.0)),
            (0.5, 0.0, 0.01, 0.0, 1.0), (0.5, 0.0, 0.02, 0.0, 1.0), (0.5, 0.0, 0.01, 0.0, 2.0),
            (0.6, 0.0, 0.01, 0.0, 1.0), (0.5, 1e-9, 0.01, 0.0, 1.0), (0.5, 0.0, 0.01, -0.5, 1.0),
            (2.0, 0.0, 0.5969161720427681, 0.0, 4.299195766448975)]
#: types diffprivlib keeps as given in the bounds: never looked up. The first two have the
#: last setting's values, and other scales (float32 and long double arithmetic): a table that
#: dropped the types would hand them the float64 scale
OTHER_TYPES = [(2.0, 0.0, 0.5969161720427681, np.float32(0.0), np.float32(4.299195766448975)),
               (2.0, 0.0, 0.5969161720427681, np.longdouble(0.0),
                np.longdouble(4.299195766448975)),
               (0.5, 0.0, 0.3, np.int64(0), np.int64(3))]


class _CountingTable(dict):
    """The module's table, counting the scales found in it."""

    hits = 0

    def get(self, key, default=None):
        value = super().get(key, default)
        self.hits += value is not None
        return value


@pytest.fixture
def table(monkeypatch):
    counting = _CountingTable()
    monkeypatch.setattr(_scale_cache, "_scales", counting)
    return counting


def _mechanism(epsilon, delta, sensitivity, lower, upper, seed=0):
    return LaplaceBoundedDomain(epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                lower=lower, upper=upper, random_state=seed)


def _scales_and_draws(settings):
    """Every setting's scale and three draws, the settings taken twice in turn (the second
    time from the table, where there is one)."""
    out = []
    for _ in range(2):
        for setting in settings:
            value = 0.5 * (float(setting[3]) + min(float(setting[4]), 10.0))
            out.append((_mechanism(*setting)._find_scale(),
                        [_mechanism(*setting, seed=s).randomise(value) for s in range(3)]))
    return out


def _bits(out):
    """The scales and draws by their exact bits (``-0.0`` is not ``0.0``)."""
    return [(float(scale).hex(), [float(d).hex() for d in draws]) for scale, draws in out]


def test_diffprivlibs_method_is_the_one_written_against():
    # a release whose method reads anything else is left alone (test below); this one applies
    assert _scale_cache._APPLIES
    assert LaplaceBoundedDomain._find_scale is ORIGINAL  # untouched outside skdptune's fits


def test_every_scale_and_draw_is_diffprivlibs_bit_for_bit(table):
    expected = _bits(_scales_and_draws(SETTINGS + OTHER_TYPES))
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is not ORIGINAL
        got = _bits(_scales_and_draws(SETTINGS + OTHER_TYPES))
        assert table.hits >= len(SETTINGS)  # looked up, not redone
    assert got == expected


def test_a_key_without_the_sensitivity_changes_the_noise(monkeypatch):
    """The broken twin: a table keyed on fewer of the five attributes (here without the
    sensitivity) hands a mechanism another's scale, and the bit-for-bit comparison above
    sees it."""
    def without_sensitivity(self):
        key = tuple(_scale_cache._exact(getattr(self, name))
                    for name in ("epsilon", "delta", "lower", "upper"))
        return _scale_cache._scale(key, self)

    expected = _bits(_scales_and_draws(SETTINGS))
    monkeypatch.setattr(_scale_cache, "_find_scale_once", without_sensitivity)
    with _scale_cache.scales_found_once():
        assert _bits(_scales_and_draws(SETTINGS)) != expected


def test_the_sign_of_a_zero_is_part_of_the_key():
    # diffprivlib takes a sensitivity of -0.0 (it is not below 0), and at epsilon 1 its scale
    # is -0.0
    expected = ORIGINAL(_mechanism(1.0, 0.0, -0.0, 0.0, 1.0))
    assert math.copysign(1.0, expected) == -1.0
    with _scale_cache.scales_found_once():
        assert math.copysign(1.0, _mechanism(1.0, 0.0, 0.0, 0.0, 1.0)._find_scale()) == 1.0
        assert math.copysign(1.0, _mechanism(1.0, 0.0, -0.0, 0.0, 1.0)._find_scale()) == -1.0


def test_other_types_find_their_scale_with_diffprivlibs_method(table):
    with _scale_cache.scales_found_once():
        for setting in OTHER_TYPES:
            before = len(table)
            assert _mechanism(*setting)._find_scale() == ORIGINAL(_mechanism(*setting))
            assert len(table) == before


def test_the_models_and_tools_draw_the_same_noise(table):
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(120, 6)), rng.randint(0, 2, size=120)

    def fits():
        nb = GaussianNB(bounds=(0.0, 1.0), epsilon=0.5, random_state=1,
                        accountant=BudgetAccountant()).fit(X, y)
        scaler = StandardScaler(bounds=(0.0, 1.0), epsilon=0.5, random_state=2,
                                accountant=BudgetAccountant()).fit(X)
        tools = [f(X[:, 0], epsilon=0.5, bounds=(0.0, 1.0), random_state=3,
                   accountant=BudgetAccountant()) for f in (var, std, nanvar)]
        return [nb.theta_, nb.var_, nb.class_count_, scaler.mean_, scaler.var_, *tools]

    expected = fits()
    with _scale_cache.scales_found_once():
        got = fits()
        assert table.hits > 0  # the scaler's features share one
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_table_is_emptied_when_the_last_context_leaves(table):
    with _scale_cache.scales_found_once():
        with _scale_cache.scales_found_once():
            _mechanism(*SETTINGS[0])._find_scale()
        assert LaplaceBoundedDomain._find_scale is not ORIGINAL  # the outer one is still in
        assert len(table) == 1  # and keeps the table
    assert LaplaceBoundedDomain._find_scale is ORIGINAL
    assert len(table) == 0


def test_concurrent_contexts_restore_diffprivlib_once_all_have_left(table):
    inside, leave, errors = threading.Barrier(4), threading.Event(), []

    def worker():
        try:
            with _scale_cache.scales_found_once():
                inside.wait(timeout=10)
                leave.wait(timeout=10)
                mechanism = _mechanism(*SETTINGS[0])
                assert mechanism._find_scale() == ORIGINAL(_mechanism(*SETTINGS[0]))
        except Exception as error:  # noqa: BLE001 -- reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    inside.wait(timeout=10)
    assert LaplaceBoundedDomain._find_scale is not ORIGINAL
    leave.set()
    for thread in threads:
        thread.join()
    assert errors == []
    assert LaplaceBoundedDomain._find_scale is ORIGINAL
    assert len(table) == 0


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="fork (joblib's multiprocessing backend on Linux)")
def test_a_process_forked_inside_starts_with_diffprivlibs_method_and_an_empty_table(table):
    with _scale_cache.scales_found_once():
        _mechanism(*SETTINGS[0])._find_scale()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report, then leave without running the parent's cleanup
            fresh = (LaplaceBoundedDomain._find_scale is ORIGINAL
                     and len(table) == 0
                     and _scale_cache._entered == 0 and not _scale_cache._lock.locked())
            with _scale_cache.scales_found_once():  # and works there
                works = _mechanism(*SETTINGS[1])._find_scale() == ORIGINAL(
                    _mechanism(*SETTINGS[1]))
            os.write(write, b"1" if fresh and works else b"0")
            os._exit(0)
        os.close(write)
        answer = os.read(read, 1)
        os.waitpid(pid, 0)
        os.close(read)
        assert LaplaceBoundedDomain._find_scale is not ORIGINAL  # the parent is still inside
    assert answer == b"1"


def test_another_release_of_the_method_is_left_alone(monkeypatch):
    monkeypatch.setattr(_scale_cache, "_APPLIES", False)
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is ORIGINAL
    # the check itself: a method whose nested helper reads one more attribute is another one
    namespace = {}
    exec("def other(self):\n"
         "    def helper(x):\n"
         "        return np.exp(x) + self.extra\n"
         "    return helper(self.epsilon + self.delta + self.upper + self.lower"
         " + self.sensitivity) + np.log(2)", {"np": np}, namespace)
    assert not _scale_cache._reads_only_the_five(namespace["other"])
    assert _scale_cache._reads_only_the_five(ORIGINAL)


def test_a_method_replaced_by_someone_else_is_left_alone(monkeypatch):
    def theirs(self):
        return ORIGINAL(self)

    monkeypatch.setattr(LaplaceBoundedDomain, "_find_scale", theirs)
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is theirs
    assert LaplaceBoundedDomain._find_scale is theirs


@pytest.mark.parametrize("search", ["grid", "random"])
def test_a_search_uses_the_table_returns_the_same_model_and_keeps_nothing(search, table,
                                                                          monkeypatch):
    """The private region, the worker tasks and every fit are inside the context; a search's
    returned model is the one it returns with diffprivlib's method left in place; after the
    fit the table is empty."""
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(600, 5)), rng.randint(0, 2, size=600)
    space = {"var_smoothing": [1e-9, 1e-3, 1e-1]}
    hits = []
    real_leave = _scale_cache._leave

    def leave():  # the hits of the table before it is emptied
        if _scale_cache._entered == 1:
            hits.append(table.hits)
        real_leave()

    monkeypatch.setattr(_scale_cache, "_leave", leave)

    def fitted():
        estimator = GaussianNB(bounds=(0.0, 1.0), accountant=BudgetAccountant())
        kind = DPGridSearchCV if search == "grid" else DPRandomSearchCV
        extra = {"min_partition_size": 50} if search == "grid" else {"n_iter": 20}
        s = kind(estimator, space, epsilon=2.0, classes=[0, 1], random_state=0,
                 accountant=BudgetAccountant(), **extra).fit(X, y)
        return s.best_params_, s.best_estimator_.theta_, s.best_estimator_.var_

    with_table = fitted()
    assert max(hits) > 0
    assert LaplaceBoundedDomain._find_scale is ORIGINAL  # restored after the fit
    assert len(table) == 0
    for module in (_fit, _private):
        monkeypatch.setattr(module, "scales_found_once", _scale_cache.contextlib.nullcontext)
    without = fitted()
    assert with_table[0] == without[0]
    for a, b in zip(with_table[1:], without[1:], strict=True):
        np.testing.assert_array_equal(a, b)


def _random_settings(n, seed=0):
    """``n`` settings as diffprivlib's models and tools make them: GaussianNB's variance (its
    sensitivity the squared distance of a noisy mean to the far bound, its range that times a
    noisy count), scalers' and tools' (a diameter over a count), any budget, some delta."""
    rng = np.random.RandomState(seed)
    settings = []
    for k in range(n):
        lower = [0, 0.0, -1.0, float(rng.uniform(-10, 0))][k % 4]
        upper = lower + float(rng.choice([1.0, 1e-3, 1e4]) * rng.uniform(0.1, 10))
        mean = rng.uniform(lower, upper)
        count = float(rng.randint(1, 5000))
        sensitivity = max(mean - lower, upper - mean) ** 2
        epsilon = float(10 ** rng.uniform(-3, 1.5))
        delta = [0.0, 0.0, float(10 ** rng.uniform(-9, -1))][k % 3]
        if k % 5 == 0:  # a scaler's: the squared diameter over the count, on [0, D^2]
            sensitivity, lower, upper = (upper - lower) ** 2 / count, 0.0, (upper - lower) ** 2
        else:
            lower, upper = 0, sensitivity * count
        settings.append((epsilon, delta, sensitivity, lower, upper))
    return settings


def test_the_bisection_is_diffprivlibs_float_for_float():
    """The step-for-step bisection gives diffprivlib's scale, bit for bit, on every setting
    above and on 2,000 drawn as diffprivlib's models draw theirs; a twin that rewrites one
    exponent, ``-(D - s)/b`` as ``-D/b + s/b`` (the same number on paper), does not."""
    def twin(mechanism):
        eps, delta = mechanism.epsilon, mechanism.delta
        diameter, s = mechanism.upper - mechanism.lower, mechanism.sensitivity

        def f(b):
            c = 2.0 if b == 0 else ((2 - np.exp(-s / b) - np.exp(-diameter / b + s / b))
                                    / (1 - np.exp(-diameter / b)))
            return s / (eps - np.log(c) - np.log(1 - delta))
        left = s / (eps - np.log(1 - delta))
        right = f(left)
        old = (right - left) * 2
        while old > right - left:
            old, middle = right - left, (right + left) / 2
            value = f(middle)
            left, right = (middle if value >= middle else left), (middle if value <= middle
                                                                  else right)
        return (right + left) / 2

    assert _scale_cache._REPRODUCED
    differ = 0
    with np.errstate(all="ignore"):
        for setting in SETTINGS + _random_settings(2000):
            expected = float(ORIGINAL(_mechanism(*setting))).hex()
            assert float(_scale_cache._bisected_scale(_mechanism(*setting))).hex() == expected
            differ += float(twin(_mechanism(*setting))).hex() != expected
    assert differ > 0


def test_the_bisection_is_used_only_where_the_source_is_the_one_reproduced(monkeypatch, table):
    """Another ``_find_scale`` source (a release that changed it): new keys get diffprivlib's
    method itself."""
    assert not _scale_cache._source_is_reproduced(lambda self: 1.0)
    assert _scale_cache._source_is_reproduced(ORIGINAL)
    calls = []

    def counted(mechanism):
        calls.append(mechanism)
        return ORIGINAL(mechanism)
    monkeypatch.setattr(_scale_cache, "_DIFFPRIVLIB_FIND_SCALE", counted)
    monkeypatch.setattr(_scale_cache, "_REPRODUCED", False)
    assert _scale_cache._scale(("a key",), _mechanism(*SETTINGS[0])) == ORIGINAL(
        _mechanism(*SETTINGS[0]))
    assert len(calls) == 1
    monkeypatch.setattr(_scale_cache, "_REPRODUCED", True)
    _scale_cache._scale(("another key",), _mechanism(*SETTINGS[1]))
    assert len(calls) == 1
