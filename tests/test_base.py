"""The search base class (skdptune._base), tested directly.

``SearchSpace``, ``TuningPlan`` and ``TuningResult`` as records; and ``BaseDPSearchCV.fit``'s
orchestration on a minimal search of this file's own (``ToySearch``: its three hooks and
nothing else), so that the order of the steps and the single charge are tested apart from the
three real searches: the accountant is charged exactly once per fit that reaches the private
region (success, failure, interrupt, leak) and never on the paths before it (dry run, budget,
domain); the plan's attributes and warnings; ``verbose`` lines held while the region runs.

The three searches' own side of the contract: tests/test_search_contract.py.
"""

import dataclasses
import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB
from diffprivlib.utils import BudgetError
from scipy import stats
from sklearn.metrics import get_scorer
from sklearn.model_selection import ParameterGrid

from skdptune import _base
from skdptune._base import BaseDPSearchCV, SearchSpace, TuningPlan, TuningResult
from skdptune.estimators import estimator_privacy
from skdptune.events import EpsilonDeltaEvent
from skdptune.exceptions import DomainError, PrivacyLeakError, PrivateFitError
from skdptune.public import Preflight, PublicInfo

# -- SearchSpace -------------------------------------------------------------------------------


def test_sub_spaces_are_a_list():
    grid = {"C": [1, 2]}
    assert SearchSpace(grid).sub_spaces() == [grid]
    spaces = [grid, {"tol": [0.1]}]
    assert SearchSpace(spaces).sub_spaces() is spaces


def test_the_dry_run_tries_every_point_of_a_grid_in_order():
    space = SearchSpace([{"C": [1, 2], "tol": [0.1, 0.2]}, {"penalty": ["l2"]}])
    assert space.dry_run_candidates() == [
        {"C": 1, "tol": 0.1}, {"C": 1, "tol": 0.2}, {"C": 2, "tol": 0.1}, {"C": 2, "tol": 0.2},
        {"penalty": "l2"}]
    assert space.dry_run_candidates() == list(ParameterGrid(space.space))


def test_the_dry_run_tries_ten_seeded_draws_of_a_distribution():
    """Public: the same draws on every call and for every search with that space."""
    sub = {"C": stats.loguniform(0.1, 10.0), "tol": [1e-4, 1e-3]}
    first = SearchSpace([sub, {"C": [5.0]}]).dry_run_candidates()
    again = SearchSpace([dict(sub), {"C": [5.0]}]).dry_run_candidates()
    assert len(first) == 11 and first == again and first[-1] == {"C": 5.0}
    assert len({c["C"] for c in first[:10]}) == 10  # draws, not one value


def test_a_declared_dry_run_and_model_input_are_used_as_given():
    tried, shaping = [{"C": 3.0}], [{"C": stats.uniform(0, 1)}]
    space = SearchSpace({"C": stats.uniform(0, 1)}, dry_run=tried, model_input=shaping)
    assert space.dry_run_candidates() == tried and space.dry_run_candidates() is not tried
    assert space.model_input_space() == shaping and space.model_input_space() is not shaping
    plain = SearchSpace({"C": [1.0]})
    assert plain.model_input_space() == [{"C": [1.0]}]


def test_a_space_without_parameters_tries_the_estimator_as_it_is():
    assert SearchSpace({}).dry_run_candidates() == [{}]


def test_the_records_are_frozen_where_they_must_be():
    space = SearchSpace({"C": [1.0]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        space.space = {"C": [2.0]}
    plan = TuningPlan(public=PublicInfo(10, None, None), tuning=(), model_cost=(1.0, 0.0))
    for name, value in [("model_cost", (0.0, 0.0)), ("tuning", ()), ("delta", 1.0)]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(plan, name, value)
    with pytest.raises(TypeError):  # keyword-only: no field is set by its position
        TuningPlan(PublicInfo(10, None, None), (), (1.0, 0.0))
    other = TuningPlan(public=PublicInfo(10, None, None), tuning=(), model_cost=(1.0, 0.0))
    assert plan.scorers is not other.scorers and plan.attributes is not other.attributes
    assert (plan.refit_priced, plan.delta, plan.warnings, plan.inner_split_rows) == (
        False, 0.0, (), None)
    result = TuningResult(candidate_params=[{}], best_index=0)
    assert (result.fallback, result.extra_results, result.attributes,
            result.best_estimator) == (False, {}, {}, None)


# -- a minimal search --------------------------------------------------------------------------
SPACE = {"var_smoothing": [1e-9, 1e-6]}
TUNING_EPSILON = 0.25
#: what ToySearch's hooks were called with, in order
CALLS: list = []


class RecordingAccountant(BudgetAccountant):
    """A ``BudgetAccountant`` that records its checks and charges in ``CALLS`` (the check
    diffprivlib's ``spend`` makes itself is part of the charge)."""

    _spending = False

    def check(self, epsilon, delta):
        if not self._spending:
            CALLS.append("budget check")
        return super().check(epsilon, delta)

    def spend(self, epsilon, delta):
        CALLS.append("charge")
        self._spending = True
        try:
            return super().spend(epsilon, delta)
        finally:
            self._spending = False


class ToySearch(BaseDPSearchCV):
    """Selects the last candidate of a grid; ``behaviour`` says what its run does instead."""

    def __init__(self, estimator, space, *, behaviour="select", plan_warning=False,
                 classes=None, refit=True, n_jobs=None, verbose=0, random_state=None,
                 error_score=0.0, accountant=None, return_train_score=False):
        super().__init__(estimator, classes=classes, refit=refit, n_jobs=n_jobs,
                         verbose=verbose, random_state=random_state, error_score=error_score,
                         accountant=accountant, return_train_score=return_train_score)
        self.space = space
        self.behaviour = behaviour
        self.plan_warning = plan_warning

    def _search_space(self):
        return SearchSpace(self.space)

    def _plan_tuning(self, public, space):
        CALLS.append("plan")
        warned = (UserWarning("a public remark about the plan"),) if self.plan_warning else ()
        return TuningPlan(
            public=public,
            tuning=(("tuning: toy", EpsilonDeltaEvent(TUNING_EPSILON, 0.0, "toy")),),
            model_cost=estimator_privacy(self.estimator, space.space),
            scorers={"scoring": get_scorer("accuracy")},
            attributes={"planned_n_": public.n_samples},
            warnings=warned)

    def _run_tuning(self, plan, X, y, metadata, seeds):
        CALLS.append("run")
        self._log(1, "toy: tuning on the private rows")
        if self.behaviour == "raise":
            raise ValueError(f"record 0 is {X[0]!r}")
        if self.behaviour == "interrupt":
            raise KeyboardInterrupt
        if self.behaviour == "leak":
            raise PrivacyLeakError("read the bounds off the data")
        if self.behaviour == "warn":
            warnings.warn(f"record 0 is {X[0]!r}", UserWarning, stacklevel=1)
        candidates = list(ParameterGrid(self.space))
        model = None
        if self.behaviour == "own model":
            model = GaussianNB(bounds=(-1.0, 1.0), epsilon=0.5).fit(X, y)
        return TuningResult(candidate_params=candidates, best_index=len(candidates) - 1,
                            attributes={"toy_": True}, best_estimator=model)


def nb():
    return GaussianNB(bounds=(-1.0, 1.0), epsilon=0.5)


def toy(**kw):
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", RecordingAccountant())
    kw.setdefault("random_state", 0)
    return ToySearch(kw.pop("estimator", nb()), kw.pop("space", SPACE), **kw)


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    return rng.uniform(-1, 1, size=(60, 2)), rng.randint(0, 2, size=60)


@pytest.fixture(autouse=True)
def _calls(monkeypatch):
    """Record the steps of ``fit`` in ``CALLS``: the hooks and the accountant record
    themselves; the preflight's dry run and domain check and the private region are
    wrapped."""
    CALLS.clear()

    def recorded(name, real):
        def call(*args, **kwargs):
            CALLS.append(name)
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(Preflight, "dry_run", recorded("dry run", Preflight.dry_run))
    monkeypatch.setattr(Preflight, "check_domain",
                        recorded("domain", Preflight.check_domain))
    monkeypatch.setattr(_base, "run_private", recorded("private region", _base.run_private))
    yield
    CALLS.clear()


def _planned(search, n):
    report = search.planned_privacy(n)
    CALLS.clear()
    return report.epsilon, report.delta


def _fitted(search):
    return sorted(name for name in vars(search) if name.endswith("_"))


STEPS = ["plan", "dry run", "budget check", "domain", "private region", "run", "charge"]


def test_a_fit_runs_the_steps_in_order_and_charges_once(data):
    X, y = data
    search = toy()
    planned = _planned(search, len(X))
    search.fit(X, y)
    assert CALLS == STEPS
    assert search.accountant.spent_budget == [planned]
    assert (search.privacy_spent_.epsilon, search.privacy_spent_.delta) == planned
    eps_model = estimator_privacy(nb(), SPACE)[0]
    assert planned[0] == pytest.approx(TUNING_EPSILON + eps_model)
    # the released outputs
    assert search.best_index_ == 1 and search.best_params_ == {"var_smoothing": 1e-6}
    assert search.cv_results_["selected"].tolist() == [False, True]
    assert search.toy_ is True and search.planned_n_ == 60
    assert search.best_estimator_.var_smoothing == 1e-6
    CALLS.clear()
    search.fit(X, y)  # each fit charges its own cost
    assert CALLS == STEPS and search.accountant.spent_budget == [planned, planned]


def test_the_declared_classes_are_the_classes_whatever_the_rows(data):
    X, _ = data
    search = toy(classes=[1, 0, 2])
    with pytest.raises(AttributeError, match="not fitted"):
        search.classes_  # noqa: B018
    search.fit(X, np.zeros(len(X), dtype=int))
    assert search.classes_.tolist() == [0, 1, 2]
    assert search.best_estimator_.classes_.tolist() == [0, 1, 2]


@pytest.mark.parametrize("behaviour, raised", [("raise", PrivateFitError),
                                               ("interrupt", KeyboardInterrupt),
                                               ("leak", PrivacyLeakError)])
def test_a_fit_that_reached_the_private_region_is_charged_once_on_failure(data, behaviour,
                                                                           raised):
    """The data was read: the planned cost is charged, once, and the fit leaves no fitted
    attribute (neither the plan's nor the run's)."""
    X, y = data
    search = toy(behaviour=behaviour)
    planned = _planned(search, len(X))
    with pytest.raises(raised) as info:
        search.fit(X, y)
    assert "record 0" not in str(info.value)
    assert CALLS == STEPS[:-1] + ["charge"]
    assert search.accountant.spent_budget == [planned]
    assert _fitted(search) == []


def test_error_score_raise_lets_the_original_out_and_still_charges(data):
    X, y = data
    search = toy(behaviour="raise", error_score="raise")
    planned = _planned(search, len(X))
    with pytest.warns(UserWarning, match="voids"), pytest.raises(ValueError, match="record 0"):
        search.fit(X, y)
    assert search.accountant.spent_budget == [planned]


def _broken_space():
    return {"var_smoothing": [1e-9, -1.0]}


@pytest.mark.parametrize("path", ["dry run", "budget", "domain"])
def test_nothing_is_charged_before_the_private_region(data, path):
    """Each refusal before the private region: the steps after it never run, the accountant
    is not charged, no fitted attribute is left."""
    X, y = data
    kw = {}
    if path == "dry run":
        kw["space"], raised, until = _broken_space(), ValueError, "dry run"
    elif path == "budget":
        kw["accountant"], raised, until = RecordingAccountant(epsilon=0.1), BudgetError, \
            "budget check"
    else:
        X = X.copy()
        X[5, 0] = np.nan
        raised, until = DomainError, "domain"
    search = toy(**kw)
    with pytest.raises(raised):
        search.fit(X, y)
    assert CALLS == STEPS[:STEPS.index(until) + 1]
    assert search.accountant.spent_budget == []
    assert _fitted(search) == []


def test_a_refused_fit_keeps_the_last_fit_as_it_was(data):
    X, y = data
    search = toy()
    search.fit(X, y)
    before = {name: getattr(search, name) for name in _fitted(search)}
    search.set_params(accountant=RecordingAccountant(epsilon=0.1))
    with pytest.raises(BudgetError):
        search.fit(X, y)
    assert {name: getattr(search, name) for name in _fitted(search)} == before


# -- planned_privacy, the plan's warnings ------------------------------------------------------
def test_planned_privacy_reads_no_data_charges_nothing_and_does_not_warn():
    search = toy(plan_warning=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = search.planned_privacy(60)
    assert CALLS == ["plan"] and search.accountant.spent_budget == []
    assert _fitted(search) == [] and report.epsilon > TUNING_EPSILON


def test_the_plans_warnings_are_given_by_fit(data):
    X, y = data
    with pytest.warns(UserWarning, match="a public remark about the plan"):
        toy(plan_warning=True).fit(X, y)


def test_no_warning_leaves_the_private_region(data):
    X, y = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        toy(behaviour="warn").fit(X, y)
    assert [str(w.message) for w in caught] == []


# -- refit -------------------------------------------------------------------------------------
def test_without_refit_no_model_is_kept_from_an_earlier_fit(data):
    X, y = data
    search = toy()
    search.fit(X, y)
    assert hasattr(search, "best_estimator_")
    search.set_params(refit=False)
    search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert search.best_params_ == {"var_smoothing": 1e-6}
    with pytest.raises(AttributeError, match="predict") as info:
        search.predict(X)
    assert "refit=False" in str(info.value.__cause__)
    # a model the mechanism released is the one returned
    search.set_params(behaviour="own model")
    search.fit(X, y)
    assert isinstance(search.best_estimator_, GaussianNB)
    # without refit the report has no line for a returned model: the tuning only
    assert search.privacy_spent_.epsilon == pytest.approx(TUNING_EPSILON)


# -- verbose: held while the region runs -------------------------------------------------------
def _printed(search, X, y):
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            search.fit(X, y)
        except PrivateFitError:
            pass
    return out.getvalue()


def test_lines_of_the_private_region_are_printed_after_it_succeeds_only(data):
    X, y = data
    ok = _printed(toy(verbose=1), X, y).splitlines()
    assert "budget checked" in ok[0]
    assert ok[1:] == ["[ToySearch] toy: tuning on the private rows",
                      "[ToySearch] refitting the selected candidate on all rows"]
    failed = _printed(toy(verbose=1, behaviour="raise"), X, y).splitlines()
    assert failed == ok[:1]  # the public line; nothing from inside a failed region
