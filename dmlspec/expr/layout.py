"""Expression functions on a tensor's buffer layout, from its sizes and strides.

Packed row-major strides, the buffer size DMLCalcBufferTensorSize gives (in bytes, from the
element size the `Facts` give), and whether every element has its own buffer offset.
"""

from __future__ import annotations

import math

import numpy as np

from .facts import Facts

__all__ = [
    "DISTINCT_OFFSETS_ENUMERATION_LIMIT",
    "buffer_tensor_size",
    "distinct_offsets",
    "packed_strides",
]


def packed_strides(facts: Facts, sizes: list[int]) -> list[int]:
    strides, running = [], 1
    for size in reversed(sizes):
        strides.append(running)
        running *= size
    return strides[::-1]


def buffer_tensor_size(facts: Facts, data_type: str, sizes: list[int], strides: list[int]) -> int:
    """DMLCalcBufferTensorSize (dml-helper-functions.md), generalised to sub-byte types."""
    if not sizes:
        return 0
    index_of_last_element = sum((s - 1) * t for s, t in zip(sizes, strides, strict=False))
    size_in_bytes = -(-(index_of_last_element + 1) * facts.element_bits(data_type) // 8)
    return (size_in_bytes + 3) & ~3


# Above this many elements, distinct_offsets decides by the nesting rule alone.
DISTINCT_OFFSETS_ENUMERATION_LIMIT = 1 << 22


def distinct_offsets(facts: Facts, sizes: list[int], strides: list[int]) -> bool:
    """No two elements share a buffer offset (dml-strides.md: "each element has a unique
    address/offset"). Dimensions of size 1 never move; a zero stride repeats a dimension.
    Nested layouts (each stride, smallest first, beyond the reach of the smaller ones: packed,
    padded, permuted) are distinct; others are enumerated up to the limit."""
    moving = sorted((t, s) for s, t in zip(sizes, strides, strict=False) if s > 1)
    reach = 0
    for stride, size in moving:
        if stride <= reach:
            break
        reach += stride * (size - 1)
    else:
        return True
    count = math.prod(size for _, size in moving)
    if any(stride == 0 for stride, _ in moving) or count > DISTINCT_OFFSETS_ENUMERATION_LIMIT:
        return False
    offsets = np.zeros(1, dtype=np.int64)
    for stride, size in moving:
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride).reshape(-1)
    return bool(np.unique(offsets).size == offsets.size)
