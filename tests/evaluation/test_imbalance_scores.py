"""Imbalance-aware validation scores of DPRandomSearchCV: ``balanced_accuracy`` and ``f1``.

:class:`ConfusionScore` releases each metric times a function of the validation part's class
counts (the same for every candidate, so the ranking is the metric's) with a replace-one
sensitivity of order ``1/m``; docs/random_search.md section 2.7 proves the bounds. Here:

* closed forms against scikit-learn's metrics, and small examples by hand;
* brute force over *every* replace-one neighbour of *every* small validation part (all labels
  and predictions, a label outside the declared set included): the bound holds, and how close
  the worst neighbour comes to it; broken variants (no count factor, halved sensitivity) are
  caught; the floored forms the docs compare them with are checked the same way;
* the search charges its plan and gives the Laplace mechanism the score's sensitivity, on the
  batched and the one-by-one paths;
* on data with 10 % positives, balanced accuracy and F1 select a useful model over a
  near-constant one where accuracy selects the constant one.
"""

import itertools
import math

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from sklearn.metrics import balanced_accuracy_score, f1_score

from skdptune import DPRandomSearchCV
from skdptune.evaluation import _holdout
from skdptune.evaluation._scores import ConfusionScore, check_validation_score


class Echo:
    """A fitted 'model' whose prediction is the first feature."""

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _u(score, labels, predictions):
    return float(np.mean(score(Echo(), np.c_[predictions], np.asarray(labels))))


# ------------------------------------------------------------------------------------------
# Closed forms
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_balanced_accuracy_is_the_metric_times_a_count_factor(n_classes, seed):
    rng = np.random.RandomState(seed)
    m = 61
    labels, predictions = rng.randint(0, n_classes, m), rng.randint(0, n_classes, m)
    counts = np.bincount(labels, minlength=n_classes)
    factor = (counts.prod() / (m * m // 4) if n_classes == 2
              else n_classes * counts.min() / m)
    u = _u(ConfusionScore("balanced_accuracy", range(n_classes)), labels, predictions)
    assert u == pytest.approx(balanced_accuracy_score(labels, predictions) * factor, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_f1_is_the_metric_times_the_positive_share(seed):
    rng = np.random.RandomState(seed)
    labels = np.where(rng.rand(57) < 0.2, "yes", "no")
    predictions = np.where(rng.rand(57) < 0.3, "yes", "no")
    u = _u(ConfusionScore("f1", ["no", "yes"], pos_label="yes"), labels, predictions)
    share = np.mean(labels == "yes")
    assert u == pytest.approx(f1_score(labels, predictions, pos_label="yes") * share,
                              abs=1e-12)


def test_small_examples_by_hand():
    ba, f1 = ConfusionScore("balanced_accuracy", [0, 1]), ConfusionScore("f1", [0, 1])
    labels = [0, 0, 0, 1]
    # BA = (2/3 + 1) / 2 = 5/6, times n0 n1 / floor(16/4) = 3/4: (TP0 n1 + TP1 n0) / 8 = 5/8
    assert _u(ba, labels, [0, 0, 1, 1]) == pytest.approx(5 / 8)
    # F1 = 2 / 3 (TP = 1, P = 1, P_hat = 2), times P / m = 1/4
    assert _u(f1, labels, [0, 0, 1, 1]) == pytest.approx(1 / 6)
    # the constant model: BA 1/2, F1 0
    assert _u(ba, labels, [0, 0, 0, 0]) == pytest.approx(3 / 8)
    assert _u(f1, labels, [0, 0, 0, 0]) == 0.0
    # three classes: BA = (1 + 1/2 + 0) / 3, times 3 * min count / m = 3 * 1/6
    three = ConfusionScore("balanced_accuracy", [0, 1, 2])
    assert _u(three, [0, 0, 0, 1, 1, 2], [0, 0, 0, 1, 0, 1]) == pytest.approx(0.25)
    # the extremes of [0, 1]: perfect and balanced; one class absent (BA undefined)
    assert _u(ba, [0, 0, 1, 1], [0, 0, 1, 1]) == 1.0
    assert _u(three, [0, 1, 2], [0, 1, 2]) == 1.0
    assert _u(f1, [1, 1], [1, 1]) == 1.0
    assert _u(ba, [1, 1, 1], [1, 1, 1]) == 0.0
    assert _u(f1, [0, 0], [0, 0]) == 0.0


def test_sensitivities_closed_form():
    assert ConfusionScore("balanced_accuracy", [0, 1]).sensitivity_of_mean(100) == 99 / 2500
    assert ConfusionScore("balanced_accuracy", [0, 1]).sensitivity_of_mean(101) == 100 / 2550
    assert ConfusionScore("balanced_accuracy", [0, 1, 2]).sensitivity_of_mean(100) == 4 / 100
    assert ConfusionScore("balanced_accuracy", range(10)).sensitivity_of_mean(1000) == 11 / 1000
    assert ConfusionScore("f1", [0, 1]).sensitivity_of_mean(100) == 2 / 100
    # never above the range of u
    assert ConfusionScore("f1", [0, 1]).sensitivity_of_mean(1) == 1.0
    assert ConfusionScore("balanced_accuracy", [0, 1]).sensitivity_of_mean(1) == 1.0
    assert ConfusionScore("balanced_accuracy", range(4)).sensitivity_of_mean(3) == 1.0


# ------------------------------------------------------------------------------------------
# Brute force over every replace-one neighbour
# ------------------------------------------------------------------------------------------


def _worst_change(value, labels, predictions, m):
    """Largest ``|u(D) - u(D')|`` over every validation part ``D`` of ``m`` rows and every
    replace-one neighbour ``D'`` (one row's label and prediction replaced by any pair).

    ``u`` depends on the rows as a multiset, so the parts are enumerated as multisets of
    (label, prediction) pairs and each is scored once."""
    pairs = list(itertools.product(labels, predictions))
    values = {}
    for part in itertools.combinations_with_replacement(range(len(pairs)), m):
        rows = [pairs[i] for i in part]
        values[part] = value([r[0] for r in rows], [r[1] for r in rows])
    worst = 0.0
    for part, u in values.items():
        for i in set(part):
            rest = list(part)
            rest.remove(i)
            for j in range(len(pairs)):
                worst = max(worst, abs(values[tuple(sorted([*rest, j]))] - u))
    return worst


def _score_value(score):
    return lambda labels, predictions: _u(score, labels, predictions)


# (name, declared classes, m): a label 9 outside the declared set is in every enumeration of
# two classes (the proofs allow it; check_domain refuses it before the search reads the data)
CASES = ([("balanced_accuracy", 2, m) for m in (1, 2, 3, 4, 5, 8, 11)]
         + [("balanced_accuracy", 3, m) for m in (1, 2, 3, 4, 6)]
         + [("f1", 2, m) for m in (1, 2, 3, 4, 5, 8, 11)])


@pytest.mark.parametrize(("name", "n_classes", "m"), CASES)
def test_sensitivity_bound_holds_on_every_neighbour(name, n_classes, m):
    score = ConfusionScore(name, range(n_classes))
    labels = [*range(n_classes), 9] if n_classes == 2 else list(range(n_classes))
    worst = _worst_change(_score_value(score), labels, range(n_classes), m)
    bound = score.sensitivity_of_mean(m)
    assert worst <= bound + 1e-12
    # how tight: binary balanced accuracy attains its bound; F1's worst case is 2 / (m + 1)
    # (m - 1 false negatives, one of them becoming a true positive), against 2 / m
    if name == "balanced_accuracy" and n_classes == 2 and m >= 2:
        assert worst == pytest.approx(bound)
    if name == "f1":
        assert worst == pytest.approx(min(bound, 2 / (m + 1)))


def test_multiclass_balanced_accuracy_bound_is_approached():
    """Three classes, m = 9: the worst neighbour moves (4m + 6) / (m (m + 3)) = 42/108, 7/8 of
    the bound (C + 1) / m = 4/9 (one row of a class of three leaves it for another class)."""
    score = ConfusionScore("balanced_accuracy", range(3))
    worst = _worst_change(_score_value(score), range(3), range(3), 9)
    assert worst == pytest.approx(42 / 108)
    assert worst <= score.sensitivity_of_mean(9)


class PlainMetric(ConfusionScore):
    """Broken: the metric itself (no count factor) with the count forms' sensitivity."""

    def __call__(self, estimator, X, y):
        predictions = np.asarray(estimator.predict(X)).reshape(-1)
        labels = np.asarray(y)
        if self.name == "f1":
            value = f1_score(labels, predictions, pos_label=self.pos_label, zero_division=0)
        elif len(set(labels.tolist())) < 2:
            value = 0.0
        else:
            value = balanced_accuracy_score(labels, predictions)
        return np.full(len(labels), value)


class HalvedSensitivity(ConfusionScore):
    """Broken: the right form with half its sensitivity."""

    def sensitivity_of_mean(self, m):
        return super().sensitivity_of_mean(m) / 2


@pytest.mark.parametrize("broken", [PlainMetric, HalvedSensitivity])
@pytest.mark.parametrize("name", ["balanced_accuracy", "f1"])
def test_brute_force_catches_broken_variants(broken, name):
    m = 8
    score = broken(name, [0, 1])
    worst = _worst_change(_score_value(score), [0, 1], [0, 1], m)
    assert worst > score.sensitivity_of_mean(m) + 1e-9


class FlooredBalancedAccuracy:
    """The floored form docs/random_search.md compares with (not offered):
    ``u = sum_c TP_c / max(n_c, tau) / C`` with ``tau = max(1, m / (k C))``, sensitivity
    ``(1/tau + 1/(tau + 1)) / C``; the search's score protocol (contributions, bound)."""

    bounds = (0.0, 1.0)

    def __init__(self, k, n_classes):
        self.k, self.n_classes = k, n_classes

    def tau(self, m):
        return max(1.0, m / (self.k * self.n_classes))

    def __call__(self, estimator, X, y):
        labels = np.asarray(y)
        correct = np.asarray(estimator.predict(X)).reshape(-1) == labels
        counts = np.array([np.sum(labels == c) for c in range(self.n_classes)])
        floored = np.maximum(counts, self.tau(len(labels)))
        weight = np.array([len(labels) / (self.n_classes * floored[c])
                           if c in range(self.n_classes) else 0.0 for c in labels.tolist()])
        return np.where(correct, weight, 0.0)

    def sensitivity_of_mean(self, m):
        tau = self.tau(m)
        return min(1.0, (1 / tau + 1 / (tau + 1)) / self.n_classes)


def _floored_f1(tau):
    """``2 TP / max(P + P_hat, tau)``."""
    def value(labels, predictions):
        labels, predictions = np.asarray(labels), np.asarray(predictions)
        tp = np.sum((labels == 1) & (predictions == 1))
        return 2 * tp / max(np.sum(labels == 1) + np.sum(predictions == 1), tau)
    return value


@pytest.mark.parametrize(("n_classes", "k", "m"), [(3, 1, 6), (3, 2, 6), (3, 0.8, 6),
                                                   (2, 2, 6)])
def test_floored_balanced_accuracy_bound(n_classes, k, m):
    """Attained for an integer tau with a third class to hold the other rows (a class of at
    most tau rows loses a correct row to a class of tau correct rows, where it is wrong)."""
    score = FlooredBalancedAccuracy(k, n_classes)
    worst = _worst_change(_score_value(score), range(n_classes), range(n_classes), m)
    assert worst <= score.sensitivity_of_mean(m) + 1e-12
    tau = score.tau(m)
    if n_classes == 3 and tau == int(tau) and m >= tau + 2:
        assert worst == pytest.approx(score.sensitivity_of_mean(m))


@pytest.mark.parametrize(("tau", "m"), [(2, 5), (3, 6), (4.5, 6)])
def test_floored_f1_bound(tau, m):
    """2 / tau, attained when a true negative becomes a true positive under the floor."""
    worst = _worst_change(_floored_f1(tau), [0, 1], [0, 1], m)
    assert worst == pytest.approx(2 / tau)


# ------------------------------------------------------------------------------------------
# In the search
# ------------------------------------------------------------------------------------------


def test_check_validation_score_dispatches_and_refuses():
    lr = DPLogisticRegression(data_norm=1.0)
    for name, classes in [("balanced_accuracy", [0, 1]), ("balanced_accuracy", [0, 1, 2]),
                          ("f1", [0, 1])]:
        score = check_validation_score(name, lr, np.array(classes))
        assert isinstance(score, ConfusionScore) and score.name == name
    with pytest.raises(ValueError, match="two declared classes.*balanced_accuracy"):
        check_validation_score("f1", lr, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="pos_label=1 .* not among"):
        check_validation_score("f1", lr, np.array(["no", "yes"]))
    with pytest.raises(ValueError, match="not a classifier"):
        check_validation_score("balanced_accuracy", None, None)
    with pytest.raises(ValueError, match="score_clip is not used"):
        check_validation_score("f1", lr, np.array([0, 1]), clip=1.0)


def _imbalanced(n, seed, share=0.1, shift=1.2):
    """Two features; ``share`` of the rows positive, shifted by ``shift`` in both."""
    rng = np.random.RandomState(seed)
    y = (rng.rand(n) < share).astype(int)
    X = np.clip(rng.standard_normal((n, 2)) + shift * y[:, None], -3.0, 4.0)
    return X, y


@pytest.mark.parametrize("scoring", ["balanced_accuracy", "f1"])
@pytest.mark.parametrize(("validation_size", "batched"), [(None, True), (0.2, True),
                                                          (0.2, False)])
def test_search_releases_with_the_score_sensitivity(scoring, validation_size, batched,
                                                    monkeypatch):
    """The Laplace mechanism gets the score's bound at the scored part's size -- all rows by
    default for batched runs, the validation part with one -- on both paths, and the
    accountant is charged the plan."""
    seen = []
    real = _holdout.Laplace

    def recording(**kw):
        seen.append(kw["sensitivity"])
        return real(**kw)

    monkeypatch.setattr(_holdout, "Laplace", recording)
    if not batched:
        monkeypatch.setattr(_holdout, "supports_batched_fits", lambda *args, **kwargs: False)
    X, y = _imbalanced(500, 0)
    acc = BudgetAccountant()
    search = DPRandomSearchCV(DPLogisticRegression(epsilon=1.0, data_norm=4.0),
                              {"C": [0.01, 1.0, 100.0]}, n_iter=3, scoring=scoring,
                              validation_size=validation_size, classes=[0, 1], random_state=0,
                              accountant=acc).fit(X, y)
    m = len(X) if validation_size is None else math.ceil(validation_size * len(X))
    assert seen and set(seen) == {ConfusionScore(scoring, [0, 1]).sensitivity_of_mean(m)}
    assert acc.spent_budget == [(search.privacy_spent_.epsilon, search.privacy_spent_.delta)]
    metric = balanced_accuracy_score if scoring == "balanced_accuracy" else f1_score
    assert search.score(X, y) == pytest.approx(metric(y, search.predict(X)))


def test_multiclass_balanced_accuracy_search_runs():
    rng = np.random.RandomState(0)
    y = rng.choice(3, size=600, p=[0.7, 0.2, 0.1])
    X = rng.standard_normal((600, 2)) + np.array([[0, 0], [2, 0], [0, 2]])[y]
    search = DPRandomSearchCV(GaussianNB(bounds=([-4, -4], [6, 6])),
                              {"var_smoothing": [1e-9, 1e-3]}, n_iter=2, epsilon=2.0,
                              scoring="balanced_accuracy", classes=[0, 1, 2],
                              random_state=0).fit(X, y)
    assert search.privacy_spent_.epsilon == pytest.approx(2.0)
    assert search.best_estimator_.classes_.tolist() == [0, 1, 2]


# A useful model and a near-constant one: GaussianNB with balanced priors against priors that
# all but rule out the positive class. On 10 % positives the useful model has balanced
# accuracy about 0.8 (F1 about 0.4) but accuracy about 0.8 too -- below the constant model's
# 0.9, whose balanced accuracy is 0.5 and F1 0.
USEFUL, CONSTANT = [0.5, 0.5], [1 - 1e-6, 1e-6]


def test_the_two_candidates_are_what_the_selection_test_says():
    X, y = _imbalanced(4000, 99)
    fits = {}
    for name, priors in (("useful", USEFUL), ("constant", CONSTANT)):
        model = GaussianNB(bounds=([-3, -3], [4, 4]), priors=priors, epsilon=10.0,
                           random_state=0).fit(X, y)
        fits[name] = model.predict(X)
    assert np.mean(fits["constant"] == 1) < 0.001
    assert balanced_accuracy_score(y, fits["useful"]) > 0.75
    assert np.mean(fits["useful"] == y) < 0.85 < np.mean(fits["constant"] == y)


def test_on_imbalanced_data_the_scores_select_the_useful_model():
    """Ten seeds (fixed law: six runs each, both candidates drawn in ~97 % of the searches):
    balanced accuracy and F1 select the useful model where accuracy selects the constant
    one, each search charged its planned total."""
    selected = {scoring: 0 for scoring in ("accuracy", "balanced_accuracy", "f1")}
    for seed in range(10):
        X, y = _imbalanced(2000, seed)
        for scoring in selected:
            acc = BudgetAccountant()
            search = DPRandomSearchCV(
                GaussianNB(bounds=([-3, -3], [4, 4])), {"priors": [USEFUL, CONSTANT]},
                n_iter=6, distribution="fixed", epsilon=6.0, scoring=scoring, classes=[0, 1],
                random_state=seed, accountant=acc).fit(X, y)
            assert acc.spent_budget == [(pytest.approx(6.0), 0.0)]
            selected[scoring] += search.best_params_["priors"] == USEFUL
    assert selected["accuracy"] <= 2
    assert selected["balanced_accuracy"] >= 8 and selected["f1"] >= 8


@pytest.mark.slow
def test_slow_count_forms_against_floors(monkeypatch):
    """The study of docs/random_search.md section 2.7: how often each score selects the useful
    model (200 seeds, fixed law, six runs): the count form of balanced accuracy against the
    floored forms at tau = m / (k C), k = 1, 2, 5 (at 10 % positives k = 5 puts the floor at
    the minority's count: the best floor, which no public rule can know), and accuracy."""
    import skdptune.random as random_module

    real = random_module.check_validation_score
    variants = {"accuracy": None, "count form": None, "floor k=1": 1, "floor k=2": 2,
                "floor k=5": 5, "f1": None}
    found = {}
    for share, epsilon in ((0.1, 2.0), (0.05, 4.0)):
        selected = dict.fromkeys(variants, 0)
        for seed in range(200):
            X, y = _imbalanced(2000, 2000 + seed, share=share)
            for variant, k in variants.items():
                floor = None if k is None else FlooredBalancedAccuracy(k, 2)
                monkeypatch.setattr(random_module, "check_validation_score",
                                    real if floor is None else lambda *a, f=floor, **kw: f)
                scoring = {"accuracy": "accuracy", "f1": "f1"}.get(variant, "balanced_accuracy")
                search = DPRandomSearchCV(
                    GaussianNB(bounds=([-3, -3], [4, 4])), {"priors": [USEFUL, CONSTANT]},
                    n_iter=6, distribution="fixed", epsilon=epsilon, scoring=scoring,
                    classes=[0, 1], random_state=2000 + seed).fit(X, y)
                selected[variant] += search.best_params_["priors"] == USEFUL
        found[share] = selected
    # measured: 10 %: accuracy 60, count form 168, floors 96 / 141 / 169, f1 170;
    #            5 %: accuracy 14, count form 174, floors 57 / 109 / 161, f1 163
    ten, five = found[0.1], found[0.05]
    assert ten["count form"] > ten["floor k=2"] + 15 and ten["floor k=2"] > ten["floor k=1"]
    assert ten["count form"] >= ten["floor k=5"] - 10
    assert five["count form"] > max(five[f"floor k={k}"] for k in (1, 2, 5))
    for selected in (ten, five):
        assert selected["accuracy"] < 70 < 150 < min(selected["count form"], selected["f1"])
