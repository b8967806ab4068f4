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
import dataclasses
import functools
import json
import math
import os
import pickle
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import jax
import numpy as np

from ..errors import InvalidOperator
from ..expr import Absent
from ..limits import quote
from ..validation.runtime import TensorView, View
from ..validation.shape import read_desc
from ..validation.tables import CommonTable
from . import host
from .cache_trust import trusted
from .layout import Layout, read_view, write_view

__all__ = ["KernelTable", "call_kernel", "run_operator", "trace_count"]

host.prepare_process()  # before JAX's CPU backend starts, where it has not yet

Computed = Callable[[View], Any]
_CACHE_LIMIT = 4096
# Compiled programs kept alive at once. Each holds its executable and lowered module (about
# 1.4 MB for a small kernel on XLA's CPU client), and a process holding thousands compiles
# new ones more slowly: a long run (a conformance suite, a service) keeps the recent ones.
_PROGRAM_LIMIT = 256
_traces = 0
# Programs whose arguments and results hold this many bytes or fewer are compiled, on XLA's CPU
# backend, with its elemental emitters (the ones it had before its MLIR fusion emitters, which
# build every fused kernel in a fresh MLIR context with all dialects loaded). Measured (issue
# "Performance at catalog scale"): a small program compiles in 50-65% of the time (12-16 ms
# against 20-27 ms: most of a first conformance run is compiling such programs) and runs as
# fast, with bit-identical results; from 64 KiB on, scatters and ARGMAX ran up to 1.4x slower,
# and at 64 MiB the benchmark's pads, gathers and scatters 1.2-2x slower: larger programs
# keep XLA's default.
SMALL_PROGRAM_BYTES = 16 * 1024
_SMALL_PROGRAM_OPTIONS: tuple[tuple[str, Any], ...] = (("xla_cpu_use_fusion_emitters", False),)


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
    for target, derive in kernel.derived:
        owner, _, member = target.partition(".")
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
        tuple(field in desc for field in kernel.outputs),
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


CACHE_VARIABLE = "DMLSPEC_JAX_CACHE"  # a folder, or "off"


def compilation_cache_folder(environ: Mapping[str, str]) -> Path | None:
    """Where dmlspec keeps JAX's compiled programs under these environment variables:
    $DMLSPEC_JAX_CACHE, else $XDG_CACHE_HOME/dmlspec/jax (~/.cache/dmlspec/jax); None for "off"."""
    setting = environ.get(CACHE_VARIABLE, "")
    if setting.lower() == "off":
        return None
    base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(setting) if setting else base / "dmlspec" / "jax"


@functools.cache
def enable_compilation_cache() -> Path | None:
    """Turn on JAX's persistent compilation cache in `compilation_cache_folder`, once. "off"
    leaves it off, and a cache folder the user already gave JAX is kept."""
    config: Any = jax.config  # JAX's config object is untyped
    folder = compilation_cache_folder(os.environ)
    if folder is None or config.jax_compilation_cache_dir:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: run uncached
    if not trusted(folder):  # its entries are machine code run as they are
        return None
    config.update("jax_compilation_cache_dir", str(folder))
    config.update("jax_persistent_cache_min_compile_time_secs", 0)
    config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


def _read_input(array: Any, layout: InputLayout) -> Any:
    if array is None or layout is None:
        return array
    if isinstance(layout, tuple):  # a tensor array: its strided items
        return tuple(
            a if item is None else read_view(a, item) for a, item in zip(array, layout, strict=True)
        )
    return read_view(array, layout)


_programs: OrderedDict[tuple[Any, ...], Callable[..., Any]] = OrderedDict()
_programs_lock = threading.Lock()  # callers on several threads share the programs


def _jitted(*key: Any) -> Callable[..., Any]:
    """`_jit_program(*key)`, the most recently used `_PROGRAM_LIMIT` of them kept (jitting
    only wraps: tracing and compiling wait for the first call, outside the lock). The static
    parameters, key[1], are compared exactly (-0.0 is not 0.0 in a compiled constant)."""
    exact = (_exact_key(key[1]), *key)
    with _programs_lock:
        function = _programs.get(exact)
        if function is not None:
            _programs.move_to_end(exact)
            return function
        function = _programs[exact] = _jit_program(*key)
        while len(_programs) > _PROGRAM_LIMIT:
            _programs.popitem(last=False)
        return function


def _jit_program(
    primitive: Callable[..., Any],
    static: tuple[tuple[str, Any], ...],
    outputs: tuple[_Output, ...],
    returned: tuple[bool, ...],
    donate: tuple[int, ...],
    buffers: tuple[bool, ...],
    layouts: tuple[InputLayout, ...] = (),
    present: tuple[bool, ...] = (),
    windows: tuple[InputWindow, ...] = (),
    compiler_options: tuple[tuple[str, Any], ...] = (),
) -> Callable[..., Any]:
    """The primitive jitted with its static parameters, result shapes and dtypes bound.

    After the inputs come the output buffers `buffers` marks, one per output in order: a
    strided output's initial buffer, which the result is written into, or a packed output's
    `out=` (unused, donated). Inputs with a Layout arrive as buffers and are read into their
    logical views first; a tensor array arrives as a tuple. `windows` marks NumPy inputs passed
    as aligned windows (dmlspec.kernels.host), unwrapped before anything else. One output is
    returned as an array, several as a tuple (a tensor-array output's items in its place,
    flattened)."""
    parameters = dict(static)
    count = sum(buffers)

    def traced(*arrays: Any) -> Any:
        global _traces
        _traces += 1  # runs only while tracing
        inputs: tuple[Any, ...] = arrays[: len(arrays) - count] if count else arrays
        given_buffers = iter(arrays[len(arrays) - count :])
        if windows:
            inputs = tuple(_unwrap(a, w) for a, w in zip(inputs, windows, strict=True))
        if present:  # optional inputs left out: None in their places
            given = iter(inputs)
            inputs = tuple(next(given) if p else None for p in present)
        if any(layout is not None for layout in layouts):
            inputs = tuple(
                _read_input(a, layout) for a, layout in zip(inputs, layouts, strict=True)
            )
        results = primitive(*inputs, **parameters)
        if len(returned) == 1:
            results = (results,)
        flat: list[Any] = []
        for result, kept in zip(results, returned, strict=True):
            if kept:
                flat += list(result) if isinstance(result, list | tuple) else [result]
        finished: dict[str, Any] = {}
        for output, result, buffered in zip(outputs, flat, buffers, strict=True):
            value = result.reshape(output.sizes).astype(output.dtype)
            buffer = next(given_buffers) if buffered else None
            if output.layout is not None:
                assert buffer is not None  # buffers marks every strided output
                value = write_view(buffer, value, output.layout)
            if output.index is None:
                finished[output.field] = value
            else:
                finished.setdefault(output.field, []).append(value)
        fields = list(dict.fromkeys(o.field for o in outputs))
        grouped = [finished[fields.pop(0)] if kept else None for kept in returned]
        return grouped[0] if len(grouped) == 1 else tuple(grouped)

    # keep_unused: an unused donated `out` would otherwise be pruned, and its buffer with it.
    jitted = functools.partial(jax.jit, traced, donate_argnums=donate, keep_unused=bool(count))
    if not compiler_options:
        return jitted()
    program = jitted(compiler_options=dict(compiler_options))
    # JAX takes compiler options on a top-level jit only: a call staged into a user's own
    # jax.jit runs this one instead, compiled as part of the user's program.
    _staged_programs[program] = jitted()
    return program


_staged_programs: weakref.WeakKeyDictionary[Any, Callable[..., Any]] = weakref.WeakKeyDictionary()


InputWindow = host.Window | tuple[host.Window | None, ...] | None  # a tensor array: per item


def _unwrap(array: Any, window: InputWindow) -> Any:
    if window is None:
        return array
    if isinstance(window, tuple):
        return tuple(a if w is None else w.unwrap(a) for a, w in zip(array, window, strict=True))
    return window.unwrap(array)


def _windowed(values: list[Any]) -> tuple[list[Any], tuple[InputWindow, ...]]:
    """The inputs with misaligned large NumPy arrays replaced by aligned windows (so XLA's
    CPU client aliases them instead of copying), and the windows, or () when none is."""
    passed: list[Any] = []
    windows: list[InputWindow] = []
    for value in values:
        if isinstance(value, list):
            items = [host.window(v) for v in value]
            passed.append([v if i is None else i[0] for v, i in zip(value, items, strict=True)])
            item_windows = tuple(None if i is None else i[1] for i in items)
            windows.append(item_windows if any(items) else None)
        else:
            found = host.window(value)
            passed.append(value if found is None else found[0])
            windows.append(None if found is None else found[1])
    if not any(w is not None for w in windows):
        return values, ()
    return passed, tuple(windows)


@functools.cache
def _on_cpu() -> bool:
    return jax.default_backend() == "cpu"


def _frozen(value: Any) -> Any:
    """A hashable copy of nested dicts and lists (exact types first: this runs per call)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return tuple([_frozen(v) if type(v) in _NESTED else v for v in value])
    if kind is dict:
        return tuple([(k, _frozen(v) if type(v) in _NESTED else v) for k, v in value.items()])
    if isinstance(value, Mapping):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


_NESTED = frozenset({list, tuple, dict})


def _exact_key(*values: Any) -> bytes | None:
    """Bytes that tell values apart exactly, or None where pickle cannot write them.

    A cache key compared with == would take True for 1, 1.0 for 1 and -0.0 for 0.0 (all equal
    in Python): a call with Axis=True after one with Axis=1 would skip the validation that
    rejects it, and ValueStart=-0.0 would run the program compiled with 0.0. Pickle writes
    types and a float's bits; it is also quicker than freezing nested dicts into tuples."""
    try:
        return pickle.dumps(values, 5)
    except Exception:  # anything pickle refuses (local functions, locks, ...): not cached
        return None


_DEFAULT_FIELDS = b""  # the fields key of a call that gives none (pickle never writes b"")


def _any_given(fields: Mapping[str, Any]) -> bool:
    for value in fields.values():  # noqa: SIM110 (a loop: quicker than any() over a generator)
        if value is not None:
            return True
    return False


def _check_buffer_shapes(kernel: KernelTable, arrays: Mapping[str, Any], plan: _Plan) -> None:
    for (_, field), layout in zip(kernel.inputs, plan.layouts, strict=True):
        if layout is None:
            continue
        given = arrays[field]
        pairs = zip(given, layout, strict=True) if isinstance(layout, tuple) else [(given, layout)]
        for i, (array, item) in enumerate(pairs):
            if item is not None and np.shape(array) != (item.elements,):
                name = f"{field}[{i}]" if isinstance(layout, tuple) else field
                raise InvalidOperator(
                    f"{name} has Strides, so it is passed as its buffer: a 1-D array of "
                    f"{item.elements} elements (TotalTensorSizeInBytes / element size); "
                    f"got shape {list(np.shape(array))}"
                )


def _prepare(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Any],
    feature_level: str | None,
    donate: bool,
    out: Any,
    strided: Mapping[str, Any] | None = None,
    present: tuple[bool, ...] = (),
    initial: Mapping[str, Any] | None = None,
    windows: tuple[InputWindow, ...] = (),
) -> Callable[..., Any]:
    """The slow path, once per call signature: build and validate the desc, plan, jit.
    `initial` holds the initial buffers of strided outputs (a list for a tensor array)."""
    desc = build_desc(kernel, arrays, fields, outputs, strided)
    plan = _plan(kernel, _desc_text(desc), feature_level)
    _check_buffer_shapes(kernel, arrays, plan)
    donated: list[int] = []
    if donate and kernel.donate is not None:
        donated.append(
            [field for _, field in kernel.inputs if field in arrays].index(kernel.donate)
        )
    single = plan.single
    if out is not None and single is None:
        raise InvalidOperator(
            f"out= is for operators with one output tensor; {kernel.name} has "
            f"{', '.join(kernel.outputs)}"
        )
    strided_outputs = [o for o in plan.outputs if o.layout is not None]
    if single is not None and single.layout is not None and out is None:
        assert single.layout is not None
        raise InvalidOperator(
            f"{single.field} has Strides: pass its initial buffer ({single.layout.elements} "
            f"elements), which the result is written into"
        )
    if out is not None and single is not None:
        actual = (tuple(out.shape), np.dtype(out.dtype).name)
        if actual != (single.shape, single.dtype):
            what = "shaped and typed as" if single.layout is None else "the buffer of"
            raise ValueError(
                f"out must be {what} {single.field}: shape {single.shape} "
                f"and dtype {single.dtype}; got shape {actual[0]} and dtype {actual[1]}"
            )
        donated.append(len(arrays))
        buffers: tuple[bool, ...] = (True,)
    else:
        for output in strided_outputs:
            given = (initial or {}).get(output.field)
            if output.index is not None and isinstance(given, list | tuple):
                given = given[output.index] if output.index < len(given) else None
            name = output.field if output.index is None else f"{output.field}[{output.index}]"
            if given is None or tuple(np.shape(given)) != output.shape:
                raise InvalidOperator(
                    f"{name} has Strides: its initial buffer ({output.shape[0]} elements) must "
                    f"be given, which the result is written into"
                )
        buffers = tuple(o.layout is not None for o in plan.outputs)
    enable_compilation_cache()
    return _jitted(
        kernel.primitive,
        plan.static,
        plan.outputs,
        plan.returned,
        tuple(donated),
        buffers,
        plan.layouts,
        present if not all(present) else (),
        windows,
        compiler_options(_program_bytes(arrays, plan.outputs)),
    )


def _bytes_of(shape: tuple[int, ...], dtype: Any) -> int:
    """The bytes an array of this shape and dtype holds (arrays, tracers and planned outputs)."""
    return math.prod(shape) * int(np.dtype(dtype).itemsize)


def _program_bytes(arrays: Mapping[str, Any], outputs: tuple[_Output, ...]) -> int:
    """The bytes a program's arguments and results hold (a strided tensor's whole buffer)."""
    items = [i for v in arrays.values() for i in (v if isinstance(v, list | tuple) else [v])]
    return sum(_bytes_of(i.shape, i.dtype) for i in items) + sum(
        _bytes_of(o.shape, o.dtype) for o in outputs
    )


def compiler_options(program_bytes: int) -> tuple[tuple[str, Any], ...]:
    """XLA options for a program over `program_bytes` (SMALL_PROGRAM_BYTES and less: XLA's
    elemental emitters on its CPU backend, where they are the faster choice; see there)."""
    if program_bytes <= SMALL_PROGRAM_BYTES and _on_cpu():
        return _SMALL_PROGRAM_OPTIONS
    return ()


_calls: dict[tuple[Any, ...], Callable[..., Any]] = {}
_block_until_ready: Callable[[Any], Any] = jax.block_until_ready  # untyped in JAX


def call_kernel(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Any] | None = None,
    feature_level: str | None = None,
    donate: bool = False,
    out: Any = None,
    strided: Mapping[str, Any] | None = None,
    initial: Mapping[str, Any] | None = None,
    fields_key: bytes | None = None,
) -> Any:
    """Validate (once per call signature) and run the jitted primitive; return the output, or
    for an operator with several outputs a tuple in the order of its kernel section (a
    tensor-array output as a list).

    A tensor-array input (JOIN's InputTensors) is a sequence of arrays. `out`, a jax.Array
    shaped and typed like the only output, is donated: the result is written into its buffer,
    which saves allocating (and page-faulting) a fresh one. `strided` gives the descs of inputs
    passed as 1-D buffers (descs with Strides; a list for a tensor array); a strided output's
    desc (in `outputs`) needs its initial buffer, `out` or in `initial` by field, and the
    whole buffer is returned with only the view written. `fields_key`, where given, is
    `_exact_key(fields, outputs or None, strided or None)` made beforehand (run_operator keeps
    it per parsed operator JSON)."""
    function, values, host_inputs, _ = _resolve(
        kernel,
        arrays,
        fields,
        outputs,
        feature_level,
        donate,
        out,
        strided,
        initial,
        fields_key,
    )
    result = _call_x64(function, values)
    if host_inputs:
        # XLA may read the caller's NumPy memory in place (aligned arrays, windows): the
        # result is complete before the caller can change or free its arrays.
        _wait(result)
    return result


# `with jax.enable_x64(True)` builds a context-manager object per use (0.45 us of a 5 us small
# call); what it does is swap the flag's thread-local value and call the flag's hook, which
# enable_x64 does not have. Where a JAX release changes that, the context manager is used.
_X64: Any = jax.enable_x64  # the flag's State (untyped in JAX)
_SWAP_X64 = hasattr(_X64, "swap_local") and getattr(_X64, "_update_thread_local_hook", 0) is None


def _call_x64(function: Callable[..., Any], values: list[Any]) -> Any:
    """function(*values) with 64-bit types enabled on this thread for the call."""
    if not _SWAP_X64:
        with jax.enable_x64(True):
            try:
                return function(*values)
            except ValueError as error:
                return _staged_call(function, values, error)
    previous = _X64.swap_local(True)
    try:
        return function(*values)
    except ValueError as error:
        return _staged_call(function, values, error)
    finally:
        _X64.set_local(previous)


def _staged_call(function: Callable[..., Any], values: list[Any], error: ValueError) -> Any:
    """A program with compiler options, called inside an outer trace (a user's jax.jit), which
    JAX refuses: its twin without them (_jit_program). Any other error is the call's."""
    staged = _staged_programs.get(function)
    if staged is None:
        raise error
    return staged(*values)


def _wait(result: Any) -> None:
    """Block until a call's result (an array, or a tuple or list of them) is computed."""
    if isinstance(result, jax.Array):
        result.block_until_ready()  # the tree walk of jax.block_until_ready costs 0.8 us
    else:
        _block_until_ready(result)


# A call resolved: the jitted program, its arguments in order, whether some input is a NumPy
# array, and whether the program depends on the desc only (no windows, `out`, initial buffers
# or donation). A plain tuple: this is on every call's path.
_Call = tuple[Callable[..., Any], list[Any], bool, bool]


def _resolve(
    kernel: KernelTable,
    arrays: Mapping[str, Any],
    fields: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    feature_level: str | None,
    donate: bool,
    out: Any,
    strided: Mapping[str, Any] | None,
    initial: Mapping[str, Any] | None,
    fields_key: bytes | None,
) -> _Call:
    """call_kernel's program (validated and jitted once per call signature) and arguments."""
    # What a call's desc depends on: the arrays' shapes and dtypes (None for an optional input
    # left out, which the primitive gets as None) and the keyword fields, exactly (_exact_key).
    # This runs on every call, so it stays lean: exact types first.
    values: list[Any] = []
    signature: list[Any] = []
    host_inputs = False
    large_host_inputs = False  # worth windowing (dmlspec.kernels.host)
    for _, field in kernel.inputs:
        value = arrays.get(field)
        if value is None:
            signature += (None, None)
            continue
        if type(value) is np.ndarray:
            host_inputs = True
            large_host_inputs = large_host_inputs or value.nbytes >= host.WINDOW_MIN_BYTES
        elif field in kernel.tensor_arrays:
            items: list[Any] = []
            shapes: list[Any] = []
            for item in value:  # one pass: this runs per call
                if type(item) not in _device_array_types:
                    item, on_host = _array_input(item)
                    if on_host:
                        host_inputs = True
                        large = item.nbytes >= host.WINDOW_MIN_BYTES
                        large_host_inputs = large_host_inputs or large
                items.append(item)
                shapes.append((item.shape, item.dtype))
            signature += (tuple(shapes), None)
            values.append(items)
            continue
        elif type(value) not in _device_array_types:
            value, on_host = _array_input(value)
            if on_host:
                host_inputs = True
                large_host_inputs = large_host_inputs or value.nbytes >= host.WINDOW_MIN_BYTES
        signature += (value.shape, value.dtype)
        values.append(value)
    if fields_key is None:
        if outputs or strided or _any_given(fields):
            fields_key = _exact_key(fields, outputs or None, strided or None)
        else:  # every field left to its default: nothing to tell apart within the kernel
            fields_key = _DEFAULT_FIELDS
    windows: tuple[InputWindow, ...] = ()
    if large_host_inputs and _on_cpu():
        passed, windows = _windowed(values)
    placed = None if out is None else (out.shape, out.dtype)
    key = (kernel, feature_level, fields_key, donate, placed, windows, *signature)
    # Fields that cannot be written exactly are validated on every call.
    function = None if fields_key is None else _calls.get(key)
    if function is None:
        present = tuple([arrays.get(field) is not None for _, field in kernel.inputs])
        fields_given = [
            field for (_, field), given in zip(kernel.inputs, present, strict=True) if given
        ]
        named = dict(zip(fields_given, values, strict=True))
        function = _prepare(
            kernel,
            named,
            fields,
            outputs or {},
            feature_level,
            donate,
            out,
            strided,
            present,
            initial,
            windows,
        )
        if fields_key is not None:
            if len(_calls) >= _PROGRAM_LIMIT:  # it holds programs too: no more than _jitted keeps
                _calls.clear()
            _calls[key] = function
    if windows:
        values = passed
    if out is not None:
        values.append(out)
    elif initial:
        values += _initial_buffers(kernel, outputs or {}, initial)
    reusable = not windows and out is None and not initial and not donate
    return function, values, host_inputs, reusable


_device_array_types: set[type] = set()  # the jax.Array classes calls have been given


def _array_input(value: Any) -> tuple[Any, bool]:
    """An input whose class is not a known device array's: as an array (np.asarray for
    sequences and scalars), and whether it is a NumPy array. A jax.Array's class is remembered,
    so that later calls skip this (isinstance against jax.Array costs 110 ns per input)."""
    if isinstance(value, jax.Array):
        _device_array_types.add(type(value))
        return value, False
    if not hasattr(value, "dtype"):
        value = np.asarray(value)
    return value, isinstance(value, np.ndarray)


def _initial_buffers(
    kernel: KernelTable, outputs: Mapping[str, Any], initial: Mapping[str, Any]
) -> list[Any]:
    """The initial buffers of the strided outputs, in output order (items of arrays in place)."""
    buffers = []
    for field in kernel.outputs:
        tensor = outputs.get(field)
        given = initial.get(field)
        if isinstance(tensor, list | tuple):
            buffers += [
                given[i]
                for i, item in enumerate(tensor)
                if item.get("Strides") is not None and given is not None
            ]
        elif isinstance(tensor, Mapping) and tensor.get("Strides") is not None:
            buffers.append(given)
    return buffers


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


def _checked_array(
    kernel: KernelTable, name: str, declared: Mapping[str, Any], value: Any, layout: Any
) -> np.ndarray:
    array = np.asarray(value)
    data_type = str(declared["DataType"]).removeprefix("DML_TENSOR_DATA_TYPE_")
    expected = (list(declared["Sizes"]) if layout is None else [layout.elements], data_type)
    actual = (list(array.shape), _data_type_of(kernel.common, array))
    if expected != actual:
        what = "shape" if layout is None else "its buffer's shape (Strides given)"
        raise InvalidOperator(
            f"{name} must have {what} {expected[0]} and data type {expected[1]} "
            f"as its desc says; got shape {actual[0]} and {actual[1]}"
        )
    return array


def run_operator(
    kernel: KernelTable,
    operator: Mapping[str, Any],
    inputs: Mapping[str, Any],
    feature_level: str | None = None,
) -> dict[str, Any]:
    """The backend contract: operator JSON and inputs by field name -> outputs by field name
    (a tensor-array field as a list of arrays). Tensors whose desc has Strides are passed and
    returned as their 1-D buffers; a strided output's initial buffer comes in `inputs` under
    its field name."""
    exact = _exact_key(operator)
    if exact is not None:
        known = _valid_runs.get((kernel, exact, feature_level))
        if known is not None:
            return _run_parsed(kernel, known, inputs, feature_level)
    try:
        key: str | None = json.dumps(operator, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):  # NumPy scalars, NaN: validated and read uncached
        key = None
        problem = _problem(kernel, operator, feature_level)
    else:
        problem = _cached_problem(kernel, key, feature_level)
    if problem is not None:
        raise InvalidOperator(*problem)
    parsed = _parse_run(kernel, operator) if key is None else _parsed_run(kernel, key)
    if exact is not None and key is not None:  # parsed from the JSON text, not the caller's dicts
        if len(_valid_runs) >= _CACHE_LIMIT:
            _valid_runs.clear()
        _valid_runs[kernel, exact, feature_level] = parsed
    return _run_parsed(kernel, parsed, inputs, feature_level)


# Valid operator JSON already read, by its _exact_key (and kernel and feature level).
# Serializing JSON, the cache key of validation and parsing, costs about 4 us of a 16 us small
# call; the exact key 0.6 us, and equal keys mean an equal operator, types included.
_valid_runs: dict[tuple[KernelTable, bytes, str | None], _ParsedRun] = {}


def _returned(kernel: KernelTable, result: Any, desc: Mapping[str, Any]) -> dict[str, Any]:
    """call_kernel's result as run's outputs by field: NumPy arrays (lists for tensor arrays)."""
    if type(result) is not tuple:  # one output (the common case, kept short)
        field = kernel.outputs[0]
        if field not in desc:
            return {}
        return {
            field: [np.asarray(r) for r in result] if type(result) is list else np.asarray(result)
        }
    return {
        field: [np.asarray(r) for r in value] if isinstance(value, list) else np.asarray(value)
        for field, value in zip(kernel.outputs, result, strict=True)
        if field in desc
    }


class Expected(NamedTuple):
    """What an array given for a tensor must be, read from its desc."""

    shape: tuple[int, ...]  # a strided tensor's: its buffer's (layout.elements,)
    dtype: np.dtype[Any]
    desc: Mapping[str, Any]
    layout: Layout | None  # None: packed


@dataclass(frozen=True)
class _ParsedRun:
    """What run_operator reads from one valid operator JSON, once."""

    desc: Mapping[str, Any]
    # The inputs in the program's order: a tensor array (a list in inputs) has one per item.
    arguments: tuple[tuple[str, Expected | tuple[Expected, ...]], ...]
    strided_outputs: tuple[tuple[str, Expected], ...]  # whose initial buffers are inputs
    strided_output_arrays: tuple[tuple[str, tuple[Expected | None, ...]], ...]  # per item
    strided: Mapping[str, Any]  # the descs of inputs passed as buffers (call_kernel's)
    scalars: Mapping[str, Any]
    tensors: Mapping[str, Any]
    fields_key: bytes | None  # call_kernel's, made once
    small: bool  # every input below host.WINDOW_MIN_BYTES: never passed as a window
    # The program of a call on small NumPy arrays, by feature level, once one has run: later
    # calls skip call_kernel. Weak: the program LRU decides how long a program lives.
    programs: dict[str | None, weakref.ref[Callable[..., Any]]] = dataclasses.field(
        default_factory=dict, compare=False
    )


@functools.lru_cache(maxsize=_CACHE_LIMIT)
def _parsed_run(kernel: KernelTable, operator_key: str) -> _ParsedRun:
    """_parse_run of a valid operator JSON, once per distinct JSON: repeated runs skip it."""
    return _parse_run(kernel, json.loads(operator_key))


def _parse_run(kernel: KernelTable, operator: Mapping[str, Any]) -> _ParsedRun:
    desc = {
        k: v.get("Desc", v) if isinstance(v, Mapping) else v for k, v in operator["desc"].items()
    }
    fields = [field for _, field in kernel.inputs if field in desc]
    outputs = [field for field in kernel.outputs if field in desc]
    # Only strided descs pay for reading the desc's defaults (their buffers' lengths).
    view = None
    if any(_has_strides(desc[f]) for f in fields + outputs):
        view = _view(kernel, operator["desc"])

    def expected(tensor: Mapping[str, Any], layout: Layout | None) -> Expected:
        shape = tuple(tensor["Sizes"]) if layout is None else (layout.elements,)
        return Expected(shape, np.dtype(_dtype_name(kernel, tensor)), tensor, layout)

    def expected_items(field: str) -> tuple[Expected, ...]:
        layout = None if view is None else _layout(kernel, view, desc, field)
        items = layout if isinstance(layout, tuple) else (None,) * len(desc[field])
        return tuple(expected(t, item) for t, item in zip(desc[field], items, strict=True))

    arguments: list[tuple[str, Expected | tuple[Expected, ...]]] = []
    every: list[Expected] = []
    strided: dict[str, Any] = {}
    for field in fields:
        if isinstance(desc[field], list):
            items = expected_items(field)
            arguments.append((field, items))
            every += items
            if any(item.layout is not None for item in items):
                strided[field] = [item.desc if item.layout else None for item in items]
        else:
            layout = None if view is None else _layout(kernel, view, desc, field)
            single = expected(desc[field], layout)  # type: ignore[arg-type]
            arguments.append((field, single))
            every.append(single)
            if layout is not None:
                strided[field] = desc[field]
    strided_outputs: list[tuple[str, Expected]] = []
    strided_output_arrays: list[tuple[str, tuple[Expected | None, ...]]] = []
    for field in outputs if view is not None else ():
        if isinstance(desc[field], list):
            items = expected_items(field)
            if any(item.layout is not None for item in items):
                strided_output_arrays.append(
                    (field, tuple(item if item.layout is not None else None for item in items))
                )
        elif (layout := _item_layout(kernel, getattr(view, field), desc[field])) is not None:
            strided_outputs.append((field, expected(desc[field], layout)))
    small = all(_bytes_of(e.shape, e.dtype) < host.WINDOW_MIN_BYTES for e in every)
    rest = {k: v for k, v in desc.items() if k not in fields}
    tensors = {k: v for k, v in rest.items() if isinstance(v, Mapping | list) and k in outputs}
    tensors |= {k: v for k, v in rest.items() if isinstance(v, Mapping) and k not in tensors}
    scalars = {k: v for k, v in rest.items() if k not in tensors}
    return _ParsedRun(
        desc,
        tuple(arguments),
        tuple(strided_outputs),
        tuple(strided_output_arrays),
        strided,
        scalars,
        tensors,
        _exact_key(scalars, tensors or None, strided or None),
        small,
    )


def _run_parsed(
    kernel: KernelTable, parsed: _ParsedRun, inputs: Mapping[str, Any], feature_level: str | None
) -> dict[str, Any]:
    known = parsed.programs.get(feature_level)
    function = None if known is None else known()
    if function is not None:
        values = _small_arguments(parsed, inputs)
        if values is not None:
            result = _call_x64(function, values)
            _wait(result)  # it may read the caller's arrays in place
            return _returned(kernel, result, parsed.desc)
    arrays: dict[str, Any] = {}
    for field, expected in parsed.arguments:
        if isinstance(expected, Expected):
            arrays[field] = _matching(kernel, field, expected, _given(inputs, field))
            continue
        given = _listed(inputs, field, expected)
        arrays[field] = [
            _matching(kernel, f"{field}[{i}]", item, value)
            for i, (item, value) in enumerate(zip(expected, given, strict=True))
        ]
    initial: dict[str, Any] = {}
    if parsed.strided_outputs or parsed.strided_output_arrays:
        initial = _initial_copies(kernel, parsed, inputs)
    single = len(kernel.outputs) == 1 and not isinstance(parsed.desc.get(kernel.output), list)
    out = initial.pop(kernel.output, None) if single else None
    function, values, _, reusable = _resolve(
        kernel,
        arrays,
        parsed.scalars,
        parsed.tensors,
        feature_level,
        False,
        out,
        parsed.strided or None,
        initial or None,
        parsed.fields_key,
    )
    result = _call_x64(function, values)
    _wait(result)  # it may read the caller's arrays in place
    if reusable and _small_arguments(parsed, inputs) is not None:
        parsed.programs[feature_level] = weakref.ref(function)
    return _returned(kernel, result, parsed.desc)


def _small_arguments(parsed: _ParsedRun, inputs: Mapping[str, Any]) -> list[Any] | None:
    """The program's arguments where every input is a NumPy array shaped and typed as its desc
    says, for a desc whose inputs are all below host's window size (what a program remembered
    for small calls was compiled for), else None: the full path checks and explains."""
    if not parsed.small:
        return None
    values: list[Any] = []
    for name, expected in parsed.arguments:
        value: Any = inputs.get(name)
        if isinstance(expected, Expected):
            if not _small_match(value, expected):
                return None
            values.append(value)
            continue
        # a tensor array's items
        if type(value) not in (list, tuple) or len(value) != len(expected):
            return None
        items = list(value)
        if not all(map(_small_match, items, expected)):
            return None
        values.append(items)
    return values


def _small_match(value: Any, expected: Expected) -> bool:
    return (
        type(value) is np.ndarray
        and value.shape == expected.shape
        and (value.dtype is expected.dtype or value.dtype == expected.dtype)
    )


def _initial_copies(
    kernel: KernelTable, parsed: _ParsedRun, inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """The initial buffers of strided outputs, copied: they are donated and written into.
    64-bit buffers stay 64-bit. A transfer (jnp.array would compile a copy program per shape
    and data type)."""
    initial: dict[str, Any] = {}
    with jax.enable_x64(True):
        for field, wanted in parsed.strided_outputs:
            buffer = _matching(kernel, field, wanted, _initial_buffer(inputs, field))
            initial[field] = jax.device_put(buffer, may_alias=False)
        for field, wanted_items in parsed.strided_output_arrays:
            given = _listed(inputs, field, wanted_items, _initial_buffer(inputs, field))
            initial[field] = [
                None
                if item is None
                else jax.device_put(
                    _matching(kernel, f"{field}[{i}]", item, value), may_alias=False
                )
                for i, (item, value) in enumerate(zip(wanted_items, given, strict=True))
            ]
    return initial


def _given(inputs: Mapping[str, Any], field: str, why: str | None = None) -> Any:
    """inputs[field], or an InvalidOperator saying why the desc needs it and what was given."""
    if field not in inputs:
        why = why or (
            f"the desc gives {field}, so its array (a list of arrays for a tensor array) must "
            "be in inputs"
        )
        raise InvalidOperator(f"inputs lack {field}: {why}; got {sorted(inputs)}")
    return inputs[field]


def _initial_buffer(inputs: Mapping[str, Any], field: str) -> Any:
    why = f"{field} has Strides: its initial buffer must be passed under {field!r}"
    return _given(inputs, field, why)


def _listed(
    inputs: Mapping[str, Any], field: str, items: tuple[Any, ...], given: Any = None
) -> Any:
    """The list of arrays given for a tensor-array field (`given`, else inputs[field]),
    checked against the number of `items` its desc has."""
    given = _given(inputs, field) if given is None else given
    if not isinstance(given, list | tuple) or len(given) != len(items):
        raise InvalidOperator(
            f"{field} must be a list of {len(items)} arrays, as its desc says; "
            f"got {type(given).__name__}"
            + (f" of {len(given)}" if isinstance(given, list | tuple) else "")
        )
    return given


def _matching(kernel: KernelTable, name: str, expected: Expected, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.shape == expected.shape and array.dtype == expected.dtype:
        return array
    return _checked_array(kernel, name, expected.desc, array, expected.layout)  # says what differs


def _has_strides(value: Any) -> bool:
    if isinstance(value, list):
        return any(isinstance(v, Mapping) and v.get("Strides") is not None for v in value)
    return isinstance(value, Mapping) and value.get("Strides") is not None
