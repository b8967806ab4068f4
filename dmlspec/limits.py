"""The limits dmlspec puts on what untrusted input may make it read, allocate or wait for.

Each limit has a default and an environment variable that changes it (the CLI's flags, where
there are any, win over the variable). Input is checked against a limit before anything is
computed or allocated from it, so a hostile file is rejected in a moment and a few megabytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "CASE_TIMEOUT",
    "LIMITS",
    "MAX_ALTERNATIVES",
    "MAX_BUFFER_BYTES",
    "MAX_DIMENSIONS",
    "MAX_DISPATCH_BYTES",
    "MAX_ELEMENTS",
    "MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "Limit",
    "LimitError",
    "cut",
    "quote",
]


class LimitError(ValueError):
    """An environment variable sets a limit to something that is not a positive number."""


@dataclass(frozen=True)
class Limit:
    """One limit: its environment variable, default and what it bounds."""

    variable: str
    default: float
    what: str

    def value(self) -> float:
        """The limit in force: the environment variable when set, else the default."""
        raw = os.environ.get(self.variable)
        if raw is None or raw == "":
            return self.default
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise LimitError(
                f"{self.variable} must be a positive number ({self.what}); got {quote(raw)}"
            )
        return value

    def __int__(self) -> int:
        return int(self.value())


MAX_FILE_BYTES = Limit(
    "DMLSPEC_MAX_FILE_BYTES", 64 << 20, "bytes read from one JSON file, doc page or .npy file"
)
MAX_ELEMENTS = Limit("DMLSPEC_MAX_ELEMENTS", 1 << 28, "elements of one dispatch resource")
MAX_BUFFER_BYTES = Limit("DMLSPEC_MAX_BUFFER_BYTES", 1 << 30, "bytes of one dispatch resource")
MAX_DISPATCH_BYTES = Limit(
    "DMLSPEC_MAX_DISPATCH_BYTES", 2 << 30, "bytes of all resources of one dispatch model together"
)
MAX_DIMENSIONS = Limit(
    "DMLSPEC_MAX_DIMENSIONS", 64, "entries of a Sizes or Strides list (DirectML allows 8)"
)
MAX_JSON_DEPTH = Limit("DMLSPEC_MAX_JSON_DEPTH", 200, "nesting depth of a JSON document")
MAX_ALTERNATIVES = Limit(
    "DMLSPEC_MAX_ALTERNATIVES", 16, "other correct results one vector output may list"
)
CASE_TIMEOUT = Limit(
    "DMLSPEC_CASE_TIMEOUT", 60.0, "seconds a backend may take for one conformance case"
)
LIMITS = (
    MAX_FILE_BYTES,
    MAX_ELEMENTS,
    MAX_BUFFER_BYTES,
    MAX_DISPATCH_BYTES,
    MAX_DIMENSIONS,
    MAX_JSON_DEPTH,
    MAX_ALTERNATIVES,
    CASE_TIMEOUT,
)

QUOTE_CHARS = 80


def cut(text: str, limit: int = 300) -> str:
    """A message (not a value: no quotes added) cut to about `limit` characters, one line."""
    line = " ".join(text.split("\n"))
    return line if len(line) <= limit else f"{line[:limit]}... ({len(line)} characters)"


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """`repr(value)` cut to about `limit` characters: what messages quote from input.

    A 50 MB string in a file must not become 50 MB of error message: strings are cut and
    containers rendered a few items deep before anything is joined."""
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    text = _short_repr(value, limit, depth=3)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text)} characters)"
    return text


def _short_repr(value: object, limit: int, depth: int) -> str:
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    if isinstance(value, list | tuple | dict):
        if depth == 0 or len(value) > 16:
            return f"<{type(value).__name__} of {len(value)} items>"
        if isinstance(value, dict):
            items = [
                f"{_short_repr(k, limit, 0)}: {_short_repr(v, limit, depth - 1)}"
                for k, v in value.items()
            ]
            return "{" + ", ".join(items) + "}"
        inner = ", ".join(_short_repr(v, limit, depth - 1) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    try:
        return repr(value)
    except ValueError:  # an int too long to print (sys.get_int_max_str_digits)
        return f"<{type(value).__name__} too large to print>"
