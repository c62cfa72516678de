"""Data for examples and benchmarks: the UCI Adult file when you have it, synthetic otherwise.

Nothing here downloads anything. Features are min-max scaled with fixed ranges, not with a
scaler fitted on the rows (which would have to be private itself). Where the ranges come from
matters, and not all of them are public knowledge about the population:

* documented: age from 17 (the extraction kept ages above 16) to 90 (the Current Population
  Survey's top code), education-num 1-16 (its 16 levels), hours-per-week from 1 (hours above
  0 kept) to 99 (top code), capital-gain from 0 to 1e5 (the top code 99,999);
* read off this file, rounded outward: fnlwgt (1e4 to 1.5e6; the file has 12,285 to
  1,484,705) and capital-loss (0 to 4,400; the file's largest is 4,356).

Adult is a public data set, so reading its ranges costs nothing here, and the examples and
benchmarks scale every method's rows alike. With private data you cannot do the same: choose the
ranges without looking (domain knowledge, a form's limits, a generous guess), or make the
scaling a private step of the pipeline (diffprivlib's ``StandardScaler`` with
public ``bounds``).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification

__all__ = ["ADULT_FRAME_CATEGORIES", "ADULT_FRAME_NUMERIC", "load_adult", "load_adult_frame",
           "load_classification"]

# (column position, lower bound, upper bound) of Adult's numeric attributes; the module's
# docstring says which ranges are documented and which were read off the file.
# Positions, not names: the shared copy swaps the capital-gain / capital-loss header names.
_ADULT_NUMERIC = (
    (0, 17.0, 90.0),        # age: documented
    (2, 1e4, 1.5e6),        # fnlwgt: the file's range, rounded outward
    (4, 1.0, 16.0),         # education-num: documented
    (10, 0.0, 1e5),         # capital-gain (column 11 in the file's 1-based order): top code
    (11, 0.0, 4.4e3),       # capital-loss: the file's largest value, rounded up
    (12, 1.0, 99.0),        # hours-per-week: documented
)
_MARITAL_STATUS = ("Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed",
                   "Married-spouse-absent", "Married-AF-spouse")
_SEX = ("Male", "Female")
_ADULT_CATEGORICAL = {5: _MARITAL_STATUS, 9: _SEX}  # by position: marital-status, sex

#: :func:`load_adult_frame`'s numeric columns (file position, and the documented range: public
#: bounds for a DP scaler) and categorical ones (file position, and the public category list)
ADULT_FRAME_NUMERIC = {"age": (0, (17, 90)), "education-num": (4, (1, 16)),
                       "hours-per-week": (12, (1, 99))}
ADULT_FRAME_CATEGORIES = {
    "workclass": (1, ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov",
                      "Local-gov", "State-gov", "Without-pay", "Never-worked")),
    "marital-status": (5, _MARITAL_STATUS),
    "sex": (9, _SEX),
}


def load_adult(path, *, categorical=True):
    """Load the UCI Adult training file as ``(X, y)`` with features in [0, 1].

    Parameters
    ----------
    path : str or Path
        Path to ``adult.csv`` (the UCI ``adult.data`` file, with or without a header row).
    categorical : bool, default=True
        Also one-hot encode marital status and sex with their public category lists.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Numeric attributes min-max scaled with fixed ranges (the module's docstring says where
        they come from) and clipped to [0, 1], followed by
        the one-hot columns. Every row has L2 norm at most ``sqrt(n_features)``.
    y : ndarray of shape (n_samples,)
        1 for income ``>50K``, else 0.
    """
    rows = _adult_rows(path)
    numeric = np.array([[float(r[i]) for i, _, _ in _ADULT_NUMERIC] for r in rows])
    lo = np.array([lo for _, lo, _ in _ADULT_NUMERIC])
    hi = np.array([hi for _, _, hi in _ADULT_NUMERIC])
    columns = [np.clip((numeric - lo) / (hi - lo), 0.0, 1.0)]
    if categorical:
        for position, categories in _ADULT_CATEGORICAL.items():
            values = np.array([r[position].strip() for r in rows])
            columns.append(np.stack([values == c for c in categories], axis=1).astype(float))
    y = np.array([r[14].strip().startswith(">50K") for r in rows], dtype=int)
    return np.hstack(columns), y


def load_adult_frame(path=None, *, n_synthetic=20000, random_state=0):
    """Adult's columns of :data:`ADULT_FRAME_NUMERIC` and :data:`ADULT_FRAME_CATEGORIES` as a
    pandas ``DataFrame``, raw (integers and strings, as in the file: a pipeline's steps encode
    them), or synthetic look-alikes when ``path`` is ``None`` or missing.

    Returns ``(X, y, name)``: ``y`` is 1 for income ``>50K``; ``name`` says which data it is.
    Needs pandas (the ``pandas`` extra).
    """
    import pandas as pd

    if path is not None and Path(path).exists():
        rows = _adult_rows(path)
        columns = {name: [int(float(r[i])) for r in rows]
                   for name, (i, _) in ADULT_FRAME_NUMERIC.items()}
        columns.update({name: [r[i].strip() for r in rows]
                        for name, (i, _) in ADULT_FRAME_CATEGORIES.items()})
        y = np.array([r[14].strip().startswith(">50K") for r in rows], dtype=int)
        return pd.DataFrame(columns), y, "UCI Adult"
    rng = np.random.default_rng(random_state)
    workclass, marital, sex = (list(c) for _, c in ADULT_FRAME_CATEGORIES.values())
    X = pd.DataFrame({
        "age": rng.integers(17, 91, n_synthetic),
        "education-num": rng.integers(1, 17, n_synthetic),
        "hours-per-week": np.clip(rng.normal(40, 12, n_synthetic), 1, 99).round(),
        "workclass": rng.choice(workclass[:6], n_synthetic),
        "marital-status": rng.choice(marital[:5], n_synthetic),
        "sex": rng.choice(sex, n_synthetic),
    })
    logit = (0.05 * (X["age"] - 40) + 0.35 * (X["education-num"] - 10)
             + 0.03 * (X["hours-per-week"] - 40)
             + 1.5 * (X["marital-status"] == "Married-civ-spouse") - 1.6)
    y = (rng.uniform(size=n_synthetic) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y.to_numpy(), "synthetic Adult look-alike"


def _adult_rows(path) -> list[list[str]]:
    """The records of an Adult file as lists of 15 strings: a header row, when the file has
    one (its age field is not a number), is left out; so are blank and malformed lines."""
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if len(r) == 15]
    if rows and not _is_number(rows[0][0]):
        rows = rows[1:]
    return rows


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_classification(path=None, *, n_samples=30000, random_state=0):
    """Adult when ``path`` exists, else a synthetic binary task of the same shape.

    Returns ``(X, y, name)``; features lie in [0, 1] in both cases so that the same public
    bounds (``bounds=(0, 1)``, ``data_norm=sqrt(n_features)``) apply.
    """
    if path is not None and Path(path).exists():
        X, y = load_adult(path)
        return X, y, "adult"
    X, y = make_classification(n_samples=n_samples, n_features=15, n_informative=6,
                               n_redundant=2, flip_y=0.1, class_sep=0.8,
                               random_state=random_state)
    X = np.clip((X + 4.0) / 8.0, 0.0, 1.0)  # fixed map of the generator's typical range
    return X, y, "synthetic"
