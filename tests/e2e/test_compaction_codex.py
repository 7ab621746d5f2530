"""End-to-end: a compacted Codex subagent gets its briefing again (issue 26), in the real Codex.

Recipe (shared/facts/compaction.md): ``model_auto_compact_token_limit = 100000`` and one
child reply that is a function call reporting 200,000 input tokens; Codex runs the call,
then compacts the child's thread mid-turn with a local summarization request. The
compaction drops every hook context, the SubagentStart briefing with it. No event fires
into the child then; its next tool call runs PostToolUse (and a new turn UserPromptSubmit),
and briefing, seeing the compaction in the child's rollout, delivers the briefing there,
once: it reaches the request after that call.
"""
import json

import pytest

from compaction_kit import BIG, Counter, UsageOpenAI, codex_compacting_config, exactly_once, \
    is_codex_summarizer, none_of
from fakes import call, spawn_agent, wait_agent
from framing import rebuild
from kit import BRIEFED, Skill, assert_briefing, markers_of, ok, verdict
from runners import Codex
from test_codex import plugin_source, role_toml  # noqa: F401  (plugin_source is a fixture)

pytestmark = pytest.mark.e2e


def shell(command):
    return call("exec_command", {"cmd": command}, namespace=None)


@pytest.fixture
def machine(clis, plugin_source, tmp_path, serve):
    def make(script):
        server = serve(UsageOpenAI, script)
        codex = Codex(tmp_path, server)
        config = codex.codex_home / "config.toml"
        config.write_text(codex_compacting_config(config.read_text(encoding="utf-8")), encoding="utf-8")
        codex.plugin_root = codex.install(plugin_source)
        return codex

    return make


def child_script(markers, calls=4, compact_at=2, follow_up=False):
    """The main thread spawns ``reviewer`` and waits; the child makes ``calls`` shell calls, the
    reply with call ``compact_at`` reporting a prompt big enough to compact, then reports.

    ``follow_up``: the child reports right after its compaction instead (its turn ends), and
    the main thread sends it a new message, which starts a new turn of the compacted child.
    """
    counter = Counter()

    def script(r):
        if r.is_subagent:
            if is_codex_summarizer(r):
                return "SUMMARY: the agent ran its first shell calls."
            n = counter.next("child")
            if follow_up and n > compact_at:
                return "Report: " + verdict(r.all_text, markers)
            if n <= calls:
                if n == compact_at:
                    r.usage = BIG
                return [shell("echo call-%d" % n)]
            return "Report: " + verdict(r.all_text, markers)
        made = [c.get("name") for c in r.calls()]
        outputs = r.outputs()
        if not made:
            return [spawn_agent("reviewer", message="Do the e2e task and report.")]
        child = json.loads(outputs[r.calls()[0]["call_id"]])["agent_id"]
        last = r.calls()[-1]
        done = '"completed"' in (outputs.get(last["call_id"]) or "")
        if last.get("name") == "spawn_agent" or (last.get("name") == "wait_agent" and not done
                                                   and made.count("wait_agent") < 8):
            return [wait_agent([child], timeout_ms=60000)]
        if follow_up and "send_input" not in made:
            return [call("send_input", {"target": child, "message": "Now finish the task and report again."})]
        if follow_up and last.get("name") == "send_input":
            return [wait_agent([child], timeout_ms=60000)]
        return "All done."
    return script


def phases(server):
    """The child's requests, cut at its compaction: (before, summarizer, after)."""
    subs = server.subagent_requests()
    at = [i for i, r in enumerate(subs) if is_codex_summarizer(r)]
    assert len(at) == 1, "the child did not compact exactly once: %d summarization requests" % len(at)
    return subs[:at[0]], subs[at[0]], subs[at[0] + 1:]


def briefing_texts(request):
    return [t for t in request.messages("developer") if t.startswith("<briefing ")]


def test_a_compacted_child_gets_its_briefing_back_at_its_next_tool_call(machine):
    alpha, beta = Skill("alpha"), Skill("beta", size=6000)
    markers = markers_of([alpha, beta])
    codex = machine(child_script(markers))
    codex.write({"project/.codex/skills/alpha/SKILL.md": alpha.md(),
                 "project/.codex/skills/beta/SKILL.md": beta.md(),
                 "project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "beta"])})

    ok(codex.run("Review the change.", timeout=150))
    before, _, after = phases(codex.server)
    assert exactly_once(before[0], markers)  # SubagentStart
    assert len(after) >= 3, after
    # The first request after the compaction is the summary: the briefing is gone, and no
    # hook could have put it back yet (the model's next call comes from this very request).
    assert none_of(after[0], markers)
    assert "SUMMARY: the agent ran" in after[0].all_text
    # The request after the next tool call carries it whole, exactly once...
    assert exactly_once(after[1], markers), after[1]
    (text,) = briefing_texts(after[1])
    assert_briefing([text], "reviewer", [alpha, beta])
    # ...and every later one still once: the next tool call does not deliver a second copy.
    for request in after[2:]:
        assert exactly_once(request, markers)
    reports = [o for r in codex.server.main_requests() for c in r.calls() if c.get("name") == "wait_agent"
               for o in [r.outputs().get(c["call_id"]) or ""]]
    assert any(BRIEFED in o for o in reports), reports  # the child reported from a briefed request
    for request in codex.server.main_requests():
        assert none_of(request, markers)


def test_a_new_turn_after_the_compaction_brings_it_at_user_prompt_submit(machine):
    alpha = Skill("alpha")
    markers = markers_of([alpha])
    codex = machine(child_script(markers, follow_up=True))
    codex.write({"project/.codex/skills/alpha/SKILL.md": alpha.md(),
                 "project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha"])})

    ok(codex.run("Review the change.", timeout=150))
    _, _, after = phases(codex.server)
    assert len(after) >= 2, after
    assert none_of(after[0], markers)  # the compacted turn ends unbriefed: no tool call followed
    turn = after[1]  # the first request of the turn send_input started
    assert "Now finish the task" in turn.all_text
    assert exactly_once(turn, markers), turn
    texts = briefing_texts(turn)
    assert len(texts) == 1 and not rebuild(texts).aborted
    # It arrives right after the new message, as UserPromptSubmit's context does.
    developer_or_user = [item for item in turn.input if item.get("type", "message") == "message"]
    at = next(i for i, item in enumerate(developer_or_user) if "Now finish the task" in json.dumps(item))
    assert json.dumps(developer_or_user[at + 1]).count(alpha.start) == 1


def test_the_control_child_without_a_declaration_gets_nothing(machine):
    alpha = Skill("alpha")
    markers = markers_of([alpha])
    codex = machine(child_script(markers))
    codex.write({"project/.codex/skills/alpha/SKILL.md": alpha.md(),
                 "project/.codex/agents/reviewer.toml": role_toml("reviewer")})

    ok(codex.run("Review the change.", timeout=150))
    before, _, after = phases(codex.server)
    for request in before + after:
        assert none_of(request, markers)
        assert briefing_texts(request) == []


def test_a_skill_gone_since_the_spawn_gets_the_abort_after_the_compaction(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    script = child_script(markers)
    holder = {}

    def removing(r):
        if r.is_subagent and is_codex_summarizer(r):  # the skill goes while the child compacts
            skill = holder["codex"].project / ".codex" / "skills" / "beta" / "SKILL.md"
            if skill.exists():
                skill.unlink()
        return script(r)

    codex = holder["codex"] = machine(removing)
    codex.write({"project/.codex/skills/alpha/SKILL.md": alpha.md(),
                 "project/.codex/skills/beta/SKILL.md": beta.md(),
                 "project/.codex/agents/reviewer.toml": role_toml("reviewer", ["alpha", "beta"])})

    ok(codex.run("Review the change.", timeout=150))
    before, _, after = phases(codex.server)
    assert exactly_once(before[0], markers)
    (abort,) = briefing_texts(after[1])
    assert abort.startswith('<briefing agent="reviewer" status="abort">'), abort[:200]
    assert "beta" in abort and "<skill " not in abort
    assert none_of(after[1], [alpha.start, alpha.end]), "a skill body arrived with the abort"
    for request in after[2:]:
        assert sum(t.startswith('<briefing agent="reviewer" status="abort">') for t in briefing_texts(request)) == 1
