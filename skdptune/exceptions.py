"""Exceptions raised by skdptune.

``PrivacyLeakError`` and ``NonPrivateComponentError`` are :class:`ValueError` subclasses, so
code written for scikit-learn that catches ``ValueError`` around ``fit`` keeps working. They are
raised from the *configuration* of an estimator (its parameters and the search space), never
from the values in the private data, so raising them releases nothing about the data.

``PrivateFitError`` is the one exception that can leave the private part of ``fit``: its message
is fixed and it carries no cause, context or traceback from inside (docs/privacy.md).
"""

from __future__ import annotations

__all__ = ["DomainError", "NonPrivateComponentError", "PrivacyLeakError", "PrivateFitError",
           "TooFewRowsWarning"]


class PrivacyLeakError(ValueError):
    """A diffprivlib component would read a privacy parameter off the data.

    diffprivlib emits :class:`diffprivlib.utils.PrivacyLeakWarning` and then computes, e.g.,
    ``bounds`` or ``data_norm`` from the data it is fitted on; its differential-privacy guarantee
    no longer holds. skdptune refuses such configurations before any budget is charged (see
    :func:`skdptune.estimators.check_leak_free_configuration`) and turns the warning into this
    error if it is raised anyway (:func:`skdptune.estimators.leak_warnings_as_errors`).

    Examples
    --------
    >>> from skdptune import DPGridSearchCV, PrivacyLeakError
    >>> from diffprivlib.models import GaussianNB
    >>> search = DPGridSearchCV(GaussianNB(), {"var_smoothing": [1e-9]}, classes=[0, 1])
    >>> try:
    ...     search.fit([[0.0], [1.0]] * 100, [0, 1] * 100)
    ... except PrivacyLeakError as exc:
    ...     print("refused:", "bounds=None" in str(exc))
    refused: True
    """


class NonPrivateComponentError(ValueError):
    """An estimator contains a component that learns from the data without differential privacy.

    Raised by :func:`skdptune.estimators.estimator_privacy` with a message that names the
    component by its path (its scikit-learn nested parameter name, e.g. ``"preprocess__scaler"``)
    and suggests a private replacement.

    Examples
    --------
    >>> from skdptune import NonPrivateComponentError, estimator_privacy
    >>> from diffprivlib.models import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> try:
    ...     estimator_privacy(make_pipeline(StandardScaler(), LogisticRegression(data_norm=1.0)))
    ... except NonPrivateComponentError as exc:
    ...     print("standardscaler" in str(exc))
    True
    """


class PrivateFitError(RuntimeError):
    """Something failed inside the private part of ``fit``; the cause is not released.

    Raised by :func:`skdptune._private.run_private` with a fixed message and no ``__cause__``,
    ``__context__`` or inner traceback, because the original exception may describe the
    private data. The search's budget is charged (the data was read). The padding rows, the
    dry run and the domain checks make the known data-dependent failures impossible
    (docs/privacy.md): a row that the data-independent steps in front of the first private
    model cannot transform, or turn into values that model cannot take, is refused before the
    private part with :class:`DomainError` (nothing charged), as below. This is the exit of
    last resort. ``error_score="raise"`` re-raises the original exception instead, for
    debugging, which voids the guarantee.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune import DPRandomSearchCV, DomainError
    >>> from diffprivlib.models import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> def fails_on_private_rows(X):  # row-wise, but fails on a value of the private data
    ...     if np.any(np.asarray(X) == 7.0):
    ...         raise ValueError("a secret value: 7.0")
    ...     return X
    >>> pipe = make_pipeline(FunctionTransformer(fails_on_private_rows),
    ...                      LogisticRegression(data_norm=10.0))
    >>> X, y = np.full((100, 1), 7.0), np.array([0, 1] * 50)
    >>> try:
    ...     DPRandomSearchCV(pipe, {"logisticregression__C": [1.0]}, classes=[0, 1]).fit(X, y)
    ... except DomainError as exc:
    ...     print("secret" in str(exc), exc.__context__)
    False None
    """


class DomainError(ValueError):
    """The data lie outside the domain the privacy guarantee is stated on.

    Raised by :func:`skdptune.public.check_domain` -- a label outside the declared ``classes``,
    a non-finite target (estimators other than classifiers), non-finite features the estimator
    does not accept -- and :func:`skdptune.public.check_model_input` -- a row that the
    data-independent steps before the first private model cannot transform, or turn into values
    it cannot take, or a value beyond the public magnitude limit of a private transformer
    followed by other steps (:mod:`skdptune.public._magnitude`) -- with a fixed message (no
    value, no count, no position), after the budget check and before any private computation.
    Nothing is charged: differential privacy is a statement about the datasets of a domain, and
    this error says only that the dataset is not one of them (docs/privacy.md).

    Examples
    --------
    >>> from skdptune import DomainError, DPGridSearchCV
    >>> from diffprivlib.models import GaussianNB
    >>> search = DPGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9]},
    ...                         classes=[0, 1])
    >>> try:
    ...     search.fit([[0.5]] * 200, [0] * 199 + [2])  # label 2 was not declared
    ... except DomainError as exc:
    ...     print("not in the declared classes" in str(exc), "2" in str(exc))
    True False
    """


class TooFewRowsWarning(UserWarning):
    """The search cannot be expected to do better than a data-independent choice.

    Given by ``fit`` (once, before the data is read) when a public criterion -- a function of
    ``n``, the candidates, the budget and how the search evaluates them, never of the data --
    says that the private selection's noise is at least what a uniformly random pick of a
    candidate can lose on the [0, 1] utility scale (``DPGridSearchCV``,
    ``DPRandomSearchCV``), or that every released gradient is at least as large in noise as
    any gradient the data can give (``DPGIBOSearchCV``, which then stays near its
    data-independent start point). The message says which figure and what to change: more
    rows, a larger ``epsilon``, fewer candidates or runs. Like every warning of a search, it
    is a release, and a data-independent one: neighbouring datasets of the same size get the
    same warnings (docs/privacy.md).

    Examples
    --------
    >>> import warnings
    >>> from skdptune import DPGridSearchCV, TooFewRowsWarning
    >>> from diffprivlib.models import GaussianNB
    >>> search = DPGridSearchCV(GaussianNB(bounds=(-1.0, 1.0)),
    ...                         {"var_smoothing": [1e-9, 1e-3, 1e-1]}, classes=[0, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = search.fit([[0.0], [1.0]] * 75, [0, 1] * 75)  # 150 rows: one partition
    >>> [w.category.__name__ for w in caught]
    ['TooFewRowsWarning']
    """
