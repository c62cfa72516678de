"""The doubling-step sparse vector technique.

Of Ding, Wu, Xu & Pan, "Constant-overhead DP hyperparameter tuning", with the ``u >= 1`` guard
of Ding & Wu, "Revisiting hyperparameter tuning with differential privacy".
"""

from __future__ import annotations

import math

from ._checks import _check_epsilon, _check_positive_int

# --------------------------------------------------------------------------------------------
# Doubling-step sparse vector technique (docs/selection.md, section 3)
# --------------------------------------------------------------------------------------------


def doubling_svt_epsilon(max_above: int, epsilon_round: float) -> float:
    """Pure-DP cost of the doubling-step SVT selector: ``N * eps0 + (N + 1) * eps0 / 2``.

    Rule (``docs/accounting.md``, "Doubling-step SVT"): an "above" round (threshold noise
    ``Lap(2 Delta / eps0)``, query noise ``Lap(4 Delta / eps0)``) is ``eps0``-DP, a "none"
    round ``eps0 / 2``-DP; the ``u >= 1`` guard allows at most ``N`` above rounds and the step
    dynamics at most ``N + 1`` none rounds in every transcript, so the selector is pure
    ``(3N + 1) eps0 / 2``-DP whatever the data. Utilities of sensitivity ``Delta`` under
    replace-one. Algorithm 1 of Ding, Wu, Xu & Pan ("Constant-overhead DP hyperparameter
    tuning") with the guard of Ding & Wu ("Revisiting hyperparameter tuning with differential
    privacy", line 29 of its algorithm); the per-transcript bound replaces their
    data-dependent accounting.

    Parameters
    ----------
    max_above : int
        ``N``, the cap on above rounds (:func:`svt_max_above`).
    epsilon_round : float
        ``eps0``, the per-round budget.

    Returns
    -------
    float
        ``epsilon`` of the whole selector (``delta = 0``).
    """
    n = _check_positive_int(max_above, "max_above")
    eps0 = _check_epsilon(epsilon_round, "epsilon_round")
    return n * eps0 + (n + 1) * eps0 / 2.0


def doubling_svt_round_epsilon(epsilon: float, max_above: int) -> float:
    """Per-round budget ``eps0 = 2 epsilon / (3N + 1)`` so the selector costs ``epsilon``.

    Inverse of :func:`doubling_svt_epsilon` (same rule, replace-one).

    Parameters
    ----------
    epsilon : float
        Budget of the whole selector (pure DP).
    max_above : int
        ``N``, the cap on above rounds.

    Returns
    -------
    float
        ``eps0``.
    """
    n = _check_positive_int(max_above, "max_above")
    return 2.0 * _check_epsilon(epsilon, "epsilon") / (3 * n + 1)


def svt_max_above(utility_floor: float, granularity: float) -> int:
    """``N = ceil((1 - u0) / g)``: the most "above" rounds the ``u >= 1`` guard allows.

    Each above round raises the threshold by ``step * g >= g``, starting from ``u0``; a round
    runs only while ``u < 1``, so at most ``ceil((1 - u0) / g)`` above rounds happen (exact
    arithmetic). The quotient is rounded to the nearest integer when it is within a relative
    ``1e-9`` of it, so that ``(1 - 0.5) / 0.1 = 5.000000000000001`` gives 5, not 6.

    The selector must enforce the cap by *counting* above rounds (stop after ``N``) or by
    keeping ``u`` as ``u0 + m * g`` with an integer ``m``: in floating point,
    ``0.5 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 < 1`` and a plain ``u >= 1`` test would allow a sixth
    above round, which this ``N`` does not pay for.

    Parameters
    ----------
    utility_floor : float
        ``u0`` in [0, 1).
    granularity : float
        ``g`` > 0.

    Returns
    -------
    int
        ``N >= 1``.
    """
    u0, g = float(utility_floor), float(granularity)
    if not (math.isfinite(u0) and 0.0 <= u0 < 1.0):
        raise ValueError(f"utility_floor must be in [0, 1); got {utility_floor!r}")
    if not (math.isfinite(g) and g > 0.0):
        raise ValueError(f"granularity must be > 0; got {granularity!r}")
    quotient = (1.0 - u0) / g
    nearest = round(quotient)
    if abs(quotient - nearest) <= 1e-9 * max(1.0, abs(quotient)):
        return max(1, int(nearest))
    return max(1, math.ceil(quotient))
