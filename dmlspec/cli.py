"""The `dmlspec` command line.

Exit codes: 0 success, 1 a check found differences or violations (or a backend failed),
2 unreadable, malformed or refused input (specs, docs, files, backends, limits) or a missing
dependency, 3 an internal error (a bug in dmlspec), 130 interrupted (Ctrl-C, or a backend
raising KeyboardInterrupt). Errors are one-line messages, never tracebacks
(set DMLSPEC_DEBUG=1 to see one for an internal error).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from .backends import BackendLoadError
from .cli_shared import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    INTERRUPTED,
    BadInput,
    catalog_of,
    named_operators,
    writable_folder,
)
from .conformance.command import (
    command_conformance,
    command_merge_reports,
    share_accelerator,
)
from .errors import SpecError
from .extras import importable, install_hint
from .limits import LimitError, cut, quote
from .safeio import UnsafePath

__all__ = ["build_parser", "main", "share_accelerator"]


def command_list(args: argparse.Namespace) -> int:
    from .catalog_status import catalog_status, render_markdown, render_text

    catalog = catalog_of(args)
    rows = catalog_status(catalog)
    if getattr(args, "markdown", False):
        print(render_markdown(rows), end="")
        return EXIT_OK
    print(render_text(rows), end="")
    common = catalog.common
    print(
        f"Feature levels {common.feature_levels[0].name}..{common.highest_feature_level.name}; "
        f"{len(common.data_types)} data types; {len(common.tensor_constraints)} tensor rules "
        "(TENSOR.C*) apply to every tensor."
    )
    return EXIT_OK


def command_draft(args: argparse.Namespace) -> int:
    from .loading import default_spec_dir, load_common
    from .pages.check import default_docs_dir
    from .pages.drafting import draft_catalog
    from .pages.read import DocPageError

    spec_dir = Path(args.spec_dir) if args.spec_dir else default_spec_dir()
    common = load_common(spec_dir)
    docs_dir = Path(args.docs_dir) if args.docs_dir else default_docs_dir()
    if not (docs_dir / "reference" / "directml-docs").is_dir():
        raise BadInput(f"{docs_dir}: no reference/directml-docs/ folder")
    only = {name.upper().removeprefix("DML_OPERATOR_") for name in args.ops} if args.ops else None
    try:
        actions = draft_catalog(common, docs_dir, spec_dir / "operators", only, args.check)
    except DocPageError as error:  # a page every draft reads (the manifest, the history)
        raise BadInput(cut(str(error))) from None
    for action in actions:
        if action.action != "unchanged" or args.verbose:
            print(f"{action.action}: {action.name} ({action.path})")
        if args.verbose:
            for problem in action.problems:
                print(f"  {problem}")
    counts: dict[str, int] = {}
    for action in actions:
        counts[action.action] = counts.get(action.action, 0) + 1
    print(", ".join(f"{n} {what}" for what, n in sorted(counts.items())))
    failed = [a for a in actions if a.action == "failed"]
    if failed:
        first = failed[0]
        said = f": {cut(first.problems[0])}" if first.problems else ""
        raise BadInput(f"{len(failed)} failed, the first {quote(first.name)}{said}")
    return EXIT_FAILED if args.check and counts.get("would write") else EXIT_OK


def command_check_docs(args: argparse.Namespace) -> int:
    from .pages.check import check_docs, default_docs_dir

    catalog = catalog_of(args)
    docs_dir = Path(args.docs_dir) if args.docs_dir else default_docs_dir()
    if not docs_dir.is_dir():
        print(f"dmlspec: docs folder not found: {docs_dir}", file=sys.stderr)
        return EXIT_BAD_INPUT
    report = check_docs(catalog, docs_dir)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.render())
    return EXIT_OK if report.ok else EXIT_FAILED


def command_generate(args: argparse.Namespace) -> int:
    from .generate import default_output_dir, generate

    catalog = catalog_of(args)
    output_dir = Path(args.out) if args.out else default_output_dir()
    changes = generate(catalog, output_dir, check=args.check)
    if args.check:
        for change in changes:
            print(change.diff or f"{change.kind}: {change.path}", end="")
        if changes:
            listed = ", ".join(f"{c.path} ({c.kind})" for c in changes)
            print(f"\ngenerated/ is stale: {listed}. Run: dmlspec generate", file=sys.stderr)
            return EXIT_FAILED
        print(f"{output_dir.name}/ is current")
        return EXIT_OK
    for change in changes:
        verb = "removed" if change.kind == "orphan" else "wrote"
        print(f"{verb} {output_dir.name}/{change.path}")
    print(f"{output_dir.name}/: {len(changes)} file(s) changed")
    return EXIT_OK


def _read_input(path: str) -> object:
    from .jsonio import JsonReadError, read_json_file

    try:
        return read_json_file(Path(path))
    except JsonReadError as error:
        raise BadInput(f"{path}: {error}") from None


def command_validate(args: argparse.Namespace) -> int:
    from dmlspec_generated.validators.common import COMMON

    from .validation import ValidationResult, validate_operator
    from .validation.engine import normalise_level

    try:
        level = normalise_level(COMMON, args.feature_level)
    except ValueError as error:
        raise BadInput(str(error)) from None
    data = _read_input(args.file)
    if isinstance(data, dict) and "dispatchables" in data:
        dispatchables = data["dispatchables"]
        if not isinstance(dispatchables, dict):
            raise BadInput(f"{args.file}: /dispatchables must be an object of named dispatchables")
        results: dict[str, ValidationResult] = {}
        skipped: dict[str, str] = {}
        for name, dispatchable in dispatchables.items():
            kind = dispatchable.get("type") if isinstance(dispatchable, dict) else None
            if kind in ("hlsl", "onnx", "dmlSerializedGraph"):
                skipped[name] = f"{kind} dispatchable, not a DirectML operator"
                continue
            results[name] = validate_operator(dispatchable, level)
    elif isinstance(data, dict) and "type" in data:
        results, skipped = {"": validate_operator(data, level)}, {}
    else:
        raise BadInput(
            f'{args.file}: expected an operator ({{"type", "desc"}}) '
            'or a DxDispatch model (with "dispatchables")'
        )
    if args.json:
        payload = (
            results[""].to_json()
            if list(results) == [""]
            else {name: result.to_json() for name, result in results.items()}
        )
        print(json.dumps(payload, indent=2))
    else:
        for name, result in results.items():
            label = f"{args.file}" + (f" [{quote(name)}]" if name else "")
            verdict = "valid" if result.valid else "INVALID"
            print(f"{label}: {verdict} at feature level {result.feature_level}")
            for violation in result.violations:
                print(f"  {violation}")
            for warning in result.warnings:
                print(f"  {warning}")
        for name, reason in skipped.items():
            print(f"{args.file} [{quote(name)}]: not checked ({reason})")
    return EXIT_OK if all(r.valid for r in results.values()) else EXIT_FAILED


def command_lint(args: argparse.Namespace) -> int:
    from .lint import lint, render_lint

    verdicts = lint(catalog_of(args))
    print(render_lint(verdicts))
    return EXIT_OK if all(v.ok for v in verdicts) else EXIT_FAILED


def command_export(args: argparse.Namespace) -> int:
    from .interop.export import export

    catalog = catalog_of(args)
    operators = named_operators(catalog, args.ops, "kernel to export cases from")
    level = (args.feature_level or catalog.common.highest_feature_level.name).removeprefix(
        "DML_FEATURE_LEVEL_"
    )
    try:
        catalog.common.feature_level(level)
    except KeyError as error:
        raise BadInput(str(error.args[0])) from None
    chosen = args.format or "all"
    formats = ("dxdispatch", "onnx") if chosen == "all" else (chosen,)
    left_out_onnx = ""
    if "onnx" in formats and not importable("onnx"):
        if args.format is not None:  # asked for by name: say how to get it, write nothing
            raise BadInput(f"--format {args.format} needs onnx; {install_hint('onnx')}")
        formats = ("dxdispatch",)
        left_out_onnx = f"onnx vectors left out: {install_hint('onnx')}"
    if "onnx" in formats:
        formats = ("dxdispatch", *formats) if "dxdispatch" not in formats else formats
    out = writable_folder(Path(args.out), "--out")
    try:
        manifest = export(catalog, out, operators, level, args.profile, formats, args.large)
    except OSError as error:
        raise BadInput(f"cannot write to {args.out}: {error.strerror or error}") from None
    print(f"exported {len(manifest['cases'])} cases to {args.out} ({', '.join(formats)})")
    if left_out_onnx:
        print(left_out_onnx)
    for left in manifest["left_out"]:
        print(f"left out {left['id']}: {left['reason']}")
    return EXIT_OK


def command_run_vectors(args: argparse.Namespace) -> int:
    from .backends import load_backend
    from .interop.run_vectors import VectorResult, VectorsError, run_vectors

    folder = Path(args.folder)
    if not (folder / "manifest.json").is_file():
        raise BadInput(f"{folder}: no manifest.json (export with: dmlspec export --out {folder})")
    backend = load_backend(args.backend)

    def show(result: VectorResult) -> None:
        if result.outcome != "passed":
            print(f"{result.outcome.upper()} {quote(result.id)}: {result.message}")

    try:
        results = run_vectors(folder, backend, show, args.allow_any_path)
    except VectorsError as error:
        raise BadInput(f"{folder}: {error}") from None
    counts = {o: sum(r.outcome == o for r in results) for o in ("passed", "failed", "skipped")}
    print(f"{backend.name}: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    if not counts["passed"] and not counts["failed"]:
        said = f"{counts['skipped']} skipped" if results else "the manifest lists no case"
        print(
            f"dmlspec: the run judged nothing: no case passed or failed ({said})", file=sys.stderr
        )
        return EXIT_FAILED
    return EXIT_FAILED if counts["failed"] else EXIT_OK


def command_dispatch(args: argparse.Namespace) -> int:
    from .backends import load_backend
    from .interop.dispatch import DispatchError, run_model

    try:
        run_model(Path(args.model), load_backend(args.backend), args.allow_any_path)
    except DispatchError as error:
        raise BadInput(f"{args.model}: {error}") from None
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dmlspec", description="DirectML operator specs and conformance tooling."
    )
    parser.add_argument("--spec-dir", help="spec folder (default: $DMLSPEC_SPEC_DIR or ./spec)")
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="load and check every spec, list the operators")
    listing.add_argument(
        "--markdown", action="store_true", help="print the table as docs/catalog.md has it"
    )
    listing.set_defaults(run=command_list)
    docs = commands.add_parser(
        "check-docs", help="compare the specs with the DirectML doc pages, cell by cell"
    )
    docs.add_argument(
        "docs_dir",
        nargs="?",
        help="folder holding reference/directml-docs/ and seeds/ (default: ../shared)",
    )
    docs.add_argument("--json", action="store_true", help="print the report as JSON")
    docs.set_defaults(run=command_check_docs)
    draft = commands.add_parser(
        "draft",
        help="write drafted specs from the DirectML pages (never overwrites a curated spec)",
    )
    draft.add_argument(
        "docs_dir", nargs="?", help="folder holding reference/directml-docs/ (default: ../shared)"
    )
    draft.add_argument("--ops", nargs="+", help="operators to draft (default: every page)")
    draft.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a drafted spec is stale"
    )
    draft.add_argument("-v", "--verbose", action="store_true", help="show what needs judgement")
    draft.set_defaults(run=command_draft)
    generate = commands.add_parser("generate", help="render generated/ from spec/")
    generate.add_argument(
        "--check", action="store_true", help="change nothing; show a diff and exit 1 if stale"
    )
    generate.add_argument("--out", help="output folder (default: generated/ beside dmlspec/)")
    generate.set_defaults(run=command_generate)
    validate = commands.add_parser(
        "validate", help="validate an operator JSON or every dispatchable of a DxDispatch model"
    )
    validate.add_argument("file", help="operator JSON or DxDispatch model file")
    validate.add_argument(
        "--feature-level", help="e.g. 3_0 or DML_FEATURE_LEVEL_3_0 (default: the highest known)"
    )
    validate.add_argument("--json", action="store_true", help="print the result as JSON")
    validate.set_defaults(run=command_validate)
    lint = commands.add_parser(
        "lint",
        help="run every documented example, as written and corrected, through the validators",
    )
    lint.set_defaults(run=command_lint)
    conformance = commands.add_parser(
        "conformance", help="run the generated conformance suites against a backend"
    )
    conformance.add_argument(
        "--backend",
        default="jax",
        help="jax, numpy, onnxruntime, onnxruntime:PROVIDER[,KEY=VALUE...], an entry point "
        "or module:attr",
    )
    conformance.add_argument("--feature-level", help="lower (never raise) the backend's level")
    conformance.add_argument("--ops", nargs="+", help="operators to test (default: all)")
    conformance.add_argument(
        "--profile", default="ci", choices=["ci", "dev", "thorough"], help="Hypothesis profile"
    )
    conformance.add_argument("--report", help="folder for results.json, junit.xml and report.md")
    conformance.add_argument("--workers", help="N or auto: run on N processes with pytest-xdist")
    conformance.add_argument(
        "--case-timeout",
        type=float,
        help="seconds the backend may take for one case (default: $DMLSPEC_CASE_TIMEOUT or 60)",
    )
    conformance.add_argument(
        "--in-process",
        action="store_true",
        help="run the backend in the test process: no time limit, no crash protection",
    )
    from .conformance.distribution import add_arguments

    add_arguments(conformance)
    conformance.set_defaults(run=command_conformance)
    merge = commands.add_parser(
        "merge-reports", help="merge the reports of a run's shards into one report"
    )
    merge.add_argument(
        "out", help="folder for the merged results.json, junit.xml, report.md and report.html"
    )
    merge.add_argument("reports", nargs="+", help="report folders (--report) of the shards")
    merge.set_defaults(run=command_merge_reports)
    export = commands.add_parser("export", help="write the generated cases as portable vectors")
    export.add_argument("--out", required=True, help="output folder")
    export.add_argument("--ops", nargs="+", help="operators (default: all)")
    export.add_argument("--feature-level", help="highest level to export (default: the highest)")
    export.add_argument("--profile", default="ci", choices=["ci", "dev", "thorough"])
    export.add_argument(
        "--format",
        choices=["dxdispatch", "onnx", "all"],
        help="default: all (onnx only where the onnx package is installed)",
    )
    export.add_argument("--large", action="store_true", help="keep cases over 1 MiB")
    export.set_defaults(run=command_export)
    vectors = commands.add_parser("run-vectors", help="run exported vectors against a backend")
    vectors.add_argument("folder", help="a folder written by dmlspec export")
    vectors.add_argument("--backend", default="jax")
    vectors.add_argument(
        "--allow-any-path",
        action="store_true",
        help="let the manifest name files outside the folder (through .., absolute paths, links)",
    )
    vectors.set_defaults(run=command_run_vectors)
    dispatch = commands.add_parser("dispatch", help="execute a DxDispatch model")
    dispatch.add_argument("model", help="DxDispatch model JSON")
    dispatch.add_argument("--backend", default="jax")
    dispatch.add_argument(
        "--allow-any-path", action="store_true", help="let sourcePath leave the model's folder"
    )
    dispatch.set_defaults(run=command_dispatch)
    return parser


def _missing_dependency(error: Exception) -> str | None:
    """The package a failed import names, where it is not one of dmlspec's own (whose absence
    is a bug), else None."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    package = error.name.partition(".")[0]
    return None if package in ("dmlspec", "dmlspec_generated") else package


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", command_list)
    try:
        return int(run(args))
    except SpecError as error:
        print(f"dmlspec: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (BadInput, BackendLoadError, LimitError, UnsafePath) as error:
        print(f"dmlspec: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"dmlspec: {INTERRUPTED}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # the CLI never shows a traceback unless asked to
        missing = _missing_dependency(error)
        if missing is not None:
            print(
                f"dmlspec: this command needs the Python package {quote(missing)}, which "
                f"{sys.executable} cannot import; {install_hint(missing)}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        if os.environ.get("DMLSPEC_DEBUG"):
            traceback.print_exc()
        print(f"dmlspec: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL
