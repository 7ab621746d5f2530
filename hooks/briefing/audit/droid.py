"""Factory Droid's records for the audit (docs/factory-droid.md, measured on 0.225.2).

``~/.factory/sessions/<cwd with / as ->/<session>.jsonl``: the first line is ``session_start``
(a sub-droid's has ``callingSessionId`` and ``callingToolUseId``); every hook's run is a
``message`` with ``hookEventName`` and ``hookResults`` (each hook's stdout, verbatim). A run is
a ``Task`` tool_use in a parent session: refused when its tool_result is an error carrying
briefing's reason; briefed when the Task prompt that opens the sub-droid's own file (the guard's
``updatedInput``) begins with the briefing, and again when a PostToolUse brought it back after a
compaction removed it. A ``compaction_state`` line names the last message the compaction removed:
what stands after it was kept (harnesses/droid.py reads the file the same way for the hook).
"""
import os

from . import Run, Session, copies_or, head_line, open_record, record_lines

NEEDLES = (b'"Task"', b'"tool_result"', b'"hookResults"', b'"compaction_state"')


def sessions_dir(machine):
    folder = machine.project("droid").folder
    return os.path.join(machine.home, ".factory", "sessions", folder.replace("/", "-"))


def sessions(machine, since, newest=None):
    folder = sessions_dir(machine)
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        entries = []
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        try:
            mtime = entry.stat().st_mtime
        except OSError:
            continue
        head = head_line(entry.path) if mtime >= since else None
        # A sub-droid's file is read with its parent's, not as a session of its own.
        if head is not None and not head.get("callingSessionId"):
            found.append(Session("droid", entry.name[:-len(".jsonl")], entry.path, mtime))
    found.sort(key=lambda s: -s.mtime)
    return found[:newest] if newest else found


def blocks(line):
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def read_child(run, path, log):
    """The sub-droid's own file: the briefing its Task prompt carried, its compactions, and what
    came back after one (PostToolUse), read as the hook reads it (``harnesses.droid.droid_timeline``:
    a compaction keeps what stands after the last message it removed)."""
    from ..files import read_head
    from ..harnesses.droid import HEAD_BYTES, RECORD_BYTES, droid_timeline, head_and_tail, replay
    opened = open_record(path, log, "droid")  # a regular file, or reported
    if opened is None:
        return
    size = opened[1].st_size
    opened[0].close()
    # What the hook reads of it (its head and its end, RECORD_BYTES), within the audit's bounds.
    limit = min(log.per_file, max(log.bytes_left, 0), RECORD_BYTES)
    if size > limit:
        log.problem("droid", path, "only %d of its %d bytes were read, from its start and its end (the "
                    "audit's bound)" % (limit, size))
    data = head_and_tail(path, read_head(path, min(HEAD_BYTES, limit)) or b"", limit)
    if data is None:
        log.problem("droid", path, "unreadable")
        return
    log.bytes_left -= len(data)
    for step, how, text in replay(droid_timeline(data)["events"]):
        if step == "compact":
            run.compact()
        if text is not None:
            run.deliver("kept by Droid's compaction" if step == "compact" else
                        "Task prompt (the guard's updatedInput)" if how == "Task prompt" else
                        "PostToolUse (again after Droid's compaction)", [text])


def read(machine, session, log):
    calls, children = {}, {}
    folder = os.path.dirname(session.path)
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith(".jsonl") and entry.path != session.path:
                head = head_line(entry.path)
                if head and head.get("callingSessionId") == session.id and isinstance(head.get("callingToolUseId"), str):
                    children[head["callingToolUseId"]] = entry.path
    except OSError:
        pass
    for _, line in record_lines(session.path, NEEDLES, log, "droid"):
        for block in blocks(line):
            if block.get("type") == "tool_use" and block.get("name") == "Task" and isinstance(block.get("id"), str):
                args = block.get("input") if isinstance(block.get("input"), dict) else {}
                run = Run("droid", session.id, args.get("subagent_type"), block["id"], line.get("timestamp"))
                run.file = session.path
                calls[block["id"]] = run
            elif block.get("type") == "tool_result":
                # Written as tool_use_id/is_error (seen in a refusal), toolUseId/isError elsewhere.
                call = block.get("tool_use_id", block.get("toolUseId"))
                content = block.get("content")
                if call in calls and block.get("is_error", block.get("isError")) and isinstance(content, str) \
                        and content.startswith("Error: briefing:"):
                    calls[call].refused = content[len("Error: "):]
    for call_id, run in calls.items():
        if call_id in children:
            run.file = children[call_id]
            read_child(run, children[call_id], log)
    return [run for run in calls.values() if run.agent]


def causes(machine, run):
    """Droid: is briefing installed and enabled as a Droid plugin."""
    from ..harnesses.droid import droid_plugins
    return copies_or("Droid", droid_plugins(machine), "briefing is not installed, or not enabled, as a Droid plugin")
