"""An operator's support tables: one `SupportRow` per 'DML_FEATURE_LEVEL_X_Y and above' table,
one `TensorSupport` (dimension counts, data types) per tensor in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Expression
from .base import Json, put

__all__ = ["SupportRow", "TensorSupport"]


@dataclass(frozen=True)
class TensorSupport:
    tensor: str
    dimension_counts: tuple[int, ...]
    data_types: tuple[str, ...]

    def to_json(self) -> Json:
        return {
            "tensor": self.tensor,
            "dimension_counts": list(self.dimension_counts),
            "data_types": list(self.data_types),
        }


@dataclass(frozen=True)
class SupportRow:
    """One 'DML_FEATURE_LEVEL_X_Y and above' table."""

    feature_level: str
    sources: tuple[str, ...]
    tensors: tuple[TensorSupport, ...]
    note: str | None = None
    when: Expression | None = None  # the row applies only where this holds (REDUCE's functions)

    def tensor(self, name: str) -> TensorSupport:
        for support in self.tensors:
            if support.tensor == name:
                return support
        raise KeyError(f"no {name} in the {self.feature_level} support row")

    def to_json(self) -> Json:
        data: Json = {"feature_level": self.feature_level, "sources": list(self.sources)}
        put(data, "when", None if self.when is None else self.when.source)
        put(data, "note", self.note)
        data["tensors"] = [t.to_json() for t in self.tensors]
        return data
