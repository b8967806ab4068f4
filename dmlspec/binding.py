"""Bind a desc's field values to the names constraint expressions use, and evaluate them.

A desc here is already shaped (tensor fields are mappings with DataType, Sizes and the other
DML_BUFFER_TENSOR_DESC members; scalars are numbers or enum names); checking the JSON shape
itself is the validators' job. Tensor members the desc omits take the defaults the common spec
declares; scalar unions are read through their data-type field, as DirectML reads them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from . import model as m
from .expr import Absent, Environment, ExpressionError, TensorValue
from .expr.evaluate import evaluate
from .expr.functions import FUNCTIONS
from .expr.solve import Derivation, derivations, order_derivations, references

__all__ = [
    "Outcome",
    "bind_desc",
    "bind_tensor",
    "derive_members",
    "evaluate_constraints",
    "per_spec",
    "scalar_union_value",
    "spec_derivations",
]

DATA_MEMBER = "Values"


def _short(value: Any, prefix: str) -> Any:
    return value.removeprefix(prefix) if isinstance(value, str) else value


def _member_value(name: str, value: Any) -> Any:
    if name == "DataType":
        return _short(value, "DML_TENSOR_DATA_TYPE_")
    if name == "Flags":
        flags = value if isinstance(value, list) else str(value).split("|")
        return frozenset(_short(f.strip(), "DML_TENSOR_FLAG_") for f in flags)
    return list(value) if isinstance(value, tuple | list) else value


def bind_tensor(common: m.CommonSpec, name: str, desc: Mapping[str, Any]) -> TensorValue:
    """A tensor desc with defaults filled in; `Values` (tensor data) is kept as an array."""
    members: dict[str, Any] = {}
    for member in common.tensor_members:
        if member.name in desc:
            members[member.name] = _member_value(member.name, desc[member.name])
    # Defaults may read any given member and the defaults before them (struct order).
    for member in common.tensor_members:
        if member.name not in members and member.default is not None:
            env = Environment(members, common, common.enum_infos())
            with contextlib.suppress(Absent):
                members[member.name] = member.default.evaluate(env)
    if DATA_MEMBER in desc and desc[DATA_MEMBER] is not None:
        members[DATA_MEMBER] = np.asarray(desc[DATA_MEMBER], dtype=object)
    return TensorValue(name, members)


def scalar_union_value(common: m.CommonSpec, value: int | float, data_type: str) -> int | float:
    """What a DML_SCALAR_UNION read as `data_type` holds when set to `value`."""
    return FUNCTIONS["as_type"].impl(common, value, _short(data_type, "DML_TENSOR_DATA_TYPE_"))  # type: ignore[no-any-return]


def bind_desc(
    common: m.CommonSpec,
    spec: m.OperatorSpec,
    fields: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    tensors: dict[str, tuple[str, TensorValue]] | None = None,
) -> Environment:
    """An environment for the spec's expressions; absent optional fields stay unbound.
    `tensors`, a caller's memo of bound tensors by the text of their desc, binds again only
    the tensors that changed since (the memo's TensorValues are shared: for readers only)."""
    values: dict[str, Any] = dict(extra or {})
    enums = common.enum_infos()
    for field in spec.fields:
        if field.name not in fields:
            continue
        raw = fields[field.name]
        if field.is_tensor and tensors is not None:
            key = repr(raw)
            if field.name not in tensors or tensors[field.name][0] != key:
                tensors[field.name] = (key, bind_tensor(common, field.name, raw))
            values[field.name] = tensors[field.name][1]
        elif field.is_tensor:
            values[field.name] = bind_tensor(common, field.name, raw)
        elif field.is_tensor_array and isinstance(raw, list):
            values[field.name] = [
                bind_tensor(common, f"{field.name}[{i}]", item) for i, item in enumerate(raw)
            ]
        elif field.kind == "data_type":
            values[field.name] = _short(raw, "DML_TENSOR_DATA_TYPE_")
        elif field.kind == "enum" and field.enum in enums and isinstance(raw, str):
            # Enum members compare by short name, whether the desc writes the prefix or not.
            values[field.name] = enums[field.enum].resolve(raw) or raw
        elif field.kind == "scalar_union":
            value_type = fields.get(field.value_type_field or "")
            values[field.name] = (
                raw if value_type is None else scalar_union_value(common, raw, value_type)
            )
        else:
            values[field.name] = raw
    definitions = {d.name: (d.expr.tree, d.expr.source) for d in spec.definitions}
    return Environment(values, common, enums, definitions)


@dataclass(frozen=True)
class Outcome:
    """How one constraint came out: "pass", "fail", "skipped" (a dependency failed),
    "not_applicable" (it reads an absent optional value) or "error" (evaluation failed)."""

    constraint_id: str
    status: str
    detail: str = ""


def evaluate_constraints(
    constraints: tuple[m.Constraint, ...], env: Environment
) -> dict[str, Outcome]:
    """Evaluate in dependency order; a constraint whose dependency did not pass is skipped."""
    outcomes: dict[str, Outcome] = {}
    by_id = {c.id: c for c in constraints}

    def outcome(constraint: m.Constraint) -> Outcome:
        if constraint.id in outcomes:
            return outcomes[constraint.id]
        for dependency in constraint.depends_on:
            if dependency in by_id and outcome(by_id[dependency]).status != "pass":
                outcomes[constraint.id] = Outcome(constraint.id, "skipped", dependency)
                return outcomes[constraint.id]
        try:
            passed = bool(constraint.expr.evaluate(env))
            result = Outcome(constraint.id, "pass" if passed else "fail")
        except Absent as absent:
            result = Outcome(constraint.id, "not_applicable", absent.name)
        except ExpressionError as error:
            result = Outcome(constraint.id, "error", str(error))
        outcomes[constraint.id] = result
        return result

    for constraint in constraints:
        outcome(constraint)
    return outcomes


_T = TypeVar("_T")
SpecMemo = dict[tuple[int, Hashable], tuple[m.OperatorSpec, _T]]


def per_spec(
    memo: SpecMemo[_T],
    spec: m.OperatorSpec,
    key: Hashable,
    compute: Callable[[], _T],
    limit: int | None = None,
) -> _T:
    """`compute()`, remembered in `memo` under the spec object and `key` (a spec is keyed by
    identity: hashing one walks all of it; an id another spec reuses computes again). With
    `limit`, a full memo is emptied before the next entry."""
    hit = memo.get((id(spec), key))
    if hit is None or hit[0] is not spec:
        if limit is not None and len(memo) >= limit:
            memo.clear()
        hit = (spec, compute())
        memo[(id(spec), key)] = hit
    return hit[1]


_DEFINITIONS: SpecMemo[dict[str, Any]] = {}


def definition_trees(spec: m.OperatorSpec) -> dict[str, Any]:
    """The spec's named definitions as expression trees: one dict per spec, so memos keyed by
    identity (expr.solve.references) hit across calls. Do not modify it."""
    return per_spec(
        _DEFINITIONS, spec, None, lambda: {d.name: d.expr.tree for d in spec.definitions}
    )


def spec_derivations(spec: m.OperatorSpec) -> tuple[Derivation, ...]:
    """`derivations` of all the spec's constraints, once per spec (drawing reads them for
    every desc)."""
    return per_spec(
        _DERIVATIONS,
        spec,
        None,
        lambda: derivations(
            ((c.id, c.expr.tree) for c in spec.constraints), definition_trees(spec)
        ),
    )


_DERIVATIONS: SpecMemo[tuple[Derivation, ...]] = {}


def derive_members(
    common: m.CommonSpec,
    spec: m.OperatorSpec,
    fields: Mapping[str, Any],
    targets: Iterable[str],
    exclude: Iterable[str] = (),
) -> dict[str, Any]:
    """Values for `targets` ("UpdatesTensor.Sizes", "Axis", ...) read off the spec's equality
    constraints (except those in `exclude`), given the other fields. Raises ValueError if a
    target has no derivation or needs a value that is neither given nor derivable."""
    wanted = list(targets)
    definitions = definition_trees(spec)
    skipped = set(exclude)
    if skipped:
        rules = ((c.id, c.expr.tree) for c in spec.constraints if c.id not in skipped)
        found = derivations(rules, definitions)
    else:
        found = spec_derivations(spec)
    env = bind_desc(common, spec, fields)
    available: dict[str, Derivation] = {}
    for d in found:
        if d.target not in available and _applies(d, env):
            available[d.target] = d
    missing = [t for t in wanted if t not in available]
    if missing:
        raise ValueError(f"no constraint of {spec.name} defines {missing}")
    given = {
        f"{name}.{member}" if member else name
        for name, value in env.values.items()
        for member in _members(value)
    }
    chosen = _closure(wanted, available, given, definitions)
    derived: dict[str, Any] = {}
    for derivation in order_derivations(chosen, given, definitions):
        value = evaluate(derivation.expr, env, derivation.constraint_id)
        owner, _, member = derivation.target.partition(".")
        if member:
            tensor = env.values.setdefault(owner, TensorValue(owner, {}))
            tensor.members[member] = value
        else:
            env.values[owner] = value
        derived[derivation.target] = value
    return {target: derived[target] for target in wanted}


def _members(value: Any) -> Iterable[str]:
    """The members a bound value gives: a tensor's, a struct's (UPSAMPLE_2D's ScaleSize.Width),
    or none ("": the value itself)."""
    if isinstance(value, TensorValue):
        return value.members
    return ["", *value] if isinstance(value, dict) else [""]


def _applies(derivation: Derivation, env: Environment) -> bool:
    """Whether a derivation's guard (`Direction == "FORWARD"`) holds for the given values."""
    if derivation.guard is None:
        return True
    try:
        return bool(evaluate(derivation.guard, env, derivation.constraint_id))
    except (Absent, ExpressionError):
        return False


def _closure(
    wanted: list[str],
    available: Mapping[str, Derivation],
    given: set[str],
    definitions: Mapping[str, Any],
) -> list[Derivation]:
    """The wanted derivations plus those they need that are not given."""
    chosen: dict[str, Derivation] = {}
    pending = list(wanted)
    while pending:
        target = pending.pop()
        if target in chosen or target in given:
            continue
        if target not in available:
            raise ValueError(f"{target} is neither given nor derivable")
        chosen[target] = available[target]
        pending.extend(references(available[target].expr, definitions))
    return list(chosen.values())
