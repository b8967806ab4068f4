"""DML_OPERATOR_SCATTER_ND:  output = input;  output[indices[...]] = updates[...]"""

from __future__ import annotations

import numpy as np

from .tensors import Writes, position


def scatter_nd(
    input: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    input_dimension_count: int,
    indices_dimension_count: int,
    writes: Writes,
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
        for inner in np.ndindex(*data.shape[q:]):
            cell = np.ravel_multi_index(target + inner, data.shape)
            writes.setdefault((int(cell),), []).append(values[tuple_position][inner])
    return output
