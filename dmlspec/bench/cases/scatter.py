"""The scatter family's benchmark cases: SCATTER_ND (FLOAT32, and FLOAT16 rows) and
SCATTER_ELEMENTS, new and in place (byte accounting in seed_common.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ..peers import onnxruntime_peers, optional, torch_peer
from ..timing import Variant
from ..variants import IN_PLACE, NEW, BenchCase, Buffer, device, first, ready
from .seed_common import tensor_desc, unique_rows, user_paths, values

__all__ = ["scatter_elements_case", "scatter_nd_case"]


def scatter_nd_case(name: str, size: str, rows: int, width: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(1)
    data = values(rng, (rows, width), dtype)
    indices = unique_rows(rng, rows, count)
    updates = values(rng, (count, width), dtype)
    item = data.itemsize
    new = 2 * data.nbytes + updates.nbytes + indices.nbytes
    in_place = 2 * updates.nbytes + indices.nbytes
    x, i, u = device(data), device(indices), device(updates)
    donated = Buffer(device(data))
    operator = {
        "type": "DML_OPERATOR_SCATTER_ND",
        "desc": {
            "InputTensor": tensor_desc(data),
            "IndicesTensor": tensor_desc(indices),
            "UpdatesTensor": tensor_desc(updates),
            "OutputTensor": tensor_desc(data),
            "InputDimensionCount": 2,
            "IndicesDimensionCount": 2,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices, "UpdatesTensor": updates}
    variants = [
        *user_paths(operator, inputs, lambda: ops.scatter_nd(data, indices, updates), new),
        Variant("jax", "dmlspec", NEW, lambda: ready(ops.scatter_nd(x, i, u)), new),
        Variant(
            "jax donated",
            "dmlspec",
            IN_PLACE,
            lambda: ready(donated.update(ops.scatter_nd(donated.value, i, u, donate=True))),
            in_place,
        ),
    ]
    rows_index = indices[:, 0]
    kept = data.copy()
    expected = data.copy()
    expected[rows_index] = updates

    def numpy_new() -> object:
        out = data.copy()
        out[rows_index] = updates
        return out

    variants += [
        Variant("numpy fancy indexing", "numpy", NEW, numpy_new, new),
        Variant(
            "numpy fancy indexing",
            "numpy",
            IN_PLACE,
            lambda: kept.__setitem__(rows_index, updates),
            in_place,
            lambda _: kept,
        ),
    ]
    variants += onnxruntime_peers(
        ("ScatterND", ["data", "indices", "updates"], {}),
        {"data": data, "indices": indices, "updates": updates},
        data.shape,
        dtype,
        new,
        first,
    )
    torch = optional("torch")
    if torch is not None:
        t_data, t_rows, t_updates = (torch.from_numpy(a) for a in (data, rows_index, updates))
        t_kept = t_data.clone()
        variants += [
            torch_peer("index_put", NEW, lambda: t_data.index_put((t_rows,), t_updates), new),
            torch_peer(
                "index_put_", IN_PLACE, lambda: t_kept.index_put_((t_rows,), t_updates), in_place
            ),
        ]
    return BenchCase(
        name,
        "SCATTER_ND",
        size,
        dtype,
        f"({rows}, {width}) {dtype}, {count} unique rows ({item * width} B each)",
        variants,
        expected,
    )


def scatter_elements_case(name: str, size: str, side: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(3)
    data = values(rng, (side, side), dtype)
    # Unique targets within each column: the result is defined (no overlapping writes).
    columns = np.tile(np.arange(side, dtype=np.int64)[:, None], (1, side))
    indices = rng.permuted(columns, axis=0)[:count]
    updates = values(rng, (count, side), dtype)
    new = 2 * data.nbytes + updates.nbytes + indices.nbytes
    in_place = 2 * updates.nbytes + indices.nbytes
    x, i, u = device(data), device(indices), device(updates)
    donated = Buffer(device(data))
    kept = data.copy()
    expected = data.copy()
    np.put_along_axis(expected, indices, updates, axis=0)

    def numpy_new() -> object:
        out = data.copy()
        np.put_along_axis(out, indices, updates, axis=0)
        return out

    operator = {
        "type": "DML_OPERATOR_SCATTER_ELEMENTS",
        "desc": {
            "InputTensor": tensor_desc(data),
            "IndicesTensor": tensor_desc(indices),
            "UpdatesTensor": tensor_desc(updates),
            "OutputTensor": tensor_desc(data),
            "Axis": 0,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices, "UpdatesTensor": updates}
    variants = [
        *user_paths(
            operator, inputs, lambda: ops.scatter_elements(data, indices, updates, Axis=0), new
        ),
        Variant("jax", "dmlspec", NEW, lambda: ready(ops.scatter_elements(x, i, u, Axis=0)), new),
        Variant(
            "jax donated",
            "dmlspec",
            IN_PLACE,
            lambda: ready(
                donated.update(ops.scatter_elements(donated.value, i, u, Axis=0, donate=True))
            ),
            in_place,
        ),
        Variant("numpy put_along_axis", "numpy", NEW, numpy_new, new),
        Variant(
            "numpy put_along_axis",
            "numpy",
            IN_PLACE,
            lambda: np.put_along_axis(kept, indices, updates, axis=0),
            in_place,
            lambda _: kept,
        ),
    ]
    variants += onnxruntime_peers(
        ("ScatterElements", ["data", "indices", "updates"], {"axis": 0}),
        {"data": data, "indices": indices, "updates": updates},
        data.shape,
        dtype,
        new,
        first,
    )
    torch = optional("torch")
    if torch is not None:
        t_data, t_index, t_updates = (torch.from_numpy(a) for a in (data, indices, updates))
        t_kept = t_data.clone()
        variants += [
            torch_peer("scatter", NEW, lambda: t_data.scatter(0, t_index, t_updates), new),
            torch_peer(
                "scatter_", IN_PLACE, lambda: t_kept.scatter_(0, t_index, t_updates), in_place
            ),
        ]
    return BenchCase(
        name,
        "SCATTER_ELEMENTS",
        size,
        dtype,
        f"({side}, {side}) {dtype} along axis 0, ({count}, {side}) updates, unique per column",
        variants,
        expected,
    )
