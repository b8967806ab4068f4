"""Exceptions users of dmlspec see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["InvalidOperator", "Problem", "SpecError", "Unsupported"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one spec file, located by a JSON pointer."""

    file: str
    pointer: str  # "" for the whole file
    message: str

    def __str__(self) -> str:
        where = f"{self.file} at {self.pointer}" if self.pointer else self.file
        return f"{where}: {self.message}"


class SpecError(Exception):
    """The specs could not be loaded; `problems` lists every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        header = f"{count} problem{'s' if count != 1 else ''} in the specs:"
        super().__init__("\n".join([header, *(f"  {p}" for p in self.problems)]))


class Unsupported(Exception):
    """A backend does not implement this case (reported as skipped, never as passed)."""


class InvalidOperator(ValueError):
    """An operator desc was rejected; `constraint_ids` names the rules it breaks."""

    def __init__(self, message: str, constraint_ids: Sequence[str] = ()) -> None:
        self.constraint_ids = tuple(constraint_ids)
        super().__init__(message)
