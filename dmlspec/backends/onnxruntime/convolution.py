"""The convolution family for the onnxruntime backend (convolution, matrix multiplication,
attention); so far GEMM, as ONNX's MatMul over the leading (batch, channel) dimensions.

GEMM: Transpose where TransA/TransB ask, MatMul in FLOAT32 (FLOAT16 inputs widened first, as
DirectML accumulates them), then Alpha * product + Beta * C, the FusedActivation's graph, and
one cast to the output type. ONNX's Gemm takes 2-D matrices only, so MatMul serves every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .graph import Builder, Call, run_operator

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


OPERATORS: dict[str, Builder] = {"GEMM": _gemm}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
