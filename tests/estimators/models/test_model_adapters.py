"""The checks every model family's adapter passes (skdptune.estimators.models).

One registry, found by exact class; the rules of ``models/_adapter.py`` hold for every family:
its parameters exist on its models, its cost is data-independent, nondecreasing in epsilon and
never below epsilon times its least factor, its sound fit adds no parameter, refused families
say why, and every diffprivlib model with an ``epsilon`` has a family (a model of a new
diffprivlib release must be looked at before it is accepted or refused).
"""

import fractions
import inspect
import math

import diffprivlib.models as dp_models
import numpy as np
import pytest
from diffprivlib.models import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
)
from sklearn.base import BaseEstimator

from skdptune import estimator_privacy
from skdptune.estimators import is_dp_component, replace_one_factor, sound_fitting
from skdptune.estimators.models import (
    COST_PARAMS,
    LEAK_ADVICE,
    PAIR_PARAMS,
    STRUCTURE_PARAMS,
    ModelAdapter,
    adapter_for,
    advice_for,
)
from skdptune.estimators.models._registry import _FAMILIES
from skdptune.exceptions import NonPrivateComponentError, PrivacyLeakError
from skdptune.linear_model import SSPRegressor

#: one valid, leak-free configuration of every accepted family
CONFIGURED = {
    LogisticRegression: lambda: LogisticRegression(epsilon=1.0, data_norm=2.0, C=0.5),
    GaussianNB: lambda: GaussianNB(epsilon=1.0, bounds=(0.0, 1.0)),
    DecisionTreeClassifier: lambda: DecisionTreeClassifier(epsilon=1.0, bounds=(0.0, 1.0),
                                                           classes=[0, 1]),
    StandardScaler: lambda: StandardScaler(epsilon=1.0, bounds=(0.0, 1.0)),
    PCA: lambda: PCA(epsilon=1.0, bounds=(0.0, 1.0), data_norm=2.0),
    SSPRegressor: lambda: SSPRegressor(epsilon=1.0, bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0)),
}
ACCEPTED = [cls for family in _FAMILIES if family.unsound is None for cls in family.models]
REFUSED = [cls for family in _FAMILIES if family.unsound is not None for cls in family.models]


def test_every_diffprivlib_model_has_a_family():
    """A diffprivlib model with an epsilon that no family serves would be a non-private
    component with a misleading message; a new one must be looked at first."""
    models = [obj for _, obj in inspect.getmembers(dp_models, inspect.isclass)
              if issubclass(obj, BaseEstimator) and "epsilon" in inspect.signature(obj).parameters]
    assert models, "diffprivlib exposes no model"
    assert {cls for cls in models if adapter_for(cls.__new__(cls)) is None} == set()


def test_the_registry_serves_each_class_once_and_the_test_configures_every_accepted_one():
    classes = [cls for family in _FAMILIES for cls in family.models]
    assert len(classes) == len(set(classes))
    assert set(ACCEPTED) == set(CONFIGURED)
    assert set(REFUSED) == {KMeans, RandomForestClassifier, LinearRegression}


@pytest.mark.parametrize("family", _FAMILIES, ids=lambda f: type(f).__name__)
def test_the_adapters_parameters_are_its_models(family):
    assert isinstance(family, ModelAdapter) and family.models
    for cls in family.models:
        params = set(inspect.signature(cls).parameters)
        named = (set(family.leak_params) | set(family.pair_params) | set(family.cost_params)
                 | set(family.structure_params) | set(family.row_dependent_params)
                 | set(family.row_proportional_params)
                 | ({family.target_param} if family.target_param else set())
                 | set(family.exact_float_params) | set(family.least_cost_params))
        assert named <= params, named - params
        assert "epsilon" in params
    # the unions the search-space reading uses hold every family's
    assert set(family.leak_params) <= set(LEAK_ADVICE)
    assert set(family.pair_params) <= PAIR_PARAMS
    assert set(family.cost_params) <= COST_PARAMS
    assert set(family.structure_params) <= STRUCTURE_PARAMS


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_exact_classes_only(cls):
    """A subclass may learn in its own fit: it is no DP component, and pricing refuses it."""
    model = CONFIGURED[cls]()
    assert is_dp_component(model)
    sub = type(f"My{cls.__name__}", (cls,), {})
    mine = sub(**model.get_params())
    assert adapter_for(mine) is None and not is_dp_component(mine)
    with pytest.raises(NonPrivateComponentError):
        estimator_privacy(mine)


@pytest.mark.parametrize("cls", REFUSED, ids=lambda c: c.__name__)
def test_refused_families_say_why(cls):
    family = adapter_for(cls())
    assert family.unsound and len(family.unsound) > 40
    assert not is_dp_component(cls())
    with pytest.raises(NonPrivateComponentError, match="not differentially private as "
                                                       "implemented"):
        estimator_privacy(cls())


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_the_cost_is_monotone_in_epsilon_and_at_least_the_factor(cls):
    model = CONFIGURED[cls]()
    factor = replace_one_factor(model)
    assert isinstance(factor, fractions.Fraction) and factor >= 1
    cost = adapter_for(model).cost_function(model, "test", None)
    epsilons = np.geomspace(1e-6, 50.0, 200)
    costs = [cost(float(e)) for e in epsilons]
    assert all(b >= a for a, b in zip(costs, costs[1:], strict=False))
    # never below the factor (LogisticRegression: never below its epsilon either)
    assert all(c >= float(factor) * e * (1 - 1e-12) for c, e in zip(costs, epsilons, strict=True))
    assert cost(0.0) == 0.0
    # what estimator_privacy reports is that cost at the configured epsilon
    assert estimator_privacy(model)[0] == cost(1.0)
    if adapter_for(model).cost_is_linear():
        assert cost(1.0) == pytest.approx(float(factor))


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_a_cost_parameter_left_to_the_data_is_refused(cls):
    family = adapter_for(CONFIGURED[cls]())
    for name in family.leak_params:
        model = CONFIGURED[cls]().set_params(**{name: None})
        if family.leaking(model.get_params()) == []:
            continue  # not read off the data in this configuration (a centred PCA's bounds)
        if name in family.cost_params:
            with pytest.raises(PrivacyLeakError, match=name):
                estimator_privacy(model)


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_a_sound_fit_adds_nothing_and_is_switched_back(cls):
    family = adapter_for(CONFIGURED[cls]())
    if family.sound_fit is None:
        return
    assert issubclass(family.sound_fit, cls)
    assert "__init__" not in vars(family.sound_fit) and "__slots__" not in vars(family.sound_fit)
    model = CONFIGURED[cls]()
    params = model.get_params()
    with sound_fitting(model):
        assert type(model) is family.sound_fit and model.get_params() == params
    assert type(model) is cls


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_an_unreleased_fit_adds_nothing_and_is_switched_back(cls):
    """A family's faster subclass for fits never released: a subclass of the fit priced (the
    sound one where there is one) with no ``__init__`` or ``__slots__`` of its own, switched
    in only with ``released=False``."""
    family = adapter_for(CONFIGURED[cls]())
    if family.unreleased_fit is None:
        return
    assert issubclass(family.unreleased_fit, family.sound_fit or cls)
    assert ("__init__" not in vars(family.unreleased_fit)
            and "__slots__" not in vars(family.unreleased_fit))
    model = CONFIGURED[cls]()
    params = model.get_params()
    with sound_fitting(model, released=False):
        assert type(model) is family.unreleased_fit and model.get_params() == params
    assert type(model) is cls
    with sound_fitting(model):
        assert type(model) is (family.sound_fit or cls)


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_the_answers_read_parameters_only(cls):
    """Every answer is the same for a fitted and an unfitted model (no fitted attribute is
    read), and the answers are of the documented types."""
    family = adapter_for(CONFIGURED[cls]())
    unfitted, fitted = CONFIGURED[cls](), CONFIGURED[cls]()
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(40, 2)), np.arange(40) % 2
    fitted.fit(X, y)
    for model in (unfitted, fitted):
        assert family.replace_one_factor(model) == family.replace_one_factor(unfitted)
        assert family.cost_function(model, "t", 2)(0.7) == \
            family.cost_function(unfitted, "t", 2)(0.7)
        assert family.draws_cost(model) is False
        assert family.batched(model) == family.batched(unfitted)
        bound = family.output_bound(model.get_params(), 2)
        assert bound is None or (isinstance(bound[0], bool) and math.isfinite(bound[1]))
    assert np.dtype(family.input_dtype).kind == "f"


def test_advice_is_found_by_class_along_the_mro_not_by_name():
    from sklearn.linear_model import LogisticRegression as SklearnLR
    from sklearn.preprocessing import MinMaxScaler

    assert "diffprivlib.models.LogisticRegression" in advice_for(SklearnLR())
    assert "FunctionTransformer" in advice_for(MinMaxScaler())
    from sklearn.linear_model import LinearRegression as SklearnLinear
    from sklearn.linear_model import Ridge

    assert "skdptune.linear_model.SSPRegressor" in advice_for(SklearnLinear())
    assert advice_for(Ridge()) == advice_for(SklearnLinear())

    class Mine(SklearnLR):
        pass

    assert advice_for(Mine()) == advice_for(SklearnLR())

    class LogisticRegressionLookalike(BaseEstimator):  # same name as a model, another class
        def fit(self, X, y):
            return self

    LogisticRegressionLookalike.__name__ = "LogisticRegression"
    assert advice_for(LogisticRegressionLookalike()) is None


def test_a_regressors_target_range_is_its_bounds_on_y():
    family = adapter_for(CONFIGURED[SSPRegressor]())
    assert family.target_range(SSPRegressor(bounds_y=(-2, 3))) == (-2.0, 3.0)
    assert family.target_range(SSPRegressor()) is None  # left to the data: refused elsewhere
    assert all(adapter_for(CONFIGURED[cls]()).target_range(CONFIGURED[cls]()) is None
               for cls in ACCEPTED if cls is not SSPRegressor)


#: parameters that describe the privacy of a fit: never copied to a non-private counterpart
PRIVACY_PARAMS = {"epsilon", "delta", "accountant", "bounds", "bounds_X", "bounds_y",
                  "data_norm", "classes", "random_state"}


@pytest.mark.parametrize("cls", ACCEPTED, ids=lambda c: c.__name__)
def test_every_accepted_family_has_its_non_private_counterpart(cls):
    """The counterpart is one of the scikit-learn classes the family stands in for, built with
    the parameters the two share in the same meaning, and none of the privacy ones."""
    family = adapter_for(CONFIGURED[cls]())
    assert family.counterpart in family.replaces
    shared = set(family.counterpart_params)
    assert shared <= set(inspect.signature(cls).parameters)
    assert shared <= set(inspect.signature(family.counterpart).parameters)
    assert not shared & PRIVACY_PARAMS
    model = CONFIGURED[cls]()
    twin = family.nonprivate_counterpart(model)
    assert type(twin) is family.counterpart
    own, theirs = model.get_params(deep=False), twin.get_params(deep=False)
    assert all(theirs[name] == own[name] for name in shared)
    assert family.nonprivate_counterpart(model) is not twin  # a new one each time


def test_the_counterparts_carry_the_non_private_settings():
    from sklearn.linear_model import LinearRegression as SklearnLinear
    from sklearn.linear_model import LogisticRegression as SklearnLR
    from sklearn.tree import DecisionTreeClassifier as SklearnTree

    lr = LogisticRegression(epsilon=0.3, data_norm=2.0, C=7.0, fit_intercept=False)
    assert adapter_for(lr).nonprivate_counterpart(lr).get_params() == SklearnLR(
        C=7.0, fit_intercept=False).get_params()
    tree = DecisionTreeClassifier(max_depth=3, bounds=(0.0, 1.0), classes=[0, 1])
    assert adapter_for(tree).nonprivate_counterpart(tree).get_params() == SklearnTree(
        max_depth=3).get_params()
    ssp = SSPRegressor(alpha=5.0, fit_intercept=False)
    assert adapter_for(ssp).nonprivate_counterpart(ssp).get_params() == SklearnLinear(
        fit_intercept=False).get_params()


@pytest.mark.parametrize("cls", REFUSED, ids=lambda c: c.__name__)
def test_refused_families_have_no_counterpart(cls):
    family = adapter_for(cls.__new__(cls))
    assert family.counterpart is None and family.nonprivate_counterpart(cls()) is None
