"""Constraints, of buffer tensors (common.json) and of operators: `Constraint`, and what a
violated `requires` constraint leaves undefined (`UndefinedEffect`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..expr import Expression
from .base import Json, put

__all__ = ["Constraint", "UndefinedEffect"]


@dataclass(frozen=True)
class UndefinedEffect:
    """What a violated `requires` constraint leaves undefined."""

    tensor: str
    cells: str  # "whole_tensor" or "addressed"
    values: str  # "any" or "one_of_colliding_updates"
    addressed: Expression | None = None  # mask of the undefined cells, for "addressed"

    def to_json(self) -> Json:
        data: Json = {"tensor": self.tensor, "cells": self.cells, "values": self.values}
        put(data, "addressed", None if self.addressed is None else self.addressed.source)
        return data


@dataclass(frozen=True)
class Constraint:
    id: str
    constraint_class: str  # "error" (invalid desc) or "requires" (precondition on data)
    doc: tuple[str, ...]
    expr: Expression
    message: str
    sources: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    note: str | None = None
    undefined: UndefinedEffect | None = None

    @property
    def number(self) -> tuple[str, int]:
        """Sort key: class letter, then number (C2 before C10)."""
        letter, digits = re.fullmatch(r".*\.([CR])(\d+)", self.id).groups()  # type: ignore[union-attr]
        return letter, int(digits)

    def to_json(self) -> Json:
        data: Json = {"id": self.id, "class": self.constraint_class, "doc": list(self.doc)}
        put(data, "sources", self.sources)
        data["expr"] = self.expr.source
        data["message"] = self.message
        put(data, "depends_on", self.depends_on)
        put(data, "note", self.note)
        put(data, "undefined", None if self.undefined is None else self.undefined.to_json())
        return data
