"""Public information about the private data, and what it lets a search do before reading it.

Under the contract of skdptune (docs/privacy.md) these are public: the number of rows ``n``
(replace-one neighbours), the *format* of ``X`` and ``y`` (container type, shape, dtypes, column
names, sparsity -- they describe the schema, not a record), the **label set** of a
classifier and the **target range** of a regressor (its bounds on ``y``), which the user
declares like ``n``. Everything in this package is a function of that
public information only, except the domain checks (:mod:`._domain`), which read the data for
one purpose: to refuse a dataset outside the domain the guarantee is stated on.

What follows from it: **synthetic rows** with the public format of ``X``; **padding**, one
synthetic row per declared class appended to every fit of a classifier, so that no fit can fail
for lack of a class and ``classes_`` is the declared set (:mod:`._rows`); and a **dry run** of
every candidate on synthetic rows through the private fits' own code path, so that
configuration mistakes fail with their real message before anything is charged
(:mod:`._dry_run`).

The modules, from the ground up: :mod:`._labels` (the declared label set), :mod:`._target`
(the declared target range), :mod:`._rows`
(synthetic rows, padding, the rows a model receives), :mod:`._domain` (the domain checks),
:mod:`._dry_run`, :mod:`._magnitude` (a public limit on the rows a private transformer reads),
:mod:`._model_input` (what the private models receive) and :mod:`._preflight`
(:class:`Preflight`: all of it, in the order a search's ``fit`` needs, done once).
"""

from ._domain import check_budget, check_domain, check_routed_metadata, check_weights_domain
from ._dry_run import choose_object_fill, dry_run, start_dry_run
from ._labels import check_public_shapes, resolve_classes
from ._magnitude import magnitude_limits
from ._model_input import check_composites_readable, check_model_input, model_input_settings
from ._preflight import Preflight, RoutedMetadata
from ._rows import (
    Padding,
    PublicInfo,
    check_rows,
    make_padding,
    synthetic_dataset,
    synthetic_fit_params,
    synthetic_rows,
)
from ._target import resolve_target_range

__all__ = [
    "Padding",
    "Preflight",
    "PublicInfo",
    "RoutedMetadata",
    "check_budget",
    "check_composites_readable",
    "check_domain",
    "check_model_input",
    "check_public_shapes",
    "check_routed_metadata",
    "check_rows",
    "check_weights_domain",
    "choose_object_fill",
    "dry_run",
    "magnitude_limits",
    "make_padding",
    "model_input_settings",
    "resolve_classes",
    "resolve_target_range",
    "start_dry_run",
    "synthetic_dataset",
    "synthetic_fit_params",
    "synthetic_rows",
]
