"""Fitting and scoring one private clone: the single place every evaluator goes through.

Privacy obligations met here, for every inner fit of every search:

* the clone gets fresh throwaway ``BudgetAccountant`` objects, so an inner fit never charges the
  user's accountant (the search charges its total once); its diffprivlib components draw fresh
  noise (their own ``random_state`` is cleared; the search seeds them when it is seeded) and
  its ``verbose`` parameters are 0 (:func:`skdptune.estimators.for_inner_fits`);
* a classifier's fit gets the public padding rows, one per declared class
  (:class:`skdptune.public.Padding`): it cannot fail for lack of a class, and its
  ``classes_`` is the declared label set;
* diffprivlib's ``PrivacyLeakWarning`` becomes :class:`~skdptune.exceptions.PrivacyLeakError`
  *inside* the function, because warning filters do not travel to joblib worker processes;
* in :func:`fit_and_utility` (partition fits, whose utility enters a subsample-and-aggregate
  mean) any other failure of the fit or the score becomes ``error_score`` on the utility scale,
  so no exception raised by private data escapes (``error_score="raise"`` is for debugging);
  its model is never released, so a family's faster subclass drawing the same model
  distribution fits it where the family has one
  (:attr:`skdptune.estimators.models.ModelAdapter.unreleased_fit`);
* the function returns the utility to its caller and nowhere else: nothing is logged or printed.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import pickle

import joblib
import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs, parallel_backend
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_method_params
from threadpoolctl import ThreadpoolController

from .._params import get_params, set_params
from .._private import FAILURE_MESSAGE, LEAKS, silenced
from .._scale_cache import scales_found_once
from ..estimators import (
    branch_of,
    clone_with_throwaway_accountants,
    derived_seed,
    for_inner_fits,
    iter_dp_components,
    leak_warnings_as_errors,
    rescale_row_dependent_params,
    scale_dp_epsilons,
    seed_dp_components,
    set_total_epsilon,
    sound_fitting,
)
from ..exceptions import PrivateFitError
from ._batched_scaler import bounds_centre, scaler_transform

__all__ = [
    "DeferredModel",
    "DeferredPipeline",
    "all_or_fail",
    "built",
    "candidate_key",
    "candidate_keys",
    "candidate_template",
    "candidate_templates",
    "failure_utility",
    "fit_and_utility",
    "fit_and_example_utilities",
    "fit_on_rows",
    "fitted_as_fit",
    "fitting",
    "for_workers",
    "instantiate",
    "PreparedTemplate",
    "prepare_clone",
    "fit_settings",
    "received",
    "rows_of",
    "single_threaded_blas",
    "steps_key",
]


#: Data up to this size (bytes) travels to joblib's worker processes by value (pickled bytes)
#: rather than as joblib's memory map: see :func:`for_workers`.
BY_VALUE_MAX_BYTES = 64 * 2**20


class _ByValue:
    """``value`` for joblib's workers: pickled as one ``bytes`` object, so joblib sees no array
    to memory-map; a worker unpickles ``value`` itself. In this process, :func:`received`
    unwraps it."""

    __slots__ = ("value", "_payload")

    def __init__(self, value):
        self.value = value
        self._payload = None

    def __reduce__(self):
        if self._payload is None:  # once: the tasks of one batch then share it (pickle's memo)
            self._payload = pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL)
        return pickle.loads, (self._payload,)


def _nbytes(value) -> int | None:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sp.issparse(value):
        return sum(getattr(value, name).nbytes for name in ("data", "indices", "indptr", "row",
                                                            "col", "offsets")
                   if isinstance(getattr(value, name, None), np.ndarray))
    if hasattr(value, "memory_usage"):  # pandas
        return int(np.sum(value.memory_usage(index=True, deep=False)))
    return None


def for_workers(value, n_jobs):
    """``value`` (the data) as a ``Parallel`` call of ``n_jobs`` should pass it to its tasks.

    joblib memory-maps every array over 1 MB into a temporary folder and deletes the folder
    when the call returns; that deletion races with joblib's resource tracker, and in about
    4 calls in 10 it fails and sleeps 0.1 s before retrying (measured with 2 workers and a
    1.4 MB array: 15 ms or 115 ms per call). Data up to ``BY_VALUE_MAX_BYTES`` is sent by value
    instead (a worker function gets it through :func:`received`); larger data keeps the
    memory map, whose single write then costs more than the wait. One process (``n_jobs``
    resolving to 1, a thread-based backend) gets ``value`` itself.
    """
    if effective_n_jobs(n_jobs) == 1:
        return value
    size = _nbytes(value)
    return value if size is None or size > BY_VALUE_MAX_BYTES else _ByValue(value)


def received(value):
    """What a worker function was given for ``value`` by :func:`for_workers`."""
    return value.value if isinstance(value, _ByValue) else value


@functools.cache
def _threadpools():
    # scanning the loaded libraries costs about 3 ms; the BLAS libraries are loaded with numpy
    # and scipy, before the first fit
    return ThreadpoolController()


def single_threaded_blas():
    """Context for the fits of a search: single-threaded BLAS.

    Parallelism belongs to joblib here. A multi-threaded BLAS on the tiny matrices of a
    partition fit spends its time synchronising threads: diffprivlib's LogisticRegression on
    30 rows measured 0.26 s per fit with the default OpenBLAS threads and 0.012 s with one
    thread on the 2-core machines of this project. The refit on all rows too: on these tall,
    narrow arrays (thousands of rows, tens of features) two OpenBLAS threads took 3 to 5 times
    longer than one while other processes ran (24,420 x 15: 0.40 s vs 0.085 s) and saved at
    most 5 ms on an idle machine; the coefficients are the same bit for bit. (loky workers
    already limit their threads.)
    """
    return _threadpools().limit(limits=1, user_api="blas")


def candidate_template(estimator, params):
    """Unfitted clone of ``estimator`` with ``params`` set, ready for a fit inside a search.

    Fresh throwaway accountants, unseeded diffprivlib components, silent (see
    :func:`skdptune.estimators.for_inner_fits`). Built once per candidate;
    :func:`instantiate` copies it for every fit.
    """
    est = clone_with_throwaway_accountants(estimator)
    set_params(est, **clone_with_throwaway_accountants(params))
    return for_inner_fits(est)


#: the parameters :func:`candidate_template` sets after the candidate's values
_PREPARED_PARAMETERS = frozenset({"accountant", "random_state", "verbose", "sparse_threshold"})


def _holds_estimator(value):
    if hasattr(value, "get_params") or hasattr(value, "fit"):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set)) or (isinstance(value, np.ndarray)
                                                 and value.dtype == object):
        return any(_holds_estimator(item) for item in value)
    return False


def candidate_templates(estimator, candidates, keys=None):
    """``[candidate_template(estimator, params) for params in candidates]``, built cheaply.

    ``clone``, ``set_params`` and the preparation of :func:`candidate_template` each walk the
    estimator's signature; for many candidates most of that walk is repeated. A candidate that
    sets plain values (no estimator) of parameters other than ``accountant``, ``random_state``,
    ``verbose`` and ``sparse_threshold`` -- which the preparation sets, and nothing else does --
    gets a copy of the estimator's own template with its values set: the preparation commutes
    with such values, so the copy is its template. Other candidates, and one whose values the
    copy rejects (for scikit-learn's message), go through :func:`candidate_template`.

    Candidates with equal :func:`candidate_key` (``keys``: theirs, computed here when ``None``)
    share one template *object* -- a repetition search draws each of a grid's candidates many
    times. Templates are never modified: every fit copies its own (:func:`instantiate`).
    """
    keys = [candidate_key(params) for params in candidates] if keys is None else keys
    base, templates, made = None, [], {}
    for params, key in zip(candidates, keys, strict=True):
        if key is not None and key in made:
            templates.append(made[key])
            continue
        template = None
        if not any(name.rpartition("__")[2] in _PREPARED_PARAMETERS or _holds_estimator(value)
                   for name, value in params.items()):
            if base is None:
                base = candidate_template(estimator, {})
            try:
                template = set_params(copy.deepcopy(base), **clone(params, safe=False))
            except Exception:
                pass  # candidate_template raises it with the estimator's own repr
        if template is None:
            template = candidate_template(estimator, params)
        if key is not None:
            made[key] = template
        templates.append(template)
    return templates


def candidate_key(params):
    """A hashable key of a candidate (equal keys: equal templates), or ``None``.

    One entry per parameter: its name and ``joblib.hash`` of its value, which tells apart
    values that compare equal but set different templates (``0.0`` and ``-0.0``, ``True`` and
    ``1``) and keys unhashable values (a ``kw_args`` dict); ``None`` when a value cannot be
    hashed so (a lambda)."""
    try:
        return tuple(sorted((name, joblib.hash(value)) for name, value in params.items()))
    except Exception:
        return None


def candidate_keys(candidates) -> list:
    """``[candidate_key(params) for params in candidates]``, each key computed once per
    distinct candidate: candidates whose values are the same objects (a repetition search
    draws the entries of a list -- the same objects -- many times) share the key of the first.
    The objects stay alive while ``candidates`` does, so an ``id`` is never reused here."""
    made, keys = {}, []
    for params in candidates:
        identity = tuple((name, id(value)) for name, value in params.items())
        if identity not in made:
            made[identity] = candidate_key(params)
        keys.append(made[identity])
    return keys


def steps_key(key, final, index):
    """The part of a :func:`candidate_key` that sets the steps of a pipeline before its
    ``final`` one (candidates with equal parts transform the rows alike); a candidate without
    a key (``index``: its position) gets a key of its own."""
    if key is None:
        return ("candidate", index)
    return tuple(entry for entry in key
                 if entry[0] != final and not entry[0].startswith(final + "__"))


def instantiate(template, *, seed=None, epsilon_scale=None, epsilon_total=None, n_classes=None,
                row_factor=None):
    """A fresh copy of a :func:`candidate_template`, seeded and with its epsilons set.

    Parameters
    ----------
    template : estimator
        From :func:`candidate_template`; not modified (it is deep-copied, which for an unfitted
        estimator equals ``clone`` and is several times faster).
    seed : int or None
        When given, every diffprivlib component (and any other component whose
        ``random_state`` is ``None``) gets a seed derived from it and its path (reproducible
        runs). ``None``: diffprivlib's secure generator (the template's components are
        unseeded).
    epsilon_scale : float or None
        Multiplies every diffprivlib component's ``epsilon`` (after ``epsilon_total``).
    epsilon_total : float or None
        Rescales the diffprivlib components' ``epsilon`` proportionally so that they sum to this
        value (``inf``: non-private fits), or, with a diffprivlib ``LogisticRegression``
        (whose cost is not linear in its ``epsilon``), so that they cost it.
    n_classes : int or None
        The declared label set's size, for ``epsilon_total``: the cost of a
        ``LogisticRegression`` depends on it (``None``: the cost over every count).
    row_factor : float or None
        ``n / n_rows`` for a fit on ``n_rows`` rows that stands in for a model on ``n`` rows:
        multiplies the parameters whose meaning depends on the row count
        (:func:`skdptune.estimators.rescale_row_dependent_params`). Only for fits that are
        never released.
    """
    est = copy.deepcopy(template)
    if seed is not None:
        seed_dp_components(est, seed)
    if epsilon_total is not None:
        set_total_epsilon(est, epsilon_total, n_classes)
    if epsilon_scale is not None and epsilon_scale != 1.0:
        scale_dp_epsilons(est, epsilon_scale)
    if row_factor is not None and row_factor != 1.0:
        rescale_row_dependent_params(est, row_factor)
    return est


def fit_settings(epsilons) -> dict:
    """:func:`instantiate`'s settings of the runs of a search: ``epsilons`` is a factor on the
    DP epsilons (a float, or ``None`` for none), or the settings themselves (a dict, e.g.
    ``{"epsilon_total": 0.8, "n_classes": 2}``: every candidate priced at 0.8)."""
    return dict(epsilons) if isinstance(epsilons, dict) else {"epsilon_scale": epsilons}


class PreparedTemplate:
    """A :func:`candidate_template` with its epsilon / row settings applied, copied cheaply.

    For the many fits of one candidate with the same settings (the partitions of a
    subsample-and-aggregate evaluator): the settings are applied once and the components to seed
    are found once, so a fit costs one ``deepcopy`` -- not the ``get_params`` / ``set_params``
    walks of :func:`instantiate`. ``prepared.instantiate(seed)`` equals
    ``instantiate(template, seed=seed, **settings)``.
    """

    def __init__(self, template, **settings):
        self.estimator = instantiate(template, **settings)
        params = get_params(self.estimator)
        dp_paths = {path for path, _ in iter_dp_components(self.estimator)}
        # the components seed_dp_components seeds, and the path their seed is derived from
        self._seeded = []
        for key, value in params.items():
            owner, _, last = key.rpartition("__")
            if last == "random_state" and (value is None or owner in dp_paths):
                self._seeded.append((params[owner] if owner else self.estimator, owner))

    def random_state(self, seed=None):
        """``self.instantiate(seed).random_state`` without the copy: the seed the estimator
        itself gets from ``seed`` (``None``: its own ``random_state``)."""
        return self.component_seed(self.estimator, seed)

    def component_seed(self, component, seed=None):
        """The ``random_state`` the copy of ``component`` (one of this estimator's components,
        or the estimator) gets in ``self.instantiate(seed)``, without the copy."""
        if seed is not None:
            for seeded, path in self._seeded:
                if seeded is component:
                    return derived_seed(seed, path)
        return component.random_state

    def instantiate(self, seed=None):
        """A fresh copy, its components seeded from ``seed`` (``None``: secure noise)."""
        memo = {}
        est = copy.deepcopy(self.estimator, memo)
        if seed is not None:
            for component, path in self._seeded:
                memo[id(component)].random_state = derived_seed(seed, path)
        return est


class DeferredModel:
    """A batched run's fitted model, its estimator not yet made.

    The runs of a repetition search are thousands and one of them is released: each run of a
    plain diffprivlib ``LogisticRegression`` or ``SSPRegressor`` keeps what makes its model --
    its :class:`PreparedTemplate`, its seed, and the fitted attributes its solve or release
    found (``classes_``, ``coef_``, ``intercept_``, ``alpha_``, ``n_features_in_``; readable
    here, as on the model, and ``feature_names_in_`` may be set here, as on the model) -- and
    :meth:`build` makes the model, the estimator ``prepared.instantiate(seed)`` with these
    attributes and its throwaway accountant charged as the model's ``fit`` charges it
    (:func:`fitted_as_fit`): what the run's fit would have made eagerly.
    """

    def __init__(self, prepared, seed, **fitted):
        self._prepared, self._seed = prepared, seed
        vars(self).update(fitted)

    @property
    def estimator(self):
        """The run's prepared estimator (unfitted; its seed aside, the run's parameters)."""
        return self._prepared.estimator

    def build(self):
        """The run's fitted model (a new one at every call)."""
        fitted = {name: value for name, value in vars(self).items()
                  if not name.startswith("_")}
        return fitted_as_fit(self._prepared.instantiate(self._seed), fitted)


class DeferredPipeline:
    """A batched run of a ``Pipeline`` of data-independent steps, a scaler step and a model, its
    estimator not yet made: its :class:`PreparedTemplate` and seed, the data-independent steps
    fitted on the run's rows (``prefix``: ``(name, step)`` pairs, shared by the runs of its
    group and copied into the built pipeline), and the fitted attributes of its scaler
    (diffprivlib's ``StandardScaler``) and of its model, each found as that step's ``fit`` would
    find them. :meth:`build` makes the pipeline ``prepared.instantiate(seed)`` with these, each
    DP step's throwaway accountant charged as its ``fit`` charges it (:func:`fitted_as_fit`).

    The scaler step is the scaler itself (``branch`` ``None``), or a ``ColumnTransformer``
    whose one private branch, named ``branch``, is the scaler: then the last entry of
    ``prefix`` is that transformer fitted with the branch passing its columns through -- its
    output the rows the model reads, the scaler's columns (``block``, a slice of them) as the
    scaler reads them -- and the built transformer is it with the run's scaler in the branch's
    place."""

    def __init__(self, prepared, seed, prefix, scaler, model, branch=None, block=None):
        self._prepared, self._seed = prepared, seed
        self.prefix, self.scaler, self.model = prefix, scaler, model
        self.branch = branch
        self.block = slice(None) if block is None else block

    @property
    def estimator(self):
        """The run's prepared pipeline (unfitted; its seeds aside, the run's parameters)."""
        return self._prepared.estimator

    def _placed(self, values, fill):
        """Per-scaler-feature ``values`` placed at the scaler's columns of the rows the model
        reads, ``fill`` elsewhere."""
        out = np.full(np.shape(self.model["coef_"])[-1], fill, dtype=float)
        out[self.block] = values
        return out

    def centre(self):
        """The middle of the scaler's ``bounds`` at its columns, 0 elsewhere: the public point
        the batched runs centre the rows at (:func:`~._batched_scaler.bounds_centre`)."""
        return self._placed(bounds_centre(self.scaler["bounds"]), 0.0)

    def linear(self, centre=0.0):
        """``(coef, intercept)``: the decision function of the built pipeline on the rows the
        prefix outputs, ``((x - mean_) / scale_) . coef_ + intercept_``, as one linear model of
        the rows minus ``centre`` (``mean_`` 0 without centring, ``scale_`` 1 without scaling,
        and 0 and 1 outside the scaler's columns): ``coef_ / scale_`` and
        ``intercept_ - (coef_ / scale_) . (mean_ - centre)``; equal up to rounding."""
        step = self.estimator.steps[-2][1]
        with_mean = (step if self.branch is None else branch_of(step, self.branch)).with_mean
        shift, scale = scaler_transform(self.scaler, with_mean)
        shift, scale = self._placed(shift, 0.0), self._placed(scale, 1.0)
        coef = self.model["coef_"] / scale
        return coef, self.model["intercept_"] - coef @ (shift - centre)

    def build(self):
        """The run's fitted pipeline (a new one at every call)."""
        pipe = self._prepared.instantiate(self._seed)
        prefix = [(name, copy.deepcopy(step)) for name, step in self.prefix]
        if self.branch is None:
            fitted_as_fit(pipe.steps[-2][1], self.scaler)
        else:
            # the fitted image, its branch the run's scaler as the transformer's fit leaves it:
            # a clone of the branch (its accountant a copy), fitted
            name, step = pipe.steps[-2]
            _, image = prefix.pop()
            scaler = fitted_as_fit(clone(branch_of(step, self.branch)), self.scaler)
            image.transformers = step.transformers
            image.transformers_ = [(b, scaler if b == self.branch else trans, columns)
                                   for b, trans, columns in image.transformers_]
            pipe.steps[-2] = (name, image)
        fitted_as_fit(pipe.steps[-1][1], self.model)
        pipe.steps = prefix + pipe.steps[-2:]
        return pipe


def built(model):
    """``model``, or the model a :class:`DeferredModel` or :class:`DeferredPipeline` stands
    for."""
    return model.build() if isinstance(model, (DeferredModel, DeferredPipeline)) else model


def fitted_as_fit(est, fitted):
    """``est`` with the fitted attributes ``fitted`` of its solve, its throwaway accountant
    charged ``(epsilon, 0)`` as the ``fit`` of diffprivlib's models and of ``SSPRegressor``
    charges it."""
    for name, value in fitted.items():
        setattr(est, name, value)
    est.accountant.spend(est.epsilon, 0)
    return est


def prepare_clone(estimator, params, **settings):
    """``instantiate(candidate_template(estimator, params), **settings)``: one-off fits."""
    return instantiate(candidate_template(estimator, params), **settings)


@contextlib.contextmanager
def fitting():
    """Context of every fit skdptune makes: ``PrivacyLeakWarning`` raises ``PrivacyLeakError``,
    the fit's own joblib calls run sequentially, in this thread, and diffprivlib's bounded-domain
    Laplace mechanisms find each scale once (:mod:`skdptune._scale_cache`: the same noise).

    (diffprivlib's ``LogisticRegression`` fits one-vs-rest with its ``n_jobs``: in a worker
    process it would draw the noise from a pickled copy of numpy's global generator -- not its
    secure generator, the same draws for every class, reproducible from ``np.random.seed`` --
    and under a dask backend the nested call would wait on the task that runs it. The search
    parallelises across fits instead.)
    """
    with leak_warnings_as_errors(), parallel_backend("sequential"), scales_found_once():
        yield


def take_rows(data, rows):
    """``sklearn.utils._safe_indexing(data, rows)`` for integer row numbers ``rows``: a numpy
    array indexed directly -- the same array, without scikit-learn's dispatch on the container
    (about 0.04 ms a call on a numpy array, four calls a partition fit) --, anything else through
    ``_safe_indexing``."""
    if type(data) is np.ndarray:
        return data[rows]
    return _safe_indexing(data, rows)


def rows_of(X, y, rows, fit_params, *, padding=None):
    """``(X, y, fit parameters)`` of a fit on ``rows`` (``None``: all rows), the ``padding``
    rows appended: what :func:`fit_on_rows` passes to ``fit``."""
    if rows is None:
        X_rows, y_rows, params = X, y, dict(fit_params)
    else:
        X_rows = take_rows(X, rows)
        y_rows = None if y is None else take_rows(y, rows)
        params = _check_method_params(X, params=fit_params, indices=rows)
    if padding is not None:
        X_rows, y_rows, params = padding.apply(X_rows, y_rows, params)
    return X_rows, y_rows, params


def fit_on_rows(estimator, X, y, rows, fit_params, *, padding=None, released=True):
    """Fit ``estimator`` on ``rows`` of ``(X, y)`` (``rows=None``: all rows) and return it.

    ``padding`` (a :class:`skdptune.public.Padding`, for classifiers) appends the public rows,
    one per declared class. ``PrivacyLeakWarning`` raised by diffprivlib is turned into
    ``PrivacyLeakError``. The fit's own joblib calls run sequentially, in this thread. The
    diffprivlib components whose own fit is not sound are fitted by their sound subclass
    (:func:`skdptune.estimators.sound_fitting`) and returned in their own class;
    ``released=False`` (a fit whose model is never released) fits them by their family's
    faster subclass where it has one.
    """
    X_rows, y_rows, params = rows_of(X, y, rows, fit_params, padding=padding)
    with fitting(), sound_fitting(estimator, released=released):
        if y_rows is None:
            estimator.fit(X_rows, **params)
        else:
            estimator.fit(X_rows, y_rows, **params)
    return estimator


def failure_utility(error_score) -> float:
    """Utility in [0, 1] of a failed fit or score: ``error_score``, with NaN as the minimum 0.

    scikit-learn's ``error_score=np.nan`` ranks failed candidates last; a private selector
    needs numbers, and the lowest utility is the same ranking.
    """
    value = float(error_score)
    return 0.0 if math.isnan(value) else value


def fit_and_utility(
    template,
    X,
    y,
    train,
    test,
    scorer,
    *,
    fit_params,
    error_score,
    padding=None,
    seed=None,
    epsilon_scale=None,
    epsilon_total=None,
    row_factor=None,
    score_params=None,
):
    """Bounded utility in [0, 1] of ``template`` fitted on ``train`` and scored on ``test``.

    ``template`` is a :func:`candidate_template` (then the keyword settings apply) or a
    :class:`PreparedTemplate` (its settings are already applied; only ``seed`` is used).
    ``score_params`` (metadata routed to the scorer, e.g. ``sample_weight``) are restricted to
    the ``test`` rows (row-aligned ones; others pass unchanged): the utility depends on the
    ``test`` rows' records only. They never reach the fit.

    The returned value is exact and therefore private: callers must only feed it to a private
    mechanism (selector, noisy release) and never store it. A failed fit or score returns
    ``error_score`` (already on the utility scale; NaN counts as 0) unless
    ``error_score == "raise"``.
    ``PrivacyLeakError`` always propagates: it reflects the configuration, not the data.
    """
    try:
        if isinstance(template, PreparedTemplate):
            est = template.instantiate(seed)
        else:
            est = instantiate(template, seed=seed, epsilon_scale=epsilon_scale,
                              epsilon_total=epsilon_total, row_factor=row_factor)
        fit_on_rows(est, X, y, train, fit_params, padding=padding, released=False)
        X_test = take_rows(X, test)
        y_test = None if y is None else take_rows(y, test)
        params = (_check_method_params(X, params=score_params, indices=test)
                  if score_params else {})
        with leak_warnings_as_errors():
            return float(scorer(est, X_test, y_test, **params))
    except LEAKS:
        raise
    except Exception:
        if error_score == "raise":
            raise
        return failure_utility(error_score)


def fit_and_example_utilities(template, X, y, rows, validation, score, fit_params, *, debug,
                              padding=None, seed=None, **epsilons):
    """``(per-example utilities on the validation rows, model)`` of a fit whose outputs are
    released (repetition runs, DP-GIBO fits), or ``None`` when it failed.

    Unlike :func:`fit_and_utility`, a failure is not turned into a utility: whether a fit fails
    depends on its rows, which its DP guarantee does not cover, so the caller must stop the
    search (:func:`all_or_fail`). Runs silenced (it is called in joblib workers); the utilities
    are exact and private. ``debug`` (``error_score="raise"``) lets the original exception out;
    ``epsilons`` are :func:`instantiate`'s ``epsilon_scale`` / ``epsilon_total``.
    """
    with silenced():
        try:
            model = instantiate(template, seed=seed, **epsilons)
            fit_on_rows(model, X, y, rows, fit_params, padding=padding)
            X_val = take_rows(X, validation)
            y_val = None if y is None else take_rows(y, validation)
            return np.asarray(score(model, X_val, y_val), dtype=float), model
        except LEAKS:  # a configuration fact: run_private reports it
            raise
        except Exception:
            if debug:
                raise
            return None


def all_or_fail(outputs: list) -> list:
    """``outputs`` of released fits, or ``PrivateFitError`` (fixed message) if one is ``None``."""
    if any(output is None for output in outputs):
        raise PrivateFitError(FAILURE_MESSAGE)
    return outputs
