"""DPRandomSearchCV: private random search by randomized repetition (Papernot & Steinke)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseDPSearchCV, SearchSpace, TuningPlan, TuningResult
from .accounting import PrivacyComponent, event_cost
from .estimators import estimator_privacy, is_listed, space_sets_epsilon
from .evaluation._holdout import (
    HoldoutEvaluator,
    holdout_sizes,
    holdout_split,
    runs_batched,
)
from .evaluation._scores import check_validation_score, raw_scorer_name
from .events import PrivacyEvent
from .exceptions import TooFewRowsWarning
from .selection._base import can_beat_random_pick, random_pick_loss
from .selection._repetition import RandomizedRepetition

__all__ = ["DPRandomSearchCV"]

#: ``n_iter=None``: ``E[K]`` under the truncated negative binomial laws, whose cost does not
#: depend on it -- more runs buy accuracy with time only (docs/random_search.md section 3) --:
#: as many fits as scikit-learn's ``RandomizedSearchCV`` with its defaults (10 x 5 folds) ...
DEFAULT_N_ITER = 50
#: ... or, when the runs are fitted together (batched: a diffprivlib ``LogisticRegression``,
#: or skdptune's ``SSPRegressor``),
#: 1000: on the benchmark suite (sound pricing, 10 seeds) it closed >= 80 % of the gap to
#: non-private tuning in as many goal cells as 2000 (8 of 8 on five tasks; 500: 6 of the 8 on
#: three), 0.001 below it pooled, in half its time (docs/benchmark_suite.md) ...
DEFAULT_N_ITER_BATCHED = 1000
#: ... and scikit-learn's 10 under ``"poisson"`` and ``"fixed"``, whose cost grows with it
DEFAULT_N_ITER_COMPOSED = 10
#: ``validation_size=None``: no validation part where the estimator and the space allow batched
#: runs (every run fitted and scored on all rows: on the benchmark suite at E[K] = 1000 it was
#: higher or equal than the split on every hard cell and never below the untuned default,
#: docs/random_search.md section 2.1), else this share of the rows
DEFAULT_VALIDATION_SIZE = 0.2
#: ``validation_size=0``: the default ``epsilon_score`` as a share of the model epsilon -- the
#: score gets a fifth of the run's cost, so at equal ``eps_Q`` the score's noise (``1/n``
#: sensitivity) and the model's (``1 / (n eps)``) equal a 0.2 split's; on the benchmark suite
#: 10 %, 33 % and 50 % of ``eps_Q`` did no better (docs/benchmark_suite.md)
SCORE_SHARE_ON_FIT_ROWS = 0.25


class DPRandomSearchCV(BaseDPSearchCV):
    """Differentially private random search by randomized repetition.

    The private counterpart of :class:`sklearn.model_selection.RandomizedSearchCV`, after
    Papernot & Steinke (ICLR 2022). The rows are split once, independently of the data, into a
    train part and a validation part of ``m`` rows -- or, with ``validation_size=0`` (the
    default where the runs are batched), not split: both parts are all ``m = n`` rows. One
    *run* draws a candidate from ``param_distributions``, fits the DP estimator on the train
    part and releases a noisy validation score (mean per-example utility in [0, 1] plus
    Laplace noise of sensitivity ``1/m``). The number of runs ``K`` is random
    (``distribution``, mean ``n_iter``); the run with the highest noisy score is returned --
    its parameters and its trained model.

    One run is ``eps_Q = max(eps_model, epsilon_score)``-DP (parallel composition over the two
    disjoint parts), or ``eps_model + epsilon_score``-DP without a validation part, where the
    run fits and scores *all* rows (sequential composition). The tuning is
    ``(2 + eta) * eps_Q``-DP for the truncated negative binomial laws (Corollary 3; eta = 0
    logarithmic, 1 geometric); at ``delta > 0`` the smallest of that, the Renyi bound (Theorem
    2, through dp-accounting) and the privacy-profile bound (docs/accounting.md 7.6);
    ``"poisson"`` needs ``delta > 0`` (Theorem 6); ``"fixed"`` is the naive baseline: exactly
    ``n_iter`` runs, accounted by composition.
    ``privacy_spent_`` adds the refit on all rows when ``refit=True``.

    Only the winning run is released: neither the number of runs ``K`` nor the losing runs'
    noisy scores are stored (releasing ``K`` with the winner voids the bound: conditional on
    ``K = k`` the best of ``k`` runs can cost ``k * eps_Q``). The running time still depends
    on ``K``; timing side channels are outside the guarantee, as for every DP library.

    Parameters
    ----------
    estimator : estimator object
        A diffprivlib model or a ``Pipeline`` of them with data-independent transformers.
    param_distributions : dict or list of dicts
        As in ``RandomizedSearchCV``: lists (sampled uniformly) or scipy.stats distributions.
    n_iter : float or None, default=None
        Expected number of runs ``E[K]`` (the exact number for ``"fixed"``). ``None``, for the
        truncated negative binomial laws (the default geometric one included), whose pure
        cost does not depend on ``n_iter`` (at ``delta > 0`` the Renyi and profile bounds grow
        like ``log n_iter``) -- more runs cost time only, and the search also picks
        among more noise draws of the good candidates: **1000** when the runs are fitted
        together (every candidate a diffprivlib ``LogisticRegression`` with a ``data_norm``,
        alone or after data-independent pipeline steps -- and after diffprivlib's
        ``StandardScaler`` with public ``bounds``, as a step or as the one private branch of
        a ``ColumnTransformer`` --, or skdptune's ``SSPRegressor`` with
        public ``bounds_X`` and ``bounds_y``, alone; decided from the estimator and the
        space; a plain model's ``X`` goes through the batched path when it is a numeric
        ``numpy`` array or a pandas ``DataFrame`` of numpy numeric columns, and labels in a
        list or a ``Series`` are converted as diffprivlib converts them), **50** otherwise
        (as many fits as ``RandomizedSearchCV`` with its defaults, 10 candidates x 5 folds).
        On the benchmark suite ``E[K] = 1000`` closed far more of the gap to non-private
        tuning than 50, which closed far more than 10; 2000 closed 80 % of it in as many goal
        cells as 1000 (all 8 of the priced suite) in twice the time -- each doubling doubles
        the running time
        (docs/benchmark_suite.md, docs/random_search.md section 3).
        10 for ``"poisson"`` and ``"fixed"``, whose cost grows with it.
    distribution : {"logarithmic", "geometric", "negative_binomial", "poisson", "fixed"}, \
            default="geometric"
        Law of the number of runs. The geometric law costs ``3 eps_Q`` against the
        logarithmic law's ``2 eps_Q`` but runs a single candidate far less often
        (``P[K = 1] = 1 / n_iter``: 0.02 at ``n_iter = 50``, against 0.18 for the logarithmic law at
        ``n_iter = 50`` and 0.27 at ``n_iter = 10``); on the benchmark suite
        (5 real tasks, 2 variants, total epsilon 1 / 2 / 4, 8-10 seeds, ``n_iter = 10``) it
        returned the more accurate model in 29 of 30 cells (docs/random_search.md section 3).
    eta : float or None, default=None
        Shape in (-1, inf) of the truncated negative binomial (``"negative_binomial"`` only).
    epsilon : float or None, default=2.0
        Total budget of the fit (tuning plus refit), the same default total as
        :class:`DPGridSearchCV` and :class:`DPGIBOSearchCV` (budget mode). Every candidate's
        DP epsilons are set so that its model costs the same ``epsilon_model_``, the largest
        that makes ``privacy_spent_`` equal the budget (their ratios kept; a diffprivlib
        ``LogisticRegression`` costs more than its ``epsilon`` when ``data_norm > 1``, and
        differently for each ``C`` and ``data_norm``: each candidate gets what its own cost
        allows, docs/privacy.md). ``None``: the estimator as configured -- every run fits the
        candidate with its own epsilons, and ``privacy_spent_`` reports the total, about
        ``3 x`` the model's cost under the default law (``planned_privacy(n)`` tells it before
        the fit). A space that sets an ``epsilon`` needs ``epsilon=None``.
    delta : float, default=0.0
        Target delta of the Renyi and privacy-profile bounds (required > 0 for
        ``"poisson"``).
    epsilon_score : float or None, default=None
        Budget of each noisy validation score; ``None`` uses the (scaled) model epsilon -- a
        quarter of it without a validation part, where it adds to the run's cost (a fifth of
        ``eps_Q``).
    validation_size : float or None, default=None
        Fraction of rows in the validation part. ``0``: no validation part -- every run is
        fitted on all rows and scored on the same rows (sensitivity ``1/n``), and costs
        ``eps_model + epsilon_score``. At equal ``eps_Q`` a per-example score is as noisy as
        with a 0.2 split, and the model about as noisy (more rows, less epsilon), while the
        model uses every row and the score reads five times more rows; the score is then an
        in-sample one (docs/random_search.md section 2.1). ``None``: **0** where the estimator
        and the space allow batched runs (the decision of ``n_iter=None``, from them alone: a
        clipped, noisy diffprivlib ``LogisticRegression``, or an ``SSPRegressor``) -- on the
        benchmark suite at
        ``E[K] = 1000`` higher or equal than the split on every hard cell, closer to the goal
        on the easy ones, and never below the untuned default (docs/benchmark_suite.md) --;
        **0.2** otherwise, where an in-sample score could favour a model that memorises its
        rows. Give ``0.2`` for a validation part (the default before).
    scoring : str, list, tuple, dict or None, default=None
        Per-example score: ``None`` (accuracy for classifiers, squared distance for
        clusterers), ``"accuracy"``, ``"squared_error"``, ``"absolute_error"``,
        ``"log_loss"`` or ``"squared_distance"`` (distance to the nearest cluster centre, for
        clusterers; diffprivlib's ``KMeans`` is refused, docs/privacy.md); or, for a binary
        classifier, ``"roc_auc"`` / ``"average_precision"`` on the whole validation part,
        released with a larger noise
        (sensitivity about ``4/m`` and ``2 ln(m)/m``; derivation in docs/random_search.md);
        for imbalanced classes, ``"balanced_accuracy"`` (any number of classes) or ``"f1"``
        (binary), released times a function of the class counts that keeps their ranking
        (sensitivity about ``4/m`` for two classes, ``(C + 1)/m`` for ``C >= 3``, ``2/m``
        for f1; docs/random_search.md section 2.7).
        Several of them (a list or dict) select by the one named in ``refit``; only that one
        is computed on the private data.
    score_clip : float or None, default=None
        Clip of per-example losses for the error, squared-distance and log-loss scores.
    classes : array-like or None, default=None
        The label set of a classifier: public information (docs/privacy.md). Required for
        classifiers unless the estimator declares it (diffprivlib's ``classes`` parameter).
        Every fit gets one public padding row per class, so no run can fail for lack of a
        class and the returned model's ``classes_`` is this set whatever the data.
    refit : bool, default=False
        ``False`` (the default) returns the winning run's already-trained model at no extra
        cost -- unlike scikit-learn, where ``refit=False`` returns no model. ``True`` refits
        the winner's parameters on all rows and adds that fit's cost; at equal total
        ``epsilon`` this spends part of the budget twice on the same parameters, and it lost
        to ``refit=False`` in 5 of 6 cells of the real-task benchmark (docs/random_search.md,
        section 2.5).
    n_jobs : int, default=None
        Parallel runs.
    verbose : int, default=0
        ``1``: fixed phase messages and the expected number of runs (never the drawn ``K``,
        a score or a time; docs/privacy.md). ``2``: also a live progress line per finished
        joblib task of runs: their number is public (a fixed count per worker, or per
        expected runs when batched), each holds a share of the runs.
    random_state : None, int or RandomState, default=None
        ``None``: secure noise. An int makes runs reproducible (testing and teaching only).
    error_score : "raise" or float, default=0.0
        ``"raise"`` lets a run's exception out (debugging only: it voids the guarantee). A run
        is never given a utility for failing -- whether a fit fails depends on its data, so a
        failure is not covered by the run's guarantee: a run that still fails after the
        padding and the domain check stops the search with ``PrivateFitError``.
    accountant : diffprivlib.BudgetAccountant or None, default=None
        Charged once per ``fit`` with ``privacy_spent_``. Clones share it.
    return_train_score : bool, default=False
        As in ``RandomizedSearchCV``; ``True`` is refused (train scores are exact scores of
        the private data).

    Attributes
    ----------
    best_params_ : dict
        Parameters of the winning run.
    best_estimator_ : estimator
        Refitted model (``refit=True``) or the winning run's model (``refit=False``).
    best_score_ : float
        The winning run's *noisy* validation utility (released by the mechanism); without a
        validation part (``validation_size=0``, the default for batched runs) an in-sample
        score, and in both cases biased upwards by the selection: not an estimate of test
        accuracy.
    cv_results_ : dict
        The winning run only: ``params``, ``param_<name>``, ``selected`` and ``noisy_score``.
    no_runs_ : bool
        True when ``K = 0`` (Poisson): the returned parameters are a data-independent draw.
    epsilon_model_ : float
        What each run's model (and the refit) costs: the largest over the space as configured,
        or, in budget mode, the cost every candidate is priced at.
    epsilon_run_ : float
        ``eps_Q`` of one run.
    privacy_split_ : dict
        How the budget is spent: ``epsilon_tuning`` (the repetition, the tuning line of
        ``privacy_spent_``), ``epsilon_run`` (``eps_Q``), ``epsilon_model`` and
        ``epsilon_score`` (one run's model and noisy score), ``epsilon_refit`` (the refit's
        model, 0 with ``refit=False``). With the default total 2 and the geometric law: runs of
        ``2/3`` (``refit=False``) or ``2/4`` (``2/3.8`` without a validation part).
    n_iter_expected_ : float
        The expected number of runs ``E[K]`` the accounting used: ``n_iter``, or its default
        for the law and the estimator. Never the number ``K`` a fit drew, which is not
        released (hence not scikit-learn's ``n_iter_``, the iterations a fit actually ran).
    privacy_spent_ : PrivacyReport
        Total (epsilon, delta) and components.
    classes_ : ndarray
        The declared label set (classifiers).

    Warns
    -----
    TooFewRowsWarning
        Once per ``fit``, before the data is read, when the best noisy score among
        ``E[K]`` runs cannot be expected to pick a better run than a random draw from the
        space: ``2 b (ln E[K] + 1) >= 1 - 1/|S|`` (1 for a space with a distribution), with
        ``b`` the Laplace scale of a run's score -- with the defaults, below 130 rows
        (docs/random_search.md, section 7). A function of ``n``, the space and the budget.

    See Also
    --------
    sklearn.model_selection.RandomizedSearchCV : the non-private search it replaces.
    DPGridSearchCV : private grid search by subsample-and-aggregate.

    Examples
    --------
    >>> from skdptune import DPRandomSearchCV
    >>> from diffprivlib import BudgetAccountant
    >>> from diffprivlib.models import GaussianNB
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    >>> search = DPRandomSearchCV(
    ...     GaussianNB(bounds=(-6.0, 6.0)), {"var_smoothing": loguniform(1e-9, 1e-1)},
    ...     n_iter=5, epsilon=1.0, classes=[0, 1], random_state=0,
    ...     accountant=BudgetAccountant(),
    ... ).fit(X, y)
    >>> round(search.privacy_spent_.epsilon, 6)
    1.0
    >>> search.n_iter_expected_, round(search.privacy_split_["epsilon_run"], 6)
    (5.0, 0.333333)
    """

    # scorer_ and metadata routing see the per-example scores as scikit-learn scorers
    _raw_scoring = staticmethod(raw_scorer_name)

    _parameter_constraints: dict = {
        **BaseDPSearchCV._parameter_constraints,
        "param_distributions": [dict, list],
        "n_iter": [Interval(numbers.Real, 1, None, closed="left"), None],
        "distribution": [StrOptions({"logarithmic", "geometric", "negative_binomial",
                                     "poisson", "fixed"})],
        "eta": [Interval(numbers.Real, -1, None, closed="neither"), None],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "delta": [Interval(numbers.Real, 0, 1, closed="left")],
        "epsilon_score": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "validation_size": [Interval(numbers.Real, 0, 1, closed="left"), None],
        "scoring": [str, list, tuple, dict, None],
        "score_clip": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=None, distribution="geometric",
                 eta=None, epsilon=2.0, delta=0.0, epsilon_score=None, validation_size=None,
                 scoring=None, score_clip=None, classes=None, refit=False, n_jobs=None,
                 verbose=0, random_state=None, error_score=0.0, accountant=None,
                 return_train_score=False):
        super().__init__(estimator, classes=classes, refit=refit, n_jobs=n_jobs,
                         verbose=verbose, random_state=random_state, error_score=error_score,
                         accountant=accountant, return_train_score=return_train_score)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.distribution = distribution
        self.eta = eta
        self.epsilon = epsilon
        self.delta = delta
        self.epsilon_score = epsilon_score
        self.validation_size = validation_size
        self.scoring = scoring
        self.score_clip = score_clip

    def _search_space(self):
        ParameterSampler(self.param_distributions, n_iter=1)  # scikit-learn's checks, messages
        return SearchSpace(self.param_distributions)

    def _batched(self) -> bool:
        """Whether the runs are fitted together: a public fact of the configuration, asked
        once per plan (``runs_batched`` samples the space, and a distribution that ignores
        ``random_state`` could answer differently twice)."""
        return runs_batched(self.estimator, self.param_distributions, self.error_score)

    def _expected_runs(self, batched: bool) -> float:
        """``n_iter``, or its default for ``distribution`` and the estimator (public facts)."""
        if self.n_iter is not None:
            return self.n_iter
        if self.distribution in ("poisson", "fixed"):
            return DEFAULT_N_ITER_COMPOSED
        return DEFAULT_N_ITER_BATCHED if batched else DEFAULT_N_ITER

    def _validation_size(self, batched: bool) -> float:
        """``validation_size``, or its default for the estimator (public facts)."""
        if self.validation_size is not None:
            return float(self.validation_size)
        return 0.0 if batched else DEFAULT_VALIDATION_SIZE

    def _repetition(self, batched: bool | None = None) -> RandomizedRepetition:
        """The law of the number of runs; ``batched``: the plan's decision (``None``: asked
        afresh, :meth:`_batched`)."""
        batched = self._batched() if batched is None else batched
        return RandomizedRepetition(self.distribution, self._expected_runs(batched), self.eta)

    def _costs(self, repetition: RandomizedRepetition, on_fit_rows: bool,
               configured: tuple[float, float], epsilon_model: float | None = None
               ) -> _RunCosts:
        """What one run and the tuning cost: with the model as configured (``configured``, its
        cost maximised over the space; ``epsilon_model=None``) or every candidate priced at
        ``epsilon_model`` (budget mode; its delta is the configured one). ``on_fit_rows``: no
        validation part (every run scores the rows it was fitted on)."""
        eps_model, delta_model = configured
        if epsilon_model is not None:
            eps_model = float(epsilon_model)
        if self.epsilon_score is not None:
            eps_score = float(self.epsilon_score)
        else:
            eps_score = eps_model * (SCORE_SHARE_ON_FIT_ROWS if on_fit_rows else 1.0)
        # the score on the rows of the fit: sequential composition; on a disjoint part: parallel
        eps_run = eps_model + eps_score if on_fit_rows else max(eps_model, eps_score)
        return _RunCosts(event=repetition.privacy_event(eps_run, delta_model),
                         epsilon_run=eps_run, epsilon_model=eps_model, delta_model=delta_model,
                         epsilon_score=eps_score)

    def _budget_model(self, repetition: RandomizedRepetition, on_fit_rows: bool,
                      configured: tuple[float, float]) -> float | None:
        """The model cost that makes the total equal ``epsilon`` (budget mode), else ``None``
        (arguments: :meth:`_costs`)."""
        if self.epsilon is None:
            return None
        target = float(self.epsilon)

        def total(epsilon_model):
            costs = self._costs(repetition, on_fit_rows, configured, epsilon_model)
            tuning, _ = event_cost(costs.event, delta=self.delta)
            return tuning + (costs.epsilon_model if self.refit else 0.0)

        # the total is continuous and non-decreasing in the model's cost: bracket, then solve
        lo, hi = 1e-9, 1.0
        # with a fixed epsilon_score the runs cost at least that much whatever the model (and,
        # with refit=False, the total is flat near 0): a root there would be meaningless (a
        # model epsilon of 1e-9) or missing, so the budget must lie strictly above this floor
        floor = total(lo)
        if floor >= target:
            raise ValueError(
                f"epsilon={target:g} cannot be met: the noisy validation scores alone "
                f"(epsilon_score={self.epsilon_score!r}) cost {floor:.6g}. Raise epsilon or "
                "lower epsilon_score."
            )
        while total(hi) < target:
            hi *= 2.0
        epsilon_model = brentq(lambda m: total(m) - target, lo, hi, xtol=1e-14, rtol=1e-12)
        # never exceed the budget because of the root finder's tolerance
        while total(epsilon_model) > target:
            epsilon_model *= 1 - 1e-12
        return epsilon_model

    def _run_parts(self, costs: _RunCosts, on_fit_rows: bool):
        """The breakdown of the tuning line: what one run of ``Q`` spends on what (informative;
        the line's figure is the repetition's cost of ``(eps_run, delta_model)``-DP runs)."""
        if on_fit_rows:
            fit_rows, score_rows = "all rows", "all rows"
            how = "the sum of the two below (both read all rows: sequential composition)"
        else:
            fit_rows, score_rows = "the train part", "the validation part"
            how = "the larger of the two below (disjoint rows: parallel composition)"
        scaled = (" (each candidate's set to cost this: budget mode)"
                  if self.epsilon is not None else "")
        return (
            PrivacyComponent("per run (the base mechanism Q)", costs.epsilon_run,
                             costs.delta_model, how),
            PrivacyComponent(f"per run: the model, fitted on {fit_rows}", costs.epsilon_model,
                             costs.delta_model, f"the estimator's DP epsilons{scaled}"),
            PrivacyComponent(f"per run: the noisy score, on {score_rows}",
                             costs.epsilon_score, 0.0, "Laplace noise on the score"),
        )

    def _plan_tuning(self, public, space):
        public_scorer = self._public_scorer()
        clip = {} if self.score_clip is None else {"clip": self.score_clip}
        score = check_validation_score(self._selection_scoring(), self.estimator,
                                       public.classes, public.target_range, **clip)
        if self.epsilon is not None and space_sets_epsilon(self.param_distributions):
            raise ValueError(
                f"epsilon={self.epsilon:g} is the total budget of the fit (budget mode, the "
                "default) and sets the estimator's DP epsilons, but param_distributions sets "
                "an epsilon itself. Pass epsilon=None to use the estimator and the space as "
                "configured (privacy_spent_ reports the total they cost), or remove epsilon "
                "from the space."
            )
        # the model as configured: the largest cost over the space
        configured = estimator_privacy(self.estimator, space.space, n_classes=self._n_classes())
        batched = self._batched()
        repetition = self._repetition(batched)
        validation_size = self._validation_size(batched)
        on_fit_rows = validation_size == 0  # every run fits and scores all rows
        epsilon_model = self._budget_model(repetition, on_fit_rows, configured)
        costs = self._costs(repetition, on_fit_rows, configured, epsilon_model)
        # the sizes are public: a part left empty is refused before the data is read
        m = public.n_samples if on_fit_rows else holdout_sizes(public.n_samples,
                                                               validation_size)[1]
        evaluator = HoldoutEvaluator(
            self.estimator, score, epsilon_score=costs.epsilon_score,
            epsilons=self._run_settings(epsilon_model), error_score=self.error_score,
            n_jobs=self.n_jobs, padding=public.padding,
            expected_runs=repetition.mean, batched=batched,
        )
        return RandomPlan(
            public=public,
            tuning=((f"tuning: {costs.event.name}", costs.event,
                     self._run_parts(costs, on_fit_rows)),),
            model_cost=(costs.epsilon_model, costs.delta_model),
            refit_priced=self.epsilon is not None, delta=float(self.delta),
            scorers={"scoring": score, "scorer_ (used by score)": public_scorer},
            attributes={"scorer_": public_scorer, "epsilon_model_": costs.epsilon_model,
                        "epsilon_run_": costs.epsilon_run,
                        # E[K] as resolved and accounted; never the K a fit draws
                        "n_iter_expected_": repetition.mean,
                        "privacy_split_": self._privacy_split(costs)},
            warnings=self._too_few_rows(public.n_samples, m, score, costs.epsilon_score,
                                        repetition),
            repetition=repetition, validation_size=validation_size, evaluator=evaluator)

    def _privacy_split(self, costs: _RunCosts) -> dict:
        """``privacy_split_``: what the budget buys (public, from the plan's costs)."""
        tuning, _ = event_cost(costs.event, delta=self.delta)
        return {"epsilon_tuning": tuning, "epsilon_run": costs.epsilon_run,
                "epsilon_model": costs.epsilon_model, "epsilon_score": costs.epsilon_score,
                "epsilon_refit": costs.epsilon_model if self.refit else 0.0}

    def _n_candidates(self) -> int | None:
        """The number of distinct candidates of a space made of lists; ``None`` when a
        distribution is drawn from (public)."""
        sub_spaces = (self.param_distributions if isinstance(self.param_distributions, list)
                      else [self.param_distributions])
        if all(is_listed(value) for sub in sub_spaces for value in sub.values()):
            return len(ParameterGrid(self.param_distributions))
        return None

    def _too_few_rows(self, n_samples: int, m: int, score, epsilon_score: float,
                      repetition: RandomizedRepetition) -> tuple[Warning, ...]:
        """Data-independent warning: the noisy scores cannot be expected to pick a better run
        than a random draw from the space would be (``RandomizedRepetition.selection_noise``
        against :func:`~skdptune.selection._base.random_pick_loss`). A function of ``n``, the
        parameters and the space only."""
        scale = score.sensitivity_of_mean(m) / epsilon_score
        noise = repetition.selection_noise(scale)
        n_candidates = self._n_candidates()
        if can_beat_random_pick(noise, n_candidates):
            return ()
        return (TooFewRowsWarning(
            f"DPRandomSearchCV cannot be expected to beat a random pick of a candidate on "
            f"n_samples={n_samples} rows: each run's score, read on {m} rows, is released "
            f"with Laplace noise of scale {scale:.3g} (epsilon_score={epsilon_score:.3g}), "
            f"and the best noisy score among E[K]={repetition.mean:g} expected runs can be "
            f"{noise:.2f} below the best run's in expectation (2 x scale x (ln E[K] + 1)), at "
            f"least what a random pick can lose ({random_pick_loss(n_candidates):.2f} on the "
            "[0, 1] utility scale). Use more rows, a larger epsilon or fewer expected runs "
            "(n_iter), or fit the estimator alone with the whole budget "
            "(docs/random_search.md, 'Too few rows')."),)

    def _run_tuning(self, plan, X, y, metadata, seeds):
        repetition = plan.repetition
        n_runs = repetition.sample(seeds.rng("sampling"))  # never released
        candidates = independent_draws(self.param_distributions,
                                       seeds.seeds("sampling", 1, np.arange(max(n_runs, 1))))
        self._log(1, f"running the private repetition: {repetition.mean:g} runs expected (the "
                     "number drawn is not shown)", live=True)
        if n_runs == 0:
            # K = 0 (Poisson): a data-independent output, flagged
            return TuningResult(candidate_params=candidates[:1], best_index=0, fallback=True,
                                extra_results={"noisy_score": np.array([np.nan])},
                                attributes={"no_runs_": True, "best_score_": np.nan})
        n_samples = plan.public.n_samples
        if plan.validation_size == 0:  # every run fits and scores all rows
            split = (np.arange(n_samples),) * 2
        else:  # data-independent, shared by the runs (the analysis holds for any fixed split)
            split = holdout_split(n_samples, plan.validation_size, seeds.rng("split"))
        scores, models = plan.evaluator.run(X, y, candidates, split, metadata.fit, seeds,
                                            progress=self._progress("run tasks done"))
        best = repetition.select(scores)
        # release the winner only: its parameters, noisy score and model
        return TuningResult(
            candidate_params=[candidates[best]], best_index=0,
            extra_results={"noisy_score": np.array([scores[best]])},
            attributes={"no_runs_": False, "best_score_": float(scores[best])},
            best_estimator=models[best],
        )

    def _run_settings(self, epsilon_model: float | None) -> dict:
        """How every run's model is set up: as configured, or, in budget mode, priced at
        ``epsilon_model`` (:meth:`_budget_model`) for the declared label set."""
        if self.epsilon is None:
            return {}
        return {"epsilon_total": epsilon_model, "n_classes": self._n_classes()}


def independent_draws(space, seeds) -> list[dict]:
    """One candidate of ``space`` per seed of ``seeds``: the draw of ``ParameterSampler(space,
    n_iter=1, random_state=seed)``.

    Independent draws (with replacement): the runs of Q must be i.i.d. for the analysis, so
    ParameterSampler's without-replacement mode for all-list spaces is avoided. One generator
    serves every draw, reseeded in place before each: ``seed`` resets the whole state of a
    ``RandomState`` (its cached Gaussian draw too), so each draw is the one a fresh
    ``RandomState(seed)`` gives -- without building a generator per run.
    """
    generator = np.random.RandomState()
    draws = []
    for seed in np.asarray(seeds).tolist():
        generator.seed(seed)
        draws.append(next(iter(ParameterSampler(space, n_iter=1, random_state=generator))))
    return draws


@dataclass(frozen=True)
class _RunCosts:
    """The cost of one run of ``Q`` and of the repetition of it (:meth:`_costs`)."""

    event: PrivacyEvent
    epsilon_run: float
    epsilon_model: float
    delta_model: float
    epsilon_score: float


@dataclass(frozen=True, kw_only=True)
class RandomPlan(TuningPlan):
    """DPRandomSearchCV's plan: the law of the number of runs and how each run is made."""

    repetition: RandomizedRepetition
    #: share of the rows in the validation part; ``0``: every run fits and scores all rows
    validation_size: float
    #: fits and scores the runs (priced, with the padding rows)
    evaluator: HoldoutEvaluator
