"""Check the JSON shape of an operator (DxDispatch's dispatchable) and read it into views.

Everything that can be read is read, even when other parts are malformed: a missing or
malformed field is left out (rules that read it do not apply) and reported here, so one run
reports every problem.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_DIMENSIONS, quote
from .result import Violation
from .runtime import TensorView
from .tables import CommonTable, FieldInfo, OperatorTable

__all__ = ["ReadDesc", "operator_type_of", "read_desc"]

# DxDispatch's dispatchable keys; "bindings" binds OWNED_BY_DML inputs at initialization.
OPERATOR_KEYS = ("type", "desc", "executionFlags", "dmlCompileType", "bindings")
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
_INT_RANGES = {
    "uint": (0, UINT32_MAX),
    "uint64": (0, UINT64_MAX),
    "int": (-(2**31), 2**31 - 1),
}
_ARRAY_ITEMS = {"uint_array": "uint", "int_array": "int", "float_array": "float"}
_STRUCTS = {
    "scale_bias": ("DML_SCALE_BIAS", (("Scale", "float"), ("Bias", "float"))),
    "size_2d": ("DML_SIZE_2D", (("Width", "uint"), ("Height", "uint"))),
}
_DATA_TYPE_ENUM = "DML_TENSOR_DATA_TYPE"


@dataclass
class ReadDesc:
    values: dict[str, Any] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    def fail(self, check: str, path: str, message: str) -> None:
        if len(path) > 200:  # a pointer through hostile keys: cut, as quoted values are
            path = f"{path[:200]}..."
        self.violations.append(Violation(f"JSON.{check}", path, message))


def _json_type(value: object) -> str:
    names = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def operator_type_of(operator: object) -> str | None:
    """The DML_OPERATOR_* name an operator JSON declares, prefix added, or None."""
    if isinstance(operator, Mapping) and isinstance(operator.get("type"), str):
        name = operator["type"]
        return name if name.startswith("DML_OPERATOR_") else f"DML_OPERATOR_{name}"
    return None


def enum_member(common: CommonTable, enum: str, value: object) -> str | None:
    prefix, members = common.enums[enum]
    if isinstance(value, str):
        short = value.removeprefix(prefix)
        if short in members:
            return short
    return None


def read_desc(table: OperatorTable, common: CommonTable, operator: object) -> ReadDesc:
    read = ReadDesc()
    if not isinstance(operator, Mapping):
        read.fail(
            "type",
            "",
            f"an operator must be a JSON object with 'type' and 'desc'; got {_json_type(operator)}",
        )
        return read
    for key in operator:
        if key not in OPERATOR_KEYS:
            read.fail(
                "unknown_field",
                f"/{key}",
                f"unknown key {quote(key)} (allowed: {', '.join(OPERATOR_KEYS)})",
            )
    declared = operator_type_of(operator)
    if declared is None:
        read.fail(
            "required_field",
            "/type",
            f"'type' must be a string naming the operator, e.g. {table.operator_types[0]!r}",
        )
    elif declared not in table.operator_types:
        read.fail(
            "operator_type",
            "/type",
            f"expected {' or '.join(table.operator_types)}; got {quote(operator['type'])}",
        )
    desc = operator.get("desc")
    if not isinstance(desc, Mapping):
        read.fail(
            "required_field" if desc is None else "type",
            "/desc",
            f"'desc' must be an object holding the {table.name} fields; got {_json_type(desc)}",
        )
        return read
    _unknown_keys(read, desc, [f.name for f in table.fields], "/desc", table.name, "field")
    for info in table.fields:
        path = f"/desc/{info.name}"
        if info.name not in desc or (info.optional and desc[info.name] is None):
            if not info.optional:
                read.fail(
                    "required_field",
                    path,
                    f"{table.name} requires the field {info.name} ({_describe(info)})",
                )
            continue
        value = _read_field(info, desc[info.name], common, read, path)
        if value is not None:
            read.values[info.name] = value
    _check_counts(table, read)
    _non_finite_integers(table, common, read)
    return read


def _check_counts(table: OperatorTable, read: ReadDesc) -> None:
    """An array sized by a count field (`_Field_size_(Count)`) must have Count items."""
    for info in table.fields:
        items = read.values.get(info.name)
        count = read.values.get(info.count_field or "")
        if info.count_field is None or not isinstance(items, list) or not isinstance(count, int):
            continue
        if len(items) != count:
            read.fail(
                "array_count",
                f"/desc/{info.name}",
                f"{info.name} must have {info.count_field} ({count}) items; got {len(items)}",
            )


def _non_finite_integers(table: OperatorTable, common: CommonTable, read: ReadDesc) -> None:
    """A scalar union read as an integer type must be finite (NaN has no INT32 value)."""
    for info in table.fields:
        value = read.values.get(info.name)
        if info.kind != "scalar_union" or not isinstance(value, float) or math.isfinite(value):
            continue
        data_type = read.values.get(info.value_type_field or "")
        known = common.data_types.get(data_type) if isinstance(data_type, str) else None
        if known is not None and known.kind in ("signed", "unsigned"):
            read.fail(
                "type",
                f"/desc/{info.name}",
                f"{info.name} must be a finite number when {info.value_type_field} is "
                f"{data_type} (an integer type); got {value!r}",
            )
            del read.values[info.name]


def _unknown_keys(
    read: ReadDesc, given: Mapping[str, Any], known: list[str], path: str, owner: str, kind: str
) -> None:
    """`{owner} has no {kind} 'X' ({kind}s: A, B)` for each key that is not known."""
    for key in given:
        if key not in known:
            message = f"{owner} has no {kind} {quote(key)} ({kind}s: {', '.join(known)})"
            read.fail("unknown_field", f"{path}/{key}", message)


def _describe(info: FieldInfo) -> str:
    return {
        "input_tensor": "an input tensor desc",
        "output_tensor": "an output tensor desc",
        "uint": "a UINT",
        "int": "an INT",
        "float": "a FLOAT",
        "bool": "a BOOL",
        "enum": f"a {info.enum} value",
        "data_type": "a DML_TENSOR_DATA_TYPE",
        "scalar_union": f"a number read as {info.value_type_field}",
        "uint64": "a UINT64",
        "input_tensor_array": f"an array of {info.count_field} input tensor descs",
        "output_tensor_array": f"an array of {info.count_field} output tensor descs",
        "uint_array": f"an array of {info.count_field} UINTs",
        "int_array": f"an array of {info.count_field} INTs",
        "float_array": f"an array of {info.count_field} FLOATs",
        "scale_bias": "a DML_SCALE_BIAS object {Scale, Bias}",
        "size_2d": "a DML_SIZE_2D object {Width, Height}",
        "operator_desc": f"an operator desc of {info.operator_set}",
        "operator_desc_array": f"an array of {info.count_field} operator descs",
    }[info.kind]


def _read_list(
    info: FieldInfo, raw: object, read: ReadDesc, path: str, item: Any
) -> list[Any] | None:
    """Each item read by `item(index, value, path)`; None when `raw` is not a list."""
    if not isinstance(raw, list):
        read.fail("type", path, f"{info.name} must be a JSON array; got {_json_type(raw)}")
        return None
    values = [item(i, value, f"{path}/{i}") for i, value in enumerate(raw)]
    return None if any(v is None for v in values) else values


def _read_field(
    info: FieldInfo, raw: object, common: CommonTable, read: ReadDesc, path: str
) -> Any:
    if info.is_tensor:
        return _read_tensor(info.name, raw, common, read, path)
    if info.is_tensor_array:
        return _read_list(
            info,
            raw,
            read,
            path,
            lambda i, v, p: _read_tensor(f"{info.name}[{i}]", v, common, read, p),
        )
    if info.kind in _ARRAY_ITEMS:
        scalar = FieldInfo(info.name, _ARRAY_ITEMS[info.kind], optional=False)
        return _read_list(
            info,
            raw,
            read,
            path,
            lambda i, v, p: _read_field(
                FieldInfo(f"{info.name}[{i}]", scalar.kind, False), v, common, read, p
            ),
        )
    if info.kind in _STRUCTS:
        return _read_struct(info, raw, common, read, path)
    if info.kind == "operator_desc":
        return _read_operator_desc(info, info.name, raw, common, read, path)
    if info.kind == "operator_desc_array":
        return _read_list(
            info,
            raw,
            read,
            path,
            lambda i, v, p: _read_operator_desc(info, f"{info.name}[{i}]", v, common, read, p),
        )
    if info.kind in _INT_RANGES:
        low, high = _INT_RANGES[info.kind]
        if not isinstance(raw, int) or isinstance(raw, bool) or not low <= raw <= high:
            read.fail(
                "type", path, f"{info.name} must be an integer in [{low}, {high}]; got {quote(raw)}"
            )
            return None
        return raw
    if info.kind in ("enum", "data_type"):
        enum = info.enum if info.kind == "enum" else _DATA_TYPE_ENUM
        member = enum_member(common, enum or "", raw)
        if member is None:
            prefix, members = common.enums[enum or ""]
            read.fail(
                "enum_value",
                path,
                f"{info.name} must be one of {', '.join(members)} "
                f"(with or without {prefix}); got {quote(raw)}",
            )
        return member
    if info.kind == "bool":
        if not isinstance(raw, bool):
            read.fail("type", path, f"{info.name} must be true or false; got {quote(raw)}")
            return None
        return raw
    # float and scalar_union: a JSON number
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        read.fail("type", path, f"{info.name} must be a number; got {_json_type(raw)} {quote(raw)}")
        return None
    return raw


def _read_struct(
    info: FieldInfo, raw: object, common: CommonTable, read: ReadDesc, path: str
) -> TensorView | None:
    struct, members = _STRUCTS[info.kind]
    if not isinstance(raw, Mapping):
        read.fail("type", path, f"{info.name} must be a {struct} object; got {_json_type(raw)}")
        return None
    _unknown_keys(read, raw, [name for name, _ in members], path, struct, "member")
    values: dict[str, Any] = {}
    for name, kind in members:
        if name not in raw:
            read.fail("required_field", f"{path}/{name}", f"{info.name} needs {name}")
            continue
        value = _read_field(
            FieldInfo(f"{info.name}.{name}", kind, False), raw[name], common, read, f"{path}/{name}"
        )
        if value is not None:
            values[name] = value
    return TensorView(info.name, values) if len(values) == len(members) else None


def _read_operator_desc(
    info: FieldInfo, label: str, raw: object, common: CommonTable, read: ReadDesc, path: str
) -> TensorView | None:
    """`{"Type": "ACTIVATION_ELU", "Alpha": 0.5}` or `{"Type": ..., "Desc": {...}}`."""
    allowed = common.operator_sets.get(info.operator_set or "", ())
    if not isinstance(raw, Mapping) or not isinstance(raw.get("Type"), str):
        read.fail(
            "type",
            path,
            f"{label} must be an operator desc object with a 'Type' "
            f"(one of {', '.join(allowed)}); got {_json_type(raw)}",
        )
        return None
    short = raw["Type"].removeprefix("DML_OPERATOR_")
    if short not in allowed:
        read.fail(
            "operator_type",
            f"{path}/Type",
            f"{label}.Type must be one of {', '.join(allowed)} ({info.operator_set}); "
            f"got {raw['Type']!r}",
        )
        return None
    if "Desc" in raw:
        extra = [k for k in raw if k not in ("Type", "Desc")]
        for key in extra:
            read.fail(
                "unknown_field", f"{path}/{key}", f"{label} in long form has only Type and Desc"
            )
        body, where = raw["Desc"], f"{path}/Desc"
        if not isinstance(body, Mapping):
            read.fail("type", where, f"{label}.Desc must be an object; got {_json_type(body)}")
            return None
    else:
        body, where = {k: v for k, v in raw.items() if k != "Type"}, path
    from dmlspec_generated.validators import VALIDATORS  # generated; imported when first needed

    nested = VALIDATORS[f"DML_OPERATOR_{short}"].TABLE
    values: dict[str, Any] = {"Type": short}
    attributes = [f for f in nested.fields if not (f.is_tensor or f.is_tensor_array)]
    _unknown_keys(
        read,
        {k: v for k, v in body.items() if not _is_null_tensor(nested, k, v)},
        [f.name for f in attributes],
        where,
        f"a fused {short}",
        "field",
    )
    for field_info in attributes:
        if field_info.name not in body:
            if not field_info.optional:
                read.fail(
                    "required_field",
                    f"{where}/{field_info.name}",
                    f"{label} ({short}) requires the field {field_info.name}",
                )
            continue
        value = _read_field(
            field_info, body[field_info.name], common, read, f"{where}/{field_info.name}"
        )
        if value is not None:
            values[field_info.name] = value
    return TensorView(label, values)


def _is_null_tensor(table: OperatorTable, key: str, value: object) -> bool:
    """A fused activation's own tensors are left out or null (the guide says NULL)."""
    return value is None and any(f.name == key and f.is_tensor for f in table.fields)


def _read_tensor(
    name: str, raw: object, common: CommonTable, read: ReadDesc, path: str
) -> TensorView | None:
    if isinstance(raw, Mapping) and "Desc" in raw:  # DxDispatch's long form
        kind = raw.get("Type", "DML_TENSOR_TYPE_BUFFER")
        if kind not in ("DML_TENSOR_TYPE_BUFFER", "BUFFER"):
            read.fail(
                "enum_value",
                f"{path}/Type",
                f"only DML_TENSOR_TYPE_BUFFER tensors exist; got {quote(kind)}",
            )
            return None
        extra = [k for k in raw if k not in ("Type", "Desc")]
        for key in extra:
            read.fail(
                "unknown_field",
                f"{path}/{key}",
                f"a tensor desc in long form has only Type and Desc; got {quote(key)}",
            )
        raw, path = raw["Desc"], f"{path}/Desc"
    if not isinstance(raw, Mapping):
        read.fail("type", path, f"{name} must be a tensor desc object; got {_json_type(raw)}")
        return None
    members_known = [m.name for m in common.tensor_members]
    _unknown_keys(read, raw, members_known, path, "a tensor desc", "member")
    members: dict[str, Any] = {}
    complete = True
    for member in common.tensor_members:
        where = f"{path}/{member.name}"
        if member.name not in raw:
            if not member.optional:
                read.fail("required_field", where, f"{name} needs {member.name}")
                complete = False
            continue
        value = _read_member(
            member.type, raw[member.name], common, read, where, f"{name}.{member.name}"
        )
        if value is None:
            complete = complete and member.optional
            continue
        members[member.name] = value
    if not complete:
        return None
    # Defaults may read any given member and the defaults before them (struct order).
    for member in common.tensor_members:
        if member.name not in members and member.default is not None:
            with contextlib.suppress(LookupError):
                members[member.name] = member.default(TensorView(name, members))
    return TensorView(name, members)


def _read_member(
    kind: str, raw: object, common: CommonTable, read: ReadDesc, path: str, label: str
) -> Any:
    if kind == "list":
        # Bounded before anything is computed from it: strides and sizes of a long list are
        # numbers with as many bits as the list has entries.
        limit = int(MAX_DIMENSIONS)
        if isinstance(raw, list) and len(raw) > limit:
            read.fail(
                "type",
                path,
                f"{label} may have at most {limit} entries (DirectML tensors have at most 8 "
                f"dimensions; {MAX_DIMENSIONS.variable} sets this limit); got {len(raw)}",
            )
            return None
        if not isinstance(raw, list) or not all(_is_int(v) and 0 <= v <= UINT32_MAX for v in raw):
            read.fail("type", path, f"{label} must be an array of UINTs; got {quote(raw)}")
            return None
        return list(raw)
    if kind == "int":
        if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= UINT64_MAX:
            read.fail("type", path, f"{label} must be a non-negative integer; got {quote(raw)}")
            return None
        return raw
    enum_kind, _, enum = kind.partition(" ")
    prefix, members = common.enums[enum]
    if enum_kind == "enum":
        member = enum_member(common, enum, raw)
        if member is None:
            read.fail(
                "enum_value",
                path,
                f"{label} must be one of {', '.join(members)} "
                f"(with or without {prefix}); got {quote(raw)}",
            )
        return member
    # flags: "A|B", a single name, or a list of names
    names = raw if isinstance(raw, list) else str(raw).split("|") if isinstance(raw, str) else None
    flags = [
        enum_member(common, enum, n.strip() if isinstance(n, str) else n) for n in names or [None]
    ]
    if names is None or None in flags:
        read.fail(
            "enum_value",
            path,
            f"{label} must name flags of {', '.join(members)}; got {quote(raw)}",
        )
        return None
    return frozenset(f for f in flags if f is not None)
