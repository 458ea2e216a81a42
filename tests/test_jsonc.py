"""chrollo.jsonc: settings files with comments (Gemini CLI reads them so) — read, and edited
in place keeping every comment outside what changed. Property-based (hypothesis)."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chrollo import jsonc

KEYS = st.sampled_from(["hooks", "mcpServers", "theme", "a", "b", "chrollo", "other", "x/*y*/", "u//v"])
LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.just("http://h//p /* no */"))
VALUE = st.recursive(LEAF, lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(KEYS, kids, max_size=3)),
                     max_leaves=8)
OBJ = st.dictionaries(KEYS, VALUE, max_size=5)


def commented(obj: dict, notes: list) -> str:
    """``obj`` as indented JSON with a comment after every line and one before it."""
    lines = json.dumps(obj, indent=2).split("\n")
    out = ["// top"] + [f"{line} {notes[i % len(notes)]}" if not line.rstrip().endswith(",") or i % 2
                        else f"{line} /* c{i} */" for i, line in enumerate(lines)]
    return "\n".join(out) + "\n"


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(old=OBJ, new=OBJ, notes=st.lists(st.sampled_from(["// n", "/* m */", "/* a, b } */", ""]), min_size=1))
def test_edit_in_place_gives_the_new_data_and_keeps_untouched_comments(old, new, notes):
    text = commented(old, notes)
    assert jsonc.loads(text) == old
    out = jsonc.dumps_into(text, new)
    assert jsonc.loads(out) == new
    assert out.startswith("// top\n")
    if new == old:
        assert out == text


def test_strings_that_look_like_comments_are_strings():
    assert jsonc.loads('{"u": "http://x//y", "s": "a/*b*/", "q": "\\"//"} // c\n') == \
        {"u": "http://x//y", "s": "a/*b*/", "q": '"//'}
