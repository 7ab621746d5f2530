"""Codex's records for the audit (facts/records.md, measured on 0.169.0).

Every thread is a rollout, ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``,
whose first line (``session_meta``) names its session, its ``cwd``, the CLI version and, for a
spawned agent, ``agent_role`` and ``parent_thread_id``. A hook's context is a ``developer``
message; a compaction is a ``compacted`` line. A refused spawn leaves no child rollout: the
parent's ``spawn_agent`` call gets the output ``Tool call blocked by PreToolUse hook: …``.
Rollouts record no hook runs at all, trusted or skipped, so a missing briefing's likely cause
comes from config.toml (``codex_trust_check``).
"""
import os

from . import LISTING_OPENS, Run, Session, foreign_version, head_line, older_copies, record_lines, text_or_none

KNOWN = "0."
NEEDLES = (b'"role":"developer"', b'"type":"compacted"', b'"function_call"', b'"function_call_output"',
           b'"type":"message"')
BLOCKED = "Tool call blocked by PreToolUse hook: "


def day_folders(machine, since):
    """The day folders that may hold a rollout written since ``since``, oldest first."""
    import time
    base = os.path.join(machine.codex_home, "sessions")
    first_day = time.strftime("%Y%m%d", time.gmtime(since - 86400))
    for year in listing(base):
        for month in listing(os.path.join(base, year)):
            for day in listing(os.path.join(base, year, month)):
                if (year + month + day) >= first_day:
                    yield os.path.join(base, year, month, day)


def rollout_paths(folder):
    try:
        return [e.path for e in os.scandir(folder) if e.name.startswith("rollout-") and e.name.endswith(".jsonl")]
    except OSError:
        return []


def rollouts(machine, since):
    """Every rollout written since ``since``: day folders by name first, then file times."""
    out = []
    for folder in day_folders(machine, since):
        for path in rollout_paths(folder):
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            if mtime >= since:
                out.append((path, mtime))
    return out


def latest_begun(machine, since):
    """(path, None) of every rollout of those days, the latest begun first, listed one day
    folder at a time (up to its start's second, a rollout's path sorts as its start does)."""
    for folder in reversed(list(day_folders(machine, since))):
        for path in sorted(rollout_paths(folder), reverse=True):
            yield path, None


def listing(folder):
    try:
        return sorted(e.name for e in os.scandir(folder) if e.is_dir() and e.name.isdigit())
    except OSError:
        return []


def sessions(machine, since, newest=None):
    """Codex sessions of this project: rollouts grouped by session id, the project read from
    their cwd (the first line only).

    With ``newest`` (the pre-flight) the listing stops early, whatever other projects wrote:
    rollouts in the order they began (their names say when, no file is statted for it), latest
    first; once that many sessions are known, only rollouts begun since the earliest of them
    began can still belong to one (a spawned agent starts after its session); and at most
    LISTING_OPENS rollouts are opened in all."""
    from ..files import is_inside
    # sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread>.jsonl, up to its start's second
    started = len(os.path.join(machine.codex_home, "sessions", "YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS"))
    found = latest_begun(machine, since) if newest else sorted(rollouts(machine, since), key=lambda pair: -pair[1])
    project = machine.project("codex").folder
    groups, begun, chosen, opened = {}, {}, None, 0
    for path, mtime in found:
        if chosen is not None and None not in [begun.get(sid) for sid in chosen] \
                and path[:started] < min(begun[sid] for sid in chosen):
            break
        if newest:
            if opened >= LISTING_OPENS:
                break
            opened += 1
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            if mtime < since:
                continue
        meta = head_line(path)
        payload = meta.get("payload") if isinstance(meta, dict) and meta.get("type") == "session_meta" else None
        if not isinstance(payload, dict):
            continue
        cwd = payload.get("cwd")
        if not (isinstance(cwd, str) and (is_inside(cwd, project) or is_inside(project, cwd) and cwd != "/")):
            continue
        sid = payload.get("session_id") or payload.get("id")
        if not isinstance(sid, str) or (chosen is not None and sid not in chosen):
            continue
        group = groups.setdefault(sid, Session("codex", sid, None, 0, []))
        group.mtime = max(group.mtime, mtime)
        group.extra.append((path, payload))
        if payload.get("id") == sid:
            group.path = path
            begun[sid] = path[:started]
        if newest and chosen is None and len(groups) >= newest:
            chosen = set(groups)
    found = sorted(groups.values(), key=lambda s: -s.mtime)
    for group in found:
        group.path = group.path or group.extra[0][0]
    return found[:newest] if newest else found


def texts(item):
    return [c.get("text") for c in item.get("content") or () if isinstance(c, dict) and isinstance(c.get("text"), str)]


def read(machine, session, log):
    runs = []
    for path, meta in sorted(session.extra, key=lambda pair: str(pair[1].get("timestamp"))):
        why = foreign_version(meta.get("cli_version"), KNOWN)
        if why:
            log.problem("codex", path, why)
            continue
        if meta.get("parent_thread_id"):
            run = Run("codex", session.id, meta.get("agent_role") or "default", meta.get("id"),
                      meta.get("timestamp"))
            run.version, run.file = meta.get("cli_version"), path
            read_child(run, path, log)
            runs.append(run)
        else:
            runs += refused_spawns(session, path, log)
            runs += main_loaded_again(session, path, meta, log)
    return runs


def main_loaded_again(session, path, meta, log):
    """The main thread as a run when it got loaded skills back after a compaction (issue 45): each at
    SessionStart(compact), a developer message after the ``compacted`` line; [] when it got none."""
    from ..loaded import LOADED_HEADER
    opening = LOADED_HEADER[:48]
    run, compacted = None, False
    for _, line in record_lines(path, (b'"type":"compacted"', opening.encode()), log, "codex"):
        if line.get("type") == "compacted":
            compacted = True
            continue
        item = line.get("payload") if isinstance(line.get("payload"), dict) else {}
        if line.get("type") != "response_item" or item.get("role") != "developer" or not compacted:
            continue
        mine = [t for t in texts(item) if t.startswith("<briefing agent=") and opening in t]
        if mine:
            if run is None:
                run = Run("codex", session.id, None, meta.get("id"), meta.get("timestamp"), kind="main")
                run.version, run.file = meta.get("cli_version"), path
            run.deliver("SessionStart(compact)", mine)  # audit.loaded_again reads it back
            compacted = False
    return [run] if run is not None else []


def read_child(run, path, log):
    """A spawned agent's rollout: each briefing (SubagentStart, then after a compaction the event
    that brought it back: PostToolUse when a tool output follows it, else UserPromptSubmit)."""
    pending = None  # a briefing after a compaction, waiting to learn which event brought it
    compacted = False
    for _, line in record_lines(path, NEEDLES, log, "codex"):
        kind = line.get("type")
        if kind == "compacted":
            run.compact()
            compacted = True
            continue
        item = line.get("payload") if isinstance(line.get("payload"), dict) else {}
        if kind != "response_item":
            continue
        if pending is not None:
            run.deliver("PostToolUse" if item.get("type") == "function_call_output" else "UserPromptSubmit",
                        pending)
            pending = None
        if item.get("role") == "developer":
            mine = [t for t in texts(item) if t.startswith("<briefing agent=")]
            if mine:
                if compacted:
                    pending = mine
                else:
                    run.deliver("SubagentStart", mine)
    if pending is not None:
        run.deliver("UserPromptSubmit", pending)


def refused_spawns(session, path, log):
    """The spawns briefing's guard refused, from the parent's rollout."""
    import json
    calls, runs = {}, []
    for _, line in record_lines(path, (b'"spawn_agent"', b"PreToolUse hook: briefing"), log, "codex"):
        item = line.get("payload") if isinstance(line.get("payload"), dict) else {}
        if item.get("type") == "function_call" and str(item.get("name", "")).endswith("spawn_agent"):
            try:
                arguments = json.loads(item.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            agent = arguments.get("agent_type") if isinstance(arguments, dict) else None
            calls[text_or_none(item.get("call_id"))] = (agent, line.get("timestamp"))
        elif item.get("type") == "function_call_output" and text_or_none(item.get("call_id")) in calls:
            output = item.get("output")
            if isinstance(output, str) and output.startswith(BLOCKED + "briefing:"):
                agent, when = calls[item["call_id"]]
                run = Run("codex", session.id, agent or "default", None, when)
                reason = output[len(BLOCKED):]
                run.refused = reason.split(". Tool: ")[0] if ". Tool: " in reason else reason
                runs.append(run)
    return runs


def causes(machine, run):
    """Codex: whether it runs briefing's hooks at all, from config.toml (rollouts cannot say)."""
    from ..harnesses import HARNESSES
    check = HARNESSES["codex"].trust_check(machine)
    if check["status"] != "ok":
        return [check["detail"]]
    if "not installed" in check["detail"]:
        return ["briefing is not installed as a Codex plugin here (a run with it elsewhere leaves no trace)"]
    from ..harnesses.codex import codex_plugin_roots
    return older_copies("Codex", [root for _, root in codex_plugin_roots(machine, "briefing")])
