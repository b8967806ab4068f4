"""Backends with the recurrent family's realistic bugs, for the suites' meta tests: each runs
the NumPy reference on a desc or data changed the way the bug changes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.layout import is_strided


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


class IgnoredSequenceLengths(NumpyBackend):
    """RNN, LSTM and GRU that run every batch element seq_length steps, whatever its
    SequenceLengthsTensor entry (the backward direction starting at the last step)."""

    name = "ignored-sequence-lengths"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        desc = {k: v for k, v in operator["desc"].items() if k != "SequenceLengthsTensor"}
        given = {k: v for k, v in inputs.items() if k != "SequenceLengthsTensor"}
        return reference.run({**operator, "desc": desc}, given)


class SwappedGates(NumpyBackend):
    """LSTM reading its weights' gate blocks as i, f, o, c (PyTorch's order puts the forget
    gate second) and GRU as r, z, h: the page's second and third (LSTM) or first and second
    (GRU) blocks swapped in WeightTensor, RecurrenceTensor and BiasTensor (packed tensors)."""

    name = "swapped-gates"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        kind = _kind(operator)
        desc = operator["desc"]
        packed = not any(isinstance(v, Mapping) and is_strided(v) for v in desc.values())
        if kind not in ("LSTM", "GRU") or not packed:
            return reference.run(operator, inputs)
        first, second = (1, 2) if kind == "LSTM" else (0, 1)
        swapped = dict(inputs)
        for field in ("WeightTensor", "RecurrenceTensor", "BiasTensor"):
            if field not in inputs:
                continue
            array = np.asarray(inputs[field])
            gates = 8 if field == "BiasTensor" and kind == "LSTM" else 4 if kind == "LSTM" else 3
            gates = 6 if field == "BiasTensor" and kind == "GRU" else gates
            axis = 3 if field == "BiasTensor" else 2
            blocks = np.split(array, gates, axis=axis)
            for offset in range(0, gates, gates // 2 if field == "BiasTensor" else gates):
                a, b = offset + first, offset + second
                blocks[a], blocks[b] = blocks[b], blocks[a]
            swapped[field] = np.concatenate(blocks, axis=axis)
        return reference.run(operator, swapped)
