"""End-to-end: the real Factory Droid CLI 0.225.2, offline, briefing installed as
docs/factory-droid.md says (issue 46).

One session spawns the briefed and the control droid in parallel (two Task calls in one
turn), then the missing one and the big one; each test reads what the model requests carried.
A sub-droid answers VERDICT-BRIEFED only when its own request holds the secret only its skill
contains. A second session makes the briefed sub-droid compact twice (the fake reports a
prompt over ``compactionTokenLimit``) and reads the requests after each compaction.
"""
import json
import re

import pytest

from conftest import agent_md, skill_md
from fakes import text, tool_use
from framing import rebuild
import droid_runner
from droid_runner import FakeDroid, task
from runners import cli_or_skip

SECRET = "MAGIC-DROID-5e1b"
OTHER = "OTHER-DROID-77c0"
BIG = "".join("big skill line %05d, read me whole\n" % i for i in range(1875)) + "BIG-END-MARKER\n"  # 60,015 chars
BODY = "You are an e2e test droid. Do the task and report.\n"
MISSING_REASON = "briefing: agent 'missing' references unknown skill(s): no-such-skill"

DA = "project/.factory/droids/%s.md"
FILES = {
    "project/.factory/droids/briefed.md": agent_md("briefed", ["magic", "second"], body=BODY),
    "project/.factory/droids/other.md": agent_md("other", ["other-skill"], body=BODY),
    "project/.factory/droids/control.md": agent_md("control", body=BODY),
    "project/.factory/droids/missing.md": agent_md("missing", ["no-such-skill"], body=BODY),
    "project/.factory/droids/big.md": agent_md("big", ["big"], body=BODY),
    "project/.factory/skills/magic/SKILL.md": skill_md("magic", "The phrase is %s.\n" % SECRET),
    "project/.agents/skills/second/SKILL.md": skill_md("second", "Second skill, whole.\n"),
    "home/.factory/skills/other-skill/SKILL.md": skill_md("other-skill", "Other phrase %s.\n" % OTHER),
    "project/.factory/skills/big/SKILL.md": skill_md("big", BIG),
}
BODIES = {"magic": "The phrase is %s.\n" % SECRET, "second": "Second skill, whole.\n",
          "other-skill": "Other phrase %s.\n" % OTHER, "big": BIG}

# The turns of the main session: parallel spawns first, then one at a time.
TURNS = [["briefed", "other", "control"], ["missing"], ["big"]]


def spawning(turns):
    def script(request):
        if request.is_summary:
            return "SUMMARY of the sub-droid's work."
        if request.is_subagent:
            found = [s for s in (SECRET, OTHER, "BIG-END-MARKER") if request.contains(s)]
            return "VERDICT-BRIEFED %s" % " ".join(found) if found else "VERDICT-UNBRIEFED"
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        if done < len(turns):
            return [task(name, "TASK-FOR:%s report your verdict" % name) for name in turns[done]]
        return "MAIN-DONE"
    return script


def droid_or_skip():
    return cli_or_skip(droid_runner.droid_cli)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    droid_or_skip()
    run = droid_runner.DroidRun(tmp_path_factory.mktemp("droid-session"), FILES)
    with FakeDroid(spawning(TURNS)) as server:
        proc = run.run(server, "go")
    server.dump(run.home.parent / "requests.jsonl")
    assert not server.errors, server.errors
    assert proc.rc == 0 and not proc.timed_out, proc
    return server, run, proc


BRIEFING = re.compile(r'<briefing agent=.*?</briefing seal="[0-9a-f]+">', re.S)


def briefing_of(request):
    """The briefing parts in a sub-droid request's user messages: in front of the task, inside
    the Task prompt Droid renders (between its BEGIN/END TASK FROM PARENT AGENT lines)."""
    return [m.group(0) for t in request.user_texts() for m in BRIEFING.finditer(t)]


@pytest.mark.parametrize("droid, skills", [("briefed", ["magic", "second"]), ("other", ["other-skill"]),
                                           ("big", ["big"])])
def test_a_declaring_droids_first_request_holds_every_skill_once_whole(session, droid, skills):
    server, _, _ = session
    first = server.subagent_requests(droid)[0]
    parts = briefing_of(first)
    assert len(parts) == 1, parts
    rebuilt = rebuild(parts)
    assert rebuilt.agent == droid and not rebuilt.aborted
    assert rebuilt.skills == {s: BODIES[s] for s in skills}
    for s in skills:
        assert first.all_text.count(BODIES[s]) == 1, s


def test_parallel_droids_each_get_their_own_briefing(session):
    server, _, _ = session
    briefed, other = server.subagent_requests("briefed")[0], server.subagent_requests("other")[0]
    assert SECRET in briefed.all_text and OTHER not in briefed.all_text
    assert OTHER in other.all_text and SECRET not in other.all_text


def test_the_control_droid_gets_nothing(session):
    server, _, _ = session
    control = server.subagent_requests("control")[0]
    assert not briefing_of(control) and "<briefing agent=" not in control.all_text
    assert SECRET not in control.all_text and "VERDICT" not in control.all_text


def test_a_missing_skill_is_refused_with_briefings_reason_and_no_sub_droid_starts(session):
    server, run, _ = session
    assert not server.subagent_requests("missing")
    results = [r for req in server.main_requests() for r in req.tool_results()]
    refused = [body for is_error, body in results if MISSING_REASON in body]
    assert refused and all(is_error for is_error, body in results if MISSING_REASON in body), results
    starts = [records[0] for records in run.transcripts().values() if records]
    titles = [r.get("title", "") for r in starts if r.get("callingSessionId")]
    assert len(titles) == 4 and not any("missing" in t.lower() for t in titles), titles


def test_a_60000_character_briefing_arrives_whole(session):
    server, _, _ = session
    first = server.subagent_requests("big")[0]
    assert rebuild(briefing_of(first)).skills == {"big": BIG}


def test_the_briefing_opens_the_task_and_the_parent_never_holds_it(session):
    """The guard's ``updatedInput`` puts the briefing in front of the task the parent model wrote,
    inside the prompt Droid renders for the sub-droid; the parent's own requests keep the Task
    call as the model wrote it (facts 3g), so the parent's context carries no skill text."""
    server, _, _ = session
    prompt = [t for t in server.subagent_requests("briefed")[0].user_texts() if t.startswith("# Task Tool")]
    assert len(prompt) == 1, prompt
    task_start = prompt[0].index("---BEGIN TASK FROM PARENT AGENT---\n") + len("---BEGIN TASK FROM PARENT AGENT---\n")
    assert prompt[0].startswith('<briefing agent="briefed"', task_start), prompt[0][:400]
    assert prompt[0].rstrip().endswith("TASK-FOR:briefed report your verdict\n---END TASK FROM PARENT AGENT---")
    for request in server.main_requests():
        assert BODIES["magic"] not in request.all_text and "<briefing agent=" not in request.all_text
    control = [t for t in server.subagent_requests("control")[0].user_texts() if t.startswith("# Task Tool")]
    assert "<briefing" not in control[0] and "TASK-FOR:control" in control[0]


# -- compaction -----------------------------------------------------------------

def compacting(turns):
    """The briefed sub-droid reads a file once per entry of ``turns``, each reply reporting that
    many input tokens: over ``compactionTokenLimit`` (15,000) Droid compacts it before its next
    request. A second compaction needs a turn under the limit in between (Droid skips one after a
    compaction that did not bring usage under it: read in 0.225.2)."""
    def script(request):
        if request.is_summary:
            return "SUMMARY-OF-SUB-DROID."
        if request.is_subagent or "SUMMARY-OF-SUB-DROID" in request.all_text:
            done = sum(1 for r in server_log[0] if (r.is_subagent or "SUMMARY-OF-SUB-DROID" in r.all_text)
                       and r.index < request.index)
            if done < len(turns):
                return [tool_use("Read", {"file_path": str(project[0] / "hello.txt")})], turns[done]
            return "VERDICT-BRIEFED" if request.contains(SECRET) else "VERDICT-UNBRIEFED"
        if not request.tool_results():
            return [task("briefed", "TASK-FOR:briefed read hello.txt, then report")]
        return "MAIN-DONE"
    server_log, project = [], []
    return script, server_log, project


def test_after_each_compaction_of_the_sub_droid_its_next_request_holds_the_briefing_once(tmp_path):
    droid_or_skip()
    run = droid_runner.DroidRun(tmp_path, dict(FILES, **{"project/hello.txt": "HELLO-FILE\n"}))
    script, server_log, project = compacting([19500, 500, 19500, 500])
    project.append(run.project)
    with FakeDroid(script) as server:
        server_log.append(server.log)
        proc = run.run(server, "go", compactionTokenLimit=15000)
    server.dump(tmp_path / "requests.jsonl")
    assert proc.rc == 0 and not proc.timed_out, proc
    summaries = [r for r in server.log if r.is_summary]
    assert len(summaries) >= 2, [(r.index, r.is_summary, r.is_subagent) for r in server.log]
    for summary in summaries:
        after = [r for r in server.log if r.index > summary.index and not r.is_summary and r.has_tools
                 and "SUMMARY-OF-SUB-DROID" in r.all_text]
        assert after, "no sub-droid request after a compaction"
        nxt = after[0]
        parts = briefing_of(nxt)
        assert len(parts) == 1 and rebuild(parts).skills == {s: BODIES[s] for s in ("magic", "second")}
        assert nxt.all_text.count(BODIES["magic"]) == 1


def test_the_preflight_shows_a_broken_declaration_to_the_human_not_the_model(session):
    """Droid records a SessionStart systemMessage as a user_only message of the main session
    (its TUI shows it; exec prints nothing): measured."""
    server, run, _ = session
    mains = [records for records in run.transcripts().values() if records and not records[0].get("callingSessionId")]
    assert len(mains) == 1
    shown = [h.get("stdout", "") for line in mains[0] if isinstance(line.get("message"), dict)
             and line["message"].get("hookEventName") == "SessionStart"
             for h in line["message"].get("hookResults") or ()]
    preflight = [json.loads(s)["systemMessage"] for s in shown if s.startswith("{")]
    assert len(preflight) == 1 and "'missing'" in preflight[0] and "no-such-skill" in preflight[0], shown
    assert not any("briefing pre-flight" in r.all_text for r in server.log)


def test_the_doctor_and_the_audit_agree_with_the_runs(session):
    _, run, _ = session
    doctor = run.doctor("--harness", "droid", "--json")
    assert doctor.rc == 1, doctor
    report = json.loads(doctor.stdout)
    verdicts = {a["agent"]: a["status"] for a in report["agents"] if a.get("harness") == "droid"}
    assert verdicts.get("missing") == "FAIL" and verdicts.get("briefed") == "ok", verdicts
    installed = [c for c in report["checks"] if c["name"] == "installed" and c.get("harness") == "droid"]
    assert installed and installed[0]["status"] == "ok", installed
    audit = run.doctor("--harness", "droid", "--audit", "--json")
    assert audit.rc in (0, 1), audit
    runs = {r["agent"]: r["verdict"] for r in json.loads(audit.stdout)["audit"]}
    assert runs == {"briefed": "briefed", "other": "briefed", "control": "no-declaration", "missing": "refused",
                    "big": "briefed"}, runs


def test_a_compaction_that_removes_the_prompt_is_followed_by_the_briefing_once_at_the_next_ls_execute_or_create(tmp_path):
    """The common case at a real compaction (docs/factory-droid.md "Compaction"): Droid keeps the
    newest messages that fit about 17,500 tokens, here the last file read, and removes everything
    before them, the Task prompt and its briefing included; no hook runs before the next request.
    The sub-droid's next LS, Execute or Create call (hooks.json's PostToolUse matcher) brings the
    briefing back as that call's context: once, and again after a second such compaction. A Read
    (a name Claude Code's tools share, so not in the matcher) brings nothing."""
    droid_or_skip()
    big = "".join("big line %06d of a long file\n" % i for i in range(4000))  # ~15,000 tokens as Droid reads it
    run = droid_runner.DroidRun(tmp_path, dict(FILES, **{"project/hello.txt": "HELLO-FILE\n", "project/big.txt": big}))
    read = lambda name: tool_use("Read", {"file_path": str(run.project / name)})
    steps = [  # (the sub-droid's answer, input tokens it reports), one per request of it
        (read("big.txt"), 500), (read("big.txt"), 500), (read("hello.txt"), 19500),  # compaction 1
        (read("hello.txt"), 500),  # after it: no briefing, and a Read brings none
        (tool_use("LS", {"directory_path": str(run.project)}), 500),  # brings it back
        (tool_use("Execute", {"summary": "Print a short greeting", "command": "echo hi"}), 500),  # not again
        (read("big.txt"), 500), (read("big.txt"), 500), (read("hello.txt"), 19500),  # compaction 2
        (tool_use("Create", {"file_path": str(run.project / "out.txt"), "content": "x\n"}), 500),  # back
    ]
    seen = []  # the briefing's copies in each request of the sub-droid, in order

    def script(request):
        if request.is_summary:
            return "SUMMARY-OF-SUB-DROID."
        if request.is_subagent or "SUMMARY-OF-SUB-DROID" in request.all_text:
            seen.append(len(briefing_of(request)))
            if len(seen) <= len(steps):
                answer, tokens = steps[len(seen) - 1]
                return [answer], tokens
            return "VERDICT-BRIEFED" if request.contains(SECRET) else "VERDICT-UNBRIEFED"
        if not request.tool_results():
            return [task("briefed", "TASK-FOR:briefed read the files, then report")]
        return "MAIN-DONE"

    with FakeDroid(script) as server:
        proc = run.run(server, "go", compactionTokenLimit=15000)
    server.dump(tmp_path / "requests.jsonl")
    assert proc.rc == 0 and not proc.timed_out, proc
    assert len([r for r in server.log if r.is_summary]) == 2, seen
    #     read big, big, hello | read  LS  Exec big  big  hello | Create  report
    assert seen == [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1], seen
    subs = [r for r in server.log if not r.is_summary and (r.is_subagent or "SUMMARY-OF-SUB-DROID" in r.all_text)]
    assert "# Task Tool Invocation" not in subs[3].all_text  # the task went with the briefing
    for i in (5, 10):
        back = rebuild(briefing_of(subs[i]))
        assert back.skills == {s: BODIES[s] for s in ("magic", "second")} and subs[i].all_text.count(BODIES["magic"]) == 1
    audit = run.doctor("--harness", "droid", "--audit", "--json")
    rows = json.loads(audit.stdout)["audit"]
    assert [(r["agent"], r["verdict"], r["compactions"]) for r in rows] == [("briefed", "briefed", 2)], rows


# -- what each CLI runs of the shared hooks/hooks.json ----------------------------

def log_starts(hooks_json, log):
    """Make every briefing handler log ``<event> sh`` as its shell starts and ``<event> py`` just
    before it starts the interpreter (after Droid's gate): one line per process of each kind."""
    data = json.loads(hooks_json.read_text())
    for event, groups in data["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                command = handler["command"]
                at = command.index("python3 -I -S -B")
                handler["command"] = "echo '%s sh' >> '%s'; %secho '%s py' >> '%s'; %s" % (
                    event, log, command[:at], event, log, command[at:])
    hooks_json.write_text(json.dumps(data, indent=2))


def starts(log):
    counts = {}
    for line in log.read_text().splitlines() if log.exists() else ():
        counts[line] = counts.get(line, 0) + 1
    return counts


def test_one_spawn_costs_droid_one_interpreter_and_claude_code_what_it_did(tmp_path, clis):
    """Droid: the guard, which also delivers; the sub-droid's SessionStart handlers are shells that
    exit (part 1 after reading the payload), and the main session's part 1 is its pre-flight, once
    per session. Claude Code, from the same file: its guard, its 8 SubagentStart and 8 SessionStart
    parts as before, and no UserPromptSubmit handler at all."""
    from fakes import FakeAnthropic
    from kit import claude_spawner
    from runners import REPO, Claude, tracked_copy
    droid_or_skip()
    run = droid_runner.DroidRun(tmp_path / "droid", FILES)
    cache = next((run.home / ".factory" / "plugins" / "cache").glob("*/*/*/hooks/hooks.json"))
    # The template HOME's copy is shared: instrument a copy of the plugin this run alone points at.
    record = next((run.home / ".factory" / "plugins" / "installed_plugins").glob("briefing-*.json"))
    entry = json.loads(record.read_text())
    mine = tmp_path / "droid-plugin"
    import shutil
    shutil.copytree(str(cache.parent.parent), str(mine), symlinks=True)
    entry["entry"]["installPath"] = str(mine)
    record.write_text(json.dumps(entry))
    log = tmp_path / "droid-starts.log"
    log_starts(mine / "hooks" / "hooks.json", log)
    with FakeDroid(spawning([["briefed"]])) as server:
        proc = run.run(server, "go")
    assert proc.rc == 0, proc
    assert briefing_of(server.subagent_requests("briefed")[0]), "not briefed through the instrumented copy"
    assert starts(log) == {"SessionStart sh": 16, "SessionStart py": 1,  # the main session's pre-flight
                           "PreToolUse sh": 1, "PreToolUse py": 1}, starts(log)

    plugin = tracked_copy(REPO, tmp_path / "claude-plugin")
    claude_log = tmp_path / "claude-starts.log"
    log_starts(plugin / "hooks" / "hooks.json", claude_log)
    with FakeAnthropic(claude_spawner(["briefed"], ["SECRET"])) as anthropic:
        claude = Claude(tmp_path / "claude", anthropic)
        claude.write({"project/.claude/agents/briefed.md": agent_md("briefed", ["magic"]),
                      "project/.claude/skills/magic/SKILL.md": skill_md("magic", "SECRET\n")})
        result = claude.run("go", plugin_dirs=(plugin,))
    assert result.rc == 0, result
    assert starts(claude_log) == {"SessionStart sh": 8, "SessionStart py": 8, "PreToolUse sh": 1,
                                  "PreToolUse py": 1, "SubagentStart sh": 8, "SubagentStart py": 8}, starts(claude_log)


def test_a_rule_briefs_a_built_in_and_a_plugin_droid(tmp_path):
    """Droids nobody edits: the built-in ``worker`` and a droid another plugin ships (spawned by its
    plain name), briefed by .briefing/rules.json."""
    import subprocess
    from runners import run_process
    droid_or_skip()
    plug = {"plug/.claude-plugin/plugin.json": json.dumps({"name": "plug", "version": "1.0.0"}),
            "plug/.claude-plugin/marketplace.json": json.dumps(
                {"name": "plug", "owner": {"name": "e2e"}, "plugins": [{"name": "plug", "source": "./"}]}),
            "plug/agents/plugdroid.md": agent_md("plugdroid", body=BODY)}
    rules = {"project/.briefing/rules.json": json.dumps({"rules": [
        {"agents": ["worker", "plugdroid"], "skills": ["magic"], "harness": "droid"}]})}
    run = droid_runner.DroidRun(tmp_path, dict(FILES, **dict(plug, **rules)))
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@localhost", "commit", "-qm", "plug"]):
        subprocess.run(argv, cwd=str(tmp_path / "plug"), check=True, stdout=subprocess.PIPE)
    for argv in (["plugin", "marketplace", "add", str(tmp_path / "plug")], ["plugin", "install", "plug@plug"]):
        proc = run_process([droid_runner.droid_cli()] + argv, droid_runner.base_env(run.home), run.home, 120)
        assert proc.rc == 0, proc
    with FakeDroid(spawning([["worker", "plugdroid"]])) as server:
        proc = run.run(server, "go")
    server.dump(tmp_path / "requests.jsonl")
    assert proc.rc == 0 and not proc.timed_out, proc
    for droid in ("worker", "plugdroid"):
        first = server.subagent_requests(droid)[0]
        assert rebuild(briefing_of(first)).skills == {"magic": BODIES["magic"]}, droid


def test_one_name_is_one_text_the_briefing_delivers_the_file_droids_skill_tool_loads(tmp_path):
    """A skill name in every root Droid reads: briefing delivers the body Droid's own Skill tool
    loads for that name (measured order: the project's .factory, its .agents, then personal)."""
    roots = {"project/.factory/skills/a/SKILL.md": "PROJECT-FACTORY", "project/.agents/skills/b/SKILL.md":
             "PROJECT-AGENTS", "home/.factory/skills/c/SKILL.md": "USER-FACTORY",
             "home/.agents/skills/d/SKILL.md": "USER-AGENTS"}
    files = {path: skill_md("dup", "DUP-FROM-%s\n" % where) for path, where in roots.items()}
    files.update({path.replace("/a/", "/x/").replace("/b/", "/y/"): skill_md("dup2", "DUP2-FROM-%s\n" % where)
                  for path, where in roots.items() if where in ("PROJECT-AGENTS", "USER-FACTORY")})
    files[DA % "dupper"] = agent_md("dupper", ["dup", "dup2"], body=BODY)
    droid_or_skip()
    run = droid_runner.DroidRun(tmp_path, files)

    def script(request):
        if request.is_summary:
            return "SUMMARY."
        if request.is_subagent:
            return "VERDICT"
        done = len(request.tool_results())
        if done < 2:
            return [tool_use("Skill", {"skill": ("dup", "dup2")[done]})]
        if done == 2:
            return [task("dupper", "TASK-FOR:dupper")]
        return "MAIN-DONE"

    with FakeDroid(script) as server:
        proc = run.run(server, "go")
    server.dump(tmp_path / "requests.jsonl")
    assert proc.rc == 0 and not proc.timed_out, proc
    loaded = [body for _, body in server.main_requests()[-1].tool_results()[:2]]
    skills = rebuild(briefing_of(server.subagent_requests("dupper")[0])).skills
    for name, text in zip(("dup", "dup2"), loaded):
        assert skills[name].strip() in text, (name, skills[name], text)
    assert skills == {"dup": "DUP-FROM-PROJECT-FACTORY\n", "dup2": "DUP2-FROM-PROJECT-AGENTS\n"}
