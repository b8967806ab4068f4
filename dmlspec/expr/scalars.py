"""Scalar values of DirectML data types: DML_SCALAR_UNION members and type ranges.

`scalar_union_value` is the value a scalar-union member of a NumPy type holds when given a
number (integers wrap, floats round); kernels and backends use it too. The other functions
read a data type's NumPy type from the `Facts`: its kind and its lowest and highest values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .facts import Facts

__all__ = ["as_type", "data_type_kind", "highest", "lowest", "scalar_union_value"]


def scalar_union_value(value: int | float, dtype: Any) -> int | float:
    """The value a DML_SCALAR_UNION member of NumPy type `dtype` holds when given `value`: an
    integer member keeps the low bits (a fraction dropped first), a float one rounds."""
    info: np.dtype[Any] = np.dtype(dtype)
    if info.kind in "iu":
        if isinstance(value, float) and not value.is_integer():
            value = math.trunc(value)
        bits = info.itemsize * 8
        wrapped: int = int(value) % (1 << bits)
        if info.kind == "i" and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return wrapped
    with np.errstate(over="ignore"):  # past the type's range a float member holds +-inf
        return float(np.array(value, dtype=np.float64).astype(info))


def as_type(facts: Facts, value: int | float, data_type: str) -> int | float:
    """The value a DML_SCALAR_UNION of `data_type` holds when given `value`."""
    dtype = facts.numpy_dtype(data_type)
    if dtype is None:
        raise ValueError(f"no NumPy type for {data_type}")
    return scalar_union_value(value, dtype)


def data_type_kind(facts: Facts, data_type: str) -> str:
    """'f' (float), 'i' (signed) or 'u' (unsigned), from the common spec's NumPy type."""
    dtype = facts.numpy_dtype(data_type)
    if dtype is None:
        raise ValueError(f"no NumPy type for {data_type}")
    return np.dtype(dtype).kind


def lowest(facts: Facts, data_type: str) -> int | float:
    dtype = np.dtype(facts.numpy_dtype(data_type) or "")
    return int(np.iinfo(dtype).min) if dtype.kind in "iu" else float(np.finfo(dtype).min)


def highest(facts: Facts, data_type: str) -> int | float:
    dtype = np.dtype(facts.numpy_dtype(data_type) or "")
    return int(np.iinfo(dtype).max) if dtype.kind in "iu" else float(np.finfo(dtype).max)
