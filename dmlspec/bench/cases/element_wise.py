"""The element-wise family's benchmark cases: a unary (exp), a binary (add), add with a
zero-stride broadcast, a comparison (greater than), CAST and softmax, each large (a
(4096, 4096) FLOAT32 input, 64 MiB; softmax (65536, 256)) and small ((16, 16), 1 KiB).

Byte accounting (what a perfect implementation must read plus write, per call): every input
read once and the output written once. A broadcast input counts its buffer (one row), not the
elements it repeats; softmax keeps each row in cache, so it too reads its input once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from dmlspec_generated.kernels.element_wise_add import KERNEL as ADD_KERNEL

from ... import ops
from ...kernels.runtime import call_kernel
from ..families import (
    KERNEL_JIT,
    PLAIN_XLA,
    Scale,
    dmlspec_variants,
    jitted,
    normal,
    numpy_variants,
    onnxruntime_variants,
    operator_json,
    sized,
    spec_tolerance,
    tensor_desc,
    torch_variants,
)
from ..timing import Variant
from ..variants import IN_PLACE, NEW, BenchCase, Buffer, as_uint8, device, first, ready

__all__ = [
    "add_broadcast_case",
    "add_case",
    "cast_case",
    "exp_case",
    "greater_than_case",
    "softmax_case",
]

FAMILY = "element_wise"


def _shape_text(*arrays: np.ndarray) -> str:
    return ", ".join(f"{tuple(a.shape)} {a.dtype}" for a in arrays)


def exp_case(name: str, size: str, n: Scale) -> BenchCase:
    x = normal(10, sized(size, n, (4096, 4096), (16, 16)))
    # exp in float64, rounded once: the correctly rounded float32 result (but for ties).
    expected = np.exp(x.astype(np.float64)).astype(np.float32)
    moved = x.nbytes + expected.nbytes

    def torch_calls(torch: Any) -> Any:
        t, out = torch.from_numpy(x), torch.from_numpy(np.zeros_like(expected))
        return (lambda: torch.exp(t)), (lambda: torch.exp(t, out=out))

    variants = [
        *dmlspec_variants(
            ops.element_wise_exp, [x], {}, expected, moved, ("jax.jit(jnp.exp)", jnp.exp)
        ),
        *numpy_variants(
            "np.exp", lambda: np.exp(x), lambda o: np.exp(x, out=o), np.empty_like(x), moved
        ),
        *onnxruntime_variants(("Exp", ["x"], {}), {"x": x}, expected, moved),
        *torch_variants("exp", torch_calls, moved),
    ]
    operator = operator_json("ELEMENT_WISE_EXP", {"InputTensor": x, "OutputTensor": expected})
    return BenchCase(
        name,
        "ELEMENT_WISE_EXP",
        size,
        "float32",
        _shape_text(x),
        variants,
        expected,
        FAMILY,
        # exp is not correctly rounded anywhere: every peer is judged by the spec's ULP bound.
        spec_tolerance(operator, {"InputTensor": x}, expected),
    )


def add_case(name: str, size: str, n: Scale) -> BenchCase:
    shape = sized(size, n, (4096, 4096), (16, 16))
    a, b = normal(11, shape), normal(12, shape)
    # IEEE addition is correctly rounded, so every peer agrees bitwise (stricter than the
    # spec's 1 ULP, which allows an implementation's extra rounding).
    expected = a + b
    moved = a.nbytes + b.nbytes + expected.nbytes

    def torch_calls(torch: Any) -> Any:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out = torch.from_numpy(np.zeros_like(expected))
        return (lambda: torch.add(ta, tb)), (lambda: torch.add(ta, tb, out=out))

    variants = [
        *dmlspec_variants(
            ops.element_wise_add, [a, b], {}, expected, moved, ("jax.jit(jnp.add)", jnp.add)
        ),
        *numpy_variants(
            "np.add", lambda: np.add(a, b), lambda o: np.add(a, b, out=o), np.empty_like(a), moved
        ),
        *onnxruntime_variants(("Add", ["a", "b"], {}), {"a": a, "b": b}, expected, moved),
        *torch_variants("add", torch_calls, moved),
    ]
    return BenchCase(
        name, "ELEMENT_WISE_ADD", size, "float32", _shape_text(a, b), variants, expected, FAMILY
    )


def add_broadcast_case(name: str, size: str, n: Scale) -> BenchCase:
    """A + B where B is one row repeated down the rows: DirectML's zero-stride broadcast
    (B's desc: Sizes as A's, Strides [0, 1]; B passed as its buffer, one row)."""
    rows, width = sized(size, n, (4096, 4096), (16, 16))
    a, row = normal(13, (rows, width)), normal(14, (width,))
    expected = a + row
    moved = a.nbytes + row.nbytes + expected.nbytes
    broadcast = {**tensor_desc(a), "Strides": [0, 1]}
    operator = operator_json("ELEMENT_WISE_ADD", {"ATensor": a, "OutputTensor": expected})
    operator["desc"]["BTensor"] = broadcast
    placed = [device(a), device(row)]
    given = Buffer(device(np.zeros_like(expected)))

    def strided(a: Any, row: Any, out: Any = None) -> Any:
        # What ops.run does with this operator JSON, on device arrays: the kernel runtime's
        # call with BTensor's strided desc (the ops functions take packed arrays only).
        arrays = {"ATensor": a, "BTensor": row}
        return call_kernel(ADD_KERNEL, arrays, {}, {}, None, False, out, {"BTensor": broadcast})

    def numpy_in() -> Any:
        return ops.run(operator, {"ATensor": a, "BTensor": row})["OutputTensor"]

    def torch_calls(torch: Any) -> Any:
        ta, tb = torch.from_numpy(a), torch.from_numpy(row)
        out = torch.from_numpy(np.zeros_like(expected))
        return (lambda: torch.add(ta, tb)), (lambda: torch.add(ta, tb, out=out))

    materialized = np.broadcast_to(row, a.shape)  # a zero-stride NumPy view
    variants = [
        Variant(
            "numpy in",
            "dmlspec",
            NEW,
            numpy_in,
            moved,
            numpy_inputs=(a, row),
            host_output_bytes=expected.nbytes,
        ),
        Variant("jax", "dmlspec", NEW, lambda: ready(strided(*placed)), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: ready(given.update(strided(placed[0], placed[1], given.value))),
            moved,
        ),
        *jitted(KERNEL_JIT, "jax.jit(call_kernel strided)", strided, placed, expected, moved),
        *jitted(PLAIN_XLA, "jax.jit(a + row)", jnp.add, placed, expected, moved),
        Variant(
            "numpy in, np.broadcast_to view",
            "dmlspec",
            NEW,
            lambda: ready(ops.element_wise_add(a, materialized)),
            moved,
        ),
        *numpy_variants(
            "np.add",
            lambda: np.add(a, row),
            lambda o: np.add(a, row, out=o),
            np.empty_like(a),
            moved,
        ),
        *onnxruntime_variants(("Add", ["a", "b"], {}), {"a": a, "b": row}, expected, moved),
        *torch_variants("add", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "ELEMENT_WISE_ADD",
        size,
        "float32",
        f"{_shape_text(a)} + a ({width},) row, B Strides [0, 1]",
        variants,
        expected,
        FAMILY,
        notes=[
            "numpy in: ops.run with B's desc Strides [0, 1] and B its one-row buffer; "
            "jax, jax out=: the kernel runtime's call with that strided desc (ops.<op> "
            "functions take packed arrays only); 'numpy in, np.broadcast_to view': "
            "ops.element_wise_add given NumPy's zero-stride view, which it packs (no target)"
        ],
    )


def greater_than_case(name: str, size: str, n: Scale) -> BenchCase:
    shape = sized(size, n, (4096, 4096), (16, 16))
    a, b = normal(15, shape), normal(16, shape)
    expected = (a > b).astype(np.uint8)  # DirectML's 0-or-1 UINT8 output
    moved = a.nbytes + b.nbytes + expected.nbytes

    def torch_calls(torch: Any) -> Any:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out = torch.zeros(shape, dtype=torch.bool)
        return (lambda: torch.gt(ta, tb)), (lambda: torch.gt(ta, tb, out=out))

    variants = [
        *dmlspec_variants(
            ops.element_wise_logical_greater_than,
            [a, b],
            {"OutputTensor": {"DataType": "UINT8"}},
            expected,
            moved,
            ("jax.jit((a > b).astype(uint8))", lambda x, y: (x > y).astype(jnp.uint8)),
        ),
        *numpy_variants(
            "np.greater",
            lambda: np.greater(a, b),
            lambda o: np.greater(a, b, out=o),
            np.empty(shape, bool),
            moved,
            as_uint8,
        ),
        *onnxruntime_variants(
            ("Greater", ["a", "b"], {}),
            {"a": a, "b": b},
            expected,
            moved,
            output_dtype="bool",
            fetch=lambda outputs: as_uint8(first(outputs)),
        ),
        *torch_variants("gt", torch_calls, moved, lambda t: as_uint8(t.numpy())),
    ]
    return BenchCase(
        name,
        "ELEMENT_WISE_LOGICAL_GREATER_THAN",
        size,
        "float32",
        f"{_shape_text(a, b)} -> uint8 (peers: bool)",
        variants,
        expected,
        FAMILY,
    )


def cast_case(name: str, size: str, n: Scale) -> BenchCase:
    x = normal(17, sized(size, n, (4096, 4096), (16, 16)))
    expected = x.astype(np.float16)  # round to nearest even, as every peer does
    moved = x.nbytes + expected.nbytes

    def torch_calls(torch: Any) -> Any:
        t, out = torch.from_numpy(x), torch.from_numpy(np.zeros_like(expected))
        return (lambda: t.to(torch.float16)), (lambda: out.copy_(t))

    variants = [
        *dmlspec_variants(
            ops.cast,
            [x],
            {"OutputTensor": {"DataType": "FLOAT16"}},
            expected,
            moved,
            ("jax.jit(x.astype(float16))", lambda v: v.astype(jnp.float16)),
        ),
        *numpy_variants(
            "astype",
            lambda: x.astype(np.float16),
            lambda o: np.copyto(o, x, casting="same_kind"),
            np.empty_like(expected),
            moved,
        ),
        *onnxruntime_variants(("Cast", ["x"], {"to": 10}), {"x": x}, expected, moved),  # FLOAT16
        *torch_variants("to(float16)", torch_calls, moved),
    ]
    return BenchCase(
        name, "CAST", size, "float32", f"{_shape_text(x)} -> float16", variants, expected, FAMILY
    )


def _numpy_softmax(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis as a NumPy user writes it (in `out` when given)."""
    shifted: np.ndarray = np.subtract(x, x.max(axis=-1, keepdims=True), out=out)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


def softmax_case(name: str, size: str, n: Scale) -> BenchCase:
    """ACTIVATION_SOFTMAX (rows of the last dimension). Rows of 256: within the reduced
    lengths the spec's softmax bound is stated for (a few hundred)."""
    x = normal(18, sized(size, n, (65536, 256), (16, 16)))
    wide = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    expected = (wide / wide.sum(axis=-1, keepdims=True)).astype(np.float32)
    moved = x.nbytes + expected.nbytes
    softmax: Callable[[Any], Any] = lambda v: jax.nn.softmax(v, axis=-1)  # noqa: E731

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        return (lambda: torch.softmax(t, dim=-1)), None

    variants = [
        *dmlspec_variants(
            ops.activation_softmax,
            [x],
            {},
            expected,
            moved,
            ("jax.jit(jax.nn.softmax)", softmax),
        ),
        *numpy_variants(
            "numpy max, exp, sum, divide",
            lambda: _numpy_softmax(x),
            lambda o: _numpy_softmax(x, o),
            np.empty_like(x),
            moved,
        ),
        *onnxruntime_variants(("Softmax", ["x"], {"axis": -1}), {"x": x}, expected, moved),
        *torch_variants("softmax", torch_calls, moved),
    ]
    operator = operator_json("ACTIVATION_SOFTMAX", {"InputTensor": x, "OutputTensor": expected})
    return BenchCase(
        name,
        "ACTIVATION_SOFTMAX",
        size,
        "float32",
        f"{_shape_text(x)}, rows of the last dimension",
        variants,
        expected,
        FAMILY,
        spec_tolerance(operator, {"InputTensor": x}, expected),
    )
