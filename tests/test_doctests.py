"""Every docstring example in the package runs (numpydoc ``Examples`` sections, as doctests).

One test per module that has examples, so a failure names the module. The examples must be
deterministic: seed every search (``random_state=0``) and print only what does not depend on
floating-point noise.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import skdptune

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules_with_examples() -> list[str]:
    names = [skdptune.__name__]
    names += [info.name for info in pkgutil.walk_packages(skdptune.__path__, "skdptune.")]
    finder = doctest.DocTestFinder()
    return [name for name in names
            if any(test.examples for test in finder.find(importlib.import_module(name)))]


MODULES = modules_with_examples()


def test_the_public_searches_have_examples():
    # guards the collection itself: a broken finder would silently test nothing
    assert {"skdptune.grid", "skdptune.random"} <= set(MODULES)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    with warnings.catch_warnings():
        # diffprivlib's LogisticRegression passes an option that recent scipy deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        result = doctest.testmod(module, optionflags=OPTIONS, report=True, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


@pytest.mark.parametrize("name", sorted(skdptune.__all__))
def test_every_public_name_has_a_runnable_example(name):
    obj = getattr(skdptune, name)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, module=False, globs={})
    assert any(test.examples for test in tests), f"{name} has no Examples section"
