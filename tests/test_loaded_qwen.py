"""Qwen Code's loaded skills after a compaction (issue 45): what the chat record shows, what comes back.

The record lines are shaped as Qwen Code 0.24.4 wrote them (docs/loaded-skills.md, measured):
an ``assistant`` entry with the ``skill`` functionCall, a ``tool_result`` entry with its
functionResponse (the text as loaded), and a ``system`` entry ``subtype: "chat_compression"``.
"""
import json

import pytest

from conftest import hook_package
from framing import rebuild

hook_package()

SKILL_TEXT = "Base directory for this skill: /p/.qwen/skills/%s\nImportant: ALWAYS resolve absolute paths.\n\n%s-BODY\n"


def call(name, call_id):
    return {"type": "assistant", "message": {"role": "model", "parts": [
        {"functionCall": {"id": call_id, "name": "skill", "args": {"skill": name}}}]}}


def result(name, call_id, status="success"):
    return {"type": "tool_result", "message": {"role": "user", "parts": [
        {"functionResponse": {"id": call_id, "name": "skill", "response": {"output": SKILL_TEXT % (name, name)}}}]},
        "toolCallResult": {"callId": call_id, "status": status}}


def load(name, call_id, status="success"):
    return [call(name, call_id), result(name, call_id, status)]


def read(name, call_id):
    """A read_file of the SKILL.md: an ordinary tool call, not a loaded skill."""
    return [{"type": "assistant", "message": {"role": "model", "parts": [
        {"functionCall": {"id": call_id, "name": "read_file", "args": {"file_path": "/p/SKILL.md"}}}]}},
        {"type": "tool_result", "message": {"role": "user", "parts": [
            {"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": SKILL_TEXT % (name, name)}}}]}}]


COMPACTION = [{"type": "system", "subtype": "chat_compression", "systemPayload": {"info": {"compressionStatus": 1}}}]


@pytest.mark.parametrize("lines, source, expected", [
    (load("a", "c1") + COMPACTION, "compact", ["a"]),
    (load("a", "c1") + COMPACTION, "resume", ["a"]),
    # most recent first
    (load("a", "c1") + load("b", "c2") + COMPACTION, "compact", ["b", "a"]),
    # never compacted: the history still holds it
    (load("a", "c1"), "compact", []),
    (load("a", "c1"), "resume", []),
    # loaded again after the last compaction: still in the history
    (load("a", "c1") + COMPACTION + load("a", "c2"), "compact", []),
    (load("a", "c1") + COMPACTION + load("b", "c2"), "resume", ["a"]),
    # loaded before an earlier compaction: the last one dropped it again
    (load("a", "c1") + COMPACTION + load("b", "c2") + COMPACTION, "compact", ["b", "a"]),
    # a failed load, a read of the file, a result without its call: nothing loaded
    (load("a", "c1", status="error") + COMPACTION, "compact", []),
    (read("a", "c1") + COMPACTION, "compact", []),
    ([result("a", "c9")] + COMPACTION, "compact", []),
    # not the moment
    (load("a", "c1") + COMPACTION, "startup", []),
])
def test_what_comes_back(sandbox, lines, source, expected):
    sb = sandbox({})
    sb.write({"home/.qwen/projects/-project/chats/s-1.jsonl": "".join(json.dumps(l) + "\n" for l in lines)})
    out = sb.run(sb.payload("SessionStart", "qwen", source=source), env=sb.qwen_env()).out
    if not expected:
        assert "<briefing" not in out
        return
    data = json.loads(out)
    context = data["hookSpecificOutput"]["additionalContext"]
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    rebuilt = rebuild([context])
    assert rebuilt.agent == "main" and rebuilt.order == expected
    assert rebuilt.skills == {n: SKILL_TEXT % (n, n) for n in expected}
    assert "loaded skills again after compaction: " in data["systemMessage"]


def test_the_switch_turns_it_off(sandbox):
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})})
    sb.write({"home/.qwen/projects/-project/chats/s-1.jsonl":
              "".join(json.dumps(l) + "\n" for l in load("a", "c1") + COMPACTION)})
    assert "<briefing" not in sb.run(sb.payload("SessionStart", "qwen", source="compact"), env=sb.qwen_env()).out


def test_a_record_outside_qwen_codes_projects_is_not_read(sandbox):
    sb = sandbox({"project/elsewhere.jsonl": "".join(json.dumps(l) + "\n" for l in load("a", "c1") + COMPACTION)})
    payload = sb.payload("SessionStart", "qwen", source="compact", transcript_path=str(sb.project / "elsewhere.jsonl"))
    assert "<briefing" not in sb.run(payload, env=sb.qwen_env()).out


def test_garbage_lines_are_skipped(sandbox):
    sb = sandbox({})
    text = "not json\n" + '{"type": "assistant", "message": "skill"}\n' + "".join(
        json.dumps(l) + "\n" for l in load("a", "c1") + COMPACTION) + '{"truncated": "skill'
    sb.write({"home/.qwen/projects/-project/chats/s-1.jsonl": text})
    out = sb.run(sb.payload("SessionStart", "qwen", source="compact"), env=sb.qwen_env()).out
    assert rebuild([json.loads(out)["hookSpecificOutput"]["additionalContext"]]).order == ["a"]


def test_the_doctor_shows_what_the_main_session_would_get_back(sandbox):
    from briefing.audit.qwen import qwen_slug
    sb = sandbox({})
    sb.write({"home/.qwen/projects/%s/chats/s-1.jsonl" % qwen_slug(str(sb.project)):
              "".join(json.dumps(l) + "\n" for l in load("a", "c1") + COMPACTION + load("b", "c2"))})
    out = sb.doctor("--loaded", "--harness", "qwen", "--json", cwd=sb.project, env=sb.qwen_env())
    assert out.rc == 0, out
    (row,) = json.loads(out.out)["loaded"]
    assert (row["harness"], row["who"]) == ("qwen", "session s-1 (main agent)")
    # b was loaded after the last compaction: still in the history, so only a comes back
    assert [l["name"] for l in row["loaded"]] == ["a"] and [b["name"] for b in row["back"]] == ["a"]
