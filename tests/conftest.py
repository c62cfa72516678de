"""Shared fixtures."""

import pytest

# before any test module imports diffprivlib: on scikit-learn >= 1.9 importing skdptune is
# what makes diffprivlib importable (skdptune._compat)
import skdptune  # noqa: F401


@pytest.fixture
def unforeseen_failures(monkeypatch):
    """Switch off the check of the rows as the first private model receives them
    (``check_model_input``), so that a test's row-wise step that fails on marked records fails
    *inside* the private part: the exit of last resort (``PrivateFitError``, error_score, the
    charge) stays tested for failures no domain check foresees (a composite first step, a
    failure after a private step)."""
    from skdptune.public import _preflight

    monkeypatch.setattr(_preflight, "check_model_input", lambda *args, **kwargs: None)


@pytest.fixture
def stand_in_regressor(monkeypatch):
    """Admit diffprivlib's ``LinearRegression`` for the test: it is refused as unsound
    (docs/privacy.md), and no other diffprivlib regressor exists, so the searches' regression
    paths (scores, target domain, refusals) are tested with it standing in for a sound one."""
    from skdptune.estimators.models._refused import LinearRegressionAdapter

    monkeypatch.setattr(LinearRegressionAdapter, "unsound", None)


@pytest.fixture(autouse=True)
def fresh_default_accountant():
    """Every test starts with an empty diffprivlib default accountant, and the one before is
    restored after it: diffprivlib models charge it on every standalone fit, so an audit's
    thousands of fits would otherwise leave their history to every later test (and
    ``sklearn.clone`` of a model holding it copies that history)."""
    from diffprivlib import BudgetAccountant

    previous = BudgetAccountant.load_default(None)
    BudgetAccountant().set_default()
    yield
    previous.set_default()


@pytest.fixture
def too_few_rows():
    """``planned(search, n)``: the ``TooFewRowsWarning`` s that ``fit`` on ``n`` rows would give,
    read off the search's plan, which is made from public information only (no data)."""
    from skdptune import TooFewRowsWarning
    from skdptune.public import PublicInfo

    def planned(search, n):
        public = PublicInfo(int(n), search._classes_from_params(), None)
        plan = search._plan_tuning(public, search._search_space())
        return [w for w in plan.warnings if isinstance(w, TooFewRowsWarning)]

    return planned


@pytest.fixture
def record_calls(monkeypatch):
    """``record_calls(owner, name, patch=None)``: replace ``owner.name`` (a module's function or
    a class's method) by a wrapper that calls it through and records the positional arguments
    of every call; returns the list they go to. ``patch``: a ``MonkeyPatch`` context to patch
    in (default: the test's)."""

    def record(owner, name, patch=None):
        calls = []
        real = getattr(owner, name)

        def recorded(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)

        (patch or monkeypatch).setattr(owner, name, recorded)
        return calls

    return record
