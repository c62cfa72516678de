"""The privacy-utility Pareto front of a DP estimator, by multi-objective Bayesian optimisation.

This is DPareto (Avent et al., PoPETs 2020) for scikit-learn estimators: which settings give the
best utility at each privacy cost? **It is not differentially private** -- see
:func:`privacy_utility_front` and docs/pareto.md.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from diffprivlib import BudgetAccountant
from scipy.optimize import minimize
from sklearn.base import clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
from sklearn.model_selection import KFold, StratifiedKFold, check_cv, cross_val_score
from sklearn.utils import check_scalar
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _num_samples, indexable

from ._base import BaseDPSearchCV
from ._params import get_params, set_params
from ._pareto_math import hvpoi, hypervolume, pareto_mask, probability_of_improvement
from ._seeding import SeedPlan
from ._space import BoxSpace, check_box_space
from .estimators import (
    check_leak_free_configuration,
    check_sound_components,
    clone_with_throwaway_accountants,
    estimator_privacy,
    for_inner_fits,
    seed_dp_components,
    switch_to_sound_fits,
)
from .evaluation._fit import single_threaded_blas
from .evaluation._scores import check_bounded_scorer

__all__ = ["NotPrivateWarning", "ParetoFront", "ParetoPoint", "privacy_utility_front"]

_N_CANDIDATES = 2000  # random candidates per acquisition step
_N_REFINE = 3  # best candidates refined by L-BFGS-B
_MAX_CORNERS = 256  # corners of the box evaluated for the default anti-ideal epsilon
_NOT_PRIVATE = (
    "privacy_utility_front is NOT differentially private: the front, its points, its plot, "
    "its verbose output -- and parameters chosen from it -- depend on the data without "
    "noise. Run it on public or proxy data, or keep the result, and any model trained with "
    "parameters read off it, among people trusted with the data."
)


class NotPrivateWarning(UserWarning):
    """A computation on the data that is not differentially private (its output leaks)."""


@dataclass(frozen=True)
class ParetoPoint:
    """One evaluated setting: its index in the front, cost, utility and parameters."""

    index: int
    epsilon: float
    delta: float
    utility: float
    params: dict


class ParetoFront:
    """Every evaluated point of a privacy-utility search, its front and hypervolume history.

    Returned by :func:`privacy_utility_front`; not meant to be built by hand. Points are in
    evaluation order. Epsilon is minimised and utility maximised.

    Attributes
    ----------
    epsilon, delta : ndarray of shape (n_points,)
        Privacy cost of one fit (or of one search) with each point's parameters.
    utility : ndarray of shape (n_points,)
        Mean cross-validated score over the repeats.
    utility_std : ndarray of shape (n_points,)
        Standard deviation over the repeats of the cross-validated score (noise of the DP fits
        and of the splits).
    params : list of dict
        The parameters of each point.
    source : ndarray of str, shape (n_points,)
        ``"random"`` (initial points) or ``"bo"`` (proposed by the acquisition).
    hypervolume_history : ndarray of shape (n_points,)
        Hypervolume of the points evaluated so far, after each evaluation.
    anti_ideal : tuple of float
        ``(epsilon, utility)`` reference point of the hypervolume.
    space : BoxSpace
        The search space.
    proposal_time, evaluation_time : ndarray of shape (n_points,)
        Seconds spent choosing each point (surrogates and acquisition) and evaluating it
        (privacy and utility oracles).

    Examples
    --------
    >>> import warnings
    >>> from skdptune import privacy_utility_front
    >>> from diffprivlib.models import GaussianNB
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=300, n_features=3, n_redundant=0,
    ...                            random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # NotPrivateWarning: run on public/proxy data
    ...     front = privacy_utility_front(
    ...         GaussianNB(bounds=(-4.0, 4.0)), {"epsilon": (0.05, 5.0, "log")}, X, y,
    ...         cv=3, n_repeats=1, n_initial=4, n_iter=2, random_state=0)
    >>> len(front)
    6
    >>> front.best_under(5.0).epsilon <= 5.0
    True
    """

    def __init__(self, *, epsilon, delta, utility, utility_std, params, source, anti_ideal,
                 space, proposal_time, evaluation_time) -> None:
        self.epsilon = np.asarray(epsilon, dtype=float)
        self.delta = np.asarray(delta, dtype=float)
        self.utility = np.asarray(utility, dtype=float)
        self.utility_std = np.asarray(utility_std, dtype=float)
        self.params = [dict(p) for p in params]
        self.source = np.asarray(source, dtype=str)
        self.anti_ideal = (float(anti_ideal[0]), float(anti_ideal[1]))
        self.space = space
        self.proposal_time = np.asarray(proposal_time, dtype=float)
        self.evaluation_time = np.asarray(evaluation_time, dtype=float)
        self.hypervolume_history = np.array(
            [hypervolume(self._points()[: k + 1], self.anti_ideal) for k in range(len(self))])

    def __len__(self) -> int:
        return len(self.epsilon)

    def __repr__(self) -> str:
        return (f"ParetoFront(n_points={len(self)}, n_pareto={int(self.pareto_mask.sum())}, "
                f"hypervolume={self.hypervolume:.4g}, anti_ideal={self.anti_ideal})")

    def _points(self) -> np.ndarray:
        return np.column_stack([self.epsilon, self.utility])

    @property
    def pareto_mask(self) -> np.ndarray:
        """Boolean mask of the non-dominated points (no other point has lower or equal epsilon
        and higher or equal utility)."""
        return pareto_mask(self._points())

    @property
    def pareto_indices(self) -> np.ndarray:
        """Indices of the non-dominated points, by increasing epsilon."""
        idx = np.flatnonzero(self.pareto_mask)
        return idx[np.argsort(self.epsilon[idx], kind="stable")]

    @property
    def hypervolume(self) -> float:
        """Hypervolume of all the points with respect to ``anti_ideal``."""
        return float(self.hypervolume_history[-1]) if len(self) else 0.0

    def point(self, index: int) -> ParetoPoint:
        """The evaluated point number ``index``."""
        return ParetoPoint(int(index), float(self.epsilon[index]), float(self.delta[index]),
                           float(self.utility[index]), dict(self.params[index]))

    def best_under(self, epsilon: float, delta: float | None = None) -> ParetoPoint:
        """The point of highest utility whose epsilon is at most ``epsilon`` (on the front).

        ``delta``: also at most this delta. ``None`` bounds epsilon only, and warns when the
        points it leaves differ in delta (a space over a ``delta``): their guarantees are then
        not comparable by epsilon alone. Ties go to the smaller epsilon. Raises
        ``ValueError`` when no point is that cheap. On a front of the private data the
        point's parameters are not private (docs/pareto.md, threat model).
        """
        cheap = self.epsilon <= epsilon
        if delta is not None:
            cheap &= self.delta <= delta
        allowed = np.flatnonzero(cheap)
        if not len(allowed):
            bound = f"epsilon <= {epsilon:g}" + ("" if delta is None else f", delta <= {delta:g}")
            raise ValueError(
                f"No evaluated point has {bound}; the smallest epsilon is "
                f"{self.epsilon.min():.4g} and the smallest delta {self.delta.min():.4g}. "
                f"Widen the space towards small epsilons.")
        deltas = self.delta[allowed]
        if delta is None and deltas.min() < deltas.max():
            warnings.warn(
                f"The points with epsilon <= {epsilon:g} have delta from {deltas.min():.3g} to "
                f"{deltas.max():.3g}: pass best_under(epsilon, delta=...) to bound it too.",
                UserWarning, stacklevel=2)
        best = max(allowed, key=lambda i: (self.utility[i], -self.epsilon[i]))
        return self.point(best)

    def to_frame(self):
        """All points as a ``pandas.DataFrame`` (needs pandas: ``pip install skdptune[pandas]``).

        Columns: ``epsilon``, ``delta``, ``utility``, ``utility_std``, ``pareto``, ``source``,
        ``hypervolume`` (after this evaluation), then ``param_<name>`` for every parameter of
        the space (as in scikit-learn's ``cv_results_``).
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_frame needs pandas: pip install 'skdptune[pandas]'") from exc
        frame = pd.DataFrame({
            "epsilon": self.epsilon, "delta": self.delta, "utility": self.utility,
            "utility_std": self.utility_std, "pareto": self.pareto_mask, "source": self.source,
            "hypervolume": self.hypervolume_history,
        })
        for name in self.space.names:
            frame[f"param_{name}"] = [p[name] for p in self.params]
        return frame

    def plot(self, ax=None):
        """Scatter of every point and the front's staircase (needs matplotlib).

        Epsilon is on a log axis (``ax.set_xscale("linear")`` undoes it). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot needs matplotlib: pip install 'skdptune[plot]'") from exc
        if ax is None:
            _, ax = plt.subplots()
        front = self.pareto_indices
        others = ~self.pareto_mask
        ax.scatter(self.epsilon[others], self.utility[others], color="0.65", s=18,
                   label="evaluated")
        ax.step(self.epsilon[front], self.utility[front], where="post", color="C0")
        ax.scatter(self.epsilon[front], self.utility[front], color="C0", s=30, zorder=3,
                   label="Pareto front")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (privacy cost; smaller is more private)")
        ax.set_ylabel("utility (mean cross-validated score)")
        ax.legend(loc="lower right")
        return ax


def privacy_utility_front(
    estimator: Any,
    space: Mapping[str, tuple] | BoxSpace,
    X: Any,
    y: Any = None,
    *,
    scoring: str | Callable | None = None,
    cv: int | Any = 5,
    n_repeats: int = 3,
    n_initial: int = 10,
    n_iter: int = 20,
    anti_ideal: tuple[float | None, float | None] | None = None,
    privacy: Callable[[Any], Any] | None = None,
    n_jobs: int | None = None,
    random_state: int | np.random.RandomState | None = None,
    verbose: int = 0,
) -> ParetoFront:
    """Map the privacy-utility trade-off of a DP estimator (DPareto). NOT differentially private.

    **Threat model.** The front is computed from exact, noise-free scores on ``X, y``: it is a
    function of the data without any privacy guarantee, and so is everything the call returns,
    prints, warns, raises or times (its points, plot, ``verbose`` output, the fits' own
    warnings and exceptions, ``proposal_time`` and ``evaluation_time``). Run it on public or
    proxy data resembling the private data, or show the result only to people trusted with the
    data (Avent et al., Sec. 2.1). A model trained with parameters read off a front of the
    private data is not private either: its epsilon covers the fit, not the choice (tune with a
    DP search to release one). Every call emits a :class:`NotPrivateWarning`. No budget is
    charged: every fit uses a throwaway accountant (an estimator that builds diffprivlib models
    without one inside its ``fit`` charges diffprivlib's default accountant, and the call
    warns).

    The method (docs/pareto.md): ``n_initial`` points drawn uniformly from the box (log-uniform
    on log scales), then ``n_iter`` points chosen by Bayesian optimisation -- two independent
    Gaussian processes (Matern 5/2, fitted kernel hyperparameters) model ``log(epsilon)`` and
    the utility, and the next point maximises the hypervolume-based probability of improvement
    (HVPoI) over random candidates refined by L-BFGS-B.

    Parameters
    ----------
    estimator : estimator object
        A diffprivlib model or a pipeline of them (privacy by :func:`estimator_privacy`), any
        estimator with a ``privacy`` callable, or a skdptune search (privacy by its
        data-independent :meth:`~skdptune.DPRandomSearchCV.planned_privacy`): the front of a
        private search over its own settings.
    space : dict or BoxSpace
        Parameter name -> ``(low, high)`` or ``(low, high, "log")``, including the privacy
        parameters (``"epsilon"``, ``"clf__epsilon"``, ``"scaler__epsilon"``, a search's
        ``"epsilon"`` or ``"estimator__epsilon"``...). Real parameters only.
    X : array-like of shape (n_samples, n_features)
        Public or proxy data (see the threat model).
    y : array-like of shape (n_samples,), default=None
        Targets.
    scoring : str, callable or None, default=None
        Scorer of the utility (higher is better); ``None`` uses the estimator's ``score``.
    cv : int or cross-validation splitter, default=5
        An int gives (stratified for classifiers) K-fold with a fresh shuffle per repeat; a
        splitter is used as given in every repeat.
    n_repeats : int, default=3
        Cross-validations averaged per point (DP fits are random).
    n_initial : int, default=10
        Random initial points (``n_iter=0`` gives plain random sampling).
    n_iter : int, default=20
        Points chosen by Bayesian optimisation after the initial ones.
    anti_ideal : (float or None, float or None) or None, default=None
        Reference point ``(epsilon, utility)`` of the hypervolume; only points with smaller
        epsilon and higher utility count. ``None`` (either coordinate): epsilon = the largest
        epsilon of the privacy oracle at the corners of the box (every point of the space
        counts when privacy is monotone in each parameter); utility = the lower end of the
        scorer's known range (0 for accuracy, r2, roc_auc, f1, ...; other scorers need it).
    privacy : callable or None, default=None
        ``privacy(estimator) -> epsilon or (epsilon, delta)`` for the estimator configured with
        a point's parameters, for mechanisms accounted elsewhere (e.g. DP-SGD with
        dp-accounting). ``None``: :func:`estimator_privacy`, or ``planned_privacy(n_samples)``
        for a skdptune search. A callable's cost is yours to vouch for (it may cost a search
        nested in a pipeline, or a non-private step you account for); diffprivlib models that
        do not meet their own guarantee (``KMeans``) are refused with it too.
    n_jobs : int or None, default=None
        Parallel folds in each cross-validation.
    random_state : None, int or RandomState, default=None
        Seeds the initial points, candidates, splits and the DP noise of the fits (a point's
        utility then depends only on its index and parameters). ``None``: fresh randomness.
    verbose : int, default=0
        ``>= 1`` prints every evaluation ``k/N`` with its epsilon, utility and the hypervolume.

    Returns
    -------
    ParetoFront
        Every evaluated point, the non-dominated subset, the hypervolume after each evaluation,
        ``plot``, ``to_frame`` and ``best_under``.

    Warns
    -----
    NotPrivateWarning
        Always: the result is not differentially private.

    See Also
    --------
    skdptune.estimator_privacy : the default privacy oracle.

    Examples
    --------
    >>> import warnings
    >>> from skdptune import privacy_utility_front
    >>> from diffprivlib.models import GaussianNB
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=300, n_features=3, n_redundant=0, random_state=0)
    >>> model = GaussianNB(bounds=(-5.0, 5.0))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     front = privacy_utility_front(model, {"epsilon": (0.01, 10.0, "log")}, X, y,
    ...                                   cv=3, n_repeats=1, n_initial=4, n_iter=2,
    ...                                   random_state=0)
    >>> len(front)  # GaussianNB pays 5/3 of its epsilon under replace-one (docs/privacy.md)
    6
    >>> round(front.anti_ideal[0], 4), front.anti_ideal[1]
    (16.6667, 0.0)
    >>> front.best_under(10.0).epsilon <= 10.0
    True
    """
    warnings.warn(_NOT_PRIVATE, NotPrivateWarning, stacklevel=2)
    box = check_box_space(space)
    _check_counts(n_repeats=n_repeats, n_initial=n_initial, n_iter=n_iter, verbose=verbose)
    X, y = indexable(X, y)
    seeds = SeedPlan(random_state)
    privacy_of = _privacy_oracle(estimator, privacy, _num_samples(X))
    anti_ideal = _resolve_anti_ideal(anti_ideal, box, privacy_of, estimator, scoring, seeds)
    utility_of = _UtilityOracle(estimator, X, y, scoring, cv, n_repeats, n_jobs, seeds)

    # one BLAS thread: the fits and the GP algebra are small (see single_threaded_blas)
    with single_threaded_blas(), _warn_if_the_default_accountant_is_charged():
        records = _optimise(box, privacy_of, utility_of, anti_ideal, seeds,
                            n_initial=n_initial, n_total=n_initial + n_iter, verbose=verbose)
    return ParetoFront(anti_ideal=anti_ideal, space=box, **records)


@contextlib.contextmanager
def _warn_if_the_default_accountant_is_charged():
    """Warn when diffprivlib's default accountant is charged during the call.

    Every fit inside has throwaway accountants, but a user's estimator (admitted with
    ``privacy=``) that builds diffprivlib models inside its ``fit`` without an accountant makes
    them load the default one (measured: 24 charges, epsilon 19.2, in one small front).
    Replacing the default for the call would also swallow the charges of the user's other
    threads, so the front says it instead (process-local: fits in other processes charge
    theirs)."""
    default = BudgetAccountant.load_default(None)
    before = len(default.spent_budget)
    yield
    charges = len(default.spent_budget) - before
    if BudgetAccountant.load_default(None) is default and charges > 0:
        warnings.warn(
            f"diffprivlib's default accountant was charged {charges} times during "
            f"privacy_utility_front (total epsilon now {default.total()[0]:.4g}): an estimator "
            f"built diffprivlib models without an accountant inside its fit. Give it an "
            f"accountant parameter to pass on; the front's own fits charge nobody.",
            UserWarning, stacklevel=3)


def _optimise(box: BoxSpace, privacy_of, utility_of, anti_ideal, seeds: SeedPlan, *,
              n_initial: int, n_total: int, verbose: int) -> dict[str, list]:
    """DPareto's loop (Avent et al., Alg. 2): random points, then HVPoI maximisers."""
    records: dict[str, list] = {key: [] for key in (
        "epsilon", "delta", "utility", "utility_std", "params", "source", "proposal_time",
        "evaluation_time")}
    cube_points = []
    for k in range(n_total):
        start = time.perf_counter()
        if k < n_initial:
            z, source = seeds.rng("sampling", 0, k).uniform(size=box.n_dims), "random"
        else:
            points = np.column_stack([records["epsilon"], records["utility"]])
            z = _propose(np.array(cube_points), points, anti_ideal,
                         seeds.rng("sampling", 1, k))
            source = "bo"
        proposed = time.perf_counter()
        params = box.from_unit(z)
        epsilon, delta = privacy_of(params)
        utility, utility_std = utility_of(params, k)
        cube_points.append(np.clip(z, 0.0, 1.0))
        for key, value in (("epsilon", epsilon), ("delta", delta), ("utility", utility),
                           ("utility_std", utility_std), ("params", params), ("source", source),
                           ("proposal_time", proposed - start),
                           ("evaluation_time", time.perf_counter() - proposed)):
            records[key].append(value)
        if verbose:
            points = np.column_stack([records["epsilon"], records["utility"]])
            print(f"[privacy_utility_front] evaluation {k + 1}/{n_total} ({source}): "
                  f"epsilon={epsilon:.4g}, utility={utility:.4f}, "
                  f"hypervolume={hypervolume(points, anti_ideal):.4g}", flush=True)
    return records


def _check_counts(*, n_repeats, n_initial, n_iter, verbose) -> None:
    check_scalar(n_repeats, "n_repeats", numbers.Integral, min_val=1)
    check_scalar(n_initial, "n_initial", numbers.Integral, min_val=1)
    check_scalar(n_iter, "n_iter", numbers.Integral, min_val=0)
    check_scalar(verbose, "verbose", numbers.Integral, min_val=0)


# -- privacy oracle ---------------------------------------------------------------------------
def _privacy_oracle(estimator, privacy, n_samples: int) -> Callable[[dict], tuple[float, float]]:
    """``params -> (epsilon, delta)``: data-independent, from the configured estimator."""
    if privacy is not None and not callable(privacy):
        raise ValueError(f"privacy must be a callable or None; got {privacy!r}.")
    is_search = isinstance(estimator, BaseDPSearchCV)

    def privacy_of(params: dict) -> tuple[float, float]:
        configured = set_params(clone(estimator), **params)
        if not is_search:
            # a model that reads its bounds off the data would show a utility it cannot have
            check_leak_free_configuration(configured)
        if privacy is not None:
            # a diffprivlib model that does not meet its own guarantee (KMeans) is refused
            # whatever cost a user's callable states for it
            check_sound_components(configured)
            cost = privacy(configured)
        elif is_search:
            cost = configured.planned_privacy(n_samples)
        else:
            cost = estimator_privacy(configured)
        return _check_cost(cost, params)

    return privacy_of


def _check_cost(cost, params: dict) -> tuple[float, float]:
    """``(epsilon, delta)`` from a number, a pair or a PrivacyReport; epsilon finite > 0."""
    epsilon, delta = (cost, 0.0) if isinstance(cost, numbers.Real) else tuple(cost)
    epsilon, delta = float(epsilon), float(delta)
    if not (math.isfinite(epsilon) and epsilon > 0 and 0 <= delta <= 1):
        raise ValueError(
            f"The privacy oracle returned epsilon={epsilon!r}, delta={delta!r} for {params!r}; "
            "the front needs a finite epsilon > 0 and a delta in [0, 1].")
    return epsilon, delta


# -- anti-ideal point -------------------------------------------------------------------------
def _resolve_anti_ideal(anti_ideal, box: BoxSpace, privacy_of, estimator, scoring,
                        seeds: SeedPlan) -> tuple[float, float]:
    eps_ref, u_ref = (None, None) if anti_ideal is None else _check_pair(anti_ideal)
    if eps_ref is None:
        eps_ref = _max_epsilon(box, privacy_of, seeds)
    if u_ref is None:
        u_ref = _worst_utility(estimator, scoring)
    if not eps_ref > 0:
        raise ValueError(f"The anti-ideal epsilon must be > 0; got {eps_ref!r}.")
    return float(eps_ref), float(u_ref)


def _check_pair(anti_ideal) -> tuple[float | None, float | None]:
    try:
        eps_ref, u_ref = anti_ideal
    except (TypeError, ValueError):
        raise ValueError(
            f"anti_ideal must be (epsilon, utility), either may be None; got {anti_ideal!r}."
        ) from None
    for value in (eps_ref, u_ref):
        if value is not None and not (isinstance(value, numbers.Real)
                                      and math.isfinite(value)):
            raise ValueError(f"anti_ideal values must be finite numbers; got {anti_ideal!r}.")
    return eps_ref, u_ref


def _max_epsilon(box: BoxSpace, privacy_of, seeds: SeedPlan) -> float:
    """Largest epsilon at the corners of the box (a random subset of them in high dimension)."""
    corners = box.corners() if box.n_dims <= math.log2(_MAX_CORNERS) else (
        seeds.rng("sampling", 2).randint(0, 2, size=(_MAX_CORNERS, box.n_dims)).astype(float))
    return max(privacy_of(box.from_unit(z))[0] for z in corners)


def _worst_utility(estimator, scoring) -> float:
    try:
        return check_bounded_scorer(scoring, None, estimator).lo
    except ValueError:
        raise ValueError(
            f"No default anti-ideal utility for scoring={scoring!r}: its range is unknown. "
            "Give anti_ideal=(None, worst_utility) with the worst utility worth showing."
        ) from None


# -- utility oracle ---------------------------------------------------------------------------
class _UtilityOracle:
    """``(params, index) -> (mean, std)`` of the cross-validated score over the repeats."""

    def __init__(self, estimator, X, y, scoring, cv, n_repeats, n_jobs, seeds: SeedPlan):
        self.estimator = estimator
        self.X, self.y = X, y
        self.scoring = scoring
        self.n_repeats = n_repeats
        self.n_jobs = n_jobs
        self.seeds = seeds
        classifier = is_classifier(estimator)
        if isinstance(cv, numbers.Integral):
            stratify = classifier and type_of_target(y) in ("binary", "multiclass")
            self._splitter_class = StratifiedKFold if stratify else KFold
            self.n_splits = int(cv)
            self.fixed_cv = None
        else:
            self.fixed_cv = check_cv(cv, y, classifier=classifier)

    def _cv(self, index: int, repeat: int):
        if self.fixed_cv is not None:
            return self.fixed_cv
        return self._splitter_class(self.n_splits, shuffle=True,
                                    random_state=self.seeds.seed("split", index, repeat))

    def _throwaway_clone(self, params: dict, seed: int | None):
        est = set_params(clone_with_throwaway_accountants(self.estimator),
                         **clone_with_throwaway_accountants(params))
        for_inner_fits(est)
        # a search nested in a pipeline or another meta-estimator charges its own accountant,
        # and with accountant=None diffprivlib's default one: give it a throwaway one too
        nested = {f"{key}__accountant": BudgetAccountant()
                  for key, value in get_params(est).items()
                  if isinstance(value, BaseDPSearchCV)}
        if nested:
            set_params(est, **nested)
        if isinstance(est, BaseDPSearchCV):
            # a search charges its own accountant (None: diffprivlib's default) once per fit
            set_params(est, accountant=BudgetAccountant(), random_state=seed)
        elif seed is not None:
            seed_dp_components(est, seed)
        # fitted as the searches fit it, and priced as such (cross_val_score's clones keep
        # the class): skdptune.estimators.switch_to_sound_fits
        switch_to_sound_fits(est)
        return est

    def __call__(self, params: dict, index: int) -> tuple[float, float]:
        scores = []
        for repeat in range(self.n_repeats):
            est = self._throwaway_clone(params, self.seeds.noise_seed("fit", index, repeat))
            folds = cross_val_score(est, self.X, self.y, scoring=self.scoring,
                                    cv=self._cv(index, repeat), n_jobs=self.n_jobs,
                                    error_score="raise")
            scores.append(float(np.mean(folds)))
        return float(np.mean(scores)), float(np.std(scores))


# -- Bayesian optimisation --------------------------------------------------------------------
def _fit_surrogate(Z: np.ndarray, target: np.ndarray, rng: np.random.RandomState):
    """GP with a Matern 5/2 kernel (one length scale per coordinate) and fitted noise."""
    d = Z.shape[1]
    kernel = (ConstantKernel(1.0, (1e-2, 1e2))
              * Matern(length_scale=np.full(d, 0.5), length_scale_bounds=(1e-2, 1e2), nu=2.5)
              + WhiteKernel(1e-2, (1e-8, 1.0)))
    gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=2,
                                  random_state=rng)
    with warnings.catch_warnings():
        # hyperparameters at a bound are expected with few points; the fit is still usable
        warnings.simplefilter("ignore", ConvergenceWarning)
        return gp.fit(Z, target)


def _propose(Z: np.ndarray, points: np.ndarray, anti_ideal, rng) -> np.ndarray:
    """Next point of the unit cube: the HVPoI maximiser (candidates, then L-BFGS-B)."""
    gp_eps = _fit_surrogate(Z, np.log(points[:, 0]), rng)
    # below the anti-ideal a utility adds no hypervolume, however low: clipped there, one
    # extreme score (an r2 of -1e6) cannot flatten the surrogate's standardised target
    gp_util = _fit_surrogate(Z, np.maximum(points[:, 1], anti_ideal[1]), rng)

    def predictive(Zc):
        mu_e, s_e = gp_eps.predict(Zc, return_std=True)
        mu_u, s_u = gp_util.predict(Zc, return_std=True)
        return mu_e, s_e, mu_u, s_u

    candidates = rng.uniform(size=(_N_CANDIDATES, Z.shape[1]))
    values = hvpoi(*predictive(candidates), points, anti_ideal)
    if not values.max() > 0:
        # every predicted mean is dominated: HVPoI is flat at 0, so go where improving at all
        # is most likely
        poi = probability_of_improvement(*predictive(candidates), points, anti_ideal)
        return candidates[int(np.argmax(poi))]
    scale = values.max()

    def negative(z):
        return -hvpoi(*predictive(z[None, :]), points, anti_ideal)[0] / scale

    best_z, best_value = candidates[int(np.argmax(values))], 1.0
    for z0 in candidates[np.argsort(values)[-_N_REFINE:]]:
        result = minimize(negative, z0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * Z.shape[1],
                          options={"maxiter": 30})
        if -result.fun > best_value:
            best_z, best_value = result.x, -result.fun
    return np.clip(best_z, 0.0, 1.0)
