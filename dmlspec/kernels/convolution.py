"""The convolution family as JAX (convolution, matrix multiplication, attention): one table of
functions, one primitive that runs them; so far GEMM.

`convolution` is the primitive their specs name. Floating inputs are accumulated in FLOAT32
(FLOAT16 too: DirectML's accumulation unless a backend runs with half precision allowed),
at XLA's highest precision (no reduced-precision passes on accelerators), and rounded once to
the output type after Alpha, Beta, the bias and the FusedActivation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
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


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Array]] = {"GEMM": _gemm, "CONVOLUTION": _convolution}


def convolution(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no convolution function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
