"""Project hygiene: the README's commands, CI, and packaging stay in step."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from .conftest import REPO_ROOT, SHARED_DIR


def readme_commands() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^    (python -m pip install .+)$", quick_start, re.M)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    main_job, tests = commands
    assert "dmlspec" in main_job.split("&&", 1)[1]
    assert "pytest" in tests
    assert tests in (REPO_ROOT / ".ci" / "run").read_text().splitlines()


def test_every_package_folder_is_packaged() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {name: REPO_ROOT / folder for name, folder in config["package-dir"].items()}
    found = set()
    for name, root in roots.items():
        for init in root.rglob("__init__.py"):
            relative = init.parent.relative_to(root).parts
            found.add(".".join((name, *relative)))
    assert found <= listed
    # The others are folders of data the package reads (specs, expected failures, the
    # generated suites' modules): each exists and its files are declared.
    data = config["package-data"]
    for name in sorted(listed - found):
        root = max((r for r in roots if name == r or name.startswith(r + ".")), key=len)
        folder = roots[root].joinpath(*name[len(root) :].split(".")[1:])
        assert folder.is_dir(), name
        assert name in data or list(folder.glob("*.py")), name


def test_seed_english_script_prints_the_english_sentences() -> None:
    seed = SHARED_DIR / "seeds" / "000_95366c7ec0544d04.txt"
    if not seed.exists():
        import pytest

        pytest.skip(f"seed page not found at {seed}")
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "seed_english.py"), str(seed)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert "Copies the whole input tensor to the output" in result.stdout
    assert "Copia l'intero tensore" not in result.stdout.split("---", 2)[2]
