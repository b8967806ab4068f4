"""Data movement for the onnxruntime backend: each operator a small ONNX graph built by an
entry of `OPERATORS` (operator name to builder, graph.Call in, graph values by output field
out).

How the graphs map DirectML onto ONNX:

- Right-aligned tensors: the meaningful (trailing) dimensions are reshaped out around the node
  where the page counts them (IndexDimensions, InputDimensionCount, a NONZERO coordinate's N);
  every result is reshaped to its output's Sizes.
- Indices are cast to int64. Signed index types count negative values from the end (the pages'
  rule from DML_FEATURE_LEVEL_3_0, the first level with signed index types); unsigned ones never
  do (a UINT64 past 2^63 stays out of range). An index outside its dimension reads 0 (the page
  calls the result undefined; onnxruntime would stop), so indices are made safe before the node
  and the cells they fed are zeroed after it.
- Types: data moved without being read travels in its own type where onnxruntime's kernel has
  it, else as its encoding widened to int64 (graph.carried), which is exact.
- Where ONNX's operator covers less than DirectML's, the graph writes the rest from ONNX
  operators: SLICE1's zero strides (Slice, then Expand), padding past what Pad's reflect allows
  and SYMMETRIC (one period of the mirrored tensor, tiled and sliced), SLICE_GRAD (ScatterND of
  the gradient into zeros), REVERSE_SUBSEQUENCES over any axis and rank (ReverseSequence on the
  axis moved first, the rest flattened into its batch), SPACE_TO_DEPTH's CRD order and types
  DepthToSpace lacks (ONNX's own reshape-transpose definition).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidOperator, Unsupported
from .graph import (
    Builder,
    Call,
    Graph,
    carried,
    float_held,
    held_like,
    meaningful_sizes,
    run_operator,
    union_held,
)

__all__ = ["OPERATORS", "run"]

INT64_MIN = -(2**63)

# The types onnxruntime's CPU kernels have, where a kernel lacks some (checked against
# onnxruntime 1.23; Gather*, Slice, Tile, Concat, Split, Transpose, Expand, ReverseSequence and
# ScatterND have every type).
PAD_TYPES = frozenset(
    {"uint8", "int8", "int32", "int64", "uint32", "uint64", "float16", "float32", "float64"}
)
DEPTH_SPACE_TYPES = frozenset({"uint8", "int8", "float16", "float32", "float64"})
ONE_HOT_VALUE_TYPES = frozenset({"int64", "float16", "float32"})


# ---- helpers -----------------------------------------------------------------------------


def _require(c: Call, holds: bool, rule: str) -> None:
    """A page rule the spec cannot encode yet, checked where breaking it would make the graph
    read or write outside a tensor."""
    if not holds:
        raise InvalidOperator(f"{c.kind}: {rule}")


def _positions(g: Graph, indices: str, bounds: str, signed: bool) -> tuple[str, str]:
    """Indices (any integer type) as int64 positions inside `bounds`, and where they were
    inside: negative values count from the end for signed types; outside positions become 0."""
    index = g.cast(indices, np.int64)
    zero = g.int64(0)
    if signed:
        index = g.where(g.compare("Less", index, zero), g.op("Add", index, bounds), index)
    valid = g.op(
        "And",
        g.compare("GreaterOrEqual", index, zero),
        g.compare("Less", index, bounds),
        dtype=np.bool_,
    )
    return g.where(valid, index, zero), valid


def _zero_where_invalid(g: Graph, valid: str, value: str, shape: Sequence[int]) -> str:
    """`value` with the cells an outside index fed set to 0 (`valid` reshaped to `shape`
    broadcasts over them)."""
    return g.where(g.reshape(valid, shape), value, g.scalar(0, value))


def _signed(c: Call, field: str) -> bool:
    return c.array(field).dtype.kind == "i"


# ---- gathers -----------------------------------------------------------------------------


def _gather(c: Call) -> dict[str, str]:
    g, axis = c.g, int(c.desc["Axis"])
    shape = list(c.array("InputTensor").shape)
    sizes = meaningful_sizes(
        c.array("IndicesTensor").shape,
        c.desc["IndexDimensions"],
        "IndicesTensor",
        "IndexDimensions",
    )
    indices = g.reshape(c.feed("IndicesTensor"), sizes)
    safe, valid = _positions(g, indices, g.int64(shape[axis]), _signed(c, "IndicesTensor"))
    gathered = g.op("Gather", c.feed("InputTensor"), safe, axis=axis)
    mask = [1] * axis + sizes + [1] * (len(shape) - axis - 1)
    return {"OutputTensor": _zero_where_invalid(g, valid, gathered, mask)}


def _gather_elements(c: Call) -> dict[str, str]:
    g, axis = c.g, int(c.desc["Axis"])
    bound = g.int64(c.array("InputTensor").shape[axis])
    safe, valid = _positions(g, c.feed("IndicesTensor"), bound, _signed(c, "IndicesTensor"))
    gathered = g.op("GatherElements", c.feed("InputTensor"), safe, axis=axis)
    return {"OutputTensor": _zero_where_invalid(g, valid, gathered, c.array("IndicesTensor").shape)}


def _gather_nd(c: Call) -> dict[str, str]:
    """GATHER_ND and GATHER_ND1 (BatchDimensionCount leading dimensions shared by both)."""
    g = c.g
    data_sizes = meaningful_sizes(
        c.array("InputTensor").shape,
        c.desc.get("InputDimensionCount", c.array("InputTensor").ndim),
        "InputTensor",
        "InputDimensionCount",
    )
    index_sizes = meaningful_sizes(
        c.array("IndicesTensor").shape,
        c.desc.get("IndicesDimensionCount", c.array("IndicesTensor").ndim),
        "IndicesTensor",
        "IndicesDimensionCount",
    )
    batch = int(c.desc.get("BatchDimensionCount", 0))
    q = index_sizes[-1]
    data = g.reshape(c.feed("InputTensor"), data_sizes)
    indices = g.reshape(c.feed("IndicesTensor"), index_sizes)
    bounds = g.int64(data_sizes[batch : batch + q])  # one per coordinate, along the last axis
    safe, valid = _positions(g, indices, bounds, _signed(c, "IndicesTensor"))
    every = g.op("ReduceMin", g.cast(valid, np.int64), g.int64([-1]), keepdims=0)
    tuple_valid = g.compare("Greater", every, g.int64(0))
    gathered = g.op("GatherND", data, safe, batch_dims=batch)
    mask = index_sizes[:-1] + [1] * (len(data_sizes) - batch - q)
    return {"OutputTensor": _zero_where_invalid(g, tuple_valid, gathered, mask)}


# ---- slices ------------------------------------------------------------------------------


def _window(c: Call) -> tuple[list[int], list[int]]:
    """Where each dimension's copy starts, and its stride (SLICE: Offsets and Strides; SLICE1
    and SLICE_GRAD: a negative stride starts at the window's end)."""
    if "Offsets" in c.desc:
        return [int(v) for v in c.desc["Offsets"]], [int(v) for v in c.desc["Strides"]]
    offsets = [int(v) for v in c.desc["InputWindowOffsets"]]
    sizes = [int(v) for v in c.desc["InputWindowSizes"]]
    strides = [int(v) for v in c.desc["InputWindowStrides"]]
    starts = [o + (s - 1 if t < 0 else 0) for o, s, t in zip(offsets, sizes, strides, strict=True)]
    return starts, strides


def _reach(c: Call, starts: list[int], strides: list[int], counts: list[int], field: str) -> None:
    """Every position a slice reads (SLICE_GRAD: writes) lies inside `field`."""
    sizes = c.sizes(field)
    for axis, (start, stride, count, size) in enumerate(
        zip(starts, strides, counts, sizes, strict=True)
    ):
        last = start + stride * (count - 1)
        _require(
            c,
            min(start, last) >= 0 and max(start, last) < size,
            f"dimension {axis} reaches positions {start} to {last}, outside {field}'s {size} "
            "(the window must lie inside the tensor)",
        )


def _slice(c: Call) -> dict[str, str]:
    """OutputTensor[i] = InputTensor[start + stride * i]; a zero stride repeats one element."""
    g = c.g
    starts, strides = _window(c)
    counts = c.sizes("OutputTensor")
    _reach(c, starts, strides, counts, "InputTensor")
    ends = []
    for start, stride, count in zip(starts, strides, counts, strict=True):
        if stride == 0:
            ends.append(start + 1)
            continue
        end = start + stride * (count - 1) + (1 if stride > 0 else -1)
        ends.append(end if end >= 0 else INT64_MIN)  # Slice reads -1 as the last element
    sliced = g.op(
        "Slice",
        c.feed("InputTensor"),
        g.int64(starts),
        g.int64(ends),
        g.int64(list(range(len(starts)))),
        g.int64([s if s != 0 else 1 for s in strides]),
    )
    if 0 in strides:
        sliced = g.op("Expand", sliced, g.int64(counts))
    return {"OutputTensor": sliced}


def _slice_grad(c: Call) -> dict[str, str]:
    """The gradient scattered to the positions SLICE1 reads (ScatterND), zeros elsewhere."""
    g = c.g
    starts, strides = _window(c)
    counts = c.sizes("InputGradientTensor")
    _reach(c, starts, strides, counts, "OutputGradientTensor")
    axes = [s + t * np.arange(n) for s, t, n in zip(starts, strides, counts, strict=True)]
    positions = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).astype(np.int64)
    gradient = c.feed("InputGradientTensor")
    zeros = g.op("Expand", g.scalar(0, gradient), g.int64(c.sizes("OutputGradientTensor")))
    return {"OutputGradientTensor": g.op("ScatterND", zeros, g.feed(positions), gradient)}


# ---- padding, tiling, joining ------------------------------------------------------------


def _padding(c: Call) -> dict[str, str]:
    g = c.g
    mode = c.enum("PaddingMode", "DML_PADDING_MODE_")
    starts = [int(v) for v in c.desc["StartPadding"]]
    ends = [int(v) for v in c.desc["EndPadding"]]
    shape = list(c.array("InputTensor").shape)
    _require(
        c,
        c.sizes("OutputTensor") == [n + s + e for n, s, e in zip(shape, starts, ends, strict=True)],
        "OutputTensor.Sizes[i] must be InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i]",
    )
    x = c.feed("InputTensor", PAD_TYPES)
    pads = g.int64(starts + ends)
    if mode == "CONSTANT":
        dtype = c.dtype("OutputTensor")
        if "PaddingValueDataType" in c.desc:  # PADDING1: a scalar union
            value = union_held(c.desc["PaddingValue"], c.desc["PaddingValueDataType"], dtype)
        else:
            value = float_held(c.desc.get("PaddingValue", 0), dtype)
        return {"OutputTensor": g.op("Pad", x, pads, held_like(g, value, x), mode="constant")}
    if mode == "EDGE":
        return {"OutputTensor": g.op("Pad", x, pads, mode="edge")}
    if mode not in ("REFLECTION", "SYMMETRIC"):
        raise Unsupported(f"PaddingMode {mode!r}")
    padded = [
        (a, n, s, e) for a, (n, s, e) in enumerate(zip(shape, starts, ends, strict=True)) if s or e
    ]
    if mode == "REFLECTION" and all(n > 1 and s < n and e < n for _, n, s, e in padded):
        return {"OutputTensor": g.op("Pad", x, pads, mode="reflect")}
    for axis, _, start, end in padded:  # past Pad's reflect, and SYMMETRIC: periodically
        x = _mirrored(g, x, shape, axis, start, end, symmetric=mode == "SYMMETRIC")
    return {"OutputTensor": x}


def _mirrored(
    g: Graph, x: str, shape: Sequence[int], axis: int, before: int, after: int, symmetric: bool
) -> str:
    """x extended along `axis` by mirroring, folded over as often as the padding needs: one
    period (x, then x reversed: whole for SYMMETRIC, without its ends for REFLECTION) tiled,
    and the window [-before, size + after) of it sliced out."""
    size, axes = shape[axis], g.int64([axis])
    if symmetric:  # x[0 .. size-1], x[size-1 .. 0]
        first, last, period = size - 1, INT64_MIN, 2 * size
    else:  # x[0 .. size-1], x[size-2 .. 1]; a period of 1 or 2 is x itself
        first, last, period = size - 2, 0, max(size, 2 * size - 2)
    block = x
    if period > size:
        steps = g.int64([-1])
        back = g.op("Slice", x, g.int64([first]), g.int64([last]), axes, steps)
        block = g.op("Concat", x, back, axis=axis)
    shift = -(-before // period) * period
    copies = -(-(shift + size + after) // period)
    repeats = [1] * len(shape)
    repeats[axis] = copies
    tiled = g.op("Tile", block, g.int64(repeats))
    return g.op("Slice", tiled, g.int64([shift - before]), g.int64([shift + size + after]), axes)


def _tile(c: Call) -> dict[str, str]:
    repeats = [int(r) for r in c.desc["Repeats"]]
    shape = c.array("InputTensor").shape
    _require(
        c,
        len(repeats) == len(shape)
        and c.sizes("OutputTensor") == [n * r for n, r in zip(shape, repeats, strict=True)],
        "Repeats must have one value per InputTensor dimension, and OutputTensor.Sizes[i] must "
        "be InputTensor.Sizes[i] * Repeats[i]",
    )
    return {"OutputTensor": c.g.op("Tile", c.feed("InputTensor"), c.g.int64(repeats))}


def _join(c: Call) -> dict[str, str]:
    parts = [c.g.feed(array) for array in c.inputs["InputTensors"]]
    return {"OutputTensor": c.g.op("Concat", *parts, axis=int(c.desc["Axis"]))}


def _split(c: Call) -> dict[str, Sequence[str]]:
    g, axis = c.g, int(c.desc["Axis"])
    x = c.feed("InputTensor")
    sizes = [
        int(c.tensor("OutputTensors", i)["Sizes"][axis])
        for i in range(len(c.desc["OutputTensors"]))
    ]
    parts = g.ops("Split", x, g.int64(sizes), dtypes=[g.dtype(x)] * len(sizes), axis=axis)
    return {"OutputTensors": list(parts)}


# ---- depth and space ---------------------------------------------------------------------

# The input's [N, C, H, W] split into six dimensions, and their order in the output, for each
# direction and order (ONNX's definitions of DepthToSpace DCR/CRD and SpaceToDepth).
_DEPTH_SPACE_LAYOUTS = {
    ("DEPTH_TO_SPACE", "DEPTH_COLUMN_ROW"): ("N b b C H W", [0, 3, 4, 1, 5, 2]),
    ("DEPTH_TO_SPACE", "COLUMN_ROW_DEPTH"): ("N C b b H W", [0, 1, 4, 2, 5, 3]),
    ("SPACE_TO_DEPTH", "DEPTH_COLUMN_ROW"): ("N C H b W b", [0, 3, 5, 1, 2, 4]),
    ("SPACE_TO_DEPTH", "COLUMN_ROW_DEPTH"): ("N C H b W b", [0, 1, 3, 5, 2, 4]),
}


def _depth_space(direction: str) -> Builder:
    def build(c: Call) -> dict[str, str]:
        g, block = c.g, int(c.desc["BlockSize"])
        order = c.enum("Order", "DML_DEPTH_SPACE_ORDER_", "DEPTH_COLUMN_ROW")
        array = c.array("InputTensor")
        if array.ndim != 4:
            raise Unsupported(f"{c.kind}: InputTensor must have 4 dimensions")
        native = array.dtype.name in DEPTH_SPACE_TYPES
        if direction == "DEPTH_TO_SPACE" and native:
            mode = {"DEPTH_COLUMN_ROW": "DCR", "COLUMN_ROW_DEPTH": "CRD"}[order]
            x = c.feed("InputTensor")
            return {"OutputTensor": g.op("DepthToSpace", x, blocksize=block, mode=mode)}
        if direction == "SPACE_TO_DEPTH" and native and order == "DEPTH_COLUMN_ROW":
            x = c.feed("InputTensor")
            return {"OutputTensor": g.op("SpaceToDepth", x, blocksize=block)}
        n, channels, height, width = array.shape
        split, perm = _DEPTH_SPACE_LAYOUTS[(direction, order)]
        values = {"N": n, "b": block, "C": channels, "H": height, "W": width}
        if direction == "DEPTH_TO_SPACE":
            values["C"] = channels // (block * block)
        else:
            values["H"], values["W"] = height // block, width // block
        sizes = [values[name] for name in split.split()]
        moved = g.op("Transpose", g.reshape(c.feed("InputTensor"), sizes), perm=perm)
        return {"OutputTensor": moved}  # reshaped to the output's Sizes by run_operator

    return build


# ---- one-hot, reversal, nonzero ----------------------------------------------------------


def _one_hot(c: Call) -> dict[str, str]:
    g, axis = c.g, int(c.desc["Axis"])
    depth = c.sizes("OutputTensor")[axis]
    sizes = list(c.array("IndicesTensor").shape)
    # A leading 1 keeps the indices at least 1-D (onnxruntime's OneHot refuses a scalar); the
    # output is reshaped to its Sizes afterwards.
    kept = [1, *sizes[:axis], *sizes[axis + 1 :]]
    indices = g.cast(g.reshape(c.feed("IndicesTensor"), kept), np.int64)
    if not _signed(c, "IndicesTensor"):  # never from the end; a UINT64 past 2^63 is outside
        bound = g.int64(depth)
        outside = g.op(
            "Or",
            g.compare("Less", indices, g.int64(0)),
            g.compare("GreaterOrEqual", indices, bound),
            dtype=np.bool_,
        )
        indices = g.where(outside, bound, indices)
    # OffValue is element 0; OnValue element 1 (the next along the fastest-changing dimension
    # of size > 1, which in the logical tensor is the next element).
    values = carried(g, c.array("ValuesTensor").reshape(-1)[:2], ONE_HOT_VALUE_TYPES)
    one_hot = g.op("OneHot", indices, g.int64(depth), values, dtype=g.dtype(values), axis=axis + 1)
    return {"OutputTensor": one_hot}


def _reverse_subsequences(c: Call) -> dict[str, str]:
    g, axis = c.g, int(c.desc["Axis"])
    shape = list(c.array("InputTensor").shape)
    steps = shape[axis]
    perm = [axis] + [d for d in range(len(shape)) if d != axis]
    batch = math.prod(shape) // steps
    moved = g.reshape(g.op("Transpose", c.feed("InputTensor"), perm=perm), [steps, batch])
    lengths = g.cast(g.reshape(c.feed("SequenceLengthsTensor"), [batch]), np.int64)
    bound = g.int64(steps)
    too_long = g.op(  # clamped to the axis ("as if the value were clamped"); UINT64 past 2^63
        "Or",
        g.compare("Greater", lengths, bound),
        g.compare("Less", lengths, g.int64(0)),
        dtype=np.bool_,
    )
    lengths = g.where(too_long, bound, lengths)
    reversed_ = g.op("ReverseSequence", moved, lengths, batch_axis=1, time_axis=0)
    back = g.reshape(reversed_, [shape[d] for d in perm])
    inverse = [perm.index(d) for d in range(len(shape))]
    return {"OutputTensor": g.op("Transpose", back, perm=inverse)}


OPERATORS: dict[str, Builder] = {
    "GATHER": _gather,
    "GATHER_ELEMENTS": _gather_elements,
    "GATHER_ND": _gather_nd,
    "GATHER_ND1": _gather_nd,
    "SLICE": _slice,
    "SLICE1": _slice,
    "SLICE_GRAD": _slice_grad,
    "PADDING": _padding,
    "PADDING1": _padding,
    "TILE": _tile,
    "JOIN": _join,
    "SPLIT": _split,
    "DEPTH_TO_SPACE": _depth_space("DEPTH_TO_SPACE"),
    "DEPTH_TO_SPACE1": _depth_space("DEPTH_TO_SPACE"),
    "SPACE_TO_DEPTH": _depth_space("SPACE_TO_DEPTH"),
    "SPACE_TO_DEPTH1": _depth_space("SPACE_TO_DEPTH"),
    "ONE_HOT": _one_hot,
    "REVERSE_SUBSEQUENCES": _reverse_subsequences,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
