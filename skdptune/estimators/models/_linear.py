"""skdptune's own sound linear regressor, :class:`~skdptune.linear_model.SSPRegressor`.

It sizes its noise for replace-one neighbours (docs/ssp_regressor.md), so one fit with
``epsilon`` costs ``epsilon``: the adapter's defaults. What it adds: the public bounds it reads
off the data when they are ``None``, the target range it declares, the ridge that weighs
against a sum over the rows, and the batched runs of a repetition search (the exact statistics of
the rows shared by the runs of one setting of the bounds).
"""

from __future__ import annotations

from typing import Any

from sklearn.linear_model import LinearRegression as _SklearnLinearRegression
from sklearn.linear_model import Ridge as _SklearnRidge

from ...linear_model import SSPRegressor
from ._adapter import ModelAdapter

__all__ = ["SSPRegressorAdapter"]

_ADVICE = ("use skdptune.linear_model.SSPRegressor(bounds_X=..., bounds_y=...) with public "
           "bounds")


class SSPRegressorAdapter(ModelAdapter):
    models = (SSPRegressor,)
    replaces = {_SklearnLinearRegression: _ADVICE, _SklearnRidge: _ADVICE}
    leak_params = {
        "bounds_X": "bounds_X=(lower, upper) with public per-feature bounds",
        "bounds_y": "bounds_y=(lower, upper) with public bounds on the target",
    }
    pair_params = ("bounds_X", "bounds_y")
    target_param = "bounds_y"
    # a ridge added to the Gram matrix, a sum over the rows: a fit on fewer rows standing in
    # for one on all of them gets the ridge in proportion
    row_proportional_params = ("alpha",)
    # ordinary least squares: ``alpha`` weighs the Gram matrix of the rows normalised by their
    # bounds, intercept included, which no ``Ridge(alpha)`` on the raw rows reproduces; the
    # adaptive ridge is only as large as the noise needs, and least squares is the fit a user
    # would run without privacy
    counterpart = _SklearnLinearRegression
    counterpart_params = ("fit_intercept",)
    # the runs of a repetition search share the rows' exact statistics of each setting of the
    # bounds (skdptune.evaluation._batched_ssp)
    batched_statistics = True

    def batched(self, estimator: Any) -> bool:
        """With public bounds (``None`` is read off the data: one by one, where the fit's
        ``PrivacyLeakWarning`` stops the search)."""
        return estimator.bounds_X is not None and estimator.bounds_y is not None
