"""The optimizers for the onnxruntime backend: none runs. ONNX's Adam
(ai.onnx.preview.training) and onnxruntime's AdamOptimizer are training operators that the
onnxruntime inference package does not register ("is not a registered function/op"), so
ADAM_OPTIMIZER is declined (Unsupported) with that reason, rather than rebuilt from
element-wise operators that would test only themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import Unsupported

__all__ = ["OPERATORS", "run"]

_REASON = (
    "onnxruntime's inference package registers no Adam operator (ai.onnx.preview.training "
    "Adam and com.microsoft AdamOptimizer are training operators): no graph for "
    "ADAM_OPTIMIZER"
)


def _adam_optimizer(desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise Unsupported(_REASON)


OPERATORS = {"ADAM_OPTIMIZER": _adam_optimizer}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix): declined."""
    return OPERATORS[kind](desc, inputs)
