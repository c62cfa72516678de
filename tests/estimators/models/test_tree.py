"""skdptune.estimators.models._tree: diffprivlib's decision tree with separate generators for
its structure, its non-empty leaves (permute-and-flip) and its empty leaves."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier
from diffprivlib.utils import BudgetError, PrivacyLeakWarning
from scipy import stats

from skdptune.estimators.models import SeparateStreamsDecisionTreeClassifier, _tree

N_FEATURES = 4
BOUNDS = (np.zeros(N_FEATURES), np.ones(N_FEATURES))


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_FEATURES))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def _tree_of(cls, random_state=None, max_depth=3, epsilon=1.0, **kwargs):
    kwargs.setdefault("accountant", BudgetAccountant())
    return cls(max_depth=max_depth, epsilon=epsilon, bounds=BOUNDS, classes=[0, 1],
               random_state=random_state, **kwargs)


def _structure(model):
    return model.tree_.feature.copy(), model.tree_.threshold.copy()


def _classes_of_leaves(model):
    leaves = np.flatnonzero(model.tree_.children_left == -1)
    return leaves, np.argmax(model.tree_.value[leaves, 0, :], axis=1)


# --- a drop-in for diffprivlib's class ---------------------------------------------------------

def test_fits_and_predicts_like_diffprivlibs_tree():
    X, y = _data()
    ours = _tree_of(SeparateStreamsDecisionTreeClassifier, 0).fit(X, y)
    theirs = _tree_of(DecisionTreeClassifier, 0).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.n_features_in_ == theirs.n_features_in_ == N_FEATURES
    assert ours.n_classes_ == theirs.n_classes_ == 2
    assert ours.tree_.node_count == theirs.tree_.node_count == 2 ** 4 - 1
    assert ours.tree_.value.shape == theirs.tree_.value.shape
    assert ours.tree_.feature.shape == theirs.tree_.feature.shape
    assert set(np.unique(ours.predict(X))) <= {0, 1}
    assert ours.predict_proba(X).shape == (len(X), 2)
    ours_params, theirs_params = ours.get_params(), theirs.get_params()
    assert ours_params.keys() == theirs_params.keys()
    assert all(ours_params[k] is theirs_params[k] or np.all(ours_params[k] == theirs_params[k])
               for k in ours_params if k != "accountant")


def test_the_class_only_swaps_methods():
    assert "__init__" not in vars(SeparateStreamsDecisionTreeClassifier)
    assert "__slots__" not in vars(SeparateStreamsDecisionTreeClassifier)
    X, y = _data()
    model = _tree_of(DecisionTreeClassifier, 3)
    before = model.get_params()
    model.__class__ = SeparateStreamsDecisionTreeClassifier
    assert model.get_params() == before
    model.fit(X, y)
    model.__class__ = DecisionTreeClassifier
    assert model.get_params().keys() == before.keys()
    assert model.get_params()["random_state"] == 3
    assert model.predict(X).shape == (len(X),)
    model.fit(X, y)  # diffprivlib's own fit again


def test_same_validation_warnings_and_accounting_as_diffprivlib():
    X, y = _data()
    caught = {}
    for cls in (SeparateStreamsDecisionTreeClassifier, DecisionTreeClassifier):
        accountant = BudgetAccountant(epsilon=1.5)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            cls(max_depth=2, epsilon=1.0, random_state=0, accountant=accountant).fit(X, y)
        caught[cls] = [(w.category, str(w.message)) for w in record]
        assert accountant.spent_budget == [(1.0, 0)]
        with pytest.raises(BudgetError):  # checked before anything is drawn
            _tree_of(cls, 0, accountant=accountant).fit(X, y)
        assert accountant.spent_budget == [(1.0, 0)]
        with pytest.raises(ValueError):
            _tree_of(cls, 0, max_depth=-1).fit(X, y)
    ours, theirs = caught.values()
    assert ours == theirs and [c for c, _ in ours] == [PrivacyLeakWarning] * 2


# --- numpy's global generator ------------------------------------------------------------------

def _global_generator_untouched(cls) -> bool:
    X, y = _data()
    np.random.seed(11)  # noqa: NPY002 -- the global generator is the subject
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    _tree_of(cls).fit(X, y)
    return bool(np.array_equal(np.random.get_state()[1], before))  # noqa: NPY002


def test_unseeded_fit_leaves_the_global_generator_alone():
    assert _global_generator_untouched(SeparateStreamsDecisionTreeClassifier)
    assert not _global_generator_untouched(DecisionTreeClassifier)  # the flaw it fixes


def test_unseeded_fits_differ_and_ignore_the_global_seed():
    X, y = _data()
    structures = []
    for _ in range(2):
        np.random.seed(0)  # noqa: NPY002
        structures.append(_structure(_tree_of(SeparateStreamsDecisionTreeClassifier).fit(X, y)))
    assert not np.array_equal(structures[0][1], structures[1][1])


# --- seeded fits: reproducible, with separate streams ------------------------------------------

@pytest.mark.parametrize("seed", [5, "random_state"])
def test_seeded_fits_are_reproducible(seed):
    X, y = _data()

    def fit():
        rs = np.random.RandomState(5) if seed == "random_state" else seed
        model = _tree_of(SeparateStreamsDecisionTreeClassifier, rs, max_depth=4).fit(X, y)
        return (*_structure(model), model.tree_.value.copy())

    for first, second in zip(fit(), fit(), strict=True):
        np.testing.assert_array_equal(first, second)


def test_the_data_changes_the_leaves_never_the_structure():
    X, y = _data()
    X_other, _ = _data(seed=1)
    fits = [_tree_of(SeparateStreamsDecisionTreeClassifier, 7, epsilon=50.0).fit(X_, y_)
            for X_, y_ in ((X, y), (X, 1 - y), (X_other, y), (X[:3], y[:3]))]
    for model in fits[1:]:
        np.testing.assert_array_equal(_structure(model)[0], _structure(fits[0])[0])
        np.testing.assert_array_equal(_structure(model)[1], _structure(fits[0])[1])
    assert not np.array_equal(fits[0].tree_.value, fits[1].tree_.value)


def test_the_structure_is_diffprivlibs_build_on_its_own_stream():
    """Same generator state, same structure: the structure step is diffprivlib's own."""
    X, y = _data()
    ours = _tree_of(SeparateStreamsDecisionTreeClassifier, 21, max_depth=4).fit(X, y)
    theirs = _tree_of(DecisionTreeClassifier, _tree._streams(21)[0], max_depth=4).fit(X, y)
    np.testing.assert_array_equal(_structure(ours)[0], _structure(theirs)[0])
    np.testing.assert_array_equal(_structure(ours)[1], _structure(theirs)[1])


def _empty_leaves_follow_the_structure(seed: int) -> bool:
    """Do the empty leaves' classes equal the draws that come after the structure's draws on
    the structure's generator? One row at the origin reaches only the last leaf (node ids are
    assigned right subtree first), so every empty leaf is labelled before any permute-and-flip
    draw."""
    model = _tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=5)
    model.fit(np.zeros((1, N_FEATURES)), [1])
    replay = _tree._streams(seed)[0]
    t = model.tree_
    for node in range(t.node_count):  # the structure, replayed on the structure's generator
        if t.children_left[node] != -1:
            assert replay.randint(N_FEATURES) == t.feature[node]
            replay.uniform()
    leaves, classes = _classes_of_leaves(model)
    empty = leaves != model.apply(np.zeros((1, N_FEATURES)))[0]
    assert empty.sum() == 2 ** 5 - 1
    return bool(np.array_equal(classes[empty], [replay.randint(2) for _ in range(empty.sum())]))


def test_empty_leaves_do_not_continue_the_structures_stream(monkeypatch):
    assert not any(_empty_leaves_follow_the_structure(seed) for seed in range(3))
    # the broken twin: one RandomState for structure and leaves (diffprivlib's seeded design)
    monkeypatch.setattr(_tree, "_streams",
                        lambda seed: (np.random.RandomState(seed),) * 3)
    assert all(_empty_leaves_follow_the_structure(seed) for seed in range(3))


# --- the same distributions as diffprivlib ------------------------------------------------------

def test_root_split_has_diffprivlibs_distribution():
    X, y = _data(n=4)
    n_fits = 400
    roots = {}
    for cls, offset in ((SeparateStreamsDecisionTreeClassifier, 0),
                        (DecisionTreeClassifier, 10 ** 6)):
        fits = [_tree_of(cls, offset + i, max_depth=1).fit(X, y) for i in range(n_fits)]
        roots[cls] = (np.array([m.tree_.feature[0] for m in fits]),
                      np.array([m.tree_.threshold[0] for m in fits]))
    (ours_f, ours_t), (theirs_f, theirs_t) = roots.values()
    table = [np.bincount(f, minlength=N_FEATURES) for f in (ours_f, theirs_f)]
    assert stats.chi2_contingency(table).pvalue > 0.001
    assert stats.chisquare(table[0]).pvalue > 0.001  # uniform over the features
    assert stats.ks_2samp(ours_t, theirs_t).pvalue > 0.001
    assert stats.kstest(ours_t, "uniform").pvalue > 0.001  # bounds [0, 1]


def test_leaves_are_permute_and_flip_at_epsilon():
    """Depth 1, every row at the origin: the left leaf holds counts [3, 2] and the right leaf
    is empty. Permute-and-flip (monotonic) picks the minority class with probability
    exp(-epsilon) / 2; the empty leaf is uniform."""
    X, y = np.zeros((5, N_FEATURES)), np.array([0, 0, 0, 1, 1])
    n_fits, epsilon = 1500, 1.0
    minority = empty_ones = 0
    for seed in range(n_fits):
        model = _tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=1,
                         epsilon=epsilon).fit(X, y)
        leaves, classes = _classes_of_leaves(model)
        reached = leaves == model.apply(X[:1])[0]
        minority += classes[reached][0] == 1
        empty_ones += classes[~reached][0] == 1
    expected = math.exp(-epsilon) / 2
    assert abs(minority / n_fits - expected) < 4 * math.sqrt(expected * (1 - expected) / n_fits)
    assert abs(empty_ones / n_fits - 0.5) < 4 * math.sqrt(0.25 / n_fits)
