"""End-to-end: briefing rules inside the real Gemini CLI (issue 13).

Gemini CLI's built-in ``generalist`` has no file; a rule gives it skills, which
the BeforeTool guard puts in front of the spawn's prompt like a declaration's.
"""
import json

import pytest

from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, markers_of, verdict
from test_gemini import (agent_md, agent_results, first_request, installed_home, machine, ok, spawner,  # noqa: F401
                         split_prompt, task)

pytestmark = pytest.mark.e2e


def test_builtin_generalist_starts_with_a_rule_skill_and_the_control_does_not(machine):
    alpha = Skill("alpha")
    m = machine(spawner(["generalist", "plain"], markers_of([alpha])))
    m.write({"project/.gemini/skills/alpha/SKILL.md": alpha.md(), "project/.gemini/agents/plain.md": agent_md("plain"),
             "project/.briefing/rules.json": json.dumps({"rules": [{"agents": "generalist", "skills": ["alpha"]}]})})
    m.acknowledge("plain")

    ok(m.run())
    briefed = first_request(m.server, 1)
    part, rest = split_prompt(briefed.first_text())
    assert rest == "\n\n" + task(1)
    assert_briefing([part], "generalist", [alpha], dirs={"alpha": m.project / ".gemini" / "skills" / "alpha"})
    control = first_request(m.server, 2)
    assert not any(mark in control.first_text() for mark in alpha.markers)
    # The built-in generalist ends its run in its own way (the fake's complete_task is not its
    # tool), so its own first request is judged the way the fake judges every subagent.
    assert verdict(briefed.all_text, alpha.markers) == BRIEFED
    results = [json.dumps(r) for r in agent_results(m.server)]
    assert UNBRIEFED in results[1], results
