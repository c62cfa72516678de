"""The magnitude domain of private transformers (skdptune.public._magnitude): the public output
bounds against closed forms and against diffprivlib's own fits at their worst, the stand-in of
the probe, and the limit each configuration gets."""

import math

import numpy as np
import pytest
from diffprivlib.models import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    LogisticRegression,
    StandardScaler,
)
from sklearn.compose import ColumnTransformer
from sklearn.metrics import get_scorer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import PolynomialFeatures

from skdptune.estimators.models._scaler import SCALE_FLOOR
from skdptune.evaluation._fit import candidate_templates
from skdptune.public import dry_run, make_padding
from skdptune.public._magnitude import (
    LIMITS,
    _Extremes,
    bears_on_magnitude,
    magnitude_limits,
    output_magnitude,
    reads_private_output,
)

EPS = np.finfo(np.float64).eps


@pytest.mark.parametrize("kw, expected", [
    ({}, (1e6 + 3.0) / (10 * EPS)),
    ({"with_mean": False}, 1e6 / (10 * EPS)),
    ({"with_std": False}, 1e6 + 3.0),
    ({"with_mean": False, "with_std": False}, 1e6),
])
def test_a_scalers_bound_is_the_closed_form(kw, expected):
    scaler = StandardScaler(bounds=([-3.0, 0.0], [1.0, 2.0]), **kw)
    assert output_magnitude(scaler, 1e6, 2) == pytest.approx(expected, rel=1e-5)
    # a centre of at least 10 (bounds up to 10 covered) where the mean is subtracted
    wider = expected if not kw.get("with_mean", True) else expected * (1e6 + 10) / (1e6 + 3)
    assert output_magnitude(scaler, 1e6, 2, 10.0) == pytest.approx(wider, rel=1e-5)


def test_the_centre_at_the_limit_holds_for_bounds_of_zero():
    """Bounds of magnitude 0 still subtract a mean: the centre assumed is the limit's, so the
    bound covers any bounds up to it (it once applied only where the bounds gave a centre)."""
    scaler = StandardScaler(bounds=(0.0, 0.0))
    assert output_magnitude(scaler, 5.0, 1, 5.0) == pytest.approx(10.0 / SCALE_FLOOR,
                                                                  rel=1e-5)


@pytest.mark.parametrize("centered, expected", [(False, 2 * (1e6 + 3.0)), (True, 2 * 1e6)])
def test_a_pcas_bound_is_the_closed_form(centered, expected):
    pca = PCA(n_components=2, bounds=(-3.0, 1.0), data_norm=5.0, centered=centered)
    assert output_magnitude(pca, 1e6, 4) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("component", [
    PCA(n_components=2, bounds=(-1.0, 1.0), data_norm=2.0, whiten=True),
    StandardScaler(),  # bounds left to the data
    LogisticRegression(),  # not a transformer skdptune knows
])
def test_no_public_bound_for_the_rest(component):
    assert output_magnitude(component, 1.0, 2) is None


def test_a_scalers_worst_output_meets_the_bound():
    """Constant rows and an epsilon so large that the noisy variance can fall to the scale
    floor: diffprivlib's own scalers, over seeds, reach within 2% of the bound on a row of
    magnitude L -- and never beyond it (a floor of 3e-15 instead of 10 eps would be
    crossed)."""
    X = np.full((1000, 1), 0.5)
    limit = 1e6
    bound = output_magnitude(StandardScaler(bounds=(0.0, 1.0)), limit, 1)
    worst = max(
        np.max(np.abs(StandardScaler(epsilon=1e26, bounds=(0.0, 1.0), random_state=seed)
                      .fit(X).transform(np.array([[limit], [-limit]]))))
        for seed in range(50))
    assert 0.98 * bound < worst <= bound
    assert worst > (limit + 1.0) / 3e-15


def test_a_pcas_worst_output_meets_the_bound():
    """Rows on the diagonal make the first component the diagonal, along which a row of
    entries L projects to sqrt(d) L: within 1% of the bound, never beyond (a bound without
    sqrt(d) would be crossed)."""
    d, limit = 4, 1e6
    t = np.random.RandomState(0).uniform(-1, 1, size=(2000, 1))
    X = np.hstack([t] * d)
    pca = PCA(n_components=1, epsilon=1e6, bounds=(-1.0, 1.0), data_norm=2.0)
    bound = output_magnitude(pca, limit, d)
    worst = max(np.max(np.abs(pca.set_params(random_state=seed).fit(X).transform(
        np.array([[limit] * d, [-limit] * d])))) for seed in range(20))
    assert 0.99 * bound < worst <= bound
    assert worst > 1.9 * limit


def test_the_stand_in_outputs_the_extremes_with_the_components_names():
    scaler = StandardScaler(epsilon=1.0, bounds=(-1.0, 1.0))
    X = np.random.RandomState(0).standard_normal((7, 3))
    stand_in = _Extremes(scaler, 100.0).fit(X)
    M = (100.0 + 100.0) / SCALE_FLOOR  # a centre at the limit: any bounds up to it
    assert stand_in.magnitude_ == pytest.approx(M, rel=1e-5)
    out = stand_in.transform(X)
    expected = np.array([[1, 1, 1], [-1, -1, -1], [1, -1, 1], [-1, 1, -1], [0, 0, 0],
                         [1, 1, 1], [-1, -1, -1]]) * stand_in.magnitude_
    np.testing.assert_array_equal(out, expected)
    assert list(stand_in.get_feature_names_out()) == ["x0", "x1", "x2"]
    pca = PCA(n_components=2, epsilon=1.0, bounds=(-1.0, 1.0), data_norm=3.0)
    assert _Extremes(pca, 1.0).fit(X).transform(X).shape == (7, 2)
    # a value above the limit among the (public) rows it is fitted on raises the bound
    assert _Extremes(scaler, 1.0).fit(X * 1e9).magnitude_ > 1e9 / SCALE_FLOOR
    with pytest.raises(ValueError, match="not finite"):
        _Extremes(scaler, 1.0).fit(np.full((3, 3), np.inf))


def _lr():
    return LogisticRegression(epsilon=1.0, data_norm=2.0)


def _scaler(bounds=(-1.0, 1.0)):
    return StandardScaler(epsilon=0.5, bounds=bounds)


def _tree():
    return DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])


def _limits(estimators, dtype=np.float64):
    X = np.random.RandomState(0).uniform(-1, 1, size=(100, 2)).astype(dtype)
    y = np.arange(100) % 2
    classes = np.array([0, 1])
    templates = candidate_templates(estimators[0], [{}])
    padding = make_padding(X, y, classes)
    # the search's scorer: a tree converts to float32 when it predicts
    scorers = {"score": get_scorer("accuracy")}
    synthetic = dry_run(estimators[0], [], templates, X, y, classes, {}, scorers,
                        padding).synthetic
    return magnitude_limits([t for e in estimators for t in candidate_templates(e, [{}])],
                            synthetic)


def test_each_configuration_gets_the_largest_limit_its_steps_take():
    """Closed forms: after a scaler with bounds of magnitude 1 the largest output at L is
    (L + 1) / (10 eps) -- a float64 model takes it at L = 1e100 (4.5e114), a cube only at
    1e50 ((4.5e114)^3 overflows), a float32 tree only at 1e20 (4.5e44 > 3.4e38 at 1e30); no
    step reads a private output: no limit."""
    poly = Pipeline([("s", _scaler()), ("p", PolynomialFeatures(3)), ("lr", _lr())])
    composite = Pipeline([("ct", ColumnTransformer([("s", _scaler(), [0])],
                                                   remainder="passthrough")), ("lr", _lr())])
    assert _limits([
        Pipeline([("s", _scaler()), ("lr", _lr())]),
        poly,
        Pipeline([("s", _scaler()), ("tree", _tree())]),
        composite,
        _lr(),
        Pipeline([("p", PolynomialFeatures(2)), ("lr", _lr())]),
    ]) == [1e100, 1e50, 1e20, 1e100, None, None]
    cube_root = float(np.finfo(np.float64).max) ** (1 / 3)
    assert (1e50 + 1) / SCALE_FLOOR * 1.000001 < cube_root < (1e100 + 1) / SCALE_FLOOR
    assert (1e20 + 1) / SCALE_FLOOR < float(np.finfo(np.float32).max) < 1e30 / SCALE_FLOOR


def test_a_second_private_transformer_is_bounded_from_what_it_receives():
    """PCA then a scaler with bounds of magnitude 1e90: at L the PCA gives at most
    sqrt(2) (L + 1); the scaler then (sqrt(2) (L + 1) + 1e90) / (10 eps) >= 4.5e104, beyond
    float32 at every limit -- a tree after them is refused --, finite in float64 at 1e100."""
    pca = PCA(n_components=2, epsilon=0.5, bounds=(-1.0, 1.0), data_norm=2.0)
    wide = StandardScaler(epsilon=0.5, bounds=(-1e90, 1e90))
    assert _limits([Pipeline([("pca", pca), ("s", wide), ("lr", _lr())])]) == [1e100]
    with pytest.raises(ValueError, match="float32"):
        _limits([Pipeline([("pca", pca), ("s", wide), ("tree", _tree())])])


def test_which_steps_read_a_private_output():
    assert reads_private_output(Pipeline([("s", _scaler()), ("lr", _lr())]))
    assert reads_private_output(Pipeline([("outer", Pipeline([("s", _scaler())])),
                                          ("nb", GaussianNB(bounds=(-1.0, 1.0)))]))
    assert not reads_private_output(Pipeline([("p", PolynomialFeatures()),
                                              ("inner", Pipeline([("lr", _lr())]))]))
    assert not reads_private_output(_scaler())  # a transformer search: nothing reads it
    assert LIMITS == tuple(sorted(LIMITS, reverse=True)) and math.isclose(LIMITS[-1], 1e6)


def test_the_probe_outputs_the_transformers_own_float_type():
    """A scaler keeps float32 (and float16) rows in that type: float32's limit is 1e20
    ((1e20 + 1) / (10 eps) = 4.5e34 < 3.4e38 < 4.5e44), and in float16 (largest 65504) no
    limit works. A PCA outputs float64 whatever its input."""
    scaler_lr = Pipeline([("s", _scaler()), ("lr", _lr())])
    pca_lr = Pipeline([("pca", PCA(n_components=2, epsilon=0.5, bounds=(-1.0, 1.0),
                                   data_norm=2.0)), ("lr", _lr())])
    assert _limits([scaler_lr, pca_lr], np.float32) == [1e20, 1e100]
    with pytest.raises(ValueError, match="could not take its output"):
        _limits([scaler_lr], np.float16)


def test_candidates_that_differ_in_the_models_parameters_share_one_probe(monkeypatch):
    """A diffprivlib model reads its rows the same way whatever its own parameters: 40 trees
    share one limit search; a different step between the scaler and the model does not."""
    from diffprivlib.models import DecisionTreeClassifier

    import skdptune.public._magnitude as magnitude

    calls = []
    real = magnitude._largest_limit
    monkeypatch.setattr(magnitude, "_largest_limit",
                        lambda template, synthetic: calls.append(template) or real(template,
                                                                                    synthetic))
    forest = Pipeline([("s", _scaler()), ("rf", DecisionTreeClassifier(
        epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1]))])
    grid = [{"rf__max_depth": d, "rf__epsilon": e} for d in range(1, 5)
            for e in np.linspace(0.5, 1.4, 10)]
    X = np.random.RandomState(0).uniform(-1, 1, size=(100, 2))
    y = np.arange(100) % 2
    templates = candidate_templates(forest, grid)
    synthetic = dry_run(forest, grid[:1], templates[:1], X, y, np.array([0, 1]), {},
                        {"score": get_scorer("accuracy")},
                        make_padding(X, y, np.array([0, 1]))).synthetic
    assert magnitude_limits(templates, synthetic) == [1e20] * 40 and len(calls) == 1
    poly = candidate_templates(Pipeline([("s", _scaler()), ("p", PolynomialFeatures()),
                                         ("lr", _lr())]), [{"p__degree": 2}, {"p__degree": 6}])
    assert magnitude_limits(poly, synthetic) == [1e100, 1e30] and len(calls) == 3


def test_which_parameters_bear_on_the_limit():
    """The transformer's centring and scaling, and every parameter of a step after it, may
    change the limit; its epsilon, its bounds (the probe takes a centre at the limit itself),
    the model's parameters and a step in front do not (the latter are read as the model
    input: shapes_model_input)."""
    pipe = Pipeline([("p0", PolynomialFeatures()), ("s", _scaler()),
                     ("p", PolynomialFeatures()), ("lr", _lr())])
    assert [bears_on_magnitude(pipe, name) for name in (
        "s__with_std", "s__with_mean", "p__degree", "s__bounds", "s__epsilon", "s__accountant",
        "lr__C", "p0__degree", "lr__data_norm")] == [True] * 3 + [False] * 6
    assert not bears_on_magnitude(Pipeline([("p", PolynomialFeatures()), ("lr", _lr())]),
                                  "p__degree")
    assert bears_on_magnitude(pipe, "no__such")
