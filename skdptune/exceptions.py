"""Exceptions raised by skdptune.

``PrivacyLeakError`` and ``NonPrivateComponentError`` are :class:`ValueError` subclasses, so
code written for scikit-learn that catches ``ValueError`` around ``fit`` keeps working. They are
raised from the *configuration* of an estimator (its parameters and the search space), never
from the values in the private data, so raising them releases nothing about the data.

``PrivateFitError`` is the one exception that can leave the private part of ``fit``: its message
is fixed and it carries no cause, context or traceback from inside (docs/privacy.md).
"""

from __future__ import annotations

__all__ = ["DomainError", "NonPrivateComponentError", "PrivacyLeakError", "PrivateFitError"]


class PrivacyLeakError(ValueError):
    """A diffprivlib component would read a privacy parameter off the data.

    diffprivlib emits :class:`diffprivlib.utils.PrivacyLeakWarning` and then computes, e.g.,
    ``bounds`` or ``data_norm`` from the data it is fitted on; its differential-privacy guarantee
    no longer holds. skdptune refuses such configurations before any budget is charged (see
    :func:`skdptune._estimators.check_leak_free_configuration`) and turns the warning into this
    error if it is raised anyway (:func:`skdptune._estimators.leak_warnings_as_errors`).
    """


class NonPrivateComponentError(ValueError):
    """An estimator contains a component that learns from the data without differential privacy.

    Raised by :func:`skdptune._estimators.estimator_privacy` with a message that names the
    component by its path (its scikit-learn nested parameter name, e.g. ``"preprocess__scaler"``)
    and suggests a private replacement.
    """


class PrivateFitError(RuntimeError):
    """Something failed inside the private part of ``fit``; the cause is not released.

    Raised by :func:`skdptune._private.run_private` with a fixed message and no ``__cause__``,
    ``__context__`` or inner traceback, because the original exception may describe the
    private data. The search's budget is charged (the data was read). The padding rows and the
    dry run make the known data-dependent failures impossible (docs/privacy.md); this is the
    exit of last resort. ``error_score="raise"`` re-raises the original exception instead, for
    debugging, which voids the guarantee.
    """


class DomainError(ValueError):
    """The data lie outside the domain the privacy guarantee is stated on.

    Raised by :func:`skdptune._public.check_domain` -- a label outside the declared ``classes``,
    non-finite features the estimator does not accept -- with a fixed message (no value, no
    count, no position), after the budget check and before any private computation. Nothing is
    charged: differential privacy is a statement about the datasets of a domain, and this error
    says only that the dataset is not one of them (docs/privacy.md).
    """
