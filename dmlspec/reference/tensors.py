"""Reading tensor descs and data types (the one table the reference shares)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["WriteLog", "Writes", "collisions", "numpy_dtype", "position", "tensor_desc"]

# Output cell (a flat index, as a 1-tuple) -> every value written to it, in write order.
Writes = dict[tuple[int, ...], list[Any]]
# What a scatter wrote, in order: chunks of (flat output cells, values).
WriteLog = list[tuple[np.ndarray, np.ndarray]]


def collisions(log: WriteLog) -> Writes:
    """The cells written more than once, with the values written there in order."""
    if not log:
        return {}
    cells = np.concatenate([c for c, _ in log])
    values = np.concatenate([v.reshape(-1) for _, v in log])
    unique, counts = np.unique(cells, return_counts=True)
    repeated = set(unique[counts > 1].tolist())
    found: Writes = {}
    for cell, value in zip(cells.tolist(), values, strict=True):
        if cell in repeated:
            found.setdefault((cell,), []).append(value)
    return found


def tensor_desc(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tensor desc in DxDispatch's short form (the long form holds it under Desc)."""
    return raw.get("Desc", raw)  # type: ignore[no-any-return]


def numpy_dtype(data_type: str) -> np.dtype[Any]:
    from dmlspec_generated.validators.common import DATA_TYPES

    name: str | None = DATA_TYPES[data_type.removeprefix("DML_TENSOR_DATA_TYPE_")].numpy
    if name is None:
        raise ValueError(f"{data_type} has no NumPy type")
    return np.dtype(name)


def position(index: Any, size: int) -> int | None:
    """The position an index names in a dimension of `size`: negative values count from the
    end (only signed types hold them); None when outside the dimension."""
    value = int(index)
    if value < 0:
        value += size
    return value if 0 <= value < size else None
