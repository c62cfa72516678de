"""The shape of a pipeline around its first private model: the data-independent steps in
front of it, and what they compute before any noise is drawn.

The public checks of the rows a private model receives (the domain of its input, the dry run's
questions about it) read the estimator through these: the steps in front are
data-independent, so they can be fitted on public synthetic rows.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from .._params import get_params, set_params
from ._walk import (
    FREE,
    children,
    deep_values,
    holds_dp,
    is_dp_component,
    steps_in_line,
    walk,
    with_children,
)

__all__ = ["final_step_after_free_steps", "free_image", "leading_free_steps",
           "branch_of", "private_branch", "shapes_model_input"]


def final_step_after_free_steps(estimator: Any) -> Any:
    """The last step of a ``Pipeline`` whose every other component is data-independent, else
    ``None``.

    The steps before the last may be composites (``ColumnTransformer``, ``FeatureUnion``,
    nested pipelines) as long as every leaf in them is a data-independent transformer
    (:func:`is_data_independent`) or ``"passthrough"`` / ``"drop"``: none draws noise, has a
    ``random_state`` or learns from the rows it is fitted on.
    """
    if type(estimator) is not Pipeline or not estimator.steps:  # a subclass may override fit
        return None
    final = estimator.steps[-1][1]
    prefix = [step for _, step in estimator.steps[:-1]]
    if all(comp.role == FREE for step in prefix for comp in walk(step)):
        return final
    return None


def leading_free_steps(estimator: Any) -> tuple[Any, Any]:
    """``(prefix, step)``: a ``Pipeline`` of the leading steps of ``estimator`` whose every
    component is data-independent (:func:`is_data_independent`, ``"passthrough"``, ``"drop"``;
    ``None`` when there is none) and the first step after them -- the first that reads the
    rows as the prefix transforms them. Nested pipelines are read as their steps in line.
    ``(None, estimator)`` for anything but a ``Pipeline``. The steps are the estimator's own
    objects (clone the prefix before fitting it)."""
    if not isinstance(estimator, Pipeline) or not estimator.steps:
        return None, estimator
    steps = steps_in_line(estimator)
    j = 0
    while j < len(steps) - 1 and all(comp.role == FREE for comp in walk(steps[j])):
        j += 1
    prefix = Pipeline([(f"step{i}", step) for i, step in enumerate(steps[:j])]) if j else None
    return prefix, steps[j]


def private_branch(step: Any) -> str | None:
    """The name of the one private branch of a ``ColumnTransformer`` (not a subclass) whose
    other branches and remainder are data-independent, when that branch is a private component
    itself (not a composite holding one) and the transformer weighs no branch; else ``None``.
    Its output is then the branch's, side by side with data-independent columns. Public: the
    step's structure."""
    if type(step) is not ColumnTransformer or step.transformer_weights:
        return None
    private = [(name, trans) for name, trans, _ in step.transformers if is_dp_component(trans)]
    if len(private) != 1:
        return None
    name, trans = private[0]
    others = [comp for comp in walk(step) if comp.estimator is not trans]
    return name if all(comp.role == FREE for comp in others) else None


def branch_of(transformer: Any, name: str) -> Any:
    """The branch ``name`` of a ``ColumnTransformer`` (its ``transformers`` entry)."""
    return next(trans for branch, trans, _ in transformer.transformers if branch == name)


def free_image(step: Any) -> Any:
    """``step`` cut at its private components: what its data-independent parts compute before
    any noise is drawn.

    Every diffprivlib component becomes ``"passthrough"`` and every ``Pipeline`` stops after
    its first step that holds one, so a composite (``ColumnTransformer``, ``FeatureUnion``,
    nested at any depth) outputs, side by side, the rows each of its first private components
    receives and the output of its data-independent branches. Built from clones; fit the result
    (its every step is data-independent). ``None`` when ``step`` holds no private component.
    """
    return _cut_apart(step)[0] if holds_dp(step) else None


def _cut_apart(step: Any) -> tuple[Any, list]:
    """``(image, cut)``: :func:`free_image`'s rebuild of ``step`` (from clones), and ``step``'s
    own objects that the rebuild cuts away -- its private components, what is inside them and
    the steps after them in a pipeline. One walk gives both, so that what
    :func:`shapes_model_input` counts as cut away is what the image leaves out."""
    if not holds_dp(step):
        return (step if isinstance(step, str) or step is None else clone(step)), []
    if is_dp_component(step):
        return "passthrough", [step, *deep_values(step)]
    if isinstance(step, Pipeline):
        kept, cut, reached = [], [], False
        for name, sub in step.steps:
            if reached:
                cut += [sub, *deep_values(sub)]
                continue
            image, below = _cut_apart(sub)
            kept.append((name, image))
            cut += below
            reached = holds_dp(sub)
        return Pipeline(kept), cut
    out = clone(step)
    if isinstance(step, ColumnTransformer):
        # prefixed output names: a private branch made "passthrough" keeps its input's names,
        # which may clash with another branch's (pandas output refuses duplicates)
        set_params(out, verbose_feature_names_out=True)
    parts = [_cut_apart(sub) for _, sub, _ in children(step)]
    return (with_children(out, [image for image, _ in parts]),
            [obj for _, below in parts for obj in below])


def shapes_model_input(template: Any, name: str) -> bool:
    """Whether setting the parameter ``name`` of ``template`` may change what its first private
    model receives: the data-independent steps in front of it (:func:`leading_free_steps`), or
    which step that model is -- or, when that first step is a composite holding private
    components, its :func:`free_image`.

    Conservative: ``False`` only for a parameter of a private component or of an object after
    one -- the first private step and the steps after it (``clf__C``, ``model__clf__tol``);
    in a composite first step, its private components and what follows them in a branch
    (``ct__scale__epsilon``). A parameter of a step in front (``poly__degree``), of a free
    branch of the composite (``ct__poly__degree``) or of the composite itself, a step's name
    (which replaces the step), a pipeline's own parameter, or a name that does not resolve,
    shapes it.
    """
    owner_path = name.rpartition("__")[0]
    try:
        owner = template if not owner_path else get_params(template)[owner_path]
    except Exception:  # a name that does not resolve: say it shapes (the dry run reports it)
        return True
    first = leading_free_steps(template)[1]
    steps = steps_in_line(template)
    j = next(j for j, step in enumerate(steps) if step is first)
    if is_dp_component(first):
        beyond = [obj for step in steps[j:] for obj in (step, *deep_values(step))]
    else:
        beyond = [*_cut_apart(first)[1],
                  *(obj for step in steps[j + 1:] for obj in (step, *deep_values(step)))]
    return not any(owner is obj for obj in beyond)
