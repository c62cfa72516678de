"""Seeds of a search (skdptune/_seeding.py): the vectorised seeds are numpy's SeedSequence's."""

import numpy as np
import pytest

from skdptune._estimators import _derived_seed
from skdptune._seeding import SeedPlan, derived_seeds


@pytest.mark.parametrize("random_state", [0, 7, 2**31 - 1, None])
def test_many_seeds_at_once_equal_one_by_one(random_state):
    plan = SeedPlan(random_state)  # None: a 128-bit entropy, four words
    keys = np.array([0, 1, 2, 31, 300, 2**20, 2**32 - 1])
    for candidate in (0, 5, 19):
        expected = [plan.seed("fit", candidate, int(j)) for j in keys]
        np.testing.assert_array_equal(plan.seeds("fit", candidate, keys), expected)
    np.testing.assert_array_equal(plan.seeds("split", keys), [plan.seed("split", int(j))
                                                              for j in keys])
    assert int(plan.seeds("fit", 3, 4)) == plan.seed("fit", 3, 4)
    # different keys, different seeds (the comparison above could fail)
    assert len(set(plan.seeds("fit", 0, keys).tolist())) == len(keys)


def test_derived_seeds_equal_derived_seed():
    seeds = np.random.RandomState(0).randint(0, 2**32, 500, dtype=np.int64)
    seeds[:3] = [0, 1, 2**32 - 1]
    np.testing.assert_array_equal(derived_seeds(seeds), [_derived_seed(int(s), "")
                                                         for s in seeds])
    assert derived_seeds(seeds).dtype == np.int64
    # a component's path (a pipeline step, nested, non-ASCII): its own seeds
    for path in ("model", "outer__inner__model", "modèle"):
        np.testing.assert_array_equal(derived_seeds(seeds[:50], path),
                                      [_derived_seed(int(s), path) for s in seeds[:50]])


def test_out_of_range_keys_are_refused():
    with pytest.raises(ValueError):
        SeedPlan(0).seeds("fit", 0, np.array([-1]))
    with pytest.raises(ValueError):
        derived_seeds(np.array([2**32]))
