"""ONNX graphs of the operators, for exported test vectors: the DirectML-shaped tensors go in
and out as they are; Reshape and Cast nodes around the operator's node adapt them to ONNX
(meaningful dimensions, int64 indices). Returns None where ONNX cannot express a case."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .onnx_models import make_model

__all__ = ["graph_for"]


def _shape(name: str, values: tuple[int, ...]) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def graph_for(operator: Mapping[str, Any], dtypes: Mapping[str, np.dtype[Any]]) -> Any | None:
    """An ONNX ModelProto computing the operator, or None if ONNX cannot express it."""
    import onnx
    from onnx import helper, numpy_helper

    kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
    desc = operator["desc"]
    tensors = {k: v.get("Desc", v) for k, v in desc.items() if isinstance(v, Mapping)}
    if "OutputTensor" not in tensors:  # an operator with other outputs: not expressed here
        return None
    output = tensors["OutputTensor"]
    out_dtype = dtypes["OutputTensor"]
    nodes, initializers, inputs = [], [], []

    def tensor_input(name: str) -> None:
        inputs.append(
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(dtypes[name]), list(tensors[name]["Sizes"])
            )
        )

    def reshape(source: str, target: str, shape: tuple[int, ...]) -> None:
        initializers.append(_shape(f"{target}_shape", shape))
        nodes.append(helper.make_node("Reshape", [source, f"{target}_shape"], [target]))

    if kind in ("SCATTER_ND", "GATHER_ND"):
        data_sizes = tuple(tensors["InputTensor"]["Sizes"][-desc["InputDimensionCount"] :])
        index_sizes = tuple(tensors["IndicesTensor"]["Sizes"][-desc["IndicesDimensionCount"] :])
        q = index_sizes[-1]
        tensor_input("InputTensor")
        tensor_input("IndicesTensor")
        reshape("InputTensor", "data", data_sizes)
        nodes.append(
            helper.make_node(
                "Cast", ["IndicesTensor"], ["indices_int64"], to=onnx.TensorProto.INT64
            )
        )
        reshape("indices_int64", "indices", index_sizes)
        if kind == "SCATTER_ND":
            tensor_input("UpdatesTensor")
            reshape("UpdatesTensor", "updates", index_sizes[:-1] + data_sizes[q:])
            nodes.append(helper.make_node("ScatterND", ["data", "indices", "updates"], ["result"]))
        else:
            nodes.append(helper.make_node("GatherND", ["data", "indices"], ["result"]))
        reshape("result", "OutputTensor", tuple(output["Sizes"]))
    elif kind in ("SCATTER_ELEMENTS", "SCATTER"):
        for name in ("InputTensor", "IndicesTensor", "UpdatesTensor"):
            tensor_input(name)
        nodes.append(
            helper.make_node("Cast", ["IndicesTensor"], ["indices"], to=onnx.TensorProto.INT64)
        )
        nodes.append(
            helper.make_node(
                "ScatterElements",
                ["InputTensor", "indices", "UpdatesTensor"],
                ["OutputTensor"],
                axis=desc["Axis"],
            )
        )
    elif kind == "FILL_VALUE_SEQUENCE":
        sequence = _range(
            out_dtype, desc["ValueStart"], desc["ValueDelta"], math.prod(output["Sizes"])
        )
        if sequence is None:
            return None
        start, limit, delta = sequence
        for name, value in (("start", start), ("limit", limit), ("delta", delta)):
            initializers.append(numpy_helper.from_array(value, name))
        nodes.append(helper.make_node("Range", ["start", "limit", "delta"], ["sequence"]))
        nodes.append(
            helper.make_node(
                "Cast", ["sequence"], ["cast"], to=helper.np_dtype_to_tensor_dtype(out_dtype)
            )
        )
        reshape("cast", "OutputTensor", tuple(output["Sizes"]))
    else:
        return None
    outputs = [
        helper.make_tensor_value_info(
            "OutputTensor", helper.np_dtype_to_tensor_dtype(out_dtype), list(output["Sizes"])
        )
    ]
    graph = helper.make_graph(nodes, kind.lower(), inputs, outputs, initializer=initializers)
    model = make_model(graph, producer_name="dmlspec")
    onnx.checker.check_model(model)
    return model


def _range(
    dtype: np.dtype[Any], start: float, delta: float, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Range inputs giving exactly `count` elements (int64 for integers, then a wrapping Cast;
    float64 for floats, then a rounding Cast); None where Range cannot express the sequence."""
    if delta == 0:
        return None
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        first, step = (int(v) % 2**bits for v in (start, delta))
        if dtype.kind == "i":
            first, step = (v - 2**bits if v >= 2 ** (bits - 1) else v for v in (first, step))
        last = first + count * step
        if not all(-(2**63) <= v < 2**63 for v in (first, last, step)):
            return None
        return np.array(first, np.int64), np.array(last, np.int64), np.array(step, np.int64)
    held_start, held_delta = (float(np.array(v).astype(dtype)) for v in (start, delta))
    return (
        np.array(held_start),
        np.array(held_start + (count - 0.5) * held_delta),
        np.array(held_delta),
    )
