"""End-to-end: briefing rules inside the real Claude Code CLI (issue 13).

A built-in agent has no file to declare anything in; a project rules file
gives it skills. The subagent answers from its own request alone.
"""
import json

import pytest

from kit import (BRIEFED, UNBRIEFED, Skill, assert_briefing, claude_denial, claude_spawner, markers_of, ok,
                 tool_results)
from fakes import block_text
from test_claude import final_report, machine, project_skills, subagent_parts  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


def rules(*entries):
    return json.dumps({"rules": [{"agents": a, "skills": s} for a, s in entries]})


def test_general_purpose_starts_with_a_rule_skill_and_the_control_does_not(machine):
    alpha = Skill("alpha")
    claude = machine(claude_spawner(["general-purpose", "Explore"], markers_of([alpha])))
    claude.write(project_skills([alpha]))
    claude.write({"project/.briefing/rules.json": rules(("general-purpose", ["alpha"]))})

    result = ok(claude.run("Look around."))
    server = claude.server

    subs = server.subagent_requests()
    assert len(subs) >= 2, "both spawns must have started"
    briefed = [r for r in subs if subagent_parts(r)]
    assert len(briefed) == 1 and all(m in briefed[0].all_text for m in alpha.markers)
    assert_briefing(subagent_parts(briefed[0]), "general-purpose", [alpha],
                    dirs={"alpha": claude.project / ".claude" / "skills" / "alpha"})
    reports = [block_text(t.get("content")) for t in tool_results([r for r in server.main_requests()
                                                                   if r.has_tools][-1])]
    assert BRIEFED in reports[0] and UNBRIEFED in reports[1], reports  # Explore: no rule, no briefing
    assert any(h.get("hook_event") == "SubagentStart" and "from rule 'general-purpose' in" in h.get("output", "")
               for h in result.hook_responses())


def test_a_missing_rule_skill_refuses_the_builtin_spawn(machine):
    claude = machine(claude_spawner(["general-purpose"], []))
    claude.write({"project/.briefing/rules.json": rules(("*", ["ghost-skill"]))})

    result = ok(claude.run("Look around."))
    server = claude.server

    text = claude_denial(server, "a rule's skill is missing")
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'general-purpose' references "
                           "unknown skill(s): ghost-skill"), text
    assert "rule '*' in %s" % (claude.project / ".briefing" / "rules.json") in text, text
    # the pre-flight named the rule at session start
    messages = [json.loads(h["output"]).get("systemMessage") or "" for h in result.hook_responses("SessionStart")
                if h.get("output", "").strip()]
    assert any("rule '*' in" in m and "ghost-skill" in m for m in messages), messages
