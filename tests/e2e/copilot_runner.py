"""Run the real GitHub Copilot CLI offline against the Anthropic fake (issue 12).

Copilot CLI 1.0.102 speaks BYOK to any provider named by the environment
(shared/facts/copilot-cli.md, "How to run it offline" and fact 19): here
``COPILOT_PROVIDER_TYPE=anthropic`` against ``fakes.FakeAnthropic``, with
``COPILOT_OFFLINE=true`` so it makes no other network call, and no GitHub login.
Each run gets a fresh HOME and COPILOT_HOME and a git project; the executable
unpacks itself once into a shared ``XDG_CACHE_HOME``.
"""
import json
from pathlib import Path

from fakes import AnthropicRequest, FakeAnthropic, block_text, tool_use
from runners import REPO, CliMachine, _base_env, run_process


class CopilotRequest(AnthropicRequest):
    """A Copilot model request: a subagent's carry ``x-interaction-type: conversation-subagent``."""

    @property
    def is_subagent(self):
        return self.headers.get("x-interaction-type") == "conversation-subagent"

    @property
    def first_user_text(self):
        """The first user message: where a subagentStart context and <skill-context> land (fact 9)."""
        for message in self.messages:
            if message.get("role") == "user":
                return block_text(message.get("content"))
        return ""

    def tool_results(self):
        out = []
        for m in self.messages:
            if m.get("role") == "user" and isinstance(m.get("content"), list):
                out.extend(block_text(b.get("content")) for b in m["content"]
                           if isinstance(b, dict) and b.get("type") == "tool_result")
        return out


class FakeCopilotModel(FakeAnthropic):
    request_class = CopilotRequest


def task(agent_type, prompt="Do the e2e task and report.", name="e2e-sub"):
    """A call of Copilot's delegation tool ``task`` (fact 1)."""
    return tool_use("task", {"agent_type": agent_type, "description": "e2e delegation", "prompt": prompt,
                             "name": name, "mode": "sync"})


class Copilot(CliMachine):
    """A fresh machine for Copilot CLI runs: ``root/home`` is HOME (COPILOT_HOME ``home/.copilot``)."""

    binary_index = 2
    cli_timeout = 30

    def __init__(self, root, server, cache):
        self.cache = Path(cache)
        self.copilot_home = Path(root) / "home" / ".copilot"
        CliMachine.__init__(self, root, server, extra_dirs=(self.copilot_home,), commit=True)

    def env(self):
        env = _base_env()
        env.update({
            "HOME": str(self.home),
            "COPILOT_HOME": str(self.copilot_home),
            "XDG_CACHE_HOME": str(self.cache),
            "TMPDIR": str(self.tmp),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": self.server.url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": "claude-sonnet-4",
            "NO_COLOR": "1",
        })
        return env

    def install(self, checkout):
        """``copilot plugin install <local checkout>``, as a user would; returns the installed copy."""
        installed = self.cli("plugin", "install", str(checkout))
        assert installed.rc == 0 and not installed.timed_out, installed
        config = (self.copilot_home / "config.json").read_text(encoding="utf-8")
        data = json.loads("\n".join(l for l in config.splitlines() if not l.lstrip().startswith("//")))
        entry = [p for p in data["installedPlugins"] if p["name"] == "briefing"]
        assert entry, data
        return Path(entry[0]["cache_path"])

    def run(self, prompt, *args, plugin_dirs=(), timeout=40, cwd=None):
        argv = [self.binary, "-p", prompt, "--allow-all-tools", "--no-auto-update",
                "--output-format", "json"]
        for d in plugin_dirs:
            argv += ["--plugin-dir", str(d)]
        argv += list(args)
        return run_process(argv, self.env(), cwd or self.project, timeout)


def checkout_copy(dest):
    """What a fresh clone of this checkout holds (the files git tracks)."""
    from runners import tracked_copy
    return tracked_copy(REPO, dest)
