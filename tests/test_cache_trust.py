"""The JAX compilation cache is used only where no other user can change its entries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dmlspec.kernels.cache_trust import distrust

from .conftest import REPO_ROOT


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    folder = tmp_path / "jax"
    folder.mkdir(mode=0o700)
    (folder / "entry").write_bytes(b"machine code")
    (folder / "entry").chmod(0o644)
    return folder


def test_a_cache_only_its_user_can_write_is_trusted(cache: Path) -> None:
    assert distrust(cache) is None


def test_a_cache_under_a_sticky_world_writable_folder_is_trusted(cache: Path) -> None:
    cache.parent.chmod(0o1777)  # as /tmp
    assert distrust(cache) is None


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        (lambda c: c.chmod(0o777), "other users can write to"),
        (lambda c: c.chmod(0o770), "other users can write to"),
        (lambda c: c.parent.chmod(0o777), "above it (mode 777)"),
        (lambda c: (c / "entry").chmod(0o666), "its entry entry is a link"),
        (lambda c: (c / "swapped").symlink_to(c / "entry"), "its entry swapped is a link"),
    ],
    ids=["world-writable", "group-writable", "parent-writable", "entry-writable", "entry-link"],
)
def test_a_cache_others_can_write_to_is_refused(cache: Path, attack: object, said: str) -> None:
    attack(cache)  # type: ignore[operator]
    reason = distrust(cache)
    assert reason is not None and said in reason


def test_a_linked_cache_folder_is_refused(cache: Path) -> None:
    link = cache.parent / "link"
    link.symlink_to(cache)
    assert "is not a folder" in str(distrust(link))


def test_the_kernels_run_uncached_with_a_warning_when_the_cache_is_refused(cache: Path) -> None:
    cache.chmod(0o777)
    code = (
        "from dmlspec.kernels.runtime import enable_compilation_cache; "
        "print('cache:', enable_compilation_cache())"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DMLSPEC_JAX_CACHE": str(cache)}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert "cache: None" in result.stdout, result.stderr[-2000:]
    assert "not using the JAX compilation cache: other users can write to" in result.stderr
    cache.chmod(0o700)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert f"cache: {cache}" in result.stdout, result.stderr[-2000:]
