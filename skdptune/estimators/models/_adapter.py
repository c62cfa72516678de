"""The vocabulary of a model family: everything skdptune knows about one diffprivlib model.

One :class:`ModelAdapter` per family, registered by exact class (:mod:`._registry`). The rest
of skdptune never names a diffprivlib model class: it asks the adapter of a component.

Rules every adapter keeps
-------------------------
* **Exact classes.** An adapter serves the classes in :attr:`ModelAdapter.models` and no
  subclass of them: a subclass may learn from the rows in its own ``fit``, so it is a
  non-private component like any other estimator.
* **Replace-one.** Costs are under replace-one neighbours (bounded DP, ``n`` public): what one
  fit costs when one record is replaced by another. diffprivlib sizes some models' noise for a
  record added or removed; the adapter's :meth:`ModelAdapter.cost_function` says what its fit
  costs under replace-one, from public parameters only, rounded up.
* **Monotone in epsilon.** ``cost_function(...)(epsilon)`` is nondecreasing in ``epsilon`` and
  at least ``epsilon`` times the family's least factor, so that a maximum over listed
  epsilons, or the upper end of a distribution's support, bounds every value in between, and
  scaling epsilons down never raises the cost.
* **The fit priced is the fit run.** Where diffprivlib's own ``fit`` is not sound, the adapter
  names a subclass (:attr:`ModelAdapter.sound_fit`) with no parameter, ``__init__`` or
  ``__slots__`` of its own, which every fit skdptune runs switches to and back; the cost is
  that of the sound fit.
* **A fit never released may be drawn faster, never differently.** An adapter may name a
  subclass (:attr:`ModelAdapter.unreleased_fit`, with no parameter, ``__init__`` or
  ``__slots__`` of its own) whose fit draws the same model distribution as the fit priced,
  from diffprivlib's samplers, by other code; it is switched in only for fits no output of
  which is released but a bounded utility (a partition's model in subsample-and-aggregate),
  where privacy holds whatever the model, and its tests compare its distribution with the
  priced fit's.
* **Data-independent answers.** Every method reads the component's parameters (public), never
  fitted attributes or data, except :meth:`ModelAdapter.output_bound`, which reads a public
  magnitude.
* **The counterpart is a reference, never a fallback.**
  :meth:`ModelAdapter.nonprivate_counterpart` builds the scikit-learn model the family stands
  in for, to show what privacy costs (the non-private line of a privacy-utility front);
  nothing private is ever fitted with it.
* **Refused families** (:attr:`ModelAdapter.unsound` set) do not meet their own guarantee as
  implemented: no cost stated for them is true, and the searches and
  :func:`~skdptune.estimator_privacy` refuse them like non-private components, saying why.
"""

from __future__ import annotations

import fractions
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

__all__ = ["ModelAdapter", "float_at_least"]


def float_at_least(value: fractions.Fraction) -> float:
    """The smallest float ``>= value``."""
    out = float(value)
    return out if fractions.Fraction(out) >= value else math.nextafter(out, math.inf)


class ModelAdapter:
    """What skdptune knows about one diffprivlib model family (module docstring: the rules).

    Subclasses set the class attributes and override the methods whose default does not hold;
    one instance per family is registered. The defaults describe a model whose noise is sized
    for a replaced record, fitted by diffprivlib's own ``fit``, with nothing to add.
    """

    #: the diffprivlib classes of the family (exact classes)
    models: ClassVar[tuple[type, ...]] = ()
    #: why the family does not meet its own guarantee as implemented (refused), or ``None``
    unsound: ClassVar[str | None] = None
    #: scikit-learn classes (non-private) the family replaces, and the advice for a user who
    #: passes one; found along the user class's ``__mro__``
    replaces: ClassVar[Mapping[type, str]] = {}
    #: parameters that diffprivlib reads off the data when ``None`` (``PrivacyLeakWarning``),
    #: with the advice for each
    leak_params: ClassVar[Mapping[str, str]] = {}
    #: parameters holding a pair ``(lower, upper)`` (checked when drawn from a box)
    pair_params: ClassVar[tuple[str, ...]] = ()
    #: parameters besides ``epsilon`` and ``delta`` that the cost reads, in no monotone way:
    #: every listed value of a search space is priced, and when one is left to the data
    #: (``None``) no cost is true, so the pricing refuses it
    cost_params: ClassVar[tuple[str, ...]] = ()
    #: parameters that decide whether the fit reads the data or how it is priced: every listed
    #: value of a search space is a setting of its own
    structure_params: ClassVar[tuple[str, ...]] = ()
    #: fitted attributes computed from the data outside the DP mechanism: deleted from a
    #: model a search returns
    nonprivate_attributes: ClassVar[tuple[str, ...]] = ()
    #: parameters whose meaning scales with the number of training rows (a regularisation
    #: weighing a sum of losses): multiplied by ``n / n_rows`` for a fit on ``n_rows`` rows
    #: standing in for one on ``n`` (never released)
    row_dependent_params: ClassVar[tuple[str, ...]] = ()
    #: parameters whose meaning scales inversely with the number of training rows (a ridge
    #: added to a sum over the rows): multiplied by ``n_rows / n`` for such a fit (never
    #: released)
    row_proportional_params: ClassVar[tuple[str, ...]] = ()
    #: parameters diffprivlib compares in their own precision: set as Python floats before a
    #: fit, so that its branch tests are those the pricing computed in float64
    exact_float_params: ClassVar[tuple[str, ...]] = ()
    #: the subclass that fits the model soundly (switched in for every fit), or ``None``
    sound_fit: ClassVar[type | None] = None
    #: a subclass drawing the same model distribution as the priced fit faster, switched in
    #: only for fits that are never released (partition models), or ``None``
    unreleased_fit: ClassVar[type | None] = None
    #: the float type the model converts its rows to (a finite float64 may overflow it)
    input_dtype: ClassVar[type] = np.float64
    #: a scikit-learn class whose fit on public rows gives the output names and float type of
    #: this transformer without drawing noise, or ``None`` (the transformer itself is fitted)
    format_twin: ClassVar[type | None] = None
    #: for a regressor, the parameter holding the public range ``(lower, upper)`` of its
    #: target (the declared domain of ``y``, and the scale of its bounded scores), or ``None``
    target_param: ClassVar[str | None] = None
    #: the scikit-learn class that fits the same model without privacy (one of
    #: :attr:`replaces`), or ``None``: the non-private reference of a privacy-utility front
    counterpart: ClassVar[type | None] = None
    #: the parameters the family shares with :attr:`counterpart`, in the same meaning: copied
    #: to it by :meth:`nonprivate_counterpart` (privacy parameters never are)
    counterpart_params: ClassVar[tuple[str, ...]] = ()

    def nonprivate_counterpart(self, estimator: Any) -> Any | None:
        """A new, unfitted :attr:`counterpart` with ``estimator``'s values of
        :attr:`counterpart_params` (its other parameters at scikit-learn's defaults); ``None``
        when the family has no counterpart. Not private: a reference to compare with."""
        if self.counterpart is None:
            return None
        params = estimator.get_params(deep=False)
        return self.counterpart(**{name: params[name] for name in self.counterpart_params})

    def leaking(self, params: Mapping[str, Any]) -> list[str]:
        """The parameters of :attr:`leak_params` that, set as in ``params``, diffprivlib would
        read off the data."""
        return [name for name in self.leak_params if name in params and params[name] is None]

    def target_range(self, estimator: Any) -> tuple[float, float] | None:
        """The public range ``(lower, upper)`` of a regressor's target, from
        :attr:`target_param`; ``None`` when the family has none or it is left to the data."""
        if self.target_param is None:
            return None
        bounds = getattr(estimator, self.target_param, None)
        if bounds is None:
            return None
        lower, upper = (float(np.min(b)) if i == 0 else float(np.max(b))
                        for i, b in enumerate(bounds))
        return lower, upper

    def replace_one_factor(self, estimator: Any) -> fractions.Fraction | float:
        """What one unit of the model's ``epsilon`` costs under replace-one neighbours:
        exact (a :class:`fractions.Fraction`), or ``inf`` when no bound is known."""
        return fractions.Fraction(1)

    def cost_function(self, estimator: Any, label: str,
                      n_classes: int | None) -> Callable[[float], float]:
        """``epsilon ->`` what one fit of ``estimator`` with that ``epsilon`` costs under
        replace-one, its other parameters read and checked once (a budget mode's bisection
        calls it some fifty times per candidate). ``label`` names the component in errors;
        ``n_classes`` is the declared label set's size (``None``: unknown, the supremum over
        every count). Default: ``epsilon`` times :meth:`replace_one_factor`, rounded up."""
        factor = self.replace_one_factor(estimator)
        if factor == 1:
            return float
        if not math.isfinite(factor):
            raise ValueError(f"{label}: no bounded privacy cost under replace-one neighbours: "
                             f"{self.unbounded_reason(estimator)} (docs/privacy.md, "
                             "\"diffprivlib's models under replace-one\").")
        return lambda epsilon: float_at_least(fractions.Fraction(epsilon) * factor)

    def unbounded_reason(self, estimator: Any) -> str:
        """Why :meth:`replace_one_factor` is ``inf`` for ``estimator`` (for the error)."""
        return "its parameters admit no bounded cost"

    def cost_is_linear(self) -> bool:
        """Whether the cost is ``epsilon`` times a factor (a budget divides it out; otherwise
        the epsilon's scale is solved for by bisection)."""
        return True

    def draws_cost(self, estimator: Any) -> bool:
        """Whether a parameter the cost depends on is drawn afresh for each run (each draw
        priced at its own factor; :attr:`least_cost_params` bound the others' shares)."""
        return False

    #: the setting at which a drawn cost is least (:meth:`draws_cost`)
    least_cost_params: ClassVar[Mapping[str, Any]] = {}

    #: how the batched solvers fit the family (:meth:`batched`): ``False``, the logistic
    #: solvers (:mod:`skdptune.evaluation._batched`: partition fits and repetition runs, the
    #: model alone or after data-independent steps); ``True``, the repetition runs of the model
    #: alone from the exact statistics of their rows, computed once per setting
    #: (:mod:`skdptune.evaluation._batched_ssp`)
    batched_statistics: ClassVar[bool] = False

    def batched(self, estimator: Any) -> bool:
        """Whether skdptune's batched solvers fit ``estimator`` (many fits in one call; which
        solvers: :attr:`batched_statistics`)."""
        return False

    def output_bound(self, params: Mapping[str, Any],
                     n_features: int) -> tuple[bool, float] | None:
        """For a transformer: ``(subtracts a mean drawn within its bounds, gain)`` such that
        every output entry is at most ``(L + b) * gain`` on rows of magnitude ``L``, ``b``
        the bounds' largest magnitude (0 when it subtracts none), whatever its noise;
        ``None`` when no public number bounds it."""
        return None
