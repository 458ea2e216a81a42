"""Found by the end-to-end suite: Claude Code writes an API failure into its transcript as a
synthetic assistant message ("API Error: 400 …", ``isApiErrorMessage``). That is the harness
talking, not the model answering: it is never an agent turn, live or imported."""
from __future__ import annotations

import json

from chrollo.harness import claude_code


def _rec(**kw) -> str:
    base = {"sessionId": "apierr00-0000-4000-8000-000000000000", "cwd": "/w", "isSidechain": False,
            "timestamp": "2026-11-01T12:00:00.000Z"}
    return json.dumps({**base, **kw}) + "\n"


def test_api_error_message_is_not_an_agent_turn(tmp_path):
    tr = tmp_path / "apierr00-0000-4000-8000-000000000000.jsonl"
    tr.write_text(
        _rec(type="user", uuid="u1", message={"role": "user", "content": "summarise the release checklist"})
        + _rec(type="assistant", uuid="a1", isApiErrorMessage=True, apiErrorStatus=400,
               message={"id": "m1", "model": "<synthetic>", "role": "assistant",
                        "content": [{"type": "text", "text": "API Error: 400 injected"}]})
        + _rec(type="assistant", uuid="a2",
               message={"id": "m2", "model": "claude", "role": "assistant",
                        "content": [{"type": "text", "text": "The checklist has five steps."}]}))
    units = claude_code.read_transcript(str(tr)).units
    assert [(u.role, u.text) for u in units] == [("user", "summarise the release checklist"),
                                                 ("agent", "The checklist has five steps.")]
