"""Looking inside an estimator: its components, what fitting it costs, what makes it private.

Everything in skdptune that needs to look *inside* an estimator goes through this package:
:mod:`._walk` (the components and their roles), :mod:`._free` (data-independent transformers),
:mod:`._settings` (the settings of a search space that can change privacy), :mod:`._guards`
(refusals before any data is read), :mod:`._pricing` (the cost of one fit, budget modes),
:mod:`._inner` (inner fits and the release of a fitted model), :mod:`._structure` (the steps in
front of the first private model), :mod:`._counterpart` (the non-private twin of an estimator,
a reference), and :mod:`.models`, the only code that names a diffprivlib model class: one
adapter per model family, found through one registry by class.
"""

from ._counterpart import nonprivate_counterpart
from ._guards import (
                      check_leak_free_configuration,
                      check_private_components,
                      check_sound_components,
                      leak_warnings_as_errors,
                      nonprivate_components,
)
from ._inner import (
                      clone_with_throwaway_accountants,
                      derived_seed,
                      for_inner_fits,
                      rescale_row_dependent_params,
                      seed_dp_components,
                      seeded_dp_components,
                      sound_fitting,
                      strip_nonprivate_attributes,
                      switch_to_sound_fits,
                      with_throwaway_accountants,
)
from ._paths import public_name
from ._pricing import (
                      estimator_privacy,
                      estimator_privacy_parts,
                      replace_one_factor,
                      scale_dp_epsilons,
                      set_total_epsilon,
)
from ._settings import space_sets_epsilon, structure_variants
from ._structure import (
                      branch_of,
                      final_step_after_free_steps,
                      free_image,
                      leading_free_steps,
                      private_branch,
                      shapes_model_input,
)
from ._values import is_listed
from ._walk import (
                      children,
                      deep_values,
                      holds_dp,
                      is_dp_component,
                      iter_dp_components,
                      steps_in_line,
                      with_children,
)

__all__ = [
    "branch_of", "check_leak_free_configuration", "check_private_components",
    "check_sound_components", "children", "clone_with_throwaway_accountants", "deep_values",
    "derived_seed",
    "estimator_privacy", "holds_dp", "is_dp_component", "public_name", "steps_in_line",
    "with_children",
    "estimator_privacy_parts", "final_step_after_free_steps", "for_inner_fits", "free_image",
    "is_listed", "iter_dp_components", "leading_free_steps", "leak_warnings_as_errors",
    "nonprivate_components", "nonprivate_counterpart", "private_branch", "replace_one_factor",
    "rescale_row_dependent_params",
    "scale_dp_epsilons", "seed_dp_components", "seeded_dp_components", "set_total_epsilon",
    "shapes_model_input", "sound_fitting", "space_sets_epsilon", "strip_nonprivate_attributes",
    "structure_variants", "switch_to_sound_fits", "with_throwaway_accountants",
]
