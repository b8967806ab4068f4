"""A case's output judged by the dot-product accuracy model (dmlspec.accuracy), for outputs
whose spec rule is `dot_product`: the FLOAT64 reference and its bound from
`reference.run_exact`, KS from the rule's `terms`, the accumulation type from the backend's
`execution_flags`.

A FusedActivation is applied after the sum. Where a desc has one, each element's allowed
interval [reference - allowance, reference + allowance] is carried through the activation (its
values at both ends and at the reference, each also as the output type rounds it) and widened
by the activation's own allowance (its spec's ULPs and absolute tolerance, at least four ULPs);
where the activation's values overflow the output type any result is accepted. The error
statistics are not taken there, since the activation's slope changes the error's units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import reference
from ..accuracy import accumulation_type, allowed_error, check_dot_product
from ..backends.contract import execution_flags
from ..compare import MISMATCHES_SHOWN, Mismatch
from ..reference.element_wise import fused_activation

__all__ = [
    "FusedInterval",
    "checks_bias",
    "dot_product_problems",
    "fused_interval",
    "fused_on",
    "signed_data",
]

ACTIVATION_ULPS = 4


def fused_on(operator: Mapping[str, Any], name: str) -> Any:
    """The FusedActivation that output `name` passes through: the operator's on its
    OutputTensor (BATCH_NORMALIZATION_TRAINING's mean and variance outputs take none)."""
    return operator["desc"].get("FusedActivation") if name == "OutputTensor" else None


def signed_data(inputs: Mapping[str, Any]) -> bool:
    """Whether a floating input holds a negative value: data not positively biased, whose
    error bias TOSA checks."""
    for value in inputs.values():
        for array in value if isinstance(value, list) else [value]:
            data = np.asarray(array)
            if data.dtype.kind == "f" and bool((data < 0).any()):
                return True
    return False


def checks_bias(inputs: Mapping[str, Any], value: np.ndarray, bound: np.ndarray) -> bool:
    """Whether TOSA's error bias is checked for an output: signed data, and sums that do not
    all hold terms of one sign."""
    return signed_data(inputs) and not _one_signed_terms(value, bound)


def _one_signed_terms(value: np.ndarray, bound: np.ndarray) -> bool:
    """Whether every element sums terms of one sign (its bound, the sum of the terms' absolute
    values, is its value's magnitude): LP_POOLING's |x|^P, whatever the inputs' signs. Such sums
    are positively biased data, whose error bias TOSA does not check."""
    with np.errstate(invalid="ignore"):
        same = (bound == np.abs(value)) | ~np.isfinite(value) | ~np.isfinite(bound)
    return bool(np.all(same))


def _activation_tolerance(activation: Mapping[str, Any], output_type: str) -> tuple[float, float]:
    """The fused activation's own allowance, from its spec's comparison rule (its ULPs and its
    absolute tolerance where that is a number), at least ACTIVATION_ULPS."""
    from ..reference.fields import catalog

    kind = str(activation.get("Type", activation.get("type", ""))).removeprefix("DML_OPERATOR_")
    try:
        spec = catalog().operator(kind)
        rule = spec.checked_semantics.comparison_for("OutputTensor", "float", output_type)
    except (KeyError, ValueError):
        return float(ACTIVATION_ULPS), 0.0
    absolute = rule.abs_tolerance if isinstance(rule.abs_tolerance, int | float) else 0.0
    return float(max(rule.max_ulps or 0, ACTIVATION_ULPS)), float(absolute or 0.0)


@dataclass(frozen=True)
class FusedInterval:
    """Where a FusedActivation's result may lie, element by element: the activation of the
    FLOAT64 reference (`middle`), the interval's ends with a slack for the activation's own
    rounding, where any result is accepted (its values overflow the output type, or the order
    of the sum decides an overflow) and where NaN is (the activation gives NaN somewhere in the
    interval)."""

    middle: np.ndarray
    low: np.ndarray
    high: np.ndarray
    slack: np.ndarray
    anything: np.ndarray
    may_be_nan: np.ndarray


def fused_interval(
    operator: Mapping[str, Any],
    value: np.ndarray,
    allowance: np.ndarray,
    intermediate: np.ndarray,
    output_dtype: Any,
) -> FusedInterval:
    """The interval [value - allowance, value + allowance] of each sum carried through the
    operator's FusedActivation (its values at both ends and at the reference, each also as the
    output type rounds them), widened by the activation's own allowance."""
    activation = operator["desc"]["FusedActivation"]
    kind = str(operator.get("type", "")).removeprefix("DML_OPERATOR_")
    dtype = np.dtype(output_dtype)
    with np.errstate(all="ignore"):
        ends = [
            fused_activation(kind, activation, v)
            for v in (value - allowance, value, value + allowance)
        ]
        # The interval's ends as the output type rounds them too (an activation may overflow it).
        rounded = [end.astype(dtype).astype(np.float64) for end in ends]
    low = np.minimum.reduce(ends + rounded)
    high = np.maximum.reduce(ends + rounded)
    ulps, absolute = _activation_tolerance(activation, dtype.name.upper())
    top = float(np.finfo(dtype).max)
    with np.errstate(all="ignore"):
        largest = np.maximum(np.abs(low), np.abs(high)).astype(dtype)
        unit = np.where(np.isfinite(largest), np.spacing(largest).astype(np.float64), 0.0)
        slack = ulps * unit + absolute
        # a result below the smallest normal value may be flushed to zero (the common spec's
        # subnormal rule): a subnormal interval reaches 0 within its slack
        tiny = float(np.finfo(dtype).tiny)
        slack = slack + np.where(np.maximum(np.abs(low), np.abs(high)) < tiny, tiny, 0.0)
        # the activation's own intermediates overflow the output type: any result
        anything = ~(np.abs(np.stack(ends)).max(axis=0) <= top)
        fused_kind = str(activation.get("Type", activation.get("type", "")))
        if "MAX" in fused_kind.removeprefix("DML_OPERATOR_ACTIVATION_"):  # x - max(x) per row
            anything |= bool((~(2 * np.abs(value) <= top)).any())
        # the order decides whether an intermediate overflows
        anything |= ~(np.abs(intermediate) * (1 + 2.0**-10) <= top)
        may_be_nan = np.isnan(np.stack(ends)).any(axis=0)  # NaN from the activation
    return FusedInterval(ends[1], low, high, slack, anything, may_be_nan)


def dot_product_problems(
    case: Any,
    name: str,
    rule: Any,
    env: Any,
    backend: Any,
    got: np.ndarray,
    defined: np.ndarray,
) -> list[str]:
    """What is wrong with output `name` (logical, in its output type) by the dot-product model;
    empty when it passes."""
    exact = reference.run_exact(case.operator, case.inputs)
    value, bound, intermediate = exact[name]
    terms = float(rule.terms.evaluate(env))
    output_type = got.dtype.name.upper()
    accumulation = accumulation_type(output_type, execution_flags(backend))
    activation = fused_on(case.operator, name)
    if not activation:
        result = check_dot_product(
            value,
            bound,
            got,
            terms,
            output_type,
            accumulation,
            check_bias=checks_bias(case.inputs, value, bound),
            defined=defined,
            intermediate=intermediate,
            statistics=rule.error_statistics,
        )
        return [] if result.passed else [result.describe()]
    allowance = allowed_error(value, bound, terms, output_type, accumulation)
    interval = fused_interval(case.operator, value, allowance, intermediate, got.dtype)
    wide = got.astype(np.float64)
    with np.errstate(all="ignore"):
        inside = (wide >= interval.low - interval.slack) & (wide <= interval.high + interval.slack)
        inside |= interval.anything
        inside |= wide == interval.middle  # infinities
        inside |= np.isnan(wide) & interval.may_be_nan
    bad = defined & ~inside
    cells = np.argwhere(bad)[:MISMATCHES_SHOWN]
    shown = [
        str(Mismatch(tuple(int(i) for i in c), interval.middle[tuple(c)], got[tuple(c)]))
        for c in cells
    ]
    if not bad.any():
        return []
    return [
        f"{int(bad.sum())} elements outside the FusedActivation of the FLOAT64 reference's "
        f"allowed interval ({'; '.join(shown)})"
    ]
