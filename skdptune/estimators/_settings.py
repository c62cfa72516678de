"""The settings of a search space that can change privacy, and the candidates they make.

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
* the parameters a model's cost reads (its family's
  :attr:`~skdptune.estimators.models.ModelAdapter.cost_params`: a ``GaussianNB``'s
  ``bounds``, a ``LogisticRegression``'s ``data_norm`` and ``C``): every listed value is
  priced; one drawn from a distribution is priced at its worst case;
* the settings that decide whether diffprivlib reads bounds off the data (the families'
  :attr:`~skdptune.estimators.models.ModelAdapter.leak_params`: ``bounds``, ``data_norm``,
  ``classes``, ...): a listed ``None`` is the worst case.

Any other parameter (``max_depth``, ``tol``, ...) does not change privacy and is ignored.
The ``(epsilon, delta)`` returned over a space is the componentwise maximum: every candidate is
``(epsilon_c, delta_c)``-DP with ``epsilon_c <= epsilon`` and ``delta_c <= delta``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .._params import get_params, set_params
from .._space import ArrayRange
from ._inner import clone_with_throwaway_accountants
from ._paths import join
from ._values import check_cost_value, is_distribution, is_listed, upper_cost_value
from ._walk import FREE_STEPS
from .models import COST_PARAMS, LEAK_ADVICE, PAIR_PARAMS, STRUCTURE_PARAMS

__all__ = ["MAX_SETTINGS", "candidates", "privacy_settings", "space_cost_values",
           "space_sets_epsilon", "structure_variants", "subspaces"]

#: Parameters whose value the privacy cost is increasing in.
_INCREASING = frozenset({"epsilon", "delta"})
#: Parameters that decide whether a component learns from the data, or the shape of the tree:
#: the composites' and the free transformers' own, and the model families'.
_STRUCTURE = frozenset(
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
    }
) | STRUCTURE_PARAMS
#: The most privacy-relevant settings of one space that are enumerated.
MAX_SETTINGS = 10_000


def subspaces(space: Any) -> list[Mapping]:
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


def _is_component_value(value: Any) -> bool:
    return (
        hasattr(value, "get_params")
        or hasattr(value, "fit")
        or (isinstance(value, str) and value in FREE_STEPS)
    )


def _names_step(key: str, base_params: Mapping) -> bool:
    """Whether ``key`` names a step of a composite (its value may be ``None``, a step that
    does nothing, yet the space may put an estimator there)."""
    prefix, _, last = key.rpartition("__")
    for field in ("steps", "transformer_list", "transformers"):
        entries = base_params.get(join(prefix, field))
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


def _check_bounds_box(key: str, values: Any) -> None:
    """Refuse an :class:`~skdptune.ArrayRange` over a ``(lower, upper)`` parameter that can
    draw a lower bound above its upper bound: diffprivlib refuses such bounds in ``fit``, which
    for a search means a run that fails inside the private region, after the budget is charged,
    with a probability that follows the hidden number of runs. Public; checked before any data
    is read (a cost read off the bounds may need more: ``GaussianNB``'s box factor)."""
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
    if last in PAIR_PARAMS:
        _check_bounds_box(key, values)
    names_component = (_names_component(key, base_params)
                       or (is_distribution(values) and sub is not None
                           and _names_a_replaced_component(key, sub)))
    if is_distribution(values):
        if last in _INCREASING:
            return [upper_cost_value(key, values, last)]
        if last in _STRUCTURE or names_component:
            raise ValueError(
                f"Cannot check the privacy of the search space: {key!r} is drawn from a "
                f"distribution but decides whether a component is private; give a list."
            )
        # A leak parameter drawn from a distribution is never None: keep it (it is not None);
        # a cost parameter drawn from one is kept for the cost (its worst case).
        return [values] if last in LEAK_ADVICE or last in COST_PARAMS else None
    if not is_listed(values):
        raise TypeError(
            f"Search-space values for {key!r} must be a list (or a scipy.stats distribution); "
            f"got {values!r}."
        )
    values = list(values)
    if not values:
        raise ValueError(f"Search-space values for {key!r} are an empty list.")
    if last in _INCREASING:
        label = f"search-space value of {key!r}"
        return [max(check_cost_value(v, last, label) for v in values)]
    if last in COST_PARAMS and not (names_component or any(map(_is_component_value, values))):
        # a cost read off this parameter, not monotonically: every value is priced
        return values
    if last in LEAK_ADVICE and not (names_component or any(map(_is_component_value, values))):
        # Only None leaks: it is the worst case; otherwise any listed value will do.
        return [None] if any(v is None for v in values) else values[:1]
    if last in _STRUCTURE or names_component or any(map(_is_component_value, values)):
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


def privacy_settings(estimator: Any, space: Any) -> Iterator[dict]:
    """The parameter settings of ``space`` that can differ in privacy (``{}``: no space)."""
    if space is None:
        yield {}
        return
    base_params = get_params(estimator)
    grids = []
    for sub in subspaces(space):
        axes = {}
        for key, values in sub.items():
            _check_space_key(key, sub, base_params)
            axis = _axis(key, values, base_params, sub)
            if axis is not None:
                axes[key] = axis
        grids.append(axes)
    n_settings = sum(math.prod(len(v) for v in axes.values()) for axes in grids)
    if n_settings > MAX_SETTINGS:
        raise ValueError(
            f"The search space has {n_settings} combinations of privacy-relevant settings (step "
            f"replacements, encoder settings, ...), more than {MAX_SETTINGS}; split it into "
            f"smaller spaces."
        )
    for axes in grids:
        for combo in itertools.product(*axes.values()):
            yield dict(zip(axes.keys(), combo, strict=True))


def structure_variants(estimator: Any, space: Any) -> list:
    """The estimator under every privacy-relevant setting of ``space`` (its lists): each step
    replacement, ``"passthrough"``, encoder setting, ... -- the structures a candidate can
    have. Raises as :func:`estimator_privacy` does for a space it refuses."""
    return [candidate for _, candidate in candidates(estimator, space)]


def candidates(estimator: Any, space: Any) -> Iterator[tuple[dict, Any]]:
    """``(setting, estimator with setting applied)``; the estimator is never modified."""
    for setting in privacy_settings(estimator, space):
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


def space_sets_epsilon(space: Any) -> bool:
    """Whether a search space sets a DP ``epsilon`` (which budget modes set themselves)."""
    return any(key == "epsilon" or key.endswith("__epsilon")
               for sub in subspaces(space) for key in sub)


def space_cost_values(space: Any, path: str, name: str) -> list[float]:
    """The values the search space lists for ``path``'s ``name`` (``epsilon`` or ``delta``):
    list entries, or the two ends of a distribution's support."""
    key = join(path, name)
    values: list[float] = []
    for sub in subspaces(space) if space is not None else []:
        if key not in sub:
            continue
        given = sub[key]
        if is_distribution(given):
            values += [float(v) for v in given.support()]
        else:
            values += [float(v) for v in given]
    return values
