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
