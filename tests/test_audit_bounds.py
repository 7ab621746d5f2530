"""The audit's and the pre-flight's bounds hold on the reads themselves (issue 43, holes 6, 8, 9).

- A record of one huge line is read only up to the bound (never whole), in the pre-flight and
  in ``--audit``; a line past LINE_BYTES is skipped in chunks and the lines after it still read.
- The pre-flight lists the newest sessions only: with thousands of other projects' Codex
  rollouts, or Copilot CLI session folders, it opens at most LISTING_OPENS records, and finds
  the same newest sessions the whole listing finds whenever they lie within that many.
- Every line of the audit that carries record text (the progress line, the pre-flight's line)
  escapes control characters.
"""
import importlib
import io
import json
import os
import random
import time
import tracemalloc

import pytest

from conftest import hook_package


def modules():
    hook_package()
    return importlib.import_module("briefing.audit"), importlib.import_module("briefing.machine")


def big_line_file(path, size, after=b""):
    """A record whose first line is ``size`` bytes of one JSON string, then ``after``."""
    with open(str(path), "wb") as handle:
        handle.write(b'{"type":"user","pad":"')
        chunk = b"x" * (1024 * 1024)
        left = size
        while left > 0:
            handle.write(chunk[:left])
            left -= len(chunk)
        handle.write(b'"}\n' + after)


def peak_of(run):
    """(result, the peak bytes Python allocated while ``run`` ran)."""
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("per_file, size", [
    (512 * 1024, 24 * 1024 * 1024),  # the pre-flight's bound, a crash-padded transcript
    (4096, 3 * 1024 * 1024),
    (1024 * 1024, 1024 * 1024 + 7),  # just past the bound
])
def test_a_single_huge_line_is_read_only_up_to_the_bound(tmp_path, per_file, size):
    audit, _ = modules()
    path = tmp_path / "one-line.jsonl"
    big_line_file(path, size)
    log = audit.Log(per_file=per_file, quiet=True)
    lines, peak = peak_of(lambda: list(audit.record_lines(str(path), (b'"type"',), log, "claude")))
    assert lines == []
    assert peak < 3 * per_file + 256 * 1024, peak  # the line and a copy of it, not the record
    assert log.bytes_left >= audit.AUDIT_BYTES - per_file
    assert any("only its first %d of" % per_file in p["problem"] for p in log.problems), log.problems


def test_a_line_past_line_bytes_is_skipped_in_chunks_and_the_rest_read(tmp_path, monkeypatch):
    audit, _ = modules()
    monkeypatch.setattr(audit, "LINE_BYTES", 256 * 1024)
    path = tmp_path / "padded.jsonl"
    big_line_file(path, 6 * 1024 * 1024, after=b'{"type":"user","n":2}\n')
    log = audit.Log(quiet=True)
    lines, peak = peak_of(lambda: list(audit.record_lines(str(path), (b'"type"',), log, "claude")))
    assert lines == [(2, {"type": "user", "n": 2})]
    assert peak < 2 * 1024 * 1024, peak
    assert [p["problem"] for p in log.problems] == ["line 1 is longer than %d bytes; skipped" % (256 * 1024)]


def test_the_pre_flight_on_a_session_of_one_huge_line_stays_quiet_and_bounded(sandbox):
    """A SessionStart whose last Claude Code session is one 24 MiB line: no line, no traceback."""
    sb = sandbox({"project/.claude/agents/a.md": "---\nname: a\ndescription: a\nskills: [alpha]\n---\nx\n",
                  "project/.claude/skills/alpha/SKILL.md": "---\nname: alpha\ndescription: a\n---\nA\n"})
    folder = sb.path("home/.claude/projects/%s" % "".join(
        c if c.isascii() and c.isalnum() else "-" for c in str(sb.project)))
    folder.mkdir(parents=True)
    big_line_file(folder / "old-session.jsonl", 24 * 1024 * 1024)
    result = sb.run(sb.payload("SessionStart", source="startup", session_id="new"), args=("--part", "1"))
    assert result.rc == 0 and "Traceback" not in result.err
    assert "briefing: the last" not in result.out


# ---------------------------------------------------------------------------------------------
# Hole 8: the pre-flight's listing is bounded, newest first.
# ---------------------------------------------------------------------------------------------

def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


def rollout(home, thread, session, cwd, started, written, parent=None):
    """One Codex rollout: its session_meta line, its times (start in the name, mtime written)."""
    day = time.strftime("%Y/%m/%d", time.gmtime(started))
    folder = os.path.join(home, ".codex", "sessions", day)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "rollout-%s-%s.jsonl" % (time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(started)),
                                                        thread))
    payload = {"session_id": session, "id": thread, "timestamp": iso(started), "cwd": cwd,
               "cli_version": "0.169.0", "instructions": "i" * 20000}
    if parent:
        payload.update(parent_thread_id=parent, agent_role="reviewer")
    with open(path, "w") as handle:
        handle.write(json.dumps({"timestamp": iso(started), "type": "session_meta", "payload": payload}) + "\n")
    os.utime(path, (written, written))
    return path


def codex_history(sb, rng, foreign, ours):
    """``foreign`` rollouts of other projects and ``ours`` sessions of this one (each with 0 to 2
    spawned agents), at random times over the last three days. Returns {session: newest write}."""
    now = time.time()
    home = str(sb.home)
    for n in range(foreign):
        started = now - rng.uniform(60, 3 * 86400 - 3600)
        rollout(home, "f-%05d" % n, "f-%05d" % n, "/elsewhere/p%d" % (n % 50), started,
                started + rng.uniform(0, 1800))
    mine = {}
    for n in range(ours):
        started = now - rng.uniform(60, 3 * 86400 - 3600)
        sid = "s-%03d" % n
        last = started + rng.uniform(0, 600)
        rollout(home, sid, sid, str(sb.project), started, last)
        for child in range(rng.randint(0, 2)):
            begun = started + rng.uniform(1, 300)
            written = begun + rng.uniform(0, 1200)
            rollout(home, "%s-c%d" % (sid, child), sid, str(sb.project), begun, written, parent=sid)
            last = max(last, written)
        mine[sid] = last
    return mine


def counting_heads(monkeypatch, module):
    opened = []
    real = module.head_line

    def head_line(path, *args):
        opened.append(path)
        return real(path, *args)
    monkeypatch.setattr(module, "head_line", head_line)
    return opened


def test_the_codex_pre_flight_opens_few_rollouts_among_thousands(sandbox, monkeypatch):
    audit, machine_module = modules()
    codex = importlib.import_module("briefing.audit.codex")
    sb = sandbox({"project/.codex/agents/a.toml": 'name = "a"\ndescription = "a"\n'})
    codex_history(sb, random.Random(7), foreign=3000, ours=0)
    opened = counting_heads(monkeypatch, codex)
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    assert codex.sessions(machine, time.time() - 3 * 86400, newest=2) == []
    assert len(opened) == audit.LISTING_OPENS


@pytest.mark.parametrize("seed", range(16))
def test_the_codex_pre_flight_finds_what_the_whole_listing_finds(sandbox, monkeypatch, seed):
    """Generated histories: the two sessions that began last, each with all its rollouts,
    whenever the rollouts that began since the earlier of them are within LISTING_OPENS."""
    audit, machine_module = modules()
    codex = importlib.import_module("briefing.audit.codex")
    rng = random.Random(seed)
    sb = sandbox()
    codex_history(sb, rng, foreign=rng.choice([0, 5, 20, 200]), ours=rng.randint(1, 6))
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    since = time.time() - 3 * 86400
    begun = lambda session: min(iso_to(meta["timestamp"]) for _, meta in session.extra)
    latest = sorted(codex.sessions(machine, since), key=begun, reverse=True)[:2]
    opened = counting_heads(monkeypatch, codex)
    quick = codex.sessions(machine, since, newest=2)
    assert len(opened) <= audit.LISTING_OPENS
    since_begun = sum(1 for path in all_rollouts(sb) if start_of(path) >= int(min(begun(s) for s in latest)))
    if since_begun <= audit.LISTING_OPENS:
        shape = lambda found: sorted((s.id, s.path, sorted(p for p, _ in s.extra)) for s in found)
        assert shape(quick) == shape(latest)
    else:
        assert len(quick) <= 2


def start_of(path):
    """The second a rollout began, from its name."""
    stamp = os.path.basename(path)[len("rollout-"):len("rollout-YYYY-MM-DDTHH-MM-SS")]
    return int(iso_to(stamp[:10] + "T" + stamp[11:].replace("-", ":") + "Z"))


def iso_to(value):
    hook_package()
    return importlib.import_module("briefing.text").iso_seconds(value)


def all_rollouts(sb):
    for folder, _, names in os.walk(str(sb.home / ".codex" / "sessions")):
        for name in names:
            yield os.path.join(folder, name)


def copilot_session(home, sid, cwd, written):
    folder = os.path.join(home, ".copilot", "session-state", sid)
    os.makedirs(folder)
    with open(os.path.join(folder, "workspace.yaml"), "w") as handle:
        handle.write("id: %s\ncwd: %s\n" % (sid, cwd))
    events = os.path.join(folder, "events.jsonl")
    with open(events, "w") as handle:
        handle.write('{"type":"session.start","data":{}}\n')
    os.utime(events, (written, written))


def test_the_copilot_pre_flight_opens_few_workspaces_and_finds_the_newest(sandbox, monkeypatch):
    audit, machine_module = modules()
    copilot = importlib.import_module("briefing.audit.copilot")
    sb = sandbox()
    now = time.time()
    for n in range(500):
        copilot_session(str(sb.home), "f-%04d" % n, "/elsewhere/p%d" % n, now - 100 - n * 60)
    copilot_session(str(sb.home), "mine-new", str(sb.project), now - 100 - 10.5 * 60)
    copilot_session(str(sb.home), "mine-old", str(sb.project), now - 100 - 400.5 * 60)
    opened = []
    real = copilot.workspace_cwd
    monkeypatch.setattr(copilot, "workspace_cwd", lambda folder: opened.append(folder) or real(folder))
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    since = now - 3 * 86400
    assert [s.id for s in copilot.sessions(machine, since)] == ["mine-new", "mine-old"]
    del opened[:]
    assert [s.id for s in copilot.sessions(machine, since, newest=2)] == ["mine-new"]
    assert len(opened) == audit.LISTING_OPENS


# ---------------------------------------------------------------------------------------------
# Hole 9: record text on the terminal is escaped.
# ---------------------------------------------------------------------------------------------

HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J"


def test_the_progress_line_escapes_a_session_id_from_the_records(sandbox, monkeypatch):
    audit, machine_module = modules()
    sb = sandbox()
    folder = sb.path("home/.claude/projects/%s" % "".join(
        c if c.isascii() and c.isalnum() else "-" for c in str(sb.project)))
    folder.mkdir(parents=True)
    (folder / (HOSTILE + ".jsonl")).write_text('{"type":"user"}\n')
    monkeypatch.setattr(audit, "PROGRESS_AFTER", 0.0)
    err = io.StringIO()
    log = audit.Log(err=err)
    log.started -= 1.0
    log.shown -= 1.0
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    audit.audit(machine, ("claude",), 3650, log=log)
    shown = err.getvalue()
    assert "session(s) read" in shown
    assert "\x1b" not in shown and "\x07" not in shown
    assert "evil\\x1b]0;pwned\\x07" in shown


def test_the_pre_flight_line_escapes_a_session_id_from_the_records(monkeypatch):
    """The pre-flight's one line names the last session: its id comes from a file name."""
    audit, machine_module = modules()
    claude = importlib.import_module("briefing.audit.claude")

    class Found(object):
        id, harness = "\x1b]0;x\x07abcdefgh", "claude"
    run = audit.Run("claude", Found.id, "reviewer")
    monkeypatch.setattr(claude, "sessions", lambda machine, since, newest=None: [Found()])
    monkeypatch.setattr(claude, "read", lambda machine, session, log: [run])
    monkeypatch.setattr(audit, "declared_now", lambda machine, r: ([], True))
    harnesses = importlib.import_module("briefing.harnesses")
    machine = machine_module.Machine("/", {"HOME": "/nonexistent"})
    line = audit.last_session_line(machine, harnesses.HARNESSES["claude"], current="other")
    assert line.startswith("briefing: the last Claude Code session (")
    assert "\x1b" not in line and "\x07" not in line
