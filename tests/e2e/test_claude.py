"""End-to-end: briefing inside the real Claude Code CLI, offline, against a scripted model.

The plugin is loaded with ``--plugin-dir <repo checkout>``. Each test builds a
fresh HOME and project, scripts the fake model, runs ``claude -p`` once and
asserts on the logged model requests and on the stream-json output.
"""
import json
from pathlib import Path

import pytest

from conftest import CLAUDE_OUTPUT_LIMIT, agent_md as unit_agent_md
from fakes import FakeAnthropic, bash, block_text, briefing_parts, spawn
from kit import (BRIEFED, UNBRIEFED, Skill, assert_briefing, claude_main_only, claude_sequence,
                 claude_denial, claude_spawner, helper_marketplace, markers_of, ok, tool_results)
from runners import REPO, Claude, tracked_copy

pytestmark = pytest.mark.e2e



def agent_md(name, skills=None, native=None):
    """The unit tests' agent file, with a body fit for an e2e run."""
    return unit_agent_md(name, skills, native, body="You are an e2e test agent. Do the task and report.\n")


def project_skills(skills):
    return {"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in skills}


@pytest.fixture
def machine(clis, tmp_path, serve):
    """``machine(script)`` -> a Claude runner wired to a fresh fake Anthropic server."""
    def make(script):
        server = serve(FakeAnthropic, script)
        return Claude(tmp_path, server)

    return make




def subagent_parts(request):
    """The briefing parts in a subagent request's SubagentStart context."""
    return briefing_parts(request.hook_context("SubagentStart"))






def final_report(server):
    """The text of the last tool_result the main agent received (the subagent's report)."""
    mains = [r for r in server.main_requests() if r.has_tools]
    results = tool_results(mains[-1]) if mains else []
    assert results, "the main agent never received a tool result"
    return block_text(results[-1].get("content"))


# ---------------------------------------------------------------------------
# 1 + 2. Brief and control
# ---------------------------------------------------------------------------

def test_brief_delivers_every_declared_body_whole(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    claude = machine(claude_spawner(["reviewer"], markers))
    claude.write(project_skills([alpha, beta]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"])})

    result = ok(claude.run("Review the change."))
    server = claude.server

    subs = server.subagent_requests()
    assert subs, "no subagent request: the spawn did not happen"
    assert_briefing(subagent_parts(subs[0]), "reviewer", [alpha, beta], part_limit=CLAUDE_OUTPUT_LIMIT,
                    dirs={s.name: claude.project / ".claude" / "skills" / s.name for s in (alpha, beta)})
    for request in server.main_requests():  # the bodies reach the subagent only
        assert not any(m in request.all_text for m in markers)
    assert BRIEFED in final_report(server)
    assert any(h.get("hook_event") == "SubagentStart" and "briefing: reviewer" in h.get("output", "")
               for h in result.hook_responses())


def test_control_identical_agent_without_declaration(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    claude = machine(claude_spawner(["reviewer"], markers))
    claude.write(project_skills([alpha, beta]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer")})

    ok(claude.run("Review the change."))
    server = claude.server

    subs = server.subagent_requests()
    assert subs, "no subagent request: the spawn did not happen"
    assert subagent_parts(subs[0]) == []
    for request in server.log:
        assert not any(m in request.all_text for m in markers)
    assert UNBRIEFED in final_report(server)


# ---------------------------------------------------------------------------
# 3 + 5. Missing skill (guard) and pre-flight (same broken project)
# ---------------------------------------------------------------------------

def test_missing_skill_denies_the_spawn_and_preflight_names_it(machine):
    alpha = Skill("alpha")
    claude = machine(claude_spawner(["reviewer"], markers_of([alpha])))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "ghost-skill"])})

    result = ok(claude.run("Review the change."))
    server = claude.server

    text = claude_denial(server, "a skill is missing")
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'reviewer' references unknown skill(s): ")
    assert "ghost-skill" in text
    assert not any(m in r.all_text for r in server.log for m in alpha.markers)
    assert not [h for h in result.hook_responses("SubagentStart")]

    # Pre-flight: SessionStart's systemMessage names the broken declaration.
    messages = []
    for hook in result.hook_responses("SessionStart"):
        out = hook.get("output", "").strip()
        if out:
            data = json.loads(out)
            assert "hookSpecificOutput" not in data, "the pre-flight must be systemMessage-only"
            if data.get("systemMessage"):
                messages.append(data["systemMessage"])
    assert any("reviewer" in m and "ghost-skill" in m for m in messages), messages
    # Never sent to the model.
    assert not any("ghost-skill" in r.hook_context("SessionStart") for r in server.log
                   if r.hook_context("SessionStart"))


def test_healthy_project_preflight_is_silent(machine):
    alpha = Skill("alpha")
    claude = machine(claude_spawner([], []))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha"])})
    result = ok(claude.run("Hello."))
    outputs = [h.get("output", "") for h in result.hook_responses("SessionStart")]
    assert outputs, "SessionStart hooks did not run"
    assert not any("reviewer" in out or "alpha" in out for out in outputs), outputs


# ---------------------------------------------------------------------------
# 4. Large briefing
# ---------------------------------------------------------------------------

def test_large_briefing_arrives_whole(machine):
    skills = [Skill("big-one", size=12000), Skill("big-two", size=12000), Skill("big-three", size=12000)]
    assert all(len(s.body) >= 12000 for s in skills)
    claude = machine(claude_spawner(["archivist"], markers_of(skills)))
    claude.write(project_skills(skills))
    claude.write({"project/.claude/agents/archivist.md": agent_md("archivist", [s.name for s in skills])})

    ok(claude.run("Archive it."))
    server = claude.server

    subs = server.subagent_requests()
    assert subs
    first = subs[0]
    for bad in ("persisted-output", "Output too large", "truncated output", "Full output saved"):
        assert bad not in first.all_text, bad
    parts = subagent_parts(first)
    assert len(parts) >= 4, "36 kB must be split across several handlers"
    assert_briefing(parts, "archivist", skills, part_limit=CLAUDE_OUTPUT_LIMIT)
    assert BRIEFED in final_report(server)


# ---------------------------------------------------------------------------
# 6. Nested agent (found by name in a subdirectory) and a namespaced plugin skill
# ---------------------------------------------------------------------------

def test_nested_agent_and_namespaced_plugin_skill(machine, tmp_path):
    alpha, tool = Skill("alpha"), Skill("tool-skill")
    markers = markers_of([alpha, tool])
    claude = machine(claude_spawner(["deep-reviewer"], markers))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/team/backend/file-name-differs.md":
                  agent_md("deep-reviewer", ["alpha", "helper:tool-skill"])})
    mkt = helper_marketplace(tmp_path / "helper-mkt", tool)
    ok(claude.cli("plugin", "marketplace", "add", str(mkt)))
    ok(claude.cli("plugin", "install", "helper@helper-mkt"))
    settings = json.loads((claude.home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"].get("helper@helper-mkt") is True

    ok(claude.run("Review deeply."))
    server = claude.server

    subs = server.subagent_requests()
    assert subs, "the nested agent was not spawned"
    rebuilt = assert_briefing(subagent_parts(subs[0]), "deep-reviewer", [alpha, tool], part_limit=CLAUDE_OUTPUT_LIMIT)
    # A marketplace added from a local folder is read live, from that folder, not from the
    # installPath copy (issue 32, measured): the skill is framed with the source's folder.
    tool_dir = [d for n, d in rebuilt.dirs.items() if n.endswith("tool-skill")][0]
    assert Path(tool_dir).resolve() == (claude.root / "helper-mkt" / "plugins" / "helper" / "skills" /
                                        "tool-skill").resolve()
    assert BRIEFED in final_report(server)


# ---------------------------------------------------------------------------
# 7. Native skills: a skill listed natively and under briefing: arrives once
# ---------------------------------------------------------------------------

def test_native_and_briefing_skill_arrives_once(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    claude = machine(claude_spawner(["mixed"], markers_of([alpha, beta])))
    claude.write(project_skills([alpha, beta]))
    claude.write({"project/.claude/agents/mixed.md": agent_md("mixed", ["alpha", "beta"], native=["alpha"])})

    ok(claude.run("Mix it."))
    subs = claude.server.subagent_requests()
    assert subs
    first = subs[0]
    for m in markers_of([alpha, beta]):
        assert first.all_text.count(m) == 1, "%s arrived %d times" % (m, first.all_text.count(m))
    rebuilt = assert_briefing(subagent_parts(first), "mixed", [beta], part_limit=CLAUDE_OUTPUT_LIMIT)
    assert set(rebuilt.skills) == {"beta"}, "the natively preloaded skill was injected again"
    assert BRIEFED in final_report(claude.server)


# ---------------------------------------------------------------------------
# 8. claude plugin validate --strict
# ---------------------------------------------------------------------------

# What `validate --strict` may find: the developers' map at the repository root, which is
# also the plugin root (CLAUDE.md says why it is there). Anything else fails the test.
ROOT_CLAUDE_MD = "root: CLAUDE.md at the plugin root is not loaded as project context."


def validate_findings(output):
    """The ❯ lines of the plugin's own warning and error blocks (not the plugin directory checks)."""
    found, inside = [], False
    for line in output.splitlines():
        stripped = line.strip()
        if stripped.startswith(("⚠ Found", "✘ Found")) and "plugin directory" not in stripped:
            inside = True
        elif inside and stripped.startswith("❯"):
            found.append(stripped[1:].strip())
        elif inside and stripped and not stripped.startswith("❯"):
            inside = False
    return found


def test_plugin_validate(clis, tmp_path):
    """``claude plugin validate`` passes on the repository as a fresh clone holds it, and
    ``--strict`` finds exactly the root CLAUDE.md: without it, --strict passes too."""
    plugin = tracked_copy(REPO, tmp_path / "checkout")
    assert (plugin / "CLAUDE.md").is_file()
    with FakeAnthropic(lambda r: "ok") as server:
        claude = Claude(tmp_path / "machine", server)
        plain = claude.cli("plugin", "validate", str(plugin), cwd=tmp_path)
        strict = claude.cli("plugin", "validate", "--strict", str(plugin), cwd=tmp_path)
        (plugin / "CLAUDE.md").unlink()
        without = claude.cli("plugin", "validate", "--strict", str(plugin), cwd=tmp_path)
    assert plain.rc == 0 and "Validation passed" in plain.stdout, plain.stdout + plain.stderr
    findings = validate_findings(strict.stdout)
    assert len(findings) == 1 and findings[0].startswith(ROOT_CLAUDE_MD), strict.stdout + strict.stderr
    assert strict.rc != 0, strict.stdout
    assert without.rc == 0 and "Validation passed" in without.stdout, without.stdout + without.stderr
    assert validate_findings(without.stdout) == [], without.stdout


# ---------------------------------------------------------------------------
# Issue 8: claude --agent NAME main sessions are briefed at SessionStart
# ---------------------------------------------------------------------------

def test_agent_session_is_briefed_and_control_is_not(machine, tmp_path):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    claude = machine(claude_main_only(markers))
    claude.write(project_skills([alpha, beta]))
    claude.write({"project/.claude/agents/solo.md": agent_md("solo", ["alpha"], native=["beta"])})

    ok(claude.run("Work as solo.", "--agent", "solo"))
    server = claude.server
    first = [r for r in server.main_requests() if r.has_tools][0]
    context = first.hook_context("SessionStart")
    assert context, "no SessionStart additional context in the main agent's first request"
    parts = briefing_parts(context)
    rebuilt = assert_briefing(parts, "solo", [alpha, beta], part_limit=CLAUDE_OUTPUT_LIMIT)
    assert sorted(rebuilt.skills) == ["alpha", "beta"]
    for m in markers:
        assert first.all_text.count(m) == 1, "%s arrived %d times" % (m, first.all_text.count(m))

    # Control: the same project without --agent gets no briefing.
    before = len(server.log)
    ok(claude.run("Work without an agent."))
    control = [r for r in server.log[before:] if r.has_tools and not r.is_subagent][0]
    assert not any(m in control.all_text for m in markers)
    assert not briefing_parts(control.hook_context("SessionStart") or "")


# ---------------------------------------------------------------------------
# Issue 15: Claude Code reads hooks/hooks.json only, never the Codex file
# ---------------------------------------------------------------------------

def test_claude_code_never_runs_the_codex_hooks_file(machine, tmp_path):
    """Every handler of every hooks file in a copy of the plugin logs its start: under Claude Code
    only hooks/hooks.json runs (its parts), hooks/hooks.codex.json never does."""
    plugin = tracked_copy(REPO, tmp_path / "checkout")
    log = tmp_path / "hook-starts.log"
    names = sorted(p.name for p in (plugin / "hooks").glob("*.json"))
    assert names == ["hooks.codex.json", "hooks.copilot.json", "hooks.json"], names
    for path in (plugin / "hooks").glob("*.json"):
        data = json.loads(path.read_text())
        for event, groups in data["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    handler["command"] = "echo '%s %s' >> '%s'; %s" % (path.name, event, log, handler["command"])
        path.write_text(json.dumps(data, indent=2))
    parts = len(json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SubagentStart"][0]["hooks"])
    alpha = Skill("alpha")
    claude = machine(claude_spawner(["reviewer"], markers_of([alpha])))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha"])})

    ok(claude.run("Review the change.", plugin_dirs=(plugin,)))
    counts = {}
    for line in log.read_text().splitlines():
        counts[line] = counts.get(line, 0) + 1
    # Factory Droid's gates in hooks.json are shell tests that fail under Claude Code: nothing more
    # starts per spawn (tests/e2e/test_droid.py counts the interpreters; docs/factory-droid.md).
    assert counts == {"hooks.json SessionStart": parts, "hooks.json PreToolUse": 1,
                      "hooks.json SubagentStart": parts}, counts
    subs = claude.server.subagent_requests()
    assert subs, "the subagent never ran"
    assert_briefing(subagent_parts(subs[0]), "reviewer", [alpha], part_limit=CLAUDE_OUTPUT_LIMIT)
    assert BRIEFED in final_report(claude.server)


# ---------------------------------------------------------------------------
# Issue 18: after the model cds into a sub-folder, the project is still the project
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["after-cd", "project-root"])
def test_after_a_cd_the_spawn_is_briefed_and_a_missing_skill_refused(machine, where):
    """A Bash ``cd packages/web/src`` moves the hook payload's cwd, not CLAUDE_PROJECT_DIR
    (claude-code.md 3.7.1). Briefed and refused, as from the project root (the control)."""
    alpha = Skill("alpha")
    calls = [bash("cd packages/web/src", "enter the web package")] if where == "after-cd" else []
    calls += [spawn("reviewer", prompt="Do the e2e task #1 and report."),
              spawn("broken", prompt="Do the e2e task #2 and report.")]
    claude = machine(claude_sequence(calls, alpha.markers))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha"]),
                  "project/.claude/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"]),
                  "project/packages/web/src/index.js": "export const x = 1;\n"})

    result = ok(claude.run("Review the web package."))
    server = claude.server
    mains = [r for r in server.main_requests() if r.has_tools]
    results = tool_results(mains[-1])
    assert len(results) == len(calls), "the scripted calls did not all run"

    if where == "after-cd":
        assert not results[0].get("is_error"), results[0]
        # Claude Code took the cd: the session's working directory is the sub-folder from then on.
        moved = "Primary working directory: %s (was %s)" % (claude.project / "packages/web/src", claude.project)
        assert moved in mains[-1].all_text, "the cd did not move the session"

    # The declaring agent started briefed: the markers arrived, in its request only.
    agents = {r.agent_id for r in server.subagent_requests()}
    assert len(agents) == 1, "exactly one subagent (reviewer) may start: %r" % agents
    first = server.subagent_requests()[0]
    assert_briefing(subagent_parts(first), "reviewer", [alpha], part_limit=CLAUDE_OUTPUT_LIMIT,
                    dirs={"alpha": claude.project / ".claude" / "skills" / "alpha"})
    assert BRIEFED in block_text(results[-2].get("content"))
    assert any(h.get("hook_event") == "SubagentStart" and "briefing: reviewer" in h.get("output", "")
               for h in result.hook_responses())

    # The agent with a missing skill never started: the guard refused it.
    denial = results[-1]
    assert denial.get("is_error") is True, denial
    text = block_text(denial.get("content"))
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'broken' references unknown "
                           "skill(s): ghost-skill"), text


def test_started_in_a_sub_folder_reads_claude_folders_up_to_the_git_root(machine):
    """Started in packages/web, Claude Code reads .claude/ there and in every folder above it up to
    the one holding .git; the nearest wins a name (measured for issue 18). briefing does the same."""
    near, root_only = Skill("shared"), Skill("root-only")
    far = Skill("shared")  # the same name, one folder further up: must lose
    claude = machine(claude_spawner(["uses-both"], markers_of([near, root_only])))
    claude.write({"project/packages/web/.claude/skills/shared/SKILL.md": near.md(),
                  "project/.claude/skills/shared/SKILL.md": far.md(),
                  "project/.claude/skills/root-only/SKILL.md": root_only.md(),
                  "project/.claude/agents/uses-both.md": agent_md("uses-both", ["shared", "root-only"])})

    ok(claude.run("Work on the web package.", cwd=claude.project / "packages" / "web"))
    server = claude.server

    subs = server.subagent_requests()
    assert subs, "the root's agent was not spawned from the sub-folder"
    assert_briefing(subagent_parts(subs[0]), "uses-both", [near, root_only], part_limit=CLAUDE_OUTPUT_LIMIT,
                    dirs={"shared": claude.project / "packages" / "web" / ".claude" / "skills" / "shared",
                          "root-only": claude.project / ".claude" / "skills" / "root-only"})
    assert not any(m in subs[0].all_text for m in far.markers)
    assert BRIEFED in final_report(server)


# ---------------------------------------------------------------------------
# Issue 17: a refusal stays small, however many skills are missing
# ---------------------------------------------------------------------------

def test_a_refusal_of_many_missing_skills_stays_small(machine):
    """250 missing skills: the parent model receives a tool result under 2,000 characters that
    still names the first missing skill and says how many more there are; no hook output of the
    session reaches Claude Code's 10,000-character cap (facts/claude-code.md §3.3, §3.4)."""
    alpha = Skill("alpha")
    ghosts = ["ghost-skill-%03d" % i for i in range(250)]
    claude = machine(claude_spawner(["hoarder"], markers_of([alpha])))
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/hoarder.md": agent_md("hoarder", ["alpha"] + ghosts)})

    result = ok(claude.run("Review the change."))
    server = claude.server

    text = claude_denial(server, "skills are missing")
    assert text.startswith("PreToolUse:Agent hook error: briefing: agent 'hoarder' references unknown "
                           "skill(s): ghost-skill-000, ghost-skill-001"), text[:300]
    assert len(text) < 2000 and len(text.encode("utf-8")) < 2000, len(text)
    assert "and 242 more (`briefing-doctor --show hoarder` lists them all)" in text, text
    assert "ghost-skill-249" not in text, text
    for hook in result.hook_responses():
        assert len(hook.get("output", "")) < CLAUDE_OUTPUT_LIMIT, (hook.get("hook_event"), len(hook["output"]))
    assert any("ghost-skill-000" in h.get("output", "") and "and 242 more" in h.get("output", "")
               for h in result.hook_responses("SessionStart")), "the pre-flight did not name them"
