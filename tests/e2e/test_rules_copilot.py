"""End-to-end: briefing rules inside the real GitHub Copilot CLI (issue 13).

Copilot's built-in ``explore`` agent has no file; a rule gives it skills, with
no Copilot-specific code beyond its Harness record's list of built-ins.
"""
import json

import pytest

from kit import BRIEFED, Skill, assert_briefing, markers_of, ok
from test_copilot import (briefings, checkout, copilot_cache, delegate, first_subagent_request,  # noqa: F401
                          machine, reports, skills_at)

pytestmark = pytest.mark.e2e


def test_builtin_explore_starts_with_a_rule_skill(machine, checkout):
    alpha = Skill("alpha")
    copilot = machine(delegate("explore", markers_of([alpha])))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": "explore", "skills": ["alpha"], "harness": "copilot"}]})})

    ok(copilot.run("Look around.", plugin_dirs=[checkout]))
    first = first_subagent_request(copilot.server)
    found = briefings(first)
    assert len(found) == 1, first.first_user_text[:2000]
    assert_briefing(found, "explore", [alpha], dirs={"alpha": copilot.project / ".github" / "skills" / "alpha"})
    assert any(BRIEFED in r for r in reports(copilot.server)), reports(copilot.server)
