"""DPGIBOSearchCV end to end: budget split, accounting hand-off, released attributes, privacy."""

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from sklearn.datasets import make_classification

from skdptune import DPGIBOSearchCV, estimator_privacy
from skdptune.accounting import gdp_epsilon, self_composition_cost
from skdptune.evaluation import _losses
from skdptune.selection import _noisy_gradient

SPACE = {"C": (1e-3, 1e2, "log"), "data_norm": (0.5, 8.0, "log")}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1500, n_features=5, random_state=0)
    return X, y


def gibo(**kw):
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("n_iter", 3)
    kw.setdefault("random_state", 0)
    return DPGIBOSearchCV(kw.pop("estimator", LogisticRegression(data_norm=4.0)),
                          kw.pop("space", SPACE), **kw)


@pytest.mark.parametrize("guard_share", [0.2, 0.0, 0.5])
@pytest.mark.parametrize("train_split", ["shared", "disjoint"])
@pytest.mark.parametrize("epsilon, share", [(2.0, 0.5), (1.0, 0.3)])
def test_budget_split_meets_the_total_with_both_sides(data, train_split, epsilon, share,
                                                      guard_share):
    X, y = data
    acc = BudgetAccountant()
    s = gibo(epsilon=epsilon, tuning_share=share, train_split=train_split, delta=1e-6,
             guard_share=guard_share, accountant=acc).fit(X, y)
    tuning = share * epsilon
    guard = guard_share * tuning
    n_fits = 3 * 3 + (2 if guard_share else 0)  # T * b, b = min(d + 1, 4) = 3; the guard's 2
    split = s.privacy_split_
    assert s.privacy_spent_.epsilon <= epsilon
    assert s.privacy_spent_.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert s.privacy_spent_.delta == pytest.approx(1e-6)
    assert acc.spent_budget == [(s.privacy_spent_.epsilon, s.privacy_spent_.delta)]
    assert split["n_fits"] == n_fits
    assert split["refit"] == (pytest.approx(epsilon - tuning), 0.0)
    # validation side: mu-GDP at delta plus the guard's pure epsilon equals the tuning budget
    # (closed form inverse; basic composition)
    assert split["epsilon_guard"] == pytest.approx(guard, rel=1e-12)
    assert gdp_epsilon(split["mu"], 1e-6) + guard == pytest.approx(tuning, rel=1e-9)
    assert gdp_epsilon(split["mu"], 1e-6) + guard <= tuning * (1 + 1e-12)
    assert split["validation"] == (pytest.approx(tuning, rel=1e-9), 1e-6)
    assert split["train"][0] == pytest.approx(tuning, rel=1e-9)
    if train_split == "disjoint":
        assert split["epsilon_fit"] == pytest.approx(tuning)
    else:  # M fits on the same rows, optimal composition
        assert self_composition_cost(split["epsilon_fit"], 0.0, n_fits, 1e-6)[0] == \
            pytest.approx(tuning, rel=1e-9)
        assert split["epsilon_fit"] > tuning / n_fits  # better than the sum
    assert s.guard_choice_ in (("start", "last") if guard_share else (None,))
    # the returned model costs exactly the refit budget, for the declared label set
    cost = estimator_privacy(s.best_estimator_, n_classes=2)[0]
    assert cost <= epsilon - tuning
    assert cost == pytest.approx(epsilon - tuning, rel=1e-9)


def test_fits_are_priced_for_the_declared_label_set(data):
    """diffprivlib's ``LogisticRegression`` costs more than its ``epsilon`` for rows of norm
    above 1, and its cost depends on the number of classes (docs/privacy.md): the fits and the
    returned model solve for the epsilon that costs their budget *with the declared classes*,
    not over every count (which would cost no more, with more noise)."""
    X, y = data
    space = {"C": (0.5, 2.0, "log"), "data_norm": (4.0, 8.0, "log")}
    s = gibo(space=space, epsilon=2.0, refit=True).fit(X, y)
    model, budget = s.best_estimator_, 2.0 - 2.0 * s.tuning_share
    assert estimator_privacy(model, n_classes=2)[0] == pytest.approx(budget, rel=1e-9)
    unknown = estimator_privacy(model)[0]
    assert unknown > budget * 1.05  # the count mattered here
    # the tuning fits: each at the epsilon_fit of its budget, for two classes
    fits = s.privacy_split_["epsilon_fit"]
    seen = []
    real = _losses.fit_and_example_utilities

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        if out is not None:
            seen.append(estimator_privacy(out[1], n_classes=2)[0])
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_losses, "fit_and_example_utilities", spy)
        gibo(space=space, epsilon=2.0, n_jobs=1).fit(X, y)
    assert seen and all(cost == pytest.approx(fits, rel=1e-9) for cost in seen)


def test_planned_privacy_matches_and_refit_false_returns_the_final_model(data):
    X, y = data
    s = gibo(refit=False, epsilon=1.5)
    planned = s.planned_privacy(len(X))
    s.fit(X, y)
    assert planned.epsilon == s.privacy_spent_.epsilon == pytest.approx(1.5)
    assert s.privacy_split_["n_fits"] == 3 * 3 + 2  # the guard's two fits
    assert s.best_estimator_.predict(X).shape == (len(X),)
    assert list(s.classes_) == [0, 1]
    assert s.guard_choice_ == "last"
    assert s.best_params_ == s.trajectory_[-1]["params"]
    # the returned model is the chosen point's guard fit, not a refit
    assert s.best_estimator_.C == pytest.approx(s.best_params_["C"])
    unguarded = gibo(refit=False, epsilon=1.5, guard_share=0.0).fit(X, y)
    assert unguarded.privacy_split_["n_fits"] == 3 * 3 + 1
    assert unguarded.best_params_ == unguarded.trajectory_[-1]["params"]
    assert unguarded.guard_choice_ is None


def test_released_attributes_and_no_exact_loss_survives(data, monkeypatch):
    X, y = data
    from skdptune.evaluation import _losses

    seen = []
    real = _losses.LossEvaluator.losses

    def spy(self, *args, **kwargs):
        Y, models = real(self, *args, **kwargs)
        seen.append(Y.copy())
        return Y, models

    monkeypatch.setattr(_losses.LossEvaluator, "losses", spy)
    s = gibo(verbose=1)
    out = io.StringIO()
    with redirect_stdout(out):
        s.fit(X, y)
    assert seen
    exact = {float(v) for Y in seen for v in np.ravel(Y)} | {
        float(v) for Y in seen for v in np.ravel(Y.mean(axis=0))}
    stored = []
    for record in s.trajectory_:
        stored += list(np.ravel(record["gradient"])) + list(np.ravel(record["point"]))
    stored += [v for k, v in vars(s).items() if k.endswith("_") and isinstance(v, float)]
    exact -= {0.0, 1.0}  # the ends of the loss range and of the cube are not informative
    assert not exact & {float(v) for v in stored}, exact & {float(v) for v in stored}
    assert set(s.cv_results_) == {"params", "param_C", "param_data_norm", "selected"}
    assert len(s.trajectory_) == 3
    lines = out.getvalue().splitlines()
    assert sum("iteration" in line for line in lines) == 3


def test_acquisition_never_reads_data(data, monkeypatch):
    """Same released gradients -> same query points, whatever the dataset."""
    X, y = data
    monkeypatch.setattr(_noisy_gradient.NoisyGradient, "step",
                        lambda self, G, random_state=None: np.full(G.shape[1], 0.05))
    other_X = np.random.RandomState(9).standard_normal(X.shape)
    other_y = 1 - y
    a = gibo().fit(X, y)
    b = gibo().fit(other_X, other_y)
    for ra, rb in zip(a.trajectory_, b.trajectory_, strict=True):
        assert ra["query_params"] == rb["query_params"]
        np.testing.assert_array_equal(ra["point"], rb["point"])


def test_reproducible_with_a_seed_and_fresh_without(data):
    X, y = data
    a, b = gibo().fit(X, y), gibo().fit(X, y)
    assert a.best_params_ == b.best_params_
    assert a.guard_choice_ == b.guard_choice_
    c, d = gibo(random_state=None).fit(X, y), gibo(random_state=None).fit(X, y)
    # the last points (the guard may return the start point, the same for both)
    assert c.trajectory_[-1]["params"] != d.trajectory_[-1]["params"]


def test_neighbours_release_the_same_kind_of_output():
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 3))
    y_d = np.zeros(300, dtype=int)
    y_d[0] = 1
    releases = []
    for y in (y_d, np.zeros(300, dtype=int)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = gibo(estimator=LogisticRegression(data_norm=2.0), refit=False).fit(X, y)
        releases.append((len(caught), tuple(s.best_estimator_.classes_),
                         s.best_estimator_.coef_.shape, sorted(vars(s))))
    assert releases[0] == releases[1]
    assert releases[0][0] == 0


@pytest.mark.parametrize("space, match", [
    ({"C": [0.1, 1.0]}, "grid or random search"),
    ({"C": (1, 10)}, "integer"),
    ({"epsilon": (0.1, 1.0)}, "privacy parameters"),
    ({"C": (1e-3, 1e2, "sqrt")}, "log"),
])
def test_spaces_a_continuous_search_cannot_take(data, space, match):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        gibo(space=space, accountant=acc).fit(X, y)
    assert acc.spent_budget == []



# -- array-valued parameters and budget splits ---------------------------------------------------
def test_array_range_and_epsilon_split_round_trip():
    from skdptune._space import ArrayRange, BoxSpace, EpsilonSplit

    space = BoxSpace({
        "C": (1e-2, 1e2, "log"),
        "nb__bounds": ArrayRange([[-9.0, -8.0], [0.1, 0.2]], [[-0.1, -0.2], [9.0, 8.0]],
                                 as_tuple=True),
        "split": EpsilonSplit(["scaler__epsilon", "clf__epsilon"]),
    })
    assert space.n_dims == 1 + 4 + 2
    assert space.names == ("C", "nb__bounds", "scaler__epsilon", "clf__epsilon")
    z = np.random.RandomState(0).uniform(size=space.n_dims)
    params = space.from_unit(z)
    lower, upper = params["nb__bounds"]
    assert np.all(lower < upper)
    assert params["scaler__epsilon"] + params["clf__epsilon"] == pytest.approx(1.0)
    again = space.from_unit(space.to_unit(params))
    np.testing.assert_allclose(again["nb__bounds"], params["nb__bounds"])
    assert again["clf__epsilon"] == pytest.approx(params["clf__epsilon"])


def test_gibo_tunes_per_feature_bounds_and_a_budget_split(data):
    from diffprivlib.models import StandardScaler
    from sklearn.pipeline import Pipeline

    from skdptune._space import ArrayRange, EpsilonSplit

    X, y = data
    d = X.shape[1]
    pipe = Pipeline([("scaler", StandardScaler(epsilon=0.5, bounds=(-5.0, 5.0))),
                     ("nb", GaussianNB(epsilon=0.5, bounds=(-3.0, 3.0)))])
    space = {"nb__bounds": ArrayRange([[-6.0] * d, [0.1] * d], [[-0.1] * d, [6.0] * d],
                                      as_tuple=True),
             "split": EpsilonSplit(["scaler__epsilon", "nb__epsilon"])}
    s = gibo(estimator=pipe, space=space, epsilon=3.0, n_iter=2).fit(X, y)
    assert s.privacy_spent_.epsilon == pytest.approx(3.0)
    steps = s.best_estimator_.named_steps
    # the split shares the cost: GaussianNB pays (4/3 + 2R/3) of its epsilon under replace-one
    assert estimator_privacy(s.best_estimator_)[0] == pytest.approx(1.5)
    assert steps["scaler"].epsilon + steps["nb"].epsilon < 1.5
    assert len(steps["nb"].bounds[0]) == d
    assert s.privacy_split_["n_fits"] == 2 * 4 + 2  # and the guard's two
    # the report's per-step lines give each step's whole range under the split (the point
    # is chosen privately, the report is planned before the fit), and hold the tuned model's
    model_eps = 3.0 - 3.0 * s.tuning_share
    lines = {p.name.partition(" ")[0]: p for p in s.privacy_spent_.components[-1].parts}
    for step in ("scaler", "nb"):
        line = lines[step]
        # each candidate's epsilons are set so that it costs the model's budget: a step's
        # line is its largest cost over the points checked, and covers the tuned model's
        cost = estimator_privacy(steps[step])[0]
        assert cost <= line.epsilon * (1 + 1e-12) and line.epsilon < model_eps
        assert "epsilon from " in line.detail and "maximum of their sum" in line.detail
        assert f"the model costs {model_eps:.6g}" in line.detail
    assert "under replace-one" in lines["nb"].detail
    assert s.privacy_spent_.components[-1].epsilon == pytest.approx(model_eps, rel=1e-12)


def test_a_box_that_lets_lower_bounds_reach_upper_ones_is_refused_before_the_data(data):
    """A GaussianNB at a point with lower == upper has no price (its replace-one factor grows
    without limit as they meet): a box whose ranges touch let the search's clipped steps land
    there, and the fit stopped with PrivateFitError after the budget was charged. Refused at
    the configuration now, nothing charged; a box kept apart is priced at its worst point in
    the report, every visited point at its own."""
    from skdptune._space import ArrayRange

    X, y = data
    d = X.shape[1]
    acc = BudgetAccountant()
    touching = {"bounds": ArrayRange([[-6.0] * d, [0.0] * d], [[0.0] * d, [6.0] * d],
                                     as_tuple=True)}
    with pytest.raises(ValueError, match="lower bound can reach its upper bound"):
        gibo(estimator=GaussianNB(epsilon=1.0, bounds=(-3.0, 3.0)), space=touching,
             accountant=acc).fit(X, y)
    assert acc.spent_budget == []
    apart = {"bounds": ArrayRange([[-6.0] * d, [0.5] * d], [[-0.5] * d, [6.0] * d],
                                  as_tuple=True)}
    s = gibo(estimator=GaussianNB(epsilon=1.0, bounds=(-3.0, 3.0)), space=apart,
             accountant=acc, n_iter=1).fit(X, y)
    line = s.privacy_spent_.components[-1].parts[0]
    # the worst point (-0.5, 6) or (-6, 0.5): R = 6 / 6.5; factor 4/3 + (2/3)(12/13)
    assert f"at most {4 / 3 + 2 / 3 * 12 / 13:.6g} (bounds drawn from a box)" in line.detail
    assert estimator_privacy(s.best_estimator_)[0] <= line.epsilon


def test_report_lines_cover_the_split_and_the_box_together():
    """An EpsilonSplit and a GaussianNB box: a step's share is largest at a corner of the
    split and an extreme of the model's factor at once. Checked over the 64 corners of the
    cube (16 of them exceeded a line when the box was priced at the split's centre only)."""
    from diffprivlib.models import StandardScaler
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    from skdptune._space import ArrayRange, BoxSpace, EpsilonSplit
    from skdptune.estimators import set_total_epsilon

    pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0.0, 20.0)),
                         GaussianNB(epsilon=0.5, bounds=(-3.0, 3.0)))
    space = {"gaussiannb__bounds": ArrayRange([[5.0] * 2, [10.0] * 2], [[9.0] * 2, [12.0] * 2],
                                              as_tuple=True),
             "split": EpsilonSplit(["standardscaler__epsilon", "gaussiannb__epsilon"])}
    model_line = gibo(estimator=pipe, space=space, epsilon=2.0).planned_privacy(1000) \
        .components[-1]
    scaler_line, nb_line = model_line.parts
    box = BoxSpace(space)
    shares = []
    for z in box.corners():
        priced = set_total_epsilon(clone(pipe).set_params(**box.from_unit(z)),
                                   model_line.epsilon, 2)
        shares.append((priced[0].epsilon, estimator_privacy(priced[1])[0]))
    shares = np.array(shares)
    assert scaler_line.epsilon >= shares[:, 0].max()
    assert nb_line.epsilon >= shares[:, 1].max()
    assert nb_line.epsilon == pytest.approx(shares[:, 1].max())  # attained at a corner


def test_start_point_is_the_estimators_configuration_when_in_the_box():
    from skdptune._space import ArrayRange, BoxSpace
    from skdptune.gibo import _start

    box = BoxSpace({"C": (1e-2, 1e2, "log"),
                    "bounds": ArrayRange([[-10.0] * 3, [0.1] * 3], [[0.0] * 3, [10.0] * 3],
                                         as_tuple=True)})
    estimator = GaussianNB(bounds=(-10.0, 10.0))
    estimator.C = 1.0  # a stand-in for a second parameter of the same estimator
    estimator.get_params = lambda deep=True: {"C": 1.0, "bounds": (-10.0, 10.0)}
    np.testing.assert_allclose(_start(box, estimator), [0.5] + [0.0] * 3 + [1.0] * 3)
    outside = {"C": 1e3, "bounds": (-10.0, 10.0)}
    estimator.get_params = lambda deep=True: outside
    np.testing.assert_allclose(_start(box, estimator), np.full(7, 0.5))


# -- the step rule: post-processing of released gradients -----------------------------------------
def test_signal_to_noise_step_closed_form():
    from skdptune.selection._gradient_step import SignalToNoiseStep

    theta = np.full(4, 0.5)
    g = np.array([0.3, -0.4, 0.0, 0.0])  # ||g||^2 = 0.25
    step = SignalToNoiseStep(0.2, noise_scale=0.1)
    shrink = 1.0 - 4 * 0.1**2 / 0.25  # 1 - d sigma^2 / ||g||^2, sigma public
    first = step(theta, g)  # AdaGrad's first step: lr * sign(g) per moving coordinate
    np.testing.assert_allclose(first, theta - 0.2 * shrink * np.sign(g))
    g2 = np.array([0.3, 0.4, 0.0, 0.0])
    second = step(first, g2)
    expected = first - 0.2 * shrink * g2 / np.sqrt(g**2 + g2**2 + 1e-300)
    np.testing.assert_allclose(second, np.where(g2 == 0, first, expected))
    # a released gradient no larger than the noise it carries does not move the point
    weak = np.array([0.1, 0.1, 0.0, 0.0])  # ||g||^2 = 0.02 <= d sigma^2 = 0.04
    np.testing.assert_array_equal(SignalToNoiseStep(0.2, 0.1)(theta, weak), theta)
    # without noise it is AdaGrad, projected into the cube
    np.testing.assert_allclose(SignalToNoiseStep(0.2, 0.0)(theta, g), theta - 0.2 * np.sign(g))
    np.testing.assert_array_equal(SignalToNoiseStep(5.0, 0.0)(theta, g), [0.0, 1.0, 0.5, 0.5])


def test_momentum_shortens_steps_when_released_gradients_disagree():
    from skdptune.selection._gradient_step import SignalToNoiseStep

    theta = np.full(2, 0.5)
    agree, disagree = SignalToNoiseStep(0.1, 0.0, 0.5), SignalToNoiseStep(0.1, 0.0, 0.5)
    g = np.array([1.0, 0.0])
    agree(theta, g), disagree(theta, g)
    moved_agree = np.linalg.norm(agree(theta, g) - theta)
    moved_disagree = np.linalg.norm(disagree(theta, -g) - theta)
    assert moved_agree == pytest.approx(0.1 / np.sqrt(2))
    assert moved_disagree < 0.5 * moved_agree


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_step_rule_reads_only_released_quantities(data, momentum):
    """The released trajectory is replayed from the released gradients and public numbers."""
    from skdptune.gibo import _start
    from skdptune.selection._gradient_step import SignalToNoiseStep

    X, y = data
    s = gibo(momentum=momentum, n_iter=4, learning_rate=0.2).fit(X, y)
    box = s._box()
    m = int(np.ceil(0.2 * len(X)))  # validation rows: a function of the public n
    sigma = _noisy_gradient.NoisyGradient(s.privacy_split_["mu"], 4, 0.5).noise_scale(m)
    replay = SignalToNoiseStep(0.2, sigma, momentum)
    theta = _start(box, s.estimator)
    for record in s.trajectory_:
        theta = replay(theta, record["gradient"])
        np.testing.assert_array_equal(theta, record["point"])
    # the guard returns the start or this last point, and says which
    returned = {"start": _start(box, s.estimator), "last": theta}[s.guard_choice_]
    assert s.best_params_ == box.from_unit(returned)
    # the search's step rule is built from the public sigma and its own parameters only
    assert s._step_rule(sigma).noise_scale == sigma


def test_disjoint_chunks_without_rows_are_refused_before_anything_is_charged(data):
    """More fits than train rows would leave a chunk empty, and the fit on it fail after the
    budget was spent; the sizes are public, so this is refused before the data is read."""
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="no rows"):
        gibo(n_iter=20, batch_size=4, train_split="disjoint", accountant=acc).fit(X[:50], y[:50])
    assert acc.spent_budget == []


@pytest.mark.parametrize("refit", [True, False])
def test_one_joblib_pool_per_search_and_results_independent_of_n_jobs(data, monkeypatch, refit):
    """The fits of every iteration (and, with ``refit=False``, of the final point) run in one
    ``Parallel`` context, closed when the search ends; the results do not depend on ``n_jobs``
    (seeds follow the fit, not the worker)."""
    X, y = data
    from skdptune.evaluation import _losses

    pools, closed = [], []

    class Counting(_losses.Parallel):
        def __enter__(self):
            pools.append(self)
            return super().__enter__()

        def __exit__(self, *exc):
            closed.append(self)
            return super().__exit__(*exc)

    monkeypatch.setattr(_losses, "Parallel", Counting)
    one = gibo(refit=refit, n_jobs=1).fit(X, y)
    two = gibo(refit=refit, n_jobs=2).fit(X, y)
    assert closed == pools and [p.n_jobs for p in pools] == [1, 2]
    assert one.best_params_ == two.best_params_
    for a, b in zip(one.trajectory_, two.trajectory_, strict=True):
        np.testing.assert_array_equal(a["gradient"], b["gradient"])
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)


def _joblib_files():
    """Files in this process's joblib memory-map folders (where the private data is mapped)."""
    import glob
    import os
    import tempfile

    folders = [f"{root}/joblib_memmapping_folder_{os.getpid()}_*"
               for root in ("/dev/shm", tempfile.gettempdir())]
    return [f for pattern in folders for f in glob.glob(f"{pattern}/**", recursive=True)
            if os.path.isfile(f)]


@pytest.mark.parametrize("fail", [False, True])
def test_the_pool_maps_large_data_once_and_deletes_it(monkeypatch, fail):
    """X over joblib's 1 MB threshold is memory-mapped in the pool, the results equal
    ``n_jobs=1``'s, and no file with the data is left afterwards, also when a fit fails."""
    from skdptune.evaluation import _losses
    from skdptune.exceptions import PrivateFitError

    X, y = make_classification(n_samples=20000, n_features=8, random_state=1)
    X = X / 8
    assert X.nbytes > 2**20
    during = []
    real = _losses.LossEvaluator.losses

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        during.append(len(_joblib_files()))
        if fail:
            raise PrivateFitError("a fit failed")
        return out

    monkeypatch.setattr(_losses.LossEvaluator, "losses", spy)
    before = set(_joblib_files())
    if fail:
        with pytest.raises(PrivateFitError):
            gibo(n_iter=2, n_jobs=2).fit(X, y)
    else:
        one = gibo(n_iter=2, n_jobs=1).fit(X, y)
        two = gibo(n_iter=2, n_jobs=2).fit(X, y)
        assert one.best_params_ == two.best_params_
        np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)
    assert max(during) >= 1  # the data was mapped while the pool was open
    assert set(_joblib_files()) <= before


def test_a_pool_entered_again_is_reused():
    from skdptune.evaluation._losses import LossEvaluator

    evaluator = LossEvaluator(None, None, epsilon_fit=1.0, error_score=0.0, n_jobs=2)
    with evaluator.pool():
        outer = evaluator._parallel
        with evaluator.pool():
            assert evaluator._parallel is outer
        assert evaluator._parallel is outer
    assert evaluator._parallel is None


@pytest.mark.parametrize("n_iter, dims", [(10, 1), (10, 2), (4, 2)])
def test_too_few_rows_is_the_gradient_noise_against_the_clip(n_iter, dims, too_few_rows):
    """It fires exactly where the noise of one released gradient, sigma sqrt(d) with sigma =
    2 clip sqrt(n_iter) / (m mu), reaches the clip, the largest norm a clipped mean can have:
    2 sqrt(n_iter d) / (m mu) >= 1 (m validation rows, mu from the budget)."""
    space = dict(list(SPACE.items())[:dims])
    s = DPGIBOSearchCV(LogisticRegression(data_norm=2.0), space, n_iter=n_iter,
                       classes=[0, 1])
    # mu depends on the budget only (epsilon, delta, tuning_share): solved as the search does
    mu = s._plan_costs(s._search_space(), s._box()).mu
    fired = []
    for n in range(20, 1000, 7):
        m = int(np.ceil(0.2 * n))
        expected = 2 * np.sqrt(n_iter * dims) / (m * mu) >= 1
        assert bool(too_few_rows(s, n)) == expected, n
        fired.append(expected)
    assert fired[0] and not fired[-1]  # the sweep crosses the threshold


def test_too_few_rows_is_quiet_on_the_documented_example():
    """The docstring's example (2,000 rows, 3 iterations, one dimension) does not warn."""
    X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        DPGIBOSearchCV(LogisticRegression(data_norm=4.0), {"C": (1e-2, 1e2, "log")},
                       epsilon=2.0, n_iter=3, classes=[0, 1], random_state=0,
                       accountant=BudgetAccountant()).fit(X, y)


# -- the guard ---------------------------------------------------------------------------------
#: a space with a degenerate corner: the smallest C and the largest data_norm, where the
#: objective perturbation's noise swamps a fit (0.47-0.67 accuracy over 30 fits at epsilon 0.6
#: on guard_data), while the estimator's own C = 1, data_norm = 4 fits well (0.74-0.84)
GUARD_SPACE = {"C": (1e-3, 1e2, "log"), "data_norm": (0.5, 100.0, "log")}
DEGENERATE = np.array([0.0, 1.0])
GOOD = np.array([0.6, np.log(8.0) / np.log(200.0)])  # C = 1, data_norm = 4


@pytest.fixture(scope="module")
def guard_data():
    return make_classification(n_samples=5000, n_features=20, n_informative=3, class_sep=2.0,
                               random_state=0)


def _walk_to(monkeypatch, corner):
    """Force every step of the search to ``corner`` (unit cube): the last point is then what
    the test wants whatever the gradients say."""
    monkeypatch.setattr(DPGIBOSearchCV, "_step_rule",
                        lambda self, noise_scale: lambda theta, gradient: corner.copy())


def test_guard_keeps_the_start_when_the_last_point_is_degenerate(guard_data, monkeypatch):
    """The last point is forced to a degenerate corner; the start (the estimator's own C and
    data_norm) is good. At epsilon = 10 (each of the 8 fits about 0.6, the guard 0.2 * 5 = 1)
    with the default guard share the start wins on every seed: the utility gap g of the two
    fits is above 0.07 on m = 1000 rows, so permute-and-flip errs with probability
    exp(-epsilon_guard g m / 2) / 2 < 1e-15 per seed. Without the guard the degenerate point
    is returned every time (the test can fail)."""
    X, y = guard_data
    _walk_to(monkeypatch, DEGENERATE)
    for seed in range(6):
        guarded = gibo(space=GUARD_SPACE, n_iter=2, epsilon=10.0, random_state=seed).fit(X, y)
        np.testing.assert_allclose(guarded.trajectory_[-1]["point"], DEGENERATE)
        assert guarded.guard_choice_ == "start", seed
        assert guarded.best_params_ == pytest.approx({"C": 1.0, "data_norm": 4.0})
        bare = gibo(space=GUARD_SPACE, n_iter=2, epsilon=10.0, random_state=seed,
                    guard_share=0.0).fit(X, y)
        assert bare.best_params_ == bare.trajectory_[-1]["params"] != guarded.best_params_


def test_guard_moves_to_a_good_last_point_from_a_degenerate_start(guard_data, monkeypatch):
    """The mirror image: the estimator's own configuration is the degenerate corner, the
    steps go to a good point; the guard returns the last point."""
    X, y = guard_data
    _walk_to(monkeypatch, GOOD)
    for seed in range(4):
        s = gibo(space=GUARD_SPACE, n_iter=2, epsilon=10.0, random_state=seed,
                 estimator=LogisticRegression(C=1e-3, data_norm=100.0)).fit(X, y)
        assert s.guard_choice_ == "last", seed
        assert s.best_params_ == s.trajectory_[-1]["params"]


def test_guard_fails_as_the_iterations_do(data, monkeypatch):
    """A guard fit that fails stops the search with the fixed PrivateFitError after the last
    iteration, with the same live progress as a failure in an iteration, and releases no
    choice."""
    from skdptune.exceptions import PrivateFitError

    X, y = data
    real = _losses.LossEvaluator.losses
    calls = []

    def failing_guard(self, X, y, settings, *args, **kwargs):
        calls.append(len(settings))
        if len(calls) == 4:  # after the 3 iterations: the guard's (start, last)
            raise PrivateFitError("a fit failed")
        return real(self, X, y, settings, *args, **kwargs)

    monkeypatch.setattr(_losses.LossEvaluator, "losses", failing_guard)
    s = gibo(verbose=2)
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(PrivateFitError) as caught:
        s.fit(X, y)
    assert calls == [3, 3, 3, 2]
    assert "a fit failed" not in str(caught.value)  # the fixed message, not the cause
    assert "iterations done: 3/3" in out.getvalue()
    assert not hasattr(s, "guard_choice_")


def test_guard_selection_is_permute_and_flip_at_sensitivity_one_over_m():
    """``guard_selection`` hands permute-and-flip the mean utilities ``1 - mean loss`` with
    sensitivity ``1 / m``: on two points whose utilities differ by ``g``, the worse one is
    chosen with probability ``exp(-epsilon g m / 2) / 2`` exactly."""
    from skdptune import gibo as gibo_module

    m, epsilon = 50, 1.0
    losses = np.zeros((m, 2))
    losses[:3, 0] = 1.0  # the start misses 3 rows more than the last point: g = 3 / m
    picks = [gibo_module.guard_selection(losses, epsilon, np.random.RandomState(seed))
             for seed in range(4000)]
    expected = np.exp(-epsilon * 3 / 2) / 2  # 0.1116
    assert np.mean(np.array(picks) == 0) == pytest.approx(expected, abs=0.015)
    assert gibo_module.guard_sensitivity(m) == 1 / m
