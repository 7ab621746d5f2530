"""End-to-end: ``briefing-doctor --audit`` over what real OpenCode 1.18.33 and Kilo 7.7.7 recorded (issue 40).

One machine per CLI runs test_opencode.py's scenarios one after the other: the three task
calls (a declaring agent compacted after its first turn, a control, an agent whose skill is
missing, refused), then a command whose subtask runs that agent, told to abort. The doctor
then reads the CLI's database and log and gives each run its verdict.
"""
import json
import sqlite3
import subprocess
import sys

import pytest

from fake_chat import FakeChat
from opencode_runner import OpenCodeMachine
from runners import REPO
from test_opencode import AGENTS, cli, delegation_script, plugin  # noqa: F401  (cli and plugin are fixtures)

pytestmark = pytest.mark.e2e

DELEGATE = "Delegate the three tasks."


def audit(machine):
    """The doctor's ``--audit --json`` over the machine's records, as a person runs it in the project."""
    argv = [sys.executable, str(REPO / "bin" / "briefing-doctor"), "--audit", "--json", "--since", "3650",
            "--harness", machine.cli]
    proc = subprocess.run(argv, env=machine.env(), cwd=str(machine.project), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode in (0, 1) and b"Traceback" not in proc.stderr, proc
    report = json.loads(proc.stdout.decode())
    rows = sorted(report["audit"], key=lambda row: (row["agent"], row["verdict"]))
    return proc.returncode, report, rows


def listing(folder):
    return sorted(path.name for path in folder.iterdir())


def test_opencode_and_kilo_runs_get_their_verdicts(cli, plugin, tmp_path, serve):
    server = serve(FakeChat, delegation_script(["briefed", "control", "broken"],
                                               lambda req: DELEGATE in "\n".join(req.texts("user"))))
    machine = OpenCodeMachine(tmp_path, server, cli, plugin, context=20000).write(AGENTS)
    for args in ((DELEGATE,), ("argx", "--command", "sub-broken")):
        proc = machine.run(*args)
        assert proc.rc == 0 and not proc.timed_out, proc

    # Nothing is created in the CLI's folder (issue 43, item 7): not by the audit, not by the pre-flight.
    # Both CLIs leave their -wal and -shm after a run (measured); a database closed cleanly has none,
    # and mode=ro alone would create both: checked in both states.
    data = machine.home / ".local" / "share" / machine.cli
    database = data / ("%s.db" % machine.cli)
    preflight = {"hook_event_name": "SessionStart", "source": "startup", machine.cli + "_plugin": "1",
                 "cwd": str(machine.project)}
    for state in ("as the CLI left it", "closed cleanly"):
        if state == "closed cleanly":
            db = sqlite3.connect(str(database))
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()
        before = listing(data)
        assert (machine.cli + ".db-wal" in before) == (state == "as the CLI left it"), before
        rc, report, rows = audit(machine)
        assert listing(data) == before, (state, before)
        subprocess.run([sys.executable, "-I", "-S", "-B", str(REPO / "hooks" / "briefing-preload")],
                       env=machine.env(), cwd=str(machine.project), input=json.dumps(preflight).encode(),
                       stdout=subprocess.PIPE, timeout=120)
        assert listing(data) == before, (state, before)
    assert [(row["agent"], row["verdict"]) for row in rows] == [("briefed", "briefed"), ("broken", "refused"), ("broken", "refused"),
                                ("control", "no-declaration")], report
    assert rc == 0 and report["skipped"] == [], report
    briefed = rows[0]
    assert [(i["name"], i["bytes"]) for i in briefed["delivered"]] == [("demo-magic", 60000)]
    assert (briefed["compactions"], briefed["redelivered"]) == (1, 1), briefed
    assert briefed["redelivered_by"] == ["system.transform (inferred)"]
    refusals = sorted(row["refused"] for row in rows[1:3])
    assert refusals[0].startswith("briefing: agent 'broken' references unknown skill(s): nope"), refusals
    assert refusals[1].startswith("the agent got the abort instruction at its start"), refusals
    assert all(row["agent_id"] for row in report["audit"] if row["agent"] != "broken" or "abort" in row["refused"])
    assert len({row["session"] for row in report["audit"]}) == 2  # the two runs' main sessions
