"""What every model module shares: the `Json` alias and `put`, which writes an optional key."""

from __future__ import annotations

from typing import Any

__all__ = ["Json", "put"]

Json = dict[str, Any]


def put(target: Json, key: str, value: Any) -> None:
    """Write an optional key only when it has a value (the files omit empty optional keys)."""
    if value is not None and value != ():
        target[key] = list(value) if isinstance(value, tuple) else value
