"""Walking an estimator tree: its components, in order, each with its role.

skdptune understands diffprivlib models (through their families' adapters,
:mod:`skdptune.estimators.models`), scikit-learn's composites (:class:`~sklearn.pipeline.Pipeline`
-- including ``make_pipeline`` and nested pipelines --, :class:`~sklearn.compose.ColumnTransformer`
and :class:`~sklearn.pipeline.FeatureUnion`) and a short list of transformers that learn nothing
private from the data (:mod:`._free`). A component (a leaf of the tree, named by its path:
:mod:`._paths`) is

* ``dp``: a diffprivlib model of an accepted family;
* ``free``: ``None``, ``"passthrough"``, ``"drop"`` or a data-independent transformer;
* ``nonprivate``: anything else that is fitted -- scikit-learn's own scalers, any non-DP model,
  a refused diffprivlib family, any other meta-estimator or subclass of a composite (a subclass
  may learn from the rows in its own ``fit``) -- and a ``ColumnTransformer``'s column
  specification that may read the rows' values (a callable other than scikit-learn's
  :func:`~sklearn.compose.make_column_selector`, which reads the names and dtypes only: a
  selector picking the most variable column puts one record's influence in the returned
  model's ``transformers_``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer

from .._params import get_params
from ._free import fits_a_held_estimator, is_data_independent
from ._paths import join
from .models import adapter_for

__all__ = ["DP", "FREE", "FREE_STEPS", "NONPRIVATE", "Component", "children", "deep_values",
           "fitted_dp_components", "holds_dp", "is_dp_component", "is_free_step",
           "iter_dp_components",
           "steps_in_line", "walk", "with_children"]


#: steps that do nothing
FREE_STEPS = ("passthrough", "drop")

#: the roles of a component
DP, FREE, NONPRIVATE = "dp", "free", "nonprivate"


@dataclass(frozen=True)
class Component:
    """One leaf of an estimator tree: its path, a description for messages, and its role."""

    path: str
    where: str
    estimator: Any
    role: str
    #: Why a component that looks free is not (it fits an estimator it holds, a column selector
    #: that reads the rows); ``None`` for the usual reasons.
    reason: str | None = None


def is_dp_component(estimator: Any) -> bool:
    """True for the diffprivlib models of a family skdptune accepts (exact classes:
    :func:`~skdptune.estimators.models.adapter_for`); refused families are not."""
    family = adapter_for(estimator)
    return family is not None and family.unsound is None


def is_free_step(step: Any) -> bool:
    return step is None or (isinstance(step, str) and step in FREE_STEPS)


def reads_values(columns: Any) -> bool:
    """Whether a ``ColumnTransformer``'s column specification may read the rows' values: a
    callable other than scikit-learn's own ``make_column_selector`` (names and dtypes)."""
    return callable(columns) and type(columns) is not make_column_selector


def children(estimator: Any) -> list[tuple[str, Any, str]] | None:
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


def with_children(composite: Any, new: list) -> Any:
    """``composite`` (a copy the caller owns) with its children replaced by ``new``, given in
    :func:`children`'s order."""
    if isinstance(composite, Pipeline):
        composite.steps = [(name, step) for (name, _), step
                           in zip(composite.steps, new, strict=True)]
    elif isinstance(composite, ColumnTransformer):
        *branches, composite.remainder = new
        composite.transformers = [(name, step, columns) for (name, _, columns), step
                                  in zip(composite.transformers, branches, strict=True)]
    else:
        composite.transformer_list = [(name, step) for (name, _), step
                                      in zip(composite.transformer_list, new, strict=True)]
    return composite


def walk(estimator: Any, path: str = "", where: str = "The estimator") -> list[Component]:
    """The leaves of ``estimator``'s tree, in order, with their role (dp, free, nonprivate)."""
    if is_free_step(estimator):
        return []
    if isinstance(estimator, str):
        raise ValueError(f"{where} is the string {estimator!r}, which is not a valid component.")
    kids = children(estimator)
    if kids is not None:
        out = []
        selectors = ({name: columns for name, _, columns in estimator.transformers}
                     if type(estimator) is ColumnTransformer else {})
        for name, child, kind in kids:
            sub = join(path, name)
            if reads_values(selectors.get(name)):
                out.append(Component(
                    sub, f"The columns of {kind} '{sub}'", selectors[name], NONPRIVATE,
                    reason=(f"are chosen by the callable {selectors[name]!r}, which is given "
                            f"the private rows and may read their values; give names, "
                            f"indices, a mask or sklearn.compose.make_column_selector (which "
                            f"reads the names and dtypes only)")))
            out += walk(child, sub, f"{kind} '{sub}'")
        return out
    reason = (fits_a_held_estimator(estimator) if type(estimator) is FunctionTransformer
              else None)
    if is_dp_component(estimator):
        role = DP
    elif reason is None and hasattr(estimator, "get_params") \
            and is_data_independent(estimator):
        role = FREE
    else:
        role = NONPRIVATE
    return [Component(path, where, estimator, role, reason)]


def iter_dp_components(estimator: Any) -> list[tuple[str, Any]]:
    """``(path, component)`` for every diffprivlib component of ``estimator``, in tree order.

    Components hidden inside meta-estimators skdptune does not understand (which are non-private
    anyway) are not listed.
    """
    return [(c.path, c.estimator) for c in walk(estimator) if c.role == DP]


def fitted_dp_components(estimator: Any) -> list[Any]:
    """Every diffprivlib component of a fitted ``estimator``: those of its tree
    (:func:`iter_dp_components`) and those a fitted ``ColumnTransformer`` holds in its
    ``transformers_`` -- the clones it fitted, which its ``transformers`` parameter does not
    hold --, at any depth; each object once, in tree order."""
    found: dict[int, Any] = {}
    visited: set[int] = set()

    def visit(obj: Any) -> None:
        if id(obj) in visited:
            return
        visited.add(id(obj))
        for _, component in iter_dp_components(obj):
            found.setdefault(id(component), component)
        for comp in [obj, *deep_values(obj)]:
            if type(comp) is ColumnTransformer and hasattr(comp, "transformers_"):
                for _, fitted, _ in comp.transformers_:
                    if not isinstance(fitted, str):
                        visit(fitted)

    if not isinstance(estimator, str):
        visit(estimator)
    return list(found.values())


def holds_dp(step: Any) -> bool:
    return bool(iter_dp_components(step))


def deep_values(obj: Any) -> list:
    """The values of ``obj``'s deep parameters (the objects inside it), ``[]`` for a string."""
    return list(get_params(obj).values()) if hasattr(obj, "get_params") else []


def steps_in_line(estimator: Any) -> list:
    """The steps of ``estimator``, those of nested pipelines in their place; ``[estimator]``
    for anything but a ``Pipeline`` with steps."""
    if not (isinstance(estimator, Pipeline) and estimator.steps):
        return [estimator]
    return [leaf for _, step in estimator.steps for leaf in steps_in_line(step)]
