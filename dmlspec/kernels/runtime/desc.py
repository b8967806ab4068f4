"""Descs: the operator desc a kernel call describes (DataType from dtype, Sizes from shape,
defaults and derived outputs from the spec), and its plan, validated once per distinct desc
(cached)."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InvalidOperator
from ...expr import Absent
from ...limits import quote
from ...validation.runtime import TensorView, View
from ...validation.shape import read_desc
from ...validation.tables import CommonTable
from ..layout import Layout
from .cache import _CACHE_LIMIT, _frozen
from .table import Computed, InputLayout, KernelTable, _Output, _Plan


def _data_type_of(common: CommonTable, array: Any) -> str:
    name = np.dtype(array.dtype).name
    for data_type, info in common.data_types.items():
        if info.numpy == name:
            return data_type
    supported = ", ".join(i.numpy for i in common.data_types.values() if i.numpy)
    raise InvalidOperator(f"arrays of dtype {name} have no DirectML data type (known: {supported})")


def _static_value(common: CommonTable, value: Any) -> Any:
    if isinstance(value, list):  # an operator-desc array (RNN's ActivationDescs) item by item
        return tuple(_static_value(common, v) if isinstance(v, TensorView) else v for v in value)
    if isinstance(value, TensorView):  # a struct field (ScaleBias, FusedActivation): hashable
        return tuple(sorted((k, _frozen(v)) for k, v in value.members.items()))
    if isinstance(value, str) and value in common.data_types:
        return common.data_types[value].numpy
    return value


def _view(kernel: KernelTable, desc: Mapping[str, Any]) -> View:
    """A view of a complete, valid desc."""
    read = read_desc(
        kernel.validator.TABLE, kernel.common, {"type": kernel.operator_type, "desc": desc}
    )
    return View(read.values, kernel.validator.TABLE.definitions)


def _partial_view(kernel: KernelTable, desc: Mapping[str, Any]) -> View:
    """A view of a desc being built: tensors may lack members (an output's Sizes, say)."""
    values: dict[str, Any] = {}
    for name, value in desc.items():
        if isinstance(value, Mapping):
            values[name] = _partial_tensor(kernel, name, value)
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            values[name] = [
                _partial_tensor(kernel, f"{name}[{i}]", item) for i, item in enumerate(value)
            ]
        else:
            values[name] = _short(value)
    return View(values, kernel.validator.TABLE.definitions)


def _partial_tensor(kernel: KernelTable, name: str, value: Mapping[str, Any]) -> TensorView:
    members = {k: _short(v) if k == "DataType" else v for k, v in value.items()}
    for member in kernel.common.tensor_members:
        if member.name not in members and member.default is not None:
            try:
                members[member.name] = member.default(TensorView(name, members))
            except LookupError:
                continue
    return TensorView(name, members)


def _short(value: Any) -> Any:
    return value.removeprefix("DML_TENSOR_DATA_TYPE_") if isinstance(value, str) else value


def _tensor_desc(common: CommonTable, array: Any) -> dict[str, Any]:
    return {"DataType": _data_type_of(common, array), "Sizes": list(np.shape(array))}


def build_desc(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Any],
    strided: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The operator desc a kernel call describes: defaults and derived outputs filled in.
    A tensor-array field's value is a list of arrays (its desc a list of tensor descs).
    `strided` gives the descs of inputs passed as buffers (their arrays are 1-D)."""
    desc: dict[str, Any] = {
        name: [_tensor_desc(kernel.common, a) for a in array]
        if isinstance(array, list | tuple)
        else _tensor_desc(kernel.common, array)
        for name, array in arrays.items()
    }
    for name, tensor in (strided or {}).items():
        if isinstance(tensor, list | tuple):
            desc[name] = [
                {**_plain(t), "DataType": d["DataType"]} if t is not None else d
                for t, d in zip(tensor, desc[name], strict=True)
            ]
        else:
            desc[name] = {**_plain(tensor), "DataType": desc[name]["DataType"]}
    desc.update({name: _plain(tensor) for name, tensor in outputs.items()})
    desc.update({name: _plain(value) for name, value in fields.items() if value is not None})
    # What cannot be derived from a malformed call (a 0-d array has no last size) is left
    # out; validating the desc then says what is wrong, as InvalidOperator.
    underivable = (LookupError, TypeError, ValueError, ArithmeticError)
    for name, default in kernel.defaults:
        if desc.get(name) is None:
            with contextlib.suppress(*underivable):
                desc[name] = default(_partial_view(kernel, desc))
    optional = {f.name for f in kernel.validator.TABLE.fields if f.optional}
    for target, derive in kernel.derived:
        owner, _, member = target.partition(".")
        if owner in optional and desc.get(owner) is None:
            continue  # an optional output the call leaves out (MAX_POOLING1's indices)
        if member not in desc.setdefault(owner, {}):
            with contextlib.suppress(*underivable):
                desc[owner][member] = derive(_partial_view(kernel, desc))
    return desc


def _plain(value: Any) -> Any:
    """A desc value with NumPy scalars as the Python numbers they hold (a desc is JSON), in
    nested dicts and lists too; dicts and lists are copied (tuples become lists, as in JSON)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _desc_text(desc: Mapping[str, Any]) -> str:
    """The desc as sorted JSON (the plan's cache key), or InvalidOperator naming the first
    value JSON cannot hold."""
    try:
        return json.dumps(desc, sort_keys=True)
    except (TypeError, ValueError):
        path, value = _first_non_json(desc, "")
        raise InvalidOperator(
            f"{path.lstrip('.')} must be a JSON value (a number, string, boolean, null, list "
            f"or object); got {type(value).__name__} {quote(value)}"
        ) from None


def _first_non_json(value: Any, path: str) -> tuple[str, Any]:
    if isinstance(value, Mapping):
        for key, member in value.items():
            found = _first_non_json(member, f"{path}.{key}")
            if found[0]:
                return found
        return "", None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _first_non_json(item, f"{path}[{i}]")
            if found[0]:
                return found
        return "", None
    if value is None or isinstance(value, str | int | float):
        return "", None
    return path, value


def _dtype_name(kernel: KernelTable, tensor: Mapping[str, Any]) -> str:
    data_type = str(tensor["DataType"]).removeprefix("DML_TENSOR_DATA_TYPE_")
    return kernel.common.data_types[data_type].numpy or ""


@functools.lru_cache(maxsize=_CACHE_LIMIT)
def _plan(kernel: KernelTable, desc_key: str, feature_level: str | None) -> _Plan:
    desc = json.loads(desc_key)
    operator = {"type": kernel.operator_type, "desc": desc}
    result = kernel.validator.validate(operator, feature_level)
    if not result.valid:
        ids = result.fired()
        details = "; ".join(str(v) for v in result.violations)
        raise InvalidOperator(f"invalid {kernel.name} desc ({', '.join(ids)}): {details}", ids)
    view = _view(kernel, desc)
    static = tuple(
        (name, _static_value(kernel.common, _present(compute, view)))
        for name, compute in kernel.static
    )
    outputs: list[_Output] = []
    for field in kernel.outputs:
        tensor = desc.get(field)
        if isinstance(tensor, list):
            items = getattr(view, field)
            outputs += [
                _Output(
                    field, i, tuple(t["Sizes"]), _dtype_name(kernel, t), _item_layout(kernel, v, t)
                )
                for i, (t, v) in enumerate(zip(tensor, items, strict=True))
            ]
        elif tensor is not None:
            outputs.append(
                _Output(
                    field,
                    None,
                    tuple(tensor["Sizes"]),
                    _dtype_name(kernel, tensor),
                    _item_layout(kernel, getattr(view, field), tensor),
                )
            )
    return _Plan(
        static,
        tuple(outputs),
        tuple(desc.get(field) is not None for field in kernel.outputs),  # None: left out
        tuple(
            _layout(kernel, view, desc, field) if field in desc else None
            for _, field in kernel.inputs
        ),
    )


def _present(compute: Computed, view: View) -> Any:
    """A static value, or None where it reads an absent optional field (no ScaleBias)."""
    try:
        return compute(view)
    except Absent:
        return None


def _item_layout(kernel: KernelTable, tensor: TensorView, raw: Mapping[str, Any]) -> Layout | None:
    if raw.get("Strides") is None:
        return None
    bits = kernel.common.data_types[tensor.DataType].bits
    return Layout(
        tuple(tensor.Sizes), tuple(tensor.Strides), tensor.TotalTensorSizeInBytes * 8 // bits
    )


def _layout(kernel: KernelTable, view: View, desc: Mapping[str, Any], field: str) -> InputLayout:
    """The buffer layout of a tensor whose desc gives Strides; None for a packed one. A tensor
    array has one per item (None when no item is strided)."""
    raw = desc[field]
    if isinstance(raw, list):
        items = tuple(
            _item_layout(kernel, tensor, item)
            for tensor, item in zip(getattr(view, field), raw, strict=True)
        )
        return items if any(items) else None
    return _item_layout(kernel, getattr(view, field), raw)
