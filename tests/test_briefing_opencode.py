"""The OpenCode and Kilo side of hooks/briefing-preload (issue 39): the plugin's payloads.

The plugin (opencode/briefing.js, tested in tests/js) sends three payloads and
acts on the answers; here the hook's answers to them, in-process:

 1. detection: ``opencode_plugin`` / ``kilo_plugin`` name the CLI; a Copilot
    ``task`` payload stays Copilot's;
 2. the guard (PreToolUse, tool ``task``): a deny with briefing's reason, or the
    briefing itself for the plugin to keep (one process per spawn);
 3. a session's agent (SubagentStart): the briefing, or the abort instruction;
 4. agent lookup: {agent,agents}/**/*.md of every config folder, named by path
    unless ``name:``, a later folder winning; Kilo's folders;
 5. skills by frontmatter name, the root found last winning;
 6. the pre-flight (SessionStart) and the doctor under --harness opencode / kilo.
"""
import json

import pytest

from conftest import REPO, load_hook, skill_md
from framing import rebuild

HOOK = load_hook()


def agent(skills=None, name=None, extra=""):
    lines = ["---", "description: test agent", "mode: subagent"]
    if name:
        lines.append("name: %s" % name)
    if skills is not None:
        lines += ["briefing:", "  skills: [%s]" % ", ".join(skills)]
    if extra:
        lines.append(extra)
    return "\n".join(lines + ["---", "You are a test agent.", ""])


def body(tag):
    return "SECRET-%s: only this skill knows it.\n" % tag


def payload(sb, event, cli="opencode", **fields):
    data = {"hook_event_name": event, cli + "_plugin": "1", "cwd": str(sb.project)}
    data.update(fields)
    return data


def guard(sb, name, cli="opencode"):
    return payload(sb, "PreToolUse", cli, tool_name="task", session_id="ses_P",
                   tool_input={"subagent_type": name, "description": "d", "prompt": "p"})


def start(sb, name, cli="opencode"):
    return payload(sb, "SubagentStart", cli, agent_type=name, session_id="ses_C")


def env(sb):
    return {"XDG_CONFIG_HOME": str(sb.home / ".config")}


def briefed(result):
    assert result.data is not None, result
    return rebuild([result.data["hookSpecificOutput"]["additionalContext"]]).skills


BASIC = {
    "project/.opencode/agents/briefed.md": agent(["demo"]),
    "project/.opencode/agents/broken.md": agent(["nope"]),
    "project/.opencode/agents/plain.md": agent(),
    "project/.opencode/skills/demo/SKILL.md": skill_md("demo", body("demo")),
}


@pytest.mark.parametrize("event", ["PreToolUse", "SubagentStart"])
def test_declaring_agent_gets_its_briefing(sandbox, event):
    sb = sandbox(BASIC)
    result = sb.run(guard(sb, "briefed") if event == "PreToolUse" else start(sb, "briefed"), env=env(sb))
    assert briefed(result) == {"demo": body("demo")}
    assert result.data["hookSpecificOutput"]["hookEventName"] == event
    assert result.data["systemMessage"].startswith("briefing: briefed \u2190 demo")


def test_guard_refuses_a_missing_skill_with_the_reason(sandbox):
    sb = sandbox(BASIC)
    result = sb.run(guard(sb, "broken"), env=env(sb))
    hso = result.data["hookSpecificOutput"]
    assert hso["permissionDecision"] == "deny"
    assert hso["permissionDecisionReason"].startswith("briefing: agent 'broken' references unknown skill(s): nope")
    assert "additionalContext" not in hso


def test_unguarded_start_of_a_broken_agent_gets_the_abort_instruction(sandbox):
    sb = sandbox(BASIC)
    result = sb.run(start(sb, "broken"), env=env(sb))
    context = result.data["hookSpecificOutput"]["additionalContext"]
    assert 'status="abort"' in context and "<skill" not in context
    assert result.data["systemMessage"].startswith("briefing: NOT briefed, told to abort")


@pytest.mark.parametrize("name", ["plain", "general", "build", "no-such-agent"])
def test_nothing_for_an_agent_that_declares_nothing(sandbox, name):
    sb = sandbox(BASIC)
    assert sb.run(guard(sb, name), env=env(sb)).out == ""
    assert sb.run(start(sb, name), env=env(sb)).out == ""


def test_copilot_task_payload_is_still_copilots(sandbox):
    """Copilot CLI's native spawn tool is also ``task``: without the plugin's key it is Copilot's."""
    sb = sandbox(dict(BASIC, **{"project/.github/agents/briefed.md": "---\nname: briefed\n---\nx\n"}))
    data = sb.payload("PreToolUse", "copilot", tool_name="task",
                      tool_input={"agent_type": "briefed", "prompt": "p"})
    result = sb.run(data, env=sb.copilot_env())
    assert result.out == ""  # Copilot's agent declares nothing; the OpenCode one is not consulted


def test_detection_by_the_plugins_key(sandbox):
    sb = sandbox({})
    machine = HOOK.Machine(str(sb.project), env={"HOME": str(sb.home)})
    assert HOOK.payload_harness({"opencode_plugin": "1"}, machine, env={}).key == "opencode"
    assert HOOK.payload_harness({"kilo_plugin": "1"}, machine, env={}).key == "kilo"
    # The plugin's key outranks every variable a surrounding harness may have left set.
    assert HOOK.payload_harness({"kilo_plugin": "1"}, machine, env={"CLAUDE_PROJECT_DIR": "/x"}).key == "kilo"
    assert HOOK.payload_harness({}, machine, env={"OPENCODE": "1"}) is None


# --------------------------------------------------------------------------- agent lookup

@pytest.mark.parametrize("rel, name", [
    ("project/.opencode/agents/review/deep.md", "review/deep"),  # named by its path below agents/
    ("project/.opencode/agent/solo.md", "solo"),  # agent/ as well as agents/
    ("home/.config/opencode/agents/mine.md", "mine"),  # the user's config folder
])
def test_agent_names_by_path(sandbox, rel, name):
    sb = sandbox(dict(BASIC, **{rel: agent(["demo"])}))
    assert "demo" in briefed(sb.run(start(sb, name), env=env(sb)))


def test_name_key_wins_over_the_file_name(sandbox):
    sb = sandbox(dict(BASIC, **{"project/.opencode/agents/filename-agent.md": agent(["demo"], name="keyed")}))
    assert "demo" in briefed(sb.run(start(sb, "keyed"), env=env(sb)))
    assert sb.run(start(sb, "filename-agent"), env=env(sb)).out == ""


def test_first_file_of_a_name_in_one_folder_wins(sandbox):
    sb = sandbox(dict(BASIC, **{"project/.opencode/agents/z-dup.md": agent(["nope"], name="dupname"),
                                "project/.opencode/agents/a-dup.md": agent(["demo"], name="dupname")}))
    assert briefed(sb.run(start(sb, "dupname"), env=env(sb))) == {"demo": body("demo")}


def test_project_folder_wins_over_the_user_folder(sandbox):
    sb = sandbox(dict(BASIC, **{
        "home/.config/opencode/agents/twin.md": agent(["nope"]),
        "project/.opencode/agents/twin.md": agent(["demo"]),
        "project/.opencode/skills/other/SKILL.md": skill_md("other", body("other")),
    }))
    assert briefed(sb.run(start(sb, "twin"), env=env(sb))) == {"demo": body("demo")}


def test_config_dir_variable_wins_last(sandbox):
    sb = sandbox(dict(BASIC, **{"extra/agents/briefed.md": agent(["nope"])}))
    result = sb.run(start(sb, "briefed"), env=dict(env(sb), OPENCODE_CONFIG_DIR=str(sb.root / "extra")))
    assert 'status="abort"' in result.data["hookSpecificOutput"]["additionalContext"]


def test_kilo_reads_kilo_folders_never_opencode(sandbox):
    sb = sandbox({
        "project/.opencode/agents/only-opencode.md": agent(["demo"]),
        "project/.kilo/agents/briefed.md": agent(["demo"]),
        "project/.kilocode/agents/older.md": agent(["demo"]),
        "project/.kilo/skills/demo/SKILL.md": skill_md("demo", body("kilo")),
        "project/.opencode/skills/demo/SKILL.md": skill_md("demo", body("opencode")),
    })
    assert briefed(sb.run(start(sb, "briefed", "kilo"), env=env(sb))) == {"demo": body("kilo")}
    assert "demo" in briefed(sb.run(start(sb, "older", "kilo"), env=env(sb)))
    assert sb.run(start(sb, "only-opencode", "kilo"), env=env(sb)).out == ""


# --------------------------------------------------------------------------- skills

# Measured in Kilo 7.7.7 for every pair of these six roots, the same in every run (OpenCode
# 1.18.33 takes either copy of a pair, run by run): project config, user config, project
# .agents, project .claude, user .agents, user .claude.
ROOTS = ["project/{dir}/skills", "home/.config/{cli}/skills", "project/.agents/skills",
         "project/.claude/skills", "home/.agents/skills", "home/.claude/skills"]


@pytest.mark.parametrize("cli, folder", [("opencode", ".opencode"), ("kilo", ".kilo")])
@pytest.mark.parametrize("first, second", [(a, b) for i, a in enumerate(ROOTS) for b in ROOTS[i + 1:]])
def test_skill_precedence_as_measured(sandbox, cli, folder, first, second):
    files = {"project/%s/agents/briefed.md" % folder: agent(["demo"])}
    for tag, root in (("first", first), ("second", second)):
        files[root.format(dir=folder, cli=cli) + "/demo/SKILL.md"] = skill_md("demo", body(tag))
    sb = sandbox(files)
    assert briefed(sb.run(start(sb, "briefed", cli), env=env(sb))) == {"demo": body("first")}
    shown = sb.doctor("--harness", cli, "--show", "briefed", env=env(sb))
    assert "passes over" in shown.out and second.format(dir=folder, cli=cli).split("/", 1)[1] in shown.out, shown


@pytest.mark.parametrize("where, tag", [
    ("project/.claude/skills/x/deep/demo", "deep"),  # any depth
    ("project/.opencode/skill/demo", "singular"),  # skill/ as well as skills/
])
def test_skill_roots(sandbox, where, tag):
    sb = sandbox({"project/.opencode/agents/briefed.md": agent(["demo"]), where + "/SKILL.md": skill_md("demo", body(tag))})
    assert briefed(sb.run(start(sb, "briefed"), env=env(sb))) == {"demo": body(tag)}


def test_skill_named_by_frontmatter_not_folder(sandbox):
    sb = sandbox({"project/.opencode/agents/briefed.md": agent(["demo"]),
                  "project/.opencode/skills/folder/SKILL.md": skill_md("demo", body("fm"))})
    assert briefed(sb.run(start(sb, "briefed"), env=env(sb))) == {"demo": body("fm")}


def test_external_skills_off(sandbox):
    sb = sandbox({"project/.opencode/agents/briefed.md": agent(["demo"]),
                  "project/.claude/skills/demo/SKILL.md": skill_md("demo", body("c"))})
    result = sb.run(start(sb, "briefed"), env=dict(env(sb), OPENCODE_DISABLE_CLAUDE_CODE_SKILLS="1"))
    assert 'status="abort"' in result.data["hookSpecificOutput"]["additionalContext"]


def test_private_skill_and_rules(sandbox):
    sb = sandbox({
        "project/.opencode/agents/briefed.md": agent(["mine"]),
        "project/.briefing/skills/mine/SKILL.md": skill_md("mine", body("private")),
        "project/.briefing/rules.json": json.dumps({"rules": [{"agents": "general", "skills": ["mine"]}]}),
    })
    assert briefed(sb.run(start(sb, "briefed"), env=env(sb))) == {"mine": body("private")}
    assert briefed(sb.run(start(sb, "general"), env=env(sb))) == {"mine": body("private")}


def test_files_ride_along(sandbox):
    sb = sandbox({"project/.opencode/agents/briefed.md": (
        "---\ndescription: d\nbriefing:\n  files: [NOTES.md]\n---\nbody\n"),
        "project/NOTES.md": "the notes\n"})
    result = sb.run(start(sb, "briefed"), env=env(sb))
    assert rebuild([result.data["hookSpecificOutput"]["additionalContext"]]).files == {"NOTES.md": "the notes\n"}


# --------------------------------------------------------------------------- pre-flight and doctor

def test_preflight_names_the_broken_agent(sandbox):
    sb = sandbox(BASIC)
    result = sb.run(payload(sb, "SessionStart", source="startup"), env=env(sb))
    message = result.data["systemMessage"]
    assert message.startswith("briefing pre-flight") and "OpenCode agent 'broken'" in message
    assert "hookSpecificOutput" not in result.data


def test_preflight_is_quiet_for_a_healthy_project(sandbox):
    sb = sandbox({k: v for k, v in BASIC.items() if "broken" not in k})
    assert sb.run(payload(sb, "SessionStart", source="startup"), env=env(sb)).out == ""


@pytest.mark.parametrize("cli, folder", [("opencode", ".opencode"), ("kilo", ".kilo")])
def test_doctor_per_cli(sandbox, cli, folder):
    sb = sandbox({k.replace(".opencode", folder): v for k, v in BASIC.items()})
    result = sb.doctor("--harness", cli, "--json", env=env(sb))
    assert result.rc == 1, result
    rows = {r["agent"]: r for r in json.loads(result.out)["agents"]}
    assert rows["broken"]["status"] == "FAIL" and rows["briefed"]["status"] == "ok"
    assert all(r["harness"] == cli for r in rows.values())
    healthy = sandbox.box.write({})
    (healthy.project / folder / "agents" / "broken.md").unlink()
    assert sb.doctor("--harness", cli, env=env(sb)).rc == 0


@pytest.mark.parametrize("cli, others", [("opencode", {"kilo"}), ("kilo", set())])
def test_a_spawn_imports_only_its_cli(sandbox, cli, others):
    """A guard run loads its CLI's module (Kilo's is built from OpenCode's) and no other harness's."""
    from test_lazy_imports import imported
    sb = sandbox({k.replace(".opencode", ".kilo" if cli == "kilo" else ".opencode"): v for k, v in BASIC.items()})
    out, modules = imported(sb, guard(sb, "briefed", cli), (), env(sb))
    assert '"additionalContext"' in out
    harnesses = {m.rsplit(".", 1)[1] for m in modules if m.startswith("briefing.harnesses.")}
    assert harnesses <= {"opencode", "kilo"} - others and cli in harnesses, modules
    assert not {"briefing.doctor", "briefing.survey", "briefing.private"} & modules, modules


@pytest.mark.parametrize("args, rc, phrase", [
    (("--show", "demo-briefed"), 0, True),
    (("--show", "demo-control"), 1, False),  # nothing to show: it declares nothing
    ((), 0, False),
])
def test_the_bundled_opencode_example(sandbox, args, rc, phrase):
    """examples/opencode: demo-briefed gets the phrase, demo-control nothing, the doctor is healthy."""
    result = sandbox().doctor("--cwd", str(REPO / "examples" / "opencode"), "--harness", "opencode", *args)
    assert result.rc == rc and ("sedge-harbour-4071" in result.out) == phrase, result
