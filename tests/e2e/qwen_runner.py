"""Run the real Qwen Code CLI offline against the fake chat-completions server (fake_qwen.py).

Qwen Code is installed by ``scripts/setup-e2e.d/qwen`` into ``.e2e/qwen/`` (its own
folder; a Node.js script). briefing goes in as the README says: the extension built
by ``scripts/build-qwen-extension``, installed with ``qwen extensions install
OUT/briefing --consent``, once per test process into a template HOME that each run
copies. Every run gets a fresh HOME and project and the ``openai`` auth type pointed
at the loopback fake (OPENAI_BASE_URL), under a hard timeout (runners.run_process).
"""
import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from runners import REPO, Missing, git_init, installer_ready, run_process, write_tree

INSTALLER = REPO / "scripts" / "setup-e2e.d" / "qwen"
QWEN_JS = REPO / ".e2e" / "qwen" / "node_modules" / "@qwen-code" / "qwen-code" / "cli.js"
SETTINGS = {"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "fake-model"}}

_TEMPLATE = None


def qwen_cli():
    """The path of Qwen Code's cli.js, or raise Missing."""
    if not installer_ready(INSTALLER):
        raise Missing("Qwen Code 0.24.4 is not installed in %s; run scripts/setup-e2e" % INSTALLER.parent)
    return QWEN_JS


def base_env(home):
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "TMPDIR": str(Path(home) / "tmp"), "NO_COLOR": "1", "CI": "1"}


def installed_home():
    """A HOME with briefing installed as the README says (built, then ``qwen extensions install``)."""
    global _TEMPLATE
    if _TEMPLATE is None:
        root = Path(tempfile.mkdtemp(prefix="briefing-qwen-template-"))
        atexit.register(shutil.rmtree, str(root), True)  # made once per test process, gone with it
        subprocess.run([os.environ.get("BRIEFING_TEST_PYTHON") or "python3",
                        str(REPO / "scripts" / "build-qwen-extension"), str(root / "out")],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        home = root / "home"
        (home / "tmp").mkdir(parents=True)
        write_tree(home, {".qwen/settings.json": json.dumps(SETTINGS)})
        proc = run_process(["node", qwen_cli(), "extensions", "install", root / "out" / "briefing", "--consent"],
                           base_env(home), home, 120)
        assert proc.rc == 0 and (home / ".qwen" / "extensions" / "briefing" / "hooks" / "hooks.json").is_file(), proc
        _TEMPLATE = home
    return _TEMPLATE


class QwenRun:
    """One fresh HOME (briefing installed) and project, and how to run ``qwen -p`` there."""

    def __init__(self, tmp_path, files=None, installed=True):
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        if installed:
            shutil.copytree(str(installed_home()), str(self.home), symlinks=True)
        else:  # a HOME where the test installs whatever it installs itself
            (self.home / "tmp").mkdir(parents=True)
            write_tree(self.home, {".qwen/settings.json": json.dumps(SETTINGS)})
        git_init(self.project)
        self.write(files or {})

    def write(self, files):
        """``{path: text}``, paths starting ``home/`` or ``project/``."""
        write_tree(self.home.parent, files)

    def run(self, server, prompt, timeout=180, *extra):
        env = base_env(self.home)
        env.update(OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="e2e-dummy", OPENAI_MODEL="fake-model")
        return run_process(["node", qwen_cli(), "-p", prompt, "--approval-mode", "yolo", "--output-format", "json"]
                           + list(extra), env, self.project, timeout)
