"""DML_OPERATOR_GATHER_ND:  output[...] = input[indices[...]]"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .tensors import position


def gather_nd(
    input: np.ndarray,
    indices: np.ndarray,
    input_dimension_count: int,
    indices_dimension_count: int,
    output_sizes: Sequence[int],
) -> np.ndarray:
    data = input.reshape(input.shape[input.ndim - input_dimension_count :])
    tuples: np.ndarray = indices.reshape(
        tuple(indices.shape[indices.ndim - indices_dimension_count :])
    )
    q = tuples.shape[-1]
    gathered = np.zeros(tuples.shape[:-1] + data.shape[q:], dtype=input.dtype)
    for tuple_position in np.ndindex(*tuples.shape[:-1]):
        coordinates = [
            position(i, data.shape[axis]) for axis, i in enumerate(tuples[tuple_position])
        ]
        if None in coordinates:
            continue  # outside the input: undefined; the reference reads zero
        gathered[tuple_position] = data[tuple(int(c) for c in coordinates if c is not None)]
    return gathered.reshape(tuple(output_sizes))
