"""End-to-end: briefing inside the real GitHub Copilot CLI 1.0.102, offline (issue 12).

The plugin is this checkout's Claude Code layout, unchanged: installed with
``copilot plugin install <clean copy>`` (the way a user installs a local
checkout), or loaded for one run with ``--plugin-dir``. The model is the
Anthropic fake, reached through Copilot's BYOK variables. The parent delegates
with Copilot's ``task`` tool; the subagent answers from its own request alone
(``kit.verdict``), and secret markers live only in skill bodies.
"""
import json
import re

import pytest

from copilot_runner import Copilot, FakeCopilotModel, checkout_copy, task
from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, markers_of, ok, verdict

pytestmark = pytest.mark.e2e

BRIEFING = re.compile(r'<briefing agent="[^"]*" (?:part="1/1" seal="(?P<seal>[0-9a-f]+)"|status="abort").*?'
                      r'</briefing(?: seal="(?P=seal)")?>', re.S)


def agent_md(name, skills=None, native=None):
    """A Copilot agent file (.github/agents/*.agent.md): Claude Code's format, Copilot reads it too."""
    lines = ["---", "name: %s" % name, "description: e2e agent %s" % name, "tools: [view]"]
    if native:
        lines += ["skills:"] + ["  - %s" % s for s in native]
    if skills:
        lines += ["briefing:", "  skills:"] + ["    - %s" % s for s in skills]
    return "\n".join(lines + ["---", "You are an e2e test agent. Do the task and report."]) + "\n"


def delegate(agent, markers):
    """The parent calls task(agent) once, then finishes; the subagent reports what it sees.

    A list of agents: the parent calls task() for each in turn, the n-th with the
    prompt ``delegated(n)`` (so that each subagent's requests can be told apart).
    """
    agents = [agent] if isinstance(agent, str) else agent

    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            return "Report: " + verdict(r.all_text, markers)
        done = len(r.tool_results())
        if done < len(agents):
            if isinstance(agent, str):
                return [task(agent)]
            return [task(agents[done], prompt=delegated(done + 1), name="e2e-sub-%d" % (done + 1))]
        return "All done."
    return script


def delegated(n):
    return "Do the e2e task #%d and report." % n


@pytest.fixture(scope="session")
def copilot_cache(clis, tmp_path_factory):
    """One XDG_CACHE_HOME for the session: the executable unpacks itself there once."""
    return tmp_path_factory.mktemp("copilot-cache")


@pytest.fixture(scope="session")
def checkout(clis, tmp_path_factory):
    return checkout_copy(tmp_path_factory.mktemp("checkout") / "briefing")


@pytest.fixture
def machine(clis, copilot_cache, tmp_path, serve):
    def make(script):
        server = serve(FakeCopilotModel, script)
        return Copilot(tmp_path, server, copilot_cache)

    return make


def skills_at(root, skills):
    return {"project/%s/%s/SKILL.md" % (root, s.name): s.md() for s in skills}


def first_subagent_request(server):
    subs = [r for r in server.log if r.is_subagent]
    assert subs, "no subagent request: the delegation did not happen"
    return subs[0]


def briefings(request):
    """briefing's contexts in the subagent's first user message."""
    return [m.group(0) for m in BRIEFING.finditer(request.first_user_text)]


def reports(server):
    """What the parent received back from its task calls."""
    return [t for r in server.log if not r.is_subagent for t in r.tool_results()]


# ---------------------------------------------------------------------------
# brief, control, deny
# ---------------------------------------------------------------------------

def test_brief_installed_with_copilot_plugin_install(machine, checkout):
    alpha, beta = Skill("alpha"), Skill("beta")
    copilot = machine(delegate("reviewer", markers_of([alpha, beta])))
    root = copilot.install(checkout)
    assert (root / "hooks" / "hooks.json").is_file()
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write(skills_at(".claude/skills", [beta]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha", "beta"])})

    ok(copilot.run("Review the change."))  # no --plugin-dir: the installed copy runs
    first = first_subagent_request(copilot.server)
    found = briefings(first)
    assert len(found) == 1, "one flat context carries the whole briefing"
    assert_briefing(found, "reviewer", [alpha, beta], dirs={
        "alpha": copilot.project / ".github" / "skills" / "alpha",
        "beta": copilot.project / ".claude" / "skills" / "beta"})
    assert first.first_user_text.index("<briefing ") < first.first_user_text.index("Do the e2e task")
    for request in copilot.server.log:
        if not request.is_subagent:
            assert not any(m in request.all_text for m in markers_of([alpha, beta]))
    assert "briefing: reviewer \u2190" not in first.all_text, "the systemMessage must not reach the model"
    assert any(BRIEFED in r for r in reports(copilot.server)), reports(copilot.server)


def test_control_a_non_declaring_agent_gets_nothing(machine, checkout):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    copilot = machine(delegate("reviewer", markers))
    copilot.write(skills_at(".github/skills", [alpha, beta]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer")})

    ok(copilot.run("Review the change.", plugin_dirs=[checkout]))
    first = first_subagent_request(copilot.server)
    assert briefings(first) == []
    for request in copilot.server.log:
        assert not any(m in request.all_text for m in markers)
    assert any(UNBRIEFED in r for r in reports(copilot.server)), reports(copilot.server)


def test_deny_a_missing_skill_refuses_the_task_call(machine, checkout):
    alpha = Skill("alpha")
    copilot = machine(delegate("reviewer", markers_of([alpha])))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha", "ghost-skill"])})

    ok(copilot.run("Review the change.", plugin_dirs=[checkout]))
    server = copilot.server
    assert not [r for r in server.log if r.is_subagent], "the subagent started although a skill is missing"
    denied = reports(server)
    assert denied and denied[0].startswith(
        "Denied by preToolUse hook: briefing: agent 'reviewer' references unknown skill(s): ghost-skill"), denied
    assert not any(m in r.all_text for r in server.log for m in alpha.markers)


def test_past_the_guard_a_missing_skill_gets_the_abort_instruction(machine, checkout, tmp_path):
    """subagentStart cannot block under Copilot (fact 10): without the guard, the agent is told to stop."""
    alpha = Skill("alpha")
    unguarded = checkout_copy(tmp_path / "unguarded")
    for hooks_file in (unguarded / "hooks").glob("*.json"):  # whichever file Copilot reads: no guard
        hooks = json.loads(hooks_file.read_text(encoding="utf-8"))
        hooks["hooks"].pop("PreToolUse", None)
        hooks_file.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    copilot = machine(delegate("reviewer", markers_of([alpha])))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha", "ghost-skill"])})

    ok(copilot.run("Review the change.", plugin_dirs=[unguarded]))
    first = first_subagent_request(copilot.server)
    found = briefings(first)
    assert len(found) == 1 and found[0].startswith('<briefing agent="reviewer" status="abort">'), found
    assert "ghost-skill" in found[0] and "<skill " not in found[0]
    assert not any(m in first.all_text for m in alpha.markers), "a skill body arrived with the abort"
    assert any(UNBRIEFED in r for r in reports(copilot.server)), reports(copilot.server)


# ---------------------------------------------------------------------------
# a large briefing, native skills:
# ---------------------------------------------------------------------------

def test_a_briefing_over_64_kib_arrives_whole(machine, checkout):
    skills = [Skill("big-one", size=40000), Skill("big-two", size=40000)]
    copilot = machine(delegate("archivist", markers_of(skills)))
    copilot.write(skills_at(".github/skills", skills))
    copilot.write({"project/.github/agents/archivist.agent.md": agent_md("archivist", [s.name for s in skills])})

    ok(copilot.run("Archive it.", plugin_dirs=[checkout]))
    first = first_subagent_request(copilot.server)
    found = briefings(first)
    assert len(found) == 1 and len(found[0]) > 64 * 1024, [len(f) for f in found]
    assert_briefing(found, "archivist", skills)
    assert any(BRIEFED in r for r in reports(copilot.server))


def test_native_skills_arrive_exactly_once(machine, checkout):
    """Copilot preloads skills: entries itself; briefing delivers only what Copilot does not."""
    native, ours = Skill("native-one"), Skill("ours")
    markers = markers_of([native, ours])
    copilot = machine(delegate("mixed", markers))
    copilot.write(skills_at(".github/skills", [native, ours]))
    copilot.write({"project/.github/agents/mixed.agent.md": agent_md(
        "mixed", skills=["native-one", "ours"], native=["native-one"])})

    ok(copilot.run("Do it.", plugin_dirs=[checkout]))
    first = first_subagent_request(copilot.server)
    text = first.first_user_text
    for m in markers:
        assert text.count(m) == 1, (m, text.count(m))
    assert '<skill-context name="native-one">' in text  # Copilot's own preload
    assert_briefing(briefings(first), "mixed", [ours])  # and ours, without native-one
    assert any(BRIEFED in r for r in reports(copilot.server))


def test_which_native_entries_copilot_preloads(machine, checkout, tmp_path):
    """Measured here on every run, and written into the README: Copilot preloads a skills: entry by
    the skill's frontmatter name, disable-model-invocation skills and an installed plugin's skills
    (by bare name) included, and skips a plugin:skill entry, which briefing then delivers."""
    dmi, named, plugged, spaced = Skill("dmi"), Skill("fm-named"), Skill("plugged"), Skill("spaced")
    markers = markers_of([dmi, named, plugged, spaced])
    copilot = machine(delegate("natives", markers))
    helper = tmp_path / "helper"
    copilot.write({
        str(helper / ".claude-plugin" / "plugin.json"): json.dumps({"name": "helper", "version": "1.0.0"}),
        str(helper / "skills" / "plugged" / "SKILL.md"): plugged.md(),
        str(helper / "skills" / "spaced" / "SKILL.md"): spaced.md(),
        "project/.github/skills/dmi/SKILL.md": dmi.md().replace(
            "\n---\n", "\ndisable-model-invocation: true\n---\n", 1),
        "project/.github/skills/folder-differs/SKILL.md": named.md(),
        "project/.github/agents/natives.agent.md": agent_md(
            "natives", native=["dmi", "fm-named", "plugged", "helper:spaced"]),
    })
    assert copilot.cli("plugin", "install", str(helper)).rc == 0

    ok(copilot.run("Do it.", plugin_dirs=[checkout]))
    text = first_subagent_request(copilot.server).first_user_text
    for skill in (dmi, named, plugged, spaced):
        for m in skill.markers:
            assert text.count(m) == 1, (skill.name, text.count(m))
    for name in ("dmi", "fm-named", "plugged"):
        assert '<skill-context name="%s">' % name in text  # Copilot's own
    assert '<skill-context name="spaced">' not in text  # skipped by Copilot, delivered by briefing
    rebuilt = assert_briefing(briefings(first_subagent_request(copilot.server)), "natives", [spaced])
    assert list(rebuilt.skills) == ["helper:spaced"]
    assert any(BRIEFED in r for r in reports(copilot.server))


def test_copilot_runs_only_its_own_hooks_file_one_process_per_event(machine, tmp_path):
    """.github/plugin/plugin.json names hooks/hooks.copilot.json, and Copilot reads that manifest
    before .claude-plugin/plugin.json: a session with one delegation starts three briefing processes."""
    alpha = Skill("alpha")
    logged = checkout_copy(tmp_path / "logged")
    log = tmp_path / "hook-starts.log"
    for path in sorted((logged / "hooks").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for event, groups in data["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    handler["command"] = "echo '%s %s' >> '%s'; %s" % (path.name, event, log, handler["command"])
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    copilot = machine(delegate("reviewer", markers_of([alpha])))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha"])})

    ok(copilot.run("Review the change.", plugin_dirs=[logged]))
    assert log.read_text().splitlines() == [
        "hooks.copilot.json SessionStart", "hooks.copilot.json PreToolUse", "hooks.copilot.json SubagentStart"]
    assert_briefing(briefings(first_subagent_request(copilot.server)), "reviewer", [alpha])


def test_a_different_spelling_starts_no_agent(machine, checkout):
    """Issue 43: Copilot CLI starts an agent by its exact name only (measured): no other spelling
    reaches an agent whose declaration a spelling-blind harness would have to fold."""
    alpha = Skill("alpha")
    plan = ["REVIEWER", "Reviewer", "re_viewer", "General-Purpose", "explore"]
    copilot = machine(delegate(plan, markers_of([alpha])))
    copilot.write(skills_at(".github/skills", [alpha]))
    copilot.write({"project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["ghost-skill"])})
    ok(copilot.run("Review the change.", plugin_dirs=[checkout]))
    last = [r for r in copilot.server.log if not r.is_subagent and r.has_tools][-1].tool_results()
    assert len(last) == len(plan), last
    for name, result in zip(plan[:-1], last):
        assert result.startswith("Unknown agent_type: %s. Valid types are: " % name), result
    assert UNBRIEFED in last[-1]  # the control: the built-in explore, by its exact name, starts
