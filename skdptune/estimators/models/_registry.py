"""The one registry of model families: a component's adapter, found by its exact class.

Adding a model family to skdptune is writing its :class:`~._adapter.ModelAdapter` in a module
of this package and listing it in :data:`_FAMILIES`; nothing else names a diffprivlib class.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._adapter import ModelAdapter
from ._linear import SSPRegressorAdapter
from ._logistic import LogisticRegressionAdapter
from ._naive_bayes import GaussianNBAdapter
from ._pca import PCAAdapter
from ._refused import KMeansAdapter, LinearRegressionAdapter, RandomForestAdapter
from ._scaler import StandardScalerAdapter
from ._tree import DecisionTreeAdapter

__all__ = ["COST_PARAMS", "LEAK_ADVICE", "PAIR_PARAMS", "STRUCTURE_PARAMS", "adapter_for",
           "advice_for", "sound_fitting", "switch_to_sound_fits", "with_user_class_names"]

_FAMILIES: tuple[ModelAdapter, ...] = (
    LogisticRegressionAdapter(),
    GaussianNBAdapter(),
    DecisionTreeAdapter(),
    StandardScalerAdapter(),
    PCAAdapter(),
    SSPRegressorAdapter(),
    KMeansAdapter(),
    RandomForestAdapter(),
    LinearRegressionAdapter(),
)

_BY_CLASS: dict[type, ModelAdapter] = {cls: family for family in _FAMILIES
                                       for cls in family.models}
_ADVICE: dict[type, str] = {cls: advice for family in _FAMILIES
                            for cls, advice in family.replaces.items()}

#: every family's leak parameters, with the advice for each
LEAK_ADVICE: Mapping[str, str] = {name: advice for family in _FAMILIES
                                  for name, advice in family.leak_params.items()}
#: every family's parameters holding a pair ``(lower, upper)``
PAIR_PARAMS = frozenset(name for family in _FAMILIES for name in family.pair_params)
#: every family's cost parameters besides ``epsilon`` and ``delta``
COST_PARAMS = frozenset(name for family in _FAMILIES for name in family.cost_params)
#: every family's structure parameters
STRUCTURE_PARAMS = frozenset(name for family in _FAMILIES for name in family.structure_params)


def adapter_for(obj: Any) -> ModelAdapter | None:
    """The adapter of ``obj``'s exact class (an accepted or a refused family), or ``None``."""
    return _BY_CLASS.get(type(obj))


def advice_for(obj: Any) -> str | None:
    """What to use instead of the non-private ``obj``: the advice of the first class along its
    ``__mro__`` that a family replaces, or ``None``."""
    return next((_ADVICE[cls] for cls in type(obj).__mro__ if cls in _ADVICE), None)


#: the name of every family's sound (or unreleased-fit) subclass, and the name of the class a
#: user configures
_SOUND_FIT_NAMES: Mapping[str, str] = {fit.__name__: family.models[0].__name__
                                       for family in _FAMILIES
                                       for fit in (family.sound_fit, family.unreleased_fit)
                                       if fit is not None}


def with_user_class_names(message: str) -> str:
    """``message`` (public: a dry run's error) with each sound subclass's name replaced by the
    name of the class the user configured: the subclass is switched in for the fit only, and
    the user never chose it."""
    for sound, user in _SOUND_FIT_NAMES.items():
        message = re.sub(rf"\b{re.escape(sound)}\b", user, message)
    return message


def switch_to_sound_fits(components: list, *, released: bool = True) -> list[tuple[Any, type]]:
    """Switch, in place, every component of ``components`` whose family fits it with a sound
    subclass (:attr:`~._adapter.ModelAdapter.sound_fit`) to that subclass (kept by ``clone``:
    for a throwaway estimator that other code fits); with ``released=False`` (a fit never
    released), to the family's :attr:`~._adapter.ModelAdapter.unreleased_fit` where it has
    one. Returns ``(component, its own class)`` of those switched."""
    switched = []
    for component in components:
        family = adapter_for(component)
        fit = None if family is None else (
            family.unreleased_fit if not released and family.unreleased_fit is not None
            else family.sound_fit)
        if fit is not None:
            switched.append((component, type(component)))
            component.__class__ = fit
    return switched


@contextlib.contextmanager
def sound_fitting(components: list, *, released: bool = True) -> Iterator[None]:
    """Context manager: the components of ``components`` that have a sound subclass (or, with
    ``released=False``, an unreleased-fit subclass) are of it inside the block, of their own
    class after it (also when the block raises)."""
    switched = switch_to_sound_fits(components, released=released)
    try:
        yield
    finally:
        for component, cls in switched:
            component.__class__ = cls
