"""The private region (skdptune._private): one exit, no warning, a fixed error.

Unit tests of the module's own contract, without a search: what ``run_private`` lets out
(the return value; ``PrivateFitError`` / ``PrivacyLeakError`` with fixed messages and nothing
chained; a fresh interrupt), that no warning leaves it, the leak filter in front, the lock of
``one_fit_at_a_time``, ``silenced`` and the thread helpers. The searches' side of it (a failure
charges, an interrupt is charged, threads take turns) is in tests/test_side_channels.py.
"""

import os
import threading
import traceback
import warnings

import joblib
import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.fixes import parse_version
from sklearn.utils.parallel import delayed

from skdptune import _private
from skdptune._private import (
    FAILURE_MESSAGE,
    LEAK_MESSAGE,
    PrivacyLeakWarning,  # diffprivlib's; through skdptune, which must be imported first
    discard_all_but_leaks,
    one_fit_at_a_time,
    private_n_jobs,
    run_private,
    run_tasks,
    silenced,
    uses_threads,
)
from skdptune.exceptions import DomainError, PrivacyLeakError, PrivateFitError


@pytest.fixture
def global_rng():
    """numpy's global generator, restored after the test (``silenced`` may reseed it)."""
    state = np.random.get_state()  # noqa: NPY002 -- the generator diffprivlib reads
    yield
    np.random.set_state(state)  # noqa: NPY002


class _Failing:
    """A private part that raises ``error_type`` with a message holding ``value``, and keeps
    what it made so that a test can look for it outside."""

    def __init__(self, error_type=ValueError):
        self.error_type, self.calls, self.made = error_type, 0, []

    def __call__(self, value):
        self.calls += 1
        exact = np.array([value, value / 3.0])  # an exact private intermediate value
        self.made.append(exact)
        error = self.error_type(f"record 7 holds {value!r}")
        if hasattr(error, "add_note"):
            error.add_note(f"the exact loss was {exact[1]!r}")
        raise error


def _frames(exc):
    return [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]


# -- the return value is the one output of a success -------------------------------------------
def test_a_success_returns_the_functions_value_once():
    calls = []

    def private_part(a, b, *, c):
        calls.append((a, b, c))
        return {"released": a + b + c}

    assert run_private(private_part, 1, 2, c=3) == {"released": 6}
    assert calls == [(1, 2, 3)]


# -- an exception leaves as the fixed error, and nothing from inside with it -------------------
@pytest.mark.parametrize("error_type", [ValueError, ZeroDivisionError, RuntimeError, KeyError,
                                        DomainError, PrivateFitError])
def test_an_error_inside_leaves_as_the_fixed_failure_with_nothing_chained(error_type):
    private_part = _Failing(error_type)
    with pytest.raises(PrivateFitError) as info:
        run_private(private_part, 93.25)
    err = info.value
    assert type(err) is PrivateFitError
    assert err.args == (FAILURE_MESSAGE,) and str(err) == FAILURE_MESSAGE
    assert err.__cause__ is None and err.__context__ is None
    assert vars(err) == {}  # no notes, no attribute from inside
    assert private_part.calls == 1  # one attempt, one exit


def test_the_failure_keeps_no_frame_or_value_from_inside():
    """The traceback goes no deeper than ``run_private``, and no frame of it holds a value the
    private part made (a debugger or a crash reporter that records locals would show it)."""
    private_part = _Failing()
    with pytest.raises(PrivateFitError) as info:
        run_private(private_part, 93.25)
    frames = _frames(info.value)
    assert [f.f_code.co_name for f in frames][-1] == "run_private"
    assert "__call__" not in [f.f_code.co_name for f in frames]
    exact = private_part.made[0]
    for frame in frames[1:]:  # beyond this test's own frame
        assert not any(value is exact for value in frame.f_locals.values())
    # run_private's own frame holds its arguments and three flags, nothing it caught
    region = frames[-1].f_locals
    assert set(region) <= {"function", "args", "kwargs", "debug", "leaked", "failed",
                           "stopped"}
    assert region["stopped"] is None and region["failed"] is True


def test_the_failure_is_the_same_whatever_the_data():
    """Two private parts failing on different values (and with different exception types)
    release the same exception: type, arguments, attributes and the frames it passed."""
    released = []
    for value, error_type in [(0.5, ValueError), (-1e9, ArithmeticError)]:
        with pytest.raises(PrivateFitError) as info:
            run_private(_Failing(error_type), value)
        err = info.value
        released.append((type(err), err.args, vars(err), err.__cause__, err.__context__,
                         [f.f_code.co_name for f in _frames(err)]))
    assert released[0] == released[1]


def test_debug_lets_the_original_error_out():
    """``error_score='raise'`` (debugging): the very exception raised inside."""
    private_part = _Failing()
    with pytest.raises(ValueError, match="record 7 holds 93.25") as info:
        run_private(private_part, 93.25, debug=True)
    assert private_part.calls == 1
    assert not isinstance(info.value, PrivateFitError)


# -- a leak leaves as PrivacyLeakError with the fixed message ----------------------------------
def _leak_by_error():
    raise PrivacyLeakError("bounds read off the data: max age 93")


def _leak_by_raised_warning():
    raise PrivacyLeakWarning("bounds read off the data: max age 93")


class _SubLeak(PrivacyLeakWarning):
    pass


def _leak_by_warning_subclass():
    warnings.warn("bounds read off the data: max age 93", _SubLeak, stacklevel=1)


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("leak", [_leak_by_error, _leak_by_raised_warning,
                                  _leak_by_warning_subclass])
def test_a_leak_leaves_afresh_with_the_fixed_message(leak, debug):
    """Whatever the way the leak shows (diffprivlib's error, the warning raised or warned, a
    subclass of it) and even when debugging: ``PrivacyLeakError(LEAK_MESSAGE)``, raised
    afresh, nothing chained."""
    with pytest.raises(PrivacyLeakError) as info:
        run_private(leak, debug=debug)
    err = info.value
    assert type(err) is PrivacyLeakError and err.args == (LEAK_MESSAGE,)
    assert "93" not in str(err)
    assert err.__cause__ is None and err.__context__ is None and vars(err) == {}
    assert [f.f_code.co_name for f in _frames(err)][-1] == "run_private"


def test_a_users_filter_that_ignores_leaks_does_not_switch_off_the_leak_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakError):
            run_private(warnings.warn, "read off the data", PrivacyLeakWarning)


# -- interrupts: a fresh one of the same kind, with nothing from inside ------------------------
class _Interrupt(KeyboardInterrupt):
    pass


class _StopWithArgument(BaseException):
    def __init__(self, where):
        super().__init__(where)


def _stops(exc):
    def private_part():
        raise exc
    return private_part


def test_an_interrupt_of_a_subclass_leaves_as_a_fresh_one_of_that_class():
    with pytest.raises(_Interrupt) as info:
        run_private(_stops(_Interrupt("at record 7")))
    err = info.value
    assert type(err) is _Interrupt and err.args == ()
    assert err.__cause__ is None and err.__context__ is None


def test_a_system_exit_does_not_release_its_status():
    """``sys.exit(0)`` inside would otherwise tell "success" from inside the region; what
    leaves is a failure status with the fixed message."""
    for status in (0, 3, "row 7"):
        with pytest.raises(SystemExit) as info:
            run_private(_stops(SystemExit(status)))
        assert info.value.code == FAILURE_MESSAGE
        assert info.value.__context__ is None


def test_a_stop_that_needs_arguments_leaves_as_the_fixed_failure():
    """A ``BaseException`` that cannot be built afresh without its (inner) arguments."""
    with pytest.raises(PrivateFitError) as info:
        run_private(_stops(_StopWithArgument("record 7")))
    assert info.value.args == (FAILURE_MESSAGE,) and info.value.__context__ is None


# -- no warning leaves the region --------------------------------------------------------------
_WARNINGS = [UserWarning, RuntimeWarning, DeprecationWarning, FutureWarning, ConvergenceWarning]


def _warns_then(outcome):
    def private_part(value):
        for category in _WARNINGS:
            warnings.warn(f"{category.__name__}: record 7 holds {value}", category,
                          stacklevel=1)
        with np.errstate(all="warn"):
            np.log(np.array([0.0]))  # numpy's RuntimeWarning
        if outcome == "raise":
            raise ValueError(value)
        return "released"
    return private_part


@pytest.mark.parametrize("outcome", ["return", "raise"])
def test_no_warning_leaves_and_the_filters_are_restored(outcome):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # any warning that left would be recorded
        before = list(warnings.filters)
        if outcome == "return":
            assert run_private(_warns_then(outcome), 93) == "released"
        else:
            with pytest.raises(PrivateFitError):
                run_private(_warns_then(outcome), 93)
        assert list(warnings.filters) == before
    assert caught == []


def test_the_leak_filter_is_in_front_of_the_discard_filter():
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        discard_all_but_leaks()
        action, _, category, _, _ = warnings.filters[0]
        assert (action, category) == ("error", PrivacyLeakWarning)
        warnings.warn("discarded", UserWarning, stacklevel=1)  # no error, nothing recorded
        with pytest.raises(PrivacyLeakWarning):
            warnings.warn("read off the data", _SubLeak, stacklevel=1)


# -- one search's fit at a time ----------------------------------------------------------------
def test_one_fit_at_a_time_is_reentrant_and_records_the_fit_process(monkeypatch):
    monkeypatch.setattr(_private, "_FIT_PID", None)
    done = threading.Event()

    def nested():
        with one_fit_at_a_time(), one_fit_at_a_time():  # a search fitted inside a fit
            done.set()

    thread = threading.Thread(target=nested, daemon=True)
    thread.start()
    thread.join(5.0)
    assert done.is_set() and not thread.is_alive()
    assert _private._FIT_PID == os.getpid()


def test_one_fit_at_a_time_holds_other_threads_back():
    held, release, other_in = threading.Event(), threading.Event(), threading.Event()

    def first():
        with one_fit_at_a_time():
            held.set()
            release.wait(5.0)

    def second():
        held.wait(5.0)
        with one_fit_at_a_time():
            other_in.set()

    threads = [threading.Thread(target=f, daemon=True) for f in (first, second)]
    for thread in threads:
        thread.start()
    assert held.wait(5.0)
    assert not other_in.wait(0.2)  # the second fit waits while the first holds the lock
    release.set()
    assert other_in.wait(5.0)
    for thread in threads:
        thread.join(5.0)


# -- silenced: the worker side -----------------------------------------------------------------
def test_silenced_discards_warnings_but_raises_the_leak(monkeypatch, global_rng):
    monkeypatch.setattr(_private, "_FIT_PID", os.getpid())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with silenced():
            for category in _WARNINGS:
                warnings.warn("record 7", category, stacklevel=1)
            with pytest.raises(PrivacyLeakWarning):
                warnings.warn("read off the data", PrivacyLeakWarning, stacklevel=1)
    assert caught == []


def test_silenced_leaves_the_fit_process_generator_alone(monkeypatch, global_rng):
    """In the process running ``fit`` a user's ``np.random.seed`` stream stays theirs."""
    monkeypatch.setattr(_private, "_FIT_PID", os.getpid())
    np.random.seed(3)  # noqa: NPY002
    expected = np.random.rand(4)  # noqa: NPY002
    np.random.seed(3)  # noqa: NPY002
    with silenced():
        drawn = np.random.rand(4)  # noqa: NPY002
    np.testing.assert_array_equal(drawn, expected)


def test_silenced_reseeds_the_generator_of_another_process(monkeypatch, global_rng):
    """A worker forked from the fit process starts with a copy of its generator: it reseeds
    from the operating system (two entries give two different streams)."""
    monkeypatch.setattr(_private, "_FIT_PID", os.getpid() + 1)  # "another process"
    draws = []
    for _ in range(2):
        np.random.seed(3)  # noqa: NPY002 -- the state a fork would copy
        with silenced():
            draws.append(np.random.rand(4))  # noqa: NPY002
    np.random.seed(3)  # noqa: NPY002
    copied = np.random.rand(4)  # noqa: NPY002
    assert not np.array_equal(draws[0], copied)
    assert not np.array_equal(draws[0], draws[1])


# -- threads: the private fits never run in threads --------------------------------------------
def test_private_n_jobs_is_one_under_a_thread_backend():
    assert not uses_threads()
    assert private_n_jobs(4) == 4 and private_n_jobs(None) is None
    with parallel_backend("threading"):
        assert uses_threads()
        assert private_n_jobs(4) == 1 and private_n_jobs(-1) == 1


# -- run_tasks: progress over the tasks, in dispatch order --------------------------------------
#: joblib returns results as they come from 1.3 on (``return_as="generator"``)
JOBLIB_STREAMS = parse_version(joblib.__version__) >= parse_version("1.3")


def _slow_square(i):
    import time

    time.sleep(0.02 * (5 - i))  # later tasks finish first in a pool
    return i * i


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_run_tasks_reports_each_task_in_dispatch_order(n_jobs):
    heard = []
    results = run_tasks((delayed(_slow_square)(i) for i in range(5)), n_jobs=n_jobs,
                        progress=lambda done, total: heard.append((done, total)))
    assert results == [0, 1, 4, 9, 16]
    if JOBLIB_STREAMS:
        assert heard == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    else:  # joblib < 1.3 cannot return results as they come: one report at the end
        assert heard == [(5, 5)]


def test_run_tasks_without_progress_is_parallel():
    assert run_tasks((delayed(_slow_square)(i) for i in range(3)), n_jobs=1) == [0, 1, 4]


def test_run_tasks_reports_once_at_the_end_where_results_cannot_stream():
    """joblib's ``multiprocessing`` backend cannot return results as they come: the same
    results, and one report when all are done."""
    heard = []
    with parallel_backend("multiprocessing", n_jobs=2):
        results = run_tasks((delayed(_slow_square)(i) for i in range(4)), n_jobs=2,
                            progress=lambda done, total: heard.append((done, total)))
    assert results == [0, 1, 4, 9] and heard == [(4, 4)]
