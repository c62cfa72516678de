"""skdptune.evaluation._fit: the templates every inner fit is copied from."""

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from sklearn.pipeline import Pipeline

from skdptune.evaluation._fit import (
    candidate_key,
    candidate_keys,
    candidate_template,
    candidate_templates,
)


def _described(estimator):
    """The parameters of ``estimator`` with each accountant as its state (a fresh copy is
    equal to another fresh one) and each estimator as its class."""
    out = {}
    for key, value in estimator.get_params(deep=True).items():
        if isinstance(value, BudgetAccountant):
            value = ("accountant", value.epsilon, value.delta, tuple(value.spent_budget))
        elif hasattr(value, "get_params"):
            value = type(value)
        elif key.rpartition("__")[2] == "steps":
            value = [(name, type(step)) for name, step in value]
        out[key] = value
    return out


@pytest.mark.parametrize("estimator, candidates", [
    (LogisticRegression(epsilon=1.0, data_norm=2.0, random_state=3, verbose=1,
                        accountant=BudgetAccountant(epsilon=5.0)),
     [{"C": 0.1, "data_norm": 1.0}, {"C": 1.0, "random_state": 5}, {"verbose": 2},
      {"accountant": BudgetAccountant(epsilon=3.0)}, {}]),
    (Pipeline([("scaler", StandardScaler(bounds=(-1.0, 1.0), random_state=1)),
               ("lr", LogisticRegression(epsilon=1.0, data_norm=2.0))]),
     [{"lr__C": 0.1, "scaler__epsilon": 0.5}, {"scaler": "passthrough"},
      {"lr": GaussianNB(bounds=(-1.0, 1.0), random_state=2)}, {"lr__C": 10.0}]),
], ids=["model", "pipeline"])
def test_candidate_templates_equal_one_template_per_candidate(estimator, candidates):
    """The copies of one template with plain values set are the candidates' own templates;
    values the preparation overrides (seeds, verbosity, accountants) and estimators go the
    long way. Every template is its own object, with its own fresh accountants."""
    fast = candidate_templates(estimator, candidates)
    slow = [candidate_template(estimator, params) for params in candidates]
    assert [_described(t) for t in fast] == [_described(t) for t in slow]
    accountants = [value for t in fast for key, value in t.get_params(deep=True).items()
                   if isinstance(value, BudgetAccountant)]
    assert len({id(a) for a in accountants}) == len(accountants) > 0
    assert all(a.spent_budget == [] for a in accountants)
    # not trivial: the candidates' values were set and the preparation applied
    params = [t.get_params(deep=True) for t in fast]
    if isinstance(estimator, LogisticRegression):
        assert params[0]["C"] == 0.1 and params[1]["random_state"] is None
        assert params[2]["verbose"] == 0 and params[4]["data_norm"] == 2.0
    else:
        assert params[0]["scaler__epsilon"] == 0.5 and params[0]["scaler__random_state"] is None
        assert params[1]["scaler"] == "passthrough" and params[2]["lr__random_state"] is None


def test_candidate_templates_raise_scikit_learns_error():
    """A value the estimator rejects raises what candidate_template raises (its message)."""
    estimator = LogisticRegression(epsilon=1.0, data_norm=2.0)
    with pytest.raises(ValueError) as expected:
        candidate_template(estimator, {"lr__C": 1.0})
    with pytest.raises(ValueError) as raised:
        candidate_templates(estimator, [{"C": 1.0}, {"lr__C": 1.0}])
    assert str(raised.value) == str(expected.value)


def _kind(value):
    import numpy as np

    return type(value).__name__, isinstance(value, np.memmap)


def test_data_travels_to_workers_by_value_up_to_the_limit(monkeypatch):
    """joblib memory-maps arrays over 1 MB and, after the call, often waits 0.1 s to delete the
    map's folder; the evaluators send data up to ``BY_VALUE_MAX_BYTES`` by value instead."""
    import pickle

    import numpy as np
    import pandas as pd
    import scipy.sparse as sp
    from joblib import Parallel, delayed

    from skdptune.evaluation import _fit

    X = np.random.RandomState(0).rand(40_000, 8)  # 2.6 MB: joblib would memory-map it
    assert _fit.for_workers(X, 1) is X  # one process: the data itself
    sent = _fit.for_workers(X, 2)
    assert _fit.received(sent) is X and _fit.received(X) is X
    assert Parallel(n_jobs=2)(delayed(_kind)(v) for v in (sent, X)) == [
        ("ndarray", False), ("memmap", True)]
    for value in (pd.DataFrame(X), sp.random(2000, 50, density=0.1, format="csr")):
        arrived = pickle.loads(pickle.dumps(_fit.for_workers(value, 2)))
        assert type(arrived) is type(value)
    monkeypatch.setattr(_fit, "BY_VALUE_MAX_BYTES", X.nbytes - 1)
    assert _fit.for_workers(X, 2) is X  # larger data keeps joblib's memory map


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_a_fits_own_workers_do_not_weaken_its_noise(n_jobs):
    """diffprivlib's LogisticRegression fits one-vs-rest with joblib and its ``n_jobs``. In a
    worker process its noise would come from a pickled copy of numpy's global generator: the
    same draws for every class, reproducible from ``np.random.seed``. skdptune's fits run the
    fit's own joblib calls in the calling thread, where diffprivlib uses its secure generator.
    On all-zero rows the coefficients are the noise's doing only."""
    import numpy as np

    from skdptune.evaluation._fit import fit_on_rows

    X, y = np.zeros((300, 4)), np.arange(300) % 3

    def fit():
        est = LogisticRegression(epsilon=1.0, data_norm=1.0, fit_intercept=False,
                                 n_jobs=n_jobs, accountant=BudgetAccountant())
        return fit_on_rows(est, X, y, None, {}).coef_

    np.random.seed(5)  # noqa: NPY002 -- the global generator is the point
    first = fit()
    np.random.seed(5)  # noqa: NPY002
    second = fit()
    assert not np.allclose(first, second)  # not reproducible from numpy's global seed
    assert not np.allclose(first[0], first[1])  # each class draws its own noise


def test_candidate_keys_are_each_candidates_key():
    """One key per distinct candidate, shared by the candidates drawing the same objects, and
    each equal to ``candidate_key`` -- values that compare equal but set different templates
    (``0.0`` and ``-0.0``, ``1`` and ``True``) keep different keys, a value that cannot be
    hashed gives ``None``; an equal value that is another object is hashed itself."""
    C, zero, negative_zero, kw = 0.5, 0.0, -0.0, {"a": [1, 2]}
    candidates = [{"C": C, "tol": zero}, {"C": C, "tol": negative_zero}, {"C": C, "tol": zero},
                  {"fit_intercept": 1}, {"fit_intercept": True}, {"kw_args": kw},
                  {"kw_args": kw}, {"func": lambda x: x}, {"C": np.float64(0.5), "tol": 0.0}]
    keys = candidate_keys(candidates)
    assert keys == [candidate_key(params) for params in candidates]
    assert keys[0] == keys[2] != keys[1] and keys[3] != keys[4]
    assert keys[5] == keys[6] is not None and keys[7] is None
