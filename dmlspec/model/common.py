"""The model of spec/common.json: `CommonSpec` with its lookups, and the facts it lists (doc
pages, feature levels, data types, enumerations, operator sets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from ..expr import EnumInfo
from .base import Json, put
from .constraints import Constraint
from .tensors import DimensionCountRange, LayoutRules, TensorLayout, TensorMember

__all__ = [
    "DATA_TYPE_ENUM",
    "FEATURE_LEVEL_ENUM",
    "CommonSpec",
    "DataType",
    "DocPage",
    "Enum",
    "EnumMember",
    "FeatureLevel",
    "OperatorSet",
]

DATA_TYPE_ENUM = "DML_TENSOR_DATA_TYPE"
FEATURE_LEVEL_ENUM = "DML_FEATURE_LEVEL"


@dataclass(frozen=True)
class DocPage:
    id: str
    path: str  # relative to the shared docs folder
    language: str
    translation: str  # "original", "machine-with-english" (sxs-lookup spans) or "machine"
    commit: str | None = None
    note: str | None = None

    def to_json(self) -> Json:
        data: Json = {
            "id": self.id,
            "path": self.path,
            "language": self.language,
            "translation": self.translation,
        }
        put(data, "commit", self.commit)
        put(data, "note", self.note)
        return data


@dataclass(frozen=True)
class FeatureLevel:
    name: str  # "3_0"
    rank: int  # position in the ordered list, 0 for 1_0
    dml_version: str | None
    sources: tuple[str, ...]

    @property
    def enum_name(self) -> str:
        return f"DML_FEATURE_LEVEL_{self.name}"

    def to_json(self) -> Json:
        return {"name": self.name, "dml_version": self.dml_version, "sources": list(self.sources)}


@dataclass(frozen=True)
class DataType:
    name: str  # "FLOAT32"
    kind: str  # "float", "signed", "unsigned" or "unknown"
    bits: int
    numpy: str | None
    since: str
    doc: str
    sources: tuple[str, ...]
    subnormals: Mapping[str, str] | None = None  # {"rule": "kept" | "may_flush", "note": ...}
    nans: Mapping[str, str] | None = None  # {"rule": "any_from_arithmetic" | "kept", "note": ...}

    @property
    def may_flush_subnormals(self) -> bool:
        return self.subnormals is not None and self.subnormals.get("rule") == "may_flush"

    @property
    def any_nan_from_arithmetic(self) -> bool:
        """A NaN that arithmetic produces may be any NaN (its bits are not compared)."""
        return self.nans is not None and self.nans.get("rule") == "any_from_arithmetic"

    def to_json(self) -> Json:
        data: Json = {
            "name": self.name,
            "kind": self.kind,
            "bits": self.bits,
            "numpy": self.numpy,
            "since": self.since,
            "doc": self.doc,
            "sources": list(self.sources),
        }
        put(data, "subnormals", None if self.subnormals is None else dict(self.subnormals))
        put(data, "nans", None if self.nans is None else dict(self.nans))
        return data


@dataclass(frozen=True)
class EnumMember:
    name: str
    doc: str
    value: int | None = None

    def to_json(self) -> Json:
        data: Json = {"name": self.name}
        put(data, "value", self.value)
        data["doc"] = self.doc
        return data


@dataclass(frozen=True)
class Enum:
    name: str
    prefix: str
    members: tuple[EnumMember, ...]
    sources: tuple[str, ...]

    def info(self) -> EnumInfo:
        return EnumInfo(self.name, self.prefix, tuple(m.name for m in self.members))

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "prefix": self.prefix,
            "members": [m.to_json() for m in self.members],
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class OperatorSet:
    """A named set of operators an operator-desc field may hold (fused activations, ...)."""

    name: str
    operators: tuple[str, ...]  # short names, e.g. "ACTIVATION_RELU"
    doc: str
    sources: tuple[str, ...]
    note: str | None = None
    since: tuple[tuple[str, str], ...] = ()  # (member, level) for members that joined later

    def to_json(self) -> Json:
        data: Json = {"name": self.name, "operators": list(self.operators), "doc": self.doc}
        data["sources"] = list(self.sources)
        if self.since:
            data["since"] = dict(self.since)
        put(data, "note", self.note)
        return data


@dataclass(frozen=True)
class CommonSpec:
    """DirectML facts every operator shares (spec/common.json)."""

    path: str
    schema: str
    doc_pages: tuple[DocPage, ...]
    feature_levels: tuple[FeatureLevel, ...]
    data_types: tuple[DataType, ...]
    enums: tuple[Enum, ...]
    tensor_members: tuple[TensorMember, ...]
    dimension_count: tuple[DimensionCountRange, ...]
    tensor_constraints: tuple[Constraint, ...]
    operator_sets: tuple[OperatorSet, ...] = ()
    tensor_layouts: tuple[TensorLayout, ...] = ()
    layout_rules: LayoutRules | None = None

    # -- lookups ---------------------------------------------------------------------------
    def feature_level(self, name: str) -> FeatureLevel:
        """The level named `name`, written "3_0" or "DML_FEATURE_LEVEL_3_0"; KeyError if none."""
        short = name.removeprefix("DML_FEATURE_LEVEL_")
        for level in self.feature_levels:
            if level.name == short:
                return level
        known = ", ".join(level.name for level in self.feature_levels)
        raise KeyError(f"unknown feature level {name!r}; known levels: {known}")

    @property
    def highest_feature_level(self) -> FeatureLevel:
        return self.feature_levels[-1]

    def data_type(self, name: str) -> DataType:
        short = name.removeprefix("DML_TENSOR_DATA_TYPE_")
        for data_type in self.data_types:
            if data_type.name == short:
                return data_type
        known = ", ".join(d.name for d in self.data_types)
        raise KeyError(f"unknown data type {name!r}; known data types: {known}")

    def dimension_count_at(self, level: str) -> DimensionCountRange:
        rank = self.feature_level(level).rank
        in_force = [r for r in self.dimension_count if self.feature_level(r.since).rank <= rank]
        return in_force[-1]

    def enum_infos(self) -> dict[str, EnumInfo]:
        """Every enumeration expressions may name, including data types and feature levels
        (a dict of its own per call; the infos are built once: binding a desc reads them for
        every tensor member)."""
        return dict(self._enum_infos)

    @cached_property
    def _enum_infos(self) -> dict[str, EnumInfo]:
        infos = {e.name: e.info() for e in self.enums}
        infos[DATA_TYPE_ENUM] = EnumInfo(
            DATA_TYPE_ENUM, "DML_TENSOR_DATA_TYPE_", tuple(d.name for d in self.data_types)
        )
        infos[FEATURE_LEVEL_ENUM] = EnumInfo(
            FEATURE_LEVEL_ENUM, "DML_FEATURE_LEVEL_", tuple(f.name for f in self.feature_levels)
        )
        return infos

    # -- expr.Facts ------------------------------------------------------------------------
    def element_bits(self, data_type: str) -> int:
        return self.data_type(data_type).bits

    def level_rank(self, level: str) -> int:
        return self.feature_level(level).rank

    def numpy_dtype(self, data_type: str) -> str | None:
        return self.data_type(data_type).numpy

    def to_json(self) -> Json:
        return {
            "$schema": self.schema,
            "doc_pages": [p.to_json() for p in self.doc_pages],
            "feature_levels": [f.to_json() for f in self.feature_levels],
            "data_types": [d.to_json() for d in self.data_types],
            "enums": [e.to_json() for e in self.enums],
            "tensor": {
                "members": [m.to_json() for m in self.tensor_members],
                "dimension_count": [r.to_json() for r in self.dimension_count],
                "constraints": [c.to_json() for c in self.tensor_constraints],
                **(
                    {"layouts": [t.to_json() for t in self.tensor_layouts]}
                    if self.tensor_layouts
                    else {}
                ),
                **({"layout_rules": self.layout_rules.to_json()} if self.layout_rules else {}),
            },
            "operator_sets": [o.to_json() for o in self.operator_sets],
        }
