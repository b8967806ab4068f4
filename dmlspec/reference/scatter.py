"""The scatter family, written from the DirectML pages: SCATTER_ND and SCATTER_ELEMENTS (alias
SCATTER).

DML_OPERATOR_SCATTER_ND:  output = input;  output[indices[...]] = updates[...]

DML_OPERATOR_SCATTER_ELEMENTS:
output = input
output[index[i, j, k, ...], j, k, ...] = updates[i, j, k, ...]   // if axis == 0
output[i, index[i, j, k, ...], k, ...] = updates[i, j, k, ...]   // if axis == 1
...

Every write is logged (the output's flat cells and the values written), so that a cell written
more than once accepts any of its values: the pages leave overlapping writes undefined. An
index outside its dimension is undefined too; the reference writes nothing there.
"""

from __future__ import annotations

import numpy as np

from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog, position

__all__ = ["SCATTER"]


def _scatter_nd(
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


def _scatter_elements(
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


def scatter_nd(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    output = _scatter_nd(
        np.asarray(x["InputTensor"]),
        np.asarray(x["IndicesTensor"]),
        np.asarray(x["UpdatesTensor"]),
        f.desc["InputDimensionCount"],
        f.desc["IndicesDimensionCount"],
        log.setdefault("OutputTensor", []),
    )
    return {"OutputTensor": output}


def scatter_elements(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    output = _scatter_elements(
        np.asarray(x["InputTensor"]),
        np.asarray(x["IndicesTensor"]),
        np.asarray(x["UpdatesTensor"]),
        f.desc["Axis"],
        log.setdefault("OutputTensor", []),
    )
    return {"OutputTensor": output}


SCATTER: dict[str, Operator] = {"SCATTER_ELEMENTS": scatter_elements, "SCATTER_ND": scatter_nd}
