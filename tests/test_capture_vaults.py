"""Capture and import state is keyed by vault as well as session (issue 18, item 9): a session
follows the vault it is told to use."""
from __future__ import annotations

from recorded import calls, import_into, materialise, replay, vault_bytes

from chrollo.session import read_session

CODEX = "codex-0.169.0"


def _texts(vault) -> list:
    (f,) = vault.glob("*.md")
    return [(t.role, t.text) for t in read_session(f).turns]


def test_resumed_session_told_to_use_another_vault_writes_there(home, tmp_path):
    a, b = tmp_path / "vault-a", tmp_path / "vault-b"
    first = [c["event"] for c in calls(CODEX)[:2]]
    assert first == ["UserPromptSubmit", "Stop"]
    replay(CODEX, tmp_path, home, upto=2, CHROLLO_MEMORIES_DIR=a)
    before = vault_bytes(a)
    assert [t[1] for t in _texts(a)] == ["create the notes file", "Done."]
    # `codex exec resume` with CHROLLO_MEMORIES_DIR=B: the same session, another vault
    replay(CODEX, tmp_path, home, start=2, CHROLLO_MEMORIES_DIR=b)
    assert vault_bytes(a) == before
    # B had none of the session: it gets all of it, each turn once
    assert _texts(b) == [("user", "create the notes file"), ("agent", "Done."),
                         ("user", "now add a heading to it"), ("agent", "Done."),
                         ("user", "and commit it"), ("agent", "Done.")]


def test_import_into_a_new_empty_vault_writes_the_files(home, tmp_path):
    src = materialise(CODEX, tmp_path, tmp_path / "work")
    a, b = tmp_path / "vault-a", tmp_path / "vault-b"
    first = import_into(home, "codex", src, CHROLLO_MEMORIES_DIR=a)
    assert first["imported"] == 1
    again = import_into(home, "codex", src, CHROLLO_MEMORIES_DIR=a)
    assert again["unchanged"] == 1 and again["turns"] == 0
    other = import_into(home, "codex", src, CHROLLO_MEMORIES_DIR=b)
    assert other["imported"] == 1 and other["turns"] == 6, other
    assert vault_bytes(b) == vault_bytes(a)
    assert import_into(home, "codex", src, CHROLLO_MEMORIES_DIR=a)["unchanged"] == 1
