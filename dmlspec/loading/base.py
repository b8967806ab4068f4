"""What the common and operator builders share: doc pages, sources, expressions, constraints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import model as m
from ..expr import Expression, ExpressionError, Scope, compile_expression
from ..expr.types import (
    BOOL,
    INT,
    LIST,
    MASK,
    NUMBER,
    OPERATOR,
    OPERATORS,
    TENSORS,
    EnumType,
    StructType,
    TensorType,
    Type,
    is_assignable,
)
from .report import Report, known

__all__ = [
    "ELEMENT_INDEX_NAME",
    "FEATURE_LEVEL_NAME",
    "Builder",
    "field_type",
    "tensor_type",
    "unknown_level",
]

TENSOR_SCOPE_NAME = "T"
ELEMENT_INDEX_NAME = "k"  # element ordinal in comparison reference expressions
FEATURE_LEVEL_NAME = "FeatureLevel"  # the level a desc is validated at

_FIELD_TYPES: dict[str, Type] = {
    "uint": INT,
    "uint64": INT,
    "int": INT,
    "float": NUMBER,
    "bool": BOOL,
    "uint_array": LIST,
    "int_array": LIST,
    "float_array": LIST,
    "input_tensor_array": TENSORS,
    "output_tensor_array": TENSORS,
    "operator_desc": OPERATOR,
    "operator_desc_array": OPERATORS,
}
# Nested structs, members as the DirectML struct names them.
STRUCT_TYPES: dict[str, StructType] = {
    "scale_bias": StructType("DML_SCALE_BIAS", (("Scale", NUMBER), ("Bias", NUMBER))),
    "size_2d": StructType("DML_SIZE_2D", (("Width", INT), ("Height", INT))),
}


class Builder:
    """Shared checks of one file: doc pages, sources, feature levels, expressions."""

    def __init__(self, path: str, data: Mapping[str, Any], report: Report) -> None:
        self.path = path
        self.data = data
        self.report = report
        self.page_ids: set[str] = set()

    def doc_pages(self) -> tuple[m.DocPage, ...]:
        pages = []
        for i, raw in enumerate(self.data["doc_pages"]):
            if raw["id"] in self.page_ids:
                self.report.at(["doc_pages", i, "id"], f"duplicate doc page id {raw['id']!r}")
            self.page_ids.add(raw["id"])
            pages.append(m.DocPage(**raw))
        return tuple(pages)

    def sources(self, raw: Sequence[str], where: list[str | int]) -> tuple[str, ...]:
        for i, source in enumerate(raw):
            if source not in self.page_ids:
                self.report.at(
                    [*where, i],
                    f"unknown source {source!r} (doc_pages ids: {known(sorted(self.page_ids))})",
                )
        return tuple(raw)

    def compile(self, source: str, scope: Scope, where: list[str | int]) -> Expression | None:
        try:
            return compile_expression(source, scope)
        except ExpressionError as error:
            self.report.at(where, str(error))
            return None

    def compile_typed(
        self, source: str, scope: Scope, expected: Type, where: list[str | int]
    ) -> Expression | None:
        expression = self.compile(source, scope, where)
        if expression is not None and not is_assignable(expression.type, expected):
            self.report.at(
                where, f"expression {source!r} must be {expected}; it is {expression.type}"
            )
            return None
        return expression

    def constraints(
        self,
        raws: Sequence[Mapping[str, Any]],
        where: list[str | int],
        prefix: str,
        scope_for: Mapping[str, Scope],
        known_ids: set[str],
    ) -> list[m.Constraint]:
        """Constraints of one list; `scope_for` maps class ("error"/"requires") to its scope."""
        built = []
        for i, raw in enumerate(raws):
            at: list[str | int] = [*where, i]
            constraint_id, constraint_class = raw["id"], raw["class"]
            if not constraint_id.startswith(prefix + "."):
                self.report.at(
                    [*at, "id"], f"constraint id {constraint_id!r} must start with {prefix}."
                )
            letter = "C" if constraint_class == "error" else "R"
            if constraint_id.rpartition(".")[2][:1] != letter:
                self.report.at(
                    [*at, "id"],
                    f"a {constraint_class!r} constraint id must be numbered {prefix}.{letter}<n>; "
                    f"got {constraint_id!r}",
                )
            if constraint_id in known_ids:
                self.report.at([*at, "id"], f"duplicate constraint id {constraint_id!r}")
            known_ids.add(constraint_id)
            undefined = raw.get("undefined")
            if constraint_class == "requires" and undefined is None:
                self.report.at(
                    at, "a 'requires' constraint must say what is 'undefined' when violated"
                )
            if constraint_class == "error" and undefined is not None:
                self.report.at(
                    [*at, "undefined"], "only 'requires' constraints leave results undefined"
                )
            sources = self.sources(raw.get("sources", []), [*at, "sources"])
            expression = self.compile_typed(
                raw["expr"], scope_for[constraint_class], BOOL, [*at, "expr"]
            )
            if expression is None:
                continue
            built.append(
                m.Constraint(
                    id=constraint_id,
                    constraint_class=constraint_class,
                    doc=tuple(raw["doc"]),
                    expr=expression,
                    message=raw["message"],
                    sources=sources,
                    depends_on=tuple(raw.get("depends_on", [])),
                    note=raw.get("note"),
                    undefined=self.undefined_effect(
                        undefined, scope_for["requires"], [*at, "undefined"]
                    ),
                )
            )
        return built

    def undefined_effect(
        self, raw: Mapping[str, Any] | None, scope: Scope, where: list[str | int]
    ) -> m.UndefinedEffect | None:
        if raw is None:
            return None
        addressed = None
        if "addressed" in raw:
            addressed = self.compile_typed(raw["addressed"], scope, MASK, [*where, "addressed"])
        return m.UndefinedEffect(raw["tensor"], raw["cells"], raw["values"], addressed)

    def check_depends_on(
        self,
        constraints: Sequence[m.Constraint],
        where_of: Mapping[str, list[str | int]],
        declared: Iterable[str],
    ) -> None:
        """Dependencies must be declared constraints (built or not) and form no cycle."""
        declared_ids = set(declared)
        by_id = {c.id: c for c in constraints}
        for constraint in constraints:
            for dependency in constraint.depends_on:
                if dependency not in declared_ids:
                    self.report.at(
                        [*where_of[constraint.id], "depends_on"],
                        f"{constraint.id} depends on unknown constraint {dependency!r}",
                    )
        # A dependency cycle would make every constraint in it unevaluable.
        state: dict[str, str] = {}

        def visit(cid: str, trail: list[str]) -> None:
            if state.get(cid) == "done" or cid not in by_id:
                return
            if state.get(cid) == "active":
                cycle = [*trail[trail.index(cid) :], cid]
                self.report.at(
                    [*where_of[cid], "depends_on"], f"dependency cycle: {' -> '.join(cycle)}"
                )
                return
            state[cid] = "active"
            for dependency in by_id[cid].depends_on:
                visit(dependency, [*trail, cid])
            state[cid] = "done"

        for cid in sorted(by_id):
            visit(cid, [])


def tensor_type(common: m.CommonSpec) -> TensorType:
    return TensorType(tuple((member.name, member.type) for member in common.tensor_members))


def field_type(field: m.Field, common: m.CommonSpec) -> Type:
    """The expression-language type of an operator field."""
    if field.is_tensor:
        return tensor_type(common)
    if field.kind == "data_type":
        return EnumType(m.DATA_TYPE_ENUM)
    if field.kind == "enum":
        return EnumType(field.enum or "")
    if field.kind == "scalar_union":
        return NUMBER
    if field.kind in STRUCT_TYPES:
        return STRUCT_TYPES[field.kind]
    return _FIELD_TYPES[field.kind]


def unknown_level(name: str, levels: Iterable[str]) -> str:
    """`levels` in their order (1_0 first)."""
    return f"unknown feature level {name!r} (known: {known(levels)})"
