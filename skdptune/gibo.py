"""DPGIBOSearchCV: private gradient-informative Bayesian optimisation over a continuous box."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseDPSearchCV, SearchSpace, TuningPlan, TuningResult
from ._params import get_params
from ._private import FAILURE_MESSAGE
from ._space import EpsilonSplit, check_box_space
from .accounting import event_cost, self_composition_cost
from .accounting._gaussian import float_gdp_epsilon
from .estimators import estimator_privacy
from .evaluation._holdout import holdout_sizes, holdout_split
from .evaluation._losses import LossEvaluator, train_chunks
from .evaluation._scores import check_per_example_score, raw_scorer_name
from .events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    ParallelEvent,
    PermuteAndFlipEvent,
    PrivacyEvent,
    SelfComposedEvent,
)
from .exceptions import PrivateFitError, TooFewRowsWarning
from .selection._gp_gradient import RBFGradientModel
from .selection._gradient_step import SignalToNoiseStep
from .selection._noisy_gradient import NoisyGradient
from .selection._permute_and_flip import PermuteAndFlipSelector

__all__ = ["DPGIBOSearchCV"]


class DPGIBOSearchCV(BaseDPSearchCV):
    """Differentially private gradient-informative Bayesian optimisation (DP-GIBO).

    A local search over a continuous box, from the user's configuration. On the benchmark's
    tasks (docs/gibo.md), up to 12 dimensions, :class:`DPRandomSearchCV` with continuous
    distributions was at least as accurate; this is the method of the DP-GIBO paper. The
    rows are split once, independently of the data, into a train part and a validation part of
    ``m`` rows. From a start point ``theta`` -- the estimator's own parameters when they lie in
    the box (public: the configuration), else the centre of the box -- each of ``n_iter``
    iterations

    1. places ``batch_size`` query points near ``theta`` where they most reduce the uncertainty
       of a Gaussian-process estimate of the loss gradient at ``theta`` (data-independent: the
       GP has fixed, public hyperparameters and sees only points);
    2. fits the DP estimator at each point on train rows and records every validation example's
       loss under each model;
    3. turns the losses into one gradient estimate per validation example (the GP posterior-mean
       gradient is linear in the losses), clips each to l2-norm ``clip``, averages, and adds
       Gaussian noise (diffprivlib): ``mu / sqrt(n_iter)``-GDP per iteration;
    4. takes an AdaGrad step shrunk by the released gradient's signal-to-noise estimate (its
       noise scale is public: post-processing) and projects it into the box.

    Then the **guard** (``guard_share > 0``) chooses privately between the start point and
    the last point, so that the search does not return a point clearly worse than its own
    start: both are fitted on train rows, scored on the validation rows (mean per-example
    utility in [0, 1], replace-one sensitivity ``1 / m``) and one is picked by
    permute-and-flip (diffprivlib) at ``guard_share * epsilon_tuning``. The chosen point is
    refitted on all rows (``refit=True``) or its guard fit, on train rows, is returned
    (``refit=False``; without the guard, one more fit at the last point).

    Privacy (replace-one; proofs in ``docs/gibo.md``). The replaced record is a train row or a
    validation row. Validation rows: ``mu``-GDP for all ``n_iter`` noisy gradients (adaptive
    composition), plus the guard's pure ``epsilon_guard``-DP selection (basic composition:
    ``epsilon_GDP(mu, delta) + epsilon_guard``). Train rows: the ``M`` DP fits -- on the same
    rows (``train_split="shared"``, optimal composition of ``M`` fits) or on data-independent
    disjoint chunks (``"disjoint"``, parallel composition) -- and everything else is
    post-processing of them. The tuning costs
    the larger of the two sides; the refit on all rows adds its own cost. **Budget mode only**:
    ``epsilon`` and ``delta`` are the total, split so that ``tuning_share`` goes to the tuning
    (both sides meet it) and the rest to the refit; ``privacy_split_`` reports the split. The
    guard's fits are two of the ``M``, and its selection takes ``guard_share`` of the
    validation side's budget from the gradients (a smaller ``mu``): the total stays
    ``(epsilon, delta)``.

    The GP's hyperparameters are never fitted on the private losses.

    Parameters
    ----------
    estimator : estimator
        A diffprivlib model or a ``Pipeline`` of them with data-independent transformers. Its
        DP epsilons are rescaled proportionally for every fit (budget mode); their ratios stay.
    param_space : dict
        Parameter name -> ``(low, high)`` or ``(low, high, "log")`` (real-valued), or an
        :class:`~skdptune.ArrayRange` for an array-valued parameter (per-feature ``bounds``,
        ``bounds_X``); and any key -> an :class:`~skdptune.EpsilonSplit` to tune how the budget
        of each fit is shared among a pipeline's DP steps (the report's line per step, planned
        before the fit, gives its range; ``best_estimator_`` holds the tuned split). Integers
        and categorical choices: use
        :class:`DPGridSearchCV` or :class:`DPRandomSearchCV`. Other privacy parameters
        (``epsilon``, ``delta``) cannot be searched: budget mode sets them.
    epsilon : float, default=2.0
        Total privacy budget of the fit (tuning plus returned model).
    delta : float, default=1e-6
        Total delta (the Gaussian noise and the optimal composition need one).
    tuning_share : float, default=0.5
        Share of ``epsilon`` spent on the tuning when ``refit=True`` (the rest: the refit).
    n_iter : int, default=10
        Number ``T`` of gradient steps.
    batch_size : int or None, default=None
        Query points ``b`` per step; ``None``: ``min(d + 1, 4)``. ``M = T * b`` model fits,
        plus the guard's two (without the guard: plus one for the returned model when
        ``refit=False``).
    train_split : {"shared", "disjoint"}, default="shared"
        How the ``M`` fits use the train rows (see above). ``"disjoint"`` needs at least ``M``
        train rows (one per chunk), checked before the data is read.
    guard_share : float, default=0.2
        Share of the tuning budget ``epsilon_tuning`` that the guard's selection between the
        start point and the last point spends on the validation rows (the noisy gradients get
        the rest: ``epsilon_GDP(mu, delta) = (1 - guard_share) * epsilon_tuning``). ``0``
        switches the guard off: the last point is returned.
    clip : float, default=0.5
        l2 clipping norm ``B`` of the per-example gradients (loss units per unit of the cube).
    learning_rate : float, default=0.1
        AdaGrad step size in unit-cube units. Each step is AdaGrad's, multiplied by
        ``s = max(0, 1 - d sigma^2 / ||g||^2)``, with ``g`` the released gradient and ``sigma``
        the public noise scale of its Gaussian noise: a gradient no larger than its noise
        does not move the point.
    momentum : float, default=0.0
        Weight of the past released gradients in an exponential average that replaces ``g``
        (0: the latest gradient only).
    lengthscale : float or None, default=None
        RBF lengthscale in unit-cube units; ``None``: ``0.3 * sqrt(d)``.
    noise : float, default=0.01
        GP observation-noise variance (losses lie in [0, 1]).
    validation_size : float, default=0.2
        Fraction of rows in the validation part.
    scoring : str or None, default=None
        Per-example score, as in :class:`DPRandomSearchCV` (``None``: accuracy for
        classifiers; ``"log_loss"`` for a smooth loss; regressors: ``"squared_error"`` or
        ``"absolute_error"`` with ``score_clip``). Losses are ``1 - utility``, in [0, 1].
    score_clip : float or None, default=None
        Clip of the per-example errors (see :class:`DPRandomSearchCV`).
    classes : array-like or None, default=None
        The public label set of a classifier (see :class:`DPGridSearchCV`).
    refit : bool, default=True
        Refit the returned point on all rows (cost ``(1 - tuning_share) * epsilon``).
    n_jobs : int, default=None
        Parallel fits within an iteration, in one joblib pool for the whole search. An
        iteration's ``batch_size`` fits are all that can run at once, and each iteration pays
        about 10 ms of joblib dispatch: with fits of a few milliseconds ``n_jobs=1`` is faster
        (docs/gibo.md, "Speed").
    verbose : int, default=0
        ``1``: one line per iteration, its number and the released point (printed when the
        private part has succeeded, docs/privacy.md). ``2``: also a live progress line per
        iteration (a count only).
    random_state : None, int or RandomState, default=None
        ``None``: secure noise. An int: reproducible (testing and teaching only).
    error_score : "raise" or float, default=0.0
        ``"raise"`` lets a fit's exception out (debugging; voids the guarantee). A fit is never
        given a loss for failing: a fit that fails stops the search with ``PrivateFitError``.
    accountant : diffprivlib.BudgetAccountant or None, default=None
        Charged once per ``fit`` with ``privacy_spent_``.
    return_train_score : bool, default=False
        For scikit-learn compatibility; ``True`` is refused (train scores are exact scores of
        the private data).

    Attributes
    ----------
    best_params_ : dict
        The returned point (released): the guard's choice, or the last point without it.
    best_estimator_ : estimator
        Refitted on all rows, or the returned point's model (``refit=False``).
    guard_choice_ : {"start", "last"} or None
        The guard's released choice; ``None`` without the guard.
    trajectory_ : list of dict
        Per iteration: ``iteration``, ``point`` and ``params`` after the step, the released
        noisy ``gradient`` (unit-cube coordinates) and the ``query_params``. All released.
    privacy_split_ : dict
        ``mu``, ``epsilon_fit``, ``n_fits``, ``epsilon_guard`` (0 without the guard), the
        ``(epsilon, delta)`` of the ``train`` and ``validation`` sides (the latter: noisy
        gradients and guard together) and of the ``refit``.
    privacy_spent_ : PrivacyReport
        Total ``(epsilon, delta)`` and components.
    cv_results_ : dict
        ``params``, ``param_<name>`` and ``selected`` of the returned point.

    Warns
    -----
    TooFewRowsWarning
        Once per ``fit``, before the data is read, when the noise of every released gradient
        is at least as large as any gradient the data can give, ``2 sqrt(n_iter d) / (m mu)
        >= 1`` (``m`` validation rows, ``d`` dimensions): the search then stays near its
        data-independent start point. A function of ``n``, the settings and the budget
        (docs/gibo.md, "Too few rows").

    See Also
    --------
    DPGridSearchCV, DPRandomSearchCV : the discrete searches.

    Examples
    --------
    >>> from skdptune import DPGIBOSearchCV
    >>> from diffprivlib import BudgetAccountant
    >>> from diffprivlib.models import LogisticRegression
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    >>> search = DPGIBOSearchCV(
    ...     LogisticRegression(data_norm=4.0), {"C": (1e-2, 1e2, "log")},
    ...     epsilon=2.0, n_iter=3, classes=[0, 1], random_state=0,
    ...     accountant=BudgetAccountant(),
    ... ).fit(X, y)
    >>> round(search.privacy_spent_.epsilon, 6)
    2.0
    >>> len(search.trajectory_)
    3
    """

    # scorer_ and metadata routing see the per-example scores as scikit-learn scorers
    _raw_scoring = staticmethod(raw_scorer_name)

    _parameter_constraints: dict = {
        **BaseDPSearchCV._parameter_constraints,
        "param_space": [dict],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "tuning_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "train_split": [StrOptions({"shared", "disjoint"})],
        "guard_share": [Interval(numbers.Real, 0, 1, closed="left")],
        "clip": [Interval(numbers.Real, 0, None, closed="neither")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
        "lengthscale": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "noise": [Interval(numbers.Real, 0, None, closed="left")],
        "validation_size": [Interval(numbers.Real, 0, 1, closed="neither")],
        "scoring": [str, list, tuple, dict, None],
        "score_clip": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, estimator, param_space, *, epsilon=2.0, delta=1e-6, tuning_share=0.5,
                 n_iter=10, batch_size=None, train_split="shared", guard_share=0.2, clip=0.5,
                 learning_rate=0.1, momentum=0.0, lengthscale=None, noise=0.01,
                 validation_size=0.2, scoring=None, score_clip=None, classes=None, refit=True,
                 n_jobs=None, verbose=0, random_state=None, error_score=0.0, accountant=None,
                 return_train_score=False):
        super().__init__(estimator, classes=classes, refit=refit, n_jobs=n_jobs,
                         verbose=verbose, random_state=random_state, error_score=error_score,
                         accountant=accountant, return_train_score=return_train_score)
        self.param_space = param_space
        self.epsilon = epsilon
        self.delta = delta
        self.tuning_share = tuning_share
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.train_split = train_split
        self.guard_share = guard_share
        self.clip = clip
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.lengthscale = lengthscale
        self.noise = noise
        self.validation_size = validation_size
        self.scoring = scoring
        self.score_clip = score_clip

    # -- the space ------------------------------------------------------------------------------
    def _box(self):
        box = check_box_space(self.param_space)
        privacy = [name for name, spec in self.param_space.items()
                   if not isinstance(spec, EpsilonSplit)
                   and name.rpartition("__")[2] in ("epsilon", "delta")]
        if privacy:
            raise ValueError(
                f"DPGIBOSearchCV sets the privacy parameters itself (budget mode); remove "
                f"{privacy} from param_space (an EpsilonSplit may share the budget among a "
                "pipeline's DP steps).")
        return box

    def _search_space(self):
        # the centre, and the points where each step of an EpsilonSplit gets its largest and
        # smallest share: the checks of the configuration run on them, and the report's line
        # per step holds its range (the total does not depend on the point: budget mode);
        # with an ArrayRange, also each of these points with the ArrayRange itself in its
        # place: a GaussianNB's bounds are then priced over the whole box (refused, before any
        # data is read, where the box lets a lower bound reach its upper bound: a point there
        # would have no price), and each step's line holds its largest share, at the split's
        # extremes too (skdptune.estimators._pricing, the budget versions)
        box = self._box()
        points = [np.full(box.n_dims, 0.5)] + box.share_extremes()
        space = [{name: [value] for name, value in box.from_unit(z).items()} for z in points]
        ranges = box.array_ranges()
        priced = space + [{name: [ranges.get(name, values[0])] for name, values in sub.items()}
                          for sub in (space if ranges else [])]
        # the dry run: the centre, two corners and three public, fixed draws
        rng = np.random.RandomState(0)
        tried = [np.full(box.n_dims, 0.5), np.zeros(box.n_dims), np.ones(box.n_dims)]
        tried += list(rng.uniform(size=(3, box.n_dims)))
        # the steps in front of the model: real ranges (a parameter there cannot be listed)
        return SearchSpace(priced, dry_run=[box.from_unit(z) for z in tried],
                           model_input=[box.dimension_of()])

    # -- the plan (data-independent) ------------------------------------------------------------
    def _batch(self, n_dims: int) -> int:
        return int(self.batch_size) if self.batch_size is not None else min(n_dims + 1, 4)

    def _guarded(self) -> bool:
        return float(self.guard_share) > 0

    def _n_fits(self, n_dims: int) -> int:
        # the guard fits the start and the last point (with refit=False the chosen one's fit
        # is the returned model); without it, refit=False needs one fit at the last point
        extra = 2 if self._guarded() else (0 if self.refit else 1)
        return int(self.n_iter) * self._batch(n_dims) + extra

    def _budget(self):
        """``(epsilon_tuning, epsilon_model)`` of the total."""
        if not self.refit:
            return float(self.epsilon), 0.0
        tuning = float(self.epsilon) * float(self.tuning_share)
        return tuning, float(self.epsilon) - tuning

    def _validation_event(self, mu: float, epsilon_guard: float) -> PrivacyEvent:
        """The validation rows' cost: the ``n_iter`` noisy gradients (``mu``-GDP) and, with the
        guard, its permute-and-flip selection on the same rows (pure ``epsilon_guard``-DP):
        sequential composition, ``epsilon_GDP(mu, delta) + epsilon_guard`` at ``delta``."""
        gradients = NoisyGradient(mu, int(self.n_iter), float(self.clip)).privacy_event()
        if not self._guarded():
            return gradients
        guard = PermuteAndFlipEvent(epsilon_guard, name="guard: start or last point")
        return ComposedEvent((gradients, guard), name="noisy gradients + guard")

    def _plan_costs(self, space: SearchSpace, box) -> GIBOCosts:
        """mu, epsilon_fit, epsilon_guard, n_fits and the events, solved so that the total
        meets the budget."""
        _, model_delta = estimator_privacy(self.estimator, space.space)
        if model_delta > 0:
            raise ValueError("DPGIBOSearchCV supports pure-DP estimators only (every "
                             "diffprivlib component with delta = 0): set the components' "
                             "delta to 0, or use DPRandomSearchCV or DPGridSearchCV, which "
                             "account for delta > 0.")
        n_fits = self._n_fits(box.n_dims)
        tuning, _ = self._budget()
        delta = float(self.delta)
        guard = tuning * float(self.guard_share)
        # the validation side meets the tuning budget: epsilon_GDP(mu, delta) + guard = tuning
        mu = _solve_increasing(
            lambda m: event_cost(self._validation_event(m, guard), delta)[0], tuning,
            search=lambda m: float_gdp_epsilon(m, delta) + guard)
        if self.train_split == "disjoint":
            epsilon_fit = tuning
            train = EpsilonDeltaEvent(epsilon_fit, 0.0, f"{n_fits} fits on disjoint chunks")
        else:
            epsilon_fit = _solve_increasing(
                lambda e: self_composition_cost(e, 0.0, n_fits, delta)[0], tuning)
            train = SelfComposedEvent(EpsilonDeltaEvent(epsilon_fit, 0.0, "one fit"), n_fits,
                                      name=f"{n_fits} fits on the train rows")
        validation = self._validation_event(mu, guard)
        return GIBOCosts(mu=mu, epsilon_fit=epsilon_fit, epsilon_guard=guard, n_fits=n_fits,
                         train=train, validation=validation,
                         tuning=ParallelEvent((train, validation),
                                              name="train rows | validation rows"))

    def _plan_tuning(self, public, space):
        public_scorer = self._public_scorer()
        score = check_per_example_score(self._selection_scoring(), self.estimator,
                                        public.target_range,
                                        **({} if self.score_clip is None
                                           else {"clip": self.score_clip}))
        box = self._box()
        costs = self._plan_costs(space, box)
        n_train, m = holdout_sizes(public.n_samples, self.validation_size)
        if self.train_split == "disjoint" and n_train < costs.n_fits:
            # public: n, validation_size and the settings
            raise ValueError(
                f"train_split='disjoint' splits the {n_train} train rows into "
                f"{costs.n_fits} chunks, one per fit, so some fits would get no rows. "
                "Use train_split='shared', fewer iterations or a smaller batch_size, or "
                "more rows. Nothing was charged.")
        evaluator = LossEvaluator(self.estimator, score, epsilon_fit=costs.epsilon_fit,
                                  error_score=self.error_score, n_jobs=self.n_jobs,
                                  padding=public.padding, n_classes=self._n_classes())
        lengthscale = (0.3 * math.sqrt(box.n_dims) if self.lengthscale is None
                       else float(self.lengthscale))
        epsilon_model = self._budget()[1]
        noisy = NoisyGradient(costs.mu, int(self.n_iter), float(self.clip))
        return GIBOPlan(
            public=public,
            tuning=(("tuning: DP-GIBO (train rows | validation rows)", costs.tuning),),
            model_cost=(epsilon_model, 0.0), refit_priced=True, delta=float(self.delta),
            scorers={"scoring": score, "scorer_ (used by score)": public_scorer},
            attributes={"scorer_": public_scorer,
                        "privacy_split_": _privacy_split(costs, epsilon_model,
                                                         float(self.delta))},
            box=box, n_fits=costs.n_fits, batch=self._batch(box.n_dims), evaluator=evaluator,
            gp=RBFGradientModel(lengthscale, 1.0, float(self.noise)),
            noisy=noisy, epsilon_guard=costs.epsilon_guard,
            warnings=self._too_few_rows(public.n_samples, m, box.n_dims, noisy))

    def _too_few_rows(self, n_samples: int, m: int, n_dims: int,
                      noisy: NoisyGradient) -> tuple[Warning, ...]:
        """Data-independent warning: every released gradient is at least as much noise as any
        gradient the data can give (the noise's norm ``sigma sqrt(d)`` against the clipping
        norm, which bounds the clipped mean whatever the data). The step rule then shrinks
        the steps towards 0 and the search stays near its start point, a data-independent
        choice. ``sigma sqrt(d) >= clip`` is ``2 sqrt(n_iter d) / (m mu) >= 1``: a function of
        ``n``, the parameters and the budget only."""
        noise = noisy.noise_norm(m, n_dims)
        if noise < noisy.clip:
            return ()
        return (TooFewRowsWarning(
            f"DPGIBOSearchCV cannot be expected to move from its start point on "
            f"n_samples={n_samples} rows: the Gaussian noise on each of its {noisy.n_steps} "
            f"gradients, read on {m} validation rows at mu={noisy.mu:.3g} for {n_dims} "
            f"dimension(s), has a norm of about {noise:.3g}, at least the largest gradient "
            f"the clipped losses can give (clip={noisy.clip:g}); the steps then shrink to "
            "about nothing and the search returns about its data-independent start point. "
            "Use more rows, a larger epsilon or validation_size, or fewer iterations "
            "(n_iter) (docs/gibo.md, 'Too few rows')."),)

    def _step_rule(self, noise_scale: float):
        """The step rule; it sees only the released gradients and public constants."""
        return SignalToNoiseStep(float(self.learning_rate), noise_scale, float(self.momentum))

    # -- the private run ----------------------------------------------------------------------
    def _run_tuning(self, plan, X, y, metadata, seeds):
        box, gp, noisy, batch, evaluator = plan.box, plan.gp, plan.noisy, plan.batch, \
            plan.evaluator
        # data-independent: the validation rows, and the train rows of each fit
        train, validation = holdout_split(plan.public.n_samples, self.validation_size,
                                          seeds.rng("split"))
        if self.train_split == "disjoint":
            rows = train_chunks(train, plan.n_fits, seeds.rng("partition"))
        else:
            rows = [train] * plan.n_fits
        theta = start = _start(box, self.estimator)
        step = self._step_rule(noisy.noise_scale(len(validation)))
        points, losses = np.empty((0, box.n_dims)), None  # losses: PRIVATE, never stored
        trajectory, fit = [], 0
        n_iter = int(self.n_iter)
        progress = self._progress("iterations done")
        # a failed fit stops the fits, not the iterations: the failure is raised after the
        # last one, so that the live progress is the same sequence wherever the failing
        # record is (with train_split="disjoint" each iteration fits its own rows)
        failed = False
        with evaluator.pool():
            for t in range(n_iter):
                if failed:
                    if progress is not None:
                        progress(t + 1, n_iter)
                    continue
                new = gp.acquire(theta, points, batch, seeds.rng("sampling", t))
                settings = [box.from_unit(z) for z in new]
                try:
                    new_losses, _ = evaluator.losses(
                        X, y, settings, rows[fit:fit + batch], validation, metadata.fit,
                        [seeds.seed("fit", fit + j) if seeds.seeded else None
                         for j in range(batch)])
                except PrivateFitError:
                    failed = True
                    if progress is not None:
                        progress(t + 1, n_iter)
                    continue
                fit += batch
                # the GP sees the points of this and the previous iteration
                points = np.vstack([points, new])[-2 * batch:]
                losses = (new_losses if losses is None
                          else np.hstack([losses, new_losses])[:, -2 * batch:])
                centred = losses - losses.mean(axis=1, keepdims=True)
                gradient = noisy.step(centred @ gp.gradient_weights(theta, points),
                                      seeds.noise_seed("selection", t))
                theta = step(theta, gradient)  # post-processing: released gradient, public sigma
                trajectory.append({"iteration": t + 1, "point": theta.copy(),
                                   "params": box.from_unit(theta), "gradient": gradient,
                                   "query_params": settings})
                self._log(1, f"iteration {t + 1}/{self.n_iter}: {box.from_unit(theta)}")
                if progress is not None:
                    progress(t + 1, n_iter)
            if failed:
                raise PrivateFitError(FAILURE_MESSAGE)
            last = box.from_unit(theta)
            fit_seeds = [seeds.seed("fit", fit + j) if seeds.seeded else None for j in range(2)]
            choice, model = None, None
            if plan.epsilon_guard > 0:
                # a failed guard fit raises PrivateFitError here, after the last iteration
                guard_losses, models = evaluator.losses(
                    X, y, [box.from_unit(start), last], rows[fit:fit + 2], validation,
                    metadata.fit, fit_seeds)
                index = guard_selection(guard_losses, plan.epsilon_guard,
                                        seeds.noise_seed("selection", n_iter))
                choice, returned = GUARD_CHOICES[index], box.from_unit([start, theta][index])
                model = None if self.refit else models[index]
                # the choice itself is in guard_choice_: the line reads alike on neighbours
                self._log(1, f"guard: returns {returned}")
            else:
                returned = last
                if not self.refit:
                    model = evaluator.losses(X, y, [last], rows[fit:fit + 1], validation,
                                             metadata.fit, fit_seeds[:1])[1][0]
        return TuningResult(candidate_params=[returned], best_index=0, best_estimator=model,
                            attributes={"trajectory_": trajectory, "guard_choice_": choice})


@dataclass(frozen=True)
class GIBOCosts:
    """What the tuning spends, solved so that the total meets the budget (:meth:`_plan_costs`).

    ``mu``: the GDP budget of the noisy gradients (validation rows); ``epsilon_fit``: each
    fit's epsilon; ``epsilon_guard``: the guard's selection (validation rows; 0 without it);
    ``n_fits``: the number ``M`` of fits on train rows; ``train`` and ``validation``: the two
    sides' events; ``tuning``: both, in parallel (disjoint rows).
    """

    mu: float
    epsilon_fit: float
    epsilon_guard: float
    n_fits: int
    train: PrivacyEvent
    validation: PrivacyEvent
    tuning: PrivacyEvent


@dataclass(frozen=True, kw_only=True)
class GIBOPlan(TuningPlan):
    """DPGIBOSearchCV's plan: the box, the fits and the noisy gradients."""

    box: Any
    #: fits on train rows (chunks of them with ``train_split="disjoint"``)
    n_fits: int
    #: query points per iteration
    batch: int
    #: fits the query points and records the per-example validation losses
    evaluator: LossEvaluator
    #: the Gaussian process with fixed, public hyperparameters (never fitted on losses)
    gp: RBFGradientModel
    #: the clipped, noisy gradient of each iteration
    noisy: NoisyGradient
    #: the guard's budget (validation rows); 0: no guard
    epsilon_guard: float


#: what ``guard_choice_`` says of the guard's two candidates, in their order
GUARD_CHOICES = ("start", "last")


def guard_sensitivity(m: int) -> float:
    """Replace-one sensitivity of a mean per-example utility in [0, 1] over ``m`` validation
    rows (the models fixed: they are functions of the train rows): ``1 / m``."""
    return 1.0 / int(m)


def guard_selection(losses: np.ndarray, epsilon: float, random_state=None) -> int:
    """The guard's private choice: the index of a column of ``losses`` (start, last).

    ``losses`` (PRIVATE, ``m`` validation rows x 2 points): per-example losses in [0, 1] of the
    two models. The utility of a point is its mean per-example utility ``1 - mean loss``,
    with replace-one sensitivity :func:`guard_sensitivity` ``(m)``; permute-and-flip
    (diffprivlib's ``PermuteAndFlip``, McKenna & Sheldon 2020) picks one: pure
    ``epsilon``-DP with respect to the validation rows. Only the index is released.
    """
    losses = np.asarray(losses, dtype=float)
    selector = PermuteAndFlipSelector(epsilon, sensitivity=guard_sensitivity(len(losses)),
                                      random_state=random_state)
    return selector.select(1.0 - losses.mean(axis=0)).index


def _start(box, estimator) -> np.ndarray:
    """The estimator's own parameters in the cube when they lie in the box, else the centre.

    Public: a function of the configuration only.
    """
    params = get_params(estimator)
    try:
        z = box.to_unit({name: params[name] for name in box.names})
    except (KeyError, TypeError, ValueError):
        return np.full(box.n_dims, 0.5)
    if z.shape == (box.n_dims,) and np.all(np.isfinite(z)) and np.all((z >= 0) & (z <= 1)):
        return z
    return np.full(box.n_dims, 0.5)


def _solve_increasing(function, target: float, search=None) -> float:
    """Largest ``x`` with ``function(x) <= target`` for a continuous increasing function
    (``x`` a little below it: up to ``1e-12`` relative). ``search``: a cheaper approximation of
    ``function`` to find the root with (default ``function``); the root is then lowered until
    ``function`` itself holds."""
    search = function if search is None else search
    lo, hi = 1e-12, 1.0
    while search(hi) < target:
        hi *= 2.0
    root = brentq(lambda x: search(x) - target, lo, hi, xtol=1e-14, rtol=1e-12)
    while function(root) > target:
        root *= 1.0 - 1e-12
    return root


def _privacy_split(costs: GIBOCosts, epsilon_model: float, delta: float) -> dict:
    """``privacy_split_``: how the budget was spent (released, data-independent)."""
    train = event_cost(costs.train, delta)
    validation = event_cost(costs.validation, delta)
    return {"mu": costs.mu, "epsilon_fit": costs.epsilon_fit, "n_fits": costs.n_fits,
            "epsilon_guard": costs.epsilon_guard, "train": train, "validation": validation,
            "refit": (epsilon_model, 0.0)}
