"""`dmlspec run-vectors`: run exported vectors on a backend, compare by the manifest's rules.

A vector folder is input like any other: every path it names (case ids, expected and mask
files, the inputs beside each model) must stay inside the folder unless the user allows any
path, files are read only when regular and within the size limit, .npy files never unpickle,
and every stored array must have the data type and shape its desc gives it. A malformed
folder raises `VectorsError`, one line naming the file and what is wrong.

A strided output (its manifest entry has a `view`) is a whole buffer: the elements outside the
view must be bitwise those expected (the initial buffer's, unchanged), and the view is
compared by the rules like any output. An output's `alternatives` (subnormals flushed, where
its data type allows it) are other correct results: a cell that misses the expected value may
match any of them, by the same rule. A dot-product output's `statistics` (the FLOAT64 reference
and bound of each element, KS, the accumulation type) judge the error's bias and variance over
the whole output once every element is within its tolerance, as `dmlspec conformance` does."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..accuracy import check_dot_product
from ..compare import exact_mismatches, mismatches_none_explains, ulp_mismatches
from ..errors import InvalidOperator, Unsupported
from ..jsonio import JsonReadError, read_json_file
from ..limits import MAX_ALTERNATIVES, cut, quote
from ..reference.layout import buffer_elements, changed_outside_view, is_strided, logical_view
from ..reference.tensors import numpy_dtype
from ..safeio import UnsafePath, confine, read_npy

__all__ = ["VectorResult", "VectorsError", "run_vectors"]


class VectorsError(ValueError):
    """A vector folder that is malformed or names something it may not (one-line message)."""


@dataclass(frozen=True)
class VectorResult:
    id: str
    outcome: str  # passed, failed, skipped
    message: str = ""


def _scale(rule: dict[str, Any], operator: dict[str, Any], count: int) -> np.ndarray:
    from .. import load_catalog
    from ..binding import bind_desc

    catalog = load_catalog()
    spec = catalog.operator(operator["type"])
    comparison = next(
        (
            c
            for c in spec.checked_semantics.comparison
            if c.ulp_scale is not None and c.ulp_scale.source == rule["ulp_scale"]
        ),
        None,
    )
    if comparison is None:
        raise VectorsError(
            f"ulp_scale {quote(rule['ulp_scale'])} is none of {spec.name}'s comparison rules"
        )
    env = bind_desc(catalog.common, spec, operator["desc"])
    env.values["k"] = np.arange(count, dtype=np.float64)  # every element at once
    values = comparison.ulp_scale.evaluate(env)  # type: ignore[union-attr]
    return np.broadcast_to(np.asarray(values, dtype=np.float64), (count,))


def _mismatches(
    rules: dict[str, Any],
    operator: dict[str, Any],
    actual: np.ndarray,
    expected: np.ndarray,
    defined: np.ndarray,
    limit: int | None,
) -> list[Any]:
    """Where `actual` differs from `expected` by the output's rule, in the defined cells (the
    first `limit` of them; None: all)."""
    if rules["rule"] != "ulp":
        any_nan = rules.get("any_nan", False)
        return exact_mismatches(expected, actual, defined, limit, any_nan=any_nan)
    scale = (
        expected
        if rules.get("ulp_scale") is None  # the ULP of each expected element
        else np.maximum(
            np.abs(expected.astype(np.float64)),
            _scale(rules, operator, expected.size).reshape(expected.shape),
        )
    )
    ulps_of = None if rules.get("ulps_of") is None else numpy_dtype(rules["ulps_of"])
    return ulp_mismatches(
        expected,
        actual,
        scale,
        rules["max_ulps"],
        defined,
        rules.get("abs_tolerance"),
        limit,
        ulps_of,
    )


def _check_float_type(name: str, where: str) -> None:
    from dmlspec_generated.validators.common import DATA_TYPES

    floats = sorted(n for n, d in DATA_TYPES.items() if d.kind == "float")
    if name not in floats:
        raise VectorsError(f"{where} must be one of {', '.join(floats)}; got {quote(name)}")


class _Folder:
    """Reads what a vector folder names, confined to it unless any path is allowed."""

    def __init__(self, root: Path, allow_any_path: bool) -> None:
        self.root, self.allow_any_path = root, allow_any_path

    def path(self, relative: object, what: str, case: str = "") -> Path:
        """`root/relative` (`root/case/relative` when a case's file is named)."""
        try:
            if case:  # the name itself may not climb out of the case folder
                confine(self.root / case, relative, what, "its case folder", self.allow_any_path)
                relative = f"{case}/{relative}"
            return confine(self.root, relative, what, "the vector folder", self.allow_any_path)
        except UnsafePath as error:
            raise VectorsError(str(error)) from None

    def json(self, relative: str) -> Any:
        try:
            return read_json_file(self.path(relative, "file"))
        except JsonReadError as error:
            raise VectorsError(f"{relative}: {error}") from None

    def array(self, relative: str, what: str, case: str = "") -> np.ndarray:
        try:
            return read_npy(self.path(relative, what, case))
        except UnsafePath as error:
            raise VectorsError(str(error)) from None
        except OSError as error:
            shown = f"{case}/{relative}" if case else relative
            raise VectorsError(f"cannot read {shown}: {error.strerror or error}") from None


_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer"}


def _field(owner: object, key: str, kind: type, where: str) -> Any:
    value = owner.get(key) if isinstance(owner, Mapping) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise VectorsError(f"{where}/{key} must be {_JSON_NAMES[kind]}; got {quote(value)}")
    return value


def _expect_array(
    array: np.ndarray, tensor: Mapping[str, Any], relative: str, what: str
) -> np.ndarray:
    """`array` must have the tensor desc's data type and Sizes (a strided tensor: its whole
    buffer, one dimension)."""
    from dmlspec_generated.validators.common import DATA_TYPES

    data_type = str(tensor.get("DataType", "")).removeprefix("DML_TENSOR_DATA_TYPE_")
    numpy_name = DATA_TYPES[data_type].numpy if data_type in DATA_TYPES else None
    shape = tuple(tensor.get("Sizes", ()))
    if numpy_name is not None and is_strided(tensor):
        shape = (buffer_elements(tensor),)
    if numpy_name is None or array.dtype != np.dtype(numpy_name) or array.shape != shape:
        raise VectorsError(
            f"{relative}: {what} must be {data_type} ({numpy_name}) of shape {list(shape)} as "
            f"its desc says; the file holds {array.dtype}{list(array.shape)}"
        )
    return array


def run_vectors(
    folder: Path,
    backend: Any,
    progress: Callable[[VectorResult], None] | None = None,
    allow_any_path: bool = False,
) -> list[VectorResult]:
    """Run every case of an exported folder; raise VectorsError if the folder is malformed."""
    from ..validation import validate_operator

    files = _Folder(folder, allow_any_path)
    manifest = files.json("manifest.json")
    cases = _field(manifest, "cases", list, "manifest.json at ")
    results = []
    for i, entry in enumerate(cases):
        where = f"manifest.json at /cases/{i}"
        case_id = _field(entry, "id", str, where)
        if not case_id.isprintable():  # it is printed, in paths and messages, as it is
            raise VectorsError(f"{where}/id must be printable text; got {quote(case_id)}")
        files.path(case_id, "case id")
        level = _field(entry, "feature_level", str, where)
        outputs = _field(entry, "outputs", dict, where)
        model = files.json(f"{case_id}/model.json")
        operator = _field(
            _field(model, "dispatchables", dict, f"{case_id}/model.json at "),
            "operator",
            dict,
            f"{case_id}/model.json at /dispatchables",
        )
        try:
            verdict = validate_operator(operator, level)
        except ValueError as error:
            raise VectorsError(f"{where}/feature_level: {error}") from None
        if not verdict.valid:
            raise VectorsError(
                f"{case_id}/model.json: the operator is invalid at {level}: {verdict.violations[0]}"
            )
        commands = _field(model, "commands", list, f"{case_id}/model.json at ")
        bindings = _field(
            commands[0] if commands else None,
            "bindings",
            dict,
            f"{case_id}/model.json at /commands/0",
        )
        desc = operator["desc"]
        inputs: dict[str, Any] = {}
        for name in bindings:
            if isinstance(desc.get(name), list):  # a tensor array: <name>_<i>.npy per item
                if name in outputs or not isinstance(bindings[name], list):
                    continue
                inputs[name] = [
                    _expect_array(
                        files.array(f"{name}_{i}.npy", "input", case_id),
                        item.get("Desc", item) if isinstance(item, Mapping) else item,
                        f"{case_id}/{name}_{i}.npy",
                        f"{name}[{i}]",
                    )
                    for i, item in enumerate(desc[name])
                ]
                continue
            relative = f"{case_id}/{name}.npy"
            # A strided output's initial buffer travels as an input (the backend contract).
            initial = (
                name in outputs and isinstance(desc.get(name), Mapping) and is_strided(desc[name])
            )
            if (name not in outputs or initial) and files.path(
                f"{name}.npy", "input", case_id
            ).exists():
                tensor = desc.get(name)
                if not isinstance(tensor, Mapping):
                    raise VectorsError(f"{relative}: {quote(name)} is no tensor of the desc")
                stored = files.array(f"{name}.npy", "input", case_id)
                inputs[name] = _expect_array(stored, tensor.get("Desc", tensor), relative, name)
        expected = _expected(files, case_id, where, outputs, desc)
        result = _run_one(entry, expected, operator, inputs, backend)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def _item(label: str) -> tuple[str, int | None]:
    """'OutputTensors[1]' -> ('OutputTensors', 1); 'OutputTensor' -> ('OutputTensor', None)."""
    field, bracket, rest = label.partition("[")
    if bracket and rest.endswith("]") and rest[:-1].isdigit():
        return field, int(rest[:-1])
    return label, None


@dataclass(frozen=True)
class _Expected:
    rules: dict[str, Any]
    array: np.ndarray
    undefined: np.ndarray | None
    alternatives: tuple[np.ndarray, ...] = ()  # other correct results (subnormals flushed)
    statistics: _Statistics | None = None


@dataclass(frozen=True)
class _Statistics:
    """A dot-product output's error statistics (dmlspec.accuracy, TOSA's bias and variance):
    the FLOAT64 reference and bound of each element, KS, the accumulation type, and whether
    the bias is checked (signed data)."""

    reference: np.ndarray
    bound: np.ndarray
    terms: float
    accumulation: str
    bias: bool

    def problems(self, actual: np.ndarray, defined: np.ndarray) -> str:
        """What the statistics say is wrong with `actual` (empty when nothing is); each
        element's own bound is the tolerance file's, checked before."""
        result = check_dot_product(
            self.reference,
            self.bound,
            actual,
            self.terms,
            actual.dtype.name.upper(),
            self.accumulation,
            check_bias=self.bias,
            defined=defined,
        )
        return dataclasses.replace(result, elements_beyond=0, mismatches=()).describe()


def _statistics(
    files: _Folder, case_id: str, at: str, given: object, shape: tuple[int, ...]
) -> _Statistics:
    entry: dict[str, Any] = _field({"statistics": given}, "statistics", dict, at)
    arrays = []
    for key in ("reference", "bound"):
        array = files.array(_field(entry, key, str, f"{at}/statistics"), key, case_id)
        if array.dtype != np.float64 or array.shape != shape:
            raise VectorsError(
                f"{case_id}/{entry[key]}: the {key} must be float64{list(shape)}; "
                f"the file holds {array.dtype}{list(array.shape)}"
            )
        arrays.append(array)
    terms = entry.get("terms")
    if isinstance(terms, bool) or not isinstance(terms, int | float) or not terms > 0:
        raise VectorsError(f"{at}/statistics/terms must be a positive number; got {quote(terms)}")
    accumulation = _field(entry, "accumulation", str, f"{at}/statistics")
    _check_float_type(accumulation, f"{at}/statistics/accumulation")
    bias = entry.get("bias")
    if not isinstance(bias, bool):
        raise VectorsError(f"{at}/statistics/bias must be true or false; got {quote(bias)}")
    return _Statistics(arrays[0], arrays[1], float(terms), accumulation, bias)


def _expected(
    files: _Folder, case_id: str, where: str, outputs: dict[str, Any], desc: Mapping[str, Any]
) -> dict[str, _Expected]:
    """Each output's expected array, mask and rule, checked against its desc."""
    checked = {}
    for name, rules in outputs.items():
        at = f"{where}/outputs/{name}"
        field, index = _item(name)
        tensor = desc.get(field)
        if index is not None:  # an item of a tensor-array output, "OutputTensors[1]"
            tensor = tensor[index] if isinstance(tensor, list) and index < len(tensor) else None
        if not isinstance(tensor, Mapping):
            raise VectorsError(f"{at}: {quote(name)} is no tensor of the desc")
        tensor = tensor.get("Desc", tensor)
        if "view" in rules:
            _check_view(rules["view"], tensor, f"{at}/view", name)
        expected = _field(rules, "expected", str, at)
        relative = f"{case_id}/{expected}"
        array = _expect_array(files.array(expected, "expected", case_id), tensor, relative, name)
        rule = _field(rules, "rule", str, at)
        if rule not in ("exact", "ulp"):
            raise VectorsError(f"{at}/rule must be exact or ulp; got {quote(rule)}")
        if not isinstance(rules.get("any_nan", False), bool):
            raise VectorsError(f"{at}/any_nan must be true or false; got {quote(rules['any_nan'])}")
        if rule == "ulp":
            _field(rules, "max_ulps", int, at)
            if rules.get("ulps_of") is not None:
                _check_float_type(_field(rules, "ulps_of", str, at), f"{at}/ulps_of")
            if rules.get("ulp_scale") is not None:  # absent: the ULP of each expected element
                _field(rules, "ulp_scale", str, at)
            if rules.get("abs_tolerance") is not None and not isinstance(
                rules["abs_tolerance"], int | float
            ):
                raise VectorsError(
                    f"{at}/abs_tolerance must be a number; got {quote(rules['abs_tolerance'])}"
                )
        if rules.get("tolerance") is not None:  # an absolute bound per element (reductions)
            tolerance = files.array(_field(rules, "tolerance", str, at), "tolerance", case_id)
            view = rules.get("view")  # a strided output's bound covers its view
            shape = tuple(view["Sizes"]) if isinstance(view, Mapping) else array.shape
            if tolerance.shape != shape or tolerance.dtype.kind != "f":
                raise VectorsError(
                    f"{case_id}/{rules['tolerance']}: the tolerance must be float{list(shape)}; "
                    f"the file holds {tolerance.dtype}{list(tolerance.shape)}"
                )
            rules = {**rules, "abs_tolerance": tolerance + float(rules.get("abs_tolerance") or 0)}
        undefined = None
        if "undefined" in rules:
            name_of_mask = _field(_field(rules, "undefined", dict, at), "mask", str, at)
            mask = f"{case_id}/{name_of_mask}"
            undefined = files.array(name_of_mask, "mask", case_id)
            # A strided output's mask covers its view's logical elements, not the buffer.
            view = rules.get("view")
            mask_shape = (
                tuple(view["Sizes"])
                if isinstance(view, Mapping) and isinstance(view.get("Sizes"), list)
                else array.shape
            )
            if undefined.dtype != np.bool_ or undefined.shape != mask_shape:
                raise VectorsError(
                    f"{mask}: the mask must be bool{list(mask_shape)}; "
                    f"the file holds {undefined.dtype}{list(undefined.shape)}"
                )
        for cell, allowed in (
            _field(rules, "colliding_writes", dict, at).items()
            if ("colliding_writes" in rules)
            else ()
        ):
            if not (cell.isdigit() and int(cell) < array.size) or not (
                isinstance(allowed, list) and all(isinstance(a, str) for a in allowed)
            ):
                raise VectorsError(
                    f"{at}/colliding_writes/{quote(cell)} must map a cell below {array.size} "
                    "to a list of hexadecimal bit patterns"
                )
        listed = _field(rules, "alternatives", list, at) if "alternatives" in rules else []
        _check_alternatives(listed, f"{at}/alternatives")
        alternatives = tuple(
            _expect_array(
                files.array(_listed(other, f"{at}/alternatives"), "alternative", case_id),
                tensor,
                f"{case_id}/{other}",
                name,
            )
            for other in listed
        )
        statistics = None
        if "statistics" in rules:  # of the logical view, as the tolerance
            view = rules.get("view")
            shape = tuple(view["Sizes"]) if isinstance(view, Mapping) else array.shape
            statistics = _statistics(files, case_id, at, rules["statistics"], shape)
        checked[name] = _Expected(rules, array, undefined, alternatives, statistics)
    return checked


def _check_view(view: object, tensor: Mapping[str, Any], where: str, name: str) -> None:
    """A strided output's view is its tensor desc's Sizes and Strides (the desc is validated:
    a view of its own could reach outside the buffer); VectorsError for anything else."""
    strides = tensor.get("Strides")
    sound = (
        isinstance(view, Mapping)
        and strides is not None
        and set(view) <= {"Sizes", "Strides", "outside"}
        and view.get("outside", "unchanged") == "unchanged"
        and _same_numbers(view.get("Sizes"), tensor.get("Sizes"))
        and _same_numbers(view.get("Strides"), strides)
    )
    if not sound:
        wanted = (
            f"the Sizes {quote(tensor.get('Sizes'))} and Strides {quote(strides)} of "
            f"{quote(name)}'s tensor desc"
            if strides is not None
            else f"absent: {quote(name)}'s tensor desc has no Strides"
        )
        raise VectorsError(f"{where} must be {wanted}; got {quote(view)}")


def _same_numbers(given: object, wanted: object) -> bool:
    """Equal lists of integers (True is not 1 here)."""
    return (
        isinstance(given, list)
        and isinstance(wanted, list)
        and all(type(v) is int for v in given)
        and given == wanted
    )


def _check_alternatives(listed: list[Any], where: str) -> None:
    limit = int(MAX_ALTERNATIVES)
    if len(listed) > limit:
        raise VectorsError(
            f"{where} lists {len(listed)} files; at most {limit} "
            f"({MAX_ALTERNATIVES.variable} sets this limit)"
        )
    for other in listed:
        _listed(other, where)
    repeated = next((o for i, o in enumerate(listed) if o in listed[:i]), None)
    if repeated is not None:
        raise VectorsError(f"{where} lists {quote(repeated)} more than once")


def _listed(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise VectorsError(f"{where} must list file names; got {quote(value)}")
    return value


def _run_one(
    entry: dict[str, Any],
    expected_outputs: dict[str, _Expected],
    operator: dict[str, Any],
    inputs: dict[str, np.ndarray],
    backend: Any,
) -> VectorResult:
    try:
        outputs = backend.run(operator, inputs)
    except Unsupported as reason:
        return VectorResult(entry["id"], "skipped", cut(str(reason)))
    except InvalidOperator as error:
        return VectorResult(entry["id"], "failed", f"rejected a valid desc: {cut(str(error))}")
    except Exception as error:
        return VectorResult(entry["id"], "failed", f"{type(error).__name__}: {cut(str(error))}")
    if not isinstance(outputs, Mapping):
        return VectorResult(entry["id"], "failed", f"run() returned {type(outputs).__name__}")
    if not expected_outputs:
        return VectorResult(entry["id"], "failed", "nothing compared: the case lists no outputs")
    compared = 0
    for name, checked in expected_outputs.items():
        rules, expected = checked.rules, checked.array
        field, index = _item(name)
        if field not in outputs:
            return VectorResult(entry["id"], "failed", f"no output {field}")
        returned = outputs[field]
        if index is not None:
            if not isinstance(returned, list | tuple) or len(returned) <= index:
                return VectorResult(entry["id"], "failed", f"{field} is no list with {name}")
            returned = returned[index]
        actual = np.asarray(returned)
        if actual.dtype != expected.dtype or actual.shape != expected.shape:
            return VectorResult(
                entry["id"],
                "failed",
                f"{name} is {actual.dtype}{list(actual.shape)}; "
                f"expected {expected.dtype}{list(expected.shape)}",
            )
        alternatives = checked.alternatives
        if "view" in rules:
            view = rules["view"]
            changed = changed_outside_view(expected, actual, view)
            if changed.size:
                return VectorResult(
                    entry["id"],
                    "failed",
                    f"{name}: {changed.size} buffer elements outside the strided view changed "
                    f"(first at {int(changed[0])})",
                )
            expected, actual = logical_view(expected, view), logical_view(actual, view)
            alternatives = tuple(logical_view(a, view) for a in alternatives)
        defined = np.ones(expected.shape, dtype=bool)
        if checked.undefined is not None:
            defined &= ~checked.undefined
        flat_defined, flat_actual = defined.reshape(-1), actual.reshape(-1)
        compared += int(flat_defined.sum()) + len(rules.get("colliding_writes", {}))
        for cell, allowed in rules.get("colliding_writes", {}).items():
            flat_defined[int(cell)] = False
            if flat_actual[int(cell)].tobytes()[::-1].hex() not in allowed:
                return VectorResult(
                    entry["id"], "failed", f"{name} cell {cell} holds none of the colliding writes"
                )
        mismatches = mismatches_none_explains(
            functools.partial(_mismatches, rules, operator, actual),
            expected,
            alternatives,
            defined,
        )
        if mismatches:
            return VectorResult(entry["id"], "failed", f"{name} " + "; ".join(map(str, mismatches)))
        if checked.statistics is not None:
            problems = checked.statistics.problems(actual, flat_defined.reshape(defined.shape))
            if problems:
                return VectorResult(entry["id"], "failed", f"{name} {problems}")
    if not compared:
        return VectorResult(
            entry["id"], "failed", "nothing compared: every output cell is marked undefined"
        )
    return VectorResult(entry["id"], "passed")
