"""The dot-product accuracy model (dmlspec.accuracy): correct results pass whatever their
summation order; a backend that accumulates FLOAT32 in FLOAT16, one that is systematically
off within every element's bound, and FLOAT16 accumulated natively without the flag that
allows it are caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dmlspec.accuracy import (
    ALLOW_HALF_PRECISION,
    absolute_inputs,
    accumulation_type,
    check_dot_product,
)


def _data(seed: int, m: int, k: int, n: int, spread: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Mixed signs, cancellation, a wide range of exponents (2^-spread to 2^spread) and zeros:
    not only N(0, 1)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)) * np.exp2(rng.integers(-spread, spread, (m, k)))
    b = rng.standard_normal((k, n)) * np.exp2(rng.integers(-spread, spread, (k, n)))
    a[rng.random((m, k)) < 0.1] = 0
    return a.astype(np.float32), b.astype(np.float32)


def _exact(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    return wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b)


def _sequential(a: np.ndarray, b: np.ndarray, dtype: type) -> np.ndarray:
    """Row by row, one product at a time, accumulated in `dtype`."""
    total = np.zeros((a.shape[0], b.shape[1]), dtype)
    for i in range(a.shape[1]):
        total = (total + (a[:, i : i + 1].astype(dtype) * b[i : i + 1, :].astype(dtype))).astype(
            dtype
        )
    return total


def test_float32_results_pass_in_any_summation_order() -> None:
    a, b = _data(0, 32, 257, 24)
    reference, bound = _exact(a, b)
    for actual in (a @ b, _sequential(a, b, np.float32), (a[:, ::-1] @ b[::-1, :])):
        result = check_dot_product(reference, bound, actual.astype(np.float32), 257, "FLOAT32")
        assert result.passed, result.describe()
        assert result.bias_limit is not None and result.variance <= result.variance_limit


def test_float32_accumulated_in_float16_is_caught() -> None:
    a, b = _data(1, 16, 256, 16, spread=3)
    a, b = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    reference, bound = _exact(a, b)
    actual = _sequential(a, b, np.float16).astype(np.float32)
    result = check_dot_product(reference, bound, actual, 256, "FLOAT32")
    assert not result.passed
    assert result.elements_beyond > 0
    assert "elements beyond KS * max(bound * u, tiny)" in result.describe()


def test_a_systematic_offset_inside_every_bound_is_caught_by_the_bias() -> None:
    a, b = _data(2, 100, 4, 100)
    reference, bound = _exact(a, b)
    unit = np.maximum(bound * 2.0**-24, np.finfo(np.float32).tiny)
    offset = (reference + 0.5 * unit).astype(np.float64)  # half a unit: within KS = 4 units
    result = check_dot_product(reference, bound, offset, 4, "FLOAT32")
    assert result.elements_beyond == 0
    assert result.variance <= result.variance_limit
    assert not result.passed and "error bias" in result.describe()
    # The same data positively biased by construction: the bias is not checked, and it passes.
    assert check_dot_product(reference, bound, offset, 4, "FLOAT32", check_bias=False).passed


def test_a_large_error_on_every_element_is_caught_by_the_variance() -> None:
    reference = np.linspace(-1, 1, 1000)
    bound = np.ones(1000)
    unit = 2.0**-24
    sign = np.where(np.arange(1000) % 2 == 0, 1.0, -1.0)  # unbiased, but always near the edge
    result = check_dot_product(reference, bound, reference + sign * 3.9 * unit, 4, "FLOAT32")
    assert result.elements_beyond == 0 and abs(result.bias) < 1e-6
    assert not result.passed and "error variance" in result.describe()
    # Elements repeating one computation (a resampling's clamped edges): the bound alone
    repeated = check_dot_product(
        reference, bound, reference + sign * 3.9 * unit, 4, "FLOAT32", statistics=False
    )
    assert repeated.passed and repeated.bias_limit is None


def test_float16_accumulates_in_float32_unless_half_precision_is_allowed() -> None:
    assert accumulation_type("FLOAT16") == "FLOAT32"
    assert accumulation_type("DML_TENSOR_DATA_TYPE_FLOAT16", [ALLOW_HALF_PRECISION]) == "FLOAT16"
    assert accumulation_type("FLOAT32", [ALLOW_HALF_PRECISION]) == "FLOAT32"
    a, b = _data(3, 16, 512, 16, spread=3)
    a, b = a.astype(np.float16), b.astype(np.float16)
    reference, bound = _exact(a, b)
    in_float32 = _sequential(a, b, np.float32).astype(np.float16)
    in_float16 = _sequential(a, b, np.float16)
    assert check_dot_product(reference, bound, in_float32, 512, "FLOAT16").passed
    native = check_dot_product(reference, bound, in_float16, 512, "FLOAT16")
    assert not native.passed
    allowed = check_dot_product(reference, bound, in_float16, 512, "FLOAT16", "FLOAT16")
    assert allowed.elements_beyond == 0


def test_zero_bounds_need_exact_zeros_and_overflowing_bounds_accept_anything() -> None:
    reference = np.array([0.0, 0.0, 1.0])
    bound = np.array([0.0, 0.0, 1e39])  # the last one's terms overflow FLOAT32
    passing = check_dot_product(reference, bound, np.array([0.0, -0.0, np.inf]), 3, "FLOAT32")
    assert passing.passed
    failing = check_dot_product(reference, bound, np.array([0.0, 1e-45, 1.0]), 3, "FLOAT32")
    assert failing.elements_beyond == 1 and failing.mismatches[0].index == (1,)


def test_undefined_elements_are_not_judged() -> None:
    reference, bound = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    result = check_dot_product(
        reference, bound, np.array([1.0, 99.0]), 1, "FLOAT32", defined=np.array([True, False])
    )
    assert result.passed and result.variance == 0


@pytest.mark.parametrize("terms", [1, 16, 4096])
def test_the_limits_follow_the_tosa_formulas(terms: int) -> None:
    result = check_dot_product(np.zeros(100), np.ones(100), np.zeros(100), terms, "FLOAT32")
    assert result.variance_limit == pytest.approx(0.4 * terms * 100)
    assert result.bias_limit == pytest.approx(2 * math.sqrt(terms * 100))


def test_absolute_inputs_keep_integers_and_lists() -> None:
    given = {"A": np.array([-1.5, 2.0]), "I": np.array([-3, 4]), "L": [np.array([-2.0])]}
    absolute = absolute_inputs(given)
    assert absolute["A"].tolist() == [1.5, 2.0]
    assert absolute["I"].tolist() == [-3, 4]
    assert absolute["L"][0].tolist() == [2.0]
