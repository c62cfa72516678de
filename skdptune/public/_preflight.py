"""The public work of a search's ``fit`` before its private region, done once.

:class:`Preflight` runs, in the order the privacy contract needs (docs/privacy.md), everything
``fit`` does before the private region: the checks of the rows' format and of the routed
metadata, the candidates the dry run tries, the declared label set, the object fill and the
padding rows (built once, used by every fit of the search), the dry run itself -- with, beside
it, the checks of what the first private model receives and the magnitude limits -- and, after
the budget check, the domain checks. A search reads it as
``Preflight(...)`` → plan → :meth:`Preflight.dry_run` → budget check →
:meth:`Preflight.check_domain` → private region.

It holds the rows and the metadata to hand them on to the private region. Until
:meth:`Preflight.check_domain` it reads only their public format (container, shape, dtypes,
column names, lengths: docs/privacy.md); :meth:`Preflight.check_domain` reads them for one
purpose, to refuse a dataset outside the declared domain with a fixed message (:mod:`._domain`,
:mod:`._model_input`), and must come after the budget check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sklearn.utils.validation import _num_samples

from ..evaluation._fit import candidate_templates, single_threaded_blas
from ._domain import check_domain, check_routed_metadata, check_weights_domain
from ._dry_run import choose_object_fill, start_dry_run
from ._labels import check_public_shapes, resolve_classes
from ._magnitude import magnitude_limits
from ._model_input import check_composites_readable, check_model_input, model_input_settings
from ._rows import PublicInfo, check_rows, make_padding
from ._target import resolve_target_range

__all__ = ["Preflight", "RoutedMetadata"]

T = TypeVar("T")


@dataclass(frozen=True)
class RoutedMetadata:
    """The metadata of ``fit`` as routed: to the estimator's ``fit``, to the selecting scorer
    and to a user's inner splitter (scikit-learn's metadata routing, or its defaults).

    Their format is public; their values are part of the records (a sample weight, a group)
    and are read only by the domain checks and inside the private region.
    """

    fit: dict = field(default_factory=dict)
    score: dict = field(default_factory=dict)
    split: dict = field(default_factory=dict)


class Preflight:
    """The public work before a search's private region (module docstring).

    Building it checks the rows' format (:func:`~skdptune.public.check_rows`; ``n`` is public
    under replace-one neighbours) and the routed metadata's format and lengths, takes the
    candidates the dry run will try from ``space``, sets their values (scikit-learn's error
    for one that does not fit), resolves the declared label set, checks what the shapes allow
    and builds the object fill and the padding rows. Nothing is read but the format; nothing
    is charged.

    Parameters
    ----------
    estimator : estimator
        The search's estimator.
    classes : array-like or None
        The search's ``classes`` (the declared label set).
    space : SearchSpace
        The search's declaration of its candidates
        (:class:`skdptune._base.SearchSpace`): ``dry_run_candidates()`` and
        ``model_input_space()``.
    X, y : array-like
        The rows given to ``fit``.
    metadata : RoutedMetadata
        The routed metadata.

    Attributes
    ----------
    X, y
        The rows, converted as the searches' fits receive them (``y`` as the declared labels
        once :meth:`check_domain` has run).
    metadata : RoutedMetadata
    public : PublicInfo
        ``n``, the declared label set and the padding rows: what a search may plan with.
    fill
        The object fill of the synthetic rows.
    """

    def __init__(self, estimator: Any, classes: Any, space: Any, X: Any, y: Any,
                 metadata: RoutedMetadata) -> None:
        X, y = check_rows(X, y)
        n_samples = _num_samples(X)  # n is public under replace-one neighbours
        # formats and lengths (public); the weights' values are checked with the domain
        check_routed_metadata(metadata.fit, n_samples, "the estimator's fit", aligned=False)
        check_routed_metadata(metadata.score, n_samples, "the scorer")
        check_routed_metadata(metadata.split, n_samples, "the inner splitter")
        candidates = space.dry_run_candidates()
        # the space's values are set here (scikit-learn's error for one that does not fit)
        templates = candidate_templates(estimator, candidates or [{}])
        classes = resolve_classes(classes, estimator, templates)
        y = check_public_shapes(X, y, classes, estimator)
        fill = choose_object_fill(estimator, candidates[0] if candidates else {}, X, y,
                                  classes, metadata.fit)
        self.X, self.y, self.metadata = X, y, metadata
        self.estimator, self.space, self.fill = estimator, space, fill
        self.candidates, self.templates = candidates, templates
        self.public = PublicInfo(n_samples, classes, make_padding(X, y, classes, fill),
                                 resolve_target_range(estimator, templates))
        # set by dry_run: every setting of the steps in front of the first private model,
        # their magnitude limits, and whether NaN features are in the domain
        self._input_templates: list | None = None
        self._limits: list = []
        self._allow_nan = False

    def dry_run(self, scorers: dict[str, Any], meanwhile: Callable[[], T],
                n_jobs: int | None = None) -> T:
        """Dry-run every candidate on synthetic rows with ``scorers``; return ``meanwhile()``.

        The dry run's shares go to the workers (``n_jobs``) while this process does the rest
        of the public work: the checks of what the first private model can receive, the
        magnitude limits, and ``meanwhile`` (the search prices its plan there). A failed dry
        run is the error reported first, also when the work done meanwhile failed too; that
        work's own error is raised after a dry run that passed. Nothing is charged either way.

        ``scorers``: the plan's scorers by name; a dict of scorers (a multi-metric
        ``scorer_``) is tried one by one.
        """
        public, X, y = self.public, self.X, self.y
        with start_dry_run(self.estimator, self.candidates, self.templates, X, y,
                           public.classes, self.metadata.fit, _flat_scorers(scorers),
                           public.padding, self.fill,
                           scorer_params={"scoring": self.metadata.score},
                           n_jobs=n_jobs) as dry:
            try:
                # every setting of the steps in front of the first private model, for the domain
                input_templates = self.templates + candidate_templates(
                    self.estimator, model_input_settings(
                        self.estimator, self.space.model_input_space(), self.templates))
                check_composites_readable(input_templates, X, y, public.classes, self.fill)
                # the magnitude a private transformer followed by other steps may read (public)
                with single_threaded_blas():  # tiny synthetic fits: single-threaded BLAS
                    limits = magnitude_limits(input_templates, dry.synthetic)
                result = meanwhile()
            except Exception as exc:  # held: a failed dry run is reported first
                failed = exc
            else:
                failed = None
            with single_threaded_blas():
                domain = dry.finish()
        if failed is not None:
            raise failed
        self._input_templates, self._limits = input_templates, limits
        self._allow_nan = domain.allow_nan
        return result

    @property
    def magnitude_limit(self) -> float | None:
        """The smallest magnitude limit on the rows a private transformer reads (public; set by
        :meth:`dry_run`), or ``None`` when no step reads a private output."""
        limits = [limit for limit in self._limits if limit is not None]
        return min(limits) if limits else None

    def check_domain(self) -> None:
        """Refuse, with a fixed message and no charge, a dataset outside the declared domain.

        Reads the data, for this purpose only: after the budget check (a refused budget must
        not depend on the data), after :meth:`dry_run`. The domain: labels in the declared
        ``classes`` (``y`` becomes them, so ``classes_`` has their dtype whatever one row
        holds), finite features unless every candidate takes NaN, rows every candidate's first
        private model can receive, within the magnitude limits, and finite non-negative
        sample weights.
        """
        if self._input_templates is None:
            raise RuntimeError("Preflight.check_domain needs the dry run first.")
        classes = self.public.classes
        self.y = check_domain(self.X, self.y, classes, allow_nan=self._allow_nan,
                              target_range=self.public.target_range)
        check_model_input(self._input_templates, self.X, self.y, classes,
                          allow_nan=self._allow_nan, fill=self.fill, limits=self._limits)
        check_weights_domain([self.metadata.fit.get("sample_weight"),
                              self.metadata.score.get("sample_weight")])


def _flat_scorers(scorers: dict) -> dict:
    """The plan's scorers with a dict of scorers (multi-metric ``scorer_``) listed one by one."""
    flat = {}
    for name, scorer in scorers.items():
        if isinstance(scorer, dict):
            flat.update({f"{name}[{key!r}]": value for key, value in scorer.items()})
        else:
            flat[name] = scorer
    return flat
