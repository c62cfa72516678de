"""Exceptions raised by skdptune.

Both are :class:`ValueError` subclasses, so code written for scikit-learn that catches
``ValueError`` around ``fit`` keeps working. They are raised from the *configuration* of an
estimator (its parameters and the search space), never from the values in the private data, so
raising them releases nothing about the data.
"""

from __future__ import annotations

__all__ = ["PrivacyLeakError", "NonPrivateComponentError"]


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
