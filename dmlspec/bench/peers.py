"""The peers a user would pick instead of dmlspec's kernels, loaded only if installed:
onnxruntime (one-node models, each session created once) and torch (CPU)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..interop.onnx_models import make_model
from .timing import Variant
from .variants import NEW, from_tensor

__all__ = [
    "OnnxNode",
    "onnxruntime_peers",
    "onnxruntime_session",
    "optional",
    "torch_peer",
    "versions",
]


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
    spinning: bool = False,
) -> Callable[[], object] | None:
    """A call running a one-node ONNX model on these inputs (session built here, once), or
    None when onnxruntime or onnx is not installed. `constants` are node inputs stored in the
    model (initializers), as a model holds its pads, slice bounds and axes.

    Without `spinning` the session's idle threads sleep: by default they spin on every core
    for a while after each call, and in interleaved rounds that time is taken from the variant
    timed next (measured: dmlspec's GatherND 1.9 ms alone, 3.1 ms right after a spinning
    session). The default session, spinning, is timed on its own (`alone` variants)."""
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
    model = make_model(graph)
    options = ort.SessionOptions()
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {n: inputs[n] for n in fed}
    return lambda: session.run(None, feed)


def onnxruntime_peers(
    node: OnnxNode,
    inputs: dict[str, np.ndarray],
    output_shape: tuple[int, ...],
    dtype: str,
    moved: int,
    fetch: Callable[[Any], Any],
    constants: dict[str, np.ndarray] | None = None,
) -> list[Variant]:
    """The one-node model as two peers (none without onnxruntime): a session whose threads do
    not spin, timed with the other variants, and onnxruntime's default session, spinning,
    timed alone; the better of the two is the peer to beat."""
    variants = []
    for spinning in (False, True):
        session = onnxruntime_session(node, inputs, output_shape, dtype, constants, spinning)
        if session is None:
            return []
        name = f"onnxruntime {node[0]}" + (", spinning, alone" if spinning else "")
        variants.append(Variant(name, "onnxruntime", NEW, session, moved, fetch, alone=spinning))
    return variants


def torch_peer(
    name: str,
    mode: str,
    run: Callable[[], object],
    moved: int,
    fetch: Callable[[Any], Any] = from_tensor,
) -> Variant:
    """A torch call as a peer, timed alone (in rounds of its own). torch's OpenMP threads spin
    for a while after a parallel call, as onnxruntime's do, and in interleaved rounds that time
    is taken from the variant timed next (measured in one process: dmlspec's large EXP with
    NumPy in 9.8 ms right after torch's exp against 4.0 ms without torch's calls beside it;
    the small EXP 15.3 us against 10.4 us)."""
    return Variant(f"torch {name}, alone", "torch", mode, run, moved, fetch, alone=True)
