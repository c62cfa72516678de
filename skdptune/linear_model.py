"""A sound private linear regressor: ridge regression by sufficient-statistics perturbation.

:class:`SSPRegressor` is a pure epsilon-DP version of AdaSSP (Wang 2018, "Revisiting
differentially private linear regression: optimal and adaptive prediction & estimation in
unbounded domain", UAI): it releases, with Laplace noise from diffprivlib's mechanisms, the
smallest eigenvalue of the rows' Gram matrix (to choose the ridge), the Gram matrix itself and
the rows' cross products with the target, then solves the ridge system with those private
statistics. The proof is in ``docs/ssp_regressor.md``; this docstring states the facts the code
relies on.

**Neighbouring datasets:** replace one record (a row of ``X`` with its ``y``); ``n`` is
public. Every sensitivity below is an L1 sensitivity under that relation.

**Normalised rows.** Every row is clipped to the public bounds, then mapped by a public affine
map to the box ``[-1, 1]``: with ``fit_intercept=True`` a feature with bounds ``(l, u)``
becomes ``(x - (l + u) / 2) / ((u - l) / 2)`` and the target likewise (centring at the public
midpoint, never at a data-dependent mean), and the public constant column
:data:`INTERCEPT_COLUMN` is appended; with ``fit_intercept=False`` a feature is divided by
``max(|l|, |u|)`` (no centring: the model goes through the origin). A feature whose normalised
value is always 0 (equal bounds with an intercept, bounds ``(0, 0)`` without) is left out of
the statistics and gets the weight 0. The normalised design ``Z`` (``n x D``) and target ``t``
(``n``) then give

* ``S = Z^T Z``: its upper triangle, except the intercept column's own entry ``n c^2`` (public),
  with Laplace noise of sensitivity :func:`gram_sensitivity`, symmetrised;
* ``b = Z^T t`` with Laplace noise of sensitivity :func:`cross_sensitivity`;
* ``lambda_min(S)`` with Laplace noise of sensitivity :func:`eigenvalue_sensitivity`
  (``alpha="adaptive"`` only).

The three parts get the shares of ``epsilon`` given by :func:`budget_split`; by basic
composition the fit is ``(epsilon, 0)``-DP, whatever the data. Everything else -- the ridge,
the solve, the coefficients in the original units, predictions on any rows -- is
post-processing of those three releases and public constants.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import PrivacyLeakWarning, check_random_state
from diffprivlib.validation import check_bounds, clip_to_bounds
from scipy.special import gammainccinv
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._mechanisms import Laplace

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn 1.4 and 1.5
    def validate_data(estimator, *args, **kwargs):
        return estimator._validate_data(*args, **kwargs)

__all__ = [
    "SSPRegressor",
    "INTERCEPT_COLUMN",
    "FAILURE_PROBABILITY",
    "EIGENVALUE_SHARE",
    "budget_split",
    "gram_sensitivity",
    "cross_sensitivity",
    "eigenvalue_sensitivity",
    "noise_margin",
]

#: The public constant appended to every normalised row when ``fit_intercept=True``; the
#: intercept is this times the column's weight (in normalised units). 1 gives the column the
#: range of a normalised feature.
INTERCEPT_COLUMN = 1.0
#: ``rho``: the adaptive ridge makes the noisy system positive definite with probability at
#: least ``1 - 2 rho`` (AdaSSP's default). It changes the ridge, never the privacy.
FAILURE_PROBABILITY = 0.05
#: The share of ``epsilon`` spent on the smallest eigenvalue (``alpha="adaptive"``).
EIGENVALUE_SHARE = 0.05

_LEAK_MESSAGE = (
    "Bounds parameters haven't been specified, so falling back to determining bounds from the "
    "data.\nThis will result in additional privacy leakage. To ensure differential privacy "
    "with no additional privacy loss, specify `bounds_X` and `bounds_y`."
)


# --------------------------------------------------------------------------------------------
# Budget and sensitivities (public arithmetic: no data)
# --------------------------------------------------------------------------------------------


def budget_split(epsilon: float, adaptive: bool, gram_sensitivity: float,
                 cross_sensitivity: float) -> tuple[float, float, float]:
    """``(epsilon_eigenvalue, epsilon_gram, epsilon_cross)``, which add up to ``epsilon``.

    With ``adaptive`` the smallest eigenvalue gets :data:`EIGENVALUE_SHARE` of ``epsilon`` (it
    only steers the ridge), otherwise 0. The rest is split between the Gram matrix and
    ``Z^T t`` in the ratio ``sqrt(gram_sensitivity / cross_sensitivity)``: the error of the
    solution grows like ``||E_S theta|| + ||e_b||``, about ``sqrt(2 D)`` times
    ``gram_sensitivity ||theta|| / epsilon_gram + cross_sensitivity / epsilon_cross``, which
    that ratio minimises for ``||theta|| = 1`` (a model that spans the normalised target's
    range; docs/ssp_regressor.md, "Budget split"). A part of sensitivity 0 needs no noise and
    gets no budget (both 0: an even split). Public: the sensitivities come from the bounds.
    """
    eigenvalue = epsilon * EIGENVALUE_SHARE if adaptive else 0.0
    rest = epsilon - eigenvalue
    if gram_sensitivity == 0 and cross_sensitivity == 0:
        share = 0.5
    else:
        root_gram, root_cross = math.sqrt(gram_sensitivity), math.sqrt(cross_sensitivity)
        share = root_gram / (root_gram + root_cross)
    gram = rest * share
    return eigenvalue, gram, rest - gram


def _symmetric_gram_sensitivity(d: int, c: float) -> float:
    """The maximum of the upper triangle's L1 change over rows in ``[-1, 1]^d`` (with the
    constant column ``c`` appended when ``c > 0``, its own entry excluded):
    ``max over a in [0, 2] of d (d + 1) a (2 - a) / 2 + c d a``, at ``a = min(2, 1 + c/(d+1))``.
    """
    if d == 0:
        return 0.0
    a = min(2.0, 1.0 + c / (d + 1))
    return 0.5 * d * (d + 1) * a * (2.0 - a) + c * d * a


def _product_range(lo1, hi1, lo2, hi2):
    """``max - min`` of ``s * t`` over ``s in [lo1, hi1]``, ``t in [lo2, hi2]`` (elementwise)."""
    corners = np.stack([lo1 * lo2, lo1 * hi2, hi1 * lo2, hi1 * hi2])
    return corners.max(axis=0) - corners.min(axis=0)


def _square_range(lo, hi):
    """``max - min`` of ``s^2`` over ``s in [lo, hi]`` (elementwise)."""
    top = np.maximum(lo ** 2, hi ** 2)
    bottom = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(lo ** 2, hi ** 2))
    return top - bottom


def gram_sensitivity(lower, upper, intercept_column: float = 0.0) -> float:
    """L1 sensitivity (replace-one) of the released upper triangle of ``Z^T Z``.

    ``Z``'s rows are ``(z, c)`` with ``z`` in the box ``[lower, upper]`` (within
    ``[-1, 1]^d``: the normalised, clipped rows) and ``c = intercept_column`` (0: no constant
    column). The constant column's own entry ``n c^2`` is public and not released.

    Returns the smaller of two upper bounds:

    * the sum over the released entries of the range of the entry's term (``z_j z_k``,
      ``z_j^2``, ``c z_j``) over the box;
    * ``d (d + 1) a (2 - a) / 2 + c d a`` with ``a = min(2, 1 + c / (d + 1))``, the maximum over
      ``[-1, 1]^d``: writing ``u = z - z'``, ``v = z + z'``, the change is
      ``(u v^T + v u^T) / 2`` with ``|u_j| + |v_j| <= 2`` (docs/ssp_regressor.md).

    It is exact (attained by a pair of rows) when the box is ``[-1, 1]^d`` -- always with an
    intercept: ``z = (1, ..., 1)`` against ``z' = (1 - a, ..., 1 - a)`` -- and when the box is
    nonnegative (``z = upper`` against ``z' = lower``); otherwise an upper bound.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    d = lower.size
    c = float(intercept_column)
    iu = np.triu_indices(d, k=1)
    ranges = (_square_range(lower, upper).sum()
              + _product_range(lower[iu[0]], upper[iu[0]], lower[iu[1]], upper[iu[1]]).sum()
              + c * (upper - lower).sum())
    if d == 0:
        return 0.0
    # the symmetric bound for the enclosing box [-r, r]^d (r = 1 up to rounding): rows
    # (r z, c) are r times rows (z, c / r) of [-1, 1]^d, and the entries are quadratic
    r = float(max(np.abs(lower).max(), np.abs(upper).max()))
    symmetric = r ** 2 * _symmetric_gram_sensitivity(d, c / r) if r > 0 else 0.0
    return float(min(ranges, symmetric))


def cross_sensitivity(lower, upper, y_lower: float, y_upper: float,
                      intercept_column: float = 0.0) -> float:
    """L1 sensitivity (replace-one) of ``Z^T t``: ``sum_j range(z_j t) + c range(t)``.

    Rows ``(z, c)`` with ``z`` in ``[lower, upper]`` and targets ``t`` in
    ``[y_lower, y_upper]`` (within ``[-1, 1]``). Each coordinate changes by at most the range
    of its term, so the sum is an upper bound; it is exact when the boxes are symmetric --
    ``2 d + 2 c`` on ``[-1, 1]``, attained by ``(z, t) = (1, 1)`` against ``(1, -1)`` -- or
    nonnegative (``(upper, y_upper)`` against ``(lower, y_lower)``).
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    y_lo, y_hi = np.float64(y_lower), np.float64(y_upper)
    return float(_product_range(lower, upper, y_lo, y_hi).sum()
                 + float(intercept_column) * (y_hi - y_lo))


def eigenvalue_sensitivity(lower, upper, intercept_column: float = 0.0) -> float:
    """L1 sensitivity (replace-one) of ``lambda_min(Z^T Z)``: ``max ||(z, c)||^2`` over the box.

    Weyl's inequality: replacing ``w`` by ``w'`` adds ``w' w'^T - w w^T``, whose eigenvalues
    lie in ``[-||w||^2, ||w'||^2]``, so the smallest eigenvalue moves by at most the largest
    squared row norm ``R^2 = sum_j max(lower_j^2, upper_j^2) + c^2``. Exact on ``[-1, 1]^d``
    (docs/ssp_regressor.md gives a pair of datasets that attains it); an upper bound otherwise.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    return float(np.maximum(lower ** 2, upper ** 2).sum() + float(intercept_column) ** 2)


def noise_margin(scale: float, dim: int, failure_probability: float = FAILURE_PROBABILITY
                 ) -> float:
    """A bound ``m`` with ``P[lambda_min(E) < -m] <= failure_probability``, data-independent.

    ``E`` is a symmetric ``dim x dim`` matrix whose upper-triangle entries are independent
    ``Laplace(scale)`` (or 0). By Gershgorin's theorem ``lambda_min(E) >= -max_i sum_j
    |E_ij|``; each row sum is at most a sum of ``dim`` independent ``Exponential(scale)``
    variables, a ``Gamma(dim, scale)`` variable, and a union bound over the ``dim`` rows gives
    ``m = scale * Gamma(dim).isf(failure_probability / dim)``.
    """
    if dim == 0 or scale == 0:
        return 0.0
    # Gamma(dim, 1).isf(p) is the inverse of the regularised upper incomplete gamma function
    return float(scale * gammainccinv(dim, failure_probability / dim))


# --------------------------------------------------------------------------------------------
# The normalisation (public, from the bounds)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Normalisation:
    """The public affine map of clipped rows to ``[-1, 1]`` (see the module docstring)."""

    x_centre: np.ndarray
    x_scale: np.ndarray  # 1 where a feature is constant (its normalised value is 0)
    active: np.ndarray  # features with a nonzero range: the ones in the statistics
    y_centre: float
    y_scale: float
    intercept_column: float  # 0.0 without intercept

    @classmethod
    def from_bounds(cls, bounds_X, bounds_y, fit_intercept: bool) -> _Normalisation:
        (x_lo, x_hi), (y_lo, y_hi) = bounds_X, bounds_y
        if fit_intercept:
            x_centre, x_half = (x_lo + x_hi) / 2, (x_hi - x_lo) / 2
            y_centre, y_half = (y_lo + y_hi) / 2, (y_hi - y_lo) / 2
        else:
            x_centre, x_half = np.zeros_like(x_lo), np.maximum(np.abs(x_lo), np.abs(x_hi))
            y_centre, y_half = 0.0, max(abs(y_lo), abs(y_hi))
        # with an intercept a constant feature is centred to 0; without, only a feature that
        # is identically 0 carries nothing
        active = x_half > 0
        return cls(x_centre, np.where(active, x_half, 1.0), active, float(y_centre),
                   float(y_half) if y_half > 0 else 1.0,
                   INTERCEPT_COLUMN if fit_intercept else 0.0)

    def box(self, bounds_X, bounds_y):
        """The normalised bounds: ``(lower, upper)`` of the active features and of the target."""
        (x_lo, x_hi), (y_lo, y_hi) = bounds_X, bounds_y
        lower = ((x_lo - self.x_centre) / self.x_scale)[self.active]
        upper = ((x_hi - self.x_centre) / self.x_scale)[self.active]
        return (lower, upper), ((y_lo - self.y_centre) / self.y_scale,
                                (y_hi - self.y_centre) / self.y_scale)

    def rows(self, X, y):
        """``(Z, t)``: the clipped rows, normalised, with the constant column if any."""
        Z = ((X - self.x_centre) / self.x_scale)[:, self.active]
        if self.intercept_column:
            Z = np.hstack([Z, np.full((Z.shape[0], 1), self.intercept_column)])
        return Z, (y - self.y_centre) / self.y_scale

    def to_original_units(self, theta):
        """``(coef, intercept)`` of the model ``y = X coef + intercept`` that ``theta`` (the
        weights of the normalised columns) describes."""
        d_active = int(self.active.sum())
        coef = np.zeros(self.active.size)
        coef[self.active] = self.y_scale * theta[:d_active] / self.x_scale[self.active]
        intercept = self.y_centre - float(coef @ self.x_centre)
        if self.intercept_column:
            intercept += self.y_scale * theta[d_active] * self.intercept_column
        return coef, float(intercept)


# --------------------------------------------------------------------------------------------
# The mechanism
# --------------------------------------------------------------------------------------------


def _laplace(values, epsilon: float, sensitivity: float, rng, mechanisms=None) -> np.ndarray:
    """``values`` (a vector of L1 sensitivity ``sensitivity``) with i.i.d. Laplace noise of
    scale ``sensitivity / epsilon``: ``epsilon``-DP (diffprivlib's ``Laplace`` applied to each
    value in turn, its parameters checked on the first: :mod:`skdptune._mechanisms`).

    ``mechanisms``: a dict that keeps the mechanism of each ``(epsilon, sensitivity, rng)`` for
    the next release with the same (many fits drawing from one generator: the batched runs);
    a mechanism holds its parameters and the generator it was given, nothing of a draw."""
    values = np.asarray(values, dtype=float)
    if sensitivity == 0:
        return values.copy()
    key = (epsilon, sensitivity, id(rng))  # the mechanism keeps rng alive: no id is reused
    mechanism = None if mechanisms is None else mechanisms.get(key)
    if mechanism is None:
        mechanism = Laplace(epsilon=epsilon, sensitivity=sensitivity, random_state=rng)
        if mechanisms is not None:
            mechanisms[key] = mechanism
    return mechanism.randomise_many(values)


@functools.lru_cache(maxsize=64)
def _released_entries(dim: int, intercept: bool):
    """Indices of the upper triangle of a ``dim x dim`` Gram matrix that are released (all but
    the constant column's own entry, the last one, when there is an intercept); read-only
    arrays, kept per ``(dim, intercept)``."""
    rows, cols = np.triu_indices(dim)
    if intercept:
        keep = ~((rows == dim - 1) & (cols == dim - 1))
        rows, cols = rows[keep], cols[keep]
    for indices in (rows, cols):
        indices.setflags(write=False)
    return rows, cols


def _solve_with_floor(H, b, floor: float) -> np.ndarray:
    """``V diag(1 / max(w, floor)) V^T b`` for ``H = V diag(w) V^T``: the solution of ``H``
    with every eigenvalue below ``floor`` (> 0) raised to it. Always finite; equal to
    ``H^{-1} b`` when ``H``'s eigenvalues are at least ``floor``."""
    if H.shape[0] == 0:
        return np.zeros(0)
    w, V = np.linalg.eigh((H + H.T) / 2)
    return V @ ((V.T @ b) / np.maximum(w, floor))


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------


class SSPRegressor(RegressorMixin, BaseEstimator):
    r"""Ridge regression with pure epsilon-differential privacy, by sufficient-statistics
    perturbation with a privately chosen ridge (a pure-DP AdaSSP).

    Rows are clipped to the public bounds and normalised to ``[-1, 1]`` by a public affine map;
    the Gram matrix of the normalised rows, their cross products with the target and (with
    ``alpha="adaptive"``) the Gram matrix's smallest eigenvalue are released with Laplace
    noise; the ridge system is solved with them. ``fit`` is ``(epsilon, 0)``-differentially
    private for replace-one neighbours (``n`` public), whatever the data, provided
    ``bounds_X`` and ``bounds_y`` are given (docs/ssp_regressor.md has the proof).

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy budget of ``fit``: pure ``epsilon``-DP, charged ``(epsilon, 0)``.
    bounds_X : tuple of (lower, upper), default=None
        Public per-feature bounds (scalars, or arrays with one entry per feature), as in
        diffprivlib. Rows are clipped to them. ``None`` reads them off the data with a
        ``PrivacyLeakWarning``: the guarantee is then void.
    bounds_y : tuple of (lower, upper), default=None
        Public bounds of the target; ``None`` as for ``bounds_X``.
    fit_intercept : bool, default=True
        Fit an intercept: the rows are centred at the public midpoint of their bounds and a
        public constant column is appended (its weight is regularised like the others).
        ``False``: the model goes through the origin.
    alpha : "adaptive" or float >= 0, default="adaptive"
        The ridge added to the Gram matrix of the *normalised* rows (features and target mapped
        to ``[-1, 1]`` by their bounds, and the constant column: the intercept is regularised
        too), so ``alpha`` is in the units of a sum over rows of squared normalised values.
        ``"adaptive"`` chooses it privately: just large enough to make the noisy Gram matrix
        positive definite with probability at least ``1 - 2 * FAILURE_PROBABILITY``, at the
        cost of :data:`EIGENVALUE_SHARE` of ``epsilon``. A number skips that release and its
        budget goes to the two others.
    clip_predictions : bool, default=True
        ``predict`` clips its predictions into ``bounds_y`` (when given): the fit clips every
        target into them, so the model estimates a target in that range, and a prediction
        outside it (a row far outside ``bounds_X``, extrapolated) is moved to the nearest end.
        Post-processing of the private coefficients with public bounds: free. ``False``: the
        plain linear model ``X @ coef_ + intercept_``. The rows themselves are never clipped
        in ``predict`` (see Notes).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise (diffprivlib's mechanisms). ``None`` draws it from a secure generator;
        an int makes fits reproducible -- for tests, not for production.
    accountant : BudgetAccountant, default=None
        Charged ``(epsilon, 0)`` once per ``fit``, checked before any data is read. ``None``
        uses diffprivlib's default accountant (stored in the parameter, as diffprivlib does).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights, in the units of ``X`` and ``y`` (0 for a feature whose bounds make it
        a constant that the intercept absorbs, or that is always 0).
    intercept_ : float
        The intercept (0.0 with ``fit_intercept=False``).
    alpha_ : float
        The ridge used, in normalised units (a post-processing of the private eigenvalue, or
        ``alpha``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    sklearn.linear_model.Ridge : the non-private model.
    diffprivlib.models.LinearRegression : diffprivlib's regressor, whose noise is not sized
        for its sensitivity (skdptune refuses it).

    Notes
    -----
    Prediction on new rows is post-processing of the private coefficients and the public
    bounds, free of privacy cost. It clips the predictions into ``bounds_y``
    (``clip_predictions``), never the rows into ``bounds_X``: the box is a privacy device that
    bounds one row's influence, and a linear model fitted inside a narrowed box extrapolates
    beyond it better than it predicts at the box's edge (measured in docs/ssp_regressor.md,
    "Predictions"). Weighted fits are not supported (the sensitivities are per unweighted
    row), and ``y`` must have one target.

    The noisy system is made positive definite by the private ridge with probability at least
    ``1 - 2 * FAILURE_PROBABILITY``; otherwise the solve raises every eigenvalue below a
    public floor to it (``max(noise scale of the Gram matrix, 1)`` in normalised units). It
    never fails and never says which case happened: both are post-processing of the private
    statistics.

    References
    ----------
    Yu-Xiang Wang. Revisiting differentially private linear regression: optimal and adaptive
    prediction & estimation in unbounded domain. UAI 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.linear_model import SSPRegressor
    >>> from diffprivlib import BudgetAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20_000, 2))
    >>> y = np.clip(X @ [1.0, -0.5] + 0.1 * rng.normal(size=20_000), -2, 2)
    >>> model = SSPRegressor(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=0,
    ...                      accountant=BudgetAccountant()).fit(X, y)
    >>> bool(model.score(X, y) > 0.95)
    True
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds_X": [tuple, None],
        "bounds_y": [tuple, None],
        "fit_intercept": ["boolean"],
        "alpha": [StrOptions({"adaptive"}), Interval(Real, 0, None, closed="left")],
        "clip_predictions": ["boolean"],
        "random_state": ["random_state"],
        "accountant": [BudgetAccountant, None],
    }

    def __init__(self, *, epsilon=1.0, bounds_X=None, bounds_y=None, fit_intercept=True,
                 alpha="adaptive", clip_predictions=True, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.alpha = alpha
        self.clip_predictions = clip_predictions
        self.random_state = random_state
        # as diffprivlib's models: the default accountant is resolved (and stored) here; any
        # other value is stored as given and validated by fit
        self.accountant = BudgetAccountant.load_default(None) if accountant is None else accountant

    def _check_public_settings(self):
        """Check everything that needs no data, the budget included; return the accountant
        (``None``, e.g. after ``set_params``, is diffprivlib's default one)."""
        self._check_parameters()
        return self._checked_accountant()

    def _check_parameters(self):
        """The parameters' checks (every one but the budget's)."""
        self._validate_params()
        if not math.isfinite(self.epsilon):
            raise ValueError(f"epsilon must be finite, got {self.epsilon}.")
        if not math.isfinite(self.alpha if self.alpha != "adaptive" else 0.0):
            raise ValueError(f"alpha must be finite, got {self.alpha}.")
        for name in ("bounds_X", "bounds_y"):
            value = getattr(self, name)
            if value is not None:
                _check_finite_bounds(value, name)

    def _checked_accountant(self):
        """The accountant, once it has checked that it can spend ``(epsilon, 0)``."""
        accountant = BudgetAccountant.load_default(self.accountant)
        accountant.check(self.epsilon, 0)
        return accountant

    def fit(self, X, y):
        """Fit the model privately: ``(epsilon, 0)``-DP, charged once to the accountant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (dense).
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : SSPRegressor
            The fitted model.
        """
        accountant = self._check_public_settings()
        rng = check_random_state(self.random_state)
        X, y = self._fit_rows(X, y)
        statistics = _Statistics(X, y, *self._bounds(X, y), self.fit_intercept)
        return self._release(statistics, rng, accountant)

    def _fit_rows(self, X, y):
        """``fit``'s checks and conversion of its rows (float arrays; sets ``n_features_in_``
        and, for a frame, ``feature_names_in_``)."""
        return validate_data(self, X, y, accept_sparse=False, dtype=np.float64, y_numeric=True,
                             multi_output=False)

    def _predicted_rows(self, X):
        """``predict``'s checks and conversion of its rows, against this model's width."""
        return validate_data(self, X, accept_sparse=False, dtype=np.float64, reset=False)

    def _release(self, statistics: _Statistics, rng, accountant, mechanisms=None):
        """The private part of ``fit`` once the rows' :class:`_Statistics` are known: the noisy
        model (:func:`_released_model`, noise from ``rng``; ``mechanisms``: see
        :func:`_laplace`) set as the fitted attributes, and ``(epsilon, 0)`` charged to
        ``accountant``. Returns ``self``."""
        self.coef_, self.intercept_, self.alpha_ = _released_model(
            statistics, self.epsilon, self.alpha, rng, mechanisms)
        accountant.spend(self.epsilon, 0)
        return self

    def _bounds(self, X, y):
        """The bounds as arrays (``bounds_X``: one entry per feature); ``None`` is read off the
        data with diffprivlib's ``PrivacyLeakWarning``, as diffprivlib's models do."""
        bounds_X, bounds_y = self.bounds_X, self.bounds_y
        if bounds_X is None or bounds_y is None:
            warnings.warn(_LEAK_MESSAGE, PrivacyLeakWarning, stacklevel=3)
            if bounds_X is None:
                bounds_X = (np.min(X, axis=0), np.max(X, axis=0))
            if bounds_y is None:
                bounds_y = (float(np.min(y)), float(np.max(y)))
        bounds_X = check_bounds(bounds_X, X.shape[1])
        bounds_y = check_bounds(bounds_y)
        return bounds_X, bounds_y

    def predict(self, X):
        """Predict with the private linear model, clipped into ``bounds_y`` with
        ``clip_predictions`` (post-processing with public bounds: no privacy cost).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            ``X @ coef_ + intercept_``, clipped into ``bounds_y`` when ``clip_predictions``
            and ``bounds_y`` is given.
        """
        check_is_fitted(self)
        return self._predict_rows(self._predicted_rows(X))

    def _predict_rows(self, X, coef=None, intercept=None):
        """:meth:`predict` of rows it has validated (a float array of ``n_features_in_``
        columns); with ``coef`` and ``intercept``, what the model fitted to them predicts."""
        coef = self.coef_ if coef is None else coef
        predictions = X @ coef + (self.intercept_ if intercept is None else intercept)
        if self.clip_predictions and self.bounds_y is not None:
            predictions = np.clip(predictions, *check_bounds(self.bounds_y))
        return predictions

    def score(self, X, y, sample_weight=None):
        """The coefficient of determination R^2 of ``predict(X)`` against ``y``.

        Not private: ``y`` is read exactly. Score held-out public data, or let a skdptune
        search score privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
            ``sklearn.metrics.r2_score(y, self.predict(X), sample_weight=sample_weight)``.
        """
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # DP noise by design
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"poor_score": True}


def _check_finite_bounds(bounds, name: str) -> None:
    """diffprivlib's structural checks of ``bounds`` (a tuple ``(lower, upper)``, scalars or
    1-d arrays of one shape, ``lower <= upper``), plus finite values: public, before the data."""
    try:
        lower, upper = check_bounds(bounds, np.size(bounds[0]) if len(bounds) == 2 else 0)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"{name} must be finite, got {bounds}.")
    if name == "bounds_y" and np.size(lower) != 1:
        raise ValueError(f"bounds_y must be a pair of scalars (one target), got {bounds}.")


def _clip_rows(X, y, bounds_X, bounds_y):
    """The rows and targets clipped to the bounds: what makes the sensitivities hold for any
    input (diffprivlib's ``clip_to_bounds``)."""
    return clip_to_bounds(X, bounds_X), np.clip(y, *bounds_y)


class _Statistics:
    """The exact statistics of ``fit`` on some rows for one setting of ``(bounds_X, bounds_y,
    fit_intercept)``: PRIVATE (never stored on a model, never released).

    They are a deterministic function of the rows and the setting, and everything ``fit`` reads
    from the data: the clipped, normalised rows' Gram matrix ``Z^T Z``, their cross products
    ``Z^T t``, ``n`` and (on first use) ``lambda_min(Z^T Z)``, with the public normalisation and
    box. :func:`_released_model` turns them into a model with fresh noise; fits of the same rows
    and setting may share one instance (docs/ssp_regressor.md, "Batched runs").
    """

    def __init__(self, X, y, bounds_X, bounds_y, fit_intercept: bool):
        """``X``, ``y``: validated float rows; ``bounds_X``, ``bounds_y``: the bounds as
        :meth:`SSPRegressor._bounds` returns them."""
        self.norm = _Normalisation.from_bounds(bounds_X, bounds_y, fit_intercept)
        self.box, self.y_box = self.norm.box(bounds_X, bounds_y)
        Z, t = self.norm.rows(*_clip_rows(X, y, bounds_X, bounds_y))
        self.n_rows, self.dim = Z.shape
        self.gram, self.cross = Z.T @ Z, Z.T @ t

    @functools.cached_property
    def sensitivities(self) -> tuple[float, float, float]:
        """The L1 sensitivities of the Gram matrix's released entries, of ``Z^T t`` and of
        ``lambda_min(Z^T Z)``: functions of the public box alone."""
        c = self.norm.intercept_column
        return (gram_sensitivity(*self.box, c), cross_sensitivity(*self.box, *self.y_box, c),
                eigenvalue_sensitivity(*self.box, c))

    @functools.cached_property
    def smallest_eigenvalue(self) -> float:
        """``lambda_min(Z^T Z)`` (0 without columns): exact, PRIVATE."""
        return float(np.linalg.eigvalsh(self.gram)[0]) if self.dim else 0.0


def _released_model(statistics: _Statistics, epsilon: float, alpha, rng, mechanisms=None):
    """``(coef, intercept, ridge)``: the private model of ``statistics`` -- the three noisy
    releases with the budget of :func:`budget_split`, then post-processing.

    The only place noise is drawn (diffprivlib's ``Laplace``, from ``rng``), in a fixed order:
    the smallest eigenvalue (``alpha="adaptive"`` only), the Gram matrix's released entries,
    ``Z^T t``. ``(epsilon, 0)``-DP with respect to the rows ``statistics`` were computed from
    (replace-one; module docstring); everything after the releases is post-processing.
    """
    adaptive = isinstance(alpha, str)
    norm, dim = statistics.norm, statistics.dim
    intercept_column = norm.intercept_column
    intercept = intercept_column > 0
    s_gram, s_cross, s_eigenvalue = statistics.sensitivities
    eps_eigenvalue, eps_gram, eps_cross = budget_split(epsilon, adaptive, s_gram, s_cross)
    gram_scale = s_gram / eps_gram if s_gram else 0.0

    # (1) the smallest eigenvalue, lowered by its noise's (1 - rho) quantile, and the ridge
    if adaptive:
        noisy = _laplace([statistics.smallest_eigenvalue], eps_eigenvalue, s_eigenvalue, rng,
                         mechanisms)[0]
        scale = s_eigenvalue / eps_eigenvalue
        lower_estimate = max(0.0, noisy - scale * math.log(1 / (2 * FAILURE_PROBABILITY)))
        ridge = max(0.0, noise_margin(gram_scale, dim) - lower_estimate)
    else:
        ridge = float(alpha)

    # (2) the Gram matrix's released entries; the constant column's own entry is public
    rows, cols = _released_entries(dim, intercept)
    noisy_gram = np.zeros((dim, dim))
    noisy_gram[rows, cols] = noisy_gram[cols, rows] = _laplace(statistics.gram[rows, cols],
                                                               eps_gram, s_gram, rng, mechanisms)
    if intercept:
        noisy_gram[-1, -1] = statistics.n_rows * intercept_column ** 2  # n is public

    # (3) Z^T t
    noisy_cross = _laplace(statistics.cross, eps_cross, s_cross, rng, mechanisms)

    # post-processing: the ridge system, with a public floor on its eigenvalues
    floor = max(gram_scale, 1.0)
    theta = _solve_with_floor(noisy_gram + ridge * np.eye(dim), noisy_cross, floor)
    coef, intercept_ = norm.to_original_units(theta)
    return coef, intercept_, ridge
