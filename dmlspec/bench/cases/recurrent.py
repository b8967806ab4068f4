"""The recurrent family's benchmark case, one size: a forward LSTM over 64 steps of a batch of
16, input and hidden size 128, FLOAT32, the default activations (f SIGMOID, g and h TANH), no
bias, initial state, peepholes or lengths.

Its time is the recurrence: 64 dependent steps, each a {16, 128} x {128, 512} product and the
gates, with every step's input projection done once up front. The target is the convolution
family's, against plain XLA (the obvious jax.jit of a lax.scan over the steps: dmlspec adds
nothing over it); ops.lstm returns three outputs, so there is no out= variant and the output
judged is OutputSequenceTensor. FLOPs counted: the products, 2 * 4 * hidden * (input + hidden)
per batch element and step. Expected output: the FLOAT64 reference rounded, with the spec's
bound (each step's carried). Peers: onnxruntime's LSTM, torch's nn.LSTM (its gates reordered:
torch holds i, f, g, o where the page holds i, o, f, c).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import ops
from ..families import (
    Scale,
    dmlspec_variants,
    dot_product_expected,
    normal,
    onnxruntime_variants,
    operator_json,
    plain_xla_on_numpy,
    torch_variants,
    with_flops,
)
from ..variants import BenchCase

__all__ = ["lstm_case"]

RECURRENT = "recurrent"
HIGHEST = lax.Precision.HIGHEST
_ACTIVATIONS = [{"Type": f"ACTIVATION_{f}"} for f in ("SIGMOID", "TANH", "TANH")]  # f, g, h


def lstm_case(name: str, n: Scale, steps: int, batch: int, inputs: int, hidden: int) -> BenchCase:
    steps, batch = n(steps), n(batch)
    x = normal(100, (1, steps, batch, inputs))
    w = normal(101, (1, 1, 4 * hidden, inputs)) / np.float32(np.sqrt(inputs))
    r = normal(102, (1, 1, 4 * hidden, hidden)) / np.float32(np.sqrt(hidden))
    fields: dict[str, Any] = {
        "ActivationDescCount": 3,
        "ActivationDescs": _ACTIVATIONS,
        "Direction": "DML_RECURRENT_NETWORK_DIRECTION_FORWARD",
        "ClipThreshold": 0.0,
        "UseClipThreshold": False,
        "CoupleInputForget": False,
    }
    tensors = {"InputTensor": x, "WeightTensor": w, "RecurrenceTensor": r}
    sequence = np.zeros((steps, 1, batch, hidden), np.float32)
    operator = operator_json("LSTM", {**tensors, "OutputSequenceTensor": sequence}, **fields)
    expected, tolerance = dot_product_expected(operator, tensors, "OutputSequenceTensor")
    moved = x.nbytes + w.nbytes + r.nbytes + expected.nbytes
    flops = 2 * 4 * hidden * (inputs + hidden) * batch * steps

    def lstm(data: Any, weight: Any, recurrence: Any, **given: Any) -> Any:
        output, _, _ = ops.lstm(
            data,
            weight,
            recurrence,
            OutputSequenceTensor={},
            OutputSingleTensor=None,
            OutputCellSingleTensor=None,
            **given,
        )
        return output

    def plain(data: Any, weight: Any, recurrence: Any) -> Any:
        projected = jnp.einsum("tbi,gi->tbg", data[0], weight[0, 0], precision=HIGHEST)

        def step(state: Any, xw: Any) -> Any:
            h, c = state
            gates = xw + jnp.dot(h, recurrence[0, 0].T, precision=HIGHEST)
            i, o, f, g = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        zero = jnp.zeros((batch, hidden), jnp.float32)
        _, outputs = lax.scan(step, (zero, zero), projected)
        return outputs[:, None]

    def torch_calls(torch: Any) -> Any:
        module = torch.nn.LSTM(inputs, hidden, bias=False)
        i, o, f, c = np.split(w[0, 0], 4)
        ri, ro, rf, rc = np.split(r[0, 0], 4)
        with torch.no_grad():  # torch's gate order: i, f, g (the cell's), o
            module.weight_ih_l0.copy_(torch.from_numpy(np.concatenate([i, f, c, o])))
            module.weight_hh_l0.copy_(torch.from_numpy(np.concatenate([ri, rf, rc, ro])))
        data = torch.from_numpy(x[0])

        def call() -> Any:
            with torch.no_grad():
                return module(data)[0][:, None]

        return call, None

    baseline = "jax.jit(lax.scan of the LSTM step)"
    node = ("LSTM", ["X", "W", "R"], {"hidden_size": hidden})
    notes = ["no out= variant: ops.lstm returns three outputs"]
    variants = [
        *dmlspec_variants(
            lstm, [x, w, r], fields, expected, moved, (baseline, plain), takes_out=False
        ),
        plain_xla_on_numpy(baseline, plain, [x, w, r], moved),
        *onnxruntime_variants(node, {"X": x[0], "W": w[0], "R": r[0]}, expected, moved),
        *torch_variants("nn.LSTM", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "LSTM",
        "large",
        "float32",
        f"LSTM, {steps} steps of batch {batch}, input {inputs}, hidden {hidden}, float32, "
        f"{flops / 1e9:.2f} GFLOP",
        with_flops(variants, flops),
        expected,
        RECURRENT,
        tolerance,
        notes=notes,
    )
