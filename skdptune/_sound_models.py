"""diffprivlib's models as skdptune fits them: sound where diffprivlib's own fit is not.

Some diffprivlib models are sound in their parameters but not in their ``fit``. For those,
this module holds a subclass that fits the same model soundly, with the same parameters, and
:func:`sound_fitting` switches a component to its subclass for the duration of a fit, then
back: what a search returns is the user's own class, fitted by the sound code. Every fit of a
search -- partition fits, repetition runs, DP-GIBO fits, the dry run, the refit -- goes through
:func:`skdptune.evaluation._fit.fit_on_rows`, which fits inside :func:`sound_fitting`; the
batched solvers (:mod:`skdptune.evaluation._batched`) solve the same objective themselves.

``LogisticRegression`` with ``fit_intercept=True``
    diffprivlib leaves the intercept out of the ridge, and in the branch where its ``Vector``
    mechanism adds no extra ridge no finite epsilon holds (:mod:`skdptune._logistic`).
    :class:`InterceptColumnLogisticRegression` clips the rows to ``data_norm`` as diffprivlib
    does, appends the public constant column :data:`~skdptune._logistic.INTERCEPT_COLUMN`, and
    fits diffprivlib's model *without* intercept at ``data_norm`` ``sqrt(data_norm^2 + 1)``:
    the intercept's weight is then regularised like the others, the fit is objective
    perturbation of a model without intercept on rows of that norm, and
    :func:`skdptune._logistic.logistic_regression_epsilon` prices exactly that. The column
    equal to 1 keeps diffprivlib's noise (the same mechanism, sensitivity and branch); the
    only change to the model is the intercept's ridge.

``DecisionTreeClassifier``
    diffprivlib draws the released structure and the classes of the empty leaves from numpy's
    global Mersenne Twister, whose state the thresholds of a deep enough tree determine: the
    empty leaves -- which one record can decide -- are then readable.
    :class:`~skdptune._tree.SeparateStreamsDecisionTreeClassifier` draws the structure from a
    generator of the fit's own and the leaves from the secure generator.

The switch assigns ``__class__``: each subclass adds no parameter, no ``__init__`` and no
``__slots__``, so the two classes share ``get_params`` and the instance layout. Only exact
diffprivlib classes are switched (:data:`SOUND_FITS`); skdptune accepts no other subclass of
them as a private component.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from diffprivlib.models import DecisionTreeClassifier, LogisticRegression
from diffprivlib.models.logistic_regression import validate_data  # diffprivlib's own, per sklearn
from diffprivlib.validation import clip_to_norm

from ._estimators import iter_dp_components
from ._logistic import INTERCEPT_COLUMN, row_norm
from ._params import get_params
from ._tree import SeparateStreamsDecisionTreeClassifier

__all__ = ["InterceptColumnLogisticRegression", "SOUND_FITS", "sound_fitting",
           "switch_to_sound_fits"]


class InterceptColumnLogisticRegression(LogisticRegression):
    """diffprivlib's ``LogisticRegression`` whose intercept is a regularised weight.

    With ``fit_intercept=False`` (or ``data_norm=None``, which diffprivlib reads off the data
    with a ``PrivacyLeakWarning``) ``fit`` is diffprivlib's. With ``fit_intercept=True`` it
    validates the rows as diffprivlib does (``n_features_in_`` and ``feature_names_in_``
    included), clips them to ``data_norm``, appends a column of
    :data:`~skdptune._logistic.INTERCEPT_COLUMN`, and fits diffprivlib's model without
    intercept at ``data_norm`` ``sqrt(data_norm^2 + INTERCEPT_COLUMN^2)`` (the rows' norm
    bound: the clipping diffprivlib then applies changes nothing), with this model's
    ``epsilon``, ``C``, ``tol``, ``max_iter``, ``random_state`` and ``accountant`` (charged
    ``epsilon``, as diffprivlib's fit charges it). ``coef_`` is the weights of the features,
    ``intercept_`` the column's weight times the column.

    Privacy (replace-one): the fit is objective perturbation without intercept on rows of
    norm at most ``sqrt(data_norm^2 + 1)``, whose cost
    :func:`skdptune._logistic.logistic_regression_epsilon` bounds; the constant column is
    public and the same for every row.
    """

    def fit(self, X, y, sample_weight=None):
        if not self.fit_intercept or self.data_norm is None:
            return super().fit(X, y, sample_weight=sample_weight)
        self._validate_params()
        self.accountant.check(self.epsilon, 0)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=float, order="C",
                             accept_large_sparse=True)
        q = float(self.data_norm)
        # clip_to_norm refuses sparse rows, as in diffprivlib's own fit: the rows are dense
        rows = clip_to_norm(X, q)
        rows = np.hstack([rows, np.full((rows.shape[0], 1), INTERCEPT_COLUMN)])
        params = get_params(self, deep=False)
        params.update(fit_intercept=False, data_norm=row_norm(q, True), warm_start=False)
        inner = LogisticRegression(**params)
        if self.warm_start and getattr(self, "coef_", None) is not None:
            inner.warm_start = True
            inner.coef_ = np.hstack([self.coef_, self.intercept_[:, None] / INTERCEPT_COLUMN])
        inner.fit(rows, y, sample_weight=sample_weight)
        d = X.shape[1]
        self.classes_ = inner.classes_
        self.coef_ = inner.coef_[:, :d].copy()
        self.intercept_ = inner.coef_[:, d] * INTERCEPT_COLUMN
        self.n_iter_ = inner.n_iter_
        return self


#: diffprivlib class -> the subclass that fits it soundly (exact classes only).
SOUND_FITS: dict[type, type] = {
    LogisticRegression: InterceptColumnLogisticRegression,
    DecisionTreeClassifier: SeparateStreamsDecisionTreeClassifier,
}


def switch_to_sound_fits(estimator: Any) -> list[tuple[Any, type]]:
    """Switch, in place, every diffprivlib component of ``estimator`` whose class is in
    :data:`SOUND_FITS` to its sound subclass (kept by ``clone``: for a throwaway estimator
    that other code fits). Returns ``(component, its own class)`` of those switched."""
    switched = [(component, type(component)) for _, component in iter_dp_components(estimator)
                if type(component) in SOUND_FITS]
    for component, cls in switched:
        component.__class__ = SOUND_FITS[cls]
    return switched


@contextlib.contextmanager
def sound_fitting(estimator: Any) -> Iterator[Any]:
    """Context manager: ``estimator``'s diffprivlib components of a class in
    :data:`SOUND_FITS` are of its sound subclass inside the block, of their own class after
    it (also when the block raises). Yields ``estimator``."""
    switched = switch_to_sound_fits(estimator)
    try:
        yield estimator
    finally:
        for component, cls in switched:
            component.__class__ = cls

