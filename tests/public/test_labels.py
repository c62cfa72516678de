"""The declared label set (skdptune.public._labels): ``resolve_classes``, ``check_public_shapes``
and the label helpers the domain check uses, tested directly.

The searches' side (a classifier needs ``classes``, the returned model's ``classes_``, labels
whose format follows their values) is in tests/test_side_channels.py (``test_item4_*``,
``test_labels_whose_format_follows_their_values_give_the_declared_classes`` ...).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from diffprivlib.models import DecisionTreeClassifier, GaussianNB, LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from sklearn.exceptions import DataConversionWarning
from sklearn.pipeline import Pipeline

from skdptune.evaluation._fit import fit_on_rows, prepare_clone
from skdptune.public import check_public_shapes, make_padding, resolve_classes
from skdptune.public._labels import _declared_labels, _labels_as_given, _matching_classes


def lr(**kw):
    return LogisticRegression(epsilon=1.0, data_norm=2.0, **kw)


def scaler():
    return DPStandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))


# -- resolve_classes ---------------------------------------------------------------------------
@pytest.mark.parametrize("classes, expected", [
    ([2, 0, 1, 0], [0, 1, 2]),
    (("yes", "no", "maybe"), ["maybe", "no", "yes"]),
    (np.array([1.5, -3.0]), [-3.0, 1.5]),
])
def test_the_declared_set_is_sorted_and_unique(classes, expected):
    resolved = resolve_classes(classes, lr())
    assert isinstance(resolved, np.ndarray) and resolved.ndim == 1
    assert resolved.tolist() == expected


def test_its_order_is_the_order_of_a_fitted_models_classes():
    """``np.unique``'s order is the order ``classes_`` takes: a fit on rows of one class plus
    the padding has exactly the resolved set, in that order, whatever the rows hold."""
    classes = resolve_classes(["yes", "no", "maybe"], lr())
    X = np.random.RandomState(0).uniform(-1, 1, size=(30, 2))
    y = np.array(["no"] * 30, dtype=object)
    model = fit_on_rows(prepare_clone(lr(), {}, seed=0), X, y, None, {},
                        padding=make_padding(X, y, classes))
    assert model.classes_.tolist() == classes.tolist()
    assert model.coef_.shape == (3, 2)


def test_a_non_classifier_takes_no_label_set():
    assert resolve_classes(None, scaler()) is None
    with pytest.raises(ValueError, match="not one. Leave classes=None"):
        resolve_classes([0, 1], scaler())


def test_a_classifier_needs_a_declared_label_set():
    with pytest.raises(ValueError, match="needs the label set as public information"):
        resolve_classes(None, lr())


def test_a_candidate_that_is_a_classifier_needs_it_too():
    """A pipeline whose last step the space sets: the estimator is no classifier, but one of
    the candidates' templates is."""
    pipe = Pipeline([("scale", scaler()), ("model", "passthrough")])
    candidate = Pipeline([("scale", scaler()), ("model", lr())])
    assert resolve_classes(None, pipe, [pipe]) is None
    with pytest.raises(ValueError, match="needs the label set"):
        resolve_classes(None, pipe, [pipe, candidate])
    assert resolve_classes([1, 0], pipe, [candidate]).tolist() == [0, 1]


def test_the_estimators_own_classes_declare_the_set():
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[1, 0])
    assert resolve_classes(None, tree).tolist() == [0, 1]
    assert resolve_classes([0, 1, 1], tree).tolist() == [0, 1]  # the same set, written apart
    with pytest.raises(ValueError, match=r"classes=\[0, 1, 2\] differs .* \(\[0, 1\]\)"):
        resolve_classes([0, 1, 2], tree)


def test_a_candidates_own_classes_must_agree_with_the_declared_set():
    pipe = Pipeline([("model", lr())])
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=["a", "b", "c"])
    candidate = Pipeline([("model", tree)])
    with pytest.raises(ValueError, match="differs"):
        resolve_classes(["a", "b"], pipe, [candidate])
    assert resolve_classes(None, pipe, [candidate]).tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("classes", [[1], [1, 1, 1], []])
def test_fewer_than_two_labels_are_refused(classes):
    with pytest.raises(ValueError, match="at least two labels"):
        resolve_classes(classes, GaussianNB(bounds=(-1.0, 1.0)))


def test_a_two_dimensional_label_set_is_refused():
    """Not flattened into labels of its own (np.unique would)."""
    with pytest.raises(ValueError, match="classes"):
        resolve_classes([[0, 1], [2, 3]], lr())


# -- check_public_shapes -----------------------------------------------------------------------
@pytest.mark.parametrize("X", [np.zeros(5), np.zeros((5, 2, 2)), [1.0, 2.0]])
def test_x_must_be_two_dimensional(X):
    with pytest.raises(ValueError, match="Expected a 2-d X"):
        check_public_shapes(X, None, None, scaler())


def test_without_a_label_set_y_is_returned_as_given():
    y = np.array([[0.5], [1.5]])
    assert check_public_shapes(np.zeros((2, 1)), y, None, scaler()) is y
    assert check_public_shapes(pd.DataFrame({"a": [1.0, 2.0]}), None, None, scaler()) is None


def test_a_classifier_needs_y():
    with pytest.raises(ValueError, match="LogisticRegression is a classifier: fit needs y"):
        check_public_shapes(np.zeros((3, 2)), None, np.array([0, 1]), lr())


def test_a_column_of_labels_is_raveled_with_scikit_learns_warning():
    with pytest.warns(DataConversionWarning):
        y = check_public_shapes(np.zeros((3, 2)), np.array([[0], [1], [0]]), np.array([0, 1]),
                                lr())
    assert y.shape == (3,)
    with pytest.raises(ValueError, match=r"1-d labels y; got shape \(3, 2\)"):
        check_public_shapes(np.zeros((3, 2)), np.zeros((3, 2)), np.array([0, 1]), lr())


def test_labels_whose_format_is_chosen_by_their_values_become_objects():
    """A numpy string array is as wide as its longest label and a pandas category column has
    the categories its values hold: both become object labels, whatever the values."""
    classes = np.array(["no", "yes"])
    for y in (np.array(["no", "no"]), np.array(["no", "yes"])):
        out = check_public_shapes(np.zeros((2, 1)), y, classes, lr())
        assert out.dtype == object and out.tolist() == y.tolist()
    series = pd.Series(["no", "no"], dtype="category", name="label", index=[5, 9])
    out = check_public_shapes(np.zeros((2, 1)), series, classes, lr())
    assert out.dtype == object and out.index.tolist() == [5, 9] and out.name == "label"


def test_a_label_dtype_that_cannot_hold_a_declared_class_is_refused_without_reading_y():
    """int8 labels and a class 300: refused from the dtypes alone -- the message is the same
    whatever the labels."""
    messages = set()
    for values in ([0, 0, 0], [1, 0, 1], [127, -128, 5]):
        y = np.array(values, dtype=np.int8)
        with pytest.raises(ValueError, match="cannot all be held by y's dtype int8") as info:
            check_public_shapes(np.zeros((3, 1)), y, np.array([0, 300]), lr())
        messages.add(str(info.value))
    assert len(messages) == 1
    # a dtype that holds them passes, as do float labels for integer classes
    for dtype in (np.int16, np.float32):
        check_public_shapes(np.zeros((3, 1)), np.zeros(3, dtype=dtype), np.array([0, 300]), lr())


# -- the label helpers of the domain check -----------------------------------------------------
def test_labels_of_a_list_keep_their_own_types():
    """numpy would choose one type from all the records (``[7, "7"]``: strings)."""
    labels = _labels_as_given([7, "7", 2.5])
    assert labels.dtype == object and [type(v) for v in labels] == [int, str, float]
    assert _labels_as_given(np.array([1, 2], dtype=np.int16)).dtype == np.int16


@pytest.mark.parametrize("labels, classes", [
    ([7, "7", np.array(8), "8", 8], ["7", "8"]),
    ([7, 7.0, np.int64(8), np.float32(8.0), 9, "7"], [7, 8]),
    ([0, "a", 1.0, None, "b"], [0, 1]),
    ([1, 2.5], ["1", "2.5"]),  # as one array: floats, and 1 would become "1.0"
])
def test_whether_a_label_is_a_declared_class_depends_on_that_label_alone(labels, classes):
    """Each label is matched as it would be alone: a record cannot decide whether another is
    in the domain (or which class it becomes)."""
    classes = resolve_classes(classes, lr())
    together = _matching_classes(_labels_as_given(labels), classes)
    alone = [_matching_classes(_labels_as_given([label]), classes) for label in labels]
    if any(match is None for match in alone):
        assert together is None
    else:
        assert together.tolist() == [match[0] for match in alone]


def test_the_fits_get_the_declared_classes():
    """Labels equal to a declared class become that class: the fitted ``classes_`` has the
    declared classes' type whatever one record holds (``1.0`` for ``1``, ``-0.0`` for ``0``);
    the container stays the one given."""
    classes = np.array([0, 1])
    labels = _labels_as_given([1.0, 0, np.int8(1)])
    declared = _declared_labels([1.0, 0, np.int8(1)], _matching_classes(labels, classes))
    assert declared == [1, 0, 1] and [type(v) for v in declared] == [int, int, int]
    y = np.array([-0.0, 1.0])
    out = _declared_labels(y, _matching_classes(y, classes))
    assert out.dtype == np.float64 and not np.signbit(out).any()
    series = pd.Series([1.0, -0.0], index=[3, 4], name="t")
    out = _declared_labels(series, _matching_classes(series.to_numpy(), classes))
    assert isinstance(out, pd.Series) and out.index.tolist() == [3, 4] and out.name == "t"
    assert out.dtype == np.float64 and not np.signbit(out.to_numpy()).any()


def test_a_missing_label_matches_no_class():
    classes = np.array(["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and without a warning that would name it
        assert _matching_classes(_labels_as_given(["a", pd.NA]), classes) is None
        assert _matching_classes(np.array([0.0, np.nan]), np.array([0.0, 1.0])) is None
