"""The compatibility layer for diffprivlib 0.6.6 on scikit-learn >= 1.8 (skdptune._compat).

For each of the two breaks: it reproduces without the layer exactly where the layer repairs
it (so the layer is neither stale nor missing), and with the layer the model behaves as on
scikit-learn 1.7, the last version diffprivlib 0.6.6 supports -- the same fitted numbers
(golden values recorded on scikit-learn 1.7.2, equal to 10 decimals on 1.8.0 and 1.9.1), the
same parameters, the same one-vs-rest probabilities. On scikit-learn < 1.8 the layer changes
nothing. Every model family then tunes under a search on the installed scikit-learn, and the
code a reader runs (examples, pages, docstrings, benchmarks) imports skdptune before diffprivlib.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sklearn
from diffprivlib import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier, GaussianNB, LogisticRegression
from scipy.special import expit
from scipy.stats import loguniform
from sklearn.base import clone

import skdptune
from skdptune import DPRandomSearchCV, _compat
from skdptune.linear_model import SSPRegressor

SKLEARN = tuple(int(part) for part in sklearn.__version__.split(".")[:2])
TREE_BREAK = SKLEARN >= (1, 9)  # DOUBLE and DTYPE gone from sklearn.tree._tree
LOGISTIC_BREAK = SKLEARN >= (1, 8)  # LogisticRegression(multi_class=...) gone

pytestmark = pytest.mark.skipif(
    importlib.metadata.version("diffprivlib") != _compat.DIFFPRIVLIB_VERSION,
    reason="the layer repairs diffprivlib 0.6.6 only")


def run_fresh(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (nothing imported yet)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (120, 3))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int), (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3)


def test_the_repairs_are_applied_exactly_on_the_versions_that_break():
    expected = []
    if TREE_BREAK:
        expected.append("sklearn.tree._tree: DTYPE, DOUBLE")
        expected.append("diffprivlib.utils: PrivacyLeakWarning, DiffprivlibCompatibilityWarning"
                        " pickled as skdptune._compat's")
    if LOGISTIC_BREAK:
        expected.append("diffprivlib.models.LogisticRegression: __init__, predict_proba")
    assert _compat.APPLIED == expected
    init = LogisticRegression.__init__
    assert _compat.apply() == expected  # again: nothing more
    assert LogisticRegression.__init__ is init


# -- scikit-learn >= 1.9: import diffprivlib -----------------------------------------------------

def test_without_the_layer_diffprivlib_imports_only_before_scikit_learn_1_9():
    process = run_fresh("import diffprivlib")
    if TREE_BREAK:
        assert process.returncode != 0
        assert "cannot import name 'DOUBLE' from 'sklearn.tree._tree'" in process.stderr
    else:
        assert process.returncode == 0, process.stderr


def test_after_import_skdptune_diffprivlibs_trees_import_and_fit():
    process = run_fresh("""
        import skdptune
        import numpy as np
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier
        X = np.random.RandomState(0).uniform(-1, 1, (60, 2))
        y = (X[:, 0] > 0).astype(int)
        for model in (DecisionTreeClassifier(max_depth=2), RandomForestClassifier(n_estimators=2)):
            model.set_params(bounds=(-1, 1), classes=[0, 1], random_state=0,
                             accountant=BudgetAccountant())
            assert model.fit(X, y).predict(X).shape == (60,)
    """)
    assert process.returncode == 0, process.stderr


def test_the_tree_dtypes_are_the_ones_scikit_learns_trees_use():
    from sklearn.tree import DecisionTreeClassifier as SkTree
    from sklearn.tree import _tree

    assert _tree.DTYPE is _compat.TREE_DTYPES["DTYPE"] is np.float32
    assert _tree.DOUBLE is _compat.TREE_DTYPES["DOUBLE"] is np.float64
    X = np.random.RandomState(0).uniform(-1, 1, (40, 2))
    tree = SkTree(max_depth=2, random_state=0).fit(X, X[:, 0] > 0).tree_
    assert tree.value.dtype == tree.threshold.dtype == _tree.DOUBLE
    assert tree.apply(X.astype(_tree.DTYPE)).shape == (40,)
    with pytest.raises(ValueError, match="float32"):
        tree.apply(X.astype(np.float64))


def test_diffprivlibs_tree_is_the_one_of_scikit_learn_1_7(data):
    X, _, y3 = data
    model = DecisionTreeClassifier(max_depth=3, epsilon=2.0, bounds=(-1, 1), classes=[0, 1, 2],
                                   random_state=3, accountant=BudgetAccountant()).fit(X, y3)
    np.testing.assert_array_equal(model.tree_.feature,
                                  [2, 0, 1, -2, -2, 2, -2, -2, 1, 2, -2, -2, 0, -2, -2])
    np.testing.assert_allclose(model.tree_.threshold, [
        -0.85855024, -0.7573428376, 0.7858939087, -2.0, -2.0, -0.823706124, -2.0, -2.0,
        -0.5855142437, -0.9376475534, -2.0, -2.0, -0.7092597118, -2.0, -2.0], atol=1e-9)
    np.testing.assert_array_equal(model.predict(X[:30]), [
        1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0])


# -- scikit-learn >= 1.9: processes that unpickle diffprivlib's warning categories ------------
# scikit-learn's parallel helpers send their workers the caller's warning filters ahead of the
# task, and diffprivlib installs one for PrivacyLeakWarning when imported.

def test_without_the_layer_a_fresh_process_cannot_unpickle_diffprivlibs_warnings_from_1_9():
    # what scikit-learn sent a worker: a reference to diffprivlib.utils (pickle protocol 0)
    process = run_fresh("""
        import pickle
        pickle.loads(b"cdiffprivlib.utils\\nPrivacyLeakWarning\\n.")
    """)
    if TREE_BREAK:
        assert "cannot import name 'DOUBLE' from 'sklearn.tree._tree'" in process.stderr
    else:
        assert process.returncode == 0, process.stderr


def test_diffprivlibs_warning_categories_unpickle_first_thing_in_a_fresh_process():
    import pickle

    from diffprivlib.utils import DiffprivlibCompatibilityWarning, PrivacyLeakWarning

    categories = [PrivacyLeakWarning, DiffprivlibCompatibilityWarning]
    assert pickle.loads(pickle.dumps(categories)) == categories  # the same classes
    module = "skdptune._compat" if TREE_BREAK else "diffprivlib.utils"
    assert {category.__module__ for category in categories} == {module}
    process = run_fresh(f"""
        import pickle
        categories = pickle.loads({pickle.dumps(categories)!r})
        assert [c.__name__ for c in categories] == {[c.__name__ for c in categories]!r}
        assert issubclass(categories[0], RuntimeWarning)
        from diffprivlib.utils import PrivacyLeakWarning
        assert categories[0] is PrivacyLeakWarning
    """)
    assert process.returncode == 0, process.stderr


@pytest.mark.slow  # ~4 s: a fresh interpreter and process workers
def test_scikit_learns_process_workers_run_a_search_and_a_diffprivlib_model():
    process = run_fresh("""
        import numpy as np
        import skdptune
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import GaussianNB
        from sklearn.model_selection import cross_val_score
        X = np.random.RandomState(0).uniform(-1, 1, (1200, 2))
        y = (X[:, 0] > 0).astype(int)
        # seeded: an unseeded fit's noise scored 0.54 on one fold of a CI run
        nb = GaussianNB(bounds=(-1, 1), accountant=BudgetAccountant(), random_state=0)
        search = skdptune.DPGridSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, classes=[0, 1],
                                         accountant=BudgetAccountant(), random_state=0)
        for estimator in (search, nb):
            scores = cross_val_score(estimator, X, y, cv=2, n_jobs=2)  # loky: processes
            assert scores.shape == (2,) and scores.min() > 0.6, scores
    """)
    assert process.returncode == 0, process.stderr[-3000:]


# -- scikit-learn >= 1.8: LogisticRegression ---------------------------------------------------

def test_without_the_layer_the_constructor_breaks_only_from_scikit_learn_1_8():
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    if LOGISTIC_BREAK:
        with pytest.raises(TypeError, match="multi_class"):
            SkLogisticRegression(**_compat.LOGISTIC_FIXED_SETTINGS)
    else:
        SkLogisticRegression(**_compat.LOGISTIC_FIXED_SETTINGS)


def test_the_logistic_regressions_parameters_and_settings_are_diffprivlibs():
    params = {"epsilon": 1.0, "data_norm": None, "tol": 1e-4, "C": 1.0, "fit_intercept": True,
              "max_iter": 100, "verbose": 0, "warm_start": False, "n_jobs": None,
              "random_state": None, "accountant": None}
    signature = inspect.signature(LogisticRegression.__init__)
    assert {name: p.default for name, p in signature.parameters.items()
            if name not in ("self", "unused_args")} == params
    model = LogisticRegression(epsilon=0.5, C=2.0, data_norm=3.0)
    assert set(model.get_params()) == set(params)
    assert clone(model).get_params()["C"] == 2.0
    assert model.accountant is BudgetAccountant.load_default(None)
    for name, value in _compat.LOGISTIC_FIXED_SETTINGS.items():
        assert getattr(model, name) == value
    with pytest.warns(Warning, match="unknown_setting"):
        LogisticRegression(unknown_setting=1)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_logistic_regressions_fit_is_the_one_of_scikit_learn_1_7(data, classes,
                                                                     fit_intercept):
    X, y2, y3 = data
    accountant = BudgetAccountant()
    model = LogisticRegression(epsilon=2.0, data_norm=1.5, C=0.5, fit_intercept=fit_intercept,
                               random_state=7, accountant=accountant)
    model.fit(X, y2 if classes == 2 else y3)
    coef, intercept = {
        (2, True): ([[1.8460026198, 4.3856166833, 0.0001306222]], [0.3909970563]),
        (2, False): ([[2.1988563187, 2.6971386255, 0.2316356843]], [0.0]),
        (3, True): ([[-22.5672794709, 20.0002188388, -7.1604412347],
                     [-0.222111136, 0.2686059935, 4.3220309856],
                     [1.3884918367, 9.5017740493, -2.8386000189]],
                    [8.5248287027, 0.4010177745, -7.758211209]),
        (3, False): ([[-2.5830394982, -0.4005266958, 0.0877843827],
                      [-0.3773406189, 1.3854355858, -0.2116374984],
                      [1.3962175006, 12.6602343426, -18.6183186384]], [0.0, 0.0, 0.0]),
    }[classes, fit_intercept]
    np.testing.assert_allclose(model.coef_, coef, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=1e-6, atol=1e-8)
    assert accountant.spent_budget == [(2.0, 0)]  # charged once, as diffprivlib charges


def test_the_logistic_regression_predicts_its_one_vs_rest_probabilities(data):
    """diffprivlib fits one-vs-rest; scikit-learn 1.8 would take a softmax of the scores."""
    X, y2, y3 = data
    for y in (y2, y3):
        model = LogisticRegression(epsilon=2.0, data_norm=1.5, random_state=0,
                                   accountant=BudgetAccountant()).fit(X, y)
        scores = model.decision_function(X)
        if scores.ndim == 1:
            expected = np.column_stack([1 - expit(scores), expit(scores)])
        else:
            expected = expit(scores) / expit(scores).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)
        np.testing.assert_allclose(model.predict_log_proba(X), np.log(expected), rtol=1e-12)
        np.testing.assert_array_equal(model.predict(X),
                                      model.classes_[expected.argmax(axis=1)])
    softmax = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    assert not np.allclose(model.predict_proba(X), softmax)  # the two rules differ here


# -- the repaired models inside a search ---------------------------------------------------------

FAMILIES = {
    "LogisticRegression": (LogisticRegression(data_norm=1.5), {"C": loguniform(0.01, 100.0)}),
    "GaussianNB": (GaussianNB(bounds=(-1.0, 1.0)), {"var_smoothing": [1e-9, 1e-3, 1e-1]}),
    "DecisionTreeClassifier": (DecisionTreeClassifier(bounds=(-1.0, 1.0), classes=[0, 1, 2]),
                               {"max_depth": [2, 3, 4]}),
    "SSPRegressor": (SSPRegressor(bounds_X=(-1.0, 1.0), bounds_y=(-3.0, 3.0)),
                     {"alpha": loguniform(0.01, 100.0)}),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_model_family_tunes_under_the_random_search(family):
    """On the installed scikit-learn (1.8 and 1.9 through the repairs): the search fits, charges
    what it planned, and the tuned model predicts, with one-vs-rest probabilities."""
    estimator, space = FAMILIES[family]
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (1500, 3))
    regression = family == "SSPRegressor"
    y = (np.clip(X @ [1.5, -1.0, 0.5], -3, 3) if regression
         else (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3))
    accountant = BudgetAccountant()
    search = DPRandomSearchCV(clone(estimator), space, n_iter=3, epsilon=2.0, random_state=0,
                              accountant=accountant,
                              **({} if regression else {"classes": [0, 1, 2]}))
    planned = tuple(search.planned_privacy(len(X)))
    search.fit(X, y)
    assert accountant.spent_budget == [planned] and planned[0] == pytest.approx(2.0)
    assert type(search.best_estimator_).__name__ == family or isinstance(
        search.best_estimator_, type(estimator))
    assert search.predict(X).shape == (len(X),)
    if not regression:
        proba = search.predict_proba(X)
        assert proba.shape == (len(X), 3)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# -- the code a reader runs imports skdptune first -----------------------------------------------
# On scikit-learn >= 1.9, diffprivlib imports only after skdptune. The suite cannot see the
# order by running that code -- its own interpreter imported skdptune first (conftest.py) --,
# so the order is read from the text, on every scikit-learn.

ROOT = Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^\s*(?:>>> )?(?:from|import) (skdptune|diffprivlib)\b", re.MULTILINE)
FENCE = re.compile(r"^```(?:python|py)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def imports_skdptune_first(code: str) -> bool:
    """Whether ``code`` imports skdptune before diffprivlib (or diffprivlib not at all)."""
    found = IMPORT.findall(code)
    return "diffprivlib" not in found or found[0] == "skdptune"


def code_readers_run() -> dict[str, str]:
    """Each unit a reader runs from the top: an example, a page's python blocks in order (as
    tests/test_docs.py runs them), the docstring example of a name a public module exports."""
    units = {path.name: path.read_text(encoding="utf-8")
             for path in sorted((ROOT / "examples").glob("*.py"))}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = FENCE.findall(path.read_text(encoding="utf-8"))
        if blocks:
            units[path.name] = "".join(blocks)
    names = [info.name for info in pkgutil.walk_packages(skdptune.__path__, "skdptune.")]
    finder, seen = doctest.DocTestFinder(), set()
    for name in ["skdptune", *names]:
        if any(part.startswith("_") for part in name.split(".")):
            continue
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            # recursing into the object's own module only (not into builtins' docstrings)
            for test in finder.find(getattr(module, attr), f"{name}.{attr}", globs={}):
                if test.examples and (test.filename, test.lineno) not in seen:
                    seen.add((test.filename, test.lineno))  # once, under its shortest name
                    units[test.name] = "".join(example.source for example in test.examples)
    return units


UNITS = code_readers_run()


def test_the_import_order_check_reads_every_kind_of_unit():
    assert {"quickstart.py", "README.md", "index.md", "skdptune.DPGridSearchCV",
            "skdptune.estimators.estimator_privacy_parts"} <= set(UNITS)
    assert imports_skdptune_first("import skdptune\nimport diffprivlib\n")
    assert not imports_skdptune_first(">>> from diffprivlib import models\n>>> import skdptune\n")


@pytest.mark.parametrize("unit", sorted(UNITS))
def test_the_code_a_reader_runs_imports_skdptune_before_diffprivlib(unit):
    assert imports_skdptune_first(UNITS[unit])


def test_the_benchmarks_package_imports_skdptune_before_any_benchmark():
    # every benchmark runs as a module of the package (python -m benchmarks.<name>)
    assert IMPORT.findall((ROOT / "benchmarks" / "__init__.py").read_text()) == ["skdptune"]
