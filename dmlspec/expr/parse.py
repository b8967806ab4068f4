"""Parse constraint-expression text into `nodes`, without eval or exec.

The text is read by Python's own parser (`ast.parse(..., mode="eval")`, which only builds a
tree and runs nothing) and then walked with an explicit whitelist. Anything outside the
language - lambdas, comprehensions, attribute chains, keyword arguments, names starting with
an underscore, calls of anything but a bare function name - is rejected with an
`ExpressionError` naming the construct and its column.
"""

from __future__ import annotations

import ast

from . import nodes
from .errors import ExpressionError

__all__ = ["parse"]

_BINARY_OPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
_COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
_BOOL_OPS: dict[type[ast.boolop], str] = {ast.And: "and", ast.Or: "or"}

# What a reader of an error message is told the language does allow.
ALLOWED_SYNTAX = (
    "names, Tensor.Member, integer/float/string/True/False literals, [lists], x[i], x[a:b], "
    "+ - * // %, comparisons, and/or/not, and calls of the named functions"
)


# Deeper trees are refused before anything recursive walks them (a 3,000-term sum is a tree
# 3,000 deep); the specs' own expressions nest a dozen levels at most.
MAX_DEPTH = 100


def parse(source: str) -> nodes.Node:
    """Parse one expression; raise `ExpressionError` for anything outside the language."""
    if not source.strip():
        raise ExpressionError("empty expression", source, 0)
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        col = max((error.offset or 1) - 1, 0)
        raise ExpressionError(f"syntax error: {error.msg}", source, col) from None
    except (RecursionError, MemoryError):  # Python's own parser gave up on the nesting
        raise ExpressionError(_too_deep(), source, 0) from None
    if _depth(tree.body) > MAX_DEPTH:
        raise ExpressionError(_too_deep(), source, 0)
    converter = _Converter(source.strip())
    converter.reject_private_names(tree.body)
    return converter.convert(tree.body)


def _too_deep() -> str:
    return f"the expression nests deeper than {MAX_DEPTH} levels (terms, subscripts, signs)"


def _depth(root: ast.AST) -> int:
    """The tree's depth, walked without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


class _Converter:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, message: str, node: ast.AST) -> ExpressionError:
        return ExpressionError(message, self.source, getattr(node, "col_offset", 0))

    def reject_private_names(self, root: ast.expr) -> None:
        """Report `__import__`, `x.__class__` and the like first, wherever they are nested."""
        for node in sorted(ast.walk(root), key=lambda n: getattr(n, "col_offset", 0)):
            if isinstance(node, ast.Name):
                self.check_name(node.id, node)
            elif isinstance(node, ast.Attribute):
                self.check_name(node.attr, node)

    def check_name(self, name: str, node: ast.AST) -> str:
        if name.startswith("_"):
            raise self.fail(f"names starting with '_' are not allowed (got {name!r})", node)
        return name

    def convert(self, node: ast.expr) -> nodes.Node:
        col = node.col_offset
        match node:
            case ast.Constant(value=value) if isinstance(value, bool | int | float | str):
                return nodes.Literal(col, value)
            case ast.Name(id=name):
                return nodes.Name(col, self.check_name(name, node))
            case ast.Attribute(value=ast.Name() as owner, attr=attr):
                self.check_name(attr, node)
                return nodes.Member(
                    col, nodes.Name(owner.col_offset, self.check_name(owner.id, owner)), attr
                )
            case ast.Attribute(attr=attr):
                raise self.fail(
                    f"member access '.{attr}' is only allowed directly on a field name", node
                )
            case ast.List(elts=elements):
                return nodes.ListLiteral(col, tuple(self.convert(e) for e in elements))
            case ast.Subscript(value=value, slice=ast.Slice(lower=lower, upper=upper, step=step)):
                if step is not None:
                    raise self.fail("slices with a step are not allowed", node)
                return nodes.Slice(
                    col,
                    self.convert(value),
                    None if lower is None else self.convert(lower),
                    None if upper is None else self.convert(upper),
                )
            case ast.Subscript(value=value, slice=index):
                return nodes.Index(col, self.convert(value), self.convert(index))
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                return nodes.Unary(col, "-", self.convert(operand))
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                return nodes.Unary(col, "not", self.convert(operand))
            case ast.BinOp(op=op, left=left, right=right) if type(op) in _BINARY_OPS:
                return nodes.Binary(
                    col, _BINARY_OPS[type(op)], self.convert(left), self.convert(right)
                )
            case ast.Compare(left=left, ops=ops, comparators=rest):
                symbols = []
                for comparison in ops:
                    kind = type(comparison)
                    if kind not in _COMPARE_OPS:
                        raise self.fail(f"comparison '{kind.__name__}' is not allowed", node)
                    symbols.append(_COMPARE_OPS[kind])
                return nodes.Compare(
                    col, self.convert(left), tuple(symbols), tuple(self.convert(r) for r in rest)
                )
            case ast.BoolOp(op=op, values=values):
                return nodes.BoolOp(
                    col, _BOOL_OPS[type(op)], tuple(self.convert(v) for v in values)
                )
            case ast.Call(func=ast.Name(id=func), args=args, keywords=keywords):
                if keywords:
                    raise self.fail(
                        f"keyword arguments are not allowed (in call of {func!r})", node
                    )
                for arg in args:
                    if isinstance(arg, ast.Starred):
                        raise self.fail(f"'*' arguments are not allowed (in call of {func!r})", arg)
                return nodes.Call(
                    col, self.check_name(func, node), tuple(self.convert(a) for a in args)
                )
            case ast.Call():
                raise self.fail("only named functions can be called", node)
        raise self.fail(
            f"{type(node).__name__} is not allowed in a constraint expression "
            f"(allowed: {ALLOWED_SYNTAX})",
            node,
        )
