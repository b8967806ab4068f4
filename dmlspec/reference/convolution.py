"""The convolution family (convolution, matrix multiplication, attention), written from the
DirectML pages; so far GEMM, CONVOLUTION, the integer and quantized matrix multiplications,
FOLD, UNFOLD, the integer and quantized convolutions and MULTIHEAD_ATTENTION(1).

Each operator is computed in FLOAT64 (every product of two FLOAT32 or FLOAT16 values is exact
there; a sum of K of them is within K * 2^-53 of the sum of their absolute values, 2^29 times
below what FLOAT32 accumulation is allowed), then its FusedActivation, then one rounding to the
output type. `EXACT` gives, per operator, that FLOAT64 result before the
activation, its bound, the same computation on absolute values (|Alpha| * sum |a * b| +
|Beta| * |c|), and the largest magnitude an intermediate reaches (the sum before Alpha scales
it): what the dot-product accuracy model (dmlspec.accuracy) judges a result by.

GEMM: "Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)", BatchCount *
ChannelCount independent {M, K} x {K, N} products over the leading dimensions.

CONVOLUTION: one filter element (window offset) at a time, gathering (FORWARD) or scattering
(BACKWARD), as `_windowed` says.

MATRIX_MULTIPLY_INTEGER, MATRIX_MULTIPLY_INTEGER_TO_FLOAT, QUANTIZED_LINEAR_MATRIX_MULTIPLY:
the same products of A - AZeroPoint and B - BZeroPoint (zero points per tensor, per row of A,
per column of B), summed exactly in INT64 (Python integers for 32-bit inputs); INTEGER_TO_FLOAT
scales the sums by AScale and BScale and adds Bias in FLOAT64; the quantized one dequantizes,
multiplies in FLOAT64 and quantizes with ELEMENT_WISE_QUANTIZE_LINEAR's rule.

CONVOLUTION_INTEGER and QUANTIZED_LINEAR_CONVOLUTION: CONVOLUTION's FORWARD cross-correlation
on InputTensor - InputZeroPoint and FilterTensor - FilterZeroPoint (per output channel), in
INT64 (exact); the quantized one adds Bias to the sum, scales it by InputScale and FilterScale
and quantizes with ELEMENT_WISE_QUANTIZE_LINEAR's rule.

MULTIHEAD_ATTENTION: the page's steps ("[Add Bias to query/key/value] -> GEMM(Query,
Transposed(Key)) * Scale -> [Add RelativePositionBias] -> [Add Mask] -> Softmax ->
GEMM(SoftmaxResult, Value)") one batch and head at a time; its output's bound composes the two
products with the softmax's error, as its spec's notes derive. MULTIHEAD_ATTENTION1 the same,
grouped: query head h attends with key and value head h // (QueryHeadCount /
KeyValueHeadCount); its PastSequenceLengthsTensor is not read (undefined, R2-R4).

UNFOLD and FOLD: the pages' blocks visited one window element at a time (direct loops): UNFOLD
copies each into its column, FOLD adds each back ("by summing the overlapping values"), each a
product by 1 for the accuracy model; integers summed exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .element_wise import fused_activation, quantize_linear
from .element_wise_numbers import to_type
from .fields import Fields, Inputs, Operator, Outputs, comparison_terms
from .tensors import WriteLog

__all__ = ["CONVOLUTION", "EXACT", "UNDEFINED_NOTES", "Exact"]

# operator -> (fields, logical inputs) -> {output: (FLOAT64 value, FLOAT64 bound, FLOAT64
# largest intermediate magnitude)}, before the FusedActivation.
Exact = Callable[[Fields, Inputs], dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _matrix(array: np.ndarray, transform: str) -> np.ndarray:
    wide = np.asarray(array, dtype=np.float64)
    return np.swapaxes(wide, -1, -2) if transform.endswith("TRANSPOSE") else wide


def _gemm_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    a = _matrix(x["ATensor"], f.enum("TransA"))
    b = _matrix(x["BTensor"], f.enum("TransB"))
    alpha = f.float32("Alpha") if f.present("Alpha") else 1.0
    beta = f.float32("Beta") if f.present("Beta") else 1.0
    with np.errstate(all="ignore"):
        products = np.matmul(np.abs(a), np.abs(b))
        value = alpha * np.matmul(a, b)
        bound = abs(alpha) * products
        largest = np.maximum(products, bound)  # the sum before Alpha scales it
        if "CTensor" in x:
            c = np.asarray(x["CTensor"], dtype=np.float64)
            value = value + beta * c
            bound = bound + abs(beta) * np.abs(c)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


def _windowed(f: Fields, data: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """CONVOLUTION without its bias, in the type of `data` and `weights` (FLOAT64, or INT64
    for the integer convolutions: exact), one filter element (window offset) at a time.

    FORWARD: output[n, o, p] = sum over the group's input channels c and window offsets j of
    input[n, c, p * Strides + j * Dilations - StartPadding] * filter[o, c, j], the input zero
    outside its sizes; filter {OutputChannelCount, InputChannelCount / GroupCount, window...}.
    BACKWARD (transposed): each input element spreads its window into the output,
    output[n, o, i * Strides + j * Dilations - StartPadding] += input[n, c, i] * filter[c, o, j];
    filter {InputChannelCount, OutputChannelCount / GroupCount, window...}. Mode: the page's
    table gives the filter's orientation as a gathering window sees it, flipped ("transposed
    along x,y axes") for CONVOLUTION with FORWARD and for CROSS_CORRELATION with BACKWARD; the
    scatter form above sees the BACKWARD filter flipped once more, so in both forms here the
    filter is flipped along every spatial dimension exactly for Mode CONVOLUTION.
    OutputPadding: FORWARD, zeros after the windows that fit; BACKWARD, the output's end
    extends into the transposed result (cells it does not reach stay 0), as ONNX's
    ConvTranspose output_padding. An operator without Direction, Mode or OutputPadding (the
    integer and quantized convolutions) is FORWARD, CROSS_CORRELATION and unpadded.
    """
    spatial = f.integer("DimensionCount")
    strides = f.integers("Strides", spatial)
    dilations = f.integers("Dilations", spatial)
    start = f.integers("StartPadding", spatial)
    groups = f.integer("GroupCount")
    backward = f.present("Direction") and f.enum("Direction") == "BACKWARD"
    if f.present("Mode") and f.enum("Mode") == "CONVOLUTION":
        weights = weights[(slice(None), slice(None), *[slice(None, None, -1)] * spatial)]
    out_sizes = f.sizes("OutputTensor")
    batch, outputs = out_sizes[0], out_sizes[1]
    # FORWARD: the windows that fit; OutputPadding's cells after them stay 0
    padding = f.integers("OutputPadding", spatial) if f.present("OutputPadding") else [0] * spatial
    counts = [n - p for n, p in zip(out_sizes[2:], padding, strict=True)]
    inputs = data.shape[1]
    result = np.zeros(out_sizes, np.result_type(data, weights))
    for offset in np.ndindex(*weights.shape[2:]):
        tap = weights[(slice(None), slice(None), *offset)]  # {O, C/G} or {C, O/G}
        if not backward:
            picked = data  # input[p * stride + j * dilation - start] for each output p, or 0
            for d in range(spatial):
                positions = np.arange(counts[d]) * strides[d] + offset[d] * dilations[d] - start[d]
                inside = (positions >= 0) & (positions < data.shape[2 + d])
                taken = np.take(picked, np.clip(positions, 0, data.shape[2 + d] - 1), axis=2 + d)
                shape = [1] * taken.ndim
                shape[2 + d] = -1
                picked = np.where(inside.reshape(shape), taken, taken.dtype.type(0))  # the padding
            grouped = picked.reshape(batch, groups, inputs // groups, *counts)
            taps = tap.reshape(groups, outputs // groups, inputs // groups)
            summed = np.einsum("ngc...,goc->ngo...", grouped, taps).reshape(batch, outputs, *counts)
            result[(slice(None), slice(None), *[slice(0, n) for n in counts])] += summed
        else:
            grouped = data.reshape(batch, groups, inputs // groups, *data.shape[2:])
            taps = tap.reshape(groups, inputs // groups, outputs // groups)
            spread = np.einsum("ngc...,gco->ngo...", grouped, taps).reshape(
                batch, outputs, *data.shape[2:]
            )
            # input position i lands on i * stride + j * dilation - start, where inside
            target: list[Any] = [slice(None), slice(None)]
            source: list[Any] = [slice(None), slice(None)]
            for d in range(spatial):
                positions = (
                    np.arange(data.shape[2 + d]) * strides[d] + offset[d] * dilations[d] - start[d]
                )
                inside = (positions >= 0) & (positions < out_sizes[2 + d])
                source.append(np.flatnonzero(inside))
                target.append(positions[inside])
            if all(len(t) for t in target[2:]):
                result[np.ix_(*[np.arange(n) for n in (batch, outputs)], *target[2:])] += spread[
                    np.ix_(*[np.arange(n) for n in (batch, outputs)], *source[2:])
                ]
    return result


def _convolution_exact(
    f: Fields, x: Inputs
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    data = np.asarray(x["InputTensor"], dtype=np.float64)
    weights = np.asarray(x["FilterTensor"], dtype=np.float64)
    with np.errstate(all="ignore"):
        value = _windowed(f, data, weights)
        bound = _windowed(f, np.abs(data), np.abs(weights))
        largest = bound.copy()
        if "BiasTensor" in x:
            bias = np.asarray(x["BiasTensor"], dtype=np.float64)  # {1, C, 1, ...}: broadcast
            value = value + bias
            bound = bound + np.abs(bias)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


def _zero_point(x: Inputs, field: str, shape: tuple[int, int]) -> np.ndarray:
    """A zero point ({1, 1, 1, 1} per tensor, {1, 1, M, 1} per row of A or {1, 1, 1, N} per
    column of B, leading 1s optional) as a {M, 1} or {1, N} matrix; 0 where absent."""
    if field not in x:
        return np.zeros((1, 1), np.int64)
    return np.asarray(x[field]).astype(np.int64).reshape(shape)


def _integers(x: Inputs, prefix: str, zero_point_shape: tuple[int, int], exact: bool) -> np.ndarray:
    """A - AZeroPoint (or B - BZeroPoint) as INT64, or as Python integers where products of
    32-bit values (up to 2^66) must be summed exactly."""
    values = np.asarray(x[f"{prefix}Tensor"]).astype(np.int64)
    difference: np.ndarray = values - _zero_point(x, f"{prefix}ZeroPointTensor", zero_point_shape)
    return difference.astype(object) if exact else difference


def _integer_sums(x: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """(A - AZeroPoint) x (B - BZeroPoint) and |A - AZeroPoint| x |B - BZeroPoint|, exact:
    INT64 for 8- and 16-bit inputs, Python integers for 32-bit ones."""
    wide = max(np.asarray(x["ATensor"]).dtype.itemsize, np.asarray(x["BTensor"]).dtype.itemsize)
    exact = wide >= 4
    a = _integers(x, "A", (-1, 1), exact)
    b = _integers(x, "B", (1, -1), exact)
    return np.matmul(a, b), np.matmul(np.abs(a), np.abs(b))


def _matrix_multiply_integer(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """ "{M,K} x {K,N} = {M,N}" on A - AZeroPoint and B - BZeroPoint, into INT32."""
    total, _ = _integer_sums(x)
    return {"OutputTensor": to_type(total, f.dtype("OutputTensor"))}


def _scale(x: Inputs, field: str, shape: tuple[int, int]) -> np.ndarray:
    return np.asarray(x[field], dtype=np.float64).reshape(shape)


def _integer_to_float_exact(
    f: Fields, x: Inputs
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(A - AZeroPoint) x (B - BZeroPoint) * AScale * BScale + Bias: the exact integer sums,
    then FLOAT64."""
    total, absolute = (s.astype(np.float64) for s in _integer_sums(x))
    a_scale = _scale(x, "AScaleTensor", (-1, 1))
    b_scale = _scale(x, "BScaleTensor", (1, -1))
    with np.errstate(all="ignore"):
        value = total * a_scale * b_scale
        bound = absolute * np.abs(a_scale * b_scale)
        # the sum scaled by one of the scales first, or the scales' product (onnxruntime's
        # MatMulIntegerToFloat multiplies them first)
        scales = np.maximum(np.abs(a_scale), np.abs(b_scale))
        largest = np.maximum(np.maximum(absolute * scales, np.abs(a_scale * b_scale)), bound)
        if "BiasTensor" in x:
            bias = np.asarray(x["BiasTensor"], dtype=np.float64)
            value = value + bias
            bound = bound + np.abs(bias)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


def _quantized_linear_matrix_multiply(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """The page: "equivalent to dequantizing the inputs, then performing matrix multiply, and
    then quantizing the output". Dequantize: (Input - ZeroPoint) * Scale; quantize:
    clamp(round(Input / Scale) + ZeroPoint, Min, Max), as ELEMENT_WISE_QUANTIZE_LINEAR."""
    a = np.asarray(x["ATensor"], np.float64) - _zero_point(x, "AZeroPointTensor", (-1, 1))
    b = np.asarray(x["BTensor"], np.float64) - _zero_point(x, "BZeroPointTensor", (1, -1))
    with np.errstate(all="ignore"):
        product = np.matmul(
            a * _scale(x, "AScaleTensor", (-1, 1)), b * _scale(x, "BScaleTensor", (1, -1))
        )
        dtype = f.dtype("OutputTensor")
        zero_point = _zero_point(x, "OutputZeroPointTensor", (-1, 1))
        quantized = quantize_linear(
            product, _scale(x, "OutputScaleTensor", (-1, 1)), zero_point, dtype
        )
    return {"OutputTensor": to_type(quantized, dtype)}


def _per_channel(x: Inputs, field: str, rank: int) -> np.ndarray:
    """A per-tensor or per-output-channel quantization tensor ({1, C, 1, 1}, leading 1s
    optional) as {1, C, 1, ...} of `rank` dimensions."""
    return np.asarray(x[field]).reshape(1, -1, *(1,) * (rank - 2))


def _integer_convolution(f: Fields, x: Inputs) -> np.ndarray:
    """The integer convolutions' sum, exact in INT64: (InputTensor - InputZeroPoint) gathered
    window by window, the padding's cells 0 (the input's zero point: they add nothing), times
    (FilterTensor - FilterZeroPoint), the filter's zero point per tensor or per output
    channel (FilterTensor's dimension 0)."""
    data = np.asarray(x["InputTensor"]).astype(np.int64)
    weights = np.asarray(x["FilterTensor"]).astype(np.int64)
    if "InputZeroPointTensor" in x:
        data = data - np.asarray(x["InputZeroPointTensor"]).astype(np.int64).reshape(())
    if "FilterZeroPointTensor" in x:
        zero_point = np.asarray(x["FilterZeroPointTensor"]).astype(np.int64)
        weights = weights - zero_point.reshape(-1, *(1,) * (weights.ndim - 1))
    return _windowed(f, data, weights)


def _convolution_integer(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """The page: "forward convolution on integer data", zero points subtracted, into INT32."""
    return {"OutputTensor": to_type(_integer_convolution(f, x), f.dtype("OutputTensor"))}


def _quantized_linear_convolution(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """The page: "equivalent to dequantizing the inputs, convolving, and then quantizing the
    output": the exact sum plus Bias (INT32, in the scale InputScale * FilterScale, as ONNX's
    QLinearConv), times InputScale and FilterScale (per output channel) in FLOAT64, quantized
    with ELEMENT_WISE_QUANTIZE_LINEAR's rule (per-tensor OutputScale and OutputZeroPoint)."""
    total = _integer_convolution(f, x).astype(np.float64)
    rank = total.ndim
    if "BiasTensor" in x:
        total = total + np.asarray(x["BiasTensor"], np.float64)  # {1, C, 1, ...}
    dtype = f.dtype("OutputTensor")
    zero_point = _zero_point(x, "OutputZeroPointTensor", (1, 1)).reshape(())
    with np.errstate(all="ignore"):
        real = (
            total
            * np.asarray(x["InputScaleTensor"], np.float64).reshape(())
            * _per_channel(x, "FilterScaleTensor", rank).astype(np.float64)
        )
        scale = np.asarray(x["OutputScaleTensor"], np.float64).reshape(())
        quantized = quantize_linear(real, scale, zero_point, dtype)
    return {"OutputTensor": to_type(quantized, dtype)}


def _windows(f: Fields, spatial: tuple[int, ...]) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """The page's blocks, one element at a time: (k, l, p) for window element k (row-major over
    WindowSizes) of block l (row-major over BlocksPerDimension), p its position in the
    unpadded spatial dimensions, for the elements that fall inside them (not in the padding).
    BlocksPerDimension[d] = ((SpatialSize[d] + StartPadding[d] + EndPadding[d] -
    Dilations[d] * (WindowSizes[d] - 1) - 1) / stride[d]) + 1."""
    count = len(spatial)
    window = f.integers("WindowSizes", count)
    strides = f.integers("Strides", count)
    dilations = f.integers("Dilations", count)
    start = f.integers("StartPadding", count)
    end = f.integers("EndPadding", count)
    blocks = [
        (spatial[d] + start[d] + end[d] - dilations[d] * (window[d] - 1) - 1) // strides[d] + 1
        for d in range(count)
    ]
    for index, block in enumerate(itertools.product(*(range(b) for b in blocks))):
        for k, offset in enumerate(itertools.product(*(range(w) for w in window))):
            p = tuple(
                block[d] * strides[d] + offset[d] * dilations[d] - start[d] for d in range(count)
            )
            if all(0 <= p[d] < spatial[d] for d in range(count)):
                yield k, index, p


def _unfold(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """OutputTensor[n, c * prod(WindowSizes) + k, l] = InputTensor[n, c, p...]; 0 in the
    padding."""
    data = np.asarray(x["InputTensor"])
    _, channels, *spatial = data.shape
    window = math.prod(f.integers("WindowSizes", len(spatial)))
    output = np.zeros(f.sizes("OutputTensor"), f.dtype("OutputTensor"))
    for k, block, p in _windows(f, tuple(spatial)):
        for c in range(channels):
            at: tuple[Any, ...] = (slice(None), c, *p)
            output[:, c * window + k, block] = data[at]
    return {"OutputTensor": output}


def _fold_sums(f: Fields, data: np.ndarray, dtype: Any) -> np.ndarray:
    """OutputTensor[n, c, p...] = the sum, in `dtype`, of InputTensor[n, c * prod(WindowSizes)
    + k, l] over the window elements (k, l) at p."""
    n, channels, *spatial = f.sizes("OutputTensor")
    window = math.prod(f.integers("WindowSizes", len(spatial)))
    total = np.zeros((n, channels, *spatial), dtype)
    for k, block, p in _windows(f, tuple(spatial)):
        for c in range(channels):
            at: tuple[Any, ...] = (slice(None), c, *p)
            total[at] += data[:, c * window + k, block].astype(dtype)
    return total


def _fold_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The sums in FLOAT64 (FLOAT64 data in long double, where the platform has a wider one,
    so that the reference's own rounding stays below a FLOAT64 result's allowance) and the sums
    of absolute values, the bound."""
    data = np.asarray(x["InputTensor"])
    wide = np.longdouble if data.dtype == np.float64 else np.float64
    value = _fold_sums(f, data, wide).astype(np.float64)
    bound = _fold_sums(f, np.abs(data.astype(np.float64)), wide).astype(np.float64)
    return {"OutputTensor": (value, bound, bound)}


def _fold(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """Floats: the FLOAT64 sums rounded once; integers: summed in 64 bits (the type's own
    result while no sum overflows, FOLD.R1)."""
    data = np.asarray(x["InputTensor"])
    output_type = f.dtype("OutputTensor")
    if data.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return {"OutputTensor": _fold_exact(f, x)["OutputTensor"][0].astype(output_type)}
    wide = np.uint64 if data.dtype.kind == "u" else np.int64
    with np.errstate(all="ignore"):
        return {"OutputTensor": _fold_sums(f, data, wide).astype(output_type)}


# The unit roundoff and the smallest normal value of the accumulation types.
_UNIT = {"FLOAT16": (2.0**-11, 2.0**-14), "FLOAT32": (2.0**-24, 2.0**-126)}


def _head_counts(f: Fields) -> tuple[int, int]:
    """The query's and the key's and value's head counts: MULTIHEAD_ATTENTION1's
    QueryHeadCount and KeyValueHeadCount, MULTIHEAD_ATTENTION's HeadCount for both."""
    if f.spec.name == "MULTIHEAD_ATTENTION":
        return f.integer("HeadCount"), f.integer("HeadCount")
    return f.integer("QueryHeadCount"), f.integer("KeyValueHeadCount")


def _attention_parts(f: Fields, x: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query {B, S, H, D}, key {B, L, G, D} and value {B, L, G, Dv} in FLOAT64 (H query heads,
    G key and value heads), from the page's forms: QueryTensor {B, S, H * D} (leading 1s) split
    into heads, or a stacked tensor's slice along its fourth dimension (StackedQueryKey: query,
    key; StackedKeyValue: key, value; StackedQueryKeyValue: query, key, value)."""
    query_heads, key_value_heads = _head_counts(f)

    def split(name: str, heads: int) -> np.ndarray:
        data = np.asarray(x[name], np.float64)
        b, n, hidden = data.shape[-3:]
        return data.reshape(b, n, heads, hidden // heads)

    def stacked(name: str, index: int) -> np.ndarray:
        return np.asarray(x[name], np.float64)[:, :, :, index, :]

    sources = {
        "query": [
            ("QueryTensor", None),
            ("StackedQueryKeyTensor", 0),
            ("StackedQueryKeyValueTensor", 0),
        ],
        "key": [
            ("KeyTensor", None),
            ("StackedQueryKeyTensor", 1),
            ("StackedKeyValueTensor", 0),
            ("StackedQueryKeyValueTensor", 1),
        ],
        "value": [
            ("ValueTensor", None),
            ("StackedKeyValueTensor", 1),
            ("StackedQueryKeyValueTensor", 2),
        ],
    }
    found = []
    counts = (query_heads, key_value_heads, key_value_heads)
    for role, heads in zip(("query", "key", "value"), counts, strict=True):
        name, index = next((n, i) for n, i in sources[role] if n in x)
        found.append(split(name, heads) if index is None else stacked(name, index))
    q, k, v = found
    return q, k, v


def _attention_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The page's steps in FLOAT64, one batch and head at a time, with the bounds the spec's
    notes derive: for the output B + (sum_j p_j * (exp(E_j + F) - 1) * |v_j| + sum_j w_j *
    |v_j|) / (u * KS) (B = sum_j p_j * |v_j|; w_j = p_j * exp(E_j + F) where that is below
    tiny, else 0; E_j = u * ((headSize + 6) * a_j + |max score|) +
    (headSize + 5) * tiny, a_j = |Scale| * sum |q * k| +
    |relative position bias| + |mask addend|; F = log sum_i p_i * exp(E_i); u and tiny the
    unit roundoff and smallest normal value of the widest accumulation the output type allows,
    KS the spec's), |key| + |bias| (|value| + |bias|) for the
    present key and value."""
    q, k, v = _attention_parts(f, x)
    batch, sequence, heads, size = q.shape
    key_value_heads, value_size = v.shape[-2:]
    group = heads // key_value_heads  # the query heads each key and value head serves
    q_abs, k_abs, v_abs = np.abs(q), np.abs(k), np.abs(v)
    if "BiasTensor" in x:
        bias = np.asarray(x["BiasTensor"], np.float64).reshape(-1)
        query_end, key_end = heads * size, (heads + key_value_heads) * size
        pieces = (bias[:query_end], bias[query_end:key_end], bias[key_end:])
        q_bias, k_bias, v_bias = (
            p.reshape(n, -1)
            for p, n in zip(pieces, (heads, key_value_heads, key_value_heads), strict=True)
        )
        q, k, v = q + q_bias, k + k_bias, v + v_bias
        q_abs, k_abs, v_abs = q_abs + np.abs(q_bias), k_abs + np.abs(k_bias), v_abs + np.abs(v_bias)
    # {B, H, n, size}: the past first along the sequence
    k, v, k_abs, v_abs = (np.transpose(t, (0, 2, 1, 3)) for t in (k, v, k_abs, v_abs))
    if "PastKeyTensor" in x:
        past_key = np.asarray(x["PastKeyTensor"], np.float64)
        past_value = np.asarray(x["PastValueTensor"], np.float64)
        past_key = past_key.reshape(past_key.shape[-4:])
        past_value = past_value.reshape(past_value.shape[-4:])
        k = np.concatenate([past_key, k], axis=2)
        v = np.concatenate([past_value, v], axis=2)
        k_abs = np.concatenate([np.abs(past_key), k_abs], axis=2)
        v_abs = np.concatenate([np.abs(past_value), v_abs], axis=2)
    total = k.shape[2]
    scale = f.float32("Scale")
    filler = f.float32("MaskFilterValue")
    relative = None
    if "RelativePositionBiasTensor" in x:
        data = np.asarray(x["RelativePositionBiasTensor"], np.float64)
        relative = np.broadcast_to(data.reshape(data.shape[-4:]), (batch, heads, sequence, total))
    kind = f.enum("MaskType") if "MaskTensor" in x else "NONE"
    mask = np.asarray(x["MaskTensor"]).astype(np.int64) if "MaskTensor" in x else None
    output = np.zeros((batch, sequence, heads * value_size))
    bound = np.zeros_like(output)
    reach = np.zeros_like(output)
    unit, tiny = _UNIT["FLOAT16" if f.dtype("OutputTensor") == np.float16 else "FLOAT32"]
    terms = comparison_terms(f)
    for b in range(batch):
        for h in range(heads):
            g = h // group  # the key and value head query head h shares
            scores = scale * (q[b, :, h, :] @ k[b, g].T)  # {S, T}
            magnitude = abs(scale) * (q_abs[b, :, h, :] @ k_abs[b, g].T)
            if relative is not None:
                scores = scores + relative[b, h]
                magnitude = magnitude + np.abs(relative[b, h])
            if kind == "BOOLEAN":
                assert mask is not None
                shaped = mask.reshape(
                    mask.shape[-4:] if mask.ndim >= 4 else (1,) * (4 - mask.ndim) + mask.shape
                )
                zero = np.broadcast_to(shaped, (batch, heads, sequence, total))[b, h] == 0
                scores = np.where(zero, scores + filler, scores)
                magnitude = np.where(zero, magnitude + abs(filler), magnitude)
            elif kind in ("KEY_SEQUENCE_LENGTH", "KEY_SEQUENCE_END_START"):
                assert mask is not None
                rows = mask.reshape(-1, batch)
                end, start = rows[0, b], (rows[1, b] if kind == "KEY_SEQUENCE_END_START" else 0)
                outside = np.array([not start <= j < end for j in range(total)])
                scores = np.where(outside[None, :], filler, scores)
                magnitude = np.where(outside[None, :], abs(filler), magnitude)
            top = scores.max(axis=1, keepdims=True)
            shifted = np.exp(scores - top)
            weights = shifted / shifted.sum(axis=1, keepdims=True)
            columns = slice(h * value_size, (h + 1) * value_size)
            output[b, :, columns] = weights @ v[b, g]
            spread = weights @ v_abs[b, g]  # B: the second product on absolute values
            # E_j: each score's error, then the softmax's worst relative change per weight
            error = unit * ((size + 6) * magnitude + np.abs(top)) + (size + 5) * tiny
            with np.errstate(over="ignore"):
                mean = np.log((weights * np.exp(error)).sum(axis=1, keepdims=True))
                change = np.expm1(error + mean)
            perturbed = np.where(weights > 0, weights * change, 0.0) @ v_abs[b, g]
            # a weight below the smallest normal value may be flushed to 0
            with np.errstate(over="ignore", invalid="ignore"):
                largest = weights * np.exp(error + mean)
            flushed = np.where(largest < tiny, largest, 0.0)
            perturbed = perturbed + flushed @ v_abs[b, g]
            bound[b, :, columns] = spread + perturbed / (unit * terms)
            # what the steps hold: the biased query, key and value, the scores
            held = max(
                np.nanmax(a, initial=0.0) for a in (q_abs[b, :, h], k_abs[b, g], v_abs[b, g])
            )
            reach[b, :, columns] = np.maximum(
                bound[b, :, columns], magnitude.max(axis=1, keepdims=True)
            )
            reach[b, :, columns] = np.maximum(reach[b, :, columns], held)
    results = {
        "OutputTensor": (output, bound, reach),
        "OutputPresentKeyTensor": (k, k_abs, k_abs),
        "OutputPresentValueTensor": (v, v_abs, v_abs),
    }
    return {
        name: tuple(a.reshape(f.sizes(name)) for a in result)  # type: ignore[misc]
        for name, result in results.items()
        if f.present(name)
    }


EXACT: dict[str, Exact] = {
    "GEMM": _gemm_exact,
    "CONVOLUTION": _convolution_exact,
    "FOLD": _fold_exact,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": _integer_to_float_exact,
    "MULTIHEAD_ATTENTION": _attention_exact,
    "MULTIHEAD_ATTENTION1": _attention_exact,
}


def _rounded(name: str) -> Operator:
    """The operator as the reference runs it: exact, activated, rounded once."""

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            with np.errstate(all="ignore"):
                activated = fused_activation(name, f.desc.get("FusedActivation"), value)
                outputs[field] = activated.astype(f.dtype(field))
        return outputs

    return run


CONVOLUTION: dict[str, Operator] = {
    **{name: _rounded(name) for name in EXACT},
    "MATRIX_MULTIPLY_INTEGER": _matrix_multiply_integer,
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": _quantized_linear_matrix_multiply,
    "FOLD": _fold,
    "UNFOLD": _unfold,
    "CONVOLUTION_INTEGER": _convolution_integer,
    "QUANTIZED_LINEAR_CONVOLUTION": _quantized_linear_convolution,
}

UNDEFINED_NOTES: dict[str, str] = {
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": (
        "The page: 'A scale value of 0 results in undefined behavior'. round() names no tie "
        "rule; the reference rounds halves to even. A NaN quotient (a NaN or infinite scale) "
        "has no quantized value; the reference writes 0, as ELEMENT_WISE_QUANTIZE_LINEAR's "
        "reference does."
    ),
    "QUANTIZED_LINEAR_CONVOLUTION": (
        "The page: 'A scale value of 0 results in undefined behavior'. round() names no tie "
        "rule; the reference rounds halves to even. A NaN quotient (a NaN or infinite scale) "
        "has no quantized value; the reference writes 0, as ELEMENT_WISE_QUANTIZE_LINEAR's "
        "reference does."
    ),
}
