"""Cost descriptions -> ``(epsilon, delta)``: the one place where privacy arithmetic lives.

Every private step of a search returns a small event from :mod:`skdptune.events`;
:func:`event_cost` turns any event into ``(epsilon, delta)`` and :func:`privacy_report`
composes named events into a :class:`PrivacyReport`. The helpers below state each rule, its
neighbouring relation and its reference; ``docs/accounting.md`` gives the proofs.

All quantities are for the **replace-one** neighbouring relation (bounded DP, ``n`` public):
two datasets are neighbours when one record (a row of ``X`` with its ``y`` and sample weight) is
replaced by another. Every figure is computed from data-independent quantities only. This
module generates no noise and reads no data: it is pure arithmetic.

The ``delta`` convention
------------------------
Some costs are only finite once a target ``delta`` is chosen (Renyi-DP based repetition bounds,
Gaussian DP). Throughout this module ``delta`` is the *conversion budget*: the total ``delta``
that may be spent turning such guarantees into ``(epsilon, delta)``. Inside a
:class:`~skdptune.events.ComposedEvent` (and across the components of :func:`privacy_report`)
it is split equally between the parts that consume one, so the conversions together never
use more than ``delta``; a :class:`~skdptune.events.ParallelEvent` hands its whole share to
every part (only one part sees the replaced record). Deltas that are part of a mechanism's own
guarantee (an ``EpsilonDeltaEvent``'s ``delta``, the ``1 - f(1 - delta_0)`` of
Papernot & Steinke's Lemma 20) are added on top. The reported ``delta`` is always the one
actually used.

Layout (one module per mechanism family, behind the two entry points above):

* ``_report`` -- :class:`PrivacyReport` and basic sequential / parallel composition;
* ``_svt`` -- the doubling-step sparse vector technique;
* ``_composition`` -- optimal composition of pure DP (Kairouz, Oh & Viswanath);
* ``_gaussian`` -- Gaussian differential privacy;
* ``_repetition`` -- randomized repetition (Papernot & Steinke): pure and Renyi-DP bounds;
* ``_profiles`` -- privacy profiles of repetition (Koskela, Redberg & Wang style);
* ``_events`` -- the dispatch from events to costs.
"""

from ._composition import (
    kov_optimal_composition_epsilon,
    self_composition_cost,
)
from ._events import event_cost, privacy_report
from ._gaussian import gdp_delta, gdp_epsilon
from ._laws import truncated_negative_binomial_gamma, truncated_negative_binomial_mean
from ._profiles import repetition_profile_delta, repetition_profile_epsilon
from ._repetition import (
    repetition_cost,
    repetition_epsilon,
    repetition_lemma20_delta,
    repetition_pure_epsilon,
    repetition_rdp_epsilon,
)
from ._report import (
    PrivacyComponent,
    PrivacyReport,
    parallel_composition,
    sequential_composition,
)
from ._svt import doubling_svt_epsilon, doubling_svt_round_epsilon, svt_max_above

__all__ = [
    "PrivacyComponent",
    "PrivacyReport",
    "event_cost",
    "privacy_report",
    "sequential_composition",
    "parallel_composition",
    "doubling_svt_epsilon",
    "doubling_svt_round_epsilon",
    "svt_max_above",
    "kov_optimal_composition_epsilon",
    "self_composition_cost",
    "gdp_delta",
    "gdp_epsilon",
    "truncated_negative_binomial_mean",
    "truncated_negative_binomial_gamma",
    "repetition_pure_epsilon",
    "repetition_rdp_epsilon",
    "repetition_lemma20_delta",
    "repetition_profile_delta",
    "repetition_profile_epsilon",
    "repetition_cost",
    "repetition_epsilon",
]
