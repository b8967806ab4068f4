"""A wheel carries every file the package reads: built as `pip install .` builds it, installed
into a fresh environment, it runs a small conformance run with no checkout in sight.

Slow (a build in an isolated environment, then a run): deselected by the default suite,
run by `python -m pytest -m slow` (CI runs both)."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow

# What setuptools says when a wheel would miss files or pyproject.toml uses deprecated forms.
BUILD_WARNINGS = ("absent from the `packages`", "SetuptoolsDeprecationWarning", "is deprecated")

# Run in the new environment: the package, its specs and its expected failures are the
# wheel's own files.
CHECK_INSTALLED = """
import sys
import dmlspec
from dmlspec.backends.onnxruntime.backend import EXPECTED_FAILURES
from dmlspec.loading import default_spec_dir
print(dmlspec.__file__.startswith(sys.prefix), default_spec_dir().is_relative_to(sys.prefix),
      EXPECTED_FAILURES.is_file())
"""


def test_wheel_installs_and_runs_conformance(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(wheels), "."],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    said = build.stdout + build.stderr
    assert not [w for w in BUILD_WARNINGS if w in said], [
        line for line in said.splitlines() if any(w in line for w in BUILD_WARNINGS)
    ]
    (wheel,) = wheels.glob("dmlspec-*.whl")
    # The dependencies (jax, numpy, ...) come from this environment; dmlspec from the wheel.
    env_dir = tmp_path / "env"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"  # no checkout in the working folder or above it
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", CHECK_INSTALLED],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.split() == ["True", "True", "True"], where.stdout
    run = subprocess.run(
        [
            str(env_dir / "bin" / "dmlspec"),
            "conformance",
            "--backend",
            "numpy",
            "--ops",
            "FILL_VALUE_SEQUENCE",
            "--report",
            str(tmp_path / "report"),
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert {t["operator"] for t in results["tests"]} == {"FILL_VALUE_SEQUENCE"}
    assert any(t["outcome"] == "passed" for t in results["tests"])
    assert results["coverage"]["hit"] == results["coverage"]["total"] > 0
