"""End-to-end: project files in rules and declarations inside the real Claude Code (issue 30).

Claude Code 2.1.328 gives custom subagents, general-purpose and statusline-setup the project's
CLAUDE.md (with .claude/CLAUDE.md, CLAUDE.local.md and .claude/rules/ without paths:) in their first
user message, and gives Explore and Plan none of it (docs/files.md). A rule with
``"files": ["CLAUDE.md"]`` closes that gap for Explore; the subagent answers from its own request.
"""
import json
import os

import pytest

from kit import BRIEFED, UNBRIEFED, claude_denial, claude_spawner, marker, ok, tool_results
from fakes import block_text
from framing import rebuild
from conftest import agent_md as unit_agent_md
from test_claude import machine, subagent_parts  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


def reports(server):
    """The subagents' reports, in spawn order, as the main agent received them."""
    return [block_text(t.get("content")) for t in tool_results([r for r in server.main_requests()
                                                                if r.has_tools][-1])]


def memory(secret):
    return "# Project conventions\n\nEvery answer in this project carries the code word %s.\n" % secret


def test_explore_briefed_with_claude_md_answers_from_it_and_the_control_cannot(machine):
    secret = marker("claude-md")
    claude = machine(claude_spawner(["Explore", "Plan"], [secret]))
    claude.write({"project/CLAUDE.md": memory(secret),
                  "project/.briefing/rules.json": json.dumps(
                      {"rules": [{"agents": "Explore", "files": ["CLAUDE.md"]}]})})

    result = ok(claude.run("Look around."))
    server = claude.server

    subs = server.subagent_requests()
    assert len(subs) >= 2, "both spawns must have started"
    briefed = [r for r in subs if subagent_parts(r)]
    assert len(briefed) == 1, "only Explore has a rule"
    got = rebuild(subagent_parts(briefed[0]))
    assert got.agent == "Explore" and got.skills == {}
    assert got.files == {"CLAUDE.md": memory(secret)}, "CLAUDE.md delivered whole, as written"
    # Explore answers from CLAUDE.md; Plan (the control: same project, no rule) cannot.
    got_reports = reports(server)
    assert BRIEFED in got_reports[0] and UNBRIEFED in got_reports[1], got_reports
    messages = [json.loads(h["output"]).get("systemMessage") or "" for h in result.hook_responses("SubagentStart")
                if h.get("output", "").strip()]
    assert any(m.startswith("briefing: Explore \u2190 CLAUDE.md") for m in messages), messages


def test_a_custom_subagent_that_claude_code_gives_claude_md_is_not_sent_it_twice(machine):
    secret, other = marker("claude-md"), marker("conventions")
    claude = machine(claude_spawner(["reviewer"], [secret, other]))
    claude.write({"project/CLAUDE.md": memory(secret),
                  "project/docs/conventions.md": "Conventions: %s\n" % other,
                  "project/.claude/agents/reviewer.md": unit_agent_md(
                      "reviewer", extra="briefing:\n  files: [CLAUDE.md, docs/*.md]",
                      body="You are an e2e test agent. Do the task and report.\n")})

    ok(claude.run("Review."))
    server = claude.server

    (sub,) = [r for r in server.subagent_requests() if r.has_tools][:1]
    got = rebuild(subagent_parts(sub))
    assert got.files == {"docs/conventions.md": "Conventions: %s\n" % other}, got.files
    # Claude Code put CLAUDE.md there itself, once; briefing did not add a second copy.
    assert sub.all_text.count(secret) == 1, sub.all_text.count(secret)
    assert BRIEFED in reports(server)[0]


def test_a_missing_plain_file_refuses_the_spawn(machine):
    claude = machine(claude_spawner(["Explore"], []))
    claude.write({"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": "Explore", "files": ["STANDARDS.md"]}]})})

    ok(claude.run("Look around."))
    text = claude_denial(claude.server, "a rule's file is missing")
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'Explore' declares undeliverable "
                           "file(s): STANDARDS.md (no such file)"), text
    assert "rule 'Explore' in" in text, text


@pytest.mark.parametrize("entry, files, expected", [
    # Issue 36, hole 1: once a RecursionError in the hook, which printed nothing and let Explore run unbriefed.
    ("d/" * 400 + "f.md", {}, "d/" * 30 + "d\u2026 (a path of 401 names, over the 64-name limit)"),
    # Issue 36, hole 5: once dropped without a word, and Explore briefed as if the entry did not exist.
    ("linked/*.md", {"outside/secret.md": "SECRET", "project/linked": "->../outside"},
     "linked/*.md (linked is a link out of the project folder (to "),
], ids=["deep-entry", "glob-through-a-link-out"])
def test_an_entry_past_a_bound_or_through_a_link_out_refuses_the_spawn(machine, entry, files, expected):
    claude = machine(claude_spawner(["Explore"], []))
    claude.write({path: text for path, text in files.items() if not text.startswith("->")})
    for path, text in files.items():
        if text.startswith("->"):
            os.symlink(text[2:], str(claude.root / path))
    claude.write({"project/.briefing/rules.json": json.dumps({"rules": [{"agents": "Explore", "files": [entry]}]})})

    ok(claude.run("Look around."))
    text = claude_denial(claude.server, "the entry cannot be delivered")
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'Explore' declares undeliverable "
                           "file(s): " + expected), text
    assert claude.server.subagent_requests() == [], "Explore must not start"


def test_a_glob_skips_a_linked_folder_and_briefs_the_rest(machine):
    # Issue 36, hole 4: docs/* matched docs/shared -> ../shared and refused it as "not a regular file".
    secret = marker("docs")
    claude = machine(claude_spawner(["Explore"], [secret]))
    claude.write({"project/docs/a.md": "Code word %s.\n" % secret, "project/shared/s.md": "shared",
                  "project/.briefing/rules.json": json.dumps({"rules": [{"agents": "Explore", "files": ["docs/*"]}]})})
    os.symlink("../shared", str(claude.root / "project" / "docs" / "shared"))

    ok(claude.run("Look around."))
    (sub,) = [r for r in claude.server.subagent_requests() if subagent_parts(r)][:1]
    assert rebuild(subagent_parts(sub)).files == {"docs/a.md": "Code word %s.\n" % secret}
    assert BRIEFED in reports(claude.server)[0]


MEMORY = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/style.md",
          ".claude/rules/deep/nested.md", "AGENTS.md")


def test_every_agent_gets_each_memory_file_exactly_once_from_claude_code_or_briefing(machine):
    """The measurement behind claude_loads_file (docs/files.md), kept on every run: with a rule naming
    every memory file for every agent, each marker is in each subagent's request exactly once, and
    briefing delivers only what Claude Code does not (all of it to Explore and Plan)."""
    marks = {f: marker("mem%d" % i) for i, f in enumerate(MEMORY)}
    types = ["reviewer", "general-purpose", "statusline-setup", "Explore", "Plan"]
    claude = machine(claude_spawner(types, list(marks.values())))
    claude.write({"project/" + f: "# %s\n\nMarker: %s\n" % (f, m) for f, m in marks.items()})
    claude.write({"project/.claude/agents/reviewer.md": unit_agent_md("reviewer", body="Do the task.\n"),
                  "project/.briefing/rules.json": json.dumps(
                      {"rules": [{"agents": "*", "files": ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md",
                                                           ".claude/rules/**/*.md", "AGENTS.md"]}]})})

    ok(claude.run("Look around."))
    subs = [r for r in claude.server.subagent_requests() if r.has_tools]
    firsts = {}
    for request in subs:
        firsts.setdefault(request.agent_id, request)
    assert len(firsts) == len(types)
    delivered = []
    for request in firsts.values():  # in spawn order
        for name, mark in marks.items():
            assert request.all_text.count(mark) == 1, (name, request.all_text.count(mark))
        delivered.append(sorted(rebuild(subagent_parts(request)).files))
    own = ["AGENTS.md"]  # no Claude Code agent gets AGENTS.md by itself
    assert delivered == [own, own, own, sorted(MEMORY), sorted(MEMORY)], delivered
    assert all(BRIEFED in r for r in reports(claude.server)), reports(claude.server)
