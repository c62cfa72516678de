"""diffprivlib's bounded-domain Laplace mechanism, its scale found once per setting while
skdptune fits.

diffprivlib's ``LaplaceBoundedDomain`` -- the noise of the variances of ``GaussianNB``, of
``StandardScaler`` and of ``diffprivlib.tools.var`` / ``std`` / ``nanvar`` -- finds the scale
of its noise by bisection the first time it randomises: a hundred or so evaluations of a
closed-form expression, about a third of a millisecond, in every mechanism it creates, and a
fit creates one per feature (per class, for ``GaussianNB``). A search fits such models
thousands of times; ``benchmarks/bench_scales.py`` measures what finding each scale once saves.

The scale is a function of five attributes of the mechanism -- ``epsilon``, ``delta``,
``sensitivity``, ``lower``, ``upper`` --: diffprivlib 0.6.6's ``_find_scale`` reads nothing
else (its code and its helpers' name exactly :data:`READS`) and draws no randomness. While
:func:`scales_found_once` is entered, the class's ``_find_scale`` is one that looks the scale
up by those five values *and their types*, and computes it with diffprivlib's own method on
the first mechanism of a key: the same arithmetic on the same objects, so the same float, and
every noisy value a mechanism draws is the one it draws without it, bit for bit
(tests/test_scale_cache.py). Where the key is new, the bisection is diffprivlib's step for
step (:func:`_bisected_scale`): the same numpy functions on the same operands in the same
order, each step's expression evaluated once where diffprivlib evaluates it twice -- half the
time, for the same float. Many keys are new: a ``GaussianNB`` variance's sensitivity follows
its class's noisy mean, so nearly every such mechanism has its own. Only ``int``, ``float``
and ``numpy.float64`` values are looked up (a float by its exact bits, so ``-0.0`` is not
``0.0``); a mechanism with any other type (float32 bounds, say, which diffprivlib keeps as
given) finds its scale with diffprivlib's method, as without this module. Where
diffprivlib's method is not the one this was written against (another release, or a method
replaced by someone else), it is left alone; the step-for-step bisection is used only where
the method's source text is 0.6.6's (:data:`BISECTION_SOURCE_SHA256`), diffprivlib's method
otherwise.

**Where.** skdptune enters the context around a search's private region
(:func:`skdptune._private.run_private`), around each worker task
(:func:`skdptune._private.silenced`) and around every fit
(:func:`skdptune.evaluation._fit.fitting`). The replacement is process-wide while any of them
is entered -- another thread's diffprivlib mechanism then finds its scale in the table too, the
same float -- and the last to leave restores diffprivlib's method. A process forked meanwhile
starts with diffprivlib's method, an empty table and a fresh lock.

**Privacy.** No released value changes: each mechanism draws the same noise at the same scale.
The table holds numbers fits computed on private rows (a ``GaussianNB`` variance's sensitivity
and range follow the class's noisy mean and noisy count; a scaler's, the row count), so it is
**emptied when the last context leaves**: nothing of one search's fit is there for the next
fit, nor for anything that reads the process afterwards. Within a fit, whether a scale is
already there changes how long a mechanism takes: a timing channel, outside the guarantee as
every running time is (docs/privacy.md). The table is bounded (:data:`MAX_SCALES`; a full
table takes no more, and a new setting's scale is then found as without it).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import threading
import types
from collections.abc import Iterator

import numpy as np
from diffprivlib.mechanisms import LaplaceBoundedDomain

__all__ = ["MAX_SCALES", "scales_found_once"]

#: scales kept at most (beyond, a scale is found as without the table): a fit uses a few
#: settings per feature
MAX_SCALES = 4096
#: the names diffprivlib 0.6.6's ``_find_scale`` and its nested helpers read: the mechanism's
#: five attributes, and numpy (checked before replacing it: any other method is left alone)
READS = frozenset({"epsilon", "delta", "upper", "lower", "sensitivity", "np", "log", "exp"})

#: sha256 of the source text of diffprivlib 0.6.6's ``LaplaceBoundedDomain._find_scale``, the
#: method :func:`_bisected_scale` reproduces step for step
BISECTION_SOURCE_SHA256 = "171554bcd13f710fad62d148637191161ced7fa6bde1772cfdb82baa6c303175"

_DIFFPRIVLIB_FIND_SCALE = LaplaceBoundedDomain._find_scale
#: (the five attributes' types and exact values) -> scale, while a context is entered
_scales: dict = {}
_lock = threading.Lock()
_entered = 0


def _names(code: types.CodeType) -> frozenset:
    """Every global and attribute name ``code`` and the functions defined in it read."""
    nested = (_names(c) for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(code.co_names).union(*nested)


def _reads_only_the_five(method) -> bool:
    """Whether ``method`` is diffprivlib's ``_find_scale`` as written against: a method of
    ``self`` alone whose code, its nested functions' included, names exactly :data:`READS`."""
    code = getattr(method, "__code__", None)
    return code is not None and code.co_argcount == 1 and _names(code) == READS


_APPLIES = _reads_only_the_five(_DIFFPRIVLIB_FIND_SCALE)


def _source_is_reproduced(method) -> bool:
    """Whether ``method``'s source text is the one :func:`_bisected_scale` reproduces (no
    source, as in a build without ``.py`` files: not)."""
    try:
        source = inspect.getsource(method)
    except (OSError, TypeError):
        return False
    return hashlib.sha256(source.encode()).hexdigest() == BISECTION_SOURCE_SHA256


#: whether a new key's scale comes from :func:`_bisected_scale` (else diffprivlib's method)
_REPRODUCED = _APPLIES and _source_is_reproduced(_DIFFPRIVLIB_FIND_SCALE)


def _bisected_scale(mechanism) -> float:
    """diffprivlib 0.6.6's ``_find_scale`` of ``mechanism``, step for step.

    The scale ``b`` of the bounded-domain Laplace mechanism is the fixed point of ``f(b) = s /
    (epsilon - log c(b) - log(1 - delta))``, ``s`` the sensitivity, ``D`` the diameter ``upper -
    lower`` and ``c(b) = (2 - e^{-s/b} - e^{-(D - s)/b}) / (1 - e^{-D/b})`` (``c(0) = 2``),
    found by bisection from ``[s / (epsilon - log(1 - delta)), f(that)]`` until the interval
    stops shrinking; the midpoint of the last interval is the scale. The operations are
    diffprivlib's -- numpy's ``exp`` and ``log`` on the same operands, the same order of
    subtraction and division, the same comparisons --, so the same float; but ``f`` of a
    step's midpoint is evaluated once (diffprivlib evaluates it twice: the same value, ``f``
    being a function of the midpoint alone), and ``log(1 - delta)`` once for the whole
    bisection (diffprivlib, in every ``f``: the same value)."""
    eps, delta = mechanism.epsilon, mechanism.delta
    diameter = mechanism.upper - mechanism.lower
    sensitivity = mechanism.sensitivity
    log_keep = np.log(1 - delta)

    def f(shape):
        if shape == 0:
            c = 2.0
        else:
            c = ((2 - np.exp(- sensitivity / shape) - np.exp(- (diameter - sensitivity) / shape))
                 / (1 - np.exp(- diameter / shape)))
        return sensitivity / (eps - np.log(c) - log_keep)

    left = sensitivity / (eps - log_keep)
    right = f(left)
    old_size = (right - left) * 2
    while old_size > right - left:
        old_size = right - left
        middle = (right + left) / 2
        value = f(middle)
        if value >= middle:
            left = middle
        if value <= middle:
            right = middle
    return (right + left) / 2


def _exact(value):
    """``value`` as a key part: its type and its exact value (a float by its bits), or
    ``None`` where its type is not looked up (only ``int``, ``float`` and ``numpy.float64``
    are)."""
    kind = type(value)
    if kind is int:
        return kind, value
    if kind is float or kind is np.float64:
        return kind, float(value).hex()
    return None


def _scale(key, mechanism) -> float:
    """The scale of ``key`` from the table, or diffprivlib's for ``mechanism`` (the first of
    its key), then kept while the table has room."""
    scale = _scales.get(key)
    if scale is None:
        scale = (_bisected_scale if _REPRODUCED else _DIFFPRIVLIB_FIND_SCALE)(mechanism)
        if len(_scales) < MAX_SCALES:
            _scales[key] = scale
    return scale


def _find_scale_once(self) -> float:
    """``LaplaceBoundedDomain._find_scale`` while :func:`scales_found_once` is entered."""
    key = tuple(_exact(getattr(self, name))
                for name in ("epsilon", "delta", "sensitivity", "lower", "upper"))
    if None in key:
        return _DIFFPRIVLIB_FIND_SCALE(self)
    return _scale(key, self)


def _enter() -> None:
    global _entered
    with _lock:
        if _entered == 0 and _APPLIES and \
                LaplaceBoundedDomain.__dict__.get("_find_scale") is _DIFFPRIVLIB_FIND_SCALE:
            LaplaceBoundedDomain._find_scale = _find_scale_once
        _entered += 1


def _leave() -> None:
    global _entered
    with _lock:
        # never below 0: a thread that forked from inside a context leaves it in the child too,
        # where the count started afresh (_fresh_in_child)
        _entered = max(_entered - 1, 0)
        if _entered == 0:
            if LaplaceBoundedDomain.__dict__.get("_find_scale") is _find_scale_once:
                LaplaceBoundedDomain._find_scale = _DIFFPRIVLIB_FIND_SCALE
            _scales.clear()


@contextlib.contextmanager
def scales_found_once() -> Iterator[None]:
    """Inside: ``LaplaceBoundedDomain`` finds each scale once (see the module)."""
    _enter()
    try:
        yield
    finally:
        _leave()


def _fresh_in_child() -> None:
    """After ``fork``: no context is entered in the child (the threads that entered them were
    not copied), so diffprivlib's method, an empty table and a lock nobody holds."""
    global _lock, _entered
    _lock, _entered = threading.Lock(), 0
    if LaplaceBoundedDomain.__dict__.get("_find_scale") is _find_scale_once:
        LaplaceBoundedDomain._find_scale = _DIFFPRIVLIB_FIND_SCALE
    _scales.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_in_child)
