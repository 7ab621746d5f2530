"""Run the real OpenCode and Kilo CLIs offline against the fake chat-completions server.

Both are installed by ``scripts/setup-e2e.d/opencode`` into ``.e2e/opencode/``.
Each run gets a fresh HOME (and XDG folders), a git project holding
``opencode.json`` (Kilo: ``kilo.json``) with briefing's built plugin folder in
``"plugin"``, exactly as the README installs it, and the fake provider through
``OPENCODE_CONFIG_CONTENT`` (``KILO_CONFIG_CONTENT``), with model fetching and
auto-update off. Both CLIs npm-install ``@opencode-ai/plugin`` into every
config folder at startup: the registry is a closed loopback port, so that fails
at once, and the dependency-free plugin loads regardless (facts §"second round").
"""
import glob
import json
import os
import subprocess
from pathlib import Path

from runners import REPO, Missing, _base_env, installer_ready, git_init, run_process, write_tree

SETUP = REPO / "scripts" / "setup-e2e.d" / "opencode"
NODE_MODULES = REPO / ".e2e" / "opencode" / "node_modules"
BUILD = REPO / "scripts" / "build-opencode-plugin"

# Per CLI: the platform binary, its config file and folder, and its variables' prefix.
CLIS = {
    "opencode": {"binary": "opencode-*/bin/opencode", "config": "opencode.json", "dir": ".opencode",
                 "env": "OPENCODE"},
    "kilo": {"binary": "@kilocode/cli-*/bin/kilo", "config": "kilo.json", "dir": ".kilo", "env": "KILO"},
}


def binary(cli):
    """The CLI's native binary, or raise Missing."""
    found = sorted(p for p in glob.glob(str(NODE_MODULES / CLIS[cli]["binary"])) if os.access(p, os.X_OK))
    if not installer_ready(SETUP) or not found:
        raise Missing("OpenCode and Kilo are not installed in %s; run scripts/setup-e2e" % NODE_MODULES.parent)
    # The plain build first: a "-baseline" or "-musl" one sorts after it.
    return min(found, key=len)


def build_plugin(out):
    """``scripts/build-opencode-plugin OUT``: the folder the README installs."""
    subprocess.run(["python3", str(BUILD), str(out)], check=True, stdout=subprocess.PIPE)
    return Path(out) / "briefing-opencode"


def provider_config(url, context=200000):
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model", "small_model": "fake/fake-model",
        "autoupdate": False, "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": url + "/v1", "apiKey": "sk-fake"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                      "limit": {"context": context, "output": 4096}}}}},
    }


class OpenCodeMachine:
    """A fresh machine for one OpenCode or Kilo run: ``root/home`` is HOME, ``root/project`` the cwd."""

    timeout = 150

    def __init__(self, root, server, cli, plugin, context=200000):
        self.root, self.server, self.cli = Path(root), server, cli
        self.home, self.project = self.root / "home", self.root / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        git_init(self.project)
        self.binary = binary(cli)
        self.dir = CLIS[cli]["dir"]
        self.context = context
        write_tree(self.project, {CLIS[cli]["config"]: json.dumps({"plugin": [str(plugin)]}, indent=2)})

    def write(self, files):
        """Write ``{path: text}`` into the project; ``{dir}`` in a path is the CLI's config folder."""
        write_tree(self.project, {rel.format(dir=self.dir): text for rel, text in files.items()})
        return self

    def env(self):
        env = _base_env()
        home = str(self.home)
        env.update({
            "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "XDG_STATE_HOME": home + "/.local/state",
            # Their startup npm install of @opencode-ai/plugin fails at once instead of retrying.
            "npm_config_registry": "http://127.0.0.1:9/", "npm_config_fetch_retries": "0",
        })
        config = json.dumps(provider_config(self.server.url, self.context))
        prefix = CLIS[self.cli]["env"]
        for flag in ("DISABLE_MODELS_FETCH", "DISABLE_AUTOUPDATE", "DISABLE_SHARE", "DISABLE_LSP_DOWNLOAD"):
            env["%s_%s" % (prefix, flag)] = "1"
        if self.cli == "kilo":
            for flag in ("DISABLE_SESSION_INGEST", "DISABLE_CODEBASE_INDEXING", "DISABLE_PRESENCE"):
                env["KILO_" + flag] = "1"
        env[prefix + "_CONFIG_CONTENT"] = config
        return env

    def run(self, message, *args):
        """``<cli> run [args] MESSAGE`` in the project."""
        return run_process([self.binary, "run"] + list(args) + [message], self.env(), self.project, self.timeout)

    def logs(self):
        """The CLI's own log files' text (plugin messages logged through client.app.log go there)."""
        texts = []
        for path in sorted(self.home.glob(".local/share/*/log/*.log")):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(texts)
