"""diffprivlib's ``GaussianNB`` fitted on many partition units at once, for the grid's
subsample-and-aggregate evaluator.

One partition fit of ``GaussianNB`` (:class:`~skdptune.estimators.models.FeaturesAtOnceGaussianNB`,
the family's fit for models that are never released) draws its class counts, then all its
noisy means, finds all its variances' bounded-domain scales by diffprivlib's bisection run in
lockstep, and draws all its variances. The bisection is most of what is left of its time once
the mechanisms are gone, and a fit's setup -- scikit-learn's and diffprivlib's checks of the
same public settings and of rows already checked, about a millisecond -- most of the rest; a
grid on Adult makes 900 such fits.

:func:`naive_bayes_utilities` makes the fits of one joblib task -- every candidate on every
unit of a chunk of partitions -- what their one-by-one fits make them, bit for bit
(tests/evaluation/test_batched_nb.py): each fit's rows (its partition's training rows, the
padding rows), clipped by diffprivlib's own method; its counts drawn by diffprivlib's own
``_noisy_class_counts`` from the generator of its seed; its means and variances by the same
functions as :class:`~skdptune.estimators.models.FeaturesAtOnceGaussianNB` on the same
generator, in the same order. Only the scales of all the fits are found in one lockstep
bisection (each element's halvings are its own, so each scale is the float its fit finds
alone), and the prediction is scikit-learn's own joint log-likelihood of the fitted model,
without ``predict``'s checks; scikit-learn's parameter checks run once per candidate and
setting. A fit whose settings are not the ordinary ones
(:func:`~skdptune.estimators.models._naive_bayes.draws_at_once`), or whose rows are not all
finite, goes through :func:`~._fit.fit_and_utility`, the one-by-one path, whose failures it
keeps.

**Privacy.** Nothing here is released: each fit's utility is a function of its own rows and
seed, as one by one (the sensitivity ``1/k`` of :mod:`._partitions`); the fits share only the
lockstep bisection, elementwise, and which fits go one by one is decided on each fit's own
rows. A fit that fails is ``error_score``, as one by one; if the shared bisection itself
raises -- numpy's floating-point errors set to raise turn an ``exp`` underflow into an
exception, and whether one occurs follows the fits' noisy counts --, every fit goes one by
one, so no fit's outcome depends on another's.
"""

from __future__ import annotations

import numpy as np
from diffprivlib.models import GaussianNB
from diffprivlib.utils import check_random_state
from sklearn import get_config
from sklearn.utils.multiclass import type_of_target

from .._mechanisms import bounded_domain_scales
from .._private import LEAKS
from ..estimators.models._naive_bayes import draws_at_once, noisy_means, noisy_variances
from . import _scores
from ._batched import is_accuracy
from ._fit import fit_and_utility, rows_of, take_rows

__all__ = ["batched_naive_bayes", "naive_bayes_utilities"]


def batched_naive_bayes(template, X, y, padding, scorer) -> bool:
    """Whether ``template``'s partition fits go through :func:`naive_bayes_utilities`:
    diffprivlib's ``GaussianNB`` itself (not a subclass) with public ``bounds`` and no
    ``priors``, rows a 2-D float64 ``numpy`` array and labels a 1-D one, the declared
    classes (the padding's labels) a classification target, and the accuracy scorer. Public:
    the configuration, the containers' types and the declared classes."""
    return (type(template) is GaussianNB and template.bounds is not None
            and template.priors is None and isinstance(X, np.ndarray) and X.ndim == 2
            and X.dtype == np.float64 and isinstance(y, np.ndarray) and y.ndim == 1
            and padding is not None
            and type_of_target(padding.y) in ("binary", "multiclass")
            and is_accuracy(scorer))


class _Fit:
    """One partition fit's state between the draws: its model's settings and the rows and
    draws of its classes."""

    def __init__(self, model, bounds, rows, y_fit, X_test, y_test):
        self.model, self.bounds, self.X_test, self.y_test = model, bounds, X_test, y_test
        self.classes = np.unique(y_fit)
        seeded = check_random_state(model.random_state)  # as diffprivlib's _partial_fit
        self.counts = model._noisy_class_counts(y_fit, random_state=seeded)
        self.generator = check_random_state(seeded, True)  # as its mechanisms take it
        self.rows = [rows[y_fit == label] for label in self.classes]
        self.means, self.sensitivity, self.domain = noisy_means(
            self.rows, self.counts, model.epsilon, self.bounds, self.generator)

    def utility(self, scales, scorer):
        """The fitted model's accuracy on the validation rows, on the utility scale: the
        variances drawn at ``scales``, the fitted attributes set as diffprivlib's fit sets
        them, then scikit-learn's own joint log-likelihood and ``predict``'s arg-max (without
        its checks of the rows)."""
        model = self.model
        variances = noisy_variances(self.rows, self.counts, self.means, scales, self.domain,
                                    self.generator)
        count = np.zeros(len(self.classes))
        count += self.counts  # class_count_ as diffprivlib accumulates it, float64
        model.classes_, model.theta_, model.class_count_ = self.classes, self.means, count
        model.var_ = variances + model.var_smoothing  # diffprivlib's var_ plus its epsilon_
        model.class_prior_ = count / count.sum()
        predicted = self.classes[np.argmax(model._joint_log_likelihood(self.X_test), axis=1)]
        accuracy = float(np.average(np.asarray(predicted) == np.asarray(self.y_test)))
        return _scores._to_unit(accuracy, scorer.lo, scorer.hi)


def naive_bayes_utilities(fits, X, y, scorer, padding, error_score):
    """The utility of each fit ``(template, seed, train, test)`` (a
    :class:`~._fit.PreparedTemplate` of diffprivlib's ``GaussianNB``, the fit's seed, its
    training and validation rows), bit for bit what :func:`~._fit.fit_and_utility` gives it.
    PRIVATE.

    A fit goes one by one where its settings fail scikit-learn's parameter checks or are not
    the ordinary ones, where its rows or labels are not all finite, and where any step of its
    own raises (skdptune's own inner splits, the only ones batched, give every fit validation
    rows); if the shared bisection raises (a
    floating-point error state that turns an underflow into an exception), every fit does.
    The rows are clipped once per setting of the bounds, those of the fits with that setting
    only: diffprivlib clips elementwise, with a rule chosen from the bounds alone, so a fit's
    clipped rows are the rows of the clipped whole."""
    out = [None] * len(fits)

    def one_by_one(f):
        template, seed, train, test = fits[f]
        out[f] = fit_and_utility(template, X, y, train, test, scorer, fit_params={},
                                 error_score=error_score, padding=padding, seed=seed)

    finite_rows = np.isfinite(X).all(axis=1)
    finite_padding = bool(np.isfinite(padding.X).all())
    validate = not get_config()["skip_parameter_validation"]  # as fit's own checks
    checked = set()  # templates whose parameters pass scikit-learn's checks (seeds aside)
    settings = {}  # bounds setting -> [(fit, model, checked bounds)]
    for f, (template, seed, train, test) in enumerate(fits):
        try:
            model = template.instantiate(seed)
            if validate and template not in checked:
                model._validate_params()
                checked.add(template)
            bounds = model._check_bounds(model.bounds, shape=X.shape[1])
            labels = take_rows(y, train)
            ordinary = (finite_padding and finite_rows[train].all()
                        and finite_rows[test].all()
                        and (labels.dtype.kind != "f" or np.isfinite(labels).all())
                        and draws_at_once(model.epsilon, bounds, len(train) + len(padding)))
        except LEAKS:
            raise
        except Exception:
            ordinary = False  # as one by one, which fails as its fit fails
        if not ordinary:
            one_by_one(f)
            continue
        settings.setdefault((bounds[0].tobytes(), bounds[1].tobytes()), []).append(
            (f, model, bounds))
    drawn = []
    for members in settings.values():
        used = np.unique(np.concatenate([fits[f][2] for f, _, _ in members]))
        try:
            clipped = members[0][1]._clip_to_bounds(np.vstack([X[used], padding.X]),
                                                    members[0][2])
        except LEAKS:
            raise
        except Exception:
            clipped = None
        padded = np.arange(len(used), len(used) + len(padding))
        for f, model, bounds in members:
            _, seed, train, test = fits[f]
            try:
                rows = clipped[np.concatenate([np.searchsorted(used, train), padded])]
                y_fit = rows_of(X, y, train, {}, padding=padding)[1]
                drawn.append((f, _Fit(model, bounds, rows, y_fit, take_rows(X, test),
                                      take_rows(y, test))))
            except LEAKS:
                raise
            except Exception:
                one_by_one(f)
        del clipped
    try:
        # every fit's variances' scales in one lockstep bisection
        scales = bounded_domain_scales(
            np.concatenate([np.full(fit.sensitivity.size,
                                    fit.model.epsilon / 3 / fit.means.shape[1])
                            for _, fit in drawn]),
            np.concatenate([fit.sensitivity.ravel() for _, fit in drawn]), 0.0,
            np.concatenate([fit.domain.ravel() for _, fit in drawn])) if drawn else None
    except LEAKS:
        raise
    except Exception:
        for f, _ in drawn:
            one_by_one(f)
        return out
    at = 0
    for f, fit in drawn:
        size = fit.sensitivity.size
        try:
            out[f] = fit.utility(scales[at:at + size].reshape(fit.sensitivity.shape), scorer)
        except LEAKS:
            raise
        except Exception:
            one_by_one(f)
        at += size
    return out
