"""DPRandomSearchCV's privacy figures against the accounting closed forms, law by law.

The accounting rules themselves (Corollary 3, Theorem 2 against an independent implementation
optimised on a fine grid of orders, corrected Theorem 6, Lemma 20, KOV composition) are tested
in ``tests/accounting/test_accounting.py``; this file checks what the *search* reports and spends:

* ``privacy_spent_`` = the repetition's cost for ``eps_Q = max(eps_model, epsilon_score)``
  (``eps_model + epsilon_score`` when the runs are scored on their fit rows)
  (pure ``(2 + eta) eps_Q`` at ``delta = 0``; ``min(pure, RDP, profile at delta)`` at
  ``delta > 0``; composition or profile for ``"fixed"``; Theorem 6 or profile for
  ``"poisson"``) plus the refit when ``refit=True``;
* budget mode lands on the requested total for every law, never above it, with the DP epsilons
  of the estimator scaled by one common factor;
* a budget that ``epsilon_score`` alone exceeds is refused with a clear error, before any data
  is touched.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from scipy.stats import loguniform
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.pipeline import Pipeline

from skdptune import DPRandomSearchCV, estimator_privacy
from skdptune.accounting import (
    kov_optimal_composition_epsilon,
    repetition_epsilon,
    repetition_profile_epsilon,
    repetition_pure_epsilon,
    repetition_rdp_epsilon,
)
from skdptune.estimators import set_total_epsilon
from skdptune.estimators.models._logistic import logistic_regression_epsilon

SPACE = {"var_smoothing": loguniform(1e-9, 1.0)}
EPS_MODEL = 0.7  # the model's cost under replace-one


def nb(cost):
    """A GaussianNB that costs ``cost`` under replace-one: with bounds (-1, 1) it pays 5/3 of
    its epsilon (skdptune.estimators.replace_one_factor)."""
    return GaussianNB(epsilon=cost * 3 / 5, bounds=(-1.0, 1.0))


# (distribution, eta, (2 + eta)) for the truncated negative binomial laws
TNB = [("logarithmic", None, 2.0), ("geometric", None, 3.0), ("negative_binomial", 0.5, 2.5),
       ("negative_binomial", -0.5, 1.5), ("negative_binomial", 2.0, 4.0)]
ALL_LAWS = [(d, eta) for d, eta, _ in TNB] + [("fixed", None), ("poisson", None)]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    return np.clip(X / 4, -1, 1), y


def search(distribution, eta=None, *, estimator=None, **kw):
    kw.setdefault("random_state", 0)
    kw.setdefault("accountant", BudgetAccountant())
    kw.setdefault("classes", [0, 1])
    estimator = nb(EPS_MODEL) if estimator is None \
        else estimator
    return DPRandomSearchCV(estimator, kw.pop("space", SPACE), distribution=distribution,
                            eta=eta, **kw)


def expected_tuning(eps_q, distribution, eta, n_iter, delta):
    """(epsilon, delta) of the repetition, from the closed forms (not from the search)."""
    if distribution == "fixed":
        candidates = [(n_iter * eps_q, 0.0)]
        if delta > 0:
            candidates.append((kov_optimal_composition_epsilon(eps_q, n_iter, delta), delta))
            candidates.append((repetition_profile_epsilon(eps_q, "fixed", n_iter, None, delta),
                               delta))
        return min(candidates)
    if distribution == "poisson":
        return min(repetition_rdp_epsilon(eps_q, "poisson", n_iter, None, delta),
                   repetition_profile_epsilon(eps_q, "poisson", n_iter, None, delta)), delta
    pure = repetition_pure_epsilon(eps_q, distribution, eta)
    if delta == 0:
        return pure, 0.0
    rdp = repetition_rdp_epsilon(eps_q, distribution, n_iter, eta, delta)
    profile = repetition_profile_epsilon(eps_q, distribution, n_iter, eta, delta)
    best = min(rdp, profile)
    return (best, delta) if best < pure else (pure, 0.0)


# --------------------------------------------------------------------------------------------
# privacy_spent_ without budget mode (epsilon=None: the estimator as configured)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize(("distribution", "eta", "factor"), TNB)
def test_pure_bound_is_2_plus_eta_times_eps_q(data, distribution, eta, factor, refit):
    s = search(distribution, eta, n_iter=5, epsilon=None, refit=refit).fit(*data)
    tuning = s.privacy_spent_.components[0]
    assert tuning.epsilon == pytest.approx(factor * EPS_MODEL, rel=1e-12)
    assert tuning.delta == 0.0 and "Cor. 3" in tuning.detail
    assert s.privacy_spent_.epsilon == pytest.approx((factor + refit) * EPS_MODEL, rel=1e-12)
    assert len(s.privacy_spent_.components) == 1 + refit
    assert s.privacy_spent_.delta == 0.0


@pytest.mark.parametrize("refit", [True, False])
def test_fixed_is_basic_composition(data, refit):
    s = search("fixed", n_iter=6, epsilon=None, refit=refit).fit(*data)
    assert s.privacy_spent_.epsilon == pytest.approx((6 + refit) * EPS_MODEL, rel=1e-12)
    assert s.privacy_spent_.delta == 0.0


@pytest.mark.parametrize("n_iter", [2, 8])
@pytest.mark.parametrize(("distribution", "eta"), ALL_LAWS)
def test_delta_gives_the_smallest_of_pure_rdp_and_profile(data, distribution, eta, n_iter):
    # eps_Q = 2: with 2 runs Theorem 2 is well below Corollary 3 (geometric: 3.39 vs 6), and
    # the privacy profile below both
    eps_q, delta = 2.0, 1e-6
    estimator = nb(eps_q)
    s = search(distribution, eta, estimator=estimator, n_iter=n_iter, epsilon=None,
               delta=delta, refit=True).fit(*data)
    eps, dlt = expected_tuning(eps_q, distribution, eta, n_iter, delta)
    assert s.privacy_spent_.components[0].epsilon == pytest.approx(eps, rel=1e-9)
    assert s.privacy_spent_.epsilon == pytest.approx(eps + eps_q, rel=1e-9)
    assert s.privacy_spent_.delta == pytest.approx(dlt)
    assert s.privacy_spent_.epsilon == pytest.approx(
        repetition_epsilon(eps_q, 0.0, distribution, n_iter, eta, delta) + eps_q, rel=1e-12)
    if n_iter == 2 and distribution in ("logarithmic", "geometric"):
        assert eps < repetition_pure_epsilon(eps_q, distribution) - 0.5  # not the pure route
        assert eps < repetition_rdp_epsilon(eps_q, distribution, n_iter, eta, delta)


@pytest.mark.parametrize(("epsilon_score", "eps_q"), [(0.3, EPS_MODEL), (1.9, 1.9)])
def test_one_run_costs_the_max_of_model_and_score(data, epsilon_score, eps_q):
    s = search("geometric", n_iter=4, epsilon=None, epsilon_score=epsilon_score,
               refit=True).fit(*data)
    assert s.epsilon_run_ == pytest.approx(eps_q)
    # parallel composition on the fixed split: max(eps_model, eps_score), not the sum
    assert s.privacy_spent_.epsilon == pytest.approx(3 * eps_q + EPS_MODEL, rel=1e-12)
    # the tuning line's breakdown: the run, its model, its score
    run, fit, score = s.privacy_spent_.components[0].parts
    assert [run.epsilon, fit.epsilon, score.epsilon] == pytest.approx(
        [eps_q, EPS_MODEL, epsilon_score], rel=1e-12)
    assert "larger" in run.detail and "train part" in fit.name


@pytest.mark.parametrize(("epsilon_score", "eps_score"), [(None, EPS_MODEL / 4), (0.3, 0.3)])
@pytest.mark.parametrize(("distribution", "eta", "factor"), TNB[:3])
def test_a_run_scored_on_its_fit_rows_costs_the_sum(data, distribution, eta, factor,
                                                    epsilon_score, eps_score):
    """validation_size=0: the score reads the rows the model is fitted on -- sequential
    composition, eps_model + epsilon_score (by default a quarter of eps_model)."""
    s = search(distribution, eta, n_iter=4, epsilon=None, epsilon_score=epsilon_score,
               validation_size=0, refit=True).fit(*data)
    eps_q = EPS_MODEL + eps_score
    assert s.epsilon_run_ == pytest.approx(eps_q, rel=1e-12)
    assert s.privacy_spent_.epsilon == pytest.approx(factor * eps_q + EPS_MODEL, rel=1e-12)
    run, fit, score = s.privacy_spent_.components[0].parts
    assert [run.epsilon, fit.epsilon, score.epsilon] == pytest.approx(
        [eps_q, EPS_MODEL, eps_score], rel=1e-12)
    assert "sum" in run.detail and "all rows" in fit.name and "all rows" in score.name


@pytest.mark.parametrize("distribution", ["geometric", "logarithmic"])
def test_budget_mode_with_runs_scored_on_their_fit_rows(data, distribution):
    total = 1.3
    s = search(distribution, n_iter=4, epsilon=total, validation_size=0).fit(*data)
    factor = 3.0 if distribution == "geometric" else 2.0
    assert s.privacy_spent_.epsilon <= total
    assert s.privacy_spent_.epsilon == pytest.approx(total, rel=1e-9)
    assert s.epsilon_run_ == pytest.approx(total / factor, rel=1e-9)
    # the model gets four fifths of the run, the score one fifth
    model_cost = estimator_privacy(s.best_estimator_)[0]
    assert model_cost == pytest.approx(0.8 * total / factor, rel=1e-9)
    assert s.best_estimator_.epsilon == pytest.approx(model_cost * 3 / 5, rel=1e-12)
    # planned before any data, the breakdown says the same
    parts = s.planned_privacy(len(data[1])).components[0].parts
    assert parts[1].epsilon == pytest.approx(model_cost, rel=1e-12)
    assert parts[2].epsilon == pytest.approx(0.2 * total / factor, rel=1e-9)


@pytest.mark.parametrize("refit", [False, True])
def test_default_validation_size_costs_the_sum_where_the_runs_are_batched(data, refit):
    """validation_size=None on a batched LogisticRegression: no validation part, so a run costs
    eps_model + eps_model / 4 (3 of them for the geometric law, plus the refit); on GaussianNB
    a validation part, so a run costs eps_model."""
    batched = search("geometric", estimator=LogisticRegression(epsilon=EPS_MODEL, data_norm=1.0),
                     space={"C": [0.1, 1.0]}, n_iter=4, epsilon=None, refit=refit).fit(*data)
    assert batched.epsilon_run_ == pytest.approx(1.25 * EPS_MODEL, rel=1e-12)
    assert batched.privacy_spent_.epsilon == pytest.approx(
        3 * 1.25 * EPS_MODEL + refit * EPS_MODEL, rel=1e-12)
    split = search("geometric", n_iter=4, epsilon=None, refit=refit).fit(*data)
    assert split.epsilon_run_ == pytest.approx(EPS_MODEL, rel=1e-12)
    assert split.privacy_spent_.epsilon == pytest.approx((3 + refit) * EPS_MODEL, rel=1e-12)


class _OwnGenerator:
    """A user distribution that ignores ``random_state`` (its own generator): ``tol`` = 1e-2
    (the runs fitted one by one) in one draw of a hundred, so whether the runs are batched --
    a question asked of 32 draws of the space -- changes from one asking to the next."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def rvs(self, random_state=None):
        return 1e-4 if self.rng.rand() < 0.99 else 1e-2


def test_the_validation_size_is_decided_once_per_fit(data, monkeypatch):
    """Within one fit the split, the score's epsilon and the charge follow one decision, even
    when the decision's sampling of the space is not reproducible: the epsilon the runs spend
    (the evaluator's split and epsilon_score) is the one reported and charged."""
    from skdptune.evaluation import _holdout

    seen = {}
    real = _holdout.HoldoutEvaluator.run

    def run(self, X, y, candidates, split, *args, **kwargs):
        seen.update(all_rows=len(split[1]) == len(X), eps_score=self.epsilon_score)
        return real(self, X, y, candidates, split, *args, **kwargs)

    monkeypatch.setattr(_holdout.HoldoutEvaluator, "run", run)
    decisions = set()
    for seed in range(30):
        accountant = BudgetAccountant()
        s = search("geometric", estimator=LogisticRegression(epsilon=1.0, data_norm=2.0),
                   space={"tol": _OwnGenerator(seed)}, n_iter=3, epsilon=None,
                   accountant=accountant).fit(*data)
        spent = max(1.0, seen["eps_score"]) if not seen["all_rows"] else 1.0 + seen["eps_score"]
        run_part, fit, score = s.privacy_spent_.components[0].parts
        assert run_part.epsilon == pytest.approx(spent, rel=1e-12)
        assert score.epsilon == pytest.approx(seen["eps_score"], rel=1e-12)
        assert ("all rows" in fit.name) == seen["all_rows"]
        assert accountant.spent_budget == [(pytest.approx(3 * spent, rel=1e-12), 0.0)]
        decisions.add(seen["all_rows"])
    assert decisions == {True, False}  # the decision did change between fits


# --------------------------------------------------------------------------------------------
# budget mode
# --------------------------------------------------------------------------------------------


def check_lands_on(s, total, distribution, eta, n_iter, delta, refit):
    spent = s.privacy_spent_
    assert spent.epsilon <= total
    assert spent.epsilon == pytest.approx(total, rel=1e-9)
    # the closed form, recomputed from the reported per-run epsilon, gives the same total
    eps_q = s.epsilon_run_
    eps, dlt = expected_tuning(eps_q, distribution, eta, n_iter, delta)
    assert eps + refit * eps_q == pytest.approx(total, rel=1e-9)
    assert spent.delta == pytest.approx(dlt)
    assert s.accountant.spent_budget == [(spent.epsilon, spent.delta)]


@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize(("distribution", "eta"), [(d, e) for d, e in ALL_LAWS
                                                   if d != "poisson"])
def test_budget_mode_pure(data, distribution, eta, refit):
    total, n_iter = 1.3, 4
    s = search(distribution, eta, n_iter=n_iter, epsilon=total, refit=refit).fit(*data)
    check_lands_on(s, total, distribution, eta, n_iter, 0.0, refit)
    assert s.epsilon_model_ == pytest.approx(s.epsilon_run_)  # a validation part: max(model, score)
    assert estimator_privacy(s.best_estimator_)[0] == pytest.approx(s.epsilon_model_, rel=1e-9)


@pytest.mark.parametrize("refit", [True, False])
@pytest.mark.parametrize(("distribution", "eta"), [
    ("logarithmic", None), ("geometric", None), ("negative_binomial", -0.5), ("fixed", None),
    ("poisson", None)])
def test_budget_mode_with_delta(data, distribution, eta, refit):
    total, n_iter, delta = 2.0, 3, 1e-5
    s = search(distribution, eta, n_iter=n_iter, epsilon=total, delta=delta,
               refit=refit).fit(*data)
    check_lands_on(s, total, distribution, eta, n_iter, delta, refit)
    if distribution != "fixed":  # few runs: a delta route (the profile) was the one that landed
        assert s.privacy_spent_.delta == pytest.approx(delta)


@pytest.mark.parametrize("refit", [True, False])
def test_budget_mode_prices_each_candidate_keeping_its_ratios(data, refit):
    """Budget mode gives every candidate the DP epsilons that make it cost the model's share,
    in the ratios the estimator has: a diffprivlib ``LogisticRegression`` costs more than its
    ``epsilon`` at ``data_norm > 1``, differently for each ``C``, so one common factor would
    give the cheap candidates the noise of the dearest."""
    pipe = Pipeline([("scale", StandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))),
                     ("clf", LogisticRegression(epsilon=1.5, data_norm=3.0))])
    # a validation part: a run costs max(model, score), the closed form below
    s = search("logarithmic", estimator=pipe, space={"clf__C": loguniform(1e-2, 1e2)},
               n_iter=3, epsilon=1.2, refit=refit, validation_size=0.2).fit(*data)
    check_lands_on(s, 1.2, "logarithmic", None, 3, 0.0, refit)
    model = s.best_estimator_.get_params()
    factor = model["scale__epsilon"] / 0.5
    assert model["clf__epsilon"] == pytest.approx(1.5 * factor, rel=1e-12)  # the ratio kept
    # the closed form: the scaler's epsilon plus the model's objective-perturbation cost at the
    # chosen C, for the declared two classes, is the model's share
    assert 0.5 * factor + logistic_regression_epsilon(
        1.5 * factor, 3.0, model["clf__C"], True, 2) == pytest.approx(s.epsilon_model_,
                                                                      rel=1e-9)
    assert s.privacy_spent_.components[0].parts[1].epsilon == s.epsilon_model_
    # a dearer C (more curvature: a larger C) gets a smaller epsilon for the same cost
    dear = Pipeline([("scale", StandardScaler(epsilon=0.5, bounds=(-1.0, 1.0))),
                     ("clf", LogisticRegression(epsilon=1.5, data_norm=3.0, C=100.0))])
    cheap = clone(dear).set_params(clf__C=1e-2)
    eps = [set_total_epsilon(p, s.epsilon_model_, n_classes=2)[1].epsilon for p in (dear, cheap)]
    assert eps[0] < eps[1]
    # the user's estimator is left as configured
    assert pipe.get_params()["scale__epsilon"] == 0.5


def test_budget_mode_with_a_fixed_score_budget(data):
    # the noisy scores keep their epsilon; the model epsilon is scaled to fill the rest
    s = search("logarithmic", n_iter=4, epsilon=1.5, epsilon_score=0.5, refit=True).fit(*data)
    check_lands_on(s, 1.5, "logarithmic", None, 4, 0.0, True)
    assert s.epsilon_run_ == pytest.approx(0.5)  # 2 * 0.5 (runs) + 0.5 (refit) = 1.5
    assert s.epsilon_model_ == pytest.approx(0.5)


@pytest.mark.parametrize("refit", [True, False])
def test_budget_below_what_the_scores_cost_is_refused_before_touching_data(data, refit):
    acc = BudgetAccountant()
    # refit=False: 2 * epsilon_score = 1.0 is exactly the budget, so nothing is left for the
    # model (this used to pick a model epsilon of 1e-9 and hang in diffprivlib)
    with pytest.raises(ValueError, match="epsilon_score"):
        search("logarithmic", n_iter=4, epsilon=1.0, epsilon_score=0.5, refit=refit,
               accountant=acc).fit(*data)
    assert acc.spent_budget == []


def test_accounting_is_data_independent(data):
    X, y = data
    flipped = search("poisson", n_iter=3, delta=1e-5, epsilon=1.0).fit(X, 1 - y)
    plain = search("poisson", n_iter=3, delta=1e-5, epsilon=1.0, random_state=1).fit(X, y)
    assert flipped.privacy_spent_ == plain.privacy_spent_
    assert math.isclose(flipped.epsilon_run_, plain.epsilon_run_)
