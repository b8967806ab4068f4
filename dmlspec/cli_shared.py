"""What the dmlspec command's parts share: exit codes, the one-line error for bad input, the
catalog a command reads, the operators `--ops` names and the folders a command writes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .limits import quote
from .loading import load_catalog
from .model import Catalog

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "INTERRUPTED",
    "BadInput",
    "catalog_of",
    "named_operators",
    "writable_folder",
]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # as a shell reports a process that SIGINT ended
INTERRUPTED = "interrupted (KeyboardInterrupt: Ctrl-C, or raised by the backend)"


def catalog_of(args: argparse.Namespace) -> Catalog:
    return load_catalog(Path(args.spec_dir) if args.spec_dir else None)


class BadInput(Exception):
    """Unreadable or malformed input: exit 2 with a one-line message."""


def writable_folder(path: Path, option: str) -> Path:
    """Create `path` if needed and make sure files can be written there (BadInput if not)."""
    import tempfile

    if path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise BadInput(f"{option} {path}: cannot write there ({error.strerror or error})") from None
    return path


def named_operators(catalog: Catalog, names: Sequence[str] | None, what: str) -> list[str]:
    """The operators `--ops` names (when none: every one with a kernel whose suite is not
    marked in progress). Named operators without a kernel are left out, said in one line on
    stderr; BadInput for an unknown name, or when none of those named has a kernel."""
    if not names:
        return [
            spec.name
            for spec in catalog.with_kernels
            if spec.kernel is None or spec.kernel.in_progress is None
        ]
    chosen: list[str] = []
    without: list[str] = []
    for name in names:
        try:
            spec = catalog.operator(name)
        except KeyError:
            raise BadInput(
                f"--ops: unknown operator {quote(name)}{_closest(catalog, name)} "
                f"(`dmlspec list` shows the {len(catalog.operators)} operators dmlspec knows)"
            ) from None
        (chosen if spec.kernel is not None else without).append(spec.name)
    if without:
        having = (
            f"{len(catalog.with_kernels)} of {len(catalog.operators)} operators have kernels; "
            "`dmlspec list` shows which"
        )
        left = ", ".join(without)
        if not chosen:
            raise BadInput(f"--ops: {left} has a spec and a validator but no {what} yet ({having})")
        print(f"dmlspec: left out {left}: no {what} yet ({having})", file=sys.stderr)
    return chosen


def _closest(catalog: Catalog, name: str) -> str:
    import difflib

    names = [spec.name for spec in catalog.operators]
    wanted = name.upper().removeprefix("DML_OPERATOR_")
    close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""
