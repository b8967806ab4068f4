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

The parts, one job each (names with a leading underscore are shared between them only):
- `call`: `call_kernel`, the call path: a call's key, its program, its arguments.
- `run`: `run_operator`, the backend contract: operator JSON and NumPy inputs and outputs.
- `desc`: building a call's desc, and its plan, validated once per distinct desc.
- `program`: jitting the primitive with its static parameters, layouts, windows and donated
  buffers; XLA's options by program size; calling a program with 64-bit types.
- `cache`: cache limits, exact keys, the program LRU, JAX's compilation cache folder.
- `table`: `KernelTable` (what a generated kernel module declares) and a desc's plan.
"""

from __future__ import annotations

from .. import host
from .cache import CACHE_VARIABLE, compilation_cache_folder, enable_compilation_cache
from .call import call_kernel
from .desc import build_desc
from .program import SMALL_PROGRAM_BYTES, compiler_options, trace_count
from .run import Expected, run_operator
from .table import KernelTable

__all__ = [
    "CACHE_VARIABLE",
    "SMALL_PROGRAM_BYTES",
    "Expected",
    "KernelTable",
    "build_desc",
    "call_kernel",
    "compilation_cache_folder",
    "compiler_options",
    "enable_compilation_cache",
    "run_operator",
    "trace_count",
]

host.prepare_process()  # before JAX's CPU backend starts, where it has not yet
