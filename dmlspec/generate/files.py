"""Write rendered files into the output folder: atomically, only when changed, never outside
it; remove files no longer rendered; or, in check mode, only report what would change."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Change", "FileManager"]

# Tools' caches, written where they run: Hypothesis writes its example database (.hypothesis)
# into the folder pytest was started in, generated/tests/ when a user runs the suites there.
_IGNORED_PARTS = ("__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache")


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
        if not self.root.is_dir():
            return
        for path in sorted(self.root.rglob("*")):
            relative = path.relative_to(self.root)
            hidden = relative.name.startswith(".")
            ignored = any(p in _IGNORED_PARTS for p in relative.parts)
            if path.is_file() and not hidden and not ignored:
                yield relative.as_posix()

    def changes(self) -> list[Change]:
        found = []
        for path in sorted(self.files):
            target = self.root / path
            new = self.files[path]
            if not target.exists():
                found.append(Change(path, "missing", _diff("", new, path)))
                continue
            old = target.read_text(encoding="utf-8")
            if old != new:
                found.append(Change(path, "changed", _diff(old, new, path)))
        for path in self.existing():
            if path not in self.files:
                old = (self.root / path).read_text(encoding="utf-8", errors="replace")
                found.append(Change(path, "orphan", _diff(old, "", path)))
        return found

    def write(self) -> list[Change]:
        """Bring the folder up to date; return what changed."""
        changes = self.changes()
        for change in changes:
            target = self.root / change.path
            if change.kind == "orphan":
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(self.files[change.path])
            os.replace(temporary, target)
        for folder in sorted(self.root.rglob("*"), reverse=True):
            if folder.is_dir() and folder.name not in _IGNORED_PARTS and not any(folder.iterdir()):
                folder.rmdir()
        return changes


def _diff(old: str, new: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/generated/{path}",
            tofile=f"b/generated/{path}",
        )
    )
