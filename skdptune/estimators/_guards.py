"""Guards run before any data is read: non-private components, refused model families,
privacy parameters left to the data.

A private search has no opt-out for a non-private component (its guarantee would be void): its
message says what to replace instead. :func:`~skdptune.estimator_privacy` has one
(``allow_nonprivate=True``), and its message says so.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from diffprivlib.utils import PrivacyLeakWarning

from .._params import get_params
from ..exceptions import NonPrivateComponentError, PrivacyLeakError
from ._free import transformer_advice
from ._paths import public_name
from ._settings import candidates
from ._walk import DP, NONPRIVATE, Component, walk
from .models import LEAK_ADVICE, adapter_for, advice_for

__all__ = ["check_leak_free_configuration", "check_private_components",
           "check_sound_components", "leak_warnings_as_errors", "leaking_params",
           "nonprivate_components", "nonprivate_message"]


def _unsound_reason(estimator: Any) -> str | None:
    """Why ``estimator``'s family does not meet its own guarantee, or ``None``."""
    family = adapter_for(estimator)
    return None if family is None else family.unsound


def leaking_params(estimator: Any) -> list[str]:
    """The parameters of the diffprivlib model ``estimator`` that diffprivlib would read off
    the data, as configured (its family's
    :meth:`~skdptune.estimators.models.ModelAdapter.leaking`)."""
    return adapter_for(estimator).leaking(get_params(estimator, deep=False))


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


_DEFAULT_HINT = "use a diffprivlib model or a data-independent transformer instead"


def nonprivate_message(components: list[Component], setting: dict,
                        advice: str = _OPT_OUT) -> str:
    lines = []
    for comp in components:
        if comp.reason is not None:
            subject = comp.where if callable(comp.estimator) and not hasattr(
                comp.estimator, "get_params") else (
                f"{comp.where} ({public_name(comp.estimator)})")
            lines.append(f"{subject} {comp.reason}.")
            continue
        unsound = _unsound_reason(comp.estimator)
        if unsound is not None:
            lines.append(f"{comp.where} ({public_name(comp.estimator)}) is not differentially "
                         f"private as implemented: {unsound}.")
            continue
        hint = (advice_for(comp.estimator) or transformer_advice(comp.estimator)
                or _DEFAULT_HINT)
        lines.append(
            f"{comp.where} ({public_name(comp.estimator)}) learns from the data without "
            f"differential privacy; {hint}."
        )
    if setting:
        lines.append(f"(This happens for the search-space setting {setting!r}.)")
    lines.append(advice)
    return "\n".join(lines)


def check_private_components(estimator: Any, space: Any = None) -> None:
    """Refuse, before any data is read, an estimator with a non-private component (searches).

    Like :func:`estimator_privacy` without the opt-out, which a private search does not have:
    the message says what to replace instead.

    Raises
    ------
    NonPrivateComponentError
        Naming the component's path and a private replacement.
    """
    for setting, candidate in candidates(estimator, space):
        nonprivate = [c for c in walk(candidate) if c.role == NONPRIVATE]
        if nonprivate:
            raise NonPrivateComponentError(nonprivate_message(nonprivate, setting, _NO_OPT_OUT))


def check_sound_components(estimator: Any) -> None:
    """Refuse an estimator holding, at any depth, a diffprivlib model that does not meet its
    own guarantee (a refused family: :func:`_unsound_reason`): no cost stated for it can be
    true.
    For a cost that comes from elsewhere (``privacy_utility_front``'s ``privacy`` callable);
    the other checks of :func:`estimator_privacy` concern costs skdptune computes."""
    objects = [estimator, *(get_params(estimator).values()
                            if hasattr(estimator, "get_params") else [])]
    for obj in objects:
        reason = _unsound_reason(obj)
        if reason is not None:
            raise NonPrivateComponentError(
                f"{public_name(obj)} does not meet its own differential privacy guarantee: "
                f"{reason}.")


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
    for _setting, candidate in candidates(estimator, space):
        for comp in walk(candidate):
            if comp.role == NONPRIVATE and comp.path not in paths:
                paths.append(comp.path)
    return paths


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
    for setting, candidate in candidates(estimator, space):
        problems = []
        for comp in walk(candidate):
            if comp.role != DP:
                continue
            missing = leaking_params(comp.estimator)
            if missing:
                nones = " and ".join(f"{name}=None" for name in missing)
                advice = "; ".join(f"set {LEAK_ADVICE[name]}" for name in missing)
                pronoun = "it" if len(missing) == 1 else "them"
                problems.append(
                    f"{comp.where} ({public_name(comp.estimator)}) has {nones}: diffprivlib "
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
    >>> from skdptune.estimators import leak_warnings_as_errors
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
