"""`dmlspec dispatch`: execute a DxDispatch model (see the DxDispatch Guide) for the operators
dmlspec knows, on any backend, printing resources the way DxDispatch does:
`Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2`.

Resources are buffers initialised from an array, {valueCount, value}, {valueCount, valueStart,
valueDelta}, or a .npy/.bin/.dat file (sourcePath, relative to the model's folder, which it may
not leave unless allowed). A dispatch binds resources to tensor fields; the inputs are read as
the tensor's data type and Sizes from the buffer's start, the outputs written there. A tensor
whose desc has Strides is bound as its buffer (TotalTensorSizeInBytes, else
DMLCalcBufferTensorSize, bytes from the resource's start), which the resource must hold: a
strided output's current contents are its initial buffer, and only its view is written. A
dispatchable's own `bindings` bind inputs at initialization (a tensor flagged
DML_TENSOR_FLAG_OWNED_BY_DML, as in dml_gemm_graph.json): read once, before the first command.

Nothing is allocated before it is checked: a resource holds at most `DMLSPEC_MAX_ELEMENTS`
elements and `DMLSPEC_MAX_BUFFER_BYTES` bytes, all resources together at most
`DMLSPEC_MAX_DISPATCH_BYTES`, files are read only when regular and within that size, values
must fit their data type, and every dispatchable is validated first. A printed resource is
written a chunk at a time, never built as one string.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidOperator, Unsupported
from ..jsonio import JsonReadError, read_json_file
from ..limits import MAX_BUFFER_BYTES, MAX_DISPATCH_BYTES, MAX_ELEMENTS, cut, quote
from ..reference.layout import buffer_elements
from ..safeio import UnsafePath, confine, read_bytes, read_npy

__all__ = ["DispatchError", "run_model", "write_resource"]


class DispatchError(ValueError):
    """A malformed or unrunnable model; the message starts with the JSON pointer."""

    def __init__(self, pointer: str, message: str) -> None:
        # A pointer holds names from the model: quoted where one would print anything but
        # plain text (an escape sequence, a line break) or run long.
        shown = pointer or "/"
        if not shown.isprintable() or len(shown) > 200:
            shown = quote(shown, 200)
        super().__init__(f"{shown}: {message}")


def _numpy_type(name: Any, pointer: str) -> np.dtype[Any]:
    from dmlspec_generated.validators.common import DATA_TYPES

    short = str(name).removeprefix("DML_TENSOR_DATA_TYPE_")
    info = DATA_TYPES.get(short)
    if info is None or info.numpy is None:
        known = ", ".join(k for k, v in DATA_TYPES.items() if v.numpy)
        raise DispatchError(
            pointer, f"initialValuesDataType must be one of {known}; got {quote(name)}"
        )
    numpy_name: str = info.numpy
    return np.dtype(numpy_name)


def _source(folder: Path, path: Any, pointer: str, allow_any_path: bool) -> Path:
    try:
        target = confine(folder, path, "sourcePath", "the model's folder", allow_any_path)
    except UnsafePath as error:
        raise DispatchError(pointer, str(error)) from None
    if not target.exists():  # what exists but is no regular file, reading refuses
        raise DispatchError(pointer, f"no file {quote(path)} beside the model")
    return target


@dataclass(frozen=True)
class _Planned:
    """A resource checked but not yet allocated: the bytes it takes and how to make it."""

    nbytes: int
    make: Callable[[], np.ndarray]


def _read_file(path: Path, pointer: str, limit: int) -> bytes:
    try:
        return read_bytes(path, limit)
    except UnsafePath as error:
        raise DispatchError(pointer, str(error)) from None
    except OSError as error:
        raise DispatchError(pointer, f"cannot read {path}: {error.strerror or error}") from None


def _file_size(path: Path, pointer: str) -> int:
    """A resource file's size, within the limit of one resource; the file is later read only
    up to this size (a file that grows in between is refused)."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DispatchError(pointer, f"cannot read {path}: {error.strerror or error}") from None
    limit = int(MAX_BUFFER_BYTES) + (_NPY_HEADER if path.suffix == ".npy" else 0)
    if size > limit:
        raise DispatchError(
            pointer,
            f"{path.name} holds {size} bytes, over the limit of {limit} per resource "
            f"(set {MAX_BUFFER_BYTES.variable} to raise it)",
        )
    return size


_NPY_HEADER = 4096  # the most a .npy file's header may add to its array's bytes


def _npy(path: Path, pointer: str, size: int) -> np.ndarray:
    """A .npy file's values, flat; never unpickled, never larger than planned."""
    try:
        loaded = read_npy(path, size)
    except UnsafePath as error:
        raise DispatchError(pointer, str(error)) from None
    except OSError as error:
        raise DispatchError(pointer, f"cannot read {path}: {error.strerror or error}") from None
    if loaded.dtype.kind not in "biuf":
        raise DispatchError(pointer, f"{path.name} must hold numbers; it holds {loaded.dtype}")
    return loaded.reshape(-1)


def _raw(path: Path, dtype: np.dtype[Any], pointer: str, size: int) -> np.ndarray:
    data = _read_file(path, pointer, size)
    if len(data) % dtype.itemsize:
        raise DispatchError(
            pointer,
            f"{path.name} holds {len(data)} bytes, not a whole number of {dtype} values "
            f"({dtype.itemsize} bytes each)",
        )
    return np.frombuffer(bytearray(data), dtype=dtype)


def _count(value: Any, dtype: np.dtype[Any], pointer: str) -> int:
    """A valueCount, checked against the limits before anything is allocated."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DispatchError(pointer, f"valueCount must be a positive integer; got {quote(value)}")
    elements, size = int(MAX_ELEMENTS), int(MAX_BUFFER_BYTES)
    if value > elements or value * dtype.itemsize > size:
        raise DispatchError(
            pointer,
            f"valueCount {quote(value)} of {dtype} is over the limit of {elements} elements "
            f"and {size} bytes per resource (set {MAX_ELEMENTS.variable} and "
            f"{MAX_BUFFER_BYTES.variable} to raise it)",
        )
    return value


def _plan(name: str, resource: Any, folder: Path, allow_any_path: bool) -> _Planned:
    """A resource's size and maker: everything checked, nothing allocated or read yet."""
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
        at = f"{where}/sourcePath"
        path = _source(folder, values["sourcePath"], at, allow_any_path)
        size = _file_size(path, at)
        if path.suffix == ".npy":
            return _Planned(size, lambda: _npy(path, at, size))
        if dtype is None:
            raise DispatchError(
                f"{pointer}/initialValuesDataType", "a raw binary file needs initialValuesDataType"
            )
        raw_type = dtype
        return _Planned(size, lambda: _raw(path, raw_type, at, size))
    if dtype is None:
        raise DispatchError(f"{pointer}/initialValuesDataType", "required")
    numbers = dtype
    if isinstance(values, list):
        if not values:
            raise DispatchError(where, "initialValues must not be empty")
        count = _count(len(values), dtype, where)
        converted = [_number(v, dtype, f"{where}/{i}") for i, v in enumerate(values)]

        def listed() -> np.ndarray:
            with np.errstate(over="ignore"):  # a float beyond the type's range is its infinity
                kind = np.float64 if numbers.kind == "f" else object
                return np.array(converted, dtype=kind).astype(numbers)

        return _Planned(count * dtype.itemsize, listed)
    if isinstance(values, Mapping) and "valueCount" in values:
        count = _count(values["valueCount"], dtype, f"{where}/valueCount")
        if "value" in values:
            value = _number(values["value"], dtype, f"{where}/value")

            def filled() -> np.ndarray:
                with np.errstate(over="ignore"):
                    return np.full(count, value, dtype=numbers)

            return _Planned(count * dtype.itemsize, filled)
        if "valueStart" in values and "valueDelta" in values:
            start = _number(values["valueStart"], dtype, f"{where}/valueStart")
            delta = _number(values["valueDelta"], dtype, f"{where}/valueDelta", step=True)
            return _Planned(count * dtype.itemsize, lambda: _sequence(start, delta, count, numbers))
    raise DispatchError(
        where,
        "expected an array, {valueCount, value}, {valueCount, valueStart, valueDelta} "
        "or {sourcePath}",
    )


def _buffers(
    resources: Mapping[str, Any], folder: Path, allow_any_path: bool
) -> dict[str, np.ndarray]:
    """Every resource, allocated only once all of them together fit `DMLSPEC_MAX_DISPATCH_BYTES`
    (each one fitting its own limit is not enough: a model may list thousands)."""
    planned = {name: _plan(name, r, folder, allow_any_path) for name, r in resources.items()}
    limit, total = int(MAX_DISPATCH_BYTES), 0
    for name, plan in planned.items():
        total += plan.nbytes
        if total > limit:
            raise DispatchError(
                f"/resources/{name}",
                f"the resources up to this one take {total} bytes, over the limit of {limit} "
                f"for all resources of a model (set {MAX_DISPATCH_BYTES.variable} to raise it)",
            )
    return {name: plan.make() for name, plan in planned.items()}


def _sequence(start: Any, delta: Any, count: int, dtype: np.dtype[Any]) -> np.ndarray:
    if dtype.kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            floats: np.ndarray = (start + np.arange(count, dtype=np.float64) * delta).astype(dtype)
        return floats
    # Integers wrap as the type does: modulo 2^64 here, then to the type's width.
    wrapped = np.arange(count, dtype=np.uint64) * np.uint64(delta % 2**64) + np.uint64(
        start % 2**64
    )
    return wrapped.astype(dtype)


def _number(value: Any, dtype: np.dtype[Any], pointer: str, step: bool = False) -> Any:
    """A JSON number that `dtype` can hold (a step of an integer sequence may be negative)."""
    if isinstance(value, str) and dtype.kind == "f" and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DispatchError(pointer, f"expected a number; got {quote(value)}")
    if dtype.kind == "f":
        return (
            value
            if isinstance(value, float) or abs(value) < 2**1000
            else math.copysign(math.inf, value)
        )
    if isinstance(value, float):
        if not value.is_integer():  # NaN and infinities included
            raise DispatchError(pointer, f"{dtype} values are integers; got {value!r}")
        value = int(value)
    info = np.iinfo(dtype)
    low, high = (-(2**63), 2**64 - 1) if step else (int(info.min), int(info.max))
    if not low <= value <= high:
        raise DispatchError(
            pointer, f"{quote(value)} is outside the range of {dtype}, [{low}, {high}]"
        )
    return value


PRINT_CHUNK = 1 << 14  # elements formatted at a time: a printed resource is never one string


def write_resource(name: str, buffer: np.ndarray, write: Callable[[str], object]) -> None:
    """One line as DxDispatch prints a buffer, flat and comma-separated, handed to `write` a
    chunk at a time (a resource of 2^28 values would be gigabytes as one string). The name is
    quoted as every name read from input is."""
    write(f"Resource {quote(name)}: ")
    for start in range(0, buffer.size, PRINT_CHUNK):
        part = buffer[start : start + PRINT_CHUNK]
        if buffer.dtype.kind == "f":
            text = ", ".join(f"{float(v):.6g}" for v in part.astype(np.float64))
        else:
            text = ", ".join(str(int(v)) for v in part)
        write(f", {text}" if start else text)
    write("\n")


def _bound(binding: Any, pointer: str) -> tuple[str, int | None, int]:
    """A binding: the resource's name, and an elementStride and elementOffset (DxDispatch's
    advanced binding: a view starting elementOffset elements, of elementStride bytes or the
    resource's element size, into the resource)."""
    if isinstance(binding, str):
        return binding, None, 0
    if isinstance(binding, Mapping) and isinstance(binding.get("name"), str):
        stride, offset = binding.get("elementStride"), binding.get("elementOffset", 0)
        for key, value in (("elementStride", stride), ("elementOffset", offset)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise DispatchError(
                    f"{pointer}/{key}", f"must be a non-negative integer; got {quote(value)}"
                )
        return str(binding["name"]), stride, int(offset)
    raise DispatchError(pointer, 'a binding names a resource (a string or {"name": ...})')


def _check_operator(name: str, dispatchable: Any) -> None:
    """A dispatchable must be valid (at the highest level) before sizes are read from it."""
    from ..validation import validate_operator

    result = validate_operator(dispatchable)
    if not result.valid:
        first = result.violations[0]
        more = len(result.violations) - 1
        raise DispatchError(
            f"/dispatchables/{name}{first.path}",
            f"invalid operator: {first.constraint}: {first.message}"
            + (
                f" (and {more} more problem{'s' if more > 1 else ''}: dmlspec validate shows all)"
                if more
                else ""
            ),
        )


def _output_fields(operator: Mapping[str, Any]) -> set[str]:
    from ..validation import validator_for

    table = validator_for(operator).TABLE  # type: ignore[union-attr]
    return {f.name for f in table.fields if f.kind in ("output_tensor", "output_tensor_array")}


def _initialized(
    name: str, dispatchable: Mapping[str, Any], buffers: dict[str, np.ndarray]
) -> dict[str, Any]:
    """The inputs a dispatchable binds at initialization: its own `bindings` (DxDispatch's
    initializer bindings, how a tensor flagged DML_TENSOR_FLAG_OWNED_BY_DML gets its data, as in
    dml_gemm_graph.json). DxDispatch initializes dispatchables once, after the resources and
    before any command, so their data is read then: later writes to the resource do not reach
    it."""
    bindings = dispatchable.get("bindings")
    if bindings is None:
        return {}
    pointer = f"/dispatchables/{name}"
    outputs = _output_fields(dispatchable)
    if isinstance(bindings, Mapping):
        bound_outputs = sorted(set(bindings) & outputs)
        if bound_outputs:
            raise DispatchError(
                f"{pointer}/bindings/{bound_outputs[0]}",
                "only inputs are bound at initialization; bind outputs in a dispatch command",
            )
    inputs, _ = _bound_fields(dispatchable, bindings, buffers, pointer, outputs)
    return inputs


def _dispatch(
    operator: Mapping[str, Any],
    bindings: Any,
    buffers: dict[str, np.ndarray],
    backend: Any,
    pointer: str,
    initialized: Mapping[str, Any],
) -> None:
    output_fields = _output_fields(operator)
    inputs, outputs = _bound_fields(operator, bindings, buffers, pointer, output_fields)
    twice = sorted(set(inputs) & set(initialized) - output_fields)
    if twice:
        raise DispatchError(
            f"{pointer}/bindings/{twice[0]}",
            f"{twice[0]} is bound at the dispatchable's initialization already",
        )
    inputs.update(initialized)
    _execute(operator, inputs, outputs, buffers, backend, pointer)


def _bound_fields(
    operator: Mapping[str, Any],
    bindings: Any,
    buffers: dict[str, np.ndarray],
    pointer: str,
    output_fields: set[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The data of the tensors `bindings` binds (inputs, and a strided output's initial buffer)
    and where each output goes: field -> (resource, byte offset), a list for a tensor array."""
    if not isinstance(bindings, Mapping):
        raise DispatchError(
            f"{pointer}/bindings", "must be an object mapping tensor fields to resources"
        )
    desc = operator["desc"]
    inputs: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    for field, binding in bindings.items():
        where = f"{pointer}/bindings/{field}"
        tensor = desc.get(field)
        if isinstance(tensor, list):  # a tensor array: one resource binding per item
            if not isinstance(binding, list) or len(binding) != len(tensor):
                raise DispatchError(
                    where,
                    f"{field} is an array of {len(tensor)} tensors: bind a list of "
                    f"{len(tensor)} resources; got {quote(binding)}",
                )
            items = [
                _bind(field, f"{field}[{i}]", b, t, buffers, f"{where}/{i}")
                for i, (b, t) in enumerate(zip(binding, tensor, strict=True))
            ]
            if field in output_fields:
                outputs[field] = [(resource, offset) for resource, offset, _, _ in items]
                if any(strided for _, _, _, strided in items):
                    inputs[field] = [data.copy() for _, _, data, _ in items]
            else:
                inputs[field] = [data for _, _, data, _ in items]
            continue
        if isinstance(binding, list):
            if len(binding) != 1:
                raise DispatchError(where, f"{field} is one tensor: bind one resource")
            binding = binding[0]
        resource, offset, data, strided = _bind(field, field, binding, tensor, buffers, where)
        if field in output_fields:
            outputs[field] = (resource, offset)
            if strided:  # its initial buffer: the elements outside the view must survive
                inputs[field] = data.copy()
        else:
            inputs[field] = data
    return inputs, outputs


def _execute(
    operator: Mapping[str, Any],
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    buffers: dict[str, np.ndarray],
    backend: Any,
    pointer: str,
) -> None:
    try:
        results = backend.run(operator, inputs)
    except (Unsupported, InvalidOperator) as error:
        raise DispatchError(pointer, f"{type(error).__name__}: {cut(str(error))}") from None
    except Exception as error:  # the backend's own failure, told as one line
        raise DispatchError(
            pointer,
            f"backend {quote(getattr(backend, 'name', '?'))} raised {type(error).__name__}: "
            f"{cut(str(error))}",
        ) from None
    for field, bound in outputs.items():
        returned = results.get(field) if isinstance(results, Mapping) else None
        if isinstance(bound, list):
            if not isinstance(returned, list | tuple) or len(returned) != len(bound):
                raise DispatchError(
                    pointer, f"the backend returned no list of {len(bound)} arrays for {field}"
                )
            for i, ((resource, offset), item) in enumerate(zip(bound, returned, strict=True)):
                _write(pointer, f"{field}[{i}]", item, buffers[resource], resource, offset)
        else:
            resource, offset = bound
            _write(pointer, field, returned, buffers[resource], resource, offset)


def _bind(
    field: str,
    label: str,
    binding: Any,
    tensor: Any,
    buffers: dict[str, np.ndarray],
    where: str,
) -> tuple[str, int, np.ndarray, bool]:
    """A tensor bound to a resource: the resource, the byte offset of the view, the tensor's
    data read from there (its buffer if strided), and whether it is strided."""
    resource, stride, element_offset = _bound(binding, where)
    if resource not in buffers:
        raise DispatchError(
            where, f"no resource {quote(resource)} (resources: {quote(', '.join(buffers))})"
        )
    if not isinstance(tensor, Mapping):
        raise DispatchError(where, f"{field} is not a tensor of the dispatchable")
    tensor = tensor.get("Desc", tensor)
    dtype = _numpy_type(tensor["DataType"], where)
    strided = tensor.get("Strides") is not None
    count = buffer_elements(tensor) if strided else math.prod(tensor["Sizes"])
    needed = max(count * dtype.itemsize, int(tensor.get("TotalTensorSizeInBytes") or 0))
    offset = element_offset * (stride if stride is not None else buffers[resource].itemsize)
    raw = buffers[resource].view(np.uint8)[offset:]
    if raw.size < needed:
        why = ""
        if strided:
            why = " for its buffer (the desc gives Strides)"
        elif needed > count * dtype.itemsize:
            why = " (its TotalTensorSizeInBytes)"
        at = f" from byte {offset}" if offset else ""
        raise DispatchError(
            where,
            f"resource {quote(resource)} holds {raw.size} bytes{at}; {label} needs {needed}{why}",
        )
    data = raw[: count * dtype.itemsize].copy().view(dtype)
    return resource, offset, data if strided else data.reshape(tensor["Sizes"]), strided


def _write(
    pointer: str, label: str, returned: Any, buffer: np.ndarray, resource: str, offset: int
) -> None:
    if not isinstance(returned, np.ndarray) or returned.dtype.kind not in "biuf":
        raise DispatchError(
            pointer, f"the backend returned no array of numbers for {label}: {quote(returned)}"
        )
    data = np.ascontiguousarray(returned).reshape(-1).view(np.uint8)
    target = buffer.view(np.uint8)[offset:]
    if data.size > target.size:
        raise DispatchError(
            pointer,
            f"the backend returned {data.size} bytes for {label}; resource "
            f"{quote(resource)} holds {target.size}" + (f" from byte {offset}" if offset else ""),
        )
    target[: data.size] = data


def run_model(
    path: Path,
    backend: Any,
    allow_any_path: bool = False,
    write: Callable[[str], object] | None = None,
) -> None:
    """Execute every command of a DxDispatch model; what it prints goes to `write` (default:
    standard output) in pieces (see `write_resource`)."""
    from ..validation import closest_operator_types, known_operator_types, validator_for

    write = write or sys.stdout.write

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
    buffers = _buffers(resources, folder, allow_any_path)
    dispatchables = model.get("dispatchables", {})
    if not isinstance(dispatchables, Mapping):
        raise DispatchError("/dispatchables", "must be an object")
    for name, dispatchable in dispatchables.items():
        kind = dispatchable.get("type") if isinstance(dispatchable, Mapping) else None
        if validator_for(dispatchable) is None:
            close = closest_operator_types(kind)
            hint = f"; the closest: {', '.join(close)}" if close else ""
            raise DispatchError(
                f"/dispatchables/{name}/type",
                f"dmlspec cannot run {quote(kind)}: it runs {len(known_operator_types())} "
                f"operator types (`dmlspec list` shows them){hint}",
            )
        _check_operator(name, dispatchable)
    initialized = {
        name: _initialized(name, dispatchable, buffers)
        for name, dispatchable in dispatchables.items()
    }
    commands = model.get("commands", [])
    if not isinstance(commands, list):
        raise DispatchError("/commands", "must be an array")
    for i, command in enumerate(commands):
        pointer = f"/commands/{i}"
        kind = command.get("type") if isinstance(command, Mapping) else None
        if kind == "dispatch":
            target = command.get("dispatchable")
            if not isinstance(target, str) or target not in dispatchables:
                raise DispatchError(f"{pointer}/dispatchable", f"no dispatchable {quote(target)}")
            _dispatch(
                dispatchables[target],
                command.get("bindings"),
                buffers,
                backend,
                pointer,
                initialized[target],
            )
        elif kind == "print":
            resource = command.get("resource")
            if not isinstance(resource, str) or resource not in buffers:
                raise DispatchError(f"{pointer}/resource", f"no resource {quote(resource)}")
            write_resource(resource, buffers[resource], write)
        else:
            raise DispatchError(
                f"{pointer}/type", f"dmlspec runs dispatch and print commands; got {quote(kind)}"
            )
