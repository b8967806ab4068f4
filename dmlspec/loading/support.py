"""An operator's support tables: rows by feature level, each a superset of the one below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import model as m
from ..expr import Scope
from ..expr.types import BOOL
from .operator_base import OperatorBuilderBase

__all__ = ["SupportBuilder"]


class SupportBuilder(OperatorBuilderBase):
    def support(self, fields: list[m.Field], scope: Scope) -> tuple[m.SupportRow, ...]:
        """Rows ascend by level within each `when` group (one group for most operators)."""
        rows: list[m.SupportRow] = []
        tensor_names = [f.name for f in fields if f.is_tensor or f.is_tensor_array]
        seen_levels: dict[tuple[str, str], int] = {}
        previous: dict[str, m.SupportRow] = {}
        for i, raw in enumerate(self.data["support"]):
            at: list[str | int] = ["support", i]
            level = raw["feature_level"]
            group = raw.get("when", "")
            if not self.level(level, [*at, "feature_level"]):
                continue
            when = self.compile_typed(group, scope, BOOL, [*at, "when"]) if group else None
            if (level, group) in seen_levels:
                self.report.at(
                    [*at, "feature_level"],
                    f"support rows overlap: {level} already has row {seen_levels[level, group]}",
                )
                continue
            seen_levels[level, group] = i
            if self.level_ranks[level] < self.level_ranks.get(self.data["introduced"], 0):
                self.report.at(
                    [*at, "feature_level"],
                    f"row {level} is below the level the operator was introduced "
                    f"({self.data['introduced']})",
                )
            before = previous.get(group)
            if (
                before is not None
                and self.level_ranks[level] < self.level_ranks[before.feature_level]
            ):
                self.report.at(
                    [*at, "feature_level"],
                    "support rows must be in ascending feature-level order "
                    f"({level} after {before.feature_level})",
                )
            tensors = self.support_tensors(raw["tensors"], level, fields, at)
            listed = [t.tensor for t in tensors]
            for name in tensor_names:
                if name not in listed:
                    self.report.at([*at, "tensors"], f"the {level} row lists no {name}")
            row = m.SupportRow(
                level,
                self.sources(raw["sources"], [*at, "sources"]),
                tuple(tensors),
                raw.get("note"),
                when,
            )
            if before is not None:
                self.check_superset(before, row, at)
            rows.append(row)
            previous[group] = row
        return tuple(rows)

    def support_tensors(
        self,
        raws: Sequence[Mapping[str, Any]],
        level: str,
        fields: list[m.Field],
        at: list[str | int],
    ) -> list[m.TensorSupport]:
        tensors, seen = [], set()
        limits = self.common.dimension_count_at(level)
        rank = self.level_ranks[level]
        for j, cell in enumerate(raws):
            where: list[str | int] = [*at, "tensors", j]
            if self.tensor_field(fields, cell["tensor"], [*where, "tensor"]) is None:
                continue
            if cell["tensor"] in seen:
                self.report.at(
                    [*where, "tensor"], f"{cell['tensor']} is listed twice in the {level} row"
                )
            seen.add(cell["tensor"])
            for k, name in enumerate(cell["data_types"]):
                try:
                    data_type = self.common.data_type(name)
                except KeyError as error:
                    self.report.at([*where, "data_types", k], str(error.args[0]))
                    continue
                if data_type.kind == "unknown":
                    self.report.at([*where, "data_types", k], f"{name} is never a valid data type")
                elif self.level_ranks[data_type.since] > rank:
                    self.report.at(
                        [*where, "data_types", k],
                        f"{name} exists only from feature level {data_type.since}, "
                        f"but is listed in the {level} row",
                    )
            for k, count in enumerate(cell["dimension_counts"]):
                if not limits.min <= count <= limits.max:
                    self.report.at(
                        [*where, "dimension_counts", k],
                        f"dimension count {count} is outside the {limits.min}..{limits.max} "
                        f"that DML_BUFFER_TENSOR_DESC allows at {level}",
                    )
            tensors.append(
                m.TensorSupport(
                    cell["tensor"], tuple(cell["dimension_counts"]), tuple(cell["data_types"])
                )
            )
        return tensors

    def check_superset(
        self, lower: m.SupportRow, higher: m.SupportRow, at: list[str | int]
    ) -> None:
        """Feature levels are strict supersets: a higher row keeps every cell of a lower one."""
        for cell in higher.tensors:
            try:
                below = lower.tensor(cell.tensor)
            except KeyError:
                continue
            dropped_types = [
                t
                for t in below.data_types
                if t not in cell.data_types and self.data_type_kind(t) is not None
            ]
            dropped_counts = [c for c in below.dimension_counts if c not in cell.dimension_counts]
            if dropped_types or dropped_counts:
                self.report.at(
                    [*at, "tensors"],
                    f"{cell.tensor} in the {higher.feature_level} row drops what the "
                    f"{lower.feature_level} row allows (data types {dropped_types}, "
                    f"dimension counts {dropped_counts}); feature levels are supersets",
                )
