"""BoxSpace: real parameters in a box, to and from the unit cube, and what it refuses."""

import math

import numpy as np
import pytest
from scipy.stats import loguniform

from skdptune._space import BoxSpace, EpsilonSplit, check_box_space


def test_round_trip_and_scales():
    space = BoxSpace({"C": (1e-2, 1e2, "log"), "alpha": (-1.0, 3.0)})
    assert space.names == ("C", "alpha") and space.n_dims == 2
    mid = space.from_unit([0.5, 0.5])
    assert mid["C"] == pytest.approx(1.0)  # the geometric mean on a log scale
    assert mid["alpha"] == pytest.approx(1.0)  # the arithmetic mean on a linear one
    z = np.random.default_rng(0).uniform(size=(50, 2))
    for point in z:
        np.testing.assert_allclose(space.to_unit(space.from_unit(point)), point, atol=1e-12)


def test_from_unit_stays_inside_the_box():
    space = BoxSpace({"C": (1e-3, 1e2, "log"), "alpha": (0.0, 1.0)})
    for z in ([1.0, 1.0], [-0.5, 2.0], [0.0, 0.0], [1.5, -1.0]):
        params = space.from_unit(z)
        assert 1e-3 <= params["C"] <= 1e2 and 0.0 <= params["alpha"] <= 1.0
    assert space.from_unit([-0.5, 2.0]) == {"C": pytest.approx(1e-3), "alpha": 1.0}
    with pytest.raises(ValueError, match="shape"):
        space.from_unit([0.5])
    with pytest.raises(ValueError, match="missing"):
        space.to_unit({"C": 1.0})


def test_corners():
    corners = BoxSpace({"a": (0.0, 1.0), "b": (0.0, 1.0), "c": (1.0, 2.0)}).corners()
    assert corners.shape == (8, 3)
    assert {tuple(c) for c in corners} == set(np.ndindex(2, 2, 2))


def test_check_box_space_passes_a_box_through():
    space = BoxSpace({"C": (0.1, 1.0)})
    assert check_box_space(space) is space
    assert isinstance(check_box_space({"C": (0.1, 1.0)}), BoxSpace)
    assert repr(space) == "BoxSpace({'C': (0.1, 1)})"


@pytest.mark.parametrize(("space", "match"), [
    ({}, "non-empty dict"),
    ([("C", (0.1, 1.0))], "non-empty dict"),
    ({"": (0.1, 1.0)}, "non-empty strings"),
    ({"C": (1.0, 0.1)}, "low must be smaller"),
    ({"C": (1.0, 1.0)}, "low must be smaller"),
    ({"C": (0.0, 1.0, "log")}, "log scale needs low > 0"),
    ({"C": (0.1, 1.0, "sqrt")}, "must be 'log'"),
    ({"max_depth": (1, 10)}, "integer-valued parameters are not supported"),
    ({"kernel": ["rbf", "linear"]}, "categorical or integer"),
    ({"C": [0.1, 1.0]}, "grid or random search"),
    ({"C": loguniform(1e-3, 1e2)}, r"\(low, high, 'log'\) for loguniform"),
    ({"C": (0.1, math.inf)}, "finite"),
    ({"C": ("a", "b")}, "real numbers"),
    ({"C": (False, 1.0)}, "real numbers"),
    ({"C": (0.1,)}, "expected \\(low, high\\)"),
])
def test_refused_spaces(space, match):
    with pytest.raises(ValueError, match=match):
        BoxSpace(space)


def test_share_extremes_reach_each_steps_largest_and_smallest_share():


    names = ["a__epsilon", "b__epsilon", "c__epsilon"]
    m, k = 0.05, 3
    space = BoxSpace({"C": (0.1, 10.0, "log"), "split": EpsilonSplit(names, min_share=m)})
    points = space.share_extremes()
    assert len(points) == 2 * k  # with three steps no two extremes coincide
    shares = [space.from_unit(z) for z in points]
    assert all(p["C"] == pytest.approx(1.0) for p in shares)  # the centre elsewhere
    for name in names:
        values = [p[name] for p in shares]
        assert max(values) == pytest.approx(1 / (1 + (k - 1) * m))
        assert min(values) == pytest.approx(m / (m + k - 1))
    # the extremes bound every point of the cube
    rng = np.random.RandomState(0)
    for z in rng.uniform(size=(200, space.n_dims)):
        p = space.from_unit(z)
        assert all(m / (m + k - 1) - 1e-12 <= p[n] <= 1 / (1 + (k - 1) * m) + 1e-12
                   for n in names)
    assert BoxSpace({"C": (0.1, 10.0)}).share_extremes() == []
    two = BoxSpace({"s": EpsilonSplit(names[:2])}).share_extremes()
    assert len(two) == 2  # a step's largest share is the other's smallest


# -- ArrayRange as a distribution (DPRandomSearchCV's param_distributions) ---------------------
def test_array_range_draws_stay_in_the_box_on_their_scales():
    from scipy import stats

    from skdptune._space import ArrayRange

    box = ArrayRange(low=[[0.0, -5.0], [10.0, 1.0]], high=[[9.0, -1.0], [2e6, 1e3]],
                     log=[[False, False], [True, True]], as_tuple=True)
    rng = np.random.RandomState(0)
    draws = [box.rvs(random_state=rng) for _ in range(2000)]
    assert all(isinstance(d, tuple) and len(d) == 2 and d[0].shape == (2,) for d in draws)
    lower = np.array([d[0] for d in draws])
    upper = np.array([d[1] for d in draws])
    assert (lower >= [0.0, -5.0]).all() and (lower <= [9.0, -1.0]).all()
    assert (upper >= [10.0, 1.0]).all() and (upper <= [2e6, 1e3]).all()
    # uniform on the linear entries, log-uniform on the log ones (Kolmogorov-Smirnov)
    assert stats.kstest(lower[:, 0], stats.uniform(0.0, 9.0).cdf).pvalue > 1e-3
    assert stats.kstest(np.log(upper[:, 0]),
                        stats.uniform(np.log(10.0), np.log(2e5)).cdf).pvalue > 1e-3
    assert stats.kstest(lower[:, 0], stats.uniform(0.0, 4.5).cdf).pvalue < 1e-6  # can fail
    # seeded: reproducible; an int, a RandomState or a Generator, as scipy's rvs takes them
    np.testing.assert_array_equal(box.rvs(random_state=3)[1], box.rvs(random_state=3)[1])
    assert box.rvs(random_state=np.random.default_rng(0))[0].shape == (2,)
    plain = ArrayRange(low=[0.0, 1.0], high=[1.0, 2.0])
    assert isinstance(plain.rvs(random_state=0), np.ndarray)


def test_array_range_large_linear_entries_do_not_overflow():
    """The map from the cube took ``exp`` of every entry and kept it only on the log ones: a
    linear entry of 1e3 overflowed, a RuntimeWarning printed from a search's fit."""
    import warnings

    from skdptune._space import ArrayRange

    box = ArrayRange(low=[[0.0], [10.0]], high=[[9.0], [1e6]], as_tuple=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lower, upper = BoxSpace({"bounds": box}).from_unit([1.0, 1.0])["bounds"]
        box.rvs(random_state=0)
    assert lower.tolist() == [9.0] and upper.tolist() == [1e6]
