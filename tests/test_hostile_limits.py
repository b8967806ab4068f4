"""Hostile input, round two: bounds on what all of a model's parts take together, and on what
printing one part takes (see test_hostile.py for the arena)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec.interop.dispatch import PRINT_CHUNK, write_resource
from dmlspec.limits import LIMITS, MAX_DISPATCH_BYTES

from .conftest import REPO_ROOT
from .test_hostile import Arena, expect


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    return Arena(tmp_path)


def _filled(count: int) -> dict[str, Any]:
    return {"initialValuesDataType": "INT32", "initialValues": {"valueCount": count, "value": 7}}


def test_dispatch_bounds_all_resources_together_before_allocating(arena: Arena) -> None:
    """Five resources of 1 GiB each fit the limit of one resource, not the default total."""
    model = {"resources": {f"r{i}": _filled(1 << 28) for i in range(5)}, "commands": []}
    outcome = arena.run("dispatch", str(arena.file("model.json", model)), "--backend", "numpy")
    expect(outcome, 2, "/resources/r2: the resources up to this one take 3221225472 bytes")
    assert MAX_DISPATCH_BYTES.variable in outcome.stderr


def test_dispatch_total_counts_files_and_follows_its_variable(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    np.save(arena.work / "a.npy", np.zeros(100, dtype=np.int32))
    arena.file("b.bin", bytes(400))
    model = {
        "resources": {
            "a": {"initialValues": {"sourcePath": "a.npy"}},
            "b": {"initialValuesDataType": "INT32", "initialValues": {"sourcePath": "b.bin"}},
            "c": _filled(10),
        },
        "commands": [{"type": "print", "resource": "c"}],
    }
    path = str(arena.file("model.json", model))
    monkeypatch.setenv(MAX_DISPATCH_BYTES.variable, "800")
    expect(arena.run("dispatch", path, "--backend", "numpy", isolate=False), 2, "/resources/b:")
    monkeypatch.setenv(MAX_DISPATCH_BYTES.variable, "1000")
    expect(
        arena.run("dispatch", path, "--backend", "numpy", isolate=False),
        0,
        "Resource 'c': 7, 7, 7, 7, 7, 7, 7, 7, 7, 7\n",
    )


def test_a_printed_resource_is_written_in_bounded_pieces() -> None:
    buffer = np.arange(5 * PRINT_CHUNK + 3, dtype=np.int64) * 10**12
    pieces: list[str] = []
    write_resource("big", buffer, pieces.append)
    longest = max(len(piece) for piece in pieces)
    assert longest < PRINT_CHUNK * 20 < len("".join(pieces)) / 4
    line = "".join(pieces)
    assert line.startswith("Resource 'big': 0, 1000000000000, ") and line.endswith("\n")
    assert line.count("\n") == 1
    assert [int(v) for v in line.removeprefix("Resource 'big': ").split(", ")] == buffer.tolist()


def test_a_printed_float_resource_keeps_dxdispatch_s_format() -> None:
    pieces: list[str] = []
    write_resource("Out", np.array([3.2, 4.7, 1e-7], dtype=np.float32), pieces.append)
    assert "".join(pieces) == "Resource 'Out': 3.2, 4.7, 1e-07\n"


def test_the_readme_lists_every_limit_with_its_default() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| `(DMLSPEC_[A-Z_]+)` \| ([^|]+) \|", readme, re.MULTILINE))
    for limit in LIMITS:
        assert limit.variable in rows, f"README's limits table lacks {limit.variable}"
    assert rows[MAX_DISPATCH_BYTES.variable].strip() == "2 GiB"
