"""Build `CommonSpec` from spec/common.json (already schema-valid), cross-checking it."""

from __future__ import annotations

from dataclasses import replace

from .. import model as m
from ..expr import EnumInfo, Scope
from ..expr.types import INT, EnumType, Type, parse_type
from .base import TENSOR_SCOPE_NAME, Builder, tensor_type, unknown_level

__all__ = ["CommonBuilder"]


class CommonBuilder(Builder):
    def build(self) -> m.CommonSpec | None:
        pages = self.doc_pages()
        levels = self.feature_levels()
        level_names = [level.name for level in levels]
        data_types = self.data_types(level_names)
        enums = self.enums()
        members = self.tensor_members(enums, data_types, levels)
        dimension_count = self.dimension_count(levels)
        if self.report.count:
            return None
        partial = m.CommonSpec(
            self.path,
            self.data["$schema"],
            pages,
            levels,
            data_types,
            enums,
            members,
            dimension_count,
            (),
        )
        # Tensor rules are type-checked against the members and enums built above.
        constraints = self.tensor_constraints(partial)
        layouts, rules = self.layouts()
        operator_sets = self.operator_sets(level_names)
        if self.report.count:
            return None
        return replace(
            partial,
            tensor_constraints=tuple(constraints),
            tensor_layouts=layouts,
            layout_rules=rules,
            operator_sets=operator_sets,
        )

    def layouts(self) -> tuple[tuple[m.TensorLayout, ...], m.LayoutRules | None]:
        """tensor.layouts and tensor.layout_rules (both optional)."""
        layouts, seen = [], set()
        for i, raw in enumerate(self.data["tensor"].get("layouts", [])):
            at: list[str | int] = ["tensor", "layouts", i]
            if raw["name"] in seen:
                self.report.at([*at, "name"], f"duplicate layout {raw['name']!r}")
            seen.add(raw["name"])
            sources = self.sources(raw["sources"], [*at, "sources"])
            layouts.append(
                m.TensorLayout(raw["name"], tuple(raw["tensor_kinds"]), raw["doc"], sources)
            )
        raw_rules = self.data["tensor"].get("layout_rules")
        if raw_rules is None:
            return tuple(layouts), None
        undefined, ids = [], set()
        for i, raw in enumerate(raw_rules["undefined"]):
            at = ["tensor", "layout_rules", "undefined", i]
            if raw["id"] in ids:
                self.report.at([*at, "id"], f"duplicate id {raw['id']!r}")
            ids.add(raw["id"])
            sources = self.sources(raw["sources"], [*at, "sources"])
            undefined.append(
                m.LayoutUndefined(
                    raw["id"], tuple(raw["doc"]), sources, raw["what"], raw["dmlspec"]
                )
            )
        return tuple(layouts), m.LayoutRules(raw_rules["sentinel_byte"], tuple(undefined))

    def operator_sets(self, level_names: list[str]) -> tuple[m.OperatorSet, ...]:
        sets, seen = [], set()
        for i, raw in enumerate(self.data.get("operator_sets", [])):
            at: list[str | int] = ["operator_sets", i]
            if raw["name"] in seen:
                self.report.at([*at, "name"], f"duplicate operator set {raw['name']!r}")
            seen.add(raw["name"])
            if len(set(raw["operators"])) != len(raw["operators"]):
                self.report.at([*at, "operators"], "an operator set lists an operator twice")
            sources = self.sources(raw["sources"], [*at, "sources"])
            since = raw.get("since", {})
            for member, level in since.items():
                if member not in raw["operators"]:
                    self.report.at(
                        [*at, "since", member], f"{member!r} is not a member of {raw['name']}"
                    )
                if level not in level_names:
                    self.report.at([*at, "since", member], unknown_level(level, level_names))
            sets.append(
                m.OperatorSet(
                    raw["name"],
                    tuple(raw["operators"]),
                    raw["doc"],
                    sources,
                    raw.get("note"),
                    tuple(sorted(since.items())),
                )
            )
        return tuple(sets)

    def feature_levels(self) -> tuple[m.FeatureLevel, ...]:
        levels, seen = [], set()
        for i, raw in enumerate(self.data["feature_levels"]):
            if raw["name"] in seen:
                self.report.at(
                    ["feature_levels", i, "name"], f"duplicate feature level {raw['name']!r}"
                )
            seen.add(raw["name"])
            sources = self.sources(raw["sources"], ["feature_levels", i, "sources"])
            levels.append(m.FeatureLevel(raw["name"], i, raw["dml_version"], sources))
        return tuple(levels)

    def data_types(self, level_names: list[str]) -> tuple[m.DataType, ...]:
        types, seen = [], set()
        for i, raw in enumerate(self.data["data_types"]):
            if raw["name"] in seen:
                self.report.at(["data_types", i, "name"], f"duplicate data type {raw['name']!r}")
            seen.add(raw["name"])
            if raw["since"] not in level_names:
                self.report.at(["data_types", i, "since"], unknown_level(raw["since"], level_names))
            sources = self.sources(raw["sources"], ["data_types", i, "sources"])
            types.append(m.DataType(**{**raw, "sources": sources}))
        return tuple(types)

    def enums(self) -> tuple[m.Enum, ...]:
        enums, seen = [], {m.DATA_TYPE_ENUM, m.FEATURE_LEVEL_ENUM}
        for i, raw in enumerate(self.data["enums"]):
            if raw["name"] in seen:
                self.report.at(
                    ["enums", i, "name"], f"duplicate or reserved enumeration {raw['name']!r}"
                )
            seen.add(raw["name"])
            members, names = [], set()
            for j, member in enumerate(raw["members"]):
                if member["name"] in names:
                    self.report.at(
                        ["enums", i, "members", j, "name"], f"duplicate member {member['name']!r}"
                    )
                names.add(member["name"])
                members.append(m.EnumMember(member["name"], member["doc"], member.get("value")))
            sources = self.sources(raw["sources"], ["enums", i, "sources"])
            enums.append(m.Enum(raw["name"], raw["prefix"], tuple(members), sources))
        return tuple(enums)

    def tensor_members(
        self,
        enums: tuple[m.Enum, ...],
        data_types: tuple[m.DataType, ...],
        levels: tuple[m.FeatureLevel, ...],
    ) -> tuple[m.TensorMember, ...]:
        raws = self.data["tensor"]["members"]
        enum_infos = {e.name: e.info() for e in enums}
        enum_infos[m.DATA_TYPE_ENUM] = EnumInfo(
            m.DATA_TYPE_ENUM, "DML_TENSOR_DATA_TYPE_", tuple(d.name for d in data_types)
        )
        types: dict[str, Type] = {}
        for i, raw in enumerate(raws):
            try:
                types[raw["name"]] = parse_type(raw["type"])
            except ValueError as error:
                self.report.at(["tensor", "members", i, "type"], str(error))
        scope = Scope(types, enum_infos)
        members, seen = [], set()
        for i, raw in enumerate(raws):
            at: list[str | int] = ["tensor", "members", i]
            if raw["name"] in seen:
                self.report.at([*at, "name"], f"duplicate tensor member {raw['name']!r}")
            seen.add(raw["name"])
            if raw["name"] not in types:
                continue
            default = None
            if "default" in raw:
                if not raw["optional"]:
                    self.report.at([*at, "default"], "only optional members may have a default")
                default = self.compile_typed(
                    raw["default"], scope, types[raw["name"]], [*at, "default"]
                )
            sources = self.sources(raw["sources"], [*at, "sources"])
            members.append(
                m.TensorMember(
                    raw["name"],
                    types[raw["name"]],
                    raw["type"],
                    raw["optional"],
                    default,
                    raw["doc"],
                    sources,
                )
            )
        return tuple(members)

    def dimension_count(
        self, levels: tuple[m.FeatureLevel, ...]
    ) -> tuple[m.DimensionCountRange, ...]:
        ranks = {level.name: level.rank for level in levels}
        ranges, last_rank = [], -1
        for i, raw in enumerate(self.data["tensor"]["dimension_count"]):
            at: list[str | int] = ["tensor", "dimension_count", i]
            if raw["since"] not in ranks:
                self.report.at([*at, "since"], unknown_level(raw["since"], ranks))
            elif ranks[raw["since"]] <= last_rank:
                self.report.at(
                    [*at, "since"], "dimension_count rows must be in ascending feature-level order"
                )
            else:
                last_rank = ranks[raw["since"]]
            if raw["min"] > raw["max"]:
                self.report.at(at, f"min {raw['min']} is greater than max {raw['max']}")
            sources = self.sources(raw["sources"], [*at, "sources"])
            ranges.append(m.DimensionCountRange(raw["since"], raw["min"], raw["max"], sources))
        if ranges and ranks.get(ranges[0].since) != 0:
            self.report.at(
                ["tensor", "dimension_count", 0, "since"],
                "the first dimension_count row must start at the first feature level",
            )
        return tuple(ranges)

    def tensor_constraints(self, common: m.CommonSpec) -> list[m.Constraint]:
        scope = Scope(
            {
                TENSOR_SCOPE_NAME: tensor_type(common),
                "DimensionCountMin": INT,
                "DimensionCountMax": INT,
                "TensorKind": EnumType("TENSOR_KIND"),
            },
            common.enum_infos(),
        )
        raws = self.data["tensor"]["constraints"]
        where: list[str | int] = ["tensor", "constraints"]
        constraints = self.constraints(
            raws, where, "TENSOR", {"error": scope, "requires": scope}, set()
        )
        self.check_depends_on(
            constraints,
            {raw["id"]: [*where, i] for i, raw in enumerate(raws)},
            (raw["id"] for raw in raws),
        )
        return constraints
