"""What the compute-bound cases (the convolution family) are read against: their floating-point
operations, GFLOP/s, and the machine's matrix-multiply peak measured in the same run.

FLOPs count a multiply-add as two operations (the usual convention: cuBLAS's, oneDNN's and
MLPerf's), and only the products of the matrix multiply or the convolution window: Alpha,
Beta, a bias or an activation are a few operations per output element, not per product.

The peak is a FLOAT32 matrix multiply of PEAK_SIZE^3 measured in the run, interleaved rounds,
medians, before the cases and after them, the higher of the two (on a shared machine another
tenant's load lowers one of them, and a peak is the best the machine did). Which one:
- on the CPU, the faster of NumPy's BLAS (`np.matmul`: OpenBLAS's or MKL's hand-tuned sgemm,
  usually the fastest matrix multiply a CPU runs) and XLA's `jnp.matmul` (its CPU dot, Eigen
  or oneDNN, which may win on some CPUs): the peak is the best this machine did in this run, so
  a share above 100% would mean a case beat both, and neither library's weakness is counted as
  the machine's;
- on an accelerator, `jnp.matmul` on the device (NumPy's BLAS runs on the host, not where the
  kernels run), at `Precision.HIGHEST` as dmlspec's kernels compute (no TF32 or bfloat16
  passes), calls queued back to back before one wait, as the device's copy bandwidth is
  measured, so the wait for the device is not charged to the arithmetic.
Only FLOAT32: the FLOAT16 cases are read against the same peak. On the CPU XLA computes
FLOAT16 products in FLOAT32 (measured, 1024^3: 99 ms in FLOAT16 against 87 ms in FLOAT32), so
that is their ceiling too; on an accelerator with half-precision matrix units a FLOAT16 case
may show more than 100%.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PEAK_SIZE",
    "MatmulPeak",
    "convolution_flops",
    "gemm_flops",
    "gigaflops",
    "higher_peak",
    "measure_matmul_peak",
]

PEAK_SIZE = 2048  # 17.2 GFLOP per call: long enough that a call's overhead does not count
QUEUED = 4  # on an accelerator: calls queued before one wait


@dataclass(frozen=True)
class MatmulPeak:
    gflops: float  # the fastest of `measured`
    source: str  # which one, in words
    size: int  # the matrices' side
    measured: dict[str, float]  # GFLOP/s of each matrix multiply timed, at its median


def higher_peak(first: MatmulPeak, second: MatmulPeak) -> MatmulPeak:
    """Two measurements of the same matrix multiplies as one: each one's higher rate."""
    measured = {n: max(r, second.measured.get(n, 0.0)) for n, r in first.measured.items()}
    best = max(measured, key=measured.__getitem__)
    return MatmulPeak(measured[best], f"{best}, {first.size}^3 FLOAT32", first.size, measured)


def gemm_flops(m: int, n: int, k: int, batch: int = 1) -> int:
    """`batch` products of {M, K} x {K, N}: M * N * K multiply-adds each."""
    return 2 * batch * m * n * k


def convolution_flops(
    batch: int,
    output_channels: int,
    output_spatial: Sequence[int],
    input_channels_per_group: int,
    window: Sequence[int],
) -> int:
    """A forward convolution: each output element sums (input channels of its group) x window
    products."""
    outputs = batch * output_channels * math.prod(output_spatial)
    return 2 * outputs * input_channels_per_group * math.prod(window)


def gigaflops(flops: int, seconds: float) -> float:
    return flops / seconds / 1e9


def measure_matmul_peak(runs: int, size: int = PEAK_SIZE) -> MatmulPeak:
    """The matrix-multiply peak of JAX's default device (see the module docstring): `runs`
    timed rounds after one untimed, each round timing every candidate once."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    on_device = jax.devices()[0].platform != "cpu"
    product = jax.jit(lambda x, y: jnp.matmul(x, y, precision=jax.lax.Precision.HIGHEST))
    da, db = jax.device_put(a), jax.device_put(b)
    queued = QUEUED if on_device else 1

    def xla() -> None:
        results = [product(da, db) for _ in range(queued)]
        results[-1].block_until_ready()

    candidates: dict[str, tuple[Callable[[], object], int]] = {
        f"jnp.matmul on the {jax.devices()[0].platform}": (xla, queued)
    }
    if not on_device:
        out = np.empty((size, size), np.float32)
        candidates["numpy BLAS np.matmul"] = (lambda: np.matmul(a, b, out=out), 1)
    seconds: dict[str, list[float]] = {name: [] for name in candidates}
    for index in range(runs + 1):
        for name, (call, calls) in candidates.items():
            start = time.perf_counter()
            call()
            if index:  # the first round warms up (compiles, pages in)
                seconds[name].append((time.perf_counter() - start) / calls)
    flops = gemm_flops(size, size, size)
    measured = {name: gigaflops(flops, statistics.median(s)) for name, s in seconds.items()}
    best = max(measured, key=measured.__getitem__)
    return MatmulPeak(measured[best], f"{best}, {size}^3 FLOAT32", size, measured)
