"""The numbers of the onnxruntime element-wise graphs: the types a graph computes in (64-bit
integers, float32 or float64), scalar unions read as numbers, and the values a graph compares
with or divides by, held in a tensor's type (bounds saturated to its range, divisors of 0
replaced).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .graph import Graph

__all__ = [
    "bound",
    "compare_with_bound",
    "nonzero_divisor",
    "outward",
    "scalar_number",
    "to_float",
    "union_value",
    "wide",
    "wide_type",
]


def wide_type(dtype: np.dtype[Any]) -> np.dtype[Any]:
    if dtype.kind == "f":
        return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)
    if dtype.kind == "i":
        return np.dtype(np.int64)
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    return dtype


def wide(g: Graph, value: str) -> str:
    return g.cast(value, wide_type(g.dtype(value)))


def to_float(g: Graph, value: str) -> str:
    """float32 (float64 stays float64)."""
    dtype = g.dtype(value)
    return value if dtype == np.float64 else g.cast(value, np.float32)


def scalar_number(value: Any) -> Any:
    """A scalar union read as the number it holds ({"Float32": x} or a plain number)."""
    if isinstance(value, Mapping):
        (held,) = value.values()
        return held
    return value


def bound(g: Graph, number: Any, like: str) -> str:
    """A Min/Max/threshold as `like`'s type: floats as they are; for integers, the nearest
    integer toward zero, saturated to the type's range (the pages are silent)."""
    dtype = g.dtype(like)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if isinstance(number, int | np.integer):  # exactly: a float rounds 2^63 - 1 up
            return g.feed(np.array(max(info.min, min(info.max, int(number))), dtype))
        value = float(number)
        if math.isnan(value):
            value = 0.0
        held = max(info.min, min(info.max, int(value) if math.isfinite(value) else value))
        return g.feed(np.array(int(held), dtype))
    return g.scalar(float(number), like)


def nonzero_divisor(g: Graph, a: str, b: str) -> str:
    """b with 0 (and -1 where a is the type's lowest value: INT_MIN / -1 traps on the CPU)
    replaced by 1; those cells are undefined (DIVIDE.R1, R2, the moduli's R1)."""
    if g.dtype(b).kind not in "iu":
        return b
    one = g.scalar(1, b)
    b = g.where(g.compare("Equal", b, g.scalar(0, b)), one, b)
    if g.dtype(b).kind == "i":
        lowest = g.scalar(int(np.iinfo(g.dtype(a)).min), a)
        trap = g.op(
            "And",
            g.compare("Equal", b, g.scalar(-1, b)),
            g.compare("Equal", a, lowest),
            dtype=np.bool_,
        )
        b = g.where(trap, one, b)
    return b


def union_value(number: Any, data_type: Any) -> Any:
    """A DML_SCALAR_UNION bound as its member of an integer type holds it (the spec's as_type
    rule); floats as they are."""
    from ...expr.scalars import scalar_union_value
    from ...reference.tensors import numpy_dtype

    dtype = np.dtype(numpy_dtype(str(data_type).removeprefix("DML_TENSOR_DATA_TYPE_")))
    return scalar_union_value(number, dtype) if dtype.kind in "iu" else number


def compare_with_bound(g: Graph, comparison: str, x: str, number: Any) -> str:
    """x <= number or x >= number, the bound as `bound` holds it in x's type. A bound past an
    integer type's range is compared strictly with the end it saturates to: x <= (a bound
    below the range) never holds, so x < lowest; x >= (one above it) never holds, so
    x > highest (UINT64's x <= -2, saturated to x <= 0, held at 0)."""
    dtype = g.dtype(x)
    value = number if isinstance(number, int) else float(number)  # exact: a UINT64 member
    if dtype.kind in "iu" and not (isinstance(value, float) and math.isnan(value)):
        info = np.iinfo(dtype)
        if comparison == "LessOrEqual" and value < info.min:
            comparison = "Less"
        elif comparison == "GreaterOrEqual" and value > info.max:
            comparison = "Greater"
    return g.compare(comparison, x, bound(g, number, x))


def outward(number: Any, rounding: Callable[[float], int]) -> Any:
    value = float(number)
    return rounding(value) if math.isfinite(value) else value
