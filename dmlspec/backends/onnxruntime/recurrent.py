"""The recurrent family for the onnxruntime backend: RNN, LSTM and GRU as ONNX's operators of
the same names, whose layouts the DirectML pages repeat (X {seq_length, batch, input}; W, R
per direction with the gates' blocks in the same order, i / iofc / zrh; B = [Wb, Rb]; LSTM's
P = [i, o, f]; Y {seq_length, num_directions, batch, hidden}; Y_h and Y_c {num_directions,
batch, hidden}), so the tensors pass with their leading 1s dropped.

Activations map to ONNX's names (LINEAR is Affine; SOFTPLUS with Steepness 1 is Softplus);
the element-wise family's others have no ONNX recurrent form and are declined as Unsupported.
FLOAT16 is widened to FLOAT32 (onnxruntime's CPU operators are FLOAT32 only) and the outputs
rounded once: DirectML's default FLOAT32 accumulation. Sequence lengths of 0 or beyond
seq_length, whose batch rows the specs leave undefined (R1, R2) and onnxruntime refuses, run
as 1 and seq_length so the rest of the case still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Graph

__all__ = ["OPERATORS", "run"]

OPERATORS = frozenset({"RNN", "LSTM", "GRU"})
_ONNX_ACTIVATIONS: dict[str, tuple[str, Callable[[Mapping[str, Any]], list[float]]]] = {
    "ACTIVATION_ELU": ("Elu", lambda p: [p["Alpha"]]),
    "ACTIVATION_HARD_SIGMOID": ("HardSigmoid", lambda p: [p["Alpha"], p["Beta"]]),
    "ACTIVATION_LEAKY_RELU": ("LeakyRelu", lambda p: [p["Alpha"]]),
    "ACTIVATION_LINEAR": ("Affine", lambda p: [p["Alpha"], p["Beta"]]),
    "ACTIVATION_RELU": ("Relu", lambda p: []),
    "ACTIVATION_SCALED_TANH": ("ScaledTanh", lambda p: [p["Alpha"], p["Beta"]]),
    "ACTIVATION_SIGMOID": ("Sigmoid", lambda p: []),
    "ACTIVATION_SOFTSIGN": ("Softsign", lambda p: []),
    "ACTIVATION_TANH": ("Tanh", lambda p: []),
    "ACTIVATION_THRESHOLDED_RELU": ("ThresholdedRelu", lambda p: [p["Alpha"]]),
}
_DIRECTIONS = {"FORWARD": "forward", "BACKWARD": "reverse", "BIDIRECTIONAL": "bidirectional"}


def _activations(descs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """ONNX's activations, activation_alpha and activation_beta attributes."""
    names: list[str] = []
    alphas: list[float] = []
    betas: list[float] = []
    for raw in descs:
        kind = str(raw.get("Type", "")).removeprefix("DML_OPERATOR_")
        fields = raw.get("Desc", raw)
        if kind == "ACTIVATION_SOFTPLUS" and float(np.float32(fields.get("Steepness", 1))) == 1:
            names.append("Softplus")
            continue
        if kind not in _ONNX_ACTIVATIONS:
            raise Unsupported(f"ONNX's recurrent operators have no activation {kind}")
        name, parameters = _ONNX_ACTIVATIONS[kind]
        names.append(name)
        values = [float(np.float32(v)) for v in parameters(fields)]
        alphas += values[:1]
        betas += values[1:]
    attributes: dict[str, Any] = {"activations": names}
    if alphas:
        attributes["activation_alpha"] = alphas
    if betas:
        attributes["activation_beta"] = betas
    return attributes


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    from ...reference.tensors import numpy_dtype, tensor_desc

    dtype = numpy_dtype(str(tensor_desc(desc["InputTensor"])["DataType"]))
    f32 = np.float32
    x = np.asarray(inputs["InputTensor"]).astype(f32)[0]
    steps, batch = x.shape[:2]
    hidden = np.asarray(inputs["RecurrenceTensor"]).shape[3]
    dirs = np.asarray(inputs["WeightTensor"]).shape[1]
    direction = str(desc["Direction"]).removeprefix("DML_RECURRENT_NETWORK_DIRECTION_")
    g = Graph()

    def optional(field: str, squeeze: int) -> str:
        if field not in inputs:
            return ""
        value = np.asarray(inputs[field]).astype(f32)
        return g.feed(value.reshape(value.shape[squeeze:]))

    names = [
        g.feed(x),
        g.feed(np.asarray(inputs["WeightTensor"]).astype(f32)[0]),
        g.feed(np.asarray(inputs["RecurrenceTensor"]).astype(f32)[0]),
        optional("BiasTensor", 2),
        "",
        optional("HiddenInitTensor", 1),
    ]
    if "SequenceLengthsTensor" in inputs:
        lengths = np.asarray(inputs["SequenceLengthsTensor"]).reshape(-1).astype(np.int64)
        names[4] = g.feed(np.clip(lengths, 1, steps).astype(np.int32))
    attributes: dict[str, Any] = {
        "direction": _DIRECTIONS[direction],
        "hidden_size": int(hidden),
        **_activations(list(desc["ActivationDescs"])),
    }
    outputs = ["OutputSequenceTensor", "OutputSingleTensor"]
    if kind == "LSTM":
        names += [optional("CellMemInitTensor", 1), optional("PeepholeTensor", 2)]
        outputs.append("OutputCellSingleTensor")
        attributes["input_forget"] = int(desc["CoupleInputForget"] in (True, 1, "TRUE"))
        if desc["UseClipThreshold"] in (True, 1, "TRUE"):
            attributes["clip"] = float(f32(desc["ClipThreshold"]))
    if kind == "GRU":
        attributes["linear_before_reset"] = int(desc["LinearBeforeReset"] in (True, 1, "TRUE"))
    while names and names[-1] == "":
        names.pop()
    values = g.ops(kind, *names, dtypes=[f32] * len(outputs), **attributes)
    results = g.run_all(values, [4] + [3] * (len(outputs) - 1))
    shapes = [(steps, dirs, batch, hidden)] + [(1, dirs, batch, hidden)] * (len(outputs) - 1)
    return {
        field: result.reshape(shape).astype(dtype)
        for field, result, shape in zip(outputs, results, shapes, strict=True)
        if desc.get(field) is not None
    }
