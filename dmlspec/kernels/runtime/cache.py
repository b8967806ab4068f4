"""Caching: the limits of the runtime's caches, exact cache keys, the process's compiled
programs (the most recently used `_PROGRAM_LIMIT`, which also bounds the call path's programs
by call signature), and the folder of JAX's persistent compilation cache."""

from __future__ import annotations

import functools
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax

from .program import _jit_program

_CACHE_LIMIT = 4096  # distinct descs and operator JSONs whose validation and reading are kept
# Compiled programs kept alive at once. Each holds its executable and lowered module (about
# 1.4 MB for a small kernel on XLA's CPU client), and a process holding thousands compiles
# new ones more slowly: a long run (a conformance suite, a service) keeps the recent ones.
_PROGRAM_LIMIT = 256


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
    config.update("jax_compilation_cache_dir", str(folder))
    config.update("jax_persistent_cache_min_compile_time_secs", 0)
    config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


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
