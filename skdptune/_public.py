"""Public information about the private data, and what it lets a search do before reading it.

Under the contract of skdptune (docs/privacy.md) these are public: the number of rows ``n``
(replace-one neighbours), the *format* of ``X`` and ``y`` (container type, shape, dtypes, column
names, sparsity -- they describe the schema, not a record), and the **label set** of a
classifier, which the user declares like ``n``. Everything in this module is a function of that
public information only, except :func:`check_domain`, which reads the data for one purpose: to
refuse a dataset outside the domain the guarantee is stated on.

Three things follow:

* **Synthetic rows** (:func:`synthetic_rows`): rows with the public format of ``X`` and values
  chosen without looking at the data (zeros, ``""``, the first category of a categorical
  dtype, or seeded Gaussian numbers).
* **Padding** (:class:`Padding`): one synthetic row per declared class appended to *every* fit
  of a classifier, inner and returned. Every fit then sees every class, so it cannot fail
  because a train part holds a single class, and the fitted model's ``classes_`` (and the shape
  of ``coef_`` / ``theta_``) is the declared label set, whatever the data. The padding rows are
  identical on neighbouring datasets, so a fit on ``rows + padding`` is as private with respect
  to ``rows`` as the diffprivlib model is (its guarantee holds for any dataset, of any size).
* **A dry run** (:func:`dry_run`): every candidate (up to a cap) is fitted and scored on a small
  synthetic dataset with the public format, through the same code path as the private fits.
  Configuration mistakes -- an unknown parameter name, a format the estimator rejects (sparse
  input for diffprivlib), a scorer with the wrong signature, invalid parameter values -- fail
  here, with the real message (it is about synthetic data), before the budget is checked or
  charged.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.validation import _num_samples

from ._estimators import is_listed, iter_dp_components
from ._params import get_params
from ._private import discard_all_but_leaks, silenced, uses_threads
from ._sound_models import sound_fitting
from .exceptions import DomainError

__all__ = [
    "Padding",
    "PublicInfo",
    "check_budget",
    "check_composites_readable",
    "check_domain",
    "check_model_input",
    "check_public_shapes",
    "check_routed_metadata",
    "check_rows",
    "check_weights_domain",
    "choose_object_fill",
    "dry_run",
    "is_listed",
    "make_padding",
    "model_input_settings",
    "resolve_classes",
    "start_dry_run",
    "synthetic_fit_params",
    "synthetic_rows",
]

#: rows of the synthetic dataset of the dry run (fewer when ``n`` is smaller)
DRY_RUN_ROWS = 40
#: candidates fitted in the dry run; beyond, only ``set_params`` is checked for the others
DRY_RUN_MAX_FITS = 200


# --------------------------------------------------------------------------------------------
# Label set
# --------------------------------------------------------------------------------------------


def resolve_classes(classes: Any, estimator: Any, templates: list | None = None
                    ) -> np.ndarray | None:
    """The public label set of a classifier: the search's ``classes`` or the estimator's own.

    diffprivlib's forests and trees have a ``classes`` parameter; when set it declares the same
    information. Both given and different is an error. A non-classifier takes no label set.
    The search is over a classifier when the estimator **or any candidate** of the space is one
    (a pipeline whose last step the space sets): its fits then need the declared label set and
    the padding, or the returned model's ``classes_`` would come from the data. ``templates``:
    the candidates' :func:`~skdptune.evaluation._fit.candidate_templates`.

    Returns
    -------
    ndarray or None
        Sorted unique labels (as ``np.unique`` orders them, which is the order ``classes_`` of
        the fitted models takes), or ``None`` for a non-classifier.
    """
    variants = [estimator] + list(templates or [])
    own = [np.unique(np.asarray(get_params(c)["classes"]))
           for variant in variants for _, c in iter_dp_components(variant)
           if get_params(c, deep=False).get("classes") is not None]
    if not any(is_classifier(variant) for variant in variants):
        if classes is not None:
            raise ValueError("classes is the label set of a classifier; this estimator is not "
                             "one. Leave classes=None.")
        return None
    declared = None if classes is None else np.unique(np.asarray(classes))
    for other in own:
        if declared is None:
            declared = other
        elif not np.array_equal(declared, other):
            raise ValueError(f"classes={declared.tolist()} differs from the label set the "
                             f"estimator declares ({other.tolist()}); give one label set.")
    if declared is None:
        raise ValueError(
            "A private search over a classifier needs the label set as public information: "
            "pass classes=[...] (all labels y may take). Computed from y, the label set would "
            "leak: one record with a new label adds a class to the returned model."
        )
    if declared.ndim != 1 or len(declared) < 2:
        raise ValueError(f"classes must list at least two labels; got {declared.tolist()}.")
    return declared


def check_rows(X: Any, y: Any) -> tuple[Any, Any]:
    """``indexable(X, y)`` with a message that names ``X`` and ``y`` when their lengths differ;
    a list or tuple ``X`` as an object array of its rows (:func:`_rows_as_given`).

    The lengths are public (``n`` is), so saying them releases nothing.
    """
    from sklearn.utils.validation import indexable

    try:
        return indexable(_rows_as_given(X), y)
    except ValueError as exc:
        if y is None or "inconsistent numbers of samples" not in str(exc):
            raise
        raise ValueError(f"X and y must have the same number of rows; got X with "
                         f"{_num_samples(X)} and y with {_num_samples(y)}.") from None


def _rows_as_given(X: Any) -> Any:
    """A list or tuple of rows as an object array, each entry as given, and so is a numpy array
    of strings or bytes; anything else as is.

    A list has no dtype: numpy would choose one from all the values, so one ``0.5`` among
    integer codes turns the rows from int64 into float64. The returned model's free steps
    store that dtype (a ``SimpleImputer``'s ``_fit_dtype``, a ``OneHotEncoder``'s
    ``categories_``), and subsets of the rows (partitions, train and validation parts) would
    each get their own -- a step fitted on float64 rows then refuses int64 ones, and the fit
    fails inside on one neighbour only. An object array is the same whatever the values;
    scikit-learn's ``check_array`` converts its numbers as it would the list's. Rows of
    unequal lengths give a 1-d array, refused as not 2-d (``check_public_shapes``)."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "US":
        # numpy gives strings the width of the longest value: a step that keeps or casts to
        # its input's dtype would follow one record (scikit-learn's encoders convert such rows
        # to objects themselves; its SimpleImputer refuses them)
        return X.astype(object)
    if not isinstance(X, (list, tuple)):
        return X
    try:
        return np.array(X, dtype=object)
    except ValueError:  # rows of unequal lengths that numpy will not put in one array
        rows = np.empty(len(X), dtype=object)
        for i, row in enumerate(X):
            rows[i] = row
        return rows


def check_budget(accountant: Any, epsilon: float, delta: float) -> None:
    """``accountant.check(epsilon, delta)``, with a message that says what to change.

    Raises diffprivlib's ``BudgetError`` (what ``accountant.check`` raises) naming the
    accountant and the planned cost; public: the cost is data-independent.
    """
    from diffprivlib.utils import BudgetError

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


def check_public_shapes(X: Any, y: Any, classes: np.ndarray | None, estimator: Any) -> Any:
    """Check what the shapes (public) allow, before anything is read; returns ``y``.

    ``X`` must be 2-d; a classifier needs ``y``, 1-d (a column vector is raveled with
    scikit-learn's ``DataConversionWarning``, which depends on the shape only).
    """
    if not (hasattr(X, "iloc") or sp.issparse(X)) and np.ndim(X) != 2:
        raise ValueError(f"Expected a 2-d X (n_samples, n_features); got {np.ndim(X)} "
                         "dimension(s). Reshape it, e.g. X.reshape(-1, 1) for one feature.")
    if classes is None:
        return y
    if y is None:
        raise ValueError(f"{type(estimator).__name__} is a classifier: fit needs y.")
    shape = np.shape(y)
    if len(shape) == 2 and shape[1] == 1:
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(y, warn=True)
    elif len(shape) != 1:
        raise ValueError(f"A private classifier search needs 1-d labels y; got shape {shape}.")
    y = _labels_in_public_format(y)
    _check_classes_fit_dtype(y, classes)
    return y


def _labels_in_public_format(y: Any) -> Any:
    """``y`` in a format its values do not choose: a numpy array of strings or bytes as an
    object array, a pandas ``category`` column as an ``object`` one; anything else as is.

    numpy gives an array of strings the width of its longest value, and pandas infers a
    category column's categories from its values (``astype("category")``). The padding and the
    dry run's labels are the declared classes in ``y``'s format, so one record decided
    whether they fitted in it: ``["no", "ye"]`` for ``classes=["no", "yes"]`` on a ``<U2``
    column with no ``"yes"``, in every fit and in the returned model's ``classes_`` -- or a
    missing padding label and a failed dry run where a category was absent (review
    helper-44). As object labels they are compared with the declared classes one at a time,
    and the fits get the declared classes (:func:`_declared_labels`)."""
    if isinstance(y, np.ndarray) and y.dtype.kind in "US":
        return y.astype(object)
    if hasattr(y, "iloc") and getattr(y.dtype, "name", None) == "category":
        return y.astype(object)
    return y


def _check_classes_fit_dtype(y: Any, classes: np.ndarray | None) -> None:
    """Refuse numeric labels whose dtype cannot hold a declared class (``int8`` labels and a
    class 300 would become 44 in the padding and in every fit's ``classes_``). Both are public:
    this reads no label."""
    dtype = getattr(y, "dtype", None)
    if (classes is None or not isinstance(dtype, np.dtype) or dtype.kind not in "biuf"
            or classes.dtype.kind not in "biuf"):
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = np.array_equal(classes.astype(dtype).astype(classes.dtype), classes)
    if not fits:
        raise ValueError(f"The declared classes {classes.tolist()} cannot all be held by y's "
                         f"dtype {dtype}; give y a dtype that holds them (e.g. "
                         f"y.astype({np.result_type(dtype, classes.dtype).name!r})).")


# --------------------------------------------------------------------------------------------
# Synthetic rows with the public format
# --------------------------------------------------------------------------------------------


def _synthetic_column(dtype: Any, n_rows: int, rng: np.random.RandomState | None,
                      fill: Any) -> Any:
    import pandas as pd

    api = pd.api.types
    if isinstance(dtype, pd.CategoricalDtype):
        cats = list(dtype.categories)
        values = [cats[i % len(cats)] for i in range(n_rows)] if cats else [np.nan] * n_rows
        return pd.Categorical(values, dtype=dtype)
    if api.is_bool_dtype(dtype):
        return pd.array([False] * n_rows, dtype=dtype)
    if api.is_numeric_dtype(dtype):
        values = np.zeros(n_rows) if rng is None else rng.standard_normal(n_rows)
        if api.is_integer_dtype(dtype):
            values = np.round(values)
        return pd.array(values, dtype=dtype)
    if api.is_datetime64_any_dtype(dtype):
        return pd.array([pd.Timestamp(0)] * n_rows, dtype=dtype)
    return pd.array([fill] * n_rows, dtype=dtype)


#: values tried, in order, for object and string entries: the empty string (an unknown category
#: for an encoder that ignores unknown categories -- what a free encoder does, see
#: skdptune._estimators) and 0 (object arrays that hold numbers)
OBJECT_FILLS = ("", 0)


def synthetic_rows(X: Any, n_rows: int, *, rng: np.random.RandomState | None = None,
                   fill: Any = "") -> Any:
    """``n_rows`` rows with the public format of ``X`` and data-independent values.

    Numeric entries are 0 (``rng=None``) or seeded standard normal draws; booleans ``False``;
    categorical columns cycle through their dtype's categories; strings and objects are
    ``fill`` (one of :data:`OBJECT_FILLS`). The container matches ``X``: ndarray (same dtype),
    scipy sparse (same format), pandas DataFrame (same columns and dtypes) or a list of rows.
    """
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        import pandas as pd

        return pd.DataFrame({col: _synthetic_column(X.dtypes.iloc[j], n_rows, rng, fill)
                             for j, col in enumerate(X.columns)}, columns=X.columns)
    n_features = _n_features(X)
    if sp.issparse(X):
        values = (np.zeros((n_rows, n_features)) if rng is None
                  else rng.standard_normal((n_rows, n_features)))
        return type(X)(values.astype(X.dtype))
    array = np.asarray(X) if not isinstance(X, np.ndarray) else X
    shape = (n_rows,) + array.shape[1:]
    if array.dtype.kind == "b":
        out = np.zeros(shape, dtype=bool)
    elif array.dtype.kind in "iufc":
        values = np.zeros(shape) if rng is None else rng.standard_normal(shape)
        out = (values if array.dtype.kind in "fc" else np.round(values)).astype(array.dtype)
    else:
        out = np.full(shape, fill, dtype=array.dtype)
    return out.tolist() if isinstance(X, list) else out


def _n_features(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) > 1:
        return int(shape[1])
    return len(np.asarray(X[0])) if _num_samples(X) else 0


def _synthetic_labels(y: Any, labels: np.ndarray) -> Any:
    """Labels in the container of ``y`` (pandas Series stays a Series)."""
    if hasattr(y, "iloc"):
        import pandas as pd

        return pd.Series(labels, name=getattr(y, "name", None), dtype=y.dtype)
    if isinstance(y, list):
        return np.asarray(labels).tolist()
    dtype = getattr(y, "dtype", None)
    if dtype is None or dtype.kind == "O":  # the fits get the declared classes (_declared_labels)
        return np.asarray(labels)
    return np.asarray(labels).astype(dtype)


def concat_rows(first: Any, second: Any) -> Any:
    """Rows of ``first`` followed by the rows of ``second`` (same container and format)."""
    if hasattr(first, "iloc"):
        import pandas as pd

        return pd.concat([first, second], ignore_index=True)
    if sp.issparse(first):
        return sp.vstack([first, second], format=first.format)
    if isinstance(first, list):
        return list(first) + list(second)
    return np.concatenate([np.asarray(first), np.asarray(second)])


# --------------------------------------------------------------------------------------------
# Padding
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Padding:
    """One public row per declared class, appended to every fit of a classifier.

    Attributes
    ----------
    X, y :
        The padding rows (format of the training ``X``, values 0 / ``""``) and their labels,
        one per class in sorted order.
    """

    X: Any
    y: Any

    def __len__(self) -> int:
        return _num_samples(self.y)

    def apply(self, X_rows: Any, y_rows: Any, params: dict) -> tuple[Any, Any, dict]:
        """``(X_rows + X, y_rows + y, params)`` with a row-aligned ``sample_weight`` padded by 1."""
        n_rows = _num_samples(X_rows)
        padded = dict(params)
        for name, value in params.items():
            if _is_row_aligned(value, n_rows):
                if name != "sample_weight":
                    raise ValueError(
                        f"The row-aligned fit parameter {name!r} cannot be extended to the "
                        "public padding rows of a private classifier; only sample_weight can "
                        "(padding rows get weight 1).")
                padded[name] = concat_rows(np.asarray(value, dtype=float), np.ones(len(self)))
        return concat_rows(X_rows, self.X), concat_rows(y_rows, self.y), padded


def _is_row_aligned(value: Any, n_rows: int) -> bool:
    return (hasattr(value, "__len__") and not isinstance(value, (str, dict))
            and _num_samples_or_none(value) == n_rows)


def _num_samples_or_none(value: Any) -> int | None:
    try:
        return _num_samples(value)
    except TypeError:
        return None


def make_padding(X: Any, y: Any, classes: np.ndarray | None, fill: Any = "") -> Padding | None:
    """The padding rows of a classifier with label set ``classes`` (``None``: no padding)."""
    if classes is None:
        return None
    labels = _synthetic_labels(y, classes)
    # the fits must see every declared class: the cost of a model can depend on their number
    # (diffprivlib's LogisticRegression fits one problem per class), and the returned model's
    # classes_ must be the declared ones. A dtype that merges two of them (a pandas "Float32"
    # column and the classes 2**24 and 2**24 + 1, complex classes and float labels) is refused;
    # both are public, no label is read.
    values = labels.to_numpy() if hasattr(labels, "to_numpy") else np.asarray(labels)
    try:
        distinct = len(np.unique(values))
    except TypeError:
        distinct = len(set(values.tolist()))
    if distinct != len(classes):
        raise ValueError(f"The declared classes {np.asarray(classes).tolist()} become "
                         f"{distinct} distinct labels in y's dtype "
                         f"({getattr(y, 'dtype', type(y).__name__)}); give y a dtype that "
                         "holds each of them.")
    return Padding(synthetic_rows(X, len(classes), fill=fill), labels)


# --------------------------------------------------------------------------------------------
# Metadata (fit parameters routed to the estimator, the scorer or the splitter)
# --------------------------------------------------------------------------------------------


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
            shape, kind = np.shape(value), np.asarray(value).dtype.kind
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


# --------------------------------------------------------------------------------------------
# Domain checks (the only functions here that read the data)
# --------------------------------------------------------------------------------------------


def _as_numbers(values) -> np.ndarray | None:
    """``values`` as floats (in an object array ``None`` becomes NaN, as in scikit-learn's
    ``check_array``), or ``None`` when they hold anything else (strings: categorical data).
    A number beyond float64's range becomes infinite, as in the fits: without the conversion's
    warning, and a Python int too large to convert is infinite too (both depend on the
    values). A complex number (numpy's, which would convert with a warning that depends on
    the values) makes them no numbers: ``None``."""
    try:
        with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            return np.asarray(values, dtype=float)
    except OverflowError:
        return np.array([np.inf])
    except (TypeError, ValueError, np.exceptions.ComplexWarning):
        return None


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
            block = _as_numbers(X[name].to_numpy())
            if block is not None:
                blocks.append(block)
        return blocks
    if sp.issparse(X):
        return [_as_fitted(np.asarray(X.data))] if X.dtype.kind in "biuf" else []
    array = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if array.dtype.kind == "O":
        block = _as_numbers(array)
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


def check_domain(X: Any, y: Any, classes: np.ndarray | None, *, allow_nan: bool) -> Any:
    """Refuse a dataset outside the declared domain, with a fixed message; return ``y``, its
    labels as the declared classes (:func:`_declared_labels`).

    The domain: labels in ``classes`` (classifiers), 1-d labels, numeric targets that are
    finite (the other estimators, when ``y`` is given), and numeric features that are finite
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
    for block in _numeric_blocks(X):
        bad = np.isinf(block) if allow_nan else ~np.isfinite(block)
        if bad.any():
            what = "infinite" if allow_nan else "missing (NaN) or infinite"
            raise DomainError(
                f"X contains {what} values, which the estimator does not accept. Impute or "
                "clip them with public constants before the search (no position is named here "
                "because this check reads the private data).")
    return y if classes is None else _declared_labels(y, matched)


def _declared_labels(y: Any, labels: np.ndarray) -> Any:
    """``y`` with each label replaced by the declared class it equals (``labels``, found by
    :func:`_matching_classes`), where the *values* decide the labels' type: a list, a tuple, an
    object array or column (``np.asarray([0, 1.0])`` is a float array, and ``np.unique`` keeps
    one of ``1`` and ``1.0``, depending on the rows). The fitted models' ``classes_`` then has
    the declared classes' dtype, whatever one record holds. Labels with a dtype of their own (a
    numeric array, a pandas column of a non-object dtype) keep it, but hold the declared
    classes too: a float label ``-0.0`` equals the class ``0`` and passes the domain check, and
    kept as it was it became the model's ``classes_[0]`` and its predictions on the dataset
    holding it (review helper-46). A list stays a list, a pandas ``Series`` a ``Series``
    (same index, name, dtype)."""
    dtype = getattr(y, "dtype", None)
    if hasattr(y, "iloc"):  # its own dtype: a pandas string dtype would not batch
        return type(y)(labels, index=y.index, name=y.name, dtype=y.dtype)
    if isinstance(y, (list, tuple)):  # the estimator gets the container it was given
        return type(y)(labels.tolist())
    if isinstance(dtype, np.dtype) and dtype.kind != "O":
        return labels.astype(dtype)  # -0.0 equals 0 but is not the declared class 0
    return labels


_LABEL_MESSAGE = (
    "y contains a label that is not in the declared classes (a label you did not declare, or "
    "a continuous target). The label set is public information of the privacy contract; "
    "declare every label y may take (no value is named here because this check reads the "
    "private data).")


def _labels_as_given(y: Any) -> np.ndarray:
    """The labels as an array, each as given: a list or tuple becomes an object array, since
    numpy would otherwise choose one type from all the records (``[7, "7"]`` becomes strings,
    ``[7, 7]`` integers) and whether a label equals a class would depend on the other rows.
    An array or column keeps its own (public) dtype."""
    if isinstance(y, (list, tuple)):
        labels = np.empty(len(y), dtype=object)
        labels[:] = list(y)
        return labels
    return np.asarray(y)


def _matching_classes(labels: np.ndarray, classes: np.ndarray) -> np.ndarray | None:
    """For every label, the declared class it equals; ``None`` when one has none, or the
    comparison fails (a missing value such as ``pd.NA``). Labels of an object array are
    compared one at a time (:func:`_label_key`), never after a conversion of them all."""
    if labels.dtype == object:  # one label at a time (equal numbers hash alike)
        strings = classes.dtype.kind == "U"
        lookup = {label: i for i, label in enumerate(classes.tolist())}
        try:
            index = np.fromiter((lookup[_label_key(v, strings)] for v in labels),
                                dtype=np.intp, count=len(labels))
        except Exception:
            return None
        return classes[index]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            order = np.argsort(classes, kind="stable")
            found = np.searchsorted(classes, labels, sorter=order)
            index = order[np.clip(found, 0, len(classes) - 1)]
            if not np.all(classes[index] == labels):
                return None
    except Exception:
        return None
    return classes[index]


def _label_key(label: Any, strings: bool) -> Any:
    """How one label of a list is compared with the declared classes: a number with ``==``
    (``1.0`` equals ``1``), and with string classes -- the declared ones normalised by
    ``np.unique``, where ``[0, "a"]`` becomes ``["0", "a"]`` -- as its string, which is how
    numpy converts a list holding a string (``7`` then equals ``"7"``). Either way a function
    of that label alone; a 0-d array is its item."""
    if isinstance(label, np.ndarray) and label.ndim == 0:
        label = label.item()
    return str(label) if strings and not isinstance(label, str) else label


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
    those steps (:func:`~skdptune._estimators.shapes_model_input`, asked of every structure
    the sub-space's lists can build -- step replacements, ``"passthrough"`` -- and of the
    templates) are listed -- a list as it is, a discrete distribution with at most
    :data:`MAX_LISTED_VALUES` values by its support -- and every combination of them is
    returned (the other parameters keep the estimator's values: they cannot change those
    steps). So are the parameters of a private transformer whose output a step reads and of
    the steps after it before the model (:func:`~skdptune._magnitude.bears_on_magnitude`):
    their every setting gets its magnitude limit. ``space``: sub-spaces ``{name: list or
    distribution}``; a list is any sequence without ``rvs`` (scikit-learn's rule), anything
    else a distribution (a real range of ``DPGIBOSearchCV`` included).

    Public: reads the space only. Raises ``ValueError`` for a shaping parameter whose values
    cannot all be listed, or for more than :data:`MAX_LISTED_SETTINGS` combinations.
    """
    from sklearn.model_selection import ParameterGrid

    from ._estimators import shapes_model_input, structure_variants
    from ._magnitude import bears_on_magnitude

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
    from scipy import stats

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
    (:func:`~skdptune._estimators.leading_free_steps`): after the data-independent steps
    before it, which are row-wise, so the domain stays a set of *rows* (a row is in it or
    not, whatever the other rows) and replace-one neighbours within it are what the guarantee
    covers. Those rows must convert to numbers and be finite; NaN is allowed only where the
    model accepts it (:func:`check_domain`'s rule without steps before the model; with them,
    the model fitted on synthetic transformed rows holding a NaN answers -- a public
    question). A first step after them that is a composite holding private components (a
    ``ColumnTransformer`` with a diffprivlib branch) is read through its
    :func:`~skdptune._estimators.free_image`: the rows each of its first private components
    receives, beside the output of its data-independent branches, must be finite -- no NaN
    (which column of the image a NaN reaches is not asked), and in float32 when a diffprivlib
    tree reads any of it (:func:`check_composites_readable` ran first). Where a step reads
    what a private transformer outputs, the rows that transformer reads must also lie within
    the template's public magnitude limit (``limits``, aligned with ``templates``: from
    :func:`skdptune._magnitude.magnitude_limits`; ``None``: no limit).

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
    model (``None`` for a composite, whose :func:`~skdptune._estimators.free_image` ends the
    prefix), the float type it reads them in and the template's magnitude limit (``limits``,
    aligned with ``templates``; ``None``: none)."""
    from sklearn.pipeline import Pipeline

    from ._estimators import _is_dp_component, free_image, leading_free_steps

    readers, seen = [], set()
    for template, limit in zip(templates, limits or [None] * len(templates), strict=True):
        prefix, first = leading_free_steps(template)
        if _is_dp_component(first):
            dtype = _MODEL_DTYPES.get(type(first).__name__, np.float64)
        else:
            image = free_image(first)
            if image is None:
                continue
            # a composite: its data-independent parts, cut at its private components, read in
            # the narrowest float type of the private models that may read them
            prefix = Pipeline([*([] if prefix is None else prefix.steps), ("image", image)])
            first = None
            dtype = min((_MODEL_DTYPES.get(type(c).__name__, np.float64)
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
    """Raise a public ``ValueError`` if the :func:`~skdptune._estimators.free_image` of a
    candidate's composite first step cannot transform synthetic rows with the public format
    of ``X``: :func:`check_model_input` could not read the real ones either. Reads no data;
    run it with the public checks, before the budget."""
    from sklearn.base import clone

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


def _prefix_key(prefix, position: int) -> Any:
    """A key equal for equal prefixes (``joblib.hash``), or one of its own when the prefix
    cannot be hashed (a lambda in a ``FunctionTransformer``): checked again."""
    import joblib

    try:
        return joblib.hash(prefix)
    except Exception:
        return ("unhashable", position)


#: The float type a diffprivlib model converts its rows to, where it is not float64: the tree
#: reads float32, in which a finite float64 above 3.4e38 is infinite. (Its forest is refused:
#: ``_estimators._UNSOUND_DP_MODELS``.)
_MODEL_DTYPES = {"DecisionTreeClassifier": np.float32}


def _model_input_ok(prefix, X, nan_ok: bool, dtype=np.float64, limit: float | None = None
                    ) -> bool:
    """Whether every row of ``X``, through ``prefix`` (``None``: as is), is numbers the model
    can take in its float ``dtype``: finite, or NaN where ``nan_ok``, and at most ``limit`` in
    magnitude (``None``: no limit)."""
    from sklearn.base import clone

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


def _as_model_input(Z: Any) -> np.ndarray:
    """The values of ``Z`` as the float numbers a diffprivlib model converts them to; complex
    values, which it refuses, raise."""
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z).data
    elif hasattr(Z, "iloc"):
        import pandas as pd  # Z is a pandas object

        dtypes = Z.dtypes if hasattr(Z, "columns") else [Z.dtype]
        if any(pd.api.types.is_complex_dtype(t) for t in dtypes):
            raise TypeError("complex values")
        return Z.to_numpy(dtype=np.float64, na_value=np.nan)
    values = _as_numbers(Z)  # None for strings and complex numbers
    if values is None:
        raise TypeError("not numbers")
    return values


def _accepts_nan_after(prefix, first, X, y, classes, fill) -> bool:
    """Whether ``first`` fits synthetic rows transformed by ``prefix`` with one NaN in them (a
    public question: synthetic rows with the public format of ``X``)."""
    from sklearn.base import clone

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


# --------------------------------------------------------------------------------------------
# Dry run
# --------------------------------------------------------------------------------------------


def synthetic_fit_params(fit_params: dict, n_real: int, n_rows: int) -> dict:
    """Fit parameters for the synthetic dataset: row-aligned arrays replaced by ones."""
    return {name: (np.ones(n_rows) if _is_row_aligned(value, n_real) else value)
            for name, value in fit_params.items()}


def synthetic_dataset(X: Any, y: Any, classes: np.ndarray | None, *, nan: bool = False,
                      fill: Any = "", seed: int = 0) -> tuple[Any, Any]:
    """A small dataset with the public format of ``(X, y)`` and seeded values."""
    n_rows = int(min(_num_samples(X), DRY_RUN_ROWS))
    rng = np.random.RandomState(seed)
    X_syn = synthetic_rows(X, n_rows, rng=rng, fill=fill)
    if nan:
        X_syn = _with_one_nan(X_syn)
    if y is None:
        return X_syn, None
    if classes is not None:
        labels = classes[np.arange(n_rows) % len(classes)]
    else:
        shape = (n_rows,) + np.shape(y)[1:]
        labels = rng.standard_normal(shape).astype(np.asarray(y).dtype
                                                    if np.asarray(y).dtype.kind == "f"
                                                    else float)
    return X_syn, _synthetic_labels(y, labels)


def _with_one_nan(X: Any) -> Any:
    """``X`` (synthetic rows) with a NaN in its first float entry, in ``X``'s own container:
    a pandas column keeps its dtype (a ``Sparse[float]`` one too, which refuses item
    assignment), a scipy sparse matrix its format, so the dry run asks sparse rows whether the
    pipeline takes NaN as it asks dense ones (a sparse ``X`` was left without one: review
    helper-48)."""
    if hasattr(X, "iloc"):
        numeric = X.select_dtypes(include=["float"]).columns
        if len(numeric):
            import pandas as pd

            X = X.copy()
            column = X[numeric[0]]
            values = column.to_numpy(dtype=float, copy=True)
            values[0] = np.nan
            X[numeric[0]] = pd.array(values, dtype=column.dtype)
        return X
    if sp.issparse(X) and X.dtype.kind == "f" and X.shape[0] and X.shape[1]:
        fmt = X.format
        X = X.tolil(copy=True)
        X[0, 0] = np.nan
        return X.asformat(fmt)
    if isinstance(X, np.ndarray) and X.dtype.kind == "f":
        X = X.copy()
        X.flat[0] = np.nan
    return X


def has_object_entries(X: Any) -> bool:
    """Whether ``X`` has string or object entries (their synthetic value must be chosen)."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        import pandas as pd

        return any(not (isinstance(d, pd.CategoricalDtype) or pd.api.types.is_numeric_dtype(d)
                        or pd.api.types.is_bool_dtype(d)
                        or pd.api.types.is_datetime64_any_dtype(d)) for d in X.dtypes)
    if sp.issparse(X):
        return False
    return (X.dtype if isinstance(X, np.ndarray) else np.asarray(X).dtype).kind not in "biufc"


def choose_object_fill(estimator: Any, params: dict, X: Any, y: Any,
                       classes: np.ndarray | None, fit_params: dict) -> Any:
    """The first of :data:`OBJECT_FILLS` with which ``estimator`` fits synthetic data.

    A public question (format and configuration only). Falls back to the first value: the dry
    run then reports the error.
    """
    from .evaluation._fit import fit_on_rows, prepare_clone

    if not has_object_entries(X):
        return OBJECT_FILLS[0]
    for fill in OBJECT_FILLS:
        X_syn, y_syn = synthetic_dataset(X, y, classes, fill=fill)
        padding = make_padding(X, y, classes, fill)
        params_syn = synthetic_fit_params(fit_params, _num_samples(X), _num_samples(X_syn))
        try:
            with silenced():
                fit_on_rows(prepare_clone(estimator, params, seed=0), X_syn, y_syn, None,
                            params_syn, padding=padding)
        except Exception:
            continue
        return fill
    return OBJECT_FILLS[0]


@dataclass(frozen=True)
class DryRunResult:
    """What the dry run learnt from public information: whether NaN features are accepted;
    and the synthetic dataset it fitted on, ``(X, y, fit params, padding, scorers, scorer
    params)``, for :func:`skdptune._magnitude.magnitude_limits`."""

    allow_nan: bool
    synthetic: tuple


def dry_run(estimator: Any, candidates: list[dict], templates: list, X: Any, y: Any,
            classes: np.ndarray | None, fit_params: dict, scorers: dict[str, Any],
            padding: Padding | None, fill: Any = "",
            scorer_params: dict[str, dict] | None = None, n_jobs: int | None = None
            ) -> DryRunResult:
    """Fit and score every candidate (up to a cap) on synthetic data with the public format.

    ``templates``: the candidates' :func:`~skdptune.evaluation._fit.candidate_templates`
    (building them checked that the space's values can be set; without candidates, the
    estimator's own). Raises ``ValueError`` naming the first candidate, in order, that fails
    and quoting its error -- which is about synthetic data, hence public. Warnings are silenced
    (they concern synthetic data). Goes through :func:`skdptune.evaluation._fit.fit_on_rows`,
    the path of the private fits, with the same padding rows. ``scorer_params`` maps a scorer's
    name to the metadata it gets (row-aligned arrays replaced by ones), so that a scorer that
    cannot take them fails here.

    With ``n_jobs`` resolving to ``k >= 2`` the candidates are fitted in ``k`` shares (every
    ``k``-th candidate: a grid's costly values are spread evenly), one here and the others in
    joblib workers (:class:`_WorkerShares`); each share reports the first of its candidates
    that failed, and the earliest of these is fitted again here, so that the error raised --
    its message and its cause -- is the one a sequential run raises. The first candidate is
    always fitted here (the returned model is fitted in this process). The synthetic fits are
    public: they may run anywhere.

    A caller with other public work does it while the workers fit: :func:`start_dry_run`.
    """
    with start_dry_run(estimator, candidates, templates, X, y, classes, fit_params, scorers,
                       padding, fill, scorer_params, n_jobs) as pending:
        return pending.finish()


def start_dry_run(estimator: Any, candidates: list[dict], templates: list, X: Any, y: Any,
                  classes: np.ndarray | None, fit_params: dict, scorers: dict[str, Any],
                  padding: Padding | None, fill: Any = "",
                  scorer_params: dict[str, dict] | None = None, n_jobs: int | None = None
                  ) -> PendingDryRun:
    """:func:`dry_run` in two steps (same arguments): entering the returned
    :class:`PendingDryRun` dispatches the workers' shares without awaiting them, and its
    :meth:`~PendingDryRun.finish` completes the dry run."""
    X_syn, y_syn = synthetic_dataset(X, y, classes, fill=fill)
    params_syn = synthetic_fit_params(fit_params, _num_samples(X), _num_samples(X_syn))
    score_syn = {name: synthetic_fit_params(params, _num_samples(X), _num_samples(X_syn))
                 for name, params in (scorer_params or {}).items() if params}
    checked = (candidates if candidates else [{}])[:DRY_RUN_MAX_FITS]
    synthetic = (X_syn, y_syn, params_syn, padding, scorers, score_syn)
    shares = _WorkerShares(templates[:len(checked)], synthetic, n_jobs)
    return PendingDryRun(checked, templates[:len(checked)], synthetic, shares,
                         (X, y, classes, params_syn, padding, fill))


class PendingDryRun:
    """A dry run whose workers' shares are fitted while the caller does other public work
    (:func:`start_dry_run`)::

        with start_dry_run(...) as pending:
            ...  # other public work, its failure held
            result = pending.finish()

    ``synthetic``: the synthetic dataset it fits on, available at once. Entering dispatches the
    workers' shares; :meth:`finish` fits this process's share, waits for theirs, fits here what
    a sequential run's error needs, and returns the :class:`DryRunResult` or raises the error
    :func:`dry_run` raises -- call it also when the work done in between failed, so that a dry
    run's failure is the one reported, as in a run without overlap. Leaving without
    :meth:`finish` (an interrupt) abandons the shares at once.

    The process's warning filters are saved on entering and restored on leaving: a worker
    that is a thread of this process (dask's in-process workers) silences itself with
    ``warnings.catch_warnings``, which is not thread-safe, and its entries and exits interleave
    with this thread's (review helper-55: 3 fits in 8 left every warning ignored).
    """

    def __init__(self, checked, templates, synthetic, shares, nan_question):
        self.synthetic = synthetic
        self._checked, self._templates, self._shares = checked, templates, shares
        self._nan_question = nan_question
        self._filters = warnings.catch_warnings()

    def __enter__(self) -> PendingDryRun:
        self._filters.__enter__()
        try:
            self._shares.dispatch()
        except BaseException:  # an interrupt: what was dispatched goes too
            try:
                self._shares.abandon()
            finally:
                self._filters.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            self._shares.abandon()
        finally:
            self._filters.__exit__(*exc_info)

    def finish(self) -> DryRunResult:
        from .exceptions import PrivacyLeakError

        checked, templates, synthetic = self._checked, self._templates, self.synthetic
        start, zero_passed_here = self._shares.first_failure()
        # the first candidate is always fitted here: the returned model is fitted in this
        # process, whose state (warning filters, numpy's error settings, monkeypatches) a
        # worker may not share
        for i in dict.fromkeys([*([] if zero_passed_here else [0]),
                                *range(start, len(checked))]):
            where = f"candidate {checked[i]!r}" if checked[i] else "the estimator"
            try:
                _dry_fit(templates[i], i, *synthetic)
            except PrivacyLeakError:
                raise
            except Exception as exc:  # a configuration mistake: public, report it, charge nothing
                raise ValueError(
                    f"Dry run failed before any private data was read: {where} could not be "
                    f"fitted and scored on a synthetic dataset with the public format of X and "
                    f"y ({type(exc).__name__}: {exc}). Nothing was charged."
                ) from exc
        # NaN is in the domain only if every candidate takes it: asked of the first alone, a
        # grid of an imputer and a scaler in front of the model let NaN in, and the scaler's
        # fits failed on the neighbour holding one (review helper-46); the first refusal ends
        # the question
        X, y, classes, params_syn, padding, fill = self._nan_question
        allow_nan = all(_accepts_nan(template, X, y, classes, params_syn, padding, fill)
                        for template in templates)
        return DryRunResult(allow_nan=allow_nan, synthetic=synthetic)


def _dry_fit(template, i, X_syn, y_syn, params_syn, padding, scorers, score_syn) -> None:
    """Fit candidate ``i`` on the synthetic dataset and call every scorer; silenced."""
    from .evaluation._fit import fit_on_rows, instantiate

    with silenced():
        model = fit_on_rows(instantiate(template, seed=i), X_syn, y_syn, None, params_syn,
                            padding=padding)
        for name, scorer in scorers.items():
            # without y, scorer(estimator, X), as scikit-learn's searches call it
            if name in score_syn:
                value = scorer(model, X_syn, y_syn, **score_syn[name])
            else:
                value = scorer(model, X_syn) if y_syn is None else scorer(model, X_syn, y_syn)
            _check_score(value, name)


def _first_failing(share, synthetic) -> int | None:
    """The first of the ``(i, template)`` pairs ``share`` whose dry fit fails (a joblib task)."""
    for i, template in share:
        try:
            _dry_fit(template, i, *synthetic)
        except Exception:
            return i
    return None


class _WorkerShares:
    """The dry run's fits shared between this process and the joblib workers, one share each.

    ``n_jobs`` resolving to ``k >= 2`` gives ``k`` shares (every ``k``-th candidate: a grid's
    costly values are spread evenly). This process keeps the first -- it holds candidate 0,
    whose returned model is fitted here -- and fits it after its other public work, while the
    workers fit the others: ``k`` processes busy, as ``n_jobs`` asks, and none waiting (the
    main process used to wait for two worker shares and then fit candidate 0 again).

    :meth:`dispatch` sends the workers' shares; :meth:`first_failure` fits this process's share
    and returns where the sequential dry run must start -- the first candidate that failed
    anywhere (``len(templates)``: none), or 0 when the workers are not used (``n_jobs`` 1, a
    single candidate, a thread-based backend) or cannot be (e.g. an estimator that does not
    pickle) -- and whether candidate 0 passed here; :meth:`abandon` drops shares whose results
    were not read.

    With joblib 1.3 or later, and a backend that has generator output, the workers' shares
    are dispatched and their results read later (``return_as="generator"``), so this process
    does its other public work and its own share meanwhile; otherwise (joblib 1.2; the
    multiprocessing backend) every share, this process's included, is fitted in the workers
    on dispatch.

    The workers get scikit-learn's configuration (``sklearn.utils.parallel``), as the private
    fits do. Threads are never used, as for the private fits (``skdptune._private``, "Threads").
    """

    def __init__(self, templates, synthetic, n_jobs):
        from joblib import effective_n_jobs

        self._n, self._n_jobs = len(templates), n_jobs
        self._pending = None
        n_tasks = min(effective_n_jobs(n_jobs), len(templates))
        self._shares = [] if n_tasks < 2 or uses_threads() else [
            [(i, templates[i]) for i in range(task, len(templates), n_tasks)]
            for task in range(n_tasks)]
        self._own = []  # the share this process fits (set on dispatch)
        self._synthetic = synthetic

    def dispatch(self) -> None:
        if not self._shares:
            return
        try:
            pending = _dispatch(self._n_jobs, self._shares[1:], self._synthetic)
        except Exception:
            return
        if pending is None:  # no generator output: every share in the workers, now
            try:
                self._pending = _dispatch(self._n_jobs, self._shares, self._synthetic,
                                          on_dispatch=True)
            except Exception:
                pass
            return
        self._pending, self._own = pending, self._shares[0]  # abandon() can close it from here
        # joblib's threads that send the shares to the workers need the GIL, which the public
        # work done next would hold for up to a switch interval (5 ms) at a time: a moment's
        # sleep lets them send at once (credit, n_jobs=2: the worker began its share 9-13 ms
        # after dispatch, now about 2 ms; docs/grid_search.md)
        time.sleep(_HANDOFF_SECONDS)

    def first_failure(self) -> tuple[int, bool]:
        """``(start, zero_passed_here)``: where the sequential dry run starts, and whether
        candidate 0 was fitted here without failing (it need not be fitted again)."""
        own, self._own = self._own, []
        if self._pending is None:
            return 0, False
        # the workers' shares stay attached while this process fits its own: an interrupt
        # there leaves through abandon(), which closes them (review helper-1)
        own_first = _first_failing(own, self._synthetic) if own else None
        pending, self._pending = self._pending, None
        try:
            # not silenced(), whose task lock a worker thread may need: the workers silence
            # themselves (_dry_fit)
            with warnings.catch_warnings():
                discard_all_but_leaks()
                firsts = list(pending)
        except Exception:
            return 0, False
        zero_passed_here = bool(own) and own_first != 0
        return min((i for i in [own_first, *firsts] if i is not None),
                   default=self._n), zero_passed_here

    def abandon(self) -> None:
        pending, self._pending = self._pending, None
        self._own = []
        close = getattr(pending, "close", None)
        if close is not None:  # a generator: joblib aborts the tasks it has not finished
            with warnings.catch_warnings():
                discard_all_but_leaks()
                close()


#: the main process's pause after dispatching the dry run's worker shares (see dispatch)
_HANDOFF_SECONDS = 0.002


def _dispatch(n_jobs, shares, synthetic, on_dispatch=False):
    """``_first_failing`` on each share in the workers: a generator of the results, its tasks
    already dispatched (joblib >= 1.3, a backend with generator output); ``None`` where there
    is no generator output. ``on_dispatch``: the list of the results, fitted now."""
    from sklearn.utils.parallel import Parallel, delayed

    calls = [delayed(_first_failing)(share, synthetic) for share in shares]
    with warnings.catch_warnings():
        discard_all_but_leaks()
        if on_dispatch:
            return Parallel(n_jobs=n_jobs)(calls)
        if not _JOBLIB_GENERATORS:
            return None
        try:
            return Parallel(n_jobs=n_jobs, return_as="generator")(calls)
        except ValueError:  # e.g. the multiprocessing backend has no generator output
            return None


def _joblib_generators() -> bool:
    import inspect

    from joblib import Parallel

    return "return_as" in inspect.signature(Parallel).parameters


_JOBLIB_GENERATORS = _joblib_generators()


def _check_score(value: Any, name: str) -> None:
    if np.asarray(value, dtype=float).ndim > 1:
        raise TypeError(f"the {name} returned an array of shape {np.shape(value)}")


def _accepts_nan(template, X, y, classes, params_syn, padding, fill) -> bool:
    """Whether a candidate fits a synthetic dataset with a missing value (public question;
    ``template`` is its :func:`~skdptune.evaluation._fit.candidate_template`)."""
    from .evaluation._fit import fit_on_rows, instantiate

    X_nan, y_syn = synthetic_dataset(X, y, classes, nan=True, fill=fill)
    blocks = _numeric_blocks(X_nan)
    if not blocks or not np.isnan(blocks[0]).any():
        return False
    try:
        with silenced():
            model = fit_on_rows(instantiate(template, seed=0), X_nan, y_syn, None,
                                params_syn, padding=padding)
            model.predict(X_nan) if hasattr(model, "predict") else model.transform(X_nan)
    except Exception:
        return False
    return True



@dataclass(frozen=True)
class PublicInfo:
    """What a search knows before reading the data: ``n``, the label set and the padding."""

    n_samples: int
    classes: np.ndarray | None
    padding: Padding | None
