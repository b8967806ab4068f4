"""Backends with realistic bugs, one part of the semantics each, for the suites' meta tests
(strided tensors included); and one correct backend that resolves overlapping writes the other
way round."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.conformance.layouts import view_offsets
from dmlspec.reference.layout import is_strided, logical_view, with_view_written


class _Wrapped(NumpyBackend):
    """The reference, with a bug injected by `inputs_hook` or `output_hook`."""

    operators: tuple[str, ...] = ()

    def applies(self, operator: Mapping[str, Any]) -> bool:
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        return kind in self.operators

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if not self.applies(operator):
            return reference.run(operator, inputs)
        operator, inputs = self.inputs_hook(copy.deepcopy(dict(operator)), dict(inputs))
        return self.output_hook(operator, reference.run(operator, inputs))

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return operator, inputs

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return outputs


class ScatterNDOffByOne(_Wrapped):
    """Writes each slice one position further along the first indexed dimension."""

    operators = ("SCATTER_ND",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        desc = operator["desc"]
        data = inputs["InputTensor"].shape[
            inputs["InputTensor"].ndim - desc["InputDimensionCount"] :
        ]
        indices = inputs["IndicesTensor"].astype(np.int64)
        first = indices[..., 0]
        indices[..., 0] = np.where((first >= 0) & (first < data[0] - 1), first + 1, first)
        return operator, {**inputs, "IndicesTensor": indices.astype(inputs["IndicesTensor"].dtype)}


class NegativeIndicesClamped(_Wrapped):
    """Treats every negative index as 0 instead of counting from the end."""

    operators = ("SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER")

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        indices = inputs["IndicesTensor"]
        return operator, {
            **inputs,
            "IndicesTensor": np.where(indices < 0, 0, indices).astype(indices.dtype),
        }


class GatherNDReversedTuples(_Wrapped):
    """Reads index tuples last coordinate first."""

    operators = ("GATHER_ND",)

    def inputs_hook(self, operator: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        desc = operator["desc"]
        data = inputs["InputTensor"].shape[
            inputs["InputTensor"].ndim - desc["InputDimensionCount"] :
        ]
        indices = inputs["IndicesTensor"][..., ::-1]
        q = indices.shape[-1]
        limits = np.array(data[:q])[::-1]
        safe = np.where(np.abs(indices.astype(np.int64)) < np.array(data[:q]), indices, 0)
        del limits
        return operator, {
            **inputs,
            "IndicesTensor": np.ascontiguousarray(safe.astype(indices.dtype)),
        }


class FillAccumulates(_Wrapped):
    """Computes the sequence as the pseudocode's running sum, in the output precision."""

    operators = ("FILL_VALUE_SEQUENCE",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        output = outputs["OutputTensor"]
        if output.dtype.kind != "f":
            return outputs
        desc = operator["desc"]
        value, delta = output.dtype.type(desc["ValueStart"]), output.dtype.type(desc["ValueDelta"])
        flat = np.empty(output.size, output.dtype)
        for k in range(output.size):
            flat[k] = value
            value = output.dtype.type(value + delta)
        return {"OutputTensor": flat.reshape(output.shape)}


class FillSaturates(_Wrapped):
    """Clamps integer sequences to the type's range instead of wrapping around."""

    operators = ("FILL_VALUE_SEQUENCE",)

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        output = outputs["OutputTensor"]
        if output.dtype.kind not in "iu":
            return outputs
        desc = operator["desc"]
        limits = np.iinfo(output.dtype)
        bits = output.dtype.itemsize * 8
        start, delta = (int(desc[k]) % 2**bits for k in ("ValueStart", "ValueDelta"))
        if output.dtype.kind == "i":
            start, delta = (v - 2**bits if v >= 2 ** (bits - 1) else v for v in (start, delta))
        exact = [start + k * delta for k in range(output.size)]
        clamped = [min(max(v, int(limits.min)), int(limits.max)) for v in exact]
        return {
            "OutputTensor": np.array(clamped, dtype=object)
            .astype(output.dtype)
            .reshape(output.shape)
        }


class ScatterElementsAlongLastAxis(_Wrapped):
    """Always scatters along the last axis, whatever Axis says."""

    operators = ("SCATTER_ELEMENTS", "SCATTER")

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if not self.applies(operator):
            return reference.run(operator, inputs)
        changed = copy.deepcopy(dict(operator))
        axis = len(inputs["InputTensor"].shape) - 1
        if (
            changed["desc"]["Axis"] == axis
            or inputs["IndicesTensor"].shape != inputs["InputTensor"].shape
        ):
            return reference.run(operator, inputs)
        changed["desc"]["Axis"] = axis
        return reference.run(changed, inputs)


class Float16AsFloat32(_Wrapped):
    """Returns FLOAT16 results as float32 arrays."""

    operators = ("SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER", "FILL_VALUE_SEQUENCE")

    def output_hook(self, operator: Any, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in outputs.items()}


class CrashesOnInt8(_Wrapped):
    """Raises TypeError (not Unsupported) for INT8 data."""

    operators = ("SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER", "FILL_VALUE_SEQUENCE")

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if "INT8" in str(
            operator["desc"].get("OutputTensor", {}).get("DataType")
        ) and "UINT8" not in str(operator["desc"]["OutputTensor"]["DataType"]):
            raise TypeError("int8 is not a supported element type")
        return reference.run(operator, inputs)


class AcceptsAnything(NumpyBackend):
    """Claims to validate descs but runs whatever it is given."""

    validates = True

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        try:
            return reference.run(operator, inputs)
        except Exception:
            return {"OutputTensor": np.zeros(1, np.float32)}


class FirstWriteWins(NumpyBackend):
    """Correct: where scatter targets overlap, keeps the first write instead of the last."""

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind not in ("SCATTER_ND", "SCATTER_ELEMENTS", "SCATTER"):
            return reference.run(operator, inputs)
        outputs, collisions = reference.run_recording(operator, inputs)
        tensor = operator["desc"]["OutputTensor"]
        flat = outputs["OutputTensor"].reshape(-1)
        # Collisions count the logical output's cells; a strided output is its buffer.
        where = (
            view_offsets(tensor["Sizes"], tensor["Strides"]).reshape(-1)
            if is_strided(tensor)
            else np.arange(flat.size)
        )
        for (cell,), values in collisions.get("OutputTensor", {}).items():
            flat[where[cell]] = values[0]
        return outputs


class DocumentsItsDivergence(Float16AsFloat32):
    """Float16AsFloat32, with that divergence listed as expected failures (and one stale entry)."""

    operators = ("FILL_VALUE_SEQUENCE",)
    expected_failures: ClassVar[list[dict[str, str]]] = [
        {"pattern": "test_support_cell[*FLOAT16*]", "reason": "returns float32 for FLOAT16"},
        {"pattern": "test_random_valid_case", "reason": "may draw FLOAT16"},
        {"pattern": "test_support_cell[*-rank-*]", "reason": "a rank cell may draw FLOAT16"},
        {"pattern": "test_documented_example[*]", "reason": "stale: the examples are not FLOAT16"},
    ]


class _StridedBug(NumpyBackend):
    """The reference on packed tensors, with strided buffers read and written by `read` and
    `write` (each subclass gets one of them wrong)."""

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        desc = operator["desc"]
        packed_desc = {
            k: {m: x for m, x in v.items() if m not in ("Strides", "TotalTensorSizeInBytes")}
            if isinstance(v, dict)
            else v
            for k, v in desc.items()
        }
        logical = {
            k: self.read(np.asarray(v), desc[k]) if is_strided(desc[k]) else v
            for k, v in inputs.items()
            if k != "OutputTensor"
        }
        outputs = reference.run({"type": operator["type"], "desc": packed_desc}, logical)
        if is_strided(desc["OutputTensor"]):
            outputs["OutputTensor"] = self.write(
                np.asarray(inputs["OutputTensor"]), desc["OutputTensor"], outputs["OutputTensor"]
            )
        return outputs

    def read(self, buffer: np.ndarray, tensor: Mapping[str, Any]) -> np.ndarray:
        return np.array(logical_view(buffer, tensor))

    def write(
        self, buffer: np.ndarray, tensor: Mapping[str, Any], logical: np.ndarray
    ) -> np.ndarray:
        return with_view_written(buffer, tensor, logical)


class IgnoresInputStrides(_StridedBug):
    """Reads a strided input's buffer as if it were packed (its first prod(Sizes) elements)."""

    def read(self, buffer: np.ndarray, tensor: Mapping[str, Any]) -> np.ndarray:
        sizes = tensor["Sizes"]
        return buffer[: int(np.prod(sizes))].reshape(sizes)


class WritesOutputGaps(_StridedBug):
    """Writes the view of a strided output into a fresh zeroed buffer: the gaps are lost."""

    def write(
        self, buffer: np.ndarray, tensor: Mapping[str, Any], logical: np.ndarray
    ) -> np.ndarray:
        return with_view_written(np.zeros_like(buffer), tensor, logical)


class MishandlesZeroStrides(_StridedBug):
    """Takes a zero stride for a packed one, clamping the reads to the buffer."""

    def read(self, buffer: np.ndarray, tensor: Mapping[str, Any]) -> np.ndarray:
        sizes, strides = list(tensor["Sizes"]), list(tensor["Strides"])
        running = 1
        for axis in reversed(range(len(sizes))):
            if strides[axis] == 0:
                strides[axis] = running
            running *= sizes[axis]
        offsets = np.zeros(sizes, dtype=np.int64)
        for axis, stride in enumerate(strides):
            shape = [1] * len(sizes)
            shape[axis] = sizes[axis]
            offsets = offsets + np.arange(sizes[axis]).reshape(shape) * stride
        return np.take(buffer, offsets, mode="clip")


class FailsItsFirstFill(NumpyBackend):
    """Correct, except that its first FILL_VALUE_SEQUENCE in each process returns zeros: a
    flake, gone when the case runs again."""

    def __init__(self) -> None:
        super().__init__()
        self.fills = 0

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        outputs = reference.run(operator, inputs)
        if str(operator["type"]).endswith("FILL_VALUE_SEQUENCE"):
            self.fills += 1
            if self.fills == 1:
                return {name: np.zeros_like(value) for name, value in outputs.items()}
        return outputs
