"""Turning a search's ``random_state`` into independent seeds for every random step.

A seeded search must be reproducible whatever ``n_jobs`` or the joblib backend, so each task
gets its own seed derived from the search's seed by position (``numpy.random.SeedSequence``),
never from a shared generator consumed in scheduling order.

``random_state=None`` means production use: noise mechanisms then receive ``None`` and
diffprivlib draws from its cryptographically secure generator (``secrets.SystemRandom``).
Seeded noise is for testing and teaching only.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["SeedPlan"]


class SeedPlan:
    """Deterministic seeds for the named random steps of one ``fit``.

    Parameters
    ----------
    random_state : None, int or numpy.random.RandomState
        The search's ``random_state``. An int seeds everything reproducibly; a ``RandomState``
        is consumed once to draw such an int; ``None`` gives secure noise (``noise_seed``
        returns ``None``) and fresh entropy for data-independent choices such as partitions.
    """

    _STREAMS = ("partition", "split", "fit", "selection", "sampling", "refit", "score")

    def __init__(self, random_state) -> None:
        if random_state is None:
            self.seeded = False
            entropy = None
        elif isinstance(random_state, numbers.Integral):
            self.seeded = True
            entropy = int(random_state)
        elif isinstance(random_state, np.random.RandomState):
            self.seeded = True
            entropy = int(random_state.randint(np.iinfo(np.int32).max))
        else:
            raise ValueError(
                f"random_state must be None, an int or a numpy RandomState; got {random_state!r}"
            )
        root = np.random.SeedSequence(entropy)
        self._roots = dict(zip(self._STREAMS, root.spawn(len(self._STREAMS)), strict=True))

    def seed(self, stream: str, *key: int) -> int:
        """An int seed for task ``key`` of ``stream``, independent of scheduling order."""
        parent = self._roots[stream]
        seq = np.random.SeedSequence(parent.entropy, spawn_key=parent.spawn_key + tuple(key))
        return int(seq.generate_state(1)[0])

    def rng(self, stream: str, *key: int) -> np.random.RandomState:
        """A ``RandomState`` for a data-independent choice (partitions, splits, sampling)."""
        return np.random.RandomState(self.seed(stream, *key))

    def noise_seed(self, stream: str, *key: int) -> int | None:
        """Seed for a noise draw: ``None`` (diffprivlib's secure RNG) unless seeded."""
        return self.seed(stream, *key) if self.seeded else None
