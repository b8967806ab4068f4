"""The convolution family as JAX (convolution, matrix multiplication, attention): one table of
functions, one primitive that runs them; so far GEMM, FOLD and UNFOLD.

`convolution` is the primitive their specs name. Floating inputs are accumulated in FLOAT32
(FLOAT16 too: DirectML's accumulation unless a backend runs with half precision allowed),
at XLA's highest precision (no reduced-precision passes on accelerators), and rounded once to
the output type after Alpha, Beta, the bias and the FusedActivation. UNFOLD (im2col) gathers
window elements (exact); FOLD (col2im) adds them back with one scatter-add.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .element_wise import fused_activation
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
FUNCTIONS: dict[str, Callable[..., Array]] = {"GEMM": _gemm, "FOLD": _fold, "UNFOLD": _unfold}


def convolution(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no convolution function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
