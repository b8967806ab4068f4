"""Helpers for the NumPy reference's tests: operator JSON from hand-written fields, and the
specs' documented examples as (operator, inputs, expected outputs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlspec import load_catalog, reference
from dmlspec.model import ExampleTensor, OperatorSpec, example_field_value

CATALOG = load_catalog()

# The operators of issue 14 (the reference's data-movement, reduction and generator families).
ISSUE_14 = [
    "GATHER",
    "GATHER_ELEMENTS",
    "GATHER_ND1",
    "SLICE",
    "SLICE1",
    "SLICE_GRAD",
    "PADDING",
    "PADDING1",
    "TILE",
    "JOIN",
    "SPLIT",
    "SPACE_TO_DEPTH",
    "SPACE_TO_DEPTH1",
    "DEPTH_TO_SPACE",
    "DEPTH_TO_SPACE1",
    "ONE_HOT",
    "REVERSE_SUBSEQUENCES",
    "DIAGONAL_MATRIX",
    "DIAGONAL_MATRIX1",
    "FILL_VALUE_CONSTANT",
    "NONZERO_COORDINATES",
    "TOP_K",
    "TOP_K1",
    "REDUCE",
    "ARGMIN",
    "ARGMAX",
    "CUMULATIVE_SUMMATION",
    "CUMULATIVE_PRODUCT",
    "VALUE_SCALE_2D",
    "RANDOM_GENERATOR",
]


def dtype_of(data_type: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(data_type.removeprefix("DML_TENSOR_DATA_TYPE_")).numpy)


def tensor(data_type: str, sizes: Any) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def call(name: str, desc: dict[str, Any], **inputs: Any) -> dict[str, Any]:
    """`name` run by the reference on `inputs` (nested lists, typed by their descs; a list of
    them for a tensor array)."""
    arrays: dict[str, Any] = {}
    for field, value in inputs.items():
        raw = desc[field]
        if isinstance(raw, list):
            arrays[field] = [_typed(v, d) for v, d in zip(value, raw, strict=True)]
        else:
            arrays[field] = _typed(value, raw)
    return reference.run({"type": f"DML_OPERATOR_{name}", "desc": desc}, arrays)


def _typed(value: Any, raw: dict[str, Any]) -> np.ndarray:
    """Values as a tensor desc says: shaped as its Sizes, or a 1-D buffer where it has
    Strides."""
    array = np.array(value, dtype=dtype_of(raw["DataType"]))
    return array if raw.get("Strides") is not None else array.reshape(raw["Sizes"])


def bits(array: Any) -> list[int]:
    """Each element's encoding, to compare -0 and NaN exactly."""
    values = np.ascontiguousarray(array)
    return values.view(f"u{values.itemsize}").reshape(-1).tolist()


# ---- the specs' documented examples --------------------------------------------------------


@dataclass(frozen=True)
class ExampleCase:
    operator: dict[str, Any]
    inputs: dict[str, Any]
    expected: dict[str, Any]  # output field -> array (a list of arrays for a tensor array)


def _array(value: ExampleTensor) -> np.ndarray:
    return np.array(value.values, dtype=dtype_of(value.data_type or "")).reshape(value.sizes)


def _shared(spec: OperatorSpec) -> dict[str, Any]:
    """Required input tensors a page prints once for the examples that follow ("The examples
    in this section all use the input below"): the first example that gives them (a spec's
    corrected forms carry them already; a drafted spec's do not). An optional input an
    example leaves out ("InputTensor: none") stays out."""
    shared: dict[str, Any] = {}
    for example in spec.examples:
        for name, value in example.valid_form.items:
            field = spec.field(name)
            has_values = isinstance(value, ExampleTensor) and value.values is not None
            if field.kind == "input_tensor" and not field.optional and has_values:
                shared.setdefault(name, value)
    return shared


def example_case(spec: OperatorSpec, example_id: str) -> ExampleCase | None:
    """An example as a reference run, or None where it prints no output values."""
    example = next(e for e in spec.examples if e.id == example_id)
    given = {**_shared(spec), **example.valid_form.as_dict()}
    desc: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for name, value in given.items():
        field = spec.field(name)
        if isinstance(value, ExampleTensor):
            desc[name] = tensor(value.data_type or "", value.sizes)
            if value.values is None:
                continue
            (expected if field.is_output else inputs)[name] = _array(value)
        elif isinstance(value, tuple):
            desc[name] = [tensor(t.data_type or "", t.sizes) for t in value]
            (expected if field.is_output else inputs)[name] = [_array(t) for t in value]
        else:
            desc[name] = example_field_value(field, value)
    outputs = [f.name for f in spec.fields if f.is_output and f.name in desc]
    if not outputs or any(name not in expected for name in outputs):
        return None
    operator = {"type": spec.operator_type, "desc": desc}
    return ExampleCase(operator, inputs, expected)


def example_ids(names: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """(operator, example id) of every example that prints its outputs."""
    found = []
    for name in names:
        spec = CATALOG.operator(name)
        for example in spec.examples:
            if example_case(spec, example.id) is not None:
                found.append((name, example.id))
    return found


def assert_outputs_equal(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    assert set(actual) >= set(expected)
    for name, want in expected.items():
        got = actual[name]
        if isinstance(want, list):
            assert isinstance(got, list) and len(got) == len(want), name
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape, name
                np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
