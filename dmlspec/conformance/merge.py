"""Merged reports: the shards of one run (`--shard K/N` on several machines) combined into the
report a single run would have written: results.json merged from data (every test, the cases
and checks summed, support-cell and layout hits added up, expected failures judged over every
shard), junit.xml with every shard's test cases, and report.md rendered from the merged results.

Reports of different specs, backends, feature levels or profiles are refused, as are reports
that share a case (overlapping shards, or one report given twice).
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..limits import quote
from ..loading import default_spec_dir

__all__ = [
    "MergeError",
    "merge_junit",
    "merge_reports",
    "merge_results",
    "read_results",
    "spec_digest",
]

# What a report must share with the others to be merged, and what to call a difference.
IDENTITY = (
    ("spec", "specs"),
    ("backend", "backends"),
    ("feature_level", "feature levels"),
    ("profile", "profiles"),
)


class MergeError(ValueError):
    """Reports that cannot be read or merged."""


def spec_digest(spec_dir: Path | None = None) -> str:
    """A digest of the spec files (line ends normalised, so a Windows checkout agrees): two
    reports with the same digest tested the same specs."""
    root = spec_dir or default_spec_dir()
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.json")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return "sha256:" + digest.hexdigest()[:16]


def read_results(folder: Path) -> dict[str, Any]:
    file = folder / "results.json"
    try:
        results = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise MergeError(f"{file}: cannot read a conformance report ({reason})") from None
    if not isinstance(results, dict) or not isinstance(results.get("tests"), list):
        raise MergeError(f"{file}: not the results.json of `dmlspec conformance`")
    return results


def merge_results(reports: Sequence[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """One results.json from the reports' (folder, results), in shard order."""
    if not reports:
        raise MergeError("no reports to merge")
    reports = sorted(reports, key=lambda r: _shard_order(r[1]))
    first_folder, first = reports[0]
    for folder, results in reports[1:]:
        for key, what in IDENTITY:
            if results.get(key) != first.get(key):
                raise MergeError(
                    f"{folder}/results.json has {key} {quote(results.get(key))}, "
                    f"{first_folder}/results.json {quote(first.get(key))}: reports of different "
                    f"{what} cannot be merged"
                )
    owner: dict[str, Path] = {}
    for folder, results in reports:
        for test in results["tests"]:
            if test["nodeid"] in owner:
                raise MergeError(
                    f"case {test['nodeid']} is in both {owner[test['nodeid']]} and {folder} "
                    "(overlapping shards, or one report given twice)"
                )
            owner[test["nodeid"]] = folder
    shards = sorted({str(r["shard"]) for _, r in reports if r.get("shard")}, key=_shard_key)
    counts = {_shard_key(s)[1] for s in shards}
    if len(counts) > 1:
        raise MergeError(f"the reports are shards of different splits ({', '.join(shards)})")
    everything = [r for _, r in reports]
    merged: dict[str, Any] = {key: first.get(key) for key, _ in IDENTITY}
    merged.update(
        {
            "shard": None,
            "shards": shards,
            "missing_shards": _missing(shards),
            "tests": sorted(
                (t for r in everything for t in r["tests"]), key=lambda t: str(t["nodeid"])
            ),
            "cases": sum(int(r.get("cases", 0)) for r in everything),
            "checks": sum(int(r.get("checks", 0)) for r in everything),
            "coverage": _hits(everything, "coverage", "cells"),
            "layouts": _hits(everything, "layouts", "layouts"),
            "expected_failures": _expected(everything),
            "stale": sorted({n for r in everything for n in r.get("stale", [])}),
        }
    )
    return merged


def _shard_key(shard: str) -> tuple[int, int]:
    index, _, count = shard.partition("/")
    return int(index), int(count)


def _shard_order(results: dict[str, Any]) -> tuple[int, int]:
    return _shard_key(str(results["shard"])) if results.get("shard") else (0, 0)


def _missing(shards: list[str]) -> list[str]:
    if not shards:
        return []
    count = _shard_key(shards[0])[1]
    return [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in shards]


def _hits(reports: list[dict[str, Any]], table: str, rows: str) -> dict[str, Any]:
    """The reports' coverage tables as one: each row once, in the order first seen, with the
    hits of every report added up."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for results in reports:
        for row in results.get(table, {}).get(rows, []):
            key = tuple(sorted((k, str(v)) for k, v in row.items() if k != "hits"))
            if key in merged:
                merged[key]["hits"] += row["hits"]
            else:
                merged[key] = dict(row)
    listed = list(merged.values())
    return {rows: listed, "total": len(listed), "hit": sum(1 for r in listed if r["hits"])}


def _expected(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each expected failure once: matched if it matched a test in any shard, stale if every
    shard where it matched found all its tests passing."""
    merged: dict[tuple[str, ...], dict[str, Any]] = {}
    for results in reports:
        for entry in results.get("expected_failures", []):
            key = tuple(str(entry.get(k, "")) for k in ("source", "operator", "pattern", "reason"))
            seen = merged.setdefault(key, dict(entry, matched=False, stale=False))
            if entry.get("matched"):
                stale = bool(entry.get("stale")) and (seen["stale"] or not seen["matched"])
                seen["matched"], seen["stale"] = True, stale
    return list(merged.values())


def merge_junit(files: Sequence[Path]) -> str:
    """One junit.xml holding every test case of these (sorted by class and name), with the
    totals recounted."""
    cases: list[ElementTree.Element] = []
    for file in files:
        try:
            root = ElementTree.parse(file).getroot()
        except (OSError, ElementTree.ParseError) as error:
            raise MergeError(f"{file}: cannot read junit XML ({error})") from None
        cases += root.iter("testcase")
    cases.sort(key=lambda c: (c.get("classname", ""), c.get("name", "")))

    def count(*tags: str) -> int:
        return sum(1 for c in cases if any(c.find(t) is not None for t in tags))

    suite = ElementTree.Element(
        "testsuite",
        {
            "name": "pytest",
            "errors": str(count("error")),
            "failures": str(count("failure")),
            "skipped": str(count("skipped")),
            "tests": str(len(cases)),
            "time": f"{sum(float(c.get('time', '0')) for c in cases):.3f}",
        },
    )
    suite.extend(cases)
    root = ElementTree.Element("testsuites")
    root.append(suite)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def merge_reports(out: Path, folders: Sequence[Path]) -> dict[str, Any]:
    """Merge the reports in `folders` into `out` (results.json, junit.xml, report.md) and
    return the merged results."""
    from ..safeio import write_file
    from .report import render_markdown
    from .report_html import render_html

    merged = merge_results([(folder, read_results(folder)) for folder in folders])
    junit = [folder / "junit.xml" for folder in folders if (folder / "junit.xml").is_file()]
    out.mkdir(parents=True, exist_ok=True)
    write_file(out, "results.json", (json.dumps(merged, indent=2, sort_keys=True) + "\n").encode())
    if junit:
        write_file(out, "junit.xml", merge_junit(junit).encode())
    write_file(out, "report.md", render_markdown(merged).encode())
    write_file(out, "report.html", render_html(merged).encode())
    return merged
