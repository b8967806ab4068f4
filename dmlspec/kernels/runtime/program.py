"""Programs: the primitive jitted with its static parameters, result shapes and dtypes, strided
layouts, host windows and donated buffers bound; XLA's options by program size; and calling a
program with 64-bit types enabled for the call."""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from .. import host
from ..layout import read_view, write_view
from .table import InputLayout, _Output

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

_traces = 0


def trace_count() -> int:
    """How many times any kernel has been traced (compiled) in this process."""
    return _traces


def _read_input(array: Any, layout: InputLayout) -> Any:
    if array is None or layout is None:
        return array
    if isinstance(layout, tuple):  # a tensor array: its strided items
        return tuple(
            a if item is None else read_view(a, item) for a, item in zip(array, layout, strict=True)
        )
    return read_view(array, layout)


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


@functools.cache
def _on_cpu() -> bool:
    return jax.default_backend() == "cpu"


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


_block_until_ready: Callable[[Any], Any] = jax.block_until_ready  # untyped in JAX


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
