"""What every private selector shares: its result type and the checks of its inputs.

The selectors consume *exact* aggregated candidate utilities, which are private. Nothing in
this module may put a utility value, or anything computed from the utilities, into an
attribute, a log line, a warning or an exception message: error messages below only mention
public quantities (the expected range, the number of candidates).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from diffprivlib.utils import check_random_state

__all__ = ["Selection", "can_beat_random_pick", "random_pick_loss"]


@dataclass(frozen=True)
class Selection:
    """The released outcome of one private selection.

    Attributes
    ----------
    index : int
        Position of the selected candidate in the utilities array.
    trace : tuple of dict
        Released per-round records of a multi-round selector (doubling SVT); ``()`` for a
        one-shot selector (permute-and-flip). Every record is a post-processing of the
        mechanism's private outputs.
    fallback : bool
        ``True`` when the selector selected nothing and returned the data-independent fallback
        (index 0). Whether this happened is itself a released output.
    """

    index: int
    trace: tuple[dict, ...] = ()
    fallback: bool = False


def random_pick_loss(n_candidates: int | None) -> float:
    """The largest expected utility loss of a uniformly random pick among the candidates.

    On the [0, 1] utility scale, with one candidate at 1 and the others at 0, a uniform pick
    among ``n_candidates`` loses ``1 - 1 / n_candidates`` in expectation, and no utilities make
    it lose more. ``None``: a space with a continuous distribution, where a random draw can be
    as bad as the worst utility (1). A public quantity.

    Examples
    --------
    >>> random_pick_loss(4), random_pick_loss(None)
    (0.75, 1.0)
    """
    return 1.0 if n_candidates is None else 1.0 - 1.0 / max(int(n_candidates), 1)


def can_beat_random_pick(noise: float, n_candidates: int | None) -> bool:
    """Whether a selection whose public noise figure is ``noise`` (on the [0, 1] utility
    scale: a selector's ``selection_noise``) can be expected to do better than a uniformly
    random pick (:func:`random_pick_loss`). A single candidate leaves nothing to choose: no
    selection is worse than a random pick there. Data-independent (public inputs only)."""
    if n_candidates == 1:
        return True
    return noise < random_pick_loss(n_candidates)


def check_epsilon(epsilon: Any) -> float:
    """Return ``epsilon`` as a float, or raise if it is not a finite positive number."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise ValueError(f"epsilon must be a finite positive number; got {epsilon!r}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite positive number; got {epsilon!r}")
    return float(epsilon)


def check_sensitivity(sensitivity: Any) -> float:
    """Return ``sensitivity`` as a float, or raise if it is not a finite positive number."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Real):
        raise ValueError(f"sensitivity must be a finite positive number; got {sensitivity!r}")
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be a finite positive number; got {sensitivity!r}")
    return float(sensitivity)


def check_random_state_param(random_state: Any) -> None:
    """Raise unless ``random_state`` is ``None``, an int or a ``numpy.random.RandomState``."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return
    raise ValueError(
        f"random_state must be None, an int or a numpy RandomState; got {random_state!r}"
    )


def resolve_rng(random_state: Any):
    """The one generator that every noise draw of a ``select()`` call uses.

    ``None`` gives diffprivlib's cryptographically secure generator (``secrets.SystemRandom``),
    exactly what diffprivlib's mechanisms use when they receive ``None``; an int gives a fresh
    ``RandomState`` seeded with it (identical seeds, identical selections); a ``RandomState``
    is used, and advanced, as is. Seeded noise is for testing and teaching, not production.
    """
    return check_random_state(random_state, secure=True)


def random_permutation(rng, n: int) -> list[int]:
    """A uniformly random permutation of ``range(n)`` drawn from ``rng`` (data-independent)."""
    if isinstance(rng, np.random.RandomState):
        return [int(i) for i in rng.permutation(n)]
    order = list(range(n))
    rng.shuffle(order)  # secrets.SystemRandom
    return order


def check_utilities(utilities: Any) -> np.ndarray:
    """Validate exact utilities without revealing them.

    The evaluators produce utilities in [0, 1] by construction (failures get ``error_score``),
    so the value check below is a guard against programming errors; its message names only
    the expected range and the (public) number of candidates, never a value.
    """
    try:
        u = np.asarray(utilities, dtype=float)
    except (TypeError, ValueError):
        # numpy's message would quote the offending value
        raise ValueError("utilities must be an array of numbers") from None
    if u.ndim != 1 or u.shape[0] == 0:
        raise ValueError(
            "utilities must be a non-empty one-dimensional array (one value per candidate); "
            f"got an array of shape {u.shape}"
        )
    if not (np.all(np.isfinite(u)) and np.all(u >= 0.0) and np.all(u <= 1.0)):
        raise ValueError(
            f"all {u.shape[0]} utilities must be finite and lie in [0, 1] (map scores with "
            "bounded_utility / score_bounds first); values are private and not shown"
        )
    return u
