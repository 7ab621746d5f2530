"""Private skills: skills that only the agents declaring them receive (issue 29).

``<project>/.briefing/skills/<name>/SKILL.md`` in every folder the harness treats as the
project, nearest first, then ``$XDG_CONFIG_HOME/briefing/skills/<name>/SKILL.md``. No harness
reads these folders; a declared bare name reaches them only after the harness's own roots
missed it. What a subagent receives is read back with ``framing.rebuild``.

Layout, following the issue: 1 where, and the lookup order  2 names: the harness wins,
frontmatter name, native entries  3 every declaration form, rules, --agent sessions,
rendering, size, missing  5 the doctor  6 hostile cases.
"""
import json
import os

import pytest

from conftest import DIR, Fifo, Symlink, agent_md, role_toml
from framing import rebuild

PRIV = "project/.briefing/skills/%s/SKILL.md"
UPRIV = "home/.config/briefing/skills/%s/SKILL.md"
SUB_PRIV = "project/sub/.briefing/skills/%s/SKILL.md"

AGENT = {"claude": "project/.claude/agents/%s.md", "codex": "project/.codex/agents/%s.toml",
         "copilot": "project/.github/agents/%s.agent.md", "gemini": "home/.gemini/agents/%s.md"}
HARNESS_SKILL = {"claude": "project/.claude/skills/%s/SKILL.md", "codex": "project/.codex/skills/%s/SKILL.md",
                 "copilot": "project/.github/skills/%s/SKILL.md", "gemini": "project/.gemini/skills/%s/SKILL.md"}
HARNESSES = ("claude", "codex", "copilot", "gemini")


def gemini_agent(name, skills):
    return "---\nname: %s\ndescription: test agent %s\n---\nBody.\n<!-- briefing: skills = [%s] -->\n" % (
        name, name, ", ".join(json.dumps(s) for s in skills))


def declaring(harness, name, skills):
    """An agent file of ``harness`` declaring ``skills`` in that harness's own form."""
    text = {"claude": agent_md, "copilot": agent_md, "codex": role_toml, "gemini": gemini_agent}[harness](name, skills)
    return {AGENT[harness] % name: text}


def private(name, body, where=PRIV, **meta):
    front = "".join("%s: %s\n" % item for item in dict({"name": name, "description": "d"}, **meta).items())
    return {where % name: "---\n%s---\n%s" % (front, body)}


def env_of(sb, harness):
    if harness == "copilot":
        return sb.copilot_env()
    if harness == "gemini":
        return {"GEMINI_SESSION_ID": "g-1", "GEMINI_PROJECT_DIR": str(sb.project), "GEMINI_CWD": str(sb.project),
                "CLAUDE_PROJECT_DIR": str(sb.project)}
    return {}


def gemini_spawn(sb, agent):
    return {"session_id": "g-1", "cwd": str(sb.project), "hook_event_name": "BeforeTool",
            "transcript_path": str(sb.home / ".gemini" / "tmp" / "project" / "chats" / "s.jsonl"),
            "tool_name": "invoke_agent", "tool_input": {"agent_name": agent, "prompt": "ORIGINAL PROMPT"}}


def received(sb, harness, agent, env=None, cwd=None):
    """{name: body} a spawn of ``agent`` starts with in ``harness`` (after its guard let it through)."""
    env = dict(env_of(sb, harness), **(env or {}))
    if harness == "gemini":
        r = sb.run(gemini_spawn(sb, agent), env=env, cwd=cwd)
        prompt = r.data["hookSpecificOutput"]["tool_input"]["prompt"]
        assert prompt.endswith("\n\nORIGINAL PROMPT"), r
        return rebuild([prompt[:-len("\n\nORIGINAL PROMPT")]]).skills
    assert guarded(sb, harness, agent, env, cwd) is None
    if harness == "claude":
        contexts = [r.context for r in sb.run_parts(sb.spawn(agent), env=env, cwd=cwd) if r.context]
    else:
        r = sb.run(sb.spawn(agent, harness), args=("--part", 1), env=env, cwd=cwd)
        contexts = [r.flat_context if harness == "copilot" else r.context]
    got = rebuild(contexts)
    assert not got.aborted
    return got.skills


def guarded(sb, harness, agent, env=None, cwd=None):
    """The guard's refusal of a spawn of ``agent`` (its reason), or None when it lets it through."""
    env = dict(env_of(sb, harness), **(env or {}))
    if harness == "gemini":
        r = sb.run(gemini_spawn(sb, agent), env=env, cwd=cwd)
        return r.data["reason"] if r.data.get("decision") == "deny" else None
    r = sb.run(sb.guard(agent, harness), env=env, cwd=cwd)
    return r.reason if r.decision == "deny" else None


def doctor_json(sb, *args, **kwargs):
    r = sb.doctor("--json", *args, **kwargs)
    assert r.rc in (0, 1), r
    return json.loads(r.out)


# --------------------------------------------------------------------------------------------
# 1. Where: the project folders nearest first, then the user's; the harness's roots before both
# --------------------------------------------------------------------------------------------

LOOKUP = [
    # (files holding "secret" besides the declaration, the body the agent receives)
    ("project only", [PRIV], "from " + PRIV),
    ("user only", [UPRIV], "from " + UPRIV),
    ("project before user", [UPRIV, PRIV], "from " + PRIV),
    ("nearest project folder first", [PRIV, SUB_PRIV], "from " + SUB_PRIV),
    ("the harness's project skill wins", [PRIV, "harness"], "from harness"),
    ("the harness's user skill wins", [PRIV, "home/.claude/skills/%s/SKILL.md"],
     "from home/.claude/skills/%s/SKILL.md"),
]


@pytest.mark.parametrize("case, places, expected", LOOKUP, ids=[c[0] for c in LOOKUP])
def test_lookup_order(sandbox, case, places, expected):
    files = declaring("claude", "rev", ["secret"])
    for place in places:
        where = HARNESS_SKILL["claude"] if place == "harness" else place
        files.update(private("secret", "from %s\n" % place, where))
    sb = sandbox(files)
    # The project is project/sub (up to the git root: project/sub, then project), as Claude Code's is.
    (sb.project / "sub").mkdir(exist_ok=True)
    env = {"CLAUDE_PROJECT_DIR": str(sb.project / "sub")}
    assert received(sb, "claude", "rev", env) == {"secret": expected + "\n"}


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_harness_wins_in_every_harness(sandbox, harness):
    files = dict(declaring(harness, "rev", ["secret"]), **private("secret", "PRIVATE\n"))
    files.update(private("secret", "THE HARNESS'S\n", HARNESS_SKILL[harness]))
    assert received(sandbox(files), harness, "rev") == {"secret": "THE HARNESS'S\n"}


def test_xdg_config_home_moves_the_user_folder(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "XDG\n", "xdg/briefing/skills/%s/SKILL.md")))
    sb.write(private("secret", "DEFAULT\n", UPRIV))
    assert received(sb, "claude", "rev", {"XDG_CONFIG_HOME": str(sb.root / "xdg")}) == {"secret": "XDG\n"}
    assert received(sb, "claude", "rev") == {"secret": "DEFAULT\n"}


# --------------------------------------------------------------------------------------------
# 3. Everywhere a declaration works, with the same guarantees
# --------------------------------------------------------------------------------------------

# Each harness renders a private skill as it renders its own project/user skills: Claude Code
# fills ${CLAUDE_SKILL_DIR} with the skill's folder; Gemini CLI renders extension skills only;
# Codex and Copilot CLI render nothing.
BODY = "SECRET-29 in ${CLAUDE_SKILL_DIR}/references and ${extensionPath}\n"


@pytest.mark.parametrize("harness", HARNESSES)
def test_each_declaration_form_receives_it_whole(sandbox, harness):
    sb = sandbox(dict(declaring(harness, "rev", ["secret", "plain"]), **private("secret", BODY)))
    sb.write(private("plain", "PLAIN\n", HARNESS_SKILL[harness]))
    sb.write(declaring(harness, "control", ["plain"]))
    got = received(sb, harness, "rev")
    folder = str(sb.project / ".briefing" / "skills" / "secret")
    expected = BODY.replace("${CLAUDE_SKILL_DIR}", folder) if harness == "claude" else BODY
    assert got == {"secret": expected, "plain": "PLAIN\n"}
    assert received(sb, harness, "control") == {"plain": "PLAIN\n"}  # the control gets nothing of it


@pytest.mark.parametrize("harness", HARNESSES)
def test_missing_is_refused(sandbox, harness):
    sb = sandbox(declaring(harness, "rev", ["secret"]))
    reason = guarded(sb, harness, "rev")
    assert reason and "references unknown skill(s): secret" in reason, reason
    doctor = sb.doctor("--harness", harness, env=env_of(sb, harness))
    assert doctor.rc == 1 and "or as a private skill (.briefing/skills/secret/ in the project" in doctor.out, doctor


def test_a_private_skill_that_vanished_after_the_guard_aborts(sandbox):
    sb = sandbox(dict(declaring("codex", "rev", ["secret"]), **private("secret", "S\n")))
    assert guarded(sb, "codex", "rev") is None
    os.unlink(str(sb.path(PRIV % "secret")))
    r = sb.run(sb.spawn("rev", "codex"), args=("--part", 1))
    assert rebuild([r.context]).aborted and "secret" in r.system_message, r


@pytest.mark.parametrize("harness, agent", [("claude", "general-purpose"), ("codex", "worker"),
                                            ("copilot", "explore"), ("gemini", "generalist")])
def test_rules_deliver_private_skills(sandbox, harness, agent):
    rules = json.dumps({"rules": [{"agents": agent, "skills": ["secret"]}]})
    sb = sandbox(dict(private("secret", "RULED\n", UPRIV), **{"project/.briefing/rules.json": rules}))
    assert received(sb, harness, agent) == {"secret": "RULED\n"}
    report = doctor_json(sb, "--harness", harness, env=env_of(sb, harness))
    rule_skills = report["rules"][0]["harnesses"][harness]["skills"]
    assert [(s["name"], s["status"], s["origin"]) for s in rule_skills] == [("secret", "ok", "private")]
    assert report["private_skills"][0]["harnesses"][harness]["rules"][0]["agents"] == [agent]


def session(sb, agent):
    results = sb.run_parts(sb.payload("SessionStart", source="startup", agent_type=agent))
    return rebuild([r.context for r in results if r.context])


def test_a_claude_agent_session_receives_it(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "SESSION\n")))
    got = session(sb, "rev")
    assert not got.aborted and got.skills == {"secret": "SESSION\n"}


@pytest.mark.parametrize("harness", ["claude", "copilot"])
def test_a_native_entry_never_reaches_a_private_skill(sandbox, harness):
    sb = sandbox(private("secret", "NATIVE?\n"))
    sb.write({AGENT[harness] % "rev": agent_md("rev", native=["secret"])})
    reason = guarded(sb, harness, "rev")
    assert reason and "unknown skill(s): secret" in reason, reason
    doctor = sb.doctor("--harness", harness, env=env_of(sb, harness))
    assert doctor.rc == 1 and "a private skill, which %s never reads: move the entry from skills: to briefing:" % (
        {"claude": "Claude Code", "copilot": "Copilot CLI"}[harness]) in doctor.out, doctor
    if harness == "claude":
        got = session(sb, "rev")  # nor in a session, where briefing delivers the native entries itself
        assert got.aborted and not got.skills
    (listed,) = doctor_json(sb, "--harness", harness)["private_skills"]
    assert listed["harnesses"][harness]["native"] == ["rev"] and listed["status"] == "WARN", listed
    assert listed["warnings"] == ["only a native skills: entry names it (%s agent rev), and the harness never "
                                  "looks in the private folders: move the entry under briefing:" % (
                                      {"claude": "Claude Code", "copilot": "Copilot CLI"}[harness])], listed


def test_counted_in_the_size_limit(sandbox):
    big = "x" * 300000 + "\n"  # under the file cap, over what Copilot CLI's one context carries with the other
    sb = sandbox(dict(declaring("copilot", "rev", ["secret"]), **private("secret", big)))
    reason = guarded(sb, "copilot", "rev")
    assert reason and "a briefing of 300001 bytes (secret)" in reason, reason


def test_a_shell_command_is_refused_as_claude_code_would_run_it(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "!`date`\n")))
    reason = guarded(sb, "claude", "rev")
    assert reason and "cannot be delivered as Claude Code delivers them" in reason, reason
    # No "let Claude Code preload it": it never reads a private skill.
    assert "Drop the dynamic line from the skill." in reason and "preload" not in reason.split(". ", 1)[1], reason


# --------------------------------------------------------------------------------------------
# 2. Names: the frontmatter name, when present, must be the folder's
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("meta, refused", [({"name": "other"}, True), ({"name": '"secret"'}, False),
                                           ({"name": ""}, False)])
def test_frontmatter_name_must_match_the_folder(sandbox, meta, refused):
    files = {PRIV % "secret": "---\n%sdescription: d\n---\nBODY\n" % "".join(
        "%s: %s\n" % item for item in meta.items())}
    sb = sandbox(dict(declaring("codex", "rev", ["secret"]), **files))
    reason = guarded(sb, "codex", "rev")
    if refused:
        assert "frontmatter name 'other' differs from its folder 'secret'" in reason, reason
    else:
        assert reason is None and received(sb, "codex", "rev") == {"secret": "BODY\n"}


def test_no_frontmatter_at_all_is_fine(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **{PRIV % "secret": "JUST A BODY\n"}))
    assert received(sb, "claude", "rev") == {"secret": "JUST A BODY\n"}


# --------------------------------------------------------------------------------------------
# 5. The doctor: the private skills, who uses each, unused and shadowed ones, origin private
# --------------------------------------------------------------------------------------------

def test_doctor_lists_uses_and_warns(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "S\n")))
    sb.write(private("idle", "I\n", UPRIV))
    sb.write(private("taken", "T\n"))
    sb.write(private("taken", "CLAUDE'S\n", HARNESS_SKILL["claude"]))
    report = doctor_json(sb, "--harness", "claude")
    assert report["ok"] is True  # a WARN, never a FAIL
    by_name = {r["name"]: r for r in report["private_skills"]}
    assert by_name["secret"]["status"] == "ok" and by_name["secret"]["harnesses"]["claude"]["agents"] == ["rev"]
    assert by_name["secret"]["scope"] == "project" and by_name["idle"]["scope"] == "user"
    assert by_name["idle"]["status"] == "WARN" and "nothing declares it" in by_name["idle"]["warnings"][0]
    shadow = by_name["taken"]["warnings"]
    assert by_name["taken"]["harnesses"]["claude"]["shadowed_by"] == str(sb.path(HARNESS_SKILL["claude"] % "taken"))
    assert any("shadowed in Claude Code" in w and ".claude/skills/taken/SKILL.md" in w and
               ".briefing/skills/taken/SKILL.md" in w for w in shadow), shadow
    skills = report["agents"][0]["skills"]
    assert [(s["name"], s["origin"], s["delivered_by"]) for s in skills] == [("secret", "private", "briefing")]
    text = sb.doctor("--harness", "claude")
    assert text.rc == 0, text
    assert "private secret  .briefing/skills/secret/SKILL.md (project)" in text.out
    assert "used by: agent rev" in text.out and "[private]" in text.out
    assert "WARN  private idle  ~/.config/briefing/skills/idle/SKILL.md (user)" in text.out, text.out


def test_doctor_show_marks_the_origin(sandbox):
    sb = sandbox(dict(declaring("codex", "rev", ["secret"]), **private("secret", "S\n")))
    show = doctor_json(sb, "--show", "rev", "--harness", "codex")["shows"][0]
    assert [(d["name"], d["origin"]) for d in show["declared"]] == [("secret", "private")]
    assert rebuild([p["text"] for p in show["parts"]]).skills == {"secret": "S\n"}
    text = sb.doctor("--show", "rev", "--harness", "codex")
    assert "briefing secret: briefing (private skill %s)" % sb.path(PRIV % "secret") in text.out, text.out


def test_doctor_nearer_private_skill_overrides_a_farther_one(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "P\n")))
    sb.write(private("secret", "U\n", UPRIV))
    by_file = {r["file"]: r for r in doctor_json(sb, "--harness", "claude")["private_skills"]}
    user = by_file[str(sb.path(UPRIV % "secret"))]
    assert user["harnesses"]["claude"]["overridden_by"] == str(sb.path(PRIV % "secret"))
    assert user["status"] == "ok", user  # overridden, as a rule can be: not unused


# --------------------------------------------------------------------------------------------
# 6. Security: the rules of every other root
# --------------------------------------------------------------------------------------------

OUTSIDE = "elsewhere/secret/SKILL.md"

HOSTILE = [
    # (case, files, declared name, words the refusal has)
    ("SKILL.md links out", {PRIV % "secret": Symlink("../../../../elsewhere/secret/SKILL.md")}, "secret",
     "leads outside"),
    ("the folder links out", {"project/.briefing/skills/secret": Symlink("../../../elsewhere/secret")}, "secret",
     "leads outside"),
    ("a FIFO", {PRIV % "secret": Fifo()}, "secret", "is not a regular file"),
    ("a folder named SKILL.md", {PRIV % "secret": DIR}, "secret", "is not a regular file"),
    ("over the size cap", {PRIV % "secret": "y" * (1024 * 1024 + 1)}, "secret", "over the 1048576-byte limit"),
    ("a dot name", {"project/.briefing/skills/.secret/SKILL.md": "HIDDEN\n"}, ".secret", "not a valid skill name"),
    ("climbing with ..", {"project/.briefing/secret/SKILL.md": "CLIMBED\n"}, "../secret", "not a valid skill name"),
    ("an absolute name", {}, "%(root)s/elsewhere/secret", "not a valid skill name"),
]


@pytest.mark.parametrize("case, files, name, words", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_private_skills(sandbox, case, files, name, words):
    sb = sandbox({OUTSIDE: "OUTSIDE-MARKER\n"})
    name = name % {"root": sb.root}
    sb.write(files)
    sb.write({AGENT["claude"] % "rev": agent_md("rev", [name])})
    reason = guarded(sb, "claude", "rev")
    assert reason and words in reason, reason
    spawn = "".join(r.out for r in sb.run_parts(sb.spawn("rev")))
    assert "OUTSIDE-MARKER" not in spawn and "HIDDEN" not in spawn and "CLIMBED" not in spawn
    doctor = sb.doctor("--harness", "claude")
    assert doctor.rc == 1 and "OUTSIDE-MARKER" not in doctor.out, doctor


def test_a_broken_nearer_candidate_leaves_the_name_to_the_next_folder(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["secret"]), **private("secret", "USER\n", UPRIV)))
    sb.write({PRIV % "secret": Symlink("/dev/null")})
    assert received(sb, "claude", "rev") == {"secret": "USER\n"}


def test_a_link_inside_the_folder_is_followed(sandbox):
    sb = sandbox(dict(declaring("claude", "rev", ["alias"]), **private("secret", "LINKED\n")))
    sb.write({"project/.briefing/skills/alias": Symlink("secret")})
    # The folder is named alias, its frontmatter says secret: the name rule still applies.
    assert "differs from its folder 'alias'" in guarded(sb, "claude", "rev")
    sb.write({PRIV % "secret": "LINKED\n"})  # without frontmatter: any folder name
    assert received(sb, "claude", "rev") == {"alias": "LINKED\n"}


def test_invalid_folder_names_are_listed_not_read(sandbox):
    sb = sandbox({"project/.briefing/skills/bad\x07name/SKILL.md": "B\n", "project/.briefing/skills/empty": DIR})
    by_name = {r["name"]: r for r in doctor_json(sb, "--harness", "codex")["private_skills"]}
    assert by_name["bad\x07name"]["problem"].startswith("not a valid skill name")
    assert by_name["empty"]["problem"] == "holds no SKILL.md" and by_name["empty"]["status"] == "WARN"


# (row, extra files, whether the doctor warns that Gemini CLI's folder tree names the skill)
GEMINI_TREE = [
    ("no ignore file", {}, True),
    (".geminiignore names the folder", {"project/.geminiignore": "# private skills\n.briefing/skills/\n"}, False),
    (".geminiignore names all of .briefing", {"project/.geminiignore": "/.briefing/**\n"}, False),
    (".geminiignore names this skill", {"project/.geminiignore": ".briefing/skills/secret\n"}, False),
    (".gitignore names it", {"project/.gitignore": "**/.briefing/skills\n"}, False),
    (".geminiignore names another folder", {"project/.geminiignore": ".briefing/skills/other/\nbuild/\n"}, True),
]


@pytest.mark.parametrize("row, files, warned", GEMINI_TREE, ids=[r[0] for r in GEMINI_TREE])
def test_doctor_says_when_gemini_clis_folder_tree_names_a_project_private_skill(sandbox, row, files, warned):
    """Measured on 0.61.0: every Gemini agent's context holds the project's folder tree, which names a
    project private skill's folder unless .geminiignore (or .gitignore) hides it; the user folder never shows."""
    sb = sandbox(dict(private("secret", "S\n"), **private("mine", "M\n", UPRIV)))
    sb.write(files)
    by_name = {r["name"]: r for r in doctor_json(sb, "--harness", "gemini", env=env_of(sb, "gemini"))["private_skills"]}
    shown = by_name["secret"]["harnesses"]["gemini"]["shown_by"]
    assert bool(shown) == warned, (row, shown)
    assert any("its name is shown: Gemini CLI's folder tree" in w and ".geminiignore" in w
               for w in by_name["secret"]["warnings"]) == warned, by_name["secret"]["warnings"]
    assert by_name["mine"]["harnesses"]["gemini"]["shown_by"] is None
    claude = doctor_json(sb, "--harness", "claude")["private_skills"]
    assert all(r["harnesses"]["claude"]["shown_by"] is None for r in claude)
