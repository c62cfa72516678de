"""Transformers that learn nothing private from the rows they are fitted on.

Free (data-independent) components cost nothing:

* ``None``, ``"passthrough"`` and ``"drop"`` steps;
* :class:`~sklearn.preprocessing.PolynomialFeatures`, :class:`~sklearn.preprocessing.Normalizer`,
  :class:`~sklearn.preprocessing.Binarizer` (row-wise; they learn only the number of features);
* :class:`~sklearn.preprocessing.FunctionTransformer`, unless ``check_inverse=True`` with both
  ``func`` and ``inverse_func`` given (it then compares them on the data and warns), and
  unless an estimator (anything with ``fit``, fitted or not) can be reached from its ``func``,
  ``inverse_func``, ``kw_args`` or ``inv_kw_args`` -- through containers, object arrays,
  :func:`functools.partial`, bound methods, closures and objects' attributes
  (:func:`fits_a_held_estimator`): the function may fit it on the rows it transforms, and the
  returned model would carry what it learnt. Its ``func`` is otherwise assumed to be row-wise
  (each output row depends only on its input row) -- skdptune cannot check arbitrary code,
  such as a function that reads an estimator from module globals;
* :class:`~sklearn.preprocessing.SplineTransformer` with ``knots`` given as an array of public
  positions and ``extrapolation != "error"`` (``"uniform"``/``"quantile"`` knots are read off
  the data; ``"error"`` raises when data lie outside the knots);
* :class:`~sklearn.preprocessing.OneHotEncoder` with public ``categories=[...]`` lists,
  ``handle_unknown`` in ``("ignore", "infrequent_if_exist")``, ``min_frequency=None``,
  ``max_categories=None`` and ``drop=None`` (with ``drop`` set it warns when the data contain
  unknown categories);
* :class:`~sklearn.preprocessing.OrdinalEncoder` with public ``categories=[...]`` lists,
  ``handle_unknown="use_encoded_value"``, ``min_frequency=None`` and ``max_categories=None``;

Only these exact classes are free (not subclasses, which may learn from data).
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import types
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats._distn_infrastructure import rv_frozen, rv_generic
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
)

from .._params import get_params
from ._paths import public_name

__all__ = ["fits_a_held_estimator", "is_data_independent", "transformer_advice"]


def is_data_independent(estimator: Any) -> bool:
    """Whether a (non-composite, non-DP) component learns nothing private from the data."""
    cls = type(estimator)
    if cls in (PolynomialFeatures, Normalizer, Binarizer):
        return True
    params = get_params(estimator, deep=False)
    if cls is FunctionTransformer:
        compares_on_data = (
            params["check_inverse"]
            and params["func"] is not None
            and params["inverse_func"] is not None
        )
        return not compares_on_data
    if cls is SplineTransformer:
        return not isinstance(params["knots"], str) and params["extrapolation"] != "error"
    if cls is OneHotEncoder:
        return (
            not isinstance(params["categories"], str)
            and params["handle_unknown"] in ("ignore", "infrequent_if_exist")
            and params["min_frequency"] is None
            and params["max_categories"] is None
            and params["drop"] is None
        )
    if cls is OrdinalEncoder:
        return (
            not isinstance(params["categories"], str)
            and params["handle_unknown"] == "use_encoded_value"
            and params["min_frequency"] is None
            and params["max_categories"] is None
        )
    if cls is SimpleImputer:
        return params["strategy"] == "constant" and not params["add_indicator"]
    return False


#: Objects :func:`_reachable_estimator` visits before it gives up (and refuses).
_MAX_REACHABLE = 10_000


def _references(obj: Any) -> list:
    """The objects ``obj`` refers to that a function could use: container items, a partial's
    function and arguments, a bound method's owner, a function's closure cells, defaults and
    ``__wrapped__``, a plain object's attributes."""
    if isinstance(obj, Mapping):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    if isinstance(obj, np.ndarray):
        return obj.ravel().tolist() if obj.dtype == object else []
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.MethodType):
        return [obj.__self__, obj.__func__]
    if isinstance(obj, types.FunctionType):
        cells = []
        for cell in obj.__closure__ or ():
            with contextlib.suppress(ValueError):  # an empty cell
                cells.append(cell.cell_contents)
        return [*cells, *(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values(),
                *([obj.__wrapped__] if hasattr(obj, "__wrapped__") else [])]
    if isinstance(obj, (str, bytes, numbers.Number, type, types.ModuleType)) or obj is None:
        return []
    return list(getattr(obj, "__dict__", {}).values())


def _is_distribution_object(obj: Any) -> bool:
    """A scipy.stats distribution: its ``fit`` returns estimates and stores nothing (``cdf``
    of one is a common row-wise ``func``)."""
    return isinstance(obj, (rv_generic, rv_frozen))


def _reachable_estimator(roots: list) -> Any:
    """An object with ``fit`` that can be reached from ``roots`` (:func:`_references`), or
    ``None``; ``roots`` itself when the walk is too large to finish (refused as unchecked)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if len(seen) > _MAX_REACHABLE:
            return roots
        if not isinstance(obj, type) and hasattr(obj, "fit") and not _is_distribution_object(obj):
            return obj
        stack.extend(_references(obj))
    return None


def fits_a_held_estimator(transformer: FunctionTransformer) -> str | None:
    """Why ``transformer`` may fit an estimator on the rows it transforms, or ``None``.

    ``clone`` gives an estimator in ``kw_args`` back unfitted, so ``func`` can use it only by
    fitting it, on private rows, and the returned model keeps what it learnt (an audit
    found the rows' exact mean there); an estimator's method as ``func`` may do the
    same under any name, and so may one reached through a ``functools.partial``, a bound
    method, a closure, a container or an object's attributes (an audit found six
    such forms). Any object with ``fit`` reachable from ``func``, ``inverse_func``,
    ``kw_args`` or ``inv_kw_args`` makes the transformer non-private, fitted or not: whether
    the function fits it cannot be read off the code. What a function reads from globals is
    not seen (the module docstring says so)."""
    params = get_params(transformer, deep=False)
    for name in ("func", "inverse_func", "kw_args", "inv_kw_args"):
        found = _reachable_estimator([params[name]])
        if found is None:
            continue
        if isinstance(found, list):
            return (f"has a {name} too large to check for estimators (more than "
                    f"{_MAX_REACHABLE} objects); pass plain values")
        return (f"can reach the estimator {public_name(found)} through its {name}, and may "
                f"fit it on the private rows (a kw_args estimator comes back unfitted from "
                f"clone, so a function can use it only by fitting it); make it a step of the "
                f"pipeline, or transform with a model fitted on public data before the search")
    return None


#: What to use instead of a transformer that is free only in some settings, or learns from the
#: data: by class, found along the user class's ``__mro__`` (the models' advice is their
#: families': :func:`~skdptune.estimators.models.advice_for`).
_ADVICE = {
    KBinsDiscretizer: "bin with a FunctionTransformer and public bin edges",
    OneHotEncoder: (
        "it is data-independent only with public categories=[...] lists, handle_unknown='ignore' "
        "or 'infrequent_if_exist', min_frequency=None, max_categories=None and drop=None"
    ),
    OrdinalEncoder: (
        "it is data-independent only with public categories=[...] lists, "
        "handle_unknown='use_encoded_value', min_frequency=None and max_categories=None"
    ),
    SimpleImputer: "use strategy='constant' with add_indicator=False",
    SplineTransformer: (
        "pass knots as an array of public positions and an extrapolation other than 'error'"
    ),
    FunctionTransformer: (
        "with check_inverse=True it compares func and inverse_func on the data and warns; "
        "set check_inverse=False"
    ),
}


def transformer_advice(obj: Any) -> str | None:
    """:data:`_ADVICE` for ``obj``'s class or the first of its bases listed, or ``None``."""
    return next((_ADVICE[cls] for cls in type(obj).__mro__ if cls in _ADVICE), None)
