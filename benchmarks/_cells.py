"""Benchmarks in cells: one (task, variant, total epsilon, seed) holds every method's result.

A benchmark in cells declares its methods and how one method is fitted on one split (a
:class:`CellBench`); this module runs the cells -- resumable: every finished cell is saved at
once through :class:`benchmarks.bench_suite.Store`, and a rerun fits only the methods a cell
lacks -- and renders the tables such benchmarks share: the gap closed towards L, the goal, each
tuning search against R1 (the default repeated), the metric per method, and the time ratios
to L. The regression benchmark and the model-family benchmark are its two users; the
classification suite (``bench_suite.py``) keeps its own runner, whose parts (crossover, draws,
timing) are more than cells.

Every method's result is a dict with at least ``metric`` (the benchmark's metric: higher is
better), ``seconds``, ``epsilon``, ``delta`` and ``params`` (its pick, as JSON values). D is
the untuned default with the whole budget, L the non-private tuning of the same private models
(GridSearchCV(cv=5): the limit), R1 DPRandomSearchCV on the default alone.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchmarks._common import markdown_table, stamped
from benchmarks._tasks import VARIANTS
from benchmarks.bench_suite import (
    Store,
    _ratio,
    _seconds,
    _std,
    cell_key,
    gap_entry,
    group_cells,
    paired,
)

#: a search's ``privacy_spent_.epsilon`` may exceed the total by this relative rounding only
EPSILON_SLACK = 1e-9


@dataclass(frozen=True)
class CellBench:
    """What a benchmark in cells declares.

    ``methods``: key -> label (D, L and R1 among them); ``searches``: the private ones, R1
    first; ``tuners``: the searches that tune (compared with R1); ``default_search``: the one
    the docs recommend first; ``metric`` and ``metric_name``: the result key every method has
    and how the tables name it; ``fit``: ``(cell, method, X_train, y_train, X_test, y_test) ->
    result``; ``split``: ``(cell) -> (X_train, X_test, y_train, y_test)``, ``cell`` holding
    the task, variant, total epsilon and seed."""

    name: str
    methods: dict
    searches: tuple
    tuners: tuple
    default_methods: tuple
    default_search: str
    metric: str
    metric_name: str
    fit: Callable
    split: Callable


def spent(search, total: float) -> tuple[float, float]:
    """A fitted search's ``(epsilon, delta)``, checked to be at most the total epsilon."""
    epsilon, delta = map(float, search.privacy_spent_)
    if epsilon > total * (1 + EPSILON_SLACK):
        raise AssertionError(f"a search spent epsilon={epsilon}, over the total {total}")
    return epsilon, delta


def jsonable(params: dict) -> dict:
    """Parameters as JSON values (pairs and arrays as lists of floats, strings kept)."""
    def value(v):
        if isinstance(v, str) or v is None:
            return v
        if isinstance(v, (tuple, list, np.ndarray)):
            return [value(x) for x in v]
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        return float(v)
    return {k: value(v) for k, v in params.items()}


# == command line ==============================================================================
def add_cell_arguments(p, bench: CellBench, tasks, seeds: int) -> None:
    """The options every benchmark in cells takes: which cells (seeds, epsilons, tasks,
    variants), which methods, and whether to fit at all or start over."""
    p.add_argument("--seeds", type=int, default=None, help=f"seeds 0..N-1 (default {seeds})")
    p.add_argument("--from-seed", type=int, default=0,
                   help="start at this seed (split a long run between concurrent commands)")
    p.add_argument("--epsilons", type=float, nargs="+", default=None)
    p.add_argument("--tasks", nargs="+", choices=sorted(tasks), default=None)
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--methods", nargs="+", choices=list(bench.methods), default=None,
                   help="D and L are needed for the gap closed, R1 for the comparison with it "
                        f"(default: {' '.join(bench.default_methods)})")
    p.add_argument("--report-only", action="store_true",
                   help="re-render the tables from the saved JSON")
    p.add_argument("--fresh", action="store_true",
                   help="start over: the saved results file is removed first")


def cell_options(args, bench: CellBench, *, seeds: tuple, epsilons: tuple, tasks: tuple,
                 **extra) -> argparse.Namespace:
    """The options of :func:`add_cell_arguments`, each ``(full, quick)`` default resolved by
    ``args.quick``; ``extra``: a benchmark's own options, as given."""
    def pick(value, defaults):
        return value if value is not None else defaults[bool(args.quick)]

    return argparse.Namespace(
        suffix="_quick" if args.quick else "", seeds=pick(args.seeds, seeds),
        from_seed=args.from_seed, epsilons=pick(args.epsilons, epsilons),
        tasks=pick(args.tasks, tasks), variants=args.variants,
        methods=args.methods or list(bench.default_methods), report_only=args.report_only,
        fresh=args.fresh, **extra)


# == running ===================================================================================
def run_cells(bench: CellBench, opts, store: Store, groups) -> None:
    """``groups``: ``(task, variant)`` pairs, each a dict of what ``bench.split`` needs.
    Seeds outermost: a run stopped early still covers every task and variant."""
    for seed in range(opts.from_seed, opts.seeds):
        for group in groups:
            for total in opts.epsilons:
                run_cell(bench, opts, store, {**group, "total_epsilon": float(total),
                                              "seed": seed})


def run_cell(bench: CellBench, opts, store: Store, cell_spec: dict) -> None:
    store.refresh()
    cells = store.report["cells"]
    key = cell_key(cell_spec["task"], cell_spec["variant"], cell_spec["total_epsilon"],
                   cell_spec["seed"])
    cell = cells.setdefault(key, {"task": cell_spec["task"], "variant": cell_spec["variant"],
                                  "total_epsilon": cell_spec["total_epsilon"],
                                  "seed": cell_spec["seed"], "methods": {}})
    todo = [m for m in opts.methods if m not in cell["methods"]]
    if not todo:
        return
    store.mark("cells", key)
    X_train, X_test, y_train, y_test = bench.split(cell_spec)
    cell.update(n_train=len(y_train), n_test=len(y_test), n_features=X_train.shape[1])
    for method in todo:
        cell["methods"][method] = stamped(bench.fit(cell_spec, method, X_train, y_train,
                                                    X_test, y_test))
    store.save()
    scores = {m: num(r[bench.metric]) for m, r in cell["methods"].items()}
    print(f"[{bench.name}] {key}: {scores}", flush=True)


def record_run(store: Store, opts, argv, start: float) -> None:
    """Save the wall time of this command with the cells it filled."""
    run = {"parts": getattr(opts, "parts", ["cells"]), "seconds": time.perf_counter() - start,
           "argv": list(argv) if argv is not None else None}
    key = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}"
    store.mark("runs", key)
    store.report["runs"][key] = run
    store.save()


def run_minutes(report: dict) -> str:
    """The wall time of the commands that filled ``report``, then its code versions (the
    suite's header sentence, :func:`benchmarks.bench_suite._seconds`)."""
    return _seconds(report)


# == tables ====================================================================================
def num(x: float) -> str:
    """Three decimals below 1 in magnitude, else four significant digits (a hard default's R^2
    can be -10^4)."""
    return f"{x:.3f}" if abs(x) < 1 else f"{x:.4g}"


def measured(groups: dict, methods) -> list:
    return [m for m in methods if any(m in c["methods"] for cs in groups.values() for c in cs)]


def metric_table(bench: CellBench, report: dict, metric: str | None = None,
                 summary: str = "mean_sd") -> str:
    """Per (task, variant, epsilon): every method's mean ± standard deviation over seeds
    (``summary="median"``: its median), of the methods that have ``metric``."""
    metric = metric or bench.metric
    groups = group_cells(report["cells"])
    methods = [m for m in bench.methods if any(metric in c["methods"].get(m, {})
                                               for cs in groups.values() for c in cs)]
    if not methods:
        return "(not run)"

    def text(values):
        if not len(values):
            return "–"
        if summary == "median":
            return num(float(np.median(values)))
        return f"{num(values.mean())} ± {num(_std(values))}"

    rows = [[task, variant, f"{eps:g}", str(len(cells)),
             *[text(np.array([c["methods"][m][metric] for c in cells
                              if metric in c["methods"].get(m, {})])) for m in methods]]
            for (task, variant, eps), cells in sorted(groups.items())]
    return markdown_table(["task", "variant", "ε", "seeds", *methods], rows)


def gap_text(entry: dict | None) -> str:
    """The gap closed where L - D is clear, else Δ = X - D; ⚠ below D by more than one sd."""
    if entry is None:
        return "–"
    text = (f"{entry['gap_closed']:+.2f}" if entry["significant"]
            else f"Δ{num(entry['x_minus_d'])}")
    return text + (" ⚠" if entry["below_d"] else "")


def against_r1(bench: CellBench, cells: list, method: str) -> dict | None:
    """``method`` against R1 on the same splits and seeds: mean and standard error of the
    paired differences; ``verdict`` ``+`` (above R1 by more than two standard errors), ``-``
    (below by more than two) or ``=``."""
    diffs = paired(cells, method, reference="R1", metric=bench.metric)
    if len(diffs) < 2:
        return None
    mean, se = float(diffs.mean()), _std(diffs) / np.sqrt(len(diffs))
    verdict = "+" if mean > 2 * se else "-" if mean < -2 * se else "="
    return {"mean": mean, "se": se, "verdict": verdict}


def gap_table(bench: CellBench, report: dict) -> str:
    """One row per (task, variant, epsilon): L - D, its clearness, and every search's gap
    closed (or Δ), ⚠ below D, and against R1."""
    groups = group_cells(report["cells"])
    searches = measured(groups, bench.searches)
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        limit = gap_entry(cells, "L", metric=bench.metric)
        if limit is None:
            continue
        row = [task, variant, f"{eps:g}",
               f"{num(limit['l_minus_d'])} ± {num(limit['sd_l_minus_d'])}",
               "yes" if limit["significant"] else "no"]
        for m in searches:
            entry = gap_entry(cells, m, metric=bench.metric)
            versus = against_r1(bench, cells, m) if m != "R1" else None
            row.append(gap_text(entry) + (f" ({versus['verdict']})" if versus else ""))
        rows.append(row)
    return markdown_table(["task", "variant", "ε", "L − D (mean ± sd)", "clear gap",
                           *[bench.methods[m] for m in searches]], rows)


def r1_table(bench: CellBench, report: dict) -> str:
    """Each tuning search minus R1 (paired, mean ± standard error), per cell."""
    groups = group_cells(report["cells"])
    tuners = measured(groups, bench.tuners)
    rows = []
    for (task, variant, eps), cells in sorted(groups.items()):
        row = [task, variant, f"{eps:g}"]
        for m in tuners:
            entry = against_r1(bench, cells, m)
            row.append("–" if entry is None else
                       f"{num(entry['mean'])} ± {num(entry['se'])} ({entry['verdict']})")
        rows.append(row)
    return markdown_table(["task", "variant", "ε",
                           *[f"{bench.methods[m]} − R1" for m in tuners]], rows)


def goal_table(bench: CellBench, report: dict) -> str:
    """Every search against the goal: where L - D exceeds two standard deviations, how often
    the gap closed is >= 0.8 (and its median); everywhere, how often it is below D by more
    than one standard deviation; and how often it beats R1."""
    groups = group_cells(report["cells"])
    rows = []
    for m in measured(groups, bench.searches):
        label = bench.methods[m] + (" (**the library's default**)"
                                    if m == bench.default_search else "")
        entries = [e for cs in groups.values() if (e := gap_entry(cs, m, metric=bench.metric))]
        closed = [e["gap_closed"] for e in entries if e["significant"]]
        versus = ([b for cs in groups.values() if (b := against_r1(bench, cs, m))]
                  if m != "R1" else [])
        rows.append([label, str(len(entries)), str(len(closed)),
                     f"{sum(c >= 0.8 for c in closed)} / {len(closed)}",
                     f"{np.median(closed):+.2f}" if closed else "–",
                     f"{sum(e['below_d'] for e in entries)} / {len(entries)}",
                     (f"{sum(b['verdict'] == '+' for b in versus)} / "
                      f"{sum(b['verdict'] == '-' for b in versus)} / {len(versus)}")
                     if versus else "–"])
    return markdown_table(["search", "cells", "cells with a clear gap",
                           "gap closed ≥ 0.8 there", "median gap closed there",
                           "below D by > 1 sd", "above / below R1 (2 se) / cells"], rows)


def timing_table(bench: CellBench, report: dict) -> str:
    """Per (task, variant): each method's seconds over L's in the same cell (interleaved),
    median [min, max] over the cells, and L's median seconds."""
    by_pair: dict = {}
    for cell in report["cells"].values():
        by_pair.setdefault((cell["task"], cell["variant"]), []).append(cell)
    # a method added to the cells by a later command was not timed next to their L
    methods = [m for m in bench.default_methods if m != "L"]
    rows = []
    for (task, variant), cells in sorted(by_pair.items()):
        timed = [c for c in cells if "L" in c["methods"]]
        if not timed:
            continue
        plain = np.array([c["methods"]["L"]["seconds"] for c in timed])
        row = [task, variant, str(timed[0]["n_train"]), str(len(timed)),
               f"{np.median(plain):.2f}"]
        for m in methods:
            ratios = [c["methods"][m]["seconds"] / c["methods"]["L"]["seconds"]
                      for c in timed if m in c["methods"]]
            row.append(_ratio(ratios) if ratios else "–")
        rows.append(row)
    return markdown_table(["task", "variant", "n_train", "cells", "L: seconds (median)",
                           *[f"{m} / L" for m in methods]], rows)


def standard_sections(bench: CellBench, report: dict, epsilons: str,
                      after_metric: list[str] = ()) -> list[str]:
    """The sections every benchmark in cells renders: gap closed, goal, the metric (then
    ``after_metric``, a benchmark's own sections), R1, time."""
    none = "(no cells)"
    cells = report["cells"]
    return [
        "## Gap closed\n",
        f"Per task, variant and total ε ({epsilons}): L − D (mean ± sd over seeds of the "
        "per-seed paired differences) and whether it is a *clear gap* (mean > 2 sd); each "
        "search's gap closed (X − D) / (L − D) where the gap is clear, else `Δ` = mean X − D "
        f"({bench.metric_name} points). ⚠: X below D by more than one sd of X − D. In "
        "brackets, the search against R1 (paired, same splits and seeds): `+` above R1 by more "
        "than two standard errors, `-` below, `=` neither.\n",
        gap_table(bench, report) if cells else none,
        "\n## Against the goal\n",
        "The goal for the library's default search: close ≥ 80 % of L − D wherever it is "
        "clear, and never fall below D by more than one standard deviation. Counts over the "
        "(task, variant, ε) cells above.\n",
        goal_table(bench, report) if cells else none,
        f"\n## Test {bench.metric_name} (mean ± sd over seeds)\n",
        metric_table(bench, report) if cells else none,
        *after_metric,
        "\n## Tuning against repetition of the default (R1)\n",
        f"Each tuning search's test {bench.metric_name} minus R1's on the same splits and "
        "seeds, mean ± standard error (`+` / `-`: beyond two standard errors). R1 runs the "
        "default alone the way DPRandomSearchCV runs its candidates, at the same total ε: what "
        "a search gains over D by returning the best of several noisy fits rather than by "
        "tuning.\n",
        r1_table(bench, report) if cells else none,
        "\n## Time (ratios to L; interleaved in each cell)\n",
        "Each method's wall time over L's (GridSearchCV(cv=5) over the grid's candidates, "
        "n_jobs=1) in the same cell, median [min, max] over the cells (ε and seeds); every "
        "method n_jobs=1 under one BLAS thread, on a shared two-core machine.\n",
        timing_table(bench, report) if cells else none,
    ]
