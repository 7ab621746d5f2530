"""End-to-end: ``briefing-doctor --audit`` reads what the real CLIs recorded (issue 40).

Each test runs the existing scenarios of one CLI in one machine, one session after another
(briefed, control, refused, compacted and briefed again; for Claude Code a ``--agent``
session and a session without the plugin; for Codex a run whose hooks were never trusted),
then runs the doctor over that machine's records and checks every run's verdict.
"""
import json
import subprocess
import sys

import pytest

from compaction_kit import UsageAnthropic, UsageCopilot, UsageOpenAI, codex_compacting_config
from copilot_runner import Copilot
from kit import Skill, claude_main_only, claude_spawner, codex_spawner, markers_of, ok
from runners import REPO, Claude, Codex
from test_codex import plugin_source, role_toml  # noqa: F401  (plugin_source is a fixture)
from test_compaction_claude import agent_md as claude_agent_md, compacting
from test_compaction_codex import child_script
from test_compaction_copilot import agent_md as copilot_agent_md, working
from test_copilot import checkout, copilot_cache, delegate  # noqa: F401  (fixtures)
from test_gemini import agent_md as gemini_agent_md, gemini_env, installed_home, machine as gemini_machine  # noqa: F401
from test_gemini import no_python_path, spawner as gemini_spawner
from test_claude_teams import TeamClaude, mate, mate_md, team_script

pytestmark = pytest.mark.e2e


def audit(env, project, *args):
    """The doctor's --audit --json over a machine's records: (exit code, the report)."""
    argv = [sys.executable, str(REPO / "bin" / "briefing-doctor"), "--audit", "--json", "--since", "3650",
            "--cwd", str(project)] + list(args)
    proc = subprocess.run(argv, env=env, cwd=str(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr.decode(), proc
    return proc.returncode, json.loads(proc.stdout.decode())


def verdicts(report):
    return sorted((row["agent"], row["verdict"]) for row in report["audit"])


def rows_of(report, agent):
    return [row for row in report["audit"] if row["agent"] == agent]


def test_claude_code_runs_get_their_verdicts(clis, tmp_path, serve):
    alpha, beta = Skill("alpha"), Skill("beta", size=14000)
    markers = markers_of([alpha, beta])
    claude = Claude(tmp_path, serve(UsageAnthropic, claude_spawner(["reviewer", "plain", "broken"], markers)))
    claude.write({"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta)})
    claude.write({"project/.claude/agents/%s.md" % name: claude_agent_md(name, skills) for name, skills in (
        ("reviewer", ["alpha", "beta"]), ("plain", None), ("broken", ["alpha", "ghost-skill"]),
        ("compactor", ["alpha", "beta"]), ("solo", ["alpha"]), ("checker", ["alpha"]))})
    ok(claude.run("Review the change."))
    claude.server = serve(UsageAnthropic, compacting("compactor", markers))
    ok(claude.run("Compact it.", timeout=150))
    claude.server = serve(UsageAnthropic, claude_main_only(markers))
    ok(claude.run("Work as solo.", "--agent", "solo"))
    claude.server = serve(UsageAnthropic, claude_spawner(["reviewer"], markers))
    ok(claude.run("Review without the plugin.", plugin_dirs=()))  # briefing is not loaded: not-briefed
    claude.server = serve(UsageAnthropic, claude_spawner(["checker"], markers))
    env = claude.env
    claude.env = lambda: dict(env(), PATH=no_python_path(tmp_path))
    ok(claude.run("Check without Python."))  # the hook's fallback says so, and the spawn goes on
    claude.env = env

    rc, report = audit(claude.env(), claude.project)
    assert verdicts(report) == [("broken", "refused"), ("checker", "not-briefed"), ("compactor", "briefed"),
                                ("plain", "no-declaration"), ("reviewer", "briefed"), ("reviewer", "not-briefed"),
                                ("solo", "briefed")], report
    assert rc == 1  # the run without the plugin
    assert report["summary"]["not-briefed"] == 2 and report["summary"]["briefed"] == 3
    checker, = rows_of(report, "checker")
    assert checker["cause"].startswith("Python is missing"), checker
    compactor, = rows_of(report, "compactor")
    assert (compactor["compactions"], compactor["redelivered"], compactor["redelivered_by"]) == (1, 1, ["SessionStart"])
    assert compactor["parts"] == 2 and [i["name"] for i in compactor["delivered"]] == ["alpha", "beta"]
    assert compactor["delivered"][1]["bytes"] == len(beta.body.encode())
    broken, = rows_of(report, "broken")
    assert broken["refused"].startswith("briefing: agent 'broken' references unknown skill(s): ghost-skill")
    assert broken["agent_id"] is None
    solo, = rows_of(report, "solo")
    assert solo["kind"] == "session"
    unbriefed = [r for r in rows_of(report, "reviewer") if r["verdict"] == "not-briefed"][0]
    assert "enable the briefing plugin" in unbriefed["cause"]
    assert [d["from"] for d in unbriefed["declared"]] == ["now", "now"]
    # The records hold every skill body; the report holds none of them.
    assert not any(m in json.dumps(report) for m in markers)


def point(codex, server):
    """The next Codex run talks to ``server`` (config.toml names the model server's address)."""
    config = codex.codex_home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(codex.server.url, server.url), encoding="utf-8")
    codex.server = server


def test_claude_code_teammates_are_runs_of_their_own(clis, tmp_path, serve):
    alpha = Skill("alpha")
    calls = [mate("m-briefed", "briefed"), mate("m-control", "control"), mate("m-broken", "broken")]
    claude = TeamClaude(tmp_path, serve(UsageAnthropic, team_script(calls, {"briefed": markers_of([alpha])})))
    claude.write({"project/.claude/skills/alpha/SKILL.md": alpha.md(),
                  "project/.claude/agents/briefed.md": mate_md("briefed", ["alpha"]),
                  "project/.claude/agents/control.md": mate_md("control"),
                  "project/.claude/agents/broken.md": mate_md("broken", ["alpha", "ghost-skill"])})
    ok(claude.run("Work with your teammates.", timeout=150))
    rc, report = audit(claude.env(), claude.project)
    assert verdicts(report) == [("briefed", "briefed"), ("broken", "refused"), ("control", "no-declaration")]
    assert {row["kind"] for row in report["audit"]} == {"teammate"}
    assert rc == 0


def test_codex_runs_get_their_verdicts_and_untrusted_hooks_are_the_cause(clis, plugin_source, tmp_path, serve):
    alpha, beta = Skill("alpha"), Skill("beta", size=6000)
    markers = markers_of([alpha, beta])
    codex = Codex(tmp_path, serve(UsageOpenAI, codex_spawner(["reviewer", "plain", "broken"], markers)))
    config = codex.codex_home / "config.toml"
    config.write_text(codex_compacting_config(config.read_text(encoding="utf-8")), encoding="utf-8")
    codex.plugin_root = codex.install(plugin_source)
    codex.write({"project/.codex/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta)})
    codex.write({"project/.codex/agents/%s.toml" % name: role_toml(name, skills) for name, skills in (
        ("reviewer", ["alpha", "beta"]), ("plain", None), ("broken", ["alpha", "ghost-skill"]))})
    ok(codex.run("Review the change."))
    point(codex, serve(UsageOpenAI, child_script(markers)))
    ok(codex.run("Review and compact.", timeout=150))
    point(codex, serve(UsageOpenAI, codex_spawner(["reviewer"], markers)))
    ok(codex.run("Review with untrusted hooks.", bypass_hook_trust=False))  # Codex skips the hooks silently

    rc, report = audit(codex.env(), codex.project)
    assert verdicts(report) == [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed"),
                                ("reviewer", "briefed"), ("reviewer", "not-briefed")], report
    assert rc == 1
    compacted = [r for r in rows_of(report, "reviewer") if r["compactions"]]
    assert [(r["compactions"], r["redelivered"], r["redelivered_by"]) for r in compacted] == [
        (1, 1, ["PostToolUse"])]
    unbriefed, = [r for r in rows_of(report, "reviewer") if r["verdict"] == "not-briefed"]
    assert "not trusted the hooks" in unbriefed["cause"], unbriefed
    times = [row["time"] for row in report["audit"]]
    assert times == sorted(times, reverse=True)  # newest first
    assert not any(m in json.dumps(report) for m in markers)


def test_copilot_cli_runs_get_their_verdicts(clis, copilot_cache, checkout, tmp_path, serve):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    copilot = Copilot(tmp_path, serve(UsageCopilot, delegate(["reviewer", "plain", "broken"], markers)), copilot_cache)
    env = copilot.env
    copilot.env = lambda: dict(env(), COPILOT_PROVIDER_MAX_PROMPT_TOKENS="64000")
    copilot.install(checkout)
    copilot.write({"project/.github/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta)})
    copilot.write({"project/.github/agents/%s.agent.md" % name: copilot_agent_md(name, skills) for name, skills in (
        ("reviewer", ["alpha", "beta"]), ("plain", None), ("broken", ["alpha", "ghost-skill"]),
        ("worker", ["alpha", "beta"]))})
    ok(copilot.run("Review the change."))
    copilot.server = serve(UsageCopilot, working(markers, agent="worker"))
    ok(copilot.run("Work and compact.", timeout=90))
    copilot.server = serve(UsageCopilot, working(markers, main=True))
    ok(copilot.run("Work as the agent and compact.", "--agent", "worker", timeout=120))

    rc, report = audit(copilot.env(), copilot.project)
    assert verdicts(report) == [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed"),
                                ("worker", "briefed"), ("worker", "briefed")], report
    assert rc == 0
    for worker in rows_of(report, "worker"):
        assert worker["compactions"] >= 1 and worker["redelivered"] == worker["compactions"], worker
        assert worker["redelivered_by"][0] == "PreToolUse (inferred)"
    assert sorted(row["kind"] for row in rows_of(report, "worker")) == ["session", "subagent"]
    assert not any(m in json.dumps(report) for m in markers)


def test_gemini_cli_runs_get_their_verdicts(gemini_machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    m = gemini_machine(gemini_spawner(["reviewer", "plain", "broken"], markers))
    m.write({"project/.gemini/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta)})
    m.write({"project/.gemini/agents/%s.md" % name: gemini_agent_md(name, skills) for name, skills in (
        ("reviewer", ["alpha", "beta"]), ("plain", None), ("broken", ["alpha", "ghost-skill"]))})
    m.acknowledge("reviewer", "plain", "broken")
    result = m.run()
    assert result.rc == 0, result

    rc, report = audit(gemini_env(m.home), m.project)
    assert verdicts(report) == [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed")], report
    assert rc == 0
    reviewer, = rows_of(report, "reviewer")
    assert [(i["name"], i["bytes"]) for i in reviewer["delivered"]] == [
        ("alpha", len(alpha.body.encode())), ("beta", len(beta.body.encode()))]
    assert not any(m_ in json.dumps(report) for m_ in markers)
