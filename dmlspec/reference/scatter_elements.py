"""DML_OPERATOR_SCATTER_ELEMENTS (alias SCATTER):

output = input
output[index[i, j, k, ...], j, k, ...] = updates[i, j, k, ...]   // if axis == 0
output[i, index[i, j, k, ...], k, ...] = updates[i, j, k, ...]   // if axis == 1
...
"""

from __future__ import annotations

import numpy as np

from .tensors import Writes, position


def scatter_elements(
    input: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int, writes: Writes
) -> np.ndarray:
    output = input.copy()
    for element in np.ndindex(*indices.shape):
        index = position(indices[element], input.shape[axis])
        if index is None:
            continue  # outside the axis: undefined; write nothing
        target = list(element)
        target[axis] = index
        output[tuple(target)] = updates[element]
        cell = np.ravel_multi_index(tuple(target), input.shape)
        writes.setdefault((int(cell),), []).append(updates[element])
    return output
