"""Every kind of malformed spec gives an exact message naming the file and JSON pointer.

Each case copies the real spec/ folder, breaks one thing, and expects exactly these problems.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dmlspec import SpecError, load_catalog

from .conftest import SPEC_DIR

OP = "spec/operators/scatter_nd.json"
LEVELS = "1_0, 2_0, 2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4"
DATA_TYPES = (
    "UNKNOWN, FLOAT32, FLOAT16, UINT32, UINT16, UINT8, INT32, INT16, INT8, FLOAT64, UINT64, "
    "INT64, UINT4, INT4"
)
NAMES = (
    "ExpectedUpdatesSizes, FeatureLevel, IndexBounds, IndexTupleSize, IndicesDimensionCount, "
    "IndicesMeaningfulSizes, IndicesTensor, InputDimensionCount, InputMeaningfulSizes, "
    "InputTensor, OutputTensor, UpdatesTensor"
)
FUNCTIONS = (
    "abs, add_each, all, all_along, all_at_least, all_equal, all_greater, all_less, "
    "all_ones, as_type, at_least, both, broadcastable, buffer_tensor_size, cells_where_not, "
    "column, direction_count, distinct, distinct_offsets, each_at_most, each_divides, each_less, "
    "each_tuple, "
    "effective_rank, either, element_bits, finite, first_present, fits, flat_cells, "
    "gather_cells, has_flag, highest, in_bounds, is_float, is_power_of_two, item_data_type, "
    "item_sizes, item_values, len, "
    "level_at_least, lowest, max, min, mul_each, not_equal, not_greater, not_nan, "
    "packed_strides, pad_left, power_fits, present, prod, reduced_fits, row_cells, "
    "rows_written, same_data_type, same_dimension_count, same_parity, same_sizes_except, "
    "set_items, sizes_along, slice_cells, spans, steps_past, strided_count, sum, sum_along, "
    "target_cells, "
    "transposed_output_sizes, unique_along, unique_targets, unique_values, whole, "
    "window_output_sizes, windows_all, windows_cover, windows_holding_input"
)

Mutation = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class TextEdit:
    """A mutation of the file's text rather than of its parsed JSON."""

    edit: Callable[[str], str]


def constraint(index: int, **changes: Any) -> Mutation:
    return lambda spec: spec["constraints"][index].update(changes)


def comparison(index: int, **changes: Any) -> Mutation:
    return lambda spec: spec["semantics"]["comparison"][index].update(changes)


CASES: list[tuple[str, str, Mutation | TextEdit, list[str]]] = [
    (
        "missing required key",
        "operators/scatter_nd.json",
        lambda spec: spec.pop("introduced"),
        [f"{OP}: 'introduced' is a required property"],
    ),
    (
        "unknown key",
        "operators/scatter_nd.json",
        lambda spec: spec["fields"][0].update(Colour=1),
        [f"{OP} at /fields/0: Additional properties are not allowed ('Colour' was unexpected)"],
    ),
    (
        "duplicate key",
        "operators/scatter_nd.json",
        TextEdit(lambda text: text.replace('"summary":', '"summary": "x",\n  "summary":', 1)),
        [f"{OP} at /summary: duplicate key 'summary'"],
    ),
    (
        "invalid JSON",
        "operators/scatter_nd.json",
        TextEdit(lambda text: '{\n  "name": "SCATTER_ND",\n}\n'),
        [
            f"{OP}: invalid JSON at line 3 column 1: "
            "Expecting property name enclosed in double quotes"
        ],
    ),
    (
        "unknown feature level",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][0].update(feature_level="9_9"),
        [f"{OP} at /support/0/feature_level: unknown feature level '9_9' (known: {LEVELS})"],
    ),
    (
        "unknown feature level in the common spec",
        "common.json",
        lambda common: common["data_types"][1].update(since="0_5"),
        [f"spec/common.json at /data_types/1/since: unknown feature level '0_5' (known: {LEVELS})"],
    ),
    (
        "an operator set's since naming a non-member and an unknown level",
        "common.json",
        lambda common: common["operator_sets"][1].update(
            since={"ELEMENT_WISE_ADD": "6_0", "ELEMENT_WISE_CLIP": "7_0"}
        ),
        [
            "spec/common.json at /operator_sets/1/since/ELEMENT_WISE_ADD: 'ELEMENT_WISE_ADD' is "
            "not a member of FUSED_ACTIVATIONS",
            "spec/common.json at /operator_sets/1/since/ELEMENT_WISE_CLIP: unknown feature level "
            f"'7_0' (known: {LEVELS})",
        ],
    ),
    (
        "unknown data type",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][0]["tensors"][0]["data_types"].__setitem__(0, "FLOAT128"),
        [
            f"{OP} at /support/0/tensors/0/data_types/0: unknown data type 'FLOAT128'; "
            f"known data types: {DATA_TYPES}"
        ],
    ),
    (
        "drawing hint on an output",
        "operators/scatter_nd.json",
        lambda spec: spec["fields"][3].update(drawn_as="moderate"),
        [
            f"{OP} at /fields/3/drawn_as: only input tensors take drawn_as "
            "(OutputTensor is output_tensor)"
        ],
    ),
    (
        "typical values of a tensor",
        "operators/scatter_nd.json",
        lambda spec: spec["fields"][0].update(typical=[1, 2]),
        [
            f"{OP} at /fields/0/typical: only integer fields take typical values "
            "(InputTensor is input_tensor)"
        ],
    ),
    (
        "unknown drawing hint",
        "operators/scatter_nd.json",
        lambda spec: spec["fields"][0].update(drawn_as="gaussian"),
        [
            f"{OP} at /fields/0/drawn_as: 'gaussian' is not one of ['boxes_over_input', "
            "'whole_steps', 'power_of_two_scales', 'moderate']"
        ],
    ),
    (
        "overlapping support rows",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][1].update(feature_level="2_1"),
        [f"{OP} at /support/1/feature_level: support rows overlap: 2_1 already has row 0"],
    ),
    (
        "data type newer than its support row",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][0]["tensors"][0]["data_types"].append("FLOAT64"),
        [
            f"{OP} at /support/0/tensors/0/data_types/8: FLOAT64 exists only from feature level "
            "3_0, but is listed in the 2_1 row",
            f"{OP} at /support/1/tensors: InputTensor in the 3_0 row drops what the 2_1 row "
            "allows (data types ['FLOAT64'], dimension counts []); feature levels are supersets",
        ],
    ),
    (
        "support row naming a missing tensor",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][0]["tensors"][0].update(tensor="FooTensor"),
        [
            f"{OP} at /support/0/tensors/0/tensor: 'FooTensor' is not a tensor field of "
            "SCATTER_ND (tensor fields: InputTensor, IndicesTensor, UpdatesTensor, OutputTensor)",
            f"{OP} at /support/0/tensors: the 2_1 row lists no InputTensor",
        ],
    ),
    (
        "constraint naming a missing field",
        "operators/scatter_nd.json",
        constraint(2, expr="Foo.Sizes == InputTensor.Sizes"),
        [
            f"{OP} at /constraints/2/expr: unknown name 'Foo' (known names: {NAMES}) "
            "(in 'Foo.Sizes == InputTensor.Sizes' at column 1)"
        ],
    ),
    (
        "syntax error in an expression",
        "operators/scatter_nd.json",
        constraint(3, expr="IndexTupleSize <="),
        [
            f"{OP} at /constraints/3/expr: syntax error: invalid syntax "
            "(in 'IndexTupleSize <=' at column 1)"
        ],
    ),
    (
        "expression trying __import__",
        "operators/scatter_nd.json",
        constraint(3, expr='__import__("os").system("true") == 0'),
        [
            f"{OP} at /constraints/3/expr: names starting with '_' are not allowed "
            "(got '__import__') (in '__import__(\"os\").system(\"true\") == 0' at column 1)"
        ],
    ),
    (
        "expression trying an attribute escape",
        "operators/scatter_nd.json",
        constraint(3, expr="InputTensor.Sizes.__class__ == 1"),
        [
            f"{OP} at /constraints/3/expr: names starting with '_' are not allowed "
            "(got '__class__') (in 'InputTensor.Sizes.__class__ == 1' at column 1)"
        ],
    ),
    (
        "expression calling an unknown function",
        "operators/scatter_nd.json",
        constraint(3, expr='system("ls") == 0'),
        [
            f"{OP} at /constraints/3/expr: unknown function 'system' (functions: {FUNCTIONS}) "
            "(in 'system(\"ls\") == 0' at column 1)"
        ],
    ),
    (
        "constraint that is not a condition",
        "operators/scatter_nd.json",
        constraint(3, expr="IndexTupleSize + 1"),
        [f"{OP} at /constraints/3/expr: expression 'IndexTupleSize + 1' must be bool; it is int"],
    ),
    (
        "error constraint reading tensor data",
        "operators/scatter_nd.json",
        constraint(3, expr="all(in_bounds(IndicesTensor.Values, 3))"),
        [
            f"{OP} at /constraints/3/expr: all() works on tensor data, which only 'requires' "
            "constraints may read (in 'all(in_bounds(IndicesTensor.Values, 3))' at column 1)"
        ],
    ),
    (
        "dependency on an unknown constraint",
        "operators/scatter_nd.json",
        constraint(3, depends_on=["SCATTER_ND.C99"]),
        [
            f"{OP} at /constraints/3/depends_on: SCATTER_ND.C6 depends on unknown constraint "
            "'SCATTER_ND.C99'"
        ],
    ),
    (
        "dependency cycle",
        "operators/scatter_nd.json",
        lambda spec: (
            spec["constraints"][0].update(depends_on=["SCATTER_ND.C2"]),
            spec["constraints"][1].update(depends_on=["SCATTER_ND.C1"]),
        ),
        [
            f"{OP} at /constraints/0/depends_on: dependency cycle: "
            "SCATTER_ND.C1 -> SCATTER_ND.C2 -> SCATTER_ND.C1"
        ],
    ),
    (
        "requires constraint without its undefined effect",
        "operators/scatter_nd.json",
        lambda spec: spec["constraints"][-1].pop("undefined"),
        [
            f"{OP} at /constraints/9: a 'requires' constraint must say what is 'undefined' "
            "when violated"
        ],
    ),
    (
        "comparison rule with an unknown magnitude",
        "operators/scatter_nd.json",
        comparison(0, rule="ulp", max_ulps=1, terms="1", magnitude="relative"),
        [
            f"{OP} at /semantics/comparison/0/magnitude: 'relative' is not one of "
            "['output', 'absolute_inputs', 'log_of_sum', 'one']"
        ],
    ),
    (
        "comparison rule with terms but no max_ulps",
        "operators/scatter_nd.json",
        comparison(0, terms="prod(InputTensor.Sizes)", magnitude="output"),
        [
            f"{OP} at /semantics/comparison/0: 'terms' and 'magnitude' need an 'ulp' rule with "
            "max_ulps (an element passes within max_ulps * ULP(expected) + terms * eps * "
            "magnitude)"
        ],
    ),
    (
        "dot-product rule without terms, for integers, with ULP keys",
        "operators/scatter_nd.json",
        comparison(0, rule="dot_product", max_ulps=1, magnitude="output"),
        [
            f"{OP} at /semantics/comparison/0: a 'dot_product' rule needs terms: the products "
            "summed (KS)",
            f"{OP} at /semantics/comparison/0: a 'dot_product' rule takes no magnitude, "
            "max_ulps: its bound is KS * max(bound * u, tiny) from the FLOAT64 reference and the "
            "sum of |products|",
            f"{OP} at /semantics/comparison/0: a 'dot_product' rule judges float outputs only",
        ],
    ),
    (
        "error_statistics on an exact rule",
        "operators/scatter_nd.json",
        comparison(0, error_statistics=False),
        [
            f"{OP} at /semantics/comparison/0/error_statistics: error_statistics needs a "
            "'dot_product' rule"
        ],
    ),
    (
        "comparison rule with terms but no magnitude",
        "operators/scatter_nd.json",
        comparison(0, rule="ulp", max_ulps=1, ulps_of="FLOAT32", terms="IndexTupleSize"),
        [
            f"{OP} at /semantics/comparison/0: 'terms' needs 'magnitude': the bound is "
            "terms * eps * magnitude"
        ],
    ),
    (
        "comparison rule whose terms do not compile",
        "operators/scatter_nd.json",
        comparison(
            0, rule="ulp", max_ulps=1, ulps_of="FLOAT32", terms="Foo + 1", magnitude="output"
        ),
        [
            f"{OP} at /semantics/comparison/0/terms: unknown name 'Foo' (known names: {NAMES}) "
            "(in 'Foo + 1' at column 1)"
        ],
    ),
    (
        "comparison rule whose when is not a condition",
        "operators/scatter_nd.json",
        comparison(0, when="IndexTupleSize"),
        [
            f"{OP} at /semantics/comparison/0/when: expression 'IndexTupleSize' must be bool; "
            "it is int"
        ],
    ),
    (
        "comparison rule whose when reads element ordinals",
        "operators/scatter_nd.json",
        comparison(0, when="k == 0"),
        [
            f"{OP} at /semantics/comparison/0/when: unknown name 'k' (known names: {NAMES}) "
            "(in 'k == 0' at column 1)"
        ],
    ),
    (
        "a Function without a comparison rule",
        "operators/reduce.json",
        lambda spec: spec["semantics"].update(
            comparison=[
                c
                for c in spec["semantics"]["comparison"]
                if c.get("when") != 'Function == "LOG_SUM"'
            ]
        ),
        [
            f"spec/operators/reduce.json at /support/{row}/tensors/1/data_types: no comparison "
            f"rule covers OutputTensor of float type {data_type} when Function is LOG_SUM"
            for row in (4, 5)
            for data_type in ("FLOAT32", "FLOAT16")
        ],
    ),
    (
        "integer ulp rule without the type it is computed in",
        "operators/element_wise_pow.json",
        lambda spec: spec["semantics"]["comparison"][3].pop("ulps_of"),
        [
            "spec/operators/element_wise_pow.json at /semantics/comparison/3: an 'ulp' rule for "
            "signed and unsigned outputs needs ulps_of: the floating type the result is computed "
            "in (an integer has no ULP of its own)"
        ],
    ),
    (
        "ulps_of naming no floating type",
        "operators/element_wise_pow.json",
        lambda spec: spec["semantics"]["comparison"][3].update(ulps_of="UINT32"),
        [
            "spec/operators/element_wise_pow.json at /semantics/comparison/3/ulps_of: ulps_of "
            "must be a floating data type, one of FLOAT32, FLOAT16, FLOAT64; got 'UINT32'"
        ],
    ),
    (
        "unknown source page",
        "operators/scatter_nd.json",
        lambda spec: spec["support"][0]["sources"].append("seed-999"),
        [
            f"{OP} at /support/0/sources/3: unknown source 'seed-999' "
            "(doc_pages ids: en, seed-000, seed-001)"
        ],
    ),
    (
        "example naming a missing field",
        "operators/scatter_nd.json",
        lambda spec: spec["examples"][1]["as_written"].update(Bogus=1),
        [
            f"{OP} at /examples/1/as_written/Bogus: unknown field 'Bogus' (fields: InputTensor, "
            "IndicesTensor, UpdatesTensor, OutputTensor, InputDimensionCount, "
            "IndicesDimensionCount)"
        ],
    ),
    (
        "corrected example whose values do not fit its sizes",
        "operators/scatter_nd.json",
        lambda spec: spec["examples"][1]["corrected"]["InputTensor"].update(Sizes=[1, 9]),
        [
            f"{OP} at /examples/1/corrected/InputTensor/Values: values of shape (1, 8) "
            "do not fit Sizes [1, 9]"
        ],
    ),
    (
        "erratum left unrecorded",
        "operators/scatter_elements.json",
        lambda spec: spec["examples"][1].pop("errata"),
        [
            "spec/operators/scatter_elements.json at /examples/1/as_written: InputTensor values "
            "do not fit its Sizes, but no erratum expects 'values:InputTensor'"
        ],
    ),
]


def _break(tmp_path: Path, file: str, mutation: Mutation | TextEdit) -> Path:
    """A spec folder of the common files and the one operator broken (a whole catalog's copy
    took each case a second and a half to load: its schema checks)."""
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir, ignore=shutil.ignore_patterns("operators"))
    (spec_dir / "operators").mkdir()
    operator = file if file.startswith("operators/") else "operators/scatter_nd.json"
    shutil.copy(SPEC_DIR / operator, spec_dir / operator)
    path = spec_dir / file
    text = path.read_text(encoding="utf-8")
    if isinstance(mutation, TextEdit):
        text = mutation.edit(text)
    else:
        data = json.loads(text)
        mutation(data)
        text = json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return spec_dir


@pytest.mark.parametrize(("name", "file", "mutation", "expected"), CASES, ids=[c[0] for c in CASES])
def test_malformed_spec_gives_exact_messages(
    tmp_path: Path, name: str, file: str, mutation: Mutation | TextEdit, expected: list[str]
) -> None:
    spec_dir = _break(tmp_path, file, mutation)
    with pytest.raises(SpecError) as raised:
        load_catalog(spec_dir)
    assert [str(p) for p in raised.value.problems] == expected


def test_every_problem_of_every_file_is_reported(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir)
    for name, index in (("scatter_nd.json", 0), ("gather_nd.json", 1)):
        path = spec_dir / "operators" / name
        spec = json.loads(path.read_text())
        spec["constraints"][index]["expr"] = "Bogus == 1"
        spec["support"][0]["feature_level"] = "0_1"
        path.write_text(json.dumps(spec))
    with pytest.raises(SpecError) as raised:
        load_catalog(spec_dir)
    problems = [(p.file, p.pointer) for p in raised.value.problems]
    assert problems == [
        ("spec/operators/gather_nd.json", "/constraints/1/expr"),
        ("spec/operators/gather_nd.json", "/support/0/feature_level"),
        ("spec/operators/scatter_nd.json", "/constraints/0/expr"),
        ("spec/operators/scatter_nd.json", "/support/0/feature_level"),
    ]
    assert str(raised.value).startswith("4 problems in the specs:\n  spec/operators/gather_nd.json")


def test_missing_spec_folder(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="spec folder not found"):
        load_catalog(tmp_path / "nowhere")
