"""A hook run imports only what its event and harness need.

Every spawn is a new process, and every module imported is bytecode to
unmarshal: the doctor is loaded only in doctor mode, the session survey only at
session start, and a harness's discovery only for that harness (detection reads
the records in harnesses/__init__.py). Each row runs the registered command in a
real process and lists the package's modules it imported at exit.
"""
import json
import subprocess

import pytest

from conftest import HOOK, HOOK_PYTHON, REGISTERED_FLAGS, agent_md, role_toml, skill_md

# Run the hook's main() as the registered command does, then print which of the package's
# modules the run imported.
PROBE = """
import json, os, sys
hook = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(hook))
from briefing.main import main
main(sys.argv[1:])
sys.stdout.write("\\n" + json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "briefing")))
"""

HARNESS_MODULES = {"briefing.harnesses.%s" % key for key in ("claude", "codex", "copilot", "gemini", "qwen", "opencode", "kilo",
                                                              "droid")}
EVERY_RUN = {"briefing", "briefing.main", "briefing.handlers", "briefing.harnesses"}

FILES = {
    "project/.claude/agents/good.md": agent_md("good", ["style"]),
    "project/.claude/agents/broken.md": agent_md("broken", ["style", "gone"]),
    "project/.codex/agents/broken.toml": role_toml("broken", ["gone"]),
    "project/.claude/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
    "project/.codex/agents/role.toml": role_toml("role", ["style"]),
    "project/.codex/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
    "home/.gemini/agents/gem.md": "---\nname: gem\ndescription: d\n---\n"
                                  '<!-- briefing: skills = ["style"] -->\nBody.\n',
    "home/.gemini/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
    "project/.claude/agents/filed.md": agent_md("filed", extra="briefing:\n  files: [docs/*.md]"),
    "project/docs/notes.md": "NOTES\n",
    "project/.qwen/agents/qgood.md": agent_md("qgood", ["style"], body="${hook_context}\n"),
    "project/.qwen/agents/qbroken.md": agent_md("qbroken", ["gone"], body="${hook_context}\n"),
    "project/.qwen/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
    "project/.factory/droids/dgood.md": agent_md("dgood", ["style"]),
    "project/.factory/droids/dbroken.md": agent_md("dbroken", ["gone"]),
    "project/.factory/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
}

# (row, payload and args and env, the one harness module it may load, what else it may load)
ROWS = [
    # "broken" declares a skill no root holds: only such a miss looks in the private folders.
    ("claude guard", lambda sb: (sb.guard("broken"), (), {}), "claude", {"briefing.private"}),
    ("claude brief", lambda sb: (sb.spawn("good"), ("--part", "1"), {}), "claude", set()),
    ("claude part 2", lambda sb: (sb.spawn("good"), ("--part", "2"), {}), "claude", set()),
    # Issue 30: standing.py only for a declaration (or rule) that names files.
    ("claude brief with files", lambda sb: (sb.spawn("filed"), ("--part", "1"), {}), "claude",
     {"briefing.standing"}),
    ("codex guard", lambda sb: (sb.guard("broken", "codex"), (), {}), "codex", {"briefing.private"}),
    ("codex brief", lambda sb: (sb.spawn("role", "codex"), ("--part", "1"), {}), "codex", set()),
    ("copilot brief", lambda sb: (sb.spawn("good", "copilot"), ("--part", "1"), sb.copilot_env()),
     "copilot", set()),
    ("gemini guard", lambda sb: ({"hook_event_name": "BeforeTool", "session_id": "g", "cwd": str(sb.project),
                                  "tool_name": "invoke_agent",
                                  "tool_input": {"agent_name": "gem", "prompt": "p"}}, (),
                                 {"GEMINI_SESSION_ID": "g", "GEMINI_PROJECT_DIR": str(sb.project)}),
     "gemini", set()),
    # Issue 38: Qwen Code sets CLAUDE_PROJECT_DIR too; its own QWEN_PROJECT_DIR decides.
    ("qwen guard", lambda sb: (sb.guard("qbroken", "qwen"), (), sb.qwen_env()), "qwen", {"briefing.private"}),
    ("qwen brief", lambda sb: (sb.spawn("qgood", "qwen"), (), sb.qwen_env()), "qwen", set()),
    ("claude pre-flight", lambda sb: (sb.payload("SessionStart", source="startup"), ("--part", "1"), {}),
     "claude", {"briefing.survey", "briefing.private", "briefing.standing",  # the survey builds filed's briefing too
                "briefing.audit", "briefing.audit.claude"}),  # issue 40: the last session's records
    ("claude subagent compacted", lambda sb: (sb.payload("SessionStart", source="compact", agent_id="a1",
                                                         agent_type="good"), ("--part", "1"), {}), "claude", set()),
    # Issue 45: the skills a compacted session had loaded come back; only then is loaded.py imported.
    ("claude session compacted, had loaded a skill", lambda sb: (loaded_claude(sb), ("--part", "1"), {}),
     "claude", {"briefing.loaded"}),
    ("qwen session compacted, had loaded a skill", lambda sb: (loaded_qwen(sb), (), sb.qwen_env()),
     "qwen", {"briefing.loaded"}),
    ("opencode session compacted, had loaded a skill", lambda sb: (loaded_opencode(sb), (), {}),
     "opencode", {"briefing.loaded", "briefing.audit", "briefing.audit.opencode"}),
    # Issue 26: the tool-call and prompt events that bring a compacted agent's briefing back.
    ("codex tool call after a compaction", lambda sb: (compacted_codex(sb, "PostToolUse"), (), {}), "codex", set()),
    ("codex new turn after a compaction", lambda sb: (compacted_codex(sb, "UserPromptSubmit"), (), {}),
     "codex", set()),
    ("copilot tool call after a compaction", lambda sb: (compacted_copilot(sb), (), sb.copilot_env()),
     "copilot", {"briefing.process"}),
    # Issue 46: Factory Droid sets CLAUDE_PROJECT_DIR too; its guard refuses or briefs (updatedInput).
    ("droid guard", lambda sb: (droid_payload(sb, "PreToolUse", tool_name="Task",
                                              tool_input={"subagent_type": "dbroken"}), (), droid_env(sb)),
     "droid", {"briefing.private"}),
    ("droid brief", lambda sb: (droid_payload(sb, "PreToolUse", tool_name="Task",
                                              tool_input={"subagent_type": "dgood", "prompt": "p"}), (), droid_env(sb)),
     "droid", set()),
    # A sub-droid's LS after a compaction that removed its prompt: the briefing again.
    ("droid tool call after a compaction", lambda sb: (compacted_droid(sb), (), droid_env(sb)), "droid", set()),
    # A sub-droid's own start (the registered command stops it in the shell; the hook agrees).
    ("droid sub-droid start", lambda sb: (droid_payload(sb, "SessionStart", sub="dgood", source="startup",
                                                        calling_session_id="p-1"), ("--part", "1"), droid_env(sb)),
     "droid", set()),
]
QUIET = {"claude part 2", "droid sub-droid start"}  # rows whose hook run prints nothing


def droid_env(sb):
    return {"DROID_PROJECT_DIR": str(sb.project), "FACTORY_PROJECT_DIR": str(sb.project),
            "CLAUDE_PROJECT_DIR": str(sb.project)}


def droid_payload(sb, event, sub=None, **fields):
    """A Droid payload; ``sub``: in a sub-droid of that name, its and its parent's transcripts written."""
    folder = "home/.factory/sessions/%s/" % str(sb.project).replace("/", "-")
    sb.write({folder + "p-1.jsonl": json.dumps({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"subagent_type": sub}}]}}) + "\n",
              folder + "c-1.jsonl": json.dumps({"type": "session_start", "id": "c-1", "callingSessionId": "p-1",
                                                "callingToolUseId": "toolu_1"}) + "\n"})
    data = {"session_id": "c-1" if sub else "p-1", "transcript_path": str(sb.path(folder + ("c-1.jsonl" if sub else "p-1.jsonl"))),
            "cwd": str(sb.project), "hook_event_name": event}
    data.update(fields)
    return data


def compacted_droid(sb):
    """A sub-droid of dgood whose compaction removed its Task prompt (and the briefing in it)."""
    folder = "home/.factory/sessions/%s/" % str(sb.project).replace("/", "-")
    prompt = ("# Task Tool Invocation\n\nSubagent type: dgood\n\n---BEGIN TASK FROM PARENT AGENT---\n"
              '<briefing agent="dgood" part="1/1" seal="00">\n</briefing seal="00">\n\np\n---END TASK FROM PARENT AGENT---')
    lines = [{"type": "session_start", "id": "c-2", "callingSessionId": "p-1", "callingToolUseId": "toolu_1"},
             {"type": "message", "id": "m-task", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}},
             {"type": "compaction_state", "id": "cs", "anchorMessage": {"id": "m-task", "index": 1}}]
    sb.write({folder + "c-2.jsonl": "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines)})
    return {"session_id": "c-2", "transcript_path": str(sb.path(folder + "c-2.jsonl")), "cwd": str(sb.project),
            "hook_event_name": "PostToolUse", "tool_name": "LS", "tool_input": {}, "tool_response": "x"}


def loaded_claude(sb):
    """A Claude Code session compacted after a process before this one loaded a skill (issue 45)."""
    line = {"type": "user", "isMeta": True, "sourceToolUseID": "t1", "timestamp": "2001-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "Base directory for this skill: /p\n\nLOADED BODY\n"}}
    call = {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Skill",
                                                          "input": {"skill": "style"}}]}}
    sb.write({"home/.claude/projects/-project/s.jsonl": json.dumps(call) + "\n" + json.dumps(line) + "\n"})
    return sb.payload("SessionStart", source="compact")


def loaded_qwen(sb):
    """A Qwen Code session compacted after it loaded a skill with the skill tool (issue 45)."""
    lines = [{"type": "assistant", "message": {"parts": [{"functionCall": {"id": "c1", "name": "skill",
                                                                           "args": {"skill": "style"}}}]}},
             {"type": "tool_result", "message": {"parts": [{"functionResponse": {
                 "id": "c1", "name": "skill", "response": {"output": "Base directory for this skill: /p\n\nBODY\n"}}}]}},
             {"type": "system", "subtype": "chat_compression"}]
    sb.write({"home/.qwen/projects/-project/chats/s-1.jsonl": "".join(json.dumps(l) + "\n" for l in lines)})
    return sb.payload("SessionStart", "qwen", source="compact")


def loaded_opencode(sb):
    """An OpenCode session compacted after it loaded a skill with the skill tool (issue 45)."""
    from test_loaded_opencode import database
    database(sb, [("skill", "style", 1), ("compaction", None, 2)])
    return {"hook_event_name": "SessionStart", "opencode_plugin": "1", "cwd": str(sb.project),
            "source": "compact", "session_id": "ses_1"}


def compacted_codex(sb, event):
    """A Codex child's tool call or turn, its rollout showing a compaction since its spawn."""
    rollout = "home/.codex/sessions/2026/12/02/rollout-x-c1.jsonl"
    sb.write({rollout: '{"timestamp":"t","ordinal":9,"type":"compacted","payload":{"message":"S"}}\n'})
    return sb.payload(event, "codex", agent_id="c1", agent_type="role", transcript_path=str(sb.path(rollout)),
                      tool_name="Bash", tool_input={"command": "ls"}, prompt="go")


def compacted_copilot(sb):
    """A Copilot subagent's tool call, the session's events showing it compacted since its spawn."""
    import time
    events = "home/.copilot/session-state/s-1/events.jsonl"
    done = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 30))
    sb.write({events: '{"type":"session.compaction_complete","data":{"success":true,"compactionAttemptId":"c"},'
                      '"agentId":"a1","timestamp":"%s"}\n' % done})
    return sb.payload("PreToolUse", "copilot", agent_id="a1", agent_type="good", parent_agent_id="s-1",
                      tool_name="Bash", tool_input={"command": "ls"})


def imported(sb, payload, args, env):
    argv = [HOOK_PYTHON] + REGISTERED_FLAGS + ["-c", PROBE, str(HOOK)] + list(args)
    proc = subprocess.run(argv, input=json.dumps(payload).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=sb.env(**env), cwd=str(sb.project), timeout=30)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    out = proc.stdout.decode()
    return out, set(json.loads(out.rsplit("\n", 1)[1]))


@pytest.mark.parametrize("row, build, harness, extra", ROWS, ids=[r[0] for r in ROWS])
def test_a_hook_run_imports_only_its_harness(sandbox, row, build, harness, extra):
    sb = sandbox(FILES)
    payload, args, env = build(sb)
    out, modules = imported(sb, payload, args, env)
    if row not in QUIET:
        assert out.split("\n")[0].strip(), "the row must do real work: %r" % out  # briefed or guarded
    assert EVERY_RUN <= modules, modules
    assert modules & HARNESS_MODULES <= {"briefing.harnesses." + harness}, modules
    assert not {"briefing.doctor", "briefing.hooks_files"} & modules, modules
    assert "briefing.survey" not in modules or "briefing.survey" in extra, modules
    assert "briefing.private" not in modules or "briefing.private" in extra, modules
    assert ("briefing.standing" in modules) == ("briefing.standing" in extra), modules
    assert ("briefing.loaded" in modules) == ("briefing.loaded" in extra), modules
    # The audit's record readers (issue 40): the pre-flight reads its own harness's last session only.
    assert {m for m in modules if m.startswith("briefing.audit")} <= extra, modules


def test_the_doctor_loads_the_doctor(sandbox):
    sb = sandbox(FILES)
    argv = [HOOK_PYTHON] + REGISTERED_FLAGS + ["-c", PROBE, str(HOOK), "doctor", "--harness", "codex"]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=sb.env(), cwd=str(sb.project), timeout=30)
    modules = set(json.loads(proc.stdout.decode().rsplit("\n", 1)[1]))
    assert {"briefing.doctor", "briefing.survey", "briefing.harnesses.codex"} <= modules, modules


def test_a_name_the_harness_misses_loads_the_private_folders(sandbox):
    """Issue 29: a private skill is looked up only after the harness's roots missed the name."""
    sb = sandbox(dict(FILES, **{"project/.claude/agents/private.md": agent_md("private", ["style", "mine"]),
                                "project/.briefing/skills/mine/SKILL.md": skill_md("mine", "MINE\n")}))
    out, modules = imported(sb, sb.spawn("private"), ("--part", "1"), {})
    assert "MINE" in out and "STYLE BODY" in out, out
    assert "briefing.private" in modules, modules
