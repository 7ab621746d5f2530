"""The shipped bytecode of the hook's package, and the registered commands that use it.

Every hooks file starts ``python3 -I -S -B .../hooks/briefing-preload``, which
imports the package hooks/briefing/ from its checked hash-based .pyc files
where they match the source. A stale file must never run, a run must never
write, and every shipped file must be current: run scripts/build-bytecode
after changing the package.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess

import pytest

from conftest import HOOK, HOOK_PYTHON, PACKAGE, REPO, agent_md, skill_md
from framing import rebuild
from hook_commands import HOOKS_FILES, first_attempt

PYENV = os.path.expanduser("~/.pyenv/versions")
INTERPRETERS = sorted(set(
    [p for p in glob.glob(os.path.join(PYENV, "3.*", "bin", "python3"))
     if not os.path.basename(os.path.dirname(os.path.dirname(p))).startswith(("3.6", "3.7"))]
    + [HOOK_PYTHON]))

# Prints one line per module of the package: fresh, stale or missing (for this interpreter),
# and one per .pyc of this interpreter whose module is gone.
HEADER_CHECK = """
import importlib.util, os, sys
package = sys.argv[1]
sources = []
for folder, dirs, files in os.walk(package):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    sources += [os.path.join(folder, f) for f in files if f.endswith(".py")]
for source in sorted(sources):
    target = importlib.util.cache_from_source(source)
    try:
        data = open(target, "rb").read()
    except OSError:
        print("missing " + target); continue
    flags = int.from_bytes(data[4:8], "little")
    fresh = data[:4] == importlib.util.MAGIC_NUMBER and flags == 3 \\
        and data[8:16] == importlib.util.source_hash(open(source, "rb").read())
    print(("fresh " if fresh else "stale ") + target)
tag = sys.implementation.cache_tag
wanted = {importlib.util.cache_from_source(s) for s in sources}
for folder, dirs, files in os.walk(package):
    for f in files:
        path = os.path.join(folder, f)
        if f.endswith(".pyc") and ("." + tag + ".") in f and path not in wanted:
            print("orphan " + path)
"""


@pytest.mark.parametrize("python", INTERPRETERS)
def test_shipped_bytecode_is_current(python):
    proc = subprocess.run([python, "-I", "-c", HEADER_CHECK, str(PACKAGE)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines, proc.stdout
    if all(line.startswith("missing") for line in lines):
        pytest.skip("no shipped bytecode for %s (scripts/build-bytecode makes it)" % python)
    wrong = [line for line in lines if not line.startswith("fresh")]
    assert not wrong, "run scripts/build-bytecode:\n%s" % "\n".join(wrong)


def registered(hooks_dir, args=()):
    """The command as every hooks file registers it, for the plugin whose hooks/ is ``hooks_dir``."""
    return [HOOK_PYTHON, "-I", "-S", "-B", str(hooks_dir / "briefing-preload")] + list(args)


def launch(sb, hooks_dir, payload, *args, flags=()):
    argv = registered(hooks_dir, args)
    argv[1:1] = list(flags)
    proc = subprocess.run(argv, input=json.dumps(payload).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=sb.env(), cwd=str(sb.project), timeout=30)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    return proc


def snapshot(folder):
    return sorted((p, os.path.getsize(p), os.stat(p).st_mtime_ns)
                  for p in glob.glob(str(folder / "**"), recursive=True))


@pytest.mark.parametrize("rel", HOOKS_FILES)
def test_registered_commands_run_the_script_directly(rel):
    hooks = json.loads((REPO / rel).read_text())["hooks"]
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]
                if "briefing-preload" in h["command"]]
    assert commands
    for command in commands:
        argv = first_attempt(command)  # the fast path; hooks/briefing-python only after it failed
        assert argv[:4] == ["python3", "-I", "-S", "-B"], command
        assert argv[4].endswith("/hooks/briefing-preload"), command
        assert argv[5:] in ([], ["--part", argv[-1]]), command


def test_registered_run_is_the_in_process_run_and_writes_nothing(sandbox):
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["s1", "gone"]),
                  "project/.claude/agents/b.md": agent_md("b", ["s1"]),
                  "project/.claude/skills/s1/SKILL.md": skill_md("s1", "BODY-S1\n")})
    hooks = REPO / "hooks"
    before = snapshot(hooks)
    for payload, args in [(sb.guard("a"), ()), (sb.spawn("b"), ("--part", "1")),
                          (sb.spawn("b"), ("--part", "2")), (sb.spawn("a"), ("--part", "1"))]:
        assert launch(sb, hooks, payload, *args).stdout.decode() == sb.run(payload, args=args).out
    assert snapshot(hooks) == before


def test_registered_run_imports_the_shipped_bytecode(sandbox):
    """-v says where each module's code came from: the package's .pyc files, not its sources."""
    sb = sandbox({"project/.claude/agents/b.md": agent_md("b", ["s1"]),
                  "project/.claude/skills/s1/SKILL.md": skill_md("s1", "BODY-S1\n")})
    proc = launch(sb, REPO / "hooks", sb.spawn("b"), "--part", "1", flags=["-v"])
    err = proc.stderr.decode("utf-8", "replace")
    cached = [line for line in err.splitlines() if "code object from" in line and "/hooks/briefing/" in line]
    if not any(".pyc" in line for line in cached):
        pytest.skip("no shipped bytecode for %s" % HOOK_PYTHON)
    assert cached and all(line.rstrip("'").endswith(".pyc") for line in cached), "\n".join(cached)


def test_stale_bytecode_is_never_run(sandbox, tmp_path):
    """Change a module's source after its .pyc was made: the new source must run."""
    copy = tmp_path / "plugin" / "hooks"
    shutil.copytree(str(REPO / "hooks"), str(copy))
    module = copy / "briefing" / "rendering.py"
    source = module.read_text()
    marker = 'ABORT = (\n    "STOP.'
    assert marker in source
    module.write_text(source.replace(marker, 'ABORT = (\n    "HALTED-BY-NEW-SOURCE. STOP.'))
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["gone"])})
    before = snapshot(copy)
    out = launch(sb, copy, sb.spawn("a"), "--part", "1").stdout.decode()
    assert "HALTED-BY-NEW-SOURCE" in out
    assert snapshot(copy) == before


def test_registered_briefing_reads_back(sandbox):
    bodies = {"s%d" % i: ("line %d\n" % i) * 1500 for i in range(3)}
    files = {"project/.claude/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()}
    files["project/.claude/agents/big.md"] = agent_md("big", sorted(bodies))
    sb = sandbox(files)
    outs = [launch(sb, REPO / "hooks", sb.spawn("big"), "--part", str(i)).stdout.decode() for i in range(1, 9)]
    contexts = [json.loads(o)["hookSpecificOutput"]["additionalContext"] for o in outs if o]
    assert rebuild(contexts).skills == bodies


def test_the_hook_script_only_starts_the_package():
    """The one entry stays a few lines (the version gate, the path, gc, the exit): all code lives
    in the package, and so in its shipped bytecode. The gate cannot: it guards the package from
    a Python too old to run it (issue 36)."""
    code = [line for line in HOOK.read_text().split('"""', 2)[2].splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 24, code


@pytest.mark.parametrize("entry", ["bin/briefing-doctor", "hooks/briefing-preload"])
def test_no_entry_writes_bytecode_even_without_dash_b(sandbox, tmp_path, entry):
    """Run as a person runs it (no -B), with the shipped bytecode stale: nothing is written."""
    copy = tmp_path / "plugin"
    shutil.copytree(str(REPO / "hooks"), str(copy / "hooks"))
    shutil.copytree(str(REPO / "bin"), str(copy / "bin"))
    module = copy / "hooks" / "briefing" / "rules.py"
    module.write_text(module.read_text() + "\n# changed after the bytecode was built\n")
    sb = sandbox({"project/.claude/agents/a.md": agent_md("a", ["gone"])})
    before = snapshot(copy)
    args = ["--cwd", str(sb.project)] if entry.startswith("bin/") else ["doctor", "--cwd", str(sb.project)]
    proc = subprocess.run([HOOK_PYTHON, str(copy / entry)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=sb.env(), cwd=str(sb.project), timeout=30)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc  # the doctor found the problem
    assert snapshot(copy) == before
