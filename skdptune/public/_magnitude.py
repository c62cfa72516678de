"""The magnitude domain: a public limit on the rows a private transformer reads.

A diffprivlib ``StandardScaler`` or ``PCA`` clips the rows it is *fitted* on to its public
bounds, but its ``transform`` does not: what the steps after it receive depends on its noise
and on every row. One record of 1.5e308 reached a diffprivlib ``LogisticRegression`` after a
private scaler as ``inf`` and failed the fit -- on that dataset, not on its neighbour, and a
failure is released (``PrivateFitError``). The domain check cannot read what the next step
receives (it depends on the noise), so it bounds what the transformer reads instead:

1. **A public bound on the output.** On rows with entries of magnitude at most ``L``, whatever
   the noise (:func:`output_magnitude`), from the transformer's family
   (:meth:`~skdptune.estimators.models.ModelAdapter.output_bound`): ``(L + b) * gain``, ``b``
   the largest magnitude of the bounds when it subtracts a mean drawn within them. A
   ``StandardScaler``'s gain is ``1 / (10 eps)`` (scikit-learn replaces a smaller scale by 1), a
   ``PCA``'s ``sqrt(d)``; a whitened ``PCA`` divides by noisy variances that can be
   arbitrarily small: no public number bounds it, and it is refused when a step reads its
   output.

2. **A public limit, chosen on probe rows.** ``L`` is the largest of :data:`LIMITS` for which
   the estimator, every read private transformer replaced by a stand-in (:class:`_Extremes`)
   that outputs rows of entries ``+M``, ``-M``, ``0`` and alternating signs at its bound ``M``
   (in the transformer's own float type, with a mean taken at ``L`` itself so that any bounds
   up to ``L`` are covered), is fitted and scored on the dry run's synthetic rows without an
   error (:func:`magnitude_limits`). A private transformer further down gets the bound
   computed from the largest value it receives. Every setting of the parameters that can
   change it is probed (:func:`bears_on_magnitude`, listed by
   :func:`skdptune.public.model_input_settings`). Everything here is public: the
   configuration, the format of ``X``, synthetic rows. No limit works: a public
   ``ValueError`` before any data is read.

3. **The domain.** The rows each such transformer reads (through the data-independent steps
   in front of it; every column of a composite's cut image) must lie within ``[-L, L]``
   (:func:`skdptune.public.check_model_input`); a dataset with a larger value is refused with
   the fixed ``DomainError``. The domain stays a set of rows.

What the probe proves: that the steps after the transformer take any row of magnitude up to
``M`` when their failures grow with magnitude -- an identity, a column selection, a
``PolynomialFeatures``, a diffprivlib model's validation and clipping. A ``FunctionTransformer``
that fails on some value in between is not proven (docs/privacy.md names the residual); nor are
the free branches of a composite, which the probe feeds with synthetic rows.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _num_samples

from .._params import get_params
from ..estimators import (
    children,
    deep_values,
    holds_dp,
    is_dp_component,
    public_name,
    steps_in_line,
    with_children,
)
from ..estimators.models import adapter_for
from ..exceptions import PrivacyLeakError
from . import _dry_run
from ._rows import _as_model_input, _n_features, _prefix_key

__all__ = ["LIMITS", "bears_on_magnitude", "magnitude_limits", "output_magnitude"]

#: the limits tried on the rows a read private transformer receives, largest first
LIMITS = (1e100, 1e50, 1e30, 1e20, 1e15, 1e10, 1e6)

#: slack for the rounding of a subtraction, a division or a dot product
_ROUNDING = 1 + 1e-6


def _bounds_magnitude(bounds: Any) -> float | None:
    """The largest magnitude of a diffprivlib ``bounds`` pair (scalars or arrays)."""
    if bounds is None:
        return None
    lower, upper = bounds
    return float(max(np.max(np.abs(lower)), np.max(np.abs(upper))))


def output_magnitude(component: Any, magnitude: float, n_features: int,
                     centre_at_least: float = 0.0) -> float | None:
    """A bound on every entry of ``component.transform(X)`` for rows ``X`` of ``n_features``
    entries of magnitude at most ``magnitude``, whatever the component's noise; ``None``
    when no public number bounds it (an unknown private transformer, a whitened ``PCA``,
    bounds left to the data). ``centre_at_least``: a magnitude of the centre (the mean) to
    assume when the bounds give less -- so that one bound covers every bounds up to it."""
    family = adapter_for(component)
    params = get_params(component, deep=False)
    bound = None if family is None else family.output_bound(params, n_features)
    if bound is None:
        return None
    subtracts_mean, gain = bound
    centre = 0.0
    if subtracts_mean:
        bounds = _bounds_magnitude(params["bounds"])
        if bounds is None:
            return None
        centre = max(bounds, centre_at_least)
    return (magnitude + centre) * gain * _ROUNDING


class _Extremes(TransformerMixin, BaseEstimator):
    """Stands in for the private transformer ``component`` in the probe: its rows cycle
    through the entries ``+M``, ``-M``, alternating signs (both ways) and ``0``, where ``M``
    is :func:`output_magnitude` of the larger of ``limit`` and the largest value it is fitted
    on, with a centre of at least ``limit`` (so ``M`` holds for every ``bounds`` up to the
    limit, a search over them included). Its output width, names and float type are those of
    ``component`` fitted on the same (public) rows: a scaler keeps float32 input in float32,
    where ``M`` may overflow."""
    def __init__(self, component: Any = None, limit: float = 1.0):
        self.component = component
        self.limit = limit

    def fit(self, X, y=None):
        values = _as_model_input(X)
        if values.size and not np.all(np.isfinite(values)):
            raise ValueError("a private transformer would receive a value that is not finite")
        reach = max(self.limit, float(np.max(np.abs(values))) if values.size else 0.0)
        self.magnitude_ = output_magnitude(self.component, reach, _n_features(X), self.limit)
        if self.magnitude_ is None:
            raise ValueError(
                f"no public number bounds the output of {public_name(self.component)} (a "
                "whitened PCA divides by noisy variances; bounds left to the data are not "
                "public)")
        names, self.dtype_ = _output_format(self.component, X, y)
        self.names_ = np.asarray(names, dtype=object)
        return self

    def transform(self, X):
        ones, alternate = np.ones(len(self.names_)), (-1.0) ** np.arange(len(self.names_))
        patterns = np.vstack([ones, -ones, alternate, -alternate, 0 * ones])
        rows = patterns[np.arange(_num_samples(X)) % len(patterns)] * self.magnitude_
        return rows.astype(self.dtype_)

    def get_feature_names_out(self, input_features=None):
        return self.names_


def _output_format(component: Any, X: Any, y: Any) -> tuple[Any, np.dtype]:
    """The output feature names and float type of ``component`` fitted on the (public) rows
    ``X``: those of its family's noise-free twin where it has one
    (:attr:`~skdptune.estimators.models.ModelAdapter.format_twin`: a scaler's are scikit-learn's
    scaler's), fitted without drawing noise; other components are fitted, on a copy of a
    template's component, which holds a throwaway accountant already."""
    twin = adapter_for(component).format_twin
    if twin is not None:
        fitted = twin().fit(X)
    else:
        fitted = copy.deepcopy(component).fit(X, y)
    out = fitted.transform(X)
    dtype = np.result_type(*out.dtypes) if hasattr(out, "dtypes") else out.dtype
    return fitted.get_feature_names_out(), dtype


def _read_transformers_replaced(step: Any, limit: float, last: bool) -> Any:
    """``step`` with every private component whose output another step reads -- all but the
    final step in line (``last``) -- replaced by an :class:`_Extremes` stand-in."""
    if is_dp_component(step):
        if last:
            return step
        stand_in = _Extremes(step, limit)
        config = getattr(step, "_sklearn_output_config", {}).get("transform")
        return stand_in.set_output(transform=config) if config else stand_in
    kids = children(step)
    if kids is None:
        return step
    # only a pipeline's final step is in line with the final step of the whole
    final = len(kids) - 1 if last and isinstance(step, Pipeline) else None
    return with_children(copy.copy(step), [_read_transformers_replaced(sub, limit, i == final)
                                           for i, (_, sub, _) in enumerate(kids)])


def reads_private_output(template: Any) -> bool:
    """Whether a step of ``template`` reads what a private component outputs: a private
    component anywhere but as the final step in line (the components
    :func:`_read_transformers_replaced` replaces)."""
    steps = steps_in_line(template)
    return (any(holds_dp(step) for step in steps[:-1])
            or (holds_dp(steps[-1]) and not is_dp_component(steps[-1])))


#: parameters of a private transformer that its probed bound does not depend on: the bound
#: does not read the first four, and it takes a centre at the limit itself whatever bounds
#: below it give (:class:`_Extremes`), so a search over the bounds needs no listing
_BOUND_FREE = frozenset({"epsilon", "accountant", "random_state", "copy", "bounds"})


def bears_on_magnitude(template: Any, name: str) -> bool:
    """Whether setting the parameter ``name`` of ``template`` may change the limit
    :func:`magnitude_limits` finds for it: a parameter of a private component whose output a
    step reads (but not :data:`_BOUND_FREE`: its probed bound does not depend on them) or of
    any step from the first such component to the model.
    The model's own parameters do not (:func:`magnitude_limits`); a name that does not
    resolve does."""
    if not reads_private_output(template):
        return False
    owner_path, _, last = name.rpartition("__")
    try:
        owner = template if not owner_path else get_params(template)[owner_path]
    except Exception:
        return True
    steps = steps_in_line(template)
    first = next(j for j, step in enumerate(steps) if holds_dp(step))
    # the model ends the path; a final composite (a search over transformers) is on it
    path = steps[first:] if not is_dp_component(steps[-1]) else steps[first:-1]
    if not any(owner is obj for step in path for obj in (step, *deep_values(step))):
        return False
    return not (is_dp_component(owner) and last in _BOUND_FREE)


def magnitude_limits(templates: list, synthetic: tuple) -> list[float | None]:
    """The limit ``L`` of every template (``None``: no step reads a private output), in
    order; public (module docstring). ``synthetic``: the dry run's
    ``(X_syn, y_syn, fit params, padding, scorers, scorer params)``. Raises a public
    ``ValueError`` when no limit of :data:`LIMITS` lets a template's probe be fitted.

    Templates whose steps before the model are equal and whose models are of one class share
    the limit of the first of them: an accepted diffprivlib model validates its rows, converts
    and clips them the same way whatever its own parameters (the one setting found that skips
    the clipping, ``LinearRegression(fit_intercept=False)``, belongs to a model refused as
    unsound: the refused families of :mod:`skdptune.estimators.models`), so a grid of 400 trees
    costs four probe fits, not 1,600."""
    found: dict = {}
    limits = []
    for template in templates:
        if not reads_private_output(template):
            limits.append(None)
            continue
        steps = steps_in_line(template)
        key = _prefix_key((steps[:-1], type(steps[-1])) if is_dp_component(steps[-1])
                          else template, len(found))
        if key not in found:
            found[key] = _largest_limit(template, synthetic)
        limits.append(found[key])
    return limits


def _largest_limit(template: Any, synthetic: tuple) -> float:

    failure: Exception | None = None
    for limit in LIMITS:
        try:
            with np.errstate(all="ignore"):
                probe = _read_transformers_replaced(template, limit, True)
                _dry_run._dry_fit(probe, 0, *synthetic)
        except PrivacyLeakError:
            raise
        except Exception as exc:  # about probe rows: public
            failure = exc
            continue
        return limit
    raise ValueError(
        "A private transformer in the estimator (a diffprivlib StandardScaler or PCA) is "
        "followed by steps that could not take its output on rows of magnitude up to "
        f"{LIMITS[-1]:g}: the steps after it, fitted and scored on probe rows at the largest "
        "value its noise allows there, failed "
        f"({type(failure).__name__}: {failure}). Its transform does not clip, so such a "
        "failure would depend on one record. Narrow its bounds, do not whiten, or give the "
        "steps after it inputs they accept at any magnitude. Nothing was read or charged."
    ) from failure
