"""The documentation's code runs: the python blocks of README.md and docs/*.md, and the API page.

Each page's ``python`` code blocks run in order in one namespace, as a reader would paste them.
A block that is not meant to run (a signature listing, a sketch) is preceded by the line
``<!-- skip -->`` (optionally ``<!-- skip: reason -->``); keep those rare. Blocks that need
data define it.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import skdptune

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
SKIP = re.compile(r"<!--\s*skip\b[^>]*-->\s*$")


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """``(line, code)`` of every python block of a Markdown page not marked ``<!-- skip -->``."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        if match.group("lang") not in ("python", "py"):
            continue
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if SKIP.search(before):
            continue
        blocks.append((text.count("\n", 0, match.start("code")) + 1, match.group("code")))
    return blocks


PAGES_WITH_CODE = [path for path in PAGES if python_blocks(path)]


def test_the_readme_and_the_guides_have_code():
    # guards the extraction itself: a broken pattern would silently test nothing
    names = {path.name for path in PAGES_WITH_CODE}
    assert {"README.md", "index.md", "grid_search.md", "random_search.md"} <= names


def test_skip_markers_stay_rare():
    skipped = sum(len(SKIP.findall(path.read_text(encoding="utf-8"))) for path in PAGES)
    assert skipped <= 3, "document why a block cannot run, or make it run"


#: pages whose blocks take several seconds: they run with the slow suite
SLOW_PAGES = {"pareto.md"}


@pytest.mark.parametrize("path", [
    pytest.param(path, marks=[pytest.mark.slow] * (path.name in SLOW_PAGES))
    for path in PAGES_WITH_CODE], ids=lambda path: path.name)
def test_markdown_code_blocks_run(path, monkeypatch, tmp_path):
    pytest.importorskip("matplotlib").use("Agg")
    monkeypatch.chdir(tmp_path)  # whatever a block writes lands in a temporary folder
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings():
        # diffprivlib's LogisticRegression passes an option that recent scipy deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        for line, code in python_blocks(path):
            exec(compile("\n" * (line - 1) + code, str(path), "exec"), namespace)


def test_the_api_reference_lists_every_public_name():
    api = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", api, re.MULTILINE))
    missing = set(skdptune.__all__) - listed
    assert not missing, f"add {sorted(missing)} to docs/api.rst"
