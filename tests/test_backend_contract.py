"""The backend contract's precision declaration: `execution_flags`, checked when a backend is
loaded, carried across the isolated backend's process boundary, and read by the accuracy
model."""

from __future__ import annotations

from typing import Any

import pytest

from dmlspec.accuracy import accumulation_type
from dmlspec.backends import BackendLoadError, NumpyBackend, check_backend
from dmlspec.backends.contract import execution_flags
from dmlspec.conformance.isolation import IsolatedBackend


class HalfPrecision(NumpyBackend):
    """The reference, declaring that it runs with half-precision computation allowed."""

    name = "half"
    execution_flags = ("ALLOW_HALF_PRECISION_COMPUTATION", "DML_EXECUTION_FLAG_NONE")


def test_flags_default_to_none_and_are_read_by_either_spelling() -> None:
    assert execution_flags(NumpyBackend()) == ()
    flags = execution_flags(HalfPrecision())
    assert flags == (
        "DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION",
        "DML_EXECUTION_FLAG_NONE",
    )
    assert accumulation_type("FLOAT16", flags) == "FLOAT16"
    assert accumulation_type("FLOAT16", execution_flags(NumpyBackend())) == "FLOAT32"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("ALLOW_HALF_PRECISION_COMPUTATION", "must be a list of DML_EXECUTION_FLAGS names"),
        (["FAST_MATH"], "'FAST_MATH' is not a DML_EXECUTION_FLAGS member"),
        ([1], "1 is not a DML_EXECUTION_FLAGS member"),
    ],
)
def test_malformed_flags_are_refused_when_the_backend_loads(flags: Any, message: str) -> None:
    backend = NumpyBackend()
    backend.execution_flags = flags  # type: ignore[attr-defined]
    with pytest.raises(BackendLoadError, match=message) as raised:
        check_backend(backend, "mine")
    assert "\n" not in str(raised.value)


def test_an_isolated_backend_carries_its_flags() -> None:
    isolated = IsolatedBackend(f"{__name__}:HalfPrecision")
    try:
        assert isolated.name == "half"
        assert "DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION" in isolated.execution_flags
    finally:
        isolated.close()
