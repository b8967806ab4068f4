"""Emit constraints as Python: one checking function each, plus its `Rule(...)` table entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...expr import EnumInfo, nodes
from ...expr.pycode import to_python, to_python_lines
from ...expr.solve import guard_of
from ...model import Constraint
from ..pysource import WIDTH, docstring, q, snake, string_lines

__all__ = ["RuleContext", "lambda_lines", "rule_entry", "rule_function", "rule_function_name"]


@dataclass(frozen=True)
class RuleContext:
    """How names in this module's expressions become Python."""

    view: str  # parameter name of rule functions: "d" (operator) or "s" (tensor scope)
    fields: frozenset[str]  # names that are desc fields (for paths)
    enums: Mapping[str, EnumInfo]

    def name(self, name: str) -> str:
        return f"{self.view}.{name}"

    @staticmethod
    def function(name: str) -> str:
        return f"fn.{name}"

    def python(self, node: nodes.Node) -> str:
        return to_python(node, self.name, self.function, self.enums)

    def python_lines(self, node: nodes.Node, indent: int) -> list[str]:
        return to_python_lines(node, self.name, self.function, self.enums, indent, WIDTH)

    def spec_text(self, node: nodes.Node) -> str:
        """The expression as the spec language writes it (for messages)."""
        return to_python(node, str, str, self.enums)


def rule_function_name(constraint: Constraint, prefix: str = "") -> str:
    return "_" + prefix + snake(constraint.id.rpartition(".")[2])


def rule_function(constraint: Constraint, context: RuleContext, prefix: str = "") -> list[str]:
    """`def _c1(d: View) -> bool:` with the constraint's doc as docstring."""
    name = rule_function_name(constraint, prefix)
    lines = [f"def {name}({context.view}: View) -> bool:"]
    lines += docstring(f"{constraint.id}: {constraint.message}.", 4)
    lines += _return_bool(constraint.expr.tree, context)
    return lines


def _return_bool(node: nodes.Node, context: RuleContext) -> list[str]:
    single = f"    return bool({context.python(node)})"
    if len(single) <= WIDTH:
        return [single]
    return ["    return bool(", *context.python_lines(node, 8), "    )"]


def rule_entry(
    constraint: Constraint,
    context: RuleContext,
    prefix: str = "",
    undefined: Callable[[], list[str]] | None = None,
) -> list[str]:
    """The `Rule(...)` expression for a rules tuple, indented by 4."""
    lines = ["    Rule("]
    lines += string_lines(constraint.id, 8, ",")
    lines.append(f"        {rule_function_name(constraint, prefix)},")
    lines += string_lines(constraint.message, 8, ",")
    lines += string_lines(_path(constraint.expr.tree, context), 8, ",")
    if constraint.depends_on:
        lines += _tuple_lines("depends_on", [q(d) for d in constraint.depends_on], 8)
    operands = _operands(constraint.expr.tree, context)
    if operands:
        lines.append("        operands=(")
        for text, node in operands:
            single = f"            ({q(text)}, lambda {context.view}: {context.python(node)}),"
            if len(single) <= WIDTH:
                lines.append(single)
                continue
            lines.append("            (")
            lines += string_lines(text, 16, ",")
            lines += lambda_lines(node, context, 16)
            lines.append("            ),")
        lines.append("        ),")
    if undefined is not None:
        lines += undefined()
    lines.append("    ),")
    return lines


def _tuple_lines(keyword: str, items: list[str], indent: int) -> list[str]:
    pad = " " * indent
    single = f"{pad}{keyword}=({', '.join(items)}{',' if len(items) == 1 else ''}),"
    if len(single) <= WIDTH:
        return [single]
    return [f"{pad}{keyword}=(", *[f"{pad}    {item}," for item in items], f"{pad}),"]


def lambda_lines(node: nodes.Node, context: RuleContext, indent: int) -> list[str]:
    pad = " " * indent
    single = f"{pad}lambda {context.view}: {context.python(node)},"
    if len(single) <= WIDTH:
        return [single]
    return [
        f"{pad}lambda {context.view}: (",
        *context.python_lines(node, indent + 4),
        f"{pad}),",
    ]


def _operands(node: nodes.Node, context: RuleContext) -> list[tuple[str, nodes.Node]]:
    """The values worth showing when a rule fails: comparison operands and call arguments."""
    found: dict[str, nodes.Node] = {}

    def visit(current: nodes.Node) -> None:
        match current:
            case nodes.BoolOp(values=values):
                for value in values:
                    visit(value)
            case nodes.Unary(op="not", operand=operand):
                visit(operand)
            case nodes.Compare(first=first, rest=rest):
                for operand in (first, *rest):
                    keep(operand)
            case nodes.Call(args=args):
                for arg in args:
                    keep(arg)

    def keep(operand: nodes.Node) -> None:
        if not isinstance(operand, nodes.Literal | nodes.ListLiteral):
            found.setdefault(context.spec_text(operand), operand)

    visit(node)
    return list(found.items())


def _path(node: nodes.Node, context: RuleContext) -> str:
    """Where in the desc a violation points: the first field (and member) the rule reads, past
    a guard (`Direction != "FORWARD" or ...` points at what the rule then requires)."""
    for current in nodes.walk(guard_of(node)[1]):
        if isinstance(current, nodes.Member) and (
            current.obj.id in context.fields or context.view == "s"
        ):
            owner = "" if context.view == "s" else f"/{current.obj.id}"
            return f"{owner}/{current.member}"
        if isinstance(current, nodes.Name) and current.id in context.fields:
            return f"/{current.id}"
    return ""
