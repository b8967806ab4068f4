"""Host memory for kernels on JAX's CPU backend: NumPy inputs passed without a copy, and fresh
outputs that do not page-fault.

Why this exists (measured, issue "Performance at catalog scale"):
- XLA's CPU client aliases a NumPy array only when its data is 64-byte aligned. NumPy's large
  arrays sit 16 bytes past a page boundary (glibc's header of an mmap-ed chunk), so every one
  was copied into freshly mapped memory first: a 64 MiB input cost 16384 page faults, about
  40 ms, before a 2 ms gather ran. `prepare_process` therefore has NumPy allocate array data
  64-byte aligned (a NEP 49 memory handler, dmlspec/kernels/_aligned.c, where the optional
  extension was built): arrays made after the kernel runtime is imported, on the importing
  thread, are read in place. Any other misaligned array (made before, on another thread, by
  a library with its own allocator) is passed as a *window*: a 1-D view that starts at the
  64-byte boundary below its data (the same 64 bytes, so the same, mapped page) and that the
  jitted function slices back to the array. XLA fuses the slice into most consumers; it copies
  the window for concatenation and float reductions (measured), where alignment at the source
  is what avoids the copy.
- Each fresh output XLA allocates page-faulted, 8192 faults (about 13 ms) per 32 MiB: glibc
  serves allocations above its mmap threshold (at most 32 MiB) with a fresh mmap and unmaps
  them on free, and XLA's CPU client allocated outputs on its dispatch thread, whose malloc
  arena mmaps every block of 64 MiB or more whatever the settings. `prepare_process` makes
  glibc serve large blocks from its heap and keep up to `RETAINED_BYTES` of freed memory for
  reuse (what onnxruntime's arena and PyTorch's caching allocator do for their outputs), and
  has JAX's CPU client run computations inline, on the calling thread (the main arena).
  These settings and NumPy's allocator are process-wide, so they are made once, when the kernel
  runtime is imported; `DMLSPEC_HOST_MEMORY=system` leaves glibc, NumPy and JAX as they were,
  and a
  `JAX_CPU_ENABLE_ASYNC_DISPATCH` the user set is kept. JAX reads the dispatch setting when
  its CPU backend starts: where JAX ran before dmlspec was imported, outputs of 64 MiB or
  more still fault.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    from . import _aligned  # type: ignore[attr-defined]  # the optional C extension
except ImportError:  # not built: no C compiler at install
    _aligned = None

__all__ = [
    "ALIGNMENT",
    "HOST_MEMORY_VARIABLE",
    "RETAINED_BYTES",
    "WINDOW_MIN_BYTES",
    "Window",
    "align_numpy_arrays",
    "keep_freed_memory",
    "prepare_process",
    "run_cpu_computations_inline",
    "window",
]

ALIGNMENT = 64  # what XLA's CPU client needs to alias a host buffer
# Below this a copy costs less than compiling one more variant of the kernel (a window's
# offset is part of the compiled function): small arrays are copied as before.
WINDOW_MIN_BYTES = 1 << 20
RETAINED_BYTES = 1 << 30
HOST_MEMORY_VARIABLE = "DMLSPEC_HOST_MEMORY"  # "system": leave glibc's settings alone

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8


@dataclass(frozen=True)
class Window:
    """A packed input passed as a 1-D buffer that holds it after `skip` leading elements."""

    skip: int
    shape: tuple[int, ...]

    def unwrap(self, buffer: Any) -> Any:
        """The array the window holds (traced)."""
        count = int(np.prod(self.shape, dtype=np.int64))
        return buffer[self.skip : self.skip + count].reshape(self.shape)


class _Span:
    """Memory NumPy did not allocate for this array, exposed read-only; keeps `owner` alive
    (NumPy keeps this object as the view's base)."""

    def __init__(self, owner: np.ndarray, address: int, count: int) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "data": (address, True),
            "shape": (count,),
            "typestr": owner.dtype.str,
            "version": 3,
        }


def window(array: Any) -> tuple[np.ndarray, Window] | None:
    """A 64-byte aligned 1-D view covering `array` and the Window that recovers it, or None
    where the array is passed as it is: not a NumPy array, small, already aligned (XLA aliases
    it), not C-contiguous, or misaligned by a fraction of an element."""
    if type(array) is not np.ndarray or array.nbytes < WINDOW_MIN_BYTES:
        return None
    address = array.ctypes.data
    misalignment = address % ALIGNMENT
    if misalignment == 0 or misalignment % array.itemsize or not array.flags.c_contiguous:
        return None
    skip = misalignment // array.itemsize
    # The `misalignment` bytes before the data lie in the same 64-byte block, hence the same
    # page: reading them is safe; they are never used.
    span = np.asarray(_Span(array, address - misalignment, array.size + skip))
    return span, Window(skip, array.shape)


def _system_settings_asked() -> bool:
    return os.environ.get(HOST_MEMORY_VARIABLE, "").lower() == "system"


@functools.cache
def prepare_process() -> tuple[bool, bool, bool]:
    """Once per process: (freed memory kept for reuse, CPU computations run inline, NumPy
    arrays allocated aligned)."""
    return keep_freed_memory(), run_cpu_computations_inline(), align_numpy_arrays()


# The name NumPy reports for the aligned handler (None where the extension was not built).
ALIGNED_HANDLER: str | None = None if _aligned is None else _aligned.HANDLER_NAME
NUMPY_HANDLER = "default_allocator"  # NumPy's own: the only handler replaced


def align_numpy_arrays() -> bool:
    """Have NumPy allocate array data 64-byte aligned from now on, in the calling thread's
    context (NumPy keeps its memory handler in a context variable: threads started later begin
    with NumPy's own). False where it does not apply: DMLSPEC_HOST_MEMORY=system, a handler
    of the user's or another library's is in place (kept), or the optional extension was not
    built (no C compiler at install)."""
    if _system_settings_asked() or _aligned is None:
        return False
    multiarray = _numpy_multiarray()
    current = multiarray.get_handler_name()
    if current != NUMPY_HANDLER:
        return bool(current == ALIGNED_HANDLER)
    huge_pages = getattr(multiarray, "_get_madvise_hugepage", lambda: False)()
    _aligned.install(ALIGNMENT, bool(huge_pages))  # NumPy's huge-page advice kept
    return bool(multiarray.get_handler_name() == ALIGNED_HANDLER)


def _numpy_multiarray() -> Any:
    try:
        from numpy._core import multiarray  # NumPy 2
    except ImportError:
        from numpy.core import multiarray  # type: ignore[no-redef]  # NumPy 1.26
    return multiarray


def run_cpu_computations_inline() -> bool:
    """Have JAX's CPU client run each computation on the calling thread (its outputs then come
    from the main malloc arena). False where it does not apply: DMLSPEC_HOST_MEMORY=system,
    the user set JAX_CPU_ENABLE_ASYNC_DISPATCH, or JAX's backends already started."""
    if _system_settings_asked() or "JAX_CPU_ENABLE_ASYNC_DISPATCH" in os.environ:
        return False
    import jax
    from jax._src import xla_bridge  # no public way to ask whether backends have started

    if xla_bridge.backends_are_initialized():
        return False
    config: Any = jax.config  # JAX's config object is untyped
    config.update("jax_cpu_enable_async_dispatch", False)
    return True


@functools.cache
def keep_freed_memory() -> bool:
    """Make glibc reuse freed large blocks instead of unmapping them (once per process).
    False where it does not apply: not glibc, or DMLSPEC_HOST_MEMORY=system."""
    if _system_settings_asked():
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018  (present in glibc only)
    except (OSError, AttributeError):
        return False
    # Large blocks from the heap, not from mmap (whose pages are new on every allocation)...
    if not mallopt(_M_MMAP_MAX, 0):
        return False
    # ...and up to RETAINED_BYTES of freed memory at the heap's top kept for the next one.
    mallopt(_M_TRIM_THRESHOLD, RETAINED_BYTES)
    # One arena: threads started from now on (JAX's, onnxruntime's) share the main heap. A
    # thread's own arena grows in 64 MiB heaps and mmaps anything larger on every allocation.
    mallopt(_M_ARENA_MAX, 1)
    return True
