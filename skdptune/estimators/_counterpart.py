"""The non-private counterpart of an estimator: every private component replaced by the
scikit-learn model its family stands in for (:attr:`~.models.ModelAdapter.counterpart`).

A reference to compare with -- what the same model would score without privacy -- and nothing
more: it is fitted on the rows without noise, so nothing fitted with it may be released.
"""

from __future__ import annotations

import copy
from typing import Any

from sklearn.base import clone

from ._walk import DP, NONPRIVATE, children, is_dp_component, walk, with_children
from .models import adapter_for

__all__ = ["nonprivate_counterpart"]


def nonprivate_counterpart(estimator: Any) -> Any | None:
    """``estimator`` with each diffprivlib (or skdptune) model replaced by its non-private
    scikit-learn counterpart, unfitted; ``None`` when there is none to build.

    Composites (``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``) are rebuilt around the
    replaced components and data-independent steps are kept. There is none when the estimator
    holds no private component, when one of its families has no counterpart (a refused one),
    or when a component is not understood (a non-private model, a skdptune search, a user's
    own private estimator): the result would not be the estimator without its noise.

    Parameters
    ----------
    estimator : estimator object

    Returns
    -------
    estimator or None
        A new estimator (``estimator`` is not modified); each counterpart has the component's
        values of the parameters the two share (``counterpart_params``), its privacy
        parameters dropped.
    """
    components = walk(estimator)
    dp = [c.estimator for c in components if c.role == DP]
    if not dp or any(c.role == NONPRIVATE for c in components) \
            or any(adapter_for(component).counterpart is None for component in dp):
        return None
    return clone(_replaced(estimator))


def _replaced(step: Any) -> Any:
    if is_dp_component(step):
        return adapter_for(step).nonprivate_counterpart(step)
    kids = children(step)
    if kids is None:
        return step  # a free step, cloned with the whole
    return with_children(copy.copy(step), [_replaced(sub) for _, sub, _ in kids])
