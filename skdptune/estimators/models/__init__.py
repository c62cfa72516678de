"""The model families skdptune knows, one adapter each, found through one registry by class."""

from ._adapter import ModelAdapter, float_at_least
from ._logistic import INTERCEPT_COLUMN, InterceptColumnLogisticRegression, row_norm
from ._naive_bayes import FeaturesAtOnceGaussianNB
from ._registry import (
    COST_PARAMS,
    LEAK_ADVICE,
    PAIR_PARAMS,
    STRUCTURE_PARAMS,
    adapter_for,
    advice_for,
    sound_fitting,
    switch_to_sound_fits,
    with_user_class_names,
)
from ._tree import SeparateStreamsDecisionTreeClassifier

__all__ = ["COST_PARAMS", "INTERCEPT_COLUMN", "LEAK_ADVICE", "PAIR_PARAMS", "STRUCTURE_PARAMS",
           "FeaturesAtOnceGaussianNB", "InterceptColumnLogisticRegression", "ModelAdapter",
           "SeparateStreamsDecisionTreeClassifier", "adapter_for", "advice_for",
           "float_at_least", "row_norm", "sound_fitting", "switch_to_sound_fits",
           "with_user_class_names"]
