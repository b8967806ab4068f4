"""Build `OperatorSpec` from one spec/operators/*.json (already schema-valid), cross-checking it."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .. import model as m
from ..expr import Environment, Expression, Scope
from ..expr.solve import references
from ..expr.types import BOOL, INT, NUMBER, EnumType, Type
from .base import ELEMENT_INDEX_NAME, FEATURE_LEVEL_NAME, Builder, field_type, unknown_level
from .report import Report, known

__all__ = ["OperatorBuilder", "values_shape"]


class OperatorBuilder(Builder):
    def __init__(
        self, path: str, stem: str, data: Mapping[str, Any], common: m.CommonSpec, report: Report
    ) -> None:
        super().__init__(path, data, report)
        self.stem = stem
        self.common = common
        self.name = data["name"]
        self.level_ranks = {level.name: level.rank for level in common.feature_levels}
        self.enum_infos = common.enum_infos()

    def level(self, name: str, where: list[str | int]) -> bool:
        if name not in self.level_ranks:
            self.report.at(where, unknown_level(name, self.level_ranks))
            return False
        return True

    def build(self) -> m.OperatorSpec | None:
        data = self.data
        if self.stem != self.name.lower():
            self.report.at(
                "/name", f"the spec of {self.name} must be named {self.name.lower()}.json"
            )
        if data["operator_type"] != f"DML_OPERATOR_{self.name}":
            self.report.at(
                "/operator_type",
                f"expected DML_OPERATOR_{self.name}; got {data['operator_type']!r}",
            )
        self.level(data["introduced"], ["introduced"])
        pages = self.doc_pages()
        fields = self.fields()
        if self.report.count:
            return None
        names: dict[str, Type] = {f.name: field_type(f, self.common) for f in fields}
        # The level a desc is validated at, for rules that change with it.
        names.setdefault(FEATURE_LEVEL_NAME, EnumType(m.FEATURE_LEVEL_ENUM))
        definitions = self.definitions(names)
        known_ids: set[str] = set()
        scopes = {
            "error": Scope(names, self.enum_infos),
            "requires": Scope(names, self.enum_infos, data_allowed=True),
        }
        ranges, field_ranges = self.range_constraints(fields, scopes["error"], known_ids)
        fields = [replace(f, range=field_ranges.get(f.name)) for f in fields]
        explicit = self.constraints(
            data["constraints"], ["constraints"], self.name, scopes, known_ids
        )
        where_of: dict[str, list[str | int]] = {
            raw["id"]: ["constraints", i] for i, raw in enumerate(data["constraints"])
        }
        for i, field in enumerate(fields):
            if field.range is not None:
                where_of[field.range.id] = ["fields", i, "range"]
        self.check_depends_on([*ranges, *explicit], where_of, known_ids)
        for i, raw in enumerate(data["constraints"]):
            undefined = raw.get("undefined")
            if undefined is not None:
                self.tensor_field(
                    fields,
                    undefined["tensor"],
                    ["constraints", i, "undefined", "tensor"],
                    output=True,
                )
        support = self.support(fields, scopes["error"])
        semantics = self.semantics(fields, names, support) if "semantics" in data else None
        kernel = self.kernel(fields, scopes["error"]) if "kernel" in data else None
        if kernel is not None and semantics is None:
            self.report.at(
                "/kernel", "an operator with a kernel needs semantics (comparison rules)"
            )
        examples = self.examples(fields, known_ids)
        unencoded = self.unencoded(fields)
        if self.report.count:
            return None
        return m.OperatorSpec(
            path=self.path,
            schema=data["$schema"],
            name=self.name,
            operator_type=data["operator_type"],
            aliases=tuple(m.Alias(**a) for a in data["aliases"]),
            struct=data["struct"],
            summary=data["summary"],
            introduced=data["introduced"],
            doc_pages=pages,
            fields=tuple(fields),
            definitions=tuple(definitions),
            explicit_constraints=tuple(explicit),
            range_constraints=tuple(ranges),
            support=support,
            semantics=semantics,
            kernel=kernel,
            examples=examples,
            notes=tuple(data.get("notes", [])),
            status=data["status"],
            unencoded=unencoded,
        )

    def unencoded(self, fields: list[m.Field]) -> tuple[m.Unencoded, ...]:
        names = {f.name for f in fields}
        items = []
        for i, raw in enumerate(self.data.get("unencoded", [])):
            if "field" in raw and raw["field"] not in names:
                self.report.at(
                    ["unencoded", i, "field"],
                    f"{raw['field']!r} is not a field of {self.name} (fields: {known(names)})",
                )
            items.append(
                m.Unencoded(
                    raw["doc"], raw["reason"], raw.get("field"), raw.get("informative", False)
                )
            )
        return tuple(items)

    # -- fields and definitions -----------------------------------------------------------
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

    # -- support tables -------------------------------------------------------------------
    def tensor_field(
        self,
        fields: Sequence[m.Field],
        name: str,
        where: list[str | int],
        output: bool | None = None,
    ) -> m.Field | None:
        tensors = [
            f
            for f in fields
            if (f.is_tensor or f.is_tensor_array) and (output is None or f.is_output == output)
        ]
        for field in tensors:
            if field.name == name:
                return field
        what = {None: "tensor", True: "output tensor", False: "input tensor"}[output]
        article = "a" if output is None else "an"
        self.report.at(
            where,
            f"{name!r} is not {article} {what} field of {self.name} "
            f"({what} fields: {known(f.name for f in tensors)})",
        )
        return None

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

    # -- semantics ------------------------------------------------------------------------
    def semantics(
        self,
        fields: list[m.Field],
        names: Mapping[str, Type],
        support: Sequence[m.SupportRow],
    ) -> m.Semantics:
        raw = self.data["semantics"]
        negative = None
        if "negative_indices" in raw:
            neg = raw["negative_indices"]
            self.tensor_field(
                fields, neg["tensor"], ["semantics", "negative_indices", "tensor"], output=False
            )
            self.level(neg["since"], ["semantics", "negative_indices", "since"])
            negative = m.NegativeIndices(**neg)
        desc_scope = Scope(dict(names), self.enum_infos)
        element_scope = Scope({**names, ELEMENT_INDEX_NAME: INT}, self.enum_infos)
        rules = [
            self.comparison_rule(rule, ["semantics", "comparison", i], desc_scope, element_scope)
            for i, rule in enumerate(raw["comparison"])
        ]
        for i, rule in enumerate(rules):
            self.tensor_field(fields, rule.tensor, ["semantics", "comparison", i, "tensor"], True)
            overlap = self.overlap(rule, rules[:i])
            if overlap:
                self.report.at(
                    ["semantics", "comparison", i, "data_type_kinds"],
                    f"{rule.tensor} already has a rule for {overlap}",
                )
        self.check_coverage(fields, rules, support)
        return m.Semantics(
            pseudocode=raw["pseudocode"],
            comparison=tuple(rules),
            notes=tuple(raw.get("notes", [])),
            negative_indices=negative,
            arithmetic=bool(raw.get("arithmetic", False)),
        )

    def comparison_rule(
        self,
        rule: Mapping[str, Any],
        at: list[str | int],
        desc_scope: Scope,
        element_scope: Scope,
    ) -> m.ComparisonRule:
        if rule["rule"] == "ulp" and "max_ulps" not in rule:
            self.report.at(at, "an 'ulp' rule needs max_ulps")
        if ("terms" in rule or "magnitude" in rule) and not (
            rule["rule"] == "ulp" and "max_ulps" in rule
        ):
            self.report.at(
                at,
                "'terms' and 'magnitude' need an 'ulp' rule with max_ulps (an element passes "
                "within max_ulps * ULP(expected) + terms * eps * magnitude)",
            )
        ulps_of = rule.get("ulps_of")
        if ulps_of is not None:
            floats = [d.name for d in self.common.data_types if d.kind == "float"]
            if ulps_of not in floats:
                self.report.at(
                    [*at, "ulps_of"],
                    f"ulps_of must be a floating data type, one of {', '.join(floats)}; "
                    f"got {ulps_of!r}",
                )
            if rule["rule"] != "ulp":
                self.report.at([*at, "ulps_of"], "ulps_of needs an 'ulp' rule")
        integral = sorted(set(rule["data_type_kinds"]) - {"float"})
        if rule["rule"] == "ulp" and rule.get("max_ulps") and integral and ulps_of is None:
            self.report.at(
                at,
                f"an 'ulp' rule for {' and '.join(integral)} outputs needs ulps_of: the floating "
                "type the result is computed in (an integer has no ULP of its own)",
            )
        if ("terms" in rule) != ("magnitude" in rule):
            given, missing = ("terms", "magnitude") if "terms" in rule else ("magnitude", "terms")
            self.report.at(at, f"'{given}' needs '{missing}': the bound is terms * eps * magnitude")
        per_element = {
            key: self.compile_typed(rule[key], element_scope, NUMBER, [*at, key])
            for key in ("reference", "ulp_scale")
            if key in rule
        }
        when = (
            self.compile_typed(rule["when"], desc_scope, BOOL, [*at, "when"])
            if "when" in rule
            else None
        )
        terms = (
            self.compile_typed(rule["terms"], desc_scope, NUMBER, [*at, "terms"])
            if "terms" in rule
            else None
        )
        abs_tolerance = rule.get("abs_tolerance")
        if isinstance(abs_tolerance, str):
            abs_tolerance = self.compile_typed(
                abs_tolerance, desc_scope, NUMBER, [*at, "abs_tolerance"]
            )
        return m.ComparisonRule(
            tensor=rule["tensor"],
            data_type_kinds=tuple(rule["data_type_kinds"]),
            rule=rule["rule"],
            max_ulps=rule.get("max_ulps"),
            reference=per_element.get("reference"),
            ulp_scale=per_element.get("ulp_scale"),
            note=rule.get("note"),
            data_types=tuple(rule.get("data_types", ())),
            abs_tolerance=abs_tolerance,
            source=rule.get("source"),
            when=when,
            terms=terms,
            magnitude=rule.get("magnitude"),
            ulps_of=ulps_of,
        )

    @staticmethod
    def overlap(rule: m.ComparisonRule, earlier: Sequence[m.ComparisonRule]) -> list[str]:
        """What `rule` claims that an earlier rule of its tensor already claims.

        Rules naming data types claim (kind, type) pairs, the others a whole kind. Rules whose
        `when` differ (both given) may claim the same: which one holds depends on the desc.
        """

        def claims(r: m.ComparisonRule) -> set[tuple[str, str]]:
            return {(k, t) for k in r.data_type_kinds for t in (r.data_types or ("*",))}

        taken: set[tuple[str, str]] = set()
        for other in earlier:
            if other.tensor == rule.tensor and (
                other.when is None or rule.when is None or other.when == rule.when
            ):
                taken |= claims(other)
        return sorted(
            f"{k} {t}" if t != "*" else k
            for k, t in claims(rule)
            if (k, t) in taken or (k, "*") in taken or (t == "*" and any(c[0] == k for c in taken))
        )

    def check_coverage(
        self,
        fields: list[m.Field],
        rules: Sequence[m.ComparisonRule],
        support: Sequence[m.SupportRow],
    ) -> None:
        """Every data type a support row allows an output has a rule, for every desc the
        rows' and rules' `when` tell apart (each combination of the enum fields they read)."""
        when_of = {row.when.source: row.when for row in support if row.when is not None}
        rows = [
            (j, raw, when_of.get(raw["when"]) if "when" in raw else None)
            for j, raw in enumerate(self.data["support"])
            if "when" not in raw or raw["when"] in when_of
        ]
        reported: set[tuple[int, int, str]] = set()
        outputs = {r.tensor for r in rules}
        for case, label in self.when_cases(fields, [r.when for r in rules] + [w for *_, w in rows]):
            live = [r for r in rules if _holds(r.when, case)]
            for j, raw, when in rows:
                if not _holds(when, case):
                    continue
                for k, cell in enumerate(raw["tensors"]):
                    if cell["tensor"] not in outputs:
                        continue
                    for name in cell["data_types"]:
                        kind = self.data_type_kind(name)
                        if kind in (None, "unknown") or (j, k, name) in reported:
                            continue
                        if not any(r.applies_to(cell["tensor"], kind, name) for r in live):
                            reported.add((j, k, name))
                            self.report.at(
                                ["support", j, "tensors", k, "data_types"],
                                f"no comparison rule covers {cell['tensor']} of {kind} type "
                                f"{name}{label}",
                            )
        for field in fields:
            if field.is_output and field.name not in outputs:
                self.report.at(
                    ["semantics", "comparison"], f"no comparison rule for output {field.name}"
                )

    def when_cases(
        self, fields: list[m.Field], whens: Sequence[Expression | None]
    ) -> list[tuple[Environment | None, str]]:
        """Environments binding every combination of the enum fields the `when`s read, each
        with a label naming it; one `None` case (every `when` taken as holding) when they read
        anything else, or nothing is conditional."""
        conditions = [w for w in whens if w is not None]
        enums = {f.name: f.enum for f in fields if f.kind == "enum" and f.enum is not None}
        read = set().union(*(references(w.tree, {}) for w in conditions))
        if not read or not read <= enums.keys():
            return [(None, "")]
        names = sorted(read)
        choices = [self.enum_infos[enums[name]].members for name in names]
        cases: list[tuple[Environment | None, str]] = []
        for combination in itertools.product(*choices):
            values = dict(zip(names, combination, strict=True))
            label = " when " + ", ".join(f"{n} is {v}" for n, v in values.items())
            cases.append((Environment(values, self.common, self.enum_infos), label))
        return cases

    def data_type_kind(self, name: str) -> str | None:
        try:
            return self.common.data_type(name).kind
        except KeyError:
            return None  # reported with the support row

    # -- kernel ---------------------------------------------------------------------------
    def kernel(self, fields: list[m.Field], scope: Scope) -> m.Kernel:
        raw = self.data["kernel"]
        at: list[str | int] = ["kernel"]
        for parameter, name in raw["inputs"].items():
            self.tensor_field(fields, name, [*at, "inputs", parameter], output=False)
        outputs = [raw["output"]] if isinstance(raw["output"], str) else list(raw["output"])
        for i, name in enumerate(outputs):
            where = [*at, "output"] if isinstance(raw["output"], str) else [*at, "output", i]
            self.tensor_field(fields, name, where, output=True)
        if "donate" in raw:
            self.tensor_field(fields, raw["donate"], [*at, "donate"], output=False)
        static = []
        for parameter, source in raw["static"].items():
            expression = self.compile(source, scope, [*at, "static", parameter])
            if expression is not None:
                static.append((parameter, expression))
        defaults = []
        by_name = {f.name: f for f in fields}
        for name, source in raw["defaults"].items():
            if name not in by_name or by_name[name].is_tensor:
                self.report.at([*at, "defaults", name], f"{name!r} is not a non-tensor field")
                continue
            expression = self.compile(source, scope, [*at, "defaults", name])
            if expression is not None:
                defaults.append((name, expression))
        return m.Kernel(
            primitive=raw["primitive"],
            inputs=tuple(raw["inputs"].items()),
            static=tuple(static),
            defaults=tuple(defaults),
            outputs=tuple(outputs),
            donate=raw.get("donate"),
            function=raw.get("function"),
            in_progress=raw.get("in_progress"),
        )

    # -- examples -------------------------------------------------------------------------
    def examples(self, fields: list[m.Field], constraint_ids: set[str]) -> tuple[m.Example, ...]:
        by_name = {f.name: f for f in fields}
        examples, seen = [], set()
        for i, raw in enumerate(self.data["examples"]):
            at: list[str | int] = ["examples", i]
            if raw["id"] in seen:
                self.report.at([*at, "id"], f"duplicate example id {raw['id']!r}")
            seen.add(raw["id"])
            sources = self.sources(raw["sources"], [*at, "sources"])
            as_written = self.example_fields(raw["as_written"], by_name, [*at, "as_written"])
            corrected = None
            if "corrected" in raw:
                corrected = self.example_fields(raw["corrected"], by_name, [*at, "corrected"])
                self.check_complete(corrected, fields, [*at, "corrected"])
            errata = tuple(m.Erratum(e["note"], tuple(e["expect"])) for e in raw.get("errata", []))
            if errata and corrected is None:
                self.report.at(at, "an example with errata needs a corrected form")
            self.check_expectations(as_written, errata, fields, constraint_ids, at)
            examples.append(
                m.Example(
                    id=raw["id"],
                    title=raw["title"],
                    sources=sources,
                    as_written=as_written,
                    errata=errata,
                    corrected=corrected,
                    notes=tuple(raw.get("notes", [])),
                )
            )
        return tuple(examples)

    def example_fields(
        self, raw: Mapping[str, Any], by_name: Mapping[str, m.Field], at: list[str | int]
    ) -> m.ExampleFields:
        items: list[tuple[str, m.ExampleValue]] = []
        for name, value in raw.items():
            field = by_name.get(name)
            if field is None:
                self.report.at([*at, name], f"unknown field {name!r} (fields: {known(by_name)})")
                continue
            if field.is_tensor_array:
                if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                    self.report.at([*at, name], f"{name} must be a list of tensor objects")
                    continue
                items.append((name, tuple(_example_tensor(v) for v in value)))
                continue
            if field.is_tensor != isinstance(value, dict):
                expected = "a tensor object" if field.is_tensor else "a scalar"
                self.report.at([*at, name], f"{name} must be {expected}")
                continue
            if isinstance(value, dict):
                items.append(
                    (
                        name,
                        m.ExampleTensor(
                            tuple(value["Sizes"]),
                            value.get("DataType"),
                            m._frozen(value.get("Values")),
                        ),
                    )
                )
            else:
                items.append((name, value))
        return m.ExampleFields(tuple(items))

    def check_complete(
        self, fields_given: m.ExampleFields, fields: list[m.Field], at: list[str | int]
    ) -> None:
        given = fields_given.as_dict()
        for field in fields:
            if not field.optional and field.name not in given:
                self.report.at(at, f"the corrected form lacks the required field {field.name}")
        for name, value in given.items():
            if not isinstance(value, m.ExampleTensor):
                continue
            if value.data_type is None:
                self.report.at([*at, name], "a corrected tensor must give its DataType")
            elif (
                value.data_type.removeprefix("DML_TENSOR_DATA_TYPE_")
                not in self.enum_infos[m.DATA_TYPE_ENUM].members
            ):
                self.report.at([*at, name, "DataType"], f"unknown data type {value.data_type!r}")
            if value.values is not None and values_shape(value.values) != value.sizes:
                self.report.at(
                    [*at, name, "Values"],
                    f"values of shape {values_shape(value.values)} "
                    f"do not fit Sizes {list(value.sizes)}",
                )

    def check_expectations(
        self,
        as_written: m.ExampleFields,
        errata: Sequence[m.Erratum],
        fields: list[m.Field],
        constraint_ids: set[str],
        at: list[str | int],
    ) -> None:
        """Errata findings the loader can verify itself; the rest name real things."""
        expected = {finding for erratum in errata for finding in erratum.expect}
        given = as_written.as_dict()
        field_names = {f.name for f in fields}
        actual_missing = {
            f"missing:{f.name}" for f in fields if not f.optional and f.name not in given
        }
        actual_misfit = {
            f"values:{name}"
            for name, value in given.items()
            if isinstance(value, m.ExampleTensor)
            and value.values is not None
            and values_shape(value.values) != value.sizes
        }
        sizes_only = all(
            isinstance(v, m.ExampleTensor) and v.values is None
            for v in given.values()
            if isinstance(v, m.ExampleTensor)
        )
        for finding in sorted(expected):
            kind, _, name = finding.partition(":")
            if finding in constraint_ids:
                continue
            if kind in ("support", "values", "missing", "warning") and name in field_names:
                continue
            self.report.at(
                [*at, "errata"],
                f"expected finding {finding!r} names no constraint or field of {self.name}",
            )
        if self.data["status"] == "drafted":
            return  # drafted examples are as the page prints them; curation adds the errata
        for finding in sorted(actual_misfit - expected):
            self.report.at(
                [*at, "as_written"],
                f"{finding.partition(':')[2]} values do not fit its Sizes, "
                f"but no erratum expects {finding!r}",
            )
        for finding in sorted(
            (expected - actual_misfit) & {e for e in expected if e.startswith("values:")}
        ):
            self.report.at(
                [*at, "errata"], f"erratum expects {finding!r}, but those values fit their Sizes"
            )
        if not sizes_only:
            for finding in sorted(actual_missing - expected):
                self.report.at(
                    [*at, "as_written"],
                    f"required field {finding.partition(':')[2]} is not given, "
                    f"but no erratum expects {finding!r}",
                )
        for finding in sorted({e for e in expected if e.startswith("missing:")} - actual_missing):
            self.report.at([*at, "errata"], f"erratum expects {finding!r}, but the field is given")


def _example_tensor(value: Mapping[str, Any]) -> m.ExampleTensor:
    return m.ExampleTensor(
        tuple(value["Sizes"]), value.get("DataType"), m._frozen(value.get("Values"))
    )


def values_shape(values: Any) -> tuple[int, ...] | None:
    """Shape of nested tuples of numbers; None when ragged."""
    if not isinstance(values, tuple):
        return ()
    shapes = {values_shape(v) for v in values}
    if len(shapes) > 1:
        return None
    inner = shapes.pop() if shapes else ()
    return None if inner is None else (len(values), *inner)


def _grouped(source: str) -> str:
    return source if source.replace("_", "").replace(".", "").isalnum() else f"({source})"


def _holds(when: Expression | None, case: Environment | None) -> bool:
    """Whether a `when` holds in a coverage case (always without either)."""
    return when is None or case is None or bool(when.evaluate(case))
