"""Run a backend in its own process, so that it cannot end, hang or fake the conformance run.

`IsolatedBackend` keeps the backend contract (name, feature_level, validates,
expected_failures, run) and forwards each `run` to a child process (`python -m
dmlspec.conformance.isolation`) that loaded the backend. The child's death, whatever the cause
(`os._exit(0)`, a signal, a segfault), and a case that takes longer than the per-case limit
(its process group is killed) become exceptions of that one case: the case fails with the
reason, and the next case starts a fresh child. After `GIVE_UP_AFTER` such cases in a row the
backend is not restarted again and every further case fails at once.

The two processes talk over a pair of pipes (not stdout, which the backend may print to):
frames of a length-prefixed JSON header followed by the arrays as .npy bytes. Nothing is
pickled; the parent bounds every length it is told before reading it.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import numpy as np

from ..backends import BackendLoadError
from ..backends.contract import execution_flags
from ..errors import InvalidOperator, Unsupported
from ..limits import CASE_TIMEOUT, MAX_BUFFER_BYTES, quote
from .import_path import child_path

__all__ = ["BackendCrashed", "BackendError", "CaseTimeout", "IsolatedBackend"]

GIVE_UP_AFTER = 3  # crashes or timeouts in a row
START_TIMEOUT = 120.0  # seconds to import and construct the backend
_LENGTH = struct.Struct(">Q")
_MAX_HEADER = 16 << 20


class BackendError(Exception):
    """An exception the backend raised in its own process; the class is named after it."""


class BackendCrashed(Exception):
    """The backend's process ended while it ran a case."""


class CaseTimeout(Exception):
    """The backend took longer than the per-case limit; its process was killed."""


class _Closed(Exception):
    """The other end of the pipe is gone."""


# ml_dtypes' types that np.save writes as raw bytes ('|V1'): sent as UINT8 and viewed back.
_VIEWED = ("int4", "uint4")


def _frame(header: dict[str, Any], arrays: Mapping[str, Any]) -> bytes:
    """A header and arrays; a value may be a list of arrays (a tensor-array field)."""
    entries, blobs = [], []
    for name, value in arrays.items():
        listed = isinstance(value, list | tuple)
        for index, array in enumerate(value) if listed else [(None, value)]:
            buffer = io.BytesIO()
            array = np.asarray(array)
            viewed = array.dtype.name if array.dtype.name in _VIEWED else None
            np.save(buffer, array.view(np.uint8) if viewed else array, allow_pickle=False)
            blobs.append(buffer.getvalue())
            entries.append([name, index, len(blobs[-1]), viewed])
    text = json.dumps({**header, "arrays": entries}).encode()
    return b"".join([_LENGTH.pack(len(text)), text, *blobs])


def _arrays(header: dict[str, Any], read: Any) -> dict[str, Any]:
    arrays: dict[str, Any] = {}
    for name, index, size, *rest in header.get("arrays", []):
        viewed = rest[0] if rest else None
        if not isinstance(size, int) or not 0 <= size <= int(MAX_BUFFER_BYTES) + 4096:
            raise _Closed(f"an array of {quote(size)} bytes, over the limit")
        array = np.load(io.BytesIO(read(size)), allow_pickle=False)
        if viewed in _VIEWED:
            array = array.view(np.dtype(viewed))
        if index is None:
            arrays[str(name)] = array
        else:
            arrays.setdefault(str(name), []).append(array)
    return arrays


# -- The parent's side ------------------------------------------------------------------------


class IsolatedBackend:
    """The backend `spec` (a name or module:attr), run in a child process."""

    def __init__(self, spec: str, case_timeout: float | None = None) -> None:
        self._prepare(spec, case_timeout)
        self._accept(self._start())

    @classmethod
    def starting(
        cls, spec: str, case_timeout: float | None = None
    ) -> Callable[[], IsolatedBackend]:
        """Start the backend's process now; the function returned waits until it is ready (a
        pytest worker starts it before collecting the suites, which takes about as long) and
        raises BackendLoadError as the constructor would."""
        backend = cls.__new__(cls)
        backend._prepare(spec, case_timeout)
        backend._spawn()

        def ready() -> IsolatedBackend:
            backend._accept(backend._handshake())
            return backend

        return ready

    def _prepare(self, spec: str, case_timeout: float | None) -> None:
        self.spec = spec
        self.case_timeout = float(CASE_TIMEOUT.value() if case_timeout is None else case_timeout)
        self._process: subprocess.Popen[bytes] | None = None
        self._send: BinaryIO | None = None
        self._receive = -1
        self._failures_in_a_row = 0

    def _accept(self, info: dict[str, Any]) -> None:
        self.name: str = info["name"]
        self.feature_level: str = info["feature_level"]
        self.validates: bool = info["validates"]
        self.expected_failures: Any = info["expected_failures"]
        self.execution_flags: tuple[str, ...] = tuple(info.get("execution_flags", ()))

    def _start(self) -> dict[str, Any]:
        self._spawn()
        return self._handshake()

    def _spawn(self) -> None:
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _BOOTSTRAP,
                str(from_parent),
                str(to_parent),
                self.spec,
                json.dumps(child_path(sys.path, os.getcwd())),
            ],
            env={**os.environ, "PYTHONSAFEPATH": "1"},  # see import_path.py
            pass_fds=(from_parent, to_parent),
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: a timeout kills all it started
        )
        os.close(from_parent)
        os.close(to_parent)
        self._send = os.fdopen(to_child, "wb")
        self._receive = from_child
        _LIVE.add(self)

    def _handshake(self) -> dict[str, Any]:
        """The started process's ready message (its name, level, ...)."""
        try:
            header, _ = self._read(START_TIMEOUT)
        except (_Closed, TimeoutError, OSError, ValueError) as error:
            ended = self._stop(wait=5.0)
            raise BackendLoadError(
                f"backend {quote(self.spec)} did not start: {ended or error}"
            ) from None
        if header.get("kind") != "ready":
            self._stop()
            raise BackendLoadError(str(header.get("message", "the backend did not start")))
        return header

    def _read(self, timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
        deadline = time.monotonic() + timeout

        def read(size: int) -> bytes:
            chunks, left = [], size
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([self._receive], [], [], remaining)[0]:
                    raise TimeoutError
                chunk = os.read(self._receive, min(left, 1 << 20))
                if not chunk:
                    raise _Closed("the pipe closed")
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)

        (length,) = _LENGTH.unpack(read(_LENGTH.size))
        if length > _MAX_HEADER:
            raise _Closed(f"a header of {length} bytes, over the limit")
        header = json.loads(read(length))
        if not isinstance(header, dict):
            raise _Closed("a malformed header")
        return header, _arrays(header, read)

    def _stop(self, wait: float = 0.0) -> str:
        """Kill the child's process group (given `wait` seconds to end by itself, as it does
        when its pipe closed); say how it ended."""
        process, self._process = self._process, None
        if self._send is not None:
            with contextlib.suppress(OSError):
                self._send.close()
            self._send = None
        if self._receive >= 0:
            os.close(self._receive)
            self._receive = -1
        if process is None:
            return ""
        exited = _exited(process.pid, wait)
        # Kill the group (the child, or what it started and left behind) while the child is
        # not yet reaped: until then its id cannot name another process group.
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        code = process.wait()
        if not exited:
            return ""
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"its process was killed by {name}"
        return f"its process exited with code {code}"

    def close(self) -> None:
        self._stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if self._failures_in_a_row >= GIVE_UP_AFTER:
            raise BackendCrashed(
                f"not restarted after {GIVE_UP_AFTER} cases in a row crashed or timed out"
            )
        if self._process is None:
            try:
                self._start()
            except BackendLoadError as error:
                self._failures_in_a_row += 1
                raise BackendCrashed(f"the backend could not be restarted: {error}") from None
        assert self._send is not None
        request = {"kind": "run", "operator": operator, "feature_level": self.feature_level}
        try:
            self._send.write(_frame(request, inputs))
            self._send.flush()
            header, arrays = self._read(self.case_timeout)
        except TimeoutError:
            self._stop()
            self._failures_in_a_row += 1
            raise CaseTimeout(
                f"the backend did not finish this case within {self.case_timeout:g} s (the "
                f"per-case limit: --case-timeout or {CASE_TIMEOUT.variable}); its process "
                "was killed"
            ) from None
        except (_Closed, OSError, ValueError) as error:
            ended = self._stop(wait=5.0) or f"the pipe broke ({error})"
            self._failures_in_a_row += 1
            raise BackendCrashed(
                f"the backend's process ended while running this case: {ended}"
            ) from None
        self._failures_in_a_row = 0
        kind = header.get("kind")
        message = str(header.get("message", ""))
        if kind == "outputs":
            return arrays
        if kind == "unsupported":
            raise Unsupported(message)
        if kind == "invalid":
            raise InvalidOperator(message, [str(c) for c in header.get("constraint_ids", [])])
        if kind == "interrupted":
            raise KeyboardInterrupt("the backend raised KeyboardInterrupt")
        raise _error_class(str(header.get("type", "Exception")))(message)


def _exited(pid: int, wait: float) -> bool:
    """Whether the child `pid` has ended (waiting up to `wait` seconds), without reaping it."""
    deadline = time.monotonic() + wait
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


_LIVE: weakref.WeakSet[IsolatedBackend] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """No backend process outlives the run (one stuck in a case ignores its closed pipe)."""
    for backend in list(_LIVE):
        backend.close()


_CLASSES: dict[str, type[BackendError]] = {}


def _error_class(name: str) -> type[BackendError]:
    """A BackendError subclass named as the backend's exception was (for messages)."""
    name = name if name.isidentifier() and len(name) <= 60 else "Exception"
    if name not in _CLASSES:
        _CLASSES[name] = type(name, (BackendError,), {"__module__": "backend"})
    return _CLASSES[name]


# -- The child's side -------------------------------------------------------------------------


def _expected_failures_json(backend: Any) -> Any:
    listed = getattr(backend, "expected_failures", None)
    if listed is None:
        return None
    if isinstance(listed, str | os.PathLike):
        return os.fspath(listed)
    try:
        return json.loads(json.dumps(list(listed)))
    except (TypeError, ValueError):
        return quote(listed)  # the parent reports it as malformed


def _said(error: BaseException) -> str:
    """What an exception says, cut to a readable length."""
    text = str(error)
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text)} characters)"


def _serve(receive: BinaryIO, send: BinaryIO, spec: str) -> None:
    from ..backends import load_backend

    def reply(header: dict[str, Any], arrays: Mapping[str, Any] | None = None) -> None:
        send.write(_frame(header, arrays or {}))
        send.flush()

    try:
        backend = load_backend(spec)
    except BackendLoadError as error:
        reply({"kind": "error", "message": str(error)})
        return
    # The specs, which dmlspec's reference and validators read, are loaded before the first
    # case's clock starts: their loading is the process's start, not the case's time.
    from ..reference.fields import catalog

    catalog()
    reply(
        {
            "kind": "ready",
            "name": backend.name,
            "feature_level": backend.feature_level,
            "validates": bool(getattr(backend, "validates", False)),
            "expected_failures": _expected_failures_json(backend),
            "execution_flags": list(execution_flags(backend)),
        }
    )

    def read(size: int) -> bytes:
        data = receive.read(size)
        if len(data) != size:
            raise _Closed
        return data

    while True:
        try:
            (length,) = _LENGTH.unpack(read(_LENGTH.size))
        except _Closed:
            return
        request = json.loads(read(length))
        inputs = _arrays(request, read)
        if request["feature_level"] != backend.feature_level:
            with contextlib.suppress(AttributeError):
                backend.feature_level = request["feature_level"]
        try:
            outputs = backend.run(request["operator"], inputs)
            if not isinstance(outputs, Mapping):
                raise TypeError(f"run() returned {type(outputs).__name__}, not outputs by name")
            frame = _frame({"kind": "outputs"}, {str(k): v for k, v in outputs.items()})
        except Unsupported as reason:
            frame = _frame({"kind": "unsupported", "message": _said(reason)}, {})
        except InvalidOperator as error:
            ids = [str(c) for c in error.constraint_ids]
            frame = _frame({"kind": "invalid", "message": _said(error), "constraint_ids": ids}, {})
        except KeyboardInterrupt:  # the backend's own: the run stops, told without a traceback
            frame = _frame({"kind": "interrupted"}, {})
        except (Exception, SystemExit) as error:
            frame = _frame(
                {"kind": "error", "type": type(error).__name__, "message": _said(error)}, {}
            )
        send.write(frame)
        send.flush()


# The child sets its import path before it imports anything of dmlspec's (see import_path.py).
_BOOTSTRAP = (
    "import json, runpy, sys; sys.path[:] = json.loads(sys.argv[4]); "
    f"runpy.run_module({__name__!r}, run_name='__main__')"
)


def main(argv: list[str]) -> int:
    receive_fd, send_fd, spec, path = argv
    sys.path[:] = json.loads(path)
    with os.fdopen(int(receive_fd), "rb") as receive, os.fdopen(int(send_fd), "wb") as send:
        _serve(receive, send, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
