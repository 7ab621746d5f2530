"""End-to-end: a skill the Codex main session loaded is back after its compaction (issue 45), in the real Codex.

Recipe (shared/facts/invoked-skills.md, compaction.md): ``model_auto_compact_token_limit =
100000`` and a reply that is a shell call reporting 200,000 input tokens; Codex runs the call,
then compacts mid-turn with a local summarization request, which drops the skill the session
loaded: the SKILL.md it read with ``cat`` (its ``exec_command`` output) or the ``<skill>``
message Codex injected for ``$inv-main``. Codex then runs SessionStart(compact), with the
rollout already holding the compaction and the load; briefing's context lands as a developer
message right after the summary in the first post-compaction request, and stays.

Each skill body carries a start and an end marker (``kit.Skill``): "whole, once" means both
occur exactly once in every request after the compaction.
"""
import json

import pytest

from compaction_kit import BIG, Counter, exactly_once, is_codex_summarizer, none_of
from framing import rebuild
from kit import Skill, markers_of, ok
from e2e.test_audit import audit
from test_codex import plugin_source  # noqa: F401  (a fixture)
# test_compaction_codex's compacting Codex, and its child (machine is a fixture).
from test_compaction_codex import child_script, machine, phases as child_phases, shell  # noqa: F401

pytestmark = pytest.mark.e2e

LOADED = "You loaded the skills below earlier in this session"


def working(first=None, resumed=None):
    """The main thread runs ``first`` (a shell command, or None), then a shell call whose reply
    reports a prompt big enough to compact, then one more call, then answers. With ``resumed``
    (a dict the test flips to ``{"on": True}`` before the second run), the first run stops after
    ``first`` and the second, resumed run does the rest."""
    counter = Counter()

    def script(r):
        if is_codex_summarizer(r):
            return "SUMMARY: the agent ran its first shell calls."
        if resumed is not None and not resumed.get("on"):
            return [shell(first)] if counter.next("first") == 1 else "Read it."
        n = counter.next("main")
        if first and resumed is None:
            if n == 1:
                return [shell(first)]
            n -= 1
        if n == 1:
            r.usage = BIG
            return [shell("echo MAIN-PRE")]
        if n == 2:
            return [shell("echo MAIN-POST-1")]
        return "All done."
    return script


def phases(server):
    """The main thread's requests: (before the compaction, after it)."""
    mains = server.main_requests()
    at = [i for i, r in enumerate(mains) if is_codex_summarizer(r)]
    assert len(at) == 1, "the session did not compact exactly once: %d summarization requests" % len(at)
    return mains[:at[0]], mains[at[0] + 1:]


def loaded_texts(request):
    return [t for t in request.messages("developer") if LOADED in t]


def assert_back_once(server, skills):
    """Every request after the compaction holds each body whole, once, in briefing's framing."""
    markers = markers_of(skills)
    _, after = phases(server)
    assert len(after) >= 2, after
    for request in after:
        assert exactly_once(request, markers), [request.all_text.count(m) for m in markers]
        (text,) = loaded_texts(request)
        got = rebuild([text])
        assert got.agent == "main" and set(got.skills) == {s.name for s in skills}
        for skill in skills:
            assert got.skills[skill.name] == skill.body
    # It is the developer message right after the summary (SessionStart(compact)'s context).
    first = after[0]
    items = [i for i in first.input if i.get("type", "message") == "message"]
    at = next(i for i, item in enumerate(items) if "SUMMARY: the agent ran" in json.dumps(item))
    assert items[at + 1].get("role") == "developer" and LOADED in json.dumps(items[at + 1])


READ = "cat .agents/skills/inv-main/SKILL.md"


# The load step: (the main thread's first shell call, the prompt, which request before the
# compaction holds the body, a text of that load in it). A read's output is in the request after
# the read; Codex's <skill> message for a $-mention in the first request.
@pytest.mark.parametrize("first, prompt, at, trace", [
    (READ, "Do the work.", -1, READ),
    (None, "Use $inv-main and do the work.", 0, "<skill>\n<name>inv-main</name>"),
], ids=["read-with-cat", "dollar-mention"])
def test_a_loaded_skill_is_back_whole_once_after_the_compaction(machine, first, prompt, at, trace):
    skill = Skill("inv-main", size=3000)
    codex = machine(working(first=first))
    codex.write({"project/.agents/skills/inv-main/SKILL.md": skill.md()})

    ok(codex.run(prompt, timeout=150))
    before, _ = phases(codex.server)
    assert exactly_once(before[at], skill.markers)  # the load, before the compaction
    assert trace in before[at].all_text
    assert_back_once(codex.server, [skill])
    # The audit reads the re-delivery back from the rollout: names, sizes, which event.
    _, report = audit(codex.env(), codex.project)
    (row,) = [r for r in report["audit"] if r["loaded_again"]]
    assert row["kind"] == "main" and row["loaded_again"] == [{
        "event": "SessionStart(compact)", "skills": [{"name": "inv-main", "bytes": len(skill.body.encode()), "parts": [1]}],
        "left_out": []}], row


def test_a_resumed_session_that_compacts_is_no_exception(machine):
    """The skill was read in one process; the session is resumed (``codex exec resume``, which
    appends to the same rollout) and compacts there."""
    skill = Skill("inv-main", size=3000)
    resumed = {}
    codex = machine(working(first=READ, resumed=resumed))
    codex.write({"project/.agents/skills/inv-main/SKILL.md": skill.md()})

    first = codex.run("Read the skill.", "--json", timeout=150)
    ok(first)
    thread = [json.loads(line) for line in first.stdout.splitlines() if line.startswith("{")][0]["thread_id"]
    resumed["on"] = True
    ok(codex.run("Continue the work.", "resume", thread, "--json", timeout=150))
    assert_back_once(codex.server, [skill])


# The controls: the session read a file that is no skill (its text holds the same kind of markers).
@pytest.mark.parametrize("path, files", [
    ("README.md", lambda notes: {"project/README.md": notes.body,
                                 "project/docs/SKILL.md": notes.md()}),  # a SKILL.md under no skill root: no skill
    ("docs/notes/SKILL.md", lambda notes: {"project/docs/notes/SKILL.md": notes.md()}),
], ids=["an-ordinary-file", "a-skill-md-outside-the-skill-roots"])
def test_a_read_of_no_skill_brings_nothing_back(machine, path, files):
    notes = Skill("notes", size=500)
    codex = machine(working(first="cat " + path))
    codex.write(files(notes))

    ok(codex.run("Do the work.", timeout=150))
    before, after = phases(codex.server)
    assert exactly_once(before[-1], notes.markers)
    for request in after:
        assert none_of(request, notes.markers) and loaded_texts(request) == []


def test_nothing_loaded_nothing_comes(machine):
    skill = Skill("inv-main")
    codex = machine(working(first="echo nothing to load"))
    codex.write({"project/.agents/skills/inv-main/SKILL.md": skill.md()})

    ok(codex.run("Do the work.", timeout=150))
    for request in codex.server.main_requests():
        assert none_of(request, skill.markers) and loaded_texts(request) == []


def test_the_switch_turns_it_off(machine):
    skill = Skill("inv-main")
    codex = machine(working(first=READ))
    codex.write({"project/.agents/skills/inv-main/SKILL.md": skill.md(),
                 "project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})})

    ok(codex.run("Do the work.", timeout=150))
    before, after = phases(codex.server)
    assert exactly_once(before[-1], skill.markers)
    for request in after:
        assert none_of(request, skill.markers) and loaded_texts(request) == []
    _, report = audit(codex.env(), codex.project)
    assert not [r for r in report["audit"] if r["loaded_again"]], report


# ---------------------------------------------------------------------------------------------
# A subagent: Codex sends a compacted child no SessionStart; its first tool call after the
# compaction (PostToolUse) brings the skills back, in the request after that call.
# ---------------------------------------------------------------------------------------------

def test_a_skill_a_subagent_read_is_back_whole_once_at_its_next_tool_call(machine):
    from test_codex import role_toml
    skill = Skill("inv-main", size=3000)
    rest, first = child_script(skill.markers, calls=3, compact_at=1), Counter()

    def script(r):  # test_compaction_codex's child, which reads the skill first
        if r.is_subagent and not is_codex_summarizer(r) and first.next("child") == 1:
            return [shell(READ)]
        return rest(r)

    codex = machine(script)
    codex.write({"project/.agents/skills/inv-main/SKILL.md": skill.md(),
                 "project/.codex/agents/reviewer.toml": role_toml("reviewer")})
    ok(codex.run("Delegate the work.", timeout=150))
    before, _, after = child_phases(codex.server)
    assert any(exactly_once(r, skill.markers) for r in before)
    assert len(after) >= 3, after
    assert none_of(after[0], skill.markers)  # the summary's request: no hook could have run yet
    for request in after[1:]:
        assert exactly_once(request, skill.markers), [request.all_text.count(m) for m in skill.markers]
        (text,) = loaded_texts(request)
        got = rebuild([text])
        assert got.agent == "reviewer" and got.skills == {"inv-main": skill.body}
    for request in codex.server.main_requests():
        assert none_of(request, skill.markers)
    _, report = audit(codex.env(), codex.project)
    (row,) = [r for r in report["audit"] if r["loaded_again"]]
    assert row["agent"] == "reviewer" and row["verdict"] == "no-declaration", row
    assert row["loaded_again"] == [{"event": "PostToolUse", "left_out": [], "skills": [
        {"name": "inv-main", "bytes": len(skill.body.encode()), "parts": [1]}]}], row
