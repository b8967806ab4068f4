"""Static types of the expression language.

int       an integer of any size (UINT64 values included)
number    an int or a float (scalar-union fields)
bool
list      a list of ints (Sizes, Strides)
enum X    a value of the DirectML enumeration X (DML_TENSOR_DATA_TYPE, ...); a string
          literal is accepted where an enum is expected if it names a member
flags X   a set of DML_TENSOR_FLAGS-style flags
tensor    a tensor desc; its members are declared by the common spec
array     the data of a tensor (`T.Values`, only in `requires` constraints)
mask      an element-wise boolean array computed from an array
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ARRAY",
    "BOOL",
    "INT",
    "LIST",
    "MASK",
    "NUMBER",
    "OPERATOR",
    "OPERATORS",
    "TENSORS",
    "EnumType",
    "FlagsType",
    "SimpleType",
    "StructType",
    "TensorType",
    "Type",
    "is_assignable",
    "parse_type",
]


@dataclass(frozen=True)
class Type:
    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class SimpleType(Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class EnumType(Type):
    enum: str

    def __str__(self) -> str:
        return f"enum {self.enum}"


@dataclass(frozen=True)
class FlagsType(Type):
    enum: str

    def __str__(self) -> str:
        return f"flags {self.enum}"


@dataclass(frozen=True)
class TensorType(Type):
    """A tensor desc; `members` maps member name to type (from the common spec)."""

    members: tuple[tuple[str, Type], ...]

    def member(self, name: str) -> Type | None:
        return dict(self.members).get(name)

    def __str__(self) -> str:
        return "tensor"


@dataclass(frozen=True)
class StructType(Type):
    """A nested DirectML struct (DML_SCALE_BIAS, DML_SIZE_2D): named members, read as `F.Member`."""

    name: str
    members: tuple[tuple[str, Type], ...]

    def member(self, name: str) -> Type | None:
        return dict(self.members).get(name)

    def __str__(self) -> str:
        return self.name


INT = SimpleType("int")
NUMBER = SimpleType("number")
BOOL = SimpleType("bool")
LIST = SimpleType("list")
ARRAY = SimpleType("array")
MASK = SimpleType("mask")
TENSORS = SimpleType("tensors")  # an array of tensor descs (JOIN's InputTensors)
OPERATOR = SimpleType("operator")  # an operator desc (a fused activation)
OPERATORS = SimpleType("operators")  # an array of operator descs

_SIMPLE = {t.name: t for t in (INT, NUMBER, BOOL, LIST, ARRAY, MASK)}


def parse_type(text: str) -> Type:
    """Read a type written in a spec file: 'int', 'list', 'enum DML_TENSOR_DATA_TYPE', ..."""
    if text in _SIMPLE:
        return _SIMPLE[text]
    kind, _, enum = text.partition(" ")
    if kind == "enum" and enum:
        return EnumType(enum)
    if kind == "flags" and enum:
        return FlagsType(enum)
    raise ValueError(
        f"unknown type {text!r}; expected one of {', '.join(sorted(_SIMPLE))}, "
        "'enum NAME' or 'flags NAME'"
    )


def is_assignable(actual: Type, expected: Type) -> bool:
    """Whether a value of type `actual` may stand where `expected` is required."""
    return actual == expected or (actual == INT and expected == NUMBER)
