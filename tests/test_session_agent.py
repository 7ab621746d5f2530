"""``claude --agent NAME`` main sessions: SessionStart briefing, again after compaction (issue 8).

Under ``--agent`` Claude Code puts ``agent_type`` into the SessionStart payload and preloads
nothing itself, so the hook delivers the agent's ``briefing:`` skills *and* its native
``skills:`` as SessionStart ``additionalContext``, split across the ``--part`` handlers
exactly like SubagentStart. Without ``agent_type`` SessionStart stays the pre-flight:
``systemMessage`` only, never ``hookSpecificOutput``.
"""
import random
import re

import pytest

from conftest import CLAUDE_OUTPUT_LIMIT, agent_md, skill_md, skills_files, text_of
from framing import ABORT_OPEN, SKILL_OPEN, rebuild

PA = "project/.claude/agents/%s.md"
UA = "home/.claude/agents/%s.md"
PS = "project/.claude/skills/%s/SKILL.md"
US = "home/.claude/skills/%s/SKILL.md"

BRIEFING_SOURCES = ["startup", "resume", "compact"]


def fm(*lines, body="You review code.\n"):
    return "\n".join(("---",) + lines + ("---",)) + "\n" + body






def session(sb, source, agent=None, **kwargs):
    """Every registered SessionStart --part handler for a Claude Code session."""
    fields = {"source": source}
    if agent is not None:
        fields["agent_type"] = agent
    results = sb.run_parts(sb.payload("SessionStart", **fields), **kwargs)
    for r in results:
        if r.out.strip():
            assert isinstance(r.data, dict), r
    return results


def printed(results):
    return [i for i, r in enumerate(results, 1) if r.out.strip()]


def contexts(results):
    return [r.context for r in results if r.context is not None]


def delivered(results):
    """Rebuild a SessionStart briefing; checks event name, the cap, and the parts used."""
    ctxs = contexts(results)
    assert ctxs, results
    for r in results:
        if r.context is not None:
            assert r.data["hookSpecificOutput"]["hookEventName"] == "SessionStart", r
            assert len(r.context) <= CLAUDE_OUTPUT_LIMIT, len(r.context)
    got = rebuild(ctxs)
    assert not got.aborted
    (n,) = set(got.parts.values())
    assert [i for i, r in enumerate(results, 1) if r.context is not None] == list(range(1, n + 1))
    return got


def no_hook_specific_output(results):
    for r in results:
        assert "hookSpecificOutput" not in (r.data or {}), r


def occurrences(results, name):
    return len(re.findall(r'<skill name="%s"' % re.escape(name), "".join(contexts(results))))


# --------------------------------------------------------------------------------------------
# 1 + 2. Briefing the agent at startup and resume, and again after compaction
# --------------------------------------------------------------------------------------------

SKILLS = {"alpha": "ALPHA: check every return value.\n",
          "beta": "BETA: name things for what they do.\n",
          "gamma": "GAMMA: tests first.\n"}

AGENTS = [
    # case                              agent file "rev"                                                  delivered (each once)
    ("briefing only",                   agent_md("rev", ["alpha", "beta"]),                                  ["alpha", "beta"]),
    ("briefing and native",             agent_md("rev", ["alpha"], native=["beta", "gamma"]),                ["alpha", "beta", "gamma"]),
    ("same skill in both",              agent_md("rev", ["alpha", "beta"], native=["beta"]),                 ["alpha", "beta"]),
    ("native only (list)",              agent_md("rev", native=["beta", "gamma"]),                           ["beta", "gamma"]),
    ("native only (comma string)",      fm("name: rev", "description: r", "skills: gamma, alpha"),           ["gamma", "alpha"]),
    ("native only (flow list)",         fm("name: rev", "description: r", "skills: [beta]"),                 ["beta"]),
    ("twice in briefing",               agent_md("rev", ["alpha", "alpha"]),                                 ["alpha"]),
]


@pytest.mark.parametrize("text, expect", [c[1:] for c in AGENTS], ids=[c[0] for c in AGENTS])
@pytest.mark.parametrize("source", BRIEFING_SOURCES)
def test_agent_session_is_briefed(sandbox, source, text, expect):
    files = skills_files(SKILLS)
    files[PA % "rev"] = text
    sb = sandbox(files)
    results = session(sb, source, "rev")
    got = delivered(results)
    assert got.agent == "rev"
    assert got.skills == {name: SKILLS[name] for name in expect}
    assert got.dirs == {name: str(sb.project / ".claude/skills" / name) for name in expect}
    for name in SKILLS:
        assert occurrences(results, name) == (1 if name in expect else 0), name


LOCATIONS = [
    # case                      files                                                                spawn
    ("user-level agent",        {UA % "rev": agent_md("rev", ["alpha"])},                               "rev"),
    ("nested project agent",    {"project/.claude/agents/team/r.md": agent_md("rev", ["alpha"])},       "rev"),
    ("user-level skill",        {PA % "rev": agent_md("rev", ["home-skill"]),
                                 US % "home-skill": skill_md("home-skill", "ALPHA: check every return value.\n")},
                                                                                                         "rev"),
]


@pytest.mark.parametrize("files, agent", [c[1:] for c in LOCATIONS], ids=[c[0] for c in LOCATIONS])
def test_agent_session_lookup_like_subagents(sandbox, files, agent):
    sb = sandbox(dict(skills_files(SKILLS), **files))
    got = delivered(session(sb, "startup", agent))
    assert list(got.skills.values()) == [SKILLS["alpha"]]


QUIET_AGENTS = [
    # case                       agent_type     agent file
    ("no declaration",           "plain",       agent_md("plain")),
    ("unknown agent",            "nobody",      agent_md("plain")),
    ("built-in",                 "general-purpose", agent_md("plain")),
    ("empty agent_type",         "",            agent_md("plain")),
]


@pytest.mark.parametrize("agent, text", [c[1:] for c in QUIET_AGENTS], ids=[c[0] for c in QUIET_AGENTS])
@pytest.mark.parametrize("source", BRIEFING_SOURCES)
def test_agent_session_without_declaration_gets_nothing(sandbox, source, agent, text):
    sb = sandbox(dict(skills_files(SKILLS), **{PA % "plain": text}))
    results = session(sb, source, agent)
    no_hook_specific_output(results)
    assert printed(results) == [], [r.out for r in results]


# --------------------------------------------------------------------------------------------
# 3. Missing skills: the session cannot be refused, so the agent is told to stop
# --------------------------------------------------------------------------------------------

MISSING = [
    # case                         agent file "rev"                                              missing
    ("briefing skill missing",     agent_md("rev", ["alpha", "gone"]),                              ["gone"]),
    ("native skill missing",       agent_md("rev", ["alpha"], native=["n-gone"]),                   ["n-gone"]),
    ("native only, missing",       fm("name: rev", "description: r", "skills: beta, n-gone"),       ["n-gone"]),
    ("several missing",            agent_md("rev", ["x1", "alpha", "x2"], native=["x3"]),           ["x1", "x2", "x3"]),
]


@pytest.mark.parametrize("text, missing", [c[1:] for c in MISSING], ids=[c[0] for c in MISSING])
@pytest.mark.parametrize("source", BRIEFING_SOURCES)
def test_agent_session_missing_skill_aborts(sandbox, source, text, missing):
    files = skills_files(SKILLS)
    files[PA % "rev"] = text
    sb = sandbox(files)
    results = session(sb, source, "rev")
    assert printed(results) == [1], [r.out[:300] for r in results]
    first = results[0]
    assert first.data["hookSpecificOutput"]["hookEventName"] == "SessionStart", first
    text = first.context
    head = ABORT_OPEN.match(text or "")
    assert head and head.group("agent") == "rev", text
    assert "<skill " not in text and not SKILL_OPEN.search(text)
    assert rebuild([text]).aborted
    assert re.search(r"\bnot\b", text, re.I) and re.search(r"report", text, re.I), text
    for body in SKILLS.values():
        assert body not in text
    msg = first.system_message
    assert msg, first
    assert "rev" in msg, msg
    for name in missing:
        assert name in text, (name, text)
        assert name in msg, (name, msg)


# --------------------------------------------------------------------------------------------
# Large briefings: split across the parts under the cap
# --------------------------------------------------------------------------------------------

LARGE = [
    # case                               briefing sizes          native sizes
    ("3 x 12,000 in briefing",           [12000] * 3,            []),
    ("briefing and native, 36 kB",       [12000, 12000],         [12000]),
    ("native only, 30 kB",               [],                     [15000, 15000]),
    ("64 kB, one skill",                 [65536],                []),
    ("64 kB, four skills",               [16384] * 2,            [16384] * 2),
]


@pytest.mark.parametrize("briefed, native", [c[1:] for c in LARGE], ids=[c[0] for c in LARGE])
@pytest.mark.parametrize("source", BRIEFING_SOURCES)
def test_large_agent_session_briefing_is_split(sandbox, source, briefed, native):
    b_names = ["b%d" % i for i in range(len(briefed))]
    n_names = ["n%d" % i for i in range(len(native))]
    bodies = {n: text_of(n, size) for n, size in zip(b_names + n_names, briefed + native)}
    files = skills_files(bodies)
    files[PA % "big"] = agent_md("big", b_names or None, native=n_names or None)
    sb = sandbox(files)
    results = session(sb, source, "big")
    for r in results:
        assert r.context is None or len(r.context) <= 10000, len(r.context)
    got = delivered(results)
    assert len(got.parts) >= 2
    assert got.skills == bodies
    ctxs = contexts(results)
    for seed in range(4):
        random.Random(seed).shuffle(ctxs)
        assert rebuild(ctxs).skills == bodies


@pytest.mark.parametrize("source", BRIEFING_SOURCES)
def test_too_large_agent_session_briefing_aborts(sandbox, source):
    bodies = {"h%d" % i: text_of("h%d" % i, 30000) for i in range(3)}
    files = skills_files(bodies)
    files[PA % "huge"] = agent_md("huge", list(bodies))
    sb = sandbox(files)
    results = session(sb, source, "huge")
    assert printed(results) == [1], [r.out[:300] for r in results]
    text = results[0].context
    assert ABORT_OPEN.match(text or ""), text
    assert "<skill " not in text
    assert results[0].system_message


# --------------------------------------------------------------------------------------------
# 4. Sessions without --agent: the pre-flight only
# --------------------------------------------------------------------------------------------

PREFLIGHT = [
    # source       a broken declaration in the project    a systemMessage about it
    ("startup",    False,                                  False),
    ("resume",     False,                                  False),
    ("compact",    False,                                  False),
    ("clear",      False,                                  False),
    ("startup",    True,                                   True),
    ("resume",     True,                                   True),
    ("compact",    True,                                   False),
    ("clear",      True,                                   False),
]


@pytest.mark.parametrize("source, broken, warns", PREFLIGHT)
def test_session_without_agent_is_preflight_only(sandbox, source, broken, warns):
    files = skills_files(SKILLS)
    files[PA % "rev"] = agent_md("rev", ["alpha", "beta"], native=["gamma"])
    if broken:
        files[PA % "broken"] = agent_md("broken", ["alpha", "no-such-skill"])
    sb = sandbox(files)
    results = session(sb, source)
    no_hook_specific_output(results)
    if warns:
        assert len(printed(results)) == 1, [r.out for r in results]
        (msg,) = [r.system_message for r in results if r.out.strip()]
        assert "broken" in msg and "broken.md" in msg and "no-such-skill" in msg, msg
    else:
        assert printed(results) == [], [r.out for r in results]
    for r in results:
        assert SKILLS["alpha"] not in r.out


AGENT_AND_PREFLIGHT = [
    # source       pre-flight warning expected too
    ("startup",    True),
    ("resume",     True),
    ("compact",    False),
]


@pytest.mark.parametrize("source, warns", AGENT_AND_PREFLIGHT)
def test_agent_session_keeps_the_preflight(sandbox, source, warns):
    files = skills_files(SKILLS)
    files[PA % "rev"] = agent_md("rev", ["alpha"])
    files[PA % "broken"] = agent_md("broken", ["no-such-skill"])
    sb = sandbox(files)
    results = session(sb, source, "rev")
    got = delivered(results)
    assert got.skills == {"alpha": SKILLS["alpha"]}
    messages = "\n".join(r.system_message or "" for r in results)
    assert ("no-such-skill" in messages) == warns, messages
