"""Backends with the normalization family's realistic bugs, and one honest variant, for the
suites' meta tests: each runs the NumPy reference on changed data or a changed desc, or computes
the normalization itself (packed tensors; strided ones go to the reference)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.element_wise import fused_activation
from dmlspec.reference.layout import is_strided, logical_view, with_view_written

_COMPUTED = (
    "MEAN_VARIANCE_NORMALIZATION",
    "MEAN_VARIANCE_NORMALIZATION1",
    "MEAN_VARIANCE_NORMALIZATION2",
    "BATCH_NORMALIZATION_TRAINING",
)


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


def _packed(operator: Mapping[str, Any]) -> bool:
    return not any(isinstance(v, Mapping) and is_strided(v) for v in operator["desc"].values())


def _axes(kind: str, desc: Mapping[str, Any]) -> tuple[int, ...]:
    if kind == "MEAN_VARIANCE_NORMALIZATION":
        return (1, 2, 3) if desc["CrossChannel"] else (2, 3)
    if kind == "BATCH_NORMALIZATION_TRAINING":
        return tuple(i for i, n in enumerate(desc["ScaleTensor"]["Sizes"]) if n == 1)
    return tuple(sorted(set(desc["Axes"])))


class _OwnVariance(NumpyBackend):
    """MEAN_VARIANCE_NORMALIZATION(1, 2) and BATCH_NORMALIZATION_TRAINING computed here in
    FLOAT32 with `variance` (x in FLOAT32, its axes, its mean) instead of the reference, strided
    tensors through their views."""

    def variance(self, x: np.ndarray, axes: tuple[int, ...], mean: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def run(self, operator: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        kind = _kind(operator)
        if kind not in _COMPUTED:
            return reference.run(operator, given)
        desc = operator["desc"]
        inputs = {
            k: logical_view(np.asarray(v), desc[k]) if is_strided(desc[k]) else v
            for k, v in given.items()
        }
        outputs = self._compute(kind, desc, inputs)
        return {
            k: with_view_written(np.asarray(given[k]), desc[k], v) if is_strided(desc[k]) else v
            for k, v in outputs.items()
        }

    def _compute(
        self, kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        x = np.asarray(inputs["InputTensor"], np.float32)
        axes = _axes(kind, desc)
        centered = bool(desc.get("UseMean", True))
        divide = bool(desc.get("UseVariance", desc.get("NormalizeVariance", True)))
        with np.errstate(all="ignore"):
            mean = x.mean(axis=axes, keepdims=True) if centered else np.zeros((), np.float32)
            variance = self.variance(x, axes, mean)
            y = x - mean
            if divide:
                y = y / np.sqrt(variance + np.float32(desc["Epsilon"]))
            for name, op in (("ScaleTensor", np.multiply), ("BiasTensor", np.add)):
                if name in inputs:
                    y = op(y, np.asarray(inputs[name], np.float32))
            if "FusedAddTensor" in inputs:
                y = y + np.asarray(inputs["FusedAddTensor"], np.float32)
            y = fused_activation(kind, desc.get("FusedActivation"), y.astype(np.float64))
        dtype = np.asarray(inputs["InputTensor"]).dtype
        outputs = {"OutputTensor": y.astype(dtype)}
        if kind == "BATCH_NORMALIZATION_TRAINING":
            shape = tuple(desc["ScaleTensor"]["Sizes"])
            outputs["OutputMeanTensor"] = mean.reshape(shape).astype(dtype)
            outputs["OutputVarianceTensor"] = variance.reshape(shape).astype(dtype)
        return outputs


class SampleVariance(_OwnVariance):
    """The normalizations with the sample variance, divided by n - 1 (numpy.var's ddof=1,
    torch.var's default) instead of the population's n."""

    name = "sample-variance"

    def variance(self, x: np.ndarray, axes: tuple[int, ...], mean: np.ndarray) -> np.ndarray:
        count = int(np.prod([x.shape[a] for a in axes]))
        total = np.square(x - mean).sum(axis=axes, keepdims=True)
        return np.asarray(total / np.float32(max(count - 1, 1)), np.float32)


class OnePassVariance(_OwnVariance):
    """Correct, but the variance taken in one FLOAT32 pass as mean(x^2) - mean(x)^2 (what
    onnxruntime's LayerNormalization does): the accuracy bound must accept it."""

    name = "one-pass-variance"

    def variance(self, x: np.ndarray, axes: tuple[int, ...], mean: np.ndarray) -> np.ndarray:
        squares = np.square(x).mean(axis=axes, keepdims=True, dtype=np.float32)
        return np.asarray(squares - np.square(mean), np.float32)


class IgnoredEpsilon(NumpyBackend):
    """BATCH_NORMALIZATION dividing by sqrt(Variance), Epsilon left out."""

    name = "ignored-epsilon"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if _kind(operator) != "BATCH_NORMALIZATION":
            return reference.run(operator, inputs)
        return reference.run({**operator, "desc": {**operator["desc"], "Epsilon": 0.0}}, inputs)


class UncenteredScaleGradient(NumpyBackend):
    """Both batch normalization gradients with OutputScaleGradient = sum(InputGradient *
    Input / sqrt(Variance + Epsilon)), the given Mean not subtracted (it reads MeanTensor as
    zeros; no other output reads it)."""

    name = "uncentered-scale-gradient"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _kind(operator).endswith("_GRAD") or not _packed(operator):
            return reference.run(operator, inputs)
        zeroed = {**inputs, "MeanTensor": np.zeros_like(inputs["MeanTensor"])}
        return reference.run(operator, zeroed)
