"""The private region of ``fit``: one exit, and nothing data-dependent leaves but the outputs.

Everything between "the private data is read" and "the results are released" runs through
:func:`run_private`. What can leave it:

* the return value -- the searches return only private outputs and their post-processing;
* :class:`~skdptune.exceptions.PrivateFitError`, with a fixed message, raised *outside* any
  ``except`` block so that it has no ``__cause__``, no ``__context__`` and no traceback frame
  from inside (an exception's message, its chained causes and the locals of its frames may all
  describe the data);
* :class:`~skdptune.exceptions.PrivacyLeakError`, raised afresh in the same way (it reflects the
  configuration; its message is diffprivlib's fixed text about missing bounds), and
  ``BaseException``\\ s that are not errors (``KeyboardInterrupt``);
* nothing else: every warning raised inside is discarded, in this process by
  :func:`run_private`, in joblib workers by :func:`silenced`, which the worker-side functions
  enter themselves (warning filters do not travel to worker processes) -- except diffprivlib's
  ``PrivacyLeakWarning``, which both turn into an error.

**Threads.** Python's warning filters (before 3.14) are one list per process, and
``catch_warnings`` replaces it on entry and restores the list it saved on exit. Fits running
in threads of one process therefore share filters, and a thread that leaves its context
restores a list that may predate another thread's: a worker's "discard everything" could then
sit in front of another worker's "``PrivacyLeakWarning`` is an error", or the error filter
could disappear mid-fit (an audit of the dry run missed 2 leaky fits in 3,000 under joblib's
threading backend). Two rules close this:

* every filter list the private region installs has the error filter for
  ``PrivacyLeakWarning`` in front (:func:`run_private`, :func:`silenced`,
  :func:`~skdptune._estimators.leak_warnings_as_errors`), so a list restored by any thread
  still turns the warning into an error, whatever the interleaving of those contexts;
* the private fits never run in threads of the process that entered :func:`run_private`:
  under a thread-based joblib backend they run one after the other in this thread
  (:func:`private_n_jobs`). The code inside a fit (scikit-learn, scipy, a user's estimator)
  may enter ``catch_warnings`` too, and in threads its lists -- "ignore" in front, say --
  could be restored over another fit's.

What is left: a backend that runs several of these tasks in threads of one *worker* process
(e.g. a dask cluster with several threads per worker) can restore that worker's own filters
mid-fit. The primary guard does not depend on filters:
:func:`~skdptune._estimators.check_leak_free_configuration` refuses a leaky configuration
before the data is read; the filters are its safety net.

Printing is handled where it starts: the searches' ``verbose`` messages are fixed texts and
counts known before the data is read, and every ``verbose`` parameter of the inner estimators
is set to 0 (:func:`skdptune.evaluation._fit.candidate_template`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from diffprivlib.utils import PrivacyLeakWarning

from .exceptions import PrivacyLeakError, PrivateFitError

__all__ = ["FAILURE_MESSAGE", "private_n_jobs", "run_private", "silenced",
           "uses_threads"]

FAILURE_MESSAGE = (
    "The private part of fit failed. The cause is not released, because it may depend on the "
    "private data; the privacy budget of the fit was charged. Check the data domain "
    "(docs/privacy.md), or rerun with error_score='raise' on non-sensitive data to debug "
    "(that voids the guarantee)."
)


def _discard_all_but_leaks() -> None:
    """Filters of the private region: discard every warning, but make diffprivlib's
    ``PrivacyLeakWarning`` an error -- that filter in front (see "Threads" above)."""
    warnings.simplefilter("ignore")
    warnings.simplefilter("error", PrivacyLeakWarning)


def uses_threads() -> bool:
    """Whether joblib's active backend runs tasks in threads of this process."""
    from joblib.parallel import get_active_backend

    return bool(getattr(get_active_backend()[0], "uses_threads", False))


def private_n_jobs(n_jobs):
    """``n_jobs`` for a ``Parallel`` call of private fits: 1 under a thread-based backend.

    With ``n_jobs=1`` joblib runs the tasks in this thread, one after the other, whatever the
    active backend; the fits then never share warning filters with a concurrent thread (see
    "Threads" above). The private fits are Python-heavy and run single-threaded BLAS, so
    threads gained them little anyway.
    """
    return 1 if uses_threads() else n_jobs


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Discard every warning raised inside, but raise diffprivlib's ``PrivacyLeakWarning``
    (the fits' :func:`~skdptune._estimators.leak_warnings_as_errors` turns it into
    ``PrivacyLeakError``).

    Enter it in the function that runs in a joblib worker, around everything that touches the
    private data.
    """
    with warnings.catch_warnings():
        _discard_all_but_leaks()
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
        :func:`~skdptune._estimators.leak_warnings_as_errors`.
    """
    leak_message = None
    failed = False
    with warnings.catch_warnings():
        _discard_all_but_leaks()
        try:
            return function(*args, **kwargs)
        except PrivacyLeakError as exc:
            leak_message = str(exc)  # diffprivlib's fixed text about the configuration
        except PrivacyLeakWarning as exc:
            leak_message = f"diffprivlib raised PrivacyLeakWarning: {exc}"
        except Exception:
            if debug:
                raise
            failed = True
    # raised here, outside the except blocks: no __context__, and no frame from inside (their
    # locals may hold private intermediate values such as exact utilities)
    if leak_message is not None:
        raise PrivacyLeakError(leak_message)
    if failed:
        raise PrivateFitError(FAILURE_MESSAGE)
    raise AssertionError("unreachable")  # pragma: no cover
