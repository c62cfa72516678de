"""Walking an estimator tree: privacy cost, private components, accountants, seeds, leaks.

Everything in skdptune that needs to look *inside* an estimator goes through this module. It
understands diffprivlib models, scikit-learn's composites (:class:`~sklearn.pipeline.Pipeline`
-- including ``make_pipeline`` and nested pipelines --, :class:`~sklearn.compose.ColumnTransformer`
and :class:`~sklearn.pipeline.FeatureUnion`) and a short list of transformers that learn nothing
private from the data.

Paths
-----
A component is named by its *path*: its scikit-learn nested parameter name relative to the
estimator, e.g. ``"clf"``, ``"preprocess__num__scaler"`` or ``"remainder"`` of a
``ColumnTransformer``. The estimator itself has the empty path ``""``. A path can be used
directly with ``set_params`` (``f"{path}__epsilon"``, or ``"epsilon"`` for the root).

Privacy cost
------------
Neighbouring relation: replace-one (bounded DP; ``n`` public). The privacy cost of an estimator
is the ``(epsilon, delta)`` of fitting it once on the rows. diffprivlib components add their
``epsilon`` and ``delta`` (``delta`` is 0 for models without that parameter) by *sequential
composition*: every component reads the same records. This holds for the branches of a
``ColumnTransformer`` or ``FeatureUnion`` too: they see different columns of the *same* rows,
so replacing one record changes the input of every branch, and their costs add up.

Free (data-independent) components cost nothing:

* ``None``, ``"passthrough"`` and ``"drop"`` steps;
* :class:`~sklearn.preprocessing.PolynomialFeatures`, :class:`~sklearn.preprocessing.Normalizer`,
  :class:`~sklearn.preprocessing.Binarizer` (row-wise; they learn only the number of features);
* :class:`~sklearn.preprocessing.FunctionTransformer`, unless ``check_inverse=True`` with both
  ``func`` and ``inverse_func`` given (it then compares them on the data and warns), and
  unless an estimator (anything with ``fit``, fitted or not) can be reached from its ``func``,
  ``inverse_func``, ``kw_args`` or ``inv_kw_args`` -- through containers, object arrays,
  :func:`functools.partial`, bound methods, closures and objects' attributes
  (:func:`_fits_a_held_estimator`): the function may fit it on the rows it transforms, and the
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
* :class:`~sklearn.impute.SimpleImputer` with ``strategy="constant"`` and ``add_indicator=False``.

diffprivlib's ``KMeans``, ``RandomForestClassifier`` and ``LinearRegression`` are refused like
non-private components: they do not meet their own guarantee (:data:`_UNSOUND_DP_MODELS`,
docs/privacy.md).

Only these exact classes are free (not subclasses, which may learn from data). Every other
component that is fitted -- scikit-learn's own scalers, ``KBinsDiscretizer``, any non-DP model
such as :class:`sklearn.linear_model.LogisticRegression`, any other meta-estimator -- makes the
estimator non-private, and :func:`estimator_privacy` raises
:class:`~skdptune.exceptions.NonPrivateComponentError` naming it (unless
``allow_nonprivate=True``). A ``ColumnTransformer``'s columns must depend on the schema only
(names, dtypes), which is public: names, indices, a boolean mask or a
:func:`~sklearn.compose.make_column_selector` (which reads the names and dtypes only). Any other
callable is given the private rows and may read their values -- a selector picking the most
variable column puts one record's influence in the returned model's ``transformers_`` -- so it
is refused like a non-private component.

Search spaces
-------------
Functions that take a ``space`` accept what ``GridSearchCV`` and ``RandomizedSearchCV`` accept: a
dict, or a list of dicts, mapping nested parameter names to lists of values or to
``scipy.stats`` distributions. When the space changes a cost parameter, the cost reported is the
**maximum over the space**, and every candidate must be private. Only the parameters that can
change privacy are examined, so large grids stay cheap:

* ``epsilon`` / ``delta`` (the last component of the name): the cost is increasing in them, so
  the largest listed value is used, or the upper end of a distribution's support (an unbounded
  support is an error: the privacy cost would be unbounded);
* step replacements (values that are estimators, ``"passthrough"`` or ``"drop"``, or a name that
  is a component of the estimator) and the settings that decide whether a transformer is free
  (``categories``, ``handle_unknown``, ``knots``, ``strategy``, ...): every listed value is
  enumerated, in all combinations (at most ``10_000`` settings; split larger spaces). A
  distribution over such a parameter cannot be checked and is refused;
* the settings that decide whether diffprivlib reads bounds off the data (``bounds``,
  ``data_norm``, ``classes``, ``bounds_X``, ``bounds_y``): a listed ``None`` is the worst case.

Any other parameter (``C``, ``max_depth``, ...) does not change privacy and is ignored.
The ``(epsilon, delta)`` returned over a space is the componentwise maximum: every candidate is
``(epsilon_c, delta_c)``-DP with ``epsilon_c <= epsilon`` and ``delta_c <= delta``.
"""

from __future__ import annotations

import contextlib
import copy
import fractions
import functools
import itertools
import math
import numbers
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.utils import PrivacyLeakWarning
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
)
from sklearn.utils import check_scalar

from ._logistic import logistic_regression_epsilon
from ._params import get_params, set_params
from ._space import ArrayRange
from .accounting import PrivacyComponent
from .exceptions import NonPrivateComponentError, PrivacyLeakError

__all__ = [
    "estimator_privacy",
    "estimator_privacy_parts",
    "nonprivate_components",
    "iter_dp_components",
    "with_throwaway_accountants",
    "clone_with_throwaway_accountants",
    "scale_dp_epsilons",
    "set_total_epsilon",
    "seed_dp_components",
    "seeded_dp_components",
    "for_inner_fits",
    "strip_nonprivate_attributes",
    "check_leak_free_configuration",
    "leak_warnings_as_errors",
]

# Parameters whose value the privacy cost is increasing in.
_COST_PARAMS = frozenset({"epsilon", "delta"})
# Parameters that decide whether a component learns from the data, or the shape of the tree.
_STRUCTURE_PARAMS = frozenset(
    {
        "steps",
        "transformers",
        "transformer_list",
        "remainder",
        "categories",
        "handle_unknown",
        "min_frequency",
        "max_categories",
        "drop",
        "knots",
        "extrapolation",
        "strategy",
        "add_indicator",
        "check_inverse",
        "func",
        "inverse_func",
        "centered",
        "fit_intercept",
    }
)
# diffprivlib parameters that, when None, are read off the data (PrivacyLeakWarning).
_LEAK_PARAMS = ("bounds", "data_norm", "bounds_X", "bounds_y", "classes")
_LEAK_ADVICE = {
    "bounds": "bounds=(lower, upper) with public per-feature bounds",
    "data_norm": "data_norm to a public bound on the rows' L2 norm",
    "bounds_X": "bounds_X=(lower, upper) with public per-feature bounds",
    "bounds_y": "bounds_y=(lower, upper) with public bounds on the target",
    "classes": "classes to the public list of labels",
}
# Parameters a model's cost depends on in no monotone way: every listed value is a setting.
_SHAPE_COST_PARAMS = frozenset({"bounds", "data_norm", "C"})
_FREE_STEPS = ("passthrough", "drop")
_MAX_SETTINGS = 10_000

_DP = "dp"
_FREE = "free"
_NONPRIVATE = "nonprivate"

# Only estimator_privacy() has an opt-out; a private search has none (its guarantee would be
# void), so its message says what to replace instead (see check_private_components).
_OPT_OUT = (
    "To get the cost of the private components only, call estimator_privacy(..., "
    "allow_nonprivate=True); the estimator is then not differentially private."
)
_NO_OPT_OUT = (
    "A private search has no opt-out for such a component: replace it as suggested, or fit it "
    "on public data before the search."
)
_HINTS_BY_NAME = {
    "StandardScaler": "use diffprivlib.models.StandardScaler(bounds=...) with public bounds",
    "MinMaxScaler": (
        "use diffprivlib.models.StandardScaler(bounds=...), or a FunctionTransformer with "
        "public constants"
    ),
    "RobustScaler": "use diffprivlib.models.StandardScaler(bounds=...) with public bounds",
    "MaxAbsScaler": (
        "use diffprivlib.models.StandardScaler(bounds=...), or a FunctionTransformer with "
        "public constants"
    ),
    "QuantileTransformer": "use diffprivlib.models.StandardScaler(bounds=...) with public bounds",
    "PowerTransformer": "use diffprivlib.models.StandardScaler(bounds=...) with public bounds",
    "KBinsDiscretizer": "bin with a FunctionTransformer and public bin edges",
    "LogisticRegression": "use diffprivlib.models.LogisticRegression(data_norm=...)",
    "LinearRegression": (
        "no regressor of diffprivlib is accepted (diffprivlib's LinearRegression is refused: "
        "docs/privacy.md)"
    ),
    "GaussianNB": "use diffprivlib.models.GaussianNB(bounds=...)",
    "KMeans": "no clusterer of diffprivlib is accepted (see diffprivlib's KMeans)",
    "PCA": "use diffprivlib.models.PCA(data_norm=..., bounds=...)",
    "RandomForestClassifier": (
        "use diffprivlib.models.DecisionTreeClassifier(bounds=..., classes=...) (diffprivlib's "
        "forest is refused: docs/privacy.md)"
    ),
    "DecisionTreeClassifier": (
        "use diffprivlib.models.DecisionTreeClassifier(bounds=..., classes=...)"
    ),
    "OneHotEncoder": (
        "it is data-independent only with public categories=[...] lists, handle_unknown='ignore' "
        "or 'infrequent_if_exist', min_frequency=None, max_categories=None and drop=None"
    ),
    "OrdinalEncoder": (
        "it is data-independent only with public categories=[...] lists, "
        "handle_unknown='use_encoded_value', min_frequency=None and max_categories=None"
    ),
    "SimpleImputer": "use strategy='constant' with add_indicator=False",
    "SplineTransformer": (
        "pass knots as an array of public positions and an extrapolation other than 'error'"
    ),
    "FunctionTransformer": (
        "with check_inverse=True it compares func and inverse_func on the data and warns; "
        "set check_inverse=False"
    ),
}
_DEFAULT_HINT = "use a diffprivlib model or a data-independent transformer instead"


@dataclass(frozen=True)
class _Component:
    """One leaf of an estimator tree: its path, a description for messages, and its role."""

    path: str
    where: str
    estimator: Any
    role: str
    #: Why a component that looks free is not (it fits an estimator it holds, a column selector
    #: that reads the rows); ``None`` for the usual reasons.
    reason: str | None = None


# --------------------------------------------------------------------------------------------
# Walking one estimator
# --------------------------------------------------------------------------------------------


def _join(prefix: str, name: str) -> str:
    return f"{prefix}__{name}" if prefix else name


def _public_name(obj: Any) -> str:
    """``sklearn.preprocessing.StandardScaler`` rather than ``sklearn.preprocessing._data...``."""
    cls = type(obj)
    parts = (cls.__module__ or "").split(".")
    for i in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:i]))
        if module is not None and getattr(module, cls.__name__, None) is cls:
            return f"{'.'.join(parts[:i])}.{cls.__qualname__}"
    return f"{cls.__module__}.{cls.__qualname__}"


#: diffprivlib models that do not meet their own guarantee, by ``module.qualname``, and why:
#: they are refused like non-private components.
_UNSOUND_DP_MODELS = {
    "diffprivlib.models.k_means.KMeans": (
        "its centre update leaves a cluster that no row is nearest to where it was, without "
        "noise, and whether a cluster is empty depends on the rows (one record can decide it: "
        "some outputs then have probability 0 on a dataset and not on its neighbour); it also "
        "draws its noise from numpy's global generator when random_state is None. skdptune "
        "does not accept it until a sound update exists"
    ),
    "diffprivlib.models.forest.RandomForestClassifier": (
        "each tree draws its leaves' noise from numpy's Mersenne Twister seeded with a 31-bit "
        "integer that the forest takes from numpy's global generator and stores in the "
        "returned tree's random_state, so anyone who knows the other rows can refit a tree "
        "with it and rule out a candidate for the last one (an event of probability 0 on the "
        "true dataset); a global np.random.seed fixes those seeds, and the tree's thresholds "
        "reveal them. Use diffprivlib.models.DecisionTreeClassifier, which skdptune fits with "
        "generators of the fit's own and secure leaf noise (docs/privacy.md)"
    ),
    "diffprivlib.models.linear_regression.LinearRegression": (
        "it sizes the noise of each sum of squares x_j^2 for the lower bound alone "
        "(|bounds_X[0][j]|^2 twice, diffprivlib 0.6.6), after centring the rows on their noisy "
        "mean: a feature whose mean lies near its lower bound gets that sum almost without "
        "noise (a 0/1 feature with 2 % ones: sensitivity 0.0005 where a record can move it by "
        "0.96), and how little noise depends on the data, so no epsilon stated for it is "
        "true. skdptune does not accept it until a sound fit exists"
    ),
}


def _unsound_reason(estimator: Any) -> str | None:
    """Why a diffprivlib model does not meet its guarantee as configured, or ``None``."""
    cls = type(estimator)
    name = f"{cls.__module__}.{cls.__qualname__}"
    return _UNSOUND_DP_MODELS.get(name)


def _is_dp_component(estimator: Any) -> bool:
    """True for diffprivlib's models: defined in ``diffprivlib.*`` with an ``epsilon`` param
    (except those :func:`_unsound_reason` names)."""
    cls = type(estimator)
    module = cls.__module__ or ""
    if not module.startswith("diffprivlib.") or not hasattr(estimator, "get_params"):
        return False
    return "epsilon" in get_params(estimator, deep=False) and _unsound_reason(estimator) is None


def _is_free_step(step: Any) -> bool:
    return step is None or (isinstance(step, str) and step in _FREE_STEPS)


def _is_data_independent(estimator: Any) -> bool:
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
    from scipy.stats._distn_infrastructure import rv_frozen, rv_generic

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


def _fits_a_held_estimator(transformer: FunctionTransformer) -> str | None:
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
        return (f"can reach the estimator {_public_name(found)} through its {name}, and may "
                f"fit it on the private rows (a kw_args estimator comes back unfitted from "
                f"clone, so a function can use it only by fitting it); make it a step of the "
                f"pipeline, or transform with a model fitted on public data before the search")
    return None


def _reads_values(columns: Any) -> bool:
    """Whether a ``ColumnTransformer``'s column specification may read the rows' values: a
    callable other than scikit-learn's own ``make_column_selector`` (names and dtypes)."""
    return callable(columns) and type(columns) is not make_column_selector


def _children(estimator: Any) -> list[tuple[str, Any, str]] | None:
    """``(name, child, kind)`` of a composite understood here, ``None`` for a leaf.

    The composites are scikit-learn's own classes, not subclasses: a subclass may learn from
    the rows in its own ``fit`` (a ``Pipeline`` that stores their mean passed as its steps'
    privacy and released it, as an audit found), so it is a leaf like any other estimator, and
    refused unless it is private."""
    if type(estimator) is Pipeline:
        return [(name, step, "Pipeline step") for name, step in estimator.steps]
    if type(estimator) is ColumnTransformer:
        kind = "ColumnTransformer transformer"
        return [(name, trans, kind) for name, trans, _ in estimator.transformers] + [
            ("remainder", estimator.remainder, "ColumnTransformer remainder")
        ]
    if type(estimator) is FeatureUnion:
        kind = "FeatureUnion transformer"
        return [(name, trans, kind) for name, trans in estimator.transformer_list]
    return None


def _with_children(composite: Any, children: list) -> Any:
    """``composite`` (a copy the caller owns) with its children replaced by ``children``, given
    in :func:`_children`'s order."""
    if isinstance(composite, Pipeline):
        composite.steps = [(name, new) for (name, _), new in zip(composite.steps, children,
                                                                   strict=True)]
    elif isinstance(composite, ColumnTransformer):
        *branches, composite.remainder = children
        composite.transformers = [(name, new, columns) for (name, _, columns), new
                                  in zip(composite.transformers, branches, strict=True)]
    else:
        composite.transformer_list = [(name, new) for (name, _), new
                                      in zip(composite.transformer_list, children, strict=True)]
    return composite


def _walk(estimator: Any, path: str = "", where: str = "The estimator") -> list[_Component]:
    """The leaves of ``estimator``'s tree, in order, with their role (dp, free, nonprivate)."""
    if _is_free_step(estimator):
        return []
    if isinstance(estimator, str):
        raise ValueError(f"{where} is the string {estimator!r}, which is not a valid component.")
    children = _children(estimator)
    if children is not None:
        out = []
        selectors = ({name: columns for name, _, columns in estimator.transformers}
                     if type(estimator) is ColumnTransformer else {})
        for name, child, kind in children:
            sub = _join(path, name)
            if _reads_values(selectors.get(name)):
                out.append(_Component(
                    sub, f"The columns of {kind} '{sub}'", selectors[name], _NONPRIVATE,
                    reason=(f"are chosen by the callable {selectors[name]!r}, which is given "
                            f"the private rows and may read their values; give names, "
                            f"indices, a mask or sklearn.compose.make_column_selector (which "
                            f"reads the names and dtypes only)")))
            out += _walk(child, sub, f"{kind} '{sub}'")
        return out
    reason = (_fits_a_held_estimator(estimator) if type(estimator) is FunctionTransformer
              else None)
    if _is_dp_component(estimator):
        role = _DP
    elif reason is None and hasattr(estimator, "get_params") \
            and _is_data_independent(estimator):
        role = _FREE
    else:
        role = _NONPRIVATE
    return [_Component(path, where, estimator, role, reason)]


def _dp_cost(component: _Component, n_classes: int | None = None) -> tuple[float, float]:
    """Validated ``(epsilon, delta)`` of one diffprivlib component under replace-one: its
    ``epsilon`` times :func:`replace_one_factor`, rounded up; for ``LogisticRegression``, the
    objective-perturbation bound of :mod:`skdptune._logistic` (``n_classes``: the declared
    label set's size, ``None`` for unknown)."""
    params = get_params(component.estimator, deep=False)
    label = f"{component.where} ({_public_name(component.estimator)})"
    epsilon = _check_cost_value(params["epsilon"], "epsilon", label)
    delta = _check_cost_value(params.get("delta", 0.0), "delta", label)
    return _cost_at(component, epsilon, n_classes), delta


def _cost_at(component: _Component, epsilon: float, n_classes: int | None) -> float:
    """The epsilon one diffprivlib component costs with its ``epsilon`` set to ``epsilon``."""
    return _cost_function(component, n_classes)(epsilon)


def _cost_function(component: _Component, n_classes: int | None) -> Callable[[float], float]:
    """``epsilon -> ``:func:`_cost_at` ``(component, epsilon, n_classes)``, the component's other
    parameters read and checked once (a budget mode's bisection calls it some fifty times per
    candidate; reading the parameters is 95 % of one call)."""
    label = f"{component.where} ({_public_name(component.estimator)})"
    if _is_logistic_regression(component.estimator):
        return _logistic_cost_function(component.estimator, label, n_classes)
    factor = replace_one_factor(component.estimator)
    if factor == 1:
        return float
    if not math.isfinite(factor):
        why = ("its bounds are drawn from an ArrayRange in which a feature's lower bound can "
               "reach its upper bound, where the cost grows without limit: keep every lower "
               "bound's range below its upper bound's (e.g. lower in [0, 9], upper in [10, "
               "1e6]); or whose widest pair's width overflows a float; or that is not a pair "
               "(lower, upper) along its first axis"
               if _draws_bounds(component.estimator) else
               "its bounds are drawn from a distribution other than an ArrayRange (give an "
               "ArrayRange or a list of bounds), or a feature's bounds are not finite numbers "
               "with lower < upper (or lower == upper == 0) whose difference is finite")
        raise ValueError(f"{label}: no bounded privacy cost under replace-one neighbours: "
                         f"{why} (docs/privacy.md, \"diffprivlib's models under replace-one\").")
    return lambda epsilon: _float_at_least(fractions.Fraction(epsilon) * factor)


def _is_logistic_regression(estimator: Any) -> bool:
    from diffprivlib.models import LogisticRegression

    return isinstance(estimator, LogisticRegression)


def _logistic_cost_function(estimator: Any, label: str,
                            n_classes: int | None) -> Callable[[float], float]:
    """``epsilon ->`` what one fit of a diffprivlib ``LogisticRegression`` costs with that
    ``epsilon`` (:mod:`skdptune._logistic`): a function of ``epsilon``, ``data_norm``, ``C``,
    ``fit_intercept`` and the class count. A ``C`` drawn from a distribution takes the
    supremum over every ``C``; a ``data_norm`` drawn from one, its support's upper end and
    every ``C`` (the bound over every ``C`` grows with ``data_norm``; for one ``C`` it need
    not). The other parameters are checked here, once."""
    params = get_params(estimator, deep=False)
    data_norm, C = params["data_norm"], params["C"]
    if data_norm is None:  # read off the data: no cost is true (refused with its own message)
        check_leak_free_configuration(estimator)
    if _is_distribution(data_norm):
        data_norm, C = _upper_cost_value(f"{label} data_norm", data_norm, "data_norm"), None
    elif _is_distribution(C):
        C = None
    data_norm = _check_cost_value(data_norm, "data_norm", label)
    if data_norm <= 0:
        raise ValueError(f"{label}: data_norm must be positive, got {data_norm}.")
    if C is not None:
        C = _check_cost_value(C, "C", label)
        if C <= 0:
            raise ValueError(f"{label}: C must be positive, got {C}.")
    fit_intercept = params["fit_intercept"]
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"{label}: fit_intercept must be True or False, got {fit_intercept!r}.")
    fit_intercept = bool(fit_intercept)
    return lambda epsilon: logistic_regression_epsilon(epsilon, data_norm, C, fit_intercept,
                                                       n_classes)


def _float_at_least(value: fractions.Fraction) -> float:
    """The smallest float ``>= value``."""
    out = float(value)
    return out if fractions.Fraction(out) >= value else math.nextafter(out, math.inf)


def replace_one_factor(estimator: Any) -> fractions.Fraction | float:
    """What one unit of a diffprivlib model's ``epsilon`` costs under replace-one neighbours.

    diffprivlib sizes some models' noise for a record added or removed; replacing one record
    can change more (docs/privacy.md, "diffprivlib's models under replace-one"):

    * ``DecisionTreeClassifier``: **2**. Each leaf's class is drawn by permute-and-flip with
      ``monotonic=True``; a replaced record moves one count down in one leaf and one up in
      another (or, within one leaf, one class down and another up), which that variant pays
      twice for.
    * ``GaussianNB``: **4/3 + (2/3) R**, with ``R`` the mean over the features of
      ``max(|lower|, |upper|) / (upper - lower)``. A record whose label changes moves one unit
      between two of the class counts (each drawn at ``epsilon / 3``: 2/3), leaves one class's
      sums of ``x`` and of squared deviations and joins another's (the sums drawn at
      ``epsilon / (3 d)`` per feature for a change of ``upper - lower``, while leaving a
      class moves its sum by ``|x| <= max(|lower|, |upper|)``: (2/3) R; the squared deviations
      within their own sensitivity: 2/3). ``R >= 1/2``, with equality for bounds symmetric
      around 0 (5/3); bounds ``[0, 1]`` give 2; bounds far from 0 much more (``[10, 11]``:
      26/3). A record that keeps its label costs at most 2/3.
    * Every other admitted model: **1** (its noise is sized for a replaced record:
      ``StandardScaler``'s and ``PCA``'s bounded means and variances, ``PCA``'s covariance of
      rows of norm at most ``data_norm``). ``LogisticRegression``'s noise is too, but its
      cost is not a multiple of its ``epsilon``: :func:`skdptune._logistic.
      logistic_regression_epsilon` (1 here).

    ``GaussianNB`` bounds drawn from an :class:`~skdptune.ArrayRange` (``DPRandomSearchCV``;
    ``DPGIBOSearchCV``'s box): the supremum over the box, :func:`_box_bounds_factor`.

    Exact (a :class:`fractions.Fraction`) from the public parameters only; ``inf`` when no
    bound is known: bounds drawn from another distribution, or from a box that lets a
    feature's lower bound reach its upper bound, or a feature's bounds not finite, in the
    wrong order, with an infinite float width, or equal and not 0.
    """
    from diffprivlib.models import DecisionTreeClassifier, GaussianNB

    if isinstance(estimator, DecisionTreeClassifier):
        return fractions.Fraction(2)
    if not isinstance(estimator, GaussianNB):
        return fractions.Fraction(1)
    bounds = get_params(estimator, deep=False)["bounds"]
    if bounds is None:  # read off the data: no cost is true (refused with its own message)
        check_leak_free_configuration(estimator)
    if isinstance(bounds, ArrayRange):
        return _box_bounds_factor(bounds)
    try:
        lower, upper = bounds
        lower, upper = np.broadcast_arrays(np.ravel(np.asarray(lower, dtype=float)),
                                           np.ravel(np.asarray(upper, dtype=float)))
    except (TypeError, ValueError):  # a distribution over the bounds: no worst case known
        return math.inf
    ratios = []
    for low, high in zip(lower.tolist(), upper.tolist(), strict=True):
        if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(high - low)
                and low <= high):
            return math.inf  # diffprivlib's own width would be inf or NaN
        reach = fractions.Fraction(max(abs(low), abs(high)))
        if reach == 0:
            ratios.append(fractions.Fraction(0))  # a feature that is 0 in every row
            continue
        width = fractions.Fraction(high) - fractions.Fraction(low)
        if width <= 0:
            return math.inf
        ratios.append(reach / width)
    mean_ratio = sum(ratios, fractions.Fraction(0)) / len(ratios)
    return fractions.Fraction(4, 3) + fractions.Fraction(2, 3) * mean_ratio


def _box_bounds_factor(box: ArrayRange) -> fractions.Fraction | float:
    """:func:`replace_one_factor` of a ``GaussianNB`` whose ``bounds`` are drawn from ``box``:
    ``4/3 + (2/3) mean_j sup R_j``, the supremum over every point of the box, exact.

    ``box`` holds, per feature ``j``, a lower bound ``l`` in ``[a, b]`` and an upper bound
    ``u`` in ``[c, d]`` (its first axis: ``(lower, upper)``; a scalar pair applies to every
    feature, as diffprivlib broadcasts it). The features' ranges are independent, so the
    supremum of the mean of ``R_j = max(|l|, |u|) / (u - l)`` is the mean of the suprema, and
    each supremum is attained at one of the four corners ``(l, u)`` of its rectangle when
    ``b < c``:

    * ``sup R = max(sup |l| / (u - l), sup |u| / (u - l))``;
    * ``|l| / (u - l)`` falls as ``u`` grows, so its supremum has ``u = c``; on ``l < c``,
      ``l / (c - l)`` rises with ``l`` where ``l >= 0`` and ``-l / (c - l)`` is monotone where
      ``l <= 0`` (its derivative is ``-c / (c - l)^2``), so the maximum over ``[a, b]`` is at
      ``a`` or ``b``;
    * ``|u| / (u - l)`` rises with ``l``, so its supremum has ``l = b``; over ``u`` in
      ``[c, d]`` it is monotone on each side of 0 (derivatives ``-b / (u - b)^2`` and
      ``b / (u - b)^2``) and 0 at ``u = 0``, so its maximum is at ``c`` or ``d``.

    When ``b >= c`` the box holds points with ``u - l`` as small as one likes (or
    ``u <= l``): ``inf``, no bounded cost (the searches refuse it before any data is read; a
    box whose lower bounds stay below its upper bounds has one); so does a box whose widest
    point's width ``d - a`` overflows a float, as fixed bounds do.
    """
    if box.low.ndim < 1 or box.low.shape[0] != 2:
        return math.inf  # not a pair (lower, upper)
    ratios = []
    for a, b, c, d in zip(*(np.ravel(part).tolist() for part in (
            box.low[0], box.high[0], box.low[1], box.high[1])), strict=True):
        if not (b < c and math.isfinite(d - a)):  # diffprivlib's own float width: finite
            return math.inf
        corners = [(low, high) for low in (a, b) for high in (c, d)]
        ratios.append(max(
            fractions.Fraction(max(abs(low), abs(high)))
            / (fractions.Fraction(high) - fractions.Fraction(low)) for low, high in corners))
    return fractions.Fraction(4, 3) + fractions.Fraction(2, 3) * (
        sum(ratios, fractions.Fraction(0)) / len(ratios))


def _check_cost_value(value: Any, name: str, label: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{label}: {name} must be a real number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{label}: {name}={value} gives an unbounded privacy cost.")
    if value < 0 or (name == "delta" and value > 1):
        allowed = "in [0, 1]" if name == "delta" else "non-negative"
        raise ValueError(f"{label}: {name} must be {allowed}, got {value}.")
    return value


def _nonprivate_message(components: list[_Component], setting: dict,
                        advice: str = _OPT_OUT) -> str:
    lines = []
    for comp in components:
        if comp.reason is not None:
            subject = comp.where if callable(comp.estimator) and not hasattr(
                comp.estimator, "get_params") else (
                f"{comp.where} ({_public_name(comp.estimator)})")
            lines.append(f"{subject} {comp.reason}.")
            continue
        cls = type(comp.estimator)
        unsound = _unsound_reason(comp.estimator)
        if unsound is not None:
            lines.append(f"{comp.where} ({_public_name(comp.estimator)}) is not differentially "
                         f"private as implemented: {unsound}.")
            continue
        hint = _HINTS_BY_NAME.get(cls.__name__, _DEFAULT_HINT)
        lines.append(
            f"{comp.where} ({_public_name(comp.estimator)}) learns from the data without "
            f"differential privacy; {hint}."
        )
    if setting:
        lines.append(f"(This happens for the search-space setting {setting!r}.)")
    lines.append(advice)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Enumerating the settings of a search space that matter for privacy
# --------------------------------------------------------------------------------------------


def _subspaces(space: Any) -> list[Mapping]:
    if isinstance(space, Mapping):
        return [space]
    if isinstance(space, Sequence) and not isinstance(space, str):
        if not space:
            raise ValueError("The search space is an empty list.")
        for sub in space:
            if not isinstance(sub, Mapping):
                raise TypeError(f"The search space must be a dict or a list of dicts; got an "
                                f"element {sub!r}.")
        return list(space)
    raise TypeError(f"The search space (space, param_grid, param_distributions) must be a dict "
                    f"or a list of dicts; got {space!r}.")


def _is_distribution(values: Any) -> bool:
    return hasattr(values, "rvs")


def is_listed(spec: Any) -> bool:
    """Whether a search-space entry is a list of values (scikit-learn's rule: a sequence, not
    a string, without ``rvs``) rather than a distribution."""
    return (isinstance(spec, (Sequence, np.ndarray)) and not isinstance(spec, str)
            and not _is_distribution(spec))


def _is_component_value(value: Any) -> bool:
    return (
        hasattr(value, "get_params")
        or hasattr(value, "fit")
        or (isinstance(value, str) and value in _FREE_STEPS)
    )


def _upper_cost_value(key: str, dist: Any, last: str) -> float:
    if not hasattr(dist, "support"):
        raise ValueError(
            f"Cannot bound the privacy cost: the distribution for {key!r} has no support()."
        )
    lower, upper = (float(v) for v in dist.support())
    if not math.isfinite(upper):
        raise ValueError(
            f"The distribution for {key!r} has an unbounded support ({lower}, {upper}), so the "
            f"privacy cost over the search space is unbounded; use a distribution with a finite "
            f"upper end (e.g. scipy.stats.uniform or loguniform) or a list of values."
        )
    label = f"search-space distribution for {key!r}"
    _check_cost_value(lower, last, label)
    return _check_cost_value(upper, last, label)


def _names_step(key: str, base_params: Mapping) -> bool:
    """Whether ``key`` names a step of a composite (its value may be ``None``, a step that
    does nothing, yet the space may put an estimator there)."""
    prefix, _, last = key.rpartition("__")
    for field in ("steps", "transformer_list", "transformers"):
        entries = base_params.get(_join(prefix, field))
        if isinstance(entries, list) and any(
                isinstance(entry, tuple) and entry and entry[0] == last for entry in entries):
            return True
    return False


def _names_component(key: str, params: Mapping) -> bool:
    """Whether ``key`` names a component or a step in the estimator whose ``params`` these are."""
    return _is_component_value(params.get(key)) or _names_step(key, params)


def _names_a_replaced_component(key: str, sub: Mapping) -> bool:
    """Whether ``key`` names a component or a step inside an estimator that ``sub`` lists for
    one of its ancestors (``{"clf": [Pipeline([("inner", ...)])], "clf__inner": ...}``): the
    base estimator's parameters do not show it."""
    for other, values in sub.items():
        if not (isinstance(other, str) and key.startswith(f"{other}__") and is_listed(values)):
            continue
        rest = key[len(other) + 2:]
        for value in values:
            if hasattr(value, "get_params") and _names_component(rest, get_params(value)):
                return True
    return False


#: diffprivlib's parameters that hold a pair ``(lower, upper)``
_BOUNDS_PARAMS = ("bounds", "bounds_X", "bounds_y")


def _check_bounds_box(key: str, values: Any) -> None:
    """Refuse an :class:`~skdptune.ArrayRange` over a ``(lower, upper)`` parameter that can
    draw a lower bound above its upper bound: diffprivlib refuses such bounds in ``fit``, which
    for a search means a run that fails inside the private region, after the budget is charged,
    with a probability that follows the hidden number of runs. Public; checked before any data
    is read (``GaussianNB`` needs more: :func:`_box_bounds_factor`)."""
    for value in (list(values) if is_listed(values) else [values]):
        if not isinstance(value, ArrayRange):
            continue
        if value.low.ndim < 1 or value.low.shape[0] != 2:
            raise ValueError(f"The ArrayRange for {key!r} must be a pair (lower, upper) along "
                             f"its first axis; got shape {value.low.shape}.")
        if not np.all(value.high[0] <= value.low[1]):
            raise ValueError(
                f"The ArrayRange for {key!r} can draw a lower bound above its upper bound, "
                "which diffprivlib refuses in fit: keep every lower bound's range at or below "
                "its upper bound's (e.g. lower in [0, 9], upper in [10, 1e6]).")


def _axis(key: str, values: Any, base_params: Mapping, sub: Mapping | None = None) -> list | None:
    """The values of ``key`` to enumerate, or ``None`` when ``key`` cannot change privacy."""
    last = key.rpartition("__")[2]
    if last in _BOUNDS_PARAMS:
        _check_bounds_box(key, values)
    names_component = (_names_component(key, base_params)
                       or (_is_distribution(values) and sub is not None
                           and _names_a_replaced_component(key, sub)))
    if _is_distribution(values):
        if last in _COST_PARAMS:
            return [_upper_cost_value(key, values, last)]
        if last in _STRUCTURE_PARAMS or names_component:
            raise ValueError(
                f"Cannot check the privacy of the search space: {key!r} is drawn from a "
                f"distribution but decides whether a component is private; give a list."
            )
        # A leak parameter drawn from a distribution is never None: keep it (it is not None);
        # a C drawn from one is kept for LogisticRegression's cost (the supremum over C).
        return [values] if last in _LEAK_PARAMS or last == "C" else None
    if not is_listed(values):
        raise TypeError(
            f"Search-space values for {key!r} must be a list (or a scipy.stats distribution); "
            f"got {values!r}."
        )
    values = list(values)
    if not values:
        raise ValueError(f"Search-space values for {key!r} are an empty list.")
    if last in _COST_PARAMS:
        label = f"search-space value of {key!r}"
        return [max(_check_cost_value(v, last, label) for v in values)]
    if last in _SHAPE_COST_PARAMS and not (names_component
                                           or any(map(_is_component_value, values))):
        # a GaussianNB's cost depends on its bounds (replace_one_factor), a
        # LogisticRegression's on its data_norm and C (not monotonically: _logistic)
        return values
    if last in _LEAK_PARAMS and not (names_component or any(map(_is_component_value, values))):
        # Only None leaks: it is the worst case; otherwise any listed value will do.
        return [None] if any(v is None for v in values) else values[:1]
    if last in _STRUCTURE_PARAMS or names_component or any(map(_is_component_value, values)):
        return values
    return None


def _check_space_key(key: Any, sub: Mapping, base_params: Mapping) -> None:
    """Refuse a key that names no parameter (a component replaced in ``sub`` may add some)."""
    if not isinstance(key, str):
        raise TypeError(f"Search-space keys must be parameter names; got {key!r}.")
    replaced = any(isinstance(other, str) and key.startswith(f"{other}__") for other in sub)
    if key not in base_params and not replaced:
        raise ValueError(
            f"The search space names {key!r}, which is not a parameter of the estimator; "
            "the valid names are those of estimator.get_params().keys()."
        )


def _privacy_settings(estimator: Any, space: Any) -> Iterator[dict]:
    """The parameter settings of ``space`` that can differ in privacy (``{}``: no space)."""
    if space is None:
        yield {}
        return
    base_params = get_params(estimator)
    grids = []
    for sub in _subspaces(space):
        axes = {}
        for key, values in sub.items():
            _check_space_key(key, sub, base_params)
            axis = _axis(key, values, base_params, sub)
            if axis is not None:
                axes[key] = axis
        grids.append(axes)
    n_settings = sum(math.prod(len(v) for v in axes.values()) for axes in grids)
    if n_settings > _MAX_SETTINGS:
        raise ValueError(
            f"The search space has {n_settings} combinations of privacy-relevant settings (step "
            f"replacements, encoder settings, ...), more than {_MAX_SETTINGS}; split it into "
            f"smaller spaces."
        )
    for axes in grids:
        for combo in itertools.product(*axes.values()):
            yield dict(zip(axes.keys(), combo, strict=True))


def structure_variants(estimator: Any, space: Any) -> list:
    """The estimator under every privacy-relevant setting of ``space`` (its lists): each step
    replacement, ``"passthrough"``, encoder setting, ... -- the structures a candidate can
    have. Raises as :func:`estimator_privacy` does for a space it refuses."""
    return [candidate for _, candidate in _candidates(estimator, space)]


def _candidates(estimator: Any, space: Any) -> Iterator[tuple[dict, Any]]:
    """``(setting, estimator with setting applied)``; the estimator is never modified."""
    for setting in _privacy_settings(estimator, space):
        if not setting:
            yield setting, estimator
            continue
        candidate = clone_with_throwaway_accountants(estimator)
        try:
            set_params(candidate, **clone_with_throwaway_accountants(setting))
        except ValueError as exc:
            raise ValueError(
                f"The search-space setting {setting!r} cannot be applied to the estimator: {exc}"
            ) from exc
        yield setting, candidate


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def estimator_privacy(
    estimator: Any, space: Any = None, *, allow_nonprivate: bool = False,
    n_classes: int | None = None,
) -> tuple[float, float]:
    """Privacy cost ``(epsilon, delta)`` of fitting ``estimator`` once on the rows.

    Neighbouring relation: replace-one. diffprivlib components add their ``epsilon`` and
    ``delta`` (sequential composition: all components, including the branches of a
    ``ColumnTransformer`` or ``FeatureUnion``, read the same records). Known data-independent
    transformers cost nothing (see the module docstring for the exact list).

    The cost is that of the fit skdptune runs. For diffprivlib's ``LogisticRegression`` with
    ``fit_intercept=True`` that is a fit without intercept on the rows with a constant column
    appended (:mod:`skdptune._sound_models`); diffprivlib's own fit of it has no finite cost
    where its mechanism adds no extra ridge (docs/privacy.md, "The intercept").

    Parameters
    ----------
    estimator : estimator
        A diffprivlib model, or a ``Pipeline`` / ``ColumnTransformer`` / ``FeatureUnion``
        (nested at will) of diffprivlib models and free transformers. Not modified.
    space : dict, list of dicts or None
        The search space (``GridSearchCV``'s ``param_grid`` or ``RandomizedSearchCV``'s
        ``param_distributions``). The cost is then the maximum over the space, and every
        candidate must be private.
    allow_nonprivate : bool, default=False
        If False, a component that learns from the data without differential privacy raises
        :class:`~skdptune.exceptions.NonPrivateComponentError`. If True, such components are
        skipped (they cost nothing *in this sum*, but the result is not differentially private);
        list them with :func:`nonprivate_components` and report the opt-out.
    n_classes : int or None, default=None
        The number of classes the fits see (the searches pass their declared label set's
        size). diffprivlib's ``LogisticRegression`` fits one problem per class from three
        classes on, and its cost depends on that count (docs/privacy.md); ``None`` bounds it
        over every count.

    Returns
    -------
    epsilon, delta : float
        Data-independent upper bounds on the cost of one fit of any candidate (componentwise
        maximum over the space; sums use :func:`math.fsum`).

    Examples
    --------
    >>> from diffprivlib.models import LogisticRegression, StandardScaler
    >>> from sklearn.pipeline import make_pipeline
    >>> pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1)),
    ...                      LogisticRegression(epsilon=1.0, data_norm=1.0))
    >>> estimator_privacy(pipe)
    (1.5, 0.0)
    >>> estimator_privacy(pipe, {"logisticregression__epsilon": [0.1, 2.0]})
    (2.5, 0.0)

    Raises
    ------
    NonPrivateComponentError
        A component (of the estimator or of some candidate) is not private, and
        ``allow_nonprivate`` is False. The message names the component's path.
    ValueError
        The cost is unbounded (infinite ``epsilon``, a distribution over ``epsilon`` with an
        infinite support) or the space cannot be checked.
    """
    if not hasattr(estimator, "get_params"):
        raise TypeError(f"estimator must be a scikit-learn estimator (a diffprivlib model or a "
                        f"Pipeline of them); got {estimator!r}.")
    if not isinstance(allow_nonprivate, (bool, np.bool_)):
        raise TypeError(f"allow_nonprivate must be True or False; got {allow_nonprivate!r}.")
    eps_max, delta_max = 0.0, 0.0
    for setting, candidate in _candidates(estimator, space):
        components = _walk(candidate)
        nonprivate = [c for c in components if c.role == _NONPRIVATE]
        if nonprivate and not allow_nonprivate:
            raise NonPrivateComponentError(_nonprivate_message(nonprivate, setting))
        costs = [_dp_cost(c, n_classes) for c in components if c.role == _DP]
        eps_max = max(eps_max, math.fsum(e for e, _ in costs))
        delta_max = max(delta_max, math.fsum(d for _, d in costs))
    return eps_max, delta_max


def check_sound_components(estimator: Any) -> None:
    """Refuse an estimator holding, at any depth, a diffprivlib model that does not meet its
    own guarantee as configured (:func:`_unsound_reason`): no cost stated for it can be true.
    For a cost that comes from elsewhere (``privacy_utility_front``'s ``privacy`` callable);
    the other checks of :func:`estimator_privacy` concern costs skdptune computes."""
    objects = [estimator, *(get_params(estimator).values()
                            if hasattr(estimator, "get_params") else [])]
    for obj in objects:
        reason = _unsound_reason(obj)
        if reason is not None:
            raise NonPrivateComponentError(
                f"{_public_name(obj)} does not meet its own differential privacy guarantee: "
                f"{reason}.")


def check_private_components(estimator: Any, space: Any = None) -> None:
    """Refuse, before any data is read, an estimator with a non-private component (searches).

    Like :func:`estimator_privacy` without the opt-out, which a private search does not have:
    the message says what to replace instead.

    Raises
    ------
    NonPrivateComponentError
        Naming the component's path and a private replacement.
    """
    for setting, candidate in _candidates(estimator, space):
        nonprivate = [c for c in _walk(candidate) if c.role == _NONPRIVATE]
        if nonprivate:
            raise NonPrivateComponentError(_nonprivate_message(nonprivate, setting, _NO_OPT_OUT))


def _space_cost_values(space: Any, path: str, name: str) -> list[float]:
    """The values the search space lists for ``path``'s ``name`` (``epsilon`` or ``delta``):
    list entries, or the two ends of a distribution's support."""
    key = _join(path, name)
    values: list[float] = []
    for sub in _subspaces(space) if space is not None else []:
        if key not in sub:
            continue
        given = sub[key]
        if _is_distribution(given):
            values += [float(v) for v in given.support()]
        else:
            values += [float(v) for v in given]
    return values


def _draws_bounds(estimator: Any) -> bool:
    """Whether a diffprivlib ``GaussianNB``'s ``bounds`` are drawn from an ``ArrayRange``."""
    from diffprivlib.models import GaussianNB

    return isinstance(estimator, GaussianNB) and isinstance(
        get_params(estimator, deep=False)["bounds"], ArrayRange)


#: bounds whose replace-one factor, 5/3, is at most that of any point of a box a search accepts
#: (every feature's ``max(|l|, |u|) / (u - l) >= 1/2`` once ``l < u``)
_LEAST_FACTOR_BOUNDS = (-1.0, 1.0)


def _budget_versions(candidate: Any, components: list[_Component]) -> list:
    """The versions of ``candidate`` whose pricing at a budget bounds each step's share.

    A budget mode scales a candidate's epsilons so that it costs the budget. With
    ``GaussianNB`` components whose ``bounds`` are drawn from boxes, each draw is priced at its
    own replace-one factors. Proportional scaling (and the bisection of a
    ``LogisticRegression``'s scale) gives every step less as another step's factor grows, and
    more as its own does. So a drawn step's share is largest at its box's worst point (the
    ``ArrayRange`` itself: :func:`_box_bounds_factor`) with the other drawn steps at their
    least factor, which is at least 5/3 whatever the box (``bounds=(-1, 1)``), and every other
    step's share largest with all the drawn steps at their least. One version when no step's
    cost is drawn or the model has no other DP step. (The lines are rounded up a few units in
    the last place: the pricing's own rounding moves a share by one.)"""
    drawn = [c.path for c in components if c.role == _DP and _draws_bounds(c.estimator)]
    if not drawn or sum(c.role == _DP for c in components) < 2:
        return [candidate]

    def with_least(paths):
        version = clone_with_throwaway_accountants(candidate)
        set_params(version, **{_join(path, "bounds"): _LEAST_FACTOR_BOUNDS for path in paths})
        return version

    # the candidate itself first (its lines' details read its components), all at the least,
    # and, with several drawn steps, each at its worst with the others at their least
    return [candidate, with_least(drawn)] + ([
        with_least([p for p in drawn if p != worst]) for worst in drawn] if len(drawn) > 1 else [])


def estimator_privacy_parts(
    estimator: Any, space: Any = None, *, allow_nonprivate: bool = False,
    epsilon_total: float | None = None, n_classes: int | None = None,
) -> tuple:
    """One report line per component of ``estimator``: its cost, maximised over ``space``.

    The breakdown behind :func:`estimator_privacy`, for :class:`~skdptune.accounting.PrivacyReport`
    (the third item of a :func:`~skdptune.accounting.privacy_report` component). Each
    diffprivlib component (path and class) gets its ``(epsilon, delta)``; when the search space
    gives candidates different values (an ``epsilon`` in the space, a step replaced by another
    estimator), the line holds the **maximum over the space** and its detail says so with the
    range. Data-independent transformers are listed at cost 0; with ``allow_nonprivate=True``
    non-private components are listed as such. The figures are those of
    :func:`estimator_privacy`, split by component; they add up to its total unless different
    candidates maximise different steps (the details then say that the total is the maximum
    of the sum, not the sum of the maxima).

    Parameters
    ----------
    estimator : estimator
        As for :func:`estimator_privacy`. Not modified.
    space : dict, list of dicts or None
        The search space.
    allow_nonprivate : bool, default=False
        As for :func:`estimator_privacy`.
    epsilon_total : float or None
        The budget modes: each candidate is priced as its fits are, its epsilons set so that it
        costs this total (:func:`set_total_epsilon`), and each line holds what its step then
        costs (a ``LogisticRegression``'s cost is not proportional to its epsilon).
    n_classes : int or None
        As for :func:`estimator_privacy`.

    Returns
    -------
    tuple of PrivacyComponent
        In tree order, one per component path.

    Examples
    --------
    >>> from diffprivlib.models import LogisticRegression, StandardScaler
    >>> from sklearn.pipeline import make_pipeline
    >>> pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1)),
    ...                      LogisticRegression(epsilon=1.0, data_norm=1.0))
    >>> parts = estimator_privacy_parts(pipe, {"logisticregression__epsilon": [0.1, 2.0]})
    >>> [(p.name, p.epsilon) for p in parts]  # doctest: +NORMALIZE_WHITESPACE
    [('standardscaler (diffprivlib.models.StandardScaler)', 0.5),
     ('logisticregression (diffprivlib.models.LogisticRegression)', 2.0)]
    >>> parts[1].detail
    'max over the search space (epsilon from 0.1 to 2)'
    """
    seen: dict[str, dict] = {}
    n_settings = 0
    total_max = 0.0
    for setting, candidate in _candidates(estimator, space):
        n_settings += 1
        components = _walk(candidate)
        nonprivate = [c for c in components if c.role == _NONPRIVATE]
        if nonprivate and not allow_nonprivate:
            raise NonPrivateComponentError(_nonprivate_message(nonprivate, setting))
        variants = [components]
        if epsilon_total is not None and any(eps > 0 for _, eps in _dp_epsilons(candidate)):
            # a setting's candidate is a clone of its own (_candidates): priced in place
            variants = [_walk(set_total_epsilon(
                version if setting and version is candidate
                else clone_with_throwaway_accountants(version), epsilon_total, n_classes))
                for version in _budget_versions(candidate, components)]
            components = variants[0]
        present = set()
        setting_total = []
        for i, comp in enumerate(components):
            entry = seen.setdefault(comp.path, {"classes": [], "roles": set(), "eps": [],
                                                "delta": [], "settings": 0, "factors": set(),
                                                "bound": False, "drawn": False})
            name = _public_name(comp.estimator)
            if name not in entry["classes"]:
                entry["classes"].append(name)
            entry["roles"].add(comp.role)
            entry["settings"] += 1
            present.add(comp.path)
            eps, dlt = _dp_cost(comp, n_classes) if comp.role == _DP else (0.0, 0.0)
            if comp.role == _DP:
                # a step's largest share of the budget among the versions of its candidate,
                # a few ulps up where the share varies with the draws (_budget_versions)
                eps = max(_dp_cost(version[i], n_classes)[0] for version in variants)
                for _ in range(4 if len(variants) > 1 else 0):
                    eps = math.nextafter(eps, math.inf)
                entry["factors"].add(replace_one_factor(comp.estimator))
                entry["drawn"] |= _draws_bounds(comp.estimator)
                if _is_logistic_regression(comp.estimator):
                    raw = get_params(comp.estimator, deep=False)["epsilon"]
                    entry["bound"] |= eps > raw
            entry["eps"].append(eps)
            entry["delta"].append(dlt)
            setting_total.append(eps)
        total_max = max(total_max, math.fsum(setting_total))
    parts = []
    sum_of_maxima = math.fsum(max(e["eps"]) for e in seen.values())
    for path, entry in seen.items():
        classes = " | ".join(entry["classes"])
        name = f"{path} ({classes})" if path else classes
        roles = entry["roles"]
        if roles == {_FREE}:
            parts.append(PrivacyComponent(name, 0.0, 0.0, "data-independent: costs nothing"))
            continue
        if roles == {_NONPRIVATE}:
            parts.append(PrivacyComponent(name, 0.0, 0.0,
                                          "NOT differentially private (allow_nonprivate=True)"))
            continue
        factor = max(entry["factors"])
        eps_values = entry["eps"] + ([] if epsilon_total is not None else [
            float(value * factor) for value in _space_cost_values(space, path, "epsilon")])
        delta_values = entry["delta"] + _space_cost_values(space, path, "delta")
        eps_max, delta_max = max(entry["eps"]), max(entry["delta"])
        notes = []
        if entry["factors"] != {1}:
            shown = " to ".join(f"{float(f):.6g}" for f in sorted(entry["factors"]))
            if entry["drawn"]:
                shown = f"at most {float(max(entry['factors'])):.6g} (bounds drawn from a box)"
            notes.append(f"diffprivlib's epsilon times {shown} under replace-one "
                         "(docs/privacy.md)")
        if entry["bound"]:
            notes.append("objective perturbation's bound for this data_norm and C, above "
                         "diffprivlib's epsilon (docs/privacy.md)")
        if min(eps_values) < max(eps_values) or min(delta_values) < max(delta_values) \
                or entry["settings"] < n_settings or len(roles) > 1:
            ranges = []
            if min(eps_values) < max(eps_values):
                ranges.append(f"epsilon from {min(eps_values):.6g} to "
                              f"{max(eps_values):.6g}")
            if min(delta_values) < max(delta_values):
                ranges.append(f"delta from {min(delta_values):.6g} to {max(delta_values):.6g}")
            if entry["settings"] < n_settings or len(roles) > 1:
                ranges.append("not in every candidate")
            notes.append(f"max over the search space ({', '.join(ranges)})")
            if sum_of_maxima > total_max * (1 + 1e-12):
                notes.append("the steps' maxima come from different candidates: the total is "
                             "the maximum of their sum")
        if epsilon_total is not None:
            notes.append(f"epsilons set so that the model costs {epsilon_total:.6g} "
                         "(budget mode)")
        parts.append(PrivacyComponent(name, eps_max, delta_max,
                                      "; ".join(notes) if notes else "as configured"))
    return tuple(parts)


def nonprivate_components(estimator: Any, space: Any = None) -> list[str]:
    """Paths of the components that learn from the data without differential privacy.

    Parameters
    ----------
    estimator : estimator
        The estimator to inspect. Not modified.
    space : dict, list of dicts or None
        When given, the union over every candidate of the space.

    Returns
    -------
    list of str
        Nested parameter names (``""`` for the estimator itself), in order of first
        appearance, without repeats. Empty when the estimator is fully private.
    """
    paths: list[str] = []
    for _setting, candidate in _candidates(estimator, space):
        for comp in _walk(candidate):
            if comp.role == _NONPRIVATE and comp.path not in paths:
                paths.append(comp.path)
    return paths


def iter_dp_components(estimator: Any) -> list[tuple[str, Any]]:
    """``(path, component)`` for every diffprivlib component of ``estimator``, in tree order.

    Components hidden inside meta-estimators skdptune does not understand (which are non-private
    anyway) are not listed.
    """
    return [(c.path, c.estimator) for c in _walk(estimator) if c.role == _DP]


def final_step_after_free_steps(estimator: Any) -> Any:
    """The last step of a ``Pipeline`` whose every other component is data-independent, else
    ``None``.

    The steps before the last may be composites (``ColumnTransformer``, ``FeatureUnion``,
    nested pipelines) as long as every leaf in them is a data-independent transformer
    (:func:`_is_data_independent`) or ``"passthrough"`` / ``"drop"``: none draws noise, has a
    ``random_state`` or learns from the rows it is fitted on.
    """
    if type(estimator) is not Pipeline or not estimator.steps:  # a subclass may override fit
        return None
    final = estimator.steps[-1][1]
    prefix = [step for _, step in estimator.steps[:-1]]
    if all(comp.role == _FREE for step in prefix for comp in _walk(step)):
        return final
    return None


def leading_free_steps(estimator: Any) -> tuple[Any, Any]:
    """``(prefix, step)``: a ``Pipeline`` of the leading steps of ``estimator`` whose every
    component is data-independent (:func:`_is_data_independent`, ``"passthrough"``, ``"drop"``;
    ``None`` when there is none) and the first step after them -- the first that reads the
    rows as the prefix transforms them. Nested pipelines are read as their steps in line.
    ``(None, estimator)`` for anything but a ``Pipeline``. The steps are the estimator's own
    objects (clone the prefix before fitting it)."""
    if not isinstance(estimator, Pipeline) or not estimator.steps:
        return None, estimator
    steps = _steps_in_line(estimator)
    j = 0
    while j < len(steps) - 1 and all(comp.role == _FREE for comp in _walk(steps[j])):
        j += 1
    prefix = Pipeline([(f"step{i}", step) for i, step in enumerate(steps[:j])]) if j else None
    return prefix, steps[j]


def free_image(step: Any) -> Any:
    """``step`` cut at its private components: what its data-independent parts compute before
    any noise is drawn.

    Every diffprivlib component becomes ``"passthrough"`` and every ``Pipeline`` stops after
    its first step that holds one, so a composite (``ColumnTransformer``, ``FeatureUnion``,
    nested at any depth) outputs, side by side, the rows each of its first private components
    receives and the output of its data-independent branches. Built from clones; fit the result
    (its every step is data-independent). ``None`` when ``step`` holds no private component.
    """
    return _cut_apart(step)[0] if _holds_dp(step) else None


def _cut_apart(step: Any) -> tuple[Any, list]:
    """``(image, cut)``: :func:`free_image`'s rebuild of ``step`` (from clones), and ``step``'s
    own objects that the rebuild cuts away -- its private components, what is inside them and
    the steps after them in a pipeline. One walk gives both, so that what
    :func:`shapes_model_input` counts as cut away is what the image leaves out."""
    if not _holds_dp(step):
        return (step if isinstance(step, str) or step is None else clone(step)), []
    if _is_dp_component(step):
        return "passthrough", [step, *_deep_values(step)]
    if isinstance(step, Pipeline):
        kept, cut, reached = [], [], False
        for name, sub in step.steps:
            if reached:
                cut += [sub, *_deep_values(sub)]
                continue
            image, below = _cut_apart(sub)
            kept.append((name, image))
            cut += below
            reached = _holds_dp(sub)
        return Pipeline(kept), cut
    out = clone(step)
    if isinstance(step, ColumnTransformer):
        # prefixed output names: a private branch made "passthrough" keeps its input's names,
        # which may clash with another branch's (pandas output refuses duplicates)
        set_params(out, verbose_feature_names_out=True)
    parts = [_cut_apart(sub) for _, sub, _ in _children(step)]
    return (_with_children(out, [image for image, _ in parts]),
            [obj for _, below in parts for obj in below])


def shapes_model_input(template: Any, name: str) -> bool:
    """Whether setting the parameter ``name`` of ``template`` may change what its first private
    model receives: the data-independent steps in front of it (:func:`leading_free_steps`), or
    which step that model is -- or, when that first step is a composite holding private
    components, its :func:`free_image`.

    Conservative: ``False`` only for a parameter of a private component or of an object after
    one -- the first private step and the steps after it (``clf__C``, ``model__clf__tol``);
    in a composite first step, its private components and what follows them in a branch
    (``ct__scale__epsilon``). A parameter of a step in front (``poly__degree``), of a free
    branch of the composite (``ct__poly__degree``) or of the composite itself, a step's name
    (which replaces the step), a pipeline's own parameter, or a name that does not resolve,
    shapes it.
    """
    owner_path = name.rpartition("__")[0]
    try:
        owner = template if not owner_path else get_params(template)[owner_path]
    except Exception:  # a name that does not resolve: say it shapes (the dry run reports it)
        return True
    first = leading_free_steps(template)[1]
    steps = _steps_in_line(template)
    j = next(j for j, step in enumerate(steps) if step is first)
    if _is_dp_component(first):
        beyond = [obj for step in steps[j:] for obj in (step, *_deep_values(step))]
    else:
        beyond = [*_cut_apart(first)[1],
                  *(obj for step in steps[j + 1:] for obj in (step, *_deep_values(step)))]
    return not any(owner is obj for obj in beyond)


def _holds_dp(step: Any) -> bool:
    return bool(iter_dp_components(step))


def _deep_values(obj: Any) -> list:
    """The values of ``obj``'s deep parameters (the objects inside it), ``[]`` for a string."""
    return list(get_params(obj).values()) if hasattr(obj, "get_params") else []


def _steps_in_line(estimator: Any) -> list:
    """The steps of ``estimator``, those of nested pipelines in their place; ``[estimator]``
    for anything but a ``Pipeline`` with steps."""
    if not (isinstance(estimator, Pipeline) and estimator.steps):
        return [estimator]
    return [leaf for _, step in estimator.steps for leaf in _steps_in_line(step)]


def with_throwaway_accountants(estimator: Any) -> Any:
    """Give every diffprivlib component its own fresh, unlimited ``BudgetAccountant``.

    Sets, in place, every ``accountant`` parameter (found through ``get_params(deep=True)``, so
    at any depth) whose value is a ``BudgetAccountant`` to a new ``BudgetAccountant()``. Fitting
    the result then charges nothing to the user's accountant nor to diffprivlib's default one:
    the search charges its total once, itself.

    Parameters
    ----------
    estimator : estimator
        An estimator the caller owns, typically a fresh ``clone`` (it is modified).

    Returns
    -------
    estimator
        The same object.
    """
    updates = {
        key: BudgetAccountant()
        for key, value in get_params(estimator).items()
        if key.rpartition("__")[2] == "accountant" and isinstance(value, BudgetAccountant)
    }
    if updates:
        set_params(estimator, **updates)
    return estimator


def _accountants_in(obj: Any) -> list:
    """The ``BudgetAccountant`` objects among ``obj``'s parameters at any depth (``obj`` an
    estimator, or a dict, list or tuple of parameter values)."""
    if isinstance(obj, BudgetAccountant):
        return [obj]
    if isinstance(obj, Mapping):
        return [a for value in obj.values() for a in _accountants_in(value)]
    if isinstance(obj, (list, tuple)):
        return [a for value in obj for a in _accountants_in(value)]
    if hasattr(obj, "get_params") and not isinstance(obj, type):
        return [value for value in get_params(obj).values()
                if isinstance(value, BudgetAccountant)]
    return []


def clone_with_throwaway_accountants(obj: Any) -> Any:
    """``clone(obj, safe=False)`` with every diffprivlib ``accountant`` a new, empty one.

    The result is that of :func:`with_throwaway_accountants` on a clone, without copying any
    accountant's history on the way: ``clone`` deep-copies every parameter that is not an
    estimator, a ``BudgetAccountant`` with its list of spends, and diffprivlib's default
    accountant records every standalone fit in the process (one clone of a
    ``LogisticRegression`` took 8.7 ms after 6,000 fits, against 0.07 ms). ``obj`` is first
    deep-copied with each accountant mapped to an empty one (through the copy's memo), then
    cloned. ``obj`` and its accountants are not modified.

    Parameters
    ----------
    obj : estimator, or a dict, list or tuple of parameter values

    Returns
    -------
    A fresh clone.
    """
    memo = {id(accountant): BudgetAccountant() for accountant in _accountants_in(obj)}
    out = clone(copy.deepcopy(obj, memo) if memo else obj, safe=False)
    if hasattr(out, "get_params") and not isinstance(out, type):
        with_throwaway_accountants(out)
    return out


def _check_positive(value: Any, name: str) -> float:
    check_scalar(value, name, numbers.Real, min_val=0, include_boundaries="neither")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}.")
    return float(value)


def _dp_epsilons(estimator: Any) -> list[tuple[str, float]]:
    """``(path, epsilon parameter)`` of every diffprivlib component (not its cost)."""
    out = []
    for comp in _walk(estimator):
        if comp.role == _DP:
            label = f"{comp.where} ({_public_name(comp.estimator)})"
            value = get_params(comp.estimator, deep=False)["epsilon"]
            out.append((comp.path, _check_cost_value(value, "epsilon", label)))
    return out


def _set_epsilons(estimator: Any, epsilons: list[tuple[str, float]]) -> None:
    if epsilons:
        set_params(estimator, **{_join(path, "epsilon"): eps for path, eps in epsilons})


def scale_dp_epsilons(estimator: Any, factor: float) -> Any:
    """Multiply, in place, every diffprivlib component's ``epsilon`` by ``factor`` (> 0).

    The privacy cost (:func:`estimator_privacy`) is then multiplied by ``factor`` (``delta``
    unchanged). Returns the same object.
    """
    factor = _check_positive(factor, "factor")
    _set_epsilons(estimator, [(p, eps * factor) for p, eps in _dp_epsilons(estimator)])
    return estimator


def _largest_scale(cost: Any, target: float, upper: float) -> float:
    """A factor ``s`` in ``(0, upper]`` with ``cost(s) <= target``, as large as bisection finds
    (``cost(s) >= s * cost-free sum`` makes ``upper`` the largest that can fit). The cost of a
    ``LogisticRegression`` is not linear in its epsilon: its scale is solved for, not divided
    out; the invariant keeps the returned factor within the target."""
    if cost(upper) <= target:
        return upper
    lo, hi = 0.0, upper
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if cost(mid) <= target:
            lo = mid
        else:
            hi = mid
        if lo > 0 and hi - lo <= 1e-12 * hi:
            break
    if lo <= 0:
        raise ValueError(f"No scale of the epsilons makes the cost at most {target:g}.")
    return lo


def set_total_epsilon(estimator: Any, total: float, n_classes: int | None = None) -> Any:
    """Scale, in place, all diffprivlib ``epsilon``s proportionally so that their cost under
    replace-one (:func:`estimator_privacy`: each ``epsilon`` times :func:`replace_one_factor`,
    or ``LogisticRegression``'s bound, solved for by bisection) sums to ``total``.

    The sum is made to never exceed ``total`` (floating-point rounding is corrected downwards,
    by a few units in the last place at most), so a budget of exactly ``total`` suffices.

    Parameters
    ----------
    estimator : estimator
        Modified in place.
    total : float
        The new total ``epsilon`` (> 0). ``inf`` sets every component's ``epsilon`` to ``inf``
        (non-private fits, for models that are never released).
    n_classes : int or None
        As for :func:`estimator_privacy` (``None``: the cost over every class count is kept
        within ``total``).

    Returns
    -------
    estimator
        The same object.

    Raises
    ------
    ValueError
        ``total`` is not positive, or the estimator has no diffprivlib component with a positive
        ``epsilon``.
    """
    epsilons = _dp_epsilons(estimator)
    if total == math.inf:
        _set_epsilons(estimator, [(p, math.inf) for p, _ in epsilons])
        return estimator
    total = _check_positive(total, "total")
    components = [comp for comp in _walk(estimator) if comp.role == _DP]

    costs = [_cost_function(comp, n_classes) for comp in components]

    def cost(values):  # as estimator_privacy sums it
        return math.fsum(cost_of(value) for cost_of, value in zip(costs, values, strict=True))

    paths, base = [p for p, _ in epsilons], [eps for _, eps in epsilons]
    if cost(base) <= 0:
        raise ValueError(
            "Cannot set the total epsilon: the estimator has no diffprivlib component with a "
            "positive epsilon."
        )
    if any(_is_logistic_regression(comp.estimator) for comp in components):
        factor = _largest_scale(lambda f: cost([eps * f for eps in base]), total,
                                total / math.fsum(base))
        scaled = [eps * factor for eps in base]
    else:  # linear in the epsilons: divide, then correct the rounding
        scaled = [eps / cost(base) * total for eps in base]
    while cost(scaled) > total:
        i = int(np.argmax(scaled))
        scaled[i] = math.nextafter(scaled[i], 0.0)
    _set_epsilons(estimator, list(zip(paths, scaled, strict=True)))
    return estimator


#: Parameters whose meaning depends on the number of training rows, by diffprivlib class name.
#: diffprivlib's ``LogisticRegression`` minimises ``sum_i loss_i / n + ||w||^2 / (2 C n)`` (its
#: ridge strength is ``1 / (C n)``, as in scikit-learn, where ``C`` weighs a *sum* of losses):
#: the same ``C`` on fewer rows is a more strongly regularised model. Multiplying ``C`` by
#: ``n / n_rows`` keeps the per-example regularisation of the model fitted on ``n`` rows.
#: The other diffprivlib models have no such parameter: ``GaussianNB``'s ``var_smoothing`` is
#: an absolute variance added to each noisy variance (diffprivlib 0.6.6; scikit-learn's own
#: is relative to the largest variance), ``KMeans``, ``PCA``, ``StandardScaler``,
#: ``LinearRegression`` (unregularised) and the trees' ``max_depth`` / ``n_estimators`` do not
#: refer to ``n``.
_ROW_DEPENDENT_PARAMETERS = {"LogisticRegression": ("C",)}


def space_sets_epsilon(space: Any) -> bool:
    """Whether a search space sets a DP ``epsilon`` (which budget modes set themselves)."""
    return any(key == "epsilon" or key.endswith("__epsilon")
               for sub in _subspaces(space) for key in sub)


def rescale_row_dependent_params(estimator: Any, factor: float) -> Any:
    """Multiply, in place, the row-count-dependent parameters of diffprivlib components.

    For a fit on ``n_rows`` rows that stands in for a model fitted on ``n`` rows (a
    subsample-and-aggregate partition fit), ``factor = n / n_rows`` makes the small model
    regularised like the full one (see :data:`_ROW_DEPENDENT_PARAMETERS`). Such fits are never
    released: this changes what the partition utilities measure, not the privacy bound.
    Returns the same object.
    """
    factor = _check_positive(factor, "factor")
    updates = {}
    for comp in _walk(estimator):
        if comp.role != _DP:
            continue
        params = get_params(comp.estimator, deep=False)
        for name in _ROW_DEPENDENT_PARAMETERS.get(type(comp.estimator).__name__, ()):
            if isinstance(params.get(name), numbers.Real):
                updates[_join(comp.path, name)] = params[name] * factor
    if updates:
        set_params(estimator, **updates)
    return estimator


def _derived_seed(seed: int, path: str) -> int:
    entropy = [seed, *path.encode("utf-8")]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def seed_dp_components(estimator: Any, seed: int) -> Any:
    """Seed, in place, the randomness of ``estimator``'s components from ``seed``.

    Every diffprivlib component, and every other component whose ``random_state`` is ``None``,
    gets ``random_state`` = an int in ``[0, 2**32)`` derived from ``seed`` and the component's
    path with :class:`numpy.random.SeedSequence` (so it is the same in every process and run).
    Components get distinct seeds; an explicit ``random_state`` of a non-DP component is kept.

    Seeded noise is for testing and teaching, not production. To make repeated fits of the same
    estimator independent (partitions, repetitions), pass a different ``seed`` to each fit.

    Parameters
    ----------
    estimator : estimator
        Modified in place.
    seed : int
        Non-negative.

    Returns
    -------
    estimator
        The same object.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}.")
    seed = int(seed)
    dp_paths = {path for path, _ in iter_dp_components(estimator)}
    updates = {}
    for key, value in get_params(estimator).items():
        owner, _, last = key.rpartition("__")
        if last == "random_state" and (value is None or owner in dp_paths):
            updates[key] = _derived_seed(seed, owner)
    if updates:
        set_params(estimator, **updates)
    return estimator


def seeded_dp_components(estimator: Any) -> list[str]:
    """Paths of the diffprivlib components whose ``random_state`` is set (their noise is fixed)."""
    return [path for path, comp in iter_dp_components(estimator)
            if get_params(comp, deep=False).get("random_state") is not None]


def for_inner_fits(estimator: Any) -> Any:
    """Prepare, in place, an estimator the caller owns for a fit inside a search.

    * every diffprivlib component's ``random_state`` becomes ``None``: each fit draws fresh
      noise from diffprivlib's secure generator unless the search seeds it (a seed set on the
      estimator would give every inner and returned fit the same, known noise, and make the
      runs of a repetition dependent, which its analysis excludes);
    * every ``verbose`` parameter becomes 0: what an inner estimator prints is a release;
    * every ``ColumnTransformer``'s ``sparse_threshold`` becomes 0 (dense output): otherwise it
      chooses sparse output when the rows it is fitted on are sparse enough, so the *format* the
      next step receives -- which diffprivlib's models refuse when sparse -- would depend on
      the data, and a fit could fail on a dataset and succeed on its neighbour;
    * a diffprivlib ``LogisticRegression``'s ``epsilon``, ``C`` and ``data_norm`` become Python
      floats (the same values): diffprivlib picks its noise branch from them in their own
      precision, and a ``float32`` ``data_norm`` moved that test by about ``1e-7``, past the
      margin of the bound skdptune charges (computed in float64), so that a fit priced just
      below the branch point ran on the other branch (measured: 2.46 charged where
      the fit that ran is proven for 3.02).

    Returns the same object.
    """
    updates = {_join(path, "random_state"): None for path in seeded_dp_components(estimator)}
    params = get_params(estimator)
    updates.update({key: False if isinstance(value, bool) else 0  # composites take a bool
                    for key, value in params.items()
                    if key.rpartition("__")[2] == "verbose" and value})
    updates.update({key: 0 for key, value in params.items()
                    if key.rpartition("__")[2] == "sparse_threshold" and value != 0})
    for path, component in iter_dp_components(estimator):
        if _is_logistic_regression(component):
            for name in ("epsilon", "C", "data_norm"):
                value = getattr(component, name, None)
                if isinstance(value, numbers.Real) and type(value) is not float:
                    updates[_join(path, name)] = float(value)
    if updates:
        set_params(estimator, **updates)
    return estimator


#: Fitted attributes of diffprivlib models that are computed from the data *outside* their DP
#: mechanism: the optimiser's iteration count of ``LogisticRegression`` (L-BFGS on the private
#: objective). (``KMeans``, whose training-row ``labels_``, exact ``inertia_`` and ``n_iter_``
#: were stripped here, is refused: :data:`_UNSOUND_DP_MODELS`.)
_NONPRIVATE_ATTRIBUTES = {
    "LogisticRegression": ("n_iter_",),
}


def strip_nonprivate_attributes(estimator: Any) -> Any:
    """Delete, in place, what a fitted model's diffprivlib components hold beyond their release.

    * the fitted attributes that are not private: diffprivlib's guarantee covers a model's
      parameters, not every attribute its ``fit`` sets (:data:`_NONPRIVATE_ATTRIBUTES`);
    * the seed of their noise: a seeded search fits them with ``random_state`` set to a seed
      derived from its own, and a model that kept it let anyone who knew the other rows refit
      ``clone(model)`` on each candidate for the last one and find the true one by an exact
      match. ``random_state`` becomes ``None``, which no later use of the
      fitted model reads.

    A model a search returns is released whole, so these go. Returns the same object.
    """
    for _, component in iter_dp_components(estimator):
        for name in _NONPRIVATE_ATTRIBUTES.get(type(component).__name__, ()):
            if hasattr(component, name):
                delattr(component, name)
    seeded = {_join(path, "random_state"): None for path in seeded_dp_components(estimator)}
    if seeded:
        set_params(estimator, **seeded)
    return estimator


def check_leak_free_configuration(estimator: Any, space: Any = None) -> None:
    """Refuse, before any data is touched, a diffprivlib component that would read the data.

    diffprivlib reads a privacy parameter off the data, and emits ``PrivacyLeakWarning``, when
    it is ``None``: ``bounds`` (``GaussianNB``, ``StandardScaler``,
    ``DecisionTreeClassifier``, and ``PCA`` unless ``centered=True``), ``data_norm``
    (``LogisticRegression``, ``PCA``), ``classes`` (``DecisionTreeClassifier``),
    ``bounds_X`` / ``bounds_y`` (``LinearRegression``). The check is static: it depends on
    the parameters only.

    Parameters
    ----------
    estimator : estimator
        Not modified.
    space : dict, list of dicts or None
        When given, every candidate of the space is checked too.

    Raises
    ------
    PrivacyLeakError
        Naming the component(s) and parameter(s) at fault.
    """
    for setting, candidate in _candidates(estimator, space):
        problems = []
        for comp in _walk(candidate):
            if comp.role != _DP:
                continue
            params = get_params(comp.estimator, deep=False)
            missing = [
                name
                for name in _LEAK_PARAMS
                if name in params
                and params[name] is None
                and not (name == "bounds" and "centered" in params and params["centered"])
            ]
            if missing:
                nones = " and ".join(f"{name}=None" for name in missing)
                advice = "; ".join(f"set {_LEAK_ADVICE[name]}" for name in missing)
                pronoun = "it" if len(missing) == 1 else "them"
                problems.append(
                    f"{comp.where} ({_public_name(comp.estimator)}) has {nones}: diffprivlib "
                    f"would read {pronoun} from the data (PrivacyLeakWarning) and the fit would "
                    f"not be differentially private; {advice}."
                )
        if problems:
            if setting:
                problems.append(f"(This happens for the search-space setting {setting!r}.)")
            raise PrivacyLeakError("\n".join(problems))


@contextlib.contextmanager
def leak_warnings_as_errors() -> Iterator[None]:
    """Context manager: diffprivlib's ``PrivacyLeakWarning`` inside it raises ``PrivacyLeakError``.

    The warning is turned into an exception where it is emitted, so the fit stops before it
    uses the bounds it read off the data.

    Warning filters are per process and do not travel to joblib workers: enter this context
    *inside* the function that runs in the worker (around the ``fit``), not around the
    ``Parallel`` call. They are not thread-safe either: the searches never run their fits in
    threads of the calling process and keep this filter in front of every list they install
    (``skdptune._private``, "Threads"). :func:`check_leak_free_configuration` is the primary
    guard, this is the safety net.

    Examples
    --------
    >>> from diffprivlib.models import GaussianNB
    >>> with leak_warnings_as_errors():  # doctest: +SKIP
    ...     GaussianNB().fit(X, y)
    Traceback (most recent call last):
    skdptune.exceptions.PrivacyLeakError: ...
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        try:
            yield
        except PrivacyLeakWarning as exc:
            raise PrivacyLeakError(f"diffprivlib raised PrivacyLeakWarning: {exc}") from exc
