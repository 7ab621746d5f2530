"""End-to-end: a skill an agent loaded stays loaded after a compaction, in Claude Code (issue 45).

Measured (facts/invoked-skills.md, and again on the pinned 2.1.328): Claude Code re-attaches
a skill its own process invoked after a compaction, cut to 20,000 characters, and after
``--resume`` re-attaches nothing. briefing gives back, at SessionStart(compact), what it will
not bring back whole: so after a compaction every loaded skill is in the agent's first
request exactly once, whole (the start and end markers of its body once each, the body in
one string), except that a skill Claude Code cut is there twice: its cut copy (no end
marker) and briefing's whole one.

The fake model (rules first match wins): Claude Code's summarizer gets a summary; a
post-compaction request runs ``echo POSTBASH`` and then ends; a prompt LOAD calls ``Skill``
for each skill listed in it; AUTO reports a prompt big enough to compact before the next
request; READ reads a project file.
"""
import json
import re
import subprocess
import sys
import threading
import time

import pytest

from compaction_kit import BIG, UsageAnthropic, is_claude_summarizer
from conftest import agent_md as unit_agent_md
from fakes import _collect_strings, bash, block_text, briefing_parts, spawn, tool_use
from framing import rebuild
from kit import Skill
from runners import REPO, Claude, _kill_group
from test_agent_sdk import briefing_site, sdk_python  # noqa: F401 (fixtures)

pytestmark = pytest.mark.e2e

SUMMARY = "<analysis>The agent worked.</analysis>\n<summary>LOADED-SUMMARY</summary>"
HEADER_START = "You loaded the skills below earlier in this session"


def strings(value, out):
    _collect_strings(value, out)
    return out


def last_result(r):
    block = r.last_tool_result
    return block_text(block.get("content")) if block else ""


def current_prompt(r):
    """The text of the last user message that is a prompt, not a tool result."""
    for message in reversed(r.messages):
        content = message.get("content")
        if message.get("role") != "user":
            continue
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                             for b in content):
            continue
        return block_text(content)
    return ""


def wanted(prompt):
    """The skills a prompt asks to load: ``LOAD=a,b``."""
    found = re.search(r"LOAD=([\w,-]+)", prompt)
    return found.group(1).split(",") if found else []


def script_for(subagent=None):
    """The fake model. ``subagent``: the main agent spawns it, and the subagent does the loading."""

    def script(r):
        if not r.has_tools:
            return "ok"
        if is_claude_summarizer(r):
            return SUMMARY
        if subagent and not r.is_subagent:
            return "All done." if r.last_tool_result else [
                spawn(subagent, prompt="LOAD=inv-big and then AUTO-COMPACT-NOW")]
        last = last_result(r)
        if "LOADED-SUMMARY" in r.all_text:
            return "final" if "POSTBASH" in last else [bash("echo POSTBASH")]
        prompt = current_prompt(r)
        names = wanted(prompt)
        if not r.last_tool_result:
            if "READ-NOTES-NOW" in prompt:
                return [tool_use("Read", {"file_path": READ_PATH[0]})]
            if names:
                return [tool_use("Skill", {"skill": names[0]})]
            if "AUTO-COMPACT-NOW" in prompt:
                r.usage = BIG
                return [bash("echo PREBASH")]
            return "noted"
        if "Launching skill: " in last:
            done = last.split("Launching skill: ", 1)[1].split()[0]
            if done in names and names.index(done) + 1 < len(names):
                return [tool_use("Skill", {"skill": names[names.index(done) + 1]})]
            if "AUTO-COMPACT-NOW" in prompt:
                r.usage = BIG
                return [bash("echo PREBASH")]
            return [bash("echo ONE")]
        return "done"
    return script


READ_PATH = [""]


class Session:
    """One ``claude -p --input-format stream-json`` process: each message is sent after the
    previous one's ``result``, as a person typing into one session would."""

    def __init__(self, claude, *args, timeout=150):
        argv = [claude.binary, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                "--verbose", "--include-hook-events", "--plugin-dir", str(REPO)] + list(args)
        self.proc = subprocess.Popen(argv, cwd=str(claude.project), env=claude.env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.events, self.deadline = [], time.monotonic() + timeout
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.events.append(event)
                self._lock.notify_all()
        with self._lock:
            self.events.append({"type": "eof"})
            self._lock.notify_all()

    def results(self):
        return [e for e in self.events if e.get("type") == "result"]

    def say(self, text):
        before = len(self.results())
        line = json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        with self._lock:
            while len(self.results()) == before:
                left = self.deadline - time.monotonic()
                assert left > 0, "no result for %r" % text
                assert not any(e.get("type") == "eof" for e in self.events), "claude ended before %r" % text
                self._lock.wait(left)
        return self.results()[-1]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            _kill_group(self.proc.pid)

    @property
    def session_id(self):
        return self.results()[-1]["session_id"]

    def hook_messages(self):
        return [json.loads(e["output"]).get("systemMessage", "") for e in self.events
                if e.get("type") == "system" and e.get("subtype") == "hook_response"
                and (e.get("output") or "").strip().startswith("{")]


def converse(claude, messages, *args):
    session = Session(claude, *args)
    try:
        for text in messages:
            session.say(text)
    finally:
        session.close()
    return session


@pytest.fixture
def machine(clis, tmp_path, serve):
    def make(script=None):
        server = serve(UsageAnthropic, script or script_for())
        claude = Claude(tmp_path, server)
        READ_PATH[0] = str(claude.project / "notes.md")
        return claude
    return make


def after_compaction(server, subagent=False):
    """The first request of the compacted agent after its summary (not the summarizer's)."""
    requests = [r for r in server.log if r.has_tools and r.is_subagent == subagent]
    post = [r for r in requests if not is_claude_summarizer(r) and "LOADED-SUMMARY" in r.all_text]
    assert post, "no request after a compaction"
    return post[0]


def whole_once(request, skill):
    """The skill's markers each once, and its whole body inside one string of the request."""
    text = request.all_text
    return (text.count(skill.start) == 1 and text.count(skill.end) == 1
            and any(skill.body.strip() in s for s in strings(request.body, [])))


def given_back(request):
    """The skills briefing gave back in ``request``, rebuilt from its parts: {name: text as loaded}.

    A skill over one hook output's 10,000 characters comes in fragments (rendering.py), which
    Claude Code joins into one piece, in the order the handlers finish, at SessionStart(compact).
    """
    prefix = "SessionStart hook additional context: "
    for text in strings(request.body, []):
        at = text.find(prefix)
        if at >= 0 and HEADER_START in text:
            parts = briefing_parts(text[at + len(prefix):])
            return rebuild([p for p in parts if HEADER_START in p or "continues the skills you loaded" in p]).skills
    return {}


def whole_given_back(request, skill):
    text = given_back(request).get(skill.name, "")
    return text.startswith("Base directory for this skill: ") and text.endswith(skill.body)


def audited(claude):
    """``briefing-doctor --audit --json`` in the project: its rows."""
    out = subprocess.run([sys.executable, str(REPO / "hooks" / "briefing-preload"), "doctor", "--audit", "--json",
                          "--harness", "claude"], cwd=str(claude.project), env=claude.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return json.loads(out.stdout)["audit"]


def install(claude, *skills, extra=None):
    files = {"project/.claude/skills/%s/SKILL.md" % s.name: s.md() for s in skills}
    files.update(extra or {})
    claude.write(files)


def test_resume_then_compact_gives_the_skill_back_once_whole(machine):
    claude = machine()
    main = Skill("inv-main")
    install(claude, main)
    first = converse(claude, ["LOAD=inv-main"])
    second = converse(claude, ["/compact", "go on"], "--resume", first.session_id)
    request = after_compaction(claude.server)
    assert whole_once(request, main), {m: request.all_text.count(m) for m in main.markers}
    assert whole_given_back(request, main)
    assert any("loaded skills again after compaction: inv-main" in m for m in second.hook_messages())
    later = [r for r in claude.server.log if r.has_tools and "LOADED-SUMMARY" in r.all_text
             and not is_claude_summarizer(r)]
    assert len(later) >= 2 and all(whole_once(r, main) for r in later)  # it stays, and no second copy comes


def test_resume_then_auto_compaction_gives_the_skill_back_once_whole(machine):
    claude = machine()
    main = Skill("inv-main")
    install(claude, main)
    first = converse(claude, ["LOAD=inv-main"])
    converse(claude, ["AUTO-COMPACT-NOW"], "--resume", first.session_id)
    request = after_compaction(claude.server)
    assert whole_once(request, main), {m: request.all_text.count(m) for m in main.markers}
    assert whole_given_back(request, main)


def test_same_process_claude_code_brings_it_back_and_briefing_adds_no_second_copy(machine):
    claude = machine()
    main = Skill("inv-main")
    install(claude, main)
    converse(claude, ["LOAD=inv-main", "/compact", "go on"])
    request = after_compaction(claude.server)
    assert whole_once(request, main)  # Claude Code's own copy, and no other
    assert HEADER_START not in request.all_text


def test_a_skill_claude_code_cut_comes_back_whole(machine):
    claude = machine()
    main, big = Skill("inv-main"), Skill("inv-big", size=30000)
    install(claude, main, big)
    converse(claude, ["LOAD=inv-main,inv-big AUTO-COMPACT-NOW"])
    request = after_compaction(claude.server)
    text = request.all_text
    assert whole_once(request, main)  # short: Claude Code's copy only
    assert text.count(big.end) == 1  # briefing's whole copy; Claude Code's stops at 20,000 characters
    assert text.count(big.start) == 2  # both are there, as docs/loaded-skills.md says
    assert whole_given_back(request, big) and list(given_back(request)) == ["inv-big"]
    rows = audited(claude)  # the audit reads it back: which skills, how large, at which event
    assert [(r["kind"], [(i["name"], i["bytes"]) for a in r["loaded_again"] for i in a["skills"]],
             [a["event"] for a in r["loaded_again"]]) for r in rows] == [
        ("main", [("inv-big", len(given_back(request)["inv-big"].encode()))], ["SessionStart"])]


def test_a_subagent_gets_its_briefing_and_then_the_skill_claude_code_cut(machine):
    claude = machine(script_for(subagent="skiller"))
    alpha, big = Skill("alpha", size=12000), Skill("inv-big", size=30000)
    install(claude, alpha, big, extra={"project/.claude/agents/skiller.md": unit_agent_md(
        "skiller", ["alpha"], body="You are an e2e test agent.\n")})
    converse(claude, ["Use the skiller."])
    request = after_compaction(claude.server, subagent=True)
    prefix = "SessionStart hook additional context: "
    context = [t for t in strings(request.body, []) if prefix in t][0].split(prefix, 1)[1]
    parts = briefing_parts(context)
    briefing = rebuild([p for p in parts if HEADER_START not in p and "continues the skills you loaded" not in p])
    assert briefing.skills == {"alpha": alpha.body}  # its own briefing, whole, once
    assert request.all_text.count(alpha.start) == 1
    assert whole_given_back(request, big) and list(given_back(request)) == ["inv-big"]
    assert request.all_text.count(big.end) == 1


def test_a_subagent_gets_the_skill_claude_code_cut_back_whole(machine):
    claude = machine(script_for(subagent="skiller"))
    big = Skill("inv-big", size=30000)
    install(claude, big, extra={"project/.claude/agents/skiller.md": unit_agent_md(
        "skiller", body="You are an e2e test agent.\n")})
    converse(claude, ["Use the skiller."])
    request = after_compaction(claude.server, subagent=True)
    assert request.all_text.count(big.end) == 1 and request.all_text.count(big.start) == 2
    assert whole_given_back(request, big)
    rows = audited(claude)
    assert [(r["agent"], r["verdict"], [i["name"] for a in r["loaded_again"] for i in a["skills"]]) for r in rows] \
        == [("skiller", "no-declaration", ["inv-big"])]
    for r in claude.server.main_requests():
        assert big.start not in r.all_text


@pytest.mark.parametrize("case", ["read a file", "loaded nothing", "switched off"])
def test_controls_nothing_comes_back(machine, case):
    claude = machine()
    main = Skill("inv-main")
    extra = {"project/notes.md": main.body}
    if case == "switched off":
        extra["project/.briefing/rules.json"] = json.dumps({"keep_loaded_skills": False})
    install(claude, main, extra=extra)
    opening = {"read a file": "READ-NOTES-NOW", "loaded nothing": "hello", "switched off": "LOAD=inv-main"}[case]
    first = converse(claude, [opening])
    converse(claude, ["/compact", "go on"], "--resume", first.session_id)
    request = after_compaction(claude.server)
    assert HEADER_START not in request.all_text
    # Claude Code re-attaches a file read before a compaction itself; briefing adds no copy.
    assert request.all_text.count(main.end) <= 1
    if case != "read a file":
        assert main.end not in request.all_text


def test_a_skill_the_user_ran_as_a_command_comes_back_after_resume(machine):
    claude = machine()
    main = Skill("inv-main")
    install(claude, main)
    first = converse(claude, ["/inv-main"])
    assert any(main.start in r.all_text for r in claude.server.log), "the /inv-main command loaded nothing"
    second = converse(claude, ["/compact", "go on"], "--resume", first.session_id)
    request = after_compaction(claude.server)
    assert whole_once(request, main) and whole_given_back(request, main)
    assert any("loaded skills again after compaction: inv-main" in m and "loaded by /inv-main" in m
               for m in second.hook_messages())


def test_agent_sdk_resume_then_auto_compaction_gives_the_skill_back(sdk_python, briefing_site, tmp_path, serve):
    """The Claude Agent SDK (its own Claude Code, 2.1.332): a query, then one that resumes it and compacts."""
    from test_agent_sdk import SdkRun
    run = SdkRun(tmp_path, serve(UsageAnthropic, script_for()), sdk_python, briefing_site)
    main = Skill("inv-main")
    run.write({"project/.claude/skills/inv-main/SKILL.md": main.md()})
    first = run.run({"prompt": "LOAD=inv-main", "with_briefing": {}, "setting_sources": ["project"]})
    session = [m["data"]["session_id"] for m in first["messages"] if m["class"] == "ResultMessage"][0]
    run.run({"prompt": "AUTO-COMPACT-NOW", "with_briefing": {}, "setting_sources": ["project"],
             "extra_args": {"resume": session}})
    request = after_compaction(run.server)
    assert whole_once(request, main) and whole_given_back(request, main)
