"""Statistical audit of DP-GIBO's guard (``DPGIBOSearchCV``, docs/gibo.md, "The guard").

The guard is pure ``epsilon_guard``-DP with respect to the validation rows: with the models of
the start and the last point fixed (functions of the train rows only), each point's utility is
its mean per-example utility in [0, 1] over the ``m`` validation rows, of replace-one
sensitivity ``1 / m``, and ``skdptune.gibo.guard_selection`` picks one by permute-and-flip at
that sensitivity. The audit runs that very function on per-example loss matrices, the
validation rows as the models see them.

* *Pair* (``m = 20`` validation rows; losses of (start, last) per row): shared rows -- 9 rows
  (0, 0), 9 rows (1, 1), one row (0, 1) -- and row 0, which is (0, 1) on ``D`` (the start
  right, the last point wrong) and (1, 0) on ``D'``. The start's utility moves by ``+1/m`` and
  the last point's by ``-1/m``: a gap of ``2/m`` on ``D`` and none on ``D'``. Permute-and-flip
  then picks the last point with probability ``exp(-eps) / 2`` on ``D`` and ``1 / 2`` on
  ``D'``: the event "last" has privacy loss exactly ``eps``, the pair is tight.
* *Events*: each of the two outcomes, both directions (Bonferroni).
* *Claims*: ``"search"``: the ``epsilon_guard`` of a real search (``epsilon = 2``, the default
  ``tuning_share`` and ``guard_share``: 0.2); ``"unit"``: ``eps = 1``.
* *Broken twin*: the sensitivity ``1/n`` of the whole data (``n = 5m`` rows at
  ``validation_size = 0.2``) instead of ``1/m``: its true loss on the pair is ``5 eps``.

Measured lower bounds, sound / broken, against the claim (95 %, Bonferroni): fast (``unit``
only, 6 000 selections per side, about 1.5 s): 0.873 / 4.261 against 1; slow (200 000 per
side): ``search`` 0.185 / 0.982 against 0.2, ``unit`` 0.982 / 4.926 against 1.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from _audit import family_audit
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from sklearn.datasets import make_classification

from skdptune import DPGIBOSearchCV
from skdptune import gibo as gibo_module

M_ROWS = 20
EVENTS = [[0], [1]]  # start, last: fixed in advance


def loss_pair() -> tuple[np.ndarray, np.ndarray]:
    shared = np.array([[0, 0]] * 9 + [[1, 1]] * 9 + [[0, 1]], dtype=float)
    d = np.vstack([[[0.0, 1.0]], shared])
    d_prime = np.vstack([[[1.0, 0.0]], shared])
    return d, d_prime


def search(**kw) -> DPGIBOSearchCV:
    return DPGIBOSearchCV(LogisticRegression(data_norm=1.0), {"C": (1e-2, 1e2, "log")},
                          epsilon=2.0, classes=[0, 1], **kw)


def claim(setting: str) -> float:
    if setting == "unit":
        return 1.0
    s = search()
    return s._plan_costs(s._search_space(), s._box()).epsilon_guard


def sample(losses: np.ndarray, epsilon: float, runs: int, seed: int) -> list[int]:
    rng = np.random.RandomState(seed)
    return [gibo_module.guard_selection(losses, epsilon, rng) for _ in range(runs)]


def audit(setting: str, runs: int):
    d, d_prime = loss_pair()
    epsilon = claim(setting)
    return family_audit(sample(d, epsilon, runs, 11), sample(d_prime, epsilon, runs, 12),
                        EVENTS), epsilon


def test_the_pair_is_neighbouring_tight_and_the_claim_the_searchs():
    d, d_prime = loss_pair()
    assert d.shape == d_prime.shape == (M_ROWS, 2)
    assert np.count_nonzero(np.any(d != d_prime, axis=1)) == 1  # one row replaced
    utilities = 1 - d.mean(axis=0), 1 - d_prime.mean(axis=0)
    np.testing.assert_allclose(np.abs(utilities[0] - utilities[1]), 1 / M_ROWS)  # attained
    assert utilities[0][0] - utilities[0][1] == pytest.approx(2 / M_ROWS)
    assert utilities[1][0] == utilities[1][1]
    assert claim("search") == pytest.approx(0.2 * 0.5 * 2.0)


def test_the_search_runs_the_audited_selection(monkeypatch):
    """A real fit hands ``guard_selection`` its ``epsilon_guard`` and the (m, 2) losses."""
    seen = []
    real = gibo_module.guard_selection

    def spy(losses, epsilon, random_state=None):
        seen.append((np.shape(losses), epsilon))
        return real(losses, epsilon, random_state)

    monkeypatch.setattr(gibo_module, "guard_selection", spy)
    X, y = make_classification(n_samples=500, n_features=4, random_state=0)
    s = search(n_iter=2, random_state=0, accountant=BudgetAccountant()).fit(X, y)
    assert seen == [((100, 2), s.privacy_split_["epsilon_guard"])]


def _broken(monkeypatch):
    monkeypatch.setattr(gibo_module, "guard_sensitivity", lambda m: 1.0 / (5 * int(m)))


def test_audit_guard_fast(monkeypatch):
    setting, start = "unit", time.perf_counter()
    sound, epsilon = audit(setting, 6_000)
    print(f"guard {setting} sound: {sound} vs claim {epsilon:.3f}")
    assert sound.epsilon_lb <= epsilon
    assert sound.epsilon_lb > 0.5 * epsilon  # the pair is tight: the audit has power
    _broken(monkeypatch)
    broken, _ = audit(setting, 6_000)
    print(f"guard {setting} broken (1/n): {broken} vs claim {epsilon:.3f} "
          f"({time.perf_counter() - start:.1f}s)")
    assert broken.epsilon_lb > epsilon


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["search", "unit"])
def test_audit_guard_slow(setting, monkeypatch):
    sound, epsilon = audit(setting, 200_000)
    print(f"guard {setting} sound: {sound} vs claim {epsilon:.3f}")
    assert sound.epsilon_lb <= epsilon
    assert sound.epsilon_lb > 0.85 * epsilon
    _broken(monkeypatch)
    broken, _ = audit(setting, 200_000)
    print(f"guard {setting} broken (1/n): {broken} vs claim {epsilon:.3f}")
    assert broken.epsilon_lb > 4 * epsilon
