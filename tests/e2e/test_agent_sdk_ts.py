"""End-to-end, issue 37: the TypeScript setup of docs/agent-sdk.md with the real TypeScript SDK.

``@anthropic-ai/claude-agent-sdk`` 0.3.332 (JavaScript only, scripts/setup-e2e.d/agent-sdk-ts)
drives the Claude Code 2.1.332 that the Python SDK carries (the release it was built for),
offline, with the contract built as the docs show it (``sdk_ts_driver.mjs``).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FakeAnthropic
from kit import Skill, claude_spawner, markers_of
from runners import REPO, _base_env, run_process
from test_agent_sdk import (SdkRun, arrived, definition, installed_or_skip, requests_of,  # noqa: F401
                            sdk_python, skill_file)
from test_claude_native import denial_of

pytestmark = pytest.mark.e2e

TS_INSTALLER = REPO / "scripts" / "setup-e2e.d" / "agent-sdk-ts"
TS_MODULES = REPO / ".e2e" / "agent-sdk-ts" / "node_modules"
DRIVER = Path(__file__).resolve().parent / "sdk_ts_driver.mjs"


@pytest.fixture(scope="session")
def ts_sdk(sdk_python):
    """The Claude Code the Python SDK carries, once the TypeScript SDK is installed too."""
    installed_or_skip(TS_INSTALLER, "the TypeScript Agent SDK (.e2e/agent-sdk-ts)")
    found = subprocess.run([str(sdk_python), "-c", "import claude_agent_sdk, os; print(os.path.join(os.path.dirname("
                            "claude_agent_sdk.__file__), '_bundled', 'claude'))"],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return found.stdout.strip()


def test_the_documented_typescript_setup(ts_sdk, tmp_path, serve):
    dmi, plain = Skill("dmi"), Skill("plain")
    run = SdkRun(tmp_path, serve(FakeAnthropic, claude_spawner(["hidden", "missing", "own", "control"],
                                                               markers_of([dmi, plain]))), None, None)
    run.write({"project/.claude/skills/dmi/SKILL.md": skill_file(dmi, ["disable-model-invocation: true"]),
               "project/.claude/skills/plain/SKILL.md": skill_file(plain)})
    spec = {"prompt": "Run every agent.", "cwd": str(run.project), "pluginPath": str(REPO), "claudeBin": ts_sdk,
            "sdk": str(TS_MODULES / "@anthropic-ai" / "claude-agent-sdk" / "sdk.mjs"),
            "env": run.cli_env(),
            "agents": {"hidden": definition("hidden", ["dmi"]), "missing": definition("missing", ["no-such-skill"]),
                       "own": definition("own"), "control": definition("control")},
            "briefing": {"own": {"skills": ["plain"]}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    host = _base_env()
    host.update(HOME=str(run.home))
    proc = run_process(["node", DRIVER, tmp_path / "spec.json", tmp_path / "out.json"], host, run.project, 240)
    assert proc.rc == 0 and not proc.timed_out, proc
    server = run.server
    assert arrived(server, "hidden", dmi) == (1, True)
    assert arrived(server, "own", plain) == (1, True)
    assert "references unknown skill(s): no-such-skill" in (denial_of(server, "missing") or "")
    assert not requests_of(server, "missing")
    control = requests_of(server, "control")
    assert control and not any(m in r.all_text for r in control for m in markers_of([dmi, plain]))
    sys.path.insert(0, str(REPO / "sdk"))
    import briefing_sdk
    messages = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["messages"]
    kinds = [m.kind for m in briefing_sdk.briefing_messages(messages)]
    assert kinds.count("audit") == 2 and "refusal" in kinds, kinds
