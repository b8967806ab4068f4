"""Strict JSON reading: duplicate keys are errors, located by JSON pointer; files are read only
when regular and within `DMLSPEC_MAX_FILE_BYTES`, documents nested at most
`DMLSPEC_MAX_JSON_DEPTH` deep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .limits import MAX_JSON_DEPTH, quote
from .safeio import UnsafePath, read_text

__all__ = ["JsonReadError", "pointer", "read_json_file", "read_json_text"]


class JsonReadError(ValueError):
    """Unreadable or malformed JSON; `problems` are (pointer, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        shown = [f"at {_cut(p)}: {m}" if p else m for p, m in problems[:10]]
        if len(problems) > 10:
            shown.append(f"and {len(problems) - 10} more")
        super().__init__("; ".join(shown))


def _cut(text: str, limit: int = 100) -> str:
    """A pointer into hostile input, cut to a readable length."""
    return text if len(text) <= limit else f"{text[:limit]}..."


class _Object(dict[str, Any]):
    duplicates: list[str]


def _object_hook(pairs: list[tuple[str, Any]]) -> _Object:
    result = _Object()
    result.duplicates = []
    for key, value in pairs:
        if key in result and key not in result.duplicates:
            result.duplicates.append(key)
        result[key] = value
    return result


def pointer(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """RFC 6901 JSON pointer for a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _plain(value: Any, path: list[str | int], problems: list[tuple[str, str]]) -> Any:
    if isinstance(value, dict | list) and len(path) >= int(MAX_JSON_DEPTH):
        raise JsonReadError([(pointer(path), _too_deep())])
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", []):
            problems.append((pointer([*path, key]), f"duplicate key {quote(key)}"))
        return {k: _plain(v, [*path, k], problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, [*path, i], problems) for i, v in enumerate(value)]
    return value


def read_json_text(text: str) -> Any:
    """Parse JSON text; raise `JsonReadError` for syntax errors and duplicate keys."""
    try:
        raw = json.loads(text, object_pairs_hook=_object_hook)
    except json.JSONDecodeError as error:
        raise JsonReadError(
            [("", f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}")]
        ) from None
    except RecursionError:  # deeper than Python's own decoder goes
        raise JsonReadError([("", _too_deep())]) from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise JsonReadError([("", f"invalid JSON: {error}")]) from None
    problems: list[tuple[str, str]] = []
    data = _plain(raw, [], problems)
    if problems:
        raise JsonReadError(problems)
    return data


def _too_deep() -> str:
    limit = int(MAX_JSON_DEPTH)
    return f"nested more than {limit} deep (set {MAX_JSON_DEPTH.variable} to raise the limit)"


def read_json_file(path: Path, limit: int | None = None) -> Any:
    """A regular file's JSON (see `read_json_text`), at most `limit` bytes (default:
    `DMLSPEC_MAX_FILE_BYTES`)."""
    try:
        text = read_text(path, limit)
    except UnsafePath as error:
        raise JsonReadError([("", str(error))]) from None
    except OSError as error:
        raise JsonReadError([("", f"cannot read file: {error.strerror or error}")]) from None
    return read_json_text(text)
