"""Backends with one realistic bug each in the element-wise family (one per sub-family), for
the family's meta tests; and one correct backend whose floats differ within the tolerance."""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlspec.reference.layout import is_strided
from tests.broken_backends import _Wrapped


class ReturnsOutput:
    """A backend that returns one fixed OutputTensor, whatever it is asked."""

    def __init__(self, output: np.ndarray) -> None:
        self.output = output

    def run(self, operator: object, inputs: object) -> dict[str, np.ndarray]:
        return {"OutputTensor": self.output.copy()}


def from_bits(values: list[int], dtype: Any) -> np.ndarray:
    """Floats (or integers) with these encodings, as unsigned integers of the type's width."""
    unsigned = np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")
    return np.array(values, unsigned).view(dtype)


def _retyped(operator: Any, kind: str, **changes: Any) -> Any:
    operator["type"] = f"DML_OPERATOR_{kind}"
    operator["desc"].update(changes)
    return operator


class ExpTooLarge(_Wrapped):
    """Unary math: exp 0.1% too large."""

    operators = ("ELEMENT_WISE_EXP",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = outputs["OutputTensor"]
        return {"OutputTensor": (out.astype(np.float64) * 1.001).astype(out.dtype)}


class SubtractReversed(_Wrapped):
    """Binary: b - a."""

    operators = ("ELEMENT_WISE_SUBTRACT",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return operator, {**inputs, "ATensor": inputs["BTensor"], "BTensor": inputs["ATensor"]}


class GreaterOrEqualIsStrict(_Wrapped):
    """Compare: >= computed as >."""

    operators = ("ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return _retyped(operator, "ELEMENT_WISE_LOGICAL_GREATER_THAN"), inputs


class XorIsOr(_Wrapped):
    """Bit: XOR computed as OR."""

    operators = ("ELEMENT_WISE_BIT_XOR",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return _retyped(operator, "ELEMENT_WISE_BIT_OR"), inputs


class CastRoundsToNearest(_Wrapped):
    """Cast: float to integer rounds to nearest instead of toward zero."""

    operators = ("CAST",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        data = inputs["InputTensor"]
        target = str(operator["desc"]["OutputTensor"]["DataType"])
        if data.dtype.kind == "f" and "FLOAT" not in target:
            data = np.rint(data)
        return operator, {**inputs, "InputTensor": data}


class RoundHalvesAway(_Wrapped):
    """Round: HALVES_TO_NEAREST_EVEN rounds halves away from zero."""

    operators = ("ELEMENT_WISE_ROUND",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        mode = str(operator["desc"].get("RoundingMode", "")).removeprefix("DML_ROUNDING_MODE_")
        if mode == "HALVES_TO_NEAREST_EVEN":
            operator["desc"]["RoundingMode"] = "TOWARD_INFINITY"
        return operator, inputs


class ClipIgnoresMax(_Wrapped):
    """Clip: only the lower bound is applied."""

    operators = ("ELEMENT_WISE_CLIP",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        operator["desc"]["Max"] = float("inf")
        return operator, inputs


class ReluLeaks(_Wrapped):
    """Activation: RELU lets 1% of negative values through."""

    operators = ("ACTIVATION_RELU",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return _retyped(operator, "ACTIVATION_LEAKY_RELU", Alpha=0.01), inputs


class ScaleBiasWithoutBias(_Wrapped):
    """Scale-bias: the Bias is dropped."""

    operators = ("ELEMENT_WISE_IDENTITY",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if operator["desc"].get("ScaleBias"):
            operator["desc"]["ScaleBias"] = {**operator["desc"]["ScaleBias"], "Bias": 0.0}
        return operator, inputs


class FusedActivationIgnored(_Wrapped):
    """Fused activation: never applied."""

    operators = ("ELEMENT_WISE_ADD1",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        operator["desc"].pop("FusedActivation", None)
        return operator, inputs


class ExpOneUlpOff(_Wrapped):
    """Correct: FLOAT32 exp results one ULP away from the reference (within its 4 ULPs)."""

    operators = ("ELEMENT_WISE_EXP",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = outputs["OutputTensor"]
        # A strided output's buffer holds gaps that must stay as given: nudge packed ones only.
        if out.dtype == np.float32 and not is_strided(operator["desc"]["OutputTensor"]):
            out = np.nextafter(out, np.float32(np.inf))
        return {"OutputTensor": out}


def six_subnormals_and_a_one() -> Any:
    """A FLOAT32 ELEMENT_WISE_ADD case (conformance Case) of six subnormals and a 1, plus zeros:
    a backend flushing subnormals returns six zeros, all of them correct."""
    from dmlspec.conformance.cases import Case

    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 7]}
    operator = {
        "type": "DML_OPERATOR_ELEMENT_WISE_ADD",
        "desc": {"ATensor": tensor, "BTensor": tensor, "OutputTensor": tensor},
    }
    a = np.array([[[[1e-40] * 6 + [1.0]]]], dtype=np.float32)  # 1e-40: subnormal in FLOAT32
    return Case(operator, {"ATensor": a, "BTensor": np.zeros_like(a)}, "6_4", 0)
