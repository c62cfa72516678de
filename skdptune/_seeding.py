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

    # a new stream goes last: the streams before it keep their seeds
    _STREAMS = ("partition", "split", "fit", "selection", "sampling", "refit", "score",
                "reference")

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

    def seeds(self, stream: str, *key) -> np.ndarray:
        """``seed(stream, *key)`` for many keys at once: the last entries of ``key`` may be
        integer arrays (broadcast together); returns an int64 array of that shape, equal
        element by element to :meth:`seed` (the same :class:`numpy.random.SeedSequence`
        algorithm, :func:`seed_sequence_first_words`), without a Python object per key."""
        parent = self._roots[stream]
        columns = np.broadcast_arrays(*[np.asarray(k) for k in key])
        shape = columns[0].shape if columns else ()
        prefix = [_uint32_words(parent.entropy)]
        run = sum(len(p) for p in prefix)
        if run < _POOL_SIZE:  # a non-empty spawn key pads the run entropy to the pool size
            prefix.append([0] * (_POOL_SIZE - run))
        prefix += [_uint32_words(k) for k in parent.spawn_key]
        words = [np.full(shape, w, dtype=np.uint32) for part in prefix for w in part]
        for column in columns:
            column = column.astype(np.int64)
            if column.size and (column.min() < 0 or column.max() >= 2**32):
                raise ValueError("seed keys must be in [0, 2**32)")
            words.append(column.astype(np.uint32))
        return seed_sequence_first_words(np.stack(words, axis=-1)).astype(np.int64)


# ``numpy.random.SeedSequence`` (after M. E. O'Neill's ``seed_seq_fe``), vectorised over many
# entropy arrays of one length: its constants, a pool of four 32-bit words.
_POOL_SIZE = 4
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_MASK = 0xFFFFFFFF


def _uint32_words(value: int) -> list[int]:
    """A non-negative int as SeedSequence reads it: little-endian 32-bit words (0: one word)."""
    value = int(value)
    if value < 0:
        raise ValueError("SeedSequence entropy must be non-negative")
    words = [value & _MASK]
    value >>= 32
    while value:
        words.append(value & _MASK)
        value >>= 32
    return words


def seed_sequence_first_words(entropy: np.ndarray) -> np.ndarray:
    """``SeedSequence(e).generate_state(1, np.uint32)[0]`` for each row ``e`` of ``entropy``.

    ``entropy``: uint32 array ``(..., L)``, each row the *assembled* entropy of one
    SeedSequence (its words, then its spawn key's). ``tests/test_seeding.py`` checks this
    against :class:`numpy.random.SeedSequence` itself, so a change of numpy's algorithm fails
    loudly.
    """
    entropy = np.asarray(entropy, dtype=np.uint32)
    shape = entropy.shape[:-1]
    entropy = entropy.reshape(-1, entropy.shape[-1])  # arrays, never scalars: they wrap silently
    hash_const = _INIT_A

    def hashmix(value):
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _MASK
        value = value * np.uint32(hash_const)
        return value ^ (value >> np.uint32(16))

    def mix(x, y):
        result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
        return result ^ (result >> np.uint32(16))

    length = entropy.shape[-1]
    zero = np.zeros(len(entropy), dtype=np.uint32)
    pool = [hashmix(entropy[:, i] if i < length else zero) for i in range(_POOL_SIZE)]
    for src in range(_POOL_SIZE):
        for dst in range(_POOL_SIZE):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for src in range(_POOL_SIZE, length):
        for dst in range(_POOL_SIZE):
            pool[dst] = mix(pool[dst], hashmix(entropy[:, src]))
    value = pool[0] ^ np.uint32(_INIT_B)
    value = value * np.uint32((_INIT_B * _MULT_B) & _MASK)
    return (value ^ (value >> np.uint32(16))).reshape(shape)


def derived_seeds(seeds: np.ndarray, path: str = "") -> np.ndarray:
    """``skdptune.estimators.derived_seed(s, path)`` (the seed of the component at ``path`` of an
    estimator seeded with ``s``; ``""``: the estimator itself) for every ``s`` in ``seeds``
    (int64 array)."""
    seeds = np.asarray(seeds, dtype=np.int64)
    if seeds.size and (seeds.min() < 0 or seeds.max() >= 2**32):
        raise ValueError("seeds must be in [0, 2**32)")
    # the entropy [s, *path's bytes]: one word each
    words = np.frombuffer(path.encode("utf-8"), dtype=np.uint8).astype(np.uint32)
    entropy = np.concatenate([seeds.astype(np.uint32)[..., None],
                              np.broadcast_to(words, seeds.shape + words.shape)], axis=-1)
    return seed_sequence_first_words(entropy).astype(np.int64)
