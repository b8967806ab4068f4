"""What the seed operators' cases share (SCATTER_ND, SCATTER_ELEMENTS in scatter.py; GATHER_ND
in data_movement.py; FILL_VALUE_SEQUENCE in generator.py): their tensor descs, the user's
paths (`ops.run` and the `ops` function on NumPy arrays) and their random data.

Byte accounting of the seed cases (what a perfect implementation must read plus write, per
call; each family module states its own for its other cases):
- new output: the whole input read and the whole output written, plus indices and updates read;
- in place (a donated or given buffer): indices and updates read, the updated elements written;
- gather: the picked slices read, indices read, the output written; fill: the output written.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ...reference.tensors import numpy_dtype
from ..timing import Variant
from ..variants import NEW, ready

__all__ = ["tensor_desc", "unique_rows", "user_paths", "values"]


_DATA_TYPES = {"float16": "FLOAT16", "float32": "FLOAT32", "int64": "INT64"}


def tensor_desc(array: np.ndarray) -> dict[str, Any]:
    return {"DataType": _DATA_TYPES[array.dtype.name], "Sizes": list(array.shape)}


def user_paths(
    operator: dict[str, Any], inputs: dict[str, np.ndarray], call: Callable[[], Any], moved: int
) -> list[Variant]:
    """The path a user takes first: NumPy arrays in, a fresh output out, through `ops.run`
    (operator JSON, the backend contract) and through the operator's `ops` function."""
    output = next(f for f in operator["desc"] if f.startswith("Output"))
    returned = operator["desc"][output]
    return [
        Variant(
            "ops.run, numpy in",
            "dmlspec",
            NEW,
            lambda: ops.run(operator, inputs)[output],
            moved,
            numpy_inputs=tuple(inputs.values()),
            host_output_bytes=math.prod(returned["Sizes"])
            * numpy_dtype(returned["DataType"]).itemsize,
        ),
        Variant(
            "numpy in",
            "dmlspec",
            NEW,
            lambda: ready(call()),
            moved,
            numpy_inputs=tuple(inputs.values()),
        ),
    ]


def unique_rows(rng: np.random.Generator, rows: int, count: int) -> np.ndarray:
    return rng.permutation(rows)[:count].astype(np.int64).reshape(count, 1)


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(-(2**40), 2**40, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
