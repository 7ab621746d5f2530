"""briefing-doctor (both entry points) and the SessionStart pre-flight.

Both read their verdict from the same resolver as the spawn paths. These tests
assert what a user relies on: exit codes, which agents/files/skills are named,
the --json schema, --show, and that a healthy project hears nothing.
"""
import json
import os
import re

import pytest

from conftest import CLAUDE_OUTPUT_LIMIT, PARTS, REPO, agent_md, package_files, role_toml, skill_md
from framing import rebuild

VIA = pytest.mark.parametrize("via_link", [False, True], ids=["preload-doctor", "bin-briefing-doctor"])

AGENT_KEYS = {"harness", "agent", "file", "status", "skills", "total_bytes", "limit_bytes", "problems", "warnings"}
SKILL_KEYS = {"name", "source", "status", "path", "bytes"}
STATUSES = {"ok", "WARN", "FAIL"}

ALPHA = skill_md("alpha", "ALPHA-BODY: the alpha procedure.\n")
BETA = skill_md("beta", "BETA-BODY: the beta procedure.\n")
CODEX_ALPHA = skill_md("alpha", "CODEX-ALPHA-BODY\n")

HEALTHY = {
    "project/.claude/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"]),
    "project/.claude/skills/alpha/SKILL.md": ALPHA,
    "project/.claude/skills/beta/SKILL.md": BETA,
    "project/.codex/agents/checker.toml": role_toml("checker", ["alpha"]),
    "project/.codex/skills/alpha/SKILL.md": CODEX_ALPHA,
}

# Well over what PARTS handlers of 10,000 characters can carry.
HUGE = "".join("line %06d of a skill far too large to deliver to any subagent\n" % i for i in range(3000))


def files(*dicts, **more):
    merged = {}
    for d in dicts:
        merged.update(d)
    merged.update(more)
    return merged


def doctor(sb, *args, via_link=False, **kwargs):
    result = sb.doctor(*args, via_link=via_link, **kwargs)
    assert "Traceback" not in result.err, result
    assert "\x1b[" not in result.out and "\x1b[" not in result.err, result  # not a terminal: no colour
    return result


def doctor_json(sb, *args, via_link=False, **kwargs):
    result = doctor(sb, "--json", *args, via_link=via_link, **kwargs)
    try:
        data = json.loads(result.out)
    except ValueError:
        raise AssertionError("--json did not print one JSON document: %r" % (result,))
    check_schema(data)
    return result, data


def check_schema(data):
    assert isinstance(data, dict)
    assert {"version", "cwd", "ok", "agents", "checks"} <= set(data), sorted(data)
    assert data["version"] == 1
    assert isinstance(data["cwd"], str) and isinstance(data["ok"], bool)
    assert isinstance(data["agents"], list) and isinstance(data["checks"], list)
    for agent in data["agents"]:
        assert AGENT_KEYS <= set(agent), (sorted(agent), agent)
        assert agent["harness"] in ("claude", "codex", "copilot"), agent
        assert isinstance(agent["agent"], str) and agent["agent"]
        assert isinstance(agent["file"], str) and agent["file"]
        assert agent["status"] in STATUSES, agent
        assert isinstance(agent["total_bytes"], int) and isinstance(agent["limit_bytes"], int), agent
        assert agent["limit_bytes"] > 0
        for key in ("problems", "warnings"):
            assert isinstance(agent[key], list) and all(isinstance(p, str) for p in agent[key]), agent
        if agent["status"] == "FAIL":
            assert agent["problems"], agent  # a failure always says why
        for skill in agent["skills"]:
            assert SKILL_KEYS <= set(skill), (sorted(skill), skill)
            assert isinstance(skill["name"], str) and skill["name"]
            assert skill["source"] in ("briefing", "native"), skill
            assert isinstance(skill["status"], str) and skill["status"]
            assert skill["path"] is None or isinstance(skill["path"], str), skill
            assert skill["bytes"] is None or isinstance(skill["bytes"], int), skill
            if skill["status"] == "missing":
                assert skill["path"] is None and skill["bytes"] is None, skill
    for check in data["checks"]:
        assert {"name", "status", "detail"} <= set(check), check
        assert check["status"] in STATUSES, check
        assert isinstance(check["name"], str) and isinstance(check["detail"], str)
    assert data["ok"] == (not any(a["status"] == "FAIL" for a in data["agents"])
                          and not any(c["status"] == "FAIL" for c in data["checks"]))


def entry(data, name, harness=None):
    # A .claude/agents file is a Copilot CLI agent too: without a harness, the first one listed.
    found = [a for a in data["agents"] if a["agent"] == name and harness in (None, a["harness"])]
    if harness is None:
        found = [a for a in found if a["harness"] != "copilot"] or found
    assert len(found) == 1, (name, harness, data["agents"])
    return found[0]


def skill_of(agent, name, source=None):
    found = [s for s in agent["skills"] if s["name"] == name and source in (None, s["source"])]
    assert len(found) == 1, (name, source, agent)
    return found[0]


def rel(path):
    return os.path.normpath(path).replace(os.sep, "/")


# --- table view --------------------------------------------------------------------------

@VIA
def test_healthy_project_table(sandbox, via_link):
    sb = sandbox(HEALTHY)
    result = doctor(sb, via_link=via_link)
    assert result.rc == 0, result
    out = result.out
    for needle in ("reviewer", "checker", "alpha", "beta", ".claude/agents/reviewer.md", ".codex/agents/checker.toml",
                   ".claude/skills/alpha", ".claude/skills/beta", ".codex/skills/alpha"):  # where each resolved
        assert needle in out, (needle, result)
    assert "ok" in out and "FAIL" not in out, result


@VIA
def test_cwd_flag_equals_running_there(sandbox, via_link):
    sb = sandbox(HEALTHY)
    here = doctor(sb, via_link=via_link)
    there = doctor(sb, "--cwd", str(sb.project), via_link=via_link, cwd=sb.root)
    assert there.rc == here.rc == 0, (here, there)
    assert ".claude/agents/reviewer.md" in there.out and ".codex/agents/checker.toml" in there.out, there
    _, a = doctor_json(sb, via_link=via_link)
    _, b = doctor_json(sb, "--cwd", str(sb.project), via_link=via_link, cwd=sb.root)
    assert a["agents"] == b["agents"]
    assert os.path.realpath(a["cwd"]) == os.path.realpath(b["cwd"]) == os.path.realpath(str(sb.project))
    relative = doctor(sb, "--cwd", "project", via_link=via_link, cwd=sb.root)
    assert relative.rc == 0 and ".claude/agents/reviewer.md" in relative.out, relative


@VIA
def test_missing_skill_fails_naming_agent_file_and_skill(sandbox, via_link):
    sb = sandbox(files(HEALTHY, {"project/.claude/agents/sub/broken.md": agent_md("broken", ["alpha", "no-such-skill"])}))
    result = doctor(sb, via_link=via_link)
    assert result.rc == 1, result
    assert "FAIL" in result.out
    for needle in ("broken", ".claude/agents/sub/broken.md", "no-such-skill"):
        assert needle in result.out, (needle, result)
    # the healthy agents are still listed as such
    assert "reviewer" in result.out and "checker" in result.out


FIX_WORDS = re.compile(r"\b(add|create|install|remove|rename|fix|declare|use|move|shrink|split|drop)\b", re.I)


@pytest.mark.parametrize("extra,agent", [
    ({"project/.claude/agents/broken.md": agent_md("broken", ["no-such-skill"])}, "broken"),
    ({"project/.codex/agents/bad.toml": role_toml("bad_role", ["absent_skill"])}, "bad_role"),
    ({"project/.claude/agents/big.md": agent_md("big", ["huge"]),
      "project/.claude/skills/huge/SKILL.md": skill_md("huge", HUGE)}, "big"),
], ids=["claude-missing", "codex-missing", "too-large"])
def test_failure_says_what_to_change(sandbox, extra, agent):
    """The table gives, for a failure, why in words that say what to change."""
    sb = sandbox(files(HEALTHY, extra))
    _, data = doctor_json(sb)
    failing = entry(data, agent)
    assert failing["status"] == "FAIL", failing
    assert any(FIX_WORDS.search(p) for p in failing["problems"]), failing["problems"]
    table = doctor(sb)
    assert FIX_WORDS.search(table_block(table.out, agent)), table


def table_block(text, agent):
    """The table lines of ``agent``: its line and the indented lines below it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"\b%s\b" % re.escape(agent), line))
    block = [lines[start]]
    for line in lines[start + 1:]:
        if line[:1] not in (" ", "\t"):
            break
        block.append(line)
    return "\n".join(block)


@VIA
def test_missing_codex_skill_fails(sandbox, via_link):
    sb = sandbox(files(HEALTHY, {"project/.codex/agents/team/x.toml": role_toml("lost_role", ["ghost_skill"])}))
    result = doctor(sb, via_link=via_link)
    assert result.rc == 1, result
    for needle in ("lost_role", ".codex/agents/team/x.toml", "ghost_skill"):
        assert needle in result.out, (needle, result)


def test_too_large_fails_with_the_size_and_the_limit(sandbox):
    sb = sandbox(files(HEALTHY, {
        "project/.claude/agents/big.md": agent_md("big", ["huge"]),
        "project/.claude/skills/huge/SKILL.md": skill_md("huge", HUGE),
    }))
    result = doctor(sb, "--harness", "claude")
    assert result.rc == 1, result
    assert "big" in result.out and "huge" in result.out and "FAIL" in result.out, result
    _, data = doctor_json(sb, "--harness", "claude")
    big = entry(data, "big", "claude")
    assert big["status"] == "FAIL" and big["total_bytes"] > big["limit_bytes"], big
    assert data["ok"] is False


def test_home_agents_are_checked_too(sandbox):
    sb = sandbox(files(HEALTHY, {"home/.claude/agents/homer.md": agent_md("homer", ["nowhere-skill"])}))
    result = doctor(sb)
    assert result.rc == 1, result
    assert "homer" in result.out and "homer.md" in result.out and "nowhere-skill" in result.out, result


def test_legacy_briefing_table_is_reported_with_the_fix(sandbox):
    legacy = 'name = "old_role"\ndescription = "d"\ndeveloper_instructions = "x"\n\n[briefing]\nskills = ["alpha"]\n'
    sb = sandbox(files(HEALTHY, {"project/.codex/agents/old.toml": legacy}))
    result = doctor(sb, "--harness", "codex")
    assert "old_role" in result.out or "old.toml" in result.out, result
    assert ".codex/agents/old.toml" in result.out, result
    assert "# briefing:" in result.out, result  # says what to change it to
    _, data = doctor_json(sb, "--harness", "codex")
    old = [a for a in data["agents"] if a["file"].endswith("old.toml")]
    assert old and old[0]["status"] == "FAIL", data["agents"]  # Codex drops the role


@pytest.mark.parametrize("path,content", [
    ("project/.claude/agents/garbled.md",
     "---\nname: garbled\ndescription: d\nbriefing:\n  skills: [alpha, beta\n---\nbody\n"),
    ("project/.codex/agents/garbled.toml",
     '# briefing: skills = ["alpha"\nname = "garbled"\ndescription = "d"\ndeveloper_instructions = "x"\n'),
], ids=["frontmatter", "toml-comment"])
def test_unreadable_declaration_is_a_failure(sandbox, path, content):
    sb = sandbox(files(HEALTHY, {path: content}))
    result = doctor(sb)
    assert result.rc == 1, result
    assert rel(os.path.relpath(str(sb.path(path)), str(sb.project))) in result.out, result


def test_native_skills_are_checked(sandbox):
    sb = sandbox(files(HEALTHY, {
        "project/.claude/agents/native.md": agent_md("native-ok", native=["alpha"]),
        "project/.claude/agents/mixed.md": agent_md("mixed", ["beta"], native=["alpha"]),
        "project/.claude/agents/nativebad.md": agent_md("native-bad", native=["phantom"]),
    }))
    result = doctor(sb, "--harness", "claude")
    assert "native-bad" in result.out and "phantom" in result.out, result
    _, data = doctor_json(sb, "--harness", "claude")
    ok = entry(data, "native-ok", "claude")
    assert ok["status"] == "ok" and skill_of(ok, "alpha", "native")["status"] == "ok", ok
    mixed = entry(data, "mixed", "claude")
    assert skill_of(mixed, "alpha", "native")["status"] == "ok"
    assert skill_of(mixed, "beta", "briefing")["status"] == "ok"
    bad = entry(data, "native-bad", "claude")
    assert bad["status"] in ("WARN", "FAIL"), bad
    assert skill_of(bad, "phantom", "native")["status"] == "missing", bad


@pytest.mark.parametrize("empty", [
    {},
    {"project/.claude/agents/plain.md": agent_md("plain"),
     "project/.codex/agents/plain.toml": role_toml("plain_role")},
], ids=["no-agents", "agents-without-declarations"])
@VIA
def test_no_declaring_agents_is_one_line(sandbox, empty, via_link):
    sb = sandbox(empty)
    result = doctor(sb, via_link=via_link)
    assert result.rc == 0, result
    # One line says so; the others are the harnesses skipped and where briefing is not installed.
    lines = [l for l in result.out.strip().splitlines() if not l.startswith(("skipped ", "WARN  check  installed "))]
    assert len(lines) == 1 and "declares skills" in lines[0], result
    _, data = doctor_json(sb, via_link=via_link)
    assert data["agents"] == [] and data["ok"] is True


@pytest.mark.parametrize("where", ["missing", "file"])
@VIA
def test_bad_cwd_is_one_line(sandbox, where, via_link):
    sb = sandbox({"project/not-a-dir": "x\n"})
    target = sb.path("project/does/not/exist") if where == "missing" else sb.path("project/not-a-dir")
    result = doctor(sb, "--cwd", str(target), via_link=via_link)
    assert result.rc in (1, 2), result
    text = (result.out + result.err).strip()
    assert len(text.splitlines()) == 1, result
    assert str(target) in text or os.path.basename(str(target)) in text, result


@pytest.mark.parametrize("args", [
    ("--bogus",),
    ("--harness", "vim"),
    ("--harness",),
    ("--cwd",),
    ("--show",),
    ("extra-positional",),
    ("--since", "x", "--audit"),
    ("--agent", "a"),
    ("--audit", "--show", "a"),
    ("--json=yes",),
], ids=lambda a: " ".join(a))
@VIA
def test_usage_errors_exit_2(sandbox, args, via_link):
    """One line on stderr, naming the problem and where the options are; no traceback (issue 44)."""
    sb = sandbox(HEALTHY)
    result = doctor(sb, *args, via_link=via_link)
    assert result.rc == 2 and result.out == "", result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("briefing-doctor: ") and "--help" in lines[0], result


def test_a_misspelt_harness_names_the_near_miss(sandbox):
    result = doctor(sandbox(HEALTHY), "--harness", "cladue")
    assert result.rc == 2 and "did you mean claude?" in result.err, result


@VIA
def test_help_exits_zero(sandbox, via_link):
    sb = sandbox(HEALTHY)
    result = doctor(sb, "--help", via_link=via_link)
    assert result.rc == 0, result
    text = result.out + result.err
    for flag in ("--cwd", "--harness", "--json", "--show", "--audit", "--since", "--session", "--agent", "--version"):
        # each flag on a line of its own, with what it does
        assert any(l.strip().startswith(flag + " ") and len(l.split()) > 2 for l in text.splitlines()), (flag, result)
    assert doctor(sb, "-h", via_link=via_link).out == result.out


@pytest.mark.parametrize("harness,expect,absent", [
    ("claude", "reviewer", "checker"),
    ("codex", "checker", "reviewer"),
])
@VIA
def test_harness_filter(sandbox, harness, expect, absent, via_link):
    sb = sandbox(HEALTHY)
    result = doctor(sb, "--harness", harness, via_link=via_link)
    assert result.rc == 0, result
    assert expect in result.out and absent not in result.out, result
    _, data = doctor_json(sb, "--harness", harness, via_link=via_link)
    assert {a["harness"] for a in data["agents"]} == {harness}


def test_harness_filter_hides_the_other_sides_failure(sandbox):
    sb = sandbox(files(HEALTHY, {"project/.codex/agents/bad.toml": role_toml("bad_role", ["nope"])}))
    assert doctor(sb, "--harness", "claude").rc == 0
    assert doctor(sb, "--harness", "codex").rc == 1
    assert doctor(sb, "--harness", "both").rc == 1
    assert doctor(sb).rc == 1


# --- --json --------------------------------------------------------------------------------

@VIA
def test_json_schema_on_a_mixed_project(sandbox, via_link):
    sb = sandbox(files(HEALTHY, {
        "project/.claude/agents/broken.md": agent_md("broken", ["alpha", "missing-one"]),
        "project/.claude/agents/native.md": agent_md("native-ok", native=["beta"]),
        "project/.codex/agents/bad.toml": role_toml("bad_role", ["nope"]),
    }))
    result, data = doctor_json(sb, via_link=via_link)
    assert result.rc == 1 and data["ok"] is False, result
    assert os.path.realpath(data["cwd"]) == os.path.realpath(str(sb.project))

    reviewer = entry(data, "reviewer", "claude")
    assert reviewer["status"] == "ok" and not reviewer["problems"]
    assert rel(reviewer["file"]) == ".claude/agents/reviewer.md"
    assert [s["name"] for s in reviewer["skills"]] == ["alpha", "beta"]
    for name, text in (("alpha", ALPHA), ("beta", BETA)):
        skill = skill_of(reviewer, name, "briefing")
        assert skill["status"] == "ok" and skill["path"] and name in skill["path"], skill
        body = text.split("---\n", 2)[2]
        assert skill["bytes"] in (len(text.encode()), len(body.encode())), skill
    assert 0 < reviewer["total_bytes"] <= reviewer["limit_bytes"]

    checker = entry(data, "checker", "codex")
    assert checker["status"] == "ok" and rel(checker["file"]) == ".codex/agents/checker.toml"
    assert ".codex" in skill_of(checker, "alpha")["path"]

    broken = entry(data, "broken", "claude")
    assert broken["status"] == "FAIL" and rel(broken["file"]) == ".claude/agents/broken.md"
    assert skill_of(broken, "alpha")["status"] == "ok"
    assert skill_of(broken, "missing-one")["status"] == "missing"
    assert any("missing-one" in p for p in broken["problems"]), broken

    bad = entry(data, "bad_role", "codex")
    assert bad["status"] == "FAIL" and skill_of(bad, "nope")["status"] == "missing"

    assert skill_of(entry(data, "native-ok", "claude"), "beta", "native")["status"] == "ok"


def test_json_is_the_same_through_both_entry_points(sandbox):
    sb = sandbox(files(HEALTHY, {"project/.claude/agents/broken.md": agent_md("broken", ["missing-one"])}))
    a = doctor_json(sb)
    b = doctor_json(sb, via_link=True)
    assert a[0].rc == b[0].rc == 1
    assert a[1] == b[1]


def test_json_healthy_project_is_ok(sandbox):
    sb = sandbox(HEALTHY)
    result, data = doctor_json(sb)
    assert result.rc == 0 and data["ok"] is True, result
    assert {(a["harness"], a["agent"]) for a in data["agents"]} == {
        ("claude", "reviewer"), ("codex", "checker"), ("copilot", "reviewer")}
    assert not [c for c in data["checks"] if c["status"] == "FAIL"], data["checks"]


# --- checks: hooks.json and Codex trust ------------------------------------------------------

def test_repo_hooks_json_is_healthy(sandbox):
    sb = sandbox(HEALTHY)
    _, data = doctor_json(sb)
    hooks_checks = [c for c in data["checks"] if "hook" in (c["name"] + c["detail"]).lower()
                    and c["name"] != "installed"]  # not installed in the sandbox's home: its own tests
    assert hooks_checks, data["checks"]
    assert all(c["status"] == "ok" for c in hooks_checks), hooks_checks


def _plugin_copy(sb, mutate):
    """A copy of the plugin's hooks/ with a changed hooks.json; returns the copied hook."""
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())
    mutate(hooks["hooks"])
    sb.write({
        "plugin/hooks/briefing-preload": (REPO / "hooks" / "briefing-preload").read_bytes(),
        "plugin/hooks/hooks.json": json.dumps(hooks, indent=2),
        "plugin/hooks/hooks.codex.json": (REPO / "hooks" / "hooks.codex.json").read_bytes(),
        "plugin/hooks/hooks.copilot.json": (REPO / "hooks" / "hooks.copilot.json").read_bytes(),
    })
    sb.write(package_files("plugin/hooks"))
    for name in (".claude-plugin", ".codex-plugin", ".github/plugin"):
        for item in (REPO / name).iterdir():
            sb.write({"plugin/%s/%s" % (name, item.name): item.read_bytes()})
    program = sb.path("plugin/hooks/briefing-preload")
    os.chmod(str(program), 0o755)
    return program


def _limit_off(hooks):
    for handler in hooks["SubagentStart"][0]["hooks"]:
        handler.pop("additionalContextLimit", None)


def _limit_default(hooks):
    for handler in hooks["SubagentStart"][0]["hooks"]:
        handler["additionalContextLimit"] = 2500


def _no_guard(hooks):
    del hooks["PreToolUse"]


def _no_subagent_start(hooks):
    del hooks["SubagentStart"]


def _fewer_parts(hooks):
    del hooks["SubagentStart"][0]["hooks"][-1]


@pytest.mark.parametrize("mutate,word", [
    (_limit_off, "additionalContextLimit"),
    (_limit_default, "additionalContextLimit"),
    (_no_guard, "PreToolUse"),
    (_no_subagent_start, "SubagentStart"),
    (_fewer_parts, "SubagentStart"),
], ids=["limit-absent", "limit-2500", "no-guard", "no-subagent-start", "part-missing"])
def test_broken_hooks_json_is_reported(sandbox, mutate, word):
    sb = sandbox(HEALTHY)
    program = _plugin_copy(sb, mutate)
    result = sb.run(stdin="", args=("doctor", "--json"), program=program, check=False)
    assert "Traceback" not in result.err, result
    data = json.loads(result.out)
    check_schema(data)
    flagged = [c for c in data["checks"] if c["status"] != "ok"]
    assert flagged, data["checks"]
    assert any(word in c["detail"] or word in c["name"] for c in flagged), flagged
    table = sb.run(stdin="", args=("doctor",), program=program, check=False)
    assert word in table.out, table


def test_unchanged_plugin_copy_is_healthy(sandbox):
    """Guards the test above: the copy itself, unmutated, passes."""
    sb = sandbox(HEALTHY)
    program = _plugin_copy(sb, lambda hooks: None)
    result = sb.run(stdin="", args=("doctor", "--json"), program=program, check=False)
    data = json.loads(result.out)
    assert result.rc == 0 and data["ok"] is True, result
    assert all(c["status"] == "ok" for c in data["checks"] if "hook" in (c["name"] + c["detail"]).lower()
               and c["name"] != "installed")


CODEX_INSTALLED = '[plugins."briefing@briefing"]\nenabled = true\n'
CODEX_TRUSTED = CODEX_INSTALLED + "".join(
    '\n[hooks.state."briefing@briefing:hooks/hooks.codex.json:%s:0:0"]\n'
    'trusted_hash = "sha256:%s"\ntrusted_content_hash = "sha256:%s"\n' % (event, "a" * 64, "b" * 64)
    # every event of the Codex file: the trust check wants each one (PostToolUse and
    # UserPromptSubmit bring a compacted child's briefing back, issue 26)
    for event in (re.sub(r"(?<!^)([A-Z])", r"_\1", e).lower() for e in sorted(json.loads(
        (REPO / "hooks" / "hooks.codex.json").read_text(encoding="utf-8"))["hooks"])))


def _trust_warnings(data):
    return [c for c in data["checks"] if c["status"] != "ok" and "trust" in (c["name"] + c["detail"]).lower()
            and c["name"] != "installed"]


def codex_cache(sb, marketplace="briefing", root=REPO):
    """The copy ``codex plugin add`` leaves in the plugin cache: here a link to ``root``."""
    folder = sb.path("home/.codex/plugins/cache/%s/briefing" % marketplace)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1.0.0").symlink_to(root)


def test_codex_installed_without_trust_warns(sandbox):
    sb = sandbox(files(HEALTHY, {"home/.codex/config.toml": CODEX_INSTALLED}))
    codex_cache(sb)
    result, data = doctor_json(sb)
    assert result.rc == 0 and data["ok"] is True, result  # a warning, not a failure
    warned = _trust_warnings(data)
    assert warned and all(c["status"] == "WARN" for c in warned), data["checks"]
    detail = " ".join(c["detail"] for c in warned)
    assert "briefing@briefing" in detail or "hooks" in detail.lower(), detail  # names the cause
    table = doctor(sb)
    assert table.rc == 0 and "WARN" in table.out and "trust" in table.out.lower(), table


def test_codex_home_env_is_honoured_for_trust(sandbox):
    sb = sandbox(files(HEALTHY, {"elsewhere/codex/config.toml": CODEX_INSTALLED}))
    _, data = doctor_json(sb, env={"CODEX_HOME": str(sb.path("elsewhere/codex"))})
    assert _trust_warnings(data), data["checks"]


@pytest.mark.parametrize("config", [
    None,
    CODEX_TRUSTED,
    '[plugins."briefing@briefing"]\nenabled = false\n',
    '[plugins."other@somewhere"]\nenabled = true\n',
], ids=["no-config", "trusted", "disabled", "other-plugin"])
def test_no_trust_warning_when_not_needed(sandbox, config):
    extra = {"home/.codex/config.toml": config} if config is not None else {}
    sb = sandbox(files(HEALTHY, extra))
    codex_cache(sb)
    result, data = doctor_json(sb)
    assert result.rc == 0, result
    assert not _trust_warnings(data), data["checks"]


# --- --show ----------------------------------------------------------------------------------

def _parts_count(text):
    found = re.findall(r"part\D{0,3}1\s*(?:/|of)\s*(\d+)", text, re.I)
    return max(int(n) for n in found) if found else 0


@VIA
def test_show_prints_what_the_agent_receives(sandbox, via_link):
    sb = sandbox(HEALTHY)
    result = doctor(sb, "--show", "reviewer", via_link=via_link)
    assert result.rc == 0, result
    assert "ALPHA-BODY: the alpha procedure." in result.out, result
    assert "BETA-BODY: the beta procedure." in result.out, result
    assert "description: Use when" not in result.out  # frontmatter stripped, as delivered
    assert "claude" in result.out.lower()
    assert _parts_count(result.out) == 1, result


def test_show_splits_under_claude_codes_cap(sandbox):
    body = "".join("fragment line %05d of a long but deliverable skill\n" % i for i in range(500))
    assert 20000 < len(body) < 30000
    sb = sandbox({"project/.claude/agents/long.md": agent_md("long", ["longskill"]),
                  "project/.claude/skills/longskill/SKILL.md": skill_md("longskill", body)})
    result = doctor(sb, "--show", "long")
    assert result.rc == 0, result
    assert _parts_count(result.out) >= 3, result
    for i in (0, 250, 499):
        assert "fragment line %05d" % i in result.out


BLOCK = re.compile(r'<briefing agent="[^"]*" part="(\d+)/\d+" seal="[0-9a-f]+">\n.*?</briefing seal="[0-9a-f]+">\n?',
                   re.S)


def shown_sets(text):
    """The framed parts printed by --show, grouped into one list per briefing shown."""
    sets = []
    for match in BLOCK.finditer(text):
        if not sets or match.group(1) in {m.group(1) for m in sets[-1]}:
            sets.append([])
        sets[-1].append(match)
    return [[m.group(0).rstrip("\n") + "\n" for m in group] for group in sets]


def test_show_prints_the_exact_parts(sandbox):
    body = "".join("exact line %05d with <tags> & \"quotes\"\n" % i for i in range(600))
    sb = sandbox({"project/.claude/agents/long.md": agent_md("long", ["longskill", "alpha"]),
                  "project/.claude/skills/longskill/SKILL.md": skill_md("longskill", body),
                  "project/.claude/skills/alpha/SKILL.md": ALPHA})
    result = doctor(sb, "--show", "long", "--harness", "claude")
    sets = shown_sets(result.out)
    assert sets, result
    parts = sets[0]
    assert len(parts) >= 3
    for part in parts:
        assert len(part) <= CLAUDE_OUTPUT_LIMIT
    rebuilt = rebuild(parts)
    assert rebuilt.skills["longskill"] == body
    assert rebuilt.skills["alpha"] == ALPHA.split("---\n", 2)[2]
    # each part's size is stated
    for part in parts:
        assert str(len(part)) in result.out or str(len(part.rstrip("\n"))) in result.out, len(part)


def test_show_codex_is_one_context(sandbox):
    body = "".join("codex line %05d of a long skill\n" % i for i in range(800))
    sb = sandbox({"project/.codex/agents/long.toml": role_toml("long_role", ["longskill"]),
                  "project/.codex/skills/longskill/SKILL.md": skill_md("longskill", body)})
    result = doctor(sb, "--show", "long_role", "--harness", "codex")
    assert result.rc == 0, result
    sets = shown_sets(result.out)
    assert len(sets) == 1 and len(sets[0]) == 1, result  # Codex: the whole briefing in part 1
    assert rebuild(sets[0]).skills["longskill"] == body


def test_show_per_harness(sandbox):
    sb = sandbox({
        "project/.claude/agents/dual.md": agent_md("dual", ["alpha"]),
        "project/.claude/skills/alpha/SKILL.md": ALPHA,
        "project/.codex/agents/dual.toml": role_toml("dual", ["alpha"]),
        "project/.codex/skills/alpha/SKILL.md": CODEX_ALPHA,
    })
    result = doctor(sb, "--show", "dual")
    assert result.rc == 0, result
    assert "ALPHA-BODY" in result.out and "CODEX-ALPHA-BODY" in result.out, result
    lower = result.out.lower()
    assert "claude" in lower and "codex" in lower
    only = doctor(sb, "--show", "dual", "--harness", "codex")
    assert "CODEX-ALPHA-BODY" in only.out and "ALPHA-BODY: the alpha" not in only.out, only


def test_show_includes_the_claude_agent_session(sandbox):
    sb = sandbox(files(HEALTHY, {"project/.claude/agents/main.md": agent_md("main", ["alpha"], native=["beta"])}))
    result = doctor(sb, "--show", "main", "--harness", "claude")
    assert result.rc == 0, result
    assert "--agent" in result.out, result
    # a `claude --agent main` session gets the native skill too (Claude Code does not preload it there)
    assert "BETA-BODY" in result.out and "ALPHA-BODY" in result.out, result


@VIA
def test_show_unknown_agent(sandbox, via_link):
    sb = sandbox(HEALTHY)
    result = doctor(sb, "--show", "nobody-by-this-name", via_link=via_link)
    assert result.rc != 0, result
    text = (result.out + result.err)
    assert "nobody-by-this-name" in text, result
    assert len(text.strip().splitlines()) <= 3, result


def test_show_of_a_broken_agent_says_it_would_not_be_briefed(sandbox):
    sb = sandbox(files(HEALTHY, {"project/.claude/agents/broken.md": agent_md("broken", ["missing-one"])}))
    result = doctor(sb, "--show", "broken")
    assert result.rc == 1, result
    assert "missing-one" in result.out + result.err


# --- SessionStart pre-flight -------------------------------------------------------------------

def preflight(sb, payload, **kwargs):
    """Run every registered SessionStart briefing handler; the pre-flight speaks through one."""
    results = sb.run_parts(payload, **kwargs)
    for r in results:
        assert r.out == "" or r.data is not None, r
        if r.data is not None:
            assert "hookSpecificOutput" not in r.data, r  # would become model context
    spoken = [r for r in results if r.out.strip()]
    assert len(spoken) <= 1, spoken  # one message, not one per handler
    return spoken[0] if spoken else None


@pytest.mark.parametrize("source", ["startup", "resume"])
@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_healthy_project_hears_nothing(sandbox, source, harness):
    sb = sandbox(files(HEALTHY, {
        "project/.claude/agents/plain.md": agent_md("plain"),
        "project/.claude/agents/native.md": agent_md("native-ok", native=["alpha"]),
    }))
    assert preflight(sb, sb.payload("SessionStart", harness, source=source)) is None


def test_empty_project_hears_nothing(sandbox):
    sb = sandbox()
    assert preflight(sb, sb.payload("SessionStart", source="startup")) is None


BROKEN_CLAUDE = {"project/.claude/agents/team/broken.md": agent_md("broken", ["alpha", "no-such-skill"])}
BROKEN_CODEX = {"project/.codex/agents/bad.toml": role_toml("bad_role", ["absent_skill"])}


@pytest.mark.parametrize("source", ["compact", "clear"])
@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_silent_after_compact_and_clear(sandbox, source, harness):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE, BROKEN_CODEX))
    assert preflight(sb, sb.payload("SessionStart", harness, source=source)) is None


@pytest.mark.parametrize("source", ["startup", "resume"])
def test_reports_a_missing_skill(sandbox, source):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE))
    spoken = preflight(sb, sb.payload("SessionStart", source=source))
    assert spoken is not None
    assert set(spoken.data) == {"systemMessage"}, spoken
    message = spoken.system_message
    for needle in ("broken", "broken.md", "no-such-skill"):
        assert needle in message, (needle, message)
    assert "reviewer" not in message  # healthy agents are not listed


def test_only_the_sessions_harness(sandbox):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE, BROKEN_CODEX))
    claude = preflight(sb, sb.payload("SessionStart", "claude", source="startup")).system_message
    assert "broken" in claude and "bad_role" not in claude and "absent_skill" not in claude, claude
    codex = preflight(sb, sb.payload("SessionStart", "codex", source="startup")).system_message
    assert "bad_role" in codex and "bad.toml" in codex and "absent_skill" in codex, codex
    assert "no-such-skill" not in codex, codex


def test_codex_home_transcript_counts_as_codex(sandbox):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE, BROKEN_CODEX))
    payload = sb.payload("SessionStart", "codex", source="startup",
                         transcript_path=str(sb.path("ch/sessions/2026/11/30/rollout-y.jsonl")))
    message = preflight(sb, payload, env={"CODEX_HOME": str(sb.path("ch"))}).system_message
    assert "bad_role" in message and "no-such-skill" not in message, message


@pytest.mark.parametrize("transcript", [None, "", "/tmp/somewhere/session.jsonl", 17])
def test_inconclusive_transcript_checks_both(sandbox, transcript):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE, BROKEN_CODEX))
    payload = sb.payload("SessionStart", source="startup")
    if transcript is None:
        del payload["transcript_path"]
    else:
        payload["transcript_path"] = transcript
    message = preflight(sb, payload).system_message
    assert "no-such-skill" in message and "absent_skill" in message, message


def test_reports_too_large(sandbox):
    sb = sandbox(files(HEALTHY, {
        "project/.claude/agents/big.md": agent_md("big", ["huge"]),
        "project/.claude/skills/huge/SKILL.md": skill_md("huge", HUGE),
    }))
    message = preflight(sb, sb.payload("SessionStart", source="startup")).system_message
    assert "big" in message and "big.md" in message and "huge" in message, message


def test_reports_a_legacy_briefing_table(sandbox):
    legacy = 'name = "old_role"\ndescription = "d"\ndeveloper_instructions = "x"\n\n[briefing]\nskills = ["alpha"]\n'
    sb = sandbox(files(HEALTHY, {"project/.codex/agents/old.toml": legacy}))
    message = preflight(sb, sb.payload("SessionStart", "codex", source="startup")).system_message
    assert "old_role" in message and "old.toml" in message, message


@pytest.mark.parametrize("path,content,harness", [
    ("project/.claude/agents/garbled.md",
     "---\nname: garbled\ndescription: d\nbriefing:\n  skills: [alpha, beta\n---\nbody\n", "claude"),
    ("project/.codex/agents/garbled.toml",
     '# briefing: skills = ["alpha"\nname = "garbled"\ndescription = "d"\ndeveloper_instructions = "x"\n', "codex"),
], ids=["frontmatter", "toml-comment"])
def test_reports_an_unreadable_declaration(sandbox, path, content, harness):
    sb = sandbox(files(HEALTHY, {path: content}))
    spoken = preflight(sb, sb.payload("SessionStart", harness, source="startup"))
    assert spoken is not None
    assert os.path.basename(path) in spoken.system_message, spoken


def test_reports_every_failure_up_to_a_cap(sandbox):
    broken = {"project/.claude/agents/b%02d.md" % i: agent_md("broken-%02d" % i, ["gone-%02d" % i])
              for i in range(30)}
    sb = sandbox(files(HEALTHY, broken))
    message = preflight(sb, sb.payload("SessionStart", source="startup")).system_message
    lines = message.splitlines()
    assert len(lines) < 30, message
    more = re.search(r"(?:…|\.\.\.) and (\d+) more", message)
    assert more, message
    named = sum(1 for i in range(30) if "broken-%02d" % i in message)
    assert 0 < named < 30 and named + int(more.group(1)) == 30, (named, more.group(0), message)


def test_a_few_failures_are_all_named(sandbox):
    broken = {"project/.claude/agents/b%d.md" % i: agent_md("broken-%d" % i, ["gone-%d" % i]) for i in range(3)}
    sb = sandbox(files(HEALTHY, broken))
    message = preflight(sb, sb.payload("SessionStart", source="startup")).system_message
    for i in range(3):
        assert "broken-%d" % i in message and "b%d.md" % i in message and "gone-%d" % i in message, message
    assert "more" not in message


@pytest.mark.parametrize("stdin", [b"", b"{", b"[]", b'{"hook_event_name": "SessionStart"}',
                                   b'{"hook_event_name": "SessionStart", "source": "startup", "cwd": 5}'])
def test_odd_session_start_input_is_quiet(sandbox, stdin):
    sb = sandbox(files(HEALTHY, BROKEN_CLAUDE))
    for part in range(1, PARTS + 1):
        result = sb.run(stdin=stdin, args=("--part", part))
        assert result.data is None or "hookSpecificOutput" not in result.data, result
