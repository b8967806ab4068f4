"""Run one case on a backend and judge the result by the spec's rules.

The NumPy reference gives the expected output; the spec's requires constraints say which
cells are undefined (skipped) and, for overlapping writes, which values are allowed (any of
the colliding updates). A backend that raises anything but Unsupported or InvalidOperator,
or returns the wrong outputs, shapes or dtypes, fails the case with a clear message.

Strided outputs (descs with Strides) come back as whole buffers: they are compared inside
their view by the same rules, and every element outside it must be bitwise what the backend
was given (the sentinel the layout filled it with).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .. import reference
from ..binding import bind_desc
from ..compare import (
    exact_mismatches,
    flush_subnormals,
    mismatches_none_explains,
    ulp_mismatches,
)
from ..errors import InvalidOperator, Unsupported
from ..model import Catalog, OperatorSpec
from ..reference.layout import changed_outside_view, is_strided, logical_view
from ..reference.tensors import numpy_dtype
from ..validation import check_requires, validator_for
from ..validation.engine import check_requires_with
from .cases import Case
from .dot_product import dot_product_problems

__all__ = ["CaseFailure", "run_case"]


class CaseFailure(AssertionError):
    """A conformance failure, with everything needed to rerun the case."""


def _fail(case: Case, what: str) -> CaseFailure:
    return CaseFailure(f"{what}\n--- case ---\n{case.describe()}")


def run_case(catalog: Catalog, spec: OperatorSpec, backend: Any, case: Case) -> None:
    """Raise CaseFailure unless the backend's outputs match the reference where defined.

    Raises Unsupported when the backend does not implement the case (a skip, never a pass)."""
    expected, collisions = reference.run_recording(case.operator, case.inputs)
    alternatives = flushed_alternatives(catalog, spec, case, expected)
    desc = case.operator["desc"]
    logical = {
        name: _logical(value, desc[name])
        for name, value in case.inputs.items()
        if name not in expected
    }
    requires = check_requires(case.operator, logical, case.feature_level)
    undefined = undefined_cells(catalog, spec, case, logical, requires.undefined, alternatives)
    given = {
        k: [a.copy() for a in v] if isinstance(v, list) else v.copy()
        for k, v in case.inputs.items()
    }
    try:
        actual = backend.run(case.operator, given)
    except Unsupported:
        raise
    except InvalidOperator as error:
        raise _fail(case, f"{backend.name} rejected a valid {spec.name} desc: {error}") from None
    except Exception as error:  # a backend's own bug must fail the case, not the run
        raise _fail(case, f"{backend.name} raised {type(error).__name__}: {error}") from None
    if not isinstance(actual, Mapping) or set(actual) != set(expected):
        returned = sorted(actual) if isinstance(actual, Mapping) else type(actual).__name__
        raise _fail(case, f"{backend.name} must return outputs {sorted(expected)}; got {returned}")
    for name, want in expected.items():
        if isinstance(want, list):  # a tensor array: item by item
            got_items = actual[name]
            if not isinstance(got_items, list | tuple) or len(got_items) != len(want):
                shown = len(got_items) if isinstance(got_items, list | tuple) else type(got_items)
                raise _fail(case, f"{name} must be a list of {len(want)} arrays; got {shown}")
            initial = case.inputs.get(name) or [None] * len(want)
            for i, (item, got, tensor) in enumerate(zip(want, got_items, desc[name], strict=True)):
                _check_output(
                    catalog,
                    spec,
                    case,
                    backend,
                    f"{name}[{i}]",
                    name,
                    tensor,
                    item,
                    got,
                    initial[i],
                    None,
                    {},
                    [],
                )
            continue
        _check_output(
            catalog,
            spec,
            case,
            backend,
            name,
            name,
            desc[name],
            want,
            actual[name],
            case.inputs.get(name),
            undefined.get(name),
            collisions.get(name, {}),
            [alternative[name] for alternative in alternatives],
        )


def _logical(value: Any, tensor: Any) -> Any:
    if isinstance(value, list):
        return [_logical(v, t) for v, t in zip(value, tensor, strict=True)]
    return logical_view(value, tensor) if is_strided(tensor) else value


def _check_output(
    catalog: Catalog,
    spec: OperatorSpec,
    case: Case,
    backend: Any,
    label: str,
    field: str,
    tensor: Mapping[str, Any],
    want: np.ndarray,
    actual: Any,
    initial: np.ndarray | None,
    undefined: np.ndarray | None,
    allowed: Mapping[Any, Any],
    alternatives: list[np.ndarray],
) -> None:
    """One output tensor (or item of a tensor-array output) against the reference."""
    got = np.asarray(actual)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise _fail(
            case,
            f"{label} must be {want.dtype}{list(want.shape)} as its desc says; "
            f"got {got.dtype}{list(got.shape)}",
        )
    if is_strided(tensor):
        assert initial is not None  # a strided output's initial buffer is an input
        gaps = _gaps_changed(initial, got, tensor)
        if gaps:
            raise _fail(case, f"{label}: elements outside the strided view changed: {gaps}")
        want, got = logical_view(want, tensor), logical_view(got, tensor)
    defined = ~(undefined if undefined is not None else np.zeros(want.shape, dtype=bool))
    flat_defined = defined.reshape(-1)
    problems = []
    for (cell,), values in allowed.items():
        if not flat_defined[cell]:
            continue  # undefined (a requires rule): any value
        flat_defined[cell] = False
        choices = {np.asarray(v, dtype=got.dtype).tobytes() for v in values}
        if got.reshape(-1)[cell].tobytes() not in choices:
            value = got.reshape(-1)[cell]
            problems.append(f"cell {cell}: {value!r} is none of the colliding updates {values}")
    rule = _rule(catalog, spec, case, field, tensor)
    if rule.rule == "dot_product":
        env = bind_desc(catalog.common, spec, case.operator["desc"])
        found = dot_product_problems(case, field, rule, env, backend, got, defined)
        if found and alternatives:  # subnormal inputs may be flushed: judged on those too
            outputs = {f.name for f in spec.fields if f.is_output}
            flushed = replace(case, inputs=flushed_inputs(catalog, case, outputs))
            if not dot_product_problems(flushed, field, rule, env, backend, got, defined):
                found = []
        problems += found
        if problems:
            raise _fail(case, f"{label} differs from the reference:\n  " + "\n  ".join(problems))
        return
    mismatches = mismatches_none_explains(
        lambda other, cells, limit: _compare(
            catalog, spec, case, field, tensor, other, got, cells, limit
        ),
        want,
        # subnormals flushed, where the data type allows it
        [logical_view(a, tensor) if is_strided(tensor) else a for a in alternatives],
        defined,
    )
    problems += [str(m) for m in mismatches]
    if problems:
        raise _fail(case, f"{label} differs from the reference:\n  " + "\n  ".join(problems[:5]))


def _merged(*masks: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    merged: dict[str, np.ndarray] = {}
    for by_output in masks:
        for name, mask in by_output.items():
            merged[name] = merged[name] | mask if name in merged else mask
    return merged


def fused_undefined(catalog: Catalog, spec: OperatorSpec, case: Case) -> dict[str, np.ndarray]:
    """What a fused activation's own requires rules leave undefined in OutputTensor, read on
    the activation's input: the operator's result before it (a fused HARDMAX given a NaN)."""
    desc = case.operator["desc"]
    output = desc.get("OutputTensor")
    found: dict[str, np.ndarray] = {}
    for field in spec.fields:
        fused = desc.get(field.name)
        if field.kind != "operator_desc" or not isinstance(fused, Mapping):
            continue
        kind = str(fused["Type"]).removeprefix("DML_OPERATOR_")
        nested = catalog.operator(kind)
        if not isinstance(output, Mapping) or not any(
            c.constraint_class == "requires" for c in nested.constraints
        ):
            continue
        unfused = {
            "type": case.operator["type"],
            "desc": {k: v for k, v in desc.items() if k != field.name},
        }
        before = _logical(reference.run(unfused, case.inputs)["OutputTensor"], output)
        packed = {k: v for k, v in output.items() if k not in ("Strides", "TotalTensorSizeInBytes")}
        attributes = fused.get("Desc", {k: v for k, v in fused.items() if k != "Type"})
        alone = {
            "type": f"DML_OPERATOR_{kind}",
            "desc": {"InputTensor": packed, "OutputTensor": packed, **attributes},
        }
        module = validator_for(alone)
        assert module is not None  # a member of an operator set has a spec
        # Read as if alone, not validated: an activation's own shape rules (HARDMAX's effective
        # rank) are not its fused form's.
        report = check_requires_with(
            module.TABLE,
            module.COMMON,
            alone,
            {"InputTensor": before},
            case.feature_level,
            validated=False,
        )
        mask = report.undefined.get("OutputTensor")
        if mask is not None:
            found = _merged(found, {"OutputTensor": mask})
    return found


def undefined_cells(
    catalog: Catalog,
    spec: OperatorSpec,
    case: Case,
    inputs: Mapping[str, Any],
    undefined: Mapping[str, np.ndarray],
    alternatives: list[dict[str, np.ndarray]],
) -> dict[str, np.ndarray]:
    """Every output's undefined cells: those of the requires rules (`undefined`, read on the
    logical `inputs`), a fused activation's, and, where other results are correct because
    subnormals may be flushed, what the requires rules leave undefined on flushed inputs (a
    backend that flushes may meet, say, a zero divisor)."""
    masks = _merged(undefined, fused_undefined(catalog, spec, case))
    if alternatives:
        flushed = {n: flush_subnormals(np.asarray(a)) for n, a in inputs.items()}
        masks = _merged(masks, check_requires(case.operator, flushed, case.feature_level).undefined)
    return masks


def flushed_alternatives(
    catalog: Catalog, spec: OperatorSpec, case: Case, expected: dict[str, np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """Other correct results of an arithmetic operator whose data types may flush subnormals
    (common spec): the expected outputs flushed, and the reference run on flushed inputs (and
    those outputs flushed too)."""
    if not spec.checked_semantics.arithmetic:
        return []
    desc = case.operator["desc"]

    def flushable(name: str) -> bool:
        tensor = desc.get(name)
        if not isinstance(tensor, Mapping) or "DataType" not in tensor:
            return False
        data_type = str(tensor["DataType"]).removeprefix("DML_TENSOR_DATA_TYPE_")
        return catalog.common.data_type(data_type).may_flush_subnormals

    alternatives = []
    outputs = {n: flush_subnormals(a) if flushable(n) else a for n, a in expected.items()}
    if any(not np.array_equal(outputs[n], expected[n], equal_nan=True) for n in outputs):
        alternatives.append(outputs)
    inputs = flushed_inputs(catalog, case, set(expected))
    if any(
        inputs[n] is not case.inputs[n]
        and not np.array_equal(inputs[n], case.inputs[n], equal_nan=True)
        for n in inputs
    ):
        flushed = reference.run(case.operator, inputs)
        alternatives.append(flushed)
        alternatives.append(
            {n: flush_subnormals(a) if flushable(n) else a for n, a in flushed.items()}
        )
    return alternatives


def flushed_inputs(catalog: Catalog, case: Case, outputs: set[str]) -> dict[str, Any]:
    """The case's inputs (not the initial buffers of `outputs`) with the subnormals of every
    data type that may flush them (common spec) flushed to zeros of their sign."""
    desc = case.operator["desc"]

    def flushable(name: str) -> bool:
        tensor = desc.get(name)
        if not isinstance(tensor, Mapping) or "DataType" not in tensor:
            return False
        data_type = str(tensor["DataType"]).removeprefix("DML_TENSOR_DATA_TYPE_")
        return catalog.common.data_type(data_type).may_flush_subnormals

    return {
        n: flush_subnormals(a) if flushable(n) and n not in outputs else a
        for n, a in case.inputs.items()
    }


def _gaps_changed(initial: np.ndarray, got: np.ndarray, tensor: Mapping[str, Any]) -> str:
    """Where a returned strided buffer differs, outside its view, from the one given."""
    changed = changed_outside_view(initial, got, tensor)
    shown = ", ".join(
        f"element {i}: {initial[i].item()!r} became {got[i].item()!r}" for i in changed[:3].tolist()
    )
    return f"{changed.size} buffer elements, e.g. {shown}" if changed.size else ""


def any_nan_matches(catalog: Catalog, spec: OperatorSpec, data_type: str) -> bool:
    """Whether an exactly compared output of this data type accepts any NaN where a NaN is
    expected: the operator does arithmetic and the common spec's NaN rule for the type says a
    NaN from arithmetic may be any NaN (data movement keeps a NaN's bits)."""
    return (
        spec.checked_semantics.arithmetic
        and catalog.common.data_type(data_type).any_nan_from_arithmetic
    )


def _rule(
    catalog: Catalog, spec: OperatorSpec, case: Case, name: str, tensor: Mapping[str, Any]
) -> Any:
    """The spec's comparison rule for output `name` of this case."""
    data_type = str(tensor.get("DataType", "")).removeprefix("DML_TENSOR_DATA_TYPE_")
    kind = catalog.common.data_type(data_type).kind
    env = bind_desc(catalog.common, spec, case.operator["desc"])
    return spec.checked_semantics.comparison_for(name, kind, data_type, env)


def _compare(
    catalog: Catalog,
    spec: OperatorSpec,
    case: Case,
    name: str,
    tensor: Mapping[str, Any],
    want: np.ndarray,
    got: np.ndarray,
    defined: np.ndarray,
    limit: int | None,
) -> list[Any]:
    """The cells where `got` differs from `want` by the output's rule (the first `limit`)."""
    data_type = str(tensor.get("DataType", "")).removeprefix("DML_TENSOR_DATA_TYPE_")
    kind = catalog.common.data_type(data_type).kind
    env = bind_desc(catalog.common, spec, case.operator["desc"])
    rule = spec.checked_semantics.comparison_for(name, kind, data_type, env)
    if rule.rule == "exact" or rule.max_ulps is None:
        any_nan = any_nan_matches(catalog, spec, data_type)
        return exact_mismatches(want, got, defined, limit, any_nan=any_nan)
    if rule.terms is not None:
        return _accumulated(catalog, spec, case, name, rule, env, want, got, defined, limit)
    tolerance = rule.absolute_tolerance(env)
    ulps_of = None if rule.ulps_of is None else numpy_dtype(rule.ulps_of)
    if rule.ulp_scale is None:  # the ULP of each expected element
        return ulp_mismatches(want, got, want, rule.max_ulps, defined, tolerance, limit, ulps_of)
    env.values["k"] = np.arange(want.size, dtype=np.float64)  # every element at once
    # The larger of the expected value and the rule's magnitude: a formula whose terms are
    # larger than its result (cancellation) is allowed their rounding.
    scale = np.maximum(
        np.abs(want.reshape(-1).astype(np.float64)),
        np.broadcast_to(np.asarray(rule.ulp_scale.evaluate(env), dtype=np.float64), (want.size,)),
    )
    return ulp_mismatches(
        want, got, scale.reshape(want.shape), rule.max_ulps, defined, tolerance, limit, ulps_of
    )


def accumulation_tolerance(
    rule: Any, env: Any, case: Case, name: str, want: np.ndarray
) -> np.ndarray:
    """terms * eps * magnitude per element (the spec's accumulated-rounding bound), float64."""
    terms = float(rule.terms.evaluate(env))
    eps = float(np.finfo(want.dtype).eps)
    expected = np.abs(want.astype(np.float64))
    with np.errstate(all="ignore"):
        if rule.magnitude == "output":
            magnitude = expected
        elif rule.magnitude == "one":
            magnitude = np.ones_like(expected)
        else:  # absolute_inputs, log_of_sum: the reference run on |x|
            absolute = {
                k: np.abs(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
                for k, v in case.inputs.items()
            }
            on_absolute = np.asarray(reference.run(case.operator, absolute)[name])
            tensor = case.operator["desc"][name]
            if is_strided(tensor):  # the whole buffer comes back: its view is the output
                on_absolute = logical_view(on_absolute, tensor)
            on_absolute = on_absolute.astype(np.float64)
            if rule.magnitude == "log_of_sum":  # exp(log sum|x| - log |sum x|) = sum|x| / |sum|
                magnitude = np.exp(on_absolute - want.astype(np.float64))
            else:
                magnitude = np.abs(on_absolute)
        return terms * eps * magnitude


def _accumulated(
    catalog: Catalog,
    spec: OperatorSpec,
    case: Case,
    name: str,
    rule: Any,
    env: Any,
    want: np.ndarray,
    got: np.ndarray,
    defined: np.ndarray,
    limit: int | None,
) -> list[Any]:
    """max_ulps * ULP(expected) + terms * eps * magnitude. Where that bound reaches past the
    output type's largest value, the order of the accumulation decides whether an intermediate
    overflows (to an infinity, or NaN from opposite infinities): any result is accepted there."""
    tolerance = accumulation_tolerance(rule, env, case, name, want)
    largest = float(np.finfo(want.dtype).max)
    with np.errstate(all="ignore"):
        reach = np.abs(want.astype(np.float64)) + tolerance
    order_decides = np.isfinite(want) & ~(reach <= largest)
    return ulp_mismatches(
        want,
        got,
        want,
        rule.max_ulps,
        defined & ~order_decides,
        tolerance + (rule.absolute_tolerance(env) or 0.0),
        limit,
    )
