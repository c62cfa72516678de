"""diffprivlib's decision tree with its structure and its leaves drawn from separate generators.

diffprivlib's ``DecisionTreeClassifier`` grows a tree in two steps. First the *structure*: at
every internal node a feature drawn uniformly and a threshold drawn uniformly between the
node's public bounds on that feature, down to ``max_depth``. Then the *leaves*: each leaf's
class is drawn by permute-and-flip on the class counts of the rows that reach it, and a leaf
no row reaches gets a class drawn uniformly.

Privacy argument (neighbouring relation: replace-one, ``n`` public).

* The structure reads no data: it is a function of the public ``bounds``, ``max_depth``, the
  number of features and the generator. It costs nothing, and it is released (the fitted
  ``tree_``), so its generator must not be shared with anything that depends on the data.
* The leaves are disjoint: each row reaches exactly one. Replacing one record changes the
  counts of at most two leaves, by one each (or, inside one leaf, one count down and another
  up). diffprivlib's ``PermuteAndFlip`` (sensitivity 1, ``monotonic=True``) at ``epsilon`` is
  ``epsilon``-DP for a count that changes monotonically, so the leaves together cost at most
  ``2 * epsilon`` under replace-one; skdptune's accounting charges exactly that for this class
  as for diffprivlib's.
* An empty leaf's uniform class is permute-and-flip on all-zero counts (every class has the
  same utility, so the first candidate permute-and-flip tries is accepted). Whether a leaf is
  empty can depend on one record; since the empty leaf is handled by the same mechanism on
  the same counts, the argument above covers it -- *provided* its draw is as random as the
  other leaves' draws.

That proviso is what diffprivlib does not meet. With ``random_state=None`` it draws the
structure *and* the empty leaves' classes from numpy's global Mersenne Twister, and only the
non-empty leaves from the secure generator. The Mersenne Twister is linear over GF(2) in its
state, and a deep enough released structure determines that state: the empty leaves' classes
are then predictable, so a leaf whose class matches the prediction is very likely empty, and
whether a leaf is empty can depend on one record (``benchmarks/tree_rng_recovery.py``
measures this). It also advances the user's global generator. With an int ``random_state``
one ``RandomState`` drives the structure, permute-and-flip and the empty leaves in turn, so
how many draws permute-and-flip consumed (which depends on the data) shifts the empty leaves'
draws.

:class:`SeparateStreamsDecisionTreeClassifier` draws the same model distribution from three
generators that share nothing: the structure from a generator of the fit's own, the
non-empty leaves' permute-and-flip and the empty leaves' classes each from their own. Unseeded
the leaves use the secure generator (``secrets``) and numpy's global generator is never read.
"""

from __future__ import annotations

import fractions
import secrets
import warnings

import numpy as np
from diffprivlib.mechanisms import PermuteAndFlip
from diffprivlib.models import DecisionTreeClassifier

# what diffprivlib's tree itself uses (its validate_data is the one for the installed sklearn)
from diffprivlib.models.forest import NODE_DTYPE, Tree, _FittingTree, validate_data
from diffprivlib.utils import PrivacyLeakWarning, check_random_state
from sklearn.ensemble import RandomForestClassifier as _SklearnForest
from sklearn.tree import DecisionTreeClassifier as _SklearnTree

from ._adapter import ModelAdapter

__all__ = ["DecisionTreeAdapter", "SeparateStreamsDecisionTreeClassifier"]


def _streams(random_state):
    """(structure, permute-and-flip, empty leaves) generators for one fit.

    ``None`` (or numpy's global ``RandomState``, which diffprivlib also treats as unseeded):
    a fresh ``RandomState`` seeded from ``secrets`` for the structure, ``None`` for
    permute-and-flip (diffprivlib's secure generator) and ``secrets.SystemRandom`` for the
    empty leaves. An int or a ``RandomState`` (which gives four 32-bit words): three
    ``RandomState`` spawned from it by ``numpy.random.SeedSequence``.
    """
    if random_state is None or random_state is np.random.mtrand._rand:
        # permute-and-flip given None draws from the secure generator, as in diffprivlib
        return (np.random.RandomState(np.random.MT19937(secrets.randbits(128))), None,
                check_random_state(None, secure=True))
    if isinstance(random_state, np.random.RandomState):
        entropy = [int(w) for w in random_state.randint(0, 2**32, size=4, dtype=np.uint64)]
    else:
        entropy = int(random_state)
    return tuple(np.random.RandomState(np.random.MT19937(seq))
                 for seq in np.random.SeedSequence(entropy).spawn(3))


def _uniform_classes(rng, n_classes: int, size: int) -> np.ndarray:
    """``size`` uniform draws from ``range(n_classes)``, one after the other:
    ``secrets.SystemRandom`` or ``RandomState`` (whose draws of one call are those of
    ``size`` calls)."""
    if isinstance(rng, secrets.SystemRandom):
        return np.array([rng.randrange(n_classes) for _ in range(size)], dtype=np.intp)
    return rng.randint(n_classes, size=size)


def _node_bounds(lower, upper, features, thresholds, feature):
    """The bounds on ``feature[p]`` of the node at position ``p`` (left to right) of the next
    level, below the levels ``features`` and ``thresholds`` (root first) of a complete tree
    with root bounds ``lower`` and ``upper``: the root's, narrowed by the last ancestor that
    split on that feature on each side."""
    level = len(features)
    position = np.arange(len(feature))
    low, high = lower[feature], upper[feature]
    for k in range(level):  # ancestors, root first
        ancestor = position >> (level - k)
        went_right = ((position >> (level - k - 1)) & 1).astype(bool)
        split_here = features[k][ancestor] == feature
        cut = thresholds[k][ancestor]
        high = np.where(split_here & ~went_right, cut, high)
        low = np.where(split_here & went_right, cut, low)
    return low, high


class _SeparateStreamsFittingTree(_FittingTree):
    """diffprivlib's fitting tree, drawn level by level: the structure from ``random_state``,
    the reached leaves' permute-and-flip from ``leaf_random_state`` and the empty leaves'
    uniform classes from ``empty_leaf_random_state``.

    **The structure.** diffprivlib's ``build`` visits the nodes one by one (a Python loop and a
    bounds check per node: nearly all of the 157 ms of a depth-12 fit on 75 rows, the bulk of a
    grid's time on trees). This one draws a level at a time: for the ``2^l`` nodes of level
    ``l``, left to right, their features (``randint(n_features, size=2^l)``), then as many
    uniforms ``u``, and each threshold is ``lower + (upper - lower) u`` with the node's own
    bounds on its feature: the root's bounds, narrowed by the last ancestor that split on that
    feature on each side (thresholds are drawn inside their node's bounds, so the last such
    split is the tightest). Every internal node's feature is uniform and its threshold uniform
    within its bounds, independently of the other nodes' draws given its ancestors:
    diffprivlib's distribution, whose only difference is the order the same draws are taken in.
    The tree is complete (every leaf at depth ``max_depth``, as diffprivlib's) and its nodes
    are numbered as diffprivlib numbers them (depth first, right subtree first). Nothing here
    reads the data.

    **The leaves** are those of diffprivlib's ``fit``: every leaf a row reaches, in node
    order, is drawn by diffprivlib's ``PermuteAndFlip`` (sensitivity 1, ``monotonic=True``)
    on the class counts of the rows that reach it; then the leaves no row reaches draw a
    uniform class each, in node order, from their own generator. Rows are routed as
    diffprivlib's ``apply`` routes them (left when ``x <= threshold``), a level at a time.
    """

    leaf_random_state = None
    empty_leaf_random_state = None

    def build(self):
        lower, upper = (np.asarray(b, dtype=float)
                        for b in self._check_bounds(self.bounds, shape=self.n_features))
        features, thresholds = [], []
        for level in range(self.max_depth):
            width = 2 ** level
            feature = self.random_state.randint(self.n_features, size=width)
            uniform = self.random_state.random_sample(width)
            low, high = _node_bounds(lower, upper, features, thresholds, feature)
            features.append(feature)
            thresholds.append(low + (high - low) * uniform)
        # node ids, level by level: depth first, right subtree first (diffprivlib's numbering)
        ids = [np.zeros(1, dtype=np.intp)]
        for level in range(1, self.max_depth + 1):
            subtree = 2 ** (self.max_depth - level + 1) - 1  # nodes under one node of the level
            children = np.empty(2 ** level, dtype=np.intp)
            children[1::2] = ids[-1] + 1
            children[0::2] = ids[-1] + 1 + subtree
            ids.append(children)
        self.node_count = 2 ** (self.max_depth + 1) - 1
        self._levels = (features, thresholds, ids)
        self.nodes = ids  # built (diffprivlib's fit checks that nodes is not empty)
        return self

    def apply(self, X):
        """The leaf (its node id) each row of ``X`` reaches."""
        features, thresholds, ids = self._levels
        rows = np.arange(X.shape[0])
        position = np.zeros(X.shape[0], dtype=np.intp)
        for feature, threshold in zip(features, thresholds, strict=False):
            goes_left = X[rows, feature[position]] <= threshold[position]
            position = 2 * position + ~goes_left
        return ids[-1][position]

    def fit(self, X, y):
        if not self.nodes:
            raise ValueError("Fitting Tree must be built before calling fit().")
        reached = self.apply(X)
        y = np.asarray(y)
        counts = np.zeros((self.node_count, len(self.classes)), dtype=np.intp)
        for c, cls in enumerate(self.classes):
            counts[:, c] = np.bincount(reached[y == cls], minlength=self.node_count)
        leaves = np.sort(self._levels[2][-1])
        values = np.zeros(shape=(self.node_count, 1, len(self.classes)))
        # a leaf a row reaches is drawn by permute-and-flip, as in diffprivlib, even where its
        # rows' labels are none of the classes (all-zero counts)
        full = np.bincount(reached, minlength=self.node_count)[leaves] > 0
        for leaf in leaves[full].tolist():  # node order, as diffprivlib
            label = PermuteAndFlip(epsilon=self.epsilon, sensitivity=1, monotonic=True,
                                   utility=counts[leaf].tolist(),
                                   random_state=self.leaf_random_state).randomise()
            values[leaf, 0, label] = 1
        empty = leaves[~full]
        values[empty, 0, _uniform_classes(self.empty_leaf_random_state, len(self.classes),
                                          len(empty))] = 1
        self.values_ = values
        return self

    def __getstate__(self):
        features, thresholds, ids = self._levels
        nodes = np.zeros(self.node_count, dtype=NODE_DTYPE)
        nodes["left_child"] = nodes["right_child"] = self._TREE_LEAF
        nodes["feature"] = nodes["threshold"] = self._TREE_UNDEFINED
        for level, (feature, threshold) in enumerate(zip(features, thresholds, strict=False)):
            node = ids[level]
            nodes["feature"][node] = feature
            nodes["threshold"][node] = threshold
            nodes["left_child"][node] = ids[level + 1][0::2]
            nodes["right_child"][node] = ids[level + 1][1::2]
        return {"max_depth": self.max_depth, "node_count": self.node_count, "nodes": nodes,
                "values": self.values_}


class SeparateStreamsDecisionTreeClassifier(DecisionTreeClassifier):
    """diffprivlib's ``DecisionTreeClassifier`` with its structure and its leaves drawn from
    separate generators (the module's docstring gives the privacy argument).

    Same parameters, validation, warnings (``PrivacyLeakWarning`` when ``bounds`` or
    ``classes`` are None), accounting (``accountant.check`` before, ``accountant.spend``
    after) and fitted attributes as diffprivlib's ``fit``, and the same distribution of
    models unseeded. What differs is where the randomness comes from:

    * ``random_state=None``: the structure from a fresh ``RandomState`` seeded from
      ``secrets``; permute-and-flip on the non-empty leaves and the empty leaves' uniform
      classes from the secure generator. numpy's global generator is neither read nor
      advanced.
    * an int or a ``RandomState``: three generators derived from it (a ``RandomState`` is
      consumed once), one each for the structure, permute-and-flip and the empty leaves:
      reproducible, and the structure never depends on the data or on the leaves' draws.
      A seeded fit is not private and reproduces diffprivlib's structure only in
      distribution, not draw for draw.

    The class defines no ``__init__``, parameters or ``__slots__``: an instance of
    diffprivlib's class can be switched to it (``obj.__class__ = ...``) for a fit and back.

    Privacy: ``epsilon``-DP per leaf under add/remove; ``2 * epsilon`` under replace-one.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.estimators.models import SeparateStreamsDecisionTreeClassifier
    >>> X = np.array([[0.1, 0.2], [0.8, 0.9], [0.4, 0.6], [0.9, 0.1]])
    >>> tree = SeparateStreamsDecisionTreeClassifier(
    ...     max_depth=2, epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0)
    >>> tree.fit(X, [0, 1, 0, 1]).predict(X).shape
    (4,)
    """

    def fit(self, X, y, sample_weight=None, check_input=True):
        """Build the tree as diffprivlib's ``fit`` does, with separate generators.

        The steps, their order and their messages are diffprivlib 0.6.6's
        ``DecisionTreeClassifier.fit``; only the generators differ (:func:`_streams`).
        """
        self._validate_params()
        structure, leaves, empty_leaves = _streams(self.random_state)

        self.accountant.check(self.epsilon, 0)

        if sample_weight is not None:
            self._warn_unused_args("sample_weight")

        if check_input:
            X, y = validate_data(self, X, y, multi_output=False)
        self.n_outputs_ = 1

        if self.bounds is None:
            warnings.warn("Bounds have not been specified and will be calculated on the data "
                          "provided. This will result in additional privacy leakage. To ensure "
                          "differential privacy and no additional privacy leakage, specify "
                          "bounds for each dimension.", PrivacyLeakWarning, stacklevel=1)
            self.bounds = (np.min(X, axis=0), np.max(X, axis=0))
        self.bounds = self._check_bounds(self.bounds, shape=X.shape[1])
        X = self._clip_to_bounds(X, self.bounds)

        if self.classes is None:
            warnings.warn("Classes have not been specified and will be calculated on the data "
                          "provided. This will result in additional privacy leakage. To ensure "
                          "differential privacy and no additional privacy leakage, specify the "
                          "prediction classes for model.", PrivacyLeakWarning, stacklevel=1)
            self.classes = np.unique(y)
        self.classes_ = np.ravel(self.classes)
        self.n_classes_ = len(self.classes_)
        self.n_features_in_ = X.shape[1]

        fitting_tree = _SeparateStreamsFittingTree(self.max_depth, self.n_features_in_,
                                                   self.classes_, self.epsilon, self.bounds,
                                                   structure)
        fitting_tree.leaf_random_state = leaves
        fitting_tree.empty_leaf_random_state = empty_leaves
        fitting_tree.build()
        fitting_tree.fit(X, y)

        tree = Tree(self.n_features_in_, np.array([self.n_classes_]), self.n_outputs_)
        tree.__setstate__(fitting_tree.__getstate__())
        self.tree_ = tree

        self.accountant.spend(self.epsilon, 0)

        return self


class DecisionTreeAdapter(ModelAdapter):
    """diffprivlib's ``DecisionTreeClassifier``: fitted by
    :class:`SeparateStreamsDecisionTreeClassifier`; **2** units of cost per unit of
    ``epsilon`` under replace-one (each leaf's class is drawn by permute-and-flip with
    ``monotonic=True``; a replaced record moves one count down in one leaf and one up in
    another, or within one leaf one class down and another up, which that variant pays twice
    for); it reads its rows in float32."""

    models = (DecisionTreeClassifier,)
    replaces = {
        _SklearnTree: "use diffprivlib.models.DecisionTreeClassifier(bounds=..., classes=...)",
        _SklearnForest: ("use diffprivlib.models.DecisionTreeClassifier(bounds=..., classes=...) "
                         "(diffprivlib's forest is refused: docs/privacy.md)"),
    }
    leak_params = {
        "bounds": "bounds=(lower, upper) with public per-feature bounds",
        "classes": "classes to the public list of labels",
    }
    pair_params = ("bounds",)
    sound_fit = SeparateStreamsDecisionTreeClassifier
    input_dtype = np.float32
    # diffprivlib's splits are drawn at random (data-independent), scikit-learn's are the
    # best ones: the tree a user would grow without privacy, at the same depth
    counterpart = _SklearnTree
    counterpart_params = ("max_depth",)

    def replace_one_factor(self, estimator):
        return fractions.Fraction(2)
