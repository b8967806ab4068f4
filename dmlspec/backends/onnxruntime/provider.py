"""Which onnxruntime execution provider the backend's sessions run on, and with what options.

`--backend onnxruntime` runs onnxruntime's CPU provider; `onnxruntime:PROVIDER` names another
(`DmlExecutionProvider` from the onnxruntime-directml package runs the suites on DirectML
itself, `CUDAExecutionProvider` on CUDA), and `onnxruntime:PROVIDER,KEY=VALUE,...` passes it
provider options (onnxruntime's own keys, e.g. `device_id=1`). A provider other than the CPU's
runs without the CPU fallback: a node it cannot take fails the session (reported as
unsupported), so a passing case is one the named provider ran.

The sessions are cached per provider; `using(provider)` sets the one that the graph builders'
sessions are made for while a case runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ...errors import Unsupported
from ...limits import cut, quote

__all__ = [
    "CPU",
    "Provider",
    "ProviderError",
    "current",
    "new_session",
    "opened",
    "parse_provider",
    "using",
]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
DIRECTML_HINT = "for DirectML on Windows: pip install onnxruntime-directml"


class ProviderError(ValueError):
    """A provider that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Provider:
    name: str
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ProviderError(
                f"onnxruntime execution provider names are letters, digits and _ "
                f"(e.g. CPUExecutionProvider); got {quote(self.name)}"
            )

    @property
    def is_cpu(self) -> bool:
        return self.name == "CPUExecutionProvider"

    @property
    def spelled(self) -> str:
        """As the backend name writes it: PROVIDER[,KEY=VALUE...]."""
        return ",".join([self.name, *(f"{k}={v}" for k, v in self.options)])


CPU = Provider("CPUExecutionProvider")


def parse_provider(text: str) -> Provider:
    """`PROVIDER[,KEY=VALUE...]` as a Provider the installed onnxruntime has; ProviderError,
    naming the providers it has, otherwise."""
    name, *pairs = text.split(",")
    options: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not _KEY.fullmatch(key):
            raise ProviderError(
                f"onnxruntime provider options are KEY=VALUE after the provider's name "
                f"(onnxruntime:PROVIDER,KEY=VALUE,...); got {quote(pair)}"
            )
        if key in options:
            raise ProviderError(f"onnxruntime provider option {quote(key)} is given twice")
        options[key] = value
    provider = Provider(name, tuple(sorted(options.items())))
    check_available(provider)
    return provider


def check_available(provider: Provider) -> None:
    import onnxruntime

    available = onnxruntime.get_available_providers()
    if provider.name not in available:
        raise ProviderError(
            f"onnxruntime {onnxruntime.__version__} has no execution provider "
            f"{quote(provider.name)}; it has {', '.join(available)} ({DIRECTML_HINT})"
        )


current: ContextVar[Provider] = ContextVar("dmlspec_onnxruntime_provider", default=CPU)


@contextlib.contextmanager
def using(provider: Provider) -> Iterator[None]:
    """Sessions made inside run on `provider`."""
    token = current.set(provider)
    try:
        yield
    finally:
        current.reset(token)


def new_session(model: bytes, options: Any, provider: Provider) -> Any:
    """An InferenceSession of `model` on `provider` alone (no CPU fallback unless it is the CPU
    provider)."""
    import onnxruntime

    if not provider.is_cpu:
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    if provider.name == "DmlExecutionProvider":
        # onnxruntime's DirectML page: the provider supports neither memory patterns nor
        # parallel execution, and sessions made for it must turn both off.
        options.enable_mem_pattern = False
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    providers: list[Any] = [(provider.name, dict(provider.options))]
    return onnxruntime.InferenceSession(model, options, providers=providers)


def opened(make: Callable[..., Any], key: Any, what: str) -> Any:
    """`make(key, provider)`: the session of `key` on the current provider. onnxruntime's own
    errors making it are those of the graph (NotImplemented and the rest, raised as they are)
    on the CPU provider; on another provider, one that cannot take a node, reported as
    Unsupported naming the provider."""
    provider = current.get()
    if provider.is_cpu:
        return make(key, provider)
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, NotImplemented

    try:
        return make(key, provider)
    except (Fail, NotImplemented) as error:
        raise Unsupported(f"{provider.name} cannot run {what} here: {cut(str(error))}") from None
