"""Portable vectors (export, run-vectors) and DxDispatch interop (dispatch)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import load_catalog
from dmlspec.conformance.cases import Case
from dmlspec.interop import export as export_module
from dmlspec.interop.export import export
from dmlspec.reference.layout import logical_view

from .conftest import REPO_ROOT
from .element_wise_backends import ReturnsOutput, from_bits
from .sweeps import sweep

CATALOG = load_catalog()


def cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


VECTOR_OPS = (
    "SCATTER_ND",
    "GATHER_ND",
    "SCATTER_ELEMENTS",
    "FILL_VALUE_SEQUENCE",
    "ELEMENT_WISE_IF",
    "ELEMENT_WISE_BIT_AND",
)


@pytest.fixture(scope="module")
def vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vectors")
    # The seed operators and two of the element-wise family (a selection and a bit operator):
    # every family operator's cases go through the same export code. An arithmetic operator's
    # vectors (their subnormal alternatives) are checked by their own test below.
    result = cli("export", "--out", str(out), "--ops", *VECTOR_OPS)
    assert result.returncode == 0, result.stderr
    return out


def test_manifest_lists_every_case_with_its_rule_and_files(vectors: Path) -> None:
    manifest = json.loads((vectors / "manifest.json").read_text())
    ids = [case["id"] for case in manifest["cases"]]
    assert len(ids) == len(set(ids)) > 400
    assert "scatter_elements-example-example_1_1d_scatter" in ids
    assert "fill_value_sequence-cell-5_0-OutputTensor-data_type-UINT64" in ids
    overlap = next(
        c for c in manifest["cases"] if c["id"] == "scatter_elements-example-example_1_1d_scatter"
    )
    assert overlap["outputs"]["OutputTensor"]["colliding_writes"] == {
        "3": ["40a00000", "40e00000"]
    }  # 5.0, 7.0
    fill = next(
        c
        for c in manifest["cases"]
        if c["id"].startswith("fill_value_sequence-cell-2_1-OutputTensor-data_type-FLOAT32")
    )
    assert fill["outputs"]["OutputTensor"]["rule"] == "ulp"
    for case in manifest["cases"]:
        assert all(ch.isalnum() or ch in "_.-" for ch in case["id"])
        for name in case["files"]:
            assert (vectors / case["id"] / name).is_file()
        assert sum((vectors / case["id"] / n).stat().st_size for n in case["files"]) <= 1 << 20


@pytest.mark.slow  # two whole exports
def test_export_is_byte_identical_across_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert (
            cli("export", "--out", str(out), "--ops", "SCATTER", "FILL_VALUE_SEQUENCE").returncode
            == 0
        )
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for relative in files:
        assert (first / relative).read_bytes() == (second / relative).read_bytes(), relative


@pytest.mark.slow  # two whole exports
def test_large_cases_are_left_out_unless_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_module, "MAX_CASE_BYTES", 400)
    manifest = export(CATALOG, tmp_path / "small", ["GATHER_ND"], "6_4", "ci", ("dxdispatch",))
    assert manifest["left_out"] and all("use --large" in e["reason"] for e in manifest["left_out"])
    everything = export(
        CATALOG, tmp_path / "all", ["GATHER_ND"], "6_4", "ci", ("dxdispatch",), large=True
    )
    assert not everything["left_out"]
    assert len(everything["cases"]) == len(manifest["cases"]) + len(manifest["left_out"])


def test_dxdispatch_models_match_the_dxdispatch_schema(vectors: Path, shared_dir: Path) -> None:
    import jsonschema

    schema = json.loads((shared_dir / "reference" / "dxdispatch" / "_schema.json").read_text())
    # DxDispatch's schema declares draft 2020-12 but writes arrayInitializer's items as
    # ["number", "string"], which is no schema in that draft (jsonschema cannot apply it). It
    # means "each item a number or a string"; that, and nothing else, is corrected here.
    array_initializer = schema["$defs"]["arrayInitializer"]
    assert array_initializer["items"] == ["number", "string"]
    array_initializer["items"] = {"type": ["number", "string"]}
    validator = jsonschema.validators.validator_for(schema)(schema)
    models = sorted(vectors.glob("*/model.json"))
    assert len(models) > 400
    for model in models:
        errors = list(validator.iter_errors(json.loads(model.read_text())))
        assert not errors, (model, [e.message for e in errors[:3]])


def test_exported_onnx_cases_pass_on_onnxruntime(vectors: Path) -> None:
    """Every case ONNX can express passes on onnxruntime: no divergence to document."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import numpy_helper

    manifest = json.loads((vectors / "manifest.json").read_text())
    ran = 0
    for case in manifest["cases"]:
        folder = vectors / case["id"] / "onnx"
        if not folder.is_dir():
            continue
        model = onnx.load(str(folder / "model.onnx"))
        feeds = {}
        for i, graph_input in enumerate(model.graph.input):
            tensor = onnx.TensorProto()
            tensor.ParseFromString((folder / "test_data_set_0" / f"input_{i}.pb").read_bytes())
            feeds[graph_input.name] = numpy_helper.to_array(tensor)
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (actual,) = session.run(None, feeds)
        rules = case["outputs"]["OutputTensor"]
        expected = np.load(vectors / case["id"] / rules["expected"])
        if "view" in rules:  # a strided case: its ONNX form is packed, the logical view
            assert "packed" in case["onnx"]
            expected = np.ascontiguousarray(logical_view(expected, rules["view"]))
        defined = np.ones(expected.shape, dtype=bool)
        if "undefined" in rules:
            defined &= ~np.load(vectors / case["id"] / rules["undefined"]["mask"])
        for cell in rules.get("colliding_writes", {}):
            defined.reshape(-1)[int(cell)] = False
        if rules["rule"] == "ulp":
            # Range accumulates in float64 before one rounding Cast: far inside the tolerance.
            close = np.isclose(
                actual.astype(np.float64), expected.astype(np.float64), rtol=1e-3, equal_nan=True
            )
            assert (close | ~defined).all(), case["id"]
        else:
            assert (
                actual.view(np.uint8).reshape(-1).tobytes()
                == expected.view(np.uint8).reshape(-1).tobytes()
            ) or (
                (actual == expected)
                | ~defined
                | (np.isnan(actual) & np.isnan(expected) if actual.dtype.kind == "f" else False)
            ).all(), case["id"]
        ran += 1
    assert ran > 400


@pytest.mark.parametrize("backend", sweep([["numpy"], ["jax"]], ["numpy", "jax"]))
def test_export_then_run_vectors_round_trips(vectors: Path, backend: str) -> None:
    result = cli("run-vectors", str(vectors), "--backend", backend)
    assert result.returncode == 0, result.stdout[-2000:]
    assert result.stdout.strip().splitlines()[-1].startswith(f"{backend}: ")
    assert " 0 failed" in result.stdout


def test_strided_cases_are_exported_as_buffers_with_their_view(vectors: Path) -> None:
    manifest = json.loads((vectors / "manifest.json").read_text())
    strided = [c for c in manifest["cases"] if "-layout-" in c["id"]]
    assert {c["id"].rsplit("-", 1)[-1] for c in strided} == {
        "padded",
        "permuted",
        "broadcast",
        "oversized",
    }
    for case in strided:
        model = json.loads((vectors / case["id"] / "model.json").read_text())
        desc = model["dispatchables"]["operator"]["desc"]
        for name, tensor in desc.items():
            if not isinstance(tensor, dict) or "Strides" not in tensor:
                continue
            itemsize = np.dtype(CATALOG.common.data_type(tensor["DataType"]).numpy).itemsize
            last = sum((n - 1) * t for n, t in zip(tensor["Sizes"], tensor["Strides"], strict=True))
            needed = tensor.get("TotalTensorSizeInBytes", -(-(last + 1) * itemsize // 4) * 4)
            values = model["resources"][name]["initialValues"]  # the whole buffer, initialised
            assert len(values) == needed // itemsize, (case["id"], name)
            assert np.load(vectors / case["id"] / f"{name}.npy").size == needed // itemsize
        if "view" in case["outputs"]["OutputTensor"]:
            assert case["outputs"]["OutputTensor"]["view"]["outside"] == "unchanged"
        assert "onnx" not in case or "strides" in case["onnx"]


def test_run_vectors_fails_a_backend_writing_a_strided_outputs_gaps(
    vectors: Path, tmp_path: Path
) -> None:
    manifest = json.loads((vectors / "manifest.json").read_text())
    manifest["cases"] = [c for c in manifest["cases"] if "-layout-" in c["id"]]  # just these
    for case in manifest["cases"]:  # copies: run-vectors refuses links out of its folder
        shutil.copytree(vectors / case["id"], tmp_path / case["id"])
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    result = cli(
        "run-vectors", str(tmp_path), "--backend", "tests.broken_backends:WritesOutputGaps"
    )
    assert result.returncode == 1
    assert "outside the strided view changed" in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert all("-layout-" in line for line in failed), failed


def test_run_vectors_fails_a_broken_backend(vectors: Path) -> None:
    result = cli("run-vectors", str(vectors), "--backend", "tests.broken_backends:Float16AsFloat32")
    assert result.returncode == 1
    assert "FAILED" in result.stdout and "float32" in result.stdout


def test_dispatch_prints_what_dxdispatch_prints(shared_dir: Path) -> None:
    model = shared_dir / "reference" / "dxdispatch" / "dml_fill_value_sequence.json"
    result = cli("dispatch", str(model))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2\n"


def test_dispatch_runs_an_exported_model(vectors: Path) -> None:
    result = cli(
        "dispatch",
        str(vectors / "scatter_elements-example-example_2_2d_scatter" / "model.json"),
        "--backend",
        "numpy",
    )
    assert result.stdout == "Resource 'OutputTensor': 20, 11, 0, 10, 0, 22, 0, 21, 12\n"


def _model(tmp_path: Path, model: object, name: str = "model.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(model) if not isinstance(model, str) else model)
    return path


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("{", "/: invalid JSON at line 1 column 2"),
        ({"resources": []}, "/resources: must be an object"),
        (
            {
                "resources": {
                    "a": {
                        "initialValuesDataType": "FLOAT32",
                        "initialValues": {"sourcePath": "../x.npy"},
                    }
                }
            },
            "/resources/a/initialValues/sourcePath: sourcePath '../x.npy' leaves the model's "
            "folder (use --allow-any-path to allow it)",
        ),
        (
            {
                "resources": {
                    "a": {
                        "initialValuesDataType": "FLOAT32",
                        "initialValues": {"sourcePath": "/etc/hostname"},
                    }
                }
            },
            "/resources/a/initialValues/sourcePath: sourcePath '/etc/hostname' leaves the "
            "model's folder",
        ),
        (
            {"resources": {"a": {"initialValuesDataType": "FLOAT128", "initialValues": [1]}}},
            "/resources/a/initialValuesDataType: initialValuesDataType must be one of",
        ),
        (
            {"resources": {"a": {"initialValuesDataType": "FLOAT32", "initialValues": [1, "x"]}}},
            "/resources/a/initialValues/1: expected a number; got 'x'",
        ),
        (
            {"dispatchables": {"g": {"type": "DML_OPERATOR_GEMMM", "desc": {}}}},
            "/dispatchables/g/type: dmlspec cannot run 'DML_OPERATOR_GEMMM': it runs",
        ),
        (
            {"commands": [{"type": "dispatch", "dispatchable": "missing", "bindings": {}}]},
            "/commands/0/dispatchable: no dispatchable 'missing'",
        ),
        (
            {"commands": [{"type": "copy"}]},
            "/commands/0/type: dmlspec runs dispatch and print commands; got 'copy'",
        ),
    ],
)
def test_dispatch_rejects_malformed_models_with_a_pointer(
    tmp_path: Path, model: object, message: str
) -> None:
    result = cli("dispatch", str(_model(tmp_path, model)))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


def _copy_model(bindings: dict[str, str], commands: list[dict[str, object]]) -> dict[str, object]:
    """IDENTITY dispatchables "copy_b" (bound to nothing at initialization) and "init" (its
    InputTensor bound to resource "a" at initialization) over 3 FLOAT32 values."""
    tensor = {"DataType": "FLOAT32", "Sizes": [3]}
    identity = {"InputTensor": tensor, "OutputTensor": tensor}
    ones = {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 1}}
    twos = {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 2}}
    return {
        "resources": {"a": ones, "b": twos, "out": twos},
        "dispatchables": {
            "copy_b": {"type": "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "desc": identity},
            "init": {
                "type": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                "desc": identity,
                "bindings": bindings,
            },
        },
        "commands": commands,
    }


def test_dispatch_reads_initialization_bindings_once_before_any_command(tmp_path: Path) -> None:
    # DxDispatch initializes dispatchables after the resources and before the commands: "init"
    # keeps a's first contents (ones) though a copy of b (twos) overwrites a before it runs.
    model = _copy_model(
        {"InputTensor": "a"},
        [
            {
                "type": "dispatch",
                "dispatchable": "copy_b",
                "bindings": {"InputTensor": "b", "OutputTensor": "a"},
            },
            {"type": "dispatch", "dispatchable": "init", "bindings": {"OutputTensor": "out"}},
            {"type": "print", "resource": "a"},
            {"type": "print", "resource": "out"},
        ],
    )
    result = cli("dispatch", str(_model(tmp_path, model)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Resource 'a': 2, 2, 2\nResource 'out': 1, 1, 1\n"


@pytest.mark.parametrize(
    ("bindings", "command_bindings", "message"),
    [
        (
            {"OutputTensor": "out"},
            {"InputTensor": "a"},
            "/dispatchables/init/bindings/OutputTensor: only inputs are bound at initialization",
        ),
        (
            {"InputTensor": "a"},
            {"InputTensor": "b", "OutputTensor": "out"},
            "/commands/0/bindings/InputTensor: InputTensor is bound at the dispatchable's "
            "initialization already",
        ),
    ],
)
def test_dispatch_rejects_misplaced_initialization_bindings(
    tmp_path: Path, bindings: dict[str, str], command_bindings: dict[str, str], message: str
) -> None:
    model = _copy_model(
        bindings, [{"type": "dispatch", "dispatchable": "init", "bindings": command_bindings}]
    )
    result = cli("dispatch", str(_model(tmp_path, model)))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


def test_dispatch_reads_files_beside_the_model(tmp_path: Path) -> None:
    np.save(tmp_path / "start.npy", np.array([1.5], np.float32))
    (tmp_path / "raw.bin").write_bytes(np.array([4, 5, 6], np.uint32).tobytes())
    model = {
        "resources": {
            "npy": {
                "initialValuesDataType": "FLOAT32",
                "initialValues": {"sourcePath": "start.npy"},
            },
            "raw": {"initialValuesDataType": "UINT32", "initialValues": {"sourcePath": "raw.bin"}},
            "seq": {
                "initialValuesDataType": "INT32",
                "initialValues": {"valueCount": 3, "valueStart": -1, "valueDelta": 2},
            },
        },
        "commands": [{"type": "print", "resource": name} for name in ("npy", "raw", "seq")],
    }
    result = cli("dispatch", str(_model(tmp_path, model)))
    assert result.stdout.splitlines() == [
        "Resource 'npy': 1.5",
        "Resource 'raw': 4, 5, 6",
        "Resource 'seq': -1, 1, 3",
    ]


def test_allow_any_path_lets_a_model_read_outside_its_folder(tmp_path: Path) -> None:
    np.save(tmp_path / "outside.npy", np.array([7, 8], np.int32))
    model = {
        "resources": {
            "a": {
                "initialValuesDataType": "INT32",
                "initialValues": {"sourcePath": "../outside.npy"},
            }
        },
        "commands": [{"type": "print", "resource": "a"}],
    }
    folder = tmp_path / "models"
    folder.mkdir()
    path = _model(folder, model)
    assert cli("dispatch", str(path)).returncode == 2
    allowed = cli("dispatch", str(path), "--allow-any-path")
    assert allowed.stdout == "Resource 'a': 7, 8\n"


def test_run_vectors_accepts_flushed_subnormals_only_where_they_explain_a_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FLOAT32 may flush subnormals: an arithmetic case's output lists its flushed result as an
    alternative, and a cell may match either; a later wrong cell still fails, however many
    flushed cells come before it."""
    from dmlspec.interop.run_vectors import VectorsError, run_vectors

    from .element_wise_backends import six_subnormals_and_a_one

    spec = CATALOG.operator("ELEMENT_WISE_ADD")
    case = six_subnormals_and_a_one()
    a = case.inputs["ATensor"]
    monkeypatch.setattr(
        export_module,
        "iter_cases",
        lambda *_: iter([export_module.ExportedCase("add-flushed", spec, case)]),
    )
    manifest = export(CATALOG, tmp_path, ["ELEMENT_WISE_ADD"], "6_4", "ci", ("dxdispatch",))
    rules = manifest["cases"][0]["outputs"]["OutputTensor"]
    assert rules["alternatives"] == ["flushed_OutputTensor_0.npy"]
    flushed = np.where(a < 1, np.float32(0), a)
    assert np.load(tmp_path / "add-flushed" / "flushed_OutputTensor_0.npy").tolist() == (
        flushed.tolist()
    )

    assert [r.outcome for r in run_vectors(tmp_path, ReturnsOutput(a))] == ["passed"]
    assert [r.outcome for r in run_vectors(tmp_path, ReturnsOutput(flushed))] == ["passed"]
    wrong = flushed.copy()
    wrong[0, 0, 0, 6] = 2.0
    (result,) = run_vectors(tmp_path, ReturnsOutput(wrong))
    assert result.outcome == "failed" and "at [0, 0, 0, 6]: expected np.float32(1.0)" in (
        result.message
    )

    manifest["cases"][0]["outputs"]["OutputTensor"]["alternatives"] = [3]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VectorsError, match="alternatives must list file names; got 3"):
        run_vectors(tmp_path, ReturnsOutput(a))
    manifest["cases"][0]["outputs"]["OutputTensor"]["alternatives"] = ["ATensor.npy"]
    np.save(tmp_path / "add-flushed" / "ATensor.npy", a.astype(np.float64))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VectorsError, match=r"must be FLOAT32 .* the file holds float64"):
        run_vectors(tmp_path, ReturnsOutput(a))


@pytest.mark.slow  # an export and a run of an arithmetic operator
def test_arithmetic_vectors_pass_on_a_backend_that_flushes_subnormals(tmp_path: Path) -> None:
    """XLA on CPU flushes FLOAT32 subnormals: ELEMENT_WISE_MULTIPLY's exported vectors (edge
    values include subnormals) pass on jax through their alternatives."""
    result = cli("export", "--out", str(tmp_path), "--ops", "ELEMENT_WISE_MULTIPLY")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert any("alternatives" in c["outputs"]["OutputTensor"] for c in manifest["cases"])
    result = cli("run-vectors", str(tmp_path), "--backend", "jax")
    assert result.returncode == 0, result.stdout[-2000:]
    assert " 0 failed" in result.stdout


def _exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case) -> dict[str, Any]:
    """Exports one hand-made case (its operator's spec from the catalog)."""
    kind = str(case.operator["type"]).removeprefix("DML_OPERATOR_")
    spec = CATALOG.operator(kind)
    monkeypatch.setattr(
        export_module,
        "iter_cases",
        lambda *_: iter([export_module.ExportedCase("one", spec, case)]),
    )
    manifest: dict[str, Any] = export(CATALOG, tmp_path, [kind], "6_4", "ci", ("dxdispatch",))
    return manifest


def test_vectors_carry_the_nan_and_computing_type_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NEGATE's NaN may come back as any NaN (any_nan in the manifest, read by run-vectors); a
    POW of an integer to a floating exponent is judged in FLOAT32 ULPs (ulps_of)."""
    from dmlspec.interop.run_vectors import VectorsError, run_vectors

    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 2]}
    desc = {"InputTensor": tensor, "OutputTensor": tensor}
    negate = {"type": "DML_OPERATOR_ELEMENT_WISE_NEGATE", "desc": desc}
    nan = from_bits([0x7FC00000, 0x3F800000], np.float32).reshape(1, 1, 1, 2)
    manifest = _exported(tmp_path, monkeypatch, Case(negate, {"InputTensor": nan}, "6_4", 0))
    assert manifest["cases"][0]["outputs"]["OutputTensor"]["any_nan"] is True
    other = from_bits([0x7FFFFFFF, 0xBF800000], np.float32).reshape(1, 1, 1, 2)
    assert [r.outcome for r in run_vectors(tmp_path, ReturnsOutput(other))] == ["passed"]
    number = np.float32([[[[0.0, -1.0]]]])
    assert [r.outcome for r in run_vectors(tmp_path, ReturnsOutput(number))] == ["failed"]
    manifest["cases"][0]["outputs"]["OutputTensor"]["any_nan"] = "yes"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VectorsError, match="any_nan must be true or false; got 'yes'"):
        run_vectors(tmp_path, ReturnsOutput(other))

    sizes = [1, 1, 1, 1]
    pow_desc = {
        "InputTensor": {"DataType": "UINT32", "Sizes": sizes},
        "ExponentTensor": {"DataType": "FLOAT32", "Sizes": sizes},
        "OutputTensor": {"DataType": "UINT32", "Sizes": sizes},
    }
    inputs = {
        "InputTensor": np.full(sizes, 2**31, np.uint32),
        "ExponentTensor": np.ones(sizes, np.float32),
    }
    pow_case = Case({"type": "DML_OPERATOR_ELEMENT_WISE_POW", "desc": pow_desc}, inputs, "6_4", 0)
    folder = tmp_path / "pow"
    manifest = _exported(folder, monkeypatch, pow_case)
    rules = manifest["cases"][0]["outputs"]["OutputTensor"]
    assert (rules["rule"], rules["ulps_of"], rules["max_ulps"]) == ("ulp", "FLOAT32", 16)
    truncated = np.full(sizes, 2**31 - 1, np.uint32)  # what XLA on an H100 computed
    assert [r.outcome for r in run_vectors(folder, ReturnsOutput(truncated))] == ["passed"]
    far = np.full(sizes, 2**31 - 16 * 256 - 2, np.uint32)
    assert [r.outcome for r in run_vectors(folder, ReturnsOutput(far))] == ["failed"]
    manifest["cases"][0]["outputs"]["OutputTensor"]["ulps_of"] = "INT8"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VectorsError, match="ulps_of must be one of FLOAT16, FLOAT32, FLOAT64"):
        run_vectors(folder, ReturnsOutput(truncated))


class _OffsetByTolerance:
    """A GEMM backend whose every output element sits at 90% of its exported tolerance above the
    expected value: inside each element's bound, systematically off (found by its inputs)."""

    name = "offset-by-tolerance"
    feature_level = "6_4"

    def __init__(self, folder: Path) -> None:
        self.cases = {}
        for case in json.loads((folder / "manifest.json").read_text())["cases"]:
            here = folder / case["id"]
            rules = case["outputs"]["OutputTensor"]
            expected = np.load(here / rules["expected"])
            tolerance = np.load(here / rules["tolerance"])
            if "view" in rules:  # a strided output's buffer: returned as expected
                tolerance = np.zeros(expected.shape)
            with np.errstate(all="ignore"):
                wanted = expected + 0.9 * np.where(np.isfinite(tolerance), tolerance, 0)
                shifted = wanted.astype(expected.dtype)  # rounded down, not to nearest:
                shifted = np.where(shifted > wanted, np.nextafter(shifted, -np.inf), shifted)
            self.cases[np.load(here / "ATensor.npy").tobytes()] = shifted

    def run(self, operator: dict[str, Any], inputs: dict[str, np.ndarray]) -> dict[str, Any]:
        return {"OutputTensor": self.cases[inputs["ATensor"].tobytes()]}


def test_dot_product_vectors_carry_the_error_statistics_that_catch_a_biased_backend(
    tmp_path: Path,
) -> None:
    """An exported GEMM case carries its FLOAT64 reference, bound, KS and accumulation type
    (where no FusedActivation follows the sum), so run-vectors judges the error's bias and
    variance as `dmlspec conformance` does: a backend inside every element's tolerance but
    systematically off fails by them."""
    from dmlspec.backends import NumpyBackend
    from dmlspec.interop.run_vectors import run_vectors

    manifest = export(CATALOG, tmp_path, ["GEMM"], "1_0", "ci", ("dxdispatch",))
    judged = {}
    for case in manifest["cases"]:
        fused = (
            "FusedActivation"
            in json.loads((tmp_path / case["id"] / "model.json").read_text())["dispatchables"][
                "operator"
            ]["desc"]
        )
        statistics = case["outputs"]["OutputTensor"].get("statistics")
        assert (statistics is None) == fused, case["id"]
        if statistics:
            assert statistics["accumulation"] == "FLOAT32" and statistics["terms"] >= 2
            bound = np.load(tmp_path / case["id"] / statistics["bound"])
            assert bound.dtype == np.float64 and not (bound < 0).any()
            judged[case["id"]] = (
                bool(bound.any())
                and "view" not in case["outputs"]["OutputTensor"]
                # FLOAT16's tolerance is mostly its own rounding: 90% of it rounds back
                and case["data_types"]["OutputTensor"] == "FLOAT32"
            )
    assert sum(judged.values()) >= 3
    assert all(r.outcome == "passed" for r in run_vectors(tmp_path, NumpyBackend())), "correct"
    results = {r.id: r for r in run_vectors(tmp_path, _OffsetByTolerance(tmp_path))}
    for case_id, bounded in judged.items():
        if bounded:
            assert results[case_id].outcome == "failed", case_id
            assert "error variance" in results[case_id].message, results[case_id].message
    assert all(r.outcome == "passed" for i, r in results.items() if i not in judged)
