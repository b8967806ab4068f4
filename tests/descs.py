"""Valid operator descs of any rank, and spec-driven mutations of them, for validator tests.

The factories are test data (each is checked valid by the tests); which values depend on
which is read from the specs' own equality constraints (`dmlspec.binding.derive_members`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dmlspec.conformance.mutate import mutations, rederive
from dmlspec.model import OperatorSpec

Desc = dict[str, Any]

__all__ = ["FACTORIES", "data_type_group", "mutations", "operator", "rederive", "set_slot"]


def _ones(rank: int, tail: list[int]) -> list[int]:
    return [1] * (rank - len(tail)) + tail


def _nd(rank: int, output_name: str, scatter: bool) -> Desc:
    """ScatterND/GatherND: one meaningful input dimension of 8, 4 index tuples of 1 coordinate."""
    indices, count = ([4, 1], 2) if rank >= 2 else ([1], 1)
    derived = _ones(rank, [4] if rank >= 2 else [1])
    desc: Desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": _ones(rank, [8])},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": _ones(rank, indices)},
        output_name: {"DataType": "FLOAT32", "Sizes": derived},
        "InputDimensionCount": 1,
        "IndicesDimensionCount": count,
    }
    if scatter:
        desc["OutputTensor"] = {"DataType": "FLOAT32", "Sizes": _ones(rank, [8])}
    return desc


FACTORIES: dict[str, Callable[[int], Desc]] = {
    "SCATTER_ND": lambda r: _nd(r, "UpdatesTensor", scatter=True),
    "GATHER_ND": lambda r: _nd(r, "OutputTensor", scatter=False),
    "SCATTER_ELEMENTS": lambda r: {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [5])},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": _ones(r, [4])},
        "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [4])},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [5])},
        "Axis": r - 1,
    },
    "FILL_VALUE_SEQUENCE": lambda r: {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": _ones(r, [3])},
        "ValueDataType": "FLOAT32",
        "ValueStart": 1,
        "ValueDelta": 2,
    },
}


def operator(spec: OperatorSpec, desc: Desc) -> dict[str, Any]:
    return {"type": spec.operator_type, "desc": desc}


def data_type_group(spec: OperatorSpec, slot: str) -> set[str]:
    """Every data-type slot the spec's equalities tie to `slot`, `slot` included."""
    from dmlspec.conformance.descs import type_groups

    return next(group for group in type_groups(spec, "DataType") if slot in group)


def set_slot(desc: Desc, slot: str, value: str) -> None:
    owner, _, member = slot.partition(".")
    if member:
        desc[owner][member] = value
    else:
        desc[owner] = value
