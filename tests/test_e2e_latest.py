"""tests/e2e/run-latest's registry lookup (tests/e2e/kit/latest.py) on the registry's recorded
answers (tests/fixtures/registry/): it follows a harness's renames to its current package, so
"latest" can never mean the last release under an abandoned name. No network."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT
from e2e.kit import latest, npm

RECORDED = ROOT / "tests" / "fixtures" / "registry"


def recorded(extra: dict | None = None):
    """A registry lookup answering from the recorded files (and ``extra``), logging each ask."""
    asked = []

    def view(name):
        asked.append(name)
        if extra and name in extra:
            return extra[name]
        f = RECORDED / (name.replace("@", "_").replace("/", "+") + ".json")
        data = json.loads(f.read_text("utf-8")) if f.is_file() else {"error": {"code": "E404"}}
        return None if "error" in data else data

    view.asked = asked
    return view


def test_pi_under_its_old_name_resolves_to_the_renamed_package():
    view = recorded()
    r = latest.resolve("@mariozechner/pi-coding-agent", view)
    assert (r["package"], r["version"]) == ("@earendil-works/pi-coding-agent", "1.6.0")
    assert [(old, new) for old, new, _ in r["renamed"]] == [("@mariozechner/pi-coding-agent",
                                                             "@earendil-works/pi-coding-agent")]
    assert r["notes"] == []   # the old name still stops at 0.73.1: the table holds


def test_every_harness_is_looked_up_from_its_oldest_name_and_the_report_says_so():
    view = recorded()
    found = latest.resolve_all({h: npm.PACKAGES[h] for h in ("claude-code", "codex", "gemini", "pi")}, view)
    assert "@mariozechner/pi-coding-agent" in view.asked     # the renames table checked every run
    assert {h: (r["package"], r["version"]) for h, r in found.items()} == {
        "claude-code": ("@anthropic-ai/claude-code", "2.1.332"), "codex": ("@openai/codex", "0.171.0"),
        "gemini": ("@google/gemini-cli", "0.61.0"), "pi": ("@earendil-works/pi-coding-agent", "1.6.0")}
    text = latest.report_text(found, npm.pinned_versions())
    assert "pi: @earendil-works/pi-coding-agent@1.6.0 (pinned 1.6.0)" in text.splitlines()
    assert "  renamed: @mariozechner/pi-coding-agent -> @earendil-works/pi-coding-agent" in text


def test_a_deprecation_naming_a_new_package_is_followed():
    # the registry's shape for a deprecated latest version: "deprecated" is its message
    old = {"name": "@acme/agent", "version": "3.2.0", "dist-tags": {"latest": "3.2.0"},
           "deprecated": "This package has moved: renamed to `@acme-labs/agent`. Please update."}
    new = {"name": "@acme-labs/agent", "version": "4.0.1", "dist-tags": {"latest": "4.0.1", "next": "5.0.0-rc.1"}}
    r = latest.resolve("@acme/agent", recorded({"@acme/agent": old, "@acme-labs/agent": new}))
    assert (r["package"], r["version"]) == ("@acme-labs/agent", "4.0.1")   # dist-tags.latest, not next
    assert r["renamed"][0][:2] == ("@acme/agent", "@acme-labs/agent") and "deprecated" in r["renamed"][0][2]


def test_a_deprecation_naming_nothing_that_exists_stays_and_says_so():
    old = {"name": "@acme/agent", "version": "3.2.0", "deprecated": "use `@acme/gone` instead"}
    r = latest.resolve("@acme/agent", recorded({"@acme/agent": old}))
    assert r["package"] == "@acme/agent" and r["renamed"] == []
    assert r["notes"] and "deprecated" in r["notes"][0]


def test_an_old_name_that_published_again_is_reported():
    again = {"name": "@mariozechner/pi-coding-agent", "version": "0.80.0", "dist-tags": {"latest": "0.80.0"}}
    r = latest.resolve("@mariozechner/pi-coding-agent", recorded({"@mariozechner/pi-coding-agent": again}))
    assert r["package"] == "@earendil-works/pi-coding-agent"
    assert any("published 0.80.0 after its known last version 0.73.1" in n for n in r["notes"]), r["notes"]


def test_a_missing_package_and_a_rename_loop_are_errors_not_a_silent_pin():
    with pytest.raises(LookupError):
        latest.resolve("@nonexistent-chrollo/none", recorded())
    a = {"name": "a-pkg", "version": "1.0.0", "deprecated": "renamed to b-pkg"}
    b = {"name": "b-pkg", "version": "1.0.0", "deprecated": "renamed to a-pkg"}
    r = latest.resolve("a-pkg", recorded({"a-pkg": a, "b-pkg": b}))   # a cycle stops where it began
    assert r["package"] == "b-pkg" and r["notes"]


def test_a_latest_install_reads_its_harnesses_under_the_names_the_lookup_found(tmp_path):
    found = {h: {"package": p, "version": "1.0.0", "renamed": [], "notes": []} for h, p in npm.PACKAGES.items()}
    found["pi"]["package"] = "@newer/pi"
    (tmp_path / npm.REPORT).write_text(json.dumps(found), "utf-8")
    pkg = tmp_path / "node_modules" / "@newer" / "pi"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text('{"version": "9.9.9"}', "utf-8")
    assert npm.installed_versions(tmp_path)["pi"] == "9.9.9"
    assert "pi: @newer/pi@1.0.0" in npm.report(tmp_path)
