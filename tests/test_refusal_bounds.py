"""Refusals stay small, however many skills are missing (issue 17).

Every refusal text (the guard's deny reason, the SubagentStart abort
instruction and its systemMessage, the SessionStart pre-flight, a
``claude --agent`` session's abort) names at most ``REFUSAL_NAMES`` skills, in
declaration order, then how many more there are and that ``briefing-doctor
--show AGENT`` lists them all. Measured in UTF-8 bytes, which are never fewer
than characters however a harness counts them:

- a deny reason stays under 2,000 (Claude Code hands it to the *parent* model
  as the tool result, facts/claude-code.md §3.4);
- every hook output (all its strings together) stays under 10,000, the cap of
  one Claude Code output (§3.3), so an abort arrives as written.

Claude Code, Codex and Copilot CLI go through the same table: a harness gets the
bound from ``Briefing.listed`` without code of its own.

The table runs 1, 10, 100 and 5,000 missing skills with ordinary names, and
the longest names ``valid_skill_name`` admits (``plugin:skill``, 255
characters each side, ASCII and 4-byte characters) in an agent file whose own
name and path are as long as they get; then every cause of refusal. The doctor
keeps listing everything.
"""
import json
import re

import pytest

from conftest import DIR, agent_md, load_hook, skill_md

HOOK = load_hook()
SHOWN = HOOK.REFUSAL_NAMES
DENY_LIMIT = 2000  # the bound for what the parent model receives
OUTPUT_LIMIT = 10000  # one Claude Code hook output (facts/claude-code.md §3.3)
MAX_NAME = 255  # valid_skill_name: a part of a name is at most this many characters

WIDE = "\U0001d530"  # MATHEMATICAL FRAKTUR SMALL S: printable, 4 UTF-8 bytes, 2 UTF-16 units


def plain(i):
    return "gone-%04d" % i


def longest_ascii(i):
    return ("%04d" % i).ljust(MAX_NAME, "p") + ":" + "s" * MAX_NAME


def longest_wide(i):
    return "%04d" % i + WIDE * (MAX_NAME - 4) + ":" + WIDE * MAX_NAME


def head(name):
    """What identifies a name in a refusal: one over SHOWN_NAME bytes is shown by its head."""
    return name.encode("utf-8")[:48].decode("utf-8", "ignore")


def most(name):
    """How many declarations of this length fit in an agent file the hook still reads (1 MiB)."""
    return (HOOK.MAX_FILE_BYTES - 4096) // (len(name(0).encode("utf-8")) + 8)


# (id, skill name per index, counts, agent name, agent file below the agents/ folder)
DEEP = "d" * 200 + "/" + "e" * 200 + "/"
STYLES = [
    ("plain", plain, (1, 10, 100, 5000), "many", ""),
    ("longest-ascii", longest_ascii, (1, 10, 100, most(longest_ascii)), "a" * MAX_NAME, DEEP),
    ("longest-wide", longest_wide, (1, 10, 100, most(longest_wide)), WIDE * MAX_NAME, DEEP),
]
CASES = [pytest.param(style, name, n, agent, deep, id="%s-%d" % (style, n))
         for style, name, counts, agent, deep in STYLES for n in counts]


def utf8(text):
    return len(text.encode("utf-8"))


def strings(value):
    """Every string in a hook output: what the harness measures, field by field."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def write_agent(sb, harness, agent, skills, deep=""):
    if harness in ("claude", "copilot"):
        # Copilot CLI reads ~/.copilot/agents/** (copilot-cli.md fact 2)
        path = ("project/.claude/agents/%slong.md" if harness == "claude"
                else "home/.copilot/agents/%slong.md") % deep
        sb.write({path: agent_md(agent, skills)})
    else:
        path = "project/.codex/agents/%slong.toml" % deep
        lines = ["# briefing: skills = [%s]" % ", ".join(json.dumps(s, ensure_ascii=False) for s in skills),
                 "name = %s" % json.dumps(agent, ensure_ascii=False), 'description = "d"',
                 'developer_instructions = "x"']
        sb.write({path: "\n".join(lines) + "\n"})
    assert utf8((sb.root / path).read_text("utf-8")) < HOOK.MAX_FILE_BYTES
    return path


def check_text(text, names, agent, limit, what):
    """``text`` is within ``limit`` and names the first SHOWN of ``names`` in order, then the count."""
    assert utf8(text) < limit, (what, utf8(text), limit, text[:300])
    assert "\n" not in text or what in ("abort", "pre-flight", "systemMessage"), (what, text[:300])
    at = 0
    for name in names[:SHOWN]:
        found = text.find(head(name), at)
        assert found >= 0, (what, "does not name %r (in order)" % head(name), text[:500])
        at = found + len(head(name))
    if len(names) > SHOWN:
        assert head(names[SHOWN]) not in text, (what, text[:500])
        more = "and %d more (`briefing-doctor --show " % (len(names) - SHOWN)
        assert more in text, (what, more, text[-500:])
        assert "--show %s" % head(agent) in text, (what, text[-500:])
    else:
        assert "more (`briefing-doctor" not in text, (what, text[-500:])


def check_output(result, what):
    """One hook output: all its strings together under the cap; returns the parsed object."""
    data = result.data
    assert data is not None, (what, result)
    total = sum(utf8(s) for s in strings(data))
    assert total < OUTPUT_LIMIT, (what, total)
    if result.out.isascii() and not any(not s.isascii() for s in strings(data)):
        assert len(result.out) < OUTPUT_LIMIT, (what, len(result.out))
    return data


def one_output(results, what):
    spoken = [r for r in results if r.out.strip()]
    assert len(spoken) == 1, (what, [r.out[:200] for r in spoken])
    return check_output(spoken[0], what)


# ------------------------------------------------------------------------- every text, every event

@pytest.mark.parametrize("harness", ["claude", "codex", "copilot"])
@pytest.mark.parametrize("style, name, n, agent, deep", CASES)
def test_every_refusal_text_stays_bounded(sandbox, harness, style, name, n, agent, deep):
    names = [name(i) for i in range(n)]
    sb = sandbox()
    write_agent(sb, harness, agent, names, deep)
    env = sb.copilot_env() if harness == "copilot" else None
    startup = "new" if harness == "copilot" else "startup"  # copilot-cli.md fact 13

    guard = check_output(sb.run(sb.guard(agent, harness), env=env), "guard")
    reason = guard["hookSpecificOutput"]["permissionDecisionReason"]
    assert guard["hookSpecificOutput"]["permissionDecision"] == "deny", guard
    assert reason.startswith("briefing: agent '%s" % head(agent)), reason[:300]
    check_text(reason, names, agent, DENY_LIMIT, "deny reason")

    start = one_output(sb.run_parts(sb.spawn(agent, harness), env=env), "SubagentStart")
    abort = start.get("hookSpecificOutput", start)["additionalContext"]  # Copilot's is flat (fact 9)
    check_text(abort, names, agent, OUTPUT_LIMIT, "abort")
    assert 'status="abort"' in abort
    check_text(start["systemMessage"], names, agent, OUTPUT_LIMIT, "systemMessage")

    preflight = one_output(sb.run_parts(sb.payload("SessionStart", harness, source=startup), env=env),
                           "pre-flight")
    assert set(preflight) == {"systemMessage"}, preflight
    check_text(preflight["systemMessage"], names, agent, OUTPUT_LIMIT, "pre-flight")

    if harness == "claude":  # `claude --agent NAME`: the session's abort, with the pre-flight on part 1
        session = one_output(sb.run_parts(sb.payload("SessionStart", source="startup", agent_type=agent)),
                             "--agent session")
        assert session["hookSpecificOutput"]["hookEventName"] == "SessionStart", session
        check_text(session["hookSpecificOutput"]["additionalContext"], names, agent, OUTPUT_LIMIT, "abort")
        check_text(session["systemMessage"], names, agent, OUTPUT_LIMIT, "systemMessage")


# ------------------------------------------------------------------------- every cause of refusal

PS = "project/.claude/skills/%s/SKILL.md"
INSTALLED = "home/.claude/plugins/installed_plugins.json"


def unknown(names):
    return {}


def unreadable(names):  # a folder where SKILL.md should be: "SKILL.md … is not a regular file"
    return {PS % name: DIR for name in names}


def turned_off(names):
    """Every skill in an installed plugin that settings turn off: Claude Code loads none of them."""
    root = "home/.claude/plugins/cache/m/off/1.0.0"
    files = {root + "/.claude-plugin/plugin.json": json.dumps({"name": "off", "version": "1.0.0"})}
    for name in names:
        files["%s/skills/%s/SKILL.md" % (root, name.split(":", 1)[1])] = skill_md(name, "OFF BODY\n")
    files[INSTALLED] = json.dumps({"version": 2, "plugins": {"off@m": [{
        "scope": "user", "installPath": "<root>/" + root, "version": "1.0.0"}]}})
    files["home/.claude/settings.json"] = json.dumps({"enabledPlugins": {"off@m": False}})
    return files


def too_large(names):
    each = 100000 // len(names) + 1  # together over the 64 KiB that PARTS parts carry
    return {PS % name: skill_md(name, "x" * each) for name in names}


CAUSES = [
    # id            skill name per index                      files
    ("unknown",     plain,                                     unknown),
    ("invalid",     lambda i: "bad/%04d" % i + "/x" * 50,      unknown),
    ("unreadable",  plain,                                     unreadable),
    ("turned-off",  lambda i: "off:%s" % plain(i),             turned_off),
    ("too-large",   plain,                                     too_large),
]


@pytest.mark.parametrize("n", [1, 10, 100, 5000])
@pytest.mark.parametrize("cause, name, files", CAUSES, ids=[c[0] for c in CAUSES])
def test_every_cause_is_bounded_the_same_way(sandbox, cause, name, files, n):
    names = [name(i) for i in range(n)]
    sb = sandbox()
    made = files(names)
    if INSTALLED in made:
        made[INSTALLED] = made[INSTALLED].replace("<root>", str(sb.root))
    sb.write(made)
    write_agent(sb, "claude", "many", names)

    guard = check_output(sb.run(sb.guard("many")), "guard")["hookSpecificOutput"]
    assert guard["permissionDecision"] == "deny", guard
    check_text(guard["permissionDecisionReason"], names, "many", DENY_LIMIT, "deny reason")
    if cause == "too-large":
        assert "needs a briefing of" in guard["permissionDecisionReason"], guard
    start = one_output(sb.run_parts(sb.spawn("many")), "SubagentStart")
    check_text(start["hookSpecificOutput"]["additionalContext"], names, "many", OUTPUT_LIMIT, "abort")
    check_text(start["systemMessage"], names, "many", OUTPUT_LIMIT, "systemMessage")
    preflight = one_output(sb.run_parts(sb.payload("SessionStart", source="startup")), "pre-flight")
    check_text(preflight["systemMessage"], names, "many", OUTPUT_LIMIT, "pre-flight")


# ------------------------------------------------------------------------- the doctor lists everything

@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_the_doctor_lists_every_missing_skill(sandbox, harness):
    names = [plain(i) for i in range(300)]
    sb = sandbox()
    write_agent(sb, harness, "many", names)
    for args in ((), ("--show", "many")):
        result = sb.doctor(*args)
        assert result.rc == 1, result
        listed = set(re.findall(r"gone-\d{4}", result.out))
        assert listed == set(names), (args, sorted(set(names) - listed)[:5], result.out[:500])
    show = json.loads(sb.doctor("--show", "many", "--json").out)["shows"][0]
    assert len(show["problems"]) == len(names) and all(
        name in problem for name, problem in zip(names, show["problems"])), show["problems"][:3]
    reason = show["reason"]  # the refusal as the guard gives it: bounded, and sends here
    assert utf8(reason) < DENY_LIMIT and "and %d more" % (len(names) - SHOWN) in reason, reason


# ------------------------------------------------------------------------- the pre-flight

def test_preflight_of_many_broken_agents_stays_one_bounded_message(sandbox):
    sb = sandbox()
    for k in range(30):
        sb.write({"project/.claude/agents/%02d/long.md" % k: agent_md(
            "a%02d-" % k + "a" * 250, [longest_ascii(i) for i in range(50)])})
    message = one_output(sb.run_parts(sb.payload("SessionStart", source="startup")),
                         "pre-flight")["systemMessage"]
    assert utf8(message) < HOOK.PREFLIGHT_BUDGET + 500, utf8(message)
    more = re.search(r"\u2026 and (\d+) more \(run briefing-doctor", message)
    named = sum(1 for k in range(30) if "a%02d-" % k in message)
    assert more and named >= 1 and named + int(more.group(1)) == 30, (named, message[-300:])


# ------------------------------------------------------------------------- skills that rules add

@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_skills_from_rules_are_bounded_too(sandbox, harness):
    """The longest names in a deep file, plus rules (a long pattern list each, in both rules
    files) that add more missing skills with the longest names: the fix names the rule too."""
    agent = WIDE * MAX_NAME
    names = [longest_wide(i) for i in range(100)]
    sb = sandbox()
    write_agent(sb, harness, agent, names, DEEP)
    patterns = [agent] + ["x%03d" % i + WIDE * 200 for i in range(50)]
    for k, where in enumerate(("home/.config/briefing/rules.json", "project/.briefing/rules.json")):
        sb.write({where: json.dumps({"rules": [{"agents": patterns, "skills": [
            longest_wide(1000 * (k + 1) + i) for i in range(100)]}]}, ensure_ascii=False)})
    names += [longest_wide(2000 + i) for i in range(100)]  # the project's rule wins the pattern
    guard = check_output(sb.run(sb.guard(agent, harness)), "guard")["hookSpecificOutput"]
    reason = guard["permissionDecisionReason"]
    assert guard["permissionDecision"] == "deny", guard
    check_text(reason, names, agent, DENY_LIMIT, "deny reason")
    assert "rules.json (2000" in reason, reason
    start = one_output(sb.run_parts(sb.spawn(agent, harness)), "SubagentStart")
    check_text(start["systemMessage"], names, agent, OUTPUT_LIMIT, "systemMessage")
    preflight = one_output(sb.run_parts(sb.payload("SessionStart", harness, source="startup")),
                           "pre-flight")
    assert utf8(preflight["systemMessage"]) < HOOK.PREFLIGHT_BUDGET + 500, utf8(preflight["systemMessage"])
