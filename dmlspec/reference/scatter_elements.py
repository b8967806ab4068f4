"""DML_OPERATOR_SCATTER_ELEMENTS (alias SCATTER):

output = input
output[index[i, j, k, ...], j, k, ...] = updates[i, j, k, ...]   // if axis == 0
output[i, index[i, j, k, ...], k, ...] = updates[i, j, k, ...]   // if axis == 1
...
"""

from __future__ import annotations

import numpy as np

from .tensors import WriteLog, position


def scatter_elements(
    input: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int, writes: WriteLog
) -> np.ndarray:
    output = input.copy()
    cells, values = [], []
    for element in np.ndindex(*indices.shape):
        index = position(indices[element], input.shape[axis])
        if index is None:
            continue  # outside the axis: undefined; write nothing
        target = list(element)
        target[axis] = index
        output[tuple(target)] = updates[element]
        cells.append(int(np.ravel_multi_index(tuple(target), input.shape)))
        values.append(updates[element])
    writes.append((np.array(cells, dtype=np.int64), np.array(values, dtype=updates.dtype)))
    return output
