"""The scatter family for the onnxruntime backend: SCATTER_ND as ONNX's ScatterND over the
meaningful (trailing) dimensions, SCATTER_ELEMENTS (alias SCATTER) as ScatterElements, indices
cast to int64. Where indices collide ONNX's result is undefined as DirectML's is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .node import meaningful, run_node

__all__ = ["OPERATORS", "run"]

OPERATORS = frozenset({"SCATTER_ELEMENTS", "SCATTER_ND"})


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    from ...reference.tensors import numpy_dtype, tensor_desc

    output = tensor_desc(desc["OutputTensor"])
    sizes, dtype = tuple(output["Sizes"]), numpy_dtype(str(output["DataType"]))
    if kind == "SCATTER_ND":
        data = meaningful(np.asarray(inputs["InputTensor"]), desc["InputDimensionCount"])
        indices = meaningful(
            np.asarray(inputs["IndicesTensor"]), desc["IndicesDimensionCount"]
        ).astype(np.int64)
        q = indices.shape[-1]
        updates = np.asarray(inputs["UpdatesTensor"]).reshape(indices.shape[:-1] + data.shape[q:])
        result = run_node(
            "ScatterND", {"data": data, "indices": indices, "updates": updates}, dtype, data.ndim
        )
    else:
        data = np.asarray(inputs["InputTensor"])
        result = run_node(
            "ScatterElements",
            {
                "data": data,
                "indices": np.asarray(inputs["IndicesTensor"]).astype(np.int64),
                "updates": np.asarray(inputs["UpdatesTensor"]),
            },
            dtype,
            data.ndim,
            axis=desc["Axis"],
        )
    return {"OutputTensor": result.reshape(sizes).astype(dtype, copy=False)}
