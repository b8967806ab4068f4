"""Compare an output with the expected one by the spec's rule.

exact: bitwise equality (so NaN payloads and negative zero count), dtype and shape included.
ulp:   |actual - expected| <= max_ulps * ULP(scale) in the output type, where `expected` is the
       exact value rounded to the output type and `scale` the spec's ulp_scale; infinities and
       NaN must match exactly. Rules with `terms` (reductions, scans) also allow each element
       terms * eps * magnitude (conformance/check.py).
Cells the spec leaves undefined are skipped by the caller (pass a mask).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "MISMATCHES_SHOWN",
    "Mismatch",
    "exact_mismatches",
    "flush_subnormals",
    "mismatches_none_explains",
    "ulp_mismatches",
]


MISMATCHES_SHOWN = 5  # the cells a failure message names


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"at {list(self.index)}: expected {self.expected!r}, got {self.actual!r}"


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def exact_mismatches(
    expected: np.ndarray,
    actual: np.ndarray,
    defined: np.ndarray | None = None,
    limit: int | None = MISMATCHES_SHOWN,
    any_nan: bool = False,
) -> list[Mismatch]:
    """Cells (where `defined`) whose bits differ; the first `limit` of them (None: all).
    With `any_nan`, a NaN matches any NaN (a float type's rule for NaNs arithmetic makes)."""
    differ = _bits(expected) != _bits(actual)
    if any_nan and expected.dtype.kind == "f":
        differ &= ~(np.isnan(expected) & np.isnan(actual))
    if defined is not None:
        differ &= defined
    cells = np.argwhere(differ)[:limit]  # [:None]: all
    return [Mismatch(tuple(int(i) for i in c), expected[tuple(c)], actual[tuple(c)]) for c in cells]


def ulp_mismatches(
    expected: np.ndarray,
    actual: np.ndarray,
    scale: np.ndarray,
    max_ulps: int,
    defined: np.ndarray | None = None,
    abs_tolerance: float | np.ndarray | None = None,
    limit: int | None = MISMATCHES_SHOWN,
    ulps_of: np.dtype[Any] | None = None,
) -> list[Mismatch]:
    """Cells farther than max_ulps ULPs (of `scale`, in the output type or in `ulps_of`, the
    floating type the result is computed in) from `expected`, and not within `abs_tolerance`
    (a number, or one per element) of it either. With `ulps_of`, an integer output (that result
    truncated) also passes one past the bound. A NaN matches any NaN (payloads and signs of NaN
    are not compared); infinities must match exactly."""
    dtype = actual.dtype
    with np.errstate(invalid="ignore", over="ignore"):
        unit = np.spacing(np.abs(scale).astype(ulps_of or dtype)).astype(np.float64)
        gap = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    if ulps_of is not None and dtype.kind in "iu":
        gap = np.maximum(gap - 1, 0)  # the truncation of a result within the bound
    finite = np.isfinite(expected) & np.isfinite(actual)
    with np.errstate(invalid="ignore"):  # 0 ULPs of the largest float: 0 * inf
        close = (gap == 0) | (gap <= max_ulps * unit)
    if abs_tolerance is not None:
        close |= gap <= abs_tolerance
    both_nan = np.isnan(expected) & np.isnan(actual)
    bad = np.where(finite, ~close, ~both_nan & (_bits(expected) != _bits(actual)))
    if defined is not None:
        bad &= defined
    cells = np.argwhere(bad)[:limit]
    return [Mismatch(tuple(int(i) for i in c), expected[tuple(c)], actual[tuple(c)]) for c in cells]


def flush_subnormals(array: np.ndarray) -> np.ndarray:
    """A float array with its subnormal values replaced by zeros of the same sign."""
    if array.dtype.kind != "f":
        return array
    tiny = np.finfo(array.dtype).tiny
    with np.errstate(invalid="ignore"):
        subnormal = (array != 0) & (np.abs(array) < tiny)
    if not subnormal.any():
        return array
    return np.where(subnormal, np.copysign(np.zeros((), array.dtype), array), array).astype(
        array.dtype
    )


def mismatches_none_explains(
    compare: Callable[[np.ndarray, np.ndarray, int | None], list[Mismatch]],
    expected: np.ndarray,
    alternatives: Sequence[np.ndarray],
    defined: np.ndarray,
) -> list[Mismatch]:
    """The first cells that match neither `expected` nor any alternative (another correct
    result: subnormals flushed) by `compare(want, defined, limit)`. Every mismatched cell is
    collected while alternatives may explain some, not the few a message shows."""
    limit = None if alternatives else MISMATCHES_SHOWN
    mismatches = compare(expected, defined, limit)
    for other in alternatives:
        if not mismatches:
            break
        cells = np.zeros(defined.shape, dtype=bool)
        for mismatch in mismatches:
            cells[mismatch.index] = True
        mismatches = compare(other, defined & cells, limit)
    return mismatches[:MISMATCHES_SHOWN]
