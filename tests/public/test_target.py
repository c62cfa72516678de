"""skdptune.public._target: a regressor's declared target range, and its domain check."""

import numpy as np
import pytest
from diffprivlib.models import LinearRegression as DPLinear
from diffprivlib.models import LogisticRegression as DPLR
from diffprivlib.models import StandardScaler as DPScaler
from sklearn.pipeline import make_pipeline

from skdptune import DomainError
from skdptune.evaluation._fit import candidate_templates
from skdptune.public import check_domain, resolve_target_range


def test_a_classifier_has_no_target_range():
    assert resolve_target_range(DPLR()) is None


def test_the_range_is_the_regressors_bounds_on_y(stand_in_regressor):
    reg = DPLinear(bounds_X=(-1, 1), bounds_y=(-2, 5))
    assert resolve_target_range(reg) == (-2.0, 5.0)
    pipe = make_pipeline(DPScaler(bounds=(-1, 1)), reg)
    assert resolve_target_range(pipe) == (-2.0, 5.0)


def test_candidates_with_different_ranges_give_their_union(stand_in_regressor):
    reg = DPLinear(bounds_X=(-1, 1), bounds_y=(0, 1))
    space = [{"bounds_y": [(0, 1), (-3, 0.5)]}]
    templates = candidate_templates(reg, [{"bounds_y": b} for b in space[0]["bounds_y"]])
    assert resolve_target_range(reg, templates) == (-3.0, 1.0)


def test_a_regressor_without_a_range_is_refused(stand_in_regressor):
    with pytest.raises(ValueError, match="range of y as public information"):
        resolve_target_range(DPLinear(bounds_X=(-1, 1)))


def test_targets_outside_the_range_are_out_of_the_domain():
    X = np.zeros((4, 2))
    y = np.array([0.0, 1.0, 0.5, 1.0])
    assert check_domain(X, y, None, allow_nan=False, target_range=(0.0, 1.0)) is y
    for bad in (1.0 + 1e-12, -1e-12, np.nan):
        y_bad = y.copy()
        y_bad[2] = bad
        with pytest.raises(DomainError) as info:
            check_domain(X, y_bad, None, allow_nan=False, target_range=(0.0, 1.0))
        # the message names the rule and the declared (public) range, never a value or a row
        assert "0.5" not in str(info.value) and str(bad) not in str(info.value)
    # without a declared range any finite target is in the domain
    check_domain(X, y * 100, None, allow_nan=False)
