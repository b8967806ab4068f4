"""Syntax tree of the constraint-expression language.

The parser (`parse.py`) builds these from a whitelisted subset of Python syntax; the type
checker, evaluator and solver only ever see these classes, never Python's own `ast`.
Every node records `col`, the 0-based column in the source text, for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Binary",
    "BoolOp",
    "Call",
    "Compare",
    "Index",
    "ListLiteral",
    "Literal",
    "Member",
    "Name",
    "Node",
    "Slice",
    "Unary",
    "walk",
]


@dataclass(frozen=True)
class Node:
    col: int


@dataclass(frozen=True)
class Literal(Node):
    value: int | float | bool | str


@dataclass(frozen=True)
class ListLiteral(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Name(Node):
    id: str


@dataclass(frozen=True)
class Member(Node):
    """`Tensor.Member`, e.g. `IndicesTensor.Sizes`."""

    obj: Name
    member: str


@dataclass(frozen=True)
class Index(Node):
    obj: Node
    index: Node


@dataclass(frozen=True)
class Slice(Node):
    obj: Node
    lower: Node | None
    upper: Node | None


@dataclass(frozen=True)
class Unary(Node):
    op: str  # "-" or "not"
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str  # "+", "-", "*", "//", "%"
    left: Node
    right: Node


@dataclass(frozen=True)
class Compare(Node):
    """A possibly chained comparison: `first ops[0] rest[0] ops[1] rest[1] ...`."""

    first: Node
    ops: tuple[str, ...]
    rest: tuple[Node, ...]


@dataclass(frozen=True)
class BoolOp(Node):
    op: str  # "and" or "or"
    values: tuple[Node, ...]


@dataclass(frozen=True)
class Call(Node):
    func: str
    args: tuple[Node, ...]


def walk(node: Node) -> list[Node]:
    """Every node of the tree, `node` first, in source order."""
    found: list[Node] = [node]
    for child in _children(node):
        found.extend(walk(child))
    return found


def _children(node: Node) -> tuple[Node, ...]:
    match node:
        case ListLiteral(items=items):
            return items
        case Member(obj=obj):
            return (obj,)
        case Index(obj=obj, index=index):
            return (obj, index)
        case Slice(obj=obj, lower=lower, upper=upper):
            return tuple(n for n in (obj, lower, upper) if n is not None)
        case Unary(operand=operand):
            return (operand,)
        case Binary(left=left, right=right):
            return (left, right)
        case Compare(first=first, rest=rest):
            return (first, *rest)
        case BoolOp(values=values):
            return values
        case Call(args=args):
            return args
    return ()
