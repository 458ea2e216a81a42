"""A hook shim that records each call, then runs the real hook: ``recorder.py OUT -- CMD…``.

Appends ``{"event", "payload", "lines"}`` to the JSON-lines file OUT — the payload as the
harness sent it, and how many lines each transcript it names had at that moment — then runs
CMD with the same stdin and hands back its stdout, stderr and exit code. Used by
``tests/e2e/record.py`` to turn real harness runs into the fixtures in tests/fixtures/recorded/.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys


def main() -> int:
    out, cmd = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    data = sys.stdin.buffer.read()
    event = cmd[cmd.index("hook") + 1] if "hook" in cmd else "?"
    try:
        payload = json.loads(data)
    except ValueError:
        payload = None
    lines = {}
    for key in ("transcript_path", "agent_transcript_path"):
        path = payload.get(key) if isinstance(payload, dict) else None
        if isinstance(path, str):
            try:
                with open(path, "rb") as fh:
                    lines[key] = sum(1 for _ in fh)
                # a copy as it is now: a harness may later rename or delete it (Gemini on resume)
                snaps = out + ".files"
                os.makedirs(snaps, exist_ok=True)
                shutil.copyfile(path, os.path.join(snaps, hashlib.sha1(path.encode()).hexdigest()))
            except OSError:
                pass
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, "payload": payload, "lines": lines}, ensure_ascii=False) + "\n")
    p = subprocess.run(cmd, input=data, capture_output=True)
    sys.stdout.buffer.write(p.stdout)
    sys.stderr.buffer.write(p.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
