"""An operator's desc as the reference reads it: tensor descs, and the other fields as the C
struct holds them (UINT/INT arrays, BOOLs, FLOATs as float32, enums, DML_SCALAR_UNIONs).

What the spec already holds (which fields are outputs, an enum's members and their order) is
read from the loaded catalog, never copied here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from ..errors import InvalidOperator
from ..model import Catalog, OperatorSpec
from .tensors import WriteLog, numpy_dtype, tensor_desc

__all__ = [
    "Fields",
    "Inputs",
    "Operator",
    "Outputs",
    "catalog",
    "comparison_terms",
    "exact_sizes",
    "float_parameter",
    "right_aligned",
    "scalar_union",
    "wrap",
]


@cache
def catalog() -> Catalog:
    """The specs, loaded once."""
    from ..loading import load_catalog

    return load_catalog()


def wrap(value: int, dtype: np.dtype[Any]) -> int:
    """An exact integer in an integer type: its low bits (two's complement)."""
    bits = dtype.itemsize * 8
    low = int(value) % (1 << bits)
    return low - (1 << bits) if dtype.kind == "i" and low >= 1 << (bits - 1) else low


# DML_SCALAR_UNION's members (directml.h); it has none for FLOAT16.
_UNION_MEMBERS = {
    "INT8": "Int8",
    "UINT8": "UInt8",
    "INT16": "Int16",
    "UINT16": "UInt16",
    "INT32": "Int32",
    "UINT32": "UInt32",
    "INT64": "Int64",
    "UINT64": "UInt64",
    "FLOAT32": "Float32",
    "FLOAT64": "Float64",
}


def scalar_union(value: Any, data_type: str) -> Any:
    """A DML_SCALAR_UNION read as `data_type` says, as a NumPy scalar of that type.

    JSON gives a number (as DxDispatch does), or an object naming the member ({"Float32": 2})
    or its Bytes. An integer member keeps the number's low bits (a fraction dropped first: a C
    conversion); a float member rounds to nearest. FLOAT16, which has no member, rounds the
    number to float16."""
    data_type = data_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    dtype = numpy_dtype(data_type)
    if isinstance(value, Mapping):
        member = _UNION_MEMBERS.get(data_type, "")
        if member in value:
            value = value[member]
        elif "Bytes" in value:
            raw = bytes(int(b) for b in value["Bytes"])[: dtype.itemsize]
            return np.frombuffer(raw, dtype=dtype)[0]
        elif len(value) == 1:
            value = next(iter(value.values()))
        else:
            raise InvalidOperator(
                f"a scalar union of {data_type} must hold its {member or data_type} member; "
                f"got {sorted(value)}"
            )
    if dtype.kind == "f":
        return np.array(float(value), dtype=np.float64).astype(dtype)[()]
    return dtype.type(wrap(math.trunc(value), dtype))


def float_parameter(value: float, dtype: np.dtype[Any]) -> Any:
    """A FLOAT field (PADDING's PaddingValue, DIAGONAL_MATRIX's Value) written into a tensor
    of `dtype`. The pages: "if the DataType of the tensors is not FLOAT16 or FLOAT32, then the
    value might be truncated (for example, 10.6 will become 10)". Floats round to nearest;
    integers go toward zero and, where the page is silent (out of range, NaN), saturate and
    take NaN to 0, as CAST does in the element-wise reference."""
    single = float(np.float32(value))
    if dtype.kind == "f":
        return np.array(single).astype(dtype)[()]
    if math.isnan(single):
        return dtype.type(0)
    info = np.iinfo(dtype)
    if math.isinf(single):
        return dtype.type(info.max if single > 0 else info.min)
    return dtype.type(min(max(math.trunc(single), int(info.min)), int(info.max)))


class Fields:
    """One operator's desc, by field name."""

    def __init__(self, spec: OperatorSpec, desc: Mapping[str, Any]) -> None:
        self.spec = spec
        self.desc = desc

    def has_field(self, name: str) -> bool:
        """Whether the operator's struct has this field (whether or not the desc gives it)."""
        return any(field.name == name for field in self.spec.fields)

    def present(self, name: str) -> bool:
        return self.desc.get(name) is not None

    def raw(self, name: str) -> Any:
        if not self.present(name):
            raise InvalidOperator(f"{self.spec.name} needs its {name} field; the desc has none")
        return self.desc[name]

    # ---- tensors --------------------------------------------------------------------------

    def sizes(self, name: str) -> tuple[int, ...]:
        return tuple(int(s) for s in tensor_desc(self.raw(name))["Sizes"])

    def dtype(self, name: str) -> np.dtype[Any]:
        return numpy_dtype(str(tensor_desc(self.raw(name))["DataType"]))

    def array_sizes(self, name: str) -> list[tuple[int, ...]]:
        """Sizes of each tensor of a tensor-array field (JOIN's InputTensors, SPLIT's
        OutputTensors)."""
        return [tuple(int(s) for s in tensor_desc(t)["Sizes"]) for t in self.raw(name)]

    def array_dtypes(self, name: str) -> list[np.dtype[Any]]:
        return [numpy_dtype(str(tensor_desc(t)["DataType"])) for t in self.raw(name)]

    # ---- scalars --------------------------------------------------------------------------

    def integer(self, name: str) -> int:
        """A UINT or INT field (pages print INT32_MIN and friends by name)."""
        value = self.raw(name)
        limits = {"INT32_MIN": -(2**31), "INT32_MAX": 2**31 - 1, "UINT32_MAX": 2**32 - 1}
        return limits[value] if isinstance(value, str) and value in limits else int(value)

    def axis(self, rank: int, name: str = "Axis") -> int:
        """An axis field, which must name one of a tensor's `rank` dimensions."""
        value = self.integer(name)
        if not 0 <= value < rank:
            raise InvalidOperator(
                f"{name} in {self.spec.name} must lie in [0, {rank}); got {value}"
            )
        return value

    def integers(self, name: str, length: int | None = None) -> tuple[int, ...]:
        """A UINT or INT array, as a list or as a page prints it ("{0, 2}"); `length`: the
        count it must have (its DimensionCount)."""
        value = self.raw(name)
        if isinstance(value, str):
            values = tuple(int(v) for v in re.findall(r"-?\d+", value))
        elif isinstance(value, int):
            values = (value,)
        else:
            values = tuple(int(v) for v in value)
        if length is not None and len(values) != length:
            raise InvalidOperator(
                f"{name} in {self.spec.name} must hold {length} values (one per dimension); "
                f"got {len(values)}"
            )
        return values

    def flag(self, name: str) -> bool:
        value = self.raw(name)
        if isinstance(value, str):
            return value.strip().upper() in ("TRUE", "1")
        return bool(value)

    def float32(self, name: str) -> float:
        """A FLOAT field: a float32 in the struct."""
        return float(np.float32(self.raw(name)))

    def floats32(self, name: str) -> tuple[float, ...]:
        value = self.raw(name)
        values = [value] if isinstance(value, int | float) else value
        return tuple(float(np.float32(v)) for v in values)

    def enum(self, name: str) -> str:
        """An enum field's member, short form ("SUM" for DML_REDUCE_FUNCTION_SUM). A number
        names a member by its value (the header's order where the spec gives none)."""
        enum_name = self.spec.field(name).enum
        enum = next(e for e in catalog().common.enums if e.name == enum_name)
        value = self.raw(name)
        members = [m.name for m in enum.members]
        if isinstance(value, int) and not isinstance(value, bool):
            for position, member in enumerate(enum.members):
                if (member.value if member.value is not None else position) == value:
                    return member.name
        else:
            short = str(value).removeprefix(enum.prefix)
            if short in members:
                return short
        raise InvalidOperator(f"{name} in {self.spec.name} must be one of {members}; got {value!r}")

    def scalar(self, name: str, data_type_field: str) -> Any:
        """A DML_SCALAR_UNION field read through its data-type field."""
        return scalar_union(self.raw(name), str(self.raw(data_type_field)))


# ---- operators and their shapes ------------------------------------------------------------

# The inputs of a family operator (logical arrays; lists for tensor arrays), its outputs, and
# the operator: a function of its desc, its inputs and the log of its writes (for cells
# written more than once).
Inputs = Mapping[str, Any]
Outputs = dict[str, Any]
Operator = Callable[[Fields, Inputs, dict[str, WriteLog]], Outputs]


def _core(shape: Sequence[int]) -> tuple[int, ...]:
    """A shape without its leading 1s (DirectML right-aligns sizes)."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def right_aligned(array: np.ndarray, sizes: Sequence[int], f: Fields, field: str) -> np.ndarray:
    """`array` shaped as `sizes`, where the two differ only in leading 1s."""
    if _core(array.shape) != _core(sizes):
        raise InvalidOperator(
            f"{field}.Sizes in {f.spec.name} must be {list(array.shape)} (leading 1s aside), "
            f"as the page's formula gives; got {list(sizes)}"
        )
    return array.reshape(tuple(sizes))


def exact_sizes(array: np.ndarray, f: Fields, field: str) -> np.ndarray:
    """`array`, which must have the field's Sizes."""
    if array.shape != f.sizes(field):
        raise InvalidOperator(
            f"{field}.Sizes in {f.spec.name} must be {list(array.shape)}; "
            f"got {list(f.sizes(field))}"
        )
    return array


def comparison_terms(f: Fields, output: str = "OutputTensor") -> float:
    """KS of a floating output's dot-product rule, as the spec gives it for this desc (a
    reference whose bound is not a plain sum of products divides its allowance by it)."""
    from ..binding import bind_desc

    env = bind_desc(catalog().common, f.spec, f.desc)
    rule: Any = f.spec.checked_semantics.comparison_for(output, "float", "", env)
    return float(rule.terms.evaluate(env))
