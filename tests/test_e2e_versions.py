"""The README's compatibility table says what the end-to-end suite really runs: each row's
"version tested" is the version tests/e2e/package.json pins for that package, and every harness
the suite drives has its row (#46: the table said pi 0.73.1 and Codex 0.169.0 long after)."""
from __future__ import annotations

import json
import re

from conftest import ROOT
from e2e.drivers import DRIVERS
from e2e.kit import npm

HEADER = "| harness | version tested |"


def compatibility_rows() -> list:
    """[(harness cell, version, package)] of the table headed ``| harness | version tested |``,
    wherever it is (README.md, or a docs/ page it moved to)."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        lines = page.read_text("utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith(HEADER):
                rows = []
                for row in lines[i + 2:]:
                    if not row.startswith("|"):
                        break
                    cells = [c.strip() for c in row.strip("|").split("|")]
                    m = re.match(r"(\S+) \(`([^`]+)`", cells[1])
                    rows.append((cells[0], m.group(1) if m else None, m.group(2) if m else None))
                return rows
    return []


def test_every_row_names_the_version_the_suite_pins():
    pins = json.loads(npm.PACKAGE_JSON.read_text("utf-8"))["dependencies"]
    rows = compatibility_rows()
    assert rows, "no compatibility table"
    for harness, version, package in rows:
        assert package in pins, f"{harness}: {package} is not what tests/e2e/package.json installs"
        assert version == pins[package], f"{harness}: the table says {version}, the suite pins {pins[package]}"


def test_every_harness_the_suite_drives_has_a_row():
    packages = {package for _h, _v, package in compatibility_rows()}
    missing = [h for h in DRIVERS if npm.PACKAGES[h] not in packages]
    assert not missing, f"harnesses driven end to end but missing from the compatibility table: {missing}"


def test_the_check_sees_a_stale_row(tmp_path, monkeypatch):
    stale = "| pi | 0.73.1 (`@mariozechner/pi-coding-agent`) | x | y |"
    (tmp_path / "README.md").write_text(f"{HEADER} what | caveats |\n|---|---|---|---|\n{stale}\n", "utf-8")
    (tmp_path / "docs").mkdir()
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert compatibility_rows() == [("pi", "0.73.1", "@mariozechner/pi-coding-agent")]
