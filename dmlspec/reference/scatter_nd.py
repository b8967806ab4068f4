"""DML_OPERATOR_SCATTER_ND:  output = input;  output[indices[...]] = updates[...]"""

from __future__ import annotations

import numpy as np

from .tensors import WriteLog, position


def scatter_nd(
    input: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    input_dimension_count: int,
    indices_dimension_count: int,
    writes: WriteLog,
) -> np.ndarray:
    output = input.copy()
    # The meaningful dimensions are the trailing ones; views share output's memory.
    data = output.reshape(input.shape[input.ndim - input_dimension_count :])
    tuples: np.ndarray = indices.reshape(
        tuple(indices.shape[indices.ndim - indices_dimension_count :])
    )
    q = tuples.shape[-1]
    values = updates.reshape(tuples.shape[:-1] + data.shape[q:])
    for tuple_position in np.ndindex(*tuples.shape[:-1]):
        coordinates = [
            position(i, data.shape[axis]) for axis, i in enumerate(tuples[tuple_position])
        ]
        if None in coordinates:
            continue  # outside the input: the result is undefined; write nothing
        target = tuple(int(c) for c in coordinates if c is not None)
        data[target] = values[tuple_position]
        first = int(np.ravel_multi_index(target + (0,) * (data.ndim - q), data.shape))
        block = np.asarray(values[tuple_position]).reshape(-1)
        writes.append((first + np.arange(block.size, dtype=np.int64), block))
    return output
