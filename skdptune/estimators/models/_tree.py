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
from diffprivlib.models.forest import Tree, _FittingTree, validate_data
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


def _uniform_class(rng, n_classes: int) -> int:
    """A uniform draw from ``range(n_classes)``: ``secrets.SystemRandom`` or ``RandomState``."""
    if isinstance(rng, secrets.SystemRandom):
        return rng.randrange(n_classes)
    return int(rng.randint(n_classes))


class _SeparateStreamsFittingTree(_FittingTree):
    """diffprivlib's fitting tree: ``build`` (the structure) unchanged, drawing from
    ``random_state``; ``fit`` (the leaves) draws from ``leaf_random_state`` (permute-and-flip)
    and ``empty_leaf_random_state`` (uniform classes) instead."""

    leaf_random_state = None
    empty_leaf_random_state = None

    def fit(self, X, y):
        if not self.nodes:
            raise ValueError("Fitting Tree must be built before calling fit().")
        reached = self.apply(X)
        values = np.zeros(shape=(self.node_count, 1, len(self.classes)))
        for node in self.nodes:  # node-id order, as diffprivlib
            if node.left_child != self._TREE_LEAF:
                continue
            rows = reached == node.node_id
            if rows.any():
                counts = [np.sum(y[rows] == cls) for cls in self.classes]
                label = PermuteAndFlip(epsilon=self.epsilon, sensitivity=1, monotonic=True,
                                       utility=counts,
                                       random_state=self.leaf_random_state).randomise()
            else:
                label = _uniform_class(self.empty_leaf_random_state, len(self.classes))
            values[node.node_id, 0, label] = 1
        self.values_ = values
        return self


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
