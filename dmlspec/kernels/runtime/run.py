"""`run_operator`, the backend contract: operator JSON and NumPy inputs in, NumPy outputs out.
Each distinct operator JSON is validated and read once (cached); a repeated call on small
NumPy arrays reuses its program directly, any other goes through the call path."""

from __future__ import annotations

import dataclasses
import functools
import json
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import numpy as np

from ...errors import InvalidOperator
from .. import host
from ..layout import Layout
from .cache import _CACHE_LIMIT, _exact_key
from .call import _resolve
from .desc import _data_type_of, _dtype_name, _item_layout, _layout, _view
from .program import _bytes_of, _call_x64, _wait
from .table import KernelTable


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
