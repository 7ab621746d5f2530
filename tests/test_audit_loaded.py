"""briefing-doctor --audit: loaded skills given back after a compaction in Qwen Code, OpenCode and
Kilo (issue 45), over records the real CLIs wrote.

tests/data/audit/qwen-loaded/ holds what tests/e2e/test_loaded_qwen.py's main-session run left
under Qwen Code 0.24.4 (its chat record: a ``skill`` call, a ``chat_compression``, two requests
after it; briefing's extension as installed), by ``trim.py qwen ROOT qwen-loaded``. Qwen Code
records no hook's output: the audit infers what SessionStart(compact) gave back.
tests/data/audit/opencode-loaded/ holds what tests/e2e/test_loaded_others.py's ``opencode-main
session`` and ``opencode-subagent`` runs left under OpenCode 1.18.33, by ``trim_opencode.py --to
opencode-loaded``: the plugin's line ``briefing: <agent> ← loaded skills again after compaction: …``
in the CLI's log after each ``session.compacted``.
"""
import json

import pytest

from test_audit import audit, load, log_edit

QWEN_EVENT = "SessionStart(compact) (inferred)"
OPENCODE_EVENT = "session.compacted (inferred)"


def qwen(sb, edit=None):
    return load(sb, "qwen", edit, folder="qwen-loaded")


def chat_edit(test):
    """An edit of Qwen Code's chat record only: ``test(lines) -> lines``."""
    def edit(rel, text):
        return "".join(test(text.splitlines(True))) if "/chats/" in rel else text
    return edit


def test_qwen_main_session_s_loaded_skill_given_back_is_reported(sandbox):
    sb = qwen(sandbox())
    rc, report = audit(sb, "--harness", "qwen")
    row, = report["audit"]
    assert (rc, row["kind"], row["agent"], row["verdict"]) == (0, "main", None, "no-declaration"), row
    # the size of the text the skill tool put into the context (it names the sandbox's folder)
    loaded = [json.loads(l) for l in chat_of(sb, row).read_text(encoding="utf-8").splitlines()
              if '"tool_result"' in l and '"skill"' in l][0]
    size = len(loaded["message"]["parts"][0]["functionResponse"]["response"]["output"].encode("utf-8"))
    assert row["loaded_again"] == [{"event": QWEN_EVENT, "skills": [{"name": "inv-main", "bytes": size, "parts": [1]}],
                                    "left_out": []}]
    text = sb.doctor("--audit", "--since", "3650", "--harness", "qwen").out
    assert "loaded skills given back after a compaction (%s): inv-main %.1f kB" % (QWEN_EVENT, size / 1000.0) in text
    assert "Base directory for this skill" not in text and "inv-main-START" not in text.upper()


def chat_of(sb, row):
    return next(sb.root.glob("home/.qwen/projects/*/chats/%s.jsonl" % row["session"]))


def only_one_request_after(lines):
    """The record cut after the first request that followed the compaction."""
    at = next(i for i, l in enumerate(lines) if '"chat_compression"' in l)
    after = [i for i, l in enumerate(lines) if i > at and '"type":"assistant"' in l]
    return lines[:after[1]]


def unhooked(rel, text):
    if rel.endswith("hooks/hooks.json"):
        hooks = json.loads(text)
        hooks["hooks"].pop("SessionStart")
        return json.dumps(hooks)
    return text


@pytest.mark.parametrize("case, edit, files", [
    ("the switch is off now", None, {"project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})}),
    # Qwen Code does not wait for SessionStart(compact): the first request after it goes without
    ("one request after the compaction", chat_edit(only_one_request_after), {}),
    ("never compacted", chat_edit(lambda lines: [l for l in lines if "chat_compression" not in l]), {}),
    ("the skill loaded after the compaction only",
     chat_edit(lambda lines: lines[:1] + lines[3:7] + lines[1:3] + lines[7:]), {}),
    ("briefing's extension registers no SessionStart", unhooked, {}),
])
def test_qwen_nothing_given_back_is_reported_as_none(sandbox, case, edit, files):
    sb = qwen(sandbox(files), edit)
    rc, report = audit(sb, "--harness", "qwen")
    assert (rc, report["audit"]) == (0, []), case


def test_qwen_a_record_of_hostile_loads_is_read_without_a_crash(sandbox):
    def hostile(lines):
        return lines[:1] + [lines[1].replace("inv-main", "../x y"), lines[2], "{not json\n"] + lines[3:]
    sb = qwen(sandbox(), chat_edit(hostile))
    rc, report = audit(sb, "--harness", "qwen")
    assert rc == 0 and all(s["name"] != "../x y" for r in report["audit"] for a in r["loaded_again"]
                           for s in a["skills"]), report


def opencode(sb, edit=None):
    return load(sb, "opencode", edit, folder="opencode-loaded")


def loaded_rows(report):
    return sorted((r["agent"], r["kind"], r["loaded_again"]) for r in report["audit"] if r["loaded_again"])


def test_opencode_loaded_skills_given_back_are_read_from_the_plugin_s_line(sandbox):
    sb = opencode(sandbox())
    rc, report = audit(sb, "--harness", "opencode")
    assert loaded_rows(report) == [
        # the main session: the plugin names it "main" (it briefs no main session)
        ("build", "session", [{"event": OPENCODE_EVENT, "skills": [{"name": "inv-main", "bytes": 400, "parts": [1]}],
                               "left_out": []}]),
        ("skiller", "subagent", [{"event": OPENCODE_EVENT, "skills": [{"name": "inv-sub", "bytes": 400,
                                                                      "parts": [1]}], "left_out": []}])]
    # the line is no briefing: nothing was delivered to either
    assert all(r["delivered"] == [] and r["verdict"] == "no-declaration" for r in report["audit"]), report
    text = sb.doctor("--audit", "--since", "3650", "--harness", "opencode").out
    assert "loaded skills given back after a compaction (%s): inv-sub 0.4 kB" % OPENCODE_EVENT in text, text


def no_request_after_the_compaction(lines):
    """The log without the requests that followed each compaction's summary."""
    out, summarised = [], set()
    for line in lines:
        sid = line.split("session.id=", 1)[1].split(" ", 1)[0] if "session.id=" in line else None
        if "message=stream" in line and "agent=compaction" in line:
            summarised.add(sid)
        elif "message=stream" in line and sid in summarised:
            continue
        out.append(line)
    return out


@pytest.mark.parametrize("case, edit", [
    ("no plugin line", lambda lines: [l for l in lines if "loaded skills again" not in l]),
    ("no request after the compaction", no_request_after_the_compaction),
    # a line with no compaction before it in its process belongs to no session
    ("another process", lambda lines: [l.replace("run=", "run=x") if "loaded skills again" in l else l
                                       for l in lines]),
    ("another agent's name", lambda lines: [l.replace("briefing: skiller", "briefing: other").replace(
        "briefing: main", "briefing: build2") for l in lines]),
])
def test_opencode_a_line_that_gave_no_session_anything_is_not_counted(sandbox, case, edit):
    sb = opencode(sandbox(), log_edit(edit))
    rc, report = audit(sb, "--harness", "opencode")
    assert loaded_rows(report) == [], case


@pytest.mark.parametrize("message, expected", [
    (u"briefing: main \u2190 loaded skills again after compaction: a (1.2 kB), b (0.4 kB); loaded by skill tool",
     ("main", [("a", 1200), ("b", 400)], [])),
    (u"briefing: x \u2190 y \u2190 loaded skills again after compaction: p:q (10.0 kB); loaded by skill tool; "
     u"left out for lack of room: c, d", (u"x \u2190 y", [("p:q", 10000)], ["c", "d"])),
    # names that are no skill's name are dropped; a line of none is no such line
    (u"briefing: a \u2190 loaded skills again after compaction: ../x (1.0 kB), ok (0.1 kB)", ("a", [("ok", 100)], [])),
    (u"briefing: a \u2190 loaded skills again after compaction: none", None),
    (u"briefing: a \u2190 loaded skills again after compaction: b (1.0 kB)\nc (2.0 kB)", ("a", [("b", 1000)], [])),
    (u"briefing: a \u2190 b (1.0 kB)", None),  # a briefing's line
    ("briefing: " + "x (1.0 kB), " * 20000, None),
])
def test_opencode_the_plugin_s_loaded_line_is_read_back(message, expected):
    from briefing.audit.opencode import loaded_line
    got = loaded_line(message)
    if got is not None:
        got = (got[0], [(s["name"], s["bytes"]) for s in got[1]], got[2])
    assert got == expected
