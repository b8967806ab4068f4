"""An independent NumPy reference of each operator, written from the DirectML pseudocode.

Loops over coordinates, clarity first; it shares nothing with the JAX kernels but the data-type
table. `run` follows the backend contract; `run_recording` also returns, for every output cell
written more than once, the values written there (any of them is a correct result: the docs
leave overlapping writes undefined).

Where the docs leave a result undefined, the reference makes a plain choice: an index outside
its dimension writes nothing (scatter) or reads zero (gather).

Strided tensors (descs with Strides) travel as 1-D buffers: inputs are read through their
logical views (`layout.logical_view`, NumPy's as_strided), and a strided output's initial
buffer, given in `inputs` under its field name, comes back with only its view written.
Recorded collisions count cells of the logical output, row-major.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import Unsupported
from .element_wise import ELEMENT_WISE_OPERATORS, element_wise
from .fill_value_sequence import fill_value_sequence
from .gather_nd import gather_nd
from .layout import is_strided, logical_view, with_view_written
from .scatter_elements import scatter_elements
from .scatter_nd import scatter_nd
from .tensors import WriteLog, Writes, collisions, numpy_dtype, tensor_desc

__all__ = ["REFERENCE_OPERATORS", "Writes", "run", "run_recording"]

_ALIASES = {"SCATTER": "SCATTER_ELEMENTS"}
# The operators `run` computes (by spec name).
REFERENCE_OPERATORS = (
    frozenset({"FILL_VALUE_SEQUENCE", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER_ND"})
    | ELEMENT_WISE_OPERATORS
)


def _short_type(operator: Mapping[str, Any]) -> str:
    name = str(operator.get("type", "")).removeprefix("DML_OPERATOR_")
    return _ALIASES.get(name, name)


def run_recording(
    operator: Mapping[str, Any], inputs: Mapping[str, Any]
) -> tuple[dict[str, np.ndarray], dict[str, Writes]]:
    """Outputs by field name, and the cells written more than once with their values."""
    desc = operator["desc"]
    name = _short_type(operator)
    writes: WriteLog = []
    given = inputs
    outputs = _output_fields(name, desc)
    inputs = {
        field: logical_view(np.asarray(array), desc[field]) if is_strided(desc[field]) else array
        for field, array in given.items()
        if field not in outputs
    }
    if name in ELEMENT_WISE_OPERATORS:
        results = element_wise(name, desc, {k: np.asarray(v) for k, v in inputs.items()})
        for field in outputs:
            if is_strided(desc[field]):
                if field not in given:
                    raise ValueError(f"{field} has Strides: its initial buffer must be in inputs")
                results[field] = with_view_written(
                    np.asarray(given[field]), desc[field], results[field]
                )
        return results, {}
    if name == "SCATTER_ND":
        output = scatter_nd(
            np.asarray(inputs["InputTensor"]),
            np.asarray(inputs["IndicesTensor"]),
            np.asarray(inputs["UpdatesTensor"]),
            desc["InputDimensionCount"],
            desc["IndicesDimensionCount"],
            writes,
        )
    elif name == "GATHER_ND":
        output = gather_nd(
            np.asarray(inputs["InputTensor"]),
            np.asarray(inputs["IndicesTensor"]),
            desc["InputDimensionCount"],
            desc["IndicesDimensionCount"],
            tensor_desc(desc["OutputTensor"])["Sizes"],
        )
    elif name == "SCATTER_ELEMENTS":
        output = scatter_elements(
            np.asarray(inputs["InputTensor"]),
            np.asarray(inputs["IndicesTensor"]),
            np.asarray(inputs["UpdatesTensor"]),
            desc["Axis"],
            writes,
        )
    elif name == "FILL_VALUE_SEQUENCE":
        out = tensor_desc(desc["OutputTensor"])
        output = fill_value_sequence(
            out["Sizes"], numpy_dtype(out["DataType"]), desc["ValueStart"], desc["ValueDelta"]
        )
    else:
        raise Unsupported(f"the NumPy reference has no {operator.get('type')!r}")
    if is_strided(desc["OutputTensor"]):
        if "OutputTensor" not in given:
            raise ValueError("OutputTensor has Strides: its initial buffer must be in inputs")
        output = with_view_written(np.asarray(given["OutputTensor"]), desc["OutputTensor"], output)
    repeated = collisions(writes)
    return {"OutputTensor": output}, {"OutputTensor": repeated} if repeated else {}


def _output_fields(name: str, desc: Mapping[str, Any]) -> tuple[str, ...]:
    """The output tensor fields of an operator: OutputTensor, or a *_GRAD's OutputGradientTensor."""
    if name in ELEMENT_WISE_OPERATORS and "OutputGradientTensor" in desc:
        return ("OutputGradientTensor",)
    return ("OutputTensor",)


def run(operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The backend contract: operator JSON and inputs by field name -> outputs by field name."""
    return run_recording(operator, inputs)[0]
