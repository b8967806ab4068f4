"""The tables a generated validator module fills in from its spec.

Generated modules hold data (fields, support rows) and rules compiled from the spec's
expressions; the engine (`engine.py`) that runs them is hand-written and shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CommonTable",
    "DataTypeInfo",
    "FieldInfo",
    "OperatorTable",
    "Rule",
    "SupportCell",
    "SupportRowInfo",
    "TensorMemberInfo",
    "Undefined",
]

Check = Callable[[Any], Any]


@dataclass(frozen=True)
class Rule:
    """A compiled constraint. `check(view)` is true when it holds; on failure the message is
    followed by each operand's value (`operands`: source text and how to compute it)."""

    id: str
    check: Check
    message: str
    path: str  # JSON pointer below /desc (or below the tensor, for tensor rules)
    depends_on: tuple[str, ...] = ()
    operands: tuple[tuple[str, Check], ...] = ()
    undefined: Undefined | None = None


@dataclass(frozen=True)
class Undefined:
    """What a violated requires rule leaves undefined; `cells` gives a mask of the bad cells."""

    tensor: str
    values: str  # "any" or "one_of_colliding_updates"
    cells: Check | None  # None: the whole tensor


@dataclass(frozen=True)
class FieldInfo:
    name: str
    kind: str
    optional: bool
    enum: str | None = None
    value_type_field: str | None = None
    count_field: str | None = None
    operator_set: str | None = None

    @property
    def is_tensor(self) -> bool:
        return self.kind in ("input_tensor", "output_tensor")

    @property
    def is_tensor_array(self) -> bool:
        return self.kind in ("input_tensor_array", "output_tensor_array")

    @property
    def is_output(self) -> bool:
        return self.kind in ("output_tensor", "output_tensor_array")


@dataclass(frozen=True)
class SupportCell:
    dimension_counts: tuple[int, ...]
    data_types: tuple[str, ...]


@dataclass(frozen=True)
class SupportRowInfo:
    feature_level: str
    cells: Mapping[str, SupportCell]
    when: Check | None = None  # the row applies only where this holds


@dataclass(frozen=True)
class OperatorTable:
    name: str
    operator_types: tuple[str, ...]  # DML_OPERATOR_* names, the primary first
    introduced: str
    spec_path: str
    fields: tuple[FieldInfo, ...]
    definitions: Mapping[str, Check]
    support: tuple[SupportRowInfo, ...]
    rules: tuple[Rule, ...]
    requires: tuple[Rule, ...] = ()


@dataclass(frozen=True)
class DataTypeInfo:
    kind: str
    bits: int
    numpy: str | None
    since: str


@dataclass(frozen=True)
class TensorMemberInfo:
    name: str
    type: str  # "int", "list", "enum X", "flags X"
    optional: bool
    default: Check | None = None


@dataclass(frozen=True)
class CommonTable:
    feature_levels: tuple[str, ...]
    data_types: Mapping[str, DataTypeInfo]
    enums: Mapping[str, tuple[str, tuple[str, ...]]]  # name -> (prefix, members)
    tensor_members: tuple[TensorMemberInfo, ...]
    dimension_count: tuple[tuple[str, int, int], ...]  # (since, min, max)
    tensor_rules: tuple[Rule, ...]
    operator_sets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # set -> member -> the level from which a field may hold it (members that joined later)
    operator_set_since: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def rank(self, level: str) -> int:
        return self.feature_levels.index(level)

    # expr.Facts, so the function library can read element sizes.
    def element_bits(self, data_type: str) -> int:
        return self.data_types[data_type].bits

    def level_rank(self, level: str) -> int:
        return self.rank(level.removeprefix("DML_FEATURE_LEVEL_"))

    def numpy_dtype(self, data_type: str) -> str | None:
        return self.data_types[data_type].numpy
