"""Break exactly one constraint of a valid desc: single changes, dependents re-derived.

A change to one value (a size, a data type, a field) is applied, then every value the spec's
equalities define is derived again from the free values, except the changed one and those the
target constraint itself defines. The first result the validator rejects for exactly that
constraint is the negative case. A result that holds every field the constraint (and each rule
it depends on) reads as the valid base held it is skipped without validating: the constraint
still holds there.

Every constraint of an operator is broken from the same bases, so the searches meet the same
candidates again: a process remembers each candidate's re-derived form and the rules it breaks
(keyed by content, so a caller's edits cannot leak into it).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..binding import SpecMemo, definition_trees, derive_members, per_spec, spec_derivations
from ..expr import ExpressionError, nodes
from ..expr.solve import derivations, references
from ..model import Catalog, OperatorSpec
from ..validation import validate_operator

__all__ = ["break_constraint", "derivable", "mutations", "needed_present", "rederive"]

Desc = dict[str, Any]


def derivable(spec: OperatorSpec, exclude: tuple[str, ...] = ()) -> list[str]:
    """Sizes and data types the spec's equalities define (DimensionCount follows Sizes)."""
    definitions = definition_trees(spec)
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
    targets = [t for t in derivable(spec, exclude) if t not in keep]
    fixed = copy.deepcopy(desc)
    ranks: dict[str, int] = {}
    for target in targets:  # removed, so each is derived from the free values only
        owner, _, member = target.partition(".")
        if member:
            if member == "Sizes" and isinstance(fixed.get(owner, {}).get("Sizes"), list):
                ranks[owner] = len(fixed[owner]["Sizes"])
            fixed.get(owner, {}).pop(member, None)
        else:
            fixed.pop(owner, None)
    # A tensor whose Sizes are derived keeps its other members (its DataType, which another
    # tensor's derived DataType may copy).
    free = {k: v for k, v in fixed.items() if not isinstance(v, dict) or "Sizes" in v or k in ranks}
    try:
        try:
            values = derive_members(catalog.common, spec, free, targets, exclude=exclude)
        except ValueError:  # sizes right-aligned to the tensor's own rank: keep the rank
            ranked = {**free, **{o: {**free[o], "DimensionCount": r} for o, r in ranks.items()}}
            values = derive_members(catalog.common, spec, ranked, targets, exclude=exclude)
    except (ValueError, ExpressionError, LookupError, TypeError):
        return None
    for target, value in values.items():
        owner, _, member = target.partition(".")
        if member:
            fixed.setdefault(owner, {})[member] = value
        else:
            fixed[owner] = value
    return fixed


_NEUTRAL_ITEMS: dict[str, Any] = {"uint_array": 1, "int_array": 1, "float_array": 1.0}


def resized(spec: OperatorSpec, desc: Desc, count_field: str, count: Any) -> Desc:
    """`desc` with `count_field` set and every array it sizes given that many items."""
    changed = copy.deepcopy(desc)
    changed[count_field] = count
    for field in spec.fields:
        items = changed.get(field.name)
        if field.count_field != count_field or not isinstance(items, list):
            continue
        # An array emptied by an earlier count of 0 grows back with a neutral item.
        item = items[-1] if items else _NEUTRAL_ITEMS.get(field.kind)
        if item is not None:
            changed[field.name] = [copy.deepcopy(item) for _ in range(int(count))]
    return changed


def mutations(
    spec: OperatorSpec,
    desc: Desc,
    data_types: tuple[str, ...] = (),
    enums: Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[tuple[str, set[str], Desc]]:
    """Single changes to one value: (description, what was changed, new desc). A count field
    changes with the arrays it sizes; `data_types` are tried after the usual four; `enums`
    (enumeration -> members) lets enum fields take every other member."""
    for field in spec.fields:
        value = desc.get(field.name)
        if field.kind in ("uint", "int", "uint64") and isinstance(value, int):
            news = {0, value + 1, value + 2, max(value - 1, 0), 9}
            if field.kind == "int":
                news |= {-1, value - 1}
            for new in sorted(news):
                if new != value:
                    changed = resized(spec, desc, field.name, new)
                    yield f"{field.name}={new}", {field.name}, changed
        if field.kind == "float" and isinstance(value, int | float):
            for new_float in (-1.0, 0.0, 0.5, 1.5, 2.0, 1e9):
                if new_float != value:
                    yield (
                        f"{field.name}={new_float}",
                        {field.name},
                        {**copy.deepcopy(desc), field.name: new_float},
                    )
        if field.kind == "bool" and isinstance(value, bool):
            yield (
                f"{field.name}={not value}",
                {field.name},
                {**copy.deepcopy(desc), field.name: not value},
            )
        if field.kind == "enum" and isinstance(value, str) and enums and field.enum:
            for member in enums.get(field.enum, ()):
                if member != value:
                    yield (
                        f"{field.name}={member}",
                        {field.name},
                        {**copy.deepcopy(desc), field.name: member},
                    )
        if field.kind in ("uint_array", "int_array", "float_array") and isinstance(value, list):
            for i, item in enumerate(value):
                for new in (0, 1, 2, 9, -1, item + 1):
                    if new != item and (new >= 0 or field.kind != "uint_array"):
                        changed = copy.deepcopy(desc)
                        changed[field.name][i] = new
                        yield f"{field.name}[{i}]={new}", {field.name}, changed
        if field.optional and field.name in desc:
            changed = copy.deepcopy(desc)
            del changed[field.name]
            yield f"without {field.name}", {field.name}, changed
        if field.is_tensor and isinstance(value, dict):
            yield from _tensor_mutations(field.name, value, desc, data_types)
        if field.kind == "data_type" and isinstance(value, str):
            changed = copy.deepcopy(desc)
            changed[field.name] = "INT32" if value != "INT32" else "FLOAT32"
            yield f"{field.name}={changed[field.name]}", {field.name}, changed


def _tensor_mutations(
    name: str, tensor: Desc, desc: Desc, data_types: tuple[str, ...] = ()
) -> Iterator[tuple[str, set[str], Desc]]:
    sizes = tensor["Sizes"]
    variants = []
    for i, size in enumerate(sizes):
        for new in (size + 1, size - 1, 1, 2, 3):
            if new >= 1 and new != size:
                variants.append((f"{name}.Sizes[{i}]={new}", [*sizes[:i], new, *sizes[i + 1 :]]))
    variants.append((f"{name}.Sizes with a leading 1", [1, *sizes]))
    if len(sizes) > 1 and sizes[0] == 1:
        variants.append((f"{name}.Sizes without its leading 1", sizes[1:]))
    for label, new_sizes in variants:
        changed = copy.deepcopy(desc)
        changed[name]["Sizes"] = new_sizes
        yield label, {f"{name}.Sizes"}, changed
    candidates = ("FLOAT16", "INT32", "UINT32", "INT64")
    for data_type in candidates + tuple(t for t in data_types if t not in candidates):
        if data_type != tensor["DataType"]:
            changed = copy.deepcopy(desc)
            changed[name]["DataType"] = data_type
            yield f"{name}.DataType={data_type}", {f"{name}.DataType"}, changed


def break_constraint(
    catalog: Catalog, spec: OperatorSpec, bases: Iterable[Desc], constraint_id: str, level: str
) -> Desc | None:
    """A desc derived from one of `bases` that breaks exactly `constraint_id`, or None."""
    data_types = tuple(d.name for d in catalog.common.data_types if d.kind != "unknown")
    enums = {name: info.members for name, info in catalog.common.enum_infos().items()}
    # Leaving out a rule no derivation comes from derives the same values as leaving out none.
    exclude = (constraint_id,) if _derives(spec, constraint_id) else ()
    reads = _fields_read(spec, constraint_id)
    needed = needed_present(spec, constraint_id)
    for base in bases:
        if any(base.get(name) is None for name in needed):
            continue  # no single change gives a tensor: the rule holds in every candidate
        for _, changed, desc in mutations(spec, base, data_types, enums):
            text = json.dumps(desc)
            fixed = _rederived(catalog, spec, text, tuple(sorted(changed)), exclude)
            # Where the dependents cannot be re-derived, the single change itself may do.
            for candidate in (fixed, text) if fixed is not None else (text,):
                if reads is not None and not _changes(base, candidate, reads):
                    continue  # the rule reads what it read in the valid base: it holds
                if _fired(spec.operator_type, level, candidate) == (constraint_id,):
                    broken: Desc = json.loads(candidate)
                    return broken
    return None


def needed_present(spec: OperatorSpec, constraint_id: str) -> tuple[str, ...]:
    """The optional fields a rule `not present(T) or ... or rule` needs given to be broken
    (each operand of its `or` must be false). `mutations` never adds a field, so a base
    without one of them cannot lead to a desc that breaks the rule (MULTIHEAD_ATTENTION's
    rules of its stacked forms: most bases hold another form)."""
    tree = next(c.expr.tree for c in spec.constraints if c.id == constraint_id)
    if not (isinstance(tree, nodes.BoolOp) and tree.op == "or"):
        return ()
    return tuple(
        operand.operand.args[0].id
        for operand in tree.values
        if isinstance(operand, nodes.Unary)
        and operand.op == "not"
        and isinstance(operand.operand, nodes.Call)
        and operand.operand.func == "present"
        and len(operand.operand.args) == 1
        and isinstance(operand.operand.args[0], nodes.Name)
    )


def _fields_read(spec: OperatorSpec, constraint_id: str) -> frozenset[str] | None:
    """The desc fields a rule and the rules it depends on read, seeing through definitions (a
    scalar union's value-type field with it: the value is read as that type); None where it
    depends on a rule that is not the spec's. Remembered per spec object."""
    return per_spec(_READS, spec, constraint_id, lambda: _read_by(spec, constraint_id))


def _read_by(spec: OperatorSpec, constraint_id: str) -> frozenset[str] | None:
    by_id = {c.id: c for c in spec.constraints}
    fields = {f.name: f for f in spec.fields}
    read: set[str] = set()
    pending, seen = [constraint_id], set()
    while pending:
        rule_id = pending.pop()
        if rule_id in seen:
            continue
        seen.add(rule_id)
        if rule_id not in by_id:
            return None
        pending += by_id[rule_id].depends_on
        for name in references(by_id[rule_id].expr.tree, definition_trees(spec)):
            field = fields.get(name.split(".")[0])
            if field is None:
                continue
            read.add(field.name)
            if field.value_type_field is not None:
                read.add(field.value_type_field)
    return frozenset(read)


_READS: SpecMemo[frozenset[str] | None] = {}


def _changes(base: Desc, candidate: str, fields: frozenset[str]) -> bool:
    """Whether the candidate (JSON text) holds another value than `base` in one of `fields`
    (compared as JSON: 1, 1.0 and true are different values to the validator)."""
    changed = json.loads(candidate)
    return any(json.dumps(changed.get(f)) != json.dumps(base.get(f)) for f in fields)


def _derives(spec: OperatorSpec, constraint_id: str) -> bool:
    return any(d.constraint_id == constraint_id for d in spec_derivations(spec))


@functools.lru_cache(maxsize=1 << 16)
def _fired(operator_type: str, level: str, desc: str) -> tuple[str, ...]:
    """The rules a desc (as JSON text) breaks at `level`, each once."""
    return validate_operator({"type": operator_type, "desc": json.loads(desc)}, level).fired()


_REDERIVED: SpecMemo[str | None] = {}
_REDERIVED_LIMIT = 1 << 16


def _rederived(
    catalog: Catalog, spec: OperatorSpec, desc: str, keep: tuple[str, ...], exclude: tuple[str, ...]
) -> str | None:
    """`rederive` of a desc given as JSON text, as JSON text; remembered per spec object."""

    def compute() -> str | None:
        fixed = rederive(catalog, spec, json.loads(desc), set(keep), exclude)
        return None if fixed is None else json.dumps(fixed)

    return per_spec(_REDERIVED, spec, (desc, keep, exclude), compute, _REDERIVED_LIMIT)
