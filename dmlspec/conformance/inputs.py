"""Drawing input data for a desc: index tensors within the bounds the spec's `requires`
constraints state, other tensors with edge values. Drawn from the case's random stream, so the
same seed always gives the same data.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np

from ..binding import bind_desc
from ..expr import Absent, ExpressionError, nodes
from ..model import Catalog, OperatorSpec
from .descs import tensor_like

__all__ = ["draw_inputs"]


def _index_bounds(
    catalog: Catalog, spec: OperatorSpec, operator: Mapping[str, Any]
) -> dict[str, Any]:
    """For each tensor a requires constraint bounds with in_bounds(T.Values, B): B."""
    env = bind_desc(catalog.common, spec, operator["desc"])
    bounds: dict[str, Any] = {}
    for constraint in spec.constraints:
        for node in nodes.walk(constraint.expr.tree):
            match node:
                case nodes.Call(
                    func="in_bounds",
                    args=(nodes.Member(obj=nodes.Name(id=tensor), member="Values"), bound),
                ):
                    try:
                        bounds[tensor] = env_value(bound, env)
                    except (Absent, ExpressionError):
                        continue
    return bounds


def env_value(node: nodes.Node, env: Any) -> Any:
    from ..expr.evaluate import evaluate

    return evaluate(node, env, "")


def _edge_values(dtype: np.dtype[Any], count: int, rng: random.Random) -> np.ndarray:
    """A mixture: the type's edge values and functions' singular points (zeros of both signs,
    subnormals, the extremes, infinities, NaN, +-1, halves), small values (the domain of
    acos, exponents, shift amounts) and values spread over a wide range. Drawn by a NumPy
    generator seeded from `rng`, so a case stays reproducible from its seed."""
    generator = np.random.default_rng(rng.getrandbits(64))
    roll = generator.random(count)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        edges = np.array(
            [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                -2.5,
                2.0,
                float(info.max),
                float(-info.max),
                float(info.tiny),
                float(info.smallest_subnormal),
                -float(info.smallest_subnormal),
                np.inf,
                -np.inf,
                np.nan,
                0.1,
                3.5,
            ]
        )
        values = np.where(
            roll < 0.3,
            edges[generator.integers(len(edges), size=count)],
            np.where(
                roll < 0.65, generator.uniform(-2, 2, count), generator.uniform(-100, 100, count)
            ),
        )
        return values.astype(dtype)
    limits = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]
    low, high = int(limits.min), int(limits.max)
    # INT4 and UINT4 (ml_dtypes, no NumPy integer kind) are drawn as INT8 and converted.
    drawn = dtype if dtype.kind in "iu" else np.dtype(np.int8)
    extremes = np.array([low, high, 0, 1, -1 if low < 0 else 2, high // 2 + 1], dtype=drawn)
    small = generator.integers(max(low, -10), min(high, 10), size=count, dtype=drawn, endpoint=True)
    wide = generator.integers(low, high, size=count, dtype=drawn, endpoint=True)
    picked = extremes[generator.integers(len(extremes), size=count)]
    return np.where(roll < 0.3, picked, np.where(roll < 0.65, small, wide)).astype(dtype)


def _bounded_indices(
    dtype: np.dtype[Any], shape: tuple[int, ...], bound: Any, rng: random.Random
) -> np.ndarray:
    """Indices in [-B, B) for a signed type (negative ones count from the end), [0, B) for an
    unsigned one; B is one bound, or one per position of the last axis."""
    count = int(np.prod(shape)) if shape else 1
    top = int(np.iinfo(np.int64).max)  # a wider bound (2^63 for UINT64) draws up to it
    if isinstance(bound, list):
        limits = np.resize(np.array([min(int(b), top) for b in bound], dtype=np.int64), count)
    else:
        limits = np.full(count, min(int(bound), top), dtype=np.int64)
    lows = -limits if dtype.kind == "i" else np.zeros_like(limits)
    generator = np.random.default_rng(rng.getrandbits(64))
    return generator.integers(lows, limits, size=count).astype(dtype).reshape(shape)


def _roi_boxes(desc: Mapping[str, Any], boxes: np.ndarray, rng: random.Random) -> np.ndarray:
    """ROI boxes (the ROI family's ROITensor): most boxes over the input and a little beyond it, in
    the coordinates SpatialScale* maps onto it, corners mostly ordered; a leading BatchID
    column (ROI_POOLING's {.., 5} boxes) a batch of the input; now and then an edge value."""
    generator = np.random.default_rng(rng.getrandbits(64))
    batch, _, height, width = desc["InputTensor"]["Sizes"]
    flat = boxes.reshape(-1, boxes.shape[-1]).astype(np.float64)
    corners = flat[:, -4:].copy()
    for axis, extent, scale_field in ((0, width, "SpatialScaleX"), (1, height, "SpatialScaleY")):
        scale = abs(float(desc.get(scale_field, desc.get("SpatialScale", 1.0)))) or 1.0
        drawn = generator.uniform(-1.5, extent + 1.5, size=(len(flat), 2)) / scale
        ordered = generator.random(len(flat)) < 0.85
        drawn = np.where(ordered[:, None], np.sort(drawn, axis=1), drawn)
        if generator.random() < 0.3:  # whole-number coordinates: ties and exact samples
            drawn = np.round(drawn)
        corners[:, axis], corners[:, axis + 2] = drawn[:, 0], drawn[:, 1]
    keep = generator.random(corners.shape) < 0.9
    flat[:, -4:] = np.where(keep, corners, flat[:, -4:])
    if boxes.shape[-1] == 5:
        ids = generator.integers(0, batch, size=len(flat)).astype(np.float64)
        flat[:, 0] = np.where(generator.random(len(flat)) < 0.9, ids, flat[:, 0])
    return flat.reshape(boxes.shape).astype(boxes.dtype)


def _training_steps(steps: np.ndarray, rng: random.Random) -> np.ndarray:
    """A TrainingStepTensor's value (ADAM_OPTIMIZER): mostly a whole step count of at least 1
    (its R1), now and then the drawn edge value."""
    generator = np.random.default_rng(rng.getrandbits(64))
    if generator.random() < 0.15:
        return steps
    return np.full(steps.shape, generator.choice([1, 2, 3, 10, 100, 1000]), steps.dtype)


def _power_of_two_scales(scales: np.ndarray, rng: random.Random) -> np.ndarray:
    """QUANTIZE's and DEQUANTIZE's scales as powers of two of either sign: exact quotients,
    so that an input's halves stay halves and the rounding of ties is tested (the drawn edge
    values, zeros and NaN among them, leave most quantized outputs undefined)."""
    generator = np.random.default_rng(rng.getrandbits(64))
    powers = generator.integers(-2, 3, size=scales.shape).astype(np.float64)
    signs = np.where(generator.random(scales.shape) < 0.8, 1.0, -1.0)
    return (signs * 2.0**powers).astype(scales.dtype)


def _moderate_data(inputs: dict[str, Any], names: set[str], rng: random.Random) -> None:
    """The `moderate` fields' floating data (RNN, LSTM, GRU: every input but the sequence
    lengths), in most cases all moderate (uniform in [-2, 2]): every element of a batch row
    reaches every later step's output through the recurrence, so one edge value (a NaN, an
    infinity, a huge value) leaves that whole row to any result, and edge values everywhere
    would leave almost no drawn case judging a finite recurrence; the other cases keep them."""
    generator = np.random.default_rng(rng.getrandbits(64))
    if generator.random() >= 0.7:
        return
    for name, value in inputs.items():
        array = np.asarray(value)
        if name in names and array.dtype.kind == "f":
            inputs[name] = generator.uniform(-2, 2, array.shape).astype(array.dtype)


def _drawn_as_the_spec_says(
    spec: OperatorSpec, desc: Mapping[str, Any], inputs: dict[str, Any], rng: random.Random
) -> None:
    """Redraw the data of the fields whose spec names a `drawn_as` distribution (in place)."""
    moderate: set[str] = set()
    for field in tensor_like(spec):
        if field.drawn_as is None or field.name not in inputs:
            continue
        if field.drawn_as == "boxes_over_input" and "InputTensor" in desc:
            inputs[field.name] = _roi_boxes(desc, inputs[field.name], rng)
        elif field.drawn_as == "whole_steps":
            inputs[field.name] = _training_steps(inputs[field.name], rng)
        elif field.drawn_as == "power_of_two_scales" and inputs[field.name] and rng.random() < 0.8:
            inputs[field.name][0] = _power_of_two_scales(inputs[field.name][0], rng)
        elif field.drawn_as == "moderate":
            moderate.add(field.name)
    if moderate:
        _moderate_data(inputs, moderate, rng)


def draw_inputs(
    catalog: Catalog,
    spec: OperatorSpec,
    operator: Mapping[str, Any],
    rng: random.Random,
    unique_targets: bool = False,
) -> dict[str, Any]:
    """Input data: index tensors within the bounds the spec's requires constraints state (negative
    values for signed types too); other data with edge values (extremes, NaN, infinities, -0);
    and where a field's spec names a `drawn_as` distribution, that: ROI boxes mostly over the
    InputTensor (`_roi_boxes`), a step count mostly whole (`_training_steps`), quantization
    scales mostly powers of two (`_power_of_two_scales`), a recurrent network's data mostly
    moderate (`_moderate_data`)."""
    from ..validation import requires_hold

    bounds = _index_bounds(catalog, spec, operator)
    desc = operator["desc"]
    for _ in range(50):
        inputs: dict[str, Any] = {}
        for field in tensor_like(spec):
            if field.is_output or field.name not in desc:
                continue
            if field.is_tensor_array:
                inputs[field.name] = [
                    _edge_values(
                        np.dtype(catalog.common.data_type(item["DataType"]).numpy),
                        int(np.prod(item["Sizes"])),
                        rng,
                    ).reshape(tuple(item["Sizes"]))
                    for item in desc[field.name]
                ]
                continue
            tensor = desc[field.name]
            dtype = np.dtype(catalog.common.data_type(tensor["DataType"]).numpy)
            shape = tuple(tensor["Sizes"])
            count = int(np.prod(shape)) if shape else 1
            if field.name in bounds and dtype.kind in "iu":  # a bound on integer data only
                inputs[field.name] = _bounded_indices(dtype, shape, bounds[field.name], rng)
            else:
                inputs[field.name] = _edge_values(dtype, count, rng).reshape(shape)
        _drawn_as_the_spec_says(spec, desc, inputs, rng)
        if not unique_targets or requires_hold(operator, inputs):
            return inputs
    return inputs
