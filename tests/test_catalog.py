"""The whole catalog: a spec for every DirectML operator page, cross-checked with
DirectMLSchema.h, drafted reproducibly, and validating DxDispatch's real models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dmlspec.catalog_status import catalog_status, render_markdown
from dmlspec.model import Catalog
from dmlspec.pages.drafting import draft_catalog, operator_pages
from dmlspec.pages.drafting.header import compatible_kinds, load_header_facts
from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT, SPEC_DIR

HEADER_FACTS = SPEC_DIR / "sources" / "directml_schema.json"
# 6_4 operators newer than every stored copy of DirectMLSchema.h (see the facts file's note).
NOT_IN_HEADER = {"FOLD", "UNFOLD", "RESAMPLE3"}
SEEDS = {"FILL_VALUE_SEQUENCE", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER_ND"}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args], capture_output=True, text=True, cwd=REPO_ROOT
    )


def test_every_operator_page_has_a_spec(catalog: Catalog, shared_dir: Path) -> None:
    cited = {Path(p.path).name for spec in catalog.operators for p in spec.doc_pages}
    pages = operator_pages(shared_dir)
    assert len(pages) == 177
    assert [p.name for p in pages if p.name not in cited] == []
    assert len(catalog.operators) == 177
    assert {spec.name for spec in catalog.operators} >= SEEDS
    assert all(catalog.operator(s).status == "curated" for s in SEEDS)


def test_every_spec_has_the_fields_directmlschema_declares(catalog: Catalog) -> None:
    """Names, order, tensor or attribute, array or not, optional, and a compatible type."""
    header = load_header_facts(HEADER_FACTS)
    not_followed = json.loads(HEADER_FACTS.read_text())["not_followed"]
    checked, differences = 0, []
    for spec in catalog.operators:
        facts = next((header[t] for t in spec.operator_types if t in header), None)
        if facts is None:
            assert spec.name in NOT_IN_HEADER or spec.operator_type in not_followed, spec.name
            continue
        checked += 1
        if [f.name for f in spec.fields] != [h.name for h in facts]:
            differences.append((spec.name, [f.name for f in spec.fields], [h.name for h in facts]))
            continue
        for field, fact in zip(spec.fields, facts, strict=True):
            if field.kind not in compatible_kinds(fact) or field.optional != fact.optional:
                differences.append((spec.name, field.name, field.kind, field.optional, fact))
    assert differences == []
    assert checked == 177 - len(NOT_IN_HEADER) - len(not_followed)


def test_quantize_names_follow_the_page_and_directml_h(catalog: Catalog) -> None:
    """The one place the header snapshot is not followed, with its reason recorded."""
    not_followed = json.loads(HEADER_FACTS.read_text())["not_followed"]
    assert set(not_followed) == {"DML_OPERATOR_QUANTIZE", "DML_OPERATOR_DEQUANTIZE"}
    fields = [f.name for f in catalog.operator("QUANTIZE").fields]
    assert fields[1:4] == ["QuantizationType", "QuantizationTensorCount", "QuantizationTensors"]


def test_header_errata_are_recorded_where_the_spec_departs_from_the_page(
    catalog: Catalog,
) -> None:
    spec = catalog.operator("ACTIVATION_RELU_GRAD")
    assert [f.name for f in spec.fields][-1] == "OutputGradientTensor"
    assert any("does not document OutputGradientTensor" in note for note in spec.notes)
    split = catalog.operator("SPLIT").field("OutputTensors")
    assert (split.kind, split.count_field) == ("output_tensor_array", "OutputCount")


def test_a_redraft_changes_nothing(catalog: Catalog, shared_dir: Path) -> None:
    actions = draft_catalog(catalog.common, shared_dir, SPEC_DIR / "operators", check=True)
    stale = [a.name for a in actions if a.action not in ("unchanged", "kept (curated)")]
    assert stale == []
    assert sum(a.action == "kept (curated)" for a in actions) >= len(SEEDS)


def test_a_redraft_never_overwrites_a_curated_spec(
    catalog: Catalog, shared_dir: Path, tmp_path: Path
) -> None:
    operators = tmp_path / "operators"
    operators.mkdir()
    curated = json.loads((SPEC_DIR / "operators" / "cast.json").read_text())
    curated.update(status="curated", summary="edited by hand")
    (operators / "cast.json").write_text(json.dumps(curated))
    (operators / "tile.json").write_text(json.dumps({"name": "TILE", "status": "drafted"}))
    actions = {
        a.name: a.action
        for a in draft_catalog(catalog.common, shared_dir, operators, {"CAST", "TILE", "GATHER"})
    }
    assert actions == {"CAST": "kept (curated)", "TILE": "wrote", "GATHER": "wrote"}
    assert json.loads((operators / "cast.json").read_text())["summary"] == "edited by hand"
    assert json.loads((operators / "tile.json").read_text())["status"] == "drafted"


def test_catalog_md_is_current(catalog: Catalog) -> None:
    assert (REPO_ROOT / "docs" / "catalog.md").read_text() == render_markdown(
        catalog_status(catalog)
    ), "docs/catalog.md is stale; run: dmlspec list --markdown > docs/catalog.md"


def test_list_shows_every_operator() -> None:
    result = run_cli("list")
    assert result.returncode == 0, result.stderr
    assert "177 operators" in result.stdout
    header = result.stdout.splitlines()[0].split()
    assert header[:2] == ["operator", "aliases"] and "encoded" in header and "kernel" in header
    scatter = next(
        line for line in result.stdout.splitlines() if line.startswith("SCATTER_ELEMENTS")
    )
    assert scatter.split()[1:4] == ["SCATTER", "curated", "1_0"]


# -- DxDispatch's own models ------------------------------------------------------------------

DXDISPATCH = REPO_ROOT.parent / "shared" / "reference" / "dxdispatch"
# Verdicts read against the pages: each model's desc satisfies its operator's page.
MODEL_VERDICTS = {
    "dml_convolution_2d.json": True,
    "dml_convolution_3d.json": True,
    "dml_cumulative_product.json": True,
    "dml_element_wise_add.json": True,
    "dml_element_wise_add1.json": True,
    "dml_element_wise_add_npy.json": True,
    "dml_element_wise_clip.json": True,
    "dml_element_wise_identity.json": True,
    "dml_fill_value_sequence.json": True,
    "dml_gemm.json": True,
    "dml_gemm_graph.json": True,
    "dml_join.json": True,
    "dml_owned_tensors.json": True,
    "dml_reduce.json": True,
    "dml_rnn.json": True,
    "dml_scalar_union_fp16.json": True,
    "dml_slice.json": True,
    "dml_split.json": True,
    "dml_upsample_2d.json": True,
}


def _directml_dispatchables(model: dict[str, Any]) -> dict[str, Any]:
    return {
        name: d
        for name, d in model["dispatchables"].items()
        if str(d.get("type", "")).startswith("DML_OPERATOR_")
    }


def test_every_directml_model_of_dxdispatch_is_checked(shared_dir: Path) -> None:
    models = sorted(
        p.name
        for p in DXDISPATCH.glob("*.json")
        if not p.name.startswith("_") and _directml_dispatchables(json.loads(p.read_text()))
    )
    assert models == sorted(MODEL_VERDICTS)


@pytest.mark.parametrize("model", sorted(MODEL_VERDICTS))
def test_dxdispatch_model_verdict(shared_dir: Path, model: str) -> None:
    data = json.loads((DXDISPATCH / model).read_text())
    for name, dispatchable in _directml_dispatchables(data).items():
        result = validate_operator(dispatchable)
        assert result.valid == MODEL_VERDICTS[model], (name, [str(v) for v in result.violations])
    result = run_cli("validate", str(DXDISPATCH / model))
    assert result.returncode == (0 if MODEL_VERDICTS[model] else 1), result.stdout


def test_an_unknown_operator_is_reported_as_unknown() -> None:
    result = validate_operator({"type": "ELEMENT_WISE_ADDD", "desc": {}})
    assert result.fired() == ("OPERATOR.unknown",)
    message = result.violations[0].message
    assert "did you mean ELEMENT_WISE_ADD" in message and len(message) < 300


def test_serialized_graph_dispatchables_are_skipped_not_failed(shared_dir: Path) -> None:
    result = run_cli("validate", str(DXDISPATCH / "dmlSerializedGraph_matmul_add.json"))
    assert result.returncode == 0
    assert "not checked (dmlSerializedGraph dispatchable" in result.stdout
