"""The convolution family for the onnxruntime backend (convolution, matrix multiplication,
attention); so far GEMM, as ONNX's MatMul over the leading (batch, channel) dimensions, FOLD
as Col2Im (ScatterElements' add for the types Col2Im lacks) and UNFOLD as Pad and Gather.

GEMM: Transpose where TransA/TransB ask, MatMul in FLOAT32 (FLOAT16 inputs widened first, as
DirectML accumulates them), then Alpha * product + Beta * C, the FusedActivation's graph, and
one cast to the output type. ONNX's Gemm takes 2-D matrices only, so MatMul serves every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .graph import Builder, Call, held_like, run_operator

__all__ = ["OPERATORS", "run"]


def _gemm(c: Call) -> dict[str, str]:
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))  # the shape an activation (softmax's axes) sees
    wide = np.float32
    a = g.cast(c.feed("ATensor"), wide)
    b = g.cast(c.feed("BTensor"), wide)
    rank = len(c.sizes("ATensor"))
    swap = [*range(rank - 2), rank - 1, rank - 2]
    if c.enum("TransA", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        a = g.op("Transpose", a, perm=swap)
    if c.enum("TransB", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        b = g.op("Transpose", b, perm=swap)
    product = g.op("MatMul", a, b)
    result = g.op("Mul", product, g.scalar(float(c.desc.get("Alpha", 1.0)), product))
    if c.given("CTensor"):
        bias = g.cast(c.feed("CTensor"), wide)
        scaled = g.op("Mul", bias, g.scalar(float(c.desc.get("Beta", 1.0)), bias))
        result = g.op("Add", result, scaled)
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _window_fields(c: Call) -> dict[str, list[int]]:
    names = ("WindowSizes", "Strides", "Dilations", "StartPadding", "EndPadding")
    return {name: [int(v) for v in c.desc[name]] for name in names}


def _fold(c: Call) -> dict[str, str]:
    """Col2Im (opset 18) in FLOAT32: onnxruntime's CPU kernel has no other type. FLOAT16 is
    widened (DirectML accumulates it in FLOAT32 too); FLOAT64 and integers, which FLOAT32
    would round, through ScatterElements' add instead (_scatter_fold)."""
    sizes = c.sizes("OutputTensor")
    dtype = c.dtype("InputTensor")
    g = c.g
    g.shape = tuple(sizes)
    w = _window_fields(c)
    if dtype.name not in ("float32", "float16"):
        return {"OutputTensor": _scatter_fold(c, sizes, w)}
    result = g.op(
        "Col2Im",
        g.cast(c.feed("InputTensor"), np.float32),
        g.int64(sizes[2:]),
        g.int64(w["WindowSizes"]),
        dilations=w["Dilations"],
        pads=w["StartPadding"] + w["EndPadding"],
        strides=w["Strides"],
    )
    return {"OutputTensor": g.cast(result, dtype)}


def _offsets(extents: list[int], w: dict[str, list[int]]) -> np.ndarray:
    """Row-major offsets into the padded spatial block of every window element (row-major over
    WindowSizes) of every block (row-major over the windows that fit): {prod(W), L}."""
    offsets = np.zeros((1, 1), np.int64)
    for extent, window, stride, dilation in zip(
        extents, w["WindowSizes"], w["Strides"], w["Dilations"], strict=True
    ):
        blocks = (extent - (window - 1) * dilation - 1) // stride + 1
        along = np.arange(window)[:, None] * dilation + np.arange(blocks)[None, :] * stride
        offsets = (offsets[:, None, :, None] * extent + along[None, :, None, :]).reshape(
            offsets.shape[0] * window, offsets.shape[1] * blocks
        )
    return offsets


def _extents(spatial: list[int], w: dict[str, list[int]]) -> list[int]:
    pads = zip(spatial, w["StartPadding"], w["EndPadding"], strict=True)
    return [s + a + b for s, a, b in pads]


def _scatter_fold(c: Call, sizes: list[int], w: dict[str, list[int]]) -> str:
    """FOLD in the data's own type: ScatterElements (reduction add) of every window element
    into a zero padded output, the padding then sliced away."""
    g = c.g
    n, channels, *spatial = sizes
    extents = _extents(spatial, w)
    offsets = _offsets(extents, w).reshape(-1)
    data = c.feed("InputTensor")
    updates = g.reshape(data, [n, channels, offsets.size])
    indices = g.int64(np.broadcast_to(offsets, (n, channels, offsets.size)))
    zeros = g.feed(np.zeros((n, channels, int(np.prod(extents))), c.dtype("InputTensor")))
    summed = g.op("ScatterElements", zeros, indices, updates, axis=2, reduction="add")
    block = g.reshape(summed, [n, channels, *extents])
    rank = len(sizes)
    return g.op(
        "Slice",
        block,
        g.int64(w["StartPadding"]),
        g.int64([a + s for a, s in zip(w["StartPadding"], spatial, strict=True)]),
        g.int64(list(range(2, rank))),
    )


# The types onnxruntime's CPU Pad takes; others are moved in int64 (exactly; floats as bits).
_PAD_TYPES = frozenset(
    {"float32", "float64", "int8", "int32", "int64", "uint8", "uint32", "uint64"}
)


def _unfold(c: Call) -> dict[str, str]:
    """No ONNX operator extracts windows of any rank: Pad with zeros, then one Gather of the
    window elements' offsets into the padded spatial block (computed here, row-major over
    WindowSizes and the blocks), in the data's own type (floats moved as their bits)."""
    sizes = c.sizes("InputTensor")
    n, channels, *spatial = sizes
    w = _window_fields(c)
    g = c.g
    g.shape = tuple(sizes)
    data = c.feed("InputTensor", _PAD_TYPES)
    zero = held_like(g, np.zeros((), c.dtype("InputTensor")), data)
    pads = [0, 0, *w["StartPadding"], 0, 0, *w["EndPadding"]]
    padded = g.op("Pad", data, g.int64(pads), zero, mode="constant")
    extents = _extents(spatial, w)
    offsets = _offsets(extents, w)
    flat = g.reshape(padded, [n, channels, int(np.prod(extents))])
    gathered = g.op("Gather", flat, g.int64(offsets.reshape(-1)), axis=2)
    out = g.reshape(gathered, [n, channels * offsets.shape[0], offsets.shape[1]])
    return {"OutputTensor": out}


OPERATORS: dict[str, Builder] = {"GEMM": _gemm, "FOLD": _fold, "UNFOLD": _unfold}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
