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

HARNESS_MODULES = {"briefing.harnesses.%s" % key for key in ("claude", "codex", "copilot", "gemini", "qwen", "opencode", "kilo")}
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
    # Issue 26: the tool-call and prompt events that bring a compacted agent's briefing back.
    ("codex tool call after a compaction", lambda sb: (compacted_codex(sb, "PostToolUse"), (), {}), "codex", set()),
    ("codex new turn after a compaction", lambda sb: (compacted_codex(sb, "UserPromptSubmit"), (), {}),
     "codex", set()),
    ("copilot tool call after a compaction", lambda sb: (compacted_copilot(sb), (), sb.copilot_env()),
     "copilot", {"briefing.process"}),
]


def loaded_claude(sb):
    """A Claude Code session compacted after a process before this one loaded a skill (issue 45)."""
    line = {"type": "user", "isMeta": True, "sourceToolUseID": "t1", "timestamp": "2001-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "Base directory for this skill: /p\n\nLOADED BODY\n"}}
    call = {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Skill",
                                                          "input": {"skill": "style"}}]}}
    sb.write({"home/.claude/projects/-project/s.jsonl": json.dumps(call) + "\n" + json.dumps(line) + "\n"})
    return sb.payload("SessionStart", source="compact")


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
    if row != "claude part 2":
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
