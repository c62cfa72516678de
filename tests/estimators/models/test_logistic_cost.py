"""The cost skdptune charges for diffprivlib's LogisticRegression
(skdptune.estimators.models._logistic, docs/privacy.md "diffprivlib's LogisticRegression"):
closed forms, and the properties the searches rely on (never below diffprivlib's epsilon,
nondecreasing in epsilon, suprema over the class count and over C)."""

import math

import numpy as np
import pytest
import scipy.stats as st
from diffprivlib.models import LogisticRegression

from skdptune import estimator_privacy
from skdptune.estimators import set_total_epsilon
from skdptune.estimators.models._logistic import logistic_regression_epsilon as cost


def test_closed_forms():
    # D > 0 branch, no intercept: e/2 + ln(1 + q (exp(e/4) - 1))
    assert cost(1.0, 10.0, 1.0, False, 2) == pytest.approx(
        0.5 + math.log1p(10 * math.expm1(0.25)), rel=1e-11)
    assert cost(1.0, 10.0, 1.0, False, 2) >= 0.5 + math.log1p(10 * math.expm1(0.25))
    # D = 0 branch (4 > 2 ln 3.5), no intercept: e - 2 ln(1 + qC/4) + ln(1 + q^2 C/4), or the
    # D > 0 bound at the branch point, whichever is larger
    branch = 2 * math.log1p(2.5)
    expected = max(4 - branch + math.log1p(25.0),
                   branch / 2 + math.log1p(10 * math.expm1(branch / 4)))
    assert cost(4.0, 10.0, 1.0, False, 2) == pytest.approx(expected, rel=1e-9)
    # with the intercept: the model skdptune fits, no intercept and a constant column 1, on
    # rows of norm sqrt(q^2 + 1) -- in both branches
    qe = math.sqrt(101.0)
    assert cost(1.0, 10.0, 1.0, True, 2) == pytest.approx(
        0.5 + math.log1p(qe * math.expm1(0.25)), rel=1e-11)
    branch = 2 * math.log1p(qe / 4)
    assert cost(4.0, 10.0, 1.0, True, 2) == pytest.approx(
        max(4 - branch + math.log1p(101 / 4), branch / 2 + math.log1p(qe * math.expm1(
            branch / 4))), rel=1e-9)
    for eps, q, C, k in [(0.3, 2.0, 0.01, 2), (3.0, 0.5, 30.0, 4), (1.0, 7.0, None, None)]:
        assert cost(eps, q, C, True, k) == cost(eps, math.hypot(q, 1.0), C, False, k)
    # k >= 3 classes: k one-vs-rest problems at epsilon / k
    assert cost(2.0, 10.0, 1.0, True, 5) == pytest.approx(5 * cost(0.4, 10.0, 1.0, True, 2),
                                                          rel=1e-11)
    assert cost(0.0, 10.0, 1.0, True, 2) == 0.0


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_never_below_diffprivlibs_epsilon_nor_above_it_for_unit_rows(fit_intercept):
    for eps in (0.01, 0.3, 1.0, 3.0, 9.0):
        for C in (1e-3, 0.1, 1.0, 30.0, None):
            for k in (2, 3, 7, None):
                assert cost(eps, 20.0, C, fit_intercept, k) >= eps
                if not fit_intercept:  # rows of norm 1: diffprivlib's analysis holds
                    assert cost(eps, 1.0, C, fit_intercept, k) == pytest.approx(eps, rel=1e-9)
    # the constant column makes the rows longer: never cheaper than without it
    for C in (0.01, 1.0, None):
        assert cost(1.0, 5.0, C, True, 2) >= cost(1.0, 5.0, C, False, 2)
    assert cost(1.0, 5.0, 1.0, True, 2) > cost(1.0, 5.0, 1.0, False, 2)


@pytest.mark.parametrize("norm", [0.5, 2.0, 10.0, 100.0])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_suprema_and_monotonicity(norm, fit_intercept):
    eps_grid = np.linspace(0.01, 10.0, 300)
    for C in (0.01, 0.5, 1.0, 10.0, 1000.0):
        values = [cost(e, norm, C, fit_intercept, 2) for e in eps_grid]
        # nondecreasing: a maximum over epsilons is sound
        assert all(b >= a for a, b in zip(values, values[1:], strict=False))
    for eps in (0.05, 1.0, 4.0):
        # over every C, and over every class count
        grid = max(cost(eps, norm, C, fit_intercept, 2) for C in np.logspace(-5, 5, 801))
        assert cost(eps, norm, None, fit_intercept, 2) >= grid
        for C in (0.01, 1.0, None):
            counts = max(cost(eps, norm, C, fit_intercept, k) for k in [2, *range(3, 400, 3)])
            assert cost(eps, norm, C, fit_intercept, None) >= counts


def test_the_searches_space_and_budgets_use_it():
    model = LogisticRegression(epsilon=1.0, data_norm=10.0)
    assert estimator_privacy(model, n_classes=2)[0] == cost(1.0, 10.0, 1.0, True, 2)
    # every listed C and data_norm is a setting (the cost is not monotone in them)
    space = {"C": [0.01, 1.0, 100.0], "data_norm": [1.0, 10.0]}
    assert estimator_privacy(model, space, n_classes=2)[0] == max(
        cost(1.0, q, C, True, 2) for C in space["C"] for q in space["data_norm"])
    # a distribution: the supremum over every C; over data_norm, its support's upper end
    assert estimator_privacy(model, {"C": st.loguniform(0.1, 10)}, n_classes=3)[0] == cost(
        1.0, 10.0, None, True, 3)
    assert estimator_privacy(model, {"data_norm": st.uniform(1, 4)}, n_classes=2)[0] == cost(
        1.0, 5.0, None, True, 2)
    with pytest.raises(ValueError, match="fit_intercept"):
        estimator_privacy(model, {"fit_intercept": st.randint(0, 2)})
    # budget modes solve for the epsilon that costs the total
    for k in (2, 4, None):
        scaled = set_total_epsilon(LogisticRegression(epsilon=1.0, data_norm=10.0), 1.0, k)
        charged = estimator_privacy(scaled, n_classes=k)[0]
        assert 1.0 - 1e-9 <= charged <= 1.0
        assert scaled.epsilon < 1.0


def test_the_fit_runs_on_the_branch_it_is_priced_for(monkeypatch):
    """diffprivlib picks its noise branch (extra ridge or not) from epsilon, C and data_norm in
    their own precision. With a float32 data_norm its test moved by ~1e-7 and a model priced
    just below the branch point ran on the other branch, proven for 3.02 where 2.46 was charged
    (docs/privacy.md, "diffprivlib's `LogisticRegression`: the objective-perturbation bound").
    The fits get the same values as Python floats: the branch that runs is the one priced, and
    what it is proven for stays within the charge."""
    import diffprivlib.models.logistic_regression as dp_logistic
    from diffprivlib.mechanisms import Vector

    from skdptune import DPGridSearchCV

    seen = []

    class Spy(Vector):
        def __init__(self, *, epsilon, dimension, function_sensitivity, data_sensitivity,
                     alpha, **kwargs):
            super().__init__(epsilon=epsilon, dimension=dimension, alpha=alpha,
                             function_sensitivity=function_sensitivity,
                             data_sensitivity=data_sensitivity, **kwargs)
            seen.append((epsilon, data_sensitivity, function_sensitivity, alpha))

    monkeypatch.setattr(dp_logistic, "Vector", Spy)
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(600, 3)) * 41).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    norm = np.linalg.norm(X, axis=1).max()  # a bound computed in float32
    assert isinstance(norm, np.float32)
    search = DPGridSearchCV(LogisticRegression(data_norm=norm, C=0.003, fit_intercept=False),
                            {"C": [0.003]}, epsilon=6.0, tuning_share=0.5, classes=[0, 1],
                            random_state=0, min_partition_size=50).fit(X, y)
    charged = search.privacy_split_["epsilon_model"]
    eps, data_sensitivity, curvature, alpha = seen[-1]  # the refit's objective perturbation
    assert type(data_sensitivity) is float
    q, C = float(norm), 0.003
    # diffprivlib's own test, in the precision of the values it gets
    ridge = eps - 2 * np.log(1 + curvature * data_sensitivity / alpha) <= 0
    if ridge:  # e/2 + ln(1 + q (exp(e/4) - 1)), no intercept
        proven = eps / 2 + math.log1p(q * math.expm1(eps / 4))
    else:
        proven = eps - 2 * math.log1p(q * C / 4) + math.log1p(q * q * C / 4)
    assert proven <= charged * (1 + 1e-9)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3, None])
def test_a_bound_that_overflows_is_refused_not_read_as_zero(fit_intercept, n_classes):
    """With data_norm above about 1e154 the bound's squares overflow; inf - inf once made it
    NaN, which ``max`` read as a cost of 0: ``estimator_privacy`` reported (0, 0) and a
    search's ``planned_privacy`` epsilon 0. Every huge data_norm gives a finite cost of at
    least ``epsilon``, or is refused."""
    for data_norm in (1e150, 1.4e154, 1e200, 1e308):
        for C in (1.0, None):
            try:
                value = cost(1.0, data_norm, C, fit_intercept, n_classes)
            except ValueError as exc:
                assert "No finite privacy cost" in str(exc)
                assert data_norm > 1e154
            else:
                assert math.isfinite(value) and value >= 1.0
    with pytest.raises(ValueError, match="No finite privacy cost"):
        estimator_privacy(LogisticRegression(epsilon=1.0, data_norm=1e200))
