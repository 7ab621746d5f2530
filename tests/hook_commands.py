"""The commands the hooks files register, read from the files, and running them as a harness does.

Every hooks file's briefing command is written by scripts/hook-commands from one
template (a fast path, ``python3 … briefing-preload [--part N]``, then ``|| /bin/sh
… briefing-python $? [--part N]``); tests take the commands from the files, never
from a copy of the template. ``run_registered`` runs one under a shell exactly as the
harness would, with the placeholder replaced, and a PATH on which ``python3`` is the
interpreter under test.
"""
import atexit
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLACEHOLDERS = ("${CLAUDE_PLUGIN_ROOT}", "${extensionPath}")
HOOKS_FILES = ["hooks/hooks.json", "hooks/hooks.codex.json", "hooks/hooks.copilot.json",
               "gemini/hooks/hooks.json", "qwen/hooks/hooks.json"]
GEMINI_PREFIX = 'set "\\" <#"; '


def script_module(name):
    """``scripts/<name>`` (a script without a .py suffix) imported as a module."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader
    loader = SourceFileLoader(name.replace("-", "_") + "_script", str(REPO / "scripts" / name))
    module = module_from_spec(spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


# scripts/hook-commands's DROID_GATES: the shell tests hooks/hooks.json puts in front of a command
# that one of its two readers (Claude Code, Factory Droid) skips (docs/factory-droid.md).
DROID_GATES = tuple(script_module("hook-commands").DROID_GATES.values())


def briefing_handlers(path):
    """[(event, matcher, handler)] of every briefing handler in the hooks file at ``path``."""
    hooks = json.loads(Path(path).read_text(encoding="utf-8"))["hooks"]
    return [(event, group.get("matcher"), h) for event, groups in hooks.items() for group in groups
            for h in group["hooks"] if "briefing-preload" in h.get("command", "")]


def posix_command(handler):
    """What a POSIX shell runs for this handler: Copilot CLI prefers ``bash`` to ``command`` (measured)."""
    return handler.get("bash") or handler["command"]


def substituted(command, root):
    for placeholder in PLACEHOLDERS:
        command = command.replace(placeholder, str(root))
    return command


def posix_part(command):
    """The POSIX half of a command (Gemini CLI's runs both in bash and in PowerShell)."""
    if command.startswith(GEMINI_PREFIX):
        return command[len(GEMINI_PREFIX):].split("; #> ", 1)[0]
    for gate in DROID_GATES:
        if command.startswith(gate):
            return command[len(gate):]
    return command


def first_attempt(command):
    """The words of the fast path: everything before ``||``."""
    words = shlex.split(posix_part(command))
    return words[:words.index("||")] if "||" in words else words


_DIRS = {}


def python_dir(python):
    """A folder whose ``python3`` is ``python`` (a link), one per interpreter and test process:
    put first on PATH for a registered run; removed when the process ends."""
    if python not in _DIRS:
        folder = Path(tempfile.mkdtemp(prefix="briefing-python3-"))
        atexit.register(shutil.rmtree, str(folder), True)
        os.symlink(str(python), str(folder / "python3"))
        _DIRS[python] = folder
    return _DIRS[python]


def run_registered(command, root, payload, env, cwd, python, shell="/bin/sh", timeout=30, droid=False):
    """Run a registered command under ``shell -c`` with ``python`` as python3 (first on PATH);
    ``droid``: as Factory Droid runs it, which substitutes ``${DROID_PLUGIN_ROOT}`` too."""
    env = dict(env)
    if droid:
        command = command.replace("${DROID_PLUGIN_ROOT}", str(root))
    env["PATH"] = str(python_dir(python)) + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([shell, "-c", substituted(command, root)], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=str(cwd), timeout=timeout)
