"""End-to-end: private skills inside the real GitHub Copilot CLI (issue 29).

A private skill lives in ``.briefing/skills/`` (project) or ``~/.config/briefing/skills/``
(user), folders Copilot never reads. The agent that declares one under ``briefing:`` starts
with it whole; the parent and a control agent never see its name, description or body.
"""
import pytest

from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, assert_private, markers_of, ok, private_skill
from test_copilot import (agent_md, briefings, checkout, copilot_cache, delegate, delegated, machine,  # noqa: F401
                          skills_at)
from test_private_claude import private_files

pytestmark = pytest.mark.e2e


def test_the_declaring_agent_alone_receives_its_private_skills(machine, checkout):
    vault, ledger = private_skill("vault"), private_skill("ledger")
    alpha = Skill("alpha")  # an ordinary project skill, which the control declares
    secret = [vault, ledger]
    copilot = machine(delegate(["keeper", "control"], markers_of(secret)))
    copilot.write(private_files(project=[vault], user=[ledger]))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.github/agents/keeper.agent.md": agent_md("keeper", [vault.name, ledger.name]),
                   "project/.github/agents/control.agent.md": agent_md("control", ["alpha"])})

    ok(copilot.run("Do the work.", plugin_dirs=[checkout]))
    server = copilot.server

    subs = [r for r in server.log if r.is_subagent]
    keeper = [r for r in subs if delegated(1) in r.first_user_text]
    control = [r for r in subs if delegated(2) in r.first_user_text]
    assert keeper and control and len(keeper) + len(control) == len(subs), subs
    assert_briefing(briefings(keeper[0]), "keeper", secret, dirs={
        vault.name: copilot.project / ".briefing" / "skills" / vault.name,
        ledger.name: copilot.home / ".config" / "briefing" / "skills" / ledger.name})
    assert_briefing(briefings(control[0]), "control", [alpha])
    # Never leaked: nothing of them in the control's or the parent's requests, no description anywhere,
    assert_private(secret, keeper, control, [r for r in server.log if not r.is_subagent], server.log)
    # while Copilot's own skill listing offers the ordinary skill to the parent.
    assert any(alpha.description in r.all_text for r in server.log if not r.is_subagent)
    said = [r for r in server.log if not r.is_subagent][-1].tool_results()
    assert BRIEFED in said[0] and UNBRIEFED in said[1], said
