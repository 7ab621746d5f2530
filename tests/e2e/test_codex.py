"""End-to-end: briefing inside the real Codex CLI, offline, against a scripted model.

The plugin is installed the way a user would: ``codex plugin marketplace add``
on a clean copy of the checkout (its ``.agents/plugins/marketplace.json`` lists
the plugin at ``./``), then ``codex plugin add briefing@briefing``. Each test
gets a fresh HOME, CODEX_HOME and git project, runs ``codex exec`` once and
asserts on the logged model requests.
"""
import json
import sys
from pathlib import Path

import pytest

from fakes import FakeOpenAI, call
from framing import rebuild
from kit import (BRIEFED, UNBRIEFED, Skill, assert_briefing, codex_outputs, codex_spawner,
                 helper_marketplace, markers_of, ok)
from runners import REPO, Codex, copy_plugin, run_process

pytestmark = pytest.mark.e2e


def role_toml(name, skills=None, instructions="You are an e2e test role. Do the task and report."):
    lines = []
    if skills is not None:
        lines.append("# briefing: skills = [%s]" % ", ".join(json.dumps(s) for s in skills))
    lines += ["name = %s" % json.dumps(name), 'description = "e2e role %s"' % name,
              "developer_instructions = %s" % json.dumps(instructions)]
    return "\n".join(lines) + "\n"




@pytest.fixture(scope="session")
def plugin_source(clis, tmp_path_factory):
    """A clean copy of the checkout: the local marketplace a user would add."""
    return copy_plugin(REPO, tmp_path_factory.mktemp("marketplace") / "briefing")


@pytest.fixture
def machine(clis, plugin_source, tmp_path, serve):
    """``machine(script)`` -> a Codex runner with briefing installed, wired to a fresh fake server."""
    def make(script):
        server = serve(FakeOpenAI, script)
        codex = Codex(tmp_path, server)
        codex.plugin_root = codex.install(plugin_source)
        return codex

    return make






def child_requests(server):
    subs = server.subagent_requests()
    assert subs, "no child request: the spawn did not happen"
    return subs


def wait_reports(server):
    """The wait_agent outputs the main thread received."""
    mains = server.main_requests()
    return [o for o in codex_outputs(mains[-1], "wait_agent") if o]


def project_files(skills_by_root):
    files = {}
    for root, skills in skills_by_root.items():
        for s in skills:
            files["project/%s/%s/SKILL.md" % (root, s.name)] = s.md()
    return files


# ---------------------------------------------------------------------------
# 1 + 2. Brief and control
# ---------------------------------------------------------------------------

def test_brief_delivers_every_declared_body_whole(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha, beta])))
    codex.write(project_files({".codex/skills": [alpha], ".agents/skills": [beta]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "beta"])})

    ok(codex.run("Review the change."))
    server = codex.server

    first = child_requests(server)[0]
    parts = first.briefing_parts()
    assert len(parts) == 1, "under Codex part 1 carries the whole briefing"
    assert_briefing(parts, "reviewer", [alpha, beta], dirs={
        "alpha": codex.project / ".codex" / "skills" / "alpha",
        "beta": codex.project / ".agents" / "skills" / "beta"})
    for request in server.main_requests():
        assert not any(m in request.all_text for m in markers_of([alpha, beta]))
    assert any(BRIEFED in r for r in wait_reports(server)), wait_reports(server)


def test_control_identical_role_without_declaration(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    codex = machine(codex_spawner(["reviewer"], markers))
    codex.write(project_files({".codex/skills": [alpha], ".agents/skills": [beta]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer")})

    ok(codex.run("Review the change."))
    server = codex.server

    first = child_requests(server)[0]
    assert first.briefing_parts() == []
    for request in server.log:
        assert not any(m in request.all_text for m in markers)
    assert any(UNBRIEFED in r for r in wait_reports(server)), wait_reports(server)


# ---------------------------------------------------------------------------
# 3 + 5. Missing skill: the spawn_agent guard denies; pre-flight names it
# ---------------------------------------------------------------------------

def test_missing_skill_denied_by_guard_and_preflight_names_it(machine):
    alpha = Skill("alpha")
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "ghost-skill"])})
    logs = codex.tee_hook_output(codex.plugin_root, "SessionStart", codex.root / "hook-out")

    result = ok(codex.run("Review the change."))
    server = codex.server

    assert server.subagent_requests() == [], "the child started although a skill is missing"
    outputs = codex_outputs(server.main_requests()[-1], "spawn_agent")
    assert outputs, "the spawn_agent call got no output"
    assert outputs[0].startswith("Tool call blocked by PreToolUse hook: briefing: agent 'reviewer' "
                                 "references unknown skill(s): "), outputs[0]
    assert "ghost-skill" in outputs[0]
    assert "hook: PreToolUse Blocked" in result.stderr

    # Pre-flight: the SessionStart hook's own output (exec does not print systemMessage).
    messages = []
    for path in sorted(logs.glob("SessionStart-*.out")):
        out = path.read_text().strip()
        if out:
            data = json.loads(out)
            assert "hookSpecificOutput" not in data, "the pre-flight must be systemMessage-only"
            if data.get("systemMessage"):
                messages.append(data["systemMessage"])
    assert any("reviewer" in m and "ghost-skill" in m for m in messages), messages
    assert not any("ghost-skill" in t for r in server.log for t in r.messages("developer")), \
        "systemMessage must never reach the model"


def test_missing_skill_past_the_guard_gets_the_abort_instruction(machine):
    alpha = Skill("alpha")
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "ghost-skill"])})
    codex.edit_hooks(codex.plugin_root, lambda data: data["hooks"].pop("PreToolUse"))

    ok(codex.run("Review the change."))
    server = codex.server

    first = child_requests(server)[0]
    aborts = [t for t in first.messages("developer") if t.startswith("<briefing ")]
    assert len(aborts) == 1, aborts
    abort = aborts[0]
    assert abort.startswith('<briefing agent="reviewer" status="abort"'), abort[:200]
    assert "ghost-skill" in abort
    assert "<skill " not in abort
    assert not any(m in first.all_text for m in alpha.markers), "a skill body arrived with the abort"
    assert rebuild([abort]).aborted
    assert any(UNBRIEFED in r for r in wait_reports(server)), wait_reports(server)


# ---------------------------------------------------------------------------
# 4. Large briefing
# ---------------------------------------------------------------------------

def test_large_briefing_arrives_whole(machine):
    skills = [Skill("big-one", size=12000), Skill("big-two", size=12000), Skill("big-three", size=12000)]
    codex = machine(codex_spawner(["archivist"], markers_of(skills)))
    codex.write(project_files({".codex/skills": skills}))
    codex.write({"project/.codex/agents/archivist.toml": role_toml("archivist", [s.name for s in skills])})

    ok(codex.run("Archive it."))
    first = child_requests(codex.server)[0]
    for bad in ("truncated output", "tokens truncated", "Full hook output saved"):
        assert bad not in first.all_text, bad
    assert_briefing(first.briefing_parts(), "archivist", skills)
    assert any(BRIEFED in r for r in wait_reports(codex.server))


# ---------------------------------------------------------------------------
# 6. Nested role (found by name in a subdirectory) and a namespaced plugin skill
# ---------------------------------------------------------------------------

def test_nested_role_and_namespaced_plugin_skill(machine, tmp_path):
    alpha, tool = Skill("alpha"), Skill("tool-skill")
    codex = machine(codex_spawner(["deep_reviewer"], markers_of([alpha, tool])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/team/backend/file-name-differs.toml":
                 role_toml("deep_reviewer", ["alpha", "helper:tool-skill"])})
    mkt = helper_marketplace(tmp_path / "helper-mkt", tool)
    helper_root = codex.install(mkt, plugin="helper", marketplace="helper-mkt")

    ok(codex.run("Review deeply."))
    first = child_requests(codex.server)[0]
    rebuilt = assert_briefing(first.briefing_parts(), "deep_reviewer", [alpha, tool])
    tool_dir = [d for n, d in rebuilt.dirs.items() if n.endswith("tool-skill")][0]
    assert Path(tool_dir).resolve() == (helper_root / "skills" / "tool-skill").resolve()
    assert any(BRIEFED in r for r in wait_reports(codex.server))


# ---------------------------------------------------------------------------
# Issue 8 (Codex side): a Codex session cannot be started as a role
# ---------------------------------------------------------------------------

def test_codex_session_cannot_start_as_a_role(machine):
    """Documents why Codex main sessions are not briefed (the README says so).

    ``codex exec`` has no option naming a role, no config key selects one, and
    a profile (the nearest thing: ``-p NAME`` layers ``$CODEX_HOME/NAME.config.toml``)
    leaves SessionStart's payload without any agent or role field. If this test
    starts failing, Codex gained a way to run a session as a role: brief it.
    """
    alpha = Skill("alpha")
    codex = machine(lambda r: "Report: " + ("seen" if any(m in r.all_text for m in alpha.markers) else "none"))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/solo.toml": role_toml("solo", ["alpha"], "ROLE-INSTRUCTIONS-SOLO"),
                 "home/.codex/solo.config.toml": 'developer_instructions = "PROFILE-INSTRUCTIONS-SOLO"\n'})
    stdin_log = codex.root / "session-start-stdin.json"

    def capture(data):
        first = data["hooks"]["SessionStart"][0]["hooks"][0]
        first["command"] = "tee '%s' | %s" % (stdin_log, first["command"])
    codex.edit_hooks(codex.plugin_root, capture)

    for key in ("agent", "agent_type", "role", "agent_role", "default_agent"):
        rejected = codex.cli("exec", "--strict-config", "-c", '%s="solo"' % key, "hi", timeout=60)
        assert rejected.rc != 0 and "unknown configuration field `%s`" % key in rejected.stderr, rejected
    help_text = codex.cli("exec", "--help").stdout
    assert "--agent" not in help_text and "--role" not in help_text

    ok(codex.run("Work.", "-p", "solo"))
    payload = json.loads(stdin_log.read_text())
    assert payload["hook_event_name"] == "SessionStart"
    assert not {"agent_type", "agent", "role", "agent_id"} & set(payload), payload
    first = codex.server.main_requests()[0]
    assert first.contains("PROFILE-INSTRUCTIONS-SOLO") and not first.contains("ROLE-INSTRUCTIONS-SOLO")
    assert not first.briefing_parts() and not any(m in first.all_text for m in alpha.markers)


# ---------------------------------------------------------------------------
# Issue 15: Codex reads hooks/hooks.codex.json, one process per event
# ---------------------------------------------------------------------------

def hook_starts(log):
    """{(file, event): processes started}, from the lines ``log_hook_starts`` writes."""
    counts = {}
    for line in (log.read_text().splitlines() if log.exists() else []):
        key = tuple(line.split())
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_spawn_runs_one_process_per_event_from_the_codex_file(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha, beta])))
    codex.write(project_files({".codex/skills": [alpha], ".agents/skills": [beta]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "beta"])})
    assert codex.hooks_file(codex.plugin_root).name == "hooks.codex.json"
    log = codex.log_hook_starts(codex.plugin_root, codex.root / "hook-starts.log")

    ok(codex.run("Review the change."))
    # Every hooks file of the installed copy logs its starts: only the Codex file's ran, once per
    # event; PostToolUse once per tool call (spawn_agent, wait_agent) and UserPromptSubmit once per
    # turn (the main one, the child's), which bring a compacted child's briefing back (issue 26).
    assert hook_starts(log) == {("hooks.codex.json", "SessionStart"): 1,
                                ("hooks.codex.json", "PreToolUse"): 1,
                                ("hooks.codex.json", "SubagentStart"): 1,
                                ("hooks.codex.json", "PostToolUse"): 2,
                                ("hooks.codex.json", "UserPromptSubmit"): 2}, hook_starts(log)
    first = child_requests(codex.server)[0]
    assert_briefing(first.briefing_parts(), "reviewer", [alpha, beta])
    assert len(first.briefing_parts()) == 1
    assert any(BRIEFED in r for r in wait_reports(codex.server)), wait_reports(codex.server)


def test_installed_copy_with_the_old_single_file_still_briefs_once(machine):
    """A copy installed before hooks.codex.json: its manifest names hooks/hooks.json (8 parts)."""
    alpha = Skill("alpha", size=12000)
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha"])})
    manifest = codex.plugin_root / ".codex-plugin" / "plugin.json"
    data = json.loads(manifest.read_text())
    data["hooks"] = "./hooks/hooks.json"
    manifest.write_text(json.dumps(data))
    (codex.plugin_root / "hooks" / "hooks.codex.json").unlink()
    log = codex.log_hook_starts(codex.plugin_root, codex.root / "hook-starts.log")

    ok(codex.run("Review the change."))
    # hooks.json's Factory Droid gates are shell tests that fail under Codex: the same starts as ever.
    assert hook_starts(log) == {("hooks.json", "SessionStart"): conftest_parts(),
                                ("hooks.json", "PreToolUse"): 1,
                                ("hooks.json", "SubagentStart"): conftest_parts()}, hook_starts(log)
    first = child_requests(codex.server)[0]
    assert len(first.briefing_parts()) == 1, "parts 2..8 must print nothing under Codex"
    assert_briefing(first.briefing_parts(), "reviewer", [alpha])
    assert any(BRIEFED in r for r in wait_reports(codex.server))


def conftest_parts():
    return len(json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SubagentStart"][0]["hooks"])


def test_persisted_trust_names_the_codex_file_and_the_doctor_agrees(machine):
    """Codex's trust keys name hooks/hooks.codex.json; trusted that way, briefing runs without
    --dangerously-bypass-hook-trust, and the installed copy's doctor reports the hooks trusted."""
    alpha = Skill("alpha")
    codex = machine(codex_spawner(["reviewer"], markers_of([alpha])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha"])})
    doctor = [sys.executable, str(codex.plugin_root / "hooks" / "briefing-preload"), "doctor", "--json",
              "--harness", "codex"]

    def trust_check():
        proc = run_process(doctor, codex.env(), codex.project, 60)
        return [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "codex-hook-trust"][0]

    assert trust_check()["status"] == "WARN"
    hooks = [h for entry in codex.hooks_list()["data"] for h in entry["hooks"] if h["source"] == "plugin"]
    assert sorted(h["key"] for h in hooks) == [
        "briefing@briefing:hooks/hooks.codex.json:%s:0:0" % e
        for e in ("post_tool_use", "pre_tool_use", "session_start", "subagent_start", "user_prompt_submit")], \
        [h["key"] for h in hooks]
    config = codex.codex_home / "config.toml"
    with config.open("a", encoding="utf-8") as f:
        for h in hooks:
            handler, content = h["currentHash"].split("/")
            f.write('\n[hooks.state."%s"]\ntrusted_hash = "%s"\ntrusted_content_hash = "%s"\n'
                    % (h["key"], handler, content))
    assert {h["trustStatus"] for entry in codex.hooks_list()["data"] for h in entry["hooks"]} == {"trusted"}
    assert trust_check()["status"] == "ok"

    ok(codex.run("Review the change.", bypass_hook_trust=False))
    assert_briefing(child_requests(codex.server)[0].briefing_parts(), "reviewer", [alpha])


def test_v2_spawn_is_guarded_too(machine):
    """Multi-agent V2 spawns as ``collaborationspawn_agent``. Codex matches a PreToolUse matcher
    against the whole tool name (``spawn_agent`` and ``Agent`` do not fire for it), so the Codex
    file's guard names both tools, and a V2 spawn with a missing skill is denied."""
    def script(r):
        if r.is_subagent:
            return "Report: " + UNBRIEFED
        outputs = r.outputs()
        if not outputs:
            return [call("spawn_agent", {"task_name": "t1", "message": "Review it.", "agent_type": "reviewer"},
                         namespace="collaboration")]
        return "All done."
    codex = machine(script)
    codex.write(project_files({".codex/skills": [Skill("alpha")]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "ghost-skill"])})
    with (codex.codex_home / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[features]\nmulti_agent_v2 = true\n")
    log = codex.log_hook_starts(codex.plugin_root, codex.root / "hook-starts.log")

    result = ok(codex.run("Review the change."))
    assert hook_starts(log).get(("hooks.codex.json", "PreToolUse")) == 1, hook_starts(log)
    assert ("hooks.codex.json", "SubagentStart") not in hook_starts(log), "the V2 child started"
    assert codex.server.subagent_requests() == []
    output, = codex.server.main_requests()[-1].outputs().values()
    assert output.startswith("Tool call blocked by PreToolUse hook: briefing: agent 'reviewer' "
                             "references unknown skill(s): ghost-skill"), output
    assert output.endswith("Tool: collaborationspawn_agent"), output
    assert "hook: PreToolUse Blocked" in result.stderr


# ---------------------------------------------------------------------------
# Issue 18: a shell cd does not move Codex's session cwd (measured), so nothing changes
# ---------------------------------------------------------------------------

def test_after_a_shell_cd_the_spawn_is_briefed_and_a_missing_skill_refused(machine):
    alpha = Skill("alpha")
    cd = call("exec_command", {"cmd": "cd packages/web/src && pwd"}, namespace=None)
    codex = machine(codex_spawner(["reviewer", "broken"], markers_of([alpha]), prelude=[cd]))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha"]),
                 "project/.codex/agents/broken.toml": role_toml("broken", ["alpha", "ghost-skill"]),
                 "project/packages/web/src/index.js": "export const x = 1;\n"})

    ok(codex.run("Review the web package."))
    server = codex.server
    last = server.main_requests()[-1]
    (shell,) = codex_outputs(last, "exec_command")
    assert str(codex.project / "packages" / "web" / "src") in shell, "the cd did not run"

    first = child_requests(server)[0]
    assert_briefing(first.briefing_parts(), "reviewer", [alpha],
                    dirs={"alpha": codex.project / ".codex" / "skills" / "alpha"})
    assert any(BRIEFED in r for r in wait_reports(server)), wait_reports(server)
    assert len({r.thread_id for r in server.subagent_requests()}) == 1, "only reviewer may start"
    outputs = codex_outputs(last, "spawn_agent")
    assert outputs[-1].startswith("Tool call blocked by PreToolUse hook: briefing: agent 'broken' "
                                  "references unknown skill(s): ghost-skill"), outputs


def test_a_different_spelling_starts_no_role(machine):
    """Issue 43: Codex starts a role (built-in or file) by its exact name only (measured): no other
    spelling reaches a role whose declaration a spelling-blind harness would have to fold."""
    alpha = Skill("alpha")
    plan = ["REVIEWER", "Re_viewer", "Default", "EXPLORER"]
    codex = machine(codex_spawner(plan, markers_of([alpha])))
    codex.write(project_files({".codex/skills": [alpha]}))
    codex.write({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["ghost-skill"])})
    ok(codex.run("Review the change."))
    outs = codex_outputs(codex.server.main_requests()[-1], "spawn_agent")
    assert outs == ["unknown agent_type '%s'" % name for name in plan], outs
    assert codex.server.subagent_requests() == []


def test_a_large_non_latin_briefing_arrives_whole(machine):
    """Issue 43: the hook prints JSON with each non-ASCII character escaped, so 500 kB of Cyrillic
    (under the 512 KiB of skill text) prints as 1.5 MB. Measured: Codex reads a hook's output whole at
    that size (no cap on what is printed), and the child gets every letter."""
    skill = Skill("russkiy")
    skill.body = "First line: %s\n%s\nLast line: %s\n" % (skill.start, "\u0436" * 250000, skill.end)
    codex = machine(codex_spawner(["archivist"], markers_of([skill])))
    codex.write(project_files({".codex/skills": [skill]}))
    codex.write({"project/.codex/agents/archivist.toml": role_toml("archivist", ["russkiy"])})
    ok(codex.run("Archive it."))
    first = child_requests(codex.server)[0]
    parts = first.briefing_parts()
    assert len(parts) == 1 and parts[0].count("\u0436") == 250000, [len(p) for p in parts]
    assert_briefing(parts, "archivist", [skill])
    assert any(BRIEFED in r for r in wait_reports(codex.server))
