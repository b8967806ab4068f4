"""Expression functions on lists: of integers (sizes, strides, axes) and of tensor descs.

Min and max over a list or numbers, products, padding and setting items, strided window
counts, and broadcastability. The functions the registry (`functions.FUNCTIONS`) calls take the
`Facts` first and none reads them; `paired` (two lists of one length, item by item), `member`
(a member of a tensor desc) and `sizes_except` are helpers of the registry's own item-wise and
tensor-array functions (JOIN's and SPLIT's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import Absent
from .facts import Facts

__all__ = [
    "broadcastable",
    "item_member",
    "largest",
    "member",
    "pad_left",
    "paired",
    "prod",
    "set_items",
    "sizes_except",
    "smallest",
    "strided_count",
]


def member(tensor: Any, name: str) -> Any:
    """A member of a tensor as the validators (attributes) or the evaluator (.get) hold it."""
    reader = getattr(type(tensor), "get", None)  # TensorValue; TensorView reads attributes
    return reader(tensor, name) if callable(reader) else getattr(tensor, name)


def item_member(tensors: Sequence[Any], index: int, name: str) -> Any:
    """A member of item `index` of a tensor array; an item the array does not hold is absent,
    so a rule about it does not apply (QUANTIZE's zero point, given with SCALE_ZERO_POINT)."""
    if not 0 <= index < len(tensors):
        raise Absent(f"item {index} of a tensor array of {len(tensors)}")
    return member(tensors[index], name)


def sizes_except(sizes: list[int], axis: int) -> list[int]:
    return [s for i, s in enumerate(sizes) if i != axis]


def broadcastable(facts: Facts, sizes: list[int], target: list[int]) -> bool:
    return len(sizes) == len(target) and all(
        s in (1, t) for s, t in zip(sizes, target, strict=True)
    )


def prod(facts: Facts, values: list[int]) -> int:
    return math.prod(values)


def smallest(facts: Facts, *values: Any) -> Any:
    if len(values) == 1:
        return min(values[0])
    if any(isinstance(v, np.ndarray) for v in values):  # element-wise, e.g. over k
        return np.minimum.reduce(np.broadcast_arrays(*values))
    return min(values)


def largest(facts: Facts, *values: Any) -> Any:
    if len(values) == 1:
        return max(values[0])
    if any(isinstance(v, np.ndarray) for v in values):  # element-wise, e.g. over k
        return np.maximum.reduce(np.broadcast_arrays(*values))
    return max(values)


def pad_left(facts: Facts, values: list[int], count: int, fill: int = 1) -> list[int]:
    return [fill] * max(count - len(values), 0) + list(values)


def paired(xs: Sequence[int], ys: Sequence[int]) -> zip[tuple[int, int]]:
    if len(xs) != len(ys):
        raise ValueError(f"lists of {len(xs)} and {len(ys)} items")
    return zip(xs, ys, strict=True)


def set_items(facts: Facts, values: list[int], at: list[int], value: int) -> list[int]:
    if any(not 0 <= i < len(values) for i in at):
        raise ValueError(f"positions {at} out of range for {len(values)} items")
    return [value if i in at else v for i, v in enumerate(values)]


def strided_count(facts: Facts, sizes: list[int], strides: list[int]) -> list[int]:
    if any(stride == 0 for stride in strides):
        raise ValueError("a stride of 0")
    return [1 + (size - 1) // abs(stride) for size, stride in paired(sizes, strides)]


def _aligned(*columns: list[int]) -> zip[tuple[int, ...]]:
    lengths = sorted({len(c) for c in columns})
    if len(lengths) > 1:
        raise ValueError("lists of " + " and ".join(str(n) for n in lengths) + " items")
    return zip(*columns, strict=True)


def window_output_sizes(
    facts: Facts,
    sizes: list[int],
    windows: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> list[int]:
    """How many windows fit along each spatial dimension (DirectMLX's forward output sizes)."""
    if any(stride <= 0 for stride in strides):
        raise ValueError(f"a stride that is not positive in {strides}")
    return [
        (size + before + after - ((window - 1) * dilation + 1)) // stride + 1
        for size, window, stride, dilation, before, after in _aligned(
            sizes, windows, strides, dilations, start, end
        )
    ]


def windows_holding_input(
    facts: Facts,
    sizes: list[int],
    windows: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> np.ndarray:
    """A mask of shape window_output_sizes(...): true where the window holds at least one
    element of the unpadded input (a pooling window wholly in the padding has nothing to take
    the maximum or the average of). A window holds one exactly when it does along every
    spatial dimension."""
    counts = window_output_sizes(facts, sizes, windows, strides, dilations, start, end)
    held = np.ones(tuple(max(0, c) for c in counts), dtype=bool)
    for d, (size, window, stride, dilation, before, count) in enumerate(
        _aligned(sizes, windows, strides, dilations, start, counts)
    ):
        first = np.arange(max(0, count)) * stride - before  # each window's first element
        # its first element at or after 0: k0 = ceil(-first / dilation) steps in, if any
        steps = np.maximum(0, -(first // max(1, dilation)))
        along = (steps < window) & (first + steps * dilation < size)
        shape = [1] * len(counts)
        shape[d] = -1
        held &= along.reshape(shape)
    return held


def transposed_output_sizes(
    facts: Facts,
    sizes: list[int],
    windows: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
    output_padding: list[int],
) -> list[int]:
    """The output sizes of a transposed (BACKWARD) window operation: each input element spreads
    a window at `stride` apart (DirectMLX's backward output sizes)."""
    return [
        (size - 1) * stride + (window - 1) * dilation + 1 - before - after + extra
        for size, window, stride, dilation, before, after, extra in _aligned(
            sizes, windows, strides, dilations, start, end, output_padding
        )
    ]
