"""The dry run: every candidate (up to a cap) fitted and scored on a small synthetic dataset
with the public format, through the same code path as the private fits.

Configuration mistakes -- an unknown parameter name, a format the estimator rejects (sparse
input for diffprivlib), a scorer with the wrong signature, invalid parameter values -- fail
here, with the real message (it is about synthetic data), before the budget is checked or
charged.
"""

from __future__ import annotations

import inspect
import time
import warnings
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples

from .._private import discard_all_but_leaks, silenced, uses_threads
from ..estimators.models import with_user_class_names
from ..evaluation._fit import fit_on_rows, instantiate, prepare_clone
from ..exceptions import PrivacyLeakError
from ._domain import _numeric_blocks
from ._rows import (
    OBJECT_FILLS,
    Padding,
    has_object_entries,
    make_padding,
    synthetic_dataset,
    synthetic_fit_params,
)

__all__ = [
    "DRY_RUN_MAX_FITS",
    "DryRunResult",
    "PendingDryRun",
    "choose_object_fill",
    "dry_run",
    "start_dry_run",
]


#: candidates fitted in the dry run; beyond, only ``set_params`` is checked for the others
DRY_RUN_MAX_FITS = 200


def choose_object_fill(estimator: Any, params: dict, X: Any, y: Any,
                       classes: np.ndarray | None, fit_params: dict) -> Any:
    """The first of :data:`OBJECT_FILLS` with which ``estimator`` fits synthetic data.

    A public question (format and configuration only). Falls back to the first value: the dry
    run then reports the error.
    """
    if not has_object_entries(X):
        return OBJECT_FILLS[0]
    for fill in OBJECT_FILLS:
        X_syn, y_syn = synthetic_dataset(X, y, classes, fill=fill)
        padding = make_padding(X, y, classes, fill)
        params_syn = synthetic_fit_params(fit_params, _num_samples(X), _num_samples(X_syn))
        try:
            with silenced():
                fit_on_rows(prepare_clone(estimator, params, seed=0), X_syn, y_syn, None,
                            params_syn, padding=padding)
        except Exception:
            continue
        return fill
    return OBJECT_FILLS[0]


@dataclass(frozen=True)
class DryRunResult:
    """What the dry run learnt from public information: whether NaN features are accepted;
    and the synthetic dataset it fitted on, ``(X, y, fit params, padding, scorers, scorer
    params)``, for :func:`skdptune.public._magnitude.magnitude_limits`."""
    allow_nan: bool
    synthetic: tuple


def dry_run(estimator: Any, candidates: list[dict], templates: list, X: Any, y: Any,
            classes: np.ndarray | None, fit_params: dict, scorers: dict[str, Any],
            padding: Padding | None, fill: Any = "",
            scorer_params: dict[str, dict] | None = None, n_jobs: int | None = None
            ) -> DryRunResult:
    """Fit and score every candidate (up to a cap) on synthetic data with the public format.

    ``templates``: the candidates' :func:`~skdptune.evaluation._fit.candidate_templates`
    (building them checked that the space's values can be set; without candidates, the
    estimator's own). Raises ``ValueError`` naming the first candidate, in order, that fails
    and quoting its error -- which is about synthetic data, hence public. Warnings are silenced
    (they concern synthetic data). Goes through :func:`skdptune.evaluation._fit.fit_on_rows`,
    the path of the private fits, with the same padding rows. ``scorer_params`` maps a scorer's
    name to the metadata it gets (row-aligned arrays replaced by ones), so that a scorer that
    cannot take them fails here.

    With ``n_jobs`` resolving to ``k >= 2`` the candidates are fitted in ``k`` shares (every
    ``k``-th candidate: a grid's costly values are spread evenly), one here and the others in
    joblib workers (:class:`_WorkerShares`); each share reports the first of its candidates
    that failed, and the earliest of these is fitted again here, so that the error raised --
    its message and its cause -- is the one a sequential run raises. The first candidate is
    always fitted here (the returned model is fitted in this process). The synthetic fits are
    public: they may run anywhere.

    A caller with other public work does it while the workers fit: :func:`start_dry_run`.
    """
    with start_dry_run(estimator, candidates, templates, X, y, classes, fit_params, scorers,
                       padding, fill, scorer_params, n_jobs) as pending:
        return pending.finish()


def start_dry_run(estimator: Any, candidates: list[dict], templates: list, X: Any, y: Any,
                  classes: np.ndarray | None, fit_params: dict, scorers: dict[str, Any],
                  padding: Padding | None, fill: Any = "",
                  scorer_params: dict[str, dict] | None = None, n_jobs: int | None = None
                  ) -> PendingDryRun:
    """:func:`dry_run` in two steps (same arguments): entering the returned
    :class:`PendingDryRun` dispatches the workers' shares without awaiting them, and its
    :meth:`~PendingDryRun.finish` completes the dry run."""
    X_syn, y_syn = synthetic_dataset(X, y, classes, fill=fill)
    params_syn = synthetic_fit_params(fit_params, _num_samples(X), _num_samples(X_syn))
    score_syn = {name: synthetic_fit_params(params, _num_samples(X), _num_samples(X_syn))
                 for name, params in (scorer_params or {}).items() if params}
    checked = (candidates if candidates else [{}])[:DRY_RUN_MAX_FITS]
    synthetic = (X_syn, y_syn, params_syn, padding, scorers, score_syn)
    shares = _WorkerShares(templates[:len(checked)], synthetic, n_jobs)
    return PendingDryRun(checked, templates[:len(checked)], synthetic, shares,
                         (X, y, classes, params_syn, padding, fill))


class PendingDryRun:
    """A dry run whose workers' shares are fitted while the caller does other public work
    (:func:`start_dry_run`)::

        with start_dry_run(...) as pending:
            ...  # other public work, its failure held
            result = pending.finish()

    ``synthetic``: the synthetic dataset it fits on, available at once. Entering dispatches the
    workers' shares; :meth:`finish` fits this process's share, waits for theirs, fits here what
    a sequential run's error needs, and returns the :class:`DryRunResult` or raises the error
    :func:`dry_run` raises -- call it also when the work done in between failed, so that a dry
    run's failure is the one reported, as in a run without overlap. Leaving without
    :meth:`finish` (an interrupt) abandons the shares at once.

    The process's warning filters are saved on entering and restored on leaving: a worker
    that is a thread of this process (dask's in-process workers) silences itself with
    ``warnings.catch_warnings``, which is not thread-safe, and its entries and exits interleave
    with this thread's (measured: 3 fits in 8 left every warning ignored).
    """
    def __init__(self, checked, templates, synthetic, shares, nan_question):
        self.synthetic = synthetic
        self._checked, self._templates, self._shares = checked, templates, shares
        self._nan_question = nan_question
        self._filters = warnings.catch_warnings()

    def __enter__(self) -> PendingDryRun:
        self._filters.__enter__()
        try:
            self._shares.dispatch()
        except BaseException:  # an interrupt: what was dispatched goes too
            try:
                self._shares.abandon()
            finally:
                self._filters.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            self._shares.abandon()
        finally:
            self._filters.__exit__(*exc_info)

    def finish(self) -> DryRunResult:

        checked, templates, synthetic = self._checked, self._templates, self.synthetic
        start, zero_passed_here = self._shares.first_failure()
        # the first candidate is always fitted here: the returned model is fitted in this
        # process, whose state (warning filters, numpy's error settings, monkeypatches) a
        # worker may not share
        for i in dict.fromkeys([*([] if zero_passed_here else [0]),
                                *range(start, len(checked))]):
            where = f"candidate {checked[i]!r}" if checked[i] else "the estimator"
            try:
                _dry_fit(templates[i], i, *synthetic)
            except PrivacyLeakError:
                raise
            except Exception as exc:  # a configuration mistake: public, report it, charge nothing
                raise ValueError(
                    f"Dry run failed before any private data was read: {where} could not be "
                    f"fitted and scored on a synthetic dataset with the public format of X and "
                    f"y ({type(exc).__name__}: {with_user_class_names(str(exc))}). Nothing "
                    "was charged."
                ) from exc
        # NaN is in the domain only if every candidate takes it: asked of the first alone, a
        # grid of an imputer and a scaler in front of the model let NaN in, and the scaler's
        # fits failed on the neighbour holding one (an audit found it); the first refusal ends
        # the question
        X, y, classes, params_syn, padding, fill = self._nan_question
        allow_nan = all(_accepts_nan(template, X, y, classes, params_syn, padding, fill)
                        for template in templates)
        return DryRunResult(allow_nan=allow_nan, synthetic=synthetic)


def _dry_fit(template, i, X_syn, y_syn, params_syn, padding, scorers, score_syn) -> None:
    """Fit candidate ``i`` on the synthetic dataset and call every scorer; silenced."""
    with silenced():
        model = fit_on_rows(instantiate(template, seed=i), X_syn, y_syn, None, params_syn,
                            padding=padding)
        for name, scorer in scorers.items():
            # without y, scorer(estimator, X), as scikit-learn's searches call it
            if name in score_syn:
                value = scorer(model, X_syn, y_syn, **score_syn[name])
            else:
                value = scorer(model, X_syn) if y_syn is None else scorer(model, X_syn, y_syn)
            _check_score(value, name)


def _first_failing(share, synthetic) -> int | None:
    """The first of the ``(i, template)`` pairs ``share`` whose dry fit fails (a joblib task)."""
    for i, template in share:
        try:
            _dry_fit(template, i, *synthetic)
        except Exception:
            return i
    return None


class _WorkerShares:
    """The dry run's fits shared between this process and the joblib workers, one share each.

    ``n_jobs`` resolving to ``k >= 2`` gives ``k`` shares (every ``k``-th candidate: a grid's
    costly values are spread evenly). This process keeps the first -- it holds candidate 0,
    whose returned model is fitted here -- and fits it after its other public work, while the
    workers fit the others: ``k`` processes busy, as ``n_jobs`` asks, and none waiting (the
    main process used to wait for two worker shares and then fit candidate 0 again).

    :meth:`dispatch` sends the workers' shares; :meth:`first_failure` fits this process's share
    and returns where the sequential dry run must start -- the first candidate that failed
    anywhere (``len(templates)``: none), or 0 when the workers are not used (``n_jobs`` 1, a
    single candidate, a thread-based backend) or cannot be (e.g. an estimator that does not
    pickle) -- and whether candidate 0 passed here; :meth:`abandon` drops shares whose results
    were not read.

    With joblib 1.3 or later, and a backend that has generator output, the workers' shares
    are dispatched and their results read later (``return_as="generator"``), so this process
    does its other public work and its own share meanwhile; otherwise (joblib 1.2; the
    multiprocessing backend) every share, this process's included, is fitted in the workers
    on dispatch.

    The workers get scikit-learn's configuration (``sklearn.utils.parallel``), as the private
    fits do. Threads are never used, as for the private fits (``skdptune._private``, "Threads").
    """
    def __init__(self, templates, synthetic, n_jobs):
        self._n, self._n_jobs = len(templates), n_jobs
        self._pending = None
        n_tasks = min(effective_n_jobs(n_jobs), len(templates))
        self._shares = [] if n_tasks < 2 or uses_threads() else [
            [(i, templates[i]) for i in range(task, len(templates), n_tasks)]
            for task in range(n_tasks)]
        self._own = []  # the share this process fits (set on dispatch)
        self._synthetic = synthetic

    def dispatch(self) -> None:
        if not self._shares:
            return
        try:
            pending = _dispatch(self._n_jobs, self._shares[1:], self._synthetic)
        except Exception:
            return
        if pending is None:  # no generator output: every share in the workers, now
            try:
                self._pending = _dispatch(self._n_jobs, self._shares, self._synthetic,
                                          on_dispatch=True)
            except Exception:
                pass
            return
        self._pending, self._own = pending, self._shares[0]  # abandon() can close it from here
        # joblib's threads that send the shares to the workers need the GIL, which the public
        # work done next would hold for up to a switch interval (5 ms) at a time: a moment's
        # sleep lets them send at once (credit, n_jobs=2: the worker began its share 9-13 ms
        # after dispatch, now about 2 ms; docs/grid_search.md)
        time.sleep(_HANDOFF_SECONDS)

    def first_failure(self) -> tuple[int, bool]:
        """``(start, zero_passed_here)``: where the sequential dry run starts, and whether
        candidate 0 was fitted here without failing (it need not be fitted again)."""
        own, self._own = self._own, []
        if self._pending is None:
            return 0, False
        # the workers' shares stay attached while this process fits its own: an interrupt
        # there leaves through abandon(), which closes them
        own_first = _first_failing(own, self._synthetic) if own else None
        pending, self._pending = self._pending, None
        try:
            # not silenced(), whose task lock a worker thread may need: the workers silence
            # themselves (_dry_fit)
            with warnings.catch_warnings():
                discard_all_but_leaks()
                firsts = list(pending)
        except Exception:
            return 0, False
        zero_passed_here = bool(own) and own_first != 0
        return min((i for i in [own_first, *firsts] if i is not None),
                   default=self._n), zero_passed_here

    def abandon(self) -> None:
        pending, self._pending = self._pending, None
        self._own = []
        close = getattr(pending, "close", None)
        if close is not None:  # a generator: joblib aborts the tasks it has not finished
            with warnings.catch_warnings():
                discard_all_but_leaks()
                close()


#: the main process's pause after dispatching the dry run's worker shares (see dispatch)
_HANDOFF_SECONDS = 0.002


def _dispatch(n_jobs, shares, synthetic, on_dispatch=False):
    """``_first_failing`` on each share in the workers: a generator of the results, its tasks
    already dispatched (joblib >= 1.3, a backend with generator output); ``None`` where there
    is no generator output. ``on_dispatch``: the list of the results, fitted now."""
    calls = [delayed(_first_failing)(share, synthetic) for share in shares]
    with warnings.catch_warnings():
        discard_all_but_leaks()
        if on_dispatch:
            return Parallel(n_jobs=n_jobs)(calls)
        if not _JOBLIB_GENERATORS:
            return None
        try:
            return Parallel(n_jobs=n_jobs, return_as="generator")(calls)
        except ValueError:  # e.g. the multiprocessing backend has no generator output
            return None


def _joblib_generators() -> bool:
    """Whether this joblib's ``Parallel`` can return a generator (joblib >= 1.3)."""
    return "return_as" in inspect.signature(joblib.Parallel).parameters


_JOBLIB_GENERATORS = _joblib_generators()


def _check_score(value: Any, name: str) -> None:
    if np.asarray(value, dtype=float).ndim > 1:
        raise TypeError(f"the {name} returned an array of shape {np.shape(value)}")


def _accepts_nan(template, X, y, classes, params_syn, padding, fill) -> bool:
    """Whether a candidate fits a synthetic dataset with a missing value (public question;
    ``template`` is its :func:`~skdptune.evaluation._fit.candidate_template`)."""
    X_nan, y_syn = synthetic_dataset(X, y, classes, nan=True, fill=fill)
    blocks = _numeric_blocks(X_nan)
    if not blocks or not np.isnan(blocks[0]).any():
        return False
    try:
        with silenced():
            model = fit_on_rows(instantiate(template, seed=0), X_nan, y_syn, None,
                                params_syn, padding=padding)
            model.predict(X_nan) if hasattr(model, "predict") else model.transform(X_nan)
    except Exception:
        return False
    return True
