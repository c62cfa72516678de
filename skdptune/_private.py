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
  enter themselves (warning filters do not travel to worker processes).

Printing is handled where it starts: the searches' ``verbose`` messages are fixed texts and
counts known before the data is read, and every ``verbose`` parameter of the inner estimators
is set to 0 (:func:`skdptune.evaluation._fit.candidate_template`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from .exceptions import PrivacyLeakError, PrivateFitError

__all__ = ["FAILURE_MESSAGE", "run_private", "silenced"]

FAILURE_MESSAGE = (
    "The private part of fit failed. The cause is not released, because it may depend on the "
    "private data; the privacy budget of the fit was charged. Check the data domain "
    "(docs/privacy.md), or rerun with error_score='raise' on non-sensitive data to debug "
    "(that voids the guarantee)."
)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Discard every warning raised inside (``PrivacyLeakWarning`` handling is kept inside).

    Enter it in the function that runs in a joblib worker, around everything that touches the
    private data. (Warning filters are process-wide and not thread-safe: under joblib's
    threading backend the main thread's :func:`run_private` filter covers the workers.)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
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
        Raised afresh (same message, no chained exception or inner frames).
    """
    leak_message = None
    failed = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return function(*args, **kwargs)
        except PrivacyLeakError as exc:
            leak_message = str(exc)  # diffprivlib's fixed text about the configuration
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
