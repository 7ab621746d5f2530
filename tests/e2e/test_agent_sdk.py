"""End-to-end, issue 37: the real Claude Agent SDK (Python, 0.2.189, its own Claude Code 2.1.332).

The SDK runs in its own venv (``.e2e/agent-sdk``, made by scripts/setup-e2e.d/agent-sdk)
as an SDK user's program would: ``sdk_driver.py`` builds ``ClaudeAgentOptions``, calls
``briefing_sdk.with_briefing`` from the distribution pip installed out of this checkout,
and runs ``query()`` against the loopback fake Anthropic server. Every subagent is told
apart by its own prompt (``system[2]``) and judged by the markers in its own requests:
a skill counts as delivered only when its body's markers are there, exactly once.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import agent_md as unit_agent_md
from fakes import FakeAnthropic, block_text
from kit import Skill, claude_spawner, markers_of, tool_results
from runners import REPO, Missing, _base_env, cli_or_skip, git_init, installer_ready, run_process, write_tree
from test_claude_native import denial_of

pytestmark = pytest.mark.e2e

INSTALLER = REPO / "scripts" / "setup-e2e.d" / "agent-sdk"
VENV_PYTHON = REPO / ".e2e" / "agent-sdk" / "bin" / "python"
DRIVER = Path(__file__).resolve().parent / "sdk_driver.py"


def installed_or_skip(installer, what):
    """Skip (fail where the e2e suite is required) unless ``installer --check`` says it is there."""
    def find():
        if not installer_ready(installer):
            raise Missing("%s is not installed; run scripts/setup-e2e" % what)
    cli_or_skip(find)


@pytest.fixture(scope="session")
def sdk_python():
    installed_or_skip(INSTALLER, "the Claude Agent SDK (.e2e/agent-sdk)")
    return VENV_PYTHON


@pytest.fixture(scope="session")
def briefing_site(sdk_python, tmp_path_factory):
    """This checkout, pip-installed into a folder of its own, as the distribution ``briefing-skills``
    an SDK user would install: its wheel built offline by this interpreter's pip and hatchling
    (requirements-test.txt), then installed by the SDK venv's pip."""
    site, wheels = tmp_path_factory.mktemp("briefing-site"), tmp_path_factory.mktemp("briefing-wheel")
    quiet = ["--quiet", "--no-deps", "--no-index", "--disable-pip-version-check"]

    def pip(python, *args):
        proc = subprocess.run([str(python), "-m", "pip"] + list(args) + quiet, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        assert proc.returncode == 0, proc

    pip(sys.executable, "wheel", "--no-build-isolation", "-w", str(wheels), str(REPO))
    pip(sdk_python, "install", "--target", str(site), str(next(wheels.glob("*.whl"))))
    assert (site / "briefing_sdk" / "plugin" / ".claude-plugin" / "plugin.json").is_file()
    return site


class SdkRun:
    """One ``query()`` of the real SDK in a fresh machine: ``root/home`` HOME, ``root/project`` the cwd."""

    def __init__(self, root, server, python, site):
        self.root, self.server, self.python, self.site = Path(root), server, python, site
        self.home, self.project = self.root / "home", self.root / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        git_init(self.project)

    def write(self, files):
        write_tree(self.root, files)

    def cli_env(self):
        """What the SDK program puts into ``env`` for Claude Code: loopback model, sandbox HOME."""
        return {"ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": "dummy", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1", "HOME": str(self.home),
                "CLAUDE_CODE_TMPDIR": str(self.root / "cc-tmp")}

    def run(self, spec):
        spec = dict({"prompt": "Run every agent.", "cwd": str(self.project), "env": self.cli_env(),
                     "include_hook_events": True}, **spec)
        (self.root / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        host = _base_env()
        host.update(HOME=str(self.home), PYTHONPATH=str(self.site))
        out = self.root / "out.json"
        proc = run_process([self.python, DRIVER, self.root / "spec.json", out], host, self.project, 240)
        assert proc.rc == 0 and not proc.timed_out and out.is_file(), proc
        self.out = json.loads(out.read_text(encoding="utf-8"))
        return self.out


@pytest.fixture
def sdk_run(sdk_python, briefing_site, tmp_path, serve):
    def make(script):
        return SdkRun(tmp_path, serve(FakeAnthropic, script), sdk_python, briefing_site)
    return make


def prompt(name):
    return "You are the e2e agent %s. Do the task and report." % name.upper()


def definition(name, skills=None):
    out = {"description": "e2e agent %s" % name, "prompt": prompt(name), "tools": ["Read"]}
    if skills is not None:
        out["skills"] = skills
    return out


def file_agent(name, skills=None, native=None):
    return unit_agent_md(name, skills, native, body=prompt(name) + "\n")


def requests_of(server, name):
    """Every request of the subagent spawned as ``name`` (its prompt is its system prompt)."""
    marker = prompt(name)
    return [r for r in server.subagent_requests()
            if any(marker in (b.get("text") or "") for b in (r.body or {}).get("system") or [])]


def briefing_context(request):
    return request.hook_context("SubagentStart") or ""


def arrived(server, name, skill):
    """(times in the first request, in briefing's context?) for ``skill`` in agent ``name``."""
    found = requests_of(server, name)
    assert found, "%s was not spawned: %r" % (name, denial_of(server, name))
    first = found[0]
    counts = {first.all_text.count(m) for m in skill.markers}
    assert len(counts) == 1, counts
    return counts.pop(), skill.start in briefing_context(first)


def skill_file(skill, meta=()):
    return "\n".join(["---", "name: %s" % skill.name, skill.frontmatter_line] + list(meta) + ["---"]) + "\n" + skill.body


def test_programmatic_agents_through_with_briefing(sdk_run):
    alpha, beta, gamma, dmi = Skill("alpha"), Skill("beta"), Skill("gamma"), Skill("dmi")
    every = [alpha, beta, gamma, dmi]
    order = ["filed", "prog", "hidden", "missing", "shadow", "control"]
    run = sdk_run(claude_spawner(order, markers_of(every)))
    run.write({"project/.claude/skills/%s/SKILL.md" % s.name: skill_file(s) for s in (alpha, beta, gamma)})
    run.write({"project/.claude/skills/dmi/SKILL.md": skill_file(dmi, ["disable-model-invocation: true"]),
               "project/.claude/agents/filed.md": file_agent("filed", ["alpha"]),
               # the file shadowed by a programmatic definition declares a skill that does not exist
               "project/.claude/agents/shadow.md": file_agent("shadow-file", ["no-such-skill"])
               .replace("name: shadow-file", "name: shadow")})
    out = run.run({"agents": {"prog": definition("prog", ["beta"]), "hidden": definition("hidden", ["dmi"]),
                              "missing": definition("missing", ["no-such-skill"]),
                              "shadow": definition("shadow"), "control": definition("control")},
                   "with_briefing": {"prog": {"skills": ["gamma"]}}})
    server = run.server
    assert arrived(server, "filed", alpha) == (1, True)  # a file agent, as before
    assert arrived(server, "prog", beta) == (1, False)  # Claude Code preloads it: not twice
    assert arrived(server, "prog", gamma) == (1, True)  # briefing's own declaration
    assert arrived(server, "hidden", dmi) == (1, True)  # Claude Code skips it: briefing delivers it once
    assert not requests_of(server, "missing")
    refusal = denial_of(server, "missing")
    assert refusal and "PreToolUse:Agent hook error: briefing: agent 'missing' references unknown skill(s): " \
        "no-such-skill" in refusal, refusal
    shadow = requests_of(server, "shadow")  # Claude Code runs the programmatic one, and briefing follows it
    assert shadow and denial_of(server, "shadow") is None and not briefing_context(shadow[0])
    control = requests_of(server, "control")
    assert control and not any(m in r.all_text for r in control for m in markers_of(every))
    # briefing's own messages in the SDK stream: audits and the refusal, never a skill's text
    found = [(m[0], m[1]) for m in out["briefing_messages"]]
    assert ("refusal", "tool_result") in found and found.count(("audit", "SubagentStart")) == 3, found
    preflight = [m[2] for m in out["briefing_messages"] if m[0] == "preflight"]  # 'missing' would be refused
    assert len(preflight) == 1 and "agent 'missing'" in preflight[0] and "agent 'shadow'" not in preflight[0]
    assert not any(mark in m[2] for m in out["briefing_messages"] for mark in markers_of(every))
    contract = json.loads(out["options_env"]["BRIEFING_SDK_AGENTS"])
    assert contract["agents"]["prog"] == {"defined": True, "skills": ["beta"], "briefing": {"skills": ["gamma"]}}
    assert out["plugins"][-1]["path"].endswith(os.path.join("briefing_sdk", "plugin"))


def test_setting_sources_project_only(sdk_run):
    mine, proj = Skill("mine"), Skill("proj")
    run = sdk_run(claude_spawner(["prog"], markers_of([mine, proj])))
    run.write({"home/.claude/skills/mine/SKILL.md": skill_file(mine),
               "project/.claude/skills/proj/SKILL.md": skill_file(proj)})
    out = run.run({"agents": {"prog": definition("prog", ["mine", "proj"])}, "setting_sources": ["project"],
                   "with_briefing": None})
    assert arrived(run.server, "prog", proj) == (1, False)  # Claude Code preloads the project skill
    assert arrived(run.server, "prog", mine) == (1, True)  # and skips the user one: briefing delivers it
    audits = [m[2] for m in out["briefing_messages"] if m[0] == "audit"]
    assert any("a user skill, and claude runs with --setting-sources=project" in a for a in audits), audits


def test_setting_sources_empty_isolates_the_project(sdk_run):
    proj = Skill("proj")
    order = ["prog", "asked", "filed", "control"]
    run = sdk_run(claude_spawner(order, markers_of([proj])))
    run.write({"project/.claude/skills/proj/SKILL.md": skill_file(proj),
               "project/.claude/agents/filed.md": file_agent("filed", ["proj"]),
               # a project rule: not read in a session isolated from the project (no project settings)
               "project/.briefing/rules.json": json.dumps({"rules": [{"agents": ["control"], "skills": ["proj"]}]})})
    run.run({"agents": {"prog": definition("prog", ["proj"]), "asked": definition("asked"),
                        "control": definition("control")},
             "setting_sources": [], "with_briefing": {"asked": {"skills": ["proj"]}}})
    server = run.server
    refusal = denial_of(server, "prog")
    assert refusal and "a project skill, which Claude Code does not load" in refusal, refusal
    assert arrived(server, "asked", proj) == (1, True)  # asked for by briefing's own declaration
    assert not requests_of(server, "filed")  # Claude Code loads no project agent
    mains = [r for r in server.main_requests() if r.has_tools]
    assert any("Agent type 'filed' not found" in block_text(t.get("content"))
               for r in mains for t in tool_results(r))
    control = requests_of(server, "control")
    assert control and not any(m in r.all_text for r in control for m in proj.markers)
    assert denial_of(server, "control") is None


def test_agents_through_extra_args(sdk_run):
    dmi, plain = Skill("dmi"), Skill("plain")
    order = ["flagged", "flagmissing", "shared", "fileshadow", "control"]
    run = sdk_run(claude_spawner(order, markers_of([dmi, plain])))
    run.write({"project/.claude/skills/dmi/SKILL.md": skill_file(dmi, ["disable-model-invocation: true"]),
               "project/.claude/skills/plain/SKILL.md": skill_file(plain),
               "project/.claude/agents/fileshadow.md": file_agent("fileshadow-file", ["no-such-skill"])
               .replace("name: fileshadow-file", "name: fileshadow")})
    shared_flag = definition("shared-flag", ["no-such-skill"])
    flagged = {"flagged": definition("flagged", ["dmi", "plain"]),
               "flagmissing": definition("flagmissing", ["no-such-skill"]), "control": definition("control"),
               "shared": shared_flag, "fileshadow": definition("fileshadow", ["dmi"])}
    run.run({"extra_args": {"agents": json.dumps(flagged)}, "agents": {"shared": definition("shared", ["plain"])},
             "with_briefing": None})
    server = run.server
    assert arrived(server, "flagged", dmi) == (1, True)
    assert arrived(server, "flagged", plain) == (1, False)
    assert "references unknown skill(s): no-such-skill" in (denial_of(server, "flagmissing") or "")
    # Measured, and followed: options.agents wins over --agents, and --agents over an agent file.
    assert requests_of(server, "shared") and not requests_of(server, "shared-flag")
    assert denial_of(server, "shared") is None and arrived(server, "shared", plain) == (1, False)
    assert requests_of(server, "fileshadow") and not requests_of(server, "fileshadow-file")
    assert denial_of(server, "fileshadow") is None and arrived(server, "fileshadow", dmi) == (1, True)
    control = requests_of(server, "control")
    assert control and not any(m in r.all_text for r in control for m in markers_of([dmi, plain]))


def test_any_name_claude_code_runs_is_briefed_or_refused(sdk_run):
    """Issue 43: Claude Code runs a definition under any name (measured here: every one below
    starts), none of which could name an agent file; briefing judges each like any other agent."""
    alpha = Skill("alpha")
    names = ["qa:reviewer", "a/b", ".dot", "a\\b", "tab\there", "x" * 300, "has space"]
    refused = "qa:missing"
    run = sdk_run(claude_spawner(names + [refused], markers_of([alpha])))
    run.write({"project/.claude/skills/alpha/SKILL.md": skill_file(alpha)})
    agents = {name: definition("odd%d" % i) for i, name in enumerate(names)}
    agents[refused] = definition("refused", ["no-such-skill"])
    run.run({"agents": agents, "with_briefing": {name: {"skills": ["alpha"]} for name in names}})
    server = run.server
    for i, name in enumerate(names):
        found = requests_of(server, "odd%d" % i)
        assert found, (name, denial_of(server, name))
        assert alpha.start in briefing_context(found[0]), name
        assert found[0].all_text.count(alpha.markers[0]) == 1, name
    assert not requests_of(server, "refused")
    assert "references unknown skill(s): no-such-skill" in (denial_of(server, refused) or "")


def test_a_folded_spelling_is_judged_as_the_agent_claude_code_starts(sdk_run):
    """Issue 43: with no exact match Claude Code starts the one agent whose name folds the same
    (case, whitespace, dashes, underscores): the guard judges that agent, not the spelling."""
    alpha = Skill("alpha")
    order = ["explore", "FOLDED", "Folded_Ok", "filecase"]
    run = sdk_run(claude_spawner(order, markers_of([alpha])))
    run.write({"project/.claude/skills/alpha/SKILL.md": skill_file(alpha),
               "project/.claude/agents/file-case.md": file_agent("file-case", ["alpha"]),
               "project/.briefing/rules.json": json.dumps({"rules": [{"agents": ["Explore"],
                                                                      "skills": ["no-such-skill"]}]})})
    run.run({"agents": {"Folded": definition("Folded", ["no-such-skill"]), "folded-ok": definition("folded-ok")},
             "with_briefing": {"folded-ok": {"skills": ["alpha"]}}})
    server = run.server
    for spelled, agent in (("explore", "Explore"), ("FOLDED", "Folded")):
        refusal = denial_of(server, agent)
        assert refusal and "no-such-skill" in refusal, (spelled, refusal)
    assert not requests_of(server, "Folded")
    for name in ("folded-ok", "file-case"):
        found = requests_of(server, name)
        assert found and alpha.start in briefing_context(found[0]), name


def test_a_non_latin_briefing_arrives_whole_in_parts(sdk_run):
    """Issue 43: Claude Code's cap is 10,000 characters of each context, the part budget 10,000 bytes
    of UTF-8: in Cyrillic, CJK and emoji every part stays under the cap (no 2 kB preview)."""
    skill = Skill("scripts")
    text = "\u0436" * 5000 + "\u6f22" * 5000 + "\U0001F600" * 5000
    skill.body = "First line: %s\n%s\nLast line: %s\n" % (skill.start, text, skill.end)
    run = sdk_run(claude_spawner(["polyglot"], markers_of([skill])))
    run.write({"project/.claude/skills/scripts/SKILL.md": skill_file(skill),
               "project/.claude/agents/polyglot.md": file_agent("polyglot", ["scripts"])})
    run.run({"with_briefing": None, "setting_sources": ["project"]})
    first = requests_of(run.server, "polyglot")[0]
    for bad in ("persisted-output", "Output too large", "Preview (first 2KB)"):
        assert bad not in first.all_text, bad
    for char in ("\u0436", "\u6f22", "\U0001F600"):
        assert first.all_text.count(char) == 5000, char
    assert skill.start in first.all_text and skill.end in first.all_text
