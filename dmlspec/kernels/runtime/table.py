"""What the runtime knows of a kernel and what one desc compiles to: `KernelTable` (the table a
generated kernel module declares), and the plan of a valid desc (its static parameters,
outputs and the buffer layouts of its strided tensors)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import jax

from ...validation.runtime import View
from ...validation.tables import CommonTable
from ..layout import Layout

Computed = Callable[[View], Any]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a cache key
class KernelTable:
    name: str
    operator_type: str
    validator: ModuleType  # the generated validator module
    common: CommonTable
    primitive: Callable[..., jax.Array]
    inputs: tuple[tuple[str, str], ...]  # primitive parameter, input tensor field
    static: tuple[tuple[str, Computed], ...]  # primitive parameter, value from the desc
    defaults: tuple[tuple[str, Computed], ...]  # field, value when omitted
    derived: tuple[tuple[str, Computed], ...]  # "OutputTensor.Sizes", value (in order)
    outputs: tuple[str, ...]  # the output fields the primitive returns, in its order
    donate: str | None = None
    tensor_arrays: tuple[str, ...] = ()  # input fields holding a sequence of arrays

    @property
    def output(self) -> str:
        """The first output: what `out=` writes (for most operators the only one)."""
        return self.outputs[0]


@dataclass(frozen=True)
class _Output:
    """One output tensor a desc describes (an item of a tensor-array output is one too)."""

    field: str
    index: int | None  # the item of a tensor-array output; None for a single tensor
    sizes: tuple[int, ...]
    dtype: str
    layout: Layout | None = None  # a strided output: written into its initial buffer

    @property
    def shape(self) -> tuple[int, ...]:
        """What the call returns: the logical output, or a strided output's whole buffer."""
        return self.sizes if self.layout is None else (self.layout.elements,)


InputLayout = Layout | tuple[Layout | None, ...] | None  # a tensor array: one per item


@dataclass(frozen=True)
class _Plan:
    """What one distinct desc compiles to."""

    static: tuple[tuple[str, Any], ...]
    outputs: tuple[_Output, ...]  # in the primitive's order, items of arrays in place
    returned: tuple[bool, ...]  # per primitive result: in the desc (else dropped)
    layouts: tuple[InputLayout, ...] = ()  # per primitive input; None: passed logical

    @property
    def single(self) -> _Output | None:
        """The output of a kernel with exactly one output tensor (what `out=` may be)."""
        lone = len(self.returned) == 1 and self.outputs[0].index is None
        return self.outputs[0] if lone else None
