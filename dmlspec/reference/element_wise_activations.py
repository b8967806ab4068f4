"""The activations of the element-wise reference (ACTIVATION_*): each one's formula on float64
values, by operator name. A FusedActivation applies the same formulas to an operator's result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .element_wise_numbers import Formula, Params, erf, held

__all__ = ["ACTIVATIONS", "shrink"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))  # type: ignore[no-any-return]


def _hard_sigmoid(p: Params, x: np.ndarray) -> np.ndarray:
    return np.maximum(0, np.minimum(p.float32("Alpha") * x + p.float32("Beta"), 1))


def _softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    shifted = np.exp(x - np.max(x, axis=axes, keepdims=True))  # the same ratio, no overflow
    return shifted / np.sum(shifted, axis=axes, keepdims=True)  # type: ignore[no-any-return]


def _log_softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    shifted = x - np.max(x, axis=axes, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))  # type: ignore[no-any-return]


def _hardmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """1 at the first maximum over `axes` (row-major over them, increasing), 0 elsewhere."""
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    rows = moved.reshape((*moved.shape[: x.ndim - len(axes)], -1))
    first = np.argmax(rows, axis=-1)[..., None]
    ones = np.zeros(rows.shape)
    np.put_along_axis(ones, first, 1.0, axis=-1)
    return np.moveaxis(ones.reshape(moved.shape), last, axes)


def _last_axis(x: np.ndarray) -> tuple[int, ...]:
    # The original softmax family reads its input as {BatchCount, Width} (effective rank <= 2)
    # and, per the *1 pages' remarks, equals the *1 operator with Axes == {DimensionCount - 1}.
    return (x.ndim - 1,)


def shrink(p: Params, x: Any) -> Any:
    bias, threshold = p.float32("Bias"), p.float32("Threshold")
    return np.where(x > threshold, x - bias, np.where(x < -threshold, x + bias, 0))


_FLOAT32 = np.dtype(np.float32)


ACTIVATIONS: dict[str, Formula] = {
    "ACTIVATION_CELU": lambda p, x: (
        np.maximum(0, x) + np.minimum(0, p.float32("Alpha") * np.expm1(x / p.float32("Alpha")))
    ),
    "ACTIVATION_ELU": lambda p, x: np.where(x >= 0, x, p.float32("Alpha") * np.expm1(x)),
    "ACTIVATION_GELU": lambda p, x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "ACTIVATION_HARD_SIGMOID": _hard_sigmoid,
    "ACTIVATION_HARD_SWISH": lambda p, x: x * _hard_sigmoid(p, x),
    "ACTIVATION_HARDMAX": lambda p, x: _hardmax(x, _last_axis(x)),
    "ACTIVATION_HARDMAX1": lambda p, x: _hardmax(x, p.axes()),
    "ACTIVATION_IDENTITY": lambda p, x: x,
    "ACTIVATION_LEAKY_RELU": lambda p, x: np.where(x >= 0, x, p.float32("Alpha") * x),
    "ACTIVATION_LINEAR": lambda p, x: p.float32("Alpha") * x + p.float32("Beta"),
    "ACTIVATION_LOG_SOFTMAX": lambda p, x: _log_softmax(x, _last_axis(x)),
    "ACTIVATION_LOG_SOFTMAX1": lambda p, x: _log_softmax(x, p.axes()),
    # ln(1 + exp(y)) is logaddexp(0, y): the same value without overflow. The argument y is
    # held in FLOAT32 (the activations' widest type), where Beta * x can overflow.
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda p, x: (
        p.float32("Alpha") * np.logaddexp(0, held(p.float32("Beta") * x, _FLOAT32))
    ),
    "ACTIVATION_RELU": lambda p, x: np.maximum(0, x),
    "ACTIVATION_SCALED_ELU": lambda p, x: (
        p.float32("Gamma") * np.where(x > 0, x, p.float32("Alpha") * np.expm1(x))
    ),
    "ACTIVATION_SCALED_TANH": lambda p, x: p.float32("Alpha") * np.tanh(p.float32("Beta") * x),
    "ACTIVATION_SHRINK": shrink,
    "ACTIVATION_SIGMOID": lambda p, x: _sigmoid(x),
    "ACTIVATION_SOFTMAX": lambda p, x: _softmax(x, _last_axis(x)),
    "ACTIVATION_SOFTMAX1": lambda p, x: _softmax(x, p.axes()),
    "ACTIVATION_SOFTPLUS": lambda p, x: (
        np.logaddexp(0, held(p.float32("Steepness") * x, _FLOAT32)) / p.float32("Steepness")
    ),
    "ACTIVATION_SOFTSIGN": lambda p, x: x / (1 + np.abs(x)),
    "ACTIVATION_SWISH": lambda p, x: x * _sigmoid(p.float32("SigmoidInputScale") * x),
    "ACTIVATION_TANH": lambda p, x: np.tanh(x),
    "ACTIVATION_THRESHOLDED_RELU": lambda p, x: np.where(x > p.float32("Alpha"), x, 0),
}
