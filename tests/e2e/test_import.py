"""Import, end to end: ``chrollo import <harness>`` over what the real harness wrote gives the
same bytes as live capture, and a second import adds nothing."""
from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import HARNESSES

pytestmark = pytest.mark.e2e


def session_runs(drv) -> None:
    """A little history: a plain turn, a tool turn resumed into it, a second session."""
    first = drv.run("say: the nightly backup runs at 02:00 from the cron host")
    assert first.ok and first.session_id, first.proc.stderr
    tool = drv.run("run: printf 'disk %s\\n' free-31G\nsay: the disk has room", resume=first.session_id)
    assert tool.ok, tool.proc.stderr
    assert drv.run(f"say: {'chunked words of a streamed reply ' * 3}\nchunks: 3").ok


@pytest.mark.parametrize("harness", HARNESSES)
def test_import_is_byte_identical_to_live_capture_and_idempotent(make, world, harness):
    # the project is a clone (#34): both writers record its repository, never the URL's credentials
    subprocess.run(["git", "init", "-q", str(world.project)], check=True)
    subprocess.run(["git", "-C", str(world.project), "remote", "add", "origin",
                    "https://e2e:s3cret@GitHub.com/Acme/Backup.git"], check=True)
    drv = make(harness)
    session_runs(drv)
    live = world.vault_files()
    assert len(live) == 2, list(live)
    assert all('\nrepository: "github.com/acme/backup"\n' in text and "s3cret" not in text
               for text in live.values()), list(live.values())[0][:800]
    other = world.tmp / "import-home"
    p = world.chrollo("import", harness, "--json", CHROLLO_HOME=other)
    first = json.loads(p.stdout)
    imported = world.vault_files(other / "memories")
    assert imported == live
    p = world.chrollo("import", harness, "--json", CHROLLO_HOME=other)
    again = json.loads(p.stdout)
    assert world.vault_files(other / "memories") == live
    assert again["turns"] == 0 and first["turns"] > 0, (first, again)


def test_gemini_session_resumed_in_a_later_minute_is_still_there_to_import(make, world):
    """Resumed in a later minute than it began, a Gemini 0.61 session leaves a metadata-only
    ``session-<minute>-<id8>.jsonl`` beside its chat (planted here, so the clock does not
    decide), and with session cleanup on, the next start deletes the chat itself (see the
    driver). The driver's settings keep it, so import still writes what live capture wrote."""
    drv = make("gemini")
    first = drv.run("say: the nightly backup runs at 02:00 from the cron host")
    assert first.ok and first.session_id, first.proc.stderr
    (chat,) = (world.home / ".gemini" / "tmp").glob(f"*/chats/session-*-{first.session_id[:8]}.jsonl")
    stray = chat.with_name(f"session-2000-01-01T00-00-{first.session_id[:8]}.jsonl")
    stray.write_text(chat.read_text("utf-8").splitlines(keepends=True)[0], "utf-8")
    assert drv.run("say: the disk has room", resume=first.session_id).ok
    assert drv.run("say: a second session starts").ok   # Gemini's session cleanup runs here
    assert chat.is_file()
    live = world.vault_files()
    other = world.tmp / "import-home"
    world.chrollo("import", "gemini", "--json", CHROLLO_HOME=other)
    assert world.vault_files(other / "memories") == live and len(live) == 2
