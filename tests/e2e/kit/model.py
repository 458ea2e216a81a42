"""The scripted model behind every fake server: reads a normalised request, decides a reply.

It behaves like a real model as far as the harnesses can tell: it answers text (in several
chunks if asked), calls the tools it is offered (the shell, ``read_memory``, Claude Code's
``ToolSearch`` to load a deferred tool first), and answers once the tool results come back.
What it does is steered by *directives* in the user's prompt, one per line::

    say: <text>          answer exactly <text> (default: "pong from the fake model")
    chunks: <n>          stream the answer in n pieces
    run: <command>       call the shell tool with <command> first, then answer
    recall: <query>      call read_memory(<query>) first (loading it through ToolSearch if
                         the harness only lists it as deferred), then answer
    subagent: <task>     (Claude Code) start a background subagent with <task>, then answer
    cut once             the first attempt at this prompt is cut mid-stream (the harness retries,
                         or asks for the rest after what it kept: then the rest is the answer)
    fail: <status>       answer every attempt with an HTTP error of that status

Recall blocks chrollo injects (``[chrollo-recall]`` …) are stripped before directives are
read: a past prompt quoted in an excerpt never steers the model.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

RECALL_MARKER = "[chrollo-recall]"
DEFAULT_ANSWER = "pong from the fake model"


@dataclass
class Call:
    name: str
    args: dict
    id: str = ""


@dataclass
class Request:
    """A model request, whatever its wire format."""
    wire: str
    tools: list                       # names of the tools whose schemas were sent
    deferred: list = field(default_factory=list)   # tools listed by name only (Claude Code)
    prompt: str = ""                  # the latest user message's text
    results: list = field(default_factory=list)    # tool results since that message: (name, text)
    calls: list = field(default_factory=list)      # tool calls the model made since that message
    aux: bool = False                 # a side request (titles, classifiers): no tools offered
    json_schema: dict | None = None   # a structured-output request (Gemini's side checks)
    delivered: str | None = None      # the harness kept this much of a cut answer: answer the rest


@dataclass
class Reply:
    text: str = ""
    chunks: int = 1
    calls: list = field(default_factory=list)
    cut: bool = False                 # stop the stream after the first chunk, no clean end
    error: int = 0                    # HTTP status of an API error
    json: dict | None = None

    def pieces(self) -> list:
        """The text split into ``chunks`` pieces (word boundaries where possible)."""
        n = max(1, min(self.chunks, len(self.text) or 1))
        if n == 1:
            return [self.text]
        size = -(-len(self.text) // n)
        return [self.text[i:i + size] for i in range(0, len(self.text), size)]


def strip_recall(text: str) -> str:
    """``text`` without what chrollo's recall block quotes: from its marker on, every fenced
    excerpt is dropped (only labels and notes, which carry no directives, remain)."""
    at = text.find(RECALL_MARKER)
    if at < 0:
        return text
    out, fence = [], None
    for line in text[at:].split("\n"):
        s = line.strip()
        if fence is None and re.fullmatch(r"`{3,}", s):
            fence = s
        elif fence is not None:
            if s == fence:
                fence = None
        else:
            out.append(line)
    return text[:at] + "\n".join(out)


def directives(prompt: str) -> dict:
    out: dict = {}
    for line in strip_recall(prompt).splitlines():
        # (OpenCode's `run` wraps a prompt holding spaces in double quotes: a model reads past them)
        line = line.strip().removeprefix('"').removesuffix('"').strip()
        m = re.match(r"(say|chunks|run|recall|subagent|fail):\s*(.+)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
        elif line == "cut once":
            out["cut"] = True
    return out


SHELL_TOOLS = ("Bash", "bash", "shell", "shell_command", "exec_command", "run_shell_command")


def shell_call(tools: list, command: str) -> Call | None:
    for name in SHELL_TOOLS:
        if name in tools:
            if name == "shell":
                return Call(name, {"command": ["bash", "-lc", command]})
            if name == "exec_command":
                return Call(name, {"cmd": command})
            return Call(name, {"command": command, **({"description": "run it"} if name == "Bash" else {})})
    return None


def memory_tool(names: list) -> str | None:
    return next((n for n in names if n == "read_memory" or n.endswith("read_memory")), None)


class Model:
    """Decides replies; remembers which prompts it already cut once. Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._cut: set = set()
        # None: load a listed tool by name (``select:``), else search "memory past sessions"
        self.tool_search_query: str | None = None

    def respond(self, req: Request) -> Reply:
        if req.json_schema is not None:
            return Reply(json=fill_schema(req.json_schema))
        if req.aux:
            return Reply(text="Fake title")
        d = directives(req.prompt)
        if "fail" in d:
            return Reply(error=int(d["fail"]) if d["fail"].isdigit() else 500)
        done = {c.name for c in req.calls}
        if "run" in d and not any(n in SHELL_TOOLS for n in done):
            call = shell_call(req.tools, d["run"])
            if call:
                return Reply(calls=[call])
        if "recall" in d and not any(n.endswith("read_memory") for n in done):
            tool = memory_tool(req.tools)
            if tool:
                return Reply(calls=[Call(tool, {"query": d["recall"]})])
            # Claude Code lists MCP tools by name only (or says their server is still
            # connecting): a real model loads one through ToolSearch, by keywords.
            if "ToolSearch" in req.tools and "ToolSearch" not in done:
                listed = memory_tool(req.deferred)
                query = f"select:{listed}" if listed and not self.tool_search_query else \
                    self.tool_search_query or "memory past sessions"
                return Reply(calls=[Call("ToolSearch", {"query": query, "max_results": 5})])
        if "subagent" in d and "Agent" in req.tools and "Agent" not in done:
            return Reply(calls=[Call("Agent", {"description": "background task", "prompt": d["subagent"],
                                               "run_in_background": True})])
        text = d.get("say", DEFAULT_ANSWER)
        if req.results and "say" not in d:
            text = "Done. " + " | ".join(r[1][:200].replace("\n", " ") for r in req.results)
        if req.delivered and text.startswith(req.delivered) and not req.results:
            return Reply(text=text[len(req.delivered):])   # (Qwen Code resumes a dropped stream)
        reply = Reply(text=text, chunks=int(d.get("chunks", "1")) if d.get("chunks", "1").isdigit() else 1)
        if d.get("cut"):
            key = (req.wire, req.prompt)
            with self._lock:
                if key not in self._cut:
                    self._cut.add(key)
                    reply.cut = True
                    reply.chunks = max(reply.chunks, 2)
        return reply


def fill_schema(schema: dict) -> object:
    """A plausible value for a JSON schema (Gemini's next-speaker and routing checks)."""
    t = str(schema.get("type", "object")).lower()
    if t == "object":
        props = schema.get("properties") or {}
        return {k: _field(k, v) for k, v in props.items()}
    return _field("", schema)


def _field(name: str, schema: dict):
    if name == "next_speaker":
        return "user"
    if name == "model_choice":
        return "flash"
    enum = schema.get("enum")
    if enum:
        return enum[0]
    t = str(schema.get("type", "string")).lower()
    return {"boolean": False, "number": 0, "integer": 0, "array": [], "object": fill_schema(schema)}.get(t, "ok")
