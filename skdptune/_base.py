"""The base class every private search shares (the role of scikit-learn's ``BaseSearchCV``).

``BaseDPSearchCV.fit`` owns the privacy contract (docs/privacy.md) so that no search can forget
a step of it. In order:

1. **Public checks, nothing read, nothing charged.** Validate the parameters
   (``_parameter_constraints``) and the space (``_search_space``); route the fit parameters to
   the estimator, the scorer and the inner splitter (scikit-learn's metadata routing when
   enabled; scikit-learn's errors for metadata nobody requested); check the estimator's
   configuration (a diffprivlib model that would read its bounds off the data raises
   ``PrivacyLeakError``); warn when the estimator carries its own noise seed. Then the
   :class:`~skdptune.public.Preflight` checks the formats of the rows and the metadata,
   resolves the public label set of a classifier (``classes``) and builds the padding rows;
   the search makes its **plan** from that public information (``_plan_tuning``: every
   data-independent decision, its cost among them); and the preflight **dry-runs** every
   candidate on a synthetic dataset with the public format of ``X`` and ``y``
   (:func:`skdptune.public.dry_run`), so that an unknown parameter, a rejected input format or
   a broken scorer fails here with its real message. With workers, the dry run's shares are
   fitted in them while this process does the remaining public work (the magnitude limits,
   the pricing of the plan); a failed dry run is still the error reported first.
2. **Budget.** The whole cost -- tuning plus returned model -- is the plan's, from
   data-independent quantities only (:meth:`BaseDPSearchCV.planned_privacy` reads the same
   plan without data); ``accountant.check`` it.
3. **Domain.** Refuse, with a fixed message and no charge, a dataset outside the declared
   domain (a label not in ``classes``, non-finite features the estimator rejects, a negative or
   non-finite sample weight): :meth:`~skdptune.public.Preflight.check_domain`.
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

**A search** implements three hooks, in the spirit of scikit-learn's one ``_run_search``:

* ``_search_space()`` declares its candidates (a :class:`SearchSpace`: the space the returned
  model's cost is maximised over, and, where the default does not fit, the candidates of the
  dry run and the settings of the steps in front of the model);
* ``_plan_tuning(public, space)`` makes its plan, once per ``fit`` or ``planned_privacy``, from
  public information only (:class:`~skdptune.public.PublicInfo`: ``n``, the label set, the
  padding): a frozen :class:`TuningPlan` subclass that carries the tuning's cost descriptions,
  the returned model's cost, the target delta, the scorers to dry-run and the fitted
  attributes decided before the data, plus whatever its run needs;
* ``_run_tuning(plan, X, y, metadata, seeds)`` runs the private tuning inside the private
  region and returns a :class:`TuningResult` holding released information only.

What is search-specific beyond that is declared, not computed: ``_raw_scoring`` (the search's
metric names as scikit-learn scorers), ``_inner_splitter_param`` (the parameter that may hold a
user's inner splitter) and ``_scorer_takes_metadata`` (whether routed metadata may reach the
selecting scorer).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings
from abc import abstractmethod
from collections import defaultdict
from collections.abc import Mapping
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
from sklearn.utils.validation import check_is_fitted

from ._private import Progress, one_fit_at_a_time, run_private
from ._seeding import SeedPlan
from .accounting import PrivacyReport, privacy_report
from .estimators import (
    check_leak_free_configuration,
    check_private_components,
    estimator_privacy_parts,
    is_listed,
    seeded_dp_components,
    strip_nonprivate_attributes,
)
from .evaluation._fit import fit_on_rows, prepare_clone, single_threaded_blas
from .evaluation._partitions import check_inner_splitter
from .evaluation._scores import split_scoring
from .events import EpsilonDeltaEvent
from .public import (
    Preflight,
    PublicInfo,
    RoutedMetadata,
    check_budget,
    resolve_classes,
    resolve_target_range,
)

__all__ = ["BaseDPSearchCV", "SearchSpace", "TuningPlan", "TuningResult"]


@dataclass(frozen=True)
class SearchSpace:
    """A search's declaration of its candidates: public, a function of its parameters only.

    Parameters
    ----------
    space : dict or list of dicts
        The candidates as scikit-learn writes them (lists of values or distributions). The
        configuration checks run on it, and the returned model's cost is maximised over it.
    dry_run : list of dicts or None, default=None
        The candidates fitted on synthetic rows before the data is read; ``None``: every point
        of a sub-space made of lists, and ten seeded draws of any other sub-space.
    model_input : list of dicts or None, default=None
        The sub-spaces that may set the steps in front of the first private model
        (:func:`~skdptune.public.model_input_settings`); ``None``: those of ``space``.
    """

    space: dict | list
    dry_run: list | None = None
    model_input: list | None = None

    def sub_spaces(self) -> list[dict]:
        """``space`` as a list of sub-spaces."""
        return self.space if isinstance(self.space, list) else [self.space]

    def dry_run_candidates(self) -> list[dict]:
        """Candidates to try on synthetic data: a grid's points, or seeded draws (public)."""
        if self.dry_run is not None:
            return list(self.dry_run)
        candidates = []
        for sub in self.sub_spaces():
            if all(is_listed(v) for v in sub.values()):
                candidates += list(ParameterGrid(sub))
            else:
                candidates += list(ParameterSampler(sub, n_iter=10, random_state=0))
        return candidates

    def model_input_space(self) -> list[dict]:
        """The sub-spaces for :func:`~skdptune.public.model_input_settings` (public)."""
        return self.sub_spaces() if self.model_input is None else list(self.model_input)


@dataclass(frozen=True, kw_only=True)
class TuningPlan:
    """What a search decided before reading the data, from public information only.

    Made once per ``fit`` (and per ``planned_privacy``) by the search's ``_plan_tuning``; every
    step of the fit reads this one object -- the report, the budget check, the dry run, the
    run, the refit and the charge -- so they cannot disagree. Each search extends it with the
    settings its run needs (:class:`~skdptune.grid.GridPlan`,
    :class:`~skdptune.random.RandomPlan`, :class:`~skdptune.gibo.GIBOPlan`).
    """

    #: ``n``, the declared label set and the padding rows the plan was made for
    public: PublicInfo
    #: the tuning's lines of the privacy report: ``(name, event)`` or ``(name, event, parts)``
    tuning: tuple
    #: ``(epsilon, delta)`` of the returned model when ``refit=True``
    model_cost: tuple[float, float]
    #: whether the refit's DP epsilons are set so that it costs ``model_cost[0]`` (the budget
    #: modes: each candidate priced at it, its ratios kept) rather than fitted as configured
    refit_priced: bool = False
    #: the delta at which the report states the total
    delta: float = 0.0
    #: the scorers the run will call, by name: dry-run on synthetic data before any data is read
    scorers: Mapping[str, Any] = field(default_factory=dict)
    #: fitted attributes decided before the data is read (``scorer_``, the budget split ...):
    #: written on the search with the others once the fit has succeeded, so that a refused or
    #: failed fit leaves none of them behind
    attributes: Mapping[str, Any] = field(default_factory=dict)
    #: data-independent warnings ``fit`` gives about the plan (not ``planned_privacy``)
    warnings: tuple[Warning, ...] = ()
    #: rows of the sample a user's inner splitter splits (a partition), for its trial on
    #: synthetic rows before the data is read; ``None``: no inner splitter
    inner_split_rows: int | None = None


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
    def _search_space(self) -> SearchSpace:
        """The declaration of the candidates (public), checked with scikit-learn's messages."""

    @abstractmethod
    def _plan_tuning(self, public: PublicInfo, space: SearchSpace) -> TuningPlan:
        """The plan, from the parameters, ``space`` and ``public`` only: the tuning's cost
        descriptions, the returned model's cost, the scorers, the settings of the run.

        Also called by :meth:`planned_privacy`, without data: ``public.padding`` is then
        ``None`` and ``public.classes`` the declared label set (``None`` when none is).
        Must not warn (warnings go in ``TuningPlan.warnings``) and must draw no randomness
        (the run draws from its seeds)."""

    @abstractmethod
    def _run_tuning(self, plan: TuningPlan, X, y, metadata: RoutedMetadata,
                    seeds: SeedPlan) -> TuningResult:
        """Run the private tuning. Must return released information only."""

    #: maps a search's own metric names to scikit-learn scorer names (``scorer_``, routing);
    #: ``None``: they are scikit-learn's names
    _raw_scoring = None

    #: the parameter that may hold a user's inner splitter (metadata routing sends it
    #: ``groups``); ``None``: the search has none
    _inner_splitter_param: str | None = None

    #: whether metadata routed to the scorer (``set_score_request``) may reach the selecting
    #: scorer: only where the utilities stay bounded whatever it is (DPGridSearchCV)
    _scorer_takes_metadata = False

    def _classes_from_params(self) -> np.ndarray | None:
        """The declared label set as the parameters give it (public); ``None`` when none is
        declared yet (a classifier whose ``fit`` would ask for it) or for a non-classifier."""
        try:
            return resolve_classes(self.classes, self.estimator)
        except ValueError:
            return None

    def _target_range_from_params(self) -> tuple[float, float] | None:
        """A regressor's declared target range as the parameters give it (public); ``None``
        when none is declared yet (``fit`` would ask for it) or for a non-regressor."""
        try:
            return resolve_target_range(self.estimator)
        except ValueError:
            return None

    def _n_classes(self) -> int | None:
        """The size of the declared label set (public), on which the cost of diffprivlib's
        ``LogisticRegression`` depends; ``None`` (every count) when none is declared yet."""
        classes = self._classes_from_params()
        return None if classes is None else len(classes)

    def _final_model_params(self, result: TuningResult) -> dict:
        return result.candidate_params[result.best_index]

    def _refit_settings(self, plan: TuningPlan) -> dict:
        """How to set the DP epsilons of the refitted model: keyword arguments of
        :func:`skdptune.evaluation._fit.instantiate` (``{}``: as configured)."""
        if not plan.refit_priced:
            return {}
        return {"epsilon_total": plan.model_cost[0], "n_classes": self._n_classes()}

    # -- helpers -------------------------------------------------------------------------------
    def _log(self, level: int, message: str, live: bool = False) -> None:
        """Print public progress information (never a score) when ``verbose >= level``; inside
        the private region, hold it until the region succeeds (:meth:`_holding_lines`).

        ``live``: print at once even there -- only for a line of public text that the tuning
        prints first, before any step that reads the data, so that every fit reaching the
        region prints it, whether it fails or not (announcing what :meth:`_progress` counts).
        """
        if self.verbose >= level:
            line = f"[{type(self).__name__}] {message}"
            if self._held_lines is not None and not live:
                self._held_lines.append(line)
            else:
                print(line, flush=True)

    def _progress(self, what: str) -> Progress | None:
        """Live progress over a public count, printed at once when ``verbose >= 2`` (``None``
        below): ``[Search] <what>: <done>/<total>``.

        Unlike :meth:`_log`'s lines, these are not held: the search reports the same
        sequence on every dataset of a size -- tasks and iterations fixed before the data is
        read, in their order, and a failure reported only after the last one
        (docs/privacy.md, "What is released"). Only a stop in the middle (a
        ``PrivacyLeakError``, Ctrl-C) ends it early, at the point its running time shows.
        """
        if self.verbose < 2:
            return None
        prefix = f"[{type(self).__name__}] {what}:"

        def report(done: int, total: int) -> None:
            print(f"{prefix} {done}/{total}", flush=True)

        return report

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
        """Refuse metadata routed to the scorer (before any data is read; nothing charged),
        unless the search declares that its scorer takes it (``_scorer_takes_metadata``).

        DPGridSearchCV's partition utilities may be weighted. Elsewhere the validation score
        is a mean over the validation rows with noise calibrated to one row's share of it
        (``1/m``): with weights, one record's weight can move a weighted mean by up to the
        whole range, so no sensitivity below the range exists without a public bound on the
        weights (and on their total).
        """
        if score_params and not self._scorer_takes_metadata:
            raise ValueError(
                f"{type(self).__name__} cannot pass {sorted(score_params)} to its scorer: its "
                "noisy validation score is a mean over the validation rows, and a weighted (or "
                "metadata-dependent) mean has no bounded sensitivity without a public bound on "
                "the weights -- one record's weight can move it by up to the whole range. Use "
                "DPGridSearchCV, whose partition utilities may be weighted (each stays in "
                "[0, 1]), or an unweighted scorer (e.g. set_score_request(sample_weight="
                "False)); the estimator's fit can still receive sample_weight "
                "(set_fit_request(sample_weight=True)). Nothing was charged.")

    def _selection_scoring(self):
        """The ``scoring`` of the metric that selects (the refit metric of a multi-metric
        ``scoring``); see :func:`skdptune.evaluation._scores.split_scoring`."""
        return split_scoring(self.scoring, self.refit)[0]

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
        if self._inner_splitter_param is None:
            return None
        splitter = getattr(self, self._inner_splitter_param)
        return splitter if hasattr(splitter, "split") else None

    def _check_split_params(self, split_params: dict, plan: TuningPlan) -> None:
        """Check the splitter metadata (``groups``) before any data is read; nothing charged.

        A user's inner splitter is tried on a synthetic sample of ``plan.inner_split_rows``
        rows (public: sizes, labels, which metadata was given; the values are not read), so
        that one that cannot work -- a group splitter without ``groups`` -- fails here with its
        own message. Without one, metadata for a splitter is refused: nothing could use it.
        """
        splitter = self._inner_splitter()
        if splitter is not None:
            # groups go to a user's inner splitter, inside each partition (sensitivity
            # unchanged)
            check_inner_splitter(splitter, plan.inner_split_rows, plan.public.classes,
                                 split_params)
            return
        if not split_params:
            return
        name = self._inner_splitter_param
        if name is not None:
            raise ValueError(
                f"groups is used by the inner splitter only, and {name}="
                f"{getattr(self, name)!r} splits without groups. Pass a group splitter, e.g. "
                f"{name}=GroupKFold(n_splits=3), or drop groups.")
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
        with one_fit_at_a_time(), config_context(assume_finite=False):
            return self._fit(X, y, **fit_params)

    def _fit(self, X, y=None, **fit_params):
        # 1. public checks: nothing is read, nothing is charged
        self._check_error_score()
        self._check_sklearn_options()
        space = self._search_space()  # checked with scikit-learn's own messages
        # scikit-learn's routing: the estimator's fit, the selecting scorer, the inner splitter
        metadata = RoutedMetadata(*self._route_fit_params(fit_params))
        check_leak_free_configuration(self.estimator, space.space)
        check_private_components(self.estimator, space.space)
        self._warn_seeded_estimator()
        # the rows' format, the metadata's, the declared classes, the padding (public)
        preflight = Preflight(self.estimator, self.classes, space, X, y, metadata)
        seeds = SeedPlan(self.random_state)
        plan = self._plan_tuning(preflight.public, space)
        for warning in plan.warnings:  # data-independent: about the plan
            warnings.warn(warning, stacklevel=4)
        self._check_split_params(metadata.split, plan)
        # the dry run; beside it (its shares in the workers) the checks of the model input,
        # the magnitude limits and 2. the budget, from the plan's data-independent costs. The
        # dry run's failure is still the one reported first
        report = preflight.dry_run(plan.scorers, lambda: self._planned_report(plan, space),
                                   n_jobs=self.n_jobs)
        if preflight.magnitude_limit is not None:
            self._log(1, "magnitude limit on the rows a private transformer reads: "
                         f"{preflight.magnitude_limit:g}")
        accountant = BudgetAccountant.load_default(self.accountant)
        check_budget(accountant, report.epsilon, report.delta)
        self._log(1, f"privacy budget checked: epsilon={report.epsilon:.4g}, "
                     f"delta={report.delta:.3g}")

        # 3. the declared domain (fixed message, nothing charged); y's labels become the
        # declared classes: classes_ of their dtype, whatever one row holds
        preflight.check_domain()

        # 4. the private region; 5. charge once, also on failure (the data was read) -- a
        # PrivacyLeakError from here included: whether a component warns may depend on the data
        debug = self.error_score == "raise"
        try:
            with self._holding_lines(hold=not debug):
                result, model = run_private(self._private_fit, plan, preflight.X, preflight.y,
                                            metadata, seeds, debug=debug)
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
        self._declared_classes = preflight.public.classes
        self.privacy_spent_ = report
        return self

    def planned_privacy(self, n_samples: int) -> PrivacyReport:
        """The ``privacy_spent_`` that ``fit`` on ``n_samples`` rows will charge, without data.

        The privacy cost of a search is data-independent: it depends on its parameters, the
        estimator's privacy parameters (maximised over the space) and the number of rows only.
        This is the figure ``fit`` checks against the accountant before reading any data and
        charges afterwards (``privacy_utility_front`` uses it to map a search's own settings):
        the report of the plan ``fit`` makes, made here for ``n_samples`` rows and the declared
        label set.

        Parameters
        ----------
        n_samples : int
            Number of rows ``fit`` will see (public under replace-one neighbours).

        Returns
        -------
        PrivacyReport
            Total ``(epsilon, delta)`` and its components.

        Raises
        ------
        ValueError
            For a configuration that ``fit`` refuses before reading any data when it checks
            the parameters, the space or the estimator, or makes its plan (e.g. a scoring the
            search cannot bound, too few rows for the partitions or the validation part).
        """
        self._validate_params()
        self._check_sklearn_options()
        space = self._search_space()
        check_leak_free_configuration(self.estimator, space.space)
        check_private_components(self.estimator, space.space)
        # the fit's lock: one plan at a time, as in fit
        with one_fit_at_a_time():
            public = PublicInfo(int(n_samples), self._classes_from_params(), None,
                                self._target_range_from_params())
            return self._planned_report(self._plan_tuning(public, space), space)

    def _planned_report(self, plan: TuningPlan, space: SearchSpace) -> PrivacyReport:
        """The plan's privacy report: its tuning lines, and the returned model's (refit)."""
        components = list(plan.tuning)
        if self.refit:
            eps_model, delta_model = plan.model_cost
            # one line per DP step of the returned model: budget modes price each candidate
            # so that it costs the model's budget (the refit's settings); otherwise the
            # estimator as configured
            priced = {"epsilon_total": eps_model} if plan.refit_priced else {}
            parts = estimator_privacy_parts(self.estimator, space.space,
                                            n_classes=self._n_classes(), **priced)
            components.append(("returned model (refit on all rows)",
                               EpsilonDeltaEvent(eps_model, delta_model, "refit"), parts))
        return privacy_report(components, delta=plan.delta)

    def _private_fit(self, plan, X, y, metadata, seeds):
        """Tuning and refit: runs inside the private region. Returns released outputs only."""
        result = self._run_tuning(plan, X, y, metadata, seeds)
        if not self.refit:
            return result, result.best_estimator
        self._log(1, "refitting the selected candidate on all rows")
        params = self._final_model_params(result)
        est = prepare_clone(self.estimator, params,
                            seed=seeds.seed("refit") if seeds.seeded else None,
                            **self._refit_settings(plan))
        with single_threaded_blas():  # tall, narrow arrays: one thread is faster here too
            fit_on_rows(est, X, y, None, metadata.fit, padding=plan.public.padding)
        # no refit_time_: a fitted search is shared, and its refit's duration follows the data
        # (the solver's iterations); timing is outside the guarantee (docs/privacy.md)
        return result, est

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
