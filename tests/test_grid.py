"""DPGridSearchCV end to end: accounting hand-off, released attributes, sklearn conventions."""

import io
import os
import pickle
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import BudgetError
from joblib import parallel_backend
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from skdptune import (
    DPGridSearchCV,
    NonPrivateComponentError,
    PrivacyLeakError,
    TooFewRowsWarning,
    estimator_privacy,
)
from skdptune._seeding import SeedPlan
from skdptune.accounting import doubling_svt_epsilon, svt_max_above
from skdptune.evaluation._partitions import PartitionEvaluator
from skdptune.evaluation._scores import check_bounded_scorer


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1200, n_features=4, n_informative=3, n_redundant=0,
                               random_state=0)
    return np.clip(X / 4, -1, 1), y


@pytest.fixture
def dry_fits(monkeypatch):
    """``(pid, candidate index)`` of every dry-run fit: a worker process appends to its own
    copy, so the entries with this process's pid are the fits made here."""
    from skdptune.public import _dry_run

    here, real = [], _dry_run._dry_fit

    def spy(template, i, *synthetic):
        here.append((os.getpid(), i))
        return real(template, i, *synthetic)

    monkeypatch.setattr(_dry_run, "_dry_fit", spy)
    return here


def nb(cost=1.0):
    """A GaussianNB that costs ``cost``: with bounds (-1, 1) it pays 5/3 of its epsilon under
    replace-one (skdptune.estimators.replace_one_factor)."""
    return GaussianNB(epsilon=cost * 3 / 5, bounds=(-1.0, 1.0))


def lr(epsilon=1.0):
    return LogisticRegression(epsilon=epsilon, data_norm=2.0)


GRID = {"var_smoothing": [1e-9, 1e-2, 0.5]}


def fit(X, y, **kw):
    kw.setdefault("random_state", 0)
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("min_partition_size", 50)
    kw.setdefault("classes", [0, 1])
    return DPGridSearchCV(kw.pop("estimator", nb()), kw.pop("grid", GRID), **kw).fit(X, y)


def test_fit_predict_and_released_attributes(data):
    X, y = data
    search = fit(X, y)
    assert search.best_params_ in search.cv_results_["params"]
    assert search.best_index_ == search.cv_results_["params"].index(search.best_params_)
    assert set(search.cv_results_) == {"params", "param_var_smoothing", "selected"}
    assert search.cv_results_["selected"].sum() == 1
    assert search.n_partitions_ == len(X) // 50
    assert search.sensitivity_ == pytest.approx(1 / search.n_partitions_)
    assert search.predict(X).shape == (len(X),)
    assert search.predict_proba(X).shape == (len(X), 2)
    assert 0.0 <= search.score(X, y) <= 1.0
    assert list(search.classes_) == [0, 1]
    assert search.n_features_in_ == 4
    assert search.selection_trace_ == ()


def test_privacy_spent_closed_form_permute_and_flip(data):
    X, y = data
    # the old meaning (tuning 0.7, the estimator's own 1.3) is epsilon=2.0, share 0.35
    search = fit(X, y, epsilon=2.0, tuning_share=0.35, estimator=nb(1.3))
    assert search.privacy_spent_.epsilon == pytest.approx(2.0, abs=1e-12)
    assert search.privacy_spent_.delta == 0.0
    assert search.best_estimator_.epsilon == pytest.approx(1.3 * 3 / 5)  # as configured
    assert search.privacy_split_ == pytest.approx(
        {"tuning_share": 0.35, "epsilon_tuning": 0.7, "epsilon_model": 1.3})
    assert estimator_privacy(search.best_estimator_)[0] == pytest.approx(1.3)


@pytest.mark.parametrize("share", [0.1, 0.5, 0.8])
def test_total_budget_split_scales_the_model(data, share):
    X, y = data
    search = fit(X, y, epsilon=3.0, tuning_share=share, estimator=nb(0.25))
    components = {c.name: c.epsilon for c in search.privacy_spent_.components}
    assert sum(components.values()) == pytest.approx(3.0)
    assert components["returned model (refit on all rows)"] == pytest.approx((1 - share) * 3.0)
    # GaussianNB costs (4/3 + 2R/3) of its epsilon under replace-one: priced at the share
    assert search.best_estimator_.epsilon < (1 - share) * 3.0
    assert estimator_privacy(search.best_estimator_)[0] == pytest.approx((1 - share) * 3.0)


def test_auto_share_closed_form():
    from skdptune.grid import _SHARE_BETA, _SHARE_LIMITS, _SHARE_TOLERANCE

    grid = {"var_smoothing": list(np.logspace(-9, 0, 20))}
    search = DPGridSearchCV(nb(), grid, epsilon=1.0, classes=[0, 1])
    for n, eps in [(24_420, 1.0), (24_420, 8.0), (254_000, 4.0), (2_000_000, 4.0)]:
        search.set_params(epsilon=eps)
        k = n // 100
        needed = 2 * np.log(20 / _SHARE_BETA) / (k * _SHARE_TOLERANCE)
        expected = float(np.clip(needed / eps, *_SHARE_LIMITS))
        report = search.planned_privacy(n)
        tuning = {c.name: c.epsilon for c in report.components}[
            "tuning: permute-and-flip selection"]
        assert tuning == pytest.approx(expected * eps)
        assert report.epsilon == pytest.approx(eps)

    def share(n, eps):
        search.set_params(epsilon=eps)
        return search._auto_share(n)

    # the share shrinks with n and with epsilon: the selection needs less, the model gets more
    assert share(24_420, 4.0) == 0.5 > share(254_000, 4.0) > share(254_000, 8.0)


def test_space_setting_epsilon_refused_in_budget_mode(data):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="param_grid searches an epsilon"):
        fit(X, y, grid={"epsilon": [0.5, 1.0]}, accountant=acc)
    assert acc.spent_budget == []


def test_too_few_rows_warns_once_before_data_is_read(data):
    X, y = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fit(X[:150], y[:150], min_partition_size=100)  # one partition: sensitivity 1
    caught = [w for w in record if w.category is TooFewRowsWarning]
    assert len(caught) == 1  # once per fit, not per partition or candidate
    assert "1 partition(s)" in str(caught[0].message)
    assert "DPRandomSearchCV" in str(caught[0].message)
    # the warning is fit's: planned_privacy of the same configuration plans silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPGridSearchCV(nb(), GRID, epsilon=2.0, classes=[0, 1],
                       min_partition_size=100).planned_privacy(150)


@pytest.mark.parametrize("n_candidates", [2, 4, 20])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_too_few_rows_is_permute_and_flips_bound_against_a_random_pick(n_candidates, epsilon,
                                                                       too_few_rows):
    """It fires exactly where 2 (ln |S| + 1) / (k eps_tuning), permute-and-flip's bound on its
    expected loss, reaches 1 - 1/|S|, what a uniformly random pick can lose on [0, 1]."""
    grid = {"var_smoothing": list(np.logspace(-9, -1, n_candidates))}
    search = DPGridSearchCV(nb(), grid, epsilon=epsilon, min_partition_size=20, classes=[0, 1])
    fired = []
    for k in range(1, 60):
        n = 20 * k
        eps_tuning = search.planned_privacy(n).components[0].epsilon
        expected = 2 * (np.log(n_candidates) + 1) / (k * eps_tuning) >= 1 - 1 / n_candidates
        assert bool(too_few_rows(search, n)) == expected, (n, eps_tuning)
        fired.append(expected)
    assert fired[0] and not fired[-1]  # the sweep crosses the threshold
    # a single candidate leaves nothing to choose: never a warning
    single = DPGridSearchCV(nb(), {"var_smoothing": [1e-9]}, epsilon=epsilon,
                            min_partition_size=20, classes=[0, 1])
    assert too_few_rows(single, 20) == []


def test_too_few_rows_is_quiet_on_the_readme_example(too_few_rows):
    """The README's first example (3,000 training rows, 30 partitions, 4 candidates, total
    epsilon 2): permute-and-flip's bound 2 (ln 4 + 1) / 30 = 0.16 is far below 0.75."""
    search = DPGridSearchCV(LogisticRegression(data_norm=5.0), {"C": [0.01, 0.1, 1, 10]},
                            epsilon=2.0, classes=[0, 1])
    assert too_few_rows(search, 3000) == []
    assert too_few_rows(search, 300)  # 3 partitions: 2 (ln 4 + 1) / 3 = 1.6


def test_too_few_rows_with_the_svt_is_one_rounds_error(too_few_rows):
    """selection="svt": one round's expected error (2 + 4 H_m) / (k eps0) against 1 - 1/m; at
    the grid's defaults (N = 50 threshold steps, eps0 = eps / 75.5) it needs far more rows than
    permute-and-flip."""
    grid = {"var_smoothing": [1e-9, 1e-3, 1e-1, 0.5]}
    svt = DPGridSearchCV(nb(), grid, epsilon=2.0, tuning_share=0.5, selection="svt",
                         classes=[0, 1])
    pf = DPGridSearchCV(nb(), grid, epsilon=2.0, tuning_share=0.5, classes=[0, 1])
    (warning,) = too_few_rows(svt, 3000)
    assert "selection='permute_and_flip'" in str(warning)
    assert too_few_rows(pf, 3000) == []
    eps0 = 2 * 1.0 / (3 * 50 + 1)  # the selection's epsilon is 1
    harmonic = 1 + 1 / 2 + 1 / 3 + 1 / 4
    for k in (1000, 1100):  # 0.78 and 0.71
        expected = (2 + 4 * harmonic) / (k * eps0) >= 0.75
        assert bool(too_few_rows(svt, 100 * k)) == expected == (k == 1000)


def test_partition_fits_are_the_returned_model_in_miniature(monkeypatch):
    """Batched (plain LogisticRegression): every partition fit gets the returned model's
    epsilon and C, and its row count N (padding included) for the noise and the ridge."""
    from skdptune.evaluation import _batched

    seen, weighted = [], []
    real_mechanism, real_weights = _batched.vector_mechanism, _batched.row_weights

    def mechanism_spy(epsilon, C, data_norm, fit_intercept, n_rows, dimension, rng):
        seen.append((C, epsilon, n_rows))
        return real_mechanism(epsilon, C, data_norm, fit_intercept, n_rows, dimension, rng)

    def weights_spy(n_rows, model_rows=None, n_padding=0):
        weighted.append((n_rows, model_rows, n_padding))
        return real_weights(n_rows, model_rows, n_padding)

    monkeypatch.setattr(_batched, "vector_mechanism", mechanism_spy)
    monkeypatch.setattr(_batched, "row_weights", weights_spy)
    X, y = make_classification(n_samples=400, n_features=3, n_informative=2, n_redundant=0,
                               random_state=1)
    X = X / 4
    fit(X, y, estimator=lr(), grid={"C": [0.5]}, epsilon=2.0, tuning_share=0.5,
        min_partition_size=100, n_jobs=1)
    assert seen and set(seen) == {(0.5, 1.0, 402)}  # two classes: two padding rows
    assert weighted and {w[1:] for w in weighted} == {(402, 2)}
    seen.clear()
    weighted.clear()
    fit(X, y, estimator=lr(), grid={"C": [0.5]}, epsilon=2.0, tuning_share=0.5,
        min_partition_size=100, n_jobs=1, inner_params="same", inner_epsilon="same")
    # the fits' own rows (training part and padding) for the noise and the weights
    assert weighted and {w[1:] for w in weighted} == {(None, 2)}
    assert seen and {s[:2] for s in seen} == {(0.5, 1.0)}
    assert {s[2] for s in seen} == {w[0] for w in weighted}


def test_one_by_one_partition_fits_rescale_C_like_the_full_model(monkeypatch):
    """Other estimators (the one-by-one fits; here a pipeline, which the batched path would
    otherwise take): C and epsilon times n / n_train."""
    from skdptune.evaluation import _partitions
    from skdptune.evaluation._fit import candidate_template, instantiate

    monkeypatch.setattr(_partitions, "supports_batched_fits", lambda *args, **kwargs: False)
    seen = []
    real = _partitions._partition_fit_settings
    pipe = Pipeline([("scale", FunctionTransformer()), ("lr", lr())])

    def spy(*args):
        settings = real(*args)
        est = instantiate(candidate_template(pipe, {"lr__C": 0.5}), **settings)
        seen.append((args[-1], est[-1].C, est[-1].epsilon))
        return settings

    monkeypatch.setattr(_partitions, "_partition_fit_settings", spy)
    X, y = make_classification(n_samples=400, n_features=3, n_informative=2, n_redundant=0,
                               random_state=1)
    X = X / 4
    fit(X, y, estimator=pipe, grid={"lr__C": [0.5]}, epsilon=2.0, tuning_share=0.5,
        min_partition_size=100, n_jobs=1)
    assert seen
    for n_train, C, eps in seen:
        assert C == pytest.approx(0.5 * 400 / n_train)
        assert eps == pytest.approx(1.0 * 400 / n_train)  # inner_epsilon="scaled"
    seen.clear()
    fit(X, y, estimator=pipe, grid={"lr__C": [0.5]}, epsilon=2.0, tuning_share=0.5,
        min_partition_size=100, n_jobs=1, inner_params="same", inner_epsilon="same")
    assert seen and all(C == 0.5 and eps == pytest.approx(1.0) for _, C, eps in seen)


def test_privacy_spent_closed_form_svt(data):
    X, y = data
    search = fit(X, y, selection="svt", epsilon=3.0, tuning_share=2 / 3, granularity=0.1,
                 utility_floor=0.5)
    n_above = 5  # ceil((1 - 0.5) / 0.1)
    eps0 = 2 * 2.0 / (3 * n_above + 1)
    assert search.epsilon_round_ == pytest.approx(eps0)
    assert svt_max_above(0.5, 0.1) == n_above
    assert doubling_svt_epsilon(n_above, eps0) == pytest.approx(2.0)
    assert search.privacy_spent_.epsilon == pytest.approx(2.0 + 1.0)
    assert estimator_privacy(search.best_estimator_)[0] == pytest.approx(1.0)
    for record in search.selection_trace_:
        assert set(record) == {"round", "threshold_base", "step", "outcome", "selected"}


def test_model_cost_is_max_over_grid(data):
    X, y = data
    # budget mode scales the estimator's epsilons, so a grid over epsilon needs refit=False;
    # the cost of the model is maximised over the grid through the pipeline's components
    search = fit(X, y, grid={"var_smoothing": [1e-9, 0.1]}, epsilon=1.0, refit=False)
    assert search.privacy_spent_.epsilon == pytest.approx(1.0)


def test_refit_false_spends_tuning_only(data):
    X, y = data
    search = fit(X, y, refit=False, epsilon=0.5)
    assert search.privacy_spent_.epsilon == pytest.approx(0.5)
    assert not hasattr(search, "best_estimator_")
    assert not hasattr(search, "predict")
    with pytest.raises(AttributeError, match="refit=False"):
        getattr(search, "n_features_in_")  # noqa: B009


def test_accountant_charged_exactly_once_with_the_report(data):
    X, y = data
    acc = BudgetAccountant()
    default_before = list(BudgetAccountant.load_default(None).spent_budget)
    inner_acc = BudgetAccountant()
    est = GaussianNB(epsilon=1.0, bounds=(-1.0, 1.0), accountant=inner_acc)
    search = fit(X, y, estimator=est, accountant=acc, epsilon=0.5)
    assert acc.spent_budget == [(search.privacy_spent_.epsilon, search.privacy_spent_.delta)]
    assert inner_acc.spent_budget == []
    assert BudgetAccountant.load_default(None).spent_budget == default_before


def test_budget_error_before_any_fit(data, monkeypatch):
    X, y = data
    calls = []
    real_fit = GaussianNB.fit

    def counting_fit(self, *args, **kwargs):
        calls.append(1)
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(GaussianNB, "fit", counting_fit)
    acc = BudgetAccountant(epsilon=1.5)
    with pytest.raises(BudgetError):
        fit(X, y, accountant=acc)
    assert calls, "the dry run fits synthetic data (public) before the budget check"
    real_rows = {tuple(row) for row in X}
    calls_with_real_rows = []

    def spying_fit(self, X_fit, *args, **kwargs):
        calls_with_real_rows.append(bool(real_rows & {tuple(r) for r in np.asarray(X_fit)}))
        return real_fit(self, X_fit, *args, **kwargs)

    monkeypatch.setattr(GaussianNB, "fit", spying_fit)
    with pytest.raises(BudgetError):
        fit(X, y, accountant=acc)
    assert calls_with_real_rows and not any(calls_with_real_rows)
    assert acc.spent_budget == []
    fit(X, y, accountant=BudgetAccountant())  # the spy does see the private rows
    assert any(calls_with_real_rows)


def test_privacy_leak_error_before_charging(data):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(PrivacyLeakError):
        fit(X, y, estimator=GaussianNB(epsilon=1.0), accountant=acc)
    assert acc.spent_budget == []


def test_non_private_component_is_refused(data):
    X, y = data
    pipe = Pipeline([("scale", SkStandardScaler()), ("clf", nb())])
    with pytest.raises(NonPrivateComponentError, match="scale"):
        fit(X, y, estimator=pipe, grid={"clf__var_smoothing": [1e-9, 1e-3]})


def _captured_utilities(monkeypatch, search, X, y):
    """Run ``search.fit`` and return the exact utilities its selector received."""
    seen = []
    original = PartitionEvaluator.evaluate

    def spy(self, *args, **kwargs):
        values = original(self, *args, **kwargs)
        seen.append(np.array(values, copy=True))
        return values

    monkeypatch.setattr(PartitionEvaluator, "evaluate", spy)
    search.fit(X, y)
    return seen[0]


def _all_numbers(obj, depth=0):
    """Every float reachable from ``obj`` (attributes, containers, arrays)."""
    if depth > 6:
        return
    if isinstance(obj, (float, np.floating)):
        yield float(obj)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind == "f":
        yield from (float(v) for v in obj.ravel())
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _all_numbers(v, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _all_numbers(v, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        yield from _all_numbers(vars(obj), depth + 1)


@pytest.mark.parametrize("selection", ["permute_and_flip", "svt"])
def test_no_exact_utility_survives_fit(data, monkeypatch, selection):
    X, y = data
    search = DPGridSearchCV(nb(), GRID, selection=selection, random_state=0,
                            classes=[0, 1], accountant=BudgetAccountant(), min_partition_size=50,
                            verbose=2)
    out = io.StringIO()
    with redirect_stdout(out):
        utilities = _captured_utilities(monkeypatch, search, X, y)
    stored = set(_all_numbers({k: v for k, v in vars(search).items() if k != "estimator"}))
    for u in utilities:
        assert u not in stored
        assert f"{u:.4f}" not in out.getvalue()
    assert "partitions" in out.getvalue()


def test_sensitivity_one_row_changes_one_partition(data):
    X, y = data
    X2 = X.copy()
    X2[17] = -X2[17]  # replace one record
    y2 = y.copy()
    y2[17] = 1 - y2[17]
    scorer = check_bounded_scorer(None, None, nb())
    candidates = [{"var_smoothing": v} for v in GRID["var_smoothing"]]

    def per_partition(Xd, yd):
        ev = PartitionEvaluator(nb(), scorer, n_partitions=12, cv=0.25, inner_epsilon="same",
                                n_jobs=None, pre_dispatch="2*n_jobs", error_score=0.0,
                                seeds=SeedPlan(3))
        return ev.evaluate_partitions(Xd, yd, candidates, {})

    a, b = per_partition(X, y), per_partition(X2, y2)
    changed = np.flatnonzero(np.any(a != b, axis=0))
    assert len(changed) <= 1
    assert np.all(np.abs(a.mean(axis=1) - b.mean(axis=1)) <= 1 / 12 + 1e-12)


def test_reproducible_and_independent_of_n_jobs(data):
    X, y = data
    a = fit(X, y, grid={"C": [0.01, 1.0, 100.0]}, estimator=lr(), n_jobs=1)
    b = fit(X, y, grid={"C": [0.01, 1.0, 100.0]}, estimator=lr(), n_jobs=2)
    assert a.best_params_ == b.best_params_
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)


def test_clear_winner_is_selected(data):
    X, y = data
    wins = 0
    for seed in range(5):
        # extreme priors make the model predict one class: accuracy about 0.5 against 0.75
        grid = {"priors": [[0.999, 0.001], None, [0.001, 0.999]]}
        search = fit(X, y, grid=grid, epsilon=4.0, inner_epsilon=float("inf"),
                     random_state=seed, refit=False, min_partition_size=40)
        wins += search.best_params_["priors"] is None
    assert wins >= 4


MARKER = 0.5


def _fails_on_marked_rows(X):
    """Row-wise and data-independent as a transformer, but raises when a row is marked."""
    if np.any(np.asarray(X)[:, -1] == MARKER):
        raise ValueError("a marked row")
    return X


@pytest.mark.usefixtures("unforeseen_failures")
def test_failed_partition_fits_get_error_score(data):
    """A fit that fails on the private data (not on the synthetic dry-run data) inside a
    partition: its utility is error_score, a value in [0, 1] like any other."""
    X, y = data
    X = X.copy()
    X[:, -1] = MARKER  # every partition fails for the first candidate
    pipe = Pipeline([("ft", FunctionTransformer()), ("clf", nb())])
    grid = {"ft__func": [_fails_on_marked_rows, None]}
    acc = BudgetAccountant()
    search = fit(X, y, estimator=pipe, grid=grid, epsilon=4.0, refit=False, accountant=acc)
    assert search.best_params_ == {"ft__func": None}
    assert acc.total()[0] == pytest.approx(4.0)
    with pytest.warns(UserWarning, match="voids"), pytest.raises(ValueError, match="marked"):
        fit(X, y, estimator=pipe, grid={"ft__func": [_fails_on_marked_rows]},
            error_score="raise")


def test_invalid_candidate_is_a_configuration_error_charging_nothing(data):
    X, y = data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="Dry run failed.*var_smoothing.*Nothing was charged"):
        fit(X, y, grid={"var_smoothing": [-1.0, 1e-9]}, accountant=acc)
    assert acc.spent_budget == []


def test_parallel_dry_run_raises_what_the_sequential_one_raises(data, dry_fits):
    """With n_jobs=2 the dry run's fits run in two shares, this process's (candidates 0 and 2)
    and a joblib worker's (candidate 1): the error is the first in candidate order (candidates
    1 and 2 fail, in different shares), with the message and cause of a sequential run, before
    anything is charged; a clean grid is fitted here only in this process's share."""
    from skdptune.public import _dry_run

    X, y = data
    here = dry_fits
    raised, fitted_here = [], []
    for n_jobs in (1, 2):
        acc = BudgetAccountant()
        with pytest.raises(ValueError, match="Dry run failed") as info:
            fit(X, y, grid={"var_smoothing": [1e-9, -1.0, -2.0]}, accountant=acc,
                n_jobs=n_jobs)
        assert acc.spent_budget == []
        raised.append((str(info.value), type(info.value.__cause__), str(info.value.__cause__)))
        fitted_here.append([i for pid, i in here if pid == os.getpid()])
        here.clear()
    assert raised[0] == raised[1] and "-1.0" in raised[0][0]
    # n_jobs=2: this process's share (0 and the failing 2), then the first failure again;
    # without joblib's generator output (joblib 1.2) every share goes to the workers
    own = _dry_run._JOBLIB_GENERATORS
    assert fitted_here == [[0, 1], [0, 2, 1] if own else [0, 1]]
    search = fit(X, y, grid=GRID, n_jobs=2)
    assert [i for _, i in here] == ([0, 2] if own else [0]) and search.best_params_ in [
        {"var_smoothing": v} for v in GRID["var_smoothing"]]
    here.clear()
    fit(X, y, grid=GRID, n_jobs=1)
    assert [i for _, i in here] == [0, 1, 2]
    here.clear()
    # a thread-based backend: the dry run stays sequential (warning filters are process-wide)
    with parallel_backend("threading", n_jobs=2):
        fit(X, y, grid=GRID, n_jobs=2)
    assert [i for _, i in here] == [0, 1, 2]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_dry_run_failure_is_reported_before_the_public_work_done_meanwhile(data, monkeypatch,
                                                                           n_jobs):
    """The dry run's shares are fitted in the workers while this process does the rest of the
    public work (the pricing among it). When both fail, the dry run's error is the one raised,
    as in a run without overlap; when only the other work fails, its own error is, with
    nothing charged; and no worker task is left behind (the next fit runs)."""
    from skdptune._base import BaseDPSearchCV

    X, y = data

    def unpriceable(self, plan, space):
        raise RuntimeError("pricing failed")

    with monkeypatch.context() as patch:
        patch.setattr(BaseDPSearchCV, "_planned_report", unpriceable)
        acc = BudgetAccountant()
        with pytest.raises(ValueError, match="Dry run failed.*-1.0"):
            fit(X, y, grid={"var_smoothing": [1e-9, 1e-2, -1.0]}, accountant=acc,
                n_jobs=n_jobs)
        with pytest.raises(RuntimeError, match="pricing failed"):
            fit(X, y, grid=GRID, accountant=acc, n_jobs=n_jobs)
        assert acc.spent_budget == []
    assert fit(X, y, grid=GRID, n_jobs=n_jobs).best_params_ in [
        {"var_smoothing": v} for v in GRID["var_smoothing"]]


def test_parallel_dry_run_without_joblib_generators(data, monkeypatch):
    """joblib 1.2 has no ``return_as="generator"``: the shares are fitted in the workers on
    dispatch, and the error raised is still the first in candidate order."""
    from skdptune.public import _dry_run

    X, y = data
    monkeypatch.setattr(_dry_run, "_JOBLIB_GENERATORS", False)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="Dry run failed.*-1.0"):
        fit(X, y, grid={"var_smoothing": [1e-9, -1.0, -2.0]}, accountant=acc, n_jobs=2)
    assert acc.spent_budget == []
    assert fit(X, y, grid=GRID, n_jobs=2).best_params_ in [
        {"var_smoothing": v} for v in GRID["var_smoothing"]]


@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_parallel_dry_run_consumes_the_workers_shares(data, dry_fits, backend):
    """A clean grid is dry-run in two shares: under loky this process fits its own share
    (every other candidate, from the first) while a worker fits the other, and no candidate
    twice; under the multiprocessing backend (no generator output) both shares are fitted in
    the workers on dispatch and only the first candidate again here (they went back to this
    process before)."""
    X, y = data
    here = dry_fits
    grid = {"var_smoothing": [1e-9, 1e-3, 1e-2, 0.1, 0.5, 0.9]}
    with parallel_backend(backend, n_jobs=2):
        fit(X, y, grid=grid, n_jobs=2)
    from skdptune.public import _dry_run

    expected = [0, 2, 4] if backend == "loky" and _dry_run._JOBLIB_GENERATORS else [0]
    assert [i for pid, i in here if pid == os.getpid()] == expected


@pytest.mark.slow  # ~4 s of process workers; kept out of the 5-minute default suite
def test_interrupt_during_the_overlapped_work_is_not_held(data, dry_fits, monkeypatch):
    """An interrupt in the public work done beside the dry run leaves at once: the workers'
    shares are abandoned, no candidate is dry-run here, nothing is charged, and the next fit
    runs (it was held until the whole dry run had run)."""
    from skdptune._base import BaseDPSearchCV

    X, y = data
    here = dry_fits

    def interrupted(self, plan, space):
        raise KeyboardInterrupt

    acc = BudgetAccountant()
    with monkeypatch.context() as patch:
        patch.setattr(BaseDPSearchCV, "_planned_report", interrupted)
        with pytest.raises(KeyboardInterrupt):
            fit(X, y, grid={"var_smoothing": [1e-9, 1e-2, -1.0]}, accountant=acc, n_jobs=2)
    assert [i for pid, i in here if pid == os.getpid()] == []
    assert acc.spent_budget == []
    assert fit(X, y, grid=GRID, n_jobs=2).best_params_ in [
        {"var_smoothing": v} for v in GRID["var_smoothing"]]


@pytest.mark.parametrize("where", ["own share", "hand-off"])
def test_interrupt_during_this_process_share_abandons_the_workers(data, monkeypatch, where):
    """This process fits its own share of the dry run after its other public work, and pauses
    a moment after dispatching the workers' shares; an interrupt in either closes the workers'
    shares at once (they ran on, and joblib warned about unused results, when they were
    detached first), charging nothing."""
    import types

    from skdptune.public import _dry_run

    X, y = data
    real_fit, real_dispatch = _dry_run._dry_fit, _dry_run._dispatch
    main, closed = os.getpid(), []

    def fit_or_interrupt(template, i, *synthetic):
        if where == "own share" and os.getpid() == main and i == 2:  # its share is [0, 2]
            raise KeyboardInterrupt
        return real_fit(template, i, *synthetic)

    def interrupted_pause(seconds):
        raise KeyboardInterrupt

    if where == "hand-off":
        monkeypatch.setattr(_dry_run, "time", types.SimpleNamespace(sleep=interrupted_pause))

    def tracked_dispatch(*args, **kwargs):
        pending = real_dispatch(*args, **kwargs)
        if pending is None or isinstance(pending, list):
            return pending

        class Tracked:
            def __iter__(self):
                return iter(pending)

            def close(self):
                closed.append(True)
                pending.close()

        return Tracked()

    if not _dry_run._JOBLIB_GENERATORS:
        pytest.skip("joblib without generator output fits every share on dispatch")
    monkeypatch.setattr(_dry_run, "_dry_fit", fit_or_interrupt)
    monkeypatch.setattr(_dry_run, "_dispatch", tracked_dispatch)
    acc = BudgetAccountant()
    with pytest.raises(KeyboardInterrupt):
        fit(X, y, grid={"var_smoothing": [1e-9, 1e-3, 1e-2, 0.1]}, accountant=acc, n_jobs=2)
    assert closed == [True] and acc.spent_budget == []


def test_dry_run_fallback_fits_the_shares_on_dispatch(data, monkeypatch):
    """Without joblib's generator output there is nothing to overlap (``None``); on dispatch,
    the shares' results are a list."""
    from skdptune.public import _dry_run

    synthetic = (np.zeros((4, 4)), np.array([0, 1, 0, 1]), {}, None, {}, {})
    shares = [[(0, nb())], [(1, nb())]]
    monkeypatch.setattr(_dry_run, "_JOBLIB_GENERATORS", False)
    assert _dry_run._dispatch(2, shares, synthetic) is None
    assert _dry_run._dispatch(2, shares, synthetic, on_dispatch=True) == [None, None]
    if _dry_run._joblib_generators():  # joblib >= 1.3 (the floor, 1.2, has none)
        monkeypatch.setattr(_dry_run, "_JOBLIB_GENERATORS", True)
        pending = _dry_run._dispatch(2, shares, synthetic)
        assert not isinstance(pending, list) and list(pending) == [None, None]


def test_the_budget_split_is_made_once_per_fit_and_not_kept(data, monkeypatch):
    """The budget split is computed once per fit, into its plan (the plan, the tuning's cost
    and the model's cost all read it: one pricing of the space); the plan belongs to that fit,
    not to the object, so a copy taken during the fit (pickle, deepcopy) prices its own
    parameters after ``set_params`` (a copy that kept the fit's split was found), while the
    fit charges its own plan."""
    import copy

    from skdptune import grid as grid_module
    from skdptune._base import TuningPlan

    X, y = data
    pricings, copies = [], []
    real_pricing, real_plan = grid_module.estimator_privacy, DPGridSearchCV._plan_tuning

    def planning(self, public, space):
        plan = real_plan(self, public, space)
        copies.extend([copy.deepcopy(self), pickle.loads(pickle.dumps(self))])
        return plan

    acc = BudgetAccountant()
    search = DPGridSearchCV(lr(), {"C": [0.1, 1.0]}, epsilon=1.0, classes=[0, 1],
                            accountant=acc, random_state=0)
    with monkeypatch.context() as patch:
        patch.setattr(grid_module, "estimator_privacy",
                      lambda *a, **k: pricings.append(1) or real_pricing(*a, **k))
        patch.setattr(DPGridSearchCV, "_plan_tuning", planning)
        search.fit(X, y)
        assert len(pricings) == 1  # computed once within the fit
        assert search.planned_privacy(1000).epsilon == pytest.approx(1.0)
        assert len(pricings) == 2
    assert acc.spent_budget == [(pytest.approx(1.0), 0.0)]
    for other in [search, *copies]:
        assert not [v for v in vars(other).values() if isinstance(v, TuningPlan)]
    for other in copies:
        other.set_params(epsilon=8.0)
        assert other.planned_privacy(1000).epsilon == pytest.approx(8.0)
    assert search.planned_privacy(1000).epsilon == pytest.approx(1.0)


def test_a_plan_is_frozen():
    """A plan is not changed once made: every step of a fit reads the one it was given."""
    from skdptune.public import PublicInfo

    search = DPGridSearchCV(lr(), {"C": [0.1, 1.0]}, epsilon=1.0, classes=[0, 1])
    plan = search._plan_tuning(PublicInfo(1000, np.array([0, 1]), None),
                               search._search_space())
    with pytest.raises(AttributeError):
        plan.epsilon_tuning = 0.0
    with pytest.raises(AttributeError):
        plan.model_cost = (0.0, 0.0)
    assert plan.model_cost[0] + plan.epsilon_tuning == pytest.approx(1.0)


def test_parallel_dry_run_sees_the_scikit_learn_configuration(data):
    """The workers of the dry run get scikit-learn's configuration, as the private fits do: a
    pipeline that only works without ``transform_output="pandas"`` fails the dry run with
    n_jobs=2 as with n_jobs=1 -- a configuration error, charging nothing -- instead of passing
    it in a worker and failing in the private region (charged)."""
    X, y = data
    pipe = Pipeline([("scale", DPStandardScaler(bounds=(-1.0, 1.0), epsilon=0.5)),
                     ("first_two", FunctionTransformer(lambda Z: Z[:, :2])),
                     ("clf", lr())])
    for n_jobs in (1, 2):
        acc = BudgetAccountant()
        with config_context(transform_output="pandas"):
            with pytest.raises(ValueError, match="Dry run failed"):
                fit(X, y, estimator=pipe, grid={"clf__C": [0.1, 1.0]}, accountant=acc,
                    n_jobs=n_jobs)
        assert acc.spent_budget == []


def test_too_few_rows_for_partitions(data):
    X, y = data
    with pytest.raises(ValueError, match="min_partition_size"):
        fit(X[:60], y[:60], min_partition_size=50, n_partitions=2)


@pytest.mark.parametrize("norms", [[0.5], [100.0], [0.5, 100.0]])
def test_each_candidate_is_priced_at_the_models_share(data, norms):
    """The returned model costs the model's share for the declared classes, whichever
    candidate wins: diffprivlib's LogisticRegression at data_norm=100 costs about 15 times its
    epsilon, at 0.5 its epsilon, and one factor on every candidate (the dearest's) gave the
    cheap candidate 0.065 where it can have 1."""
    X, y = data
    search = DPGridSearchCV(LogisticRegression(data_norm=1.0), {"data_norm": norms},
                            epsilon=2.0, tuning_share=0.5, classes=[0, 1], random_state=0,
                            accountant=BudgetAccountant(), min_partition_size=50).fit(X, y)
    best = search.best_estimator_
    assert estimator_privacy(best, n_classes=2)[0] <= 1.0
    assert estimator_privacy(best, n_classes=2)[0] == pytest.approx(1.0, rel=1e-9)
    if best.data_norm == 0.5:
        assert best.epsilon == pytest.approx(1.0, rel=1e-9)
    else:  # the objective-perturbation bound leaves it about 0.065
        assert best.epsilon < 0.07
    assert search.privacy_spent_.epsilon == pytest.approx(2.0)


def test_pipeline_clone_pickle_and_nesting(data):
    X, y = data
    pipe = Pipeline([("id", FunctionTransformer()), ("clf", lr())])
    search = DPGridSearchCV(pipe, {"clf__C": [0.1, 10.0]}, random_state=0,
                            classes=[0, 1], accountant=BudgetAccountant(), min_partition_size=50)
    assert clone(search).get_params()["estimator__clf__C"] == 1.0
    search.set_params(epsilon=1.5)
    search.fit(X, y)
    assert search.privacy_spent_.epsilon == pytest.approx(1.5)
    # the model's share, half the budget: the candidates' epsilons are scaled so that the
    # dearer costs it (diffprivlib's LogisticRegression costs more than its epsilon at
    # data_norm=2, and depends on C)
    assert estimator_privacy(search.best_estimator_, {"clf__C": [0.1, 10.0]},
                             n_classes=2)[0] == pytest.approx(0.75, rel=1e-9)
    restored = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))
    outer = Pipeline([("id", FunctionTransformer()), ("search", clone(search))]).fit(X, y)
    assert outer.predict(X).shape == (len(X),)


def test_searches_are_classifiers_or_regressors_like_their_estimator():
    """scikit-learn < 1.6 reads ``_estimator_type``, newer versions the tags: both must agree."""
    from diffprivlib.models import LinearRegression
    from sklearn.base import is_classifier, is_regressor

    assert is_classifier(DPGridSearchCV(nb(), GRID))
    assert is_regressor(DPGridSearchCV(LinearRegression(bounds_X=(-1, 1), bounds_y=(0, 1)),
                                       {"fit_intercept": [True]}))


def test_the_model_share_covers_the_scaled_models_cost_to_the_ulp(data):
    """A budget mode scales the epsilons by one factor; each scaled epsilon is rounded to a
    float and its replace-one cost rounded up, so the scaled model could cost an ulp more than
    ``base * scale`` (545 of 3,000 random pipelines did). The share charged is the
    scaled model's own cost. (0.68, 4.24, 3.9): one such case."""
    from diffprivlib.models import StandardScaler
    from sklearn.pipeline import Pipeline

    X, y = data
    pipe = Pipeline([("sc", StandardScaler(bounds=(0.0, 1.0), epsilon=0.68)),
                     ("clf", GaussianNB(bounds=(-1.0, 1.0), epsilon=4.24))])
    search = fit(X, y, epsilon=3.9, tuning_share=0.5, estimator=pipe,
                 grid={"clf__var_smoothing": [1e-9, 1e-3]})
    components = {c.name: c.epsilon for c in search.privacy_spent_.components}
    model_share = components["returned model (refit on all rows)"]
    assert estimator_privacy(search.best_estimator_)[0] <= model_share
    assert search.privacy_spent_.epsilon <= 3.9
