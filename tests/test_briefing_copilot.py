"""The GitHub Copilot CLI side of hooks/briefing-preload (issue 12).

Payloads and the hook environment are the ones Copilot CLI 1.0.102 sends to a
Claude-format plugin hooks file (shared/facts/copilot-cli.md facts 13 and 17;
``sandbox.copilot_payload`` and ``sandbox.copilot_env`` in conftest). The
precedence rules come from runs of the real CLI, noted at each table.

Covered, in file order:
 1. agent lookup: ~/.copilot/agents (COPILOT_HOME), .github/agents (recursive,
    *.agent.md and *.md), .claude/agents (top level), plugin agents as plugin:agent,
    names by frontmatter, built-in agent types;
 2. skill resolution: per folder up to the git root .github, .agents, .claude skills,
    then ~/.copilot/skills and ~/.agents/skills, then plugins (config.json with its
    comment lines, the running plugin); names by frontmatter; COPILOT_PROJECT_DIR;
 3. delivery: the flat additionalContext, everything in part 1, a large briefing whole,
    the size cap, the abort instruction;
 4. native skills: what Copilot preloads is not injected again, what it skips is;
 5. the guard: tool Agent with tool_input.agent_type, the deny and its reason;
 6. the pre-flight and the doctor under --harness copilot, and hooks.json as Copilot reads it.
"""
import json

import pytest

from conftest import PARTS, REPO, agent_md, skill_md, text_of
from framing import rebuild
from test_briefing_doctor import _plugin_copy

COPILOT_LIMIT = 256 * 1024


def body(tag):
    return "Body of %s.\nSECRET-%s: only this skill knows it.\n" % (tag, tag)


def skill(rel_dir, name, tag=None, fm_name=None):
    """{<rel_dir>/<name>/SKILL.md: a skill named ``fm_name or name`` whose body is body(tag or name)}."""
    return {"%s/%s/SKILL.md" % (rel_dir, name): skill_md(fm_name or name, body(tag or name))}


def spawn(sb, agent, env=None, **fields):
    """Every SubagentStart handler for ``agent`` under Copilot: the Results, part 1 first."""
    return sb.run_parts(sb.spawn(agent, "copilot", **fields), env=dict(sb.copilot_env(), **(env or {})))


def briefed(results):
    """The rebuilt briefing from Copilot's flat contexts; only part 1 may print anything."""
    assert all(r.out == "" for r in results[1:]), results[1:]
    first = results[0]
    assert first.context is None, first  # never hookSpecificOutput under Copilot
    assert first.flat_context, first
    return rebuild([first.flat_context])


def secrets(text):
    return sorted(word.split(":")[0] for word in text.split() if word.startswith("SECRET-"))


def guard(sb, agent, env=None):
    return sb.run(sb.guard(agent, "copilot"), env=dict(sb.copilot_env(), **(env or {})))


INSTALLED = "home/.copilot/installed-plugins/_direct/helper"


def config_json(*plugins, comment=True):
    """$COPILOT_HOME/config.json as `copilot plugin install` writes it (fact 18), comments included."""
    entries = [{"name": name, "marketplace": "", "version": "1.0.0", "enabled": enabled,
                "cache_path": path, "source": {"source": "local", "path": "/src/" + name}}
               for name, path, enabled in plugins]
    head = "// User settings belong in settings.json.\n// This file is managed automatically.\n" if comment else ""
    return head + json.dumps({"installedPlugins": entries}, indent=2)


def helper_plugin(sb, where=INSTALLED, name="helper", enabled=True):
    """An installed plugin ``name`` with a skill plug-skill and an agent pagent."""
    sb.write({
        where + "/.claude-plugin/plugin.json": json.dumps({"name": name, "version": "1.0.0"}),
        where + "/skills/plug-skill/SKILL.md": skill_md("plug-skill", body("PLUG")),
        where + "/agents/pagent.md": agent_md("pagent", ["plug-skill"]),
        "home/.copilot/config.json": config_json((name, str(sb.root / where), enabled)),
    })


# --------------------------------------------------------------------------- 1. agents

# Measured on 1.0.102 with one agent name in several roots: ~/.copilot/agents wins, then the
# project's .github/agents, then its .claude/agents.
AGENT_CASES = [
    ("github-agent-md", {"project/.github/agents/x.agent.md": agent_md("rev", ["a"])}, "A"),
    ("github-plain-md", {"project/.github/agents/rev.md": agent_md("rev", ["a"])}, "A"),
    ("github-nested", {"project/.github/agents/team/deep/any.md": agent_md("rev", ["a"])}, "A"),
    ("name-is-frontmatter", {"project/.github/agents/rev.agent.md": agent_md("other", ["a"])}, None),
    ("claude-agents", {"project/.claude/agents/rev.md": agent_md("rev", ["a"])}, "A"),
    ("claude-agents-nested", {"project/.claude/agents/sub/rev.md": agent_md("rev", ["a"])}, "A"),
    ("user-agents-nested", {"home/.copilot/agents/deep/x.md": agent_md("rev", ["a"])}, "A"),
    ("nearest-folder-wins", {"project/.github/agents/rev.md": agent_md("rev", ["b"]),
                             "project/sub/.github/agents/rev.md": agent_md("rev", ["a"])}, "A"),
    ("above-the-project-up-to-git-root", {"project/.claude/agents/rev.md": agent_md("rev", ["a"])}, "A"),
    ("user-agents", {"home/.copilot/agents/rev.agent.md": agent_md("rev", ["a"])}, "A"),
    ("github-beats-claude", {"project/.github/agents/rev.agent.md": agent_md("rev", ["a"]),
                             "project/.claude/agents/rev.md": agent_md("rev", ["b"])}, "A"),
    ("user-beats-project", {"project/.github/agents/rev.agent.md": agent_md("rev", ["b"]),
                            "home/.copilot/agents/rev.md": agent_md("rev", ["a"])}, "A"),
    ("codex-role-is-no-agent", {"project/.codex/agents/rev.toml": 'name = "rev"\n'}, None),
    (".agents-agents-not-read", {"project/.agents/agents/rev.md": agent_md("rev", ["a"])}, None),
]


@pytest.mark.parametrize("files,expected", [c[1:] for c in AGENT_CASES], ids=[c[0] for c in AGENT_CASES])
def test_agent_lookup(sandbox, files, expected):
    sb = sandbox(dict(files, **skill("project/.github/skills", "a", "A"), **skill("project/.github/skills", "b", "B")))
    sub = str(sb.project / "sub")  # started in a sub-folder (measured: folders up to the git root count)
    (sb.project / "sub").mkdir(exist_ok=True)
    results = spawn(sb, "rev", env={"COPILOT_PROJECT_DIR": sub}, cwd=sub)
    if expected is None:
        assert all(r.out == "" for r in results), results
    else:
        assert secrets(results[0].flat_context) == ["SECRET-%s" % expected], results[0]


def test_copilot_home_replaces_the_user_folder(sandbox):
    sb = sandbox({"home/elsewhere/agents/rev.md": agent_md("rev", ["a"]),
                  "home/.copilot/agents/rev.md": agent_md("rev", ["b"]),
                  **skill("project/.github/skills", "a", "A"), **skill("project/.github/skills", "b", "B")})
    results = spawn(sb, "rev", env={"COPILOT_HOME": str(sb.home / "elsewhere")})
    assert secrets(results[0].flat_context) == ["SECRET-A"], results[0]


@pytest.mark.parametrize("how", ["installed", "running-plugin"])
def test_plugin_agent_is_plugin_colon_agent(sandbox, how):
    sb = sandbox()
    if how == "installed":
        helper_plugin(sb)
        env = {}
    else:  # --plugin-dir: recorded nowhere; the hook sees only the plugin it runs from
        sb.write({"plug/.claude-plugin/plugin.json": json.dumps({"name": "helper"}),
                  "plug/skills/plug-skill/SKILL.md": skill_md("plug-skill", body("PLUG")),
                  "plug/agents/pagent.md": agent_md("pagent", ["plug-skill"])})
        env = sb.copilot_env(plugin_root=sb.root / "plug")
    results = spawn(sb, "helper:pagent", env=env)
    rebuilt = briefed(results)
    assert rebuilt.agent == "helper:pagent"
    assert list(rebuilt.skills) == ["plug-skill"]
    assert all(r.out == "" for r in spawn(sb, "pagent", env=env))  # a plugin agent needs its namespace


def test_a_disabled_installed_plugin_counts_for_nothing(sandbox):
    sb = sandbox()
    helper_plugin(sb, enabled=False)
    assert all(r.out == "" for r in spawn(sb, "helper:pagent"))


@pytest.mark.parametrize("builtin", ["explore", "task", "general-purpose", "code-review"])
def test_builtin_agent_types_get_nothing(sandbox, builtin):
    sb = sandbox({"project/.github/agents/%s.md" % builtin: agent_md(builtin, ["ghost"])})
    assert all(r.out == "" for r in spawn(sb, builtin))
    assert guard(sb, builtin).out == ""


# --------------------------------------------------------------------------- 2. skills

# Measured on 1.0.102 with one skill name in every root: .github/skills, then .agents/skills,
# then .claude/skills, then ~/.copilot/skills; ~/.agents/skills is personal too (fact 15).
SKILL_ROOTS = ["project/.github/skills", "project/.agents/skills", "project/.claude/skills",
               "home/.copilot/skills", "home/.agents/skills"]


@pytest.mark.parametrize("first", range(len(SKILL_ROOTS)), ids=SKILL_ROOTS)
def test_skill_precedence(sandbox, first):
    files = {"project/.github/agents/rev.md": agent_md("rev", ["same"])}
    for i, root in enumerate(SKILL_ROOTS[first:], first):
        files.update(skill(root, "same", "ROOT%d" % i))
    sb = sandbox(files)
    rebuilt = briefed(spawn(sb, "rev"))
    assert secrets(rebuilt.skills["same"]) == ["SECRET-ROOT%d" % first]


def test_project_skills_from_the_cwd_up_to_the_git_root(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["near", "far"]),
                  **skill("project/sub/.claude/skills", "near", "NEAR"),
                  **skill("project/.github/skills", "near", "ROOT-NEAR"),
                  **skill("project/.agents/skills", "far", "FAR"),
                  **skill("outside/.github/skills", "far", "OUTSIDE")})
    sub = str(sb.project / "sub")
    rebuilt = briefed(spawn(sb, "rev", env={"COPILOT_PROJECT_DIR": sub}, cwd=sub))
    assert secrets(rebuilt.skills["near"]) == ["SECRET-NEAR"]
    assert secrets(rebuilt.skills["far"]) == ["SECRET-FAR"]


def test_the_project_is_copilot_project_dir_not_the_process_cwd(sandbox):
    """A plugin hook runs in the plugin root (fact 17): the project comes from COPILOT_PROJECT_DIR."""
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a"]),
                  **skill("project/.github/skills", "a", "A"),
                  "plug/.github/agents/rev.md": agent_md("rev", ["b"]),
                  **skill("plug/.github/skills", "b", "B")})
    payload = sb.spawn("rev", "copilot", cwd=str(sb.root / "plug"))  # even a misleading payload cwd
    results = sb.run_parts(payload, env=sb.copilot_env(), cwd=sb.root / "plug")
    assert secrets(results[0].flat_context) == ["SECRET-A"], results[0]


@pytest.mark.parametrize("declared,layout,expected", [
    # Copilot knows a skill by its frontmatter name, not its folder (measured on 1.0.102)
    ("fm-name", skill("project/.github/skills", "folder-x", "FMX", fm_name="fm-name"), "FMX"),
    ("folder-y", skill("project/.github/skills", "folder-y", "FY", fm_name="other-name"), None),
    ("nofm", {"project/.github/skills/nofm/SKILL.md": "no frontmatter\nSECRET-NOFM\n"}, None),
    # at any depth, but not inside another skill's folder (measured on 1.0.102)
    ("deep", skill("project/.github/skills/g/a", "b", "DEEP", fm_name="deep"), "DEEP"),
    ("inner", dict(skill("project/.github/skills", "outer", "OUTER"),
                   **skill("project/.github/skills/outer", "inner", "INNER")), None),
], ids=["frontmatter-name", "folder-name-is-not-a-name", "no-frontmatter-is-no-skill", "nested-skill",
        "no-skill-inside-a-skill"])
def test_skills_are_named_by_frontmatter(sandbox, declared, layout, expected):
    sb = sandbox(dict(layout, **{"project/.github/agents/rev.md": agent_md("rev", [declared])}))
    results = spawn(sb, "rev")
    if expected:
        assert secrets(briefed(results).skills[declared]) == ["SECRET-" + expected]
    else:
        assert "status=\"abort\"" in results[0].flat_context, results[0]
        assert guard(sb, "rev").decision == "deny"


@pytest.mark.parametrize("declared", ["plug-skill", "helper:plug-skill"])
def test_installed_plugin_skills(sandbox, declared):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", [declared])})
    helper_plugin(sb)
    rebuilt = briefed(spawn(sb, "rev"))
    assert secrets(rebuilt.skills[declared]) == ["SECRET-PLUG"]


def test_plugin_skills_come_after_project_and_personal(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["plug-skill"]),
                  **skill("home/.agents/skills", "plug-skill", "PERSONAL")})
    helper_plugin(sb)
    assert secrets(briefed(spawn(sb, "rev")).skills["plug-skill"]) == ["SECRET-PERSONAL"]


def test_config_json_without_comments_and_broken_config(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["helper:plug-skill"])})
    helper_plugin(sb)
    data = (sb.home / ".copilot" / "config.json").read_text()
    (sb.home / ".copilot" / "config.json").write_text(data.split("\n", 2)[2])
    assert list(briefed(spawn(sb, "rev")).skills) == ["helper:plug-skill"]
    (sb.home / ".copilot" / "config.json").write_text("{not json")
    results = spawn(sb, "rev")
    assert "status=\"abort\"" in results[0].flat_context
    assert "config.json" in results[0].err


# --------------------------------------------------------------------------- 3. delivery

def test_flat_context_in_part_one_only(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a", "b"]),
                  **skill("project/.github/skills", "a", "A"), **skill("project/.claude/skills", "b", "B")})
    results = spawn(sb, "rev")
    assert len(results) == PARTS
    rebuilt = briefed(results)
    assert rebuilt.skills == {"a": body("A"), "b": body("B")}
    assert rebuilt.dirs["b"] == str(sb.project / ".claude" / "skills" / "b")
    assert set(results[0].data) == {"additionalContext", "systemMessage"}, results[0]
    assert "rev" in results[0].system_message


def test_a_large_briefing_arrives_whole_in_one_context(sandbox):
    big = text_of("BIG", 100 * 1024)
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["big"]),
                  "project/.github/skills/big/SKILL.md": skill_md("big", big)})
    results = spawn(sb, "rev")
    assert len(results[0].flat_context) > 100 * 1024  # no 10,000-character parts under Copilot
    assert briefed(results).skills == {"big": big}
    assert guard(sb, "rev").out == ""


def test_over_the_cap_is_refused_with_size_and_limit(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["big1", "big2"]),
                  "project/.github/skills/big1/SKILL.md": skill_md("big1", text_of("B1", 200 * 1024)),
                  "project/.github/skills/big2/SKILL.md": skill_md("big2", text_of("B2", 100 * 1024))})
    denied = guard(sb, "rev")
    assert denied.decision == "deny", denied
    assert str(300 * 1024) in denied.reason and str(COPILOT_LIMIT) in denied.reason, denied.reason
    assert "Copilot CLI" in denied.reason
    results = spawn(sb, "rev")
    assert rebuild([results[0].flat_context]).aborted
    assert "SECRET" not in results[0].out and "B1 line" not in results[0].out


def test_missing_skill_after_the_guard_gets_the_abort_instruction(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a", "ghost"]),
                  **skill("project/.github/skills", "a", "A")})
    results = spawn(sb, "rev")
    first = results[0]
    assert first.flat_context.startswith('<briefing agent="rev" status="abort">'), first
    assert "STOP" in first.flat_context and "ghost" in first.flat_context
    assert "SECRET-A" not in first.out  # never a partial briefing
    assert "NOT briefed" in first.system_message
    assert all(r.out == "" for r in results[1:])


def test_a_non_declaring_agent_gets_nothing(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev"), **skill("project/.github/skills", "a")})
    assert all(r.out == "" for r in spawn(sb, "rev"))
    assert guard(sb, "rev").out == ""


# --------------------------------------------------------------------------- 4. native skills:

def test_native_entries_copilot_preloads_are_not_injected_again(sandbox):
    """Copilot preloads skills: entries by bare name, disable-model-invocation ones and plugin skills
    included (measured on 1.0.102), so those arrive once, from Copilot."""
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a", "dmi"], native=["a", "dmi", "plug-skill"]),
                  **skill("project/.github/skills", "a", "A"),
                  "project/.github/skills/dmi/SKILL.md": "---\nname: dmi\ndescription: d\n"
                                                         "disable-model-invocation: true\n---\n" + body("DMI")})
    helper_plugin(sb)
    results = spawn(sb, "rev")
    assert all(r.out == "" for r in results), results  # all of it is Copilot's own
    assert guard(sb, "rev").out == ""


def test_native_plugin_colon_skill_is_delivered_because_copilot_skips_it(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", native=["a", "helper:plug-skill"]),
                  **skill("project/.github/skills", "a", "A")})
    helper_plugin(sb)
    rebuilt = briefed(spawn(sb, "rev"))
    assert list(rebuilt.skills) == ["helper:plug-skill"]


def test_a_missing_native_entry_is_refused(sandbox):
    """Copilot itself only logs a warning for a missing skills: entry (fact 5)."""
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", native=["a", "ghost"]),
                  **skill("project/.github/skills", "a", "A")})
    denied = guard(sb, "rev")
    assert denied.decision == "deny"
    assert "briefing: agent 'rev' references unknown skill(s): ghost" in denied.reason
    assert "status=\"abort\"" in spawn(sb, "rev")[0].flat_context


# --------------------------------------------------------------------------- 5. the guard

def test_guard_denies_a_missing_skill_with_the_reason(sandbox):
    sb = sandbox({"project/.github/agents/rev.agent.md": agent_md("rev", ["a", "ghost", "ghost2"]),
                  **skill("project/.github/skills", "a")})
    denied = guard(sb, "rev")
    assert denied.data["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert denied.decision == "deny"
    assert denied.reason.startswith("briefing: agent 'rev' references unknown skill(s): ghost, ghost2")
    assert ".github/agents/rev.agent.md" in denied.reason


def test_guard_passes_a_healthy_agent_and_never_changes_the_call(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a"]), **skill("project/.github/skills", "a")})
    assert guard(sb, "rev").out == ""


def test_guard_also_reads_the_native_copilot_tool_name(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["ghost"])})
    payload = sb.guard("rev", "copilot")
    payload["tool_name"] = "task"
    assert sb.run(payload, env=sb.copilot_env()).decision == "deny"


def test_unreadable_agent_file_is_never_a_deny(sandbox):
    sb = sandbox({"project/.github/agents/rev.md": "---\nname: rev\nbriefing:\n  skills: [a\n---\n"})
    result = guard(sb, "rev")
    assert result.out == "", result


# --------------------------------------------------------------------------- 6. pre-flight, doctor, hooks.json

def test_preflight_names_a_failing_copilot_agent(sandbox):
    sb = sandbox({"project/.github/agents/team/rev.agent.md": agent_md("rev", ["ghost"]),
                  "project/.codex/agents/r.toml": '# briefing: skills = ["cx-ghost"]\nname = "r"\n'})
    out = sb.run(sb.payload("SessionStart", "copilot"), args=("--part", 1), env=sb.copilot_env())
    message = out.system_message
    assert "Copilot CLI agent 'rev'" in message and "ghost" in message, out
    assert ".github/agents/team/rev.agent.md" in message
    assert "cx-ghost" not in message  # a Codex role is no Copilot agent
    assert out.flat_context is None and out.context is None  # never context for the model
    healthy = sandbox.box  # the same machine, repaired
    (healthy.project / ".github" / "agents" / "team" / "rev.agent.md").write_text(agent_md("rev"))
    assert sb.run(sb.payload("SessionStart", "copilot"), args=("--part", 1), env=sb.copilot_env()).out == ""


def test_doctor_harness_copilot(sandbox):
    sb = sandbox({"project/.github/agents/rev.agent.md": agent_md("rev", ["a", "ghost"]),
                  "project/.claude/agents/both.md": agent_md("both", ["a"]),
                  **skill("project/.github/skills", "a")})
    result = sb.doctor("--harness", "copilot")
    assert result.rc == 1, result
    for needle in ("rev", ".github/agents/rev.agent.md", "ghost", "both", "frontmatter name"):
        assert needle in result.out, (needle, result)
    data = json.loads(sb.doctor("--harness", "copilot", "--json").out)
    rows = {a["agent"]: a for a in data["agents"]}
    assert set(rows) == {"rev", "both"} and {a["harness"] for a in data["agents"]} == {"copilot"}
    assert rows["both"]["status"] == "ok" and rows["rev"]["status"] == "FAIL"
    assert rows["both"]["limit_bytes"] == COPILOT_LIMIT
    check = [c for c in data["checks"] if c["name"] == "copilot-hooks"]
    assert check and check[0]["status"] == "ok", data["checks"]


def test_doctor_show_copilot(sandbox):
    sb = sandbox({"project/.github/agents/rev.agent.md": agent_md("rev", ["a"]), **skill("project/.github/skills", "a")})
    result = sb.doctor("--harness", "copilot", "--show", "rev")
    assert result.rc == 0, result
    assert "copilot subagent" in result.out and "SECRET-a" in result.out and "one context" in result.out


def _copilot_copy(sb, mutate, manifest=True):
    """A copy of the plugin whose Copilot hooks file is changed by ``mutate``; returns the hook."""
    program = _plugin_copy(sb, lambda hooks: None)
    target = "hooks.copilot.json" if manifest else "hooks.json"
    hooks = json.loads((REPO / "hooks" / target).read_text())
    mutate(hooks["hooks"])
    sb.write({"plugin/hooks/" + target: json.dumps(hooks, indent=2)})
    if not manifest:
        (sb.path("plugin/.github/plugin/plugin.json")).unlink()
    return program


def copilot_check(sb, program):
    result = sb.run(stdin="", args=("doctor", "--harness", "copilot", "--json"), program=program, check=False)
    check, = [c for c in json.loads(result.out)["checks"] if c["name"] == "copilot-hooks"]
    return result, check


@pytest.mark.parametrize("manifest", [True, False], ids=["hooks.copilot.json", "fallback-hooks.json"])
@pytest.mark.parametrize("mutate,needle", [
    (lambda h: h["SessionStart"][0].__setitem__("matcher", ""), "empty matcher"),
    (lambda h: h["SubagentStart"][0].__setitem__("matcher", "*"), "never fires"),
    (lambda h: h["PreToolUse"][0].__setitem__("matcher", "spawn_agent"), "task tool"),
], ids=["empty-matcher", "star-on-subagent-start", "guard-misses-task"])
def test_the_hooks_file_copilot_reads_is_checked(sandbox, mutate, needle, manifest):
    sb = sandbox()
    result, check = copilot_check(sb, _copilot_copy(sb, mutate, manifest))
    assert check["status"] == "FAIL" and needle in check["detail"], check
    assert result.rc == 1


def test_copilot_file_must_not_take_parts(sandbox):
    def two(hooks):
        hooks["SubagentStart"][0]["hooks"].append(dict(hooks["SubagentStart"][0]["hooks"][0]))
        hooks["SubagentStart"][0]["hooks"][1]["command"] += " --part 2"
    sb = sandbox()
    _, check = copilot_check(sb, _copilot_copy(sb, two))
    assert check["status"] == "FAIL" and "one handler without --part" in check["detail"], check


def test_without_the_copilot_manifest_copilot_reads_hooks_json_and_the_doctor_warns(sandbox):
    sb = sandbox()
    program = _copilot_copy(sb, lambda hooks: None, manifest=False)
    # The copy itself is one made for Claude Code alone: nothing of Copilot's to warn about (issue 44) ...
    result, check = copilot_check(sb, program)
    assert check["status"] == "ok" and "no Copilot CLI plugin" in check["detail"], check
    # ... until Copilot CLI loads it: then the installed check says what it runs.
    sb.write({"home/.copilot/config.json": json.dumps({"installedPlugins": [
        {"name": "briefing", "enabled": True, "cache_path": str(sb.path("plugin"))}]})})
    result = sb.run(stdin="", args=("doctor", "--harness", "copilot", "--json"), program=program, check=False)
    check, = [c for c in json.loads(result.out)["checks"] if c["name"] == "installed"]
    assert check["status"] == "WARN" and "hooks/hooks.json" in check["detail"], check
    assert "%d processes" % PARTS in check["detail"]
    assert result.rc == 0


def test_copilot_reads_its_own_manifest_and_hooks_file():
    """Copilot reads plugin.json, .plugin/, .github/plugin/ before .claude-plugin/ (fact 16; measured:
    with .github/plugin/plugin.json naming hooks/hooks.copilot.json, only that file runs)."""
    manifest = json.loads((REPO / ".github" / "plugin" / "plugin.json").read_text())
    assert manifest["name"] == "briefing" and manifest["hooks"] == "hooks/hooks.copilot.json"
    for earlier in ("plugin.json", ".plugin/plugin.json"):
        assert not (REPO / earlier).exists()  # it would win over .github/plugin/plugin.json
    hooks = json.loads((REPO / "hooks" / "hooks.copilot.json").read_text())["hooks"]
    guard_command = json.loads((REPO / "hooks" / "hooks.codex.json").read_text())[
        "hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert sorted(hooks) == ["PreToolUse", "SessionStart", "SubagentStart"]
    for event, groups in hooks.items():
        # PreToolUse: the guard, and the handler of every other tool, which briefs a compacted
        # agent again (issue 26; tests/test_compaction_copilot.py)
        assert [g.get("matcher") for g in groups] == (
            ["Agent", "(?!(?:Agent|Task|task)$).*"] if event == "PreToolUse" else [None])
        for group in groups:
            (handler,) = group["hooks"]
            assert handler["command"] == guard_command  # the same program as every other file, no --part


@pytest.mark.parametrize("event", ["SubagentStart", "PreToolUse", "SessionStart"])
def test_copilot_file_commands_run_as_registered(sandbox, event):
    """Each handler of hooks.copilot.json, run as a process exactly as registered, does its whole job."""
    from conftest import HOOK_PYTHON
    from hook_commands import posix_command, run_registered
    sb = sandbox({"project/.github/agents/rev.md": agent_md("rev", ["a"] if event == "SubagentStart" else ["ghost"]),
                  **skill("project/.github/skills", "a", "A")})
    group = json.loads((REPO / "hooks" / "hooks.copilot.json").read_text())["hooks"][event][0]  # the guard
    payload = {"SubagentStart": sb.spawn("rev", "copilot"), "PreToolUse": sb.guard("rev", "copilot"),
               "SessionStart": sb.payload("SessionStart", "copilot")}[event]
    proc = run_registered(posix_command(group["hooks"][0]), REPO, payload, sb.env(**sb.copilot_env()), REPO,
                          HOOK_PYTHON)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    out = json.loads(proc.stdout.decode())
    if event == "SubagentStart":
        assert secrets(rebuild([out["additionalContext"]]).skills["a"]) == ["SECRET-A"]
    elif event == "PreToolUse":
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert "ghost" in out["systemMessage"]


def test_the_shipped_hooks_json_is_valid_for_copilot():
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    for event, groups in hooks.items():
        for group in groups:
            assert group.get("matcher") != "", event  # Copilot rejects the whole file
            if event == "SubagentStart":
                assert group.get("matcher") in (None, ".*")  # "*" never fires under Copilot


def test_the_bundled_copilot_example(sandbox):
    """examples/copilot: demo-briefed gets the phrase, demo-control nothing, the doctor is healthy."""
    sb = sandbox()
    example = REPO / "examples" / "copilot"
    shown = sb.doctor("--cwd", str(example), "--harness", "copilot", "--show", "demo-briefed")
    assert shown.rc == 0 and "marram-beacon-2264" in shown.out, shown
    assert sb.doctor("--cwd", str(example), "--harness", "copilot", "--show", "demo-control").rc == 1
    assert sb.doctor("--cwd", str(example), "--harness", "copilot").rc == 0
