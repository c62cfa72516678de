"""The privacy cost of fitting an estimator once, and the budget modes that set it.

Neighbouring relation: replace-one (bounded DP; ``n`` public). The privacy cost of an estimator
is the ``(epsilon, delta)`` of fitting it once on the rows. diffprivlib components add their
costs (each its family's: :mod:`skdptune.estimators.models`; ``delta`` is 0 for models without
that parameter) by *sequential composition*: every component reads the same records. This holds
for the branches of a ``ColumnTransformer`` or ``FeatureUnion`` too: they see different columns
of the *same* rows, so replacing one record changes the input of every branch, and their costs
add up. Data-independent transformers cost nothing; a non-private component makes the estimator
non-private (:mod:`._guards`).

Over a search space the cost is the maximum over the candidates (:mod:`._settings`): every
candidate is ``(epsilon_c, delta_c)``-DP with ``epsilon_c <= epsilon`` and
``delta_c <= delta``.
"""

from __future__ import annotations

import fractions
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._params import get_params, set_params
from ..accounting import PrivacyComponent
from ..exceptions import NonPrivateComponentError
from ._guards import check_leak_free_configuration, leaking_params, nonprivate_message
from ._inner import check_positive, clone_with_throwaway_accountants
from ._paths import join, public_name
from ._settings import candidates, space_cost_values
from ._values import check_cost_value
from ._walk import DP, FREE, NONPRIVATE, Component, walk
from .models import adapter_for

__all__ = ["cost_function", "dp_cost", "estimator_privacy", "estimator_privacy_parts",
           "replace_one_factor", "scale_dp_epsilons", "set_total_epsilon"]


def dp_cost(component: Component, n_classes: int | None = None) -> tuple[float, float]:
    """Validated ``(epsilon, delta)`` of one diffprivlib component under replace-one: its
    family's cost (:func:`cost_function`) at its ``epsilon`` (``n_classes``: the declared
    label set's size, ``None`` for unknown)."""
    params = get_params(component.estimator, deep=False)
    label = f"{component.where} ({public_name(component.estimator)})"
    epsilon = check_cost_value(params["epsilon"], "epsilon", label)
    delta = check_cost_value(params.get("delta", 0.0), "delta", label)
    return cost_function(component, n_classes)(epsilon), delta


def cost_function(component: Component, n_classes: int | None) -> Callable[[float], float]:
    """``epsilon ->`` the epsilon one diffprivlib component costs with its ``epsilon`` set to
    that value: its family's :meth:`~skdptune.estimators.models.ModelAdapter.cost_function`,
    the component's other parameters read and checked once (a budget mode's bisection calls
    it some fifty times per candidate; reading the parameters is 95 % of one call). A cost
    parameter left to the data (``None``) has no true cost: refused as a leak."""
    family = adapter_for(component.estimator)
    if set(leaking_params(component.estimator)) & set(family.cost_params):
        check_leak_free_configuration(component.estimator)  # raises, with its own message
    label = f"{component.where} ({public_name(component.estimator)})"
    return family.cost_function(component.estimator, label, n_classes)


def replace_one_factor(estimator: Any) -> fractions.Fraction | float:
    """What one unit of a diffprivlib model's ``epsilon`` costs under replace-one neighbours
    (its family's :meth:`~skdptune.estimators.models.ModelAdapter.replace_one_factor`: 2 for
    ``DecisionTreeClassifier``, ``4/3 + (2/3) R`` for ``GaussianNB``, 1 for the others;
    docs/privacy.md, "diffprivlib's models under replace-one"). ``LogisticRegression``'s
    cost is not a multiple of its ``epsilon`` (1 here: :func:`cost_function` gives it).
    Exact (a :class:`fractions.Fraction`) from the public parameters only; ``inf`` when no
    bound is known."""
    return adapter_for(estimator).replace_one_factor(estimator)


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
    appended (:class:`~skdptune.estimators.models.InterceptColumnLogisticRegression`);
    diffprivlib's own fit of it has no finite cost where its mechanism adds no extra ridge
    (docs/privacy.md, "The intercept").

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
    >>> from skdptune import estimator_privacy
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
    for setting, candidate in candidates(estimator, space):
        components = walk(candidate)
        nonprivate = [c for c in components if c.role == NONPRIVATE]
        if nonprivate and not allow_nonprivate:
            raise NonPrivateComponentError(nonprivate_message(nonprivate, setting))
        costs = [dp_cost(c, n_classes) for c in components if c.role == DP]
        eps_max = max(eps_max, math.fsum(e for e, _ in costs))
        delta_max = max(delta_max, math.fsum(d for _, d in costs))
    return eps_max, delta_max


def _budget_versions(candidate: Any, components: list[Component]) -> list:
    """The versions of ``candidate`` whose pricing at a budget bounds each step's share.

    A budget mode scales a candidate's epsilons so that it costs the budget. With
    components whose cost is drawn (``GaussianNB`` ``bounds`` drawn from boxes:
    :meth:`~skdptune.estimators.models.ModelAdapter.draws_cost`), each draw is priced at its
    own replace-one factors. Proportional scaling (and the bisection of a
    ``LogisticRegression``'s scale) gives every step less as another step's factor grows, and
    more as its own does. So a drawn step's share is largest at its box's worst point (the
    ``ArrayRange`` itself) with the other drawn steps at their least factor
    (:attr:`~skdptune.estimators.models.ModelAdapter.least_cost_params`, at most the factor of
    any point of a box a search accepts), and every other
    step's share largest with all the drawn steps at their least. One version when no step's
    cost is drawn or the model has no other DP step. (The lines are rounded up a few units in
    the last place: the pricing's own rounding moves a share by one.)"""
    drawn = {c.path: adapter_for(c.estimator).least_cost_params for c in components
             if c.role == DP and adapter_for(c.estimator).draws_cost(c.estimator)}
    if not drawn or sum(c.role == DP for c in components) < 2:
        return [candidate]

    def with_least(paths):
        version = clone_with_throwaway_accountants(candidate)
        set_params(version, **{join(path, name): value for path in paths
                               for name, value in drawn[path].items()})
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
    >>> from skdptune.estimators import estimator_privacy_parts
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
    for setting, candidate in candidates(estimator, space):
        n_settings += 1
        components = walk(candidate)
        nonprivate = [c for c in components if c.role == NONPRIVATE]
        if nonprivate and not allow_nonprivate:
            raise NonPrivateComponentError(nonprivate_message(nonprivate, setting))
        variants = [components]
        if epsilon_total is not None and any(eps > 0 for _, eps in _dp_epsilons(candidate)):
            # a setting's candidate is a clone of its own (candidates): priced in place
            variants = [walk(set_total_epsilon(
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
            name = public_name(comp.estimator)
            if name not in entry["classes"]:
                entry["classes"].append(name)
            entry["roles"].add(comp.role)
            entry["settings"] += 1
            present.add(comp.path)
            eps, dlt = dp_cost(comp, n_classes) if comp.role == DP else (0.0, 0.0)
            if comp.role == DP:
                # a step's largest share of the budget among the versions of its candidate,
                # a few ulps up where the share varies with the draws (_budget_versions)
                eps = max(dp_cost(version[i], n_classes)[0] for version in variants)
                for _ in range(4 if len(variants) > 1 else 0):
                    eps = math.nextafter(eps, math.inf)
                entry["factors"].add(replace_one_factor(comp.estimator))
                entry["drawn"] |= adapter_for(comp.estimator).draws_cost(comp.estimator)
                if not adapter_for(comp.estimator).cost_is_linear():
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
        if roles == {FREE}:
            parts.append(PrivacyComponent(name, 0.0, 0.0, "data-independent: costs nothing"))
            continue
        if roles == {NONPRIVATE}:
            parts.append(PrivacyComponent(name, 0.0, 0.0,
                                          "NOT differentially private (allow_nonprivate=True)"))
            continue
        factor = max(entry["factors"])
        eps_values = entry["eps"] + ([] if epsilon_total is not None else [
            float(value * factor) for value in space_cost_values(space, path, "epsilon")])
        delta_values = entry["delta"] + space_cost_values(space, path, "delta")
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


def _dp_epsilons(estimator: Any) -> list[tuple[str, float]]:
    """``(path, epsilon parameter)`` of every diffprivlib component (not its cost)."""
    out = []
    for comp in walk(estimator):
        if comp.role == DP:
            label = f"{comp.where} ({public_name(comp.estimator)})"
            value = get_params(comp.estimator, deep=False)["epsilon"]
            out.append((comp.path, check_cost_value(value, "epsilon", label)))
    return out


def _set_epsilons(estimator: Any, epsilons: list[tuple[str, float]]) -> None:
    if epsilons:
        set_params(estimator, **{join(path, "epsilon"): eps for path, eps in epsilons})


def scale_dp_epsilons(estimator: Any, factor: float) -> Any:
    """Multiply, in place, every diffprivlib component's ``epsilon`` by ``factor`` (> 0).

    The privacy cost (:func:`estimator_privacy`) is then multiplied by ``factor`` (``delta``
    unchanged). Returns the same object.
    """
    factor = check_positive(factor, "factor")
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
    replace-one (:func:`estimator_privacy`: each ``epsilon`` times :func:`replace_one_factor`;
    a cost that is not linear in its ``epsilon``, such as ``LogisticRegression``'s bound, is
    solved for by bisection) sums to ``total``.

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
    total = check_positive(total, "total")
    components = [comp for comp in walk(estimator) if comp.role == DP]

    costs = [cost_function(comp, n_classes) for comp in components]

    def cost(values):  # as estimator_privacy sums it
        return math.fsum(cost_of(value) for cost_of, value in zip(costs, values, strict=True))

    paths, base = [p for p, _ in epsilons], [eps for _, eps in epsilons]
    if cost(base) <= 0:
        raise ValueError(
            "Cannot set the total epsilon: the estimator has no diffprivlib component with a "
            "positive epsilon."
        )
    if not all(adapter_for(comp.estimator).cost_is_linear() for comp in components):
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
