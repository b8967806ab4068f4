"""The activations of the onnxruntime element-wise backend (ACTIVATION_*, without the prefix):
each one's ONNX graph by name, for the operators themselves and for a FusedActivation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Graph

__all__ = ["ACTIVATIONS", "Activation"]

Activation = Callable[[Graph, str, Mapping[str, Any]], str]


def _softmax_family(op_type: str, old: bool) -> Activation:
    """SOFTMAX/LOG_SOFTMAX/HARDMAX over the last axis (the old operators: effective rank 2,
    rows) or over Axes (the *1 operators): the axes moved last and flattened into one, the
    ONNX operator over it, then the shape and order put back."""

    def build(g: Graph, x: str, params: Mapping[str, Any]) -> str:
        shape = g.shape
        rank = len(shape)
        axes = [rank - 1] if old else sorted({int(a) for a in params.get("Axes") or []})
        if not axes:
            return g.op(op_type, x, axis=-1)
        if axes[-1] >= rank:
            raise ValueError(f"Axes {axes} name a dimension outside the rank {rank}")
        kept = [d for d in range(rank) if d not in axes]
        perm = kept + axes
        moved = g.op("Transpose", x, perm=perm) if perm != list(range(rank)) else x
        flat_shape = [shape[d] for d in kept] + [math.prod(shape[d] for d in axes)]
        flat = g.op("Reshape", moved, g.feed(np.array(flat_shape, np.int64)))
        result = g.op(op_type, flat, axis=-1)
        back = g.op("Reshape", result, g.feed(np.array([shape[d] for d in perm], np.int64)))
        if perm == list(range(rank)):
            return back
        inverse = [perm.index(d) for d in range(rank)]
        return g.op("Transpose", back, perm=inverse)

    return build


def _p(params: Mapping[str, Any], name: str, default: float | None = None) -> float:
    value = params.get(name, default)
    if value is None:
        raise Unsupported(f"the activation needs {name}")
    return float(value)


def _linear(g: Graph, x: str, alpha: float, beta: float) -> str:
    return g.op("Add", g.op("Mul", x, g.scalar(alpha, x)), g.scalar(beta, x))


ACTIVATIONS: dict[str, Activation] = {
    "CELU": lambda g, x, p: g.op("Celu", x, alpha=_p(p, "Alpha")),
    "ELU": lambda g, x, p: g.op("Elu", x, alpha=_p(p, "Alpha")),
    "GELU": lambda g, x, p: g.op(  # 0.5 * x * (1 + erf(x / sqrt(2))); Gelu is opset 20
        "Mul",
        g.op("Mul", x, g.scalar(0.5, x)),
        g.op(
            "Add",
            g.scalar(1.0, x),
            g.op("Erf", g.op("Mul", x, g.scalar(1 / math.sqrt(2), x))),
        ),
    ),
    "HARD_SIGMOID": lambda g, x, p: g.op(
        "HardSigmoid", x, alpha=_p(p, "Alpha"), beta=_p(p, "Beta")
    ),
    "HARD_SWISH": lambda g, x, p: g.op(
        "Mul", x, g.op("HardSigmoid", x, alpha=_p(p, "Alpha"), beta=_p(p, "Beta"))
    ),
    "HARDMAX": _softmax_family("Hardmax", old=True),
    "HARDMAX1": _softmax_family("Hardmax", old=False),
    "IDENTITY": lambda g, x, p: g.op("Identity", x),
    "LEAKY_RELU": lambda g, x, p: g.op("LeakyRelu", x, alpha=_p(p, "Alpha")),
    "LINEAR": lambda g, x, p: _linear(g, x, _p(p, "Alpha"), _p(p, "Beta")),
    "LOG_SOFTMAX": _softmax_family("LogSoftmax", old=True),
    "LOG_SOFTMAX1": _softmax_family("LogSoftmax", old=False),
    "PARAMETRIC_SOFTPLUS": lambda g, x, p: g.op(
        "Mul",
        g.scalar(_p(p, "Alpha"), x),
        g.op("Softplus", g.op("Mul", g.scalar(_p(p, "Beta"), x), x)),
    ),
    "RELU": lambda g, x, p: g.op("Relu", x),
    "SCALED_ELU": lambda g, x, p: g.op("Selu", x, alpha=_p(p, "Alpha"), gamma=_p(p, "Gamma")),
    "SCALED_TANH": lambda g, x, p: g.op(
        "Mul", g.scalar(_p(p, "Alpha"), x), g.op("Tanh", g.op("Mul", g.scalar(_p(p, "Beta"), x), x))
    ),
    "SHRINK": lambda g, x, p: g.op("Shrink", x, bias=_p(p, "Bias"), lambd=_p(p, "Threshold")),
    "SIGMOID": lambda g, x, p: g.op("Sigmoid", x),
    "SOFTMAX": _softmax_family("Softmax", old=True),
    "SOFTMAX1": _softmax_family("Softmax", old=False),
    "SOFTPLUS": lambda g, x, p: g.op(  # ln(1 + exp(Steepness * x)) / Steepness
        "Div",
        g.op("Softplus", g.op("Mul", x, g.scalar(_p(p, "Steepness", 1.0), x))),
        g.scalar(_p(p, "Steepness", 1.0), x),
    ),
    "SOFTSIGN": lambda g, x, p: g.op("Softsign", x),
    "SWISH": lambda g, x, p: g.op(
        "Mul", x, g.op("Sigmoid", g.op("Mul", x, g.scalar(_p(p, "SigmoidInputScale"), x)))
    ),
    "TANH": lambda g, x, p: g.op("Tanh", x),
    "THRESHOLDED_RELU": lambda g, x, p: g.op("ThresholdedRelu", x, alpha=_p(p, "Alpha")),
}
