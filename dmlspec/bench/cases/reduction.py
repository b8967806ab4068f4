"""The reduction family's benchmark cases: REDUCE SUM and ARGMAX along the inner axis (each
row reduced, contiguous) and along the outer axis (each column reduced, strided), large (a
(4096, 4096) FLOAT32 input, 64 MiB) and small ((16, 16), 1 KiB).

Byte accounting (what a perfect implementation must read plus write, per call): the input
read once and the output (one value per row or column) written once.
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
    operator_json,
    sized,
    spec_tolerance,
    torch_variants,
)
from ..variants import BenchCase

__all__ = ["AXES", "argmax_case", "reduce_sum_case"]

FAMILY = "reduction"
AXES = {"inner": 1, "outer": 0}  # of a (rows, columns) input


def reduce_sum_case(name: str, size: str, n: Scale, along: str) -> BenchCase:
    axis = AXES[along]
    x = normal(20 + axis, sized(size, n, (4096, 4096), (16, 16)))
    # The exact sum rounded once; peers sum in other orders, judged by the spec's
    # accumulated-rounding bound (N * eps * sum |x|).
    expected = np.sum(x.astype(np.float64), axis=axis, keepdims=True).astype(np.float32)
    moved = x.nbytes + expected.nbytes
    fields = {"OutputTensor": {"DataType": "FLOAT32"}, "Function": "SUM", "Axes": [axis]}

    def torch_calls(torch: Any) -> Any:
        t, out = torch.from_numpy(x), torch.from_numpy(np.zeros_like(expected))
        return (
            lambda: torch.sum(t, dim=axis, keepdim=True),
            lambda: torch.sum(t, dim=axis, keepdim=True, out=out),
        )

    variants = [
        *dmlspec_variants(
            ops.reduce,
            [x],
            fields,
            expected,
            moved,
            ("jax.jit(jnp.sum)", lambda v: jnp.sum(v, axis=axis, keepdims=True)),
        ),
        *numpy_variants(
            "np.sum",
            lambda: np.sum(x, axis=axis, keepdims=True),
            lambda o: np.sum(x, axis=axis, keepdims=True, out=o),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("ReduceSum", ["x", "axes"], {"keepdims": 1}),
            {"x": x},
            expected,
            moved,
            constants={"axes": np.array([axis], np.int64)},
        ),
        *torch_variants("sum", torch_calls, moved),
    ]
    operator = operator_json(
        "REDUCE",
        {"InputTensor": x, "OutputTensor": expected},
        Function="DML_REDUCE_FUNCTION_SUM",
        AxisCount=1,
        Axes=[axis],
    )
    return BenchCase(
        name,
        "REDUCE",
        size,
        "float32",
        f"{tuple(x.shape)} float32, SUM along axis {axis} ({along})",
        variants,
        expected,
        FAMILY,
        spec_tolerance(operator, {"InputTensor": x}, expected),
    )


def argmax_case(name: str, size: str, n: Scale, along: str) -> BenchCase:
    axis = AXES[along]
    x = normal(22 + axis, sized(size, n, (4096, 4096), (16, 16)))
    expected = np.argmax(x, axis=axis, keepdims=True).astype(np.int64)  # the first maximum
    moved = x.nbytes + expected.nbytes
    fields = {
        "OutputTensor": {"DataType": "INT64"},
        "Axes": [axis],
        "AxisDirection": "INCREASING",  # the first maximum, as every peer picks
    }

    def torch_calls(torch: Any) -> Any:
        t, out = torch.from_numpy(x), torch.from_numpy(np.zeros_like(expected))
        return (
            lambda: torch.argmax(t, dim=axis, keepdim=True),
            lambda: torch.argmax(t, dim=axis, keepdim=True, out=out),
        )

    variants = [
        *dmlspec_variants(
            ops.argmax,
            [x],
            fields,
            expected,
            moved,
            ("jax.jit(jnp.argmax)", lambda v: jnp.argmax(v, axis=axis, keepdims=True)),
        ),
        *numpy_variants(
            "np.argmax",
            lambda: np.argmax(x, axis=axis, keepdims=True),
            lambda o: np.argmax(x, axis=axis, keepdims=True, out=o),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(
            ("ArgMax", ["x"], {"axis": axis, "keepdims": 1}), {"x": x}, expected, moved
        ),
        *torch_variants("argmax", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "ARGMAX",
        size,
        "float32",
        f"{tuple(x.shape)} float32 -> int64, along axis {axis} ({along})",
        variants,
        expected,
        FAMILY,
    )
