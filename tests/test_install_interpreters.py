"""Which Python the registered commands run, simulated (issue 28, item 5).

Every POSIX command line of every hooks file (Claude Code, Codex, Copilot CLI,
and the built Gemini CLI extension), read from the file and run exactly as the
harness runs it, with the plugin root put in for its placeholder, under ``sh``
(and bash and zsh where they exist), with a PATH that holds nothing but stand-in
interpreters:

- ``python3`` the Microsoft Store alias (exits 49, prints nothing);
- ``python3``/``python`` a Python 2 (refuses ``-I``);
- a working ``python``; a working ``py`` that takes ``-3``; none at all;
- a working ``python3`` whose hook run fails (the fallback must not hide that).

Then the hook's own answer is checked: the guard denies a spawn with a missing
skill, a spawn is briefed whole (every Claude Code part), or, with no usable
Python, the session start says what to install and a spawn says it went
unchecked. Each stand-in logs its calls, so the tests also see which interpreter
ran and that a working python3 costs one process and nothing else.
"""
import json
import shutil
from pathlib import Path

import pytest

from conftest import HOOK_PYTHON, REPO, agent_md, role_toml, skill_md
from framing import rebuild
from hook_commands import briefing_handlers, posix_command, substituted
import subprocess

SHELLS = [s for s in ("/bin/sh", shutil.which("bash"), shutil.which("zsh")) if s]
LOG_VAR = "BRIEFING_STANDIN_LOG"


def messages():
    text = (REPO / "hooks" / "briefing-python").read_text()
    return [line.split("=", 1)[1].strip("'") for line in text.splitlines()
            if line.startswith(("start_message=", "spawn_message="))]


START, SPAWN = messages()

REAL = '#!/bin/sh\necho "${0##*/} $*" >> "$%s"\nexec "%s" "$@"\n' % (LOG_VAR, HOOK_PYTHON)
STANDINS = {
    # What Claude Code's Git Bash finds as python3 on many Windows machines: no output, status 49.
    "store-alias": '#!/bin/sh\necho "${0##*/} $*" >> "$%s"\nexit 49\n' % LOG_VAR,
    "python2": ('#!/bin/sh\necho "${0##*/} $*" >> "$%s"\n'
                'for a in "$@"; do [ "$a" = -I ] && { echo "Unknown option: -I" >&2; exit 2; }; done\nexit 0\n'
                % LOG_VAR),
    "real": REAL,
    "py-launcher": ('#!/bin/sh\necho "${0##*/} $*" >> "$%s"\n'
                    '[ "$1" = -3 ] || { echo "py: give a version, -3" >&2; exit 103; }\nshift\nexec "%s" "$@"\n'
                    % (LOG_VAR, HOOK_PYTHON)),
    # python3 runs, but the hook itself fails: that failure must stand.
    "hook-fails": ('#!/bin/sh\necho "${0##*/} $*" >> "$%s"\n'
                   'case "$*" in *briefing-preload*) echo "the hook failed" >&2; exit 1;; esac\nexec "%s" "$@"\n'
                   % (LOG_VAR, HOOK_PYTHON)),
}


def old_pythons():
    """{version: path} of the interpreters older than 3.8 found here (pyenv's, or on PATH): a
    python3 that runs the hook's script but not its package (issue 36, item 6)."""
    found = {}
    for version in ("3.7", "3.6", "2.7"):
        names = sorted(Path.home().glob(".pyenv/versions/%s.*/bin/python%s" % (version, version)))
        names.append(shutil.which("python" + version))
        for name in names:
            # A pyenv shim is no interpreter: on a PATH of stand-ins it finds nothing to run.
            if name and Path(name).is_file() and "shims" not in Path(name).parts:
                found[version] = str(name)
                break
    return found


OLD = old_pythons()
for _version, _path in OLD.items():
    STANDINS["old-" + _version] = '#!/bin/sh\necho "${0##*/} $*" >> "$%s"\nexec "%s" "$@"\n' % (LOG_VAR, _path)
OLD_MACHINES = {"python3 is Python %s, python works" % v: ({"python3": "old-" + v, "python": "real"}, "python")
                for v in OLD}
OLD_MACHINES.update({"python3 is Python %s, nothing newer" % v: ({"python3": "old-" + v}, None) for v in OLD})

# name -> ({command: stand-in}, the interpreter words that run the hook, or None for no Python)
MACHINES = dict(OLD_MACHINES, **{
    "python3 works": ({"python3": "real", "python": "real"}, "python3"),
    "python3 is the Store alias, python works": ({"python3": "store-alias", "python": "real"}, "python"),
    "python3 is the Store alias, py -3 works": ({"python3": "store-alias", "py": "py-launcher"}, "py -3"),
    "Python 2 under both names, py -3 works": ({"python3": "python2", "python": "python2", "py": "py-launcher"},
                                               "py -3"),
    "only py -3": ({"py": "py-launcher"}, "py -3"),
    "only the Store alias": ({"python3": "store-alias", "python": "store-alias"}, None),
    "Python 2 only": ({"python": "python2"}, None),
    "no Python at all": ({}, None),
})


@pytest.fixture(scope="module")
def gemini_extension(gemini_build):
    """The extension as scripts/build-gemini-extension writes it: its root."""
    return gemini_build[0]


class Machine:
    """A PATH of stand-ins, and a log of every call they got."""

    def __init__(self, root, standins):
        self.bin = Path(root) / "bin"
        self.bin.mkdir(parents=True)
        self.log = Path(root) / "calls.log"
        self.log.write_text("")
        for name, kind in standins.items():
            path = self.bin / name
            path.write_text(STANDINS[kind])
            path.chmod(0o755)

    def calls(self):
        return self.log.read_text().splitlines()

    def run(self, shell, command, root, payload, env, cwd):
        env = dict(env, PATH=str(self.bin))
        env[LOG_VAR] = str(self.log)
        proc = subprocess.run([shell, "-c", substituted(command, root)], input=json.dumps(payload).encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(cwd), timeout=60)
        return proc


def setup(sandbox, harness, ext=None):
    """(sandbox, hooks file, plugin root, env) with a reviewer (alpha, beta) and broken (alpha, ghost-skill)."""
    bodies = {"alpha": "ALPHA-BODY: alpha's only copy.\n", "beta": "BETA-BODY: beta's only copy.\n"}
    if harness == "claude":
        files = {"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"]),
                 "project/.claude/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"])}
        files.update({"project/.claude/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()})
        sb = sandbox(files)
        return sb, REPO / "hooks" / "hooks.json", REPO, sb.env(CLAUDE_PROJECT_DIR=str(sb.project),
                                                                  CLAUDE_PLUGIN_ROOT=str(REPO))
    if harness == "codex":
        files = {"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "beta"]),
                 "project/.codex/agents/broken.toml": role_toml("broken", ["alpha", "ghost-skill"])}
        files.update({"project/.codex/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()})
        sb = sandbox(files)
        return sb, REPO / "hooks" / "hooks.codex.json", REPO, sb.env(CLAUDE_PLUGIN_ROOT=str(REPO))
    if harness == "copilot":
        files = {"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha", "beta"]),
                 "project/.github/agents/broken.agent.md": agent_md("broken", ["alpha", "ghost-skill"])}
        files.update({"project/.github/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()})
        sb = sandbox(files)
        return sb, REPO / "hooks" / "hooks.copilot.json", REPO, sb.env(**sb.copilot_env())
    comment = "<!-- briefing: skills = [%s] -->\n"
    files = {"home/.gemini/agents/reviewer.md": "---\nname: reviewer\ndescription: r\n---\nReview.\n"
             + comment % '"alpha", "beta"',
             "home/.gemini/agents/broken.md": "---\nname: broken\ndescription: b\n---\nBreak.\n"
             + comment % '"alpha", "ghost-skill"'}
    files.update({"home/.gemini/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()})
    sb = sandbox(files)
    env = sb.env(GEMINI_SESSION_ID="g-1", GEMINI_PROJECT_DIR=str(sb.project), GEMINI_CWD=str(sb.project),
                 CLAUDE_PROJECT_DIR=str(sb.project))
    return sb, ext / "hooks" / "hooks.json", ext, env


def gemini_payload(sb, event, **fields):
    data = {"session_id": "g-1", "cwd": str(sb.project), "hook_event_name": event,
            "transcript_path": str(sb.home / ".gemini" / "tmp" / "project" / "chats" / "session-1.jsonl"),
            "timestamp": "2026-12-01T07:57:59.523Z"}
    data.update(fields)
    return data


def guard_payload(sb, harness, name):
    if harness == "gemini":
        return gemini_payload(sb, "BeforeTool", tool_name="invoke_agent",
                              tool_input={"agent_name": name, "prompt": "ORIGINAL PROMPT"})
    return sb.guard(name, harness)


def start_payload(sb, harness):
    if harness == "gemini":
        return gemini_payload(sb, "SessionStart", source="startup")
    if harness == "copilot":
        return sb.payload("SessionStart", "copilot")
    return sb.payload("SessionStart", harness, source="startup")


def guard_commands(hooks_file, harness):
    event, tool = {"claude": ("PreToolUse", "Agent"), "codex": ("PreToolUse", "spawn_agent"),
                   "copilot": ("PreToolUse", "Agent"), "gemini": ("BeforeTool", "invoke_agent")}[harness]
    found = [posix_command(h) for e, matcher, h in briefing_handlers(hooks_file)
             if e == event and matcher and __import__("re").fullmatch(matcher, tool)]
    assert len(found) == 1, found
    return found[0]


def event_commands(hooks_file, event):
    found = [posix_command(h) for e, _, h in briefing_handlers(hooks_file) if e == event]
    assert found, event
    return found


def denied(out, harness):
    data = json.loads(out)
    if harness == "gemini":
        return data["decision"] == "deny" and "ghost-skill" in data["reason"]
    hso = data["hookSpecificOutput"]
    return hso["permissionDecision"] == "deny" and "ghost-skill" in hso["permissionDecisionReason"]


def ran_the_hook(calls, words=None):
    """The interpreter words of every call that started the hook."""
    return [c.rsplit(" -I -S -B ", 1)[0] for c in calls if "briefing-preload" in c]


HARNESSES = ["claude", "codex", "copilot", "gemini"]


# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("machine_name", sorted(MACHINES))
def test_the_guard_answers_on_every_machine(sandbox, tmp_path, gemini_extension, harness, machine_name, shell):
    standins, runs = MACHINES[machine_name]
    sb, hooks_file, root, env = setup(sandbox, harness, gemini_extension)
    machine = Machine(tmp_path / "machine", standins)
    proc = machine.run(shell, guard_commands(hooks_file, harness), root, guard_payload(sb, harness, "broken"),
                       env, sb.project)
    assert proc.returncode == 0, proc
    assert b"Traceback" not in proc.stderr, proc
    if runs is None:
        assert json.loads(proc.stdout) == {"systemMessage": SPAWN}, proc
        # Only the first attempt reached a "python3" (one that does not run it); nothing else got the hook.
        assert ran_the_hook(machine.calls(), None) in ([], ["python3"]), machine.calls()
    else:
        assert denied(proc.stdout, harness), proc
        assert ran_the_hook(machine.calls(), runs)[-1] == runs, machine.calls()


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_working_python3_is_the_only_process(sandbox, tmp_path, gemini_extension, harness):
    """Where python3 works the fallback is never read: one interpreter start, the hook's."""
    sb, hooks_file, root, env = setup(sandbox, harness, gemini_extension)
    machine = Machine(tmp_path / "machine", {"python3": "real", "python": "real", "py": "py-launcher"})
    proc = machine.run("/bin/sh", guard_commands(hooks_file, harness), root,
                       guard_payload(sb, harness, "broken"), env, sb.project)
    assert proc.returncode == 0 and denied(proc.stdout, harness), proc
    assert len(machine.calls()) == 1 and machine.calls()[0].startswith("python3 -I -S -B "), machine.calls()


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness", HARNESSES)
def test_a_failing_hook_is_not_passed_to_another_interpreter(sandbox, tmp_path, gemini_extension, harness, shell):
    """python3 runs but the hook fails: its status stands, and no other interpreter gets the payload
    (a plain python3 || python chain would run it again, and a last echo would let the spawn through)."""
    sb, hooks_file, root, env = setup(sandbox, harness, gemini_extension)
    machine = Machine(tmp_path / "machine", {"python3": "hook-fails", "python": "real", "py": "py-launcher"})
    proc = machine.run(shell, guard_commands(hooks_file, harness), root, guard_payload(sb, harness, "broken"),
                       env, sb.project)
    assert proc.returncode == 1 and proc.stdout == b"", proc
    assert b"the hook failed" in proc.stderr
    calls = machine.calls()
    assert [c.split()[0] for c in calls] == ["python3", "python3"], calls  # the hook, then the version check
    assert "briefing-preload" not in calls[1]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("machine_name", ["only the Store alias", "no Python at all", "Python 2 only"])
def test_no_usable_python_says_so_at_session_start(sandbox, tmp_path, gemini_extension, harness, machine_name,
                                                   shell):
    standins, _ = MACHINES[machine_name]
    sb, hooks_file, root, env = setup(sandbox, harness, gemini_extension)
    machine = Machine(tmp_path / "machine", standins)
    outs = []
    for command in event_commands(hooks_file, "SessionStart"):
        proc = machine.run(shell, command, root, start_payload(sb, harness), env, sb.project)
        assert proc.returncode == 0, proc
        if proc.stdout.strip():
            outs.append(json.loads(proc.stdout))
    # One message, whatever the number of handlers (Claude Code's 8 parts: part 1 speaks).
    assert outs == [{"systemMessage": START}], outs
    assert "Install Python 3.8" in START


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("machine_name", ["python3 is the Store alias, python works",
                                          "Python 2 under both names, py -3 works"])
def test_every_claude_code_part_reaches_the_fallback_interpreter(sandbox, tmp_path, machine_name, shell):
    """The fallback passes each handler's own --part: the 8 parts rebuild the briefing whole, once."""
    standins, runs = MACHINES[machine_name]
    sb, hooks_file, root, env = setup(sandbox, "claude")
    machine = Machine(tmp_path / "machine", standins)
    contexts = []
    commands = event_commands(hooks_file, "SubagentStart")
    assert len(commands) == 8
    for command in commands:
        proc = machine.run(shell, command, root, sb.spawn("reviewer"), env, sb.project)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
        if proc.stdout.strip():
            contexts.append(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])
    assert rebuild(contexts).skills == {"alpha": "ALPHA-BODY: alpha's only copy.\n",
                                       "beta": "BETA-BODY: beta's only copy.\n"}
    hook_runs = ran_the_hook(machine.calls(), runs)
    assert hook_runs.count(runs) == 8, machine.calls()
    parts = sorted(c.split("--part ")[1] for c in machine.calls() if c.startswith(runs + " -I -S -B "))
    assert parts == [str(i) for i in range(1, 9)], machine.calls()


@pytest.mark.parametrize("harness", ["codex", "copilot"])
def test_subagent_start_is_briefed_through_the_fallback(sandbox, tmp_path, harness):
    sb, hooks_file, root, env = setup(sandbox, harness)
    machine = Machine(tmp_path / "machine", {"python3": "store-alias", "py": "py-launcher"})
    (command,) = event_commands(hooks_file, "SubagentStart")
    proc = machine.run("/bin/sh", command, root, sb.spawn("reviewer", harness), env, sb.project)
    assert proc.returncode == 0, proc
    out = json.loads(proc.stdout)
    context = out["additionalContext"] if harness == "copilot" else out["hookSpecificOutput"]["additionalContext"]
    assert sorted(rebuild([context]).skills) == ["alpha", "beta"]


def test_gemini_spawn_is_briefed_through_the_fallback(sandbox, tmp_path, gemini_extension):
    sb, hooks_file, root, env = setup(sandbox, "gemini", gemini_extension)
    machine = Machine(tmp_path / "machine", {"python3": "store-alias", "python": "real"})
    proc = machine.run(shutil.which("bash") or "/bin/sh", guard_commands(hooks_file, "gemini"), root,
                       guard_payload(sb, "gemini", "reviewer"), env, sb.project)
    assert proc.returncode == 0, proc
    tool_input = json.loads(proc.stdout)["hookSpecificOutput"]["tool_input"]
    assert tool_input["agent_name"] == "reviewer" and tool_input["prompt"].endswith("\n\nORIGINAL PROMPT")
    assert "ALPHA-BODY" in tool_input["prompt"] and "BETA-BODY" in tool_input["prompt"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_no_usable_python_leaves_other_events_quiet(sandbox, tmp_path, gemini_extension, harness):
    """Without Python only the session start and a spawn speak: every other handler prints nothing."""
    sb, hooks_file, root, env = setup(sandbox, harness, gemini_extension)
    machine = Machine(tmp_path / "machine", {"python3": "store-alias"})
    quiet = 0
    for event, matcher, handler in briefing_handlers(hooks_file):
        if event == "SessionStart":
            continue
        guard = event in ("PreToolUse", "BeforeTool") and matcher in (
            "Agent", "^invoke_agent$", "spawn_agent|collaborationspawn_agent")
        payload = (guard_payload(sb, harness, "reviewer") if guard else
                   sb.spawn("reviewer", harness) if event == "SubagentStart" else
                   sb.payload(event, harness, tool_name="Read", tool_input={}))
        proc = machine.run("/bin/sh", posix_command(handler), root, payload, env, sb.project)
        assert proc.returncode == 0, proc
        if guard:
            assert json.loads(proc.stdout) == {"systemMessage": SPAWN}, proc
        else:
            assert proc.stdout == b"", (event, matcher, proc)
            quiet += 1
    assert quiet or harness == "gemini"


def test_messages_are_json_safe_and_say_what_to_install():
    for message in (START, SPAWN):
        assert not set(message) & set('"\\\'%') and message.isprintable(), message
        assert "Python 3.8" in message and "python3" in message


# ---------------------------------------------------------------------------------------------------------
# Issue 36, item 6: a python3 older than 3.8 runs the entry script, which must not run the package.

needs_old = pytest.mark.skipif(not OLD, reason="no Python older than 3.8 here (pyenv 3.6/3.7 or python2.7)")


@needs_old
@pytest.mark.parametrize("version", sorted(OLD))
@pytest.mark.parametrize("args", [(), ("--part", "3")])
def test_an_old_python_hands_the_hook_over_untouched(sandbox, tmp_path, version, args):
    """Hook mode on 3.6, 3.7 (and 2.7 without -I): exit 3 before the package is imported, print
    nothing, and leave stdin unread for the interpreter the fallback chooses."""
    sb, _, _, env = setup(sandbox, "claude")
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(sb.guard("broken")))
    flags = ["-S", "-B"] if version == "2.7" else ["-I", "-S", "-B"]
    with payload.open("rb") as stdin:
        proc = subprocess.run([OLD[version]] + flags + [str(REPO / "hooks" / "briefing-preload")] + list(args),
                              stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
        unread = stdin.tell() == 0  # the file's offset, which the child shares
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, b"", b""), proc
    assert unread


@needs_old
@pytest.mark.parametrize("version", sorted(v for v in OLD if v != "2.7"))
def test_the_doctor_on_an_old_python_chooses_as_the_hooks_do(sandbox, tmp_path, version):
    """bin/briefing-doctor started by an old python3 runs under the interpreter the hook commands
    would choose (python here), so it says what the spawn path does; with none newer, it says so.
    ``briefing-preload doctor`` on an old Python says so too."""
    sb, _, _, env = setup(sandbox, "claude")
    argv = [str(REPO / "bin" / "briefing-doctor"), "--harness", "claude", "--cwd", str(sb.project)]
    expected = subprocess.run([HOOK_PYTHON] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=str(sb.project), timeout=120)
    assert expected.returncode == 1 and b"ghost-skill" in expected.stdout, expected
    for standins, works in (({"python3": "old-" + version, "python": "real"}, True),
                            ({"python3": "old-" + version}, False)):
        machine = Machine(tmp_path / ("machine-%s" % works), standins)
        proc = subprocess.run(["python3"] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=dict(env, PATH=str(machine.bin), **{LOG_VAR: str(machine.log)}),
                              cwd=str(sb.project), timeout=120)
        assert b"Traceback" not in proc.stderr, proc
        if works:
            assert (proc.returncode, proc.stdout) == (expected.returncode, expected.stdout), proc
            assert [c.split()[0] for c in machine.calls()][-1] == "python", machine.calls()
        else:
            assert proc.returncode == 1 and proc.stdout == b"", proc
            message = proc.stderr.decode()
            assert "needs Python 3.8 or newer; this is Python %s" % version in message, message
            assert "none of python3, python and py -3" in message and "Install Python 3.8+" in message
    proc = subprocess.run([OLD[version], "-I", "-S", "-B", str(REPO / "hooks" / "briefing-preload"), "doctor"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    assert proc.returncode == 1 and proc.stdout == b"", proc
    assert b"briefing needs Python 3.8 or newer; this is Python " + version.encode() in proc.stderr, proc
