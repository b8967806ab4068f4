"""Reading tensor descs and data types (the one table the reference shares)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["Writes", "numpy_dtype", "position", "tensor_desc"]

# Output cell (a coordinate tuple) -> every value written to it, in order.
Writes = dict[tuple[int, ...], list[Any]]


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
