"""One ONNX node run alone: the seed operators' graphs (ScatterND, ScatterElements, Range), a
session per node type, attributes and signature, on the current execution provider."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from ...errors import Unsupported
from ...interop.onnx_models import make_model
from .graph import single_threaded
from .provider import Provider, new_session, opened

__all__ = ["meaningful", "run_node"]


@cache
def _session(
    key: tuple[str, tuple[tuple[str, Any], ...], tuple[tuple[str, str, int], ...], tuple[str, int]],
    provider: Provider,
) -> Any:
    import onnx
    import onnxruntime
    from onnx import helper

    node_type, attributes, signature, output = key

    inputs = [
        helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [None] * rank
        )
        for name, dtype, rank in signature
    ]
    out_dtype, out_rank = output
    outputs = [
        helper.make_tensor_value_info(
            "output", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), [None] * out_rank
        )
    ]
    node = helper.make_node(
        node_type, [name for name, _, _ in signature], ["output"], **dict(attributes)
    )
    graph = helper.make_graph([node], f"dmlspec_{node_type}", inputs, outputs)
    model = make_model(graph)
    onnx.checker.check_model(model)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    single_threaded(options)
    return new_session(model.SerializeToString(), options, provider)


def run_node(
    node_type: str,
    inputs: Mapping[str, np.ndarray],
    output_dtype: Any,
    output_rank: int,
    **attributes: Any,
) -> np.ndarray:
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, NotImplemented

    signature = tuple((name, np.dtype(a.dtype).name, a.ndim) for name, a in inputs.items())
    key = (
        node_type,
        tuple(sorted(attributes.items())),
        signature,
        (np.dtype(output_dtype).name, output_rank),
    )
    try:
        session = opened(_session, key, node_type)
        (result,) = session.run(["output"], dict(inputs))
    except NotImplemented as error:
        raise Unsupported(f"onnxruntime has no {node_type} for these types: {error}") from None
    except (Fail, InvalidArgument) as error:
        raise RuntimeError(f"onnxruntime {node_type} failed: {error}") from None
    return np.asarray(result)


def meaningful(array: np.ndarray, count: int) -> np.ndarray:
    return array.reshape(array.shape[array.ndim - count :])
