"""DML_OPERATOR_FILL_VALUE_SEQUENCE:

    for each coordinate in OutputTensor
        OutputTensor[coordinate] = Value
        Value += Delta
    endfor

Computed exactly (element k is start + k * delta in rational arithmetic), then stored in the
output type: integers modulo 2^bits, floats rounded to nearest.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np


def held(value: int | float, dtype: np.dtype[Any]) -> int | Fraction:
    """The value a DML_SCALAR_UNION of this type holds when set to `value`."""
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        wrapped = int(value) % (1 << bits)
        if dtype.kind == "i" and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return wrapped
    return Fraction(float(np.array(value).astype(dtype)))


def store(value: int | Fraction, dtype: np.dtype[Any]) -> Any:
    if dtype.kind in "iu":
        return held(int(value), dtype)
    return np.array(float(value)).astype(dtype)


def fill_value_sequence(
    sizes: Sequence[int], dtype: np.dtype[Any], start: int | float, delta: int | float
) -> np.ndarray:
    output = np.empty(tuple(sizes), dtype=dtype)
    first, step = held(start, dtype), held(delta, dtype)
    for k, coordinate in enumerate(np.ndindex(*sizes)):
        output[coordinate] = store(first + k * step, dtype)
    return output
