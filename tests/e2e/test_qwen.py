"""End-to-end: the real Qwen Code CLI 0.24.4, offline, briefing installed as the README says (issue 38).

One session spawns every agent of the scenario in turn (the fake main agent calls
the ``agent`` tool once per turn), and each test reads what the model requests
carried. A subagent answers VERDICT-BRIEFED only when its own request holds the
secret that only its skill contains; the task prompt never holds it. A second
session makes a subagent compact (the fake reports a prompt near the context
limit) and reads the request after the compaction.
"""
import json
import re

import pytest

from conftest import agent_md, skill_md
from fake_qwen import FakeQwen, call, say, unescaped
from framing import PART_OPEN, rebuild
import qwen_runner
from runners import cli_or_skip

BODY = "You are %s, an e2e test agent.\n${hook_context}\n"
SECRET = "MAGIC-QWEN-7f3a"
EXT_SECRET = "EXT-MAGIC-51c2"
BIG = "".join("big skill line %05d, read me whole\n" % i for i in range(1875)) + "BIG-END-MARKER\n"  # 60,015 chars

SPAWNS = ["briefed", "control", "missing", "nohook", "big", "general-purpose", "ext-briefed", "ext-plain",
          "shipped", "filer"]
# A skill Qwen Code ships (bundled/simplify/SKILL.md beside its cli.js): its body's first heading.
BUNDLED = "# Simplify Recent Changes"

FILES = {
    "project/.qwen/agents/briefed.md": agent_md("briefed", ["magic"], body=BODY % "briefed"),
    "project/.qwen/agents/control.md": agent_md("control", body=BODY % "control"),
    "project/.qwen/agents/missing.md": agent_md("missing", ["no-such-skill"], body=BODY % "missing"),
    "project/.qwen/agents/nohook.md": agent_md("nohook", ["magic"], body="You are nohook, no placeholder.\n"),
    "project/.qwen/agents/big.md": agent_md("big", ["big"], body=BODY % "big"),
    "project/.qwen/agents/shipped.md": agent_md("shipped", ["simplify"], body=BODY % "shipped"),
    # a private skill and files: QWEN.md Qwen Code loads itself, notes.md only briefing delivers
    "project/.qwen/agents/filer.md": agent_md("filer", ["zebra-private"], body=BODY % "filer",
                                              extra="  files: [QWEN.md, notes.md]"),
    "project/.briefing/skills/zebra-private/SKILL.md": skill_md("zebra-private", "PRIVATE-%s\n" % SECRET),
    "project/QWEN.md": "QWEN-MD-MARKER\n", "project/notes.md": "NOTES-MARKER\n",
    "project/.qwenignore": ".briefing/\n",
    "project/.qwen/skills/magic/SKILL.md": skill_md("magic", "The phrase is %s.\n" % SECRET),
    "project/.qwen/skills/big/SKILL.md": skill_md("big", BIG),
    # a rule on Qwen Code's built-in general-purpose: no hook reaches it before its first turn
    "project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["general-purpose"], "skills": ["magic"], "harness": "qwen"}]}),
    # an installed extension's agents and skill, by the name Qwen Code gives it (acme:tool)
    "home/.qwen/extensions/acme/qwen-extension.json": json.dumps({"name": "acme", "version": "1.0.0"}),
    "home/.qwen/extensions/acme/agents/ext-briefed.md": agent_md("ext-briefed", ["acme:tool"],
                                                                 body=BODY % "ext-briefed"),
    "home/.qwen/extensions/acme/agents/ext-plain.md": agent_md("ext-plain", ["acme:tool"],
                                                               body="You are ext-plain, as shipped.\n"),
    "home/.qwen/extensions/acme/skills/tool/SKILL.md": skill_md("tool", "Extension secret: %s.\n" % EXT_SECRET),
}


def spawning(names):
    """The fake: the main agent spawns ``names`` in turn; a subagent says whether it holds a secret."""
    def script(request):
        if request.is_summary:
            return say("<state_snapshot>the subagent ran its commands</state_snapshot>", usage=190000)
        if any("TASK-FOR:" in t for t in request.texts("user")):
            found = [s for s in (SECRET, EXT_SECRET, "BIG-END-MARKER", BUNDLED) if request.contains(s)]
            return say("VERDICT-BRIEFED %s" % " ".join(found) if found else "VERDICT-UNBRIEFED")
        done = len(request.tool_results())
        if done < len(names):
            return call("agent", {"description": "e2e", "prompt": "TASK-FOR:%s report your verdict" % names[done],
                                  "subagent_type": names[done], "run_in_background": False})
        return say("MAIN-DONE")
    return script


@pytest.fixture(scope="module")
def qwen():
    return cli_or_skip(qwen_runner.qwen_cli)


@pytest.fixture(scope="module")
def session(qwen, tmp_path_factory):
    """(the fake's log, {spawned name: the main agent's tool result}, the CLI run)."""
    run = qwen_runner.QwenRun(tmp_path_factory.mktemp("qwen-session"), FILES)
    with FakeQwen(spawning(SPAWNS)) as server:
        proc = run.run(server, "go")
    assert not server.errors, server.errors
    assert proc.rc == 0 and not proc.timed_out, proc
    final = server.main_requests()[-1].tool_results()
    assert len(final) == len(SPAWNS), (proc, final)
    return server, dict(zip(SPAWNS, final)), proc


def subagent_systems(server, name):
    return [r.system for r in server.subagent_requests(name)]


def test_a_declaring_agent_answers_from_its_skill(session):
    server, results, _ = session
    assert results["briefed"].startswith("VERDICT-BRIEFED %s" % SECRET), results
    first = server.subagent_requests("briefed")[0]
    # where Qwen Code puts it: the system prompt, at the ${hook_context} line of the body, once
    assert first.system.count(SECRET) == 1 and SECRET not in "".join(first.texts("user"))
    system = unescaped(first.system)
    assert system.index("You are briefed") < system.index("<briefing agent=\"briefed\"")
    # Qwen Code escapes < and > of every hook context, and only those (docs/qwen-code.md)
    assert "&lt;briefing agent=" in first.system and "<briefing" not in first.system


def test_the_control_agent_cannot(session):
    server, results, _ = session
    assert results["control"] == "VERDICT-UNBRIEFED", results
    assert not any("briefing agent=" in s for s in subagent_systems(server, "control"))


def test_a_missing_skill_refuses_the_spawn(session):
    server, results, _ = session
    assert results["missing"].startswith("briefing: agent 'missing' references unknown skill(s): no-such-skill")
    assert server.subagent_requests("missing") == []  # never started


def test_an_agent_without_hook_context_is_refused_with_the_fix(session):
    server, results, _ = session
    assert "cannot be briefed" in results["nohook"] and "Add a line ${hook_context} to the body of" in results["nohook"]
    assert server.subagent_requests("nohook") == []


def test_a_60000_character_briefing_arrives_whole(session):
    server, results, _ = session
    assert results["big"].startswith("VERDICT-BRIEFED BIG-END-MARKER"), results
    system = unescaped(server.subagent_requests("big")[0].system)
    start = system.index("<briefing agent=\"big\"")
    end = system.index("</briefing seal=", start)
    end = system.index(">", end) + 1
    assert PART_OPEN.match(system[start:end])
    assert rebuild([system[start:end]]).skills == {"big": BIG}
    assert system.count("BIG-END-MARKER") == 1


def test_a_rule_on_a_builtin_agent_refuses_it_as_documented(session):
    server, results, _ = session
    text = results["general-purpose"]
    assert "built-in agent 'general-purpose'" in text and ".qwen/agents/general-purpose.md" in text, results
    assert server.subagent_requests("general-purpose") == []


def test_extension_agents_as_documented(session):
    """With ${hook_context} in its body an extension's agent is briefed (its skill named acme:tool);
    as shipped without it, it is refused with the fix (a project copy wins over it)."""
    server, results, _ = session
    assert results["ext-briefed"].startswith("VERDICT-BRIEFED %s" % EXT_SECRET), results
    assert "copy it to .qwen/agents/" in results["ext-plain"], results
    assert server.subagent_requests("ext-plain") == []


def test_a_skill_qwen_code_ships_is_found_where_it_ships_it(session):
    server, results, _ = session
    assert results["shipped"] == "VERDICT-BRIEFED %s" % BUNDLED, results
    assert not any(BUNDLED in r.all_text for r in server.subagent_requests("control"))


def test_one_hook_process_per_spawn_event(session):
    """The installed extension registers one handler per event, and the session ran from it."""
    hooks = json.loads(open(str(qwen_runner.installed_home() / ".qwen" / "extensions" / "briefing" / "hooks" /
                                "hooks.json")).read())["hooks"]
    assert {event: len(groups[0]["hooks"]) for event, groups in hooks.items()} == {
        "SessionStart": 1, "PreToolUse": 1, "SubagentStart": 1}


# ----------------------------------------------------------------------------------- compaction

def compacting(request):
    """A subagent that runs two commands; the fake reports a prompt near the context limit after
    the first, so Qwen Code compacts the subagent before its next request (facts/qwen-code.md §6)."""
    if request.is_summary:
        return say("<state_snapshot>the subagent ran one command</state_snapshot>", usage=190000)
    users = "".join(request.texts("user"))
    if "TASK-FOR:" in users or "state_snapshot" in users:
        if "state_snapshot" in users:
            return say("VERDICT-BRIEFED %s" % SECRET if request.contains(SECRET) else "VERDICT-UNBRIEFED")
        done = len(request.tool_results())
        return call("run_shell_command", {"command": "echo step%d" % done, "description": "step"},
                    usage=190000 if done else 100)
    if request.tool_results():
        return say("MAIN-DONE")
    return call("agent", {"description": "e2e", "prompt": "TASK-FOR:briefed run two commands",
                          "subagent_type": "briefed", "run_in_background": False})


def test_after_the_subagent_compacts_the_next_request_holds_the_briefing_once(qwen, tmp_path):
    run = qwen_runner.QwenRun(tmp_path, {k: v for k, v in FILES.items() if "briefed.md" in k or "magic" in k})
    with FakeQwen(compacting) as server:
        proc = run.run(server, "go")
    assert not server.errors, server.errors
    assert proc.rc == 0 and not proc.timed_out, proc
    summaries = [r for r in server.log if r.is_summary]
    assert summaries, "the subagent never compacted: %r" % server.log
    after = [r for r in server.log[server.log.index(summaries[-1]) + 1:]
             if "state_snapshot" in "".join(r.texts("user"))]
    assert after, server.log
    system = unescaped(after[0].system)
    assert system.count(SECRET) == 1 and system.count("<briefing agent=\"briefed\"") == 1, system[:3000]
    assert "TASK-FOR:" not in "".join(after[0].texts("user"))  # the first message is gone, as measured
    assert server.main_requests()[-1].tool_results()[-1].startswith("VERDICT-BRIEFED"), server.log


# ------------------------------------------------------------------- the Claude Code plugin in Qwen

def test_the_claude_code_plugin_installed_into_qwen_briefs_too(qwen, tmp_path):
    """``qwen extensions install <repo>:briefing --consent`` copies the Claude Code plugin and runs its
    hooks/hooks.json (facts/qwen-code.md §7): its Agent guard fires on Qwen's agent tool and part 1 of
    SubagentStart carries the whole briefing, with a process per part (the doctor WARNs, README)."""
    import subprocess
    repo = tmp_path / "repo"
    repo.mkdir()
    archive = subprocess.run(["git", "-C", str(qwen_runner.REPO), "archive", "HEAD"], stdout=subprocess.PIPE,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
    run = qwen_runner.QwenRun(tmp_path, {k: v for k, v in FILES.items()
                                         if "briefed.md" in k or "missing.md" in k or "magic" in k},
                              installed=False)
    install = qwen_runner.run_process(
        ["node", qwen, "extensions", "install", "%s:briefing" % repo, "--consent"],
        qwen_runner.base_env(run.home), run.home, 120)
    assert install.rc == 0, install
    installed = run.home / ".qwen" / "extensions" / "briefing"
    assert (installed / ".claude-plugin" / "plugin.json").is_file() and (installed / "qwen-extension.json").is_file()
    with FakeQwen(spawning(["briefed", "missing"])) as server:
        proc = run.run(server, "go")
    assert not server.errors and proc.rc == 0, proc
    briefed, missing = server.main_requests()[-1].tool_results()
    assert briefed.startswith("VERDICT-BRIEFED %s" % SECRET), briefed
    assert missing.startswith("briefing: agent 'missing' references unknown skill(s): no-such-skill"), missing


def test_the_source_folder_is_refused_at_install_naming_the_build(qwen, tmp_path):
    """``qwen extensions install <clone>/qwen`` (a manifest and a hooks file, no hook) once
    installed and then refused every spawn, saying its folder was gone (issue 44): Qwen Code now
    refuses the install itself, with a message that names the build script (docs/qwen-code.md)."""
    run = qwen_runner.QwenRun(tmp_path, {}, installed=False)
    install = qwen_runner.run_process(
        ["node", qwen, "extensions", "install", str(qwen_runner.REPO / "qwen"), "--consent"],
        qwen_runner.base_env(run.home), run.home, 120)
    said = install.stdout + install.stderr
    assert install.rc != 0 and "scripts/build-qwen-extension OUT, then install OUT/briefing" in said, install
    assert not (run.home / ".qwen" / "extensions" / "briefing").exists()


def test_files_and_a_private_skill_as_documented(session):
    """A declared file arrives once (QWEN.md, which Qwen Code loads into every agent itself, is not
    sent again); a private skill reaches its declaring agent only, and the folder tree in every
    agent's first message, which names its folder, hides it once .qwenignore says so."""
    server, results, _ = session
    assert results["filer"].startswith("VERDICT-BRIEFED %s" % SECRET), results
    first = server.subagent_requests("filer")[0]
    assert first.all_text.count("NOTES-MARKER") == 1 and first.all_text.count("QWEN-MD-MARKER") == 1
    assert not any("zebra-private" in r.all_text for r in server.log if r not in server.subagent_requests("filer"))
    assert "zebra-private" not in "".join(first.texts("user"))  # .qwenignore: not in the folder tree


def test_past_the_guard_a_missing_skill_gets_the_abort_instruction_at_hook_context(qwen, tmp_path):
    """A skill gone between the guard and the start (here: the guard is taken out of the installed
    hooks file, so the spawn gets past it): the abort instruction takes the briefing's place, in the
    subagent's system prompt, and carries no skill."""
    run = qwen_runner.QwenRun(tmp_path, {k: v for k, v in FILES.items() if "missing.md" in k})
    hooks_path = run.home / ".qwen" / "extensions" / "briefing" / "hooks" / "hooks.json"
    hooks = json.loads(hooks_path.read_text())
    del hooks["hooks"]["PreToolUse"]
    hooks_path.write_text(json.dumps(hooks))
    with FakeQwen(spawning(["missing"])) as server:
        proc = run.run(server, "go")
    assert not server.errors and proc.rc == 0, proc
    system = unescaped(server.subagent_requests("missing")[0].system)
    start = system.index('<briefing agent="missing" status="abort">')
    abort = system[start:system.index("</briefing>", start) + len("</briefing>")]
    assert rebuild([abort]).aborted and "no-such-skill" in abort and "<skill " not in system, abort


RUSSIAN = "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! "  # "Привет, мир! ": 22 bytes of UTF-8, 58 printed


def qwen_briefing(run, name):
    """The Briefing the installed hook builds for ``name`` in this run (its paths are in the framing)."""
    from conftest import hook_package
    hook_package()
    from briefing.harnesses import HARNESSES
    from briefing.machine import Machine
    from briefing.resolution import resolve
    env = {"HOME": str(run.home), "QWEN_PROJECT_DIR": str(run.project)}
    return resolve(HARNESSES["qwen"], Machine(str(run.project), env), name)


def test_a_large_non_latin_skill_is_briefed_whole_or_refused_with_a_reason(qwen, tmp_path):
    """Issue 43: Qwen Code keeps 1 MiB of a hook's stdout, and the hook prints JSON with each Cyrillic
    letter as a 6-byte escape. A Russian skill of 380 KiB (under the 512 KiB of skill text) printed
    1.11 MB: cut, not JSON, dropped, and the agent ran with an empty ${hook_context}. Now it is refused
    with a reason; and one whose output is exactly 1 MiB arrives whole (Qwen Code reads that much)."""
    run = qwen_runner.QwenRun(tmp_path, {
        "project/.qwen/agents/russian.md": agent_md("russian", ["russkiy"], body=BODY % "russian"),
        # "жизнь": 10 bytes of UTF-8, 30 printed: 380 KiB prints as 1.17 MB
        "project/.qwen/skills/russkiy/SKILL.md": skill_md("russkiy", "\u0436\u0438\u0437\u043d\u044c" * (
            380 * 1024 // 10) + "RU-END\n"),
        "project/.qwen/agents/atlimit.md": agent_md("atlimit", ["rubezh"], body=BODY % "atlimit")})
    # the longest Russian skill whose briefing prints 1 MiB exactly (padded with ASCII to the byte)
    head, count, step = "The phrase is %s.\n" % SECRET, 1048576 // 60, len(json.dumps(RUSSIAN)) - 2
    while True:
        text = head + RUSSIAN * count
        run.write({"project/.qwen/skills/rubezh/SKILL.md": skill_md("rubezh", text + "RUBEZH-END\n")})
        room = 1048576 - qwen_briefing(run, "atlimit").printed_bytes
        if room < step:
            break
        count += room // step
    text += "x" * room
    run.write({"project/.qwen/skills/rubezh/SKILL.md": skill_md("rubezh", text + "RUBEZH-END\n")})
    briefing = qwen_briefing(run, "atlimit")
    assert briefing.printed_bytes == 1048576 and not briefing.denies, briefing.reason()
    with FakeQwen(spawning(["russian", "atlimit"])) as server:
        proc = run.run(server, "go")
    assert not server.errors and proc.rc == 0, proc
    refused, briefed = server.main_requests()[-1].tool_results()
    assert refused.startswith("briefing: agent 'russian' needs a briefing of "), refused
    assert "prints as" in refused and "1048576 bytes of a hook's output Qwen Code reads whole" in refused
    assert not server.subagent_requests("russian")  # never started with an empty ${hook_context}
    assert briefed.startswith("VERDICT-BRIEFED %s" % SECRET), briefed
    system = unescaped(server.subagent_requests("atlimit")[0].system)
    assert system.count(RUSSIAN) == count and "RUBEZH-END" in system


SIZED_HOOK = r'''
import json, sys
payload = json.load(sys.stdin)
size = {"at-cap": 1048576, "past-cap": 1048577}.get(payload.get("agent_type"))
if size:
    shell = '{"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CAP-START %s CAP-END"}}'
    sys.stdout.write(shell % ("x" * (size - len(shell % ""))))
'''


def test_qwen_code_reads_1_mib_of_a_hooks_output_and_drops_one_byte_more(qwen, tmp_path):
    """The cap briefing measures its output against (QWEN_OUTPUT_LIMIT), measured in the real CLI: a
    SubagentStart output of exactly 1,048,576 bytes reaches ${hook_context} whole; one byte more is
    cut, is no JSON, and the agent starts with nothing, as no hook error tells anyone."""
    run = qwen_runner.QwenRun(tmp_path, {
        "project/.qwen/agents/at-cap.md": agent_md("at-cap", body=BODY % "at-cap"),
        "project/.qwen/agents/past-cap.md": agent_md("past-cap", body=BODY % "past-cap"),
        "project/sized_hook.py": SIZED_HOOK}, installed=False)
    command = "python3 %s" % (run.project / "sized_hook.py")
    run.write({"project/.qwen/settings.json": json.dumps(
        {"hooks": {"SubagentStart": [{"hooks": [{"type": "command", "command": command}]}]}})})
    with FakeQwen(spawning(["at-cap", "past-cap"])) as server:
        proc = run.run(server, "go")
    assert not server.errors and proc.rc == 0, proc
    at_cap = server.subagent_requests("at-cap")[0].system
    assert "CAP-START" in at_cap and "CAP-END" in at_cap and at_cap.count("x" * 1000) >= 1000
    past_cap = server.subagent_requests("past-cap")[0].system
    assert "CAP-START" not in past_cap and "CAP-END" not in past_cap
