"""The conformance commands: `dmlspec conformance` (the generated suites against a backend,
its reports) and `dmlspec merge-reports` (shards' reports as one)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import MutableMapping
from pathlib import Path

from ..cli_shared import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    INTERRUPTED,
    BadInput,
    catalog_of,
    named_operators,
    writable_folder,
)
from ..extras import importable, install_hint
from ..limits import quote

__all__ = ["MAX_WORKERS", "command_conformance", "command_merge_reports", "share_accelerator"]

MAX_WORKERS = 256  # --workers: each is a process with its own backend process


def share_accelerator(environ: MutableMapping[str, str]) -> None:
    """A run is several processes (the backend's own, xdist's workers), each with its own JAX
    client; on a GPU each would take 75% of the memory at its start (JAX's preallocation) and
    the second would find too little left. Unless the user chose, they allocate as needed."""
    environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def command_conformance(args: argparse.Namespace) -> int:
    import tempfile

    import pytest

    from ..backends import is_builtin, load_backend
    from ..generate import default_output_dir
    from ..generate.dest.tests import suite_path
    from ..limits import CASE_TIMEOUT
    from ..safeio import read_bytes, write_file
    from . import distribution, plugin
    from .import_path import isolate_children
    from .isolation import IsolatedBackend
    from .report import render_markdown, render_terminal
    from .report_html import render_html
    from .run_files import clear_report_files, nothing_judged

    if args.workers not in (None, "auto") and not (
        args.workers.isdecimal() and 0 <= int(args.workers) <= MAX_WORKERS
    ):
        raise BadInput(f"--workers must be auto or 0 to {MAX_WORKERS}; got {quote(args.workers)}")
    share_accelerator(os.environ)
    if args.workers and not importable("xdist"):
        raise BadInput(f"--workers runs on pytest-xdist; {install_hint('xdist')}")
    isolate_children(os.environ, sys.path)
    suites = default_output_dir() / "tests"
    if not suites.is_dir():
        raise BadInput(f"no generated suites in {suites}; run: dmlspec generate")
    catalog = catalog_of(args)
    operators = named_operators(catalog, args.ops, "conformance suite") if args.ops else []
    try:
        selection = distribution.Selection.from_args(args, catalog)
    except ValueError as error:  # each of the options' own errors: one line
        raise BadInput(str(error)) from None
    if selection.cases == () and args.rerun_failed:
        print(f"nothing to rerun: {args.rerun_failed}/results.json records no failure")
        return EXIT_OK
    operators = operators or list(selection.operators)
    if args.list:
        return distribution.print_case_list(suites, operators, selection, catalog)
    report_dir = writable_folder(
        Path(args.report) if args.report else Path(tempfile.mkdtemp(prefix="dmlspec-")), "--report"
    )
    clear_report_files(report_dir)
    timeout = args.case_timeout if args.case_timeout is not None else CASE_TIMEOUT.value()
    if not 0 < timeout < float("inf"):
        raise BadInput(f"--case-timeout must be a positive number of seconds; got {timeout}")
    # Load and check the backend here, so that what is wrong with it is one line, not pytest's
    # INTERNALERROR; the session then uses this very backend. With workers, each worker runs
    # the backend in a process of its own and this one is only checked: dmlspec's own backends
    # are checked in this process (a backend process would be started and waited for, unused).
    parallel = args.workers not in (None, "0") and not args.in_process
    if parallel and is_builtin(args.backend):
        backend = load_backend(args.backend)
    else:
        backend = plugin.open_backend(args.backend, timeout, args.in_process)
    plugin.expected_failures(backend)
    if args.feature_level:
        requested = args.feature_level.removeprefix("DML_FEATURE_LEVEL_")
        claimed = str(backend.feature_level).removeprefix("DML_FEATURE_LEVEL_")
        known = [level.name for level in catalog.common.feature_levels]
        if requested not in known:
            raise BadInput(
                f"--feature-level: unknown level {quote(requested)}; known: {', '.join(known)}"
            )
        if known.index(requested) > known.index(claimed):
            raise BadInput(
                f"--feature-level {requested} is above what {backend.name} claims ({claimed})"
            )
    plugin.preload(args.backend, backend)
    private = Path(tempfile.mkdtemp(prefix="dmlspec-run-"))
    # Everything the run writes goes to the report folder, nothing to the current one.
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(report_dir / ".hypothesis"))
    # Only the named operators' modules are collected (each imports and rewrites its module, and
    # Hypothesis reads it); --dml-ops still filters, and a run of every operator takes the folder.
    modules = sorted(default_output_dir() / suite_path(catalog.operator(o)) for o in operators)
    options = [
        *(str(m) for m in (modules if modules and all(m.is_file() for m in modules) else [suites])),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "--rootdir",
        str(suites),
        # a checkout's pyproject.toml holds the project's own test options (-m, -n): not the run's
        "-o",
        "addopts=",
        f"--dml-backend={args.backend}",
        f"--hypothesis-profile={args.profile}",
        f"--dml-report={report_dir}",
        # pytest opens junit.xml following links: it writes in a private folder, moved after.
        f"--junitxml={private / 'junit.xml'}",
        f"--dml-case-timeout={timeout}",
        "-q",
        # A failure's message holds its case (operator JSON, inputs, seed); long tracebacks
        # added the repr of every argument of every frame (each failure's Case, arrays and
        # all: a third of an onnxruntime run with expected failures).
        "--tb=short",
        # The suites fail through pytest.fail with their case, never a bare assert: rewriting
        # the generated modules' asserts (every worker, every run where no .pyc is kept) only
        # cost collection time (4.4 -> 2.8 s of CPU per worker for the whole catalog).
        "--assert=plain",
    ]
    if args.in_process:
        options.append("--dml-in-process")
    else:
        # pytest's gc.collect() at the end of each session (each worker's too) looks for
        # exceptions raised while objects are freed; the backend's objects are in its process.
        options += ["-p", "no:unraisableexception"]
    if args.feature_level:
        options.append(f"--dml-feature-level={args.feature_level}")
    if operators:
        options.append(f"--dml-ops={','.join(operators)}")
    if args.workers:
        options += ["-n", args.workers, "--dist", "loadfile"]
    options += selection.pytest_options(report_dir)
    level = args.feature_level or str(backend.feature_level)
    ran = (
        f"{len(operators)} operator{'' if len(operators) == 1 else 's'}"
        if operators
        else "every operator with a kernel"
    )
    print(
        f"dmlspec conformance: {ran} on {backend.name} at feature level "
        f"{level.removeprefix('DML_FEATURE_LEVEL_')}, profile {args.profile}, "
        f"{args.workers or 1} worker(s); reports in {report_dir}",
        flush=True,
    )
    try:
        code = int(pytest.main(options))
        junit = private / "junit.xml"
        if junit.is_file():
            write_file(report_dir, "junit.xml", read_bytes(junit, junit.stat().st_size))
    finally:
        plugin.preload("", None)
        if isinstance(backend, IsolatedBackend):
            backend.close()
        shutil.rmtree(private, ignore_errors=True)
    if code == pytest.ExitCode.INTERRUPTED:
        print(f"dmlspec: {INTERRUPTED}; the reports are incomplete", file=sys.stderr)
        return EXIT_INTERRUPTED
    results_file = report_dir / "results.json"
    if not results_file.exists():
        if code != 4:  # pytest said what was wrong with the usage (a case list, a shard)
            print(
                f"dmlspec: the run produced no results (pytest exit code {code})", file=sys.stderr
            )
        return EXIT_BAD_INPUT if code in (3, 4) else EXIT_FAILED
    results = json.loads(results_file.read_text())
    write_file(report_dir, "report.md", render_markdown(results).encode())
    write_file(report_dir, "report.html", render_html(results).encode())
    print(render_terminal(results))
    print(f"reports: {report_dir}/results.json, junit.xml, report.md, report.html")
    if args.write_baseline:
        print(distribution.write_baseline(Path(args.write_baseline), results))
    failed = any(t["outcome"] == "failed" for t in results["tests"])
    empty = nothing_judged(results["tests"])
    if empty is not None:
        print(f"dmlspec: {empty}", file=sys.stderr)
    return EXIT_FAILED if failed or empty or code not in (0, 5) else EXIT_OK


def command_merge_reports(args: argparse.Namespace) -> int:
    from .merge import MergeError, merge_reports
    from .report import render_matrix

    out = writable_folder(Path(args.out), "OUT")
    try:
        merged = merge_reports(out, [Path(folder) for folder in args.reports])
    except MergeError as error:
        raise BadInput(str(error)) from None
    print(render_matrix(merged))
    shards = f" (shards {', '.join(merged['shards'])})" if merged["shards"] else ""
    print(
        f"merged {len(args.reports)} reports{shards}: "
        f"{out}/results.json, junit.xml, report.md, report.html"
    )
    if merged["missing_shards"]:
        print(f"dmlspec: missing shards: {', '.join(merged['missing_shards'])}", file=sys.stderr)
    failed = any(t["outcome"] == "failed" for t in merged["tests"])
    return EXIT_FAILED if failed or merged["missing_shards"] else EXIT_OK
