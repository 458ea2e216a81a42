"""Retrieval stays readable as a pipeline (#29): no function of chrollo/retrieval/ over 60 lines."""
from __future__ import annotations

import ast

from conftest import ROOT

MAX_LINES = 60
PACKAGES = ["chrollo/retrieval"]


def long_functions(folder) -> list:
    """(file:function, lines) of every function or method longer than MAX_LINES (docstring,
    comments and blank lines inside it count: it is what a reader has to take in)."""
    out = []
    for p in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text("utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES:
                    out.append((f"{p.relative_to(folder)}:{node.name}", n))
    return out


def test_no_retrieval_function_is_over_60_lines():
    for pkg in PACKAGES:
        assert (ROOT / pkg / "__init__.py").is_file(), pkg  # (a package: the walk sees its modules)
        assert long_functions(ROOT / pkg) == []


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert long_functions(tmp_path) == [("m.py:long", MAX_LINES + 1)]
