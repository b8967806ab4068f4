"""`dmlspec dispatch`: execute a DxDispatch model (see the DxDispatch Guide) for the operators
dmlspec knows, on any backend, printing resources the way DxDispatch does:
`Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2`.

Resources are buffers initialised from an array, {valueCount, value}, {valueCount, valueStart,
valueDelta}, or a .npy/.bin/.dat file (sourcePath, relative to the model's folder, which it may
not leave unless allowed). A dispatch binds resources to tensor fields; the inputs are read as
the tensor's data type and Sizes from the buffer's start, the outputs written there. A tensor
whose desc has Strides is bound as its buffer (TotalTensorSizeInBytes, else
DMLCalcBufferTensorSize, bytes from the resource's start), which the resource must hold: a
strided output's current contents are its initial buffer, and only its view is written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from .errors import InvalidOperator, Unsupported
from .jsonio import JsonReadError, read_json_file
from .reference.layout import buffer_elements

__all__ = ["DispatchError", "format_resource", "run_model"]


class DispatchError(ValueError):
    """A malformed or unrunnable model; the message starts with the JSON pointer."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")


def _numpy_type(name: Any, pointer: str) -> np.dtype[Any]:
    from dmlspec_generated.validators.common import DATA_TYPES

    short = str(name).removeprefix("DML_TENSOR_DATA_TYPE_")
    info = DATA_TYPES.get(short)
    if info is None or info.numpy is None:
        known = ", ".join(k for k, v in DATA_TYPES.items() if v.numpy)
        raise DispatchError(pointer, f"initialValuesDataType must be one of {known}; got {name!r}")
    numpy_name: str = info.numpy
    return np.dtype(numpy_name)


def _source(folder: Path, path: Any, pointer: str, allow_any_path: bool) -> Path:
    if not isinstance(path, str) or not path:
        raise DispatchError(pointer, "sourcePath must be a file name")
    relative = PurePosixPath(path)
    if not allow_any_path and (
        relative.is_absolute() or ".." in relative.parts or Path(path).is_absolute()
    ):
        raise DispatchError(
            pointer,
            f"sourcePath {path!r} leaves the model's folder (use --allow-any-path to allow it)",
        )
    target = (folder / path).resolve()
    if not allow_any_path and folder.resolve() not in target.parents:
        raise DispatchError(
            pointer,
            f"sourcePath {path!r} leaves the model's folder (use --allow-any-path to allow it)",
        )
    if not target.is_file():
        raise DispatchError(pointer, f"no file {path!r} beside the model")
    return target


def _buffer(name: str, resource: Any, folder: Path, allow_any_path: bool) -> np.ndarray:
    pointer = f"/resources/{name}"
    if not isinstance(resource, Mapping):
        raise DispatchError(pointer, "a resource must be an object")
    if resource.get("type", "buffer") != "buffer":
        raise DispatchError(f"{pointer}/type", "only buffer resources exist")
    values = resource.get("initialValues")
    dtype = (
        _numpy_type(resource.get("initialValuesDataType"), f"{pointer}/initialValuesDataType")
        if "initialValuesDataType" in resource
        else None
    )
    where = f"{pointer}/initialValues"
    if isinstance(values, Mapping) and "sourcePath" in values:
        path = _source(folder, values["sourcePath"], f"{where}/sourcePath", allow_any_path)
        if path.suffix == ".npy":
            loaded: np.ndarray = np.load(path, allow_pickle=False)
            return loaded.reshape(-1)
        if dtype is None:
            raise DispatchError(
                f"{pointer}/initialValuesDataType", "a raw binary file needs initialValuesDataType"
            )
        return np.fromfile(path, dtype=dtype)
    if dtype is None:
        raise DispatchError(f"{pointer}/initialValuesDataType", "required")
    if isinstance(values, list):
        if not values:
            raise DispatchError(where, "initialValues must not be empty")
        converted = [_number(v, dtype, f"{where}/{i}") for i, v in enumerate(values)]
        return np.array(converted, dtype=np.float64 if dtype.kind == "f" else object).astype(dtype)
    if (
        isinstance(values, Mapping)
        and isinstance(values.get("valueCount"), int)
        and values["valueCount"] > 0
    ):
        count = values["valueCount"]
        if "value" in values:
            return np.full(count, _number(values["value"], dtype, f"{where}/value"), dtype=dtype)
        if "valueStart" in values and "valueDelta" in values:
            start = _number(values["valueStart"], dtype, f"{where}/valueStart")
            delta = _number(values["valueDelta"], dtype, f"{where}/valueDelta")
            kind = np.float64 if dtype.kind == "f" else np.int64
            sequence: np.ndarray = (start + np.arange(count, dtype=kind) * delta).astype(dtype)
            return sequence
    raise DispatchError(
        where,
        "expected an array, {valueCount, value}, {valueCount, valueStart, valueDelta} "
        "or {sourcePath}",
    )


def _number(value: Any, dtype: np.dtype[Any], pointer: str) -> Any:
    if isinstance(value, str) and dtype.kind == "f" and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DispatchError(pointer, f"expected a number; got {value!r}")
    return value


def format_resource(name: str, buffer: np.ndarray) -> str:
    """One line as DxDispatch prints a buffer: flat, comma-separated."""
    if buffer.dtype.kind == "f":
        shown = [f"{float(v):.6g}" for v in buffer.astype(np.float64)]
    else:
        shown = [str(int(v)) for v in buffer]
    return f"Resource '{name}': {', '.join(shown)}"


def _bound(binding: Any, pointer: str) -> str:
    if isinstance(binding, str):
        return binding
    if isinstance(binding, Mapping) and isinstance(binding.get("name"), str):
        return str(binding["name"])
    raise DispatchError(pointer, 'a binding names a resource (a string or {"name": ...})')


def _dispatch(
    operator: Mapping[str, Any],
    bindings: Any,
    buffers: dict[str, np.ndarray],
    backend: Any,
    pointer: str,
) -> None:
    if not isinstance(bindings, Mapping):
        raise DispatchError(
            f"{pointer}/bindings", "must be an object mapping tensor fields to resources"
        )
    from .validation import validator_for

    desc = operator["desc"]
    table = validator_for(operator).TABLE  # type: ignore[union-attr]
    output_fields = {f.name for f in table.fields if f.kind == "output_tensor"}
    inputs = {}
    outputs = {}
    for field, binding in bindings.items():
        resource = _bound(binding, f"{pointer}/bindings/{field}")
        if resource not in buffers:
            raise DispatchError(
                f"{pointer}/bindings/{field}",
                f"no resource {resource!r} (resources: {', '.join(buffers)})",
            )
        tensor = desc.get(field)
        if not isinstance(tensor, Mapping):
            raise DispatchError(
                f"{pointer}/bindings/{field}", f"{field} is not a tensor of the dispatchable"
            )
        tensor = tensor.get("Desc", tensor)
        dtype = _numpy_type(tensor["DataType"], f"{pointer}/bindings/{field}")
        strided = tensor.get("Strides") is not None
        count = buffer_elements(tensor) if strided else math.prod(tensor["Sizes"])
        needed = max(count * dtype.itemsize, int(tensor.get("TotalTensorSizeInBytes") or 0))
        raw = buffers[resource].view(np.uint8)
        if raw.size < needed:
            why = ""
            if strided:
                why = " for its buffer (the desc gives Strides)"
            elif needed > count * dtype.itemsize:
                why = " (its TotalTensorSizeInBytes)"
            raise DispatchError(
                f"{pointer}/bindings/{field}",
                f"resource {resource!r} holds {raw.size} bytes; {field} needs {needed}{why}",
            )
        data = raw[: count * dtype.itemsize].view(dtype)
        if field in output_fields:
            outputs[field] = resource
            if strided:  # its initial buffer: the elements outside the view must survive
                inputs[field] = data.copy()
        else:
            inputs[field] = data.copy() if strided else data.reshape(tensor["Sizes"])
    try:
        results = backend.run(operator, inputs)
    except (Unsupported, InvalidOperator) as error:
        raise DispatchError(pointer, f"{type(error).__name__}: {error}") from None
    for field, resource in outputs.items():
        data = np.ascontiguousarray(results[field]).reshape(-1).view(np.uint8)
        target = buffers[resource].view(np.uint8)
        target[: data.size] = data


def run_model(
    path: Path, backend: Any, allow_any_path: bool = False, write: Callable[[str], None] = print
) -> None:
    """Execute every command of a DxDispatch model."""
    from .validation import known_operator_types, validator_for

    try:
        model = read_json_file(path)
    except JsonReadError as error:
        raise DispatchError("", str(error)) from None
    if not isinstance(model, Mapping):
        raise DispatchError(
            "", "a DxDispatch model is an object with resources, dispatchables and commands"
        )
    folder = path.parent
    resources = model.get("resources", {})
    if not isinstance(resources, Mapping):
        raise DispatchError("/resources", "must be an object")
    buffers = {name: _buffer(name, r, folder, allow_any_path) for name, r in resources.items()}
    dispatchables = model.get("dispatchables", {})
    if not isinstance(dispatchables, Mapping):
        raise DispatchError("/dispatchables", "must be an object")
    for name, dispatchable in dispatchables.items():
        kind = dispatchable.get("type") if isinstance(dispatchable, Mapping) else None
        if validator_for(dispatchable) is None:
            known = ", ".join(known_operator_types())
            raise DispatchError(
                f"/dispatchables/{name}/type", f"dmlspec cannot run {kind!r} yet (it runs {known})"
            )
    commands = model.get("commands", [])
    if not isinstance(commands, list):
        raise DispatchError("/commands", "must be an array")
    for i, command in enumerate(commands):
        pointer = f"/commands/{i}"
        kind = command.get("type") if isinstance(command, Mapping) else None
        if kind == "dispatch":
            target = command.get("dispatchable")
            if target not in dispatchables:
                raise DispatchError(f"{pointer}/dispatchable", f"no dispatchable {target!r}")
            _dispatch(dispatchables[target], command.get("bindings"), buffers, backend, pointer)
        elif kind == "print":
            resource = command.get("resource")
            if resource not in buffers:
                raise DispatchError(f"{pointer}/resource", f"no resource {resource!r}")
            write(format_resource(str(resource), buffers[str(resource)]))
        else:
            raise DispatchError(
                f"{pointer}/type", f"dmlspec runs dispatch and print commands; got {kind!r}"
            )
