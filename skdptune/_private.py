"""The private region of ``fit``: one exit, and nothing data-dependent leaves but the outputs.

Everything between "the private data is read" and "the results are released" runs through
:func:`run_private`. What can leave it:

* the return value -- the searches return only private outputs and their post-processing;
* :class:`~skdptune.exceptions.PrivateFitError`, with a fixed message, raised *outside* any
  ``except`` block so that it has no ``__cause__``, no ``__context__`` and no traceback frame
  from inside (an exception's message, its chained causes and the locals of its frames may all
  describe the data);
* :class:`~skdptune.exceptions.PrivacyLeakError`, raised afresh in the same way (with
  diffprivlib's components it reflects the configuration, but a custom one may warn depending
  on the data, so ``fit`` charges the budget as for a failure; its message is fixed,
  ``LEAK_MESSAGE``);
* a ``BaseException`` that is not an error (``KeyboardInterrupt``, ``SystemExit``): a new one
  of the same kind, raised in the same way (the frames of an interrupted fit hold exact
  private values, which a debugger, ``sys.last_traceback`` or a crash reporter that records
  locals would show); ``SystemExit`` with the fixed failure message;
* nothing else: every warning raised inside is discarded, in this process by
  :func:`run_private`, in joblib workers by :func:`silenced`, which the worker-side functions
  enter themselves (warning filters do not travel to worker processes) -- except diffprivlib's
  ``PrivacyLeakWarning``, which both turn into an error.

**Threads.** Python's warning filters (before 3.14) are one list per process, and
``catch_warnings`` replaces it on entry and restores the list it saved on exit. Code running
in threads of one process therefore shares filters, and a thread that leaves its context
restores a list that may predate another thread's: a worker's "discard everything" could then
sit in front of another worker's "``PrivacyLeakWarning`` is an error", or the error filter
could disappear mid-fit (an audit of the dry run missed 2 leaky fits in 3,000 under joblib's
threading backend; the same happened with two searches fitted in two threads, and with dask's
in-process workers: docs/privacy.md, "Threads and the leak filter"). Four rules close this for
skdptune's own code:

* every filter list ``fit`` installs has the error filter for ``PrivacyLeakWarning`` in front
  (:func:`run_private`, :func:`silenced`, the dry run,
  :func:`~skdptune.estimators.leak_warnings_as_errors`), so a list restored by any of them
  still turns the warning into an error;
* one search's ``fit`` at a time per process (:func:`one_fit_at_a_time`): searches fitted in
  several threads run their ``fit`` one after the other, so one cannot restore, mid-fit of
  another, the list that predates its own;
* one worker task at a time per process inside :func:`silenced` (whatever runs the tasks in
  threads: joblib's threading backend, dask's in-process or multi-threaded workers), so the
  tasks' contexts -- and those the code inside a fit enters (scikit-learn, scipy, a user's
  estimator) -- nest instead of interleaving;
* under a thread-based joblib backend the tasks run in the calling thread in the first place
  (:func:`private_n_jobs`). The task lock already makes them take turns there; this only
  avoids starting threads that would wait for it (the fits are Python-heavy under one BLAS
  thread and gained little from threads anyway).

What is left is code outside skdptune that enters ``catch_warnings`` in another thread of the
same process while a search fits. The primary guard does not depend on filters:
:func:`~skdptune.estimators.check_leak_free_configuration` refuses a leaky configuration
before the data is read; the filters are its safety net.

**Processes.** Unseeded, some diffprivlib code draws public randomness from numpy's *global*
generator (diffprivlib's own ``DecisionTreeClassifier`` its structure and the class of an
empty leaf; skdptune fits that model with generators of the fit's own instead:
:class:`~skdptune.estimators.models.SeparateStreamsDecisionTreeClassifier`). A worker process
forked by a fork-based pool (joblib's ``multiprocessing`` backend) starts with a copy of the
parent's generator, so runs fitted in two workers, and the refit in the parent, drew the same
values: measured, 36 of 80 runs shared another run's tree structure and the refit repeated a
run's in 10 of 10 fits (docs/privacy.md). The analyses of repetition and composition assume
independent randomness. So a worker task that runs in a process other than the one running
``fit`` reseeds numpy's global generator from the operating system on entering
:func:`silenced`; the process that runs ``fit`` never has its generator touched (a user's
``np.random.seed`` stream stays theirs), and seeded components never read the global
generator.

Printing is handled where it starts: the searches' ``verbose`` messages are fixed texts and
counts known before the data is read, and every ``verbose`` parameter of the inner estimators
is set to 0 (:func:`skdptune.evaluation._fit.candidate_template`).

**Progress.** :func:`run_tasks` reports each finished joblib task, in the order the tasks were
dispatched, to a callback of the search's (``verbose >= 2``): the tasks and their number are
fixed before the data is read -- or, where their number follows the rows (the subsample-and-
aggregate evaluator's batched fits under a user's splitter, or a step whose output width
the rows decide), the reports count a number that is, ``public_total`` --, and a run that
fails inside a task is reported after every task
has finished (:func:`~skdptune.evaluation._fit.all_or_fail`), so the sequence of progress
reports is the same on every dataset of a size. Only a stop in the middle (a
``PrivacyLeakError``, ``KeyboardInterrupt``) ends it early, at a point its running time shows
too (docs/privacy.md).
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
from diffprivlib.utils import PrivacyLeakWarning
from joblib.parallel import get_active_backend
from sklearn.utils.parallel import Parallel

from ._scale_cache import scales_found_once
from .exceptions import PrivacyLeakError, PrivateFitError

__all__ = ["FAILURE_MESSAGE", "LEAKS", "LEAK_MESSAGE", "Progress", "discard_all_but_leaks",
           "one_fit_at_a_time", "private_n_jobs", "run_private", "run_tasks", "silenced",
           "uses_threads"]

#: ``progress(done, total)``: told, in the process running ``fit``, that the first ``done`` of
#: ``total`` tasks have finished (public counts: see "Progress" above)
Progress = Callable[[int, int], None]

FAILURE_MESSAGE = (
    "The private part of fit failed. The cause is not released, because it may depend on the "
    "private data; the privacy budget of the fit was charged. Check the data domain "
    "(docs/privacy.md), or rerun with error_score='raise' on non-sensitive data to debug "
    "(that voids the guarantee)."
)


#: What a private handler must let through (never turn into ``error_score`` or a failure): the
#: region reports a leak as ``PrivacyLeakError``, whatever the path it took.
LEAKS = (PrivacyLeakError, PrivacyLeakWarning)

#: The message of a leak found after the data was read. Fixed: a warning's own text could be
#: written by any component and describe the data.
LEAK_MESSAGE = (
    "A component read a privacy parameter off the private data (diffprivlib's "
    "PrivacyLeakWarning) during fit, so its result was discarded. Give every diffprivlib "
    "component its bounds / data_norm / classes explicitly (docs/privacy.md)."
)

_FIT_LOCK = threading.RLock()
_TASK_LOCK = threading.RLock()
#: The process that runs the current search's ``fit`` (see "Processes" above); a fork copies it.
_FIT_PID: int | None = None


@contextlib.contextmanager
def one_fit_at_a_time() -> Iterator[None]:
    """Hold the process-wide lock of a search's ``fit`` (re-entrant; see "Threads" above)."""
    global _FIT_PID
    with _FIT_LOCK:
        _FIT_PID = os.getpid()
        yield


def discard_all_but_leaks() -> None:
    """Filters of ``fit``: discard every warning, but make diffprivlib's
    ``PrivacyLeakWarning`` an error -- that filter in front (see "Threads" above)."""
    warnings.simplefilter("ignore")
    warnings.simplefilter("error", PrivacyLeakWarning)


def uses_threads() -> bool:
    """Whether joblib's active backend runs tasks in threads of this process."""
    return bool(getattr(get_active_backend()[0], "uses_threads", False))


def private_n_jobs(n_jobs):
    """``n_jobs`` for a ``Parallel`` call of private fits: 1 under a thread-based backend.

    With ``n_jobs=1`` joblib runs the tasks in this thread, one after the other, whatever the
    active backend. In threads they would take turns on :func:`silenced`'s lock anyway (see
    "Threads" above); this saves starting threads that would only wait.
    """
    return 1 if uses_threads() else n_jobs


def run_tasks(tasks: Iterable, *, n_jobs, progress: Progress | None = None,
              public_total: int | None = None, **parallel_params: Any) -> list:
    """``Parallel(n_jobs=n_jobs, **parallel_params)(tasks)``, with ``progress(done, total)``
    called after each task, in dispatch order (see "Progress" above).

    ``public_total``: where the number of tasks follows the rows, a count fixed before the data
    is read, over which ``progress`` hears instead -- ``1, ..., public_total`` in order, each
    once the finished tasks' share reaches it (several at once where one task crosses them), so
    the reports are the same whatever the tasks.

    Results come back as they finish where joblib can return them so (joblib >= 1.3, every
    backend but ``multiprocessing``); elsewhere ``progress`` hears once, at the end. The
    results, their order and the tasks are the same either way.
    """
    tasks = list(tasks)
    if progress is None:
        return Parallel(n_jobs=n_jobs, **parallel_params)(tasks)
    if public_total is not None:
        progress = _over_public_total(progress, public_total)
        if not tasks:  # (the rows left no task: the reports all the same)
            progress(0, 0)
            return []
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator", **parallel_params)
    except (TypeError, ValueError):  # joblib < 1.3, or a backend that cannot
        results = Parallel(n_jobs=n_jobs, **parallel_params)(tasks)
        progress(len(tasks), len(tasks))
        return results
    results = []
    for result in parallel(tasks):
        results.append(result)
        progress(len(results), len(tasks))
    return results


def _over_public_total(progress: Progress, public_total: int) -> Progress:
    """``progress`` hearing ``1, ..., public_total`` as the tasks' ``(done, total)`` cross
    them (:func:`run_tasks`)."""
    reported = 0

    def report(done: int, total: int) -> None:
        nonlocal reported
        target = public_total if done >= total else done * public_total // total
        while reported < target:
            reported += 1
            progress(reported, public_total)

    return report


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Discard every warning raised inside, but raise diffprivlib's ``PrivacyLeakWarning``
    (the fits' :func:`~skdptune.estimators.leak_warnings_as_errors` turns it into
    ``PrivacyLeakError``).

    Enter it in the function that runs in a joblib worker, around everything that touches the
    private data. One task at a time per process holds it (see "Threads" above). In a process
    other than the one running ``fit``, numpy's global generator is reseeded from the operating
    system first (see "Processes" above). Inside, as inside :func:`run_private`, diffprivlib's
    bounded-domain Laplace mechanisms find each scale once (:mod:`skdptune._scale_cache`: the
    same noise; the table is emptied when the last such context leaves).
    """
    with _TASK_LOCK, warnings.catch_warnings(), scales_found_once():
        discard_all_but_leaks()
        if os.getpid() != _FIT_PID:
            np.random.seed(np.frombuffer(os.urandom(16), dtype=np.uint32))  # noqa: NPY002 -- the generator diffprivlib reads
        yield


def run_private(function: Callable[..., Any], *args: Any, debug: bool = False,
                **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` inside the private region (see the module docstring).

    Parameters
    ----------
    function : callable
        The data-touching computation; returns private outputs only.
    debug : bool, default=False
        ``True`` (``error_score="raise"``) lets the original exception out, for debugging.

    Raises
    ------
    PrivateFitError
        When ``function`` raised an ``Exception`` other than ``PrivacyLeakError``, with a
        fixed message and no chained exception.
    PrivacyLeakError
        Raised afresh (same message, no chained exception or inner frames); also for a
        ``PrivacyLeakWarning`` raised outside a fit's
        :func:`~skdptune.estimators.leak_warnings_as_errors`. Its message is ``LEAK_MESSAGE``
        (fixed) either way.
    """
    leaked = False
    failed = False
    stopped = None
    with warnings.catch_warnings(), scales_found_once():
        discard_all_but_leaks()
        try:
            return function(*args, **kwargs)
        except LEAKS:
            leaked = True
        except Exception:
            if debug:
                raise
            failed = True
        except BaseException as exc:  # Ctrl-C, sys.exit: stop, but without the inner frames
            if debug:
                raise
            stopped = type(exc)
    # raised here, outside the except blocks: no __context__, and no frame from inside (their
    # locals may hold private intermediate values such as exact utilities)
    if leaked:
        raise PrivacyLeakError(LEAK_MESSAGE)
    if failed:
        raise PrivateFitError(FAILURE_MESSAGE)
    if stopped is not None:
        raise _fresh(stopped)
    raise AssertionError("unreachable")  # pragma: no cover


def _fresh(stop: type[BaseException]) -> BaseException:
    """A new ``BaseException`` of the kind that stopped the region, with no value from inside
    (``SystemExit`` keeps a failure status and gets the fixed message; a kind that cannot be
    built without arguments becomes ``PrivateFitError``)."""
    if issubclass(stop, SystemExit):
        return SystemExit(FAILURE_MESSAGE)
    try:
        return stop()
    except Exception:
        return PrivateFitError(FAILURE_MESSAGE)
