"""Qwen Code's records for the audit (measured on 0.24.4; docs/doctor.md "Audit").

``<qwen dir>/projects/<slug>/chats/<session>.jsonl`` is the main session (the slug: the folder
Qwen Code ran in, each character but ``[a-zA-Z0-9]`` a ``-``); each subagent it started is
``subagents/<session>/agent-<agentId>.jsonl`` with ``agent-<agentId>.meta.json`` (``agentType``,
``toolUseId``: the ``agent`` call that spawned it, ``createdAt``). A refused spawn has no
subagent file: the parent's ``agent`` functionCall, then its ``functionResponse`` with
``response.error``, the deny reason verbatim.

What Qwen Code does not record: any hook's output. The SubagentStart context (the briefing, in
the subagent's system prompt at ``${hook_context}``) and the system prompt itself are nowhere on
disk, and neither is a subagent's compaction. So the delivery is inferred from what is recorded
and from the configuration now: a subagent that started past briefing's guard, whose agent
declares skills and says ``${hook_context}``, while briefing's extension registers SubagentStart,
was briefed (inferred); with a declared skill missing now, it got the abort instruction
(inferred). A compaction is inferred from the summariser's answer the main chat's telemetry
keeps (``ui_telemetry`` of the subagent whose ``response_text`` opens ``<state_snapshot>``); the
system prompt, and the briefing in it, survive it (facts §6). Skills the main session loaded and
got back at SessionStart(compact) (issue 45) are inferred too (main_loaded_again).
"""
import os
import re

from . import (Run, chat_sessions, foreign_version, head_line, iso_seconds, older_copies, record_lines,
               resolved_now, text_or_none)

KNOWN = "0."
NEEDLES = (b'"name":"agent"', b"<state_snapshot>")
SNAPSHOT = "<state_snapshot>"
NO_PYTHON = "no Python 3.8"
# The guard's deny reasons: a declaration's, and the fallback's when briefing's folder is gone.
REFUSALS = ("briefing:", "briefing cannot run:")
SPAWNED = "SubagentStart (inferred)"
KEPT = "its system prompt, kept (inferred)"
META_BYTES = 64 * 1024


def qwen_slug(path):
    """Qwen Code's name for a folder under ~/.qwen/projects (sanitizeCwd)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def project_dirs(machine):
    from ..harnesses import qwen_dir
    base = os.path.join(qwen_dir(machine), "projects")
    out = []
    for folder in (machine.project("qwen").folder, machine.cwd):
        path = os.path.join(base, qwen_slug(folder))
        if path not in out and os.path.isdir(path):
            out.append(path)
    return out


def sessions(machine, since, newest=None):
    return chat_sessions("qwen", [os.path.join(folder, "chats") for folder in project_dirs(machine)],
                         lambda chats, sid: os.path.join(os.path.dirname(chats), "subagents", sid), since, newest)


def metas(folder, log):
    """{toolUseId or agentId: meta} of the subagents the session started."""
    out = {}
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".meta.json"))
    except OSError:
        return out
    for name in names:
        path = os.path.join(folder, name)
        meta = read_meta(path, log)
        if not isinstance(meta, dict) or not text_or_none(meta.get("agentType")):
            log.problem("qwen", path, "not a subagent's meta.json; skipped")
            continue
        meta["_path"] = path[:-len(".meta.json")] + ".jsonl"
        out[text_or_none(meta.get("toolUseId")) or text_or_none(meta.get("agentId")) or name] = meta
    return out


def read_meta(path, log):
    """A meta.json's object (its first 64 kB; about 800 bytes measured), counted in the audit's bytes."""
    from ..files import read_head
    from ..jsontext import parse_json
    data = read_head(path, META_BYTES)
    if data is None:
        return None
    log.bytes_left -= len(data)
    try:
        return parse_json(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def spawn_lines(path, log, calls, errors, compacted):
    """The ``agent`` calls, their errors and the subagents' summaries in one record file."""
    for _, line in record_lines(path, NEEDLES, log, "qwen"):
        message = line.get("message") if isinstance(line.get("message"), dict) else {}
        for part in message.get("parts") if isinstance(message.get("parts"), list) else ():
            if not isinstance(part, dict):
                continue
            call = part.get("functionCall")
            if isinstance(call, dict) and call.get("name") == "agent" and text_or_none(call.get("id")):
                args = call.get("args") if isinstance(call.get("args"), dict) else {}
                calls.setdefault(call["id"], (args, text_or_none(line.get("timestamp"))))
            answer = part.get("functionResponse")
            if isinstance(answer, dict) and answer.get("name") == "agent" and text_or_none(answer.get("id")):
                response = answer.get("response") if isinstance(answer.get("response"), dict) else {}
                if text_or_none(response.get("error")):
                    errors[answer["id"]] = response["error"]
        payload = line.get("systemPayload") if isinstance(line.get("systemPayload"), dict) else {}
        event = payload.get("uiEvent") if isinstance(payload.get("uiEvent"), dict) else {}
        answer = event.get("response_text")
        if isinstance(answer, str) and SNAPSHOT in answer[:200] and text_or_none(event.get("subagent_id")):
            compacted[event["subagent_id"]] = compacted.get(event["subagent_id"], 0) + 1


def read(machine, session, log):
    head = head_line(session.path)
    version = text_or_none(head.get("version")) if head else None
    why = foreign_version(version, KNOWN)
    if why:
        log.problem("qwen", session.path, why + "; skipped")
        return []
    calls, errors, compacted = {}, {}, {}
    spawn_lines(session.path, log, calls, errors, compacted)
    started = metas(session.extra, log) if session.extra else {}
    for meta in started.values():  # a subagent's own spawns, refused or not
        if os.path.isfile(meta["_path"]):
            spawn_lines(meta["_path"], log, calls, errors, compacted)
    runs, seen = [], set()
    for call_id, (args, when) in calls.items():
        meta = started.get(call_id)
        if meta is not None:
            seen.add(call_id)
            runs.append(started_run(machine, session, meta, compacted, version))
            continue
        error = errors.get(call_id)
        if error is None:
            continue  # no run: not answered yet, or failed before it started (an unknown agent)
        # Qwen Code spawns its general-purpose agent when the call names none (DEFAULT_BUILTIN_SUBAGENT_TYPE).
        run = Run("qwen", session.id, text_or_none(args.get("subagent_type")) or "general-purpose", call_id, when)
        run.file, run.version = session.path, version
        if error.startswith(REFUSALS):
            run.refused = error
        elif NO_PYTHON in error or "can't open file" in error:
            run.hook_errors.append(error.strip().splitlines()[0][:300])
        else:
            continue
        if run.agent:
            runs.append(run)
    for key, meta in started.items():  # a subagent whose call is in no file read
        if key not in seen:
            runs.append(started_run(machine, session, meta, compacted, version))
    return runs + main_loaded_again(machine, session, version, text_or_none(head.get("timestamp")) if head else None, log)


def main_loaded_again(machine, session, version, when, log):
    """The main session as a run when it got loaded skills back after a compaction (issue 45).

    Qwen Code records no hook's output, so this is inferred, as the hook would have answered at each
    SessionStart(compact): the skills whose latest load (a ``skill`` tool result) lies before that
    ``chat_compression`` entry, given back as configured now (briefing's extension registers
    SessionStart, the switch is on), fitted as the hook fits them. Qwen Code does not wait for that
    hook: only a request after the first one after the compaction is sure to carry them, so a
    compaction followed by fewer than two requests is not counted. A resumed session's
    SessionStart(resume) leaves no mark in the record and is not reported."""
    from ..files import read_tail
    from ..harnesses.qwen import HARNESS, QWEN_LOADED_TAIL, qwen_compactions, qwen_loaded_before
    from ..jsontext import json_lines_with
    from ..loaded import enabled, redelivery
    if "SessionStart" not in briefing_hooks(machine):
        return []
    limit = min(QWEN_LOADED_TAIL, log.per_file, max(log.bytes_left, 0))  # the hook's tail, in the audit's bounds
    data = read_tail(session.path, limit) if limit > 0 else None
    if not data:
        return []
    log.bytes_left -= len(data)
    if b"chat_compression" not in data:
        return []
    run = None
    for at in qwen_compactions(data):
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end + 1
        if sum(1 for _, entry in json_lines_with(data, b'"assistant"', end) if entry.get("type") == "assistant") < 2:
            continue  # the hook's context reached no request (see above)
        found = qwen_loaded_before(data[:end], at)
        again = redelivery(HARNESS, machine, found) if found and enabled(machine, HARNESS) else None
        if again is None:
            continue
        if run is None:
            run = Run("qwen", session.id, None, None, when, kind="main")
            run.file, run.version = session.path, version
        run.timeline.append(("reload", "SessionStart(compact) (inferred)", {
            "skills": [{"name": i.name, "bytes": i.size, "parts": [1]} for i in again.items],
            "left_out": list(again.left_out)}))
    return [run] if run is not None else []


def started_run(machine, session, meta, compacted, version):
    agent_id = text_or_none(meta.get("agentId"))
    run = Run("qwen", session.id, meta.get("agentType"), agent_id, meta.get("createdAt"))
    run.file, run.version = meta["_path"], version
    delivered = infer(machine, run)
    for _ in range(compacted.get(agent_id, 0) if agent_id else 0):
        run.compact()
        if delivered:
            run.infer(KEPT, ())
    return run


def infer(machine, run):
    """What SubagentStart gave a run that started: nothing recorded, so as the configuration says
    now. True when the briefing was delivered (inferred)."""
    from ..harnesses import HARNESSES
    events = briefing_hooks(machine)
    if not run.agent or "SubagentStart" not in events:
        return False
    try:
        agent = HARNESSES["qwen"].find_agent(machine, run.agent)
    except Exception:
        return False
    briefing = resolved_now(machine, run)
    if agent is None or briefing is None or isinstance(briefing, str) or briefing.unreachable:
        return False  # no ${hook_context}: SubagentStart's context reached nothing
    changed_after(agent.path, run)
    if briefing.denies and "PreToolUse" not in events:
        # Nothing refused it at the spawn, and a declared skill is missing: SubagentStart put the
        # abort instruction where the briefing goes.
        run.refused = "the agent got the abort instruction at its start (SubagentStart) (inferred)"
        return False
    # With the guard installed a run that started passed it: its skills were there then (one missing
    # now was removed since, or is one the doctor cannot see from outside Qwen Code, a bundled one).
    items = [(s.name, "skill") for s in briefing.delivered + briefing.missing] + \
        [(f.name, "file") for f in briefing.delivered_files]
    if items:
        run.infer(SPAWNED, items)
    return bool(items)


def changed_after(path, run):
    """Note it when the agent's file changed after the run: what is inferred reads it as it is now."""
    started = iso_seconds(run.time)
    try:
        changed = os.stat(path).st_mtime if path else None
    except OSError:
        return
    if started is not None and changed is not None and changed > started:
        run.messages.append("%s changed after this run: the inference (inferred) reads it as it is now" % path)


def briefing_hooks(machine):
    """The events an enabled briefing extension registers in Qwen Code for this project, now."""
    memo = machine.state.get("audit_qwen_hooks")
    if memo is None:
        from ..harnesses.qwen import QWEN_EXTENSION, qwen_extensions
        from ..hooks_files import extension_hooks
        memo = set()
        for name, root in qwen_extensions(machine):
            if name == "briefing":  # unreadable: registers nothing (the doctor's check says why)
                memo.update(extension_hooks(root, "qwen-extension.json", QWEN_EXTENSION, "qwen hooks.json",
                                            "Qwen Code")[1] or ())
        machine.state["audit_qwen_hooks"] = memo
    return memo


def causes(machine, run):
    """Qwen Code: is the briefing extension installed, enabled and registering SubagentStart; does
    the agent say ${hook_context}."""
    from ..harnesses.qwen import qwen_extensions
    roots = [root for name, root in qwen_extensions(machine) if name == "briefing"]
    if not roots:
        return ["the briefing extension is not installed, or not enabled for this project, in Qwen Code"]
    if "SubagentStart" not in briefing_hooks(machine):
        return ["the briefing extension registers no SubagentStart hook in Qwen Code (briefing-doctor checks it)"]
    briefing = resolved_now(machine, run)
    if briefing is not None and not isinstance(briefing, str) and briefing.unreachable:
        return ["its agent %s" % briefing.unreachable]
    return older_copies("Qwen Code", roots) or [
        "it started although briefing's guard is installed: the guard did not run (its hooks were "
        "changed, or the run predates them)"]
