"""diffprivlib's ``StandardScaler``: its noise is sized for a replaced record (cost factor 1);
what bounds its output.

diffprivlib draws ``mean_`` with a truncated Laplace mechanism on ``[lower, upper]``, so
``|mean_| <= b``, the largest magnitude of the bounds; ``scale_`` is the square root of a
variance drawn on ``[0, (upper - lower)^2 / 4]``, and scikit-learn replaces a scale below
``10 eps`` (float64's machine epsilon) by 1. On rows of magnitude at most ``L`` its output is
then at most ``(L + b) / (10 eps)`` (``b`` is 0 without centring, the divisor 1 without
scaling), whatever the noise. Its ``transform`` does not clip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from diffprivlib.models import StandardScaler
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
)
from sklearn.preprocessing import StandardScaler as _SklearnStandardScaler

from ._adapter import ModelAdapter

__all__ = ["SCALE_FLOOR", "StandardScalerAdapter"]

#: the smallest ``scale_`` of a scaler: scikit-learn replaces smaller ones by 1
SCALE_FLOOR = 10 * np.finfo(np.float64).eps

_USE_SCALER = "use diffprivlib.models.StandardScaler(bounds=...) with public bounds"
_OR_CONSTANTS = ("use diffprivlib.models.StandardScaler(bounds=...), or a FunctionTransformer "
                 "with public constants")


class StandardScalerAdapter(ModelAdapter):
    """diffprivlib's ``StandardScaler`` (module docstring)."""

    models = (StandardScaler,)
    replaces = {_SklearnStandardScaler: _USE_SCALER, RobustScaler: _USE_SCALER,
                QuantileTransformer: _USE_SCALER, PowerTransformer: _USE_SCALER,
                MinMaxScaler: _OR_CONSTANTS, MaxAbsScaler: _OR_CONSTANTS}
    leak_params = {"bounds": "bounds=(lower, upper) with public per-feature bounds"}
    pair_params = ("bounds",)
    # its transform is scikit-learn's: the same names and float type, without drawing noise
    # (diffprivlib draws it feature by feature: about 0.5 ms a feature)
    format_twin = _SklearnStandardScaler
    counterpart = _SklearnStandardScaler
    counterpart_params = ("with_mean", "with_std", "copy")

    def output_bound(self, params: Mapping[str, Any],
                     n_features: int) -> tuple[bool, float] | None:
        return bool(params["with_mean"]), (1 / SCALE_FLOOR if params["with_std"] else 1.0)
