"""The Factory Droid side of hooks/briefing-preload (issue 46; docs/factory-droid.md, 0.225.2).

Droid runs the Claude Code plugin's hooks/hooks.json, sets CLAUDE_PROJECT_DIR as well as its own
DROID_PROJECT_DIR, spawns through ``Task`` (``subagent_type``), and has no SubagentStart: a
sub-droid is a session of its own. The guard on ``Task`` is the whole spawn path: it refuses, or
lets a declaring droid through with the briefing in front of its prompt (``updatedInput``).

Covered, in file order:
 1. which harness sent a payload (never Claude Code's briefing for Droid's spawn, nor the reverse);
 2. the guard on Task: the briefing in front of the prompt, missing skills, built-ins briefed by a rule;
 3. the sub-droid: its own SessionStart and prompts get nothing (no pre-flight, no second copy),
    and the registered command stops in the shell before any interpreter starts;
 4. lookups: droids (top level, frontmatter name, project over personal, plugins), skills;
 5. the pre-flight, the doctor and the hooks file; 6. the audit.
"""
import json

import pytest

from conftest import REPO, agent_md, skill_md
from framing import rebuild

DA = "project/.factory/droids/%s.md"
DS = "project/.factory/skills/%s/SKILL.md"
PARENT, CHILD, CALL = "11111111-aaaa-4bbb-8ccc-000000000001", "22222222-aaaa-4bbb-8ccc-000000000002", "toolu_01"
FILES = {
    DA % "briefed": agent_md("briefed", ["magic"]),
    DA % "control": agent_md("control"),
    DA % "missing": agent_md("missing", ["no-such-skill"]),
    DS % "magic": skill_md("magic", "SECRET-DROID\n"),
}


def droid_env(box, **overrides):
    """The variables Droid 0.225.2 sets for a hook (facts §2): the project three times over, and the
    plugin-root variables as a placeholder (only the command string gets the real folder)."""
    env = {"DROID_PROJECT_DIR": str(box.project), "FACTORY_PROJECT_DIR": str(box.project),
           "CLAUDE_PROJECT_DIR": str(box.project), "CLAUDE_PLUGIN_ROOT": "/PLUGIN_ROOT_NOT_EXPANDED_ERROR",
           "DROID_PLUGIN_ROOT": "/PLUGIN_ROOT_NOT_EXPANDED_ERROR"}
    env.update(overrides)
    return env


def sessions(box):
    return box.home / ".factory" / "sessions" / str(box.project).replace("/", "-")


def records(box, droid, call=CALL, child_head=None, parent_lines=None):
    """A parent session that called Task(``droid``) and the sub-droid it started, as Droid writes them."""
    folder = sessions(box)
    folder.mkdir(parents=True, exist_ok=True)
    task = {"type": "message", "id": "m2", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": call, "name": "Task",
         "input": {"subagent_type": droid, "description": "d", "prompt": "p", "await": True}}]}}
    lines = parent_lines if parent_lines is not None else [
        {"type": "session_start", "id": PARENT, "title": "go", "cwd": str(box.project)}, task]
    (folder / (PARENT + ".jsonl")).write_text("".join(json.dumps(l) + "\n" for l in lines))
    head = child_head if child_head is not None else {
        "type": "session_start", "id": CHILD, "title": "Briefed: d", "callingSessionId": PARENT,
        "callingToolUseId": call, "cwd": str(box.project)}
    (folder / (CHILD + ".jsonl")).write_text(json.dumps(head) + "\n")
    return str(folder / (CHILD + ".jsonl"))


def child_payload(box, event, transcript, **fields):
    data = {"session_id": CHILD, "transcript_path": transcript, "cwd": str(box.project),
            "permission_mode": "auto-low", "hook_event_name": event}
    if event == "SessionStart":
        data.update(source="startup", calling_session_id=PARENT)
    else:
        data.update(message_id="m1", prompt="# Task Tool Invocation\n\nSubagent type: x\n", has_images=False)
    data.update(fields)
    return data


def guard(box, droid):
    return {"session_id": PARENT, "transcript_path": str(sessions(box) / (PARENT + ".jsonl")),
            "cwd": str(box.project), "permission_mode": "auto-high", "hook_event_name": "PreToolUse",
            "tool_name": "Task", "tool_input": {"subagent_type": droid, "description": "d", "prompt": "p"}}


def run(box, payload, **env):
    return box.run(payload, env=droid_env(box, **env))


def briefed_prompt(out, task="p"):
    """The prompt the guard passes on (``updatedInput``): the briefing, a blank line, the task."""
    hso = out.data["hookSpecificOutput"]
    assert hso["hookEventName"] == "PreToolUse" and "permissionDecision" not in hso, hso
    prompt = hso["updatedInput"]["prompt"]
    assert prompt.endswith("\n\n" + task), prompt[-200:]
    return prompt[:-len("\n\n" + task)]


def guard_briefing(box, droid):
    return rebuild([briefed_prompt(run(box, guard(box, droid)))])


# --------------------------------------------------------------------------- 1. detection

def test_a_droid_spawn_is_droids_and_a_claude_spawn_of_the_same_name_is_claudes(sandbox):
    box = sandbox(dict(FILES, **{
        "project/.claude/agents/twin.md": agent_md("twin", ["cc-skill"]),
        "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", "SECRET-CC\n"),
        DA % "twin": agent_md("twin", ["magic"])}))
    out = run(box, guard(box, "twin"))
    assert "SECRET-DROID" in briefed_prompt(out) and "SECRET-CC" not in out.out
    claude = box.run(box.spawn("twin"), env={"CLAUDE_PROJECT_DIR": str(box.project)})
    assert "SECRET-CC" in claude.out and "SECRET-DROID" not in claude.out


# --------------------------------------------------------------------------- 2. the guard

@pytest.mark.parametrize("droid, answer", [("briefed", "briefing"), ("control", None), ("missing", "deny"),
                                           ("worker", None), ("no-such-droid", None)])
def test_the_guard_on_task(sandbox, droid, answer):
    box = sandbox(FILES)
    out = run(box, guard(box, droid))
    if answer == "deny":
        hso = out.data["hookSpecificOutput"]
        assert hso["permissionDecision"] == "deny" and "updatedInput" not in hso
        assert hso["permissionDecisionReason"].startswith(
            "briefing: agent 'missing' references unknown skill(s): no-such-skill")
    elif answer == "briefing":
        hso = out.data["hookSpecificOutput"]
        # The call's other arguments go on as they were; only the prompt gains the briefing.
        assert {k: v for k, v in hso["updatedInput"].items() if k != "prompt"} == {
            "subagent_type": "briefed", "description": "d"}
        briefing = rebuild([briefed_prompt(out)])
        assert briefing.agent == "briefed" and briefing.skills == {"magic": "SECRET-DROID\n"}
        assert "briefed" in out.data["systemMessage"] and "magic" in out.data["systemMessage"]
    else:
        assert out.out == "", out


RULES = {"project/.briefing/rules.json": json.dumps(
    {"rules": [{"agents": ["worker"], "skills": ["magic"], "harness": "droid"}]})}


def test_a_rule_briefs_a_built_in_droid(sandbox):
    box = sandbox(dict(FILES, **RULES))
    assert guard_briefing(box, "worker").skills == {"magic": "SECRET-DROID\n"}


def test_a_rule_naming_a_missing_skill_refuses_the_built_in(sandbox):
    box = sandbox(dict(FILES, **{"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["worker"], "skills": ["gone"], "harness": "droid"}]})}))
    assert run(box, guard(box, "worker")).data["hookSpecificOutput"]["permissionDecision"] == "deny"


# --------------------------------------------------------------------------- 3. the sub-droid

@pytest.mark.parametrize("droid", ["briefed", "control", "missing", "worker"])
def test_the_sub_droid_itself_gets_nothing(sandbox, droid):
    """Its briefing came with its Task call: its own SessionStart (no pre-flight either: the main
    session had it) and its prompts add nothing, at any part."""
    box = sandbox(dict(FILES, **RULES))
    transcript = records(box, droid)
    for part in range(1, 9):
        for event in ("SessionStart", "UserPromptSubmit"):
            out = box.run(child_payload(box, event, transcript), args=("--part", str(part)), env=droid_env(box))
            assert out.out == "", (event, part, out)


def registered(event, part):
    from hook_commands import briefing_handlers, posix_command
    handlers = [h for e, _, h in briefing_handlers(REPO / "hooks" / "hooks.json") if e == event]
    return posix_command(handlers[part - 1])


def test_a_transcript_past_the_hooks_bound_is_read_by_its_head_and_its_end(sandbox):
    """A sub-droid's file of 34 MiB (the hook reads 32): the prompt from its head, the compaction
    from its end; the middle is never read whole."""
    from briefing.harnesses import droid
    box = sandbox(FILES)
    prompt = briefed_prompt(run(box, guard(box, "briefed"))) + "\n\np"
    folder = sessions(box)
    folder.mkdir(parents=True, exist_ok=True)
    head = {"type": "session_start", "id": CHILD, "callingSessionId": PARENT, "callingToolUseId": CALL}
    filler = compact({"type": "message", "id": "m-fill", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c-fill", "content": "f" * (1024 * 1024)}]}}) + "\n"
    path = folder / (CHILD + ".jsonl")
    with path.open("w") as out:
        out.write("".join(compact(l) + "\n" for l in [head, REMINDERS, task_prompt("briefed", prompt)]))
        out.write(filler * 34)
        out.write("".join(compact(l) + "\n" for l in tool_call(1) + [compaction("m-r1")]))
    assert path.stat().st_size > droid.RECORD_BYTES
    out = run(box, post_payload(box, str(path)))
    assert rebuild([out.context]).skills == {"magic": "SECRET-DROID\n"}


def run_registered(box, tmp_path, event, payload, who):
    """The registered hooks/hooks.json command of ``event`` (part 1), run as Droid (``who`` not
    "claude code") or Claude Code runs it, under sh and bash, with a python3 first on PATH that
    records its stdin: [(shell, what the interpreter was given or None, stdout)]."""
    import os
    import stat
    import subprocess
    from hook_commands import substituted
    record = tmp_path / "python3-got"
    stand_in = tmp_path / "bin" / "python3"
    if not stand_in.exists():
        stand_in.parent.mkdir()
        stand_in.write_text("#!/bin/sh\ncat > '%s'\necho '{}'\n" % record)
        stand_in.chmod(stand_in.stat().st_mode | stat.S_IEXEC)
    command = registered(event, 1)
    if who != "claude code":
        command = command.replace("${DROID_PLUGIN_ROOT}", str(REPO))
    env = dict(droid_env(box) if who != "claude code" else {"CLAUDE_PROJECT_DIR": str(box.project)},
               PATH=str(stand_in.parent) + os.pathsep + os.environ["PATH"], HOME=str(box.home))
    data = json.dumps(payload, separators=(",", ":")).encode()
    out = []
    for shell in ("/bin/sh", "bash"):
        if record.exists():
            record.unlink()
        proc = subprocess.run([shell, "-c", substituted(command, REPO)], input=data, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, timeout=30)
        assert proc.returncode == 0 and not proc.stderr, proc
        got = record.read_bytes().rstrip(b"\n") if record.exists() else None
        assert got in (None, data), (shell, got[:300])  # byte for byte, when it got anything
        out.append((shell, got, proc.stdout))
    return out


@pytest.mark.parametrize("who", ["sub-droid", "main session", "claude code"])
def test_part_one_starts_no_interpreter_in_a_sub_droid_and_hands_the_payload_on_elsewhere(sandbox, tmp_path, who):
    """The registered SessionStart command: a sub-droid's payload stops in the shell; a main
    session's reaches the interpreter byte for byte (backslashes, ``$`` and backquotes included)."""
    box = sandbox(FILES)
    payload = child_payload(box, "SessionStart", records(box, "briefed"))
    if who != "sub-droid":
        del payload["calling_session_id"]
        payload["cwd"] = str(box.project) + '/we\\ird "$HOME" `id` \u00e9'
    for shell, got, stdout in run_registered(box, tmp_path, "SessionStart", payload, who):
        assert (got is None) == (who == "sub-droid"), shell
        if who == "sub-droid":
            assert stdout == b"", shell


@pytest.mark.parametrize("who, starts", [
    ("compacted sub-droid", True), ("sub-droid, no compaction", False), ("main session", False),
    ("no transcript", False), ("claude code", False), ("a path with an escape", True)])
def test_the_tool_call_handler_starts_the_interpreter_only_in_a_compacted_sub_droid(sandbox, tmp_path, who, starts):
    """The registered PostToolUse command (Droid's tools only, by its matcher): the shell reads the
    transcript's first line and looks for a compaction before any interpreter starts; a path it
    cannot cut out plainly (a JSON escape in it) goes to the interpreter, which reads JSON."""
    box = sandbox(FILES)
    folder = sessions(box) / ('we"ird' if who == "a path with an escape" else "")
    folder.mkdir(parents=True, exist_ok=True)
    head = {"type": "session_start", "id": CHILD, "callingSessionId": PARENT, "callingToolUseId": CALL}
    if who == "main session":
        head = {"type": "session_start", "id": CHILD, "title": "go"}
    lines = [head, REMINDERS, task_prompt("briefed", "p")] + tool_call(1)
    if who != "sub-droid, no compaction":
        lines.append(compaction("m-r1"))
    path = folder / (CHILD + ".jsonl")
    path.write_text("".join(compact(l) + "\n" for l in lines))
    payload = post_payload(box, str(path) if who != "no transcript" else str(folder / "gone.jsonl"))
    for shell, got, _ in run_registered(box, tmp_path, "PostToolUse", payload, who):
        assert (got is not None) == starts, shell


# --------------------------------------------------------------------------- 4. lookups

def test_droids_are_top_level_by_frontmatter_name_project_over_personal_then_plugins(sandbox):
    box = sandbox(dict(FILES, **{
        "project/.factory/droids/file-a.md": agent_md("fm-name", ["magic"]),
        "project/.factory/droids/deep/nested.md": agent_md("nested", ["no-such-skill"]),
        "home/.factory/droids/briefed.md": agent_md("briefed", ["no-such-skill"]),
        "home/.factory/droids/personal.md": agent_md("personal", ["no-such-skill"]),
        "home/.factory/plugins/installed_plugins/p.json": json.dumps(
            {"pluginId": "plug@mk", "entry": {"installPath": "@HOME@/.factory/plugins/cache/plug"}}),
        "home/.factory/settings.json": json.dumps({"enabledPlugins": {"plug@mk": True}}),
        "home/.factory/plugins/cache/plug/droids/plugdroid.md": agent_md("plugdroid", ["no-such-skill"]),
    }))
    path = box.home / ".factory/plugins/installed_plugins/p.json"
    path.write_text(path.read_text().replace("@HOME@", str(box.home)))
    denied = lambda name: "permissionDecision" in run(box, guard(box, name)).out
    assert not denied("fm-name") and not denied("file-a")
    assert not denied("nested")  # a subfolder is not read
    assert not denied("briefed")  # the project's file wins
    assert denied("personal") and denied("plugdroid")
    assert not denied("Personal")  # names are compared case-sensitively


@pytest.mark.parametrize("where, wins", [
    (["project/.factory/skills", "project/.agents/skills", "home/.factory/skills", "home/.agents/skills"],
     "project/.factory/skills"),
    (["project/.agents/skills", "home/.factory/skills"], "project/.agents/skills"),
    (["home/.agents/skills"], "home/.agents/skills"),
])
def test_skill_precedence(sandbox, where, wins):
    files = {DA % "d": agent_md("d", ["dup"])}
    for root in where:
        files["%s/folder-%d/SKILL.md" % (root, len(root))] = skill_md("dup", "FROM %s\n" % root)
    box = sandbox(files)
    assert guard_briefing(box, "d").skills == {"dup": "FROM %s\n" % wins}


def test_claude_folders_are_not_droids(sandbox):
    box = sandbox({DA % "d": agent_md("d", ["cc-only"]),
                   "project/.claude/skills/cc-only/SKILL.md": skill_md("cc-only", "x\n")})
    assert run(box, guard(box, "d")).data["hookSpecificOutput"]["permissionDecision"] == "deny"


# --------------------------------------------------------------------------- 5. pre-flight, doctor, hooks file

def test_the_preflight_in_the_main_session(sandbox):
    box = sandbox(FILES)
    main = {"session_id": PARENT, "transcript_path": str(sessions(box) / (PARENT + ".jsonl")),
            "cwd": str(box.project), "permission_mode": "off", "hook_event_name": "SessionStart",
            "source": "startup"}
    out = run(box, main)
    assert "Droid agent 'missing'" in out.data["systemMessage"] and "no-such-skill" in out.data["systemMessage"]
    assert "hookSpecificOutput" not in out.data


def test_the_doctor(sandbox):
    box = sandbox(FILES)
    out = box.doctor("--harness", "droid", "--json", env=droid_env(box))
    assert out.rc == 1, out
    report = json.loads(out.out)
    status = {a["agent"]: a["status"] for a in report["agents"]}
    assert status == {"briefed": "ok", "missing": "FAIL"}, status
    checks = {c["name"]: c["status"] for c in report["checks"]}
    assert checks["hooks.json (Droid)"] == "ok" and checks["installed"] == "WARN", checks


def test_the_hooks_file_as_droid_reads_it():
    from briefing.harnesses.droid import droid_hooks_check
    assert droid_hooks_check(str(REPO))["status"] == "ok"
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["matcher"].split("|") == ["Agent", "Task"]
    assert "UserPromptSubmit" not in hooks  # the guard delivers: Claude Code runs nothing per prompt
    parts = hooks["SessionStart"][0]["hooks"]
    gate = '[ "${DROID_PLUGIN_ROOT}" = "${CLAUDE_PLUGIN_ROOT}" ] && '
    assert parts[0]["command"].startswith(gate + "{ i=$(cat); ")
    assert all(p["command"].startswith(gate + "exit 0; ") for p in parts[1:])
    assert not any(gate in h["command"] for h in hooks["SubagentStart"][0]["hooks"] + hooks["PreToolUse"][0]["hooks"])
    # Droid's own tool names only: Claude Code, whose tools share Read, Edit, Grep and Glob, never runs it.
    post, = hooks["PostToolUse"]
    assert post["matcher"].split("|") == ["LS", "Execute", "Create", "ApplyPatch", "FetchUrl"]
    assert post["hooks"][0]["command"].startswith(gate.replace("&& ", "|| exit 0; "))


def test_a_hooks_file_without_the_tool_call_handler_fails_the_check(tmp_path):
    from briefing.harnesses.droid import droid_hooks_check
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    del data["hooks"]["PostToolUse"]
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "hooks.json").write_text(json.dumps(data))
    check = droid_hooks_check(str(tmp_path))
    assert check["status"] == "FAIL" and "PostToolUse" in check["detail"], check


# --------------------------------------------------------------------------- 6. the audit

def hook_message(event, stdout):
    return {"type": "message", "id": "h-" + event, "timestamp": "2026-12-06T01:13:38.503Z", "message": {
        "role": "user", "content": [], "visibility": "user_only", "hookEventName": event,
        "hookResults": [{"exitCode": 0, "stdout": stdout, "stderr": ""}]}}


def audited(box, droid, call, child_lines):
    """A parent session's Task(``droid``) call, and (``child_lines`` not None) the sub-droid's file."""
    folder = sessions(box)
    folder.mkdir(parents=True, exist_ok=True)
    parent = folder / (PARENT + ".jsonl")
    lines = parent.read_text().splitlines() if parent.exists() else [
        json.dumps({"type": "session_start", "id": PARENT, "title": "go", "cwd": str(box.project)})]
    lines.append(json.dumps({"type": "message", "id": "a-" + call, "timestamp": "2026-12-06T01:13:38.503Z",
                             "message": {"role": "assistant", "content": [{"type": "tool_use", "id": call,
                                         "name": "Task", "input": {"subagent_type": droid}}]}}))
    parent.write_text("\n".join(lines) + "\n")
    if child_lines is not None:
        head = {"type": "session_start", "id": call, "callingSessionId": PARENT, "callingToolUseId": call}
        (folder / ("child-" + call + ".jsonl")).write_text(
            "".join((l if isinstance(l, str) else compact(l)) + "\n" for l in [head] + child_lines))
    return parent


def compact(record):
    """A line as Droid writes it: JSON without spaces (the hook and the audit search its bytes)."""
    return json.dumps(record, separators=(",", ":"))


def tool_call(n, name="Read"):
    """A sub-droid's tool call ``c<n>`` and its result ``m-r<n>``, as two history lines."""
    return [{"type": "message", "id": "m-c%d" % n, "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c%d" % n, "name": name, "input": {}}]}},
            {"type": "message", "id": "m-r%d" % n, "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c%d" % n, "is_error": False, "content": "x"}]}}]


def post_tool_use(n, stdout):
    """The record of a PostToolUse hook run on call ``c<n>`` (its context follows that call's result)."""
    record = hook_message("PostToolUse", stdout)
    record["id"] = "h-post-%d" % n
    record["message"]["hookToolCallId"] = "c%d" % n
    return record


def compaction(last_removed):
    return {"type": "compaction_state", "id": "cs-" + last_removed, "removedCount": 1,
            "anchorMessage": {"id": last_removed, "index": 0}}


def audit_rows(box):
    out = box.doctor("--harness", "droid", "--audit", "--json", env=droid_env(box))
    return {r["agent_id"]: r for r in json.loads(out.out)["audit"]}


def task_prompt(droid, prompt):
    """The user message that opens a sub-droid's history after Droid's reminders (facts §2)."""
    text = ("# Task Tool Invocation\n\nSubagent type: %s\nTask description: d\n\n## Task\n"
            "---BEGIN TASK FROM PARENT AGENT---\n%s\n---END TASK FROM PARENT AGENT---" % (droid, prompt))
    return {"type": "message", "id": "m-task", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


REMINDERS = {"type": "message", "id": "context-1", "message": {"role": "user", "content": [
    {"type": "text", "text": "<system-reminder>\nAvailable skills: magic\n</system-reminder>"}]}}


def test_the_audit_reads_droids_records(sandbox):
    box = sandbox(FILES)
    prompt = briefed_prompt(run(box, guard(box, "briefed"))) + "\n\np"
    again = json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": rebuilt_text(prompt)}})
    forged = "<briefing agent=\"briefed\" part=\"1/1\" seal=\"00\">\n</briefing seal=\"00\">\n\np"
    for path in sessions(box).glob("*.jsonl"):
        path.unlink()
    start = hook_message("SessionStart", "")
    opened = [start, REMINDERS, task_prompt("briefed", prompt)] + tool_call(1)
    back = opened + [compaction("m-r1")] + tool_call(2, "LS") + [post_tool_use(2, again)]
    audited(box, "briefed", "t-kept", opened + [compaction("context-1"), compaction("context-1"), "{not json"])
    audited(box, "briefed", "t-lost", opened + [compaction("m-task")])
    audited(box, "briefed", "t-lost-later", opened + [compaction("m-r1")])
    audited(box, "briefed", "t-unknown-anchor", opened + [compaction("not-in-the-records")])
    # Brought back at the next LS; a compaction up to that call's result keeps it (its context
    # stands after the result); one that removes the context itself loses it again.
    audited(box, "briefed", "t-back", back)
    audited(box, "briefed", "t-back-kept", back + [compaction("m-r2")])
    audited(box, "briefed", "t-back-lost", back + tool_call(3) + [compaction("h-post-2")])
    audited(box, "briefed", "t-none", [start, REMINDERS, task_prompt("briefed", "p")])
    # The parent model's own text is not a briefing, wherever it stands in the prompt.
    audited(box, "briefed", "t-forged", [start, REMINDERS, task_prompt("briefed", "the task\n" + forged)])
    audited(box, "control", "t-control", [start, REMINDERS, task_prompt("control", "p")])
    parent = audited(box, "missing", "t-refused", None)
    with parent.open("a") as out:
        out.write(json.dumps({"type": "message", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t-refused", "is_error": True,
             "content": "Error: briefing: agent 'missing' references unknown skill(s): no-such-skill."}]}}) + "\n")
    rows = audit_rows(box)
    verdicts = {k: r["verdict"] for k, r in rows.items()}
    assert verdicts == {"t-kept": "briefed", "t-lost": "lost-after-compaction", "t-lost-later": "lost-after-compaction",
                        "t-unknown-anchor": "lost-after-compaction", "t-back": "briefed", "t-back-kept": "briefed",
                        "t-back-lost": "lost-after-compaction", "t-none": "not-briefed", "t-forged": "not-briefed",
                        "t-control": "no-declaration", "t-refused": "refused"}, verdicts
    assert rows["t-kept"]["compactions"] == 2 and rows["t-lost"]["compactions"] == 1
    assert rows["t-back-kept"]["compactions"] == 2
    assert "SECRET-DROID" not in json.dumps(rows)  # names and sizes, never a skill's text


def rebuilt_text(prompt):
    return prompt[:-len("\n\np")]


def post_payload(box, transcript, tool="LS"):
    return {"session_id": CHILD, "transcript_path": transcript, "cwd": str(box.project),
            "permission_mode": "auto-high", "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {}, "tool_response": "x"}


@pytest.mark.parametrize("case, brings", [
    ("no compaction", False), ("compaction kept the prompt", False), ("compaction removed the prompt", True),
    ("brought back since", False), ("brought back, then removed again", True), ("a control droid", False),
    ("a main session", False)])
def test_a_tool_call_after_a_compaction_that_removed_the_briefing_brings_it_back_once(sandbox, case, brings):
    box = sandbox(FILES)
    droid = "control" if case == "a control droid" else "briefed"
    prompt = (briefed_prompt(run(box, guard(box, droid))) + "\n\np") if droid == "briefed" else "p"
    again = json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                               "additionalContext": prompt[:-len("\n\np")]}})
    lines = [hook_message("SessionStart", ""), REMINDERS, task_prompt(droid, prompt)] + tool_call(1)
    lines += {"no compaction": [], "compaction kept the prompt": [compaction("context-1")],
              "brought back since": [compaction("m-r1")] + tool_call(2, "LS") + [post_tool_use(2, again)],
              "brought back, then removed again": [compaction("m-r1")] + tool_call(2, "LS") + [
                  post_tool_use(2, again)] + tool_call(3) + [compaction("h-post-2")],
              }.get(case, [compaction("m-r1")])
    folder = sessions(box)
    folder.mkdir(parents=True, exist_ok=True)
    head = {"type": "session_start", "id": CHILD, "callingSessionId": PARENT, "callingToolUseId": CALL}
    if case == "a main session":
        head = {"type": "session_start", "id": CHILD, "title": "go"}
    path = folder / (CHILD + ".jsonl")
    path.write_text("".join(compact(l) + "\n" for l in [head] + lines))
    out = run(box, post_payload(box, str(path)))
    if not brings:
        assert out.out == "", out
        return
    assert out.data["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert rebuild([out.context]).skills == {"magic": "SECRET-DROID\n"}
    assert out.data["systemMessage"].endswith(", again after compaction"), out.data


def test_the_audit_reads_a_long_sub_droid_file_as_the_hook_does(sandbox):
    """34 MiB between the prompt and the compaction: the audit reads the file's start and end (the
    hook's 32 MiB), says so, and still sees the briefing lost, then brought back."""
    box = sandbox(FILES)
    prompt = briefed_prompt(run(box, guard(box, "briefed"))) + "\n\np"
    again = json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": rebuilt_text(prompt)}})
    for path in sessions(box).glob("*.jsonl"):
        path.unlink()
    filler = compact({"type": "message", "id": "m-fill", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c-fill", "content": "f" * (1024 * 1024)}]}})
    opened = [hook_message("SessionStart", ""), REMINDERS, task_prompt("briefed", prompt)] + [filler] * 34
    lost = opened + tool_call(1) + [compaction("m-r1")]
    audited(box, "briefed", "t-long-lost", lost)
    audited(box, "briefed", "t-long-back", lost + tool_call(2, "LS") + [post_tool_use(2, again)])
    out = box.doctor("--harness", "droid", "--audit", "--json", env=droid_env(box))
    report = json.loads(out.out)
    assert {r["agent_id"]: r["verdict"] for r in report["audit"]} == {
        "t-long-lost": "lost-after-compaction", "t-long-back": "briefed"}, report["audit"]
    assert any("from its start and its end" in p["problem"] for p in report["skipped"]), report["skipped"]


@pytest.mark.parametrize("enabled, status", [(True, "ok"), (False, "WARN"), (None, "WARN")])
def test_the_installed_check(sandbox, tmp_path, enabled, status):
    import shutil
    box = sandbox(FILES)
    copy = box.home / ".factory" / "plugins" / "cache" / "briefing"
    shutil.copytree(str(REPO / "hooks"), str(copy / "hooks"), ignore=shutil.ignore_patterns("__pycache__"))
    if enabled is not None:
        box.write({"home/.factory/plugins/installed_plugins/briefing-briefing-user-1.json": json.dumps(
            {"pluginId": "briefing@briefing", "entry": {"scope": "user", "installPath": str(copy)}}),
            "home/.factory/settings.json": json.dumps({"enabledPlugins": {"briefing@briefing": enabled}})})
    out = box.doctor("--harness", "droid", "--json", env=droid_env(box))
    check, = [c for c in json.loads(out.out)["checks"] if c["name"] == "installed"]
    assert check["status"] == status, check
    if enabled is False:
        assert "droid plugin install briefing@briefing" in check["detail"], check
    if enabled is None:
        assert "droid plugin marketplace add" in check["detail"], check


# The records Droid 0.225.2 wrote in tests/e2e/test_droid.py's runs, trimmed by
# tests/data/audit/trim.py: the session (briefed, other and big in parallel, control, missing refused),
# a sub-droid compacted twice with the briefing kept, one whose compaction removed it, and one whose
# two compactions removed it, each time brought back by its next LS or Create (PostToolUse).
CAPTURED = REPO / "tests" / "data" / "audit"


def load_captured(box, name):
    import shutil
    shutil.copytree(str(CAPTURED / name / "home"), str(box.home), dirs_exist_ok=True)
    folder = box.home / ".factory" / "sessions"
    slug = str(box.project).replace("/", "-")
    (folder / "@SLUG@").rename(folder / slug)
    for path in (folder / slug).glob("*.jsonl"):
        path.write_text(path.read_text().replace("@ROOT@", str(box.root)))
    return box


@pytest.mark.parametrize("name, verdicts", [
    ("droid", {"briefed": ["briefed"], "other": ["briefed"], "big": ["briefed"], "control": ["no-declaration"],
               "missing": ["refused"]}),
    ("droid-kept", {"briefed": ["briefed"]}),
    ("droid-lost", {"briefed": ["lost-after-compaction"]}),
    ("droid-back", {"briefed": ["briefed"]}),  # lost twice, brought back by an LS and a Create
])
def test_the_audit_of_records_droid_wrote(sandbox, name, verdicts):
    box = load_captured(sandbox(FILES if name == "droid" else {DA % "briefed": agent_md("briefed", ["magic", "second"]),
                                                               DS % "magic": skill_md("magic", "m\n"),
                                                               "project/.agents/skills/second/SKILL.md":
                                                                   skill_md("second", "s\n")}), name)
    out = box.doctor("--harness", "droid", "--audit", "--json", "--since", "3650", env=droid_env(box))
    rows = json.loads(out.out)["audit"]
    found = {}
    for row in rows:
        found.setdefault(row["agent"], []).append(row["verdict"])
    assert found == verdicts, rows
    if name in ("droid-kept", "droid-back"):
        assert rows[0]["compactions"] == 2, rows
    text = box.doctor("--harness", "droid", "--audit", "--since", "3650", env=droid_env(box)).out
    assert "MAGIC-DROID" not in text and "big skill line" not in text  # never a skill's text
