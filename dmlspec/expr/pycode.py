"""Render an expression tree as Python source, for generated code.

The output reads like hand-written Python: parentheses only where precedence needs them,
enum literals in their short form, names and functions resolved by the caller (a generated
validator reads fields as `d.InputTensor.Sizes` and calls library functions as `fn.pad_left`).
Evaluation semantics are Python's, which the language was designed to share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from . import nodes
from .check import EnumInfo

__all__ = ["to_python"]

# Binding strength, loosest first (Python's own order).
_OR, _AND, _NOT, _COMPARE, _SUM, _PRODUCT, _UNARY, _POSTFIX, _ATOM = range(9)
_BINARY_LEVEL = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "//": _PRODUCT, "%": _PRODUCT}


def to_python(
    node: nodes.Node,
    name: Callable[[str], str],
    function: Callable[[str], str],
    enums: Mapping[str, EnumInfo],
) -> str:
    """Python source for `node`; `name` and `function` map language names to Python text."""
    return _Renderer(name, function, enums).render(node)[0]


class _Renderer:
    def __init__(
        self,
        name: Callable[[str], str],
        function: Callable[[str], str],
        enums: Mapping[str, EnumInfo],
    ) -> None:
        self.name = name
        self.function = function
        self.enums = enums

    def wrap(self, node: nodes.Node, at_least: int) -> str:
        text, level = self.render(node)
        return text if level >= at_least else f"({text})"

    def render(self, node: nodes.Node) -> tuple[str, int]:
        match node:
            case nodes.Literal(value=str() as text):
                return repr(self.enum_member(text)), _ATOM
            case nodes.Literal(value=value):
                return repr(value), _ATOM
            case nodes.ListLiteral(items=items):
                return "[" + ", ".join(self.wrap(i, _OR) for i in items) + "]", _ATOM
            case nodes.Name(id=name):
                return self.name(name), _ATOM
            case nodes.Member(obj=obj, member=member):
                return f"{self.name(obj.id)}.{member}", _POSTFIX
            case nodes.Index(obj=obj, index=index):
                return f"{self.wrap(obj, _POSTFIX)}[{self.wrap(index, _OR)}]", _POSTFIX
            case nodes.Slice(obj=obj, lower=lower, upper=upper):
                low = "" if lower is None else self.wrap(lower, _OR)
                high = "" if upper is None else self.wrap(upper, _OR)
                return f"{self.wrap(obj, _POSTFIX)}[{low}:{high}]", _POSTFIX
            case nodes.Unary(op="not", operand=operand):
                return f"not {self.wrap(operand, _NOT)}", _NOT
            case nodes.Unary(operand=operand):
                return f"-{self.wrap(operand, _UNARY)}", _UNARY
            case nodes.Binary(op=op, left=left, right=right):
                level = _BINARY_LEVEL[op]
                # Left-associative: the right operand of an equal level needs parentheses.
                return f"{self.wrap(left, level)} {op} {self.wrap(right, level + 1)}", level
            case nodes.Compare(first=first, ops=ops, rest=rest):
                parts = [self.wrap(first, _SUM)]
                for op, operand in zip(ops, rest, strict=True):
                    parts += [op, self.wrap(operand, _SUM)]
                return " ".join(parts), _COMPARE
            case nodes.BoolOp(op=op, values=values):
                level = _AND if op == "and" else _OR
                return f" {op} ".join(self.wrap(v, level + 1) for v in values), level
            case nodes.Call(func=func, args=args):
                arguments = ", ".join(self.wrap(a, _OR) for a in args)
                return f"{self.function(func)}({arguments})", _POSTFIX
        raise TypeError(f"cannot render {type(node).__name__}")

    def enum_member(self, text: str) -> str:
        for info in self.enums.values():
            short = info.resolve(text)
            if short is not None:
                return short
        return text
