"""End-to-end: ``briefing-doctor --audit --harness qwen`` over what the real Qwen Code 0.24.4 recorded.

Qwen Code records no hook output (docs/doctor.md "Audit"): the audit infers a delivery from a run
that started past briefing's guard, a compaction from the summariser's answer in the main chat's
telemetry, and reads a refusal from the parent's error result. One machine holds three sessions:
briefed, control and two refused spawns; a subagent that compacts; a spawn past a guard taken
out of the hooks file, which gets the abort instruction. A second machine has briefing not
installed at all: its declaring run is not-briefed, and the extension is the likely cause.
"""
import json
import subprocess
import sys

import pytest

from conftest import agent_md, skill_md
from fake_qwen import FakeQwen
import qwen_runner
from runners import REPO
from test_qwen import BODY, SECRET, compacting, qwen, spawning  # noqa: F401  (qwen is a fixture)

pytestmark = pytest.mark.e2e

FILES = {
    "project/.qwen/agents/briefed.md": agent_md("briefed", ["magic"], body=BODY % "briefed"),
    "project/.qwen/agents/control.md": agent_md("control", body=BODY % "control"),
    "project/.qwen/agents/missing.md": agent_md("missing", ["magic", "no-such-skill"], body=BODY % "missing"),
    "project/.qwen/agents/nohook.md": agent_md("nohook", ["magic"], body="You are nohook, no placeholder.\n"),
    "project/.qwen/skills/magic/SKILL.md": skill_md("magic", "The phrase is %s.\n" % SECRET),
}


def session(run, script):
    with FakeQwen(script) as server:
        proc = run.run(server, "go")
    assert not server.errors and proc.rc == 0 and not proc.timed_out, proc
    return server


def doctor(run):
    """``briefing-doctor --audit --json --harness qwen`` in the machine's project: (exit code, report).
    (tests/e2e/test_audit.py's helper of that name is shadowed by tests/test_audit.py on sys.path.)"""
    argv = [sys.executable, str(REPO / "bin" / "briefing-doctor"), "--audit", "--json", "--harness", "qwen",
            "--since", "3650"]
    proc = subprocess.run(argv, env=qwen_runner.base_env(run.home), cwd=str(run.project), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr.decode(), proc
    return proc.returncode, json.loads(proc.stdout.decode())


def verdicts(report):
    return sorted((row["agent"], row["verdict"]) for row in report["audit"])


def rows_of(report, agent):
    return sorted((row for row in report["audit"] if row["agent"] == agent), key=lambda row: row["time"])


@pytest.fixture(scope="module")
def machine(qwen, tmp_path_factory):
    """The machine after its three sessions (its HOME's briefing has no guard since the third)."""
    run = qwen_runner.QwenRun(tmp_path_factory.mktemp("qwen-audit"), FILES)
    first = session(run, spawning(["briefed", "control", "missing", "nohook"]))
    assert first.main_requests()[-1].tool_results()[0].startswith("VERDICT-BRIEFED")
    compacted = session(run, compacting)
    assert [r for r in compacted.log if r.is_summary], "the subagent never compacted"
    hooks_path = run.home / ".qwen" / "extensions" / "briefing" / "hooks" / "hooks.json"
    hooks = json.loads(hooks_path.read_text())
    del hooks["hooks"]["PreToolUse"]
    hooks_path.write_text(json.dumps(hooks))
    aborted = session(run, spawning(["missing"]))
    assert "status=\"abort\"" in aborted.subagent_requests("missing")[0].system.replace("&gt;", ">")
    return run


def test_each_qwen_run_gets_its_verdict(machine):
    rc, report = doctor(machine)
    assert verdicts(report) == [("briefed", "briefed"), ("briefed", "briefed"), ("control", "no-declaration"),
                                ("missing", "refused"), ("missing", "refused"), ("nohook", "refused")], report
    assert rc == 0 and report["skipped"] == []
    assert {row["harness"] for row in report["audit"]} == {"qwen"}
    assert len({row["session"] for row in report["audit"]}) == 3
    assert SECRET not in json.dumps(report)


def test_a_briefed_run_is_inferred_and_says_so(machine):
    _, report = doctor(machine)
    first, compacted = rows_of(report, "briefed")
    assert first["delivered"] == [{"name": "magic", "kind": "skill", "bytes": None, "parts": [1], "inferred": True}]
    assert first["agent_id"].startswith("briefed-call_") and first["compactions"] == 0 and first["notes"] == []
    # Qwen Code records no compaction of a subagent but the summariser's answer; the system
    # prompt, and the briefing at ${hook_context} in it, survives it.
    assert (compacted["compactions"], compacted["redelivered"], compacted["redelivered_by"]) == (
        1, 1, ["its system prompt, kept (inferred)"])


def test_refusals_from_the_record_and_the_abort_inferred(machine):
    _, report = doctor(machine)
    guarded, aborted = rows_of(report, "missing")
    assert guarded["refused"].startswith("briefing: agent 'missing' references unknown skill(s): no-such-skill")
    assert aborted["refused"] == "the agent got the abort instruction at its start (SubagentStart) (inferred)"
    nohook, = rows_of(report, "nohook")
    assert "Add a line ${hook_context} to the body of" in nohook["refused"]


def test_without_briefing_installed_a_declaring_run_is_not_briefed(qwen, tmp_path):
    run = qwen_runner.QwenRun(tmp_path, FILES, installed=False)
    session(run, spawning(["briefed"]))
    rc, report = doctor(run)
    row, = report["audit"]
    assert (row["agent"], row["verdict"], rc) == ("briefed", "not-briefed", 1), report
    assert row["cause"].startswith("the briefing extension is not installed"), row
