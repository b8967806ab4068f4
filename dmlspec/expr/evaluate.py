"""Evaluation of checked expressions against concrete values.

Values: int (any size), float, bool, list[int], str (enum member, short form), frozenset[str]
(flags), `TensorValue`, numpy arrays (data and masks). Indexing and slicing follow Python
(negative indices count from the end). Evaluation never raises anything but
`ExpressionError` (for example an index out of range) and `Absent` (an optional value that
was not given and has no default).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from . import nodes
from .check import DATA_MEMBER, EnumInfo
from .errors import Absent, ExpressionError
from .facts import Facts
from .functions import FUNCTIONS

__all__ = ["Environment", "TensorValue", "evaluate"]

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class TensorValue:
    """A tensor desc's members; absent optional members raise `Absent` when read."""

    def __init__(self, name: str, members: Mapping[str, Any]) -> None:
        self.name = name
        self.members = dict(members)

    def get(self, member: str) -> Any:
        if member not in self.members:
            raise Absent(f"{self.name}.{member}")
        return self.members[member]

    def __repr__(self) -> str:
        return f"TensorValue({self.name!r}, {self.members!r})"


class Environment:
    """Named values, plus named expressions (definitions) evaluated on first use."""

    def __init__(
        self,
        values: Mapping[str, Any],
        facts: Facts,
        enums: Mapping[str, EnumInfo],
        definitions: Mapping[str, tuple[nodes.Node, str]] | None = None,
    ) -> None:
        self.values = dict(values)
        self.facts = facts
        self.enums = enums
        self.definitions = dict(definitions or {})

    def lookup(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        if name in self.definitions:
            node, source = self.definitions[name]
            self.values[name] = evaluate(node, self, source)
            return self.values[name]
        raise Absent(name)

    def enum_member(self, text: str) -> str:
        for info in self.enums.values():
            short = info.resolve(text)
            if short is not None:
                return short
        return text


def evaluate(node: nodes.Node, env: Environment, source: str) -> Any:
    """Evaluate a type-checked expression tree."""
    return _Evaluator(env, source).value(node)


class _Evaluator:
    def __init__(self, env: Environment, source: str) -> None:
        self.env = env
        self.source = source

    def fail(self, message: str, node: nodes.Node) -> ExpressionError:
        return ExpressionError(message, self.source, node.col)

    def value(self, node: nodes.Node) -> Any:
        match node:
            case nodes.Literal(value=str() as text):
                return self.env.enum_member(text)
            case nodes.Literal(value=value):
                return value
            case nodes.ListLiteral(items=items):
                return [self.value(item) for item in items]
            case nodes.Name(id=name):
                return self.env.lookup(name)
            case nodes.Member(obj=obj, member=member):
                tensor = self.value(obj)
                return tensor.get(DATA_MEMBER if member == DATA_MEMBER else member)
            case nodes.Index(obj=obj, index=index):
                items, position = self.value(obj), self.value(index)
                if not -len(items) <= position < len(items):
                    raise self.fail(
                        f"index {position} is out of range for a list of {len(items)} items", node
                    )
                return items[position]
            case nodes.Slice(obj=obj, lower=lower, upper=upper):
                items = self.value(obj)
                start = None if lower is None else self.value(lower)
                stop = None if upper is None else self.value(upper)
                return list(items[start:stop])
            case nodes.Unary(op="not", operand=operand):
                return not self.value(operand)
            case nodes.Unary(operand=operand):
                return -self.value(operand)
            case nodes.Binary(op=op, left=left, right=right):
                a, b = self.value(left), self.value(right)
                if op in ("//", "%") and b == 0:
                    raise self.fail(f"'{op}' by zero", node)
                return _BINARY[op](a, b)
            case nodes.Compare(first=first, ops=ops, rest=rest):
                left = self.value(first)
                for op, right_node in zip(ops, rest, strict=True):
                    right = self.value(right_node)
                    if not _COMPARE[op](left, right):
                        return False
                    left = right
                return True
            case nodes.BoolOp(op="and", values=values):
                return all(self.value(v) for v in values)
            case nodes.BoolOp(values=values):
                return any(self.value(v) for v in values)
            case nodes.Call(func="present", args=(arg,)):
                try:
                    self.value(arg)
                except Absent:
                    return False
                return True
            case nodes.Call(func="first_present", args=args):
                for arg in args:
                    try:
                        return self.value(arg)
                    except Absent:
                        continue
                raise Absent("first_present")
            case nodes.Call(func=func, args=args):
                arguments = [self.value(arg) for arg in args]
                try:
                    return FUNCTIONS[func].impl(self.env.facts, *arguments)
                except (ValueError, TypeError, IndexError) as error:
                    raise self.fail(f"{func}() failed: {error}", node) from None
        raise self.fail(f"unsupported expression node {type(node).__name__}", node)
