"""OpenCode 1.18.33 and Kilo 7.7.7, each with briefing's plugin installed as the README says.

One run per CLI drives three spawns through the model's task tool (a declaring
agent whose skill holds a marker and a 60,000-character body, and which is
compacted after its first turn; a control agent; an agent whose skill is
missing); a second run spawns the missing-skill agent through a command with
``subtask: true``, which cannot be refused.
"""
import os
import re

import pytest

from fake_chat import FakeChat, body_keys, say, task, tool_call
from framing import rebuild
from opencode_runner import OpenCodeMachine, binary, build_plugin
from runners import Missing

MAGIC = "MAGIC-OPENCODE-7f3a1c"
BIG = 60000
FILLER = ("briefing filler line 0123456789 abcdefghijklmnopqrstuvwxyz.\n" * (BIG // 60 + 1))
BODY = ("The phrase is %s.\n" % MAGIC + FILLER)[:BIG - len("\nEND-OF-BODY\n")] + "\nEND-OF-BODY\n"

AGENTS = {
    "{dir}/agents/briefed.md": ("---\ndescription: Knows the phrase.\nmode: subagent\nbriefing:\n"
                                "  skills: [demo-magic]\n---\nAnswer with the phrase your skill holds.\n"),
    "{dir}/agents/control.md": ("---\ndescription: Knows nothing.\nmode: subagent\n---\n"
                                "Answer with the phrase your skill holds.\n"),
    "{dir}/agents/broken.md": ("---\ndescription: Declares a missing skill.\nmode: subagent\nbriefing:\n"
                               "  skills: [nope]\n---\nbody\n"),
    # Listed to every agent by name and description: nothing in them gives the phrase away.
    "{dir}/skills/demo-magic/SKILL.md": "---\nname: demo-magic\ndescription: A demo skill.\n---\n" + BODY,
    # The same name where both CLIs look too, and rank lower (Kilo, measured) or take at random
    # (OpenCode): briefing delivers the config folder's copy.
    ".claude/skills/demo-magic/SKILL.md": "---\nname: demo-magic\ndescription: A decoy.\n---\nThe phrase is DECOY-PHRASE.\n",
    "{dir}/commands/sub-broken.md": "---\ndescription: sub\nagent: broken\nsubtask: true\n---\nTASK-FOR-broken $ARGUMENTS\n",
}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    try:
        binary("opencode")
    except Missing as missing:
        message = "e2e: %s" % missing
        if os.environ.get("BRIEFING_E2E_REQUIRED") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return build_plugin(tmp_path_factory.mktemp("build"))


def briefings(text):
    return text.count("<briefing agent=")


def child_script(compact):
    turns = {}

    def script(req):
        if not req.has_tools:  # the title's, or a summarizer's request
            return say("SUMMARY OF THE WORK")
        if req.parent:  # a subagent's model turn
            turns[req.session] = turns.get(req.session, 0) + 1
            user = "\n".join(req.texts("user"))
            if compact and "TASK-FOR-briefed" in user and turns[req.session] == 1:
                # Reported usage past the context: the CLI compacts the child before its next turn.
                return tool_call("glob", {"pattern": "*.md"}, prompt_tokens=1000000)
            found = re.search(r"The phrase is (\S+)\.", req.system)
            return say("CHILD-ANSWER: " + (found.group(1) if found else "no phrase"))
        return None
    return script


@pytest.fixture(params=["opencode", "kilo"])
def cli(request):
    return request.param


def delegation_script(plan, delegates=lambda req: True):
    """The parent spawns each agent of ``plan`` in turn (where ``delegates(req)``), then is done;
    the children answer as ``child_script(compact=True)`` does."""
    child = child_script(compact=True)

    def script(req):
        reply = child(req)
        if reply is not None:
            return reply
        done = len(req.tool_results())
        if delegates(req) and done < len(plan):
            return task(plan[done], prompt="TASK-FOR-%s" % plan[done])
        return say("PARENT-DONE")
    return script


def test_spawns(cli, plugin, tmp_path, serve):
    plan = ["briefed", "control", "broken"]
    server = serve(FakeChat, delegation_script(plan))
    machine = OpenCodeMachine(tmp_path, server, cli, plugin, context=20000).write(AGENTS)
    proc = machine.run("Delegate the three tasks.")
    assert proc.rc == 0 and not proc.timed_out, proc

    # Nothing of the declaration reaches the provider: no request body has a briefing key.
    for req in server.log:
        assert "briefing" not in body_keys(req.body), (req.index, sorted(body_keys(req.body)))

    parents = [r for r in server.log if r.has_tools and not r.parent]
    results = parents[-1].tool_results()
    assert len(results) == 3, [r[:300] for r in results]
    briefed, control, broken = results
    # The declaring agent answers from the marker only its skill holds; the control cannot.
    assert "CHILD-ANSWER: %s" % MAGIC in briefed, briefed[:500]
    assert "CHILD-ANSWER: no phrase" in control, control[:500]
    assert MAGIC not in control
    # The missing skill refuses the spawn with briefing's reason, and no child starts.
    assert broken.startswith("briefing: agent 'broken' references unknown skill(s): nope"), broken
    assert not [r for r in server.log if "TASK-FOR-broken" in "\n".join(r.texts("user")) and r.parent]

    sessions = {}
    for req in server.log:
        user = "\n".join(req.texts("user"))
        for name in plan:
            if req.session and "TASK-FOR-%s" % name in user and (req.parent or not req.has_tools):
                sessions.setdefault(name, req.session)
    briefed_requests = [r for r in server.log if r.session == sessions["briefed"]]
    turns = [r for r in briefed_requests if r.parent]
    summarizers = [r for r in briefed_requests if not r.has_tools]
    assert len(turns) >= 2 and summarizers, [(r.index, r.has_tools, bool(r.parent)) for r in briefed_requests]
    # Every turn of the child holds the briefing once, whole (the 60,000-character body exactly),
    # in a system message; so does the first one after the compaction.
    for req in turns:
        assert briefings(req.system) == 1, (req.index, briefings(req.system))
        start = req.system.index("<briefing agent=")
        rebuilt = rebuild([req.system[start:]])
        assert rebuilt.skills == {"demo-magic": BODY}, req.index
    after = [r for r in turns if r.index > summarizers[0].index]
    assert after, "no turn of the child after its compaction"
    assert briefings(after[0].system) == 1
    # The summarizer's request holds none of it.
    for req in summarizers:
        assert briefings(req.all_text) == 0 and MAGIC not in req.all_text, req.index
    # Kilo lists the skill at the copy briefing delivered (OpenCode's listing varies run by run).
    if cli == "kilo":
        listed = re.search(r"<name>demo-magic</name>\s*<description>[^<]*</description>\s*<location>([^<]*)</location>",
                           parents[0].system)
        assert listed and os.path.dirname(listed.group(1)) == rebuilt.dirs["demo-magic"], parents[0].system[-3000:]
    # The control's turns carry no briefing at all.
    for req in server.log:
        if req.session == sessions["control"]:
            assert briefings(req.all_text) == 0

    # The pre-flight (the broken agent) is in the CLI's log and, under `run`, on stderr; the
    # audit line in the log.
    logs = machine.logs()
    assert "briefing pre-flight" in logs and "agent 'broken'" in logs, logs[-3000:]
    # The plugin told the CLIs apart: the hook's pre-flight names the right one.
    label = {"opencode": "OpenCode", "kilo": "Kilo"}[cli]
    assert "briefing pre-flight" in proc.stderr and "%s agent 'broken'" % label in proc.stderr, proc
    assert "briefing: briefed \u2190 demo-magic (60.0 kB)" in logs, logs[-3000:]


def test_subtask_command_gets_the_abort_instruction(cli, plugin, tmp_path, serve):
    child = child_script(compact=False)

    def script(req):
        reply = child(req)
        return reply if reply is not None else say("PARENT-DONE")

    server = serve(FakeChat, script)
    machine = OpenCodeMachine(tmp_path, server, cli, plugin).write(AGENTS)
    proc = machine.run("argx", "--command", "sub-broken")
    # A throw here would fail the whole turn (measured): the child starts, told to abort.
    assert proc.rc == 0 and not proc.timed_out, proc
    turns = [r for r in server.children() if "TASK-FOR-broken" in "\n".join(r.texts("user"))]
    assert turns, [(r.index, r.session, r.parent) for r in server.log]
    first = turns[0].system
    assert 'status="abort"' in first and "STOP. Do not attempt the task" in first, first[-2000:]
    assert "<skill " not in first
    for req in server.log:
        assert "briefing" not in body_keys(req.body)


def test_a_plugin_folder_removed_after_start_refuses_a_declaring_spawn(cli, plugin, tmp_path, serve):
    """Issue 43, item 2: the built folder is removed (an update, ``scripts/build-opencode-plugin OUT``
    again) while the CLI runs. Every hook run then fails; the plugin refuses the task call with the
    line every command-hook harness prints for a vanished folder, and the child never starts."""
    import shutil
    own = build_plugin(tmp_path / "own")  # this run's copy, removed while it runs
    removed = []
    child = child_script(compact=False)

    def script(req):
        reply = child(req)
        if reply is not None:
            return reply
        if not req.tool_results():
            if not removed:
                shutil.rmtree(str(own))  # after the plugin started (its pre-flight ran), before the spawn
                removed.append(True)
            return task("briefed", prompt="TASK-FOR-briefed")
        return say("PARENT-DONE")

    server = serve(FakeChat, script)
    machine = OpenCodeMachine(tmp_path / "machine", server, cli, own).write(AGENTS)
    proc = machine.run("Delegate the task.")
    assert proc.rc == 0 and not proc.timed_out, proc
    assert removed and not own.exists()
    gone = ("briefing cannot run: its folder %s is gone (updated or removed while this session ran), so every agent "
            "spawn is refused. Restart the session; if this goes on, reinstall briefing." % own)
    parents = [r for r in server.log if r.has_tools and not r.parent]
    results = parents[-1].tool_results()
    assert len(results) == 1 and results[0].startswith(gone), results
    assert not server.children(), [(r.index, r.session) for r in server.children()]
    assert not [r for r in server.log if "TASK-FOR-briefed" in "\n".join(r.texts("user")) and r.session != parents[0].session]
    # The plugin logs the line too, but `<cli> run` may exit before its log holds it (measured for
    # other plugin lines, issue 40): where the log has a line of briefing's after the spawn, it is this one.
    logged = [line for line in machine.logs().splitlines() if "briefing cannot run" in line]
    assert all(gone in line for line in logged), logged
    # It started whole: the pre-flight ran from the folder before it went away.
    assert "briefing pre-flight" in proc.stderr, proc


def test_a_different_spelling_starts_no_agent(cli, plugin, tmp_path, serve):
    """Issue 43: OpenCode and Kilo look an agent up by its exact name (measured), so no spelling
    reaches an agent whose rules or declaration a spelling-blind harness would have to fold."""
    plan = ["BROKEN", "Briefed", "brief_ed", "control "]
    server = serve(FakeChat, delegation_script(plan))
    machine = OpenCodeMachine(tmp_path, server, cli, plugin).write(AGENTS)
    proc = machine.run("Delegate.")
    assert proc.rc == 0 and not proc.timed_out, proc
    results = [r for r in server.log if r.has_tools and not r.parent][-1].tool_results()
    assert results == ["Unknown agent type: %s is not a valid agent type" % name for name in plan], results
    assert not [r for r in server.log if r.parent]
