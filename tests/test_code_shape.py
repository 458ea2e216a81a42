"""The code's shape (#29): retrieval stays readable as a pipeline (no function of
chrollo/retrieval/ over 60 lines), and cli.py parses, calls and prints — every human text it
prints is made in chrollo/output.py (or the library), never in cli.py itself."""
from __future__ import annotations

import ast

from conftest import ROOT

MAX_LINES = 60
PACKAGES = ["chrollo/retrieval", "chrollo/index"]


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


# ----------------------------------------------------------------------------- cli.py builds no text
# cli.py may print what output.py or the library returns; it may build text only where text is
# the command line's own declaration or its error contract: help (decorator arguments, `help=`,
# module-level help constants, evaluated at import when no command has data yet) and the
# message and hint of a UsageError/ChrolloError (console.fail renders those, --json carries
# them). Anything else that builds a string — an f-string, str.format, %, "…" + x, "sep".join(x)
# — or hands a string literal to a printing call is a rendering that belongs in output.py.
# (What it cannot see: a literal first kept in a variable, then printed. Review catches that.)

PRINTERS = {"click.echo", "click.secho", "click.confirm", "click.prompt", "print", "sys.stdout.write",
            "sys.stderr.write", "sys.stdout.buffer.write", "_echo", "_echo_streams", "_warn", "say"}
ERRORS = {"UsageError", "ChrolloError"}
# the only strings cli.py builds at run time that are not text for people, each with its reason
ALLOWED = {
    "' '.join(prompt)": "recall why: PROMPT's words (nargs=-1) parsed into one prompt: input, not output",
}


def _name(func) -> str:
    return ast.unparse(func)


def _is_text(node) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _builds_text(node) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return _is_text(node.func.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _is_text(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_text(node.left) or _is_text(node.right)
    return False


def _declaration_or_error(chain: list) -> bool:
    """Whether the node at the end of ``chain`` (its ancestors, outermost first) is help text,
    an error's message or hint, or runs at import (outside every function)."""
    if not any(isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for a in chain):
        return True
    for parent, child in zip(chain, chain[1:]):
        if isinstance(parent, ast.keyword) and parent.arg == "help":
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child in parent.decorator_list:
            return True
        if isinstance(parent, ast.Call) and _name(parent.func) in ERRORS and child is not parent.func:
            return True
    return False


def text_built_by_cli(source: str, allowed_seen: set | None = None) -> list:
    """"line: code" for each piece of human text the command line builds or prints itself
    (``allowed_seen`` collects the ALLOWED entries met on the way)."""
    found = []
    allowed_seen = set() if allowed_seen is None else allowed_seen

    def visit(node, chain):
        chain = chain + [node]
        if _builds_text(node) and not _declaration_or_error(chain):
            code = ast.unparse(node)
            if code not in ALLOWED:
                found.append(f"{node.lineno}: {code}")
            allowed_seen.add(code)
            return  # (one finding per expression, not one per nested piece)
        if isinstance(node, ast.Call) and _name(node.func) in PRINTERS:
            keys = {id(n.slice) for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Subscript)}
            literals = [a for arg in node.args for a in ast.walk(arg) if _is_text(a) and id(a) not in keys]
            if literals:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
                return
        for child in ast.iter_child_nodes(node):
            visit(child, chain)

    visit(ast.parse(source), [])
    return found


def test_cli_builds_no_human_text():
    """Both front doors: the click CLI and the click-free one (entry.py)."""
    seen: set = set()
    for front in ("cli.py", "entry.py"):
        found = text_built_by_cli((ROOT / "chrollo" / front).read_text("utf-8"), seen)
        assert found == [], f"{front} renders text itself (move it to chrollo/output.py):\n" + "\n".join(found)
    assert set(ALLOWED) <= seen, f"ALLOWED names code cli.py no longer has: {set(ALLOWED) - seen}"


def test_the_cli_check_sees_text_built_or_printed_in_a_command():
    src = '''
HELP = "x {n}".format(n=2)                                   # import time: help text


@click.option("--a", help=f"one of {', '.join(NAMES)}")      # help
def cmd(a, n):
    if a:
        raise UsageError(f"bad {a!r}", "e.g. " + NAMES[0])   # the error contract
    words = " ".join(prompt)                                 # in the table: input
    click.echo(f"done {n}")
    click.echo("a" + a, err=True)
    click.echo("%d files" % n)
    click.echo("\\n".join(a))
    click.echo("nothing here")
    label = "{} files".format(n)
    click.echo(lines(a), err=True)                           # a value from output: fine
    click.echo(report["vault"])                              # a value from the library: fine
    _echo(*report_lines(a))
'''
    assert [f.split(":")[0] for f in text_built_by_cli(src)] == ["10", "11", "12", "13", "14", "15"]
