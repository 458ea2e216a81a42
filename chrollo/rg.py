"""A thin wrapper around the ``rg`` binary: locate it, stream compact match rows per file.

We talk to ripgrep ourselves rather than through ``ripgrepy`` (GPL-3.0, mangles several
``-e`` patterns, hides exit codes). Output is requested as ``-o -n --heading -0``: one
NUL-terminated path per file followed by ``LINE:MATCH`` rows (~15 bytes a match against
~350 for ``--json``), read in large chunks and cut into per-file blocks with bytes
operations, so no Python code runs per matched line here.
"""
from __future__ import annotations

import os
import re
import select
import sys
import time

from .errors import ChrolloError

MAX_ARG_PATTERN = 8192  # bytes of regex passed on the command line; longer ones go by -f

RG_HINT = ("chrollo needs ripgrep: `pip install 'ripgrep>=14.1,<15'` in chrollo's environment "
           "(it ships the rg binary), or install rg with your package manager.")


def rg_path() -> str:
    """``rg`` next to the running Python first (the PyPI wheel's), then on PATH."""
    env = os.environ.get("CHROLLO_RG")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise ChrolloError("rg_not_found", f"CHROLLO_RG points at no executable: {env}", RG_HINT)
    here = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    from .executables import which

    found = which("rg")  # (not shutil.which: its import costs every search, and it takes "" for ".")
    if found:
        return found
    raise ChrolloError("rg_not_found", "ripgrep (rg) was not found", RG_HINT)


class Scan:
    """What a scan saw besides the matches."""

    def __init__(self):
        self.files_searched = 0
        self.errors: list = []        # rg's own error lines (unreadable files, …)
        self.returncode: int | None = None
        self.timed_out = False
        self.truncated = False        # stopped early at max_bytes


FOLDED_FORMS = 48  # forms given accented and full-width spellings in one regex (see words_regex)
# Never matches (an ASCII \b between two non-word bytes), 1,001 NFA states: see words_regex.
NO_FULL_DFA = r"|\xff\b\xff{1000}"


def words_regex(words: list, parts: list = ()) -> str:
    r"""One regex matching any of ``words`` as a whole word, case-insensitively (ripgrep's
    reading of terms.Forms.matcher, the one matcher search and recall share):
    ``(?i:\b(?:longest|…|short)\b)``; with ``parts``, also any identifier holding one of
    them as a part (snake_case, camelCase): ``parse_config``, ``loadSettings``.

    Not ``-F -w -e w1 -e w2 …``: with more than a handful of words that form is 3× slower in
    rg 14 (measured: 18 words 109 ms vs 26 ms on a 10 MB vault), and query expansion and
    inflections easily bring 20. Longest first, so "auth-service" wins over "auth". ASCII
    words use ASCII word boundaries (what the Python side assumes, and faster).

    A part match is reported as the whole identifier (``yaml_loader``), which the caller
    splits (kebab-case, dotted and path names need nothing: ``-``, ``.`` and ``/`` are word
    boundaries already). Case tells a camelCase part from a mere substring, so ``parts``
    (lowercase ASCII words) are matched case-sensitively where it matters: ``loadSettings``
    and ``load_settings`` hold "settings", ``reconfigure`` does not hold "config".
    """
    from .textnorm import CJK_CLASS, folded_regex, is_cjk

    cjk = sorted({w for w in words if is_cjk(w)}, key=lambda w: (-len(w), w))
    words = [w for w in words if not is_cjk(w)]
    if not words:  # (CJK bigrams only: every CJK run holding one; see textnorm)
        return _cjk_runs_regex(cjk, CJK_CLASS)
    alt = "|".join(re.sub(r"([^\w\s])", r"\\\1", w) for w in sorted(set(words), key=lambda w: (-len(w), w)))
    rx = rf"(?i:\b(?:{alt})\b)"
    ascii = all(w.isascii() for w in words)
    if ascii:
        # the same words spelled with accents or in full width (textnorm.folded_regex; the
        # collector folds what these report back to the word) — for the first FOLDED_FORMS of
        # them, in the order given (a query's terms come before their inflections): rg
        # compiles every alternative, ~0.3 ms a form, on every scan
        folded = [f for w in dict.fromkeys(words) if (f := folded_regex(w))][:FOLDED_FORMS]
        rx += "".join(f"|{f}" for f in folded)
    if parts:
        low = "|".join(sorted(set(parts), key=lambda w: (-len(w), w)))
        cap = "|".join(sorted({p[:1].upper() + p[1:] for p in parts}, key=lambda w: (-len(w), w)))
        idc, tail = "[A-Za-z0-9_]", "[A-Z_][A-Za-z0-9_]*"  # (a tail: _next… or Next…)
        # "…part, then the end of the identifier or a tail": as (?:tail)?\b where \b is
        # ASCII — the same matches as (?:\b|tail) (every match is a whole identifier: the
        # greedy tail runs to its end), and half the regex compile time in rg 14 (~30 ms →
        # ~15 ms per scan, measured: bench/rg_cost.py); with Unicode \b they differ.
        end = rf"(?:{tail})?\b" if ascii else rf"(?:\b|{tail})"
        rx += (rf"|{idc}*_(?i:{low}){end}"           # …_part, …_part_…, …_partNext
               rf"|\b(?i:{low}){tail}"               # part_…, partNext…
               rf"|{idc}*[a-z0-9](?:{cap}){end}")    # …Part, …Part_…, …PartNext
        if ascii:
            # rg 14 builds a full DFA for any regex of at most 1,000 NFA states (its
            # dfa_state_limit), up to 1 MB. For these identifier alternatives it spends
            # 15-35 ms on every scan doing so (measured on an empty file: 16 ms median over the
            # dev questions) and then searches no faster than its lazy DFA. An alternative that
            # can never match (\b between two non-word bytes) puts the regex past the limit:
            # compile ~4 ms, the same rows, full scans of 100 MB no slower (bench/rg_cost.py).
            rx += NO_FULL_DFA
    rx = f"(?-u:{rx})" if ascii else rx
    return rx + "|" + _cjk_runs_regex(cjk, CJK_CLASS) if cjk else rx


def _cjk_runs_regex(grams: list, cjk_class: str) -> str:
    """Every CJK run holding one of ``grams``, reported whole (a run credits each gram it
    holds: overlapping grams would be lost to rg's non-overlapping matches)."""
    return f"[{cjk_class}]*(?:{'|'.join(map(re.escape, grams))})[{cjk_class}]*"


def rows_after(rows: bytes, end: int) -> bytes:
    """``rows`` (in line order) without those on lines up to ``end``."""
    pos, n = 0, len(rows)
    while pos < n and int(rows[pos:rows.index(b":", pos)]) <= end:
        pos = rows.index(b"\n", pos) + 1
    return rows[pos:]


def _path_of(piece: bytes, info: Scan) -> bytes:
    """The path that ends ``piece`` (what comes before its NUL), with any line rg wrote on
    stdout that is not a file's rows (a "binary file matches" notice: each ends in a blank
    line) moved to ``info.errors``: rg's diagnostics never enter the row stream."""
    cut = piece.rfind(b"\n\n")
    if cut < 0:
        return piece
    info.errors += [ln.decode("utf-8", "replace") for ln in piece[:cut].split(b"\n") if ln]
    return piece[cut + 2:]


def _spawn(cmd: list, stdin: bytes | None = None) -> tuple[int, int, int]:
    """Start ``cmd`` with stdout and stderr on pipes: (pid, stdout fd, stderr fd); ``stdin``
    (if given) is written to its standard input, which is then closed.

    os.posix_spawn rather than subprocess: importing subprocess costs the recall path
    several milliseconds, and nothing else of it is needed here.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if stdin is not None else (None, None)
    actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
               (os.POSIX_SPAWN_CLOSE, out_r), (os.POSIX_SPAWN_CLOSE, err_r)]
    if in_r is not None:
        actions += [(os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_CLOSE, in_w)]
    try:
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)
    except BaseException:
        for fd in (out_r, err_r, in_w):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, in_r):
            if fd is not None:
                os.close(fd)
    if in_w is not None:
        # rg reads every pattern before it prints anything: writing it all first cannot deadlock
        try:
            with open(in_w, "wb") as fh:
                fh.write(stdin)
        except BrokenPipeError:
            pass  # rg exited early (it says why on stderr)
    return pid, out_r, err_r


def scan(patterns: list[str], paths: list[str], *, globs: tuple = ("*.md",),
         timeout: float = 30.0, max_bytes: int = 1 << 30, info: Scan | None = None,
         chunk: int = 1 << 20, on_data=None, parts: list = (), regex: str | None = None):
    """Yield ``(path, rows)`` per matching file, both bytes; rows are ``b"LINE:MATCH\\n"``.

    ``patterns`` are literal words, matched as whole words, case-insensitively; ``parts``
    words also match inside identifiers (see :func:`words_regex`). Symlinks are
    not followed and ignore files are not read (a vault is data, not a source tree). ``info``
    gets the stats, errors and exit code. Exit 1 (no match) is normal; errors (exit 2, e.g.
    an unreadable file) land in ``info.errors`` and partial results are kept. ``regex``: this
    regex instead of the words'. Output is read
    as it comes, so memory stays flat however much matches; the scan stops early
    (``truncated``) after ``max_bytes`` of output, or on ``timeout``. ``on_data(buffer)`` is
    called with each buffer of whole rows before its files are yielded.
    """
    info = info if info is not None else Scan()
    regex = words_regex(patterns, parts) if regex is None else regex
    # --text: a file holding a NUL byte is read like any other. Without it rg skips such a file
    # when it walks a folder but, given it by name (the index's candidates, the hook's
    # batches), searches it and prints "X.md: binary file matches …" among the rows: the two
    # disagree, and that line is no path (see _path_of).
    cmd = [rg_path(), "--no-config", "--no-ignore", "--text", "-o", "-n", "-H", "--heading", "-0", "--stats",
           "--color", "never"]
    # A long query (a pasted log) would overflow the argument list ("Argument list too long"
    # at 128 KiB): past a few KB the pattern goes through a pattern file, rg's stdin.
    long = len(regex) > MAX_ARG_PATTERN
    cmd += ["-f", "-"] if long else ["-e", regex]
    for g in globs:
        cmd += ["-g", g]
    cmd += ["--", *paths]
    pid, out_fd, err_fd = _spawn(cmd, regex.encode("utf-8") + b"\n" if long else None)
    # One poll loop reads both pipes and keeps the time (no drain thread, no timer thread:
    # starting two threads per scan and importing threading cost the recall path more than
    # the loop does). The timeout is checked between reads, so it fires at the latest one
    # consumer step late; rows rg wrote before it was killed are still read.
    poller = select.poll()
    poller.register(out_fd, select.POLLIN)
    poller.register(err_fd, select.POLLIN)
    err_chunks: list[bytes] = []
    err_open, killed = True, False
    kill_at = time.monotonic() + timeout
    read, finished, searched = 0, False, False
    try:
        # Stream shape: PATH\0 ROWS \n PATH\0 ROWS \n ... \n STATS. Rows never hold a blank
        # line, so in every piece between two NULs the first "\n\n" ends the rows.
        pending, path = b"", None
        while True:
            if killed:
                ready = poller.poll()
            else:
                left = kill_at - time.monotonic()
                ready = poller.poll(max(0, int(left * 1000) + 1)) if left > 0 else []
                if not ready and time.monotonic() >= kill_at:
                    info.timed_out = killed = True
                    os.kill(pid, 9)
                    continue
            data = None
            for fd, _ev in ready:
                if fd == err_fd:
                    got = os.read(err_fd, 65536)
                    if got:
                        err_chunks.append(got)
                    else:
                        poller.unregister(err_fd)
                        err_open = False
                else:
                    data = os.read(out_fd, chunk)  # what is there: parse while rg still scans
            if data is None:
                continue
            if not data:
                break
            read += len(data)
            buf = pending + data
            if on_data is not None:
                on_data(buf)
            pieces = buf.split(b"\0")
            pending = pieces.pop()
            for piece in pieces:
                if path is None:
                    path = _path_of(piece, info)
                    continue
                cut = piece.find(b"\n\n")
                yield path, piece[:cut + 1]
                path = _path_of(piece[cut + 2:], info)
            if read >= max_bytes:
                info.truncated = True
                break
        tail = pending
        if path is not None and not info.truncated:
            cut = pending.find(b"\n\n")
            rows, tail = (pending, b"") if cut < 0 else (pending[:cut + 1], pending[cut + 2:])
            yield path, rows
        for ln in tail.split(b"\n"):
            if ln.endswith(b" files searched"):
                info.files_searched = int(ln.split()[0])
                searched = True
        finished = not info.truncated
    finally:
        if not finished and not killed:
            try:
                os.kill(pid, 9)  # early stop, or the consumer closed the generator
            except ProcessLookupError:
                pass
        os.close(out_fd)
        _pid, status = os.waitpid(pid, 0)
        info.returncode = os.waitstatus_to_exitcode(status)
        while err_open and (got := os.read(err_fd, 65536)):  # (rg is gone: EOF comes)
            err_chunks.append(got)
        os.close(err_fd)
        errors = b"".join(err_chunks).decode("utf-8", "replace").splitlines()
        info.errors += [e.rstrip() for e in errors if e.strip()]
        if finished and not info.timed_out and info.returncode not in (0, 1) and not info.errors:
            info.errors = [f"rg exited with code {info.returncode}"]
    if finished and not searched and not read and not info.errors and not info.timed_out:
        # rg always ends with its --stats, even when nothing matches: a program that ends
        # without them did not search (a CHROLLO_RG that is not rg), and its exit 1 is not
        # rg's "no match"
        env = os.environ.get("CHROLLO_RG")
        raise ChrolloError("rg_error", f"{cmd[0]} exited with code {info.returncode} without searching",
                           f"CHROLLO_RG={env} is not ripgrep: unset it or point it at rg." if env else RG_HINT)
