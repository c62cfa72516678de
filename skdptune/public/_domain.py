"""The domain checks: the only functions of :mod:`skdptune.public` that read the data.

They read it for one purpose -- to refuse, with a fixed message and before anything is
charged, a dataset outside the domain the guarantee is stated on (undeclared labels,
non-finite values, bad weights) -- and the metadata's public format.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from diffprivlib.utils import BudgetError

from ..exceptions import DomainError
from ._labels import _LABEL_MESSAGE, _declared_labels, _labels_as_given, _matching_classes
from ._rows import _as_numbers, _num_samples_or_none

__all__ = ["check_budget", "check_domain", "check_routed_metadata", "check_weights_domain"]


def check_budget(accountant: Any, epsilon: float, delta: float) -> None:
    """``accountant.check(epsilon, delta)``, with a message that says what to change.

    Raises diffprivlib's ``BudgetError`` (what ``accountant.check`` raises) naming the
    accountant and the planned cost; public: the cost is data-independent.
    """

    try:
        accountant.check(epsilon, delta)
    except BudgetError:
        eps_left, delta_left = accountant.remaining()
        raise BudgetError(
            f"The search would spend (epsilon={epsilon:.6g}, delta={delta:.3g}) but the "
            f"accountant has (epsilon={eps_left:.6g}, delta={delta_left:.3g}) left. Give the "
            "accountant a larger budget or lower the search's cost (its epsilon, the "
            "estimator's epsilon; planned_privacy(n_samples) shows the cost before fit). "
            "Nothing was charged."
        ) from None


def _is_array_like(value: Any) -> bool:
    return (hasattr(value, "__len__") or hasattr(value, "shape")) and not isinstance(
        value, (str, bytes, dict))


def check_routed_metadata(params: dict, n_samples: int, destination: str, *,
                          aligned: bool = True) -> None:
    """Check the format of metadata going to ``destination``; public (shapes and dtypes).

    ``aligned=True`` (the scorer, the inner splitter): every array-like must have one entry
    per row, so that a partition's share of it is its rows' entries (a replaced record
    changes one partition's share only); scalars pass unchanged. ``aligned=False`` (the
    estimator's ``fit``, as in scikit-learn): other lengths pass unchanged. A ``sample_weight``
    array must be 1-d, numeric and row-aligned everywhere; its values are checked by
    :func:`check_weights_domain` with the domain.
    """
    for name, value in params.items():
        if value is None:
            continue
        if name == "sample_weight":
            if not _is_array_like(value):
                if aligned:
                    raise ValueError(
                        f"sample_weight for {destination} must be an array with one weight per "
                        f"row of X (n_samples={n_samples}); got {type(value).__name__}. "
                        "Nothing was charged.")
                continue
            shape, kind = np.shape(value), _weights_kind(value)
            if len(shape) != 1 or shape[0] != n_samples or kind not in "biuf":
                raise ValueError(
                    f"sample_weight for {destination} must be a 1-d numeric array with one "
                    f"weight per row of X (n_samples={n_samples}); got shape {shape} and "
                    f"dtype kind {kind!r}. Nothing was charged.")
        elif aligned and _is_array_like(value):
            length = _num_samples_or_none(value)
            if length != n_samples:
                raise ValueError(
                    f"The metadata {name!r} for {destination} must have one entry per row of "
                    f"X (n_samples={n_samples}); got {length} entries. Only row-aligned "
                    "metadata can be split with the rows. Nothing was charged.")


def _weights_kind(value: Any) -> str:
    """The dtype kind of a weights array, or of a list or tuple judged weight by weight: numpy
    would choose one dtype from all the values (one Python int of ``2**63`` or more makes a
    list of ints an object array), so the format would depend on a record's weight."""
    if isinstance(value, (list, tuple)):
        numeric = all(isinstance(w, (numbers.Real, np.bool_)) for w in value)
        return "f" if numeric else "O"
    return np.asarray(value).dtype.kind


def _object_numbers(values: np.ndarray) -> np.ndarray | None:
    """The entries of an object block that are numbers, each judged by itself, as floats
    (``None``: none is). A string that parses as a number counts as that number (the fits
    convert it so), a string that does not is categorical data and is left out: converted as
    a whole (:func:`_as_numbers`), the block was numbers only when every entry parsed, so
    whether the string ``"nan"`` was checked as a missing value depended on the other rows."""
    block = _as_numbers(values)
    if block is not None:  # every entry parsed: the same as one entry at a time
        return block
    parsed = [number for value in values.ravel()
              if (number := _as_numbers(np.array([value], dtype=object))) is not None]
    return np.concatenate(parsed) if parsed else None


def _numeric_blocks(X: Any) -> list[np.ndarray]:
    """The numeric values of ``X``, as float blocks. Numbers held in an object array or column
    count too: numpy and pandas infer an object dtype from the values (one ``None`` in a list of
    rows), so the format alone cannot tell that a record is outside the domain. Floats wider
    than float64 are converted as the fits convert them (:func:`_as_fitted`)."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        numeric = X.select_dtypes(include=["number"])
        with np.errstate(over="ignore", invalid="ignore"):  # see _as_numbers
            blocks = ([numeric.to_numpy(dtype=float, na_value=np.nan)] if numeric.shape[1]
                      else [])
        # object columns only: a pandas string column ("str") holds no number
        for name in [name for name, dtype in X.dtypes.items() if dtype == np.dtype("O")]:
            block = _object_numbers(X[name].to_numpy())
            if block is not None:
                blocks.append(block)
        return blocks
    if sp.issparse(X):
        return [_as_fitted(np.asarray(X.data))] if X.dtype.kind in "biuf" else []
    array = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if array.dtype.kind == "O":
        block = _object_numbers(array)
        return [] if block is None else [block]
    return [_as_fitted(array)] if array.dtype.kind in "biuf" else []


def _as_fitted(block: np.ndarray) -> np.ndarray:
    """``block`` as the fits see it: floats wider than float64 (``longdouble``) converted to
    float64, as diffprivlib and scikit-learn convert them -- a value beyond float64's range is
    finite before the conversion and infinite after it. The overflow warning is discarded (it
    depends on the values)."""
    if block.dtype.kind == "f" and block.dtype.itemsize > 8:
        with np.errstate(over="ignore", invalid="ignore"):
            return block.astype(np.float64)
    return block


def check_domain(X: Any, y: Any, classes: np.ndarray | None, *, allow_nan: bool,
                 target_range: tuple[float, float] | None = None) -> Any:
    """Refuse a dataset outside the declared domain, with a fixed message; return ``y``, its
    labels as the declared classes (:func:`_declared_labels`).

    The domain: labels in ``classes`` (classifiers), 1-d labels, numeric targets that are
    finite (the other estimators, when ``y`` is given) and within ``target_range`` (a
    regressor's declared bounds on ``y``), and numeric features that are finite
    (NaN allowed when the estimator accepts it, as found by the dry run; numbers in an object
    array or column included). A dataset
    outside it raises :class:`DomainError`, whose message names the violated rule only -- no
    value, no count, no row. The guarantee of the search is a statement about datasets of this
    domain (see docs/privacy.md); nothing is charged.
    """
    if classes is not None:
        labels = _labels_as_given(y)
        if labels.ndim != 1:
            raise DomainError("A private classifier search needs 1-d labels y.")
        matched = _matching_classes(labels, classes)
        if matched is None:
            # raised here, outside any except block: no __context__ that could quote a label
            raise DomainError(_LABEL_MESSAGE)
    elif y is not None:
        target = _as_numbers(y)
        if target is None or not np.isfinite(target).all():
            raise DomainError(
                "The target y must be numeric and finite (no missing or infinite values): a "
                "search over an estimator that is not a classifier regresses on it. Impute or "
                "clip it with public constants before the search (no position is named here "
                "because this check reads the private data).")
        if target_range is not None and not (
                (target >= target_range[0]) & (target <= target_range[1])).all():
            raise DomainError(
                f"The target y must lie within the regressor's declared range "
                f"[{target_range[0]:g}, {target_range[1]:g}] (its bounds_y): the guarantee is "
                "stated for targets in it. Clip y to public bounds before the search, or "
                "declare wider ones (no value or position is named here because this check "
                "reads the private data).")
    for block in _numeric_blocks(X):
        bad = np.isinf(block) if allow_nan else ~np.isfinite(block)
        if bad.any():
            what = "infinite" if allow_nan else "missing (NaN) or infinite"
            raise DomainError(
                f"X contains {what} values, which the estimator does not accept. Impute or "
                "clip them with public constants before the search (no position is named here "
                "because this check reads the private data).")
    return y if classes is None else _declared_labels(y, matched)


def check_weights_domain(weights: list) -> None:
    """Refuse non-finite or negative sample weights with a fixed message (:class:`DomainError`).

    Reads the weights (private: a weight is part of its record) for this one purpose, after
    the budget check and before any private computation; nothing is charged. Weights already
    passed :func:`check_routed_metadata` (numeric, 1-d).
    """
    for value in weights:
        if value is None or not _is_array_like(value):
            continue
        w = np.asarray(value, dtype=float)
        if not (np.isfinite(w).all() and (w >= 0).all()):
            raise DomainError(
                "sample_weight must be finite and non-negative (no value or position is named "
                "here because this check reads the private data). Nothing was charged.")
