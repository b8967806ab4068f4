"""The reports of a conformance run a newcomer reads: the terminal's summary, report.md's
summaries and counted skip reasons, and report.html as headless Chromium renders it.

One run (module fixture) of a backend that fails FILL_VALUE_SEQUENCE's FLOAT16 cells, with
ELEMENT_WISE_IDENTITY beside it (no documented example: pytest's empty parameter set) and
numpy's skips (it does not validate)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dmlspec.conformance.report_html import STYLE

from .test_conformance import conformance

BACKEND = "tests.broken_backends:Float16AsFloat32"
OPERATORS = ("FILL_VALUE_SEQUENCE", "ELEMENT_WISE_IDENTITY")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    report = tmp_path_factory.mktemp("report")
    finished = conformance(BACKEND, report, "--ops", *OPERATORS)
    assert finished.returncode == 1, finished.stdout[-3000:] + finished.stderr[-3000:]
    return report, finished.stdout


def _results(report: Path) -> dict[str, object]:
    loaded = json.loads((report / "results.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_terminal_says_what_runs_first_and_sums_up_by_family(run: tuple[Path, str]) -> None:
    _, stdout = run
    lines = stdout.splitlines()
    assert lines[0].startswith("dmlspec conformance: 2 operators on numpy at feature level")
    assert "profile ci" in lines[0]
    assert not any(line.startswith("operator ") for line in lines)  # no matrix
    family = next(line for line in lines if line.startswith("family"))
    assert family.split()[:2] == ["family", "verdict"]
    assert any(re.match(r"generator\s+failed\s", line) for line in lines)
    assert any(re.match(r"element_wise\s+passed\s", line) for line in lines)
    assert "failed: 1 operators: FILL_VALUE_SEQUENCE (" in stdout
    assert re.search(r"\d+ cases run in \d+ s \([\d.]+ cases/s\)", stdout)
    assert "report.html" in lines[-1]


def test_no_pytest_placeholder_reaches_any_report(run: tuple[Path, str]) -> None:
    report, stdout = run
    for name in ("results.json", "report.md", "report.html"):
        text = (report / name).read_text()
        assert "NotSetType" not in text and "NOTSET" not in text.split("nodeid")[0], name
    assert "NotSetType" not in stdout


def test_report_md_opens_with_a_summary_per_operator_and_counts_every_skip(
    run: tuple[Path, str],
) -> None:
    report, _ = run
    text = (report / "report.md").read_text()
    assert text.index("## Summary per operator") < text.index("## Results per operator")
    assert "| FILL_VALUE_SEQUENCE | generator | failed |" in text
    assert "| ELEMENT_WISE_IDENTITY | element_wise | passed |" in text
    skipped = sum(1 for t in _results(report)["tests"] if t["outcome"] == "skipped")  # type: ignore[attr-defined,index]
    assert skipped > 0
    assert f"## Skips by reason: {skipped} tests" in text
    section = text.split("## Skips by reason")[1].split("\n## ")[0]
    counted = [int(m) for m in re.findall(r"\| (\d+) \|\n", section + "\n")]
    assert sum(counted) == skipped
    assert "the backend does not validate descs" in section
    assert "nothing to run: the spec documents no example" in section
    assert "got empty parameter set" not in section


class _Dom(HTMLParser):
    """The chips of the matrix, the failures and the skip-reason rows of a dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.chips: list[dict[str, str]] = []
        self.failures = 0
        self.reruns: list[str] = []
        self.skip_rows = 0
        self._in: list[str] = []
        self._pre: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if "data-verdict" in found:
            self.chips.append(found)
        if found.get("class") == "failure":
            self.failures += 1
        if tag == "pre" and found.get("class") == "rerun":
            self._pre = ""
        if tag == "table":
            self._in.append(found.get("id", ""))
        if tag == "tr" and self._in and self._in[-1] == "skip-reasons":
            self.skip_rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._in:
            self._in.pop()
        if tag == "pre" and self._pre is not None:
            self.reruns.append(self._pre)
            self._pre = None

    def handle_data(self, data: str) -> None:
        if self._pre is not None:
            self._pre += data


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("headless Chromium is not installed (.ci/run installs Debian's chromium)")
    return found


def _browser(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_chromium(), "--headless", "--disable-gpu", "--no-sandbox", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _pixels(png: bytes) -> Counter[tuple[int, int, int]]:
    """The colours of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    channels = 3 if colour == 2 else 4
    data, offset = b"", 8
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        if png[offset + 4 : offset + 8] == b"IDAT":
            data += png[offset + 8 : offset + 8 + length]
        offset += 12 + length
    raw = zlib.decompress(data)
    stride = width * channels
    previous = bytearray(stride)
    counted: Counter[tuple[int, int, int]] = Counter()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up))
                near = min(near, (abs(guess - corner), 2, corner))
                line[i] = (line[i] + near[2]) & 255
        counted.update(
            tuple(line[i : i + 3])
            for i in range(0, stride, channels)  # type: ignore[misc]
        )
        previous = line
    return counted


def _colour(verdict: str) -> tuple[int, int, int]:
    found = re.search(rf"\.v-{verdict} {{ background: #(\w\w)(\w\w)(\w\w)", STYLE)
    assert found
    red, green, blue = (int(h, 16) for h in found.groups())
    return red, green, blue


def test_report_html_renders_the_matrix_failures_and_skip_reasons_in_chromium(
    run: tuple[Path, str],
) -> None:
    report, _ = run
    page = report / "report.html"
    assert "http://" not in page.read_text() and "https://" not in page.read_text()
    dumped = _browser("--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = _Dom()
    dom.feed(dumped.stdout)
    tests = _results(report)["tests"]
    failed = [t for t in tests if t["outcome"] == "failed"]  # type: ignore[attr-defined,index]
    assert failed and dom.failures == len(failed)
    red = {(c["data-operator"], c["data-type"]) for c in dom.chips if c["data-verdict"] == "failed"}
    assert ("FILL_VALUE_SEQUENCE", "FLOAT16") in red
    assert all(operator == "FILL_VALUE_SEQUENCE" for operator, _ in red)
    assert any(
        c["data-operator"] == "ELEMENT_WISE_IDENTITY" and c["data-verdict"] == "passed"
        for c in dom.chips
    )
    assert len(dom.reruns) == len(failed)
    assert all("--backend tests.broken_backends:Float16AsFloat32" in r for r in dom.reruns)
    assert dom.skip_rows >= 3  # header and at least two reasons
    assert "OutputTensor" in dumped.stdout  # a failure's desc is shown
    # What it shows: failed and passed chips are painted in their colours.
    shot = report / "shot.png"
    painted = _browser(f"--screenshot={shot}", "--window-size=1600,3000", page.as_uri())
    assert painted.returncode == 0 and shot.is_file(), painted.stderr[-2000:]
    colours = _pixels(shot.read_bytes())
    assert colours[_colour("failed")] > 50
    assert colours[_colour("passed")] > 50
