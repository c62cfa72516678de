"""The dry run (skdptune.public._dry_run), tested directly: every candidate fitted and scored
on synthetic rows with the public format, the first failing candidate named with its real
error, nothing charged, no warning out, the real rows never seen; the object fill.

Through the searches: tests/test_search_contract.py (a configuration that cannot fit),
tests/test_grid.py (the shares of ``n_jobs=2`` report the first failure in order).
"""

import warnings

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from sklearn.impute import SimpleImputer
from sklearn.metrics import get_scorer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdptune.evaluation._fit import candidate_templates
from skdptune.exceptions import PrivacyLeakError
from skdptune.public import _dry_run as dry_run_module
from skdptune.public import choose_object_fill, dry_run, make_padding
from skdptune.public._rows import OBJECT_FILLS

CLASSES = np.array([0, 1])
MARK = 0.123456789  # in the real rows' last column; never in a synthetic row
SEEN: list = []


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


def _watch(Z):
    """Row-wise identity that records what it was given."""
    SEEN.append(np.array(Z, dtype=float, copy=True))
    return Z


def _warns(Z):
    warnings.warn("a warning about the rows", UserWarning, stacklevel=1)
    return Z


def _data(seed=0, n=120):
    rng = np.random.RandomState(seed)
    X = np.column_stack([rng.uniform(-1, 1, size=(n, 2)), np.full(n, MARK)])
    return X, rng.randint(0, 2, size=n)


def run(estimator, candidates, X=None, y=None, classes=CLASSES, scorers=None, **kw):
    if X is None:
        X, y = _data()
    templates = candidate_templates(estimator, candidates or [{}])
    return dry_run(estimator, candidates, templates, X, y, classes, kw.pop("fit_params", {}),
                   scorers if scorers is not None else {"accuracy": get_scorer("accuracy")},
                   make_padding(X, y, classes), **kw)


@pytest.fixture(autouse=True)
def _clear_seen():
    SEEN.clear()


# -- a configuration mistake fails with its real message, naming the candidate -----------------
def test_the_first_failing_candidate_is_named_with_its_error():
    candidates = [{"C": 1.0}, {"C": 0.5}, {"tol": -1.0}, {"tol": -2.0}]
    with pytest.raises(ValueError) as info:
        run(lr(), candidates)
    message = str(info.value)
    assert message.startswith("Dry run failed before any private data was read: candidate "
                              "{'tol': -1.0} could not be fitted and scored on a synthetic "
                              "dataset with the public format of X and y")
    assert "tol" in message.split("(", 1)[1] and message.endswith("Nothing was charged.")
    assert "-2.0" not in message
    assert isinstance(info.value.__cause__, ValueError)  # the real error: it is public


def test_without_candidates_the_estimator_is_named():
    with pytest.raises(ValueError, match="Dry run failed .*: the estimator could not be"):
        run(lr(tol=-1.0), [])


def test_a_scorer_that_cannot_score_is_named():
    def wrong_signature(y_true, y_pred):
        return 1.0

    with pytest.raises(ValueError, match=r"candidate \{'C': 1.0\} .*TypeError"):
        run(lr(), [{"C": 1.0}], scorers={"mine": wrong_signature})

    def array_scorer(estimator, X, y):
        return np.zeros((2, 2))

    with pytest.raises(ValueError, match=r"TypeError: the mine returned an array of shape"):
        run(lr(), [{"C": 1.0}], scorers={"mine": array_scorer})


def test_a_scorer_gets_its_metadata_on_the_synthetic_rows():
    X, y = _data()
    weights = np.random.RandomState(1).uniform(0, 2, size=len(X))
    received = []

    def weighted(estimator, X_s, y_s, sample_weight=None):
        received.append(sample_weight)
        return 0.5

    run(lr(), [{}], X, y, scorers={"scoring": weighted},
        scorer_params={"scoring": {"sample_weight": weights}})
    assert len(received) == 1 and received[0].tolist() == [1.0] * 40  # ones, not the weights

    def unweighted(estimator, X_s, y_s):
        return 0.5

    with pytest.raises(ValueError, match="Dry run failed.*sample_weight"):
        run(lr(), [{}], X, y, scorers={"scoring": unweighted},
            scorer_params={"scoring": {"sample_weight": weights}})


def test_a_leak_is_not_turned_into_a_configuration_error():
    """diffprivlib's ``PrivacyLeakWarning`` (a ``GaussianNB`` without bounds) leaves as
    ``PrivacyLeakError``, not wrapped as a failed candidate."""
    with pytest.raises(PrivacyLeakError) as info:
        run(GaussianNB(), [{"var_smoothing": 1e-9}])
    assert not str(info.value).startswith("Dry run failed")


def test_only_the_first_candidates_up_to_the_cap_are_fitted(monkeypatch):
    monkeypatch.setattr(dry_run_module, "DRY_RUN_MAX_FITS", 2)
    run(lr(), [{"C": 1.0}, {"C": 2.0}, {"tol": -1.0}])  # the third is beyond the cap
    monkeypatch.setattr(dry_run_module, "DRY_RUN_MAX_FITS", 3)
    with pytest.raises(ValueError, match="Dry run failed"):
        run(lr(), [{"C": 1.0}, {"C": 2.0}, {"tol": -1.0}])


# -- nothing charged, nothing read, nothing heard ----------------------------------------------
@pytest.mark.parametrize("fails", [False, True])
def test_nothing_is_charged(fails):
    """Neither the estimator's own accountant nor diffprivlib's default one, whether the dry
    run passes or fails."""
    acc, default = BudgetAccountant(), BudgetAccountant.load_default(None)
    smoothing = [1e-9, -1.0 if fails else 1e-6]
    for estimator, candidates in [
        (GaussianNB(bounds=(-1.0, 1.0), accountant=acc),
         [{"var_smoothing": v} for v in smoothing]),
        (lr(accountant=acc), [{"C": 1.0}, {"tol": -1.0 if fails else 1e-4}]),
        (GaussianNB(bounds=(-1.0, 1.0)), [{"var_smoothing": v} for v in smoothing]),
    ]:
        if fails:
            with pytest.raises(ValueError, match="Dry run failed"):
                run(estimator, candidates)
        else:
            run(estimator, candidates)
    assert acc.spent_budget == [] and default.spent_budget == []


def test_the_real_rows_are_never_seen_and_two_datasets_give_the_same_fits():
    pipe = Pipeline([("watch", FunctionTransformer(_watch)), ("clf", lr())])
    fitted = []
    for seed in (0, 1):
        SEEN.clear()
        run(pipe, [{"clf__C": 1.0}, {"clf__C": 2.0}], *_data(seed))
        assert SEEN and not any((Z[:, -1] == MARK).any() for Z in SEEN)
        fitted.append(SEEN[:])
    assert len(fitted[0]) == len(fitted[1])
    for a, b in zip(*fitted, strict=True):
        np.testing.assert_array_equal(a, b)


def test_no_warning_leaves_the_dry_run():
    pipe = Pipeline([("warn", FunctionTransformer(_warns)), ("clf", lr())])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(pipe, [{"clf__C": 1.0}])
        with pytest.raises(ValueError):
            run(pipe, [{"clf__tol": -1.0}])
    assert caught == []


# -- the NaN question --------------------------------------------------------------------------
def test_nan_is_in_the_domain_only_if_every_candidate_takes_it():
    imputing = Pipeline([("prep", SimpleImputer(strategy="constant", fill_value=0.0)),
                         ("clf", lr())])
    assert run(imputing, [{"clf__C": 1.0}]).allow_nan
    assert not run(lr(), [{"C": 1.0}]).allow_nan
    assert not run(imputing, [{"clf__C": 1.0}, {"prep": "passthrough"}]).allow_nan


def test_the_result_holds_the_synthetic_dataset():
    X, y = _data()
    result = run(lr(), [{"C": 1.0}], X, y)
    X_syn, y_syn, params_syn, padding, scorers, score_syn = result.synthetic
    assert X_syn.shape == (40, 3) and not (X_syn[:, -1] == MARK).any()
    assert sorted(set(y_syn.tolist())) == [0, 1] and len(padding) == 2
    assert list(scorers) == ["accuracy"] and params_syn == {} and score_syn == {}


# -- the object fill ---------------------------------------------------------------------------
def _to_float(Z):
    return np.asarray(Z, dtype=float)


def test_the_object_fill_is_the_first_value_the_estimator_fits():
    numeric, y = _data()
    assert choose_object_fill(lr(), {}, numeric, y, CLASSES, {}) == OBJECT_FILLS[0]
    codes = np.random.RandomState(0).randint(0, 3, size=(120, 2)).astype(object)
    numbers = Pipeline([("float", FunctionTransformer(_to_float)), ("clf", lr())])
    assert choose_object_fill(numbers, {}, codes, y, CLASSES, {}) == 0
    words = np.random.RandomState(0).choice(["a", "b"], size=(120, 1)).astype(object)
    encoder = Pipeline([("enc", OneHotEncoder(categories=[["a", "b"]], handle_unknown="ignore",
                                              sparse_output=False)), ("clf", lr())])
    assert choose_object_fill(encoder, {}, words, y, CLASSES, {}) == ""
    # nothing fits: the first value, and the dry run reports the error
    assert choose_object_fill(lr(tol=-1.0), {}, codes, y, CLASSES, {}) == OBJECT_FILLS[0]
