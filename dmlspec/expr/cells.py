"""Masks over tensor data for `requires` constraints of gathers, reductions and scans.

Each function takes tensor data (`T.Values`) or a mask of it and gives a boolean mask: either
per input element (`at_least`), per reduced set (`all_along`, `reduced_fits`, with the reduced
axes kept as size-1 dimensions, so the mask broadcasts to a reduction's or a scan's output), or
of an output's shape (`gather_cells`, `rows_written`): the output cells a bad input leaves
undefined. They are registered, with their type rules, in `functions.FUNCTIONS`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .facts import Facts

__all__ = ["all_along", "at_least", "gather_cells", "reduced_fits", "rows_written", "steps_past"]

REDUCE_PREFIX = "DML_REDUCE_FUNCTION_"
# What each DML_REDUCE_FUNCTION accumulates (its running value), on the absolute values.
_SUMS = frozenset({"SUM", "AVERAGE", "L1", "LOG_SUM"})
_SQUARES = frozenset({"SUM_SQUARE", "L2"})
_SELECTIONS = frozenset({"MIN", "MAX", "ARGMIN", "ARGMAX"})


def at_least(facts: Facts, values: np.ndarray, bound: int | float) -> np.ndarray:
    """Per element: value >= bound, compared exactly (64-bit integers included)."""
    array = np.asarray(values)
    return np.asarray(array.astype(object) >= bound, dtype=bool).reshape(array.shape)


def all_along(facts: Facts, ok: np.ndarray, axes: list[int]) -> np.ndarray:
    """Per reduced set (the elements that differ only along `axes`): all of `ok` holds."""
    return np.asarray(np.all(np.asarray(ok, dtype=bool), axis=_axes(ok, axes), keepdims=True))


def gather_cells(
    facts: Facts, ok: np.ndarray, count: int, inner: int, sizes: list[int]
) -> np.ndarray:
    """Output cells (shape `sizes`) whose `count` coordinates before the last `inner` address
    a false element of `ok` (its last `count` dimensions; the others must be 1)."""
    bad = ~np.asarray(ok, dtype=bool)
    if count > bad.ndim or any(size != 1 for size in bad.shape[: bad.ndim - count]):
        raise ValueError(f"a mask of shape {bad.shape} has no {count} trailing index dimensions")
    index_shape: tuple[int, ...] = bad.shape[bad.ndim - count :]
    start = len(sizes) - inner - count
    while start < 0:  # index dimensions cropped off the front must be 1s
        if index_shape[:1] != (1,):
            raise ValueError(f"index dimensions {index_shape} do not fit output sizes {sizes}")
        index_shape, start = index_shape[1:], start + 1
    shaped = bad.reshape((1,) * start + index_shape + (1,) * inner)
    return np.broadcast_to(shaped, tuple(sizes)).copy()


def rows_written(facts: Facts, values: np.ndarray, sizes: list[int]) -> np.ndarray:
    """A mask of shape `sizes` (..., M, N), true in the first c of the M rows, c the number of
    non-zero elements of `values` (either zero counts as zero; NaN does not)."""
    count = int(np.count_nonzero(np.asarray(values) != 0))
    mask = np.zeros(tuple(sizes), dtype=bool)
    mask[..., :count, :] = True
    return mask


def steps_past(facts: Facts, lengths: np.ndarray, sizes: list[int]) -> np.ndarray:
    """A mask of shape `sizes` {seq_length, num_directions, batch_size, hidden_size}: true at
    step t of batch element b where t >= lengths[b] (lengths {.., batch_size}, read flat)."""
    per_batch = np.asarray(lengths).reshape(-1).astype(np.int64)
    steps = np.arange(sizes[0]).reshape(-1, 1, 1, 1)
    past: np.ndarray = np.broadcast_to(steps >= per_batch.reshape(1, 1, -1, 1), tuple(sizes))
    return past.copy()


def reduced_fits(
    facts: Facts, values: np.ndarray, function: str, axes: list[int], data_type: str
) -> np.ndarray:
    """Per reduced set: what `function` accumulates stays within `data_type` in any order.

    Integers: the exact sum of |x| (SUM, AVERAGE, L1, LOG_SUM), of x^2 (SUM_SQUARE, L2) or the
    product of |x| (MULTIPLY) is at most the type's largest value, which bounds every partial
    result. Floats, over the finite elements (infinities and NaN give the same result in every
    order): the same sums at most the largest finite value; for MULTIPLY, the product of the
    factors above 1 at most it and of the non-zero ones below 1 at least the smallest normal
    (so no partial product overflows or underflows); for LOG_SUM_EXP, the sum of exp(x)
    between those two. MIN, MAX, ARGMIN and ARGMAX accumulate nothing: always true.
    """
    name = function.removeprefix(REDUCE_PREFIX)
    array = np.asarray(values)
    axis = _axes(array, axes)
    shape = tuple(1 if i in axis else size for i, size in enumerate(array.shape))
    if name in _SELECTIONS:
        return np.ones(shape, dtype=bool)
    dtype = np.dtype(facts.numpy_dtype(data_type) or "")
    if dtype.kind in "iu":
        return _integer_fits(array, name, axis, int(np.iinfo(dtype).max))
    return _float_fits(array.astype(np.float64), name, axis, np.finfo(dtype))


def _axes(array: np.ndarray, axes: list[int]) -> tuple[int, ...]:
    rank = np.asarray(array).ndim
    if any(not 0 <= a < rank for a in axes):
        raise ValueError(f"axes {axes} out of range for {rank} dimensions")
    return tuple(sorted(set(axes)))


def _integer_fits(array: np.ndarray, name: str, axis: tuple[int, ...], top: int) -> np.ndarray:
    magnitudes = np.abs(array.astype(object))  # Python ints: exact, never wrap
    if name in _SUMS:
        total = np.sum(magnitudes, axis=axis, keepdims=True)
    elif name in _SQUARES:
        total = np.sum(magnitudes * magnitudes, axis=axis, keepdims=True)
    elif name == "MULTIPLY":
        total = np.prod(magnitudes, axis=axis, keepdims=True)
    else:
        raise ValueError(f"{name} is not a DML_REDUCE_FUNCTION on integers")
    return np.asarray(total <= top, dtype=bool)


def _float_fits(
    array: np.ndarray, name: str, axis: tuple[int, ...], info: np.finfo[Any]
) -> np.ndarray:
    finite = np.isfinite(array)
    magnitudes = np.where(finite, np.abs(array), 0.0)
    top, tiny = float(info.max), float(info.tiny)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if name in _SUMS:
            return np.asarray(np.sum(magnitudes, axis=axis, keepdims=True) <= top)
        if name in _SQUARES:
            return np.asarray(np.sum(magnitudes * magnitudes, axis=axis, keepdims=True) <= top)
        if name == "MULTIPLY":  # in logs: a float64 product of FLOAT64 values could overflow
            logs = np.log(np.where(magnitudes > 0, magnitudes, 1.0))
            large = np.sum(np.where(logs > 0, logs, 0.0), axis=axis, keepdims=True)
            small = np.sum(np.where(logs < 0, logs, 0.0), axis=axis, keepdims=True)
            return np.asarray((large <= math.log(top)) & (small >= math.log(tiny)))
        if name == "LOG_SUM_EXP":
            shifted = np.where(finite, array, -np.inf)
            peak = np.max(shifted, axis=axis, keepdims=True)
            safe_peak = np.where(np.isfinite(peak), peak, 0.0)
            log_sum = safe_peak + np.log(
                np.sum(np.exp(shifted - safe_peak), axis=axis, keepdims=True)
            )
            in_range = (log_sum <= math.log(top)) & (log_sum >= math.log(tiny))
            return np.asarray(in_range | ~np.isfinite(peak), dtype=bool)
    raise ValueError(f"{name} is not a DML_REDUCE_FUNCTION")
