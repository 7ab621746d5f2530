"""briefing-doctor --audit over records the real CLIs wrote (issue 40).

tests/data/audit/<harness>/ holds what tests/e2e/test_audit.py's runs left in each CLI's own
record folders (Claude Code 2.1.328, Codex 0.169.0, Copilot CLI 1.0.102, Gemini CLI 0.61.0),
trimmed and scrubbed by tests/data/audit/trim.py: a briefed, a control, a refused and a
compacted run each, a ``claude --agent`` session, a Claude Code run without the plugin and a
Codex run with hooks never trusted. The sandbox gets them back under its own paths, with the
agents and skills those runs declared. tests/data/audit/opencode/ and kilo/ hold what
tests/e2e/test_opencode.py's runs left under OpenCode 1.18.33 and Kilo 7.7.7 (their SQLite
database as SQL text, and their log's lines the audit reads), by tests/data/audit/trim_opencode.py.
"""
import json
import os
import time
from pathlib import Path

import pytest

from conftest import agent_md, role_toml, skill_md

DATA = Path(__file__).resolve().parent / "data" / "audit"

SKILLS = ("alpha", "beta")
DECLARED = {"reviewer": ["alpha", "beta"], "plain": None, "broken": ["alpha", "ghost-skill"],
            "compactor": ["alpha", "beta"], "solo": ["alpha"], "worker": ["alpha", "beta"], "checker": ["alpha"]}


def gemini_md(name, skills):
    text = "---\nname: %s\ndescription: agent %s\n---\nDo the task.\n" % (name, name)
    if skills is not None:
        text += "<!-- briefing: skills = [%s] -->\n" % ", ".join(json.dumps(s) for s in skills)
    return text


# What tests/e2e/test_opencode.py's runs declared (the records under opencode/ and kilo/).
OPENCODE_DECLARED = {"briefed": ["demo-magic"], "control": None, "broken": ["nope"]}


def opencode_files(harness):
    folder = {"opencode": ".opencode", "kilo": ".kilo"}[harness]
    files = {"project/%s.json" % harness: json.dumps({"plugin": ["/somewhere/briefing-opencode"]})}
    for name, skills in OPENCODE_DECLARED.items():
        files["project/%s/agents/%s.md" % (folder, name)] = "---\ndescription: %s\nmode: subagent\n%s---\nDo it.\n" % (
            name, "briefing:\n  skills: [%s]\n" % ", ".join(skills) if skills else "")
    files["project/%s/skills/demo-magic/SKILL.md" % folder] = skill_md("demo-magic", "Body of demo-magic.\n")
    return files


def project_files(harness):
    """The agents and skills the recorded runs declared, where ``harness`` reads them."""
    if harness in ("opencode", "kilo"):
        return opencode_files(harness)
    files = {}
    for name, skills in DECLARED.items():
        files.update({
            "claude": {"project/.claude/agents/%s.md" % name: agent_md(name, skills)},
            "codex": {"project/.codex/agents/%s.toml" % name: role_toml(name, skills)},
            "copilot": {"project/.github/agents/%s.agent.md" % name: agent_md(name, skills)},
            "gemini": {"project/.gemini/agents/%s.md" % name: gemini_md(name, skills)},
        }[harness])
    root = {"claude": ".claude", "codex": ".codex", "copilot": ".github", "gemini": ".gemini"}[harness]
    for skill in SKILLS:
        files["project/%s/skills/%s/SKILL.md" % (root, skill)] = skill_md(skill, "Body of %s.\n" % skill)
    return files


def slug(path):
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def load(sb, harness, edit=None, folder=None):
    """The captured records of ``harness`` (in tests/data/audit/``folder``, by default ``harness``)
    into the sandbox's home, under its own paths."""
    base = DATA / (folder or harness)
    files = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            rel = str(path.relative_to(base)).replace("@SLUG@", slug(str(sb.project)))
            text = path.read_text(encoding="utf-8").replace("@ROOT@", str(sb.root))
            files[rel] = edit(rel, text) if edit else text
    sb.write(files)
    if folder is None:  # another folder's runs declared nothing
        sb.write(project_files(harness))
    for rel in files:
        if rel.endswith(".db.sql"):  # OpenCode's and Kilo's SQLite database, kept as SQL text: its rows
            import sqlite3
            sql = sb.path("home/" + rel[len("home/"):] if rel.startswith("home/") else rel)
            db = sqlite3.connect(str(sql)[:-len(".sql")])
            # the tables first, from the one file the captures share (trim_opencode.py)
            db.executescript((DATA / "opencode-tables.sql").read_text(encoding="utf-8")
                             + sql.read_text(encoding="utf-8"))
            db.commit()
            db.close()
            sql.unlink()
    return sb


def audit(sb, *args):
    result = sb.doctor("--audit", "--json", "--since", "3650", *args)
    assert result.rc in (0, 1), result
    assert "Traceback" not in result.err, result
    return result.rc, json.loads(result.out)


def verdicts(report):
    return sorted((row["agent"], row["verdict"]) for row in report["audit"])


EXPECTED = {
    "claude": (1, [("broken", "refused"), ("checker", "not-briefed"), ("compactor", "briefed"),
                   ("plain", "no-declaration"), ("reviewer", "briefed"), ("reviewer", "not-briefed"),
                   ("solo", "briefed")]),
    "codex": (1, [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed"),
                  ("reviewer", "briefed"), ("reviewer", "not-briefed")]),
    "copilot": (0, [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed"),
                    ("worker", "briefed"), ("worker", "briefed")]),
    "gemini": (0, [("broken", "refused"), ("plain", "no-declaration"), ("reviewer", "briefed")]),
    # A compacted briefed child, a control, a task call refused, a command's subtask told to abort.
    "opencode": (0, [("briefed", "briefed"), ("broken", "refused"), ("broken", "refused"),
                     ("control", "no-declaration")]),
    "kilo": (0, [("briefed", "briefed"), ("broken", "refused"), ("broken", "refused"),
                 ("control", "no-declaration")]),
}

ROW_KEYS = {"harness", "session", "time", "agent", "agent_id", "verdict", "declared", "delivered", "native",
            "refused", "compactions", "redelivered", "cause"}


@pytest.mark.parametrize("harness", sorted(EXPECTED))
def test_every_recorded_run_gets_its_verdict(sandbox, harness):
    sb = load(sandbox(), harness)
    rc, report = audit(sb)
    want_rc, want = EXPECTED[harness]
    assert verdicts(report) == want, report
    assert rc == want_rc
    assert {row["harness"] for row in report["audit"]} == {harness}
    for row in report["audit"]:
        assert ROW_KEYS <= set(row), row
        assert row["refused"] is None or row["refused"].startswith(("briefing: ", "the agent got the abort"))
        assert (row["cause"] is not None) == (row["verdict"] in ("not-briefed", "lost-after-compaction"))
    times = [row["time"] for row in report["audit"]]
    assert times == sorted(times, reverse=True)
    assert report["summary"] == {v: sum(1 for _, w in want if w == v) for v in
                                 ("briefed", "refused", "lost-after-compaction", "not-briefed", "no-declaration")}
    assert report["skipped"] == []
    # Every skill body is in the records; none reaches the report.
    assert "SECRET-" not in json.dumps(report)


@pytest.mark.parametrize("harness, agent, kind, via", [
    ("claude", "compactor", "subagent", ["SessionStart"]),
    ("codex", "reviewer", "subagent", ["PostToolUse"]),
    ("copilot", "worker", "subagent", ["PreToolUse (inferred)"]),
    ("copilot", "worker", "session", ["PreToolUse (inferred)"]),  # `copilot --agent worker`
])
def test_a_compaction_and_the_event_that_briefed_again(sandbox, harness, agent, kind, via):
    sb = load(sandbox(), harness)
    _, report = audit(sb, "--agent", agent)
    compacted = [row for row in report["audit"] if row["compactions"] and row["kind"] == kind]
    assert len(compacted) == 1, report
    row = compacted[0]
    assert (row["compactions"], row["redelivered"], row["redelivered_by"]) == (1, 1, via)
    assert [item["name"] for item in row["delivered"]] == ["alpha", "beta"]
    assert all(item["bytes"] > 0 and item["kind"] == "skill" for item in row["delivered"])


def test_claude_code_names_python_missing_from_the_hook_fallback_s_message(sandbox):
    sb = load(sandbox(), "claude")
    _, report = audit(sb, "--agent", "checker")
    checker, = report["audit"]
    assert checker["verdict"] == "not-briefed"
    assert checker["cause"].startswith("Python is missing: the hook's fallback found no Python 3.8+")
    # The sandbox wrote the agent file after the recorded run: the cause says so too.
    assert "the agent's file changed after this run" in checker["cause"]


def test_claude_code_details_of_a_refusal_a_session_and_a_run_without_the_plugin(sandbox):
    sb = load(sandbox(), "claude")
    _, report = audit(sb)
    rows = {(row["agent"], row["verdict"]): row for row in report["audit"]}
    refused = rows[("broken", "refused")]
    assert refused["agent_id"] is None and "ghost-skill" in refused["refused"]
    assert rows[("solo", "briefed")]["kind"] == "session"
    compactor = rows[("compactor", "briefed")]
    assert compactor["parts"] == 2  # beta alone fills more than one part
    unbriefed = rows[("reviewer", "not-briefed")]
    assert unbriefed["delivered"] == [] and [d["name"] for d in unbriefed["declared"]] == ["alpha", "beta"]
    assert {d["from"] for d in unbriefed["declared"]} == {"now"}
    assert "enable the briefing plugin" in unbriefed["cause"]


def test_codex_hooks_never_trusted_is_the_likely_cause(sandbox):
    sb = load(sandbox(), "codex")
    _, report = audit(sb)
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    assert unbriefed["agent"] == "reviewer" and unbriefed["delivered"] == []
    assert "Codex has not trusted the hooks of briefing@briefing" in unbriefed["cause"]


def test_once_trusted_the_cause_no_longer_blames_trust(sandbox):
    sb = load(sandbox(), "codex")
    config = sb.path("home/.codex/config.toml")
    config.write_text(config.read_text().replace('[plugins."briefing@briefing"]\nenabled = true\n', ""))
    _, report = audit(sb)
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    assert "not installed as a Codex plugin" in unbriefed["cause"]


def test_a_truncated_record_is_reported_and_the_rest_read(sandbox):
    def cut(rel, text):
        if rel.endswith(".jsonl") and "subagents" in rel and "compact_boundary" in text:
            return text[:len(text) - 200]  # the compacted subagent's file, cut inside its last line
        return text
    sb = load(sandbox(), "claude", cut)
    rc, report = audit(sb)
    assert rc == 1
    assert [p for p in report["skipped"] if "truncated" in p["problem"]], report["skipped"]
    assert verdicts(report) == EXPECTED["claude"][1]


def test_a_malformed_line_is_reported_and_skipped(sandbox):
    def garble(rel, text):
        if rel.endswith("events.jsonl"):
            lines = text.splitlines(True)
            lines.insert(3, '{"type":"subagent.started", "data": {oops\n')
            return "".join(lines)
        return text
    sb = load(sandbox(), "copilot", garble)
    _, report = audit(sb)
    assert any("is not JSON" in p["problem"] for p in report["skipped"]), report["skipped"]
    assert verdicts(report) == EXPECTED["copilot"][1]


@pytest.mark.parametrize("harness, old, new", [
    ("claude", '"version":"2.1.328"', '"version":"3.0.0"'),
    ("codex", '"cli_version":"0.169.0"', '"cli_version":"1.0.0"'),
    ("copilot", '"copilotVersion":"1.0.102"', '"copilotVersion":"2.0.0"'),
    ("opencode", "'1.18.33'", "'2.0.0'"),
    ("kilo", "'7.7.7'", "'8.0.0'"),
])
def test_records_of_another_major_version_are_reported_and_skipped(sandbox, harness, old, new):
    seen = []

    def bump(rel, text):
        seen.append(old in text)
        return text.replace(old, new)
    sb = load(sandbox(), harness, bump)
    assert any(seen)
    rc, report = audit(sb)
    assert report["audit"] == [] or harness == "codex" and all(r["agent_id"] is None for r in report["audit"])
    assert any("written by version %s" % new.strip("'").split('"')[-2 if '"' in new else 0] in p["problem"]
               for p in report["skipped"])


@pytest.mark.parametrize("harness, old, new", [
    ("claude", '"version":"2.1.328"', '"version":"2.1.400"'),
    ("codex", '"cli_version":"0.169.0"', '"cli_version":"0.170.1"'),
    ("copilot", '"copilotVersion":"1.0.102"', '"copilotVersion":"1.0.110"'),
    ("opencode", "'1.18.33'", "'1.19.2'"),
    ("kilo", "'7.7.7'", "'7.8.0'"),
])
def test_records_of_a_newer_minor_version_are_read(sandbox, harness, old, new):
    sb = load(sandbox(), harness, lambda rel, text: text.replace(old, new))
    _, report = audit(sb)
    assert verdicts(report) == EXPECTED[harness][1]
    assert report["skipped"] == []


def test_filters_by_agent_harness_and_session(sandbox):
    sb = load(load(sandbox(), "claude"), "gemini")
    _, both = audit(sb)
    assert {row["harness"] for row in both["audit"]} == {"claude", "gemini"}
    _, only = audit(sb, "--harness", "gemini")
    assert verdicts(only) == EXPECTED["gemini"][1]
    _, named = audit(sb, "--agent", "broken")
    assert sorted(row["harness"] for row in named["audit"]) == ["claude", "gemini"]
    session = named["audit"][0]["session"]
    _, one = audit(sb, "--session", session[:8])
    assert one["audit"] and {row["session"] for row in one["audit"]} == {session}


def test_the_text_report_names_sizes_and_verdicts_only(sandbox):
    sb = load(sandbox(), "claude")
    result = sb.doctor("--audit", "--since", "3650")
    assert result.rc == 1, result
    out = result.out
    assert "not-briefed" in out and "refused" in out and "likely cause:" in out
    assert "compacted 1 time(s), briefed again 1 time(s) (by SessionStart)" in out
    assert "delivered in 2 part(s): alpha" in out
    assert out.rstrip().splitlines()[-1] == ("summary: 3 briefed, 1 refused, 0 lost-after-compaction, "
                                             "2 not-briefed, 1 no-declaration")
    assert "SECRET-" not in out + result.err


def test_nothing_recorded_is_healthy(sandbox):
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["alpha"])})
    rc, report = audit(sb)
    assert (rc, report["audit"], report["summary"]["briefed"]) == (0, [], 0)


@pytest.mark.parametrize("args", [("--since", "x"), ("--since", "0"), ("--agent", "a"), ("--audit", "--show", "a")])
def test_usage_errors(sandbox, args):
    sb = sandbox()
    result = sb.doctor(*args)
    assert result.rc == 2, result


def test_bounds_and_progress_are_reported(sandbox, monkeypatch):
    import importlib
    import io
    from conftest import hook_package
    hook_package()
    audit_module = importlib.import_module("briefing.audit")
    machine_module = importlib.import_module("briefing.machine")
    sb = load(sandbox(), "claude")
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    monkeypatch.setattr(audit_module, "PROGRESS_AFTER", 0.0)
    err = io.StringIO()
    log = audit_module.Log(per_file=4096, err=err)
    log.started -= 1.0
    log.shown -= 1.0
    rows, summary, log = audit_module.audit(machine, ("claude",), 3650, log=log)
    assert any("only its first 4096" in p["problem"] for p in log.problems)
    assert "briefing-doctor --audit: " in err.getvalue() and "session(s) read" in err.getvalue()
    small = audit_module.Log(sessions=1)
    rows, _, small = audit_module.audit(machine, ("claude",), 3650, log=small)
    assert any("older session(s) not read" in p["problem"] for p in small.problems)
    assert len({row["session"] for row in rows}) == 1


def newest_first(sb, session_id):
    """Make ``session_id``'s records the newest of the sandbox's Claude Code sessions."""
    base = sb.path("home/.claude/projects/%s" % slug(str(sb.project)))
    now = time.time()
    for path in base.rglob("*"):
        os.utime(str(path), (now - 3600, now - 3600))
    for path in [base / (session_id + ".jsonl")] + list((base / session_id).rglob("*")):
        os.utime(str(path), (now - 60, now - 60))


def unbriefed_session(sb):
    """The session of the run that went without briefing for want of the plugin (reviewer)."""
    _, report = audit(sb)
    return [row["session"] for row in report["audit"] if row["verdict"] == "not-briefed"
            and row["agent"] == "reviewer"][0], report


def test_the_pre_flight_says_when_the_last_session_had_a_run_not_briefed(sandbox):
    sb = load(sandbox(), "claude")
    session, _ = unbriefed_session(sb)
    newest_first(sb, session)
    result = sb.run(sb.payload("SessionStart", source="startup", session_id="a-new-session"), args=("--part", "1"))
    message = json.loads(result.out)["systemMessage"]
    line = [l for l in message.splitlines() if l.startswith("briefing: the last")]
    assert line == ["briefing: the last Claude Code session (%s) started 1 agent run(s) that declared skills and got "
                    "none (reviewer); run briefing-doctor --audit" % session[:8]], message


def test_the_pre_flight_is_silent_when_the_last_session_was_briefed(sandbox):
    sb = load(sandbox(), "claude")
    session, report = unbriefed_session(sb)
    unbriefed = {row["session"] for row in report["audit"] if row["verdict"] == "not-briefed"}
    fine = [row["session"] for row in report["audit"] if row["verdict"] == "briefed"
            and row["session"] not in unbriefed][0]
    newest_first(sb, fine)
    result = sb.run(sb.payload("SessionStart", source="startup", session_id="a-new-session"), args=("--part", "1"))
    assert "briefing: the last" not in result.out
    # The session that starts is never its own "last session".
    newest_first(sb, session)
    result = sb.run(sb.payload("SessionStart", source="startup", session_id=session), args=("--part", "1"))
    assert "briefing: the last" not in result.out


def test_framing_read_back_names_sizes_and_parts():
    import importlib
    from conftest import hook_package
    hook_package()
    audit_module = importlib.import_module("briefing.audit")
    rendering = importlib.import_module("briefing.rendering")

    class Item(object):
        element = "skill"

        def __init__(self, name, body):
            self.name, self.body, self.dir = name, body, "/s/%s" % name
            self.size = len(body.encode("utf-8"))
    items = [Item('we"ird&<name>', "x" * 30000), Item("small", "caf\u00e9\n")]
    parts = rendering.render_parts('agent "q"', items, 10000)
    found = audit_module.framed(list(reversed(parts)))
    assert found["agent"] == 'agent "q"' and found["parts"] == list(range(1, len(parts) + 1))
    assert [(i["name"], i["bytes"]) for i in found["items"]] == [('we"ird&<name>', 30000), ("small", 6)]
    assert audit_module.framed(["no briefing here"]) is None


def drop_redelivery(harness):
    """An edit that removes what brought the compacted agent's briefing back, and nothing else."""
    def edit(rel, text):
        if harness == "claude" and "compact_boundary" in text:
            lines = text.splitlines(True)
            at = [i for i, l in enumerate(lines) if '"compact_boundary"' in l][0]
            return "".join(lines[:at] + [l for l in lines[at:] if '"hookEvent":"SessionStart"' not in l])
        if harness == "codex" and '"type":"compacted"' in text:
            lines = text.splitlines(True)
            at = [i for i, l in enumerate(lines) if '"type":"compacted"' in l][0]
            return "".join(lines[:at + 1] + [l for l in lines[at + 1:] if not (
                '"role":"developer"' in l and "<briefing agent=" in l)])
        return text
    return edit


@pytest.mark.parametrize("harness, agent", [("claude", "compactor"), ("codex", "reviewer")])
def test_a_briefing_that_did_not_come_back_after_a_compaction_is_lost(sandbox, harness, agent):
    sb = load(sandbox(), harness, drop_redelivery(harness))
    rc, report = audit(sb, "--agent", agent)
    lost = [row for row in report["audit"] if row["verdict"] == "lost-after-compaction"]
    assert len(lost) == 1 and rc == 1, report
    assert (lost[0]["compactions"], lost[0]["redelivered"]) == (1, 0)
    assert lost[0]["cause"].startswith("the agent was compacted and its briefing did not come back")
    assert [i["name"] for i in lost[0]["delivered"]] == ["alpha", "beta"]  # it was briefed at its start


def test_a_hook_error_claude_code_recorded_is_the_likely_cause(sandbox):
    # A hook_non_blocking_error as Claude Code 2.1.328 records a failing SubagentStart handler
    # (measured), its command and stderr made briefing's: put into the subagent that got nothing.
    error = (DATA / "claude-hook-error.jsonl").read_text(encoding="utf-8")
    sb = load(sandbox(), "claude")
    _, report = audit(sb, "--agent", "reviewer")
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    path = sb.path("home/.claude/projects/%s/%s/subagents/agent-%s.jsonl" % (
        slug(str(sb.project)), unbriefed["session"], unbriefed["agent_id"]))
    path.write_text(path.read_text(encoding="utf-8") + error.replace("@AGENT@", unbriefed["agent_id"]),
                    encoding="utf-8")
    _, report = audit(sb, "--agent", "reviewer")
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    assert unbriefed["cause"].startswith("a briefing hook failed: Failed with non-blocking status code: "
                                         "/usr/bin/python3: can't open file"), unbriefed
    assert "(SubagentStart:reviewer)" in unbriefed["cause"]


def test_an_installed_copy_older_than_the_doctor_is_named(sandbox):
    sb = load(sandbox(), "claude")
    old = sb.path("home/.claude/plugins/cache/mkt/briefing/0.0.1")
    sb.write({
        "home/.claude/plugins/cache/mkt/briefing/0.0.1/.claude-plugin/plugin.json":
            json.dumps({"name": "briefing", "version": "0.0.1"}),
        "home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {"briefing@mkt": [
            {"scope": "user", "installPath": str(old), "version": "0.0.1"}]}}),
        "home/.claude/settings.json": json.dumps({"enabledPlugins": {"briefing@mkt": True}}),
    })
    _, report = audit(sb, "--agent", "reviewer")
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    assert unbriefed["cause"].startswith("the briefing Claude Code runs is version 0.0.1 (%s), older than this "
                                         "doctor's " % old), unbriefed
    sb.write({"home/.claude/settings.json": json.dumps({"enabledPlugins": {"briefing@mkt": False}})})
    _, report = audit(sb, "--agent", "reviewer")
    unbriefed, = [row for row in report["audit"] if row["verdict"] == "not-briefed"]
    assert unbriefed["cause"].startswith("the briefing plugin is disabled for this project")


def test_each_harness_has_its_reader_and_a_missing_one_is_none():
    import importlib
    from conftest import hook_package
    hook_package()
    audit_module = importlib.import_module("briefing.audit")
    registry = importlib.import_module("briefing.harnesses").HARNESSES
    for key in registry:
        module = audit_module.reader(key)
        assert module is not None and callable(module.sessions) and callable(module.read), key
    assert audit_module.reader("no-such-harness") is None


HOSTILE_LINES = [
    '[1, 2]', '"text"', 'null', '{"type": "attachment", "attachment": "x"}',
    '{"type": "attachment", "attachment": {"type": "hook_additional_context", "content": 7}}',
    '{"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Agent", "input": "x"}]}}',
    '{"type": "user", "message": {"content": [{"type": "tool_result", "is_error": true, "content": 5}]}}',
    '{"type": "agent-setting", "agentSetting": ["x"]}', '{"type": "system", "subtype": "compact_boundary"}',
    '{"type": "session_meta", "payload": []}', '{"type": "response_item", "payload": {"role": "developer"}}',
    '{"type": "compacted"}', '{"type": "subagent.started", "agentId": "a", "data": []}',
    '{"type": "user.message", "agentId": "a", "data": {"transformedContent": 3}}',
    '{"type": "tool.execution_complete", "data": {"toolCallId": {}, "success": false}}',
    '{"sessionId": "s", "toolCalls": {"a": 1}}',
    '{"toolCalls": [{"name": "invoke_agent", "id": "i", "args": 3}]}',
    '{"version": 7, "type": "user", "message": "x"}', "\x00\xff garbage",
    '{"type": "hook.start", "data": {"hookType": "preToolUse", "input": {"toolCalls": "x"}}, "agentId": "a"}',
    '{"type": "attachment", "attachment": {"type": "hook_system_message", "content": "no Python 3.8",'
    ' "hookEvent": "PreToolUse", "toolUseID": {}}}',
    '{"type": "subagent.selected", "data": {"agentName": 1}}',
    '{"type": "hook.end", "data": {"hookType": "sessionStart", "output": [1]}}',
]


def test_hostile_records_are_read_without_a_crash(sandbox):
    sb = sandbox()
    body = "\n".join(HOSTILE_LINES) + "\n"
    meta = '{"type":"session_meta","payload":{"id":"t","session_id":"t","cwd":"%s","parent_thread_id":"p",' \
           '"agent_role":["x"],"cli_version":5}}\n' % sb.project
    sb.write({
        "home/.claude/projects/%s/s1.jsonl" % slug(str(sb.project)): body,
        "home/.claude/projects/%s/s1/subagents/agent-x.jsonl" % slug(str(sb.project)): body,
        "home/.claude/projects/%s/s1/subagents/agent-x.meta.json" % slug(str(sb.project)): "[1]",
        "home/.claude/projects/%s/s1/subagents/agent-y.jsonl" % slug(str(sb.project)): body,
        "home/.claude/projects/%s/s1/subagents/agent-y.meta.json" % slug(str(sb.project)):
            '{"agentType": "y", "toolUseId": {"a": 1}, "name": 3}',
        "home/.codex/sessions/2026/12/03/rollout-t.jsonl": meta + body,
        "home/.copilot/session-state/s1/events.jsonl": body,
        "home/.copilot/session-state/s1/workspace.yaml": "cwd: '%s'\n" % sb.project,
        "home/.gemini/projects.json": json.dumps({"projects": {str(sb.project): "p"}}),
        "home/.gemini/tmp/p/chats/session-1.jsonl": body,
    })
    rc, report = audit(sb)
    assert rc in (0, 1)
    assert not [p for p in report["skipped"] if p["problem"].startswith("skipped: ")], report["skipped"]
    result = sb.doctor("--audit", "--since", "3650")
    assert result.rc in (0, 1) and "Traceback" not in result.err, result


# ---------------------------------------------------------------------------------------------
# OpenCode and Kilo: the database holds the runs, the CLI's log what the plugin delivered.
# ---------------------------------------------------------------------------------------------

def log_edit(test):
    """An edit of the CLI's log only: ``test(lines) -> lines``."""
    def edit(rel, text):
        return "".join(test(text.splitlines(True))) if rel.endswith("/log/opencode.log") else text
    return edit


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_delivery_and_redelivery_are_inferred_from_the_log(sandbox, harness):
    sb = load(sandbox(), harness)
    _, report = audit(sb, "--agent", "briefed")
    row, = report["audit"]
    assert (row["verdict"], row["kind"], row["compactions"], row["redelivered"]) == ("briefed", "subagent", 1, 1)
    assert row["redelivered_by"] == ["system.transform (inferred)"]
    assert row["delivered"] == [{"name": "demo-magic", "kind": "skill", "bytes": 60000, "parts": [1]}]
    assert row["agent_id"].startswith("ses_") and row["session"].startswith("ses_")
    assert any("inferred from the plugin's line in the CLI's log" in n for n in row["notes"]), row
    _, report = audit(sb, "--agent", "broken")
    refusals = sorted(row["refused"][:40] for row in report["audit"])
    assert refusals == ["briefing: agent 'broken' references unkn",
                        "the agent got the abort instruction at i"], refusals
    text = sb.doctor("--audit", "--since", "3650", "--harness", harness)
    assert text.rc == 0 and "delivered in 1 part(s): demo-magic 60.0 kB" in text.out, text


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_a_run_the_log_shows_no_briefing_for_is_not_briefed(sandbox, harness):
    sb = load(sandbox(), harness, log_edit(lambda lines: [l for l in lines if "briefing: briefed" not in l]))
    rc, report = audit(sb, "--agent", "briefed")
    row, = report["audit"]
    assert (rc, row["verdict"], row["delivered"]) == (1, "not-briefed", []), report
    assert "log shows no briefing line for this run" in row["cause"], row
    sb.path("project/%s.json" % harness).write_text("{}")
    _, report = audit(sb, "--agent", "briefed")
    assert report["audit"][0]["cause"].startswith("briefing's plugin is not in \"plugin\" of "), report


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_a_request_after_the_compaction_from_a_process_that_never_briefed_is_lost(sandbox, harness):
    def resumed(lines):
        # The child's requests after its summarizer's come from another process (a resumed session).
        at = [i for i, l in enumerate(lines) if "agent=compaction" in l][0]
        return lines[:at] + [l.replace(" run=", " run=other-") if "message=stream" in l else l for l in lines[at:]]
    sb = load(sandbox(), harness, log_edit(resumed))
    rc, report = audit(sb, "--agent", "briefed")
    row, = report["audit"]
    assert (rc, row["verdict"], row["compactions"], row["redelivered"]) == (1, "lost-after-compaction", 1, 0), row


def test_opencode_a_database_that_is_not_one_is_reported(sandbox):
    sb = sandbox({"home/.local/share/opencode/opencode.db": "not a database\n" * 100})
    rc, report = audit(sb, "--harness", "opencode")
    assert (rc, report["audit"]) == (0, []), report
    assert [p for p in report["skipped"] if "could not be listed" in p["problem"]], report["skipped"]


def test_opencode_hostile_rows_and_log_lines_are_read_without_a_crash(sandbox):
    import sqlite3
    sb = load(sandbox(), "opencode")
    db = sqlite3.connect(str(sb.path("home/.local/share/opencode/opencode.db")))
    parent = db.execute("SELECT id FROM session WHERE parent_id IS NULL").fetchone()[0]
    for data in ('[1]', 'null', '{"type": "tool", "tool": "task", "state": "x"} briefing:',
                 '{"type": "tool", "tool": "task", "state": {"status": "error", "error": 7, "input": 3}}',
                 '{"type": "compaction"', '{"type": "tool", "tool": "task", "state": {"status": "error", '
                 '"error": "briefing: x", "input": {"subagent_type": ["y"]}}}'):
        db.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                   "VALUES (?, 'm', ?, 1, 1, ?)", ("prt_%d" % hash(data), parent, data))
    db.execute("UPDATE session SET agent = NULL, version = 5 WHERE parent_id IS NOT NULL")
    db.commit()
    db.close()
    log = sb.path("home/.local/share/opencode/log/opencode.log")
    log.write_text(log.read_text() + 'timestamp=x run= message="briefing: \\u2190 ( kB)"\ntimestamp=2026-12-03T13:17:21Z '
                   'message="briefing: a \u2190 b (x kB)"\n\x00\xff\ntimestamp=2026-12-03T13:17:21Z message="unclosed\n')
    rc, report = audit(sb, "--harness", "opencode")
    assert not [p for p in report["skipped"] if p["problem"].startswith("skipped: ")], report["skipped"]


def test_opencode_a_log_past_the_bound_is_read_from_its_end(sandbox):
    import importlib
    from conftest import hook_package
    hook_package()
    audit_module = importlib.import_module("briefing.audit")
    machine_module = importlib.import_module("briefing.machine")
    sb = load(sandbox(), "opencode")
    log_file = sb.path("home/.local/share/opencode/log/opencode.log")
    recent = log_file.read_text(encoding="utf-8")
    log_file.write_text("timestamp=2020-01-01T00:00:00.000Z level=INFO run=old message=stream session.id=x\n" * 3000
                        + recent, encoding="utf-8")
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    log = audit_module.Log(per_file=len(recent.encode("utf-8")) + 40)
    rows, _, log = audit_module.audit(machine, ("opencode",), 3650, log=log)
    assert sorted((r["agent"], r["verdict"]) for r in rows) == EXPECTED["opencode"][1]
    assert any("only its last" in p["problem"] for p in log.problems), log.problems


def make_newest(sb, harness, agent):
    """The main session whose child runs ``agent`` made this project's newest, updated now."""
    import sqlite3
    db = sqlite3.connect(str(sb.path("home/.local/share/%s/%s.db" % (harness, harness))))
    db.execute("UPDATE session SET time_updated = ? WHERE id = (SELECT parent_id FROM session WHERE agent = ? "
               "AND parent_id IS NOT NULL LIMIT 1)", (int(time.time() * 1000), agent))
    db.commit()
    db.close()


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_the_pre_flight_names_the_last_session_s_run_not_briefed(sandbox, harness):
    sb = load(sandbox(), harness)
    make_newest(sb, harness, "briefed")
    payload = {"hook_event_name": "SessionStart", "source": "startup", harness + "_plugin": "1", "cwd": str(sb.project)}
    assert "briefing: the last" not in sb.run(payload).out
    log_file = sb.path("home/.local/share/%s/log/opencode.log" % harness)
    log_file.write_text("".join(l for l in log_file.read_text(encoding="utf-8").splitlines(True)
                                if "briefing: briefed" not in l), encoding="utf-8")
    result = sb.run(payload)
    label = {"opencode": "OpenCode", "kilo": "Kilo"}[harness]
    assert ("briefing: the last %s session (ses_dc3f) started 1 agent run(s) that declared skills and got none "
            "(briefed); run briefing-doctor --audit" % label) in json.loads(result.out)["systemMessage"], result


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_a_session_resumed_in_a_new_process_is_briefed_again_at_its_first_message(sandbox, harness):
    def resumed_and_briefed(lines):
        at = [i for i, l in enumerate(lines) if "agent=compaction" in l][0]
        after = [l.replace(" run=", " run=other-") if "message=stream" in l else l for l in lines[at + 1:]]
        first = [i for i, l in enumerate(after) if " run=other-" in l][0]
        line = [l for l in lines if "briefing: briefed" in l][0]
        stamp = after[first].split(" ", 1)[0]
        brief = stamp + " " + line.split(" ", 1)[1].replace(" run=", " run=other-")
        return lines[:at + 1] + after[:first] + [brief] + after[first:]
    sb = load(sandbox(), harness, log_edit(resumed_and_briefed))
    rc, report = audit(sb, "--agent", "briefed")
    row, = report["audit"]
    assert (rc, row["verdict"], row["compactions"], row["redelivered"]) == (0, "briefed", 1, 1), row
    assert row["redelivered_by"] == ["chat.message (inferred)"]


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_opencode_a_child_whose_first_step_the_log_lost_still_gets_its_line(sandbox, harness):
    # Measured: `opencode run` may exit before its log has the told-to-abort child's first step;
    # the child was created before the plugin's line, in that process.
    def lost_steps(lines):
        at = [i for i, l in enumerate(lines) if "NOT briefed, told to abort" in l][0]
        return lines[:at + 1] + [l for l in lines[at + 1:] if "message=stream" not in l and "message=loop" not in l]
    sb = load(sandbox(), harness, log_edit(lost_steps))
    _, report = audit(sb, "--agent", "broken")
    assert sorted(row["verdict"] for row in report["audit"]) == ["refused", "refused"], report


# ---------------------------------------------------------------------------------- Qwen Code

# tests/e2e/test_audit_qwen.py's machine, Qwen Code 0.24.4: three sessions (briefed, control and two
# refused spawns; a compacted subagent; a spawn past a guard taken out of the hooks file, which got
# the abort instruction). Its agents and skill are kept beside the records (project/), and its
# extension's hooks.json as it ended, without the guard, cut to what the audit reads.
QWEN = [("briefed", "briefed"), ("briefed", "briefed"), ("control", "no-declaration"), ("missing", "refused"),
        ("missing", "refused"), ("nohook", "refused")]
QWEN_SECRET = "MAGIC-QWEN-7f3a"  # the skill's body: in the project, never in a report
QWEN_HOOKS = "home/.qwen/extensions/briefing/hooks/hooks.json"


def load_qwen(sb, edit=None):
    base = DATA / "qwen"
    sb.write(dict((str(p.relative_to(base)).replace("@SLUG@", slug(str(sb.project))),
                   (edit or (lambda rel, text: text))(str(p.relative_to(base)),
                                                       p.read_text(encoding="utf-8").replace("@ROOT@", str(sb.root))))
                  for p in base.rglob("*") if p.is_file()))
    return sb


def qwen_rows(report, agent):
    return sorted((row for row in report["audit"] if row["agent"] == agent), key=lambda row: row["time"])


def test_qwen_code_runs_get_their_verdicts_inferred_and_marked_so(sandbox):
    rc, report = audit(load_qwen(sandbox()), "--harness", "qwen")
    assert verdicts(report) == QWEN and rc == 0, report
    assert report["skipped"] == [] and len({row["session"] for row in report["audit"]}) == 3
    for row in report["audit"]:
        assert ROW_KEYS <= set(row) and row["harness"] == "qwen" and row["version"] == "0.24.4", row
    first, _ = qwen_rows(report, "briefed")
    # Qwen Code records no hook output: the delivery is inferred, its size unknown.
    assert first["delivered"] == [{"name": "magic", "kind": "skill", "bytes": None, "parts": [1], "inferred": True}]
    assert first["agent_id"] == "briefed-call_000000000000000000000001"
    # The sandbox wrote the agent after the recorded run: what is inferred reads it as it is now.
    assert len(first["notes"]) == 1 and "briefed.md changed after this run" in first["notes"][0], first
    assert QWEN_SECRET not in json.dumps(report)
    text = load_qwen(sandbox()).doctor("--audit", "--since", "3650", "--harness", "qwen")
    assert "delivered in 1 part(s): magic (inferred)" in text.out and QWEN_SECRET not in text.out, text


def test_qwen_code_compaction_from_the_summariser_s_answer_and_the_system_prompt_kept(sandbox):
    _, report = audit(load_qwen(sandbox()), "--agent", "briefed")
    first, compacted = qwen_rows(report, "briefed")
    assert first["compactions"] == 0
    assert (compacted["compactions"], compacted["redelivered"], compacted["redelivered_by"]) == (
        1, 1, ["its system prompt, kept (inferred)"])


def test_qwen_code_refusals_from_the_parent_s_error_and_the_abort_inferred(sandbox):
    sb = load_qwen(sandbox())
    _, report = audit(sb)
    guarded, aborted = qwen_rows(report, "missing")
    assert guarded["refused"] == ("briefing: agent 'missing' references unknown skill(s): no-such-skill. Install "
                                  "the skill(s) or fix the declaration in %s/project/.qwen/agents/missing.md."
                                  % sb.root)
    assert guarded["agent_id"] == "call_000000000000000000000007"  # never started: the call's id
    assert aborted["refused"] == "the agent got the abort instruction at its start (SubagentStart) (inferred)"
    nohook, = qwen_rows(report, "nohook")
    assert "Add a line ${hook_context} to the body of" in nohook["refused"]


def test_qwen_code_with_the_guard_installed_a_run_that_started_passed_it(sandbox):
    """The guard refuses a spawn whose skill is missing: a run that started got past it, so its
    skills were there then (one missing now was removed since)."""
    def guard(rel, text):
        if rel == QWEN_HOOKS:
            hooks = json.loads(text)
            hooks["hooks"]["PreToolUse"] = [dict(hooks["hooks"]["SubagentStart"][0], matcher="^agent$")]
            return json.dumps(hooks)
        return text
    _, report = audit(load_qwen(sandbox(), guard), "--agent", "missing")
    assert [row["verdict"] for row in qwen_rows(report, "missing")] == ["refused", "briefed"]
    assert [i["name"] for i in qwen_rows(report, "missing")[1]["delivered"]] == ["magic", "no-such-skill"]


def test_qwen_code_without_briefing_a_declaring_run_is_not_briefed(sandbox):
    def other(rel, text):
        return text.replace('"name": "briefing"', '"name": "other"') if rel.endswith("qwen-extension.json") else text
    rc, report = audit(load_qwen(sandbox(), other), "--harness", "qwen")
    assert rc == 1
    assert [row["verdict"] for row in qwen_rows(report, "briefed")] == ["not-briefed", "not-briefed"]
    assert qwen_rows(report, "briefed")[0]["cause"].startswith("the briefing extension is not installed")
    # What the record shows stays: the guard's refusal.
    assert qwen_rows(report, "missing")[0]["verdict"] == "refused"


def test_qwen_code_a_truncated_chat_is_reported_and_the_rest_read(sandbox):
    def cut(rel, text):
        return text[:-200] if "/chats/" in rel and '"name":"nohook"' not in text and "<state_snapshot>" not in text \
            and '"subagent_type":"missing"' in text else text
    _, report = audit(load_qwen(sandbox(), cut), "--harness", "qwen")
    assert [p for p in report["skipped"] if "truncated" in p["problem"]], report["skipped"]
    assert verdicts(report) == QWEN


def test_qwen_code_a_broken_meta_file_is_reported_and_skipped(sandbox):
    def garble(rel, text):
        return "{oops" if rel.endswith("agent-control-call_000000000000000000000004.meta.json") else text
    _, report = audit(load_qwen(sandbox(), garble), "--harness", "qwen")
    assert any("not a subagent's meta.json" in p["problem"] for p in report["skipped"]), report["skipped"]
    assert verdicts(report) == [v for v in QWEN if v[0] != "control"]


@pytest.mark.parametrize("new, read", [("1.0.0", False), ("0.25.1", True)])
def test_qwen_code_records_of_another_version(sandbox, new, read):
    sb = load_qwen(sandbox(), lambda rel, text: text.replace('"version":"0.24.4"', '"version":"%s"' % new))
    _, report = audit(sb, "--harness", "qwen")
    if read:
        assert verdicts(report) == QWEN and report["skipped"] == []
    else:
        assert report["audit"] == []
        assert len([p for p in report["skipped"] if "written by version 1.0.0" in p["problem"]]) == 3


def test_qwen_code_hostile_records_are_read_without_a_crash(sandbox):
    sb = sandbox()
    folder = "home/.qwen/projects/%s" % slug(str(sb.project))
    compact = [json.dumps(json.loads(line), separators=(",", ":")) for line in (  # as Qwen Code writes them
        '{"version": "0.24.4", "message": {"parts": [{"functionCall": {"name": "agent", "id": "c1", "args": 3}}]}}',
        '{"message": {"parts": [{"functionCall": {"name": "agent", "id": "c2", "args": {"subagent_type": 4}}}]}}',
        '{"message": {"parts": [{"functionResponse": {"name": "agent", "id": "c1", "response": {"error": 5}}}]}}',
        '{"message": {"parts": [{"functionResponse": {"name": "agent", "id": "c2",'
        ' "response": {"error": "briefing: x"}}}, 7]}}', '{"message": {"parts": "x"}, "name": "agent"}',
        '{"message": [], "x": "<state_snapshot>"}',
        '{"systemPayload": {"uiEvent": {"response_text": "<state_snapshot>", "subagent_id": ["x"]}}}',
        '{"systemPayload": {"uiEvent": "<state_snapshot>"}}')]
    body = "\n".join(HOSTILE_LINES + compact) + "\n"
    sb.write({folder + "/chats/s1.jsonl": body, folder + "/subagents/s1/agent-x.jsonl": body,
              folder + "/subagents/s1/agent-x.meta.json": '{"agentType": "x", "toolUseId": "c1", "agentId": 5}',
              folder + "/subagents/s1/agent-y.meta.json": "[1]"})
    rc, report = audit(sb, "--harness", "qwen")
    assert not [p for p in report["skipped"] if p["problem"].startswith("skipped: ")], report["skipped"]
    # c1 started as agent x (its meta file); c2, refused, asked for no agent by name: Qwen Code's default
    assert sorted(row["agent"] for row in report["audit"]) == ["general-purpose", "x"]
    result = sb.doctor("--audit", "--since", "3650", "--harness", "qwen")
    assert result.rc in (0, 1) and "Traceback" not in result.err, result


def test_qwen_code_pre_flight_names_the_last_session_s_run_that_got_nothing(sandbox):
    """briefed.md without ${hook_context} now: the runs of it that started got nothing (inferred)."""
    sb = load_qwen(sandbox(), lambda rel, text: text.replace("${hook_context}", "") if rel.endswith("/briefed.md")
                   else text)
    compacted = "a57e9803-d864-4632-910c-108d00779355"  # the session whose one run is briefed's
    base = sb.path("home/.qwen/projects/%s" % slug(str(sb.project)))
    now = time.time()
    for path in base.rglob("*"):
        os.utime(str(path), (now - (60 if compacted in str(path) else 3600),) * 2)
    result = sb.run(sb.payload("SessionStart", "qwen"), env=sb.qwen_env())
    line = [l for l in json.loads(result.out)["systemMessage"].splitlines() if l.startswith("briefing: the last")]
    assert line == ["briefing: the last Qwen Code session (a57e9803) started 1 agent run(s) that declared skills "
                    "and got none (briefed); run briefing-doctor --audit"], result


@pytest.mark.parametrize("error, verdict, says", [
    ("briefing cannot run: its folder /gone is gone", "refused", "briefing cannot run: its folder /gone is gone"),
    # facts/qwen-code.md §3: a hook whose script is gone exits 2, which blocks the spawn with its stderr
    ("/usr/bin/python3: can't open file '/gone/hooks/briefing-preload'", "not-briefed",
     "a briefing hook failed: /usr/bin/python3: can't open file '/gone/hooks/briefing-preload'"),
])
def test_qwen_code_a_spawn_the_fallback_or_a_broken_hook_stopped(sandbox, error, verdict, says):
    sb = load_qwen(sandbox(), lambda rel, text: text.replace(
        "briefing: agent 'missing' references unknown skill(s): no-such-skill", error))
    _, report = audit(sb, "--harness", "qwen")
    guarded = qwen_rows(report, "missing")[0]
    assert guarded["verdict"] == verdict and says in (guarded["refused"] or guarded["cause"]), guarded
