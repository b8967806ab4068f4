"""The DirectML facts some expression functions read, as a protocol.

The loaded common spec implements it (element sizes, NumPy types, feature-level order); the
function library (`functions`, `cells`) and the evaluator only read it, so no data-type table
is typed in the expression language.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Facts"]


class Facts(Protocol):
    """DirectML facts some functions need; implemented by the loaded common spec."""

    def element_bits(self, data_type: str) -> int: ...

    def numpy_dtype(self, data_type: str) -> str | None: ...

    def level_rank(self, level: str) -> int: ...
