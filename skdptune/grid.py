"""DPGridSearchCV: private grid search by subsample-and-aggregate and a private selector."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sklearn.model_selection import ParameterGrid
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from ._base import BaseDPSearchCV, SearchSpace, TuningPlan, TuningResult
from .estimators import estimator_privacy, space_sets_epsilon
from .evaluation._partitions import PartitionEvaluator, auto_n_partitions
from .evaluation._scores import check_bounded_scorer
from .exceptions import TooFewRowsWarning
from .selection import DoublingSVT, PermuteAndFlipSelector
from .selection._base import can_beat_random_pick, random_pick_loss
from .selection._permute_and_flip import selection_error_bound

#: ``tuning_share="auto"``: spend on the selection what it needs to lose at most
#: ``_SHARE_TOLERANCE`` utility with probability ``1 - _SHARE_BETA``, within these limits
_SHARE_TOLERANCE, _SHARE_BETA, _SHARE_LIMITS = 0.01, 0.05, (0.1, 0.5)

__all__ = ["DPGridSearchCV"]


class DPGridSearchCV(BaseDPSearchCV):
    """Differentially private exhaustive search over a parameter grid.

    The private counterpart of :class:`sklearn.model_selection.GridSearchCV`. The rows are
    split into ``k`` disjoint partitions (data-independent); every candidate is fitted and
    validated inside each partition, and its utility is the mean over partitions (sensitivity
    ``1/k`` under replace-one neighbours). A private selector picks one candidate from these
    utilities -- permute-and-flip (default) or the doubling-step sparse vector technique of
    Ding et al. -- and the selected candidate is refitted on all rows.

    The whole ``fit`` -- tuning plus the returned model -- is differentially private with the
    data-independent ``privacy_spent_`` = ``epsilon``, charged once to ``accountant``: a share
    ``tuning_share`` of it pays for the selection, the rest for the returned model, whose DP
    epsilons are set so that it costs exactly that, whichever candidate is selected.
    Inner partition fits are never released, so their privacy parameters (``inner_epsilon``)
    do not enter the bound. See ``docs/selection.md`` and ``docs/accounting.md`` for the
    proofs.

    Parameters
    ----------
    estimator : estimator object
        A diffprivlib model, or a ``Pipeline`` of diffprivlib models and data-independent
        transformers (see :func:`skdptune.estimator_privacy`). Each candidate's DP epsilons
        are set so that the returned model costs the model's share of the budget
        (``privacy_split_["epsilon_model"]``): their ratios are kept.
    param_grid : dict or list of dicts
        As in ``GridSearchCV``; nested names such as ``clf__C`` are allowed. A DP
        ``epsilon`` cannot be searched (the budget sets it).
    epsilon : float, default=2.0
        Total privacy budget of ``fit``: the selection plus the returned model, as in every
        skdptune search. (Before 0.1 it was the selection's budget alone; the same run is now
        ``epsilon=eps_tuning + eps_model, tuning_share=eps_tuning / (eps_tuning + eps_model)``.)
    tuning_share : "auto" or float in (0, 1), default="auto"
        Share of ``epsilon`` spent on the selection when ``refit=True`` (with ``refit=False``
        it gets all of it). ``"auto"`` spends what permute-and-flip needs to lose at most 0.01
        utility with probability 0.95, ``2 ln(20 n_candidates) / (0.01 k)`` with ``k`` the
        number of partitions, as a share of ``epsilon`` clipped to [0.1, 0.5]: a function of
        ``n``, the grid size and ``epsilon`` only (see docs/grid_search.md).
    selection : {"permute_and_flip", "svt"}, default="permute_and_flip"
        Private selector. ``"svt"`` is the doubling-step sparse vector technique of Ding, Wu,
        Xu & Pan, "Constant-overhead DP hyperparameter tuning" (Algorithm 1), with the
        ``u >= 1`` guard of Ding & Wu, "Revisiting hyperparameter tuning with differential
        privacy", accounted soundly as
        ``N*eps0 + (N+1)*eps0/2`` with ``N = ceil((1 - utility_floor) / granularity)``.
    n_partitions : "auto" or int, default="auto"
        Number ``k`` of disjoint partitions. ``"auto"`` is ``n_samples // min_partition_size``.
    min_partition_size : int, default=100
        Smallest allowed partition; a ``ValueError`` is raised when partitions would be smaller.
    granularity : float, default=0.01
        SVT threshold step ``g`` on the [0, 1] utility scale (``selection="svt"`` only; the
        best of the values calibrated on Adult, see docs/calibration.md).
    utility_floor : float, default=0.5
        SVT starting threshold ``u0`` (``selection="svt"`` only).
    svt_order : {"fixed", "shuffle"}, default="fixed"
        Order in which the SVT queries candidates each round: Ding et al.'s fixed order, or a
        fresh data-independent random permutation per round.
    inner_epsilon : {"same", "scaled"} or float, default="scaled"
        Privacy parameter of the partition fits (never released, so it does not enter the
        bound): the estimator's own epsilons (``"same"``), epsilons scaled by
        ``n / partition_train_size`` so that each partition model has the noise level of the
        final model (``"scaled"``, the default: on Adult it beat ``"same"`` by 3-10 accuracy
        points, see docs/calibration.md), or a total epsilon (``float("inf")`` for
        non-private partition fits).
    inner_params : {"scaled", "same"}, default="scaled"
        Parameters of the partition fits whose meaning depends on the number of rows --
        diffprivlib ``LogisticRegression``'s ``C`` weighs a *sum* of losses, so its ridge
        strength is ``1 / (C n)`` -- are multiplied by ``n / partition_train_size`` so that
        every partition model is regularised like the returned model (``"scaled"``), or kept
        (``"same"``). With both ``"scaled"`` (the defaults), diffprivlib's
        ``LogisticRegression`` -- alone, or after data-independent pipeline steps, which
        transform each fit's rows as its own ``Pipeline.fit`` does -- is fitted on each
        partition as the returned model in miniature, exactly: the returned model's noise,
        ridge and regime of diffprivlib's objective perturbation, with the partition's rows
        for the empirical risk
        (docs/grid_search.md). Partition fits are never released: no privacy effect.
    scoring : str, callable, list, tuple, dict or None, default=None
        Scorer; ``None`` uses the estimator's ``score`` (accuracy or r2). Several metrics (a
        list of names or a dict of scorers) select by the one named in ``refit``; only that
        one is computed on the private data (docs/sklearn_differences.md). With metadata
        routing enabled, a scorer that requests ``sample_weight`` (``set_score_request``)
        gets the weights of each partition's validation rows: every partition utility stays
        in [0, 1], so the sensitivity stays ``1/k`` (docs/grid_search.md).
    score_bounds : tuple (lo, hi) or None, default=None
        Range of the scorer, mapped to the [0, 1] utility scale. Required for scorers without
        a known range.
    cv : float, int or CV splitter, default=0.25
        Inner validation *inside each partition*: a float is a holdout fraction, an int a
        shuffled K-fold (never stratified: stratifying reads the labels, and warns or fails
        depending on the class counts of a partition), a splitter is used as given.
    classes : array-like or None, default=None
        The label set of a classifier: public information (docs/privacy.md). Required for
        classifiers unless the estimator declares it (diffprivlib's ``classes`` parameter).
        Every fit gets one public padding row per class, so no fit can fail for lack of a
        class and the returned model's ``classes_`` is this set whatever the data.
    refit : bool or str, default=True
        Refit the selected candidate on all rows (its privacy cost is included). With several
        metrics in ``scoring``, the name of the selecting metric. A callable is refused: it
        would read exact scores.
    n_jobs : int, default=None
        Parallel jobs for the (candidate, partition) fits. Results do not depend on it.
    pre_dispatch : int or str, default="2*n_jobs"
        As in ``GridSearchCV``.
    verbose : int, default=0
        ``1``: phases and counts known before the data is read, and the selected candidate
        (never a score, never a time; docs/privacy.md). ``2``: also a live progress line per
        finished joblib task of partition fits (a count only).
    random_state : None, int or RandomState, default=None
        ``None`` draws all noise from a secure generator. An int makes the search reproducible
        (for testing and teaching; do not use seeded noise in production).
    error_score : "raise" or float, default=0.0
        Utility in [0, 1] of a failed partition fit (a value like any other in the
        subsample-and-aggregate mean). ``"raise"`` voids the guarantee (debugging only).
    accountant : diffprivlib.BudgetAccountant or None, default=None
        Charged once per ``fit`` with ``privacy_spent_``; ``None`` uses diffprivlib's default
        accountant. Clones share it (``cross_val_score`` charges it once per fold).
    return_train_score : bool, default=False
        As in ``GridSearchCV``; ``True`` is refused (train scores are exact scores of the
        private data).

    Attributes
    ----------
    best_params_ : dict
        Selected parameters (released by the private selector).
    best_index_ : int
        Index of the selected candidate in ``cv_results_["params"]``.
    best_estimator_ : estimator
        Selected candidate refitted on all rows (``refit=True``).
    cv_results_ : dict of arrays
        Released information only: ``params``, ``param_<name>`` and ``selected``. No candidate
        score is stored: exact scores are private, and only the selection is released.
    selection_trace_ : tuple of dict
        SVT rounds (``round``, ``threshold_base``, ``step``, ``outcome``, ``selected``); empty
        for permute-and-flip.
    selection_fallback_ : bool
        True when the SVT selected nothing and the first candidate (a data-independent
        fallback) was returned.
    n_partitions_ : int
        Number of partitions used.
    sensitivity_ : float
        Replace-one sensitivity of each aggregated utility, ``1 / n_partitions_``.
    privacy_split_ : dict
        ``tuning_share``, ``epsilon_tuning`` and ``epsilon_model``: how ``epsilon`` was split.
    privacy_spent_ : PrivacyReport
        Total (epsilon, delta) of the fit and its components.
    classes_ : ndarray
        The declared label set (classifiers).
    scorer_ : callable
        The scorer (raw scale) used by :meth:`score`.

    Warns
    -----
    TooFewRowsWarning
        Once per ``fit``, before the data is read, when the selection cannot be expected to
        beat a uniformly random pick of a candidate: permute-and-flip's bound on its expected
        loss, ``2 (ln n_candidates + 1) / (n_partitions * epsilon_tuning)``, reaches
        ``1 - 1 / n_candidates`` (with ``selection="svt"``: one round's expected error). A
        function of ``n``, the grid size and the budget (docs/grid_search.md).

    See Also
    --------
    sklearn.model_selection.GridSearchCV : the non-private search it replaces.
    DPRandomSearchCV : private random search by randomized repetition.

    Examples
    --------
    >>> from skdptune import DPGridSearchCV
    >>> from diffprivlib.models import GaussianNB
    >>> from sklearn.datasets import make_classification
    >>> from diffprivlib import BudgetAccountant
    >>> X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    >>> search = DPGridSearchCV(
    ...     GaussianNB(bounds=(-6.0, 6.0)),
    ...     {"var_smoothing": [1e-9, 1e-3, 1e-1]},
    ...     epsilon=2.0, classes=[0, 1], random_state=0, accountant=BudgetAccountant(),
    ... ).fit(X, y)
    >>> round(search.privacy_spent_.epsilon, 9)
    2.0
    >>> search.privacy_split_["tuning_share"]
    0.5
    >>> sorted(search.cv_results_)[:2]
    ['param_var_smoothing', 'params']
    """

    _parameter_constraints: dict = {
        **BaseDPSearchCV._parameter_constraints,
        "param_grid": [dict, list],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "tuning_share": [StrOptions({"auto"}), Interval(numbers.Real, 0, 1, closed="neither")],
        "selection": [StrOptions({"permute_and_flip", "svt"})],
        "n_partitions": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "min_partition_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "granularity": [Interval(numbers.Real, 0, 1, closed="right")],
        "utility_floor": [Interval(numbers.Real, 0, 1, closed="left")],
        "svt_order": [StrOptions({"fixed", "shuffle"})],
        "inner_epsilon": [StrOptions({"same", "scaled"}),
                          Interval(numbers.Real, 0, None, closed="right")],
        "inner_params": [StrOptions({"scaled", "same"})],
        "scoring": [str, callable, list, tuple, dict, None],
        "score_bounds": [tuple, list, None],
        "cv": [Interval(numbers.Real, 0, 1, closed="neither"),
               Interval(numbers.Integral, 2, None, closed="left"),
               HasMethods(["split"])],
        "pre_dispatch": [numbers.Integral, str],
    }

    def __init__(self, estimator, param_grid, *, epsilon=2.0, tuning_share="auto",
                 selection="permute_and_flip", n_partitions="auto", min_partition_size=100,
                 granularity=0.01, utility_floor=0.5, svt_order="fixed", inner_epsilon="scaled",
                 inner_params="scaled", scoring=None, score_bounds=None, cv=0.25, classes=None,
                 refit=True, n_jobs=None,
                 pre_dispatch="2*n_jobs", verbose=0, random_state=None, error_score=0.0,
                 accountant=None, return_train_score=False):
        super().__init__(estimator, classes=classes, refit=refit, n_jobs=n_jobs,
                         verbose=verbose, random_state=random_state, error_score=error_score,
                         accountant=accountant, return_train_score=return_train_score)
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.tuning_share = tuning_share
        self.selection = selection
        self.n_partitions = n_partitions
        self.min_partition_size = min_partition_size
        self.granularity = granularity
        self.utility_floor = utility_floor
        self.svt_order = svt_order
        self.inner_epsilon = inner_epsilon
        self.inner_params = inner_params
        self.scoring = scoring
        self.score_bounds = score_bounds
        self.cv = cv
        self.pre_dispatch = pre_dispatch

    # a user's splitter as cv gets the metadata routed to a splitter (``groups``), inside each
    # partition: the sensitivity is unchanged
    _inner_splitter_param = "cv"

    # Metadata for the scorer is accepted: weighted partition utilities stay private.
    # Privacy (replace-one; a record is its features, label *and* weight): partition ``i``'s
    # utility is the selecting scorer's value on partition ``i``'s validation rows with *their*
    # weights (and other row-aligned metadata) only, clipped to [0, 1] whatever the weights
    # are. Replacing one record -- features, label and weight -- changes one partition's term
    # by at most 1, hence the aggregate by at most ``1/k``: the sensitivity of the unweighted
    # search, with no bound on the weights. The weights are checked (finite, non-negative, one
    # per row) before any private computation; a partition whose weighted score fails (e.g. all
    # its validation weights are 0) gets ``error_score`` like any failure. The weights reach
    # the estimator's fit only if it requests them (``set_fit_request``), never because the
    # scorer does.
    _scorer_takes_metadata = True

    def _search_space(self):
        ParameterGrid(self.param_grid)  # scikit-learn's checks and messages
        return SearchSpace(self.param_grid)

    def _resolve_n_partitions(self, n_samples: int) -> int:
        if self.n_partitions == "auto":
            k = auto_n_partitions(n_samples, self.min_partition_size)
        else:
            k = int(self.n_partitions)
        if k < 1 or n_samples // k < self.min_partition_size:
            raise ValueError(
                f"n_samples={n_samples} rows cannot be split into {max(k, 1)} partitions of "
                f"at least min_partition_size={self.min_partition_size} rows. Lower "
                "n_partitions or min_partition_size, or use more data."
            )
        return k

    def _n_candidates(self) -> int:
        return len(ParameterGrid(self.param_grid))

    def _auto_share(self, n_samples: int) -> float:
        """``tuning_share="auto"``: a function of ``n``, the grid size and ``epsilon`` only."""
        k = self._resolve_n_partitions(n_samples)
        # the bound 2 D ln(|S| / beta) / eps is symmetric in eps and the loss: the epsilon
        # that makes the loss _SHARE_TOLERANCE is the bound evaluated at eps = tolerance
        needed = selection_error_bound(self._n_candidates(), 1.0 / k, _SHARE_TOLERANCE,
                                       _SHARE_BETA)
        low, high = _SHARE_LIMITS
        return min(high, max(low, needed / float(self.epsilon)))

    def _budget(self, n_samples: int) -> _Budget:
        """How ``epsilon`` is split: data-independent (parameters, estimator, ``n``)."""
        total = float(self.epsilon)
        if not self.refit:  # no model is returned: the selection gets everything
            return _Budget(tuning_share=1.0, epsilon_tuning=total, epsilon_model=0.0,
                           delta_model=0.0, model_settings={"epsilon_scale": 1.0})
        if space_sets_epsilon(self.param_grid):
            raise ValueError(
                "epsilon is the total budget and sets the estimator's DP epsilons, but "
                "param_grid searches an epsilon itself; remove epsilon from param_grid (to "
                "compare budgets, use skdptune.privacy_utility_front).")
        share = (self._auto_share(n_samples) if self.tuning_share == "auto"
                 else float(self.tuning_share))
        n_classes = self._n_classes()
        base, delta_model = estimator_privacy(self.estimator, self.param_grid,
                                              n_classes=n_classes)
        if base <= 0:
            raise ValueError(
                "The estimator has no diffprivlib component with a positive epsilon, so "
                "epsilon cannot be split between the selection and the returned model; use a "
                "diffprivlib model.")
        # each candidate is priced at the model's share (set_total_epsilon, its ratios kept):
        # a LogisticRegression's cost is not linear in its epsilon and differs with C and
        # data_norm, so one factor on every candidate would be set by the dearest
        model = (1.0 - share) * total
        return _Budget(tuning_share=share, epsilon_tuning=total - model, epsilon_model=model,
                       delta_model=delta_model,
                       model_settings={"epsilon_total": model, "n_classes": n_classes})

    def _make_selector(self, epsilon: float, sensitivity: float, seed):
        if self.selection == "svt":
            return DoublingSVT(epsilon, sensitivity=sensitivity,
                               granularity=self.granularity, utility_floor=self.utility_floor,
                               order=self.svt_order, random_state=seed)
        return PermuteAndFlipSelector(epsilon, sensitivity=sensitivity, random_state=seed)

    def _too_few_rows(self, n_samples: int, n_candidates: int, k: int,
                      selector) -> tuple[Warning, ...]:
        """Data-independent warning: the selector's noise (``selection_noise``: for
        permute-and-flip a bound on its expected loss, ``2 (ln |S| + 1) / (k eps)``) is at
        least what a uniformly random pick of a candidate can lose. A function of ``n``, the
        grid size and the budget only."""
        noise = selector.selection_noise(n_candidates)
        if can_beat_random_pick(noise, n_candidates):
            return ()
        if self.selection == "svt":
            figure = (f"one round of the sparse vector technique (per-round epsilon "
                      f"{selector.epsilon_round:.3g}) misjudges the utilities by {noise:.2f} "
                      "in expectation")
            advice = "selection='permute_and_flip' (the default), "
        else:
            figure = (f"permute-and-flip's selection can land {noise:.2f} below the best in "
                      "expectation (2 (ln n_candidates + 1) / (n_partitions x epsilon))")
            advice = ""
        return (TooFewRowsWarning(
            f"DPGridSearchCV cannot be expected to beat a random pick of a candidate on "
            f"n_samples={n_samples} rows: with {k} partition(s), {n_candidates} candidates and "
            f"a selection epsilon of {selector.epsilon:.3g}, {figure}, at least what a random "
            f"pick can lose ({random_pick_loss(n_candidates):.2f} on the [0, 1] utility "
            f"scale). Use {advice}more rows (more partitions), fewer candidates, a larger "
            "epsilon or tuning_share, or DPRandomSearchCV, whose runs read every row "
            "(docs/grid_search.md, 'Too few rows')."),)

    def _plan_tuning(self, public, space):
        candidates = list(ParameterGrid(space.space))
        k = self._resolve_n_partitions(public.n_samples)
        budget = self._budget(public.n_samples)
        selector = self._make_selector(budget.epsilon_tuning, 1.0 / k, None)
        public_scorer = self._public_scorer()
        scorer = check_bounded_scorer(self._selection_scoring(), self.score_bounds,
                                      self.estimator, public.target_range)
        event = selector.privacy_event()
        return GridPlan(
            public=public,
            tuning=((f"tuning: {event.name}", event),),
            model_cost=(budget.epsilon_model, budget.delta_model),
            # each candidate priced at the model's share, as in the partition fits
            refit_priced=True,
            scorers={"scoring": scorer, "scorer_ (used by score)": public_scorer},
            attributes={"scorer_": public_scorer,
                        "privacy_split_": {"tuning_share": budget.tuning_share,
                                           "epsilon_tuning": budget.epsilon_tuning,
                                           "epsilon_model": budget.epsilon_model}},
            warnings=self._too_few_rows(public.n_samples, len(candidates), k, selector),
            inner_split_rows=public.n_samples // k,
            candidates=tuple(candidates), n_partitions=k,
            epsilon_tuning=budget.epsilon_tuning, model_settings=budget.model_settings,
            scorer=scorer,
        )

    def _run_tuning(self, plan, X, y, metadata, seeds):
        candidates = list(plan.candidates)
        evaluator = PartitionEvaluator(
            self.estimator, plan.scorer, n_partitions=plan.n_partitions, cv=self.cv,
            inner_epsilon=self.inner_epsilon, inner_params=self.inner_params,
            epsilons=plan.model_settings, n_jobs=self.n_jobs,
            pre_dispatch=self.pre_dispatch, error_score=self.error_score, seeds=seeds,
            padding=plan.public.padding,
        )
        selector = self._make_selector(plan.epsilon_tuning, evaluator.sensitivity,
                                       seeds.noise_seed("selection"))
        self._log(1, f"fitting {len(candidates)} candidates x {evaluator.n_partitions} "
                     f"partitions = {len(candidates) * evaluator.n_partitions} fits", live=True)
        # exact utilities: private, handed straight to the selector and never kept
        selection = selector.select(evaluator.evaluate(
            X, y, candidates, metadata.fit, split_params=metadata.split,
            score_params=metadata.score, progress=self._progress("fit tasks done")))
        self._log(1, f"selected candidate {selection.index} by {self.selection}"
                     + (" (fallback: nothing selected)" if selection.fallback else ""))
        attributes = {
            "n_partitions_": evaluator.n_partitions,
            "sensitivity_": evaluator.sensitivity,
            "selection_trace_": selection.trace,
        }
        if self.selection == "svt":
            attributes["epsilon_round_"] = selector.epsilon_round
        return TuningResult(candidate_params=candidates, best_index=selection.index,
                            fallback=selection.fallback, attributes=attributes)


@dataclass(frozen=True)
class _Budget:
    """How ``epsilon`` is split between the selection and the returned model."""

    tuning_share: float
    epsilon_tuning: float
    epsilon_model: float
    delta_model: float
    #: how the partition fits' DP epsilons are set (``PartitionEvaluator``'s ``epsilons``)
    model_settings: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class GridPlan(TuningPlan):
    """DPGridSearchCV's plan: the grid, the partitions and the selection's budget."""

    #: the grid's points, in ``ParameterGrid`` order (``cv_results_["params"]``)
    candidates: tuple[dict, ...]
    n_partitions: int
    epsilon_tuning: float
    #: how every partition fit's DP epsilons are set (the model's share, or as configured)
    model_settings: Mapping[str, Any]
    #: the selecting scorer, on the bounded [0, 1] utility scale
    scorer: Any
