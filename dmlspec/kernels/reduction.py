"""The reduction family as JAX: one table of functions, one primitive that runs them.

`reduction` is the primitive the REDUCE, ARGMIN, ARGMAX, TOP_K*, CUMULATIVE_* and
NONZERO_COORDINATES specs name; the kernel section gives the function (the operator's name)
and its static parameters (axes, directions, output data types). REDUCE's own Function field
is a static parameter, looked up in the table of reduce functions below. TOP_K* return
(values, indices) and NONZERO_COORDINATES (count, coordinates), in the order of the kernel
section's outputs.

Numerics: integers are reduced, summed and multiplied in their own type, wrapping modulo
2^bits (64-bit exact). REDUCE's floating sums, products and norms accumulate in FLOAT32
(FLOAT16 widened to it) and FLOAT64 in FLOAT64, in XLA's order: the specs' comparison rules
allow any order of the N terms (Higham's bound, N * eps * sum|x|), and a FLOAT64 accumulator
made a FLOAT32 sum 5-6 times slower than XLA's own (the benchmark's reduce_sum cases). Scans
accumulate FLOAT16 and FLOAT32 in FLOAT64 and round once to the output type. MIN, MAX and
the selections (ARG*, TOP_K) compare the values themselves. The pages leave NaN undefined for
all of them; what the kernels do is XLA's: its CPU reductions of FLOAT32 (YNNPACK's) skip a
NaN in rows of more than a few dozen elements and propagate it in shorter ones; ARGMIN/ARGMAX
select a NaN (NumPy's rule) except on large floating inputs (below), which select among the
numbers; TOP_K selects NaNs after every number.

ARGMIN/ARGMAX of large floating inputs (`FAST_ARG_MIN_ELEMENTS` and more) take two steps:
the extreme of each block of the reduced axis, then the first (last) block holding the
overall extreme and the position within it. XLA's CPU code reduces floats 5-7x faster than
the integer sort keys the general path compares (the benchmark's argmax cases), but it treats
subnormals as zeros; where a row's extreme is zero, subnormal or NaN, or the search finds no
position, the whole call takes the general path instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import logsumexp

from .indexing import member

__all__ = [
    "FUNCTIONS",
    "REDUCE_FUNCTIONS",
    "first_maximum_one_hot",
    "reduction",
    "row_major_positions",
]

Array = jax.Array
Axes = tuple[int, ...]


def _wide(x: Array) -> Array:
    """Floats accumulate in FLOAT64 (rounded once to the output type); integers wrap in theirs."""
    return x.astype(jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else x


def _accumulated(x: Array) -> Array:
    """REDUCE's accumulator: FLOAT16 in FLOAT32, FLOAT32 and FLOAT64 in their own type."""
    return x.astype(jnp.float32) if x.dtype == jnp.float16 else x


def _sum(x: Array, axes: Axes) -> Array:
    return jnp.sum(x, axis=axes, dtype=x.dtype, keepdims=True)


# DML_REDUCE_FUNCTION members (ne-directml-dml_reduce_function) on the accumulated input.
REDUCE_FUNCTIONS: dict[str, Callable[[Array, Axes], Array]] = {
    "AVERAGE": lambda x, a: jnp.mean(x, axis=a, keepdims=True),
    "L1": lambda x, a: _sum(jnp.abs(x), a),
    "L2": lambda x, a: jnp.sqrt(_sum(x * x, a)),
    "LOG_SUM": lambda x, a: jnp.log(_sum(x, a)),
    "LOG_SUM_EXP": lambda x, a: logsumexp(x, axis=a, keepdims=True),
    "MAX": lambda x, a: jnp.max(x, axis=a, keepdims=True),
    "MIN": lambda x, a: jnp.min(x, axis=a, keepdims=True),
    "MULTIPLY": lambda x, a: jnp.prod(x, axis=a, dtype=x.dtype, keepdims=True),
    "SUM": _sum,
    "SUM_SQUARE": lambda x, a: _sum(x * x, a),
}


def _arg(x: Array, axes: Axes, *, largest: bool, last: bool) -> Array:
    """The row-major index, over the reduced axes, of the first (or `last`) smallest (or
    `largest`) element; kept dimensions stay in place, reduced ones become 1."""
    reduced = sorted(set(axes))
    block = _fast_arg_block(x, reduced)
    if block is None:
        return _arg_by_keys(x, reduced, largest=largest, last=last)
    outer = int(np.prod(x.shape[: reduced[0]]))
    inner = int(np.prod(x.shape[reduced[-1] + 1 :]))
    # (outer, blocks, block, inner). Where x is a slice of a window (kernels.host), XLA makes
    # it dense for the block reduction; the barrier has both branches read that one copy.
    grouped = _barrier(x.reshape(outer, -1, block, inner))
    fast, exact = _arg_by_blocks(grouped, largest=largest, last=last)

    def general(grouped: Array) -> Array:
        keys = _arg_by_keys(grouped.reshape(x.shape), reduced, largest=largest, last=last)
        return keys.reshape(fast.shape).astype(fast.dtype)

    index: Array = lax.cond(exact, lambda _: fast, general, grouped)
    return index.reshape(_kept_shape(x.shape, reduced))


def _kept_shape(shape: tuple[int, ...], reduced: list[int]) -> list[int]:
    """An ARG* result's shape: kept dimensions in place, reduced ones 1."""
    return [1 if d in reduced else size for d, size in enumerate(shape)]


def _reduced_count(shape: tuple[int, ...], reduced: list[int]) -> int:
    """How many elements each ARG* search runs over."""
    return int(np.prod([shape[d] for d in reduced]))


_barrier: Callable[[Array], Array] = lax.optimization_barrier
FAST_ARG_MIN_ELEMENTS = 1 << 16  # smaller inputs (the suites' cases) keep one simple program
_ARG_BLOCKS = (128, 256, 64, 512, 32, 16)  # block lengths tried, best measured first


def _fast_arg_block(x: Array, reduced: list[int]) -> int | None:
    """The block length the two-step search uses for `x`, or None where it does not apply:
    not floating, small, reduced axes not adjacent, or a reduced length no block divides."""
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.size < FAST_ARG_MIN_ELEMENTS:
        return None
    if not reduced or reduced != list(range(reduced[0], reduced[-1] + 1)):
        return None
    count = _reduced_count(x.shape, reduced)
    if count >= 2**31:
        return None
    return next((b for b in _ARG_BLOCKS if count % b == 0 and count // b >= 2), None)


def _arg_by_blocks(grouped: Array, *, largest: bool, last: bool) -> tuple[Array, Array]:
    """(index, exact) over axes 1 and 2 of `grouped` (outer, blocks, block, inner): the
    two-step search (module docstring), and whether every row's extreme is a normal number
    that both steps found, so that treating subnormals as zeros changed nothing."""
    blocks, block = grouped.shape[1:3]
    pick = jnp.max if largest else jnp.min
    # The barrier keeps XLA from folding the overall extreme into a second pass over x.
    block_extremes = _barrier(pick(grouped, axis=2))
    extreme = pick(block_extremes, axis=1, keepdims=True)
    which = _position(block_extremes == extreme, 1, last=last)
    chosen = jnp.clip(which, 0, blocks - 1)
    window = jnp.take_along_axis(grouped, chosen[:, None, None, :], axis=1)[:, 0]
    within = _position(window == extreme, 1, last=last)
    tiny = np.finfo(np.dtype(grouped.dtype)).tiny
    normal = jnp.abs(extreme[:, 0]) >= tiny  # False for NaN too
    found = (which == chosen) & (within >= 0) & (within < block)
    return chosen * block + within, jnp.all(normal & found)


def _position(hit: Array, axis: int, *, last: bool) -> Array:
    """The first (`last`) position along `axis` where `hit` holds: the axis' length (-1) if none."""
    iota = lax.broadcasted_iota(jnp.int32, hit.shape, axis)
    return _first_hit(hit, iota, (axis,), hit.shape[axis], last=last)


def _first_hit(hit: Array, positions: Array, axes: Axes, count: int, *, last: bool) -> Array:
    """The smallest (`last`: largest) of `positions` where `hit` holds, reduced over `axes`:
    `count` (-1) where it holds nowhere."""
    if last:
        return jnp.max(jnp.where(hit, positions, -1), axis=axes)
    return jnp.min(jnp.where(hit, positions, count), axis=axes)


def _arg_by_keys(x: Array, reduced: list[int], *, largest: bool, last: bool) -> Array:
    """`_arg` on order-preserving integer keys: exact for every value, subnormals included."""
    keys = _ordered(x)  # NaN is undefined (the specs' R1)
    shape = _kept_shape(x.shape, reduced)
    if reduced == list(range(x.ndim - len(reduced), x.ndim)):
        # Trailing axes: contiguous rows, one (value, index) reduction over each.
        rows = keys.reshape(*x.shape[: x.ndim - len(reduced)], -1)
        if last:
            rows = jnp.flip(rows, axis=-1)
        index = jnp.argmax(rows, axis=-1) if largest else jnp.argmin(rows, axis=-1)
        if last:
            index = rows.shape[-1] - 1 - index
        return index.reshape(shape)
    # Other axes: the extreme key, then the first (last) position holding it, reduced in place.
    # Transposing the reduced axes to the end first made XLA's CPU code 10x slower.
    count = _reduced_count(x.shape, reduced)
    dtype = jnp.int32 if count < 2**31 else jnp.int64
    positions = row_major_positions(x.shape, reduced, dtype)
    pick = jnp.max if largest else jnp.min
    hit = keys == pick(keys, axis=tuple(reduced), keepdims=True)
    return _first_hit(hit, positions, tuple(reduced), count, last=last).reshape(shape)


def row_major_positions(shape: tuple[int, ...], reduced: list[int], dtype: Any) -> Array:
    """Each element's row-major position over the `reduced` axes (what ARG* return)."""
    positions = jnp.zeros(shape, dtype)
    stride = 1
    for axis in reversed(reduced):
        iota = lax.broadcasted_iota(dtype, shape, axis)
        positions = positions + iota * jnp.asarray(stride, dtype)
        stride *= shape[axis]
    return positions


def first_maximum_one_hot(x: Array, axes: Axes) -> Array:
    """1 where the first maximum over `axes` (row-major over them) is, 0 elsewhere: found as
    ARGMAX finds it (HARDMAX)."""
    reduced = sorted(set(axes))
    index = _arg(x, tuple(reduced), largest=True, last=False)
    return row_major_positions(x.shape, reduced, index.dtype) == index


def _reduce(input: Array, *, reduce_function: str, axes: Axes, output_type: str) -> Array:
    name = member(reduce_function, "DML_REDUCE_FUNCTION_")
    if name in ("ARGMIN", "ARGMAX"):  # as ARGMIN/ARGMAX with AxisDirection INCREASING
        index = _arg(input, axes, largest=name == "ARGMAX", last=False)
        return index.astype(output_type)
    if name not in REDUCE_FUNCTIONS:
        known = sorted({*REDUCE_FUNCTIONS, "ARGMIN", "ARGMAX"})
        raise ValueError(f"no reduce function {reduce_function!r} (known: {known})")
    exact = name in ("MIN", "MAX")
    x = input if exact else _accumulated(input)
    return REDUCE_FUNCTIONS[name](x, tuple(sorted(set(axes)))).astype(output_type)


def _arg_function(largest: bool) -> Callable[..., Array]:
    def arg(input: Array, *, axes: Axes, axis_direction: str, output_type: str) -> Array:
        """AxisDirection picks among equal elements: INCREASING the first, DECREASING the last."""
        last = member(axis_direction, "DML_AXIS_DIRECTION_") == "DECREASING"
        return _arg(input, axes, largest=largest, last=last).astype(output_type)

    return arg


def _ordered(x: Array) -> Array:
    """Floats as signed integers in the same order (-0 and +0 equal), so that comparisons see
    every bit: XLA's CPU sort compares FLOAT32 subnormals as zeros. Integers as they are."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    signed = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}[x.dtype.itemsize]
    bits = lax.bitcast_convert_type(x, signed)
    magnitude = bits & jnp.asarray(np.iinfo(signed).max, signed)
    return jnp.where(bits < 0, -magnitude, magnitude)


def _descending(x: Array) -> Array:
    """A sort key whose ascending order is x's descending order."""
    return jnp.bitwise_not(_ordered(x))  # reverses the order of signed and unsigned integers


def _top_k(
    input: Array,
    *,
    axis: int,
    k: int,
    index_type: str,
    axis_direction: str = "DECREASING",
) -> tuple[Array, Array]:
    """The K largest (DECREASING) or smallest (INCREASING) elements of each sequence along
    `axis`, in that order, and their indices; equal values keep ascending index order."""
    moved = jnp.moveaxis(input, axis, -1)
    increasing = member(axis_direction, "DML_AXIS_DIRECTION_") == "INCREASING"
    key = _ordered(moved) if increasing else _descending(moved)
    order = lax.broadcasted_iota(jnp.int64, moved.shape, moved.ndim - 1)
    # A stable sort on the key alone: ties keep the original (ascending) index order.
    _, index = lax.sort((key, order), dimension=moved.ndim - 1, is_stable=True, num_keys=1)
    index = index[..., :k]
    values = jnp.take_along_axis(moved, index, axis=-1)
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(index, -1, axis).astype(index_type)


def _cumulative(product: bool) -> Callable[..., Array]:
    def scan(input: Array, *, axis: int, axis_direction: str, exclusive: bool) -> Array:
        """Running products (sums) along `axis`, from its end for DECREASING; an exclusive
        scan writes the tally before the current element (the identity first)."""
        reverse = member(axis_direction, "DML_AXIS_DIRECTION_") == "DECREASING"
        x = _wide(input)
        total = (lax.cumprod if product else lax.cumsum)(x, axis=axis, reverse=reverse)
        if exclusive:
            size = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = 1
            identity = (jnp.ones if product else jnp.zeros)(shape, x.dtype)
            if reverse:
                parts = [lax.slice_in_dim(total, 1, size, axis=axis), identity]
            else:
                parts = [identity, lax.slice_in_dim(total, 0, size - 1, axis=axis)]
            total = jnp.concatenate(parts, axis=axis)
        return total.astype(input.dtype)

    return scan


def _nonzero_coordinates(
    input: Array, *, coordinate_count: int, count_type: str, coordinate_type: str
) -> tuple[Array, Array]:
    """The number of non-zero elements (-0.0 is zero, NaN is not) and their coordinates in
    the last `coordinate_count` dimensions, one row each in ascending element order; rows past
    the count are zeros."""
    nonzero = (_ordered(input) != 0).reshape(-1)  # bits, not a DAZ compare: subnormals count
    count = jnp.sum(nonzero, dtype=jnp.int64).astype(count_type)
    # Padding rows take element 0, whose coordinates are all zero.
    flat = jnp.flatnonzero(nonzero, size=nonzero.size, fill_value=0)
    columns = list(jnp.unravel_index(flat, input.shape))[max(input.ndim - coordinate_count, 0) :]
    padding = [jnp.zeros_like(flat)] * max(coordinate_count - input.ndim, 0)
    return count, jnp.stack(padding + columns, axis=-1).astype(coordinate_type)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ARGMAX": _arg_function(largest=True),
    "ARGMIN": _arg_function(largest=False),
    "CUMULATIVE_PRODUCT": _cumulative(product=True),
    "CUMULATIVE_SUMMATION": _cumulative(product=False),
    "NONZERO_COORDINATES": _nonzero_coordinates,
    "REDUCE": _reduce,
    "TOP_K": _top_k,
    "TOP_K1": _top_k,
}


def reduction(input: Array, *, function: str, **parameters: Any) -> Any:
    """Run one reduction, selection or scan operator on the input; one array, or the tuple
    of the operator's outputs (TOP_K*, NONZERO_COORDINATES)."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no reduction function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](input, **parameters)
