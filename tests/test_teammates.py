"""Agent-team teammates (issue 31): briefed like any subagent, and like ``claude --agent`` in a pane.

Measured in Claude Code 2.1.328 (facts/rendering.md, "Agent teams"; tests/e2e/test_claude_teams.py):
an in-process teammate is a named ``Agent`` call (``name``, and the ignored ``team_name`` and
``mode``); PreToolUse ``Agent`` and SubagentStart fire for it with the usual payloads, and
SubagentStart fires again each time a message resumes a finished teammate (Claude Code drops the
repeated context). A pane teammate (``teammateMode: "tmux"``, interactive, inside tmux) is a
``claude --agent-type TYPE`` process of its own, whose SessionStart names the agent.
"""
import json

import pytest

from conftest import PARTS, agent_md, skill_md
from framing import rebuild

FILES = {
    "project/.claude/skills/alpha/SKILL.md": skill_md("alpha", "ALPHA BODY\n"),
    "project/.claude/skills/beta/SKILL.md": skill_md("beta", "BETA BODY\n"),
    "project/.claude/skills/gamma/SKILL.md": skill_md("gamma", "GAMMA BODY\n"),
    "project/.claude/agents/briefed.md": agent_md("briefed", ["alpha"]),
    "project/.claude/agents/native.md": agent_md("native", native=["beta"]),
    "project/.claude/agents/ruled.md": agent_md("ruled"),
    "project/.claude/agents/control.md": agent_md("control"),
    "project/.claude/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"]),
    "project/.claude/agents/both.md": agent_md("both", ["alpha"], native=["beta"]),
    "project/.briefing/rules.json": json.dumps({"rules": [{"agents": ["ruled"], "skills": ["gamma"]}]}),
}


def teammate_guard(sb, agent_type, name="mate"):
    """PreToolUse for a teammate: the Agent call with ``name`` (and team_name/mode, ignored)."""
    payload = sb.guard(agent_type)
    payload["tool_input"].update(name=name, team_name="session-1", mode="default")
    return payload


def teammate_start(sb, agent_type, agent_id="a-mate-1"):
    return sb.payload("SubagentStart", agent_id=agent_id, agent_type=agent_type)


def contexts(results):
    return [r.context for r in results if r.context]


@pytest.fixture
def sb(sandbox):
    return sandbox(FILES)


# (teammate type, the guard refuses, what SubagentStart delivers)
TEAMMATES = [
    ("briefed", False, {"alpha": "ALPHA BODY\n"}),
    ("native", False, None),  # Claude Code preloads skills: for teammates too (measured)
    ("ruled", False, {"gamma": "GAMMA BODY\n"}),
    ("control", False, None),
    ("both", False, {"alpha": "ALPHA BODY\n"}),  # beta is Claude Code's to preload
    ("broken", True, "abort"),
]


@pytest.mark.parametrize("agent_type, refused, delivered", TEAMMATES, ids=[t[0] for t in TEAMMATES])
def test_a_teammate_is_guarded_and_briefed_like_any_subagent(sb, agent_type, refused, delivered):
    guard = sb.run(teammate_guard(sb, agent_type))
    if refused:
        assert guard.decision == "deny" and "ghost-skill" in guard.reason, guard
    else:
        assert guard.out == "", guard
    found = contexts(sb.run_parts(teammate_start(sb, agent_type)))
    if delivered is None:
        assert found == [], found
    elif delivered == "abort":
        assert rebuild(found).aborted, found
    else:
        assert rebuild(found).skills == delivered, found


@pytest.mark.parametrize("agent_type", ["briefed", "ruled", "broken"])
def test_every_resume_gets_the_same_answer(sb, agent_type):
    """SubagentStart fires again on every resume; the hook keeps no state, so it answers the same,
    and Claude Code drops the repeat (measured: exactly one copy per request)."""
    runs = [[r.out for r in sb.run_parts(teammate_start(sb, agent_type))] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert any(runs[0])


@pytest.mark.parametrize("agent_type, expected", [
    ("both", {"alpha": "ALPHA BODY\n", "beta": "BETA BODY\n"}),  # no preload in a session: both
    ("native", {"beta": "BETA BODY\n"}),
    ("ruled", {"gamma": "GAMMA BODY\n"}),
])
def test_a_pane_teammate_is_briefed_at_its_session_start(sb, agent_type, expected):
    """A pane teammate is a claude process started with --agent-type: its SessionStart names the
    agent, and it is briefed as a ``claude --agent`` session is (every skill, each once)."""
    payload = sb.payload("SessionStart", source="startup", agent_type=agent_type)
    found = contexts(sb.run_parts(payload))
    assert len(found) <= PARTS
    assert rebuild(found).skills == expected, found


def test_a_pane_teammate_without_a_declaration_gets_nothing(sb):
    payload = sb.payload("SessionStart", source="startup", agent_type="control")
    assert contexts(sb.run_parts(payload)) == []
