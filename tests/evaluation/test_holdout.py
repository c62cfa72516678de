"""The holdout evaluator's helpers: the runs' seeds and the noise of their released scores."""

import secrets

import numpy as np
import pytest
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import LogisticRegression

from skdptune._seeding import SeedPlan
from skdptune.evaluation._fit import DeferredModel, PreparedTemplate, candidate_template
from skdptune.evaluation._holdout import RunModels, ScoreNoise, _run_seeds
from skdptune.evaluation._scores import AccuracyScore, check_validation_score


@pytest.mark.parametrize("random_state", [0, 12345, np.random.RandomState(3)])
def test_run_seeds_are_the_seed_plans_seeds_run_by_run(random_state):
    """One vectorised call per stream gives every run the seeds the loop over runs gave, as
    Python ints."""
    plan = SeedPlan(random_state)
    fit_seeds, noise_seeds = _run_seeds(plan, 257)
    assert fit_seeds == [plan.seed("fit", r) for r in range(257)]
    assert noise_seeds == [plan.noise_seed("score", r) for r in range(257)]
    assert all(type(s) is int for s in fit_seeds + noise_seeds)


def test_run_seeds_are_none_without_a_seed():
    """Unseeded: no fit seed, and no noise seed (diffprivlib's secure generator)."""
    assert _run_seeds(SeedPlan(None), 3) == ([None] * 3, [None] * 3)


@pytest.mark.parametrize("scoring", [None, "roc_auc"])
def test_score_noise_reseeded_draws_what_a_fresh_mechanism_draws(scoring):
    """Run after run, one :class:`ScoreNoise` releases exactly what a ``Laplace`` mechanism
    built for that run with its seed releases (the search's mechanism before), with the
    score's own sensitivity at ``m``: the reseeding leaves nothing of the earlier runs."""
    score = check_validation_score(scoring, LogisticRegression(), np.array([0, 1]))
    m, epsilon = 40, 0.7
    noise = ScoreNoise(score, m, epsilon)
    rng = np.random.RandomState(0)
    for seed in [5, 5, 2**32 - 1, 0, 99, 5]:
        utilities = rng.uniform(size=m)
        fresh = Laplace(epsilon=epsilon, delta=0.0, sensitivity=score.sensitivity_of_mean(m),
                        random_state=seed)
        assert noise.noisy_score(utilities, seed) == float(fresh.randomise(
            float(np.mean(utilities))))


def test_score_noise_without_a_seed_draws_from_the_secure_generator():
    """``seed=None``: the mechanism draws from the generator diffprivlib gives an unseeded
    mechanism (``secrets.SystemRandom``), never the generator a seeded run reseeds; the
    noise has the mechanism's scale."""
    noise = ScoreNoise(AccuracyScore(), 10, 1.0)
    noise.noisy_score([1.0], 3)
    draws = np.array([noise.noisy_score([0.5] * 10, None) for _ in range(4000)]) - 0.5
    unseeded = noise._mechanism(seeded=False)
    assert isinstance(unseeded._rng, secrets.SystemRandom)
    assert unseeded is not noise._mechanism(seeded=True)
    assert len(set(draws.tolist())) == len(draws)
    # Laplace with scale 1/(m eps) = 0.1: mean |noise| = 0.1
    assert np.mean(np.abs(draws)) == pytest.approx(0.1, rel=0.1)


def test_run_models_build_a_deferred_model_when_it_is_read():
    """The evaluator's models: a model as it is, a deferred one built at each read."""
    prepared = PreparedTemplate(candidate_template(LogisticRegression(data_norm=1.0), {}))
    deferred = DeferredModel(prepared, 3, classes_=np.array([0, 1]), coef_=np.ones((1, 2)),
                             intercept_=np.zeros(1), n_features_in_=2)
    plain = LogisticRegression()
    models = RunModels([plain, deferred])
    assert len(models) == 2 and models[0] is plain
    first, second = models[1], models[-1]
    assert type(first) is LogisticRegression and first is not second
    assert first.random_state == prepared.random_state(3) is not None
    np.testing.assert_array_equal(first.predict(np.array([[1.0, 1.0], [-1.0, -1.0]])), [1, 0])
    assert first.accountant.spent_budget == [(first.epsilon, 0)]
