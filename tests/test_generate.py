"""The generator: generated/ is current, output is deterministic, golden for a fixture spec,
ruff-clean and typed, and the rendered code works."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from dmlspec import load_catalog
from dmlspec.generate import default_output_dir, generate, render
from dmlspec.generate.header import MARKER
from dmlspec.model import Catalog

from .conftest import REPO_ROOT, SPEC_DIR

FIXTURE = Path(__file__).parent / "fixtures" / "spec"
GOLDEN = Path(__file__).parent / "golden"


def fixture_catalog(tmp_path: Path) -> Catalog:
    spec_dir = tmp_path / "spec"
    shutil.copytree(FIXTURE, spec_dir)
    shutil.copytree(SPEC_DIR / "schema", spec_dir / "schema")
    return load_catalog(spec_dir)


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
    )


def test_generated_folder_is_current(catalog: Catalog) -> None:
    changes = generate(catalog, default_output_dir(), check=True)
    assert not changes, "generated/ is stale; run `dmlspec generate`:\n" + "".join(
        c.diff for c in changes
    )


def test_cli_check_passes_on_the_checked_in_folder() -> None:
    result = run("generate", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "generated/ is current"


def test_check_reports_changed_missing_and_orphan_files(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    shutil.copytree(default_output_dir(), out, ignore=shutil.ignore_patterns("__pycache__"))
    (out / "validators" / "gather_nd.py").write_text("# edited by hand\n")
    (out / "validators" / "scatter_nd.py").unlink()
    (out / "validators" / "removed_op.py").write_text(f"# {MARKER} by dmlspec\n")
    cache = out / "tests" / ".hypothesis" / "constants"  # pytest run inside generated/tests
    cache.mkdir(parents=True)
    (cache / "12af14c9ebf4e5c5").write_text("# file: dmlspec/safeio.py\n")
    result = run("generate", "--check", "--out", str(out))
    assert result.returncode == 1
    assert (
        "-# edited by hand" in result.stdout
        and "+++ b/generated/validators/gather_nd.py" in result.stdout
    )
    assert result.stderr.strip() == (
        "generated/ is stale: validators/gather_nd.py (changed), validators/scatter_nd.py "
        "(missing), validators/removed_op.py (orphan). Run: dmlspec generate"
    )
    untouched = out / "validators" / "common.py"
    before = untouched.stat().st_mtime_ns
    fixed = run("generate", "--out", str(out))
    assert fixed.returncode == 0
    assert fixed.stdout.splitlines() == [
        "wrote generated/validators/gather_nd.py",
        "wrote generated/validators/scatter_nd.py",
        "removed generated/validators/removed_op.py",
        "generated/: 3 file(s) changed",
    ]
    assert untouched.stat().st_mtime_ns == before  # unchanged files are not rewritten
    assert run("generate", "--check", "--out", str(out)).returncode == 0


def test_output_is_identical_across_hash_seeds(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "4242"):
        out = tmp_path / f"seed{seed}"
        assert run("generate", "--out", str(out), env={"PYTHONHASHSEED": seed}).returncode == 0
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.py"))})
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == len(render(load_catalog(), out).files)


def test_every_generated_file_has_the_header(catalog: Catalog) -> None:
    for path, content in render(catalog, default_output_dir()).files.items():
        assert content.startswith(f"# {MARKER} by dmlspec from "), path
        assert "# Regenerate with: dmlspec generate\n" in content.split('"""')[0], path
        assert "\r" not in content and content.endswith("\n")


def test_file_manager_refuses_paths_outside_the_output_folder(tmp_path: Path) -> None:
    files = render(load_catalog(), tmp_path)
    for bad in ("../escape.py", "/abs.py"):
        with pytest.raises(ValueError, match="outside"):
            files.add(bad, "x\n")
    with pytest.raises(ValueError, match="rendered twice"):
        files.add("__init__.py", "x\n")


def test_golden_files_for_the_fixture_spec(tmp_path: Path) -> None:
    rendered = render(fixture_catalog(tmp_path), tmp_path / "out").files
    if os.environ.get("DMLSPEC_UPDATE_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for path, content in rendered.items():
            target = GOLDEN / f"{path}.golden"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
    golden = {
        p.relative_to(GOLDEN).as_posix().removesuffix(".golden"): p.read_text()
        for p in sorted(GOLDEN.rglob("*.golden"))
    }
    assert sorted(golden) == sorted(rendered)
    for path, content in rendered.items():
        assert content == golden[path], f"{path} differs from its golden file"


def test_rendered_fixture_validator_and_kernel_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    package = tmp_path / "fixture_generated"
    assert generate(fixture_catalog(tmp_path), package)
    monkeypatch.syspath_prepend(str(tmp_path))
    put = importlib.import_module("fixture_generated.validators.put")
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 5]},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": [2, 3]},
        "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 5]},
        "Axis": 1,
    }
    operator = {"type": "PUT", "desc": desc}
    assert put.validate(operator, "2_0").valid
    assert put.validate(operator, "1_0").fired() == ("SUPPORT.dimension_count",)
    desc["Axis"] = 2
    assert put.validate(operator).fired() == ("PUT.C3",)
    desc["Axis"] = 1
    desc["OutputTensor"]["DataType"] = "INT32"
    assert put.validate(operator).fired() == ("PUT.C2",)
    desc["OutputTensor"]["DataType"] = "FLOAT32"
    report = put.check_requires(operator, {"IndicesTensor": np.array([[0, 4, 5], [1, 2, 3]])})
    assert [v.constraint for v in report.violations] == ["PUT.R1"]
    assert report.undefined["OutputTensor"].all()
    kernel = importlib.import_module("fixture_generated.kernels.put")
    result = kernel.put(
        np.zeros((2, 5), np.float32),
        np.array([[0, 4, 1], [1, 2, 3]], np.uint32),
        np.ones((2, 3), np.float32),
        Axis=1,
    )
    assert np.asarray(result).tolist() == [[1, 1, 0, 0, 1], [0, 1, 1, 1, 0]]
    for name in [n for n in sys.modules if n.startswith("fixture_generated")]:
        sys.modules.pop(name)


def test_generator_refuses_an_unknown_primitive(tmp_path: Path) -> None:
    catalog = fixture_catalog(tmp_path)
    spec = catalog.operators[0]
    broken = replace(spec, kernel=replace(spec.kernel, primitive="transmogrify"))
    with pytest.raises(ValueError, match=r"kernel\.primitive 'transmogrify' is not in"):
        render(replace(catalog, operators=(broken,)), tmp_path / "out")


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")


def test_generated_code_is_ruff_clean() -> None:
    _tool("ruff")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "generated"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stdout


def test_generated_code_is_typed() -> None:
    _tool("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "generated"], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == 0, result.stdout
