"""Facts the drafter reads from pages other than the operator's own.

- the manifest (`_manifest.tsv`): the commit each page was taken from;
- the feature-level history: the level each operator type was added in;
- the enum pages (`ne-directml-*.md`): the members of every enumeration a field uses.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...safeio import UnsafePath, read_text
from ..read import DocPageError

__all__ = ["enum_from_page", "history_levels", "manifest_commits", "page_text"]

_LEVEL_HEADING = re.compile(r"^## DML_FEATURE_LEVEL_(\d+_\d+)\s*$")
_OPERATOR_BULLET = re.compile(r"^\s*\*\s+(?:Added\s+)?\*\*(DML_OPERATOR_[A-Z0-9_]+)\*\*\.?\s*$")


def page_text(path: Path) -> str:
    """A page's text, read as every input is (a regular UTF-8 file within the size limit);
    DocPageError naming the page otherwise."""
    try:
        return read_text(path)
    except UnsafePath as error:  # "PATH is a FIFO; ...": the path leads the message already
        raise DocPageError(str(path), 1, str(error).removeprefix(f"{path} ")) from None
    except OSError as error:
        raise DocPageError(str(path), 1, f"cannot read it: {error.strerror or error}") from None


def manifest_commits(docs_folder: Path) -> dict[str, str]:
    commits: dict[str, str] = {}
    manifest = docs_folder / "_manifest.tsv"
    if not manifest.is_file():
        return commits
    for line in page_text(manifest).splitlines()[1:]:
        cells = line.split("\t")
        if len(cells) >= 4:
            commits[cells[0]] = cells[3]
    return commits


def history_levels(history_page: Path) -> dict[str, str]:
    """DML_OPERATOR_X -> the level whose "Added ... operator types" list names it first."""
    levels: dict[str, str] = {}
    if not history_page.is_file():
        return levels
    level, listing = None, False
    for line in page_text(history_page).splitlines():
        heading = _LEVEL_HEADING.match(line)
        if heading:
            level, listing = heading[1], False
            continue
        if re.match(r"^Added (support for )?the following operator types", line):
            listing = True
            continue
        bullet = _OPERATOR_BULLET.match(line)
        if level and bullet and (listing or line.lstrip().startswith("* Added")):
            # The page lists levels newest first: the last level seen is the oldest.
            levels[bullet[1]] = level
        elif line.strip() and not line.lstrip().startswith("*"):
            listing = False
    return levels


def enum_from_page(page: Path, page_id: str) -> dict[str, Any]:
    """An `enums` entry of spec/common.json from a ``ne-directml-dml_*.md`` page."""
    text = page_text(page)
    name_match = re.search(r"^title:\s*(\w+)", text, re.MULTILINE)
    if name_match is None:
        raise ValueError(f"{page}: no enumeration name in the title")
    name = name_match[1]
    members = []
    for match in re.finditer(
        r"^### -field (\w+)(?::(\d+))?\s*\n(?P<doc>.*?)(?=^### |^## |\Z)",
        text,
        re.MULTILINE | re.DOTALL,
    ):
        short = match[1].removeprefix(name + "_")
        doc = " ".join(match["doc"].split()) or "(the page gives no description)"
        member: dict[str, Any] = {"name": short}
        if match[2] is not None:
            member["value"] = int(match[2])
        member["doc"] = doc
        members.append(member)
    return {"name": name, "prefix": name + "_", "sources": [page_id], "members": members}
