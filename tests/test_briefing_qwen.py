"""The Qwen Code side of hooks/briefing-preload (issue 38; facts/qwen-code.md, 0.24.4).

Qwen Code sends Claude Code-shaped payloads, sets CLAUDE_PROJECT_DIR as well as
its own QWEN_PROJECT_DIR, spawns through the tool ``agent`` (``subagent_type``),
and hands a SubagentStart context to a subagent only where its body says
``${hook_context}``.

Covered, in file order:
 1. which harness sent a payload (never Claude Code's briefing for Qwen's spawn, nor the reverse);
 2. the guard: missing skills, an agent without ${hook_context}, built-ins briefed by a rule;
 3. SubagentStart: the whole briefing in one context, the abort instruction, the unreachable agent;
 4. agent lookup: project, user ($QWEN_HOME), extensions (enabled, linked), case-blind, built-ins;
 5. skill lookup: Qwen Code's roots and precedence, by frontmatter name, <extension>:<name>;
 6. the pre-flight and the doctor; the hooks file and the extension build; the Claude Code route.
"""
import json
import os
import subprocess

import pytest

from conftest import DIR, HOOK, HOOK_PYTHON, REPO, Fifo, Symlink, agent_md, skill_md
from framing import rebuild
from hook_commands import briefing_handlers

QA = "project/.qwen/agents/%s.md"
QS = "project/.qwen/skills/%s/SKILL.md"
HOOKED = "You are a Qwen test agent.\n${hook_context}\n"


def qwen_agent(name, skills=None, body=HOOKED, **kwargs):
    return agent_md(name, skills, body=body, **kwargs)


def briefed(result):
    """{skill: body} delivered by one SubagentStart result (Qwen takes one context)."""
    assert result.context, result
    return rebuild([result.context]).skills


def ext(name, root="home/.qwen/extensions/%s"):
    """The manifest of an installed extension ``name``."""
    return {(root % name) + "/qwen-extension.json": json.dumps({"name": name, "version": "1.0.0"})}


# --------------------------------------------------------------------------- 1. detection

TWIN = {
    QA % "twin": qwen_agent("twin", ["qw-skill"]),
    QS % "qw-skill": skill_md("qw-skill", "SECRET-QW\n"),
    "project/.claude/agents/twin.md": agent_md("twin", ["cc-skill"]),
    "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", "SECRET-CC\n"),
}


def secret(results):
    text = "".join(r.out for r in results)
    found = [s for s in ("SECRET-QW", "SECRET-CC") if s in text]
    assert len(found) <= 1, results
    return {"SECRET-QW": "qwen", "SECRET-CC": "claude"}.get(found[0]) if found else None


@pytest.mark.parametrize("sender,env,expected", [
    ("qwen", "qwen", "qwen"),  # CLAUDE_PROJECT_DIR is set too: Qwen's own marker outranks it
    ("qwen", None, "qwen"),  # no variables: the transcript under ~/.qwen says so
    ("claude", "claude", "claude"),
    # a Claude Code started from Qwen Code's shell tool inherits QWEN_CODE_*, never QWEN_PROJECT_DIR
    ("claude", "inherited", "claude"),
])
def test_qwen_is_told_apart_at_spawn(sandbox, sender, env, expected):
    sb = sandbox(TWIN)
    run_env = {"qwen": sb.qwen_env(), None: {}, "claude": {"CLAUDE_PROJECT_DIR": str(sb.project)},
               "inherited": {"CLAUDE_PROJECT_DIR": str(sb.project), "QWEN_CODE_SESSION_ID": "q",
                             "QWEN_CODE": "1"}}[env]
    results = sb.run_parts(sb.spawn("twin", sender), env=run_env)
    assert secret(results) == expected, results
    if expected == "qwen":
        assert [bool(r.out) for r in results] == [True] + [False] * (len(results) - 1), results


def test_the_guard_knows_qwen_by_its_agent_tool(sandbox):
    files = dict(TWIN)
    files[QA % "twin"] = qwen_agent("twin", ["only-cc"])
    files["project/.claude/agents/twin.md"] = agent_md("twin", ["only-qw"])
    sb = sandbox(files)
    result = sb.run(sb.guard("twin", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny" and "only-cc" in result.reason, result
    claude = sb.run(sb.guard("twin"), env={"CLAUDE_PROJECT_DIR": str(sb.project)})
    assert claude.decision == "deny" and "only-qw" in claude.reason, claude


# --------------------------------------------------------------------------- 2. the guard

def test_missing_skill_refuses_the_spawn(sandbox):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["qw-gone"])})
    result = sb.run(sb.guard("rev", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny", result
    assert result.reason.startswith("briefing: agent 'rev' references unknown skill(s): qw-gone"), result
    assert result.data["hookSpecificOutput"]["hookEventName"] == "PreToolUse"


def test_an_agent_without_hook_context_is_refused_with_the_fix(sandbox):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["s"], body="No placeholder here.\n"),
                  QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.guard("rev", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny", result
    assert "${hook_context}" in result.reason and "Add a line ${hook_context} to the body of" in result.reason
    assert str(sb.path(QA % "rev")) in result.reason, result


@pytest.mark.parametrize("body", [HOOKED, "Start.\n${hook_context}", "${hook_context}"])
def test_a_declaring_agent_with_hook_context_passes_the_guard(sandbox, body):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["s"], body=body), QS % "s": skill_md("s", "S\n")})
    assert sb.run(sb.guard("rev", "qwen"), env=sb.qwen_env()).out == ""


def test_the_guard_finds_the_agent_case_blind(sandbox):
    """Qwen Code matches subagent_type to a name without regard to case (loadSubagent)."""
    sb = sandbox({QA % "x": qwen_agent("Reviewer", ["gone"])})
    result = sb.run(sb.guard("reviewer", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny" and "gone" in result.reason, result


@pytest.mark.parametrize("name", ["general-purpose", "Explore", "nobody", "rev"])
def test_nothing_to_say_for_agents_nothing_briefs(sandbox, name):
    sb = sandbox({QA % "rev": qwen_agent("rev", body="no placeholder, no declaration\n")})
    assert sb.run(sb.guard(name, "qwen"), env=sb.qwen_env()).out == ""


def test_a_rule_on_a_builtin_agent_refuses_it_with_the_fix(sandbox):
    """No hook reaches Qwen Code's built-ins before their first turn (docs/qwen-code.md)."""
    sb = sandbox({"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["general-purpose"], "skills": ["s"], "harness": "qwen"}]}),
        QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.guard("general-purpose", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny", result
    assert "built-in agent 'general-purpose'" in result.reason
    assert ".qwen/agents/general-purpose.md" in result.reason, result
    # without subagent_type Qwen Code starts general-purpose: the same refusal
    payload = sb.guard("x", "qwen")
    del payload["tool_input"]["subagent_type"]
    assert sb.run(payload, env=sb.qwen_env()).decision == "deny"


@pytest.mark.parametrize("name,refused", [("nobody-here", False), ("explore", True), ("x" * 3000, False)])
def test_a_glob_rule_refuses_builtins_only_not_names_qwen_does_not_know(sandbox, name, refused):
    """An unknown name is Qwen Code's to refuse ("not found"); a built-in's, in any case, is briefing's."""
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"rules": [{"agents": "*", "skills": ["s"]}]}),
                  QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.guard(name, "qwen"), env=sb.qwen_env())
    assert (result.decision == "deny") == refused, result
    assert len(result.out.encode()) < 2000, result


@pytest.mark.parametrize("rule,spawned,refused", [
    ("Explore", "Explore", True), ("Explore", "explore", True), ("Explore", "EXPLORE", True),
    ("Explore", "eXpLoRe", True), ("general-purpose", "General-Purpose", True),
    ("general-purpose", "GENERAL-PURPOSE", True), ("statusline-setup", "StatusLine-Setup", True),
    ("review-agent", "Review-Agent", True), ("codex", "CODEX", True), ("claude-code", "Claude-Code", True),
    # not a spelling of a built-in: Qwen Code answers "not found" itself
    ("Explore", "explorer", False), ("Explore", "explore ", False), ("general-purpose", "general_purpose", False),
])
def test_a_rule_on_a_builtin_judges_every_spelling_qwen_runs_as_it(sandbox, rule, spawned, refused):
    """Qwen Code finds a built-in case-blind (BuiltinAgentRegistry.getBuiltinAgent), rules match names
    as written: a spelling that starts the built-in is judged as the built-in (issue 43)."""
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"rules": [{"agents": [rule], "skills": ["s"]}]}),
                  QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.guard(spawned, "qwen"), env=sb.qwen_env())
    assert (result.decision == "deny") == refused, result
    if refused:
        assert "built-in agent '%s'" % rule in result.reason, result.reason
    shown = sb.doctor("--show", spawned, "--harness", "qwen")  # the doctor agrees with the guard
    if refused:
        assert "[FAIL]" in shown.out and "built-in agent '%s'" % rule in shown.out, shown
        assert "no hook reaches it before its first turn" in shown.out and "bytes, more than" not in shown.out
    else:
        assert "no rule applies to it" in shown.err, shown


@pytest.mark.parametrize("rule,refused", [("*", False), ("fork", True)])
def test_a_fork_is_the_parent_continued_and_no_glob_rule_applies(sandbox, rule, refused):
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"rules": [{"agents": rule, "skills": ["s"]}]}),
                  QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.guard("Fork", "qwen"), env=sb.qwen_env())
    assert (result.decision == "deny") == refused, result


def test_a_project_file_of_a_builtin_name_takes_the_rule(sandbox):
    """A project agent named general-purpose wins over the built-in, and its body can say ${hook_context}."""
    sb = sandbox({"project/.briefing/rules.json": json.dumps(
        {"rules": [{"agents": ["general-purpose"], "skills": ["s"]}]}),
        QS % "s": skill_md("s", "RULE-SKILL\n"), QA % "gp": qwen_agent("general-purpose")})
    assert sb.run(sb.guard("general-purpose", "qwen"), env=sb.qwen_env()).out == ""
    result = sb.run(sb.spawn("general-purpose", "qwen"), env=sb.qwen_env())
    assert briefed(result)["s"] == "RULE-SKILL\n"


# --------------------------------------------------------------------------- 3. SubagentStart

def test_the_whole_briefing_arrives_in_one_context(sandbox):
    big = "".join("line %05d of a big skill\n" % i for i in range(2500))  # 62,500 characters
    sb = sandbox({QA % "rev": qwen_agent("rev", ["big", "small"]), QS % "big": skill_md("big", big),
                  QS % "small": skill_md("small", "SMALL\n")})
    results = sb.run_parts(sb.spawn("rev", "qwen"), env=sb.qwen_env())
    assert [r.out for r in results[1:]] == [""] * (len(results) - 1)
    result = results[0]
    assert result.data["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    assert 'part="1/1"' in result.context
    assert briefed(result) == {"big": big, "small": "SMALL\n"}
    assert result.system_message.startswith("briefing: rev \u2190 big, small")


def test_one_process_without_part_delivers_it(sandbox):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["s"]), QS % "s": skill_md("s", "S-BODY\n")})
    assert briefed(sb.run(sb.spawn("rev", "qwen"), env=sb.qwen_env()))["s"] == "S-BODY\n"


def test_a_skill_gone_after_the_guard_gets_the_abort_instruction(sandbox):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["gone"])})
    result = sb.run(sb.spawn("rev", "qwen"), env=sb.qwen_env())
    assert rebuild([result.context]).aborted, result
    assert "<skill" not in result.context
    assert "NOT briefed, told to abort" in result.system_message


def test_an_agent_without_hook_context_gets_no_context_at_start(sandbox):
    """Nothing of ours would reach it (not even an abort): the human is told, the agent is not."""
    sb = sandbox({QA % "rev": qwen_agent("rev", ["s"], body="plain\n"), QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.spawn("rev", "qwen"), env=sb.qwen_env())
    assert result.context is None and "NOT briefed" in result.system_message, result


def test_a_too_large_briefing_is_refused(sandbox):
    big = "x" * (600 * 1024)
    sb = sandbox({QA % "rev": qwen_agent("rev", ["a", "b"]), QS % "a": skill_md("a", big[:500000]),
                  QS % "b": skill_md("b", big[:300000])})
    result = sb.run(sb.guard("rev", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny" and "can deliver whole" in result.reason, result


# --------------------------------------------------------------------------- 4. agents

@pytest.mark.parametrize("layout,expected", [
    ({QA % "a": "P", "home/.qwen/agents/a.md": "U"}, "P"),
    ({"home/.qwen/agents/a.md": "U", "home/.qwen/extensions/e/agents/a.md": "E"}, "U"),
    ({"home/.qwen/extensions/e/agents/a.md": "E"}, "E"),
    # in one folder, the first file in name order whose name matches
    ({"project/.qwen/agents/b.md": "B", "project/.qwen/agents/a-first.md": "A"}, "A"),
    # only the folder itself: no sub-folders
    ({"project/.qwen/agents/deep/a.md": "D", "home/.qwen/agents/a.md": "U"}, "U"),
])
def test_agent_precedence(sandbox, layout, expected):
    files = dict(ext("e"), **{QS % "s-%s" % v: skill_md("s-%s" % v, "FROM-%s\n" % v) for v in "PUEABD"})
    for path, tag in layout.items():
        files[path] = qwen_agent("target", ["s-%s" % tag])
    sb = sandbox(files)
    assert list(briefed(sb.run(sb.spawn("target", "qwen"), env=sb.qwen_env()))) == ["s-%s" % expected]


def test_qwen_home_replaces_the_user_folder(sandbox):
    sb = sandbox({"home/alt/agents/a.md": qwen_agent("a", ["s"]), QS % "s": skill_md("s", "S\n")})
    env = sb.qwen_env(QWEN_HOME=str(sb.path("home/alt")))
    assert briefed(sb.run(sb.spawn("a", "qwen"), env=env))["s"] == "S\n"
    assert sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()).out == ""


def test_disabled_and_linked_extensions(sandbox):
    files = dict(ext("off"), **ext("linked", root="home/src/%s"))
    files["home/.qwen/extensions/off/agents/a.md"] = qwen_agent("a", ["s"])
    files["home/src/linked/agents/b.md"] = qwen_agent("b", ["s"])
    files["home/.qwen/extensions/linked/.qwen-extension-install.json"] = "{}"
    files[QS % "s"] = skill_md("s", "S\n")
    sb = sandbox(files)
    (sb.path("home/.qwen/extensions/linked/.qwen-extension-install.json")).write_text(json.dumps(
        {"type": "link", "source": str(sb.path("home/src/linked"))}))
    (sb.path("home/.qwen/extensions/extension-enablement.json")).write_text(json.dumps(
        {"off": {"overrides": ["!%s/*" % sb.path("")]}}))
    assert sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()).out == ""
    assert briefed(sb.run(sb.spawn("b", "qwen"), env=sb.qwen_env()))["s"] == "S\n"


def test_the_home_folder_as_project_reads_no_project_agents(sandbox):
    sb = sandbox({"home/.qwen/agents/a.md": qwen_agent("a", ["s"]), "home/.qwen/skills/s/SKILL.md":
                  skill_md("s", "S\n")})
    env = sb.qwen_env(QWEN_PROJECT_DIR=str(sb.home))
    payload = sb.spawn("a", "qwen", cwd=str(sb.home))
    assert briefed(sb.run(payload, env=env))["s"] == "S\n"


def test_an_extension_agent_without_hook_context_is_refused_naming_the_copy(sandbox):
    files = dict(ext("acme"))
    files["home/.qwen/extensions/acme/agents/rev.md"] = qwen_agent("rev", ["s"], body="shipped\n")
    files[QS % "s"] = skill_md("s", "S\n")
    sb = sandbox(files)
    result = sb.run(sb.guard("rev", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny" and "copy it to .qwen/agents/" in result.reason, result


# --------------------------------------------------------------------------- 5. skills

@pytest.mark.parametrize("layout,expected", [
    ({QS: "Q", "project/.agents/skills/%s/SKILL.md": "A"}, "Q"),
    ({"project/.agents/skills/%s/SKILL.md": "A", "home/.qwen/skills/%s/SKILL.md": "U"}, "A"),
    ({"home/.qwen/skills/%s/SKILL.md": "U", "home/.agents/skills/%s/SKILL.md": "H"}, "U"),
    ({"home/.agents/skills/%s/SKILL.md": "H"}, "H"),
])
def test_skill_precedence(sandbox, layout, expected):
    files = {QA % "a": qwen_agent("a", ["s"])}
    for pattern, tag in layout.items():
        files[pattern % "s"] = skill_md("s", "FROM-%s\n" % tag)
    sb = sandbox(files)
    assert briefed(sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()))["s"] == "FROM-%s\n" % expected


def test_a_skill_is_its_frontmatter_name_with_a_description(sandbox):
    sb = sandbox({QA % "a": qwen_agent("a", ["named"]), QA % "b": qwen_agent("b", ["folder"]),
                  QA % "c": qwen_agent("c", ["undescribed"]),
                  QS % "folder": skill_md("named", "BY-NAME\n"),
                  QS % "undescribed": "---\nname: undescribed\n---\nno description\n"})
    assert briefed(sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()))["named"] == "BY-NAME\n"
    for name, skill in (("b", "folder"), ("c", "undescribed")):
        result = sb.run(sb.guard(name, "qwen"), env=sb.qwen_env())
        assert result.decision == "deny" and skill in result.reason, result


def test_claude_skills_are_not_qwens(sandbox):
    sb = sandbox({QA % "a": qwen_agent("a", ["cc"]),
                  "project/.claude/skills/cc/SKILL.md": skill_md("cc", "CC\n")})
    assert sb.run(sb.guard("a", "qwen"), env=sb.qwen_env()).decision == "deny"


def test_an_extension_skill_is_extension_colon_name(sandbox):
    files = dict(ext("acme"))
    files["home/.qwen/extensions/acme/skills/tool/SKILL.md"] = skill_md("tool", "EXT-TOOL\n")
    files[QA % "a"] = qwen_agent("a", ["acme:tool"])
    files[QA % "b"] = qwen_agent("b", ["tool"])
    sb = sandbox(files)
    assert briefed(sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()))["acme:tool"] == "EXT-TOOL\n"
    assert sb.run(sb.guard("b", "qwen"), env=sb.qwen_env()).decision == "deny"  # a bare name never finds it


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="needs /proc")
def test_a_bundled_skill_is_found_beside_the_cli_that_runs_the_hook(sandbox, tmp_path):
    """Qwen Code's own skills are in ``bundled/`` beside its cli.js, which the node process that
    started the hook names on its command line (here a shell called node runs a cli.js script)."""
    sb = sandbox({QA % "a": qwen_agent("a", ["shipped"]), QA % "b": qwen_agent("b", ["ghost"])})
    package = tmp_path / "pkg"
    (package / "bundled" / "shipped").mkdir(parents=True)
    (package / "bundled" / "shipped" / "SKILL.md").write_text(skill_md("shipped", "SHIPPED-BODY\n"))
    (package / "cli.js").write_text('"$1" "$2" < "$3"; true\n')  # "; true": no exec, the shell stays the parent
    node = tmp_path / "bin" / "node"
    node.parent.mkdir()
    os.symlink("/bin/sh", str(node))

    def run(agent):
        payload = tmp_path / "payload.json"
        payload.write_text(json.dumps(sb.spawn(agent, "qwen")))
        proc = subprocess.run([str(node), str(package / "cli.js"), HOOK_PYTHON, str(HOOK), str(payload)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(sb.project),
                              env=sb.env(**sb.qwen_env()), timeout=60)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
        return proc.stdout.decode()

    assert "SHIPPED-BODY" in run("a")
    assert "status=\\\"abort\\\"" in run("b")


def test_private_skills_after_qwens_roots(sandbox):
    sb = sandbox({QA % "a": qwen_agent("a", ["mine"]),
                  "project/.briefing/skills/mine/SKILL.md": skill_md("mine", "PRIVATE\n")})
    assert briefed(sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()))["mine"] == "PRIVATE\n"


def test_files_qwen_loads_itself_are_not_sent_twice(sandbox):
    """QWEN.md and AGENTS.md of the project are in every Qwen Code agent's system prompt (measured)."""
    sb = sandbox({QA % "a": qwen_agent("a", ["s"], extra="  files: [QWEN.md, AGENTS.md, notes.md]"),
                  QS % "s": skill_md("s", "S\n"), "project/QWEN.md": "Q\n", "project/AGENTS.md": "A\n",
                  "project/notes.md": "NOTES-BODY\n"})
    context = sb.run(sb.spawn("a", "qwen"), env=sb.qwen_env()).context
    assert "NOTES-BODY" in context and 'path="QWEN.md"' not in context and 'path="AGENTS.md"' not in context


@pytest.mark.parametrize("ignore,warned", [(None, True), (".qwenignore", False), (".gitignore", False),
                                           (".geminiignore", True)])
def test_the_folder_tree_names_a_private_skill_unless_ignored(sandbox, ignore, warned):
    """Qwen Code's folder tree of the project, in every agent's first message, names a private
    skill's folder; a .qwenignore or .gitignore line hides it (measured on 0.24.4)."""
    files = {QA % "a": qwen_agent("a", ["mine"]), "project/.briefing/skills/mine/SKILL.md": skill_md("mine", "P\n")}
    if ignore:
        files["project/" + ignore] = ".briefing/\n"
    sb = sandbox(files)
    sb.path("home/.qwen").mkdir()
    data = json.loads(sb.doctor("--cwd", str(sb.project), "--harness", "qwen", "--json").out)
    shown = data["private_skills"][0]["harnesses"]["qwen"]["shown_by"]
    assert bool(shown) == warned and (not shown or ".qwenignore" in shown), data["private_skills"]


# --------------------------------------------------------------------------- hostile input

@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".hidden", "x" * 5000, "a\x00b", "ext:../../etc"])
def test_agent_names_that_try_to_escape_say_nothing(sandbox, name):
    sb = sandbox({"project/x.md": qwen_agent("x", ["gone"]), QA % "ok": qwen_agent("ok", ["gone"])})
    assert sb.run(sb.guard(name, "qwen"), env=sb.qwen_env()).out == ""


@pytest.mark.parametrize("entry", [Fifo(), DIR, Symlink("/dev/zero"), Symlink("nowhere.md")])
def test_an_agent_folder_entry_that_is_no_file_is_passed_over(sandbox, entry):
    """Only regular files are agents: a FIFO, a folder, a device or a dangling link named *.md is
    skipped, never read (it would block or never end), and the next file is found."""
    sb = sandbox({QA % "a": entry, QA % "b": qwen_agent("target", ["gone"])})
    result = sb.run(sb.guard("target", "qwen"), env=sb.qwen_env(), timeout=10)
    assert result.decision == "deny", result


@pytest.mark.parametrize("name", ["../../home/.qwen/skills/s", "acme:../s", "s/../s"])
def test_skill_names_that_try_to_escape_are_refused(sandbox, name):
    sb = sandbox(dict(ext("acme"), **{QA % "a": qwen_agent("a", [name]),
                                      "home/.qwen/skills/s/SKILL.md": skill_md("s", "S\n")}))
    result = sb.run(sb.guard("a", "qwen"), env=sb.qwen_env())
    assert result.decision == "deny", result


# --------------------------------------------------------------------------- 6. pre-flight, doctor, install

def test_the_preflight_names_an_agent_without_hook_context(sandbox):
    sb = sandbox({QA % "rev": qwen_agent("rev", ["s"], body="plain\n"), QS % "s": skill_md("s", "S\n")})
    result = sb.run(sb.payload("SessionStart", "qwen"), env=sb.qwen_env())
    assert "Qwen Code agent 'rev'" in result.system_message and "${hook_context}" in result.system_message
    assert result.context is None  # SessionStart context would reach the model: never


def test_the_doctor_lists_qwen_agents_and_the_requirement(sandbox):
    sb = sandbox({QA % "ok": qwen_agent("ok", ["s"]), QA % "bad": qwen_agent("bad", ["s"], body="x\n"),
                  QA % "field": qwen_agent("field", ["s"], native=["s"]),
                  QA % "var": qwen_agent("var", ["s"], body="${hook_context} ${OTHER}\n"),
                  QA % "task": qwen_agent("task", ["s"], body="${task_prompt}\n${hook_context}\n"),
                  QS % "s": skill_md("s", "S\n")})
    result = sb.doctor("--cwd", str(sb.project), "--harness", "qwen", "--json")
    assert result.rc == 1, result
    rows = {r["agent"]: r for r in json.loads(result.out)["agents"]}
    assert rows["ok"]["status"] == "ok" and rows["ok"]["skills"][0]["name"] == "s"
    assert rows["bad"]["status"] == "FAIL" and "${hook_context}" in rows["bad"]["problems"][0]
    assert rows["field"]["status"] == "WARN" and "skills: field" in rows["field"]["warnings"][0]
    assert rows["var"]["status"] == "WARN" and "${OTHER}" in rows["var"]["warnings"][0]
    assert rows["task"]["status"] == "ok", rows["task"]
    show = sb.doctor("--cwd", str(sb.project), "--harness", "qwen", "--show", "ok")
    assert show.rc == 0 and "where its body says ${hook_context}" in show.out, show


def test_the_doctor_leaves_out_a_qwen_that_never_ran_here(sandbox):
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"rules": [{"agents": "*", "skills": []}]})})
    data = json.loads(sb.doctor("--cwd", str(sb.project), "--json").out)
    assert "qwen" not in data["projects"]
    sb.path("home/.qwen").mkdir()
    data = json.loads(sb.doctor("--cwd", str(sb.project), "--json").out)
    assert "qwen" in data["projects"]


def test_the_hooks_file_registers_one_handler_per_event():
    handlers = briefing_handlers(REPO / "qwen" / "hooks" / "hooks.json")
    assert sorted((e, m) for e, m, _ in handlers) == [
        ("PreToolUse", "^agent$"), ("SessionStart", None), ("SubagentStart", None)]
    for _, _, handler in handlers:
        assert "${CLAUDE_PLUGIN_ROOT}/hooks/briefing-preload" in handler["command"]
        assert "--part" not in handler["command"] and handler["timeout"] == 30
    manifest = json.loads((REPO / "qwen" / "qwen-extension.json").read_text())
    assert manifest["version"] == json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]


@pytest.fixture(scope="module")
def qwen_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("qwen-out")
    proc = subprocess.run([HOOK_PYTHON, str(REPO / "scripts" / "build-qwen-extension"), str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc
    assert proc.stdout.splitlines()[-1] == "next: qwen extensions install %s --consent" % (out / "briefing"), proc
    return out / "briefing"


def test_the_build_stands_on_its_own(qwen_build, sandbox):
    ext_root = qwen_build
    for rel in ("qwen-extension.json", "hooks/hooks.json", "hooks/briefing-preload", "hooks/briefing-python",
                "hooks/briefing/harnesses/qwen.py", "skills/briefing/SKILL.md", "LICENSE"):
        assert (ext_root / rel).is_file() and not (ext_root / rel).is_symlink(), rel
    assert (ext_root / "hooks" / "hooks.json").read_text() == (REPO / "qwen" / "hooks" / "hooks.json").read_text()
    sb = sandbox({QA % "rev": qwen_agent("rev", ["gone"])})
    doctor = sb.run(stdin="", args=("doctor", "--harness", "qwen", "--json", "--cwd", str(sb.project)),
                    program=ext_root / "hooks" / "briefing-preload", check=False)
    checks = {c["name"]: c for c in json.loads(doctor.out)["checks"]}
    assert checks["qwen hooks.json"]["status"] == "ok", checks
    version = sb.run(stdin="", args=("doctor", "--version"), program=ext_root / "hooks" / "briefing-preload")
    assert version.out.strip() == "briefing-doctor %s" % json.loads(
        (REPO / ".claude-plugin" / "plugin.json").read_text())["version"], version
    assert "hooks.json" not in checks, checks  # --harness qwen: no other harness's files (issue 44)


def test_the_claude_plugin_installed_into_qwen_briefs_and_the_doctor_says_so(tmp_path, sandbox):
    """``qwen extensions install <repo>:briefing --consent`` copies the plugin and adds a generated
    qwen-extension.json beside Claude Code's hooks/hooks.json (facts §7): that file's guard (matcher
    Agent) fires on Qwen's agent tool, and part 1 carries everything."""
    copy = tmp_path / "briefing"
    os.makedirs(str(copy))
    subprocess.run(["cp", "-r", str(REPO / ".claude-plugin"), str(REPO / "hooks"), str(copy)], check=True)
    (copy / "qwen-extension.json").write_text(json.dumps({"name": "briefing", "version": "0.6.0"}))
    sb = sandbox({QA % "rev": qwen_agent("rev", ["gone"])})
    doctor = sb.run(stdin="", args=("doctor", "--harness", "qwen", "--json", "--cwd", str(sb.project)),
                    program=copy / "hooks" / "briefing-preload", check=False)
    checks = {c["name"]: c for c in json.loads(doctor.out)["checks"]}
    assert checks["qwen hooks.json"]["status"] == "WARN", checks
    assert "build-qwen-extension" in checks["qwen hooks.json"]["detail"]


def test_the_claude_plugin_in_qwen_without_its_guard_fails_naming_the_file(tmp_path, sandbox):
    """The same copy with its hooks file stripped of the guard: the doctor FAILs, naming that file."""
    copy = tmp_path / "briefing"
    os.makedirs(str(copy))
    subprocess.run(["cp", "-r", str(REPO / ".claude-plugin"), str(REPO / "hooks"), str(copy)], check=True)
    (copy / "qwen-extension.json").write_text(json.dumps({"name": "briefing", "version": "0.6.0"}))
    hooks = json.loads((copy / "hooks" / "hooks.json").read_text())
    del hooks["hooks"]["PreToolUse"]
    (copy / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    sb = sandbox({QA % "rev": qwen_agent("rev", ["gone"])})
    doctor = sb.run(stdin="", args=("doctor", "--harness", "qwen", "--json", "--cwd", str(sb.project)),
                    program=copy / "hooks" / "briefing-preload", check=False)
    check = {c["name"]: c for c in json.loads(doctor.out)["checks"]}["qwen hooks.json"]
    assert check["status"] == "FAIL", check
    assert str(copy / "hooks" / "hooks.json") in check["detail"] and "no guard" in check["detail"], check


def test_the_bundled_qwen_example(sandbox):
    """examples/qwen: demo-briefed gets its phrase and demo-control nothing; without the line
    ${hook_context} (examples/README.md says to try it) the doctor fails it, naming the fix."""
    import shutil
    sb = sandbox()
    example = sb.project / "qwen-example"
    shutil.copytree(str(REPO / "examples" / "qwen"), str(example))
    show = json.loads(sb.doctor("--cwd", str(example), "--harness", "qwen", "--show", "demo-briefed",
                                "--json").out)["shows"][0]
    assert "heron-lattice-4417" in rebuild([p["text"] for p in show["parts"]]).skills["demo-magic"]
    control = sb.doctor("--cwd", str(example), "--harness", "qwen", "--show", "demo-control")
    assert control.rc == 1 and "declares no skills" in control.err, control
    agent = example / ".qwen" / "agents" / "demo-briefed.md"
    agent.write_text(agent.read_text().replace("${hook_context}\n", ""))
    broken = sb.doctor("--cwd", str(example), "--harness", "qwen")
    assert broken.rc == 1 and "Add a line ${hook_context} to the body of" in broken.out, broken
