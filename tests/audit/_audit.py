"""Statistical privacy audits: a lower bound on epsilon from output counts (docs/audits.md).

Run a mechanism ``n`` times on each of two neighbouring inputs ``D`` and ``D'`` and record one
hashable *outcome* per run (e.g. the whole SVT transcript). For any event ``E`` (a set of
outcomes), pure ``eps``-DP implies ``P[E] <= exp(eps) * P'[E]``, so

    eps >= log(P[E] / P'[E]) >= log(CP_lower(k, n) / CP_upper(k', n'))

holds with probability at least ``1 - alpha`` when each one-sided Clopper--Pearson bound is
taken at level ``alpha / 2`` (union bound). Choosing ``E`` after looking at the counts biases
the bound upwards, so the event must be chosen either

* from a first half of the runs and evaluated on the second half (:func:`split_audit`), or
* from a family fixed in advance, with a Bonferroni correction (:func:`family_audit`).

A lower bound above the claimed epsilon is evidence (at level ``alpha``) that the claim is
false. Tests use fixed seeds, so each audit is deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from scipy.special import betaincinv

__all__ = [
    "clopper_pearson",
    "cp_lower",
    "cp_upper",
    "epsilon_lower_bound",
    "AuditResult",
    "family_audit",
    "split_audit",
]


def cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper--Pearson lower bound of a binomial proportion at level ``1 - alpha``."""
    _check_counts(k, n)
    return 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper--Pearson upper bound of a binomial proportion at level ``1 - alpha``."""
    _check_counts(k, n)
    return 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha))


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided Clopper--Pearson interval for ``k`` successes in ``n`` trials."""
    alpha = 1 - confidence
    return cp_lower(k, n, alpha / 2), cp_upper(k, n, alpha / 2)


def epsilon_lower_bound(k_p: int, n_p: int, k_q: int, n_q: int, alpha: float = 0.05) -> float:
    """``log(CP_lower(k_p/n_p) / CP_upper(k_q/n_q))``, valid with probability ``1 - alpha``.

    ``k_p`` of ``n_p`` runs on ``D`` and ``k_q`` of ``n_q`` runs on ``D'`` fell in one event
    that was fixed before these counts were seen. Each one-sided bound is at ``alpha / 2``.
    Returns 0 when the bound is not positive (epsilon >= 0 anyway).
    """
    lo = cp_lower(k_p, n_p, alpha / 2)
    hi = cp_upper(k_q, n_q, alpha / 2)
    if lo <= 0.0:
        return 0.0
    return max(0.0, math.log(lo / hi))


@dataclass(frozen=True)
class AuditResult:
    """A lower bound on epsilon and the evidence behind it.

    ``event`` is the set of outcomes, ``direction`` is ``"D/D'"`` when the bound is
    ``log P[E] / P'[E]`` and ``"D'/D"`` otherwise; ``k_num``/``n_num`` count the numerator's
    runs in ``E`` and ``k_den``/``n_den`` the denominator's.
    """

    epsilon_lb: float
    event: frozenset
    direction: str
    k_num: int
    n_num: int
    k_den: int
    n_den: int

    def __str__(self) -> str:
        return (f"eps_lb={self.epsilon_lb:.3f} ({self.direction}: {self.k_num}/{self.n_num} vs "
                f"{self.k_den}/{self.n_den}, event of {len(self.event)} outcome(s))")


def _check_counts(k: int, n: int) -> None:
    if not (0 <= k <= n and n > 0):
        raise ValueError(f"need 0 <= k <= n and n > 0; got k={k}, n={n}")


def _count(counter: Counter, event: Iterable[Hashable]) -> int:
    return sum(counter.get(o, 0) for o in event)


def _candidate_events(num: Counter, n_num: int, den: Counter, n_den: int,
                      max_event_size: int) -> list[frozenset]:
    """Unions of the outcomes with the highest smoothed empirical ratio, largest first."""
    def score(o):
        return math.log((num[o] + 0.5) / n_num) - math.log((den.get(o, 0) + 0.5) / n_den)

    ranked = sorted(num, key=lambda o: (-score(o), repr(o)))[:max_event_size]
    return [frozenset(ranked[:j]) for j in range(1, len(ranked) + 1)]


def split_audit(outcomes_p: Sequence[Hashable], outcomes_q: Sequence[Hashable], *,
                alpha: float = 0.05, max_event_size: int = 20) -> AuditResult:
    """Lower bound on epsilon with the event chosen on one half of the runs.

    The first half of each sample chooses the event and its direction (among unions of the
    ``max_event_size`` outcomes with the highest empirical ratio, in both directions); the
    second half, independent of that choice, gives the Clopper--Pearson bound. Runs must be
    i.i.d. (they are: one mechanism, fresh noise per run).
    """
    half_p, half_q = len(outcomes_p) // 2, len(outcomes_q) // 2
    if half_p == 0 or half_q == 0:
        raise ValueError("need at least two runs on each side")
    sel_p, sel_q = Counter(outcomes_p[:half_p]), Counter(outcomes_q[:half_q])
    best = None
    for direction, num, n_num, den, n_den in (("D/D'", sel_p, half_p, sel_q, half_q),
                                              ("D'/D", sel_q, half_q, sel_p, half_p)):
        for event in _candidate_events(num, n_num, den, n_den, max_event_size):
            lb = _raw_bound(_count(num, event), n_num, _count(den, event), n_den, alpha)
            if best is None or lb > best[0]:
                best = (lb, event, direction)
    _, event, direction = best
    eval_p, eval_q = Counter(outcomes_p[half_p:]), Counter(outcomes_q[half_q:])
    n_p, n_q = len(outcomes_p) - half_p, len(outcomes_q) - half_q
    if direction == "D/D'":
        k_num, n_num, k_den, n_den = _count(eval_p, event), n_p, _count(eval_q, event), n_q
    else:
        k_num, n_num, k_den, n_den = _count(eval_q, event), n_q, _count(eval_p, event), n_p
    return AuditResult(epsilon_lower_bound(k_num, n_num, k_den, n_den, alpha), event, direction,
                       k_num, n_num, k_den, n_den)


def family_audit(outcomes_p: Sequence[Hashable], outcomes_q: Sequence[Hashable],
                 events: Sequence[Iterable[Hashable]], *, alpha: float = 0.05) -> AuditResult:
    """Lower bound on epsilon maximised over a family of events fixed in advance.

    Every event of ``events`` is tried in both directions on all the runs, each at level
    ``alpha / (2 * len(events))`` (Bonferroni), so the maximum is a valid ``1 - alpha`` bound.
    The family must not depend on these outcomes (derive it from the mechanism's analysis).
    """
    if not events:
        raise ValueError("need at least one event")
    count_p, count_q = Counter(outcomes_p), Counter(outcomes_q)
    n_p, n_q = len(outcomes_p), len(outcomes_q)
    level = alpha / (2 * len(events))
    best = None
    for raw_event in events:
        event = frozenset(raw_event)
        k_p, k_q = _count(count_p, event), _count(count_q, event)
        for result in (
            AuditResult(epsilon_lower_bound(k_p, n_p, k_q, n_q, level), event, "D/D'",
                        k_p, n_p, k_q, n_q),
            AuditResult(epsilon_lower_bound(k_q, n_q, k_p, n_p, level), event, "D'/D",
                        k_q, n_q, k_p, n_p),
        ):
            if best is None or result.epsilon_lb > best.epsilon_lb:
                best = result
    return best


def _raw_bound(k_num: int, n_num: int, k_den: int, n_den: int, alpha: float) -> float:
    """Like :func:`epsilon_lower_bound` but not clipped at 0 (to rank events)."""
    lo = cp_lower(k_num, n_num, alpha / 2)
    hi = cp_upper(k_den, n_den, alpha / 2)
    return -math.inf if lo <= 0.0 else math.log(lo / hi)
