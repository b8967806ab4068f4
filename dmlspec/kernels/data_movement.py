"""The data-movement family as JAX: one table of functions, one primitive that runs them.

`data_movement` is the primitive the GATHER*, SLICE*, PADDING*, TILE, JOIN, SPLIT,
SPACE_TO_DEPTH*, DEPTH_TO_SPACE*, ONE_HOT and REVERSE_SUBSEQUENCES specs name: the kernel
section gives the function (the operator's name) and its static parameters (the desc's fields,
output sizes). Arrays are full-rank as their descs; JOIN's tensor array arrives as one tuple,
SPLIT returns one.

Values are moved, never computed, so every data type is exact. Where the pages leave a result
undefined (an index or a window outside its tensor) the kernels still read nothing out of
bounds: such reads give 0 and such writes are dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .indexing import field_value, meaningful, member, positions, union_value

__all__ = ["FUNCTIONS", "data_movement", "gather_nd"]

Array = jax.Array


def _zero(x: Array) -> Array:
    return jnp.zeros((), x.dtype)


def _gather(
    input: Array,
    indices: Array,
    *,
    axis: int,
    index_dimensions: int,
    output_sizes: tuple[int, ...],
) -> Array:
    """output[..., j..., ...] = input[..., indices[j...], ...] along `axis`."""
    picks = meaningful(indices, index_dimensions)
    where, inside = positions(picks, input.shape[axis])
    picked = jnp.take(input, where, axis=axis, mode="clip")
    ok = inside.reshape((1,) * axis + picks.shape + (1,) * (input.ndim - axis - 1))
    return jnp.where(ok, picked, _zero(input)).reshape(output_sizes)


def _gather_elements(input: Array, indices: Array, *, axis: int) -> Array:
    """output[i, j, k] = input[i, indices[i, j, k], k] for axis 1, and so on."""
    where, inside = positions(indices, input.shape[axis])
    picked = jnp.take_along_axis(input, where, axis=axis, mode="clip")
    return jnp.where(inside, picked, _zero(input))


def gather_nd(
    input: Array,
    indices: Array,
    *,
    input_dimension_count: int,
    indices_dimension_count: int,
    batch_dimension_count: int = 0,
    output_sizes: tuple[int, ...],
) -> Array:
    """output[batch, j...] = input[batch, indices[batch, j...], ...] over whole slices: each
    index tuple (the last indices dimension) addresses the dimensions after the batch ones."""
    data = meaningful(input, input_dimension_count)
    tuples = meaningful(indices, indices_dimension_count)
    batch = batch_dimension_count
    q = tuples.shape[-1]
    block, rest = data.shape[batch : batch + q], data.shape[batch + q :]
    where, inside = positions(tuples, jnp.array(block, dtype=jnp.int64))
    row = jnp.ravel_multi_index(tuple(jnp.moveaxis(where, -1, 0)), block, mode="clip")
    batches = math.prod(data.shape[:batch])
    first = jnp.arange(batches, dtype=jnp.int64) * math.prod(block)
    row = row + first.reshape(tuples.shape[:batch] + (1,) * (tuples.ndim - 1 - batch))
    rows = data.reshape((batches * math.prod(block), *rest))
    picked = jnp.take(rows, row.reshape(-1), axis=0, mode="clip")
    ok = jnp.all(inside, axis=-1).reshape((-1,) + (1,) * len(rest))
    return jnp.where(ok, picked, _zero(input)).reshape(output_sizes)


def _strided(x: Array, starts: Sequence[int], steps: Sequence[int], counts: Sequence[int]) -> Array:
    """out[c] = x[starts + steps * c] (per dimension), 0 where that lies outside x. Dimensions
    read in bounds are sliced (reversed first for a negative step); others are gathered."""
    mask = None
    for axis, (start, step, count) in enumerate(zip(starts, steps, counts, strict=True)):
        size = x.shape[axis]
        index = start + step * np.arange(count, dtype=np.int64)
        if index.min() >= 0 and index.max() < size:
            if step == 0:
                x = jnp.repeat(lax.slice_in_dim(x, start, start + 1, axis=axis), count, axis)
            else:
                if step < 0:
                    x, start, step = lax.rev(x, (axis,)), size - 1 - start, -step
                x = lax.slice_in_dim(x, start, start + (count - 1) * step + 1, step, axis)
            continue
        inside = (index >= 0) & (index < size)
        x = jnp.take(x, np.where(inside, index, 0), axis=axis, mode="clip")
        shape = [1] * x.ndim
        shape[axis] = count
        ok = jnp.asarray(inside.reshape(shape))
        mask = ok if mask is None else mask & ok
    return x if mask is None else jnp.where(mask, x, _zero(x))


def _window_starts(
    offsets: Sequence[int], window_sizes: Sequence[int], strides: Sequence[int]
) -> list[int]:
    """Where SLICE1 starts copying: the window's end along a negative stride."""
    return [
        offset + (size - 1 if stride < 0 else 0)
        for offset, size, stride in zip(offsets, window_sizes, strides, strict=True)
    ]


def _slice(
    input: Array, *, offsets: tuple[int, ...], sizes: tuple[int, ...], strides: tuple[int, ...]
) -> Array:
    """OutputTensor[c] = InputTensor[Offsets + Strides * c]."""
    return _strided(input, offsets, strides, sizes)


def _slice1(
    input: Array,
    *,
    offsets: tuple[int, ...],
    window_sizes: tuple[int, ...],
    strides: tuple[int, ...],
    output_sizes: tuple[int, ...],
) -> Array:
    """OutputTensor[c] = InputTensor[CopyStart + InputWindowStrides * c]."""
    return _strided(input, _window_starts(offsets, window_sizes, strides), strides, output_sizes)


def _slice_grad(
    input_gradient: Array,
    *,
    offsets: tuple[int, ...],
    window_sizes: tuple[int, ...],
    strides: tuple[int, ...],
    output_sizes: tuple[int, ...],
) -> Array:
    """The inverse of SLICE1's copy: each gradient element goes where SLICE1 read it from;
    every other output element is 0. In bounds this is a zero pad with interior padding."""
    x = input_gradient
    starts = _window_starts(offsets, window_sizes, strides)
    for axis, (start, step, size) in enumerate(zip(starts, strides, output_sizes, strict=True)):
        count = x.shape[axis]
        index = start + step * np.arange(count, dtype=np.int64)
        if step != 0 and index.min() >= 0 and index.max() < size:
            if step < 0:
                x, start, step = lax.rev(x, (axis,)), int(index[-1]), -step
            config = [(0, 0, 0)] * x.ndim
            config[axis] = (start, size - 1 - (start + (count - 1) * step), step - 1)
            x = lax.pad(x, _zero(x), config)
            continue
        # Outside the output (an invalid window): such writes are dropped.
        target = np.where((index >= 0) & (index < size), index, size)
        shape = list(x.shape)
        shape[axis] = size
        where = (slice(None),) * axis + (jnp.asarray(target),)
        x = jnp.zeros(shape, x.dtype).at[where].set(x, mode="drop")
    return x


def _padding_source(mode: str, start: int, end: int, size: int) -> np.ndarray | None:
    """For each output position along a dimension, the input position it copies (EDGE,
    REFLECTION, SYMMETRIC, WRAP; the last three repeat periodically); None where it is the
    input."""
    if start == 0 and end == 0:
        return None
    index = np.arange(-start, size + end, dtype=np.int64)
    if mode == "EDGE":
        return np.clip(index, 0, size - 1)
    if mode == "REFLECTION":
        if size == 1:
            return np.zeros_like(index)
        period = 2 * (size - 1)
        folded = index % period
        return np.where(folded < size, folded, period - folded)
    if mode == "SYMMETRIC":
        period = 2 * size
        folded = index % period
        return np.where(folded < size, folded, period - 1 - folded)
    if mode == "WRAP":
        return index % size
    raise ValueError(
        f"no padding mode {mode!r} (known: CONSTANT, EDGE, REFLECTION, SYMMETRIC, WRAP)"
    )


def _pad(
    x: Array, mode: Any, value: np.ndarray, starts: Sequence[int], ends: Sequence[int]
) -> Array:
    mode = member(mode, "DML_PADDING_MODE_")
    if mode == "CONSTANT":
        padding = [(s, e, 0) for s, e in zip(starts, ends, strict=True)]
        return lax.pad(x, jnp.asarray(value, x.dtype), padding)
    for axis, (start, end) in enumerate(zip(starts, ends, strict=True)):
        source = _padding_source(mode, start, end, x.shape[axis])
        if source is not None:
            x = jnp.take(x, source, axis=axis)
    return x


def _padding(
    input: Array,
    *,
    padding_mode: str,
    padding_value: float,
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
) -> Array:
    """PADDING: the FLOAT PaddingValue converts to an integer type truncated toward zero."""
    value = field_value(padding_value, input.dtype)
    return _pad(input, padding_mode, value, start_padding, end_padding)


def _padding1(
    input: Array,
    *,
    padding_mode: str,
    padding_value: int | float,
    padding_value_type: str,
    start_padding: tuple[int, ...],
    end_padding: tuple[int, ...],
) -> Array:
    """PADDING1: PaddingValue is a scalar union read through PaddingValueDataType."""
    value = union_value(padding_value, padding_value_type)
    return _pad(input, padding_mode, value, start_padding, end_padding)


def _tile(input: Array, *, repeats: tuple[int, ...]) -> Array:
    return jnp.tile(input, repeats)


def _join(inputs: Sequence[Array], *, axis: int) -> Array:
    return jnp.concatenate(tuple(inputs), axis=axis)


def _split(input: Array, *, axis: int, split_sizes: tuple[int, ...]) -> tuple[Array, ...]:
    ends = np.cumsum(split_sizes).tolist()
    starts = [0, *ends[:-1]]
    pieces = zip(starts, ends, strict=True)
    return tuple(lax.slice_in_dim(input, a, b, axis=axis) for a, b in pieces)


# The depth dimension's layout per DML_DEPTH_SPACE_ORDER (ne-directml-dml_depth_space_order):
# the permutation from (N, depth factors..., H, W) with blocks to (N, C, H, bh, W, bw).
_DEPTH_ORDERS = {
    # depth (BlockHeight, BlockWidth, Channels): N, bh, bw, C, H, W
    "DEPTH_COLUMN_ROW": (0, 3, 4, 1, 5, 2),
    # depth (Channels, BlockHeight, BlockWidth): N, C, bh, bw, H, W
    "COLUMN_ROW_DEPTH": (0, 1, 4, 2, 5, 3),
}


def _depth_factors(order: str, channels: int, block: int) -> tuple[int, int, int]:
    if order == "DEPTH_COLUMN_ROW":
        return (block, block, channels)
    return (channels, block, block)


def _depth_to_space(input: Array, *, block_size: int, order: str = "DEPTH_COLUMN_ROW") -> Array:
    """Depth [N, (depth factors), H, W] -> space [N, C, (H, bh), (W, bw)]."""
    order = member(order, "DML_DEPTH_SPACE_ORDER_")
    n, depth, h, w = input.shape
    b = block_size
    c = depth // (b * b)
    split = input.reshape(n, *_depth_factors(order, c, b), h, w)
    moved = jnp.transpose(split, _DEPTH_ORDERS[order])
    return moved.reshape(n, c, h * b, w * b)


def _space_to_depth(input: Array, *, block_size: int, order: str = "DEPTH_COLUMN_ROW") -> Array:
    """Space [N, C, (H, bh), (W, bw)] -> depth [N, (depth factors), H, W]: the inverse."""
    order = member(order, "DML_DEPTH_SPACE_ORDER_")
    n, c, height, width = input.shape
    b = block_size
    h, w = height // b, width // b
    split = input.reshape(n, c, h, b, w, b)
    inverse = np.argsort(_DEPTH_ORDERS[order]).tolist()
    moved = jnp.transpose(split, inverse)
    return moved.reshape(n, c * b * b, h, w)


def _one_hot(indices: Array, values: Array, *, axis: int, output_sizes: tuple[int, ...]) -> Array:
    """OnValue at each sequence's index along `axis`, OffValue elsewhere; an index outside
    the sequence leaves it all OffValue. OffValue is the first element of ValuesTensor, OnValue
    the next one (the 1st element along its fastest-changing dimension of size > 1)."""
    flat = values.reshape(-1)
    off, on = flat[0], flat[min(1, flat.size - 1)]
    where, inside = positions(indices, output_sizes[axis])
    position = lax.broadcasted_iota(jnp.int64, output_sizes, axis)
    return jnp.where((position == where) & inside, on, off)


def _reverse_subsequences(input: Array, sequence_lengths: Array, *, axis: int) -> Array:
    """The first length elements of each sequence along `axis` reversed, the rest copied; a
    length past the sequence counts as the whole sequence."""
    size = input.shape[axis]
    bound = jnp.asarray(size, sequence_lengths.dtype)
    length = jnp.clip(sequence_lengths, jnp.zeros((), sequence_lengths.dtype), bound)
    length = length.astype(jnp.int64)
    position = lax.broadcasted_iota(jnp.int64, input.shape, axis)
    source = jnp.where(position < length, length - 1 - position, position)
    return jnp.take_along_axis(input, source, axis=axis, mode="clip")


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "DEPTH_TO_SPACE": _depth_to_space,
    "DEPTH_TO_SPACE1": _depth_to_space,
    "GATHER": _gather,
    "GATHER_ELEMENTS": _gather_elements,
    "GATHER_ND": gather_nd,
    "GATHER_ND1": gather_nd,
    "JOIN": _join,
    "ONE_HOT": _one_hot,
    "PADDING": _padding,
    "PADDING1": _padding1,
    "REVERSE_SUBSEQUENCES": _reverse_subsequences,
    "SLICE": _slice,
    "SLICE1": _slice1,
    "SLICE_GRAD": _slice_grad,
    "SPACE_TO_DEPTH": _space_to_depth,
    "SPACE_TO_DEPTH1": _space_to_depth,
    "SPLIT": _split,
    "TILE": _tile,
}


def data_movement(*inputs: Any, function: str, **parameters: Any) -> Any:
    """Run one data-movement operator: arrays in the kernel section's order (a tensor array as
    one tuple), static parameters by name; one array, or SPLIT's tuple of arrays."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no data-movement function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
