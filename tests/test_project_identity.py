"""#34 "One project across machines": a session's project is its repository (normalised remote
URL, else root commit, else folder), recorded at capture in the frontmatter's ``repository``;
``--project``, Obsidian's ``project`` link, stats, ``exclude`` and ``forget --project`` use it.
Real git, real CLI subprocesses, two chrollo homes syncing through a shared folder."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import run, run_json
from hookkit import hook, ok, payload
from meshkit import introduce, mesh, transport_args  # noqa: F401  (mesh: a fixture)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
       "-c", "protocol.file.allow=always"]


def git(*args, cwd=None):
    p = subprocess.run([*GIT, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@pytest.fixture
def upstream(tmp_path):
    """One repository with one commit: what every clone below shares."""
    up = tmp_path / "upstream"
    git("init", "-q", up)
    (up / "README").write_text("shop\n")
    git("add", "README", cwd=up)
    git("commit", "-qm", "first", cwd=up)
    return up


def clone(upstream, dest, url=None):
    dest.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", upstream, dest)
    if url is not None:
        git("remote", "set-url", "origin", url, cwd=dest)
    return dest


def capture(home, tmp, sid, cwd, prompt, answer, **env):
    """One real turn through `chrollo hook` (Codex's events, no transcript), in ``cwd``."""
    common = dict(transcript_path=None, session_id=sid, cwd=str(cwd))
    ok(hook(home, "codex", "UserPromptSubmit", payload("codex", "UserPromptSubmit", tmp, prompt=prompt, **common), **env))
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp, last_assistant_message=answer, **common), **env))


def frontmatter(path) -> dict:
    from chrollo.fileformat import read_frontmatter

    return read_frontmatter(path)


def own_file(home):
    files = sorted((home / "memories").glob("*.md"))
    assert len(files) == 1, files
    return files[0]


def two_machines(mesh, tmp_path, upstream, own: bool):
    """alpha (a clone at src/app, origin spelled the ssh way) and bravo (a clone at work/shop,
    the https way), paired through a shared folder; bravo captured one session there (alpha
    too if ``own``) and alpha received it. Returns (alpha, bravo, alpha's clone, [bravo's file at alpha])."""
    a, b = mesh("alpha"), mesh("bravo")
    mine = clone(upstream, tmp_path / "alpha" / "src" / "app", "git@github.com:Org/App.git")
    theirs = clone(upstream, tmp_path / "bravo" / "work" / "shop", "https://github.com/org/app")
    if own:
        capture(a.home, tmp_path / "a", "aaaa1111-0000-4000-8000-000000000001", mine,
                "why is the checkout page slow", "the checkout page waits on the tax service")
    capture(b.home, tmp_path / "b", "bbbb2222-0000-4000-8000-000000000002", theirs,
            "rotate the checkout tax service credentials", "rotated; the checkout reads them from vault")
    a.pair(b)
    b.pair(a)
    introduce(transport_args("folder", tmp_path), a, b)
    peer = list((a.vault / "peers" / "bravo").glob("*.md"))
    assert len(peer) == 1
    return a, b, mine, peer


# ------------------------------------------------------------------ the "done when"

def test_a_peers_session_in_another_clone_of_the_repository_is_the_same_project(mesh, tmp_path, upstream):  # noqa: F811
    """Two machines, one repository cloned at different paths (and folder names) with the
    remote spelled two ways: bravo's session shows under alpha's project in search (by path,
    name and URL), sessions, Obsidian's project link and stats."""
    a, b, mine, peer = two_machines(mesh, tmp_path, upstream, own=True)

    # Obsidian: the same readable link (the repository's name), whatever the folders are called
    assert {frontmatter(f).get("project") for f in (own_file(a.home), peer[0])} == {"[[app]]"}

    both = {"aaaa1111-0000-4000-8000-000000000001", "bbbb2222-0000-4000-8000-000000000002"}
    for project in (str(mine), "app", "git@github.com:org/app.git", "github.com/Org/App"):
        p, out = run_json(["search", "checkout tax service", "--project", project], a.home)
        assert p.returncode == 0, p.stderr
        assert {h["session_id"] for h in out["hits"]} == both, project
        p, out = run_json(["sessions", "--project", project], a.home)
        assert {s["session_id"] for s in out["sessions"]} == both, project
        assert {s["project"] for s in out["sessions"]} == {"app"}
        assert {s["repository"] for s in out["sessions"]} == {"github.com/org/app"}

    p, out = run_json(["stats", "--by", "project", "--since", "2026-10-25"], a.home)
    assert p.returncode == 0, p.stderr
    by = {}
    for row in out["activity"]["series"]:
        for k, v in row.get("by", {}).items():
            by[k] = by.get(k, 0) + v
    assert by == {"app": 4}

    # the identity travels inside the sealed file
    for f in (own_file(a.home), peer[0]):
        fm = frontmatter(f)
        assert fm["repository"] == "github.com/org/app" and "app" in fm["tags"]


def test_doctor_says_which_repository_sessions_here_record(tmp_path, upstream):
    mine = clone(upstream, tmp_path / "src" / "app", "https://tok@github.com/Org/App.git")
    p = run(["doctor", "--json"], tmp_path / "home", cwd=mine)
    (check,) = [c for c in json.loads(p.stdout)["checks"] if c["name"] == "repository"]
    assert "github.com/org/app" in check["detail"] and "[[app]]" in check["detail"] and "tok" not in p.stdout


def test_a_folder_inside_the_repository_still_means_that_folder(tmp_path, upstream):
    """Only a repository's root folder (or its URL) names the repository: a sub-folder keeps
    meaning "sessions started there or below"."""
    home = tmp_path / "home"
    mine = clone(upstream, tmp_path / "src" / "app", "git@github.com:org/app.git")
    (mine / "docs").mkdir()
    capture(home, tmp_path / "t1", "cccc3333-0000-4000-8000-000000000003", mine, "where is the checkout", "in src")
    capture(home, tmp_path / "t2", "dddd4444-0000-4000-8000-000000000004", mine / "docs",
            "document the checkout", "written")
    _, out = run_json(["sessions", "--project", str(mine / "docs")], home)
    assert [s["session_id"][:4] for s in out["sessions"]] == ["dddd"]
    _, out = run_json(["sessions", "--project", str(mine)], home)
    assert {s["session_id"][:4] for s in out["sessions"]} == {"cccc", "dddd"}


# ------------------------------------------------------------------ what identifies a repository

def test_credentials_in_the_remote_url_are_never_recorded(tmp_path, upstream):
    home = tmp_path / "home"
    repo = clone(upstream, tmp_path / "app", "https://deploy:ghp_s3cretT0ken@GitHub.com:443/Org/App.git/")
    capture(home, tmp_path / "t", "eeee5555-0000-4000-8000-000000000005", repo, "what is our ci setup", "actions")
    data = own_file(home).read_bytes()
    assert b"s3cret" not in data and b"deploy" not in data
    assert frontmatter(own_file(home))["repository"] == "github.com/org/app"


@pytest.mark.parametrize("url,key", [
    ("git@github.com:Org/App.git", "github.com/org/app"),
    ("https://github.com/org/app", "github.com/org/app"),
    ("ssh://git@github.com:22/org/app.git", "github.com/org/app"),
    ("git+ssh://git@github.com/Org/App", "github.com/org/app"),
    ("https://user:token@gitlab.example.com/group/sub/app.git", "gitlab.example.com/group/sub/app"),
    ("https://dev.azure.com/org/proj/_git/app", "dev.azure.com/org/proj/app"),
    ("git@ssh.dev.azure.com:v3/org/proj/app", "dev.azure.com/org/proj/app"),
    ("/srv/git/app.git", None), ("../app", None), ("file:///srv/git/app.git", None),
    ("https://host/a/../b", None), ("https://host/org/app\x1b]52;c;eA==\x07", None),
    ("https://ho st/org/app", None), ("https://" + "a" * 3000, None), ("", None),
])
def test_remote_urls_normalise_to_one_key(url, key):
    from chrollo.repository import normalise_url

    assert normalise_url(url) == key


def test_a_worktree_and_a_clone_without_a_network_remote(tmp_path, upstream):
    """``.git`` as a file (``gitdir:``, a linked worktree) reads the main repository's config;
    clones whose remote is a path on this machine are one project by their root commit, and
    git is asked for it once per repository."""
    home = tmp_path / "home"
    main = clone(upstream, tmp_path / "one" / "app", "git@github.com:org/app.git")
    tree = tmp_path / "wt"
    git("worktree", "add", "-q", tree, "-b", "feature", cwd=main)
    assert (tree / ".git").is_file()
    capture(home, tmp_path / "t1", "ffff6666-0000-4000-8000-000000000006", tree, "work on the feature", "ok")
    assert frontmatter(own_file(home))["repository"] == "github.com/org/app"

    home2 = tmp_path / "home2"
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=upstream)
    for n, where in enumerate(("x/app", "y/shop")):
        capture(home2, tmp_path / f"u{n}", f"abab{n}000-0000-4000-8000-00000000000{n}",
                clone(upstream, tmp_path / where), f"question number {n} about it", "answer")
    files = sorted((home2 / "memories").glob("*.md"))
    assert [frontmatter(f)["repository"] for f in files] == [f"root:{root}"] * 2
    assert {frontmatter(f)["project"] for f in files} == {"[[app]]", "[[shop]]"}  # folder names: nothing better
    assert len(list((home2 / "state" / "repositories").glob("*.json"))) == 2  # one per clone, not per session
    _, out = run_json(["sessions", "--project", str(tmp_path / "x" / "app")], home2)
    assert len(out["sessions"]) == 2


def test_a_submodule_is_its_own_repository(tmp_path, upstream):
    """A submodule's ``.git`` is a file with a relative ``gitdir:`` into the superproject's
    ``.git/modules/``: its own config and objects say which repository it is."""
    lib = tmp_path / "lib"
    git("init", "-q", lib)
    git("commit", "-q", "--allow-empty", "-m", "lib", cwd=lib)
    app = clone(upstream, tmp_path / "app", "git@github.com:org/app.git")
    git("submodule", "add", "-q", lib, "vendor/lib", cwd=app)
    sub = app / "vendor" / "lib"
    assert (sub / ".git").read_text().startswith("gitdir: ../../.git/modules/")
    git("remote", "set-url", "origin", "https://github.com/org/lib.git", cwd=sub)
    home = tmp_path / "home"
    capture(home, tmp_path / "t", "5ab00000-0000-4000-8000-000000000005", sub, "patch the vendored lib", "ok")
    fm = frontmatter(own_file(home))
    assert (fm["repository"], fm["project"]) == ("github.com/org/lib", "[[lib]]")


def test_the_root_commit_is_read_from_the_files_loose_or_packed_never_by_git(tmp_path, upstream):
    """No git on the hook's PATH: a history of loose commits (a merge of an unrelated history
    in it) gives HEAD's first-parent root, as git names it — and so does the same history
    packed, its commits stored whole or as deltas against an offset or an object id (#42:
    git is never asked)."""
    repo = clone(upstream, tmp_path / "x" / "app")  # (its remote is a path here: no URL key)
    git("checkout", "-q", "--orphan", "vendored", cwd=repo)
    git("commit", "-qm", "another root", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--allow-unrelated-histories", "-m", "merge", "vendored", cwd=repo)
    body = "a long shared commit message line\n" * 300  # (similar commits: git stores them as deltas)
    for n in range(12):
        git("commit", "-q", "--allow-empty", "-m", f"work {n}\n\n{body}", cwd=repo)
    root = git("rev-list", "--first-parent", "--max-parents=0", "HEAD", cwd=repo)
    nogit = tmp_path / "empty-bin"
    nogit.mkdir()
    for n, pack in enumerate((None, "repack.useDeltaBaseOffset=true", "repack.useDeltaBaseOffset=false")):
        if pack:
            git("-c", pack, "repack", "-qadf", "--depth=50", "--window=250", cwd=repo)
            assert not list((repo / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*"))
            kinds = git("verify-pack", "-v", *map(str, (repo / ".git" / "objects" / "pack").glob("*.idx")), cwd=repo)
            assert any(ln.split()[1:2] == ["commit"] and len(ln.split()) >= 7 for ln in kinds.splitlines())
            for f in (tmp_path / f"h{n - 1}" / "state" / "repositories").glob("*"):
                f.unlink()  # (the root is found once per repository: walk again)
        home = tmp_path / f"h{n}"
        capture(home, tmp_path / f"t{n}", f"1234000{n}-0000-4000-8000-000000000001", repo, "where is the root", "here",
                PATH=str(nogit))
        assert frontmatter(own_file(home))["repository"] == f"root:{root}", pack


def test_a_commit_reader_agrees_with_git_on_every_commit_and_refuses_damage(tmp_path, upstream):
    """Every commit's first parent, read from a pack of deltas, is git's; a pack whose bytes
    are damaged gives no answer rather than a wrong one or an exception."""
    from chrollo.repository.objects import Objects

    repo = clone(upstream, tmp_path / "app")
    for n in range(20):
        git("commit", "-q", "--allow-empty", "-m", f"step {n}\n\n" + "shared body\n" * 200, cwd=repo)
    git("repack", "-qadf", "--depth=50", "--window=250", cwd=repo)
    shas = git("rev-list", "HEAD", cwd=repo).split()
    with Objects(str(repo / ".git" / "objects")) as objects:
        for sha in shas:
            parents = git("rev-list", "--parents", "-n1", sha, cwd=repo).split()[1:]
            assert objects.commit(sha) == (parents[0] if parents else "")
        assert objects.commit("0" * 40) is None
    pack = next((repo / ".git" / "objects" / "pack").glob("*.pack"))
    data = bytearray(pack.read_bytes())
    for at in range(12, len(data), 7):
        data[at] ^= 0x5A
    pack.write_bytes(bytes(data))
    with Objects(str(repo / ".git" / "objects")) as objects:
        got = [objects.commit(sha) for sha in shas]
    assert all(g is None or g == (git("rev-list", "--parents", "-n1", s, cwd=repo).split()[1:] or [""])[0]
               for g, s in zip(got, shas))
    assert got.count(None) > len(shas) // 2


def test_no_repository_no_field_and_old_files_keep_matching(tmp_path, make_session):
    """A folder outside any repository records no ``repository`` (the file is as before);
    files without the field match by folder name and path as they always did."""
    home = tmp_path / "home"
    plain = tmp_path / "notes"
    plain.mkdir()
    capture(home, tmp_path / "t", "9999aaaa-0000-4000-8000-000000000009", plain, "plain folder question", "ok")
    assert "repository" not in frontmatter(own_file(home))
    old = tmp_path / "old"
    make_session(old, "77770000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "old checkout talk")],
                 cwd="/home/user/app")
    for project in ("app", "/home/user/app"):
        _, out = run_json(["sessions", "--dir", old, "--project", project], home)
        assert [s["session_id"] for s in out["sessions"]] == ["77770000-x"]


@pytest.mark.parametrize("craft", ["huge", "cut", "fifo", "escape", "include-other-user", "gitdir-loop",
                                   "gitdir-device"])
def test_a_hostile_repository_never_hangs_escapes_or_reaches_the_file(tmp_path, craft):
    """A crafted ``.git`` (a cloned tarball): bounded reads, no FIFO opened for reading, no
    include of a file another user owns followed, no control character recorded — the
    session is captured as a folder's."""
    home = tmp_path / "home"
    repo = tmp_path / "evil"
    dot = repo / ".git"
    dot.mkdir(parents=True)
    (dot / "objects").mkdir()
    if craft == "huge":
        (dot / "config").write_text("[core]\n" + "# pad\n" * 20_000 + '[remote "origin"]\nurl = https://h.example/o/r\n')
    elif craft == "cut":  # the bytes read end inside the URL: no key from half a URL
        head = '[remote "origin"]\n\turl = https://h.example/org/'
        (dot / "config").write_bytes(b"#" * (64 * 1024 - len(head) - 1) + b"\n" + head.encode() + b"application\n")
    elif craft == "fifo":
        os.mkfifo(dot / "config")
    elif craft == "escape":
        (dot / "config").write_text('[remote "origin"]\n\turl = "https://h.example/o/\\u001b]52;c;eA==\x07r"\n'
                                    '[remote "b"]\n\turl = https://h.example/\x1b[2Jx\n')
    elif craft == "include-other-user":  # (git would read it; a file someone else owns is not)
        if os.geteuid() != 0:
            pytest.skip("making a file another user owns needs root")
        secret = tmp_path / "secret.cfg"
        secret.write_text('[remote "origin"]\n\turl = https://h.example/leaked/secret\n')
        os.chown(secret, 65534, 65534)
        (dot / "config").write_text(f"[include]\n\tpath = {secret}\n")
    else:
        shutil.rmtree(dot)
        dot.write_text("gitdir: .\n" if craft == "gitdir-loop" else "gitdir: /dev/zero\n")
    capture(home, tmp_path / "t", "8888bbbb-0000-4000-8000-000000000008", repo, "a question in the evil repo", "ok")
    data = own_file(home).read_bytes()
    fm = frontmatter(own_file(home))
    assert "repository" not in fm  # (huge: the remote sits past the bytes read)
    assert b"\x1b" not in data and b"\\u001b" not in data and b"leaked" not in data
    assert fm["project"] == "[[evil]]"


# ------------------------------------------------------------------ exclude and forget by repository

def test_forget_by_a_folder_never_deletes_what_its_claimed_origin_names(tmp_path, upstream):
    """#42: a downloaded archive whose config claims the origin of the user's real repository:
    `forget --project ./download --yes` forgets the download's sessions only; the real
    repository's are kept and the report says so (and how to forget them by URL)."""
    home = tmp_path / "home"
    real = clone(upstream, tmp_path / "src" / "app", "https://github.com/org/app")
    download = tmp_path / "Downloads" / "app-main"
    (download / ".git").mkdir(parents=True)
    (download / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/org/app\n')
    capture(home, tmp_path / "t1", "c1a10000-0000-4000-8000-000000000001", real, "the real work on billing", "ok")
    capture(home, tmp_path / "t2", "c1a10000-0000-4000-8000-000000000002", download, "poking at a download", "ok")
    files = sorted((home / "memories").glob("*.md"))
    assert {frontmatter(f)["repository"] for f in files} == {"github.com/org/app"}
    real_file = next(f for f in files if "billing" in f.name)

    p = run(["forget", "--project", download, "--yes"], home)
    assert p.returncode == 0, p.stderr
    assert sorted((home / "memories").glob("*.md")) == [real_file]
    assert "kept  1 other session file recording the repository github.com/org/app" in p.stdout
    assert "chrollo forget --project github.com/org/app" in p.stdout


def test_an_origin_from_an_include_or_rewritten_by_insteadof_is_the_one_git_uses(tmp_path, upstream):
    """#42: exclusion by URL holds whatever spelling resolves to it as git resolves it — a
    `url.<base>.insteadOf` in ~/.gitconfig, an origin in an [include]d or [includeIf
    "gitdir:"] file — without running git."""
    user = tmp_path / "user"
    user.mkdir()
    (user / ".gitconfig").write_text('[url "git@github.com:"]\n\tinsteadOf = gh:\n'
                                     f'[includeIf "gitdir:{tmp_path}/inc/"]\n\tpath = {user}/inc.cfg\n')
    (user / "inc.cfg").write_text('[remote "origin"]\n\turl = https://github.com/org/included\n')
    short = clone(upstream, tmp_path / "short" / "secret", "gh:org/secret")
    included = tmp_path / "inc" / "proj"
    (included / ".git").mkdir(parents=True)
    (included / ".git" / "config").write_text("[core]\n\tbare = false\n")
    dotfile = tmp_path / "dot" / "proj"
    (dotfile / ".git").mkdir(parents=True)
    (dotfile / "remotes.cfg").write_text('[remote "origin"]\n\turl = git@github.com:org/dotted.git\n')
    (dotfile / ".git" / "config").write_text("[include]\n\tpath = ../remotes.cfg\n")
    home = tmp_path / "home"
    env = {"HOME": str(user), "XDG_CONFIG_HOME": str(user / "xdg")}
    p = run(["exclude", "add", "github.com/org/secret", "github.com/org/included", "github.com/org/dotted"], home, **env)
    assert p.returncode == 0, p.stderr
    for n, folder in enumerate((short, included, dotfile)):
        capture(home, tmp_path / f"t{n}", f"e4c10000-0000-4000-8000-00000000000{n}", folder, "a private question", "ok",
                **env)
    assert not (home / "memories").exists() or not list((home / "memories").glob("*.md"))
    p = run(["doctor", "--json"], home, cwd=short, **env)
    assert "github.com/org/secret" in p.stdout


def test_a_repository_another_user_owns_gives_no_identity(tmp_path, upstream):
    """#42: a `.git` someone else owns (a shared temp folder above the working one) is not
    read at all — as git's safe.directory refuses it; the session is the folder's."""
    if os.geteuid() != 0:
        pytest.skip("making a folder another user owns needs root")
    shared = clone(upstream, tmp_path / "shared", "https://github.com/attacker/claims")
    for dirpath, dirnames, filenames in os.walk(shared / ".git"):
        for n in dirnames + filenames:
            os.lchown(os.path.join(dirpath, n), 65534, 65534)
    os.lchown(shared / ".git", 65534, 65534)
    work = shared / "mine"
    work.mkdir()
    home = tmp_path / "home"
    capture(home, tmp_path / "t", "07e40000-0000-4000-8000-000000000001", work, "a question in my folder", "ok")
    assert "repository" not in frontmatter(own_file(home))


def test_exclude_and_forget_take_the_repository_on_every_machine(mesh, tmp_path, upstream, monkeypatch):  # noqa: F811
    a, b, mine, peer = two_machines(mesh, tmp_path, upstream, own=False)

    # forget by the folder: what the user can verify (its sessions' recorded cwd); the same
    # repository's sessions elsewhere are named, kept, and forgotten only by naming the URL
    p, out = run_json(["forget", "--project", str(mine), "--dry-run"], a.home)
    assert p.returncode == 0, p.stderr
    assert out["sessions"] == []
    assert out["same_repository_kept"] == {"repository": "github.com/org/app", "files": [str(peer[0])]}
    p, out = run_json(["forget", "--project", "git@github.com:org/app.git", "--dry-run"], a.home)
    assert [s["path"] for s in out["sessions"]] == [str(peer[0])]

    p, out = run_json(["exclude", "add", str(mine)], a.home)
    assert out["exclude"] == [str(mine.resolve()), "github.com/org/app"]
    from chrollo import privacy

    monkeypatch.setenv("CHROLLO_HOME", str(a.home))
    try:
        assert privacy.rules(reload=True).excluded(None, frontmatter(peer[0])["repository"])
        assert privacy.excluded_file(str(peer[0]))  # recall never injects it
        # a new session in another clone of it on this machine is not captured
        other = clone(upstream, tmp_path / "alpha" / "elsewhere", "https://github.com/ORG/app.git")
        capture(a.home, tmp_path / "a2", "aaaa9999-0000-4000-8000-000000000009", other, "a secret question", "no")
        assert not list(a.vault.glob("*.md"))
        p, out = run_json(["exclude", "remove", str(mine)], a.home)
        assert out["exclude"] == []
        p, out = run_json(["exclude", "add", "git@github.com:org/app"], a.home)
        assert out["exclude"] == ["github.com/org/app"]
        assert privacy.excluded_file(str(peer[0]))
    finally:
        privacy.rules(reload=True)
