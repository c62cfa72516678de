"""Rows with the public format of ``X``, and the padding rows every classifier fit gets.

* **Synthetic rows** (:func:`synthetic_rows`): rows with the public format of ``X`` and values
  chosen without looking at the data (zeros, ``""``, the first category of a categorical
  dtype, or seeded Gaussian numbers).
* **Padding** (:class:`Padding`): one synthetic row per declared class appended to *every* fit
  of a classifier, inner and returned. Every fit then sees every class, so it cannot fail
  because a train part holds a single class, and the fitted model's ``classes_`` (and the shape
  of ``coef_`` / ``theta_``) is the declared label set, whatever the data. The padding rows are
  identical on neighbouring datasets, so a fit on ``rows + padding`` is as private with respect
  to ``rows`` as the diffprivlib model is (its guarantee holds for any dataset, of any size).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _num_samples, indexable

__all__ = [
    "DRY_RUN_ROWS",
    "OBJECT_FILLS",
    "Padding",
    "PublicInfo",
    "check_rows",
    "concat_rows",
    "has_object_entries",
    "make_padding",
    "synthetic_dataset",
    "synthetic_fit_params",
    "synthetic_rows",
]


#: rows of the synthetic dataset of the dry run (fewer when ``n`` is smaller)
DRY_RUN_ROWS = 40


def check_rows(X: Any, y: Any) -> tuple[Any, Any]:
    """``indexable(X, y)`` with a message that names ``X`` and ``y`` when their lengths differ;
    a list or tuple ``X`` as an object array of its rows (:func:`_rows_as_given`).

    The lengths are public (``n`` is), so saying them releases nothing.
    """

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
#: skdptune.estimators) and 0 (object arrays that hold numbers)
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


def _prefix_key(prefix, position: int) -> Any:
    """A key equal for equal prefixes (``joblib.hash``), or one of its own when the prefix
    cannot be hashed (a lambda in a ``FunctionTransformer``): checked again."""

    try:
        return joblib.hash(prefix)
    except Exception:
        return ("unhashable", position)


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
    pipeline takes NaN as it asks dense ones (a sparse ``X`` was once left without one)."""
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


@dataclass(frozen=True)
class PublicInfo:
    """What a search knows before reading the data: ``n``, the label set and the padding of a
    classifier, the target range of a regressor."""

    n_samples: int
    classes: np.ndarray | None
    padding: Padding | None
    target_range: tuple[float, float] | None = None
