"""Read DirectML operator reference pages into frozen dataclasses.

Two page formats are understood; both are markdown with YAML front matter.

* sdk-api pages (MicrosoftDocs/sdk-api, ``ns-directml-dml_*_operator_desc.md``): sections are
  ``## -description``, ``## -struct-fields`` (one ``### -field Name`` per member),
  ``## Examples`` (optional ``### Example N. Title`` sub-headings, each with a code block),
  ``## -remarks``, ``## Availability``, ``## Tensor constraints`` and ``## Tensor support``
  (``### DML_FEATURE_LEVEL_X_Y and above`` headings, each followed by a table). These pages
  have no C struct block.
* learn.microsoft.com pages (the "seeds"), possibly machine-translated: every heading carries a
  language-independent anchor (``## <a name="tensor-support"></a>...``), the struct is given in
  a ```` ```cpp ```` block under ``syntax``, and each member under ``members`` is introduced by a
  line holding just ```` `Name` ````. Translated sentences come in pairs,
  ``<span data-ttu-id="x">FOREIGN</span><span class="sxs-lookup"><span data-stu-id="x">ENGLISH
  </span></span>``; every line is read through `english_text`, so the parser only ever sees the
  English. Pages translated without the English spans keep their foreign prose, headings and
  titles, which is why sections are recognised by anchor (or, without one, by the slug of the
  heading text, which is what the anchor is) and tables by position, never by translated words.
  The windows-ai-docs operator pages in the reference folder use this format in English.

An example's code block is parsed by example_code.py.

Line numbers are 1-based lines of the file. Problems that make a page unusable (unreadable
file, unclosed front matter or code block, malformed tensor-support table row) raise
`DocPageError`; a page that simply lacks a section gives empty or None fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..safeio import UnsafePath, read_bytes

__all__ = [
    "DocPage",
    "DocPageError",
    "ExampleBlock",
    "SupportTable",
    "SupportTableRow",
    "english_text",
    "function_groups",
    "parse_page",
]


class DocPageError(ValueError):
    """A page (or example block) that cannot be read; the message starts with "path:line: "."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {message}")


@dataclass(frozen=True)
class SupportTableRow:
    """One row of a tensor-support table."""

    tensor: str
    kind: str  # exactly as in the cell: "Input", "Optional input", "Output", ...
    dimension_counts: tuple[int, ...]
    data_types: tuple[str, ...]  # in page order
    line: int


@dataclass(frozen=True)
class SupportTable:
    """A tensor-support table and the feature level of the heading right above it."""

    feature_level: str | None  # "3_0"; None when the table has no feature-level heading
    rows: tuple[SupportTableRow, ...]
    line: int  # the header row


@dataclass(frozen=True)
class ExampleBlock:
    """A code block in the Examples section, with the sub-heading it sits under."""

    title: str | None  # "Example 1. 1D remapping"; None when there is no sub-heading
    anchor: str | None  # "example-1-1d-remapping" on learn.microsoft.com pages
    code: str  # the block's content without the fences
    line: int  # the first line of `code`; line_offset n of parse_example_code is line + n


@dataclass(frozen=True)
class DocPage:
    """What one operator page says, in English where the page gives English."""

    path: str
    struct_name: str | None
    struct_fields: tuple[tuple[str, str], ...]  # (c_type, name) from the cpp struct block
    member_names: tuple[str, ...]
    member_text: tuple[tuple[str, str], ...]  # (name, the member's text, markup kept)
    introduced: str | None  # "2_1"
    tensor_constraints: tuple[str, ...]  # bullets, or paragraphs where a page has no bullets
    support_tables: tuple[SupportTable, ...]
    examples: tuple[ExampleBlock, ...]
    language: str  # "en-US", or the front matter's ms.contentlocale


# -- English text -----------------------------------------------------------------------------

_TRANSLATED_OPENER = re.compile(r'<span data-ttu-id="(?P<id>[^"]*)">')
_CLOSE, _CLOSE_LOOKUP = "</span>", "</span></span>"


def english_text(raw: str) -> str:
    """`raw` with each translated span pair replaced by the English it carries:
    `<span data-ttu-id="ID">FOREIGN</span><span class="sxs-lookup"><span data-stu-id="ID">`
    `ENGLISH</span></span>`, on one line, FOREIGN holding no `</span>`.

    One pass, linear in the text: a line of unmatched spans must not make each opener search
    the rest of the line again (a regex with `.*?` does, quadratically)."""
    if "sxs-lookup" not in raw:
        return raw
    pieces: list[str] = []
    copied = 0  # raw[:copied] is in pieces
    # The first close / newline / lookup close at or after some position, found once and
    # reused while the position has not passed it: every search moves forward only.
    found = {_CLOSE: -1, "\n": -1, _CLOSE_LOOKUP: -1}

    def next_at(token: str, position: int) -> int:
        if found[token] < position:
            index = raw.find(token, position)
            found[token] = len(raw) + 1 if index < 0 else index
        return found[token]

    for opener in _TRANSLATED_OPENER.finditer(raw):
        if opener.start() < copied:
            continue
        line_end = next_at("\n", opener.end())
        close = next_at(_CLOSE, opener.end())
        if close > line_end:
            continue
        lookup = f'<span class="sxs-lookup"><span data-stu-id="{opener["id"]}">'
        english = close + len(_CLOSE) + len(lookup)
        if not raw.startswith(lookup, close + len(_CLOSE)):
            continue
        end = next_at(_CLOSE_LOOKUP, english)
        if end > line_end:
            continue
        pieces += [raw[copied : opener.start()], raw[english:end]]
        copied = end + len(_CLOSE_LOOKUP)
    pieces.append(raw[copied:])
    return "".join(pieces)


# -- Blocks and sections ----------------------------------------------------------------------

_HEADING = re.compile(r"^(?P<marks>#{1,6})\s+(?:<a name=\"(?P<anchor>[^\"]*)\"></a>)?(?P<text>.*)$")
_FEATURE_LEVEL = re.compile(r"DML_FEATURE_LEVEL_(\d+_\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class _Heading:
    level: int
    anchor: str | None
    text: str
    line: int

    @property
    def key(self) -> str:
        """The anchor, or the slug of the text an anchor would be made from."""
        return self.anchor or re.sub(r"[^a-z0-9]+", "-", self.text.lower()).strip("-")


@dataclass(frozen=True)
class _Text:
    text: str
    line: int


@dataclass(frozen=True)
class _Code:
    code: str
    line: int  # first line of the content


_Block = _Heading | _Text | _Code


@dataclass(frozen=True)
class _Section:
    """A level-1 or level-2 heading and the blocks up to the next one."""

    heading: _Heading | None
    blocks: tuple[_Block, ...]
    end: int  # last line

    def named(self, *keys: str) -> bool:
        key = self.heading.key if self.heading else ""
        return any(key == k or key.startswith(k + "-") for k in keys)


def _blocks(lines: list[str], start: int, where: str) -> Iterator[_Block]:
    index = start
    while index < len(lines):
        line, number = lines[index], index + 1
        if line.startswith("```"):
            end = _closing_fence(lines, index, where)
            yield _Code("\n".join(lines[index + 1 : end]), number + 1)
            index = end + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading["marks"])
            yield _Heading(level, heading["anchor"], heading["text"].strip(), number)
        else:
            yield _Text(line, number)
        index += 1


def _closing_fence(lines: list[str], opening: int, where: str) -> int:
    for index in range(opening + 1, len(lines)):
        if lines[index].startswith("```"):
            return index
    raise DocPageError(
        where, opening + 1, "expected a closing ``` for this code block, found the end of the file"
    )


def _sections(blocks: Iterable[_Block], last_line: int) -> list[_Section]:
    sections: list[_Section] = []
    heading: _Heading | None = None
    body: list[_Block] = []
    for block in blocks:
        if isinstance(block, _Heading) and block.level <= 2:
            sections.append(_Section(heading, tuple(body), block.line - 1))
            heading, body = block, []
        else:
            body.append(block)
    sections.append(_Section(heading, tuple(body), last_line))
    return sections


def _named(sections: list[_Section], *keys: str) -> Iterator[_Section]:
    return (section for section in sections if section.named(*keys))


def _blocks_in(sections: list[_Section], *keys: str) -> Iterator[_Block]:
    for section in _named(sections, *keys):
        yield from section.blocks


# -- Reading the file -------------------------------------------------------------------------


def _read_lines(path: str | os.PathLike[str], where: str) -> list[str]:
    try:
        data = read_bytes(Path(path))
    except UnsafePath as error:  # "PATH is a FIFO; ...": the path leads the message already
        raise DocPageError(where, 1, str(error).removeprefix(f"{path} ")) from None
    except OSError as error:
        raise DocPageError(where, 1, f"expected a readable file, found {error}") from error
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        found = data[error.start : error.end]
        raise DocPageError(
            where, line, f"expected UTF-8 text, found the bytes {found!r}"
        ) from error


def _front_matter(lines: list[str], where: str) -> tuple[dict[str, list[str]], int]:
    """The front matter's fields (each a list of values) and the index of the first body line."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return _front_matter_fields(lines[1:index]), index + 1
    raise DocPageError(
        where, 1, "expected a closing '---' for the front matter, found the end of the file"
    )


def _front_matter_fields(lines: list[str]) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    values: list[str] = []
    for line in lines:
        item = re.match(r"^\s*-\s+(.*)$", line)
        entry = re.match(r"^([\w.-]+):\s*(.*)$", line)
        if item:
            values.append(item[1].strip().strip("'\""))
        elif entry:
            values = fields.setdefault(entry[1], [])
            if entry[2].strip():
                values.append(entry[2].strip().strip("'\""))
    return fields


def _api_name(front: dict[str, list[str]]) -> str | None:
    if front.get("api_name"):
        return front["api_name"][0]
    uid = front.get("UID", [""])[0]
    return uid.removeprefix("NS:directml.") if uid.startswith("NS:directml.") else None


# -- Struct and members -----------------------------------------------------------------------

_STRUCT = re.compile(r"^\s*struct\s+(\w+)")
_DECLARATION_IN_STRUCT = re.compile(r"^(?P<type>.*?\S)\s*\b(?P<name>\w+)$")
_FIELD_HEADING = re.compile(r"^-field\s+(\w+)")
_MEMBER_LINE = re.compile(r"^`(\w+)`$")


def _struct(sections: list[_Section], where: str) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The name and (c_type, name) fields of the first struct block under Syntax."""
    for block in _blocks_in(sections, "syntax"):
        if isinstance(block, _Code) and (struct := _STRUCT.match(block.code)):
            return struct[1], _struct_fields(block, where)
    return None, ()


def _struct_fields(block: _Code, where: str) -> tuple[tuple[str, str], ...]:
    """("const DML_TENSOR_DESC*", "InputTensor") from "const DML_TENSOR_DESC *InputTensor;"."""
    fields: list[tuple[str, str]] = []
    for offset, line in enumerate(block.code.split("\n")):
        for declaration in line.split("//")[0].split(";")[:-1]:
            text = declaration.strip(" \t{}")
            match = _DECLARATION_IN_STRUCT.match(text)
            if text and not match:
                raise DocPageError(
                    where,
                    block.line + offset,
                    f"expected a field like 'UINT Name;', found {line!r}",
                )
            if match:
                c_type = " ".join(match["type"].replace("*", " *").split()).replace(" *", "*")
                fields.append((c_type, match["name"]))
    return tuple(fields)


def _members(sections: list[_Section], lines: list[str]) -> tuple[tuple[str, str], ...]:
    members: list[tuple[str, str]] = []
    for section in _named(sections, "struct-fields", "members"):
        members.extend(_members_in(section, lines))
    return tuple(members)


def _members_in(section: _Section, lines: list[str]) -> Iterator[tuple[str, str]]:
    """(name, text) for each member, the text running to the next member or heading."""
    blocks = section.blocks
    for index, intro in enumerate(blocks):
        name = _member_name(intro)
        if name is None:
            continue
        ends = (
            block.line - 1
            for block in blocks[index + 1 :]
            if isinstance(block, _Heading) or _member_name(block)
        )
        yield name, "\n".join(lines[intro.line : next(ends, section.end)]).strip()


def _member_name(block: _Block) -> str | None:
    if isinstance(block, _Heading):
        match = _FIELD_HEADING.match(block.text)
    elif isinstance(block, _Text):
        match = _MEMBER_LINE.match(block.text.strip())
    else:
        return None
    return match[1] if match else None


# -- Availability and constraints -------------------------------------------------------------


def _introduced(sections: list[_Section]) -> str | None:
    for block in _blocks_in(sections, "availability"):
        level = _FEATURE_LEVEL.search(block.text) if isinstance(block, _Text) else None
        if level:
            return level[1]
    return None


def _tensor_constraints(sections: list[_Section]) -> tuple[str, ...]:
    """Each bullet, or each paragraph where a constraint is written without a bullet."""
    items: list[str] = []
    open_item = False
    for block in _blocks_in(sections, "tensor-constraints"):
        text = block.text.strip() if isinstance(block, _Text) else ""
        bullet = re.match(r"^[*-]\s+(.*)$", text)
        if bullet or (text and not open_item):
            items.append(bullet[1] if bullet else text)
        elif text:
            items[-1] += "\n" + text
        open_item = bool(text)
    return tuple(items)


# -- Tensor-support tables --------------------------------------------------------------------

_SEPARATOR_CELL = re.compile(r"^:?-+:?$")
_DATA_TYPE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_COUNT_PART = re.compile(r"^(\d+)(?:\s+to\s+(\d+))?$")


def _support_tables(sections: list[_Section], where: str) -> tuple[SupportTable, ...]:
    tables: list[SupportTable] = []
    for section in _named(sections, "tensor-support"):
        tables.extend(_tables_in(section, where))
    return tuple(tables)


def _tables_in(section: _Section, where: str) -> Iterator[SupportTable]:
    """Each run of table lines, with the feature level of the heading right above it."""
    heading = section.heading
    run: list[_Text] = []
    for block in (*section.blocks, None):
        if isinstance(block, _Text) and block.text.lstrip().startswith("|"):
            run.append(block)
            continue
        if run:
            level = _FEATURE_LEVEL.search(heading.text) if heading else None
            yield _support_table(run, level[1] if level else None, where)
            run = []
        if isinstance(block, _Heading):
            heading = block


def _support_table(run: list[_Text], feature_level: str | None, where: str) -> SupportTable:
    header = _cells(run[0].text)
    if len(header) < 4:
        raise DocPageError(
            where,
            run[0].line,
            "expected a tensor-support table header with at least 4 columns "
            f"(Tensor | Kind | ... | dimension counts | data types), found {len(header)}",
        )
    if len(run) < 2 or not all(_SEPARATOR_CELL.match(c) for c in _cells(run[1].text)):
        found = repr(run[1].text) if len(run) > 1 else "the end of the table"
        raise DocPageError(
            where, run[0].line + 1, f"expected a separator row like '| --- | --- |', found {found}"
        )
    rows = tuple(_support_row(row, len(header), where) for row in run[2:])
    return SupportTable(feature_level, rows, run[0].line)


def _support_row(row: _Text, columns: int, where: str) -> SupportTableRow:
    cells = _cells(row.text)
    if len(cells) != columns or not cells[0] or not cells[1]:
        raise DocPageError(
            where,
            row.line,
            f"expected a row of {columns} cells starting with a tensor name and its kind, "
            f"found {len(cells)} cells in {row.text.strip()!r}",
        )
    return SupportTableRow(
        tensor=cells[0],
        kind=cells[1],
        dimension_counts=_dimension_counts(cells[-2], row.line, where),
        data_types=_data_types(cells[-1], row.line, where),
        line=row.line,
    )


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().removeprefix("|").removesuffix("|").split("|")]


def _dimension_counts(cell: str, line: int, where: str) -> tuple[int, ...]:
    """(1, ..., 8) from "1 to 8"; (4,) from "4"; (1, 4) from "1, 4"."""
    counts: list[int] = []
    for part in cell.split(","):
        match = _COUNT_PART.match(part.strip())
        if not match or int(match[2] or match[1]) < int(match[1]):
            raise DocPageError(
                where,
                line,
                "expected dimension counts like '4', '1 to 8' or '1, 4', "
                f"found {cell!r} in the dimension-count column",
            )
        counts.extend(range(int(match[1]), int(match[2] or match[1]) + 1))
    return tuple(counts)


def _data_types(cell: str, line: int, where: str) -> tuple[str, ...]:
    """The comma-separated type names; an empty cell (as on the FOLD page) gives ()."""
    if not cell:
        return ()
    names = tuple(name.strip() for name in cell.split(","))
    for name in names:
        if not _DATA_TYPE.match(name):
            raise DocPageError(
                where,
                line,
                "expected data types like 'FLOAT32, UINT8', "
                f"found {name!r} in the data-type column {cell!r}",
            )
    return names


_GROUP_HEADING = re.compile(r"^#{2,6}\s+(?P<text>(?!DML_FEATURE_LEVEL)[A-Z][A-Z0-9_, ]*)\s*$")


def function_groups(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line, names) of headings such as "### ARGMIN and ARGMAX" in the support section."""
    groups = []
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## Tensor support")), None)
    if start is None:
        return []
    for index in range(start + 1, len(lines)):
        match = _GROUP_HEADING.match(lines[index].replace(" and ", ", "))
        if match:
            names = tuple(n.strip() for n in match["text"].split(",") if n.strip())
            groups.append((index + 1, names))
    return groups


# -- Examples ---------------------------------------------------------------------------------


def _examples(sections: list[_Section]) -> tuple[ExampleBlock, ...]:
    """Every code block of the Examples section, titled by the sub-heading above it."""
    examples: list[ExampleBlock] = []
    for section in _named(sections, "examples", "example"):
        heading: _Heading | None = None
        for block in section.blocks:
            if isinstance(block, _Heading):
                heading = block
            elif isinstance(block, _Code):
                title, anchor = (heading.text, heading.anchor) if heading else (None, None)
                examples.append(ExampleBlock(title, anchor, block.code, block.line))
    return tuple(examples)


# -- The page ---------------------------------------------------------------------------------


def parse_page(path: str | os.PathLike[str]) -> DocPage:
    """Parse one operator reference page (sdk-api or learn.microsoft.com format)."""
    where = os.fspath(path)
    lines = [english_text(line) for line in _read_lines(path, where)]
    front, body = _front_matter(lines, where)
    sections = _sections(_blocks(lines, body, where), len(lines))
    struct_name, struct_fields = _struct(sections, where)
    members = _members(sections, lines)
    return DocPage(
        path=where,
        struct_name=struct_name or _api_name(front),
        struct_fields=struct_fields,
        member_names=tuple(name for name, _ in members),
        member_text=members,
        introduced=_introduced(sections),
        tensor_constraints=_tensor_constraints(sections),
        support_tables=_support_tables(sections, where),
        examples=_examples(sections),
        language=(front.get("ms.contentlocale") or ["en-US"])[0],
    )
