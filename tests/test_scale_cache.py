"""The bounded-domain Laplace scales found once: the same noise bit for bit, only inside
skdptune's fits (skdptune/_scale_cache.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.mechanisms import LaplaceBoundedDomain
from diffprivlib.models import GaussianNB, StandardScaler
from diffprivlib.tools import nanvar, std, var

from skdptune import DPGridSearchCV, DPRandomSearchCV, _scale_cache
from skdptune.evaluation import _fit

ORIGINAL = _scale_cache._DIFFPRIVLIB_FIND_SCALE

#: (epsilon, delta, sensitivity, lower, upper): small and large budgets, delta > 0, a
#: sensitivity at the diameter, an unbounded upper end (diffprivlib's PCA uses one)
SETTINGS = [(0.01, 0.0, 0.25, 0.0, 1.0), (0.5, 0.0, 1e-4, 0.0, 1.0), (4.0, 0.0, 2.0, -1.0, 1.0),
            (1.0, 1e-6, 0.3, 0.0, 10.0), (0.3, 0.0, 1.0, 0.0, 1.0), (2.0, 0.0, 5.0, 0.0, np.inf),
            (np.float64(0.7), 0.0, np.float64(1 / 3), np.float64(0.0), np.float64(4.0))]


def _mechanism(epsilon, delta, sensitivity, lower, upper, seed=0):
    return LaplaceBoundedDomain(epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                lower=lower, upper=upper, random_state=seed)


def test_diffprivlibs_method_is_the_one_written_against():
    # a release whose method reads anything else is left alone (test below); this one applies
    assert _scale_cache._APPLIES
    assert LaplaceBoundedDomain._find_scale is ORIGINAL  # untouched outside skdptune's fits


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_scale_and_draw_is_diffprivlibs_bit_for_bit(setting):
    plain = [_mechanism(*setting, seed=s) for s in range(5)]
    expected_scale = ORIGINAL(_mechanism(*setting))
    expected = [m.randomise(0.5 * (setting[3] + min(setting[4], 10.0))) for m in plain]
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is not ORIGINAL
        for _ in range(2):  # computed, then looked up
            assert _mechanism(*setting)._find_scale() == expected_scale
        drawn = [_mechanism(*setting, seed=s).randomise(0.5 * (setting[3] + min(setting[4], 10.0)))
                 for s in range(5)]
    assert drawn == expected


def test_the_models_and_tools_draw_the_same_noise():
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
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_key_without_the_sensitivity_would_change_the_noise(monkeypatch):
    """The broken twin: a table keyed on fewer of the five numbers (here without the
    sensitivity) hands a mechanism another's scale, and the bit-for-bit test sees it."""
    monkeypatch.setattr(_scale_cache, "_find_scale_once",
                        lambda self: _scale_cache._scale(float(self.epsilon), 0.0, 1.0,
                                                         float(self.lower), float(self.upper)))
    setting = (0.5, 0.0, 0.01, 0.0, 1.0)
    expected = _mechanism(*setting).randomise(0.5)
    _scale_cache._scale(0.5, 0.0, 1.0, 0.0, 1.0)  # the other setting's scale is in the table
    with _scale_cache.scales_found_once():
        assert _mechanism(*setting).randomise(0.5) != expected


def test_nested_and_concurrent_contexts_restore_diffprivlib_once_all_have_left():
    with _scale_cache.scales_found_once():
        with _scale_cache.scales_found_once():
            pass
        assert LaplaceBoundedDomain._find_scale is not ORIGINAL  # the outer one is still in
    assert LaplaceBoundedDomain._find_scale is ORIGINAL

    inside, leave, errors = threading.Barrier(4), threading.Event(), []

    def worker():
        try:
            with _scale_cache.scales_found_once():
                inside.wait(timeout=10)
                leave.wait(timeout=10)
                assert _mechanism(*SETTINGS[0])._find_scale() == ORIGINAL(_mechanism(*SETTINGS[0]))
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


def test_a_method_replaced_by_someone_else_is_left_alone(monkeypatch):
    def theirs(self):
        return ORIGINAL(self)

    monkeypatch.setattr(LaplaceBoundedDomain, "_find_scale", theirs)
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is theirs
    assert LaplaceBoundedDomain._find_scale is theirs


def test_another_release_of_the_method_is_left_alone(monkeypatch):
    monkeypatch.setattr(_scale_cache, "_APPLIES", False)
    with _scale_cache.scales_found_once():
        assert LaplaceBoundedDomain._find_scale is ORIGINAL
    # the check itself: a method that reads one more attribute is not the one written against
    namespace = {}
    exec("def other(self):\n    return self.epsilon + self.delta + self.upper + self.lower"
         " + self.sensitivity + self.extra + np.log(2)", {"np": np}, namespace)
    assert not _scale_cache._reads_only_the_five(namespace["other"])
    assert _scale_cache._reads_only_the_five(ORIGINAL)


def test_the_table_is_bounded():
    assert _scale_cache._scale.cache_info().maxsize == _scale_cache.MAX_SCALES


@pytest.mark.parametrize("search", ["grid", "random"])
def test_skdptunes_fits_use_the_table_and_return_the_same_model(search, monkeypatch):
    """Every fit skdptune makes is inside the context (its fitting context), and a search's
    returned model is the one it returns with diffprivlib's method left in place."""
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(600, 5)), rng.randint(0, 2, size=600)
    space = {"var_smoothing": [1e-9, 1e-3, 1e-1]}

    def fitted():
        estimator = GaussianNB(bounds=(0.0, 1.0), accountant=BudgetAccountant())
        kind = DPGridSearchCV if search == "grid" else DPRandomSearchCV
        extra = {"min_partition_size": 50} if search == "grid" else {"n_iter": 20}
        s = kind(estimator, space, epsilon=2.0, classes=[0, 1], random_state=0,
                 accountant=BudgetAccountant(), **extra).fit(X, y)
        return s.best_params_, s.best_estimator_.theta_, s.best_estimator_.var_

    _scale_cache._scale.cache_clear()
    with_table = fitted()
    assert _scale_cache._scale.cache_info().hits > 0
    assert LaplaceBoundedDomain._find_scale is ORIGINAL  # restored after the fit
    monkeypatch.setattr(_fit, "scales_found_once", _scale_cache.contextlib.nullcontext)
    _scale_cache._scale.cache_clear()
    without = fitted()
    assert _scale_cache._scale.cache_info().currsize == 0
    assert with_table[0] == without[0]
    for a, b in zip(with_table[1:], without[1:], strict=True):
        np.testing.assert_array_equal(a, b)
