"""The briefing lasts as long as the agent: it comes again after every compaction (issue 26).

Per harness (facts/compaction.md):

* Claude Code sends SessionStart ``source: "compact"`` into the compacted agent: with
  ``agent_id`` and ``agent_type`` a subagent's (whose native preload was dropped too, so
  every declared skill comes again), with ``agent_type`` alone a ``claude --agent``
  session's, with neither a plain session's (nothing).
* Codex sends nothing; the child's next PostToolUse or UserPromptSubmit carries its
  ``agent_id`` and its rollout, and the rollout shows whether it was compacted after the
  briefing was last delivered.
* Copilot CLI sends nothing; the agent's next PreToolUse (any tool but the task tool, which
  the guard has) is delivered, decided from the session's events.jsonl.

Every row runs the hook as the harness does (``sb.run``) on records written the way the
harness writes them (their shapes measured on the real CLIs), and reads the output back
with ``framing.rebuild``.
"""
import json
import os
import subprocess
import time

import pytest

from conftest import CLAUDE_OUTPUT_LIMIT, HOOK, HOOK_PYTHON, agent_md, skill_md
from framing import rebuild

AGAIN = ", again after compaction"
AID = "019dc0de-0000-7000-8000-00000000a11d"  # a subagent's thread id (Codex) / agent id (Copilot)
SID = "019dc0de-0000-7000-8000-0000000005e5"  # the main session

BODIES = {"alpha": "ALPHA: check every return value.\n", "beta": "BETA: name things plainly.\n",
          "gamma": "GAMMA: the native one.\n"}


def skills(where):
    return {where % n: skill_md(n, b) for n, b in BODIES.items()}


def none(result):
    assert result.out == "", result


# --------------------------------------------------------------------------------------------
# Claude Code: SessionStart(compact), told apart by its fields
# --------------------------------------------------------------------------------------------

CLAUDE = dict(skills("project/.claude/skills/%s/SKILL.md"), **{
    "project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"], native=["gamma"]),
    "project/.claude/agents/plain.md": agent_md("plain"),
})

CLAUDE_ROWS = [
    # (row, payload fields, skills that come again, or None for no output at all)
    ("subagent compacted", dict(agent_id="a1", agent_type="reviewer"), {"alpha", "beta", "gamma"}),
    ("--agent session compacted", dict(agent_type="reviewer"), {"alpha", "beta", "gamma"}),
    ("plain session compacted", {}, None),
    ("subagent without a declaration", dict(agent_id="a1", agent_type="plain"), None),
    ("built-in subagent", dict(agent_id="a1", agent_type="general-purpose"), None),
    ("the summarizer fork's empty agent_type", dict(agent_id="a2", agent_type=""), None),
]


@pytest.mark.parametrize("row, fields, again", CLAUDE_ROWS, ids=[r[0] for r in CLAUDE_ROWS])
def test_claude_code_session_start_compact(sandbox, row, fields, again):
    sb = sandbox(CLAUDE)
    results = sb.run_parts(sb.payload("SessionStart", source="compact", **fields))
    contexts = [r.context for r in results if r.context is not None]
    if again is None:
        assert contexts == [] and all("hookSpecificOutput" not in (r.data or {}) for r in results), results
        return
    for r in results:
        if r.context is not None:
            assert r.data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
            assert len(r.context) <= CLAUDE_OUTPUT_LIMIT
    got = rebuild(contexts)
    assert not got.aborted and got.agent == "reviewer"
    assert set(got.skills) == again and all(got.skills[n] == BODIES[n] for n in again)
    (line,) = [r.system_message for r in results if r.system_message]
    assert line.startswith("briefing: reviewer \u2190 ") and line.endswith(AGAIN), line


def test_claude_code_subagent_start_is_not_called_again(sandbox):
    """At spawn the native entry is Claude Code's to preload: the audit line has no suffix."""
    sb = sandbox(CLAUDE)
    results = sb.run_parts(sb.spawn("reviewer"))
    assert set(rebuild([r.context for r in results if r.context]).skills) == {"alpha", "beta"}
    (line,) = [r.system_message for r in results if r.system_message]
    assert not line.endswith(AGAIN), line


def test_claude_code_a_skill_gone_since_the_spawn_gets_the_abort(sandbox):
    sb = sandbox(CLAUDE)
    os.unlink(str(sb.path("project/.claude/skills/beta/SKILL.md")))
    results = sb.run_parts(sb.payload("SessionStart", source="compact", agent_id="a1", agent_type="reviewer"))
    (first,) = [r for r in results if r.out.strip()]
    assert rebuild([first.context]).aborted and "beta" in first.context and "<skill " not in first.context
    assert first.system_message.startswith("briefing: NOT briefed, told to abort: agent 'reviewer'")
    assert first.system_message.endswith("(after a compaction)"), first.system_message


def test_claude_code_files_and_private_skills_come_again_too(sandbox):
    """Explore, briefed by rules alone with a private skill and CLAUDE.md (which Explore skips):
    after a compaction all of it comes again, as at spawn."""
    sb = sandbox({"project/CLAUDE.md": "STANDING: the project's rules.\n",
                  "project/.briefing/skills/scout/SKILL.md": skill_md("scout", "SCOUT: private.\n"),
                  "project/.briefing/rules.json": json.dumps({"rules": [
                      {"agents": "Explore", "skills": ["scout"], "files": ["CLAUDE.md"]}]})})
    at_spawn = rebuild([r.context for r in sb.run_parts(sb.spawn("Explore")) if r.context])
    results = sb.run_parts(sb.payload("SessionStart", source="compact", agent_id="a1", agent_type="Explore"))
    again = rebuild([r.context for r in results if r.context])
    assert again.skills == at_spawn.skills == {"scout": "SCOUT: private.\n"}
    assert again.files == at_spawn.files == {"CLAUDE.md": "STANDING: the project's rules.\n"}
    (line,) = [r.system_message for r in results if r.system_message]
    assert line.endswith(AGAIN), line


# --------------------------------------------------------------------------------------------
# Codex: the child's rollout
# --------------------------------------------------------------------------------------------

CODEX = dict(skills("project/.codex/skills/%s/SKILL.md"), **{
    "project/.codex/agents/reviewer.toml": '# briefing: skills = ["alpha", "beta"]\nname = "reviewer"\n'
                                           'description = "r"\ndeveloper_instructions = "Review."\n',
    "project/.codex/agents/plain.toml": 'name = "plain"\ndescription = "p"\ndeveloper_instructions = "P."\n',
})

ROLLOUT = "home/.codex/sessions/2026/12/02/rollout-2026-12-02T07-58-06-%s.jsonl" % AID


def jl(value):
    """One line as Codex (serde) writes it: compact, UTF-8, ``<`` unescaped."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def developer(text, n=7):
    return jl({"timestamp": "2026-12-02T07:58:07.286Z", "ordinal": n, "type": "response_item",
               "payload": {"type": "message", "id": "msg_%d" % n, "role": "developer",
                           "content": [{"type": "input_text", "text": text}]}})


def tool_round(output, n=11):
    return (jl({"timestamp": "t", "ordinal": n, "type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"cat x\"}",
                "call_id": "call_%d" % n}})
            + jl({"timestamp": "t", "ordinal": n + 1, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": "call_%d" % n, "output": output}}))


def compacted(n=29):
    return (jl({"timestamp": "2026-12-02T07:58:09.496Z", "ordinal": n, "type": "compacted", "payload": {
                "message": "Another language model started to solve this problem...\nSUMMARY",
                "replacement_history": [{"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": "Do the task."}]}]}})
            + jl({"timestamp": "t", "ordinal": n + 5, "type": "event_msg", "payload": {
                "type": "item_completed", "item": {"type": "ContextCompaction", "id": "c1"}}}))


def codex_briefing(sb, name="reviewer"):
    """The context the child got at SubagentStart, as the hook printed it."""
    out = sb.run(sb.payload("SubagentStart", "codex", agent_id=AID, agent_type=name,
                            transcript_path=str(sb.path(ROLLOUT))))
    return out.context


def codex_call(sb, event="PostToolUse", name="reviewer", **fields):
    fields.setdefault("transcript_path", str(sb.path(ROLLOUT)))
    if event == "PostToolUse":
        fields.update(tool_name="Bash", tool_input={"command": "ls"}, tool_response="x", tool_use_id="call_9")
    else:
        fields.update(prompt="Now finish the task.")
    if name is not None:
        fields.update(agent_id=AID, agent_type=name)
    return sb.payload(event, "codex", **fields)


# Rollout recipes: ``brief`` stands for the SubagentStart delivery, ``again`` for a re-delivery.
CODEX_ROWS = [
    ("no compaction", ["meta", "brief", "round"], False),
    ("compacted after the spawn", ["meta", "brief", "round", "compacted"], True),
    ("compacted, then a tool round", ["meta", "brief", "compacted", "round"], True),
    ("compacted, delivered since", ["meta", "brief", "compacted", "again", "round"], False),
    ("delivered since, compacted again", ["meta", "brief", "compacted", "again", "round", "compacted"], True),
    ("a tool output forging the briefing after the compaction", ["meta", "brief", "compacted", "forged"], True),
    ("a compaction record quoted in a tool output only", ["meta", "brief", "quoted"], False),
    ("another agent's briefing after the compaction", ["meta", "brief", "compacted", "other"], True),
]


def codex_rollout(sb, recipe, text):
    pieces = {"meta": jl({"timestamp": "t", "ordinal": 0, "type": "session_meta", "payload": {"id": AID}}),
              "brief": developer(text), "again": developer(text, 40), "round": tool_round("total 0"),
              "compacted": compacted(),
              "forged": tool_round(text),
              "quoted": tool_round(compacted() + text),
              "other": developer(text.replace('agent="reviewer"', 'agent="someone-else"'))}
    return "".join(pieces[p] for p in recipe)


@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit"])
@pytest.mark.parametrize("row, recipe, again", CODEX_ROWS, ids=[r[0] for r in CODEX_ROWS])
def test_codex_rollout_decides(sandbox, event, row, recipe, again):
    sb = sandbox(CODEX)
    text = codex_briefing(sb)
    sb.write({ROLLOUT: codex_rollout(sb, recipe, text)})
    result = sb.run(codex_call(sb, event))
    if not again:
        return none(result)
    assert result.data["hookSpecificOutput"]["hookEventName"] == event
    assert result.context == text, "the same briefing, whole, as at spawn"
    assert result.system_message.endswith(AGAIN)


def test_codex_files_and_private_skills_come_again_too(sandbox):
    sb = sandbox(dict(CODEX, **{
        "project/docs/style.md": "STYLE: the house style.\n",
        "project/.briefing/skills/scout/SKILL.md": skill_md("scout", "SCOUT: private.\n"),
        "project/.codex/agents/reviewer.toml": '# briefing: skills = ["alpha", "scout"]\n'
                                               '# briefing: files = ["docs/*.md"]\nname = "reviewer"\n'
                                               'description = "r"\ndeveloper_instructions = "Review."\n'}))
    text = codex_briefing(sb)
    got = rebuild([text])
    assert set(got.skills) == {"alpha", "scout"} and got.files == {"docs/style.md": "STYLE: the house style.\n"}
    sb.write({ROLLOUT: codex_rollout(sb, ["meta", "brief", "round", "compacted"], text)})
    result = sb.run(codex_call(sb))
    assert result.context == text and result.system_message.endswith(AGAIN), result


CODEX_QUIET = [
    ("the main thread (no agent_id)", dict(name=None), {}),
    ("a role without a declaration", dict(name="plain"), {}),
    ("a rollout of another thread", dict(transcript_path="OTHER"), {}),
    ("a transcript outside CODEX_HOME", dict(transcript_path="OUTSIDE"), {}),
    ("no transcript_path", dict(transcript_path=None), {}),
    ("a rollout that is a FIFO", dict(), {"fifo": True}),
]


@pytest.mark.parametrize("row, call, how", CODEX_QUIET, ids=[r[0] for r in CODEX_QUIET])
def test_codex_quiet_calls(sandbox, row, call, how):
    from conftest import Fifo
    sb = sandbox(CODEX)
    text = codex_briefing(sb)
    compacted_rollout = codex_rollout(sb, ["meta", "brief", "compacted"], text)
    other = ROLLOUT.replace(AID, AID[:-4] + "beef")
    sb.write({ROLLOUT: Fifo() if how.get("fifo") else compacted_rollout, other: compacted_rollout,
              "elsewhere/" + os.path.basename(ROLLOUT): compacted_rollout})
    paths = {"OTHER": str(sb.path(other)), "OUTSIDE": str(sb.path("elsewhere/" + os.path.basename(ROLLOUT)))}
    fields = dict(call)
    if "transcript_path" in fields:
        fields["transcript_path"] = paths.get(fields["transcript_path"], fields["transcript_path"])
    payload = codex_call(sb, **fields)
    if payload.get("transcript_path") is None:
        payload.pop("transcript_path")
    none(sb.run(payload))


def test_codex_a_skill_gone_since_the_spawn_gets_the_abort(sandbox):
    sb = sandbox(CODEX)
    text = codex_briefing(sb)
    sb.write({ROLLOUT: codex_rollout(sb, ["meta", "brief", "compacted"], text)})
    os.unlink(str(sb.path("project/.codex/skills/beta/SKILL.md")))
    result = sb.run(codex_call(sb))
    assert rebuild([result.context]).aborted and "beta" in result.context and "<skill " not in result.context
    assert result.system_message.startswith("briefing: NOT briefed, told to abort")
    # The abort is a delivery too: once recorded, the next call is quiet.
    sb.write({ROLLOUT: codex_rollout(sb, ["meta", "brief", "compacted"], text) + developer(result.context, 50)})
    none(sb.run(codex_call(sb)))


def test_codex_once_per_compaction_as_the_rollout_records_it(sandbox):
    """What the hook delivers, Codex writes into the rollout before the next hook runs
    (measured): the next call finds it and prints nothing; the next compaction brings it again."""
    sb = sandbox(CODEX)
    text = codex_briefing(sb)
    rollout = codex_rollout(sb, ["meta", "brief", "round", "compacted"], text)
    seen = []
    for step in range(3):
        sb.write({ROLLOUT: rollout})
        result = sb.run(codex_call(sb))
        seen.append(result.context is not None)
        if result.context:
            rollout += developer(result.context, 100 + step)
        rollout += tool_round("ok", 200 + 2 * step)
    assert seen == [True, False, False]
    sb.write({ROLLOUT: rollout + compacted(300)})
    assert sb.run(codex_call(sb)).context == text


def test_codex_reads_only_the_end_of_a_long_rollout(sandbox):
    """A compaction at the end of a 6 MiB rollout is found; one at its start, far past the end
    that is read, with nothing delivered since, is not (see CODEX_TAIL)."""
    sb = sandbox(CODEX)
    text = codex_briefing(sb)
    filler = "".join(tool_round("x" * 60000, 1000 + 2 * i) for i in range(100))  # ~6 MiB
    sb.write({ROLLOUT: codex_rollout(sb, ["meta", "brief"], text) + filler + compacted(5000)})
    assert sb.run(codex_call(sb)).context == text
    sb.write({ROLLOUT: codex_rollout(sb, ["meta", "brief", "compacted"], text) + filler})
    none(sb.run(codex_call(sb)))


# --------------------------------------------------------------------------------------------
# Copilot CLI: the session's events.jsonl
# --------------------------------------------------------------------------------------------

COPILOT = dict(skills("project/.github/skills/%s/SKILL.md"), **{
    "project/.github/agents/reviewer.agent.md": agent_md("reviewer", ["alpha", "beta"], native=["gamma"]),
    "project/.github/agents/plain.agent.md": agent_md("plain"),
})

EVENTS = "home/.copilot/session-state/%s/events.jsonl" % SID


# The records' clock: "now" is when the hook reads them. The hook itself reads no clock (issue 36),
# so one fixed instant keeps every row's order exact, however long a run takes.
NOW = time.time()


def stamp(ago):
    """An ISO timestamp ``ago`` seconds before NOW, as Copilot writes them."""
    t = NOW - ago
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


def ev(kind, data, agent=AID, ago=60):
    """One event as Copilot writes it (JSON.stringify: compact, UTF-8), ``ago`` seconds old."""
    line = {"type": kind, "data": data, "id": "e", "timestamp": stamp(ago), "parentId": "p"}
    if agent:
        line["agentId"] = agent
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"


def hook_end(text, agent=AID, hook="preToolUse"):
    return ev("hook.end", {"hookInvocationId": "h", "hookType": hook, "success": True,
                           "output": {"additionalContext": text}}, agent)


def start(attempt="c1", agent=AID, ago=30):
    return ev("session.compaction_start", {"compactionAttemptId": attempt, "currentTokens": 150087,
                                           "tokenLimit": 64000, "trigger": "threshold"}, agent, ago)


def complete(attempt="c1", agent=AID, success=True, ago=20):
    return ev("session.compaction_complete", {"success": success, "outcome": "applied" if success else "failed",
                                              "compactionAttemptId": attempt, "summaryContent": "S"}, agent, ago)


def tool(agent=AID, name="bash", args=None, ago=10):
    """One tool call as Copilot records it, ``ago`` seconds ago: a preToolUse run (hook.start,
    before the hook runs; what a preToolUse hook prints is recorded nowhere), the call, its
    postToolUse run."""
    args = {"command": "ls -%s" % name} if args is None else args
    return (ev("tool.execution_start", {"toolName": name}, agent, ago)
            + ev("hook.start", {"hookInvocationId": "h", "hookType": "preToolUse", "input": {
                "sessionId": agent or SID, "toolCalls": [{"id": "toolu_1", "name": name, "args": args}]}},
                agent, ago)
            + ev("hook.end", {"hookInvocationId": "h", "hookType": "preToolUse", "success": True}, agent, ago)
            + ev("hook.start", {"hookType": "postToolUse", "input": {"toolResult": {"textResultForLlm": "ok"}}},
                 agent, ago)
            + ev("tool.execution_complete", {"success": True}, agent, ago))


def own(agent=AID, ago=0):
    """The preToolUse run of the call being made now, should Copilot have written it already:
    ``ago`` seconds old when the hook reads the file (its hook started that late)."""
    return ev("hook.start", {"hookInvocationId": "now", "hookType": "preToolUse", "input": {
        "sessionId": agent or SID, "toolCalls": [{"id": "toolu_9", "name": "bash", "args": {"command": "ls"}}]}},
        agent, ago)


def copilot_briefing(sb, name="reviewer"):
    spawn = sb.payload("SubagentStart", "copilot", agent_id=AID, agent_type=name, parent_agent_id=SID)
    return sb.run(spawn, env=sb.copilot_env()).flat_context


# Copilot stamps a payload, then records the run's hook.start: 2 to 31 ms later (measured).
STAMPED_BEFORE_ITS_RECORD = 0.003


def copilot_call(sb, name="reviewer", tool_name="Bash", started=0, **fields):
    """A tool call's PreToolUse payload, made ``started`` seconds before its hook reads the records."""
    if name is not None:
        fields.setdefault("agent_id", AID)
        fields.setdefault("agent_type", name)
        fields.setdefault("parent_agent_id", SID)
        fields.setdefault("session_id", AID)
    else:
        fields.setdefault("session_id", SID)
    fields.setdefault("tool_input", {"command": "ls"})
    fields.setdefault("timestamp", stamp(started + STAMPED_BEFORE_ITS_RECORD))
    return sb.payload("PreToolUse", "copilot", tool_name=tool_name, **fields)


SPAWNED = lambda b: hook_end(b, hook="subagentStart")  # noqa: E731

# Times in seconds before the hook reads the records. A run delivers when it sees the compaction
# and no earlier run of the agent started COPILOT_SETTLE (1) second or more after it completed.
COPILOT_ROWS = [
    ("no compaction", lambda b: SPAWNED(b) + tool() + own(), False),
    ("compaction complete", lambda b: SPAWNED(b) + tool(ago=40) + start() + tool(ago=25) + complete() + own(), True),
    ("this call not recorded yet", lambda b: SPAWNED(b) + start() + complete(), True),
    ("compaction still running", lambda b: SPAWNED(b) + start() + tool() + own(), False),
    ("compaction failed", lambda b: SPAWNED(b) + start() + complete(success=False) + own(), False),
    ("a tool call since the mark: it delivered", lambda b: start() + complete() + tool(ago=10) + own(), False),
    ("a tool call right after it completed may not have seen it",
     lambda b: start() + complete() + tool(ago=19.5) + own(), True),
    ("a tool call while it ran did not", lambda b: start() + tool(ago=25) + complete() + own(), True),
    ("only the task tool since: the guard's", lambda b: start() + complete() + tool(name="task") + own(), True),
    ("another agent compacted", lambda b: start(agent="other") + complete(agent="other") + own(), False),
    ("the main session compacted", lambda b: start(agent=None) + complete(agent=None) + own(), False),
    ("a second compaction after the re-delivery", lambda b: start(ago=60) + complete(ago=50) + tool(ago=40)
     + start("c2") + complete("c2") + own(), True),
    ("another agent's tool call since", lambda b: start() + complete() + tool(agent="other") + own(), True),
    ("the main session's tool call since", lambda b: start() + complete() + tool(agent=None) + own(), True),
]

# Issue 36, item 3. (b) Tool calls right after the compaction: the first run that sees it delivers,
# however soon (Copilot 1.0.102 made two calls after one and delivered in neither, under the old
# one-second settle rule). (a) A hook that starts late after its own hook.start was recorded
# (a loaded machine; PowerShell probing interpreters) must not take that record for an earlier
# delivery: the payload's timestamp says which records came before this call.
COPILOT_TIMING_ROWS = [
    ("this call 0.02 s after the compaction", 0, lambda b: start(ago=2) + complete(ago=0.02), True),
    ("this call 0.3 s after it, the one before at 0.02 s", 0,
     lambda b: start(ago=2) + complete(ago=0.3) + tool(ago=0.28) + own(), True),
    ("the hook starts 0.2 s after its record", 0.2, lambda b: start(ago=30) + complete(ago=20) + own(ago=0.2), True),
    ("the hook starts 1.5 s after its record", 1.5, lambda b: start(ago=30) + complete(ago=20) + own(ago=1.5), True),
    ("the hook starts 20 s after its record", 20, lambda b: start(ago=30) + complete(ago=25) + own(ago=20), True),
    ("late, and the compaction just before its call", 20,
     lambda b: start(ago=30) + complete(ago=20.1) + own(ago=20), True),
    ("late, and a run surely after the compaction before it", 20,
     lambda b: start(ago=40) + complete(ago=30) + tool(ago=25) + own(ago=20), False),
    ("late, and calls made after it recorded meanwhile", 20,
     lambda b: start(ago=30) + complete(ago=25) + own(ago=20) + tool(ago=10) + tool(ago=5), True),
]


@pytest.mark.parametrize("row, records, again", COPILOT_ROWS, ids=[r[0] for r in COPILOT_ROWS])
def test_copilot_events_decide(sandbox, row, records, again):
    sb = sandbox(COPILOT)
    sb.write({EVENTS: ev("session.start", {}, None) + records(copilot_briefing(sb))})
    result = sb.run(copilot_call(sb), env=sb.copilot_env())
    if not again:
        return none(result)
    got = rebuild([result.flat_context])
    # Copilot's <skill-context> preload of gamma went with the compaction: it comes from briefing now.
    assert set(got.skills) == {"alpha", "beta", "gamma"} and got.agent == "reviewer"
    assert "hookSpecificOutput" not in result.data
    assert result.system_message.endswith(AGAIN)


@pytest.mark.parametrize("row, started, records, again", COPILOT_TIMING_ROWS, ids=[r[0] for r in COPILOT_TIMING_ROWS])
def test_copilot_timing_never_loses_the_delivery(sandbox, row, started, records, again):
    sb = sandbox(COPILOT)
    sb.write({EVENTS: ev("session.start", {}, None) + records(copilot_briefing(sb))})
    result = sb.run(copilot_call(sb, started=started), env=sb.copilot_env())
    if not again:
        return none(result)
    assert set(rebuild([result.flat_context]).skills) == {"alpha", "beta", "gamma"}


COPILOT_STAMPS = [
    # (row, the payload's timestamp given its call was made ``ago`` seconds before the hook reads)
    ("Copilot's own epoch milliseconds", lambda ago: int((NOW - ago) * 1000)),
    ("no timestamp", lambda ago: None),
    ("an unreadable timestamp", lambda ago: "not a time"),
]


@pytest.mark.parametrize("row, stamped", COPILOT_STAMPS, ids=[r[0] for r in COPILOT_STAMPS])
def test_copilot_payload_without_an_iso_timestamp(sandbox, row, stamped):
    """A hook started 20 s after its record. Copilot's own payloads stamp epoch milliseconds;
    without a readable stamp, a record of a call with this call's arguments is taken for this
    run's own (a second copy at worst, never none)."""
    sb = sandbox(COPILOT)
    sb.write({EVENTS: SPAWNED(copilot_briefing(sb)) + start(ago=30) + complete(ago=25) + own(ago=20)})
    this = copilot_call(sb, timestamp=stamped(20.003))
    assert set(rebuild([sb.run(this, env=sb.copilot_env()).flat_context]).skills) == {"alpha", "beta", "gamma"}
    # A later call, other arguments: that record is an earlier run, 5 s after the compaction.
    later = copilot_call(sb, tool_input={"command": "pwd"}, timestamp=stamped(10))
    none(sb.run(later, env=sb.copilot_env()))


COPILOT_QUIET = [
    ("the main session, not an --agent session", dict(name=None)),
    ("an agent without a declaration", dict(name="plain")),
    ("a parent id that leaves session-state", dict(parent_agent_id="../" + SID)),
    ("a parent id with a separator", dict(parent_agent_id=SID + "/x")),
    ("no parent id", dict(parent_agent_id=None)),
]


@pytest.mark.parametrize("row, fields", COPILOT_QUIET, ids=[r[0] for r in COPILOT_QUIET])
def test_copilot_quiet_calls(sandbox, row, fields):
    sb = sandbox(COPILOT)
    body = copilot_briefing(sb)
    everyone = start() + complete() + start(agent=None) + complete(agent=None)
    sb.write({EVENTS: SPAWNED(body) + everyone,
              "home/.copilot/x/events.jsonl": everyone})
    payload = copilot_call(sb, **{k: v for k, v in fields.items() if k != "parent_agent_id"})
    if "parent_agent_id" in fields:
        if fields["parent_agent_id"] is None:
            payload.pop("parent_agent_id")
        else:
            payload["parent_agent_id"] = fields["parent_agent_id"]
    none(sb.run(payload, env=sb.copilot_env()))


def test_copilot_the_task_tool_still_meets_the_guard(sandbox):
    sb = sandbox(dict(COPILOT, **{"project/.github/agents/broken.agent.md": agent_md("broken", ["ghost"])}))
    sb.write({EVENTS: start() + complete()})
    result = sb.run(copilot_call(sb, tool_name="Agent", tool_input={"agent_type": "broken", "prompt": "p"}),
                    env=sb.copilot_env())
    assert result.decision == "deny" and "ghost" in result.reason


def at(t):
    """An ISO timestamp ``t`` seconds after the compaction of the generated timelines below."""
    return stamp(-t)


def test_copilot_generated_timelines_never_lose_the_delivery(sandbox):
    """Property (issue 36, item 3), over generated timelines of one agent's tool calls after a
    compaction completed at t = 0: Copilot stamps each call's payload, records its hook.start 2
    to 31 ms later, and the hook reads the file after a delay (0 to 20 s: a loaded machine) and
    sees only what Copilot had written by then (everything older than a lag of 0.02 to 0.3 s,
    under COPILOT_SETTLE). Then the first run that sees the compaction delivers, whatever the
    timing, and no run delivers after an earlier run that surely saw it."""
    import importlib
    import random
    from conftest import hook_package
    hook_package()
    COPILOT_SETTLE = importlib.import_module("briefing.harnesses.copilot").COPILOT_SETTLE
    sb = sandbox(COPILOT)
    spawned = SPAWNED(copilot_briefing(sb))
    rng = random.Random(36)
    for case in range(40):
        calls, t = [], rng.choice([0.005, 0.02, 0.3, 1.2, 5.0]) * rng.random()
        for k in range(rng.randint(1, 5)):
            stamped = t
            recorded = stamped + rng.uniform(0.002, 0.031)
            read = recorded + rng.choice([0.01, 0.05, 0.2, 1.5, 20]) * rng.random()
            lag = rng.uniform(0.02, 0.3)
            calls.append((stamped, recorded, read - lag))
            t = read + rng.uniform(0.005, 2.0)  # the next call comes after this one's hook ran
        delivered, sure = [], []
        for k, (stamped, recorded, seen_until) in enumerate(calls):
            events = [(-30, start(ago=0)), (0, complete(ago=0))]
            events += [(r, tool(args={"command": "call %d" % j}, ago=0)) for j, (_, r, _) in enumerate(calls)]
            visible = "".join(line.replace(stamp(0), at(when)) for when, line in sorted(events, key=lambda e: e[0])
                              if when <= seen_until)
            sb.write({EVENTS: ev("session.start", {}, None, 60) + spawned + visible})
            payload = copilot_call(sb, tool_input={"command": "call %d" % k}, timestamp=at(stamped))
            result = sb.run(payload, env=sb.copilot_env())
            sees = seen_until >= 0
            delivered.append(result.flat_context is not None)
            assert not delivered[-1] or sees, (case, k, calls)
            if sees and not any(delivered[:-1]):
                assert delivered[-1], ("the first run that sees the compaction must deliver", case, k, calls)
            if any(sure):
                assert not delivered[-1], ("delivered after a run that surely did", case, k, calls)
            sure.append(delivered[-1] and recorded >= COPILOT_SETTLE)


def test_copilot_once_per_compaction_as_the_events_record_it(sandbox):
    """Each call's preToolUse run is recorded before the hook runs: the first call after the
    compaction delivers, the next ones find that run and print nothing; the next compaction
    brings it again."""
    sb = sandbox(COPILOT)
    records = SPAWNED(copilot_briefing(sb)) + start(ago=40) + tool(ago=35) + complete(ago=30)
    seen = []
    for step in range(4):
        at = 8 - 2 * step  # seconds ago: this call's record
        if step == 3:
            records += start("c2", ago=at + 1.5) + complete("c2", ago=at + 1)
        args = {"command": "step %d" % step}
        records += tool(args=args, ago=at)
        sb.write({EVENTS: records})
        result = sb.run(copilot_call(sb, tool_input=args, started=at), env=sb.copilot_env())
        seen.append(result.flat_context is not None)
    assert seen == [True, False, False, True]


def test_copilot_a_skill_gone_since_the_spawn_gets_the_abort(sandbox):
    sb = sandbox(COPILOT)
    sb.write({EVENTS: SPAWNED(copilot_briefing(sb)) + start() + complete()})
    os.unlink(str(sb.path("project/.github/skills/gamma/SKILL.md")))  # a native entry counts as much
    result = sb.run(copilot_call(sb), env=sb.copilot_env())
    assert rebuild([result.flat_context]).aborted and "gamma" in result.flat_context
    assert "<skill " not in result.flat_context


# --------------------------------------------------------------------------------------------
# Copilot CLI `--agent NAME` sessions: found on Copilot's command line (a real process chain)
# --------------------------------------------------------------------------------------------

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def as_copilot(sb, tmp_path, payload, *copilot_args):
    """Run the hook as the child of a process whose program is called copilot, given ``copilot_args``."""
    copilot = tmp_path / "bin" / "copilot"
    if not copilot.exists():
        copilot.parent.mkdir()
        os.symlink("/bin/sh", str(copilot))
    stdin = tmp_path / "payload.json"
    stdin.write_text(json.dumps(payload))
    script = '"$0" "$1" < "$2"; true'  # "; true": the shell must not exec the hook
    argv = [str(copilot), "-c", script, HOOK_PYTHON, str(HOOK), str(stdin)] + list(copilot_args)
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(sb.project),
                          env=sb.env(**sb.copilot_env()), timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
    return json.loads(proc.stdout.decode()) if proc.stdout.strip() else None


@needs_proc
@pytest.mark.parametrize("flags, briefed", [
    (("-p", "go", "--agent", "reviewer"), True),
    (("-p", "go", "--agent=reviewer"), True),
    (("-p", "go"), False),
    (("-p", "go", "--agent", "plain"), False),
], ids=["--agent NAME", "--agent=NAME", "no --agent", "an agent without a declaration"])
def test_copilot_agent_session_is_briefed_at_session_start(sandbox, tmp_path, flags, briefed):
    sb = sandbox(COPILOT)
    out = as_copilot(sb, tmp_path, sb.payload("SessionStart", "copilot", session_id=SID), *flags)
    if not briefed:
        assert out is None or "additionalContext" not in out, out
        return
    got = rebuild([out["additionalContext"]])
    # Copilot preloads the session agent's own skills: field itself (in its system prompt).
    assert set(got.skills) == {"alpha", "beta"} and got.agent == "reviewer"
    assert not out["systemMessage"].endswith(AGAIN)


@needs_proc
def test_copilot_agent_session_is_briefed_again_after_it_compacts(sandbox, tmp_path):
    sb = sandbox(COPILOT)
    first = as_copilot(sb, tmp_path, sb.payload("SessionStart", "copilot", session_id=SID), "--agent", "reviewer")
    records = hook_end(first["additionalContext"], agent=None, hook="sessionStart")
    call = copilot_call(sb, name=None)
    sb.write({EVENTS: records + tool(None) + own(None)})
    assert as_copilot(sb, tmp_path, call, "--agent", "reviewer") is None  # not compacted yet
    records += start(agent=None) + tool(None) + complete(agent=None)
    sb.write({EVENTS: records + own(None)})
    out = as_copilot(sb, tmp_path, call, "--agent", "reviewer")
    assert out["additionalContext"] == first["additionalContext"]  # its system prompt kept gamma
    assert out["systemMessage"].endswith(AGAIN)
    sb.write({EVENTS: records + own(None) + tool(None) + own(None)})
    assert as_copilot(sb, tmp_path, call, "--agent", "reviewer") is None  # once
    assert as_copilot(sb, tmp_path, call) is None  # a session that runs as no agent


# --------------------------------------------------------------------------------------------
# Gemini CLI: no hook names the agent a request is for
# --------------------------------------------------------------------------------------------

def test_harnesses_without_records_print_nothing_on_tool_calls(sandbox):
    sb = sandbox(CLAUDE)
    # Claude Code brings the briefing back at SessionStart(compact), not at tool calls.
    none(sb.run(sb.payload("PostToolUse", agent_id="a1", agent_type="reviewer", tool_name="Bash",
                           tool_input={"command": "ls"}, tool_response="x")))
    gemini = {"hook_event_name": "BeforeTool", "session_id": "g", "cwd": str(sb.project),
              "tool_name": "read_file", "tool_input": {"path": "x"}}
    none(sb.run(gemini, env={"GEMINI_SESSION_ID": "g"}))


# --------------------------------------------------------------------------------------------
# The doctor: when the agent receives its briefing, per harness (item 8); rubber-duck (item 9)
# --------------------------------------------------------------------------------------------

WHEN = [
    ("claude", CLAUDE, "again after every compaction: Claude Code sends the compacted agent SessionStart"),
    ("codex", CODEX, "again after every compaction of the agent: at its next tool call (PostToolUse) or its "
                     "next turn (UserPromptSubmit)"),
    ("copilot", COPILOT, "again after every compaction of the agent, at its next tool call (PreToolUse)"),
    ("gemini", {"home/.gemini/agents/reviewer.md": "---\nname: reviewer\ndescription: d\n---\n"
                                                    '<!-- briefing: skills = ["alpha"] -->\nBody.\n',
                "home/.gemini/skills/alpha/SKILL.md": skill_md("alpha", BODIES["alpha"])},
     "at spawn only, in front of the spawn's prompt: Gemini CLI compresses a subagent only on its "
     "final-warning recovery turn"),
]


@pytest.mark.parametrize("harness, files, said", WHEN, ids=[w[0] for w in WHEN])
def test_doctor_show_says_when_the_agent_receives_its_briefing(sandbox, harness, files, said):
    sb = sandbox(files)
    env = {"GEMINI_CLI_HOME": str(sb.home)} if harness == "gemini" else {}
    text = sb.doctor("--show", "reviewer", "--harness", harness, env=env)
    assert text.rc == 0, text
    assert "    receives its briefing at spawn" in text.out and said in text.out, text.out
    data = json.loads(sb.doctor("--show", "reviewer", "--harness", harness, "--json", env=env).out)
    assert all(said in show["when"] for show in data["shows"]), data["shows"]


def test_doctor_for_gemini_says_a_compressed_subagent_loses_its_briefing(sandbox):
    sb = sandbox(WHEN[3][1])
    data = json.loads(sb.doctor("--harness", "gemini", "--json").out)
    (check,) = [c for c in data["checks"] if c["name"] == "gemini-compression"]
    assert check["status"] == "ok" and "cannot give it back" in check["detail"], check


def test_doctor_lists_copilots_hidden_rubber_duck_among_the_agents_a_rule_applies_to(sandbox):
    sb = sandbox(dict(COPILOT, **{"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["*"], "skills": ["alpha"]}]})}))
    data = json.loads(sb.doctor("--harness", "copilot", "--json").out)
    (rule,) = data["rules"]
    assert "rubber-duck" in rule["harnesses"]["copilot"]["applies_to"], rule
    # and a rubber-duck spawn is briefed by that rule, at its start and after a compaction
    spawn = sb.payload("SubagentStart", "copilot", agent_id=AID, agent_type="rubber-duck", parent_agent_id=SID)
    assert set(rebuild([sb.run(spawn, env=sb.copilot_env()).flat_context]).skills) == {"alpha"}
