"""The convolution family for the onnxruntime backend (convolution, matrix multiplication,
attention); so far GEMM, as ONNX's MatMul over the leading (batch, channel) dimensions;
CONVOLUTION as Conv (FORWARD) and ConvTranspose (BACKWARD); the integer and quantized matrix
multiplications as MatMulInteger, com.microsoft MatMulIntegerToFloat and QLinearMatMul where
onnxruntime's CPU kernels take the desc (per-tensor quantization; not INT8 A with UINT8 B), a
FLOAT64 MatMul graph of the pages' formulas where they do not (per-row and per-column scales
and zero points, 16- and 32-bit inputs, FLOAT16); FOLD as Col2Im (ScatterElements' add for the
types Col2Im lacks) and UNFOLD as Pad and Gather; CONVOLUTION_INTEGER as ConvInteger (a
per-channel filter zero point subtracted by linearity, ConvInteger taking per-tensor ones only;
an INT8 input with a UINT8 filter moved to UINT8, where onnxruntime's sums go wrong) and
QUANTIZED_LINEAR_CONVOLUTION as QLinearConv where onnxruntime's CPU kernel takes the desc
(input and output types alike, not INT8 with UINT8, a finite FLOAT32 InputScale * FilterScale),
ConvInteger's integer sum scaled and quantized in FLOAT64 elsewhere.
MULTIHEAD_ATTENTION and MULTIHEAD_ATTENTION1 (grouped-query) as a FLOAT32 graph of the page's
steps (MatMul, Softmax).

GEMM: Transpose where TransA/TransB ask, MatMul in FLOAT32 (FLOAT16 inputs widened first, as
DirectML accumulates them), then Alpha * product + Beta * C, the FusedActivation's graph, and
one cast to the output type. ONNX's Gemm takes 2-D matrices only, so MatMul serves every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .graph import Builder, Call, held_like, run_operator

__all__ = ["OPERATORS", "run"]


def _gemm(c: Call) -> dict[str, str]:
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))  # the shape an activation (softmax's axes) sees
    wide = np.float32
    a = g.cast(c.feed("ATensor"), wide)
    b = g.cast(c.feed("BTensor"), wide)
    rank = len(c.sizes("ATensor"))
    swap = [*range(rank - 2), rank - 1, rank - 2]
    if c.enum("TransA", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        a = g.op("Transpose", a, perm=swap)
    if c.enum("TransB", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        b = g.op("Transpose", b, perm=swap)
    product = g.op("MatMul", a, b)
    result = g.op("Mul", product, g.scalar(float(c.desc.get("Alpha", 1.0)), product))
    if c.given("CTensor"):
        bias = g.cast(c.feed("CTensor"), wide)
        scaled = g.op("Mul", bias, g.scalar(float(c.desc.get("Beta", 1.0)), bias))
        result = g.op("Add", result, scaled)
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _convolution(c: Call) -> dict[str, str]:
    """CONVOLUTION as ONNX's Conv (FORWARD; OutputPadding's zeros by Pad) or ConvTranspose
    (BACKWARD, whose filter layout and output_padding are DirectML's), in FLOAT32. ONNX
    convolves as a cross-correlation (ConvTranspose as its gradient), so Mode CONVOLUTION gets
    the filter flipped along its spatial dimensions first."""
    g = c.g
    out_sizes = c.sizes("OutputTensor")
    g.shape = tuple(out_sizes)
    spatial = len(out_sizes) - 2
    wide = np.float32
    weights = c.array("FilterTensor")
    if c.enum("Mode", "DML_CONVOLUTION_MODE_") == "CONVOLUTION":
        weights = np.ascontiguousarray(np.flip(weights, tuple(range(2, weights.ndim))))
    x = g.cast(c.feed("InputTensor"), wide)
    w = g.cast(g.feed(weights), wide)

    def ints(field: str) -> list[int]:
        return [int(v) for v in c.desc[field]]

    attributes: dict[str, Any] = {
        "strides": ints("Strides"),
        "dilations": ints("Dilations"),
        "pads": ints("StartPadding") + ints("EndPadding"),
        "group": int(c.desc["GroupCount"]),
    }
    if c.enum("Direction", "DML_CONVOLUTION_DIRECTION_") == "BACKWARD":
        # The whole transposed result, then the output's window of it: from StartPadding, its
        # end zeros where it runs past (onnxruntime refuses an output_padding of
        # max(stride, dilation) or more, and an empty intermediate).
        attributes["pads"] = [0] * (2 * spatial)
        result = g.op("ConvTranspose", x, w, **attributes)
        inputs, window = c.sizes("InputTensor")[2:], list(weights.shape[2:])
        full = [
            (n - 1) * s + (k - 1) * d + 1
            for n, k, s, d in zip(inputs, window, ints("Strides"), ints("Dilations"), strict=True)
        ]
        start = ints("StartPadding")
        stop = [b + n for b, n in zip(start, out_sizes[2:], strict=True)]
        beyond = [max(0, e - f) for e, f in zip(stop, full, strict=True)]
        if any(beyond):
            result = g.op("Pad", result, g.int64([0] * (2 + spatial) + [0, 0, *beyond]))
        axes = list(range(2, 2 + spatial))
        result = g.op("Slice", result, g.int64(start), g.int64(stop), g.int64(axes))
    else:
        result = g.op("Conv", x, w, **attributes)
        zeros = ints("OutputPadding")
        if any(zeros):
            result = g.op("Pad", result, g.int64([0] * (2 + spatial) + [0, 0, *zeros]))
    if c.given("BiasTensor"):
        result = g.op("Add", result, g.cast(c.feed("BiasTensor"), wide))
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _per_tensor(c: Call, field: str) -> bool:
    """Whether an optional quantization tensor is absent or holds one value."""
    return not c.given(field) or c.array(field).size == 1


def _scalar_feed(c: Call, field: str, dtype: Any) -> str:
    """A per-tensor quantization value as an ONNX scalar (0 of `dtype` where absent)."""
    value = c.array(field).reshape(()) if c.given(field) else np.zeros((), dtype)
    return c.g.feed(value)


def _matrix(c: Call, field: str, zero_point: str, shape: tuple[int, int]) -> str:
    """A - AZeroPoint (or B - BZeroPoint) in FLOAT64 (exact: every difference of 32-bit
    integers is), the zero point reshaped to {M, 1} (A) or {1, N} (B)."""
    g = c.g
    value = g.cast(c.feed(field), np.float64)
    if c.given(zero_point):
        value = g.op("Sub", value, g.reshape(g.cast(c.feed(zero_point), np.float64), shape))
    return value


def _wide_product(c: Call) -> str:
    """(A - AZeroPoint) x (B - BZeroPoint) as FLOAT64 MatMul: exact sums for 8- and 16-bit
    inputs, each product rounded once for 32-bit ones."""
    a = _matrix(c, "ATensor", "AZeroPointTensor", (-1, 1))
    b = _matrix(c, "BTensor", "BZeroPointTensor", (1, -1))
    return c.g.op("MatMul", a, b)


def _scaled(c: Call, product: str) -> str:
    """The product times AScale (per row) and BScale (per column), in FLOAT64."""
    g = c.g
    a_scale = g.reshape(g.cast(c.feed("AScaleTensor"), np.float64), (-1, 1))
    b_scale = g.reshape(g.cast(c.feed("BScaleTensor"), np.float64), (1, -1))
    return g.op("Mul", g.op("Mul", product, a_scale), b_scale)


# onnxruntime's CPU kernels take INT8 A only with INT8 B (QLinearMatMul, MatMulIntegerToFloat).
_MIXED = ("int8", "uint8")


def _matrix_multiply_integer(c: Call) -> dict[str, str]:
    """MatMulInteger where AZeroPoint is per tensor (onnxruntime's CPU kernel takes no per-row
    zero point for A); otherwise the zero points subtracted and MatMul in FLOAT64 (exact)."""
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))
    if not (_per_tensor(c, "AZeroPointTensor") and _per_tensor(c, "BZeroPointTensor")):
        return {"OutputTensor": g.cast(_wide_product(c), np.int32)}
    a, b = c.feed("ATensor"), c.feed("BTensor")
    a_zero = _scalar_feed(c, "AZeroPointTensor", c.dtype("ATensor"))
    b_zero = _scalar_feed(c, "BZeroPointTensor", c.dtype("BTensor"))
    return {"OutputTensor": g.op("MatMulInteger", a, b, a_zero, b_zero, dtype=np.int32)}


def _matrix_multiply_integer_to_float(c: Call) -> dict[str, str]:
    """com.microsoft MatMulIntegerToFloat (onnxruntime's contrib operator) for 8-bit inputs,
    FLOAT32 scales and per-tensor scales and zero points, the bias added after it (its own
    bias is per column only); otherwise MatMul in FLOAT64 and the scales applied there."""
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))
    types = (c.dtype("ATensor").name, c.dtype("BTensor").name)
    quantization = ("AScaleTensor", "BScaleTensor", "AZeroPointTensor", "BZeroPointTensor")
    contrib = (
        all(t in ("int8", "uint8") for t in types)
        and types != _MIXED
        and c.dtype("OutputTensor") == np.float32
        and all(_per_tensor(c, field) for field in quantization)
    )
    if contrib:
        result = g.op(
            "MatMulIntegerToFloat",
            c.feed("ATensor"),
            c.feed("BTensor"),
            _scalar_feed(c, "AScaleTensor", np.float32),
            _scalar_feed(c, "BScaleTensor", np.float32),
            _scalar_feed(c, "AZeroPointTensor", c.dtype("ATensor")),
            _scalar_feed(c, "BZeroPointTensor", c.dtype("BTensor")),
            dtype=np.float32,
            domain="com.microsoft",
        )
        if c.given("BiasTensor"):
            result = g.op("Add", result, g.cast(c.feed("BiasTensor"), np.float32))
        return {"OutputTensor": result}
    result = _scaled(c, _wide_product(c))
    if c.given("BiasTensor"):
        result = g.op("Add", result, g.cast(c.feed("BiasTensor"), np.float64))
    return {"OutputTensor": g.cast(result, c.dtype("OutputTensor"))}


def _quantized_linear_matrix_multiply(c: Call) -> dict[str, str]:
    """QLinearMatMul where every scale and zero point is per tensor and the types are ones
    onnxruntime's CPU kernel takes; otherwise dequantized, MatMul in FLOAT64 and quantized as
    the page's Quantize function says (Round: halves to even, then Max/Min to the output
    type's range)."""
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))
    output = c.dtype("OutputTensor")
    types = (c.dtype("ATensor").name, c.dtype("BTensor").name)
    quantization = (
        "AScaleTensor",
        "AZeroPointTensor",
        "BScaleTensor",
        "BZeroPointTensor",
        "OutputScaleTensor",
        "OutputZeroPointTensor",
    )
    if types != _MIXED and all(_per_tensor(c, field) for field in quantization):
        result = g.op(
            "QLinearMatMul",
            c.feed("ATensor"),
            _scalar_feed(c, "AScaleTensor", np.float32),
            _scalar_feed(c, "AZeroPointTensor", c.dtype("ATensor")),
            c.feed("BTensor"),
            _scalar_feed(c, "BScaleTensor", np.float32),
            _scalar_feed(c, "BZeroPointTensor", c.dtype("BTensor")),
            _scalar_feed(c, "OutputScaleTensor", np.float32),
            _scalar_feed(c, "OutputZeroPointTensor", output),
            dtype=output,
        )
        return {"OutputTensor": result}
    return {"OutputTensor": _quantized(c, _scaled(c, _wide_product(c)), (-1, 1))}


def _quantized(c: Call, real: str, shape: tuple[int, ...]) -> str:
    """The page's Quantize function on a FLOAT64 value: Round(real / OutputScale) (halves to
    even) + OutputZeroPoint, then Max/Min to the output type's range; the scale and zero point
    reshaped to `shape` (per row, or () per tensor)."""
    g = c.g
    output = c.dtype("OutputTensor")
    scale = g.reshape(g.cast(c.feed("OutputScaleTensor"), np.float64), shape)
    quantized = g.op("Round", g.op("Div", real, scale))
    if c.given("OutputZeroPointTensor"):
        zero = g.reshape(g.cast(c.feed("OutputZeroPointTensor"), np.float64), shape)
        quantized = g.op("Add", quantized, zero)
    info = np.iinfo(output)
    low = g.feed(np.array(float(info.min)))
    high = g.feed(np.array(float(info.max)))
    clamped = g.op("Min", g.op("Max", quantized, low), high)
    return g.cast(clamped, output)


def _window_attributes(c: Call) -> dict[str, Any]:
    """Conv's attributes from the desc's window fields (ONNX's pads: every start, every end)."""

    def ints(field: str) -> list[int]:
        return [int(v) for v in c.desc[field]]

    return {
        "strides": ints("Strides"),
        "dilations": ints("Dilations"),
        "pads": ints("StartPadding") + ints("EndPadding"),
        "group": int(c.desc["GroupCount"]),
    }


def _integer_sum(c: Call) -> str:
    """(InputTensor - InputZeroPoint) convolved with (FilterTensor - FilterZeroPoint), INT32,
    as ConvInteger (which pads with the input's zero point, as dmlspec reads the pages).
    onnxruntime's ConvInteger gets some sums of an INT8 input with a UINT8 filter wrong where
    the input's zero point is not 0 (onnxruntime 1.32 on x86: extreme values, zero point 63):
    such an input is moved to UINT8 first, input and zero point + 128 (the same differences).
    It takes per-tensor zero points only: a per-channel FilterZeroPoint is subtracted by
    linearity, ConvInteger(x, w) - FilterZeroPoint[o] * ConvInteger(x, 1), the second the sum
    of the window's input differences, both exact in INT32."""
    g = c.g
    attributes = _window_attributes(c)
    x, w = c.feed("InputTensor"), c.array("FilterTensor")
    x_zero = _scalar_feed(c, "InputZeroPointTensor", c.dtype("InputTensor"))
    if (c.dtype("InputTensor").name, w.dtype.name) == _MIXED:
        offset = g.feed(np.array(128, np.int32))
        x = g.cast(g.op("Add", g.cast(x, np.int32), offset), np.uint8)
        x_zero = g.cast(g.op("Add", g.cast(x_zero, np.int32), offset), np.uint8)
    apart = not _per_tensor(c, "FilterZeroPointTensor")
    w_zero = (
        g.feed(np.zeros((), w.dtype))
        if apart
        else _scalar_feed(c, "FilterZeroPointTensor", w.dtype)
    )
    total = g.op("ConvInteger", x, g.feed(w), x_zero, w_zero, dtype=np.int32, **attributes)
    if apart:
        ones = g.feed(np.ones_like(w))
        window = g.op("ConvInteger", x, ones, x_zero, w_zero, dtype=np.int32, **attributes)
        rank = len(c.sizes("OutputTensor"))
        zero = g.cast(c.feed("FilterZeroPointTensor"), np.int32)
        zero = g.reshape(zero, [1, -1] + [1] * (rank - 2))
        total = g.op("Sub", total, g.op("Mul", window, zero))
    return total


def _convolution_integer(c: Call) -> dict[str, str]:
    """ConvInteger (ONNX's is a cross-correlation, as dmlspec reads the page)."""
    c.g.shape = tuple(c.sizes("OutputTensor"))
    return {"OutputTensor": _integer_sum(c)}


def _quantized_linear_convolution(c: Call) -> dict[str, str]:
    """QLinearConv where onnxruntime's CPU kernel takes the desc (the input's and output's types
    the same, not INT8 input with UINT8 filter; per-channel FilterScale and FilterZeroPoint are
    fine) and InputScale * FilterScale is finite in FLOAT32 (onnxruntime multiplies them first,
    so an overflowing product makes a zero sum NaN, where the exact value is the zero point);
    otherwise the integer sum
    (_integer_sum) plus Bias, scaled in FLOAT64 and quantized as the page's Quantize function
    says (Round: halves to even, then Max/Min to the output type's range)."""
    g = c.g
    out_sizes = c.sizes("OutputTensor")
    g.shape = tuple(out_sizes)
    output = c.dtype("OutputTensor")
    rank = len(out_sizes)
    types = (c.dtype("InputTensor").name, c.dtype("FilterTensor").name)
    with np.errstate(all="ignore"):  # onnxruntime multiplies the scales in FLOAT32 first
        scales = c.array("InputScaleTensor").reshape(()) * c.array("FilterScaleTensor")
    if c.dtype("InputTensor") == output and types != _MIXED and np.isfinite(scales).all():
        w = c.array("FilterTensor")
        filter_scale = c.array("FilterScaleTensor").reshape(-1)
        filter_zero = (
            c.array("FilterZeroPointTensor").reshape(-1)
            if c.given("FilterZeroPointTensor")
            else np.zeros(filter_scale.shape, w.dtype)
        )
        inputs = [
            c.feed("InputTensor"),
            _scalar_feed(c, "InputScaleTensor", np.float32),
            _scalar_feed(c, "InputZeroPointTensor", output),
            g.feed(w),
            g.feed(filter_scale),
            g.feed(filter_zero),
            _scalar_feed(c, "OutputScaleTensor", np.float32),
            _scalar_feed(c, "OutputZeroPointTensor", output),
        ]
        if c.given("BiasTensor"):
            inputs.append(g.feed(c.array("BiasTensor").reshape(-1)))
        result = g.op("QLinearConv", *inputs, dtype=output, **_window_attributes(c))
        return {"OutputTensor": result}
    real = g.cast(_integer_sum(c), np.float64)
    if c.given("BiasTensor"):
        real = g.op("Add", real, g.cast(c.feed("BiasTensor"), np.float64))
    x_scale = g.reshape(g.cast(c.feed("InputScaleTensor"), np.float64), [])
    w_scale = g.cast(c.feed("FilterScaleTensor"), np.float64)
    real = g.op("Mul", g.op("Mul", real, x_scale), g.reshape(w_scale, [1, -1] + [1] * (rank - 2)))
    return {"OutputTensor": _quantized(c, real, ())}


def _window_fields(c: Call) -> dict[str, list[int]]:
    names = ("WindowSizes", "Strides", "Dilations", "StartPadding", "EndPadding")
    return {name: [int(v) for v in c.desc[name]] for name in names}


def _fold(c: Call) -> dict[str, str]:
    """Col2Im (opset 18) in FLOAT32: onnxruntime's CPU kernel has no other type. FLOAT16 is
    widened (DirectML accumulates it in FLOAT32 too); FLOAT64 and integers, which FLOAT32
    would round, through ScatterElements' add instead (_scatter_fold)."""
    sizes = c.sizes("OutputTensor")
    dtype = c.dtype("InputTensor")
    g = c.g
    g.shape = tuple(sizes)
    w = _window_fields(c)
    if dtype.name not in ("float32", "float16"):
        return {"OutputTensor": _scatter_fold(c, sizes, w)}
    result = g.op(
        "Col2Im",
        g.cast(c.feed("InputTensor"), np.float32),
        g.int64(sizes[2:]),
        g.int64(w["WindowSizes"]),
        dilations=w["Dilations"],
        pads=w["StartPadding"] + w["EndPadding"],
        strides=w["Strides"],
    )
    return {"OutputTensor": g.cast(result, dtype)}


def _offsets(extents: list[int], w: dict[str, list[int]]) -> np.ndarray:
    """Row-major offsets into the padded spatial block of every window element (row-major over
    WindowSizes) of every block (row-major over the windows that fit): {prod(W), L}."""
    offsets = np.zeros((1, 1), np.int64)
    for extent, window, stride, dilation in zip(
        extents, w["WindowSizes"], w["Strides"], w["Dilations"], strict=True
    ):
        blocks = (extent - (window - 1) * dilation - 1) // stride + 1
        along = np.arange(window)[:, None] * dilation + np.arange(blocks)[None, :] * stride
        offsets = (offsets[:, None, :, None] * extent + along[None, :, None, :]).reshape(
            offsets.shape[0] * window, offsets.shape[1] * blocks
        )
    return offsets


def _extents(spatial: list[int], w: dict[str, list[int]]) -> list[int]:
    pads = zip(spatial, w["StartPadding"], w["EndPadding"], strict=True)
    return [s + a + b for s, a, b in pads]


def _scatter_fold(c: Call, sizes: list[int], w: dict[str, list[int]]) -> str:
    """FOLD in the data's own type: ScatterElements (reduction add) of every window element
    into a zero padded output, the padding then sliced away."""
    g = c.g
    n, channels, *spatial = sizes
    extents = _extents(spatial, w)
    offsets = _offsets(extents, w).reshape(-1)
    data = c.feed("InputTensor")
    updates = g.reshape(data, [n, channels, offsets.size])
    indices = g.int64(np.broadcast_to(offsets, (n, channels, offsets.size)))
    zeros = g.feed(np.zeros((n, channels, int(np.prod(extents))), c.dtype("InputTensor")))
    summed = g.op("ScatterElements", zeros, indices, updates, axis=2, reduction="add")
    block = g.reshape(summed, [n, channels, *extents])
    rank = len(sizes)
    return g.op(
        "Slice",
        block,
        g.int64(w["StartPadding"]),
        g.int64([a + s for a, s in zip(w["StartPadding"], spatial, strict=True)]),
        g.int64(list(range(2, rank))),
    )


_PAD_TYPES = frozenset(
    {"float32", "float64", "int8", "int32", "int64", "uint8", "uint32", "uint64"}
)


def _unfold(c: Call) -> dict[str, str]:
    """No ONNX operator extracts windows of any rank: Pad with zeros, then one Gather of the
    window elements' offsets into the padded spatial block (computed here, row-major over
    WindowSizes and the blocks), in the data's own type (floats moved as their bits)."""
    sizes = c.sizes("InputTensor")
    n, channels, *spatial = sizes
    w = _window_fields(c)
    g = c.g
    g.shape = tuple(sizes)
    data = c.feed("InputTensor", _PAD_TYPES)
    zero = held_like(g, np.zeros((), c.dtype("InputTensor")), data)
    pads = [0, 0, *w["StartPadding"], 0, 0, *w["EndPadding"]]
    padded = g.op("Pad", data, g.int64(pads), zero, mode="constant")
    extents = _extents(spatial, w)
    offsets = _offsets(extents, w)
    flat = g.reshape(padded, [n, channels, int(np.prod(extents))])
    gathered = g.op("Gather", flat, g.int64(offsets.reshape(-1)), axis=2)
    out = g.reshape(gathered, [n, channels * offsets.shape[0], offsets.shape[1]])
    return {"OutputTensor": out}


# Where each role's tensor is read from: (field, index along a stacked tensor's fourth
# dimension; None for an unstacked one).
_ATTENTION_SOURCES = {
    "query": (
        ("QueryTensor", None),
        ("StackedQueryKeyTensor", 0),
        ("StackedQueryKeyValueTensor", 0),
    ),
    "key": (
        ("KeyTensor", None),
        ("StackedQueryKeyTensor", 1),
        ("StackedKeyValueTensor", 0),
        ("StackedQueryKeyValueTensor", 1),
    ),
    "value": (
        ("ValueTensor", None),
        ("StackedKeyValueTensor", 1),
        ("StackedQueryKeyValueTensor", 2),
    ),
}


def _attention_role(c: Call, role: str, heads: tuple[int, int]) -> str:
    """A role's tensor as {batch, role's heads, length, size} in FLOAT32, its bias added (the
    bias's query, key and value parts in that order); `heads` the query's and the key's and
    value's head counts."""
    g = c.g
    count = heads[0] if role == "query" else heads[1]
    field, index = next((f, i) for f, i in _ATTENTION_SOURCES[role] if c.given(f))
    sizes = c.sizes(field)
    data = g.cast(c.feed(field), np.float32)
    if index is None:
        batch, length, hidden = sizes[-3:]
        size = hidden // count
        data = g.reshape(data, [batch, length, count, size])
    else:
        batch, length, _, _, size = sizes
        data = g.op("Gather", data, g.int64(index), axis=3)  # {batch, length, heads, size}
    if c.given("BiasTensor"):
        query_size = _attention_query_size(c, heads[0])
        query_end = heads[0] * query_size
        key_end = query_end + heads[1] * query_size
        start = {"query": 0, "key": query_end, "value": key_end}[role]
        bias = g.cast(c.feed("BiasTensor"), np.float32)
        bias = g.reshape(bias, [-1])
        piece = g.op("Slice", bias, g.int64([start]), g.int64([start + count * size]))
        data = g.op("Add", data, g.reshape(piece, [count, size]))
    return g.op("Transpose", data, perm=[0, 2, 1, 3])


def _attention_query_size(c: Call, heads: int) -> int:
    field, index = next((f, i) for f, i in _ATTENTION_SOURCES["query"] if c.given(f))
    return c.sizes(field)[-1] // heads if index is None else c.sizes(field)[4]


def _multihead_attention(c: Call) -> dict[str, str]:
    """MULTIHEAD_ATTENTION(1) as a FLOAT32 graph of the page's steps: the biased query, key and
    value per head, the past keys and values concatenated first, each key and value head
    gathered for the query heads it serves (MULTIHEAD_ATTENTION1's grouped-query reading),
    MatMul with the transposed key times Scale, the relative position bias, the mask (Where),
    Softmax, MatMul with the value. onnxruntime's com.microsoft MultiHeadAttention is not used:
    its masks are ONNX's (a key padding mask of 0s and 1s, or lengths), not the four DirectML
    mask types. Nor is com.microsoft GroupQueryAttention for MULTIHEAD_ATTENTION1: onnxruntime
    1.32's CPU kernel takes only head sizes that are multiples of 8, a key as long as the query
    where no past is given and one head size for the key and the value, adds no query, key and
    value bias and knows none of DirectML's mask types (and is causal unless causal=0), so it
    would serve none of the suites' small descs; tests/test_attention_grouped.py checks that it
    agrees with the reference where it applies. PastSequenceLengthsTensor is not read
    (undefined, R2-R4)."""
    g = c.g
    if "HeadCount" in c.desc:
        heads = (int(c.desc["HeadCount"]), int(c.desc["HeadCount"]))
    else:
        heads = (int(c.desc["QueryHeadCount"]), int(c.desc["KeyValueHeadCount"]))
    q = _attention_role(c, "query", heads)
    k = _attention_role(c, "key", heads)
    v = _attention_role(c, "value", heads)
    key_field, index = next((f, i) for f, i in _ATTENTION_SOURCES["key"] if c.given(f))
    total = c.sizes(key_field)[-2 if index is None else 1]
    if c.given("PastKeyTensor"):
        total += c.sizes("PastKeyTensor")[-2]
        for field, name in (("PastKeyTensor", "k"), ("PastValueTensor", "v")):
            past = g.reshape(g.cast(c.feed(field), np.float32), c.sizes(field)[-4:])
            if name == "k":
                k = g.op("Concat", past, k, axis=2)
            else:
                v = g.op("Concat", past, v, axis=2)
    present_key, present_value = k, v
    if heads[0] != heads[1]:  # query head h uses key and value head h // group
        shared = g.int64(np.arange(heads[0]) // (heads[0] // heads[1]))
        k, v = g.op("Gather", k, shared, axis=1), g.op("Gather", v, shared, axis=1)
    scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    scores = g.op("Mul", scores, g.scalar(float(np.float32(c.desc["Scale"])), scores))
    if c.given("RelativePositionBiasTensor"):
        relative = g.cast(c.feed("RelativePositionBiasTensor"), np.float32)
        scores = g.op(
            "Add", scores, g.reshape(relative, c.sizes("RelativePositionBiasTensor")[-4:])
        )
    if c.given("MaskTensor"):
        scores = _attention_mask(c, scores, total)
    weights = g.op("Softmax", scores, axis=-1)
    output = g.op("Transpose", g.op("MatMul", weights, v), perm=[0, 2, 1, 3])
    outputs = {"OutputTensor": output}
    if "OutputPresentKeyTensor" in c.desc:
        outputs["OutputPresentKeyTensor"] = present_key
    if "OutputPresentValueTensor" in c.desc:
        outputs["OutputPresentValueTensor"] = present_value
    return outputs


def _attention_mask(c: Call, scores: str, total: int) -> str:
    """BOOLEAN: MaskFilterValue added where the mask holds 0; the sequence-length types: the
    scores outside each batch's [start, end) of key positions set to MaskFilterValue.
    KEY_QUERY_SEQUENCE_LENGTH_START_END (undefined, R1): the scores as they are."""
    g = c.g
    kind = c.enum("MaskType", "DML_MULTIHEAD_ATTENTION_MASK_TYPE_")
    mask = c.array("MaskTensor").astype(np.int64)
    filler = g.scalar(float(np.float32(c.desc["MaskFilterValue"])), scores)
    if kind == "BOOLEAN":
        shape = mask.shape[-4:] if mask.ndim >= 4 else (1,) * (4 - mask.ndim) + mask.shape
        zero = g.compare("Equal", g.feed(mask.reshape(shape)), g.int64(0))
        return g.where(zero, g.op("Add", scores, filler), scores)
    if kind not in ("KEY_SEQUENCE_LENGTH", "KEY_SEQUENCE_END_START"):
        return scores
    rows = mask.reshape(2 if kind == "KEY_SEQUENCE_END_START" else 1, -1)
    end = rows[0].reshape(-1, 1, 1, 1)
    start = rows[1].reshape(-1, 1, 1, 1) if kind == "KEY_SEQUENCE_END_START" else 0 * end
    positions = g.int64(np.arange(total))
    inside = g.op(
        "And",
        g.compare("GreaterOrEqual", positions, g.feed(start)),
        g.compare("Less", positions, g.feed(end)),
        dtype=np.bool_,
    )
    return g.where(inside, scores, g.op("Expand", filler, g.op("Shape", scores, dtype=np.int64)))


OPERATORS: dict[str, Builder] = {
    "GEMM": _gemm,
    "CONVOLUTION": _convolution,
    "MATRIX_MULTIPLY_INTEGER": _matrix_multiply_integer,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": _matrix_multiply_integer_to_float,
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": _quantized_linear_matrix_multiply,
    "FOLD": _fold,
    "UNFOLD": _unfold,
    "CONVOLUTION_INTEGER": _convolution_integer,
    "QUANTIZED_LINEAR_CONVOLUTION": _quantized_linear_convolution,
    "MULTIHEAD_ATTENTION": _multihead_attention,
    "MULTIHEAD_ATTENTION1": _multihead_attention,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
