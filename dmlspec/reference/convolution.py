"""The convolution family (convolution, matrix multiplication, attention), written from the
DirectML pages; so far GEMM.

Each operator is computed in FLOAT64 (every product of two FLOAT32 or FLOAT16 values is exact
there; a sum of K of them is within K * 2^-53 of the sum of their absolute values, 2^29 times
below what FLOAT32 accumulation is allowed), then its FusedActivation, then one rounding to the
output type. `EXACT` gives, per operator, that FLOAT64 result before the
activation, its bound, the same computation on absolute values (|Alpha| * sum |a * b| +
|Beta| * |c|), and the largest magnitude an intermediate reaches (the sum before Alpha scales
it): what the dot-product accuracy model (dmlspec.accuracy) judges a result by.

GEMM: "Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)", BatchCount *
ChannelCount independent {M, K} x {K, N} products over the leading dimensions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["CONVOLUTION", "EXACT", "Exact"]

# operator -> (fields, logical inputs) -> {output: (FLOAT64 value, FLOAT64 bound, FLOAT64
# largest intermediate magnitude)}, before the FusedActivation.
Exact = Callable[[Fields, Inputs], dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _matrix(array: np.ndarray, transform: str) -> np.ndarray:
    wide = np.asarray(array, dtype=np.float64)
    return np.swapaxes(wide, -1, -2) if transform.endswith("TRANSPOSE") else wide


def _gemm_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    a = _matrix(x["ATensor"], f.enum("TransA"))
    b = _matrix(x["BTensor"], f.enum("TransB"))
    alpha = f.float32("Alpha") if f.present("Alpha") else 1.0
    beta = f.float32("Beta") if f.present("Beta") else 1.0
    with np.errstate(all="ignore"):
        products = np.matmul(np.abs(a), np.abs(b))
        value = alpha * np.matmul(a, b)
        bound = abs(alpha) * products
        largest = np.maximum(products, bound)  # the sum before Alpha scales it
        if "CTensor" in x:
            c = np.asarray(x["CTensor"], dtype=np.float64)
            value = value + beta * c
            bound = bound + abs(beta) * np.abs(c)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


EXACT: dict[str, Exact] = {"GEMM": _gemm_exact}


def _rounded(name: str) -> Operator:
    """The operator as the reference runs it: exact, activated, rounded once."""

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            with np.errstate(all="ignore"):
                activated = fused_activation(name, f.desc.get("FusedActivation"), value)
                outputs[field] = activated.astype(f.dtype(field))
        return outputs

    return run


CONVOLUTION: dict[str, Operator] = {name: _rounded(name) for name in EXACT}
