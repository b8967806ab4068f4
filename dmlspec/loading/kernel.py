"""An operator's kernel: the primitive it calls, with tensor fields and expressions checked."""

from __future__ import annotations

from .. import model as m
from ..expr import Scope
from .operator_base import OperatorBuilderBase

__all__ = ["KernelBuilder"]


class KernelBuilder(OperatorBuilderBase):
    def kernel(self, fields: list[m.Field], scope: Scope) -> m.Kernel:
        raw = self.data["kernel"]
        at: list[str | int] = ["kernel"]
        for parameter, name in raw["inputs"].items():
            self.tensor_field(fields, name, [*at, "inputs", parameter], output=False)
        outputs = [raw["output"]] if isinstance(raw["output"], str) else list(raw["output"])
        for i, name in enumerate(outputs):
            where = [*at, "output"] if isinstance(raw["output"], str) else [*at, "output", i]
            self.tensor_field(fields, name, where, output=True)
        if "donate" in raw:
            self.tensor_field(fields, raw["donate"], [*at, "donate"], output=False)
        static = []
        for parameter, source in raw["static"].items():
            expression = self.compile(source, scope, [*at, "static", parameter])
            if expression is not None:
                static.append((parameter, expression))
        defaults = []
        by_name = {f.name: f for f in fields}
        for name, source in raw["defaults"].items():
            if name not in by_name or by_name[name].is_tensor:
                self.report.at([*at, "defaults", name], f"{name!r} is not a non-tensor field")
                continue
            expression = self.compile(source, scope, [*at, "defaults", name])
            if expression is not None:
                defaults.append((name, expression))
        return m.Kernel(
            primitive=raw["primitive"],
            inputs=tuple(raw["inputs"].items()),
            static=tuple(static),
            defaults=tuple(defaults),
            outputs=tuple(outputs),
            donate=raw.get("donate"),
            function=raw.get("function"),
            in_progress=raw.get("in_progress"),
        )
