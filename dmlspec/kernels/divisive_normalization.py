"""The divisive normalizations as JAX: each element divided by a norm of its neighbourhood;
LOCAL_RESPONSE_NORMALIZATION, its gradient and LP_NORMALIZATION. (The batch and mean-variance
normalizations, which subtract a mean first, are another family.)

`divisive_normalization` is the primitive their specs name. Everything is computed in FLOAT32
(FLOAT16 too, as DirectML accumulates unless half precision is allowed) and rounded once to the
output type. LRN's region sums are the pooling family's window sum (one lax.reduce_window, the
region's elements beyond the tensor adding zeros) over the channels or over height and width,
placed floor((LocalSize - 1) / 2) before the element and ceil((LocalSize - 1) / 2) after it;
then x * (Bias + Alpha / LocalSize * S)^-Beta. LOCAL_RESPONSE_NORMALIZATION_GRAD is its
jax.vjp, as the page defines it (its gradient). LP_NORMALIZATION divides by the L1 or L2 norm
along Axis plus Epsilon (one of the readings the spec accepts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .indexing import member
from .pooling import _accumulation, _window_sum

__all__ = ["FUNCTIONS", "divisive_normalization"]

Array = jax.Array


def _region_sums(squares: Array, cross_channel: bool, local_size: int) -> Array:
    """Each element's sum of `squares` over its local region (channels, or height by width),
    clipped to the tensor: a window reaching no further than the tensor's own extent (a longer
    LocalSize sums the same elements)."""
    axes = (1,) if cross_channel else (2, 3)
    moved = jnp.moveaxis(squares, axes, tuple(range(-len(axes), 0)))
    window, start, end = [], [], []
    for axis in axes:
        size = squares.shape[axis]
        before = min((local_size - 1) // 2, size - 1)
        after = min(local_size - 1 - (local_size - 1) // 2, size - 1)
        window.append(before + after + 1)
        start.append(before)
        end.append(after)
    ones = (1,) * len(axes)
    summed = _window_sum(moved, tuple(window), ones, ones, tuple(start), tuple(end))
    return jnp.moveaxis(summed, tuple(range(-len(axes), 0)), axes)


def _lrn_wide(
    x: Array, *, cross_channel: bool, local_size: int, alpha: float, beta: float, bias: float
) -> Array:
    wide = x.dtype
    total = _region_sums(x * x, cross_channel, local_size)
    scale = jnp.asarray(alpha, wide) / jnp.asarray(local_size, wide)
    divisor = jnp.asarray(bias, wide) + scale * total
    return x * jnp.power(divisor, jnp.asarray(-beta, wide))


def _local_response_normalization(x: Array, *, output_type: str, **fields: Any) -> Array:
    """`fields`: CrossChannel, LocalSize, Alpha, Beta and Bias (`_lrn_wide`'s)."""
    return _lrn_wide(x.astype(_accumulation(x.dtype)), **fields).astype(output_type)


def _local_response_normalization_grad(
    x: Array, gradient: Array, *, output_type: str, **fields: Any
) -> Array:
    """The page's definition: the forward operator's gradient at x, applied to the incoming
    gradient (jax.vjp)."""
    wide = _accumulation(x.dtype)
    _, pullback = jax.vjp(lambda data: _lrn_wide(data, **fields), x.astype(wide))
    (result,) = pullback(gradient.astype(wide))
    return jnp.asarray(result).astype(output_type)


def _lp_normalization(x: Array, *, axis: int, epsilon: float, p: int, output_type: str) -> Array:
    wide = _accumulation(x.dtype)
    data = x.astype(wide)
    terms = jnp.abs(data) if p == 1 else data * data
    total = jnp.sum(terms, axis=axis, keepdims=True)
    norm = total if p == 1 else jnp.sqrt(total)
    return (data / (norm + jnp.asarray(epsilon, wide))).astype(output_type)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "LOCAL_RESPONSE_NORMALIZATION": _local_response_normalization,
    "LOCAL_RESPONSE_NORMALIZATION_GRAD": _local_response_normalization_grad,
    "LP_NORMALIZATION": _lp_normalization,
}


def divisive_normalization(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order, static
    parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(
            f"no divisive_normalization function {function!r} (known: {sorted(FUNCTIONS)})"
        )
    return FUNCTIONS[name](*inputs, **parameters)
