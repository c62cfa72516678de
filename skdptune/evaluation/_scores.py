"""Bounded utilities: scores mapped to [0, 1] so that their sensitivity is known.

The sensitivity arguments that rely on them are in docs/selection.md (section 1, ``1/k`` over
``k`` partitions) and docs/random_search.md (section 2.1, ``1/m`` over ``m`` validation rows).

Two kinds, for two kinds of evaluators:

* :class:`BoundedScorer` -- one score of a fitted model on a set of rows, ``s``, mapped to the
  utility ``u = clip((s - lo) / (hi - lo), 0, 1)``. Used where the *sensitivity comes from the
  partitioning* (subsample-and-aggregate: one replaced record changes one partition's utility,
  by at most 1). Built by :func:`check_bounded_scorer`.
* :class:`PerExampleScore` -- one utility in ``[0, 1]`` *per validation row*. Their mean over
  ``m`` rows has sensitivity ``1 / m`` under replace-one (one replaced row moves one term by at
  most 1), which is what noisy validation scores (randomized repetition) need. The same objects
  give per-example *losses* in ``[0, L]`` for DP-GIBO: ``loss = (1 - u) * L`` with
  ``L = loss_bound`` -- one way to do it, the utilities are the primitive. Built by
  :func:`check_per_example_score`.
* :class:`RankingScore` -- ``roc_auc`` / ``average_precision`` of a binary classifier on the
  whole validation part, in an unnormalised form whose replace-one sensitivity is bounded
  without the (private) class counts: ``(m - 1) / floor(m**2 / 4)`` and ``(2 H_m - 1) / m``.
  Randomized repetition only (DP-GIBO needs per-example losses). Built, with the per-example
  scores, by :func:`check_validation_score`; docs/random_search.md derives the bounds.
* :class:`ConfusionScore` -- ``balanced_accuracy`` / binary ``f1`` of the predicted labels on the
  whole validation part, times a function of its (private) class counts that is the same for
  every candidate: the ranking is the metric's, the sensitivity ``O(1/m)``. Randomized
  repetition only; docs/random_search.md section 2.7 derives the bounds.

Every value these objects return is an exact function of private data: callers feed it to a
private mechanism and never store, print or log it. Nothing here logs or warns with a value.
A non-finite score (NaN) becomes the minimum utility 0, like a failed fit with the default
``error_score``.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.metrics import check_scoring, get_scorer
from sklearn.utils import check_scalar

__all__ = [
    "BoundedScorer",
    "check_bounded_scorer",
    "PerExampleScore",
    "AccuracyScore",
    "SquaredErrorScore",
    "AbsoluteErrorScore",
    "LogLossScore",
    "SquaredDistanceScore",
    "RankingScore",
    "ConfusionScore",
    "check_per_example_score",
    "check_validation_score",
    "raw_scorer_name",
    "split_scoring",
    "DEFAULT_LOG_LOSS_CLIP",
]

_UNIT = (0.0, 1.0)
# Scorers whose range is known. r2 and d2 are at most 1 and unbounded below: they are clipped
# at 0 (a model worse than predicting the mean has the minimum utility).
_DEFAULT_BOUNDS: dict[str, tuple[float, float]] = {
    name: _UNIT
    for name in (
        "accuracy",
        "balanced_accuracy",
        "top_k_accuracy",
        "average_precision",
        "f1",
        "f1_macro",
        "f1_micro",
        "f1_weighted",
        "f1_samples",
        "precision",
        "precision_macro",
        "precision_micro",
        "precision_weighted",
        "precision_samples",
        "recall",
        "recall_macro",
        "recall_micro",
        "recall_weighted",
        "recall_samples",
        "jaccard",
        "jaccard_macro",
        "jaccard_micro",
        "jaccard_weighted",
        "jaccard_samples",
        "roc_auc",
        "roc_auc_ovr",
        "roc_auc_ovo",
        "roc_auc_ovr_weighted",
        "roc_auc_ovo_weighted",
        "r2",
        "d2_absolute_error_score",
        "rand_score",
        "homogeneity_score",
        "completeness_score",
        "v_measure_score",
        "normalized_mutual_info_score",
        "fowlkes_mallows_score",
    )
}
_DEFAULT_BOUNDS["matthews_corrcoef"] = (-1.0, 1.0)

#: Default clip ``L`` of :class:`LogLossScore`: ``log(100)``, i.e. a predicted probability of the
#: true class below 1 % counts as maximally wrong. The noise on a mean of ``m`` utilities has
#: scale ``1/m`` on the utility scale, i.e. ``L/m`` in log-loss units: a smaller ``L`` gives more
#: signal per unit of noise, a larger one distinguishes more among confident mistakes.
DEFAULT_LOG_LOSS_CLIP = math.log(100.0)


def _to_unit(score: Any, lo: float, hi: float) -> float:
    value = float(score)
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, (value - lo) / (hi - lo)))


class BoundedScorer:
    """A scikit-learn scorer mapped to the utility scale ``[0, 1]``.

    ``u = clip((s - lo) / (hi - lo), 0, 1)`` where ``s = scorer(estimator, X, y)``; a NaN score
    gives ``u = 0``. Picklable when ``scorer`` is (scikit-learn's scorers are).

    Parameters
    ----------
    scorer : callable
        ``scorer(estimator, X, y[, sample_weight=..., **metadata]) -> float``.
    lo, hi : float
        Finite, ``lo < hi``: scores at or below ``lo`` give 0, at or above ``hi`` give 1.
    name : str
        A label for reports.

    Attributes
    ----------
    scorer, lo, hi, name
        As given (``lo`` and ``hi`` as floats).
    """

    def __init__(self, scorer: Callable, lo: float, hi: float, name: str) -> None:
        self.lo, self.hi = _check_score_bounds((lo, hi))
        self.scorer = scorer
        self.name = name
        self.takes_y = _takes_y(scorer)

    @property
    def reads_predictions(self) -> bool:
        """Whether the score reads ``estimator.predict(X)`` alone (:meth:`of_predictions`)."""
        return getattr(self.scorer, "reads_predictions", False)

    def of_predictions(self, predictions: Any, y: Any, **score_params: Any) -> float:
        """``self(estimator, X, y, **score_params)`` from ``predictions =
        estimator.predict(X)``, for a scorer that :attr:`reads_predictions`."""
        if not self.reads_predictions:
            raise TypeError(f"{self!r} reads more than the predictions.")
        return _to_unit(self.scorer.of_predictions(predictions, y, **score_params),
                        self.lo, self.hi)

    def __call__(self, estimator: Any, X: Any, y: Any = None, **score_params: Any) -> float:
        """Utility in ``[0, 1]`` of the fitted ``estimator`` on ``(X, y)``; private: never store.

        Without ``y`` (unsupervised estimators) a two-argument scorer is called as
        ``scorer(estimator, X)``, as scikit-learn's searches do; a scorer that takes ``y`` gets
        ``y=None``. ``score_params`` (e.g. ``sample_weight``, already restricted to the rows of
        ``X``) are passed to the scorer as keyword arguments; whatever they are, the utility
        is clipped to ``[0, 1]``.
        """
        if y is None and not score_params and not self.takes_y:
            score = self.scorer(estimator, X)
        else:
            score = self.scorer(estimator, X, y, **score_params)
        if isinstance(score, dict):
            raise TypeError(
                "the scorer returned a dict of metrics: a private search selects by one metric. "
                "Instead, pass scoring as a dict of single-metric scorers and name the "
                "selecting one in refit='<name>'.")
        return _to_unit(score, self.lo, self.hi)

    def __repr__(self) -> str:
        return f"BoundedScorer(name={self.name!r}, lo={self.lo!r}, hi={self.hi!r})"


def _takes_y(scorer: Callable) -> bool:
    """Whether ``scorer`` accepts a third positional argument (``y``); True when unknown."""
    try:
        parameters = inspect.signature(scorer).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def _check_score_bounds(score_bounds: Any) -> tuple[float, float]:
    try:
        lo, hi = score_bounds
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(
            f"score_bounds must be a pair (lo, hi) of finite numbers; got {score_bounds!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"score_bounds must be finite with lo < hi; got {score_bounds!r}.")
    return lo, hi


def _accuracy(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
    """Accuracy without scikit-learn's per-call validation (thousands of tiny calls per search).

    Same value as ``get_scorer("accuracy")`` for single-output labels, which is what the
    searches evaluate; ``tests/evaluation/test_scores.py`` checks the equality.
    """
    correct = np.asarray(estimator.predict(X)) == np.asarray(y)
    return float(np.average(correct, weights=sample_weight))


class _TargetRangeScore:
    """A regression metric of predictions clipped into the target's declared range.

    ``y`` lies in ``[lower, upper]`` (the search's domain), so clipping a prediction into it
    never moves it away from its target: every error is at most what it was, and at most
    ``upper - lower``. That bounds the error metrics on the range's scale without reading the
    data (:data:`_RANGE_METRICS`). Picklable; the value is private (never store it).
    """

    def __init__(self, name: str, lower: float, upper: float) -> None:
        self.name, self.lower, self.upper = name, float(lower), float(upper)

    def bounds(self) -> tuple[float, float]:
        """The metric's range when every prediction and target lies in the target range."""
        width = self.upper - self.lower
        return {"r2": _UNIT, "neg_mean_squared_error": (-width * width, 0.0),
                "neg_root_mean_squared_error": (-width, 0.0),
                "neg_mean_absolute_error": (-width, 0.0)}[self.name]

    #: the value reads ``estimator.predict(X)`` alone (:meth:`of_predictions`)
    reads_predictions = True

    def __call__(self, estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
        return self.of_predictions(estimator.predict(X), y, sample_weight=sample_weight)

    def of_predictions(self, predictions: Any, y: Any, sample_weight: Any = None) -> float:
        """The value of ``predictions = estimator.predict(X)`` against ``y``."""
        predicted = np.clip(np.asarray(predictions, dtype=float), self.lower, self.upper)
        target = np.asarray(y, dtype=float)
        return float(_RANGE_METRICS[self.name](target, _shaped_like(predicted, target),
                                               sample_weight=sample_weight))

    def __repr__(self) -> str:
        return f"{self.name} (predictions clipped to [{self.lower:g}, {self.upper:g}])"


# The regression metrics of the target-range scores, without scikit-learn's per-call validation
# (thousands of fits on partitions of ~100 rows: r2_score's checks cost 0.2 ms a call, more
# than the fit). scikit-learn's formulas (uniform average over outputs; r2 of a constant target
# is 1 when predicted exactly, else 0; r2 of fewer than two rows is NaN); the same values up
# to rounding (tests/evaluation/test_scores.py), and the same refusals of rows they refuse --
# lengths that differ, non-finite values -- as a ValueError.


def _metric_arrays(y_true, y_pred, sample_weight):
    """``(y_true, y_pred, weights)`` as 2-D float columns and a weight column (or 1.0)."""
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    y_true = y_true.reshape(len(y_true), -1) if y_true.ndim else y_true.reshape(1, 1)
    y_pred = y_pred.reshape(len(y_pred), -1) if y_pred.ndim else y_pred.reshape(1, 1)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred have shapes {y_true.shape} and {y_pred.shape}.")
    if not (np.isfinite(y_true).all() and np.isfinite(y_pred).all()):
        raise ValueError("Input contains NaN or infinity.")
    if sample_weight is None:
        return y_true, y_pred, None
    weights = np.asarray(sample_weight, dtype=float)
    if weights.shape != (len(y_true),) or not np.isfinite(weights).all():
        raise ValueError("sample_weight must be finite, one weight per row.")
    return y_true, y_pred, weights


def _r2(y_true, y_pred, sample_weight=None):
    y_true, y_pred, weights = _metric_arrays(y_true, y_pred, sample_weight)
    if len(y_true) < 2:
        return float("nan")
    w = 1.0 if weights is None else weights[:, None]
    numerator = (w * (y_true - y_pred) ** 2).sum(axis=0)
    centre = np.average(y_true, axis=0, weights=weights)
    denominator = (w * (y_true - centre) ** 2).sum(axis=0)
    scores = np.ones(y_true.shape[1])
    valid = (denominator != 0) & (numerator != 0)
    scores[valid] = 1 - numerator[valid] / denominator[valid]
    scores[(numerator != 0) & (denominator == 0)] = 0.0
    return float(np.average(scores))


def _squared_errors(y_true, y_pred, sample_weight):
    y_true, y_pred, weights = _metric_arrays(y_true, y_pred, sample_weight)
    return np.average((y_true - y_pred) ** 2, axis=0, weights=weights)


def _neg_mean_squared_error(y_true, y_pred, sample_weight=None):
    return -float(np.average(_squared_errors(y_true, y_pred, sample_weight)))


def _neg_root_mean_squared_error(y_true, y_pred, sample_weight=None):
    return -math.sqrt(np.average(_squared_errors(y_true, y_pred, sample_weight)))


def _neg_mean_absolute_error(y_true, y_pred, sample_weight=None):
    y_true, y_pred, weights = _metric_arrays(y_true, y_pred, sample_weight)
    return -float(np.average(np.average(np.abs(y_pred - y_true), axis=0, weights=weights)))


#: the regression scores bounded on the target range's scale (:class:`_TargetRangeScore`);
#: r2 is at most 1 and clipped at 0 like scikit-learn's own r2 here
_RANGE_METRICS: dict[str, Callable] = {
    "r2": _r2,
    "neg_mean_squared_error": _neg_mean_squared_error,
    "neg_root_mean_squared_error": _neg_root_mean_squared_error,
    "neg_mean_absolute_error": _neg_mean_absolute_error,
}


def check_bounded_scorer(scoring: Any, score_bounds: Any, estimator: Any,
                         target_range: tuple[float, float] | None = None) -> BoundedScorer:
    """Resolve ``scoring`` and ``score_bounds`` into a :class:`BoundedScorer`.

    Parameters
    ----------
    scoring : None, str or callable
        ``None``: the estimator's default score -- accuracy for classifiers, r2 for regressors
        (both with bounds ``(0, 1)``, so r2 is clipped to ``[0, 1]``); other estimators need
        ``score_bounds``. A string is a scikit-learn scorer name: accuracy, balanced_accuracy,
        top_k_accuracy, average_precision, f1*, precision*, recall*, jaccard*, roc_auc*, r2,
        d2_absolute_error_score and the [0, 1] clustering indices have bounds ``(0, 1)``,
        matthews_corrcoef ``(-1, 1)``; with a declared target range, r2,
        neg_mean_squared_error, neg_root_mean_squared_error and neg_mean_absolute_error score
        predictions clipped into it, on its scale (``(-(upper - lower)**2, 0)`` for the squared
        error, ``(-(upper - lower), 0)`` for the others); every other name and every callable
        need ``score_bounds``. One metric only (no dict or list).
    score_bounds : (float, float) or None
        ``(lo, hi)``, finite, ``lo < hi``. Overrides the default bounds.
    estimator : estimator
        The (unfitted) estimator, used when ``scoring`` is None.
    target_range : (float, float) or None
        A regressor's declared target range (:func:`~skdptune.public.resolve_target_range`).

    Returns
    -------
    BoundedScorer

    Raises
    ------
    ValueError
        ``score_bounds`` is needed but missing, or invalid; or ``scoring`` is not one metric.
    """
    bounds = None if score_bounds is None else _check_score_bounds(score_bounds)
    if scoring is None and target_range is not None:
        scoring = "r2"
    if target_range is not None and isinstance(scoring, str) and scoring in _RANGE_METRICS:
        scorer = _TargetRangeScore(scoring, *target_range)
        name, default = scoring, scorer.bounds()
    elif scoring is None:
        if is_classifier(estimator):
            scorer, name, default = _accuracy, "accuracy", _UNIT
        elif is_regressor(estimator):
            scorer, name, default = get_scorer("r2"), "r2", _UNIT
        else:
            scorer, name, default = check_scoring(estimator), "score", None
    elif scoring == "accuracy":
        scorer, name, default = _accuracy, scoring, _UNIT
    elif isinstance(scoring, str):
        scorer, name, default = get_scorer(scoring), scoring, _DEFAULT_BOUNDS.get(scoring)
    elif callable(scoring):
        scorer, default = scoring, None
        name = getattr(scoring, "__name__", None) or repr(scoring)
    else:
        raise ValueError(
            f"scoring must be None, a scorer name or a callable (one metric); got {scoring!r}."
        )
    if bounds is None:
        bounds = default
    if bounds is None:
        what = f"scoring={scoring!r}" if scoring is not None else "the estimator's score method"
        raise ValueError(
            f"score_bounds=(lo, hi) is required for {what} because its range is unbounded or "
            f"unknown; the sensitivity argument needs scores in a known range."
        )
    return BoundedScorer(scorer, bounds[0], bounds[1], name)


# --------------------------------------------------------------------------------------------
# Per-example scores
# --------------------------------------------------------------------------------------------


def _check_clip(clip: Any) -> float:
    # the searches' parameter is score_clip: messages name it (the search's gradient clip of
    # DP-GIBO is another parameter, `clip`)
    check_scalar(clip, "score_clip", numbers.Real, min_val=0, include_boundaries="neither")
    if not math.isfinite(clip):
        raise ValueError(f"score_clip must be finite, got {clip}.")
    return float(clip)


def _predictions_like(estimator: Any, X: Any, y: np.ndarray) -> np.ndarray:
    return _shaped_like(np.asarray(estimator.predict(X)), y)


def _shaped_like(predictions: np.ndarray, y: np.ndarray) -> np.ndarray:
    return predictions.reshape(y.shape) if predictions.size == y.size else predictions


def _bounded(utilities) -> np.ndarray:
    """Utilities as floats in ``[0, 1]``, a NaN counting as 0 (``fmax``: a NaN gives 0)."""
    return np.minimum(np.fmax(np.asarray(utilities, dtype=float), 0.0), 1.0)


class PerExampleScore:
    """Per-example utilities in ``[0, 1]`` (higher is better); base class.

    Calling the object returns one utility per row of ``X``. Under replace-one, the mean over
    ``m`` rows has sensitivity ``(hi - lo) / m = 1 / m`` (:meth:`sensitivity_of_mean`).
    :meth:`losses` gives the same information as losses in ``[0, loss_bound]``.

    Attributes
    ----------
    name : str
        ``"accuracy"``, ``"squared_error"``, ``"absolute_error"`` or ``"log_loss"``.
    bounds : (float, float)
        ``(0.0, 1.0)``, the range of each per-example utility.
    loss_bound : float
        ``L``: ``losses = (1 - utilities) * L`` lie in ``[0, L]``.
    """

    name = "per_example"
    bounds = _UNIT
    loss_bound = 1.0

    #: whether the utilities read ``estimator.predict(X)`` alone (:meth:`of_predictions`)
    reads_predictions = False

    def __call__(self, estimator: Any, X: Any, y: Any = None) -> np.ndarray:
        """Utilities of the fitted ``estimator`` on each row: private, never store them.

        ``y`` is ``None`` for unsupervised estimators (called as ``score(estimator, X)``)."""
        return _bounded(self._utilities(estimator, X, np.asarray(y)))

    def of_predictions(self, predictions: np.ndarray, y: Any) -> np.ndarray:
        """``self(estimator, X, y)`` from ``predictions = estimator.predict(X)``, for a score
        that :attr:`reads_predictions` (the batched runs predict without ``predict``'s
        checks of rows they have checked once). PRIVATE, as the utilities."""
        if not self.reads_predictions:
            raise TypeError(f"{self!r} reads more than the predictions.")
        y = np.asarray(y)
        return _bounded(self._of_predictions(_shaped_like(np.asarray(predictions), y), y))

    def losses(self, estimator: Any, X: Any, y: Any) -> np.ndarray:
        """Per-example losses ``(1 - u) * loss_bound`` in ``[0, loss_bound]`` (for DP-GIBO)."""
        return (1.0 - self(estimator, X, y)) * self.loss_bound

    def sensitivity_of_mean(self, m: int) -> float:
        """Replace-one sensitivity of the mean utility over ``m`` rows: ``(hi - lo) / m``."""
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"m must be a positive int, got {m!r}.")
        return (self.bounds[1] - self.bounds[0]) / int(m)

    def _utilities(self, estimator: Any, X: Any, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class AccuracyScore(PerExampleScore):
    """``u = 1`` when the prediction is correct, else ``0`` (all outputs, for multi-output)."""

    name = "accuracy"
    reads_predictions = True

    def _utilities(self, estimator: Any, X: Any, y: np.ndarray) -> np.ndarray:
        return self._of_predictions(_predictions_like(estimator, X, y), y)

    def _of_predictions(self, predictions: np.ndarray, y: np.ndarray) -> np.ndarray:
        correct = predictions == y
        return correct.all(axis=1) if correct.ndim > 1 else correct


class _ClippedErrorScore(PerExampleScore):
    """``u = 1 - min(e, clip) / clip`` for a per-example error ``e`` in the target's units.

    With a declared target range ``(lower, upper)`` (a regressor's public bounds on ``y``, the
    search's domain) the predictions are clipped into it first -- which never moves one away
    from its target -- and ``clip`` defaults to the largest error left, that of a prediction
    at one end of the range for a target at the other.
    """

    def __init__(self, *, clip: float | None = None,
                 target_range: tuple[float, float] | None = None) -> None:
        self.target_range = None if target_range is None else tuple(map(float, target_range))
        if clip is None:
            if self.target_range is None:
                raise ValueError(f"scoring={self.name!r} needs score_clip=c (in the target's "
                                 "units) or a declared target range.")
            clip = self._error(np.array([self.target_range[1] - self.target_range[0]]))[0]
        self.clip = _check_clip(float(clip))
        self.loss_bound = self.clip

    def _error(self, residual: np.ndarray) -> np.ndarray:
        """The per-example error of ``residual`` (the score's own array: may be overwritten)."""
        raise NotImplementedError

    def _utilities(self, estimator: Any, X: Any, y: np.ndarray) -> np.ndarray:
        return self._of_predictions(_predictions_like(estimator, X, y), y)

    def _of_predictions(self, predictions: np.ndarray, y: np.ndarray) -> np.ndarray:
        predicted = np.asarray(predictions, dtype=float)  # read, not modified
        if self.target_range is not None:
            predicted = np.clip(predicted, *self.target_range)
        error = self._error(np.asarray(y, dtype=float) - predicted)  # a new array: in place
        if error.ndim > 1:  # multi-output: mean error over the outputs
            error = error.mean(axis=1)
        np.fmin(error, self.clip, out=error)  # fmin: NaN counts as clip
        np.divide(error, self.clip, out=error)
        return np.subtract(1.0, error, out=error)

    def __repr__(self) -> str:
        extra = "" if self.target_range is None else f", target_range={self.target_range!r}"
        return f"{type(self).__name__}(clip={self.clip!r}{extra})"


class SquaredErrorScore(_ClippedErrorScore):
    """``u = 1 - min((y - y_hat)**2, clip) / clip``; ``clip`` in squared target units."""

    name = "squared_error"
    reads_predictions = True

    def _error(self, residual: np.ndarray) -> np.ndarray:
        return np.square(residual, out=residual)


class AbsoluteErrorScore(_ClippedErrorScore):
    """``u = 1 - min(|y - y_hat|, clip) / clip``; ``clip`` in target units."""

    name = "absolute_error"
    reads_predictions = True

    def _error(self, residual: np.ndarray) -> np.ndarray:
        return np.abs(residual, out=residual)


class LogLossScore(PerExampleScore):
    """``u = 1 - min(-log p_y, clip) / clip`` with ``p_y`` the predicted probability of the label.

    Needs ``predict_proba`` and ``classes_``. A label the model does not know has ``p_y = 0``,
    hence ``u = 0``. Default ``clip`` is :data:`DEFAULT_LOG_LOSS_CLIP` (``log(100)``).
    """

    name = "log_loss"

    def __init__(self, *, clip: float = DEFAULT_LOG_LOSS_CLIP) -> None:
        self.clip = _check_clip(clip)
        self.loss_bound = self.clip

    def _utilities(self, estimator: Any, X: Any, y: np.ndarray) -> np.ndarray:
        proba = np.asarray(estimator.predict_proba(X), dtype=float)
        column = {label: j for j, label in enumerate(np.asarray(estimator.classes_).tolist())}
        index = np.array([column.get(label, -1) for label in y.tolist()], dtype=int)
        known = index >= 0
        p_true = np.zeros(len(index))
        p_true[known] = proba[np.flatnonzero(known), index[known]]
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = -np.log(p_true)
        return 1.0 - np.fmin(loss, self.clip) / self.clip  # fmin: NaN counts as clip

    def __repr__(self) -> str:
        return f"LogLossScore(clip={self.clip!r})"


class SquaredDistanceScore(_ClippedErrorScore):
    """Clustering: ``u = 1 - min(d**2, clip) / clip`` with ``d`` the distance of the row to the
    nearest cluster centre (``transform``); ``clip`` in squared feature units; ``y`` is ignored.

    The per-example form of k-means' inertia (its ``score`` is ``-sum(d**2)``): the mean over
    ``m`` rows has sensitivity ``1/m`` like every per-example score.
    """

    name = "squared_distance"

    def _utilities(self, estimator: Any, X: Any, y: Any) -> np.ndarray:
        distances = np.asarray(estimator.transform(X), dtype=float)
        error = np.min(distances, axis=1) ** 2
        return 1.0 - np.fmin(error, self.clip) / self.clip  # fmin: NaN counts as clip


_PER_EXAMPLE = {
    "accuracy": AccuracyScore,
    "squared_error": SquaredErrorScore,
    "absolute_error": AbsoluteErrorScore,
    "log_loss": LogLossScore,
    "squared_distance": SquaredDistanceScore,
}
_CLIPPED = ("squared_error", "absolute_error", "squared_distance")
_TARGET_ERRORS = ("squared_error", "absolute_error")
_RANKING = ("roc_auc", "average_precision")


def _is_clusterer(estimator: Any) -> bool:
    try:
        from sklearn.base import is_clusterer  # scikit-learn >= 1.6
    except ImportError:
        return getattr(estimator, "_estimator_type", None) == "clusterer"
    return is_clusterer(estimator)


def _ranking_values(estimator: Any, X: Any) -> np.ndarray:
    """Scores that rank the rows by how positive they are (decision_function or P(class 1))."""
    if hasattr(estimator, "decision_function"):
        values = np.asarray(estimator.decision_function(X), dtype=float)
    else:
        values = np.asarray(estimator.predict_proba(X), dtype=float)[:, 1]
    # a NaN ranks lowest; the bounds below hold for any score that depends on its row only
    return np.nan_to_num(values.reshape(-1), nan=-np.inf)


class RankingScore:
    """``roc_auc`` or ``average_precision`` of a binary classifier on the whole validation part.

    Both metrics divide by class counts (``m+ m-`` and ``m+``) that are private and that a
    replaced row can change (its label may change), so their replace-one sensitivity over all
    datasets with ``m`` rows is the whole range. Their unnormalised forms are bounded:

    * ``roc_auc``: ``U`` = the number of (positive, negative) pairs ranked correctly (ties
      count 1/2); ``u = U / floor(m**2 / 4)`` in [0, 1], sensitivity ``(m - 1) / floor(m**2/4)``
      (about ``4/m``);
    * ``average_precision``: ``S`` = the sum over the positive rows of the precision at their
      score; ``u = S / m`` in [0, 1], sensitivity ``(2 H_m - 1) / m`` with ``H_m`` the m-th
      harmonic number (about ``(2 ln m + 0.15) / m``).

    On a fixed validation part the class counts are the same for every candidate, so ``u`` is
    the metric times a constant: it ranks candidates exactly as the metric does. The proofs are
    in docs/random_search.md. The positive class is ``classes_[1]`` of the fitted model (the
    declared label set, sorted). Calling the object returns per-row *contributions* whose mean
    is ``u`` (not per-example utilities: they are not each in [0, 1]); private, never store.

    Parameters
    ----------
    name : {"roc_auc", "average_precision"}
    """

    bounds = _UNIT

    def __init__(self, name: str) -> None:
        if name not in _RANKING:
            raise ValueError(f"scoring must be one of {_RANKING} for a RankingScore; got {name!r}.")
        self.name = name

    def __call__(self, estimator: Any, X: Any, y: Any) -> np.ndarray:
        """Per-row contributions whose mean over the ``m`` rows is ``u``: private."""
        values = _ranking_values(estimator, X)
        positive = np.asarray(y) == np.asarray(estimator.classes_)[1]
        m = len(values)
        contributions = np.zeros(m)
        if self.name == "roc_auc":
            if m < 2:
                return contributions
            negatives = np.sort(values[~positive])
            below = np.searchsorted(negatives, values[positive], side="left")
            tied = np.searchsorted(negatives, values[positive], side="right") - below
            contributions[positive] = (below + 0.5 * tied) * m / (m * m // 4)
            return contributions
        # precision at each positive row's score: rows (positives) with a score >= it
        ordered = np.sort(values)
        ordered_pos = np.sort(values[positive])
        at_least = m - np.searchsorted(ordered, values[positive], side="left")
        pos_at_least = positive.sum() - np.searchsorted(ordered_pos, values[positive],
                                                        side="left")
        contributions[positive] = pos_at_least / at_least
        return contributions

    def sensitivity_of_mean(self, m: int) -> float:
        """Replace-one sensitivity of ``u`` (the mean of the contributions) over ``m`` rows."""
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"m must be a positive int, got {m!r}.")
        m = int(m)
        if self.name == "roc_auc":
            # m = 1: u is always 0, any positive sensitivity is valid
            return (m - 1) / (m * m // 4) if m >= 2 else 1.0
        harmonic = math.fsum(1.0 / k for k in range(1, m + 1))
        return min(1.0, (2.0 * harmonic - 1.0) / m)

    def __repr__(self) -> str:
        return f"RankingScore({self.name!r})"


# --------------------------------------------------------------------------------------------
# Scores of the predicted labels on the whole validation part (imbalance-aware selection)
# --------------------------------------------------------------------------------------------

_CONFUSION = ("balanced_accuracy", "f1")


class ConfusionScore:
    """``balanced_accuracy`` or binary ``f1`` of a classifier's predicted labels on the whole
    validation part, in a form whose replace-one sensitivity needs no (private) class count.

    Both metrics divide by class counts of the part, so one replaced row can move them by
    about ``1 / n_c`` of the rarest class -- the whole range when a class has one row. On a
    fixed part the counts are the same for every candidate, so the metric times a function of
    them ranks the candidates exactly as the metric does; that function is chosen to make the
    sensitivity ``O(1/m)`` (``n_c`` rows of declared class ``c``, ``TP_c`` of them predicted
    correctly, ``C`` declared classes, ``m`` rows):

    * ``balanced_accuracy``, ``C = 2``: ``u = (TP_0 n_1 + TP_1 n_0) / (2 floor(m**2 / 4))``
      ``= BA * n_0 n_1 / floor(m**2 / 4)``, sensitivity ``(m - 1) / floor(m**2 / 4)`` (about
      ``4/m``; attained);
    * ``balanced_accuracy``, ``C >= 3``: ``u = (min_c n_c / m) * sum_c TP_c / n_c``
      ``= BA * C min_c n_c / m``, sensitivity ``(C + 1) / m``;
    * ``f1`` (positive class ``pos_label``, ``P`` positive rows, ``P_hat`` predicted
      positive): ``u = 2 TP P / (m (P + P_hat)) = F1 * P / m``, sensitivity ``2 / m``.

    ``u`` lies in [0, 1]; an empty class makes it 0 (balanced accuracy is then undefined). The
    proofs, the brute-force checks and the floored forms these replace are in
    docs/random_search.md section 2.7. Calling the object returns per-row *contributions* whose
    mean is ``u`` (not per-example utilities: they are not each in [0, 1]); private, never
    store them.

    Parameters
    ----------
    name : {"balanced_accuracy", "f1"}
    classes : array-like
        The declared label set, sorted (``classes_`` of the fitted models); two labels for
        ``"f1"``.
    pos_label : label, default=1
        The positive class of ``"f1"``, one of ``classes``: 1, as in scikit-learn's ``f1``
        scorer (which the search's ``score`` uses).
    """

    bounds = _UNIT

    def __init__(self, name: str, classes: Any, pos_label: Any = 1) -> None:
        if name not in _CONFUSION:
            raise ValueError(f"scoring must be one of {_CONFUSION} for a ConfusionScore; got "
                             f"{name!r}.")
        self.name = name
        self.classes = np.asarray(classes)
        if len(self.classes) < 2 or (name == "f1" and len(self.classes) != 2):
            raise ValueError(
                f"scoring={name!r} is bounded here for a classifier with "
                f"{'two' if name == 'f1' else 'two or more'} declared classes (got "
                f"{len(self.classes)})" + ("; a multiclass average of F1s is not offered. Use "
                                            "scoring='balanced_accuracy'." if name == "f1"
                                            else "."))
        if name == "f1" and pos_label not in self.classes.tolist():
            raise ValueError(
                f"scoring='f1' takes pos_label={pos_label!r} as the positive class (as "
                f"scikit-learn's f1 scorer does), which is not among the declared classes "
                f"{self.classes.tolist()!r}; declare labels with {pos_label!r} as the positive "
                "one (e.g. 0 and 1).")
        self.pos_label = pos_label

    def __call__(self, estimator: Any, X: Any, y: Any) -> np.ndarray:
        """Per-row contributions whose mean over the ``m`` rows is ``u``: private."""
        labels = np.asarray(y).reshape(-1)
        predicted = np.asarray(estimator.predict(X)).reshape(-1)
        correct = predicted == labels
        m = len(labels)
        if self.name == "f1":
            positive = self.pos_label
            n_pos = int(np.sum(labels == positive))
            both = n_pos + int(np.sum(predicted == positive))
            share = 2.0 * n_pos / both if both else 0.0
            return np.where(correct & (labels == positive), share, 0.0)
        member = labels[:, None] == self.classes[None, :]  # a label outside: no class
        counts = member.sum(axis=0)
        if counts.min() == 0:
            return np.zeros(m)
        if len(counts) == 2:  # a correct row of class c weighs the other class's count
            weight = m * counts[::-1] / (2.0 * (m * m // 4))
        else:  # of class c: min count / n_c
            weight = counts.min() / counts
        return (member & correct[:, None]) @ weight.astype(float)

    def sensitivity_of_mean(self, m: int) -> float:
        """Replace-one sensitivity of ``u`` (the mean of the contributions) over ``m`` rows."""
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"m must be a positive int, got {m!r}.")
        m = int(m)
        if self.name == "f1":
            return min(1.0, 2.0 / m)
        if len(self.classes) == 2:
            return (m - 1) / (m * m // 4) if m >= 2 else 1.0  # m = 1: u is always 0
        return min(1.0, (len(self.classes) + 1) / m)

    def __repr__(self) -> str:
        return f"ConfusionScore({self.name!r}, classes={self.classes.tolist()!r})"


def check_per_example_score(scoring: Any, estimator: Any,
                            target_range: tuple[float, float] | None = None,
                            **kwargs: Any) -> PerExampleScore:
    """Resolve ``scoring`` into a :class:`PerExampleScore`.

    Parameters
    ----------
    scoring : None, str or PerExampleScore
        ``None`` means ``"accuracy"`` for classifiers, ``"squared_distance"`` for clusterers
        and ``"absolute_error"`` for a regressor with a declared target range (its error is in
        the target's units: at the same range its mean separates candidates by more noise
        scales than the squared error's). Strings: ``"accuracy"``, ``"squared_error"`` and
        ``"absolute_error"`` (both need ``clip``, in the target's units -- squared units for
        ``"squared_error"`` -- unless a target range is declared: predictions are then
        clipped into it, and ``clip`` defaults to the largest error left), ``"log_loss"``
        (optional ``clip``, default ``log(100)``; needs ``predict_proba``),
        ``"squared_distance"`` (clusterers with ``transform``; needs ``clip``, in squared
        feature units). A ``PerExampleScore`` instance is returned as is.
    estimator : estimator
        The (unfitted) estimator.
    target_range : (float, float) or None
        A regressor's declared target range (:func:`~skdptune.public.resolve_target_range`).
    **kwargs
        ``clip=...`` for the clipped scores: the searches' ``score_clip``, which the messages
        name.

    Returns
    -------
    PerExampleScore

    Raises
    ------
    ValueError
        Unknown ``scoring``, missing or unexpected ``clip``, no default for the estimator, or
        ``"log_loss"`` for an estimator without ``predict_proba``.
    """
    if isinstance(scoring, PerExampleScore):
        if kwargs:
            raise ValueError("score_clip is for a named scoring; a PerExampleScore object "
                             "carries its own clip: leave score_clip=None.")
        return scoring
    if scoring is None:
        if _is_clusterer(estimator):
            scoring = "squared_distance"
        elif target_range is not None:
            scoring = "absolute_error"
        elif not is_classifier(estimator):
            raise ValueError(
                "scoring=None has no default per-example score for a non-classifier: choose "
                "scoring='squared_error' or 'absolute_error' with score_clip=c in the target's "
                "units (an error above c counts as c)."
            )
        else:
            scoring = "accuracy"
    if scoring in _RANKING:
        raise ValueError(
            f"scoring={scoring!r} scores the whole validation part, not each example; this "
            f"search needs per-example losses. Choose one of {sorted(_PER_EXAMPLE)}, or use "
            f"DPRandomSearchCV, which accepts scoring={scoring!r}."
        )
    if not isinstance(scoring, str) or scoring not in _PER_EXAMPLE:
        raise ValueError(
            f"scoring={scoring!r} is not a per-example score with a known bound; choose one of "
            f"{sorted(_PER_EXAMPLE)}."
        )
    if scoring in _TARGET_ERRORS and target_range is not None:
        kwargs = {**kwargs, "target_range": target_range}
    elif scoring in _CLIPPED and "clip" not in kwargs:
        units = ("squared feature units" if scoring == "squared_distance"
                 else "the target's units")
        raise ValueError(
            f"scoring={scoring!r} needs score_clip=c (in {units}): per-example errors are "
            f"clipped to [0, c] so that their mean has a known sensitivity."
        )
    unexpected = set(kwargs) - ({"clip", "target_range"} if scoring != "accuracy" else set())
    if unexpected:
        raise ValueError(
            f"score_clip is not used by scoring={scoring!r} (each utility is already 0 or 1); "
            "leave score_clip=None."
        )
    if scoring == "log_loss" and not hasattr(estimator, "predict_proba"):
        raise ValueError("scoring='log_loss' needs an estimator with predict_proba; choose "
                         "scoring='accuracy' for this estimator.")
    if scoring == "squared_distance" and not hasattr(estimator, "transform"):
        raise ValueError("scoring='squared_distance' needs a clusterer with transform "
                         "(distances to the cluster centres).")
    return _PER_EXAMPLE[scoring](**kwargs)


def check_validation_score(scoring: Any, estimator: Any, classes: Any,
                           target_range: tuple[float, float] | None = None,
                           **kwargs: Any) -> PerExampleScore | RankingScore | ConfusionScore:
    """The score of a noisy validation release (randomized repetition): a per-example score
    (:func:`check_per_example_score`); for ``"roc_auc"`` / ``"average_precision"``, a
    :class:`RankingScore` of a binary classifier; for ``"balanced_accuracy"`` (two or more
    declared classes) / ``"f1"`` (binary), a :class:`ConfusionScore`.

    Parameters
    ----------
    scoring : None, str or PerExampleScore
    estimator : estimator
        The (unfitted) estimator.
    classes : ndarray or None
        The declared label set (public).
    target_range : (float, float) or None
        A regressor's declared target range (public).
    **kwargs
        ``clip=...`` (the search's ``score_clip``).

    Raises
    ------
    ValueError
        As :func:`check_per_example_score`; a ranking score for a non-binary or non-classifier
        estimator, one without ``decision_function`` / ``predict_proba``, or with ``score_clip``;
        ``"f1"`` for a non-binary one, ``"balanced_accuracy"`` for a non-classifier.
    """
    if scoring in _CONFUSION:
        if classes is None:
            raise ValueError(f"scoring={scoring!r} scores a classifier's predicted labels; "
                             "this estimator is not a classifier.")
        if kwargs:
            raise ValueError(f"score_clip is not used by scoring={scoring!r} (its bound needs "
                             "no clip); leave score_clip=None.")
        return ConfusionScore(scoring, classes)
    if scoring not in _RANKING:
        return check_per_example_score(scoring, estimator, target_range, **kwargs)
    if classes is None or len(classes) != 2:
        what = "a non-classifier" if classes is None else f"{len(classes)} classes"
        raise ValueError(
            f"scoring={scoring!r} is bounded here for a binary classifier only (got {what}): "
            "with more classes the one-vs-rest average weighs the classes by private counts. "
            "Use scoring='accuracy' or 'log_loss'."
        )
    if not (hasattr(estimator, "decision_function") or hasattr(estimator, "predict_proba")):
        raise ValueError(f"scoring={scoring!r} needs decision_function or predict_proba; "
                         "choose scoring='accuracy' for this estimator.")
    if kwargs:
        raise ValueError(f"score_clip is not used by scoring={scoring!r} (its bound needs no "
                         "clip); leave score_clip=None.")
    return RankingScore(scoring)


def raw_scorer_name(scoring: Any) -> Any:
    """The scikit-learn scorer (raw scale, for ``score``) matching a per-example score name."""
    return {None: None, "accuracy": "accuracy", "squared_error": "neg_mean_squared_error",
            "absolute_error": "neg_mean_absolute_error", "log_loss": "neg_log_loss",
            "squared_distance": None}.get(scoring, scoring)


def split_scoring(scoring: Any, refit: Any) -> tuple[Any, Any, dict | None]:
    """The metric that selects, given scikit-learn's ``scoring`` and ``refit`` conventions.

    A private search selects by **one** metric, and only that metric is ever computed on the
    private data: the other metrics of a list or dict are checked (names, dry run on synthetic
    data) and offered by ``scorer_`` for scoring your own data, but never evaluated inside
    ``fit``. Computing them privately would cost budget for numbers that could not be released
    without noise; computing them without releasing them would spend time (a side channel)
    for nothing.

    Parameters
    ----------
    scoring : None, str, callable, list, tuple or dict
        As in scikit-learn's searches. A list or tuple of names, or a dict ``{name: scorer}``,
        is multi-metric.
    refit : bool or str
        With several metrics, the name of the one that selects (scikit-learn's rule). With one
        metric, ``True``/``False`` or the metric's own key (the scorer name, or ``"score"``).

    Returns
    -------
    metric : None, str or callable
        The selecting metric's ``scoring``.
    key : str or None
        Its name in the multi-metric ``scoring`` (``None`` for one metric).
    metrics : dict or None
        ``{name: scoring}`` of all the metrics (``None`` for one metric).

    Raises
    ------
    ValueError
        A malformed list or dict; ``refit`` not naming a metric of a multi-metric ``scoring``;
        a ``refit`` string that does not name the single metric.
    """
    if isinstance(scoring, (list, tuple, set, dict)):
        if isinstance(scoring, dict):
            metrics = dict(scoring)
            if not metrics or not all(isinstance(k, str) for k in metrics):
                raise ValueError("A dict scoring must map metric names (str) to scorers; got "
                                 f"{scoring!r}.")
        else:
            names = list(scoring)
            if (not names or not all(isinstance(n, str) for n in names)
                    or len(set(names)) != len(names)):
                raise ValueError("A list or tuple scoring must hold unique scorer names (str); "
                                 f"got {scoring!r}. For custom scorers pass a dict.")
            metrics = {name: name for name in names}
        if isinstance(refit, bool) or not isinstance(refit, str) or refit not in metrics:
            raise ValueError(
                "For multi-metric scoring, the parameter refit must be set to a scorer key: "
                f"one of {sorted(metrics)}. A private search selects by one metric, and only "
                "that metric is computed on the private data (the others are never evaluated "
                "inside fit). To select without refitting, pass the selecting metric alone as "
                f"scoring with refit=False. {refit!r} was passed."
            )
        return metrics[refit], refit, metrics
    if isinstance(refit, str) and refit not in ("score", scoring):
        raise ValueError(
            f"refit={refit!r} names a metric, but scoring={scoring!r} is a single metric (its "
            "key is 'score'"
            + (f" or {scoring!r}" if isinstance(scoring, str) else "")
            + "). Use refit=True, or pass several metrics as a list or dict and name one of "
            "them in refit."
        )
    return scoring, None, None
