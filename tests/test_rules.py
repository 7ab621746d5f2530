"""Briefing rules: skills for agents nobody can edit (issue 13).

A rules file (``<project>/.briefing/rules.json``, ``$XDG_CONFIG_HOME/briefing/rules.json``)
maps agent names and globs to skills. Every guarantee a declaring agent has holds for
the agents a rule briefs: resolved where the harness resolves, deduplicated with the
agent's own and native skills, sized, guarded, aborted. What a subagent receives is
read back with ``framing.rebuild``.

Layout, following the issue:
  1 the format  2 matching  3 precedence and order  4 the same guarantees (dedup, guard,
  abort, size, --agent sessions, opt-out)  5 visible (doctor, --show, --json, pre-flight,
  audit)  6 a malformed rules file
"""
import json

import pytest

from conftest import PARTS, agent_md, load_hook, role_toml, skill_md, text_of
from framing import rebuild

HOOK = load_hook("briefing_preload_rules")

RULES = "project/.briefing/rules.json"
USER_RULES = "home/.config/briefing/rules.json"
PS = "project/.claude/skills/%s/SKILL.md"
CS = "project/.codex/skills/%s/SKILL.md"
PA = "project/.claude/agents/%s.md"
CR = "project/.codex/agents/%s.toml"
GMS = "project/.gemini/skills/%s/SKILL.md"


def rules(*entries, **top):
    """A rules file: each entry is (agents, skills) or (agents, skills, harness)."""
    out = []
    for entry in entries:
        rule = {"agents": entry[0], "skills": list(entry[1])}
        if len(entry) > 2:
            rule["harness"] = entry[2]
        out.append(rule)
    return json.dumps(dict({"rules": out}, **top), indent=2)


def skill(name, where=PS):
    return {where % name: skill_md(name, "BODY-OF-%s\n" % name)}


def skills(*names, where=PS):
    files = {}
    for name in names:
        files.update(skill(name, where))
    return files


def briefed(sb, agent, harness="claude", **fields):
    """The skills (name -> body) a spawn of ``agent`` starts with, and part 1's systemMessage."""
    if harness == "claude":
        results = sb.run_parts(sb.spawn(agent, **fields))
    else:
        results = [sb.run(sb.spawn(agent, "codex", **fields), args=("--part", 1))]
    contexts = [r.context for r in results if r.context]
    message = results[0].system_message
    if not contexts:
        return None, message
    got = rebuild(contexts)
    assert not got.aborted, results
    return got, message


def guard(sb, name, harness="claude"):
    if name is None:  # the spawn names no agent: the harness's default one starts
        payload = sb.guard("x", harness)
        payload["tool_input"].pop("subagent_type" if harness == "claude" else "agent_type")
        return sb.run(payload)
    return sb.run(sb.guard(name, harness))


# --------------------------------------------------------------------------------------------
# 1. The format: JSON, parsed with the standard library; errors name the line or the rule
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ('{"rules": []}', []),
    ('{"rules": [{"agents": "*", "skills": ["a", "b", "a"]}]}', [(("*",), ["a", "b"], None)]),
    ('{"rules": [{"agents": ["Explore", "Plan", "Explore"], "skills": "a"}]}', [(("Explore", "Plan"), ["a"], None)]),
    ('{"rules": [{"agents": "default", "skills": [], "harness": "codex"}]}', [(("default",), [], ("codex",))]),
    ('{"rules": [{"agents": "acme:*", "skills": ["acme:s"], "harness": ["claude", "codex"], '
     '"description": "why"}], "description": "team rules"}', [(("acme:*",), ["acme:s"], ("claude", "codex"))]),
    ('\n\n  {"rules": [{"agents": "x?", "skills": ["a"]}, {"agents": "y", "skills": []}]}  \n',
     [(("x?",), ["a"], None), (("y",), [], None)]),
])
def test_format_parses(text, want):
    got = [(r.patterns, r.skills, r.harnesses) for r in HOOK.parse_rules(text)]
    assert got == want


@pytest.mark.parametrize("text, says, line", [
    ('{"rules": [}', "not JSON", 1),
    ('{\n  "rules": [\n    {"agents": "*", "skills": ["a"],}\n  ]\n}', "not JSON", 3),
    ('[]', '"rules" list', 1),
    ('{"rule": []}', '"rules" list', 1),
    ('{"rules": [], "extra": 1}', "unknown key(s) 'extra'", None),
    ('{"rules": ["*"]}', "rules[0] must be an object", None),
    ('{"rules": [{"agents": "*"}]}', "rules[0] has no 'skills'", None),
    ('{"rules": [{"skills": ["a"]}]}', "rules[0] has no 'agents'", None),
    ('{"rules": [{"agents": "*", "skill": ["a"]}]}', "unknown key(s) 'skill'", None),
    ('{"rules": [{"agents": [], "skills": ["a"]}]}', "rules[0].agents must name at least one", None),
    ('{"rules": [{"agents": "*", "skills": [1]}]}', "rules[0].skills must be a name or a list", None),
    ('{"rules": [{"agents": "../x", "skills": ["a"]}]}', "is not an agent name or glob", None),
    ('{"rules": [{"agents": "a:b:c", "skills": ["a"]}]}', "is not an agent name or glob", None),
    ('{"rules": [{"agents": "*", "skills": ["a"], "harness": []}]}', "rules[0].harness must name", None),
    ('{"rules": [{"agents": "*", "skills": ["a"]}, {"agents": "x", "skills": {}}]}', "rules[1].skills", None),
])
def test_format_errors(text, says, line):
    with pytest.raises(HOOK.ParseError) as caught:
        HOOK.parse_rules(text)
    assert says in caught.value.message
    assert caught.value.line == line


# --------------------------------------------------------------------------------------------
# 2. Matching: exact names, globs, *, plugin agents, per harness
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, name, hit", [
    ("general-purpose", "general-purpose", True),
    ("general-purpose", "general-purposes", False),
    ("Explore", "explore", False),  # agent names are case-sensitive
    ("*", "general-purpose", True),
    ("*", "acme-tools:reviewer", True),  # * crosses the plugin colon
    ("acme-tools:*", "acme-tools:reviewer", True),
    ("acme-tools:*", "acme-tools", False),
    ("acme-tools:*", "other:reviewer", False),
    ("*:reviewer", "acme-tools:reviewer", True),
    ("*-purpose", "general-purpose", True),
    ("?xplore", "Explore", True),
    ("?xplore", "xplore", False),
    ("a*b*c", "aXbYc", True),
    ("a*b*c", "aXbYcZ", False),
    ("**", "", True),
    ("*a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", False),
])
def test_glob(pattern, name, hit):
    assert HOOK.glob_match(pattern, name) is hit


CLAUDE_BUILTINS = ["general-purpose", "Explore", "Plan"]


@pytest.mark.parametrize("pattern", ["general-purpose", "*", "general-*", "?eneral-purpose"])
def test_builtin_claude_agent_briefed_by_a_rule(sandbox, pattern):
    sb = sandbox(dict(skills("house-style"), **{RULES: rules((pattern, ["house-style"]))}))
    got, message = briefed(sb, "general-purpose")
    assert got.skills == {"house-style": "BODY-OF-house-style\n"}
    assert got.agent == "general-purpose"
    assert "from rule '%s' in " % pattern in message and ".briefing/rules.json: house-style" in message


@pytest.mark.parametrize("name, pattern, hit", [
    ("Explore", "general-purpose", False),
    ("Explore", "*", True),
    ("Plan", "P*", True),
    ("acme-tools:reviewer", "acme-tools:*", True),
    ("acme-tools:reviewer", "acme-tools:reviewer", True),
    ("acme-tools:reviewer", "other:*", False),
    ("acme-tools:reviewer", "*", True),
])
def test_matching(sandbox, name, pattern, hit):
    files = dict(skills("s"), **{RULES: rules((pattern, ["s"]))})
    if ":" in name:  # a plugin's agent: installed, enabled, its file declaring nothing
        root = "home/.claude/plugins/cache/mkt/acme-tools/1.0.0"
        files.update({
            root + "/.claude-plugin/plugin.json": json.dumps({"name": "acme-tools", "version": "1.0.0"}),
            root + "/agents/reviewer.md": agent_md("reviewer"),
            "home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {
                "acme-tools@mkt": [{"scope": "user", "installPath": "%s/" % "ROOT" + root}]}}),
            "home/.claude/settings.json": json.dumps({"enabledPlugins": {"acme-tools@mkt": True}})})
    sb = sandbox(files)
    if ":" in name:
        registry = sb.path("home/.claude/plugins/installed_plugins.json")
        registry.write_text(registry.read_text().replace("ROOT/", str(sb.root) + "/"))
    got, _ = briefed(sb, name)
    assert (got is not None and got.skills == {"s": "BODY-OF-s\n"}) is hit


@pytest.mark.parametrize("harness_field, claude, codex", [
    (None, True, True),
    ("claude", True, False),
    ("codex", False, True),
    (["codex", "claude"], True, True),
    ("copilot-someday", False, False),
])
def test_rule_per_harness(sandbox, harness_field, claude, codex):
    entry = ("*", ["s"]) if harness_field is None else ("*", ["s"], harness_field)
    sb = sandbox(dict(skills("s"), **dict(skills("s", where=CS), **{RULES: rules(entry)})))
    got, _ = briefed(sb, "general-purpose")
    assert (got is not None) is claude
    got, _ = briefed(sb, "default", "codex")
    assert (got is not None) is codex
    if codex:
        assert got.skills == {"s": "BODY-OF-s\n"}


def test_codex_skill_resolves_where_codex_looks(sandbox):
    """The same rule resolves each harness's own skill of that name, never the other's."""
    sb = sandbox({RULES: rules(("*", ["s"])),
                  PS % "s": skill_md("s", "CLAUDE-S\n"), CS % "s": skill_md("s", "CODEX-S\n")})
    assert briefed(sb, "Explore")[0].skills == {"s": "CLAUDE-S\n"}
    assert briefed(sb, "worker", "codex")[0].skills == {"s": "CODEX-S\n"}


def test_no_rule_means_no_output_for_builtins(sandbox):
    sb = sandbox(dict(skills("s"), **{RULES: rules(("Plan", ["s"]))}))
    for r in sb.run_parts(sb.spawn("general-purpose")):
        assert r.out == "", r
    assert guard(sb, "general-purpose").out == ""


# --------------------------------------------------------------------------------------------
# 3. Precedence and order
# --------------------------------------------------------------------------------------------

def test_project_rule_overrides_user_rule_for_the_same_pattern(sandbox):
    sb = sandbox(dict(skills("mine", "theirs", "extra"), **{
        RULES: rules(("*", ["mine"])),
        USER_RULES: rules(("*", ["theirs"]), ("Explore", ["extra"]))}))
    assert list(briefed(sb, "Explore")[0].skills) == ["mine", "extra"]
    assert list(briefed(sb, "Plan")[0].skills) == ["mine"]


def test_project_rule_with_no_skills_switches_a_user_rule_off(sandbox):
    sb = sandbox(dict(skills("theirs"), **{RULES: rules(("*", [])), USER_RULES: rules(("*", ["theirs"]))}))
    got, _ = briefed(sb, "Explore")
    assert got is None
    assert guard(sb, "Explore").out == ""


def test_same_pattern_other_harness_is_not_an_override(sandbox):
    sb = sandbox(dict(skills("mine", "theirs"), **{
        RULES: rules(("*", ["mine"], "codex")), USER_RULES: rules(("*", ["theirs"]))}))
    assert list(briefed(sb, "Explore")[0].skills) == ["theirs"]


def test_user_rules_follow_xdg_config_home(sandbox):
    sb = sandbox(dict(skills("s"), **{"xdg/briefing/rules.json": rules(("*", ["s"]))}))
    assert briefed(sb, "Explore")[0] is None
    sb.extra_env["XDG_CONFIG_HOME"] = str(sb.root / "xdg")
    assert list(briefed(sb, "Explore")[0].skills) == ["s"]


def test_order_own_then_project_rules_then_user_rules(sandbox):
    sb = sandbox(dict(skills("own", "p1", "p2", "u1", "shared"), **{
        PA % "rev": agent_md("rev", ["own", "shared"]),
        RULES: rules(("r*", ["p1", "shared"]), ("*", ["p2"])),
        USER_RULES: rules(("rev", ["u1", "p1"]))}))
    got, message = briefed(sb, "rev")
    assert got.order == ["own", "shared", "p1", "p2", "u1"]
    assert "from rule 'r*' in" in message and "from rule 'rev' in" in message


def test_nearer_project_folder_wins(sandbox):
    """Claude Code reads the project folders up to .git, nearest first: so do its rules."""
    sb = sandbox(dict(skills("near", "far"), **{
        "project/sub/.briefing/rules.json": rules(("*", ["near"])), RULES: rules(("*", ["far"]), ("Plan", ["far"]))}))
    (sb.project / "sub").mkdir(exist_ok=True)
    got, _ = briefed(sb, "Plan", cwd=str(sb.project / "sub"))
    # CLAUDE_PROJECT_DIR unset: the payload cwd is the project, and its folders go up to .git
    assert got.order == ["near", "far"]


# --------------------------------------------------------------------------------------------
# 4. The same guarantees
# --------------------------------------------------------------------------------------------

def test_dedup_with_own_skills(sandbox):
    sb = sandbox(dict(skills("a", "b"), **{PA % "rev": agent_md("rev", ["a"]),
                                           RULES: rules(("*", ["a", "b"]), ("rev", ["b", "a"]))}))
    got, _ = briefed(sb, "rev")
    assert got.order == ["a", "b"]


def test_never_twice_with_a_native_preload(sandbox):
    sb = sandbox(dict(skills("n", "r"), **{PA % "rev": agent_md("rev", native=["n"]),
                                           RULES: rules(("*", ["n", "r"]))}))
    got, message = briefed(sb, "rev")
    assert got.order == ["r"]  # Claude Code preloads n itself
    session = sb.run_parts(sb.payload("SessionStart", source="startup", agent_type="rev"))
    got = rebuild([r.context for r in session if r.context])
    assert sorted(got.skills) == ["n", "r"]  # --agent sessions: nothing preloads, each once


def test_agent_session_gets_its_rules(sandbox):
    sb = sandbox(dict(skills("s"), **{RULES: rules(("general-purpose", ["s"]))}))
    results = sb.run_parts(sb.payload("SessionStart", source="startup", agent_type="general-purpose"))
    got = rebuild([r.context for r in results if r.context])
    assert got.skills == {"s": "BODY-OF-s\n"}
    assert results[0].data["hookSpecificOutput"]["hookEventName"] == "SessionStart"


@pytest.mark.parametrize("harness, name", [("claude", "general-purpose"), ("claude", None),
                                           ("codex", "default"), ("codex", None), ("codex", "worker")])
def test_guard_refuses_a_builtin_whose_rule_skill_is_missing(sandbox, harness, name):
    sb = sandbox({RULES: rules(("*", ["gone"]))})
    r = guard(sb, name, harness)
    assert r.decision == "deny", r
    shown = name or ("general-purpose" if harness == "claude" else "default")
    assert r.reason.startswith("briefing: agent '%s' references unknown skill(s): gone" % shown), r
    assert "rule '*' in %s" % sb.path(RULES) in r.reason, r
    assert "updatedInput" not in r.out


def test_guard_names_both_the_declaration_and_the_rule(sandbox):
    sb = sandbox({PA % "rev": agent_md("rev", ["own-gone"]), USER_RULES: rules(("rev", ["rule-gone"]))})
    r = guard(sb, "rev")
    assert r.decision == "deny"
    assert "unknown skill(s): own-gone, rule-gone" in r.reason
    assert "the declaration in ~/.claude/agents" not in r.reason
    assert "/project/.claude/agents/rev.md or rule 'rev' in ~/.config/briefing/rules.json (rule-gone)" in r.reason


def test_guard_passes_when_rule_skills_exist(sandbox):
    sb = sandbox(dict(skills("s"), **{RULES: rules(("*", ["s"]))}))
    assert guard(sb, "Explore").out == ""
    assert guard(sb, None).out == ""


@pytest.mark.parametrize("harness, name", [("claude", "Explore"), ("codex", "default")])
def test_abort_when_a_rule_skill_is_missing_at_start(sandbox, harness, name):
    sb = sandbox(dict(skills("ok"), **dict(skills("ok", where=CS), **{RULES: rules(("*", ["ok", "gone"]))})))
    payload = sb.spawn(name, harness)
    r = sb.run(payload, args=("--part", 1))
    assert '<briefing agent="%s" status="abort">' % name in r.context, r
    assert "<skill" not in r.context and "BODY-OF-ok" not in r.context
    assert "rule '*' in" in r.context
    assert r.system_message.startswith("briefing: NOT briefed, told to abort: agent '%s'" % name)
    for part in range(2, PARTS + 1):
        assert sb.run(payload, args=("--part", part)).out == ""


def test_rule_skills_count_towards_the_size_limit(sandbox):
    big = {PS % n: skill_md(n, text_of(n, 30000)) for n in ("b1", "b2", "b3")}
    sb = sandbox(dict(big, **{RULES: rules(("*", ["b1", "b2", "b3"]))}))
    r = guard(sb, "general-purpose")
    assert r.decision == "deny" and "needs a briefing of" in r.reason, r
    assert "rule '*' in" in r.reason
    r = sb.run(sb.spawn("general-purpose"), args=("--part", 1))
    assert 'status="abort"' in r.context


@pytest.mark.parametrize("extra, wildcard", [
    ("briefing:\n  skills: [own]\n  wildcard-rules: false", False),
    ("briefing:\n  wildcard-rules: false", False),
    ("briefing:\n  skills: [own]\n  wildcard-rules: true", True),
    ("briefing:\n  skills: [own]", True),
])
def test_claude_agent_opts_out_of_wildcard_rules(sandbox, extra, wildcard):
    agent = "---\nname: rev\ndescription: d\n%s\n---\nbody\n" % extra
    sb = sandbox(dict(skills("own", "star", "exact"), **{
        PA % "rev": agent, RULES: rules(("*", ["star"]), ("r?v", ["star"]), ("rev", ["exact"]))}))
    got, _ = briefed(sb, "rev")
    want = [s for s in ["own"] if "skills" in extra] + (["star"] if wildcard else []) + ["exact"]
    assert got.order == want


@pytest.mark.parametrize("comment, wildcard", [
    ("# briefing: wildcard-rules = false", False),
    ("# briefing: wildcard-rules = false  # our own conventions only", False),
    ("# briefing: wildcard-rules = true", True),
    ("", True),
])
def test_codex_role_opts_out_of_wildcard_rules(sandbox, comment, wildcard):
    sb = sandbox(dict(skills("own", "star", "exact", where=CS), **{
        CR % "rev": comment + "\n" + role_toml("rev", ["own"]),
        RULES: rules(("*", ["star"]), ("rev", ["exact"]))}))
    got, _ = briefed(sb, "rev", "codex")
    assert got.order == ["own"] + (["star"] if wildcard else []) + ["exact"]


@pytest.mark.parametrize("text", ["---\nname: rev\nbriefing:\n  wildcard-rules: nope\n---\n",
                                  "---\nname: rev\nbriefing:\n  wildcard-rules: 'false'\n---\n"])
def test_opt_out_key_must_be_a_boolean(text):
    with pytest.raises(HOOK.ParseError) as caught:
        HOOK.parse_frontmatter(text)
    assert "wildcard-rules must be true or false" in caught.value.message
    assert caught.value.line == 4


def test_codex_opt_out_comment_must_be_a_boolean():
    with pytest.raises(HOOK.ParseError):
        HOOK.parse_wildcard_comment('# briefing: wildcard-rules = no\nname = "r"\n')
    assert HOOK.parse_wildcard_comment('x = """\n# briefing: wildcard-rules = false\n"""\n') is None


# --------------------------------------------------------------------------------------------
# 5. Visible: doctor, --show, --json, pre-flight
# --------------------------------------------------------------------------------------------

def test_doctor_lists_rules_their_skills_and_agents(sandbox):
    sb = sandbox(dict(skills("s", "own"), **dict(skills("s", where=CS), **skills("s", where=GMS), **{
        PA % "rev": agent_md("rev", ["own"]), PA % "plain": agent_md("plain"),
        PA % "solo": "---\nname: solo\nbriefing:\n  wildcard-rules: false\n---\n",
        CR % "coder": role_toml("coder"),
        RULES: rules(("*", ["s"]), ("Plan", ["s"], "claude"))})))
    r = sb.doctor("--cwd", str(sb.project), "--json")
    assert r.rc == 0, r
    data = json.loads(r.out)
    star = data["rules"][0]
    assert star["agents"] == ["*"] and star["file"] == str(sb.path(RULES)) and star["status"] == "ok"
    assert star["harnesses"]["claude"]["skills"][0]["path"] == str(sb.path(PS % "s"))
    assert star["harnesses"]["codex"]["skills"][0]["path"] == str(sb.path(CS % "s"))
    claude = star["harnesses"]["claude"]["applies_to"]
    assert {"rev", "plain", "general-purpose", "Explore", "Plan"} <= set(claude)
    assert "solo" not in claude  # opted out of wildcard rules
    assert {"coder", "default", "explorer", "worker"} <= set(star["harnesses"]["codex"]["applies_to"])
    assert list(data["rules"][1]["harnesses"]) == ["claude"]
    rows = {(a["harness"], a["agent"]): a for a in data["agents"]}
    assert rows[("claude", "general-purpose")]["file"] is None
    assert [s["name"] for s in rows[("claude", "rev")]["skills"]] == ["own", "s"]
    assert rows[("claude", "rev")]["skills"][1]["rule"]["agents"] == ["*"]
    assert ("claude", "solo") not in rows
    text = sb.doctor("--cwd", str(sb.project))
    assert "ok    rule   '*' -> s  (%s #1, every harness)" % sb.path(RULES) in text.out, text
    assert "claude   applies to: plain, rev, Explore, Plan, claude, fork, general-purpose, statusline-setup" \
        in text.out, text
    assert "(built-in: no file" not in text.out  # briefed fine: the rule's line says so


def test_doctor_shows_a_rule_with_several_agents_once_and_its_overrides(sandbox):
    sb = sandbox(dict(skills("s", "t"), **{RULES: rules(("Plan", ["t"])),
                                           USER_RULES: rules((["Explore", "Plan"], ["s"]))}))
    r = sb.doctor("--cwd", str(sb.project), "--harness", "claude")
    assert r.rc == 0, r
    assert "rule   'Explore', 'Plan' -> s  (~/.config/briefing/rules.json #1, every harness)" in r.out, r
    assert "'Plan' is overridden by rule #1 of %s" % sb.path(RULES) in r.out, r
    assert "claude   applies to: Explore\n" in r.out, r
    assert briefed(sb, "Plan")[0].order == ["t"]
    assert briefed(sb, "Explore")[0].order == ["s"]


def test_doctor_fails_a_rule_with_a_missing_skill(sandbox):
    sb = sandbox({RULES: rules(("general-purpose", ["gone"]))})
    r = sb.doctor("--cwd", str(sb.project), "--harness", "claude")
    assert r.rc == 1, r
    assert "FAIL  rule   'general-purpose' -> gone" in r.out
    assert "FAIL  claude general-purpose  (built-in: no file, briefed by rules)" in r.out
    assert "skill 'gone': unknown skill: install it where Claude Code looks" in r.out
    assert "remove it from rule 'general-purpose' in %s" % sb.path(RULES) in r.out


def test_doctor_show_builtin(sandbox):
    sb = sandbox(dict(skills("s"), **{RULES: rules(("*", ["s"]), ("general-purpose", ["t"]))}, **skills("t")))
    r = sb.doctor("--cwd", str(sb.project), "--show", "general-purpose", "--harness", "claude")
    assert r.rc == 0, r
    assert "=== claude subagent: general-purpose (built-in, no file) [ok]" in r.out
    assert "rule '*' (%s #1): s" % sb.path(RULES) in r.out
    assert "BODY-OF-s" in r.out and "BODY-OF-t" in r.out
    data = json.loads(sb.doctor("--cwd", str(sb.project), "--show", "general-purpose", "--json").out)
    show = data["shows"][0]
    assert show["file"] is None and show["skills"] == ["s", "t"]
    assert [(x["agents"], x["skills"]) for x in show["rules"]] == [(["*"], ["s"]), (["general-purpose"], ["t"])]
    got = rebuild([p["text"] for p in show["parts"]])
    assert got.skills == {"s": "BODY-OF-s\n", "t": "BODY-OF-t\n"}


def test_preflight_reports_a_rule_naming_a_missing_skill(sandbox):
    sb = sandbox(dict(skills("ok"), **{RULES: rules(("*", ["ok", "gone"]))}))
    r = sb.run(sb.payload("SessionStart", source="startup"), args=("--part", 1))
    assert r.context is None
    message = r.system_message
    assert "rule '*' in %s: Claude Code: skill 'gone': unknown skill" % sb.path(RULES) in message, r
    assert message.count("'gone'") == 1, message  # once for the rule, not once per agent


# --------------------------------------------------------------------------------------------
# 6. A malformed rules file
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ['{"rules": [', '{"rules": [{"agents": "*"}]}', b"\xff\xfe", "[1]"])
def test_malformed_rules_file(sandbox, text):
    sb = sandbox(dict(skills("own", "ruled", "user-s"), **{
        RULES: text, USER_RULES: rules(("*", ["user-s"])),
        PA % "rev": agent_md("rev", ["own"]), PA % "broke": agent_md("broke", ["gone"])}))
    # declaring agents: briefed and guarded as before; the readable user file still applies
    got, message = briefed(sb, "rev")
    assert got.order == ["own", "user-s"]
    assert "the rules file %s cannot be used" % sb.path(RULES) in message
    assert guard(sb, "broke").decision == "deny"
    assert guard(sb, "rev").out == ""
    # an agent only the broken file could brief starts unbriefed by it, and the human is told
    got, message = briefed(sb, "Explore")
    assert list(got.skills) == ["user-s"]
    sb.path(USER_RULES).unlink()
    spawn = sb.run(sb.spawn("Explore"), args=("--part", 1))
    assert spawn.context is None and "cannot be used" in spawn.system_message, spawn
    assert "rules file %s" % sb.path(RULES) in guard(sb, "Explore").err
    # doctor FAIL, pre-flight line
    doctor = sb.doctor("--cwd", str(sb.project))
    assert doctor.rc == 1 and "FAIL  check  rules: %s" % sb.path(RULES) in doctor.out, doctor
    pre = sb.run(sb.payload("SessionStart", source="startup"), args=("--part", 1))
    assert "none of its rules applies until it is fixed" in pre.system_message


def test_rules_file_that_is_a_fifo_or_folder(sandbox):
    from conftest import DIR, Fifo
    for entry in (Fifo(), DIR):
        sb = sandbox({RULES: entry, PA % "rev": agent_md("rev", ["own"]), **skills("own")})
        got, message = briefed(sb, "rev")
        assert got.order == ["own"]
        assert "cannot be used" in message
        sb.path(RULES).unlink() if entry is not DIR else sb.path(RULES).rmdir()


# --------------------------------------------------------------------------------------------
# Every harness: Copilot CLI gets the rules through its own record, with no code of its own
# --------------------------------------------------------------------------------------------

GS = "project/.github/skills/%s/SKILL.md"


@pytest.mark.parametrize("name, pattern", [("explore", "*"), ("general-purpose", "general-purpose"),
                                           ("code-review", "code-*")])
def test_copilot_builtin_briefed_by_a_rule(sandbox, name, pattern):
    sb = sandbox(dict(skills("s", where=GS), **{RULES: rules((pattern, ["s"]), ("x", ["nope"]))}))
    env = sb.copilot_env()
    results = sb.run_parts(sb.spawn(name, "copilot"), env=env)
    assert all(r.out == "" for r in results[1:]) and results[0].context is None, results
    got = rebuild([results[0].flat_context])
    assert got.skills == {"s": "BODY-OF-s\n"}
    assert "from rule '%s' in" % pattern in results[0].system_message
    assert sb.run(sb.guard(name, "copilot"), env=env).out == ""


def test_copilot_guard_refuses_when_a_rule_skill_is_missing(sandbox):
    sb = sandbox({RULES: rules(("*", ["gone"], "copilot"))})
    env = sb.copilot_env()
    r = sb.run(sb.guard("explore", "copilot"), env=env)
    assert r.decision == "deny", r
    assert "references unknown skill(s): gone" in r.reason and "rule '*' in" in r.reason
    # limited to Copilot: the same built-in name under Claude Code is not touched
    assert sb.run(sb.guard("general-purpose")).out == ""


# Gemini CLI: no SubagentStart; the BeforeTool guard puts the briefing in front of the prompt.

def gemini_run(sb, agent_name, files_env=None):
    tool_input = {"agent_name": agent_name, "prompt": "ORIGINAL PROMPT"}
    data = {"session_id": "g-1", "cwd": str(sb.project), "hook_event_name": "BeforeTool",
            "transcript_path": str(sb.home / ".gemini" / "tmp" / "project" / "chats" / "s.jsonl"),
            "tool_name": "invoke_agent", "tool_input": tool_input}
    env = {"GEMINI_SESSION_ID": "g-1", "GEMINI_PROJECT_DIR": str(sb.project), "GEMINI_CWD": str(sb.project),
           "CLAUDE_PROJECT_DIR": str(sb.project)}
    return sb.run(data, env=env)


GMS = "project/.gemini/skills/%s/SKILL.md"


@pytest.mark.parametrize("name, pattern", [("generalist", "*"), ("codebase_investigator", "codebase_*")])
def test_gemini_builtin_briefed_by_a_rule(sandbox, name, pattern):
    sb = sandbox(dict(skills("s", where=GMS), **{RULES: rules((pattern, ["s"]))}))
    r = gemini_run(sb, name)
    prompt = r.data["hookSpecificOutput"]["tool_input"]["prompt"]
    assert prompt.endswith("\n\nORIGINAL PROMPT"), r
    got = rebuild([prompt[:-len("\n\nORIGINAL PROMPT")]])
    assert got.skills == {"s": "BODY-OF-s\n"}


def test_gemini_guard_refuses_when_a_rule_skill_is_missing(sandbox):
    sb = sandbox({RULES: rules(("generalist", ["gone"], "gemini"))})
    r = gemini_run(sb, "generalist")
    assert r.data["decision"] == "deny", r
    assert "references unknown skill(s): gone" in r.data["reason"] and "rule 'generalist' in" in r.data["reason"]


@pytest.mark.parametrize("comment, wildcard", [("<!-- briefing: wildcard-rules = false -->\n", False),
                                               ("```\n<!-- briefing: wildcard-rules = false -->\n```\n", True),
                                               ("", True)])
def test_gemini_agent_opts_out_of_wildcard_rules(comment, wildcard):
    text = "---\nname: g\ndescription: d\n---\nbody\n" + comment
    assert (HOOK.parse_wildcard_html_comment(text) is not False) is wildcard


# --------------------------------------------------------------------------------------------
# The bundled example: built-ins briefed by examples/rules/.briefing/rules.json
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("harness, agent", [("claude", "general-purpose"), ("codex", "worker"),
                                            ("copilot", "explore"), ("gemini", "generalist")])
def test_bundled_rules_example(sandbox, harness, agent):
    import shutil
    from conftest import REPO
    sb = sandbox()
    # Where a user puts it: inside this checkout, which is a plugin itself, Codex names the
    # example's skill briefing:house-rules (the nearest manifest above it, issue 32).
    example = sb.project / "rules-example"
    shutil.copytree(str(REPO / "examples" / "rules"), str(example))
    r = sb.doctor("--cwd", str(example), "--show", agent, "--harness", harness, "--json")
    assert r.rc == 0, r
    show = json.loads(r.out)["shows"][0]
    assert show["file"] is None and show["skills"] == ["house-rules"]
    assert "marrowfat-beacon-2309" in rebuild([p["text"] for p in show["parts"]]).skills["house-rules"]
    r = sb.doctor("--cwd", str(example), "--show", "statusline-setup", "--harness", "claude")
    assert r.rc == 1 and "no rule applies" in r.err, r


@pytest.mark.parametrize("agent, skills, files", [
    ("Explore", ["house-rules"], ["CLAUDE.md"]),  # skips CLAUDE.md: the rule gives it
    ("Plan", ["house-rules", "plan-checklist"], ["CLAUDE.md"]),  # and a private skill
    ("general-purpose", ["house-rules"], []),  # Claude Code loads CLAUDE.md itself: not twice
])
def test_bundled_rules_example_files_and_private_skill(sandbox, agent, skills, files):
    import shutil
    from conftest import REPO
    sb = sandbox()
    example = sb.project / "rules-example"
    shutil.copytree(str(REPO / "examples" / "rules"), str(example))
    r = sb.doctor("--cwd", str(example), "--show", agent, "--harness", "claude", "--json")
    assert r.rc == 0, r
    show = json.loads(r.out)["shows"][0]
    assert (show["skills"], show["files"]) == (skills, files), show
    got = rebuild([p["text"] for p in show["parts"]])
    assert ("lantern-quarry-5521" in got.files.get("CLAUDE.md", "")) == bool(files), got.files
    assert ("saffron-ledger-7730" in got.skills.get("plan-checklist", "")) == (agent == "Plan")
    origins = {d["name"]: d["origin"] for d in show["declared"]}
    assert origins.get("plan-checklist", "private") == "private", origins


def test_absurdly_nested_rules_file_is_a_parse_error():
    # Read at any depth (issue 36: a loop takes over where the C scanner stops), then refused for its shape.
    with pytest.raises(HOOK.ParseError) as caught:
        HOOK.parse_rules('{"rules": ' + "[" * 100000 + "]" * 100000 + "}")
    assert "rules[0] must be an object" in caught.value.message
    with pytest.raises(HOOK.ParseError) as caught:
        HOOK.parse_rules('{"rules": ' + "[" * 100000 + "}")
    assert "not JSON" in caught.value.message
