"""The header every generated file starts with."""

from __future__ import annotations

# Assembled at run time so this module itself is not mistaken for generated code.
MARKER = "@" + "generated"
REGENERATE = "dmlspec generate"

__all__ = ["MARKER", "REGENERATE", "python_header"]


def python_header(sources: list[str]) -> str:
    """`# @generated ...` lines naming the spec files a module is rendered from."""
    if len(sources) == 1 and len(f"# {MARKER} by dmlspec from {sources[0]}. DO NOT EDIT.") <= 100:
        named, listed = sources[0], ""
    elif len(sources) == 1:  # a long file name goes on a line of its own
        named, listed = "1 spec file", f"#   {sources[0]}\n"
    else:
        named = f"{len(sources)} spec files"
        listed = "".join(f"#   {source}\n" for source in sources)
    return (
        f"# {MARKER} by dmlspec from {named}. DO NOT EDIT.\n"
        f"{listed}"
        f"# Regenerate with: {REGENERATE}\n"
    )
