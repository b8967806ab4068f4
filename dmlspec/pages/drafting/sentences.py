"""Find the normative sentences of a page and encode the ones that follow a known pattern.

Almost every "Tensor constraints" bullet reads "*A*, *B*, and *C* must have the same
*DataType*, *DimensionCount*, and *Sizes*."; those become one constraint per member. Field
descriptions hold the rest ("must", "cannot", ranges); the drafter lists each as not yet
encoded unless a pattern here encodes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "SameMembers",
    "normative_sentences",
    "parse_same_members",
    "parse_value_range",
    "split_sentences",
]

_NORMATIVE = re.compile(
    r"\b(must|cannot|can't|can not|may not|may only|should|shall|is required|are required|"
    r"required to|only be|only supported|not supported|is not allowed|ranging|in the range|"
    r"at least|at most|no greater than|no larger than|no less than|greater than|less than|"
    r"equal to|must match|has to|needs to|is expected|are expected|is invalid|undefined)\b",
    re.IGNORECASE,
)
_NAME = r"(?:\*(\w+)\*|`(\w+)`)"
_SAME = re.compile(
    rf"^(?P<names>{_NAME}(?:,?\s+(?:and\s+)?{_NAME})*),?\s+must have the same\s+"
    rf"(?P<members>{_NAME}(?:,?\s+(?:and\s+)?{_NAME})*)\.?$"
)
_NAMES = re.compile(_NAME)
_RANGE = re.compile(
    r"must be in the range\s+`?\[(?P<low>[^,\]]+),\s*(?P<high>[^\])]+)(?P<close>[\])])`?",
    re.IGNORECASE,
)
_POSITIVE = re.compile(r"^This value must be greater than 0\.?$")


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph (code spans and decimals kept whole); markup as written."""
    parts: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        if not flat or flat.startswith(("Type:", "|", "```")):
            continue
        pieces = re.split(r"(?<=[.!?])\s+(?=[A-Z*`_\[])", flat)
        parts += [p.strip() for p in pieces if p.strip()]
    return parts


def normative_sentences(text: str) -> list[str]:
    return [s for s in split_sentences(text) if _NORMATIVE.search(s)]


@dataclass(frozen=True)
class SameMembers:
    """ "A, B and C must have the same M1 and M2"."""

    tensors: tuple[str, ...]
    members: tuple[str, ...]


def _names(text: str) -> tuple[str, ...]:
    return tuple(a or b for a, b in _NAMES.findall(text))


def parse_same_members(sentence: str) -> SameMembers | None:
    match = _SAME.match(" ".join(sentence.split()))
    if match is None:
        return None
    members = _names(match["members"])
    if not set(members) <= {"DataType", "DimensionCount", "Sizes"}:
        return None
    return SameMembers(_names(match["names"]), members)


def parse_value_range(sentence: str) -> tuple[str, str, bool] | None:
    """(min, max, max_exclusive) for "must be in the range [a, b]" or "greater than 0"."""
    if _POSITIVE.match(sentence.strip()):
        return "1", "4294967295", False
    match = _RANGE.search(sentence)
    if match is None:
        return None
    low, high = match["low"].strip(" *`"), match["high"].strip(" *`")
    if not all(re.fullmatch(r"[\w.\s+\-*]+", bound) for bound in (low, high)):
        return None
    return low, high.replace("*", ""), match["close"] == ")"
