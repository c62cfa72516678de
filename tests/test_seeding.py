"""Seeds of a search (skdptune/_seeding.py): the vectorised seeds are numpy's SeedSequence's."""

import numpy as np
import pytest

from skdptune._seeding import SeedPlan, derived_seeds
from skdptune.estimators import derived_seed as _derived_seed


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


# ----------------------------------------------------------------- the returned model's seeds


def _searches():
    import scipy.stats as st
    from diffprivlib.models import GaussianNB
    from diffprivlib.models import LogisticRegression as DPLR
    from diffprivlib.models import StandardScaler as DPScaler
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    from skdptune import DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV

    def pipe():
        return Pipeline([("scale", DPScaler(bounds=(-1.0, 1.0), epsilon=0.5)),
                         ("clf", DPLR(data_norm=2.0, epsilon=1.0))])

    def columns():  # the scaler a branch: its fitted clone lives in transformers_
        prep = ColumnTransformer([("scale", DPScaler(bounds=(-1.0, 1.0), epsilon=0.5), [0, 1])],
                                 remainder="passthrough")
        return Pipeline([("prep", prep), ("clf", DPLR(data_norm=2.0, epsilon=1.0))])

    return [
        DPGridSearchCV(columns(), {"clf__C": [0.1, 1.0]}, epsilon=1.0, classes=[0, 1],
                       random_state=0),
        DPRandomSearchCV(columns(), {"clf__C": [0.1, 1.0, 10.0]}, epsilon=3.0,
                         classes=[0, 1], random_state=0),
        DPGIBOSearchCV(columns(), {"clf__C": (0.1, 10.0, "log")}, epsilon=3.0,
                       classes=[0, 1], n_iter=2, random_state=0),
        DPGridSearchCV(GaussianNB(bounds=(-1.0, 1.0)), {"var_smoothing": [1e-9, 1e-3]},
                       epsilon=1.0, classes=[0, 1], random_state=0),
        DPGridSearchCV(pipe(), {"clf__C": [0.1, 1.0]}, epsilon=1.0, classes=[0, 1],
                       random_state=0),
        DPRandomSearchCV(pipe(), {"clf__C": st.loguniform(0.1, 10)}, epsilon=3.0,
                         classes=[0, 1], random_state=0),
        DPRandomSearchCV(pipe(), {"clf__C": st.loguniform(0.1, 10)}, epsilon=3.0,
                         classes=[0, 1], refit=False, random_state=0),
        DPGIBOSearchCV(DPLR(data_norm=2.0), {"C": (0.1, 10.0, "log")}, epsilon=3.0,
                       classes=[0, 1], n_iter=2, random_state=0),
    ]


@pytest.mark.parametrize("index", range(8))
def test_the_returned_model_does_not_carry_the_seed_of_its_noise(index):
    """A seeded search seeded each component of the returned model, and the seeds shipped with
    it: refitting ``clone(best_estimator_)`` on the two candidates for one record reproduced
    the released parameters exactly on the true one, 100/100 (docs/privacy.md, "Noise"). The
    search is still reproducible: the parameters are the same, the seeds are gone -- from
    every component, a ``ColumnTransformer``'s fitted clones in ``transformers_`` included
    (a review found a scaler branch's seed shipped there and matched a record exactly)."""
    from sklearn.base import clone

    from skdptune.estimators._walk import fitted_dp_components

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    search = _searches()[index]
    first = clone(search).fit(X, y).best_estimator_
    again = clone(search).fit(X, y).best_estimator_
    components = fitted_dp_components(first)
    assert components
    assert all(comp.random_state is None for comp in components)
    for a, b in zip(components, fitted_dp_components(again), strict=True):
        for name in ("coef_", "theta_", "mean_"):
            if hasattr(a, name):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
