"""diffprivlib's mechanisms applied to many values, their parameters checked on the first draw.

diffprivlib's ``randomise`` re-validates every parameter of its mechanism (``_check_all``) on
each call. Where skdptune applies one mechanism to many values -- the entries of
``SSPRegressor``'s statistics, the objective perturbations of thousands of batched logistic
fits -- nothing changes the mechanism's parameters between the calls, and every value is a
float, so the checks run on the first call only. The draws are ``randomise``'s own: the same
generator, read in the same order, and the same arithmetic (tests/test_mechanisms.py).
"""

from __future__ import annotations

import diffprivlib.mechanisms as dp

__all__ = ["Laplace", "Vector"]


class _ChecksOnce:
    """``_check_all`` on the first ``randomise`` only (the parameters are fixed by then)."""

    _checked = False

    def _check_all(self, value):
        if not self._checked:
            super()._check_all(value)
            self._checked = True
        return True


class Laplace(_ChecksOnce, dp.Laplace):
    """diffprivlib's :class:`~diffprivlib.mechanisms.Laplace`, its parameters checked once (on
    ``SSPRegressor``'s statistics they were two thirds of the noise's time)."""


class Vector(_ChecksOnce, dp.Vector):
    """diffprivlib's :class:`~diffprivlib.mechanisms.Vector`, its parameters checked once (10
    ms of 26 for 660 batched fits' draws)."""
