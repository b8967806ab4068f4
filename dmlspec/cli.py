"""The `dmlspec` command line.

Exit codes: 0 success, 1 a check found differences or violations, 2 unreadable or malformed
input (specs, docs, files). Errors are one-line messages, never tracebacks
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

from .errors import SpecError
from .loading import load_catalog
from .model import Catalog

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _catalog(args: argparse.Namespace) -> Catalog:
    return load_catalog(Path(args.spec_dir) if args.spec_dir else None)


def command_list(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    rows = [("operator", "aliases", "introduced", "support rows", "errors", "requires", "examples")]
    for spec in catalog.operators:
        rows.append(
            (
                spec.name,
                ", ".join(a.operator_type.removeprefix("DML_OPERATOR_") for a in spec.aliases)
                or "-",
                spec.introduced,
                ", ".join(row.feature_level for row in spec.support),
                str(sum(c.constraint_class == "error" for c in spec.constraints)),
                str(sum(c.constraint_class == "requires" for c in spec.constraints)),
                str(len(spec.examples)),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    common = catalog.common
    print(
        f"\n{len(catalog.operators)} operators; feature levels {common.feature_levels[0].name}.."
        f"{common.highest_feature_level.name}; {len(common.data_types)} data types; "
        f"{len(common.tensor_constraints)} tensor rules (TENSOR.C*) apply to every tensor."
    )
    return EXIT_OK


def command_check_docs(args: argparse.Namespace) -> int:
    from .docs_check import check_docs, default_docs_dir

    catalog = _catalog(args)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dmlspec", description="DirectML operator specs and conformance tooling."
    )
    parser.add_argument("--spec-dir", help="spec folder (default: $DMLSPEC_SPEC_DIR or ./spec)")
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="load and check every spec, list the operators")
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", command_list)
    try:
        return int(run(args))
    except SpecError as error:
        print(f"dmlspec: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # the CLI never shows a traceback unless asked to
        if os.environ.get("DMLSPEC_DEBUG"):
            traceback.print_exc()
        print(f"dmlspec: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL
