"""The convolution family as JAX (convolution, matrix multiplication, attention): one table of
functions, one primitive that runs them; so far GEMM, CONVOLUTION, the integer and quantized
matrix multiplications, FOLD, UNFOLD and the integer and quantized convolutions.

`convolution` is the primitive their specs name. Floating inputs are accumulated in FLOAT32
(FLOAT16 too: DirectML's accumulation unless a backend runs with half precision allowed),
at XLA's highest precision (no reduced-precision passes on accelerators), and rounded once to
the output type after Alpha, Beta, the bias and the FusedActivation. Integer products are
summed exactly (lax.dot_general with an integer preferred_element_type), zero points
subtracted first (CONVOLUTION_INTEGER's and QUANTIZED_LINEAR_CONVOLUTION's lax.conv_general_dilated
in INT32); the quantized operators requantize as ELEMENT_WISE_QUANTIZE_LINEAR does.
UNFOLD (im2col) gathers window elements (exact); FOLD (col2im) adds them back with one
scatter-add.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .element_wise import _cast, _quantize, fused_activation
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
    tensor or per row) as ELEMENT_WISE_QUANTIZE_LINEAR quantizes: rounded, saturated."""
    product = _dequantized_product(a, a_scale, a_zero_point, b, b_scale, b_zero_point)
    zero_point = None if output_zero_point is None else _rows(output_zero_point)
    quantized = _quantize(product, _rows(output_scale), zero_point, output_type)
    return _cast(quantized, output_type)


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
    # Quantized in FLOAT64 too: a product beyond FLOAT32's range divided by a large OutputScale
    # is an ordinary value, where FLOAT32 would make it infinity / infinity = NaN.
    quantized = jnp.round(real / output_scale.astype(jnp.float64).reshape(()))
    if output_zero_point is not None:
        quantized = quantized + output_zero_point.astype(jnp.float64).reshape(())
    info = np.iinfo(jnp.dtype(output_type))
    return _cast(jnp.clip(quantized, info.min, info.max), output_type)


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


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Array]] = {
    "GEMM": _gemm,
    "CONVOLUTION": _convolution,
    "MATRIX_MULTIPLY_INTEGER": _matrix_multiply_integer,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": _matrix_multiply_integer_to_float,
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": _quantized_linear_matrix_multiply,
    "FOLD": _fold,
    "UNFOLD": _unfold,
    "CONVOLUTION_INTEGER": _convolution_integer,
    "QUANTIZED_LINEAR_CONVOLUTION": _quantized_linear_convolution,
}


def convolution(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no convolution function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
