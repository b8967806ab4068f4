"""What XLA compiled a call into, in a line: the evidence that says whether a slow kernel is
its formulation (more passes over memory than the operation needs, intermediates written
out, a wider accumulator) or XLA's CPU code for one pass.

The entry computation of optimized HLO lists the program's kernels in order: each fusion,
copy or library call is one pass that writes its result to memory."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["HloSummary", "summarize"]

# Instructions that move no data: views, constants, tuple plumbing.
_FREE = {"parameter", "constant", "bitcast", "get-tuple-element", "tuple"}
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2}
_BYTES |= {"s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8}
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[\w.-]+) = (?P<type>.+?) (?P<op>[a-z][\w-]*)\("
)
_ARRAY = re.compile(r"\b([a-z]+\d*)\[([\d,]*)\]")


@dataclass(frozen=True)
class HloSummary:
    kernels: tuple[tuple[str, str], ...]  # (instruction, result type) per pass, in order
    bytes_written: int  # by those passes, per call
    # Element types of every computed value, fused ones included (a wider accumulator shows).
    computed: tuple[str, ...] = ()

    def text(self, output_bytes: int) -> str:
        shown = ", ".join(f"{name} -> {kind}" for name, kind in self.kernels[:4])
        more = f" and {len(self.kernels) - 4} more" if len(self.kernels) > 4 else ""
        count = len(self.kernels)
        return (
            f"{count} pass{'es' if count != 1 else ''} over memory ({shown}{more}), writing "
            f"{_size(self.bytes_written)} per call where the output is {_size(output_bytes)}; "
            f"computing in {', '.join(self.computed)}"
        )


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _written(type_text: str) -> int:
    total = 0
    for element, dims in _ARRAY.findall(type_text):
        count = 1
        for dim in filter(None, dims.split(",")):
            count *= int(dim)
        total += count * _BYTES.get(element, 0)
    return total


def summarize(hlo_text: str) -> HloSummary:
    """The passes of the optimized HLO's entry computation (`compile().as_text()`), and the
    element types computed anywhere in the program."""
    computed: set[str] = set()
    for line in hlo_text.splitlines():
        found = _INSTRUCTION.match(line)
        if found is not None and found["op"] not in _FREE:
            computed.update(element for element, _ in _ARRAY.findall(found["type"]))
    entry = hlo_text[hlo_text.index("\nENTRY") :].split("\n}", 1)[0]
    kernels = []
    written = 0
    for line in entry.splitlines()[1:]:
        found = _INSTRUCTION.match(line)
        if found is None or found["op"] in _FREE:
            continue
        kernels.append((found["name"].split(".")[0], re.sub(r"\{[^}]*\}", "", found["type"])))
        written += _written(found["type"])
    return HloSummary(tuple(kernels), written, tuple(sorted(computed)))
