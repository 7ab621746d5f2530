"""Run the real Factory Droid CLI offline against the fake Anthropic server (fakes.FakeAnthropic).

Droid is installed by ``scripts/setup-e2e.d/droid`` into ``.e2e/droid/`` (the platform binary is
run directly). briefing goes in as docs/factory-droid.md says: ``droid plugin marketplace add
<clone>`` and ``droid plugin install briefing@<key>``, once per test process into a template
HOME that each run copies. Every run gets a fresh HOME and project; the model is a BYOK
``customModels`` entry on the loopback fake, in airgap mode, with the one other call Droid makes
(``FACTORY_API_BASE_URL``) on loopback too (shared/facts/factory-droid.md §1).
"""
import atexit
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from fakes import FakeAnthropic, block_text
from runners import REPO, Missing, git_init, installer_ready, run_process, tracked_copy, write_tree

INSTALLER = REPO / "scripts" / "setup-e2e.d" / "droid"
DROID = REPO / ".e2e" / "droid" / "node_modules" / "@factory" / "cli-linux-x64" / "bin" / "droid"
MODEL = "fake-model"

_TEMPLATE = None


def droid_cli():
    if not installer_ready(INSTALLER):
        raise Missing("Droid 0.225.2 is not installed in %s; run scripts/setup-e2e" % INSTALLER.parent)
    return DROID


def base_env(home):
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "TMPDIR": str(Path(home) / "tmp"), "NO_COLOR": "1", "CI": "1",
            "FACTORY_AIRGAP_ENABLED": "1", "FACTORY_API_BASE_URL": "http://127.0.0.1:9"}


def installed_home():
    """A HOME with briefing installed the documented way, from a git clone of this checkout
    (Droid's marketplace key for a local path is the folder's name: ``briefing``)."""
    global _TEMPLATE
    if _TEMPLATE is None:
        root = Path(tempfile.mkdtemp(prefix="briefing-droid-template-"))
        atexit.register(shutil.rmtree, str(root), True)  # made once per test process, gone with it
        clone = root / "briefing"
        tracked_copy(REPO, clone)
        git_init(clone, commit=True)
        home = root / "home"
        (home / "tmp").mkdir(parents=True)
        for argv in (["plugin", "marketplace", "add", clone], ["plugin", "install", "briefing@briefing"]):
            proc = run_process([droid_cli()] + argv, base_env(home), home, 120)
            assert proc.rc == 0, proc
        _TEMPLATE = home
    return _TEMPLATE


class DroidRequest(FakeAnthropic.request_class):
    @property
    def is_summary(self):
        """A compaction's summary request: the only one Droid sends without tools (measured)."""
        return not self.has_tools

    @property
    def is_subagent(self):
        return not self.is_summary and "# Task Tool Invocation" in self.all_text

    @property
    def droid(self):
        match = re.search(r"# Task Tool Invocation\n\nSubagent type: ([^\n]+)\n", self.all_text)
        return match.group(1) if match else None

    def user_texts(self):
        out = []
        for message in self.messages:
            if message.get("role") == "user":
                content = message.get("content")
                blocks = [content] if isinstance(content, str) else [
                    b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
                out.extend(blocks)
        return out

    def tool_results(self):
        out = []
        for message in self.messages:
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append((block.get("is_error"), block_text(block.get("content"))))
        return out


class FakeDroid(FakeAnthropic):
    """FakeAnthropic whose script may also say how many input tokens to report (Droid compacts
    by the usage it is told): ``script(request)`` -> blocks, or (blocks, input_tokens)."""

    request_class = DroidRequest

    def respond(self, request):
        script = self.script
        reply = script(request)
        tokens = 10
        if isinstance(reply, tuple):
            reply, tokens = reply
        self.script = lambda _request: reply
        try:
            body = FakeAnthropic.respond(self, request)
        finally:
            self.script = script
        return body.replace(b'"input_tokens": 10,', b'"input_tokens": %d,' % tokens, 1)

    def subagent_requests(self, droid=None):
        return [r for r in self.log if r.is_subagent and (droid is None or r.droid == droid)]

    def main_requests(self):
        return [r for r in self.log if not r.is_subagent and not r.is_summary]


def settings(server, **extra):
    data = {"customModels": [{"model": MODEL, "displayName": "Fake", "baseUrl": server.url, "apiKey": "sk-e2e",
                              "provider": "anthropic", "maxOutputTokens": 4096}]}
    data.update(extra)
    return data


class DroidRun:
    """One fresh HOME (briefing installed) and project, and how to run ``droid exec`` there."""

    def __init__(self, tmp_path, files=None, installed=True):
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        if installed:
            shutil.copytree(str(installed_home()), str(self.home), symlinks=True)
        else:
            (self.home / "tmp").mkdir(parents=True)
        git_init(self.project)
        self.write(files or {})

    def write(self, files):
        """``{path: text}``, paths starting ``home/`` or ``project/``."""
        write_tree(self.home.parent, files)

    def configure(self, server, **extra):
        path = self.home / ".factory" / "settings.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data.update(settings(server, **extra))
        path.write_text(json.dumps(data, indent=1))

    def run(self, server, prompt, timeout=180, **extra):
        self.configure(server, **extra)
        return run_process([droid_cli(), "exec", "-m", "custom:" + MODEL, "--skip-permissions-unsafe", prompt],
                           base_env(self.home), self.project, timeout)

    def transcripts(self):
        """Every session transcript of this run: {session id: [records]}."""
        out = {}
        for path in (self.home / ".factory" / "sessions").glob("*/*.jsonl"):
            out[path.stem] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return out

    def doctor(self, *args):
        env = base_env(self.home)
        env["DROID_PROJECT_DIR"] = str(self.project)
        return run_process([os.environ.get("BRIEFING_TEST_PYTHON") or "python3",
                            REPO / "bin" / "briefing-doctor"] + list(args), env, self.project, 60)


def task(droid, prompt="Do the task and report.", description="e2e delegation"):
    from fakes import tool_use
    return tool_use("Task", {"subagent_type": droid, "description": description, "prompt": prompt, "await": True})
