"""diffprivlib's models that do not meet their own guarantee as implemented (diffprivlib
0.6.6): refused like non-private components, with the reason (docs/privacy.md)."""

from __future__ import annotations

from diffprivlib.models import KMeans, LinearRegression, RandomForestClassifier
from sklearn.cluster import KMeans as _SklearnKMeans

from ._adapter import ModelAdapter

__all__ = ["KMeansAdapter", "LinearRegressionAdapter", "RandomForestAdapter"]


class KMeansAdapter(ModelAdapter):
    models = (KMeans,)
    replaces = {_SklearnKMeans: "no clusterer of diffprivlib is accepted (see diffprivlib's "
                                "KMeans)"}
    unsound = (
        "its centre update leaves a cluster that no row is nearest to where it was, without "
        "noise, and whether a cluster is empty depends on the rows (one record can decide it: "
        "some outputs then have probability 0 on a dataset and not on its neighbour); it also "
        "draws its noise from numpy's global generator when random_state is None. skdptune "
        "does not accept it until a sound update exists"
    )


class RandomForestAdapter(ModelAdapter):
    models = (RandomForestClassifier,)
    unsound = (
        "each tree draws its leaves' noise from numpy's Mersenne Twister seeded with a 31-bit "
        "integer that the forest takes from numpy's global generator and stores in the "
        "returned tree's random_state, so anyone who knows the other rows can refit a tree "
        "with it and rule out a candidate for the last one (an event of probability 0 on the "
        "true dataset); a global np.random.seed fixes those seeds, and the tree's thresholds "
        "reveal them. Use diffprivlib.models.DecisionTreeClassifier, which skdptune fits with "
        "generators of the fit's own and secure leaf noise (docs/privacy.md)"
    )


class LinearRegressionAdapter(ModelAdapter):
    models = (LinearRegression,)
    leak_params = {
        "bounds_X": "bounds_X=(lower, upper) with public per-feature bounds",
        "bounds_y": "bounds_y=(lower, upper) with public bounds on the target",
    }
    pair_params = ("bounds_X", "bounds_y")
    target_param = "bounds_y"
    unsound = (
        "it sizes the noise of each sum of squares x_j^2 for the lower bound alone "
        "(|bounds_X[0][j]|^2 twice, diffprivlib 0.6.6), after centring the rows on their noisy "
        "mean: a feature whose mean lies near its lower bound gets that sum almost without "
        "noise (a 0/1 feature with 2 % ones: sensitivity 0.0005 where a record can move it by "
        "0.96), and how little noise depends on the data, so no epsilon stated for it is "
        "true. skdptune does not accept it until a sound fit exists"
    )
