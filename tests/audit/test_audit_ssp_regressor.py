"""Audit of ``SSPRegressor`` (skdptune.linear_model; docs/ssp_regressor.md).

**The pair** (replace-one; one feature, ``fit_intercept=True``, ``alpha="adaptive"``,
``bounds_X = bounds_y = (-1, 1)``, ``epsilon = 1``: the claim). Both datasets hold
``PADDING = 2000`` rows ``(x = +1, y = 0)`` and ``(x = -1, y = 0)``, half each, and one more row
at a corner: ``D`` has ``(x = 1, y = 1)``, ``D'`` has ``(x = 1, y = -20)``, which the sound fit
clips to the corner ``(1, -1)``.

*Why this pair.* The two extra rows have the same ``x``: the Gram matrix and its smallest
eigenvalue are the same on both sides, and ``Z^T t`` moves by ``(2, 2)`` -- its whole L1
sensitivity 4 (the pair that attains ``cross_sensitivity``). The two output distributions
therefore differ through the release of ``Z^T t`` alone, whose loss on this pair is exactly
``epsilon_cross = 0.543`` (``budget_split``: 0.95 of epsilon, shared 1.5 : 2 with the Gram
matrix); no pair moves all three releases by their whole sensitivities at once (the Gram
matrix's worst pair has ``z' = -z / 2``, the cross products' ``z' = z``), so basic
composition's total is not reached by any single pair. The padding rows make the Gram matrix
large against its noise (2001 against a scale of 5.5) and the ridge 0 (smallest eigenvalue
about 2000, margin 31): the coefficients are then nearly a fixed linear map of the noisy
``Z^T t``, and an event on them sees that release almost whole.

**The event**, fixed from that analysis before any run: ``u = H0 (coef, intercept)`` with the
public nominal Gram matrix ``H0 = [[n, 1], [1, n]]`` recovers the noisy ``Z^T t``; ``"upper"``
is both coordinates of ``u`` at least 1 (``D``'s values), ``"lower"`` both at most -1
(``D'``'s). Laplace tails give ``P_D[upper] = 1/4`` and ``P_D'[upper] = exp(-epsilon_cross)/4``.
:func:`family_audit` tries both events in both directions (Bonferroni) and gives the
Clopper-Pearson lower bound on epsilon at 95 %.

**Broken twins** on the same pair: without clipping, ``y = -20`` moves ``Z^T t`` by 21 per
coordinate (a loss of ``10.5 * 0.543 = 5.7``); with every noise scale divided by 5 (the
sensitivities "sized" five times too small), the loss is ``5 * 0.543 = 2.7``. Both must be
flagged above the claim.

The default suite runs the sound fit (1,000 fits a side, seeds ``0..999`` on ``D``, the next
1,000 on ``D'``) and the unclipped twin (400 a side), a few seconds; the slow suite runs the
sound fit at 20,000 a side (with a power check: the bound must approach ``epsilon_cross``),
the divided-noise twin, and a small-``n`` pair with the event chosen on half of the runs.
"""

from collections import Counter

import numpy as np
import pytest
from _audit import family_audit, split_audit
from diffprivlib import BudgetAccountant
from threadpoolctl import threadpool_limits

from skdptune import linear_model
from skdptune._mechanisms import Laplace
from skdptune.linear_model import (
    SSPRegressor,
    budget_split,
    cross_sensitivity,
    gram_sensitivity,
)

CLAIM = 1.0
PADDING = 2000
_ROWS = np.r_[np.ones(PADDING // 2), -np.ones(PADDING // 2), 1.0][:, None]
SIDES = ((_ROWS, np.r_[np.zeros(PADDING), 1.0]), (_ROWS, np.r_[np.zeros(PADDING), -20.0]))
_N = PADDING + 1
H0 = np.array([[_N, 1.0], [1.0, _N]])  # sum of x^2, sum of x; sum of x, n (the padding's x
# sums to 0, the extra row adds 1)
EVENTS = [{"upper"}, {"lower"}]


def _epsilon_cross() -> float:
    box = (np.array([-1.0]), np.array([1.0]))
    return budget_split(CLAIM, True, gram_sensitivity(*box, 1.0),
                        cross_sensitivity(*box, -1.0, 1.0, 1.0))[2]


def _model(seed):
    return SSPRegressor(epsilon=CLAIM, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0),
                        random_state=seed, accountant=BudgetAccountant())


def _outcome(model) -> str:
    u = H0 @ np.array([model.coef_[0], model.intercept_])
    if u[0] >= 1 and u[1] >= 1:
        return "upper"
    if u[0] <= -1 and u[1] <= -1:
        return "lower"
    return "other"


def _outcomes(sides, runs, outcome=_outcome):
    """``outcome`` of ``runs`` seeded fits on each side (seeds ``0..runs-1``, then the next)."""
    with threadpool_limits(limits=1, user_api="blas"):  # tiny solves: one BLAS thread
        return [[outcome(_model(seed).fit(*sides[side]))
                 for seed in range(side * runs, (side + 1) * runs)] for side in (0, 1)]


def _bound(runs):
    on_d, on_other = _outcomes(SIDES, runs)
    return family_audit(on_d, on_other, EVENTS)


class _FifthNoise(Laplace):
    """The fit's Laplace (diffprivlib's, :mod:`skdptune._mechanisms`) with the noise sized for
    a fifth of the sensitivity."""

    def __init__(self, *, epsilon, sensitivity, random_state=None):
        super().__init__(epsilon=epsilon, sensitivity=sensitivity / 5, random_state=random_state)


def test_the_pair_moves_only_the_cross_products_by_their_sensitivity():
    (X, y), (X_other, y_other) = SIDES
    z, z_other = np.hstack([X, np.ones((_N, 1))]), np.hstack([X_other, np.ones((_N, 1))])
    np.testing.assert_array_equal(z.T @ z, z_other.T @ z_other)
    np.testing.assert_array_equal(z.T @ z, H0)
    change = z.T @ y - z_other.T @ np.clip(y_other, -1, 1)
    assert np.abs(change).sum() == cross_sensitivity([-1.0], [1.0], -1.0, 1.0, 1.0) == 4.0
    assert 0.5 < _epsilon_cross() < CLAIM


def test_the_fit_meets_its_claim():
    result = _bound(1000)
    assert result.epsilon_lb <= CLAIM, result


def test_the_fit_without_clipping_is_flagged(monkeypatch):
    monkeypatch.setattr(linear_model, "_clip_rows", lambda X, y, bounds_X, bounds_y: (X, y))
    result = _bound(400)
    assert result.epsilon_lb > CLAIM, result


@pytest.mark.slow
def test_the_fit_meets_its_claim_and_the_audit_sees_the_release():
    """20,000 fits a side (~1-2 min): the bound stays below the claim and approaches the
    pair's exact loss ``epsilon_cross`` (0.543): the audit is not blind to the release."""
    result = _bound(20_000)
    assert 0.35 < result.epsilon_lb <= _epsilon_cross(), result


@pytest.mark.slow
def test_the_fit_with_a_fifth_of_the_noise_is_flagged(monkeypatch):
    monkeypatch.setattr(linear_model, "Laplace", _FifthNoise)
    result = _bound(2000)
    assert result.epsilon_lb > CLAIM, result


# -- small n: one row, both at corners, every release moved ------------------------------------
SMALL_SIDES = ((np.array([[1.0]]), np.array([1.0])), (np.array([[-1.0]]), np.array([-1.0])))
_EDGES = np.array([-0.5, -0.2, 0.0, 0.2, 0.5])


def _binned(model):
    """A coarse, fixed binning of everything the fitted model exposes."""
    return (int(np.digitize(model.coef_[0], _EDGES)), int(np.digitize(model.intercept_, _EDGES)),
            model.alpha_ > 0)


@pytest.mark.slow
def test_one_row_at_opposite_corners_meets_the_claim():
    """``n = 1``: ``(1, 1)`` against ``(-1, -1)`` moves the Gram matrix by 2 (of 2.25), the
    cross products by 2 (of 4); the ridge is large and random. The event is chosen on the first
    half of 10,000 fits a side among unions of the binned outcomes (:func:`split_audit`)."""
    on_d, on_other = _outcomes(SMALL_SIDES, 10_000, outcome=_binned)
    assert len(Counter(on_d)) > 10  # the binning separates the outputs
    result = split_audit(on_d, on_other)
    assert result.epsilon_lb <= CLAIM, result
