"""An operator's semantics: its comparison rules, which may not overlap and must cover every
output data type its support rows allow.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from .. import model as m
from ..expr import Environment, Expression, Scope
from ..expr.solve import references
from ..expr.types import BOOL, INT, NUMBER, Type
from .base import ELEMENT_INDEX_NAME
from .operator_base import OperatorBuilderBase

__all__ = ["SemanticsBuilder"]


class SemanticsBuilder(OperatorBuilderBase):
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

    def dot_product_rule(self, rule: Mapping[str, Any], at: list[str | int]) -> None:
        """A dot_product rule states KS (`terms`) and nothing of the ULP rules: its bound is
        TOSA's, computed from the FLOAT64 reference and the same computation on |x|."""
        if "terms" not in rule:
            self.report.at(at, "a 'dot_product' rule needs terms: the products summed (KS)")
        extra = sorted(
            key
            for key in (
                "max_ulps",
                "magnitude",
                "reference",
                "ulp_scale",
                "ulps_of",
                "abs_tolerance",
            )
            if key in rule
        )
        if extra:
            self.report.at(
                at,
                f"a 'dot_product' rule takes no {', '.join(extra)}: its bound is KS * "
                "max(bound * u, tiny) from the FLOAT64 reference and the sum of |products|",
            )
        if set(rule["data_type_kinds"]) != {"float"}:
            self.report.at(at, "a 'dot_product' rule judges float outputs only")

    def error_statistics(self, rule: Mapping[str, Any], at: list[str | int]) -> None:
        if "error_statistics" in rule and rule["rule"] != "dot_product":
            self.report.at([*at, "error_statistics"], "error_statistics needs a 'dot_product' rule")

    def comparison_rule(
        self,
        rule: Mapping[str, Any],
        at: list[str | int],
        desc_scope: Scope,
        element_scope: Scope,
    ) -> m.ComparisonRule:
        if rule["rule"] == "ulp" and "max_ulps" not in rule:
            self.report.at(at, "an 'ulp' rule needs max_ulps")
        self.error_statistics(rule, at)
        if rule["rule"] == "dot_product":
            self.dot_product_rule(rule, at)
        elif ("terms" in rule or "magnitude" in rule) and not (
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
        if ("terms" in rule) != ("magnitude" in rule) and rule["rule"] != "dot_product":
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
            error_statistics=rule.get("error_statistics", True),
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


def _holds(when: Expression | None, case: Environment | None) -> bool:
    """Whether a `when` holds in a coverage case (always without either)."""
    return when is None or case is None or bool(when.evaluate(case))
