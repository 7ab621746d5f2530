"""End-to-end: private skills inside the real Gemini CLI (issue 29).

A private skill lives in ``.briefing/skills/`` (project) or ``~/.config/briefing/skills/``
(user), folders Gemini CLI never reads. The agent that declares one in its comment line
starts with it whole, in front of its prompt; the main agent (whose history keeps the
original prompt) and a control agent never see its name, description or body.
"""
import json

import pytest

from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, assert_private, markers_of, private_skill
from test_gemini import (agent_md, agent_results, first_request, installed_home, machine, ok, spawner,  # noqa: F401
                         split_prompt, task)
from test_private_claude import private_files

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("ignored", [False, True], ids=["the tree names the folder", "geminiignore"])
def test_the_declaring_agent_alone_receives_its_private_skills(machine, ignored):
    vault, ledger = private_skill("vault"), private_skill("ledger")
    alpha = Skill("alpha")  # an ordinary skill, which the control declares
    secret = [vault, ledger]
    m = machine(spawner(["keeper", "control"], markers_of(secret)))
    m.write(private_files(project=[vault], user=[ledger]))
    if ignored:
        m.write({"project/.geminiignore": ".briefing/skills/\n"})
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/keeper.md": agent_md("keeper", [vault.name, ledger.name]),
             "home/.gemini/agents/control.md": agent_md("control", ["alpha"])})

    ok(m.run())
    server = m.server

    keeper, control = first_request(server, 1), first_request(server, 2)
    part, rest = split_prompt(keeper.first_text())
    assert rest == "\n\n" + task(1), "the original prompt must follow the briefing"
    assert_briefing([part], "keeper", secret, dirs={
        vault.name: m.project / ".briefing" / "skills" / vault.name,
        ledger.name: m.home / ".config" / "briefing" / "skills" / ledger.name})
    part, rest = split_prompt(control.first_text())
    assert_briefing([part], "control", [alpha])
    subs = server.subagent_requests()
    # Measured (0.61.0): Gemini CLI puts the project's folder tree ("Directory Structure", which
    # honours .gitignore and .geminiignore) into every agent's context, so the tree names a project
    # private skill's folder: its name, nothing else of it. A .geminiignore entry hides that too,
    # and a user private skill is never in the tree.
    tree = [] if ignored else [vault.name]
    if not ignored:
        assert all("\u2500%s/" % vault.name in r.all_text for r in server.main_requests())
    # Never leaked: nothing else of them in the control's or the main agent's requests, no description anywhere,
    assert_private(secret, [r for r in subs if r.first_text().endswith(task(1))],
                   [r for r in subs if r.first_text().endswith(task(2))], server.main_requests(), server.log, tree)
    # while Gemini CLI's own skill listing offers the ordinary skill to the main agent.
    assert any(alpha.description in r.all_text for r in server.main_requests())
    outputs = [json.dumps(r) for r in agent_results(server)]
    assert BRIEFED in outputs[0] and UNBRIEFED in outputs[1], outputs
