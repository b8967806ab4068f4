"""The typed model of the specs: frozen dataclasses, built only by `loader`.

Each class mirrors one object of the spec files. `to_json()` gives back the object as the
file writes it (the loader's cross-checks guarantee that a model rebuilt from it is equal),
so nothing downstream needs the raw dicts. Expressions are kept as `Expression` (source
text + checked tree); they compare by source text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..expr import EnumInfo, Environment, Expression
from ..expr.types import Type

__all__ = [
    "Alias",
    "Catalog",
    "CommonSpec",
    "ComparisonRule",
    "Constraint",
    "DataType",
    "Definition",
    "DimensionCountRange",
    "DocPage",
    "Enum",
    "EnumMember",
    "Erratum",
    "Example",
    "ExampleTensor",
    "FeatureLevel",
    "Field",
    "FieldRange",
    "Kernel",
    "LayoutRules",
    "LayoutUndefined",
    "NegativeIndices",
    "OperatorSet",
    "OperatorSpec",
    "Semantics",
    "SupportRow",
    "TensorLayout",
    "TensorMember",
    "TensorSupport",
    "UndefinedEffect",
    "Unencoded",
    "example_field_value",
]

Json = dict[str, Any]
DATA_TYPE_ENUM = "DML_TENSOR_DATA_TYPE"
FEATURE_LEVEL_ENUM = "DML_FEATURE_LEVEL"
TENSOR_KINDS = ("input_tensor", "output_tensor")
TENSOR_ARRAY_KINDS = ("input_tensor_array", "output_tensor_array")
# Field kinds whose JSON value is a list sized by a count field (`_Field_size_(Count)`).
ARRAY_KINDS = (*TENSOR_ARRAY_KINDS, "uint_array", "int_array", "float_array", "operator_desc_array")
OPERATOR_DESC_KINDS = ("operator_desc", "operator_desc_array")
SPEC_STATUSES = ("drafted", "curated")


def _put(target: Json, key: str, value: Any) -> None:
    """Write an optional key only when it has a value (the files omit empty optional keys)."""
    if value is not None and value != ():
        target[key] = list(value) if isinstance(value, tuple) else value


def _frozen(value: Any) -> Any:
    """Nested lists as nested tuples, so example values are hashable like the rest."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _thawed(value: Any) -> Any:
    return [_thawed(v) for v in value] if isinstance(value, tuple) else value


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
        _put(data, "commit", self.commit)
        _put(data, "note", self.note)
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
        _put(data, "subnormals", None if self.subnormals is None else dict(self.subnormals))
        _put(data, "nans", None if self.nans is None else dict(self.nans))
        return data


@dataclass(frozen=True)
class EnumMember:
    name: str
    doc: str
    value: int | None = None

    def to_json(self) -> Json:
        data: Json = {"name": self.name}
        _put(data, "value", self.value)
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
        _put(data, "default", None if self.default is None else self.default.source)
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


@dataclass(frozen=True)
class UndefinedEffect:
    """What a violated `requires` constraint leaves undefined."""

    tensor: str
    cells: str  # "whole_tensor" or "addressed"
    values: str  # "any" or "one_of_colliding_updates"
    addressed: Expression | None = None  # mask of the undefined cells, for "addressed"

    def to_json(self) -> Json:
        data: Json = {"tensor": self.tensor, "cells": self.cells, "values": self.values}
        _put(data, "addressed", None if self.addressed is None else self.addressed.source)
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
        _put(data, "sources", self.sources)
        data["expr"] = self.expr.source
        data["message"] = self.message
        _put(data, "depends_on", self.depends_on)
        _put(data, "note", self.note)
        _put(data, "undefined", None if self.undefined is None else self.undefined.to_json())
        return data


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
        _put(data, "note", self.note)
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
        _put(data, "depends_on", self.depends_on)
        _put(data, "note", self.note)
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
        _put(data, "enum", self.enum)
        _put(data, "value_type_field", self.value_type_field)
        _put(data, "count_field", self.count_field)
        _put(data, "operator_set", self.operator_set)
        data["doc"] = self.doc
        _put(data, "range", None if self.range is None else self.range.to_json())
        return data


@dataclass(frozen=True)
class Definition:
    name: str
    expr: Expression
    doc: str

    def to_json(self) -> Json:
        return {"name": self.name, "expr": self.expr.source, "doc": self.doc}


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
        _put(data, "when", None if self.when is None else self.when.source)
        _put(data, "note", self.note)
        data["tensors"] = [t.to_json() for t in self.tensors]
        return data


@dataclass(frozen=True)
class NegativeIndices:
    tensor: str
    since: str
    doc: str

    def to_json(self) -> Json:
        return {"tensor": self.tensor, "since": self.since, "doc": self.doc}


@dataclass(frozen=True)
class ComparisonRule:
    tensor: str
    data_type_kinds: tuple[str, ...]
    rule: str  # "exact" or "ulp"
    max_ulps: int | None = None
    reference: Expression | None = None  # expected value of element k, exactly
    ulp_scale: Expression | None = None  # None: the ULP of each expected element itself
    note: str | None = None
    data_types: tuple[str, ...] = ()  # only these data types of the kinds (empty: all)
    # also accept |actual - expected| <= this: a number, or an expression of the desc
    abs_tolerance: float | Expression | None = None
    source: str | None = None  # where the bound comes from
    when: Expression | None = None  # applies only to descs where this holds
    terms: Expression | None = None  # terms accumulated into each element (an upper bound)
    magnitude: str | None = None  # "output", "absolute_inputs", "log_of_sum" or "one"
    # the floating type whose ULP is the unit (the type computed in); None: the output's type
    ulps_of: str | None = None

    def applies_to(self, tensor: str, kind: str, data_type: str) -> bool:
        return (
            self.tensor == tensor
            and kind in self.data_type_kinds
            and (not self.data_types or data_type in self.data_types)
        )

    def holds_for(self, env: Environment | None) -> bool:
        """Whether the rule applies to the desc `env` binds (always, for a rule without `when`)."""
        if self.when is None:
            return True
        if env is None:
            raise ValueError(
                f"the comparison rule for {self.tensor} when {self.when.source!r} needs the "
                "desc's environment (binding.bind_desc) to decide whether it applies"
            )
        return bool(self.when.evaluate(env))

    def absolute_tolerance(self, env: Environment) -> float | None:
        """The absolute distance also accepted for the desc `env` binds (None: none)."""
        if isinstance(self.abs_tolerance, Expression):
            return float(self.abs_tolerance.evaluate(env))  # type: ignore[arg-type]
        return self.abs_tolerance

    def to_json(self) -> Json:
        data: Json = {
            "tensor": self.tensor,
            "data_type_kinds": list(self.data_type_kinds),
            "rule": self.rule,
        }
        _put(data, "when", None if self.when is None else self.when.source)
        _put(data, "data_types", self.data_types)
        _put(data, "max_ulps", self.max_ulps)
        tolerance = self.abs_tolerance
        _put(
            data,
            "abs_tolerance",
            tolerance.source if isinstance(tolerance, Expression) else tolerance,
        )
        _put(data, "reference", None if self.reference is None else self.reference.source)
        _put(data, "ulp_scale", None if self.ulp_scale is None else self.ulp_scale.source)
        _put(data, "terms", None if self.terms is None else self.terms.source)
        _put(data, "magnitude", self.magnitude)
        _put(data, "ulps_of", self.ulps_of)
        _put(data, "source", self.source)
        _put(data, "note", self.note)
        return data


@dataclass(frozen=True)
class Semantics:
    pseudocode: str
    comparison: tuple[ComparisonRule, ...]
    notes: tuple[str, ...] = ()
    negative_indices: NegativeIndices | None = None
    arithmetic: bool = False  # computes on values: a data type's subnormal rule applies

    def comparison_for(
        self, tensor: str, kind: str, data_type: str = "", env: Environment | None = None
    ) -> ComparisonRule:
        """The first rule for this tensor, data-type kind and (when rules name them) type
        whose `when` holds for the desc `env` binds (`binding.bind_desc`).

        Raises ValueError when a rule with `when` is reached and no `env` is given.
        """
        for rule in self.comparison:
            matches = rule.applies_to(tensor, kind, data_type) or (
                not data_type and rule.tensor == tensor and kind in rule.data_type_kinds
            )
            if matches and rule.holds_for(env):
                return rule
        raise KeyError(f"no comparison rule for {tensor} of kind {kind}")

    def to_json(self) -> Json:
        data: Json = {"pseudocode": self.pseudocode}
        _put(data, "notes", self.notes)
        _put(
            data,
            "negative_indices",
            None if self.negative_indices is None else self.negative_indices.to_json(),
        )
        data["comparison"] = [c.to_json() for c in self.comparison]
        if self.arithmetic:
            data["arithmetic"] = True
        return data


@dataclass(frozen=True)
class Kernel:
    """How the generated JAX kernel calls its primitive (dmlspec.kernels.primitives)."""

    primitive: str
    inputs: tuple[tuple[str, str], ...]  # primitive parameter, input tensor field
    static: tuple[tuple[str, Expression], ...]  # primitive parameter, value
    defaults: tuple[tuple[str, Expression], ...]  # field, value when a caller omits it
    outputs: tuple[str, ...]  # the output fields the primitive returns, in its order
    donate: str | None = None
    function: str | None = None  # a family primitive's table entry, passed as `function`
    in_progress: str | None = None  # why a default conformance run leaves it out

    @property
    def output(self) -> str:
        """The first (for most operators the only) output field: what `out=` writes."""
        return self.outputs[0]

    def to_json(self) -> Json:
        data: Json = {"primitive": self.primitive}
        _put(data, "function", self.function)
        data |= {
            "inputs": dict(self.inputs),
            "static": {name: e.source for name, e in self.static},
            "defaults": {name: e.source for name, e in self.defaults},
            "output": self.output if len(self.outputs) == 1 else list(self.outputs),
        }
        _put(data, "donate", self.donate)
        _put(data, "in_progress", self.in_progress)
        return data


@dataclass(frozen=True)
class ExampleTensor:
    sizes: tuple[int, ...]
    data_type: str | None = None  # missing only in sizes-only examples as written
    values: Any = None  # nested tuples, row-major, as printed; None when not given

    def to_json(self) -> Json:
        data: Json = {}
        _put(data, "DataType", self.data_type)
        data["Sizes"] = list(self.sizes)
        if self.values is not None:
            data["Values"] = _thawed(self.values)
        return data


ExampleValue = ExampleTensor | tuple[ExampleTensor, ...] | int | float | str


_NAMED_LIMITS = {"INT32_MIN": -(2**31), "INT32_MAX": 2**31 - 1, "UINT32_MAX": 2**32 - 1}
_BRACED = re.compile(r"^\{\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*\}$")


def example_field_value(field: Field, value: ExampleValue) -> Any:
    """A scalar of an example as operator JSON takes it: pages print arrays as `{0, 1}` and
    BOOLs as `TRUE`/`FALSE`; every other value is kept as written."""
    if isinstance(value, str) and field.is_array:
        braced = _BRACED.match(value.strip())
        if braced is not None:
            return [int(x) for x in (braced.group(1) or "").split(",") if x.strip()]
    if isinstance(value, str) and field.kind == "bool" and value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    if isinstance(value, str) and field.kind in ("int", "uint") and value in _NAMED_LIMITS:
        return _NAMED_LIMITS[value]
    return value


def _example_json(value: ExampleValue) -> Any:
    if isinstance(value, ExampleTensor):
        return value.to_json()
    if isinstance(value, tuple):  # a tensor array
        return [item.to_json() for item in value]
    return value


@dataclass(frozen=True)
class ExampleFields:
    """Operator fields of an example, in the order the page gives them."""

    items: tuple[tuple[str, ExampleValue], ...]

    def __iter__(self) -> Iterator[tuple[str, ExampleValue]]:
        return iter(self.items)

    def as_dict(self) -> dict[str, ExampleValue]:
        return dict(self.items)

    def to_json(self) -> Json:
        return {name: _example_json(value) for name, value in self.items}


@dataclass(frozen=True)
class Erratum:
    note: str
    expect: tuple[str, ...]  # findings the as-written form must produce

    def to_json(self) -> Json:
        return {"note": self.note, "expect": list(self.expect)}


@dataclass(frozen=True)
class Example:
    id: str
    title: str | None
    sources: tuple[str, ...]
    as_written: ExampleFields
    errata: tuple[Erratum, ...] = ()
    corrected: ExampleFields | None = None
    notes: tuple[str, ...] = ()

    @property
    def valid_form(self) -> ExampleFields:
        """The form to run: the corrected one where the page's own is wrong or incomplete."""
        return self.corrected if self.corrected is not None else self.as_written

    def to_json(self) -> Json:
        data: Json = {
            "id": self.id,
            "title": self.title,
            "sources": list(self.sources),
            "as_written": self.as_written.to_json(),
        }
        _put(data, "errata", tuple(e.to_json() for e in self.errata))
        _put(data, "corrected", None if self.corrected is None else self.corrected.to_json())
        _put(data, "notes", self.notes)
        return data


@dataclass(frozen=True)
class Unencoded:
    """A normative sentence of a page that no constraint or support row encodes yet."""

    doc: str
    reason: str
    field: str | None = None  # the field whose description holds it; None for page-level text
    # True for a sentence that reads like a rule but constrains no desc (advice, run-time
    # behaviour); it is listed, and left out of the share of sentences encoded.
    informative: bool = False

    def to_json(self) -> Json:
        data: Json = {"doc": self.doc}
        _put(data, "field", self.field)
        if self.informative:
            data["informative"] = True
        data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class Alias:
    operator_type: str
    struct: str
    note: str

    def to_json(self) -> Json:
        return {"operator_type": self.operator_type, "struct": self.struct, "note": self.note}


@dataclass(frozen=True)
class OperatorSpec:
    path: str
    schema: str
    name: str  # "SCATTER_ND"
    operator_type: str  # "DML_OPERATOR_SCATTER_ND"
    aliases: tuple[Alias, ...]
    struct: str
    summary: str
    introduced: str
    doc_pages: tuple[DocPage, ...]
    fields: tuple[Field, ...]
    definitions: tuple[Definition, ...]
    explicit_constraints: tuple[Constraint, ...]
    range_constraints: tuple[Constraint, ...]  # derived from the fields' ranges
    support: tuple[SupportRow, ...]
    semantics: Semantics | None
    kernel: Kernel | None
    examples: tuple[Example, ...]
    notes: tuple[str, ...] = ()
    status: str = "curated"  # "drafted": as `dmlspec draft` wrote it; "curated": edited by hand
    unencoded: tuple[Unencoded, ...] = ()

    @property
    def checked_kernel(self) -> Kernel:
        """The kernel, for code that runs operators; LookupError for one without a kernel."""
        if self.kernel is None:
            raise LookupError(f"{self.name} has no kernel yet (its spec has no 'kernel')")
        return self.kernel

    @property
    def checked_examples(self) -> tuple[Example, ...]:
        """The examples whose runnable form prints the kernel's output values: those a suite
        checks a backend against (LookupError for an operator without a kernel)."""
        output = self.checked_kernel.output
        return tuple(
            e
            for e in self.examples
            if isinstance(tensor := e.valid_form.as_dict().get(output), ExampleTensor)
            and tensor.values is not None
        )

    @property
    def checked_semantics(self) -> Semantics:
        """The semantics (comparison rules), for code that runs operators."""
        if self.semantics is None:
            raise LookupError(f"{self.name} has no semantics yet (its spec has no 'semantics')")
        return self.semantics

    @property
    def encoded_sentences(self) -> frozenset[str]:
        """The distinct doc sentences that constraints and field ranges encode."""
        return frozenset(sentence for c in self.constraints for sentence in c.doc)

    @cached_property  # read on every drawn desc; the spec is immutable
    def constraints(self) -> tuple[Constraint, ...]:
        """Every constraint, field ranges included, errors before requires, by number."""
        return tuple(
            sorted(self.explicit_constraints + self.range_constraints, key=lambda c: c.number)
        )

    @property
    def operator_types(self) -> tuple[str, ...]:
        return (self.operator_type, *(a.operator_type for a in self.aliases))

    def field(self, name: str) -> Field:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(f"{self.name} has no field {name!r}")

    @property
    def tensor_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.is_tensor)

    def constraint(self, constraint_id: str) -> Constraint:
        for candidate in self.constraints:
            if candidate.id == constraint_id:
                return candidate
        raise KeyError(f"{self.name} has no constraint {constraint_id!r}")

    def to_json(self) -> Json:
        data: Json = {
            "$schema": self.schema,
            "name": self.name,
            "status": self.status,
            "operator_type": self.operator_type,
            "aliases": [a.to_json() for a in self.aliases],
            "struct": self.struct,
            "summary": self.summary,
            "introduced": self.introduced,
            "doc_pages": [p.to_json() for p in self.doc_pages],
            "fields": [f.to_json() for f in self.fields],
            "definitions": [d.to_json() for d in self.definitions],
            "constraints": [c.to_json() for c in self.explicit_constraints],
            "support": [r.to_json() for r in self.support],
        }
        _put(data, "semantics", None if self.semantics is None else self.semantics.to_json())
        _put(data, "kernel", None if self.kernel is None else self.kernel.to_json())
        data["examples"] = [e.to_json() for e in self.examples]
        _put(data, "unencoded", tuple(u.to_json() for u in self.unencoded))
        _put(data, "notes", self.notes)
        return data


@dataclass(frozen=True)
class Catalog:
    """Everything loaded from spec/: the common facts and every operator, sorted by name."""

    common: CommonSpec
    operators: tuple[OperatorSpec, ...]

    def operator(self, name: str) -> OperatorSpec:
        """Look an operator up by name or DML_OPERATOR_ type, with or without the prefix."""
        found = self._operators_by_name.get(name.removeprefix("DML_OPERATOR_"))
        if found is not None:
            return found
        known = ", ".join(
            t.removeprefix("DML_OPERATOR_") for s in self.operators for t in s.operator_types
        )
        raise KeyError(f"unknown operator {name!r}; known operators: {known}")

    @cached_property  # looked up per test and per drawn case; the catalog is immutable
    def _operators_by_name(self) -> dict[str, OperatorSpec]:
        """Each name and operator type (prefix dropped) -> the first operator it names."""
        index: dict[str, OperatorSpec] = {}
        for spec in self.operators:
            for key in (spec.name, *(t.removeprefix("DML_OPERATOR_") for t in spec.operator_types)):
                index.setdefault(key, spec)
        return index

    def support_row_at(self, spec: OperatorSpec, level: str) -> SupportRow | None:
        """The support row in force at `level` ('and above' semantics), None below the first."""
        rank = self.common.feature_level(level).rank
        in_force = [
            r
            for r in spec.support
            if r.when is None and self.common.feature_level(r.feature_level).rank <= rank
        ]
        return in_force[-1] if in_force else None

    def held_from(self, operator_set: OperatorSet, member: str) -> str:
        """The level from which an operator-desc field of `operator_set` may hold `member`
        (LEVEL.operator_desc): the member's introduction, or later where the set's `since`
        says it joined the set later."""
        joined = dict(operator_set.since).get(member)
        levels = [self.operator(member).introduced, *([joined] if joined else [])]
        return max(levels, key=lambda level: self.common.feature_level(level).rank)

    @property
    def with_kernels(self) -> tuple[OperatorSpec, ...]:
        """The operators dmlspec can run (a kernel, semantics and comparison rules)."""
        return tuple(s for s in self.operators if s.kernel is not None and s.semantics is not None)

    def by_path(self) -> Mapping[str, OperatorSpec]:
        return {spec.path: spec for spec in self.operators}
