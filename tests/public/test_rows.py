"""Synthetic rows and padding (skdptune.public._rows), tested directly.

The privacy-relevant property: the synthetic rows, the dry run's dataset and the padding are
functions of public information only (the format of ``X`` and ``y``, ``n``, the declared
classes) -- two datasets of the same public format give the same ones -- and the padding holds
every declared class, so that no fit can miss one.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from diffprivlib.models import GaussianNB

from skdptune.evaluation._fit import fit_on_rows, prepare_clone
from skdptune.public import (
    Padding,
    PublicInfo,
    check_rows,
    make_padding,
    synthetic_dataset,
    synthetic_fit_params,
    synthetic_rows,
)
from skdptune.public._rows import DRY_RUN_ROWS, concat_rows, has_object_entries

# -- datasets of one public format, different values -------------------------------------------


def _frame(seed, n):
    rng = np.random.RandomState(seed)
    return pd.DataFrame({
        "f": rng.normal(size=n),
        "i": rng.randint(-50, 50, size=n),
        "b": rng.rand(n) > 0.5,
        "c": pd.Categorical(rng.choice(["x", "y"], size=n), categories=["y", "x", "z"]),
        "s": rng.choice(["red", "green"], size=n).astype(object),
        "d": pd.to_datetime(rng.randint(0, 10**9, size=n), unit="s"),
        "n": pd.array(rng.randint(0, 5, size=n), dtype="Int64"),
    })


FORMATS = {
    "float": lambda seed, n: np.random.RandomState(seed).normal(size=(n, 3)),
    "int32": lambda seed, n: np.random.RandomState(seed).randint(-9, 9, (n, 3)).astype(np.int32),
    "bool": lambda seed, n: np.random.RandomState(seed).rand(n, 2) > 0.5,
    "object": lambda seed, n: np.random.RandomState(seed).choice(["a", "bb"], (n, 2)).astype(
        object),
    "csr": lambda seed, n: sp.random(n, 4, density=0.5, format="csr", random_state=seed),
    "csc": lambda seed, n: sp.random(n, 4, density=0.5, format="csc", random_state=seed),
    "list": lambda seed, n: np.random.RandomState(seed).normal(size=(n, 2)).tolist(),
    "frame": _frame,
}


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif sp.issparse(a):
        assert a.format == b.format and a.dtype == b.dtype
        np.testing.assert_array_equal(a.toarray(), b.toarray())
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b)
    elif isinstance(a, list):
        assert a == b
    else:
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_synthetic_rows_depend_on_the_format_only(fmt, seeded):
    make = FORMATS[fmt]
    first, second = make(0, 30), make(1, 55)

    def rows(X):
        return synthetic_rows(X, 7, rng=np.random.RandomState(5) if seeded else None)

    a, b = rows(first), rows(second)
    _same(a, b)
    # ... in the format of X
    assert type(a) is type(first)
    if isinstance(first, pd.DataFrame):
        assert list(a.columns) == list(first.columns)
        assert a.dtypes.tolist() == first.dtypes.tolist() and len(a) == 7
    elif isinstance(first, list):
        assert len(a) == 7 and all(len(row) == 2 for row in a)
    else:
        assert a.shape == (7, first.shape[1]) and a.dtype == first.dtype


def test_synthetic_values_are_the_documented_constants():
    a = synthetic_rows(_frame(0, 10), 4)
    assert a["f"].tolist() == [0.0] * 4 and a["i"].tolist() == [0] * 4
    assert a["b"].tolist() == [False] * 4 and a["n"].tolist() == [0] * 4
    assert a["c"].tolist() == ["y", "x", "z", "y"]  # the dtype's categories, not the data's
    assert a["s"].tolist() == [""] * 4
    assert synthetic_rows(FORMATS["object"](0, 5), 2, fill=0).tolist() == [[0, 0], [0, 0]]
    ints = synthetic_rows(FORMATS["int32"](0, 5), 50, rng=np.random.RandomState(0))
    assert ints.dtype == np.int32 and ints.std() > 0  # seeded draws, rounded


# -- padding -----------------------------------------------------------------------------------
LABELS = {
    "int array": lambda v: np.asarray(v, dtype=np.int64),
    "list": list,
    "series": lambda v: pd.Series(v, name="target", dtype="int32"),
    "object array": lambda v: np.asarray(v, dtype=object),
}


@pytest.mark.parametrize("container", list(LABELS))
@pytest.mark.parametrize("fmt", ["float", "csr", "frame", "list"])
def test_padding_is_one_public_row_per_declared_class(fmt, container):
    classes = np.array([0, 1, 2])
    first = make_padding(FORMATS[fmt](0, 30), LABELS[container]([0] * 30), classes)
    second = make_padding(FORMATS[fmt](1, 55), LABELS[container]([2, 1] * 27 + [1]), classes)
    _same(first.X, second.X)
    _same(first.y, second.y)
    assert len(first) == 3
    labels = first.y.tolist() if hasattr(first.y, "tolist") else list(first.y)
    assert labels == [0, 1, 2]  # every declared class, in sorted order
    assert type(first.y) is type(LABELS[container]([0]))
    if container in ("int array", "series"):
        assert first.y.dtype == LABELS[container]([0]).dtype


def test_padding_makes_every_fit_see_every_declared_class():
    """A fit on rows of a single class (a partition, a train part) has the declared
    ``classes_`` and the declared shape of its parameters, on either neighbour."""
    classes = np.array([0, 1, 2])
    X = np.random.RandomState(0).uniform(-1, 1, size=(20, 2))
    fitted = []
    for label in (0, 2):
        y = np.full(20, label)
        model = fit_on_rows(prepare_clone(GaussianNB(bounds=(-1.0, 1.0)), {}, seed=0),
                            X, y, None, {}, padding=make_padding(X, y, classes))
        fitted.append((model.classes_.tolist(), model.theta_.shape))
    assert fitted == [([0, 1, 2], (3, 2))] * 2


def test_no_padding_without_a_label_set():
    assert make_padding(np.zeros((3, 2)), np.zeros(3), None) is None


def test_a_label_dtype_that_merges_declared_classes_is_refused():
    y = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="become 1 distinct labels in y's dtype"):
        make_padding(np.zeros((4, 2)), y, np.array([2**24, 2**24 + 1]))


def test_padding_apply_appends_the_rows_and_weights_them_one():
    padding = make_padding(np.zeros((4, 2)), np.zeros(4, dtype=int), np.array([0, 1]))
    X, y = np.full((3, 2), 9.0), np.array([1, 1, 1])
    params = {"sample_weight": [0.5, 2.0, 3.0], "alpha": 0.1, "other_length": [1, 2]}
    X_fit, y_fit, fit_params = padding.apply(X, y, params)
    np.testing.assert_array_equal(X_fit, np.vstack([X, np.zeros((2, 2))]))
    assert y_fit.tolist() == [1, 1, 1, 0, 1]
    assert fit_params["sample_weight"].tolist() == [0.5, 2.0, 3.0, 1.0, 1.0]
    assert fit_params["alpha"] == 0.1 and fit_params["other_length"] == [1, 2]
    assert params["sample_weight"] == [0.5, 2.0, 3.0]  # the caller's dict is not changed
    with pytest.raises(ValueError, match="'groups' cannot be extended"):
        padding.apply(X, y, {"groups": np.arange(3)})


def test_padding_and_public_info_are_frozen():
    padding = make_padding(np.zeros((4, 2)), np.zeros(4, dtype=int), np.array([0, 1]))
    info = PublicInfo(4, np.array([0, 1]), padding)
    with pytest.raises(dataclasses.FrozenInstanceError):
        padding.y = np.array([0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.n_samples = 5
    assert isinstance(padding, Padding)


# -- the dry run's dataset ---------------------------------------------------------------------
@pytest.mark.parametrize("classes", [None, np.array([0, 1, 2])])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_synthetic_dataset_depends_on_the_public_format_only(fmt, classes):
    """Two datasets with the same format and size but other values (labels included) give the
    same synthetic dataset; its size is ``min(n, DRY_RUN_ROWS)``."""
    n = 60
    y_first = np.zeros(n) if classes is None else np.zeros(n, dtype=int)
    y_second = np.linspace(-5, 5, n) if classes is None else np.arange(n) % 3
    X_a, y_a = synthetic_dataset(FORMATS[fmt](0, n), y_first, classes)
    X_b, y_b = synthetic_dataset(FORMATS[fmt](1, n), y_second, classes)
    _same(X_a, X_b)
    _same(y_a, y_b)
    assert len(y_a) == DRY_RUN_ROWS
    if classes is not None:  # the labels cycle through every declared class
        assert y_a.tolist() == [0, 1, 2] * 13 + [0]


def test_the_synthetic_dataset_of_a_small_n_and_without_y():
    X_syn, y_syn = synthetic_dataset(np.ones((5, 2)), None, None)
    assert X_syn.shape == (5, 2) and y_syn is None


def test_the_synthetic_dataset_with_one_missing_value():
    for fmt in ("float", "csr", "frame"):
        X_syn, _ = synthetic_dataset(FORMATS[fmt](0, 20), None, None, nan=True)
        values = (X_syn.toarray() if sp.issparse(X_syn)
                  else X_syn.select_dtypes("float").to_numpy() if fmt == "frame" else X_syn)
        assert np.isnan(values).sum() == 1, fmt
        assert type(X_syn) is type(FORMATS[fmt](0, 1))


def test_synthetic_fit_params_replace_row_aligned_values_by_ones():
    for weights in ([0.1, 7.0, 3.0], np.array([5.0, 0.0, 1.0])):
        params = synthetic_fit_params({"sample_weight": weights, "alpha": 0.5,
                                       "short": [1, 2]}, n_real=3, n_rows=4)
        assert params["sample_weight"].tolist() == [1.0] * 4
        assert params["alpha"] == 0.5 and params["short"] == [1, 2]


# -- check_rows and the containers -------------------------------------------------------------
def test_check_rows_names_both_lengths():
    with pytest.raises(ValueError, match="got X with 3 and y with 2"):
        check_rows(np.zeros((3, 2)), [0, 1])
    X, y = check_rows(np.zeros((3, 2)), None)
    assert y is None and X.shape == (3, 2)


def test_check_rows_gives_a_list_one_format_whatever_its_values():
    """A list's dtype would be chosen from all its values (one ``0.5`` among integer codes:
    float64); as rows of objects its format is the same whatever they hold."""
    ints, _ = check_rows([[1, 2], [3, 4]], None)
    mixed, _ = check_rows([[1, 2], [3, 0.5]], None)
    assert ints.dtype == mixed.dtype == object and ints.shape == mixed.shape == (2, 2)
    assert mixed[1, 1] == 0.5 and type(ints[0, 0]) is int
    ragged, _ = check_rows([[1, 2], [3]], None)
    assert ragged.shape == (2,)  # refused later as not 2-d
    narrow, _ = check_rows(np.array([["a", "b"], ["c", "de"]]), None)
    assert narrow.dtype == object


def test_concat_rows_keeps_the_container():
    a = np.ones((2, 2))
    assert concat_rows(a, np.zeros((1, 2))).shape == (3, 2)
    assert concat_rows([[1]], [[2]]) == [[1], [2]]
    csc = concat_rows(sp.csc_matrix(a), sp.csc_matrix(np.zeros((1, 2))))
    assert csc.format == "csc" and csc.shape == (3, 2)
    frame = concat_rows(pd.DataFrame(a, index=[7, 8]), pd.DataFrame(np.zeros((1, 2))))
    assert frame.index.tolist() == [0, 1, 2]


def test_has_object_entries_reads_the_format_only():
    assert has_object_entries(FORMATS["object"](0, 3))
    assert has_object_entries(_frame(0, 3))  # its string column
    assert not has_object_entries(_frame(0, 3).drop(columns="s"))
    for fmt in ("float", "int32", "bool", "csr", "list"):
        assert not has_object_entries(FORMATS[fmt](0, 3)), fmt
