"""Run a generated operator table against operator JSON: the validator proper.

Order of reporting: the JSON shape, the operator's availability at the feature level, the
general tensor rules (TENSOR.C*), the support row in force, then the operator's own error
constraints. Requires constraints (on tensor data) are checked by `check_requires`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidOperator
from ..expr import Absent
from ..expr.functions import FUNCTIONS
from ..limits import quote
from .result import ValidationResult, ValidationWarning, Violation
from .runtime import TensorView, View
from .shape import operator_type_of, read_desc
from .tables import CommonTable, OperatorTable, Rule, SupportRowInfo

__all__ = [
    "RequiresReport",
    "check_requires_with",
    "normalise_level",
    "requires_hold_with",
    "validate_with",
]

DATA_MEMBER = "Values"


def normalise_level(common: CommonTable, level: str | None) -> str:
    """'3_0' from '3_0' or 'DML_FEATURE_LEVEL_3_0'; the highest known level for None."""
    if level is None:
        return common.feature_levels[-1]
    short = level.removeprefix("DML_FEATURE_LEVEL_") if isinstance(level, str) else None
    if short not in common.feature_levels:
        raise ValueError(
            f"unknown feature level {quote(level)}; "
            f"known levels: {', '.join(common.feature_levels)}"
        )
    return str(short)


def validate_with(
    table: OperatorTable, common: CommonTable, operator: object, feature_level: str | None = None
) -> ValidationResult:
    level = normalise_level(common, feature_level)
    read = read_desc(table, common, operator)
    violations = list(read.violations)
    warnings = _scalar_union_warnings(table, common, read.values)
    rank = common.rank(level)
    if rank < common.rank(table.introduced):
        violations.append(
            Violation(
                "LEVEL.operator",
                "/type",
                f"{table.operator_types[0]} was introduced in "
                f"DML_FEATURE_LEVEL_{table.introduced}; it does not exist at {level}",
            )
        )
    violations += _fused_too_early(table, common, read.values, level)
    tensors = _tensors(table, read.values)
    low, high = _dimension_count_range(common, level)
    for info, tensor in tensors:
        scope = View(
            {
                "T": tensor,
                "DimensionCountMin": low,
                "DimensionCountMax": high,
                "TensorKind": "OUTPUT" if info.kind == "output_tensor" else "INPUT",
            }
        )
        label = tensor.label
        for rule, detail in _failures(common.tensor_rules, scope):
            path = f"/desc/{label.replace('[', '/').rstrip(']')}{rule.path}"
            violations.append(Violation(rule.id, path, f"{label}: {rule.message}{detail}"))
    view = View({**read.values, "FeatureLevel": level}, table.definitions)
    row = _row_in_force(table, common, level, view)
    if row is not None:
        for info, tensor in tensors:
            violations.extend(_support_violations(table, common, row, info.name, tensor, level))
    for rule, detail in _failures(table.rules, view):
        path = _odd_one_out(rule, view) or rule.path
        violations.append(Violation(rule.id, f"/desc{path}", f"{rule.message}{detail}"))
    recognised = operator_type_of(operator)
    return ValidationResult(
        recognised if recognised in table.operator_types else None,
        level,
        tuple(violations),
        tuple(warnings),
    )


def _fused_too_early(
    table: OperatorTable, common: CommonTable, values: Mapping[str, Any], level: str
) -> list[Violation]:
    """An operator-desc field (a fused activation, a recurrent operator's activations) may hold
    an operator from the level it was introduced at, and a set member that joined the set later
    (its `since`) from that level."""
    from dmlspec_generated.validators import VALIDATORS  # generated; imported when first needed

    found = []
    for info in table.fields:
        if info.kind not in ("operator_desc", "operator_desc_array"):
            continue
        held = values.get(info.name)
        items = held if isinstance(held, list) else [held]
        for index, item in enumerate(items):
            if not isinstance(item, TensorView):
                continue
            kind = str(item.members.get("Type"))
            joined = common.operator_set_since.get(info.operator_set or "", {}).get(kind)
            label = info.name if not isinstance(held, list) else f"{info.name}[{index}]"
            path = f"/desc/{label.replace('[', '/').rstrip(']')}/Type"
            for since, what in (
                (
                    VALIDATORS[f"DML_OPERATOR_{kind}"].TABLE.introduced,
                    f"DML_OPERATOR_{kind} was introduced in",
                ),
                (joined, f"{info.operator_set} holds {kind} from"),
            ):
                if since is not None and common.rank(level) < common.rank(since):
                    message = (
                        f"{label}.Type {kind}: {what} DML_FEATURE_LEVEL_{since}; "
                        f"it cannot be held at {level}"
                    )
                    found.append(Violation("LEVEL.operator_desc", path, message))
                    break
    return found


def _dimension_count_range(common: CommonTable, level: str) -> tuple[int, int]:
    rank = common.rank(level)
    in_force = [
        (low, high) for since, low, high in common.dimension_count if common.rank(since) <= rank
    ]
    return in_force[-1]


def _tensors(table: OperatorTable, values: Mapping[str, Any]) -> list[tuple[Any, TensorView]]:
    """Every tensor desc given, each element of a tensor array on its own."""
    found: list[tuple[Any, TensorView]] = []
    for info in table.fields:
        value = values.get(info.name)
        if info.is_tensor and isinstance(value, TensorView):
            found.append((info, value))
        elif info.is_tensor_array and isinstance(value, list):
            found += [(info, item) for item in value if isinstance(item, TensorView)]
    return found


def _applies(row: SupportRowInfo, view: View) -> bool:
    if row.when is None:
        return True
    try:
        return bool(row.when(view))
    except (Absent, ArithmeticError, IndexError, TypeError, ValueError):
        return False


def _row_in_force(
    table: OperatorTable, common: CommonTable, level: str, view: View | None = None
) -> SupportRowInfo | None:
    """The last row at or below `level` among those whose `when` holds for the desc."""
    rank = common.rank(level)
    rows = [
        r
        for r in table.support
        if common.rank(r.feature_level) <= rank and (view is None or _applies(r, view))
    ]
    if view is None:
        rows = [r for r in rows if r.when is None]
    return rows[-1] if rows else None


def _first_row_allowing(
    table: OperatorTable, tensor: str, test: Callable[[Any], bool]
) -> str | None:
    for row in table.support:
        if test(row.cells[tensor]):
            return row.feature_level
    return None


def _support_violations(
    table: OperatorTable,
    common: CommonTable,
    row: SupportRowInfo,
    name: str,
    tensor: TensorView,
    level: str,
) -> Iterable[Violation]:
    cell = row.cells[name]
    label = tensor.label
    where = f"{table.name} at feature level {level}"
    data_type = tensor.members.get("DataType")
    if data_type is not None and data_type not in cell.data_types:
        since = _first_row_allowing(table, name, lambda c: data_type in c.data_types)
        later = (
            f"; {data_type} is supported from {since}"
            if since
            else f"; no level supports {data_type}"
        )
        allowed = ", ".join(cell.data_types) or "nothing (the row supports no data type)"
        yield Violation(
            "SUPPORT.data_type",
            f"/desc/{_pointer(label)}/DataType",
            f"{label}.DataType must be one of {allowed} for {where} "
            f"(the {row.feature_level} row); got {data_type}{later}",
        )
    count = tensor.members.get("DimensionCount")
    if count is not None and count not in cell.dimension_counts:
        since = _first_row_allowing(table, name, lambda c: count in c.dimension_counts)
        later = f"; {count} dimensions are supported from {since}" if since else ""
        yield Violation(
            "SUPPORT.dimension_count",
            f"/desc/{_pointer(label)}/Sizes",
            f"{label} must have {_counts(cell.dimension_counts)} dimensions for {where} "
            f"(the {row.feature_level} row); got {count}{later}",
        )


def _pointer(label: str) -> str:
    """`InputTensors/1` for the label `InputTensors[1]`."""
    return label.replace("[", "/").rstrip("]")


def _counts(counts: tuple[int, ...]) -> str:
    ordered = sorted(counts)
    if not ordered:
        return "no number of"
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]} to {ordered[-1]}"
    return " or ".join(str(c) for c in ordered)


def _outcomes(
    rules: tuple[Rule, ...], view: View, wanted: tuple[Rule, ...] | None = None
) -> dict[str, tuple[str, str]]:
    """Each rule's (status, detail); a rule whose dependency did not pass is skipped. With
    `wanted`, only those rules and what they depend on are evaluated."""
    by_id = {rule.id: rule for rule in rules}
    outcomes: dict[str, tuple[str, str]] = {}

    def outcome(rule: Rule) -> tuple[str, str]:
        if rule.id not in outcomes:
            blocked = [d for d in rule.depends_on if d in by_id and outcome(by_id[d])[0] != "pass"]
            if blocked:
                outcomes[rule.id] = ("skipped", blocked[0])
            else:
                outcomes[rule.id] = _evaluate(rule, view)
        return outcomes[rule.id]

    for rule in rules if wanted is None else wanted:
        outcome(rule)
    return outcomes


def _evaluate(rule: Rule, view: View) -> tuple[str, str]:
    """A rule's status, and for a rule that could not be evaluated why; the operand values a
    failure shows are formatted by `_detail` only where a message is made (drawing inputs asks
    thousands of times whether the preconditions hold)."""
    try:
        return ("pass", "") if rule.check(view) else ("fail", "")
    except Absent:
        return "not_applicable", ""
    except (ArithmeticError, IndexError, TypeError, ValueError) as error:
        return "fail", f" (cannot be evaluated: {error})"


def _failures(rules: tuple[Rule, ...], view: View) -> list[tuple[Rule, str]]:
    outcomes = _outcomes(rules, view)
    return [
        (rule, _detail(rule, view, outcomes[rule.id][1]))
        for rule in rules
        if outcomes[rule.id][0] == "fail"
    ]


def _detail(rule: Rule, view: View, reason: str) -> str:
    """What a failed rule's message adds: why it could not be evaluated, else its operands'
    values."""
    return reason or _operand_values(rule, view)


def _operand_values(rule: Rule, view: View) -> str:
    shown = []
    for text, compute in rule.operands:
        try:
            shown.append(f"{text} = {_show(compute(view))}")
        except (Absent, ArithmeticError, IndexError, TypeError, ValueError):
            continue
    return f" ({'; '.join(shown)})" if shown else ""


def _odd_one_out(rule: Rule, view: View) -> str | None:
    """For a broken "must have the same X" rule over three or more tensors' X, the path of the
    first operand that differs from the value most of them share (the output when it alone
    differs); None where no value has a strict majority, or the operands are not of that kind."""
    members = {text.rpartition(".")[2] for text, _ in rule.operands}
    if len(rule.operands) < 3 or len(members) != 1 or "same" not in rule.message:
        return None
    shown: list[tuple[str, str]] = []
    for text, compute in rule.operands:
        try:
            shown.append((text, _show(compute(view))))
        except (Absent, ArithmeticError, IndexError, TypeError, ValueError):
            return None
    value, count = Counter(v for _, v in shown).most_common(1)[0]
    if count * 2 <= len(shown):
        return None
    odd = next(text for text, v in shown if v != value)
    return "/" + odd.replace(".", "/")


def _show(value: object) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=20)
    return str(value)


def _scalar_union_warnings(
    table: OperatorTable, common: CommonTable, values: dict[str, Any]
) -> list[ValidationWarning]:
    """Read scalar unions as their data type does; warn where that changes the value."""
    warnings = []
    for info in table.fields:
        if info.kind != "scalar_union" or info.name not in values:
            continue
        data_type = values.get(info.value_type_field or "")
        if not isinstance(data_type, str) or data_type not in common.data_types:
            continue
        if common.data_types[data_type].numpy is None:
            continue
        given = values[info.name]
        held = FUNCTIONS["as_type"].impl(common, given, data_type)
        values[info.name] = held
        kind = common.data_types[data_type].kind
        if kind in ("signed", "unsigned"):
            changed = held != given
        else:  # floats round to nearest as any JSON reader does; warn when magnitude is lost
            changed = math.isfinite(given) and (
                not math.isfinite(held) or (held == 0) != (given == 0)
            )
        if changed:
            warnings.append(
                ValidationWarning(
                    info.name,
                    f"/desc/{info.name}",
                    f"{info.name} {given!r} is not a {data_type} value; "
                    f"as {info.value_type_field} {data_type} it is read as {held!r}",
                )
            )
    return warnings


def _validated(
    table: OperatorTable, common: CommonTable, operator: object, feature_level: str | None
) -> str:
    """The feature level a desc is valid at, validated once per distinct operator JSON (the
    suites check the requires of one desc against many drawn inputs); InvalidOperator if it
    is not valid."""
    try:
        text = json.dumps(operator, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):  # NumPy scalars, NaN: validated uncached
        return _validate_or_raise(table, common, operator, feature_level)
    key = (id(table), id(common), text, feature_level)  # the tables live as long as their modules
    if key not in _VALID:
        if len(_VALID) >= _VALID_KEPT:
            _VALID.clear()
        _VALID[key] = _validate_or_raise(table, common, operator, feature_level)
    return _VALID[key]


_VALID: dict[tuple[int, int, str, str | None], str] = {}
_VALID_KEPT = 4096


def _validate_or_raise(
    table: OperatorTable, common: CommonTable, operator: object, feature_level: str | None
) -> str:
    result = validate_with(table, common, operator, feature_level)
    if not result.valid:
        raise InvalidOperator(
            f"{table.name} desc is invalid: " + "; ".join(str(v) for v in result.violations),
            result.fired(),
        )
    return result.feature_level


@dataclass(frozen=True)
class RequiresReport:
    """Which data preconditions fail, and which output elements that leaves undefined."""

    violations: tuple[Violation, ...]
    undefined: Mapping[str, np.ndarray]  # output tensor -> boolean mask, True where undefined
    allowed: Mapping[str, str]  # output tensor -> "any" or "one_of_colliding_updates"

    @property
    def satisfied(self) -> bool:
        return not self.violations


def _requires_outcomes(
    table: OperatorTable,
    common: CommonTable,
    operator: object,
    inputs: Mapping[str, Any],
    feature_level: str | None,
    validated: bool,
) -> tuple[Any, View, dict[str, tuple[str, str]]]:
    """The desc as read with the inputs' data in it, its view, and each requires rule's
    outcome (with the rules they depend on)."""
    level = (
        _validated(table, common, operator, feature_level)
        if validated
        else normalise_level(common, feature_level)
    )
    read = read_desc(table, common, operator)
    _scalar_union_warnings(table, common, read.values)
    for name, data in inputs.items():
        tensor = read.values.get(name)
        if isinstance(tensor, TensorView):
            tensor.members[DATA_MEMBER] = np.asarray(data)
    view = View({**read.values, "FeatureLevel": level}, table.definitions)
    return read, view, _outcomes(table.rules + table.requires, view, wanted=table.requires)


def requires_hold_with(
    table: OperatorTable,
    common: CommonTable,
    operator: object,
    inputs: Mapping[str, Any],
    feature_level: str | None = None,
) -> bool:
    """Whether every data precondition of a valid desc holds for these inputs: what
    `check_requires_with(...).satisfied` says, without the messages and undefined masks of
    the rules that fail (drawing inputs asks this many times per case)."""
    _, _, outcomes = _requires_outcomes(table, common, operator, inputs, feature_level, True)
    return all(outcomes[rule.id][0] != "fail" or rule.undefined is None for rule in table.requires)


def check_requires_with(
    table: OperatorTable,
    common: CommonTable,
    operator: object,
    inputs: Mapping[str, Any],
    feature_level: str | None = None,
    validated: bool = True,
) -> RequiresReport:
    """Check the data preconditions of a valid desc against concrete inputs (`validated`
    False: of a desc not checked first, e.g. a fused activation read as if alone, whose own
    shape rules need not hold)."""
    read, view, outcomes = _requires_outcomes(
        table, common, operator, inputs, feature_level, validated
    )
    violations: list[Violation] = []
    undefined: dict[str, np.ndarray] = {}
    allowed: dict[str, str] = {}
    for rule in table.requires:
        status, detail = outcomes[rule.id]
        if status != "fail" or rule.undefined is None:
            continue
        message = f"{rule.message}{_detail(rule, view, detail)}"
        violations.append(Violation(rule.id, f"/desc{rule.path}", message))
        target = rule.undefined.tensor
        sizes = read.values[target].members["Sizes"]
        cells = (
            np.ones(sizes, dtype=bool)
            if rule.undefined.cells is None
            else np.asarray(rule.undefined.cells(view), dtype=bool)
        )
        undefined[target] = undefined.get(target, np.zeros(sizes, dtype=bool)) | cells
        allowed[target] = (
            "any"
            if "any" in (allowed.get(target), rule.undefined.values)
            else rule.undefined.values
        )
    return RequiresReport(tuple(violations), undefined, allowed)
