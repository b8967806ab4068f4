"""Strided tensors in the kernels: read a buffer into its logical view, write a logical result
into a strided output buffer (ARCHITECTURE.md, "Strided tensors").

A `Layout` is static (hashable): the kernel runtime jits one function per distinct layout, so
the same layout never retraces, and a tensor without Strides has no Layout at all, so the
packed path runs exactly as before. Inside the trace, the element offsets `dot(i, Strides)` are
computed with iotas (fused by XLA, never a constant the size of the tensor); layouts that are
a slice of a reshaped buffer (packed strides given explicitly, larger buffers) skip them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["Layout", "read_view", "write_view"]


@dataclass(frozen=True)
class Layout:
    """Where the elements of a logical tensor sit in its 1-D buffer."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    elements: int  # the buffer's length, in elements

    @property
    def packed_prefix(self) -> bool:
        """The view is the buffer's first prod(sizes) elements, row-major."""
        running = 1
        for size, stride in zip(reversed(self.sizes), reversed(self.strides), strict=True):
            if size > 1 and stride != running:
                return False
            running *= size
        return True

    def offsets(self) -> jax.Array:
        """The buffer offset of every logical element, shaped as `sizes` (traced)."""
        last = sum((s - 1) * t for s, t in zip(self.sizes, self.strides, strict=True))
        dtype = jnp.int32 if last < 2**31 else jnp.int64
        total = jnp.zeros(self.sizes, dtype)
        for axis, (size, stride) in enumerate(zip(self.sizes, self.strides, strict=True)):
            if size > 1 and stride:
                iota = lax.broadcasted_iota(dtype, self.sizes, axis)
                total = total + iota * jnp.asarray(stride, dtype)
        return total


def read_view(buffer: jax.Array, layout: Layout) -> jax.Array:
    """The logical tensor a strided buffer holds (traced; `buffer` is 1-D)."""
    if layout.packed_prefix:
        return buffer[: math.prod(layout.sizes)].reshape(layout.sizes)
    return buffer.at[layout.offsets()].get(mode="promise_in_bounds")


def write_view(buffer: jax.Array, logical: jax.Array, layout: Layout) -> jax.Array:
    """`buffer` with the logical result written into its strided view; every other element
    is left as it was (traced). Output offsets are distinct (TENSOR.C10)."""
    if layout.packed_prefix:
        count = math.prod(layout.sizes)
        return lax.dynamic_update_slice(buffer, logical.reshape(count).astype(buffer.dtype), (0,))
    return buffer.at[layout.offsets()].set(
        logical.astype(buffer.dtype), unique_indices=True, mode="promise_in_bounds"
    )
