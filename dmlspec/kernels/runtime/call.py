"""The call path: `call_kernel`, what each call runs. A call's key (its arrays' shapes and
dtypes and its fields, exactly) finds the program its signature was prepared for; the first
call of a signature builds and validates the desc, plans and jits it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from ...errors import InvalidOperator
from .. import host
from . import cache
from .cache import _exact_key, _jitted, enable_compilation_cache
from .desc import _desc_text, _plan, build_desc
from .program import InputWindow, _call_x64, _on_cpu, _program_bytes, _wait, compiler_options
from .table import KernelTable, _Plan


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


_calls: dict[tuple[Any, ...], Callable[..., Any]] = {}


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
            # It holds programs too: no more than _jitted keeps (the limit read where tests set it).
            if len(_calls) >= cache._PROGRAM_LIMIT:
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
