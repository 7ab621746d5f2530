"""End-to-end: skills a Qwen Code 0.24.4 session loaded come back after a compaction (issue 45).

Measured first (docs/loaded-skills.md): Qwen Code drops a ``skill`` tool result at a
compaction, main session and subagent alike. briefing's extension, installed as the README
says, gives the main session's back through SessionStart(``compact``), which Qwen Code runs
without waiting (so they are in the system prompt from the *second* request after the
compaction on), and through SessionStart(``resume``) when a compacted session is continued
(from its first request). A subagent gets no SessionStart: its loaded skills stay lost (pinned
here, so that a Qwen Code that changes this is noticed).

The fake model calls Qwen Code's own ``skill`` tool; the skill bodies carry a start and an
end marker (kit.Skill); "once, whole" means each marker once in the request and the body
rebuilt from the framing.
"""
import json
import subprocess
import sys
import time

import pytest

import qwen_runner
from fake_qwen import FakeQwen, call, say, unescaped
from framing import rebuild
from kit import Skill
from runners import REPO, Missing

pytestmark = pytest.mark.e2e

NEAR_LIMIT = 190000  # past context.autoCompactThreshold (0.85) of the default 200,000-token window
REPLY_SECONDS = 3
NOTES = "An ordinary file, NOTES-MARKER-5c1e.\n"
OPEN = '<qwen:session-start-context hidden="true">\nSessionStart additional context:\n'
CLOSE = "\n</qwen:session-start-context>"


@pytest.fixture(scope="module")
def qwen():
    try:
        return qwen_runner.qwen_cli()
    except Missing as missing:
        pytest.skip("e2e: %s" % missing)


def snapshot(request):
    return any("state_snapshot" in t for t in request.texts("user"))


def is_subagent(request):
    return "SUBAGENT-BODY" in request.system


def loaded_script(first, compact=True, done="DONE"):
    """The main agent makes the ``first`` call, then a shell call whose reply reports a prompt near
    the limit (Qwen Code compacts before the next request), then, after the compaction, one more
    shell call and its answer: two requests after the compaction."""
    def script(request):
        if request.is_summary:
            return say("<state_snapshot>the work so far</state_snapshot>", usage=NEAR_LIMIT)
        results = request.tool_results()
        if snapshot(request):
            if len(results) > 1:
                return say(done)
            # A real model's turn takes seconds; Qwen Code does not wait for SessionStart(compact), whose
            # context lands in the first request sent after the hook ends: an instant reply would outrun it.
            time.sleep(REPLY_SECONDS)
            return call("run_shell_command", {"command": "echo after"})
        if not results and first is not None:
            return first
        return call("run_shell_command", {"command": "echo before"}, usage=NEAR_LIMIT if compact else 100)
    return script


def files(*skills, extra=None):
    out = {"project/.qwen/skills/%s/SKILL.md" % s.name: s.md() for s in skills}
    out["project/notes.md"] = NOTES
    out.update(extra or {})
    return out


def context_block(request):
    """The SessionStart context in the request's system prompt, unescaped, or None."""
    system = request.system
    if OPEN not in system:
        return None
    return unescaped(system.split(OPEN, 1)[1].split(CLOSE, 1)[0])


def assert_back_once(request, skill):
    text = unescaped(request.all_text)
    assert [text.count(m) for m in skill.markers] == [1, 1], skill.markers
    rebuilt = rebuild([context_block(request)])
    assert rebuilt.agent == "main"
    body = rebuilt.skills[skill.name]
    # exactly the text Qwen Code's skill tool put into the context: its header, then the body
    assert body.startswith("Base directory for this skill: ") and body.endswith(skill.body), body[:300]


def after_compaction(server):
    return [r for r in server.log if not r.is_summary and snapshot(r) and not is_subagent(r)]


def test_a_loaded_skill_comes_back_from_the_second_request_after_the_compaction(qwen, tmp_path):
    skill = Skill("inv-main")
    run = qwen_runner.QwenRun(tmp_path, files(skill))
    with FakeQwen(loaded_script(call("skill", {"skill": skill.name}))) as server:
        proc = run.run(server, "Start the work.")
    assert proc.rc == 0 and not proc.timed_out and not server.errors, (proc, server.errors)
    first, second = after_compaction(server)[:2]
    # Qwen Code runs SessionStart(compact) without waiting: the first request is already on its way.
    assert skill.start not in unescaped(first.all_text)
    assert_back_once(second, skill)
    # The audit infers it from the chat record (Qwen Code keeps no hook's output): names, event.
    report = audit(run)
    assert [(row["kind"], [s["name"] for a in row["loaded_again"] for s in a["skills"]],
             [a["event"] for a in row["loaded_again"]]) for row in report["audit"]] == [
        ("main", [skill.name], ["SessionStart(compact) (inferred)"])], report


def audit(run):
    """The doctor's ``--audit --json`` over the run's records, as a person runs it in the project."""
    argv = [sys.executable, str(REPO / "bin" / "briefing-doctor"), "--audit", "--json", "--since", "3650",
            "--harness", "qwen"]
    proc = subprocess.run(argv, env=qwen_runner.base_env(run.home), cwd=str(run.project), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode in (0, 1) and b"Traceback" not in proc.stderr, proc
    return json.loads(proc.stdout.decode())


def test_a_resumed_compacted_session_gets_it_in_its_first_request(qwen, tmp_path):
    skill = Skill("inv-main")
    run = qwen_runner.QwenRun(tmp_path, files(skill))
    with FakeQwen(loaded_script(call("skill", {"skill": skill.name}), done="FIRST-DONE")) as server:
        assert run.run(server, "Start the work.").rc == 0
        started = len(server.log)
        server.script = lambda r: say("SECOND-DONE")
        proc = run.run(server, "Continue the work.", 180, "--continue")
    assert proc.rc == 0 and not server.errors, (proc, server.errors)
    resumed = [r for r in server.log[started:] if r.tool_names and not r.is_summary]
    assert resumed and snapshot(resumed[0]), "the resumed history is not the compacted one"
    assert_back_once(resumed[0], skill)


@pytest.mark.parametrize("case", ["ordinary file read", "nothing loaded", "switched off"])
def test_controls_get_nothing_back(qwen, tmp_path, case):
    skill = Skill("inv-main")
    extra = {}
    first = call("skill", {"skill": skill.name})
    if case == "ordinary file read":
        # Not the SKILL.md: Qwen Code itself re-attaches up to 5 recently read files after a compaction
        # (measured; docs/loaded-skills.md), so a SKILL.md read with read_file is not lost.
        first = call("read_file", {"file_path": str(tmp_path / "project" / "notes.md")})
    elif case == "nothing loaded":
        first = None
    else:
        extra = {"project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})}
    run = qwen_runner.QwenRun(tmp_path, files(skill, extra=extra))
    with FakeQwen(loaded_script(first)) as server:
        proc = run.run(server, "Start the work.")
    assert proc.rc == 0 and not server.errors, (proc, server.errors)
    after = after_compaction(server)
    assert len(after) == 2, server.log
    for request in after:
        assert context_block(request) is None or "<briefing" not in context_block(request)
        assert skill.start not in unescaped(request.all_text)
    if case == "ordinary file read":  # the read itself happened
        assert any(NOTES in r.all_text for r in server.log if not snapshot(r) and not r.is_summary)


def test_a_subagent_loses_its_loaded_skill_at_its_compaction(qwen, tmp_path):
    """The measured limit: no SessionStart for a compacted subagent, and nothing else reaches it."""
    skill = Skill("inv-sub")
    agent = "---\nname: skiller\ndescription: e2e skiller\n---\nSUBAGENT-BODY Do the task.\n"
    run = qwen_runner.QwenRun(tmp_path, files(skill, extra={"project/.qwen/agents/skiller.md": agent}))
    inner = loaded_script(call("skill", {"skill": skill.name}), done="SUB-DONE")

    def script(request):
        if request.is_summary or is_subagent(request):
            return inner(request)
        if request.tool_results():
            return say("MAIN-DONE")
        return call("agent", {"description": "e2e", "prompt": "TASK-FOR:skiller", "subagent_type": "skiller",
                              "run_in_background": False})
    with FakeQwen(script) as server:
        proc = run.run(server, "Start the work.")
    assert proc.rc == 0 and not server.errors, (proc, server.errors)
    loaded = [r for r in server.log if is_subagent(r) and skill.start in r.all_text and not snapshot(r)]
    after = [r for r in server.log if is_subagent(r) and snapshot(r)]
    assert loaded and len(after) == 2, server.log
    for request in after:
        assert skill.start not in unescaped(request.all_text) and skill.end not in unescaped(request.all_text)
