"""What the benchmark's cases are made of: `BenchCase`, and the small pieces every case's
variants share (device placement, buffers a variant keeps writing into, result fetches)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from .timing import Tolerance, Variant

__all__ = [
    "IN_PLACE",
    "NEW",
    "TRIVIAL",
    "TRIVIAL_NUMPY_IN",
    "BenchCase",
    "Buffer",
    "as_uint8",
    "device",
    "first",
    "from_tensor",
    "ready",
    "trivial_calls",
]

NEW = "new output"
IN_PLACE = "in place"


@dataclass
class BenchCase:
    name: str
    operator: str
    size: str  # "large" or "small"
    dtype: str
    shape: str  # what is moved, in words
    variants: list[Variant]
    expected: np.ndarray  # the output every variant must produce (bitwise unless `tolerance`)
    family: str = "seed"  # what the printout groups it under (run.py --family)
    # How far a correct output may be from `expected`; None: bitwise equal.
    tolerance: Tolerance | None = None
    notes: list[str] = field(default_factory=list)  # printed under the case's table


class Buffer:
    """A buffer a variant keeps writing into: each call's result is the next call's buffer."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def update(self, value: Any) -> Any:
        self.value = value
        return value


def device(array: np.ndarray) -> jax.Array:
    # Under x64: outside it JAX would silently narrow an int64 or float64 array to 32 bits.
    with jax.enable_x64(True):
        placed: jax.Array = jax.device_put(array)
    return placed


def ready(value: Any) -> Any:
    value.block_until_ready()
    return value


def first(outputs: Any) -> Any:
    return outputs[0]  # onnxruntime returns a list of outputs


def from_tensor(tensor: Any) -> Any:
    return tensor.numpy()


def as_uint8(array: Any) -> np.ndarray:
    """A peer's boolean result as DirectML's 0-or-1 UINT8 (only for checking, never timed)."""
    return np.asarray(array).astype(np.uint8)


TRIVIAL = "trivial jitted call (x + 1)"
# Not "{TRIVIAL}, ...": that would read as another configuration of the same peer (targets).
TRIVIAL_NUMPY_IN = f"{TRIVIAL} on a NumPy array"


def trivial_calls() -> list[Variant]:
    """The floors for small calls: a trivial jitted JAX function on a 1 KiB array, given as a
    device array and as a NumPy array (which every jitted call first imports: the floor of a
    path taking NumPy inputs)."""
    host = np.zeros(256, np.float32)
    x = device(host)
    plus_one = jax.jit(lambda a: a + 1)
    return [
        Variant(TRIVIAL, "jax", NEW, lambda: ready(plus_one(x)), 2048, None),
        Variant(TRIVIAL_NUMPY_IN, "jax", NEW, lambda: ready(plus_one(host)), 2048, None),
    ]
