"""Data movement, written from the DirectML pages: the gather family (GATHER, GATHER_ELEMENTS,
GATHER_ND, GATHER_ND1), the slice family (SLICE, SLICE1, SLICE_GRAD), PADDING and PADDING1,
TILE, JOIN, SPLIT, SPACE_TO_DEPTH/DEPTH_TO_SPACE and their *1 forms, ONE_HOT and
REVERSE_SUBSEQUENCES.

Each operator is a function of its desc (`Fields`) and its logical input arrays, returning
its outputs by field name. Values are moved, never converted, so every bit pattern (-0, NaN
payloads) arrives as it left. Where a page leaves a result undefined the reference makes a
plain choice, listed per operator in `UNDEFINED_NOTES`: an index outside its dimension reads
0 (gathers) or writes nothing (SLICE_GRAD). A desc whose tensors cannot hold what the page's
formula gives raises InvalidOperator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidOperator
from .fields import Fields, Inputs, Operator, Outputs, float_parameter, right_aligned
from .tensors import WriteLog, position

__all__ = ["DATA_MOVEMENT", "FLOAT_FIELD_NOTE", "UNDEFINED_NOTES"]


# ---- shapes --------------------------------------------------------------------------------


def trailing(array: np.ndarray, count: int, f: Fields, field: str, count_field: str) -> np.ndarray:
    """The `count` meaningful trailing dimensions of a tensor ("after ignoring any irrelevant
    leading ones")."""
    if not 0 <= count <= array.ndim or any(s != 1 for s in array.shape[: array.ndim - count]):
        raise InvalidOperator(
            f"{count_field} in {f.spec.name} is {count}: {field}.Sizes {list(array.shape)} must "
            f"have only 1s before its last {count} dimensions"
        )
    return array.reshape(array.shape[array.ndim - count :])


def _take(data: np.ndarray, sources: Sequence[np.ndarray], fill: Any) -> np.ndarray:
    """output[c] = data[sources[0][c0], sources[1][c1], ...]: each output axis reads the input
    at its own source indices; an index outside its dimension (or -1) gives `fill` instead."""
    inside = [(s >= 0) & (s < n) for s, n in zip(sources, data.shape, strict=True)]
    clipped = [np.where(ok, s, 0) for s, ok in zip(sources, inside, strict=True)]
    result = np.full(tuple(len(s) for s in sources), fill, dtype=data.dtype)
    if data.size == 0:
        return result
    everywhere = np.ones(result.shape, dtype=bool)
    for axis, ok in enumerate(inside):
        everywhere &= ok.reshape([-1 if a == axis else 1 for a in range(result.ndim)])
    result[everywhere] = data[np.ix_(*clipped)][everywhere]
    return result


def _values(x: Inputs, field: str) -> np.ndarray:
    if field not in x:
        raise ValueError(f"the inputs have no {field}")
    return np.asarray(x[field])


# ---- the gather family ---------------------------------------------------------------------


def gather(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """GATHER: output[...] = input[..., indices[...], ...]; OutputTensor.Sizes are
    {InputTensor.Sizes[0..Axis], the IndexDimensions trailing IndicesTensor.Sizes,
    InputTensor.Sizes[Axis+1..]}, right-aligned."""
    data = _values(x, "InputTensor")
    axis, k = f.axis(data.ndim), f.integer("IndexDimensions")
    indices = trailing(_values(x, "IndicesTensor"), k, f, "IndicesTensor", "IndexDimensions")
    shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    output = np.zeros(shape, dtype=data.dtype)
    for c in np.ndindex(*shape):
        i = position(indices[c[axis : axis + k]], data.shape[axis])
        if i is not None:  # else undefined ("incorrect outputs"): reads 0
            output[c] = data[(*c[:axis], i, *c[axis + k :])]
    return {"OutputTensor": right_aligned(output, f.sizes("OutputTensor"), f, "OutputTensor")}


def gather_elements(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """GATHER_ELEMENTS: output[i, j, k, ...] = input[i, index[i, j, k, ...], k, ...] (axis 1)."""
    data, indices = _values(x, "InputTensor"), _values(x, "IndicesTensor")
    axis = f.axis(data.ndim)
    output = np.zeros(indices.shape, dtype=data.dtype)
    for c in np.ndindex(*indices.shape):
        i = position(indices[c], data.shape[axis])
        source = (*c[:axis], i, *c[axis + 1 :])
        if i is not None and all(s < n for s, n in zip(source, data.shape, strict=True)):
            output[c] = data[source]
    return {"OutputTensor": right_aligned(output, f.sizes("OutputTensor"), f, "OutputTensor")}


def _gather_nd(
    input: np.ndarray,
    indices: np.ndarray,
    input_dimension_count: int,
    indices_dimension_count: int,
    output_sizes: Sequence[int],
) -> np.ndarray:
    data = input.reshape(input.shape[input.ndim - input_dimension_count :])
    tuples: np.ndarray = indices.reshape(
        tuple(indices.shape[indices.ndim - indices_dimension_count :])
    )
    q = tuples.shape[-1]
    gathered = np.zeros(tuples.shape[:-1] + data.shape[q:], dtype=input.dtype)
    for tuple_position in np.ndindex(*tuples.shape[:-1]):
        coordinates = [
            position(i, data.shape[axis]) for axis, i in enumerate(tuples[tuple_position])
        ]
        if None in coordinates:
            continue  # outside the input: undefined; the reference reads zero
        gathered[tuple_position] = data[tuple(int(c) for c in coordinates if c is not None)]
    return gathered.reshape(tuple(output_sizes))


def gather_nd(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """GATHER_ND: output[...] = input[indices[...]] over the meaningful trailing dimensions."""
    output = _gather_nd(
        np.asarray(x["InputTensor"]),
        np.asarray(x["IndicesTensor"]),
        f.desc["InputDimensionCount"],
        f.desc["IndicesDimensionCount"],
        f.sizes("OutputTensor"),
    )
    return {"OutputTensor": output}


def gather_nd1(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """GATHER_ND1: output[batch, ...] = input[batch, indices[batch, ...], ...]. The batch
    dimensions are the first BatchDimensionCount of each tensor's meaningful dimensions (the
    page: IndicesTensor.Sizes {1,3,4,5,6,7} with IndicesDimensionCount 5 and
    BatchDimensionCount 2 has batches {3,4}); each index tuple addresses the input dimensions
    after the batch ones."""
    input_count, index_count = f.integer("InputDimensionCount"), f.integer("IndicesDimensionCount")
    data = trailing(_values(x, "InputTensor"), input_count, f, "InputTensor", "InputDimensionCount")
    tuples = trailing(
        _values(x, "IndicesTensor"), index_count, f, "IndicesTensor", "IndicesDimensionCount"
    )
    batch = f.integer("BatchDimensionCount")
    width = tuples.shape[-1] if tuples.ndim else 0
    if tuples.ndim <= batch or data.shape[:batch] != tuples.shape[:batch]:
        raise InvalidOperator(
            f"GATHER_ND1's {batch} batch dimensions must match in InputTensor "
            f"{list(data.shape)} and IndicesTensor {list(tuples.shape)} (meaningful sizes)"
        )
    if batch + width > data.ndim:
        raise InvalidOperator(
            f"GATHER_ND1's index tuples hold {width} coordinates; the input has "
            f"{data.ndim - batch} dimensions after its {batch} batch dimensions"
        )
    shape = tuples.shape[:-1] + data.shape[batch + width :]
    output = np.zeros(shape, dtype=data.dtype)
    for t in np.ndindex(*tuples.shape[:-1]):
        coordinates = [
            position(v, data.shape[batch + j]) for j, v in enumerate(tuples[t].reshape(-1))
        ]
        if None not in coordinates:  # else outside the input: reads 0
            output[t] = data[t[:batch] + tuple(int(c) for c in coordinates if c is not None)]
    return {"OutputTensor": right_aligned(output, f.sizes("OutputTensor"), f, "OutputTensor")}


# ---- the slice family ----------------------------------------------------------------------


def _window_starts(f: Fields, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """SLICE1's CopyStart and InputWindowStrides: "if InputWindowStrides[i] < 0:
    CopyStart[i] += InputWindowSizes[i] - 1"."""
    offsets = f.integers("InputWindowOffsets", rank)
    sizes = f.integers("InputWindowSizes", rank)
    strides = f.integers("InputWindowStrides", rank)
    starts = tuple(
        o + (s - 1 if stride < 0 else 0)
        for o, s, stride in zip(offsets, sizes, strides, strict=True)
    )
    return starts, strides


def _reads(starts: Sequence[int], strides: Sequence[int], sizes: Sequence[int]) -> list[np.ndarray]:
    """Per axis, the input index output coordinate c reads: start + stride * c."""
    return [
        start + stride * np.arange(n, dtype=np.int64)
        for start, stride, n in zip(starts, strides, sizes, strict=True)
    ]


def slice_(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """SLICE: OutputTensor[OutputCoordinates] = InputTensor[Offsets + Strides *
    OutputCoordinates]. Reads outside the input ("not permitted") give 0."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    starts, strides = f.integers("Offsets", data.ndim), f.integers("Strides", data.ndim)
    if len(sizes) != data.ndim:
        raise InvalidOperator("SLICE's InputTensor and OutputTensor must have one DimensionCount")
    return {"OutputTensor": _take(data, _reads(starts, strides, sizes), 0)}


def slice1(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """SLICE1: OutputTensor[OutputCoordinates] = InputTensor[CopyStart + InputWindowStrides *
    OutputCoordinates], CopyStart at the window's end in a dimension of negative stride. The
    pseudocode is followed as written: an output larger than the window reads on past it,
    and a read outside the input gives 0."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    if len(sizes) != data.ndim:
        raise InvalidOperator("SLICE1's InputTensor and OutputTensor must have one DimensionCount")
    starts, strides = _window_starts(f, data.ndim)
    return {"OutputTensor": _take(data, _reads(starts, strides, sizes), 0)}


def slice_grad(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """SLICE_GRAD: "The sliced elements are propagated to the output, and all other elements
    are set to 0": OutputGradientTensor[CopyStart + InputWindowStrides * c] =
    InputGradientTensor[c], zeros elsewhere. A write outside the output is dropped; with a
    zero stride (which the page forbids) several writes reach one element: the last stays,
    and every value written there is recorded."""
    gradient = _values(x, "InputGradientTensor")
    sizes, dtype = f.sizes("OutputGradientTensor"), f.dtype("OutputGradientTensor")
    if len(sizes) != gradient.ndim:
        raise InvalidOperator(
            "SLICE_GRAD's InputGradientTensor and OutputGradientTensor must have one DimensionCount"
        )
    starts, strides = _window_starts(f, gradient.ndim)
    output = np.zeros(sizes, dtype=dtype)
    cells, values = [], []
    for c in np.ndindex(*gradient.shape):
        target = tuple(s + stride * i for s, stride, i in zip(starts, strides, c, strict=True))
        if all(0 <= t < n for t, n in zip(target, sizes, strict=True)):
            output[target] = gradient[c]
            cells.append(int(np.ravel_multi_index(target, sizes)))
            values.append(gradient[c])
    log.setdefault("OutputGradientTensor", []).append(
        (np.array(cells, dtype=np.int64), np.array(values, dtype=gradient.dtype))
    )
    return {"OutputGradientTensor": output}


# ---- padding and tiling --------------------------------------------------------------------


def _padding_source(j: int, n: int, mode: str) -> int:
    """The input index that padded position j (relative to the input's start) reads along an
    axis of n elements; -1 for PaddingValue. REFLECTION folds at the edges without repeating
    them (period 2(n - 1)), SYMMETRIC repeats them (period 2n); "we can mirror new padding
    regions periodically by folding them over previous padding regions" (Examples 3 and 4).
    WRAP, which only the feature-level history names (6_4), repeats the input (period n)."""
    if 0 <= j < n:
        return j
    if mode == "CONSTANT" or n == 0:
        return -1
    if mode == "EDGE":
        return 0 if j < 0 else n - 1
    if mode == "REFLECTION":
        if n == 1:
            return 0
        folded = j % (2 * (n - 1))
        return folded if folded < n else 2 * (n - 1) - folded
    if mode == "SYMMETRIC":
        folded = j % (2 * n)
        return folded if folded < n else 2 * n - 1 - folded
    if mode == "WRAP":
        return j % n
    raise InvalidOperator(f"the reference has no padding mode {mode!r}")


def _padding(f: Fields, x: Inputs, value: Callable[[np.dtype[Any]], Any]) -> Outputs:
    """PADDING and PADDING1: OutputTensor.Sizes[i] = InputTensor.Sizes[i] + StartPadding[i] +
    EndPadding[i]; output element o reads input element o - StartPadding."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    mode = f.enum("PaddingMode")
    starts = f.integers("StartPadding", data.ndim)
    if len(sizes) != data.ndim:
        raise InvalidOperator(f"{f.spec.name}'s tensors must have one DimensionCount")
    sources = [
        np.array([_padding_source(o - s, n, mode) for o in range(size)], dtype=np.int64)
        for s, n, size in zip(starts, data.shape, sizes, strict=True)
    ]
    fill = value(data.dtype) if mode == "CONSTANT" else 0
    return {"OutputTensor": _take(data, sources, fill)}


def padding(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """PADDING: PaddingValue is a FLOAT ("might be truncated" for other types)."""
    return _padding(f, x, lambda dtype: float_parameter(f.float32("PaddingValue"), dtype))


def padding1(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """PADDING1: PaddingValue is a DML_SCALAR_UNION read as PaddingValueDataType."""
    return _padding(
        f, x, lambda dtype: np.asarray(f.scalar("PaddingValue", "PaddingValueDataType"), dtype)
    )


def tile(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """TILE: OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]; output element o reads
    input element o mod InputTensor.Sizes along each dimension."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    f.integers("Repeats", data.ndim)
    if len(sizes) != data.ndim:
        raise InvalidOperator("TILE's InputTensor and OutputTensor must have one DimensionCount")
    sources = [
        np.arange(size, dtype=np.int64) % max(n, 1)
        for n, size in zip(data.shape, sizes, strict=True)
    ]
    return {"OutputTensor": _take(data, sources, 0)}


# ---- join and split ------------------------------------------------------------------------


def join(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """JOIN: the inputs, in order, one after another along Axis."""
    parts = [np.asarray(a) for a in x.get("InputTensors", [])]
    sizes = f.sizes("OutputTensor")
    axis = f.axis(len(sizes))
    if not parts or any(p.ndim != len(sizes) for p in parts):
        raise InvalidOperator("JOIN needs InputTensors of OutputTensor's DimensionCount")
    expected = list(sizes)
    expected[axis] = sum(p.shape[axis] for p in parts)
    if any(p.shape[:axis] + p.shape[axis + 1 :] != sizes[:axis] + sizes[axis + 1 :] for p in parts):
        raise InvalidOperator(
            f"JOIN's inputs must have OutputTensor's sizes {list(sizes)} except along Axis "
            f"{axis}; got {[list(p.shape) for p in parts]}"
        )
    if tuple(expected) != sizes:
        raise InvalidOperator(
            f"JOIN's OutputTensor.Sizes[{axis}] must be the sum of the inputs' "
            f"({expected[axis]}); got {sizes[axis]}"
        )
    return {"OutputTensor": np.concatenate(parts, axis=axis).astype(f.dtype("OutputTensor"))}


def split(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """SPLIT: consecutive pieces of the input along Axis, in order."""
    data = _values(x, "InputTensor")
    axis, pieces = f.axis(data.ndim), f.array_sizes("OutputTensors")
    if not pieces or any(len(p) != data.ndim for p in pieces):
        raise InvalidOperator("SPLIT needs OutputTensors of InputTensor's DimensionCount")
    rest = data.shape[:axis] + data.shape[axis + 1 :]
    if (
        any(p[:axis] + p[axis + 1 :] != rest for p in pieces)
        or sum(p[axis] for p in pieces) != data.shape[axis]
    ):
        raise InvalidOperator(
            f"SPLIT's outputs must have InputTensor's sizes {list(data.shape)} except along "
            f"Axis {axis}, where they sum to its size; got {[list(p) for p in pieces]}"
        )
    outputs, start = [], 0
    for piece, dtype in zip(pieces, f.array_dtypes("OutputTensors"), strict=True):
        window = [slice(None)] * data.ndim
        window[axis] = slice(start, start + piece[axis])
        outputs.append(data[tuple(window)].astype(dtype))
        start += piece[axis]
    return {"OutputTensors": outputs}


# ---- space and depth -----------------------------------------------------------------------


def _depth_channel(order: str, c: int, bh: int, bw: int, channels: int, block: int) -> int:
    """The depth tensor's channel holding space channel c's block element (bh, bw), by
    DML_DEPTH_SPACE_ORDER's layouts (dimensions in parentheses flattened together):
    DEPTH_COLUMN_ROW: [Batch, (BlockHeight, BlockWidth, Channels), Height, Width];
    COLUMN_ROW_DEPTH: [Batch, (Channels, BlockHeight, BlockWidth), Height, Width].
    The space version is [Batch, Channels, (Height, BlockHeight), (Width, BlockWidth)]."""
    if order == "DEPTH_COLUMN_ROW":
        return (bh * block + bw) * channels + c
    return (c * block + bh) * block + bw


def _space_depth_pairs(
    space: Sequence[int], depth: Sequence[int], block: int, order: str, f: Fields
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each space coordinate with the depth coordinate holding the same element."""
    if block < 1 or len(space) != 4 or len(depth) != 4:
        raise InvalidOperator(f"{f.spec.name} needs 4-D tensors and a BlockSize of at least 1")
    n, c, h, w = space
    if tuple(depth) != (n, c * block * block, h // block, w // block) or h % block or w % block:
        raise InvalidOperator(
            f"{f.spec.name}: a space tensor of {list(space)} with BlockSize {block} has a depth "
            f"tensor of {[n, c * block * block, h / block, w / block]}; got {list(depth)}"
        )
    for coordinate in np.ndindex(*space):
        batch, channel, y, x = coordinate
        (row, bh), (column, bw) = divmod(y, block), divmod(x, block)
        yield coordinate, (batch, _depth_channel(order, channel, bh, bw, c, block), row, column)


def _order(f: Fields) -> str:
    """The *1 operators' Order; the original operators equal DEPTH_COLUMN_ROW (the *1 pages'
    remarks)."""
    return f.enum("Order") if f.has_field("Order") else "DEPTH_COLUMN_ROW"


def space_to_depth(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """SPACE_TO_DEPTH(1): "values from the height and width dimensions are moved to the depth
    dimension". The OutputTensor's dimensions come from the layouts and the pages' examples
    ({1,2,4,6} -> {1,8,2,3}); the OutputTensor field's own formula is DEPTH_TO_SPACE's."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    output = np.zeros(sizes, dtype=f.dtype("OutputTensor"))
    for space, depth in _space_depth_pairs(data.shape, sizes, f.integer("BlockSize"), _order(f), f):
        output[depth] = data[space]
    return {"OutputTensor": output}


def depth_to_space(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """DEPTH_TO_SPACE(1): "values from the depth dimension are moved in spatial blocks to the
    height and width dimensions"."""
    data, sizes = _values(x, "InputTensor"), f.sizes("OutputTensor")
    output = np.zeros(sizes, dtype=f.dtype("OutputTensor"))
    for space, depth in _space_depth_pairs(sizes, data.shape, f.integer("BlockSize"), _order(f), f):
        output[space] = data[depth]
    return {"OutputTensor": output}


# ---- sequences along an axis ---------------------------------------------------------------


def _collapsed(coordinate: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """The coordinate of a sequence's entry in a tensor whose Axis dimension has size 1."""
    return (*coordinate[:axis], 0, *coordinate[axis + 1 :])


def _one_per_sequence(
    array: np.ndarray, sizes: Sequence[int], axis: int, f: Fields, field: str
) -> None:
    expected = list(sizes)
    expected[axis] = 1
    if list(array.shape) != expected:
        raise InvalidOperator(
            f"{field}.Sizes in {f.spec.name} must be {expected} (1 along Axis {axis}); "
            f"got {list(array.shape)}"
        )


def one_hot(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """ONE_HOT: along Axis, OnValue where the position equals the sequence's index, else
    OffValue. "The 0th element of [ValuesTensor] is interpreted as the OffValue, and the 1st
    element along the fastest-changing dimension of size >1 is interpreted as the OnValue":
    elements 0 and 1 of the logical tensor, row-major. An index past the sequence ("exceeds
    the number of elements") or before its start (negative beyond -size) sets every element
    to OffValue; negative indices of a signed type count from the end."""
    indices, values = _values(x, "IndicesTensor"), _values(x, "ValuesTensor").reshape(-1)
    sizes, dtype = f.sizes("OutputTensor"), f.dtype("OutputTensor")
    axis = f.axis(len(sizes))
    _one_per_sequence(indices, sizes, axis, f, "IndicesTensor")
    if values.size < 2:
        raise InvalidOperator("ONE_HOT's ValuesTensor must hold at least two elements")
    off, on = values[:2].astype(dtype)
    output = np.empty(sizes, dtype=dtype)
    for c in np.ndindex(*sizes):
        hot = position(indices[_collapsed(c, axis)], sizes[axis])
        output[c] = on if hot == c[axis] else off
    return {"OutputTensor": output}


def reverse_subsequences(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """REVERSE_SUBSEQUENCES: along Axis, the first SequenceLengths elements of each sequence
    reversed, the rest copied; "If the length of a subsequence exceeds the maximum number of
    elements along that axis, then this operator behaves as if the value were clamped to the
    maximum"."""
    data, lengths = _values(x, "InputTensor"), _values(x, "SequenceLengthsTensor")
    axis = f.axis(data.ndim)
    _one_per_sequence(lengths, data.shape, axis, f, "SequenceLengthsTensor")
    output = np.empty(data.shape, dtype=f.dtype("OutputTensor"))
    for c in np.ndindex(*data.shape):
        length = min(max(int(lengths[_collapsed(c, axis)]), 0), data.shape[axis])
        j = c[axis]
        source = length - 1 - j if j < length else j
        output[c] = data[(*c[:axis], source, *c[axis + 1 :])]
    return {"OutputTensor": output}


# ---- generators ----------------------------------------------------------------------------


# ---- the table -----------------------------------------------------------------------------

DATA_MOVEMENT: dict[str, Operator] = {
    "GATHER": gather,
    "GATHER_ELEMENTS": gather_elements,
    "GATHER_ND": gather_nd,
    "GATHER_ND1": gather_nd1,
    "SLICE": slice_,
    "SLICE1": slice1,
    "SLICE_GRAD": slice_grad,
    "PADDING": padding,
    "PADDING1": padding1,
    "TILE": tile,
    "JOIN": join,
    "SPLIT": split,
    "SPACE_TO_DEPTH": space_to_depth,
    "SPACE_TO_DEPTH1": space_to_depth,
    "DEPTH_TO_SPACE": depth_to_space,
    "DEPTH_TO_SPACE1": depth_to_space,
    "ONE_HOT": one_hot,
    "REVERSE_SUBSEQUENCES": reverse_subsequences,
}

_OUT_OF_RANGE_READS = (
    "An index outside its dimension: the page calls the result undefined ('incorrect "
    "outputs'); the reference reads 0 there."
)
FLOAT_FIELD_NOTE = (
    "A FLOAT value written into an integer tensor: the page says only that it 'might be "
    "truncated (10.6 will become 10)'; the reference goes toward zero and saturates out-of-"
    "range values (NaN -> 0)."
)

UNDEFINED_NOTES: dict[str, str] = {
    "GATHER": _OUT_OF_RANGE_READS,
    "GATHER_ELEMENTS": _OUT_OF_RANGE_READS,
    "GATHER_ND": _OUT_OF_RANGE_READS + " (the whole sub-block the tuple names)",
    "GATHER_ND1": _OUT_OF_RANGE_READS + " (the whole sub-block the tuple names)",
    "SLICE": "Reads outside the input are 'not permitted'; the reference reads 0 there.",
    "SLICE1": "Reads outside the input are 'not permitted'; the reference reads 0 there. An "
    "output larger than MaxCopiedElements reads on past the window, as the pseudocode says.",
    "SLICE_GRAD": "Writes outside the output are dropped. A zero stride (forbidden) makes "
    "several writes reach one element: any of them is accepted.",
    "PADDING": FLOAT_FIELD_NOTE,
    "PADDING1": "DML_PADDING_MODE_WRAP (feature-level history, 6_4) is not described on the "
    "page; the reference repeats the input periodically (index mod size). Same for PADDING.",
    "ONE_HOT": "Indices below -size (signed types) are treated as past the sequence: all "
    "OffValue, as the page says of indices that exceed it.",
}
