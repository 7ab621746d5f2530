"""OpenCode 1.18.33 and Kilo 7.7.7: briefing's plugin installed with the CLI's own command,
``opencode plugin <built folder>`` / ``kilo plugin …``, or ``… plugin file:<npm pack tarball>``
(docs/opencode.md, "Install with the CLI's own command"; issue 44), instead of a config line
written by hand: the command writes the project's config, and the next run briefs a declaring
agent and refuses a spawn whose skill is missing."""
import json
import subprocess

import pytest

from fake_chat import FakeChat
from opencode_runner import OpenCodeMachine
from runners import run_process
from test_opencode import AGENTS, MAGIC, cli, delegation_script, plugin  # noqa: F401  (fixtures)

CONFIG_DIR = {"opencode": ".opencode", "kilo": ".kilo"}


def packed(plugin, out):
    """``npm pack`` of the built folder: the tarball a release would publish."""
    proc = subprocess.run(["npm", "pack", "--pack-destination", str(out)], cwd=str(plugin), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc
    return out / proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("form", ["folder", "tarball"])
def test_the_clis_plugin_command_installs_it(cli, plugin, tmp_path, serve, form):  # noqa: F811
    spec = str(plugin) if form == "folder" else "file:%s" % packed(plugin, tmp_path)
    plan = ["briefed", "broken"]
    server = serve(FakeChat, delegation_script(plan))
    machine = OpenCodeMachine(tmp_path, server, cli, plugin, context=200000).write(AGENTS)
    config = machine.project / {"opencode": "opencode.json", "kilo": "kilo.json"}[cli]
    config.write_text("{}\n")  # nothing by hand: the command below is the whole install
    installed = run_process([machine.binary, "plugin", spec], machine.env(), machine.project, 120)
    assert installed.rc == 0 and "Installed %s" % spec in installed.stdout + installed.stderr, installed
    written = json.loads((machine.project / CONFIG_DIR[cli] / "opencode.json").read_text())
    assert written["plugin"] == [spec], written

    proc = machine.run("Delegate the two tasks.")
    assert proc.rc == 0 and not proc.timed_out, proc
    parents = [r for r in server.log if r.has_tools and not r.parent]
    briefed, broken = parents[-1].tool_results()
    assert "CHILD-ANSWER: %s" % MAGIC in briefed, briefed[:500]
    assert broken.startswith("briefing: agent 'broken' references unknown skill(s): nope"), broken
