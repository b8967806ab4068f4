"""The specs: they load and round-trip; the four curated seed specs keep their bars (examples
valid, errata backed)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dmlspec import SpecError, load_catalog
from dmlspec.binding import SpecMemo, bind_desc, evaluate_constraints, per_spec
from dmlspec.model import (
    Catalog,
    ExampleFields,
    ExampleTensor,
    OperatorSpec,
    example_field_value,
)

from .conftest import REPO_ROOT, SPEC_DIR

OPERATORS = ["FILL_VALUE_SEQUENCE", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER_ND"]


def fields_json(spec: OperatorSpec, fields: ExampleFields) -> dict[str, Any]:
    return {
        k: v.to_json()
        if isinstance(v, ExampleTensor)
        else [t.to_json() for t in v]
        if isinstance(v, tuple)
        else example_field_value(spec.field(k), v)
        for k, v in fields
    }


def failing(catalog: Catalog, spec: OperatorSpec, fields: ExampleFields) -> set[str]:
    env = bind_desc(catalog.common, spec, fields_json(spec, fields))
    outcomes = evaluate_constraints(spec.constraints, env)
    assert not [o for o in outcomes.values() if o.status == "error"], outcomes
    return {cid for cid, o in outcomes.items() if o.status == "fail"}


def supported_levels(catalog: Catalog, spec: OperatorSpec, fields: ExampleFields) -> list[str]:
    """Documented levels whose support row accepts every tensor's data type and rank."""
    levels = []
    for row in spec.support:
        tensors = {name: v for name, v in fields if isinstance(v, ExampleTensor)}
        if all(
            t.data_type is not None
            and t.data_type.removeprefix("DML_TENSOR_DATA_TYPE_") in row.tensor(name).data_types
            and len(t.sizes) in row.tensor(name).dimension_counts
            for name, t in tensors.items()
        ):
            levels.append(row.feature_level)
    return levels


def test_the_four_seed_operators_load_curated(catalog: Catalog) -> None:
    assert [s.name for s in catalog.operators if s.name in OPERATORS] == OPERATORS
    assert all(catalog.operator(name).status == "curated" for name in OPERATORS)
    # The seed operators run through the families' primitives, as every other kernel does.
    seeds = {name: catalog.operator(name).checked_kernel.primitive for name in OPERATORS}
    assert seeds == {
        "FILL_VALUE_SEQUENCE": "generator",
        "GATHER_ND": "data_movement",
        "SCATTER_ELEMENTS": "scatter",
        "SCATTER_ND": "scatter",
    }
    assert catalog.operator("SCATTER") is catalog.operator("DML_OPERATOR_SCATTER_ELEMENTS")
    assert catalog.operator("DML_OPERATOR_SCATTER_ND").name == "SCATTER_ND"
    with pytest.raises(KeyError, match="unknown operator 'GEMMM'; known operators: "):
        catalog.operator("GEMMM")


def test_common_facts(catalog: Catalog) -> None:
    common = catalog.common
    assert [level.name for level in common.feature_levels][:4] == ["1_0", "2_0", "2_1", "3_0"]
    assert common.highest_feature_level.name == "6_4"
    bits = {d.name: d.bits for d in common.data_types}
    assert bits["FLOAT64"] == bits["INT64"] == bits["UINT64"] == 64
    assert bits["UINT4"] == bits["INT4"] == 4
    assert common.data_type("DML_TENSOR_DATA_TYPE_FLOAT16").numpy == "float16"
    assert (common.dimension_count_at("2_1").max, common.dimension_count_at("3_0").max) == (5, 8)


@pytest.mark.parametrize(
    "path", sorted((SPEC_DIR / "operators").glob("*.json")), ids=lambda p: p.stem
)
def test_model_writes_back_the_spec_file(catalog: Catalog, path: Path) -> None:
    spec = catalog.operator(path.stem.upper())
    assert spec.to_json() == json.loads(path.read_text(encoding="utf-8"))


def test_common_model_writes_back_the_common_file(catalog: Catalog) -> None:
    assert catalog.common.to_json() == json.loads((SPEC_DIR / "common.json").read_text())


def test_model_to_json_to_model_is_identity(catalog: Catalog, tmp_path: Path) -> None:
    copy = tmp_path / "spec"
    shutil.copytree(SPEC_DIR / "schema", copy / "schema")
    (copy / "operators").mkdir()
    (copy / "common.json").write_text(json.dumps(catalog.common.to_json()))
    for spec in catalog.operators:
        (copy / "operators" / f"{spec.name.lower()}.json").write_text(json.dumps(spec.to_json()))
    assert load_catalog(copy) == catalog


@pytest.mark.parametrize("operator", OPERATORS)
def test_every_runnable_example_is_valid_at_a_documented_level(
    catalog: Catalog, operator: str
) -> None:
    spec = catalog.operator(operator)
    for example in spec.examples:
        form = example.valid_form
        assert failing(catalog, spec, form) - {"SCATTER_ELEMENTS.R2"} == set(), example.id
        assert supported_levels(catalog, spec, form), f"{example.id} fits no support row"


def test_scatter_example_with_overlapping_writes_is_flagged_by_its_requires(
    catalog: Catalog,
) -> None:
    spec = catalog.operator("SCATTER")
    example = next(e for e in spec.examples if e.id == "example_1_1d_scatter")
    assert failing(catalog, spec, example.as_written) == {"SCATTER_ELEMENTS.R2"}
    assert any("output[3] may be 5 or 7" in note for note in example.notes)


def test_each_erratum_is_backed_by_what_it_expects(catalog: Catalog) -> None:
    checked = 0
    for spec in catalog.operators:
        if spec.status == "drafted":
            continue  # drafted examples carry no errata yet (curation adds them)
        for example in spec.examples:
            fired = failing(catalog, spec, example.as_written)
            tensors = {n: v for n, v in example.as_written if isinstance(v, ExampleTensor)}
            for erratum in example.errata:
                for finding in erratum.expect:
                    kind, _, name = finding.partition(":")
                    if finding in {c.id for c in spec.constraints}:
                        assert finding in fired, (example.id, finding)
                    elif kind == "support":
                        data_type = tensors[name].data_type or ""
                        assert all(
                            data_type not in row.tensor(name).data_types for row in spec.support
                        ), (example.id, finding)
                    checked += 1
    assert checked >= 6


def test_signed_indices_appear_only_where_negative_indices_are_allowed(catalog: Catalog) -> None:
    common = catalog.common
    for spec in catalog.with_kernels:
        assert spec.semantics is not None
        negative = spec.checked_semantics.negative_indices
        if negative is None:
            continue
        since = common.feature_level(negative.since).rank
        for row in spec.support:
            kinds = {common.data_type(t).kind for t in row.tensor(negative.tensor).data_types}
            if common.feature_level(row.feature_level).rank < since:
                assert "signed" not in kinds, (spec.name, row.feature_level)


def run_cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args], capture_output=True, text=True, cwd=cwd
    )


def test_cli_lists_operators_with_levels_and_constraint_counts() -> None:
    result = run_cli()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == [
        "operator",
        "aliases",
        "status",
        "introduced",
        "support",
        "levels",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line and line[0].isupper()}
    # name, aliases, status, introduced, levels..., errors, requires, encoded, left, examples,
    # validator, kernel, reference, suite
    assert rows["FILL_VALUE_SEQUENCE"][:7] == [
        "FILL_VALUE_SEQUENCE",
        "-",
        "curated",
        "2_1",
        "2_1,",
        "4_0,",
        "5_0",
    ]
    assert rows["FILL_VALUE_SEQUENCE"][7:9] == ["1", "0"]
    assert rows["FILL_VALUE_SEQUENCE"][-4:] == ["yes", "yes", "yes", "yes"]
    assert rows["SCATTER_ELEMENTS"][:8] == [
        "SCATTER_ELEMENTS",
        "SCATTER",
        "curated",
        "1_0",
        "1_0,",
        "2_1,",
        "3_0,",
        "4_1",
    ]
    assert rows["SCATTER_ELEMENTS"][8:10] == ["6", "2"]
    assert rows["GEMM"][-4:] == ["yes", "yes", "yes", "yes"]
    assert rows["CONVOLUTION"][-4:] == ["yes", "yes", "yes", "yes"]
    assert rows["ROI_ALIGN_GRAD"][-4:] == ["yes", "yes", "yes", "yes"]  # the last one, issue 35
    # Every spec is curated now (issue 36 curated the last drafts); `draft` still writes drafts.
    statuses = {row[2] for name, row in rows.items() if "_" in name or name.isalpha()}
    assert "curated" in statuses and "drafted" not in statuses


def test_cli_reports_broken_specs_without_a_traceback(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir)
    (spec_dir / "operators" / "gather_nd.json").write_text("{")
    result = run_cli("--spec-dir", str(spec_dir), "list")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "spec/operators/gather_nd.json: invalid JSON at line 1 column 2" in result.stderr


def test_comparison_rules_chosen_by_the_desc(catalog: Catalog) -> None:
    """REDUCE's float rules differ per Function (`when`): the desc's environment picks one,
    and without it a rule with `when` refuses to guess; integer rules apply to every desc."""
    spec = catalog.operator("REDUCE")
    semantics = spec.checked_semantics

    def desc(function: str) -> dict[str, Any]:
        return {
            "Function": f"DML_REDUCE_FUNCTION_{function}",
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 6]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 1]},
            "AxisCount": 1,
            "Axes": [1],
        }

    for function, magnitude in (("SUM", "absolute_inputs"), ("LOG_SUM", "log_of_sum")):
        env = bind_desc(catalog.common, spec, desc(function))
        rule = semantics.comparison_for("OutputTensor", "float", "FLOAT32", env)
        assert rule.magnitude == magnitude
        assert rule.terms is not None and rule.terms.evaluate(env) == 6
    env = bind_desc(catalog.common, spec, desc("MAX"))
    assert semantics.comparison_for("OutputTensor", "float", "FLOAT32", env).max_ulps == 0
    with pytest.raises(ValueError, match="needs the desc's environment"):
        semantics.comparison_for("OutputTensor", "float", "FLOAT32")
    assert semantics.comparison_for("OutputTensor", "unsigned", "UINT32").rule == "exact"


def test_a_folder_is_loaded_again_only_when_its_bytes_change(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, folder)
    first = load_catalog(folder)
    assert load_catalog(folder) is first  # the same files: the same (immutable) catalog
    path = folder / "operators" / "scatter_nd.json"
    text = path.read_text()
    # An edit of the same length, at once: the folder's bytes decide, not sizes or times.
    path.write_text(text.replace('"Copies the whole', '"Copied the whole', 1))
    changed = load_catalog(folder)
    assert changed is not first
    assert changed.operator("SCATTER_ND").summary.startswith("Copied the whole")
    assert load_catalog(SPEC_DIR).operator("SCATTER_ND").summary.startswith("Copies the whole")


def test_schema_checks_are_skipped_only_for_bytes_that_passed_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = tmp_path / "checked"
    monkeypatch.setenv("DMLSPEC_SCHEMA_CACHE", str(checked))
    folder = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, folder)
    load_catalog(folder)
    assert len(list(checked.iterdir())) == 1  # these bytes passed
    path = folder / "operators" / "scatter_nd.json"
    text = path.read_text()
    data = json.loads(text)
    data["fields"][0]["Colour"] = "red"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(SpecError, match="Additional properties are not allowed"):
        load_catalog(folder)  # other bytes: checked again
    assert len(list(checked.iterdir())) == 1
    monkeypatch.setenv("DMLSPEC_SCHEMA_CACHE", "off")
    shutil.rmtree(checked)
    path.write_text(text.replace('"Copies the whole', '"Copied the whole', 1))
    load_catalog(folder)
    assert not checked.exists()


def test_per_spec_memos_are_kept_per_spec_object_and_emptied_at_their_limit(
    catalog: Catalog,
) -> None:
    spec = catalog.operator("GATHER_ND")
    twin = dataclasses.replace(spec)  # equal, but another object
    memo: SpecMemo[int] = {}
    calls: list[str] = []

    def compute(label: str) -> Callable[[], int]:
        return lambda: calls.append(label) or len(calls)

    assert per_spec(memo, spec, "k", compute("a")) == 1
    assert per_spec(memo, spec, "k", compute("b")) == 1  # remembered
    assert per_spec(memo, twin, "k", compute("c")) == 2  # another spec object computes again
    assert per_spec(memo, spec, "other", compute("d"), limit=2) == 3  # full: emptied first
    assert len(memo) == 1 and calls == ["a", "c", "d"]


def test_field_c_types_follow_directml_schema_h_where_the_page_differs() -> None:
    """An enumeration is passed by value and a signed array is INT in DirectMLSchema.h (and
    DirectML.h), whatever a page prints: GRU/LSTM Direction and PADDING1 PaddingMode printed as
    pointers, SLICE1/SLICE_GRAD InputWindowStrides as UINT. The page's form is an erratum."""
    header = json.loads((SPEC_DIR / "sources" / "directml_schema.json").read_text())["operators"]
    wrong = []
    for path in sorted((SPEC_DIR / "operators").glob("*.json")):
        spec = json.loads(path.read_text())
        declared = header.get(spec["operator_type"])
        if declared is None:
            continue
        fields = declared["fields"] if isinstance(declared, dict) else declared
        kinds = {f["name"]: f.get("type") for f in fields}
        for field in spec["fields"]:
            c_type = field.get("c_type", "")
            pointer_enum = field["kind"] == "enum" and c_type.endswith("*")
            unsigned = kinds.get(field["name"]) == "int_array" and "UINT" in c_type
            if pointer_enum or unsigned:
                wrong.append(f"{spec['name']}.{field['name']}: {c_type}")
    assert wrong == []
    for name in ("gru", "lstm", "padding1", "slice1", "slice_grad"):
        notes = json.loads((SPEC_DIR / "operators" / f"{name}.json").read_text())["notes"]
        assert any(n.startswith("Errata:") and "DirectMLSchema.h" in n for n in notes), name
