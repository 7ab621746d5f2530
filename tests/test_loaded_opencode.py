"""OpenCode's and Kilo's loaded skills after a compaction (issue 45): what the database shows, what comes back.

The plugin asks the hook with SessionStart(``compact``) when the CLI reports ``session.compacted``
(node --test tests/js covers the plugin's side); the rows below are shaped as OpenCode 1.18.33 and
Kilo 7.7.7 wrote them (docs/loaded-skills.md, measured): ``tool`` parts with ``tool: "skill"`` and a
``compaction`` part, in the ``part`` table of ``<data>/<cli>/<cli>.db``.
"""
import json
import sqlite3

import pytest

from framing import rebuild

OUTPUT = '<skill_content name="%s">\n# %s\n\n%s-BODY\n</skill_content>'


def database(sb, parts, cli="opencode", session="ses_1"):
    """Write ``parts`` [(kind, name, time)] of ``session`` into the CLI's database under the sandbox's HOME."""
    folder = sb.home / ".local" / "share" / cli
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(folder / ("%s.db" % cli)))
    db.execute("CREATE TABLE IF NOT EXISTS part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, "
               "time_created INTEGER, time_updated INTEGER, data TEXT)")
    for n, (kind, name, at) in enumerate(parts):
        if kind == "compaction":
            data = {"type": "compaction", "auto": True, "overflow": False}
        else:
            status = "error" if kind == "failed" else "completed"
            data = {"type": "tool", "tool": "read" if kind == "read" else "skill", "callID": "c%d" % n,
                    "state": {"status": status, "input": {"name": name},
                              "output": OUTPUT % (name, name, name),
                              "metadata": {"name": name, "dir": "/p/.opencode/skills/%s" % name}}}
        db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                   ("prt_%s_%d" % (session, n), "msg_%d" % n, session, at, at, json.dumps(data)))
    db.commit()
    db.close()


def payload(sb, cli="opencode", session="ses_1", **fields):
    data = {"hook_event_name": "SessionStart", "%s_plugin" % cli: "1", "cwd": str(sb.project),
            "source": "compact", "session_id": session}
    data.update(fields)
    return data


@pytest.mark.parametrize("cli", ["opencode", "kilo"])
@pytest.mark.parametrize("parts, expected", [
    ([("skill", "a", 1), ("compaction", None, 2)], ["a"]),
    ([("skill", "a", 1), ("skill", "b", 2), ("compaction", None, 3)], ["b", "a"]),
    # loaded again after the compaction: in the history still
    ([("skill", "a", 1), ("compaction", None, 2), ("skill", "a", 3)], []),
    # never compacted; a failed call; a read of a file
    ([("skill", "a", 1)], []),
    ([("failed", "a", 1), ("compaction", None, 2)], []),
    ([("read", "a", 1), ("compaction", None, 2)], []),
])
def test_what_comes_back(sandbox, cli, parts, expected):
    sb = sandbox({})
    database(sb, parts, cli)
    out = sb.run(payload(sb, cli)).out
    if not expected:
        assert "<briefing" not in out
        return
    data = json.loads(out)
    rebuilt = rebuild([data["hookSpecificOutput"]["additionalContext"]])
    assert rebuilt.order == expected
    assert rebuilt.skills == {n: OUTPUT % (n, n, n) for n in expected}
    assert rebuilt.dirs[expected[0]] == "/p/.opencode/skills/%s" % expected[0]
    assert "loaded skills again after compaction" in data["systemMessage"]


def test_another_session_and_a_bad_session_id_get_nothing(sandbox):
    sb = sandbox({})
    database(sb, [("skill", "a", 1), ("compaction", None, 2)], session="ses_other")
    assert "<briefing" not in sb.run(payload(sb)).out
    assert "<briefing" not in sb.run(payload(sb, session="ses_other' OR 1=1 --")).out


def test_no_database_and_the_switch_get_nothing(sandbox):
    sb = sandbox({})
    assert sb.run(payload(sb)).out.strip() == ""
    sb = sandbox({"project/.briefing/rules.json": json.dumps({"keep_loaded_skills": False})})
    database(sb, [("skill", "a", 1), ("compaction", None, 2)])
    assert "<briefing" not in sb.run(payload(sb)).out


def test_what_its_own_briefing_gives_the_agent_is_not_given_twice(sandbox):
    sb = sandbox({"project/.opencode/agents/rev.md": "---\ndescription: r\nmode: subagent\nbriefing:\n"
                                                     "  skills: [a]\n---\nbody\n",
                  "project/.opencode/skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\nA\n"})
    database(sb, [("skill", "a", 1), ("skill", "b", 2), ("compaction", None, 3)])
    data = json.loads(sb.run(payload(sb, agent="rev")).out)
    rebuilt = rebuild([data["hookSpecificOutput"]["additionalContext"]])
    assert rebuilt.agent == "rev" and rebuilt.order == ["b"]
