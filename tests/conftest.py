"""Shared fixtures: one sandbox that builds HOME and a project from a dict,
and one runner that runs the hook as a harness would.

Most runs are in-process: the hook's own ``main()`` (its package, imported
once: its modules keep nothing between runs), with stdin, stdout, stderr,
argv, the environment and the working directory swapped for the run. That is the code path of a
harness's subprocess (argument parsing, stdin decoding, dispatch, the
catch-all) at a small fraction of the cost. What only a process can show goes
through a real one: a test that names an interpreter (``python=``) or another
program, the bytecode tests, the commands exactly as hooks.json registers them. ``BRIEFING_TEST_SUBPROCESS=1`` sends every run through a
process (the slow, literal mode).

The hook runs on the interpreter that runs pytest: ``scripts/test`` runs the
suite on the oldest and the newest interpreter.
``BRIEFING_TEST_PYTHON`` picks the interpreter of the subprocess runs.
"""
import contextlib
import gc
import importlib
import io
import json
import os
import pkgutil
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

import pytest

from ends import ENDS, pytest_runtestloop  # noqa: F401  (scripts/test's two processes: tests/ends.py)

# pytest rewrites the asserts of each test module as it imports it (about a second per test
# process here) and keeps the result only where bytecode may be written. It may here, but only
# under a cache folder of the tests' own: never beside a source, because the hook's __pycache__
# is shipped as scripts/build-bytecode writes it. (The hook's real processes run with -I -B.)
sys.pycache_prefix = os.path.join(tempfile.gettempdir(), "briefing-test-bytecode")
sys.dont_write_bytecode = False

REPO = Path(__file__).resolve().parent.parent
HOOKS_DIR = REPO / "hooks"
HOOK = HOOKS_DIR / "briefing-preload"
PACKAGE = HOOKS_DIR / "briefing"
DOCTOR_LINK = REPO / "bin" / "briefing-doctor"
HOOK_PYTHON = os.environ.get("BRIEFING_TEST_PYTHON") or sys.executable
ALWAYS_SUBPROCESS = os.environ.get("BRIEFING_TEST_SUBPROCESS") == "1"
HOOKS_JSON = json.loads((REPO / "hooks" / "hooks.json").read_text())
PARTS = len(HOOKS_JSON["hooks"]["SubagentStart"][0]["hooks"])
# The interpreter flags of the registered commands (python3 FLAGS .../briefing-preload [--part N]).
_GUARD = shlex.split(HOOKS_JSON["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
REGISTERED_FLAGS = _GUARD[1:[i for i, arg in enumerate(_GUARD) if arg.endswith("/briefing-preload")][0]]
# Claude Code cuts any single hook output over this many characters to a preview.
CLAUDE_OUTPUT_LIMIT = 10000


class Symlink:
    """A sandbox entry that is a symbolic link to ``target`` (taken verbatim)."""

    def __init__(self, target):
        self.target = target


class Fifo:
    """A sandbox entry that is a named pipe."""


DIR = object()  # a sandbox entry that is an empty directory


def skill_md(name, body, description=None):
    """A SKILL.md text with frontmatter; ``body`` is what the agent must receive."""
    return "---\nname: %s\ndescription: %s\n---\n%s" % (
        name, description or "Use when the %s skill is needed." % name, body)


def agent_md(name, skills=None, native=None, body="You are a test agent.\n", extra=""):
    """A Claude Code agent file. ``skills`` goes under ``briefing:``; ``native`` is ``skills:``."""
    lines = ["---", "name: %s" % name, "description: test agent %s" % name]
    if native is not None:
        lines.append("skills:")
        lines.extend("  - %s" % s for s in native)
    if skills is not None:
        lines.append("briefing:")
        lines.append("  skills:")
        lines.extend("    - %s" % s for s in skills)
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n" + body


def role_toml(name, skills=None, extra="", instructions="You are a test role."):
    """A Codex role file, declaring ``skills`` in the comment form."""
    lines = []
    if skills is not None:
        lines.append("# briefing: skills = [%s]" % ", ".join(json.dumps(s) for s in skills))
    lines.append("name = %s" % json.dumps(name))
    lines.append('description = "test role %s"' % name)
    lines.append("developer_instructions = %s" % json.dumps(instructions))
    if extra:
        lines.append(extra.rstrip("\n"))
    return "\n".join(lines) + "\n"


def hook_package():
    """The hook's package ``briefing``, imported once per test process from hooks/.

    Its modules hold no state between runs (each run builds its own Machine), so one
    import serves every in-process run, as one process serves one run.
    """
    if str(HOOKS_DIR) not in sys.path:
        sys.path.insert(0, str(HOOKS_DIR))
    with no_bytecode():
        import briefing.main  # noqa: F401
    return sys.modules["briefing"]


@contextlib.contextmanager
def no_bytecode():
    """Imports of the hook's modules write no bytecode; only for them, not for the whole process:
    pytest caches the test modules it rewrites only while bytecode may be written (see the top),
    and a test module collected after the first import of the hook would be rewritten on every run."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


def package_modules():
    """Every module of the package, imported: the core modules, then each harness module."""
    package = hook_package()
    names = ["briefing." + m.name for m in pkgutil.iter_modules([str(PACKAGE)])]
    names += ["briefing.harnesses." + m.name for m in pkgutil.iter_modules([str(PACKAGE / "harnesses")])]
    with no_bytecode():
        return [package] + [importlib.import_module(name) for name in names]


class HookView:
    """All the package's names as one namespace (``hook.parse_frontmatter``, ``hook.Machine``),
    for tests of its functions. A name is looked up in the module that defines it; to swap one
    for a test, patch it where it is used (``monkeypatch.setattr(module, name, ...)``)."""

    def __init__(self):
        self._modules = package_modules()

    def __getattr__(self, name):
        for module in self._modules:
            if name in vars(module) and name != "HARNESS":
                return vars(module)[name]
        raise AttributeError(name)

    def modules_using(self, name):
        """The modules in which ``name`` is bound: where a test must patch it."""
        return [m for m in self._modules if name in vars(m)]

    def count_reads(self, monkeypatch):
        """The list of paths every ``read_text`` call reads from now on, in order (for cost tests)."""
        reads, real = [], self.read_text

        def counting(path, *args, **kwargs):
            reads.append(path)
            return real(path, *args, **kwargs)

        for module in self.modules_using("read_text"):
            monkeypatch.setattr(module, "read_text", counting)
        return reads


def load_hook(module_name=None):
    """The hook's package as one namespace, for in-process tests; no bytecode is written."""
    return HookView()


def package_files(prefix):
    """{sandbox path: bytes} of the hook's package, under ``prefix`` (a copied plugin's hooks/)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        out["%s/briefing/%s" % (prefix, path.relative_to(PACKAGE).as_posix())] = path.read_bytes()
    return out


def text_of(tag, size):
    """A skill body of exactly ``size`` characters, distinct per ``tag``, ending in a newline."""
    chunks, total, i = [], 0, 0
    while total < size:
        line = "%s line %06d: follow the procedure step by step and check every result.\n" % (tag, i)
        chunks.append(line)
        total += len(line)
        i += 1
    text = "".join(chunks)[:size - 1] + "\n"
    assert len(text) == size
    return text


def skills_files(bodies, where="project/.claude/skills/%s/SKILL.md"):
    """SKILL.md files for {name: body}."""
    return {where % name: skill_md(name, body) for name, body in bodies.items()}


class Result:
    def __init__(self, rc, out, err, argv):
        self.rc = rc
        self.out = out
        self.err = err
        self.argv = argv
        try:
            self.data = json.loads(self.out) if self.out.strip() else None
        except ValueError:
            self.data = None

    def __repr__(self):
        return "<rc=%s argv=%r\n--- stdout ---\n%s\n--- stderr ---\n%s>" % (
            self.rc, self.argv, self.out, self.err)

    @property
    def context(self):
        """hookSpecificOutput.additionalContext, or None."""
        hso = (self.data or {}).get("hookSpecificOutput") or {}
        return hso.get("additionalContext")

    @property
    def flat_context(self):
        """The top-level additionalContext (Copilot CLI's shape), or None."""
        return (self.data or {}).get("additionalContext")

    @property
    def system_message(self):
        return (self.data or {}).get("systemMessage")

    @property
    def decision(self):
        hso = (self.data or {}).get("hookSpecificOutput") or {}
        return hso.get("permissionDecision")

    @property
    def reason(self):
        hso = (self.data or {}).get("hookSpecificOutput") or {}
        return hso.get("permissionDecisionReason")


_IN_PROCESS = threading.Lock()  # os.environ, the cwd and sys.std* belong to the whole process


class HookTimeout(BaseException):
    """A run took longer than its timeout; BaseException, so the hook's catch-all cannot swallow it."""


def run_in_process(program, args, stdin, env, cwd, timeout):
    """Run the hook's ``main()`` here, as ``python3 PROGRAM ARGS`` would with this stdin, env and cwd.

    ``sys.argv[0]`` is PROGRAM, from which the hook finds its plugin root. An
    exception that escapes ``main()`` is reported as a process would report it:
    rc 1 and a traceback on stderr. ``PYTHONPATH`` in ``env`` is honoured for
    imports made during the run (the tomllib shim of the Codex tests).
    """
    main = hook_package().main.main
    out, err = io.BytesIO(), io.BytesIO()
    with _IN_PROCESS, no_bytecode():  # what a run imports lazily writes none either
        # The hook reads its environment only through os.environ (it starts no process), so a
        # plain dict stands in for the run: no putenv for each of dozens of variables, twice a run.
        saved = (os.environ, os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr,
                 list(sys.path), sys.modules.pop("tomllib", None))
        timer = threading.current_thread() is threading.main_thread() and timeout
        old_handler = None
        try:
            os.environ = dict(env)
            os.chdir(cwd)
            extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            sys.path[:0] = extra
            sys.argv = [str(program)] + list(args)
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
            sys.stdout = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=True)
            sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                                          newline="\n", write_through=True)
            if timer:
                def expire(signum, frame):
                    raise HookTimeout("no answer within %s s" % timeout)
                old_handler = signal.signal(signal.SIGALRM, expire)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                rc = main(list(args))
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except HookTimeout:
                raise subprocess.TimeoutExpired(["in-process", str(program)] + list(args), timeout)
            except BaseException:
                sys.stderr.write(traceback.format_exc())
                rc = 1
            rc = 0 if rc is None else rc
        finally:
            if timer:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old_handler or signal.SIG_DFL)
            for stream in (sys.stdin, sys.stdout, sys.stderr):
                try:  # detach, so that dropping the wrapper does not close the buffer under it
                    stream.flush()
                    stream.detach()
                except Exception:
                    pass
            environ, old_cwd, sys.argv, sys.stdin, sys.stdout, sys.stderr, path, tomllib = saved
            os.environ = environ
            os.chdir(old_cwd)
            sys.path[:] = path
            sys.modules.pop("tomllib", None)
            if tomllib is not None:
                sys.modules["tomllib"] = tomllib
    return Result(rc, out.getvalue().decode("utf-8", "replace"),
                  err.getvalue().decode("utf-8", "replace"), ["in-process", str(program)] + list(args))


def _put(path, content):
    if isinstance(content, Symlink):
        os.symlink(content.target, path)
    elif isinstance(content, Fifo):
        os.mkfifo(path)
    elif content is DIR:
        os.makedirs(path, exist_ok=True)
    else:
        with open(path, "wb") as handle:
            handle.write(content if isinstance(content, bytes) else content.encode("utf-8"))


def is_hook_copy(program):
    """Whether ``program`` is a copy of the hook (in a copied plugin): it runs in-process too,
    with its own ``__file__``, so that it finds its own plugin root as the copy would."""
    try:
        return os.path.basename(str(program)) == "briefing-preload" and \
            Path(program).read_bytes() == HOOK.read_bytes()
    except OSError:
        return False


def registered_command(program, env):
    """How a harness starts ``program`` (after the interpreter): a hook script with the flags
    hooks.json gives it, as every registered command does.

    So a process run tests the shipped path (checked bytecode, no site). ``-I`` would drop
    ``PYTHONPATH``, which a test sets only to put a module in the hook's way: then only
    ``-S -B``. Anything else (``bin/briefing-doctor``, as a person runs it) is started directly.
    """
    if os.path.basename(str(program)) != "briefing-preload":
        return [str(program)]
    flags = [f for f in REGISTERED_FLAGS if f != "-I"] if env.get("PYTHONPATH") else REGISTERED_FLAGS
    return flags + [str(program)]


class Sandbox:
    """A fake machine: ``root/home`` is HOME, ``root/project`` the project (a git repo).

    ``files`` maps paths relative to ``root`` ("home/.claude/agents/a.md",
    "project/.codex/agents/r.toml", ...) to str, bytes, Symlink, Fifo or DIR.
    """

    def __init__(self, root):
        self.root = Path(root)
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.codex_home = self.home / ".codex"
        self.home.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(parents=True, exist_ok=True)
        self.extra_env = {}

    def write(self, files):
        root = str(self.root)
        for rel, content in files.items():
            path = os.path.join(root, rel)
            try:
                _put(path, content)
            except FileNotFoundError:  # its folder is not there yet: made only then, for speed
                os.makedirs(os.path.dirname(path), exist_ok=True)
                _put(path, content)
        return self

    def path(self, rel):
        return self.root / rel

    def env(self, **overrides):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
        }
        env.update(self.extra_env)
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def transcript(self, harness):
        if harness == "codex":
            return str(self.codex_home / "sessions" / "2026" / "11" / "30" / "rollout-x.jsonl")
        if harness == "qwen":
            return str(self.home / ".qwen" / "projects" / "-project" / "chats" / "s-1.jsonl")
        return str(self.home / ".claude" / "projects" / "-project" / "s.jsonl")

    def copilot_env(self, plugin_root=None, **overrides):
        """The variables Copilot CLI 1.0.102 sets for a plugin hook (copilot-cli.md fact 17)."""
        root = str(plugin_root or REPO)
        env = {"COPILOT_CLI": "1", "COPILOT_CLI_BINARY_VERSION": "1.0.102",
               "COPILOT_HOME": str(self.home / ".copilot"),
               "COPILOT_PROJECT_DIR": str(self.project), "CLAUDE_PROJECT_DIR": str(self.project),
               "PLUGIN_ROOT": root, "COPILOT_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_ROOT": root,
               "COPILOT_HOOK_DIR": os.path.join(root, "hooks")}
        env.update(overrides)
        return env

    def qwen_env(self, **overrides):
        """The variables Qwen Code 0.24.4 sets for a hook (qwen-code.md §1): the project three
        times over, QWEN_CODE_* (its shell tool sets those too), no CLAUDE_PLUGIN_ROOT."""
        env = {"QWEN_PROJECT_DIR": str(self.project), "CLAUDE_PROJECT_DIR": str(self.project),
               "GEMINI_PROJECT_DIR": str(self.project), "QWEN_CODE_SESSION_ID": "s-1",
               "QWEN_CODE_AGENT_ID": "", "QWEN_CODE_MODEL": "fake-model", "QWEN_CODE_CLI": "",
               "QWEN_CODE_PROJECT_DIR": str(self.home / ".qwen" / "projects" / "-project")}
        env.update(overrides)
        return env

    def payload(self, event, harness="claude", **fields):
        """A payload shaped like the real one for ``event`` from ``harness``."""
        if harness == "copilot":
            return self.copilot_payload(event, **fields)
        data = {
            "session_id": "s-1",
            "transcript_path": self.transcript(harness),
            "cwd": str(self.project),
            "hook_event_name": event,
        }
        if harness == "codex":
            data.update(model="fake-model", permission_mode="bypassPermissions")
            if event != "SessionStart":
                data["turn_id"] = "t-1"
        if harness == "qwen":
            data.update(timestamp="2026-12-03T11:14:18.343Z", permission_mode="yolo")
            data.update(dict(source="startup", model="fake-model") if event == "SessionStart" else
                        dict(prompt_id="s-1########0"))
        data.update(fields)
        return data

    def copilot_payload(self, event, **fields):
        """Copilot CLI's payloads for a Claude-format hooks file (copilot-cli.md fact 13).

        SubagentStart is a hybrid: camelCase keys plus agent_id, agent_type and
        parent_agent_id, and no hook_event_name. The others are snake_case with
        hook_event_name and an ISO timestamp, and no transcript_path.
        """
        if event == "SubagentStart":
            data = {"sessionId": "s-1", "timestamp": 1796109848430, "cwd": str(self.project),
                    "transcriptPath": str(self.home / ".copilot" / "session-state" / "s-1" / "events.jsonl"),
                    "agentDisplayName": "", "agentDescription": "test agent", "agent_id": "a1",
                    "parent_agent_id": "s-1"}
            data.update(fields)
            data.setdefault("agentName", data.get("agent_type"))
            return data
        data = {"hook_event_name": event, "session_id": "s-1", "timestamp": "2026-12-01T07:24:08.339Z",
                "cwd": str(self.project)}
        if event == "SessionStart":
            data.update(source="new", initial_prompt="go")
        data.update(fields)
        return data

    def spawn(self, agent_type, harness="claude", **fields):
        agent_id = "%s-call_1" % agent_type if harness == "qwen" else "a1"
        return self.payload("SubagentStart", harness, agent_id=agent_id, agent_type=agent_type, **fields)

    def guard(self, subagent_type, harness="claude", **fields):
        if harness == "copilot":
            tool_input = {"agent_type": subagent_type, "description": "d", "prompt": "p",
                          "name": "sub", "mode": "sync"}
            return self.payload("PreToolUse", "copilot", tool_name="Agent", tool_input=tool_input, **fields)
        if harness == "qwen":
            tool_input = {"description": "d", "prompt": "p", "subagent_type": subagent_type,
                          "run_in_background": False}
            return self.payload("PreToolUse", "qwen", tool_name="agent", tool_input=tool_input,
                                tool_use_id="toolu_1", tool_call_id="call_1", **fields)
        if harness == "codex":
            tool_input = {"agent_type": subagent_type, "message": "do it"}
            return self.payload("PreToolUse", "codex", tool_name="spawn_agent",
                                tool_input=tool_input, tool_use_id="call_1", **fields)
        tool_input = {"description": "d", "prompt": "p", "subagent_type": subagent_type}
        return self.payload("PreToolUse", "claude", tool_name="Agent", tool_input=tool_input,
                            tool_use_id="toolu_1", permission_mode="default", **fields)

    def run(self, payload=None, args=(), stdin=None, env=None, cwd=None, check=True,
            python=None, program=None, timeout=30):
        """Run the hook (or ``program``) as a harness would; ``check`` asserts the hook contract."""
        program = program or HOOK
        if stdin is None:
            stdin = json.dumps(payload) if payload is not None else ""
        if isinstance(stdin, str):
            stdin = stdin.encode("utf-8")
        run_env, run_cwd = self.env(**(env or {})), str(cwd or self.project)
        if python is None and not ALWAYS_SUBPROCESS and (program in (HOOK, DOCTOR_LINK) or is_hook_copy(program)):
            result = run_in_process(program, [str(a) for a in args], stdin, run_env, run_cwd, timeout)
        else:
            argv = [python or HOOK_PYTHON] + registered_command(program, run_env) + [str(a) for a in args]
            proc = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=run_env, cwd=run_cwd, timeout=timeout)
            result = Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                            proc.stderr.decode("utf-8", "replace"), argv)
        if check:
            assert result.rc == 0, result
            assert "Traceback" not in result.err, result
        return result

    def run_parts(self, payload, parts=None, **kwargs):
        """Run every registered SubagentStart/SessionStart handler; returns their Results."""
        return [self.run(payload, args=("--part", i), **kwargs) for i in range(1, (parts or PARTS) + 1)]

    def doctor(self, *args, via_link=False, **kwargs):
        """Run the doctor: through bin/briefing-doctor, or as ``briefing-preload doctor``."""
        if via_link:
            return self.run(stdin="", args=args, program=DOCTOR_LINK, check=False, **kwargs)
        return self.run(stdin="", args=("doctor",) + tuple(args), check=False, **kwargs)


def build_gemini_extension(out):
    """``scripts/build-gemini-extension OUT``: (the extension folder, the release archive)."""
    proc = subprocess.run([HOOK_PYTHON, str(REPO / "scripts" / "build-gemini-extension"), str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc
    # the next step, printed last (issue 44)
    assert proc.stdout.splitlines()[-1] == "next: gemini extensions install %s --consent" % (out / "briefing"), proc
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    return out / "briefing", out / ("briefing-gemini-%s.tar.gz" % version)


def once_per_run(tmp_path_factory, name, make):
    """``make(folder)`` once for the whole run, whichever process of it asks first (one of two
    ends, or a pytest-xdist worker); the others wait for it and share the folder (a build
    compiles the package with every interpreter: seconds of CPU per process, for the same
    files). Returns ``folder``."""
    import fcntl
    root = tmp_path_factory.getbasetemp()
    if ENDS:
        root = Path(ENDS.rpartition(":")[0])  # the folder the two ends share
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's own folder, above each worker's
    folder, done = root / name, root / (name + ".done")
    with open(str(root / (name + ".lock")), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            if folder.exists():
                shutil.rmtree(str(folder))  # a worker that failed half-way
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def gemini_build(tmp_path_factory):
    """One build of the Gemini extension per run, for the tests that only read it
    (a test that changes it works on a copy)."""
    out = once_per_run(tmp_path_factory, "gemini-out", build_gemini_extension)
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    return out / "briefing", out / ("briefing-gemini-%s.tar.gz" % version)


def pytest_collection_finish(session):
    """The cyclic garbage collector of a test process: what collection built (thousands of test
    items, the imported modules) lives until the end, yet every full collection walked all of it
    again, and the default threshold (700 allocations) ran one about every 80 tests: 4.7 CPU s of
    a run. Frozen, and collections made rarer (docs/testing.md, "Where the time went"). Only this
    process's: the hook's own processes keep the interpreter's defaults, and no run depends on
    when a cycle is freed."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10000, 10, 10)


_PASSED = pytest.StashKey()  # {"setup": passed, "call": passed} of a test, for sandbox_folder


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    item.stash.setdefault(_PASSED, {})[report.when] = report.passed


_HELD = {}  # name prefix -> the numbers of its folders this process has not removed (or found taken)


@pytest.fixture
def sandbox_folder(request, tmp_path_factory):
    """A fresh folder for one test, named as ``tmp_path`` names it (the test's name, then the
    lowest free number: paths as long as before) and kept or removed by the same
    ``tmp_path_retention_policy`` (``scripts/test``: only a failed test's folder is kept).

    The number comes from what this process made and removed, not as ``tmp_path`` finds it: it
    lists the whole base folder for each test, which a run of thousands of sandboxes pays for
    again and again (docs/testing.md, "Where the time went")."""
    prefix = re.sub(r"[\W]", "_", request.node.name)[:30]
    held, number = _HELD.setdefault(prefix, set()), 0
    while True:
        if number not in held:
            folder = tmp_path_factory.getbasetemp() / ("%s%d" % (prefix, number))
            try:
                folder.mkdir()
                break
            except FileExistsError:  # tmp_path's, or a kept one of an earlier test of that name
                pass
        held.add(number)
        number += 1
    held.add(number)
    yield folder
    policy = request.config.getini("tmp_path_retention_policy")
    if policy == "none" or (policy == "failed" and request.node.stash.get(_PASSED, {}).get("call", True)):
        shutil.rmtree(str(folder), ignore_errors=True)
        held.discard(number)


@pytest.fixture
def sandbox(sandbox_folder):
    """Build a sandbox; call it with a dict of files: ``sb = sandbox({...})``."""
    made = Sandbox(sandbox_folder)

    def build(files=None):
        return made.write(files or {})

    build.box = made
    return build
