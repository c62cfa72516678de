"""DPRandomSearchCV end to end: budget mode, accounting hand-off, released attributes."""

import pickle
import warnings

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from scipy.stats import loguniform, norm, uniform
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import ParameterSampler
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import (
    DomainError,
    DPRandomSearchCV,
    PrivacyLeakError,
    TooFewRowsWarning,
    estimator_privacy,
)
from skdptune import random as random_module
from skdptune.accounting import repetition_epsilon
from skdptune.selection._repetition import RandomizedRepetition


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1000, n_features=4, n_informative=3, n_redundant=0,
                               random_state=1)
    return np.clip(X / 4, -1, 1), y


SPACE = {"var_smoothing": loguniform(1e-9, 1.0)}


def nb(cost=1.0, **kw):
    """A GaussianNB that costs ``cost``: with bounds (-1, 1) it pays 5/3 of its epsilon under
    replace-one (skdptune.estimators.replace_one_factor)."""
    return GaussianNB(epsilon=cost * 3 / 5, bounds=(-1.0, 1.0), **kw)


def search(**kw):
    kw.setdefault("random_state", 0)
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("classes", [0, 1])
    return DPRandomSearchCV(kw.pop("estimator", nb()), kw.pop("space", SPACE), **kw)


@pytest.mark.parametrize("distribution, eta, factor", [
    ("logarithmic", None, 2.0), ("geometric", None, 3.0), ("negative_binomial", 0.5, 2.5)])
def test_pure_bound_without_budget_mode(data, distribution, eta, factor):
    X, y = data
    s = search(distribution=distribution, eta=eta, n_iter=3, epsilon=None, refit=True).fit(X, y)
    # delta = 0: the pure bound (2 + eta) * eps_Q, plus the refit (eps = 1)
    assert s.privacy_spent_.epsilon == pytest.approx(factor * 1.0 + 1.0)
    assert s.privacy_spent_.delta == 0.0
    assert s.epsilon_run_ == 1.0 and s.epsilon_model_ == 1.0


def test_rdp_bound_used_when_tighter(data):
    X, y = data
    s = search(n_iter=3, epsilon=None, delta=1e-6, estimator=nb(0.1), refit=False,
               distribution="logarithmic").fit(X, y)
    expected = repetition_epsilon(0.1, 0.0, "logarithmic", 3.0, None, 1e-6)
    assert s.privacy_spent_.epsilon == pytest.approx(expected)
    assert expected <= 2 * 0.1


@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize("distribution", ["logarithmic", "fixed"])
def test_budget_mode_lands_exactly_on_the_total(data, refit, distribution):
    X, y = data
    acc = BudgetAccountant()
    s = search(epsilon=1.5, refit=refit, n_iter=4, distribution=distribution,
               accountant=acc).fit(X, y)
    assert s.privacy_spent_.epsilon == pytest.approx(1.5, rel=1e-9)
    assert s.privacy_spent_.epsilon <= 1.5
    assert acc.spent_budget == [(s.privacy_spent_.epsilon, s.privacy_spent_.delta)]
    if distribution == "logarithmic":
        # eps_Q = scaled model epsilon; total = 2 eps_Q (+ eps_Q for the refit)
        assert s.epsilon_run_ == pytest.approx(1.5 / (3 if refit else 2))
    else:
        assert s.epsilon_run_ == pytest.approx(1.5 / (5 if refit else 4))


def test_poisson_needs_delta(data):
    X, y = data
    with pytest.raises(ValueError, match="delta"):
        search(distribution="poisson").fit(X, y)
    s = search(distribution="poisson", delta=1e-5, n_iter=3).fit(X, y)
    assert s.privacy_spent_.delta == pytest.approx(1e-5)


def test_released_attributes_are_the_winner_only(data, monkeypatch):
    X, y = data
    exact = []
    real = random_module.check_validation_score

    def recording(*args, **kwargs):
        score = real(*args, **kwargs)

        def call(estimator, X_val, y_val):
            utilities = score(estimator, X_val, y_val)
            exact.append(float(np.mean(utilities)))
            return utilities

        call.sensitivity_of_mean = score.sensitivity_of_mean
        return call

    monkeypatch.setattr(random_module, "check_validation_score", recording)
    s = search(n_iter=5).fit(X, y)
    assert exact, "the spy saw no validation score"
    assert set(s.cv_results_) == {"params", "param_var_smoothing", "selected", "noisy_score"}
    assert len(s.cv_results_["params"]) == 1
    assert not hasattr(s, "n_runs_")
    released = [s.best_score_, *s.cv_results_["noisy_score"]]
    for u in exact:
        assert u not in released
        assert not any(isinstance(v, float) and v == u for v in vars(s).values())


def test_default_law_is_geometric_at_three_eps_q(data):
    """The default law (chosen by the benchmark suite, docs/random_search.md section 3): the
    geometric one, (2 + 1) eps_Q at delta = 0; with refit=False each run gets total / 3."""
    X, y = data
    assert DPRandomSearchCV(nb(), SPACE).distribution == "geometric"
    s = search(epsilon=1.5, n_iter=3).fit(X, y)
    assert s.privacy_spent_.epsilon == pytest.approx(1.5, rel=1e-9)
    assert s.epsilon_run_ == pytest.approx(0.5)
    fixed = search(n_iter=3, estimator=nb(0.4), epsilon=None).fit(X, y)  # as configured: 3 eps_Q
    assert fixed.privacy_spent_.epsilon == pytest.approx(3 * 0.4)


@pytest.mark.parametrize("distribution, eta, expected", [
    ("geometric", None, 50), ("logarithmic", None, 50), ("negative_binomial", 0.5, 50),
    ("poisson", None, 10), ("fixed", None, 10)])
def test_default_n_iter_depends_on_whether_it_sets_the_cost(distribution, eta, expected):
    """n_iter=None: E[K] = 50 where the cost does not depend on it, scikit-learn's 10 where it
    does; it stays None (scikit-learn's parameter contract) and an explicit value wins."""
    s = DPRandomSearchCV(nb(), SPACE, distribution=distribution, eta=eta)
    assert s.n_iter is None and s.get_params()["n_iter"] is None
    assert s._repetition().mean == expected
    assert DPRandomSearchCV(nb(), SPACE, distribution=distribution, eta=eta,
                            n_iter=7)._repetition().mean == 7


def test_default_n_iter_leaves_the_geometric_cost_unchanged(data):
    """The geometric law's cost is 3 eps_Q whatever E[K]: the larger default costs time only
    (the same total as at n_iter=3, and about E[K] = 50 runs on average)."""
    X, y = data
    default = search(estimator=nb(0.4), n_iter=None, epsilon=None)  # as configured
    assert default.planned_privacy(len(y)).epsilon == pytest.approx(3 * 0.4)
    assert default.planned_privacy(len(y)).epsilon == pytest.approx(
        search(estimator=nb(0.4), n_iter=3, epsilon=None).planned_privacy(len(y)).epsilon)
    rng = np.random.default_rng(0)
    law = default._repetition()  # once: each call re-decides the batching (~15 ms)
    draws = [law.sample(rng) for _ in range(4000)]
    assert np.mean(draws) == pytest.approx(50, rel=0.08)


def model_cost(s):
    """What the returned model costs for the declared two classes (diffprivlib's
    ``LogisticRegression`` costs more than its ``epsilon`` at ``data_norm > 1``, and its cost
    depends on ``C``: budget mode prices each candidate at the model's share)."""
    return estimator_privacy(s.best_estimator_, n_classes=2)[0]


def lr(**kw):
    kw.setdefault("data_norm", 1.0)
    return LogisticRegression(**kw)


FREE = FunctionTransformer(np.tanh)  # a data-independent step


@pytest.mark.parametrize("estimator, space, batched", [
    (lr(), {"C": [0.1, 1.0]}, True),
    (lr(), {"C": loguniform(1e-2, 1e2), "data_norm": [0.5, 1.0]}, True),
    (lr(data_norm=None), {"data_norm": [0.5, 1.0]}, True),  # every candidate sets it
    (Pipeline([("f", FREE), ("m", lr())]), {"m__C": [0.1, 1.0]}, True),
    (nb(), SPACE, False),
    (lr(tol=1e-2), {"C": [0.1, 1.0]}, False),  # fitted one by one (BATCHED_MAX_TOL)
    (lr(), {"tol": [1e-4, 1e-2]}, False),  # one candidate is
    (lr(), [{"C": [0.1]}, {"C": [1.0], "tol": [1e-2]}], False),
    (Pipeline([("f", FREE), ("m", lr())]), {"m": [lr(), nb()]}, False),
    # a DP scaler with public bounds before the model: batched (its draws reproduced)
    (Pipeline([("s", StandardScaler(bounds=(-1, 1))), ("m", lr())]), {"m__C": [1.0]}, True),
    (Pipeline([("s", StandardScaler(bounds=(-1, 1))), ("m", lr())]),
     {"s": [StandardScaler(bounds=(-1, 1)), FREE]}, True),  # both kinds, each batched
])
def test_default_n_iter_is_1000_where_the_runs_are_batched(estimator, space, batched):
    """n_iter=None: E[K] = 1000 where every candidate's runs are fitted together (a diffprivlib
    LogisticRegression with a data_norm, alone or after data-independent steps, tol <= 1e-3),
    50 otherwise -- decided from the estimator and the space only, before any data."""
    s = DPRandomSearchCV(estimator, space)
    expected = 1000 if batched else 50
    assert s._repetition().mean == expected
    assert f"E[K]={expected}" in s.planned_privacy(500).components[0].detail
    assert DPRandomSearchCV(estimator, space, n_iter=7)._repetition().mean == 7
    # error_score="raise" fits one by one (debugging); "poisson" and "fixed" keep 10
    assert DPRandomSearchCV(estimator, space, error_score="raise")._repetition().mean == 50
    assert DPRandomSearchCV(estimator, space, distribution="poisson",
                            delta=1e-6)._repetition().mean == 10


@pytest.mark.parametrize("estimator, space, batched", [
    (lr(), {"C": [0.1, 1.0]}, True),
    (Pipeline([("f", FREE), ("m", lr())]), {"m__C": [0.1, 1.0]}, True),
    (nb(), SPACE, False),
    (lr(tol=1e-2), {"C": [0.1, 1.0]}, False),
    (Pipeline([("s", StandardScaler(bounds=(-1, 1))), ("m", lr())]), {"m__C": [1.0]}, True),
    (Pipeline([("s", StandardScaler(bounds=(-1, 1))), ("m", nb())]), {"m__var_smoothing": [1e-9]},
     False),
])
def test_default_validation_size_is_0_where_the_runs_are_batched(estimator, space, batched):
    """validation_size=None: no validation part exactly where n_iter=None means 1000 (the same
    public decision), a 0.2 split elsewhere; it stays None and an explicit value wins."""
    def parts(**kw):
        s = DPRandomSearchCV(estimator, space, **kw)
        return s, s.planned_privacy(500).components[0].parts

    s, (run, fit, score) = parts()
    assert s.validation_size is None and s.get_params()["validation_size"] is None
    assert ("all rows" in fit.name and "all rows" in score.name) == batched
    assert ("train part" in fit.name and "validation part" in score.name) == (not batched)
    assert ("sum" in run.detail) == batched
    assert (s._repetition().mean == 1000) == batched
    _, (_, fit, _) = parts(validation_size=0.2)
    assert "train part" in fit.name
    _, (_, fit, _) = parts(validation_size=0)
    assert "all rows" in fit.name
    # error_score="raise" fits one by one: a validation part, as E[K] = 50
    _, (_, fit, _) = parts(error_score="raise")
    assert "train part" in fit.name


@pytest.mark.parametrize("validation_size, n_train", [(None, 1000), (0.2, 800), (0.5, 500)])
def test_default_validation_size_fits_the_runs_on_every_row(data, monkeypatch,
                                                            validation_size, n_train):
    """A batched search with the default fits and scores every run on all rows; the same
    search with a validation part fits on the train part and scores the rest. The default's
    runs are the runs of validation_size=0, bit for bit."""
    from skdptune.evaluation import _holdout

    X, y = data
    splits = []
    real_run = _holdout.HoldoutEvaluator.run

    def run(self, X, y, candidates, split, *args, **kwargs):
        splits.append(split)
        return real_run(self, X, y, candidates, split, *args, **kwargs)

    monkeypatch.setattr(_holdout.HoldoutEvaluator, "run", run)
    kw = dict(estimator=lr(data_norm=2.0), space={"C": [0.1, 1.0, 10.0]}, n_iter=5, epsilon=1.5)
    s = search(validation_size=validation_size, **kw).fit(X, y)
    (train, validation), = splits
    assert len(train) == n_train
    if validation_size is None:
        np.testing.assert_array_equal(validation, np.arange(len(y)))
        explicit = search(validation_size=0, **kw).fit(X, y)
        assert explicit.best_params_ == s.best_params_
        assert explicit.best_score_ == s.best_score_
        np.testing.assert_array_equal(explicit.best_estimator_.coef_, s.best_estimator_.coef_)
        assert model_cost(s) == pytest.approx(0.4)  # 4/5 of eps_Q = 1.5 / 3
    else:
        assert len(validation) == len(y) - n_train
        assert not np.intersect1d(train, validation).size
        assert model_cost(s) == pytest.approx(0.5)  # eps_Q = 1.5 / 3


def test_the_batched_decision_does_not_outlive_its_fit(data, monkeypatch):
    """The decision settled for one fit or planned_privacy is asked once there, into its plan,
    and forgotten afterwards (the plan is not kept on the search), also when the fit fails: a
    new configuration is decided afresh."""
    from skdptune._base import TuningPlan

    def kept_plans(s):
        return [v for v in vars(s).values() if isinstance(v, TuningPlan)]

    X, y = data
    asked = []
    real = random_module.runs_batched
    monkeypatch.setattr(random_module, "runs_batched",
                        lambda *a: asked.append(1) or real(*a))
    s = search(estimator=lr(data_norm=2.0), space={"C": [0.1, 1.0]}, n_iter=3, epsilon=1.0)
    s.fit(X, y)
    assert len(asked) == 1 and not kept_plans(s)
    assert "all rows" in s.planned_privacy(len(y)).components[0].parts[1].name
    assert len(asked) == 2 and not kept_plans(s)
    s.set_params(estimator=nb(), param_distributions=SPACE)
    assert "train part" in s.planned_privacy(len(y)).components[0].parts[1].name
    assert len(asked) == 3
    with pytest.raises(ValueError):
        s.fit(X, y[:-1])  # fails before the plan is made
    assert len(asked) == 3 and not kept_plans(s)
    outside = y.copy()
    outside[0] = 7  # not a declared label: refused after the plan, by the domain check
    with pytest.raises(ValueError):
        s.fit(X, outside)
    assert len(asked) == 4 and not kept_plans(s)


def test_default_n_iter_follows_the_path_the_runs_take(data, monkeypatch):
    """Where the default says the runs are batched, a fit does batch them (and only there)."""
    from skdptune.evaluation import _holdout

    X, y = data
    real = _holdout._batchable
    taken = []  # per fit: whether the runs were batched
    monkeypatch.setattr(_holdout, "_batchable",
                        lambda *a, **k: taken.__setitem__(-1, real(*a, **k)) or taken[-1])
    for estimator, space in ((lr(data_norm=2.0), {"C": [0.1, 1.0]}), (nb(), SPACE)):
        taken.append(False)  # not asked where the search's public decision says one by one
        s = search(estimator=estimator, space=space, n_iter=3, epsilon=1.0).fit(X, y)
        assert taken[-1] == (DPRandomSearchCV(estimator, space)._repetition().mean
                             == random_module.DEFAULT_N_ITER_BATCHED)
        assert s.best_estimator_ is not None
    assert taken == [True, False]


def test_refit_false_keeps_the_winning_model(data):
    X, y = data
    s = search(refit=False, n_iter=3, epsilon=None).fit(X, y)  # as configured
    assert s.privacy_spent_.epsilon == pytest.approx(3.0)  # geometric: 3 eps_Q, eps_Q = 1
    assert s.predict(X).shape == (len(X),)
    assert s.best_estimator_.get_params()["var_smoothing"] == s.best_params_["var_smoothing"]


def test_reproducible_with_a_seed(data):
    X, y = data
    a = search(n_iter=4, random_state=3).fit(X, y)
    b = search(n_iter=4, random_state=3, n_jobs=2).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.theta_, b.best_estimator_.theta_)


def test_budget_mode_refuses_epsilon_in_space(data):
    X, y = data
    with pytest.raises(ValueError, match="budget mode"):
        search(epsilon=1.0, space={"epsilon": uniform(0.1, 1.0)}).fit(X, y)


def test_privacy_leak_refused(data):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(PrivacyLeakError):
        search(estimator=GaussianNB(), accountant=acc).fit(X, y)
    assert acc.spent_budget == []


def test_pipeline_clone_pickle(data):
    X, y = data
    pipe = Pipeline([("id", FunctionTransformer()),
                     ("clf", LogisticRegression(epsilon=1.0, data_norm=2.0))])
    s = search(estimator=pipe, space={"clf__C": loguniform(1e-2, 1e2)}, n_iter=3, epsilon=2.0)
    assert clone(s).get_params()["estimator__clf__C"] == 1.0
    s.fit(X, y)
    assert s.privacy_spent_.epsilon == pytest.approx(2.0)
    restored = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(restored.predict(X), s.predict(X))


def test_regression_scores_on_the_declared_target_range(data, stand_in_regressor):
    """A regressor's bounds on y are its target range: by default the runs are scored by the
    absolute error of predictions clipped into it (clip: the range's width), a target outside
    it is out of the domain, and a scoring without a range still needs score_clip."""
    from diffprivlib.models import LinearRegression

    from skdptune import DomainError
    from skdptune.evaluation._scores import AbsoluteErrorScore, check_validation_score

    X, y = data
    reg = LinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 1))
    s = search(estimator=reg, classes=None, space={"copy_X": [True, False]}, n_iter=2).fit(
        X, y.astype(float))
    assert s.best_params_["copy_X"] in (True, False)
    score = check_validation_score(None, reg, None, (0.0, 1.0))
    assert isinstance(score, AbsoluteErrorScore)
    assert (score.clip, score.target_range) == (1.0, (0.0, 1.0))
    with pytest.raises(DomainError, match="declared range"):
        search(estimator=reg, classes=None, space={"copy_X": [True, False]}, n_iter=2).fit(
            X, y.astype(float) * 2.0)
    with pytest.raises(ValueError, match="clip"):
        check_validation_score(None, reg, None)
    s = search(estimator=reg, classes=None, space={"copy_X": [True, False]},
               scoring="squared_error", score_clip=0.5, n_iter=2).fit(X, y.astype(float))
    assert s.best_params_["copy_X"] in (True, False)


@pytest.mark.parametrize(("batched", "scoring"), [(True, None), (False, None),
                                                  (True, "roc_auc")])
def test_runs_scored_on_their_fit_rows_fit_and_score_every_row(data, batched, scoring,
                                                               monkeypatch):
    """validation_size=0: every run is fitted on all rows and its noisy score is over all of
    them (a mean: Laplace sensitivity 1/n; a ranking score: its own bound at m = n), on both
    paths."""
    from skdptune.evaluation import _holdout

    X, y = data
    seen, splits = [], []
    real_run = _holdout.HoldoutEvaluator.run

    class Spy(_holdout.ScoreNoise):
        def __init__(self, score, m, epsilon_score):
            super().__init__(score, m, epsilon_score)
            self.settings = (m, epsilon_score)

        def noisy_score(self, utilities, seed):
            seen.append((len(utilities), *self.settings))
            return super().noisy_score(utilities, seed)

    def run(self, X, y, candidates, split, *args, **kwargs):
        splits.append(split)
        return real_run(self, X, y, candidates, split, *args, **kwargs)

    monkeypatch.setattr(_holdout, "ScoreNoise", Spy)
    monkeypatch.setattr(_holdout.HoldoutEvaluator, "run", run)
    if not batched:
        monkeypatch.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
    s = DPRandomSearchCV(LogisticRegression(data_norm=2.0), {"C": [0.1, 1.0, 10.0]},
                         n_iter=5, epsilon=1.5, validation_size=0, classes=[0, 1],
                         scoring=scoring, random_state=0).fit(X, y)
    (train, validation), = splits
    np.testing.assert_array_equal(train, np.arange(len(y)))  # the fits' rows: all of them
    np.testing.assert_array_equal(validation, np.arange(len(y)))
    per_example = scoring is None
    assert seen and all(m == len(y) and (rows == m or not per_example) for rows, m, _ in seen)
    assert all(eps == pytest.approx(0.1) for _, _, eps in seen)  # a fifth of eps_Q = 0.5
    assert model_cost(s) == pytest.approx(0.4)
    assert s.best_estimator_.coef_.shape == (1, X.shape[1])


def test_no_runs_returns_a_data_independent_draw_and_no_model_of_an_earlier_fit():
    """Poisson ``K = 0``: ``best_params_`` is a draw that no row decides, ``best_score_`` is
    NaN, and with ``refit=False`` there is no model -- in particular not the model of an earlier
    ``fit`` of the same search on other rows, which survived next to the new
    ``best_params_``."""
    rng = np.random.RandomState(0)
    X1, X2 = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    y1, y2 = (X1[:, 0] > 0).astype(int), (X2[:, 1] > 0).astype(int)
    search = DPRandomSearchCV(GaussianNB(bounds=(-3.0, 3.0)),
                              {"var_smoothing": [1e-9, 1e-3, 1e-1]}, n_iter=1, refit=False,
                              distribution="poisson", delta=1e-6, epsilon=1.0, classes=[0, 1],
                              accountant=BudgetAccountant())
    outcomes = {}
    for seed in range(20):
        search.set_params(random_state=seed)
        outcomes[seed] = search.fit(X1, y1).no_runs_
    with_runs = [seed for seed, none in outcomes.items() if not none]
    without = [seed for seed, none in outcomes.items() if none]
    assert with_runs and without  # P(K = 0) = exp(-1) per seed
    search.set_params(random_state=with_runs[0]).fit(X1, y1)
    assert hasattr(search, "best_estimator_")
    search.set_params(random_state=without[0]).fit(X2, y2)
    assert search.no_runs_ and np.isnan(search.best_score_)
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError):
        search.predict(X2)
    drawn = search.best_params_
    assert search.fit(X1, y1).best_params_ == drawn  # the same draw on other rows


# -- GaussianNB bounds drawn from a box (ArrayRange) ---------------------------------------------
def _bounds_box():
    from skdptune import ArrayRange

    # lower in [-2, -0.5], upper in [0.5, 3] (log) for each of the 4 features: the worst point
    # (-0.5, 3) or (-2, 0.5) has R = 3 / 3.5 or 2 / 2.5 -> 6/7; factor 4/3 + (2/3)(6/7) = 40/21
    return ArrayRange(low=[[-2.0] * 4, [0.5] * 4], high=[[-0.5] * 4, [3.0] * 4],
                      log=[[False] * 4, [True] * 4], as_tuple=True)


def test_bounds_drawn_from_a_box_cost_its_worst_point(data):
    """As configured, every run's model is charged the box's worst point: the repetition's pure
    bound 3 eps_Q (geometric) with eps_Q = the model's epsilon times 40/21."""
    X, y = data
    box = _bounds_box()
    s = search(estimator=GaussianNB(epsilon=0.3, bounds=(-1.0, 1.0)),
               space={"bounds": box}, n_iter=6, epsilon=None, refit=False).fit(X, y)
    assert s.epsilon_model_ == pytest.approx(0.3 * 40 / 21, rel=1e-15)
    assert s.privacy_spent_.epsilon == pytest.approx(3 * 0.3 * 40 / 21)
    lower, upper = s.best_params_["bounds"]
    assert ((-2.0 <= lower) & (lower <= -0.5) & (0.5 <= upper) & (upper <= 3.0)).all()
    # the runs draw afresh from the box (the winner is all a fit releases: other seeds)
    winners = {tuple(search(estimator=GaussianNB(epsilon=0.3, bounds=(-1.0, 1.0)),
                            space={"bounds": box}, n_iter=6, epsilon=None, refit=False,
                            random_state=seed)
                     .fit(X, y).best_params_["bounds"][1]) for seed in range(4)}
    assert len(winners) == 4


@pytest.mark.parametrize("refit", [False, True])
def test_bounds_drawn_from_a_box_are_priced_one_by_one_in_budget_mode(data, refit):
    """Budget mode: each draw's epsilon is set so that the draw costs the model's share at its
    own factor (the box's worst point matters only for the report's lines); the total lands on
    the budget, and the returned model costs the share."""
    X, y = data
    acc = BudgetAccountant()
    s = search(estimator=GaussianNB(bounds=(-1.0, 1.0)), space={"bounds": _bounds_box()},
               epsilon=1.2, n_iter=6, refit=refit, accountant=acc).fit(X, y)
    assert s.privacy_spent_.epsilon <= 1.2
    assert s.privacy_spent_.epsilon == pytest.approx(1.2, rel=1e-9)
    assert acc.spent_budget == [(s.privacy_spent_.epsilon, 0.0)]
    model = s.best_estimator_
    cost = estimator_privacy(model)[0]
    assert cost <= s.epsilon_model_ and cost == pytest.approx(s.epsilon_model_, rel=1e-9)
    # priced at its own bounds, not at the worst point's (whose epsilon would be smaller)
    assert model.epsilon > s.epsilon_model_ * 21 / 40


# -- the defaults: one total, the resolved runs and split, too few rows --------------------------
def test_no_epsilon_is_budget_mode_at_the_total_of_the_other_searches(data):
    """No epsilon: a total of 2 (budget mode), as DPGridSearchCV and DPGIBOSearchCV; a space
    that sets an epsilon then needs epsilon=None, and the error says so."""
    X, y = data
    s = DPRandomSearchCV(nb(), SPACE, classes=[0, 1])
    assert s.epsilon == 2.0
    assert s.planned_privacy(len(y)).epsilon == pytest.approx(2.0, rel=1e-9)
    assert s.planned_privacy(len(y)).epsilon <= 2.0
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="Pass epsilon=None") as info:
        search(space={"epsilon": uniform(0.1, 1.0)}, accountant=acc).fit(X, y)
    assert "epsilon=2 is the total budget" in str(info.value) and "default" in str(info.value)
    assert acc.spent_budget == []
    as_configured = search(space={"epsilon": [0.3, 0.6]}, epsilon=None, n_iter=3).fit(X, y)
    assert as_configured.privacy_spent_.epsilon == pytest.approx(3 * 0.6 * 5 / 3)


@pytest.fixture
def two_runs(monkeypatch):
    """``K = 2`` whatever the law's mean (fast fits; the attributes below must not follow it)."""
    monkeypatch.setattr(RandomizedRepetition, "sample", lambda self, rng: 2)


@pytest.mark.parametrize("refit", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_expected_runs_and_budget_split_are_closed_forms(data, two_runs, batched, refit):
    """Budget mode at the default total 2, geometric law, delta = 0. A validation part
    (GaussianNB): eps_Q = max(model, score) = model, so the runs get 2 / 3 (refit=False) or
    2 / 4 each; none (a batched LogisticRegression): eps_Q = model + model / 4, so 2 / 3 or
    2 / 3.8, the model four fifths of it. E[K] = 50 or 1000 (n_iter=None)."""
    X, y = data
    estimator, space = (lr(), {"C": [0.1, 1.0]}) if batched else (nb(), SPACE)
    s = search(estimator=estimator, space=space, refit=refit).fit(X, y)
    model_share = 0.8 if batched else 1.0
    run = 2.0 / (3 + refit * model_share)
    expected = {"epsilon_tuning": 3 * run, "epsilon_run": run,
                "epsilon_model": model_share * run,
                "epsilon_score": (1 - model_share) * run if batched else run,
                "epsilon_refit": refit * model_share * run}
    assert s.privacy_split_.keys() == expected.keys()
    for key, value in expected.items():
        assert s.privacy_split_[key] == pytest.approx(value, rel=1e-9, abs=1e-15), key
    assert s.n_iter_expected_ == (1000 if batched else 50)
    # the same figures as the report and the older attributes
    assert s.privacy_split_["epsilon_tuning"] == s.privacy_spent_.components[0].epsilon
    assert s.privacy_split_["epsilon_model"] == s.epsilon_model_
    assert s.privacy_split_["epsilon_run"] == s.epsilon_run_
    assert s.privacy_spent_.epsilon == pytest.approx(2.0, rel=1e-9)


@pytest.mark.parametrize("distribution, n_iter, expected", [
    ("geometric", 7, 7.0), ("logarithmic", None, 50.0), ("poisson", None, 10.0),
    ("fixed", None, 10.0), ("fixed", 4, 4.0)])
def test_expected_runs_resolve_n_iter(data, two_runs, distribution, n_iter, expected):
    """As configured (epsilon=None): the split is the estimator's cost (nb(0.7): 0.7 a run,
    the score as much, on a validation part), and n_iter_expected_ is n_iter or its default."""
    X, y = data
    s = search(estimator=nb(0.7), distribution=distribution, n_iter=n_iter, epsilon=None,
               delta=1e-6 if distribution == "poisson" else 0.0).fit(X, y)
    assert s.n_iter_expected_ == expected and isinstance(s.n_iter_expected_, float)
    split = s.privacy_split_
    assert [split["epsilon_run"], split["epsilon_model"], split["epsilon_score"]] == \
        pytest.approx([0.7, 0.7, 0.7], rel=1e-12)
    assert split["epsilon_refit"] == 0.0
    assert split["epsilon_tuning"] == s.privacy_spent_.components[0].epsilon


def test_the_resolved_attributes_are_not_the_drawn_number_of_runs(data, monkeypatch):
    """K is secret (releasing it with the winner voids the bound): the fits that draw 9 and
    13 runs release the same n_iter_expected_ and split, and no attribute holds K."""
    X, y = data
    released = []
    for k in (9, 13):
        monkeypatch.setattr(RandomizedRepetition, "sample", lambda self, rng, k=k: k)
        s = search(n_iter=5).fit(X, y)
        assert s.n_iter_expected_ == 5.0
        numbers = [v for name, v in vars(s).items() if name.endswith("_")
                   and isinstance(v, int | float) and not isinstance(v, bool)]
        numbers += list(s.privacy_split_.values())
        assert k not in numbers
        released.append((s.n_iter_expected_, s.privacy_split_, s.epsilon_model_, s.epsilon_run_))
    assert released[0] == released[1]


def test_the_resolved_attributes_are_alike_on_neighbouring_datasets(data):
    """Functions of the parameters and n only: the same on datasets that differ in one record
    (here with different seeds too, so that K and the runs differ)."""
    X, y = data
    X_n, y_n = X.copy(), y.copy()
    X_n[0], y_n[0] = -X_n[0], 1 - y_n[0]
    a = search(random_state=1).fit(X, y)
    b = search(random_state=2).fit(X_n, y_n)
    for name in ("n_iter_expected_", "privacy_split_", "epsilon_model_", "epsilon_run_"):
        assert getattr(a, name) == getattr(b, name), name


def test_the_resolved_attributes_exist_only_after_a_successful_fit(data):
    X, y = data
    s = search(n_iter=3)
    assert not hasattr(s, "n_iter_expected_") and not hasattr(s, "privacy_split_")
    with pytest.raises(DomainError):
        s.fit(X, np.where(y == 1, 2, 0))  # a label outside the declared classes
    assert not hasattr(s, "n_iter_expected_") and not hasattr(s, "privacy_split_")
    s.fit(X, y)
    assert s.n_iter_expected_ == 3.0 and "epsilon_run" in s.privacy_split_


@pytest.mark.parametrize("estimator, space, law, quiet_from", [
    # batched, no validation part, eps_score = 2 / 15: 15 (ln 1000 + 1) / n >= 1 below n = 119
    (lr(), {"C": loguniform(1e-2, 1e2)}, {}, 119),
    # a 0.2 validation part, eps_score = 2 / 3: 3 (ln 50 + 1) / ceil(n / 5) >= 1 below n = 71
    (nb(), SPACE, {}, 71),
    # four listed candidates (a random pick loses 3/4 at most), E[K] = 10 on a validation part:
    # 3 (ln 10 + 1) / ceil(n / 5) >= 3/4 below n = 66
    (nb(), {"var_smoothing": [1e-9, 1e-5, 1e-3, 1e-1]}, {"n_iter": 10}, 66),
])
def test_too_few_rows_is_the_noisy_selections_bound_against_a_random_pick(
        estimator, space, law, quiet_from, too_few_rows):
    """It fires exactly where 2 b (ln E[K] + 1) -- b = 1 / (m epsilon_score) the Laplace scale
    of a run's score -- reaches what a random pick can lose: 1, or 1 - 1/|S| for |S| listed
    candidates."""
    s = DPRandomSearchCV(estimator, space, classes=[0, 1], **law)
    for n in range(quiet_from - 12, quiet_from + 12):
        costs = s.planned_privacy(n).components[0].parts
        eps_score = costs[2].epsilon
        m = n if "all rows" in costs[2].name else int(np.ceil(0.2 * n))
        bound = 2 / (m * eps_score) * (np.log(s._repetition().mean) + 1)
        baseline = 1 - 1 / len(space["var_smoothing"]) if law else 1.0
        assert bool(too_few_rows(s, n)) == (bound >= baseline) == (n < quiet_from), n


def test_too_few_rows_at_50_rows_with_the_defaults(two_runs):
    """The defaults on 50 rows: 1000 runs whose scores carry Laplace noise of scale 0.15 --
    the search says so, once, before reading the data; 2,000 rows (docs/random_search.md's
    example) are quiet."""
    X, y = make_classification(n_samples=50, n_features=4, random_state=0)
    s = DPRandomSearchCV(LogisticRegression(data_norm=4.0), {"C": loguniform(1e-2, 1e2)},
                         classes=[0, 1], random_state=0)
    with pytest.warns(TooFewRowsWarning) as record:
        s.fit(X, y)
    assert len(record) == 1
    message = str(record[0].message)
    assert "n_samples=50 rows" in message and "E[K]=1000" in message and "0.15" in message
    assert s.privacy_spent_.epsilon == pytest.approx(2.0, rel=1e-9)
    X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TooFewRowsWarning)
        DPRandomSearchCV(LogisticRegression(data_norm=4.0),
                         {"C": loguniform(1e-2, 1e2), "data_norm": [1.0, 2.0, 4.0]},
                         n_iter=10, epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)



@pytest.mark.parametrize("space", [
    {"C": [0.01, 0.1, 1.0], "data_norm": [1.0, 2.0]},  # lists: ParameterGrid's own sampling
    {"C": loguniform(1e-2, 1e2), "data_norm": [1.0, 2.0, 4.0]},
    [{"C": uniform(0, 1)}, {"tol": [1e-4, 1e-5]}],
])
def test_independent_draws_are_each_a_fresh_samplers_draw(space):
    """One generator reseeded before each draw gives, draw by draw, what a ``ParameterSampler``
    seeded with that seed gives -- whatever the draws before it consumed (a Gaussian draw
    leaves a cached value that reseeding must clear)."""
    seeds = np.array([7, 2**32 - 1, 0, 7, 123456789])
    expected = [next(iter(ParameterSampler(space, n_iter=1, random_state=int(s))))
                for s in seeds]
    assert random_module.independent_draws(space, seeds) == expected
    normal = {"x": norm()}
    assert random_module.independent_draws(normal, [5, 5]) == [
        next(iter(ParameterSampler(normal, n_iter=1, random_state=5)))] * 2
