"""Performance measurement: dmlspec's kernels against their peers, and the conformance
suite's throughput. Run it with `python scripts/bench.py` (see `--help`)."""

from .run import main

__all__ = ["main"]
