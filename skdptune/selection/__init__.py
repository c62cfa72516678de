"""Private selectors: choose a candidate from exact, private utilities with a stated DP cost.

Every selector takes utilities in [0, 1] with a replace-one sensitivity, returns a
:class:`Selection` (a post-processing of its private outputs only) and describes its
data-independent cost with :meth:`privacy_event`. Proofs: ``docs/selection.md``.
"""

from ._base import Selection
from ._permute_and_flip import PermuteAndFlipSelector
from ._svt import DoublingSVT

__all__ = ["Selection", "DoublingSVT", "PermuteAndFlipSelector"]
