"""`dmlspec export`: the generated cases as portable vectors.

Per case, a folder named by its stable id holds a DxDispatch model (model.json: .npy resources
for the inputs, the operator as its dispatchable, a dispatch and a print command), the
expected output (expected_<Output>.npy, from the NumPy reference) and, where some output cells
are undefined, their mask (undefined_<Output>.npy); and, where ONNX can express the case, the
ONNX node-test layout (onnx/model.onnx, onnx/test_data_set_0/{input,output}_N.pb).
manifest.json lists every case: id, operator, feature level, data types, files, comparison
rule, and which cells are undefined (for colliding writes, the allowed values as bit patterns).
An exactly compared output whose expected NaNs may come back as any NaN (arithmetic on a float
type whose common-spec NaN rule says so) has `any_nan`: true.
Where an arithmetic operator's data types may flush subnormals (the common spec's rule), an
output's `alternatives` name its other correct results (flushed_<Output>_N.npy: the expected
output flushed, the reference run on flushed inputs): each cell may match the expected file or
any alternative, by the same rule; what flushed inputs leave undefined is in the mask.
The same command writes byte-identical files, and only regular files inside the output
folder: a symbolic link planted there is replaced, never written through.

Strided cases (one per layout of the common spec and operator) hold their strided tensors as
buffers: <name>.npy and the model's resources are the whole buffers (TotalTensorSizeInBytes,
else DMLCalcBufferTensorSize), a strided output's resource starts as its sentinel-filled
initial buffer and expected_<Output>.npy is the whole buffer after the operator. The manifest
gives each strided output's view; undefined masks and colliding-write cells count the view's
logical elements, row-major, and every element outside the view must come back unchanged.
ONNX tensors have no strides: a strided case's onnx/ folder holds it with every tensor packed
(the logical arrays), and its manifest entry says so.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import reference
from ..binding import bind_desc
from ..conformance.cases import Case, draw_case, example_operator
from ..conformance.check import (
    accumulation_tolerance,
    any_nan_matches,
    flushed_alternatives,
    undefined_cells,
)
from ..conformance.descs import CellChoice, rows_at
from ..conformance.layouts import draw_layout_case
from ..model import Catalog, OperatorSpec
from ..reference.layout import is_strided, logical_view
from ..reference.tensors import numpy_dtype
from ..safeio import write_file
from ..validation import check_requires, validate_operator

__all__ = ["MAX_CASE_BYTES", "ExportedCase", "export", "iter_cases"]

MAX_CASE_BYTES = 1 << 20
PROPERTY_CASES = {"ci": 8, "dev": 30, "thorough": 100}
FORMATS = ("dxdispatch", "onnx")


@dataclass(frozen=True)
class ExportedCase:
    id: str
    spec: OperatorSpec
    case: Case


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _example_case(catalog: Catalog, spec: OperatorSpec, example_id: str, level: str) -> Case | None:
    example = next(e for e in spec.examples if e.id == example_id)
    desc, inputs, complete = example_operator(catalog, spec, example.valid_form.as_dict())
    if not complete:
        return None
    operator = {"type": spec.operator_type, "desc": desc}
    levels = [
        r.feature_level for r in spec.support if validate_operator(operator, r.feature_level).valid
    ]
    usable = [
        lv
        for lv in levels
        if catalog.common.feature_level(lv).rank <= catalog.common.feature_level(level).rank
    ]
    return Case(operator, inputs, usable[-1], 0) if usable else None


def items(values: dict[str, Any]) -> Iterator[tuple[str, str, Any, str, int | None]]:
    """Tensors of a case, tensor-array items one by one: (label, file stem, value, field,
    index), e.g. ("OutputTensors[1]", "OutputTensors_1", array, "OutputTensors", 1)."""
    for name, value in values.items():
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield f"{name}[{i}]", f"{name}_{i}", item, name, i
        else:
            yield name, name, value, name, None


def _tensor(desc: dict[str, Any], field: str, index: int | None) -> dict[str, Any]:
    tensor: dict[str, Any] = desc[field] if index is None else desc[field][index]
    return tensor


def iter_cases(
    catalog: Catalog, operators: list[str], level: str, profile: str
) -> Iterator[ExportedCase]:
    """Documented examples, one case per support cell up to `level`, and seeded random cases."""
    rank = catalog.common.feature_level(level).rank
    for name in operators:
        spec = catalog.operator(name)
        prefix = spec.name.lower()
        seen: set[str] = set()
        for example in spec.examples:
            case = _example_case(catalog, spec, example.id, level)
            if case is not None:
                yield ExportedCase(f"{prefix}-example-{_safe(example.id)}", spec, case)
        for row in spec.support:
            if catalog.common.feature_level(row.feature_level).rank > rank:
                continue
            for cell in row.tensors:
                keys = [("data_type", t) for t in cell.data_types] + [
                    ("rank", str(n)) for n in cell.dimension_counts
                ]
                for kind, value in keys:
                    cell_id = f"{prefix}-cell-{row.feature_level}-{cell.tensor}-{kind}-{value}"
                    if cell_id in seen:  # the same cell in another `when` group (REDUCE)
                        continue
                    seen.add(cell_id)
                    choice = CellChoice(cell.tensor, kind, int(value) if kind == "rank" else value)
                    seed = sum(map(ord, f"{row.feature_level}{cell.tensor}{kind}{value}"))
                    case = draw_case(catalog, spec, row.feature_level, seed, choice)
                    yield ExportedCase(cell_id, spec, case)
        if rows_at(catalog, spec, level):
            for layout in catalog.common.tensor_layouts:
                if layout.name == "packed":
                    continue
                strided = draw_layout_case(catalog, spec, level, 2000, layout.name)
                if strided is not None:
                    yield ExportedCase(f"{prefix}-layout-{layout.name}", spec, strided)
            for seed in range(PROPERTY_CASES[profile]):
                yield ExportedCase(
                    f"{prefix}-random-{seed:04d}",
                    spec,
                    draw_case(catalog, spec, level, 1000 + seed),
                )


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _bits(values: list[Any], dtype: np.dtype[Any]) -> list[str]:
    return [np.asarray(v, dtype=dtype).tobytes()[::-1].hex() for v in values]


def _rule(catalog: Catalog, spec: OperatorSpec, case: Case, output: str, data_type: str) -> Any:
    short = data_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    kind = catalog.common.data_type(short).kind
    env = bind_desc(catalog.common, spec, case.operator["desc"])
    return spec.checked_semantics.comparison_for(output, kind, short, env), env


def _rule_entry(rule: Any, env: Any, any_nan: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"rule": rule.rule}
    if rule.rule == "exact" and any_nan:
        entry["any_nan"] = True
    if rule.rule == "dot_product":
        # Vectors carry the per-element bound as a tolerance file beside one ULP for the
        # expected output's own rounding, and the error statistics' inputs (_statistics).
        entry.update(rule="ulp", max_ulps=1, ulp_scale=None)
    if rule.rule == "ulp":
        entry.update(
            max_ulps=rule.max_ulps, ulp_scale=rule.ulp_scale.source if rule.ulp_scale else None
        )
        if rule.ulps_of is not None:
            entry["ulps_of"] = rule.ulps_of
        tolerance = rule.absolute_tolerance(env)  # this case's desc: a number
        if tolerance is not None:
            entry["abs_tolerance"] = tolerance
    return entry


@dataclass(frozen=True)
class _DotProductVectors:
    """A dot-product output's files: each element's allowed distance from the FLOAT64
    reference, where any value is correct (an overflow the order of the sum decides; with a
    FusedActivation, where the conformance check accepts anything or NaN), and the statistics'
    inputs (None where a FusedActivation follows the sum: its slope changes the error's units,
    and the conformance check takes no statistics there either)."""

    tolerance: np.ndarray
    any_value: np.ndarray  # where any result is correct
    statistics: dict[str, Any] | None
    reference: np.ndarray
    bound: np.ndarray


def _dot_product_vectors(rule: Any, env: Any, case: Case, field: str) -> _DotProductVectors:
    """dmlspec.accuracy's model for one output, accumulated as DirectML does without execution
    flags. A FusedActivation's output gets the widest distance of the interval the conformance
    check allows (the sum's interval carried through the activation, and its slack) from the
    expected value; where that check accepts any result or NaN, the element is undefined."""
    from ..accuracy import accumulation_type, allowed_error
    from ..conformance.dot_product import checks_bias, fused_interval, fused_on

    value, bound, intermediate = reference.run_exact(case.operator, case.inputs)[field]
    output_type = str(case.operator["desc"][field]["DataType"])
    output_type = output_type.removeprefix("DML_TENSOR_DATA_TYPE_")
    terms = float(rule.terms.evaluate(env))
    accumulation = accumulation_type(output_type)
    allowed = allowed_error(value, bound, terms, output_type, accumulation)
    largest = float(np.finfo(numpy_dtype(output_type)).max)
    with np.errstate(all="ignore"):
        any_value = ~(np.maximum(bound, intermediate) * (1 + 2.0**-10) <= largest)  # overflows
    statistics = None
    if fused_on(case.operator, field):
        dtype = numpy_dtype(output_type)
        interval = fused_interval(case.operator, value, allowed, intermediate, dtype)
        with np.errstate(all="ignore"):
            allowed = (
                np.maximum(interval.high - interval.middle, interval.middle - interval.low)
                + interval.slack
            )
        any_value |= interval.anything | interval.may_be_nan | np.isnan(allowed)
        allowed = np.where(any_value, 0.0, allowed)
    elif rule.error_statistics:  # the spec may turn them off (RESAMPLE's repeated edges)
        statistics = {
            "terms": terms,
            "accumulation": accumulation,
            "bias": checks_bias(case.inputs, value, bound),
        }
    return _DotProductVectors(
        np.asarray(allowed, np.float64),
        any_value,
        statistics,
        np.asarray(value, np.float64),
        np.abs(np.asarray(bound, np.float64)),
    )


def _alternative_files(
    stem: str, expected: np.ndarray, label: str, alternatives: list[dict[str, Any]]
) -> dict[str, bytes]:
    """The other correct results of one output where its data type may flush subnormals
    (the expected output flushed, the reference on flushed inputs), each distinct one once."""
    files: dict[str, bytes] = {}
    seen = {expected.tobytes()}
    for alternative in alternatives:
        other = next((a for name, _, a, _, _ in items(alternative) if name == label), None)
        if other is None or np.asarray(other).tobytes() in seen:
            continue
        seen.add(np.asarray(other).tobytes())
        files[f"flushed_{stem}_{len(files)}.npy"] = _npy(np.asarray(other))
    return files


def _json_value(value: Any) -> Any:
    """A JSON number, or DxDispatch's "nan"/"inf"/"-inf" strings."""
    if isinstance(value, float) and not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _dxdispatch_model(
    spec: OperatorSpec, case: Case, outputs: dict[str, np.ndarray]
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    bindings: dict[str, Any] = {}
    desc = case.operator["desc"]
    for _, stem, array, field, index in items(case.inputs):
        # Inline values: DxDispatch's schema admits no file initializer (its Guide does; the
        # same data sits beside the model as <name>.npy for other runners). A strided
        # output's initial buffer is an input of the case too.
        resources[stem] = {
            "initialValuesDataType": _tensor(desc, field, index)["DataType"],
            "initialValues": [_json_value(v) for v in array.reshape(-1).tolist()],
        }
        _bind(bindings, field, index, stem)
    for _, stem, array, field, index in items(outputs):
        if stem not in resources:
            resources[stem] = {
                "initialValuesDataType": _tensor(desc, field, index)["DataType"],
                "initialValues": {"valueCount": int(array.size), "value": 0},
            }
            _bind(bindings, field, index, stem)
    printed = [stem for _, stem, _, _, _ in items(outputs)]
    return {
        "$schema": "./_schema.json",
        "resources": resources,
        "dispatchables": {"operator": case.operator},
        "commands": [
            {"type": "dispatch", "dispatchable": "operator", "bindings": bindings},
            *({"type": "print", "resource": name} for name in printed),
        ],
    }


def _bind(bindings: dict[str, Any], field: str, index: int | None, resource: str) -> None:
    """A bind point names its resource; a tensor array's, a list of them (DxDispatch)."""
    if index is None:
        bindings[field] = resource
    elif index == 0 or field not in bindings:
        bindings[field] = [resource]
    else:
        bindings[field].append(resource)


def _packed(case: Case, outputs: dict[str, np.ndarray]) -> tuple[Case, dict[str, np.ndarray]]:
    """The case with every tensor packed: Strides and TotalTensorSizeInBytes dropped, inputs
    and outputs their logical arrays."""
    desc = case.operator["desc"]
    if not any(isinstance(v, dict) and is_strided(v) for v in desc.values()):
        return case, outputs
    packed_desc = {
        k: {m: x for m, x in v.items() if m not in ("Strides", "TotalTensorSizeInBytes")}
        if isinstance(v, dict)
        else v
        for k, v in desc.items()
    }
    inputs = {
        k: v
        if isinstance(v, list)
        else np.ascontiguousarray(logical_view(v, desc[k]) if is_strided(desc[k]) else v)
        for k, v in case.inputs.items()
        if k not in outputs
    }
    logical = {
        k: v
        if isinstance(v, list)
        else np.ascontiguousarray(logical_view(v, desc[k]) if is_strided(desc[k]) else v)
        for k, v in outputs.items()
    }
    return Case(
        {"type": case.operator["type"], "desc": packed_desc}, inputs, case.feature_level, case.seed
    ), logical


def _onnx_files(case: Case, outputs: dict[str, np.ndarray]) -> dict[str, bytes] | None:
    from onnx import numpy_helper

    from .onnx_graphs import graph_for

    if any(isinstance(v, list) for v in [*case.inputs.values(), *outputs.values()]):
        return None  # tensor arrays: no ONNX graph is written for them yet
    dtypes = {k: v.dtype for k, v in case.inputs.items()} | {k: v.dtype for k, v in outputs.items()}
    model = graph_for(case.operator, dtypes)
    if model is None:
        return None
    files = {"onnx/model.onnx": model.SerializeToString()}
    for i, name in enumerate(i.name for i in model.graph.input):
        files[f"onnx/test_data_set_0/input_{i}.pb"] = numpy_helper.from_array(
            case.inputs[name], name
        ).SerializeToString()
    for i, name in enumerate(o.name for o in model.graph.output):
        files[f"onnx/test_data_set_0/output_{i}.pb"] = numpy_helper.from_array(
            outputs[name], name
        ).SerializeToString()
    return files


def export(
    catalog: Catalog,
    out: Path,
    operators: list[str],
    level: str,
    profile: str,
    formats: tuple[str, ...],
    large: bool = False,
) -> dict[str, Any]:
    """Write every case under `out`; return the manifest."""
    manifest: dict[str, Any] = {
        "format": "dmlspec-vectors/1",
        "feature_level": level,
        "profile": profile,
        "cases": [],
        "left_out": [],
    }
    out.mkdir(parents=True, exist_ok=True)
    for exported in iter_cases(catalog, operators, level, profile):
        case, spec = exported.case, exported.spec
        outputs, collisions = reference.run_recording(case.operator, case.inputs)
        packed_case, packed_outputs = _packed(case, outputs)
        requires = check_requires(packed_case.operator, packed_case.inputs, case.feature_level)
        alternatives = flushed_alternatives(catalog, spec, case, outputs)
        undefined_masks = undefined_cells(
            catalog, spec, case, packed_case.inputs, requires.undefined, alternatives
        )
        files: dict[str, bytes] = {
            f"{stem}.npy": _npy(a) for _, stem, a, _, _ in items(case.inputs)
        }
        files |= {f"expected_{stem}.npy": _npy(a) for _, stem, a, _, _ in items(outputs)}
        entry: dict[str, Any] = {
            "id": exported.id,
            "operator": spec.operator_type,
            "feature_level": case.feature_level,
            "seed": case.seed,
            "data_types": {
                k: [t["DataType"] for t in v] if isinstance(v, list) else v["DataType"]
                for k, v in case.operator["desc"].items()
                if (isinstance(v, dict) and "DataType" in v)  # tensors, not ScaleBias
                or (isinstance(v, list) and v and all(isinstance(t, dict) for t in v))
            },
            "outputs": {},
        }
        allowed = dict(requires.allowed)
        for name in undefined_masks:  # a fused activation's or flushed inputs' undefined cells
            allowed.setdefault(name, "any")
        compares_anything = False  # a defined element or a colliding write in some output
        for name, stem, array, field, index in items(outputs):
            tensor = _tensor(case.operator["desc"], field, index)
            undefined = undefined_masks.get(name)
            rule, env = _rule(catalog, spec, case, field, tensor["DataType"])
            any_nan = any_nan_matches(catalog, spec, tensor["DataType"])
            output_entry = {"expected": f"expected_{stem}.npy", **_rule_entry(rule, env, any_nan)}
            flushed = _alternative_files(stem, array, name, alternatives)
            if flushed:
                files |= flushed
                output_entry["alternatives"] = sorted(flushed)
            if rule.rule == "dot_product":
                model = _dot_product_vectors(rule, env, packed_case, field)
                any_value = model.any_value
                files[f"tolerance_{stem}.npy"] = _npy(model.tolerance)
                output_entry["tolerance"] = f"tolerance_{stem}.npy"
                if model.statistics is not None:
                    files[f"reference_{stem}.npy"] = _npy(model.reference)
                    files[f"bound_{stem}.npy"] = _npy(model.bound)
                    output_entry["statistics"] = {
                        "reference": f"reference_{stem}.npy",
                        "bound": f"bound_{stem}.npy",
                        **model.statistics,
                    }
                if any_value.any():  # an overflow the order decides, a fused activation's
                    undefined = any_value if undefined is None else undefined | any_value
                    allowed.setdefault(name, "any")
            elif rule.terms is not None and rule.max_ulps is not None:
                # The accumulated-rounding bound, per element; where it reaches past the type's
                # range the order of accumulation decides overflow: undefined.
                packed = packed_outputs[field]
                logical = packed if index is None else packed[index]
                tolerance = accumulation_tolerance(rule, env, packed_case, field, logical)
                files[f"tolerance_{stem}.npy"] = _npy(tolerance)
                output_entry["tolerance"] = f"tolerance_{stem}.npy"
                with np.errstate(all="ignore"):
                    reach = np.abs(logical.astype(np.float64)) + tolerance
                overflow = np.isfinite(logical) & ~(reach <= float(np.finfo(logical.dtype).max))
                if overflow.any():
                    undefined = overflow if undefined is None else undefined | overflow
                    allowed.setdefault(name, "any")
            compares_anything |= undefined is None or not undefined.all()
            compares_anything |= bool(collisions.get(name))
            if undefined is not None and undefined.any():
                files[f"undefined_{stem}.npy"] = _npy(undefined)
                output_entry["undefined"] = {
                    "mask": f"undefined_{stem}.npy",
                    "values": allowed[name],
                }
            if is_strided(tensor):
                output_entry["view"] = {
                    "Sizes": tensor["Sizes"],
                    "Strides": tensor["Strides"],
                    "outside": "unchanged",
                }
            if collisions.get(name):
                output_entry["colliding_writes"] = {
                    str(cell): _bits(values, array.dtype)
                    for (cell,), values in sorted(collisions[name].items())
                }
            entry["outputs"][name] = output_entry
        if "dxdispatch" in formats:
            files["model.json"] = (
                json.dumps(_dxdispatch_model(spec, case, outputs), indent=2, sort_keys=True) + "\n"
            ).encode()
        if "onnx" in formats:
            onnx_files = _onnx_files(packed_case, packed_outputs)
            if onnx_files is not None:
                files |= onnx_files
                if packed_case is not case:
                    entry["onnx"] = (
                        "packed: ONNX tensors have no strides, so onnx/ holds every tensor as its "
                        "logical array; the strides and buffer sizes are left out"
                    )
        if not compares_anything:
            manifest["left_out"].append(
                {
                    "id": exported.id,
                    "reason": "every output element is undefined for these inputs or may "
                    "hold any value (the spec's rules, an overflow the order of a sum decides): "
                    "the case would compare nothing",
                }
            )
            continue
        size = sum(len(data) for data in files.values())
        if size > MAX_CASE_BYTES and not large:
            manifest["left_out"].append(
                {"id": exported.id, "reason": f"{size} bytes, over {MAX_CASE_BYTES} (use --large)"}
            )
            continue
        entry["files"] = sorted(files)
        for relative, data in files.items():  # never through a link planted in `out`
            write_file(out, f"{exported.id}/{relative}", data)
        manifest["cases"].append(entry)
    write_file(
        out, "manifest.json", (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    )
    return manifest
