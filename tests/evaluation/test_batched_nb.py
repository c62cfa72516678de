"""GaussianNB's partition fits made together (skdptune/evaluation/_batched_nb.py): the
utilities of the one-by-one fits, bit for bit."""

import numpy as np
import pytest
from diffprivlib.models import GaussianNB

from skdptune import DPGridSearchCV
from skdptune._seeding import SeedPlan
from skdptune.evaluation import _batched_nb, _partitions
from skdptune.evaluation._partitions import PartitionEvaluator
from skdptune.evaluation._scores import check_bounded_scorer
from skdptune.public import make_padding

BOUNDS = ([-3.0, -3.0, 0.0], [3.0, 4.0, 10.0])
CANDIDATES = [{"var_smoothing": 1e-9}, {"var_smoothing": 0.5},
              {"bounds": ([-1.0, -1.0, 0.0], [1.0, 1.0, 2.0])},
              {"bounds": ([-3.0, -3.0, 1.0], [3.0, 4.0, 1.0])},  # a width 0: one by one
              # bounds diffprivlib's clipping takes as one interval (np.allclose of each end)
              {"bounds": ([0.0, 0.0, 0.0], [1e-8, 1e-8, 2e-8]), "var_smoothing": 0.0},
              {"var_smoothing": -1.0},  # fails scikit-learn's parameter checks: one by one
              {"epsilon": 0.05}]


def _data(n=1200, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = np.column_stack([rng.normal(y, 1.0), rng.normal(-y, 1.5), rng.uniform(0, 3 + 2 * y)])
    return X, y


def _evaluator(X, y, *, batched, seed=0, scoring=None, cv=0.25, error_score=0.0, rows=100):
    estimator = GaussianNB(epsilon=1.0, bounds=BOUNDS)
    return PartitionEvaluator(
        estimator, check_bounded_scorer(scoring, None, estimator), n_partitions=len(X) // rows,
        cv=cv, inner_epsilon="scaled", inner_params="scaled", n_jobs=1,
        pre_dispatch="2*n_jobs", error_score=error_score,
        seeds=SeedPlan(seed),
        padding=make_padding(X, y, np.unique(y)), batched=batched)


def _fits(calls):
    """How many fits the recorded calls of the batched path made."""
    return sum(len(args[0]) for args in calls)


@pytest.mark.parametrize("classes, cv, rows, n", [(2, 0.25, 100, 1200), (3, 0.25, 100, 1200),
                                                  (2, 3, 100, 1200), (2, 0.25, 2, 240)])
def test_the_utilities_are_the_one_by_one_fits(record_calls, classes, cv, rows, n):
    """Seeded, every partition's utility is the one its fits one by one give, bit for bit --
    two and three classes, a holdout and an inner 3-fold, partitions of 100 rows and of 2
    (a fit on one row and the padding rows), a candidate with a feature of width 0 and one whose
    settings fail scikit-learn's checks (one by one inside the batch), bounds diffprivlib
    clips as one interval, a small epsilon -- and the batch made the fits."""
    X, y = _data(n=n, classes=classes)
    calls = record_calls(_partitions, "naive_bayes_utilities")
    together = _evaluator(X, y, batched=True, cv=cv, rows=rows).evaluate_partitions(
        X, y, CANDIDATES, {})
    parts = len(X) // rows
    assert _fits(calls) == len(CANDIDATES) * parts * (1 if cv == 0.25 else cv)
    one_by_one = _evaluator(X, y, batched=False, cv=cv, rows=rows).evaluate_partitions(
        X, y, CANDIDATES, {})
    np.testing.assert_array_equal(together, one_by_one)
    assert together.std() > 0.02  # the utilities differ: the comparison could fail
    assert np.all(together[CANDIDATES.index({"var_smoothing": -1.0})] == 0.0)


def test_a_floating_point_error_in_the_shared_bisection_fails_no_fit():
    """Under ``np.errstate(all="raise")`` a large epsilon makes the bisection's ``exp``
    underflow for the fits whose noisy counts are large: raised in the lockstep of all the fits,
    that would fail them all where one by one only some fail (whether it raises follows the
    counts, so the rows). Every fit then goes one by one: the same utilities."""
    X, y = _data()
    candidates = [{"epsilon": 10.0}, {"epsilon": 1.0}]
    with np.errstate(all="raise"):
        together = _evaluator(X, y, batched=True).evaluate_partitions(X, y, candidates, {})
        one_by_one = _evaluator(X, y, batched=False).evaluate_partitions(X, y, candidates, {})
    np.testing.assert_array_equal(together, one_by_one)
    assert np.any(together[0] == 0.0) and not np.all(together[0] == 0.0)  # some fail


def test_non_finite_rows_fail_as_one_by_one():
    """A partition holding a non-finite value: its fits go one by one and fail there
    (``error_score``), the other partitions' utilities unchanged."""
    X, y = _data()
    X[5, 1] = np.nan
    together = _evaluator(X, y, batched=True, error_score=0.125)
    one_by_one = _evaluator(X, y, batched=False, error_score=0.125)
    a = together.evaluate_partitions(X, y, CANDIDATES, {})
    np.testing.assert_array_equal(a, one_by_one.evaluate_partitions(X, y, CANDIDATES, {}))
    assert np.sum(a == 0.125) >= len(CANDIDATES)  # the partition with the NaN row


def test_a_broken_batch_is_told_apart(monkeypatch):
    """A twin that finds every fit's scales at the first fit's epsilon (one epsilon for the
    whole lockstep) differs from the one-by-one fits."""
    X, y = _data()
    original = _batched_nb.bounded_domain_scales

    def one_epsilon(epsilon, *args):
        return original(np.full(np.shape(epsilon), np.ravel(epsilon)[0]), *args)

    monkeypatch.setattr(_batched_nb, "bounded_domain_scales", one_epsilon)
    candidates = [{"epsilon": 0.05}, {"epsilon": 5.0}]
    together = _evaluator(X, y, batched=True).evaluate_partitions(X, y, candidates, {})
    one_by_one = _evaluator(X, y, batched=False).evaluate_partitions(X, y, candidates, {})
    assert not np.array_equal(together, one_by_one)


def test_only_the_plain_configuration_is_batched(record_calls):
    """A scorer other than accuracy, a user's splitter (it may keep a state between the
    one-by-one fits' calls), ``priors``, or labels not a 1-D array go one by one (no
    batch)."""
    from sklearn.model_selection import KFold

    X, y = _data()
    calls = record_calls(_partitions, "naive_bayes_utilities")
    _evaluator(X, y, batched=True, scoring="balanced_accuracy").evaluate_partitions(
        X, y, CANDIDATES[:2], {})
    _evaluator(X, y, batched=True, cv=KFold(2)).evaluate_partitions(X, y, CANDIDATES[:2], {})
    assert calls == []
    assert not _batched_nb.batched_naive_bayes(GaussianNB(bounds=BOUNDS), X, y[:, None],
                                               make_padding(X, y, np.unique(y)),
                                               check_bounded_scorer(None, None, GaussianNB()))
    assert _batched_nb.batched_naive_bayes(GaussianNB(bounds=BOUNDS), X, y,
                                           make_padding(X, y, np.unique(y)),
                                           check_bounded_scorer(None, None, GaussianNB()))
    assert not _batched_nb.batched_naive_bayes(GaussianNB(bounds=BOUNDS, priors=[0.5, 0.5]),
                                               X, y, make_padding(X, y, np.unique(y)),
                                               check_bounded_scorer(None, None, GaussianNB()))


def test_unseeded_fits_draw_secure_noise(record_calls):
    """Unseeded, a search's fits are made together all the same, from secure noise: numpy's
    global generator is neither read nor advanced by the search; and the utilities are those
    of fits of the same distribution (the one-by-one path's, seeded, within the seeds'
    noise)."""
    X, y = _data()
    calls = record_calls(_partitions, "naive_bayes_utilities")
    state = np.random.get_state()  # noqa: NPY002 (the global generator is the subject)
    np.random.seed(3)  # noqa: NPY002
    DPGridSearchCV(GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9, 0.5]}, epsilon=2.0,
                   classes=[0, 1]).fit(X, y)
    assert np.random.random() == np.random.RandomState(3).random()  # noqa: NPY002
    np.random.set_state(state)  # noqa: NPY002
    assert _fits(calls) == 2 * 12
    unseeded = _evaluator(X, y, batched=True, seed=None).evaluate_partitions(
        X, y, CANDIDATES[:2], {})
    seeded = _evaluator(X, y, batched=False).evaluate_partitions(X, y, CANDIDATES[:2], {})
    assert abs(unseeded.mean() - seeded.mean()) < 0.15  # (0.077 at most in 40 reruns)
