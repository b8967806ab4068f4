"""Run a family primitive as the kernel runtime does, from a spec's kernel section.

The static parameters are the kernel section's own expressions evaluated on the desc (data
types become NumPy type names, lists tuples), the primitive is jitted with them under 64-bit
types, and each result is reshaped to its output's Sizes and cast to its DataType. The
documented examples are read from the catalog: no value is retyped.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from dmlspec import load_catalog
from dmlspec.binding import bind_desc
from dmlspec.compare import exact_mismatches
from dmlspec.expr import Absent
from dmlspec.kernels import host, primitives
from dmlspec.kernels.runtime import enable_compilation_cache
from dmlspec.model import ExampleTensor, OperatorSpec, example_field_value

__all__ = [
    "CATALOG",
    "assert_exact",
    "example_ids",
    "family",
    "run",
    "run_example",
    "run_kernel",
    "static_parameters",
    "tensor",
]

CATALOG = load_catalog()
DATA_TYPES = frozenset(d.name for d in CATALOG.common.data_types)
enable_compilation_cache()


def numpy_type(data_type: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(data_type.removeprefix("DML_TENSOR_DATA_TYPE_")).numpy)


def _static(value: Any) -> Any:
    """A static value as the runtime passes it: data types as NumPy names, lists as tuples."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, str):
        short = value.removeprefix("DML_TENSOR_DATA_TYPE_")
        if short in DATA_TYPES:
            return str(numpy_type(short))
    return value


def static_parameters(spec: OperatorSpec, desc: Mapping[str, Any]) -> dict[str, Any]:
    """The kernel section's static parameters for a complete desc (absent optional: None)."""
    env = bind_desc(CATALOG.common, spec, desc)
    values: dict[str, Any] = {}
    for name, expression in spec.checked_kernel.static:
        try:
            values[name] = _static(expression.evaluate(env))
        except Absent:
            values[name] = None
    return values


@functools.cache
def _jitted(primitive: str, function: str | None, static: tuple[tuple[str, Any], ...]) -> Any:
    keywords = dict(static)
    if function is not None:
        keywords["function"] = function
    return jax.jit(functools.partial(getattr(primitives, primitive), **keywords))


def run_kernel(
    spec: OperatorSpec, desc: Mapping[str, Any], inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """The kernel section run on a desc: inputs by field (a tensor array as a list, an absent
    optional input left out), outputs by field as NumPy arrays shaped and typed as the desc."""
    kernel = spec.checked_kernel
    static = static_parameters(spec, desc)
    arrays = []
    for _, field in kernel.inputs:
        value = inputs.get(field)
        arrays.append(tuple(value) if isinstance(value, list) else value)
    function = _jitted(kernel.primitive, kernel.function, tuple(static.items()))
    with jax.enable_x64(True):
        result = function(*arrays)
    results = result if len(kernel.outputs) > 1 else (result,)
    outputs: dict[str, Any] = {}
    for field, value in zip(kernel.outputs, results, strict=True):
        declared = desc[field]
        if isinstance(declared, list):  # a tensor array: one array per desc
            outputs[field] = [
                np.asarray(v).reshape(d["Sizes"]).astype(numpy_type(d["DataType"]))
                for v, d in zip(value, declared, strict=True)
            ]
        else:
            shaped = np.asarray(value).reshape(declared["Sizes"])
            outputs[field] = shaped.astype(numpy_type(declared["DataType"]))
    return outputs


def family(primitive: str) -> list[str]:
    """The operators whose kernel section names `primitive`."""
    return sorted(s.name for s in CATALOG.with_kernels if s.checked_kernel.primitive == primitive)


def tensor(array: Any, sizes: Sequence[int] | None = None) -> dict[str, Any]:
    """The desc of an array (or of an output of these sizes and the array's type)."""
    dtype = np.dtype(array) if isinstance(array, type) else np.asarray(array).dtype
    name = next(d.name for d in CATALOG.common.data_types if d.numpy == dtype.name)
    shape = np.shape(array) if sizes is None else sizes
    return {"DataType": name, "Sizes": list(shape)}


def run(name: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """run_kernel for the named operator."""
    return run_kernel(CATALOG.operator(name), desc, inputs)


def _tensor(value: ExampleTensor) -> dict[str, Any]:
    return {"DataType": value.data_type, "Sizes": list(value.sizes)}


def _array(value: ExampleTensor) -> np.ndarray:
    return np.array(value.values, dtype=numpy_type(value.data_type or ""))


def _shared_inputs(spec: OperatorSpec) -> dict[str, ExampleTensor]:
    """Input tensors a page prints once for all its examples ("the examples in this section
    all use the input below"): the first example holding each one, for those that leave a
    required input out."""
    shared: dict[str, ExampleTensor] = {}
    for example in spec.examples:
        for name, value in example.valid_form:
            if isinstance(value, ExampleTensor) and value.values is not None:
                shared.setdefault(name, value)
    return shared


def example_ids(names: Sequence[str]) -> list[tuple[str, str]]:
    """(operator, example id) for every example whose outputs have documented values."""
    cases = []
    for name in names:
        spec = CATALOG.operator(name)
        for example in spec.examples:
            fields = example.valid_form.as_dict()
            outputs = [fields.get(o) for o in spec.checked_kernel.outputs]
            given = [o for o in outputs if o is not None]
            if given and all(_has_values(o) for o in given):
                cases.append((name, example.id))
    return cases


def _has_values(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(v.values is not None for v in value)
    return isinstance(value, ExampleTensor) and value.values is not None


def run_example(name: str, example_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(documented outputs, kernel outputs) of one example, by output field."""
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    fields = example.valid_form.as_dict()
    by_name = {f.name: f for f in spec.fields}
    for name_, shared in _shared_inputs(spec).items():
        field = by_name[name_]
        if field.kind.startswith("input") and not field.optional and name_ not in fields:
            fields[name_] = shared
    desc: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for field_name, value in fields.items():
        field = by_name[field_name]
        if isinstance(value, ExampleTensor):
            desc[field_name] = _tensor(value)
            target = inputs if field.kind == "input_tensor" else expected
            if value.values is not None:
                target[field_name] = _array(value)
        elif isinstance(value, tuple):
            desc[field_name] = [_tensor(v) for v in value]
            target = inputs if field.kind == "input_tensor_array" else expected
            target[field_name] = [_array(v) for v in value]
        else:
            desc[field_name] = example_field_value(field, value)
    return expected, run_kernel(spec, desc, inputs)


def assert_exact(expected: Any, actual: Any) -> None:
    """Same shape, type and bits (NaN payloads and signed zeros included)."""
    if isinstance(expected, list):
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual, strict=True):
            assert_exact(e, a)
        return
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert (actual.shape, actual.dtype) == (expected.shape, expected.dtype)
    mismatches = exact_mismatches(expected, actual)
    assert not mismatches, [str(m) for m in mismatches]


def misaligned(shape: tuple[int, ...], dtype: str, offset: int) -> np.ndarray:
    """An array whose data starts `offset` bytes past a 64-byte boundary."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + 2 * host.ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % host.ALIGNMENT + offset
    array = raw[start : start + nbytes].view(dtype).reshape(shape)
    array[...] = np.arange(array.size, dtype=np.int64).reshape(shape) % 1000
    return array


def numpy_arg(name: str, data: np.ndarray, axes: list[int], direction: str) -> np.ndarray:
    """The independent answer: NumPy's argmax (first of equals) in FLOAT64 over the reduced
    axes moved last and flattened; DECREASING searches the reversed rows."""
    kept = [d for d in range(data.ndim) if d not in axes]
    rows = np.transpose(data, kept + sorted(axes)).astype(np.float64)
    rows = rows.reshape(*[data.shape[d] for d in kept], -1)
    rows = -rows if name == "ARGMIN" else rows
    if direction == "DECREASING":
        index = rows.shape[-1] - 1 - np.argmax(rows[..., ::-1], axis=-1)
    else:
        index = np.argmax(rows, axis=-1)
    return index.reshape([1 if d in axes else s for d, s in enumerate(data.shape)])
