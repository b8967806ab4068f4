"""The onnxruntime backend: each operator as a small ONNX graph run by onnxruntime on an
execution provider (provider.py; the CPU's by default). The element-wise family is in
element_wise.py, data movement and generators in data_movement.py, reductions, TOP_K and scans
in reduction.py, the graph builder they share in graph.py; the seed operators here.

DirectML's right-aligned tensors are reshaped to their meaningful dimensions and indices cast
to int64 (ONNX's index type) around the node; FILL_VALUE_SEQUENCE is a Range in int64 (integers,
then a Cast that wraps like DirectML) or float64 (floats, then a rounding Cast). Outputs are
every output tensor field the operator's spec names and the desc gives (tensor arrays as lists).
What onnxruntime cannot express is reported as Unsupported; where it differs from DirectML the
difference is an expected failure listed, with its reason and the providers it applies to, in
conformance/expected_failures/onnxruntime.json.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import Unsupported
from ...interop.onnx_models import make_model
from . import data_movement, element_wise, reduction
from .graph import single_threaded
from .provider import CPU, Provider, check_available, new_session, opened, using

__all__ = ["OnnxRuntimeBackend"]


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


def _run(
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


def _meaningful(array: np.ndarray, count: int) -> np.ndarray:
    return array.reshape(array.shape[array.ndim - count :])


def _desc(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    return raw.get("Desc", raw)  # type: ignore[no-any-return]


def _dtype(desc: Mapping[str, Any]) -> np.dtype[Any]:
    from dmlspec_generated.validators.common import DATA_TYPES

    name: str | None = DATA_TYPES[str(desc["DataType"]).removeprefix("DML_TENSOR_DATA_TYPE_")].numpy
    if name is None:
        raise Unsupported(f"no NumPy type for {desc['DataType']}")
    return np.dtype(name)


EXPECTED_FAILURES = (
    Path(__file__).parents[2] / "conformance" / "expected_failures" / "onnxruntime.json"
)


class OnnxRuntimeBackend:
    """onnxruntime on one execution provider (default: the CPU's). Named `onnxruntime` on the
    CPU provider, `onnxruntime:PROVIDER` on another; its expected failures are the entries of
    EXPECTED_FAILURES that apply to its provider."""

    validates = False
    # The highest level whose support rows it can run (FILL_VALUE_SEQUENCE's 64-bit types: 5_0).
    feature_level = "5_0"

    def __init__(
        self, provider: Provider | str = CPU, options: Mapping[str, str] | None = None
    ) -> None:
        if isinstance(provider, str):
            provider = Provider(provider, tuple(sorted((options or {}).items())))
        elif options:
            provider = Provider(provider.name, tuple(sorted(options.items())))
        check_available(provider)
        self.provider = provider
        self.name = "onnxruntime" if provider == CPU else f"onnxruntime:{provider.spelled}"
        self.expected_failures = _expected_failures(provider)

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        """ONNX tensors have no strides: strided inputs are packed here first (their logical
        views copied), and a strided output's logical result is written into its buffer; a
        tensor array's items each as a tensor of their own."""
        kind = str(operator.get("type", "")).removeprefix("DML_OPERATOR_")
        desc = operator["desc"]
        outputs = _output_fields(kind, desc)
        packed = {
            name: _packed(value, desc.get(name))
            for name, value in inputs.items()
            if name not in outputs
        }
        with using(self.provider):
            results = self._run_packed(kind, desc, packed)
        return {
            name: _written(result, desc[name], inputs.get(name), name)
            for name, result in results.items()
        }

    def _run_packed(
        self, kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        if kind in data_movement.OPERATORS:
            return data_movement.run(kind, desc, inputs)
        if kind in reduction.OPERATORS:
            return reduction.run(kind, desc, inputs)
        out = _output_name(desc)
        output = _desc(desc[out])
        sizes, dtype = tuple(output["Sizes"]), _dtype(output)
        if kind == "SCATTER_ND":
            data = _meaningful(np.asarray(inputs["InputTensor"]), desc["InputDimensionCount"])
            indices = _meaningful(
                np.asarray(inputs["IndicesTensor"]), desc["IndicesDimensionCount"]
            ).astype(np.int64)
            q = indices.shape[-1]
            updates = np.asarray(inputs["UpdatesTensor"]).reshape(
                indices.shape[:-1] + data.shape[q:]
            )
            result = _run(
                "ScatterND",
                {"data": data, "indices": indices, "updates": updates},
                dtype,
                data.ndim,
            )
        elif kind in ("SCATTER_ELEMENTS", "SCATTER"):
            data = np.asarray(inputs["InputTensor"])
            indices = np.asarray(inputs["IndicesTensor"]).astype(np.int64)
            updates = np.asarray(inputs["UpdatesTensor"])
            result = _run(
                "ScatterElements",
                {"data": data, "indices": indices, "updates": updates},
                dtype,
                data.ndim,
                axis=desc["Axis"],
            )
        elif kind == "FILL_VALUE_SEQUENCE":
            result = _fill(sizes, dtype, desc["ValueStart"], desc["ValueDelta"])
        elif kind in element_wise.ELEMENT_WISE:
            result = element_wise.run(kind, desc, inputs, dtype)
        else:
            raise Unsupported(f"the onnxruntime backend has no DML_OPERATOR_{kind}")
        return {out: result.reshape(sizes).astype(dtype, copy=False)}


def _output_name(desc: Mapping[str, Any]) -> str:
    """OutputTensor, or OutputGradientTensor (ACTIVATION_RELU_GRAD, ELEMENT_WISE_CLIP_GRAD*)."""
    return "OutputGradientTensor" if "OutputGradientTensor" in desc else "OutputTensor"


def _output_fields(kind: str, desc: Mapping[str, Any]) -> frozenset[str]:
    """The output tensor fields (tensor arrays included) the operator's spec names."""
    from dmlspec_generated.validators import VALIDATORS

    module = VALIDATORS.get(f"DML_OPERATOR_{kind}")
    if module is None:
        return frozenset({_output_name(desc)})
    return frozenset(
        f.name for f in module.TABLE.fields if f.kind in ("output_tensor", "output_tensor_array")
    )


def _packed(value: Any, raw: Any) -> Any:
    """An input as the graphs take it: a strided tensor's logical view (copied); a tensor
    array's items each so."""
    from ...reference.layout import is_strided, logical_view

    if isinstance(raw, list):
        return [_packed(item, item_raw) for item, item_raw in zip(value, raw, strict=True)]
    if isinstance(raw, Mapping) and is_strided(raw):
        return np.ascontiguousarray(logical_view(np.asarray(value), raw))
    return value


def _written(result: Any, raw: Any, given: Any, name: str) -> Any:
    """An output as the contract returns it: a strided one as its initial buffer (`given`)
    with the result written into its view; a tensor array's items each so."""
    from ...reference.layout import is_strided, with_view_written

    if isinstance(raw, list):
        buffers = given if isinstance(given, list) else [None] * len(raw)
        return [
            _written(item, item_raw, buffer, f"{name}[{index}]")
            for index, (item, item_raw, buffer) in enumerate(zip(result, raw, buffers, strict=True))
        ]
    if isinstance(raw, Mapping) and is_strided(raw):
        if given is None:
            raise ValueError(f"{name} has Strides: its initial buffer must be in inputs")
        return with_view_written(np.asarray(given), raw, result)
    return result


def _fill(sizes: tuple[int, ...], dtype: np.dtype[Any], start: float, delta: float) -> np.ndarray:
    count = math.prod(sizes)
    if delta == 0:
        raise Unsupported("ONNX Range cannot express a zero step")
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        held = [int(v) % 2**bits for v in (start, delta)]
        # Signed values (two's complement); UINT64 values above 2^63 too, since the int64
        # result cast back to uint64 has the same bits.
        first, step = [
            v - 2**bits if (dtype.kind == "i" or bits == 64) and v >= 2 ** (bits - 1) else v
            for v in held
        ]
        last = first + (count - 1) * step
        limit = last + (1 if step > 0 else -1)  # makes Range yield exactly `count` values
        if not (min(first, limit) >= -(2**63) and max(first, limit) < 2**63):
            raise Unsupported("the sequence leaves int64, where ONNX Range runs")
        sequence = _run(
            "Range",
            {
                "start": np.array(first, np.int64),
                "limit": np.array(limit, np.int64),
                "delta": np.array(step, np.int64),
            },
            np.int64,
            1,
        )
        return sequence[:count].astype(dtype)  # wraps modulo 2^bits, as DirectML does
    held_start, held_delta = (float(np.array(v).astype(dtype)) for v in (start, delta))
    limit = held_start + (count - 0.5) * held_delta  # ceil((limit - start) / delta) == count
    sequence = _run(
        "Range",
        {"start": np.array(held_start), "limit": np.array(limit), "delta": np.array(held_delta)},
        np.float64,
        1,
    )
    return sequence[:count].astype(dtype)


def _expected_failures(provider: Provider) -> list[dict[str, Any]]:
    """The entries of EXPECTED_FAILURES for `provider` (those naming no provider apply to all)."""
    from ...jsonio import read_json_file

    entries: list[dict[str, Any]] = read_json_file(EXPECTED_FAILURES)["expected_failures"]
    return [
        {key: value for key, value in entry.items() if key != "providers"}
        for entry in entries
        if provider.name in entry.get("providers", [provider.name])
    ]
