"""Every search tunes a regressor: skdptune's SSPRegressor over its ridge and its bounds.

The regressor's ``bounds_y`` is the declared target range (public, like a classifier's label
set): the searches' scores are bounded on its scale, a target outside it is out of the domain,
and the contract of the classifier searches holds (one charge, what ``planned_privacy`` said,
no exact score released, the same warnings and printed lines on neighbouring datasets).
"""

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from scipy.stats import loguniform
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DomainError, DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune.linear_model import SSPRegressor

N_ROWS, Y_RANGE = 2000, (-4.0, 4.0)


def ssp(**kw):
    return SSPRegressor(epsilon=1.0, bounds_X=(-1.0, 1.0), bounds_y=Y_RANGE, **kw)


@pytest.fixture(scope="module")
def data():
    """``(X, y, y_neighbour)``: a linear target in the range; the neighbour's first target is
    moved to the other end of the range."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(N_ROWS, 3))
    y = np.clip(X @ np.array([1.5, -1.0, 0.5]) + 0.3 * rng.standard_normal(N_ROWS), *Y_RANGE)
    y_n = y.copy()
    y_n[0] = Y_RANGE[1] if y[0] < 0 else Y_RANGE[0]
    return X, y, y_n


def make(kind, estimator=None, **kw):
    estimator = estimator or ssp()
    kw.setdefault("random_state", 0)
    kw.setdefault("accountant", BudgetAccountant())
    if kind == "grid":
        return DPGridSearchCV(estimator, {"alpha": [0.1, 10.0, "adaptive"]}, **kw)
    if kind == "random":
        kw.setdefault("n_iter", 5)
        return DPRandomSearchCV(estimator, {"alpha": loguniform(0.01, 100.0)}, **kw)
    kw.setdefault("n_iter", 2)
    return DPGIBOSearchCV(estimator, {"alpha": (0.01, 100.0, "log")}, **kw)


KINDS = ["grid", "random", "gibo"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_search_tunes_the_regressor_and_charges_what_it_planned(kind, data):
    X, y, _ = data
    acc = BudgetAccountant()
    search = make(kind, accountant=acc)
    planned = tuple(search.planned_privacy(N_ROWS))
    search.fit(X, y)
    assert acc.spent_budget == [planned] and tuple(search.privacy_spent_) == planned
    assert isinstance(search.best_estimator_, SSPRegressor)
    # the tuned model predicts (a linear target with noise 0.3: R^2 well above 0)
    assert search.score(X, y) > 0.5
    assert set(search.best_params_) == {"alpha"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_target_outside_the_declared_range_is_refused_and_charges_nothing(kind, data):
    X, y, _ = data
    acc = BudgetAccountant()
    y_out = y.copy()
    y_out[5] = Y_RANGE[1] + 1e-9
    with pytest.raises(DomainError, match="declared range") as info:
        make(kind, accountant=acc).fit(X, y_out)
    assert str(y_out[5]) not in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert acc.spent_budget == []


@pytest.mark.parametrize("kind", KINDS)
def test_neighbours_release_the_same_public_outputs(kind, data):
    """On neighbouring targets the warnings, the printed lines, the released attributes' names
    and the charge are the same (the figures of cv_results_ are noisy, their keys public)."""
    X, y, y_n = data
    seen = []
    for target in (y, y_n):
        out = io.StringIO()
        with warnings.catch_warnings(record=True) as caught, redirect_stdout(out):
            warnings.simplefilter("always")
            search = make(kind, verbose=1).fit(X, target)
        printed = out.getvalue()
        # released points may be printed (GIBO prints each one): masked, the rest must agree
        released = [str(search.best_params_)]
        released += [str(step["params"]) for step in getattr(search, "trajectory_", [])]
        for text in sorted(set(released), key=len, reverse=True):
            printed = printed.replace(text, "<released>")
        assert printed.count("\n") >= 2
        seen.append((sorted(str(w.message) for w in caught), printed,
                     sorted(k for k in vars(search) if k.endswith("_")),
                     sorted(getattr(search, "cv_results_", {}).keys()),
                     tuple(search.privacy_spent_)))
    assert seen[0] == seen[1]


def test_bounds_y_are_tuned_as_a_pair_and_the_range_is_their_union(data):
    """Candidates may declare different target bounds: the domain is their union (each fit
    clips to its own), so a target inside the union is accepted."""
    X, y, _ = data
    search = DPRandomSearchCV(ssp(), {"bounds_y": [(-4.0, 4.0), (-2.0, 2.0)]}, n_iter=4,
                              random_state=0, accountant=BudgetAccountant()).fit(X, y)
    assert search.best_params_["bounds_y"] in [(-4.0, 4.0), (-2.0, 2.0)]


def test_a_regressor_in_a_pipeline_after_a_free_step(data):
    X, y, _ = data
    pipe = make_pipeline(FunctionTransformer(np.tanh), ssp())
    search = DPGridSearchCV(pipe, {"sspregressor__alpha": [1.0, "adaptive"]}, random_state=0,
                            accountant=BudgetAccountant()).fit(X, y)
    assert search.best_estimator_.predict(X[:3]).shape == (3,)


def test_leaking_bounds_are_refused_before_the_data_is_read(data):
    from skdptune import PrivacyLeakError

    X, y, _ = data
    acc = BudgetAccountant()
    with pytest.raises(PrivacyLeakError, match="bounds_y"):
        DPGridSearchCV(SSPRegressor(bounds_X=(-1, 1)), {"alpha": [1.0]},
                       accountant=acc).fit(X, y)
    assert acc.spent_budget == []


def test_the_searches_clone(data):
    for kind in KINDS:
        twin = clone(make(kind)).get_params()["estimator"].get_params()
        twin.pop("accountant")
        mine = ssp().get_params()
        mine.pop("accountant")
        assert twin == mine
