"""Depth and length of untrusted input never crash the hook (issue 36, holes 1 and 2).

Nothing in the hook recurses once per path component, per nesting level or per
list item of untrusted input; every entry, path and nesting depth has a
documented bound past which it is refused with a reason, never an internal error
(which would let the spawn through unbriefed: the guard prints nothing).

Layout: 1 deep paths (``files:`` entries, globs into deep trees, link chains, a
deep project; ``real_path`` against ``os.path.realpath`` over generated trees)
2 deep JSON (the payload read and written at any depth; Gemini CLI's guard, which
echoes the spawn's arguments, refuses what it cannot pass on; every other guard
and start path unaffected).
"""
import json
import os
import random
import sys

import pytest

from conftest import Symlink, agent_md, hook_package, role_toml, skill_md
from framing import rebuild

hook_package()  # ``briefing`` importable: the tests below also call its functions directly

RULES = "project/.briefing/rules.json"
SEED = int(os.environ.get("BRIEFING_PROPERTY_SEED", "20261203"))


def rules(*pairs):
    return json.dumps({"rules": [{"agents": agents, "files": list(files)} for agents, files in pairs]})


def guard_reason(result):
    data = result.data or {}
    return data.get("hookSpecificOutput", {}).get("permissionDecisionReason") or data.get("reason")


def spawn_contexts(sb, agent, env=None):
    return [r.context for r in sb.run_parts(sb.spawn(agent), env=env) if r.context]


def doctor_row(sb, agent, env=None):
    out = sb.doctor("--cwd", str(sb.project), "--harness", "claude", "--json", env=env)
    assert "Traceback" not in out.err, out
    return [r for r in out.data["agents"] if r["agent"] == agent][0], out


# --------------------------------------------------------------------------------------------
# 1. Deep paths
# --------------------------------------------------------------------------------------------

DEEP_ENTRY = "d/" * 400 + "f.md"  # about 800 characters: once a RecursionError in Machine.real_path


@pytest.mark.parametrize("entry, problem", [
    (DEEP_ENTRY, "a path of 401 names, over the 64-name limit"),
    ("x" * 2000 + ".md", "a path of 2003 characters, over the 1024-character limit"),
    ("d/" * 64 + "f.md", "a path of 65 names, over the 64-name limit"),
], ids=["401-names", "2003-characters", "65-names"])
def test_an_entry_past_the_bounds_is_refused_naming_it_everywhere(sandbox, entry, problem):
    sb = sandbox({RULES: rules(("Explore", [entry]))})
    reason = guard_reason(sb.run(sb.guard("Explore")))
    assert reason and "undeliverable file(s)" in reason and problem in reason, reason
    assert entry[:20] in reason and len(reason.encode("utf-8")) < 2000, reason
    got = rebuild(spawn_contexts(sb, "Explore"))
    assert got.aborted
    row, out = doctor_row(sb, "Explore")
    assert out.rc == 1 and row["status"] == "FAIL" and any(problem in p for p in row["problems"]), row
    start = sb.run(sb.payload("SessionStart", source="startup"), args=("--part", 1))
    assert "Explore" in start.system_message and "undeliverable" in start.system_message, start


def test_an_entry_at_the_bounds_is_delivered(sandbox):
    entry = "d/" * 63 + "f.md"  # 64 names
    sb = sandbox({"project/" + entry: "DEEP", RULES: rules(("Explore", [entry]))})
    assert sb.run(sb.guard("Explore")).data is None
    assert rebuild(spawn_contexts(sb, "Explore")).files == {entry: "DEEP"}
    row, _ = doctor_row(sb, "Explore")
    assert row["status"] == "ok", row


@pytest.mark.parametrize("depth", [70, 400])
def test_a_glob_reaching_past_the_depth_bound_is_refused(sandbox, depth):
    deep = "project/docs/" + "d/" * depth + "f.md"
    sb = sandbox({deep: "DEEP", "project/docs/a.md": "A", RULES: rules(("Explore", ["docs/**/*.md"]))})
    reason = guard_reason(sb.run(sb.guard("Explore")))
    assert reason and "(the glob goes deeper than 64 folders: narrow it)" in reason, reason
    assert rebuild(spawn_contexts(sb, "Explore")).aborted
    row, _ = doctor_row(sb, "Explore")
    assert row["status"] == "FAIL" and any("the glob goes deeper than 64 folders" in p for p in row["problems"])


def test_a_glob_within_the_depth_bound_matches_deep_files(sandbox):
    deep = "docs/" + "d/" * 60 + "f.md"
    sb = sandbox({"project/" + deep: "DEEP", RULES: rules(("Explore", ["docs/**/*.md"]))})
    assert rebuild(spawn_contexts(sb, "Explore")).files == {deep: "DEEP"}


def chain(files, last, length, prefix="project/links/l"):
    """``length`` links, each naming the next (relative), the last naming ``last``; returns the first."""
    for i in range(length):
        files["%s%d" % (prefix, i)] = Symlink("l%d" % (i + 1) if i + 1 < length else last)
    return prefix.split("/", 1)[1] + "0"


def test_a_long_chain_of_links_is_refused_not_a_crash(sandbox):
    files = {"project/links/real.md": "REAL"}
    first = chain(files, "real.md", 1200)  # os.path.realpath recurses once per link before 3.13
    files[RULES] = rules(("Explore", [first]))
    sb = sandbox(files)
    reason = guard_reason(sb.run(sb.guard("Explore")))
    assert reason and "links/l0 (Too many levels of symbolic links)" in reason, reason
    assert rebuild(spawn_contexts(sb, "Explore")).aborted
    row, _ = doctor_row(sb, "Explore")
    assert row["status"] == "FAIL"


def test_a_short_chain_of_links_is_followed(sandbox):
    files = {"project/links/real.md": "REAL"}
    first = chain(files, "real.md", 10)
    files[RULES] = rules(("Explore", [first]))
    sb = sandbox(files)
    assert rebuild(spawn_contexts(sb, "Explore")).files == {first: "REAL"}


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_project_hundreds_of_folders_deep_is_briefed(sandbox, harness):
    rel = "project/" + "p/" * 400
    if harness == "claude":
        files = {rel + ".claude/agents/rev.md": agent_md("rev", ["s"]),
                 rel + ".claude/skills/s/SKILL.md": skill_md("s", "DEEP SKILL\n")}
    else:
        files = {rel + ".codex/agents/rev.toml": '# briefing: skills = ["s"]\n' + role_toml("rev"),
                 rel + ".codex/skills/s/SKILL.md": skill_md("s", "DEEP SKILL\n")}
    sb = sandbox(files)
    folder = str(sb.path(rel.rstrip("/")))
    env = {"CLAUDE_PROJECT_DIR": folder} if harness == "claude" else None
    payload = sb.spawn("rev", harness, cwd=folder)
    contexts = [r.context for r in (sb.run_parts(payload, env=env) if harness == "claude"
                                    else [sb.run(payload, env=env)]) if r.context]
    assert rebuild(contexts).skills == {"s": "DEEP SKILL\n"}
    out = sb.doctor("--cwd", folder, "--harness", harness, "--json", env=env)
    assert out.rc == 0 and "Traceback" not in out.err, out


# real_path against os.path.realpath, over generated trees of folders, links (relative,
# absolute, chained, looping, dangling) and paths through them with '.', '..' and ''.

def grow_tree(rng, root, folders=12, links=14):
    made = [root]
    for i in range(folders):
        path = os.path.join(rng.choice(made), "f%d" % i)
        os.makedirs(path, exist_ok=True)
        made.append(path)
    names = []
    for i in range(links):
        where = rng.choice(made)
        target = rng.choice(made + names + [os.path.join(where, "gone")])
        if rng.random() < 0.5:
            target = os.path.relpath(target, where)
        link = os.path.join(where, "l%d" % i)
        os.symlink(target, link)
        names.append(link)
    return made, names


def random_path(rng, root, made, names, depth):
    parts = [rng.choice(made + names)]
    for _ in range(depth):
        parts.append(rng.choice([".", "..", "", "x", "f%d" % rng.randrange(12), "l%d" % rng.randrange(14)]))
    return "/".join(parts)


def test_real_path_is_realpath_over_generated_trees(tmp_path):
    from briefing.files import real_path
    from briefing.machine import Machine
    rng = random.Random(SEED)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # the oracle recurses before Python 3.13
    try:
        for tree in range(20):
            root = str(tmp_path / ("t%d" % tree))
            os.makedirs(root)
            made, names = grow_tree(rng, root)
            machine = Machine(root, {"HOME": root})
            for _ in range(60):
                path = random_path(rng, root, made, names, rng.choice([0, 1, 3, 8, 300]))
                expected = os.path.realpath(path)
                assert real_path(path) == expected, path
                assert machine.real_path(path) == expected, path
    finally:
        sys.setrecursionlimit(limit)


def test_generated_files_entries_are_bounded_and_the_doctor_agrees(sandbox):
    """Entries of generated depth and length: refused exactly past the bounds (or when the file is
    not there), never a crash; the doctor says FAIL for exactly the agents the guard refuses."""
    from briefing.standing import ENTRY_CHARS, PATH_DEPTH
    rng = random.Random(SEED)
    files, expected = {}, {}
    for case in range(16):
        names = rng.choice([1, 30, PATH_DEPTH, PATH_DEPTH + 1, 200, 700])
        width = rng.choice([1, 3, 20])
        entry = "/".join(["c%d" % case + "n" * width] + ["n" * width] * (names - 2) + ["f.md"][:names])
        if names == 1:
            entry = "c%d.md" % case
        bounded = len(entry) > ENTRY_CHARS or len(entry.split("/")) > PATH_DEPTH
        exists = not bounded and rng.random() < 0.7
        if exists:
            files["project/" + entry] = "F"
        agent = "rev%d" % case
        files[".claude/agents/%s.md" % agent] = None
        files["project/.claude/agents/%s.md" % agent] = agent_md(
            agent, extra="briefing:\n  files:\n    - %s\n" % json.dumps(entry))
        del files[".claude/agents/%s.md" % agent]
        expected[agent] = (bounded, exists)
    sb = sandbox(files)
    out = sb.doctor("--cwd", str(sb.project), "--harness", "claude", "--json")
    assert "Traceback" not in out.err, out
    rows = {r["agent"]: r for r in out.data["agents"]}
    for agent, (bounded, exists) in expected.items():
        reason = guard_reason(sb.run(sb.guard(agent)))
        assert (reason is None) == exists, (agent, bounded, reason)
        assert (rows[agent]["status"] == "FAIL") == (not exists), (agent, rows[agent])
        if bounded:
            assert "limit" in reason and "limit" in " ".join(rows[agent]["problems"]), reason


# --------------------------------------------------------------------------------------------
# 2. Deep JSON: read and written at any depth; what Gemini CLI's guard cannot pass on is refused
# --------------------------------------------------------------------------------------------

def nested(depth, leaf="LEAF"):
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def nested_text(depth):
    return "".join('{"k": ' if i % 2 else "[" for i in reversed(range(depth))) + '"LEAF"' + "".join(
        "}" if i % 2 else "]" for i in range(depth))


@pytest.mark.parametrize("depth", [0, 1, 63, 64, 65, 500, 3000, 100000])
def test_json_is_read_and_written_at_any_depth(depth):
    from briefing.jsontext import dump_json, nesting_deeper, parse_json
    text = nested_text(depth)
    value = parse_json(text)
    assert dump_json(value) == text
    assert nesting_deeper(value, depth) is False and nesting_deeper(value, depth - 1) is (depth > 0)


def test_json_round_trips_generated_values():
    from briefing.jsontext import dump_json, parse_json, parse_nested
    rng = random.Random(SEED)

    def gen(depth):
        roll = rng.random()
        if depth > 7 or roll < 0.3:
            return rng.choice([0, -7, 2.5, 1e300, "", "x\u00e9\n\"\\", "\U0001F600", True, False, None])
        if roll < 0.65:
            return [gen(depth + 1) for _ in range(rng.randrange(4))]
        return {"k%d\u00e9" % i: gen(depth + 1) for i in range(rng.randrange(4))}

    for _ in range(2000):
        value = gen(0)
        text = json.dumps(value, indent=rng.choice([None, 0, 2]))
        assert dump_json(value) == json.dumps(value)
        assert parse_json(text) == value and parse_nested(text, 0) == (value, len(text))
    for bad in ["[1,]", '{"a" 1}', "[", "{", "[1 2]", '{"a": 1,}', "]", "[1]]", "{1: 2}", '{"a"}', "[" * 5000]:
        with pytest.raises(ValueError):
            parse_json(bad)


def gemini_env(sb):
    return {"GEMINI_SESSION_ID": "g-1", "GEMINI_PROJECT_DIR": str(sb.project), "GEMINI_CWD": str(sb.project),
            "CLAUDE_PROJECT_DIR": str(sb.project)}


def gemini_spawn(sb, agent, extra):
    return {"session_id": "g-1", "cwd": str(sb.project), "hook_event_name": "BeforeTool",
            "transcript_path": str(sb.home / ".gemini" / "tmp" / "project" / "chats" / "session-1.jsonl"),
            "tool_name": "invoke_agent", "tool_input": {"agent_name": agent, "prompt": "ORIGINAL", "extra": extra}}


def with_deep(payload, depth, where=("tool_input",)):
    """``payload`` as stdin text, with an ``extra`` key nested ``depth`` levels deep in ``where``
    (written out by hand: json.dumps itself recurses once per level)."""
    target = payload
    for key in where:
        target = target[key]
    target["extra"] = "@DEEP@"
    return json.dumps(payload).replace('"@DEEP@"', nested_text(depth))


GEMINI_FILES = {
    "home/.gemini/agents/rev.md": "---\nname: rev\ndescription: d\n---\nbody\n<!-- briefing: skills = [\"s\"] -->\n",
    "home/.gemini/agents/plain.md": "---\nname: plain\ndescription: d\n---\nbody\n",
    "home/.gemini/agents/ghost.md": "---\nname: ghost\ndescription: d\n---\nbody\n<!-- briefing: skills = [\"nope\"] -->\n",
    "home/.gemini/skills/s/SKILL.md": skill_md("s", "SKILL BODY\n"),
}


@pytest.mark.parametrize("depth", [1, 63, 64, 65, 500, 5000, 100000])
def test_gemini_guard_echoes_what_it_can_and_refuses_what_it_cannot(sandbox, depth):
    """``depth``: of the whole tool_input (itself one level); SPAWN_INPUT_DEPTH is 64."""
    sb = sandbox(GEMINI_FILES)
    out = sb.run(stdin=with_deep(gemini_spawn(sb, "rev", None), depth - 1), env=gemini_env(sb))
    if depth <= 64:
        echoed = out.data["hookSpecificOutput"]["tool_input"]
        assert echoed["extra"] == nested(depth - 1) and echoed["prompt"].endswith("\n\nORIGINAL"), out
        assert "SKILL BODY" in echoed["prompt"]
    else:
        assert out.data["decision"] == "deny", out
        assert out.data["reason"].startswith(
            "briefing: agent 'rev' cannot be briefed: its spawn's arguments nest more than 64 levels deep"), out
    # An agent that declares nothing is passed on untouched; a missing skill is refused as always.
    assert sb.run(stdin=with_deep(gemini_spawn(sb, "plain", None), depth - 1), env=gemini_env(sb)).data is None
    missing = sb.run(stdin=with_deep(gemini_spawn(sb, "ghost", None), depth - 1), env=gemini_env(sb)).data
    assert missing["decision"] == "deny" and "unknown skill(s): nope" in missing["reason"], missing


def test_gemini_guard_deep_input_through_a_real_process(sandbox):
    sb = sandbox(GEMINI_FILES)
    out = sb.run(stdin=with_deep(gemini_spawn(sb, "rev", None), 20000), env=gemini_env(sb), python=sys.executable)
    assert out.data["decision"] == "deny" and "nest more than 64 levels deep" in out.data["reason"], out


@pytest.mark.parametrize("harness", ["claude", "codex", "copilot"])
@pytest.mark.parametrize("depth", [65, 5000])
def test_other_guards_and_starts_read_deep_payloads_as_usual(sandbox, harness, depth):
    if harness == "codex":
        files = {"project/.codex/agents/rev.toml": '# briefing: skills = ["s"]\n' + role_toml("rev"),
                 "project/.codex/agents/ghost.toml": '# briefing: skills = ["nope"]\n' + role_toml("ghost"),
                 "project/.codex/skills/s/SKILL.md": skill_md("s", "SKILL BODY\n")}
    else:
        where = ".claude" if harness == "claude" else ".github"
        files = {"project/%s/agents/rev.md" % where: agent_md("rev", ["s"]),
                 "project/%s/agents/ghost.md" % where: agent_md("ghost", ["nope"]),
                 "project/%s/skills/s/SKILL.md" % where: skill_md("s", "SKILL BODY\n")}
    sb = sandbox(files)
    env = sb.copilot_env() if harness == "copilot" else None
    assert sb.run(stdin=with_deep(sb.guard("rev", harness), depth), env=env).data is None
    assert "unknown skill(s): nope" in guard_reason(sb.run(stdin=with_deep(sb.guard("ghost", harness), depth),
                                                          env=env))
    out = sb.run(stdin=with_deep(sb.spawn("rev", harness), depth, where=()), args=("--part", 1), env=env)
    assert "SKILL BODY" in (out.flat_context if harness == "copilot" else out.context), out


def test_a_deeply_nested_legacy_codex_role_is_unreadable_not_a_crash(sandbox):
    # tomllib (3.11+) recurses once per nested array: the legacy [briefing] table's reader says so.
    deep = "[" * 5000 + "]" * 5000
    role = 'name = "rev"\ndeveloper_instructions = "x"\nextra = %s\n[briefing]\nskills = ["s"]\n' % deep
    sb = sandbox({"project/.codex/agents/rev.toml": role, "project/.codex/skills/s/SKILL.md": skill_md("s", "S\n")})
    guard = sb.run(sb.guard("rev", "codex"))
    assert guard.data is None, guard  # an unreadable role is never a deny
    start = sb.run(sb.spawn("rev", "codex"), args=("--part", 1))
    if sys.version_info >= (3, 11):  # tomllib reads the whole file, and gives up on its depth
        assert "NOT briefed" in start.system_message, start
    else:  # the fallback reads the [briefing] table alone
        assert rebuild([start.context]).skills == {"s": "S\n"}, start
    out = sb.doctor("--cwd", str(sb.project), "--harness", "codex")
    assert "Traceback" not in out.err, out


# --------------------------------------------------------------------------------------------
# 3. Long lists: entries past FILE_ENTRIES are refused, each saying so; skills and files lists of
#    generated lengths give the same verdict in the guard and the doctor, in bounded words
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 255, 256, 257, 3000])
def test_generated_long_lists_are_refused_exactly_and_in_bounded_words(sandbox, count):
    from briefing.constants import DENY_LIMIT
    from briefing.standing import FILE_ENTRIES
    rng = random.Random(SEED + count)
    files, entries, missing = {}, [], False
    for i in range(count):
        kind = rng.choice(["plain", "glob", "gone"] if count < 300 else ["plain", "glob"])
        if kind == "plain":
            files["project/f/%d.md" % i] = "F%d" % i
            entries.append("f/%d.md" % i)
        elif kind == "glob":
            files["project/g/%d/a.md" % i] = "G%d" % i
            entries.append("g/%d/*.md" % i)
        else:
            entries.append("gone/%d.md" % i)
            missing = missing or i < FILE_ENTRIES
    skills = ["s%d" % i for i in range(count)]
    for name in skills:
        if count >= 300 or rng.random() < 0.95:
            files["project/.claude/skills/%s/SKILL.md" % name] = skill_md(name, "S\n")
        else:
            missing = True
    declaration = "briefing:\n  files: [%s]\n  skills: [%s]\n" % (", ".join(json.dumps(e) for e in entries),
                                                                  ", ".join(skills))
    files["project/.claude/agents/rev.md"] = agent_md("rev", extra=declaration)
    sb = sandbox(files)
    reason = guard_reason(sb.run(sb.guard("rev")))
    refused = count > FILE_ENTRIES or missing
    assert (reason is not None) == refused, (count, reason)
    if reason:
        assert len(reason.encode("utf-8")) < DENY_LIMIT, len(reason)
    row, out = doctor_row(sb, "rev")
    assert (row["status"] == "FAIL") == refused, row["status"]
    past = [m for e in row["files"][FILE_ENTRIES:] for m in e["matches"]]
    assert len(past) == max(0, count - FILE_ENTRIES) and all(
        m["problem"].startswith("past the 256 entries") for m in past), past[:1]
