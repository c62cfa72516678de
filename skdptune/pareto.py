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
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
from sklearn.model_selection import KFold, StratifiedKFold, check_cv, cross_val_score
from sklearn.pipeline import Pipeline
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
    nonprivate_counterpart,
    seed_dp_components,
    switch_to_sound_fits,
)
from .evaluation._fit import single_threaded_blas
from .evaluation._scores import check_bounded_scorer

__all__ = ["NotPrivateWarning", "ParetoFront", "ParetoPoint", "Reference",
           "privacy_utility_front"]

_N_CANDIDATES = 2000  # random candidates per acquisition step
_N_REFINE = 3  # best candidates refined by L-BFGS-B
_SAME_POINT = 1e-3  # unit-cube distance (each coordinate) under which a point is evaluated
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


@dataclass(frozen=True)
class Reference:
    """A model the front is compared with, scored on the same splits as the points.

    ``label`` names it on the plot; ``estimator`` is the unfitted model; ``utility`` and
    ``utility_std`` are the mean and the standard deviation over the repeats of its
    cross-validated score, as for a point. Not private (docs/pareto.md, threat model).
    """

    label: str
    estimator: Any
    utility: float
    utility_std: float


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
    scoring : str, callable or None
        The scorer of the utility (``None``: the estimator's ``score``).
    references : dict of str to Reference
        The models the points are compared with, scored on the same splits:
        ``"constant"``, a constant predictor (the majority class of a classifier's rows, the
        mean of a regressor's targets), and ``"nonprivate"``, the estimator's non-private
        counterpart or the model given as ``reference``; absent when there is none.
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
    >>> sorted(front.references)  # a majority-class predictor and scikit-learn's GaussianNB
    ['constant', 'nonprivate']
    >>> front.references["constant"].utility  # balanced accuracy of a constant: 1 / 2
    0.5
    """

    def __init__(self, *, epsilon, delta, utility, utility_std, params, source, anti_ideal,
                 space, proposal_time, evaluation_time, scoring=None,
                 references=None) -> None:
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
        self.scoring = scoring
        self.references = dict(references or {})
        self.hypervolume_history = np.array(
            [hypervolume(self._points()[: k + 1], self.anti_ideal) for k in range(len(self))])

    def __len__(self) -> int:
        return len(self.epsilon)

    def __repr__(self) -> str:
        references = {key: round(ref.utility, 4) for key, ref in self.references.items()}
        return (f"ParetoFront(n_points={len(self)}, n_pareto={int(self.pareto_mask.sum())}, "
                f"hypervolume={self.hypervolume:.4g}, anti_ideal={self.anti_ideal}, "
                f"scoring={_scoring_name(self.scoring)!r}, references={references})")

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
        """Every point with its error bar, the front's staircase and the references (needs
        matplotlib).

        Error bars are one standard deviation over the repeats (``utility_std``); each
        reference is a horizontal line, its band one standard deviation. Epsilon is on a log
        axis (``ax.set_xscale("linear")`` undoes it). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot needs matplotlib: pip install 'skdptune[plot]'") from exc
        if ax is None:
            _, ax = plt.subplots()
        front = self.pareto_indices
        others = ~self.pareto_mask
        ax.errorbar(self.epsilon[others], self.utility[others], yerr=self.utility_std[others],
                    fmt="o", color="0.65", ms=4, elinewidth=0.8,
                    label="evaluated (bars: ±1 sd over repeats)")
        ax.step(self.epsilon[front], self.utility[front], where="post", color="C0")
        ax.errorbar(self.epsilon[front], self.utility[front], yerr=self.utility_std[front],
                    fmt="o", color="C0", ms=5.5, elinewidth=1.0, capsize=2, zorder=3,
                    label="Pareto front")
        for (color, style), ref in zip([("0.3", "--"), ("C2", "-.")],
                                       self.references.values(), strict=False):
            ax.axhline(ref.utility, color=color, ls=style, lw=1.2,
                       label=f"{ref.label}: {ref.utility:.3f}")
            if ref.utility_std > 0:
                ax.axhspan(ref.utility - ref.utility_std, ref.utility + ref.utility_std,
                           color=color, alpha=0.12, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (privacy cost; smaller is more private)")
        ax.set_ylabel(f"utility ({_scoring_name(self.scoring)}, mean over repeats)")
        ax.legend(loc="best", fontsize="small")
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
    reference: Any = None,
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
    (HVPoI) over random candidates refined by L-BFGS-B, among the points not evaluated yet.
    Every point, and every reference model (a constant predictor; the estimator's non-private
    counterpart), is scored on the same ``n_repeats`` cross-validation splits.

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
        Scorer of the utility (higher is better). ``None``: ``"balanced_accuracy"`` for a
        classifier and ``"r2"`` for a regressor -- scores a constant predictor cannot beat by
        chance (1 / n_classes and about 0), where accuracy gives it the majority class's
        share -- and the estimator's ``score`` for anything else.
    cv : int or cross-validation splitter, default=5
        An int gives (stratified for classifiers) K-fold with a fresh shuffle per repeat; a
        splitter is split once per repeat. Repeat ``r`` uses the same splits for every point
        and every reference.
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
        counts when privacy is monotone in each parameter); utility = the score of a constant
        predictor where the scorer's is known -- 1 / n_classes for balanced accuracy, the
        majority class's share for accuracy, 0.5 for roc_auc, 0 for r2 and
        matthews_corrcoef -- so that a point no better than a constant adds no hypervolume;
        otherwise the lower end of the scorer's known range (0 for f1, precision, ...); other
        scorers need it.
    reference : None, False or estimator, default=None
        The non-private model the points are compared with (``references["nonprivate"]``,
        a line on the plot), scored on the same splits. ``None``: the estimator with every
        diffprivlib model replaced by the scikit-learn model it stands in for, with the same
        non-private settings as configured (diffprivlib's ``LogisticRegression`` ->
        scikit-learn's ``LogisticRegression(C=...)``; skdptune's ``SSPRegressor`` ->
        ``LinearRegression``; a pipeline step by step), when every component has one, and no
        reference otherwise (a skdptune search, a model of your own). ``False``: none. A
        constant predictor (``references["constant"]``) is always scored for a classifier or
        a regressor.
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
    >>> round(front.anti_ideal[0], 4), front.anti_ideal[1]  # balanced accuracy: chance is 1/2
    (16.6667, 0.5)
    >>> front.best_under(10.0).epsilon <= 10.0
    True
    """
    warnings.warn(_NOT_PRIVATE, NotPrivateWarning, stacklevel=2)
    box = check_box_space(space)
    _check_counts(n_repeats=n_repeats, n_initial=n_initial, n_iter=n_iter, verbose=verbose)
    X, y = indexable(X, y)
    seeds = SeedPlan(random_state)
    scoring = _default_scoring(estimator, scoring)
    compared = _reference_models(estimator, reference, y)
    privacy_of = _privacy_oracle(estimator, privacy, _num_samples(X))
    anti_ideal = _resolve_anti_ideal(anti_ideal, box, privacy_of, estimator, scoring, y, seeds)
    utility_of = _UtilityOracle(estimator, X, y, scoring, cv, n_repeats, n_jobs, seeds)

    # one BLAS thread: the fits and the GP algebra are small (see single_threaded_blas)
    with single_threaded_blas(), _warn_if_the_default_accountant_is_charged():
        # first: a reference that cannot be fitted fails before the points are evaluated
        references = {key: Reference(label, model, *utility_of.reference(model, number))
                      for number, (key, (label, model)) in enumerate(compared.items())}
        if verbose:
            for ref in references.values():
                print(f"[privacy_utility_front] reference {ref.label}: utility="
                      f"{ref.utility:.4f} +- {ref.utility_std:.4f}", flush=True)
        records = _optimise(box, privacy_of, utility_of, anti_ideal, seeds,
                            n_initial=n_initial, n_total=n_initial + n_iter, verbose=verbose)
    return ParetoFront(anti_ideal=anti_ideal, space=box, scoring=scoring,
                       references=references, **records)


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


# -- scoring and references --------------------------------------------------------------------
def _default_scoring(estimator, scoring):
    """``scoring``, or for ``None`` a score that a constant predictor cannot raise by chance:
    balanced accuracy for a classifier, r2 for a regressor (the estimator's ``score``
    otherwise)."""
    if scoring is not None:
        return scoring
    if is_classifier(estimator):
        return "balanced_accuracy"
    if is_regressor(estimator):
        return "r2"
    return None


def _scoring_name(scoring) -> str:
    if scoring is None:
        return "score"
    return scoring if isinstance(scoring, str) else getattr(scoring, "__name__", repr(scoring))


def _reference_models(estimator, reference, y) -> dict[str, tuple[str, Any]]:
    """``key -> (label, unfitted model)`` of the references to score: a constant predictor
    for a classifier or a regressor, and ``reference`` (``None``: the estimator's non-private
    counterpart, where it has one)."""
    if not (reference is None or reference is False
            or (hasattr(reference, "fit") and not isinstance(reference, type))):
        raise ValueError(f"reference must be None, False or an estimator; got {reference!r}.")
    out = {}
    if y is not None and is_classifier(estimator):
        # "prior" predicts the majority class, as "most_frequent" does, and gives the class
        # shares as probabilities (one-hot ones would give a log loss of -inf)
        out["constant"] = ("majority class", DummyClassifier(strategy="prior"))
    elif y is not None and is_regressor(estimator):
        out["constant"] = ("mean of the target", DummyRegressor(strategy="mean"))
    if reference is None:
        counterpart = nonprivate_counterpart(estimator)
        if counterpart is not None:
            out["nonprivate"] = (f"non-private {_model_name(counterpart)}", counterpart)
    elif reference is not False:
        out["nonprivate"] = (f"reference {_model_name(reference)}", reference)
    return out


def _model_name(model) -> str:
    if isinstance(model, Pipeline):
        return " + ".join(_model_name(step) for _, step in model.steps
                          if step is not None and not isinstance(step, str))
    return type(model).__name__


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
def _resolve_anti_ideal(anti_ideal, box: BoxSpace, privacy_of, estimator, scoring, y,
                        seeds: SeedPlan) -> tuple[float, float]:
    eps_ref, u_ref = (None, None) if anti_ideal is None else _check_pair(anti_ideal)
    if eps_ref is None:
        eps_ref = _max_epsilon(box, privacy_of, seeds)
    if u_ref is None:
        u_ref = _worst_utility(estimator, scoring, y)
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


#: the score of a constant predictor, where a scorer's is known: from the labels ...
_CHANCE_FROM_LABELS: Mapping[str, Callable[[np.ndarray], float]] = {
    "balanced_accuracy": lambda y: 1.0 / len(np.unique(y)),
    "accuracy": lambda y: float(np.unique(y, return_counts=True)[1].max() / len(y)),
}
#: ... or whatever the data
_CHANCE: Mapping[str, float] = {
    **dict.fromkeys(("roc_auc", "roc_auc_ovr", "roc_auc_ovo", "roc_auc_ovr_weighted",
                     "roc_auc_ovo_weighted"), 0.5),
    "matthews_corrcoef": 0.0,
    "r2": 0.0,
}


def _worst_utility(estimator, scoring, y) -> float:
    """The worst utility worth showing: a constant predictor's score where the scorer's is
    known (the front is not private: it may read the labels), else the lower end of the
    scorer's range."""
    if isinstance(scoring, str):
        if scoring in _CHANCE:
            return _CHANCE[scoring]
        if scoring in _CHANCE_FROM_LABELS and y is not None \
                and type_of_target(y) in ("binary", "multiclass"):
            return _CHANCE_FROM_LABELS[scoring](np.asarray(y))
    try:
        return check_bounded_scorer(scoring, None, estimator).lo
    except ValueError:
        raise ValueError(
            f"No default anti-ideal utility for scoring={scoring!r}: its range is unknown. "
            "Give anti_ideal=(None, worst_utility) with the worst utility worth showing."
        ) from None


# -- utility oracle ---------------------------------------------------------------------------
class _UtilityOracle:
    """The mean and the standard deviation over the repeats of an estimator's cross-validated
    score; repeat ``r`` uses the same splits for every point and every reference."""

    def __init__(self, estimator, X, y, scoring, cv, n_repeats, n_jobs, seeds: SeedPlan):
        self.estimator = estimator
        self.X, self.y = X, y
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.seeds = seeds
        classifier = is_classifier(estimator)
        if isinstance(cv, numbers.Integral):
            stratify = classifier and type_of_target(y) in ("binary", "multiclass")
            splitter = StratifiedKFold if stratify else KFold
            splitters = [splitter(int(cv), shuffle=True, random_state=seeds.seed("split", r))
                         for r in range(n_repeats)]
        else:
            splitters = [check_cv(cv, y, classifier=classifier)] * n_repeats
        # split once per repeat: a shuffling splitter without a seed would split afresh at
        # every use, and the points and the references would not be scored alike
        self.splits = [list(splitter.split(X, y)) for splitter in splitters]

    def __call__(self, params: dict, index: int) -> tuple[float, float]:
        """Point ``index``, the estimator with ``params``."""
        return self._score(self.estimator, params, "fit", index)

    def reference(self, model, number: int) -> tuple[float, float]:
        """Reference ``number``, ``model`` as it is."""
        return self._score(model, {}, "reference", number)

    def _score(self, model, params: dict, stream: str, key: int) -> tuple[float, float]:
        scores = []
        for repeat, splits in enumerate(self.splits):
            est = _throwaway_clone(model, params, self.seeds.noise_seed(stream, key, repeat))
            folds = cross_val_score(est, self.X, self.y, scoring=self.scoring, cv=splits,
                                    n_jobs=self.n_jobs, error_score="raise")
            scores.append(float(np.mean(folds)))
        return float(np.mean(scores)), float(np.std(scores))


def _throwaway_clone(model, params: dict, seed: int | None):
    """A clone of ``model`` with ``params``, every accountant in it a throwaway one, seeded by
    ``seed``, fitted soundly: it charges nobody."""
    est = set_params(clone_with_throwaway_accountants(model),
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
    """Next point of the unit cube: the HVPoI maximiser (candidates, then L-BFGS-B) that is not
    a point already evaluated (:func:`_first_new`)."""
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
        return _first_new(candidates[np.argsort(-poi, kind="stable")], Z, rng)
    scale = values.max()

    def negative(z):
        return -hvpoi(*predictive(z[None, :]), points, anti_ideal)[0] / scale

    refined = []
    for z0 in candidates[np.argsort(values)[-_N_REFINE:]]:
        result = minimize(negative, z0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * Z.shape[1],
                          options={"maxiter": 30})
        refined.append((-result.fun, np.clip(result.x, 0.0, 1.0)))
    # best first; a refined point only ahead of the best candidate when it beats it
    ahead = sorted((entry for entry in refined if entry[0] > 1.0), key=lambda e: -e[0])
    ranked = [z for _, z in ahead] + list(candidates[np.argsort(-values, kind="stable")])
    return _first_new(ranked, Z, rng)


def _first_new(ranked, Z: np.ndarray, rng) -> np.ndarray:
    """The first point of ``ranked`` farther than :data:`_SAME_POINT` from every evaluated point
    (coordinate-wise, in the unit cube); a fresh uniform point when none is.

    Re-evaluating a setting adds nothing to the front but one more noisy draw of the same
    utility, and the front keeps the best of them: an optimistic point, bought with an
    evaluation. The acquisition lands on evaluated points where the surrogate's mean exceeds
    the observation (a noisy point), and L-BFGS-B stops on the box's faces: the same corner
    was evaluated four times in a row."""
    for z in ranked:
        if not np.any(np.all(np.abs(Z - z) <= _SAME_POINT, axis=1)):
            return np.asarray(z, dtype=float)
    return rng.uniform(size=Z.shape[1])
