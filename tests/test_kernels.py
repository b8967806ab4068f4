"""The JAX kernels (dmlspec.ops) against the documented examples and the NumPy reference."""

from __future__ import annotations

import gc
import math
import weakref
from collections import OrderedDict
from fractions import Fraction
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dmlspec import InvalidOperator, Unsupported, load_catalog, ops, reference
from dmlspec.backends import JaxBackend, NumpyBackend, load_backend
from dmlspec.binding import bind_desc
from dmlspec.compare import exact_mismatches, ulp_mismatches
from dmlspec.kernels import runtime
from dmlspec.kernels.runtime import trace_count
from dmlspec.model import ExampleTensor, OperatorSpec
from dmlspec.model.examples import example_field_value

CATALOG = load_catalog()
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def numpy_type(data_type: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(data_type).numpy)


def highest_row(name: str, tensor: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    row = CATALOG.operator(name).support[-1].tensor(tensor)
    return row.dimension_counts, row.data_types


def example_case(
    spec: OperatorSpec, fields: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    # the page's notation ({3, 3}) as operator JSON takes it
    desc = {
        k: v.to_json() if isinstance(v, ExampleTensor) else example_field_value(spec.field(k), v)
        for k, v in fields.items()
    }
    for tensor in desc.values():
        if isinstance(tensor, dict):
            tensor.pop("Values", None)
    inputs = {
        name: np.array(value.values, dtype=numpy_type(value.data_type or ""))
        for name, value in fields.items()
        if isinstance(value, ExampleTensor) and name != spec.checked_kernel.output
    }
    expected = fields[spec.checked_kernel.output]
    assert isinstance(expected, ExampleTensor)
    return {"type": spec.operator_type, "desc": desc}, inputs, expected


# The data movement, reduction and generator families (tensor arrays, several outputs) run
# their documented examples in tests/test_kernels_{data_movement,reduction,generators}.py and
# tests/test_reference_*.py.
FAMILY_PRIMITIVES = ("data_movement", "reduction", "generator")
EXAMPLES = [
    (spec.name, example.id)
    for spec in CATALOG.with_kernels
    if spec.checked_kernel.primitive not in FAMILY_PRIMITIVES and spec.name != "VALUE_SCALE_2D"
    for example in spec.examples
    if isinstance(example.valid_form.as_dict().get(spec.checked_kernel.output), ExampleTensor)
    and example.valid_form.as_dict()[spec.checked_kernel.output].values is not None  # type: ignore[union-attr]
]


def assert_allowed(
    expected: np.ndarray, actual: np.ndarray, collisions: dict[tuple[int, ...], list[Any]]
) -> None:
    """Bitwise equal, except where writes collided: there, one of the colliding values."""
    defined = np.ones(expected.shape, dtype=bool)
    flat_actual = actual.reshape(-1)
    for (cell,), values in collisions.items():
        defined.reshape(-1)[cell] = False
        allowed = {np.asarray(v, dtype=actual.dtype).tobytes() for v in values}
        assert flat_actual[cell].tobytes() in allowed, (cell, flat_actual[cell], values)
    mismatches = exact_mismatches(expected, actual, defined)
    assert not mismatches, [str(m) for m in mismatches]


@pytest.mark.parametrize(("name", "example_id"), EXAMPLES)
def test_documented_examples_give_the_documented_output(name: str, example_id: str) -> None:
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    operator, inputs, expected = example_case(spec, example.valid_form.as_dict())
    documented = np.array(expected.values, dtype=numpy_type(expected.data_type or ""))
    from_reference, collisions = reference.run_recording(operator, inputs)
    from_jax = ops.run(operator, inputs)
    name_of_output = spec.checked_kernel.output
    kind = CATALOG.common.data_type(expected.data_type or "").kind
    rule = spec.checked_semantics.comparison_for(name_of_output, kind, expected.data_type or "")
    for result in (from_reference, from_jax):
        output = result[name_of_output]
        assert output.dtype == documented.dtype and output.shape == documented.shape
        if rule.rule == "ulp" and rule.ulp_scale is None and rule.max_ulps is not None:
            # a computed example (a corrected form's float results): within the spec's bound
            found = ulp_mismatches(
                documented,
                output,
                documented,
                rule.max_ulps,
                None,
                rule.absolute_tolerance(bind_desc(CATALOG.common, spec, operator["desc"])),
            )
            assert not found, [str(m) for m in found]
        else:
            assert_allowed(documented, output, collisions.get(name_of_output, {}))


def test_scatter_example_with_overlapping_writes_accepts_either_write() -> None:
    spec = CATALOG.operator("SCATTER")
    example = next(e for e in spec.examples if e.id == "example_1_1d_scatter")
    operator, inputs, _ = example_case(spec, example.valid_form.as_dict())
    _, collisions = reference.run_recording(operator, inputs)
    assert collisions == {"OutputTensor": {(3,): [5.0, 7.0]}}
    for winner in (5.0, 7.0):  # a backend resolving the overlap either way is correct
        output = np.array([8, 6, 2, winner, 4], dtype=np.float32)
        assert_allowed(np.array([8, 6, 2, 7, 4], np.float32), output, collisions["OutputTensor"])
    with pytest.raises(AssertionError):
        assert_allowed(
            np.array([8, 6, 2, 7, 4], np.float32),
            np.array([8, 6, 2, 6, 4], np.float32),
            collisions["OutputTensor"],
        )


def test_ops_functions_use_full_dimension_counts_by_default() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    picked = ops.gather_nd(x, np.array([[1, 2], [0, 0]], np.int64))
    # Two 2-coordinate tuples: output sizes [2] + [] right-aligned to rank 2, i.e. [1, 2].
    assert np.asarray(picked).tolist() == [[5, 0]]
    assert ops.scatter is ops.scatter_elements


def test_invalid_desc_raises_with_constraint_ids_before_tracing() -> None:
    before = trace_count()
    with pytest.raises(InvalidOperator) as raised:
        ops.scatter_nd(
            np.zeros((2, 3), np.float32), np.zeros((4, 1), np.uint32), np.zeros((2, 3), np.float32)
        )
    assert raised.value.constraint_ids == ("SCATTER_ND.C8",)
    assert "UpdatesTensor.Sizes = [2, 3]; ExpectedUpdatesSizes = [1, 4]" in str(raised.value) or (
        "ExpectedUpdatesSizes = [4, 3]" in str(raised.value)
    )
    with pytest.raises(InvalidOperator, match=r"SUPPORT\.data_type"):
        ops.scatter_elements(
            np.zeros(3, np.float32), np.zeros(3, np.int16), np.zeros(3, np.float32)
        )
    with pytest.raises(InvalidOperator, match="no DirectML data type"):
        ops.scatter_elements(
            np.zeros(3, np.complex64), np.zeros(3, np.int32), np.zeros(3, np.complex64)
        )
    assert trace_count() == before


def test_a_repeated_call_does_not_retrace() -> None:
    x = np.zeros((3, 7), np.float32)
    indices = np.array([[0, 1, 2]], np.uint32)
    updates = np.ones((1, 7), np.float32)
    ops.scatter_elements(x, indices.T.repeat(7, axis=1)[:1], updates, Axis=0)
    after_first = trace_count()
    for value in (2.0, 3.0):
        ops.scatter_elements(x, indices.T.repeat(7, axis=1)[:1], updates * value, Axis=0)
    assert trace_count() == after_first


def test_donated_input_gives_the_same_result() -> None:
    x = jax.numpy.arange(8, dtype=jax.numpy.float32).reshape(1, 8)
    indices = np.array([[4], [3]], np.uint32)
    updates = np.array([[9, 10]], np.float32)
    kept = ops.scatter_nd(np.asarray(x), indices, updates, InputDimensionCount=1)
    given = ops.scatter_nd(x, indices, updates, InputDimensionCount=1, donate=True)
    assert np.asarray(given).tolist() == np.asarray(kept).tolist()


def test_out_buffer_receives_the_result_for_every_operator() -> None:
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    sequence = ops.fill_value_sequence(
        OutputTensor={"DataType": "FLOAT32", "Sizes": [2, 3]},
        ValueStart=1.0,
        ValueDelta=0.5,
        out=jax.numpy.full((2, 3), 7, jax.numpy.float32),
    )
    assert np.asarray(sequence).tolist() == [[1.0, 1.5, 2.0], [2.5, 3.0, 3.5]]
    rows = np.array([[2], [0]], np.int32)
    gathered = ops.gather_nd(data, rows, out=jax.numpy.zeros((2, 3), jax.numpy.float32))
    assert np.asarray(gathered).tolist() == [[6, 7, 8], [0, 1, 2]]
    updates = np.full((2, 3), -1, np.float32)
    scattered = ops.scatter_nd(data, rows, updates, out=jax.numpy.zeros((4, 3), np.float32))
    assert np.asarray(scattered).tolist() == [[-1] * 3, [3, 4, 5], [-1] * 3, [9, 10, 11]]
    moved = ops.scatter_elements(
        data, np.zeros((1, 3), np.int32), updates[:1], Axis=0, out=jax.numpy.ones((4, 3))
    )
    assert np.asarray(moved)[0].tolist() == [-1, -1, -1]


def test_out_buffer_of_the_wrong_shape_or_type_is_refused_clearly() -> None:
    output = {"DataType": "INT32", "Sizes": [4]}
    with pytest.raises(ValueError, match=r"shape \(4,\) and dtype int32; got shape \(5,\)"):
        ops.fill_value_sequence(OutputTensor=output, out=jax.numpy.zeros(5, np.int32))
    with pytest.raises(ValueError, match=r"dtype int32; got shape .* dtype float32"):
        ops.fill_value_sequence(OutputTensor=output, out=jax.numpy.zeros(4, np.float32))


def test_calls_differing_only_in_a_field_do_not_share_a_plan() -> None:
    # Calls are cached per signature (shapes, dtypes, fields); a field change must re-plan.
    output = {"DataType": "INT32", "Sizes": [3]}
    first = ops.fill_value_sequence(OutputTensor=output, ValueStart=1, ValueDelta=2)
    again = ops.fill_value_sequence(OutputTensor=output, ValueStart=1, ValueDelta=3)
    longer = ops.fill_value_sequence(
        OutputTensor={"DataType": "INT32", "Sizes": [4]}, ValueStart=1, ValueDelta=3
    )
    as_list = ops.gather_nd([[1.5, 2.5], [3.5, 4.5]], [[1]])
    assert np.asarray(first).tolist() == [1, 3, 5]
    assert np.asarray(again).tolist() == [1, 4, 7]
    assert np.asarray(longer).tolist() == [1, 4, 7, 10]
    assert np.asarray(as_list).tolist() == [[3.5, 4.5]]


def test_the_call_cache_tells_apart_everything_a_desc_depends_on() -> None:
    # The per-call key writes list and dict fields exactly, nested ones too (a fused
    # activation's Desc); absent optional inputs and tensor arrays have their slots.
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    window = {"DataType": "FLOAT32", "Sizes": [2, 2]}
    for offset in (0, 1, 2):
        got = ops.slice(x, Offsets=[offset] * 2, Sizes=[2, 2], Strides=[1, 1], OutputTensor=window)
        np.testing.assert_array_equal(np.asarray(got), x[offset : offset + 2, offset : offset + 2])
    before = trace_count()
    as_tuples = ops.slice(x, Offsets=(1, 1), Sizes=(2, 2), Strides=(1, 1), OutputTensor=window)
    np.testing.assert_array_equal(np.asarray(as_tuples), x[1:3, 1:3])
    assert trace_count() == before  # a tuple where a list was: the same desc, no new program
    scaled = [
        np.asarray(ops.element_wise_identity(x, ScaleBias={"Scale": scale, "Bias": 1.0}))
        for scale in (2.0, 3.0)
    ]
    np.testing.assert_array_equal(scaled[0], 2 * x + 1)
    np.testing.assert_array_equal(scaled[1], 3 * x + 1)
    # Every field left to its default: a key of its own (no fields written), apart from the
    # same call with a field given, before it and after it.
    doubled = {"Scale": 2.0, "Bias": 0.0}
    for scale_bias in (doubled, None, doubled, None):
        got = np.asarray(ops.element_wise_identity(x, ScaleBias=scale_bias))
        np.testing.assert_array_equal(got, x if scale_bias is None else 2 * x)
    a, b = np.array([-2.0, 1.0], np.float32), np.array([0.0, 1.0], np.float32)
    for alpha in (0.5, 2.0):  # a nested Desc
        elu = {"Type": "DML_OPERATOR_ACTIVATION_ELU", "Desc": {"Alpha": alpha}}
        fused = np.asarray(ops.element_wise_add1(a, b, FusedActivation=elu))
        np.testing.assert_allclose(fused, [alpha * np.expm1(np.float32(-2.0)), 2.0], rtol=1e-6)
    diagonal = {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
        "ValueDataType": "FLOAT32",
        "Value": 5.0,
        "DiagonalFillBegin": 0,
        "DiagonalFillEnd": 1,
    }
    filled = ops.diagonal_matrix1(**diagonal)
    kept = ops.diagonal_matrix1(InputTensor=x[:2, :2], **diagonal)  # the optional input given
    assert np.asarray(filled).tolist() == [[5, 0], [0, 5]]
    assert np.asarray(kept).tolist() == [[5, 1], [4, 5]]
    for widths in ((1, 3), (2, 2), (1, 1, 2)):
        parts = [x[:, :w] for w in widths]
        joined = ops.join(parts, Axis=1, OutputTensor={"DataType": "FLOAT32", "Sizes": [4, 4]})
        np.testing.assert_array_equal(np.asarray(joined), np.concatenate(parts, axis=1))


def test_the_call_cache_tells_apart_values_python_compares_equal() -> None:
    # True == 1 == 1.0 and -0.0 == 0.0 in Python: a key compared with == took a call with
    # Axis=True for the valid call with Axis=1 before it, and ran ValueStart=-0.0 with the
    # program compiled for 0.0.
    parts = [np.ones((2, 2), np.float32)] * 2
    output = {"DataType": "FLOAT32", "Sizes": [2, 4]}
    ops.join(parts, OutputTensor=output, Axis=1)
    for axis in (True, 1.0):
        with pytest.raises(InvalidOperator, match="Axis must be an integer"):
            ops.join(parts, OutputTensor=output, Axis=axis)
    fill: dict[str, Any] = {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
        "ValueDataType": "FLOAT32",
    }
    zeros = ops.fill_value_sequence(**fill, ValueStart=0.0, ValueDelta=0.0)
    negative_zeros = ops.fill_value_sequence(**fill, ValueStart=-0.0, ValueDelta=-0.0)
    assert not np.signbit(np.asarray(zeros)).any()
    assert np.signbit(np.asarray(negative_zeros)).all()


def test_numpy_scalars_in_fields_are_read_as_the_numbers_they_hold() -> None:
    # What users compute their fields from (x.min(), a shape's product): before, the desc's
    # JSON key raised "Object of type float32 is not JSON serializable".
    filled = ops.fill_value_sequence(
        OutputTensor={"DataType": "FLOAT32", "Sizes": [np.int64(3)]},
        ValueStart=np.float32(1.5),
        ValueDelta=np.float64(0.5),
    )
    assert np.asarray(filled).tolist() == [1.5, 2.0, 2.5]
    x = np.arange(4, dtype=np.float32)
    scaled = ops.element_wise_identity(x, ScaleBias={"Scale": np.float32(2), "Bias": np.int8(1)})
    np.testing.assert_array_equal(np.asarray(scaled), 2 * x + 1)


@pytest.mark.parametrize("value", [object(), {1, 2}, b"1"], ids=["object", "set", "bytes"])
def test_a_field_json_cannot_hold_is_named(value: Any) -> None:
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(InvalidOperator, match=r"ScaleBias\.Scale must be a JSON value .* got "):
        ops.element_wise_identity(x, ScaleBias={"Scale": value, "Bias": 1.0})


def test_a_process_keeps_only_the_recent_programs_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each compiled program holds its executable and lowered module: a long run of distinct
    # shapes keeps the most recent _PROGRAM_LIMIT, and a dropped one is compiled again.
    monkeypatch.setattr(runtime.cache, "_PROGRAM_LIMIT", 3)
    monkeypatch.setattr(runtime.cache, "_programs", OrderedDict())
    monkeypatch.setattr(runtime.call, "_calls", {})
    programs = []
    for size in range(1, 6):
        got = ops.element_wise_identity(np.arange(size, dtype=np.float32))
        np.testing.assert_array_equal(np.asarray(got), np.arange(size, dtype=np.float32))
        programs.append(weakref.ref(next(reversed(runtime.cache._programs.values()))))
        assert len(runtime.cache._programs) <= 3 and len(runtime.call._calls) <= 3
    gc.collect()
    assert [p() is None for p in programs] == [True, True, False, False, False]
    before = trace_count()
    again = ops.element_wise_identity(np.arange(1, dtype=np.float32))
    assert trace_count() == before + 1
    np.testing.assert_array_equal(np.asarray(again), [0.0])


def test_small_programs_compile_with_xla_elemental_emitters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Up to SMALL_PROGRAM_BYTES in arguments and results (here: input and output of EXP, and
    # JOIN's items, counted whole), XLA's elemental emitters; one element more, XLA's default.
    options: list[Any] = []
    jit = jax.jit

    def spy(function: Any, **kwargs: Any) -> Any:
        options.append(kwargs.get("compiler_options"))
        return jit(function, **kwargs)

    monkeypatch.setattr(jax, "jit", spy)
    monkeypatch.setattr(runtime.cache, "_programs", OrderedDict())
    monkeypatch.setattr(runtime.call, "_calls", {})
    elements = runtime.SMALL_PROGRAM_BYTES // 8  # float32 in and out
    for count in (elements, elements + 1):
        x = np.linspace(-1, 1, count, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(ops.element_wise_exp(x)), np.exp(x), rtol=1e-6)
    items = [np.ones(elements // 2, np.float32), np.zeros(elements // 2, np.float32)]
    joined = ops.join(items, Axis=0, OutputTensor={"DataType": "FLOAT32", "Sizes": [elements]})
    np.testing.assert_array_equal(np.asarray(joined), np.concatenate(items))
    # A program with options is jitted beside its twin without, for calls inside a user's jit.
    elemental = {"xla_cpu_use_fusion_emitters": False}
    assert options == [elemental, None, None, elemental, None]
    monkeypatch.setattr(runtime.program, "_on_cpu", lambda: False)
    assert runtime.compiler_options(1) == ()


def test_small_programs_run_inside_a_users_jit() -> None:
    # JAX takes compiler options on a top-level jit only: staged into the user's program, the
    # kernel runs without them, and a top-level call afterwards still runs with them.
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    expected = np.exp(x)
    np.testing.assert_allclose(np.asarray(jax.jit(ops.element_wise_exp)(x)), expected, rtol=1e-6)
    assert "exp" in str(jax.make_jaxpr(ops.element_wise_exp)(x))
    np.testing.assert_allclose(np.asarray(ops.element_wise_exp(x)), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="unknown feature level"):  # other errors still raise
        jax.jit(lambda v: ops.element_wise_exp(v, feature_level="9_9"))(x)


def test_64_bit_values_are_exact_without_a_global_flag() -> None:
    big = np.array([2**63 + 7, 2**40 + 3, 1], dtype=np.uint64)
    moved = ops.scatter_elements(
        big, np.array([2, 0], np.uint64), np.array([2**64 - 1, 2**33], np.uint64)
    )
    assert np.asarray(moved).dtype == np.uint64
    assert np.asarray(moved).tolist() == [2**33, 2**40 + 3, 2**64 - 1]
    sequence = ops.fill_value_sequence(
        OutputTensor={"DataType": "INT64", "Sizes": [3]}, ValueStart=-(2**62), ValueDelta=2**61
    )
    assert np.asarray(sequence).tolist() == [-(2**62), -(2**61), 0]
    assert jax.numpy.arange(2).dtype == np.int32  # the user's defaults are untouched


def test_the_64_bit_flag_is_restored_after_every_call() -> None:
    data = jax.numpy.arange(4.0, dtype=np.float32)
    deleted = jax.numpy.zeros(4, np.float32)
    deleted.delete()
    with pytest.raises(RuntimeError, match="deleted"):  # raised by the program's call
        ops.element_wise_identity(data, out=deleted)
    assert not jax.config.x64_enabled
    with jax.enable_x64(True):
        ops.element_wise_identity(data)
        assert jax.config.x64_enabled  # the user's own setting, kept
    assert not jax.config.x64_enabled


@pytest.mark.parametrize("axis", [0, 1])
def test_cache_blocked_scatter_elements_matches_the_reference(axis: int) -> None:
    # Wide enough trailing dimensions (>= 2 blocks) that the blocked visiting order is used.
    from dmlspec.kernels.scatter import SCATTER_BLOCK

    rng = np.random.default_rng(7)
    shape = (3, 6, 2 * SCATTER_BLOCK) if axis == 1 else (5, 2 * SCATTER_BLOCK)
    data = rng.standard_normal(shape).astype(np.float32)
    index_shape = (*shape[:axis], 4, *shape[axis + 1 :])
    # Distinct targets per line (a permutation's prefix, some counted from the end): defined.
    order = rng.permuted(
        np.broadcast_to(
            np.arange(shape[axis]).reshape((1,) * axis + (-1,) + (1,) * (len(shape) - axis - 1)),
            shape,
        ),
        axis=axis,
    )
    indices = np.take(order, np.arange(4), axis=axis).astype(np.int32)
    indices = np.where(rng.random(index_shape) < 0.3, indices - shape[axis], indices)
    updates = rng.standard_normal(index_shape).astype(np.float32)
    operator = {
        "type": "DML_OPERATOR_SCATTER_ELEMENTS",
        "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(shape)},
            "IndicesTensor": {"DataType": "INT32", "Sizes": list(index_shape)},
            "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": list(index_shape)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(shape)},
            "Axis": axis,
        },
    }
    inputs = {"InputTensor": data, "IndicesTensor": indices, "UpdatesTensor": updates}
    expected = reference.run(operator, inputs)["OutputTensor"]
    actual = ops.scatter_elements(data, indices, updates, Axis=axis)
    assert np.array_equal(np.asarray(actual), expected)


def test_out_of_range_indices_do_not_crash_or_write_out_of_bounds() -> None:
    data = np.arange(4, dtype=np.float32)
    result = ops.scatter_elements(
        data, np.array([2**63 + 1, 1], np.uint64), np.array([9, 8], np.float32)
    )
    assert np.asarray(result).tolist() == [0, 8, 2, 3]  # the out-of-range write is dropped
    gathered = ops.gather_nd(data.reshape(4, 1), np.array([[7], [-9], [2]], np.int32))
    assert np.asarray(gathered).shape == (3, 1)


def test_backends_follow_the_contract() -> None:
    assert isinstance(load_backend("jax"), JaxBackend) and load_backend("jax").validates
    assert isinstance(load_backend("numpy"), NumpyBackend) and not load_backend("numpy").validates
    assert load_backend("dmlspec.backends:NumpyBackend").name == "numpy"
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        load_backend("nope")
    with pytest.raises(Unsupported, match="no kernel for 'DML_OPERATOR_NOT_AN_OPERATOR'"):
        ops.run({"type": "DML_OPERATOR_NOT_AN_OPERATOR", "desc": {}}, {})


# -- property tests: JAX against the reference --------------------------------------------


def values(dtype: np.dtype[Any], shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Data covering the type's edges: min/max, and for floats NaN, infinities and -0.0."""
    if dtype.kind == "f":
        elements = st.floats(width=dtype.itemsize * 8, allow_nan=True, allow_infinity=True)
    else:
        info = np.iinfo(dtype)
        elements = st.one_of(
            st.integers(int(info.min), int(info.max)),
            st.sampled_from([int(info.min), int(info.max), 0]),
        )
    return hnp.arrays(dtype, shape, elements=elements)


def in_range(
    dtype: np.dtype[Any], bounds: list[int], shape: tuple[int, ...], data: st.DataObject
) -> np.ndarray:
    """Index values inside their dimension; negative ones too for signed types."""
    flat = []
    for _ in range(math.prod(shape[:-1]) if shape else 1):
        for bound in bounds:
            low = -bound if dtype.kind == "i" else 0
            flat.append(data.draw(st.integers(low, bound - 1)))
    return np.array(flat, dtype=dtype).reshape(shape)


def nd_case(data: st.DataObject, name: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    counts, data_types = highest_row(name, "InputTensor")
    _, index_types = highest_row(name, "IndicesTensor")
    rank = data.draw(st.sampled_from([c for c in counts if c <= 5]))
    meaningful = data.draw(st.integers(1, rank))
    input_sizes = [data.draw(st.integers(1, 4)) for _ in range(meaningful)]
    q = data.draw(st.integers(1, meaningful))
    index_count = data.draw(st.integers(1, rank))
    batch = [data.draw(st.integers(1, 3)) for _ in range(index_count - 1)]
    tail = batch + input_sizes[q:]
    if len(tail) > rank:
        tail = tail[len(tail) - rank :] if all(s == 1 for s in tail[: len(tail) - rank]) else None
    from hypothesis import assume

    assume(tail is not None and len(batch) + len(input_sizes[q:]) <= rank)
    dtype = numpy_type(data.draw(st.sampled_from(data_types)))
    index_dtype = numpy_type(data.draw(st.sampled_from(index_types)))
    pad = lambda sizes: [1] * (rank - len(sizes)) + list(sizes)  # noqa: E731
    input_shape = tuple(pad(input_sizes))
    indices_shape = tuple(pad([*batch, q]))
    inputs = {
        "InputTensor": data.draw(values(dtype, input_shape)),
        "IndicesTensor": in_range(index_dtype, input_sizes[:q], indices_shape, data),
    }
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": dtype.name.upper(), "Sizes": list(input_shape)},
        "IndicesTensor": {"DataType": index_dtype.name.upper(), "Sizes": list(indices_shape)},
        "InputDimensionCount": meaningful,
        "IndicesDimensionCount": index_count,
    }
    derived = pad(batch + input_sizes[q:])
    if name == "SCATTER_ND":
        inputs["UpdatesTensor"] = data.draw(values(dtype, tuple(derived)))
        desc["UpdatesTensor"] = {"DataType": dtype.name.upper(), "Sizes": derived}
        desc["OutputTensor"] = {"DataType": dtype.name.upper(), "Sizes": list(input_shape)}
    else:
        desc["OutputTensor"] = {"DataType": dtype.name.upper(), "Sizes": derived}
    return {"type": f"DML_OPERATOR_{name}", "desc": desc}, inputs


def elements_case(data: st.DataObject) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    counts, data_types = highest_row("SCATTER_ELEMENTS", "InputTensor")
    _, index_types = highest_row("SCATTER_ELEMENTS", "IndicesTensor")
    rank = data.draw(st.sampled_from([c for c in counts if c <= 4]))
    input_sizes = [data.draw(st.integers(1, 4)) for _ in range(rank)]
    axis = data.draw(st.integers(0, rank - 1))
    index_sizes = list(input_sizes)
    index_sizes[axis] = data.draw(st.integers(1, 4))
    dtype = numpy_type(data.draw(st.sampled_from(data_types)))
    index_dtype = numpy_type(data.draw(st.sampled_from(index_types)))
    bound = input_sizes[axis]
    low = -bound if index_dtype.kind == "i" else 0
    indices = hnp.arrays(index_dtype, tuple(index_sizes), elements=st.integers(low, bound - 1))
    inputs = {
        "InputTensor": data.draw(values(dtype, tuple(input_sizes))),
        "IndicesTensor": data.draw(indices),
        "UpdatesTensor": data.draw(values(dtype, tuple(index_sizes))),
    }
    name = dtype.name.upper()
    desc = {
        "InputTensor": {"DataType": name, "Sizes": input_sizes},
        "IndicesTensor": {"DataType": index_dtype.name.upper(), "Sizes": index_sizes},
        "UpdatesTensor": {"DataType": name, "Sizes": index_sizes},
        "OutputTensor": {"DataType": name, "Sizes": input_sizes},
        "Axis": axis,
    }
    return {
        "type": data.draw(st.sampled_from(["SCATTER", "DML_OPERATOR_SCATTER_ELEMENTS"])),
        "desc": desc,
    }, inputs


@PROPERTY
@given(data=st.data(), name=st.sampled_from(["SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS"]))
def test_data_movement_matches_the_reference(data: st.DataObject, name: str) -> None:
    operator, inputs = elements_case(data) if name == "SCATTER_ELEMENTS" else nd_case(data, name)
    expected, collisions = reference.run_recording(operator, inputs)
    actual = ops.run(operator, inputs)["OutputTensor"]
    assert actual.dtype == expected["OutputTensor"].dtype
    assert actual.shape == expected["OutputTensor"].shape
    assert_allowed(expected["OutputTensor"], actual, collisions.get("OutputTensor", {}))


@PROPERTY
@given(data=st.data())
def test_integer_fill_wraps_like_the_reference(data: st.DataObject) -> None:
    _, data_types = highest_row("FILL_VALUE_SEQUENCE", "OutputTensor")
    name = data.draw(st.sampled_from([t for t in data_types if numpy_type(t).kind in "iu"]))
    sizes = data.draw(st.lists(st.integers(1, 40), min_size=1, max_size=3))
    start, delta = data.draw(st.integers(-(2**70), 2**70)), data.draw(st.integers(-(2**70), 2**70))
    operator = {
        "type": "FILL_VALUE_SEQUENCE",
        "desc": {
            "OutputTensor": {"DataType": name, "Sizes": sizes},
            "ValueDataType": name,
            "ValueStart": start,
            "ValueDelta": delta,
        },
    }
    expected = reference.run(operator, {})["OutputTensor"]
    actual = ops.run(operator, {})["OutputTensor"]
    assert not exact_mismatches(expected, actual)


@PROPERTY
@given(
    data_type=st.sampled_from(["FLOAT16", "FLOAT32"]),
    count=st.integers(1, 5000),
    start=st.sampled_from([0.0, 0.1, -3.3, 1e4, 2.5e-3]),
    delta=st.sampled_from([0.1, 1 / 3, -0.7, 1e-3, 2.5]),
)
def test_float_fill_stays_within_the_spec_tolerance(
    data_type: str, count: int, start: float, delta: float
) -> None:
    spec = CATALOG.operator("FILL_VALUE_SEQUENCE")
    rule = spec.checked_semantics.comparison_for("OutputTensor", "float")
    operator = {
        "type": "FILL_VALUE_SEQUENCE",
        "desc": {
            "OutputTensor": {"DataType": data_type, "Sizes": [count]},
            "ValueDataType": data_type,
            "ValueStart": start,
            "ValueDelta": delta,
        },
    }
    actual = ops.run(operator, {})["OutputTensor"]
    expected = reference.run(operator, {})["OutputTensor"]
    dtype = numpy_type(data_type)
    held_start = Fraction(float(np.array(start).astype(dtype)))
    held_delta = Fraction(float(np.array(delta).astype(dtype)))
    scale = np.array([float(max(abs(held_start), abs(k * held_delta))) for k in range(count)])
    assert rule.max_ulps is not None
    mismatches = ulp_mismatches(expected, actual, scale, rule.max_ulps)
    assert not mismatches, [str(m) for m in mismatches]


def test_a_running_sum_would_fail_the_tolerance() -> None:
    """The ULP rule is strict enough to catch the pseudocode's Value += Delta taken literally."""
    spec = CATALOG.operator("FILL_VALUE_SEQUENCE")
    rule = spec.checked_semantics.comparison_for("OutputTensor", "float")
    count, delta = 5000, np.float32(0.1)
    accumulated = np.empty(count, np.float32)
    value = np.float32(0)
    for k in range(count):
        accumulated[k] = value
        value = np.float32(value + delta)
    operator = {
        "type": "FILL_VALUE_SEQUENCE",
        "desc": {
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [count]},
            "ValueDataType": "FLOAT32",
            "ValueStart": 0,
            "ValueDelta": 0.1,
        },
    }
    expected = reference.run(operator, {})["OutputTensor"]
    scale = np.abs(np.arange(count) * float(delta))
    assert rule.max_ulps is not None
    assert ulp_mismatches(expected, accumulated, scale, rule.max_ulps)
    assert not ulp_mismatches(
        expected, np.asarray(ops.run(operator, {})["OutputTensor"]), scale, rule.max_ulps
    )


EDGES = [0.0, 1.5, -1.0, float("nan"), 2.0**31, 2.0**32 - 1, 2.0**32, 2.0**53 + 2, 2.0**63]
EDGES += [2.0**64 - 4096, 2.0**64, -(2.0**31), -(2.0**63), 1e300, -float("inf")]


@pytest.mark.parametrize(
    "data_type", ["UINT8", "INT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64"]
)
def test_cast_from_float64_truncates_and_saturates_at_every_edge(data_type: str) -> None:
    """CAST rounds toward zero, saturates, NaN -> 0; what the integers should be is computed here
    from Python's exact integers. (XLA on a GPU gave 2^31 - 1 for 2^31 as UINT32: the kernel
    converts through INT64; run on a GPU, this test covers that.)"""
    target = np.dtype(data_type.lower())
    info = np.iinfo(target)

    def exact(value: float) -> int:
        if math.isnan(value):
            return 0
        whole = int(value) if math.isfinite(value) else (info.max if value > 0 else info.min)
        return min(max(whole, int(info.min)), int(info.max))

    values = np.array(EDGES, np.float64)
    got = ops.cast(values, OutputTensor={"DataType": data_type, "Sizes": [len(EDGES)]})
    assert np.asarray(got).tolist() == [exact(v) for v in EDGES]


def test_ulps_of_a_computing_type_judge_an_integer_result_and_its_truncation() -> None:
    """An integer output computed in FLOAT32 and truncated: within 16 FLOAT32 ULPs (256 at
    2^31) of the expected value, plus one; without `ulps_of` the output's own ULP counts."""
    expected = np.array([2**31, 3], np.uint32)
    f32 = np.dtype(np.float32)

    def far(actual: list[int]) -> list[tuple[int, ...]]:
        got = np.array(actual, np.uint32)
        return [m.index for m in ulp_mismatches(expected, got, expected, 16, ulps_of=f32)]

    assert far([2**31 - 4097, 2]) == []  # 16 * 256 + 1 below; 3 truncated from 2.9999
    assert far([2**31 + 4098, 4]) == [(0,)]  # 4 is one past 3 within the bound: accepted
    assert far([2**31, 5]) == [(1,)]
    got = np.array([2**31 - 1, 3], np.uint32)
    assert ulp_mismatches(expected, got, expected, 16) != []  # an integer's own ULP: none


def test_the_compilation_cache_folder_follows_the_documented_variables(tmp_path: Any) -> None:
    """$DMLSPEC_JAX_CACHE, else $XDG_CACHE_HOME/dmlspec/jax, else ~/.cache/dmlspec/jax; "off"
    (any case) is no folder. The benchmark counts a run's programs in this folder."""
    folder = runtime.compilation_cache_folder
    assert folder({"DMLSPEC_JAX_CACHE": str(tmp_path)}) == tmp_path
    assert folder({"DMLSPEC_JAX_CACHE": "Off", "XDG_CACHE_HOME": str(tmp_path)}) is None
    assert folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "dmlspec" / "jax"
    assert folder({}).parts[-3:] == (".cache", "dmlspec", "jax")
