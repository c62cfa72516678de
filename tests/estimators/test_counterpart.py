"""skdptune.estimators.nonprivate_counterpart: the estimator with each private model replaced
by the scikit-learn model it stands in for (the non-private reference of a front)."""

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, KMeans, LogisticRegression, StandardScaler
from scipy.stats import loguniform
from sklearn import linear_model, naive_bayes, preprocessing
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import DPRandomSearchCV
from skdptune.estimators import nonprivate_counterpart


def test_a_model_becomes_its_counterpart():
    model = LogisticRegression(epsilon=0.5, data_norm=2.0, C=3.0,
                               accountant=BudgetAccountant())
    twin = nonprivate_counterpart(model)
    assert type(twin) is linear_model.LogisticRegression and twin.C == 3.0
    assert model.get_params()["C"] == 3.0 and model.epsilon == 0.5  # not modified


def test_composites_are_rebuilt_around_the_counterparts():
    accountant = BudgetAccountant()
    pipe = make_pipeline(
        FunctionTransformer(np.tanh),
        ColumnTransformer([("scaled", StandardScaler(bounds=(-1.0, 1.0),
                                                     accountant=accountant), [0, 1])],
                          remainder="passthrough"),
        FeatureUnion([("identity", "passthrough")]),
        GaussianNB(bounds=(-1.0, 1.0), var_smoothing=1e-3, accountant=accountant))
    twin = nonprivate_counterpart(pipe)
    assert type(twin) is Pipeline and [name for name, _ in twin.steps] == \
        [name for name, _ in pipe.steps]
    assert twin.steps[0][1].func is np.tanh
    scaler = twin.steps[1][1].transformers[0][1]
    assert type(scaler) is preprocessing.StandardScaler
    assert twin.steps[1][1].transformers[0][2] == [0, 1]
    assert twin.steps[1][1].remainder == "passthrough"
    assert type(twin.steps[-1][1]) is naive_bayes.GaussianNB
    assert twin.steps[-1][1].var_smoothing == 1e-3
    # the user's pipeline keeps its private steps
    assert type(pipe.steps[-1][1]) is GaussianNB and pipe.steps[1][1].transformers[0][1] \
        .accountant is accountant
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, size=(60, 3)), np.arange(60) % 2
    assert twin.fit(X, y).score(X, y) >= 0  # a plain scikit-learn pipeline
    assert accountant.spent_budget == []


@pytest.mark.parametrize("estimator", [
    KMeans(n_clusters=2, bounds=(0.0, 1.0)),  # a refused family: no counterpart
    linear_model.LogisticRegression(),  # nothing private to replace
    make_pipeline(preprocessing.StandardScaler(), LogisticRegression(data_norm=1.0)),
    DPRandomSearchCV(GaussianNB(bounds=(-1.0, 1.0)),
                     {"var_smoothing": loguniform(1e-9, 1e-1)}),  # a search
    type("MyGaussianNB", (GaussianNB,), {})(bounds=(-1.0, 1.0)),  # a user's subclass
], ids=["refused", "non-private", "non-private-step", "search", "subclass"])
def test_none_where_the_result_would_not_be_the_estimator_without_its_noise(estimator):
    assert nonprivate_counterpart(estimator) is None
