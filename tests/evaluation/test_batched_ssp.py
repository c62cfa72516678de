"""The batched runs of DPRandomSearchCV on SSPRegressor (evaluation/_batched_ssp.py).

A batched run must release what the one-by-one run releases: the same ``SSPRegressor``
instance with the same fitted attributes, bit for bit (the same statistics, the same noise in
the same order, the same solve); the same failures; and, through the search, the same
selection. The exact statistics are computed once per setting of the bounds.
"""

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPRandomSearchCV, linear_model
from skdptune.estimators.models import adapter_for
from skdptune.evaluation import _batched_runs, _batched_ssp, _holdout
from skdptune.evaluation._batched_runs import fit_runs
from skdptune.evaluation._fit import candidate_templates, fit_on_rows, instantiate
from skdptune.linear_model import SSPRegressor

BOUNDS = [((-1.0, 1.0), (-3.0, 3.0)), ((-0.5, 0.5), (-3.0, 3.0)), ((-2.0, 2.0), (-1.0, 1.0))]


def _data(n=400, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.clip(X @ np.arange(1.0, d + 1) + 0.3 * rng.randn(n), -3, 3)
    return X, y


def _candidates(n_runs, alpha, fit_intercept):
    """``n_runs`` candidates cycling through the settings of :data:`BOUNDS`."""
    return [{"bounds_X": BOUNDS[r % 3][0], "bounds_y": BOUNDS[r % 3][1], "alpha": alpha,
             "fit_intercept": fit_intercept} for r in range(n_runs)]


def _one_by_one(templates, seeds, X, y, train, epsilons=None):
    return [fit_on_rows(instantiate(t, seed=s, epsilon_scale=epsilons), X, y, train, {})
            for t, s in zip(templates, seeds, strict=True)]


@pytest.mark.parametrize("alpha", ["adaptive", 3.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_runs_are_the_one_by_one_fits(monkeypatch, alpha, fit_intercept):
    """Several settings of the bounds in one batch: every run is the one-by-one fit, bit for
    bit, its throwaway accountant charged as fit charges it; the statistics are computed once
    per setting."""
    X, y = _data()
    train = np.arange(0, 400, 2)
    templates = candidate_templates(SSPRegressor(epsilon=1.0),
                                    _candidates(9, alpha, fit_intercept))
    seeds = list(range(10, 19))
    made = []
    real = _batched_ssp._Statistics

    def counted(*args):
        made.append(args[2:])
        return real(*args)

    monkeypatch.setattr(_batched_ssp, "_Statistics", counted)
    deferred = fit_runs(templates, seeds, X, y, train, None, 0.5)
    assert len(made) == 3  # one per setting of (bounds_X, bounds_y, fit_intercept)
    batched = [run.build() for run in deferred]  # the released run's model is built alone
    for run, alone in zip(batched, _one_by_one(templates, seeds, X, y, train, 0.5),
                          strict=True):
        params, alone_params = run.get_params(), alone.get_params()
        assert params.pop("accountant") is not alone_params.pop("accountant")
        assert type(run) is SSPRegressor and params == alone_params
        assert run.epsilon == 0.5  # the evaluator's epsilon scale, as one by one
        np.testing.assert_array_equal(run.coef_, alone.coef_)
        assert run.intercept_ == alone.intercept_ and run.alpha_ == alone.alpha_
        assert run.n_features_in_ == alone.n_features_in_ == 3
        assert run.accountant.spent_budget == alone.accountant.spent_budget == [(0.5, 0)]
        assert not hasattr(run, "feature_names_in_")
    # the settings differ, and so do the noise draws of equal settings
    assert len({run.coef_.tobytes() for run in batched}) == 9


def test_runs_of_one_key_are_checked_once(monkeypatch):
    """Runs of one candidate key differ in their seed only: their parameters are checked, their
    throwaway accountant's budget checked and their bounds read once for the key (every run's
    copy is the same), bit for bit the same models as one by one; a built run's accountant is
    charged as fit charges it, and an invalid candidate fails as fit fails (the batched path
    gives way to the one-by-one runs, which raise)."""
    X, y = _data()
    train = np.arange(0, 400, 2)
    templates = candidate_templates(SSPRegressor(epsilon=1.0), _candidates(3, 3.0, True))
    checked, budgets = [], []
    real_parameters = SSPRegressor._check_parameters
    real_accountant = SSPRegressor._checked_accountant
    monkeypatch.setattr(SSPRegressor, "_check_parameters",
                        lambda self: checked.append(self.bounds_y) or real_parameters(self))
    monkeypatch.setattr(SSPRegressor, "_checked_accountant",
                        lambda self: budgets.append(self) or real_accountant(self))
    runs = [templates[0], templates[0], templates[1], templates[0], templates[2]]
    keys = [("a",), ("a",), ("b",), ("a",), None]
    seeds = [1, 2, 3, 4, 5]
    batched = fit_runs(runs, seeds, X, y, train, None, 0.5, keys)
    assert len(checked) == len(budgets) == 3  # "a", "b", the run without a key
    for run, alone in zip(batched, _one_by_one(runs, seeds, X, y, train, 0.5), strict=True):
        np.testing.assert_array_equal(run.coef_, alone.coef_)
        assert run.intercept_ == alone.intercept_
        assert run.build().accountant.spent_budget == alone.accountant.spent_budget
    bad = candidate_templates(SSPRegressor(epsilon=1.0), [{"alpha": -1.0}])[0]
    assert fit_runs([templates[0], bad], [1, 2], X, y, train, None, 0.5,
                    [("a",), ("c",)]) is None


def test_unseeded_runs_draw_fresh_noise():
    X, y = _data()
    templates = candidate_templates(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)),
                                    [{}] * 2)
    first, second = fit_runs(templates, [None, None], X, y, np.arange(400), None, None)
    assert not np.array_equal(first.coef_, second.coef_)


def test_runs_fail_where_the_fits_fail():
    """Rows fit refuses (non-finite) fail every run, as one by one; the evaluator then stops
    the search."""
    X, y = _data()
    X[3, 1] = np.nan
    templates = candidate_templates(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)),
                                    [{}] * 3)
    assert fit_runs(templates, [1, 2, 3], X, y, np.arange(400), None, None) == [None] * 3
    with pytest.raises(ValueError):
        _one_by_one(templates[:1], [1], X, y, np.arange(400))


def test_the_adapter_batches_models_with_public_bounds_alone():
    model = SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3))
    family = adapter_for(model)
    assert family.batched_statistics and family.batched(model)
    assert not family.batched(SSPRegressor(bounds_X=(-1, 1)))
    space = {"alpha": ["adaptive", 10.0]}
    assert _holdout.runs_batched(model, space, 0.0)
    assert not _holdout.runs_batched(model, space, "raise")
    assert not _holdout.runs_batched(SSPRegressor(bounds_y=(-3, 3)), space, 0.0)
    # a pipeline of data-independent steps: one by one (no public padding rows to decide on)
    pipe = Pipeline([("f", FunctionTransformer()), ("m", model)])
    assert not _holdout.runs_batched(pipe, {"m__alpha": ["adaptive", 10.0]}, 0.0)


def _search(**params):
    space = {"alpha": ["adaptive", 10.0, 100.0], "bounds_X": [(-1.0, 1.0), (-0.5, 0.5)],
             "fit_intercept": [True, False]}
    params = {"n_iter": 30, "epsilon": 2.0, "random_state": 3, **params}
    return DPRandomSearchCV(SSPRegressor(bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0)), space,
                            accountant=BudgetAccountant(), **params)


def _private_fits(calls, n_rows):
    """The calls of ``SSPRegressor.fit`` on ``n_rows`` rows (not the dry run's public ones)."""
    return [args for args in calls if len(args[1]) == n_rows]


def _assert_same_search(a, b):
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.best_estimator_.intercept_ == b.best_estimator_.intercept_
    assert a.best_estimator_.alpha_ == b.best_estimator_.alpha_
    assert a.privacy_spent_ == b.privacy_spent_


@pytest.mark.parametrize("frame", [False, True])
def test_the_search_batches_its_runs_and_selects_as_one_by_one(monkeypatch, frame, record_calls):
    """The runs go through the shared statistics (no run calls fit) and the search releases
    what its one-by-one runs release, bit for bit; a numeric frame's feature names reach the
    models as fit sets them."""
    X, y = _data(n=600)
    if frame:
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=["a", "b", "c"])
    with monkeypatch.context() as mp:
        batched_calls = record_calls(_batched_runs, "fit_statistics_runs", mp)
        fits = record_calls(SSPRegressor, "fit", mp)
        batched = _search(refit=False).fit(X, y)
    assert batched_calls and _private_fits(fits, 600) == []
    with monkeypatch.context() as mp:
        mp.setattr(_holdout, "_batchable", lambda *args, **kwargs: False)
        fits = record_calls(SSPRegressor, "fit", mp)
        alone = _search(refit=False).fit(X, y)
    assert len(_private_fits(fits, 600)) >= 10  # E[K] = 30 runs (K is random)
    _assert_same_search(batched, alone)
    model = batched.best_estimator_
    if frame:
        np.testing.assert_array_equal(model.feature_names_in_, ["a", "b", "c"])
        np.testing.assert_array_equal(alone.best_estimator_.feature_names_in_, ["a", "b", "c"])
    else:
        assert not hasattr(model, "feature_names_in_")


def test_an_unexpected_error_falls_back_to_the_one_by_one_runs(monkeypatch):
    X, y = _data(n=600)
    expected = _search().fit(X, y)

    def broken(*args, **kwargs):
        raise RuntimeError("statistics")

    monkeypatch.setattr(_batched_ssp, "_Statistics", broken)
    templates = candidate_templates(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)), [{}])
    assert fit_runs(templates, [1], X, y, np.arange(600), None, None) is None
    _assert_same_search(_search().fit(X, y), expected)


def test_the_defaults_of_batched_runs_apply():
    """n_iter=None: E[K] = 1000, and validation_size=None: every run fits and scores all
    rows -- the defaults of batched runs; a pipeline keeps 50 runs and a validation part."""
    space = {"alpha": ["adaptive", 10.0]}
    s = DPRandomSearchCV(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)), space)
    _, fit, score = s.planned_privacy(500).components[0].parts
    assert s._repetition().mean == 1000
    assert "all rows" in fit.name and "all rows" in score.name
    pipe = Pipeline([("f", FunctionTransformer()),
                     ("m", SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)))])
    s = DPRandomSearchCV(pipe, {"m__alpha": ["adaptive", 10.0]})
    _, fit, score = s.planned_privacy(500).components[0].parts
    assert s._repetition().mean == 50 and "train part" in fit.name


def test_the_statistics_are_computed_once_per_setting_in_a_search(monkeypatch, record_calls):
    """200 runs over 4 settings of the bounds: four computations of the statistics, no fit."""
    X, y = _data(n=2000)
    made = []
    real = linear_model._Statistics

    def counted(*args):
        made.append(1)
        return real(*args)

    monkeypatch.setattr(_batched_ssp, "_Statistics", counted)
    fits = record_calls(SSPRegressor, "fit")
    _search(n_iter=200, refit=False).fit(X, y)
    assert _private_fits(fits, 2000) == []
    groups = _holdout.batched_groups(200, 2000, 200)
    assert 4 <= len(made) <= 4 * groups  # each group of runs computes its own


def test_a_runs_generator_is_the_one_fit_makes_of_its_random_state():
    """A seeded run's generator is one ``RandomState`` reseeded in place: it draws what
    ``RandomState(seed)`` draws, whatever the runs before it drew (Gaussian draws leave a
    cached value that the reseeding must clear); ``None`` is ``check_random_state``'s answer
    (numpy's global generator, which diffprivlib's mechanisms replace by its secure one)."""
    from diffprivlib.utils import check_random_state

    generator = np.random.RandomState()
    for seed in [3, 3, 2**32 - 1, 0, np.int64(17)]:
        rng = _batched_ssp._generator(seed, generator)
        assert rng is generator
        fresh = np.random.RandomState(seed)
        np.testing.assert_array_equal(rng.standard_normal(3), fresh.standard_normal(3))
        np.testing.assert_array_equal(rng.random_sample(2), fresh.random_sample(2))
    assert _batched_ssp._generator(None, generator) is check_random_state(None)
    assert _batched_ssp._generator(generator, None) is generator


@pytest.mark.parametrize("score_class", ["AbsoluteErrorScore", "SquaredErrorScore"])
def test_runs_are_scored_as_the_score_scores_each_model(score_class):
    """The runs' mean utilities, from rows validated once, are the mean of the score's own
    utilities of each model, bit for bit -- models clipping their predictions into bounds_y
    or not, a failed run left ``None``; a score that reads more than the predictions is left
    to the caller (``None``)."""
    from skdptune.evaluation import _scores

    X, y = _data(n=500)
    templates = candidate_templates(SSPRegressor(), _candidates(9, "adaptive", True))
    for t, clip in zip(templates, [True, False, True] * 3, strict=True):
        t.set_params(clip_predictions=clip)
    models = fit_runs(templates, list(range(9)), X, y, np.arange(300), None, None)
    models[4] = None
    score = getattr(_scores, score_class)(target_range=(-2.5, 2.5))
    assert score.reads_predictions
    X_val, y_val = X[300:], y[300:]
    means = _batched_ssp.run_utilities(models, X_val, y_val, score)
    assert means[4] is None
    for model, mean, alone in zip(models, means, _one_by_one(templates, list(range(9)), X, y,
                                                             np.arange(300)), strict=True):
        if model is not None:
            assert mean == float(np.mean(score(model.build(), X_val, y_val)))
            assert mean == float(np.mean(score(alone, X_val, y_val)))
    distance = _scores.SquaredDistanceScore(clip=1.0)
    assert not distance.reads_predictions
    assert _batched_ssp.run_utilities(models, X_val, y_val, distance) is None
    with pytest.raises(TypeError):
        distance.of_predictions(np.zeros(3), np.zeros(3))


# -- the partitions of DPGridSearchCV ------------------------------------------------------------
def _partition_evaluator(X, *, batched, scoring="r2", cv=0.25, seed=0, error_score=0.0):
    from skdptune._seeding import SeedPlan
    from skdptune.evaluation._partitions import PartitionEvaluator
    from skdptune.evaluation._scores import check_bounded_scorer

    estimator = SSPRegressor(bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0))
    scorer = (scoring if callable(scoring)
              else check_bounded_scorer(scoring, None, estimator, (-3.0, 3.0)))
    return PartitionEvaluator(estimator, scorer, n_partitions=len(X) // 100, cv=cv,
                              inner_epsilon="scaled", inner_params="scaled", n_jobs=1,
                              pre_dispatch="2*n_jobs", error_score=error_score,
                              seeds=SeedPlan(seed), batched=batched)


def _model_reading_scorer():
    """A scorer that reads the model (its coefficients), not only its predictions."""
    from skdptune.evaluation._scores import BoundedScorer

    def norm(est, X, y):
        return float(np.abs(est.coef_).sum() + est.predict(X[:2]).sum())

    return BoundedScorer(norm, -5.0, 5.0, "norm")


PARTITION_CANDIDATES = [
    {"alpha": "adaptive"}, {"alpha": 10.0, "bounds_X": (-0.5, 0.5)},
    {"alpha": 1.0, "bounds_y": (-1.0, 1.0), "fit_intercept": False},
    {"alpha": -1.0},  # refused by the fit: error_score on every partition
    {"alpha": 100.0, "clip_predictions": False}]


@pytest.mark.parametrize("scoring, cv, weights", [
    ("r2", 0.25, False), ("neg_mean_absolute_error", 2, True), ("model", 0.25, False)])
def test_partition_utilities_are_the_one_by_one_fits(monkeypatch, scoring, cv, weights,
                                                    record_calls):
    """Every (candidate, partition) utility of the batched path is the one-by-one fit's, bit for
    bit -- a candidate the fit refuses and a partition whose rows the fit refuses (a NaN) get
    error_score on both paths, a scorer's sample weights are the validation rows', a scorer
    that reads the model gets the fit's model -- and no partition model is fitted one by one."""
    X, y = _data(n=1000)
    X[130] = np.nan
    scorer = _model_reading_scorer() if scoring == "model" else scoring
    params = {"sample_weight": np.linspace(0.5, 2.0, len(y))} if weights else None
    with monkeypatch.context() as mp:
        fits = record_calls(SSPRegressor, "fit", mp)
        batched = _partition_evaluator(X, batched=True, scoring=scorer, cv=cv,
                                       error_score=0.125).evaluate_partitions(
            X, y, PARTITION_CANDIDATES, {}, score_params=params)
    assert fits == []
    alone = _partition_evaluator(X, batched=False, scoring=scorer, cv=cv,
                                 error_score=0.125).evaluate_partitions(
        X, y, PARTITION_CANDIDATES, {}, score_params=params)
    assert batched.shape == (5, 10)
    np.testing.assert_array_equal(batched, alone)
    assert (batched[3] == 0.125).all()  # the refused candidate
    nan_partition = [j for j, rows in enumerate(
        _partition_evaluator(X, batched=True).partitions(len(X))) if 130 in rows]
    assert batched[:, nan_partition[0]].tolist() == [0.125] * 5
    assert batched[[0, 1, 2, 4]].std() > 0.01  # the comparison could fail


def test_partition_utilities_of_one_record_change_its_own_partition_only():
    """Seeded neighbours (one row's target moved): only the utilities of the partition that
    holds it change (the statistics a unit's candidates share are its own rows')."""
    X, y = _data(n=1000)
    neighbour = y.copy()
    neighbour[417] = -y[417]
    evaluator = _partition_evaluator(X, batched=True)
    before = evaluator.evaluate_partitions(X, y, PARTITION_CANDIDATES, {})
    after = _partition_evaluator(X, batched=True).evaluate_partitions(
        X, neighbour, PARTITION_CANDIDATES, {})
    own = [j for j, rows in enumerate(evaluator.partitions(len(X))) if 417 in rows]
    changed = np.flatnonzero((before != after).any(axis=0))
    assert changed.tolist() == own


def test_the_grid_batches_its_partition_fits_and_selects_as_one_by_one(monkeypatch, record_calls):
    from skdptune import DPGridSearchCV
    from skdptune.evaluation import _partitions

    X, y = _data(n=1500)
    space = {"alpha": ["adaptive", 10.0, 100.0], "bounds_X": [(-1.0, 1.0), (-0.5, 0.5)]}

    def search():
        return DPGridSearchCV(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)), space,
                              epsilon=2.0, random_state=3, refit=False)

    with monkeypatch.context() as mp:
        calls = record_calls(_partitions, "partition_utilities", mp)
        batched = search().fit(X, y)
    assert calls
    with monkeypatch.context() as mp:
        mp.setattr(_partitions, "supports_batched_fits", lambda *a, **k: False)
        alone = search().fit(X, y)
    assert batched.best_params_ == alone.best_params_
    assert batched.selection_trace_ == alone.selection_trace_
    for name, values in batched.cv_results_.items():
        assert [repr(v) for v in values] == [repr(v) for v in alone.cv_results_[name]], name


def test_the_runs_leave_the_prepared_candidates_unfitted():
    """The rows are checked against a throwaway model: the candidates' prepared estimators
    (which every run's model is copied from) stay unfitted."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    X, y = _data()
    templates = candidate_templates(SSPRegressor(bounds_X=(-1, 1), bounds_y=(-3, 3)), [{}])
    runs = fit_runs(templates * 3, [1, 2, 3], X, y, np.arange(400), None, None, [("a",)] * 3)
    with pytest.raises(NotFittedError):
        check_is_fitted(runs[0].estimator)
    assert not hasattr(runs[0].estimator, "n_features_in_")
    check_is_fitted(runs[0].build())
