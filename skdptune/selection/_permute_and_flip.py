"""Permute-and-flip selector (McKenna & Sheldon 2020) over aggregated candidate utilities.

One private selection: visit the candidates in a uniformly random order and accept candidate
``s`` with probability ``exp(eps * (u_s - max_r u_r) / (2 D))``; the first accepted candidate
is released. It is pure ``eps``-DP for utilities with replace-one sensitivity ``D`` (never
worse than the exponential mechanism at the same budget), and its error grows with
``log(n_candidates) / eps`` instead of the SVT's number of rounds. The noise comes from
diffprivlib's :class:`~diffprivlib.mechanisms.PermuteAndFlip` with ``monotonic=False``: under
replace-one a candidate's utility can move either way, so the monotone variant (which would
halve the ``2`` above) does not apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from diffprivlib.mechanisms import PermuteAndFlip

from ..events import PermuteAndFlipEvent
from ._base import (
    Selection,
    check_epsilon,
    check_random_state_param,
    check_sensitivity,
    check_utilities,
    resolve_rng,
)

__all__ = ["PermuteAndFlipSelector", "expected_loss_bound", "selection_error_bound"]


def selection_error_bound(n_candidates: int, sensitivity: float, epsilon: float,
                          beta: float = 0.05) -> float:
    """Utility the selection can lose, with probability at least ``1 - beta``.

    The exponential mechanism selects a candidate whose utility is below the best by at least
    ``2 D (ln(n_candidates) + t) / epsilon`` with probability at most ``exp(-t)`` (McSherry &
    Talwar 2007, Theorem 6; ``D`` = ``sensitivity``); permute-and-flip is never worse (McKenna &
    Sheldon 2020). With ``t = ln(1 / beta)`` the loss is below
    ``2 D ln(n_candidates / beta) / epsilon`` with probability ``1 - beta``. A public quantity:
    it depends on the settings only.

    Examples
    --------
    >>> round(float(selection_error_bound(20, 1 / 244, 1.0)), 4)
    0.0491
    """
    return float(2.0 * sensitivity * np.log(max(int(n_candidates), 1) / beta) / epsilon)


def expected_loss_bound(n_candidates: int, sensitivity: float, epsilon: float) -> float:
    """Bound on the *expected* utility the selection loses: ``2 D (ln(n_candidates) + 1) / eps``.

    The tail bound of :func:`selection_error_bound`, ``P[loss >= 2 D (ln m + t) / eps] <=
    exp(-t)``, integrated over the loss: ``E[loss] <= 2 D ln(m) / eps + (2 D / eps) * int_0^inf
    exp(-t) dt`` -- the tail bound at ``beta = 1 / e``. It holds for the exponential mechanism
    and so for permute-and-flip, whose expected loss is never larger (McKenna & Sheldon 2020).
    A public quantity: it depends on the settings only.

    Examples
    --------
    >>> round(float(expected_loss_bound(4, 1 / 30, 1.0)), 4)
    0.1591
    """
    return float(2.0 * sensitivity * (np.log(max(int(n_candidates), 1)) + 1.0) / epsilon)


class PermuteAndFlipSelector:
    """Private selection by permute-and-flip.

    Parameters
    ----------
    epsilon : float
        Privacy budget of the selection (> 0).
    sensitivity : float
        Replace-one sensitivity ``D`` of every candidate's utility (> 0): ``1 / k`` for the
        mean over ``k`` disjoint partitions of per-partition utilities in [0, 1].
    random_state : None, int or numpy.random.RandomState, default=None
        ``None`` uses diffprivlib's cryptographically secure generator (production). An int
        makes every ``select`` call reproducible (tests and teaching only); a ``RandomState``
        is advanced by each call.

    Notes
    -----
    Neighbouring relation: replace one record. If every utility changes by at most
    ``sensitivity`` between neighbours, one :meth:`select` is pure ``epsilon``-DP; only the
    selected index is released (``Selection.trace == ()``, never a fallback).

    Examples
    --------
    >>> import numpy as np
    >>> pf = PermuteAndFlipSelector(1.0, sensitivity=1 / 1000, random_state=0)
    >>> pf.select(np.array([0.55, 0.9, 0.6])).index
    1
    """

    def __init__(self, epsilon: float, *, sensitivity: float, random_state: Any = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        check_random_state_param(random_state)
        self.random_state = random_state

    def privacy_event(self) -> PermuteAndFlipEvent:
        """The data-independent cost of :meth:`select`: pure ``epsilon``-DP (replace-one)."""
        return PermuteAndFlipEvent(epsilon=self.epsilon)

    def selection_noise(self, n_candidates: int) -> float:
        """How far from the best the selection lands, in expectation at most, on the [0, 1]
        utility scale (:func:`expected_loss_bound`; public)."""
        return expected_loss_bound(n_candidates, self.sensitivity, self.epsilon)

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
            The selected index, ``trace=()`` and ``fallback=False``.
        """
        u = check_utilities(utilities)
        n_candidates = u.shape[0]
        mechanism = PermuteAndFlip(epsilon=self.epsilon, sensitivity=self.sensitivity,
                                   utility=[float(v) for v in u], monotonic=False,
                                   candidates=list(range(n_candidates)),
                                   random_state=resolve_rng(self.random_state))
        index = int(mechanism.randomise())
        return Selection(index=index, trace=(), fallback=False)
