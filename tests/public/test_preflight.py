"""The public work before the private region (skdptune.public._preflight), tested directly:
the padding is built once and handed on; until ``check_domain`` only the format is read; the
dry run's failure is the one reported first; ``check_domain`` comes after the dry run; and the
order a search reads it in: dry run -> budget -> domain.
"""

import dataclasses

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import BudgetError
from scipy import stats
from sklearn.metrics import get_scorer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer

from skdptune import DPRandomSearchCV
from skdptune._base import SearchSpace
from skdptune.exceptions import DomainError
from skdptune.public import Preflight, RoutedMetadata
from skdptune.public import _preflight as preflight_module
from skdptune.public._preflight import _flat_scorers

SCORERS = {"scoring": get_scorer("accuracy")}


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


def _data(seed=0, n=80):
    rng = np.random.RandomState(seed)
    return rng.uniform(-1, 1, size=(n, 2)), rng.randint(0, 2, size=n)


def _preflight(estimator=None, space=None, X=None, y=None, classes=(0, 1), **metadata):
    if X is None:
        X, y = _data()
    return Preflight(estimator or lr(), None if classes is None else list(classes),
                     SearchSpace(space if space is not None else {"C": [0.1, 1.0]}), X, y,
                     RoutedMetadata(**metadata))


def _nothing():
    return "meanwhile"


# -- built once, from the format ---------------------------------------------------------------
def test_the_padding_is_built_once_and_every_step_gets_that_one(monkeypatch):
    """One padding for the search (the dry run's fits get it), one synthetic dataset for the
    dry run (the magnitude limits are found on it)."""
    built, handed, pending, probed = [], [], [], []
    real_make, real_start = preflight_module.make_padding, preflight_module.start_dry_run
    real_limits = preflight_module.magnitude_limits

    def making(*args, **kwargs):
        built.append(real_make(*args, **kwargs))
        return built[-1]

    def starting(*args, **kwargs):
        handed.append(args[8])  # start_dry_run's padding
        pending.append(real_start(*args, **kwargs))
        return pending[-1]

    def limiting(templates, synthetic):
        probed.append(synthetic)
        return real_limits(templates, synthetic)

    monkeypatch.setattr(preflight_module, "make_padding", making)
    monkeypatch.setattr(preflight_module, "start_dry_run", starting)
    monkeypatch.setattr(preflight_module, "magnitude_limits", limiting)
    preflight = _preflight()
    assert preflight.dry_run(SCORERS, _nothing) == "meanwhile"
    preflight.check_domain()
    assert len(built) == 1 and preflight.public.padding is built[0]
    assert len(handed) == 1 and handed[0] is built[0]
    assert preflight.public.padding.y.tolist() == [0, 1]
    assert len(probed) == 1 and probed[0] is pending[0].synthetic
    assert probed[0][3] is built[0]  # the synthetic dataset's padding: the same one


def test_what_it_builds_depends_on_the_format_only():
    a = _preflight(X=_data(0)[0], y=np.zeros(80, dtype=int))
    b = _preflight(X=_data(1)[0] * 100, y=np.arange(80) % 2)
    assert a.public.n_samples == b.public.n_samples == 80
    assert a.public.classes.tolist() == b.public.classes.tolist() == [0, 1]
    np.testing.assert_array_equal(a.public.padding.X, b.public.padding.X)
    np.testing.assert_array_equal(a.public.padding.y, b.public.padding.y)
    assert a.fill == b.fill and a.candidates == b.candidates == [{"C": 0.1}, {"C": 1.0}]


def test_format_mistakes_are_found_when_it_is_built():
    X, y = _data()
    with pytest.raises(ValueError, match="same number of rows"):
        _preflight(X=X, y=y[:-1])
    with pytest.raises(ValueError, match="sample_weight for the scorer"):
        _preflight(score={"sample_weight": np.ones(3)})
    with pytest.raises(ValueError, match="needs the label set"):
        _preflight(classes=None)
    with pytest.raises(ValueError, match="Invalid parameter 'no_such'"):
        _preflight(space={"no_such": [1]})


def test_nothing_but_the_format_is_read_before_check_domain(monkeypatch):
    """Rows outside the domain (a NaN feature, an undeclared label, a negative weight) pass
    the building and the dry run; ``check_domain`` refuses them."""
    X, y = _data()
    X[3, 0] = np.nan
    y[5] = 7
    weights = np.ones(80)
    weights[9] = -1.0
    for case in ({"X": X, "y": _data()[1]}, {"X": _data()[0], "y": y},
                 {"X": _data()[0], "y": _data()[1], "fit": {"sample_weight": weights}}):
        preflight = _preflight(**case)
        preflight.dry_run(SCORERS, _nothing)
        with pytest.raises(DomainError):
            preflight.check_domain()


# -- the order ---------------------------------------------------------------------------------
def test_check_domain_needs_the_dry_run_first():
    with pytest.raises(RuntimeError, match="needs the dry run first"):
        _preflight().check_domain()


def _failing_meanwhile():
    raise RuntimeError("the plan's pricing failed")


def test_a_failed_dry_run_is_reported_before_what_failed_meanwhile():
    with pytest.raises(ValueError, match="^Dry run failed"):
        _preflight(space={"C": [1.0], "tol": [-1.0]}).dry_run(SCORERS, _failing_meanwhile)
    with pytest.raises(RuntimeError, match="pricing failed"):  # a dry run that passed
        _preflight().dry_run(SCORERS, _failing_meanwhile)


def test_a_failed_dry_run_is_reported_before_the_model_input_settings_refusal():
    """The listing of the steps in front of the model refuses a continuous threshold; the dry
    run's candidates fail too: the dry run's error is the one reported."""
    pipe = Pipeline([("bin", Binarizer()), ("lr", lr())])
    space = {"bin__threshold": stats.uniform(-0.5, 1.0), "lr__tol": [-1.0]}
    with pytest.raises(ValueError, match="^Dry run failed"):
        _preflight(pipe, space).dry_run(SCORERS, _nothing)
    space["lr__tol"] = [1e-4]
    with pytest.raises(ValueError, match="'bin__threshold' may set"):
        _preflight(pipe, space).dry_run(SCORERS, _nothing)


@pytest.mark.parametrize("budget", ["enough", "short"])
@pytest.mark.parametrize("configuration", ["valid", "broken"])
@pytest.mark.parametrize("rows", ["in the domain", "outside it"])
def test_a_search_reports_dry_run_then_budget_then_domain(rows, configuration, budget):
    """A failed dry run is reported whatever the budget and the rows; a budget too small
    whatever the rows (the refusal of a budget must not depend on the data); the domain last.
    Nothing is charged by any of them."""
    X, y = _data(n=200)
    if rows == "outside it":
        X[4, 1] = np.inf
    acc = BudgetAccountant(epsilon=100.0 if budget == "enough" else 0.5)
    space = {"C": [0.1, 1.0]} if configuration == "valid" else {"C": [0.1], "tol": [-1.0]}
    search = DPRandomSearchCV(lr(), space, n_iter=2, classes=[0, 1], accountant=acc,
                              random_state=0)
    if configuration == "broken":
        expected, match = ValueError, "^Dry run failed"
    elif budget == "short":
        expected, match = BudgetError, "would spend"
    elif rows == "outside it":
        expected, match = DomainError, "^X contains"
    else:
        search.fit(X, y)
        assert len(acc.spent_budget) == 1
        return
    with pytest.raises(expected, match=match):
        search.fit(X, y)
    assert acc.spent_budget == []


# -- what check_domain does --------------------------------------------------------------------
def test_check_domain_gives_the_declared_labels_and_checks_both_weights():
    X, y = _data()
    labels = [float(v) for v in y]
    preflight = _preflight(X=X, y=labels)
    preflight.dry_run(SCORERS, _nothing)
    preflight.check_domain()
    assert preflight.y == y.tolist() and all(type(v) is int for v in preflight.y)
    weights = np.ones(80)
    weights[0] = np.nan
    for routed in ({"fit": {"sample_weight": weights}}, {"score": {"sample_weight": weights}}):
        preflight = _preflight(**routed)
        preflight.dry_run(SCORERS, _nothing)
        with pytest.raises(DomainError, match="^sample_weight must be finite"):
            preflight.check_domain()


def test_the_magnitude_limit_is_set_by_the_dry_run():
    plain = _preflight()
    plain.dry_run(SCORERS, _nothing)
    assert plain.magnitude_limit is None
    scaled = Pipeline([("scale", DPStandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))),
                       ("lr", lr())])
    preflight = _preflight(scaled, {"lr__C": [0.1, 1.0]})
    assert preflight.magnitude_limit is None  # not before the dry run
    preflight.dry_run(SCORERS, _nothing)
    assert preflight.magnitude_limit > 0


# -- the small records -------------------------------------------------------------------------
def test_routed_metadata_is_frozen_with_its_own_dicts():
    a, b = RoutedMetadata(), RoutedMetadata()
    assert a.fit == a.score == a.split == {} and a.fit is not b.fit
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.fit = {"sample_weight": np.ones(3)}


def test_several_metrics_are_dry_run_one_by_one():
    accuracy, recall = get_scorer("accuracy"), get_scorer("recall")
    flat = _flat_scorers({"scoring": accuracy,
                          "scorer_": {"acc": accuracy, "rec": recall}})
    assert flat == {"scoring": accuracy, "scorer_['acc']": accuracy, "scorer_['rec']": recall}
