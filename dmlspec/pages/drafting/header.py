"""Cross-check a struct's fields with DirectML's machine-readable schema (DirectMLSchema.h).

`spec/sources/directml_schema.json` holds facts read from that header: every operator desc's
fields in order with kind (input tensor, output tensor, attribute), schema type and
optionality. The header is what DirectML and DxDispatch parse, so where a page disagrees the
draft follows the header and records the page's erratum.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HeaderField", "compatible_kinds", "load_header_facts"]

# dmlspec field kinds each schema type may stand for (enums, data types and BOOLs are UINTs).
_KINDS_OF_TYPE: dict[str, frozenset[str]] = {
    "tensor_desc": frozenset({"input_tensor", "output_tensor"}),
    "tensor_desc_array": frozenset({"input_tensor_array", "output_tensor_array"}),
    "operator_desc": frozenset({"operator_desc"}),
    "operator_desc_array": frozenset({"operator_desc_array"}),
    "uint": frozenset({"uint", "enum", "data_type", "bool"}),
    "uint64": frozenset({"uint64"}),
    "int": frozenset({"int"}),
    "float": frozenset({"float"}),
    "uint_array": frozenset({"uint_array"}),
    "int_array": frozenset({"int_array"}),
    "float_array": frozenset({"float_array"}),
    "scale_bias": frozenset({"scale_bias"}),
    "size_2d": frozenset({"size_2d"}),
    "scalar_union": frozenset({"scalar_union"}),
    "bool": frozenset({"bool"}),
}


@dataclass(frozen=True)
class HeaderField:
    name: str
    kind: str  # "input_tensor", "output_tensor" or "attribute"
    type: str  # the schema type, lower case: "tensor_desc", "uint", "float_array", ...
    optional: bool

    @property
    def default_kind(self) -> str:
        """The dmlspec kind to use when the page gives none that fits."""
        if self.type == "tensor_desc":
            return self.kind
        if self.type == "tensor_desc_array":
            return f"{self.kind}_array"
        return self.type


def compatible_kinds(field: HeaderField) -> frozenset[str]:
    kinds = _KINDS_OF_TYPE.get(field.type, frozenset())
    if field.kind != "attribute":
        kinds = frozenset(k for k in kinds if k.startswith(field.kind))
    return kinds


def load_header_facts(path: Path) -> dict[str, tuple[HeaderField, ...]]:
    """DML_OPERATOR_X -> its fields; empty when the file is missing. Operators the file marks
    `not_followed` (with the reason) are left out."""
    if not path.is_file():
        return {}
    data: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    skipped = data.get("not_followed", {})
    return {
        name: tuple(
            HeaderField(f["name"], f["kind"], f["type"], bool(f["optional"]))
            for f in entry["fields"]
        )
        for name, entry in data["operators"].items()
        if name not in skipped
    }
