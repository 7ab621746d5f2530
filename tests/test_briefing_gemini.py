"""The Gemini CLI side of hooks/briefing-preload (issue 16).

Gemini CLI 0.61.0 has no subagent start event. Its one spawn tool,
``invoke_agent {agent_name, prompt}``, fires ``BeforeTool``, and there the hook
either refuses the spawn (``{"decision": "deny", "reason": R}``) or returns the
whole ``tool_input`` with the briefing in front of the original prompt: Gemini
CLI replaces the arguments, it does not merge them (facts/gemini-cli.md §12-13).

Covered, in file order:
 1. the declaration: a body line ``<!-- briefing: skills = [...] -->``, read by
    the Codex comment's reader; hostile and malformed inputs;
 2. agent lookup: project (acknowledged only), user, extensions; built-ins,
    ``_`` files, symlinks, GEMINI_CLI_HOME, GEMINI_PROJECT_DIR;
 3. skill resolution: Gemini CLI's roots and precedence, by frontmatter name;
 4. the rewrite and the deny, and everything that passes untouched;
 5. which harness sent a payload (Gemini CLI also sets CLAUDE_PROJECT_DIR);
 6. the pre-flight and the doctor (acknowledgement, hooks file);
 7. the extension's packaging.
"""
import hashlib
import json
import os
import re

import pytest

from conftest import REPO, Symlink, load_hook, skill_md
from framing import PART_OPEN, rebuild
from hook_commands import first_attempt

HOOK = load_hook("briefing_preload_gemini")
EXT = REPO / "gemini"


# --------------------------------------------------------------------------- helpers

def gemini_agent(name, skills=None, body="You are a Gemini test agent.\n", extra=""):
    """A Gemini CLI agent file; ``skills`` goes into the body comment, never the frontmatter."""
    lines = ["---", "name: %s" % name, "description: test agent %s" % name]
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    text = "\n".join(lines) + "\n" + body
    if skills is not None:
        text += "<!-- briefing: skills = [%s] -->\n" % ", ".join(json.dumps(s) for s in skills)
    return text


def body(tag):
    return "Body of %s.\nSECRET-%s: only this skill knows it.\n" % (tag, tag)


def skill(rel_dir, name, tag=None, folder=None):
    return {"%s/%s/SKILL.md" % (rel_dir, folder or name): skill_md(name, body(tag or name))}


def gemini_env(sb, **overrides):
    """What Gemini CLI sets for every hook (facts/gemini-cli.md §10), CLAUDE_PROJECT_DIR included."""
    env = {"GEMINI_SESSION_ID": "g-1", "GEMINI_PROJECT_DIR": str(sb.project), "GEMINI_CWD": str(sb.project),
           "CLAUDE_PROJECT_DIR": str(sb.project)}
    env.update(overrides)
    return env


def payload(sb, event="BeforeTool", **fields):
    data = {"session_id": "g-1",
            "transcript_path": str(sb.home / ".gemini" / "tmp" / "project" / "chats" / "session-1.jsonl"),
            "cwd": str(sb.project), "hook_event_name": event, "timestamp": "2026-12-01T07:57:59.523Z"}
    data.update(fields)
    return data


def spawn(sb, agent_name, prompt="ORIGINAL PROMPT: do the task.", **extra):
    tool_input = {"agent_name": agent_name, "prompt": prompt}
    tool_input.update(extra)
    return payload(sb, tool_name="invoke_agent", tool_input=tool_input)


def run(sb, data, env=None):
    return sb.run(data, env=gemini_env(sb, **(env or {})))


def split_prompt(prompt):
    """(briefing part, original prompt) of a rewritten prompt."""
    head = PART_OPEN.match(prompt)
    assert head, prompt[:300]
    close = '</briefing seal="%s">' % head.group("seal")
    end = prompt.index(close) + len(close)
    assert prompt[end:end + 2] == "\n\n", repr(prompt[end:end + 40])
    return prompt[:end], prompt[end + 2:]


def rewritten(result):
    assert result.data is not None, result
    hso = result.data["hookSpecificOutput"]
    assert hso["hookEventName"] == "BeforeTool"
    return hso["tool_input"]


def briefed(result):
    """{skill name: body} delivered by a BeforeTool rewrite."""
    part, _ = split_prompt(rewritten(result)["prompt"])
    return rebuild([part]).skills


def ack(sb, *names, project=None):
    """Acknowledge project agents as Gemini CLI does: sha256 of the file per project and name."""
    project = str(project or sb.project)
    data = {project: {}}
    for name in names:
        text = (sb.project / ".gemini" / "agents" / ("%s.md" % name)).read_text(encoding="utf-8")
        data[project][name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    sb.write({"home/.gemini/acknowledgments/agents.json": json.dumps(data)})


# =========================================================================== 1. declaration

FM = "---\nname: a\ndescription: d\n---\n"
DECL = [
    ("plain", FM + 'Body.\n<!-- briefing: skills = ["a", "b"] -->\n', ["a", "b"]),
    ("namespaced", FM + '<!-- briefing: skills = ["code-style", "acme-tools:release-checklist"] -->\n',
     ["code-style", "acme-tools:release-checklist"]),
    ("compact", FM + '<!--briefing:skills=["a"]-->\n', ["a"]),
    ("spaced", FM + '   <!--   briefing :  skills  =  [ "a" , "b" , ]   -->   \n', ["a", "b"]),
    ("literal-strings", FM + "<!-- briefing: skills = ['a', 'b'] -->\n", ["a", "b"]),
    ("several-add-up-once", FM + '<!-- briefing: skills = ["a"] -->\nx\n<!-- briefing: skills = ["b", "a"] -->\n',
     ["a", "b"]),
    ("crlf", (FM + 'Body.\n<!-- briefing: skills = ["a"] -->\n').replace("\n", "\r\n"), ["a"]),
    ("bom", "\ufeff" + FM + '<!-- briefing: skills = ["a"] -->\n', ["a"]),
    ("no-frontmatter", '<!-- briefing: skills = ["a"] -->\n', ["a"]),
    ("no-declaration", FM + "You review code.\n", None),
    ("prose-comment", FM + "<!-- briefing: this agent reviews code -->\n", None),
    ("other-comment", FM + "<!-- TODO: skills = [\"a\"] -->\n", None),
    ("not-own-line", FM + 'See <!-- briefing: skills = ["ghost"] --> here.\n', None),
    ("in-frontmatter", "---\nname: a\n<!-- briefing: skills = [\"ghost\"] -->\ndescription: d\n---\nBody\n", None),
    ("in-backtick-fence", FM + '```\n<!-- briefing: skills = ["ghost"] -->\n```\n<!-- briefing: skills = ["a"] -->\n',
     ["a"]),
    ("in-tilde-fence", FM + '~~~md\n<!-- briefing: skills = ["ghost"] -->\n~~~\n', None),
    ("longer-fence-needs-longer-close", FM + '````\n```\n<!-- briefing: skills = ["ghost"] -->\n````\n'
     '<!-- briefing: skills = ["a"] -->\n', ["a"]),
    ("unclosed-fence-hides-the-rest", FM + '```\n<!-- briefing: skills = ["ghost"] -->\n', None),
    ("indented-4-is-no-fence", FM + '    ```\n<!-- briefing: skills = ["a"] -->\n', ["a"]),
    ("string-with-arrow", FM + '<!-- briefing: skills = ["a-->b"] -->\n', ["a-->b"]),
    ("unicode-line-separator-is-no-newline", FM + '<!-- x \u2028 briefing: skills = ["ghost"] -->\n', None),
    ("empty-list", FM + "<!-- briefing: skills = [] -->\n", []),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in DECL], ids=[c[0] for c in DECL])
def test_declaration(text, expected):
    assert HOOK.parse_skills_html_comment(text) == expected


MALFORMED = [
    ("unclosed-comment", FM + '<!-- briefing: skills = ["a"]\n', 5, "must end with -->"),
    ("text-after-close", FM + '<!-- briefing: skills = ["a"] --> and more\n', 5, "line of its own"),
    ("colon-instead-of-equals", FM + '<!-- briefing: skills: ["a"] -->\n', 5, "expected <!-- briefing: skills ="),
    ("not-an-array", FM + '<!-- briefing: skills = "a" -->\n', 5, "must be an array"),
    ("unterminated-array", FM + "x\n" + '<!-- briefing: skills = ["a", -->\n', 6, "unterminated array"),
    ("missing-comma", FM + '<!-- briefing: skills = ["a" "b"] -->\n', 5, "missing comma"),
    ("number-item", FM + "<!-- briefing: skills = [1] -->\n", 5, "array of strings"),
    ("bad-escape", FM + '<!-- briefing: skills = ["a\\q"] -->\n', 5, "bad escape"),
    ("control-character", FM + '<!-- briefing: skills = ["a\x01"] -->\n', 5, "control character"),
    ("text-after-array", FM + '<!-- briefing: skills = ["a"] x -->\n', 5, "unexpected text"),
    ("no-frontmatter-line-1", '<!-- briefing: skills = [a] -->\n', 1, "array of strings"),
]


@pytest.mark.parametrize("text, line, words", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_declaration_names_its_line(text, line, words):
    with pytest.raises(HOOK.ParseError) as caught:
        HOOK.parse_skills_html_comment(text)
    assert caught.value.line == line, str(caught.value)
    assert words in str(caught.value)


@pytest.mark.parametrize("text", [
    "\0" * 1000, "<!--" * 5000, "<!-- briefing: skills = [" + '"a",' * 20000 + " -->",
    "```\n" * 3000, "<!-- briefing:" + " " * 100000 + "skills = [\"a\"] -->", "\ud800<!-- -->",
    "---\n" + "x: y\n" * 1000, "<!-- briefing: skills = [\"" + "a" * 100000 + "\"] -->",
])
def test_hostile_text_gives_a_value_or_a_parse_error(text):
    try:
        value = HOOK.parse_skills_html_comment(text)
    except HOOK.ParseError:
        return
    assert value is None or all(isinstance(s, str) for s in value)


def test_same_reader_as_the_codex_comment():
    """One reader for both comment forms: the same inner text, the same names and the same errors."""
    for inner in ('briefing: skills = ["a", \'b\', "c\\u0041"]', "briefing: skills = [1]", 'briefing: skills = ["a" "b"]'):
        try:
            codex = HOOK.parse_skills_comment("# %s\n" % inner)
        except HOOK.ParseError as exc:
            codex = ("error", exc.message)
        try:
            gemini = HOOK.parse_skills_html_comment("<!-- %s -->\n" % inner)
        except HOOK.ParseError as exc:
            gemini = ("error", exc.message)
        assert codex == gemini, inner


def test_malformed_comment_is_reported_like_a_codex_one(sandbox):
    sb = sandbox(skill("project/.gemini/skills", "a"))
    sb.write({"home/.gemini/agents/bad.md": gemini_agent("bad") + '<!-- briefing: skills = ["a" -->\n'})
    result = run(sb, spawn(sb, "bad"))
    # Someone's broken declaration is never a reason to block the spawn; it is said, loudly.
    assert result.data == {"systemMessage": result.data["systemMessage"]}, result
    assert "NOT briefed: cannot read the briefing comment: line 6" in result.system_message
    assert "bad.md" in result.system_message
    doctor = sb.doctor("--harness", "gemini", env=gemini_env(sb))
    assert doctor.rc == 1 and "cannot read the briefing comment: line 6" in doctor.out, doctor


# =========================================================================== 2. agent lookup

def lookup_files(*entries):
    files = {}
    for rel, tag in entries:
        files[rel] = gemini_agent("rev", [tag])
    return files


LOOKUP = [
    ("project-acknowledged", ["project"], ["project"], "project"),
    ("project-unacknowledged-falls-to-user", ["project", "user"], [], "user"),
    ("project-over-user", ["project", "user"], ["project"], "project"),
    ("user-over-extension", ["user", "ext"], [], "user"),
    ("extension", ["ext"], [], "ext"),
    ("linked-extension", ["linked"], [], "linked"),
    ("none", [], [], None),
]
PLACES = {"project": "project/.gemini/agents/rev.md", "user": "home/.gemini/agents/rev.md",
          "ext": "home/.gemini/extensions/tools/agents/rev.md", "linked": "src/linked-ext/agents/rev.md"}


def extension_files(sb):
    return {"home/.gemini/extensions/tools/gemini-extension.json": json.dumps({"name": "tools", "version": "1"}),
            "home/.gemini/extensions/lnk/.gemini-extension-install.json": json.dumps(
                {"source": str(sb.root / "src" / "linked-ext"), "type": "link"}),
            "src/linked-ext/gemini-extension.json": json.dumps({"name": "linked", "version": "1"})}


@pytest.mark.parametrize("where, acked, expected", [c[1:] for c in LOOKUP], ids=[c[0] for c in LOOKUP])
def test_agent_lookup(sandbox, where, acked, expected):
    sb = sandbox()
    sb.write(extension_files(sb))
    for place in ["project", "user", "ext", "linked"]:
        sb.write(skill("home/.gemini/skills", "s-" + place))
    sb.write({PLACES[place]: gemini_agent("rev", ["s-" + place]) for place in where})
    if acked:
        ack(sb, "rev")
    result = run(sb, spawn(sb, "rev"))
    if expected is None:
        assert result.out == "" and result.err == "", result
    else:
        assert list(briefed(result)) == ["s-" + expected], result


@pytest.mark.parametrize("case", ["builtin-name", "underscore-file", "symlinked-file", "in-subfolder",
                                  "disabled-extension", "invalid-name"])
def test_files_gemini_cli_does_not_load_are_not_agents(sandbox, case):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    name = "rev"
    if case == "builtin-name":
        name = "generalist"
        sb.write({"home/.gemini/agents/generalist.md": gemini_agent("generalist", ["ghost"])})
    elif case == "underscore-file":
        sb.write({"home/.gemini/agents/_rev.md": gemini_agent("rev", ["ghost"])})
    elif case == "symlinked-file":
        sb.write({"elsewhere/rev.md": gemini_agent("rev", ["ghost"]),
                  "home/.gemini/agents/rev.md": Symlink(str(sb.root / "elsewhere" / "rev.md"))})
    elif case == "in-subfolder":
        sb.write({"home/.gemini/agents/team/rev.md": gemini_agent("rev", ["ghost"])})
    elif case == "disabled-extension":
        sb.write(extension_files(sb))
        sb.write({"home/.gemini/extensions/tools/agents/rev.md": gemini_agent("rev", ["ghost"]),
                  "home/.gemini/extensions/extension-enablement.json": json.dumps(
                      {"tools": {"overrides": ["!%s/*" % sb.root]}})})
    elif case == "invalid-name":
        name = "../rev"
        sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["ghost"])})
    result = run(sb, spawn(sb, name))
    assert result.out == "" and result.err == "", result


def test_file_name_need_not_match_the_agent_name(sandbox):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("other", ["ghost"]),
              "home/.gemini/agents/zz-reviewer.md": gemini_agent("rev", ["a"])})
    assert list(briefed(run(sb, spawn(sb, "rev")))) == ["a"]


def test_gemini_cli_home_replaces_home(sandbox):
    sb = sandbox(skill("gh/.agents/skills", "a"))
    sb.write({"gh/.gemini/agents/rev.md": gemini_agent("rev", ["a"]),
              "home/.gemini/agents/rev.md": gemini_agent("rev", ["ghost"])})
    result = run(sb, spawn(sb, "rev"), env={"GEMINI_CLI_HOME": str(sb.root / "gh")})
    assert list(briefed(result)) == ["a"], result


def test_project_is_gemini_project_dir_not_the_cwd(sandbox):
    sb = sandbox(skill("project/.gemini/skills", "a"))
    sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["a"]), "project/sub/x.txt": "x"})
    ack(sb, "rev")
    data = spawn(sb, "rev")
    data["cwd"] = str(sb.project / "sub")
    assert list(briefed(run(sb, data))) == ["a"]


def test_enabled_extension_rule_for_this_folder(sandbox):
    sb = sandbox()
    sb.write(extension_files(sb))
    sb.write(skill("home/.gemini/extensions/tools/skills", "a"))
    sb.write({"home/.gemini/extensions/tools/agents/rev.md": gemini_agent("rev", ["a"]),
              "home/.gemini/extensions/extension-enablement.json": json.dumps(
                  {"tools": {"overrides": ["!/*", "%s/*" % sb.project]}})})
    assert list(briefed(run(sb, spawn(sb, "rev")))) == ["a"]


# =========================================================================== 3. skill resolution

SKILL_ROOTS = ["project/.agents/skills", "project/.gemini/skills", "home/.agents/skills", "home/.gemini/skills",
               "home/.gemini/extensions/tools/skills"]


@pytest.mark.parametrize("first", range(len(SKILL_ROOTS)), ids=SKILL_ROOTS)
def test_skill_root_precedence(sandbox, first):
    sb = sandbox()
    sb.write(extension_files(sb))
    for root in SKILL_ROOTS[first:]:
        sb.write(skill(root, "s", tag=root.replace("/", "_")))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["s"])})
    result = run(sb, spawn(sb, "rev"))
    assert briefed(result) == {"s": body(SKILL_ROOTS[first].replace("/", "_"))}, result
    part, _ = split_prompt(rewritten(result)["prompt"])
    assert rebuild([part]).dirs["s"] == str(sb.root / SKILL_ROOTS[first] / "s")


@pytest.mark.parametrize("files, declared, expected_tag", [
    ({"home/.gemini/skills/folder-x/SKILL.md": skill_md("s", body("by-name"))}, "s", "by-name"),
    ({"home/.gemini/skills/S/SKILL.md": skill_md("S", body("upper"))}, "s", "upper"),
    ({"home/.gemini/skills/s/SKILL.md": skill_md("other", body("wrong")),
      "home/.gemini/skills/t/SKILL.md": skill_md("s", body("right"))}, "s", "right"),
    ({"home/.gemini/skills/s/SKILL.md": "---\nname: s\n---\n" + body("no-description"),
      "home/.agents/skills/s/SKILL.md": skill_md("s", body("described"))}, "s", "described"),
    ({"home/.gemini/skills/SKILL.md": skill_md("s", body("root-file"))}, "s", "root-file"),
    ({"home/.gemini/extensions/tools/skills/s/SKILL.md": skill_md("s", body("ext")),
      "home/.gemini/skills/s/SKILL.md": skill_md("s", body("user"))}, "tools:s", "ext"),
    ({"home/.gemini/skills/s/SKILL.md": skill_md("s", body("user"))}, "tools:s", None),
    ({"home/.gemini/skills/deep/er/s/SKILL.md": skill_md("s", body("too-deep"))}, "s", None),
], ids=["frontmatter-name", "case-blind", "fast-path-name-differs", "no-description-is-skipped",
        "root-skill-file", "extension-namespace", "namespace-only-there", "only-one-level"])
def test_skill_by_frontmatter_name(sandbox, files, declared, expected_tag):
    sb = sandbox(files)
    sb.write(extension_files(sb))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", [declared])})
    result = run(sb, spawn(sb, "rev"))
    if expected_tag is None:
        assert result.data["decision"] == "deny", result
    else:
        assert list(briefed(result).values()) == [body(expected_tag)], result


# =========================================================================== 4. rewrite and deny

def test_rewrite_keeps_both_arguments_and_the_prompt_after_the_briefing(sandbox):
    sb = sandbox(dict(skill("project/.gemini/skills", "alpha"), **skill("home/.agents/skills", "beta")))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["alpha", "beta"])})
    prompt = "ORIGINAL PROMPT: review ${path} and <this> & that.\nSecond line."
    result = run(sb, spawn(sb, "rev", prompt=prompt, future_field=3))
    assert set(result.data) == {"hookSpecificOutput", "systemMessage"}, result
    args = rewritten(result)
    assert args["agent_name"] == "rev" and args["future_field"] == 3
    part, original = split_prompt(args["prompt"])
    assert original == prompt, "the original prompt must follow the briefing exactly"
    rebuilt = rebuild([part])
    assert rebuilt.agent == "rev" and rebuilt.skills == {"alpha": body("alpha"), "beta": body("beta")}
    assert result.system_message.startswith("briefing: rev \u2190 alpha, beta")
    assert "decision" not in result.data


def test_same_framing_and_header_as_the_other_harnesses(sandbox):
    sb = sandbox(skill("project/.gemini/skills", "alpha"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["alpha"])})
    part, _ = split_prompt(rewritten(run(sb, spawn(sb, "rev")))["prompt"])
    briefing = HOOK.resolve(HOOK.HARNESSES["gemini"], HOOK.Machine(
        str(sb.project), dict(gemini_env(sb), HOME=str(sb.home))), "rev")
    assert [part] == HOOK.render_parts("rev", briefing.delivered, None)
    seal = PART_OPEN.match(part).group("seal")
    assert HOOK.HEADER.format(seal=seal) in part


@pytest.mark.parametrize("declared, missing", [(["alpha", "ghost"], "ghost"), (["ghost", "gone"], "ghost, gone"),
                                               (["tools:alpha"], "tools:alpha"), (["../x"], "../x")])
def test_deny_when_a_skill_is_missing(sandbox, declared, missing):
    sb = sandbox(skill("project/.gemini/skills", "alpha"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", declared)})
    result = run(sb, spawn(sb, "rev"))
    briefing = HOOK.resolve(HOOK.HARNESSES["gemini"], HOOK.Machine(
        str(sb.project), dict(gemini_env(sb), HOME=str(sb.home))), "rev")
    # The Briefing's own reason (issue 17), with the home folder shown as ~ as the hook shows it.
    assert result.data == {"decision": "deny", "reason": briefing.reason().replace(str(sb.home), "~")}, result
    assert result.data["reason"].startswith(
        "briefing: agent 'rev' references unknown skill(s): %s" % missing), result


def test_deny_when_the_briefing_is_over_the_cap(sandbox):
    big = "x" * 200000 + "\n"
    sb = sandbox({"home/.gemini/skills/b%d/SKILL.md" % i: skill_md("b%d" % i, big) for i in range(3)})
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["b0", "b1", "b2"])})
    result = run(sb, spawn(sb, "rev"))
    assert result.data["decision"] == "deny", result
    assert "more than the %d bytes Gemini CLI can deliver whole" % HOOK.GEMINI_LIMIT in result.data["reason"]


def test_a_large_briefing_under_the_cap_goes_whole(sandbox):
    bodies = {"b%d" % i: ("line %d of a long skill\n" % i) * 6000 for i in range(3)}
    sb = sandbox({"home/.gemini/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in bodies.items()})
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", sorted(bodies))})
    assert sum(len(b) for b in bodies.values()) > 300000
    assert briefed(run(sb, spawn(sb, "rev"))) == bodies


@pytest.mark.parametrize("tool_name, tool_input", [
    ("read_file", {"absolute_path": "/x"}),
    ("invoke_agent_x", {"agent_name": "rev", "prompt": "p"}),
    ("my_invoke_agent", {"agent_name": "rev", "prompt": "p"}),
    ("invoke_agent", {"agent_name": "plain", "prompt": "p"}),
    ("invoke_agent", {"agent_name": "no-such-agent", "prompt": "p"}),
    ("invoke_agent", {"agent_name": "codebase_investigator", "prompt": "p"}),
    ("invoke_agent", {"agent_name": None, "prompt": "p"}),
    ("invoke_agent", {"prompt": "p"}),
    ("invoke_agent", "not a dict"),
])
def test_everything_else_passes_untouched_printing_nothing(sandbox, tool_name, tool_input):
    sb = sandbox(skill("project/.gemini/skills", "alpha"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["ghost"]),
              "home/.gemini/agents/plain.md": gemini_agent("plain")})
    result = run(sb, payload(sb, tool_name=tool_name, tool_input=tool_input))
    assert result.out == "" and result.err == "", result


def test_frontmatter_declaration_is_rejected_by_gemini_and_said_so(sandbox):
    """Gemini CLI drops an agent with an unknown frontmatter key (facts §2): the doctor says why."""
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", extra="skills:\n  - a")})
    doctor = sb.doctor("--harness", "gemini", env=gemini_env(sb))
    assert doctor.rc == 1, doctor
    assert "Gemini CLI rejects an agent whose frontmatter has a key it does not know" in doctor.out
    assert "<!-- briefing: skills = [" in doctor.out


def test_hook_never_writes_a_file(sandbox):
    sb = sandbox(skill("project/.gemini/skills", "alpha"))
    sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["alpha"])})
    ack(sb, "rev")
    before = sorted(p for p in sb.root.rglob("*"))
    run(sb, spawn(sb, "rev"))
    run(sb, payload(sb, "SessionStart", source="startup"))
    assert sorted(p for p in sb.root.rglob("*")) == before


# =========================================================================== 5. which harness

@pytest.mark.parametrize("env, expected", [
    ({"GEMINI_SESSION_ID": "g", "CLAUDE_PROJECT_DIR": "/p"}, "gemini"),
    ({"GEMINI_SESSION_ID": "g"}, "gemini"),
    ({"CLAUDE_PROJECT_DIR": "/p"}, "claude"),
    ({}, None),
])
def test_gemini_setting_claude_project_dir_is_still_gemini(env, expected):
    machine = HOOK.Machine("/tmp", dict(env, HOME="/nonexistent"))
    harness = HOOK.payload_harness({"hook_event_name": "SessionStart"}, machine, env)
    assert (harness.key if harness else None) == expected


def test_gemini_transcript_names_gemini(tmp_path):
    machine = HOOK.Machine(str(tmp_path), {"HOME": str(tmp_path)})
    data = {"transcript_path": str(tmp_path / ".gemini" / "tmp" / "p" / "chats" / "s.jsonl")}
    assert HOOK.payload_harness(data, machine, {}).key == "gemini"


# =========================================================================== 6. pre-flight and doctor

def test_preflight_at_session_start_lists_gemini_agents_only(sandbox):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["a", "ghost"]),
              "home/.gemini/agents/ok.md": gemini_agent("ok", ["a"]),
              "project/.claude/agents/c.md": "---\nname: c\ndescription: c\nbriefing:\n  skills: [gone]\n---\n"})
    result = run(sb, payload(sb, "SessionStart", source="startup"))
    assert set(result.data) == {"systemMessage"}, result
    message = result.system_message
    assert "Gemini CLI agent 'rev' (~/.gemini/agents/rev.md): references unknown skill(s): ghost" in message
    assert "'ok'" not in message and "'c'" not in message and "Claude" not in message


def test_preflight_says_when_a_declaring_project_agent_is_not_acknowledged(sandbox):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["a"])})
    message = run(sb, payload(sb, "SessionStart", source="startup")).system_message
    assert message and "has not been acknowledged" in message and "Subagent 'rev' not found" in message


def test_healthy_session_start_prints_nothing(sandbox):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["a"])})
    ack(sb, "rev")
    result = run(sb, payload(sb, "SessionStart", source="startup"))
    assert result.out == "" and result.err == "", result


@pytest.mark.parametrize("state, words", [
    ("never", "has not been acknowledged"),
    ("changed", "has changed since it was acknowledged"),
    ("acked", None),
])
def test_doctor_reports_acknowledgement(sandbox, state, words):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["a"])})
    if state != "never":
        ack(sb, "rev")
    if state == "changed":
        sb.write({"project/.gemini/agents/rev.md": gemini_agent("rev", ["a"], body="Edited.\n")})
    result = sb.doctor("--harness", "gemini", "--json", cwd=sb.project)
    data = json.loads(result.out)
    row, = data["agents"]
    assert result.rc == 0, result
    if words is None:
        assert row["status"] == "ok" and row["warnings"] == [], row
    else:
        assert row["status"] == "WARN", row
        assert words in row["warnings"][0] and "Start `gemini` in" in row["warnings"][0], row


def test_doctor_checks_the_extension_hooks_file(sandbox):
    sb = sandbox()
    result = sb.doctor("--harness", "gemini", "--json")
    check, = [c for c in json.loads(result.out)["checks"] if c["name"] == "gemini hooks.json"]
    assert check["status"] == "ok", check


@pytest.mark.parametrize("matcher, ok", [("^invoke_agent$", True), ("invoke_agent", False),
                                         ("*", False), (None, False), ("^(invoke_agent)$", True)])
def test_doctor_hooks_check_wants_an_anchored_matcher(tmp_path, matcher, ok):
    hooks = json.loads((EXT / "hooks" / "hooks.json").read_text())
    group = hooks["hooks"]["BeforeTool"][0]
    if matcher is None:
        group.pop("matcher")
    else:
        group["matcher"] = matcher
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (tmp_path / "gemini-extension.json").write_text((EXT / "gemini-extension.json").read_text())
    check = HOOK.gemini_hooks_check(str(tmp_path))
    assert (check["status"] == "ok") == ok, check


# =========================================================================== 7. packaging
# The extension is built, not linked (issue 28): gemini/ holds its manifest and hooks file, and
# scripts/build-gemini-extension puts them together with the hook, its package and skills/
# (tests/test_install.py builds it and runs it without the checkout).

def test_extension_manifest_and_hooks():
    manifest = json.loads((EXT / "gemini-extension.json").read_text())
    assert manifest["name"] == "briefing"
    hooks = json.loads((EXT / "hooks" / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == ["BeforeTool", "SessionStart"]
    assert [g.get("matcher") for g in hooks["BeforeTool"]] == ["^invoke_agent$"]
    for groups in hooks.values():
        handler, = [h for g in groups for h in g["hooks"]]
        command = handler["command"]
        # bash runs the POSIX half; PowerShell (Gemini CLI on Windows) the half after "#>".
        assert first_attempt(command) == ["python3", "-I", "-S", "-B", "${extensionPath}/hooks/briefing-preload"]
        assert command.startswith('set "\\" <#"; ') and "; #> " in command, command
        assert "'${extensionPath}' + '/hooks/briefing-preload'" in command.split("; #> ", 1)[1]
        assert handler["timeout"] >= 10000, "Gemini CLI's timeout is in milliseconds"


def test_extension_source_holds_no_link_and_no_copy():
    """Only what is Gemini CLI's own: the hook, its package and the skills come from the checkout at build."""
    files = sorted(str(p.relative_to(EXT)) for p in EXT.rglob("*"))
    assert files == ["gemini-extension.json", "hooks", "hooks/hooks.json"], files
    assert not any(p.is_symlink() for p in EXT.rglob("*"))


def test_claude_code_hooks_file_has_no_gemini_event():
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert "BeforeTool" not in hooks
    assert not re.search(r"extensionPath", (REPO / "hooks" / "hooks.json").read_text())


def test_doctor_show_prints_what_goes_in_front_of_the_prompt(sandbox):
    sb = sandbox(skill("home/.gemini/skills", "a"))
    sb.write({"home/.gemini/agents/rev.md": gemini_agent("rev", ["a"])})
    shown = sb.doctor("--harness", "gemini", "--show", "rev")
    assert shown.rc == 0, shown
    assert "=== gemini subagent: rev" in shown.out and "(in front of the spawn's prompt)" in shown.out
    part = shown.out[shown.out.index("<briefing "):].rsplit("\n", 1)[0]
    assert rebuild([part]).skills == {"a": body("a")}
