"""diffprivlib 0.6.6 on scikit-learn 1.8 and 1.9: the two repairs skdptune needs, and no more.

diffprivlib 0.6.6 (its newest release, April 2025) breaks on newer scikit-learn in two places.
:func:`apply` repairs exactly those two, each only where its break is present, and changes
nothing where it is not (scikit-learn < 1.8, or a diffprivlib release other than 0.6.6):

**scikit-learn >= 1.9: ``import diffprivlib`` fails.** ``diffprivlib.models.forest`` imports
``DOUBLE`` and ``DTYPE`` from ``sklearn.tree._tree`` at module level, and scikit-learn 1.9
removed both names (its trees still use the same dtypes, spelled ``np.float64`` and
``np.float32``). The repair adds the two missing names back to ``sklearn.tree._tree`` with
those values, which are what scikit-learn <= 1.8 exported (tested against scikit-learn's own
trees). It has to run before diffprivlib is first imported: ``import skdptune`` runs it first
thing, so on scikit-learn >= 1.9 import skdptune before diffprivlib.

The same holds in every process that unpickles something of diffprivlib's, and scikit-learn's
parallel helpers (``cross_val_score``, ``GridSearchCV`` and others with ``n_jobs``) send their
process workers the caller's warning filters ahead of the task: diffprivlib installs one for its
``PrivacyLeakWarning`` when imported, so a worker's first import was ``diffprivlib.utils`` and
failed (``cross_val_score(DPGridSearchCV(...), n_jobs=2)`` raised ``BrokenProcessPool``). Where
the tree repair is made, diffprivlib's two warning categories (``PrivacyLeakWarning``,
``DiffprivlibCompatibilityWarning``) are therefore pickled by reference to this module, which
hands out diffprivlib's own classes (:func:`__getattr__`): unpickling one imports skdptune first.
The classes stay the same objects -- ``except``, ``issubclass`` and warning filters are
unchanged --; their ``__module__`` reads ``skdptune._compat`` in such a process. A worker that
meets a diffprivlib object before anything of skdptune's or scikit-learn's (a function of your
own sent with ``joblib`` directly) still needs ``import skdptune`` first in that function's
module.

**scikit-learn >= 1.8: diffprivlib's ``LogisticRegression()`` raises ``TypeError``.** Its
``__init__`` hands scikit-learn's constructor fixed settings (``penalty="l2"``, ``dual=False``,
``intercept_scaling=1.0``, ``class_weight=None``, ``solver="lbfgs"``, ``multi_class="ovr"``) and
scikit-learn 1.8 removed ``multi_class``. diffprivlib's ``fit`` reads none of these settings --
it fits each one-vs-rest problem itself by objective perturbation -- but scikit-learn <= 1.7's
``predict_proba`` reads ``multi_class="ovr"``: it normalises the one-vs-rest sigmoids, whereas
scikit-learn 1.8 has no such option and takes a softmax of the scores when there are three
classes or more. The repair replaces diffprivlib's ``__init__`` by one with the same signature
that passes scikit-learn's constructor the fixed settings it still takes and stores the others
(``multi_class="ovr"``) as attributes, as scikit-learn <= 1.7 stored them, and gives the class a
``predict_proba`` that is scikit-learn <= 1.7's for ``multi_class="ovr"``
(``_predict_proba_lr``): the model predicts the probabilities it was fitted for, on every
version (with two classes both rules agree).

**Privacy.** No repair touches a mechanism, a sensitivity, the clipping of the rows or
``fit``: diffprivlib's ``fit`` and its objective perturbation run unchanged, and
``predict_proba`` is post-processing of the released coefficients. Only the names of
scikit-learn's tree module, the construction of diffprivlib's ``LogisticRegression`` and the
module its warning categories are pickled from change; the tests in ``tests/test_compat.py``
check that each repair is applied exactly where its break reproduces, and that the repaired
models behave as on scikit-learn 1.7.
"""

from __future__ import annotations

import importlib.metadata
import inspect

import numpy as np

__all__ = ["APPLIED", "DIFFPRIVLIB_VERSION", "apply"]

#: the diffprivlib release whose code the repairs were written against (and read)
DIFFPRIVLIB_VERSION = "0.6.6"

#: what scikit-learn <= 1.8 exported from ``sklearn.tree._tree``, and its trees still use
TREE_DTYPES = {"DTYPE": np.float32, "DOUBLE": np.float64}

#: the fixed settings diffprivlib 0.6.6's ``LogisticRegression.__init__`` gives scikit-learn's
LOGISTIC_FIXED_SETTINGS = {"penalty": "l2", "dual": False, "intercept_scaling": 1.0,
                           "class_weight": None, "solver": "lbfgs", "multi_class": "ovr"}

#: every name that ``__init__`` passes scikit-learn's: the fixed settings and its own
#: parameters of the same name
LOGISTIC_PASSED = (*LOGISTIC_FIXED_SETTINGS, "tol", "C", "fit_intercept", "random_state",
                   "max_iter", "verbose", "warm_start", "n_jobs")

#: diffprivlib's warning categories (``diffprivlib.utils``), which warning filters name and
#: scikit-learn's parallel helpers therefore send to their workers
WARNING_CATEGORIES = ("PrivacyLeakWarning", "DiffprivlibCompatibilityWarning")

#: the repairs :func:`apply` made in this interpreter (names, for tests and bug reports)
APPLIED: list[str] = []


def _diffprivlib_version() -> str | None:
    try:
        return importlib.metadata.version("diffprivlib")
    except importlib.metadata.PackageNotFoundError:
        return None


def _missing_tree_dtypes() -> list[str]:
    """The names diffprivlib imports from ``sklearn.tree._tree`` that it lacks (scikit-learn
    >= 1.9)."""
    from sklearn.tree import _tree

    return [name for name in TREE_DTYPES if not hasattr(_tree, name)]


def _sklearn_logistic_parameters() -> set[str]:
    from sklearn.linear_model import LogisticRegression

    return set(inspect.signature(LogisticRegression.__init__).parameters)


def logistic_regression_needs_repair() -> bool:
    """Whether diffprivlib's ``LogisticRegression.__init__`` passes scikit-learn's constructor
    a setting it no longer takes (``multi_class``: scikit-learn >= 1.8)."""
    return not set(LOGISTIC_PASSED) <= _sklearn_logistic_parameters()


def _restore_tree_dtypes() -> None:
    from sklearn.tree import _tree

    for name in _missing_tree_dtypes():
        setattr(_tree, name, TREE_DTYPES[name])
    APPLIED.append("sklearn.tree._tree: DTYPE, DOUBLE")


def _pickle_warning_categories_through_skdptune() -> None:
    from diffprivlib import utils

    for name in WARNING_CATEGORIES:
        getattr(utils, name).__module__ = __name__
    APPLIED.append("diffprivlib.utils: " + ", ".join(WARNING_CATEGORIES)
                   + " pickled as skdptune._compat's")


def __getattr__(name: str):
    """diffprivlib's warning categories, as attributes of this module: what unpickling one of
    them finds here (:data:`WARNING_CATEGORIES`), once ``import skdptune`` made diffprivlib
    importable."""
    if name in WARNING_CATEGORIES:
        from diffprivlib import utils

        return getattr(utils, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _repair_logistic_regression() -> None:
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models.logistic_regression import LogisticRegression
    from sklearn.utils.validation import check_is_fitted

    if getattr(LogisticRegression.__init__, "_skdptune_compat", False):
        return
    taken = _sklearn_logistic_parameters()

    # diffprivlib 0.6.6's __init__, with the settings scikit-learn no longer takes stored as
    # attributes instead of passed (same signature: get_params, clone and repr are unchanged)
    def __init__(self, *, epsilon=1.0, data_norm=None, tol=1e-4, C=1.0, fit_intercept=True,
                 max_iter=100, verbose=0, warm_start=False, n_jobs=None, random_state=None,
                 accountant=None, **unused_args):
        settings = dict(LOGISTIC_FIXED_SETTINGS, tol=tol, C=C, fit_intercept=fit_intercept,
                        random_state=random_state, max_iter=max_iter, verbose=verbose,
                        warm_start=warm_start, n_jobs=n_jobs)
        super(LogisticRegression, self).__init__(
            **{name: value for name, value in settings.items() if name in taken})
        for name, value in settings.items():
            if name not in taken:
                setattr(self, name, value)
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.classes_ = None
        self.accountant = BudgetAccountant.load_default(accountant)

        self._warn_unused_args(unused_args)

    def predict_proba(self, X):
        """Probability estimates: each class's one-vs-rest sigmoid of ``decision_function``,
        normalised over the classes (scikit-learn <= 1.7's ``predict_proba`` for
        ``multi_class="ovr"``, the way diffprivlib fits the model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probability of each class, in the order of ``classes_``.
        """
        check_is_fitted(self)
        return self._predict_proba_lr(X)

    __init__.__qualname__ = f"{LogisticRegression.__qualname__}.__init__"
    __init__.__doc__ = LogisticRegression.__init__.__doc__
    __init__._skdptune_compat = True
    predict_proba.__qualname__ = f"{LogisticRegression.__qualname__}.predict_proba"
    LogisticRegression.__init__ = __init__
    LogisticRegression.predict_proba = predict_proba
    APPLIED.append("diffprivlib.models.LogisticRegression: __init__, predict_proba")


def apply() -> list[str]:
    """Make diffprivlib 0.6.6 importable and correct on the installed scikit-learn.

    Each repair runs only where its break is present (see the module's docstring): on
    scikit-learn < 1.8, or with a diffprivlib other than 0.6.6, nothing changes. Call it
    before diffprivlib is first imported (``import skdptune`` does); calling it again changes
    nothing. Returns :data:`APPLIED`, the repairs made in this interpreter.
    """
    if _diffprivlib_version() != DIFFPRIVLIB_VERSION:
        return APPLIED
    if _missing_tree_dtypes():
        _restore_tree_dtypes()
        _pickle_warning_categories_through_skdptune()
    if logistic_regression_needs_repair():
        _repair_logistic_regression()
    return APPLIED


apply()
