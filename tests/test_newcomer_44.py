"""#44: what a newcomer found — silent, wrong and misleading answers — each a test that failed first."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run, run_json, write_session


@pytest.mark.parametrize("key,value", [("recall-log-days", "100000"), ("recall-log-days", "0.5"),
                                       ("recall-log-max-mb", "20000"), ("recall-log-max-mb", "0.001")])
def test_an_out_of_range_setting_is_a_usage_error_and_changes_nothing(home, key, value):
    """A value chrollo would ignore (keeping the default) is refused, exit 2, and the settings
    file is not written."""
    r, err = run_json(["config", key, value], home)
    assert r.returncode == 2 and err["error"]["kind"] == "usage", (r.stdout, r.stderr)
    assert "range" in err["error"]["message"]
    assert not (home / "privacy.json").exists() or key.replace("-", "_") not in (home / "privacy.json").read_text()
    ok_value = {"recall-log-days": "36500", "recall-log-max-mb": "10000"}[key]
    r, out = run_json(["config", key, ok_value], home)
    assert r.returncode == 0 and out == {key: int(ok_value)}
