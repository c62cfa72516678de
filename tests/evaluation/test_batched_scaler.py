"""The batched runs of pipelines with diffprivlib's StandardScaler: each run's scaler is the
one-by-one fit's, bit for bit; its model the one-by-one fit's up to the optimiser; failures
fail as one by one; and the search selects as with one-by-one runs."""

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.model_selection import BaseCrossValidator, LeaveOneGroupOut
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune._private import silenced
from skdptune._seeding import SeedPlan
from skdptune.evaluation import _batched_runs, _holdout, _partitions
from skdptune.evaluation._batched import scaled_model
from skdptune.evaluation._batched_runs import fit_runs, pipeline_accuracies, transformed_factors
from skdptune.evaluation._batched_scaler import ScalerStatistics, bounds_centre
from skdptune.evaluation._fit import (
    DeferredPipeline,
    built,
    candidate_keys,
    candidate_template,
    candidate_templates,
    fit_on_rows,
    fitting,
    instantiate,
)
from skdptune.evaluation._partitions import PartitionEvaluator
from skdptune.evaluation._scores import check_bounded_scorer
from skdptune.public import make_padding

_FITTED = ("mean_", "var_", "scale_", "n_samples_seen_", "n_features_in_")


def _data(n=600, d=5, classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(rng.uniform(-2, 2, d), rng.uniform(0.2, 3, d), size=(n, d))
    score = X[:, 0] - 0.7 * X[:, 1] + rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _same(a, b):
    if a is None or b is None:
        return a is b
    return (type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
            and np.array_equal(a, b))


@pytest.mark.parametrize("with_mean, with_std", [(True, True), (True, False), (False, True),
                                                 (False, False)])
def test_a_runs_scaler_is_the_scalers_own_fit_bit_for_bit(with_mean, with_std):
    """Every attribute ``fit`` sets -- and only those -- equals diffprivlib's, bit for bit:
    scalar and per-feature bounds, integer rows, budgets small enough for many rejected
    variance draws, several seeds from one set of statistics."""
    rng = np.random.RandomState(1)
    for trial in range(12):
        n, d = int(rng.randint(2, 200)), int(rng.randint(1, 9))
        Z = rng.normal(rng.uniform(-2, 2, d), rng.uniform(0.01, 3, d), size=(n, d))
        if trial % 4 == 3:
            Z = np.round(Z * 3)  # integer-valued rows, as floats (the fit converts them)
        lower = rng.uniform(-3, 0, d)
        bounds = ((float(lower[0]), float(lower[0] + 2.5)) if trial % 2
                  else (lower, lower + rng.uniform(0.01, 4, d)))
        epsilon = float(rng.uniform(0.005, 3))
        scaler = StandardScaler(bounds=bounds, epsilon=epsilon, with_mean=with_mean,
                                with_std=with_std)
        with fitting():
            statistics = ScalerStatistics(scaler, Z)
            for seed in rng.randint(0, 2**31, 3).tolist():
                expected = StandardScaler(bounds=bounds, epsilon=epsilon, with_mean=with_mean,
                                          with_std=with_std, random_state=seed).fit(Z)
                got = statistics.fitted(epsilon, seed)
                assert set(got) == {*_FITTED, "bounds"}
                assert set(vars(expected)) - set(got) == set(vars(scaler)) - {"bounds"}
                for name in _FITTED:
                    assert _same(got[name], getattr(expected, name)), name
                for ours, theirs in zip(got["bounds"], expected.bounds, strict=True):
                    assert np.array_equal(ours, theirs)


def test_a_runs_scaler_reads_the_means_before_the_variances():
    """The order of the draws matters: a twin that draws the variances first differs."""
    X, _ = _data(n=50)
    scaler = StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5)
    statistics = ScalerStatistics(scaler, X)
    expected = StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5, random_state=3).fit(X)
    assert np.array_equal(statistics.fitted(0.5, 3)["var_"], expected.var_)
    generator, means, variances = statistics._mechanisms_of(0.5, True)
    generator.seed(3)
    from skdptune._mechanisms import bounded_domain_many
    twin = bounded_domain_many(variances, statistics.variances, generator)
    assert not np.array_equal(twin * statistics.count / statistics.count, expected.var_)


def _shifted(X):
    return np.asarray(X, dtype=float) + 0.5


def _pipeline(**scaler):
    scaler = {"bounds": (-4.0, 4.0), "epsilon": 0.5, **scaler}
    return Pipeline([("shift", FunctionTransformer(_shifted)),
                     ("scaler", StandardScaler(**scaler)),
                     ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])


_SPACE = [{"model__C": 0.1}, {"model__C": 1.0, "model__data_norm": 4.0},
          {"model__C": 10.0, "scaler__bounds": (-6.0, 3.0)},
          {"model__C": 1.0, "model__fit_intercept": False}]


def _runs(X, y, template, space=_SPACE, runs=12, seed0=40, one_by_one=True):
    candidates = [space[r % len(space)] for r in range(runs)]
    templates = candidate_templates(template, candidates)
    padding = make_padding(X, y, np.unique(y))
    seeds = list(range(seed0, seed0 + runs))
    with silenced():
        models = fit_runs(templates, seeds, X, y, np.arange(len(y)), padding, 0.7,
                          candidate_keys(candidates))
    alone = []
    for t, seed in zip(templates, seeds if one_by_one else [], strict=False):
        with silenced():
            alone.append(fit_on_rows(instantiate(t, seed=seed, epsilon_scale=0.7), X, y, None,
                                     {}, padding=padding))
    return models, alone, padding


@pytest.mark.parametrize("classes", [2, 3])
def test_pipeline_runs_are_the_one_by_one_fits(classes):
    """Each run's built pipeline: the fitted free steps, the scaler bit for bit, the model as
    its one-by-one fit up to the optimiser (the same predictions), both throwaway accountants
    charged as their fits charge them; its accuracies from one product are ``predict``'s."""
    X, y = _data(classes=classes)
    models, alone, _ = _runs(X, y, _pipeline())
    assert all(isinstance(m, DeferredPipeline) for m in models)
    accuracies = pipeline_accuracies(models, X, y)
    for model, expected, accuracy in zip(models, alone, accuracies, strict=True):
        pipe = built(model)
        assert type(pipe) is Pipeline and [n for n, _ in pipe.steps] == ["shift", "scaler",
                                                                           "model"]
        np.testing.assert_array_equal(pipe[:1].transform(X), expected[:1].transform(X))
        for name in _FITTED:
            assert _same(getattr(pipe["scaler"], name), getattr(expected["scaler"], name))
        assert pipe["scaler"].accountant.total() == expected["scaler"].accountant.total()
        assert pipe["model"].accountant.total() == expected["model"].accountant.total()
        assert pipe["scaler"].accountant.total()[0] == pipe["scaler"].epsilon > 0
        np.testing.assert_allclose(pipe["model"].coef_, expected["model"].coef_, atol=2e-2)
        assert np.mean(pipe.predict(X) == expected.predict(X)) >= 0.99
        np.testing.assert_array_equal(accuracy, pipe.predict(X) == y)


def test_a_runs_draws_do_not_depend_on_the_other_runs():
    """A run's scaler is a function of the rows and its own seed: the same bit for bit with
    other companions in its batch (and its model the same up to the rounding of shared
    products)."""
    X, y = _data()
    models, _, _ = _runs(X, y, _pipeline(), runs=8)
    fewer, _, _ = _runs(X, y, _pipeline(), runs=3)
    for many, few in zip(models[:3], fewer, strict=True):
        for name in _FITTED:
            assert _same(many.scaler[name], few.scaler[name])
        np.testing.assert_allclose(many.model["coef_"], few.model["coef_"], atol=1e-6)


def test_pipeline_runs_fail_as_one_by_one():
    """Rows the model's fit refuses after the scaler fail every run; rows whose transform
    overflows fail their run only (the factors refuse them)."""
    X, y = _data()
    X_bad = X.copy()
    X_bad[3, 1] = np.nan
    models, _, padding = _runs(X_bad, y, _pipeline(), runs=4, one_by_one=False)
    assert models == [None] * 4
    with silenced(), pytest.raises(ValueError):
        fit_on_rows(instantiate(_pipeline(), seed=1), X_bad, y, None, {}, padding=padding)
    shifts, scales = np.zeros((2, 2)), np.array([[1.0, 1.0], [1e-300, 1.0]])
    factors, finite = transformed_factors(np.array([[1e10, 1.0], [2.0, 1.0]]), shifts, scales,
                                          np.array([1.0, 1.0]))
    assert finite.tolist() == [True, False]
    np.testing.assert_allclose(factors[:, 0], [1 / np.hypot(1e10, 1), 1 / np.hypot(2, 1)])


def test_only_scalers_with_public_bounds_before_a_batched_model_are_batched():
    model = LogisticRegression(epsilon=1.0, data_norm=1.0)
    pipeline = _pipeline()
    assert scaled_model(pipeline) is pipeline["model"]
    assert _holdout._batchable([candidate_template(pipeline, {})], *_data(), {}, 0.0)
    assert scaled_model(Pipeline([("s", StandardScaler(bounds=(0, 1))), ("m", model)])) is model
    for pipeline in (
            Pipeline([("s", StandardScaler()), ("m", model)]),  # bounds from the data
            Pipeline([("s", StandardScaler(bounds=(0, 1))), ("m", GaussianNB())]),
            Pipeline([("a", StandardScaler(bounds=(0, 1))), ("s", StandardScaler(bounds=(0, 1))),
                      ("m", model)]),  # two DP steps
            Pipeline([("s", StandardScaler(bounds=(0, 1))),
                      ("m", LogisticRegression(data_norm=1.0, tol=1e-2))])):  # loose
        assert not _holdout._batchable([candidate_template(pipeline, {})], *_data(), {}, 0.0)


def _search(n_jobs=1, **params):
    return DPRandomSearchCV(_pipeline(), {"model__C": [0.1, 1.0, 10.0],
                                          "model__data_norm": [1.0, 2.0, 4.0]},
                            n_iter=30, epsilon=2.0, classes=[0, 1], random_state=5,
                            accountant=BudgetAccountant(), n_jobs=n_jobs, **params)


def test_search_on_a_scaler_pipeline_selects_as_with_one_by_one_runs(monkeypatch):
    """Batched (at n_jobs 1 and 2) and one by one: the same pick, the same scaler bit for bit,
    nearly the same model, the same report; the batched decision sets the defaults."""
    X, y = _data(n=900, seed=5)
    calls = []
    real = _holdout._noisy_runs_batched
    monkeypatch.setattr(_holdout, "_noisy_runs_batched",
                        lambda templates, *a: calls.append(len(templates)) or real(templates, *a))
    batched = _search().fit(X, y)
    two = _search(n_jobs=2).fit(X, y)
    assert calls
    monkeypatch.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
    alone = _search().fit(X, y)
    _selected_alike(batched, two, alone, X, lambda pipe: pipe["scaler"], _FITTED)
    _batched_defaults(_pipeline())


def _selected_alike(batched, two, alone, X, scaler_of, names):
    """Searches batched at n_jobs 1 and 2 and one by one: the same pick, the same scaler bit for
    bit (``names``), nearly the same model, the same report."""
    assert batched.best_params_ == alone.best_params_ == two.best_params_
    for name in names:
        assert _same(getattr(scaler_of(batched.best_estimator_), name),
                     getattr(scaler_of(alone.best_estimator_), name))
    assert np.mean(batched.predict(X) == alone.predict(X)) >= 0.99
    np.testing.assert_array_equal(batched.predict(X), two.predict(X))
    assert batched.privacy_spent_ == alone.privacy_spent_


def _batched_defaults(template):
    """The batched decision sets the defaults: E[K] = 1000."""
    default = DPRandomSearchCV(template, {"model__C": [0.1, 1.0]}, epsilon=2.0, classes=[0, 1])
    assert default._batched() and default._expected_runs(True) == 1000


def test_a_scaler_that_reads_x_itself_needs_an_array():
    """Without a free step the scaler's fit reads ``X`` itself (a frame's names are its to
    record): only a dense numeric array is batched; anything else goes one by one."""
    X, y = _data()
    plain = Pipeline([("scaler", StandardScaler(bounds=(-4.0, 4.0))),
                      ("model", LogisticRegression(data_norm=2.0))])
    models, _, _ = _runs(X, y, plain, space=[{"model__C": 1.0}], runs=2, one_by_one=False)
    assert all(isinstance(m, DeferredPipeline) for m in models)
    templates = candidate_templates(plain, [{}])
    with silenced():
        assert fit_runs(templates, [1], X.tolist(), y, np.arange(len(y)),
                        make_padding(X, y, np.unique(y)), 0.7) is None


def test_a_space_with_and_without_the_scaler_batches_both_kinds():
    """A step set to the DP scaler or to a free transformer: each kind of run is solved with
    its own kind, and each equals its one-by-one fit."""
    X, y = _data()
    space = [{"scaler": StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5)},
             {"scaler": FunctionTransformer(_shifted)}]
    models, alone, _ = _runs(X, y, _pipeline(), space=space, runs=4)
    assert [type(m) for m in models] == [DeferredPipeline, Pipeline] * 2
    for model, expected in zip(models, alone, strict=True):
        assert np.mean(built(model).predict(X) == expected.predict(X)) >= 0.99


def _far_from_zero(n=2000, seed=0):
    """A timestamp-like feature: 1.7e12 +- 1000, its public bounds +-5000 around it."""
    rng = np.random.RandomState(seed)
    X = np.column_stack([1.7e12 + rng.uniform(-1000, 1000, n), rng.normal(size=n)])
    y = (X[:, 0] - 1.7e12 + 300 * X[:, 1] + rng.normal(scale=300, size=n) > 0).astype(int)
    bounds = (np.array([1.7e12 - 5000, -4.0]), np.array([1.7e12 + 5000, 4.0]))
    return X, y, bounds


def test_rows_far_from_zero_are_clipped_to_the_norm(monkeypatch):
    """Rows whose magnitude dwarfs their spread (the terms of the norms' expansion cancel):
    every run's clipped rows stay within ``data_norm`` up to rounding, as diffprivlib clips
    them; a twin without the centring and the rounding bound lets rows through far above it."""
    from skdptune.evaluation import _batched_runs
    X, y, bounds = _far_from_zero()
    statistics = ScalerStatistics(StandardScaler(bounds=bounds, epsilon=50.0), X)
    fitted = [statistics.fitted(50.0, seed) for seed in range(20)]
    shifts = np.array([f["mean_"] for f in fitted])
    scales = np.array([f["scale_"] for f in fitted])
    norms = np.full(20, 0.5)

    exact = [1.0 / np.maximum(1.0, np.linalg.norm((X - shifts[r]) / scales[r], axis=1) / 0.5)
             for r in range(20)]

    def worst(factors):
        return max(np.max(np.linalg.norm((X - shifts[r]) / scales[r], axis=1) * factors[r])
                   for r in range(20))

    def off(factors):
        return max(np.max(np.abs(factors[r] / exact[r] - 1)) for r in range(20))
    centre = bounds_centre(statistics.bounds)
    factors = transformed_factors(X - centre, shifts - centre, scales, norms)[0].T
    assert worst(factors) <= 0.5 * (1 + 1e-12) and off(factors) <= 1e-6
    monkeypatch.setattr(_batched_runs, "FACTOR_BOUND_SHARE", np.inf)
    twin = transformed_factors(X, shifts, scales, norms)[0].T
    assert off(twin) > 0.1


def test_pipeline_runs_far_from_zero_are_the_one_by_one_fits():
    """The same rows through the whole path: the scaler bit for bit, the model and its scored
    accuracies as the one-by-one fit's."""
    X, y, bounds = _far_from_zero(n=800)
    template = Pipeline([("scaler", StandardScaler(bounds=bounds, epsilon=1.0)),
                         ("model", LogisticRegression(data_norm=1.0, epsilon=1.0))])
    models, alone, _ = _runs(X, y, template, space=[{"model__C": 1.0}, {"model__C": 10.0}],
                             runs=6)
    accuracies = pipeline_accuracies(models, X, y)
    for model, expected, accuracy in zip(models, alone, accuracies, strict=True):
        pipe = built(model)
        for name in _FITTED:
            assert _same(getattr(pipe["scaler"], name), getattr(expected["scaler"], name))
        assert np.mean(pipe.predict(X) == expected.predict(X)) >= 0.99
        np.testing.assert_array_equal(accuracy, pipe.predict(X) == y)


def test_unseeded_runs_draw_their_scaler_from_the_secure_generator(monkeypatch):
    """Without a seed each run's scaler reads diffprivlib's secure generator (a new one per
    run, read at least once per mean and per variance), and two runs differ."""
    import secrets

    made = []

    class Counting(secrets.SystemRandom):
        def __init__(self):
            super().__init__()
            self.calls = 0
            made.append(self)

        def random(self):
            self.calls += 1
            return super().random()
    monkeypatch.setattr(secrets, "SystemRandom", Counting)
    X, _ = _data(n=100, d=4)
    statistics = ScalerStatistics(StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5), X)
    first, second = statistics.fitted(0.5, None), statistics.fitted(0.5, None)
    assert len(made) >= 2 and all(g.calls >= 4 * 4 + 4 * 4 for g in made[-2:])
    assert not np.array_equal(first["mean_"], second["mean_"])


def test_a_scalers_statistics_serve_each_epsilon_its_own_mechanisms():
    """One set of statistics, runs at two budgets (budget mode prices candidates apart): each
    draw is its own epsilon's fit, bit for bit."""
    X, _ = _data(n=80)
    statistics = ScalerStatistics(StandardScaler(bounds=(-5.0, 5.0)), X)
    for epsilon in (0.3, 2.0, 0.3):
        expected = StandardScaler(bounds=(-5.0, 5.0), epsilon=epsilon, random_state=9).fit(X)
        got = statistics.fitted(epsilon, 9)
        for name in _FITTED:
            assert _same(got[name], getattr(expected, name))


def test_float32_rows_go_one_by_one():
    """diffprivlib's scaler keeps float32 rows in float32: such runs are fitted one by one."""
    X, y = _data()
    X = X.astype(np.float32)
    plain = Pipeline([("scaler", StandardScaler(bounds=(-4.0, 4.0))),
                      ("model", LogisticRegression(data_norm=2.0))])
    with silenced():
        assert fit_runs(candidate_templates(plain, [{}]), [1], X, y, np.arange(len(y)),
                        make_padding(X, y, np.unique(y)), 0.7) is None
        assert fit_runs(candidate_templates(plain, [{}]), [1], X.astype(float), y,
                        np.arange(len(y)), make_padding(X.astype(float), y, np.unique(y)),
                        0.7) is not None


# -- the scaler as the one private branch of a ColumnTransformer (the README's shape) ----------

def _frame(n=700, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(seed)
    X = pd.DataFrame({"age": rng.normal(40, 12, n), "city": rng.choice(list("xyz"), n),
                      "hours": rng.randint(0, 80, n), "noise": rng.normal(size=n)})
    y = ((X["age"] - 40) / 12 + (X["city"] == "x") + rng.normal(size=n) > 0.4).astype(int)
    return X, y.to_numpy()


_CITY = OneHotEncoder(categories=[list("xyz")], handle_unknown="ignore", sparse_output=False)
_NUMERIC_BOUNDS = (np.array([0.0, 0.0]), np.array([100.0, 80.0]))


def _column_pipeline(remainder="passthrough", columns=("age", "hours"), **scaler):
    scaler = {"bounds": _NUMERIC_BOUNDS, "epsilon": 0.5, **scaler}
    prep = ColumnTransformer([("city", clone(_CITY), ["city"]),
                              ("num", StandardScaler(**scaler), list(columns))],
                             remainder=remainder)
    return Pipeline([("prep", prep), ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])


_COLUMN_SPACE = [{"model__C": 0.1}, {"model__C": 1.0, "model__data_norm": 4.0},
                 {"prep__num__epsilon": 0.2}, {"model__fit_intercept": False}]


def _one_branch(pipe):
    return pipe["prep"].named_transformers_["num"]


@pytest.mark.parametrize("remainder, with_mean", [("passthrough", True), ("drop", False)])
def test_column_transformer_runs_are_the_one_by_one_fits(remainder, with_mean):
    """The scaler as a branch of a ``ColumnTransformer`` on a frame: each built pipeline's
    transformer is its one-by-one fit's -- the same fitted attributes (names, columns, output
    indices), the branch's scaler bit for bit with its feature names, the same output names and
    transform --, both throwaway accountants charged as the fit charges them (the fitted branch,
    not the unfitted parameter), the model up to the optimiser; accuracies from one product."""
    X, y = _frame()
    template = _column_pipeline(remainder, with_mean=with_mean)
    models, alone, _ = _runs(X, y, template, space=_COLUMN_SPACE, runs=8)
    assert all(isinstance(m, DeferredPipeline) for m in models)
    accuracies = pipeline_accuracies(models, X, y)
    for model, expected, accuracy in zip(models, alone, accuracies, strict=True):
        pipe = built(model)
        ours, theirs = pipe["prep"], expected["prep"]
        assert set(vars(ours)) == set(vars(theirs))
        assert ours.output_indices_ == theirs.output_indices_
        assert [(n, type(t), c) for n, t, c in ours.transformers_] == [
            (n, type(t), c) for n, t, c in theirs.transformers_]
        assert list(ours.get_feature_names_out()) == list(theirs.get_feature_names_out())
        for name in (*_FITTED, "feature_names_in_"):
            assert _same(getattr(_one_branch(pipe), name), getattr(_one_branch(expected), name))
        np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
        for fitted, unfitted in ((_one_branch(pipe), ours.transformers[1][1]),
                                 (_one_branch(expected), theirs.transformers[1][1])):
            assert fitted.accountant.total()[0] == fitted.epsilon > 0
            assert unfitted.accountant.total()[0] == 0 and not hasattr(unfitted, "mean_")
        assert pipe["model"].accountant.total() == expected["model"].accountant.total()
        np.testing.assert_allclose(pipe["model"].coef_, expected["model"].coef_, atol=2e-2)
        assert np.mean(pipe.predict(X) == expected.predict(X)) >= 0.99
        np.testing.assert_array_equal(accuracy, pipe.predict(X) == y)


def test_column_transformer_runs_on_an_array_read_its_columns_by_index():
    """An array, the scaler's columns given by index and the others passed through: the
    scaler's columns and only they are standardised; no feature names."""
    X, y = _data(d=4)
    prep = ColumnTransformer([("num", StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5), [3, 1])],
                             remainder="passthrough")
    template = Pipeline([("prep", prep), ("model", LogisticRegression(data_norm=2.0))])
    models, alone, _ = _runs(X, y, template, space=[{"model__C": 1.0}], runs=3)
    for model, expected in zip(models, alone, strict=True):
        pipe = built(model)
        assert not hasattr(_one_branch(pipe), "feature_names_in_")
        for name in _FITTED:
            assert _same(getattr(_one_branch(pipe), name), getattr(_one_branch(expected), name))
        np.testing.assert_array_equal(pipe["prep"].transform(X), expected["prep"].transform(X))
        assert np.mean(pipe.predict(X) == expected.predict(X)) >= 0.99


def test_column_transformer_shapes_the_batched_scaler_does_not_reproduce():
    """Batched only where the transformer's one private branch is the scaler itself, beside
    data-independent branches, unweighted; anything else is fitted one by one."""
    ok = _column_pipeline()
    assert scaled_model(ok) is ok["model"]
    prep = ok["prep"]
    selector = ColumnTransformer([("num", StandardScaler(bounds=(0.0, 100.0)),
                                   make_column_selector(dtype_include=np.number))])
    model = LogisticRegression(data_norm=1.0)
    assert scaled_model(Pipeline([("prep", selector), ("m", model)])) is model
    nested = ColumnTransformer([("num", Pipeline([("s", StandardScaler(bounds=(0.0, 1.0)))]),
                                 ["age"])])
    two = ColumnTransformer([("a", StandardScaler(bounds=(0.0, 1.0)), ["age"]),
                             ("b", StandardScaler(bounds=(0.0, 1.0)), ["hours"])])
    for step in (clone(prep).set_params(transformer_weights={"num": 2.0}),
                 clone(prep).set_params(num=StandardScaler()),  # bounds from the data
                 clone(prep).set_params(remainder=StandardScaler(bounds=(0.0, 1.0))),
                 clone(prep).set_params(city=GaussianNB()),
                 nested, two):
        assert scaled_model(Pipeline([("prep", step), ("m", model)])) is None


def test_column_transformer_rows_it_does_not_reproduce_go_one_by_one():
    """float32 columns (the scaler keeps them in float32), no column selected (the branch is
    not fitted), a frame output (the model records its names): every run goes one by one; a NaN
    in the scaler's columns fails every run, as one by one."""
    def batched(X, y, template):
        with silenced():
            return fit_runs(candidate_templates(template, [{}]), [1], X, y, np.arange(len(y)),
                            make_padding(X, y, np.unique(y)), 0.7)

    X, y = _frame()
    assert batched(X, y, _column_pipeline()) is not None
    assert batched(X.astype({"age": np.float32, "hours": np.float32}), y,
                   _column_pipeline()) is None
    assert batched(X, y, _column_pipeline(columns=())) is None
    framed = _column_pipeline()
    framed["prep"].set_output(transform="pandas")
    assert batched(X, y, framed) is None
    X_bad = X.copy()
    X_bad.loc[5, "age"] = np.nan
    assert batched(X_bad, y, _column_pipeline()) == [None]
    with silenced(), pytest.raises(ValueError):
        fit_on_rows(instantiate(_column_pipeline(), seed=1), X_bad, y, None, {},
                    padding=make_padding(X, y, np.unique(y)))


def test_search_on_the_column_transformer_pipeline_selects_as_with_one_by_one_runs(
        monkeypatch):
    """The README's shape: batched (n_jobs 1 and 2) and one by one select alike, report alike;
    the batched defaults apply (E[K] = 1000)."""
    X, y = _frame(n=900, seed=3)

    def search(n_jobs=1):
        return DPRandomSearchCV(_column_pipeline(), {"model__C": [0.1, 1.0, 10.0],
                                                     "model__data_norm": [1.0, 2.0, 4.0]},
                                n_iter=30, epsilon=2.0, classes=[0, 1], random_state=5,
                                accountant=BudgetAccountant(), n_jobs=n_jobs)
    calls = []
    real = _holdout._noisy_runs_batched
    monkeypatch.setattr(_holdout, "_noisy_runs_batched",
                        lambda templates, *a: calls.append(len(templates)) or real(templates, *a))
    batched, two = search().fit(X, y), search(n_jobs=2).fit(X, y)
    assert calls
    monkeypatch.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
    alone = search().fit(X, y)
    _selected_alike(batched, two, alone, X, _one_branch, (*_FITTED, "feature_names_in_"))
    _batched_defaults(_column_pipeline())


def _doubled_in_place(Z):
    Z *= 2.0
    return Z


@pytest.mark.parametrize("scaler_first", [True, False])
def test_a_branch_that_writes_into_its_input_is_seen_at_the_scalers_turn(scaler_first):
    """A free branch that writes into its input (a view of the rows: an array, a slice of its
    columns), before or after the scaler: the scaler reads its columns at its own turn, as in
    the transformer's fit, bit for bit (a review found them read after every branch)."""
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(40, 12, 500), rng.uniform(0, 80, 500)])
    y = ((X[:, 0] - 40) / 12 + rng.normal(size=500) > 0.4).astype(int)
    branches = [("num", StandardScaler(bounds=([0.0, 0.0], [100.0, 80.0]), epsilon=0.5),
                 slice(0, 2)),
                ("double", FunctionTransformer(_doubled_in_place), slice(0, 1))]
    prep = ColumnTransformer(branches if scaler_first else branches[::-1])
    template = Pipeline([("prep", prep), ("model", LogisticRegression(data_norm=2.0))])
    models, alone, _ = _runs(X, y, template, space=[{}], runs=2)
    accuracies = pipeline_accuracies(models, X, y)
    for model, expected, accuracy in zip(models, alone, accuracies, strict=True):
        pipe = built(model)
        for name in _FITTED:
            assert _same(getattr(_one_branch(pipe), name), getattr(_one_branch(expected), name))
        np.testing.assert_allclose(pipe["model"].coef_, expected["model"].coef_, atol=2e-2)
        # the runs are scored as the built pipeline predicts (the block left alone there too;
        # a copy: the branch writes into the rows it is given)
        np.testing.assert_array_equal(accuracy, pipe.predict(X.copy()) == y)


def test_a_scaler_that_writes_into_its_input_goes_one_by_one():
    """``copy=False``: the scaler's ``transform`` writes the scaled values into its input, which
    a later branch on the same columns reads; such a scaler is not batched (a public
    parameter), and with ``copy=True`` the same transformer is."""
    X, y = _data(d=2)
    for copy, batched in ((False, False), (True, True)):
        prep = ColumnTransformer([
            ("num", StandardScaler(bounds=(-4.0, 4.0), epsilon=0.5, copy=copy), slice(0, 2)),
            ("raw", FunctionTransformer(_shifted), slice(0, 1))])
        template = Pipeline([("prep", prep), ("model", LogisticRegression(data_norm=2.0))])
        assert (scaled_model(template) is not None) is batched


# == DPGridSearchCV's partition fits ===========================================================
def _evaluator(template, X, y, *, batched=True, n_jobs=1, seed=0):
    return PartitionEvaluator(
        template, check_bounded_scorer(None, None, template), n_partitions=len(y) // 100,
        cv=0.25, inner_epsilon="scaled", inner_params="scaled", n_jobs=n_jobs,
        pre_dispatch="2*n_jobs", error_score=0.0, seeds=SeedPlan(seed),
        padding=make_padding(X, y, np.unique(y)), batched=batched)


_GRID = [{"model__C": 0.01}, {"model__C": 1.0}, {"model__C": 1.0, "model__data_norm": 4.0},
         {"model__C": 100.0, "scaler__bounds": (-6.0, 3.0)}, {"scaler__epsilon": 0.1},
         {"model__fit_intercept": False}]


def _partition_utilities(template, X, y, candidates, monkeypatch=None, **params):
    """The evaluator's utilities per (candidate, partition), and how many units went through
    the runs' solver together."""
    solved = []
    real = _batched_runs.fit_prepared_runs
    if monkeypatch is not None:
        monkeypatch.setattr(_batched_runs, "fit_prepared_runs",
                            lambda *args: solved.append(1) or real(*args))
    utilities = _evaluator(template, X, y, **params).evaluate_partitions(X, y, candidates, {})
    return utilities, len(solved)


@pytest.mark.parametrize("shape", ["pipeline", "column transformer"])
def test_partition_fits_of_a_scaler_pipeline_are_solved_together_per_unit(shape, monkeypatch):
    """Every unit's candidates go through the runs' solver at once, and the utilities are the
    one-by-one fits' up to a prediction the optimisers' tolerance turns (one validation row,
    ``1/25``, in a few of the entries)."""
    if shape == "pipeline":
        (X, y), template, space = _data(1500), _pipeline(), _GRID
    else:
        (X, y), template = _frame(1500), _column_pipeline()
        space = [*_COLUMN_SPACE, {"model__C": 100.0, "prep__num__bounds": (
            np.array([10.0, 0.0]), np.array([80.0, 60.0]))}]
    batched, solved = _partition_utilities(template, X, y, space, monkeypatch)
    alone, _ = _partition_utilities(template, X, y, space, batched=False)
    assert solved == len(y) // 100  # one solve per unit (one holdout split per partition)
    assert batched.shape == alone.shape == (len(space), len(y) // 100)
    assert (batched == alone).mean() >= 0.95
    assert np.abs(batched - alone).max() <= 2 / 25 + 1e-12
    assert (batched > 0.5).all()


def test_scaler_pipeline_partition_utilities_do_not_depend_on_n_jobs():
    X, y = _data(1500)
    one, _ = _partition_utilities(_pipeline(), X, y, _GRID, n_jobs=1)
    two, _ = _partition_utilities(_pipeline(), X, y, _GRID, n_jobs=2)
    np.testing.assert_array_equal(one, two)


def test_a_unit_the_runs_solver_declines_is_fitted_one_by_one(monkeypatch):
    """The fallback is the evaluator's own one-by-one fit, bit for bit."""
    X, y = _data(1500)
    alone, _ = _partition_utilities(_pipeline(), X, y, _GRID, batched=False)
    monkeypatch.setattr(_batched_runs, "fit_prepared_runs", lambda *args: None)
    declined, _ = _partition_utilities(_pipeline(), X, y, _GRID)
    np.testing.assert_array_equal(declined, alone)


@pytest.mark.parametrize("record", ["nan", "huge", "label"])
def test_one_record_moves_one_partitions_scaler_pipeline_utilities(record, monkeypatch):
    """Replace one record by one the fits refuse (NaN: its unit's fits fail), one far outside
    the scaler's bounds, or its label: only its partition's utilities move. A variant that
    pools the rows of the units a task solves -- as the random search's runs share theirs --
    moves others."""
    X, y = _data(1500)
    X2, y2 = X.copy(), y.copy()
    if record == "nan":
        X2[17, 2] = np.nan
    elif record == "huge":
        X2[17] = 1e9
    else:
        y2[17] = 1 - y2[17]
    before, _ = _partition_utilities(_pipeline(), X, y, _GRID)
    after, _ = _partition_utilities(_pipeline(), X2, y2, _GRID)
    moved = np.flatnonzero((before != after).any(axis=0))
    assert len(moved) <= 1
    if record != "nan":
        return
    assert len(moved) == 1 and (after[:, moved[0]] == 0.0).all()  # error_score
    real = _batched_runs.unit_utilities

    def pooled(jobs, units, *args):
        rows = np.concatenate([train for train, _ in units])
        return real(jobs, [(rows, test) for _, test in units], *args)

    monkeypatch.setattr(_partitions, "unit_utilities", pooled)
    broken, _ = _partition_utilities(_pipeline(), X2, y2, _GRID)
    assert len(np.flatnonzero((before != broken).any(axis=0))) > 1


class _GroupsOut(BaseCrossValidator):
    """Leave one group out, and a partition of one group gives no train rows."""

    def split(self, X, y=None, groups=None):
        groups = np.asarray(groups)
        for group in np.unique(groups):
            yield np.flatnonzero(groups != group), np.flatnonzero(groups == group)

    def get_n_splits(self, X=None, y=None, groups=None):
        return 2


class _EmptyValidation(BaseCrossValidator):
    """A split with a validation fold, then (unless ``only_first``) one without."""

    def __init__(self, only_first=False):
        self.only_first = only_first

    def split(self, X, y=None, groups=None):
        rows = np.arange(len(X))
        yield rows[:80], rows[80:]
        if not self.only_first:
            yield rows, rows[:0]

    def get_n_splits(self, X=None, y=None, groups=None):
        return 1 if self.only_first else 2


def _free_pipeline():
    return Pipeline([("shift", FunctionTransformer(_shifted)),
                     ("model", LogisticRegression(epsilon=1.0, data_norm=2.0))])


#: the three batched paths of the grid's partition fits: a pipeline with a DP scaler, one of
#: data-independent steps, the plain model
_BATCHED_PATHS = {"scaler": (_pipeline, _GRID),
                  "free steps": (_free_pipeline, [{"model__C": 0.1}, {"model__C": 1.0}]),
                  "plain": (lambda: LogisticRegression(epsilon=1.0, data_norm=2.0),
                            [{"C": 0.1}, {"C": 1.0}])}


@pytest.mark.parametrize("path", list(_BATCHED_PATHS))
def test_a_unit_without_train_rows_fails_its_partition_only(path):
    """One record's group leaves its partition a single group, whose split has no train rows:
    that partition gets ``error_score``, as one by one, and the fit goes on (on every batched
    path: the plain model's and the free steps' stacked fits divided by the empty unit's
    size)."""
    make, space = _BATCHED_PATHS[path]
    X, y = _data(1500)
    evaluator = _evaluator(make(), X, y)
    evaluator.cv = _GroupsOut()
    part = evaluator.partitions(len(y))[14]
    groups = np.zeros(len(y), dtype=int)
    groups[::2] = 1
    groups[part] = 0
    groups[part[-1]] = 1
    lone = groups.copy()
    lone[part[-1]] = 0
    utilities = [evaluator.evaluate_partitions(X, y, space, {}, split_params={"groups": g})
                 for g in (groups, lone)]
    moved = np.flatnonzero((utilities[0] != utilities[1]).any(axis=0))
    assert list(moved) == [14]


@pytest.mark.parametrize("path", list(_BATCHED_PATHS))
def test_a_validation_fold_without_rows_scores_error_score(path):
    """A split without validation rows gets ``error_score``, as one by one (the batched paths
    scored the empty mean, 0): each partition's utility is the mean of its other split's and
    ``error_score``."""
    make, space = _BATCHED_PATHS[path]
    X, y = _data(1500)
    out = []
    for splitter in (_EmptyValidation(), _EmptyValidation(only_first=True)):
        evaluator = _evaluator(make(), X, y)
        evaluator.cv, evaluator.error_score = splitter, 0.3
        out.append(evaluator.evaluate_partitions(X, y, space, {}))
    np.testing.assert_allclose(out[0], (out[1] + 0.3) / 2, rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", list(_BATCHED_PATHS))
def test_the_grids_progress_does_not_count_units_that_follow_the_rows(path, capsys):
    """Under a user's splitter the units follow the rows: with every record in one group the
    splitter fails on every partition and leaves no unit (the free steps' path ran no task and
    printed nothing), one record in another group gives its partition two: the progress
    reports are the same."""
    estimator = _BATCHED_PATHS[path][0]
    X, y = _data(300)
    name = "C" if path == "plain" else "model__C"
    lines = []
    for moved in (False, True):
        groups = np.zeros(len(y), dtype=int)
        groups[5] = int(moved)
        DPGridSearchCV(estimator(), {name: [0.1, 1.0]}, epsilon=2.0, classes=[0, 1],
                       cv=LeaveOneGroupOut(), random_state=0, verbose=2,
                       n_jobs=1).fit(X, y, groups=groups)
        lines.append([line for line in capsys.readouterr().out.splitlines()
                      if "tasks done" in line])
    assert lines[0] == lines[1] and lines[0]
