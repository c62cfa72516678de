"""Per-example validation losses of DP fits at query points: the evaluator of DP-GIBO.

Privacy argument (replace-one neighbours, ``n`` public). The rows are split once, independently
of the data, into a train part and a validation part of ``m`` rows.

* **Train rows.** Every query point gets one DP fit (a diffprivlib model whose epsilons sum to
  ``epsilon_fit``; throwaway accountant), on train rows chosen without looking at the data:
  either all of them (``train_split="shared"``: ``M`` fits of the same rows compose, accounted
  by :class:`~skdptune.events.SelfComposedEvent`) or one data-independent chunk per fit
  (``"disjoint"``: each train row is in one fit only, so the fits compose in parallel and cost
  ``epsilon_fit`` in total). Everything else the search releases is a post-processing of these
  models and of the validation rows, which are disjoint from the train rows.
* **Validation rows.** The losses ``Y[i, j]`` of validation example ``i`` under the model of
  point ``j`` lie in [0, 1] (``1 - utility``, see :mod:`skdptune.evaluation._scores`). Row ``i``
  depends on example ``i`` and on the models only; the noisy gradient
  (:mod:`skdptune.selection._noisy_gradient`) is what protects it.
* **Failures.** As in randomized repetition, a fit whose failure depends on its train rows
  cannot be an output (it would reveal them); classifiers get the public padding rows, and a
  fit that still fails stops the search with ``PrivateFitError``.

``Y`` is exact and private: it goes straight to the noisy gradient and is never stored.
"""

from __future__ import annotations

import contextlib

import numpy as np
from sklearn.utils.parallel import Parallel, delayed

from .._private import private_n_jobs
from ._fit import (
    all_or_fail,
    candidate_templates,
    fit_and_example_utilities,
    single_threaded_blas,
)

__all__ = ["LossEvaluator", "train_chunks"]


def train_chunks(train: np.ndarray, n_chunks: int, rng) -> list[np.ndarray]:
    """``n_chunks`` disjoint, balanced, data-independent chunks of the ``train`` row indices."""
    order = train[rng.permutation(len(train))]
    return [np.sort(chunk) for chunk in np.array_split(order, n_chunks)]


def _losses_at(template, X, y, rows, validation, score, fit_params, debug, epsilon_fit,
               n_classes, seed, padding):
    """``(losses on the validation rows, model)`` of one fit, or ``None`` if it failed."""
    output = fit_and_example_utilities(template, X, y, rows, validation, score, fit_params,
                                       debug=debug, padding=padding, seed=seed,
                                       epsilon_total=epsilon_fit, n_classes=n_classes)
    return None if output is None else (1.0 - output[0], output[1])


class LossEvaluator:
    """Per-example losses in [0, 1] of DP fits at parameter settings.

    Parameters
    ----------
    estimator : estimator
        Base estimator (cloned for every fit).
    score : PerExampleScore
        Per-example utilities; losses are ``1 - utility``.
    epsilon_fit : float
        What the diffprivlib components of each fit cost together.
    n_classes : int or None
        The declared label set's size (the cost of a ``LogisticRegression`` depends on it);
        ``None``: the cost over every count.
    error_score : float or "raise"
        ``"raise"`` lets a fit's exception out (debugging); otherwise a failure stops the
        search with ``PrivateFitError``.
    n_jobs : joblib parallelism.
    padding : Padding or None
        Public rows appended to every fit (classifiers).
    """

    def __init__(self, estimator, score, *, epsilon_fit, error_score, n_jobs, padding=None,
                 n_classes=None):
        self.estimator = estimator
        self.score = score
        self.epsilon_fit = epsilon_fit
        self.n_classes = n_classes
        self.error_score = error_score
        self.n_jobs = n_jobs
        self.padding = padding
        self._parallel = None

    @contextlib.contextmanager
    def pool(self):
        """One joblib pool for every :meth:`losses` call inside (a search's iterations).

        A ``Parallel`` call per iteration set up joblib's backend every time (about 10 ms with
        2 workers) and pickled the data into every task (Adult's 32k x 15: 45 ms a call
        against fits of about 30 ms; a memory map made per call instead sometimes waits 0.1 s
        for its deletion, see :func:`~skdptune.evaluation._fit.for_workers`). Inside one
        ``Parallel`` context the backend is set up once, and joblib maps each array over 1 MB
        once (11 ms a call); its temporary files are deleted when the context exits, on success
        or failure. One process (``n_jobs`` resolving to 1, a thread-based backend) runs the fits
        in this thread, in order. Re-entering an open pool reuses it.
        """
        if self._parallel is not None:
            yield self
            return
        with single_threaded_blas(), Parallel(n_jobs=private_n_jobs(self.n_jobs)) as parallel:
            self._parallel = parallel
            try:
                yield self
            finally:
                self._parallel = None

    def losses(self, X, y, settings, rows, validation, fit_params, seeds):
        """Losses ``(m, len(settings))`` and the fitted models. PRIVATE: never store ``Y``.

        ``settings[j]`` is fitted on ``rows[j]`` with seed ``seeds[j]`` (``None``: secure
        noise). In the open :meth:`pool`, or in one of its own.
        """
        with self.pool():
            outputs = self._parallel(
                delayed(_losses_at)(
                    template, X, y, fit_rows, validation, self.score, fit_params,
                    self.error_score == "raise", self.epsilon_fit, self.n_classes, seed,
                    self.padding,
                )
                for template, fit_rows, seed in zip(
                    candidate_templates(self.estimator, settings), rows, seeds, strict=True)
            )
        outputs = all_or_fail(outputs)
        return np.column_stack([losses for losses, _ in outputs]), [m for _, m in outputs]
