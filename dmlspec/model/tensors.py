"""What spec/common.json says of buffer tensor descs: their members, dimension counts, the
memory layouts suites draw, and the layout rules for strided buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Expression
from ..expr.types import Type
from .base import Json, put

__all__ = ["DimensionCountRange", "LayoutRules", "LayoutUndefined", "TensorLayout", "TensorMember"]


@dataclass(frozen=True)
class TensorMember:
    name: str
    type: Type
    type_text: str
    optional: bool
    default: Expression | None
    doc: str
    sources: tuple[str, ...]

    def to_json(self) -> Json:
        data: Json = {"name": self.name, "type": self.type_text, "optional": self.optional}
        put(data, "default", None if self.default is None else self.default.source)
        data["doc"] = self.doc
        data["sources"] = list(self.sources)
        return data


@dataclass(frozen=True)
class DimensionCountRange:
    since: str
    min: int
    max: int
    sources: tuple[str, ...]

    def to_json(self) -> Json:
        return {
            "since": self.since,
            "min": self.min,
            "max": self.max,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class TensorLayout:
    """A memory layout the suites draw for tensors of these kinds (INPUT, OUTPUT)."""

    name: str  # packed, padded, permuted, broadcast, oversized
    tensor_kinds: tuple[str, ...]
    doc: str
    sources: tuple[str, ...]

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "tensor_kinds": list(self.tensor_kinds),
            "doc": self.doc,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class LayoutUndefined:
    """Something the pages leave undefined about strided buffers, and what dmlspec does."""

    id: str
    doc: tuple[str, ...]
    sources: tuple[str, ...]
    what: str
    dmlspec: str

    def to_json(self) -> Json:
        return {
            "id": self.id,
            "doc": list(self.doc),
            "sources": list(self.sources),
            "what": self.what,
            "dmlspec": self.dmlspec,
        }


@dataclass(frozen=True)
class LayoutRules:
    sentinel_byte: int  # what suites fill buffer bytes outside a strided view with
    undefined: tuple[LayoutUndefined, ...]

    def to_json(self) -> Json:
        return {
            "sentinel_byte": self.sentinel_byte,
            "undefined": [u.to_json() for u in self.undefined],
        }
