"""privacy_utility_front (DPareto): Pareto arithmetic, HVPoI, the front object, the oracles."""

import io
import itertools
import warnings
from contextlib import redirect_stdout
from unittest import mock

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from scipy.stats import loguniform
from sklearn import linear_model, naive_bayes
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPRandomSearchCV, ParetoFront, privacy_utility_front
from skdptune import pareto as pareto_module
from skdptune._pareto_math import (
    hvpoi,
    hypervolume,
    hypervolume_improvement,
    pareto_mask,
    probability_of_improvement,
)
from skdptune._seeding import SeedPlan
from skdptune._space import BoxSpace
from skdptune.estimators.models._logistic import logistic_regression_epsilon
from skdptune.evaluation._fit import single_threaded_blas
from skdptune.linear_model import SSPRegressor
from skdptune.pareto import NotPrivateWarning, _first_new, _optimise, _propose

ANTI = (10.0, 0.0)


# -- brute-force references -------------------------------------------------------------------
def brute_mask(points):
    """Non-dominated points, first copy of repeats, by checking every pair."""
    out = []
    for i, p in enumerate(points):
        dominated = any(
            (q[0] <= p[0] and q[1] >= p[1] and (q[0] < p[0] or q[1] > p[1]))
            or (j < i and q[0] == p[0] and q[1] == p[1])
            for j, q in enumerate(points) if j != i)
        out.append(not dominated)
    return np.array(out)


def brute_hypervolume(points, anti):
    """Area of the union of the boxes [e, eps_r] x [u_r, u] on the grid of all coordinates."""
    eps_r, u_r = anti
    xs = sorted({eps_r, *(p[0] for p in points if p[0] < eps_r)})
    ys = sorted({u_r, *(p[1] for p in points if p[1] > u_r)})
    area = 0.0
    for (x0, x1), (y0, y1) in itertools.product(zip(xs[:-1], xs[1:], strict=True),
                                                zip(ys[:-1], ys[1:], strict=True)):
        if any(p[0] <= x0 and p[1] >= y1 for p in points):
            area += (x1 - x0) * (y1 - y0)
    return area


def random_points(rng, n, ties=False):
    points = np.column_stack([rng.uniform(0.01, 12.0, n), rng.uniform(-0.2, 1.0, n)])
    return np.round(points, 1) if ties else points


# -- non-dominated filter and hypervolume -----------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
def test_pareto_mask_matches_brute_force(ties):
    rng = np.random.default_rng(0)
    for _ in range(100):
        points = random_points(rng, rng.integers(1, 25), ties)
        np.testing.assert_array_equal(pareto_mask(points), brute_mask(points))


@pytest.mark.parametrize("ties", [False, True])
def test_hypervolume_matches_brute_force(ties):
    rng = np.random.default_rng(1)
    for _ in range(100):
        points = random_points(rng, rng.integers(1, 20), ties)
        anti = (rng.uniform(2.0, 12.0), rng.uniform(-0.3, 0.6))
        assert hypervolume(points, anti) == pytest.approx(brute_hypervolume(points, anti),
                                                          abs=1e-12)


def test_hypervolume_and_front_match_moocore():
    moocore = pytest.importorskip("moocore")
    rng = np.random.default_rng(2)
    for _ in range(50):
        points = random_points(rng, rng.integers(1, 40))
        anti = (rng.uniform(2.0, 12.0), rng.uniform(-0.3, 0.6))
        expected = moocore.hypervolume(points, ref=anti, maximise=[False, True])
        assert hypervolume(points, anti) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(
            pareto_mask(points), moocore.is_nondominated(points, maximise=[False, True]))


def test_hypervolume_of_known_front_and_edge_cases():
    # front (1, 0.5), (4, 0.8) against (10, 0): 3 * 0.5 + 6 * 0.8
    points = [[1.0, 0.5], [4.0, 0.8], [5.0, 0.6], [12.0, 0.9]]
    assert hypervolume(points, ANTI) == pytest.approx(3 * 0.5 + 6 * 0.8)
    assert hypervolume(np.empty((0, 2)), ANTI) == 0.0
    assert hypervolume([[11.0, 0.9], [2.0, -0.1]], ANTI) == 0.0  # all outside the box
    with pytest.raises(ValueError, match="shape"):
        hypervolume([1.0, 2.0, 3.0], ANTI)


def test_hypervolume_improvement_is_a_difference_of_hypervolumes():
    rng = np.random.default_rng(3)
    for _ in range(30):
        points = random_points(rng, rng.integers(0, 15))
        candidates = random_points(rng, 20)
        expected = [brute_hypervolume([*points, c], ANTI) - brute_hypervolume(points, ANTI)
                    for c in candidates]
        np.testing.assert_allclose(hypervolume_improvement(candidates, points, ANTI), expected,
                                   atol=1e-12)


# -- probability of improvement and HVPoI ---------------------------------------------------
def test_probability_of_improvement_matches_monte_carlo():
    rng = np.random.default_rng(4)
    points = random_points(rng, 12)
    mu_e, s_e = np.log([0.5, 3.0, 8.0]), np.array([0.7, 0.3, 1.0])
    mu_u, s_u = np.array([0.6, 0.8, 0.9]), np.array([0.1, 0.05, 0.2])
    poi = probability_of_improvement(mu_e, s_e, mu_u, s_u, points, ANTI)
    n = 200_000
    for i in range(3):
        samples = np.column_stack([np.exp(rng.normal(mu_e[i], s_e[i], n)),
                                   rng.normal(mu_u[i], s_u[i], n)])
        improves = hypervolume_improvement(samples, points, ANTI) > 0
        assert poi[i] == pytest.approx(improves.mean(), abs=4e-3)


def test_hvpoi_is_zero_where_no_improvement_is_possible():
    points = [[1.0, 0.6], [3.0, 0.8]]
    # predictive means dominated by the front, or outside the anti-ideal box
    mu_e = np.log([2.0, 4.0, 12.0, 0.5])
    mu_u = np.array([0.5, 0.8, 0.95, -0.1])
    values = hvpoi(mu_e, np.full(4, 0.3), mu_u, np.full(4, 0.1), points, ANTI)
    np.testing.assert_array_equal(values, 0.0)
    # with no uncertainty, a dominated outcome has no chance at all
    assert probability_of_improvement(mu_e[:2], np.zeros(2), mu_u[:2], np.zeros(2), points,
                                      ANTI).tolist() == [0.0, 0.0]


def test_hvpoi_grows_with_the_dominated_area_added():
    points = [[1.0, 0.6], [3.0, 0.8]]
    steps = np.linspace(0.0, 1.0, 6)
    mu_e = np.log(2.0 - 1.5 * steps)  # towards smaller epsilon ...
    mu_u = 0.7 + 0.25 * steps  # ... and higher utility
    sd = np.full(6, 0.05)
    values = hvpoi(mu_e, sd, mu_u, sd, points, ANTI)
    assert values[0] > 0  # (2, 0.7) improves on the front between epsilon 2 and 3
    assert np.all(np.diff(values) > 0)
    gains = hypervolume_improvement(np.column_stack([np.exp(mu_e), mu_u]), points, ANTI)
    np.testing.assert_allclose(values, gains * probability_of_improvement(
        mu_e, sd, mu_u, sd, points, ANTI))


# -- the Bayesian optimisation loop -----------------------------------------------------------
def _toy_oracles():
    """Privacy = the epsilon parameter; utility saturates faster for C near 10**0.5."""
    def privacy_of(params):
        return params["epsilon"], 0.0

    def utility_of(params, index):
        gain = np.exp(-(np.log10(params["C"]) - 0.5) ** 2 / 2)
        return 0.5 + 0.4 * (1 - np.exp(-2 * params["epsilon"] * gain)), 0.0

    return privacy_of, utility_of


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_bo_beats_random_sampling_on_a_smooth_trade_off(seed):
    box = BoxSpace({"epsilon": (0.01, 10.0, "log"), "C": (1e-3, 1e2, "log")})
    privacy_of, utility_of = _toy_oracles()

    def final_hypervolume(n_initial):
        with single_threaded_blas():
            rec = _optimise(box, privacy_of, utility_of, ANTI, SeedPlan(seed),
                            n_initial=n_initial, n_total=16, verbose=0)
        return hypervolume(np.column_stack([rec["epsilon"], rec["utility"]]), ANTI)

    assert final_hypervolume(5) > final_hypervolume(16) + 0.05


def test_propose_falls_back_to_the_probability_of_improvement():
    rng = np.random.RandomState(0)
    Z = rng.uniform(size=(6, 2))
    points = np.array([[e, 0.5 + 0.05 * e] for e in (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)])
    # every predictive mean dominated: HVPoI is 0 everywhere and gives no direction
    flat = mock.patch.object(pareto_module, "hvpoi", side_effect=lambda *a: np.zeros(len(a[0])))
    poi = mock.patch.object(pareto_module, "probability_of_improvement",
                            wraps=probability_of_improvement)
    with flat, poi as spy:
        z = _propose(Z, points, ANTI, rng)
    assert spy.call_count == 1 and len(spy.call_args.args[0]) == 2000
    assert z.shape == (2,) and np.all((z >= 0) & (z <= 1))


def test_propose_is_not_moved_by_a_utility_below_the_anti_ideal():
    """A utility under the anti-ideal adds no hypervolume: how far under must not matter to the
    surrogate either (an r2 of -1.7e6 among scores near 0.8 used to flatten its standardised
    target)."""
    rng = np.random.RandomState(1)
    Z = rng.uniform(size=(7, 2))
    utilities = 0.6 + 0.3 * Z[:, 0] - 0.2 * Z[:, 1]
    epsilons = np.exp(3 * Z[:, 0] - 1)
    at_anti = np.column_stack([epsilons, utilities])
    at_anti[2, 1] = ANTI[1]
    extreme = at_anti.copy()
    extreme[2, 1] = -1.7e6
    z_anti = _propose(Z, at_anti, ANTI, np.random.RandomState(5))
    z_extreme = _propose(Z, extreme, ANTI, np.random.RandomState(5))
    np.testing.assert_array_equal(z_extreme, z_anti)


def _cube(box, params):
    return np.array([box.to_unit(p) for p in params])


def test_bo_does_not_re_evaluate_a_point():
    """A utility that only falls as epsilon grows -- a lucky point at the smallest epsilon, as
    the near-constant predictor of a user trial was -- drives HVPoI to that corner of the box:
    L-BFGS-B stops on the box's face, and a user trial evaluated the same corner four times in
    a row. Here the previous code evaluated it five times in a row, all within 1e-3 of it in
    the unit cube."""
    box = BoxSpace({"epsilon": (0.01, 10.0, "log")})

    def privacy_of(params):
        return params["epsilon"], 0.0

    def utility_of(params, index):
        return 0.75 - 0.1 * np.log10(params["epsilon"] / 0.01) / 3, 0.0

    with single_threaded_blas():
        rec = _optimise(box, privacy_of, utility_of, ANTI, SeedPlan(0), n_initial=4,
                        n_total=9, verbose=0)
    Z = _cube(box, rec["params"])
    assert Z.min() == 0.0  # the acquisition did go to the corner
    gaps = [np.abs(a - b).max() for a, b in itertools.combinations(Z, 2)]
    assert min(gaps) > pareto_module._SAME_POINT


def test_the_next_point_is_the_best_new_one_or_a_fresh_one():
    Z = np.array([[0.0, 1.0], [0.5, 0.5]])
    ranked = [np.array([0.0, 1.0]), np.array([0.0005, 0.9995]), np.array([0.5, 0.5]),
              np.array([0.2, 0.3]), np.array([0.9, 0.1])]
    assert _first_new(ranked, Z, np.random.RandomState(0)).tolist() == [0.2, 0.3]
    fresh = _first_new(ranked[:3], Z, np.random.RandomState(0))  # every one evaluated
    np.testing.assert_array_equal(fresh, np.random.RandomState(0).uniform(size=2))


def test_propose_works_when_no_point_beats_the_anti_ideal():
    """With a chance level as the anti-ideal utility, the first points may all be at or below
    it (tiny epsilons give constant predictors): the utility surrogate's target is then
    constant and HVPoI is flat; the proposal is still a new point of the cube."""
    rng = np.random.RandomState(2)
    Z = rng.uniform(size=(5, 2))
    points = np.column_stack([np.exp(3 * Z[:, 0] - 2), [0.5, 0.47, 0.5, 0.3, 0.5]])
    z = _propose(Z, points, (10.0, 0.5), np.random.RandomState(0))
    assert z.shape == (2,) and np.all((z >= 0) & (z <= 1))
    assert np.abs(Z - z).max(axis=1).min() > pareto_module._SAME_POINT


# -- privacy_utility_front end to end --------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=3, n_informative=3, n_redundant=0,
                               random_state=0)
    return np.clip(X / 4, -1, 1), y


@pytest.fixture(scope="module")
def front(data):
    X, y = data
    with pytest.warns(NotPrivateWarning, match="NOT differentially private"):
        return privacy_utility_front(
            GaussianNB(bounds=(-1.0, 1.0)),
            {"epsilon": (0.01, 10.0, "log"), "var_smoothing": (1e-9, 1e-1, "log")}, X, y,
            cv=3, n_repeats=2, n_initial=4, n_iter=3, random_state=0)


def test_warning_is_a_user_warning(front):
    assert issubclass(NotPrivateWarning, UserWarning)


def test_front_records_every_evaluation(front):
    assert isinstance(front, ParetoFront) and len(front) == 7
    assert front.source.tolist() == ["random"] * 4 + ["bo"] * 3
    # epsilon: max over the box, GaussianNB(bounds=(-1, 1)) paying 5/3 of its epsilon under
    # replace-one; utility: the default scorer's (balanced accuracy's) chance level, 1/2
    assert front.scoring == "balanced_accuracy"
    assert front.anti_ideal == (pytest.approx(10.0 * 5 / 3), 0.5)
    np.testing.assert_allclose(front.epsilon, [p["epsilon"] * 5 / 3 for p in front.params])
    np.testing.assert_array_equal(front.delta, 0.0)
    assert np.all((front.utility >= 0) & (front.utility <= 1))
    assert np.all(front.utility_std >= 0)
    assert np.all(front.proposal_time >= 0) and np.all(front.evaluation_time > 0)
    history = [hypervolume(front._points()[: k + 1], front.anti_ideal)
               for k in range(len(front))]
    np.testing.assert_allclose(front.hypervolume_history, history)
    assert np.all(np.diff(front.hypervolume_history) >= 0)
    assert front.hypervolume == front.hypervolume_history[-1] > 0
    front_idx = front.pareto_indices
    assert np.all(np.diff(front.epsilon[front_idx]) > 0)
    assert np.all(np.diff(front.utility[front_idx]) > 0)
    assert repr(front).startswith("ParetoFront(n_points=7")
    assert "scoring='balanced_accuracy', references={'constant': 0.5, 'nonprivate': " \
        in repr(front)


def test_seeded_front_is_reproducible(data, front):
    X, y = data
    with pytest.warns(NotPrivateWarning):
        again = privacy_utility_front(
            GaussianNB(bounds=(-1.0, 1.0)),
            {"epsilon": (0.01, 10.0, "log"), "var_smoothing": (1e-9, 1e-1, "log")}, X, y,
            cv=3, n_repeats=2, n_initial=4, n_iter=0, random_state=0)
    # the random initial points and their utilities do not depend on n_iter
    np.testing.assert_array_equal(again.epsilon, front.epsilon[:4])
    np.testing.assert_array_equal(again.utility, front.utility[:4])


def test_best_under(front):
    for budget in (0.5, 2.0, 10.0):
        allowed = np.flatnonzero(front.epsilon <= budget)
        if not len(allowed):
            continue
        best = front.best_under(budget)
        assert best.epsilon <= budget
        assert best.utility == front.utility[allowed].max()
        assert front.pareto_mask[best.index]
        assert best.params == front.params[best.index]
    with pytest.raises(ValueError, match="No evaluated point has epsilon <= 0.001"):
        front.best_under(1e-3)


def test_best_under_bounds_delta_and_warns_when_deltas_differ(data):
    """Points whose delta differ are not comparable by epsilon alone: best_under ignored delta
    (one call returned delta 9.7e-5 among points from 1.8e-6 to 8.6e-4)."""
    X, y = data
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(
            GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 2.0)}, X, y,
            privacy=lambda est: (1.0, est.epsilon * 1e-5), cv=2, n_repeats=1, n_initial=5,
            n_iter=0, random_state=0)
    assert np.unique(front.delta).size == 5
    with pytest.warns(UserWarning, match="delta from"):
        front.best_under(1.0)
    cap = float(np.median(front.delta))
    allowed = np.flatnonzero(front.delta <= cap)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        best = front.best_under(1.0, delta=cap)
    assert best.delta <= cap and best.utility == front.utility[allowed].max()
    with pytest.raises(ValueError, match="delta <= 1e-09"):
        front.best_under(1.0, delta=1e-9)


class _BuildsItsModelInFit(GaussianNB):
    """A user's estimator that builds its diffprivlib model inside fit, without an accountant:
    diffprivlib then loads its default one."""

    def fit(self, X, y, sample_weight=None):
        self.model_ = GaussianNB(epsilon=self.epsilon, bounds=self.bounds).fit(X, y)
        self.classes_ = self.model_.classes_  # scikit-learn's scorers read it
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_default_accountant_charged_by_a_user_estimator_is_reported(data):
    X, y = data
    default, previous = BudgetAccountant(), BudgetAccountant.load_default(None)
    default.set_default()
    try:
        with pytest.warns(NotPrivateWarning), \
                pytest.warns(UserWarning, match="default accountant was charged 4 times"):
            privacy_utility_front(_BuildsItsModelInFit(bounds=(-1.0, 1.0)),
                                  {"epsilon": (0.1, 1.0)}, X, y, privacy=lambda est: est.epsilon,
                                  cv=2, n_repeats=1, n_initial=2, n_iter=0, random_state=0)
        assert len(default.spent_budget) == 4
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)}, X,
                                  y, cv=2, n_repeats=1, n_initial=2, n_iter=0, random_state=0)
        assert not [w for w in caught if "default accountant" in str(w.message)]
        assert len(default.spent_budget) == 4
    finally:
        previous.set_default()


def test_to_frame(front):
    pytest.importorskip("pandas")
    frame = front.to_frame()
    assert list(frame.columns) == ["epsilon", "delta", "utility", "utility_std", "pareto",
                                   "source", "hypervolume", "param_epsilon",
                                   "param_var_smoothing"]
    assert len(frame) == 7
    assert frame["pareto"].tolist() == front.pareto_mask.tolist()
    np.testing.assert_allclose(frame["param_var_smoothing"],
                               [p["var_smoothing"] for p in front.params])


def test_plot(front):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = front.plot()
    assert ax.get_xscale() == "log"
    # every point with its error bar (one sd over the repeats), in two groups
    bars = [c for c in ax.containers if c.has_yerr]
    assert len(bars) == 2
    plotted = np.concatenate([c.lines[0].get_ydata() for c in bars])
    assert sorted(plotted) == sorted(front.utility)
    segments = np.concatenate([c.lines[2][0].get_segments() for c in bars])
    np.testing.assert_allclose(sorted(s[1, 1] - s[0, 1] for s in segments),
                               sorted(2 * front.utility_std))
    # the references: a labelled horizontal line each
    labels = ax.get_legend_handles_labels()[1]
    for ref in front.references.values():
        assert f"{ref.label}: {ref.utility:.3f}" in labels
        assert any(np.allclose(line.get_ydata(), ref.utility) for line in ax.lines)
    assert "majority class: 0.500" in labels
    assert any(label.startswith("non-private GaussianNB: ") for label in labels)
    assert "balanced_accuracy" in ax.get_ylabel()
    fig, given = plt.subplots()
    assert front.plot(ax=given) is given
    plt.close("all")


def test_verbose_prints_progress(data):
    X, y = data
    out = io.StringIO()
    with pytest.warns(NotPrivateWarning), redirect_stdout(out):
        privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)}, X, y,
                              cv=2, n_repeats=1, n_initial=2, n_iter=1, random_state=0,
                              verbose=1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("[privacy_utility_front] reference majority class: utility=")
    assert lines[1].startswith("[privacy_utility_front] reference non-private GaussianNB")
    assert lines[2].startswith("[privacy_utility_front] evaluation 1/3 (random)")
    assert "evaluation 3/3 (bo)" in lines[4] and "hypervolume=" in lines[4]


def test_privacy_callable(data):
    X, y = data

    def privacy(estimator):
        return 2 * estimator.epsilon, 1e-6

    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 2.0)},
                                      X, y, privacy=privacy, cv=2, n_repeats=1, n_initial=3,
                                      n_iter=0, random_state=0)
    np.testing.assert_allclose(front.epsilon, [2 * p["epsilon"] for p in front.params])
    np.testing.assert_array_equal(front.delta, 1e-6)
    assert front.anti_ideal == (4.0, 0.5)
    with pytest.warns(NotPrivateWarning), pytest.raises(ValueError, match="finite epsilon > 0"):
        privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 2.0)}, X, y,
                              privacy=lambda est: 0.0, n_initial=1, n_iter=0)


def test_privacy_callable_does_not_admit_an_unsound_dp_model(data):
    """A user's cost callable cannot vouch for diffprivlib's KMeans (which does not meet its
    own guarantee), alone or in a pipeline: refused as without the callable (found by review).
    """
    from diffprivlib.models import KMeans

    from skdptune.exceptions import NonPrivateComponentError

    X, y = data
    kmeans = KMeans(n_clusters=2, epsilon=1.0, bounds=(-3.0, 3.0))
    piped = Pipeline([("identity", "passthrough"), ("km", clone(kmeans))])
    for estimator, space in [(kmeans, {"epsilon": (0.1, 1.0)}),
                             (piped, {"km__epsilon": (0.1, 1.0)})]:
        with pytest.warns(NotPrivateWarning), pytest.raises(NonPrivateComponentError,
                                                            match="KMeans does not meet"):
            privacy_utility_front(estimator, space, X, y, privacy=lambda est: 0.5, cv=2,
                                  n_repeats=1, n_initial=2, n_iter=0, random_state=0)


def test_pipeline_privacy_adds_its_steps_and_charges_nothing(data):
    X, y = data
    accountant = BudgetAccountant()
    default = BudgetAccountant.load_default(None)
    spent_before = list(default.spent_budget)
    pipe = Pipeline([
        ("scaler", StandardScaler(bounds=(-1.0, 1.0), accountant=accountant)),
        ("clf", LogisticRegression(data_norm=2.0, accountant=accountant)),
    ])
    space = {"scaler__epsilon": (0.1, 1.0, "log"), "clf__epsilon": (0.1, 4.0, "log")}
    with pytest.warns(NotPrivateWarning), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        front = privacy_utility_front(pipe, space, X, y, cv=2, n_repeats=1, n_initial=3,
                                      n_iter=0, random_state=0)
    # the front knows no label set: the model's cost over every class count (docs/privacy.md)
    np.testing.assert_allclose(front.epsilon, [
        p["scaler__epsilon"] + logistic_regression_epsilon(p["clf__epsilon"], 2.0, 1.0, True, None)
        for p in front.params])
    assert front.anti_ideal[0] == pytest.approx(
        1.0 + logistic_regression_epsilon(4.0, 2.0, 1.0, True, None))
    assert accountant.spent_budget == []
    assert default.spent_budget == spent_before


def test_a_search_nested_in_a_pipeline_charges_no_accountant(data):
    """A search inside a pipeline (reached through nested parameters) with accountant=None
    would charge diffprivlib's default accountant on every evaluation: it gets a throwaway one
    as a top-level search does."""
    from sklearn.preprocessing import FunctionTransformer

    X, y = data
    default = BudgetAccountant.load_default(None)
    spent_before = list(default.spent_budget)
    search = DPRandomSearchCV(GaussianNB(bounds=(-1.0, 1.0)),
                              {"var_smoothing": loguniform(1e-9, 1e-1)}, n_iter=2,
                              epsilon=1.0, classes=[0, 1])
    pipe = Pipeline([("identity", FunctionTransformer()), ("search", search)])
    with pytest.warns(NotPrivateWarning):
        privacy_utility_front(pipe, {"search__epsilon": (0.5, 2.0, "log")}, X, y, cv=2,
                              n_repeats=1, n_initial=2, n_iter=0, random_state=0,
                              privacy=lambda est: est[-1].planned_privacy(len(X)))
    assert default.spent_budget == spent_before
    assert search.accountant is None  # the user's estimator is not modified


def test_search_as_estimator_uses_its_planned_privacy(data):
    X, y = data
    accountant = BudgetAccountant()
    search = DPRandomSearchCV(GaussianNB(bounds=(-1.0, 1.0)),
                              {"var_smoothing": loguniform(1e-9, 1e-1)}, n_iter=2,
                              epsilon=1.0, classes=[0, 1], accountant=accountant)
    space = {"epsilon": (0.5, 4.0, "log"), "n_iter": (1.0, 4.0)}
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(search, space, X, y, cv=2, n_repeats=1, n_initial=2,
                                      n_iter=1, random_state=0)
    planned = [search.set_params(**p).planned_privacy(len(X)).epsilon for p in front.params]
    np.testing.assert_allclose(front.epsilon, planned)
    # budget mode: the whole fit costs exactly the search's epsilon setting
    np.testing.assert_allclose(front.epsilon, [p["epsilon"] for p in front.params], rtol=1e-9)
    assert front.anti_ideal[0] == pytest.approx(4.0)
    assert accountant.spent_budget == []


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_initial": 0}, "n_initial"),
    ({"n_iter": -1}, "n_iter"),
    ({"n_repeats": 0}, "n_repeats"),
    ({"anti_ideal": (1.0,)}, "anti_ideal must be"),
    ({"anti_ideal": (np.inf, 0.0)}, "finite"),
    ({"anti_ideal": (-1.0, 0.0)}, "must be > 0"),
    ({"scoring": "neg_log_loss"}, "No default anti-ideal utility"),
    ({"privacy": 1.0}, "privacy must be a callable"),
])
def test_invalid_arguments(data, kwargs, match):
    X, y = data
    with pytest.warns(NotPrivateWarning), pytest.raises(ValueError, match=match):
        privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)}, X, y,
                              **kwargs)


def test_unknown_scorer_with_explicit_anti_ideal_utility(data):
    X, y = data
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)},
                                      X, y, scoring="neg_log_loss", anti_ideal=(None, -50.0),
                                      cv=2, n_repeats=1, n_initial=2, n_iter=0)
    assert front.anti_ideal == (pytest.approx(5 / 3), -50.0)


# -- default scoring, anti-ideal and references ---------------------------------------------
def test_an_explicit_scoring_is_kept_with_its_chance_level_as_anti_ideal(data):
    X, y = data
    majority = np.bincount(y).max() / len(y)
    for scoring, chance in [("accuracy", majority), ("roc_auc", 0.5),
                            ("matthews_corrcoef", 0.0), ("f1", 0.0)]:
        with pytest.warns(NotPrivateWarning):
            front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)),
                                          {"epsilon": (0.1, 1.0)}, X, y, scoring=scoring,
                                          cv=KFold(2), n_repeats=1, n_initial=2, n_iter=0,
                                          random_state=0)
        assert front.scoring == scoring and front.anti_ideal[1] == chance
        # the points and the references are scored with it
        assert front.references["nonprivate"].utility == pytest.approx(np.mean(
            cross_val_score(naive_bayes.GaussianNB(), X, y, scoring=scoring, cv=KFold(2))))


def test_multiclass_chance_level_is_one_over_the_number_of_classes():
    X, y = make_classification(n_samples=240, n_features=4, n_informative=4, n_redundant=0,
                               n_classes=3, random_state=0)
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(GaussianNB(bounds=(-4.0, 4.0)),
                                      {"epsilon": (0.1, 1.0)}, np.clip(X, -4, 4), y, cv=3,
                                      n_repeats=1, n_initial=2, n_iter=0, random_state=0)
    assert front.anti_ideal[1] == pytest.approx(1 / 3)
    assert front.references["constant"].utility == pytest.approx(1 / 3)


def test_a_regressor_is_scored_by_r2_against_the_mean_and_least_squares():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.clip(X @ [1.0, -0.5] + 0.2 * rng.normal(size=300), -2, 2)
    model = SSPRegressor(bounds_X=(-1.0, 1.0), bounds_y=(-2.0, 2.0))
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(model, {"epsilon": (0.1, 10.0, "log")}, X, y, cv=3,
                                      n_repeats=2, n_initial=3, n_iter=0, random_state=0)
    assert front.scoring == "r2" and front.anti_ideal[1] == 0.0
    constant, nonprivate = front.references["constant"], front.references["nonprivate"]
    assert constant.label == "mean of the target" and -0.05 < constant.utility <= 0.0
    assert nonprivate.label == "non-private LinearRegression"
    assert type(nonprivate.estimator) is linear_model.LinearRegression
    assert nonprivate.utility > 0.8 and nonprivate.utility >= front.utility.max() - 0.02


def test_a_constant_predictor_adds_no_hypervolume():
    """A user trial: on imbalanced data (here 75/25) the default scorer, accuracy, gave a
    near-constant predictor of a tiny epsilon 0.73, and the front offered it as the best point
    under epsilon = 1. Here the model predicts one class whatever its epsilon (its features
    are zeroed): under balanced accuracy every point scores exactly the chance level, which
    is the anti-ideal and the constant reference, so the front has no hypervolume."""
    X, y = make_classification(n_samples=400, n_features=3, n_informative=3, n_redundant=0,
                               weights=[0.75], random_state=0)
    model = make_pipeline(FunctionTransformer(np.zeros_like),
                          LogisticRegression(data_norm=1.0))
    space = {"logisticregression__epsilon": (0.01, 1.0, "log")}
    kwargs = {"cv": 3, "n_repeats": 2, "n_initial": 3, "n_iter": 0, "random_state": 0}
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(model, space, X, y, **kwargs)
        old = privacy_utility_front(model, space, X, y, scoring="accuracy",
                                    anti_ideal=(None, 0.0), **kwargs)
    assert front.anti_ideal[1] == 0.5 == front.references["constant"].utility
    np.testing.assert_allclose(front.utility, 0.5)
    assert front.hypervolume == 0.0 and not np.any(front.utility > front.anti_ideal[1])
    # the old default showed the same constant predictors as a front
    assert old.hypervolume > 0 and old.best_under(1.0).utility >= 0.74


@pytest.mark.parametrize("cv", [3, KFold(3, shuffle=True)], ids=["int", "unseeded-splitter"])
def test_points_and_references_are_scored_on_the_same_splits(data, cv):
    X, y = data
    seen = []

    def spy(estimator, X, y, *, cv, **kwargs):
        seen.append([(train.tolist(), test.tolist()) for train, test in cv])
        return cross_val_score(estimator, X, y, cv=cv, **kwargs)

    with pytest.warns(NotPrivateWarning), \
            mock.patch.object(pareto_module, "cross_val_score", side_effect=spy):
        front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)},
                                      X, y, cv=cv, n_repeats=2, n_initial=2, n_iter=0,
                                      random_state=0)
    # the two references, then the two points, each over the two repeats
    assert len(seen) == 8
    assert all(seen[i] == seen[i % 2] for i in range(8))
    assert seen[0] != seen[1]  # a fresh shuffle per repeat
    per_repeat = [np.mean(cross_val_score(naive_bayes.GaussianNB(), X, y, cv=splits,
                                          scoring="balanced_accuracy"))
                  for splits in seen[:2]]
    nonprivate = front.references["nonprivate"]
    assert nonprivate.utility == pytest.approx(np.mean(per_repeat))
    assert nonprivate.utility_std == pytest.approx(np.std(per_repeat))


def test_a_given_reference_or_none(data):
    X, y = data
    accountant = BudgetAccountant()
    given = GaussianNB(bounds=(-1.0, 1.0), epsilon=50.0, accountant=accountant)
    kwargs = {"cv": 2, "n_repeats": 1, "n_initial": 2, "n_iter": 0, "random_state": 0}
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)},
                                      X, y, reference=given, **kwargs)
    assert front.references["nonprivate"].estimator is given
    assert front.references["nonprivate"].label == "reference GaussianNB"
    assert accountant.spent_budget == []  # fitted with a throwaway accountant
    with pytest.warns(NotPrivateWarning):
        front = privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)},
                                      X, y, reference=False, **kwargs)
    assert list(front.references) == ["constant"]
    assert type(front.references["constant"].estimator) is DummyClassifier
    with pytest.warns(NotPrivateWarning), pytest.raises(ValueError, match="reference must be"):
        privacy_utility_front(GaussianNB(bounds=(-1.0, 1.0)), {"epsilon": (0.1, 1.0)}, X, y,
                              reference="auto", **kwargs)


# -- DPareto against random sampling on a real DP model ---------------------------------------
# slow (16 s, 120 cross-validated fits): the default suite compares them on a smooth trade-off
# (test_bo_beats_random_sampling_on_a_smooth_trade_off)
@pytest.mark.slow
def test_bo_front_beats_random_sampling_on_logistic_regression():
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(1500, 5)), -2, 2) / 2
    y = (X @ [2.0, -1.5, 1.0, 0.5, 0.0] + 0.3 * rng.normal(size=1500) > 0).astype(int)
    model = LogisticRegression(data_norm=np.sqrt(5))
    space = {"epsilon": (0.01, 10.0, "log"), "C": (1e-2, 1e2, "log")}
    gains = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotPrivateWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        for seed in range(4):
            fronts = [privacy_utility_front(model, space, X, y, cv=3, n_repeats=2,
                                            n_initial=n_initial, n_iter=15 - n_initial,
                                            random_state=seed)
                      for n_initial in (5, 15)]
            gains.append(fronts[0].hypervolume - fronts[1].hypervolume)
    assert np.mean(gains) > 0
