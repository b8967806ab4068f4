"""The onnxruntime backend: each operator as a small ONNX graph run by onnxruntime on an
execution provider (provider.py; the CPU's by default). One module per family, named as in
dmlspec.kernels and dmlspec.reference: element_wise.py, data_movement.py, generator.py,
reduction.py (with TOP_K, the scans and NONZERO_COORDINATES), scatter.py, convolution.py,
pooling.py, resampling.py, roi.py, divisive_normalization.py, optimizer.py, quantization.py
and recurrent.py; the graph builder they share in graph.py, single-node sessions in node.py.

Outputs are every output tensor field the operator's spec names and the desc gives (tensor
arrays as lists).
What onnxruntime cannot express is reported as Unsupported; where it differs from DirectML the
difference is an expected failure listed, with its reason and the providers it applies to, in
conformance/expected_failures/onnxruntime.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import Unsupported
from . import (
    convolution,
    data_movement,
    divisive_normalization,
    element_wise,
    generator,
    normalization,
    optimizer,
    pooling,
    quantization,
    recurrent,
    reduction,
    resampling,
    roi,
    scatter,
)
from .graph import run_operator
from .provider import CPU, Provider, check_available, using

__all__ = ["OnnxRuntimeBackend"]


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
    # The highest level: what it cannot run it declines (Unsupported, a skip with the reason)
    # and where it differs from the pages its expected failures say why.
    feature_level = "6_4"

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
        kind = "SCATTER_ELEMENTS" if kind == "SCATTER" else kind
        if kind in element_wise.GRAPHS:
            return run_operator(kind, element_wise.GRAPHS[kind], desc, inputs)
        for family in (
            convolution,
            data_movement,
            divisive_normalization,
            generator,
            normalization,
            optimizer,
            pooling,
            quantization,
            recurrent,
            reduction,
            resampling,
            roi,
            scatter,
        ):
            if kind in family.OPERATORS:
                results: dict[str, Any] = family.run(kind, desc, inputs)
                return results
        if kind not in element_wise.ELEMENT_WISE:
            raise Unsupported(f"the onnxruntime backend has no DML_OPERATOR_{kind}")
        out = _output_name(desc)
        output = _desc(desc[out])
        sizes, dtype = tuple(output["Sizes"]), _dtype(output)
        result = element_wise.run(kind, desc, inputs, dtype)
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


def _expected_failures(provider: Provider) -> list[dict[str, Any]]:
    """The entries of EXPECTED_FAILURES for `provider` (those naming no provider apply to all)."""
    from ...jsonio import read_json_file

    entries: list[dict[str, Any]] = read_json_file(EXPECTED_FAILURES)["expected_failures"]
    return [
        {key: value for key, value in entry.items() if key != "providers"}
        for entry in entries
        if provider.name in entry.get("providers", [provider.name])
    ]
