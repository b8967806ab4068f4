"""The findings of a docs check: `Finding`, one comparison of what a page says with what a spec
says (or why the spec departs from it), and `DocsReport`, every finding and page of a run,
rendered as text or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DocsReport", "Finding"]


@dataclass(frozen=True)
class Finding:
    """One comparison: `expected` is what the page says, `actual` what the spec says."""

    subject: str  # "SCATTER_ND" or "common"
    page: str  # doc page id
    what: str
    expected: str
    actual: str
    explanation: str | None = None  # the spec's own record of why it departs from the page

    @property
    def ok(self) -> bool:
        return self.expected == self.actual or self.explanation is not None

    @property
    def explained(self) -> bool:
        return self.expected != self.actual and self.explanation is not None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "subject": self.subject,
            "page": self.page,
            "what": self.what,
            "page_says": self.expected,
            "spec_says": self.actual,
            "ok": self.ok,
        }
        if self.explained:
            data["explained_by"] = self.explanation
        return data


@dataclass
class DocsReport:
    findings: list[Finding] = field(default_factory=list)
    pages: list[tuple[str, str, str]] = field(default_factory=list)  # subject, page id, path

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def compare(
        self,
        subject: str,
        page: str,
        what: str,
        expected: object,
        actual: object,
        explanation: str | None = None,
    ) -> None:
        """`explanation` is kept only where the two differ: a departure the spec records."""
        expected_text, actual_text = _text(expected), _text(actual)
        kept = explanation if expected_text != actual_text else None
        self.findings.append(Finding(subject, page, what, expected_text, actual_text, kept))

    def render(self) -> str:
        lines = [f"{'subject':<20} {'page':<22} {'checks':>6}  differences"]
        for subject, page, _ in self.pages:
            mine = [f for f in self.findings if f.subject == subject and f.page == page]
            bad = sum(not f.ok for f in mine)
            lines.append(f"{subject:<20} {page:<22} {len(mine):>6}  {bad}")
        mismatches = [f for f in self.findings if not f.ok]
        for finding in mismatches:
            lines.append(
                f"DIFFERENCE {finding.subject} [{finding.page}] {finding.what}: "
                f"page says {finding.expected}; spec says {finding.actual}"
            )
        explained = sum(f.explained for f in self.findings)
        verdict = (
            "the specs match the pages" if not mismatches else f"{len(mismatches)} differences"
        )
        lines.append(
            f"{len(self.findings)} checks on {len(self.pages)} pages: {verdict}"
            f" ({explained} explained departures: errata and sentences listed as not yet encoded)"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "pages": [{"subject": s, "page": p, "path": path} for s, p, path in self.pages],
            "findings": [f.to_json() for f in self.findings],
        }


def _text(value: object) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return "[" + ", ".join(_text(v) for v in items) + "]"
    return str(value)
