"""The benchmark's cases: per operator a large one (about 64 MiB touched) and a small one
(about 1 KiB), plus 64-bit and FLOAT16 cases, each with its variants: dmlspec's JAX kernel
(plain, and writing into a donated buffer) and the peers' counterparts.

Byte accounting (what a perfect implementation must read plus write, per call):
- new output: the whole input read and the whole output written, plus indices and updates read;
- in place (a donated or given buffer): indices and updates read, the updated elements written;
- gather: the picked slices read, indices read, the output written; fill: the output written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .. import ops
from .peers import onnxruntime_session, optional
from .timing import Variant

__all__ = ["BenchCase", "build_cases"]

NEW = "new output"
IN_PLACE = "in place"


@dataclass
class BenchCase:
    name: str
    operator: str
    size: str  # "large" or "small"
    dtype: str
    shape: str  # what is moved, in words
    variants: list[Variant]
    expected: np.ndarray  # the output every variant must produce (checked bitwise)


class _Buffer:
    """A buffer a variant keeps writing into: each call's result is the next call's buffer."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def update(self, value: Any) -> Any:
        self.value = value
        return value


def _device(array: np.ndarray) -> jax.Array:
    # Under x64: outside it JAX would silently narrow an int64 or float64 array to 32 bits.
    with jax.enable_x64(True):
        placed: jax.Array = jax.device_put(array)
    return placed


def _ready(value: Any) -> Any:
    value.block_until_ready()
    return value


def _first(outputs: Any) -> Any:
    return outputs[0]  # onnxruntime returns a list of outputs


def _tensor(tensor: Any) -> Any:
    return tensor.numpy()


def _tensor_desc(array: np.ndarray) -> dict[str, Any]:
    return {"DataType": _DATA_TYPES[array.dtype.name], "Sizes": list(array.shape)}


_DATA_TYPES = {"float16": "FLOAT16", "float32": "FLOAT32", "int64": "INT64"}


def _user_paths(
    operator: dict[str, Any], inputs: dict[str, np.ndarray], call: Callable[[], Any], moved: int
) -> list[Variant]:
    """The path a user takes first: NumPy arrays in, a fresh output out, through `ops.run`
    (operator JSON, the backend contract) and through the operator's `ops` function."""
    output = next(f for f in operator["desc"] if f.startswith("Output"))
    return [
        Variant(
            "ops.run, NumPy in",
            "dmlspec",
            NEW,
            lambda: ops.run(operator, inputs)[output],
            moved,
        ),
        Variant("NumPy in", "dmlspec", NEW, lambda: _ready(call()), moved),
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
    x, i, u = _device(data), _device(indices), _device(updates)
    donated = _Buffer(_device(data))
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
        Variant("jax", "dmlspec", NEW, lambda: _ready(ops.scatter_nd(x, i, u)), new),
        Variant(
            "jax donated",
            "dmlspec",
            IN_PLACE,
            lambda: _ready(donated.update(ops.scatter_nd(donated.value, i, u, donate=True))),
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
    session = onnxruntime_session(
        ("ScatterND", ["data", "indices", "updates"], {}),
        {"data": data, "indices": indices, "updates": updates},
        data.shape,
        dtype,
    )
    if session is not None:
        variants.append(Variant("onnxruntime ScatterND", "onnxruntime", NEW, session, new, _first))
    torch = optional("torch")
    if torch is not None:
        t_data, t_rows, t_updates = (torch.from_numpy(a) for a in (data, rows_index, updates))
        t_kept = t_data.clone()
        variants += [
            Variant(
                "torch index_put",
                "torch",
                NEW,
                lambda: t_data.index_put((t_rows,), t_updates),
                new,
                _tensor,
            ),
            Variant(
                "torch index_put_",
                "torch",
                IN_PLACE,
                lambda: t_kept.index_put_((t_rows,), t_updates),
                in_place,
                _tensor,
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
    x, i = _device(data), _device(indices)
    given = _Buffer(_device(np.zeros((count, width), dtype)))
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
        Variant("jax", "dmlspec", NEW, lambda: _ready(ops.gather_nd(x, i)), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: _ready(given.update(ops.gather_nd(x, i, out=given.value))),
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
    session = onnxruntime_session(
        ("GatherND", ["data", "indices"], {}),
        {"data": data, "indices": indices},
        (count, width),
        dtype,
    )
    if session is not None:
        variants.append(Variant("onnxruntime GatherND", "onnxruntime", NEW, session, moved, _first))
    torch = optional("torch")
    if torch is not None:
        t_data, t_rows = torch.from_numpy(data), torch.from_numpy(rows_index)
        t_out = torch.from_numpy(out.copy())
        variants += [
            Variant(
                "torch index_select",
                "torch",
                NEW,
                lambda: torch.index_select(t_data, 0, t_rows),
                moved,
                _tensor,
            ),
            Variant(
                "torch index_select out=",
                "torch",
                IN_PLACE,
                lambda: torch.index_select(t_data, 0, t_rows, out=t_out),
                moved,
                _tensor,
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
    x, i, u = _device(data), _device(indices), _device(updates)
    donated = _Buffer(_device(data))
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
        Variant("jax", "dmlspec", NEW, lambda: _ready(ops.scatter_elements(x, i, u, Axis=0)), new),
        Variant(
            "jax donated",
            "dmlspec",
            IN_PLACE,
            lambda: _ready(
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
    session = onnxruntime_session(
        ("ScatterElements", ["data", "indices", "updates"], {"axis": 0}),
        {"data": data, "indices": indices, "updates": updates},
        data.shape,
        dtype,
    )
    if session is not None:
        variants.append(
            Variant("onnxruntime ScatterElements", "onnxruntime", NEW, session, new, _first)
        )
    torch = optional("torch")
    if torch is not None:
        t_data, t_index, t_updates = (torch.from_numpy(a) for a in (data, indices, updates))
        t_kept = t_data.clone()
        variants += [
            Variant(
                "torch scatter",
                "torch",
                NEW,
                lambda: t_data.scatter(0, t_index, t_updates),
                new,
                _tensor,
            ),
            Variant(
                "torch scatter_",
                "torch",
                IN_PLACE,
                lambda: t_kept.scatter_(0, t_index, t_updates),
                in_place,
                _tensor,
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
    given = _Buffer(_device(np.zeros(count, dtype)))
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
        Variant("jax", "dmlspec", NEW, lambda: _ready(fill()), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: _ready(given.update(fill(out=given.value))),
            moved,
        ),
        Variant(
            "numpy arange", "numpy", NEW, lambda: np.arange(start, stop, delta, dtype=dtype), moved
        ),
    ]
    limits = {n: np.array(v, dtype) for n, v in (("start", start), ("limit", stop))}
    session = onnxruntime_session(
        ("Range", ["start", "limit", "delta"], {}),
        {**limits, "delta": np.array(delta, dtype)},
        (count,),
        dtype,
    )
    if session is not None:
        variants.append(Variant("onnxruntime Range", "onnxruntime", NEW, session, moved, _first))
    torch = optional("torch")
    if torch is not None:
        t_type = getattr(torch, dtype)
        t_out = torch.empty(count, dtype=t_type)
        variants += [
            Variant(
                "torch arange",
                "torch",
                NEW,
                lambda: torch.arange(start, stop, delta, dtype=t_type),
                moved,
                _tensor,
            ),
            Variant(
                "torch arange out=",
                "torch",
                IN_PLACE,
                lambda: torch.arange(start, stop, delta, out=t_out),
                moved,
                _tensor,
            ),
        ]
    # Exact in float64 and in the output type for these start and delta values.
    expected = (start + delta * np.arange(count, dtype=np.float64)).astype(dtype)
    return BenchCase(
        name, "FILL_VALUE_SEQUENCE", size, dtype, f"{count} {dtype}", variants, expected
    )


def trivial_call() -> Variant:
    """The floor for small calls: a trivial jitted JAX function on a 1 KiB array."""
    x = _device(np.zeros(256, np.float32))
    plus_one = jax.jit(lambda a: a + 1)
    return Variant(
        "trivial jitted call (x + 1)", "jax", NEW, lambda: _ready(plus_one(x)), 2048, None
    )


Builder = Callable[[], BenchCase]


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
    }
