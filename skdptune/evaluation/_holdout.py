"""Holdout evaluator: one private run = a DP fit on the train part + a noisy validation score.

This is the base algorithm ``Q`` of randomized repetition (docs/random_search.md, section 1;
Papernot & Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022).
Privacy argument (replace-one neighbours, ``n`` public):

* the rows are split once, independently of the data, into a train part and a validation part
  of ``m`` rows (sizes depend on ``n`` only); the split is shared by all runs, which is fine
  because the analysis holds conditionally on any fixed split;
* the model is fitted on the train part only: a diffprivlib fit, ``(eps_model, delta_model)``-DP
  with respect to the train rows (its own accountant is a throwaway: the search accounts);
* the validation score is the mean of per-example utilities in [0, 1] over the ``m`` validation
  rows -- replace-one sensitivity ``1/m`` -- released with Laplace noise of scale
  ``1 / (m * eps_score)`` through diffprivlib's ``Laplace`` mechanism: ``eps_score``-DP with
  respect to the validation rows; the fitted model is a fixed function of the train rows here
  (a ranking score, :class:`~skdptune.evaluation._scores.RankingScore`, has its own
  sensitivity, ``score.sensitivity_of_mean(m)``, and the same argument);
* the replaced record lies in exactly one part, so by parallel composition one run is
  ``(max(eps_model, eps_score), delta_model)``-DP;
* without a validation part (``DPRandomSearchCV(validation_size=0)``: both "parts" are all
  rows, ``m = n``) the record is in both, and by sequential composition one run is
  ``(eps_model + eps_score, delta_model)``-DP -- the search accounts for that sum.

The run releases ``(params, noisy score, fitted model)``; the exact validation score never
leaves :func:`_noisy_run`.

Failures: a run whose fit fails is *not* ``eps_Q``-DP -- whether a diffprivlib fit raises is a
deterministic function of its data (one class in the train part), outside its guarantee, and a
missing model or an ``error_score`` utility in its place reveals it (an audit measured a lower
bound of 5 against a claim of 2). So failures are made impossible where they depend on the data:
a classifier's fits get the public padding rows (every declared class is present), and the data
domain is checked beforehand (:func:`skdptune.public.check_domain`). A failure that still
happens is not turned into an output: the worker reports it, silenced, and the whole fit stops
with :class:`~skdptune.exceptions.PrivateFitError` (fixed message, budget charged).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from joblib import effective_n_jobs
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing
from sklearn.utils.parallel import delayed

from .._mechanisms import Laplace
from .._private import LEAKS, private_n_jobs, run_tasks, silenced
from ._batched import (
    plain_model_rows,
    shares_statistics,
    supports_batched_fits,
    tight_models,
)
from ._batched_runs import CHUNK_BYTES, fit_runs, pipeline_accuracies, run_accuracies
from ._batched_ssp import run_utilities
from ._fit import (
    DeferredModel,
    DeferredPipeline,
    all_or_fail,
    built,
    candidate_keys,
    candidate_templates,
    fit_and_example_utilities,
    fit_settings,
    for_workers,
    received,
    single_threaded_blas,
)
from ._scores import AccuracyScore

__all__ = ["HoldoutEvaluator", "holdout_sizes", "holdout_split", "runs_batched"]


def holdout_sizes(n_samples: int, validation_size: float) -> tuple[int, int]:
    """``(train rows, validation rows m)`` of :func:`holdout_split`, ``m = ceil(validation_size
    * n)``: public (``n`` and the parameter), so a split that would leave a part empty is
    refused here, before the data is read."""
    m = int(np.ceil(validation_size * n_samples))
    if m < 1 or m >= n_samples:
        raise ValueError(
            f"validation_size={validation_size} leaves no rows for training or validation "
            f"with n_samples={n_samples}."
        )
    return n_samples - m, m


def holdout_split(n_samples: int, validation_size: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Data-independent (train, validation) row indices; ``m = ceil(validation_size * n)``."""
    order = rng.permutation(n_samples)
    _, m = holdout_sizes(n_samples, validation_size)
    return np.sort(order[m:]), np.sort(order[:m])


def _noisy_run(template, X, y, train, validation, score, fit_params, debug, noise, fit_seed,
               noise_seed, epsilons, padding):
    """One run of Q: ``(noisy_score, fitted_model)``, or ``None`` when it failed (``noise``:
    the task's :class:`ScoreNoise`).

    The exact score stays here; nothing is printed or warned.
    """
    X, y = received(X), received(y)
    output = fit_and_example_utilities(template, X, y, train, validation, score, fit_params,
                                       debug=debug, padding=padding, seed=fit_seed,
                                       **fit_settings(epsilons))
    if output is None:
        return None
    utilities, model = output
    return noise.noisy_score(utilities, noise_seed), model


def _runs_task(batched, templates, X, y, train, validation, score, fit_params, debug,
               epsilon_score, fit_seeds, noise_seeds, epsilons, padding, keys, names):
    """One joblib task of runs: :func:`_noisy_runs_batched` or :func:`_noisy_runs`. One
    function whatever the path, so that the task's name (which a dask dashboard shows) does
    not tell which path the drawn candidates took."""
    noise = ScoreNoise(score, len(validation), epsilon_score)
    if batched:
        return _noisy_runs_batched(templates, X, y, train, validation, score, noise,
                                   fit_seeds, noise_seeds, epsilons, padding, keys, names)
    return _noisy_runs(templates, X, y, train, validation, score, fit_params, debug, noise,
                       fit_seeds, noise_seeds, epsilons, padding)


def _noisy_runs(templates, X, y, train, validation, score, fit_params, debug, noise, fit_seeds,
                noise_seeds, epsilons, padding):
    """:func:`_noisy_run` of every run of ``templates``, in turn (a joblib task; may be
    empty; ``noise``: the task's :class:`ScoreNoise`)."""
    X, y = received(X), received(y)
    return [_noisy_run(template, X, y, train, validation, score, fit_params, debug, noise,
                       fit_seed, noise_seed, epsilons, padding)
            for template, fit_seed, noise_seed in zip(templates, fit_seeds, noise_seeds,
                                                      strict=True)]


class ScoreNoise:
    """The Laplace noise of the released scores of one joblib task's runs: diffprivlib's
    ``Laplace`` with sensitivity ``score.sensitivity_of_mean(m)`` (``1/m`` for per-example
    scores; the ranking scores' own bound, docs/random_search.md) and budget ``epsilon_score``.

    One mechanism serves every run of the task instead of one built per run (a generator each):
    a seeded run reseeds, in place, the ``RandomState`` the mechanism draws from (diffprivlib
    keeps a ``RandomState`` it is given), which resets its whole state, so the run gets exactly
    the draws of ``Laplace(..., random_state=seed)``; an unseeded run (``seed=None``) draws from
    the secure generator diffprivlib gives a mechanism built with ``random_state=None``
    (``secrets.SystemRandom``, which reads the operating system's entropy for every draw).
    ``Laplace.randomise`` keeps no state of its own, so no run's noise depends on another's;
    its parameter checks run on the first draw (:mod:`skdptune._mechanisms`).
    """

    def __init__(self, score, m, epsilon_score):
        self._settings = {"epsilon": epsilon_score, "delta": 0.0,
                          "sensitivity": score.sensitivity_of_mean(m)}
        self._generator = np.random.RandomState()
        self._mechanisms = {}

    def _mechanism(self, seeded: bool) -> Laplace:
        if seeded not in self._mechanisms:
            self._mechanisms[seeded] = Laplace(
                **self._settings, random_state=self._generator if seeded else None)
        return self._mechanisms[seeded]

    def noisy_score(self, utilities, seed) -> float:
        """The released score of a run: the mean of ``utilities`` plus Laplace noise drawn
        with the run's ``seed`` (``None``: diffprivlib's secure generator)."""
        mechanism = self._mechanism(seed is not None)
        if seed is not None:
            self._generator.seed(seed)
        return float(mechanism.randomise(float(np.mean(utilities))))


def _noisy_runs_batched(templates, X, y, train, validation, score, noise, fit_seeds,
                        noise_seeds, epsilons, padding, keys, names=None):
    """:func:`_noisy_run` of every run of ``templates`` (a joblib task), the fits solved
    together (:func:`~._batched_runs.fit_runs`); one by one when that path cannot run
    (``noise``: the task's :class:`ScoreNoise`).

    ``names``: the feature names of the numeric ``DataFrame`` whose float rows ``X`` is
    (:func:`~._batched.numeric_frame`), set on every model as its fit on the frame sets them
    (``feature_names_in_``), once it is scored on the same float rows. A group may be empty
    (fewer runs than groups: :func:`batched_groups`)."""
    if not templates:
        return []
    X, y = received(X), received(y)
    with silenced():
        models = fit_runs(templates, fit_seeds, X, y, train, padding, epsilons, keys)
    if models is None:
        outputs = _noisy_runs(templates, X, y, train, validation, score, {}, False, noise,
                              fit_seeds, noise_seeds, epsilons, padding)
        return _named(outputs, names)
    X_val, y_val = _safe_indexing(X, validation), _safe_indexing(y, validation)
    shared, share = None, None
    first = next((m for m in models if m is not None), None)
    if isinstance(first, DeferredModel) and shares_statistics(first.estimator):
        # the statistics runs' scores from rows checked once
        share = functools.partial(run_utilities, score=score)
    elif type(score) is AccuracyScore:  # the linear decisions' accuracies from one product
        share = pipeline_accuracies if isinstance(first, DeferredPipeline) else run_accuracies
    if share is not None:
        with silenced():
            try:
                shared = share(models, X_val, y_val)
            except Exception:
                pass  # scored run by run below
    outputs = []
    for r, (model, noise_seed) in enumerate(zip(models, noise_seeds, strict=True)):
        if model is None:
            outputs.append(None)
            continue
        if shared is not None:
            outputs.append((noise.noisy_score(shared[r], noise_seed), model))
            continue
        with silenced():
            model = built(model)  # a score other than accuracy reads the model itself
            try:
                # a pipeline's step may change its input in place: its own copy, as one by one
                rows = _safe_indexing(X, validation) if isinstance(model, Pipeline) else X_val
                utilities = np.asarray(score(model, rows, y_val), dtype=float)
            except LEAKS:  # a configuration fact: run_private reports it
                raise
            except Exception:
                outputs.append(None)
                continue
        outputs.append((noise.noisy_score(utilities, noise_seed), model))
    return _named(outputs, names)


def _named(outputs, names):
    """``outputs`` of runs fitted on a numeric frame's float rows, their models given the
    frame's feature names (none: as they are)."""
    if names is not None:
        for output in outputs:
            if output is not None:
                output[1].feature_names_in_ = names.copy()
    return outputs


def labels_as_array(y):
    """``y`` as the ``numpy`` array diffprivlib's ``fit`` makes of it (``column_or_1d``:
    ``np.asarray``) when that conversion is plain -- a list, or a pandas ``Series`` of a numpy
    dtype --, so that such labels take the batched path; anything else (pandas extension
    dtypes, whose conversion scikit-learn does its own way) as it is. The models are the same:
    every fit converts its labels this way."""
    if isinstance(y, list) or (type(y).__name__ == "Series"
                               and isinstance(getattr(y, "dtype", None), np.dtype)):
        converted = np.asarray(y)
        if converted.ndim == 1:
            return converted
    return y


def _batchable(templates, X, y, fit_params, error_score) -> bool:
    """Whether the runs go through :mod:`._batched_runs`: the batched fits' conditions
    (:func:`~._batched.supports_batched_fits`, pipelines and shared statistics included), ``y``
    a numpy array (the released model's ``classes_`` then has the one-by-one fit's dtype
    whatever the labels), and every iteratively solved candidate's ``tol`` at most
    :data:`~._batched.BATCHED_MAX_TOL`."""
    return (supports_batched_fits(templates, X, fit_params, error_score, pipelines=True,
                                  statistics=True, scaled=True)
            and isinstance(y, np.ndarray) and tight_models(templates))


#: How many candidates of a search space :func:`runs_batched` checks when the space has
#: distributions (a list-only space is checked whole, up to :data:`CHECKED_GRID` candidates)
CHECKED_DRAWS = 32
CHECKED_GRID = 512


#: The batched runs are solved in groups cut the same way whatever ``n_jobs`` is -- a matrix
#: product's rounding depends on how many runs share it, so groups cut by ``n_jobs`` made the
#: models differ in their last bits from one ``n_jobs`` to another --: this many groups (for
#: the workers) when the search expects at least :data:`RUNS_PER_GROUP` runs for each, fewer
#: when it expects fewer, more when its expected runs would make a group exceed
#: ``_batched_runs.CHUNK_BYTES``.
BATCHED_GROUPS = 4
#: Every group has fixed costs (the rows clipped, paired for the Hessians and passed over at
#: zero per setting; every iteration's bookkeeping), so few runs are solved in fewer groups: at
#: ``n_iter=50`` on Adult four groups took 1.5 times as long as one at ``n_jobs=1`` (CPU time,
#: 3 seeds). At the default ``E[K] = 1000``, two groups of about 500 runs took 0.74-0.83 of
#: four's time at ``n_jobs=1`` and 0.81-0.83 at ``n_jobs=2`` on credit and churn (10 seeded
#: searches each, the same selections; Adult's rows make six groups either way). Below ``2 *
#: RUNS_PER_GROUP`` expected runs, one group (one worker).
RUNS_PER_GROUP = 500


def batched_groups(n_runs: int, n_rows: int, expected_runs: float | None = None) -> int:
    """How many groups the ``n_runs`` batched runs on ``n_rows`` train rows are cut into (a
    function of the counts only, never of ``n_jobs``).

    ``expected_runs``: the public expected number of runs (``E[K]``) the number of groups is
    chosen from, so that it does not follow the realised ``K`` (``None``: ``n_runs``): one per
    :data:`RUNS_PER_GROUP` expected runs up to :data:`BATCHED_GROUPS`, or as many as the
    expected runs fill chunks of ``CHUNK_BYTES``, whichever is more, rounded up to an even
    count when above one. With ``expected_runs`` the
    count does not depend on ``K`` at all: fewer runs than groups leave some groups empty (a
    joblib task with nothing to fit), so the number of tasks does not tell ``K``. A group may
    hold more runs than a chunk (when ``K > E[K]``): :func:`~._batched_runs.fit_runs` and
    :func:`~._batched_runs.run_accuracies` cut their arithmetic into chunks themselves, and what
    a group keeps -- its models, and one boolean utility per run and row -- grows with ``K /
    E[K]`` from about an eighth of a chunk at ``K = E[K]``.
    """
    per_group = max(1, CHUNK_BYTES // (8 * max(n_rows, 1)))
    planned = n_runs if expected_runs is None else expected_runs
    wanted = min(BATCHED_GROUPS, int(planned // RUNS_PER_GROUP))
    groups = max(1, wanted, math.ceil(planned / per_group))
    # an even count: n_jobs=2 takes two at a time (three groups left one worker idle for a
    # third of the solve: the gallery's 9,600 rows at E[K] = 1000 made three; four took 0.91 of
    # their time at n_jobs=2 and 0.97 at n_jobs=1, 8 seeded searches each)
    return groups + groups % 2 if groups > 1 else groups


#: Runs fitted one by one are cut into this many joblib tasks per worker (``n_jobs``), each
#: fitting its share in turn: a public count, whatever the realised ``K`` (a task per run would
#: tell ``K`` to whoever counts the tasks), and enough tasks to balance the workers.
TASKS_PER_WORKER = 4


def one_by_one_tasks(n_jobs) -> int:
    """How many joblib tasks the runs fitted one by one are cut into (public: ``n_jobs``)."""
    return TASKS_PER_WORKER * effective_n_jobs(n_jobs)


def runs_batched(estimator, space, error_score) -> bool:
    """Whether a search over ``space`` fits its runs together (:func:`_batchable`) when ``X``
    is a dense numeric ``numpy`` array (or a numeric ``DataFrame``, read as one:
    :func:`~._batched.numeric_frame`) and ``y`` a ``numpy`` array.

    A public fact of the estimator and the space (no data): every candidate is a plain
    diffprivlib ``LogisticRegression`` with a ``data_norm`` -- alone, or the last step after
    data-independent ones -- with ``tol`` at most :data:`~._batched.BATCHED_MAX_TOL`, or skdptune's
    ``SSPRegressor`` with public bounds, alone (:mod:`._batched_ssp`). A list-only space
    is checked candidate by candidate; a space with distributions on :data:`CHECKED_DRAWS`
    candidates drawn with a fixed seed (the properties checked are rarely drawn from a
    distribution). A space that cannot be expanded answers ``False``: the search's own
    validation reports the problem.
    """
    if error_score == "raise":
        return False
    try:
        subspaces = space if isinstance(space, list) else [space]
        lists_only = all(not hasattr(values, "rvs") for sub in subspaces
                         for values in sub.values())
        if lists_only and len(ParameterGrid(space)) <= CHECKED_GRID:
            candidates = list(ParameterGrid(space))
        else:
            candidates = list(ParameterSampler(space, n_iter=CHECKED_DRAWS, random_state=0))
        return tight_models(candidate_templates(estimator, candidates))
    except Exception:
        return False


def _run_seeds(seeds, n_runs) -> tuple[list, list]:
    """``(fit seeds, noise seeds)`` of ``n_runs`` runs: ``seeds.seed("fit", r)`` and
    ``seeds.noise_seed("score", r)`` for every run ``r``, as Python ints (``None`` each when
    the search is not seeded: diffprivlib's secure generator), from one vectorised call per
    stream (:meth:`~skdptune._seeding.SeedPlan.seeds`)."""
    if not seeds.seeded:
        return [None] * n_runs, [None] * n_runs
    runs = np.arange(n_runs)
    return seeds.seeds("fit", runs).tolist(), seeds.seeds("score", runs).tolist()


class HoldoutEvaluator:
    """Runs of the base algorithm Q on a fixed, data-independent train/validation split.

    Parameters
    ----------
    estimator : estimator
        Base estimator (cloned for every run).
    score : PerExampleScore
        Per-example utilities in [0, 1] on the validation rows.
    epsilon_score : float
        Budget of each noisy validation score (Laplace, sensitivity ``1/m``).
    epsilons : float, dict or None
        How every run's DP epsilons are set: a factor on the estimator's (``None``: as
        configured), or :func:`~._fit.instantiate`'s settings -- ``{"epsilon_total": eps,
        "n_classes": k}`` prices every candidate's model at ``eps`` (budget mode).
    error_score : float or "raise"
        ``"raise"`` lets a run's exception out (debugging); otherwise a failed run stops the
        search with ``PrivateFitError`` (see the module docstring).
    n_jobs : joblib parallelism.
    padding : Padding or None
        Public rows appended to every fit (classifiers).
    expected_runs : float or None
        The search's public ``E[K]``: batched runs are cut into groups by it
        (:func:`batched_groups`), not by the realised number of runs.
    batched : bool
        The search's public decision (:func:`runs_batched`, on the space): whether its runs
        may be batched. It alone sets the joblib tasks -- :func:`batched_groups` of ``E[K]``,
        or :func:`one_by_one_tasks` --, so that their number cannot follow which candidates
        were drawn; drawn runs that cannot be batched (or data that cannot) are fitted one by
        one inside those tasks.

    The runs of diffprivlib's ``LogisticRegression``, alone or after data-independent pipeline
    steps, are fitted together (:mod:`._batched_runs`: the same models up to the optimiser's
    tolerance), and those of ``SSPRegressor`` from statistics shared by the runs of a setting
    (:mod:`._batched_ssp`: the same models), where :func:`_batchable` allows; every other run
    one by one.
    """

    def __init__(self, estimator, score, *, epsilon_score, epsilons, error_score, n_jobs,
                 padding=None, expected_runs=None, batched=True):
        self.estimator = estimator
        self.score = score
        self.epsilon_score = epsilon_score
        self.epsilons = epsilons
        self.error_score = error_score
        self.n_jobs = n_jobs
        self.padding = padding
        self.expected_runs = expected_runs
        self.batched = batched

    def run(self, X, y, candidates, split, fit_params, seeds, progress=None):
        """Noisy scores and models (a :class:`RunModels`) of ``candidates`` (one run each).
        Released outputs of Q.

        ``progress(done, total)`` hears of each finished joblib task (their number is public:
        :func:`batched_groups`, :func:`one_by_one_tasks`). Raises ``PrivateFitError`` (fixed
        message) when any run failed, after every task has finished.
        """
        train, validation = split
        n_jobs = private_n_jobs(self.n_jobs)
        # runs of the same candidate share its template (and, batched, its prepared copy)
        keys = candidate_keys(candidates)
        templates = candidate_templates(self.estimator, candidates, keys)
        fit_seeds, noise_seeds = _run_seeds(seeds, len(templates))
        # plain labels as the array every batched fit would make of them; one by one, the
        # estimator gets them as given (a pandas Series stays one, as in scikit-learn)
        y_array = labels_as_array(y)
        # a plain model's numeric DataFrame as the float array its fit makes of it, the
        # feature names set on the models afterwards
        X_rows, names = plain_model_rows(templates, X, statistics=True)
        batched = self.batched and _batchable(templates, X_rows, y_array, fit_params,
                                              self.error_score)
        if batched:
            X, y = X_rows, y_array
        X_sent, y_sent = for_workers(X, n_jobs), for_workers(y, n_jobs)
        # the joblib tasks follow the public decision only (not which candidates were drawn)
        n_tasks = (batched_groups(len(templates), len(train), self.expected_runs)
                   if self.batched else one_by_one_tasks(n_jobs))
        shares = np.array_split(np.arange(len(templates)), n_tasks)
        with single_threaded_blas():
            # batched: each group solved together; else each task fits its runs in turn
            blocks = run_tasks(
                (delayed(_runs_task)(
                    batched, [templates[r] for r in share], X_sent, y_sent, train, validation,
                    self.score, fit_params, self.error_score == "raise", self.epsilon_score,
                    [fit_seeds[r] for r in share], [noise_seeds[r] for r in share],
                    self.epsilons, self.padding, [keys[r] for r in share], names,
                 )
                 for share in shares),
                n_jobs=n_jobs, progress=progress,
            )
        outputs = all_or_fail([output for block in blocks for output in block])
        scores = np.array([s for s, _ in outputs], dtype=float)
        return scores, RunModels([m for _, m in outputs])


class RunModels(Sequence):
    """The models of a search's runs, each made when it is read: a batched run's model is
    kept as a :class:`~._fit.DeferredModel` until then (:func:`~._fit.built`),
    so that a search makes the estimator of the run it releases only."""

    def __init__(self, models):
        self._models = models

    def __len__(self):
        return len(self._models)

    def __getitem__(self, index):
        return built(self._models[index])
