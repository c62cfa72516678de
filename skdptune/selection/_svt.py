"""Doubling-step sparse vector selector.

Algorithm 1 of Ding, Wu, Xu & Pan, "Constant-overhead DP hyperparameter tuning", with the
``u >= 1`` guard of Ding & Wu, "Revisiting hyperparameter tuning with differential privacy".

Each round proposes a noisy threshold ``u + step * g + Lap(2 D / eps0)`` and asks the candidates,
in order, whether their utility plus fresh ``Lap(4 D / eps0)`` noise reaches it (AboveThreshold).
The first candidate that does is selected, the accumulated utility ``u`` grows by ``step * g``
and ``step`` doubles; when no candidate does, ``step`` halves. The selector stops when ``step``
reaches 0 or when ``u`` reaches 1.

Privacy (replace-one neighbours, utilities with sensitivity ``D``; proof in
``docs/selection.md``): an "above" round is ``eps0``-DP, a "none" round ``eps0 / 2``-DP, and
for every transcript there are at most ``N = ceil((1 - u0) / g)`` above rounds and at most
``N + 1`` none rounds, so the whole selector is pure ``N * eps0 + (N + 1) * eps0 / 2``-DP
whatever the data. The guard is implemented on the integer number of granularity units added
to ``u0``, so "at most ``N`` above rounds" holds exactly, without floating-point slack.

Released per round: the round number, the public threshold base ``u + step * g`` (a function
of earlier released outcomes), ``step``, the outcome and the selected index. Never released:
the noisy threshold and the noisy query values -- publishing them voids the AboveThreshold
analysis.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from diffprivlib.mechanisms import Laplace

from ..accounting import doubling_svt_round_epsilon, svt_max_above
from ..events import DoublingSVTEvent
from ._base import (
    Selection,
    check_epsilon,
    check_random_state_param,
    check_sensitivity,
    check_utilities,
    random_permutation,
    resolve_rng,
)

__all__ = ["DoublingSVT", "THRESHOLD_NOISE_MULTIPLIER", "QUERY_NOISE_MULTIPLIER"]

#: The threshold noise is ``Lap(THRESHOLD_NOISE_MULTIPLIER * sensitivity / eps0)``.
THRESHOLD_NOISE_MULTIPLIER = 2.0
#: Each query's noise is ``Lap(QUERY_NOISE_MULTIPLIER * sensitivity / eps0)``.
QUERY_NOISE_MULTIPLIER = 4.0
# Both are module constants (read at every ``select``) so that the privacy audits can
# monkeypatch deliberately broken variants; never change them in library code.

_ORDERS = ("fixed", "shuffle")


def _guard_reached(units: int, max_above: int) -> bool:
    """The ``u >= 1`` guard of Ding & Wu (line 29 of their algorithm), on integer units.

    ``u = u0 + units * g`` and ``units`` is an integer, so ``u >= 1`` (in exact arithmetic)
    is ``units >= (1 - u0) / g``, i.e. ``units >= N``. Every above round adds ``step >= 1``
    units, hence at most ``N`` above rounds. (A module function so that the audit can remove
    the guard in a deliberately broken variant.)
    """
    return units >= max_above


class DoublingSVT:
    """Private selection by the doubling-step sparse vector technique.

    Algorithm 1 of Ding, Wu, Xu & Pan (AboveThreshold with a threshold that grows by doubling
    steps) with the ``u >= 1`` termination guard of Ding & Wu, accounted soundly: see the
    module docstring and ``docs/selection.md``.

    Parameters
    ----------
    epsilon : float
        Total privacy budget ``eps_tune`` of the selection (> 0). The per-round budget is
        ``eps0 = 2 * epsilon / (3 N + 1)``.
    sensitivity : float
        Replace-one sensitivity ``D`` of every candidate's utility (> 0): ``1 / k`` for the
        mean over ``k`` disjoint partitions of per-partition utilities in [0, 1].
    granularity : float, default=0.05
        Threshold step ``g`` (> 0) on the [0, 1] utility scale.
    utility_floor : float, default=0.5
        Starting threshold ``u0`` in [0, 1).
    order : {"fixed", "shuffle"}, default="fixed"
        Query order in each round: the candidates' own order (as in Ding et al.), or a fresh,
        data-independent uniformly random permutation per round.
    random_state : None, int or numpy.random.RandomState, default=None
        ``None`` draws all noise from diffprivlib's cryptographically secure generator (use
        this in production). An int makes every ``select`` call reproducible (for tests and
        teaching); a ``RandomState`` is advanced by each call.

    Attributes
    ----------
    max_above : int
        ``N = ceil((1 - utility_floor) / granularity)``, the cap on above rounds.
    epsilon_round : float
        ``eps0``.

    Notes
    -----
    Neighbouring relation: replace one record. If every utility changes by at most
    ``sensitivity`` between neighbours, the selector is pure ``epsilon``-DP
    (``N * eps0 + (N + 1) * eps0 / 2 = epsilon``) for every possible transcript; the cost is
    data-independent and available from :meth:`privacy_event` before :meth:`select` runs.
    The realised number of rounds is a released output, not a privacy figure.

    Examples
    --------
    >>> import numpy as np
    >>> svt = DoublingSVT(1.0, sensitivity=1 / 1000, granularity=0.1, utility_floor=0.5,
    ...                   random_state=0)
    >>> svt.max_above
    5
    >>> svt.select(np.array([0.55, 0.9, 0.6])).index
    1
    """

    def __init__(self, epsilon: float, *, sensitivity: float, granularity: float = 0.05,
                 utility_floor: float = 0.5, order: str = "fixed",
                 random_state: Any = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        if isinstance(granularity, bool) or not (
            isinstance(granularity, numbers.Real) and math.isfinite(granularity)
            and granularity > 0
        ):
            raise ValueError(f"granularity must be a finite positive number; got {granularity!r}")
        if isinstance(utility_floor, bool) or not (
            isinstance(utility_floor, numbers.Real) and 0.0 <= utility_floor < 1.0
        ):
            raise ValueError(f"utility_floor must lie in [0, 1); got {utility_floor!r}")
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {_ORDERS}; got {order!r}")
        check_random_state_param(random_state)
        self.granularity = float(granularity)
        self.utility_floor = float(utility_floor)
        self.order = order
        self.random_state = random_state
        try:
            # the guard below uses this very N, so the accounting pays for what runs
            self._max_above = svt_max_above(self.utility_floor, self.granularity)
        except OverflowError:
            raise ValueError("(1 - utility_floor) / granularity is too large to count rounds; "
                             f"got granularity={granularity!r}") from None

    @property
    def max_above(self) -> int:
        """``N``: at most this many above rounds (the ``u >= 1`` guard)."""
        return self._max_above

    @property
    def epsilon_round(self) -> float:
        """``eps0 = 2 * epsilon / (3 N + 1)``, the budget of one round."""
        return doubling_svt_round_epsilon(self.epsilon, self._max_above)

    def privacy_event(self) -> DoublingSVTEvent:
        """The data-independent cost of :meth:`select`: pure ``epsilon``-DP (replace-one)."""
        return DoublingSVTEvent(max_above=self.max_above, epsilon_round=self.epsilon_round)

    def selection_noise(self, n_candidates: int) -> float:
        """How far one round's comparisons are off, in expectation at most, on the [0, 1]
        utility scale: ``(2 + 4 H_m) D / eps0`` for ``m`` candidates (``H_m`` the m-th harmonic
        number). Public.

        A round finds the first candidate whose noisy utility reaches the noisy threshold:
        what it says about the utilities is off by at most the threshold's noise plus the
        largest query noise, ``|Lap(2 D / eps0)| + max_s |Lap(4 D / eps0)|``, whose
        expectation is ``2 D / eps0 + 4 D H_m / eps0`` (the maximum of ``m`` exponential
        variables of mean ``b`` has mean ``b H_m``). The selection is the last candidate a
        round found; when one round's error reaches the utilities' range, no round tells the
        candidates apart.
        """
        harmonic = float(np.sum(1.0 / np.arange(1, max(int(n_candidates), 1) + 1)))
        return ((THRESHOLD_NOISE_MULTIPLIER + QUERY_NOISE_MULTIPLIER * harmonic)
                * self.sensitivity / self.epsilon_round)

    def select(self, utilities: np.ndarray) -> Selection:
        """Select a candidate privately.

        Parameters
        ----------
        utilities : array-like of shape (n_candidates,)
            Exact candidate utilities in [0, 1], each with replace-one sensitivity
            ``sensitivity``. Private: they are neither stored nor reported.

        Returns
        -------
        Selection
            The last candidate found above a threshold, the released trace, and
            ``fallback=True`` (with index 0) when no round found any.
        """
        u = check_utilities(utilities)
        n_candidates = u.shape[0]
        max_above = self.max_above
        eps0 = self.epsilon_round
        rng = resolve_rng(self.random_state)
        threshold_noise = Laplace(epsilon=eps0, delta=0.0, random_state=rng,
                                  sensitivity=THRESHOLD_NOISE_MULTIPLIER * self.sensitivity)
        query_noise = Laplace(epsilon=eps0, delta=0.0, random_state=rng,
                              sensitivity=QUERY_NOISE_MULTIPLIER * self.sensitivity)

        units = 0  # u = u0 + units * g: integer bookkeeping keeps the guard exact
        step = 1
        selected = None
        trace = []
        while True:
            threshold_base = self.utility_floor + (units + step) * self.granularity
            noisy_threshold = threshold_noise.randomise(threshold_base)
            order = (range(n_candidates) if self.order == "fixed"
                     else random_permutation(rng, n_candidates))
            above = None
            for s in order:
                if query_noise.randomise(float(u[s])) >= noisy_threshold:
                    above = int(s)
                    break
            trace.append({"round": len(trace) + 1, "threshold_base": threshold_base,
                          "step": step, "outcome": "none" if above is None else "above",
                          "selected": above})
            if above is None:
                step //= 2
            else:
                selected = above
                units += step
                step *= 2
            if step == 0 or _guard_reached(units, max_above):
                break
        if selected is None:
            return Selection(index=0, trace=tuple(trace), fallback=True)
        return Selection(index=selected, trace=tuple(trace), fallback=False)
