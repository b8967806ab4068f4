"""Spec-driven test cases: a valid desc and its input data, drawn from a seed, or a documented
example's fields as a desc and inputs.

A case is a desc drawn for a support-table cell (descs.py) and input data drawn for it
(inputs.py). The same seed always gives the same case, so a failure can be rerun by itself.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Catalog, ExampleTensor, OperatorSpec, example_field_value
from .descs import ATTEMPTS, CellChoice, draw_desc
from .inputs import draw_inputs

__all__ = [
    "Case",
    "draw_case",
    "example_operator",
    "example_tensors",
]


@dataclass(frozen=True)
class Case:
    operator: dict[str, Any]
    inputs: dict[str, Any]  # field -> array (a list of arrays for a tensor array)
    feature_level: str
    seed: int
    layouts: tuple[tuple[str, str], ...] = ()  # tensor field, layout (strided cases only)

    def describe(self, limit: int = 20) -> str:
        """The case as text to rerun it: operator JSON and (small) inputs."""
        import json

        lines = [
            f"seed {self.seed} at feature level {self.feature_level}",
            json.dumps(self.operator),
        ]
        if self.layouts:
            lines.insert(1, "layouts: " + ", ".join(f"{t} {name}" for t, name in self.layouts))
        for name, value in self.inputs.items():
            items = value if isinstance(value, list) else [value]
            for i, array in enumerate(items):
                shown = array.reshape(-1)[:limit].tolist()
                more = " ..." if array.size > limit else ""
                label = f"{name}[{i}]" if isinstance(value, list) else name
                lines.append(f"{label} {array.dtype}{list(array.shape)}: {shown}{more}")
        return "\n".join(lines)


def example_tensors(value: Any) -> list[ExampleTensor] | None:
    """An example field's tensors: one, a tensor array's items, or None for a scalar field."""
    if isinstance(value, ExampleTensor):
        return [value]
    if (
        isinstance(value, tuple | list)
        and value
        and all(isinstance(v, ExampleTensor) for v in value)
    ):
        return list(value)
    return None


def example_operator(
    catalog: Catalog, spec: OperatorSpec, fields: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """A documented example's fields as a desc and its inputs (a list for a tensor array), and
    whether every input tensor has values."""
    desc: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    complete = True
    for name, value in fields.items():
        tensors = example_tensors(value)
        if tensors is None:  # the page's notation ({0, 1}, TRUE) as operator JSON takes it
            desc[name] = example_field_value(spec.field(name), value)
            continue
        descs, arrays = [], []
        for tensor in tensors:
            raw = tensor.to_json()
            values = raw.pop("Values", None)
            descs.append(raw)
            dtype = catalog.common.data_type(tensor.data_type or "").numpy
            arrays.append(None if values is None else np.array(values, dtype=dtype))
        single = isinstance(value, ExampleTensor)
        desc[name] = descs[0] if single else descs
        if spec.field(name).is_output:
            continue
        if any(a is None for a in arrays):
            complete = False
        else:
            inputs[name] = arrays[0] if single else arrays
    return desc, inputs, complete


def draw_case(
    catalog: Catalog,
    spec: OperatorSpec,
    level: str,
    seed: int,
    force: CellChoice | tuple[CellChoice, ...] | None = None,
    attempts: int = ATTEMPTS,
    streams: int = 3,
) -> Case:
    rng = random.Random(seed)
    for retry in range(1, streams + 1):  # a seed whose draws were all rejected: the next stream
        try:
            operator = draw_desc(catalog, spec, level, rng, force, attempts=attempts)
            break
        except LookupError:
            if retry == streams:
                raise
            rng = random.Random(f"{seed}/{retry}")
    inputs = draw_inputs(catalog, spec, operator, rng, unique_targets=rng.random() < 0.5)
    return Case(operator, inputs, level, seed)
