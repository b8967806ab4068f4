"""Element-wise masks over tensor data for `requires` constraints.

Per element: not NaN, not equal to a value, fits an integer type once rounded toward zero, a
power that fits an integer type, even sums, a whole number, not greater than another array's
element; one element of each row (`column`, the last axis: an ROI's coordinate); the
combinators `either` and `both`; and the mask
of the output cells a bad element of an element-wise operator's input leaves undefined.
Values are compared exactly (64-bit integers included).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .facts import Facts
from .scalars import data_type_kind

__all__ = [
    "both",
    "cells_where_not",
    "column",
    "either",
    "finite",
    "fits",
    "not_equal",
    "not_greater",
    "not_nan",
    "power_fits",
    "same_parity",
    "spans",
    "whole",
]


def _exact(values: np.ndarray) -> np.ndarray:
    """Elements as Python ints and floats, so comparisons and arithmetic never wrap."""
    return np.asarray(values).astype(object)


def not_nan(facts: Facts, values: np.ndarray) -> np.ndarray:
    array = np.asarray(values)
    return ~np.isnan(array) if array.dtype.kind == "f" else np.ones(array.shape, dtype=bool)


def spans(facts: Facts, values: np.ndarray, x: int | float) -> bool:
    """min(a) <= x <= max(a) with min(a) < max(a), over the elements that are not NaN."""
    array = np.asarray(values).astype(np.float64).reshape(-1)
    array = array[~np.isnan(array)]
    if array.size == 0:
        return False
    low, high = float(array.min()), float(array.max())
    return low <= x <= high and low < high


def finite(facts: Facts, values: np.ndarray) -> np.ndarray:
    array = np.asarray(values)
    return np.isfinite(array) if array.dtype.kind == "f" else np.ones(array.shape, dtype=bool)


def not_equal(facts: Facts, values: np.ndarray, value: int | float) -> np.ndarray:
    return np.asarray(_exact(values) != value, dtype=bool)


def fits(facts: Facts, values: np.ndarray, data_type: str) -> np.ndarray:
    """Per element: rounded toward zero, the value lies in the range of integer type `data_type`
    (NaN and infinities never do); every value fits a float type."""
    array = np.asarray(values)
    if data_type_kind(facts, data_type) == "f":
        return np.ones(array.shape, dtype=bool)
    info = np.iinfo(np.dtype(facts.numpy_dtype(data_type) or ""))
    if array.dtype.kind == "f":
        # Exact in float64: the bounds min and max + 1 are powers of two (or 0), and a
        # truncated value fits when min <= t < max + 1.
        with np.errstate(invalid="ignore"):
            truncated = np.trunc(array.astype(np.float64))
            return (
                np.isfinite(truncated)
                & (truncated >= float(info.min))
                & (truncated < float(info.max + 1))
            )
    if array.dtype.kind == "b":  # 0 and 1 fit every integer type
        return np.ones(array.shape, dtype=bool)
    if array.dtype.kind in "iu":
        # The bounds clipped to the array's own type compare exactly in that type.
        own = np.iinfo(array.dtype)
        low, high = max(info.min, own.min), min(info.max, own.max)
        if low > high:
            return np.zeros(array.shape, dtype=bool)
        typed = array.dtype.type
        return np.asarray((array >= typed(low)) & (array <= typed(high)), dtype=bool)

    def one_fits(value: int | float) -> bool:  # Python numbers (an object array)
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return bool(info.min <= math.trunc(value) <= info.max)

    flat = [one_fits(v) for v in _exact(array).reshape(-1).tolist()]
    return np.array(flat, dtype=bool).reshape(array.shape)


def _integral(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is an integer, as float64, is odd) per element, without converting to Python numbers;
    the float64 copy is exact below 2^53 and close enough above to compare magnitudes."""
    if values.dtype.kind in "iub":
        odd = (values % 2 != 0) if values.dtype.kind != "b" else values.astype(bool)
        return np.ones(values.shape, dtype=bool), values.astype(np.float64), odd
    wide = values.astype(np.float64)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(wide) & (np.trunc(wide) == wide)
        odd = whole & (np.fmod(wide, 2) != 0)
    return whole, wide, odd


def power_fits(
    facts: Facts, bases: np.ndarray, exponents: np.ndarray, data_type: str
) -> np.ndarray:
    """Per element: base ** exponent is an integer within integer type `data_type` (always true
    for a float type)."""
    base, exponent = np.broadcast_arrays(np.asarray(bases), np.asarray(exponents))
    if data_type_kind(facts, data_type) == "f":
        return np.ones(base.shape, dtype=bool)
    info = np.iinfo(np.dtype(facts.numpy_dtype(data_type) or ""))
    base_whole, b, _ = _integral(base)
    exponent_whole, e, e_odd = _integral(exponent)
    fits = np.zeros(base.shape, dtype=bool)
    whole = base_whole & exponent_whole
    # 0, 1 and -1 raised to an integer: 1, 0 (e >= 1), 1 or -1 (by the exponent's parity).
    fits |= whole & (e == 0)
    fits |= whole & (b == 0) & (e >= 1)
    fits |= whole & (b == 1)
    fits |= whole & (b == -1) & (~e_odd | (info.min <= -1))
    # |base| >= 2: a negative exponent gives a fraction, and |base| ** e > 2^65 fits no type;
    # what is left is computed exactly.
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude_bits = e * np.log2(np.abs(b))
    near = whole & (np.abs(b) >= 2) & (e >= 1) & (e < 64) & (magnitude_bits <= 65)
    where = np.flatnonzero(near)
    if where.size:
        exact_bases = base.reshape(-1)[where].tolist()
        exact_exponents = exponent.reshape(-1)[where].tolist()
        fits.reshape(-1)[where] = [
            info.min <= int(x) ** int(y) <= info.max
            for x, y in zip(exact_bases, exact_exponents, strict=True)
        ]
    return fits


def same_parity(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((_exact(a) + _exact(b)) % 2 == 0, dtype=bool)


def whole(facts: Facts, values: np.ndarray) -> np.ndarray:
    """Per element: a finite value with no fractional part (true everywhere for integer data)."""
    array = np.asarray(values)
    if array.dtype.kind != "f":
        return np.ones(array.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        whole_numbers: np.ndarray = np.isfinite(array) & (np.floor(array) == array)
    return whole_numbers


def not_greater(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element (broadcast): a <= b, compared exactly (NaN is never <= anything)."""
    with np.errstate(invalid="ignore"):  # NaN compares false, as wanted: no warning
        return np.asarray(_exact(a) <= _exact(b), dtype=bool)


def column(facts: Facts, values: np.ndarray, index: int) -> np.ndarray:
    """Element `index` of each row (the last axis), keeping the other axes: a[..., index]."""
    array = np.asarray(values)
    if not -array.shape[-1] <= index < array.shape[-1]:
        raise ValueError(f"no column {index} in an array of shape {array.shape}")
    picked: np.ndarray = array[..., index]
    return picked


def either(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logical_or(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))
    return result


def both(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logical_and(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))
    return result


def cells_where_not(facts: Facts, ok: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Output cells (shape `sizes`) where the element-wise mask `ok`, broadcast, is False."""
    return np.broadcast_to(~np.asarray(ok, dtype=bool), tuple(sizes)).copy()


def windows_all(
    facts: Facts,
    ok: np.ndarray,
    windows: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> np.ndarray:
    """Per window of a pooling over `ok` ({N, C, spatial...}): true where `ok` holds at every
    element of the unpadded input the window covers (a window wholly in the padding covers
    none: true). Shape {N, C, window_output_sizes(...)}."""
    mask = np.asarray(ok, dtype=bool)
    rank = len(windows)
    spatial = mask.shape[mask.ndim - rank :]
    padding = [(0, 0)] * (mask.ndim - rank) + list(zip(start, end, strict=True))
    padded = np.pad(mask, padding, constant_values=True)
    counts = [
        (n + b + e - ((w - 1) * d + 1)) // s + 1
        for n, w, s, d, b, e in zip(spatial, windows, strides, dilations, start, end, strict=True)
    ]
    result = np.ones(mask.shape[: mask.ndim - rank] + tuple(max(0, c) for c in counts), bool)
    for offset in np.ndindex(*windows):
        picked: tuple[Any, ...] = tuple(
            slice(k * d, k * d + (c - 1) * s + 1, s)
            for k, d, c, s in zip(offset, dilations, counts, strides, strict=True)
        )
        result &= padded[(Ellipsis, *picked)]
    return result


def windows_cover(
    facts: Facts,
    ok: np.ndarray,
    sizes: list[int],
    windows: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> np.ndarray:
    """A mask of shape `sizes` ({N, C, spatial...}): true at each input element a window with
    a false `ok` ({N, C, window_output_sizes(...)}) holds."""
    bad = ~np.asarray(ok, dtype=bool)
    rank = len(windows)
    lead = list(sizes[: len(sizes) - rank])
    padded_shape = lead + [
        n + b + e for n, b, e in zip(sizes[len(lead) :], start, end, strict=True)
    ]
    covered = np.zeros(padded_shape, dtype=bool)
    counts = bad.shape[len(lead) :]
    for offset in np.ndindex(*windows):
        picked: tuple[Any, ...] = tuple(
            slice(k * d, k * d + (c - 1) * s + 1, s)
            for k, d, c, s in zip(offset, dilations, counts, strides, strict=True)
        )
        covered[(Ellipsis, *picked)] |= bad
    inner: tuple[Any, ...] = tuple(
        slice(b, b + n) for b, n in zip(start, sizes[len(lead) :], strict=True)
    )
    return covered[(Ellipsis, *inner)]
