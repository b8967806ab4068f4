"""Valid operator descs of any rank, and spec-driven mutations of them, for validator tests.

The factories are test data (each is checked valid by the tests); which values depend on
which is read from the specs' own equality constraints (`dmlspec.binding.derive_members`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from dmlspec.binding import derive_members
from dmlspec.expr import ExpressionError, nodes
from dmlspec.model import Catalog, OperatorSpec

Desc = dict[str, Any]


def _ones(rank: int, tail: list[int]) -> list[int]:
    return [1] * (rank - len(tail)) + tail


def _nd(rank: int, output_name: str, scatter: bool) -> Desc:
    """ScatterND/GatherND: one meaningful input dimension of 8, 4 index tuples of 1 coordinate."""
    indices, count = ([4, 1], 2) if rank >= 2 else ([1], 1)
    derived = _ones(rank, [4] if rank >= 2 else [1])
    desc: Desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": _ones(rank, [8])},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": _ones(rank, indices)},
        output_name: {"DataType": "FLOAT32", "Sizes": derived},
        "InputDimensionCount": 1,
        "IndicesDimensionCount": count,
    }
    if scatter:
        desc["OutputTensor"] = {"DataType": "FLOAT32", "Sizes": _ones(rank, [8])}
    return desc


FACTORIES: dict[str, Callable[[int], Desc]] = {
    "SCATTER_ND": lambda r: _nd(r, "UpdatesTensor", scatter=True),
    "GATHER_ND": lambda r: _nd(r, "OutputTensor", scatter=False),
    "SCATTER_ELEMENTS": lambda r: {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [5])},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": _ones(r, [4])},
        "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [4])},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [5])},
        "Axis": r - 1,
    },
    "FILL_VALUE_SEQUENCE": lambda r: {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [3])},
        "ValueDataType": "FLOAT32",
        "ValueStart": 1,
        "ValueDelta": 2,
    },
}


def operator(spec: OperatorSpec, desc: Desc) -> dict[str, Any]:
    return {"type": spec.operator_type, "desc": desc}


def derivable(catalog: Catalog, spec: OperatorSpec, exclude: tuple[str, ...] = ()) -> list[str]:
    """Sizes and data types the spec's equalities define (DimensionCount follows Sizes)."""
    from dmlspec.expr.solve import derivations

    definitions = {d.name: d.expr.tree for d in spec.definitions}
    rules = [(c.id, c.expr.tree) for c in spec.constraints if c.id not in exclude]
    kinds = {f.name: f.kind for f in spec.fields}
    return [
        d.target
        for d in derivations(rules, definitions)
        if d.target.endswith((".Sizes", ".DataType")) or kinds.get(d.target) == "data_type"
    ]


def rederive(
    catalog: Catalog, spec: OperatorSpec, desc: Desc, keep: set[str], exclude: tuple[str, ...] = ()
) -> Desc | None:
    """Recompute every derivable value except those in `keep`; None if that fails."""
    targets = [t for t in derivable(catalog, spec, exclude) if t not in keep]
    fixed = copy.deepcopy(desc)
    for target in targets:  # remove, so each is derived from the free values only
        owner, _, member = target.partition(".")
        if member:
            fixed.get(owner, {}).pop(member, None)
        else:
            fixed.pop(owner, None)
    free = {k: v for k, v in fixed.items() if not isinstance(v, dict) or "Sizes" in v}
    try:
        values = derive_members(catalog.common, spec, free, targets, exclude=exclude)
    except (ValueError, ExpressionError, LookupError, TypeError):
        return None
    for target, value in values.items():
        owner, _, member = target.partition(".")
        if member:
            fixed.setdefault(owner, {})[member] = value
        else:
            fixed[owner] = value
    return fixed


def mutations(spec: OperatorSpec, desc: Desc) -> Iterator[tuple[str, set[str], Desc]]:
    """Single changes to one value: (description, what was changed, new desc)."""
    for field in spec.fields:
        value = desc.get(field.name)
        if field.kind == "uint" and isinstance(value, int):
            for new in sorted({0, value + 1, value + 2, max(value - 1, 0), 9}):
                if new != value:
                    changed = copy.deepcopy(desc)
                    changed[field.name] = new
                    yield f"{field.name}={new}", {field.name}, changed
        if field.is_tensor and isinstance(value, dict):
            sizes = value["Sizes"]
            variants = []
            for i, size in enumerate(sizes):
                for new in (size + 1, size - 1, 1, 2, 3):
                    if new >= 1 and new != size:
                        variants.append(
                            (f"{field.name}.Sizes[{i}]={new}", [*sizes[:i], new, *sizes[i + 1 :]])
                        )
            variants.append((f"{field.name}.Sizes with a leading 1", [1, *sizes]))
            if len(sizes) > 1 and sizes[0] == 1:
                variants.append((f"{field.name}.Sizes without its leading 1", sizes[1:]))
            for label, new_sizes in variants:
                changed = copy.deepcopy(desc)
                changed[field.name]["Sizes"] = new_sizes
                yield label, {f"{field.name}.Sizes"}, changed
            for data_type in ("FLOAT16", "INT32", "UINT32", "INT64"):
                if data_type != value["DataType"]:
                    changed = copy.deepcopy(desc)
                    changed[field.name]["DataType"] = data_type
                    yield f"{field.name}.DataType={data_type}", {f"{field.name}.DataType"}, changed
        if field.kind == "data_type" and isinstance(value, str):
            changed = copy.deepcopy(desc)
            changed[field.name] = "INT32" if value != "INT32" else "FLOAT32"
            yield f"{field.name}={changed[field.name]}", {field.name}, changed


def reads(spec: OperatorSpec, constraint_id: str) -> set[str]:
    """Fields and members a constraint reads (through definitions)."""
    from dmlspec.expr.solve import references

    definitions = {d.name: d.expr.tree for d in spec.definitions}
    constraint = spec.constraint(constraint_id)
    found = references(constraint.expr.tree, definitions)
    return found | {n.id for n in nodes.walk(constraint.expr.tree) if isinstance(n, nodes.Name)}


def data_type_group(spec: OperatorSpec, slot: str) -> set[str]:
    """Every data-type slot ("OutputTensor.DataType", "ValueDataType") the spec's equalities
    tie to `slot`, `slot` included."""
    from dmlspec.expr.solve import derivations, target_of

    kinds = {f.name: f.kind for f in spec.fields}

    def is_type_slot(name: str | None) -> bool:
        return name is not None and (name.endswith(".DataType") or kinds.get(name) == "data_type")

    definitions = {d.name: d.expr.tree for d in spec.definitions}
    links = [
        (d.target, target_of(d.expr))
        for d in derivations(((c.id, c.expr.tree) for c in spec.constraints), definitions)
        if is_type_slot(d.target) and is_type_slot(target_of(d.expr))
    ]
    group = {slot}
    while True:
        grown = group | {b for a, b in links if a in group} | {a for a, b in links if b in group}
        if grown == group:
            return {s for s in group if s is not None}
        group = grown  # type: ignore[assignment]


def set_slot(desc: Desc, slot: str, value: str) -> None:
    owner, _, member = slot.partition(".")
    if member:
        desc[owner][member] = value
    else:
        desc[owner] = value
