"""The packed path before and after a change, in one run: `scripts/bench.py --packed-against REV`.

The same packed calls (no Strides anywhere) are timed in this checkout and in git revision REV
(its dmlspec/ and generated/, unpacked with `git archive` into a temporary folder; nothing in
the repository changes). Each side runs in its own process, the processes alternate (before,
after, before, ...), so load on the machine lands on both alike; each process warms up, then
times `calls` calls per round and reports per-round medians. The result per call: the median
over every round of that side, and the ratio after / before.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

__all__ = ["CHILD", "compare_packed"]

# Runs in each process; uses only what both revisions have (the ops functions and ops.run).
CHILD = r"""
import json, sys, time
import numpy as np
import jax
from dmlspec import ops

rounds, calls = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 4)).astype(np.float32)
rows = np.array([[5], [1], [60], [33]], np.int64)
updates = rng.standard_normal((4, 4)).astype(np.float32)
big = jax.device_put(rng.standard_normal((16384, 256)).astype(np.float32))
picked = jax.device_put(rng.permutation(16384)[:8192].astype(np.int64).reshape(8192, 1))
out = [jax.device_put(np.zeros((8192, 256), np.float32))]
axis_indices = rng.integers(0, 64, (64, 4)).astype(np.int64)
gather = {"type": "DML_OPERATOR_GATHER_ND", "desc": {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [64, 4]},
    "IndicesTensor": {"DataType": "INT64", "Sizes": [4, 1]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 4]},
    "InputDimensionCount": 2, "IndicesDimensionCount": 2}}

def gather_out():
    out[0] = ops.gather_nd(big, picked, out=out[0])
    return out[0]

CASES = {
    "gather_nd small": lambda: ops.gather_nd(x, rows),
    "scatter_nd small": lambda: ops.scatter_nd(x, rows, updates),
    "scatter_elements small": lambda: ops.scatter_elements(x, axis_indices, x, Axis=0),
    "fill_value_sequence small": lambda: ops.fill_value_sequence(
        OutputTensor={"DataType": "FLOAT32", "Sizes": [256]}, ValueStart=1.0, ValueDelta=0.5),
    "ops.run gather_nd small": lambda: ops.run(gather, {"InputTensor": x, "IndicesTensor": rows}),
    "gather_nd 8192 of 16384 rows out=": gather_out,
}
def ready(value):
    for leaf in jax.tree_util.tree_leaves(value):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()

result = {}
for name, call in CASES.items():
    for _ in range(max(3, calls // 10)):
        ready(call())
medians = {name: [] for name in CASES}
for _ in range(rounds):
    for name, call in CASES.items():
        count = calls if "small" in name else max(1, calls // 10)
        times = []
        for _ in range(count):
            start = time.perf_counter()
            ready(call())
            times.append(time.perf_counter() - start)
        medians[name].append(sorted(times)[len(times) // 2])
print(json.dumps(medians))
"""


def _unpack(revision: str, repo: Path, folder: Path) -> None:
    """dmlspec/ and generated/ of `revision`, importable from `folder`."""
    archive = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "archive",
            "--format=tar",
            revision,
            "dmlspec",
            "generated",
            "spec",
        ],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "generated").rename(folder / "dmlspec_generated")


def _child(path: Path, rounds: int, calls: int) -> dict[str, list[float]]:
    environment = dict(os.environ, PYTHONPATH=str(path), DMLSPEC_JAX_CACHE="off")
    finished = subprocess.run(
        [sys.executable, "-c", CHILD, str(rounds), str(calls)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=path,
        check=False,
    )
    if finished.returncode != 0:
        raise RuntimeError(f"timing in {path} failed:\n{finished.stderr[-2000:]}")
    medians: dict[str, list[float]] = json.loads(finished.stdout.strip().splitlines()[-1])
    return medians


def compare_packed(
    revision: str, repo: Path, processes: int = 3, rounds: int = 5, calls: int = 200
) -> dict[str, Any]:
    """Median seconds per call of the packed calls at `revision` and in this checkout."""
    sides: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    with tempfile.TemporaryDirectory(prefix="dmlspec-packed-") as temporary:
        before = Path(temporary) / "before"
        after = Path(temporary) / "after"
        _unpack(revision, repo, before)
        after.mkdir()
        (after / "dmlspec").symlink_to(repo / "dmlspec")
        (after / "dmlspec_generated").symlink_to(repo / "generated")
        (after / "spec").symlink_to(repo / "spec")
        for _ in range(processes):
            for side, path in (("before", before), ("after", after)):
                for name, values in _child(path, rounds, calls).items():
                    sides[side].setdefault(name, []).extend(values)
    rows = []
    for name, values in sides["after"].items():
        old, new = statistics.median(sides["before"][name]), statistics.median(values)
        rows.append({"call": name, "before_seconds": old, "after_seconds": new, "ratio": new / old})
    return {"revision": revision, "processes": processes, "rounds": rounds, "rows": rows}


def render(result: dict[str, Any]) -> str:
    def shown(seconds: float) -> str:
        return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"

    lines = [
        f"packed path: {result['revision']} (before) against this checkout (after), "
        f"{result['processes']} alternating processes each, medians",
        f"{'call':<36} {'before':>10} {'after':>10} {'after/before':>13}",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['call']:<36} {shown(row['before_seconds']):>10} "
            f"{shown(row['after_seconds']):>10} {row['ratio']:>12.2f}x"
        )
    return "\n".join(lines)
