"""`Kernel`: how an operator's generated JAX kernel calls its primitive."""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Expression
from .base import Json, put

__all__ = ["Kernel"]


@dataclass(frozen=True)
class Kernel:
    """How the generated JAX kernel calls its primitive (dmlspec.kernels.primitives)."""

    primitive: str
    inputs: tuple[tuple[str, str], ...]  # primitive parameter, input tensor field
    static: tuple[tuple[str, Expression], ...]  # primitive parameter, value
    defaults: tuple[tuple[str, Expression], ...]  # field, value when a caller omits it
    outputs: tuple[str, ...]  # the output fields the primitive returns, in its order
    donate: str | None = None
    function: str | None = None  # a family primitive's table entry, passed as `function`
    in_progress: str | None = None  # why a default conformance run leaves it out

    @property
    def output(self) -> str:
        """The first (for most operators the only) output field: what `out=` writes."""
        return self.outputs[0]

    def to_json(self) -> Json:
        data: Json = {"primitive": self.primitive}
        put(data, "function", self.function)
        data |= {
            "inputs": dict(self.inputs),
            "static": {name: e.source for name, e in self.static},
            "defaults": {name: e.source for name, e in self.defaults},
            "output": self.output if len(self.outputs) == 1 else list(self.outputs),
        }
        put(data, "donate", self.donate)
        put(data, "in_progress", self.in_progress)
        return data
