"""Masks over index tensors for `requires` constraints of gathers and scatters.

Per index (or index tuple, the last axis): in bounds (negative indices counted from the bound),
a unique target, all coordinates good (`each_tuple`); and the masks of the output cells that
bad indices address (`row_cells`, `slice_cells`, `target_cells`). Indices are compared
exactly, UINT64 values past int64 included.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .facts import Facts

__all__ = [
    "each_tuple",
    "in_bounds",
    "row_cells",
    "slice_cells",
    "target_cells",
    "unique_along",
    "unique_targets",
]


def _normalised(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    signed = values.astype(object)
    return np.where(signed < 0, signed + bounds, signed)


def in_bounds(facts: Facts, values: np.ndarray, bounds: int | list[int]) -> np.ndarray:
    limit = np.asarray(bounds, dtype=object)
    signed = np.asarray(values).astype(object)
    return (signed >= -limit) & (signed < limit)


def unique_targets(facts: Facts, values: np.ndarray, bounds: list[int]) -> np.ndarray:
    """Per index tuple (last axis): True unless another tuple addresses the same target."""
    tuples = _indices_normalised(np.asarray(values), bounds)
    return _only_once(tuples.reshape(-1, tuples.shape[-1])).reshape(tuples.shape[:-1])


def unique_along(facts: Facts, values: np.ndarray, axis: int, bound: int) -> np.ndarray:
    """Per element: True unless another element writes the same target along `axis`."""
    array = _indices_normalised(np.asarray(values), bound)
    targets = np.indices(array.shape).reshape(array.ndim, -1).astype(array.dtype)
    targets[axis] = array.reshape(-1)
    return _only_once(targets.T).reshape(array.shape)


def _indices_normalised(values: np.ndarray, bounds: int | list[int]) -> np.ndarray:
    """`_normalised` in int64 where every value and bound fits (exact, and whole-array fast);
    else as Python ints (an object array)."""
    limits = np.asarray(bounds, dtype=object)
    fits = values.dtype.kind == "i" or (
        values.dtype.kind == "u" and (not values.size or int(values.max()) < 2**63)
    )
    if fits and all(-(2**62) < int(b) < 2**62 for b in limits.reshape(-1)):
        signed = values.astype(np.int64)
        return np.where(signed < 0, signed + limits.astype(np.int64), signed)
    return _normalised(values, limits)


def _only_once(rows: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array of integers: True where no other row is equal."""
    if rows.dtype == object:  # indices past int64 (UINT64 data): compared as Python ints
        counts: dict[tuple[Any, ...], int] = {}
        flat = [tuple(row) for row in rows.tolist()]
        for key in flat:
            counts[key] = counts.get(key, 0) + 1
        return np.array([counts[key] == 1 for key in flat], dtype=bool)
    if not len(rows):
        return np.ones(0, dtype=bool)
    low = rows.min(axis=0)
    extent = [int(b) - int(a) + 1 for a, b in zip(low, rows.max(axis=0), strict=True)]
    if math.prod(extent) >= 2**62:  # no linear key fits: rows compared as rows
        _, inverse, repeats = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return np.asarray(repeats[inverse.reshape(-1)] == 1, dtype=bool)
    keys = np.ravel_multi_index(tuple((rows - low).T), extent)  # each row's place in its box
    if math.prod(extent) <= 4 * len(rows) + 4096:
        return np.asarray(np.bincount(keys)[keys] == 1, dtype=bool)
    _, inverse, repeats = np.unique(keys, return_inverse=True, return_counts=True)
    return np.asarray(repeats[inverse] == 1, dtype=bool)


def each_tuple(facts: Facts, mask: np.ndarray) -> np.ndarray:
    return np.asarray(np.all(np.asarray(mask, dtype=bool), axis=-1))


def row_cells(facts: Facts, ok: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Output cells of the rows (row-major blocks, one per mask element) whose mask is False."""
    flags = np.asarray(ok, dtype=bool).reshape(-1)
    cells = np.zeros((flags.size, math.prod(sizes) // max(flags.size, 1)), dtype=bool)
    cells[~flags] = True
    return cells.reshape(sizes)


def slice_cells(
    facts: Facts, ok: np.ndarray, values: np.ndarray, bounds: list[int], sizes: list[int]
) -> np.ndarray:
    """Output cells of the slices addressed by the index tuples whose mask is False."""
    tuples = _normalised(np.asarray(values), np.asarray(bounds, dtype=object))
    flat = tuples.reshape(-1, tuples.shape[-1])
    cells = np.zeros((math.prod(bounds), math.prod(sizes) // math.prod(bounds)), dtype=bool)
    for row, good in zip(
        flat.tolist(), np.asarray(ok, dtype=bool).reshape(-1).tolist(), strict=True
    ):
        if not good:
            cells[int(np.ravel_multi_index(tuple(int(i) for i in row), bounds))] = True
    return cells.reshape(sizes)


def target_cells(
    facts: Facts, ok: np.ndarray, values: np.ndarray, axis: int, sizes: list[int]
) -> np.ndarray:
    """Output cells written by the elements whose mask is False (their index replacing the
    coordinate along `axis`)."""
    array = _normalised(np.asarray(values), np.asarray(sizes[axis], dtype=object))
    cells = np.zeros(sizes, dtype=bool)
    for position in zip(*np.nonzero(~np.asarray(ok, dtype=bool)), strict=True):
        target = list(position)
        target[axis] = int(array[position])
        cells[tuple(target)] = True
    return cells


def unique_values(facts: Facts, values: np.ndarray) -> np.ndarray:
    """Per element: True unless another element holds the same value (a flat index another
    writes too)."""
    array = np.asarray(values)
    return _only_once(array.reshape(-1, 1)).reshape(array.shape)


def flat_cells(facts: Facts, ok: np.ndarray, values: np.ndarray, sizes: list[int]) -> np.ndarray:
    """A mask of shape `sizes`, true at the row-major cell each element of `values` whose mask
    is False addresses (cells outside `sizes` left out)."""
    cells = np.zeros(int(np.prod(sizes)), dtype=bool)
    targets = np.asarray(values)[~np.asarray(ok, dtype=bool)].astype(object)
    for target in targets.reshape(-1):
        if 0 <= int(target) < cells.size:
            cells[int(target)] = True
    return cells.reshape(sizes)
