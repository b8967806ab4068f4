"""The onnxruntime backend's data movement, generators, reductions and scans (issue 14) against
the pages: documented examples (as printed, and moved through every data type the support
tables list), hand-derived cases for each mode and rule, tensor arrays, several outputs, strided
tensors, and the cases that are Unsupported or rejected, with their reasons."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dmlspec import InvalidOperator, Unsupported, load_catalog
from dmlspec.backends.onnxruntime.backend import OnnxRuntimeBackend
from dmlspec.backends.onnxruntime.data_movement import OPERATORS as DATA_MOVEMENT
from dmlspec.backends.onnxruntime.generator import OPERATORS as GENERATOR
from dmlspec.backends.onnxruntime.reduction import OPERATORS as REDUCTION
from dmlspec.lint import operator_json
from dmlspec.model import ExampleFields, ExampleTensor, OperatorSpec

pytest.importorskip("onnxruntime")

CATALOG = load_catalog()
BACKEND = OnnxRuntimeBackend()
OPERATORS = sorted({*DATA_MOVEMENT, *GENERATOR, *REDUCTION})

# Documented examples whose printed values contradict their own fields (page errors, to be
# recorded as errata in the spec); the rule they break is tested by hand below.
PAGE_ERRORS = {
    ("DIAGONAL_MATRIX1", "example_1"): (
        "the page gives Value 7 but prints 1 on the diagonal (example 2, with the same Value, "
        "prints 7)"
    ),
}
# Where onnxruntime's result differs from what a page says, or the page is silent and
# onnxruntime's choice is one a device need not make. Each is shown by a test below.
DIVERGENCES: dict[str, str] = {
    "REDUCE": (
        "MIN and MAX with NaN: the page's max(max(max(x1, x2), x3), ...) does not say; "
        "onnxruntime's ReduceMax/ReduceMin keep a NaN that comes first and skip one that comes "
        "later, where an IEEE maxNum/minNum (HLSL max/min) always returns the number."
    ),
    "ARGMAX": "NaN: as REDUCE, a NaN that comes first is the extreme, one that comes later not.",
    "ARGMIN": "NaN: as ARGMAX.",
    "TOP_K1": (
        "NaN: the pages do not order it; onnxruntime's TopK ranks NaN above every number "
        "(first when largest, last when smallest)."
    ),
}
# Tensors that hold indices, counts or coordinates: a data-type sweep leaves them as printed.
INDEX_TENSORS = {
    "IndicesTensor",
    "SequenceLengthsTensor",
    "OutputIndexTensor",
    "OutputCountTensor",
    "OutputCoordinatesTensor",
}


def dtype_of(name: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(name.removeprefix("DML_TENSOR_DATA_TYPE_")).numpy)


def t(data_type: str, sizes: list[int], **extra: Any) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes, **extra}


def run(kind: str, desc: dict[str, Any], **inputs: Any) -> dict[str, Any]:
    return BACKEND.run({"type": f"DML_OPERATOR_{kind}", "desc": desc}, inputs)


def same(actual: Any, expected: Any, dtype: Any) -> None:
    """Bitwise equal, with the dtype and shape of `expected` as `dtype`."""
    want = np.asarray(expected, dtype=dtype)
    got = np.asarray(actual)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    assert got.tobytes() == want.tobytes(), (got.tolist(), want.tolist())


# ---- documented examples -----------------------------------------------------------------


def _arrays(value: Any, dtype: Any = None) -> Any:
    """An example tensor (or tensor array) as arrays, in its own type or `dtype`."""
    if isinstance(value, tuple):
        return [_arrays(item, dtype) for item in value]
    printed = np.array(value.values, dtype=np.float64).reshape(value.sizes)
    target = np.dtype(dtype) if dtype is not None else dtype_of(value.data_type)
    if target.kind in "iu":  # integer values wrap as their bits would
        return printed.astype(np.int64).astype(target)
    return printed.astype(target)


Case = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]


def _case(spec: OperatorSpec, fields: ExampleFields) -> Case | None:
    """The example as (operator, inputs, expected outputs), or None where the page prints
    it in fragments (a tensor without values)."""
    outputs = {f.name for f in spec.fields if f.kind.startswith("output_tensor")}
    inputs: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for name, value in fields:
        items = value if isinstance(value, tuple) else (value,)
        tensors = [item for item in items if isinstance(item, ExampleTensor)]
        if len(tensors) != len(items):
            continue
        if any(item.values is None for item in tensors):
            return None
        (expected if name in outputs else inputs)[name] = _arrays(value)
    needed = [f.name for f in spec.fields if f.kind.startswith("input_tensor") and not f.optional]
    if not expected or any(name not in inputs for name in needed):
        return None
    return operator_json(spec, fields), inputs, expected


EXAMPLES = [
    pytest.param(name, example.id, id=f"{name}-{example.id}")
    for name in OPERATORS
    for example in CATALOG.operator(name).examples
    if _case(CATALOG.operator(name), example.valid_form) is not None
    and (name, example.id) not in PAGE_ERRORS
]


def _check(result: dict[str, Any], expected: dict[str, Any]) -> None:
    assert set(result) == set(expected)
    for name, want in expected.items():
        if isinstance(want, list):
            assert len(result[name]) == len(want)
            for got, item in zip(result[name], want, strict=True):
                same(got, item, item.dtype)
        else:
            same(result[name], want, want.dtype)


@pytest.mark.parametrize(("name", "example_id"), EXAMPLES)
def test_documented_examples(name: str, example_id: str) -> None:
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    case = _case(spec, example.valid_form)
    assert case is not None
    operator, inputs, expected = case
    _check(BACKEND.run(operator, inputs), expected)


@pytest.mark.parametrize(("name", "example_id"), list(PAGE_ERRORS))
def test_page_errors_are_errors_of_the_page(name: str, example_id: str) -> None:
    """The example as printed disagrees with its own Value: the output holds Value where the
    page prints 1."""
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    case = _case(spec, example.valid_form)
    assert case is not None
    operator, inputs, expected = case
    result = BACKEND.run(operator, inputs)["OutputTensor"]
    printed = expected["OutputTensor"]
    assert not np.array_equal(result, printed)
    assert np.array_equal(result, printed * operator["desc"]["Value"])


def test_every_operator_with_complete_examples_runs_them() -> None:
    covered = {p.values[0] for p in EXAMPLES}
    assert covered >= set(OPERATORS) - {
        "DEPTH_TO_SPACE1",  # printed in fragments: tested below
        "RANDOM_GENERATOR",  # Unsupported
        "REVERSE_SUBSEQUENCES",  # no example drafted
        "SLICE_GRAD",
        "TILE",
        "VALUE_SCALE_2D",
    }


@pytest.mark.parametrize("order_example", [1, 2])
def test_depth_to_space1_page_fragments(order_example: int) -> None:
    """The page prints the input once (example 1) and the output of each Order after it."""
    spec = CATALOG.operator("DEPTH_TO_SPACE1")
    given = spec.examples[0].valid_form.as_dict()["InputTensor"]
    fields = spec.examples[order_example].valid_form
    output = fields.as_dict()["OutputTensor"]
    assert isinstance(given, ExampleTensor) and isinstance(output, ExampleTensor)
    operator = operator_json(spec, ExampleFields((("InputTensor", given), *fields.items)))
    result = BACKEND.run(operator, {"InputTensor": _arrays(given)})
    same(result["OutputTensor"], _arrays(output), dtype_of(output.data_type or ""))


# ---- the examples moved through every data type ------------------------------------------


def _level(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in name.split("_"))


def _support_types(spec: OperatorSpec, tensor: str) -> tuple[str, ...]:
    """The data types of `tensor` in the highest support row the backend claims."""
    rows = [
        r
        for r in spec.support
        if r.when is None and _level(r.feature_level) <= _level(BACKEND.feature_level)
    ]
    return max(rows, key=lambda r: _level(r.feature_level)).tensor(tensor).data_types


# Operators whose graphs carry types (a kernel lacking one, Where's carriers, order-keeping
# casts, wrapping arithmetic): PADDING in each mode, the others in their first example.
# (Slice, Concat, Split and the other gathers move every type in their own kernels.)
SWEPT = [
    "PADDING",
    "PADDING1",
    "GATHER",
    "SPACE_TO_DEPTH1",
    "DEPTH_TO_SPACE",
    "ONE_HOT",
    "TOP_K1",
    "ARGMAX",
    "CUMULATIVE_SUMMATION",
    "CUMULATIVE_PRODUCT",
]


def _retyped(name: str) -> list[Any]:
    spec = CATALOG.operator(name)
    examples = [e for e in spec.examples if _case(spec, e.valid_form) is not None]
    chosen = examples if name == "PADDING" else examples[:1]
    data = next(f.name for f in spec.fields if f.kind.startswith("input_tensor"))
    data = "ValuesTensor" if name == "ONE_HOT" else data
    return [
        pytest.param(name, e.id, data_type, id=f"{name}-{e.id}-{data_type}")
        for e in chosen
        for data_type in _support_types(spec, data)
    ]


@pytest.mark.parametrize(
    ("name", "example_id", "data_type"), [p for n in SWEPT for p in _retyped(n)]
)
def test_examples_in_every_data_type(name: str, example_id: str, data_type: str) -> None:
    """The page's values (small, non-negative integers) as each data type: indices stay as
    printed, every other tensor takes the type."""
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    case = _case(spec, example.valid_form)
    assert case is not None
    operator, _, _ = case
    dtype = dtype_of(data_type)
    inputs: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    outputs = {f.name for f in spec.fields if f.kind.startswith("output_tensor")}
    data = example.valid_form.as_dict()["ValuesTensor" if name == "ONE_HOT" else "InputTensor"]
    assert isinstance(data, ExampleTensor)
    for field, value in example.valid_form:
        items = value if isinstance(value, tuple) else (value,)
        if not isinstance(items[0], ExampleTensor):
            continue
        keep = field in INDEX_TENSORS or items[0].data_type != data.data_type
        arrays = _arrays(value, None if keep else dtype)
        (expected if field in outputs else inputs)[field] = arrays
        if not keep:
            raw = operator["desc"][field]
            for item in raw if isinstance(raw, list) else [raw]:
                item["DataType"] = data_type
    if "PaddingValueDataType" in operator["desc"]:
        operator["desc"]["PaddingValueDataType"] = data_type
    _check(BACKEND.run(operator, inputs), expected)


# ---- gathers: negative and outside indices -----------------------------------------------

X5 = np.array([10, 11, 12, 13, 14], np.float32)


def test_gather_counts_negative_signed_indices_from_the_end_and_reads_zero_outside() -> None:
    desc = {
        "InputTensor": t("FLOAT32", [5]),
        "IndicesTensor": t("INT32", [5]),
        "OutputTensor": t("FLOAT32", [5]),
        "Axis": 0,
        "IndexDimensions": 1,
    }
    indices = np.array([-1, -5, -6, 5, 2], np.int32)
    same(
        run("GATHER", desc, InputTensor=X5, IndicesTensor=indices)["OutputTensor"],
        [14, 10, 0, 0, 12],
        np.float32,
    )


def test_gather_unsigned_indices_never_count_from_the_end() -> None:
    desc = {
        "InputTensor": t("FLOAT32", [5]),
        "IndicesTensor": t("UINT64", [3]),
        "OutputTensor": t("FLOAT32", [3]),
        "Axis": 0,
        "IndexDimensions": 1,
    }
    indices = np.array([2**64 - 1, 2**63, 1], np.uint64)  # -1 and INT64_MIN as int64
    same(
        run("GATHER", desc, InputTensor=X5, IndicesTensor=indices)["OutputTensor"],
        [0, 0, 11],
        np.float32,
    )


def test_gather_with_no_index_dimensions_takes_one_slice() -> None:
    desc = {
        "InputTensor": t("INT8", [1, 2, 3]),
        "IndicesTensor": t("INT64", [1, 1, 1]),
        "OutputTensor": t("INT8", [1, 1, 3]),
        "Axis": 1,
        "IndexDimensions": 0,
    }
    x = np.arange(6, dtype=np.int8).reshape(1, 2, 3)
    result = run("GATHER", desc, InputTensor=x, IndicesTensor=np.full((1, 1, 1), -1, np.int64))
    same(result["OutputTensor"], [[[3, 4, 5]]], np.int8)


def test_gather_elements_negative_and_outside_indices() -> None:
    desc = {
        "InputTensor": t("UINT16", [2, 3]),
        "IndicesTensor": t("INT64", [2, 3]),
        "OutputTensor": t("UINT16", [2, 3]),
        "Axis": 1,
    }
    x = np.array([[1, 2, 3], [4, 5, 6]], np.uint16)
    indices = np.array([[-1, 0, 3], [-3, -4, 1]], np.int64)
    same(
        run("GATHER_ELEMENTS", desc, InputTensor=x, IndicesTensor=indices)["OutputTensor"],
        [[3, 1, 0], [4, 0, 5]],
        np.uint16,
    )


def test_gather_nd1_batches_and_outside_tuples() -> None:
    desc = {
        "InputTensor": t("FLOAT16", [2, 2, 2]),
        "IndicesTensor": t("INT32", [2, 2, 2]),
        "OutputTensor": t("FLOAT16", [1, 2, 2]),
        "InputDimensionCount": 3,
        "IndicesDimensionCount": 3,
        "BatchDimensionCount": 1,
    }
    x = np.arange(8, dtype=np.float16).reshape(2, 2, 2)
    # batch 0: (1, -1) -> x[0][1][1] = 3, (2, 0) is outside; batch 1: (-2, 0) -> x[1][0][0] = 4,
    # (0, 1) -> x[1][0][1] = 5
    indices = np.array([[[1, -1], [2, 0]], [[-2, 0], [0, 1]]], np.int32)
    same(
        run("GATHER_ND1", desc, InputTensor=x, IndicesTensor=indices)["OutputTensor"],
        [[[3, 0], [4, 5]]],
        np.float16,
    )


# ---- slices ------------------------------------------------------------------------------


def _slice1(window: tuple[list[int], list[int], list[int]], out: list[int]) -> dict[str, Any]:
    offsets, sizes, strides = window
    return {
        "InputTensor": t("INT32", [3, 4]),
        "OutputTensor": t("INT32", out),
        "DimensionCount": 2,
        "InputWindowOffsets": offsets,
        "InputWindowSizes": sizes,
        "InputWindowStrides": strides,
    }


X34 = np.arange(12, dtype=np.int32).reshape(3, 4)  # [[0,1,2,3],[4,5,6,7],[8,9,10,11]]


@pytest.mark.parametrize(
    ("window", "out", "expected"),
    [
        (([0, 0], [3, 4], [-1, -1]), [3, 4], [[11, 10, 9, 8], [7, 6, 5, 4], [3, 2, 1, 0]]),
        (([1, 1], [2, 3], [-1, -2]), [2, 2], [[11, 9], [7, 5]]),
        (([0, 1], [3, 3], [-2, 1]), [2, 2], [[9, 10], [1, 2]]),  # fewer than the window allows
        (([0, 0], [1, 4], [-1, 3]), [1, 2], [[0, 3]]),
    ],
    ids=["reverse-both", "negative-steps-of-two", "shorter-output", "window-of-one-row"],
)
def test_slice1_negative_strides_start_at_the_window_end(
    window: Any, out: list[int], expected: Any
) -> None:
    result = run("SLICE1", _slice1(window, out), InputTensor=X34)
    same(result["OutputTensor"], expected, np.int32)


def test_slice_zero_stride_repeats_the_offset_element() -> None:
    desc = {
        "InputTensor": t("INT32", [3, 4]),
        "OutputTensor": t("INT32", [2, 3]),
        "DimensionCount": 2,
        "Offsets": [2, 1],
        "Sizes": [2, 3],
        "Strides": [0, 1],
    }
    same(run("SLICE", desc, InputTensor=X34)["OutputTensor"], [[9, 10, 11]] * 2, np.int32)


def test_slice_grad_places_the_gradient_where_slice1_reads_and_zeros_elsewhere() -> None:
    desc = {
        "InputGradientTensor": t("FLOAT32", [2, 2]),
        "OutputGradientTensor": t("FLOAT32", [3, 4]),
        "DimensionCount": 2,
        "InputWindowOffsets": [0, 1],
        "InputWindowSizes": [3, 3],
        "InputWindowStrides": [2, -2],  # rows 0, 2; columns 3, 1
    }
    gradient = np.array([[1, 2], [3, 4]], np.float32)
    result = run("SLICE_GRAD", desc, InputGradientTensor=gradient)["OutputGradientTensor"]
    same(result, [[0, 2, 0, 1], [0, 0, 0, 0], [0, 4, 0, 3]], np.float32)


def test_slice_window_outside_the_input_is_rejected() -> None:
    with pytest.raises(InvalidOperator, match="SLICE1: dimension 1 reaches positions 3 to 5"):
        run("SLICE1", _slice1(([0, 3], [1, 3], [1, 1]), [1, 3]), InputTensor=X34)


# ---- padding -----------------------------------------------------------------------------


def _padding(
    mode: str, data_type: str, n: int, start: int, end: int, **extra: Any
) -> dict[str, Any]:
    return {
        "InputTensor": t(data_type, [n]),
        "OutputTensor": t(data_type, [n + start + end]),
        "PaddingMode": f"DML_PADDING_MODE_{mode}",
        "PaddingValue": 0,
        "DimensionCount": 1,
        "StartPadding": [start],
        "EndPadding": [end],
        **extra,
    }


PADDED = [  # x = [0, 1, 2, 3] padded by 6 before and 7 after: folded over and over
    ("REFLECTION", [0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2]),
    ("SYMMETRIC", [2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2]),
    ("EDGE", [0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3]),
    ("CONSTANT", [7, 7, 7, 7, 7, 7, 0, 1, 2, 3, 7, 7, 7, 7, 7, 7, 7]),
]


@pytest.mark.parametrize(("mode", "expected"), PADDED, ids=[m for m, _ in PADDED])
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT16", "UINT64"])
def test_padding_modes_past_the_input_size(mode: str, expected: list[int], data_type: str) -> None:
    desc = _padding(mode, data_type, 4, 6, 7, PaddingValue=7)
    x = np.arange(4).astype(dtype_of(data_type))
    same(run("PADDING", desc, InputTensor=x)["OutputTensor"], expected, dtype_of(data_type))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("REFLECTION", [2, 1, 0, 1, 2, 3, 2, 1, 0]), ("SYMMETRIC", [1, 0, 0, 1, 2, 3, 3, 2, 1])],
)
@pytest.mark.parametrize("data_type", ["FLOAT16", "UINT16"])
def test_padding_mirrors_within_the_input(mode: str, expected: list[int], data_type: str) -> None:
    desc = _padding(mode, data_type, 4, 2, 3)  # REFLECTION: ONNX Pad's own reflect
    x = np.arange(4).astype(dtype_of(data_type))
    same(run("PADDING", desc, InputTensor=x)["OutputTensor"], expected, dtype_of(data_type))


@pytest.mark.parametrize(
    ("n", "mode", "expected"),
    [
        (1, "REFLECTION", [5, 5, 5, 5]),  # one element: every fold gives it back
        (2, "REFLECTION", [6, 5, 6, 5]),
        (1, "SYMMETRIC", [5, 5, 5, 5]),
    ],
)
def test_padding_reflection_of_tiny_dimensions(n: int, mode: str, expected: list[int]) -> None:
    desc = _padding(mode, "UINT8", n, 1, 3 - n)
    x = np.array([5, 6][:n], np.uint8)
    same(run("PADDING", desc, InputTensor=x)["OutputTensor"], expected, np.uint8)


def test_padding_value_float_is_truncated_for_integers() -> None:
    desc = _padding("CONSTANT", "INT8", 2, 1, 1, PaddingValue=-10.6)
    x = np.array([3, 4], np.int8)
    same(run("PADDING", desc, InputTensor=x)["OutputTensor"], [-10, 3, 4, -10], np.int8)


def test_padding1_value_is_its_union_member_bit_for_bit() -> None:
    desc = _padding("CONSTANT", "FLOAT16", 2, 1, 1, PaddingValueDataType="FLOAT16")
    desc["PaddingValue"] = -0.0
    x = np.array([3, 4], np.float16)
    result = run("PADDING1", desc, InputTensor=x)["OutputTensor"]
    same(result, [-0.0, 3, 4, -0.0], np.float16)  # the sign of zero kept


def test_padding_output_sizes_must_add_up() -> None:
    desc = _padding("EDGE", "FLOAT32", 2, 1, 1)
    desc["OutputTensor"] = t("FLOAT32", [5])
    with pytest.raises(InvalidOperator, match=r"PADDING: OutputTensor\.Sizes"):
        run("PADDING", desc, InputTensor=np.zeros(2, np.float32))


# ---- tiling, joining, splitting ----------------------------------------------------------


def test_tile_repeats_each_dimension() -> None:
    desc = {
        "InputTensor": t("FLOAT64", [2, 1]),
        "OutputTensor": t("FLOAT64", [4, 3]),
        "RepeatsCount": 2,
        "Repeats": [2, 3],
    }
    x = np.array([[1.5], [-2.0]])
    same(
        run("TILE", desc, InputTensor=x)["OutputTensor"],
        [[1.5] * 3, [-2.0] * 3, [1.5] * 3, [-2.0] * 3],
        np.float64,
    )


def test_tile_repeats_must_match_the_sizes() -> None:
    desc = {"InputTensor": t("INT32", [2]), "OutputTensor": t("INT32", [5]), "Repeats": [2]}
    with pytest.raises(InvalidOperator, match="TILE: Repeats"):
        run("TILE", desc, InputTensor=np.zeros(2, np.int32))


def test_join_takes_a_list_and_split_returns_one() -> None:
    parts = [np.array([[1], [2]], np.int8), np.array([[3, 4], [5, 6]], np.int8)]
    joined = run(
        "JOIN",
        {
            "InputCount": 2,
            "InputTensors": [t("INT8", [2, 1]), t("INT8", [2, 2])],
            "OutputTensor": t("INT8", [2, 3]),
            "Axis": 1,
        },
        InputTensors=parts,
    )["OutputTensor"]
    same(joined, [[1, 3, 4], [2, 5, 6]], np.int8)
    split = run(
        "SPLIT",
        {
            "InputTensor": t("INT8", [2, 3]),
            "OutputCount": 3,
            "OutputTensors": [t("INT8", [2, 1])] * 3,
            "Axis": 1,
        },
        InputTensor=joined,
    )["OutputTensors"]
    assert isinstance(split, list) and len(split) == 3
    for got, expected in zip(split, [[[1], [2]], [[3], [5]], [[4], [6]]], strict=True):
        same(got, expected, np.int8)


# ---- depth and space ---------------------------------------------------------------------


@pytest.mark.parametrize("data_type", ["UINT8", "INT32"])  # DepthToSpace's own; the rest
@pytest.mark.parametrize(
    ("order", "expected"),
    [
        # DCR: channel (bh * 2 + bw) * 2 + c; CRD: channel c * 4 + bh * 2 + bw
        ("DEPTH_COLUMN_ROW", [[[0, 2], [4, 6]], [[1, 3], [5, 7]]]),
        ("COLUMN_ROW_DEPTH", [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
    ],
)
def test_depth_to_space1_orders(order: str, expected: Any, data_type: str) -> None:
    desc = {
        "InputTensor": t(data_type, [1, 8, 1, 1]),
        "OutputTensor": t(data_type, [1, 2, 2, 2]),
        "BlockSize": 2,
        "Order": f"DML_DEPTH_SPACE_ORDER_{order}",
    }
    x = np.arange(8).astype(dtype_of(data_type)).reshape(1, 8, 1, 1)
    result = run("DEPTH_TO_SPACE1", desc, InputTensor=x)["OutputTensor"]
    same(result, [expected], dtype_of(data_type))
    back = run(
        "SPACE_TO_DEPTH1",
        {**desc, "InputTensor": desc["OutputTensor"], "OutputTensor": desc["InputTensor"]},
        InputTensor=result,
    )["OutputTensor"]
    same(back, x, dtype_of(data_type))


# ---- one-hot, reversal, nonzero ----------------------------------------------------------


def test_one_hot_unsigned_indices_past_the_axis_are_all_off() -> None:
    desc = {
        "IndicesTensor": t("UINT64", [3, 1]),
        "ValuesTensor": t("FLOAT64", [1, 2]),
        "OutputTensor": t("FLOAT64", [3, 3]),
        "Axis": 1,
    }
    indices = np.array([[2**64 - 1], [1], [3]], np.uint64)
    values = np.array([[0.5, -2.0]])
    result = run("ONE_HOT", desc, IndicesTensor=indices, ValuesTensor=values)["OutputTensor"]
    same(result, [[0.5] * 3, [0.5, -2.0, 0.5], [0.5] * 3], np.float64)


def test_one_hot_values_move_bit_for_bit() -> None:
    payload = np.array([0x7FF0000000000123, 0x8000000000000000], np.uint64).view(np.float64)
    desc = {
        "IndicesTensor": t("INT32", [2, 1]),
        "ValuesTensor": t("FLOAT64", [2]),
        "OutputTensor": t("FLOAT64", [2, 2]),
        "Axis": 1,
    }
    indices = np.array([[-1], [0]], np.int32)
    result = run("ONE_HOT", desc, IndicesTensor=indices, ValuesTensor=payload)["OutputTensor"]
    same(result, payload[[[0, 1], [1, 0]]], np.float64)  # NaN payload and -0.0 kept


def test_reverse_subsequences_clamps_lengths_to_the_axis() -> None:
    desc = {
        "InputTensor": t("INT16", [3, 2]),
        "SequenceLengthsTensor": t("UINT64", [1, 2]),
        "OutputTensor": t("INT16", [3, 2]),
        "Axis": 0,
    }
    x = np.array([[0, 1], [2, 3], [4, 5]], np.int16)
    lengths = np.array([[2, 2**64 - 1]], np.uint64)  # column 0: 2; column 1: the whole axis
    result = run("REVERSE_SUBSEQUENCES", desc, InputTensor=x, SequenceLengthsTensor=lengths)
    same(result["OutputTensor"], [[2, 5], [0, 3], [4, 1]], np.int16)


def test_reverse_subsequences_length_zero_copies() -> None:
    desc = {
        "InputTensor": t("FLOAT32", [1, 2, 3]),
        "SequenceLengthsTensor": t("UINT32", [1, 2, 1]),
        "OutputTensor": t("FLOAT32", [1, 2, 3]),
        "Axis": 2,
    }
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    lengths = np.array([0, 3], np.uint32).reshape(1, 2, 1)
    result = run("REVERSE_SUBSEQUENCES", desc, InputTensor=x, SequenceLengthsTensor=lengths)
    same(result["OutputTensor"], [[[0, 1, 2], [5, 4, 3]]], np.float32)


@pytest.mark.parametrize("data_type", ["FLOAT16", "INT8", "UINT16"])
def test_nonzero_coordinates_count_and_rows(data_type: str) -> None:
    """-0.0 is zero; N may exceed the effective rank (the leading coordinates are 0); rows past
    the count are undefined (zero here)."""
    dtype = dtype_of(data_type)
    x = np.array([[0, 5], [-0.0 if dtype.kind == "f" else 0, 1]]).astype(dtype).reshape(1, 2, 2)
    desc = {
        "InputTensor": t(data_type, [1, 2, 2]),
        "OutputCountTensor": t("UINT32", [1, 1, 1]),
        "OutputCoordinatesTensor": t("UINT32", [1, 4, 3]),
    }
    result = run("NONZERO_COORDINATES", desc, InputTensor=x)
    same(result["OutputCountTensor"], [[[2]]], np.uint32)
    same(result["OutputCoordinatesTensor"][:, :2], [[[0, 0, 1], [0, 1, 1]]], np.uint32)


# ---- selection and reductions ------------------------------------------------------------


def _top_k(direction: str, data_type: str, n: int, k: int) -> dict[str, Any]:
    return {
        "InputTensor": t(data_type, [n]),
        "OutputValueTensor": t(data_type, [k]),
        "OutputIndexTensor": t("UINT64", [k]),
        "Axis": 0,
        "K": k,
        "AxisDirection": f"DML_AXIS_DIRECTION_{direction}",
    }


@pytest.mark.parametrize(
    ("direction", "values", "indices"),
    [("DECREASING", [5, 5, 3], [1, 3, 2]), ("INCREASING", [1, 1, 3], [0, 4, 2])],
)
def test_top_k1_ties_keep_ascending_indices(direction: str, values: Any, indices: Any) -> None:
    x = np.array([1, 5, 3, 5, 1], np.float32)
    result = run("TOP_K1", _top_k(direction, "FLOAT32", 5, 3), InputTensor=x)
    same(result["OutputValueTensor"], values, np.float32)
    same(result["OutputIndexTensor"], indices, np.uint64)


def test_top_k_orders_uint64_past_2_63() -> None:
    x = np.array([1, 2**64 - 1, 2**63, 5], np.uint64)
    result = run("TOP_K1", _top_k("DECREASING", "UINT64", 4, 3), InputTensor=x)
    same(result["OutputValueTensor"], [2**64 - 1, 2**63, 5], np.uint64)
    same(result["OutputIndexTensor"], [1, 2, 3], np.uint64)


def _arg_desc(
    data_type: str, sizes: list[int], axes: list[int], out: list[int], **extra: Any
) -> dict[str, Any]:
    return {
        "InputTensor": t(data_type, sizes),
        "OutputTensor": t("UINT32", out),
        "AxisCount": len(axes),
        "Axes": axes,
        **extra,
    }


@pytest.mark.parametrize(
    ("kind", "direction", "expected"),
    [
        ("ARGMIN", "INCREASING", 0),  # the page: argmin({1,2,3,2,1}) = 0
        ("ARGMIN", "DECREASING", 4),  # ... and 4
        ("ARGMAX", "INCREASING", 2),
        ("ARGMAX", "DECREASING", 2),
    ],
)
def test_arg_reductions_pick_the_first_or_last_tie(
    kind: str, direction: str, expected: int
) -> None:
    desc = _arg_desc("UINT16", [5], [0], [1], AxisDirection=direction)
    x = np.array([1, 2, 3, 2, 1], np.uint16)
    same(run(kind, desc, InputTensor=x)["OutputTensor"], [expected], np.uint32)


def test_arg_reduction_over_several_axes_is_the_row_major_position_within_them() -> None:
    x = np.zeros((2, 3, 2), np.int64)
    x[0, 2, 1] = 9  # in the reduced axes {0, 2} (sizes 2, 2) of column 2: position 0 * 2 + 1
    x[1, 0, 0] = 9  # column 0: position 1 * 2 + 0
    desc = _arg_desc("INT64", [2, 3, 2], [2, 0], [1, 3, 1], AxisDirection="INCREASING")
    same(run("ARGMAX", desc, InputTensor=x)["OutputTensor"], [[[2], [0], [1]]], np.uint32)


def _reduce(
    function: str, data_type: str, sizes: list[int], axes: list[int], out: list[int]
) -> dict[str, Any]:
    return {
        "Function": f"DML_REDUCE_FUNCTION_{function}",
        "InputTensor": t(data_type, sizes),
        "OutputTensor": t(data_type, out),
        "AxisCount": len(axes),
        "Axes": axes,
    }


INT32_WRAP = [
    ("SUM", [2**31 - 1, 2, 3], 2**31 - 1 + 5 - 2**32),
    ("MULTIPLY", [65536, 65536, 3], 0),
    ("MULTIPLY", [65535, 65537, 3], (65535 * 65537 * 3) % 2**32 - 2**32),
    ("SUM_SQUARE", [46341, 1, 0], (46341**2 + 1) - 2**32),
    ("L1", [-(2**31), -1, 0], -(2**31) + 1),  # |INT32_MIN| wraps to itself
    ("MIN", [-(2**31), 0, 2**31 - 1], -(2**31)),
    ("MAX", [-(2**31), 0, 2**31 - 1], 2**31 - 1),
]


@pytest.mark.parametrize(("function", "values", "expected"), INT32_WRAP)
def test_reduce_integer_results_wrap(function: str, values: list[int], expected: int) -> None:
    desc = _reduce(function, "INT32", [3], [0], [1])
    x = np.array(values, np.int32)
    same(run("REDUCE", desc, InputTensor=x)["OutputTensor"], [expected], np.int32)


def test_reduce_uint64_sums_and_products_are_exact_modulo_2_64() -> None:
    x = np.array([2**63 + 3, 2**63 + 5, 7], np.uint64)
    results = {
        function: int(
            run("REDUCE", _reduce(function, "UINT64", [3], [0], [1]), InputTensor=x)[
                "OutputTensor"
            ][0]
        )
        for function in ("SUM", "MULTIPLY", "L1", "MAX", "MIN")
    }
    assert results == {
        "SUM": (2**64 + 15) % 2**64,
        "MULTIPLY": ((2**63 + 3) * (2**63 + 5) * 7) % 2**64,
        "L1": (2**64 + 15) % 2**64,
        "MAX": 2**63 + 5,
        "MIN": 7,
    }


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("AVERAGE", [2.5, 6.5]),
        ("L2", [math.sqrt(30), math.sqrt(174)]),
        ("LOG_SUM", [math.log(10), math.log(26)]),
        (
            "LOG_SUM_EXP",
            [
                math.log(sum(math.exp(v) for v in range(1, 5))),
                math.log(sum(math.exp(v) for v in range(5, 9))),
            ],
        ),
        ("SUM_SQUARE", [30, 174]),
        ("MULTIPLY", [24, 1680]),
    ],
)
def test_reduce_float_functions(function: str, expected: list[float]) -> None:
    x = np.arange(1, 9, dtype=np.float16).reshape(2, 2, 2)  # rows [1..4], [5..8]
    result = run(
        "REDUCE", _reduce(function, "FLOAT16", [2, 2, 2], [1, 2], [2, 1, 1]), InputTensor=x
    )
    got = result["OutputTensor"]
    assert got.dtype == np.float16 and got.shape == (2, 1, 1)
    np.testing.assert_allclose(got.reshape(-1).astype(np.float64), expected, rtol=1e-3)


def test_reduce_with_no_axes_applies_the_function_to_each_element() -> None:
    x = np.array([[1, -2], [3, -4]], np.float32)
    result = run("REDUCE", _reduce("SUM_SQUARE", "FLOAT32", [2, 2], [], [2, 2]), InputTensor=x)
    same(result["OutputTensor"], [[1, 4], [9, 16]], np.float32)


# ---- scans -------------------------------------------------------------------------------

SCANS = [  # x = [1, 2, 3, 4] along the axis
    ("INCREASING", False, [1, 3, 6, 10], [1, 2, 6, 24]),
    ("INCREASING", True, [0, 1, 3, 6], [1, 1, 2, 6]),
    ("DECREASING", False, [10, 9, 7, 4], [24, 24, 12, 4]),
    ("DECREASING", True, [9, 7, 4, 0], [24, 12, 4, 1]),
]


@pytest.mark.parametrize(("direction", "exclusive", "sums", "products"), SCANS)
@pytest.mark.parametrize("data_type", ["FLOAT16", "INT64", "UINT32"])
def test_cumulative_scans(
    direction: str, exclusive: bool, sums: list[int], products: list[int], data_type: str
) -> None:
    dtype = dtype_of(data_type)
    x = np.array([[1, 2, 3, 4]] * 2).astype(dtype).T  # along axis 0, two columns
    desc = {
        "InputTensor": t(data_type, [4, 2]),
        "OutputTensor": t(data_type, [4, 2]),
        "Axis": 0,
        "AxisDirection": f"DML_AXIS_DIRECTION_{direction}",
    }
    summed = run("CUMULATIVE_SUMMATION", {**desc, "HasExclusiveSum": exclusive}, InputTensor=x)
    same(summed["OutputTensor"], np.array([sums] * 2).T, dtype)
    multiplied = run(
        "CUMULATIVE_PRODUCT", {**desc, "HasExclusiveProduct": exclusive}, InputTensor=x
    )
    same(multiplied["OutputTensor"], np.array([products] * 2).T, dtype)


def test_cumulative_integer_overflow_wraps() -> None:
    desc = {
        "InputTensor": t("INT32", [3]),
        "OutputTensor": t("INT32", [3]),
        "Axis": 0,
        "AxisDirection": "DML_AXIS_DIRECTION_INCREASING",
    }
    x = np.array([2**30, 4, 2**30], np.int32)
    summed = run("CUMULATIVE_SUMMATION", {**desc, "HasExclusiveSum": False}, InputTensor=x)
    same(summed["OutputTensor"], [2**30, 2**30 + 4, 2**31 + 4 - 2**32], np.int32)
    product = run("CUMULATIVE_PRODUCT", {**desc, "HasExclusiveProduct": False}, InputTensor=x)
    same(product["OutputTensor"], [2**30, 0, 0], np.int32)


# ---- generators --------------------------------------------------------------------------


def test_fill_value_constant_holds_the_union_member() -> None:
    desc = {"OutputTensor": t("INT8", [2, 2]), "ValueDataType": "INT8", "Value": 300}
    same(run("FILL_VALUE_CONSTANT", desc)["OutputTensor"], [[44, 44], [44, 44]], np.int8)
    desc = {"OutputTensor": t("FLOAT16", [3]), "ValueDataType": "FLOAT16", "Value": 0.1}
    same(run("FILL_VALUE_CONSTANT", desc)["OutputTensor"], [0.1] * 3, np.float16)


def test_diagonal_matrix_offset_and_truncated_value() -> None:
    desc = {"OutputTensor": t("INT32", [2, 3, 3]), "Offset": -1, "Value": 10.6}
    expected = [[0, 0, 0], [10, 0, 0], [0, 10, 0]]  # OutputTensor[i, i - 1], 10.6 -> 10
    same(run("DIAGONAL_MATRIX", desc)["OutputTensor"], [expected] * 2, np.int32)


@pytest.mark.parametrize(
    ("begin", "end", "expected"),
    [
        (0, 1, [[7, 1, 2], [3, 7, 5]]),  # the diagonal filled
        (-1, 2, [[7, 7, 2], [7, 7, 7]]),  # a strip of three diagonals
        (1, 0, [[0, 7, 7], [7, 4, 7]]),  # reversed: the diagonal kept, the rest filled
        (1, 1, [[0, 1, 2], [3, 4, 5]]),  # empty: the input
    ],
)
def test_diagonal_matrix1_fill_range(begin: int, end: int, expected: Any) -> None:
    desc = {
        "InputTensor": t("UINT16", [2, 3]),
        "OutputTensor": t("UINT16", [2, 3]),
        "ValueDataType": "UINT16",
        "Value": 7,
        "DiagonalFillBegin": begin,
        "DiagonalFillEnd": end,
    }
    x = np.arange(6, dtype=np.uint16).reshape(2, 3)
    same(run("DIAGONAL_MATRIX1", desc, InputTensor=x)["OutputTensor"], expected, np.uint16)


def test_diagonal_matrix1_without_input_fills_zeros() -> None:
    desc = {
        "OutputTensor": t("FLOAT32", [2, 2]),
        "ValueDataType": "FLOAT32",
        "Value": 7,
        "DiagonalFillBegin": 0,
        "DiagonalFillEnd": 1,
    }
    same(run("DIAGONAL_MATRIX1", desc)["OutputTensor"], [[7, 0], [0, 7]], np.float32)


def test_value_scale_2d_scales_and_biases_each_channel() -> None:
    desc = {
        "InputTensor": t("FLOAT16", [1, 3, 1, 2]),
        "OutputTensor": t("FLOAT16", [1, 3, 1, 2]),
        "Scale": 2.0,
        "ChannelCount": 3,
        "Bias": [1.0, -1.0, 0.5],
    }
    x = np.arange(6, dtype=np.float16).reshape(1, 3, 1, 2)
    same(
        run("VALUE_SCALE_2D", desc, InputTensor=x)["OutputTensor"],
        [[[[1, 3]], [[3, 5]], [[8.5, 10.5]]]],
        np.float16,
    )


# ---- strided tensors and tensor arrays ---------------------------------------------------


def test_strided_items_of_tensor_arrays_are_read_and_written_in_their_buffers() -> None:
    # InputTensors[0]: buffer [0, 1, 2, 3] read with Strides [1, 2] is [[0, 2], [1, 3]].
    joined = run(
        "JOIN",
        {
            "InputCount": 2,
            "InputTensors": [t("FLOAT32", [2, 2], Strides=[1, 2]), t("FLOAT32", [2, 1])],
            "OutputTensor": t("FLOAT32", [2, 3], Strides=[4, 1]),
            "Axis": 1,
        },
        InputTensors=[np.arange(4, dtype=np.float32), np.array([[8], [9]], np.float32)],
        OutputTensor=np.full(7, -1, np.float32),
    )["OutputTensor"]
    same(joined, [0, 2, 8, -1, 1, 3, 9], np.float32)  # the gap at 3 untouched
    split = run(
        "SPLIT",
        {
            "InputTensor": t("INT16", [2, 3]),
            "OutputCount": 2,
            "OutputTensors": [t("INT16", [2, 1], Strides=[2, 1]), t("INT16", [2, 2])],
            "Axis": 1,
        },
        InputTensor=np.arange(6, dtype=np.int16).reshape(2, 3),
        OutputTensors=[np.full(4, -7, np.int16), None],
    )["OutputTensors"]
    same(split[0], [0, -7, 3, -7], np.int16)
    same(split[1], [[1, 2], [4, 5]], np.int16)


def test_one_strided_output_of_several() -> None:
    desc = _top_k("DECREASING", "FLOAT32", 4, 2)
    desc["OutputIndexTensor"] = t("UINT32", [2], Strides=[2])
    x = np.array([1, 5, 3, 5], np.float32)
    result = run("TOP_K", desc, InputTensor=x, OutputIndexTensor=np.full(4, 77, np.uint32))
    same(result["OutputValueTensor"], [5, 5], np.float32)
    same(result["OutputIndexTensor"], [1, 77, 3, 77], np.uint32)


def test_a_strided_output_needs_its_initial_buffer() -> None:
    desc = _top_k("DECREASING", "FLOAT32", 4, 2)
    desc["OutputIndexTensor"] = t("UINT32", [2], Strides=[2])
    with pytest.raises(ValueError, match="OutputIndexTensor has Strides"):
        run("TOP_K", desc, InputTensor=np.zeros(4, np.float32))


# ---- what the backend does not do --------------------------------------------------------


def test_random_generator_is_unsupported() -> None:
    desc = {
        "InputStateTensor": t("UINT32", [1, 1, 1, 6]),
        "OutputTensor": t("UINT32", [4]),
        "Type": "DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10",
    }
    with pytest.raises(Unsupported, match="Philox 4x32-10"):
        run("RANDOM_GENERATOR", desc, InputStateTensor=np.zeros((1, 1, 1, 6), np.uint32))


def test_float_only_reductions_of_integers_are_unsupported() -> None:
    with pytest.raises(Unsupported, match="REDUCE AVERAGE of int32"):
        run("REDUCE", _reduce("AVERAGE", "INT32", [2], [0], [1]), InputTensor=np.ones(2, np.int32))


def test_gather_indices_with_more_sizes_than_index_dimensions_are_unsupported() -> None:
    desc = {
        "InputTensor": t("FLOAT32", [2, 5]),
        "IndicesTensor": t("UINT32", [2, 2]),
        "OutputTensor": t("FLOAT32", [2, 2, 2]),
        "Axis": 1,
        "IndexDimensions": 1,
    }
    with pytest.raises(Unsupported, match=r"IndicesTensor.Sizes \[2, 2\] has sizes other than 1"):
        run(
            "GATHER",
            desc,
            InputTensor=np.zeros((2, 5), np.float32),
            IndicesTensor=np.zeros((2, 2), np.uint32),
        )


# ---- divergences (DIVERGENCES) -----------------------------------------------------------


@pytest.mark.parametrize(("first", "expected"), [(True, math.nan), (False, 3.0)])
def test_divergence_reduce_max_nan_depends_on_its_position(first: bool, expected: float) -> None:
    assert "REDUCE" in DIVERGENCES
    values = [math.nan, 1.0, 3.0] if first else [1.0, 3.0, math.nan]
    x = np.array(values, np.float32)
    result = run("REDUCE", _reduce("MAX", "FLOAT32", [3], [0], [1]), InputTensor=x)
    same(result["OutputTensor"], [expected], np.float32)
    arg = run("ARGMAX", _arg_desc("FLOAT32", [3], [0], [1]), InputTensor=x)["OutputTensor"]
    same(arg, [0 if first else 1], np.uint32)


def test_divergence_top_k_ranks_nan_above_every_number() -> None:
    assert "TOP_K1" in DIVERGENCES
    x = np.array([1, math.nan, 3], np.float32)
    result = run("TOP_K1", _top_k("DECREASING", "FLOAT32", 3, 2), InputTensor=x)
    same(result["OutputIndexTensor"], [1, 2], np.uint64)
