"""The base class every private search shares (the role of scikit-learn's ``BaseSearchCV``).

``BaseDPSearchCV.fit`` owns the privacy contract (docs/privacy.md) so that no search can forget
a step of it. In order:

1. **Public checks, nothing read, nothing charged.** Validate the parameters
   (``_parameter_constraints``); route the fit parameters to the estimator, the scorer and
   the inner splitter (scikit-learn's metadata routing when enabled; scikit-learn's errors
   for metadata nobody requested) and check their formats; check the estimator's
   configuration (a diffprivlib model that would read its bounds off the data raises
   ``PrivacyLeakError``); warn when the estimator
   carries its own noise seed; resolve the public label set of a classifier (``classes``);
   plan the tuning (``_plan_tuning``: data-independent settings); and **dry-run**
   every candidate on a synthetic dataset with the public format of ``X`` and ``y``
   (:func:`skdptune.public.dry_run`), so that an unknown parameter, a rejected input format
   or a broken scorer fails here with its real message. With workers, the dry run's shares are
   fitted in them while this process does the remaining public work of steps 1 and 2 (the
   magnitude limits, the pricing); a failed dry run is still the error reported first.
2. **Budget.** Compute the whole cost -- tuning plus returned model -- from data-independent
   quantities only (:meth:`BaseDPSearchCV.planned_privacy`, public) and ``accountant.check``
   it.
3. **Domain.** Refuse, with a fixed message and no charge, a dataset outside the declared
   domain (a label not in ``classes``, non-finite features the estimator rejects, a negative or
   non-finite sample weight).
4. **The private region** (:func:`skdptune._private.run_private`): tuning (``_run_tuning``)
   and refit, with the public padding rows in every fit of a classifier. Nothing leaves it but
   the private outputs: warnings are discarded, and a failure leaves as ``PrivateFitError``
   with a fixed message.
5. **Charge once.** The user's accountant is charged exactly ``privacy_spent_``, also when the
   region failed (the data was read), ``PrivacyLeakError`` from the region included (the
   configuration check of step 1 refuses diffprivlib's leaky configurations with no charge; a
   leak found later may depend on the data). Then the released outputs are stored as
   attributes.

The accountant is a shared ledger: :meth:`BaseDPSearchCV.__sklearn_clone__` keeps the same
object in clones (``cross_val_score``, nested searches), so each fit of each clone charges it.

A subclass provides ``_search_space()`` (for the cost of the returned model, maximised over the
space), ``_tuning_events(n_samples)`` (the tuning's cost descriptions, a pure function of the
parameters and ``n``), ``_plan_tuning(public, seeds)`` (data-independent: the scorers to dry-run
and whatever the run needs) and ``_run_tuning(plan, X, y, fit_params, seeds)``, which returns a
:class:`TuningResult` holding released information only.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings
from abc import abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn import config_context
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _clone_parametrized, _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted

from ._estimators import (
    check_leak_free_configuration,
    check_private_components,
    estimator_privacy,
    estimator_privacy_parts,
    is_listed,
    seeded_dp_components,
    strip_nonprivate_attributes,
)
from ._private import one_fit_at_a_time, run_private
from ._seeding import SeedPlan
from .accounting import PrivacyReport, privacy_report
from .evaluation._fit import (
    candidate_templates,
    fit_on_rows,
    prepare_clone,
    single_threaded_blas,
)
from .evaluation._scores import split_scoring
from .events import EpsilonDeltaEvent, PrivacyEvent
from .public import (
    PublicInfo,
    check_budget,
    check_composites_readable,
    check_domain,
    check_model_input,
    check_public_shapes,
    check_routed_metadata,
    check_rows,
    check_weights_domain,
    choose_object_fill,
    magnitude_limits,
    make_padding,
    model_input_settings,
    resolve_classes,
    start_dry_run,
)

__all__ = ["BaseDPSearchCV", "TuningPlan", "TuningResult"]


@dataclass
class TuningPlan:
    """What a search decided before seeing data: its run-time settings."""

    settings: dict[str, Any] = field(default_factory=dict)
    # the scorers the run will call, by name: dry-run on synthetic data before any data is read
    scorers: dict[str, Any] = field(default_factory=dict)
    # metadata for a user's inner splitter (``groups``, and with metadata routing whatever the
    # splitter requests), for a search whose inner splitter uses it
    split_params: dict = field(default_factory=dict)
    # metadata for the selecting scorer (metadata routing: ``set_score_request``), for a
    # search whose utilities stay bounded whatever it is (DPGridSearchCV)
    score_params: dict = field(default_factory=dict)
    # fitted attributes decided before the data is read (``scorer_``, the budget split ...):
    # written on the search with the others once the fit has succeeded, so that a refused or
    # failed fit leaves none of them behind
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class TuningResult:
    """Released outputs of the private tuning (post-processing of private outputs only)."""

    candidate_params: list[dict]
    best_index: int
    fallback: bool = False
    extra_results: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    # an already-trained model of the winning run, released by the mechanism (repetition)
    best_estimator: Any = None


def _check_refit(search, attr):
    if not search.refit and not hasattr(search, "best_estimator_"):
        raise AttributeError(
            f"This {type(search).__name__} instance was initialized with `refit=False`. "
            f"{attr} is available only after refitting on the best parameters. You can refit "
            "an estimator manually using the `best_params_` attribute (and account for that "
            "fit's privacy cost)."
        )


def _search_estimator_has(attr):
    """Delegate ``attr`` to the returned model (fitted) or the base estimator (unfitted)."""

    def check(self):
        _check_refit(self, attr)
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, attr)
            return True
        getattr(self.estimator, attr)
        return True

    return check


def _param_arrays(candidate_params):
    """``param_<name>`` masked arrays, typed as scikit-learn (>= 1.5) builds them.

    One array per parameter name, masked where a candidate does not set it. Its dtype is what
    numpy infers from the values when that is a 1-d, non-string array (e.g. ``float64`` for
    ``C``), else ``object`` (strings, ``None`` mixed with numbers, estimators, tuples, arrays
    of different sizes).
    """
    n = len(candidate_params)
    values = defaultdict(dict)
    for i, params in enumerate(candidate_params):
        for name, value in params.items():
            values[f"param_{name}"][i] = value
    arrays = {}
    for key, by_index in values.items():
        try:
            inferred = np.array(list(by_index.values()))
        except (ValueError, TypeError):  # ragged sequences, values numpy cannot combine
            dtype = np.dtype(object)
        else:
            dtype = inferred.dtype if inferred.dtype.kind != "U" and inferred.ndim == 1 else object
        array = np.ma.MaskedArray(np.empty(n, dtype=dtype), mask=True)
        for i, value in by_index.items():
            array[i] = value  # unmasks entry i
        arrays[key] = array
    return arrays


class BaseDPSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Abstract base class of the differentially private searches.

    Not for direct use: see :class:`~skdptune.DPGridSearchCV`.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        # a str names the selecting metric; a callable is refused in fit, with the reason
        "refit": ["boolean", str, callable],
        "return_train_score": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "error_score": [StrOptions({"raise"}), numbers.Real],
        "accountant": [BudgetAccountant, None],
        "classes": ["array-like", None],
    }

    @abstractmethod
    def __init__(self, estimator, *, classes=None, refit=True, n_jobs=None, verbose=0,
                 random_state=None, error_score=0.0, accountant=None,
                 return_train_score=False):
        self.estimator = estimator
        self.classes = classes
        self.refit = refit
        self.return_train_score = return_train_score
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.error_score = error_score
        self.accountant = accountant

    # -- hooks ---------------------------------------------------------------------------------
    @abstractmethod
    def _search_space(self):
        """The parameter space (dict or list of dicts), used to maximise the model's cost."""

    @abstractmethod
    def _tuning_events(self, n_samples: int) -> list[tuple[str, PrivacyEvent]]:
        """Cost descriptions of the tuning: a pure function of the parameters and ``n``."""

    @abstractmethod
    def _plan_tuning(self, public: PublicInfo, seeds: SeedPlan) -> TuningPlan:
        """Data-independent plan: scorers and settings for the run."""

    @abstractmethod
    def _run_tuning(self, plan: TuningPlan, X, y, fit_params, seeds: SeedPlan) -> TuningResult:
        """Run the private tuning. Must return released information only."""

    def _final_model_cost(self, n_samples: int) -> tuple[float, float]:
        """(epsilon, delta) of the returned model: the estimator's own, max over the space
        (budget modes override it; a pure function of the parameters and ``n``)."""
        return estimator_privacy(self.estimator, self._search_space(),
                                 n_classes=self._n_classes())

    def _n_classes(self) -> int | None:
        """The size of the declared label set (public), on which the cost of diffprivlib's
        ``LogisticRegression`` depends; ``None`` (every count) when none is declared yet."""
        try:
            classes = resolve_classes(self.classes, self.estimator)
        except ValueError:
            return None
        return None if classes is None else len(classes)

    def _final_model_params(self, result: TuningResult) -> dict:
        return result.candidate_params[result.best_index]

    #: whether :meth:`_refit_settings` prices each candidate at the model's budget
    #: (``epsilon_total``, the budget modes) rather than fitting it as configured
    _refit_sets_total = False

    def _refit_settings(self, plan: TuningPlan) -> dict:
        """How to set the DP epsilons of the refitted model (budget modes): keyword arguments
        of :func:`skdptune.evaluation._fit.instantiate` (``{}``: as configured)."""
        return {}

    # -- helpers -------------------------------------------------------------------------------
    def _log(self, level: int, message: str) -> None:
        """Print public progress information (never a score) when ``verbose >= level``; inside
        the private region, hold it until the region succeeds (:meth:`_holding_lines`)."""
        if self.verbose >= level:
            line = f"[{type(self).__name__}] {message}"
            if self._held_lines is not None:
                self._held_lines.append(line)
            else:
                print(line, flush=True)

    #: lines held back while the private region runs (``None``: print at once)
    _held_lines: list[str] | None = None

    @contextlib.contextmanager
    def _holding_lines(self, hold: bool):
        """Hold the ``verbose`` lines of the private region, print them if it succeeds, drop
        them if it fails.

        Printed as they came, the lines before a failure would show where the failure happened
        (which iteration, the refit), hence something about the record that caused it, beyond
        the one bit "the fit failed". ``hold=False`` (``error_score="raise"``, debugging)
        prints them at once.
        """
        self._held_lines = [] if hold else None
        try:
            yield
            lines = self._held_lines or []
        finally:
            vars(self).pop("_held_lines", None)
        for line in lines:
            print(line, flush=True)

    def _check_error_score(self):
        if self.error_score == "raise":
            warnings.warn(
                "error_score='raise' lets exceptions from fits on private data escape, which "
                "voids the differential privacy guarantee. Use it for debugging only.",
                UserWarning,
                stacklevel=5,
            )
        elif not (0.0 <= float(self.error_score) <= 1.0 or math.isnan(self.error_score)):
            raise ValueError(
                "error_score is a utility in [0, 1] (the bounded-utility scale), or np.nan "
                f"(counted as the minimum utility 0), got {self.error_score!r}"
            )

    def _check_sklearn_options(self) -> None:
        """Refuse, before any data is read, scikit-learn options that would release or read
        exact scores; check the multi-metric ``scoring`` / ``refit`` pair."""
        name = type(self).__name__
        if callable(self.refit):
            raise ValueError(
                f"{name} does not accept a callable refit: it chooses the best index by "
                "reading cv_results_ scores, which are exact scores of the private data, and a "
                "private search releases none (cv_results_ holds no score). Select with "
                "refit=True, or with refit='<metric>' and several metrics in scoring; a rule "
                "that combines metrics can be written as one callable scoring with "
                "score_bounds."
            )
        if self.return_train_score:
            raise ValueError(
                f"{name} does not accept return_train_score=True: train scores are exact "
                "scores of the private data, and a private search releases none. Use "
                "return_train_score=False (the default), and score the returned model on "
                "public or held-out data with score()."
            )
        if hasattr(self, "scoring"):
            split_scoring(self.scoring, self.refit)

    def _check_score_params(self, score_params: dict) -> None:
        """Refuse metadata routed to the scorer (before any data is read; nothing charged).

        Overridden by DPGridSearchCV, whose partition utilities may be weighted. Here the
        validation score is a mean over the validation rows with noise calibrated to one row's
        share of it (``1/m``): with weights, one record's weight can move a weighted mean by up
        to the whole range, so no sensitivity below the range exists without a public bound on
        the weights (and on their total).
        """
        if score_params:
            raise ValueError(
                f"{type(self).__name__} cannot pass {sorted(score_params)} to its scorer: its "
                "noisy validation score is a mean over the validation rows, and a weighted (or "
                "metadata-dependent) mean has no bounded sensitivity without a public bound on "
                "the weights -- one record's weight can move it by up to the whole range. Use "
                "DPGridSearchCV, whose partition utilities may be weighted (each stays in "
                "[0, 1]), or an unweighted scorer (e.g. set_score_request(sample_weight="
                "False)); the estimator's fit can still receive sample_weight "
                "(set_fit_request(sample_weight=True)). Nothing was charged.")

    def _check_space(self) -> None:
        """Validate the search space with scikit-learn's own messages (grid and distributions
        searches override it; nothing here reads data)."""

    def _selection_scoring(self):
        """The ``scoring`` of the metric that selects (the refit metric of a multi-metric
        ``scoring``); see :func:`skdptune.evaluation._scores.split_scoring`."""
        return split_scoring(self.scoring, self.refit)[0]

    #: maps a search's own metric names to scikit-learn scorer names (``scorer_``, routing);
    #: ``None``: they are scikit-learn's names
    _raw_scoring = None

    def _public_scorer(self, to_raw=None):
        """``scorer_``: scikit-learn scorer(s) for :meth:`score` on the caller's data.

        A dict ``{name: scorer}`` for a multi-metric ``scoring`` (as scikit-learn's searches
        store it); ``to_raw`` (default: ``_raw_scoring``) maps a search's own metric names to
        scikit-learn scorer names.
        """
        metric, _, metrics = split_scoring(self.scoring, self.refit)
        to_raw = to_raw or self._raw_scoring or (lambda scoring: scoring)
        if metrics is None:
            return check_scoring(self.estimator, scoring=to_raw(metric))
        return {key: check_scoring(self.estimator, scoring=to_raw(value))
                for key, value in metrics.items()}

    def _inner_splitter(self):
        """The user's inner splitter that metadata can be routed to (``None``: none)."""
        return None

    def _check_split_params(self, split_params: dict, public: PublicInfo) -> None:
        """Refuse splitter metadata (``groups``): only a search with a user's inner splitter can
        use it."""
        if split_params:
            raise ValueError(
                f"{type(self).__name__} got groups, but it has no splitter that could use "
                "them: its validation rows are a data-independent holdout. For group-aware "
                "validation use DPGridSearchCV with a group splitter as cv (e.g. "
                "cv=GroupKFold(n_splits=3)), which splits inside each partition by groups; or "
                "drop groups."
            )

    # -- metadata routing ----------------------------------------------------------------------
    def _routing_scorer(self):
        """The scorer(s) as metadata routing sees them: ``scorer_``'s scikit-learn scorer, or
        for several metrics a router over them (scikit-learn's ``_MultimetricScorer`` role)."""
        scorer = self._public_scorer()
        if not isinstance(scorer, dict):
            return scorer
        return MetadataRouter(owner="scoring").add(
            method_mapping=MethodMapping().add(caller="score", callee="score"), **scorer)

    def get_metadata_routing(self):
        """Get the metadata routing of this object (scikit-learn's metadata routing).

        As in scikit-learn's searches: ``fit`` routes to the estimator's ``fit``, to the
        scorer(s) and to a user's inner splitter (``DPGridSearchCV`` with a splitter as ``cv``);
        ``score`` routes to the scorer. Only :class:`~skdptune.DPGridSearchCV` accepts metadata
        for the scorer inside ``fit`` (weighted partition utilities); the other searches refuse
        it before reading any data (docs/sklearn_differences.md).

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter` encapsulating the
            routing information.
        """
        router = MetadataRouter(owner=type(self).__name__)
        router.add(estimator=self.estimator,
                   method_mapping=MethodMapping().add(caller="fit", callee="fit"))
        router.add(scorer=self._routing_scorer(),
                   method_mapping=MethodMapping().add(caller="score", callee="score")
                   .add(caller="fit", callee="score"))
        splitter = self._inner_splitter()
        if splitter is not None:
            router.add(splitter=splitter,
                       method_mapping=MethodMapping().add(caller="fit", callee="split"))
        return router

    def _params_for_scorer(self, scorer, caller: str, params: dict) -> dict:
        """The metadata of ``params`` that ``scorer`` requests (its own requests and aliases,
        resolved by scikit-learn's routing), for a call from ``caller``."""
        router = MetadataRouter(owner=type(self).__name__).add(
            scorer=scorer, method_mapping=MethodMapping().add(caller=caller, callee="score"))
        return dict(router.route_params(caller=caller, params=params).scorer.score)

    def _route_fit_params(self, fit_params: dict) -> tuple[dict, dict, dict]:
        """``(estimator fit params, selecting scorer params, splitter params)``; public.

        With scikit-learn's metadata routing enabled, ``process_routing`` validates the
        metadata (scikit-learn's errors for metadata nobody requested) and routes it; the
        scorer metadata of a search that cannot weight its scores is refused. Without routing,
        as scikit-learn < 1.7: ``groups`` goes to the splitter, everything else to the
        estimator's ``fit``, nothing to the scorer (docs/sklearn_differences.md).
        """
        if not _routing_enabled():
            params = dict(fit_params)
            groups = params.pop("groups", None)
            return params, {}, ({} if groups is None else {"groups": groups})
        routed = process_routing(self, "fit", **fit_params)
        self._check_score_params(dict(routed.scorer.score))
        split_params = (dict(routed.splitter.split) if self._inner_splitter() is not None
                        else {})
        score_params = self._params_for_scorer(self._selecting_routing_scorer(), "fit",
                                               fit_params) if fit_params else {}
        return dict(routed.estimator.fit), score_params, split_params

    def _selecting_routing_scorer(self):
        """The selecting metric's scikit-learn scorer (the one routed metadata can reach)."""
        scorer = self._public_scorer()
        return scorer[self.refit] if isinstance(scorer, dict) else scorer

    def _warn_seeded_estimator(self) -> None:
        """Data-independent warning: the estimator's own noise seeds are not used."""
        paths = seeded_dp_components(self.estimator)
        if paths:
            names = ", ".join(repr(p) if p else "the estimator" for p in paths)
            how = ("the search's random_state seeds them" if self.random_state is not None
                   else "they draw fresh noise from diffprivlib's secure generator; set the "
                        "search's random_state for reproducible runs")
            warnings.warn(
                f"The diffprivlib component(s) {names} carry their own random_state. A fixed "
                "seed gives every fit the same, reproducible noise (known noise is no noise) "
                f"and makes repeated runs dependent, so inside the search it is ignored: {how}.",
                UserWarning, stacklevel=5)

    def _model_input_space(self) -> list[dict]:
        """The space as sub-spaces ``{name: list or distribution}``, for
        :func:`~skdptune.public.model_input_settings` (public)."""
        space = self._search_space()
        return space if isinstance(space, list) else [space]

    def _dry_run_candidates(self) -> list[dict]:
        """Candidates to try on synthetic data: a grid's points, or seeded draws (public)."""
        space = self._search_space()
        candidates = []
        for sub in space if isinstance(space, list) else [space]:
            if all(is_listed(v) for v in sub.values()):
                candidates += list(ParameterGrid(sub))
            else:
                candidates += list(ParameterSampler(sub, n_iter=10, random_state=0))
        return candidates

    # -- fit -----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Run the private search and (optionally) refit the selected candidate on all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: the private rows.
        y : array-like of shape (n_samples,), default=None
            Targets; ``None`` for unsupervised estimators. For a classifier every label must be
            in the declared ``classes``.
        **fit_params : dict
            Without metadata routing: passed to the estimator's ``fit`` (row-aligned ones,
            such as ``sample_weight``, are indexed with the rows), except ``groups``, which goes
            to the inner splitter (``DPGridSearchCV`` with a splitter as ``cv``; refused
            elsewhere). With ``sklearn.set_config(enable_metadata_routing=True)``: routed as
            scikit-learn's searches route them -- to the estimator's ``fit``
            (``set_fit_request``), the scorer (``set_score_request``; ``DPGridSearchCV`` only)
            and the inner splitter. A ``sample_weight`` array must be finite and non-negative
            (checked before any private computation; nothing is charged on error).

        Returns
        -------
        self : object
            The fitted search.
        """
        # one search's fit at a time per process: warning filters are process-wide
        # (skdptune._private, "Threads")
        # assume_finite=True would switch off diffprivlib's own check of non-finite rows, so
        # that a NaN passed the dry run into the domain (measured: a NaN record made the
        # returned model all zeros 20 of 20 times, docs/sklearn_differences.md); the workers
        # inherit the setting
        with one_fit_at_a_time(), self._memo_scope(), config_context(assume_finite=False):
            return self._fit(X, y, **fit_params)

    @contextlib.contextmanager
    def _memo_scope(self):
        """One ``fit``'s (or ``planned_privacy``'s) memo of the public decisions that several
        of its steps ask for (:meth:`_memoized`). Within one, neither the parameters nor the
        estimator change (one fit at a time per process; scikit-learn's ``fit`` does not set
        parameters), so each is taken once and every step (the budget check, the plan, the
        charge) reads the same one -- also a decision that samples the space
        (``DPRandomSearchCV``'s batched runs), which a distribution that ignores
        ``random_state`` could otherwise change between steps. Dropped on leaving."""
        if "_memo" in self.__dict__:  # already inside one
            yield
            return
        self.__dict__["_memo"] = {}
        try:
            yield
        finally:
            del self.__dict__["_memo"]

    def __getstate__(self):
        # one fit's memo belongs to that fit, not to the object: a copy taken during it
        # (pickle, deepcopy) asks afresh -- a copy that kept the memo was found holding a
        # stale budget split after set_params. A copy of the state: the live fit keeps its own.
        state = dict(super().__getstate__())
        state.pop("_memo", None)
        return state

    def _memoized(self, key, compute):
        """``compute()``, once per :meth:`_memo_scope` for ``key`` (afresh outside one).
        For data-independent results only (they depend on the parameters and ``n``)."""
        memo = self.__dict__.get("_memo")
        if memo is None:
            return compute()
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def _fit(self, X, y=None, **fit_params):
        # 1. public checks: nothing is read, nothing is charged
        self._check_error_score()
        self._check_sklearn_options()
        self._check_space()
        # scikit-learn's routing: the estimator's fit, the selecting scorer, the inner splitter
        fit_params, score_params, split_params = self._route_fit_params(fit_params)
        check_leak_free_configuration(self.estimator, self._search_space())
        check_private_components(self.estimator, self._search_space())
        self._warn_seeded_estimator()
        X, y = check_rows(X, y)
        n_samples = _num_samples(X)  # n is public under replace-one neighbours
        # formats and lengths (public); the weights' values are checked with the domain below
        check_routed_metadata(fit_params, n_samples, "the estimator's fit", aligned=False)
        check_routed_metadata(score_params, n_samples, "the scorer")
        check_routed_metadata(split_params, n_samples, "the inner splitter")
        candidates = self._dry_run_candidates()
        # the space's values are set here (scikit-learn's error for one that does not fit)
        templates = candidate_templates(self.estimator, candidates or [{}])
        classes = resolve_classes(self.classes, self.estimator, templates)
        y = check_public_shapes(X, y, classes, self.estimator)
        fill = choose_object_fill(self.estimator, candidates[0] if candidates else {}, X, y,
                                  classes, fit_params)
        padding = make_padding(X, y, classes, fill)
        seeds = SeedPlan(self.random_state)
        public = PublicInfo(n_samples, classes, padding)
        plan = self._plan_tuning(public, seeds)
        self._check_split_params(split_params, public)
        plan.split_params, plan.score_params = split_params, score_params
        # the dry run's shares go to the workers; this process does the rest of the public
        # work meanwhile, and the dry run's failure is still the one reported first
        with start_dry_run(self.estimator, candidates, templates, X, y, classes, fit_params,
                           _flat_scorers(plan.scorers), padding, fill,
                           scorer_params={"scoring": score_params}, n_jobs=self.n_jobs) as dry:
            try:
                # every setting of the steps in front of the first private model, for the domain
                input_templates = templates + candidate_templates(
                    self.estimator,
                    model_input_settings(self.estimator, self._model_input_space(), templates))
                check_composites_readable(input_templates, X, y, classes, fill)
                # the magnitude a private transformer followed by other steps may read (public)
                with single_threaded_blas():  # tiny synthetic fits: single-threaded BLAS
                    limits = magnitude_limits(input_templates, dry.synthetic)
                # 2. the budget, from data-independent quantities
                report = self._planned_report(n_samples)
            except Exception as exc:  # held: a failed dry run is reported first
                failed = exc
            else:
                failed = None
            with single_threaded_blas():
                domain = dry.finish()
        if failed is not None:
            raise failed
        if any(limit is not None for limit in limits):
            self._log(1, "magnitude limit on the rows a private transformer reads: "
                         f"{min(limit for limit in limits if limit is not None):g}")
        accountant = BudgetAccountant.load_default(self.accountant)
        check_budget(accountant, report.epsilon, report.delta)
        self._log(1, f"privacy budget checked: epsilon={report.epsilon:.4g}, "
                     f"delta={report.delta:.3g}")

        # 3. the declared domain (fixed message, nothing charged)
        # y's labels as the declared classes: classes_ of their dtype, whatever one row holds
        y = check_domain(X, y, classes, allow_nan=domain.allow_nan)
        check_model_input(input_templates, X, y, classes, allow_nan=domain.allow_nan,
                          fill=fill, limits=limits)
        check_weights_domain([fit_params.get("sample_weight"),
                              score_params.get("sample_weight")])

        # 4. the private region; 5. charge once, also on failure (the data was read) -- a
        # PrivacyLeakError from here included: whether a component warns may depend on the data
        debug = self.error_score == "raise"
        try:
            with self._holding_lines(hold=not debug):
                result, model = run_private(self._private_fit, plan, X, y, fit_params, seeds,
                                            padding, debug=debug)
        except BaseException:
            accountant.spend(report.epsilon, report.delta)
            raise
        accountant.spend(report.epsilon, report.delta)
        for name, value in plan.attributes.items():
            setattr(self, name, value)
        self._store_result(result)
        if model is not None:
            self.best_estimator_ = strip_nonprivate_attributes(model)
        else:  # no model this time (no runs, refit=False): not a model of an earlier fit's data
            self.__dict__.pop("best_estimator_", None)
        self._declared_classes = classes
        self.privacy_spent_ = report
        return self

    def planned_privacy(self, n_samples: int) -> PrivacyReport:
        """The ``privacy_spent_`` that ``fit`` on ``n_samples`` rows will charge, without data.

        The privacy cost of a search is data-independent: it depends on its parameters, the
        estimator's privacy parameters (maximised over the space) and the number of rows only.
        This is the figure ``fit`` checks against the accountant before reading any data and
        charges afterwards (``privacy_utility_front`` uses it to map a search's own settings).

        Parameters
        ----------
        n_samples : int
            Number of rows ``fit`` will see (public under replace-one neighbours).

        Returns
        -------
        PrivacyReport
            Total ``(epsilon, delta)`` and its components.
        """
        self._validate_params()
        self._check_sklearn_options()
        check_leak_free_configuration(self.estimator, self._search_space())
        check_private_components(self.estimator, self._search_space())
        # the fit's lock: the settled decisions are the object's, one call at a time
        with one_fit_at_a_time(), self._memo_scope():
            return self._planned_report(int(n_samples))

    def _planned_report(self, n_samples: int) -> PrivacyReport:
        components = list(self._tuning_events(n_samples))
        if self.refit:
            eps_model, delta_model = self._final_model_cost(n_samples)
            # one line per DP step of the returned model: budget modes price each candidate
            # so that it costs the model's budget (_refit_settings' total); otherwise the
            # estimator as configured
            if self._refit_sets_total:
                parts = estimator_privacy_parts(self.estimator, self._search_space(),
                                                epsilon_total=eps_model,
                                                n_classes=self._n_classes())
            else:
                parts = estimator_privacy_parts(self.estimator, self._search_space(),
                                                n_classes=self._n_classes())
            components.append(("returned model (refit on all rows)",
                               EpsilonDeltaEvent(eps_model, delta_model, "refit"), parts))
        return privacy_report(components, delta=self._target_delta())

    def _private_fit(self, plan, X, y, fit_params, seeds, padding):
        """Tuning and refit: runs inside the private region. Returns released outputs only."""
        result = self._run_tuning(plan, X, y, fit_params, seeds)
        if not self.refit:
            return result, result.best_estimator
        self._log(1, "refitting the selected candidate on all rows")
        params = self._final_model_params(result)
        est = prepare_clone(self.estimator, params,
                            seed=seeds.seed("refit") if seeds.seeded else None,
                            **self._refit_settings(plan))
        with single_threaded_blas():  # tall, narrow arrays: one thread is faster here too
            fit_on_rows(est, X, y, None, fit_params, padding=padding)
        # no refit_time_: a fitted search is shared, and its refit's duration follows the data
        # (the solver's iterations); timing is outside the guarantee (docs/privacy.md)
        return result, est

    def _target_delta(self) -> float:
        return 0.0

    def _store_result(self, result: TuningResult) -> None:
        self.best_index_ = int(result.best_index)
        self.best_params_ = dict(result.candidate_params[result.best_index])
        self.selection_fallback_ = bool(result.fallback)
        cv_results = {"params": [dict(p) for p in result.candidate_params]}
        cv_results.update(_param_arrays(result.candidate_params))
        selected = np.zeros(len(result.candidate_params), dtype=bool)
        selected[self.best_index_] = True
        cv_results["selected"] = selected
        cv_results.update(result.extra_results)
        self.cv_results_ = cv_results
        for name, value in result.attributes.items():
            setattr(self, name, value)

    # -- clone: the accountant is a shared ledger ---------------------------------------------
    def __sklearn_clone__(self):
        """``clone`` that keeps the *same* accountant object (scikit-learn's clone hook).

        ``sklearn.base.clone`` deep-copies non-estimator parameters, so without this hook every
        clone (``cross_val_score``, nested searches, ``cross_validate``) would charge a private
        copy of the user's ``BudgetAccountant`` and the user's own ledger would never see the
        spend. Pickling, like any copy, creates a new accountant object: a search unpickled
        elsewhere charges that copy (docs/privacy.md).
        """
        accountant = self.accountant
        if accountant is not None:
            self.accountant = None
        try:
            new = _clone_parametrized(self)
        finally:
            self.accountant = accountant
        new.accountant = accountant
        return new

    # -- delegation ----------------------------------------------------------------------------
    @property
    def _estimator_type(self):
        # scikit-learn < 1.6 reads the estimator type here (is_classifier, check_scoring);
        # newer versions read __sklearn_tags__ below
        return getattr(self.estimator, "_estimator_type", None)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        from sklearn.utils import get_tags

        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = sub.classifier_tags
        tags.regressor_tags = sub.regressor_tags
        tags.non_deterministic = True
        return tags

    def _check_fitted_model(self, attr):
        _check_refit(self, attr)
        check_is_fitted(self)

    def score(self, X, y=None, **params):
        """Score of the returned model on ``(X, y)`` with the search's scorer (``scorer_``).

        The score is computed on the data you pass (e.g. a public test set); it is not part
        of the private fit and costs no privacy of the training rows. With a multi-metric
        ``scoring`` it is the ``refit`` metric; without ``y`` the scorer is called as
        ``scorer(estimator, X)``. ``**params`` (e.g. ``sample_weight``) reach the scorer as
        its ``set_score_request`` asks, with metadata routing enabled only (as in
        scikit-learn).
        """
        self._check_fitted_model("score")
        _raise_for_params(params, self, "score")
        scorer = self.scorer_[self.refit] if isinstance(self.scorer_, dict) else self.scorer_
        score_params = {}
        if params:
            process_routing(self, "score", **params)  # scikit-learn's checks and errors
            score_params = self._params_for_scorer(scorer, "score", params)
        if y is None and not score_params:
            return scorer(self.best_estimator_, X)
        return scorer(self.best_estimator_, X, y, **score_params)

    @available_if(_search_estimator_has("score_samples"))
    def score_samples(self, X):
        """Call ``score_samples`` on the returned model."""
        self._check_fitted_model("score_samples")
        return self.best_estimator_.score_samples(X)

    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Call ``predict`` on the returned model."""
        self._check_fitted_model("predict")
        return self.best_estimator_.predict(X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Call ``predict_proba`` on the returned model."""
        self._check_fitted_model("predict_proba")
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Call ``predict_log_proba`` on the returned model."""
        self._check_fitted_model("predict_log_proba")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """Call ``decision_function`` on the returned model."""
        self._check_fitted_model("decision_function")
        return self.best_estimator_.decision_function(X)

    @available_if(_search_estimator_has("transform"))
    def transform(self, X):
        """Call ``transform`` on the returned model."""
        self._check_fitted_model("transform")
        return self.best_estimator_.transform(X)

    @available_if(_search_estimator_has("inverse_transform"))
    def inverse_transform(self, X):
        """Call ``inverse_transform`` on the returned model."""
        self._check_fitted_model("inverse_transform")
        return self.best_estimator_.inverse_transform(X)

    def _returned_model_attr(self, attr):
        try:
            check_is_fitted(self)
        except NotFittedError as exc:
            raise AttributeError(
                f"{type(self).__name__} object has no {attr} attribute."
            ) from exc
        _check_refit(self, attr)
        return getattr(self.best_estimator_, attr)

    @property
    def n_features_in_(self):
        """Number of features seen during ``fit`` (from the returned model)."""
        return self._returned_model_attr("n_features_in_")

    @property
    def feature_names_in_(self):
        """Feature names seen during ``fit`` (from the returned model)."""
        return self._returned_model_attr("feature_names_in_")

    @property
    def classes_(self):
        """The declared label set (public information; the returned model's ``classes_``)."""
        classes = getattr(self, "_declared_classes", None)
        if classes is not None:
            _check_refit(self, "classes_")  # as scikit-learn: no returned model, no classes_
        if classes is None:
            raise AttributeError(
                f"{type(self).__name__} has no classes_: it is not fitted, or its estimator is "
                "not a classifier.")
        return classes



def _flat_scorers(scorers: dict) -> dict:
    """The plan's scorers with a dict of scorers (multi-metric ``scorer_``) listed one by one."""
    flat = {}
    for name, scorer in scorers.items():
        if isinstance(scorer, dict):
            flat.update({f"{name}[{key!r}]": value for key, value in scorer.items()})
        else:
            flat[name] = scorer
    return flat
