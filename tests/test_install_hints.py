"""What the main job's install (`pip install -e .`) leaves out is said in one line, with the
command that installs it; what it brings covers the README's main-job commands."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dmlspec.extras import EXTRA_OF, install_hint

from .conftest import REPO_ROOT

# Run the CLI in a Python where the named packages cannot be imported (as after an install
# without the extra that brings them).
WITHOUT = """
import sys

BLOCKED = set(sys.argv[1].split(","))


class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Block())
from dmlspec.cli import main

sys.exit(main(sys.argv[2:]))
"""


def _run(blocked: str, *args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, blocked, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def _pyproject() -> dict[str, object]:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_the_main_install_brings_what_the_main_job_uses() -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    main = " ".join(project["dependencies"])
    assert "pytest-xdist" in main  # conformance --workers
    extras = project["optional-dependencies"]
    for package, extra in EXTRA_OF.items():
        if extra:
            assert any(r.startswith(package) for r in extras[extra]), (package, extra)
        else:
            distribution = {"xdist": "pytest-xdist", "referencing": "jsonschema"}.get(
                package, package
            )
            assert distribution in main, package


def test_the_hint_names_the_extra_for_a_checkout_and_for_an_installed_package() -> None:
    hint = install_hint("onnx")
    assert 'python -m pip install -e ".[peers]"' in hint
    assert 'python -m pip install "dmlspec[peers]"' in hint


def test_workers_without_xdist_is_one_line_with_the_install_command(tmp_path: Path) -> None:
    finished = _run("xdist", "conformance", "--workers", "2", "--report", str(tmp_path))
    assert finished.returncode == 2, finished.stderr
    assert finished.stderr.count("\n") == 1, finished.stderr
    assert "--workers runs on pytest-xdist" in finished.stderr
    assert "python -m pip install -e ." in finished.stderr
    assert "unrecognized arguments" not in finished.stderr + finished.stdout


def test_export_with_its_defaults_works_without_onnx(tmp_path: Path) -> None:
    out = tmp_path / "vectors"
    finished = _run("onnx", "export", "--out", str(out), "--ops", "FILL_VALUE_SEQUENCE")
    assert finished.returncode == 0, finished.stderr
    assert re.search(r"exported \d+ cases to .* \(dxdispatch\)", finished.stdout)
    assert "onnx vectors left out: onnx comes with dmlspec's peers extra" in finished.stdout
    assert (out / "manifest.json").is_file()
    assert not list(out.rglob("*.onnx"))


@pytest.mark.parametrize(
    "args",
    [
        ("export", "--format", "onnx", "--ops", "FILL_VALUE_SEQUENCE"),
        ("conformance", "--backend", "onnxruntime", "--in-process", "--ops", "FILL_VALUE_SEQUENCE"),
    ],
)
def test_asking_for_onnx_without_it_is_one_line_naming_the_peers_extra(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    where = ("--out" if args[0] == "export" else "--report", str(tmp_path / "out"))
    finished = _run("onnx,onnxruntime", *args, *where)
    assert finished.returncode == 2, finished.stderr
    assert finished.stderr.count("\n") == 1, finished.stderr
    assert 'python -m pip install -e ".[peers]"' in finished.stderr
    assert "Traceback" not in finished.stderr
