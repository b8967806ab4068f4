"""Drawing valid descs: a desc for a support-table cell at a feature level, from a seed.

Nothing here is written per operator. Free values are drawn (data types and ranks from the
support row, sizes, numeric fields within their documented range); dependent values are
derived from the spec's own equalities (`derive_members`); rules that tie many values together
(windows inside a tensor, items partitioning an axis) are solved for (solved.py); a desc is
kept when the generated validator accepts it.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..binding import SpecMemo, bind_desc, derive_members, per_spec, spec_derivations
from ..expr import Absent, ExpressionError, nodes
from ..expr.solve import target_of
from ..model import Catalog, Field, OperatorSpec, SupportRow
from ..validation import validate_operator
from .solved import (
    items_as_required,
    ones_where_required,
    partition_along_axis,
    presence_as_required,
    shape_alternatives,
    undefining_inputs,
    values_as_required,
    windows_inside,
)

__all__ = [
    "ATTEMPTS",
    "MAX_CASE_ELEMENTS",
    "CellChoice",
    "case_elements",
    "draw_desc",
    "rows_at",
    "tensor_like",
    "type_groups",
    "when_choices",
]

ATTEMPTS = 400
PLAIN_AFTER = 24  # rejected draws before window arrays take window-safe values (_derive_counts)
# Drawn sizes are small, but a derived output can multiply them (GATHER of a long index
# tensor along a long axis: 2381 x 2 x 2381 x 2 elements, which the reference takes seconds
# for). A desc over this many elements in all is drawn again.
MAX_CASE_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class CellChoice:
    """Force one support-table cell: `tensor` gets this data type or this rank; or (kind
    "when") the enum field `tensor` this member, which a support row's `when` names (REDUCE's
    Function picks the row group)."""

    tensor: str
    kind: str  # "data_type", "rank" or "when"
    value: str | int


def _slot_kinds(spec: OperatorSpec) -> dict[str, str]:
    return {f.name: f.kind for f in spec.fields}


def type_groups(spec: OperatorSpec, member: str) -> list[set[str]]:
    """Slots the spec's equalities tie together: member "DataType" groups the tensors' data
    types (and data_type fields such as ValueDataType); "DimensionCount" groups ranks."""
    # Once per spec: drawing reads them every attempt.
    groups = per_spec(
        _TYPE_GROUPS,
        spec,
        member,
        lambda: tuple(frozenset(g) for g in _type_groups(spec, member)),
    )
    return [set(group) for group in groups]


_TYPE_GROUPS: SpecMemo[tuple[frozenset[str], ...]] = {}


def _type_groups(spec: OperatorSpec, member: str) -> list[set[str]]:
    kinds = _slot_kinds(spec)

    def is_slot(name: str | None) -> bool:
        if name is None:
            return False
        return name.endswith(f".{member}") or (
            member == "DataType" and kinds.get(name) == "data_type"
        )

    links = [
        (d.target, target_of(d.expr))
        for d in spec_derivations(spec)
        if is_slot(d.target) and is_slot(target_of(d.expr))
    ]
    links += _same_links(spec, member)
    groups = [{f"{t.name}.{member}"} for t in tensor_like(spec)]
    if member == "DataType":
        groups += [{f.name} for f in spec.fields if f.kind == "data_type"]
    for a, b in links:
        first = next(g for g in groups if a in g)
        second = next(g for g in groups if b in g)
        if first is not second:
            first |= second
            groups.remove(second)
    return groups


def tensor_like(spec: OperatorSpec) -> list[Field]:
    """Tensor fields and tensor-array fields (an array's items share one data type and rank)."""
    return [f for f in spec.fields if f.is_tensor or f.is_tensor_array]


_SAME = {"DataType": "same_data_type", "DimensionCount": "same_dimension_count"}


def _same_links(spec: OperatorSpec, member: str) -> list[tuple[str, str]]:
    """Slots tied by error constraints such as same_data_type(InputTensors, OutputTensor)."""
    links = []
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        for node in nodes.walk(constraint.expr.tree):
            if isinstance(node, nodes.Call) and node.func == _SAME[member]:
                names = [a.id for a in node.args if isinstance(a, nodes.Name)]
                links += [(f"{a}.{member}", f"{b}.{member}") for a, b in itertools.pairwise(names)]
    return links


def _choose_types(
    spec: OperatorSpec, row: SupportRow, forces: tuple[CellChoice, ...], rng: random.Random
) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for group in type_groups(spec, "DataType"):
        tensors = [s.partition(".")[0] for s in group if s.endswith(".DataType")]
        allowed = (
            set.intersection(*(set(row.tensor(t).data_types) for t in tensors))
            if tensors
            else set()
        )
        for force in forces:
            if force.kind == "data_type" and force.tensor in tensors:
                allowed &= {str(force.value)}
        if not allowed:
            raise LookupError("no data type fits every tensor of a group")
        value = rng.choice(sorted(allowed))
        chosen.update({s: value for s in group})
    return chosen


def _choose_ranks(
    spec: OperatorSpec,
    row: SupportRow,
    forces: tuple[CellChoice, ...],
    rng: random.Random,
    max_rank: int,
) -> dict[str, int]:
    chosen: dict[str, int] = {}
    for group in type_groups(spec, "DimensionCount"):
        tensors = [s.partition(".")[0] for s in group]
        allowed = set.intersection(*(set(row.tensor(t).dimension_counts) for t in tensors))
        forced = [f for f in forces if f.kind == "rank" and f.tensor in tensors]
        for force in forced:
            allowed &= {int(force.value)}
        if not forced:
            allowed = {r for r in allowed if r <= max_rank} or allowed
        if not allowed:
            raise LookupError("no rank fits every tensor of a group")
        value = rng.choice(sorted(allowed))
        chosen.update({t: value for t in tensors})
    return chosen


def _draw_sizes(rank: int, drawn: list[list[int]], rng: random.Random) -> list[int]:
    """Sizes for a free tensor. Often a copy of an earlier tensor's sizes with one dimension
    changed, since rules like "Sizes must match InputTensor.Sizes except along Axis" are common;
    high ranks lean on 1s to stay small."""
    same_rank = [sizes for sizes in drawn if len(sizes) == rank]
    if same_rank and rng.random() < 0.6:
        sizes = list(rng.choice(same_rank))
        if rng.random() < 0.5:
            sizes[rng.randrange(rank)] = rng.randint(1, 5)
        return sizes
    ones = 0.45 if rank <= 4 else 0.8
    sizes = [1 if rng.random() < ones else rng.randint(2, 5) for _ in range(rank)]
    if rng.random() < 0.1:  # now and then a long innermost dimension (long fill sequences)
        sizes[-1] = rng.randint(64, 4096)
    return sizes


def _scalar(kind: str, data_type: str | None, catalog: Catalog, rng: random.Random) -> int | float:
    if data_type is not None and catalog.common.data_type(data_type).kind == "float":
        floats: list[float] = [0.0, 1.0, -2.5, 0.1, 1 / 3, -0.7, 1e3, 3.2, 1.5e-3]
        return rng.choice(floats)
    bits = catalog.common.data_type(data_type).bits if data_type else 32
    integers: list[int] = [
        0,
        1,
        -1,
        2,
        10,
        -2,
        2 ** (bits - 1) - 1,
        -(2 ** (bits - 1)),
        2**bits + 3,
    ]
    return rng.choice(integers)


def draw_desc(
    catalog: Catalog,
    spec: OperatorSpec,
    level: str,
    rng: random.Random,
    force: CellChoice | tuple[CellChoice, ...] | None = None,
    max_rank: int = 4,
    attempts: int = ATTEMPTS,
) -> dict[str, Any]:
    """A desc valid at `level` with the forced cells (one, or several of distinct tensors);
    raises LookupError if none was found in `attempts` draws."""
    forces = () if force is None else force if isinstance(force, tuple) else (force,)
    rows = rows_at(catalog, spec, level)
    if forces:  # cells of the row introduced at `level` (REDUCE: in its group)
        rows = [r for r in rows if all(_allows(r, f) for f in forces)] or rows
        rows = [r for r in rows if r.feature_level == level] or rows
    if not rows:
        raise LookupError(f"{spec.name} does not exist at {level}")
    derivable = {d.target for d in spec_derivations(spec)}
    undefining = undefining_inputs(spec)
    forced_tensors = {f.tensor for f in forces if f.kind != "when"}
    forced_members = {f.tensor: f.value for f in forces if f.kind == "when"}
    for attempt in range(attempts):
        row = rng.choice(rows) if len(rows) > 1 else rows[0]  # one row: the stream unchanged
        types = _choose_types(spec, row, forces, rng)
        ranks = _choose_ranks(spec, row, forces, rng, max_rank)
        desc: dict[str, Any] = {}
        drawn: list[list[int]] = []
        presence = presence_as_required(spec, forced_tensors, rng)
        for tensor in tensor_like(spec):
            forced = tensor.name in forced_tensors
            if tensor.name in presence:
                if not presence[tensor.name]:
                    continue  # left out as the spec's presence rules require
            elif (
                tensor.optional
                and not tensor.is_output
                and not forced
                and (tensor.name in undefining or rng.random() < 0.3)
            ):
                continue  # an optional input left out now and then (always, if it undefines)
            if tensor.is_tensor_array:
                desc[tensor.name] = [
                    {
                        "DataType": types[f"{tensor.name}.DataType"],
                        "Sizes": _draw_sizes(ranks[tensor.name], drawn, rng),
                    }
                    for _ in range(rng.randint(1, 3))
                ]
                if tensor.count_field:
                    desc[tensor.count_field] = len(desc[tensor.name])
                continue
            entry: dict[str, Any] = {"DataType": types[f"{tensor.name}.DataType"]}
            if f"{tensor.name}.Sizes" not in derivable:
                entry["Sizes"] = _draw_sizes(ranks[tensor.name], drawn, rng)
                drawn.append(entry["Sizes"])
            desc[tensor.name] = entry
        for field in spec.fields:
            if field.kind == "data_type":
                desc[field.name] = types[field.name]
        counted = {f.count_field for f in spec.fields if f.is_array and f.count_field}
        _derive_counts(catalog, spec, desc, counted, derivable, rng, attempt >= PLAIN_AFTER)
        for field in spec.fields:
            if field.name in counted or (field.is_array and field.name in desc):
                continue  # set with its array
            if field.is_array and field.name in derivable:
                continue  # derived with the sizes below
            if field.kind in ("uint", "int"):
                desc[field.name] = _draw_in_range(catalog, spec, desc, field.name, ranks, rng)
            elif field.kind == "scalar_union":
                desc[field.name] = _scalar(
                    field.kind, desc.get(field.value_type_field or ""), catalog, rng
                )
            elif field.name in forced_members:
                desc[field.name] = forced_members[field.name]
            elif field.name in when_choices(row) and field.kind == "enum":
                desc[field.name] = rng.choice(when_choices(row)[field.name])
            elif field.kind != "operator_desc_array":
                _draw_attribute(catalog, field, desc, max(ranks.values(), default=1), rng, level)
        _draw_activation_arrays(catalog, spec, desc, rng, level)
        values_as_required(catalog, spec, desc, rng)  # before `free` copies the scalars
        wanted = [
            f"{t.name}.Sizes"
            for t in spec.tensor_fields
            if t.name in desc and "Sizes" not in desc[t.name]
        ]
        free = {k: v for k, v in desc.items()}
        for name in wanted:
            free.pop(name.partition(".")[0])
        wanted += [f.name for f in spec.fields if f.is_array and f.name in derivable - set(desc)]
        partition_along_axis(spec, desc, rng)
        windows_inside(catalog, spec, desc, rng)
        ones_where_required(spec, desc)
        try:
            derived = _derive_sizes(catalog, spec, free, wanted, ranks)
        except (ValueError, ExpressionError, LookupError, TypeError):
            continue
        for target, value in derived.items():
            owner, _, member = target.partition(".")
            if member:
                desc[owner][member] = value
            else:  # an array the equalities define (SLICE's Sizes: the output's sizes)
                desc[owner] = value
        shape_alternatives(catalog, spec, desc, rng)
        # a tensor takes an item's type where its row allows it, unless its own is forced
        allowed = {t.tensor: set(t.data_types) for t in row.tensors}
        for force in forces:
            if force.kind == "data_type" and force.tensor in allowed:
                allowed[force.tensor] = {str(force.value)}
        items_as_required(spec, desc, rng, allowed)
        if not _forced_types_kept(desc, forces):
            continue  # the item rules gave a forced tensor-array item another type
        if case_elements(desc) > MAX_CASE_ELEMENTS:
            continue
        operator = {"type": spec.operator_type, "desc": desc}
        if validate_operator(operator, level).valid:
            return operator
    wanted_cells = ", ".join(f"{f.tensor} {f.kind} {f.value}" for f in forces) or "any cell"
    raise LookupError(f"no valid {spec.name} desc found at {level} for {wanted_cells}")


def _forced_types_kept(desc: Mapping[str, Any], forces: tuple[CellChoice, ...]) -> bool:
    """Every forced data type is still held by its tensor (by an item of a tensor array)."""
    for force in forces:
        value = desc.get(force.tensor)
        if force.kind != "data_type" or not isinstance(value, list):
            continue
        if all(item.get("DataType") != force.value for item in value):
            return False
    return True


def case_elements(desc: Mapping[str, Any]) -> int:
    """The elements of every tensor of a desc (a tensor array's items each)."""
    total = 0
    for value in desc.values():
        for tensor in value if isinstance(value, list) else [value]:
            if isinstance(tensor, dict) and isinstance(tensor.get("Sizes"), list):
                total += math.prod(tensor["Sizes"])
    return total


def rows_at(catalog: Catalog, spec: OperatorSpec, level: str) -> list[SupportRow]:
    """The support rows in force at `level`: one, or one per `when` group (REDUCE's
    functions)."""
    rank = catalog.common.feature_level(level).rank
    by_group: dict[str, SupportRow] = {}
    for row in spec.support:
        if catalog.common.feature_level(row.feature_level).rank <= rank:
            by_group[row.when.source if row.when else ""] = row
    return list(by_group.values())


def _allows(row: SupportRow, force: CellChoice) -> bool:
    if force.kind == "when":
        return str(force.value) in when_choices(row).get(force.tensor, [])
    try:
        cell = row.tensor(force.tensor)
    except KeyError:
        return False
    if force.kind == "rank":
        return int(force.value) in cell.dimension_counts
    return str(force.value) in cell.data_types


def when_choices(row: SupportRow) -> dict[str, list[str]]:
    """The enum members a row's `when` names, by field (`Function == "SUM" or ...`)."""
    if row.when is None:
        return {}
    choices: dict[str, list[str]] = {}
    for name, member in re.findall(r'(\w+) == "(\w+)"', row.when.source):
        choices.setdefault(name, []).append(member)
    return choices


def _derive_counts(
    catalog: Catalog,
    spec: OperatorSpec,
    desc: dict[str, Any],
    counted: set[str],
    derivable: set[str],
    rng: random.Random,
    plain: bool = False,
) -> None:
    """Count fields the spec ties to the tensors (SLICE's DimensionCount equals
    InputTensor.DimensionCount), and arrays of that length: offsets, sizes and strides start
    small, and a draw that breaks a rule is rejected by the validator. Once many draws were
    rejected (`plain`), the arrays get the values that keep a window inside any tensor: 1 for
    sizes, strides, dilations and repeats, 0 for offsets and paddings (per-dimension rules such as
    "Offsets + (Sizes - 1) * Strides < InputTensor.Sizes" rarely hold for every dimension of a
    random draw)."""
    for name in sorted(n for n in counted if n in derivable and n not in desc):
        try:
            value = derive_members(catalog.common, spec, desc, [name]).get(name)
        except (ValueError, ExpressionError, LookupError, TypeError):
            continue
        if not isinstance(value, int):
            continue
        desc[name] = value
        for field in spec.fields:
            if field.count_field == name and field.name in derivable:
                continue  # derived with the sizes, from the spec's equalities
            if field.count_field == name and field.kind in ("uint_array", "int_array"):
                small = (-1, 0, 1, 2) if field.kind == "int_array" else (0, 0, 1, 1, 2, 3)
                one = any(w in field.name for w in ("Size", "Stride", "Repeat", "Dilation"))
                desc[field.name] = [
                    (int(one) if plain and rng.random() < 0.8 else rng.choice(small))
                    for _ in range(value)
                ]
            elif field.count_field == name and field.kind == "float_array":
                desc[field.name] = [rng.choice(_FLOATS) for _ in range(value)]


def _derive_sizes(
    catalog: Catalog,
    spec: OperatorSpec,
    free: Mapping[str, Any],
    wanted: list[str],
    ranks: Mapping[str, int],
) -> dict[str, Any]:
    """The derived `T.Sizes`; where a rule right-aligns a tensor's sizes to its own
    DimensionCount (RANDOM_GENERATOR's state: {1, ..., 1, 6}), the rank drawn for it."""
    if not wanted:
        return {}
    try:
        return derive_members(catalog.common, spec, free, wanted)
    except ValueError:
        owners = {target.partition(".")[0] for target in wanted}
        ranked = {**free, **{o: {"DimensionCount": ranks[o]} for o in owners if o in ranks}}
        return derive_members(catalog.common, spec, ranked, wanted)


_FLOATS = (1.0, 0.5, 2.0, -1.5, 0.25, 3.0, 0.0, -0.5)
_SCALES = (1.0, 0.5, 2.0, -1.0, 0.25, -0.5)


def _draw_attribute(
    catalog: Catalog,
    field: Field,
    desc: dict[str, Any],
    rank: int,
    rng: random.Random,
    level: str,
) -> None:
    """Floats, enums, BOOLs, sizes, ScaleBias, fused activations and axis arrays: a plain value, or
    for an optional field now and then none (validation keeps only what the spec allows)."""
    if field.optional and rng.random() < 0.5:
        return
    if field.kind == "float":
        desc[field.name] = rng.choice(_FLOATS)
    elif field.kind == "bool":
        desc[field.name] = rng.random() < 0.5
    elif field.kind == "size_2d":  # ROI_POOLING's PooledSize: rules tie tensor sizes to it
        desc[field.name] = {"Height": rng.randint(1, 4), "Width": rng.randint(1, 4)}
    elif field.kind == "enum":
        desc[field.name] = rng.choice(catalog.common.enum_infos()[field.enum or ""].members)
    elif field.kind == "size_2d":  # small factors (UPSAMPLE_2D's ScaleSize)
        desc[field.name] = {"Width": rng.randint(1, 3), "Height": rng.randint(1, 3)}
    elif field.kind == "scale_bias":
        # Powers of two keep x * Scale exact, so the one rounding of + Bias is the same
        # whether a device fuses the multiply-add or not.
        desc[field.name] = {"Scale": rng.choice(_SCALES), "Bias": rng.choice(_FLOATS)}
    elif field.kind == "operator_desc" and field.operator_set:
        desc[field.name] = _draw_activation(catalog, field.operator_set, rng, level)
    elif field.kind == "uint_array" and field.count_field:
        axes = sorted(rng.sample(range(rank), rng.randint(1, rank)))
        desc[field.name] = axes
        desc[field.count_field] = len(axes)


def _draw_activation_arrays(
    catalog: Catalog, spec: OperatorSpec, desc: dict[str, Any], rng: random.Random, level: str
) -> None:
    """Operator-desc arrays (RNN's ActivationDescs), as many activations as their count, which
    the spec's equalities derive from the drawn fields (Direction) or which was drawn."""
    for field in spec.fields:
        if field.kind != "operator_desc_array" or not field.operator_set or field.name in desc:
            continue
        count = field.count_field or ""
        if count not in desc:
            try:
                desc[count] = derive_members(catalog.common, spec, desc, [count])[count]
            except (ValueError, ExpressionError, LookupError, TypeError):
                desc[count] = rng.randint(1, 2)
        desc[field.name] = [
            _draw_activation(catalog, field.operator_set, rng, level)
            for _ in range(int(desc[count]))
        ]


def _draw_activation(
    catalog: Catalog, operator_set: str, rng: random.Random, level: str
) -> dict[str, Any]:
    """A member of the operator set (an activation) the set holds at `level`, with its own
    attributes drawn, inline."""
    members = next(o for o in catalog.common.operator_sets if o.name == operator_set)
    rank = catalog.common.level_rank(level)
    # A fused activation is given without tensors: one needing another input (PARAMETERIZED_RELU's
    # SlopeTensor) cannot run fused.
    fusable = [
        m
        for m in sorted(members.operators)
        if {f.name for f in catalog.operator(m).tensor_fields} <= {"InputTensor", "OutputTensor"}
        and catalog.common.level_rank(catalog.held_from(members, m)) <= rank
    ]
    spec = catalog.operator(rng.choice(fusable))
    activation: dict[str, Any] = {"Type": spec.name}
    for field in spec.fields:
        if not field.is_tensor and not field.is_tensor_array:
            _draw_attribute(catalog, field, activation, 1, rng, level)
    return activation


def _draw_in_range(
    catalog: Catalog,
    spec: OperatorSpec,
    desc: dict[str, Any],
    name: str,
    ranks: Mapping[str, int],
    rng: random.Random,
) -> int:
    field = spec.field(name)
    if field.range is not None:
        partial = {
            k: (dict(v, Sizes=v.get("Sizes", [1] * ranks.get(k, 1))) if isinstance(v, dict) else v)
            for k, v in desc.items()
        }
        env = bind_desc(catalog.common, spec, partial)
        try:
            low = int(field.range.min.evaluate(env))  # type: ignore[call-overload]
            high = int(field.range.max.evaluate(env))  # type: ignore[call-overload]
        except (Absent, ExpressionError, TypeError):
            return rng.randint(0, 4)
        high = high - 1 if field.range.max_exclusive else high
        # A field whose range is the whole UINT but whose use is small (LRN's LocalSize: a
        # region of a few elements; a LocalSize past the tensor sums it whole and scales Alpha
        # to almost nothing) names its typical values in the spec: drawn most of the time.
        typical = [v for v in field.typical if low <= v <= high]
        if typical and rng.random() < 0.8:
            return rng.choice(typical)
        return rng.randint(low, max(low, high))
    return rng.randint(0, 4)
