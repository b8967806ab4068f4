"""Static type checking of parsed expressions against a scope of typed names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import nodes
from .errors import ExpressionError
from .functions import FUNCTIONS
from .type_rules import TypeRuleError
from .types import (
    ARRAY,
    BOOL,
    INT,
    LIST,
    NUMBER,
    TENSORS,
    EnumType,
    StructType,
    TensorType,
    Type,
    is_assignable,
)

__all__ = ["EnumInfo", "Scope", "check"]

DATA_MEMBER = "Values"


@dataclass(frozen=True)
class EnumInfo:
    """A DirectML enumeration; `prefix` + member is the C name (DML_TENSOR_DATA_TYPE_FLOAT32)."""

    name: str
    prefix: str
    members: tuple[str, ...]

    def resolve(self, text: str) -> str | None:
        """The short member name for `text` written with or without the prefix, else None."""
        short = text.removeprefix(self.prefix)
        return short if short in self.members else None


@dataclass(frozen=True)
class Scope:
    """Names an expression may use, their types, and the enumerations string literals name."""

    names: Mapping[str, Type]
    enums: Mapping[str, EnumInfo] = field(default_factory=dict)
    data_allowed: bool = False  # tensor data (`T.Values`, mask functions): requires constraints


def check(node: nodes.Node, scope: Scope, source: str) -> Type:
    """The type of `node`; raises `ExpressionError` where the expression is ill-typed."""
    return _Checker(scope, source).type_of(node)


class _Checker:
    def __init__(self, scope: Scope, source: str) -> None:
        self.scope = scope
        self.source = source

    def fail(self, message: str, node: nodes.Node) -> ExpressionError:
        return ExpressionError(message, self.source, node.col)

    def type_of(self, node: nodes.Node) -> Type:
        match node:
            case nodes.Literal(value=bool()):
                return BOOL
            case nodes.Literal(value=int()):
                return INT
            case nodes.Literal(value=float()):
                return NUMBER
            case nodes.Literal(value=str() as text):
                return self.enum_of_literal(text, node)
            case nodes.ListLiteral(items=items):
                for item in items:
                    self.expect(item, INT, "a list item")
                return LIST
            case nodes.Name(id=name):
                if name not in self.scope.names:
                    known = ", ".join(sorted(self.scope.names))
                    raise self.fail(f"unknown name {name!r} (known names: {known})", node)
                return self.scope.names[name]
            case nodes.Member():
                return self.member_type(node)
            case nodes.Index(obj=obj, index=index):
                self.expect(index, INT, "an index")
                if self.type_of(obj) == TENSORS:
                    return self.tensor_type(node)
                self.expect(obj, LIST, "an indexed value")
                return INT
            case nodes.Slice(obj=obj, lower=lower, upper=upper):
                self.expect(obj, LIST, "a sliced value")
                for bound in (lower, upper):
                    if bound is not None:
                        self.expect(bound, INT, "a slice bound")
                return LIST
            case nodes.Unary(op="not", operand=operand):
                self.expect(operand, BOOL, "the operand of 'not'")
                return BOOL
            case nodes.Unary(operand=operand):
                return self.numeric(operand, "the operand of unary '-'")
            case nodes.Binary():
                return self.binary_type(node)
            case nodes.Compare():
                self.compare_types(node)
                return BOOL
            case nodes.BoolOp(op=op, values=values):
                for value in values:
                    self.expect(value, BOOL, f"an operand of '{op}'")
                return BOOL
            case nodes.Call():
                return self.call_type(node)
        raise self.fail(f"unsupported expression node {type(node).__name__}", node)

    def tensor_type(self, node: nodes.Node) -> Type:
        """The tensor type of this scope (an element of a tensor array has it)."""
        for candidate in self.scope.names.values():
            if isinstance(candidate, TensorType):
                return candidate
        raise self.fail("no tensor type is known in this scope", node)

    def expect(self, node: nodes.Node, expected: Type, what: str) -> Type:
        actual = self.type_of(node)
        if not is_assignable(actual, expected):
            raise self.fail(f"{what} must be {expected}; got {actual}", node)
        return actual

    def numeric(self, node: nodes.Node, what: str) -> Type:
        actual = self.type_of(node)
        if actual not in (INT, NUMBER):
            raise self.fail(f"{what} must be int or number; got {actual}", node)
        return actual

    def enum_of_literal(self, text: str, node: nodes.Node) -> Type:
        owners = sorted(e.name for e in self.scope.enums.values() if e.resolve(text) is not None)
        if len(owners) == 1:
            return EnumType(owners[0])
        if owners:
            raise self.fail(
                f"{text!r} is ambiguous (a member of {', '.join(owners)}); "
                "write it with its prefix",
                node,
            )
        raise self.fail(f"{text!r} is not a member of any known enumeration", node)

    def member_type(self, node: nodes.Member) -> Type:
        owner = self.type_of(node.obj)
        if isinstance(owner, StructType):
            struct_member = owner.member(node.member)
            if struct_member is None:
                known = ", ".join(name for name, _ in owner.members)
                raise self.fail(
                    f"{owner.name} has no member {node.member!r} (members: {known})", node
                )
            return struct_member
        if not isinstance(owner, TensorType):
            raise self.fail(f"'.{node.member}' needs a tensor; {node.obj.id!r} is {owner}", node)
        if node.member == DATA_MEMBER:
            if not self.scope.data_allowed:
                raise self.fail(
                    f"'{node.obj.id}.{DATA_MEMBER}' reads tensor data, which only 'requires' "
                    "constraints may do",
                    node,
                )
            return ARRAY
        member = owner.member(node.member)
        if member is None:
            known = ", ".join(sorted(name for name, _ in owner.members))
            raise self.fail(f"tensor has no member {node.member!r} (members: {known})", node)
        return member

    def binary_type(self, node: nodes.Binary) -> Type:
        if node.op == "+" and self.type_of(node.left) == LIST:
            self.expect(node.right, LIST, "the right operand of list '+'")
            return LIST
        left = self.numeric(node.left, f"the left operand of '{node.op}'")
        right = self.numeric(node.right, f"the right operand of '{node.op}'")
        if node.op in ("//", "%"):
            self.expect(node.left, INT, f"the left operand of '{node.op}'")
            self.expect(node.right, INT, f"the right operand of '{node.op}'")
            return INT
        return INT if left == right == INT else NUMBER

    def compare_types(self, node: nodes.Compare) -> None:
        operands = (node.first, *node.rest)
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            if op in ("==", "!="):
                a, b = self.type_of(left), self.type_of(right)
                if not (is_assignable(a, b) or is_assignable(b, a)):
                    raise self.fail(f"cannot compare {a} {op} {b}", right)
            else:
                self.numeric(left, f"the left operand of '{op}'")
                self.numeric(right, f"the right operand of '{op}'")

    def call_type(self, node: nodes.Call) -> Type:
        function = FUNCTIONS.get(node.func)
        if function is None:
            known = ", ".join(sorted(FUNCTIONS))
            raise self.fail(f"unknown function {node.func!r} (functions: {known})", node)
        if function.data_only and not self.scope.data_allowed:
            raise self.fail(
                f"{node.func}() works on tensor data, which only 'requires' constraints may read",
                node,
            )
        arg_types = [self.type_of(arg) for arg in node.args]
        try:
            return function.type_rule(arg_types)
        except TypeRuleError as error:
            at = node.args[error.arg] if error.arg is not None else node
            raise self.fail(f"{node.func}() {error}", at) from None
