"""skdptune: differentially private hyperparameter tuning for scikit-learn.

Drop-in replacements for ``GridSearchCV`` / ``RandomizedSearchCV`` (and a gradient-informed
search for continuous spaces) whose whole pipeline --
choosing the hyperparameters and training the returned model -- is differentially private,
with diffprivlib models as the private base estimators.
"""

# first: repairs diffprivlib 0.6.6 for scikit-learn >= 1.8 before anything imports it
from . import _compat  # noqa: F401
from ._space import ArrayRange, EpsilonSplit
from .accounting import PrivacyReport
from .estimators import estimator_privacy
from .exceptions import (
    DomainError,
    NonPrivateComponentError,
    PrivacyLeakError,
    PrivateFitError,
    TooFewRowsWarning,
)
from .gibo import DPGIBOSearchCV
from .grid import DPGridSearchCV
from .pareto import ParetoFront, privacy_utility_front
from .random import DPRandomSearchCV

__version__ = "0.1.0.dev0"

__all__ = [
    "ArrayRange",
    "DPGIBOSearchCV",
    "DPGridSearchCV",
    "DPRandomSearchCV",
    "DomainError",
    "EpsilonSplit",
    "NonPrivateComponentError",
    "ParetoFront",
    "PrivacyLeakError",
    "PrivateFitError",
    "PrivacyReport",
    "TooFewRowsWarning",
    "estimator_privacy",
    "privacy_utility_front",
]
