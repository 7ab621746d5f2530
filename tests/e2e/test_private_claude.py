"""End-to-end: private skills inside the real Claude Code CLI (issue 29).

A private skill lives in ``.briefing/skills/`` (project) or ``~/.config/briefing/skills/``
(user), folders Claude Code never reads. The agent that declares it starts with it whole;
the main agent and a control agent never see its name, description or body: not in their
requests, not in Claude Code's own skill listing. The subagent answers from its own request.
"""
import pytest

from kit import (BRIEFED, UNBRIEFED, Skill, assert_briefing, assert_private, claude_main_only, claude_spawner,
                 grouped, leaks, markers_of, ok, private_skill)
from fakes import block_text, briefing_parts
from framing import rebuild
from test_claude import agent_md, machine, project_skills, subagent_parts  # noqa: F401 (fixture)
from test_rules_claude import rules

pytestmark = pytest.mark.e2e


def private_files(project=(), user=()):
    files = {"project/.briefing/skills/%s/SKILL.md" % s.name: s.md() for s in project}
    files.update({"home/.config/briefing/skills/%s/SKILL.md" % s.name: s.md() for s in user})
    return files


def briefed_agent(requests):
    """The agent named by the briefing in the first of one subagent's requests, or None."""
    parts = subagent_parts(requests[0])
    return rebuild(parts).agent if parts else None


def reports(server):
    """The subagents' reports as the main agent received them, in spawn order."""
    last = [r for r in server.main_requests() if r.has_tools][-1]
    return [block_text(b.get("content")) for m in last.messages if m.get("role") == "user"
            and isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_the_declaring_subagent_alone_receives_its_private_skills(machine):
    vault, ledger = private_skill("vault"), private_skill("ledger")
    alpha = Skill("alpha")  # an ordinary project skill: Claude Code lists it, and the control declares it
    secret = [vault, ledger]
    claude = machine(claude_spawner(["keeper", "control"], markers_of(secret)))
    claude.write(private_files(project=[vault], user=[ledger]))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/keeper.md": agent_md("keeper", [vault.name, ledger.name]),
                  "project/.claude/agents/control.md": agent_md("control", ["alpha"])})

    result = ok(claude.run("Do the work."))
    server = claude.server

    agents = grouped(server.subagent_requests(), lambda r: r.agent_id)
    assert len(agents) == 2, "both spawns must have started: %r" % list(agents)
    named = {briefed_agent(reqs): reqs for reqs in agents.values()}
    assert sorted(named) == ["control", "keeper"], named
    keeper, control = named["keeper"], named["control"]
    assert_briefing(subagent_parts(keeper[0]), "keeper", secret, dirs={
        vault.name: claude.project / ".briefing" / "skills" / vault.name,
        ledger.name: claude.home / ".config" / "briefing" / "skills" / ledger.name})
    assert_briefing(subagent_parts(control[0]), "control", [alpha])  # briefed too, with its own skill
    # Never leaked: nothing of them in the control's or the main agent's requests, no description anywhere,
    assert_private(secret, keeper, control, server.main_requests(), server.log)
    # and Claude Code's own skill listing has the ordinary skill but not the private ones.
    listed = result.init.get("skills") or []
    assert "alpha" in listed and not set(listed) & {vault.name, ledger.name}, listed
    said = reports(server)
    assert BRIEFED in said[0] and UNBRIEFED in said[1], said


def test_a_claude_agent_session_receives_its_private_skill(machine):
    vault = private_skill("vault")
    claude = machine(claude_main_only(vault.markers))
    claude.write(private_files(project=[vault]))
    claude.write({"project/.claude/agents/solo.md": agent_md("solo", [vault.name])})

    ok(claude.run("Work as solo.", "--agent", "solo"))
    server = claude.server
    first = [r for r in server.main_requests() if r.has_tools][0]
    assert_briefing(briefing_parts(first.hook_context("SessionStart") or ""), "solo", [vault])

    before = len(server.log)
    ok(claude.run("Work without an agent."))  # the control: the same project, no --agent
    assert leaks(server.log[before:], [vault]) == []


def test_a_rule_gives_a_builtin_a_private_skill_and_a_native_entry_never_reaches_one(machine):
    ledger = private_skill("ledger")
    claude = machine(claude_spawner(["general-purpose", "nativist", "Explore"], markers_of([ledger])))
    claude.write(private_files(user=[ledger]))
    claude.write({"project/.briefing/rules.json": rules(("general-purpose", [ledger.name])),
                  "project/.claude/agents/nativist.md": agent_md("nativist", native=[ledger.name])})

    ok(claude.run("Look around."))
    server = claude.server

    agents = grouped(server.subagent_requests(), lambda r: r.agent_id)
    assert len(agents) == 2, "general-purpose and Explore start; nativist is refused: %r" % list(agents)
    briefed = [reqs for reqs in agents.values() if subagent_parts(reqs[0])]
    assert len(briefed) == 1
    assert_briefing(subagent_parts(briefed[0][0]), "general-purpose", [ledger])
    assert leaks([r for reqs in agents.values() if reqs is not briefed[0] for r in reqs], [ledger]) == []
    said = reports(server)
    assert BRIEFED in said[0] and UNBRIEFED in said[2], said
    # A native skills: entry: Claude Code does not read the private folder, so the guard refuses.
    assert said[1].startswith("PreToolUse:Agent hook error: briefing: agent 'nativist' references unknown "
                              "skill(s): %s" % ledger.name), said[1]
    assert leaks(server.main_requests(), [ledger]) == [ledger.name]  # the refusal names it, nothing more


def test_git_status_in_claude_codes_context_names_a_changed_private_skill(machine):
    """Measured (2.1.328): the main agent's context holds the project's ``git status``, so a
    project private skill that is changed and not committed shows there by its path (its name,
    nothing else of it); a committed, unchanged one does not."""
    import subprocess
    changed, committed = private_skill("changed"), private_skill("committed")
    claude = machine(claude_spawner([], []))
    claude.write(private_files(project=[changed, committed]))
    git = ["git", "-C", str(claude.project), "-c", "user.name=e2e", "-c", "user.email=e2e@localhost"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(claude.project), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(git + ["add", ".briefing"], check=True, env=env)
    subprocess.run(git + ["commit", "-q", "-m", "private skills"], check=True, env=env)
    path = claude.project / ".briefing" / "skills" / changed.name / "SKILL.md"
    path.write_text(path.read_text() + "One more line.\n")

    ok(claude.run("Look around."))
    mains = claude.server.main_requests()
    assert all(" M .briefing/skills/%s/SKILL.md" % changed.name in r.all_text for r in mains)
    assert leaks(mains, [changed]) == [changed.name] and leaks(mains, [committed]) == []
