"""Argument validation shared by the accounting rules."""

from __future__ import annotations

import math


def _check_epsilon(value: float, name: str) -> float:
    value = float(value)
    if math.isnan(value) or value < 0.0:
        raise ValueError(f"{name} must be >= 0; got {value!r}")
    return value


def _check_nonnegative(value: float, name: str) -> float:
    return _check_epsilon(value, name)


def _check_probability(value: float, name: str) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {value!r}")
    return value


def _check_base_delta(value: float) -> float:
    value = float(value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"base_delta must be in [0, 1); got {value!r}")
    return value


def _check_nonnegative_int(value: int, name: str) -> int:
    if (isinstance(value, bool) or not math.isfinite(float(value)) or int(value) != value
            or value < 0):
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def _check_positive_int(value: int, name: str) -> int:
    value = _check_nonnegative_int(value, name)
    if value < 1:
        raise ValueError(f"{name} must be >= 1; got {value!r}")
    return value

