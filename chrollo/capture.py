"""Capture: payloads + transcript units → turns appended to the session file, each exactly once.

Per session, a small JSON state file in ``$CHROLLO_HOME/state/capture/`` (keyed by a hash of
the full session id) holds, for each vault the session was written to:

* ``offset`` — where the next transcript read starts: the start of the last user prompt, so
  a capture reads one turn, not the whole transcript, and a turn that was still being
  written last time (Claude's transcript can lag at ``Stop``) is read again;
* ``keys`` — the units already written or seen (record uuids, message ids, byte offsets);
* ``tokens`` — digests of text written from a *payload* (a prompt, a final message) that
  the transcript may show later under a key chrollo has not seen: such a unit is skipped
  once, and its token consumed;
* ``pending`` — the prompt of the turn in flight (from ``UserPromptSubmit``-like events). It
  is written only when the transcript cannot supply that prompt (no transcript, or pi).

A turn's time is the time its harness recorded for it in the transcript, never the hook's
clock, so that live capture and import (which has only the transcript) write the same bytes.
Claude Code and Codex write their transcripts from a queue: at ``Stop`` the answer (even the
prompt) may not be in it yet. The capture pass then waits for it (at most
:data:`ANSWER_WAIT`) instead of writing the payload's copy with the hook's time; only a
transcript that never shows it leaves the payload's copy as the record. Claude Code may write
the turn only once its Stop hook has *returned* (``TRANSCRIPT_AFTER_STOP``): that hook keeps the
answer in the state as ``deferred`` and leaves a pass behind (:func:`settle`) that writes the
turn once the transcript holds it (or the payload's copy, at the Stop's time, after
:data:`SETTLE_WAIT`); any pass that catches up first (SessionEnd, the next prompt) settles it.

Everything happens under an exclusive per-session lock. Before the turns are appended (one
locked write, see :mod:`chrollo.session`) the state they lead to is saved with an ``intent``
(the file, its size, the length being written); after, without it. A pass that finds an
intent left by a killed one keeps its state if the append is whole, else cuts the torn bytes
off and starts over from the file: a turn is written whole, once.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import json
import os

from . import vault as _vault
from . import clock as _clock
from . import layout as _layout
from .fileformat import safe_id_prefix
from .harness.common import Unit, digest, norm

MAX_KEYS = 2000   # only the last turn is ever read again; this is plenty
MAX_TOKENS = 200
MIN_PROMPT = 3   # prompts shorter than this ("k", "?") are not stored
ANSWER_WAIT = 3.0  # seconds a capture waits for a lagging transcript to show the turn's answer
SETTLE_WAIT = 5.0  # seconds a deferred turn waits for a transcript written after its Stop hook


def append_turns(meta, turns: list, vault=None):
    """Library entry point: append ``turns`` (:class:`chrollo.session.Turn`) to the session's
    file, through the privacy filter capture applies (forgotten lines; redaction when asked)."""
    from .privacy import writer_scrub
    from .session import SessionWriter

    return SessionWriter(meta, vault, scrub=writer_scrub).append(turns)


def policy(session_id: str, cwd: str, prompt: str | None) -> tuple:
    """What may be kept of a session a hook is called for, decided once (docs/design.md §11):
    (why nothing may be captured now — None: capture it —, whether this prompt made the
    session private). A prompt asking for privacy forgets the session here and now (its
    tombstone first, then its files): nothing more of it is kept."""
    from . import privacy

    private = prompt is not None and privacy.asks_private(prompt)
    if private:
        from .forget import forget_ids

        forget_ids([session_id])
    return privacy.capture_off(session_id, cwd or None), private


class Capture:
    """One capture pass over a session (use as a context manager: holds the session lock)."""

    def __init__(self, session_id: str, harness: str, cwd: str = "", parent: str | None = None,
                 vault: str | None = None, fsync: bool = True, dry_run: bool = False,
                 indexes: dict | None = None):
        self.session_id, self.harness, self.cwd, self.parent = session_id, harness, cwd, parent
        self.vault, self.fsync, self.dry_run = vault, fsync, dry_run
        self.indexes = indexes  # vault -> VaultIndex, shared across a bulk run (import)
        # what an already written file holds, when state/ has no record: read on first need
        # (a new session's first prompt has nothing to check, and finding the file lists the vault)
        self.existing = None
        self._check_file = False
        self.last_transcript = None
        self.state_path = _layout.capture_record(session_id)
        self.lock_path = _layout.capture_lock(session_id)  # (lock 1 of the order: chrollo.layout)
        self.state: dict = {}
        self._other_vaults: dict = {}
        self._lock_fd: int | None = None

    def payload_prompt(self, text: str | None) -> None:
        """The prompt a capture event's payload carries: the turn's prompt unless one is
        pending already (its ``<private>`` spans withheld)."""
        if text is not None and text.strip() and "pending" not in self.state:
            from .privacy import scrub_private

            self.state["pending"] = {"text": scrub_private(text), "from": "payload"}

    # -- lock + state ---------------------------------------------------------
    def __enter__(self) -> "Capture":
        self._lock_fd = _vault.open_lock(self.lock_path)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        # One state file per session, one record in it per vault: a session follows the vault
        # it is told to use (resumed with CHROLLO_MEMORIES_DIR=B, it starts B's record and
        # writes into B), and the file is still one per session for whoever drops it (forget).
        self.vault = self.vault or _vault.memories_path(self.cwd or None)
        vaults = _vault.read_json(self.state_path).get("vaults")
        vaults = {v: st for v, st in vaults.items() if isinstance(st, dict)} if isinstance(vaults, dict) else {}
        self.state = vaults.pop(self.vault, {})
        self._other_vaults = vaults
        intent = self.state.pop("intent", None)
        if intent is not None:
            self._recover(intent)
        self._check_file = not self.state
        return self

    def __exit__(self, *exc) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _recover(self, intent) -> None:
        """The last pass died (kill -9, a full disk) while appending. A whole append keeps the
        state saved with it; a torn one is cut off the file (and set aside in state/torn/),
        and the pass starts over from what the file holds — never a torn turn, never a twice
        written one."""
        path, size, length = (intent.get(k) for k in ("file", "size", "length")) \
            if isinstance(intent, dict) else (None, None, None)
        if isinstance(path, str) and isinstance(size, int) and isinstance(length, int):
            try:
                now = os.path.getsize(path)
            except OSError:
                now = None
            if now == size + length:
                return
            if now is not None and size < now < size + length:
                from .session import cut_back

                torn = cut_back(self.session_id, path, size)
                if torn:
                    folder = _vault.make_private_dirs(_layout.torn_dir())
                    name = f"{os.path.basename(path)}.{size}.torn"
                    _vault.write_private(os.path.join(folder, name), torn.decode("utf-8", "replace"))
        self.state = {}

    def _existing(self):
        """If the session's file exists but state/ was lost (it is disposable), what it holds:
        (prompt digests, tool lines — both as counters, the agent text), so a pass that reads
        the transcript from the start does not write those turns again."""
        vault = self.vault
        # (cheap first: a new session has no file, and the first prompt should not pay for
        # importing the reader to learn that)
        index = self._index(vault)
        if index is not None:  # a bulk run (import) lists the vault once, not per session
            if not index.candidates(self.session_id):
                return None
            names = None
        else:
            prefix = safe_id_prefix(self.session_id)
            try:
                names = os.listdir(vault)  # (once: find_session_file below reads the same names)
            except OSError:
                return None
            if not any(prefix in name for name in names):
                return None
        from .session import find_session_file, read_session

        try:
            from pathlib import Path

            path = find_session_file(Path(vault), self.session_id, index, names)
            if path is None:
                return None
            turns = read_session(path).turns
        except OSError:
            return None
        from collections import Counter

        users = Counter(digest(t.text) for t in turns if t.role == "user")
        tools = Counter(x for t in turns if t.role == "agent" for x in t.tools)
        text = " ".join(norm(t.text) for t in turns if t.role == "agent")
        return users, tools, text

    def _in_file(self, u: Unit) -> Unit | None:
        """``u`` minus what the existing file already holds (None if nothing is left)."""
        users, tools, text = self.existing
        if u.role == "user":
            h = digest(u.text)
            if users[h] > 0:
                users[h] -= 1
                return None
            return u
        parts = []
        for p in u.parts:
            if isinstance(p, str):
                if p.strip() and norm(p) in text:
                    continue
            elif tools[p.render()] > 0:
                tools[p.render()] -= 1
                continue
            parts.append(p)
        return Unit("agent", u.when, parts, u.key, u.new_turn)

    def save(self) -> None:
        if self.dry_run:
            return
        st = self.state
        st["keys"] = st.get("keys", [])[-MAX_KEYS:]
        st["tokens"] = st.get("tokens", [])[-MAX_TOKENS:]
        data = {"session_id": self.session_id, "vaults": {**self._other_vaults, self.vault: st}}
        # (json.dumps, not json.dump: dump streams through Python, 5x slower on 2,000 keys)
        _vault.write_private(self.state_path, json.dumps(data, ensure_ascii=False))

    # -- the pass ---------------------------------------------------------------
    def read_transcript(self, adapter, path: str | None, agent_id: str | None = None,
                        answer: str | None = None) -> list | None:
        """The transcript's units since the saved offset (None if there is no readable transcript).

        ``answer``: the finished turn's final message from the payload. Until the transcript
        holds it (and so the turn's own times), it is read again as it grows, for at most
        :data:`ANSWER_WAIT` seconds.
        """
        if not path:
            return None
        st = self.state
        offset = st.get("offset", 0) if st.get("transcript") == path else 0
        try:
            if offset and os.path.getsize(path) < offset:
                offset = 0  # rewritten or truncated: read it all again (keys prevent repeats)
            tr = adapter.read_transcript(path, offset, agent_id)
            if isinstance(answer, str) and answer.strip() and not self._known_answer(answer):
                tr = _until_answer(adapter, path, offset, agent_id, tr, answer)
        except (OSError, UnicodeError):
            return None
        st["transcript"], st["offset"] = path, tr.resume
        self.last_transcript = tr
        if tr.cwd and not self.cwd:
            self.cwd = tr.cwd
        return tr.units

    def _known_answer(self, answer: str) -> bool:
        """Was ``answer`` seen in the transcript or written already (a replayed payload)?"""
        h = digest(answer)
        last = self.state.get("last_final")
        return h in self.state.get("recent_agent", ()) or (isinstance(last, list) and h in last[:1])

    def holds_answer(self, units: list, answer: str) -> bool:
        """Do ``units`` (or what was written before) hold the turn's ``answer``?"""
        return self._known_answer(answer) or _answered(units, answer)

    def run(self, units: list, *, prompt: str | None = None,
            final: str | None = None, when: dt.datetime | None = None,
            abort_if_empty: bool = False, defer: bool = False, settle: bool = False) -> list:
        """Write what is new in ``units`` (+ the pending prompt, + ``final``); returns the turns.

        ``prompt``: the prompt of a turn starting now; it becomes ``pending`` after the
        catch-up. ``final``: the finished turn's last agent message, from the payload.
        ``abort_if_empty``: a turn with no agent content (aborted) stores nothing and keeps
        the pending prompt for a retry (pi's ``agent_end``). ``defer``: ``final`` is kept as
        ``deferred`` (with this pass's time) for a later pass, and its turn (from its prompt on)
        is not written now;
        ``settle``: a deferred answer is written now unless ``units`` hold it.
        """
        from . import privacy

        privacy.rules(reload=True)  # (a forget may have run since this process started)
        if privacy.capture_off(self.session_id, self.cwd or None):
            return []  # forgotten, excluded or opted out: never written, live or imported
        if privacy.asks_private(prompt) or any(u.role == "user" and privacy.asks_private(u.text) for u in units):
            from .forget import forget_ids

            forget_ids([self.session_id.split(":", 1)[0]],
                       self.vault, capture_locked=True)
            return []
        units = [_private(u) for u in units]
        prompt = privacy.scrub_private(prompt) if prompt else prompt
        final = privacy.scrub_private(final) if isinstance(final, str) else final
        st = self.state
        keys = st.setdefault("keys", [])
        seen = set(keys)
        tokens = st.setdefault("tokens", [])
        now = when or _clock.now(strict=False)
        final_at = now
        stash, final = (final, None) if defer and isinstance(final, str) and final.strip() else (None, final)
        if stash is not None:  # the turn in flight is written whole later, as import writes it
            units = units[:max((i for i, u in enumerate(units) if u.role == "user"), default=0)]
        deferred = st.get("deferred")
        if (settle or stash) and final is None and isinstance(deferred, dict) and isinstance(deferred.get("text"), str):
            final, final_at = deferred["text"], _time(deferred.get("when")) or now
            del st["deferred"]
        fresh: list = []
        user_texts = set()
        last_turn_text: list = []  # agent text after the last user unit, written or not
        asked = now  # when the prompt in flight was asked
        if prompt is not None and units and units[-1].role == "user" and norm(units[-1].text) == norm(prompt):
            # The prompt in flight, already in the transcript: it is written with its answer, at
            # the transcript's time (as an import writes it), not this hook's a moment later.
            asked = units[-1].when or now
            units = units[:-1]
        recent_user = st.setdefault("recent_user", [])    # digests of prompts the transcript
        recent_agent = st.setdefault("recent_agent", [])  # showed lately, and of answer texts
        for u in units:
            if u.role == "user":
                user_texts.add(norm(u.text))
                last_turn_text = []
                _add(recent_user, digest(u.text))
            else:
                last_turn_text.append(norm(u.text))
                for p in u.parts:
                    if isinstance(p, str) and p.strip():
                        _add(recent_agent, digest(p))
            if u.key is not None and u.key in seen:
                continue
            if u.key is not None:
                seen.add(u.key)
                keys.append(u.key)
            if self._check_file:
                self.existing, self._check_file = self._existing(), False
            if self.existing is not None:
                u = self._in_file(u)
                if u is None:
                    continue
            if u.role == "user":
                if _take(tokens, digest(u.text)):  # already written from a payload
                    continue
                fresh.append(u)
            else:
                parts = [p for p in u.parts if not (isinstance(p, str) and _take(tokens, digest(p)))]
                fresh.append(Unit("agent", u.when, parts, u.key, u.new_turn))
        pending = st.get("pending")
        if isinstance(final, str) and final.strip():
            texts = [t for t in last_turn_text + [norm(u.text) for u in fresh if u.role == "agent"] if t]
            if _final_is_new(st, final, texts, recent_agent, fresh, pending):
                fresh.append(Unit("agent", final_at, [final], None))
                tokens.append(digest(final))
                st["last_final"] = [digest(final), digest(pending["text"]) if _is_pending(pending) else ""]
            elif _is_pending(pending) and st.get("last_final") == [digest(final), digest(pending["text"])]:
                del st["pending"]  # a replayed capture payload: its prompt was written with its answer
        answered = any(u.role == "agent" and u.parts for u in fresh)
        if abort_if_empty and not answered:
            return []  # aborted: store nothing, keep the state (and the pending prompt) as it was

        pending = st.get("pending")
        if _is_pending(pending):
            if norm(pending["text"]) in user_texts or digest(pending["text"]) in recent_user:
                del st["pending"]  # the transcript (or the payload's messages) has it
            elif prompt is not None or answered:
                # Nothing else will supply this prompt: write it before this turn's answer.
                pu = Unit("user", _time(pending.get("when")) or now, [pending["text"]], None)
                fresh.insert(_first_agent(fresh), pu)
                tokens.append(digest(pending["text"]))
                del st["pending"]
        turns = to_turns(fresh)
        if prompt is not None and prompt.strip():
            st["pending"] = {"text": prompt, "when": asked.isoformat()}
        if stash is not None:
            st["deferred"] = {"text": stash, "when": now.isoformat()}
        if turns and not self.dry_run:
            self._append(turns)
        self.save()
        return turns

    def _append(self, turns: list) -> None:
        from .session import SessionMeta, SessionWriter

        started = turns[0].when
        meta = SessionMeta(self.session_id, started, self.harness, self.cwd or "", self.parent)
        vault = self.vault
        from pathlib import Path

        from .privacy import writer_scrub

        path = SessionWriter(meta, Path(vault), fsync=self.fsync, index=self._index(vault),
                             known=self.state.get("file"), record=False,
                             scrub=writer_scrub).append(turns, before=self._intend)
        self.state.pop("intent", None)
        if path is not None:
            self.state["file"] = str(path)
            if path.parent == Path(vault):  # (the mesh publishes a vault's top folder only)
                from .changes import note

                note(vault, path.name)  # (its next publication reads what changed, not every file)
            # (an import brings the index up to date once, at its end; no index file, no
            # import of the index's modules: 1 ms of every turn where there is none)
            if self.indexes is None:
                from .index import held

                if held(vault):
                    from .index.update import update

                    update(vault, [path])

    def _intend(self, path: str | None, size: int, length: int) -> None:
        """Before the bytes go out (the writer's lock held): save the state as it will be,
        with what is being written, so the next pass can tell a whole append from a torn one."""
        self.state["intent"] = {"file": path, "size": size, "length": length}
        if path:
            self.state["file"] = path
        self.save()

    def _index(self, vault: str):
        if self.indexes is None:
            return None
        if vault not in self.indexes:
            from .session import VaultIndex

            self.indexes[vault] = VaultIndex(vault)
        return self.indexes[vault]


def settle(session_id: str, harness: str, cwd: str, transcript: str, wait: float = SETTLE_WAIT) -> list:
    """The pass a Stop hook leaves behind (``defer``): once ``transcript`` holds the deferred
    answer — or after ``wait`` seconds — write the turn; nothing if another pass settled it.
    Returns the turns written."""
    import time

    from .harness import adapter
    from .harness.common import regular_file

    mod = adapter(harness)
    deadline = time.monotonic() + wait
    while True:
        with Capture(session_id, harness, cwd) as cap:
            deferred = cap.state.get("deferred")
            if not (isinstance(deferred, dict) and isinstance(deferred.get("text"), str)):
                return []
            units = cap.read_transcript(mod, regular_file(transcript)) or []
            if time.monotonic() >= deadline or cap.holds_answer(units, deferred["text"]):
                return cap.run(units, settle=True)
        time.sleep(0.05)


def catch_up_when_written(session_id: str, harness: str, cwd: str, transcript: str, mark: str | None = None,
                          wait: float = SETTLE_WAIT) -> list:
    """The pass a capture hook leaves behind where the harness writes the turn to its
    transcript only after its hooks ran (Copilot CLI flushes ``events.jsonl`` as it exits):
    once the adapter's ``transcript_written(path, mark)`` says the file holds the finished turn
    (``mark``: what names that hook's own record, from its payload) — or after ``wait``
    seconds — catch up whatever is new. Returns the turns written."""
    import time

    from .harness import adapter
    from .harness.common import regular_file

    mod = adapter(harness)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not mod.transcript_written(transcript, mark):
        time.sleep(0.05)
    with Capture(session_id, harness, cwd) as cap:
        units = cap.read_transcript(mod, regular_file(transcript)) or []
        return cap.run(units, settle=True)


def to_turns(units: list) -> list:
    """Units → turns: a user unit is a turn; consecutive agent units merge into one."""
    if not units:
        return []
    from .session import Turn  # only when there is something to write (dataclasses: ~10 ms)

    turns: list = []
    for u in units:
        when = u.when or _clock.now(strict=False)
        if u.role == "user":
            if len(u.text.strip()) >= MIN_PROMPT:
                turns.append(Turn.user(u.text, when, u.key))
            continue
        parts = [p for p in u.parts if not isinstance(p, str) or p.strip()]
        if not parts:
            continue
        if turns and turns[-1].role == "agent" and not u.new_turn:
            turns[-1].parts.extend(parts)
        else:
            turns.append(Turn.agent(parts, when, u.key))
    return [t for t in turns if t.has_content()]


def _private(u: Unit) -> Unit:
    """``u`` with its ``<private>`` spans withheld (see :mod:`chrollo.privacy`)."""
    from .privacy import scrub_private

    parts = [scrub_private(p) if isinstance(p, str) else p for p in u.parts]
    return u if parts == u.parts else Unit(u.role, u.when, parts, u.key, u.new_turn)


def _is_pending(pending) -> bool:
    return isinstance(pending, dict) and isinstance(pending.get("text"), str)


def _final_is_new(st: dict, final: str, texts: list, recent_agent: list, fresh: list, pending) -> bool:
    """Is the payload's final message (Claude's ``last_assistant_message``, Gemini's
    ``prompt_response``) an answer the transcript has not supplied and chrollo has not written?

    * The transcript is the record: when the turn's text there already holds the final — or
      *begins* it (Gemini hands over the whole reply, a space, then its later stream chunks
      again) — the transcript's version is kept and the payload adds nothing. A reply the
      transcript holds only in part is completed from the transcript on the next pass.
    * Without a transcript the same words can be a new answer ("Done." to three prompts): a
      final equal to the last one written is a replay only when no new turn began since —
      no new prompt in the transcript, none announced by a prompt hook, and the payload's own
      prompt (if any) is the one that final answered.
    """
    h = digest(final)
    if _holds(texts, final) or h in recent_agent:
        return False
    last = st.get("last_final")
    if not (isinstance(last, list) and len(last) == 2 and last[0] == h):
        return True
    if any(u.role == "user" for u in fresh):
        return True
    if _is_pending(pending):
        return pending.get("from") != "payload" or digest(pending["text"]) != last[1]
    return False


def _holds(texts: list, final: str) -> bool:
    """Do a turn's agent ``texts`` (normalised) hold the payload's ``final`` — or begin it
    (Gemini's garbled copy)?"""
    f = norm(final)
    return bool(texts) and (f in " ".join(texts) or f.startswith(texts[-1]))


def _answered(units: list, answer: str) -> bool:
    """Does the last turn of ``units`` hold ``answer``?"""
    return _holds(_last_turn_texts(units), answer)


def _last_turn_texts(units: list) -> list:
    """The normalised agent texts after the last user unit."""
    texts: list = []
    for u in units:
        if u.role == "user":
            texts = []
        elif u.text:
            texts.append(norm(u.text))
    return texts


def _until_answer(adapter, path: str, offset: int, agent_id, tr, answer: str):
    """``tr``, read again from ``offset`` each time the file grows, until its last turn holds
    ``answer`` or :data:`ANSWER_WAIT` has passed (the harness is still flushing its queue)."""
    import time

    deadline = time.monotonic() + ANSWER_WAIT
    size = os.path.getsize(path)
    held = _answered(tr.units, answer)
    while not held and time.monotonic() < deadline:
        time.sleep(0.05)
        grown = os.path.getsize(path)
        if grown != size:  # (looked at again only when the transcript was read again)
            size = grown
            tr = adapter.read_transcript(path, offset, agent_id)
            held = _answered(tr.units, answer)
    return tr


def _add(recent: list, token: str, keep: int = 100) -> None:
    if token not in recent:
        recent.append(token)
        del recent[:-keep]


def _take(tokens: list, token: str) -> bool:
    """Consume one occurrence of ``token``; True if there was one."""
    if token in tokens:
        tokens.remove(token)
        return True
    return False


def _first_agent(units: list) -> int:
    """Where a pending prompt goes: before the agent units that end the list."""
    i = len(units)
    while i > 0 and units[i - 1].role == "agent":
        i -= 1
    return i


def _time(value) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None

