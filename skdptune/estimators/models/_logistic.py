"""diffprivlib's ``LogisticRegression``: what its fit costs under replace-one, and the fit run.

diffprivlib 0.6.6 fits each one-vs-rest problem (one for two classes, ``k`` for ``k >= 3``,
each at ``epsilon / k``) by objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011,
Algorithm 2). With rows clipped to norm ``q = data_norm`` it minimises

    J(w) = (1/n) sum_i l(y_i, <w, x_i>) + ||w||^2 / (2 C n) + <b, w> / n + (D/2) ||w||^2

where ``b`` has a uniform direction and a norm drawn from ``Gamma(dim, 2 q / e')``, and
diffprivlib's ``Vector`` mechanism picks ``e' = e - 2 ln(1 + q C / 4)`` and ``D = 0`` when that
is positive, else ``e' = e / 2`` and ``n D = q / (4 (exp(e/4) - 1)) - 1 / C``.

**The bound.** The minimiser ``w`` is a bijective function of ``b``
(``b = -n grad_w[J - <b, w>/n]``), so its density on a dataset is ``nu(b(w)) |det H(w)|`` with
``H(w) = sum_i l''_i x_i x_i^T + R`` and ``R = (1/C + n D) I``. For neighbours that differ in
row 1:

* the noise densities differ by at most ``exp(e' ||g_1 - g_1'|| / (2 q)) <= exp(e')``, as each
  row's gradient ``l'_1 x_1`` has norm at most ``q`` (``|l'| <= 1``);
* the determinants: with ``H_0`` the common part (rows 2..n and ``R``), the matrix determinant
  lemma gives ``det(H_0 + u u^T) / det(H_0 + v v^T) <= 1 + u^T H_0^{-1} u
  <= 1 + ||x_1||^2 / (4 (1/C + n D))`` (``l'' <= 1/4``).

So one problem costs ``e' + ln(1 + q^2 / (4 (1/C + n D)))``: ``e' + ln(1 + q^2 C / 4)`` when
``D = 0``, ``e/2 + ln(1 + q (exp(e/4) - 1))`` when ``D > 0``.

**The intercept.** With ``fit_intercept=True`` diffprivlib appends a constant 1 to every row
(the sensitivity becomes ``sqrt(q^2 + 1)``) but leaves the intercept out of the ridge: the
intercept's direction of ``R`` is ``n D``, which is 0 in the first branch. There the argument
above gives no bound, and none exists: when the other rows are confidently classified the
intercept has almost no curvature, the perturbed objective often has no minimiser, and an
audit measured a density ratio of at least ``exp(2.83)`` on two neighbours at a claimed
``epsilon = 1``. skdptune therefore never runs that fit: it fits the same rows with a public
constant column :data:`INTERCEPT_COLUMN` appended and *no* intercept
(:class:`InterceptColumnLogisticRegression`), so the intercept's coordinate is regularised like the
weights, and prices that model -- a model without intercept at ``data_norm``
``sqrt(q^2 + INTERCEPT_COLUMN^2)`` -- here. With the column equal to 1 its noise is exactly
diffprivlib's (the same ``Vector`` mechanism, the same sensitivity, the same branch).

diffprivlib's own account subtracts ``2 ln(1 + q C / 4)`` where the curvature of a row is
``q^2 / 4``, not ``q / 4``: for ``data_norm > 1`` its stated epsilon is too small (at
``data_norm = 10``, ``epsilon = 1``, ``C = 1`` without intercept, a bound of 1.85; measured on
two neighbours, a density ratio of ``exp(1.15)``; at ``data_norm = 100``, ``exp(2.9)``).
skdptune charges ``max(epsilon, bound)``, never less than diffprivlib's own figure; ``k``
problems cost ``max(epsilon, k * bound(epsilon / k))``.

The bound assumes the exact minimiser, as every analysis of objective perturbation does;
L-BFGS stops at a tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from diffprivlib.models import LogisticRegression
from diffprivlib.models.logistic_regression import validate_data  # diffprivlib's own, per sklearn
from diffprivlib.validation import clip_to_norm
from sklearn.linear_model import LogisticRegression as _SklearnLogisticRegression

from ..._params import get_params
from .._values import check_cost_value, is_distribution, upper_cost_value
from ._adapter import ModelAdapter

__all__ = ["INTERCEPT_COLUMN", "InterceptColumnLogisticRegression", "LogisticRegressionAdapter",
           "logistic_regression_epsilon", "row_norm"]

#: The public constant appended to every row in place of diffprivlib's unregularised intercept
#: (:class:`InterceptColumnLogisticRegression`); the model's intercept is this times the
#: column's weight.
#: 1 keeps diffprivlib's noise and the earlier price of a model with an intercept unchanged.
INTERCEPT_COLUMN = 1.0
# the logistic loss's curvature bound: l'' = p (1 - p) <= 1/4
_CURVATURE = 0.25
# float margin on either side of diffprivlib's branch test: both branches are bounded there
_TIE = 1e-9
# beyond this many one-vs-rest problems, an unknown class count takes a closed-form tail bound
_TAIL_PROBLEMS = 64
# the bound is computed in floats (a few roundings): raised by this relative margin
_ROUNDING = 1e-12


def row_norm(data_norm: float, fit_intercept: bool) -> float:
    """The norm bound of the rows the fit sees: ``data_norm``, with the constant column of
    :data:`INTERCEPT_COLUMN` when ``fit_intercept``."""
    return math.hypot(data_norm, INTERCEPT_COLUMN) if fit_intercept else data_norm


def _with_delta(eps: float, q: float) -> float:
    """One problem's bound in diffprivlib's ``D > 0`` branch (nondecreasing in ``eps``)."""
    return eps / 2.0 + math.log1p(q * math.expm1(eps / 4.0))


def _problem_bound(eps: float, q: float, C: float) -> float:
    """The cost of one one-vs-rest problem fitted at ``eps`` on rows of norm at most ``q``
    (the module docstring), made nondecreasing in ``eps``.

    Each branch's bound grows with ``eps``, but it drops where diffprivlib switches from
    ``D > 0`` to ``D = 0`` (at ``q = 10``, ``C = 1``: from 3.52 to 3.26): above the
    branch point the bound is also at least the ``D > 0`` bound at that point. A maximum over a
    list of epsilons, or the upper end of a distribution's support, then bounds every value in
    between, and scaling epsilons down never raises the cost.
    """
    branch = 2.0 * math.log1p(_CURVATURE * q * C)
    if eps <= branch * (1.0 + _TIE):  # diffprivlib's D > 0 branch (or too close to call)
        out = _with_delta(eps, q)
        if eps < branch * (1.0 - _TIE):
            return out
    else:
        out = _with_delta(branch * (1.0 - _TIE), q)
    return max(out, max(eps - branch, 0.0) + math.log1p(_CURVATURE * q * q * C))


def _problem_bound_any_C(eps: float, q: float) -> float:
    """The supremum over ``C > 0`` of :func:`_problem_bound`.

    ``D = 0`` holds for ``t = q C / 4 < exp(eps/2) - 1 = t_b``, where the bound is
    ``eps - 2 ln(1 + t) + ln(1 + q t)``: decreasing in ``t`` when ``q <= 2``, else largest at
    ``t = (q - 2) / q`` (its only critical point) or at ``t_b``. With ``D > 0`` the bound does
    not depend on ``C``. Both are nondecreasing in ``q``.
    """
    t_b = math.expm1(eps / 2.0)
    t = min((q - 2.0) / q, t_b) if q > 2.0 else 0.0
    no_delta = eps - 2.0 * math.log1p(t) + math.log1p(q * t)
    return max(no_delta, _with_delta(eps, q))


def _tail(eps: float, q: float, C: float | None, k: int) -> float:
    """A bound on ``j * bound(eps / j)`` for every ``j >= k`` one-vs-rest problems.

    A problem at ``e = eps / j`` with ``D > 0`` costs ``e/2 + ln(1 + q u)``,
    ``u = exp(e/4) - 1``, and ``j u_j`` is nonincreasing in ``j``; ``ln(1 + x) <= x`` then
    gives ``eps / 2 + k u_k q``. A problem with ``D = 0`` costs ``e + c``,
    ``c = ln(1 + q^2 C / 4) - 2 ln(1 + q C / 4)``, and has ``e`` above the branch point: at
    most ``eps + max(c, 0) * eps / branch`` in all. Over every ``C``, that part is
    ``ln(1 + q t_b) <= q t_b`` (``t_b = exp(e/2) - 1``, below the critical point ``t*``:
    ``j t_b`` is nonincreasing too) or ``e + ln(q^2 / (4 (q - 1)))`` for
    ``e > 2 ln(1 + t*)``.
    """
    u_k = math.expm1(eps / k / 4.0)
    if C is not None:
        branch = 2.0 * math.log1p(_CURVATURE * q * C) * (1.0 + _TIE)
        extra = math.log1p(_CURVATURE * q * q * C) - 2.0 * math.log1p(_CURVATURE * q * C)
        no_delta = eps + max(extra, 0.0) * eps / branch
    elif q <= 2.0:
        no_delta = eps
    else:
        critical = (q - 2.0) / q
        no_delta = max(k * q * math.expm1(eps / k / 2.0),
                       eps + math.log(q * q / (4.0 * (q - 1.0)))
                       * eps / (2.0 * math.log1p(critical)))
    return max(no_delta, eps / 2.0 + k * u_k * q)


def logistic_regression_epsilon(epsilon: float, data_norm: float, C: float | None,
                                fit_intercept: bool, n_classes: int | None) -> float:
    """The epsilon skdptune charges for one fit of diffprivlib's ``LogisticRegression``.

    Parameters
    ----------
    epsilon : float
        Its ``epsilon`` parameter (finite, >= 0).
    data_norm : float
        Its ``data_norm`` (> 0), or an upper bound on it.
    C : float or None
        Its ``C`` (> 0); ``None`` when unknown (drawn from a distribution): the supremum over
        every ``C``.
    fit_intercept : bool
        With an intercept, the model skdptune fits: no intercept, the column of
        :data:`INTERCEPT_COLUMN` appended (module docstring).
    n_classes : int or None
        The number of classes the fit sees (the declared label set); ``None`` when unknown: the
        supremum over every count.

    Returns
    -------
    float
        ``max(epsilon, k * bound(epsilon / k))`` (module docstring), ``k`` the number of
        one-vs-rest problems; never less than ``epsilon``.

    Raises
    ------
    ValueError
        The bound is not a finite number (``data_norm`` so large that its square overflows).
    """
    if epsilon == 0:
        return 0.0
    q = row_norm(data_norm, fit_intercept)

    def problems(k: int) -> float:
        e = epsilon / k
        return k * (_problem_bound_any_C(e, q) if C is None else _problem_bound(e, q, C))

    if n_classes is not None:
        worst = problems(1 if n_classes <= 2 else int(n_classes))
    else:
        worst = max([problems(1)] + [problems(k) for k in range(3, _TAIL_PROBLEMS)]
                    + [_tail(epsilon, q, C, _TAIL_PROBLEMS)])
    if not math.isfinite(worst):
        # the bound's squares of data_norm overflow a float (data_norm above about 1e154):
        # inf - inf made it NaN, which max() and comparisons then read as a cost of 0; no
        # finite charge is known, so the configuration is refused
        raise ValueError(
            f"No finite privacy cost is known for diffprivlib's LogisticRegression with "
            f"data_norm={data_norm:g}: its bound overflows a float. Use a data_norm that "
            f"bounds the rows' norms closely (scale the features).")
    if worst <= epsilon:
        return float(epsilon)
    return worst * (1.0 + _ROUNDING)


class InterceptColumnLogisticRegression(LogisticRegression):
    """diffprivlib's ``LogisticRegression`` whose intercept is a regularised weight.

    With ``fit_intercept=False`` (or ``data_norm=None``, which diffprivlib reads off the data
    with a ``PrivacyLeakWarning``) ``fit`` is diffprivlib's. With ``fit_intercept=True`` it
    validates the rows as diffprivlib does (``n_features_in_`` and ``feature_names_in_``
    included), clips them to ``data_norm``, appends a column of :data:`INTERCEPT_COLUMN`, and
    fits diffprivlib's model without intercept at ``data_norm``
    ``sqrt(data_norm^2 + INTERCEPT_COLUMN^2)`` (the rows' norm bound: the clipping diffprivlib
    then applies changes nothing), with this model's ``epsilon``, ``C``, ``tol``,
    ``max_iter``, ``random_state`` and ``accountant`` (charged ``epsilon``, as diffprivlib's
    fit charges it). ``coef_`` is the weights of the features, ``intercept_`` the column's
    weight times the column.

    Privacy (replace-one): the fit is objective perturbation without intercept on rows of
    norm at most ``sqrt(data_norm^2 + 1)``, whose cost :func:`logistic_regression_epsilon`
    bounds; the constant column is public and the same for every row.
    """

    def fit(self, X, y, sample_weight=None):
        if not self.fit_intercept or self.data_norm is None:
            return super().fit(X, y, sample_weight=sample_weight)
        self._validate_params()
        self.accountant.check(self.epsilon, 0)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=float, order="C",
                             accept_large_sparse=True)
        q = float(self.data_norm)
        # clip_to_norm refuses sparse rows, as in diffprivlib's own fit: the rows are dense
        rows = clip_to_norm(X, q)
        rows = np.hstack([rows, np.full((rows.shape[0], 1), INTERCEPT_COLUMN)])
        params = get_params(self, deep=False)
        params.update(fit_intercept=False, data_norm=row_norm(q, True), warm_start=False)
        inner = LogisticRegression(**params)
        if self.warm_start and getattr(self, "coef_", None) is not None:
            inner.warm_start = True
            inner.coef_ = np.hstack([self.coef_, self.intercept_[:, None] / INTERCEPT_COLUMN])
        inner.fit(rows, y, sample_weight=sample_weight)
        d = X.shape[1]
        self.classes_ = inner.classes_
        self.coef_ = inner.coef_[:, :d].copy()
        self.intercept_ = inner.coef_[:, d] * INTERCEPT_COLUMN
        self.n_iter_ = inner.n_iter_
        return self


class LogisticRegressionAdapter(ModelAdapter):
    """diffprivlib's ``LogisticRegression``: priced by :func:`logistic_regression_epsilon`
    (not a multiple of its ``epsilon``), fitted by :class:`InterceptColumnLogisticRegression`.

    * ``n_iter_`` (L-BFGS's iteration count on the private objective) is computed outside the
      mechanism: deleted from a returned model.
    * ``C`` weighs a *sum* of losses (its ridge strength is ``1 / (C n)``, as in
      scikit-learn): the same ``C`` on fewer rows is a more strongly regularised model, so a
      partition fit multiplies it by ``n / n_rows``.
    * ``epsilon``, ``C`` and ``data_norm`` are set as Python floats before a fit: diffprivlib
      picks its noise branch from them in their own precision, and a ``float32``
      ``data_norm`` moved that test by about ``1e-7``, past the margin of the bound (computed
      in float64), so that a fit priced just below the branch point ran on the other branch
      (measured: 2.46 charged where the fit that ran is proven for 3.02).
    * skdptune's batched solvers fit it when its ``data_norm`` is public and it does not
      warm-start.
    """

    models = (LogisticRegression,)
    replaces = {_SklearnLogisticRegression:
                "use diffprivlib.models.LogisticRegression(data_norm=...)"}
    leak_params = {"data_norm": "data_norm to a public bound on the rows' L2 norm"}
    cost_params = ("data_norm", "C")
    structure_params = ("fit_intercept",)
    nonprivate_attributes = ("n_iter_",)
    row_dependent_params = ("C",)
    exact_float_params = ("epsilon", "C", "data_norm")
    sound_fit = InterceptColumnLogisticRegression
    # the same penalised likelihood (ridge 1 / (C n)) without clipping or noise; with three or
    # more classes scikit-learn fits it jointly (multinomial), diffprivlib one-vs-rest
    counterpart = _SklearnLogisticRegression
    counterpart_params = ("C", "fit_intercept", "tol", "max_iter")

    def cost_function(self, estimator: Any, label: str,
                      n_classes: int | None) -> Callable[[float], float]:
        """A function of ``epsilon``, ``data_norm``, ``C``, ``fit_intercept`` and the class
        count. A ``C`` drawn from a distribution takes the supremum over every ``C``; a
        ``data_norm`` drawn from one, its support's upper end and every ``C`` (the bound over
        every ``C`` grows with ``data_norm``; for one ``C`` it need not)."""
        params = get_params(estimator, deep=False)
        data_norm, C = params["data_norm"], params["C"]
        if is_distribution(data_norm):
            data_norm, C = upper_cost_value(f"{label} data_norm", data_norm, "data_norm"), None
        elif is_distribution(C):
            C = None
        data_norm = check_cost_value(data_norm, "data_norm", label)
        if data_norm <= 0:
            raise ValueError(f"{label}: data_norm must be positive, got {data_norm}.")
        if C is not None:
            C = check_cost_value(C, "C", label)
            if C <= 0:
                raise ValueError(f"{label}: C must be positive, got {C}.")
        fit_intercept = params["fit_intercept"]
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise ValueError(f"{label}: fit_intercept must be True or False, got "
                             f"{fit_intercept!r}.")
        fit_intercept = bool(fit_intercept)
        return lambda epsilon: logistic_regression_epsilon(epsilon, data_norm, C, fit_intercept,
                                                           n_classes)

    def cost_is_linear(self) -> bool:
        return False

    def batched(self, estimator: Any) -> bool:
        return estimator.data_norm is not None and not estimator.warm_start
