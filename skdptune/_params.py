"""Reading and setting estimators' parameters without scikit-learn's per-call signature reads.

scikit-learn's ``BaseEstimator.get_params`` finds the parameter names by inspecting the
signature of ``__init__`` on every call (``_get_param_names``: about 25 microseconds), and
``set_params`` calls ``get_params(deep=True)`` first. A search's public set-up -- the privacy
checks, the pricing of every candidate, the candidate templates -- reads the parameters of its
estimators about a thousand times per ``fit``: about 30 ms, a tenth of a small fit, serial
work that no worker can take (docs/grid_search.md, "Parameters read without inspection").

:func:`get_params` and :func:`set_params` give exactly what the estimator's own methods give
(tests/test_params.py). They take a shortcut only for an estimator whose class uses
scikit-learn's own ``get_params``, ``_get_param_names`` (and ``set_params``, to set) and
attribute lookup unchanged, and whose instance replaces none of them: its class's names are
inspected once and kept with what they were read from -- the ``__init__`` object, the
``deprecated_original`` scikit-learn reads instead, and every function ``inspect.signature``
unwraps to from them (``__wrapped__``), each with its code and ``__signature__`` -- so that a
class whose ``__init__`` is replaced or edited (``%autoreload``) is read again. Any other
object -- a ``Pipeline``, a ``ColumnTransformer``, a class or an instance that overrides one of
them, a duck-typed estimator -- is asked itself, as scikit-learn asks it. Nothing here touches
scikit-learn's classes.

These functions feed the privacy checks (which components are diffprivlib models, which
accountants a fit could charge, what each candidate costs): a shortcut that read other names
than scikit-learn would hide a component from them, which is why any doubt falls back.
"""

from __future__ import annotations

import weakref
from typing import Any

from sklearn.base import BaseEstimator

__all__ = ["get_params", "set_params"]

_SKLEARN_GET_PARAMS = BaseEstimator.get_params
_SKLEARN_PARAM_NAMES = BaseEstimator._get_param_names.__func__
_SKLEARN_SET_PARAMS = BaseEstimator.set_params

#: class -> (what its names were read from: :func:`_source`, the names); weak, so that a
#: class made at run time can still be collected
_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _source(cls: type) -> tuple:
    """What ``cls._get_param_names()`` reads, by identity: ``__init__`` (or the
    ``deprecated_original`` scikit-learn reads instead) and every function ``inspect.signature``
    may unwrap to from it (``__wrapped__``), each with its code and ``__signature__``."""
    init = cls.__init__
    parts = []
    for function in (init, getattr(init, "deprecated_original", None)):
        for _ in range(100):  # a bound guards against a cycle, as inspect.unwrap's memo does
            if function is None:
                break
            parts += [function, getattr(function, "__code__", None),
                      getattr(function, "__signature__", None)]
            function = getattr(function, "__wrapped__", None)
    return tuple(parts)


def _plain_names(estimator: Any, method: str = "get_params") -> tuple[str, ...] | None:
    """``estimator._get_param_names()``, read once per :func:`_source` of its class, when the
    estimator's ``method`` and what it relies on are scikit-learn's own, neither overridden by
    its class nor replaced on the instance; ``None`` otherwise."""
    own = getattr(estimator, "__dict__", None)
    if own is None or {method, "get_params", "_get_param_names"} & own.keys():
        return None
    cls = type(estimator)
    if cls.__getattribute__ is not object.__getattribute__ \
            or cls.get_params is not _SKLEARN_GET_PARAMS \
            or (method == "set_params" and cls.set_params is not _SKLEARN_SET_PARAMS) \
            or getattr(cls._get_param_names, "__func__", None) is not _SKLEARN_PARAM_NAMES:
        return None
    source = _source(cls)
    known = _NAMES.get(cls)
    if known is None or len(known[0]) != len(source) \
            or any(a is not b for a, b in zip(known[0], source, strict=True)):
        known = (source, tuple(cls._get_param_names()))
        _NAMES[cls] = known
    return known[1]


def get_params(estimator: Any, deep: bool = True) -> dict:
    """``estimator.get_params(deep=deep)``, without re-reading the signature of a plain
    scikit-learn-style class (a nested estimator is read as scikit-learn reads it,
    ``value.get_params()``, through the same shortcut where it applies)."""
    names = _plain_names(estimator)
    if names is None:
        return estimator.get_params(deep=deep)
    out = {}
    for key in names:
        value = getattr(estimator, key)
        # scikit-learn's rule for a nested estimator (a class is a value, not an estimator)
        if deep and hasattr(value, "get_params") and not isinstance(value, type):
            nested = get_params(value) if _plain_names(value) is not None \
                else value.get_params()
            out.update((f"{key}__{k}", v) for k, v in nested.items())
        out[key] = value
    return out


def set_params(estimator: Any, **params: Any) -> Any:
    """``estimator.set_params(**params)``, and what it returns. For a plain class
    (:func:`get_params`) and names that are all its own (no ``__``), the parameters are read
    once, as scikit-learn's ``set_params`` reads them first (so what makes that read fail
    fails here too), and the values set directly; anything else goes through the estimator's
    own ``set_params`` (its checks and its error for an unknown name)."""
    names = _plain_names(estimator, "set_params")
    if names is None or not all(key in names for key in params):
        return estimator.set_params(**params)
    if params:
        get_params(estimator)
    for key, value in params.items():
        setattr(estimator, key, value)
    return estimator
