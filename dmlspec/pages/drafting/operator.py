"""Draft one operator spec (as JSON data) from its DirectML reference page.

The draft holds what a page states mechanically: the struct's fields in order with kind, C
type and optionality, the introduction level, every tensor-support table, the tensor
constraints that follow the "must have the same" pattern (one constraint per member), field
ranges written as "must be in the range [a, b]", the examples as written, and every other
normative sentence listed under `unencoded`. Judgement (errata, conditional rules, output-size
formulas) is added by hand, after which the spec is `curated` and never re-drafted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..example_code import parse_example_code
from ..read import DocPage, DocPageError, function_groups, parse_page
from .ctypes import CType, classify, plain_c_type
from .header import HeaderField, compatible_kinds
from .sentences import normative_sentences, parse_same_members, parse_value_range
from .sources import page_text

__all__ = ["DraftContext", "OperatorDraft", "draft_operator"]

SCHEMA_REF = "../schema/operator.schema.json"
UNENCODED_REASON = "drafted from the page; not yet encoded as a constraint"
TENSOR_ARRAY_REASON = (
    "names a tensor array; the expression language has no per-element member access yet"
)
_SUPPORT_KINDS = {
    "Input": ("input", False),
    "Optional input": ("input", True),
    "Array of inputs": ("input", False),
    "Output": ("output", False),
    "Optional output": ("output", True),
    "Array of outputs": ("output", False),
}
_MEMBER_ORDER = ("DataType", "DimensionCount", "Sizes")
NULLS = ("null", "nullptr", "NULL", "none", "None")


@dataclass(frozen=True)
class DraftContext:
    """Facts from outside the page that a draft needs."""

    docs_dir: Path  # holds reference/directml-docs/
    commits: Mapping[str, str]  # page file name -> commit (the manifest)
    history_levels: Mapping[str, str]  # DML_OPERATOR_X -> level the history page lists it under
    enums: frozenset[str]
    data_types: frozenset[str]
    level_ranks: Mapping[str, int]
    header: Mapping[str, tuple[HeaderField, ...]]  # DirectMLSchema.h facts by operator type


@dataclass
class OperatorDraft:
    name: str
    spec: dict[str, Any]
    problems: list[str] = field(default_factory=list)  # what the page leaves to judgement
    errata: list[str] = field(default_factory=list)  # where the page is wrong, and the fix


def _front_matter_value(text: str, key: str) -> str | None:
    match = re.search(rf"^{key}:\s*(.+)$", text, re.MULTILINE)
    return match[1].strip() if match else None


def draft_operator(path: Path, context: DraftContext) -> OperatorDraft:
    """Raises DocPageError when the page cannot be read."""
    page = parse_page(path)
    text = page_text(path)
    title = next(iter((_front_matter_value(text, "title") or "").split()), "")
    struct = page.struct_name or title
    if not re.fullmatch(r"DML_\w+_DESC", struct):
        raise DocPageError(str(path), 1, f"no DML_*_DESC struct name in the title ({title!r})")
    name = struct.removeprefix("DML_").removesuffix("_DESC").removesuffix("_OPERATOR")
    draft = OperatorDraft(name, {})
    summary = _front_matter_value(text, "description") or struct
    fields = _fields(page, draft)
    header = context.header.get(f"DML_OPERATOR_{name}")
    if header is None:
        draft.problems.append(
            "spec/sources/directml_schema.json has no DirectMLSchema.h facts to follow for this "
            "operator (none, or marked not_followed); the fields follow the page alone"
        )
    else:
        fields = _follow_header(fields, header, draft)
    _link_value_types(fields, draft)
    introduced = _introduced(page, text, name, context, draft)
    support = _support(page, text, fields, introduced, context, draft)
    constraints, unencoded = _constraints(page, fields, name, draft)
    spec: dict[str, Any] = {
        "$schema": SCHEMA_REF,
        "name": name,
        "status": "drafted",
        "operator_type": f"DML_OPERATOR_{name}",
        "aliases": [],
        "struct": struct,
        "summary": summary,
        "introduced": introduced,
        "doc_pages": [
            {
                "id": "en",
                "path": f"reference/directml-docs/{path.name}",
                "language": "en-US",
                "translation": "original",
                "commit": context.commits.get(path.name, ""),
            }
        ],
        "fields": fields,
        "definitions": [],
        "constraints": constraints,
        "support": support,
        "examples": _examples(page, fields, draft),
    }
    if not spec["doc_pages"][0]["commit"]:
        del spec["doc_pages"][0]["commit"]
    if unencoded:
        spec["unencoded"] = unencoded
    notes = [f"Errata: {e}" for e in draft.errata] + [f"Draft: {p}" for p in draft.problems]
    if notes:
        spec["notes"] = notes
    draft.spec = spec
    return draft


# -- fields -----------------------------------------------------------------------------------


def _member_doc(text: str) -> tuple[str | None, str]:
    """(the Type line's markdown, the description without it)."""
    type_line = None
    kept = []
    for line in text.splitlines():
        match = re.match(r"^\s*Type:\s*(.*)$", line)
        if match and type_line is None:
            type_line = match[1]
        else:
            kept.append(line)
    return type_line, "\n".join(kept).strip()


def _fields(page: DocPage, draft: OperatorDraft) -> list[dict[str, Any]]:
    texts = dict(page.member_text)
    declared = {name: c_type for c_type, name in page.struct_fields}
    order = [name for _, name in page.struct_fields] or list(page.member_names)
    if page.struct_fields and page.member_names and list(page.member_names) != order:
        draft.errata.append(
            f"the page's struct block lists {order} but its member sections document "
            f"{list(page.member_names)}; the spec follows the struct block (and DirectMLSchema.h)"
        )
    support_kinds = {row.tensor: row.kind for table in page.support_tables for row in table.rows}
    fields: list[dict[str, Any]] = []
    for name in order:
        type_line, doc = _member_doc(texts.get(name, ""))
        c_type = declared.get(name) or (plain_c_type(type_line) if type_line else "")
        if not c_type:
            draft.problems.append(f"{name} has no Type line and no struct declaration")
            continue
        c_type = " ".join(c_type.replace("*", " *").split()).replace(" *", "*")
        parsed = classify(c_type)
        if parsed.problem:
            draft.problems.append(f"{name}: {parsed.problem} ({c_type})")
        fields.append(_field(name, c_type, parsed, doc, support_kinds.get(name), draft))
    return fields


def _follow_header(
    fields: list[dict[str, Any]], header: Sequence[HeaderField], draft: OperatorDraft
) -> list[dict[str, Any]]:
    """The header's fields, in its order, with its kinds and optionality; errata where the
    page differs."""
    by_name = {f["name"]: f for f in fields}
    page_order = [f["name"] for f in fields if f["name"] in {h.name for h in header}]
    header_order = [h.name for h in header if h.name in by_name]
    if page_order != header_order:
        draft.errata.append(
            f"the page documents the fields in the order {page_order}; DirectMLSchema.h "
            f"declares {header_order}; the spec follows the header"
        )
    result = []
    for facts in header:
        data = by_name.pop(facts.name, None)
        if data is None:
            draft.errata.append(
                f"the page does not document {facts.name}, which DirectMLSchema.h declares "
                f"({facts.kind}, {facts.type}); the spec adds it from the header"
            )
            data = {
                "name": facts.name,
                "kind": facts.default_kind,
                "c_type": facts.type,
                "optional": facts.optional,
                "doc": "(not documented on the page; declared by DirectMLSchema.h)",
            }
        else:
            if data["kind"] not in compatible_kinds(facts):
                draft.errata.append(
                    f"the page declares {facts.name} as {data['c_type']!r} ({data['kind']}); "
                    f"DirectMLSchema.h declares {facts.kind} {facts.type}; the spec follows "
                    "the header"
                )
                data["kind"] = facts.default_kind
                data.pop("enum", None)
                if data["kind"] == "scalar_union":
                    data["value_type_field"] = ""
            if data["optional"] != facts.optional:
                draft.errata.append(
                    f"the page makes {facts.name} {'optional' if data['optional'] else 'required'};"
                    f" DirectMLSchema.h makes it {'optional' if facts.optional else 'required'};"
                    " the spec follows the header"
                )
                data["optional"] = facts.optional
        result.append(data)
    for name in by_name:
        draft.errata.append(
            f"the page documents {name}, which DirectMLSchema.h does not declare; left out"
        )
    return result


def _field(
    name: str,
    c_type: str,
    parsed: CType,
    doc: str,
    support_kind: str | None,
    draft: OperatorDraft,
) -> dict[str, Any]:
    kind = parsed.kind
    optional = parsed.maybe_null
    if kind == "input_tensor" and (support_kind or "").startswith("Array of"):
        draft.problems.append(
            f"{name} is an array in the support table, but its type names no _Field_size_; "
            "the draft makes it an array"
        )
        kind = "input_tensor_array"
    if kind in ("input_tensor", "input_tensor_array"):
        direction, table_optional = _SUPPORT_KINDS.get(support_kind or "", (None, False))
        if direction is None:
            direction = "output" if name.startswith("Output") else "input"
        kind = kind.replace("input", direction)
        if table_optional and not optional:
            draft.problems.append(
                f"{name} is optional in the support table but not _Maybenull_ in its type"
            )
            optional = True
    data: dict[str, Any] = {"name": name, "kind": kind, "c_type": c_type, "optional": optional}
    if kind == "enum":
        data["enum"] = parsed.base
    if kind == "scalar_union":
        data["value_type_field"] = ""  # linked below
    if parsed.count_field is not None and kind.endswith("_array"):
        data["count_field"] = parsed.count_field
    if kind in ("operator_desc", "operator_desc_array"):
        data["operator_set"] = "FUSED_ACTIVATIONS" if name == "FusedActivation" else "ACTIVATIONS"
    data["doc"] = doc or "(the page gives no description)"
    return data


def _link_value_types(fields: list[dict[str, Any]], draft: OperatorDraft) -> None:
    """A scalar union is read through the nearest data_type field (before it, else after)."""
    for i, data in enumerate(fields):
        if data["kind"] != "scalar_union":
            continue
        before = [f["name"] for f in fields[:i] if f["kind"] == "data_type"]
        after = [f["name"] for f in fields[i + 1 :] if f["kind"] == "data_type"]
        partner = (before[-1:] or after[:1] or [None])[0]
        if partner is None:
            draft.problems.append(f"{data['name']} is a scalar union with no data_type field")
            data["kind"] = "float"
            data.pop("value_type_field", None)
        else:
            data["value_type_field"] = partner
    for data in fields:
        if not data["kind"].endswith("_array"):
            data.pop("count_field", None)
        if data["kind"] not in ("operator_desc", "operator_desc_array"):
            data.pop("operator_set", None)
        elif "operator_set" not in data:
            data["operator_set"] = (
                "FUSED_ACTIVATIONS" if data["name"] == "FusedActivation" else "ACTIVATIONS"
            )
        if data["kind"].endswith("_array") and "count_field" not in data:
            count = _count_field_from_docs(data["name"], fields)
            if count is None and any(f["name"] == "DimensionCount" for f in fields):
                count = "DimensionCount"
                draft.problems.append(
                    f"{data['name']} is an array whose type names no count field; "
                    "the draft assumes DimensionCount, as the struct's other arrays use"
                )
            if count is None:
                draft.problems.append(f"{data['name']} is an array with no count field")
            else:
                data["count_field"] = count
        # keep the key order of the model's to_json: name, kind, c_type, optional, enum,
        # value_type_field, count_field, operator_set, doc
        order = ["name", "kind", "c_type", "optional", "enum", "value_type_field"]
        order += ["count_field", "operator_set", "doc"]
        items = {k: data[k] for k in order if k in data}
        data.clear()
        data.update(items)


def _count_field_from_docs(name: str, fields: Sequence[dict[str, Any]]) -> str | None:
    """The UINT field whose description says "determines the size of the *Name* array"."""
    for other in fields:
        if other["kind"] == "uint" and re.search(
            rf"size of the \*?{name}\*? array", other["doc"], re.IGNORECASE
        ):
            return str(other["name"])
    return None


# -- level and support ------------------------------------------------------------------------


def _introduced(
    page: DocPage, text: str, name: str, context: DraftContext, draft: OperatorDraft
) -> str:
    """The page's level; where the page states two or disagrees with the history page, the
    one the support tables agree with (their lowest "and above" level), with an erratum."""
    stated = list(
        dict.fromkeys(
            re.findall(r"[Tt]his operator was introduced in `?DML_FEATURE_LEVEL_(\d+_\d+)", text)
        )
    )
    from_history = context.history_levels.get(f"DML_OPERATOR_{name}")
    tables = [t.feature_level for t in page.support_tables if t.feature_level]
    lowest_table = min(tables, key=lambda lv: context.level_ranks.get(lv, 0)) if tables else None
    page_level = page.introduced or (stated[0] if stated else None)
    if page_level is None:
        draft.problems.append("the page states no introduction level; the history page's is used")
        return from_history or lowest_table or "1_0"
    if len(stated) > 1:
        chosen = lowest_table if lowest_table is not None and lowest_table in stated else page_level
        draft.errata.append(
            f"the page states two introduction levels ({', '.join(stated)}); its support tables "
            f"start at {lowest_table} and the feature-level history lists it under "
            f"{from_history}; the spec says {chosen}"
        )
        return chosen
    if from_history is not None and from_history != page_level:
        if from_history == lowest_table:
            draft.errata.append(
                f"the page says DML_FEATURE_LEVEL_{page_level}; the feature-level history and "
                f"the page's own support tables say {from_history}; the spec follows them"
            )
            return from_history
        draft.problems.append(
            f"the page says DML_FEATURE_LEVEL_{page_level}, the feature-level history lists it "
            f"under DML_FEATURE_LEVEL_{from_history}; the draft follows the page"
        )
    return page_level


def _support(
    page: DocPage,
    text: str,
    fields: list[dict[str, Any]],
    introduced: str,
    context: DraftContext,
    draft: OperatorDraft,
) -> list[dict[str, Any]]:
    tensor_names = [f["name"] for f in fields if "tensor" in f["kind"]]
    groups = function_groups(text)
    enum_field = next((f["name"] for f in fields if f["kind"] == "enum"), None)
    rows: list[dict[str, Any]] = []
    for table in page.support_tables:
        level = table.feature_level or introduced
        row: dict[str, Any] = {"feature_level": level, "sources": ["en"]}
        group = [names for line, names in groups if line < table.line]
        if group and enum_field is not None:
            row["when"] = " or ".join(f'{enum_field} == "{n}"' for n in group[-1])
        tensors = []
        for page_row in table.rows:
            if page_row.tensor not in tensor_names:
                draft.problems.append(
                    f"the {level} support table lists {page_row.tensor}, which is not a "
                    "field of the struct; left out"
                )
                continue
            unknown = [t for t in page_row.data_types if t not in context.data_types]
            if unknown:
                draft.problems.append(
                    f"the {level} support table lists unknown data types {unknown} for "
                    f"{page_row.tensor}; left out"
                )
            if not page_row.data_types or not page_row.dimension_counts:
                draft.problems.append(
                    f"the {level} support table gives {page_row.tensor} no "
                    f"{'data types' if not page_row.data_types else 'dimension counts'}: "
                    "as written, no desc is valid in that row"
                )
            tensors.append(
                {
                    "tensor": page_row.tensor,
                    "dimension_counts": list(page_row.dimension_counts),
                    "data_types": [t for t in page_row.data_types if t in context.data_types],
                }
            )
        listed = {t["tensor"] for t in tensors}
        for name in tensor_names:
            if name not in listed:
                draft.problems.append(
                    f"the {level} support table does not list {name}; it is left unsupported "
                    "in that row"
                )
                tensors.append({"tensor": name, "dimension_counts": [], "data_types": []})
        row["tensors"] = tensors
        rows.append(row)
    rows.sort(key=lambda r: (r.get("when", ""), context.level_ranks.get(r["feature_level"], 0)))
    return rows


# -- constraints ------------------------------------------------------------------------------


def _constraints(
    page: DocPage, fields: list[dict[str, Any]], name: str, draft: OperatorDraft
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    by_name = {f["name"]: f for f in fields}
    constraints: list[dict[str, Any]] = []
    unencoded: list[dict[str, Any]] = []
    number = 0

    def next_id() -> str:
        nonlocal number
        number += 1
        return f"{name}.C{number}"

    for bullet in page.tensor_constraints:
        sentence = " ".join(bullet.split())
        same = parse_same_members(sentence)
        if same is None or not all(t in by_name for t in same.tensors):
            unencoded.append({"doc": sentence, "reason": UNENCODED_REASON})
            continue
        if any(by_name[t]["kind"].endswith("_tensor_array") for t in same.tensors):
            unencoded.append({"doc": sentence, "reason": TENSOR_ARRAY_REASON})
            continue
        ids: dict[str, str] = {}
        for member in sorted(same.members, key=_MEMBER_ORDER.index):
            expression = _same_expression(same.tensors, member, by_name)
            twin = next((c for c in constraints if c["expr"] == expression), None)
            if twin is not None:  # the page states the same rule twice
                if sentence not in twin["doc"]:
                    twin["doc"].append(sentence)
                else:
                    draft.problems.append(f"the page repeats the tensor constraint {sentence!r}")
                ids[member] = twin["id"]
                continue
            constraint: dict[str, Any] = {
                "id": next_id(),
                "class": "error",
                "doc": [sentence],
                "sources": ["en"],
                "expr": expression,
                "message": f"{', '.join(same.tensors)} must have the same {member}",
            }
            if member == "Sizes" and "DimensionCount" in ids:
                constraint["depends_on"] = [ids["DimensionCount"]]
            ids[member] = constraint["id"]
            constraints.append(constraint)
    for field_name, text in page.member_text:
        data = by_name.get(field_name)
        _, doc = _member_doc(text)
        if data is None:  # a member the struct does not have (an erratum of the page)
            unencoded += [
                {"doc": s, "reason": f"describes {field_name}, which the struct does not have"}
                for s in normative_sentences(doc)
            ]
            continue
        for sentence in normative_sentences(doc):
            bounds = parse_value_range(sentence)
            if bounds is not None and data["kind"] in ("uint", "int") and "range" not in data:
                low, high, exclusive = bounds
                data["range"] = {
                    "id": next_id(),
                    "min": low,
                    "max": high,
                    "max_exclusive": exclusive,
                    "doc": [sentence],
                }
                continue
            unencoded.append({"doc": sentence, "field": field_name, "reason": UNENCODED_REASON})
    return constraints, unencoded


def _same_expression(
    tensors: Sequence[str], member: str, by_name: Mapping[str, dict[str, Any]]
) -> str:
    """all_equal over the required tensors; each optional one must agree when it is given."""
    required = [t for t in tensors if not by_name[t]["optional"]]
    optional = [t for t in tensors if by_name[t]["optional"]]
    anchor = required[0] if required else tensors[0]
    parts = []
    if len(required) >= 2:
        parts.append(f"all_equal({', '.join(f'{t}.{member}' for t in required)})")
    for t in optional:
        if t != anchor:
            parts.append(f"(not present({t}) or {t}.{member} == {anchor}.{member})")
    return " and ".join(parts) if parts else "True"


# -- examples ---------------------------------------------------------------------------------


def _examples(
    page: DocPage, fields: list[dict[str, Any]], draft: OperatorDraft
) -> list[dict[str, Any]]:
    by_name = {f["name"]: f for f in fields}
    examples: list[dict[str, Any]] = []
    for index, block in enumerate(page.examples, start=1):
        label = block.title or f"example {index}"
        try:
            parsed = parse_example_code(block.code)
        except DocPageError as error:
            draft.problems.append(f"{label}: not drafted, its code block cannot be read ({error})")
            continue
        as_written: dict[str, Any] = {}
        unknown = []
        for tensor in parsed.tensors:
            base, _, position = tensor.name.partition("[")
            data = by_name.get(base)
            if data is None or "tensor" not in data["kind"]:
                unknown.append(tensor.name)
                continue
            value: dict[str, Any] = {"DataType": tensor.data_type, "Sizes": list(tensor.sizes)}
            if tensor.values is not None:
                value["Values"] = _nested(tensor.values)
            if data["kind"].endswith("_array"):
                items = as_written.setdefault(base, [])
                if position.rstrip("]") != str(len(items)):
                    unknown.append(tensor.name)
                    continue
                items.append(value)
            elif position:
                unknown.append(tensor.name)
            elif tensor.name in as_written:
                unknown.append(f"{tensor.name} twice")
            else:
                as_written[tensor.name] = value
        for scalar_name, raw in parsed.scalars:
            data = by_name.get(scalar_name)
            if data is not None and "tensor" in data["kind"] and raw.strip() in NULLS:
                continue  # an optional tensor written as null: left out, as JSON does
            if data is None or "tensor" in data["kind"]:
                unknown.append(scalar_name)
                continue
            as_written[scalar_name] = _scalar(raw)
        if unknown or not as_written:
            draft.problems.append(
                f"{label}: not drafted, it names {unknown or 'nothing'} that the draft cannot "
                "place in the struct's fields"
            )
            continue
        example_id = _example_id(block.title, index)
        taken = {e["id"] for e in examples}
        suffix = 2
        while example_id in taken:
            example_id, suffix = f"{_example_id(block.title, index)}_{suffix}", suffix + 1
        examples.append(
            {
                "id": example_id,
                "title": block.title,
                "sources": ["en"],
                "as_written": as_written,
            }
        )
    return examples


def _example_id(title: str | None, index: int) -> str:
    if not title:
        return f"example_{index}"
    slug = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
    return slug[:60].rstrip("_") or f"example_{index}"


def _nested(values: object) -> object:
    return [_nested(v) for v in values] if isinstance(values, tuple) else values


def _scalar(raw: str) -> object:
    text = raw.strip().rstrip(",;")
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    try:
        return float(text.rstrip("fF"))
    except ValueError:
        return text
