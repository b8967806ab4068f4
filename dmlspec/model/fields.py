"""An operator desc's fields: `Field` and the kinds of field, a numeric field's documented
`FieldRange`, and the named `Definition`s its expressions share.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Expression
from .base import Json, put

__all__ = [
    "ARRAY_KINDS",
    "OPERATOR_DESC_KINDS",
    "TENSOR_ARRAY_KINDS",
    "TENSOR_KINDS",
    "Definition",
    "Field",
    "FieldRange",
]

TENSOR_KINDS = ("input_tensor", "output_tensor")
TENSOR_ARRAY_KINDS = ("input_tensor_array", "output_tensor_array")
# Field kinds whose JSON value is a list sized by a count field (`_Field_size_(Count)`).
ARRAY_KINDS = (*TENSOR_ARRAY_KINDS, "uint_array", "int_array", "float_array", "operator_desc_array")
OPERATOR_DESC_KINDS = ("operator_desc", "operator_desc_array")


@dataclass(frozen=True)
class FieldRange:
    """A numeric field's documented range; the loader also turns it into an error constraint."""

    id: str
    min: Expression
    max: Expression
    max_exclusive: bool
    doc: tuple[str, ...]
    depends_on: tuple[str, ...] = ()
    note: str | None = None

    def to_json(self) -> Json:
        data: Json = {
            "id": self.id,
            "min": self.min.source,
            "max": self.max.source,
            "max_exclusive": self.max_exclusive,
            "doc": list(self.doc),
        }
        put(data, "depends_on", self.depends_on)
        put(data, "note", self.note)
        return data


@dataclass(frozen=True)
class Field:
    """One member of the desc struct.

    `kind` is one of input_tensor, output_tensor, input_tensor_array, output_tensor_array,
    uint, uint64, int, float, bool, enum, data_type, scalar_union, uint_array, int_array,
    float_array, scale_bias, size_2d, operator_desc, operator_desc_array.
    """

    name: str
    kind: str
    c_type: str
    optional: bool
    doc: str
    enum: str | None = None
    value_type_field: str | None = None
    count_field: str | None = None  # array kinds: the UINT field holding the element count
    operator_set: str | None = None  # operator_desc kinds: names a common `operator_sets` entry
    range: FieldRange | None = None
    drawn_as: str | None = None  # input tensor kinds: how conformance cases draw its data
    typical: tuple[int, ...] = ()  # integer kinds: the values drawn descs take most often

    @property
    def is_tensor(self) -> bool:
        """A single tensor desc (arrays of tensors are `is_tensor_array`)."""
        return self.kind in TENSOR_KINDS

    @property
    def is_tensor_array(self) -> bool:
        return self.kind in TENSOR_ARRAY_KINDS

    @property
    def is_output(self) -> bool:
        return self.kind in ("output_tensor", "output_tensor_array")

    @property
    def is_array(self) -> bool:
        return self.kind in ARRAY_KINDS

    def to_json(self) -> Json:
        data: Json = {
            "name": self.name,
            "kind": self.kind,
            "c_type": self.c_type,
            "optional": self.optional,
        }
        put(data, "enum", self.enum)
        put(data, "value_type_field", self.value_type_field)
        put(data, "count_field", self.count_field)
        put(data, "operator_set", self.operator_set)
        put(data, "drawn_as", self.drawn_as)
        if self.typical:
            data["typical"] = list(self.typical)
        data["doc"] = self.doc
        put(data, "range", None if self.range is None else self.range.to_json())
        return data


@dataclass(frozen=True)
class Definition:
    name: str
    expr: Expression
    doc: str

    def to_json(self) -> Json:
        return {"name": self.name, "expr": self.expr.source, "doc": self.doc}
