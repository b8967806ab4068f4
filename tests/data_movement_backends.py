"""Backends with one realistic bug each in the data movement, reduction, scan and generator
operators (one per operator group), for the family's meta tests; and one correct backend
whose sums differ from the reference within the accumulated-rounding bound."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.broken_backends import _Wrapped


def _function(operator: Any) -> str:
    return str(operator["desc"]["Function"]).removeprefix("DML_REDUCE_FUNCTION_")


class GatherNegativeIndicesClamped(_Wrapped):
    """Gather: a negative index reads element 0 instead of counting from the end."""

    operators = ("GATHER",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        indices = inputs["IndicesTensor"]
        if indices.dtype.kind == "i":
            indices = np.where(indices < 0, 0, indices).astype(indices.dtype)
        return operator, {**inputs, "IndicesTensor": indices}


class SliceIgnoresOffsets(_Wrapped):
    """Slice: every window starts at 0 (InputWindowOffsets ignored)."""

    operators = ("SLICE1",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        desc = operator["desc"]
        desc["InputWindowOffsets"] = [0] * len(desc["InputWindowOffsets"])
        return operator, inputs


class ReflectionIsSymmetric(_Wrapped):
    """Padding: REFLECTION repeats the edge element (SYMMETRIC)."""

    operators = ("PADDING1",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        desc = operator["desc"]
        if str(desc.get("PaddingMode", "")).endswith("REFLECTION"):
            desc["PaddingMode"] = "DML_PADDING_MODE_SYMMETRIC"
        return operator, inputs


class JoinReversed(_Wrapped):
    """Join and split: the inputs joined last to first."""

    operators = ("JOIN",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        operator["desc"]["InputTensors"] = operator["desc"]["InputTensors"][::-1]
        return operator, {**inputs, "InputTensors": inputs["InputTensors"][::-1]}


class ArgMaxLastOfTies(_Wrapped):
    """Reductions: ARGMAX picks the last of equal maxima whatever AxisDirection says."""

    operators = ("ARGMAX",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        operator["desc"]["AxisDirection"] = "DML_AXIS_DIRECTION_DECREASING"
        return operator, inputs


class SumInFloat16(_Wrapped):
    """Reductions: SUM rounds the result to FLOAT16 precision (a wrong accumulator type)."""

    operators = ("REDUCE",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = outputs["OutputTensor"]
        if out.dtype.kind != "f" or _function(operator) != "SUM":
            return outputs
        return {"OutputTensor": out.astype(np.float16).astype(out.dtype)}


class ScanAlwaysInclusive(_Wrapped):
    """Scans: HasExclusiveSum ignored."""

    operators = ("CUMULATIVE_SUMMATION",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        operator["desc"]["HasExclusiveSum"] = False
        return operator, inputs


class TopKUnsorted(_Wrapped):
    """TOP_K: the K values in their input order, not sorted."""

    operators = ("TOP_K1",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        axis = operator["desc"]["Axis"]
        order = np.argsort(outputs["OutputIndexTensor"], axis=axis, kind="stable")
        return {
            name: np.take_along_axis(array, order, axis=axis) for name, array in outputs.items()
        }


class NonzeroCountsZeros(_Wrapped):
    """NONZERO_COORDINATES: the count is one too many."""

    operators = ("NONZERO_COORDINATES",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        count = outputs["OutputCountTensor"]
        return {**outputs, "OutputCountTensor": (count + 1).astype(count.dtype)}


class RandomStateNotAdvanced(_Wrapped):
    """Generators: the state tensor is not advanced (the same numbers on every call)."""

    operators = ("RANDOM_GENERATOR",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if "OutputStateTensor" not in outputs:
            return {"OutputTensor": outputs["OutputTensor"] ^ np.uint32(1)}
        return {**outputs, "OutputStateTensor": outputs["OutputStateTensor"] * 0}


class SumReordered(_Wrapped):
    """A correct backend: REDUCE SUM accumulated in the output type in reverse order (the
    page leaves the order open), which differs from the reference's exact sum within the
    accumulated-rounding bound."""

    operators = ("REDUCE",)

    def run(self, operator: Any, inputs: Any) -> dict[str, np.ndarray]:
        outputs = super().run(operator, inputs)
        desc = operator["desc"]
        out = outputs["OutputTensor"]
        if out.dtype != np.float32 or _function(operator) != "SUM":
            return outputs
        data = np.asarray(inputs["InputTensor"])
        if data.dtype != np.float32 or data.ndim != out.ndim:
            return outputs
        axes = tuple(desc["Axes"])
        moved = np.moveaxis(data, axes, range(data.ndim - len(axes), data.ndim))
        flat = moved.reshape(*moved.shape[: data.ndim - len(axes)], -1)
        total = np.zeros(flat.shape[:-1], np.float32)
        with np.errstate(all="ignore"):
            for k in range(flat.shape[-1] - 1, -1, -1):
                total = (total + flat[..., k]).astype(np.float32)
        return {"OutputTensor": total.reshape(out.shape)}
