"""The data movement family's benchmark cases: SLICE, PADDING, JOIN and GATHER, large (about
64 MiB of FLOAT32 moved) and small (about 1 KiB); and GATHER_ND, a seed operator's (byte
accounting in seed_common.py).

Byte accounting (what a perfect implementation must read plus write, per call):
- SLICE: the window read, the output (as large) written;
- PADDING: the input read, the whole output (input and border) written;
- JOIN: every input read, the output written;
- GATHER: the picked rows read, the indices read, the output written.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ... import ops
from ..families import (
    Scale,
    dmlspec_variants,
    normal,
    numpy_variants,
    onnxruntime_variants,
    sized,
    torch_variants,
)
from ..peers import onnxruntime_peers, optional, torch_peer
from ..timing import Variant
from ..variants import IN_PLACE, NEW, BenchCase, Buffer, device, first, ready
from .seed_common import tensor_desc, unique_rows, user_paths, values

__all__ = ["gather_case", "gather_nd_case", "join_case", "padding_case", "slice_case"]

FAMILY = "data_movement"


def slice_case(name: str, size: str, n: Scale) -> BenchCase:
    """The middle of the input: an eighth cut off at each end of both dimensions."""
    x = normal(30, sized(size, n, (4096, 4096), (16, 16)))
    starts = [s // 8 for s in x.shape]
    sizes = [s - 2 * o for s, o in zip(x.shape, starts, strict=True)]
    window = tuple(slice(o, o + s) for o, s in zip(starts, sizes, strict=True))
    expected = x[window].copy()
    moved = 2 * expected.nbytes
    fields = {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": sizes},
        "Offsets": starts,
        "Sizes": sizes,
        "Strides": [1, 1],
    }

    def torch_calls(torch: Any) -> Any:
        t, out = torch.from_numpy(x), torch.from_numpy(np.zeros_like(expected))
        return (lambda: t[window].clone()), (lambda: out.copy_(t[window]))

    ends = [o + s for o, s in zip(starts, sizes, strict=True)]
    variants = [
        *dmlspec_variants(
            ops.slice, [x], fields, expected, moved, ("jax.jit(x[window])", lambda v: v[window])
        ),
        # x[window] alone is a view: the peers copy it, as the operator does.
        *numpy_variants(
            "x[window].copy()",
            lambda: x[window].copy(),
            lambda o: np.copyto(o, x[window]),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("Slice", ["x", "starts", "ends", "axes"], {}),
            {"x": x},
            expected,
            moved,
            constants={
                "starts": np.array(starts, np.int64),
                "ends": np.array(ends, np.int64),
                "axes": np.array([0, 1], np.int64),
            },
        ),
        *torch_variants("t[window].clone()", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "SLICE",
        size,
        "float32",
        f"{tuple(sizes)} window at {tuple(starts)} of {tuple(x.shape)} float32",
        variants,
        expected,
        FAMILY,
    )


def _pad_into(x: np.ndarray, pad: int, out: np.ndarray) -> np.ndarray:
    """np.pad's constant-zero result written into `out`: border zeroed, input copied."""
    out[:pad] = 0
    out[-pad:] = 0
    out[pad:-pad, :pad] = 0
    out[pad:-pad, -pad:] = 0
    out[pad:-pad, pad:-pad] = x
    return out


def padding_case(name: str, size: str, n: Scale) -> BenchCase:
    x = normal(31, sized(size, n, (4096, 4096), (16, 16)))
    pad = 16 if size == "large" else 1
    expected = np.pad(x, pad)  # constant zeros
    moved = x.nbytes + expected.nbytes
    fields = {
        "PaddingMode": "CONSTANT",
        "PaddingValue": 0.0,
        "StartPadding": [pad, pad],
        "EndPadding": [pad, pad],
    }

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        return (lambda: torch.nn.functional.pad(t, (pad, pad, pad, pad))), None

    variants = [
        *dmlspec_variants(
            ops.padding,
            [x],
            fields,
            expected,
            moved,
            ("jax.jit(jnp.pad)", lambda v: jnp.pad(v, pad)),
        ),
        *numpy_variants(
            "np.pad",
            lambda: np.pad(x, pad),
            lambda o: _pad_into(x, pad, o),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("Pad", ["x", "pads"], {"mode": "constant"}),
            {"x": x},
            expected,
            moved,
            constants={"pads": np.array([pad] * 4, np.int64)},
        ),
        *torch_variants("nn.functional.pad", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "PADDING",
        size,
        "float32",
        f"{tuple(x.shape)} float32, {pad} zeros around -> {tuple(expected.shape)}",
        variants,
        expected,
        FAMILY,
    )


def join_case(name: str, size: str, n: Scale) -> BenchCase:
    """Four inputs side by side (along the inner axis: each output row interleaves them)."""
    rows, width = sized(size, n, (4096, 1024), (16, 4))
    parts = [normal(32 + i, (rows, width)) for i in range(4)]
    expected = np.concatenate(parts, axis=1)
    moved = 2 * expected.nbytes
    fields = {"OutputTensor": {"DataType": "FLOAT32", "Sizes": list(expected.shape)}, "Axis": 1}

    def torch_calls(torch: Any) -> Any:
        tensors = [torch.from_numpy(p) for p in parts]
        out = torch.from_numpy(np.zeros_like(expected))
        return (lambda: torch.cat(tensors, dim=1)), (lambda: torch.cat(tensors, dim=1, out=out))

    names = [f"x{i}" for i in range(len(parts))]
    variants = [
        *dmlspec_variants(
            ops.join,
            [parts],
            fields,
            expected,
            moved,
            ("jax.jit(jnp.concatenate)", lambda xs: jnp.concatenate(xs, axis=1)),
        ),
        *numpy_variants(
            "np.concatenate",
            lambda: np.concatenate(parts, axis=1),
            lambda o: np.concatenate(parts, axis=1, out=o),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("Concat", names, {"axis": 1}), dict(zip(names, parts, strict=True)), expected, moved
        ),
        *torch_variants("cat", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "JOIN",
        size,
        "float32",
        f"4 x ({rows}, {width}) float32 along axis 1 -> {tuple(expected.shape)}",
        variants,
        expected,
        FAMILY,
    )


def gather_case(name: str, size: str, n: Scale) -> BenchCase:
    """Rows picked at random (repeats allowed), as an embedding lookup."""
    rows, width = sized(size, n, (65536, 256), (16, 16))
    count = rows // 2
    x = normal(36, (rows, width))
    picked = np.random.default_rng(37).integers(0, rows, count).astype(np.int64)
    expected = np.take(x, picked, axis=0)
    moved = 2 * expected.nbytes + picked.nbytes
    indices = picked.reshape(1, count)  # DirectML: IndexDimensions 1, the leading size 1

    def torch_calls(torch: Any) -> Any:
        t, i = torch.from_numpy(x), torch.from_numpy(picked)
        out = torch.from_numpy(np.zeros_like(expected))
        return (
            lambda: torch.index_select(t, 0, i),
            lambda: torch.index_select(t, 0, i, out=out),
        )

    variants = [
        *dmlspec_variants(
            ops.gather,
            [x, indices],
            {"Axis": 0, "IndexDimensions": 1},
            expected,
            moved,
            ("jax.jit(jnp.take)", lambda v, i: jnp.take(v, i.reshape(-1), axis=0)),
        ),
        *numpy_variants(
            "np.take",
            lambda: np.take(x, picked, axis=0),
            # mode="clip": the default "raise" writes into a fresh buffer, then copies to out.
            lambda o: np.take(x, picked, axis=0, out=o, mode="clip"),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("Gather", ["x", "indices"], {"axis": 0}), {"x": x, "indices": picked}, expected, moved
        ),
        *torch_variants("index_select", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "GATHER",
        size,
        "float32",
        f"{count} of {rows} rows (repeats allowed) of ({rows}, {width}) float32",
        variants,
        expected,
        FAMILY,
    )


def gather_nd_case(name: str, size: str, rows: int, width: int, count: int, dtype: str) -> Any:
    rng = np.random.default_rng(2)
    data = values(rng, (rows, width), dtype)
    indices = unique_rows(rng, rows, count)
    output_bytes = count * width * data.itemsize
    moved = 2 * output_bytes + indices.nbytes
    x, i = device(data), device(indices)
    given = Buffer(device(np.zeros((count, width), dtype)))
    rows_index = indices[:, 0]
    out = np.empty((count, width), dtype)
    operator = {
        "type": "DML_OPERATOR_GATHER_ND",
        "desc": {
            "InputTensor": tensor_desc(data),
            "IndicesTensor": tensor_desc(indices),
            "OutputTensor": tensor_desc(out),
            "InputDimensionCount": 2,
            "IndicesDimensionCount": 2,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices}
    variants = [
        *user_paths(operator, inputs, lambda: ops.gather_nd(data, indices), moved),
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
