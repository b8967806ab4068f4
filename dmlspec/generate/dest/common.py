"""Emit generated/validators/common.py from spec/common.json."""

from __future__ import annotations

from ...expr.pycode import to_python
from ...model import CommonSpec
from ..header import python_header
from ..pysource import WIDTH, call_lines, docstring, q, snake
from .rules import RuleContext, rule_entry, rule_function

__all__ = ["render_common"]

PATH = "validators/common.py"


def render_common(common: CommonSpec) -> str:
    context = RuleContext("s", frozenset(), common.enum_infos())
    lines = python_header([common.path]).splitlines()
    lines += docstring(
        "DirectML facts every validator shares: feature levels, data types, enumerations, "
        "the DML_BUFFER_TENSOR_DESC members with their defaults, and the tensor rules "
        "(TENSOR.C*) that apply to every tensor of every operator.",
        0,
    )
    lines += [
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        "from dmlspec.validation.runtime import Functions, TensorView, View",
        "from dmlspec.validation.tables import CommonTable, DataTypeInfo, Rule, TensorMemberInfo",
        "",
        "# The expression functions, bound to these facts (element sizes, NumPy types) below.",
        "fn: Functions",
        "",
        "FEATURE_LEVELS = (",
        *[f"    {q(level.name)}," for level in common.feature_levels],
        ")",
        "",
        "DATA_TYPES = {",
        *[
            f"    {q(d.name)}: DataTypeInfo({q(d.kind)}, {d.bits}, "
            f"{'None' if d.numpy is None else q(d.numpy)}, {q(d.since)}),"
            for d in common.data_types
        ],
        "}",
        "",
        "ENUMS: dict[str, tuple[str, tuple[str, ...]]] = {",
    ]
    for info in sorted(common.enum_infos().values(), key=lambda e: e.name):
        lines.append(f"    {q(info.name)}: (")
        lines.append(f"        {q(info.prefix)},")
        lines += _wrapped_tuple([q(m) for m in info.members], 8)
        lines.append("    ),")
    lines += ["}", ""]
    lines.append("OPERATOR_SETS: dict[str, tuple[str, ...]] = {")
    for operator_set in common.operator_sets:
        lines.append(f"    {q(operator_set.name)}: (")
        lines += [f"        {q(o)}," for o in operator_set.operators]
        lines.append("    ),")
    lines += ["}", ""]
    lines.append("OPERATOR_SET_SINCE: dict[str, dict[str, str]] = {")
    for operator_set in common.operator_sets:
        if operator_set.since:
            pairs = ", ".join(f"{q(m)}: {q(level)}" for m, level in operator_set.since)
            lines.append(f"    {q(operator_set.name)}: {{{pairs}}},")
    lines += ["}", ""]
    for member in common.tensor_members:
        if member.default is None:
            continue
        body = to_python(
            member.default.tree, lambda n: f"t.{n}", lambda f: f"fn.{f}", context.enums
        )
        lines += [
            "",
            f"def _default_{snake(member.name)}(t: TensorView) -> Any:",
            *docstring(f"{member.name} when the desc omits it.", 4),
            f"    return {body}",
        ]
    lines += ["", "", "TENSOR_MEMBERS = ("]
    for member in common.tensor_members:
        arguments = [q(member.name), q(member.type_text), str(member.optional)]
        if member.default is not None:
            arguments.append(f"_default_{snake(member.name)}")
        lines += call_lines("TensorMemberInfo", arguments, 4)
    lines.append(")")
    for constraint in common.tensor_constraints:
        lines += ["", ""]
        lines += rule_function(constraint, context, prefix="tensor_")
    lines += ["", "", "TENSOR_RULES: tuple[Rule, ...] = ("]
    for constraint in common.tensor_constraints:
        lines += rule_entry(constraint, context, prefix="tensor_")
    lines += [
        ")",
        "",
        "COMMON = CommonTable(",
        "    feature_levels=FEATURE_LEVELS,",
        "    data_types=DATA_TYPES,",
        "    enums=ENUMS,",
        "    tensor_members=TENSOR_MEMBERS,",
        "    dimension_count=(",
        *[f"        ({q(r.since)}, {r.min}, {r.max})," for r in common.dimension_count],
        "    ),",
        "    tensor_rules=TENSOR_RULES,",
        "    operator_sets=OPERATOR_SETS,",
        "    operator_set_since=OPERATOR_SET_SINCE,",
        ")",
        "",
        "fn = Functions(COMMON)",
        "",
        '__all__ = ["COMMON", "DATA_TYPES", "ENUMS", "FEATURE_LEVELS", "fn"]',
    ]
    return "\n".join(lines) + "\n"


def _wrapped_tuple(items: list[str], indent: int) -> list[str]:
    """A tuple literal of short items, several per line."""
    inner = " " * (indent + 4)
    lines, current = [], ""
    for item in items:
        piece = f"{item},"
        if current and len(inner) + len(current) + 1 + len(piece) > WIDTH:
            lines.append(inner + current)
            current = ""
        current = f"{current} {piece}" if current else piece
    lines.append(inner + current)
    pad = " " * indent
    return [f"{pad}(", *lines, f"{pad}),"]
