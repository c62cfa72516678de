"""What the private models receive: the settings of the steps in front of them, and the check
that every row they can read is one they accept (public questions, asked on synthetic rows,
and one domain check of the data)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline

from .._private import silenced
from ..estimators import (
    free_image,
    is_dp_component,
    is_listed,
    iter_dp_components,
    leading_free_steps,
    shapes_model_input,
    sound_fitting,
    structure_variants,
)
from ..estimators.models import adapter_for
from ..exceptions import DomainError
from ._magnitude import bears_on_magnitude
from ._rows import _as_model_input, _prefix_key, synthetic_dataset

__all__ = [
    "MAX_LISTED_SETTINGS",
    "MAX_LISTED_VALUES",
    "check_composites_readable",
    "check_model_input",
    "model_input_settings",
]


_MODEL_INPUT_MESSAGE = (
    "X contains a row that the estimator's first private step cannot take as it is given to "
    "it -- after the data-independent steps before it, if any: a value that is not a number, "
    "a missing value it does not accept, or a value those steps turn into an infinite or "
    "missing one (an overflow, an unknown category encoded as NaN) -- or, where a private "
    "transformer is followed by other steps, a value beyond the public limit on the magnitude "
    "of what it reads (docs/privacy.md). Such rows are outside the "
    "domain; clip, impute or encode them with public constants before the search (no value or "
    "position is named here because this check reads the private data). Nothing was charged.")


#: the most values a parameter of the steps in front of a private model may take from a
#: discrete distribution: every one is checked against the rows (:func:`model_input_settings`)
MAX_LISTED_VALUES = 1000


#: the most settings of those steps a sub-space may have, for the same check (each distinct
#: setting transforms every row once: about 55 ms per setting on 200k rows of 5 features)
MAX_LISTED_SETTINGS = 1000


def model_input_settings(estimator: Any, space: list[dict], templates: list) -> list[dict]:
    """Settings that, with the dry run's ``templates``, give :func:`check_model_input` every
    way a candidate of ``space`` can set what its first private model receives.

    The dry run lists every point of a sub-space made of lists only; a sub-space with a
    distribution gets seeded draws, which may miss a value of a step in front of the model (a
    ``PolynomialFeatures`` degree whose cube overflows on one record), or a step replacement
    that puts a step in front of it. So, per such sub-space, the parameters that may shape
    those steps (:func:`~skdptune.estimators.shapes_model_input`, asked of every structure
    the sub-space's lists can build -- step replacements, ``"passthrough"`` -- and of the
    templates) are listed -- a list as it is, a discrete distribution with at most
    :data:`MAX_LISTED_VALUES` values by its support -- and every combination of them is
    returned (the other parameters keep the estimator's values: they cannot change those
    steps). So are the parameters of a private transformer whose output a step reads and of
    the steps after it before the model (:func:`~skdptune.public._magnitude.bears_on_magnitude`):
    their every setting gets its magnitude limit. ``space``: sub-spaces ``{name: list or
    distribution}``; a list is any sequence without ``rvs`` (scikit-learn's rule), anything
    else a distribution (a real range of ``DPGIBOSearchCV`` included).

    Public: reads the space only. Raises ``ValueError`` for a shaping parameter whose values
    cannot all be listed, or for more than :data:`MAX_LISTED_SETTINGS` combinations.
    """
    settings = []
    for sub in space:
        if all(is_listed(spec) for spec in sub.values()):
            continue  # the dry run's candidates are the sub-space's grid
        shapes = [*structure_variants(estimator, {k: v for k, v in sub.items()
                                                  if is_listed(v)}), *templates]
        shaping = {}
        for name, spec in sub.items():
            if any(shapes_model_input(shape, name) for shape in shapes):
                where, check = ("a data-independent step in front of the first private model",
                                "against the rows")
            elif any(bears_on_magnitude(shape, name) for shape in shapes):
                where, check = ("a private transformer followed by other steps, or a step "
                                "after it before the model", "for the magnitude limit")
            else:
                continue
            values = list(spec) if is_listed(spec) else _discrete_support(spec)
            if values is None:
                raise ValueError(
                    f"The search space's parameter {name!r} may set {where}, and its values "
                    f"are not a list ({spec!r}). Every value of such a parameter is checked "
                    f"{check} before the private fits: a value that let one row become "
                    "non-finite would make them fail on one dataset and not on its neighbour. "
                    "Give it as a list, or as a discrete distribution with at most "
                    f"{MAX_LISTED_VALUES} values. Nothing was read or charged.")
            shaping[name] = values
        if not shaping:
            continue
        grid = ParameterGrid(shaping)
        if len(grid) > MAX_LISTED_SETTINGS:
            raise ValueError(
                f"The parameters {sorted(shaping)} of the search space may set the steps "
                f"before the private model in {len(grid)} ways; every one is checked before "
                f"the private fits, and at most {MAX_LISTED_SETTINGS} are. Nothing was read "
                "or charged.")
        settings += list(grid)
    return settings


def _discrete_support(spec: Any) -> list | None:
    """Every value a scipy discrete distribution (frozen, or ``rv_discrete(values=...)``) can
    draw, if there are at most :data:`MAX_LISTED_VALUES`; ``None`` otherwise (a continuous or
    unbounded distribution, a shifted lattice, an object that is no scipy distribution)."""
    dist = getattr(spec, "dist", spec)
    if not isinstance(dist, stats.rv_discrete):
        return None
    if hasattr(dist, "xk"):  # rv_discrete(values=(xk, pk)): its points, unless shifted
        if spec is not dist and (spec.args or spec.kwds):
            return None
        points = [x for x, p in zip(dist.xk, dist.pk, strict=True) if p > 0]
        return points if len(points) <= MAX_LISTED_VALUES else None
    if spec is dist:
        return None  # an unfrozen lattice distribution has no parameters to draw with
    low, high = spec.support()
    if not (np.isfinite(low) and np.isfinite(high) and float(low).is_integer()
            and high - low < MAX_LISTED_VALUES):
        return None
    return [k for k in range(int(low), int(high) + 1) if spec.pmf(k) > 0]


def check_model_input(templates: list, X: Any, y: Any, classes: np.ndarray | None, *,
                      allow_nan: bool, fill: Any = "",
                      limits: list[float | None] | None = None) -> None:
    """Refuse, with a fixed message (:class:`DomainError`), a dataset with a row that the
    first private step of a candidate could not take.

    The private fits must not fail on some datasets only: a failure is released (the search
    raises ``PrivateFitError``) and one record can cause it. :func:`check_domain` reads the raw
    features; this reads them as the first diffprivlib model of each candidate receives them
    (:func:`~skdptune.estimators.leading_free_steps`): after the data-independent steps
    before it, which are row-wise, so the domain stays a set of *rows* (a row is in it or
    not, whatever the other rows) and replace-one neighbours within it are what the guarantee
    covers. Those rows must convert to numbers and be finite; NaN is allowed only where the
    model accepts it (:func:`check_domain`'s rule without steps before the model; with them,
    the model fitted on synthetic transformed rows holding a NaN answers -- a public
    question). A first step after them that is a composite holding private components (a
    ``ColumnTransformer`` with a diffprivlib branch) is read through its
    :func:`~skdptune.estimators.free_image`: the rows each of its first private components
    receives, beside the output of its data-independent branches, must be finite -- no NaN
    (which column of the image a NaN reaches is not asked), and in float32 when a diffprivlib
    tree reads any of it (:func:`check_composites_readable` ran first). Where a step reads
    what a private transformer outputs, the rows that transformer reads must also lie within
    the template's public magnitude limit (``limits``, aligned with ``templates``: from
    :func:`skdptune.public._magnitude.magnitude_limits`; ``None``: no limit).

    Reads the data (the prefix of every distinct candidate is applied to all rows once);
    nothing is charged. ``templates``: the dry run's candidate templates (a space with
    distributions: its seeded draws) and those of :func:`model_input_settings`.
    """
    for prefix, first, dtype, limit in _model_readers(templates, limits):
        if first is None:  # a composite's image: no NaN (check_composites_readable ran)
            nan_ok = False
        else:
            nan_ok = allow_nan if prefix is None else _accepts_nan_after(prefix, first, X, y,
                                                                         classes, fill)
        if not _model_input_ok(prefix, X, nan_ok, dtype, limit):
            # raised here, outside any except block: no __context__ that could quote a value
            raise DomainError(_MODEL_INPUT_MESSAGE)


def _model_readers(templates: list, limits: list[float | None] | None = None
                   ) -> list[tuple[Any, Any, Any, float | None]]:
    """``(prefix, first, dtype, limit)`` for every distinct way a candidate's first private
    step reads the rows: the data-independent steps in front of it (``None``: none), that
    model (``None`` for a composite, whose :func:`~skdptune.estimators.free_image` ends the
    prefix), the float type it reads them in and the template's magnitude limit (``limits``,
    aligned with ``templates``; ``None``: none)."""
    readers, seen = [], set()
    for template, limit in zip(templates, limits or [None] * len(templates), strict=True):
        prefix, first = leading_free_steps(template)
        if is_dp_component(first):
            dtype = adapter_for(first).input_dtype
        else:
            image = free_image(first)
            if image is None:
                continue
            # a composite: its data-independent parts, cut at its private components, read in
            # the narrowest float type of the private models that may read them
            prefix = Pipeline([*([] if prefix is None else prefix.steps), ("image", image)])
            first = None
            dtype = min((adapter_for(c).input_dtype
                         for _, c in iter_dp_components(template)),
                        key=lambda t: np.dtype(t).itemsize)
        # the float type and NaN answer belong to the model: one key per (prefix, model class)
        key = (None if prefix is None else _prefix_key(prefix, len(seen)), type(first), dtype,
               limit)
        if key not in seen:
            seen.add(key)
            readers.append((prefix, first, dtype, limit))
    return readers


def check_composites_readable(templates: list, X: Any, y: Any, classes: np.ndarray | None,
                              fill: Any = "") -> None:
    """Raise a public ``ValueError`` if the :func:`~skdptune.estimators.free_image` of a
    candidate's composite first step cannot transform synthetic rows with the public format
    of ``X``: :func:`check_model_input` could not read the real ones either. Reads no data;
    run it with the public checks, before the budget."""
    images = [prefix for prefix, first, _, _ in _model_readers(templates) if first is None]
    if not images:
        return
    X_syn, _ = synthetic_dataset(X, y, classes, fill=fill)
    for image in images:
        try:
            with silenced(), np.errstate(all="ignore"):
                clone(image).fit_transform(X_syn)
        except Exception as exc:
            raise ValueError(
                "A candidate's first step after its data-independent ones is a composite "
                "holding private components; its data-independent parts, cut at those "
                "components, could not transform synthetic rows with the public format of X "
                f"({type(exc).__name__}), so the rows its private components receive cannot "
                "be checked. Nothing was read or charged.") from exc


def _model_input_ok(prefix, X, nan_ok: bool, dtype=np.float64, limit: float | None = None
                    ) -> bool:
    """Whether every row of ``X``, through ``prefix`` (``None``: as is), is numbers the model
    can take in its float ``dtype``: finite, or NaN where ``nan_ok``, and at most ``limit`` in
    magnitude (``None``: no limit)."""
    try:
        with silenced(), np.errstate(all="ignore"):
            Z = X if prefix is None else clone(prefix).fit_transform(X)
            with warnings.catch_warnings():
                # dropping an imaginary part (a complex number in an object array or column,
                # numpy's or Python's) is an error, as in scikit-learn's check_array
                warnings.simplefilter("error", np.exceptions.ComplexWarning)
                values = _as_model_input(Z).astype(dtype)
    except Exception:
        return False
    within = np.isfinite(values) if limit is None else np.abs(values) <= limit
    return bool(np.all(within | (nan_ok & np.isnan(values))))


def _accepts_nan_after(prefix, first, X, y, classes, fill) -> bool:
    """Whether ``first`` fits synthetic rows transformed by ``prefix`` with one NaN in them (a
    public question: synthetic rows with the public format of ``X``)."""
    X_syn, y_syn = synthetic_dataset(X, y, classes, fill=fill)
    try:
        with silenced(), np.errstate(all="ignore"):
            Z = clone(prefix).fit_transform(X_syn)
            Z = Z.toarray() if sp.issparse(Z) else _as_model_input(Z).reshape(np.shape(Z))
            Z = np.array(Z, dtype=np.float64)
            Z.flat[0] = np.nan
            model = clone(first)
            with sound_fitting(model):  # as the private fits run
                model.fit(Z, y_syn) if y_syn is not None else model.fit(Z)
    except Exception:
        return False
    return True
