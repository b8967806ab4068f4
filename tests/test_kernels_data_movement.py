"""The data-movement primitive, run as its specs' kernel sections say: every documented example,
and hand-derived cases for what the examples leave out (negative and out-of-range indices,
padding modes folding past the input, negative slice strides, 64-bit values above 2^53)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dmlspec.kernels import data_movement
from tests.kernel_cases import (
    CATALOG,
    assert_exact,
    example_ids,
    family,
    run,
    run_example,
    tensor,
)

FAMILY = family("data_movement")
BIG = 2**53 + 1  # not a FLOAT64: a kernel that converts 64-bit integers would lose it


def test_every_operator_names_a_function_of_the_table_and_every_function_is_named() -> None:
    named = {CATALOG.operator(name).checked_kernel.function for name in FAMILY}
    assert named == set(data_movement.FUNCTIONS)


@pytest.mark.parametrize(("name", "example_id"), example_ids(FAMILY))
def test_documented_examples(name: str, example_id: str) -> None:
    expected, actual = run_example(name, example_id)
    for field, value in expected.items():
        assert_exact(value, actual[field])


def _gather(data: np.ndarray, indices: np.ndarray, expected: list[Any]) -> None:
    out = np.array(expected, dtype=data.dtype)
    desc = {
        "InputTensor": tensor(data),
        "IndicesTensor": tensor(indices),
        "OutputTensor": tensor(out),
        "Axis": 0,
        "IndexDimensions": 1,
    }
    result = run("GATHER", desc, {"InputTensor": data, "IndicesTensor": indices})
    assert_exact(out, result["OutputTensor"])


def test_gather_counts_signed_indices_from_the_end_and_reads_zero_outside() -> None:
    data = np.array([BIG, -(2**62) - 3, 7, 2**63 - 1], np.int64)
    _gather(data, np.array([-1, 0, 4, -5, 2], np.int64), [2**63 - 1, BIG, 0, 0, 7])
    # Unsigned indices never count from the end: 2^64 - 1 is out of range, not -1.
    _gather(data, np.array([2**64 - 1, 1, 3], np.uint64), [0, -(2**62) - 3, 2**63 - 1])


def test_gather_elements_with_negative_and_out_of_range_indices() -> None:
    data = np.array([[10, 11, 12], [20, 21, 22]], np.uint8)
    indices = np.array([[-1, 3, 0], [-4, 1, -3]], np.int32)
    desc = {
        "InputTensor": tensor(data),
        "IndicesTensor": tensor(indices),
        "OutputTensor": tensor(data),
        "Axis": 1,
    }
    result = run("GATHER_ELEMENTS", desc, {"InputTensor": data, "IndicesTensor": indices})
    assert_exact(np.array([[12, 0, 10], [0, 21, 20]], np.uint8), result["OutputTensor"])


def test_gather_nd1_batches_and_an_out_of_range_tuple() -> None:
    data = np.array([[[0.5, 1.5], [2.5, 3.5]], [[4.5, 5.5], [6.5, 7.5]]], np.float64)
    indices = np.array([[[1, 0]], [[2, 0]]], np.uint32)  # batch 1's tuple is out of range
    out = np.array([[[2.5], [0.0]]], np.float64)
    desc = {
        "InputTensor": tensor(data),
        "IndicesTensor": tensor(indices),
        "OutputTensor": tensor(out),
        "InputDimensionCount": 3,
        "IndicesDimensionCount": 3,
        "BatchDimensionCount": 1,
    }
    result = run("GATHER_ND1", desc, {"InputTensor": data, "IndicesTensor": indices})
    assert_exact(out, result["OutputTensor"])


def test_slice1_negative_strides_start_at_the_end_of_the_window() -> None:
    data = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    out = data[::-1, ::-2, 1:4]  # CopyStart (1, 2, 1), strides (-1, -2, 1)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "DimensionCount": 3,
        "InputWindowOffsets": [0, 0, 1],
        "InputWindowSizes": [2, 3, 3],
        "InputWindowStrides": [-1, -2, 1],
    }
    assert_exact(out, run("SLICE1", desc, {"InputTensor": data})["OutputTensor"])


def test_slice_past_the_input_reads_zero() -> None:
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int64) * BIG
    out = np.array([[4 * BIG, 0], [8 * BIG, 0]], np.int64)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "DimensionCount": 2,
        "Offsets": [0, 3],
        "Sizes": [2, 2],
        "Strides": [1, 1],
    }
    assert_exact(out, run("SLICE", desc, {"InputTensor": data})["OutputTensor"])


@pytest.mark.parametrize(
    ("offsets", "window", "strides", "gradient", "expected"),
    [
        # The page's picture: [[a, c], [i, k]] back to [[a, 0, c, 0], 0, [i, 0, k, 0], 0].
        (
            [0, 0],
            [4, 4],
            [2, 2],
            [[1, 3], [9, 11]],
            [[1, 0, 3, 0], [0, 0, 0, 0], [9, 0, 11, 0], [0, 0, 0, 0]],
        ),
        # A negative stride starts at the window's end: rows 2 then 0.
        (
            [0, 1],
            [3, 2],
            [-2, 1],
            [[1, 2], [3, 4]],
            [[0, 3, 4, 0], [0, 0, 0, 0], [0, 1, 2, 0], [0, 0, 0, 0]],
        ),
    ],
)
def test_slice_grad_scatters_back_where_slice1_read(
    offsets: list[int],
    window: list[int],
    strides: list[int],
    gradient: list[list[int]],
    expected: list[list[int]],
) -> None:
    grad = np.array(gradient, np.float32)
    out = np.array(expected, np.float32)
    desc = {
        "InputGradientTensor": tensor(grad),
        "OutputGradientTensor": tensor(out),
        "DimensionCount": 2,
        "InputWindowOffsets": offsets,
        "InputWindowSizes": window,
        "InputWindowStrides": strides,
    }
    result = run("SLICE_GRAD", desc, {"InputGradientTensor": grad})
    assert_exact(out, result["OutputGradientTensor"])


def test_slice_grad_drops_writes_past_the_output() -> None:
    grad = np.array([[5, 6, 7]], np.int8)
    out = np.array([[0, 0, 0, 5]], np.int8)
    desc = {
        "InputGradientTensor": tensor(grad),
        "OutputGradientTensor": tensor(out),
        "DimensionCount": 2,
        "InputWindowOffsets": [0, 3],
        "InputWindowSizes": [1, 3],
        "InputWindowStrides": [1, 1],
    }
    result = run("SLICE_GRAD", desc, {"InputGradientTensor": grad})
    assert_exact(out, result["OutputGradientTensor"])


# Modes folding padding regions over earlier ones ("StartPadding[i] >= InputTensor.Sizes[i] is
# valid"): REFLECTION is a triangle wave without repeated edges, SYMMETRIC repeats them.
PADDINGS = [
    ("REFLECTION", 5, 5, [2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2]),
    ("SYMMETRIC", 4, 4, [3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1]),
    ("EDGE", 2, 1, [1, 1, 1, 2, 3, 3]),
]


@pytest.mark.parametrize(("mode", "start", "end", "expected"), PADDINGS)
@pytest.mark.parametrize("name", ["PADDING", "PADDING1"])
def test_padding_modes_fold_past_the_input(
    name: str, mode: str, start: int, end: int, expected: list[int]
) -> None:
    data = np.array([1, 2, 3], np.int32)
    out = np.array(expected, np.int32)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "PaddingMode": f"DML_PADDING_MODE_{mode}",
        "PaddingValue": 0,
        "DimensionCount": 1,
        "StartPadding": [start],
        "EndPadding": [end],
    }
    if name == "PADDING1":
        desc["PaddingValueDataType"] = "INT32"
    assert_exact(out, run(name, desc, {"InputTensor": data})["OutputTensor"])


def test_reflection_of_a_single_element_repeats_it() -> None:
    data = np.array([[7], [8]], np.uint16)
    out = np.array([[7, 7, 7], [8, 8, 8]], np.uint16)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "PaddingMode": "REFLECTION",
        "PaddingValue": 0,
        "DimensionCount": 2,
        "StartPadding": [0, 1],
        "EndPadding": [0, 1],
    }
    assert_exact(out, run("PADDING", desc, {"InputTensor": data})["OutputTensor"])


@pytest.mark.parametrize(
    ("name", "value", "value_type", "data_type", "filled"),
    [
        ("PADDING", 10.6, None, "INT32", 10),  # "10.6 will become 10"
        ("PADDING", -10.6, None, "INT32", -10),
        ("PADDING1", BIG * 2**9, "INT64", "INT64", BIG * 2**9),
        ("PADDING1", 2**64 - 1, "UINT64", "UINT64", 2**64 - 1),
        ("PADDING1", 0.1, "FLOAT16", "FLOAT16", np.float16(0.1)),
    ],
)
def test_constant_padding_value_in_the_tensor_type(
    name: str, value: float, value_type: str | None, data_type: str, filled: Any
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    data = np.array([[1, 2]], dtype)
    out = np.array([[filled, 1, 2, filled, filled]], dtype)
    desc: dict[str, Any] = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "PaddingMode": "CONSTANT",
        "PaddingValue": value,
        "DimensionCount": 2,
        "StartPadding": [0, 1],
        "EndPadding": [0, 2],
    }
    if value_type is not None:
        desc["PaddingValueDataType"] = value_type
    assert_exact(out, run(name, desc, {"InputTensor": data})["OutputTensor"])


def test_one_hot_with_64_bit_values_and_an_unsigned_index_past_the_end() -> None:
    indices = np.array([[2**64 - 1], [1]], np.uint64)
    values = np.array([-(2**62) - 7, BIG], np.int64)
    off, on = values
    out = np.array([[off, off, off], [off, on, off]], np.int64)
    desc = {
        "IndicesTensor": tensor(indices),
        "ValuesTensor": tensor(values),
        "OutputTensor": tensor(out),
        "Axis": 1,
    }
    result = run("ONE_HOT", desc, {"IndicesTensor": indices, "ValuesTensor": values})
    assert_exact(out, result["OutputTensor"])


# The page's two examples (the spec holds none yet), typed from
# ns-directml-dml_reverse_subsequences_desc.md; lengths 0 and 1 change nothing, and a length
# past the axis counts as the whole axis.
REVERSALS = [
    (3, [[2], [4], [3]], [[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]]),
    (2, [[2, 3, 1, 0]], [[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]),
    (3, [[2**64 - 1], [0], [1]], [[4, 3, 2, 1], [5, 6, 7, 8], [9, 10, 11, 12]]),
]


@pytest.mark.parametrize(("axis", "lengths", "expected"), REVERSALS)
def test_reverse_subsequences(axis: int, lengths: list[list[int]], expected: Any) -> None:
    data = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    sequence_lengths = np.array(lengths, np.uint64).reshape(
        [1 if d == axis else s for d, s in enumerate(data.shape)]
    )
    out = np.array(expected, np.float32).reshape(data.shape)
    desc = {
        "InputTensor": tensor(data),
        "SequenceLengthsTensor": tensor(sequence_lengths),
        "OutputTensor": tensor(out),
        "Axis": axis,
    }
    inputs = {"InputTensor": data, "SequenceLengthsTensor": sequence_lengths}
    assert_exact(out, run("REVERSE_SUBSEQUENCES", desc, inputs)["OutputTensor"])


def test_tile_repeats_each_dimension() -> None:
    # The page's example (the spec holds none): {1, 1, 2, 3} tiled {1, 1, 3, 3}.
    data = (np.arange(1, 7, dtype=np.uint64) + np.uint64(2**63)).reshape(1, 1, 2, 3)
    out = np.tile(data, (1, 1, 3, 3))
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "RepeatsCount": 4,
        "Repeats": [1, 1, 3, 3],
    }
    assert_exact(out, run("TILE", desc, {"InputTensor": data})["OutputTensor"])


def test_split_then_join_gives_the_input_back() -> None:
    data = (np.arange(12, dtype=np.int64) * BIG).reshape(2, 6)
    pieces = [data[:, :1], data[:, 1:4], data[:, 4:]]
    split = {
        "InputTensor": tensor(data),
        "OutputCount": 3,
        "OutputTensors": [tensor(p) for p in pieces],
        "Axis": 1,
    }
    outputs = run("SPLIT", split, {"InputTensor": data})["OutputTensors"]
    assert_exact(pieces, outputs)
    join = {
        "InputCount": 3,
        "InputTensors": [tensor(p) for p in pieces],
        "OutputTensor": tensor(data),
        "Axis": 1,
    }
    assert_exact(data, run("JOIN", join, {"InputTensors": outputs})["OutputTensor"])


def test_unknown_function_names_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"no data-movement function 'GATHER2' \(known: \['DEPTH_TO_SPACE'"
    ):
        data_movement.data_movement(np.zeros(1), function="GATHER2")
