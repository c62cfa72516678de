"""Run the benchmarks: ``python -m benchmarks.run [--data PATH] [--quick] [--only NAME ...]``.

Every module ``benchmarks/bench_<name>.py`` is a benchmark and exposes
``main(argv=None) -> None``, accepting at least ``--data PATH`` and ``--quick``; it writes its
tables (Markdown + JSON) and plots (PNG) into ``benchmarks/results/``. This runner finds the
modules, runs the selected ones in turn (one failure does not stop the others) and exits
non-zero if any failed. The calibration of DPGridSearchCV's defaults is a separate, longer
command: ``python -m benchmarks.calibrate_grid`` (see docs/calibration.md).

``--quick`` is a smoke run (small sizes, few seeds) that writes ``*_quick`` result files and
leaves the full results alone.
"""

from __future__ import annotations

import argparse
import importlib
import time
import traceback
from pathlib import Path

from benchmarks._common import DEFAULT_DATA, RESULTS

PREFIX = "bench_"


def available() -> list[str]:
    """Names of the benchmark modules (``bench_<name>.py``), sorted."""
    here = Path(__file__).resolve().parent
    return sorted(p.stem[len(PREFIX):] for p in here.glob(f"{PREFIX}*.py"))


def run_one(name: str, argv: list[str]) -> bool:
    """Import ``benchmarks.bench_<name>`` and call its ``main(argv)``; True on success."""
    start = time.perf_counter()
    print(f"== {name}: starting", flush=True)
    try:
        module = importlib.import_module(f"benchmarks.{PREFIX}{name}")
        module.main(argv)
    except (Exception, SystemExit):  # report and continue (argparse exits on a bad option)
        traceback.print_exc()
        print(f"== {name}: FAILED after {time.perf_counter() - start:.0f}s", flush=True)
        return False
    print(f"== {name}: done in {time.perf_counter() - start:.0f}s", flush=True)
    return True


def main(argv=None) -> None:
    names = available()
    p = argparse.ArgumentParser(description="Run skdptune's benchmarks.")
    p.add_argument("--data", default=str(DEFAULT_DATA),
                   help="path to adult.csv (synthetic data when absent)")
    p.add_argument("--quick", action="store_true", help="smoke run: small sizes, few seeds")
    p.add_argument("--only", nargs="+", choices=names, default=names,
                   help="benchmarks to run (default: all)")
    args = p.parse_args(argv)
    forwarded = ["--data", args.data] + (["--quick"] if args.quick else [])
    failed = [name for name in args.only if not run_one(name, forwarded)]
    print(f"results in {RESULTS}")
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
