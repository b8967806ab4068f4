"""`dmlspec conformance` across machines: its options for case lists, shards, baselines and
retries, checked before anything runs, and turned into the plugin's pytest options.

Errors are ValueErrors (CaseListError, ShardError, BaselineError, MergeError) with one-line
messages naming the option and file; the CLI shows them and exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..generate.dest.tests import suite_path
from ..model import Catalog
from ..safeio import write_file
from .baseline import Baseline, baseline_from_results
from .caselist import CaseListError, failed_cases, read_case_list, render_case_list
from .merge import read_results
from .shards import Shard, read_timings

__all__ = ["Selection", "add_arguments", "print_case_list", "write_baseline"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--list", action="store_true", help="print the id of every case the run would run, only"
    )
    parser.add_argument("--cases", help="run exactly the case ids this file lists (from --list)")
    parser.add_argument("--rerun-failed", metavar="REPORT_DIR", help="rerun a report's failures")
    parser.add_argument("--shard", metavar="K/N", help="run shard K of N (1 <= K <= N)")
    parser.add_argument(
        "--timings", metavar="REPORT_DIR", help="balance the shards by this earlier run's times"
    )
    parser.add_argument("--baseline", help="expected failures and known flakes (JSON or TOML)")
    parser.add_argument("--write-baseline", metavar="FILE", help="write the run's failures there")
    parser.add_argument(
        "--retries", type=int, default=0, help="run a failed case up to N more times (flaky)"
    )


@dataclass(frozen=True)
class Selection:
    """What the options choose: the cases (None: all), the operators they belong to, the shard,
    the timings file, the baseline file and the retries."""

    cases: tuple[str, ...] | None = None
    operators: tuple[str, ...] = ()
    shard: Shard | None = None
    timings: Path | None = None
    baseline: Path | None = None
    retries: int = 0

    @staticmethod
    def from_args(args: argparse.Namespace, catalog: Catalog) -> Selection:
        if args.cases and args.rerun_failed:
            raise CaseListError("--cases and --rerun-failed each choose the cases: give one")
        cases: tuple[str, ...] | None = None
        if args.cases:
            cases = read_case_list(Path(args.cases))
            if not cases:
                raise CaseListError(f"--cases {args.cases}: lists no case")
        elif args.rerun_failed:
            cases = failed_cases(read_results(Path(args.rerun_failed)))
        suites = {Path(suite_path(spec)).name: spec.name for spec in catalog.with_kernels}
        operators: dict[str, None] = {}
        for case in cases or ():
            module = case.partition("::")[0]
            if module not in suites:
                raise CaseListError(f"case {case}: no generated suite {module}")
            operators[suites[module]] = None
        shard = Shard.parse(args.shard) if args.shard else None
        timings = Path(args.timings) if args.timings else None
        if timings is not None:
            if shard is None:
                raise CaseListError("--timings balances shards: give --shard K/N with it")
            read_timings(timings)  # readable, every time a number
        baseline = Path(args.baseline) if args.baseline else None
        if baseline is not None:
            Baseline.read(baseline, {spec.name for spec in catalog.operators})
        if args.retries < 0:
            raise CaseListError(f"--retries must be 0 or more; got {args.retries}")
        return Selection(cases, tuple(operators), shard, timings, baseline, args.retries)

    def pytest_options(self, report_dir: Path) -> list[str]:
        """The plugin's options for this selection (a case list is written to the report
        folder, as cases.txt, the cases the run was asked for)."""
        options = []
        if self.cases is not None:
            listed = report_dir / "cases.txt"
            write_file(report_dir, listed.name, render_case_list(self.cases).encode())
            options.append(f"--dml-cases={listed}")
        if self.shard is not None:
            options.append(f"--dml-shard={self.shard}")
        if self.timings is not None:
            options.append(f"--dml-timings={self.timings}")
        if self.baseline is not None:
            options.append(f"--dml-baseline={self.baseline}")
        if self.retries:
            options.append(f"--dml-retries={self.retries}")
        return options


class _Collected:
    """A pytest plugin keeping the ids of the items a session would run."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.ids = [item.nodeid for item in session.items]


def print_case_list(
    suites: Path, operators: list[str], selection: Selection, catalog: Catalog
) -> int:
    """Print the id of every case the run would run, one a line (the count to stderr); the
    backend is not loaded and nothing runs. Returns the exit code."""
    from ..generate import default_output_dir

    modules = [default_output_dir() / suite_path(catalog.operator(o)) for o in operators]
    collected = _Collected()
    with io.StringIO() as scratch, tempfile.TemporaryDirectory() as folder:
        options = [
            *(str(m) for m in (sorted(modules) or [suites])),
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:benchmark",
            "--rootdir",
            str(suites),
            # a checkout's pyproject.toml holds the project's own test options, not the run's
            "-o",
            "addopts=",
            *(["--dml-ops=" + ",".join(operators)] if operators else []),
            *selection.pytest_options(Path(folder)),
        ]
        with contextlib.redirect_stdout(scratch):
            code = int(pytest.main(options, plugins=[collected]))
    if code not in (0, 5):
        return 2 if code == 4 else 1
    print(render_case_list(collected.ids), end="")
    print(f"{len(collected.ids)} cases", file=sys.stderr)
    return 0


def write_baseline(path: Path, results: dict[str, Any]) -> str:
    """Write a baseline of the run's failures and flakes to `path`; a line saying so."""
    baseline = baseline_from_results(results)
    write_file(path.parent, path.name, baseline.render(path).encode())
    return (
        f"baseline: {path}: {len(baseline.expected_failures)} expected failures, "
        f"{len(baseline.flaky)} known flakes"
    )
