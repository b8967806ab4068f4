"""Strict JSON reading: duplicate keys are errors, located by JSON pointer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["JsonReadError", "pointer", "read_json_file", "read_json_text"]


class JsonReadError(ValueError):
    """Unreadable or malformed JSON; `problems` are (pointer, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"at {p}: {m}" if p else m for p, m in problems))


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
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", []):
            problems.append((pointer([*path, key]), f"duplicate key {key!r}"))
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
    problems: list[tuple[str, str]] = []
    data = _plain(raw, [], problems)
    if problems:
        raise JsonReadError(problems)
    return data


def read_json_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise JsonReadError([("", f"cannot read file: {error}")]) from None
    return read_json_text(text)
