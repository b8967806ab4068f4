"""The doc-page parser, checked against facts read by eye from the pages themselves.

Pages live in the shared/ folder beside the repository; tests that need them skip without it.
Synthetic pages and example blocks cover the error messages and the corner cases.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dmlspec.pages.example_code import parse_example_code
from dmlspec.pages.read import (
    DocPage,
    DocPageError,
    english_text,
    parse_page,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
REFERENCE = SHARED / "reference" / "directml-docs"
SEEDS = SHARED / "seeds"

ALL_TYPES = [
    "FLOAT64",
    "FLOAT32",
    "FLOAT16",
    "INT64",
    "INT32",
    "INT16",
    "INT8",
    "UINT64",
    "UINT32",
    "UINT16",
    "UINT8",
]
COMMON_TYPES = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
INDEX_TYPES = ["INT64", "INT32", "UINT64", "UINT32"]
ONE_TO_EIGHT = (1, 2, 3, 4, 5, 6, 7, 8)
SCATTER_ND_MEMBERS = (
    "InputTensor",
    "IndicesTensor",
    "UpdatesTensor",
    "OutputTensor",
    "InputDimensionCount",
    "IndicesDimensionCount",
)
GATHER_ND_MEMBERS = (
    "InputTensor",
    "IndicesTensor",
    "OutputTensor",
    "InputDimensionCount",
    "IndicesDimensionCount",
)
SCATTER_MEMBERS = ("InputTensor", "IndicesTensor", "UpdatesTensor", "OutputTensor", "Axis")
FILL_MEMBERS = ("OutputTensor", "ValueDataType", "ValueStart", "ValueDelta")


def _page(path: Path) -> DocPage:
    if not path.is_file():
        pytest.skip(f"DirectML docs not found at {SHARED} (the shared/ folder beside the repo)")
    return parse_page(path)


def reference(name: str) -> DocPage:
    return _page(REFERENCE / f"ns-directml-dml_{name}_operator_desc.md")


def seed(number: str) -> DocPage:
    matches = sorted(SEEDS.glob(f"{number}_*.txt"))
    return _page(matches[0] if matches else SEEDS / f"{number}_missing.txt")


def rows(page: DocPage, level: str | None) -> list[tuple[str, str, tuple[int, ...], list[str]]]:
    (table,) = [t for t in page.support_tables if t.feature_level == level]
    return [(r.tensor, r.kind, r.dimension_counts, list(r.data_types)) for r in table.rows]


# -- English sdk-api pages --------------------------------------------------------------------


def test_scatter_nd_english_page() -> None:
    page = reference("scatter_nd")
    assert page.struct_name == "DML_SCATTER_ND_OPERATOR_DESC"
    assert page.struct_fields == ()  # sdk-api pages have no struct block
    assert page.member_names == SCATTER_ND_MEMBERS
    assert page.introduced == "2_1"
    assert page.language == "en-US"
    assert page.tensor_constraints == (
        "*IndicesTensor*, *InputTensor*, *OutputTensor*, and *UpdatesTensor* must have the same "
        "*DimensionCount*.",
        "*InputTensor*, *OutputTensor*, and *UpdatesTensor* must have the same *DataType*.",
    )
    assert [(t.feature_level, t.line) for t in page.support_tables] == [
        ("4_1", 147),
        ("3_0", 155),
        ("2_1", 163),
    ]
    assert rows(page, "4_1")[0] == ("InputTensor", "Input", ONE_TO_EIGHT, ALL_TYPES)
    indices_2_1 = page.support_tables[2].rows[1]
    assert indices_2_1.tensor == "IndicesTensor"
    assert indices_2_1.dimension_counts == (4,)
    assert indices_2_1.data_types == ("UINT32",)
    assert indices_2_1.line == 166


def test_scatter_nd_member_text_keeps_markup_and_its_code_blocks_are_not_examples() -> None:
    page = reference("scatter_nd")
    text = dict(page.member_text)
    assert text["OutputTensor"] == (
        "Type: **const [DML_TENSOR_DESC](/windows/win32/api/directml/ns-directml-dml_tensor_desc)"
        "\\***\n\nThe tensor to write the results to. The *Sizes* and *DataType* of this tensor "
        "must match *InputTensor.Sizes*."
    )
    assert "UpdatesTensor.Sizes = [1, 1,2,6,7]" in text["UpdatesTensor"]
    (example,) = page.examples
    assert (example.title, example.anchor, example.line) == (None, None, 122)
    assert example.code.splitlines()[0] == "InputTensor: (Sizes:{8}, DataType:FLOAT32)"
    assert example.code.splitlines()[-1] == "    [1, 11, 3, 10, 9, 6, 7, 12]"


def test_gather_nd_english_page() -> None:
    page = reference("gather_nd")
    assert page.member_names == GATHER_ND_MEMBERS
    assert [t.feature_level for t in page.support_tables] == ["4_1", "3_0", "2_1"]
    assert rows(page, "2_1") == [
        ("InputTensor", "Input", (4,), COMMON_TYPES),
        ("IndicesTensor", "Input", (4,), ["UINT32"]),
        ("OutputTensor", "Output", (4,), COMMON_TYPES),
    ]
    assert [(e.title, e.anchor, e.line) for e in page.examples] == [
        ("Example 1. 1D remapping", None, 116),
        ("Example 2. 2D remapping", None, 133),
    ]


def test_scatter_english_page() -> None:
    page = reference("scatter")
    assert page.struct_name == "DML_SCATTER_OPERATOR_DESC"
    assert page.member_names == SCATTER_MEMBERS
    assert page.introduced == "1_0"
    assert [t.feature_level for t in page.support_tables] == ["4_1", "3_0", "2_1", "1_0"]
    assert rows(page, "1_0")[0] == ("InputTensor", "Input", (4,), ["FLOAT32", "FLOAT16"])
    assert [e.title for e in page.examples] == ["Example 1. 1D scatter", "Example 2. 2D scatter"]


def test_fill_value_sequence_english_page() -> None:
    page = reference("fill_value_sequence")
    assert page.member_names == FILL_MEMBERS
    assert page.introduced == "2_1"
    assert page.tensor_constraints == ()  # the page has no constraints section
    assert [t.feature_level for t in page.support_tables] == ["5_0", "4_0", "2_1"]
    assert rows(page, "5_0") == [
        ("OutputTensor", "Output", ONE_TO_EIGHT, [t for t in ALL_TYPES if t != "FLOAT64"])
    ]
    assert [e.title for e in page.examples] == [
        "Example 1. 1D ascending step",
        "Example 2. 2D ascending step",
    ]


# -- Seeds ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("number", "language"), [("000", "it-IT"), ("001", "zh-TW")])
def test_translated_scatter_nd_seeds_read_as_english(number: str, language: str) -> None:
    page = seed(number)
    assert page.language == language
    assert page.struct_name == "DML_SCATTER_ND_OPERATOR_DESC"
    assert page.struct_fields == (
        ("const DML_TENSOR_DESC*", "InputTensor"),
        ("const DML_TENSOR_DESC*", "IndicesTensor"),
        ("const DML_TENSOR_DESC*", "UpdatesTensor"),
        ("const DML_TENSOR_DESC*", "OutputTensor"),
        ("UINT", "InputDimensionCount"),
        ("UINT", "IndicesDimensionCount"),
    )
    assert page.member_names == SCATTER_ND_MEMBERS
    assert page.introduced == "2_1"
    assert [(t.feature_level, t.line) for t in page.support_tables] == [("3_0", 173), ("2_1", 181)]
    assert rows(page, "3_0") == [
        ("InputTensor", "Input", ONE_TO_EIGHT, COMMON_TYPES),
        ("IndicesTensor", "Input", ONE_TO_EIGHT, INDEX_TYPES),
        ("UpdatesTensor", "Input", ONE_TO_EIGHT, COMMON_TYPES),
        ("OutputTensor", "Output", ONE_TO_EIGHT, COMMON_TYPES),
    ]
    assert rows(page, "2_1")[1] == ("IndicesTensor", "Input", (4,), ["UINT32"])
    assert page.support_tables[1].rows[1].line == 184
    assert page.tensor_constraints[1] == (
        "*InputTensor*, *OutputTensor*, and `UpdatesTensor` must have the same *DataType*."
    )
    assert dict(page.member_text)["InputTensor"].endswith("\n\nThe tensor to read from.")
    (example,) = page.examples
    assert (example.title, example.anchor, example.line) == (None, None, 149)


def test_italian_gather_nd_seed_titles_come_from_the_english_spans() -> None:
    page = seed("002")
    assert page.language == "it-IT"
    assert page.member_names == GATHER_ND_MEMBERS
    assert [name for _, name in page.struct_fields] == list(GATHER_ND_MEMBERS)
    assert [t.feature_level for t in page.support_tables] == ["3_0", "2_1"]
    assert [(e.title, e.anchor, e.line) for e in page.examples] == [
        ("Example 1. 1D remapping", "example-1-1d-remapping", 146),
        ("Example 2. 2D remapping", "example-2-2d-remapping", 163),
    ]


def test_english_scatter_seed_records_the_example_as_written() -> None:
    page = seed("003")
    assert page.language == "en-US"
    assert page.struct_name == "DML_SCATTER_OPERATOR_DESC"
    assert page.member_names == SCATTER_MEMBERS
    assert [t.feature_level for t in page.support_tables] == ["4_1", "3_0", "2_1", "1_0"]
    example = parse_example_code(page.examples[1].code)
    input_tensor = example.tensors[0]
    assert input_tensor.name == "InputTensor"
    assert input_tensor.sizes == (2, 3)  # the page declares {2,3} but writes three rows
    assert input_tensor.values == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert example.scalars == (("Axis", "0"),)


def test_italian_fill_value_sequence_seed_without_english_spans() -> None:
    page = seed("004")
    assert page.language == "it-IT"
    assert page.struct_fields == (
        ("const DML_TENSOR_DESC*", "OutputTensor"),
        ("DML_TENSOR_DATA_TYPE", "ValueDataType"),
        ("DML_SCALAR_UNION", "ValueStart"),
        ("DML_SCALAR_UNION", "ValueDelta"),
    )
    assert page.member_names == FILL_MEMBERS
    assert page.introduced == "2_1"
    (table,) = page.support_tables
    assert (table.feature_level, table.line) == (None, 138)
    assert rows(page, None) == [("OutputTensor", "Output", (4,), COMMON_TYPES)]
    assert table.rows[0].line == 140
    assert [(e.title, e.anchor) for e in page.examples] == [
        ("Esempio 1. Passaggio 1D crescente", "example-1-1d-ascending-step"),
        ("Esempio 2. Passaggio 2D crescente", "example-2-2d-ascending-step"),
    ]
    assert dict(page.member_text)["ValueDelta"].endswith("come interpretare il campo.")


# -- Example code -----------------------------------------------------------------------------


def test_gather_nd_example_2_values() -> None:
    example = parse_example_code(reference("gather_nd").examples[1].code)
    assert example.scalars == (("InputDimensionCount", "3"), ("IndicesDimensionCount", "2"))
    input_tensor, indices, output = example.tensors
    assert (input_tensor.name, input_tensor.sizes, input_tensor.data_type) == (
        "InputTensor",
        (1, 2, 2, 2),
        "FLOAT32",
    )
    assert input_tensor.values == ((((0, 1), (2, 3)), ((4, 5), (6, 7))),)
    assert (indices.sizes, indices.data_type, indices.values) == (
        (1, 1, 2, 2),
        "UINT32",
        ((((0, 1), (1, 0)),),),
    )
    assert output.values == ((((2, 3), (4, 5)),),)
    assert [t.line_offset for t in example.tensors] == [3, 6, 10]


def test_fill_value_sequence_example_2_scalars_and_multiline_values() -> None:
    example = parse_example_code(reference("fill_value_sequence").examples[1].code)
    assert example.scalars == (
        ("ValueStart", "10"),
        ("ValueDelta", "-2"),
        ("ValueDataType", "DML_TENSOR_DATA_TYPE_UINT8"),
    )
    (output,) = example.tensors
    assert (output.sizes, output.data_type, output.values) == (
        (1, 1, 2, 2),
        "UINT8",
        ((((10, 8), (6, 4)),),),
    )


def test_example_code_corner_cases() -> None:
    code = "\n".join(
        [
            "// a comment line",
            "Count = 3 // trailing comment",
            "Scales: {1, 2}",
            "A: (Sizes:{2,2} DataType:FLOAT32)",
            "[",
            "    [1.5, 0.],   // decimals keep their kind",
            "    [13.0f, -2],",
            "]",
            "B: (Sizes:{}, DataType:UINT32) [7]",
            "Empty[0]: (Sizes:{3}, DataType:INT8)",
            "Output[0,0] = {0,0} + {1,1} = 4",
        ]
    )
    example = parse_example_code(code)
    assert example.scalars == (("Count", "3"), ("Scales", "{1, 2}"))
    a, b, empty = example.tensors
    assert (a.sizes, a.values, a.line_offset) == ((2, 2), ((1.5, 0.0), (13.0, -2)), 3)
    assert isinstance(a.values[1][1], int)  # type: ignore[index]
    assert (b.sizes, b.values) == ((), (7,))
    assert (empty.name, empty.values) == ("Empty[0]", None)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "X: (Sizes:{2}, DataType:FLOAT32)\n    [1, 2",
            "page.md:11: expected ']' to close these values, found the end of the example",
        ),
        (
            "X: (Sizes:{2}, DataType:FLOAT32)\n    [1, two]",
            "page.md:11: expected a number in the values, found 'two'",
        ),
        (
            "X: (Sizes:{2}, DataType:FLOAT32)\n    [1, 2] 3",
            "page.md:11: expected the end of the line after the values, found '3'",
        ),
        (
            "X: (Sizes:{a}, DataType:FLOAT32)",
            "page.md:10: expected Sizes like {1, 2, 3}, found {a}",
        ),
        (
            "X: (Sizes:{2})",
            "page.md:10: expected 'Name: (Sizes:{...}, DataType:TYPE)', found 'X: (Sizes:{2})'",
        ),
        ("\n[1, 2]", "page.md:11: expected a tensor declaration before '[1, 2]'"),
    ],
)
def test_example_code_errors(code: str, message: str) -> None:
    with pytest.raises(DocPageError) as caught:
        parse_example_code(code, where="page.md", first_line=10)
    assert str(caught.value) == message


# -- english_text and errors on synthetic pages -----------------------------------------------


def test_english_text_replaces_only_translated_pairs() -> None:
    raw = (
        '# <a name="x"></a><span data-ttu-id="a1-1">Sintassi</span>'
        '<span class="sxs-lookup"><span data-stu-id="a1-1">Syntax</span></span> and '
        '<span data-ttu-id="a1-2">*Tensore*</span><span class="sxs-lookup">'
        '<span data-stu-id="a1-2">*Tensor*</span></span>, <b>kept</b>'
    )
    assert english_text(raw) == '# <a name="x"></a>Syntax and *Tensor*, <b>kept</b>'
    assert english_text("plain text") == "plain text"


PAGE_HEAD = "---\nUID: NS:directml.DML_X_OPERATOR_DESC\n---\n## Tensor support\n"
HEADER = (
    "| Tensor | Kind | Supported dimension counts | Supported data types |\n| - | - | - | - |\n"
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_synthetic_page_without_sections(tmp_path: Path) -> None:
    page = parse_page(write(tmp_path, "---\nUID: NS:directml.DML_X_OPERATOR_DESC\n---\nText.\n"))
    assert page.struct_name == "DML_X_OPERATOR_DESC"
    assert (page.member_names, page.support_tables, page.examples) == ((), (), ())
    assert (page.introduced, page.language) == (None, "en-US")


def test_dimension_count_lists(tmp_path: Path) -> None:
    page = parse_page(write(tmp_path, PAGE_HEAD + HEADER + "| A | Input | 1, 4 to 5 | INT8 |\n"))
    assert page.support_tables[0].rows[0].dimension_counts == (1, 4, 5)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            HEADER + "| A | Input | 4 |\n",
            "7: expected a row of 4 cells starting with a tensor name and its kind, "
            "found 3 cells in '| A | Input | 4 |'",
        ),
        (
            HEADER + "| A | Input | da 1 a 8 | INT8 |\n",
            "7: expected dimension counts like '4', '1 to 8' or '1, 4', "
            "found 'da 1 a 8' in the dimension-count column",
        ),
        (
            HEADER + "| A | Input | 4 | FLOAT32、FLOAT16 |\n",
            "7: expected data types like 'FLOAT32, UINT8', "
            "found 'FLOAT32、FLOAT16' in the data-type column 'FLOAT32、FLOAT16'",
        ),
        (
            "| Tensor | Kind |\n| - | - |\n",
            "5: expected a tensor-support table header with at least 4 columns "
            "(Tensor | Kind | ... | dimension counts | data types), found 2",
        ),
        (
            HEADER.splitlines()[0] + "\n| A | Input | 4 | INT8 |\n",
            "6: expected a separator row like '| --- | --- |', found '| A | Input | 4 | INT8 |'",
        ),
    ],
)
def test_malformed_table_rows(tmp_path: Path, table: str, message: str) -> None:
    path = write(tmp_path, PAGE_HEAD + table)
    with pytest.raises(DocPageError) as caught:
        parse_page(path)
    assert str(caught.value) == f"{path}:{message}"


def test_unreadable_pages(tmp_path: Path) -> None:
    missing = tmp_path / "missing.md"
    with pytest.raises(DocPageError, match=rf"^{re.escape(str(missing))}:1: expected a readable"):
        parse_page(missing)
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"line one\nline \xff two\n")
    with pytest.raises(DocPageError, match=rf"^{re.escape(str(bad))}:2: expected UTF-8 text"):
        parse_page(bad)
    unclosed = write(tmp_path, "## Examples\n\n```\nX: 1\n")
    with pytest.raises(DocPageError, match=r":3: expected a closing ``` for this code block"):
        parse_page(unclosed)


# -- Every operator page ----------------------------------------------------------------------


def _operator_pages() -> list[object]:
    pages = sorted(REFERENCE.glob("ns-directml-dml_*operator_desc.md"))
    pages += sorted(REFERENCE.glob("ns-directml-dml_reverse_subsequences_desc.md"))
    if not pages:
        reason = f"DirectML docs not found at {SHARED} (the shared/ folder beside the repo)"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-docs")]
    return [pytest.param(path, id=path.name) for path in pages]


@pytest.mark.parametrize("path", _operator_pages())
def test_every_operator_page_and_its_examples_parse(path: Path) -> None:
    page = parse_page(path)
    for example in page.examples:
        parse_example_code(example.code, where=str(path), first_line=example.line)
    if path.name != "ns-directml-dml_operator_desc.md":  # the generic DML_OPERATOR_DESC
        assert page.struct_name and page.member_names and page.introduced and page.support_tables
