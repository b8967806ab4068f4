"""Build `OperatorSpec` from one spec/operators/*.json (already schema-valid), cross-checking it.

`OperatorBuilder` joins one part per concern (fields and their ranges, support tables,
semantics, kernel, examples: the modules of those names) and builds the whole spec here, its
constraints and unencoded sentences included.
"""

from __future__ import annotations

from dataclasses import replace

from .. import model as m
from ..expr import Scope
from ..expr.types import EnumType, Type
from .base import FEATURE_LEVEL_NAME, field_type
from .examples import ExamplesBuilder
from .fields import FieldsBuilder
from .kernel import KernelBuilder
from .report import known
from .semantics import SemanticsBuilder
from .support import SupportBuilder

__all__ = ["OperatorBuilder"]


class OperatorBuilder(
    FieldsBuilder, SupportBuilder, SemanticsBuilder, KernelBuilder, ExamplesBuilder
):
    """The builder of one operator spec; `build` gives the spec, or None after reporting."""

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
