"""A valid desc of any operator, for negative tests and fuzzing of the validators.

First choice: a documented example (its corrected form where it has errata) that the
validator accepts. Otherwise one is built from the spec (and where none can be, drawn as the
suites draw descs): every tensor of the support row in
force gets a shared data type and rank where the row allows one, arrays get as many items as
their count fields say, other fields simple values, and then each scalar field the validator
complains about is given the next candidate value until the desc is valid or the candidates
run out. Only the constraints the spec encodes are satisfied: that is what the validator
checks, so it is what its tests need.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterator
from typing import Any

from ..binding import derive_members
from ..expr import ExpressionError
from ..model import Catalog, OperatorSpec, SupportRow
from ..validation import validate_operator
from .descs import rows_at
from .mutate import rederive, resized

__all__ = ["base_desc", "base_descs", "example_desc"]

Desc = dict[str, Any]
_PREFERRED_TYPES = ("FLOAT32", "FLOAT16", "UINT32", "INT32", "UINT8", "INT8")
_SCALAR_CANDIDATES = {
    "uint": (1, 0, 2, 3, 4, 5),
    "uint64": (1, 0, 2),
    "int": (0, 1, -1, 2),
    "float": (1.0, 0.5, 0.0, 2.0),
    "bool": (False, True),
    "scalar_union": (1, 0, 2),
}
# Arrays a rule blames are tried with every item set to the next candidate (window offsets
# of 0, say, where a window of 1 must fit a size of 1).
_ARRAY_CANDIDATES = {"uint_array": (1, 0, 2), "int_array": (1, 0, -1, 2)}
_DRAWS = 24  # descs drawn where none is built


def example_desc(spec: OperatorSpec, fields: Any) -> Desc:
    """An example's fields as operator JSON desc (tensor values left out)."""
    from ..lint import operator_json

    desc: Desc = operator_json(spec, fields)["desc"]
    return desc


def _valid(spec: OperatorSpec, desc: Desc, level: str) -> bool:
    return validate_operator({"type": spec.operator_type, "desc": desc}, level).valid


def base_desc(catalog: Catalog, spec: OperatorSpec, level: str | None = None) -> Desc | None:
    """A desc the validator accepts at `level` (default: the highest), or None if none found."""
    found = base_descs(catalog, spec, level, limit=1)
    return found[0] if found else None


def base_descs(
    catalog: Catalog, spec: OperatorSpec, level: str | None = None, limit: int = 4
) -> list[Desc]:
    """Up to `limit` different valid descs: the documented examples first, then built ones.
    Found once per catalog, operator, level and limit (drawing MULTIHEAD_ATTENTION's takes
    seconds and a negative search asks for them per rule); fresh copies each time: callers edit
    them."""
    level = level or catalog.common.highest_feature_level.name
    key = (id(catalog), id(spec), level, limit)
    if key not in _FOUND:
        _FOUND[key] = (catalog, spec, _base_descs(catalog, spec, level, limit))
    return copy.deepcopy(_FOUND[key][2])


# (catalog, spec, descs) per key; the catalog and spec kept so that their ids stay their own
_FOUND: dict[tuple[int, int, str, int], tuple[Catalog, OperatorSpec, list[Desc]]] = {}


def _base_descs(catalog: Catalog, spec: OperatorSpec, level: str, limit: int) -> list[Desc]:
    found: list[Desc] = []
    for example in spec.examples:
        desc = example_desc(spec, example.valid_form)
        if desc not in found and _valid(spec, desc, level):
            found.append(desc)
        if len(found) >= limit:
            return found
    for desc in _built(catalog, spec, level):
        repaired = _repair(spec, desc, level)
        if repaired is None:  # sizes only the spec's equalities give (a state tensor's)
            derived = rederive(catalog, spec, desc, keep=set())
            repaired = None if derived is None else _repair(spec, derived, level)
        if repaired is not None and repaired not in found:
            found.append(repaired)
        if len(found) >= limit:
            break
    if not found:  # tensors tied by presence and size rules (MULTIHEAD_ATTENTION's forms)
        found += _drawn(catalog, spec, level, limit)
    return found


def _drawn(catalog: Catalog, spec: OperatorSpec, level: str, limit: int) -> list[Desc]:
    """Descs drawn as the suites draw them (rules solved), those giving the most optional
    fields first, so that negative tests can break the rules on them."""
    from .descs import draw_desc

    drawn: list[Desc] = []
    for seed in range(_DRAWS):
        try:
            desc = draw_desc(catalog, spec, level, random.Random(seed), attempts=20)["desc"]
        except LookupError:
            continue
        if desc not in drawn:
            drawn.append(desc)
    drawn.sort(key=lambda desc: -len(desc))  # stable: the earlier seed first among equals
    return drawn[:limit]


def _built(catalog: Catalog, spec: OperatorSpec, level: str) -> Iterator[Desc]:
    for row in rows_at(catalog, spec, level):
        cells = [c for c in row.tensors if c.data_types and c.dimension_counts]
        if not cells:
            continue
        shared_ranks = set.intersection(*(set(c.dimension_counts) for c in cells))
        ranks: list[int | None] = [*sorted(shared_ranks, key=lambda r: (r != 4, r))] or [None]
        shared_types = set.intersection(*(set(c.data_types) for c in cells))
        types: list[str | None] = [*sorted(shared_types, key=_type_order)] or [None]
        for rank, data_type in itertools.product(ranks[:3], types[:3]):
            yield _desc(catalog, spec, row, rank, data_type)


def _type_order(name: str) -> tuple[int, str]:
    return (_PREFERRED_TYPES.index(name) if name in _PREFERRED_TYPES else 99, name)


def _desc(
    catalog: Catalog, spec: OperatorSpec, row: SupportRow, rank: int | None, data_type: str | None
) -> Desc:
    cells = {c.tensor: c for c in row.tensors}
    desc: Desc = {}

    def tensor(name: str) -> Desc | None:
        cell = cells.get(name)
        if cell is None or not cell.data_types or not cell.dimension_counts:
            return None
        chosen_type = (
            data_type if data_type in cell.data_types else min(cell.data_types, key=_type_order)
        )
        chosen_rank = rank if rank in cell.dimension_counts else min(cell.dimension_counts)
        return {"DataType": chosen_type, "Sizes": [1] * chosen_rank}

    counts: dict[str, int] = {}
    for field in spec.fields:
        if field.is_array and field.count_field:
            counts.setdefault(
                field.count_field, (rank or 4) if "Dimension" in field.count_field else 1
            )
    for field in spec.fields:
        if field.is_tensor:
            value = tensor(field.name)
            if value is not None:
                desc[field.name] = value
        elif field.is_tensor_array:
            value = tensor(field.name)
            if value is not None:
                desc[field.name] = [
                    copy.deepcopy(value) for _ in range(counts[field.count_field or ""])
                ]
        elif field.name in counts:
            desc[field.name] = counts[field.name]
        elif field.kind in ("uint_array", "int_array", "float_array"):
            item = 1.0 if field.kind == "float_array" else 1
            desc[field.name] = [item] * counts.get(field.count_field or "", 1)
        elif field.kind == "enum":
            members = catalog.common.enum_infos()[field.enum or ""].members
            desc[field.name] = _enum_for_row(row, field.name, members)
        elif field.kind == "data_type":
            desc[field.name] = data_type or "FLOAT32"
        elif field.kind == "size_2d":
            desc[field.name] = {"Width": 1, "Height": 1}
        elif field.kind == "operator_desc_array":
            desc[field.name] = [{"Type": "ACTIVATION_RELU"}] * counts.get(
                field.count_field or "", 1
            )
        elif field.kind in _SCALAR_CANDIDATES and not field.optional:
            desc[field.name] = _SCALAR_CANDIDATES[field.kind][0]
    return _derived_counts(catalog, spec, desc)


def _derived_counts(catalog: Catalog, spec: OperatorSpec, desc: Desc) -> Desc:
    """Count fields the spec's equalities define from the tensors (CONVOLUTION's
    DimensionCount: the rank less 2), their arrays resized along."""
    for field in spec.fields:
        counted = [f for f in spec.fields if f.count_field == field.name and f.kind in _ITEMS]
        if not counted or field.name not in desc:
            continue
        try:
            others = {k: v for k, v in desc.items() if k != field.name}
            value = derive_members(catalog.common, spec, others, [field.name])[field.name]
        except (ValueError, ExpressionError, LookupError, TypeError):
            continue
        if isinstance(value, int) and value >= 0 and value != desc[field.name]:
            desc = resized(spec, desc, field.name, value)
    return desc


_ITEMS = ("uint_array", "int_array", "float_array")


def _enum_for_row(row: SupportRow, name: str, members: tuple[str, ...]) -> str:
    """A member the row's `when` names (REDUCE's Function), else the first."""
    if row.when is not None:
        for member in members:
            if f'{name} == "{member}"' in row.when.source:
                return member
    return members[0]


def _repair(spec: OperatorSpec, desc: Desc, level: str, rounds: int = 12) -> Desc | None:
    """Give each scalar field (or array) a rule points at its next candidate (every item set
    to it), until the desc is valid."""
    kinds = {f.name: f.kind for f in spec.fields}
    candidates_of = {**_SCALAR_CANDIDATES, **_ARRAY_CANDIDATES}
    tried: dict[str, int] = {}
    for _ in range(rounds):
        result = validate_operator({"type": spec.operator_type, "desc": desc}, level)
        if result.valid:
            return desc
        blamed = [
            v.path.split("/")[2]
            for v in result.violations
            if v.path.count("/") == 2 and kinds.get(v.path.split("/")[2]) in candidates_of
        ]
        if not blamed:
            return None
        name = blamed[0]
        candidates = candidates_of[kinds[name]]
        tried[name] = tried.get(name, 0) + 1
        if tried[name] >= len(candidates):
            return None
        if kinds[name] in _ARRAY_CANDIDATES:
            desc = {**desc, name: [candidates[tried[name]]] * len(desc.get(name, []))}
        else:  # a count field takes its arrays along (DimensionCount sizes Strides, ...)
            desc = resized(spec, desc, name, candidates[tried[name]])
    return None
