"""The shipped bytecode (hooks/__pycache__) and the launcher that uses it.

hooks.json starts the hook through hooks/briefing-launch, which runs it from
its checked hash-based .pyc when that matches the source. A stale file must
never run, the launcher must never write, and every shipped file must be
current: run scripts/build-bytecode after changing the hook.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess

import pytest

from conftest import HOOK, HOOK_PYTHON, REPO, agent_md, skill_md
from framing import rebuild

LAUNCH = REPO / "hooks" / "briefing-launch"
PYENV = os.path.expanduser("~/.pyenv/versions")
INTERPRETERS = sorted(set(
    [p for p in glob.glob(os.path.join(PYENV, "3.*", "bin", "python3"))
     if not os.path.basename(os.path.dirname(os.path.dirname(p))).startswith(("3.6", "3.7"))]
    + [HOOK_PYTHON]))

HEADER_CHECK = """
import importlib.util, sys
source = sys.argv[1]
target = importlib.util.cache_from_source(source)
try:
    data = open(target, "rb").read()
except OSError:
    print("missing " + target); raise SystemExit(0)
flags = int.from_bytes(data[4:8], "little")
fresh = data[:4] == importlib.util.MAGIC_NUMBER and flags == 3 \\
    and data[8:16] == importlib.util.source_hash(open(source, "rb").read())
print(("fresh " if fresh else "stale ") + target)
"""


@pytest.mark.parametrize("python", INTERPRETERS)
def test_shipped_bytecode_is_current(python):
    proc = subprocess.run([python, "-I", "-c", HEADER_CHECK, str(HOOK)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.startswith("missing"):
        pytest.skip("no shipped bytecode for %s (scripts/build-bytecode makes it)" % python)
    assert proc.stdout.startswith("fresh"), "%s: run scripts/build-bytecode" % proc.stdout.strip()


def launch(sb, hooks_dir, payload, *args):
    argv = [HOOK_PYTHON, "-I", "-S", "-B", str(hooks_dir / "briefing-launch"),
            str(hooks_dir / "briefing-preload")] + list(args)
    proc = subprocess.run(argv, input=json.dumps(payload).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=sb.env(), cwd=str(sb.project), timeout=30)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    return proc.stdout.decode()


def snapshot(folder):
    return sorted((p, os.path.getsize(p)) for p in glob.glob(str(folder / "**"), recursive=True))


def test_launcher_runs_the_hook_exactly_and_writes_nothing(sandbox):
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["s1", "gone"]),
                  "project/.claude/agents/b.md": agent_md("b", ["s1"]),
                  "project/.claude/skills/s1/SKILL.md": skill_md("s1", "BODY-S1\n")})
    hooks = REPO / "hooks"
    before = snapshot(hooks)
    for payload, args in [(sb.guard("a"), ()), (sb.spawn("b"), ("--part", "1")),
                          (sb.spawn("b"), ("--part", "2")), (sb.spawn("a"), ("--part", "1"))]:
        assert launch(sb, hooks, payload, *args) == sb.run(payload, args=args).out
    assert snapshot(hooks) == before


def test_stale_bytecode_is_never_run(sandbox, tmp_path):
    """Change the source after the .pyc was made: the launcher must run the new source."""
    copy = tmp_path / "plugin" / "hooks"
    shutil.copytree(str(REPO / "hooks"), str(copy))
    source = (copy / "briefing-preload").read_text()
    marker = 'ABORT = (\n    "STOP.'
    assert marker in source
    (copy / "briefing-preload").write_text(source.replace(marker, 'ABORT = (\n    "HALTED-BY-NEW-SOURCE. STOP.'))
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["gone"])})
    before = snapshot(copy)
    out = launch(sb, copy, sb.spawn("a"), "--part", "1")
    assert "HALTED-BY-NEW-SOURCE" in out
    assert snapshot(copy) == before


def test_registered_commands_use_the_launcher():
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]
                if "briefing-preload" in h["command"]]
    assert commands
    for command in commands:
        argv = shlex.split(command)
        assert argv[:4] == ["python3", "-I", "-S", "-B"], command
        assert argv[4].endswith("/hooks/briefing-launch") and argv[5].endswith("/hooks/briefing-preload")


def test_launched_briefing_reads_back(sandbox):
    bodies = {"s%d" % i: ("line %d\n" % i) * 1500 for i in range(3)}
    files = {"project/.claude/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()}
    files["project/.claude/agents/big.md"] = agent_md("big", sorted(bodies))
    sb = sandbox(files)
    outs = [launch(sb, REPO / "hooks", sb.spawn("big"), "--part", str(i)) for i in range(1, 9)]
    contexts = [json.loads(o)["hookSpecificOutput"]["additionalContext"] for o in outs if o]
    assert rebuild(contexts).skills == bodies
