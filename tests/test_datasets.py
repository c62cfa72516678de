"""skdptune.datasets: the Adult reader and the synthetic stand-in."""

import csv

import numpy as np
import pytest

from skdptune.datasets import _ADULT_NUMERIC, load_adult, load_classification

HEADER = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
          "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
          "hours-per-week", "native-country", "income"]
RECORDS = [
    ["39", " State-gov", "77516", " Bachelors", "13", " Never-married", " Adm-clerical",
     " Not-in-family", " White", " Male", "2174", "0", "40", " United-States", " <=50K"],
    ["50", " Self-emp", "83311", " Bachelors", "13", " Married-civ-spouse", " Exec",
     " Husband", " White", " Male", "0", "0", "13", " United-States", " >50K"],
    ["95", " Private", "2000000", " HS-grad", "9", " Divorced", " Other", " Unmarried",
     " Black", " Female", "0", "9000", "120", " Peru", " <=50K"],
]


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerows(rows)
        fh.write("\n")  # UCI's files end with a blank line
    return path


@pytest.mark.parametrize("header", [True, False])
def test_every_record_is_read_with_or_without_a_header(tmp_path, header):
    path = _write(tmp_path / "adult.csv", ([HEADER] if header else []) + RECORDS)
    X, y = load_adult(path)
    assert len(X) == len(y) == len(RECORDS)  # a headerless file lost its first record before
    np.testing.assert_array_equal(y, [0, 1, 0])
    # the first record's age and capital-gain, scaled with the fixed ranges
    assert X[0, 0] == pytest.approx((39 - 17) / (90 - 17))
    assert X[0, 3] == pytest.approx(2174 / 1e5)


def test_features_are_scaled_into_the_unit_box_and_one_hot_encoded(tmp_path):
    X, _ = load_adult(_write(tmp_path / "adult.csv", [HEADER] + RECORDS))
    n_numeric = len(_ADULT_NUMERIC)
    assert X.shape == (3, n_numeric + 7 + 2)
    assert X.min() >= 0.0 and X.max() <= 1.0
    np.testing.assert_array_equal(X[2, :n_numeric] == 1.0, [True, True, False, False, True,
                                                            True])  # clipped at the top
    # one marital status and one sex per record
    np.testing.assert_array_equal(X[:, n_numeric:n_numeric + 7].sum(axis=1), 1.0)
    np.testing.assert_array_equal(X[:, n_numeric + 7:].sum(axis=1), 1.0)
    assert np.linalg.norm(X, axis=1).max() <= np.sqrt(X.shape[1])
    X_numeric, _ = load_adult(tmp_path / "adult.csv", categorical=False)
    np.testing.assert_array_equal(X_numeric, X[:, :n_numeric])


def test_load_classification_falls_back_to_synthetic_rows_in_the_unit_box(tmp_path):
    X, y, name = load_classification(tmp_path / "missing.csv", n_samples=500)
    assert name == "synthetic" and X.shape == (500, 15) and set(y) == {0, 1}
    assert X.min() >= 0.0 and X.max() <= 1.0
    X_again, _, _ = load_classification(None, n_samples=500)
    np.testing.assert_array_equal(X, X_again)
    _write(tmp_path / "adult.csv", [HEADER] + RECORDS)
    assert load_classification(tmp_path / "adult.csv")[2] == "adult"


@pytest.mark.parametrize("header", [True, False])
def test_the_adult_frame_keeps_the_raw_columns(tmp_path, header):
    """The frame of the gallery's pipeline: the raw numbers and the stripped category strings
    (an unknown one kept, for the encoder to ignore), the labels as load_adult reads them."""
    pytest.importorskip("pandas")
    from skdptune.datasets import ADULT_FRAME_CATEGORIES, ADULT_FRAME_NUMERIC, load_adult_frame

    path = _write(tmp_path / "adult.csv", ([HEADER] if header else []) + RECORDS)
    X, y, name = load_adult_frame(path)
    assert name == "UCI Adult"
    assert list(X.columns) == [*ADULT_FRAME_NUMERIC, *ADULT_FRAME_CATEGORIES]
    assert X["age"].tolist() == [39, 50, 95] and X["hours-per-week"].tolist() == [40, 13, 120]
    assert X["workclass"].tolist() == ["State-gov", "Self-emp", "Private"]
    assert X["sex"].tolist() == ["Male", "Male", "Female"]
    np.testing.assert_array_equal(y, load_adult(path)[1])


def test_the_synthetic_adult_frame_stays_in_the_public_domains():
    pytest.importorskip("pandas")
    from skdptune.datasets import ADULT_FRAME_CATEGORIES, ADULT_FRAME_NUMERIC, load_adult_frame

    X, y, name = load_adult_frame(None, n_synthetic=500, random_state=3)
    assert name == "synthetic Adult look-alike" and X.shape == (500, 6) and len(y) == 500
    for column, (_, (low, high)) in ADULT_FRAME_NUMERIC.items():
        assert X[column].between(low, high).all()
    for column, (_, categories) in ADULT_FRAME_CATEGORIES.items():
        assert set(X[column]) <= set(categories)
    assert 0 < y.mean() < 1
