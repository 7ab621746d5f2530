"""End-to-end, issue 11: native ``skills:`` entries judged by what the real Claude Code 2.1.328 preloads.

One ``claude -p`` run spawns one agent per case in turn. Every skill body
carries its own markers, and each subagent's first request is searched for
them: a skill must arrive **exactly once**, either in Claude Code's own
preload (``messages[0]``) or in briefing's SubagentStart context, never in both
and never in neither (facts/claude-code.md §5.1).
"""
import json

import pytest

from conftest import CLAUDE_OUTPUT_LIMIT, agent_md as unit_agent_md
from fakes import block_text, briefing_parts
from kit import Skill, claude_main_only, claude_spawner, markers_of, ok, tool_results
from runners import REPO, write_tree
from test_claude import machine, subagent_parts  # noqa: F401  (machine is a fixture)

pytestmark = pytest.mark.e2e


def agent(name, native):
    body = "You are the e2e agent %s. Do the task and report.\n" % name.upper()
    return unit_agent_md(name, None, native, body=body)


class Case:
    """An agent that declares one native skill, and where that skill's text must come from."""

    def __init__(self, agent_name, skill, declared=None, meta=(), folder=None, source="claude-code"):
        self.agent = agent_name
        self.skill = skill
        self.declared = declared or skill.name
        self.meta = list(meta)
        self.folder = folder or skill.name
        self.source = source  # "claude-code", "briefing" or "refused"

    def md(self):
        lines = ["---", "name: %s" % self.skill.name, self.skill.frontmatter_line] + self.meta + ["---"]
        return "\n".join(lines) + "\n" + self.skill.body


def request_of(server, case):
    """The first request of the subagent spawned as ``case.agent``."""
    marker = "You are the e2e agent %s." % case.agent.upper()
    found = [r for r in server.subagent_requests() if marker in r.all_text]
    return found[0] if found else None


def denial_of(server, agent_name):
    """The text of the tool_result that refused the spawn of ``agent_name``, or None."""
    for request in server.main_requests():
        for result in tool_results(request):
            text = block_text(result.get("content"))
            if "agent '%s'" % agent_name in text:
                return text
    return None


def test_each_native_entry_arrives_exactly_once_or_is_refused(machine, tmp_path):
    cases = [
        Case("hidden-agent", Skill("hidden"), meta=["disable-model-invocation: true"], source="briefing"),
        Case("plain-agent", Skill("plain")),
        Case("named-agent", Skill("by-name"), folder="folder-differs"),
        Case("uio-agent", Skill("uio"), source="briefing"),
        Case("off-agent", Skill("offskill"), source="refused"),
    ]
    dev = Skill("devskill")
    dev_case = Case("dev-agent", dev, declared="devtools:devskill")
    everything = cases + [dev_case]
    claude = machine(claude_spawner([c.agent for c in everything], markers_of([c.skill for c in everything])))
    for case in cases:
        claude.write({"project/.claude/skills/%s/SKILL.md" % case.folder: case.md()})
    for case in everything:
        claude.write({"project/.claude/agents/%s.md" % case.agent: agent(case.agent, [case.declared])})
    claude.write({"project/.claude/settings.json": json.dumps(
        {"skillOverrides": {"uio": "user-invocable-only", "offskill": "off"}})})
    # A plugin loaded only with --plugin-dir: it is in no installed_plugins.json.
    plugin = tmp_path / "devtools"
    write_tree(plugin, {".claude-plugin/plugin.json": json.dumps({"name": "devtools", "version": "1.0.0"}),
                        "skills/devskill/SKILL.md": dev.md()})

    result = ok(claude.run("Run every agent.", plugin_dirs=(REPO, plugin)))
    server = claude.server
    registry = claude.home / ".claude" / "plugins" / "installed_plugins.json"
    assert not registry.exists() or "devtools" not in registry.read_text()

    for case in everything:
        if case.source == "refused":
            continue
        request = request_of(server, case)
        assert request is not None, "%s was not spawned: %r" % (case.agent, denial_of(server, case.agent))
        counts = [request.all_text.count(m) for m in case.skill.markers]
        assert counts == [1, 1], "%s: %s arrived %r times" % (case.agent, case.skill.name, counts)
        parts = subagent_parts(request)
        if case.source == "briefing":
            assert parts, "%s: briefing delivered nothing" % case.agent
            assert case.skill.start in "".join(parts), case.agent
        else:
            assert not parts, "%s: briefing injected what Claude Code preloads" % case.agent
            assert case.skill.start in request.message_text(0), "%s: not in Claude Code's preload" % case.agent

    off = denial_of(server, "off-agent")
    assert off and "PreToolUse:Agent hook error" in off, off
    # the reason names the setting and the file that holds it (bounded wording: issue 17)
    assert 'turned off by skillOverrides "offskill": "off"' in off, off
    assert 'skillOverrides "offskill": "off" in ' in off and "/project/.claude/settings.json" in off, off
    assert request_of(server, cases[-1]) is None
    for other in cases[:-1] + [dev_case]:
        assert denial_of(server, other.agent) is None, denial_of(server, other.agent)
    audits = [h.get("output", "") for h in result.hook_responses("SubagentStart")
              if "delivered because Claude Code skips them" in h.get("output", "")]
    assert any("hidden (disable-model-invocation: true in " in a for a in audits), audits
    assert any('uio (skillOverrides \\"uio\\": \\"user-invocable-only\\"' in a for a in audits), audits


def test_disable_slash_commands_leaves_every_native_skill_to_briefing(machine):
    """``claude --disable-slash-commands`` preloads nothing; the hook reads that from the harness's
    own command line (/proc/$CLAUDE_PID/cmdline), and the skill still arrives once."""
    plain = Skill("plain")
    case = Case("plain-agent", plain)
    claude = machine(claude_spawner([case.agent], markers_of([plain])))
    claude.write({"project/.claude/skills/plain/SKILL.md": case.md(),
                  "project/.claude/agents/plain-agent.md": agent(case.agent, ["plain"])})

    ok(claude.run("Run the agent.", "--disable-slash-commands"))
    request = request_of(claude.server, case)
    assert request is not None, "the agent was not spawned"
    assert [request.all_text.count(m) for m in plain.markers] == [1, 1]
    rebuilt = "".join(subagent_parts(request))
    assert plain.start in rebuilt and plain.end in rebuilt, "briefing did not deliver it"
    assert all(len(p) <= CLAUDE_OUTPUT_LIMIT for p in briefing_parts(request.hook_context("SubagentStart")))


def test_agent_session_resolves_both_lists_the_same_way(machine):
    """``claude --agent`` preloads nothing; briefing delivers a native entry named by its frontmatter
    ``name`` and a ``briefing:`` entry that is a legacy command, each exactly once."""
    named, command = Skill("by-name"), Skill("legacy-cmd")
    claude = machine(claude_main_only(markers_of([named, command])))
    claude.write({
        "project/.claude/skills/folder-differs/SKILL.md": named.md(),
        "project/.claude/commands/legacy-cmd.md": command.body,
        "project/.claude/agents/solo.md": unit_agent_md("solo", ["legacy-cmd"], ["by-name"]),
    })
    ok(claude.run("Work as solo.", "--agent", "solo"))
    first = [r for r in claude.server.main_requests() if r.has_tools][0]
    for m in markers_of([named, command]):
        assert first.all_text.count(m) == 1, "%s arrived %d times" % (m, first.all_text.count(m))
    parts = "".join(briefing_parts(first.hook_context("SessionStart") or ""))
    assert named.start in parts and command.start in parts, "not delivered by briefing"
