"""End-to-end, issue 27: briefing delivers a skill as the real Claude Code 2.1.328 renders it.

Claude Code substitutes ``${CLAUDE_SKILL_DIR}`` and friends in a skill it
preloads itself, and runs its ``!`` commands (facts/rendering.md). Here:

- a subagent briefed with a skill that says ``python3 ${CLAUDE_SKILL_DIR}/scripts/probe.py``
  finds that line in its context, runs it as written there, and the script runs: its
  output (a secret that is only in the script file) comes back in the tool result;
- for each kind of skill (a skill folder, a legacy command, a plugin's skill and
  command), the text briefing delivers is byte for byte the text Claude Code's own
  preload of the same file delivers, with commands turned off by
  ``disableSkillShellExecution`` and without any;
- a skill with a ``!`` line under ``briefing:`` is refused, naming the skill and the
  line; the same skill preloaded natively is Claude Code's: the command runs, and
  briefing injects nothing.
"""
import json
import re

import pytest

from conftest import agent_md as unit_agent_md
from fakes import bash, block_text, briefing_parts, spawn
from framing import rebuild
from kit import marker, ok, tool_results
from runners import REPO, write_tree
from test_claude import machine, subagent_parts  # noqa: F401  (machine is a fixture)

pytestmark = pytest.mark.e2e

PROBE_LINE = re.compile(r"python3 (\S+/scripts/probe\.py)")


def agent(name, skills=None, native=None):
    return unit_agent_md(name, skills, native,
                         body="You are the e2e agent %s. Do the task and report.\n" % name.upper())


def skill_text(name, body, meta=""):
    return "---\nname: %s\ndescription: Use for the %s e2e check.\n%s---\n%s" % (name, name, meta, body)


def request_of(server, name):
    """The first request of the subagent spawned as ``name``."""
    found = [r for r in server.subagent_requests() if "You are the e2e agent %s." % name.upper() in r.all_text]
    return found[0] if found else None


def spawner(names, subagent=None):
    """The main agent spawns each of ``names`` in turn; a subagent answers ``subagent(request)``."""
    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            return subagent(r) if subagent else "done"
        done = len(tool_results(r))
        if done < len(names):
            return [spawn(names[done], prompt="Do the e2e task #%d and report." % (done + 1))]
        return "All done."
    return script


def test_a_briefed_subagent_runs_the_line_its_skill_gives_it(machine):
    start, secret = marker("probe-start"), marker("probe-script")
    body = ("# probe\n\nFirst line: %s\n\nTo check the build, run exactly this line:\n\n"
            "    python3 ${CLAUDE_SKILL_DIR}/scripts/probe.py\n\nand report what it prints.\n" % start)

    def subagent(r):
        if start not in r.all_text:
            return "Report: UNBRIEFED"
        results = tool_results(r)
        if not results:
            found = PROBE_LINE.search(r.all_text)
            command = found.group(0) if found else "python3 ${CLAUDE_SKILL_DIR}/scripts/probe.py"
            return [bash(command, description="run the probe")]
        return "Report: " + block_text(results[-1].get("content"))

    claude = machine(spawner(["prober"], subagent))
    skill_dir = claude.project / ".claude" / "skills" / "probe"
    claude.write({
        "project/.claude/skills/probe/SKILL.md": skill_text("probe", body),
        "project/.claude/skills/probe/scripts/probe.py": "print(%r)\n" % secret,
        "project/.claude/agents/prober.md": agent("prober", ["probe"]),
    })
    result = ok(claude.run("Probe the build.", "--allowedTools", "Bash(python3 *)"))
    request = request_of(claude.server, "prober")
    assert request is not None, "the agent was not spawned"
    rebuilt = rebuild(subagent_parts(request))
    assert rebuilt.skills == {"probe": body.replace("${CLAUDE_SKILL_DIR}", str(skill_dir))}
    calls = [r for r in claude.server.subagent_requests() if tool_results(r)]
    assert calls, "the subagent ran nothing"
    ran = [b for m in calls[0].messages if m.get("role") == "assistant" and isinstance(m.get("content"), list)
           for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert ran and ran[-1]["input"]["command"] == "python3 %s/scripts/probe.py" % skill_dir, ran
    output = block_text(tool_results(calls[0])[-1].get("content"))
    assert secret in output, output  # the script ran: only it knows this
    assert secret not in request.all_text  # ...and it was not in the briefing
    mains = [r for r in claude.server.main_requests() if r.has_tools]
    assert secret in block_text(tool_results(mains[-1])[-1].get("content"))
    assert result.rc == 0


# Every token Claude Code renders in a preload, and some it leaves alone (docs/claude-code.md).
TOKENS = ("dir=[${CLAUDE_SKILL_DIR}] root=[${CLAUDE_PLUGIN_ROOT}] data=[${CLAUDE_PLUGIN_DATA}]\n"
          "project=[${CLAUDE_PROJECT_DIR}] session=[${CLAUDE_SESSION_ID}]\n"
          "args=[$ARGUMENTS] a0=[$ARGUMENTS[0]] d0=[$0] d1=[$1] named=[$topic] other=[$topicx]\n"
          "esc=[\\$ARGUMENTS] esc0=[\\$0] twice=[\\\\$ARGUMENTS] foo=[$ARGUMENTSfoo]\n"
          "home=[$HOME] [${HOME}] unknown=[${CLAUDE_UNKNOWN}] secret=[${user_config.apikey}]\n"
          "odd=[\ufffe\uffff] bracket=[!`echo NOT-RUN`] span=`!`echo NOT-RUN-EITHER``\n")
COMMANDS = "run !`echo BANG-\"RAN\"`\n```!\necho FENCE-\"RAN\"\n```\nempty ```!\n```\n"


def kinds(tmp_path, body):
    """{kind: (files to write, the name to declare it by, plugin folder or None)} with ``body``."""
    plugin = tmp_path / "devtools"
    write_tree(plugin, {
        ".claude-plugin/plugin.json": json.dumps({"name": "devtools", "version": "1.0.0", "userConfig": {
            "apikey": {"type": "string", "title": "key", "description": "key", "sensitive": True}}}),
        "skills/plugskill/SKILL.md": skill_text("plugskill", body, "arguments: topic\n"),
        "commands/plugcmd.md": "---\ndescription: a plugin command\narguments: topic\n---\n" + body,
    })
    return {
        "skill": ({"project/.claude/skills/projskill/SKILL.md":
                   skill_text("projskill", body, "arguments: topic\n")}, "projskill"),
        "command": ({"project/.claude/commands/projcmd.md": "---\ndescription: a command\narguments: topic\n---\n"
                     + body}, "projcmd"),
        "plugin-skill": ({}, "devtools:plugskill"),
        "plugin-command": ({}, "devtools:plugcmd"),
    }, plugin


def preloaded_text(request, start):
    """What Claude Code's own preload put in the subagent's first message for the skill holding ``start``."""
    content = request.messages[0].get("content") if request.messages else None
    for block in content if isinstance(content, list) else []:
        text = block.get("text", "") if isinstance(block, dict) else ""
        if start in text:
            return re.sub(r"\ABase directory for this skill: [^\n]*\n\n", "", text)
    return None


@pytest.mark.parametrize("disabled", [False, True], ids=["tokens", "commands-disabled"])
def test_briefing_delivers_what_claude_codes_own_preload_delivers(machine, tmp_path, disabled):
    start = marker("render-start")
    body = "First line: %s\n%s%s" % (start, TOKENS, COMMANDS if disabled else "")
    table, plugin = kinds(tmp_path, body)
    names = []
    for kind, (files, declared) in table.items():
        names += ["native-" + kind, "briefed-" + kind]
    claude = machine(spawner(names))
    for kind, (files, declared) in table.items():
        claude.write(files)
        claude.write({"project/.claude/agents/native-%s.md" % kind: agent("native-" + kind, native=[declared]),
                      "project/.claude/agents/briefed-%s.md" % kind: agent("briefed-" + kind, [declared])})
    if disabled:
        claude.write({"project/.claude/settings.json": json.dumps({"disableSkillShellExecution": True})})
    result = ok(claude.run("Run every agent.", plugin_dirs=(REPO, plugin), timeout=180))
    session = result.init["session_id"]
    for kind, (files, declared) in table.items():
        native = request_of(claude.server, "native-" + kind)
        briefed = request_of(claude.server, "briefed-" + kind)
        assert native is not None and briefed is not None, kind
        assert not subagent_parts(native), "%s: briefing injected what Claude Code preloads" % kind
        expected = preloaded_text(native, start)
        assert expected is not None, "%s: not in Claude Code's own preload" % kind
        assert session in expected, kind
        if disabled:
            assert expected.count("[shell command execution disabled by policy]") == 3, expected
        (delivered,) = rebuild(subagent_parts(briefed)).skills.values()
        assert delivered == expected, "%s: briefing delivered\n%r\nClaude Code\n%r" % (kind, delivered, expected)


def test_a_bang_skill_is_refused_under_briefing_and_left_to_claude_code_natively(machine):
    start = marker("bang-start")
    body = "First line: %s\nState of the tree:\nstatus !`echo BANG-\"RAN\"`\n" % start
    claude = machine(spawner(["banger", "native-banger"]))
    claude.write({
        "project/.claude/skills/bang/SKILL.md": skill_text("bang", body),
        "project/.claude/agents/banger.md": agent("banger", ["bang"]),
        "project/.claude/agents/native-banger.md": agent("native-banger", native=["bang"]),
    })
    ok(claude.run("Run both agents."))
    server = claude.server
    assert request_of(server, "banger") is None, "the briefed agent started"
    mains = [r for r in server.main_requests() if r.has_tools]
    denial = block_text(tool_results(mains[1])[0].get("content"))
    assert "agent 'banger' declares skill(s) that cannot be delivered as Claude Code delivers them" in denial
    assert "bang (line 7: status !`echo BANG-" in denial, denial
    assert "move it from briefing: to skills: in " in denial and "drop the dynamic line" in denial, denial
    native = request_of(server, "native-banger")
    assert native is not None, "the natively preloading agent was not spawned"
    assert "status BANG-RAN" in preloaded_text(native, start)  # Claude Code ran it
    assert not subagent_parts(native)


def test_an_agent_session_gets_the_skill_rendered_with_its_own_session_id(machine):
    """``claude --agent`` preloads nothing: briefing delivers at SessionStart, rendered the same way."""
    start = marker("session-start")
    body = ("First line: %s\nscripts in ${CLAUDE_SKILL_DIR}/scripts, session ${CLAUDE_SESSION_ID}, "
            "args [$ARGUMENTS]\n" % start)
    claude = machine(lambda r: "done")
    claude.write({"project/.claude/skills/solo-skill/SKILL.md": skill_text("solo-skill", body),
                  "project/.claude/agents/solo.md": agent("solo", ["solo-skill"])})
    result = ok(claude.run("Work as solo.", "--agent", "solo"))
    first = [r for r in claude.server.main_requests() if r.has_tools][0]
    parts = briefing_parts(first.hook_context("SessionStart") or "")
    assert parts, "nothing delivered at SessionStart"
    skill_dir = claude.project / ".claude" / "skills" / "solo-skill"
    want = body.replace("${CLAUDE_SKILL_DIR}", str(skill_dir)).replace(
        "${CLAUDE_SESSION_ID}", result.init["session_id"]).replace("$ARGUMENTS", "")
    assert rebuild(parts).skills == {"solo-skill": want}
