"""Factory Droid's records for the audit (docs/factory-droid.md, measured on 0.225.2).

``~/.factory/sessions/<cwd with / as ->/<session>.jsonl``: the first line is ``session_start``
(a sub-droid's has ``callingSessionId`` and ``callingToolUseId``); every hook's run is a
``message`` with ``hookEventName`` and ``hookResults`` (each hook's stdout, verbatim). A run is
a ``Task`` tool_use in a parent session: refused when its tool_result is an error carrying
briefing's reason; briefed when the Task prompt that opens the sub-droid's own file (the guard's
``updatedInput``) begins with the briefing. A ``compaction_state`` line says how many messages
the compaction removed from the front of the history: the briefing was kept when they were all
in front of the prompt (Droid's reminders), else lost with it.
"""
import os

from . import Run, Session, head_line, older_copies, record_lines

NEEDLES = (b'"Task"', b'"tool_result"', b'"hookResults"', b'"compaction_state"')
# A sub-droid's file: every message counts (its place in the history), and its compactions.
CHILD_NEEDLES = (b'"message"', b'"compaction_state"')

# Where the task the parent model wrote starts in the prompt Droid renders for a sub-droid
# (facts/factory-droid.md §2): the guard puts the briefing first there.
TASK_START = "---BEGIN TASK FROM PARENT AGENT---\n"


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


def contexts(line, event):
    """The additionalContext texts a hook message of ``event`` recorded."""
    from ..jsontext import parse_json
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    if message.get("hookEventName") != event:
        return []
    out = []
    for result in message.get("hookResults") or ():
        stdout = result.get("stdout") if isinstance(result, dict) else None
        if not isinstance(stdout, str) or not stdout.startswith("{"):
            continue
        try:
            data = parse_json(stdout)
        except ValueError:
            continue
        hso = data.get("hookSpecificOutput") if isinstance(data, dict) else None
        if isinstance(hso, dict) and isinstance(hso.get("additionalContext"), str):
            out.append(hso["additionalContext"])
    return out


def blocks(line):
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def prompt_briefing(line):
    """The briefing a sub-droid's Task prompt opens with (from the task's start on), or None."""
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    if message.get("role") != "user":
        return None
    for block in blocks(line):
        text = block.get("text") if block.get("type") == "text" else None
        if isinstance(text, str) and text.startswith("# Task Tool Invocation"):
            at = text.find(TASK_START)
            if at >= 0 and text.startswith("<briefing agent=", at + len(TASK_START)):
                return text[at + len(TASK_START):]
            return ""
    return None


def in_history(line):
    """Whether a message line is one of the messages Droid sends the model (a hook's own record,
    shown to the user only, is not, unless it carried a context)."""
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    if message.get("visibility") == "user_only":
        return bool(contexts(line, message.get("hookEventName")))
    return line.get("type") == "message"


def read_child(run, path, log):
    """The sub-droid's own file: the briefing its Task prompt carried, and its compactions. The
    prompt's place in the history is the number of messages in front of it."""
    in_front, texts = 0, None
    for _, line in record_lines(path, CHILD_NEEDLES, log, "droid"):
        if line.get("type") == "compaction_state":
            run.compact()
            removed = line.get("removedCount")
            if texts and isinstance(removed, int) and removed <= in_front:
                run.deliver("Task prompt (kept by Droid's compaction)", texts)
            continue
        if texts is not None:
            continue
        found = prompt_briefing(line)
        if found is None:
            in_front += in_history(line)
        elif found:
            texts = [found]
            run.deliver("Task prompt (the guard's updatedInput)", texts)
        else:
            texts = []  # the prompt without a briefing: nothing was delivered


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
    roots = [root for name, root in droid_plugins(machine) if name == "briefing"]
    if not roots:
        return ["briefing is not installed, or not enabled, as a Droid plugin"]
    return older_copies("Droid", roots)
