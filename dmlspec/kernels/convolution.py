"""The convolution family as JAX (convolution, matrix multiplication, attention): one table of
functions, one primitive that runs them; so far GEMM, CONVOLUTION, the integer and quantized
matrix multiplications, FOLD, UNFOLD, the integer and quantized convolutions and
MULTIHEAD_ATTENTION(1).

`convolution` is the primitive their specs name. Floating inputs are accumulated in FLOAT32
(FLOAT16 too: DirectML's accumulation unless a backend runs with half precision allowed),
at XLA's highest precision (no reduced-precision passes on accelerators), and rounded once to
the output type after Alpha, Beta, the bias and the FusedActivation. Integer products are
summed exactly (lax.dot_general with an integer preferred_element_type), zero points
subtracted first (CONVOLUTION_INTEGER's and QUANTIZED_LINEAR_CONVOLUTION's lax.conv_general_dilated
in INT32); the quantized operators requantize as ELEMENT_WISE_QUANTIZE_LINEAR does.
UNFOLD (im2col) gathers window elements (exact); FOLD (col2im) adds them back with one
scatter-add. MULTIHEAD_ATTENTION and MULTIHEAD_ATTENTION1 (grouped-query: each key and value head
repeated for the query heads it serves): two lax.dot_generals per head around jax.nn.softmax,
all in FLOAT32, rounded once to the output type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .element_wise import fused_activation, quantize_wide
from .indexing import member

__all__ = ["FUNCTIONS", "convolution"]

Array = jax.Array


def _accumulation(dtype: Any) -> Any:
    return jnp.float64 if jnp.dtype(dtype) == jnp.float64 else jnp.float32


def _gemm(
    a: Array,
    b: Array,
    c: Array | None,
    *,
    trans_a: str,
    trans_b: str,
    alpha: float,
    beta: float,
    output_type: str,
    activation: tuple[tuple[str, Any], ...] | None = None,
) -> Array:
    """Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C), over the leading
    (batch, channel) dimensions."""
    wide = _accumulation(a.dtype)
    if member(trans_a, "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        a = jnp.swapaxes(a, -1, -2)
    if member(trans_b, "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        b = jnp.swapaxes(b, -1, -2)
    batch = tuple(range(a.ndim - 2))
    product = lax.dot_general(
        a,
        b,
        (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)),
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    )
    result = jnp.asarray(alpha, wide) * product
    if c is not None:
        result = result + jnp.asarray(beta, wide) * c.astype(wide)
    if activation:
        result = fused_activation(result, activation)
    return result.astype(output_type)


def _convolution(
    x: Array,
    w: Array,
    bias: Array | None,
    *,
    mode: str,
    direction: str,
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
    output_padding: tuple[int, ...],
    group_count: int,
    output_type: str,
    activation: tuple[tuple[str, Any], ...] | None = None,
) -> Array:
    """CONVOLUTION through lax.conv_general_dilated: FORWARD as it is (OutputPadding's zeros
    appended), BACKWARD as the transposed convolution (the input dilated by Strides, the filter
    {InputChannelCount, OutputChannelCount / GroupCount, ...} regrouped to a forward filter
    {OutputChannelCount, InputChannelCount / GroupCount, ...}, paddings (window - 1) * dilation
    - StartPadding before and - EndPadding + OutputPadding after; a negative one crops). The
    filter is flipped spatially for CONVOLUTION with FORWARD and CROSS_CORRELATION with BACKWARD
    (the page's table of filter orientations)."""
    wide = _accumulation(x.dtype)
    x, w = x.astype(wide), w.astype(wide)  # FLOAT16 -> FLOAT32 is exact; products too
    spatial = tuple(range(2, x.ndim))
    backward = member(direction, "DML_CONVOLUTION_DIRECTION_") == "BACKWARD"
    convolution = member(mode, "DML_CONVOLUTION_MODE_") == "CONVOLUTION"
    if backward != convolution:
        w = jnp.flip(w, spatial)
    window = w.shape[2:]
    if backward:
        inputs, per_group = w.shape[0], w.shape[1]
        w = w.reshape(group_count, inputs // group_count, per_group, *window)
        w = jnp.swapaxes(w, 1, 2).reshape(group_count * per_group, inputs // group_count, *window)
        reach = [(k - 1) * d for k, d in zip(window, dilations, strict=True)]
        padding = [
            (r - s, r - e + o)
            for r, s, e, o in zip(reach, start_padding, end_padding, output_padding, strict=True)
        ]
        lhs_dilation, window_strides = strides, (1,) * len(strides)
    else:
        padding = list(zip(start_padding, end_padding, strict=True))
        lhs_dilation, window_strides = (1,) * len(strides), strides
    crop = [(max(0, -lo), max(0, -hi)) for lo, hi in padding]
    result = lax.conv_general_dilated(
        x,
        w,
        window_strides=window_strides,
        padding=[(max(0, lo), max(0, hi)) for lo, hi in padding],
        lhs_dilation=lhs_dilation,
        rhs_dilation=dilations,
        feature_group_count=group_count,
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    )
    result = result[
        (..., *[slice(lo, n - hi) for (lo, hi), n in zip(crop, result.shape[2:], strict=True)])
    ]
    if not backward and any(output_padding):
        result = jnp.pad(result, [(0, 0), (0, 0), *[(0, p) for p in output_padding]])
    if bias is not None:
        result = result + bias.astype(wide)
    if activation:
        result = fused_activation(result, activation)
    return result.astype(output_type)


def _rows(values: Array) -> Array:
    """A per-tensor or per-row quantization tensor ({1, 1, 1, 1} or {1, 1, M, 1}, leading 1s
    optional) as a column that broadcasts over {.., M, N}."""
    return values.reshape(-1, 1)


def _columns(values: Array) -> Array:
    """A per-tensor or per-column quantization tensor ({.., 1, N}) as a row over {.., M, N}."""
    return values.reshape(1, -1)


def _integer_product(
    a: Array, a_zero_point: Array | None, b: Array, b_zero_point: Array | None
) -> Array:
    """(A - AZeroPoint) x (B - BZeroPoint) over the leading dimensions, exactly: 8-bit inputs
    in INT32 (DirectML's output type; exact up to K = 33025), 16-bit ones in INT64; 32-bit ones
    (products up to 2^66, beyond any integer accumulator) in FLOAT64."""
    bits = max(a.dtype.itemsize, b.dtype.itemsize) * 8
    wide = jnp.int32 if bits == 8 else jnp.int64 if bits == 16 else jnp.float64
    difference = jnp.int64 if bits == 32 else wide  # the subtraction itself is exact
    a = a.astype(difference)
    b = b.astype(difference)
    if a_zero_point is not None:
        a = a - _rows(a_zero_point).astype(difference)
    if b_zero_point is not None:
        b = b - _columns(b_zero_point).astype(difference)
    batch = tuple(range(a.ndim - 2))
    return lax.dot_general(
        a.astype(wide),
        b.astype(wide),
        (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)),
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    )


def _matrix_multiply_integer(
    a: Array, a_zero_point: Array | None, b: Array, b_zero_point: Array | None
) -> Array:
    """(A - AZeroPoint) x (B - BZeroPoint), summed in INT32."""
    return _integer_product(a, a_zero_point, b, b_zero_point).astype(jnp.int32)


def _dequantized_product(
    a: Array,
    a_scale: Array,
    a_zero_point: Array | None,
    b: Array,
    b_scale: Array,
    b_zero_point: Array | None,
) -> Array:
    """The exact integer product scaled by AScale (per row), then by BScale (per column), in
    FLOAT64: no intermediate overflows or underflows where the exact value does not."""
    product = _integer_product(a, a_zero_point, b, b_zero_point).astype(jnp.float64)
    return product * _rows(a_scale).astype(jnp.float64) * _columns(b_scale).astype(jnp.float64)


def _matrix_multiply_integer_to_float(
    a: Array,
    a_scale: Array,
    a_zero_point: Array | None,
    b: Array,
    b_scale: Array,
    b_zero_point: Array | None,
    bias: Array | None,
    *,
    output_type: str,
) -> Array:
    """((A - AZeroPoint) x (B - BZeroPoint)) * AScale * BScale + Bias, rounded once to the
    output type."""
    result = _dequantized_product(a, a_scale, a_zero_point, b, b_scale, b_zero_point)
    if bias is not None:
        result = result + bias.astype(jnp.float64)
    return result.astype(output_type)


def _quantized_linear_matrix_multiply(
    a: Array,
    a_scale: Array,
    a_zero_point: Array | None,
    b: Array,
    b_scale: Array,
    b_zero_point: Array | None,
    output_scale: Array,
    output_zero_point: Array | None,
    *,
    output_type: str,
) -> Array:
    """Dequantized inputs multiplied, then quantized with OutputScale and OutputZeroPoint (per
    tensor or per row) as ELEMENT_WISE_QUANTIZE_LINEAR quantizes: rounded, saturated. In
    FLOAT64, as QUANTIZED_LINEAR_CONVOLUTION: a product beyond FLOAT32's range divided by a
    large OutputScale is an ordinary value, where FLOAT32 would make it infinity / infinity."""
    product = _dequantized_product(a, a_scale, a_zero_point, b, b_scale, b_zero_point)
    zero_point = None if output_zero_point is None else _rows(output_zero_point)
    return quantize_wide(product, _rows(output_scale), zero_point, output_type)


def _channels(values: Array, rank: int) -> Array:
    """A per-tensor or per-channel quantization tensor ({1, 1, 1, 1} or {1, C, 1, 1}, leading
    1s optional) as {1, C, 1, ...} of `rank` dimensions, broadcasting over {N, C, spatial...}."""
    return values.reshape(1, -1, *(1,) * (rank - 2))


def _integer_convolution_sum(
    x: Array,
    x_zero_point: Array | None,
    w: Array,
    w_zero_point: Array | None,
    *,
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
    group_count: int,
) -> Array:
    """The FORWARD cross-correlation of InputTensor - InputZeroPoint with FilterTensor -
    FilterZeroPoint (per output channel), summed exactly in INT32 (8-bit inputs: exact up to
    33025 products an element). The padding is applied to the differences, so its zeros are
    the input's zero point: it adds nothing to the sum."""
    x = x.astype(jnp.int32)
    w = w.astype(jnp.int32)
    if x_zero_point is not None:
        x = x - x_zero_point.astype(jnp.int32).reshape(())
    if w_zero_point is not None:
        w = w - w_zero_point.astype(jnp.int32).reshape(-1, *(1,) * (w.ndim - 1))
    return lax.conv_general_dilated(
        x,
        w,
        window_strides=strides,
        padding=list(zip(start_padding, end_padding, strict=True)),
        rhs_dilation=dilations,
        feature_group_count=group_count,
        preferred_element_type=jnp.int32,
    )


def _convolution_integer(
    x: Array, x_zero_point: Array | None, w: Array, w_zero_point: Array | None, **window: Any
) -> Array:
    """(InputTensor - InputZeroPoint) convolved with (FilterTensor - FilterZeroPoint), INT32."""
    return _integer_convolution_sum(x, x_zero_point, w, w_zero_point, **window)


def _quantized_linear_convolution(
    x: Array,
    x_scale: Array,
    x_zero_point: Array | None,
    w: Array,
    w_scale: Array,
    w_zero_point: Array | None,
    bias: Array | None,
    output_scale: Array,
    output_zero_point: Array | None,
    *,
    output_type: str,
    **window: Any,
) -> Array:
    """The exact integer sum plus Bias (INT32, in the sum's scale), scaled by InputScale and
    FilterScale (per output channel), then quantized with OutputScale and OutputZeroPoint by
    the page's Quantize function (round() halves to even, saturated), all in FLOAT64."""
    total = _integer_convolution_sum(x, x_zero_point, w, w_zero_point, **window)
    real = total.astype(jnp.float64)
    if bias is not None:
        real = real + bias.astype(jnp.float64)
    real = real * x_scale.astype(jnp.float64).reshape(())
    real = real * _channels(w_scale, real.ndim).astype(jnp.float64)
    zero_point = None if output_zero_point is None else output_zero_point.reshape(())
    return quantize_wide(real, output_scale.reshape(()), zero_point, output_type)


def _window_positions(
    spatial: tuple[int, ...],
    window_sizes: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
) -> np.ndarray:
    """Row-major offsets into the padded spatial block of every window element (k, row-major
    over WindowSizes) of every block (l, row-major over the windows that fit): shape {prod(W),
    L}. Static: computed with NumPy while tracing."""
    padded = [n + a + b for n, a, b in zip(spatial, start_padding, end_padding, strict=True)]
    coordinates = []
    for size, window, stride, dilation in zip(
        padded, window_sizes, strides, dilations, strict=True
    ):
        blocks = (size - (window - 1) * dilation - 1) // stride + 1
        coordinates.append(
            np.arange(window)[:, None] * dilation + np.arange(blocks)[None, :] * stride
        )
    offsets = np.zeros((1, 1), np.int64)
    for size, coordinate in zip(padded, coordinates, strict=True):
        window, blocks = coordinate.shape
        offsets = (offsets[:, None, :, None] * size + coordinate[None, :, None, :]).reshape(
            offsets.shape[0] * window, offsets.shape[1] * blocks
        )
    return offsets


def _unfold(
    input: Array,
    *,
    window_sizes: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
) -> Array:
    """im2col: {N, C, spatial...} -> {N, C * prod(WindowSizes), BlockCount}, the zero-padded
    input's window elements gathered (data movement: exact in every type)."""
    n, c, *spatial = input.shape
    padding = [(0, 0, 0), (0, 0, 0)] + [
        (a, b, 0) for a, b in zip(start_padding, end_padding, strict=True)
    ]
    padded = lax.pad(input, jnp.zeros((), input.dtype), padding)
    positions = _window_positions(
        tuple(spatial), window_sizes, strides, dilations, start_padding, end_padding
    )
    flat = padded.reshape(n, c, -1)
    gathered = jnp.take(flat, jnp.asarray(positions.reshape(-1)), axis=2)
    return gathered.reshape(n, c * positions.shape[0], positions.shape[1])


def _fold(
    input: Array,
    *,
    window_sizes: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
    output_sizes: tuple[int, ...],
) -> Array:
    """col2im: {N, C * prod(WindowSizes), BlockCount} -> {N, C, spatial...}, each window
    element added into the zero-padded output (floats in FLOAT32 or FLOAT64, integers in their
    own type), the padding then cut away."""
    n, c, *spatial = output_sizes
    positions = _window_positions(
        tuple(spatial), window_sizes, strides, dilations, start_padding, end_padding
    )
    padded = [s + a + b for s, a, b in zip(spatial, start_padding, end_padding, strict=True)]
    kind = jnp.dtype(input.dtype).kind
    wide = _accumulation(input.dtype) if kind == "f" else input.dtype
    values = input.astype(wide).reshape(n, c, -1)
    total = jnp.zeros((n, c, math.prod(padded)), wide)
    total = total.at[:, :, jnp.asarray(positions.reshape(-1))].add(values)
    window = tuple(slice(a, a + s) for a, s in zip(start_padding, spatial, strict=True))
    return total.reshape(n, c, *padded)[(slice(None), slice(None), *window)].astype(input.dtype)


def _heads(tensor: Array, heads: int) -> Array:
    """{.., batch, length, heads * size} (leading 1s) as {batch, length, heads, size}."""
    batch, length, hidden = tensor.shape[-3:]
    return tensor.reshape(batch, length, heads, hidden // heads)


def _attention_inputs(
    query: Array | None,
    key: Array | None,
    value: Array | None,
    stacked_query_key: Array | None,
    stacked_key_value: Array | None,
    stacked_query_key_value: Array | None,
    heads: int,
    key_value_heads: int,
) -> tuple[Array, Array, Array]:
    """Query {batch, length, heads, size}, key and value {batch, length, key_value_heads, size},
    from whichever tensors hold them (a stacked one along its fourth dimension, in its name's
    order)."""
    forms: tuple[tuple[tuple[Array | None, int | None], ...], ...] = (
        ((query, None), (stacked_query_key, 0), (stacked_query_key_value, 0)),
        ((key, None), (stacked_query_key, 1), (stacked_key_value, 0), (stacked_query_key_value, 1)),
        ((value, None), (stacked_key_value, 1), (stacked_query_key_value, 2)),
    )
    found = []
    for options, count in zip(forms, (heads, key_value_heads, key_value_heads), strict=True):
        tensor, index = next((t, i) for t, i in options if t is not None)
        assert tensor is not None  # the validator requires one of each
        found.append(_heads(tensor, count) if index is None else tensor[:, :, :, index])
    return found[0], found[1], found[2]


def _attention_mask(scores: Array, mask: Array, mask_type: str, mask_filter_value: float) -> Array:
    """The mask applied to the scores {batch, heads, sequence, total}: BOOLEAN adds
    MaskFilterValue where it holds 0; the sequence-length types set the key positions outside
    each batch's unpadded area to it. KEY_QUERY_SEQUENCE_LENGTH_START_END (undefined: R1)
    leaves the scores as they are."""
    kind = member(mask_type, "DML_MULTIHEAD_ATTENTION_MASK_TYPE_")
    filler = jnp.asarray(mask_filter_value, scores.dtype)
    if kind == "BOOLEAN":
        shape = mask.shape[-4:] if mask.ndim >= 4 else (1,) * (4 - mask.ndim) + mask.shape
        return jnp.where(mask.reshape(shape) == 0, scores + filler, scores)
    positions = jnp.arange(scores.shape[-1])
    if kind == "KEY_SEQUENCE_LENGTH":
        lengths = mask.reshape(-1)
        outside = positions[None, :] >= lengths[:, None]
    elif kind == "KEY_SEQUENCE_END_START":
        end, start = mask.reshape(2, -1)
        outside = (positions[None, :] >= end[:, None]) | (positions[None, :] < start[:, None])
    else:
        return scores
    return jnp.where(outside[:, None, None, :], filler, scores)


def _multihead_attention(
    query: Array | None,
    key: Array | None,
    value: Array | None,
    stacked_query_key: Array | None,
    stacked_key_value: Array | None,
    stacked_query_key_value: Array | None,
    bias: Array | None,
    mask: Array | None,
    relative_position_bias: Array | None,
    past_key: Array | None,
    past_value: Array | None,
    past_sequence_lengths: Array | None = None,
    *,
    scale: float,
    mask_filter_value: float,
    head_count: int,
    key_value_head_count: int,
    mask_type: str,
    output_type: str,
) -> tuple[Array, Array, Array]:
    """[Bias] -> GEMM(Q, K^T) * Scale -> [RelativePositionBias] -> [Mask] -> softmax ->
    GEMM(., V), per query head, in FLOAT32 (FLOAT16 widened) at the highest precision; query
    head h uses key and value head h // (head_count / key_value_head_count) (MULTIHEAD_ATTENTION
    passes its HeadCount for both counts). Returns the output {batch, sequence, head_count *
    valueHeadSize} and the present key and value {batch, key_value_head_count, total, size}
    (the biased key and value after the past ones). MULTIHEAD_ATTENTION1's
    past_sequence_lengths is not read: its effect is undefined (R2-R4)."""
    del past_sequence_lengths
    q, k, v = _attention_inputs(
        query,
        key,
        value,
        stacked_query_key,
        stacked_key_value,
        stacked_query_key_value,
        head_count,
        key_value_head_count,
    )
    wide = _accumulation(q.dtype)
    q, k, v = q.astype(wide), k.astype(wide), v.astype(wide)
    if bias is not None:
        b = bias.reshape(-1).astype(wide)
        query_end = q.shape[-2] * q.shape[-1]
        key_end = query_end + k.shape[-2] * k.shape[-1]
        q = q + b[:query_end].reshape(q.shape[-2:])
        k = k + b[query_end:key_end].reshape(k.shape[-2:])
        v = v + b[key_end:].reshape(v.shape[-2:])
    k, v = jnp.swapaxes(k, 1, 2), jnp.swapaxes(v, 1, 2)  # {batch, key_value_heads, length, size}
    if past_key is not None and past_value is not None:
        k = jnp.concatenate([past_key.reshape(past_key.shape[-4:]).astype(wide), k], axis=2)
        v = jnp.concatenate([past_value.reshape(past_value.shape[-4:]).astype(wide), v], axis=2)
    present_key, present_value = k, v
    group = head_count // key_value_head_count  # query heads per key and value head
    k, v = jnp.repeat(k, group, axis=1), jnp.repeat(v, group, axis=1)  # {batch, heads, ..}
    scores = lax.dot_general(
        q,
        k,
        (((3,), (3,)), ((0, 2), (0, 1))),  # {batch, heads, sequence, total}
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    ) * jnp.asarray(scale, wide)
    if relative_position_bias is not None:
        scores = scores + relative_position_bias.reshape(relative_position_bias.shape[-4:]).astype(
            wide
        )
    if mask is not None:
        scores = _attention_mask(scores, mask, mask_type, mask_filter_value)
    weights = jax.nn.softmax(scores, axis=-1)
    output = lax.dot_general(
        weights,
        v,
        (((3,), (2,)), ((0, 1), (0, 1))),  # {batch, heads, sequence, valueHeadSize}
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    )
    batch, heads, sequence, size = output.shape
    output = jnp.swapaxes(output, 1, 2).reshape(batch, sequence, heads * size)
    return (
        output.astype(output_type),
        present_key.astype(output_type),
        present_value.astype(output_type),
    )


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
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
}


def convolution(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no convolution function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
