"""The label set of a classifier: declared by the user, public like ``n``.

The returned model's ``classes_`` is the declared set whatever the data, and a label dtype
that would merge two declared labels is refused before the data is read.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.validation import column_or_1d

from .._params import get_params
from ..estimators import iter_dp_components

__all__ = ["check_public_shapes", "resolve_classes"]


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
    if classes is not None and np.ndim(classes) != 1:
        raise ValueError(f"classes must be a 1-d list of labels; got {np.ndim(classes)} "
                         "dimensions.")
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
    if len(declared) < 2:
        raise ValueError(f"classes must list at least two labels; got {declared.tolist()}.")
    return declared


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
    missing padding label and a failed dry run where a category was absent. As object labels
    they are compared with the declared classes one at a time, and the fits get the declared
    classes (:func:`_declared_labels`)."""
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


def _declared_labels(y: Any, labels: np.ndarray) -> Any:
    """``y`` with each label replaced by the declared class it equals (``labels``, found by
    :func:`_matching_classes`), where the *values* decide the labels' type: a list, a tuple, an
    object array or column (``np.asarray([0, 1.0])`` is a float array, and ``np.unique`` keeps
    one of ``1`` and ``1.0``, depending on the rows). The fitted models' ``classes_`` then has
    the declared classes' dtype, whatever one record holds. Labels with a dtype of their own (a
    numeric array, a pandas column of a non-object dtype) keep it, but hold the declared
    classes too: a float label ``-0.0`` equals the class ``0`` and passes the domain check, and
    kept as it was it became the model's ``classes_[0]`` and its predictions on the dataset
    holding it. A list stays a list, a pandas ``Series`` a ``Series``
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
