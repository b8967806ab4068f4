"""What an accelerator's run is read against, measured in the same run: its copy bandwidth,
the host-device transfers that NumPy inputs and outputs take, and the floor of one call.

On a CPU, XLA reads an aligned NumPy array in place and a jitted call's wait costs a few
microseconds, so neither needs measuring. On a GPU every NumPy input crosses the bus to the
device (and `ops.run`'s NumPy outputs cross back), and every call the benchmark times waits
for the device (the user's path: a result in hand), a latency that a copy of a few hundred
microseconds does not hide. A copy bandwidth taken from single waited calls would charge
that latency to the memory, so the device's copy bandwidth is taken from copies queued back
to back, and the single call's bandwidth and the floor are reported beside it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["DeviceRates", "measure_device"]

QUEUED = 8  # copies queued before one wait: the device's bandwidth, not one call's latency


@dataclass(frozen=True)
class DeviceRates:
    platform: str  # JAX's name for the device's platform: "gpu", "tpu"
    copy_gbps: float  # jitted copies queued back to back, read + write
    single_copy_gbps: float  # one jitted copy and its wait, read + write
    host_to_device_gbps: float  # jax.device_put of a NumPy array, bytes moved
    device_to_host_gbps: float  # np.asarray of a device array, bytes moved
    call_floor_seconds: float  # a trivial jitted call on a 1 KiB device array, and its wait


def _median_seconds(action: Callable[[], object], runs: int, warmup: int = 2) -> float:
    seconds = []
    for index in range(runs + warmup):
        start = time.perf_counter()
        action()
        if index >= warmup:
            seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def measure_device(size: int, runs: int) -> DeviceRates:
    """The rates of JAX's default device, on buffers of `size` bytes (`runs` rounds each)."""
    import jax
    import jax.numpy as jnp

    elements = size // 4
    source = jnp.ones(elements, jnp.float32)
    target = [jnp.zeros(elements, jnp.float32)]
    copy = jax.jit(lambda out, x: x * 1.0, donate_argnums=0)

    def one_copy() -> None:
        target[0] = copy(target[0], source)
        target[0].block_until_ready()

    def queued_copies() -> None:
        for _ in range(QUEUED):
            target[0] = copy(target[0], source)
        target[0].block_until_ready()

    single = _median_seconds(one_copy, runs)
    queued = _median_seconds(queued_copies, runs) / QUEUED

    host = np.ones(elements, np.float32)
    upload = _median_seconds(lambda: jax.device_put(host).block_until_ready(), runs)
    fresh = jax.jit(lambda x: x + 1.0)

    def download() -> float:
        result = fresh(source)  # a new array each time: JAX keeps an array's host copy
        result.block_until_ready()
        start = time.perf_counter()
        np.asarray(result)
        return time.perf_counter() - start

    download()
    downloads = statistics.median([download() for _ in range(runs)])

    small = jnp.zeros(256, jnp.float32)
    plus_one = jax.jit(lambda a: a + 1)
    floor = _median_seconds(lambda: plus_one(small).block_until_ready(), max(runs, 50))
    return DeviceRates(
        platform=source.devices().pop().platform,
        copy_gbps=2 * size / queued / 1e9,
        single_copy_gbps=2 * size / single / 1e9,
        host_to_device_gbps=size / upload / 1e9,
        device_to_host_gbps=size / downloads / 1e9,
        call_floor_seconds=floor,
    )
