"""Write rendered files into the output folder: atomically, only when changed, never outside
it; remove files no longer rendered; or, in check mode, only report what would change."""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..limits import quote
from ..safeio import UnsafePath, read_bytes, write_file
from .header import MARKER

__all__ = ["Change", "FileManager"]

# Tools' caches, written where they run: Hypothesis writes its example database (.hypothesis)
# into the folder pytest was started in, generated/tests/ when a user runs the suites there.
_IGNORED_PARTS = ("__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache")
# Far over any generated module (the largest is some 100 kB); a larger file is not ours.
_MAX_GENERATED_BYTES = 16 << 20


@dataclass(frozen=True)
class Change:
    path: str  # relative to the output folder, '/'-separated
    kind: str  # "missing", "changed" or "orphan"
    diff: str


class FileManager:
    """Collects rendered files, then writes them or compares them with the folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, str] = {}

    def add(self, path: str, content: str) -> None:
        relative = PurePosixPath(path)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"refusing to write {path!r} outside {self.root}")
        if path in self.files:
            raise ValueError(f"{path} rendered twice")
        if not content.endswith("\n") or "\r" in content:
            raise ValueError(f"{path}: rendered text must use '\\n' line endings and end with one")
        self.files[path] = content

    def existing(self) -> Iterator[str]:
        """Every file in the folder but tools' caches and hidden files; links are listed, never
        followed into."""
        if not self.root.is_dir():
            return
        found = []
        for folder, subfolders, names in os.walk(self.root):
            subfolders[:] = [d for d in subfolders if d not in _IGNORED_PARTS]
            relative = Path(folder).relative_to(self.root)
            for name in names:
                if not name.startswith(".") and name not in _IGNORED_PARTS:
                    found.append((relative / name).as_posix())
        yield from sorted(found)

    def changes(self) -> list[Change]:
        found = []
        for path in sorted(self.files):
            new = self.files[path]
            old = self._current(path)
            if old is None:
                found.append(Change(path, "missing", _diff("", new, path)))
            elif old != new:
                found.append(Change(path, "changed", _diff(old, new, path)))
        for path in self.existing():
            if path not in self.files:
                found.append(Change(path, "orphan", _diff(self._current(path) or "", "", path)))
        return found

    def _current(self, path: str) -> str | None:
        """The text at `path`, None where nothing is; "" for what is not a regular file (a
        link, a FIFO: never read through, and replaced)."""
        target = self.root / path
        if not os.path.lexists(target):
            return None
        if target.is_symlink():
            return ""
        try:
            return read_bytes(target, _MAX_GENERATED_BYTES).decode("utf-8", "replace")
        except (OSError, UnsafePath):
            return ""

    def write(self, remove_any: bool = False) -> list[Change]:
        """Bring the folder up to date; return what changed.

        Removes only orphans that carry the generated header, unless `remove_any` (the
        project's own generated/); UnsafePath, before anything is written, for a folder that
        holds any other file."""
        changes = self.changes()
        if not remove_any:
            foreign = [c.path for c in changes if c.kind == "orphan" and not self._ours(c.path)]
            if foreign:
                raise UnsafePath(
                    f"{self.root} holds files dmlspec did not generate, such as "
                    f"{quote(foreign[0])} (no {MARKER} header); generate writes into an empty "
                    "folder or one it wrote, and removes nothing else"
                )
        self.root.mkdir(parents=True, exist_ok=True)
        for change in changes:
            if change.kind == "orphan":
                (self.root / change.path).unlink()
                continue
            write_file(self.root, change.path, self.files[change.path].encode("utf-8"))
        for folder, _, _ in sorted(os.walk(self.root), reverse=True):
            emptied = Path(folder)
            if emptied != self.root and emptied.name not in _IGNORED_PARTS:
                with contextlib.suppress(OSError):  # not empty
                    emptied.rmdir()
        return changes

    def _ours(self, path: str) -> bool:
        """Whether the file at `path` starts with the generated header (a link never does)."""
        target = self.root / path
        if target.is_symlink():
            return False
        try:
            first = read_bytes(target, _MAX_GENERATED_BYTES)[:200].decode("utf-8", "replace")
        except (OSError, UnsafePath):
            return False
        return first.startswith(f"# {MARKER} by dmlspec")


def _diff(old: str, new: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/generated/{path}",
            tofile=f"b/generated/{path}",
        )
    )
