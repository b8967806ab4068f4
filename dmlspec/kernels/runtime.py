"""What the generated kernel modules run: desc building, cached validation, jitted calls.

A call builds the operator desc from the arrays (DataType from dtype, Sizes from shape) and the
keyword fields (defaults and derived outputs compiled from the spec), validates it once per
distinct desc (cached), and calls the primitive jitted with its static parameters. 64-bit
types are computed exactly: calls run under `jax.enable_x64(True)`, scoped to the call, so
users set no global flag and their own defaults do not change.

Strided tensors (a desc with Strides) are passed as 1-D buffers; the plan of a desc records
their `Layout`s and the jitted function reads them into logical views and writes the result
into the output's buffer (dmlspec.kernels.layout). Packed tensors have no Layout, so their
path is unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np

from ..errors import InvalidOperator
from ..expr import Absent
from ..validation.runtime import TensorView, View
from ..validation.shape import read_desc
from ..validation.tables import CommonTable
from .layout import Layout, read_view, write_view

__all__ = ["KernelTable", "call_kernel", "run_operator", "trace_count"]

Computed = Callable[[View], Any]
_CACHE_LIMIT = 4096
_traces = 0


def trace_count() -> int:
    """How many times any kernel has been traced (compiled) in this process."""
    return _traces


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
    output: str
    donate: str | None = None


@dataclass(frozen=True)
class _Plan:
    """What one distinct desc compiles to."""

    static: tuple[tuple[str, Any], ...]
    output_sizes: tuple[int, ...]
    output_dtype: str
    layouts: tuple[Layout | None, ...] = ()  # per primitive input; None: passed logical
    output_layout: Layout | None = None

    @property
    def output_shape(self) -> tuple[int, ...]:
        """What the call returns: the logical output, or a strided output's whole buffer."""
        if self.output_layout is None:
            return self.output_sizes
        return (self.output_layout.elements,)


def _data_type_of(common: CommonTable, array: Any) -> str:
    name = np.dtype(array.dtype).name
    for data_type, info in common.data_types.items():
        if info.numpy == name:
            return data_type
    supported = ", ".join(i.numpy for i in common.data_types.values() if i.numpy)
    raise InvalidOperator(f"arrays of dtype {name} have no DirectML data type (known: {supported})")


def _static_value(common: CommonTable, value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
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
        if not isinstance(value, Mapping):
            values[name] = _short(value)
            continue
        members = {k: _short(v) if k == "DataType" else v for k, v in value.items()}
        for member in kernel.common.tensor_members:
            if member.name not in members and member.default is not None:
                try:
                    members[member.name] = member.default(TensorView(name, members))
                except LookupError:
                    continue
        values[name] = TensorView(name, members)
    return View(values, kernel.validator.TABLE.definitions)


def _short(value: Any) -> Any:
    return value.removeprefix("DML_TENSOR_DATA_TYPE_") if isinstance(value, str) else value


def build_desc(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Mapping[str, Any]],
    strided: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The operator desc a kernel call describes: defaults and derived outputs filled in.
    `strided` gives the descs of inputs passed as buffers (their arrays are 1-D)."""
    desc: dict[str, Any] = {
        name: {"DataType": _data_type_of(kernel.common, array), "Sizes": list(np.shape(array))}
        for name, array in arrays.items()
    }
    for name, tensor in (strided or {}).items():
        desc[name] = {**dict(tensor), "DataType": desc[name]["DataType"]}
    desc.update({name: dict(tensor) for name, tensor in outputs.items()})
    desc.update({name: value for name, value in fields.items() if value is not None})
    # What cannot be derived from a malformed call (a 0-d array has no last size) is left
    # out; validating the desc then says what is wrong, as InvalidOperator.
    underivable = (LookupError, TypeError, ValueError, ArithmeticError)
    for name, default in kernel.defaults:
        if desc.get(name) is None:
            with contextlib.suppress(*underivable):
                desc[name] = default(_partial_view(kernel, desc))
    for target, derive in kernel.derived:
        owner, _, member = target.partition(".")
        if member not in desc.setdefault(owner, {}):
            with contextlib.suppress(*underivable):
                desc[owner][member] = derive(_partial_view(kernel, desc))
    return desc


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
    output = desc[kernel.output]
    return _Plan(
        static,
        tuple(output["Sizes"]),
        kernel.common.data_types[output["DataType"].removeprefix("DML_TENSOR_DATA_TYPE_")].numpy
        or "",
        tuple(
            _layout(kernel, view, desc, field) if field in desc else None
            for _, field in kernel.inputs
        ),
        _layout(kernel, view, desc, kernel.output),
    )


def _present(compute: Computed, view: View) -> Any:
    """A static value, or None where it reads an absent optional field (no ScaleBias)."""
    try:
        return compute(view)
    except Absent:
        return None


def _layout(kernel: KernelTable, view: View, desc: Mapping[str, Any], field: str) -> Layout | None:
    """The buffer layout of a tensor whose desc gives Strides; None for a packed one."""
    if desc[field].get("Strides") is None:
        return None
    tensor = getattr(view, field)
    bits = kernel.common.data_types[tensor.DataType].bits
    return Layout(
        tuple(tensor.Sizes), tuple(tensor.Strides), tensor.TotalTensorSizeInBytes * 8 // bits
    )


CACHE_VARIABLE = "DMLSPEC_JAX_CACHE"  # a folder, or "off"


@functools.cache
def enable_compilation_cache() -> Path | None:
    """Turn on JAX's persistent compilation cache, once: $DMLSPEC_JAX_CACHE, else
    $XDG_CACHE_HOME/dmlspec/jax (~/.cache/dmlspec/jax). "off" leaves it off, and a cache folder
    the user already gave JAX is kept."""
    setting = os.environ.get(CACHE_VARIABLE, "")
    config: Any = jax.config  # JAX's config object is untyped
    if setting.lower() == "off" or config.jax_compilation_cache_dir:
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = Path(setting) if setting else base / "dmlspec" / "jax"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: run uncached
    config.update("jax_compilation_cache_dir", str(folder))
    config.update("jax_persistent_cache_min_compile_time_secs", 0)
    config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


@functools.cache
def _jitted(
    primitive: Callable[..., jax.Array],
    static: tuple[tuple[str, Any], ...],
    shape: tuple[int, ...],
    dtype: str,
    donate: tuple[int, ...],
    with_out: bool,
    layouts: tuple[Layout | None, ...] = (),
    output_layout: Layout | None = None,
    present: tuple[bool, ...] = (),
) -> Callable[..., jax.Array]:
    """The primitive jitted with its static parameters, result shape and dtype bound. With
    `with_out` it takes one more argument, the buffer the result is written into: unused for a
    packed output, the initial buffer of a strided one. Inputs with a Layout arrive as buffers
    and are read into their logical views first."""
    parameters = dict(static)

    def traced(*arrays: jax.Array) -> jax.Array:
        global _traces
        _traces += 1  # runs only while tracing
        inputs: tuple[Any, ...] = arrays[:-1] if with_out else arrays
        if present:  # optional inputs left out: None in their places
            given = iter(inputs)
            inputs = tuple(next(given) if p else None for p in present)
        if any(layouts):
            inputs = tuple(
                a if layout is None or a is None else read_view(a, layout)
                for a, layout in zip(inputs, layouts, strict=True)
            )
        result = primitive(*inputs, **parameters).reshape(shape).astype(dtype)
        if output_layout is not None:
            return write_view(arrays[-1], result, output_layout)
        return result

    # keep_unused: an unused donated `out` would otherwise be pruned, and its buffer with it.
    return jax.jit(traced, donate_argnums=donate, keep_unused=with_out)


def _frozen(value: Any) -> Any:
    """A hashable copy of nested dicts and lists."""
    if isinstance(value, dict | Mapping):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) if isinstance(v, dict | list | tuple) else v for v in value)
    return value


def _prepare(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Mapping[str, Any]],
    feature_level: str | None,
    donate: bool,
    out: Any,
    strided: Mapping[str, Mapping[str, Any]] | None = None,
    present: tuple[bool, ...] = (),
) -> Callable[..., jax.Array]:
    """The slow path, once per call signature: build and validate the desc, plan, jit."""
    desc = build_desc(kernel, arrays, fields, outputs, strided)
    plan = _plan(kernel, json.dumps(desc, sort_keys=True), feature_level)
    for (_, field), layout in zip(kernel.inputs, plan.layouts, strict=True):
        if layout is not None and np.shape(arrays[field]) != (layout.elements,):
            raise InvalidOperator(
                f"{field} has Strides, so it is passed as its buffer: a 1-D array of "
                f"{layout.elements} elements (TotalTensorSizeInBytes / element size); "
                f"got shape {list(np.shape(arrays[field]))}"
            )
    donated: list[int] = []
    if donate and kernel.donate is not None:
        donated.append(
            [field for _, field in kernel.inputs if field in arrays].index(kernel.donate)
        )
    if out is None and plan.output_layout is not None:
        raise InvalidOperator(
            f"{kernel.output} has Strides: pass its initial buffer ({plan.output_layout.elements} "
            f"elements), which the result is written into"
        )
    if out is not None:
        actual = (tuple(out.shape), np.dtype(out.dtype).name)
        if actual != (plan.output_shape, plan.output_dtype):
            what = "shaped and typed as" if plan.output_layout is None else "the buffer of"
            raise ValueError(
                f"out must be {what} {kernel.output}: shape {plan.output_shape} "
                f"and dtype {plan.output_dtype}; got shape {actual[0]} and dtype {actual[1]}"
            )
        donated.append(len(arrays))
    enable_compilation_cache()
    return _jitted(
        kernel.primitive,
        plan.static,
        plan.output_sizes,
        plan.output_dtype,
        tuple(donated),
        out is not None,
        plan.layouts,
        plan.output_layout,
        present if not all(present) else (),
    )


_calls: dict[tuple[Any, ...], Callable[..., jax.Array]] = {}


def call_kernel(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    feature_level: str | None = None,
    donate: bool = False,
    out: Any = None,
    strided: Mapping[str, Mapping[str, Any]] | None = None,
) -> jax.Array:
    """Validate (once per call signature) and run the jitted primitive; return the output.

    `out`, a jax.Array shaped and typed like the output, is donated: the result is written
    into its buffer, which saves allocating (and page-faulting) a fresh one. `strided` gives
    the descs of inputs passed as 1-D buffers (descs with Strides); an output whose desc (in
    `outputs`) has Strides needs `out`, its initial buffer, and the whole buffer is returned
    with only the view written."""
    # An optional input left out (None) is no argument: the primitive gets None in its place.
    present = tuple(arrays.get(field) is not None for _, field in kernel.inputs)
    values = [
        arrays[field] for (_, field), given in zip(kernel.inputs, present, strict=True) if given
    ]
    if not all(hasattr(v, "dtype") for v in values):
        values = [v if hasattr(v, "dtype") else np.asarray(v) for v in values]
    # What a call's desc depends on: the arrays' shapes and dtypes and the keyword fields.
    # This runs on every call, so it stays lean: scalar fields hash as they are.
    scalars: tuple[Any, ...] = tuple(fields.items())
    try:
        hash(scalars)
    except TypeError:  # a list-valued field
        scalars = _frozen(fields)
    key = (
        kernel,
        present,
        *[(v.shape, v.dtype) for v in values],
        scalars,
        _frozen(outputs) if outputs else (),
        feature_level,
        donate,
        None if out is None else (out.shape, out.dtype),
        _frozen(strided) if strided else (),
    )
    function = _calls.get(key)
    if function is None:
        fields_given = [
            field for (_, field), given in zip(kernel.inputs, present, strict=True) if given
        ]
        named = dict(zip(fields_given, values, strict=True))
        function = _prepare(
            kernel, named, fields, outputs or {}, feature_level, donate, out, strided, present
        )
        if len(_calls) >= _CACHE_LIMIT:
            _calls.clear()
        _calls[key] = function
    if out is not None:
        values.append(out)
    with jax.enable_x64(True):
        return function(*values)


def _problem(
    kernel: KernelTable, operator: Mapping[str, Any], feature_level: str | None
) -> tuple[str, tuple[str, ...]] | None:
    """Why the validators reject the operator (message, constraint ids), or None."""
    result = kernel.validator.validate(operator, feature_level)
    if result.valid:
        return None
    ids = tuple(result.fired())
    details = "; ".join(str(v) for v in result.violations)
    return f"invalid {kernel.name} desc ({', '.join(ids)}): {details}", ids


@functools.lru_cache(maxsize=_CACHE_LIMIT)
def _cached_problem(
    kernel: KernelTable, operator_key: str, feature_level: str | None
) -> tuple[str, tuple[str, ...]] | None:
    """_problem, once per distinct operator JSON: repeated calls skip the validators."""
    return _problem(kernel, json.loads(operator_key), feature_level)


def run_operator(
    kernel: KernelTable,
    operator: Mapping[str, Any],
    inputs: Mapping[str, Any],
    feature_level: str | None = None,
) -> dict[str, np.ndarray]:
    """The backend contract: operator JSON and inputs by field name -> outputs by field name.
    Tensors whose desc has Strides are passed and returned as their 1-D buffers; a strided
    output's initial buffer comes in `inputs` under its field name."""
    try:
        key = json.dumps(operator, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):  # NumPy scalars, NaN: validated uncached
        problem = _problem(kernel, operator, feature_level)
    else:
        problem = _cached_problem(kernel, key, feature_level)
    if problem is not None:
        raise InvalidOperator(*problem)
    desc = {
        k: v.get("Desc", v) if isinstance(v, Mapping) else v for k, v in operator["desc"].items()
    }
    # Only strided descs pay for reading the desc's defaults (their buffers' lengths).
    fields = [field for _, field in kernel.inputs if field in desc] + [kernel.output]
    view = None
    if any(isinstance(desc[f], Mapping) and desc[f].get("Strides") is not None for f in fields):
        view = _view(kernel, operator["desc"])
    arrays, strided = {}, {}
    for field in fields:
        layout = None if view is None else _layout(kernel, view, desc, field)
        if field == kernel.output and layout is None:
            continue
        if field not in inputs:
            raise InvalidOperator(
                f"{field} has Strides: its initial buffer must be passed under {field!r}"
            )
        declared = desc[field]
        array = np.asarray(inputs[field])
        data_type = declared["DataType"].removeprefix("DML_TENSOR_DATA_TYPE_")
        expected = (list(declared["Sizes"]) if layout is None else [layout.elements], data_type)
        actual = (list(array.shape), _data_type_of(kernel.common, array))
        if expected != actual:
            what = "shape" if layout is None else "its buffer's shape (Strides given)"
            raise InvalidOperator(
                f"{field} must have {what} {expected[0]} and data type {expected[1]} "
                f"as its desc says; got shape {actual[0]} and {actual[1]}"
            )
        arrays[field] = array
        if layout is not None and field != kernel.output:
            strided[field] = declared
    initial = arrays.pop(kernel.output, None)
    out = None
    if initial is not None:
        with jax.enable_x64(True):  # 64-bit buffers stay 64-bit
            out = jax.numpy.array(initial)  # a copy: donated and written into
    rest = {k: v for k, v in desc.items() if k not in arrays}
    tensors = {k: v for k, v in rest.items() if isinstance(v, Mapping)}
    scalars = {k: v for k, v in rest.items() if not isinstance(v, Mapping)}
    output = call_kernel(
        kernel,
        arrays,
        scalars,
        tensors,
        feature_level,
        out=out,
        strided=strided,
    )
    return {kernel.output: np.asarray(output)}
