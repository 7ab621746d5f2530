"""Native ``skills:`` judged by what Claude Code really does (issue 11, facts/claude-code.md §5.1).

Claude Code's own preload only takes skills the model itself may invoke. For
every row of the measured table, an agent declaring one native entry is run
through the hook's ``main()`` at each place a verdict shows: the guard, the
SubagentStart parts (what briefing injects, and the audit line), the doctor
(``--json`` verdicts) and, for the rows that need it, the pre-flight and a
``claude --agent`` session. Each row says what must happen:

  PRELOADS  Claude Code preloads it: briefing injects nothing and refuses nothing
  BRIEFING  Claude Code skips it although it exists: briefing delivers it, once
  OFF       a setting turned it off: the spawn is refused, naming the setting and the file

The harness's own command line (``--disable-slash-commands``, ``--plugin-dir``,
``--settings``) is read from ``/proc/$CLAUDE_PID/cmdline``; the tests start a
real process with those arguments and hand its pid to the hook.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import HOOK, HOOK_PYTHON, agent_md, skill_md, text_of
from test_briefing import (AUDIT, PA, PS, US, Plugin, aborted, brief, contexts, delivered, guard,
                           nothing, plugin_setup, silent)

PRELOADS, BRIEFING, OFF = "preloads", "briefing", "off"
PLAIN = "Use when the x skill is needed."
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def sk(name, body, **meta):
    """A SKILL.md (or command) with exactly the frontmatter keys given (``_`` for ``-``)."""
    lines = ["---", "name: %s" % name] if name else ["---"]
    lines += ["%s: %s" % (k.replace("_", "-") if k != "when_to_use" else k, v) for k, v in meta.items()]
    return "\n".join(lines + ["---", body])


def settings(where, overrides):
    return {where: json.dumps({"skillOverrides": overrides})}


def helper(root, skill_text=None, name="x", rel=None, commands=None):
    """An installed, enabled plugin ``helper`` (or, with ``rel``, only its files) shipping skill ``name``."""
    text = skill_text if skill_text is not None else sk(name, "X BODY\n", description=PLAIN)
    files = {"skills/%s/SKILL.md" % name: text}
    files.update({"commands/%s.md" % c: t for c, t in (commands or {}).items()})
    if rel:
        out = {"%s/.claude-plugin/plugin.json" % rel: json.dumps({"name": "helper", "version": "1.0.0"})}
        out.update({"%s/%s" % (rel, k): v for k, v in files.items()})
        return out
    return plugin_setup(root, [Plugin("helper@mkt", files=files)], home={"helper@mkt": True})


def dev_plugin(root):
    return helper(root, rel="dev/helper")


X = {PS % "x": sk("x", "X BODY\n", description=PLAIN)}

# case, files(root), native entry, harness arguments(root) or None, verdict, words the reason holds
ROWS = [
    # -- preloaded by Claude Code (§5.1: "yes") --------------------------------------------------
    ("plain project skill", lambda r: X, "x", None, PRELOADS, None),
    ("user-root skill", lambda r: {US % "x": sk("x", "X BODY\n", description=PLAIN)}, "x", None, PRELOADS, None),
    ("installed plugin skill by plugin:skill", helper, "helper:x", None, PRELOADS, None),
    ("installed plugin skill by bare name", helper, "x", None, PRELOADS, None),
    ("--plugin-dir plugin skill by plugin:skill", dev_plugin, "helper:x",
     lambda r: ["--plugin-dir", str(r / "dev" / "helper")], PRELOADS, None),
    ("--plugin-dir plugin skill by bare name", dev_plugin, "x",
     lambda r: ["--plugin-dir=%s" % (r / "dev" / "helper")], PRELOADS, None),
    ("--plugin-dir relative to claude's cwd", dev_plugin, "helper:x",
     lambda r: ["--plugin-dir", "../dev/helper"], PRELOADS, None),
    ("--plugin-dir naming a folder of plugins", dev_plugin, "helper:x",
     lambda r: ["--plugin-dir", str(r / "dev")], PRELOADS, None),
    ("user-invocable: false", lambda r: {PS % "x": sk("x", "X\n", description=PLAIN, user_invocable="false")},
     "x", None, PRELOADS, None),
    ("disable-model-invocation: false",
     lambda r: {PS % "x": sk("x", "X\n", description=PLAIN, disable_model_invocation="false")},
     "x", None, PRELOADS, None),
    ("project skill without description", lambda r: {PS % "x": sk("x", "X\n")}, "x", None, PRELOADS, None),
    ("frontmatter name, folder named otherwise",
     lambda r: {PS % "folder-y": sk("x", "X\n", description=PLAIN)}, "x", None, PRELOADS, None),
    ("the same skill by its folder name",
     lambda r: {PS % "folder-y": sk("x", "X\n", description=PLAIN)}, "folder-y", None, PRELOADS, None),
    ("frontmatter name of a user skill",
     lambda r: {US % "folder-y": sk("x", "X\n", description=PLAIN)}, "x", None, PRELOADS, None),
    ("frontmatter name of a plugin skill", lambda r: helper(r, name="folder-y",
                                                             skill_text=sk("x", "X\n", description=PLAIN)),
     "helper:x", None, PRELOADS, None),
    ("legacy project command", lambda r: {"project/.claude/commands/x.md": sk(None, "X\n", description=PLAIN)},
     "x", None, PRELOADS, None),
    ("legacy user command", lambda r: {"home/.claude/commands/x.md": "X, no frontmatter\n"},
     "x", None, PRELOADS, None),
    ("legacy plugin command", lambda r: helper(r, name="other", commands={"x": sk(None, "X\n", description=PLAIN)}),
     "helper:x", None, PRELOADS, None),
    # The key is the skill's own name (its folder): a frontmatter name that differs, and any key
    # for a plugin's skill (plugin:skill, the bare name), turn nothing off (issue 32, measured).
    ("skillOverrides off by a frontmatter name that differs from the folder",
     lambda r: dict({PS % "folder-y": sk("x", "X\n", description=PLAIN)},
                    **settings("project/.claude/settings.json", {"x": "off"})),
     "folder-y", None, PRELOADS, None),
    ("skillOverrides off, plugin skill by plugin:skill",
     lambda r: dict(helper(r), **settings("project/.claude/settings.json", {"helper:x": "off"})),
     "x", None, PRELOADS, None),
    ("skillOverrides off, plugin skill by its bare name",
     lambda r: dict(helper(r), **settings("project/.claude/settings.json", {"x": "off"})),
     "helper:x", None, PRELOADS, None),
    ('skillOverrides "name-only"', lambda r: dict(X, **settings("project/.claude/settings.json", {"x": "name-only"})),
     "x", None, PRELOADS, None),
    ("skillOverrides off in home, on again in local settings",
     lambda r: dict(X, **dict(settings("home/.claude/settings.json", {"x": "off"}),
                              **settings("project/.claude/settings.local.json", {"x": "on"}))),
     "x", None, PRELOADS, None),
    ("plugin skill with when_to_use only",
     lambda r: helper(r, skill_text=sk("x", "X\n", when_to_use="when x")), "helper:x", None, PRELOADS, None),
    ("paths: with nothing in it", lambda r: {PS % "x": sk("x", "X\n", description=PLAIN, paths="[]")},
     "x", None, PRELOADS, None),
    # -- skipped by Claude Code although present (§5.1: "no"): briefing delivers it --------------
    ("disable-model-invocation: true, project",
     lambda r: {PS % "x": sk("x", "X BODY\n", description=PLAIN, disable_model_invocation="true")},
     "x", None, BRIEFING, "disable-model-invocation: true"),
    ('disable-model-invocation: "true" (a string)',
     lambda r: {PS % "x": sk("x", "X BODY\n", description=PLAIN, disable_model_invocation='"true"')},
     "x", None, BRIEFING, "disable-model-invocation: true"),
    ("disable-model-invocation: true, user",
     lambda r: {US % "x": sk("x", "X BODY\n", description=PLAIN, disable_model_invocation="true")},
     "x", None, BRIEFING, "disable-model-invocation: true"),
    ("disable-model-invocation: true, plugin",
     lambda r: helper(r, skill_text=sk("x", "X BODY\n", description=PLAIN, disable_model_invocation="true")),
     "helper:x", None, BRIEFING, "disable-model-invocation: true"),
    ("disable-model-invocation: true, legacy command",
     lambda r: {"project/.claude/commands/x.md": sk(None, "X\n", disable_model_invocation="true")},
     "x", None, BRIEFING, "disable-model-invocation: true"),
    ('skillOverrides "user-invocable-only"',
     lambda r: dict(X, **settings("project/.claude/settings.json", {"x": "user-invocable-only"})),
     "x", None, BRIEFING, 'skillOverrides "x": "user-invocable-only" in'),
    ("plugin skill without description or when_to_use", lambda r: helper(r, skill_text=sk("x", "X\n")),
     "helper:x", None, BRIEFING, "neither description: nor when_to_use:"),
    ("--plugin-dir skill without description", lambda r: helper(r, rel="dev/helper", skill_text=sk("x", "X\n")),
     "x", lambda r: ["--plugin-dir", str(r / "dev" / "helper")], BRIEFING, "neither description"),
    ("conditional skill (paths: flow list)",
     lambda r: {PS % "x": sk("x", "X\n", description=PLAIN, paths='["src/**/*.py"]')},
     "x", None, BRIEFING, "conditional skill (paths:)"),
    ("conditional skill (paths: block list)",
     lambda r: {PS % "x": sk("x", "X\n", description=PLAIN, paths="\n  - src/**\n  - docs/*.md")},
     "x", None, BRIEFING, "conditional skill (paths:)"),
    ("--disable-slash-commands, plain skill", lambda r: X, "x",
     lambda r: ["--disable-slash-commands"], BRIEFING, "--disable-slash-commands"),
    ("--disable-slash-commands, plugin skill", helper, "helper:x",
     lambda r: ["-p", "hi", "--disable-slash-commands"], BRIEFING, "--disable-slash-commands"),
    # -- turned off by a person or policy: refused like a missing skill -------------------------
    ("skillOverrides off, user settings", lambda r: dict(X, **settings("home/.claude/settings.json", {"x": "off"})),
     "x", None, OFF, 'skillOverrides "x": "off" in ~/.claude/settings.json'),
    ("skillOverrides off, project settings",
     lambda r: dict(X, **settings("project/.claude/settings.json", {"x": "off"})),
     "x", None, OFF, '"off" in PROJECT/.claude/settings.json'),
    ("skillOverrides off, local settings",
     lambda r: dict(X, **settings("project/.claude/settings.local.json", {"x": "off"})),
     "x", None, OFF, '"off" in PROJECT/.claude/settings.local.json'),
    ("skillOverrides off, claude --settings JSON", lambda r: X, "x",
     lambda r: ["--settings", json.dumps({"skillOverrides": {"x": "off"}})], OFF, '"off" in claude --settings'),
    ("skillOverrides off, claude --settings file",
     lambda r: dict(X, **settings("project/extra.json", {"x": "off"})), "x",
     lambda r: ["--settings", "extra.json"], OFF, '"off" in PROJECT/extra.json'),
    ("skillOverrides off by the folder name",
     lambda r: dict({PS % "folder-y": sk("x", "X\n", description=PLAIN)},
                    **settings("project/.claude/settings.json", {"folder-y": "off"})),
     "x", None, OFF, 'skillOverrides "folder-y": "off"'),
    ("skillOverrides off beats --disable-slash-commands",
     lambda r: dict(X, **settings("project/.claude/settings.json", {"x": "off"})), "x",
     lambda r: ["--disable-slash-commands"], OFF, 'skillOverrides "x": "off"'),
]


@pytest.fixture
def harness_process():
    """``start(args, cwd)`` -> the pid of a live process whose command line ends with ``args``.

    It stands for the Claude Code process: the hook reads its arguments from
    /proc/$CLAUDE_PID/cmdline and its working directory from /proc/$CLAUDE_PID/cwd.
    """
    procs = []

    def start(args, cwd):
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"] + list(args),
                                cwd=str(cwd), stdin=subprocess.DEVNULL)
        procs.append(proc)
        # Popen returns while the kernel may still be setting up the new program: its
        # /proc/<pid>/cmdline reads empty for that instant. Claude Code has long been running
        # when it starts a hook; so wait until the arguments are there.
        for _ in range(2000):
            with open("/proc/%d/cmdline" % proc.pid, "rb") as handle:
                if handle.read().endswith(args[-1].encode() + b"\0") if args else True:
                    break
            time.sleep(0.001)
        return str(proc.pid)

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def build(sandbox, harness_process, files, args, agent_text):
    sb = sandbox({})
    sb.write(files(sb.root))
    sb.write({PA % "a": agent_text})
    if args is not None:
        sb.extra_env["CLAUDE_PID"] = harness_process(args(sb.root), sb.project)
    return sb


def in_words(sb, text):
    return text.replace("PROJECT", str(sb.project))


def doctor_skill(sb, agent="a", name="x", source="native"):
    result = sb.doctor("--json", "--harness", "claude")
    assert result.rc in (0, 1), result
    data = json.loads(result.out)
    rows = [row for row in data["agents"] if row["agent"] == agent]
    assert rows, result
    skills = [s for s in rows[0]["skills"] if s["name"] == name and s["source"] == source]
    assert len(skills) == 1, rows[0]
    return rows[0], skills[0]


@needs_proc
@pytest.mark.parametrize("files, entry, args, expect, words", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_each_row_of_the_measured_table(sandbox, harness_process, files, entry, args, expect, words):
    sb = build(sandbox, harness_process, files, args, agent_md("a", native=[entry]))
    r = guard(sb, "a")
    results = brief(sb, "a")
    row, skill = doctor_skill(sb, name=entry)
    if expect == PRELOADS:
        silent(r)
        nothing(results)  # Claude Code delivers it: injecting it too would send it twice
        assert (row["status"], skill["verdict"], skill["delivered_by"]) == (
            "ok", "native (Claude Code preloads)", "claude-code"), skill
        assert skill["harness_skips"] is None
    elif expect == BRIEFING:
        silent(r)
        got = delivered(results)
        assert list(got.skills) == [entry], got.skills
        assert "".join(contexts(results)).count('<skill name="%s"' % entry) == 1
        audit = results[0].system_message
        assert AUDIT.match(audit.splitlines()[0]), audit
        assert "delivered because Claude Code skips them: %s (" % entry in audit, audit
        assert in_words(sb, words) in audit, audit
        assert row["status"] == "ok" and skill["delivered_by"] == "briefing", skill
        assert skill["verdict"].startswith("native, delivered by briefing: "), skill
        assert in_words(sb, words) in skill["verdict"] and in_words(sb, words) in skill["harness_skips"]
        assert row["total_bytes"] == skill["bytes"] > 0, row
    else:
        assert r.decision == "deny", r
        assert r.reason.startswith("briefing: agent 'a' declares skill(s) that a setting turned off: %s (" % entry), r
        # A refusal shows a long path clipped at its start ("…" and its end): how much of the
        # sandbox's path shows depends on where the test runs (pytest-xdist's folders are longer).
        before, _, after = words.partition("PROJECT")
        assert before in r.reason and (in_words(sb, words) in r.reason or "\u2026" in r.reason and after in r.reason), \
            r.reason
        assert "unknown" not in r.reason, r.reason
        aborted(results, "a", [entry])
        assert row["status"] == "FAIL" and skill["status"] == "off", row
        assert skill["verdict"].startswith("missing: turned off by skillOverrides"), skill
        assert any("remove the override there" in p for p in row["problems"]), row


# --------------------------------------------------------------------------------------------
# The rows hold for the briefing: list too: the same resolution, and "off" is off for both
# --------------------------------------------------------------------------------------------

BRIEFING_LIST = [
    # case, files, declared, verdict
    ("frontmatter name", lambda r: {PS % "folder-y": sk("x", "X BODY\n", description=PLAIN)}, "x", "briefed"),
    ("legacy project command", lambda r: {"project/.claude/commands/x.md": sk(None, "X BODY\n")}, "x", "briefed"),
    ("legacy user command", lambda r: {"home/.claude/commands/x.md": "X BODY\n"}, "x", "briefed"),
    ("frontmatter name of a plugin skill",
     lambda r: helper(r, name="folder-y", skill_text=sk("x", "X BODY\n", description=PLAIN)), "helper:x", "briefed"),
    ("disable-model-invocation: true changes nothing for briefing:",
     lambda r: {PS % "x": sk("x", "X BODY\n", disable_model_invocation="true")}, "x", "briefed"),
    ("skillOverrides off", lambda r: dict(X, **settings("home/.claude/settings.json", {"x": "off"})), "x", "refused"),
    ("no such skill, no such command", lambda r: {"project/.claude/commands/y.md": "Y\n"}, "x", "unknown"),
    ("a frontmatter name does not leak across plugins",
     lambda r: dict(helper(r, name="folder-y", skill_text=sk("x", "X\n", description=PLAIN))), "other:x", "unknown"),
]


@needs_proc
@pytest.mark.parametrize("files, declared, expect", [r[1:] for r in BRIEFING_LIST], ids=[r[0] for r in BRIEFING_LIST])
def test_briefing_list_resolves_like_the_native_field(sandbox, harness_process, files, declared, expect):
    sb = build(sandbox, harness_process, files, None, agent_md("a", [declared]))
    r = guard(sb, "a")
    results = brief(sb, "a")
    if expect == "briefed":
        silent(r)
        assert delivered(results).skills == {declared: "X BODY\n"}
    else:
        assert r.decision == "deny", r
        words = "a setting turned off" if expect == "refused" else "references unknown skill(s): %s" % declared
        assert words in r.reason, r.reason
        aborted(results, "a", [declared])


def test_skill_folder_wins_over_a_frontmatter_name_and_a_command(sandbox):
    """Resolution order: a folder called NAME in any root, then a command, then a frontmatter name
    (measured on 2.1.328, issue 32: a project command y.md beats a project skill named y)."""
    sb = sandbox({
        PS % "other": sk("x", "BY FRONTMATTER NAME\n", description=PLAIN),
        US % "x": sk("x", "BY FOLDER, USER ROOT\n", description=PLAIN),
        "project/.claude/commands/x.md": "BY COMMAND\n",
        PS % "y-dir": sk("y", "Y BY FRONTMATTER NAME\n", description=PLAIN),
        "project/.claude/commands/y.md": "Y BY COMMAND\n",
        "project/.claude/commands/z.md": "Z BY COMMAND\n",
        PA % "a": agent_md("a", ["x", "y", "z"]),
    })
    assert delivered(brief(sb, "a")).skills == {
        "x": "BY FOLDER, USER ROOT\n", "y": "Y BY COMMAND\n", "z": "Z BY COMMAND\n"}


# --------------------------------------------------------------------------------------------
# Both lists at once: what Claude Code skips arrives once, from briefing; what it preloads, never
# --------------------------------------------------------------------------------------------

MIXED = {
    PS % "plain": sk("plain", "PLAIN BODY\n", description=PLAIN),
    PS % "hidden": sk("hidden", "HIDDEN BODY\n", description=PLAIN, disable_model_invocation="true"),
    PS % "cond": sk("cond", "COND BODY\n", description=PLAIN, paths="src/**"),
    PS % "extra": sk("extra", "EXTRA BODY\n", description=PLAIN),
}


def test_a_skipped_skill_in_both_lists_arrives_once_from_briefing(sandbox):
    sb = sandbox(dict(MIXED, **{PA % "a": agent_md("a", ["hidden", "plain", "extra"],
                                                     native=["plain", "hidden", "cond"])}))
    results = brief(sb, "a")
    got = delivered(results)
    assert got.order == ["hidden", "extra", "cond"], got.order
    joined = "".join(contexts(results))
    for name, times in (("hidden", 1), ("extra", 1), ("cond", 1), ("plain", 0)):
        assert joined.count('<skill name="%s"' % name) == times, name
    audit = results[0].system_message
    assert "; preloaded natively: plain" in audit, audit
    assert "delivered because Claude Code skips them: hidden (disable-model-invocation: true in " in audit
    assert "; cond (a conditional skill (paths:)" in audit, audit
    row, hidden = doctor_skill(sb, name="hidden", source="briefing")
    assert hidden["verdict"] == "briefing" and hidden["delivered_by"] == "briefing"
    _, plain = doctor_skill(sb, name="plain", source="briefing")
    assert plain["verdict"] == "briefing, preloaded by Claude Code (also in skills:)", plain
    _, native_hidden = doctor_skill(sb, name="hidden")
    assert native_hidden["verdict"].startswith("native, delivered by briefing: disable-model-invocation: true")
    assert row["total_bytes"] == sum(len(b) for b in ("HIDDEN BODY\n", "EXTRA BODY\n", "COND BODY\n"))


def test_skipped_native_skills_count_in_the_size_limit(sandbox):
    big = {PS % ("big%d" % i): sk("big%d" % i, text_of("b%d" % i, 27000), description=PLAIN,
                                  disable_model_invocation="true") for i in range(3)}
    sb = sandbox(dict(big, **{PA % "a": agent_md("a", native=["big0", "big1", "big2"])}))
    r = guard(sb, "a")
    assert r.decision == "deny" and "needs a briefing of 81000 bytes" in r.reason, r
    aborted(brief(sb, "a"), "a")
    # the control: Claude Code preloads the same three itself, so briefing has nothing to deliver
    sb.write({PS % ("big%d" % i): sk("big%d" % i, text_of("b%d" % i, 27000), description=PLAIN) for i in range(3)})
    silent(guard(sb, "a"))
    nothing(brief(sb, "a"))


def test_a_missing_native_skill_is_still_refused_next_to_a_skipped_one(sandbox):
    sb = sandbox(dict(MIXED, **{PA % "a": agent_md("a", native=["hidden", "ghost"])}))
    r = guard(sb, "a")
    assert r.decision == "deny" and "references unknown skill(s): ghost." in r.reason, r
    assert "hidden" not in r.reason.split(".")[0]
    aborted(brief(sb, "a"), "a", ["ghost"])


# --------------------------------------------------------------------------------------------
# Say what happened: doctor text, --show, pre-flight
# --------------------------------------------------------------------------------------------

def test_doctor_text_gives_every_native_entry_its_verdict(sandbox):
    sb = sandbox(dict(MIXED, **settings("project/.claude/settings.json", {"extra": "off"}), **{
        PA % "a": agent_md("a", native=["plain", "hidden", "ghost", "extra"])}))
    result = sb.doctor("--harness", "claude")
    assert result.rc == 1, result
    lines = {line.split()[1]: line for line in result.out.splitlines() if line.startswith("        native ")}
    assert lines["plain"].endswith("[native (Claude Code preloads)]"), result.out
    assert "[native, delivered by briefing: disable-model-invocation: true in " in lines["hidden"], result.out
    assert lines["ghost"].endswith("[missing]"), result.out
    assert '[missing: turned off by skillOverrides "extra": "off" in ' in lines["extra"], result.out
    assert "total 12 of " in result.out, result.out  # HIDDEN BODY\n: what briefing itself injects


def test_show_lists_each_declared_skill_with_its_verdict(sandbox):
    sb = sandbox(dict(MIXED, **{PA % "a": agent_md("a", ["extra"], native=["plain", "hidden"])}))
    result = sb.doctor("--show", "a", "--harness", "claude")
    assert result.rc == 0, result
    sub = result.out.split("=== claude --agent session")[0]
    assert "    native   plain: native (Claude Code preloads)" in sub, result.out
    assert "    native   hidden: native, delivered by briefing: disable-model-invocation: true" in sub
    assert "    briefing extra: briefing" in sub
    assert "HIDDEN BODY" in sub and "PLAIN BODY" not in sub, sub
    data = json.loads(sb.doctor("--show", "a", "--harness", "claude", "--json").out)
    subagent, session = data["shows"]
    assert subagent["skills"] == ["extra", "hidden"]
    assert {d["name"]: d["verdict"] for d in subagent["declared"]}["plain"] == "native (Claude Code preloads)"
    assert session["skills"] == ["extra", "plain", "hidden"]  # a --agent session gets both lists whole


def test_preflight_is_silent_for_skipped_skills_and_names_the_setting_of_an_off_one(sandbox):
    sb = sandbox(dict(MIXED, **{PA % "a": agent_md("a", native=["plain", "hidden", "cond"])}))
    start = sb.payload("SessionStart", source="startup")
    assert sb.run(start, args=("--part", 1)).out == ""
    sb.write(settings("project/.claude/settings.local.json", {"hidden": "off"}))
    message = sb.run(start, args=("--part", 1)).system_message
    assert 'skillOverrides "hidden": "off" in %s' % os.path.join(
        str(sb.project), ".claude", "settings.local.json") in message, message


# --------------------------------------------------------------------------------------------
# claude --agent sessions: both lists, the same resolution
# --------------------------------------------------------------------------------------------

@needs_proc
def test_agent_session_delivers_both_lists_with_the_same_resolution(sandbox, harness_process):
    sb = sandbox(dict(MIXED, **{
        PS % "folder-y": sk("by-name", "BY NAME\n", description=PLAIN),
        "project/.claude/commands/cmd.md": "COMMAND BODY\n",
        PA % "a": agent_md("a", ["cmd"], native=["plain", "hidden", "by-name"])}))
    sb.extra_env["CLAUDE_PID"] = harness_process(["--agent", "a", "--disable-slash-commands"], sb.project)
    start = sb.payload("SessionStart", source="startup", agent_type="a")
    got = delivered(sb.run_parts(start), event="SessionStart")
    assert got.skills == {"cmd": "COMMAND BODY\n", "plain": "PLAIN BODY\n", "hidden": "HIDDEN BODY\n",
                          "by-name": "BY NAME\n"}
    sb.write(settings("home/.claude/settings.json", {"plain": "off"}))
    results = sb.run_parts(start)
    aborted(results, "a", ["plain"], event="SessionStart")
    assert "a setting turned off" in results[0].system_message


# --------------------------------------------------------------------------------------------
# The harness's process: CLAUDE_PID, else the nearest ancestor called claude
# --------------------------------------------------------------------------------------------

@needs_proc
def test_without_claude_pid_the_nearest_claude_ancestor_is_read(sandbox, tmp_path):
    """A real process chain: a program called ``claude`` (a shell) starts the hook as its child."""
    sb = sandbox(dict(X, **{PA % "a": agent_md("a", native=["x"])}))
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    os.symlink("/bin/sh", str(claude))
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(sb.spawn("a")))
    script = '"$0" "$1" --part 1 < "$2"; true'  # "; true": the shell must not exec the hook

    def run(*claude_args, **env):
        argv = [str(claude), "-c", script, HOOK_PYTHON, str(HOOK), str(payload)] + list(claude_args)
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(sb.project),
                              env=sb.env(**env), timeout=60)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
        return proc.stdout.decode()

    assert "X BODY" in run("--disable-slash-commands", CLAUDECODE="1")
    assert run(CLAUDECODE="1") == ""  # the same chain without the option: Claude Code preloads it
    assert run("--disable-slash-commands") == ""  # not inside a Claude Code hook: no ancestor is read


def test_a_claude_pid_that_is_gone_reads_as_no_options(sandbox):
    sb = sandbox(dict(X, **{PA % "a": agent_md("a", native=["x"])}))
    proc = subprocess.Popen([sys.executable, "-c", "pass", "--disable-slash-commands"])
    proc.wait()
    sb.extra_env["CLAUDE_PID"] = str(proc.pid)
    nothing(brief(sb, "a"))
    sb.extra_env["CLAUDE_PID"] = "not-a-pid"
    nothing(brief(sb, "a"))
