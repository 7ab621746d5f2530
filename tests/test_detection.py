"""Which harness sent a payload, when the layouts overlap (issue 19, defect 5).

One agent name, ``twin``, exists in both harnesses with a skill of its own on
each side, so the briefing that arrives says which harness the hook decided
on. Signals are taken from the strongest down: a payload key only one harness
sends, a variable only one harness sets for its hooks, the harness's own
transcript folder (deepest match), the transcript's path fragment (last match).
"""
import pytest

from conftest import agent_md, role_toml, skill_md
from framing import rebuild

TWIN = {
    "project/.claude/agents/twin.md": agent_md("twin", ["cc-skill"]),
    "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", "SECRET-CC\n"),
    "project/.codex/agents/twin.toml": role_toml("twin", ["cx-skill"]),
    "project/.codex/skills/cx-skill/SKILL.md": skill_md("cx-skill", "SECRET-CX\n"),
}


def decided(results):
    """'claude', 'codex' or None, from what the parts delivered."""
    text = "".join(r.out for r in results)
    assert not ("SECRET-CC" in text and "SECRET-CX" in text), results
    if "SECRET-CC" in text:
        assert set(rebuild([r.context for r in results if r.context]).skills) == {"cc-skill"}
        return "claude"
    if "SECRET-CX" in text:
        return "codex"
    return None


# (layout, CODEX_HOME, CLAUDE_CONFIG_DIR, transcript, payload extras, env extras, expected)
CASES = [
    # dotfiles: CODEX_HOME is HOME itself, so it contains the Claude Code config folder
    ("codex-home-is-home", "home", None, "home/.claude/projects/-project/s.jsonl", {}, {}, "claude"),
    # dotfiles: CODEX_HOME holds the Claude Code config folder
    ("claude-dir-inside-codex-home", "home/dotfiles", "home/dotfiles/claude",
     "home/dotfiles/claude/projects/-project/s.jsonl", {}, {}, "claude"),
    # a Claude Code config folder under a path that contains /.codex/
    ("claude-dir-under-dot-codex", None, "home/.codex/claude",
     "home/.codex/claude/projects/-project/s.jsonl", {}, {}, "claude"),
    # and the reverse: a Codex home under a path that contains /.claude/
    ("codex-home-under-dot-claude", "home/.claude/codex", None,
     "home/.claude/codex/sessions/2026/12/01/rollout-x.jsonl", {}, {}, "codex"),
    # no transcript at all: the variable only Claude Code sets for its hooks decides
    ("claude-project-dir", None, None, None, {}, {"CLAUDE_PROJECT_DIR": "project"}, "claude"),
    # an empty CLAUDE_PROJECT_DIR (a Codex started from Claude Code's Bash tool) says nothing
    ("empty-claude-project-dir", None, None, "home/.codex/sessions/2026/12/01/rollout-x.jsonl",
     {}, {"CLAUDE_PROJECT_DIR": ""}, "codex"),
    # turn_id, which only Codex sends, beats every path
    ("turn-id-beats-paths", "home", None, "home/.claude/projects/-project/s.jsonl",
     {"turn_id": "t-1"}, {"CLAUDE_PROJECT_DIR": "project"}, "codex"),
    # transcript fragments only: the last one in the path wins
    ("fragment-last-wins-claude", None, None, "/elsewhere/.codex/sessions/x/.claude/projects/p/s.jsonl",
     {}, {}, "claude"),
    ("fragment-last-wins-codex", None, None, "/elsewhere/.claude/projects/x/.codex/sessions/s.jsonl",
     {}, {}, "codex"),
]


@pytest.mark.parametrize("layout,codex_home,claude_dir,transcript,extra,env,expected", CASES,
                         ids=[c[0] for c in CASES])
def test_overlapping_layouts_pick_the_right_harness(sandbox, layout, codex_home, claude_dir,
                                                     transcript, extra, env, expected):
    sb = sandbox(TWIN)
    run_env = {k: (str(sb.path(v)) if v else v) for k, v in env.items()}
    if codex_home:
        run_env["CODEX_HOME"] = str(sb.path(codex_home))
    if claude_dir:
        run_env["CLAUDE_CONFIG_DIR"] = str(sb.path(claude_dir))
    payload = sb.spawn("twin")
    if transcript is None:
        del payload["transcript_path"]
    else:
        payload["transcript_path"] = transcript if transcript.startswith("/") else str(sb.path(transcript))
    payload.update(extra)
    assert decided(sb.run_parts(payload, env=run_env)) == expected


@pytest.mark.parametrize("tool,field,expected", [
    ("Agent", "subagent_type", "claude"),
    ("Task", "subagent_type", "claude"),
    ("spawn_agent", "agent_type", "codex"),
    ("collaborationspawn_agent", "agent_type", "codex"),
])
def test_the_guard_knows_the_harness_by_its_spawn_tool(sandbox, tool, field, expected):
    files = dict(TWIN)
    # each side's twin declares a skill that only exists on the other side: a deny names it
    files["project/.claude/agents/twin.md"] = agent_md("twin", ["cx-skill"])
    files["project/.codex/agents/twin.toml"] = role_toml("twin", ["cc-skill"])
    sb = sandbox(files)
    payload = sb.guard("twin")
    payload.update(tool_name=tool, tool_input={field: "twin", "prompt": "p"})
    result = sb.run(payload)
    assert result.decision == "deny", result
    assert ("cx-skill" if expected == "claude" else "cc-skill") in result.reason, result


# --- Copilot CLI, the third harness (issue 12) ----------------------------------------------
# Copilot sets CLAUDE_PROJECT_DIR and CLAUDE_PLUGIN_ROOT for a Claude Code plugin's hooks, and its
# SubagentStart payload has no hook_event_name (copilot-cli.md facts 13, 17). Each side's twin
# declares a skill of its own, so what arrives says which harness the hook decided on.

TRIPLET = dict(TWIN, **{
    "project/.github/agents/twin.agent.md": agent_md("twin", ["cp-skill"]),
    "project/.github/skills/cp-skill/SKILL.md": skill_md("cp-skill", "SECRET-CP\n"),
})


def secret_of(results):
    text = "".join(r.out for r in results)
    found = [s for s in ("SECRET-CC", "SECRET-CX", "SECRET-CP") if s in text]
    assert len(found) <= 1, results
    return {"SECRET-CC": "claude", "SECRET-CX": "codex", "SECRET-CP": "copilot"}.get(found[0]) if found else None


# (case, payload harness, env: "copilot" = what Copilot sets, "inherited" = only COPILOT_CLI=1, as in
# a Claude Code or Codex started from Copilot's shell), expected
SPAWNS = [
    ("copilot-hybrid-payload", "copilot", "copilot", "copilot"),
    ("copilot-hybrid-payload-without-env", "copilot", None, "copilot"),
    ("claude-started-from-copilot", "claude", "inherited", "claude"),
    ("claude-with-claude-env", "claude", "claude", "claude"),
    ("codex-started-from-copilot", "codex", "inherited", "codex"),
]


@pytest.mark.parametrize("sender,env,expected", [c[1:] for c in SPAWNS], ids=[c[0] for c in SPAWNS])
def test_copilot_is_told_apart_at_spawn(sandbox, sender, env, expected):
    sb = sandbox(TRIPLET)
    run_env = {"copilot": sb.copilot_env(), "inherited": {"COPILOT_CLI": "1"},
               "claude": {"CLAUDE_PROJECT_DIR": str(sb.project)}, None: {}}[env]
    if env == "inherited" and sender == "claude":
        run_env["CLAUDE_PROJECT_DIR"] = str(sb.project)
    if sender == "codex":
        run_env["CODEX_HOME"] = str(sb.codex_home)
    results = sb.run_parts(sb.spawn("twin", sender), env=run_env)
    assert secret_of(results) == expected, results
    if expected == "copilot":
        assert results[0].flat_context and results[0].context is None, results[0]
    elif expected is not None:
        assert results[0].context and "additionalContext" not in results[0].data, results[0]


# (case, tool_name, the tool_input field naming the agent, payload harness, env, expected)
GUARDS = [
    ("copilot-agent-tool", "Agent", "agent_type", "copilot", "copilot", "copilot"),
    ("copilot-agent-tool-without-env", "Agent", "agent_type", "copilot", None, "copilot"),
    ("copilot-task-tool", "task", "agent_type", "copilot", "copilot", "copilot"),
    ("claude-started-from-copilot", "Agent", "subagent_type", "claude", "inherited", "claude"),
    ("claude-agent-tool", "Agent", "subagent_type", "claude", "claude", "claude"),
    ("codex-started-from-copilot", "spawn_agent", "agent_type", "codex", "inherited", "codex"),
]


@pytest.mark.parametrize("tool,field,sender,env,expected", [c[1:] for c in GUARDS], ids=[c[0] for c in GUARDS])
def test_copilot_is_told_apart_at_the_guard(sandbox, tool, field, sender, env, expected):
    files = dict(TRIPLET)
    # each side's twin declares a skill that only exists elsewhere: the deny names whose twin it was
    files["project/.claude/agents/twin.md"] = agent_md("twin", ["only-cc"])
    files["project/.codex/agents/twin.toml"] = role_toml("twin", ["only-cx"])
    files["project/.github/agents/twin.agent.md"] = agent_md("twin", ["only-cp"])
    sb = sandbox(files)
    run_env = {"copilot": sb.copilot_env(), "inherited": {"COPILOT_CLI": "1"},
               "claude": {"CLAUDE_PROJECT_DIR": str(sb.project)}, None: {}}[env]
    payload = sb.guard("twin", sender)
    payload.update(tool_name=tool, tool_input={field: "twin", "prompt": "p"})
    result = sb.run(payload, env=run_env)
    assert result.decision == "deny", result
    assert {"claude": "only-cc", "codex": "only-cx", "copilot": "only-cp"}[expected] in result.reason, result


@pytest.mark.parametrize("sender", ["claude", "codex"])
def test_a_claude_or_codex_subagent_start_is_never_taken_for_copilot(sandbox, sender):
    """Only Copilot's SubagentStart lacks hook_event_name; a payload with one keeps its event."""
    sb = sandbox(TRIPLET)
    payload = sb.spawn("twin", sender)
    results = sb.run_parts(payload, env={"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(sb.project)})
    assert secret_of(results) == sender, results
