"""Bounded utilities: default bounds, clipping, per-example scores.

Why the utilities are bounded: docs/selection.md, section 1 (sensitivity ``1/k`` over ``k``
partitions) and docs/random_search.md, section 2.1 (``1/m`` over ``m`` validation rows).
"""

import math
import pickle

import numpy as np
import pytest
from diffprivlib.models import KMeans as DPKMeans
from diffprivlib.models import LinearRegression as DPLinear
from diffprivlib.models import LogisticRegression as DPLR
from diffprivlib.models import StandardScaler as DPScaler
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import get_scorer
from sklearn.pipeline import make_pipeline

from skdptune.evaluation._scores import (
    DEFAULT_LOG_LOSS_CLIP,
    AbsoluteErrorScore,
    AccuracyScore,
    BoundedScorer,
    LogLossScore,
    SquaredErrorScore,
    check_bounded_scorer,
    check_per_example_score,
)


class FixedClassifier(ClassifierMixin, BaseEstimator):
    """Returns fixed predictions and probabilities, whatever X (already 'fitted')."""

    def __init__(self, predictions=None, proba=None, classes=(0, 1)):
        self.predictions = predictions
        self.proba = proba
        self.classes = classes

    @property
    def classes_(self):
        return np.asarray(self.classes)

    def predict(self, X):
        return np.asarray(self.predictions)

    def predict_proba(self, X):
        return np.asarray(self.proba, dtype=float)


class FixedRegressor(RegressorMixin, BaseEstimator):
    def __init__(self, predictions=None):
        self.predictions = predictions

    def predict(self, X):
        return np.asarray(self.predictions, dtype=float)


def constant_scorer(value):
    def scorer(estimator, X, y, sample_weight=None):
        return value

    return scorer


X4 = np.zeros((4, 1))

# ------------------------------------------------------------------------- bounded scorer


@pytest.mark.parametrize(
    ("scoring", "estimator", "name", "bounds"),
    [
        (None, DPLR(), "accuracy", (0.0, 1.0)),
        (None, make_pipeline(DPScaler(), DPLR()), "accuracy", (0.0, 1.0)),
        (None, DPLinear(), "r2", (0.0, 1.0)),
        ("balanced_accuracy", DPLR(), "balanced_accuracy", (0.0, 1.0)),
        ("f1_macro", DPLR(), "f1_macro", (0.0, 1.0)),
        ("precision_weighted", DPLR(), "precision_weighted", (0.0, 1.0)),
        ("recall", DPLR(), "recall", (0.0, 1.0)),
        ("roc_auc_ovr", DPLR(), "roc_auc_ovr", (0.0, 1.0)),
        ("average_precision", DPLR(), "average_precision", (0.0, 1.0)),
        ("jaccard_micro", DPLR(), "jaccard_micro", (0.0, 1.0)),
        ("r2", DPLinear(), "r2", (0.0, 1.0)),
        ("matthews_corrcoef", DPLR(), "matthews_corrcoef", (-1.0, 1.0)),
    ],
)
def test_default_bounds(scoring, estimator, name, bounds):
    scorer = check_bounded_scorer(scoring, None, estimator)
    assert isinstance(scorer, BoundedScorer)
    assert (scorer.name, scorer.lo, scorer.hi) == (name, *bounds)


@pytest.mark.parametrize(
    ("scoring", "estimator"),
    [
        ("neg_mean_squared_error", DPLinear()),
        ("neg_log_loss", DPLR()),
        ("explained_variance", DPLinear()),
        (get_scorer("accuracy"), DPLR()),  # a callable: its range is unknown
        (None, DPKMeans()),  # KMeans.score is the negative inertia
    ],
)
def test_score_bounds_required(scoring, estimator):
    with pytest.raises(ValueError, match=r"score_bounds=\(lo, hi\) is required"):
        check_bounded_scorer(scoring, None, estimator)
    scorer = check_bounded_scorer(scoring, (-10, 0), estimator)
    assert (scorer.lo, scorer.hi) == (-10.0, 0.0)


def test_user_bounds_override_defaults():
    scorer = check_bounded_scorer("accuracy", (0.5, 1.0), DPLR())
    assert (scorer.lo, scorer.hi) == (0.5, 1.0)


@pytest.mark.parametrize("bounds", [(1, 0), (0, 0), (0, math.inf), (math.nan, 1), "ab", (1,)])
def test_invalid_score_bounds(bounds):
    with pytest.raises(ValueError, match="score_bounds"):
        check_bounded_scorer("accuracy", bounds, DPLR())


def test_invalid_scoring():
    with pytest.raises(ValueError):
        check_bounded_scorer(["accuracy", "f1"], None, DPLR())
    with pytest.raises(ValueError):
        check_bounded_scorer("not_a_scorer", None, DPLR())


@pytest.mark.parametrize(
    ("score", "utility"),
    [(-3.0, 0.0), (-2.0, 0.0), (-1.0, 0.25), (0.0, 0.5), (2.0, 1.0), (5.0, 1.0), (math.nan, 0.0)],
)
def test_bounded_scorer_maps_and_clips(score, utility):
    scorer = BoundedScorer(constant_scorer(score), -2.0, 2.0, "custom")
    assert scorer(None, X4, None) == utility


def test_r2_is_clipped_to_the_unit_interval():
    scorer = check_bounded_scorer(None, None, FixedRegressor())
    y = np.array([0.0, 1.0, 2.0, 3.0])
    assert scorer(FixedRegressor(y), X4, y) == 1.0
    assert scorer(FixedRegressor(-10 * y), X4, y) == 0.0  # r2 far below 0


def test_bounded_scorer_accuracy_and_sample_weight():
    scorer = check_bounded_scorer(None, None, FixedClassifier())
    est = FixedClassifier(predictions=[0, 1, 1, 1])
    y = np.array([0, 1, 0, 0])
    assert scorer(est, X4, y) == 0.5
    assert scorer(est, X4, y, sample_weight=np.array([1.0, 1.0, 0.0, 0.0])) == 1.0


def test_bounded_scorer_pickles():
    scorer = check_bounded_scorer("f1", None, DPLR())
    copy = pickle.loads(pickle.dumps(scorer))
    assert (copy.name, copy.lo, copy.hi) == ("f1", 0.0, 1.0)
    est = FixedClassifier(predictions=[0, 1, 1, 0])
    y = np.array([0, 1, 1, 1])
    assert copy(est, X4, y) == scorer(est, X4, y) == pytest.approx(0.8)


# ------------------------------------------------------------------------- per-example


def test_accuracy_per_example():
    score = AccuracyScore()
    est = FixedClassifier(predictions=[0, 1, 0, 0])
    np.testing.assert_array_equal(score(est, X4, [0, 1, 1, 0]), [1.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(score.losses(est, X4, [0, 1, 1, 0]), [0.0, 0.0, 1.0, 0.0])
    assert score.bounds == (0.0, 1.0)
    assert score.sensitivity_of_mean(10) == 0.1


def test_squared_and_absolute_error_per_example():
    est = FixedRegressor([0.0, 1.0, 2.0, 3.0, np.nan])
    y = np.zeros(5)
    X5 = np.zeros((5, 1))
    squared = SquaredErrorScore(clip=4.0)  # errors 0, 1, 4, 9, nan
    np.testing.assert_allclose(squared(est, X5, y), [1.0, 0.75, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(squared.losses(est, X5, y), [0.0, 1.0, 4.0, 4.0, 4.0])
    absolute = AbsoluteErrorScore(clip=2.0)  # errors 0, 1, 2, 3, nan
    np.testing.assert_allclose(absolute(est, X5, y), [1.0, 0.5, 0.0, 0.0, 0.0])
    assert absolute.loss_bound == 2.0
    assert absolute.sensitivity_of_mean(4) == 0.25


def test_log_loss_per_example():
    y = np.array([0, 1, 1, 0, 2])  # label 2 is unknown to the model
    p_true = np.array([1.0, 0.1, 0.01, 0.001, 0.5])
    proba = np.column_stack([p_true, 1 - p_true])
    proba[[1, 2], :] = proba[[1, 2], ::-1]  # rows whose label is 1
    est = FixedClassifier(proba=proba)
    score = LogLossScore(clip=math.log(100))
    # -log p = 0, log 10, log 100, log 1000 (clipped), unknown label -> clip
    u = score(est, np.zeros((5, 1)), y)
    np.testing.assert_allclose(u, [1.0, 0.5, 0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(
        score.losses(est, np.zeros((5, 1)), y),
        [0.0, math.log(10), math.log(100), math.log(100), math.log(100)],
    )
    # classes_ in a non-sorted order are honoured (diffprivlib forests keep the user's order)
    reordered = FixedClassifier(proba=proba[:, ::-1], classes=(1, 0))
    np.testing.assert_allclose(
        score(reordered, np.zeros((5, 1)), y), score(est, np.zeros((5, 1)), y)
    )


def test_check_per_example_score():
    assert isinstance(check_per_example_score(None, DPLR()), AccuracyScore)
    with pytest.raises(ValueError, match="squared_error"):
        check_per_example_score(None, DPLinear())
    with pytest.raises(ValueError, match="clip"):
        check_per_example_score("squared_error", DPLinear())
    with pytest.raises(ValueError, match="clip"):
        check_per_example_score("absolute_error", DPLinear(), clip=-1.0)
    score = check_per_example_score("squared_error", DPLinear(), clip=2.5)
    assert isinstance(score, SquaredErrorScore) and score.clip == 2.5 and score.loss_bound == 2.5
    log_loss = check_per_example_score("log_loss", DPLR())
    assert log_loss.clip == DEFAULT_LOG_LOSS_CLIP == math.log(100)
    with pytest.raises(ValueError, match="predict_proba"):
        check_per_example_score("log_loss", DPLinear())
    with pytest.raises(ValueError, match="score_clip is not used"):
        check_per_example_score("accuracy", DPLR(), clip=1.0)
    with pytest.raises(ValueError, match="not a per-example score"):
        check_per_example_score("r2", DPLinear())
    assert check_per_example_score(score, DPLinear()) is score


def test_per_example_scores_pickle():
    score = pickle.loads(pickle.dumps(check_per_example_score("log_loss", DPLR(), clip=3.0)))
    assert isinstance(score, LogLossScore) and score.clip == 3.0


def test_fast_accuracy_equals_sklearn_accuracy_scorer():
    from diffprivlib.models import GaussianNB
    from sklearn.datasets import make_classification
    from sklearn.metrics import get_scorer

    from skdptune.evaluation._scores import _accuracy

    X, y = make_classification(n_samples=300, n_features=4, n_classes=3, n_informative=3,
                               n_redundant=0, random_state=0)
    model = GaussianNB(epsilon=1.0, bounds=(-6.0, 6.0), random_state=0).fit(X, y)
    weights = np.random.RandomState(0).uniform(size=len(y))
    assert _accuracy(model, X, y) == get_scorer("accuracy")(model, X, y)
    assert _accuracy(model, X, y, weights) == pytest.approx(
        get_scorer("accuracy")(model, X, y, sample_weight=weights))


# ------------------------------------------------------------------------- target range


@pytest.mark.parametrize(("scoring", "bounds"), [
    (None, (0.0, 1.0)), ("r2", (0.0, 1.0)), ("neg_mean_squared_error", (-16.0, 0.0)),
    ("neg_root_mean_squared_error", (-4.0, 0.0)), ("neg_mean_absolute_error", (-4.0, 0.0))])
def test_regression_scores_are_bounded_on_the_target_range(scoring, bounds):
    """With a declared target range [-1, 3] the error scores need no score_bounds: the
    predictions are clipped into the range, so no error exceeds its width (4)."""
    scorer = check_bounded_scorer(scoring, None, FixedRegressor(), (-1.0, 3.0))
    assert (scorer.lo, scorer.hi) == bounds
    assert scorer.name == (scoring or "r2")
    restored = pickle.loads(pickle.dumps(scorer))
    assert (restored.lo, restored.hi) == bounds


def test_regression_scores_clip_the_predictions_into_the_target_range():
    y = np.array([-1.0, 3.0, 0.0, 1.0])
    wild = FixedRegressor([-50.0, 70.0, 0.5, 1.0])  # clipped: [-1, 3, 0.5, 1]
    mse = check_bounded_scorer("neg_mean_squared_error", None, wild, (-1.0, 3.0))
    # raw score -(0 + 0 + 0.25 + 0) / 4, on the scale [-16, 0]
    assert mse(wild, X4, y) == pytest.approx(1.0 - 0.0625 / 16.0)
    mae = check_bounded_scorer("neg_mean_absolute_error", None, wild, (-1.0, 3.0))
    assert mae(wild, X4, y) == pytest.approx(1.0 - 0.125 / 4.0)
    # without a range the same model's error is unbounded: score_bounds are required
    with pytest.raises(ValueError, match="score_bounds"):
        check_bounded_scorer("neg_mean_squared_error", None, wild)
    # at the extreme (every prediction at the far end of the range) the utility is 0
    far = FixedRegressor([3.0, -1.0, 3.0, 3.0])
    y_far = np.array([-1.0, 3.0, -1.0, -1.0])
    assert mse(far, X4, y_far) == 0.0 and mae(far, X4, y_far) == 0.0


@pytest.mark.parametrize("name", ["r2", "neg_mean_squared_error",
                                  "neg_root_mean_squared_error", "neg_mean_absolute_error"])
def test_target_range_metrics_are_scikit_learns(name):
    """The target-range scores' own metrics (no per-call validation) give scikit-learn's
    values -- one or several outputs, with and without weights, a constant target predicted
    exactly or not, r2 of one row (NaN) -- and refuse what scikit-learn refuses: lengths that
    differ and non-finite values."""
    import warnings

    from sklearn import metrics

    from skdptune.evaluation._scores import _RANGE_METRICS

    theirs = {"r2": metrics.r2_score,
              "neg_mean_squared_error": lambda *a, **k: -metrics.mean_squared_error(*a, **k),
              "neg_root_mean_squared_error":
                  lambda *a, **k: -math.sqrt(metrics.mean_squared_error(*a, **k)),
              "neg_mean_absolute_error":
                  lambda *a, **k: -metrics.mean_absolute_error(*a, **k)}[name]
    mine = _RANGE_METRICS[name]
    rng = np.random.default_rng(0)
    for case in range(300):
        n = int(rng.integers(2, 40))
        shape = (n,) if case % 3 else (n, int(rng.integers(1, 4)))
        y = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
        p = y + rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
        if case % 7 == 0:
            y = np.full(shape, 2.5)
        if case % 11 == 0:
            p = y.copy()
        w = None if case % 2 else rng.uniform(0.1, 3.0, size=n)
        assert mine(y, p, sample_weight=w) == pytest.approx(theirs(y, p, sample_weight=w),
                                                            rel=1e-12, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = mine(np.array([1.0]), np.array([2.0]))
        assert (math.isnan(one) and math.isnan(theirs(np.array([1.0]), np.array([2.0])))
                if name == "r2" else one == theirs(np.array([1.0]), np.array([2.0])))
    for y, p in [(np.zeros(3), np.zeros(4)), (np.zeros(3), np.array([0.0, np.nan, 1.0])),
                 (np.array([0.0, np.inf, 1.0]), np.zeros(3))]:
        with pytest.raises(ValueError):
            mine(y, p)
        with pytest.raises(ValueError):
            theirs(y, p)


def test_bounded_scores_of_predictions_are_the_scores_of_the_model():
    """``of_predictions`` of a score that reads the predictions alone is its value on the
    model that predicts them; a scorer that reads the model refuses."""
    y = np.array([-1.0, 3.0, 0.0, 1.0])
    wild = FixedRegressor([-50.0, 70.0, 0.5, 1.5])
    for scoring in ["r2", "neg_mean_absolute_error", "neg_root_mean_squared_error"]:
        scorer = check_bounded_scorer(scoring, None, wild, (-1.0, 3.0))
        assert scorer.reads_predictions
        assert scorer.of_predictions(wild.predict(X4), y) == scorer(wild, X4, y)
        w = np.array([1.0, 0.5, 2.0, 1.0])
        assert (scorer.of_predictions(wild.predict(X4), y, sample_weight=w)
                == scorer(wild, X4, y, sample_weight=w))
    plain = check_bounded_scorer("r2", None, wild)  # no target range: scikit-learn's scorer
    assert not plain.reads_predictions
    with pytest.raises(TypeError):
        plain.of_predictions(wild.predict(X4), y)


def test_per_example_errors_clip_the_predictions_and_default_their_clip():
    y = np.array([-1.0, 3.0, 0.0, 1.0])
    wild = FixedRegressor([-50.0, 70.0, 0.5, 3.0])
    absolute = check_per_example_score("absolute_error", wild, (-1.0, 3.0))
    assert absolute.clip == 4.0 and absolute.loss_bound == 4.0
    np.testing.assert_allclose(absolute(wild, X4, y), [1.0, 1.0, 1 - 0.5 / 4, 1 - 2 / 4])
    squared = check_per_example_score("squared_error", wild, (-1.0, 3.0))
    assert squared.clip == 16.0
    np.testing.assert_allclose(squared(wild, X4, y), [1.0, 1.0, 1 - 0.25 / 16, 1 - 4 / 16])
    # a user's clip still applies, on the clipped predictions
    tight = check_per_example_score("absolute_error", wild, (-1.0, 3.0), clip=1.0)
    np.testing.assert_allclose(tight(wild, X4, y), [1.0, 1.0, 0.5, 0.0])
    # the default for a regressor with a range is the absolute error
    assert isinstance(check_per_example_score(None, wild, (-1.0, 3.0)), AbsoluteErrorScore)
    with pytest.raises(ValueError, match="score_clip"):
        check_per_example_score(None, wild)
    assert pickle.loads(pickle.dumps(absolute)).target_range == (-1.0, 3.0)
