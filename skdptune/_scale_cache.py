"""diffprivlib's bounded-domain Laplace mechanism, its scale found once per setting in skdptune's
fits.

diffprivlib's ``LaplaceBoundedDomain`` -- the noise of the variances of ``GaussianNB``, of
``StandardScaler`` and of ``diffprivlib.tools.var`` / ``std`` / ``nanvar`` -- finds the scale
of its noise by bisection the first time it randomises: a hundred or so evaluations of a
closed-form expression, about a third of a millisecond, in every mechanism it creates, and a
fit creates one per feature (per class, for ``GaussianNB``): more than a third of the time of
a ``StandardScaler`` fit on a few thousand rows, and of a search's ``GaussianNB`` fits on small
partitions, went there. A search fits such models thousands of times.

The scale is a function of five numbers of the mechanism -- ``epsilon``, ``delta``,
``sensitivity``, ``lower``, ``upper`` --: diffprivlib 0.6.6's ``_find_scale`` reads nothing
else and draws no randomness. Inside :func:`scales_found_once` (entered by
:func:`skdptune.evaluation._fit.fitting`, the context of every fit skdptune makes) the class's
``_find_scale`` is one that looks the scale up by those five numbers, and computes it with
diffprivlib's own method where it is not there yet: the same float, so every noisy value a
mechanism draws is the one it draws without it, bit for bit (tests/test_scale_cache.py), and
the noise stays diffprivlib's. Outside skdptune's fits diffprivlib is untouched (the last of
nested or concurrent contexts to leave restores the method). Where diffprivlib's method is not
the one this was written against (another release, or a method replaced by someone else), it
is left alone.

**Privacy.** No released value changes: each mechanism draws the same noise at the same scale.
The table is this process's memory, released nowhere, and bounded (:data:`MAX_SCALES`, least
recently used first out). Its keys hold numbers a fit computed on private rows (a
``GaussianNB`` variance's sensitivity and range follow the class's noisy mean and noisy count;
a scaler's, the row count), so whether a scale is already there changes how long a fit takes:
a timing channel, outside the guarantee as every running time is (docs/privacy.md). How much
it saves depends on how often settings repeat: a ``GaussianNB`` fit whose noisy means are
clipped to the bounds (small budgets per feature) repeats them, a scaler on rows of one count
always does (``benchmarks/bench_scales.py`` measures the searches).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator

from diffprivlib.mechanisms import LaplaceBoundedDomain

__all__ = ["MAX_SCALES", "scales_found_once"]

#: scales kept (least recently used first out): a search's fits use a few settings per fit
MAX_SCALES = 4096
#: the names diffprivlib 0.6.6's ``_find_scale`` reads: the mechanism's five numbers, and numpy
#: (checked before replacing it: any other method is left alone)
READS = frozenset({"epsilon", "delta", "upper", "lower", "sensitivity", "np", "log"})

_DIFFPRIVLIB_FIND_SCALE = LaplaceBoundedDomain._find_scale
_LOCK = threading.Lock()
_ENTERED = 0


def _reads_only_the_five(method) -> bool:
    """Whether ``method`` is diffprivlib's ``_find_scale`` as written against: a method of
    ``self`` alone whose code names exactly :data:`READS`."""
    code = getattr(method, "__code__", None)
    return code is not None and code.co_argcount == 1 and frozenset(code.co_names) == READS


@functools.lru_cache(maxsize=MAX_SCALES)
def _scale(epsilon: float, delta: float, sensitivity: float, lower: float,
           upper: float) -> float:
    """diffprivlib's scale for these five numbers, by diffprivlib's own method."""
    probe = LaplaceBoundedDomain.__new__(LaplaceBoundedDomain)
    probe.epsilon, probe.delta, probe.sensitivity = epsilon, delta, sensitivity
    probe.lower, probe.upper = lower, upper
    return _DIFFPRIVLIB_FIND_SCALE(probe)


def _find_scale_once(self) -> float:
    return _scale(float(self.epsilon), float(self.delta), float(self.sensitivity),
                  float(self.lower), float(self.upper))


_APPLIES = _reads_only_the_five(_DIFFPRIVLIB_FIND_SCALE)


@contextlib.contextmanager
def scales_found_once() -> Iterator[None]:
    """Inside: ``LaplaceBoundedDomain`` finds each scale once per process (see the module)."""
    global _ENTERED
    with _LOCK:
        if _ENTERED == 0 and _APPLIES and \
                LaplaceBoundedDomain.__dict__.get("_find_scale") is _DIFFPRIVLIB_FIND_SCALE:
            LaplaceBoundedDomain._find_scale = _find_scale_once
        _ENTERED += 1
    try:
        yield
    finally:
        with _LOCK:
            _ENTERED -= 1
            if _ENTERED == 0 and LaplaceBoundedDomain.__dict__.get("_find_scale") \
                    is _find_scale_once:
                LaplaceBoundedDomain._find_scale = _DIFFPRIVLIB_FIND_SCALE
