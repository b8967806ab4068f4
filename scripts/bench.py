#!/usr/bin/env python3
"""Benchmark dmlspec's JAX kernels against numpy, onnxruntime and torch, and time the
conformance suite. All options: python scripts/bench.py --help

    python scripts/bench.py --json reports/bench.json
"""

from __future__ import annotations

import sys

from dmlspec.bench import main

if __name__ == "__main__":
    sys.exit(main())
