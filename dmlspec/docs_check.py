"""Compare the specs with the DirectML doc pages they cite, cell by cell.

For every page an operator spec lists in `doc_pages` (the current English reference page and
the older seeds, some machine-translated), this checks the struct fields, the introduction
level, every tensor-support table cell in both directions (each table on the page has a spec
row that cites the page, and each row citing the page has its table there), every example
(sizes, data types, values, scalar fields, titles), the tensor-constraint bullets, and that each
doc sentence a constraint quotes really is on the pages it cites. For spec/common.json it checks
data types, element sizes, feature levels, flags and quoted sentences against their pages.

The spec is never compared with itself: every expected value here is read from a page.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import model as m
from .docpages import DocPage, DocPageError, english_text, parse_example_code, parse_page
from .safeio import UnsafePath, read_text

__all__ = ["DocsReport", "Finding", "check_docs", "default_docs_dir", "plain"]

_TENSOR_KINDS = {"Input": "input_tensor", "Output": "output_tensor"}
_SIZES_LINE = re.compile(r"^\s*(\w+Tensor)\.Sizes = [\[{]\s*([\d,\s]+)[\]}]", re.M)
_COUNT_LINE = re.compile(r"^\s*(\w+DimensionCount) = (\d+)", re.M)


def default_docs_dir() -> Path:
    """The shared/ folder beside the repository checkout."""
    return Path(__file__).resolve().parents[2] / "shared"


def plain(text: str) -> str:
    """Text without markdown emphasis, code ticks or line breaks, for sentence comparison."""
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\[([^\[\]\n]*)\]\([^()\s]*\)", r"\1", text)  # [link text](target) -> link text
    text = text.replace("**", "").replace("*", "").replace("`", "").replace("\\", "")
    return " ".join(text.split())


@dataclass(frozen=True)
class Finding:
    """One comparison: `expected` is what the page says, `actual` what the spec says."""

    subject: str  # "SCATTER_ND" or "common"
    page: str  # doc page id
    what: str
    expected: str
    actual: str

    @property
    def ok(self) -> bool:
        return self.expected == self.actual

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "page": self.page,
            "what": self.what,
            "page_says": self.expected,
            "spec_says": self.actual,
            "ok": self.ok,
        }


@dataclass
class DocsReport:
    findings: list[Finding] = field(default_factory=list)
    pages: list[tuple[str, str, str]] = field(default_factory=list)  # subject, page id, path

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def compare(self, subject: str, page: str, what: str, expected: object, actual: object) -> None:
        self.findings.append(Finding(subject, page, what, _text(expected), _text(actual)))

    def render(self) -> str:
        lines = [f"{'subject':<20} {'page':<22} {'checks':>6}  differences"]
        for subject, page, _ in self.pages:
            mine = [f for f in self.findings if f.subject == subject and f.page == page]
            bad = sum(not f.ok for f in mine)
            lines.append(f"{subject:<20} {page:<22} {len(mine):>6}  {bad}")
        mismatches = [f for f in self.findings if not f.ok]
        for finding in mismatches:
            lines.append(
                f"DIFFERENCE {finding.subject} [{finding.page}] {finding.what}: "
                f"page says {finding.expected}; spec says {finding.actual}"
            )
        verdict = (
            "the specs match the pages" if not mismatches else f"{len(mismatches)} differences"
        )
        lines.append(f"{len(self.findings)} checks on {len(self.pages)} pages: {verdict}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "pages": [{"subject": s, "page": p, "path": path} for s, p, path in self.pages],
            "findings": [f.to_json() for f in self.findings],
        }


def _text(value: object) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return "[" + ", ".join(_text(v) for v in items) + "]"
    return str(value)


def check_docs(catalog: m.Catalog, docs_dir: Path) -> DocsReport:
    """Compare every spec with every page it cites under `docs_dir`."""
    report = DocsReport()
    _check_common(catalog.common, docs_dir, report)
    for spec in catalog.operators:
        for page in spec.doc_pages:
            report.pages.append((spec.name, page.id, page.path))
            path = docs_dir / page.path
            try:
                parsed = parse_page(path)
                raw_text = read_text(path)
            except (OSError, DocPageError, UnsafePath) as error:
                report.compare(spec.name, page.id, "page readable", "readable", f"{error}")
                continue
            _OperatorPageCheck(spec, page, parsed, english_text(raw_text), report).run()
    return report


class _OperatorPageCheck:
    def __init__(
        self,
        spec: m.OperatorSpec,
        page: m.DocPage,
        parsed: DocPage,
        english: str,
        report: DocsReport,
    ) -> None:
        self.spec = spec
        self.page = page
        self.parsed = parsed
        self.english = plain(english)
        self.report = report
        self.has_english = page.translation != "machine"

    def compare(self, what: str, expected: object, actual: object) -> None:
        self.report.compare(self.spec.name, self.page.id, what, expected, actual)

    def run(self) -> None:
        self.struct()
        self.support_tables()
        self.examples()
        self.sizes_examples()
        if self.has_english:
            self.tensor_constraints()
            self.quoted_sentences()

    def struct(self) -> None:
        structs = {self.spec.struct, *(a.struct for a in self.spec.aliases)}
        if self.parsed.struct_name is not None:
            name = self.parsed.struct_name
            self.compare("struct name", name, name if name in structs else sorted(structs))
        names = [f.name for f in self.spec.fields]
        if self.parsed.struct_fields:
            self.compare("struct fields", [n for _, n in self.parsed.struct_fields], names)
            self.compare(
                "struct field types",
                [
                    " ".join(t.replace("*", " *").split()).replace(" *", "*")
                    for t, _ in self.parsed.struct_fields
                ],
                [f.c_type for f in self.spec.fields],
            )
        if self.parsed.member_names:
            self.compare("documented members", list(self.parsed.member_names), names)
        if self.parsed.introduced is not None:
            self.compare("introduced", self.parsed.introduced, self.spec.introduced)

    def support_tables(self) -> None:
        rows = {row.feature_level: row for row in self.spec.support}
        seen: set[str] = set()
        for table in self.parsed.support_tables:
            level = table.feature_level or self.spec.introduced
            label = f"support {level}" + ("" if table.feature_level else " (unheaded table)")
            row = rows.get(level)
            self.compare(
                f"{label}: spec row citing this page", "present", _row_cites(row, self.page.id)
            )
            if row is None:
                continue
            seen.add(level)
            self.compare(
                f"{label}: tensors",
                [r.tensor for r in table.rows],
                [t.tensor for t in row.tensors],
            )
            for page_row in table.rows:
                try:
                    cell = row.tensor(page_row.tensor)
                    kind = self.spec.field(page_row.tensor).kind
                except KeyError:
                    continue
                self.compare(
                    f"{label} {page_row.tensor} kind",
                    _TENSOR_KINDS.get(page_row.kind, page_row.kind),
                    kind,
                )
                self.compare(
                    f"{label} {page_row.tensor} dimension counts",
                    sorted(page_row.dimension_counts),
                    sorted(cell.dimension_counts),
                )
                self.compare(
                    f"{label} {page_row.tensor} data types",
                    list(page_row.data_types),
                    list(cell.data_types),
                )
        for row in self.spec.support:
            if self.page.id in row.sources and row.feature_level not in seen:
                self.compare(f"support {row.feature_level}: table on the page", "absent", "cited")

    def page_examples(self) -> list[m.Example]:
        return [
            e
            for e in self.spec.examples
            if self.page.id in e.sources
            and any(
                isinstance(v, m.ExampleTensor) and v.values is not None for _, v in e.as_written
            )
        ]

    def examples(self) -> None:
        expected = self.page_examples()
        self.compare("number of examples", len(self.parsed.examples), len(expected))
        for block, example in zip(self.parsed.examples, expected, strict=False):
            what = f"example {example.id}"
            if self.has_english and block.title is not None:
                self.compare(f"{what} title", block.title, example.title)
            parsed = parse_example_code(block.code)
            written = example.as_written.as_dict()
            listed = [t.name for t in parsed.tensors] + [name for name, _ in parsed.scalars]
            self.compare(f"{what} fields", sorted(listed), sorted(written))
            for tensor in parsed.tensors:
                spec_tensor = written.get(tensor.name)
                if not isinstance(spec_tensor, m.ExampleTensor):
                    continue
                self.compare(
                    f"{what} {tensor.name} Sizes", list(tensor.sizes), list(spec_tensor.sizes)
                )
                self.compare(
                    f"{what} {tensor.name} DataType", tensor.data_type, spec_tensor.data_type
                )
                self.compare(
                    f"{what} {tensor.name} Values",
                    _nested(tensor.values),
                    _nested(spec_tensor.values),
                )
            for name, raw in parsed.scalars:
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
        for bullet in self.parsed.tensor_constraints:
            text = plain(bullet)
            self.compare(
                f"tensor constraint '{text}'",
                "encoded",
                "encoded" if any(text in q for q in quoted) else "not encoded by any constraint",
            )

    def quoted_sentences(self) -> None:
        for constraint in self.spec.constraints:
            if constraint.sources and self.page.id not in constraint.sources:
                continue
            for sentence in constraint.doc:
                text = plain(sentence)
                self.compare(
                    f"{constraint.id} quotes '{text[:60]}...'",
                    "on the page",
                    "on the page" if text in self.english else "not on the page",
                )


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
