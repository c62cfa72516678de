"""The runs of a repetition search on skdptune's ``SSPRegressor``, from shared statistics.

One run of :class:`~skdptune.DPRandomSearchCV` (the base algorithm ``Q``, :mod:`._holdout`)
fits a candidate on the train part and scores it on the validation part; every run fits *the
same rows*. ``SSPRegressor.fit`` clips the rows to the bounds, normalises them, computes the
exact statistics ``Z^T Z``, ``Z^T t`` and ``lambda_min(Z^T Z)``, then adds Laplace noise and
solves (:mod:`skdptune.linear_model`). The exact statistics depend on the rows and on
``(bounds_X, bounds_y, fit_intercept)`` only, so here they are computed once per distinct
setting among the runs (:class:`~skdptune.linear_model._Statistics`), and every run adds its own
noise and solves (:func:`~skdptune.linear_model._released_model`, the release ``fit`` itself
makes): a fit of the same rows is that arithmetic on those statistics, and the first part of
a one-by-one fit is the same statistics computed again.

**What a run releases is unchanged.** A run is a :class:`~._fit.DeferredModel`: its released
coefficients, and what builds its model -- the ``SSPRegressor`` instance the one-by-one path
would fit (the same :func:`~._fit.instantiate`: parameters, seed, epsilon scale) -- for the run
the search releases alone. It is checked as ``fit`` checks it (parameters, bounds, the
throwaway accountant's budget: once per candidate, since every run's copy gives the same
answer), its noise drawn by diffprivlib's ``Laplace`` mechanism from the generator ``fit``
would use (``check_random_state`` of the run's ``random_state``: its seed when the search is
seeded -- one generator reseeded in place for each run, :func:`_generator` --, diffprivlib's
secure generator otherwise), in the same order (eigenvalue, Gram matrix, ``Z^T t``), from the
same statistics computed by the same code: the same ``coef_``, ``intercept_`` and ``alpha_``,
bit for bit (tests/evaluation/test_batched_ssp.py). The built model gets ``n_features_in_``
(and, from the evaluator, the frame's ``feature_names_in_``) as ``fit`` sets them, and its
throwaway accountant is charged ``(epsilon, 0)`` as ``fit`` charges it.

**Privacy.** The argument of :mod:`._holdout` is untouched: a run is an ``(epsilon, 0)``-DP fit
of the train rows and a noisy score of the validation rows, and the repetition's analysis needs
the runs independent given the data. They are: each run's noise is its own (drawn from its own
generator), and what the runs share -- the exact statistics -- is a deterministic function of
the rows and a public setting, exactly what every one-by-one fit of the same rows computes for
itself. Sharing it is computing it once; no run reads another run's noise, and the statistics
never leave this module (no attribute, warning or message holds them).

**Failures.** Rows that ``fit`` refuses (non-finite values, a 2-D target it cannot read) make
every run fail, as every one-by-one fit refuses them; the evaluator then stops the search with
``PrivateFitError``. Any other exception returns ``None`` from
:func:`~._batched_runs.fit_runs`, and the evaluator fits every run one by one (the same
outputs). Everything here runs inside :func:`skdptune._private.silenced`.

**Scores.** :func:`run_utilities` scores the runs on the validation rows as the search's score
scores each model (``score(model, X_val, y_val)``), from ``predict``'s own arithmetic
(``SSPRegressor._predict_rows``) on rows validated once: ``predict`` would repeat the same
checks of the same rows against models that all read ``n_features_in_`` columns. The same
utilities, bit for bit.

**The partitions of DPGridSearchCV** (:func:`partition_utilities`). The subsample-and-aggregate
evaluator (:mod:`._partitions`) fits every candidate on the training part of every partition's
inner splits and scores it on the validation part. Here a unit's rows are validated once (as
``fit`` validates them, and as ``predict`` validates the validation rows), their statistics are
computed once per setting, and each candidate's fit is the release of its own noise from them,
with the seed and the partition settings its one-by-one fit gets
(:func:`~._partitions._chunk_utilities`); a score that reads the predictions alone gets them
from ``predict``'s arithmetic, others get the model. A partition's utility still depends on its
own rows alone -- what the candidates of a unit share is a deterministic function of that
unit's rows -- and a failure of a candidate's fit or score is its ``error_score``, as one by
one. Each utility is the one-by-one path's, bit for bit.

**Not batched:** a pipeline ending in ``SSPRegressor`` (the logistic path decides whether a
pipeline's steps give dense rows on the public padding rows, which a regressor has none of), and
a model whose bounds are left to the data (``None``: the one-by-one fit's
``PrivacyLeakWarning`` stops the search).
"""

from __future__ import annotations

import numbers

import numpy as np
from diffprivlib.utils import check_random_state
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_method_params

from .._private import LEAKS
from ..estimators import leak_warnings_as_errors
from ..linear_model import SSPRegressor, _released_model, _Statistics
from ._fit import DeferredModel, PreparedTemplate

__all__ = ["fit_statistics_runs", "partition_utilities", "run_utilities"]


def fit_statistics_runs(prepared, fit_seeds, X, y, train):
    """The runs of ``SSPRegressor`` candidates on the rows ``train`` of ``(X, y)``, from the
    statistics of each distinct ``(bounds_X, bounds_y, fit_intercept)`` (module docstring):
    a :class:`~._fit.DeferredModel` per run (its model is built for the released run only),
    or ``None`` (a failed fit).

    ``prepared[r]``: run ``r``'s :class:`~._fit.PreparedTemplate` (the runs of one candidate
    share one, and differ in their seed ``fit_seeds[r]`` only, :func:`~._batched_runs.fit_runs`).
    A prepared candidate's parameters are checked, its throwaway accountant's budget checked
    and its bounds read once: every run's copy of them is the same, so ``fit``'s checks give
    every run the same answer.
    PRIVATE: the models are released only through the evaluator's selection.
    """
    try:  # fit's own conversion, the same for every run: refused rows fail every run
        X_rows, y_rows = SSPRegressor()._fit_rows(_safe_indexing(X, train),
                                                  _safe_indexing(y, train))
    except ValueError:
        return [None] * len(prepared)
    shared, generator, settings, mechanisms = {}, np.random.RandomState(), {}, {}
    runs = []
    for made, seed in zip(prepared, fit_seeds, strict=True):
        # fit's order: the public checks (and the budget), the generator, the bounds
        model = made.estimator
        if id(made) not in settings:  # (prepared holds made: no id is reused)
            settings[id(made)] = _checked_setting(model, X_rows, y_rows)
        bounds_X, bounds_y, setting = settings[id(made)]
        rng = _generator(made.random_state(seed), generator)
        if setting not in shared:
            shared[setting] = _Statistics(X_rows, y_rows, bounds_X, bounds_y,
                                          model.fit_intercept)
        coef, intercept, alpha = _released_model(shared[setting], model.epsilon, model.alpha,
                                                 rng, mechanisms)
        runs.append(DeferredModel(made, seed, coef_=coef, intercept_=intercept, alpha_=alpha,
                                  n_features_in_=X_rows.shape[1]))
    return runs


def run_utilities(models, X_val, y_val, score):
    """Every run's mean utility, the mean of ``score(model, X_val, y_val)`` (``None`` for a
    failed run), or ``None`` where the score reads more than the predictions (the caller scores
    run by run).

    ``models``: :func:`fit_statistics_runs`' runs, fitted on the same rows (so the same
    ``n_features_in_``; the feature names are set after scoring). ``X_val`` is validated once,
    as ``predict`` validates it, against a model of the runs' width: a refusal raises as
    ``predict`` would for every run. The means, not the utilities, are kept: a run's released
    score reads their mean alone, and thousands of runs' utilities would fill fresh memory row
    by row (a third of the scoring's time on 7,500 rows). PRIVATE: the exact mean utilities.
    """
    fitted = [m for m in models if m is not None]
    if not fitted or not score.reads_predictions:
        return None
    checker = SSPRegressor()  # predict's checks, against a model of the runs' width
    checker.n_features_in_ = fitted[0].n_features_in_
    rows = checker._predicted_rows(X_val)
    return [None if m is None
            else float(np.mean(score.of_predictions(
                m.estimator._predict_rows(rows, m.coef_, m.intercept_), y_val)))
            for m in models]


def partition_utilities(jobs, units, X, y, scorer, error_score, score_params=None):
    """Utilities of candidates on their fit units, one array per job (module docstring): the
    value ``fit_and_utility`` gives each candidate's one-by-one fit on each unit. PRIVATE.

    ``jobs``: ``(template, seeds, settings_of)`` per candidate -- an ``SSPRegressor``
    candidate template, each unit's fit seed (an int array, or ``None``: secure noise), and
    ``n_train -> instantiate()`` keyword arguments (the partition settings). ``units``: the
    global row indices ``(train, test)`` of every fit. ``error_score``: the utility of a failed
    fit or score (a float). ``score_params``: the scorer's metadata, restricted to each unit's
    validation rows.
    """
    error = float(error_score)
    outs = [np.full(len(units), error) for _ in jobs]
    generator, mechanisms, prepared = np.random.RandomState(), {}, {}
    for u, (train, test) in enumerate(units):
        try:  # fit's and predict's checks of the unit's rows, the same for every candidate
            checker = SSPRegressor()
            X_rows, y_rows = checker._fit_rows(_safe_indexing(X, train),
                                               _safe_indexing(y, train))
            X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
            rows_test = (checker._predicted_rows(X_test) if scorer.reads_predictions
                         else None)
            params = (_check_method_params(X, params=score_params, indices=test)
                      if score_params else {})
        except LEAKS:
            raise
        except Exception:
            continue  # every candidate's fit (or its predict) on these rows fails
        shared = {}
        for job, (template, seeds, settings_of) in enumerate(jobs):
            try:
                key = (job, len(train))
                if key not in prepared:  # a candidate's settings on n_train rows, checked once
                    prepared[key] = None  # (a failed check fails every fit of the key)
                    made = PreparedTemplate(template, **settings_of(len(train)))
                    prepared[key] = made, *_checked_setting(made.estimator, X_rows, y_rows)
                if prepared[key] is None:
                    raise ValueError("the candidate's settings are refused")
                made, bounds_X, bounds_y, setting = prepared[key]
                model, seed = made.estimator, None if seeds is None else int(seeds[u])
                if setting not in shared:
                    shared[setting] = _Statistics(X_rows, y_rows, bounds_X, bounds_y,
                                                  model.fit_intercept)
                rng = _generator(made.random_state(seed), generator)
                if rows_test is None:  # the scorer reads the model: the fit's own
                    est = made.instantiate(seed)
                    est.n_features_in_ = X_rows.shape[1]
                    est._release(shared[setting], rng, est._checked_accountant(), mechanisms)
                    with leak_warnings_as_errors():
                        outs[job][u] = float(scorer(est, X_test, y_test, **params))
                    continue
                # the model is never built: its coefficients, and what it would predict
                coef, intercept, _ = _released_model(shared[setting], model.epsilon,
                                                     model.alpha, rng, mechanisms)
                outs[job][u] = scorer.of_predictions(
                    model._predict_rows(rows_test, coef, intercept), y_test, **params)
            except LEAKS:
                raise
            except Exception:
                outs[job][u] = error
    return outs


def _checked_setting(model, X_rows, y_rows):
    """``(bounds_X, bounds_y, setting)`` of a candidate's fits on rows of ``X_rows``' width,
    after ``fit``'s public checks: its parameters and its throwaway accountant's budget (every
    fit's own copy gives the same answer). ``setting``: the key of the statistics the fits
    share -- the bounds' exact bits and ``fit_intercept``."""
    model._check_parameters()
    model._checked_accountant()
    bounds_X, bounds_y = model._bounds(X_rows, y_rows)
    setting = (*(np.asarray(b, dtype=float).tobytes() for b in (*bounds_X, *bounds_y)),
               bool(model.fit_intercept))
    return bounds_X, bounds_y, setting


def _generator(random_state, generator):
    """The generator ``fit`` draws from, ``check_random_state(random_state)``: for an int
    seed, ``generator`` reseeded in place with it -- ``seed`` resets the whole state of a
    ``RandomState``, so it draws what ``RandomState(seed)`` draws, without a generator built
    per run --; otherwise ``check_random_state``'s own answer (``None``: numpy's global
    generator, which diffprivlib's mechanisms replace by its secure generator)."""
    if isinstance(random_state, numbers.Integral):  # as check_random_state reads it
        generator.seed(random_state)
        return generator
    return check_random_state(random_state)
