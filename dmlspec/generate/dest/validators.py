"""Emit generated/validators/<operator>.py: one operator's validator, from its spec."""

from __future__ import annotations

from functools import partial

from ...expr import Expression, nodes
from ...model import Catalog, Constraint, OperatorSpec
from ..header import python_header
from ..pysource import WIDTH, call_lines, docstring, q, snake
from .rules import RuleContext, lambda_lines, rule_entry, rule_function

__all__ = ["module_name", "render_validator"]


def module_name(spec: OperatorSpec) -> str:
    return spec.name.lower()


def render_validator(catalog: Catalog, spec: OperatorSpec) -> str:
    context = RuleContext("d", frozenset(f.name for f in spec.fields), catalog.common.enum_infos())
    errors = [c for c in spec.constraints if c.constraint_class == "error"]
    requires = [c for c in spec.constraints if c.constraint_class == "requires"]
    names = " or ".join(spec.operator_types)
    uses_fn = any(
        isinstance(node, nodes.Call)
        for expression in _expressions(spec)
        for node in nodes.walk(expression.tree)
    )
    lines = python_header([spec.path]).splitlines()
    lines += docstring(
        f"Validator for {names} ({spec.struct}).\n\n{spec.summary}\n\n"
        "validate() answers whether a desc is valid at a feature level and which rules it "
        "breaks; check_requires() checks the data preconditions of a valid desc against "
        "concrete inputs and says which output elements are undefined.",
        0,
    )
    lines += [
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Callable, Mapping",
        "from typing import Any",
        "",
        "from dmlspec.validation.engine import RequiresReport, check_requires_with, validate_with",
        "from dmlspec.validation.result import ValidationResult",
        "from dmlspec.validation.runtime import View",
        "from dmlspec.validation.tables import (",
        "    FieldInfo,",
        "    OperatorTable,",
        "    Rule,",
        "    SupportCell,",
        "    SupportRowInfo,",
        *(["    Undefined,"] if requires else []),
        ")",
        "",
        "from .common import COMMON, fn" if uses_fn else "from .common import COMMON",
        "",
        '__all__ = ["TABLE", "check_requires", "validate"]',
        "",
        "FIELDS = (",
    ]
    for field in spec.fields:
        arguments = [q(field.name), q(field.kind), f"optional={field.optional}"]
        if field.enum:
            arguments.append(f"enum={q(field.enum)}")
        if field.value_type_field:
            arguments.append(f"value_type_field={q(field.value_type_field)}")
        if field.count_field:
            arguments.append(f"count_field={q(field.count_field)}")
        if field.operator_set:
            arguments.append(f"operator_set={q(field.operator_set)}")
        lines += call_lines("FieldInfo", arguments, 4)
    lines.append(")")
    for definition in spec.definitions:
        lines += ["", "", f"def _{snake(definition.name)}(d: View) -> Any:"]
        lines += docstring(f"{definition.name}: {definition.doc}", 4)
        body = f"    return {context.python(definition.expr.tree)}"
        if len(body) <= WIDTH:
            lines.append(body)
        else:
            lines += ["    return (", *context.python_lines(definition.expr.tree, 8), "    )"]
    for constraint in errors + requires:
        lines += ["", ""]
        lines += rule_function(constraint, context)
    lines += ["", ""]
    lines += _collection(
        "DEFINITIONS: dict[str, Callable[[View], Any]]",
        "{}",
        [[f"    {q(d.name)}: _{snake(d.name)},"] for d in spec.definitions],
    )
    lines += _collection("RULES: tuple[Rule, ...]", "()", [rule_entry(c, context) for c in errors])
    lines += _collection(
        "REQUIRES: tuple[Rule, ...]",
        "()",
        [rule_entry(c, context, undefined=partial(_undefined, c, context)) for c in requires],
    )
    lines += ["SUPPORT = ("]
    for row in spec.support:
        lines.append("    SupportRowInfo(")
        lines.append(f"        {q(row.feature_level)},")
        lines.append("        {")
        for cell in row.tensors:
            lines.append(f"            {q(cell.tensor)}: SupportCell(")
            lines.append(f"                {q(tuple(cell.dimension_counts))},")
            lines += string_tuple(cell.data_types, 16)
            lines.append("            ),")
        lines.append("        },")
        if row.when is not None:
            lines += lambda_lines(row.when.tree, context, 8)
        lines.append("    ),")
    lines += [
        ")",
        "",
        "TABLE = OperatorTable(",
        f"    name={q(spec.name)},",
        f"    operator_types={q(tuple(spec.operator_types))},",
        f"    introduced={q(spec.introduced)},",
        f"    spec_path={q(spec.path)},",
        "    fields=FIELDS,",
        "    definitions=DEFINITIONS,",
        "    support=SUPPORT,",
        "    rules=RULES,",
        "    requires=REQUIRES,",
        ")",
        "",
        "",
        "def validate(operator: object, feature_level: str | None = None) -> ValidationResult:",
        *docstring(
            f"Check a {spec.name} operator JSON (DxDispatch's dispatchable: type and desc) at a "
            "feature level (default: the highest known). Reports, in this order, the JSON shape, "
            "availability at the level, the tensor rules, the support table row in force and "
            f"the {len(errors)} {spec.name} error constraints.",
            4,
        ),
        "    return validate_with(TABLE, COMMON, operator, feature_level)",
        "",
        "",
        "def check_requires(",
        "    operator: object, inputs: Mapping[str, Any], feature_level: str | None = None",
        ") -> RequiresReport:",
        *docstring(
            f"Check the data preconditions ({', '.join(c.id for c in requires) or 'none'}) of a "
            "valid desc against input arrays keyed by tensor field; raises InvalidOperator for "
            "an invalid desc.",
            4,
        ),
        "    return check_requires_with(TABLE, COMMON, operator, inputs, feature_level)",
    ]
    return "\n".join(lines) + "\n"


def _collection(declaration: str, empty: str, entries: list[list[str]]) -> list[str]:
    """`NAME = {...}` / `(...)` with one entry (of one or more lines) each, or empty."""
    if not entries:
        return [f"{declaration} = {empty}", ""]
    opening, closing = empty[0], empty[1]
    return [f"{declaration} = {opening}", *[line for e in entries for line in e], closing, ""]


def _expressions(spec: OperatorSpec) -> list[Expression]:
    found = [d.expr for d in spec.definitions] + [c.expr for c in spec.constraints]
    found += [row.when for row in spec.support if row.when is not None]
    return found + [
        c.undefined.addressed for c in spec.constraints if c.undefined and c.undefined.addressed
    ]


def string_tuple(items: tuple[str, ...], indent: int) -> list[str]:
    pad = " " * indent
    single = f"{pad}{q(items)},"
    if len(single) <= WIDTH:
        return [single]
    return [f"{pad}(", *[f"{pad}    {q(item)}," for item in items], f"{pad}),"]


def _undefined(constraint: Constraint, context: RuleContext) -> list[str]:
    effect = constraint.undefined
    assert effect is not None  # the loader requires it on every requires constraint
    lines = [
        "        undefined=Undefined(",
        f"            {q(effect.tensor)},",
        f"            {q(effect.values)},",
    ]
    if effect.addressed is None:
        lines.append("            None,")
    else:
        lines += lambda_lines(effect.addressed.tree, context, 12)
    lines.append("        ),")
    return lines
