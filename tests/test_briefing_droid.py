"""The Factory Droid side of hooks/briefing-preload (issue 46; docs/factory-droid.md, 0.225.2).

Droid runs the Claude Code plugin's hooks/hooks.json, sets CLAUDE_PROJECT_DIR as well as its own
DROID_PROJECT_DIR, spawns through ``Task`` (``subagent_type``), and has no SubagentStart: a
sub-droid is a session of its own, told apart through Droid's transcripts.

Covered, in file order:
 1. which harness sent a payload (never Claude Code's briefing for Droid's spawn, nor the reverse);
 2. the guard on Task: missing skills, built-ins briefed by a rule;
 3. the sub-droid: the note at SessionStart, the briefing at UserPromptSubmit, found through the
    transcripts; nothing for a control droid, a main session or records that say nothing sure;
 4. lookups: droids (top level, frontmatter name, project over personal, plugins), skills;
 5. the pre-flight, the doctor and the hooks file.
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


# --------------------------------------------------------------------------- 1. detection

def test_a_droid_spawn_is_droids_and_a_claude_spawn_of_the_same_name_is_claudes(sandbox):
    box = sandbox(dict(FILES, **{
        "project/.claude/agents/twin.md": agent_md("twin", ["cc-skill"]),
        "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", "SECRET-CC\n"),
        DA % "twin": agent_md("twin", ["magic"])}))
    transcript = records(box, "twin")
    out = run(box, child_payload(box, "UserPromptSubmit", transcript))
    assert "SECRET-DROID" in out.context and "SECRET-CC" not in out.out
    claude = box.run(box.spawn("twin"), env={"CLAUDE_PROJECT_DIR": str(box.project)})
    assert "SECRET-CC" in claude.out and "SECRET-DROID" not in claude.out


# --------------------------------------------------------------------------- 2. the guard

@pytest.mark.parametrize("droid, denied", [("briefed", False), ("control", False), ("missing", True),
                                           ("worker", False), ("no-such-droid", False)])
def test_the_guard_on_task(sandbox, droid, denied):
    box = sandbox(FILES)
    out = run(box, guard(box, droid))
    if denied:
        hso = out.data["hookSpecificOutput"]
        assert hso["permissionDecision"] == "deny"
        assert hso["permissionDecisionReason"].startswith(
            "briefing: agent 'missing' references unknown skill(s): no-such-skill")
    else:
        assert out.out == "", out


RULES = {"project/.briefing/rules.json": json.dumps(
    {"rules": [{"agents": ["worker"], "skills": ["magic"], "harness": "droid"}]})}


def test_a_rule_briefs_a_built_in_droid(sandbox):
    box = sandbox(dict(FILES, **RULES))
    assert run(box, guard(box, "worker")).out == ""
    out = run(box, child_payload(box, "UserPromptSubmit", records(box, "worker")))
    assert rebuild([out.context]).skills == {"magic": "SECRET-DROID\n"}


def test_a_rule_naming_a_missing_skill_refuses_the_built_in(sandbox):
    box = sandbox(dict(FILES, **{"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["worker"], "skills": ["gone"], "harness": "droid"}]})}))
    assert run(box, guard(box, "worker")).data["hookSpecificOutput"]["permissionDecision"] == "deny"


# --------------------------------------------------------------------------- 3. the sub-droid

def test_the_sub_droid_gets_the_note_then_the_briefing(sandbox):
    box = sandbox(FILES)
    transcript = records(box, "briefed")
    note = run(box, child_payload(box, "SessionStart", transcript))
    assert note.context == "briefing: this droid's declared skills follow in the next message."
    assert "systemMessage" not in note.data  # no pre-flight in a sub-droid
    out = run(box, child_payload(box, "UserPromptSubmit", transcript))
    assert out.data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert rebuild([out.context]).skills == {"magic": "SECRET-DROID\n"}
    for part in range(2, 9):  # Droid runs these parts only as a shell that exits; the hook agrees
        for event in ("SessionStart", "UserPromptSubmit"):
            assert box.run(child_payload(box, event, transcript), args=("--part", str(part)),
                           env=droid_env(box)).out == ""


def test_a_control_droid_gets_nothing(sandbox):
    box = sandbox(FILES)
    transcript = records(box, "control")
    assert run(box, child_payload(box, "SessionStart", transcript)).out == ""
    assert run(box, child_payload(box, "UserPromptSubmit", transcript)).out == ""


def test_a_skill_gone_after_the_guard_gets_the_abort_instruction(sandbox):
    box = sandbox(FILES)
    transcript = records(box, "missing")
    note = run(box, child_payload(box, "SessionStart", transcript))
    assert note.context  # the note stands in front of the abort instruction too
    out = run(box, child_payload(box, "UserPromptSubmit", transcript))
    assert rebuild([out.context]).aborted and "no-such-skill" in out.context and "<skill " not in out.context
    assert out.data["systemMessage"].startswith("briefing: NOT briefed, told to abort:")


@pytest.mark.parametrize("case", ["main session", "no parent file", "call not in parent", "hostile parent id",
                                  "outside the sessions folder", "not Task"])
def test_records_that_say_nothing_sure_brief_nobody(sandbox, case, tmp_path):
    box = sandbox(FILES)
    head, lines, transcript = None, None, None
    if case == "main session":
        head = {"type": "session_start", "id": CHILD, "title": "go"}
    elif case == "hostile parent id":
        head = {"type": "session_start", "id": CHILD, "callingSessionId": "../../x", "callingToolUseId": CALL}
    elif case == "call not in parent":
        lines = [{"type": "session_start", "id": PARENT}]
    elif case == "not Task":
        lines = [{"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": CALL, "name": "Read", "input": {"subagent_type": "briefed"}}]}}]
    path = records(box, "briefed", child_head=head, parent_lines=lines)
    if case == "hostile parent id":  # a parent the path would reach, outside the sessions folder
        (box.home / ".factory" / "x.jsonl").write_text((sessions(box) / (PARENT + ".jsonl")).read_text())
    if case == "no parent file":
        (sessions(box) / (PARENT + ".jsonl")).unlink()
    if case == "outside the sessions folder":
        transcript = str(tmp_path / (CHILD + ".jsonl"))
        (tmp_path / (CHILD + ".jsonl")).write_text((sessions(box) / (CHILD + ".jsonl")).read_text())
    out = run(box, child_payload(box, "UserPromptSubmit", transcript or path))
    assert out.out == "", out


def test_a_sub_droid_whose_call_is_not_in_the_parents_record_is_named_by_droids_task_header(sandbox):
    box = sandbox(FILES)
    path = records(box, "briefed", parent_lines=[{"type": "session_start", "id": PARENT}])
    header = "# Task Tool Invocation\n\nSubagent type: briefed\nTask description: d\n"
    out = run(box, child_payload(box, "UserPromptSubmit", path, prompt=header))
    assert rebuild([out.context]).skills == {"magic": "SECRET-DROID\n"}
    # Not in a main session: there the header is only text someone typed.
    main = records(box, "briefed", child_head={"type": "session_start", "id": CHILD, "title": "go"})
    assert run(box, child_payload(box, "UserPromptSubmit", main, prompt=header)).out == ""


def test_parallel_sub_droids_each_find_their_own_call(sandbox):
    box = sandbox(dict(FILES, **{DA % "other": agent_md("other", ["second"]),
                                 DS % "second": skill_md("second", "SECRET-SECOND\n")}))
    two = {"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a", "name": "Task", "input": {"subagent_type": "briefed"}},
        {"type": "tool_use", "id": "toolu_b", "name": "Task", "input": {"subagent_type": "other"}}]}}
    for call, secret in (("toolu_a", "SECRET-DROID"), ("toolu_b", "SECRET-SECOND")):
        path = records(box, None, call=call, parent_lines=[{"type": "session_start", "id": PARENT}, two])
        out = run(box, child_payload(box, "UserPromptSubmit", path))
        assert secret in out.context and len(rebuild([out.context]).skills) == 1


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
    denied = lambda name: bool(run(box, guard(box, name)).out)
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
    out = run(box, child_payload(box, "UserPromptSubmit", records(box, "d")))
    assert rebuild([out.context]).skills == {"dup": "FROM %s\n" % wins}


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
    ups = hooks["UserPromptSubmit"][0]["hooks"]
    assert len(ups) == 1 and ups[0]["command"].startswith('[ "${DROID_PLUGIN_ROOT}" = "${CLAUDE_PLUGIN_ROOT}" ] || exit 0; ')
    parts = hooks["SessionStart"][0]["hooks"]
    assert not parts[0]["command"].startswith("[")
    assert all(p["command"].startswith('[ "${DROID_PLUGIN_ROOT}" = "${CLAUDE_PLUGIN_ROOT}" ] && exit 0; ')
               for p in parts[1:])


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
            "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in [head] + child_lines))
    return parent


def audit_rows(box):
    out = box.doctor("--harness", "droid", "--audit", "--json", env=droid_env(box))
    return {r["agent_id"]: r for r in json.loads(out.out)["audit"]}


def test_the_audit_reads_droids_records(sandbox):
    box = sandbox(FILES)
    transcript = records(box, "briefed")
    note = run(box, child_payload(box, "SessionStart", transcript)).out
    briefing = run(box, child_payload(box, "UserPromptSubmit", transcript)).out
    for path in sessions(box).glob("*.jsonl"):
        path.unlink()
    kept = {"type": "compaction_state", "id": "c1", "removedCount": 1}
    lost = {"type": "compaction_state", "id": "c2", "removedCount": 6}
    audited(box, "briefed", "t-kept", [hook_message("SessionStart", note), hook_message("UserPromptSubmit", briefing),
                                        kept, "{not json"])
    audited(box, "briefed", "t-lost", [hook_message("SessionStart", note), hook_message("UserPromptSubmit", briefing),
                                        lost])
    audited(box, "briefed", "t-none", [hook_message("SessionStart", ""), hook_message("UserPromptSubmit", "")])
    audited(box, "control", "t-control", [hook_message("UserPromptSubmit", "")])
    parent = audited(box, "missing", "t-refused", None)
    with parent.open("a") as out:
        out.write(json.dumps({"type": "message", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t-refused", "is_error": True,
             "content": "Error: briefing: agent 'missing' references unknown skill(s): no-such-skill."}]}}) + "\n")
    rows = audit_rows(box)
    verdicts = {k: r["verdict"] for k, r in rows.items()}
    assert verdicts == {"t-kept": "briefed", "t-lost": "lost-after-compaction", "t-none": "not-briefed",
                        "t-control": "no-declaration", "t-refused": "refused"}, verdicts
    assert rows["t-kept"]["compactions"] == 1 and rows["t-lost"]["compactions"] == 1
    assert "SECRET-DROID" not in json.dumps(rows)  # names and sizes, never a skill's text


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
# a sub-droid compacted twice with the briefing kept, and one whose compaction removed it.
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
    if name == "droid-kept":
        assert rows[0]["compactions"] == 2, rows
    text = box.doctor("--harness", "droid", "--audit", "--since", "3650", env=droid_env(box)).out
    assert "MAGIC-DROID" not in text and "big skill line" not in text  # never a skill's text
