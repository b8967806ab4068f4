"""The NumPy reference's data movement and generators against the pages: every documented
example the specs carry, the pages' examples the specs do not carry (transcribed here), and
cases derived by hand from the pages' sentences (quoted) for what the examples leave out.
Expected values are written out by hand, never computed by the code under test."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dmlspec import InvalidOperator
from dmlspec.reference.data_movement import DATA_MOVEMENT, UNDEFINED_NOTES

from .reference_cases import (
    CATALOG,
    assert_outputs_equal,
    bits,
    call,
    example_case,
    example_ids,
    tensor,
)

FAMILY = sorted(DATA_MOVEMENT)

# Page errata the specs do not (yet) record: (operator, example) -> what the page gets wrong.
UNRECORDED_ERRATA = {
    ("DIAGONAL_MATRIX1", "example_1"): (
        "'Default identity matrix' sets Value 7 and prints 1s on the diagonal; by the page's "
        "pseudocode ('useValue ... then Value') the diagonal holds Value"
    ),
}


@pytest.mark.parametrize(("name", "example_id"), example_ids(FAMILY))
def test_documented_examples(name: str, example_id: str) -> None:
    case = example_case(CATALOG.operator(name), example_id)
    assert case is not None
    operator = case.operator
    if (name, example_id) in UNRECORDED_ERRATA:
        # The printed output is what the page's pseudocode gives with Value = 1.
        operator = {**operator, "desc": {**operator["desc"], "Value": 1}}
    from dmlspec import reference

    assert_outputs_equal(reference.run(operator, case.inputs), case.expected)


def test_diagonal_matrix1_example_1_writes_its_value() -> None:
    case = example_case(CATALOG.operator("DIAGONAL_MATRIX1"), "example_1")
    assert case is not None and case.operator["desc"]["Value"] == 7
    from dmlspec import reference

    output = reference.run(case.operator, case.inputs)["OutputTensor"]
    assert output.tolist() == (case.expected["OutputTensor"] * 7).tolist()


def test_every_family_operator_has_a_documented_or_transcribed_example() -> None:
    with_examples = {name for name, _ in example_ids(FAMILY)}
    transcribed = {"TILE", "REVERSE_SUBSEQUENCES", "SLICE_GRAD", "VALUE_SCALE_2D"}
    assert set(FAMILY) <= with_examples | transcribed


def test_undefined_notes_name_family_operators() -> None:
    assert set(UNDEFINED_NOTES) <= set(DATA_MOVEMENT)


# ---- the gather family ---------------------------------------------------------------------


def gather(data: Any, indices: Any, index_type: str = "INT32", **fields: Any) -> list[Any]:
    data, indices = np.asarray(data), np.asarray(indices)
    desc = {
        "InputTensor": tensor("FLOAT32", data.shape),
        "IndicesTensor": tensor(index_type, indices.shape),
        "OutputTensor": tensor("FLOAT32", fields.pop("out")),
        **fields,
    }
    out = call("GATHER", desc, InputTensor=data, IndicesTensor=indices)
    return out["OutputTensor"].tolist()  # type: ignore[no-any-return]


def test_gather_negative_indices_count_from_the_end() -> None:
    # "Negative indices are interpreted as being relative to the end of the axis dimension.
    # For example, an index of -1 refers to the last element along that dimension."
    got = gather([11, 12, 13, 14], [-1, -4, 0], Axis=0, IndexDimensions=1, out=[3])
    assert got == [14, 11, 11]


def test_gather_out_of_range_reads_zero() -> None:
    # "Invalid indices will yield incorrect outputs, but no failure will occur".
    assert gather([11, 12], [2, -3, 1], Axis=0, IndexDimensions=1, out=[3]) == [0, 0, 12]
    unsigned = gather([11, 12], [0xFFFFFFFF, 1], "UINT32", Axis=0, IndexDimensions=1, out=[2])
    assert unsigned == [0, 12]  # unsigned values never count from the end


def test_gather_zero_index_dimensions_removes_the_axis() -> None:
    # OutputTensor.Sizes = {Input[0..Axis], Indices[Count - 0 .. Count], Input[Axis+1..]},
    # right-aligned: {2} in a 2-D output is {1, 2}.
    got = gather([[1, 2, 3], [4, 5, 6]], [[2]], Axis=1, IndexDimensions=0, out=[1, 2])
    assert got == [[3, 6]]


def test_gather_moves_bits_unchanged() -> None:
    values = np.array([-0.0, np.nan, -np.inf], dtype=np.float16)
    desc = {
        "InputTensor": tensor("FLOAT16", [3]),
        "IndicesTensor": tensor("UINT32", [3]),
        "OutputTensor": tensor("FLOAT16", [3]),
        "Axis": 0,
        "IndexDimensions": 1,
    }
    out = call("GATHER", desc, InputTensor=values, IndicesTensor=[2, 1, 0])["OutputTensor"]
    assert bits(out) == bits(values[::-1])


def test_gather_elements_negative_and_out_of_range_indices() -> None:
    desc = {
        "InputTensor": tensor("INT8", [2, 3]),
        "IndicesTensor": tensor("INT64", [2, 2]),
        "OutputTensor": tensor("INT8", [2, 2]),
        "Axis": 1,
    }
    out = call(
        "GATHER_ELEMENTS",
        desc,
        InputTensor=[[1, 2, 3], [4, 5, 6]],
        IndicesTensor=[[-1, 0], [3, -3]],
    )
    assert out["OutputTensor"].tolist() == [[3, 1], [0, 4]]


def test_gather_nd1_batches_and_invalid_tuples() -> None:
    # Batch 0: negative coordinates count from the end; a tuple outside reads a zero block.
    desc: dict[str, Any] = {
        "InputTensor": tensor("FLOAT32", [2, 2]),
        "IndicesTensor": tensor("INT32", [2, 1]),
        "OutputTensor": tensor("FLOAT32", [2, 2]),
        "InputDimensionCount": 2,
        "IndicesDimensionCount": 2,
        "BatchDimensionCount": 0,
    }
    out = call("GATHER_ND1", desc, InputTensor=[[0, 1], [2, 3]], IndicesTensor=[[-1], [2]])
    assert out["OutputTensor"].tolist() == [[2, 3], [0, 0]]
    # One batch dimension: output[batch] = input[batch, indices[batch, 0]].
    desc |= {
        "InputTensor": tensor("FLOAT32", [2, 3]),
        "OutputTensor": tensor("FLOAT32", [1, 2]),
        "BatchDimensionCount": 1,
    }
    out = call("GATHER_ND1", desc, InputTensor=[[1, 2, 3], [4, 5, 6]], IndicesTensor=[[2], [0]])
    assert out["OutputTensor"].tolist() == [[3, 4]]


# ---- the slice family ----------------------------------------------------------------------


def test_slice_reads_outside_the_input_as_zero() -> None:
    desc = {
        "InputTensor": tensor("INT32", [4]),
        "OutputTensor": tensor("INT32", [3]),
        "DimensionCount": 1,
        "Offsets": [2],
        "Sizes": [3],
        "Strides": [1],
    }
    assert call("SLICE", desc, InputTensor=[1, 2, 3, 4])["OutputTensor"].tolist() == [3, 4, 0]


@pytest.mark.parametrize(
    ("offset", "size", "stride", "expected"),
    [
        (1, 4, -1, [5, 4, 3, 2]),  # the window {2,3,4,5} from its end
        (1, 4, -2, [5, 3]),  # "copied starting at the end of the window"
        (0, 5, -3, [5, 2]),  # MaxCopiedElements = 1 + (5 - 1) / 3 = 2
        (2, 3, 2, [3, 5]),
    ],
)
def test_slice1_strides(offset: int, size: int, stride: int, expected: list[int]) -> None:
    desc = {
        "InputTensor": tensor("UINT16", [6]),
        "OutputTensor": tensor("UINT16", [len(expected)]),
        "DimensionCount": 1,
        "InputWindowOffsets": [offset],
        "InputWindowSizes": [size],
        "InputWindowStrides": [stride],
    }
    assert call("SLICE1", desc, InputTensor=[1, 2, 3, 4, 5, 6])["OutputTensor"].tolist() == expected


def slice_grad(strides: list[int]) -> list[Any]:
    desc = {
        "InputGradientTensor": tensor("FLOAT32", [2, 2]),
        "OutputGradientTensor": tensor("FLOAT32", [4, 4]),
        "DimensionCount": 2,
        "InputWindowOffsets": [0, 0],
        "InputWindowSizes": [4, 4],
        "InputWindowStrides": strides,
    }
    out = call("SLICE_GRAD", desc, InputGradientTensor=[[1, 2], [3, 4]])
    return out["OutputGradientTensor"].tolist()  # type: ignore[no-any-return]


def test_slice_grad_page_example() -> None:
    # The page: [[a, c], [i, k]] -> [[a, 0, c, 0], [0, 0, 0, 0], [i, 0, k, 0], [0, 0, 0, 0]].
    assert slice_grad([2, 2]) == [[1, 0, 2, 0], [0, 0, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0]]


def test_slice_grad_negative_stride_flips_the_window() -> None:
    # "Like DML_SLICE1_OPERATOR_DESC, negative strides flip the input window direction along
    # that axis": rows start at the window's end, 3, then 1.
    assert slice_grad([-2, 2]) == [[0, 0, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0], [1, 0, 2, 0]]


# ---- padding -------------------------------------------------------------------------------


def pad(mode: str, values: list[Any], start: int, end: int, **extra: Any) -> list[Any]:
    data_type = extra.pop("data_type", "FLOAT32")
    name = "PADDING1" if "PaddingValueDataType" in extra else "PADDING"
    desc = {
        "InputTensor": tensor(data_type, [len(values)]),
        "OutputTensor": tensor(data_type, [len(values) + start + end]),
        "PaddingMode": f"DML_PADDING_MODE_{mode}",
        "PaddingValue": extra.pop("PaddingValue", 0),
        "DimensionCount": 1,
        "StartPadding": [start],
        "EndPadding": [end],
        **extra,
    }
    return call(name, desc, InputTensor=values)["OutputTensor"].tolist()  # type: ignore[no-any-return]


def test_padding_modes_fold_periodically() -> None:
    # "Note that StartPadding[i] >= InputTensor.Sizes[i] ... is valid, which means that we can
    # mirror new padding regions periodically by folding them over previous padding regions."
    # REFLECTION, edges not mirrored: ... 3 2 1 2 3 2 1 2 3 ...
    assert pad("REFLECTION", [1, 2, 3], 5, 5) == [2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2]
    # SYMMETRIC, edges mirrored too: ... 3 2 1 1 2 3 3 2 1 ...
    assert pad("SYMMETRIC", [1, 2, 3], 5, 5) == [2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2]
    assert pad("EDGE", [1, 2, 3], 2, 3) == [1, 1, 1, 2, 3, 3, 3, 3]
    assert pad("CONSTANT", [1, 2, 3], 1, 2, PaddingValue=-2.5) == [-2.5, 1, 2, 3, -2.5, -2.5]
    assert pad("REFLECTION", [7], 2, 1) == [7, 7, 7, 7]  # one element folds onto itself
    assert pad("WRAP", [1, 2, 3], 2, 2) == [2, 3, 1, 2, 3, 1, 2]


def test_padding_value_into_integer_tensors() -> None:
    # PADDING: "the value might be truncated (for example, 10.6 will become 10)".
    assert pad("CONSTANT", [1], 1, 1, PaddingValue=10.6, data_type="INT8") == [10, 1, 10]
    assert pad("CONSTANT", [1], 1, 0, PaddingValue=-2.5, data_type="INT8") == [-2, 1]
    # Out of range: the page is silent; the reference saturates (UNDEFINED_NOTES).
    assert pad("CONSTANT", [1], 1, 0, PaddingValue=300.0, data_type="INT8") == [127, 1]


def test_padding1_value_is_a_scalar_union() -> None:
    # "with PaddingValueDataType determining how to interpret the field": an INT8 member
    # holds 300's low byte (44); UINT8 holds -1 as 255; FLOAT16 rounds.
    assert pad(
        "CONSTANT", [1], 1, 0, PaddingValue=300, PaddingValueDataType="INT8", data_type="INT8"
    ) == [44, 1]
    assert pad(
        "CONSTANT", [1], 0, 1, PaddingValue=-1, PaddingValueDataType="UINT8", data_type="UINT8"
    ) == [1, 255]
    assert pad(
        "CONSTANT", [1], 1, 0, PaddingValue=0.1, PaddingValueDataType="FLOAT16", data_type="FLOAT16"
    ) == [float(np.float16(0.1)), 1]


def test_padding_ignores_padding_value_outside_constant_mode() -> None:
    assert pad("EDGE", [4, 5], 1, 1, PaddingValue=9) == [4, 4, 5, 5]


# ---- tile, join, split ---------------------------------------------------------------------


def test_tile_page_example() -> None:
    # The page's example (its output is mislabelled InputTensor): Repeats {1, 1, 3, 3}.
    desc = {
        "InputTensor": tensor("FLOAT32", [1, 1, 2, 3]),
        "OutputTensor": tensor("FLOAT32", [1, 1, 6, 9]),
        "RepeatsCount": 4,
        "Repeats": [1, 1, 3, 3],
    }
    out = call("TILE", desc, InputTensor=[[[[1, 2, 3], [4, 5, 6]]]])["OutputTensor"]
    assert out.tolist() == [[[[1, 2, 3, 1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6, 4, 5, 6]] * 3]]


def test_join_and_split_are_inverses_on_integers() -> None:
    parts = [[[1], [2]], [[3, 4], [5, 6]]]
    desc: dict[str, Any] = {
        "InputCount": 2,
        "InputTensors": [tensor("INT64", [2, 1]), tensor("INT64", [2, 2])],
        "OutputTensor": tensor("INT64", [2, 3]),
        "Axis": 1,
    }
    joined = call("JOIN", desc, InputTensors=parts)["OutputTensor"]
    assert joined.tolist() == [[1, 3, 4], [2, 5, 6]]
    desc = {
        "InputTensor": tensor("INT64", [2, 3]),
        "OutputCount": 2,
        "OutputTensors": [tensor("INT64", [2, 1]), tensor("INT64", [2, 2])],
        "Axis": 1,
    }
    pieces = call("SPLIT", desc, InputTensor=[[1, 3, 4], [2, 5, 6]])["OutputTensors"]
    assert [p.tolist() for p in pieces] == parts


def test_join_rejects_sizes_its_inputs_cannot_fill() -> None:
    desc = {
        "InputCount": 1,
        "InputTensors": [tensor("INT8", [2, 1])],
        "OutputTensor": tensor("INT8", [2, 2]),
        "Axis": 1,
    }
    with pytest.raises(InvalidOperator, match="sum of the inputs"):
        call("JOIN", desc, InputTensors=[[[1], [2]]])


# ---- space and depth -----------------------------------------------------------------------

SPACE = [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]  # {1, 2, 2, 2}: two channels of one 2x2 block


@pytest.mark.parametrize(
    ("order", "depth"),
    [
        # [Batch, (BlockHeight, BlockWidth, Channels), H, W]: channel = (bh * 2 + bw) * 2 + c
        ("DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW", [1, 5, 2, 6, 3, 7, 4, 8]),
        # [Batch, (Channels, BlockHeight, BlockWidth), H, W]: channel = (c * 2 + bh) * 2 + bw
        ("DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH", [1, 2, 3, 4, 5, 6, 7, 8]),
    ],
)
def test_space_depth_orders(order: str, depth: list[int]) -> None:
    to_depth = {
        "InputTensor": tensor("UINT8", [1, 2, 2, 2]),
        "OutputTensor": tensor("UINT8", [1, 8, 1, 1]),
        "BlockSize": 2,
        "Order": order,
    }
    out = call("SPACE_TO_DEPTH1", to_depth, InputTensor=SPACE)["OutputTensor"]
    assert out.reshape(-1).tolist() == depth
    to_space = {
        "InputTensor": tensor("UINT8", [1, 8, 1, 1]),
        "OutputTensor": tensor("UINT8", [1, 2, 2, 2]),
        "BlockSize": 2,
        "Order": order,
    }
    back = call("DEPTH_TO_SPACE1", to_space, InputTensor=np.reshape(depth, [1, 8, 1, 1]))
    assert back["OutputTensor"].tolist() == SPACE


def test_space_to_depth_without_order_is_depth_column_row() -> None:
    # SPACE_TO_DEPTH1's remarks: with DEPTH_COLUMN_ROW it "is equivalent to"
    # DML_SPACE_TO_DEPTH_OPERATOR_DESC.
    desc = {
        "InputTensor": tensor("UINT8", [1, 2, 2, 2]),
        "OutputTensor": tensor("UINT8", [1, 8, 1, 1]),
        "BlockSize": 2,
    }
    out = call("SPACE_TO_DEPTH", desc, InputTensor=SPACE)["OutputTensor"]
    assert out.reshape(-1).tolist() == [1, 5, 2, 6, 3, 7, 4, 8]


# ---- one-hot and reversing -----------------------------------------------------------------


def test_one_hot_indices_before_the_sequence_set_every_element_off() -> None:
    # -5 in a sequence of 4: "relative to the end" gives -1, outside like an index that
    # "exceeds the number of elements": all OffValue. ValuesTensor {2, 1}: its fastest-changing
    # dimension of size > 1 is the first, so OnValue is element [1][0].
    desc = {
        "IndicesTensor": tensor("INT64", [1, 3]),
        "ValuesTensor": tensor("INT16", [2, 1]),
        "OutputTensor": tensor("INT16", [4, 3]),
        "Axis": 0,
    }
    out = call("ONE_HOT", desc, IndicesTensor=[[-5, -1, 1]], ValuesTensor=[[-7], [9]])
    assert out["OutputTensor"].tolist() == [[-7, -7, -7], [-7, -7, 9], [-7, -7, -7], [-7, 9, -7]]


def reverse(values: Any, lengths: Any, axis: int) -> list[Any]:
    values, lengths = np.asarray(values), np.asarray(lengths)
    desc = {
        "InputTensor": tensor("FLOAT32", values.shape),
        "SequenceLengthsTensor": tensor("UINT32", lengths.shape),
        "OutputTensor": tensor("FLOAT32", values.shape),
        "Axis": axis,
    }
    out = call("REVERSE_SUBSEQUENCES", desc, InputTensor=values, SequenceLengthsTensor=lengths)
    return out["OutputTensor"].tolist()  # type: ignore[no-any-return]


def test_reverse_subsequences_page_examples() -> None:
    data = [[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]]]
    assert reverse(data, [[[[2], [4], [3]]]], 3) == [
        [[[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]]]
    ]
    # "Notice that sequence lengths of 1 and 0 are effective nops"
    assert reverse(data, [[[[2, 3, 1, 0]]]], 2) == [[[[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]]]


def test_reverse_subsequences_clamps_long_lengths() -> None:
    # "behaves as if the value were clamped to the maximum"
    assert reverse([[1, 2, 3]], [[7]], 1) == [[3, 2, 1]]


# ---- generators ----------------------------------------------------------------------------


def test_diagonal_matrix_batches_and_truncates_its_float_value() -> None:
    # "Value ... might be truncated (for example, 10.6 will become 10)"; leading dimensions
    # are a batch of matrices.
    desc = {"OutputTensor": tensor("INT32", [2, 2, 3]), "Offset": 1, "Value": 10.6}
    out = call("DIAGONAL_MATRIX", desc)["OutputTensor"]
    assert out.tolist() == [[[0, 10, 0], [0, 0, 10]]] * 2


def test_diagonal_matrix1_reads_value_through_its_data_type() -> None:
    desc = {
        "OutputTensor": tensor("UINT8", [2, 3]),
        "ValueDataType": "UINT8",
        "Value": 300,  # the UINT8 member holds 300's low byte, 44
        "DiagonalFillBegin": -1,
        "DiagonalFillEnd": 1,
    }
    out = call("DIAGONAL_MATRIX1", desc)["OutputTensor"]
    assert out.tolist() == [[44, 0, 0], [44, 44, 0]]


@pytest.mark.parametrize(
    ("data_type", "value", "expected"),
    [("INT8", -1, -1), ("UINT16", -1, 65535), ("FLOAT16", 0.1, float(np.float16(0.1)))],
)
def test_fill_value_constant(data_type: str, value: Any, expected: Any) -> None:
    desc = {"OutputTensor": tensor(data_type, [2]), "ValueDataType": data_type, "Value": value}
    assert call("FILL_VALUE_CONSTANT", desc)["OutputTensor"].tolist() == [expected, expected]


def test_value_scale_2d_has_one_bias_per_channel() -> None:
    # "Output = Scale * Input + Bias", "a different bias for each channel".
    desc = {
        "InputTensor": tensor("FLOAT32", [1, 3, 1, 2]),
        "OutputTensor": tensor("FLOAT32", [1, 3, 1, 2]),
        "Scale": 2.0,
        "ChannelCount": 3,
        "Bias": [1.0, -1.0, 0.5],
    }
    out = call("VALUE_SCALE_2D", desc, InputTensor=[[[[1, 2]], [[3, 4]], [[-0.25, 0]]]])
    assert out["OutputTensor"].tolist() == [[[[3, 5]], [[5, 7]], [[0, 0.5]]]]
