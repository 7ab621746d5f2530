"""A plugin folder that vanished while a session runs (issue 36, item 7).

An update or uninstall removes the folder the harness registered the commands from, or a
Gemini CLI extension's source is deleted: the harness still runs every command it read at
session start, and neither the hook nor hooks/briefing-python is there. The commands
themselves (scripts/hook-commands) then say so in one line naming briefing, the folder and
the fix, refuse every agent spawn (docs/windows.md, "A vanished plugin folder": briefing
cannot tell a declaring agent from another without its files), say the same at session start,
and stay quiet with exit 0 on every other event, so no other tool call is held up.

Every POSIX command of every hooks file (and of the built Gemini extension) runs here exactly
as registered, under sh and bash, with its root pointing at a folder that is gone.
"""
import json
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from hook_commands import briefing_handlers, posix_command, substituted

SHELLS = [s for s in ("/bin/sh", shutil.which("bash"), shutil.which("zsh")) if s]
FILES = {"claude": "hooks/hooks.json", "codex": "hooks/hooks.codex.json", "copilot": "hooks/hooks.copilot.json"}
SPAWN = {"claude": ("PreToolUse", "Agent"), "codex": ("PreToolUse", "spawn_agent"),
         "copilot": ("PreToolUse", "Agent"), "gemini": ("BeforeTool", "invoke_agent")}


@pytest.fixture(scope="module")
def gemini_extension(gemini_build):
    return gemini_build[0]


def hooks_file(harness, gemini_extension):
    return gemini_extension / "hooks" / "hooks.json" if harness == "gemini" else REPO / FILES[harness]


def payload(event, tool=None, **fields):
    data = {"hook_event_name": event, "session_id": "s-1", "cwd": "/tmp", "transcript_path": "/tmp/t.jsonl"}
    if tool:
        data.update(tool_name=tool, tool_input={"subagent_type": "reviewer", "agent_type": "reviewer",
                                                "agent_name": "reviewer", "prompt": "p"})
    data.update(fields)
    return data


def run(shell, command, root, data, compact=False):
    """Run a registered command as its harness does: Gemini CLI puts the extension's folder into
    the text, the others set CLAUDE_PLUGIN_ROOT, which the shell expands."""
    text = json.dumps(data, separators=(",", ":") if compact else (", ", ": "))
    command = substituted(command, root) if "${extensionPath}" in command else command
    return subprocess.run([shell, "-c", command], input=text.encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT": str(root)},
                          timeout=30)


def matches(matcher, tool):
    return not matcher or matcher == "*" or re.fullmatch(matcher, tool)


def says_gone(message, root):
    return (message.startswith("briefing cannot run: its folder %s is gone" % root)
            and "Restart the session" in message and "reinstall briefing" in message and "\n" not in message)


def refused(out, harness, root):
    data = json.loads(out)
    if harness == "gemini":
        reason = data["decision"] == "deny" and data["reason"]
    else:
        hso = data["hookSpecificOutput"]
        reason = hso["hookEventName"] == "PreToolUse" and hso["permissionDecision"] == "deny" and \
            hso["permissionDecisionReason"]
    return bool(reason) and says_gone(reason, root) and data["systemMessage"] == reason


# A folder that is gone, and one whose name needs escaping in JSON (Gemini CLI puts the folder
# into the command's text, where a double quote would break any command: not that one).
ROOTS = ["gone/briefing/0.9.0", 'gone/a "quoted" \\ name/briefing', "gone/a back\\slash/briefing"]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness, name", [(h, n) for h in sorted(SPAWN) for n in ROOTS
                                           if not (h == "gemini" and '"' in n)])
def test_a_spawn_is_refused_with_a_message_that_says_why(tmp_path, gemini_extension, harness, name, shell):
    root = tmp_path / name
    event, tool = SPAWN[harness]
    guards = [h for e, m, h in briefing_handlers(hooks_file(harness, gemini_extension))
              if e == event and m and re.fullmatch(m, tool)]
    assert len(guards) == 1
    for compact in (False, True):
        proc = run(shell, posix_command(guards[0]), root, payload(event, tool), compact)
        assert proc.returncode == 0, proc
        assert refused(proc.stdout, harness, str(root)), proc


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness", sorted(SPAWN))
def test_every_other_event_is_quiet_and_the_session_start_says_it_once(tmp_path, gemini_extension, harness, shell):
    root = tmp_path / "gone" / "briefing"
    said = {}
    for event, matcher, handler in briefing_handlers(hooks_file(harness, gemini_extension)):
        tools = ["Bash", "Read"] if event in ("PreToolUse", "PostToolUse", "BeforeTool") else [None]
        if event == "PostToolUse":
            tools.append(SPAWN[harness][1])  # after a spawn ran: nothing to refuse
        for tool in tools:
            if tool and not matches(matcher, tool):
                continue
            proc = run(shell, posix_command(handler), root, payload(event, tool, source="startup"))
            assert proc.returncode == 0, proc
            if proc.stdout.strip():
                said.setdefault(event, []).append(json.loads(proc.stdout))
    assert set(said) <= {"SessionStart", "SubagentStart"}, said
    for event, outs in said.items():
        # Claude Code's 8 parts: part 1 alone speaks.
        assert len(outs) == 1 and set(outs[0]) == {"systemMessage"}, said
        assert says_gone(outs[0]["systemMessage"], str(root)), outs
    assert "SessionStart" in said


@pytest.mark.parametrize("harness", sorted(SPAWN))
def test_a_folder_that_is_there_still_runs_the_hook_through_the_fallback(tmp_path, gemini_extension, harness):
    """The check is the fallback's own file: with the folder there, a failing first attempt
    still reaches hooks/briefing-python with its status (python3 missing here: it says so)."""
    root = REPO if harness != "gemini" else gemini_extension
    event, tool = SPAWN[harness]
    (guard,) = [h for e, m, h in briefing_handlers(hooks_file(harness, gemini_extension))
                if e == event and m and re.fullmatch(m, tool)]
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = subprocess.run(["/bin/sh", "-c", substituted(posix_command(guard), root)],
                          input=json.dumps(payload(event, tool)).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env={"PATH": str(empty)}, timeout=30)
    assert proc.returncode == 0, proc
    assert "no Python 3.8 or newer was found" in json.loads(proc.stdout)["systemMessage"], proc


@pytest.mark.parametrize("harness, key", [("codex", "commandWindows"), ("copilot", "powershell"),
                                          ("gemini", "command")])
def test_the_powershell_twins_check_the_folder_first(gemini_extension, harness, key):
    """Not run here (no PowerShell): each Windows command tests the hook's path before it probes
    an interpreter, and answers as the POSIX one does. ConvertTo-Json escapes the folder."""
    for event, _, handler in briefing_handlers(hooks_file(harness, gemini_extension)):
        command = handler[key]
        if harness == "gemini":
            command = command.split("; #> ", 1)[1]
        gone, rest = command.split("if (-not (Test-Path -LiteralPath $h)) { ", 1)[1].split(" exit 0 }; ", 1)
        assert "Get-Command" not in gone and rest.startswith("$c = $null;"), command
        assert "'briefing cannot run: its folder ' + " in gone and "| ConvertTo-Json" in gone
        assert "Restart the session" in gone and "reinstall briefing" in gone
        # the folder there but not its hook: the other message, chosen by the folder itself
        assert "-PathType Container) { 'briefing cannot run: its folder ' + " in gone
        assert "has no hooks/briefing-preload" in gone and "scripts/build-qwen-extension" in gone
        assert ('"decision": "deny"' if harness == "gemini" else '"permissionDecision": "deny"') in gone


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness", sorted(SPAWN) + ["qwen"])
def test_a_folder_that_is_there_without_its_hook_is_never_called_gone(tmp_path, gemini_extension, harness, shell):
    """The repository's qwen/ (or gemini/) source folder installed as it is, or any copy that lost
    its hook: the folder is there, so the refusal says what is missing and which build to
    install (issue 44), never that the folder is gone or that a restart helps."""
    root = tmp_path / "briefing"
    shutil.copytree(str(REPO / ("qwen" if harness == "qwen" else "gemini")), str(root))
    event, tool = SPAWN.get(harness, ("PreToolUse", "agent"))
    path = REPO / "qwen" / "hooks" / "hooks.json" if harness == "qwen" else hooks_file(harness, gemini_extension)
    (guard,) = [h for e, m, h in briefing_handlers(path) if e == event and m and re.fullmatch(m, tool)]
    starts = [h for e, _, h in briefing_handlers(path) if e == "SessionStart"]
    for command, data in [(posix_command(guard), payload(event, tool))] + [
            (posix_command(h), payload("SessionStart", source="startup")) for h in starts]:
        proc = run(shell, command.replace("${extensionPath}", str(root)), root, data)
        assert proc.returncode == 0, proc
        if not proc.stdout.strip():
            continue  # Claude Code's parts past the first say nothing
        out = json.loads(proc.stdout)
        message = out["systemMessage"]
        assert message.startswith("briefing cannot run: its folder %s has no hooks/briefing-preload" % root), out
        assert "is gone" not in message and "scripts/build-qwen-extension" in message
        if data["hook_event_name"] == event:
            reason = out["reason"] if harness == "gemini" else out["hookSpecificOutput"]["permissionDecisionReason"]
            assert reason == message, out
