"""Every example runs to the end, the way the gallery runs it (``make docs``).

Each script runs in a fresh interpreter with the Agg backend, from the ``examples/`` folder and
without ``__file__`` (as sphinx-gallery executes it), under a timeout. The gallery's promise is
under a minute each on a two-core machine; the timeout is looser because the machines that run
the suite are shared. Examples that cannot keep the promise are marked ``slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMEOUT = 240  # seconds; the target is 60 on an idle two-core machine
SLOW: set[str] = set()  # file names of examples that need more than a minute

RUN_AS_THE_GALLERY = (
    "import sys; path = sys.argv[1]; sys.argv = [path]; "
    "code = compile(open(path, encoding='utf-8').read(), path, 'exec'); "
    "exec(code, {'__name__': '__main__'})"
)


def example_params() -> list:
    params = []
    for path in sorted(EXAMPLES.glob("*.py")):
        marks = [pytest.mark.slow] if path.name in SLOW else []
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.mark.parametrize("path", example_params())
def test_example_runs(path):
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    result = subprocess.run([sys.executable, "-c", RUN_AS_THE_GALLERY, str(path)], cwd=EXAMPLES,
                            env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]


def test_every_gallery_example_has_a_title():
    # sphinx-gallery needs a module docstring whose first line is the title, underlined
    for path in EXAMPLES.glob("*.py"):
        lines = path.read_text(encoding="utf-8").lstrip().splitlines()
        assert lines[0] in ('"""', "'''") and set(lines[2]) == {"="}, path.name
