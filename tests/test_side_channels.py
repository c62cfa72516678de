"""Every release channel of ``fit`` on replace-one neighbours.

The channels, and how each is covered, are listed in docs/privacy.md, "What is released: every
channel". Each test builds the neighbouring pair that exposed the channel (adapted only in
form) and asserts that what the public API releases -- exceptions, warnings, attributes,
``classes_``, array shapes, ``verbose`` output, accountant charges -- is the same on ``D`` and
``D'`` (or a post-processing of the private outputs). The statistical version of the failure
channel (docs/privacy.md, "Failures cannot depend on the data") is in
``tests/audit/test_audit_side_channels.py``.
"""

import io
import pickle
import re
import threading
import traceback
import warnings
from contextlib import redirect_stdout
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from diffprivlib.utils import BudgetError, PrivacyLeakWarning
from joblib import parallel_backend
from sklearn import config_context, get_config
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import (
    ArrayRange,
    DPGIBOSearchCV,
    DPGridSearchCV,
    DPRandomSearchCV,
    TooFewRowsWarning,
    estimator_privacy,
)
from skdptune import gibo as gibo_module
from skdptune.estimators import leak_warnings_as_errors
from skdptune.exceptions import (
    DomainError,
    NonPrivateComponentError,
    PrivacyLeakError,
    PrivateFitError,
)

SPACE = {"C": [0.1, 1.0, 10.0]}


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


def neighbours(n, seed=0, new_label=1):
    """``D``: all labels 0 but one record ``new_label``; ``D'``: that record's label is 0."""
    X = np.random.RandomState(seed).uniform(-1, 1, size=(n, 3))
    y_d = np.zeros(n, dtype=int)
    y_d[0] = new_label
    return X, y_d, np.zeros(n, dtype=int)


def grid(**kw):
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", BudgetAccountant())
    return DPGridSearchCV(kw.pop("estimator", lr()), kw.pop("space", SPACE), **kw)


def rand(**kw):
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("n_iter", 3)
    return DPRandomSearchCV(kw.pop("estimator", lr()), kw.pop("space", SPACE), **kw)


def gibo(**kw):
    """``DPGIBOSearchCV`` on the box each listed parameter spans (log scale; one value: a
    factor of 2 either side), so that the tests written with grid spaces run it too."""
    kw.setdefault("classes", [0, 1])
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("n_iter", 2)
    space = {name: (min(values), max(values), "log") if len(values) > 1
             else (values[0] / 2, values[0] * 2, "log")
             for name, values in kw.pop("space", SPACE).items()}
    return DPGIBOSearchCV(kw.pop("estimator", lr()), space, **kw)


def released(search):
    """What a fitted search exposes, reduced to what must not differ in kind on D and D'."""
    model = search.best_estimator_ if hasattr(search, "best_estimator_") else None
    return {
        "attributes": sorted(k for k in vars(search) if k.endswith("_")),
        "classes_": tuple(search.classes_),
        "model": None if model is None else (type(model).__name__, tuple(model.classes_),
                                             model.coef_.shape, model.intercept_.shape),
        "privacy_spent_": search.privacy_spent_.epsilon,
    }


def fit_recording(search, X, y):
    """``(released(search), warnings raised, verbose output)``; an exception fails the test."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out):
        warnings.simplefilter("always")
        search.fit(X, y)
    return released(search), [(w.category, str(w.message)) for w in caught], out.getvalue()


# -- item 1: a failed training run is visible --------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_item1_repetition_returns_a_model_on_both_neighbours(seed):
    X, y_d, y_n = neighbours(50)
    on_d = fit_recording(rand(refit=False, random_state=seed), X, y_d)
    on_n = fit_recording(rand(refit=False, random_state=seed), X, y_n)
    assert on_d == on_n
    assert on_d[0]["model"][1] == (0, 1)


# -- item 2: exceptions escape fit and carry data ----------------------------------------------
@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_item2_no_exception_on_either_neighbour(make):
    X, y_d, y_n = neighbours(600)
    on_d = fit_recording(make(random_state=0), X, y_d)
    on_n = fit_recording(make(random_state=0), X, y_n)
    assert on_d == on_n


def _fails_on_private_rows(X):
    """Row-wise; raises (with the value in the message) when it meets a marked row."""
    X = np.asarray(X)
    marked = X[:, -1] == 1.0  # never in the synthetic data of the dry run
    if marked.any():
        raise ValueError(f"secret value {X[marked][0, 0]!r}")
    return X


PIPE_SPACE = {"clf__C": [0.1, 1.0, 10.0]}


def _failing_pipe():
    return Pipeline([("ft", FunctionTransformer(_fails_on_private_rows)), ("clf", lr())])


@pytest.mark.usefixtures("unforeseen_failures")
@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_a_failure_inside_leaves_as_a_fixed_error_and_charges(make):
    X, y, _ = neighbours(300, seed=1)
    X[:, -1] = np.where(np.arange(300) % 2 == 0, 1.0, 0.0)  # the refit surely fails
    y[::3] = 1
    acc = BudgetAccountant()
    with pytest.raises(PrivateFitError) as info:
        make(estimator=_failing_pipe(), space=PIPE_SPACE, accountant=acc, random_state=0).fit(X, y)
    err = info.value
    assert "secret" not in str(err)
    assert err.__cause__ is None and err.__context__ is None
    frames = "".join(traceback.format_tb(err.__traceback__))
    assert "_fails_on_private_rows" not in frames and "evaluation" not in frames
    planned = make(random_state=0).fit(X, y).privacy_spent_  # same cost, no failure
    assert acc.spent_budget == [(planned.epsilon, planned.delta)]


def _warns_on_marked_rows(X):
    """Row-wise; a custom component whose ``PrivacyLeakWarning`` depends on the data."""
    X = np.asarray(X)
    if (X[:, -1] == 1.0).any():  # never in the synthetic data of the dry run
        warnings.warn(f"read {X[X[:, -1] == 1.0][0, 0]!r} off the data", PrivacyLeakWarning,
                      stacklevel=1)
    return X


@pytest.mark.usefixtures("unforeseen_failures")
@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_a_leak_found_after_the_data_was_read_is_charged(make):
    """Neighbours that differ in one marked row: one fits, the other stops with
    ``PrivacyLeakError`` -- and both charge the same planned cost (the leak is data-dependent
    here, so it is a residual bit of the same kind as ``PrivateFitError``, never a free one)."""
    X, y, _ = neighbours(300, seed=1)
    X[:, -1] = 0.0
    X_marked = X.copy()
    X_marked[7, -1] = 1.0
    pipe = Pipeline([("ft", FunctionTransformer(_warns_on_marked_rows)), ("clf", lr())])
    spent = []
    for data in (X, X_marked):
        acc = BudgetAccountant()
        search = make(estimator=pipe, space=PIPE_SPACE, accountant=acc, random_state=0)
        if data is X:
            search.fit(data, y)
            planned = search.privacy_spent_
        else:
            with pytest.raises(PrivacyLeakError, match="^A component read") as info:
                search.fit(data, y)
            assert info.value.__context__ is None and info.value.__cause__ is None
            assert "off the data" not in str(info.value)
        spent.append(acc.spent_budget)
    assert spent[0] == spent[1] == [(planned.epsilon, planned.delta)]


@pytest.mark.usefixtures("unforeseen_failures")
def test_error_score_raise_lets_the_original_out_for_debugging():
    X, y, _ = neighbours(300, seed=1)
    X[:, -1] = 1.0
    y[::3] = 1
    with pytest.warns(UserWarning, match="voids"), pytest.raises(ValueError, match="secret"):
        rand(estimator=_failing_pipe(), space=PIPE_SPACE, error_score="raise",
             random_state=0).fit(X, y)


# -- item 3: warnings depend on the data -------------------------------------------------------
@pytest.mark.parametrize("make, kw", [(grid, {"cv": 3}), (grid, {"cv": 0.25}),
                                      (rand, {"n_iter": 4}), (gibo, {"n_iter": 3})])
def test_item3_no_warning_leaves_fit(make, kw):
    X, y_d, y_n = neighbours(600)
    on_d = fit_recording(make(random_state=0, **kw), X, y_d)
    on_n = fit_recording(make(random_state=0, **kw), X, y_n)
    assert on_d[1] == on_n[1]
    # the only warning allowed is public: the too-few-rows warning, a function of n, the
    # space and the budget (none fires here)
    assert all(category is TooFewRowsWarning for category, _ in on_d[1])


@pytest.mark.parametrize("make, n, kw", [(grid, 100, {}), (rand, 50, {"n_iter": 50}),
                                         (gibo, 50, {"n_iter": 10})])
def test_item3_too_few_rows_is_given_once_and_alike_on_neighbours(make, n, kw):
    """Where every search has too few rows (one partition; 50 runs scored on 50 rows; ten
    gradients from 10 validation rows), each warns exactly once per fit, with the same
    message on both neighbours: the warning is a function of public quantities only."""
    X, y_d, y_n = neighbours(n)
    on_d = fit_recording(make(random_state=0, **kw), X, y_d)
    on_n = fit_recording(make(random_state=0, **kw), X, y_n)
    assert on_d[1] == on_n[1] and on_d[0] == on_n[0]
    assert [category for category, _ in on_d[1]] == [TooFewRowsWarning]
    assert f"n_samples={n} rows" in on_d[1][0][1]


def test_item3_worker_functions_are_silent():
    """Worker processes do not inherit warning filters: the worker functions silence."""
    from skdptune._seeding import SeedPlan
    from skdptune.evaluation._fit import candidate_template
    from skdptune.evaluation._holdout import ScoreNoise, _noisy_run
    from skdptune.evaluation._partitions import _chunk_utilities
    from skdptune.evaluation._scores import AccuracyScore, check_bounded_scorer

    X, y_d, _ = neighbours(200)
    template = candidate_template(lr(), {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("sentinel: recording works", UserWarning, stacklevel=1)
        _chunk_utilities([template], X, y_d, [0], [np.arange(200)],
                         check_bounded_scorer(None, None, lr()), 3, None, {}, 0.0,
                         SeedPlan(0), ("same", "same", 1.0), 200)
        _noisy_run(template, X, y_d, np.arange(150), np.arange(150, 200), AccuracyScore(), {},
                   False, ScoreNoise(AccuracyScore(), 50, 1.0), 0, 0, None, None)
    assert [str(w.message) for w in caught] == ["sentinel: recording works"]


# -- threads: warning filters are one list per process ---------------------------------------
def _in_threads(*functions):
    """Run ``functions`` in threads of this process; their return values, in order."""
    results = [None] * len(functions)

    def target(k, f):
        results[k] = f()

    threads = [threading.Thread(target=target, args=(k, f)) for k, f in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    return results


def _wait(event):
    assert event.wait(30), "the interleaving was not reached"


def _leak_outcome(meanwhile):
    """Whether diffprivlib's warning, emitted inside a fit's ``leak_warnings_as_errors`` after
    ``meanwhile()`` (another thread's moves), is still an error."""
    try:
        with leak_warnings_as_errors():
            meanwhile()
            warnings.warn("bounds read off the data", PrivacyLeakWarning, stacklevel=1)
    except PrivacyLeakError:
        return "error"
    return "missed"


@pytest.fixture
def own_filters():
    """Restore this process's warning filters whatever a thread left behind (the list saved
    on entry is put back on exit)."""
    with warnings.catch_warnings():
        yield


@pytest.mark.parametrize("saved", ["the worker task's silenced", "run_private"])
def test_a_stale_list_restored_by_another_thread_keeps_the_leak_an_error(saved, own_filters):
    """Code outside skdptune in another thread (a dask comm thread, a user's library) that
    leaves ``catch_warnings`` restores the list it saved -- one of ours, the worker task's or
    ``run_private``'s: that list must still make the leak an error for a fit in progress."""
    from skdptune._private import run_private, silenced

    fit_in, outside_in, fit_in_leak, outside_out = (threading.Event() for _ in range(4))
    outside_first = saved == "run_private"

    def outside():
        if not outside_first:
            _wait(fit_in)
        with warnings.catch_warnings():  # saves the list current now
            outside_in.set()
            _wait(fit_in_leak)
        outside_out.set()

    def fit():
        if outside_first:
            _wait(outside_in)
        with silenced():
            fit_in.set()
            _wait(outside_in)
            return _leak_outcome(lambda: (fit_in_leak.set(), _wait(outside_out)))

    if outside_first:
        assert run_private(_in_threads, outside, fit)[1] == "error"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # a worker process's own filters
            assert _in_threads(outside, fit)[1] == "error"


def test_worker_tasks_take_turns_in_a_process(own_filters):
    """Tasks that run in threads of one process (dask's in-process or multi-threaded workers)
    enter ``silenced`` one at a time, so their filter contexts nest."""
    from skdptune._private import silenced

    first_in, second_trying, second_in = (threading.Event() for _ in range(3))

    def first():
        with silenced():
            first_in.set()
            _wait(second_trying)
            overlapped = second_in.wait(1.0)
            return overlapped, _leak_outcome(lambda: None)

    def second():
        _wait(first_in)
        second_trying.set()
        with silenced():
            second_in.set()

    overlapped, outcome = _in_threads(first, second)[0]
    assert not overlapped and outcome == "error"


@pytest.mark.parametrize("task", ["_noisy_run", "_noisy_runs_batched"])
def test_searches_fitted_in_threads_take_turns(monkeypatch, own_filters, task):
    """Two searches fitted in two threads of one process (a user's thread pool) run their
    ``fit`` one after the other: one cannot restore, in the middle of the other's fits, the
    filters that predate its own ``fit``. (Runs fitted one by one: a task per run; batched: a
    task per group of runs.)"""
    import time

    from skdptune.evaluation import _holdout

    # several tasks per fit either way (batched: a group for as few as one run each)
    monkeypatch.setattr(_holdout, "RUNS_PER_GROUP", 1)
    per_fit = 6 if task == "_noisy_run" else _holdout.batched_groups(6, 480)
    assert per_fit > 1

    if task == "_noisy_run":
        monkeypatch.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
    events, real = [], getattr(_holdout, task)

    def recorded(*args, **kwargs):
        events.append(threading.get_ident())
        time.sleep(0.02)
        return real(*args, **kwargs)

    monkeypatch.setattr(_holdout, task, recorded)
    X, y_d, _ = neighbours(600)
    y_d[:300] = 1

    def fit():
        return rand(random_state=0, n_iter=6, distribution="fixed", n_jobs=1).fit(X, y_d)

    _in_threads(fit, fit)
    switches = sum(a != b for a, b in zip(events[:-1], events[1:], strict=True))
    assert len(events) == 2 * per_fit and switches == 1


@pytest.mark.parametrize("case", ["batched", "one_by_one", "some_batchable", "rare_loose"])
def test_the_number_of_joblib_tasks_does_not_tell_the_number_of_runs(monkeypatch, case):
    """Whoever watches the joblib tasks of a fit (a dask dashboard, the worker processes)
    learns public facts only. Their number: where the space's runs are batched (a public
    decision), ``batched_groups`` of the public E[K]; elsewhere ``one_by_one_tasks(n_jobs)`` --
    also when the realised K is smaller than that count (empty tasks), and when the candidates
    drawn happen to be all batchable in a space that is not (a loose ``tol`` next to a tight
    one). Their function (a dashboard shows its name): the same, also when a rare loose
    candidate drawn in a batched space sends a task one by one. A task per run, a group count
    cut by K, a layout or a function chosen by the drawn candidates, fails."""
    from skdptune.evaluation import _holdout
    from skdptune.public import _dry_run

    monkeypatch.setattr(_holdout, "RUNS_PER_GROUP", 4)  # E[K] = 8: two groups when batched
    # not what this test watches: the dry run's 200 fits of the large grid, at every seed
    monkeypatch.setattr(_dry_run, "DRY_RUN_MAX_FITS", 8)
    # 651 candidates: above CHECKED_GRID (512), so the public decision checks 32 fixed draws,
    # all tight here (batched); 1 in 31 candidates is loose (600 values of C took 27 s)
    rare = {"C": np.logspace(-3, 3, 21).tolist(), "tol": [1e-4] * 30 + [1e-2]}
    spaces = {"batched": (lr(), SPACE),
              "one_by_one": (GaussianNB(bounds=(-1.0, 1.0)), {"var_smoothing": [1e-9, 1e-6]}),
              "some_batchable": (lr(), {"C": [0.1, 1.0, 10.0, 3.0, 0.3], "tol": [1e-4] * 9
                                        + [1e-2]}),
              "rare_loose": (lr(), rare)}
    estimator, space = spaces[case]
    names, real_delayed = set(), _holdout.delayed

    def delayed(function):
        names.add(function.__name__)
        return real_delayed(function)

    monkeypatch.setattr(_holdout, "delayed", delayed)
    counts = []
    for task in ("_noisy_runs_batched", "_noisy_runs"):
        real = getattr(_holdout, task)

        def recorded(templates, *args, real=real, task=task, **kwargs):
            counts[-1].append(len(templates))
            paths[-1].add(task)
            return real(templates, *args, **kwargs)

        monkeypatch.setattr(_holdout, task, recorded)
    X, y_d, _ = neighbours(200)
    y_d[:100] = 1
    paths = []
    for seed in range(12):
        counts.append([])
        paths.append(set())
        rand(estimator=estimator, space=space, random_state=seed, n_iter=8,
             n_jobs=1).fit(X, y_d)
    runs = [sum(c) for c in counts]
    assert min(runs) < 2 and max(runs) > 4  # fewer runs than tasks, and more
    expected = 2 if case in ("batched", "rare_loose") else _holdout.one_by_one_tasks(1)
    assert {len(c) for c in counts} == {expected}
    assert names == {"_runs_task"}
    if case == "rare_loose":  # the public decision batches, and some fits drew a loose tol
        from skdptune.evaluation._holdout import runs_batched

        assert runs_batched(estimator, space, 0.0)
        assert {"_noisy_runs_batched"} in paths and {"_noisy_runs"} in paths


def test_a_leak_outside_a_fit_leaves_the_private_region_as_a_leak_error():
    """A ``PrivacyLeakWarning`` raised in the private region outside a fit's own filter (the
    region's filter makes it an error) leaves as ``PrivacyLeakError``, raised afresh, with a
    fixed message."""
    from skdptune._private import run_private

    with pytest.raises(PrivacyLeakError, match="^A component read a privacy parameter") as info:
        run_private(warnings.warn, "row 7 has age 93", PrivacyLeakWarning)
    assert "93" not in str(info.value)  # a fixed message: the warning's text is not released
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_private_fits_never_run_in_threads(monkeypatch):
    """Under a thread-based joblib backend the private fits run one after the other in the
    thread that entered the private region (its filters stay the only ones in play), with
    results identical to n_jobs=1."""
    import threading as th

    from skdptune import DPGIBOSearchCV
    from skdptune.evaluation import _holdout, _losses, _partitions

    threads = []

    def spy(module, name):
        real = getattr(module, name)

        def recorded(*args, **kwargs):
            threads.append(th.current_thread() is th.main_thread())
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    for module, name in ((_holdout, "_noisy_run"), (_holdout, "_noisy_runs_batched"),
                         (_losses, "_losses_at"),
                         (_partitions, "_candidates_utilities"),
                         (_partitions, "_chunk_utilities")):
        spy(module, name)
    X, y_d, _ = neighbours(1200)
    y_d[:600] = 1
    searches = [
        lambda: rand(random_state=0, n_iter=4),
        lambda: grid(random_state=0),
        lambda: grid(random_state=0, estimator=GaussianNB(bounds=(-1.0, 1.0)),
                     space={"var_smoothing": [1e-9, 1e-3]}),
        lambda: DPGIBOSearchCV(lr(), {"C": (0.1, 10.0)}, n_iter=2, random_state=0,
                               classes=[0, 1], accountant=BudgetAccountant()),
    ]
    for make in searches:
        with parallel_backend("threading", n_jobs=2):
            threaded = make().set_params(n_jobs=2).fit(X, y_d)
        assert threads and all(threads), type(threaded).__name__
        threads.clear()
        alone = make().set_params(n_jobs=1).fit(X, y_d)
        assert threaded.best_params_ == alone.best_params_
        np.testing.assert_array_equal(threaded.predict_proba(X), alone.predict_proba(X))


# -- item 4: the label set leaks ---------------------------------------------------------------
@pytest.mark.parametrize("make", [grid, rand, gibo])
@pytest.mark.parametrize("estimator", [lr(), GaussianNB(bounds=(-1.0, 1.0))],
                         ids=["logistic", "naive_bayes"])
def test_item4_classes_and_shapes_are_the_declared_set(make, estimator):
    X, y_d, y_n = neighbours(600, new_label=2)
    y_d[1:200] = 1
    y_n[1:200] = 1
    space = {"C": [0.1, 1.0]} if isinstance(estimator, LogisticRegression) else {
        "var_smoothing": [1e-9, 1e-3]}
    fits = [make(estimator=clone(estimator), space=space, classes=[0, 1, 2], random_state=0)
            .fit(X, y) for y in (y_d, y_n)]
    assert [tuple(s.classes_) for s in fits] == [(0, 1, 2)] * 2
    assert [tuple(s.best_estimator_.classes_) for s in fits] == [(0, 1, 2)] * 2
    shape = "coef_" if isinstance(estimator, LogisticRegression) else "theta_"
    assert getattr(fits[0].best_estimator_, shape).shape == \
        getattr(fits[1].best_estimator_, shape).shape


def test_item4_string_labels_and_pandas():
    pd = pytest.importorskip("pandas")
    X, y_d, _ = neighbours(600)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    labels = pd.Series(np.where(y_d == 1, "yes", "no"))
    search = rand(classes=["no", "yes"], random_state=0).fit(frame, labels)
    assert list(search.classes_) == ["no", "yes"]
    assert set(search.predict(frame)) <= {"no", "yes"}


@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_item4_undeclared_label_is_refused_with_a_fixed_message(make):
    X, y_d, _ = neighbours(600, new_label=7)
    acc = BudgetAccountant()
    with pytest.raises(DomainError) as info:
        make(accountant=acc).fit(X, y_d)
    assert "7" not in str(info.value)
    assert acc.spent_budget == []


#: what a search decides before reading the data, and publishes only with a successful fit
_PLANNED = ("scorer_", "privacy_split_", "epsilon_model_", "epsilon_run_")


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_a_refused_fit_leaves_no_fitted_attribute(kind):
    """A fit refused at the domain check (after the plan was made) leaves the search unfitted:
    ``check_is_fitted`` raises and ``predict`` says ``NotFittedError``; it once wrote the
    planned attributes first, so the search looked fitted and ``predict`` raised
    ``AttributeError``."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    X, y_d, _ = neighbours(600, new_label=7)
    search = _search_of_kind(kind)
    with pytest.raises(DomainError):
        search.fit(X, y_d)
    assert not [name for name in vars(search) if name.endswith("_")]
    with pytest.raises(NotFittedError):
        check_is_fitted(search)
    if search.refit:  # with refit=False, scikit-learn's AttributeError comes first
        with pytest.raises(NotFittedError):
            search.predict(X)


@pytest.mark.parametrize("kind", ["grid", "random", "gibo"])
def test_a_refused_refit_keeps_the_last_fit_consistent(kind):
    """After a fit, ``set_params`` and a refit refused at the domain check, every fitted
    attribute is still the first fit's: the budget split agrees with ``privacy_spent_``."""
    X, y_d, _ = neighbours(600)
    search = _search_of_kind(kind, epsilon=2.0, random_state=0).fit(X, y_d)
    before = {name: getattr(search, name) for name in _PLANNED if hasattr(search, name)}
    spent = search.privacy_spent_
    assert before and spent.epsilon == pytest.approx(2.0)
    search.set_params(epsilon=3.0)
    X_bad, y_bad, _ = neighbours(600, new_label=7)
    with pytest.raises(DomainError):
        search.fit(X_bad, y_bad)
    assert search.privacy_spent_ is spent
    for name, value in before.items():
        assert getattr(search, name) is value
    if kind == "grid":
        split = search.privacy_split_
        assert split["epsilon_tuning"] + split["epsilon_model"] == pytest.approx(spent.epsilon)


def test_item4_classifier_needs_a_declared_label_set():
    X, y_d, _ = neighbours(600)
    with pytest.raises(ValueError, match="classes="):
        grid(classes=None).fit(X, y_d)


def test_item4_the_estimators_own_classes_declare_the_set():
    from diffprivlib.models import DecisionTreeClassifier

    X, y_d, _ = neighbours(600)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    search = grid(estimator=tree, space={"max_depth": [2, 3]}, classes=None,
                  random_state=0).fit(X, y_d)
    assert list(search.classes_) == [0, 1]
    with pytest.raises(ValueError, match="differs"):
        grid(estimator=tree, space={"max_depth": [2]}, classes=[0, 1, 2]).fit(X, y_d)


def test_non_finite_features_are_outside_the_domain():
    X, y_d, _ = neighbours(600)
    X[5, 1] = np.nan
    acc = BudgetAccountant()
    with pytest.raises(DomainError, match="NaN"):
        grid(accountant=acc).fit(X, y_d)
    assert acc.spent_budget == []


def _search_of_kind(kind, **kw):
    if kind == "grid":
        return grid(**kw)
    if kind == "random":  # diffprivlib's LogisticRegression: the batched runs
        return rand(**kw)
    if kind == "random_nb":  # one run at a time
        return rand(estimator=GaussianNB(bounds=(-1.0, 1.0)),
                    space={"var_smoothing": [1e-9, 1e-3]}, **kw)
    return DPGIBOSearchCV(lr(), {"C": (0.1, 10.0)}, n_iter=2, classes=[0, 1],
                          accountant=kw.pop("accountant", BudgetAccountant()), **kw)


@pytest.mark.parametrize("kind", ["grid", "random", "random_nb", "gibo"])
def test_assume_finite_does_not_let_a_nan_record_into_the_domain(kind):
    """scikit-learn's ``assume_finite=True`` switches off diffprivlib's own check of non-finite
    rows: the dry run's NaN fit passed, the domain took NaN, and one NaN record made the
    returned model all zeros or NaN (20 of 20 fits against 0 of 20, charged on both sides).
    ``fit`` runs under ``assume_finite=False`` whatever the user's setting."""
    X, y_d, _ = neighbours(600)
    y_d[:300] = 1
    X[5, 1] = np.nan
    acc = BudgetAccountant()
    with config_context(assume_finite=True), pytest.raises(DomainError, match="NaN"):
        _search_of_kind(kind, accountant=acc, random_state=0, n_jobs=2).fit(X, y_d)
    assert acc.spent_budget == []
    assert get_config()["assume_finite"] is False


@pytest.mark.parametrize("kind", ["grid", "random", "random_nb", "gibo"])
def test_assume_finite_does_not_change_what_a_seeded_search_returns(kind):
    """The setting changed the path (``assume_finite`` made the runs leave their batched fits,
    coefficients 1e-3 apart); now it changes nothing."""
    X, y_d, _ = neighbours(600)
    y_d[:300] = 1
    plain = _search_of_kind(kind, random_state=0).fit(X, y_d)
    with config_context(assume_finite=True):
        assumed = _search_of_kind(kind, random_state=0).fit(X, y_d)
    assert assumed.best_params_ == plain.best_params_
    np.testing.assert_array_equal(assumed.predict_proba(X), plain.predict_proba(X))


def test_forked_workers_draw_their_own_global_randomness():
    """Unseeded, diffprivlib's tree draws its structure and an empty leaf's class from numpy's
    global generator. Workers forked by joblib's ``multiprocessing`` backend started with the
    parent's: 36 of 80 runs shared another run's tree structure and the refit repeated a
    run's in 10 of 10 fits, where the analysis of repetition assumes
    independent runs. A worker task now reseeds that generator; the calling process's stays
    the user's."""
    from diffprivlib.models import DecisionTreeClassifier

    from skdptune.evaluation import _holdout

    runs = []
    real = _holdout.HoldoutEvaluator.run

    def spy(self, *args, **kwargs):
        scores, models = real(self, *args, **kwargs)
        runs.append(models)
        return scores, models

    def structure(tree):
        return tuple(tree.tree_.threshold.round(12)) + tuple(tree.tree_.feature)

    X, y_d, _ = neighbours(300)
    y_d[:150] = 1
    tree = DecisionTreeClassifier(bounds=(-1.0, 1.0), classes=[0, 1], max_depth=3)
    def fitted_structures(n_jobs):
        runs.clear()
        # the space sets the epsilon: as configured (epsilon=None)
        search = rand(estimator=tree, space={"epsilon": [1.0]}, epsilon=None,
                      distribution="fixed", n_iter=8, refit=True, n_jobs=n_jobs).fit(X, y_d)
        return [structure(model) for model in runs[0]], structure(search.best_estimator_)

    reseeds = mock.patch.object(np.random, "seed", wraps=np.random.seed)
    with mock.patch.object(_holdout.HoldoutEvaluator, "run", spy), reseeds as reseed:
        for _ in range(2):
            with parallel_backend("multiprocessing", n_jobs=2):
                structures, refitted = fitted_structures(2)
            assert len(set(structures)) == len(structures) == 8
            assert refitted not in structures
        # the calling process's generator stays the user's (its calls are the only ones this
        # mock sees: a forked worker calls its own copy), whatever runs the tasks
        fitted_structures(1)
        with parallel_backend("threading", n_jobs=2):
            fitted_structures(2)
    assert reseed.call_count == 0


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="longdouble is float64 on this platform")
def test_a_value_beyond_float64_is_outside_the_domain_whatever_the_dtype():
    """A ``longdouble`` value above float64's range is finite as given and infinite as the fits
    see it (diffprivlib converts to float64): refused before the private part, not a
    ``PrivateFitError`` on one side of a neighbouring pair only."""
    X, y_d, _ = neighbours(600)
    X = X.astype(np.longdouble)
    rand(random_state=0).fit(X, y_d)
    X[5, 1] = np.longdouble("1e400")
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no data-dependent overflow warning either
        with pytest.raises(DomainError, match="infinite"):
            rand(random_state=0, accountant=acc).fit(X, y_d)
    assert acc.spent_budget == []


@pytest.mark.parametrize("huge", [10**400, "longdouble"], ids=["python_int", "longdouble"])
def test_a_number_beyond_float64_in_an_object_array_is_outside_the_domain(huge):
    """In an object array a Python int too large for a float, or a longdouble beyond float64's
    range, is infinite as the fits see it: a DomainError with its fixed message (not the
    conversion's OverflowError naming the value, nor its overflow warning)."""
    X, y_d, _ = neighbours(600)
    X = X.astype(object)
    X[5, 1] = huge if huge != "longdouble" else np.longdouble("1e400")
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DomainError, match="infinite"):
            rand(random_state=0, accountant=acc).fit(X, y_d)
    assert acc.spent_budget == []


def _complex_below_minus_100(X):
    return np.emath.sqrt(np.asarray(X) + 100.0)


def assert_refused_on_the_neighbour(search, X, X2, y):
    """``search`` fits ``X``; on its neighbour ``X2`` it raises the fixed-message
    ``DomainError`` before any private computation, without a chained exception that could
    quote a value, and charges nothing."""
    clone(search).set_params(accountant=BudgetAccountant()).fit(X, y)
    acc = BudgetAccountant()
    # either fixed message: the model-input check's, or the raw check's (a missing number in
    # a mixed object array is read by the raw check, entry by entry)
    with pytest.raises(DomainError, match="^X contains (a row that|missing)") as info:
        clone(search).set_params(accountant=acc).fit(X2, y)
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert acc.spent_budget == []


def _dp_scaler():
    from diffprivlib.models import StandardScaler

    return StandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))


def _pipeline_cases():
    """``(name, estimator, X, X')``: a pipeline whose data-independent steps turn one record of
    ``X'`` (a finite number, or a category the encoder does not know) into what its
    diffprivlib model cannot take, or raise on it, and a clean ``X``; then features that
    convert to no number or to a missing one without any step (a mixed object array, pandas'
    nullable dtypes)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, PolynomialFeatures

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 2))
    cases = []
    poly = Pipeline([("poly", PolynomialFeatures(degree=3)), ("lr", lr())])
    X2 = X.copy()
    X2[7, 0] = 1e110  # finite, and its cube overflows
    cases.append(("polynomial_overflow", poly, X, X2))
    X3 = X.copy()
    X3[7, -1] = 1.0  # a row the user's row-wise step raises on (with the value in its message)
    cases.append(("step_raises", _failing_pipe(), X, X3))
    nested = Pipeline([("model", Pipeline([("poly", PolynomialFeatures(degree=3)),
                                           ("lr", lr())]))])
    cases.append(("nested_pipeline_overflow", nested, X, X2))
    # a composite first step with a private branch: what its data-independent branch gives
    # the model, and what its private branch receives, are read too
    free_branch = Pipeline([
        ("ct", ColumnTransformer([("scale", _dp_scaler(), [1]),
                                  ("poly", PolynomialFeatures(degree=3), [0])])),
        ("lr", lr())])
    cases.append(("composite_free_branch_overflow", free_branch, X, X2))
    private_branch = Pipeline([
        ("ct", ColumnTransformer([("branch", Pipeline([("poly", PolynomialFeatures(degree=3)),
                                                       ("scale", _dp_scaler())]), [0])],
                                 remainder="passthrough")),
        ("lr", lr())])
    cases.append(("composite_private_branch_overflow", private_branch, X, X2))
    X4 = X.copy()
    X4[7, 0] = -200.0  # np.emath.sqrt makes the whole batch complex, which diffprivlib refuses
    complex_pipe = Pipeline([("sqrt", FunctionTransformer(_complex_below_minus_100)),
                             ("lr", lr())])
    cases.append(("complex_output", complex_pipe, X, X4))
    cats = rng.randint(-2, 3, size=(300, 2))  # integers: the dry run's are rounded normals
    ordinal = Pipeline([
        ("ct", ColumnTransformer([("oe", OrdinalEncoder(
            categories=[list(range(-9, 10))], handle_unknown="use_encoded_value",
            unknown_value=np.nan), [0])], remainder="passthrough")),
        ("lr", LogisticRegression(epsilon=1.0, data_norm=20.0))])
    cats2 = cats.copy()
    cats2[7, 0] = 11  # a category nobody declared: encoded as NaN
    cases.append(("ordinal_unknown_nan", ordinal, cats, cats2))
    mixed = np.empty((300, 2), dtype=object)
    mixed[:, 0] = rng.choice(["a", "b"], 300)
    mixed[:, 1] = X[:, 1]
    onehot = Pipeline([
        ("ct", ColumnTransformer([("oh", OneHotEncoder(categories=[["a", "b"]],
                                                       handle_unknown="ignore"), [0])],
                                 remainder="passthrough")),
        ("lr", lr())])
    mixed2 = mixed.copy()
    mixed2[7, 1] = np.nan  # the numeric column of a mixed object array
    cases.append(("object_array_nan", onehot, mixed, mixed2))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"f": X[:, 0], "b": pd.array(X[:, 1] > 0, dtype="boolean")})
    frame2 = frame.copy()
    frame2.iloc[7, 1] = pd.NA
    cases.append(("nullable_boolean_na", lr(), frame, frame2))
    return cases


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand, "gibo"])
@pytest.mark.parametrize("case", _pipeline_cases(), ids=lambda case: case[0])
def test_rows_the_first_private_step_cannot_take_are_outside_the_domain(make, case):
    """What the first diffprivlib model receives -- after the data-independent steps before
    it -- is part of the domain: one record that it could not take (an overflow, an unknown
    category encoded as NaN, a missing value in a column the raw check does not read) must not
    decide, inside the private part, between a model and ``PrivateFitError``. It raises the
    fixed-message ``DomainError`` before any private computation; nothing is charged."""
    _, estimator, X, X2 = case
    y = (np.arange(300) % 2).astype(int)
    final = f"{estimator.steps[-1][0]}__C" if isinstance(estimator, Pipeline) else "C"
    if final == "model__C":
        final = "model__lr__C"
    if make == "gibo":
        search = DPGIBOSearchCV(estimator, {final: (0.1, 10.0, "log")}, n_iter=2,
                                classes=[0, 1], random_state=0)
    else:
        search = make(estimator=estimator, space={final: [0.1, 1.0]}, random_state=0)
    assert_refused_on_the_neighbour(search, X, X2, y)


@pytest.mark.parametrize("make", [grid, rand])
def test_a_value_a_tree_reads_as_infinite_is_outside_the_domain(make):
    """diffprivlib's trees read their rows as float32: a finite float64 above 3.4e38 is
    infinite there, so it is refused like an infinite value (it used to make the fits fail
    inside, on one neighbour only)."""
    from diffprivlib.models import DecisionTreeClassifier

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    search = make(estimator=tree, space={"max_depth": [2, 3]}, random_state=0)
    X2 = X.copy()
    X2[7, 0] = 1e39
    assert_refused_on_the_neighbour(search, X, X2, y)


def _after_private_transformer_cases():
    """``(name, estimator, value)``: a pipeline in which a step reads what a diffprivlib
    transformer outputs, and a finite value that, in one record, used to reach that step so
    large that the fit failed inside -- on that dataset, not on its neighbour -- because a
    private transformer clips the rows in ``fit`` but not in ``transform``."""
    from diffprivlib.models import PCA
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import PolynomialFeatures

    pca = PCA(n_components=2, epsilon=0.5, bounds=(-1.0, 1.0), data_norm=2.0)
    return [
        # (1.5e308 - mean) / scale is infinite: the model's own validation raised
        ("scaler_then_model", Pipeline([("scale", _dp_scaler()), ("lr", lr())]), 1.5e308),
        # the limit is 1e50 here (the cube of the scaler's largest output must be finite)
        ("scaler_then_cube", Pipeline([("scale", _dp_scaler()),
                                       ("poly", PolynomialFeatures(degree=3)),
                                       ("lr", lr())]), 1e60),
        ("pca_then_scaler", Pipeline([("pca", pca), ("scale", _dp_scaler()), ("lr", lr())]),
         1.5e308),
        ("composite_then_model", Pipeline([
            ("ct", ColumnTransformer([("scale", _dp_scaler(), [0])], remainder="passthrough")),
            ("lr", lr())]), 1.5e308),
    ]


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand, "gibo"])
@pytest.mark.parametrize("case", _after_private_transformer_cases(), ids=lambda case: case[0])
def test_a_value_a_private_transformer_passes_on_too_large_is_outside_the_domain(make, case):
    """The rows a private transformer followed by other steps reads have a public magnitude
    limit (skdptune.public._magnitude): within it, its output is bounded whatever its noise and the
    steps after it take it; a record beyond it is refused with the fixed ``DomainError``
    before any private computation, nothing charged -- not a ``PrivateFitError`` on that
    dataset only."""
    _, estimator, value = case
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    if make == "gibo":
        search = DPGIBOSearchCV(estimator, {"lr__C": (0.1, 10.0, "log")}, n_iter=2,
                                classes=[0, 1], random_state=0)
    else:
        search = make(estimator=estimator, space={"lr__C": [0.1, 1.0]}, random_state=0)
    X2 = X.copy()
    X2[7, 0] = value
    assert_refused_on_the_neighbour(search, X, X2, y)


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand])
def test_a_tree_after_a_private_scaler_reads_a_float32_bound(make):
    """A diffprivlib tree reads float32, so the scaler's largest output must stay below
    3.4e38: the limit is 1e20 (bounds of magnitude 1), and a record of 1e30 -- which the tree
    alone would take -- is refused; a record of 1e19 is in the domain."""
    from diffprivlib.models import DecisionTreeClassifier

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-50.0, 50.0), classes=[0, 1])
    search = make(estimator=Pipeline([("scale", _dp_scaler()), ("tree", tree)]),
                  space={"tree__max_depth": [2, 3]}, random_state=0)
    X2 = X.copy()
    X2[7, 0] = 1e30
    assert_refused_on_the_neighbour(search, X, X2, y)
    X2[7, 0] = 1e19
    clone(search).fit(X2, y)


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand])
def test_a_scaler_on_float32_rows_gets_float32s_limit(make):
    """A scaler keeps float32 rows in float32 (scikit-learn's transform), where its largest
    output overflows far sooner: the probe outputs the transformer's own float type, so the
    limit is 1e20, and a float32 record of 3e38 -- which made the fit fail inside on one
    neighbour (found by review) -- is refused."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2)).astype(np.float32)
    y = (np.arange(300) % 2).astype(int)
    search = make(estimator=Pipeline([("scale", _dp_scaler()), ("lr", lr())]),
                  space={"lr__C": [0.1, 1.0]}, random_state=0)
    X2 = X.copy()
    X2[7, 0] = 3e38
    assert_refused_on_the_neighbour(search, X, X2, y)


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
def test_every_value_of_a_step_after_a_private_transformer_gets_its_limit():
    """A step after a private transformer drawn from a distribution: its support is listed
    and every value probed -- a degree of 6 drawn once in a hundred, never by the dry run's
    draws, gets a limit of 1e30 (the sixth power of the scaler's output must be finite), so
    1e60 is refused (the dry run's draws alone gave 1e100, and a run that drew 6 failed
    inside, found by review); a distribution whose support cannot be listed is refused
    before any data is read."""
    from scipy.stats import geom, rv_discrete
    from sklearn.preprocessing import PolynomialFeatures

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    pipe = Pipeline([("scale", _dp_scaler()), ("poly", PolynomialFeatures()), ("lr", lr())])
    rare = rv_discrete(values=([1, 6], [0.99, 0.01]))
    search = rand(estimator=pipe, space={"poly__degree": rare}, n_iter=2, random_state=0)
    X2 = X.copy()
    X2[7, 0] = 1e60
    assert_refused_on_the_neighbour(search, X, X2, y)
    acc = BudgetAccountant()
    unbounded = rand(estimator=pipe, space={"poly__degree": geom(0.8)}, accountant=acc,
                     random_state=0)
    with pytest.raises(ValueError, match="'poly__degree' may set a private transformer"):
        unbounded.fit(X, y)
    assert acc.spent_budget == []


@pytest.mark.parametrize("make", [grid, rand])
def test_a_private_transformer_no_limit_can_protect_is_refused_before_any_data(make,
                                                                            monkeypatch):
    """A whitened PCA divides by noisy variances no public number bounds from below, and a
    tree after a scaler with bounds of 1e30 may receive more than float32 holds whatever the
    rows: public ValueErrors before the data is read, nothing charged."""
    from diffprivlib.models import PCA, DecisionTreeClassifier, StandardScaler

    import skdptune.public._preflight

    def no_reading(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(skdptune.public._preflight, "check_domain", no_reading)
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    whitened = Pipeline([("pca", PCA(n_components=2, epsilon=0.5, bounds=(-1.0, 1.0),
                                     data_norm=2.0, whiten=True)), ("lr", lr())])
    wide = Pipeline([("scale", StandardScaler(epsilon=0.5, bounds=(-1e30, 1e30))),
                     ("lr", DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0),
                                                   classes=[0, 1]))])
    for estimator, cause in [(whitened, "no public number bounds"), (wide, "float32")]:
        acc = BudgetAccountant()
        search = make(estimator=estimator, space={}, accountant=acc, random_state=0)
        with pytest.raises(ValueError, match=f"could not take its output(?s:.*){cause}"):
            search.fit(X, y)
        assert acc.spent_budget == []


@pytest.mark.parametrize("make", [grid, rand])
def test_whether_a_label_is_declared_does_not_depend_on_the_other_labels(make):
    """A list of labels is compared label by label: numpy would turn ``[7, ..., "7"]`` into
    strings, where 7 equals the class "7", and ``[7, ..., 7]`` into integers, where it does
    not -- one record deciding whether another is in the domain. With string classes each
    label is compared as its string, whatever the others (the int 7 is the class "7" in both
    lists, the model the same); a missing label (pd.NA), whose comparison raises, is refused
    with the fixed message and no __context__."""
    pd = pytest.importorskip("pandas")
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    search = make(estimator=GaussianNB(bounds=(-1.0, 1.0)), classes=["7", "yes"],
                  space={"var_smoothing": [1e-9]}, random_state=0)
    strings = ["7" if i % 2 else "yes" for i in range(300)]
    models = []
    for labels in (strings, [7 if i % 2 else "yes" for i in range(300)]):
        y = list(labels)
        y[1] = 7
        models.append(clone(search).fit(X, y).best_estimator_)
    assert [m.classes_.tolist() for m in models] == [["7", "yes"]] * 2
    np.testing.assert_array_equal(models[0].theta_, models[1].theta_)
    missing = pd.Series(strings, dtype="string")
    missing[1] = pd.NA
    acc = BudgetAccountant()
    with pytest.raises(DomainError, match="^y contains a label") as info:
        clone(search).set_params(accountant=acc).fit(X, missing)
    assert info.value.__context__ is None and acc.spent_budget == []


def test_labels_of_mixed_types_and_0d_arrays_keep_fitting():
    """Declared classes of mixed types are normalised by np.unique (``[0, "a"]`` becomes
    ``["0", "a"]``), so a label 0 is compared as "0"; a 0-d array is its item."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    nb = GaussianNB(bounds=(-1.0, 1.0))
    mixed = rand(estimator=nb, classes=[0, "a"], space={"var_smoothing": [1e-9]},
                 random_state=0).fit(X, [0 if i % 2 else "a" for i in range(300)])
    assert mixed.best_estimator_.classes_.tolist() == ["0", "a"]
    arrays = rand(estimator=nb, space={"var_smoothing": [1e-9]}, random_state=0).fit(
        X, [np.array(i % 2) for i in range(300)])
    assert arrays.best_estimator_.classes_.tolist() == [0, 1]


@pytest.mark.parametrize("where", ["X", "y"])
def test_a_numpy_complex_number_is_outside_the_domain_without_a_warning(
        where, stand_in_regressor):
    """numpy's complex scalars in an object array convert to floats with a ComplexWarning that
    depends on the values: refused with the fixed message, no warning -- for a regressor's
    target too (it used to fit, with the warning telling the neighbours apart)."""
    from diffprivlib.models import LinearRegression

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 2)).astype(object)
    y = (X[:, 0].astype(float) + 0.1 * rng.randn(300)).astype(object)
    reg = LinearRegression(bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0))
    search = rand(estimator=reg, classes=None, space={"copy_X": [True, False]},
                  scoring="squared_error", score_clip=4.0, random_state=0)
    clone(search).fit(X, y)
    (X if where == "X" else y)[7] = np.complex128(0.3 + 0.5j) if where == "y" else [
        np.complex128(0.3 + 0.5j), 0.1]
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DomainError):
            clone(search).set_params(accountant=acc).fit(X, y)
    assert acc.spent_budget == []


@pytest.mark.parametrize("make", [grid, rand])
def test_each_first_private_model_reads_the_rows_in_its_own_float_type(make):
    """Two candidates with the same (empty) prefix and different models: the tree reads
    float32, where 1e39 is infinite, whichever candidate the check meets first."""
    from diffprivlib.models import DecisionTreeClassifier

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    X[7, 0] = 1e39
    y = (np.arange(300) % 2).astype(int)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    for models in ([lr(), tree], [tree, lr()]):
        pipe = Pipeline([("model", models[0])])
        acc = BudgetAccountant()
        with pytest.raises(DomainError, match="^X contains a row that"):
            make(estimator=pipe, space={"model": models}, accountant=acc,
                 random_state=0).fit(X, y)
        assert acc.spent_budget == []


def _poly_pipe():
    from sklearn.preprocessing import PolynomialFeatures

    return Pipeline([("poly", PolynomialFeatures()), ("lr", lr())])


def _rare_degree_three():
    from scipy import stats

    return stats.rv_discrete(values=([1, 3], [0.999, 0.001]))


@pytest.mark.parametrize("degree", [[1] * 9 + [3], "rare", "randint"],
                         ids=["list", "rv_discrete", "randint"])
def test_every_value_of_a_step_in_front_of_the_model_is_checked(degree):
    """A space with a distribution is dry-run on 10 seeded draws: a degree whose cube
    overflows on one record, but which none of the draws holds, used to pass the domain check
    and make a run fail inside (on that neighbour only). Every value a step in front of the
    model can take -- a list's, a discrete distribution's support -- is now checked."""
    from scipy import stats

    if degree == "rare":
        degree = _rare_degree_three()
    elif degree == "randint":
        degree = stats.randint(1, 4)
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    space = {"poly__degree": degree, "lr__C": stats.loguniform(0.1, 10.0)}
    search = rand(estimator=_poly_pipe(), space=space, random_state=0)
    if not hasattr(degree, "dist"):  # a list, an unfrozen rv_discrete
        # the point of the test: the dry run's draws miss the degree that overflows
        assert {c["poly__degree"] for c in search._search_space().dry_run_candidates()} == {1}
    X2 = X.copy()
    X2[7, 0] = 1e110  # finite; its square is too, its cube is not
    assert_refused_on_the_neighbour(search, X, X2, y)


def _clipped_scaler(epsilon):
    """A private scaler behind a clip to its bounds (what a step after it receives is then
    bounded, which keeps the documented limit out of the next test)."""
    return Pipeline([("clip", FunctionTransformer(np.clip, kw_args={"a_min": -1.0,
                                                                     "a_max": 1.0})),
                     ("sc", _dp_scaler().set_params(epsilon=epsilon))])


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand])
def test_a_step_that_a_replacement_puts_in_front_of_the_model_is_checked(make):
    """Found by a review: with a private scaler first, the ``PolynomialFeatures`` after it is
    no step *in front of* the model, so its degree was not listed -- but a replacement of the
    scaler by ``"passthrough"``, which no dry-run candidate held, puts it there. Whether a
    parameter shapes the model's input is now asked of every structure the space's lists can
    build (the grid case: a ``range`` made the dry run sample the grid)."""
    from scipy import stats

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    pipe = Pipeline([("s1", _clipped_scaler(0.5)), ("poly", _poly_pipe().steps[0][1]),
                     ("lr", lr())])
    scalers = [_clipped_scaler(e) for e in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)]
    if make is grid:
        space = {"s1": [*scalers, "passthrough"], "poly__degree": [3],
                 "lr__max_iter": range(100, 104)}
    else:
        space = {"s1": [*scalers, "passthrough"], "poly__degree": stats.randint(3, 4),
                 "lr__C": stats.loguniform(0.1, 10.0)}
    search = make(estimator=pipe, space=space, random_state=0)
    if make is rand:  # the point of the test: no dry-run candidate puts poly in front
        assert all(c["s1"] != "passthrough" for c in search._search_space().dry_run_candidates())
    X2 = X.copy()
    X2[7, 0] = 1e110
    assert_refused_on_the_neighbour(search, X, X2, y)


def test_a_range_or_any_sequence_is_a_list_of_values():
    """scikit-learn's rule: a sequence without ``rvs`` is a list of values. A ``range`` over a
    step's parameter is listed (it used to be refused as a distribution), and a grid with a
    ``range`` is dry-run point by point."""
    from collections import UserList

    from scipy import stats

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    for degrees in (range(1, 4), UserList([1, 2, 3])):
        space = {"poly__degree": degrees, "lr__C": stats.loguniform(0.1, 10.0)}
        rand(estimator=_poly_pipe(), space=space, random_state=0).fit(X, y)
    search = grid(estimator=_poly_pipe(), space={"poly__degree": range(1, 4),
                                                 "lr__C": [0.1, 1.0, 10.0, 100.0]})
    assert len(search._search_space().dry_run_candidates()) == 12


@pytest.mark.parametrize("make", ["random", "gibo"])
def test_a_step_parameter_whose_values_cannot_be_listed_is_refused_before_any_data(make):
    """A real range (DPGIBOSearchCV) or a continuous distribution over a parameter of a step
    in front of the model cannot be checked value by value: a public ``ValueError`` before
    the data is read, nothing charged. The model's own parameters may stay continuous."""
    from scipy import stats
    from sklearn.preprocessing import Binarizer

    pipe = Pipeline([("bin", Binarizer()), ("lr", lr())])
    acc = BudgetAccountant()
    if make == "gibo":
        search = DPGIBOSearchCV(pipe, {"bin__threshold": (-0.5, 0.5), "lr__C": (0.1, 10.0)},
                                n_iter=2, classes=[0, 1], accountant=acc, random_state=0)
    else:
        search = rand(estimator=pipe, accountant=acc, random_state=0,
                      space={"bin__threshold": stats.uniform(-0.5, 1.0),
                             "lr__C": stats.loguniform(0.1, 10.0)})
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (np.arange(300) % 2).astype(int)
    with pytest.raises(ValueError, match="'bin__threshold' may set a data-independent step"):
        search.fit(X, y)
    assert acc.spent_budget == []
    if make == "gibo":
        search.set_params(param_space={"lr__C": (0.1, 10.0)})
    else:
        search.set_params(param_distributions={"bin__threshold": [-0.5, 0.0, 0.5],
                                               "lr__C": stats.loguniform(0.1, 10.0)})
    search.fit(X, y)  # listed values, and a continuous parameter of the model itself, fit


def test_a_composite_first_step_is_cut_at_its_private_components():
    """The image of a composite holding private components: each private component becomes
    ``"passthrough"``, each pipeline stops after its first private step, free branches stay."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion
    from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures

    from skdptune.estimators import free_image

    ct = ColumnTransformer([
        ("num", Pipeline([("poly", PolynomialFeatures(2)), ("scale", _dp_scaler()),
                          ("poly_after", PolynomialFeatures(3))]), [0]),
        ("cat", OneHotEncoder(categories=[[0, 1]], handle_unknown="ignore"), [1]),
        ("raw", _dp_scaler(), [2])], remainder=_dp_scaler())
    image = free_image(ct)
    num, cat, raw = (t for _, t, _ in image.transformers)
    assert [name for name, _ in num.steps] == ["poly", "scale"] and num.steps[1][1] == \
        "passthrough" and num.steps[0][1] is not ct.transformers[0][1].steps[0][1]
    assert isinstance(cat, OneHotEncoder) and raw == "passthrough"
    assert image.remainder == "passthrough" and ct.remainder != "passthrough"
    union = FeatureUnion([("a", _dp_scaler()), ("b", PolynomialFeatures(2))])
    assert [t if isinstance(t, str) else type(t).__name__
            for _, t in free_image(union).transformer_list] == ["passthrough",
                                                                 "PolynomialFeatures"]
    assert free_image(ColumnTransformer([("cat", OneHotEncoder(), [0])])) is None
    Z = np.array([[2.0, 1, 5.0], [3.0, 0, 7.0]])
    assert np.allclose(image.fit_transform(Z), [[1, 2, 4, 0, 1, 5], [1, 3, 9, 1, 0, 7]])


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
def _log_shifted(Z):
    return np.log(np.asarray(Z, dtype=float) + 100.0)


def _composite_cases():
    """``(name, estimator, space, X, X')`` found when the composite check was reviewed again:
    one finite record of ``X'`` makes a composite first step feed its private component or the
    model something it cannot take, without any noise involved."""
    from diffprivlib.models import DecisionTreeClassifier
    from scipy import stats
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import PolynomialFeatures

    X = np.random.RandomState(0).uniform(0.1, 1, size=(300, 3))
    cases = []
    nan_branch = Pipeline([
        ("ct", ColumnTransformer([("imp", SimpleImputer(strategy="constant", fill_value=0.0),
                                   [0]),
                                  ("log", FunctionTransformer(_log_shifted), [1]),
                                  ("priv", _dp_scaler(), [2])])),
        ("lr", lr())])
    X2 = X.copy()
    X2[5, 1] = -150.0  # finite; the free branch's log makes it NaN, which the model refuses
    cases.append(("nan_from_a_free_branch", nan_branch, {"lr__C": [0.1, 1.0]}, X, X2))
    tree = Pipeline([
        ("ct", ColumnTransformer([("priv", _dp_scaler(), [0, 1])], remainder="passthrough")),
        ("tree", DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1]))])
    X3 = X.copy()
    X3[5, 2] = 1e39  # finite in float64, infinite in the tree's float32
    cases.append(("tree_after_a_composite", tree, {"tree__max_depth": [2, 3]}, X, X3))
    drawn = Pipeline([
        ("ct", ColumnTransformer([("priv", _dp_scaler(), [0, 1]),
                                  ("poly", PolynomialFeatures(), [2])])),
        ("lr", lr())])
    X4 = X.copy()
    X4[5, 2] = 1e55  # degree 5 is finite, degree 6 (never a dry-run draw) is not
    cases.append(("free_branch_parameter_drawn", drawn,
                  {"ct__poly__degree": stats.randint(1, 7),
                   "lr__C": stats.loguniform(0.1, 10.0)}, X, X4))
    return cases


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand])
@pytest.mark.parametrize("case", _composite_cases(), ids=lambda case: case[0])
def test_what_a_composite_first_step_gives_is_read_as_its_model_reads_it(make, case):
    """No NaN from a composite's image (which column a NaN reaches is not asked), float32
    where a diffprivlib tree reads it, and every value of a free branch's parameter listed
    (a composite's free branch shapes its image)."""
    _, estimator, space, X, X2 = case
    if make is grid and any(hasattr(v, "rvs") for v in space.values()):
        space = {k: list(range(1, 7)) if hasattr(v, "rvs") else v for k, v in space.items()}
        space["lr__C"] = [1.0]
    y = (np.arange(300) % 2).astype(int)
    assert_refused_on_the_neighbour(make(estimator=estimator, space=space, random_state=0),
                                    X, X2, y)


def test_a_range_over_a_composites_free_branch_is_refused():
    """DPGIBOSearchCV's real ranges cannot be listed: a range over a parameter of a free
    branch of a composite first step is refused like one over a step in front."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import Binarizer

    pipe = Pipeline([("ct", ColumnTransformer([("priv", _dp_scaler(), [0]),
                                               ("bin", Binarizer(), [1])])),
                     ("lr", lr())])
    search = DPGIBOSearchCV(pipe, {"ct__bin__threshold": (-0.5, 0.5)}, n_iter=2,
                            classes=[0, 1], random_state=0)
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    with pytest.raises(ValueError, match="'ct__bin__threshold' may set a data-independent"):
        search.fit(X, (np.arange(300) % 2).astype(int))
    search.set_params(param_space={"ct__priv__epsilon": (0.1, 1.0)})
    with pytest.raises(ValueError, match="sets the privacy parameters itself"):
        search.fit(X, (np.arange(300) % 2).astype(int))  # not the listing's refusal


def test_a_composite_whose_cut_output_names_would_clash_still_fits():
    """Cutting a private PCA branch to ``"passthrough"`` keeps its input's column names,
    which may clash with another branch's under pandas output: the image prefixes them."""
    pd = pytest.importorskip("pandas")
    from diffprivlib.models import PCA
    from sklearn.compose import ColumnTransformer

    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.uniform(-1, 1, size=(300, 3)), columns=["a", "b", "c"])
    ct = ColumnTransformer([("pca", PCA(n_components=2, epsilon=0.5, data_norm=2.0,
                                        bounds=(-1.0, 1.0)), ["a", "b"]),
                            ("keep", "passthrough", ["a", "c"])],
                           verbose_feature_names_out=False)
    pipe = Pipeline([("ct", ct), ("lr", lr())]).set_output(transform="pandas")
    rand(estimator=pipe, space={"lr__C": [0.1, 1.0]}, random_state=0).fit(
        frame, (np.arange(300) % 2).astype(int))


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
def test_a_typical_mixed_type_pipeline_still_fits():
    """A pandas frame through a ``ColumnTransformer`` of a private scaler and a one-hot encoder
    with declared categories: the composite's check passes on clean data."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"age": rng.uniform(-1, 1, 300), "job": rng.choice(["a", "b"], 300)})
    y = (np.arange(300) % 2).astype(int)
    pipe = Pipeline([
        ("ct", ColumnTransformer([("num", _dp_scaler(), ["age"]),
                                  ("cat", OneHotEncoder(categories=[["a", "b"]],
                                                        handle_unknown="ignore"), ["job"])])),
        ("lr", lr())])
    for make in (grid, rand):
        search = make(estimator=pipe, space={"lr__C": [0.1, 1.0]}, random_state=0)
        search.fit(frame, y)
        assert search.best_estimator_.predict(frame).shape == (300,)
    frame.loc[7, "job"] = "unknown"  # ignored by the encoder: all zeros, still in the domain
    rand(estimator=pipe, space={"lr__C": [0.1, 1.0]}, random_state=0).fit(frame, y)


def test_which_parameters_shape_what_the_first_private_model_receives():
    from sklearn.preprocessing import PolynomialFeatures

    from skdptune.estimators import shapes_model_input

    nested = Pipeline([("prep", Pipeline([("poly", PolynomialFeatures())])),
                       ("model", Pipeline([("scale", PolynomialFeatures()), ("lr", lr())]))])
    shaping = {"prep__poly__degree", "model__scale__degree", "prep", "model__scale", "model",
               "model__lr", "memory", "model__steps", "no_such__name"}
    for name in shaping:
        assert shapes_model_input(nested, name), name
    for name in ("model__lr__C", "model__lr__epsilon", "model__lr__accountant"):
        assert not shapes_model_input(nested, name), name
    from sklearn.compose import ColumnTransformer

    composite = Pipeline([
        ("ct", ColumnTransformer([("num", Pipeline([("poly", PolynomialFeatures()),
                                                    ("scale", _dp_scaler()),
                                                    ("after", PolynomialFeatures())]), [0]),
                                  ("free", PolynomialFeatures(), [1])])),
        ("lr", lr())])
    for name in ("ct__num__poly__degree", "ct__free__degree", "ct__num", "ct__free",
                 "ct__transformer_weights", "ct__remainder"):
        assert shapes_model_input(composite, name), name
    for name in ("ct__num__scale__epsilon", "ct__num__after__degree", "lr__C"):
        assert not shapes_model_input(composite, name), name
    assert not shapes_model_input(lr(), "C")
    private_first = Pipeline([("lr", lr())])
    assert not shapes_model_input(private_first, "lr__C")
    assert shapes_model_input(private_first, "lr")


def test_the_values_of_a_discrete_distribution_are_listed():
    from scipy import stats

    from skdptune.public._model_input import MAX_LISTED_VALUES, _discrete_support

    assert _discrete_support(stats.randint(1, 4)) == [1, 2, 3]
    assert _discrete_support(stats.binom(3, 0.5)) == [0, 1, 2, 3]
    assert _discrete_support(_rare_degree_three()) == [1, 3]
    assert _discrete_support(_rare_degree_three().freeze()) == [1, 3]
    assert _discrete_support(stats.rv_discrete(values=([0, 2, 5], [0.5, 0.0, 0.5]))) == [0, 5]
    for unlisted in (stats.poisson(3.0), stats.randint(0, MAX_LISTED_VALUES + 1),
                     stats.randint(1, 4, loc=0.5), stats.uniform(0, 1), stats.randint,
                     _rare_degree_three().freeze(loc=1), [1, 2], "C"):
        assert _discrete_support(unlisted) is None, unlisted


@pytest.mark.parametrize("value", [np.complex64(1 + 1j), np.clongdouble(1 + 1j), 1 + 1j])
def test_a_complex_number_in_an_object_array_is_outside_the_domain(value):
    """numpy's complex scalars as well as Python's: converting them to floats would drop the
    imaginary part (scikit-learn's check_array refuses them, inside the private part)."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2)).astype(object)
    y = (np.arange(300) % 2).astype(int)
    rand(random_state=0).fit(X, y)
    X[7, 1] = value
    acc = BudgetAccountant()
    with pytest.raises(DomainError, match="^X contains"):
        rand(random_state=0, accountant=acc).fit(X, y)
    assert acc.spent_budget == []


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
def test_a_column_transformer_never_chooses_sparse_output_from_the_data():
    """A ``ColumnTransformer`` with its default ``sparse_threshold`` chooses sparse output when
    the rows are sparse enough -- here, when enough records hold a category the one-hot encoder
    ignores; diffprivlib's models refuse sparse input. The fits make it dense (threshold 0),
    so both neighbours fit (with the old threshold, the sparse one raised PrivateFitError)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    def data(known):
        rng = np.random.RandomState(0)
        X = np.empty((48, 2), dtype=np.int64)
        X[:, 0] = 7  # a category the encoder does not know: a row of zeros
        X[:known, 0] = 1
        X[:, 1] = rng.randint(-2, 3, 48)
        return X, (rng.rand(48) > 0.5).astype(int)

    pipe = Pipeline([
        ("ct", ColumnTransformer([("oh", OneHotEncoder(categories=[[-2, -1, 0, 1, 2]],
                                                       handle_unknown="ignore"), [0]),
                                  ("num", "passthrough", [1])])),
        ("lr", LogisticRegression(data_norm=3.0, epsilon=1.0))])
    # the threshold decides on one record: at 39 known rows dense, at 38 sparse (37 with the
    # fits' padding rows)
    assert not clone(pipe[0]).fit(data(39)[0]).sparse_output_
    assert clone(pipe[0]).fit(data(38)[0]).sparse_output_
    for known in (39, 38, 37):
        search = rand(estimator=pipe, space={"lr__C": [0.1, 1.0]}, n_iter=5,
                      random_state=0).fit(*data(known))
        assert search.best_estimator_.named_steps["ct"].sparse_threshold == 0
        assert search.best_estimator_.named_steps["ct"].sparse_output_ is False


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand, "gibo"])
@pytest.mark.parametrize("container", [list, tuple])
def test_the_returned_models_label_type_does_not_follow_one_record(make, container):
    """Labels whose type the values decide (a list: ``[0, 1.0]`` becomes a float array): one
    record written ``1.0`` instead of ``1`` must not change the returned model's ``classes_``.
    The fits get the declared classes themselves. (Object arrays of numbers are no labels for
    scikit-learn, on any data: the dry run refuses them.)"""
    X, y_d, _ = neighbours(300)
    y_d[:150] = 1
    if make == "gibo":
        search = DPGIBOSearchCV(lr(), {"C": (0.1, 10.0, "log")}, n_iter=2, classes=[0, 1],
                                random_state=0)
    else:
        search = make(random_state=0)
    seen = set()
    for record in (1, 1.0):
        labels = [int(v) for v in y_d]
        labels[0] = record
        labels = container(labels)
        model = clone(search).set_params(accountant=BudgetAccountant()).fit(X, labels)
        classes = model.best_estimator_.classes_
        seen.add((classes.dtype.str, tuple(type(c).__name__ for c in classes.tolist())))
    assert seen == {(np.array([0, 1]).dtype.str, ("int", "int"))}


def _regressor_search(make, acc):
    """A regression search of each kind (a diffprivlib ``LinearRegression``)."""
    from diffprivlib.models import LinearRegression

    reg = LinearRegression(bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0))
    common = {"classes": None, "accountant": acc, "random_state": 0}
    if make == "gibo":
        return DPGIBOSearchCV(reg, {"bounds_y": ArrayRange([-5, 1], [-1, 5], as_tuple=True)},
                              n_iter=2, scoring="squared_error", score_clip=4.0, **common)
    kw = {"scoring": "squared_error", "score_clip": 4.0} if make is rand else {}
    return make(estimator=reg, space={"copy_X": [True, False]}, **kw, **common)


@pytest.mark.filterwarnings("ignore::skdptune.TooFewRowsWarning")
@pytest.mark.parametrize("make", [grid, rand, "gibo"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_regressors_non_finite_target_is_outside_the_domain(make, value,
                                                             stand_in_regressor):
    """A regressor's target is part of the domain like the features: one non-finite target
    must not decide, inside the private part, between a model and ``PrivateFitError``."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.1 * rng.randn(300)
    _regressor_search(make, BudgetAccountant()).fit(X, y)
    y[7] = value
    acc = BudgetAccountant()
    with pytest.raises(DomainError, match="target") as info:
        _regressor_search(make, acc).fit(X, y)
    assert "7" not in str(info.value)
    assert acc.spent_budget == []


@pytest.mark.parametrize("missing", [None, np.nan])
def test_numbers_in_an_object_array_are_checked_like_numbers(missing):
    """A list of rows with one ``None`` becomes an object array (numpy infers the dtype from the
    values): its numbers are still checked, so the one record cannot make the fit fail."""
    X, y_d, _ = neighbours(300)
    rows = X.tolist()
    rows[5][1] = missing
    acc = BudgetAccountant()
    with pytest.raises(DomainError, match="NaN"):
        DPGIBOSearchCV(lr(), {"C": (0.1, 10.0, "log")}, n_iter=2, classes=[0, 1],
                       accountant=acc, random_state=0).fit(rows, y_d.tolist())
    assert acc.spent_budget == []


def _integer_rows(n=300, seed=0):
    """Rows of integer codes as a list, and the neighbour whose first record holds one
    non-integer: numpy reads the first as int64 and the second as float64."""
    codes = np.random.RandomState(seed).randint(0, 3, size=(n, 3))
    rows = codes.tolist()
    neighbour = [list(row) for row in rows]
    neighbour[0] = [0.5, 1, 2]
    return rows, neighbour, (codes[:, 0] > 0).astype(int).tolist()


def _imputing_pipe():
    from diffprivlib.models import StandardScaler
    from sklearn.impute import SimpleImputer

    return Pipeline([("imp", SimpleImputer(strategy="constant", fill_value=0)),
                     ("sc", StandardScaler(epsilon=0.5, bounds=([-3.0] * 3, [3.0] * 3))),
                     ("lr", LogisticRegression(epsilon=1.0, data_norm=3.0))])


@pytest.mark.parametrize("search", ["grid", "random", "gibo"])
def test_a_list_of_rows_has_one_format_whatever_its_values(search):
    """A list (or tuple) ``X`` has no dtype: numpy would choose one from all the values, so one
    non-integer would turn int64 rows into float64, the returned model's free steps would
    store which (``_fit_dtype``), and a train part and a validation part that differ in dtype
    would make the fits fail inside (a ``PrivateFitError`` on one neighbour only). The rows
    are taken as given, as an object array, on both neighbours."""
    rows, neighbour, y = _integer_rows()
    released_models = []
    for X in (rows, neighbour, tuple(neighbour)):
        for seed in range(3):
            kw = {"classes": [0, 1], "accountant": BudgetAccountant(), "random_state": seed}
            if search == "grid":
                s = DPGridSearchCV(_imputing_pipe(), {"lr__C": [0.1, 1.0]}, epsilon=1.0, **kw)
            elif search == "random":
                s = DPRandomSearchCV(_imputing_pipe(), {"lr__C": [0.1, 1.0]}, n_iter=3, **kw)
            else:
                s = DPGIBOSearchCV(_imputing_pipe(), {"lr__C": (0.1, 10.0, "log")}, n_iter=2,
                                   **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s.fit(X, y)  # a PrivateFitError on one neighbour fails the test
            imputer = s.best_estimator_.named_steps["imp"]
            released_models.append((imputer._fit_dtype, imputer.statistics_.dtype))
    assert len(set(released_models)) == 1, set(released_models)


@pytest.mark.usefixtures("unforeseen_failures")
def test_a_failed_fit_prints_the_same_wherever_the_failing_record_is():
    """``verbose`` lines of the private part are held back until it succeeds: printed as they
    came, the lines before a failure would show which iteration's rows -- or the refit --
    held the failing record (the disjoint chunks of DPGIBOSearchCV, one per iteration)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    X[:, -1] = 0.0
    y = (X[:, 0] > 0).astype(int)
    pipe = Pipeline([("ft", FunctionTransformer(_fails_on_private_rows)), ("clf", lr())])
    printed = set()
    for row in range(0, 200, 7):
        X_marked = X.copy()
        X_marked[row, -1] = 1.0
        search = DPGIBOSearchCV(pipe, {"clf__C": (0.1, 10.0, "log")}, n_iter=4, batch_size=1,
                                train_split="disjoint", classes=[0, 1], verbose=1,
                                accountant=BudgetAccountant(), random_state=0)
        out = io.StringIO()
        with redirect_stdout(out), pytest.raises(PrivateFitError):
            search.fit(X_marked, y)
        printed.add(out.getvalue())
    assert len(printed) == 1
    assert "budget checked" in printed.pop()  # the lines before the private part do print
    out = io.StringIO()
    with redirect_stdout(out):  # and a fit that succeeds prints everything, in order
        DPGIBOSearchCV(pipe, {"clf__C": (0.1, 10.0, "log")}, n_iter=4, batch_size=1,
                       train_split="disjoint", classes=[0, 1], verbose=1,
                       accountant=BudgetAccountant(), random_state=0).fit(X, y)
    lines = out.getvalue().splitlines()
    assert "budget checked" in lines[0] and sum("iteration" in line for line in lines) == 4
    assert "refitting" in lines[-1]


def _gibo_failing_on(row, X, y, verbose=2):
    """What a DPGIBOSearchCV over disjoint chunks prints when the fit of one iteration's chunk
    fails (the record at ``row`` is marked), with live progress (``verbose=2``)."""
    X_marked = X.copy()
    X_marked[row, -1] = 1.0
    pipe = Pipeline([("ft", FunctionTransformer(_fails_on_private_rows)), ("clf", lr())])
    search = DPGIBOSearchCV(pipe, {"clf__C": (0.1, 10.0, "log")}, n_iter=4, batch_size=1,
                            train_split="disjoint", classes=[0, 1], verbose=verbose,
                            accountant=BudgetAccountant(), random_state=0)
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(PrivateFitError):
        search.fit(X_marked, y)
    return out.getvalue()


@pytest.mark.usefixtures("unforeseen_failures")
def test_live_progress_is_the_same_wherever_the_failing_record_is(monkeypatch):
    """``verbose=2`` prints progress as it happens: a failed fit stops the fits but not the
    iterations, so every fit prints the whole sequence, whichever iteration's chunk held the
    failing record. BROKEN twin: a failure that stops the iterations at once (the progress
    would tell the iteration, hence which chunk held the record) is caught by the same test."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    X[:, -1] = 0.0
    y = (X[:, 0] > 0).astype(int)
    rows = range(0, 200, 23)  # every iteration's chunk holds some of them
    printed = {_gibo_failing_on(row, X, y) for row in rows}
    assert len(printed) == 1
    lines = printed.pop().splitlines()
    assert [line for line in lines if "iterations done" in line] == [
        f"[DPGIBOSearchCV] iterations done: {t}/4" for t in range(1, 5)]

    class Unforeseen(Exception):
        pass

    monkeypatch.setattr(gibo_module, "PrivateFitError", Unforeseen)  # the broken twin
    assert len({_gibo_failing_on(row, X, y) for row in rows}) > 1


@pytest.mark.usefixtures("unforeseen_failures")
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_live_progress_of_a_failed_repetition_is_the_whole_sequence(n_jobs):
    """A run that fails inside a task is reported after every task (``all_or_fail``): the
    progress lines of a failed fit are those of a fit that succeeds."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    X[:, -1] = 0.0
    y = (X[:, 0] > 0).astype(int)

    def progress_lines(X_rows):
        search = rand(estimator=_failing_pipe(), space=PIPE_SPACE, n_iter=5, verbose=2,
                      n_jobs=n_jobs, random_state=0)
        out = io.StringIO()
        with redirect_stdout(out):
            try:
                search.fit(X_rows, y)
            except PrivateFitError:
                pass
        return [line for line in out.getvalue().splitlines() if "tasks done" in line]

    X_marked = X.copy()
    X_marked[17, -1] = 1.0
    succeeded = progress_lines(X)
    assert progress_lines(X_marked) == succeeded
    total = len(succeeded)  # the batched runs' groups: one per 100 expected runs, at least one
    assert succeeded == [f"[DPRandomSearchCV] run tasks done: {t}/{total}"
                         for t in range(1, total + 1)]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_leaves_the_private_region_without_its_frames(stop):
    """A ``BaseException`` that is not an error (Ctrl-C) leaves as a fresh one of the same kind:
    its traceback would hold the frames of the private part, whose locals are exact private
    values (a debugger, ``sys.last_traceback`` or a crash reporter shows them)."""
    from skdptune._private import run_private

    def private_part():
        exact_losses = np.arange(5.0)  # noqa: F841 -- what the frame would expose
        raise stop("row 7")

    with pytest.raises(stop) as info:
        run_private(private_part)
    err = info.value
    assert err.__context__ is None and err.__cause__ is None and "row 7" not in str(err)
    assert "private_part" not in [f.f_code.co_name for f, _ in traceback.walk_tb(err.__traceback__)]
    with pytest.raises(stop) as info:  # error_score="raise" (debugging) lets the original out
        run_private(private_part, debug=True)
    assert "row 7" in str(info.value)


def _interrupts_on_marked_rows(X):
    X = np.asarray(X)
    if (X[:, -1] == 1.0).any():
        raise KeyboardInterrupt
    return X


@pytest.mark.usefixtures("unforeseen_failures")
def test_an_interrupted_fit_is_charged():
    X, y, _ = neighbours(300, seed=1)
    X[:, -1] = np.where(np.arange(300) % 2 == 0, 1.0, 0.0)
    y[::3] = 1
    pipe = Pipeline([("ft", FunctionTransformer(_interrupts_on_marked_rows)), ("clf", lr())])
    acc = BudgetAccountant()
    with pytest.raises(KeyboardInterrupt) as info:
        rand(estimator=pipe, space=PIPE_SPACE, accountant=acc, random_state=0).fit(X, y)
    assert "_interrupts_on_marked_rows" not in "".join(
        traceback.format_tb(info.value.__traceback__))
    planned = rand(random_state=0).fit(X, y).privacy_spent_
    assert acc.spent_budget == [(planned.epsilon, planned.delta)]


# -- item 5: the hidden number of runs K leaks -------------------------------------------------
def test_item5_warnings_and_verbose_do_not_depend_on_k_or_the_data():
    X, y_d, y_n = neighbours(300)
    outputs = set()
    for seed in range(8):  # different seeds draw different K
        for y in (y_d, y_n):
            _, caught, printed = fit_recording(rand(n_iter=4, verbose=3, random_state=seed),
                                               X, y)
            assert caught == []
            outputs.add(printed)
    assert len(outputs) == 1, outputs
    assert not re.search(r"\d(\.\d+)?\s*s\b", outputs.pop())  # no timing


def test_item5_grid_verbose_is_data_independent():
    X, y_d, y_n = neighbours(600)
    printed = {fit_recording(grid(verbose=3, random_state=0), X, y)[2] for y in (y_d, y_n)}
    assert len(printed) == 1


# -- item 6: a seeded estimator fixes the noise -------------------------------------------------
@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_item6_estimator_seed_is_ignored_with_a_warning(make):
    X, y_d, _ = neighbours(600)
    y_d[::2] = 1
    coefs = []
    for _ in range(2):
        with pytest.warns(UserWarning, match="own random_state"):
            search = make(estimator=lr(random_state=0), space={"C": [1.0]}).fit(X, y_d)
        coefs.append(search.best_estimator_.coef_.copy())
    assert not np.allclose(coefs[0], coefs[1])  # fresh noise each time
    a, b = (make(estimator=lr(), space={"C": [1.0]}, random_state=3).fit(X, y_d)
            for _ in range(2))
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)


# -- item 7: the accountant is lost on clone -----------------------------------------------------
@pytest.mark.parametrize("make", [grid, rand, gibo])
def test_item7_cross_val_score_charges_the_users_accountant_per_fold(make):
    X, y_d, _ = neighbours(900)
    y_d[::2] = 1
    acc = BudgetAccountant()
    search = make(accountant=acc, random_state=0)
    assert clone(search).accountant is acc
    cross_val_score(search, X, y_d, cv=3)
    total = make(accountant=BudgetAccountant()).fit(X, y_d).privacy_spent_.epsilon
    assert len(acc.spent_budget) == 3
    assert acc.total()[0] == pytest.approx(3 * total)


def test_item7_cap_stops_the_next_fold_before_data_is_read(monkeypatch):
    X, y_d, _ = neighbours(900)
    y_d[::2] = 1
    acc = BudgetAccountant(epsilon=3.0)
    search = grid(accountant=acc, random_state=0)  # 2.0 per fit
    with pytest.raises(BudgetError):
        cross_val_score(search, X, y_d, cv=3, error_score="raise")
    assert acc.spent_budget == [(2.0, 0.0)]


def test_item7_nested_in_a_pipeline_and_pickling():
    X, y_d, _ = neighbours(600)
    y_d[::2] = 1
    acc = BudgetAccountant()
    pipe = Pipeline([("id", FunctionTransformer()), ("search", grid(accountant=acc))])
    clone(pipe).fit(X, y_d)
    assert len(acc.spent_budget) == 1
    restored = pickle.loads(pickle.dumps(pipe.named_steps["search"]))
    assert restored.accountant is not acc  # a copy: documented in docs/privacy.md


# -- item 8: budget charged for configuration mistakes --------------------------------------------
def _wrong_signature_scorer(y_true, y_pred):
    return float(np.mean(y_true == y_pred))


@pytest.mark.parametrize("make", [grid, rand, gibo])
@pytest.mark.parametrize("mistake", ["unknown key", "no y", "sparse", "scorer"])
def test_item8_configuration_mistakes_charge_nothing(make, mistake):
    X, y_d, _ = neighbours(600)
    y_d[::2] = 1
    acc = BudgetAccountant()
    kw, fit_X, fit_y = {}, X, y_d
    if mistake == "unknown key":
        kw["space"] = {"C": [1.0], "no_such_parameter": [1.0]}
    elif mistake == "no y":
        fit_y = None
    elif mistake == "sparse":
        fit_X = sp.csr_matrix(X)
    elif make is grid:
        kw.update(scoring=_wrong_signature_scorer, score_bounds=(0, 1))
    else:
        pytest.skip("DPRandomSearchCV and DPGIBOSearchCV take named per-example scores only")
    with pytest.raises(ValueError):
        make(accountant=acc, **kw).fit(fit_X, fit_y)
    assert acc.spent_budget == []


# -- the planned cost is public ------------------------------------------------------------------
@pytest.mark.parametrize("make, kw", [(grid, {}), (grid, {"selection": "svt", "refit": False}),
                                      (rand, {"epsilon": 1.5}), (rand, {"delta": 1e-6}),
                                      (gibo, {}), (gibo, {"refit": False, "epsilon": 1.5})])
def test_planned_privacy_is_what_fit_charges_and_reads_no_data(make, kw):
    X, y_d, _ = neighbours(600)
    y_d[::2] = 1
    search = make(random_state=0, **kw)
    planned = search.planned_privacy(len(X))
    assert not [k for k in vars(search) if k.endswith("_")]  # still unfitted
    search.fit(X, y_d)
    assert (planned.epsilon, planned.delta) == (search.privacy_spent_.epsilon,
                                                search.privacy_spent_.delta)
    assert search.accountant.spent_budget == [(planned.epsilon, planned.delta)]


# -- the returned model carries nothing its DP mechanism does not cover ---------------------------
@pytest.mark.parametrize("make", [grid, rand, gibo])
@pytest.mark.parametrize("refit", [True, False])
def test_returned_model_has_no_optimiser_iteration_count(make, refit):
    X, y_d, _ = neighbours(600)
    y_d[::2] = 1
    search = make(refit=refit, random_state=0).fit(X, y_d)
    if hasattr(search, "best_estimator_"):
        assert not hasattr(search.best_estimator_, "n_iter_")  # L-BFGS on the private data
        assert search.predict(X).shape == (600,)


@pytest.mark.parametrize("make", [grid, rand])
def test_diffprivlibs_kmeans_is_refused_before_any_data(make):
    """diffprivlib's KMeans leaves an empty cluster's centre un-noised (emptiness depends on
    the rows) and draws from numpy's global generator when unseeded: refused as a component
    of any search, before the data is read, nothing charged -- also inside a pipeline."""
    from diffprivlib.models import KMeans

    X = np.random.RandomState(0).uniform(-1, 1, size=(600, 2))
    kmeans = KMeans(epsilon=1.0, bounds=(-1, 1), n_clusters=2)
    for estimator, space in ((kmeans, {"n_clusters": [2, 3]}),
                             (Pipeline([("ft", FunctionTransformer()), ("km", kmeans)]),
                              {"km__n_clusters": [2, 3]})):
        acc = BudgetAccountant()
        with pytest.raises(NonPrivateComponentError, match="not differentially private as "
                                                           "implemented: its centre update"):
            scores = ({"score_clip": 1.0} if make is rand else
                      {"scoring": lambda est, X, y=None: 0.5, "score_bounds": (0, 1)})
            make(estimator=estimator, classes=None, space=space, accountant=acc,
                 **scores).fit(X)
        assert acc.spent_budget == []
    with pytest.raises(NonPrivateComponentError, match="empty"):
        estimator_privacy(kmeans)


@pytest.mark.parametrize("make", [grid, rand])
def test_diffprivlibs_random_forest_is_refused_before_any_data(make):
    """Each tree of diffprivlib's forest draws its leaves' noise from a 31-bit seed stored in
    the returned model (the next test): refused as a component of any search, before the data
    is read, nothing charged; its single tree is accepted."""
    from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1],
                                    n_estimators=3)
    for estimator, space in ((forest, {"max_depth": [2, 3]}),
                             (Pipeline([("ft", FunctionTransformer()), ("rf", forest)]),
                              {"rf__max_depth": [2, 3]})):
        acc = BudgetAccountant()
        with pytest.raises(NonPrivateComponentError, match="31-bit"):
            make(estimator=estimator, space=space, accountant=acc).fit(X, y)
        assert acc.spent_budget == []
    with pytest.raises(NonPrivateComponentError, match="DecisionTreeClassifier"):
        estimator_privacy(forest)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    assert estimator_privacy(tree) == (2.0, 0.0)  # twice its epsilon under replace-one


def test_why_diffprivlibs_forest_is_refused_and_its_tree_is_not():
    """The forest's trees store the seeds of their leaves' noise and draw them from numpy's
    global generator: refitting a tree with its stored seed reproduces its leaves, and after
    ``np.random.seed(0)`` every forest is the same. A lone tree's leaf noise is secure: the
    same global seed gives different leaves. (If diffprivlib mends its forest, this fails and
    the refusal can be revisited.)"""
    from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier

    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(60, 3))
    y = rng.randint(0, 2, size=60)
    params = {"epsilon": 0.5, "bounds": (0.0, 1.0), "classes": [0, 1], "max_depth": 3}
    forest = RandomForestClassifier(n_estimators=3, **params).fit(X, y)
    chunk = (np.arange(60) // 20).astype(int)
    for i, tree in enumerate(forest.estimators_):
        refit = DecisionTreeClassifier(random_state=tree.random_state, **params)
        refit.fit(X[chunk == i], y[chunk == i])
        np.testing.assert_array_equal(refit.tree_.value, tree.tree_.value)
    state = np.random.get_state()  # noqa: NPY002 (the global generator is the subject)
    try:
        forests, trees = set(), set()
        for _ in range(10):
            np.random.seed(0)  # noqa: NPY002
            fitted = RandomForestClassifier(n_estimators=3, **params).fit(X, y)
            forests.add(b"".join(t.tree_.value.tobytes() for t in fitted.estimators_))
            np.random.seed(0)  # noqa: NPY002
            trees.add(DecisionTreeClassifier(**params).fit(X, y).tree_.value.tobytes())
    finally:
        np.random.set_state(state)  # noqa: NPY002
    assert len(forests) == 1 and len(trees) > 1


def test_diffprivlibs_linear_regression_without_intercept_does_not_clip():
    """Why it is refused: with ``fit_intercept=False`` diffprivlib clips neither X nor y (it
    clips only where it centres them), so one record decides the coefficients, whatever the
    noise -- on D' they are the same to every digit over seeds, on D they vary."""
    from diffprivlib.models import LinearRegression

    X = np.random.RandomState(0).uniform(-1, 1, size=(400, 2))
    y = X @ np.array([1.0, -0.5])
    y_far = y.copy()
    y_far[0] = 1e200
    fits = [LinearRegression(bounds_X=(-1, 1), bounds_y=(-2, 2), fit_intercept=False,
                             epsilon=1.0, random_state=seed) for seed in range(3)]
    near = [clone(m).fit(X, y).coef_ for m in fits]
    far = [clone(m).fit(X, y_far).coef_ for m in fits]
    assert np.abs(far).min() > 1e100 > np.abs(near).max()
    # with the intercept (the default), the record is clipped to bounds_y
    kept = LinearRegression(bounds_X=(-1, 1), bounds_y=(-2, 2), epsilon=1.0, random_state=0)
    assert np.abs(clone(kept).fit(X, y_far).coef_).max() < 1e3


@pytest.mark.parametrize("make", [grid, rand])
def test_linear_regression_is_refused_before_any_data(make):
    """diffprivlib's ``LinearRegression`` is refused like a non-private component -- as the
    estimator, inside a pipeline, or as a value the space sets -- before the data is read,
    nothing charged: it sizes the noise of each sum of squares for the lower bound alone,
    after centring on the noisy mean (an earlier review found that without the intercept it
    clipped nothing)."""
    from diffprivlib.models import LinearRegression

    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 2))
    y = X @ np.array([1.0, -0.5])
    linreg = LinearRegression(bounds_X=(-1, 1), bounds_y=(-2, 2))
    scores = ({"scoring": "squared_error", "score_clip": 4.0} if make is rand else
              {"scoring": "neg_mean_squared_error", "score_bounds": (-4, 0)})
    for estimator, space in (
            (linreg, {"epsilon": [1.0]}),
            (clone(linreg).set_params(fit_intercept=False), {"epsilon": [1.0]}),
            (Pipeline([("ft", FunctionTransformer()), ("m", linreg)]),
             {"m__fit_intercept": [True]})):
        acc = BudgetAccountant()
        with pytest.raises(NonPrivateComponentError, match="lower bound alone"):
            make(estimator=estimator, classes=None, space=space, accountant=acc,
                 **scores).fit(X, y)
        assert acc.spent_budget == []
    with pytest.raises(NonPrivateComponentError, match="lower bound alone"):
        estimator_privacy(linreg)


def test_why_linear_regression_is_refused():
    """The noise diffprivlib gives each sum of squares ``x_j^2`` is sized for
    ``|lower_j - mean_j|^2`` (it reads the lower bound twice): a 0/1 feature with 2 % ones
    gets a sensitivity of about 0.0005 where one record moves the sum by about 0.96. A sentinel:
    if diffprivlib mends it, this fails and the refusal can be revisited."""
    from unittest import mock

    import diffprivlib.models.linear_regression as dp_linear

    sensitivities = []
    real = dp_linear.LaplaceFolded

    def recording(*args, **kwargs):
        sensitivities.append(kwargs["sensitivity"])
        return real(*args, **kwargs)

    rng = np.random.RandomState(0)
    X = (rng.uniform(size=(2000, 1)) < 0.02).astype(float)
    y = rng.uniform(size=2000)
    with mock.patch.object(dp_linear, "LaplaceFolded", recording), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp_linear.LinearRegression(epsilon=1.0, bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0),
                                   random_state=0).fit(X, y)
    sum_of_y_squares, sum_of_x_squares = sensitivities
    assert sum_of_x_squares < 0.01  # where a record can move the centred x^2 by about 0.9


# -- the label set when the space sets the classifier -----------------------------------------
@pytest.mark.parametrize("make", [grid, rand])
def test_a_classifier_set_by_the_space_needs_the_declared_label_set(make):
    """A pipeline whose last step the space sets is a classifier search: without ``classes`` it
    is refused before data, and with it every fit is padded and ``classes_`` is declared."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    pipe = Pipeline([("id", FunctionTransformer()), ("clf", None)])
    space = {"clf": [GaussianNB(bounds=(-1.0, 1.0))]}
    X, y, _ = neighbours(300)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="label set"):
        make(estimator=pipe, space=space, classes=None, accountant=acc,
             scoring="accuracy").fit(X, y)
    assert acc.spent_budget == []
    y_one = np.zeros_like(y)  # a dataset with one label: classes_ must still be the declared set
    search = make(estimator=pipe, space=space, classes=[0, 1], random_state=0,
                  scoring="accuracy").fit(X, y_one)
    assert list(search.best_estimator_.classes_) == [0, 1]


def _label_search(search, estimator, classes, seed):
    kw = {"classes": classes, "accountant": BudgetAccountant(), "random_state": seed}
    if search == "grid":
        return DPGridSearchCV(estimator, {"var_smoothing": [1e-9, 1e-3]}, epsilon=1.0, **kw)
    if search == "random":
        return DPRandomSearchCV(estimator, {"var_smoothing": [1e-9, 1e-3]}, n_iter=3, **kw)
    return DPGIBOSearchCV(estimator, {"var_smoothing": (1e-9, 1e-3, "log")}, n_iter=2, **kw)


@pytest.mark.parametrize("search", ["grid", "random", "gibo"])
def test_labels_whose_format_follows_their_values_give_the_declared_classes(search):
    """numpy gives an array of strings the width of its longest value, and pandas infers a
    category column's categories from its values. The padding labels are the declared classes
    in ``y``'s format, so without a record holding ``"yes"`` they became ``"ye"`` in every
    fit's ``classes_`` (``<U2`` labels), or a missing value that failed the dry run (an
    inferred category column without ``"maybe"``) -- one record deciding either. Every
    neighbour now gives the declared classes."""
    import pandas as pd

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(120, 2))
    classes = ["no", "yes", "maybe"]
    labels = np.where(X[:, 0] > 0, "no", "maybe")
    with_yes = labels.copy().astype(object)
    with_yes[0] = "yes"
    pairs = [(np.array(["no"] * 120), np.array(["no"] * 119 + ["yes"])),  # <U2, <U3
             (labels, with_yes.astype(str)),  # <U5 both
             (pd.Series(["no"] * 120).astype("category"),  # categories inferred: one, two
              pd.Series(["no"] * 119 + ["yes"]).astype("category")),
             (pd.Series(labels).astype("category"), pd.Series(with_yes).astype("category"))]
    for pair in pairs:
        released = set()
        for y in pair:
            s = _label_search(search, GaussianNB(bounds=(-1.0, 1.0)), classes, seed=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s.fit(X, y)
            model_classes = s.best_estimator_.classes_
            assert model_classes.tolist() == sorted(classes)
            released.add((model_classes.dtype, np.asarray(s.best_estimator_.predict(X)).dtype))
        assert len(released) == 1, released


def test_declared_classes_that_labels_dtype_cannot_hold_are_refused_before_the_data():
    """``int8`` labels and a declared class 300: the padding label was 44 in every fit's
    ``classes_``. Both the dtype and the classes are public, so this is refused before the
    data is read, and nothing is charged."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(60, 2))
    y = (X[:, 0] > 0).astype(np.int8)
    acc = BudgetAccountant()
    search = DPRandomSearchCV(GaussianNB(bounds=(-1.0, 1.0)), {"var_smoothing": [1e-9, 1e-3]},
                              classes=[0, 1, 300], accountant=acc)
    with pytest.raises(ValueError, match="cannot all be held by y's dtype int8"):
        search.fit(X, y)
    assert acc.spent_budget == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y.astype(np.int16))
    assert search.best_estimator_.classes_.tolist() == [0, 1, 300]


@pytest.mark.parametrize("case", ["pandas_float32", "complex_classes"])
def test_declared_classes_the_labels_merge_are_refused_before_the_data(case):
    """A pandas ``Float32`` column and the classes ``2**24`` and ``2**24 + 1``, or complex
    classes and float labels: the padding merged two declared classes, so every fit saw two
    classes where the charge was for three (a LogisticRegression's cost depends on the count)
    and the model's ``classes_`` contradicted the search's. Refused before
    the data is read; nothing is charged."""
    import pandas as pd

    X = np.random.RandomState(0).uniform(-1, 1, size=(60, 2))
    if case == "pandas_float32":
        y = pd.Series(np.where(X[:, 0] > 0, 2.0 ** 24, 0.0), dtype="Float32")
        classes = [0, 2 ** 24, 2 ** 24 + 1]
    else:
        y = (X[:, 0] > 0).astype(float) + 1.0
        classes = [1, 2, 1 + 1j]
    acc = BudgetAccountant()
    search = DPRandomSearchCV(LogisticRegression(data_norm=2.0), {"C": [0.1, 1.0]},
                              classes=classes, accountant=acc, epsilon=2.0)
    with pytest.raises(ValueError, match="become 2 distinct labels"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert acc.spent_budget == []


@pytest.mark.parametrize("search", ["grid", "random"])
def test_an_array_of_strings_reaches_the_steps_as_objects_whatever_its_width(search):
    """numpy gives an array of strings the width of its longest value: the rows are taken as
    an object array, as a list's are, so a step that keeps its input's dtype cannot follow one
    record (and scikit-learn's ``SimpleImputer``, which refuses ``<U`` arrays, takes them)."""
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    colours = rng.choice(["red", "green"], size=(200, 1))
    y = (colours[:, 0] == "red").astype(int)
    neighbour = colours.copy().astype("U6")
    neighbour[0, 0] = "purple"
    seen = set()

    def record_dtype(Z):
        seen.add(np.asarray(Z).dtype)
        return Z

    pipe = Pipeline([("imp", SimpleImputer(strategy="constant", fill_value="red",
                                           missing_values="")),
                     ("dtype", FunctionTransformer(record_dtype)),
                     ("enc", OneHotEncoder(categories=[["green", "purple", "red"]],
                                           handle_unknown="ignore", sparse_output=False)),
                     ("lr", LogisticRegression(data_norm=1.0))])
    for X in (colours, neighbour):
        kw = {"classes": [0, 1], "accountant": BudgetAccountant(), "random_state": 0}
        s = (DPGridSearchCV(pipe, {"lr__C": [0.1, 1.0]}, epsilon=1.0, **kw) if search == "grid"
             else DPRandomSearchCV(pipe, {"lr__C": [0.1, 1.0]}, n_iter=3, **kw))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(X, y)
        assert s.best_estimator_.named_steps["imp"]._fit_dtype == np.dtype(object)
    assert seen == {np.dtype(object)}


@pytest.mark.parametrize("search", ["grid", "random"])
@pytest.mark.parametrize("as_series", [False, True])
def test_a_negative_zero_label_is_the_declared_class(search, as_series):
    """``-0.0`` equals the class ``0`` and passes the domain check; kept as it was, it became
    the returned model's ``classes_[0]`` and its predictions whenever it sorted first, on the
    neighbour holding it only (20 of 20 fits against 0 of 20)."""
    import pandas as pd

    X = np.random.RandomState(0).uniform(-1, 1, size=(100, 2))
    y = (X[:, 0] > 0).astype(float)
    padded = np.concatenate([y, [0.0, 1.0]])  # the refit's labels: the rows and the padding

    def survives(i):  # whether a -0.0 at i is the zero np.unique keeps
        marked = padded.copy()
        marked[i] = -0.0
        return np.signbit(np.unique(marked)[0])

    neighbour = y.copy()
    neighbour[next(i for i in np.flatnonzero(y == 0) if survives(i))] = -0.0
    for labels in (y, neighbour):
        s = _label_search(search, GaussianNB(bounds=(-1.0, 1.0)), [0, 1], seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(X, pd.Series(labels) if as_series else labels)
        model = s.best_estimator_
        assert not np.signbit(model.classes_).any()
        assert not np.signbit(np.asarray(s.predict(X), dtype=float)).any()


@pytest.mark.parametrize("order", [1, -1])
def test_nan_is_in_the_domain_only_if_every_candidate_takes_it(order):
    """Whether NaN is allowed was asked of the first candidate alone: with an imputer first and
    a diffprivlib scaler second in the grid, a NaN passed the domain check and the scaler's
    fits failed inside (``PrivateFitError`` on that neighbour only). NaN is
    now refused whatever the candidates' order, before anything is charged."""
    from diffprivlib.models import StandardScaler
    from sklearn.impute import SimpleImputer

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    X_nan = X.copy()
    X_nan[0, 1] = np.nan
    pipe = Pipeline([("prep", SimpleImputer(strategy="constant", fill_value=0.0)),
                     ("clf", LogisticRegression(epsilon=1.0, data_norm=2.0))])
    prep = [SimpleImputer(strategy="constant", fill_value=0.0),
            StandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))][::order]
    for make in (DPGridSearchCV, DPRandomSearchCV):
        acc = BudgetAccountant()
        search = make(pipe, {"prep": prep}, epsilon=1.0, classes=[0, 1], accountant=acc,
                      random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y)
            with pytest.raises(DomainError):
                search.fit(X_nan, y)
        assert len(acc.spent_budget) == 1  # the first fit only


def _densify(Z):
    return Z.toarray() if hasattr(Z, "toarray") else Z


@pytest.mark.parametrize("container", ["csr", "csc", "pandas-sparse"])
def test_nan_in_sparse_rows_is_asked_of_the_pipeline_as_in_dense_rows(container):
    """The dry run's NaN probe left sparse rows without a NaN, so a pipeline that imputes NaN
    refused it for sparse rows only (``DomainError``), and a pandas column of ``Sparse[float]``
    made ``fit`` raise pandas' own ``TypeError``. Sparse rows are now asked
    as dense ones are: the same outcome for the NaN record in every container."""
    import scipy.sparse as sp
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import FunctionTransformer

    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, size=(150, 3))
    X[X < 0.5] = 0.0
    y = (rng.uniform(size=150) < 0.5).astype(int)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan

    def wrap(A):
        if container == "pandas-sparse":
            return pd.DataFrame({f"x{j}": pd.arrays.SparseArray(A[:, j], fill_value=0.0)
                                 for j in range(A.shape[1])})
        return getattr(sp, f"{container}_matrix")(A)

    pipe = Pipeline([("imp", SimpleImputer(strategy="constant", fill_value=0.0)),
                     ("dense", FunctionTransformer(_densify, accept_sparse=True)),
                     ("clf", LogisticRegression(epsilon=1.0, data_norm=2.0))])
    for A in (X, X_nan):
        acc = BudgetAccountant()
        # n_iter=4: the NaN question is asked before any run (E[K] = 1000 by default here,
        # every run fitted one by one on sparse rows: 10-16 s a container)
        search = DPRandomSearchCV(pipe, {"clf__C": [0.5, 1.0]}, epsilon=1.0, classes=[0, 1],
                                  n_iter=4, accountant=acc, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(wrap(A), y)
        assert len(acc.spent_budget) == 1
