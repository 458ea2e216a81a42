"""The four wire formats the harnesses speak: request → :class:`Request`, :class:`Reply` → events.

* ``anthropic`` — Anthropic Messages (``POST /v1/messages``), SSE (Claude Code)
* ``responses`` — OpenAI Responses (``POST /v1/responses``), SSE (Codex CLI)
* ``gemini``    — Gemini ``:streamGenerateContent?alt=sse`` / ``:generateContent`` (Gemini CLI)
* ``chat``      — OpenAI chat completions (``POST /v1/chat/completions``), SSE (pi)

Each ``parse_*`` reads what the model is offered (tools, deferred tools) and the conversation
since the user's latest prompt (calls made, results returned); each ``render_*`` turns a reply
into ``(event name or None, JSON)`` pairs for the SSE stream, or one JSON body.
"""
from __future__ import annotations

import itertools
import json
import re

from .model import Call, Reply, Request

_ids = itertools.count(1)
# A harness that keeps a cut stream's text asks the model to go on after it (Qwen Code).
CONTINUATION = re.compile(r"<previous_response_suffix>\n?(.*?)\n?</previous_response_suffix>", re.S)


def _id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):06d}"


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part.get("content"), (str, list)):
                out.append(_text_of(part["content"]))
    return "\n".join(out)


# ----------------------------------------------------------------------------- Anthropic

def parse_anthropic(body: dict) -> Request:
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    # A deferred tool (``defer_loading``) is callable once a ToolSearch result referenced it.
    referenced = set(re.findall(r'"tool_reference", "tool_name": "([^"]+)"', json.dumps(body.get("messages") or [])))
    loaded = [t["name"] for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")
              and (not t.get("defer_loading") or t["name"] in referenced)]
    deferred = [n for n in tools if n and n not in loaded]
    # Claude Code 2.1.330 also names deferred MCP tools in the conversation text.
    texts = [_text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    texts.append(_text_of(body.get("system") or ""))
    deferred += sorted(set(re.findall(r"\bmcp__[A-Za-z0-9_-]+", "\n".join(texts))) - set(loaded))
    msgs = body.get("messages") or []
    start = 0
    for i, m in enumerate(msgs):
        c = m.get("content")
        if m.get("role") == "user" and not (isinstance(c, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in c)):
            start = i
    req = Request("anthropic", loaded, deferred, prompt=_text_of(msgs[start].get("content")) if msgs else "",
                  aux=not tools)
    names = {}
    for m in msgs[start + 1:]:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                names[b.get("id")] = b.get("name")
                req.calls.append(Call(b.get("name"), b.get("input") or {}, b.get("id")))
            elif b.get("type") == "tool_result":
                req.results.append((names.get(b.get("tool_use_id"), "?"), _text_of(b.get("content"))))
    return req


def render_anthropic(reply: Reply, model: str):
    msg_id = _id("msg")
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 25, "output_tokens": 1}}}
    index = 0
    if reply.text:
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        for piece in reply.pieces():
            yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        index = 1
    for call in reply.calls:
        call.id = call.id or _id("toolu")
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": call.id, "name": call.name, "input": {}}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": {"type": "input_json_delta", "partial_json": json.dumps(call.args)}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield "message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 12}}
    yield "message_stop", {"type": "message_stop"}


def anthropic_json(reply: Reply, model: str) -> dict:
    content = [{"type": "text", "text": reply.text}] if reply.text else []
    for call in reply.calls:
        content.append({"type": "tool_use", "id": call.id or _id("toolu"), "name": call.name, "input": call.args})
    return {"id": _id("msg"), "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 25, "output_tokens": 12}}


def anthropic_error(status: int) -> dict:
    kind = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": f"fake model: injected {status} error"}}


# ----------------------------------------------------------------------------- OpenAI Responses

def _block_after_users(items: list, is_user) -> int:
    """Index of the first of the trailing run of user messages that opened the current turn."""
    start = 0
    for i, it in enumerate(items):
        if is_user(it) and (i == 0 or not is_user(items[i - 1])):
            start = i
    return start


def parse_responses(body: dict) -> Request:
    tools = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            tools.append(t.get("name") or t.get("type"))
            for sub in t.get("tools") or []:   # namespaced tool groups
                if isinstance(sub, dict) and sub.get("name"):
                    tools.append(f"{t.get('name')}__{sub['name']}" if t.get("name") else sub["name"])
    items = [it for it in body.get("input") or [] if isinstance(it, dict)]

    def is_user(it):
        return it.get("type", "message") == "message" and it.get("role") == "user"
    start = _block_after_users(items, is_user)
    prompt = "\n".join(_text_of(it.get("content")) for it in items[start:] if is_user(it)
                       and not _text_of(it.get("content")).lstrip().startswith("<environment_context>"))
    req = Request("responses", tools, prompt=prompt, aux=not tools)
    names = {}
    for it in items[start:]:
        if it.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            name = it.get("name") or it.get("type")
            names[it.get("call_id")] = f"{it['namespace']}__{name}" if it.get("namespace") else name
            args = it.get("arguments") or it.get("input") or "{}"
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                args = {"raw": args}
            req.calls.append(Call(names[it.get("call_id")], args, it.get("call_id")))
        elif it.get("type") in ("function_call_output", "custom_tool_call_output"):
            out = it.get("output")
            req.results.append((names.get(it.get("call_id"), "?"), out if isinstance(out, str) else _text_of(out)
                                if isinstance(out, list) else json.dumps(out)))
    return req


def render_responses(reply: Reply, model: str):
    rid = _id("resp")
    yield None, {"type": "response.created", "response": {"id": rid, "object": "response", "model": model,
                                                          "status": "in_progress", "output": []}}
    output = []
    if reply.text:
        mid = _id("msg")
        item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}
        yield None, {"type": "response.output_item.added", "output_index": 0, "item": item}
        yield None, {"type": "response.content_part.added", "item_id": mid, "output_index": 0, "content_index": 0,
                     "part": {"type": "output_text", "text": "", "annotations": []}}
        for piece in reply.pieces():
            yield None, {"type": "response.output_text.delta", "item_id": mid, "output_index": 0,
                         "content_index": 0, "delta": piece}
        yield None, {"type": "response.output_text.done", "item_id": mid, "output_index": 0, "content_index": 0,
                     "text": reply.text}
        done = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        yield None, {"type": "response.output_item.done", "output_index": 0, "item": done}
        output.append(done)
    for call in reply.calls:
        call.id = call.id or _id("call")
        item = {"type": "function_call", "id": _id("fc"), "call_id": call.id, "name": call.name,
                "arguments": json.dumps(call.args), "status": "completed"}
        if "__" in call.name:   # a tool of a namespace group (Codex: MCP servers, sub-agents)
            item["namespace"], item["name"] = call.name.rsplit("__", 1)
        yield None, {"type": "response.output_item.added", "output_index": len(output), "item": item}
        yield None, {"type": "response.output_item.done", "output_index": len(output), "item": item}
        output.append(item)
    yield None, {"type": "response.completed", "response": {
        "id": rid, "object": "response", "model": model, "status": "completed", "output": output,
        "usage": {"input_tokens": 25, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 37}}}


def openai_error(status: int) -> dict:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": f"fake model: injected {status} error", "type": kind, "param": None,
                      "code": kind}}


# ----------------------------------------------------------------------------- Gemini

def parse_gemini(body: dict) -> Request:
    tools = []
    for t in body.get("tools") or []:
        for f in (t.get("functionDeclarations") or t.get("function_declarations") or []) if isinstance(t, dict) else []:
            if isinstance(f, dict) and f.get("name"):
                tools.append(f["name"])
    gen = body.get("generationConfig") or {}
    schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]

    def is_user(c):
        parts = c.get("parts") or []
        return c.get("role", "user") == "user" and not any(isinstance(p, dict) and "functionResponse" in p for p in parts)
    start = _block_after_users(contents, is_user)
    prompt = "\n".join(_text_of(c.get("parts")) for c in contents[start:] if is_user(c))
    req = Request("gemini", tools, prompt=prompt, aux=not tools, json_schema=schema if schema else None)
    for c in contents[start:]:
        for p in c.get("parts") or []:
            if not isinstance(p, dict):
                continue
            if "functionCall" in p:
                req.calls.append(Call(p["functionCall"].get("name"), p["functionCall"].get("args") or {}))
            elif "functionResponse" in p:
                fr = p["functionResponse"]
                req.results.append((fr.get("name"), json.dumps(fr.get("response"))))
    return req


def render_gemini(reply: Reply, model: str):
    usage = {"promptTokenCount": 25, "candidatesTokenCount": 12, "totalTokenCount": 37}
    if reply.json is not None:
        yield None, {"candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(reply.json)}]},
                                     "finishReason": "STOP", "index": 0}], "usageMetadata": usage, "modelVersion": model}
        return
    pieces = reply.pieces() if reply.text else []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1 and not reply.calls
        yield None, {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0,
                                     **({"finishReason": "STOP"} if last else {})}],
                     **({"usageMetadata": usage} if last else {}), "modelVersion": model}
    if reply.calls:
        parts = [{"functionCall": {"name": c.name, "args": c.args}} for c in reply.calls]
        yield None, {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                     "usageMetadata": usage, "modelVersion": model}
    if not pieces and not reply.calls:
        yield None, {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP",
                                     "index": 0}], "usageMetadata": usage, "modelVersion": model}


def gemini_json(reply: Reply, model: str) -> dict:
    """A non-streamed generateContent answer: the streamed chunks merged."""
    parts = []
    for _, ev in render_gemini(reply, model):
        parts += ev["candidates"][0]["content"]["parts"]
    text = "".join(p.get("text", "") for p in parts if "text" in p)
    merged = ([{"text": text}] if text else []) + [p for p in parts if "functionCall" in p]
    return {"candidates": [{"content": {"role": "model", "parts": merged}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 25, "candidatesTokenCount": 12, "totalTokenCount": 37},
            "modelVersion": model}


def gemini_error(status: int) -> dict:
    kind = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
    return {"error": {"code": status, "message": f"fake model: injected {status} error", "status": kind}}


# ----------------------------------------------------------------------------- OpenAI chat completions

def parse_chat(body: dict) -> Request:
    tools = [(t.get("function") or {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    start = _block_after_users(msgs, lambda m: m.get("role") == "user")
    prompt = "\n".join(_text_of(m.get("content")) for m in msgs[start:] if m.get("role") == "user")
    delivered = None
    m = CONTINUATION.search(prompt)
    if m and start:   # Qwen Code after a dropped stream: "go on after <previous_response_suffix>"
        delivered = m.group(1)
        start = _block_after_users(msgs[:start], lambda m: m.get("role") == "user")
        prompt = "\n".join(_text_of(m.get("content")) for m in msgs[start:] if m.get("role") == "user")
    req = Request("chat", [t for t in tools if t], prompt=prompt, aux=not tools, delivered=delivered)
    names = {}
    for m in msgs[start:]:
        for tc in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = tc.get("function") or {}
            names[tc.get("id")] = fn.get("name")
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            req.calls.append(Call(fn.get("name"), args, tc.get("id")))
        if m.get("role") == "tool":
            req.results.append((names.get(m.get("tool_call_id"), "?"), _text_of(m.get("content"))))
    return req


def render_chat(reply: Reply, model: str):
    cid = _id("chatcmpl")

    def chunk(delta, finish=None, **extra):
        return None, {"id": cid, "object": "chat.completion.chunk", "created": 1767225600, "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    yield chunk({"role": "assistant", "content": ""})
    for piece in reply.pieces() if reply.text else []:
        yield chunk({"content": piece})
    for i, call in enumerate(reply.calls):
        call.id = call.id or _id("call")
        yield chunk({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                     "function": {"name": call.name, "arguments": json.dumps(call.args)}}]})
    yield chunk({}, "tool_calls" if reply.calls else "stop",
                usage={"prompt_tokens": 25, "completion_tokens": 12, "total_tokens": 37})


def chat_json(reply: Reply, model: str) -> dict:
    msg = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        msg["tool_calls"] = [{"id": c.id or _id("call"), "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.args)}} for c in reply.calls]
    return {"id": _id("chatcmpl"), "object": "chat.completion", "created": 1767225600, "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if reply.calls else "stop"}],
            "usage": {"prompt_tokens": 25, "completion_tokens": 12, "total_tokens": 37}}
