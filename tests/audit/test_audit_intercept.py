"""Audit of ``LogisticRegression`` with an intercept (docs/privacy.md, "diffprivlib's
LogisticRegression"; skdptune.estimators.models.InterceptColumnLogisticRegression).

diffprivlib leaves the intercept out of the ridge, and where its ``Vector`` mechanism adds no
extra ridge (``epsilon > 2 ln(1 + sqrt(q^2 + 1) C / 4)``) no finite epsilon holds for its
fit. skdptune fits such a model with a public constant column and no intercept instead.

**The pair** (replace-one): the user's rows ``D = {(x=0, y=1), (x=+1, y=1)}`` and
``D' = {(x=0, y=1), (x=-1, y=1)}``, plus the searches' public padding rows (``x=0``, one per
declared class); ``data_norm = 1``, ``C = 1``, ``epsilon = 1``: diffprivlib's first branch, and
a charge of 1.0. **The event**: ``intercept > 5`` and ``|coef + intercept| < 3`` (a large
intercept whose decision at ``x = +1`` is cancelled by the weight), chosen on a pilot of
3,000 fits a side with seeds that no run here uses (diffprivlib's fit: 0.97 % on ``D``,
0 on ``D'``), fixed before these runs.

Each audit runs seeded fits (``D``: seeds ``0..runs-1``; ``D'``: the next ``runs``) and checks
the Clopper-Pearson lower bound on epsilon (95 %) against the charge; the broken twin --
diffprivlib's own fit at the same charge, the pricing the searches had -- must be flagged above
it. The default suite audits the fit itself (the one-by-one path every search takes, and the
repetition's batched runs); the slow suite flags the broken twin (2,500 of diffprivlib's own
fits a side) and runs whole searches.
"""

import warnings

import numpy as np
import pytest
from _audit import epsilon_lower_bound
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from threadpoolctl import threadpool_limits

from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune.estimators.models._logistic import (
    LogisticRegressionAdapter,
    logistic_regression_epsilon,
)
from skdptune.evaluation import _holdout
from skdptune.evaluation._batched_runs import fit_runs
from skdptune.evaluation._fit import candidate_template, fit_on_rows
from skdptune.public import make_padding

CLAIM = 1.0
Y = np.array([1, 1])
SIDES = (np.array([[0.0], [1.0]]), np.array([[0.0], [-1.0]]))
PADDING = make_padding(SIDES[0], Y, np.array([0, 1]))


def _model(seed=None):
    return LogisticRegression(data_norm=1.0, C=1.0, epsilon=1.0, random_state=seed,
                              accountant=BudgetAccountant())


def _event(model) -> bool:
    coef, intercept = model.coef_[0, 0], model.intercept_[0]
    return bool(intercept > 5 and abs(coef + intercept) < 3)


def _bound(fitted_events, runs) -> float:
    """The lower bound from ``fitted_events(side, seeds)`` (events of those fits)."""
    k_d = sum(fitted_events(0, range(runs)))
    k_other = sum(fitted_events(1, range(runs, 2 * runs)))
    return max(epsilon_lower_bound(k_d, runs, k_other, runs),
               epsilon_lower_bound(runs - k_other, runs, runs - k_d, runs))


def _one_by_one(side, seeds):
    """The path of every search's partition fits, runs, GIBO fits and refit."""
    X = SIDES[side]
    return [_event(fit_on_rows(_model(seed), X, Y, None, {}, padding=PADDING))
            for seed in seeds]


def _diffprivlibs_own(side, seeds):
    """The broken twin: diffprivlib's fit, which the searches ran before."""
    X, y = np.vstack([SIDES[side], PADDING.X]), np.concatenate([Y, PADDING.y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [_event(_model(seed).fit(X, y)) for seed in seeds]


def _batched(side, seeds):
    """The repetition's batched runs, every seed's run in one solve."""
    seeds = list(seeds)
    template = candidate_template(_model(), {})
    models = fit_runs([template] * len(seeds), seeds, SIDES[side], Y, np.arange(2), PADDING,
                      1.0)
    return [_event(model) for model in models]


def test_the_pair_is_priced_at_the_claim():
    assert logistic_regression_epsilon(1.0, 1.0, 1.0, True, 2) == CLAIM


# the one-by-one fits (~5 s) run with the slow suite; the batched ones, the default path, here
@pytest.mark.parametrize("path, runs", [pytest.param(_one_by_one, 1000, marks=pytest.mark.slow),
                                        (_batched, 2500)])
def test_the_fit_with_an_intercept_meets_its_charge(path, runs):
    with threadpool_limits(limits=1, user_api="blas"):  # tiny fits: one BLAS thread is faster
        assert _bound(path, runs) <= CLAIM


@pytest.mark.slow
@pytest.mark.slowest
def test_diffprivlibs_own_fit_is_flagged():
    """At 2,500 fits a side: 0 of them on ``D'``, enough on ``D`` for a bound above 1. Slow
    (~40 s: diffprivlib's fit runs away, its solver iterates long); with fewer fits the event
    (0.97 % on ``D``) is too rare for a bound above 1 (1,000 fits: about 0.3)."""
    assert _bound(_diffprivlibs_own, 2500) > CLAIM


# -- whole searches (slow) --------------------------------------------------------------------
def _random(seed):
    return DPRandomSearchCV(_model(), {"C": [1.0]}, distribution="fixed", n_iter=1,
                            epsilon=None, validation_size=0, refit=False, classes=[0, 1],
                            random_state=seed, accountant=BudgetAccountant())


def _grid(seed):
    # one candidate: the refit's model (epsilon_model = 1) is what the pair can move
    return DPGridSearchCV(_model(), {"C": [1.0]}, epsilon=2.0, tuning_share=0.5,
                          n_partitions=1, min_partition_size=2, classes=[0, 1],
                          random_state=seed, accountant=BudgetAccountant())


def _gibo(seed):
    return DPGIBOSearchCV(_model(), {"C": (0.999, 1.001)}, n_iter=1, epsilon=2.0,
                          classes=[0, 1], random_state=seed, accountant=BudgetAccountant())


def _search_events(make):
    def events(side, seeds):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in seeds:
                out.append(_event(make(seed).fit(SIDES[side], Y).best_estimator_))
        return out
    return events


def _model_charge(search) -> float:
    """What the search charges for its returned model (the event reads that model only)."""
    search.fit(SIDES[0], Y)
    if isinstance(search, DPRandomSearchCV):
        return search.epsilon_model_
    return search.privacy_spent_.components[-1].epsilon


# _grid and _gibo are also `slowest` (~12 and ~19 min; make test-slow runs them, CI's make
# test-slow-ci runs _random alone): _gibo's refit gets the same seed, epsilon and rows as
# _grid's, and the event reads the refit alone, so its counts are _grid's (docs/audits.md)
@pytest.mark.slow
@pytest.mark.parametrize("make", [_random, pytest.param(_grid, marks=pytest.mark.slowest),
                                  pytest.param(_gibo, marks=pytest.mark.slowest)])
def test_each_search_meets_its_charge_and_the_old_fit_is_flagged(make, monkeypatch):
    runs = 4000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        charge = _model_charge(make(0))
    assert charge == pytest.approx(CLAIM)
    assert _bound(_search_events(make), runs) <= CLAIM
    # the broken twin: diffprivlib's own fit, one by one (the batched runs' old objective
    # is diffprivlib's)
    monkeypatch.setattr(LogisticRegressionAdapter, "sound_fit", None)
    monkeypatch.setattr(_holdout, "_batchable", lambda *args: False)
    assert _bound(_search_events(make), runs) > CLAIM
