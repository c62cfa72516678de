"""How the components of an estimator are named.

A component is named by its *path*: its scikit-learn nested parameter name relative to the
estimator, e.g. ``"clf"``, ``"preprocess__num__scaler"`` or ``"remainder"`` of a
``ColumnTransformer``. The estimator itself has the empty path ``""``. A path can be used
directly with ``set_params`` (``f"{path}__epsilon"``, or ``"epsilon"`` for the root).
Messages name a component's class by its public dotted name.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["join", "public_name"]


def join(prefix: str, name: str) -> str:
    """The path of ``name`` inside the component at ``prefix``."""
    return f"{prefix}__{name}" if prefix else name


def public_name(obj: Any) -> str:
    """``sklearn.preprocessing.StandardScaler`` rather than ``sklearn.preprocessing._data...``."""
    cls = type(obj)
    parts = (cls.__module__ or "").split(".")
    for i in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:i]))
        if module is not None and getattr(module, cls.__name__, None) is cls:
            return f"{'.'.join(parts[:i])}.{cls.__qualname__}"
    return f"{cls.__module__}.{cls.__qualname__}"
