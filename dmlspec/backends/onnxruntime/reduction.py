"""Reductions, selections and scans for the onnxruntime backend (REDUCE, ARGMIN, ARGMAX, TOP_K,
TOP_K1, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT, NONZERO_COORDINATES): each operator a small
ONNX graph built by an entry of `OPERATORS`, as in data_movement.py.

How the graphs compute:

- Arithmetic (sums, products, norms, scans): floats in float32 (FLOAT16 rounded once at the
  end), integers in int64, whose arithmetic modulo 2^64 wraps like DirectML's once cast back
  (a UINT64 travels as the int64 of the same bits).
- Comparisons (MIN, MAX, the arg-reductions, TOP_K): in a type onnxruntime's kernel has that
  keeps the order: narrow integers widened to int64, UINT64 as int64 with its top bit flipped
  (x XOR 2^63 orders as x does), undone after the node.
- Several axes: ArgMin/ArgMax take one, so the reduced axes are moved last, in increasing
  order, and flattened; the index is the row-major position within them.
- Ties: TopK puts the lower index first whether largest or smallest (the TOP_K pages' rule);
  ArgMin/ArgMax's select_last_index gives AxisDirection's first or last index.
- Integer sums and products: onnxruntime's integer Reduce* accumulate in double and saturate,
  so the reduced axes are flattened and summed with CumSum (keeping the last element) or
  multiplied with a Scan, both exact in int64.
- CUMULATIVE_PRODUCT has no ONNX operator: a Scan multiplies along the axis, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Body, Builder, Call, Graph, meaningful_sizes, run_operator

__all__ = ["OPERATORS", "run"]

# The types onnxruntime's CPU kernels have (onnxruntime 1.23).
TOP_K_TYPES = frozenset(
    {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}
)
ARG_TYPES = frozenset({"uint8", "int8", "int32", "int64", "float16", "float32", "float64"})
MIN_MAX_TYPES = ARG_TYPES

_REDUCE_OPS = {
    "AVERAGE": "ReduceMean",
    "L1": "ReduceL1",
    "L2": "ReduceL2",
    "LOG_SUM": "ReduceLogSum",
    "LOG_SUM_EXP": "ReduceLogSumExp",
    "MAX": "ReduceMax",
    "MIN": "ReduceMin",
    "MULTIPLY": "ReduceProd",
    "SUM": "ReduceSum",
    "SUM_SQUARE": "ReduceSumSquare",
}
_FLOAT_ONLY = frozenset({"AVERAGE", "L2", "LOG_SUM", "LOG_SUM_EXP"})


# ---- helpers -----------------------------------------------------------------------------


def _arithmetic(g: Graph, array: np.ndarray) -> str:
    """The input in the type its arithmetic runs in: float32 (float64 stays), or int64."""
    value = g.feed(array)
    if array.dtype.kind == "f":
        return value if array.dtype == np.float64 else g.cast(value, np.float32)
    return g.cast(value, np.int64)


def _ordered(
    g: Graph, array: np.ndarray, types: frozenset[str]
) -> tuple[str, Callable[[str], str]]:
    """The input in a type of `types` that orders as it does, and how to undo it on values."""
    value = g.feed(array)
    if array.dtype.name in types:
        return value, lambda v: v
    if array.dtype == np.uint64:
        top = g.int64(-(2**63))
        flipped = g.op("BitwiseXor", g.cast(value, np.int64), top)
        return flipped, lambda v: g.cast(g.op("BitwiseXor", v, top), np.uint64)
    if array.dtype.kind in "iu":
        return g.cast(value, np.int64), lambda v: g.cast(v, array.dtype)
    return g.cast(value, np.float32), lambda v: g.cast(v, array.dtype)


def _axes(c: Call) -> list[int]:
    return sorted({int(a) for a in c.desc.get("Axes") or []})


def _direction(c: Call, default: str) -> str:
    return c.enum("AxisDirection", "DML_AXIS_DIRECTION_", default)


# ---- reductions --------------------------------------------------------------------------


def _flattened(g: Graph, x: str, shape: list[int], axes: list[int]) -> tuple[str, list[int]]:
    """x with the reduced axes moved last, in increasing order, and flattened into one, and its
    shape: a row-major position within the reduced axes indexes the last axis."""
    kept = [d for d in range(len(shape)) if d not in axes]
    if kept + axes != list(range(len(shape))):
        x = g.op("Transpose", x, perm=kept + axes)
    flat = [shape[d] for d in kept] + [int(np.prod([shape[d] for d in axes], dtype=np.int64))]
    return g.reshape(x, flat), flat


def _arg(c: Call, op_type: str, last: bool) -> str:
    """The row-major index, within the reduced axes, of the first (or last) extreme."""
    g = c.g
    array = c.array("InputTensor")
    x, _ = _ordered(g, array, ARG_TYPES)
    flat, shape = _flattened(g, x, list(array.shape), _axes(c))
    last_axis = len(shape) - 1
    return g.op(
        op_type, flat, dtype=np.int64, axis=last_axis, keepdims=0, select_last_index=int(last)
    )


def _arg_builder(op_type: str) -> Builder:
    def build(c: Call) -> dict[str, str]:
        last = _direction(c, "INCREASING") == "DECREASING"
        return {"OutputTensor": _arg(c, op_type, last)}

    return build


def _reduce(c: Call) -> dict[str, str]:
    g = c.g
    function = c.enum("Function", "DML_REDUCE_FUNCTION_")
    if function in ("ARGMIN", "ARGMAX"):  # the first index of the extreme
        return {"OutputTensor": _arg(c, "ArgMin" if function == "ARGMIN" else "ArgMax", False)}
    if function not in _REDUCE_OPS:
        raise Unsupported(f"REDUCE Function {function!r}")
    array = c.array("InputTensor")
    if function in _FLOAT_ONLY and array.dtype.kind != "f":
        raise Unsupported(f"REDUCE {function} of {array.dtype.name}: the page has it for floats")
    if function in ("MIN", "MAX"):
        x, restore = _ordered(g, array, MIN_MAX_TYPES)
        return {"OutputTensor": restore(_reduced(g, _REDUCE_OPS[function], x, array, _axes(c)))}
    x = _arithmetic(g, array)
    if array.dtype.kind == "f":
        return {"OutputTensor": _reduced(g, _REDUCE_OPS[function], x, array, _axes(c))}
    # Integers: onnxruntime's integer Reduce* accumulate in double and saturate, so the graph
    # sums with CumSum and multiplies with a Scan (int64, wrapping), keeping the last element.
    flat, shape = _flattened(g, x, list(array.shape), _axes(c))
    last_axis = len(shape) - 1
    if function == "MULTIPLY":
        product, _ = _scan_product(g, flat, shape, last_axis, exclusive=False, backward=False)
        return {"OutputTensor": product}
    if function == "SUM_SQUARE":
        flat = g.op("Mul", flat, flat)
    elif function == "L1" and array.dtype.kind == "i":  # |x| of an unsigned x is x
        flat = g.op("Abs", flat)
    sums = g.op("CumSum", flat, g.int64(last_axis))
    return {"OutputTensor": g.op("Slice", sums, g.int64([-1]), g.int64([2**62]), g.int64([-1]))}


def _reduced(g: Graph, op_type: str, x: str, array: np.ndarray, axes: list[int]) -> str:
    if not axes:  # one element each: reduced over an axis of size 1 appended for it
        x, axes = g.reshape(x, [*array.shape, 1]), [array.ndim]
    return g.op(op_type, x, g.int64(axes), keepdims=1)


# ---- selection ---------------------------------------------------------------------------


def _top_k(c: Call) -> dict[str, str]:
    g = c.g
    x, restore = _ordered(g, c.array("InputTensor"), TOP_K_TYPES)
    largest = _direction(c, "DECREASING") == "DECREASING"
    values, indices = g.ops(
        "TopK",
        x,
        g.int64([int(c.desc["K"])]),
        dtypes=[g.dtype(x), np.int64],
        axis=int(c.desc["Axis"]),
        largest=int(largest),
        sorted=1,
    )
    return {"OutputValueTensor": restore(values), "OutputIndexTensor": indices}


# ---- scans -------------------------------------------------------------------------------


def _cumulative_summation(c: Call) -> dict[str, str]:
    g = c.g
    x = _arithmetic(g, c.array("InputTensor"))
    summed = g.op(
        "CumSum",
        x,
        g.int64(int(c.desc["Axis"])),
        exclusive=int(c.flag("HasExclusiveSum")),
        reverse=int(_direction(c, "INCREASING") == "DECREASING"),
    )
    return {"OutputTensor": summed}


def _cumulative_product(c: Call) -> dict[str, str]:
    g = c.g
    array = c.array("InputTensor")
    _, products = _scan_product(
        g,
        _arithmetic(g, array),
        list(array.shape),
        int(c.desc["Axis"]),
        exclusive=c.flag("HasExclusiveProduct"),
        backward=_direction(c, "INCREASING") == "DECREASING",
    )
    return {"OutputTensor": products}


def _scan_product(
    g: Graph, x: str, shape: list[int], axis: int, *, exclusive: bool, backward: bool
) -> tuple[str, str]:
    """A Scan along `axis` of x (of `shape`): the state (ones at first) times each slice, in
    order (from the end when `backward`). Returns the last state (the whole product) and the
    steps' outputs (the new state, or the old one when `exclusive`) stacked along the axis."""
    dtype = g.dtype(x).name
    rank = len(shape) - 1
    body = Body(
        inputs=(("state", dtype, rank), ("slice", dtype, rank)),
        nodes=(
            ("Mul", ("state", "slice"), ("product",), ()),
            ("Identity", ("state" if exclusive else "product",), ("step",), ()),
        ),
        outputs=(("product", dtype, rank), ("step", dtype, rank)),
    )
    ones = g.feed(np.ones([s for d, s in enumerate(shape) if d != axis], dtype))
    final, steps = g.ops(
        "Scan",
        ones,
        x,
        dtypes=[dtype, dtype],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[axis],
        scan_output_axes=[axis],
        scan_input_directions=[int(backward)],
        scan_output_directions=[int(backward)],
    )
    return final, steps


# ---- NONZERO_COORDINATES ----------------------------------------------------------------

NONZERO_TYPES = frozenset({"uint8", "int32", "int64", "float16", "float32"})


def _nonzero_coordinates(c: Call) -> dict[str, str]:
    """NonZero's [N, count] coordinates transposed to DirectML's rows, padded with zero rows
    to M (those rows are undefined on the page), and the count."""
    g = c.g
    rows, columns = c.sizes("OutputCoordinatesTensor")[-2:]
    array = c.array("InputTensor")
    sizes = meaningful_sizes(
        array.shape, columns, "InputTensor", "OutputCoordinatesTensor.Sizes[-1]"
    )
    x = g.reshape(g.feed(array), sizes)
    if array.dtype.name not in NONZERO_TYPES:  # zero by value (-0.0 is zero)
        x = g.op("Not", g.compare("Equal", x, g.scalar(0, x)))
    found = g.op("Transpose", g.op("NonZero", x, dtype=np.int64), perm=[1, 0])
    count = g.op("Slice", g.op("Shape", found, dtype=np.int64), g.int64([0]), g.int64([1]))
    pads = g.op(
        "Concat", g.int64([0, 0]), g.op("Sub", g.int64([rows]), count), g.int64([0]), axis=0
    )
    coordinates = g.op("Pad", found, pads, g.int64(0), mode="constant")
    return {"OutputCountTensor": count, "OutputCoordinatesTensor": coordinates}


OPERATORS: dict[str, Builder] = {
    "REDUCE": _reduce,
    "ARGMIN": _arg_builder("ArgMin"),
    "ARGMAX": _arg_builder("ArgMax"),
    "TOP_K": _top_k,
    "TOP_K1": _top_k,
    "CUMULATIVE_SUMMATION": _cumulative_summation,
    "CUMULATIVE_PRODUCT": _cumulative_product,
    "NONZERO_COORDINATES": _nonzero_coordinates,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
