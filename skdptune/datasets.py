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

__all__ = ["load_adult", "load_classification"]

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
_ADULT_CATEGORICAL = {
    5: ("Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse"),                     # marital-status
    9: ("Male", "Female"),                                                 # sex
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
