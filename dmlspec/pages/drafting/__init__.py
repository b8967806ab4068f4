"""`dmlspec draft`: write specs from the DirectML reference pages.

How hand work and re-drafting coexist: every spec says its `status`. A spec the drafter
writes is `drafted`; re-running the drafter rewrites drafted specs (so improvements to the
drafter reach them) and never touches a `curated` one. Curating a spec means editing it by
hand and setting `"status": "curated"` in the same change. `dmlspec check-docs` then keeps
every spec, drafted or curated, equal to its page cell by cell, and `draft --check` lists
drafted specs that a re-draft would change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...limits import cut
from ...model import CommonSpec
from ...safeio import UnsafePath, read_text, write_file
from ..read import DocPageError
from .header import load_header_facts
from .operator import DraftContext, OperatorDraft, draft_operator
from .sources import enum_from_page, history_levels, manifest_commits

__all__ = ["DraftAction", "draft_catalog", "operator_pages"]

DOCS_SUBDIR = Path("reference/directml-docs")
HEADER_FACTS = Path("sources/directml_schema.json")  # relative to the spec folder


@dataclass(frozen=True)
class DraftAction:
    name: str
    action: str  # "wrote", "unchanged", "kept (curated)", "would write", "failed"
    path: str
    problems: tuple[str, ...] = ()


def operator_pages(docs_dir: Path) -> list[Path]:
    """Every operator desc page of the reference folder (not DML_OPERATOR_DESC itself)."""
    folder = docs_dir / DOCS_SUBDIR
    pages = [
        p
        for p in sorted(folder.glob("ns-directml-dml_*_desc.md"))
        if p.name.endswith("_operator_desc.md")
        or p.name == "ns-directml-dml_reverse_subsequences_desc.md"
    ]
    return [p for p in pages if p.name != "ns-directml-dml_operator_desc.md"]


def _render(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=2, ensure_ascii=False) + "\n"


def _cited_pages(spec_dir: Path) -> dict[str, str]:
    """Page file name -> the operator name of the spec that cites it (read raw: a broken spec
    must not stop the drafter that may repair it)."""
    cited: dict[str, str] = {}
    for path in sorted(spec_dir.glob("*.json")):
        try:
            data = json.loads(read_text(path))
            for page in data.get("doc_pages", []):
                cited[Path(page["path"]).name] = str(data["name"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return cited


def draft_catalog(
    common: CommonSpec,
    docs_dir: Path,
    spec_dir: Path,
    only: set[str] | None = None,
    check: bool = False,
) -> list[DraftAction]:
    """Draft every operator page; pages a spec already cites keep that spec's name."""
    folder = docs_dir / DOCS_SUBDIR
    context = DraftContext(
        docs_dir=docs_dir,
        commits=manifest_commits(folder),
        history_levels=history_levels(folder / "dml-feature-level-history.md"),
        enums=frozenset(e.name for e in common.enums),
        data_types=frozenset(d.name for d in common.data_types if d.kind != "unknown"),
        level_ranks={level.name: level.rank for level in common.feature_levels},
        header=load_header_facts(spec_dir.parent / HEADER_FACTS),
    )
    cited = _cited_pages(spec_dir)
    actions = []
    for page in operator_pages(docs_dir):
        existing = cited.get(page.name)
        try:
            draft = draft_operator(page, context)
        except (OSError, DocPageError) as error:
            actions.append(DraftAction(page.name, "failed", str(page), (str(error),)))
            continue
        if only is not None and draft.name not in only:
            continue
        target = spec_dir / f"{draft.name.lower()}.json"
        if existing is not None and existing != draft.name:
            # e.g. the SCATTER page belongs to the SCATTER_ELEMENTS spec (an alias)
            target = spec_dir / f"{existing.lower()}.json"
            actions.append(DraftAction(existing, "kept (curated)", str(target)))
            continue
        actions.append(_write(draft, target, check))
    return actions


def _write(draft: OperatorDraft, target: Path, check: bool) -> DraftAction:
    text = _render(draft.spec)
    problems = tuple(draft.errata + draft.problems)
    # A link at the spec's place is replaced by the drafted file, never read or written through.
    if target.exists() and not target.is_symlink():
        try:
            current = read_text(target)
            status = json.loads(current).get("status")
        except (OSError, UnsafePath, ValueError, AttributeError) as error:
            reason = f"{target} is not a spec dmlspec can read ({cut(str(error))})"
            return DraftAction(draft.name, "failed", str(target), (reason,))
        if status != "drafted":
            return DraftAction(draft.name, "kept (curated)", str(target), problems)
        if current == text:
            return DraftAction(draft.name, "unchanged", str(target), problems)
    if check:
        return DraftAction(draft.name, "would write", str(target), problems)
    write_file(target.parent, target.name, text.encode("utf-8"))
    return DraftAction(draft.name, "wrote", str(target), problems)


def draft_enum_entries(
    docs_dir: Path, names: set[str]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(doc_pages entry, enums entry) for each enumeration in `names` that has a page."""
    folder = docs_dir / DOCS_SUBDIR
    commits = manifest_commits(folder)
    found = []
    for name in sorted(names):
        page = folder / f"ne-directml-{name.lower()}.md"
        if not page.is_file():
            continue
        page_id = "enum-" + name.removeprefix("DML_").lower().replace("_", "-")
        doc_page = {
            "id": page_id,
            "path": str(DOCS_SUBDIR / page.name),
            "language": "en-US",
            "translation": "original",
            "commit": commits.get(page.name, ""),
        }
        found.append((doc_page, enum_from_page(page, page_id)))
    return found
