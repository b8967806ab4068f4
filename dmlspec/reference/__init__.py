"""An independent NumPy reference of each operator, written from the DirectML pseudocode.

Loops over coordinates, clarity first; it shares nothing with the JAX kernels but the data-type
table. `run` follows the backend contract; `run_recording` also returns, for every output cell
written more than once, the values written there (any of them is a correct result: the docs
leave overlapping writes undefined).

Families, one module each, named as in dmlspec.kernels and dmlspec.backends.onnxruntime:
`element_wise` (ELEMENT_WISE_*, ACTIVATION_*, CAST, VALUE_SCALE_2D), `data_movement` (gathers,
slices, padding, tile, join/split, space/depth, one-hot), `generator` (fills, diagonal
matrices, Philox 4x32-10), `reduction` (REDUCE, ARGMIN/ARGMAX, TOP_K, scans,
NONZERO_COORDINATES), `scatter` (SCATTER_ND, SCATTER_ELEMENTS), `convolution` (GEMM so far;
`run_exact` gives its FLOAT64 result and bound for the dot-product accuracy model), `pooling`
(the average, max and Lp poolings; `run_exact` too for the average and Lp ones),
`resampling` (RESAMPLE, RESAMPLE1-3, UPSAMPLE_2D; LINEAR's `run_exact` too), `normalization`
(MEAN_VARIANCE_NORMALIZATION(1, 2), BATCH_NORMALIZATION and its training and gradient forms;
`run_exact` for all, their bounds from dmlspec.normalization), `roi` (ROI_ALIGN, ROI_ALIGN1,
ROI_POOLING; the aligns' FLOAT64 forms in `run_exact` too), `divisive_normalization`
(LOCAL_RESPONSE_NORMALIZATION and its gradient, LP_NORMALIZATION), `optimizer`
(ADAM_OPTIMIZER), both with `run_exact`, and `quantization` (QUANTIZE, DEQUANTIZE,
DYNAMIC_QUANTIZE_LINEAR; the other roundings of a quotient recorded as a cell's writes) and
`recurrent` (RNN, LSTM, GRU; `run_exact` with each step's bound carried). Which
fields are outputs is the spec's word (their kinds), read from the loaded catalog.

Where the docs leave a result undefined, the reference makes a plain choice: an index outside
its dimension writes nothing (scatter) or reads zero (gather); each family module lists its
choices in UNDEFINED_NOTES.

Strided tensors (descs with Strides) travel as 1-D buffers: inputs are read through their
logical views (`layout.logical_view`, NumPy's as_strided), and a strided output's initial
buffer, given in `inputs` under its field name, comes back with only its view written. A
tensor-array field (JOIN's InputTensors, SPLIT's OutputTensors) is a list, each strided item
handled so (a strided output item's initial buffer at its place in a list under the field).
Recorded collisions count cells of the logical output, row-major.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import Unsupported
from .convolution import CONVOLUTION
from .convolution import EXACT as CONVOLUTION_EXACT
from .data_movement import DATA_MOVEMENT
from .divisive_normalization import DIVISIVE_NORMALIZATION
from .divisive_normalization import EXACT as DIVISIVE_NORMALIZATION_EXACT
from .element_wise import ELEMENT_WISE_OPERATORS, FIELD_OPERATORS, element_wise
from .fields import Fields, catalog
from .generator import GENERATORS
from .layout import is_strided, logical_view, with_view_written
from .normalization import EXACT as NORMALIZATION_EXACT
from .normalization import NORMALIZATION
from .optimizer import EXACT as OPTIMIZER_EXACT
from .optimizer import OPTIMIZER
from .pooling import EXACT as POOLING_EXACT
from .pooling import POOLING
from .quantization import QUANTIZATION
from .recurrent import EXACT as RECURRENT_EXACT
from .recurrent import RECURRENT
from .reduction import REDUCTIONS
from .resampling import EXACT as RESAMPLING_EXACT
from .resampling import RESAMPLING
from .roi import EXACT as ROI_EXACT
from .roi import ROI
from .scatter import SCATTER
from .tensors import WriteLog, Writes, collisions

__all__ = [
    "REFERENCE_OPERATORS",
    "Writes",
    "output_fields",
    "run",
    "run_exact",
    "run_recording",
]

_ALIASES = {"SCATTER": "SCATTER_ELEMENTS"}
# The table-driven families: operator -> function of (fields, logical inputs, write log).
_FAMILIES = {
    **CONVOLUTION,
    **DATA_MOVEMENT,
    **DIVISIVE_NORMALIZATION,
    **FIELD_OPERATORS,
    **GENERATORS,
    **NORMALIZATION,
    **OPTIMIZER,
    **POOLING,
    **RECURRENT,
    **REDUCTIONS,
    **QUANTIZATION,
    **RESAMPLING,
    **ROI,
    **SCATTER,
}
# The operators `run_exact` computes: their FLOAT64 results for the dot-product accuracy model.
EXACT = {
    **CONVOLUTION_EXACT,
    **NORMALIZATION_EXACT,
    **DIVISIVE_NORMALIZATION_EXACT,
    **OPTIMIZER_EXACT,
    **POOLING_EXACT,
    **POOLING_EXACT,
    **RECURRENT_EXACT,
    **RESAMPLING_EXACT,
    **ROI_EXACT,
}
# The operators `run` computes (by spec name).
REFERENCE_OPERATORS = ELEMENT_WISE_OPERATORS | frozenset(_FAMILIES)


def _short_type(operator: Mapping[str, Any]) -> str:
    name = str(operator.get("type", "")).removeprefix("DML_OPERATOR_")
    return _ALIASES.get(name, name)


def output_fields(name: str, desc: Mapping[str, Any]) -> tuple[str, ...]:
    """The output tensor fields of an operator that the desc gives, in struct order: the
    spec's `output_tensor` and `output_tensor_array` fields (an optional one the desc leaves
    out or sets to null is not an output)."""
    spec = catalog().operator(name)
    return tuple(f.name for f in spec.fields if f.is_output and desc.get(f.name) is not None)


def _logical_inputs(
    desc: Mapping[str, Any], given: Mapping[str, Any], outputs: tuple[str, ...]
) -> dict[str, Any]:
    """The inputs as logical arrays: a strided tensor's buffer through its view; a tensor
    array as a list, each item likewise."""
    logical: dict[str, Any] = {}
    for field, value in given.items():
        if field in outputs:
            continue
        raw = desc.get(field)
        if isinstance(raw, list):
            items = list(value)
            if len(items) != len(raw):
                raise ValueError(f"{field} holds {len(raw)} tensors in the desc; got {len(items)}")
            logical[field] = [
                logical_view(np.asarray(item), d) if is_strided(d) else np.asarray(item)
                for item, d in zip(items, raw, strict=True)
            ]
        elif raw is not None and is_strided(raw):
            logical[field] = logical_view(np.asarray(value), raw)
        else:
            logical[field] = value
    return logical


def _written(field: str, desc: Mapping[str, Any], given: Mapping[str, Any], result: Any) -> Any:
    """An output as the contract returns it: a strided one as its initial buffer (given in the
    inputs under its field name) with only its view written; a tensor array item by item."""
    raw = desc[field]
    if isinstance(raw, list):
        if not any(is_strided(d) for d in raw):
            return result
        if field not in given or len(given[field]) != len(raw):
            raise ValueError(
                f"{field} has strided tensors: their initial buffers must be in inputs, one "
                "entry per tensor of the array"
            )
        return [
            with_view_written(np.asarray(buffer), d, item) if is_strided(d) else item
            for buffer, d, item in zip(given[field], raw, result, strict=True)
        ]
    if not is_strided(raw):
        return result
    if field not in given:
        raise ValueError(f"{field} has Strides: its initial buffer must be in inputs")
    return with_view_written(np.asarray(given[field]), raw, result)


def run_recording(
    operator: Mapping[str, Any], inputs: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Writes]]:
    """Outputs by field name, and the cells written more than once with their values."""
    desc = operator["desc"]
    name = _short_type(operator)
    if name not in REFERENCE_OPERATORS:
        raise Unsupported(f"the NumPy reference has no {operator.get('type')!r}")
    given = inputs
    outputs = output_fields(name, desc)
    inputs = _logical_inputs(desc, given, outputs)
    log: dict[str, WriteLog] = {}
    with np.errstate(all="ignore"):
        results = _compute(name, desc, inputs, log)
    written = {field: _written(field, desc, given, results[field]) for field in outputs}
    repeated = {field: found for field, writes in log.items() if (found := collisions(writes))}
    return written, repeated


def _compute(
    name: str, desc: Mapping[str, Any], inputs: Mapping[str, Any], log: dict[str, WriteLog]
) -> dict[str, Any]:
    """Every output of the operator, as logical arrays (lists for tensor arrays)."""
    if name in ELEMENT_WISE_OPERATORS:
        return element_wise(name, desc, {k: np.asarray(v) for k, v in inputs.items()})
    return _FAMILIES[name](Fields(catalog().operator(name), desc), inputs, log)


def run_exact(
    operator: Mapping[str, Any], inputs: Mapping[str, Any]
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For the operators the dot-product accuracy model judges: each output's FLOAT64 result
    before any FusedActivation, its bound (the same computation on absolute values) and the
    largest magnitude an intermediate result reaches, as logical arrays."""
    desc = operator["desc"]
    name = _short_type(operator)
    if name not in EXACT:
        raise Unsupported(f"the NumPy reference has no FLOAT64 form of {operator.get('type')!r}")
    inputs = _logical_inputs(desc, inputs, output_fields(name, desc))
    with np.errstate(all="ignore"):
        return EXACT[name](Fields(catalog().operator(name), desc), inputs)


def run(operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The backend contract: operator JSON and inputs by field name -> outputs by field name
    (a tensor-array output as a list of arrays)."""
    return run_recording(operator, inputs)[0]
