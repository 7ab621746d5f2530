"""briefing's YAML subset against real YAML (issue 19, defect 7).

``yaml_cases.json`` holds frontmatter constructs and what a real YAML parser
reads in each (recorded once with PyYAML by ``record_yaml_cases.py``; the
suite itself needs no YAML library, as the TOML fallback is checked against
tomli). For every case, ``parse_frontmatter`` either reads exactly what YAML
reads in the three keys briefing uses, or raises a ParseError with a line. It
never denies on a guess (a skill name YAML does not hold) and never misses a
declaration silently.
"""
import json
from pathlib import Path

import pytest

from conftest import load_hook

DATA = json.loads((Path(__file__).parent / "yaml_cases.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]
UNREADABLE = object()  # YAML holds something the subset must refuse to read (not a list of strings)


@pytest.fixture(scope="module")
def hook():
    return load_hook()


def strings(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def expected(meaning):
    """(name, briefing skills, native skills) as briefing must read them, from what YAML read."""
    if "error" in meaning or "document" in meaning:
        return None  # YAML reads no frontmatter mapping: nothing may be declared
    name = meaning.get("name")
    if name is not None and not isinstance(name, str):
        name = UNREADABLE
    skills = None
    if "briefing" in meaning:
        briefing = meaning["briefing"]
        value = briefing.get("skills") if isinstance(briefing, dict) else UNREADABLE
        skills = value if value is None or strings(value) else UNREADABLE
    native = meaning.get("skills")
    if isinstance(native, str):
        native = [s.strip() for s in native.split(",") if s.strip()]  # Claude Code's comma string
    elif native is not None and not strings(native):
        native = UNREADABLE
    return name, skills, native


def test_the_cases_were_recorded():
    assert DATA["recorded"] and "PyYAML" in DATA["recorded"]
    assert all(case["yaml"] is not None for case in CASES)
    assert len({case["id"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_subset_reads_what_yaml_reads_or_refuses(hook, case):
    text = "---\n%s---\nbody\n" % case["frontmatter"]
    want = expected(case["yaml"])
    try:
        fm = hook.parse_frontmatter(text)
    except hook.ParseError as exc:
        assert not case["must_read"], "the subset must read this form: %s" % exc
        assert isinstance(exc.line, int) and exc.line >= 2, exc
        return
    got = (fm.name or None, fm.skills, fm.native)
    if want is None:
        assert not fm.skills and not fm.native, "YAML reads no mapping here, the subset read %r" % (got,)
        return
    assert UNREADABLE not in want, "YAML reads %r here; the subset guessed %r" % (case["yaml"], got)
    name, skills, native = want
    assert got[0] == (name or None)
    # [] and None both declare nothing; anything else must match exactly
    assert (got[1] or None) == (skills or None), (got, case["yaml"])
    assert (got[2] or None) == (native or None), (got, case["yaml"])
