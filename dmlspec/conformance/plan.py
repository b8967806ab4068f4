"""A few cases that exercise every support-table cell of an operator.

One case per cell would compile one program per cell on a compiling backend (JAX on CPU: about
35 ms of tracing, lowering and compiling each, most of a first suite run). But one case
exercises a data-type cell and a rank cell of every tensor at once, and a case that is still
valid at a higher level exercises that level's cells too with the same desc, so the same
program. The plan goes level by level: it gives each cell a case of a lower level that is valid
at the cell's level and exercises it, else draws a new case that forces the cell and, where
they fit together, other cells still waiting. Every cell keeps a case drawn for its own row; the
plan is deterministic, like every draw.

Where an operator's support rows are per group of an enum field (REDUCE's, per group of
functions: `when`), each group is a table of its own: a cell two groups list gets a case in
each, and a group's new cases take its members in turn, so every function runs. Fewer cases
mean fewer random descs; the groups keep the fields that pick a row varied.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import Any

from ..binding import bind_desc
from ..model import Catalog, OperatorSpec, SupportRow
from ..validation import validate_operator
from .cases import Case, draw_case
from .descs import CellChoice, rows_at, type_groups, when_choices
from .solved import presence_allows

__all__ = [
    "CellPlan",
    "SupportCell",
    "exercised_cells",
    "plan_cells",
    "row_in_force",
    "support_cells",
]

SupportCell = tuple[str, str, str, str]  # row's feature level, tensor, kind, value
# Draws that force several cells give up early (they fall back to the first cell alone): a
# combination the rules forbid would otherwise take every attempt to find out.
COMBINED_ATTEMPTS = 40


def support_cells(spec: OperatorSpec) -> list[SupportCell]:
    """Every cell of the support tables, in table order: a tensor's data types, then ranks
    (once each: REDUCE's row groups repeat cells)."""
    return list(dict.fromkeys(cell[1:] for cell in _row_cells(spec)))


def row_in_force(
    catalog: Catalog, spec: OperatorSpec, operator: dict[str, Any], level: str
) -> SupportRow | None:
    """The support row a desc is checked against at `level` (REDUCE's: per function)."""
    rows = rows_at(catalog, spec, level)
    if all(r.when is None for r in rows):
        return rows[0] if rows else None
    env = bind_desc(catalog.common, spec, operator["desc"])
    return next((r for r in rows if r.when is None or r.when.evaluate(env)), None)


def exercised_cells(
    catalog: Catalog, spec: OperatorSpec, operator: dict[str, Any], level: str
) -> list[SupportCell]:
    """The cells a desc run at `level` exercises: its row's, one data type and rank per tensor
    (each item of a tensor array)."""
    row = row_in_force(catalog, spec, operator, level)
    if row is None:
        return []
    found: list[SupportCell] = []
    for cell in row.tensors:
        value = operator["desc"].get(cell.tensor)
        if value is None:  # an optional tensor the desc leaves out
            continue
        for tensor in value if isinstance(value, list) else [value]:
            found.append((row.feature_level, cell.tensor, "data_type", tensor["DataType"]))
            found.append((row.feature_level, cell.tensor, "rank", str(len(tensor["Sizes"]))))
    return found


@dataclass(frozen=True)
class CellPlan:
    # Each cell's cases at the cell's level: one per support row that lists the cell (REDUCE's
    # rows are per group of functions, each its own table: a cell is exercised in each).
    cases: dict[SupportCell, tuple[Case, ...]]
    unfound: dict[SupportCell, str]  # cells no valid desc was found for: why


_RowCell = tuple[str, str, str, str, str]  # the row's `when` ("" for none), then a SupportCell


def plan_cells(catalog: Catalog, spec: OperatorSpec) -> CellPlan:
    row_cells = _row_cells(spec)
    covered: dict[_RowCell, Case] = {}
    unfound: dict[SupportCell, str] = {}
    drawn: list[Case] = []
    members_used: dict[str, int] = {}  # a row group's cases so far: its `when` members in turn
    for level in dict.fromkeys(cell[1] for cell in row_cells):
        waiting = [cell for cell in row_cells if cell[1] == level]
        for earlier in drawn:
            if not waiting:
                break
            if validate_operator(earlier.operator, level).valid:
                _cover(catalog, spec, replace(earlier, feature_level=level), waiting, covered)
        while waiting:
            first = waiting[0]
            group = first[0]
            forces = _forces_with(spec, first, [c for c in waiting[1:] if c[0] == group])
            member = _next_member(spec, group, level, members_used)
            named = first if group else first[1:]  # the row group only where there are some
            seed = zlib.crc32("/".join((spec.name, *named)).encode())
            try:
                case = _draw(catalog, spec, level, seed, forces, member)
            except LookupError as error:
                unfound[first[1:]] = str(error)
                waiting.remove(first)
                continue
            drawn.append(case)
            _cover(catalog, spec, case, waiting, covered)
            if first in waiting:  # the draw honours its forces: a bug if reached
                raise AssertionError(f"a case drawn for {first} does not exercise it")
    cases: dict[SupportCell, tuple[Case, ...]] = {}
    for row_cell, case in covered.items():
        listed = cases.get(row_cell[1:], ())
        shared = any(case is c for c in listed)  # by identity: cases hold NumPy arrays
        cases[row_cell[1:]] = listed if shared else (*listed, case)
    return CellPlan(cases, {c: why for c, why in unfound.items() if c not in cases})


def _row_cells(spec: OperatorSpec) -> list[_RowCell]:
    cells = []
    for row in spec.support:
        group = _group(row)
        for cell in row.tensors:
            cells += [
                (group, row.feature_level, cell.tensor, "data_type", t) for t in cell.data_types
            ]
            cells += [
                (group, row.feature_level, cell.tensor, "rank", str(n))
                for n in cell.dimension_counts
            ]
    return list(dict.fromkeys(cells))


def _next_member(
    spec: OperatorSpec, group: str, level: str, used: dict[str, int]
) -> CellChoice | None:
    """The row group's next `when` member (REDUCE: the next function of the group), so that
    a group's cases go through its members in turn; None for an operator without groups."""
    row = next(r for r in spec.support if r.feature_level == level and _group(r) == group)
    choices = when_choices(row)
    if not choices:
        return None
    field, members = next(iter(choices.items()))
    turn = used.get(group, 0)
    used[group] = turn + 1
    return CellChoice(field, "when", members[turn % len(members)])


def _group(row: SupportRow) -> str:
    return row.when.source if row.when else ""


def _cover(
    catalog: Catalog,
    spec: OperatorSpec,
    case: Case,
    waiting: list[_RowCell],
    covered: dict[_RowCell, Case],
) -> None:
    """Give `case` to the waiting cells it exercises (taken off `waiting`)."""
    row = row_in_force(catalog, spec, case.operator, case.feature_level)
    group = _group(row) if row is not None else ""
    exercised = {
        (group, *cell) for cell in exercised_cells(catalog, spec, case.operator, case.feature_level)
    }
    for cell in [c for c in waiting if c in exercised]:
        covered[cell] = case
        waiting.remove(cell)


def _draw(
    catalog: Catalog,
    spec: OperatorSpec,
    level: str,
    seed: int,
    forces: tuple[CellChoice, ...],
    member: CellChoice | None,
) -> Case:
    """A case with every forced cell, else with the first alone (the row group's member kept:
    it picks the row the cell is of)."""
    group = () if member is None else (member,)
    if len(forces) > 1:
        try:
            return draw_case(
                catalog, spec, level, seed, (*forces, *group), COMBINED_ATTEMPTS, streams=1
            )
        except LookupError:
            pass
    return draw_case(catalog, spec, level, seed, (forces[0], *group))


def _forces_with(
    spec: OperatorSpec, first: _RowCell, others: list[_RowCell]
) -> tuple[CellChoice, ...]:
    """`first` and, in order, each waiting cell of a group (tensors whose data types, or
    ranks, the rules tie together) nothing forces yet."""
    forces: list[CellChoice] = []
    taken: set[tuple[str, int]] = set()
    for _, _, tensor, kind, value in [first, *others]:
        group = _group_of(spec, tensor, kind)
        if (kind, group) in taken:
            continue
        if not presence_allows(spec, {f.tensor for f in forces} | {tensor}):
            continue  # a draw giving both tensors is never valid: all its attempts wasted
        taken.add((kind, group))
        forces.append(CellChoice(tensor, kind, int(value) if kind == "rank" else value))
    return tuple(forces)


def _group_of(spec: OperatorSpec, tensor: str, kind: str) -> int:
    member = "DataType" if kind == "data_type" else "DimensionCount"
    slot = f"{tensor}.{member}"
    return next((i for i, g in enumerate(type_groups(spec, member)) if slot in g), -1)
