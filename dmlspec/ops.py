"""DirectML operators as JAX functions, on any device JAX has (CPU, GPU, TPU).

    import numpy as np
    from dmlspec import ops

    out = ops.scatter_nd(input, indices, updates)              # full dimension counts
    out = ops.scatter(input, indices, updates, Axis=1)         # SCATTER_ELEMENTS
    seq = ops.fill_value_sequence(OutputTensor={"DataType": "UINT8", "Sizes": [8]},
                                  ValueStart=10, ValueDelta=-2)   # 10, 8, ..., 0, 254
    outputs = ops.run(operator_json, {"InputTensor": x, ...})  # the backend contract

Every function validates its desc first (cached per desc) and raises dmlspec.InvalidOperator
naming the broken constraint ids; 64-bit types are computed exactly without any global JAX
flag. The functions are generated from the specs (generated/kernels/); their docstrings give
the semantics and an example.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from dmlspec_generated.kernels import KERNELS
from dmlspec_generated.kernels.fill_value_sequence import fill_value_sequence
from dmlspec_generated.kernels.gather_nd import gather_nd
from dmlspec_generated.kernels.scatter_elements import scatter_elements
from dmlspec_generated.kernels.scatter_nd import scatter_nd

from .errors import Unsupported
from .limits import quote
from .validation.shape import operator_type_of

__all__ = [
    "fill_value_sequence",
    "gather_nd",
    "run",
    "scatter",
    "scatter_elements",
    "scatter_nd",
]

scatter = scatter_elements  # DML_OPERATOR_SCATTER is DML_OPERATOR_SCATTER_ELEMENTS


def run(
    operator: Mapping[str, Any], inputs: Mapping[str, Any], feature_level: str | None = None
) -> dict[str, np.ndarray]:
    """Run operator JSON (DxDispatch's dispatchable) on inputs keyed by tensor field; return
    the outputs keyed by tensor field, shaped and typed as their descs."""
    module = KERNELS.get(operator_type_of(operator) or "")
    if module is None:
        known = ", ".join(sorted(KERNELS))
        declared = operator.get("type") if isinstance(operator, Mapping) else operator
        raise Unsupported(f"no kernel for {quote(declared)} (kernels: {known})")
    outputs: dict[str, np.ndarray] = module.run(operator, inputs, feature_level)
    return outputs
