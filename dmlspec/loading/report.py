"""Where load problems are collected: one `Report` per file, located by JSON pointer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import Problem
from ..jsonio import pointer

__all__ = ["Report", "known"]


class Report:
    """Problems found in one file, appended to a shared list."""

    def __init__(self, file: str, sink: list[Problem]) -> None:
        self.file = file
        self.sink = sink
        self.count = 0

    def at(self, where: Sequence[str | int] | str, message: str) -> None:
        where_text = where if isinstance(where, str) else pointer(list(where))
        self.sink.append(Problem(self.file, where_text, message))
        self.count += 1


def known(names: Iterable[str]) -> str:
    return ", ".join(names)
