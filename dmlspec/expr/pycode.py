"""Render an expression tree as Python source, for generated code.

The output reads like hand-written Python: parentheses only where precedence needs them,
enum literals in their short form, names and functions resolved by the caller (a generated
validator reads fields as `d.InputTensor.Sizes` and calls library functions as `fn.pad_left`).
Evaluation semantics are Python's, which the language was designed to share.
"""

from __future__ import annotations

import json
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
                return json.dumps(self.enum_member(text)), _ATOM
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
                # `a or b and c` is parenthesised for the reader: `a or (b and c)`.
                level = _AND if op == "and" else _OR
                parts = [
                    f"({self.render(v)[0]})"
                    if isinstance(v, nodes.BoolOp)
                    else self.wrap(v, level + 1)
                    for v in values
                ]
                return f" {op} ".join(parts), level
            case nodes.Call(func="present", args=(arg,)):
                # Reading an absent value raises, so present() gets it unread, as a thunk.
                return f"{self.function('present')}(lambda: {self.wrap(arg, _OR)})", _POSTFIX
            case nodes.Call(func="first_present", args=args):
                thunks = ", ".join(f"lambda: {self.wrap(a, _OR)}" for a in args)
                return f"{self.function('first_present')}({thunks})", _POSTFIX
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


def to_python_lines(
    node: nodes.Node,
    name: Callable[[str], str],
    function: Callable[[str], str],
    enums: Mapping[str, EnumInfo],
    indent: int,
    width: int = 100,
) -> list[str]:
    """Like `to_python`, broken over lines (each indented by `indent`) to fit `width`.

    The caller places the lines inside brackets, where Python allows line breaks anywhere.
    """
    return _Wrapper(_Renderer(name, function, enums), width).lines(node, indent)


class _Wrapper:
    def __init__(self, renderer: _Renderer, width: int) -> None:
        self.renderer = renderer
        self.width = width

    def lines(
        self, node: nodes.Node, indent: int, at_least: int = _OR, force_break: bool = False
    ) -> list[str]:
        text, level = self.renderer.render(node)
        if level < at_least:
            text = f"({text})"
        pad = " " * indent
        if indent + len(text) <= self.width and not force_break:
            return [pad + text]
        parenthesized = level < at_least
        # Inside its parentheses a broken operand sits 4 columns further in: laid out there.
        broken = self.broken(node, indent + 4 if parenthesized else indent)
        if broken is None:
            return [pad + text]
        if parenthesized:
            return [pad + "(", *broken, pad + ")"]
        return broken

    def broken(self, node: nodes.Node, indent: int) -> list[str] | None:
        pad = " " * indent
        match node:
            case nodes.Call(func="present", args=(arg,)):
                thunk = self.lines(arg, indent + 4)
                return [
                    f"{pad}{self.renderer.function('present')}(",
                    f"{pad}    lambda: {thunk[0].lstrip()}",
                    *thunk[1:],
                    pad + ")",
                ]
            case nodes.Call(func=func, args=args) if args:
                lines = [f"{pad}{self.renderer.function(func)}("]
                for arg in args:
                    part = self.lines(arg, indent + 4)
                    if func == "first_present":  # each alternative unread until needed
                        part[0] = f"{pad}    lambda: {part[0].lstrip()}"
                    part[-1] += ","
                    lines += part
                return [*lines, pad + ")"]
            case nodes.ListLiteral(items=items) if items:
                lines = [f"{pad}["]
                for item in items:
                    part = self.lines(item, indent + 4)
                    part[-1] += ","
                    lines += part
                return [*lines, pad + "]"]
            case nodes.Compare(first=first, ops=ops, rest=rest):
                return self.chain(indent, first, list(zip(ops, rest, strict=True)), _SUM)
            case nodes.BoolOp(op=op, values=values):
                level = (_AND if op == "and" else _OR) + 1
                # Nested and/or keep their parentheses (see _Renderer.render).
                return self.chain(indent, values[0], [(op, v) for v in values[1:]], level, _NOT)
            case nodes.Binary(op=op, left=left, right=right):
                level = _BINARY_LEVEL[op]
                lines = self.lines(left, indent, level)
                tail = self.lines(right, indent, level + 1)
                return [*lines, f"{pad}{op} {tail[0].lstrip()}", *tail[1:]]
        return None

    def chain(
        self,
        indent: int,
        first: nodes.Node,
        rest: list[tuple[str, nodes.Node]],
        level: int,
        bool_op_level: int | None = None,
    ) -> list[str]:
        pad = " " * indent

        def at_least(node: nodes.Node) -> int:
            nested = bool_op_level is not None and isinstance(node, nodes.BoolOp)
            return bool_op_level if nested and bool_op_level is not None else level

        lines = self.lines(first, indent, at_least(first))
        for op, operand in rest:
            # Laid out as if indented past "op ", which prefixes its first line.
            part = self.lines(operand, indent + len(op) + 1, at_least(operand))
            if len(part) > 1:  # broken: its own indentation, the operator before it
                part = self.lines(operand, indent, at_least(operand), force_break=True)
            lines += [f"{pad}{op} {part[0].lstrip()}", *part[1:]]
        return lines
