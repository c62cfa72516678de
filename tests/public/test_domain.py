"""The domain checks (skdptune.public._domain), tested directly: the budget check's message,
the format of the routed metadata, and the checks that read the data -- they refuse a dataset
outside the domain with a fixed message that names the violated rule only (no value, no
count, no position), raised with nothing chained.

The searches' side (nothing charged, the order budget -> domain) is in
tests/test_side_channels.py and tests/public/test_preflight.py.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from diffprivlib import BudgetAccountant
from diffprivlib.utils import BudgetError

from skdptune.exceptions import DomainError
from skdptune.public import (
    check_budget,
    check_domain,
    check_routed_metadata,
    check_weights_domain,
)
from skdptune.public._labels import _LABEL_MESSAGE


def _refusal(call):
    """The ``DomainError`` ``call()`` raises: its message, checked to carry nothing chained."""
    with pytest.raises(DomainError) as info:
        call()
    err = info.value
    assert err.__cause__ is None and err.__context__ is None
    return str(err)


def _rows(n=6, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=(n, 2))


# -- the budget --------------------------------------------------------------------------------
def test_the_budget_check_names_the_planned_cost_and_charges_nothing():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    check_budget(acc, 1.0, 1e-6)  # exactly the budget: passes
    with pytest.raises(BudgetError) as info:
        check_budget(acc, 1.5, 0.0)
    message = str(info.value)
    assert "would spend (epsilon=1.5, delta=0)" in message
    assert "has (epsilon=1, delta=1e-06) left" in message and "Nothing was charged" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert acc.spent_budget == []


# -- the metadata's format (public) ------------------------------------------------------------
def test_sample_weight_must_be_one_numeric_weight_per_row():
    for bad, what in [(np.ones(4), r"shape \(4,\)"), (np.ones((5, 1)), r"shape \(5, 1\)"),
                      (np.array(["1"] * 5), "kind 'U'")]:
        with pytest.raises(ValueError, match=f"one weight per row of X.*{what}"):
            check_routed_metadata({"sample_weight": bad}, 5, "the scorer")
    with pytest.raises(ValueError, match="must be an array .* got float"):
        check_routed_metadata({"sample_weight": 2.0}, 5, "the scorer")
    # the estimator's fit takes a scalar weight, as in scikit-learn; None is no metadata
    check_routed_metadata({"sample_weight": 2.0, "other": None}, 5, "fit", aligned=False)
    check_routed_metadata({"sample_weight": [1, 2.5, 0, 1, 1]}, 5, "the scorer")


def test_other_metadata_must_be_row_aligned_where_it_is_split():
    with pytest.raises(ValueError, match="'groups' for the inner splitter must have one entry "
                                         r"per row of X \(n_samples=5\); got 3 entries"):
        check_routed_metadata({"groups": [0, 1, 0]}, 5, "the inner splitter")
    check_routed_metadata({"groups": [0, 1, 0], "alpha": 0.5, "name": "abc"}, 5, "fit",
                          aligned=False)
    check_routed_metadata({"alpha": 0.5, "name": "abc"}, 5, "the scorer")


def test_the_metadata_check_does_not_read_the_weights_values():
    """Numeric weights of one shape pass whatever they are (negative and non-finite ones are
    refused later by the domain check, after the budget)."""
    for weights in (np.ones(3), np.array([-1.0, np.nan, np.inf]), np.array([0, 5, 9])):
        check_routed_metadata({"sample_weight": weights}, 3, "the scorer")


def test_the_format_of_a_list_of_weights_does_not_depend_on_one_weight():
    """One Python int weight of 2**63 or more, finite and non-negative, does not change the
    list\'s format (numpy would make the list an object array): refused on one neighbour
    before the budget check, it fitted on the other."""
    check_routed_metadata({"sample_weight": [1, 1, 1]}, 3, "the estimator's fit",
                          aligned=False)
    weights = [1, 2**70, 1]
    check_weights_domain([weights])  # in the domain: finite and non-negative
    check_routed_metadata({"sample_weight": weights}, 3, "the estimator's fit", aligned=False)


# -- labels ------------------------------------------------------------------------------------
@pytest.mark.parametrize("y", [
    [0, 1, 5, 1, 0, 0],
    [0, 1, 99, 1, 0, 0],
    np.array([0, 1, 1, 1, 0, -7]),
    np.array([0.0, 1.0, 0.5, 1.0, 0.0, 0.0]),
    [0, 1, "secret", 1, 0, 0],
    [0, 1, pd.NA, 1, 0, 0],
    [0, 1, None, 1, 0, 0],
    pd.Series([0, 1, 3, 1, 0, 0], index=[10, 11, 12, 13, 14, 15]),
])
def test_an_undeclared_label_is_refused_with_the_fixed_message(y):
    message = _refusal(lambda: check_domain(_rows(), y, np.array([0, 1]), allow_nan=False))
    assert message == _LABEL_MESSAGE  # no label, no position, no count


def test_two_dimensional_labels_are_refused():
    message = _refusal(lambda: check_domain(_rows(2), np.zeros((2, 2)), np.array([0, 1]),
                                            allow_nan=False))
    assert message == "A private classifier search needs 1-d labels y."


def test_declared_labels_come_back_as_the_declared_classes():
    classes = np.array([0, 1])
    out = check_domain(_rows(3), [1.0, 0, np.int64(1)], classes, allow_nan=False)
    assert out == [1, 0, 1] and all(type(v) is int for v in out)
    out = check_domain(_rows(3), np.array([-0.0, 1.0, 0.0]), classes, allow_nan=False)
    assert out.dtype == np.float64 and not np.signbit(out).any()
    strings = check_domain(_rows(2), np.array(["b", "a"], dtype=object), np.array(["a", "b"]),
                           allow_nan=False)
    assert strings.tolist() == ["b", "a"]


# -- the target of an estimator that is no classifier ------------------------------------------
def test_a_non_finite_or_non_numeric_target_is_refused_with_one_message():
    messages = set()
    for position, bad in enumerate([np.nan, np.inf, -np.inf, "high", None]):
        y = [0.5, 1.5, 2.0, 0.0, 1.0]
        y.insert(position, bad)
        messages.add(_refusal(lambda y=y: check_domain(_rows(), y, None, allow_nan=True)))
    assert len(messages) == 1  # no value, no position
    assert messages.pop().startswith("The target y must be numeric and finite")


def test_a_finite_target_is_returned_as_given():
    y = np.array([0.5, -3.0])
    assert check_domain(_rows(2), y, None, allow_nan=False) is y
    assert check_domain(_rows(2), None, None, allow_nan=False) is None


# -- the features ------------------------------------------------------------------------------
def _with(value, row, container):
    X = _rows().astype(object) if container == "object" else _rows()
    X[row, 1] = value
    if container == "frame":
        return pd.DataFrame(X, columns=["a", "b"])
    if container == "csr":
        return sp.csr_matrix(X)
    if container == "longdouble":
        X = X.astype(np.longdouble)
        X[row, 1] = np.longdouble(value) * np.longdouble(10.0) ** 400 if value == 1e300 else value
    return X


@pytest.mark.parametrize("container", ["array", "object", "frame", "csr", "longdouble"])
def test_non_finite_features_are_refused_with_one_message_wherever_they_are(container):
    """NaN or infinite, in row 0 or row 5 (and in a longdouble array, a value float64 cannot
    hold): the same message, which names the rule only."""
    messages = set()
    cases = [(np.nan, 0), (np.inf, 5), (-np.inf, 2)]
    if container == "longdouble":
        cases.append((1e300, 3))  # finite before the conversion the fits make, not after
    for value, row in cases:
        X = _with(value, row, container)
        messages.add(_refusal(lambda X=X: check_domain(X, None, None, allow_nan=False)))
    assert messages == {
        "X contains missing (NaN) or infinite values, which the estimator does not accept. "
        "Impute or clip them with public constants before the search (no position is named "
        "here because this check reads the private data)."}
    check_domain(_with(0.25, 0, container), None, None, allow_nan=False)  # finite: passes


@pytest.mark.parametrize("container", ["array", "object", "frame", "csr"])
def test_nan_passes_where_the_estimator_takes_it_and_infinity_never(container):
    check_domain(_with(np.nan, 3, container), None, None, allow_nan=True)
    message = _refusal(lambda: check_domain(_with(np.inf, 3, container), None, None,
                                            allow_nan=True))
    assert message.startswith("X contains infinite values")


def test_numbers_in_an_object_column_are_checked_and_strings_are_not():
    frame = pd.DataFrame({"num": [1.0, 2.0, 3.0], "obj": np.array([1, None, 2], dtype=object),
                          "cat": np.array(["a", "b", "c"], dtype=object)})
    _refusal(lambda: check_domain(frame, None, None, allow_nan=False))
    frame["obj"] = np.array([1, 5, 2], dtype=object)
    check_domain(frame, None, None, allow_nan=False)


def test_whether_a_row_is_in_the_domain_does_not_depend_on_the_other_rows():
    """A string that parses as a non-finite number ("nan") is refused whatever the other rows
    hold: converted as a block, the column was checked only when every other string parsed (a
    search over OneHotEncoder(categories=[[..., "nan", "N/A"]]) fitted on one neighbour and
    raised DomainError on the other)."""
    zips = np.array([["94110"], ["nan"], ["10001"], ["60601"]], dtype=object)
    outcomes = []
    for other in ("60601", "N/A"):  # record 3 replaced
        X = zips.copy()
        X[3, 0] = other
        try:
            check_domain(X, None, None, allow_nan=False)
        except DomainError:
            outcomes.append("refused")
        else:
            outcomes.append("passed")
    assert outcomes[0] == outcomes[1]


# -- sample weights ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-0.5, np.nan, np.inf])
def test_negative_or_non_finite_weights_are_refused_with_one_message(bad):
    weights = np.ones(6)
    weights[4] = bad
    message = _refusal(lambda: check_weights_domain([None, weights]))
    assert message == (
        "sample_weight must be finite and non-negative (no value or position is named here "
        "because this check reads the private data). Nothing was charged.")


def test_valid_weights_and_no_weights_pass():
    check_weights_domain([None, np.array([0.0, 2.5, 1e10]), [1, 0, 3], 2.0])
