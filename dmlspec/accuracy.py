"""The dot-product accuracy model: how a result that sums products in an order the pages leave
open is judged (convolutions, matrix products, attention, window sums, normalizations).

It is the compliance check of TOSA's reference model (ARM, `verify_dot_product.cc`; the TOSA
specification's "Dot product accuracy requirements"), with DirectML's accumulation types:

- `reference`: the exact result, computed in FLOAT64 from the same inputs (no rounding to the
  output type);
- `bound`: the same computation on absolute values (sum of |a_i * b_i| over the KS terms,
  |bias| included): no rounding error of an order-free sum exceeds a multiple of it;
- `terms` (KS): the number of products summed into each element, one more with a bias.

Per element, with u(T) = 2^-(1 + fraction bits of T) and tiny(T) T's smallest normal:
|actual - reference| <= KS * max(bound * u(A), tiny(A)), A the accumulation type. An output
type narrower than A (FLOAT16 accumulated in FLOAT32) adds the final rounding, half an ULP of
the output type at |reference| plus that allowance. Where the bound itself overflows the output
type, the order decides whether an intermediate overflows: any result is accepted. A zero bound
needs an exact zero.

Over each whole output, with e_i = (actual - reference) / max(bound * u(O), tiny(O)) in units of
the output type O: the error's variance sum(e_i^2) <= 0.4 * KS * T (T elements), and, for data
that is not positively biased (mixed signs), its bias |sum(e_i)| <= 2 * sqrt(KS * T). So an
implementation that stays within every element's bound while being systematically off (a
truncating accumulator, a constant offset) is still caught.

Accumulation: FLOAT16 is accumulated in FLOAT32 unless the backend declares that it runs with
DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION (its `execution_flags`); every other type in
itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .compare import MISMATCHES_SHOWN, Mismatch

__all__ = [
    "ALLOW_HALF_PRECISION",
    "DotProductResult",
    "absolute_inputs",
    "accumulation_type",
    "allowed_error",
    "check_dot_product",
]

ALLOW_HALF_PRECISION = "DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION"
_FLOATS = {"FLOAT16": np.float16, "FLOAT32": np.float32, "FLOAT64": np.float64}


def _finfo(data_type: str) -> Any:
    return np.finfo(_FLOATS[data_type])


def accumulation_type(output_type: str, execution_flags: Iterable[str] = ()) -> str:
    """The type a backend accumulates `output_type` in: FLOAT16 in FLOAT32 unless half
    precision is allowed by its execution flags."""
    output_type = output_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    flags = {str(flag).removeprefix("DML_EXECUTION_FLAG_") for flag in execution_flags}
    half_allowed = ALLOW_HALF_PRECISION.removeprefix("DML_EXECUTION_FLAG_") in flags
    if output_type == "FLOAT16" and not half_allowed:
        return "FLOAT32"
    return output_type


def _unit(data_type: str) -> tuple[float, float]:
    """u(T) = 2^-(1 + fraction bits) and the smallest normal value of T."""
    info = _finfo(data_type)
    return 2.0 ** (-1 - info.nmant), float(info.tiny)


@dataclass(frozen=True)
class DotProductResult:
    """The verdict on one output: the elements beyond their bound (the first few), and the
    error statistics against their limits (bias_limit None: bias not checked)."""

    mismatches: tuple[Mismatch, ...]
    elements_beyond: int
    bias: float
    bias_limit: float | None
    variance: float
    variance_limit: float

    @property
    def passed(self) -> bool:
        return (
            self.elements_beyond == 0
            and self.variance <= self.variance_limit
            and (self.bias_limit is None or abs(self.bias) <= self.bias_limit)
        )

    def describe(self) -> str:
        """One line saying what failed (empty when it passed)."""
        said = []
        if self.elements_beyond:
            shown = "; ".join(str(m) for m in self.mismatches)
            said.append(
                f"{self.elements_beyond} elements beyond KS * max(bound * u, tiny) of the FLOAT64 "
                f"reference ({shown})"
            )
        if self.variance > self.variance_limit:
            said.append(
                f"error variance sum(e^2) = {self.variance:.6g} above 0.4 * KS * T = "
                f"{self.variance_limit:.6g}"
            )
        if self.bias_limit is not None and abs(self.bias) > self.bias_limit:
            said.append(
                f"error bias |sum(e)| = {abs(self.bias):.6g} above 2 * sqrt(KS * T) = "
                f"{self.bias_limit:.6g}"
            )
        return "; ".join(said)


def allowed_error(
    reference: np.ndarray,
    bound: np.ndarray,
    terms: int | float | np.ndarray,
    output_type: str,
    accumulation: str,
) -> np.ndarray:
    """Each element's allowed |actual - reference|: KS * max(bound * u(A), tiny(A)), plus the
    final rounding where the output type is narrower than the accumulation type A."""
    output_type = output_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    u_out, _ = _unit(output_type)
    u_acc, tiny_acc = _unit(accumulation)
    ref = np.asarray(reference, np.float64)
    with np.errstate(all="ignore"):
        allowed = np.asarray(terms, np.float64) * np.maximum(
            np.abs(np.asarray(bound, np.float64)) * u_acc, tiny_acc
        )
        if u_acc < u_out:  # the final rounding into a narrower output type
            smallest_gap = float(_finfo(output_type).smallest_subnormal)
            allowed = allowed + np.maximum(u_out * (np.abs(ref) + allowed), smallest_gap / 2)
    return np.broadcast_to(allowed, ref.shape)


def check_dot_product(
    reference: np.ndarray,
    bound: np.ndarray,
    actual: np.ndarray,
    terms: int | float | np.ndarray,
    output_type: str,
    accumulation: str | None = None,
    *,
    check_bias: bool = True,
    defined: np.ndarray | None = None,
    limit: int = MISMATCHES_SHOWN,
    intermediate: np.ndarray | None = None,
    statistics: bool = True,
) -> DotProductResult:
    """Judge `actual` (the output, in `output_type`) against the FLOAT64 `reference` and
    `bound` by the dot-product model; `terms` is KS (per element or one number) and
    `accumulation` the type the backend accumulates in (default: `accumulation_type`'s);
    `intermediate`, the largest magnitude an intermediate result reaches (default: the bound),
    decides where the order of the computation decides an overflow. Without `statistics` only
    the per-element bound is judged (elements whose errors are not independent)."""
    output_type = output_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    accumulation = accumulation or accumulation_type(output_type)
    ref = np.asarray(reference, np.float64)
    bnd = np.abs(np.asarray(bound, np.float64))
    got = np.asarray(actual).astype(np.float64)
    ks = np.broadcast_to(np.asarray(terms, np.float64), ref.shape)
    where = np.ones(ref.shape, bool) if defined is None else np.asarray(defined, bool)
    u_out, tiny_out = _unit(output_type)
    largest = float(_finfo(output_type).max)
    allowed = allowed_error(ref, bnd, ks, output_type, accumulation)
    with np.errstate(all="ignore"):
        reach = bnd if intermediate is None else np.maximum(bnd, np.abs(intermediate))
        order_decides = ~(reach * (1 + u_out) <= largest)
        gap = np.abs(got - ref)
        zero_bound = bnd == 0
        close = np.where(zero_bound, (got == 0) & (ref == 0), gap <= allowed)
        close |= order_decides
        beyond = where & ~close
        error = np.where(
            order_decides | zero_bound, 0.0, (got - ref) / np.maximum(bnd * u_out, tiny_out)
        )
    error = np.where(where & ~beyond & np.isfinite(error), error, 0.0)
    count = int(where.sum())
    mean_terms = float(ks[where].mean()) if count else 0.0
    cells = np.argwhere(beyond)[:limit]
    mismatches = tuple(
        Mismatch(tuple(int(i) for i in c), ref[tuple(c)], np.asarray(actual)[tuple(c)])
        for c in cells
    )
    return DotProductResult(
        mismatches=mismatches,
        elements_beyond=int(beyond.sum()),
        bias=float(error.sum()),
        bias_limit=2 * math.sqrt(mean_terms * count) if check_bias and statistics else None,
        variance=float((error * error).sum()),
        variance_limit=0.4 * mean_terms * count if statistics else math.inf,
    )


def absolute_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """The floating inputs as their absolute values (lists of arrays item by item): what the
    bound is computed from."""

    def absolute(value: Any) -> Any:
        if isinstance(value, list):
            return [absolute(v) for v in value]
        array = np.asarray(value)
        return np.abs(array) if array.dtype.kind == "f" else value

    return {name: absolute(value) for name, value in inputs.items()}
