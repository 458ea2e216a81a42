"""The ripgrep wrapper: streaming, stats, early stop, timeout, errors (real rg)."""
from __future__ import annotations

import pytest

from chrollo import rg
from chrollo.errors import ChrolloError


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "v"
    d.mkdir()
    for i in range(40):
        (d / f"s{i:02d}.md").write_text("alpha beta\n" * 50 + "gamma\n")
    (d / "notes.txt").write_text("alpha\n")  # not a session file: ignored
    return d


def test_rows_per_file_and_stats(folder):
    info = rg.Scan()
    got = dict(rg.scan(["alpha", "gamma"], [str(folder)], info=info))
    assert len(got) == 40 and all(p.endswith(b".md") for p in got)
    rows = got[str(folder / "s00.md").encode()].split(b"\n")
    assert rows[0] == b"1:alpha" and rows[-2] == b"51:gamma" and rows[-1] == b""
    assert info.files_searched == 40 and info.returncode == 0 and not info.errors


def test_whole_words_case_insensitive(tmp_path):
    (tmp_path / "a.md").write_text("Alphabet ALPHA alpha_x (alpha)\n")
    rows = dict(rg.scan(["alpha"], [str(tmp_path)]))[str(tmp_path / "a.md").encode()]
    assert rows == b"1:ALPHA\n1:alpha\n"


def test_identifier_parts_report_whole_identifiers(tmp_path):
    # every part match is the whole identifier, whichever way the part is placed in it; a
    # part glued to lowercase letters (reconfigure, parse_configuration, xCONFIG) is not one
    (tmp_path / "a.md").write_text(
        "parse_config PARSE_CONFIG parse_configuration configLoader ConfigLoader reconfigure myConfigX "
        "xCONFIG config_ _config config cfg_config_x loadSettings load_settings_now settingsStore "
        "settingsstore café_config_x y2Config x_Config_y\n")
    rows = dict(rg.scan(["config", "settings"], [str(tmp_path)], parts=["config", "settings"]))
    assert rows[str(tmp_path / "a.md").encode()].decode().split() == [
        f"1:{w}" for w in ("parse_config PARSE_CONFIG configLoader ConfigLoader myConfigX config_ _config config "
                           "cfg_config_x loadSettings load_settings_now settingsStore _config_x y2Config "
                           "x_Config_y").split()]


def test_no_match_is_not_an_error(folder):
    info = rg.Scan()
    assert list(rg.scan(["zzzz"], [str(folder)], info=info)) == []
    assert info.returncode == 1 and not info.errors and info.files_searched == 41 - 1


def test_early_stop_keeps_what_was_read(folder):
    info = rg.Scan()
    got = list(rg.scan(["alpha"], [str(folder)], info=info, max_bytes=3000, chunk=1000))
    assert info.truncated and 0 < len(got) < 40


def test_timeout_kills_and_reports(folder):
    info = rg.Scan()
    list(rg.scan(["alpha"], [str(folder)], info=info, timeout=0.000001))
    assert info.timed_out


def test_closing_the_generator_early_reaps_rg(folder):
    info = rg.Scan()
    gen = rg.scan(["alpha"], [str(folder)], info=info, chunk=100)
    next(gen)
    gen.close()
    assert info.returncode is not None  # killed and waited for: no zombie, no open pipe


def test_no_peers_glob(folder):
    (folder / "peers" / "lap").mkdir(parents=True)
    (folder / "peers" / "lap" / "s00.md").write_text("alpha\n")
    got = [p for p, _ in rg.scan(["alpha"], [str(folder)], globs=("*.md", "!peers/"))]
    assert len(got) == 40 and not any(b"/peers/" in p for p in got)


def test_missing_rg(monkeypatch, tmp_path):
    monkeypatch.setenv("CHROLLO_RG", str(tmp_path / "nope"))
    with pytest.raises(ChrolloError) as e:
        rg.rg_path()
    assert e.value.kind == "rg_not_found" and "pip install" in e.value.hint


def test_a_file_holding_a_nul_byte_never_puts_rgs_diagnostic_in_the_rows(tmp_path):
    """Given explicit paths, rg says "X.md: binary file matches …" on stdout for a file holding
    a NUL byte: that text is not a path, and the next file's hits are still its own. The file
    is read as text, as in a walk of the folder (the index hands rg explicit paths)."""
    (tmp_path / "a.md").write_bytes(b"alpha one\nbeta\0 gamma alpha\n")
    (tmp_path / "b.md").write_text("alpha two\n")
    (tmp_path / "c.md").write_text("nothing\nalpha three\n")
    paths = [str(tmp_path / n) for n in ("a.md", "b.md", "c.md")]
    for order in (paths, paths[::-1], paths[1:] + paths[:1]):
        info = rg.Scan()
        got = dict(rg.scan(["alpha"], order, info=info))
        assert got == {paths[0].encode(): b"1:alpha\n2:alpha\n", paths[1].encode(): b"1:alpha\n",
                       paths[2].encode(): b"2:alpha\n"}, order
        assert not info.errors
    walked = dict(rg.scan(["alpha"], [str(tmp_path)]))
    assert walked == got
