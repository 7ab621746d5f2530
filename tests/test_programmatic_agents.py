"""The Claude Agent SDK (issue 37, docs/agent-sdk.md): programmatic agents and setting sources.

Programmatic definitions reach the hook from two places: ``claude --agents``
(inline JSON or a file) on Claude Code's command line, read from
``/proc/$CLAUDE_PID/cmdline``, and ``$BRIEFING_SDK_AGENTS``, written by
``briefing_sdk.with_briefing``. Each is judged exactly as a file agent is: native
entries Claude Code preloads are left to it, skipped ones delivered, missing ones
refused; a definition shadows the file agent of its name; ``--setting-sources``
decides which roots count.
"""
import json
import os
import sys
from dataclasses import dataclass, field

import pytest

from conftest import REPO, agent_md, skill_md
from test_briefing import AUDIT, PA, PS, US, aborted, brief, contexts, delivered, guard, nothing, silent
from test_native_skills import harness_process, needs_proc, sk  # noqa: F401  (a fixture)

sys.path.insert(0, str(REPO / "sdk"))
import briefing_sdk  # noqa: E402

ENV = briefing_sdk.ENV_AGENTS
DMI = sk("dmi", "DMI BODY\n", description="hidden", disable_model_invocation="true")


@dataclass
class Options:
    """The fields of the SDK's ClaudeAgentOptions that with_briefing reads and writes."""
    agents: dict = None
    env: dict = field(default_factory=dict)
    plugins: list = field(default_factory=list)
    extra_args: dict = field(default_factory=dict)
    cwd: str = None


@dataclass
class Definition:
    description: str
    prompt: str
    skills: list = None


def contract(agents=None, briefing=None, extra_args=None):
    """$BRIEFING_SDK_AGENTS as with_briefing writes it."""
    options = Options(agents={n: Definition("d", "p", skills=s) for n, s in (agents or {}).items()},
                      extra_args=extra_args or {})
    return briefing_sdk.with_briefing(options, briefing).env[ENV]


def sdk(sandbox, files, agents=None, briefing=None, raw=None):
    sb = sandbox(files)
    sb.extra_env[ENV] = raw if raw is not None else contract(agents, briefing)
    return sb


def doctor(sb, *args):
    result = sb.doctor("--json", "--harness", "claude", *args)
    assert result.rc in (0, 1) and "Traceback" not in result.err, result
    return result.rc, json.loads(result.out)


def row_of(data, agent):
    rows = [r for r in data["agents"] if r["agent"] == agent]
    assert len(rows) == 1, data["agents"]
    return rows[0]


SKILLS = {PS % "beta": skill_md("beta", "BETA BODY\n"), PS % "dmi": DMI}


# -- the environment contract ------------------------------------------------------------------

def test_native_entries_of_a_programmatic_agent_are_judged_like_a_file_agents(sandbox):
    sb = sdk(sandbox, SKILLS, {"rev": ["beta", "dmi"], "bad": ["beta", "missing-one"], "none": None})
    silent(guard(sb, "rev"))
    got = delivered(brief(sb, "rev"))
    assert list(got.skills) == ["dmi"]  # beta: Claude Code preloads it; dmi: it skips it
    audit = brief(sb, "rev")[0].system_message
    assert AUDIT.match(audit.splitlines()[0]) and "delivered because Claude Code skips them: dmi (" in audit
    r = guard(sb, "bad")
    assert r.decision == "deny", r
    assert r.reason.startswith("briefing: agent 'bad' references unknown skill(s): missing-one. "), r.reason
    assert "options.agents (briefing_sdk.with_briefing: $BRIEFING_SDK_AGENTS)" in r.reason
    aborted(brief(sb, "bad"), "bad", ["missing-one"])
    silent(guard(sb, "none"))
    nothing(brief(sb, "none"))
    rc, data = doctor(sb)
    assert rc == 1
    assert row_of(data, "bad")["status"] == "FAIL" and row_of(data, "rev")["status"] == "ok"
    verdicts = {s["name"]: s["verdict"] for s in row_of(data, "rev")["skills"]}
    assert verdicts["beta"] == "native (Claude Code preloads)"
    assert verdicts["dmi"].startswith("native, delivered by briefing: disable-model-invocation: true")


def test_briefings_own_declaration_works_as_a_briefing_block(sandbox):
    files = dict(SKILLS, **{"project/notes.md": "NOTES TEXT\n"})
    sb = sdk(sandbox, files, {"rev": ["beta"]}, {"rev": {"skills": ["beta", "dmi"], "files": ["notes.md"]}})
    got = delivered(brief(sb, "rev"))
    assert list(got.skills) == ["dmi"]  # beta is preloaded natively: never twice
    assert "NOTES TEXT" in "".join(contexts(brief(sb, "rev")))
    assert "preloaded natively: beta" in brief(sb, "rev")[0].system_message


def test_a_rule_applies_to_a_programmatic_agent_by_name(sandbox):
    files = dict(SKILLS, **{"project/.briefing/rules.json": json.dumps({"rules": [
        {"agents": ["rev"], "skills": ["beta"]}, {"agents": ["other"], "skills": ["nope"]}]})})
    sb = sdk(sandbox, files, {"rev": None})
    assert list(delivered(brief(sb, "rev")).skills) == ["beta"]


def test_compaction_delivers_every_skill_of_a_programmatic_agent_again(sandbox):
    sb = sdk(sandbox, SKILLS, {"rev": ["beta", "dmi"]})
    results = sb.run_parts(sb.payload("SessionStart", source="compact", agent_id="a1", agent_type="rev"))
    got = delivered(results, event="SessionStart")
    assert sorted(got.skills) == ["beta", "dmi"]


def test_a_programmatic_definition_shadows_the_file_agent_of_its_name(sandbox):
    files = dict(SKILLS, **{PA % "rev": agent_md("rev", ["missing-in-file"]),
                            PA % "keep": agent_md("keep", ["beta"])})
    sb = sdk(sandbox, files, {"rev": None, "keep": ["missing-in-code"]})
    silent(guard(sb, "rev"))  # the file's missing skill is not what Claude Code runs
    nothing(brief(sb, "rev"))
    r = guard(sb, "keep")
    assert r.decision == "deny" and "missing-in-code" in r.reason and "missing-in-file" not in r.reason
    rc, data = doctor(sb)
    assert [r["file"] for r in data["agents"] if r["agent"] == "rev"] == []  # it declares nothing
    assert row_of(data, "keep")["file"].startswith("options.agents")
    show = sb.doctor("--show", "keep", "--harness", "claude")
    assert "missing-in-code" in show.out and "missing-in-file" not in show.out, show


# -- claude --agents on the command line ----------------------------------------------------------

FLAG = {"rev": {"description": "d", "prompt": "p", "skills": ["dmi"]},
        "bad": {"description": "d", "prompt": "p", "skills": ["missing-one"]}}


@needs_proc
@pytest.mark.parametrize("form", ["inline", "file", "equals"])
def test_claude_agents_on_the_command_line(sandbox, harness_process, form):
    sb = sandbox(dict(SKILLS, **{PA % "rev": agent_md("rev", ["missing-in-file"]),
                                 "project/agents.json": json.dumps(FLAG)}))
    value = json.dumps(FLAG) if form != "file" else "agents.json"  # a file: relative to claude's cwd
    args = ["--agents=" + value] if form == "equals" else ["--agents", value]
    sb.extra_env["CLAUDE_PID"] = harness_process(["-p", "hi"] + args, sb.project)
    silent(guard(sb, "rev"))
    assert list(delivered(brief(sb, "rev")).skills) == ["dmi"]
    r = guard(sb, "bad")
    assert r.decision == "deny" and "missing-one" in r.reason, r
    where = "claude --agents (inline JSON)" if form != "file" else str(sb.project / "agents.json")
    assert where in r.reason


@needs_proc
def test_the_sdk_definition_wins_over_a_claude_agents_one(sandbox, harness_process):
    """Measured: with options.agents and --agents naming the same agent, Claude Code runs options.agents'."""
    sb = sdk(sandbox, SKILLS, {"bad": ["beta"]})
    sb.extra_env["CLAUDE_PID"] = harness_process(["--agents", json.dumps(FLAG)], sb.project)
    silent(guard(sb, "bad"))  # options.agents' bad declares beta, which exists
    # rev: the --agents definition (dmi) with briefing's own declaration (beta) from the contract
    sb.extra_env[ENV] = contract({}, {"rev": {"skills": ["beta"]}}, extra_args={"agents": json.dumps(FLAG)})
    assert sorted(delivered(brief(sb, "rev")).skills) == ["beta", "dmi"]


# -- malformed values: a clear doctor FAIL, a refusal only where skills are declared ----------------

MALFORMED = [
    # case                      raw $BRIEFING_SDK_AGENTS                                         refused agents
    ("not JSON",                '{"version": 1, "agents": {"rev": {"skills": ["beta"',             ["rev"]),
    ("not an object",           '[1, 2]',                                                         []),
    ("unknown version",         '{"version": 9, "agents": {}}',                                   []),
    ("agents not an object",    '{"version": 1, "agents": ["rev"]}',                              ["rev"]),
    ("skills not a list",       '{"version": 1, "agents": {"rev": {"skills": "beta"}, "ok": {}}}', ["rev"]),
    ("skills hold a number",    '{"version": 1, "agents": {"rev": {"skills": [1]}}}',             ["rev"]),
    ("briefing not a mapping",  '{"version": 1, "agents": {"rev": {"briefing": ["beta"]}}}',      ["rev"]),
    ("briefing files bad",      '{"version": 1, "agents": {"rev": {"briefing": {"files": 3}}}}',  ["rev"]),
    ("entry not an object",     '{"version": 1, "agents": {"rev": 5}}',                           []),
    ("name empty",              '{"version": 1, "agents": {"": {"skills": ["x"]}}}',              []),
]


@pytest.mark.parametrize("raw, refused", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_contract_fails_the_doctor_and_refuses_only_declaring_agents(sandbox, raw, refused):
    sb = sdk(sandbox, SKILLS, raw=raw)
    for name in ("rev", "ok", "other"):
        r = guard(sb, name)
        results = brief(sb, name)
        if name in refused:
            assert r.decision == "deny", (name, r)
            assert r.reason.startswith("briefing: agent '%s' declares skills in a definition briefing cannot "
                                       "read (" % name), r.reason
            assert "STOP." in "".join(contexts(results))
        else:
            silent(r)
    rc, data = doctor(sb)
    assert rc == 1, data
    text = sb.doctor("--harness", "claude")
    assert "FAIL" in text.out and "cannot be read" in text.out and "Traceback" not in text.err, text
    preflight = sb.run(sb.payload("SessionStart", source="startup"), args=("--part", "1"))
    assert "cannot be read" in preflight.system_message, preflight


def test_the_doctor_judges_a_file_agent_as_the_guard_does_when_the_contract_is_no_json(sandbox):
    files = dict(SKILLS, **{PA % "rev": agent_md("rev", ["beta"]), PA % "calm": agent_md("calm", ["beta"])})
    sb = sdk(sandbox, files, raw='{"version": 1, "agents": {"rev": {"skills": ["nope"]')
    assert guard(sb, "rev").decision == "deny"  # the unreadable value may define rev
    silent(guard(sb, "calm"))
    rc, data = doctor(sb)
    rev = row_of(data, "rev")
    assert rev["status"] == "FAIL" and rev["file"].startswith("options.agents"), rev
    assert row_of(data, "calm")["status"] == "ok"


@needs_proc
@pytest.mark.parametrize("value", ["{not json", "missing.json"])
def test_an_unreadable_claude_agents_value_never_crashes(sandbox, harness_process, value):
    sb = sandbox(SKILLS)
    sb.extra_env["CLAUDE_PID"] = harness_process(["--agents", value], sb.project)
    silent(guard(sb, "nobody"))
    rc, data = doctor(sb)
    assert rc == 1 and any(r["status"] == "FAIL" for r in data["agents"]), data


# Names Claude Code runs a definition under although no agent file could be called so (measured on the
# SDK's Claude Code 2.1.332, tests/e2e/test_agent_sdk.py): each is judged like any other name (issue 43).
ODD_NAMES = ["qa:reviewer", "a/b", ".dot", "a\\b", "tab\there", "x" * 300, "has space", "\u00fcn\u00ef", "Upper"]


@pytest.mark.parametrize("name", ODD_NAMES, ids=range(len(ODD_NAMES)))
def test_a_programmatic_agent_of_any_name_claude_code_runs_is_briefed_or_refused(sandbox, name):
    sb = sdk(sandbox, SKILLS, {name: ["missing-one"], name + "-ok": ["dmi"]},
             None)
    r = guard(sb, name)
    assert r.decision == "deny" and "references unknown skill(s): missing-one" in r.reason, r
    assert "STOP." in "".join(contexts(brief(sb, name)))  # past the guard: told to abort
    silent(guard(sb, name + "-ok"))
    assert list(delivered(brief(sb, name + "-ok")).skills) == ["dmi"]  # Claude Code skips it: briefing delivers
    rc, data = doctor(sb)
    rows = {row["agent"]: row["status"] for row in data["agents"]}
    assert rc == 1 and rows[name] == "FAIL" and rows[name + "-ok"] == "ok", rows


@pytest.mark.parametrize("name", ODD_NAMES[:3], ids=range(3))
def test_with_briefing_declares_skills_for_any_name(sandbox, name):
    sb = sdk(sandbox, SKILLS, {name: None}, {name: {"skills": ["beta", "dmi"]}})
    assert sorted(delivered(brief(sb, name)).skills) == ["beta", "dmi"]
    sb = sdk(sandbox, SKILLS, {name: None}, {name: {"skills": ["beta", "nope"]}})
    assert guard(sb, name).decision == "deny"


# -- --setting-sources ----------------------------------------------------------------------------

SOURCES = {PS % "proj": skill_md("proj", "PROJ BODY\n"), US % "mine": skill_md("mine", "MINE BODY\n"),
           PA % "filed": agent_md("filed", ["missing-skill"]), "home/.claude/agents/homed.md":
           agent_md("homed", ["missing-skill"])}


@needs_proc
def test_project_only_leaves_user_skills_to_briefing_and_user_agents_out(sandbox, harness_process):
    sb = sdk(sandbox, SOURCES, {"rev": ["proj", "mine"]})
    sb.extra_env["CLAUDE_PID"] = harness_process(["--setting-sources=project"], sb.project)
    results = brief(sb, "rev")
    assert list(delivered(results).skills) == ["mine"]  # Claude Code loads no user skill now
    assert "mine (a user skill, and claude runs with --setting-sources=project" in results[0].system_message
    silent(guard(sb, "homed"))  # a user agent Claude Code does not load: not judged
    assert guard(sb, "filed").decision == "deny"
    rc, data = doctor(sb)
    assert {r["agent"] for r in data["agents"]} == {"rev", "filed"}
    check = [c for c in data["checks"] if c["name"] == "claude-session"][0]
    assert check["setting_sources"] == ["project"] and check["programmatic_agents"] == ["rev"]
    assert "--setting-sources=project" in sb.doctor("--harness", "claude").out


@needs_proc
@pytest.mark.parametrize("sources", ["user", ""])
def test_isolated_from_the_project_no_project_skill_is_delivered_unasked(sandbox, harness_process, sources):
    files = dict(SOURCES, **{"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["ruled"], "skills": ["proj"]}]})})
    sb = sdk(sandbox, files, {"rev": ["proj"], "asked": None, "ruled": None}, {"asked": {"skills": ["proj"]}})
    sb.extra_env["CLAUDE_PID"] = harness_process(["--setting-sources=" + sources], sb.project)
    r = guard(sb, "rev")
    assert r.decision == "deny" and "a project skill, which Claude Code does not load" in r.reason, r
    assert list(delivered(brief(sb, "asked")).skills) == ["proj"]  # briefing's own declaration asked
    silent(guard(sb, "ruled"))  # the project's rules file is not read, as no project setting is
    nothing(brief(sb, "ruled"))
    silent(guard(sb, "filed"))  # no project agent is loaded at all
    rc, data = doctor(sb)
    assert "filed" not in {r["agent"] for r in data["agents"]} and data["rules"] == []
    check = [c for c in data["checks"] if c["name"] == "claude-session"][0]
    assert check["setting_sources"] == ([] if sources == "" else ["user"]), check
    assert "rules files of the sources not loaded are not read either" in check["detail"], check
    if sources == "":
        silent(guard(sb, "homed"))


@needs_proc
def test_private_project_skills_reach_an_isolated_session_only_when_its_own_declaration_asks(
        sandbox, harness_process):
    files = {"project/.briefing/skills/mine/SKILL.md": skill_md("mine", "PRIVATE BODY\n"),
             "home/.config/briefing/rules.json": json.dumps({"rules": [{"agents": ["ruled"], "skills": ["mine"]}]})}
    sb = sdk(sandbox, files, {"asked": None, "ruled": None}, {"asked": {"skills": ["mine"]}})
    sb.extra_env["CLAUDE_PID"] = harness_process(["--setting-sources=user"], sb.project)
    assert list(delivered(brief(sb, "asked")).skills) == ["mine"]
    r = guard(sb, "ruled")  # the user's rule applies; the project's private folder is out of its reach
    assert r.decision == "deny" and "mine" in r.reason, r


@needs_proc
def test_a_rule_cannot_bring_an_unloaded_user_skill(sandbox, harness_process):
    """A user rules file applies while user settings load; a skill of a source Claude Code does
    not load is not where a rule can reach it: refused, and the doctor says where it is."""
    sb = sandbox(dict(SOURCES, **{PS % "other": skill_md("other", "O\n"),
                                  "home/.config/briefing/rules.json": json.dumps(
                                      {"rules": [{"agents": ["general-purpose"], "skills": ["proj"]}]})}))
    sb.extra_env["CLAUDE_PID"] = harness_process(["--setting-sources=user"], sb.project)
    r = guard(sb, "general-purpose")
    assert r.decision == "deny" and "proj" in r.reason, r
    rc, data = doctor(sb)
    problems = [p for rule in data["rules"] for p in rule["problems"]]
    assert any("a project skill, which Claude Code does not load" in p for p in problems), problems


# -- briefing_sdk ---------------------------------------------------------------------------------

def test_with_briefing_keeps_what_the_caller_set():
    options = Options(agents={"rev": Definition("d", "p", skills=["a"]), "plain": Definition("d", "p")},
                      env={"KEEP": "1"}, plugins=[{"type": "local", "path": "/elsewhere"}])
    caller_env, caller_plugins = options.env, options.plugins
    out = briefing_sdk.with_briefing(options, {"rev": {"skills": ["b"], "files": ["README.md"]}})
    assert out is options
    assert out.env["KEEP"] == "1" and caller_env == {"KEEP": "1"} and len(caller_plugins) == 1
    assert out.plugins == [{"type": "local", "path": "/elsewhere"},
                           {"type": "local", "path": briefing_sdk.plugin_path()}]
    assert json.loads(out.env[ENV]) == {"version": 1, "agents": {
        "rev": {"defined": True, "skills": ["a"], "briefing": {"skills": ["b"], "files": ["README.md"]}},
        "plain": {"defined": True, "skills": []}}}
    again = briefing_sdk.with_briefing(out)  # idempotent: one plugin, the declaration kept
    assert len(again.plugins) == 2 and json.loads(again.env[ENV])["agents"]["rev"]["briefing"]["skills"] == ["b"]
    del again.agents["rev"]  # an agent taken out takes its declaration with it: no phantom definition
    assert "rev" not in json.loads(briefing_sdk.with_briefing(again).env[ENV])["agents"]


def test_with_briefing_takes_a_dict_and_extra_args_agents():
    options = {"extra_args": {"agents": json.dumps(FLAG)}}
    out = briefing_sdk.with_briefing(options, {"rev": {"skills": ["b"]}})
    assert json.loads(out["env"][ENV])["agents"] == {"rev": {"defined": False, "briefing": {"skills": ["b"]}}}


@pytest.mark.parametrize("briefing, error", [
    ({"ghost": {"skills": ["a"]}}, ValueError),
    ({"rev": {"skill": ["a"]}}, ValueError),
    ({"rev": {"skills": "a"}}, TypeError),
    ({"rev": ["a"]}, TypeError),
    ({"": {"skills": ["a"]}}, TypeError),  # no agent: Claude Code starts general-purpose for ""
])
def test_with_briefing_refuses_what_it_cannot_write(briefing, error):
    with pytest.raises(error):
        briefing_sdk.with_briefing(Options(agents={"rev": Definition("d", "p")}), briefing)


@pytest.mark.parametrize("name", ["", 3, None])
def test_with_briefing_refuses_an_agent_that_is_no_name(name):
    """The only names with_briefing rejects: Claude Code runs a definition of any other (issue 43)."""
    with pytest.raises(TypeError):
        briefing_sdk.with_briefing(Options(agents={name: Definition("d", "p")}))
    for odd in ODD_NAMES:
        assert odd in json.loads(contract({odd: ["x"]}))["agents"]


def test_plugin_path_is_this_checkout():
    assert os.path.samefile(briefing_sdk.plugin_path(), str(REPO))


def test_briefing_messages_reads_briefings_lines_without_the_skill_text():
    context = "<briefing agent=\"rev\">SECRET SKILL TEXT</briefing>"
    stream = [
        {"type": "system", "subtype": "hook_response", "hook_event": "SessionStart",
         "output": json.dumps({"systemMessage": "briefing pre-flight: 1 problem(s) in agents' skill declarations:\n- x"})},
        {"type": "system", "subtype": "hook_response", "hook_event": "SubagentStart",
         "output": json.dumps({"hookSpecificOutput": {"additionalContext": context},
                               "systemMessage": "briefing: rev \u2190 dmi (0.1 kB)"})},
        {"type": "user", "message": {"content": [{"type": "tool_result", "is_error": True,
         "content": "PreToolUse:Agent hook error: briefing: agent 'bad' references unknown skill(s): x."}]}},
        {"type": "system", "subtype": "hook_response", "hook_event": "SubagentStart",
         "output": json.dumps({"systemMessage": "briefing: NOT briefed, told to abort: briefing: agent 'b'"})},
    ]
    found = briefing_sdk.briefing_messages(stream)
    assert [(m.kind, m.event) for m in found] == [("preflight", "SessionStart"), ("audit", "SubagentStart"),
                                                  ("refusal", "tool_result"), ("not-briefed", "SubagentStart")]
    assert found[2].text.startswith("briefing: agent 'bad'")
    assert not any("SECRET" in m.text for m in found)
