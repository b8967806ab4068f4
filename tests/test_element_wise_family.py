"""The element-wise family (ELEMENT_WISE_*, ACTIVATION_*, CAST): one kernel primitive, one
reference, generated suites; the suites catch a broken backend per sub-family and pass a
correct one that differs within the tolerance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dmlspec import load_catalog, ops
from dmlspec.kernels.element_wise import FUNCTIONS
from dmlspec.reference.element_wise import ELEMENT_WISE_OPERATORS

from .element_wise_backends import ReturnsOutput, from_bits
from .kernel_cases import numpy_arg
from .sweeps import sweep
from .test_conformance import conformance, workers

FAMILY = sorted(
    s.name
    for s in load_catalog().operators
    if s.name.startswith(("ELEMENT_WISE_", "ACTIVATION_")) or s.name == "CAST"
)

# One broken backend per sub-family (tests/element_wise_backends.py), with the operator it breaks.
BROKEN = [
    ("ExpTooLarge", "ELEMENT_WISE_EXP"),  # unary math
    ("SubtractReversed", "ELEMENT_WISE_SUBTRACT"),  # binary
    ("GreaterOrEqualIsStrict", "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL"),  # compare
    ("XorIsOr", "ELEMENT_WISE_BIT_XOR"),  # bit
    ("CastRoundsToNearest", "CAST"),  # cast
    ("RoundHalvesAway", "ELEMENT_WISE_ROUND"),  # round
    ("ClipIgnoresMax", "ELEMENT_WISE_CLIP"),  # clip
    ("ReluLeaks", "ACTIVATION_RELU"),  # activation
    ("ScaleBiasWithoutBias", "ELEMENT_WISE_IDENTITY"),  # scale-bias
    ("FusedActivationIgnored", "ELEMENT_WISE_ADD1"),  # fused activation
]


def test_every_family_spec_has_a_kernel_a_reference_and_a_suite() -> None:
    catalog = load_catalog()
    assert len(FAMILY) == 93
    for name in FAMILY:
        spec = catalog.operator(name)
        assert spec.kernel is not None and spec.checked_kernel.primitive == "element_wise"
        function = spec.checked_kernel.function
        assert function is not None
        assert function.removeprefix("ELEMENT_WISE_") in FUNCTIONS, name
        assert name in ELEMENT_WISE_OPERATORS, name
        assert callable(getattr(ops, name.lower())), name


def test_scale_bias_and_fused_activation_are_one_mechanism() -> None:
    a = np.array([1.0, 2.0, -3.0], np.float32)
    b = np.array([5.0, 8.0, -5.0], np.float32)
    # ELU(alpha 0.5) of a + b, from DxDispatch's dml_element_wise_add1.json
    fused = ops.element_wise_add1(a, b, FusedActivation={"Type": "ACTIVATION_ELU", "Alpha": 0.5})
    np.testing.assert_allclose(fused, [6.0, 10.0, 0.5 * (np.exp(-8.0) - 1)], rtol=1e-6)
    nested = ops.element_wise_add1(
        a, b, FusedActivation={"Type": "DML_OPERATOR_ACTIVATION_ELU", "Desc": {"Alpha": 0.5}}
    )
    np.testing.assert_array_equal(fused, nested)
    # The activation a fused activation runs is the activation operator's own kernel.
    np.testing.assert_array_equal(fused, ops.activation_elu(a + b, Alpha=0.5))
    scaled = ops.element_wise_exp(a, ScaleBias={"Scale": 2.0, "Bias": 1.0})
    np.testing.assert_allclose(scaled, np.exp(a * 2 + 1), rtol=1e-6)


def test_float16_is_computed_in_float32_and_rounded_once() -> None:
    x = np.array([0.1, 1.7, 9.5], np.float16)
    expected = np.exp(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(ops.element_wise_exp(x), expected)


def test_integer_semantics_follow_the_pages() -> None:
    # "For integer divisions, the result is truncated."
    a, b = np.array([-7, 7, -7], np.int32), np.array([2, -2, -2], np.int32)
    np.testing.assert_array_equal(ops.element_wise_divide(a, b), [-3, -3, 3])
    # MODULUS_FLOOR: "the result will have the same sign as the divisor"
    np.testing.assert_array_equal(ops.element_wise_modulus_floor(a, b), [1, -1, -1])
    # MODULUS_TRUNCATE: "the result will have the same sign as the dividend"
    np.testing.assert_array_equal(ops.element_wise_modulus_truncate(a, b), [-1, 1, -1])
    # Comparisons write 1 or 0 in the output type the caller describes.
    equal = ops.element_wise_logical_equals(a, b, OutputTensor={"DataType": "UINT8"})
    assert equal.dtype == np.uint8 and equal.tolist() == [0, 0, 0]


@pytest.mark.parametrize(("backend", "operator"), sweep(BROKEN, [b for b, _ in BROKEN]))
def test_ci_profile_catches_a_broken_family_backend(
    tmp_path: Path, backend: str, operator: str
) -> None:
    result = conformance(f"tests.element_wise_backends:{backend}", tmp_path, "--ops", operator)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert [t for t in results["tests"] if t["outcome"] == "failed"]


def test_a_backend_within_the_tolerance_passes(tmp_path: Path) -> None:
    result = conformance(
        "tests.element_wise_backends:ExpOneUlpOff", tmp_path, "--ops", "ELEMENT_WISE_EXP"
    )
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.slow
def test_jax_and_numpy_pass_the_family_and_hit_every_cell(tmp_path: Path) -> None:
    for backend in ("jax", "numpy"):
        result = conformance(backend, tmp_path / backend, "--workers", workers(), "--ops", *FAMILY)
        assert result.returncode == 0, (backend, result.stdout[-3000:])
        results = json.loads((tmp_path / backend / "results.json").read_text())
        assert results["coverage"]["hit"] == results["coverage"]["total"] == 5517
        assert not [t for t in results["tests"] if t["outcome"] in ("failed", "xfailed")]


@pytest.mark.slow
def test_onnxruntime_passes_the_family_but_for_its_listed_divergences(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the peers extra is not installed")
    result = conformance("onnxruntime", tmp_path, "--workers", workers(), "--ops", *FAMILY)
    assert result.returncode == 0, result.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    xfailed = [t for t in results["tests"] if t["outcome"] == "xfailed"]
    assert xfailed and not [t for t in results["tests"] if t["outcome"] == "xpassed"]


def test_an_intermediate_flushed_to_zero_is_within_an_expression_tolerance() -> None:
    """PARAMETRIC_SOFTPLUS: exp(-87.7) is subnormal in FLOAT32, a backend may flush it (XLA on
    CPU does) and Alpha -1.5 scales the lost ln(1 + exp) to a normal -1.2e-38. The spec's
    abs_tolerance, an expression of Alpha, accepts that and nothing twice as far."""
    from dmlspec.conformance.cases import Case
    from dmlspec.conformance.check import CaseFailure, run_case

    catalog = load_catalog()
    spec = catalog.operator("ACTIVATION_PARAMETRIC_SOFTPLUS")
    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 2]}
    operator = {
        "type": "DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS",
        "desc": {"InputTensor": tensor, "OutputTensor": tensor, "Alpha": -1.5, "Beta": 1.0},
    }
    inputs = {"InputTensor": np.array([[[[-87.71668, 0.5]]]], dtype=np.float32)}
    case = Case(operator, inputs, "6_4", 0)
    expected = ops.run(operator, inputs)["OutputTensor"]

    class Returns:
        def __init__(self, first: float) -> None:
            self.first = first

        def run(self, operator: object, given: object) -> dict[str, np.ndarray]:
            output = expected.copy()
            output[0, 0, 0, 0] = self.first
            return {"OutputTensor": output}

    run_case(catalog, spec, Returns(-0.0), case)  # the flushed intermediate
    run_case(catalog, spec, Returns(-1.2056468e-38), case)  # computed without flushing
    with pytest.raises(CaseFailure, match="differs from the reference"):
        run_case(catalog, spec, Returns(-3.6e-38), case)  # 2 * |Alpha| * 2^-126 away


def test_flushed_subnormals_excuse_only_the_cells_they_explain() -> None:
    """FLOAT32 ADD of six subnormals and a 1: a backend that flushes the six passes; one that
    also gets the seventh cell wrong fails, however many flushed cells come before it."""
    from dmlspec.conformance.check import CaseFailure, run_case

    from .element_wise_backends import six_subnormals_and_a_one

    catalog = load_catalog()
    spec = catalog.operator("ELEMENT_WISE_ADD")
    case = six_subnormals_and_a_one()
    a = case.inputs["ATensor"]

    flushed = np.where(a < 1, np.float32(0), a)
    run_case(catalog, spec, ReturnsOutput(flushed), case)
    wrong = flushed.copy()
    wrong[0, 0, 0, 6] = 2.0
    with pytest.raises(CaseFailure, match=r"at \[0, 0, 0, 6\]: expected np.float32\(1.0\)"):
        run_case(catalog, spec, ReturnsOutput(wrong), case)


def test_a_fused_activations_requires_rules_read_the_operators_result() -> None:
    """ELEMENT_WISE_ADD1 with a fused HARDMAX: a NaN operand makes the add's result NaN, where
    ACTIVATION_HARDMAX.R1 leaves the hardmax undefined (onnxruntime skips NaN, NumPy picks
    it), so any output is accepted; with no NaN the output is judged, even though the
    output's effective rank (3) is more than HARDMAX alone allows."""
    from dmlspec.conformance.cases import Case
    from dmlspec.conformance.check import CaseFailure, fused_undefined, run_case

    catalog = load_catalog()
    spec = catalog.operator("ELEMENT_WISE_ADD1")
    tensor = {"DataType": "FLOAT32", "Sizes": [2, 2, 3]}
    operator = {
        "type": "DML_OPERATOR_ELEMENT_WISE_ADD1",
        "desc": {
            "ATensor": tensor,
            "BTensor": tensor,
            "OutputTensor": tensor,
            "FusedActivation": {"Type": "ACTIVATION_HARDMAX"},
        },
    }
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3)

    class Returns:
        def run(self, operator: object, given: object) -> dict[str, np.ndarray]:
            return {"OutputTensor": np.full((2, 2, 3), 7.0, np.float32)}

    with_nan = Case(operator, {"ATensor": a, "BTensor": np.where(a == 4, np.nan, a)}, "6_4", 0)
    assert fused_undefined(catalog, spec, with_nan)["OutputTensor"].all()
    run_case(catalog, spec, Returns(), with_nan)
    without = Case(operator, {"ATensor": a, "BTensor": a}, "6_4", 0)
    assert fused_undefined(catalog, spec, without) == {}
    with pytest.raises(CaseFailure, match="differs from the reference"):
        run_case(catalog, spec, Returns(), without)


@pytest.mark.parametrize(
    ("shape", "axes"), [((256, 512), [1]), ((64, 32, 48), [0, 2]), ((8, 6), [0])], ids=str
)
def test_hardmax_marks_the_first_maximum_as_argmax_finds_it(
    shape: tuple[int, ...], axes: list[int]
) -> None:
    """Large inputs take ARGMAX's two-step search, small ones its sort keys; a subnormal
    maximum (which XLA's float comparisons see as zero) is still the one marked."""
    x = np.round(np.random.default_rng(3).standard_normal(shape) * 2).astype(np.float32)
    first = (0,) * len(shape)
    x[first[:-1]] = 0.0  # a row of zeros but for one subnormal, the maximum where it lies
    x[(*first[:-1], 3)] = np.finfo(np.float32).smallest_subnormal
    first_maximum = numpy_arg("ARGMAX", x, axes, "INCREASING")  # row-major over the axes
    grid = np.indices(x.shape)
    positions = np.ravel_multi_index([grid[d] for d in axes], [x.shape[d] for d in axes])
    expected = (positions == first_maximum).astype(np.float32)
    actual = ops.activation_hardmax1(x, AxisCount=len(axes), Axes=axes)
    np.testing.assert_array_equal(np.asarray(actual), expected)


def test_a_nan_from_arithmetic_may_be_any_nan_but_data_movement_keeps_its_bits() -> None:
    """The common spec's NaN rule: NEGATE of a NaN may come back as any NaN (XLA on an H100
    returns 0x7fffffff where a CPU flips the sign bit), never as a number; a NaN that GATHER
    copies must keep its bits."""
    from dmlspec.conformance.cases import Case
    from dmlspec.conformance.check import CaseFailure, run_case

    catalog = load_catalog()
    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 2]}
    negate = {
        "type": "DML_OPERATOR_ELEMENT_WISE_NEGATE",
        "desc": {"InputTensor": tensor, "OutputTensor": tensor},
    }
    nan = from_bits([0x7FC00000, 0x3F800000], np.float32).reshape(1, 1, 1, 2)  # NaN, 1.0
    case = Case(negate, {"InputTensor": nan}, "6_4", 0)
    spec = catalog.operator("ELEMENT_WISE_NEGATE")
    for bits in (0xFFC00000, 0x7FFFFFFF, 0x7FC00000):  # the sign flipped, canonical, kept
        got = from_bits([bits, 0xBF800000], np.float32).reshape(1, 1, 1, 2)
        run_case(catalog, spec, ReturnsOutput(got), case)
    with pytest.raises(CaseFailure, match="differs from the reference"):
        run_case(catalog, spec, ReturnsOutput(np.float32([[[[0.0, -1.0]]]])), case)

    gather = {
        "type": "DML_OPERATOR_GATHER",
        "desc": {
            "InputTensor": tensor,
            "IndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1]},
            "Axis": 3,
            "IndexDimensions": 1,
        },
    }
    indices = np.zeros((1, 1, 1, 1), np.uint32)
    case = Case(gather, {"InputTensor": nan, "IndicesTensor": indices}, "6_4", 0)
    spec = catalog.operator("GATHER")
    run_case(catalog, spec, ReturnsOutput(nan[..., :1]), case)
    other_nan = from_bits([0x7FFFFFFF], np.float32).reshape(1, 1, 1, 1)
    with pytest.raises(CaseFailure, match="differs from the reference"):
        run_case(catalog, spec, ReturnsOutput(other_nan), case)


def test_an_integer_pow_of_a_floating_exponent_is_judged_in_float32_ulps() -> None:
    """POW of UINT32 2^31 to the FLOAT32 power 1: the page guarantees exact results only for
    integral exponents, so 2^31 - 1 (XLA on an H100: its FLOAT64 pow a little under 2^31,
    truncated) passes, and so does anything within 16 FLOAT32 ULPs (256 each at 2^31) and
    one; with a UINT32 exponent 1 only 2^31 itself passes."""
    from dmlspec.conformance.cases import Case
    from dmlspec.conformance.check import CaseFailure, run_case

    catalog = load_catalog()
    spec = catalog.operator("ELEMENT_WISE_POW")
    sizes = [1, 1, 1, 1]
    base = np.full(sizes, 2**31, np.uint32)

    def case(exponent: np.ndarray) -> Case:
        desc = {
            "InputTensor": {"DataType": "UINT32", "Sizes": sizes},
            "ExponentTensor": {"DataType": exponent.dtype.name.upper(), "Sizes": sizes},
            "OutputTensor": {"DataType": "UINT32", "Sizes": sizes},
        }
        operator = {"type": "DML_OPERATOR_ELEMENT_WISE_POW", "desc": desc}
        return Case(operator, {"InputTensor": base, "ExponentTensor": exponent}, "6_4", 0)

    floating = case(np.ones(sizes, np.float32))
    for value in (2**31, 2**31 - 1, 2**31 - 16 * 256 - 1, 2**31 + 16 * 256 + 1):
        run_case(catalog, spec, ReturnsOutput(np.full(sizes, value, np.uint32)), floating)
    with pytest.raises(CaseFailure, match="differs from the reference"):
        too_far = np.full(sizes, 2**31 - 16 * 256 - 2, np.uint32)
        run_case(catalog, spec, ReturnsOutput(too_far), floating)
    integral = case(np.ones(sizes, np.uint32))
    run_case(catalog, spec, ReturnsOutput(base), integral)
    with pytest.raises(CaseFailure, match="differs from the reference"):
        run_case(catalog, spec, ReturnsOutput(np.full(sizes, 2**31 - 1, np.uint32)), integral)
