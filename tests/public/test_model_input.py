"""What the private models receive (skdptune.public._model_input), tested directly: the
settings of the steps in front of the first private model that must be listed, the check of the
rows as that model receives them (a fixed message, nothing chained, a row-wise domain), and the
check that a composite first step can be read.

Through the searches: tests/test_side_channels.py (``test_rows_the_first_private_step_cannot_
take_are_outside_the_domain``, the composite cases, ``_discrete_support``).
"""

import numpy as np
import pytest
from diffprivlib.models import DecisionTreeClassifier, LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from scipy import stats
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, PolynomialFeatures

from skdptune.evaluation._fit import candidate_templates
from skdptune.exceptions import DomainError
from skdptune.public import _model_input as model_input_module
from skdptune.public import (
    check_composites_readable,
    check_model_input,
    model_input_settings,
)

CLASSES = np.array([0, 1])


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


def poly_pipe():
    return Pipeline([("poly", PolynomialFeatures(1)), ("lr", lr())])


def _rows(n=50, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=(n, 2))


def _labels(n=50):
    return np.arange(n) % 2


# -- model_input_settings: what must be listed -------------------------------------------------
def test_a_space_of_lists_needs_no_settings():
    """The dry run's candidates are then the grid itself."""
    space = [{"poly__degree": [1, 2, 3], "lr__C": [0.1, 1.0]}]
    assert model_input_settings(poly_pipe(), space, candidate_templates(poly_pipe(), [{}])) == []


def test_a_distribution_over_the_models_own_parameters_needs_none():
    space = [{"lr__C": stats.loguniform(0.1, 10.0), "lr__tol": stats.uniform(1e-5, 1e-3)}]
    assert model_input_settings(poly_pipe(), space, []) == []


def test_every_value_of_a_step_in_front_of_the_model_is_listed():
    """A discrete distribution by its support, a list as it is; the model's own parameters
    keep the estimator's values (they cannot change what it receives)."""
    space = [{"poly__degree": stats.randint(1, 4), "lr__C": stats.loguniform(0.1, 10.0)},
             {"poly__include_bias": [True, False], "lr__C": stats.loguniform(0.1, 10.0)},
             {"poly__degree": [2], "lr__C": [1.0]}]  # lists only: the dry run's grid
    settings = model_input_settings(poly_pipe(), space, [])
    assert settings == [{"poly__degree": 1}, {"poly__degree": 2}, {"poly__degree": 3},
                        {"poly__include_bias": True}, {"poly__include_bias": False}]


def test_a_step_parameter_whose_values_cannot_be_listed_is_refused():
    pipe = Pipeline([("bin", Binarizer()), ("lr", lr())])
    for spec in (stats.uniform(-0.5, 1.0), stats.poisson(3.0)):
        with pytest.raises(ValueError, match="'bin__threshold' may set a data-independent step "
                                             "in front of the first private model.*Nothing was "
                                             "read or charged"):
            model_input_settings(pipe, [{"bin__threshold": spec}], [])
    # a tuple is a sequence of values (scikit-learn's rule): listed as it is
    assert model_input_settings(pipe, [{"bin__threshold": (-0.5, 0.5),
                                        "lr__C": stats.uniform(1, 2)}], []) == [
        {"bin__threshold": -0.5}, {"bin__threshold": 0.5}]


def test_too_many_settings_are_refused(monkeypatch):
    monkeypatch.setattr(model_input_module, "MAX_LISTED_SETTINGS", 5)
    space = [{"poly__degree": stats.randint(1, 4), "poly__include_bias": [True, False],
              "lr__C": stats.loguniform(0.1, 10.0)}]
    with pytest.raises(ValueError, match=r"in 6 ways; .* at most 5 are"):
        model_input_settings(poly_pipe(), space, [])
    monkeypatch.setattr(model_input_module, "MAX_LISTED_SETTINGS", 6)
    assert len(model_input_settings(poly_pipe(), space, [])) == 6


# -- check_model_input: the rows as the first private model receives them ----------------------
def _refusal(call):
    with pytest.raises(DomainError) as info:
        call()
    assert info.value.__cause__ is None and info.value.__context__ is None
    return str(info.value)


def test_rows_a_step_in_front_turns_infinite_are_refused_with_one_message():
    """``1e110`` is finite; its cube (degree 3) is not. The message is the same wherever the
    record is and whatever its value."""
    templates = candidate_templates(poly_pipe(), [{"poly__degree": 1}, {"poly__degree": 3}])
    check_model_input(templates, _rows(), _labels(), CLASSES, allow_nan=False)
    messages = set()
    for row, value in [(0, 1e110), (49, -3e120), (7, 1e200)]:
        X = _rows()
        X[row, 1] = value
        messages.add(_refusal(lambda X=X: check_model_input(templates, X, _labels(), CLASSES,
                                                            allow_nan=False)))
    assert len(messages) == 1
    message = messages.pop()
    assert message.startswith("X contains a row that the estimator's first private step "
                              "cannot take") and "Nothing was charged" in message
    # degree 1 alone takes it
    X = _rows()
    X[0, 1] = 1e110
    check_model_input(templates[:1], X, _labels(), CLASSES, allow_nan=False)


def test_without_steps_in_front_nan_follows_the_dry_runs_answer():
    templates = candidate_templates(lr(), [{}])
    X = _rows()
    X[3, 0] = np.nan
    _refusal(lambda: check_model_input(templates, X, _labels(), CLASSES, allow_nan=False))
    check_model_input(templates, X, _labels(), CLASSES, allow_nan=True)
    X[3, 0] = np.inf
    _refusal(lambda: check_model_input(templates, X, _labels(), CLASSES, allow_nan=True))


def test_values_that_are_no_numbers_are_refused():
    X = _rows().astype(object)
    X[5, 0] = "7 years"
    _refusal(lambda: check_model_input(candidate_templates(lr(), [{}]), X, _labels(), CLASSES,
                                       allow_nan=False))


def test_each_model_reads_the_rows_in_its_own_float_type():
    """``1e39`` is finite in float64, infinite in the float32 a diffprivlib tree reads."""
    X = _rows()
    X[5, 1] = 1e39
    check_model_input(candidate_templates(lr(), [{}]), X, _labels(), CLASSES, allow_nan=False)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    _refusal(lambda: check_model_input(candidate_templates(tree, [{}]), X, _labels(), CLASSES,
                                       allow_nan=False))


def test_rows_beyond_the_public_magnitude_limit_are_refused():
    templates = candidate_templates(lr(), [{}])
    X = _rows()
    X[9, 0] = 11.0
    check_model_input(templates, X, _labels(), CLASSES, allow_nan=False, limits=[None])
    _refusal(lambda: check_model_input(templates, X, _labels(), CLASSES, allow_nan=False,
                                       limits=[10.0]))
    X[9, 0] = -10.0  # at the limit: in
    check_model_input(templates, X, _labels(), CLASSES, allow_nan=False, limits=[10.0])


def test_the_domain_is_a_set_of_rows():
    """A row is in the domain or not whatever the other rows: a row refused alone is refused
    among any others, and rows accepted alone are accepted together."""
    templates = candidate_templates(poly_pipe(), [{"poly__degree": 3}])
    good, bad = _rows(), _rows(seed=1)
    bad[0, 0] = 1e110
    for X in (good[:1], good[1:2], good):
        check_model_input(templates, X, _labels(len(X)), CLASSES, allow_nan=False)
    for X in (bad[:1], np.vstack([good, bad[:1]]), np.vstack([bad[:1], good])):
        _refusal(lambda X=X: check_model_input(templates, X, _labels(len(X)), CLASSES,
                                               allow_nan=False))


# -- composite first steps ---------------------------------------------------------------------
def _scaler():
    return DPStandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))


def test_a_composite_first_step_must_be_readable_on_synthetic_rows():
    by_name = Pipeline([("ct", ColumnTransformer([("priv", _scaler(), ["a"])])), ("lr", lr())])
    with pytest.raises(ValueError, match=r"could not transform synthetic rows with the public "
                                         r"format of X \(ValueError\).*Nothing was read"):
        check_composites_readable(candidate_templates(by_name, [{}]), _rows(), _labels(),
                                  CLASSES)
    by_index = Pipeline([("ct", ColumnTransformer([("priv", _scaler(), [0])],
                                                  remainder="passthrough")), ("lr", lr())])
    check_composites_readable(candidate_templates(by_index, [{}]), _rows(), _labels(), CLASSES)
    # no composite: nothing to check (even for rows a composite could not take)
    check_composites_readable(candidate_templates(lr(), [{}]), _rows(), _labels(), CLASSES)


def test_what_a_composite_gives_its_model_must_be_finite():
    """The image of ``ColumnTransformer([private scaler on column 0], remainder=passthrough)``
    passes column 1 as it is to the model: a NaN there is refused (no NaN from an image)."""
    pipe = Pipeline([("ct", ColumnTransformer([("priv", _scaler(), [0])],
                                              remainder="passthrough")), ("lr", lr())])
    templates = candidate_templates(pipe, [{}])
    check_model_input(templates, _rows(), _labels(), CLASSES, allow_nan=True)
    X = _rows()
    X[4, 1] = np.nan
    _refusal(lambda: check_model_input(templates, X, _labels(), CLASSES, allow_nan=True))
