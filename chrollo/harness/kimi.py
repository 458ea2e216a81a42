"""Kimi Code CLI (Moonshot's ``kimi``): ``~/.kimi/sessions/<md5 of the folder>/<id>/context.jsonl``
(import only; older versions: ``<md5>/<id>.jsonl``).

``context.jsonl`` is the model's context, one message a line: ``{"role": "user"|"assistant"|
"tool", "content": str | [parts], "tool_calls"?: [OpenAI-shaped calls]}``; ``_system_prompt``,
``_checkpoint`` and ``_usage`` lines are bookkeeping, ``think`` parts reasoning, ``tool``
messages outputs, and a user message of ``<system>…</system>`` text only (``CHECKPOINT 0``…)
is Kimi's, not the user's. Lines carry no times: a prompt's is the ``timestamp`` of the
``TurnBegin`` record with its text in ``wire.jsonl`` beside it (``{"timestamp", "message":
{"type", "payload": {"user_input"}}}``), an answer's its prompt's (else the file's modification
time); keys are byte offsets. The folder is the ``work_dirs`` entry of ``~/.kimi/kimi.json`` whose
path hashes to the session's parent folder.
"""
from __future__ import annotations

import os

from .common import (Transcript, Unit, fill_times, home_from, is_injected, norm, parse_time, read_json_file,
                     read_jsonl, skip_patterns, text_of, tool_call)

NAME = "kimi"
TRANSCRIPTS = ("sessions", ["*/*/context.jsonl", "*/*.jsonl"])
IMPORT_HELP = "~/.kimi/sessions          ($KIMI_SHARE_DIR)"
SKIP = skip_patterns(("role", "tool"), ("role", "_usage"), ("role", "_system_prompt"))


def home_dir() -> str:
    return home_from("KIMI_SHARE_DIR", ".kimi")


def _said(content) -> str | None:
    """What the user wrote: text parts that are not ``<system>`` notes."""
    if isinstance(content, list):
        content = [p for p in content if not (isinstance(p, dict) and isinstance(p.get("text"), str)
                                               and p["text"].lstrip().startswith("<system>"))]
    text = text_of(content)
    return None if not text or text.lstrip().startswith("<system>") or is_injected(text) else text


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    starts = {k: list(v) for k, v in _turn_starts(path).items()}  # (each used once, in order)
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(rec, dict):
            continue
        if rec.get("role") == "user":
            text = _said(rec.get("content"))
            if text and text.strip():
                asked = starts.get(norm(text)) or [None]
                tr.add(Unit("user", asked.pop(0), [text], f"k:{off}"), off)
        elif rec.get("role") == "assistant":
            content = rec.get("content")
            parts: list = []
            for p in content if isinstance(content, list) else [content]:
                t = p if isinstance(p, str) else p.get("text") if isinstance(p, dict) and p.get("type") == "text" else None
                if isinstance(t, str) and t.strip() and not is_injected(t):
                    parts.append(t)
            for call in rec.get("tool_calls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    parts.append(tool_call(fn.get("name"), fn.get("arguments")))
            if parts:
                tr.add(Unit("agent", None, parts, f"k:{off}"), off)
    fill_times(tr.units, path)
    tr.skipped = bad[0]
    return tr


_wire: dict = {}  # wire.jsonl's turn starts, read once per file version: {prompt: [times]}


def _turn_starts(path: str) -> dict:
    """When each prompt was sent: the ``TurnBegin`` records of the session's ``wire.jsonl``."""
    wire = os.path.join(os.path.dirname(os.path.abspath(path)), "wire.jsonl")
    try:
        st = os.stat(wire)
    except OSError:
        return {}
    stamp = (wire, st.st_size, st.st_mtime_ns)
    if stamp not in _wire:
        _wire.clear()
        begins: dict = {}
        for _off, rec in read_jsonl(wire, 0):
            msg = rec.get("message") if isinstance(rec, dict) else None
            if isinstance(msg, dict) and msg.get("type") == "TurnBegin" and isinstance(msg.get("payload"), dict):
                said = text_of(msg["payload"].get("user_input"))
                when = parse_time(rec.get("timestamp"))
                if said and when:
                    begins.setdefault(norm(said), []).append(when)
        _wire[stamp] = begins
    return _wire[stamp]


def session_of(path: str) -> dict:
    """``<md5>/<id>/context.jsonl`` or ``<md5>/<id>.jsonl``; the folder from ``kimi.json``."""
    path = os.path.abspath(path)
    folder, name = os.path.split(path)
    if name == "context.jsonl":
        sid, hashed = os.path.basename(folder), os.path.dirname(folder)
    else:
        sid, hashed = name.removesuffix(".jsonl"), folder
    return {"session_id": sid, "cwd": _work_dir(os.path.basename(hashed), os.path.dirname(os.path.dirname(hashed)))}


def _work_dir(hashed: str, home: str) -> str | None:
    from hashlib import md5

    meta = read_json_file(os.path.join(home, "kimi.json"))
    for wd in (meta.get("work_dirs") if isinstance(meta, dict) else None) or []:
        p = wd.get("path") if isinstance(wd, dict) else None
        if isinstance(p, str) and os.path.isabs(p) and md5(p.encode("utf-8", "surrogatepass")).hexdigest() == hashed:
            return p
    return None

