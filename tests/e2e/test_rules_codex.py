"""End-to-end: briefing rules inside the real Codex CLI (issue 13).

Codex's built-in roles (``default``, ``explorer``, ``worker``) have no role file;
a project rules file gives them skills, resolved where Codex resolves skills.
"""
import json

import pytest

from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, codex_outputs, codex_spawner, markers_of, ok
from test_codex import child_requests, machine, plugin_source, project_files  # noqa: F401 (fixtures)

pytestmark = pytest.mark.e2e


def test_worker_and_default_start_with_a_rule_skill_and_the_control_does_not(machine):
    alpha = Skill("alpha")
    codex = machine(codex_spawner(["worker", "explorer", "default"], markers_of([alpha])))
    codex.write(project_files({".agents/skills": [alpha]}))
    codex.write({"project/.briefing/rules.json": json.dumps({"rules": [
        {"agents": ["worker", "default"], "skills": ["alpha"], "harness": "codex"},
        {"agents": "general-purpose", "skills": ["no-such-skill"]}]})})

    ok(codex.run("Get it done."))
    server = codex.server

    children = child_requests(server)
    briefed = [r for r in children if r.briefing_parts()]
    assert len(briefed) >= 2, "worker and default must both be briefed"
    for request in briefed:
        assert_briefing(request.briefing_parts(), request.briefing_parts()[0].split('"')[1], [alpha],
                        dirs={"alpha": codex.project / ".agents" / "skills" / "alpha"})
    agents = sorted({r.briefing_parts()[0].split('"')[1] for r in briefed})
    assert agents == ["default", "worker"], agents
    reports = [o for o in codex_outputs(server.main_requests()[-1], "wait_agent") if o and "VERDICT" in o]
    assert sum(BRIEFED in o for o in reports) == 2 and sum(UNBRIEFED in o for o in reports) == 1, reports
