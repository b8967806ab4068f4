"""Strided tensors in the reference: NumPy views of DirectML buffers (dml-strides.md).

Written apart from the kernels' layout code: a buffer's logical view is
`numpy.lib.stride_tricks.as_strided` with Strides scaled to bytes, after checking that every
element it can reach lies inside the buffer, so a view never reads or writes past it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .tensors import numpy_dtype, tensor_desc

__all__ = [
    "buffer_elements",
    "changed_outside_view",
    "is_strided",
    "logical_view",
    "with_view_written",
]


def is_strided(raw: Mapping[str, Any]) -> bool:
    """Whether a tensor desc gives Strides (then the tensor travels as its buffer)."""
    return tensor_desc(raw).get("Strides") is not None


def buffer_elements(raw: Mapping[str, Any]) -> int:
    """The buffer's length in elements: TotalTensorSizeInBytes, else DMLCalcBufferTensorSize
    (dml-helper-functions.md: one past the last element, in bytes, rounded up to 4)."""
    desc = tensor_desc(raw)
    itemsize = numpy_dtype(desc["DataType"]).itemsize
    total = desc.get("TotalTensorSizeInBytes")
    if total is None:
        strides = desc.get("Strides")
        if strides is None:
            last = int(np.prod(desc["Sizes"])) - 1
        else:
            last = sum(
                (size - 1) * stride for size, stride in zip(desc["Sizes"], strides, strict=True)
            )
        total = -(-(last + 1) * itemsize // 4) * 4
    return int(total) // itemsize


def _view(buffer: np.ndarray, raw: Mapping[str, Any], writeable: bool) -> np.ndarray:
    desc = tensor_desc(raw)
    sizes, strides = list(desc["Sizes"]), list(desc["Strides"])
    if buffer.ndim != 1:
        raise ValueError(f"a strided tensor travels as a 1-D buffer; got shape {buffer.shape}")
    last = sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True))
    if last >= buffer.size:
        raise ValueError(
            f"Sizes {sizes} and Strides {strides} reach element {last}; the buffer holds "
            f"{buffer.size}"
        )
    step = buffer.itemsize
    return as_strided(buffer, shape=sizes, strides=[s * step for s in strides], writeable=writeable)


def logical_view(buffer: np.ndarray, raw: Mapping[str, Any]) -> np.ndarray:
    """The logical tensor a buffer holds, as a read-only view of it (not a copy)."""
    return _view(np.ascontiguousarray(buffer), raw, writeable=False)


def with_view_written(
    buffer: np.ndarray, raw: Mapping[str, Any], logical: np.ndarray
) -> np.ndarray:
    """A copy of the buffer with `logical` written into its strided view; every other
    element as it was."""
    result = np.array(buffer, copy=True)
    _view(result, raw, writeable=True)[...] = logical
    return result


def changed_outside_view(
    before: np.ndarray, after: np.ndarray, raw: Mapping[str, Any]
) -> np.ndarray:
    """Indices of the buffer elements outside the strided view whose bits differ between two
    buffers of one tensor (what must come back unchanged)."""
    before, after = np.ascontiguousarray(before), np.ascontiguousarray(after)
    outside = np.ones(before.size, dtype=bool)
    outside[logical_view(np.arange(before.size), raw).reshape(-1)] = False
    differs = (
        before.view(np.uint8).reshape(before.size, -1)
        != after.view(np.uint8).reshape(after.size, -1)
    ).any(axis=1)
    return np.flatnonzero(outside & differs)
