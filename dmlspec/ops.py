"""DirectML operators as JAX functions, on any device JAX has (CPU, GPU, TPU).

    import numpy as np
    from dmlspec import ops

    out = ops.element_wise_add(a, b)                           # every operator: snake_case
    out = ops.element_wise_exp(x, ScaleBias={"Scale": 2.0, "Bias": 1.0})
    out = ops.element_wise_add1(a, b, FusedActivation={"Type": "ACTIVATION_RELU"})
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
from dmlspec_generated.kernels.api import *  # noqa: F403 (one function per operator)
from dmlspec_generated.kernels.api import __all__ as _KERNEL_FUNCTIONS

from .errors import Unsupported
from .limits import quote
from .validation.shape import operator_type_of

__all__ = ["run", *_KERNEL_FUNCTIONS]


def run(
    operator: Mapping[str, Any], inputs: Mapping[str, Any], feature_level: str | None = None
) -> dict[str, np.ndarray]:
    """Run operator JSON (DxDispatch's dispatchable) on inputs keyed by tensor field; return
    the outputs keyed by tensor field, shaped and typed as their descs."""
    kind = operator.get("type") if isinstance(operator, Mapping) else None
    module = KERNELS.get(kind) if isinstance(kind, str) else None  # the full name: one lookup
    if module is None:  # another spelling (without DML_OPERATOR_), as validation reads it
        module = KERNELS.get(operator_type_of(operator) or "")
    if module is None:
        known = ", ".join(sorted(KERNELS))
        declared = operator.get("type") if isinstance(operator, Mapping) else operator
        raise Unsupported(f"no kernel for {quote(declared)} (kernels: {known})")
    outputs: dict[str, np.ndarray] = module.run(operator, inputs, feature_level)
    return outputs


def __getattr__(name: str) -> Any:
    """Only reached for names the kernels do not define: say which exist. (It also tells type
    checkers, which cannot see the generated package, that the functions are attributes.)"""
    import difflib

    close = difflib.get_close_matches(name, __all__, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise AttributeError(f"dmlspec.ops has no operator function {name!r}{hint}")
