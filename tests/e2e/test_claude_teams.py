"""End-to-end, issue 31: agent-team teammates in the real Claude Code 2.1.328 start briefed.

With ``CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1`` a teammate is a named ``Agent``
call that runs in-process, in the background (facts/rendering.md, "Agent
teams"): PreToolUse ``Agent`` and SubagentStart fire for it as for any
subagent, and a ``SendMessage`` to a finished teammate resumes it, firing
SubagentStart again. Claude Code drops that repeated context, so a resumed
teammate's requests must hold the briefing exactly once.

Every teammate answers from its own request (kit.verdict): BRIEFED when all of
its skill's markers are there, UNBRIEFED when none is.
"""
import json
import os
import shlex
import shutil
import subprocess
import time

import pytest

from conftest import agent_md as unit_agent_md
from fakes import FakeAnthropic, block_text, briefing_parts, tool_use
from kit import BRIEFED, UNBRIEFED, Skill, markers_of, ok, tool_results, verdict
from runners import REPO, Claude

pytestmark = pytest.mark.e2e

TEAMS = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}


def mate_md(name, skills=None, native=None):
    body = "You are the e2e teammate %s. Do the task and report.\n" % name.upper()
    return unit_agent_md(name, skills, native, body=body)


class TeamClaude(Claude):
    """A Claude runner with agent teams switched on."""

    def env(self):
        env = Claude.env(self)
        env.update(TEAMS)
        return env


def team_script(calls, markers_of_mate):
    """The lead makes ``calls`` one per turn, pausing a moment after each so that the
    background teammates finish before the next message; every teammate reports on the
    markers of its own skill (``markers_of_mate``: its name in its prompt -> markers)."""
    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            for name, markers in markers_of_mate.items():
                if "You are the e2e teammate %s." % name.upper() in r.all_text:
                    return "Report: " + verdict(r.all_text, markers)
            return "Report: " + verdict(r.all_text, [])
        done = len(tool_results(r))
        if done < len(calls):
            if done:
                time.sleep(2)  # let the teammate the last call started or resumed finish
            return [calls[done]]
        return "All done."
    return script


def mate(name, agent_type):
    return tool_use("Agent", {"name": name, "subagent_type": agent_type, "description": "e2e teammate " + name,
                              "prompt": "Do the e2e task and report."})


def message(to, text):
    return tool_use("SendMessage", {"to": to, "summary": "e2e message", "message": text})


def requests_of(server, name):
    """The model requests of teammate ``name``: in-process ones are subagent requests of the lead,
    a pane teammate's come from a claude process of its own."""
    marker = "You are the e2e teammate %s." % name.upper()
    return [r for r in server.log if r.has_tools and marker in r.all_text]


@pytest.fixture
def team(clis, tmp_path, serve):
    def make(script):
        server = serve(FakeAnthropic, script)
        return TeamClaude(tmp_path, server)

    return make


def test_teammates_are_briefed_once_per_context_over_resumes(team):
    alpha, beta, gamma = Skill("alpha"), Skill("beta"), Skill("gamma")
    markers = {"briefed": markers_of([alpha]), "native": markers_of([beta]), "ruled": markers_of([gamma]),
               "control": markers_of([alpha])}
    calls = [mate("m-briefed", "briefed"), mate("m-native", "native"), mate("m-ruled", "ruled"),
             mate("m-control", "control"),
             message("m-briefed", "Do it again and report."), message("m-briefed", "Once more and report.")]
    claude = team(team_script(calls, markers))
    claude.write({"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta, gamma)})
    claude.write({
        "project/.claude/agents/briefed.md": mate_md("briefed", ["alpha"]),
        "project/.claude/agents/native.md": mate_md("native", native=["beta"]),
        "project/.claude/agents/ruled.md": mate_md("ruled"),
        "project/.claude/agents/control.md": mate_md("control"),
        "project/.briefing/rules.json": json.dumps({"rules": [{"agents": ["ruled"], "skills": ["gamma"]}]}),
    })
    ok(claude.run("Work with your teammates.", timeout=150))
    server = claude.server

    briefed = requests_of(server, "briefed")
    # The first message and two resumes: three requests, each answered from the skill.
    assert len(briefed) >= 3, [r.index for r in briefed]
    assert [verdict(r.all_text, markers["briefed"]) for r in briefed] == [BRIEFED] * len(briefed)
    # SubagentStart fired on every resume; Claude Code kept the briefing exactly once per request.
    for request in briefed:
        assert request.all_text.count(alpha.start) == 1, request.index
        assert request.all_text.count(alpha.end) == 1, request.index
    parts = briefing_parts(briefed[0].hook_context("SubagentStart"))
    assert parts and all(len(p) <= 10000 for p in parts)

    native, = requests_of(server, "native")[:1]
    assert verdict(native.all_text, markers["native"]) == BRIEFED  # Claude Code preloads skills: itself
    assert native.all_text.count(beta.start) == 1
    ruled = requests_of(server, "ruled")
    assert ruled and verdict(ruled[0].all_text, markers["ruled"]) == BRIEFED
    control = requests_of(server, "control")
    assert control and verdict(control[0].all_text, markers["control"]) == UNBRIEFED


def test_a_teammate_with_a_missing_skill_is_refused(team):
    alpha = Skill("alpha")
    claude = team(team_script([mate("m-broken", "broken")], {"broken": markers_of([alpha])}))
    claude.write({"project/.claude/skills/alpha/SKILL.md": alpha.md(),
                  "project/.claude/agents/broken.md": mate_md("broken", ["alpha", "ghost-skill"])})
    ok(claude.run("Work with your teammate.", timeout=120))
    server = claude.server
    assert requests_of(server, "broken") == [], "the teammate started although a skill is missing"
    denial = [block_text(r.get("content")) for req in server.main_requests() for r in tool_results(req)
              if r.get("is_error")]
    assert denial and "ghost-skill" in denial[0] and "agent 'broken'" in denial[0], denial


# ---------------------------------------------------------------------------
# Pane-based teammates: teammateMode "tmux", in an interactive session inside tmux
# ---------------------------------------------------------------------------

def tmux(*args, env=None):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=30)


SOCKET = "briefing-e2e-%d" % os.getpid()


def test_a_pane_teammate_is_a_claude_process_briefed_at_its_session_start(clis, tmp_path, serve):
    """Headless (``-p``) teammates always run in-process, whatever teammateMode says. In an
    interactive session inside tmux with teammateMode "tmux", Claude Code 2.1.328 starts each
    teammate in a pane of its own: a separate ``claude --agent-id NAME@TEAM --agent-name NAME
    --team-name TEAM ... --agent-type TYPE`` process, whose SessionStart names the agent, so
    briefing briefs it as it briefs ``claude --agent TYPE``: the declared and the native skills,
    each exactly once."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    state = {"lead": 0}

    def script(r):
        if not r.has_tools:
            return "ok"
        if "You are the e2e teammate PANE." in r.all_text:
            return "Report: " + verdict(r.all_text, markers)
        state["lead"] += 1
        if state["lead"] == 1:
            return [mate("m-pane", "pane")]
        return "All done."

    server = serve(FakeAnthropic, script)
    claude = TeamClaude(tmp_path, server)
    project = str(claude.project)
    claude.write({
        "home/.claude/settings.json": json.dumps({"teammateMode": "tmux"}),
        # What the interactive first run would ask: onboarding, trusting the folder, the API key.
        "home/.claude.json": json.dumps({"hasCompletedOnboarding": True,
                                         "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
                                         "projects": {project: {"hasTrustDialogAccepted": True}}}),
        "project/.claude/skills/alpha/SKILL.md": alpha.md(),
        "project/.claude/skills/beta/SKILL.md": beta.md(),
        "project/.claude/agents/pane.md": mate_md("pane", ["alpha"], native=["beta"]),
    })
    env = claude.env()
    # The tmux server is started with the run's environment, so the teammate's pane inherits it.
    argv = [str(claude.binary), "--permission-mode", "acceptEdits", "--plugin-dir", str(REPO)]
    try:
        started = tmux("new-session", "-d", "-s", "lead", "-x", "200", "-y", "50", "-c", project,
                       " ".join(shlex.quote(a) for a in argv), env=env)
        assert started.returncode == 0, started.stderr
        ready = time.monotonic() + 30
        while time.monotonic() < ready and "❯" not in tmux("capture-pane", "-p", "-t", "lead").stdout:
            time.sleep(0.5)
        tmux("send-keys", "-t", "lead", "Work with your teammate.", "Enter")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not requests_of(server, "pane"):
            time.sleep(1)
        panes = tmux("list-panes", "-a", "-F", "#{pane_start_command}").stdout
        screens = "\n".join(tmux("capture-pane", "-p", "-t", pane_id).stdout for pane_id in
                            tmux("list-panes", "-a", "-F", "#{pane_id}").stdout.split())
    finally:
        tmux("kill-server")
    assert "--agent-type pane" in panes, panes  # a claude process of its own, in a pane
    pane = requests_of(server, "pane")
    assert pane, "the pane teammate never reached the model:\n" + screens
    first = pane[0]
    assert not first.is_subagent  # its own process: no subagent of the lead's
    assert verdict(first.all_text, markers) == BRIEFED
    assert first.all_text.count(alpha.start) == 1 and first.all_text.count(beta.start) == 1
    assert briefing_parts(first.hook_context("SessionStart")), "not delivered at the teammate's SessionStart"
