"""Run the real Claude Code and Codex CLIs offline against a fake model server.

Each runner works in a folder of its own: a fresh HOME (and CODEX_HOME), a
git-initialised project, its own temp dirs. The CLI starts from an empty
environment plus the listed variables, in a new process group, under a hard
timeout; when it ends (or times out) the whole group it started is killed by
its id.
"""
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "scripts" / "setup-e2e"
MARKETPLACE = "briefing"  # the name in the repo's .agents/plugins/marketplace.json


class Missing(Exception):
    """The pinned CLIs are not installed."""


def installer_ready(installer):
    """Whether ``installer --check`` (scripts/setup-e2e or one of its setup-e2e.d installers) says
    that what it installs is there."""
    return subprocess.run(["bash", str(installer), "--check"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def cli_or_skip(find):
    """``find()`` (a runner's CLI lookup, which raises Missing), or skip the test without it: fail it
    where the e2e suite is required (``BRIEFING_E2E_REQUIRED=1``, as in CI)."""
    try:
        return find()
    except Missing as missing:
        message = "e2e: %s" % missing
        if os.environ.get("BRIEFING_E2E_REQUIRED") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message + " (set BRIEFING_E2E_REQUIRED=1 to make this an error)")


_BINARIES = None


def binaries():
    """(claude, codex, copilot, gemini) paths, or raise Missing: three native
    binaries and Gemini CLI's bundled script (run it with node)."""
    global _BINARIES
    if _BINARIES is None:
        if not installer_ready(SETUP):
            raise Missing("the pinned CLIs are not installed in %s; run scripts/setup-e2e"
                          % (REPO / ".e2e"))
        out = subprocess.run(["bash", str(SETUP)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             check=True).stdout.decode().split()
        _BINARIES = tuple(out[:4])
    return _BINARIES


class Proc:
    """The outcome of one CLI run."""

    def __init__(self, argv, rc, stdout, stderr, timed_out, seconds):
        self.argv = argv
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.seconds = seconds

    def __repr__(self):
        return "<rc=%s timed_out=%s %.1fs argv=%r\n--- stdout (tail) ---\n%s\n--- stderr (tail) ---\n%s>" % (
            self.rc, self.timed_out, self.seconds, self.argv, self.stdout[-4000:], self.stderr[-4000:])


def run_process(argv, env, cwd, timeout):
    """Run ``argv`` in its own process group; kill that group by id when done or on timeout."""
    start = time.monotonic()
    proc = subprocess.Popen([str(a) for a in argv], cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:  # something outside the group still holds the pipes
            proc.kill()
            proc.wait()
            out, err = b"", b"(output lost: pipes held open after the timeout)"
    finally:
        _kill_group(proc.pid)  # anything the CLI left behind in its group
    return Proc(argv, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                timed_out, time.monotonic() - start)


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def write_tree(root, files):
    """Write ``{relative path: text}`` under ``root``."""
    for rel, content in files.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def git_init(project, commit=False):
    project.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project),
           "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
    if commit:
        subprocess.run(["git", "-C", str(project), "-c", "user.name=e2e", "-c", "user.email=e2e@localhost",
                        "commit", "-q", "--allow-empty", "-m", "init"], check=True, env=env)


def _base_env():
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb"}
    for key in ("USER", "LOGNAME", "SHELL"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    env.setdefault("SHELL", "/bin/bash")
    return env


# --------------------------------------------------------------------------
# Claude Code
# --------------------------------------------------------------------------


class ClaudeResult(Proc):
    @property
    def events(self):
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def hook_responses(self, event=None):
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "hook_response"
                and (event is None or e.get("hook_event") == event)]

    @property
    def init(self):
        for e in self.events:
            if e.get("type") == "system" and e.get("subtype") == "init":
                return e
        return None

    @property
    def results(self):
        return [e for e in self.events if e.get("type") == "result"]


class CliMachine:
    """A fresh machine for one CLI: ``root/home`` is HOME, ``root/project`` a git project, ``root/tmp`` TMPDIR.

    A subclass names its binary (the index into binaries()), the folders it
    needs besides these, and its environment (``env()``).
    """

    binary_index = None
    cli_timeout = 60

    def __init__(self, root, server, extra_dirs=(), commit=False):
        self.root = Path(root)
        self.server = server
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.tmp = self.root / "tmp"
        for d in (self.home, self.tmp) + tuple(extra_dirs):
            d.mkdir(parents=True, exist_ok=True)
        git_init(self.project, commit=commit)
        self.binary = binaries()[self.binary_index]

    def write(self, files):
        write_tree(self.root, files)
        return self

    def cli(self, *args, timeout=None, cwd=None):
        """Run the CLI with ``args`` as given (nothing added)."""
        return run_process([self.binary] + list(args), self.env(), cwd or self.project,
                           timeout or self.cli_timeout)


class Claude(CliMachine):
    """A fresh machine for one Claude Code run: ``root/home`` is HOME, ``root/project`` the cwd."""

    binary_index = 0

    def __init__(self, root, server):
        self.cc_tmp = Path(root) / "cc-tmp"
        CliMachine.__init__(self, root, server, extra_dirs=(self.cc_tmp,))

    def env(self):
        env = _base_env()
        env.update({
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "CLAUDE_CODE_TMPDIR": str(self.cc_tmp),
            "ANTHROPIC_BASE_URL": self.server.url,
            "ANTHROPIC_API_KEY": "dummy",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        })
        return env

    def run(self, prompt, *args, plugin_dirs=(REPO,), timeout=90, cwd=None, debug=True):
        argv = [self.binary, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--include-hook-events"]
        for d in plugin_dirs:
            argv += ["--plugin-dir", str(d)]
        if debug:
            argv += ["--debug-file", str(self.root / "claude-debug.log")]
        argv += list(args)
        proc = run_process(argv, self.env(), cwd or self.project, timeout)
        result = ClaudeResult(proc.argv, proc.rc, proc.stdout, proc.stderr, proc.timed_out, proc.seconds)
        result.debug_log = self.root / "claude-debug.log"
        return result


# --------------------------------------------------------------------------
# Codex
# --------------------------------------------------------------------------

CONFIG = """\
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000

[analytics]
enabled = false
"""


class Codex(CliMachine):
    """A fresh machine for one Codex run with the plugin installed from a local marketplace.

    ``root/home`` is HOME, ``root/home/.codex`` CODEX_HOME (outside TMPDIR,
    which is ``root/tmp``), ``root/project`` a git repository with one commit.
    """

    binary_index = 1

    def __init__(self, root, server, marketplace=None):
        self.codex_home = Path(root) / "home" / ".codex"
        CliMachine.__init__(self, root, server, extra_dirs=(self.codex_home,), commit=True)
        (self.codex_home / "config.toml").write_text(CONFIG.format(url=server.url), encoding="utf-8")
        self.marketplace = marketplace

    def env(self):
        env = _base_env()
        proxy = self.server.url
        env.update({
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "TMPDIR": str(self.tmp),
            "FAKE_OPENAI_KEY": "dummy",
            "NO_COLOR": "1",
            "RUST_LOG": "warn",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        })
        for key in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
            env[key] = proxy
            env[key.lower()] = proxy
        return env

    def install(self, marketplace_dir, plugin="briefing", marketplace=MARKETPLACE):
        """Install ``plugin`` the way a user would: add the local marketplace, then the plugin."""
        added = self.cli("plugin", "marketplace", "add", str(marketplace_dir), timeout=60)
        assert added.rc == 0, added
        installed = self.cli("plugin", "add", "%s@%s" % (plugin, marketplace), "--json", timeout=60)
        assert installed.rc == 0, installed
        info = json.loads(installed.stdout[installed.stdout.index("{"):])
        return Path(info["installedPath"])

    @staticmethod
    def hooks_file(plugin_root):
        """The hooks file Codex reads for an installed copy: the one its manifest names, else hooks/hooks.json."""
        manifest = json.loads((Path(plugin_root) / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
        return Path(plugin_root) / (manifest.get("hooks") or "hooks/hooks.json")

    def edit_hooks(self, plugin_root, edit, path=None):
        """Change the installed copy's hooks file Codex reads: ``edit(data)`` mutates the parsed JSON."""
        path = Path(path or self.hooks_file(plugin_root))
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(data)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def log_hook_starts(self, plugin_root, log):
        """Make every handler in every hooks file of the installed copy log ``<file> <event>`` to ``log``
        as it starts: one line per process Codex starts, whichever file it read it from."""
        for path in sorted((Path(plugin_root) / "hooks").glob("*.json")):
            def edit(data, name=path.name):
                for event, groups in data.get("hooks", {}).items():
                    for group in groups:
                        for handler in group["hooks"]:
                            handler["command"] = "echo '%s %s' >> '%s'; %s" % (
                                name, event, log, handler["command"])
            self.edit_hooks(plugin_root, edit, path)
        return Path(log)

    def hooks_list(self, timeout=60):
        """Codex's own view of the hooks (``codex app-server``, method ``hooks/list``): the parsed result."""
        requests = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "e2e", "version": "1"}}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {}},
        ]
        proc = subprocess.Popen([self.binary, "app-server"], cwd=str(self.project), env=self.env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        killer = threading.Timer(timeout, _kill_group, [proc.pid])  # a blocked read ends with the group
        killer.start()
        try:
            for request in requests:
                proc.stdin.write((json.dumps(request) + "\n").encode())
                proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if message.get("id") == 2:
                    return message.get("result")
            raise AssertionError("codex app-server gave no hooks/list answer")
        finally:
            killer.cancel()
            _kill_group(proc.pid)
            proc.wait()

    def tee_hook_output(self, plugin_root, event, logdir):
        """Make every ``event`` handler of the installed copy also write its stdout to ``logdir``.

        ``codex exec`` prints no systemMessage, so a test reads the hook's own
        output from these files. The handler's stdout still goes to Codex.
        """
        logdir = Path(logdir)
        logdir.mkdir(parents=True, exist_ok=True)

        def edit(data):
            for i, group in enumerate(data["hooks"].get(event, [])):
                for j, handler in enumerate(group["hooks"]):
                    out = logdir / ("%s-%d-%d.out" % (event, i, j))
                    handler["command"] = "{ %s; } | tee '%s'" % (handler["command"], out)  # the whole command
        self.edit_hooks(plugin_root, edit)
        return logdir

    def run(self, prompt, *args, timeout=90, cwd=None, bypass_hook_trust=True):
        cwd = Path(cwd or self.project)
        trust = 'projects={%s={trust_level="trusted"}}' % json.dumps(str(self.project))
        bypass = ["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []
        argv = [self.binary, "exec"] + bypass + ["-c", trust] + list(args) + [prompt]
        return run_process(argv, self.env(), cwd, timeout)


def copy_plugin(src, dest):
    """Copy a plugin checkout as a fresh clone would have it: no VCS data, virtualenv, caches or CLIs."""
    src = Path(src)
    skip_top = {".git", ".venv", ".e2e", ".pytest_cache"}

    def ignore(folder, names):
        rel = Path(folder).resolve().relative_to(src.resolve())
        out = {n for n in names if n in ("__pycache__", ".pytest_cache") or n.endswith(".pyc")}
        if rel == Path("."):
            out |= skip_top & set(names)
        if rel == Path("bench"):
            out |= {"results"} & set(names)
        return out

    shutil.copytree(str(src), str(dest), symlinks=True, ignore=ignore)
    return Path(dest)


def tracked_copy(src, dest):
    """Copy the files git tracks in ``src`` (working-tree content): what a fresh clone holds.

    Untracked local files (notes, editor files) are left out. Falls back to
    ``copy_plugin`` when ``src`` is not a git checkout.
    """
    src, dest = Path(src), Path(dest)
    listed = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "--cached"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    names = [n for n in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    if listed.returncode != 0 or not names:
        return copy_plugin(src, dest)
    for name in names:
        source = src / name
        target = dest / name
        if not os.path.lexists(str(source)):
            continue  # deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(str(source)), str(target))
        else:
            shutil.copy2(str(source), str(target))
    return dest
