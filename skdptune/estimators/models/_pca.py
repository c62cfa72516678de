"""diffprivlib's ``PCA``: its noise is sized for a replaced record (cost factor 1: bounded
means, a covariance of rows of norm at most ``data_norm``); what bounds its output.

Not whitened, ``|(x - mean_) . v| <= ||x - mean_||_2 <= sqrt(d) (L + b)`` for the unit
components ``v`` on rows of magnitude at most ``L``; ``mean_`` is drawn within the bounds like
the scaler's (``b = 0`` when ``centered``: the data are taken as centred and no mean is read).
A whitened ``PCA`` divides by noisy variances that can be arbitrarily small: no public number
bounds its output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from diffprivlib.models import PCA
from sklearn.decomposition import PCA as _SklearnPCA

from ._adapter import ModelAdapter

__all__ = ["PCAAdapter"]


class PCAAdapter(ModelAdapter):
    """diffprivlib's ``PCA`` (module docstring)."""

    models = (PCA,)
    replaces = {_SklearnPCA: "use diffprivlib.models.PCA(data_norm=..., bounds=...)"}
    leak_params = {
        "bounds": "bounds=(lower, upper) with public per-feature bounds",
        "data_norm": "data_norm to a public bound on the rows' L2 norm",
    }
    pair_params = ("bounds",)
    structure_params = ("centered",)
    counterpart = _SklearnPCA
    counterpart_params = ("n_components", "whiten", "copy")

    def leaking(self, params: Mapping[str, Any]) -> list[str]:
        # centred data: no mean is read, so no bounds are needed
        return [name for name in super().leaking(params)
                if not (name == "bounds" and params.get("centered"))]

    def output_bound(self, params: Mapping[str, Any],
                     n_features: int) -> tuple[bool, float] | None:
        if params["whiten"]:
            return None
        return not params["centered"], math.sqrt(max(n_features, 1))
