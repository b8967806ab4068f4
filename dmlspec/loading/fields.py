"""An operator's fields and definitions, and its fields' ranges as error constraints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import model as m
from ..expr import Scope
from ..expr.types import BOOL, NUMBER, Type
from .operator_base import OperatorBuilderBase
from .report import known

__all__ = ["FieldsBuilder"]


class FieldsBuilder(OperatorBuilderBase):
    def fields(self) -> list[m.Field]:
        raws = self.data["fields"]
        by_name = {raw["name"]: raw for raw in raws}
        fields, seen = [], set()
        for i, raw in enumerate(raws):
            at: list[str | int] = ["fields", i]
            if raw["name"] in seen:
                self.report.at([*at, "name"], f"duplicate field {raw['name']!r}")
            seen.add(raw["name"])
            kind = raw["kind"]
            if (kind == "enum") != ("enum" in raw):
                self.report.at(at, "a field has an 'enum' name exactly when its kind is 'enum'")
            elif kind == "enum" and raw["enum"] not in self.enum_infos:
                self.report.at(
                    [*at, "enum"],
                    f"unknown enumeration {raw['enum']!r} "
                    f"(known: {known(sorted(self.enum_infos))})",
                )
            if (kind == "scalar_union") != ("value_type_field" in raw):
                self.report.at(
                    at, "a field has a 'value_type_field' exactly when its kind is 'scalar_union'"
                )
            elif kind == "scalar_union":
                partner = by_name.get(raw["value_type_field"])
                if partner is None or partner["kind"] != "data_type":
                    self.report.at(
                        [*at, "value_type_field"],
                        f"{raw['value_type_field']!r} is not a data_type field of {self.name}",
                    )
            if "range" in raw and kind not in ("uint", "uint64", "int", "float"):
                self.report.at([*at, "range"], f"a {kind} field cannot have a numeric range")
            self.check_count_field(raw, by_name, at)
            self.check_operator_set(raw, at)
            if "drawn_as" in raw and kind not in ("input_tensor", "input_tensor_array"):
                self.report.at(
                    [*at, "drawn_as"], f"only input tensors take drawn_as ({raw['name']} is {kind})"
                )
            if "typical" in raw and kind not in ("uint", "uint64", "int"):
                self.report.at(
                    [*at, "typical"],
                    f"only integer fields take typical values ({raw['name']} is {kind})",
                )
            fields.append(
                m.Field(
                    name=raw["name"],
                    kind=kind,
                    c_type=raw["c_type"],
                    optional=raw["optional"],
                    doc=raw["doc"],
                    enum=raw.get("enum"),
                    value_type_field=raw.get("value_type_field"),
                    count_field=raw.get("count_field"),
                    operator_set=raw.get("operator_set"),
                    drawn_as=raw.get("drawn_as"),
                    typical=tuple(raw.get("typical", ())),
                )
            )
        return fields

    def check_count_field(
        self, raw: Mapping[str, Any], by_name: Mapping[str, Any], at: list[str | int]
    ) -> None:
        is_array = raw["kind"] in m.ARRAY_KINDS
        if is_array != ("count_field" in raw):
            self.report.at(at, "a field has a 'count_field' exactly when its kind is an array")
        elif is_array:
            partner = by_name.get(raw["count_field"])
            if partner is None or partner["kind"] != "uint":
                self.report.at(
                    [*at, "count_field"],
                    f"{raw['count_field']!r} is not a uint field of {self.name}",
                )

    def check_operator_set(self, raw: Mapping[str, Any], at: list[str | int]) -> None:
        wants_set = raw["kind"] in m.OPERATOR_DESC_KINDS
        if wants_set != ("operator_set" in raw):
            self.report.at(
                at, "a field has an 'operator_set' exactly when its kind is an operator desc"
            )
        elif wants_set:
            known_sets = [s.name for s in self.common.operator_sets]
            if raw["operator_set"] not in known_sets:
                self.report.at(
                    [*at, "operator_set"],
                    f"unknown operator set {raw['operator_set']!r} (known: {known(known_sets)})",
                )

    def definitions(self, names: dict[str, Type]) -> list[m.Definition]:
        definitions = []
        for i, raw in enumerate(self.data["definitions"]):
            at: list[str | int] = ["definitions", i]
            if raw["name"] in names:
                self.report.at(
                    [*at, "name"], f"definition {raw['name']!r} shadows a field or definition"
                )
                continue
            expression = self.compile(
                raw["expr"], Scope(dict(names), self.enum_infos), [*at, "expr"]
            )
            if expression is None:
                continue
            names[raw["name"]] = expression.type
            definitions.append(m.Definition(raw["name"], expression, raw["doc"]))
        return definitions

    def range_constraints(
        self, fields: list[m.Field], scope: Scope, known_ids: set[str]
    ) -> tuple[list[m.Constraint], dict[str, m.FieldRange]]:
        """Each field range as an error constraint, and the ranges by field name."""
        built, field_ranges = [], {}
        raws = self.data["fields"]
        for i, (field, raw) in enumerate(zip(fields, raws, strict=True)):
            if "range" not in raw:
                continue
            rng = raw["range"]
            at: list[str | int] = ["fields", i, "range"]
            if not rng["id"].startswith(self.name + ".C"):
                self.report.at([*at, "id"], f"range id {rng['id']!r} must be {self.name}.C<n>")
            if rng["id"] in known_ids:
                self.report.at([*at, "id"], f"duplicate constraint id {rng['id']!r}")
            known_ids.add(rng["id"])
            low = self.compile_typed(rng["min"], scope, NUMBER, [*at, "min"])
            high = self.compile_typed(rng["max"], scope, NUMBER, [*at, "max"])
            if low is None or high is None:
                continue
            exclusive = rng.get("max_exclusive", False)
            comparison = "<" if exclusive else "<="
            source = f"{_grouped(low.source)} <= {field.name} {comparison} {_grouped(high.source)}"
            expression = self.compile_typed(source, scope, BOOL, [*at])
            if expression is None:
                continue
            field_range = m.FieldRange(
                rng["id"],
                low,
                high,
                exclusive,
                tuple(rng["doc"]),
                tuple(rng.get("depends_on", [])),
                rng.get("note"),
            )
            field_ranges[field.name] = field_range
            closing = ")" if exclusive else "]"
            built.append(
                m.Constraint(
                    id=rng["id"],
                    constraint_class="error",
                    doc=tuple(rng["doc"]),
                    expr=expression,
                    message=f"{field.name} must be in [{low.source}, {high.source}{closing}",
                    sources=tuple(sorted(self.page_ids)),
                    depends_on=field_range.depends_on,
                    note=field_range.note,
                )
            )
        return built, field_ranges


def _grouped(source: str) -> str:
    return source if source.replace("_", "").replace(".", "").isalnum() else f"({source})"
