"""Generators for the onnxruntime backend (FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE,
DIAGONAL_MATRIX, DIAGONAL_MATRIX1, RANDOM_GENERATOR): operators that fill an output from their
fields. FILL_VALUE_SEQUENCE is a Range in int64 (integers, then a cast that wraps like
DirectML) or float64 (floats, then one rounding); the others are graphs built by an entry of
`OPERATORS`, as in data_movement.py. RANDOM_GENERATOR is unsupported: no ONNX operator names
Philox 4x32-10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Builder, Call, float_held, run_operator, union_held
from .node import run_node

__all__ = ["OPERATORS", "run"]


def _fill_value_constant(c: Call) -> dict[str, str]:
    dtype = c.dtype("OutputTensor")
    value = union_held(c.desc["Value"], c.desc.get("ValueDataType", dtype.name.upper()), dtype)
    return {"OutputTensor": c.g.op("Expand", c.g.feed(value), c.g.int64(c.sizes("OutputTensor")))}


def _diagonal_matrix(c: Call) -> dict[str, str]:
    """Value where begin <= x - y < end (the diagonals of each trailing 2-D matrix), the input
    (or 0) elsewhere; begin > end reverses it (the input kept where end <= x - y < begin).
    DIAGONAL_MATRIX is begin = Offset, end = Offset + 1 with a FLOAT Value."""
    g = c.g
    dtype = c.dtype("OutputTensor")
    sizes = c.sizes("OutputTensor")
    height, width = sizes[-2:]
    if "Offset" in c.desc:
        begin, end = int(c.desc["Offset"]), int(c.desc["Offset"]) + 1
        value = float_held(c.desc.get("Value", 1.0), dtype)
    else:
        begin, end = int(c.desc["DiagonalFillBegin"]), int(c.desc["DiagonalFillEnd"])
        value = union_held(c.desc["Value"], c.desc.get("ValueDataType", dtype.name.upper()), dtype)
    one, zero = g.int64(1), g.int64(0)
    rows = g.reshape(g.op("Range", zero, g.int64(height), one), [height, 1])
    columns = g.reshape(g.op("Range", zero, g.int64(width), one), [1, width])
    offset = g.op("Sub", columns, rows)
    low, high = g.int64(min(begin, end)), g.int64(max(begin, end))
    inside = g.op(
        "And",
        g.compare("GreaterOrEqual", offset, low),
        g.compare("Less", offset, high),
        dtype=np.bool_,
    )
    filled = inside if begin <= end else g.op("Not", inside)
    fill = g.feed(value)
    base = c.feed("InputTensor") if c.given("InputTensor") else g.scalar(0, fill)
    return {"OutputTensor": g.op("Expand", g.where(filled, fill, base), g.int64(sizes))}


def _random_generator(c: Call) -> dict[str, str]:
    raise Unsupported(
        "RANDOM_GENERATOR is Philox 4x32-10 on the page; ONNX's random operators "
        "(RandomUniform, RandomNormal, ...) name no generator and take a float seed, so no "
        "onnxruntime graph reproduces DirectML's bits"
    )


def _fill(sizes: tuple[int, ...], dtype: np.dtype[Any], start: float, delta: float) -> np.ndarray:
    count = math.prod(sizes)
    if delta == 0:
        raise Unsupported("ONNX Range cannot express a zero step")
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        held = [int(v) % 2**bits for v in (start, delta)]
        # Signed values (two's complement); UINT64 values above 2^63 too, since the int64
        # result cast back to uint64 has the same bits.
        first, step = [
            v - 2**bits if (dtype.kind == "i" or bits == 64) and v >= 2 ** (bits - 1) else v
            for v in held
        ]
        last = first + (count - 1) * step
        limit = last + (1 if step > 0 else -1)  # makes Range yield exactly `count` values
        if not (min(first, limit) >= -(2**63) and max(first, limit) < 2**63):
            raise Unsupported("the sequence leaves int64, where ONNX Range runs")
        sequence = run_node(
            "Range",
            {
                "start": np.array(first, np.int64),
                "limit": np.array(limit, np.int64),
                "delta": np.array(step, np.int64),
            },
            np.int64,
            1,
        )
        return sequence[:count].astype(dtype)  # wraps modulo 2^bits, as DirectML does
    held_start, held_delta = (float(np.array(v).astype(dtype)) for v in (start, delta))
    limit = held_start + (count - 0.5) * held_delta  # ceil((limit - start) / delta) == count
    sequence = run_node(
        "Range",
        {"start": np.array(held_start), "limit": np.array(limit), "delta": np.array(held_delta)},
        np.float64,
        1,
    )
    return sequence[:count].astype(dtype)


def _fill_value_sequence(desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    from ...reference.tensors import numpy_dtype, tensor_desc

    output = tensor_desc(desc["OutputTensor"])
    sizes, dtype = tuple(output["Sizes"]), numpy_dtype(str(output["DataType"]))
    sequence = _fill(sizes, dtype, desc["ValueStart"], desc["ValueDelta"])
    return {"OutputTensor": sequence.reshape(sizes)}


GRAPHS: dict[str, Builder] = {
    "FILL_VALUE_CONSTANT": _fill_value_constant,
    "DIAGONAL_MATRIX": _diagonal_matrix,
    "DIAGONAL_MATRIX1": _diagonal_matrix,
    "RANDOM_GENERATOR": _random_generator,
}
OPERATORS = frozenset(GRAPHS) | {"FILL_VALUE_SEQUENCE"}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    if kind == "FILL_VALUE_SEQUENCE":
        return _fill_value_sequence(desc, inputs)
    return run_operator(kind, GRAPHS[kind], desc, inputs)
