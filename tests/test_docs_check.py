"""dmlspec check-docs: the specs agree with the DirectML pages, and disagreement is caught.

Runs only where the shared docs folder exists beside the checkout (skipped, with the reason,
elsewhere). The meta tests break the spec or a page and expect the exact difference."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dmlspec import load_catalog
from dmlspec.model import Catalog
from dmlspec.pages.check import check_docs

from .conftest import REPO_ROOT, SPEC_DIR


def test_specs_match_every_page_they_cite(catalog: Catalog, shared_dir: Path) -> None:
    report = check_docs(catalog, shared_dir)
    assert [f for f in report.findings if not f.ok] == []
    cited = {(s, p) for s, p, _ in report.pages}
    assert ("SCATTER_ND", "seed-001") in cited and ("FILL_VALUE_SEQUENCE", "seed-004") in cited
    seeds = {"SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS", "FILL_VALUE_SEQUENCE"}
    support_cells = [
        f
        for f in report.findings
        if f.subject in seeds and f.what.startswith("support") and "data types" in f.what
    ]
    # Every (table, tensor) on every page, counted from the pages: SCATTER_ND 3x4 + 2x4 + 2x4,
    # GATHER_ND 3x3 + 2x3, SCATTER 4x4 + 4x4, FILL_VALUE_SEQUENCE 3x1 + 1x1.
    assert len(support_cells) == 28 + 15 + 32 + 4
    assert len(report.findings) >= 7000
    assert len({s for s, _, _ in report.pages} - {"common"}) == 177


def test_departures_count_only_where_the_spec_explains_them(
    catalog: Catalog, shared_dir: Path, tmp_path: Path
) -> None:
    """A header-driven departure passes with its erratum; without it, it is a difference."""
    report = check_docs(catalog, shared_dir)
    explained = [f for f in report.findings if f.explained]
    assert any(f.subject == "ACTIVATION_RELU_GRAD" for f in explained)
    assert all(f.explanation for f in explained)

    def drop_errata(spec: dict[str, Any]) -> None:
        spec["notes"] = [n for n in spec.get("notes", []) if not n.startswith("Errata:")]

    differences = _differences(
        _spec_copy(tmp_path, "activation_relu_grad.json", drop_errata), shared_dir
    )
    assert any("ACTIVATION_RELU_GRAD [en] documented members" in d for d in differences)


def test_a_normative_sentence_neither_encoded_nor_listed_is_caught(
    catalog: Catalog, tmp_path: Path, shared_dir: Path
) -> None:
    spec = next(s for s in catalog.operators if any(u.field for u in s.unencoded))
    field = next(u.field for u in spec.unencoded if u.field)

    def forget(data: dict[str, Any]) -> None:
        data["unencoded"] = [u for u in data["unencoded"] if u.get("field") != field]

    spec_copy = _spec_copy(tmp_path, f"{spec.name.lower()}.json", forget)
    differences = _differences(spec_copy, shared_dir)
    assert differences and all(f"{spec.name} [en] {field} sentence" in d for d in differences)
    assert all("neither encoded nor listed" in d for d in differences)


def _spec_copy(tmp_path: Path, file: str, mutate: Callable[[dict[str, Any]], Any]) -> Catalog:
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir)
    path = spec_dir / "operators" / file
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    return load_catalog(spec_dir)


def _differences(catalog: Catalog, docs: Path) -> list[str]:
    return [
        f"{f.subject} [{f.page}] {f.what}: page says {f.expected}; spec says {f.actual}"
        for f in check_docs(catalog, docs).findings
        if not f.ok
    ]


def _drop_int8(spec: dict[str, Any]) -> None:
    for row in spec["support"]:
        for cell in row["tensors"]:
            if cell["tensor"] == "UpdatesTensor":
                cell["data_types"].remove("INT8")


def test_a_data_type_missing_from_the_spec_is_caught(tmp_path: Path, shared_dir: Path) -> None:
    catalog = _spec_copy(tmp_path, "scatter_nd.json", _drop_int8)
    differences = _differences(catalog, shared_dir)
    assert (
        "SCATTER_ND [en] support 2_1 UpdatesTensor data types: page says [FLOAT32, FLOAT16, INT32, "
        "INT16, INT8, UINT32, UINT16, UINT8]; spec says [FLOAT32, FLOAT16, INT32, INT16, UINT32, "
        "UINT16, UINT8]"
    ) in differences
    assert len(differences) == 7  # 3 rows on the English page, 2 on each seed


def test_a_wrong_example_value_is_caught(tmp_path: Path, shared_dir: Path) -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["examples"][2]["as_written"]["OutputTensor"]["Values"] = [[[[2, 3], [4, 6]]]]

    differences = _differences(_spec_copy(tmp_path, "gather_nd.json", mutate), shared_dir)
    assert differences == [
        f"GATHER_ND [{page}] example example_2_2d_remapping OutputTensor Values: "
        "page says [[[[2, 3], [4, 5]]]]; spec says [[[[2, 3], [4, 6]]]]"
        for page in ("en", "seed-002")
    ]


def test_a_misquoted_sentence_and_a_wrong_level_are_caught(
    tmp_path: Path, shared_dir: Path
) -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["constraints"][0]["doc"] = [
            "The data type of Value field, which must equal OutputTensor.DataType."
        ]
        spec["introduced"] = "2_0"
        spec["support"][0]["feature_level"] = "2_0"

    differences = _differences(_spec_copy(tmp_path, "fill_value_sequence.json", mutate), shared_dir)
    assert "FILL_VALUE_SEQUENCE [en] introduced: page says 2_1; spec says 2_0" in differences
    assert (
        "FILL_VALUE_SEQUENCE [en] support 2_1: spec row citing this page: page says present; "
        "spec says no row at this level"
    ) in differences
    assert any("FILL_VALUE_SEQUENCE.C1 quotes" in d and "not on the page" in d for d in differences)


def test_a_level_gate_quoting_the_feature_level_history_is_checked_against_its_section(
    tmp_path: Path, shared_dir: Path
) -> None:
    """ACTIVATION_SOFTPLUS.C4 quotes its page and the history's 6_4 section: each sentence must be
    on one of them, and the level its expression names must be the section naming the operator."""

    def wrong_level(spec: dict[str, Any]) -> None:
        gate = next(c for c in spec["constraints"] if c["id"] == "ACTIVATION_SOFTPLUS.C4")
        gate["expr"] = 'Steepness >= 1 or level_at_least(FeatureLevel, "6_3")'

    differences = _differences(
        _spec_copy(tmp_path / "level", "activation_softplus.json", wrong_level), shared_dir
    )
    assert differences == [
        "ACTIVATION_SOFTPLUS [feature-level-history] ACTIVATION_SOFTPLUS.C4: the "
        "DML_FEATURE_LEVEL_6_3 section names the operator and holds a quoted sentence: "
        "page says named, quoted; spec says not named, not quoted"
    ]

    def misquoted(spec: dict[str, Any]) -> None:
        gate = next(c for c in spec["constraints"] if c["id"] == "PADDING.C6")
        gate["doc"] = ["Extended PADDING to accept DML_PADDING_MODE_WRAP."]

    differences = _differences(
        _spec_copy(tmp_path / "quote", "padding.json", misquoted), shared_dir
    )
    assert differences == [
        "PADDING [feature-level-history] PADDING.C6 quotes 'Extended PADDING to accept "
        "DML_PADDING_MODE_WRAP....': page says on the page; spec says not on the page",
        "PADDING [feature-level-history] PADDING.C6: the DML_FEATURE_LEVEL_6_4 section names the "
        "operator and holds a quoted sentence: page says named, quoted; "
        "spec says named, not quoted",
    ]


def test_a_changed_page_is_caught(catalog: Catalog, shared_dir: Path, tmp_path: Path) -> None:
    docs = tmp_path / "shared"
    shutil.copytree(shared_dir, docs)
    page = docs / "reference" / "directml-docs" / "ns-directml-dml_scatter_operator_desc.md"
    text = page.read_text()
    page.write_text(
        text.replace(
            "| IndicesTensor | Input | 4 | UINT32 |",
            "| IndicesTensor | Input | 4 | UINT32, INT32 |",
            1,
        )
    )
    differences = _differences(catalog, docs)
    assert differences == [
        "SCATTER_ELEMENTS [en] support 2_1 IndicesTensor data types: page says [UINT32, INT32]; "
        "spec says [UINT32]"
    ]


def test_cli_check_docs(shared_dir: Path, tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "dmlspec", "check-docs", str(shared_dir)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "the specs match the pages" in ok.stdout.rstrip().splitlines()[-1]
    missing = subprocess.run(
        [sys.executable, "-m", "dmlspec", "check-docs", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("dmlspec: docs folder not found:")
    assert "Traceback" not in missing.stderr


def test_a_fused_set_member_at_the_wrong_level_is_caught(tmp_path: Path, shared_dir: Path) -> None:
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir)
    common = json.loads((spec_dir / "common.json").read_text())
    fused = next(s for s in common["operator_sets"] if s["name"] == "FUSED_ACTIVATIONS")
    fused["since"] = {"ELEMENT_WISE_CLIP": "5_2"}
    (spec_dir / "common.json").write_text(json.dumps(common))
    assert _differences(load_catalog(spec_dir), shared_dir) == [
        "common [feature-level-history] FUSED_ACTIVATIONS holds ELEMENT_WISE_CLIP from 5_2: "
        "page says not stated in that level's section; spec says stated"
    ]
