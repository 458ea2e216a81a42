"""The flow is one-way (docs/design.md §2): nothing in the library imports the command line."""
from __future__ import annotations

import ast

from conftest import ROOT

FRONT = {"chrollo.cli", "chrollo.entry"}
ALLOWED = {("chrollo.entry", "chrollo.cli"), ("chrollo.__main__", "chrollo.entry")}


def _imports() -> dict:
    """module -> the chrollo modules it imports (at any depth: lazy imports count too)."""
    mods = {}
    for p in (ROOT / "chrollo").rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, p in mods.items():
        pkg = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(p.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                # (``from . import tuning`` names the module's own package: a package is
                # imported before its modules, so that is no edge, only the submodule is)
                own = name.startswith(target + ".")
                found |= ({target} if not own else set()) | {f"{target}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in mods and m != name}
    return graph


def test_nothing_imports_the_command_line_but_its_own_front_door():
    graph = _imports()
    assert "chrollo.console" in graph  # (the walk saw the package)
    bad = sorted((m, t) for m, targets in graph.items() for t in targets
                 if t in FRONT and (m, t) not in ALLOWED)
    assert bad == []


def test_the_click_cli_and_the_fast_front_door_are_not_a_circle():
    graph = _imports()
    assert "chrollo.entry" not in graph["chrollo.cli"]


def test_no_two_modules_import_each_other_even_lazily():
    """No import circles (a lazy import inside a function counts: it is a circle all the same)."""
    graph = _imports()
    assert graph["chrollo.vault"]  # (the walk saw the imports)
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            mod, path = stack.pop()
            for t in graph.get(mod, ()):
                if t == start:
                    circles.append(" -> ".join(path + [t]))
                elif t not in seen:
                    seen.add(t)
                    stack.append((t, path + [t]))
    assert circles == []


def test_search_and_recall_never_import_the_mesh():
    """The peer switches are read through chrollo.vault: the search and recall path imports
    nothing of chrollo.mesh (not even lazily)."""
    graph = _imports()
    starts = [m for m in graph if m == "chrollo.recall" or m.split(".")[:2] == ["chrollo", "retrieval"]]
    assert "chrollo.recall" in starts
    seen, stack = set(), list(starts)
    while stack:
        for t in graph.get(stack.pop(), ()):
            if t not in seen:
                seen.add(t)
                stack.append(t)
    assert sorted(m for m in seen if m.startswith("chrollo.mesh")) == []
