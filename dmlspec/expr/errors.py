"""The one exception type of the expression language."""

from __future__ import annotations

from ..limits import quote


class ExpressionError(ValueError):
    """A parse, type or evaluation error, pointing at a column of the expression text."""

    def __init__(self, message: str, source: str, col: int) -> None:
        self.message = message
        self.source = source
        self.col = col
        super().__init__(f"{message} (in {quote(source, 120)} at column {col + 1})")


class Absent(LookupError):
    """Raised while evaluating when an optional value without a default is not given.

    A constraint whose expression reads an absent optional value does not apply.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(name)
