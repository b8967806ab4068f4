"""The peers a user would pick instead of dmlspec's kernels, loaded only if installed:
onnxruntime (one-node models, each session created once) and torch (CPU)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["OnnxNode", "onnxruntime_session", "optional", "versions"]


def optional(name: str) -> Any | None:
    """The module, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def versions() -> dict[str, str]:
    found = {}
    for name in ("numpy", "jax", "jaxlib", "onnxruntime", "onnx", "torch"):
        module = optional(name)
        if module is not None:
            found[name] = str(getattr(module, "__version__", "?"))
    return found


OnnxNode = tuple[str, list[str], dict[str, Any]]  # op type, input names, attributes

_ONNX_TYPES = {
    "bool": "BOOL",
    "uint8": "UINT8",
    "float16": "FLOAT16",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "int32": "INT32",
    "int64": "INT64",
}


def onnxruntime_session(
    node: OnnxNode,
    inputs: dict[str, np.ndarray],
    output_shape: tuple[int, ...],
    dtype: str,
    constants: dict[str, np.ndarray] | None = None,
) -> Callable[[], object] | None:
    """A call running a one-node ONNX model on these inputs (session built here, once), or
    None when onnxruntime or onnx is not installed. `constants` are node inputs stored in the
    model (initializers), as a model holds its pads, slice bounds and axes."""
    onnx = optional("onnx")
    ort = optional("onnxruntime")
    if onnx is None or ort is None:
        return None
    helper = onnx.helper
    types = onnx.TensorProto

    def info(name: str, shape: tuple[int, ...], kind: str) -> Any:
        data_type = getattr(types, _ONNX_TYPES[kind])
        return helper.make_tensor_value_info(name, data_type, list(shape))

    op_type, names, attributes = node
    stored = constants or {}
    fed = [n for n in names if n not in stored]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["output"], **attributes)],
        op_type.lower(),
        [info(n, inputs[n].shape, inputs[n].dtype.name) for n in fed],
        [info("output", output_shape, dtype)],
        initializer=[onnx.numpy_helper.from_array(v, n) for n, v in stored.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {n: inputs[n] for n in fed}
    return lambda: session.run(None, feed)
