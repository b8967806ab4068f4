"""The quantization family for the onnxruntime backend: QUANTIZE as ONNX QuantizeLinear,
DEQUANTIZE as DequantizeLinear and DYNAMIC_QUANTIZE_LINEAR as DynamicQuantizeLinear.

QuantizeLinear and DequantizeLinear run at opset 21 (FLOAT16 scales, INT4 and UINT4, blocked
quantization). DirectML's forms map onto ONNX's: scales of 1s everywhere are per tensor (a
scalar scale and zero point), a scale varying along one axis at the input's size is per axis
(`axis`); anything else is blocked (`axis`, `block_size`): ONNX blocks one axis and wants the
input's sizes on the others, so the scale and zero point are repeated along those here (their
values unchanged). SCALE (no zero point) feeds a zero point of 0 in the integer type (ONNX's
default zero point would make the output UINT8). INT4 and UINT4 travel through the graph as
INT8 and UINT8 cast to and from the 4-bit types inside it (onnxruntime's Python binding takes
no 4-bit arrays). onnxruntime rounds halves to even and saturates as the spec does.

DynamicQuantizeLinear (opset 11) computes the page's scale and zero point with one divergence:
ONNX widens the input's range to include 0, where the page takes the input's own minimum and
maximum. They agree where the range holds 0 (DYNAMIC_QUANTIZE_LINEAR.R4/R5 leave the output and
zero point undefined elsewhere, but the scale is the page's): an input whose range leaves 0 out
is declined, as is INT8 output (ONNX's operator has UINT8 only). FLOAT16 input is widened to
FLOAT32 first (exact; the page computes in FLOAT32).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Graph

__all__ = ["OPERATORS", "run"]

OPERATORS = frozenset({"QUANTIZE", "DEQUANTIZE", "DYNAMIC_QUANTIZE_LINEAR"})
# The types onnxruntime's binding cannot feed or return: carried as their 8-bit neighbours.
_CARRIERS = {"int4": np.dtype(np.int8), "uint4": np.dtype(np.uint8)}


def _fed(g: Graph, array: np.ndarray) -> str:
    """An input, a 4-bit one fed as 8 bits and cast inside the graph."""
    carrier = _CARRIERS.get(array.dtype.name)
    if carrier is None:
        return g.feed(array)
    return g.cast(g.feed(array.astype(carrier)), array.dtype)


def _form(sizes: tuple[int, ...], scale_sizes: tuple[int, ...]) -> dict[str, int] | None:
    """ONNX's attributes for DirectML's scale sizes: None per tensor, {axis} per axis, {axis,
    block_size} blocked (the first axis the scale blocks, else the last it varies along)."""
    varying = [d for d, (n, s) in enumerate(zip(sizes, scale_sizes, strict=True)) if s != 1]
    if not varying:
        return None
    if len(varying) == 1 and scale_sizes[varying[0]] == sizes[varying[0]]:
        return {"axis": varying[0]}
    blocked = [d for d in varying if scale_sizes[d] != sizes[d]]
    axis = blocked[0] if blocked else varying[-1]
    return {"axis": axis, "block_size": sizes[axis] // scale_sizes[axis]}


def _shaped(q: np.ndarray, sizes: tuple[int, ...], form: dict[str, int] | None) -> np.ndarray:
    """A quantization tensor as ONNX's form wants it: a scalar, a 1-D row, or repeated to the
    input's sizes on every axis but the blocked one."""
    if form is None:
        return q.reshape(())
    if "block_size" not in form:
        return q.reshape(-1)
    for d, size in enumerate(sizes):
        if d != form["axis"] and q.shape[d] != size:
            q = np.repeat(q, size // q.shape[d], axis=d)
    return q


def _linear(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> np.ndarray:
    from ...reference.tensors import numpy_dtype, tensor_desc

    x = np.asarray(inputs["InputTensor"])
    quantization = [np.asarray(q) for q in inputs["QuantizationTensors"]]
    output_type = numpy_dtype(str(tensor_desc(desc["OutputTensor"])["DataType"]))
    integer_type = output_type if kind == "QUANTIZE" else x.dtype
    scale = quantization[0]
    zero_point = quantization[1] if len(quantization) > 1 else np.zeros(scale.shape, integer_type)
    form = _form(x.shape, scale.shape)
    g = Graph(opset=21)
    operands = [_fed(g, x), _fed(g, _shaped(scale, x.shape, form))]
    operands.append(_fed(g, _shaped(zero_point, x.shape, form)))
    node = "QuantizeLinear" if kind == "QUANTIZE" else "DequantizeLinear"
    result = g.op(node, *operands, dtype=output_type, **(form or {}))
    carrier = _CARRIERS.get(output_type.name)
    if carrier is not None:
        result = g.cast(result, carrier)
    g.shape = x.shape
    return g.run(result).astype(output_type)


def _dynamic(desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    from ...reference.tensors import numpy_dtype, tensor_desc

    output_type = numpy_dtype(str(tensor_desc(desc["OutputTensor"])["DataType"]))
    if output_type != np.uint8:
        raise Unsupported("ONNX DynamicQuantizeLinear quantizes to UINT8 only")
    x = np.asarray(inputs["InputTensor"]).astype(np.float32)  # FLOAT16 widened exactly
    finite = x[np.isfinite(x)]
    if finite.size and (finite.min() > 0 or finite.max() < 0):
        raise Unsupported("ONNX DynamicQuantizeLinear widens the input's range to include 0")
    g = Graph(opset=11)
    g.shape = x.shape
    y, scale, zero_point = g.ops(
        "DynamicQuantizeLinear", g.feed(x), dtypes=[np.uint8, np.float32, np.uint8]
    )
    quantized, scales, zero_points = g.run_all([y, scale, zero_point], [x.ndim, 0, 0])
    ones = (1,) * x.ndim
    return {
        "OutputTensor": quantized,
        "OutputScaleTensor": scales.reshape(ones),
        "OutputZeroPointTensor": zero_points.reshape(ones),
    }


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    if kind == "DYNAMIC_QUANTIZE_LINEAR":
        return _dynamic(desc, inputs)
    return {"OutputTensor": _linear(kind, desc, inputs)}
