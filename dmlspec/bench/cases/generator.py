"""The generator family's benchmark case: FILL_VALUE_SEQUENCE (byte accounting in
seed_common.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ..peers import onnxruntime_peers, optional, torch_peer
from ..timing import Variant
from ..variants import IN_PLACE, NEW, BenchCase, Buffer, device, first, ready
from .seed_common import user_paths

__all__ = ["fill_case"]


def fill_case(name: str, size: str, count: int, dtype: str) -> Any:
    start, delta = 1.0, 0.5  # exact in every float type, so every peer makes the same values
    moved = count * np.dtype(dtype).itemsize
    output = {"DataType": {"float32": "FLOAT32", "float16": "FLOAT16"}[dtype], "Sizes": [count]}
    given = Buffer(device(np.zeros(count, dtype)))
    stop = start + delta * count

    def fill(**extra: Any) -> Any:
        return ops.fill_value_sequence(
            OutputTensor=output, ValueStart=start, ValueDelta=delta, **extra
        )

    operator = {
        "type": "DML_OPERATOR_FILL_VALUE_SEQUENCE",
        "desc": {
            "OutputTensor": output,
            "ValueDataType": output["DataType"],
            "ValueStart": start,
            "ValueDelta": delta,
        },
    }
    variants = [
        *user_paths(operator, {}, fill, moved),
        Variant("jax", "dmlspec", NEW, lambda: ready(fill()), moved),
        Variant(
            "jax out=",
            "dmlspec",
            IN_PLACE,
            lambda: ready(given.update(fill(out=given.value))),
            moved,
        ),
        Variant(
            "numpy arange", "numpy", NEW, lambda: np.arange(start, stop, delta, dtype=dtype), moved
        ),
    ]
    limits = {n: np.array(v, dtype) for n, v in (("start", start), ("limit", stop))}
    variants += onnxruntime_peers(
        ("Range", ["start", "limit", "delta"], {}),
        {**limits, "delta": np.array(delta, dtype)},
        (count,),
        dtype,
        moved,
        first,
    )
    torch = optional("torch")
    if torch is not None:
        t_type = getattr(torch, dtype)
        t_out = torch.empty(count, dtype=t_type)
        variants += [
            torch_peer(
                "arange", NEW, lambda: torch.arange(start, stop, delta, dtype=t_type), moved
            ),
            torch_peer(
                "arange out=", IN_PLACE, lambda: torch.arange(start, stop, delta, out=t_out), moved
            ),
        ]
    # Exact in float64 and in the output type for these start and delta values.
    expected = (start + delta * np.arange(count, dtype=np.float64)).astype(dtype)
    return BenchCase(
        name, "FILL_VALUE_SEQUENCE", size, dtype, f"{count} {dtype}", variants, expected
    )
