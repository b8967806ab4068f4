"""The pooling family as JAX: one table of functions, one primitive that runs them:
AVERAGE_POOLING(1), MAX_POOLING(1, 2), LP_POOLING(1), MAX_UNPOOLING, both gradients and
QUANTIZED_LINEAR_AVERAGE_POOLING.

`pooling` is the primitive their specs name. Every window is one lax.reduce_window over the
spatial dimensions (window_dilation for Dilations, the padding as the reduction's initial
value): MAX takes the maximum with padding at the type's lowest value (it takes no part);
MAX_POOLING1/2's indices come from a variadic reduce_window over (value, row-major input
index) that keeps the larger value and, among equal ones, the smaller index (the page's "first
value encountered"). AVERAGE and LP sum in FLOAT32 (FLOAT16 too, as DirectML accumulates unless
half precision is allowed), the padding adding zeros, and round once to the output type:
AVERAGE divides by prod(WindowSize) or, IncludePadding FALSE, by each window's count of input
elements (from 1-D counts at trace time); LP sums |x|^P and takes the 1/P-th power.
MAX_UNPOOLING scatters each input element to its flat index in a zero output.
AVERAGE_POOLING_GRAD is AVERAGE_POOLING's jax.vjp, as the page defines it (its gradient);
MAX_POOLING_GRAD adds each window's gradient at MAX_POOLING2's index, as its page defines it.
QUANTIZED_LINEAR_AVERAGE_POOLING is the page's equivalent: dequantized, AVERAGE_POOLING1's
kernel, quantized, all in FLOAT64 (the 8-bit differences and their window sums are exact there).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .element_wise import quantize_wide
from .indexing import member

__all__ = ["FUNCTIONS", "pooling"]

Array = jax.Array
Window = tuple[int, ...]


def _accumulation(dtype: Any) -> Any:
    return jnp.float64 if jnp.dtype(dtype) == jnp.float64 else jnp.float32


def _lowest(dtype: Any) -> Any:
    kind = jnp.dtype(dtype)
    return -np.inf if jnp.issubdtype(kind, jnp.floating) else np.iinfo(kind).min


def _reduce_windows(
    x: Array,
    initial: np.ndarray,
    combine: Any,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
) -> Array:
    """`combine` over each window of the trailing axes, the padding holding `initial` (a
    constant, so that XLA sees the monoid: reduce_window_sum/max, differentiable)."""
    lead = (1,) * (x.ndim - len(window_size))
    reduced: Array = lax.reduce_window(
        x,
        initial,
        combine,
        lead + window_size,
        lead + strides,
        [(0, 0)] * len(lead) + list(zip(start_padding, end_padding, strict=True)),
        window_dilation=lead + dilations,
    )
    return reduced


def _window_sum(x: Array, *window: Window) -> Array:
    """The sum of each window, the padding adding zeros."""
    return _reduce_windows(x, np.zeros((), x.dtype), lax.add, *window)


def _average_pooling(
    x: Array,
    *,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    include_padding: bool,
    output_type: str,
) -> Array:
    wide = _accumulation(x.dtype)
    window = (window_size, strides, dilations, start_padding, end_padding)
    total = _window_sum(x.astype(wide), *window)
    if include_padding:
        count = jnp.asarray(math.prod(window_size), wide)
    else:  # the input elements of each window (0 for one wholly in the padding: R1)
        count = jnp.asarray(_inside_counts(x.shape, *window), wide)
    return (total / count).astype(output_type)


def _channels(values: Array, rank: int) -> Array:
    """A per-tensor or per-channel scale or zero point ({1, 1, 1, 1} or {1, C, 1, 1}, leading 1s
    optional) as {1, C or 1, 1, ...} of `rank` dimensions, broadcasting over {N, C, spatial...}."""
    return values.reshape(1, -1, *(1,) * (rank - 2))


def _quantized_linear_average_pooling(
    x: Array,
    x_scale: Array,
    x_zero_point: Array | None,
    output_scale: Array,
    output_zero_point: Array | None,
    *,
    output_type: str,
    **window: Any,
) -> Array:
    """The page: "dequantizing the inputs, then performing average pooling, and then quantizing
    the output": (x - InputZeroPoint) * InputScale, AVERAGE_POOLING1's average (the padding's
    zeros are the dequantized zero point), then the Quantize function (halves to even,
    saturated), in FLOAT64."""
    real = x.astype(jnp.float64)
    if x_zero_point is not None:
        real = real - _channels(x_zero_point, x.ndim).astype(jnp.float64)
    real = real * _channels(x_scale, x.ndim).astype(jnp.float64)
    average = _average_pooling(real, output_type="float64", **window)
    zero_point = None if output_zero_point is None else _channels(output_zero_point, x.ndim)
    return quantize_wide(average, _channels(output_scale, x.ndim), zero_point, output_type)


def _inside_counts(
    shape: tuple[int, ...],
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
) -> np.ndarray:
    """How many input elements each window holds: the product over the spatial dimensions of
    the window's offsets inside the input along each, built from 1-D counts at trace time (a
    reduce_window over ones would be constant-folded by XLA, seconds for large inputs)."""
    spatial = shape[len(shape) - len(window_size) :]
    counts = np.ones((1,) * (len(shape) - len(spatial)), np.int64)
    for size, window, stride, dilation, before, after in zip(
        spatial, window_size, strides, dilations, start_padding, end_padding, strict=True
    ):
        outputs = (size + before + after - (window - 1) * dilation - 1) // stride + 1
        positions = np.arange(outputs)[:, None] * stride + np.arange(window) * dilation - before
        along = ((positions >= 0) & (positions < size)).sum(axis=1)
        counts = np.multiply.outer(counts, along)
    return counts


def _lp_pooling(
    x: Array,
    *,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    p: int,
    output_type: str,
) -> Array:
    wide = _accumulation(x.dtype)
    powers = lax.integer_pow(jnp.abs(x.astype(wide)), p)
    total = _window_sum(powers, window_size, strides, dilations, start_padding, end_padding)
    if p == 1:
        root = total
    elif p == 2:
        root = jnp.sqrt(total)
    else:
        root = jnp.power(total, jnp.asarray(1.0 / p, wide))
    return root.astype(output_type)


def _max_and_index(
    x: Array,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
) -> tuple[Array, Array]:
    """Each window's maximum and the row-major input index of its first (smallest-index)
    element holding it; the padding is (lowest, past every index) and never wins."""
    lead = (1,) * (x.ndim - len(window_size))
    index_type = jnp.int64 if x.size > np.iinfo(np.int32).max else jnp.int32
    indices = jnp.arange(x.size, dtype=index_type).reshape(x.shape)
    past = jnp.asarray(x.size, index_type)

    def better(a: tuple[Array, Array], b: tuple[Array, Array]) -> tuple[Array, Array]:
        (value_a, index_a), (value_b, index_b) = a, b
        take_a = (value_a > value_b) | ((value_a == value_b) & (index_a < index_b))
        return jnp.where(take_a, value_a, value_b), jnp.where(take_a, index_a, index_b)

    value, index = lax.reduce_window(
        (x, indices),
        (jnp.asarray(_lowest(x.dtype), x.dtype), past),
        better,
        lead + window_size,
        lead + strides,
        [(0, 0)] * len(lead) + list(zip(start_padding, end_padding, strict=True)),
        window_dilation=lead + dilations,
    )
    return value, index


def _window_max(x: Array, *window: Window) -> Array:
    """Each window's maximum, the padding at the type's lowest value (it never wins)."""
    return _reduce_windows(x, np.asarray(_lowest(x.dtype), x.dtype), lax.max, *window)


def _max_pooling(
    x: Array,
    *,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    output_type: str,
) -> Array:
    window = (window_size, strides, dilations, start_padding, end_padding)
    return _window_max(x, *window).astype(output_type)


def _max_pooling_with_indices(
    x: Array,
    *,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    indices_type: str,
    output_type: str,
) -> tuple[Array, Array]:
    """The value from lax.max, as MAX_POOLING's (the selection in _max_and_index copies a
    subnormal maximum that a flushing max gives as 0: XLA on CPUs flushes); the index from
    _max_and_index."""
    window = (window_size, strides, dilations, start_padding, end_padding)
    _, index = _max_and_index(x, *window)
    return _window_max(x, *window).astype(output_type), index.astype(indices_type)


def _average_pooling_grad(
    gradient: Array,
    *,
    input_sizes: tuple[int, ...],
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    include_padding: bool,
    output_type: str,
) -> Array:
    """AVERAGE_POOLING's gradient: jax.vjp of its kernel (in the accumulation type) at
    InputGradientTensor, rounded once to the output type."""
    wide = _accumulation(gradient.dtype)

    def forward(x: Array) -> Array:
        return _average_pooling(
            x,
            window_size=window_size,
            strides=strides,
            dilations=dilations,
            start_padding=start_padding,
            end_padding=end_padding,
            include_padding=include_padding,
            output_type=wide,
        )

    _, pullback = jax.vjp(forward, jnp.zeros(input_sizes, wide))
    (result,) = pullback(gradient.astype(wide))
    return jnp.asarray(result).astype(output_type)


def _max_pooling_grad(
    x: Array,
    gradient: Array,
    *,
    window_size: Window,
    strides: Window,
    dilations: Window,
    start_padding: Window,
    end_padding: Window,
    output_type: str,
) -> Array:
    """The page's definition: each window's gradient added at the index of its largest
    element (MAX_POOLING2's, the lowest among ties), in the accumulation type; a window wholly
    in the padding (its index past every element) adds nothing."""
    wide = _accumulation(gradient.dtype)
    window = (window_size, strides, dilations, start_padding, end_padding)
    _, index = _max_and_index(x, *window)
    flat = jnp.zeros(x.size, wide)
    summed = flat.at[index.reshape(-1)].add(gradient.astype(wide).reshape(-1), mode="drop")
    return summed.reshape(x.shape).astype(output_type)


def _max_unpooling(
    x: Array, indices: Array, *, output_sizes: tuple[int, ...], output_type: str
) -> Array:
    """Zeros, each input element written at its flat index into the output (an index past
    the output writes nothing, R1; among colliding ones XLA's scatter keeps one, R2)."""
    flat = jnp.zeros(math.prod(output_sizes), output_type)
    written = flat.at[indices.reshape(-1)].set(x.reshape(-1).astype(output_type), mode="drop")
    return written.reshape(output_sizes)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "AVERAGE_POOLING": _average_pooling,
    "AVERAGE_POOLING1": _average_pooling,
    "AVERAGE_POOLING_GRAD": _average_pooling_grad,
    "LP_POOLING": _lp_pooling,
    "LP_POOLING1": _lp_pooling,
    "MAX_POOLING": _max_pooling,
    "MAX_POOLING1": _max_pooling_with_indices,
    "MAX_POOLING2": _max_pooling_with_indices,
    "MAX_POOLING_GRAD": _max_pooling_grad,
    "MAX_UNPOOLING": _max_unpooling,
    "QUANTIZED_LINEAR_AVERAGE_POOLING": _quantized_linear_average_pooling,
}


def pooling(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order, static
    parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no pooling function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
