"""skdptune.estimators.models._tree: diffprivlib's decision tree with separate generators for
its structure, its non-empty leaves (permute-and-flip) and its empty leaves."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import PermuteAndFlip
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


def _levels(tree):
    """The node ids of each level of a fitted ``tree_``, left to right."""
    levels = [np.array([0])]
    while tree.children_left[levels[-1][0]] != -1:
        parents = levels[-1]
        levels.append(np.column_stack([tree.children_left[parents],
                                       tree.children_right[parents]]).ravel())
    return levels


def _splits(model):
    """(node, feature, threshold, the node's lower and upper bound on that feature) of every
    internal node: the root's bounds narrowed by every ancestor's split."""
    t = model.tree_
    stack, out = [(0, BOUNDS[0].copy(), BOUNDS[1].copy())], []
    while stack:
        node, low, high = stack.pop()
        if t.children_left[node] == -1:
            continue
        f, cut = t.feature[node], t.threshold[node]
        out.append((node, f, cut, low[f], high[f]))
        left_high, right_low = high.copy(), low.copy()
        left_high[f] = right_low[f] = cut
        stack += [(t.children_left[node], low, left_high),
                  (t.children_right[node], right_low, high)]
    return out


def _bounds_violations(model) -> int:
    """Internal nodes whose threshold lies outside the node's bounds on its feature."""
    return sum(not low <= cut <= high for _, _, cut, low, high in _splits(model))


def _replay_structure(replay, depth):
    """The structure stream's draws, level by level: (features, uniforms) per level."""
    return [(replay.randint(N_FEATURES, size=2 ** level), replay.random_sample(2 ** level))
            for level in range(depth)]


def test_the_structure_is_drawn_level_by_level_from_its_own_stream():
    """Per level, left to right: the features, then one uniform per node placed within the
    node's bounds; node ids are diffprivlib's (depth first, right subtree first)."""
    X, y = _data()
    depth = 4
    model = _tree_of(SeparateStreamsDecisionTreeClassifier, 21, max_depth=depth).fit(X, y)
    t, levels = model.tree_, _levels(model.tree_)
    assert len(levels) == depth + 1 and t.node_count == 2 ** (depth + 1) - 1
    np.testing.assert_array_equal(np.sort(np.concatenate(levels)), np.arange(t.node_count))
    internal = np.flatnonzero(t.children_left != -1)
    np.testing.assert_array_equal(t.children_right[internal], internal + 1)  # right first
    splits = {node: (cut, low, high) for node, _, cut, low, high in _splits(model)}
    draws = _replay_structure(_tree._streams(21)[0], depth)
    for level, (features, uniforms) in enumerate(draws):
        nodes = levels[level]
        np.testing.assert_array_equal(t.feature[nodes], features)
        for node, u in zip(nodes, uniforms, strict=True):
            cut, low, high = splits[node]
            assert cut == low + (high - low) * u
    assert _bounds_violations(model) == 0


def test_thresholds_stay_within_their_nodes_bounds(monkeypatch):
    """Deep trees on few features split on a feature again and again: every threshold lies
    within its node's bounds. The broken twin draws every threshold within the root's bounds."""
    X, y = _data()
    models = [_tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=6).fit(X, y)
              for seed in range(5)]
    assert sum(_bounds_violations(m) for m in models) == 0
    monkeypatch.setattr(_tree, "_node_bounds",
                        lambda lower, upper, features, thresholds, feature:
                        (lower[feature], upper[feature]))
    twins = [_tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=6).fit(X, y)
             for seed in range(5)]
    assert sum(_bounds_violations(m) for m in twins) > 50


def test_every_node_has_diffprivlibs_distribution():
    """Depth 3, 300 fits a side: each node's feature (the same node id in both trees), every
    threshold as a fraction of its node's bounds, and how often a node splits on its parent's
    feature, against diffprivlib's own trees."""
    X, y = _data(n=4)
    n_fits = 300
    sides = [[_tree_of(cls, offset + i, max_depth=3).fit(X, y) for i in range(n_fits)]
             for cls, offset in ((SeparateStreamsDecisionTreeClassifier, 0),
                                 (DecisionTreeClassifier, 10 ** 6))]
    internal = np.flatnonzero(sides[0][0].tree_.children_left != -1)
    for side in sides:
        for m in side:
            np.testing.assert_array_equal(np.flatnonzero(m.tree_.children_left != -1), internal)
    for node in internal:
        table = [np.bincount([m.tree_.feature[node] for m in side], minlength=N_FEATURES)
                 for side in sides]
        assert stats.chi2_contingency(table).pvalue > 1e-4, node
    fractions = [np.array([(cut - low) / (high - low) for m in side
                           for _, _, cut, low, high in _splits(m)]) for side in sides]
    assert stats.ks_2samp(*fractions).pvalue > 1e-3
    assert stats.kstest(fractions[0], "uniform").pvalue > 1e-3

    def repeats(side):
        count = 0
        for m in side:
            t = m.tree_
            for p in internal:
                children = (t.children_left[p], t.children_right[p])
                count += sum(int(t.feature[c] == t.feature[p]) for c in children
                             if t.children_left[c] != -1)
        return count

    pairs = 2 * 3 * n_fits  # parent and internal child: root to level 1, level 1 to 2
    table = [[repeats(side), pairs - repeats(side)] for side in sides]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    assert abs(table[0][0] / pairs - 1 / N_FEATURES) < 4 * math.sqrt(3 / 16 / pairs)


def test_rows_on_a_threshold_go_left_in_the_fit_as_in_predict():
    """A feature whose bounds are one point, 0.5 (exact in float32): every split on it has
    threshold 0.5 and the rows, all at 0.5, tie with it. The fit routes them left, as
    ``predict`` does: the leaves it counts are the ones ``apply`` reports."""
    bounds = (np.array([0.0, 0.0, 0.5]), np.array([1.0, 1.0, 0.5]))
    X = np.random.default_rng(1).random((30, 3))
    X[:, 2] = 0.5
    y = np.arange(30) % 2
    ties = 0
    for seed in range(20):
        model = SeparateStreamsDecisionTreeClassifier(
            max_depth=3, epsilon=1.0, bounds=bounds, classes=[0, 1], random_state=seed,
            accountant=BudgetAccountant()).fit(X, y)
        t = model.tree_
        ties += int(np.sum(t.feature[t.children_left != -1] == 2))
        fitting = _tree._SeparateStreamsFittingTree(3, 3, np.array([0, 1]), 1.0, bounds,
                                                    _tree._streams(seed)[0]).build()
        np.testing.assert_array_equal(fitting.apply(X.astype(np.float32)),
                                      model.apply(X.astype(np.float32)))
    assert ties > 10


def test_the_structure_is_diffprivlibs_build_given_the_same_draws():
    """diffprivlib's own ``build``, fed node by node the features and uniforms the structure's
    stream drew, grows the same tree bit for bit: per-feature bounds of every width, a
    feature whose bounds are one point, one feature and many, depths 1 to 6."""
    from diffprivlib.models.forest import _FittingTree

    class Replayed:
        def __init__(self, features, uniforms):
            self.features, self.uniforms = iter(features), iter(uniforms)

        def randint(self, n):
            return int(next(self.features))

        def uniform(self, low, high):
            return low + (high - low) * next(self.uniforms)

    configurations = [
        (3, (0.0, 1.0)),
        (4, (np.array([-5.0, 0.0, 100.0, 1e-3]), np.array([5.0, 1e-6, 1000.0, 2e-3]))),
        (4, (np.array([0.0, 0.3, 2.0, -1.0]), np.array([1.0, 0.3, 2.0, 1.0]))),
        (1, (-1.0, 3.0)),
        (40, (np.linspace(-3, 0, 40), np.linspace(1, 9, 40))),
    ]
    for n_features, bounds in configurations:
        for depth in (1, 2, 4, 6):
            for seed in range(5):
                X = np.random.default_rng(seed).random((7, n_features))
                model = SeparateStreamsDecisionTreeClassifier(
                    max_depth=depth, epsilon=1.0, bounds=bounds, classes=[0, 1],
                    random_state=seed, accountant=BudgetAccountant()).fit(X, np.arange(7) % 2)
                t = model.tree_
                features = np.full(t.node_count, -1)
                uniforms = np.full(t.node_count, np.nan)
                replay = _tree._streams(seed)[0]
                for level, nodes in enumerate(_levels(t)[:-1]):
                    features[nodes] = replay.randint(n_features, size=2 ** level)
                    uniforms[nodes] = replay.random_sample(2 ** level)
                internal = t.children_left != -1
                reference = _FittingTree(depth, n_features, np.array([0, 1]), 1.0, model.bounds,
                                         Replayed(features[internal], uniforms[internal]))
                reference.build()
                theirs = np.array([tuple(node) for node in reference.nodes],
                                  dtype=t.__getstate__()["nodes"].dtype)
                ours = t.__getstate__()["nodes"]
                for field in ("left_child", "right_child", "feature", "threshold"):
                    np.testing.assert_array_equal(ours[field], theirs[field])


def test_a_leaf_reached_by_labels_outside_the_classes_is_drawn_by_permute_and_flip():
    """diffprivlib draws every leaf a row reaches by permute-and-flip, on all-zero counts
    where its rows' labels are none of the classes; the empty leaves' generator is not
    read for it."""
    X = np.random.default_rng(3).random((20, N_FEATURES))
    for seed in range(5):
        model = _tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=3)
        model.set_params(classes=[5, 6]).fit(X, np.zeros(20, dtype=int))
        _, leaves_stream, empty_stream = _tree._streams(seed)
        t = model.tree_
        reached = set(model.apply(X.astype(np.float32)).tolist())
        for leaf in np.flatnonzero(t.children_left == -1):
            label = (PermuteAndFlip(epsilon=1.0, sensitivity=1, monotonic=True, utility=[0, 0],
                                    random_state=leaves_stream).randomise()
                     if leaf in reached else None)
            if label is not None:
                assert t.value[leaf, 0, label] > 0
        empties = [leaf for leaf in np.flatnonzero(t.children_left == -1) if leaf not in reached]
        expected = empty_stream.randint(2, size=len(empties))
        np.testing.assert_array_equal(np.argmax(t.value[empties, 0, :], axis=1), expected)


def test_leaves_are_drawn_as_one_leaf_at_a_time():
    """The leaves, fitted at once, equal diffprivlib's leaf loop on the same structure and
    the same two leaf streams: permute-and-flip per reached leaf in node order, a uniform
    class per empty leaf in node order; rows are routed left when x <= threshold."""
    X, y = _data(n=40)
    for seed in range(4):
        model = _tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=5).fit(X, y)
        t = model.tree_
        _, leaves_stream, empty_stream = _tree._streams(seed)
        reached = []
        for row in X.astype(np.float32):  # the classifier reads float32 rows
            node = 0
            while t.children_left[node] != -1:
                node = (t.children_left[node] if row[t.feature[node]] <= t.threshold[node]
                        else t.children_right[node])
            reached.append(node)
        reached = np.array(reached)
        expected = np.zeros_like(t.value)
        for node in range(t.node_count):
            if t.children_left[node] != -1:
                continue
            rows = reached == node
            if rows.any():
                counts = [int(np.sum(y[rows] == c)) for c in (0, 1)]
                label = PermuteAndFlip(epsilon=1.0, sensitivity=1, monotonic=True,
                                       utility=counts, random_state=leaves_stream).randomise()
            else:
                label = empty_stream.randint(2)
            expected[node, 0, label] = 1
        np.testing.assert_array_equal(np.asarray(t.value) > 0, expected > 0)
        np.testing.assert_array_equal(model.apply(X), reached)


def _empty_leaves_follow_the_structure(seed) -> bool:
    """Do the empty leaves' classes equal the draws that come after the structure's draws (and
    the one reached leaf's permute-and-flip) on the structure's generator? One row at the
    origin reaches only the leftmost leaf, so the other leaves are empty. ``seed``: an int, or
    ``None`` with ``secrets.randbits`` pinned (the structure's seed is then known)."""
    model = _tree_of(SeparateStreamsDecisionTreeClassifier, seed, max_depth=5)
    model.fit(np.zeros((1, N_FEATURES)), [1])
    replay = (_tree._streams(seed)[0] if seed is not None
              else np.random.RandomState(np.random.MT19937(_PINNED_BITS)))
    t = model.tree_
    for level, (features, _) in enumerate(_replay_structure(replay, 5)):
        assert np.array_equal(t.feature[_levels(t)[level]], features)
    PermuteAndFlip(epsilon=1.0, sensitivity=1, monotonic=True, utility=[0, 1],
                   random_state=replay).randomise()
    leaves, classes = _classes_of_leaves(model)
    empty = leaves != model.apply(np.zeros((1, N_FEATURES)))[0]
    assert empty.sum() == 2 ** 5 - 1
    return bool(np.array_equal(classes[empty], replay.randint(2, size=int(empty.sum()))))


_PINNED_BITS = 12345


def test_unseeded_leaves_do_not_continue_the_structures_stream(monkeypatch):
    """Unseeded, the structure's generator is seeded from ``secrets`` (pinned here, so the
    structure can be replayed): the empty leaves' classes do not continue it, and
    permute-and-flip draws from the secure generator. The broken twin -- the structure's
    generator for all three, diffprivlib's unseeded design but for the global generator --
    makes the empty leaves predictable."""
    asked = []
    monkeypatch.setattr(_tree.secrets, "randbits",
                        lambda bits: asked.append(bits) or _PINNED_BITS)
    generators = []
    real_init = PermuteAndFlip.__init__

    def spy(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        generators.append(type(self._rng).__name__)
    monkeypatch.setattr(PermuteAndFlip, "__init__", spy)
    assert not _empty_leaves_follow_the_structure(None)
    assert asked == [128]  # the structure's seed: 128 secret bits
    assert set(generators) == {"SystemRandom", "RandomState"}  # the leaf's, then the replay's
    assert generators[0] == "SystemRandom"
    real_streams = _tree._streams

    def one_stream(random_state):
        if random_state is None:
            structure = real_streams(None)[0]
            return structure, structure, structure
        return real_streams(random_state)
    monkeypatch.setattr(_tree, "_streams", one_stream)
    assert _empty_leaves_follow_the_structure(None)


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
