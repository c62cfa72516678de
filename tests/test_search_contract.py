"""The contract every search keeps: ``DPGridSearchCV``, ``DPRandomSearchCV``, ``DPGIBOSearchCV``.

One fixture per search builds a small, fast, valid configuration (a diffprivlib
``LogisticRegression`` over ``C``, 300 public-shaped rows in ``[-1, 1]^3``); the fixture
``make`` runs each test below against all three. The items of the contract, and where each is
tested:

1. **Side channels** (docs/privacy.md). After ``fit`` no attribute holds an exact score:
   :func:`test_released_attributes_hold_no_exact_score` (``cv_results_``'s keys, the noisy
   scores, GIBO's trajectory). Warnings and ``verbose`` output are the same on neighbouring
   datasets: :func:`test_neighbours_warn_and_print_alike` here, and in
   ``test_side_channels.py`` ``test_item2_no_exception_on_either_neighbour`` (the released
   attributes, warnings and printed lines) and ``test_item3_no_warning_leaves_fit``. The returned
   model: ``classes_`` is the declared set (``test_side_channels.py::
   test_item4_classes_and_shapes_are_the_declared_set``), no ``n_iter_``
   (``test_returned_model_has_no_optimiser_iteration_count``), no ``random_state`` on its DP
   components (``test_seeding.py::test_the_returned_model_does_not_carry_the_seed_of_its_noise``).
   Exceptions on failure paths are data-independent (``test_side_channels.py::
   test_a_failure_inside_leaves_as_a_fixed_error_and_charges``,
   ``test_item4_undeclared_label_is_refused_with_a_fixed_message``).
2. **Accountant**: the user's ``BudgetAccountant`` is charged once, ``privacy_spent_``; inner
   fits charge neither it nor diffprivlib's default accountant:
   :func:`test_the_users_accountant_is_charged_once_and_inner_fits_never`
   (``test_side_channels.py::test_item7_cross_val_score_charges_the_users_accountant_per_fold``
   for clones).
3. **The dry run**: a configuration that cannot fit fails before any data-dependent work and
   charges nothing: :func:`test_a_configuration_that_cannot_fit_fails_before_the_rows_are_read`
   (``test_side_channels.py::test_item8_configuration_mistakes_charge_nothing`` for other
   mistakes).
4. **clone and pickle**, unfitted and fitted: :func:`test_clone_and_pickle_round_trips`
   (``test_sklearn_search_port.py::test_pickle`` and ``test_clone`` too).
5. **planned_privacy(n)** before ``fit`` is what ``fit`` charges: ``test_side_channels.py::
   test_planned_privacy_is_what_fit_charges_and_reads_no_data``.
6. **The defaults**: no ``epsilon`` means the same total in every search:
   :func:`test_no_epsilon_means_the_same_total_in_every_search`. The ``TooFewRowsWarning`` is
   given once per fit and alike on neighbours (``test_side_channels.py::
   test_item3_too_few_rows_is_given_once_and_alike_on_neighbours``), where each search's
   public criterion says so (``test_grid.py``, ``test_random.py``, ``test_gibo.py``:
   ``test_too_few_rows_*``).

Every test is seeded; the whole file runs in a few seconds.
"""

import io
import pickle
import re
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from scipy.stats import loguniform, uniform
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV

# public, and the same on every dataset of a size: not what these tests watch
pytestmark = pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")

N_ROWS = 300
#: ``C`` ranges of the fixtures' spaces: each search takes the range in its own form
C_RANGE = (0.1, 10.0)


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


@pytest.fixture(scope="module")
def data():
    """``(X, y_d, y_n)``: the rows and two label vectors that differ in record 0 only."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(N_ROWS, 3))
    y_d = (X[:, 0] > 0).astype(int)
    y_n = y_d.copy()
    y_n[0] = 1 - y_n[0]
    return X, y_d, y_n


def _defaults(kw):
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("random_state", 0)
    return kw


def _grid_values(low, high):
    return (np.geomspace(low, high, 3) if low > 0 else np.linspace(low, high, 3)).tolist()


@pytest.fixture
def grid_search():
    """``make(estimator=None, ranges=None, **kw)``: a permute-and-flip grid of 3 values a range
    (3 partitions of 100 rows)."""
    def make(estimator=None, ranges=None, **kw):
        space = {name: _grid_values(*r) for name, r in (ranges or {"C": C_RANGE}).items()}
        return DPGridSearchCV(estimator or lr(), space, **_defaults(kw))
    return make


@pytest.fixture
def random_search():
    """``make(...)``: randomized repetition, ``E[K] = 3``, each range a distribution."""
    def make(estimator=None, ranges=None, **kw):
        space = {name: loguniform(low, high) if low > 0 else uniform(low, high - low)
                 for name, (low, high) in (ranges or {"C": C_RANGE}).items()}
        kw.setdefault("n_iter", 3)
        return DPRandomSearchCV(estimator or lr(), space, **_defaults(kw))
    return make


@pytest.fixture
def gibo_search():
    """``make(...)``: two DP-GIBO steps of two fits over the box of the ranges."""
    def make(estimator=None, ranges=None, **kw):
        space = {name: (low, high, "log") if low > 0 else (low, high)
                 for name, (low, high) in (ranges or {"C": C_RANGE}).items()}
        kw.setdefault("n_iter", 2)
        return DPGIBOSearchCV(estimator or lr(), space, **_defaults(kw))
    return make


@pytest.fixture(params=["grid_search", "random_search", "gibo_search"])
def make(request):
    return request.getfixturevalue(request.param)


def fitted_attributes(search) -> list[str]:
    return sorted(name for name in vars(search) if name.endswith("_"))


# -- 1. side channels -------------------------------------------------------------------------
#: cv_results_ keys a search may release besides ``param_<name>``: no exact score, time or rank
RELEASED_RESULTS = {"params", "selected", "noisy_score"}
#: what one step of GIBO's trajectory_ releases (docs/gibo.md)
RELEASED_STEP = {"iteration", "point", "params", "gradient", "query_params"}


def exact_fraction(value: float, n: int) -> int | None:
    """The ``m <= n`` for which ``value`` is ``k / m`` (an exact accuracy or mean 0-1 loss over
    ``m`` rows), if any. A noisy value is one with probability about ``n^2 * 1e-9``."""
    for m in range(1, n + 1):
        if abs(value * m - round(value * m)) < 1e-9 * m:
            return m
    return None


def test_released_attributes_hold_no_exact_score(make, data):
    X, y, _ = data
    search = make().fit(X, y)
    names = set(search.best_params_)
    assert set(search.cv_results_) <= RELEASED_RESULTS | {f"param_{n}" for n in names}
    assert not [a for a in fitted_attributes(search) if re.search("time|rank|test_|train_", a)]
    noisy = list(np.ravel(search.cv_results_.get("noisy_score", [])))
    if hasattr(search, "best_score_"):
        noisy.append(search.best_score_)
        # the returned model's exact in-sample accuracy is not what is released
        assert search.best_score_ != search.best_estimator_.score(X, y)
    for value in noisy:
        assert exact_fraction(float(value), len(X)) is None, value
    for step in getattr(search, "trajectory_", []):
        assert set(step) <= RELEASED_STEP


def _recorded_fit(search, X, y) -> tuple[list, str]:
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out):
        warnings.simplefilter("always")
        search.fit(X, y)
    printed = out.getvalue()
    # released values may be printed (GIBO prints each released point): masked, so that the
    # rest of every line must agree on the neighbours
    released = [str(search.best_params_)]
    released += [str(step["params"]) for step in getattr(search, "trajectory_", [])]
    for text in sorted(set(released), key=len, reverse=True):
        printed = printed.replace(text, "<released>")
    return [(w.category, str(w.message)) for w in caught], printed


def test_neighbours_warn_and_print_alike(make, data):
    X, y_d, y_n = data
    on_d = _recorded_fit(make(verbose=3), X, y_d)
    on_n = _recorded_fit(make(verbose=3), X, y_n)
    assert on_d[1].count("\n") >= 2  # verbose prints: the comparison is not of empty outputs
    assert on_d == on_n


# -- 2. the accountant ------------------------------------------------------------------------
@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize("estimators_own", ["default", "the search's"])
@pytest.mark.parametrize("model", ["logistic", "naive_bayes"])
def test_the_users_accountant_is_charged_once_and_inner_fits_never(make, data, refit,
                                                                  estimators_own, model):
    """The search charges its accountant ``privacy_spent_``, once; the estimator's own
    accountant -- diffprivlib's default (``accountant=None``) or the search's own -- is never
    charged by the fits inside. (``LogisticRegression``'s partitions and runs are fitted by
    skdptune's batched solvers, which charge no accountant; ``GaussianNB``'s are diffprivlib
    fits, one by one.)"""
    X, y, _ = data
    acc = BudgetAccountant()
    default = BudgetAccountant.load_default(None)  # a fresh one per test (conftest.py)
    own = {"default": None, "the search's": acc}[estimators_own]
    if model == "logistic":
        estimator, ranges = lr(accountant=own), None
    else:
        estimator = GaussianNB(bounds=(-1.0, 1.0), accountant=own)
        ranges = {"var_smoothing": (1e-9, 1e-3)}
    search = make(estimator=estimator, ranges=ranges, accountant=acc, refit=refit).fit(X, y)
    spent = search.privacy_spent_
    assert spent.epsilon > 0
    assert acc.spent_budget == [(spent.epsilon, spent.delta)]
    assert default.spent_budget == []


# -- 3. the dry run ---------------------------------------------------------------------------
MARK = 0.123456789  # the last column of the real rows: never in the dry run's synthetic rows
SEEN: list[bool] = []


def _watch(Z):
    """Row-wise identity that records whether it was given the real rows."""
    SEEN.append(bool(np.any(np.asarray(Z)[:, -1] == MARK)))
    return Z


def _watched(estimator):
    return Pipeline([("watch", FunctionTransformer(_watch)), ("clf", estimator)])


@pytest.mark.parametrize("bad", ["C", "tol", None], ids=["negative_C", "negative_tol",
                                                          "control"])
def test_a_configuration_that_cannot_fit_fails_before_the_rows_are_read(make, data, bad):
    """A negative ``C`` (refused where the cost is priced, or by the dry run) or a negative
    ``tol`` (which only a fit refuses: the dry run's, on synthetic rows) in the space: ``fit``
    raises before the real rows reach the pipeline, charges nothing and leaves no fitted
    attribute. The control (a valid space) shows that the watch sees the real rows."""
    X, y, _ = data
    X = np.column_stack([X, np.full(len(X), MARK)])
    acc, default = BudgetAccountant(), BudgetAccountant.load_default(None)
    ranges = {"clf__C": C_RANGE}
    if bad is not None:
        ranges[f"clf__{bad}"] = (-2.0, -1.0)
    search = make(estimator=_watched(lr()), ranges=ranges, accountant=acc)
    SEEN.clear()
    if bad is None:
        search.fit(X, y)
        assert any(SEEN) and acc.spent_budget != []
        return
    with pytest.raises(ValueError, match=rf"\b{bad}\b|[Tt]olerance"):
        search.fit(X, y)
    assert not any(SEEN)  # the pipeline saw synthetic rows at most
    if bad == "tol":
        assert SEEN  # the dry run fitted the pipeline, and failed there
    assert acc.spent_budget == [] and default.spent_budget == []
    assert fitted_attributes(search) == []


# -- 4. clone and pickle ----------------------------------------------------------------------
def _comparable(value):
    if hasattr(value, "rvs") and hasattr(value, "args"):  # a frozen scipy distribution
        return (value.dist.name, value.args, value.kwds)
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    return repr(value)


def settings(search) -> dict:
    """``get_params(deep=True)`` in comparable form, without the accountants (compared apart)."""
    return {name: _comparable(value) for name, value in search.get_params(deep=True).items()
            if not name.endswith("accountant")}


def test_clone_and_pickle_round_trips(make, data):
    X, y, _ = data
    acc = BudgetAccountant()
    search = make(accountant=acc)
    # unfitted: clone shares the ledger; pickle copies it, and fits as the original would
    cloned = clone(search)
    assert settings(cloned) == settings(search) and cloned.accountant is acc
    restored = pickle.loads(pickle.dumps(search))
    assert settings(restored) == settings(search)
    assert restored.accountant is not acc and restored.accountant.spent_budget == []
    restored.fit(X, y)
    search.fit(X, y)
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))
    assert restored.best_params_ == search.best_params_
    assert acc.spent_budget == [(search.privacy_spent_.epsilon, search.privacy_spent_.delta)]
    # fitted: clone is the unfitted configuration; pickle keeps the fit
    cloned = clone(search)
    assert fitted_attributes(cloned) == [] and settings(cloned) == settings(search)
    assert cloned.accountant is acc
    restored = pickle.loads(pickle.dumps(search))
    assert fitted_attributes(restored) == fitted_attributes(search)
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))
    np.testing.assert_array_equal(restored.predict_proba(X), search.predict_proba(X))
    assert restored.best_params_ == search.best_params_
    assert restored.privacy_spent_.epsilon == search.privacy_spent_.epsilon
    assert list(restored.classes_) == [0, 1]


@pytest.mark.parametrize("search", [DPGridSearchCV, DPRandomSearchCV])
def test_a_dry_run_error_names_the_class_the_user_configured(search, data):
    """The sound subclass skdptune switches in for a fit (an intercept column for
    ``LogisticRegression``) is not the user's choice: a dry run's error names the user's
    class."""
    X, y, _ = data
    with pytest.raises(ValueError, match="of LogisticRegression must be") as info:
        search(lr(), {"max_iter": [-5]}, classes=[0, 1], random_state=0).fit(X, y)
    assert "InterceptColumn" not in str(info.value)


# -- 6. the defaults --------------------------------------------------------------------------
def test_no_epsilon_means_the_same_total_in_every_search(make):
    """A user who passes no epsilon spends 2 in every search, tuning and returned model."""
    search = make()
    assert search.get_params()["epsilon"] == 2.0
    planned = search.planned_privacy(N_ROWS).epsilon
    assert planned <= 2.0 and planned == pytest.approx(2.0, rel=1e-9)

