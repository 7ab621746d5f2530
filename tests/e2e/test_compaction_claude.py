"""End-to-end: a compacted Claude Code subagent gets its whole briefing again (issue 26).

Recipe (shared/facts/compaction.md): the fake reports about 970,000 input tokens on a
subagent reply that is a tool_use (not its first reply); Claude Code compacts that
thread once before its next request, through a summarizer fork of the subagent, and then
sends SessionStart with ``source: "compact"`` and the subagent's ``agent_id`` and
``agent_type``. Its context lands in the first post-compaction request. The compaction
dropped the SubagentStart briefing *and* what Claude Code preloaded through ``skills:``,
so briefing delivers all of it again, in parts under the 10,000-character cap.
"""
import json

import pytest

from compaction_kit import BIG, Counter, UsageAnthropic, exactly_once, is_claude_summarizer, none_of
from conftest import CLAUDE_OUTPUT_LIMIT, agent_md as unit_agent_md
from fakes import bash, briefing_parts, spawn
from kit import BRIEFED, Skill, assert_briefing, markers_of, ok, tool_results, verdict
from runners import Claude

pytestmark = pytest.mark.e2e

SUMMARY = "<analysis>The agent ran two shell steps.</analysis>\n<summary>SUMMARY-OF-THE-SUBAGENT</summary>"


def agent_md(name, skills=None, native=None):
    return unit_agent_md(name, skills, native, body="You are an e2e test agent. Do the task and report.\n")


@pytest.fixture
def machine(clis, tmp_path, serve):
    def make(script):
        server = serve(UsageAnthropic, script)
        return Claude(tmp_path, server)

    return make


def compacting(agent, markers, calls=3, compact_at=2):
    """The main agent spawns ``agent`` once; the subagent runs ``calls`` shell steps, the reply
    with step ``compact_at`` reporting a prompt big enough to compact, then reports."""
    counter = Counter()

    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            if is_claude_summarizer(r):
                return SUMMARY
            n = counter.next(r.agent_id)
            if n <= calls:
                if n == compact_at:
                    r.usage = BIG
                return [bash("echo step-%d" % n, description="step %d" % n)]
            return "Report: " + verdict(r.all_text, markers)
        if not tool_results(r):
            return [spawn(agent, prompt="Do the e2e task and report.")]
        return "All done."
    return script


def phases(server):
    """The subagent's requests: (before the compaction, after it), without the summarizer."""
    subs = [r for r in server.subagent_requests() if r.has_tools]
    at = [i for i, r in enumerate(subs) if is_claude_summarizer(r)]
    assert len(at) == 1, "the subagent did not compact exactly once (%d summarizer requests)" % len(at)
    return subs[:at[0]], subs[at[0] + 1:]


PREFIX = "SessionStart hook additional context: "


def compact_context(request):
    """What follows the SessionStart(compact) prefix in a post-compaction request (Claude Code puts
    it last, in a system message after the re-injected tools, agents and environment)."""
    text = request.all_text
    at = text.rfind(PREFIX)
    assert at >= 0, "no SessionStart context in the request"
    return text[at + len(PREFIX):]


def test_a_compacted_subagent_gets_every_declared_skill_again(machine):
    alpha, beta, gamma = Skill("alpha"), Skill("beta", size=14000), Skill("gamma")
    markers = markers_of([alpha, beta, gamma])
    claude = machine(compacting("reviewer", markers))
    claude.write({"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta, gamma)})
    # gamma is preloaded by Claude Code itself at spawn; alpha and beta by briefing.
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"], native=["gamma"])})

    result = ok(claude.run("Review the change.", timeout=150))
    before, after = phases(claude.server)
    assert exactly_once(before[0], markers)  # SubagentStart, plus Claude Code's own preload of gamma
    assert after, "no request after the compaction"
    first = after[0]
    assert "SUMMARY-OF-THE-SUBAGENT" in first.all_text
    # The first request after the compaction holds every body whole, exactly once: the
    # native gamma too, which Claude Code dropped and did not bring back.
    assert exactly_once(first, markers), {m: first.all_text.count(m) for m in markers}
    parts = briefing_parts(compact_context(first))
    assert len(parts) >= 2, "beta alone is more than one part can carry"
    assert_briefing(parts, "reviewer", [alpha, beta, gamma], part_limit=CLAUDE_OUTPUT_LIMIT)
    for request in after[1:]:
        assert exactly_once(request, markers)  # it stays, and no second copy comes
    for request in claude.server.main_requests():
        assert none_of(request, markers)
    # The audit line says it was a re-delivery.
    lines = [json.loads(h["output"]).get("systemMessage", "") for h in result.hook_responses("SessionStart")
             if h.get("output", "").strip().startswith("{")]
    assert any(l.startswith("briefing: reviewer \u2190 ") and l.endswith(", again after compaction")
               for l in lines), lines
    reports = [r for r in claude.server.main_requests() for t in tool_results(r)
               if BRIEFED in json.dumps(t.get("content"))]
    assert reports, "the subagent did not report briefed after its compaction"


def test_the_control_subagent_without_a_declaration_gets_nothing(machine):
    alpha = Skill("alpha")
    markers = markers_of([alpha])
    claude = machine(compacting("reviewer", markers))
    claude.write({"project/.claude/skills/alpha/SKILL.md": alpha.md(),
                  "project/.claude/agents/reviewer.md": agent_md("reviewer")})

    ok(claude.run("Review the change.", timeout=150))
    before, after = phases(claude.server)
    assert after
    for request in before + after:
        assert none_of(request, markers)
        assert "<briefing " not in request.all_text


def test_a_skill_gone_since_the_spawn_gets_the_abort_after_the_compaction(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    script = compacting("reviewer", markers)
    holder = {}

    def removing(r):
        if r.is_subagent and is_claude_summarizer(r):  # the skill goes while the subagent compacts
            path = holder["claude"].project / ".claude" / "skills" / "beta" / "SKILL.md"
            if path.exists():
                path.unlink()
        return script(r)

    claude = holder["claude"] = machine(removing)
    claude.write({"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in (alpha, beta)})
    claude.write({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"])})

    ok(claude.run("Review the change.", timeout=150))
    before, after = phases(claude.server)
    assert exactly_once(before[0], markers)
    first = after[0]
    text = compact_context(first)
    assert text.startswith('<briefing agent="reviewer" status="abort">'), text[:500]
    assert "beta" in text
    assert none_of(first, markers), "a skill body arrived with the abort"
