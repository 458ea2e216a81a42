"""read_memory is what an agent's tool search finds when it looks for memory.

Claude Code 2.1.330 defers MCP tools: the first request lists them by name and search hint,
and the model loads one with ToolSearch. ``claude_code_score`` is that keyword scorer as the
2.1.330 binary implements it (name parts, search hint and description, per query word); the
tools it competes with are Claude Code's own deferred tools (their real search hints) and two
stand-ins for the built-in memory-store tools. (EndConversation, whose name would win any query
with "conversation", is left out: 2.1.330 enables it only behind a server-side flag that is off
by default.) ``bm25`` is a plain text-retrieval scorer, for
agents whose tool search is a generic one (Codex's ``tool_search`` is BM25-ranked).
"""
from __future__ import annotations

import math
import re

import pytest

from chrollo.mcp_server import TOOLS

QUERIES = ["memory", "past sessions", "previous conversation", "what did we do",
           "remember earlier work", "recall", "conversation history"]

# (name, search hint, description) of tools a Claude Code session also defers.
BUILTINS = [
    ("TodoWrite", "manage the session task checklist", "Use this tool to create and manage a structured task list for your current coding session."),
    ("WebFetch", "fetch and extract content from a URL", "Fetches content from a specified URL and processes it."),
    ("WebSearch", "search the web for current information", "Allows Claude to search the web and use the results to inform responses."),
    ("NotebookEdit", "edit Jupyter notebook cells (.ipynb)", "Completely replaces the contents of a specific cell in a Jupyter notebook."),
    ("TaskOutput", "check on a background shell command by task ID", "Retrieves output from a running or completed task."),
    ("KillShell", "kill a running background task", "Kills a running background bash shell by its ID."),
    ("ExitWorktree", "exit a worktree session and return to the original directory", "Leave the worktree session."),
    ("SendUserMessage", "send a message to the user \u2014 your primary visible output channel", "Send a message to the user."),
    ("ListMcpResourcesTool", "list resources from connected MCP servers", "List available resources from configured MCP servers."),
    ("CronCreate", "schedule a recurring or one-shot prompt", "Schedule a prompt to run later."),
    ("AskUserQuestion", "prompt the user with a multiple-choice question", "Asks the user a question when you need clarification."),
    ("Skill", "invoke a slash-command skill", "Execute a skill within the main conversation."),
    ("MemoryStoreRead", "read a document from a memory store", "Read a document from a memory store."),
    ("MemoryStoreList", "list the memory stores and the documents in them", "List the memory stores."),
    ("RemoteTrigger", "manage scheduled cloud agent routines; inspect their run history and logs", "Manage routines."),
]


def _candidates():
    out = [dict(name=f"mcp__chrollo__{t['name']}", server="chrollo", tool=t["name"],
                hint=t.get("_meta", {}).get("anthropic/searchHint", ""), desc=t["description"]) for t in TOOLS]
    out += [dict(name=n, server=None, tool=None, hint=h, desc=d) for n, h, d in BUILTINS]
    return out


def _parts(c):
    if c["server"]:
        coarse = [c["server"].lower(), c["tool"].lower()]
        parts = [p for x in coarse for p in re.split(r"[\s_.]+", x) if p]
        return parts, coarse, True
    parts = re.sub(r"([a-z])([A-Z])", r"\1 \2", c["name"]).replace("_", " ").lower().split()
    return parts, [c["name"].lower()], False


def claude_code_score(query: str, c: dict) -> int:
    parts, coarse, is_mcp = _parts(c)
    full = " ".join(parts)
    hint, desc = c["hint"][:4096].lower(), c["desc"].lower()
    score = 0
    for w in query.lower().split():
        rx = re.compile(rf"\b{re.escape(w)}\b")
        if w in parts:
            score += 12 if is_mcp else 10
        elif any(w in p for p in parts):
            score += 6 if is_mcp else 5
        if w in coarse:
            score += 12 if is_mcp else 10
        elif any(w in p for p in coarse):
            score += 4 if is_mcp else 3
        if w in full and score == 0:
            score += 3
        if hint and rx.search(hint):
            score += 4
        if rx.search(desc):
            score += 2
    return score


def _words(text: str) -> list:
    return re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower())


def bm25(query: str, cands: list) -> dict:
    docs = {c["name"]: _words(f"{c['name']} {c['hint']} {c['desc']}") for c in cands}
    avg = sum(map(len, docs.values())) / len(docs)
    out = {}
    for name, words in docs.items():
        s = 0.0
        for w in set(_words(query)):
            df = sum(w in d for d in docs.values())
            tf = words.count(w)
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / avg))
        out[name] = s
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_claude_code_tool_search_finds_read_memory_first(query):
    cands = _candidates()
    scores = {c["name"]: claude_code_score(query, c) for c in cands}
    ranked = sorted((n for n in scores if scores[n] > 0), key=lambda n: -scores[n])  # stable, like JS sort
    assert ranked and ranked[0] == "mcp__chrollo__read_memory", (query, sorted(scores.items(), key=lambda x: -x[1])[:4])
    runner_up = max(s for n, s in scores.items() if n != ranked[0])
    assert scores[ranked[0]] > runner_up, (query, scores)  # strictly first, not first by list order


@pytest.mark.parametrize("query", QUERIES)
def test_a_plain_bm25_tool_search_ranks_read_memory_high(query):
    """BM25 (Codex's deferred-tool search) favours short documents, and the stand-in
    memory-store descriptions are one line: read_memory must still lead chrollo's tools and
    make the top 3."""
    scores = bm25(query, _candidates())
    ranked = sorted(scores, key=lambda n: -scores[n])
    assert "mcp__chrollo__read_memory" in ranked[:3], (query, ranked[:4])
    assert scores["mcp__chrollo__read_memory"] > scores["mcp__chrollo__read_memory_file"]


def test_the_scorer_can_fail():
    """A tool named and described for something else is not found by these queries."""
    bland = dict(name="mcp__chrollo__grep_notes", server="chrollo", tool="grep_notes", hint="",
                 desc="Run a regular expression over markdown notes.")
    assert all(claude_code_score(q, bland) == 0 for q in QUERIES[1:4])
