"""The model families of the family benchmark: each diffprivlib model beside the logistic
regression of the classification suite, with its untuned default, its grid and its box.

Every family is built on the suite's tasks (``benchmarks._tasks``) in their two variants: the
*easy* default sees every feature scaled to [0, 1] by its public range, the *hard* one the raw
features with a guessed scale. The families:

* ``nb`` -- diffprivlib ``GaussianNB``: the per-feature ``bounds`` (the features' box, which
  sizes the noise of the means and variances) and ``var_smoothing``;
* ``tree`` -- diffprivlib ``DecisionTreeClassifier`` (random splits drawn within ``bounds``,
  noisy leaves): ``max_depth`` and the upper end of ``bounds``;
* ``pipeline`` -- a ``Pipeline`` of diffprivlib's ``StandardScaler`` (a DP step: it releases
  noisy means and variances within its ``bounds``) and ``LogisticRegression``: ``C`` and
  ``data_norm`` (easy), ``C`` and the scaler's ``bounds`` (hard).

The grid holds the untuned default; DPGIBOSearchCV gets a box that holds it too (a box is
continuous: ``max_depth``, an integer, stays the default's, and the pipeline's box also tunes
how each fit's budget is shared between its two DP steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from diffprivlib.models import (
    DecisionTreeClassifier,
    GaussianNB,
    LogisticRegression,
    StandardScaler,
)
from sklearn.pipeline import Pipeline

from skdptune import ArrayRange, EpsilonSplit

from ._common import CLASSES

FAMILIES = ("nb", "tree", "pipeline")
#: the guessed upper end of every raw feature (hard variant): a scale no feature is known to have
HARD_GUESS = 1e4
#: hard variant: the features' upper end spans six decades around the guess
HARD_UPPERS = (1e1, 1e2, 1e4, 1e6)
#: easy variant: the features' upper end, clipping the largest values of the scaled features
EASY_UPPERS = (1.0, 0.5, 0.25, 0.1)
VAR_SMOOTHING = (1e-9, 1e-3, 1e-1)
DEPTHS = (2, 3, 5, 8, 12)
C_VALUES = (1e-2, 1e-1, 1.0, 1e1, 1e2)


@dataclass(frozen=True)
class Family:
    """A model family on one variant of a task with ``d`` features."""

    name: str
    variant: str
    d: int

    def estimator(self):
        """The untuned default (its epsilons are set by whoever fits it)."""
        p = self.default()
        if self.name == "nb":
            return GaussianNB(**p)
        if self.name == "tree":
            return DecisionTreeClassifier(classes=CLASSES, **p)
        scaler = StandardScaler(bounds=p.pop("scaler__bounds"))
        return Pipeline([("scaler", scaler),
                         ("lr", LogisticRegression(C=p["lr__C"], data_norm=p["lr__data_norm"]))])

    def _upper(self) -> float:
        return 1.0 if self.variant == "easy" else HARD_GUESS

    def default(self) -> dict:
        """The untuned default's parameters: diffprivlib's defaults, and the variant's box."""
        box = (0.0, self._upper())
        if self.name == "nb":
            return {"bounds": box, "var_smoothing": 1e-9}
        if self.name == "tree":
            return {"bounds": box, "max_depth": 5}
        # standardised features of a row have a norm of about sqrt(d)
        return {"scaler__bounds": box, "lr__C": 1.0, "lr__data_norm": math.sqrt(self.d)}

    def grid(self) -> dict:
        """The candidates (the default among them)."""
        uppers = EASY_UPPERS if self.variant == "easy" else HARD_UPPERS
        boxes = [(0.0, u) for u in sorted({*uppers, self._upper()})]
        if self.name == "nb":
            return {"bounds": boxes, "var_smoothing": list(VAR_SMOOTHING)}
        if self.name == "tree":
            return {"bounds": boxes, "max_depth": list(DEPTHS)}
        if self.variant == "easy":
            root = math.sqrt(self.d)
            return {"lr__C": list(C_VALUES), "lr__data_norm": [root / 2, root, 2 * root, 4 * root]}
        return {"lr__C": list(C_VALUES), "scaler__bounds": boxes}

    def box(self) -> dict:
        """DPGIBOSearchCV's box (holding the default)."""
        uppers = EASY_UPPERS if self.variant == "easy" else HARD_UPPERS
        low, high = min(uppers), max(max(uppers), self._upper())
        bounds = ArrayRange(low=[0.0, low], high=[low / 2, high], log=[False, True],
                            as_tuple=True)
        if self.name == "nb":
            return {"bounds": bounds, "var_smoothing": (1e-9, 1e-1, "log")}
        if self.name == "tree":
            return {"bounds": bounds}
        root = math.sqrt(self.d)
        tuned = ({"lr__data_norm": (root / 2, 4 * root, "log")} if self.variant == "easy"
                 else {"scaler__bounds": bounds})
        return {"lr__C": (min(C_VALUES), max(C_VALUES), "log"), **tuned,
                "budget": EpsilonSplit(["scaler__epsilon", "lr__epsilon"])}
