"""Strided cases: a drawn case with its tensors laid out as the common spec's layouts say.

The layouts (packed, padded, permuted, broadcast, oversized) and the tensor kinds each applies
to come from spec/common.json (`tensor.layouts`), never from an operator: every operator's
suite draws them the same way. A tensor given a layout other than packed gets Strides (and,
for oversized, a larger TotalTensorSizeInBytes) and travels as its buffer: every byte outside
its view holds the spec's sentinel byte, inputs' logical data is written into the view, and a
strided output's initial buffer (all sentinel) is passed in the inputs under its field name.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from ..expr import nodes
from ..model import Catalog, CommonSpec, OperatorSpec, TensorLayout
from .cases import Case, draw_case

__all__ = [
    "PACKED",
    "draw_layout_case",
    "layouts_for",
    "strided_case",
    "strided_rules",
    "view_offsets",
]

PACKED = "packed"
ATTEMPTS = 20


def layouts_for(catalog: Catalog, output: bool) -> list[TensorLayout]:
    """The spec's layouts that apply to an input (or output) tensor."""
    kind = "OUTPUT" if output else "INPUT"
    return [t for t in catalog.common.tensor_layouts if kind in t.tensor_kinds]


def strided_rules(common: CommonSpec) -> list[str]:
    """The tensor rules (TENSOR.C*) that read Strides: the suites' strided negative tests."""
    return [
        c.id
        for c in common.tensor_constraints
        if c.constraint_class == "error"
        and any(
            isinstance(n, nodes.Member) and n.member == "Strides" for n in nodes.walk(c.expr.tree)
        )
    ]


def _packed(sizes: list[int]) -> list[int]:
    strides, running = [], 1
    for size in reversed(sizes):
        strides.append(running)
        running *= size
    return strides[::-1]


def _strides(layout: str, sizes: list[int], rng: random.Random) -> list[int] | None:
    """Strides of this layout for these sizes, or None where it cannot apply (a permutation
    of fewer than two moving dimensions, a broadcast with no dimension above 1)."""
    rank = len(sizes)
    moving = [i for i, size in enumerate(sizes) if size > 1]
    if layout in (PACKED, "oversized"):
        return _packed(sizes)
    if layout == "padded":
        strides = [0] * rank
        running = 1 if rank > 1 else 2  # a 1-D tensor: a gap after every element
        for axis in reversed(range(rank)):
            strides[axis] = running
            running = running * sizes[axis] + rng.randint(1, 3)
        return strides
    if layout == "permuted":
        if len(moving) < 2:
            return None
        order = list(range(rank))  # outermost first in memory
        while order == sorted(order):
            rng.shuffle(order)
        permuted = _packed([sizes[axis] for axis in order])
        strides = [0] * rank
        for position, axis in enumerate(order):
            strides[axis] = permuted[position]
        return strides
    if layout == "broadcast":
        if not moving:
            return None
        # Keep a moving dimension unrepeated where there are two: a zero stride then differs
        # from a packed one in what it reads, not just in where.
        repeated = set(rng.sample(moving, rng.randint(1, max(1, len(moving) - 1))))
        packed = _packed([1 if i in repeated else s for i, s in enumerate(sizes)])
        return [0 if i in repeated else packed[i] for i in range(rank)]
    raise ValueError(f"unknown layout {layout!r} (spec/common.json tensor.layouts)")


def view_offsets(sizes: list[int], strides: list[int]) -> np.ndarray:
    """The buffer offset of every logical element, shaped as `sizes`."""
    offsets = np.zeros(sizes, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[axis] = size
        offsets = offsets + np.arange(size, dtype=np.int64).reshape(shape) * stride
    return offsets


def _buffer_bytes(sizes: list[int], strides: list[int], itemsize: int) -> int:
    last = sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True))
    return -(-(last + 1) * itemsize // 4) * 4


def strided_case(
    catalog: Catalog, spec: OperatorSpec, case: Case, chosen: dict[str, str], rng: random.Random
) -> Case | None:
    """`case` with each tensor in `chosen` given that layout where it can take it (the others
    stay packed); `Case.layouts` records what each tensor got."""
    if catalog.common.layout_rules is None:
        return None
    sentinel = catalog.common.layout_rules.sentinel_byte
    desc = {k: dict(v) if isinstance(v, dict) else v for k, v in case.operator["desc"].items()}
    inputs = dict(case.inputs)
    applied = []
    for field in spec.tensor_fields:
        layout = chosen.get(field.name, PACKED)
        if layout == PACKED or field.name not in desc:
            applied.append((field.name, PACKED))
            continue
        tensor = desc[field.name]
        sizes = list(tensor["Sizes"])
        strides = _strides(layout, sizes, rng)
        # INT4 and UINT4 buffers are DirectML's packed nibbles, which no NumPy element view
        # holds: such tensors stay packed (logical arrays, one value per element).
        if strides is None or catalog.common.data_type(tensor["DataType"]).bits < 8:
            applied.append((field.name, PACKED))
            continue
        dtype = np.dtype(catalog.common.data_type(tensor["DataType"]).numpy)
        size = _buffer_bytes(sizes, strides, dtype.itemsize)
        if layout == "oversized":
            size += 4 * rng.randint(1, 4)
            tensor["TotalTensorSizeInBytes"] = size
        tensor["Strides"] = strides
        elements = size // dtype.itemsize  # the contract: TotalTensorSizeInBytes / element size
        buffer = np.frombuffer(bytes([sentinel]) * (elements * dtype.itemsize), dtype).copy()
        if not field.is_output:
            logical = inputs[field.name]
            repeated = tuple(slice(0, 1) if t == 0 else slice(None) for t in strides)
            logical = np.broadcast_to(logical[repeated], sizes)  # a zero stride repeats
            buffer[view_offsets(sizes, strides)] = logical
        inputs[field.name] = buffer
        applied.append((field.name, layout))
    operator = {"type": case.operator["type"], "desc": desc}
    return replace(case, operator=operator, inputs=inputs, layouts=tuple(applied))


def draw_layout_case(
    catalog: Catalog, spec: OperatorSpec, level: str, seed: int, layout: str | None = None
) -> Case | None:
    """A valid case with `layout` on every tensor it applies to (the others packed; a tensor
    that cannot take it, such as a permutation of one moving dimension, stays packed too), or
    with a layout drawn per tensor when `layout` is None; None if no drawn case can take
    `layout`."""
    # Preferred: every tensor that may take the layout takes it, and the case tells it apart
    # from packed; else the first case that tells it apart; else the first that has it.
    telling, fallback = None, None
    for attempt in range(ATTEMPTS):
        rng = random.Random(seed * 7919 + attempt)
        case = draw_case(catalog, spec, level, seed + attempt)
        chosen = {}
        for field in spec.tensor_fields:
            allowed = [t.name for t in layouts_for(catalog, field.is_output)]
            if layout is None:
                chosen[field.name] = rng.choice(allowed)
            elif layout in allowed:
                chosen[field.name] = layout
        if layout is not None and not chosen:
            return None
        strided = strided_case(catalog, spec, case, chosen, rng)
        if strided is None or layout is None:
            return strided
        if layout in dict(strided.layouts).values():
            if _telling(strided, layout):
                if all(dict(strided.layouts)[name] == layout for name in chosen):
                    return strided
                telling = telling or strided
            fallback = fallback or strided
    return telling or fallback


def _telling(case: Case, layout: str) -> bool:
    """Whether the case tells `layout` apart from packed tensors: a padded or oversized buffer
    with elements outside the view, a broadcast tensor that also has a moving dimension (only
    then do its reads differ from a backend's taking zero strides for packed ones)."""
    desc = case.operator["desc"]
    for tensor, used in case.layouts:
        if used != layout:
            continue
        sizes, strides = desc[tensor]["Sizes"], desc[tensor]["Strides"]
        if layout == "broadcast":
            if any(size > 1 and stride for size, stride in zip(sizes, strides, strict=True)):
                return True
        elif layout in ("padded", "oversized"):
            if case.inputs[tensor].size > int(np.prod(sizes)):
                return True
        else:
            return True
    return False
