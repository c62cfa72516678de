"""The base class every private search shares (the role of scikit-learn's ``BaseSearchCV``).

``BaseDPSearchCV.fit`` owns the privacy contract (DESIGN.md section 2) so that no search can
forget a step of it:

1. validate the parameters (``_parameter_constraints``) and the estimator's configuration
   (a diffprivlib model that would read its bounds off the data raises ``PrivacyLeakError``),
   before touching any data;
2. compute the whole cost -- tuning (the subclass's data-independent plan) plus the returned
   model -- from data-independent quantities only, and ``accountant.check`` it, so that a
   short budget fails before any data is read;
3. run the private tuning (subclass hook ``_run_tuning``), then refit;
4. charge the user's accountant exactly once with exactly ``privacy_spent_``. If anything fails
   after the data has been touched (except ``PrivacyLeakError``, which reflects the
   configuration), the full planned cost is still charged before the error propagates: the
   data was used, and an honest ledger says so.

A subclass provides ``_search_space()`` (for the cost of the returned model, maximised over the
space), ``_plan_tuning(n_samples, seeds)`` (data-independent: the tuning's cost events and
whatever the run needs) and ``_run_tuning(plan, X, y, fit_params, seeds)``, which returns a
:class:`TuningResult` holding released information only.
"""

from __future__ import annotations

import numbers
import time
from abc import abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted, indexable

from ._estimators import check_leak_free_configuration, estimator_privacy
from ._seeding import SeedPlan
from .accounting import privacy_report
from .evaluation._fit import fit_on_rows, prepare_clone
from .events import EpsilonDeltaEvent, PrivacyEvent
from .exceptions import PrivacyLeakError

__all__ = ["BaseDPSearchCV", "TuningPlan", "TuningResult"]


@dataclass
class TuningPlan:
    """What a search decided before seeing data: its cost events and run-time settings."""

    events: list[tuple[str, PrivacyEvent]]
    settings: dict[str, Any] = field(default_factory=dict)


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
            f"{attr} is available only when a model is returned; refit the estimator "
            "yourself with `best_params_` (and account for that fit's privacy cost)."
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
    """``param_<name>`` masked arrays, as in scikit-learn's ``cv_results_``."""
    n = len(candidate_params)
    arrays = defaultdict(lambda: np.ma.MaskedArray(np.empty(n, dtype=object), mask=True))
    for i, params in enumerate(candidate_params):
        for name, value in params.items():
            arrays[f"param_{name}"][i] = value
    return dict(arrays)


class BaseDPSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Abstract base class of the differentially private searches.

    Not for direct use: see :class:`~skdptune.DPGridSearchCV`.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "refit": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "error_score": [StrOptions({"raise"}), numbers.Real],
        "accountant": [BudgetAccountant, None],
    }

    @abstractmethod
    def __init__(self, estimator, *, refit=True, n_jobs=None, verbose=0, random_state=None,
                 error_score=0.0, accountant=None):
        self.estimator = estimator
        self.refit = refit
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
    def _plan_tuning(self, n_samples: int, seeds: SeedPlan) -> TuningPlan:
        """Data-independent plan: cost events of the tuning and settings for the run."""

    @abstractmethod
    def _run_tuning(self, plan: TuningPlan, X, y, fit_params, seeds: SeedPlan) -> TuningResult:
        """Run the private tuning. Must return released information only."""

    def _final_model_cost(self) -> tuple[float, float]:
        """(epsilon, delta) of the returned model: the estimator's own, max over the space."""
        return estimator_privacy(self.estimator, self._search_space())

    def _final_model_params(self, result: TuningResult) -> dict:
        return result.candidate_params[result.best_index]

    def _refit_epsilon_scale(self) -> float | None:
        """Factor on the DP epsilons of the refitted model (budget modes); None: as given."""
        return None

    # -- helpers -------------------------------------------------------------------------------
    def _log(self, level: int, message: str) -> None:
        """Print public progress information (never a score) when ``verbose >= level``."""
        if self.verbose >= level:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def _check_error_score(self):
        if self.error_score == "raise":
            import warnings

            warnings.warn(
                "error_score='raise' lets exceptions from fits on private data escape, which "
                "voids the differential privacy guarantee. Use it for debugging only.",
                UserWarning,
                stacklevel=3,
            )
        elif not 0.0 <= float(self.error_score) <= 1.0:
            raise ValueError(
                "error_score is a utility in [0, 1] (the bounded-utility scale), got "
                f"{self.error_score!r}"
            )

    # -- fit -----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Run the private search and (optionally) refit the selected candidate on all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: the private rows.
        y : array-like of shape (n_samples,), default=None
            Targets; ``None`` for unsupervised estimators.
        **fit_params : dict
            Passed to the estimator's ``fit`` (row-aligned ones, such as ``sample_weight``,
            are indexed with the rows).

        Returns
        -------
        self : object
            The fitted search.
        """
        self._check_error_score()
        check_leak_free_configuration(self.estimator, self._search_space())
        X, y = indexable(X, y)
        n_samples = _num_samples(X)  # n is public under replace-one neighbours
        seeds = SeedPlan(self.random_state)

        plan = self._plan_tuning(n_samples, seeds)
        components = list(plan.events)
        if self.refit:
            eps_model, delta_model = self._final_model_cost()
            components.append(("returned model (refit on all rows)",
                               EpsilonDeltaEvent(eps_model, delta_model, "refit")))
        report = privacy_report(components, delta=self._target_delta())
        accountant = BudgetAccountant.load_default(self.accountant)
        accountant.check(report.epsilon, report.delta)
        self._log(1, f"privacy budget checked: epsilon={report.epsilon:.4g}, "
                     f"delta={report.delta:.3g}")

        try:
            start = time.perf_counter()
            result = self._run_tuning(plan, X, y, fit_params, seeds)
            self._log(1, f"private tuning done in {time.perf_counter() - start:.1f}s")
            self._store_result(result)
            if self.refit:
                self._refit(X, y, fit_params, seeds, result)
            elif result.best_estimator is not None:
                self.best_estimator_ = result.best_estimator
        except PrivacyLeakError:
            raise
        except BaseException:
            # the data has been touched: charge the planned cost before propagating
            accountant.spend(report.epsilon, report.delta)
            raise
        accountant.spend(report.epsilon, report.delta)
        self.privacy_spent_ = report
        return self

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

    def _refit(self, X, y, fit_params, seeds, result):
        params = self._final_model_params(result)
        est = prepare_clone(self.estimator, params,
                            seed=seeds.seed("refit") if seeds.seeded else None,
                            epsilon_scale=self._refit_epsilon_scale())
        start = time.perf_counter()
        fit_on_rows(est, X, y, None, fit_params)
        self.refit_time_ = time.perf_counter() - start
        self.best_estimator_ = est
        self._log(1, f"refit on all rows in {self.refit_time_:.1f}s")

    # -- delegation ----------------------------------------------------------------------------
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

    def score(self, X, y=None):
        """Score of the returned model on ``(X, y)`` with the search's scorer (``scorer_``).

        The score is computed on the data you pass (e.g. a public test set); it is not part
        of the private fit and costs no privacy of the training rows.
        """
        self._check_fitted_model("score")
        return self.scorer_(self.best_estimator_, X, y)

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
        """Class labels (from the returned model)."""
        _search_estimator_has("classes_")(self)
        return self.best_estimator_.classes_

