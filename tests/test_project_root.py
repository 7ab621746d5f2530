"""Where is the project (issue 18): after one ``cd``, the verdicts stay those of the project.

Claude Code 2.1.328 keeps the folder it was started in as the project for the whole session
and gives it to every hook as ``CLAUDE_PROJECT_DIR``; after the model runs ``cd packages/web/src``
in the Bash tool, the payload ``cwd`` (and the hook's working directory) is that sub-folder
(shared/facts/claude-code.md 3.7.1). Measured for this issue: Claude Code reads ``.claude/`` in
the project and every folder above it up to the nearest ``.git`` (nearest wins), never in the
folders between the project and the cwd. Codex keeps its session cwd through a shell ``cd``.
"""
import json
import re

import pytest

from conftest import agent_md, role_toml, skill_md
from framing import rebuild

SUB = "packages/web/src"
ALPHA = "Alpha body: ALPHA-MARKER-7f3a.\n"
TOOL = "Tool body: TOOL-MARKER-c41e.\n"


def slug(path):
    """Claude Code's folder name under ~/.claude/projects: every non-alphanumeric character is '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def project_files():
    return {
        "project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha"]),
        "project/.claude/agents/team/broken.md": agent_md("broken", ["alpha", "ghost-skill"]),
        "project/.claude/agents/native-broken.md": agent_md("native-broken", native=["ghost-native"]),
        "project/.claude/agents/plugged.md": agent_md("plugged", ["helper:tool"]),
        "project/.claude/skills/alpha/SKILL.md": skill_md("alpha", ALPHA),
        # Enabled in the project's settings, installed for this project only.
        "project/.claude/settings.json": json.dumps({"enabledPlugins": {"helper@mkt": True}}),
        "plugins/helper/.claude-plugin/plugin.json": json.dumps({"name": "helper", "version": "1.0.0"}),
        "plugins/helper/skills/tool/SKILL.md": skill_md("tool", TOOL),
        "project/%s/index.js" % SUB: "x\n",
    }


@pytest.fixture
def sb(sandbox):
    box = sandbox(project_files())
    box.write({"home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {
        "helper@mkt": [{"scope": "project", "projectPath": str(box.project),
                        "installPath": str(box.path("plugins/helper")), "version": "1.0.0"}]}})})
    return box


def at(sb, where):
    return str(sb.project if where == "root" else sb.project / SUB)


def claude_env(sb):
    return {"CLAUDE_PROJECT_DIR": str(sb.project)}


# --------------------------------------------------------------------------------------------
# Every event: from a sub-folder, with CLAUDE_PROJECT_DIR at the project, exactly as from the root
# --------------------------------------------------------------------------------------------

def guard(sb, where, agent, env):
    return sb.run(sb.guard(agent, cwd=at(sb, where)), env=env)


def spawn(sb, where, agent, env):
    return sb.run_parts(sb.spawn(agent, cwd=at(sb, where)), env=env)


def session_agent(sb, where, agent, env):
    return sb.run_parts(sb.payload("SessionStart", cwd=at(sb, where), source="startup", agent_type=agent),
                        env=env)


def preflight(sb, where, env):
    return sb.run(sb.payload("SessionStart", cwd=at(sb, where), source="startup"), env=env)


def briefed(results, agent, bodies):
    got = rebuild([r.context for r in results if r.context is not None])
    assert not got.aborted and got.agent == agent, results
    assert {n.split(":")[-1]: b for n, b in got.skills.items()} == bodies
    return True


def aborted(results, agent, missing):
    contexts = [r.context for r in results if r.context is not None]
    assert len(contexts) == 1, results
    got = rebuild(contexts)
    assert got.aborted and got.agent == agent
    assert missing in contexts[0] and "ALPHA-MARKER" not in contexts[0]
    return True


VERDICTS = [
    ("guard briefs", lambda sb, w, e: guard(sb, w, "reviewer", e).out == ""),
    ("guard refuses", lambda sb, w, e: "ghost-skill" in (guard(sb, w, "broken", e).reason or "")),
    ("guard refuses a native skill", lambda sb, w, e: "ghost-native" in (
        guard(sb, w, "native-broken", e).reason or "")),
    ("subagent briefed", lambda sb, w, e: briefed(spawn(sb, w, "reviewer", e), "reviewer", {"alpha": ALPHA})),
    ("subagent briefed from a project-scoped plugin", lambda sb, w, e: briefed(
        spawn(sb, w, "plugged", e), "plugged", {"tool": TOOL})),
    ("subagent aborted", lambda sb, w, e: aborted(spawn(sb, w, "broken", e), "broken", "ghost-skill")),
    ("--agent session briefed", lambda sb, w, e: briefed(
        session_agent(sb, w, "reviewer", e), "reviewer", {"alpha": ALPHA})),
    ("--agent session aborted", lambda sb, w, e: aborted(
        session_agent(sb, w, "broken", e), "broken", "ghost-skill")),
    ("pre-flight names both broken agents", lambda sb, w, e: all(
        s in (preflight(sb, w, e).system_message or "") for s in ("broken", "ghost-skill", "ghost-native"))),
]


@pytest.mark.parametrize("name,check", VERDICTS, ids=[v[0] for v in VERDICTS])
@pytest.mark.parametrize("signal", ["CLAUDE_PROJECT_DIR", "transcript"])
@pytest.mark.parametrize("where", ["root", "sub-folder"])
def test_same_verdict_from_root_and_sub_folder(sb, name, check, signal, where):
    if signal == "CLAUDE_PROJECT_DIR":
        env = claude_env(sb)
    else:  # no variable: the transcript's project folder names the project
        env = {}
        sb.transcript = lambda harness: str(sb.home / ".claude" / "projects" / slug(sb.project) / "s.jsonl")
    assert check(sb, where, env)


@pytest.mark.parametrize("name,run", [
    ("guard", lambda sb, w, e: [guard(sb, w, "broken", e)]),
    ("subagent", lambda sb, w, e: spawn(sb, w, "reviewer", e)),
    ("subagent abort", lambda sb, w, e: spawn(sb, w, "broken", e)),
    ("--agent session", lambda sb, w, e: session_agent(sb, w, "reviewer", e)),
    ("pre-flight", lambda sb, w, e: [preflight(sb, w, e)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_sub_folder_output_is_byte_for_byte_the_roots(sb, name, run):
    from_root = [r.out for r in run(sb, "root", claude_env(sb))]
    assert any(from_root), "nothing to compare: the root run printed nothing"
    assert [r.out for r in run(sb, "sub-folder", claude_env(sb))] == from_root


# --------------------------------------------------------------------------------------------
# Fallbacks without CLAUDE_PROJECT_DIR
# --------------------------------------------------------------------------------------------

def test_without_any_signal_the_cwd_is_the_project(sb, hook):
    """The last resort: no variable, and a transcript that names no ancestor. The cwd is then taken
    as the folder claude started in: .claude/ up to the .git is still read, but the settings are
    the cwd's, where the project-scoped plugin is not enabled."""
    assert hook.Machine(at(sb, "sub-folder"), {"HOME": str(sb.home)}).project("claude").source == "cwd"
    assert "ghost-skill" in guard(sb, "sub-folder", "broken", {}).reason
    assert guard(sb, "root", "plugged", {}).out == ""
    assert "helper:tool" in guard(sb, "sub-folder", "plugged", {}).reason


def test_transcript_slug_names_the_nearest_match_only_among_ancestors(sb, hook):
    # A folder elsewhere with the same slug as the project cannot be picked: only ancestors are tried.
    transcript = str(sb.home / ".claude" / "projects" / slug(sb.project) / "s.jsonl")
    machine = hook.Machine(str(sb.project / SUB), {"HOME": str(sb.home)}, transcript)
    project = machine.project("claude")
    assert (project.folder, project.source) == (str(sb.project), "transcript")
    elsewhere = hook.Machine(str(sb.home), {"HOME": str(sb.home)}, transcript).project("claude")
    assert (elsewhere.folder, elsewhere.source) == (str(sb.home), "cwd")


@pytest.mark.parametrize("value", ["", "relative/path", "/does/not/exist"])
def test_unusable_claude_project_dir_falls_back(sb, hook, value):
    machine = hook.Machine(str(sb.project / SUB), {"HOME": str(sb.home), "CLAUDE_PROJECT_DIR": value})
    assert machine.project("claude").source == "cwd"


@pytest.fixture(scope="module")
def hook():
    from conftest import load_hook
    return load_hook("briefing_preload_project_root")


# --------------------------------------------------------------------------------------------
# What lies between the project and the cwd, and above the project (measured on 2.1.328)
# --------------------------------------------------------------------------------------------

NESTED = {
    "project/packages/web/.claude/agents/web.md": agent_md("web", ["web-only"]),
    "project/packages/web/.claude/skills/web-only/SKILL.md": skill_md("web-only", "web body\n"),
    "project/packages/web/.claude/skills/alpha/SKILL.md": skill_md("alpha", "nearer alpha\n"),
    "project/.claude/agents/uses-web.md": agent_md("uses-web", ["web-only"]),
    ".claude/skills/above-git/SKILL.md": skill_md("above-git", "above the repository\n"),
    "project/.claude/agents/uses-above.md": agent_md("uses-above", ["above-git"]),
}


def test_after_a_cd_folders_between_project_and_cwd_are_not_read(sb):
    """Claude Code answered "Agent type 'web' not found", and preloaded no skill from there."""
    sb.write(NESTED)
    env = claude_env(sb)
    assert guard(sb, "sub-folder", "web", env).out == ""  # unknown to Claude Code: not ours to judge
    assert all(r.out == "" for r in spawn(sb, "sub-folder", "web", env))
    assert "web-only" in (guard(sb, "sub-folder", "uses-web", env).reason or "")
    assert briefed(spawn(sb, "sub-folder", "reviewer", env), "reviewer", {"alpha": ALPHA})


def test_started_in_a_sub_folder_reads_up_to_the_git_root_nearest_first(sb):
    """CLAUDE_PROJECT_DIR is the sub-folder when claude starts there; .claude/ above it counts."""
    sb.write(NESTED)
    env = {"CLAUDE_PROJECT_DIR": str(sb.project / "packages" / "web")}
    assert briefed(spawn(sb, "sub-folder", "web", env), "web", {"web-only": "web body\n"})
    assert briefed(spawn(sb, "sub-folder", "uses-web", env), "uses-web", {"web-only": "web body\n"})
    # The nearest .claude/skills wins a name both hold.
    assert briefed(spawn(sb, "sub-folder", "reviewer", env), "reviewer", {"alpha": "nearer alpha\n"})
    # Nothing above the folder holding .git is read.
    assert "above-git" in (guard(sb, "sub-folder", "uses-above", env).reason or "")


# --------------------------------------------------------------------------------------------
# Codex: the payload cwd is the session cwd; CLAUDE_PROJECT_DIR is not its business
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["root", "sub-folder"])
def test_codex_walks_from_the_payload_cwd_and_ignores_claude_project_dir(sb, where):
    sb.write({"project/.codex/agents/r.toml": role_toml("r", ["alpha", "ghost-skill"]),
              "project/.codex/skills/alpha/SKILL.md": skill_md("alpha", ALPHA)})
    env = {"CLAUDE_PROJECT_DIR": str(sb.home)}
    r = sb.run(sb.guard("r", harness="codex", cwd=at(sb, where)), env=env)
    assert r.decision == "deny" and "ghost-skill" in r.reason, r


# --------------------------------------------------------------------------------------------
# The doctor says which folder it took as the project, and why
# --------------------------------------------------------------------------------------------

def doctor_json(sb, *args, env=None):
    r = sb.doctor("--json", *args, env=env)
    assert r.rc in (0, 1), r
    return r, json.loads(r.out)


def test_doctor_from_a_sub_folder_reports_the_projects_agents(sb):
    r, data = doctor_json(sb, "--cwd", str(sb.project / SUB), "--harness", "claude")
    agents = {a["agent"]: a["status"] for a in data["agents"]}
    # "plugged" fails: a session started here reads this folder's settings, where helper is not enabled.
    assert agents == {"reviewer": "ok", "broken": "FAIL", "native-broken": "FAIL", "plugged": "FAIL"}, data
    claude = data["projects"]["claude"]
    # Claude Code started here would take this folder as the project and read up to the .git.
    assert claude["folder"] == str(sb.project / SUB) and claude["source"] == "cwd"
    assert claude["folders"] == [str(sb.project / SUB), str(sb.project / "packages" / "web"),
                                 str(sb.project / "packages"), str(sb.project)]
    text = sb.doctor("--cwd", str(sb.project / SUB), "--harness", "claude")
    assert "project claude" in text.out and "CLAUDE_PROJECT_DIR is not set" in text.out, text
    assert str(sb.project) in text.out.split("reads", 1)[1], text


def test_doctor_takes_claude_project_dir_when_the_cwd_is_inside_it(sb):
    _, data = doctor_json(sb, "--cwd", str(sb.project / SUB), env=claude_env(sb))
    claude = data["projects"]["claude"]
    assert (claude["folder"], claude["source"], claude["folders"]) == (
        str(sb.project), "CLAUDE_PROJECT_DIR", [str(sb.project)])
    assert "$CLAUDE_PROJECT_DIR" in claude["why"]
    codex = data["projects"]["codex"]
    assert (codex["folder"], codex["source"]) == (str(sb.project), "cwd")
    text = sb.doctor("--cwd", str(sb.project / SUB), env=claude_env(sb))
    assert "$CLAUDE_PROJECT_DIR" in text.out, text


def test_doctor_ignores_claude_project_dir_that_does_not_hold_the_cwd(sb):
    _, data = doctor_json(sb, "--cwd", str(sb.project), env={"CLAUDE_PROJECT_DIR": str(sb.home)})
    assert data["projects"]["claude"]["folder"] == str(sb.project)
    assert data["projects"]["claude"]["source"] == "cwd"


@pytest.mark.parametrize("files,enabled", [
    ({"project/.claude/settings.json": True}, False),  # the repository's shared settings: not read
    ({"project/.claude/settings.local.json": True}, True),  # the repository's local settings: read
    ({"project/packages/web/.claude/settings.local.json": True}, True),  # the project's own
    ({"project/packages/web/.claude/settings.json": True}, True),
    ({"project/.claude/settings.local.json": True,
      "project/packages/web/.claude/settings.local.json": False}, True),  # the repository's local wins
    ({"project/.claude/settings.local.json": False,
      "project/packages/web/.claude/settings.local.json": True}, False),
], ids=["root-shared", "root-local", "project-local", "project-shared", "root-local-wins-on", "root-local-wins-off"])
def test_settings_of_a_session_started_in_a_sub_folder(sandbox, files, enabled):
    """Measured on 2.1.328 (claude started in packages/web/src... of a repository, enabledPlugins of a
    user-scoped plugin switched off in the user settings)."""
    sb = sandbox({"project/.claude/agents/plugged.md": agent_md("plugged", ["helper:tool"]),
                  "plugins/helper/.claude-plugin/plugin.json": json.dumps({"name": "helper"}),
                  "plugins/helper/skills/tool/SKILL.md": skill_md("tool", TOOL),
                  "home/.claude/settings.json": json.dumps({"enabledPlugins": {"helper@mkt": False}})})
    sb.write({"home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {
        "helper@mkt": [{"scope": "user", "installPath": str(sb.path("plugins/helper")), "version": "1"}]}})})
    sb.write({path: json.dumps({"enabledPlugins": {"helper@mkt": value}}) for path, value in files.items()})
    env = {"CLAUDE_PROJECT_DIR": str(sb.project / "packages" / "web")}
    r = guard(sb, "sub-folder", "plugged", env)
    assert (r.out == "") is enabled, r


def test_an_install_scoped_to_the_repository_counts_for_a_session_started_below_it(sb):
    """Measured on 2.1.328: `claude plugin install --scope project` at the root, claude started in
    packages/web/src with the plugin enabled in that folder's settings: the plugin's skills load."""
    started = sb.project / SUB
    assert "helper:tool" in (guard(sb, "sub-folder", "plugged", {"CLAUDE_PROJECT_DIR": str(started)}).reason or "")
    sb.write({"project/%s/.claude/settings.json" % SUB: json.dumps({"enabledPlugins": {"helper@mkt": True}})})
    assert guard(sb, "sub-folder", "plugged", {"CLAUDE_PROJECT_DIR": str(started)}).out == ""
