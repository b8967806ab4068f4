"""The benchmark's cases: per operator a large one (about 64 MiB touched) and a small one
(about 1 KiB), each with its variants: dmlspec's JAX kernel (plain, and writing into a donated
buffer) and the peers' counterparts.

Here the seed operators' cases (ScatterND, GatherND, ScatterElements, FillValueSequence, with
64-bit and FLOAT16 forms); `FAMILY_OPERATORS` adds the element-wise, reduction and data
movement families' (element_wise_cases.py, reduction_cases.py, data_movement_cases.py; their
dmlspec variants are described in families.py).

Byte accounting of the seed cases (what a perfect implementation must read plus write, per
call; each family module states its own):
- new output: the whole input read and the whole output written, plus indices and updates read;
- in place (a donated or given buffer): indices and updates read, the updated elements written;
- gather: the picked slices read, indices read, the output written; fill: the output written.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import ops
from ...reference.tensors import numpy_dtype
from ..families import Scale
from ..peers import onnxruntime_peers, optional, torch_peer
from ..timing import Variant
from ..variants import IN_PLACE, NEW, BenchCase, Buffer, device, first, ready
from .data_movement import gather_case, join_case, padding_case, slice_case
from .element_wise import (
    add_broadcast_case,
    add_case,
    cast_case,
    exp_case,
    greater_than_case,
    softmax_case,
)
from .reduction import argmax_case, reduce_sum_case

__all__ = [
    "FAMILY_OPERATORS",
    "SIZES",
    "BenchCase",
    "FamilyOperator",
    "build_cases",
    "case_families",
]


_DATA_TYPES = {"float16": "FLOAT16", "float32": "FLOAT32", "int64": "INT64"}


def _tensor_desc(array: np.ndarray) -> dict[str, Any]:
    return {"DataType": _DATA_TYPES[array.dtype.name], "Sizes": list(array.shape)}


def _user_paths(
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


def _unique_rows(rng: np.random.Generator, rows: int, count: int) -> np.ndarray:
    return rng.permutation(rows)[:count].astype(np.int64).reshape(count, 1)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(-(2**40), 2**40, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def scatter_nd_case(name: str, size: str, rows: int, width: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(1)
    data = _values(rng, (rows, width), dtype)
    indices = _unique_rows(rng, rows, count)
    updates = _values(rng, (count, width), dtype)
    item = data.itemsize
    new = 2 * data.nbytes + updates.nbytes + indices.nbytes
    in_place = 2 * updates.nbytes + indices.nbytes
    x, i, u = device(data), device(indices), device(updates)
    donated = Buffer(device(data))
    operator = {
        "type": "DML_OPERATOR_SCATTER_ND",
        "desc": {
            "InputTensor": _tensor_desc(data),
            "IndicesTensor": _tensor_desc(indices),
            "UpdatesTensor": _tensor_desc(updates),
            "OutputTensor": _tensor_desc(data),
            "InputDimensionCount": 2,
            "IndicesDimensionCount": 2,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices, "UpdatesTensor": updates}
    variants = [
        *_user_paths(operator, inputs, lambda: ops.scatter_nd(data, indices, updates), new),
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


def gather_nd_case(name: str, size: str, rows: int, width: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(2)
    data = _values(rng, (rows, width), dtype)
    indices = _unique_rows(rng, rows, count)
    output_bytes = count * width * data.itemsize
    moved = 2 * output_bytes + indices.nbytes
    x, i = device(data), device(indices)
    given = Buffer(device(np.zeros((count, width), dtype)))
    rows_index = indices[:, 0]
    out = np.empty((count, width), dtype)
    operator = {
        "type": "DML_OPERATOR_GATHER_ND",
        "desc": {
            "InputTensor": _tensor_desc(data),
            "IndicesTensor": _tensor_desc(indices),
            "OutputTensor": _tensor_desc(out),
            "InputDimensionCount": 2,
            "IndicesDimensionCount": 2,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices}
    variants = [
        *_user_paths(operator, inputs, lambda: ops.gather_nd(data, indices), moved),
        Variant("jax", "dmlspec", NEW, lambda: ready(ops.gather_nd(x, i)), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: ready(given.update(ops.gather_nd(x, i, out=given.value))),
            moved,
        ),
        Variant("numpy take", "numpy", NEW, lambda: np.take(data, rows_index, axis=0), moved),
        Variant(
            "numpy take out=",
            "numpy",
            IN_PLACE,
            # mode="clip": the default "raise" writes into a fresh buffer, then copies to out.
            lambda: np.take(data, rows_index, axis=0, out=out, mode="clip"),
            moved,
        ),
    ]
    expected = np.take(data, rows_index, axis=0)
    variants += onnxruntime_peers(
        ("GatherND", ["data", "indices"], {}),
        {"data": data, "indices": indices},
        (count, width),
        dtype,
        moved,
        first,
    )
    torch = optional("torch")
    if torch is not None:
        t_data, t_rows = torch.from_numpy(data), torch.from_numpy(rows_index)
        t_out = torch.from_numpy(out.copy())
        variants += [
            torch_peer("index_select", NEW, lambda: torch.index_select(t_data, 0, t_rows), moved),
            torch_peer(
                "index_select out=",
                IN_PLACE,
                lambda: torch.index_select(t_data, 0, t_rows, out=t_out),
                moved,
            ),
        ]
    return BenchCase(
        name,
        "GATHER_ND",
        size,
        dtype,
        f"{count} of {rows} rows of ({rows}, {width}) {dtype}",
        variants,
        expected,
    )


def scatter_elements_case(name: str, size: str, side: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(3)
    data = _values(rng, (side, side), dtype)
    # Unique targets within each column: the result is defined (no overlapping writes).
    columns = np.tile(np.arange(side, dtype=np.int64)[:, None], (1, side))
    indices = rng.permuted(columns, axis=0)[:count]
    updates = _values(rng, (count, side), dtype)
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
            "InputTensor": _tensor_desc(data),
            "IndicesTensor": _tensor_desc(indices),
            "UpdatesTensor": _tensor_desc(updates),
            "OutputTensor": _tensor_desc(data),
            "Axis": 0,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices, "UpdatesTensor": updates}
    variants = [
        *_user_paths(
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


def fill_case(name: str, size: str, count: int, dtype: str) -> Any:
    start, delta = 1.0, 0.5  # exact in every float type, so every peer makes the same values
    moved = count * np.dtype(dtype).itemsize
    output = {"DataType": {"float32": "FLOAT32", "float16": "FLOAT16"}[dtype], "Sizes": [count]}
    given = Buffer(device(np.zeros(count, dtype)))
    stop = start + delta * count

    def fill(**extra: Any) -> Any:
        return ops.fill_value_sequence(
            OutputTensor=output, ValueStart=start, ValueDelta=delta, **extra
        )

    operator = {
        "type": "DML_OPERATOR_FILL_VALUE_SEQUENCE",
        "desc": {
            "OutputTensor": output,
            "ValueDataType": output["DataType"],
            "ValueStart": start,
            "ValueDelta": delta,
        },
    }
    variants = [
        *_user_paths(operator, {}, fill, moved),
        Variant("jax", "dmlspec", NEW, lambda: ready(fill()), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: ready(given.update(fill(out=given.value))),
            moved,
        ),
        Variant(
            "numpy arange", "numpy", NEW, lambda: np.arange(start, stop, delta, dtype=dtype), moved
        ),
    ]
    limits = {n: np.array(v, dtype) for n, v in (("start", start), ("limit", stop))}
    variants += onnxruntime_peers(
        ("Range", ["start", "limit", "delta"], {}),
        {**limits, "delta": np.array(delta, dtype)},
        (count,),
        dtype,
        moved,
        first,
    )
    torch = optional("torch")
    if torch is not None:
        t_type = getattr(torch, dtype)
        t_out = torch.empty(count, dtype=t_type)
        variants += [
            torch_peer(
                "arange", NEW, lambda: torch.arange(start, stop, delta, dtype=t_type), moved
            ),
            torch_peer(
                "arange out=", IN_PLACE, lambda: torch.arange(start, stop, delta, out=t_out), moved
            ),
        ]
    # Exact in float64 and in the output type for these start and delta values.
    expected = (start + delta * np.arange(count, dtype=np.float64)).astype(dtype)
    return BenchCase(
        name, "FILL_VALUE_SEQUENCE", size, dtype, f"{count} {dtype}", variants, expected
    )


Builder = Callable[[], BenchCase]
SIZES = ("large", "small")


@dataclass(frozen=True)
class FamilyOperator:
    """One operator of the family benchmarks: its cases are `{name}_large`, `{name}_small`."""

    name: str
    family: str  # "element_wise", "reduction" or "data_movement"
    build: Callable[[str, str, Scale], BenchCase]  # (case name, size, scale) -> case


FAMILY_OPERATORS = (
    FamilyOperator("exp", "element_wise", exp_case),
    FamilyOperator("add", "element_wise", add_case),
    FamilyOperator("add_broadcast", "element_wise", add_broadcast_case),
    FamilyOperator("greater_than", "element_wise", greater_than_case),
    FamilyOperator("cast", "element_wise", cast_case),
    FamilyOperator("softmax", "element_wise", softmax_case),
    *(
        FamilyOperator(f"{operator}_{along}", "reduction", functools.partial(case, along=along))
        for operator, case in (("reduce_sum", reduce_sum_case), ("argmax", argmax_case))
        for along in ("inner", "outer")
    ),
    FamilyOperator("slice", "data_movement", slice_case),
    FamilyOperator("padding", "data_movement", padding_case),
    FamilyOperator("join", "data_movement", join_case),
    FamilyOperator("gather", "data_movement", gather_case),
)


def case_families() -> dict[str, str]:
    """Each case's family ("seed" for the seed operators'), in build_cases' order."""
    families = {name: "seed" for name in build_cases()}
    families.update({f"{o.name}_{size}": o.family for o in FAMILY_OPERATORS for size in SIZES})
    return families


def build_cases(scale: float = 1.0) -> dict[str, Builder]:
    """Every case by name, built lazily (a large case holds a few hundred MiB). `scale`
    shrinks the large cases (tests run them at a tiny scale)."""

    def n(value: int) -> int:
        return max(int(value * scale), 4)

    return {
        "scatter_nd_large": lambda: scatter_nd_case(
            "scatter_nd_large", "large", n(65536), 256, n(32768), "float32"
        ),
        "scatter_nd_large_float16": lambda: scatter_nd_case(
            "scatter_nd_large_float16", "large", n(65536), 512, n(32768), "float16"
        ),
        "gather_nd_large": lambda: gather_nd_case(
            "gather_nd_large", "large", n(65536), 256, n(32768), "float32"
        ),
        "gather_nd_large_int64": lambda: gather_nd_case(
            "gather_nd_large_int64", "large", n(32768), 256, n(16384), "int64"
        ),
        "scatter_elements_large": lambda: scatter_elements_case(
            "scatter_elements_large", "large", n(4096), n(2048), "float32"
        ),
        "fill_value_sequence_large": lambda: fill_case(
            "fill_value_sequence_large", "large", n(16 << 20), "float32"
        ),
        "scatter_nd_small": lambda: scatter_nd_case(
            "scatter_nd_small", "small", 16, 16, 4, "float32"
        ),
        "gather_nd_small": lambda: gather_nd_case("gather_nd_small", "small", 16, 16, 4, "float32"),
        "scatter_elements_small": lambda: scatter_elements_case(
            "scatter_elements_small", "small", 16, 4, "float32"
        ),
        "fill_value_sequence_small": lambda: fill_case(
            "fill_value_sequence_small", "small", 256, "float32"
        ),
        **{
            f"{o.name}_{size}": functools.partial(o.build, f"{o.name}_{size}", size, n)
            for o in FAMILY_OPERATORS
            for size in SIZES
        },
    }
