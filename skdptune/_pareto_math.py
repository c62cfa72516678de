"""Two-objective Pareto arithmetic for privacy-utility fronts: dominance, hypervolume, HVPoI.

Convention: a point is ``(epsilon, utility)``; epsilon is minimised and utility maximised.
The *anti-ideal* (reference) point ``r = (epsilon_r, utility_r)`` bounds the region that
counts: a point contributes only if ``epsilon < epsilon_r`` and ``utility > utility_r``.

* ``p`` dominates ``q`` when ``p.epsilon <= q.epsilon``, ``p.utility >= q.utility`` and ``p != q``.
  The front (non-dominated subset) keeps one copy of repeated points (the first).
* The hypervolume ``HV(P)`` is the area of ``{(e, u) : e <= epsilon_r, u >= utility_r, and some
  p in P has p.epsilon <= e and p.utility >= u}``. With the front's points inside the box
  sorted by epsilon, ``e_1 < ... < e_k`` (so ``u_1 < ... < u_k``) and ``e_{k+1} = epsilon_r``::

      HV(P) = sum_i (e_{i+1} - e_i) * (u_i - utility_r)

* Everything below is computed on the *staircase* of the front: strips
  ``[e_j, e_{j+1})``, ``j = 0..k``, with ``e_0 = -inf`` and level ``u_0 = utility_r``; in strip
  ``j`` the front attains utility ``u_j`` and a new point ``(a, c)`` is *not dominated* (and
  inside the box) iff ``c > u_j``. Its hypervolume improvement is
  ``HVI(a, c) = sum_j max(0, e_{j+1} - max(e_j, a)) * max(0, c - u_j)``.
* HVPoI (Couckuyt et al. 2014, used by DPareto, Avent et al. 2020, eq. 3) at a candidate with
  independent Gaussian predictions is ``HVI(m) * PoI``: the hypervolume improvement of the
  predictive mean ``m`` times the probability that the outcome is not dominated by the
  current front. Here ``log(epsilon)`` is Gaussian (mean ``mu_e``, sd ``s_e``) and the utility
  is Gaussian (``mu_u``, ``s_u``), so ``m = (exp(mu_e), mu_u)`` (the predictive median of
  epsilon) and::

      PoI = sum_j [Phi((log e_{j+1} - mu_e)/s_e) - Phi((log e_j - mu_e)/s_e)]
                  * [1 - Phi((u_j - mu_u)/s_u)]

  The paper's set of non-dominated outcomes is intersected with the box of the anti-ideal
  point: outcomes outside it cannot improve the hypervolume.

All functions are exact, vectorised over candidates, and cost ``O(n log n)`` for the front.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = [
    "hvpoi",
    "hypervolume",
    "hypervolume_improvement",
    "pareto_mask",
    "probability_of_improvement",
]


def _as_points(points) -> np.ndarray:
    points = np.asarray(points, dtype=float)
    if points.size == 0:
        return np.empty((0, 2))
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"Points must have shape (n, 2); got {points.shape}.")
    if not np.all(np.isfinite(points)):
        raise ValueError("Points must be finite (epsilon, utility) pairs.")
    return points


def pareto_mask(points) -> np.ndarray:
    """Boolean mask of the non-dominated points (first copy of repeated points).

    Parameters
    ----------
    points : array-like of shape (n, 2)
        ``(epsilon, utility)`` pairs.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    points = _as_points(points)
    # by epsilon, then best utility first; stable, so repeated points keep their order
    order = np.lexsort((-points[:, 1], points[:, 0]))
    utility = points[order, 1]
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(utility)[:-1]))
    mask = np.zeros(len(points), dtype=bool)
    mask[order] = utility > best_before
    return mask


def _front_in_box(points, anti_ideal) -> np.ndarray:
    """The front's points strictly inside the anti-ideal box, sorted by epsilon."""
    points = _as_points(points)
    eps_ref, u_ref = anti_ideal
    inside = points[(points[:, 0] < eps_ref) & (points[:, 1] > u_ref)]
    front = inside[pareto_mask(inside)]
    return front[np.argsort(front[:, 0])]


def _staircase(points, anti_ideal) -> tuple[np.ndarray, np.ndarray]:
    """Strip edges ``e_0..e_{k+1}`` (``e_0 = -inf``) and levels ``u_0..u_k`` of the front."""
    eps_ref, u_ref = (float(v) for v in anti_ideal)
    front = _front_in_box(points, (eps_ref, u_ref))
    edges = np.concatenate(([-np.inf], front[:, 0], [eps_ref]))
    levels = np.concatenate(([u_ref], front[:, 1]))
    return edges, levels


def hypervolume(points, anti_ideal) -> float:
    """Area dominated by ``points`` inside the box of the anti-ideal point.

    Parameters
    ----------
    points : array-like of shape (n, 2)
        ``(epsilon, utility)`` pairs; points outside the box add nothing.
    anti_ideal : (float, float)
        ``(epsilon_r, utility_r)``.

    Returns
    -------
    float
        ``sum_i (e_{i+1} - e_i) * (u_i - utility_r)`` over the front (module docstring).
    """
    edges, levels = _staircase(points, anti_ideal)
    widths = np.diff(edges[1:])
    return float(np.sum(widths * (levels[1:] - levels[0])))


def hypervolume_improvement(candidates, points, anti_ideal) -> np.ndarray:
    """``HV(points + [c]) - HV(points)`` for each candidate point ``c``.

    Parameters
    ----------
    candidates : array-like of shape (m, 2)
        ``(epsilon, utility)`` of the candidate outcomes.
    points : array-like of shape (n, 2)
        The evaluated points.
    anti_ideal : (float, float)

    Returns
    -------
    ndarray of shape (m,)
        Zero for a candidate that is dominated or outside the box.
    """
    candidates = np.asarray(candidates, dtype=float).reshape(-1, 2)
    edges, levels = _staircase(points, anti_ideal)
    eps, util = candidates[:, :1], candidates[:, 1:]
    widths = np.clip(edges[1:] - np.maximum(edges[:-1], eps), 0.0, None)
    heights = np.clip(util - levels, 0.0, None)
    return np.sum(widths * heights, axis=1)


def _probability_below(x, mean, std):
    """``P(X < x)`` for ``X ~ N(mean, std**2)``; a point mass at ``mean`` where ``std`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - mean) / std
    return np.where(std > 0, norm.cdf(z), (x > mean).astype(float))


def _probability_above(x, mean, std):
    """``P(X > x)`` for ``X ~ N(mean, std**2)``; a point mass at ``mean`` where ``std`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - mean) / std
    return np.where(std > 0, norm.sf(z), (mean > x).astype(float))


def probability_of_improvement(log_epsilon_mean, log_epsilon_std, utility_mean, utility_std,
                               points, anti_ideal) -> np.ndarray:
    """Probability that the outcome is inside the box and not dominated by ``points``.

    ``log(epsilon)`` and the utility are independent Gaussians with the given means and
    standard deviations (module docstring for the formula).

    Parameters
    ----------
    log_epsilon_mean, log_epsilon_std, utility_mean, utility_std : array-like of shape (m,)
        Predictive distribution at each of ``m`` candidates.
    points : array-like of shape (n, 2)
        The evaluated ``(epsilon, utility)`` points; their epsilons inside the box must be > 0.
    anti_ideal : (float, float)
        ``(epsilon_r, utility_r)`` with ``epsilon_r > 0``.

    Returns
    -------
    ndarray of shape (m,)
    """
    edges, levels = _staircase(points, anti_ideal)
    with np.errstate(divide="ignore"):
        log_edges = np.log(np.clip(edges, 0.0, None))  # e_0 = -inf -> log 0 = -inf
    mu_e, s_e = (np.asarray(a, dtype=float)[:, None] for a in (log_epsilon_mean, log_epsilon_std))
    mu_u, s_u = (np.asarray(a, dtype=float)[:, None] for a in (utility_mean, utility_std))
    # strips are [e_j, e_{j+1}) and improving means a utility strictly above the level
    strip_probability = np.clip(np.diff(_probability_below(log_edges, mu_e, s_e), axis=1),
                                0.0, None)
    above_level = _probability_above(levels, mu_u, s_u)
    return np.sum(strip_probability * above_level, axis=1)


def hvpoi(log_epsilon_mean, log_epsilon_std, utility_mean, utility_std, points,
          anti_ideal) -> np.ndarray:
    """Hypervolume-based probability of improvement, ``HVI(m) * PoI`` (DPareto, eq. 3).

    Parameters
    ----------
    log_epsilon_mean, log_epsilon_std, utility_mean, utility_std : array-like of shape (m,)
        Predictive distribution at each of ``m`` candidates (``log(epsilon)`` Gaussian).
    points : array-like of shape (n, 2)
        The evaluated ``(epsilon, utility)`` points.
    anti_ideal : (float, float)

    Returns
    -------
    ndarray of shape (m,)
        Zero where the predictive mean ``m = (exp(mu_e), mu_u)`` adds no hypervolume.
    """
    mean = np.column_stack([np.exp(np.asarray(log_epsilon_mean, dtype=float)),
                            np.asarray(utility_mean, dtype=float)])
    improvement = hypervolume_improvement(mean, points, anti_ideal)
    poi = probability_of_improvement(log_epsilon_mean, log_epsilon_std, utility_mean,
                                     utility_std, points, anti_ideal)
    return improvement * poi
