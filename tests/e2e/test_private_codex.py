"""End-to-end: private skills inside the real Codex CLI (issue 29).

A private skill lives in ``.briefing/skills/`` (project) or ``~/.config/briefing/skills/``
(user), folders Codex never reads. The role that declares one in its comment line starts
with it whole; the main thread and a control role never see its name, description or body,
while Codex's own skill listing shows an ordinary skill to all of them.
"""
import json

import pytest

from kit import (BRIEFED, UNBRIEFED, Skill, assert_briefing, assert_private, codex_outputs, codex_spawner,
                 grouped, leaks, markers_of, ok, private_skill)
from test_codex import child_requests, machine, plugin_source, project_files, role_toml  # noqa: F401 (fixtures)
from test_private_claude import private_files

pytestmark = pytest.mark.e2e


def briefed_role(requests):
    """The role named by the briefing the first of one child's requests carries, or None."""
    parts = requests[0].briefing_parts()
    return parts[0].split('"')[1] if parts else None


def wait_reports(server):
    return [o for o in codex_outputs(server.main_requests()[-1], "wait_agent") if o and "VERDICT" in o]


def test_the_declaring_role_alone_receives_its_private_skills(machine):
    vault, ledger = private_skill("vault"), private_skill("ledger")
    alpha = Skill("alpha")  # an ordinary project skill: Codex lists it to every thread
    secret = [vault, ledger]
    codex = machine(codex_spawner(["keeper", "control"], markers_of(secret)))
    codex.write(private_files(project=[vault], user=[ledger]))
    codex.write(project_files({".agents/skills": [alpha]}))
    codex.write({"project/.codex/agents/keeper.toml": role_toml("keeper", [vault.name, ledger.name]),
                 "project/.codex/agents/control.toml": role_toml("control", ["alpha"])})

    ok(codex.run("Do the work."))
    server = codex.server

    named = {briefed_role(reqs): reqs for reqs in grouped(child_requests(server), lambda r: r.thread_id).values()}
    assert sorted(named) == ["control", "keeper"], named
    keeper, control = named["keeper"], named["control"]
    assert_briefing(keeper[0].briefing_parts(), "keeper", secret, dirs={
        vault.name: codex.project / ".briefing" / "skills" / vault.name,
        ledger.name: codex.home / ".config" / "briefing" / "skills" / ledger.name})
    assert_briefing(control[0].briefing_parts(), "control", [alpha])
    # Never leaked: nothing of them in the control's or the main thread's requests, no description anywhere,
    assert_private(secret, keeper, control, server.main_requests(), server.log)
    # while Codex's own listing names the ordinary skill, with its description, to the main thread.
    assert all(alpha.description in r.all_text for r in server.main_requests())
    said = wait_reports(server)
    assert sum(BRIEFED in o for o in said) == 1 and sum(UNBRIEFED in o for o in said) == 1, said


def test_a_rule_gives_worker_a_private_skill_and_a_missing_one_is_refused(machine):
    ledger = private_skill("ledger")
    codex = machine(codex_spawner(["worker", "explorer", "broken"], markers_of([ledger])))
    codex.write(private_files(user=[ledger]))
    codex.write({"project/.briefing/rules.json": json.dumps(
                    {"rules": [{"agents": "worker", "skills": [ledger.name]}]}),
                 "project/.codex/agents/broken.toml": role_toml("broken", ["ghost-private"])})

    ok(codex.run("Get it done."))
    server = codex.server

    threads = grouped(child_requests(server), lambda r: r.thread_id)
    named = {briefed_role(reqs): reqs for reqs in threads.values()}
    assert sorted(named, key=str) == [None, "worker"], named  # explorer unbriefed; broken never started
    assert_briefing(named["worker"][0].briefing_parts(), "worker", [ledger],
                    dirs={ledger.name: codex.home / ".config" / "briefing" / "skills" / ledger.name})
    assert leaks(named[None], [ledger]) == [] and leaks(server.main_requests(), [ledger]) == []
    denied = [o for o in codex_outputs(server.main_requests()[-1], "spawn_agent") if o and "blocked" in o]
    assert len(denied) == 1 and denied[0].startswith(
        "Tool call blocked by PreToolUse hook: briefing: agent 'broken' references unknown skill(s): "
        "ghost-private"), denied
