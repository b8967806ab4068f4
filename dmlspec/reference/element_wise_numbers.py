"""The element-wise reference's numbers: an operator's non-tensor fields read as the C struct
holds them (`Params`), results converted to the output type (floats rounded once, integers
wrapped, floats into integers toward zero and saturating), intermediates held as a device holds
them, and the exact integer operations (truncating division, the moduli, powers modulo 2^bits)
on Python integers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .fields import scalar_union

__all__ = [
    "FLOOR_MOD",
    "TRUNC_DIV",
    "TRUNC_MOD",
    "Formula",
    "Params",
    "erf",
    "held",
    "int_pow",
    "is_integer",
    "to_type",
]

Formula = Callable[..., Any]


class Params:
    """An operator's non-tensor fields, read as the C struct holds them."""

    def __init__(self, operator: str, fields: Mapping[str, Any], output: np.dtype[Any]) -> None:
        self.operator = operator
        self.fields = fields
        self.output = output

    def raw(self, field: str) -> Any:
        if self.fields.get(field) is None:
            raise ValueError(f"{self.operator} needs its {field} field; the desc has none.")
        return self.fields[field]

    def float32(self, field: str) -> float:
        """A FLOAT field: a float32 in the struct."""
        return float(np.float32(self.raw(field)))

    def enum(self, field: str, members: tuple[str, ...], prefix: str) -> str:
        value = self.raw(field)
        if isinstance(value, int) and 0 <= value < len(members):
            return members[value]  # the header's values count up from 0 in this order
        name = str(value).removeprefix(prefix)
        if name not in members:
            raise ValueError(f"{field} in {self.operator} must be one of {members}; got {value!r}.")
        return name

    def axes(self) -> tuple[int, ...]:
        """Axes, as a list or as a page prints it ("{0, 2}")."""
        value = self.raw("Axes")
        if isinstance(value, str):
            return tuple(sorted(int(v) for v in re.findall(r"-?\d+", value)))
        if isinstance(value, int):
            return (value,)
        return tuple(sorted(int(v) for v in value))

    def scalar(self, field: str) -> float | int:
        """A DML_SCALAR_UNION read as MinMaxDataType says (CLIP1, CLIP_GRAD1): an integer
        member holds the value's low bits, a float member rounds (`fields.scalar_union`)."""
        data_type = str(self.raw("MinMaxDataType"))
        value: float | int = scalar_union(self.raw(field), data_type).item()
        return value


# ---- number conversions ------------------------------------------------------------------


def _integer_value(value: Any, info: np.iinfo[Any]) -> int:
    """One result in an integer output: integers wrap, floats go toward zero and saturate."""
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return int(info.max) if value > 0 else int(info.min)
        return min(max(math.trunc(float(value)), int(info.min)), int(info.max))
    wrapped = int(value) & ((1 << info.bits) - 1)
    return wrapped - (1 << info.bits) if wrapped > info.max else wrapped


def _saturate(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Floats into an integer type: toward zero, saturating, NaN -> 0."""
    info = np.iinfo(dtype)
    whole = np.where(np.isnan(values), 0.0, np.trunc(values))
    low = whole < float(info.min)  # both bounds are exact in float64 (powers of two)
    high = whole >= float(info.max) + 1
    inside = np.where(low | high, 0.0, whole).astype(dtype)
    return np.where(low, info.min, np.where(high, info.max, inside)).astype(dtype)


def to_type(values: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """Round once (floats), wrap (integers) or saturate (floats into integers)."""
    array = np.asarray(values)
    if dtype.kind == "f":
        return array.astype(np.float64).astype(dtype)
    if array.dtype.kind == "f":
        return _saturate(array.astype(np.float64), dtype)
    if array.dtype.kind in "biu":
        return array.astype(dtype)  # NumPy's integer casts wrap (two's complement)
    # Python ints (exact results, wrapped) mixed with floats (FLOAT parameters, saturated).
    info = np.iinfo(dtype)
    flat = [_integer_value(v, info) for v in array.reshape(-1).tolist()]
    return np.array(flat, dtype=dtype).reshape(array.shape)


def held(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """An intermediate (ScaleBias's g(x), the result a fused activation reads) as a device
    holds it: in FLOAT32 for 16- and 32-bit floats (FLOAT64 stays). The functions after it are
    ill-conditioned enough (exp of a large argument) that computing g(x) in float64 would
    expect a value no FLOAT32 device can produce."""
    if dtype.kind == "f" and dtype.itemsize <= 4:
        with np.errstate(over="ignore"):
            return values.astype(np.float32).astype(np.float64)
    return values


def is_integer(array: np.ndarray) -> bool:
    return array.dtype.kind in "iub"


# ---- integer helpers (exact, on Python ints) -----------------------------------------------


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        return 0  # undefined (UNDEFINED_NOTES)
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _floor_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a % b


def _trunc_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a - b * _trunc_div(a, b)


def int_pow(bits: int) -> Formula:
    def power(x: int, e: int) -> int:
        if e >= 0:
            return pow(x, e, 1 << bits)  # exact modulo 2^bits: wraps as the output will
        if x in (1, -1):
            return x if e % 2 else 1
        return 0  # 1 / x^|e| toward zero; 0 ** negative is undefined (UNDEFINED_NOTES)

    return np.frompyfunc(power, 2, 1)


TRUNC_DIV = np.frompyfunc(_trunc_div, 2, 1)
FLOOR_MOD = np.frompyfunc(_floor_mod, 2, 1)
TRUNC_MOD = np.frompyfunc(_trunc_mod, 2, 1)
_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERF(x), dtype=np.float64)
