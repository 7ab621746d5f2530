"""End-to-end: a skill a Copilot CLI agent loaded with the ``skill`` tool is back after its
compaction (issue 45), in the real Copilot.

Recipe (shared/facts/invoked-skills.md, compaction.md): a 64,000-token prompt limit and a
``bash`` reply reporting 150,000 prompt tokens; Copilot compacts in the background and applies
the summary when it completes, which drops the skill's ``<skill-context>`` message. No event
fires then; the tool call that brings a compacted agent's briefing back (``copilot_compacted``:
the first whose hook sees the applied compaction in events.jsonl) brings the skill back too,
from ``skill.invoked``, as PreToolUse context: it reaches the request after that call.

"Once": a hook that saw the compaction within ``COPILOT_SETTLE`` (one second) of it is not sure
an earlier run saw it too, so calls within that second may each bring a copy (issue 36:
a second copy is possible, none is not). A real model takes longer than that to answer; this
fake answers at once, so it waits 1.2 s before answering the first request that holds the
summary, and then the skill comes back exactly once. Each body carries a start and an end marker.
"""
import json
import time

import pytest

from compaction_kit import BIG, Counter, exactly_once, none_of
from copilot_runner import task
from fakes import tool_use
from framing import rebuild
from kit import Skill, ok
from e2e.test_audit import audit
# test_compaction_copilot's compacting Copilot (machine is a fixture).
from test_compaction_copilot import SUMMARIZED, agent_md, machine, split_at_compaction  # noqa: F401
from test_copilot import checkout, copilot_cache  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e

LOADED = "You loaded the skills below earlier in this session"
ANSWER_AFTER = 1.2  # seconds: past COPILOT_SETTLE, as a real model's answer is
PACE = 0.6  # seconds per answer after that: past the events.jsonl writer's lag


def working(first, calls=6, compact_at=2, sub=False):
    """The worker (the main session, or with ``sub`` a subagent it delegates to ``reviewer``)
    makes the ``first`` call (a tool_use block, or None), then ``calls`` bash steps, the reply
    with step ``compact_at`` reporting a prompt big enough to compact, then reports."""
    counter = Counter()
    waited = []

    def script(r):
        if not r.has_tools:
            return "ok"
        if r.headers.get("x-interaction-type") == "conversation-compaction":
            return "<summary>SUMMARY-OF-THE-WORK</summary>"
        if sub and not r.is_subagent:
            return [task("reviewer")] if not r.tool_results() else "All done."
        if not waited and SUMMARIZED in json.dumps(r.messages[:1]):
            waited.append(True)
            time.sleep(ANSWER_AFTER)
        elif waited:
            # And each later answer at a model's pace too: the run before it is then in
            # events.jsonl, whose writer lags (0.18 s measured once, 0.37 s on another day).
            time.sleep(PACE)
        n = counter.next("worker")
        if first is not None:
            if n == 1:
                return [first]
            n -= 1
        if n <= calls:
            if n == compact_at:
                r.usage = BIG
            return [tool_use("bash", {"command": "echo step-%d" % n, "description": "step %d" % n})]
        return "Report: done."
    return script


def load_skill():
    return tool_use("skill", {"skill": "inv-main"})


def loaded_texts(request):
    text = request.all_text
    out, at = [], text.find(LOADED)
    while at >= 0:
        start = text.rfind("<briefing ", 0, at)
        end = text.find("</briefing seal=", at)
        out.append(text[start:text.find(">", end) + 1])
        at = text.find(LOADED, at + 1)
    return out


def assert_back_once(copilot, skill, agent, sub=False):
    before, after = split_at_compaction(copilot.server, main=not sub)
    assert any(exactly_once(r, skill.markers) for r in before), "the skill tool never loaded it"
    # after[0] made the first tool call after the compaction; the request after that call holds it.
    assert len(after) >= 3, len(after)
    assert none_of(after[0], skill.markers), "the <skill-context> survived the compaction"
    for request in after[1:]:
        assert exactly_once(request, skill.markers), [request.all_text.count(m) for m in skill.markers]
        (text,) = loaded_texts(request)
        got = rebuild([text])
        assert got.agent == agent and got.skills == {skill.name: skill.body}
    assert "Additional context from preToolUse hook:\n<briefing agent=\"%s\"" % agent in after[1].all_text


def test_a_skill_the_main_session_loaded_is_back_whole_once(machine, checkout):
    skill = Skill("inv-main", size=3000)
    copilot = machine(working(load_skill()))
    copilot.write({"project/.github/skills/inv-main/SKILL.md": skill.md()})

    ok(copilot.run("Do the work.", plugin_dirs=[checkout], timeout=120))
    assert_back_once(copilot, skill, "main")
    # The audit: Copilot keeps no preToolUse output, so the re-delivery is inferred, with the
    # size of the body skill.invoked recorded.
    _, report = audit(copilot.env(), copilot.project)
    (row,) = [r for r in report["audit"] if r["loaded_again"]]
    assert row["kind"] == "main" and row["loaded_again"] == [{
        "event": "PreToolUse (inferred)", "skills": [{"name": "inv-main", "bytes": len(skill.body.encode()), "parts": [1]}],
        "left_out": []}], row


def test_a_skill_a_subagent_loaded_is_back_whole_once(machine, checkout):
    skill = Skill("inv-main", size=3000)
    copilot = machine(working(load_skill(), sub=True))
    copilot.write({"project/.github/skills/inv-main/SKILL.md": skill.md(),
                   "project/.github/agents/reviewer.agent.md": agent_md("reviewer")})

    ok(copilot.run("Delegate the work.", plugin_dirs=[checkout], timeout=120))
    assert_back_once(copilot, skill, "reviewer", sub=True)
    _, report = audit(copilot.env(), copilot.project)
    (row,) = [r for r in report["audit"] if r["loaded_again"]]
    assert row["agent"] == "reviewer" and [i["name"] for i in row["loaded_again"][0]["skills"]] == ["inv-main"]
    for request in copilot.server.log:
        if not request.is_subagent and request.has_tools:
            assert loaded_texts(request) == []  # the main session loaded nothing


def test_an_ordinary_file_read_brings_nothing_back(machine, checkout):
    notes = Skill("notes", size=500)
    copilot = machine(working(tool_use("bash", {"command": "cat README.md", "description": "read"})))
    copilot.write({"project/README.md": notes.body})

    ok(copilot.run("Do the work.", plugin_dirs=[checkout], timeout=120))
    before, after = split_at_compaction(copilot.server, main=True)
    assert any(exactly_once(r, notes.markers) for r in before)
    for request in after:
        assert none_of(request, notes.markers) and loaded_texts(request) == []


def test_nothing_loaded_nothing_comes(machine, checkout):
    skill = Skill("inv-main")
    copilot = machine(working(None))
    copilot.write({"project/.github/skills/inv-main/SKILL.md": skill.md()})

    ok(copilot.run("Do the work.", plugin_dirs=[checkout], timeout=120))
    split_at_compaction(copilot.server, main=True)
    for request in copilot.server.log:
        assert none_of(request, skill.markers) and loaded_texts(request) == []


def test_the_switch_turns_it_off(machine, checkout):
    skill = Skill("inv-main")
    copilot = machine(working(load_skill()))
    copilot.write({"project/.github/skills/inv-main/SKILL.md": skill.md(),
                   "project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})})

    ok(copilot.run("Do the work.", plugin_dirs=[checkout], timeout=120))
    before, after = split_at_compaction(copilot.server, main=True)
    assert any(exactly_once(r, skill.markers) for r in before)
    for request in after:
        assert none_of(request, skill.markers) and loaded_texts(request) == []
    _, report = audit(copilot.env(), copilot.project)
    assert not [r for r in report["audit"] if r["loaded_again"]], report


def test_a_resumed_session_that_compacts_is_no_exception(machine, checkout):
    """Two skills loaded in one process; ``copilot --resume`` continues the session (the same
    events.jsonl) in another, which compacts. Copilot itself brings back the most recent one whole
    (its summary's ``<invoked_skills>``, "Most recent skill") and names the other only ("Previously
    used skills"): briefing brings back that other one, and not the one Copilot restored. Each
    body is then in every request after the delivering call exactly once."""
    older, recent = Skill("inv-old", size=3000), Skill("inv-new", size=20000)
    resumed = {}
    later = working(None)

    def script(r):
        if resumed.get("on"):
            return later(r)
        if not r.has_tools:
            return "ok"
        done = len(r.tool_results())
        return [tool_use("skill", {"skill": ["inv-old", "inv-new"][done]})] if done < 2 else "Loaded them."

    copilot = machine(script)
    copilot.write({"project/.github/skills/%s/SKILL.md" % s.name: s.md() for s in (older, recent)})
    ok(copilot.run("Load the skills.", plugin_dirs=[checkout], timeout=120))
    (session,) = sessions_with_events(copilot)
    resumed["on"] = True
    ok(copilot.run("Continue the work.", "--resume", session, plugin_dirs=[checkout], timeout=120))
    assert sessions_with_events(copilot) == [session]  # the same session, the same events.jsonl
    _, after = split_at_compaction(copilot.server, main=True)
    assert len(after) >= 3, len(after)
    assert "## Most recent skill: inv-new" in after[0].all_text  # Copilot's own copy
    assert exactly_once(after[0], recent.markers) and none_of(after[0], older.markers)
    for request in after[1:]:
        assert exactly_once(request, older.markers + recent.markers), [
            request.all_text.count(m) for m in older.markers + recent.markers]
        (text,) = loaded_texts(request)
        assert rebuild([text]).skills == {"inv-old": older.body}


def sessions_with_events(copilot):
    return [p.name for p in (copilot.copilot_home / "session-state").iterdir() if (p / "events.jsonl").is_file()]
