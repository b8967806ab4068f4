"""Compare the specs with the DirectML doc pages they cite, cell by cell.

For every page an operator spec lists in `doc_pages` (the current English reference page and
the older seeds, some machine-translated), this checks the struct fields, the introduction
level, every tensor-support table cell in both directions (each table on the page has a spec
row that cites the page, and each row citing the page has its table there), every example
(sizes, data types, values, scalar fields, titles), the tensor-constraint bullets, and that each
doc sentence a constraint quotes really is on the pages it cites. For spec/common.json it checks
data types, element sizes, feature levels, flags and quoted sentences against their pages.

The spec is never compared with itself: every expected value here is read from a page. The
findings and their report are in findings.py.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from .. import model as m
from ..safeio import UnsafePath, read_text
from .drafting.sentences import normative_sentences
from .example_code import parse_example_code
from .findings import DocsReport
from .read import DocPage, DocPageError, english_text, function_groups, parse_page

__all__ = ["check_docs", "default_docs_dir", "plain"]

# A support table's "Kind" cell as the field kind (and optionality) it implies.
_TENSOR_KINDS = {
    "Input": "input_tensor",
    "Optional input": "input_tensor (optional)",
    "Array of inputs": "input_tensor_array",
    "Output": "output_tensor",
    "Optional output": "output_tensor (optional)",
    "Array of outputs": "output_tensor_array",
}
_NULLS = ("null", "nullptr", "NULL", "none", "None")  # an optional tensor left out
_SIZES_LINE = re.compile(r"^\s*(\w+Tensor)\.Sizes = [\[{]\s*([\d,\s]+)[\]}]", re.M)
_COUNT_LINE = re.compile(r"^\s*(\w+DimensionCount) = (\d+)", re.M)


def default_docs_dir() -> Path:
    """The shared/ folder beside the repository checkout."""
    return Path(__file__).resolve().parents[3] / "shared"


HISTORY_PAGE = "feature-level-history"  # the doc_pages id of the feature-level history


def plain(text: str) -> str:
    """Text without markdown emphasis, code ticks or line breaks, for sentence comparison."""
    # Tags only: a '<' that starts a name ('<b>', '</a>'), never a comparison ('x < 0').
    text = re.sub(r"</?[A-Za-z][^<>]*>", "", text)
    text = re.sub(r"\[([^\[\]\n]*)\]\([^()\s]*\)", r"\1", text)  # [link text](target) -> link text
    text = text.replace("**", "").replace("*", "").replace("`", "").replace("\\", "")
    return " ".join(text.split())


def check_docs(catalog: m.Catalog, docs_dir: Path) -> DocsReport:
    """Compare every spec with every page it cites under `docs_dir`."""
    report = DocsReport()
    _check_common(catalog.common, docs_dir, report)
    for spec in catalog.operators:
        readable: dict[str, tuple[m.DocPage, DocPage, str]] = {}
        for page in spec.doc_pages:
            report.pages.append((spec.name, page.id, page.path))
            path = docs_dir / page.path
            try:
                readable[page.id] = (page, parse_page(path), english_text(read_text(path)))
            except (OSError, DocPageError, UnsafePath) as error:
                report.compare(spec.name, page.id, "page readable", "readable", f"{error}")
        english = {page_id: plain(text) for page_id, (_, _, text) in readable.items()}
        for page, parsed, text in readable.values():
            _OperatorPageCheck(spec, page, parsed, text, report, english).run()
    return report


class _OperatorPageCheck:
    def __init__(
        self,
        spec: m.OperatorSpec,
        page: m.DocPage,
        parsed: DocPage,
        english: str,
        report: DocsReport,
        english_by_page: dict[str, str],
    ) -> None:
        self.spec = spec
        self.page = page
        self.parsed = parsed
        self.english = plain(english)
        self.english_raw = english
        self.report = report
        self.english_by_page = english_by_page  # every page of the spec, as plain text
        self.has_english = page.translation != "machine"

    def compare(
        self, what: str, expected: object, actual: object, explanation: str | None = None
    ) -> None:
        self.report.compare(self.spec.name, self.page.id, what, expected, actual, explanation)

    def erratum_about(self, *names: str) -> str | None:
        """The spec's erratum notes that together name all of `names`, if they do."""
        found = []
        for name in names:
            note = next(
                (
                    n
                    for n in self.spec.notes
                    if n.startswith("Errata:") and re.search(rf"\b{re.escape(name)}\b", n)
                ),
                None,
            )
            if note is None:
                return None
            found.append(note)
        return " | ".join(dict.fromkeys(found)) if found else None

    def run(self) -> None:
        self.struct()
        self.support_tables()
        self.examples()
        self.sizes_examples()
        if self.has_english:
            self.tensor_constraints()
            self.quoted_sentences()
            if self.page.translation == "original":
                self.normative_sentences()

    def struct(self) -> None:
        structs = {self.spec.struct, *(a.struct for a in self.spec.aliases)}
        if self.parsed.struct_name is not None:
            name = self.parsed.struct_name
            self.compare("struct name", name, name if name in structs else sorted(structs))
        names = [f.name for f in self.spec.fields]
        if self.parsed.struct_fields:
            page_names = [n for _, n in self.parsed.struct_fields]
            self.compare(
                "struct fields",
                page_names,
                names,
                self.erratum_about(*_differing(page_names, names)),
            )
            self.compare(
                "struct field types",
                [
                    " ".join(t.replace("*", " *").split()).replace(" *", "*")
                    for t, _ in self.parsed.struct_fields
                ],
                [f.c_type for f in self.spec.fields],
                self.erratum_about("DirectMLSchema.h"),
            )
        if self.parsed.member_names:
            members = list(self.parsed.member_names)
            self.compare(
                "documented members",
                members,
                names,
                self.erratum_about(*_differing(members, names)) or self.erratum_about("order"),
            )
        if self.parsed.introduced is not None:
            self.compare(
                "introduced",
                self.parsed.introduced,
                self.spec.introduced,
                self.erratum_about("introduction")
                or self.erratum_about("DML_FEATURE_LEVEL_" + self.parsed.introduced),
            )

    def support_tables(self) -> None:
        """Tables under a function heading ("### ARGMIN and ARGMAX") match the row whose
        `when` names those functions; other tables the row without one."""
        rows = {(row.feature_level, _when_names(row)): row for row in self.spec.support}
        groups = function_groups(Path(self.parsed.path).read_text(encoding="utf-8"))
        seen: set[tuple[str, frozenset[str]]] = set()
        for table in self.parsed.support_tables:
            level = table.feature_level or self.spec.introduced
            heading = [names for line, names in groups if line < table.line]
            group = frozenset(heading[-1]) if heading else frozenset()
            label = f"support {level}" + ("" if table.feature_level else " (unheaded table)")
            if group:
                label += f" [{', '.join(sorted(group))}]"
            row = rows.get((level, group))
            self.compare(
                f"{label}: spec row citing this page", "present", _row_cites(row, self.page.id)
            )
            if row is None:
                continue
            seen.add((level, group))
            self.compare(
                f"{label}: tensors",
                [r.tensor for r in table.rows],
                [t.tensor for t in row.tensors],
            )
            for page_row in table.rows:
                try:
                    cell = row.tensor(page_row.tensor)
                    field = self.spec.field(page_row.tensor)
                except KeyError:
                    continue
                self.compare(
                    f"{label} {page_row.tensor} kind",
                    _TENSOR_KINDS.get(page_row.kind, page_row.kind),
                    field.kind + (" (optional)" if field.optional and field.is_tensor else ""),
                    self.erratum_about(page_row.tensor),
                )
                self.compare(
                    f"{label} {page_row.tensor} dimension counts",
                    sorted(page_row.dimension_counts),
                    sorted(cell.dimension_counts),
                    _row_erratum(row, page_row.tensor),
                )
                self.compare(
                    f"{label} {page_row.tensor} data types",
                    list(page_row.data_types),
                    list(cell.data_types),
                    _row_erratum(row, page_row.tensor),
                )
        for row in self.spec.support:
            if self.page.id in row.sources and (row.feature_level, _when_names(row)) not in seen:
                self.compare(f"support {row.feature_level}: table on the page", "absent", "cited")

    def page_examples(self) -> list[m.Example]:
        return [
            e
            for e in self.spec.examples
            if self.page.id in e.sources
            and any(
                isinstance(t, m.ExampleTensor) and t.values is not None
                for _, v in e.as_written
                for t in (v if isinstance(v, tuple) else (v,))
            )
        ]

    def examples(self) -> None:
        """Each example block against the spec example of the same title (or, untitled, the
        same position among the untitled); a block the spec leaves out must be explained by a
        draft note naming it."""
        expected = self.page_examples()
        titled: dict[str, list[m.Example]] = {}
        for candidate in expected:
            if candidate.title is not None:
                titled.setdefault(candidate.title, []).append(candidate)
        untitled = [e for e in expected if e.title is None]
        left_out = [n for n in self.spec.notes if "not drafted" in n]
        matched = 0
        for index, block in enumerate(self.parsed.examples, start=1):
            label = block.title or f"example {index}"
            if block.title is not None and self.has_english:
                same_title = titled.get(block.title, [])
                example = same_title.pop(0) if same_title else None
            else:
                example = untitled.pop(0) if untitled else None
            if example is None and block.title is not None and not self.has_english:
                example = expected[index - 1] if index <= len(expected) else None
            if example is None:
                note = next((n for n in left_out if label in n), None)
                self.compare(f"example '{label}'", "in the spec", "left out", note)
                continue
            matched += 1
            self.example(block, example)
        self.compare("number of examples", len(expected), matched)

    def example(self, block: Any, example: m.Example) -> None:
        what = f"example {example.id}"
        if self.has_english and block.title is not None:
            self.compare(f"{what} title", block.title, example.title)
        parsed = parse_example_code(block.code)
        written = example.as_written.as_dict()
        tensors: dict[str, Any] = {}
        for tensor in parsed.tensors:
            base, _, position = tensor.name.partition("[")
            spec_value = written.get(base)
            if position and isinstance(spec_value, tuple):
                at = int(position.rstrip("]"))
                tensors[tensor.name] = spec_value[at] if at < len(spec_value) else None
            else:
                tensors[tensor.name] = spec_value
        listed = sorted(
            {t.name.partition("[")[0] for t in parsed.tensors}
            | {name for name, raw in parsed.scalars if raw.strip() not in _NULLS}
        )
        self.compare(f"{what} fields", listed, sorted(written))
        for tensor in parsed.tensors:
            spec_tensor = tensors.get(tensor.name)
            if not isinstance(spec_tensor, m.ExampleTensor):
                continue
            self.compare(f"{what} {tensor.name} Sizes", list(tensor.sizes), list(spec_tensor.sizes))
            self.compare(f"{what} {tensor.name} DataType", tensor.data_type, spec_tensor.data_type)
            self.compare(
                f"{what} {tensor.name} Values", _nested(tensor.values), _nested(spec_tensor.values)
            )
        for name, raw in parsed.scalars:
            if raw.strip() in _NULLS:
                continue
            self.compare(f"{what} {name}", _scalar(raw), written.get(name))

    def sizes_examples(self) -> None:
        """Sizes-only examples quoted from member text (e.g. the UpdatesTensor.Sizes example)."""
        if not self.has_english:
            return
        for example in self.spec.examples:
            if self.page.id not in example.sources or example in self.page_examples():
                continue
            written = example.as_written.as_dict()
            found: dict[str, object] = {
                name: [int(v) for v in sizes.replace(" ", "").split(",") if v]
                for name, sizes in _SIZES_LINE.findall(self._raw_english())
            }
            found.update({name: int(v) for name, v in _COUNT_LINE.findall(self._raw_english())})
            for name, value in written.items():
                spec_value = list(value.sizes) if isinstance(value, m.ExampleTensor) else value
                self.compare(f"example {example.id} {name}", found.get(name, "absent"), spec_value)

    def _raw_english(self) -> str:
        return english_text(read_text(Path(self.parsed.path)))

    def tensor_constraints(self) -> None:
        quoted = [plain(sentence) for c in self.spec.constraints for sentence in c.doc]
        listed = {plain(u.doc): u.reason for u in self.spec.unencoded}
        for bullet in self.parsed.tensor_constraints:
            text = plain(bullet)
            reason = listed.get(text)
            self.compare(
                f"tensor constraint '{text}'",
                "encoded",
                "encoded" if any(text in q for q in quoted) else "not encoded by any constraint",
                None if reason is None else f"listed as not yet encoded: {reason}",
            )

    def normative_sentences(self) -> None:
        """Every normative sentence of a field description is quoted by a constraint (or a
        field range) or listed under `unencoded`."""
        quoted = " ".join(plain(sentence) for c in self.spec.constraints for sentence in c.doc)
        listed = {plain(u.doc) for u in self.spec.unencoded}
        for name, text in self.parsed.member_text:
            for sentence in normative_sentences(_without_type_line(text)):
                flat = plain(sentence)
                status = (
                    "encoded"
                    if flat in quoted
                    else "listed as not yet encoded"
                    if flat in listed
                    else "neither encoded nor listed"
                )
                self.compare(
                    f"{name} sentence '{flat[:60]}...'",
                    "encoded or listed",
                    "encoded or listed" if status != "neither encoded nor listed" else status,
                )

    def quoted_sentences(self) -> None:
        """Each sentence a constraint quotes is on every page it cites, except that a constraint
        quoting an operator page and the feature-level history together has each sentence on
        one of the two kinds of page (the history's sentences are not on the operator page)."""
        for constraint in self.spec.constraints:
            if constraint.sources and self.page.id not in constraint.sources:
                continue
            for sentence in constraint.doc:
                text = plain(sentence)
                if text not in self.english and self._on_the_other_kind(constraint, text):
                    continue
                self.compare(
                    f"{constraint.id} quotes '{text[:60]}...'",
                    "on the page",
                    "on the page" if text in self.english else "not on the page",
                )
            if self.page.id == HISTORY_PAGE:
                self.history_section(constraint)

    def _on_the_other_kind(self, constraint: m.Constraint, text: str) -> bool:
        if HISTORY_PAGE not in constraint.sources:
            return False
        if self.page.id != HISTORY_PAGE:
            return text in self.english_by_page.get(HISTORY_PAGE, "")
        return any(
            text in self.english_by_page.get(page, "")
            for page in constraint.sources
            if page != HISTORY_PAGE
        )

    def history_section(self, constraint: m.Constraint) -> None:
        """A constraint gating a desc at a feature level, citing the feature-level history: that
        level's section names this operator and holds the quoted sentence."""
        sections = _sections(self.english_raw, r"^#+ DML_FEATURE_LEVEL_(\d+_\d+)")
        names = [self.spec.operator_type, *(alias.operator_type for alias in self.spec.aliases)]
        levels = re.findall(r'level_at_least\(FeatureLevel, "(\d+_\d+)"\)', constraint.expr.source)
        for level in levels:
            section = plain(sections.get(level, ""))
            named = any(re.search(rf"\b{name}\b", section) for name in names)
            quoted = any(plain(sentence) in section for sentence in constraint.doc)
            self.compare(
                f"{constraint.id}: the DML_FEATURE_LEVEL_{level} section names the operator "
                "and holds a quoted sentence",
                "named, quoted",
                f"{'named' if named else 'not named'}, {'quoted' if quoted else 'not quoted'}",
            )


def _without_type_line(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("Type:"))


def _when_names(row: m.SupportRow) -> frozenset[str]:
    """The enum members a row's `when` names ('Function == "ARGMAX" or ...')."""
    return frozenset(re.findall(r'== "(\w+)"', row.when.source)) if row.when else frozenset()


def _differing(page: list[str], spec: list[str]) -> list[str]:
    """Names in one list and not the other (what an erratum about the difference must name)."""
    return sorted(set(page) ^ set(spec)) or ["order"]


def _row_erratum(row: m.SupportRow, tensor: str) -> str | None:
    """A row's `Errata:` note that names `tensor`: the spec's record of why a cell departs from
    the page (FOLD's table leaves its data-type cells empty)."""
    note = row.note or ""
    return note if note.startswith("Errata:") and re.search(rf"\b{tensor}\b", note) else None


def _row_cites(row: m.SupportRow | None, page_id: str) -> str:
    if row is None:
        return "no row at this level"
    return "present" if page_id in row.sources else f"row does not cite {page_id}"


def _nested(values: Any) -> Any:
    if isinstance(values, list | tuple):
        return [_nested(v) for v in values]
    return values


def _scalar(raw: str) -> object:
    text = raw.strip()
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


# -- spec/common.json ------------------------------------------------------------------------


def _check_common(common: m.CommonSpec, docs_dir: Path, report: DocsReport) -> None:
    pages = {page.id: page for page in common.doc_pages}
    texts: dict[str, str] = {}
    for page in common.doc_pages:
        report.pages.append(("common", page.id, page.path))
        try:
            texts[page.id] = read_text(docs_dir / page.path)
        except (OSError, UnsafePath) as error:
            report.compare("common", page.id, "page readable", "readable", str(error))

    def compare(page: str, what: str, expected: object, actual: object) -> None:
        report.compare("common", page, what, expected, actual)

    if "data-types" in texts:
        on_page = re.findall(
            r"^#{3,4} (?:-field )?DML_TENSOR_DATA_TYPE_(\w+)", texts["data-types"], re.M
        )
        cited = [d.name for d in common.data_types if "data-types" in d.sources]
        compare("data-types", "data types listed on the page", on_page, cited)
    if "helper-functions" in texts:
        sizes = _helper_element_sizes(texts["helper-functions"])
        for data_type in common.data_types:
            if "helper-functions" in data_type.sources:
                compare(
                    "helper-functions",
                    f"{data_type.name} element bytes",
                    sizes.get(data_type.name, "absent"),
                    data_type.bits / 8,
                )
    if "feature-level-history" in texts:
        sections = _sections(texts["feature-level-history"], r"^## DML_FEATURE_LEVEL_(\d+_\d+)")
        for level in common.feature_levels:
            section = sections.get(level.name)
            version = re.search(r"Introduced in DirectML version (\d+\.\d+\.\d+)", section or "")
            compare(
                "feature-level-history",
                f"{level.name} DirectML version",
                version.group(1) if version else None,
                level.dml_version,
            )
        for data_type in common.data_types:
            if "feature-level-history" in data_type.sources:
                mark = f"**DML_TENSOR_DATA_TYPE_{data_type.name}**"
                where = [name for name, text in sections.items() if mark in text]
                compare(
                    "feature-level-history",
                    f"{data_type.name} introduced",
                    where[-1:] or ["absent"],
                    [data_type.since],
                )
        for operator_set in common.operator_sets:
            if HISTORY_PAGE not in operator_set.sources:
                continue
            for member, since in operator_set.since:
                section = plain(sections.get(since, ""))
                stated = f"DML_OPERATOR_{member}" in section and "fused activation" in section
                compare(
                    HISTORY_PAGE,
                    f"{operator_set.name} holds {member} from {since}",
                    "stated" if stated else "not stated in that level's section",
                    "stated",
                )
        ranges = common.dimension_count
        for lower, higher in itertools.pairwise(ranges):
            sentence = f"increased from {lower.max} to {higher.max}"
            compare(
                "feature-level-history",
                f"DimensionCount max {lower.max} -> {higher.max} at {higher.since}",
                "stated" if sentence in sections.get(higher.since, "") else "not stated",
                "stated",
            )
    if "feature-levels" in texts:
        named = set(re.findall(r"DML_FEATURE_LEVEL_(\d+_\d+)", texts["feature-levels"]))
        for level in common.feature_levels:
            if "feature-levels" in level.sources:
                compare(
                    "feature-levels", f"{level.name} on the enum page", level.name in named, True
                )
    if "tensor-flags" in texts:
        flags = {
            name: int(value, 16)
            for name, value in re.findall(
                r"-field DML_TENSOR_FLAG_(\w+):(0x[0-9a-fA-F]+)", texts["tensor-flags"]
            )
        }
        for enum in common.enums:
            if enum.prefix == "DML_TENSOR_FLAG_":
                compare(
                    "tensor-flags", "flag values", flags, {mm.name: mm.value for mm in enum.members}
                )
    for constraint in common.tensor_constraints:
        for page_id in constraint.sources:
            if page_id not in texts or pages[page_id].translation == "machine":
                continue
            page_text = plain(texts[page_id])
            for sentence in constraint.doc:
                text = plain(sentence)
                if text in page_text or any(
                    text in plain(texts[p]) for p in constraint.sources if p in texts
                ):
                    status = "on a cited page"
                else:
                    status = "on no cited page"
                compare(
                    page_id, f"{constraint.id} quotes '{text[:60]}...'", "on a cited page", status
                )


def _helper_element_sizes(text: str) -> dict[str, float]:
    sizes: dict[str, float] = {}
    pending: list[str] = []
    for line in text.splitlines():
        case = re.search(r"case DML_TENSOR_DATA_TYPE_(\w+):", line)
        if case:
            pending.append(case.group(1))
        size = re.search(r"elementSizeInBytes = (\d+);", line)
        if size and pending:
            sizes.update({name: float(size.group(1)) for name in pending})
            pending = []
    return sizes


def _sections(text: str, heading: str) -> dict[str, str]:
    pattern = re.compile(heading, re.M)
    matches = list(pattern.finditer(text))
    return {
        match.group(1): text[
            match.end() : matches[i + 1].start() if i + 1 < len(matches) else len(text)
        ]
        for i, match in enumerate(matches)
    }
