"""Names a harness folds before its lookup, judged as the agent it runs (issue 43, item 3).

A rule or a declaration is matched to the agent the harness really starts, whatever the spelling
the model wrote. Measured: Qwen Code finds a built-in case-blind (tests/test_briefing_qwen.py);
Claude Code (2.1.328/2.1.332, docs/claude-code.md "Which agent a name starts") takes the exact name
first, else the one agent whose name is the same after NFKC, lower case and with whitespace, dashes
and underscores removed (two such agents: "ambiguous", nothing starts). Codex, Copilot CLI, Gemini
CLI, OpenCode and Kilo look names up exactly (docs/rules.md): a different spelling starts nothing.
"""
import json

import pytest

from conftest import agent_md, skill_md
from test_briefing import PA, PS

RULES = "project/.briefing/rules.json"


def rule(agents, skills):
    return json.dumps({"rules": [{"agents": agents, "skills": skills, "harness": "claude"}]})


# (the spelling spawned, the agent Claude Code starts for it, or None: it starts nothing)
CLAUDE_SPELLINGS = [
    ("explore", "Explore"), ("EXPLORE", "Explore"), ("general_purpose", "general-purpose"),
    ("General Purpose", "general-purpose"), ("GeneralPurpose", "general-purpose"),
    ("\uff45xplore", "Explore"),  # a full-width e: NFKC makes it e
    ("plan", "Plan"), ("Code_Reviewer", "code-reviewer"), ("CODE-REVIEWER", "code-reviewer"),
    ("code reviewer", "code-reviewer"), ("code\u2013reviewer", "code-reviewer"),  # an en dash is a dash
    ("explorer", None), ("code.reviewer", None), ("twin", None),
]


@pytest.mark.parametrize("spelled,runs", CLAUDE_SPELLINGS, ids=[s for s, _ in CLAUDE_SPELLINGS])
def test_claude_code_judges_a_folded_spelling_as_the_agent_it_starts(sandbox, spelled, runs):
    sb = sandbox({PS % "here": skill_md("here", "HERE\n"),
                  PA % "code-reviewer": agent_md("code-reviewer", ["gone-skill"]),
                  # two agents of one folded name: Claude Code says "ambiguous" and starts neither
                  PA % "Twin": agent_md("Twin", ["gone-skill"]), PA % "twin-": agent_md("t-win", ["gone-skill"]),
                  RULES: rule(["Explore", "general-purpose", "Plan"], ["gone-rule-skill"])})
    r = sb.run(sb.guard(spelled))
    if runs is None:
        assert r.out == "", r
        return
    assert r.decision == "deny", r
    assert ("gone-skill" if runs == "code-reviewer" else "gone-rule-skill") in r.reason, r.reason
    assert "agent '%s'" % runs in r.reason, r.reason
    shown = sb.doctor("--show", spelled, "--harness", "claude")  # the doctor agrees
    assert "[FAIL]" in shown.out, shown


def test_an_exact_name_wins_over_a_folded_one(sandbox):
    """Claude Code takes an exact match first: a file named explore is not the built-in Explore."""
    sb = sandbox({PS % "here": skill_md("here", "HERE\n"), PA % "explore": agent_md("explore", ["here"]),
                  RULES: rule(["Explore"], ["gone-rule-skill"])})
    assert sb.run(sb.guard("explore")).out == ""
    assert sb.run(sb.guard("Explore")).decision == "deny"
    # EXPLORE matches both explore and Explore after folding: ambiguous, Claude Code starts neither
    assert sb.run(sb.guard("EXPLORE")).out == ""


def test_a_folded_spelling_of_a_briefed_agent_passes_the_guard(sandbox):
    sb = sandbox({PS % "here": skill_md("here", "HERE\n"), PA % "code-reviewer": agent_md("code-reviewer", ["here"])})
    assert sb.run(sb.guard("Code_Reviewer")).out == ""
