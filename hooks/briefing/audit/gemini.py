"""Gemini CLI's records for the audit (facts/records.md, measured on 0.61.0).

``~/.gemini/projects.json`` names each project's folder under ``~/.gemini/tmp/``; its chats are
JSONL in ``chats/``: ``session-<time>-<id>.jsonl`` per session (first line: ``sessionId``,
``kind``), with ``$set`` update lines and the same message written more than once. The briefing
is the rewritten ``invoke_agent`` call in the parent's chat (its ``prompt`` starts with the
``<briefing …>`` element; the call's ``id`` is the run's id); a refusal is that call with
``status: error`` and briefing's reason. Gemini CLI compresses a subagent's chat on a final-
warning turn only and records nothing that ties it to an agent, so no compaction is counted.
"""
import os

from . import Run, Session, copies_or, head_line, record_lines

NEEDLES = (b'"invoke_agent"',)
BLOCKED = "Tool execution blocked: "


def chats_dir(machine):
    """The chats folder of this project, from projects.json, or None."""
    from ..files import read_json
    data = read_json(os.path.join(machine.gemini_dir, "projects.json"))
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return None
    short = projects.get(machine.project("gemini").folder)
    if not isinstance(short, str) or not short or "/" in short or short in (".", ".."):
        return None
    return os.path.join(machine.gemini_dir, "tmp", short, "chats")


def sessions(machine, since, newest=None):
    folder = chats_dir(machine)
    found = []
    try:
        entries = list(os.scandir(folder)) if folder else []
    except OSError:
        entries = []
    recent = []
    for entry in entries:
        if not (entry.name.startswith("session-") and entry.name.endswith(".jsonl")):
            continue
        try:
            mtime = entry.stat().st_mtime
        except OSError:
            continue
        if mtime >= since:
            recent.append((mtime, entry))
    recent.sort(key=lambda found: -found[0])
    for mtime, entry in recent[:newest] if newest else recent:  # the pre-flight opens the newest only
        head = head_line(entry.path)  # its first line names the session
        sid = head.get("sessionId") if head else None
        found.append(Session("gemini", sid if isinstance(sid, str) and sid else
                             entry.name[len("session-"):-len(".jsonl")], entry.path, mtime))
    return found


def read(machine, session, log):
    calls = {}  # the last copy of each invoke_agent call wins, in the order first seen
    for _, line in record_lines(session.path, NEEDLES + (b'"sessionId"',), log, "gemini"):
        if isinstance(line.get("sessionId"), str) and "toolCalls" not in line:
            continue
        for call in line.get("toolCalls") or ():
            if isinstance(call, dict) and call.get("name") == "invoke_agent" and isinstance(call.get("id"), str):
                calls[call["id"]] = (call, line.get("timestamp"))
    runs = []
    for call_id, (call, when) in calls.items():
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        run = Run("gemini", session.id, args.get("agent_name"), call_id, call.get("timestamp") or when)
        run.file = session.path
        if call.get("status") == "error":
            display = call.get("resultDisplay")
            if isinstance(display, str) and display.startswith(BLOCKED + "briefing:"):
                run.refused = display[len(BLOCKED):]
        prompt = args.get("prompt")
        if isinstance(prompt, str) and prompt.startswith("<briefing agent="):
            run.deliver("BeforeTool", [prompt])
        if run.agent:
            runs.append(run)
    return runs


def causes(machine, run):
    """Gemini CLI: is the briefing extension installed and enabled for this project."""
    from ..harnesses.gemini import gemini_extensions
    return copies_or("Gemini CLI", gemini_extensions(machine),
                     "the briefing extension is not installed, or not enabled for this project, in Gemini CLI")
