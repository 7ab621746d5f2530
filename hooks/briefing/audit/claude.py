"""Claude Code's records for the audit (facts/records.md, measured on 2.1.328).

``~/.claude/projects/<slug>/<session>.jsonl`` is the main session (its ``agent-setting`` line
names a ``claude --agent`` session's agent); each subagent is
``<session>/subagents/agent-<id>.jsonl`` with ``agent-<id>.meta.json`` (``agentType``). A hook's
context is an ``attachment`` of type ``hook_additional_context`` (``hookEvent``: SubagentStart,
or SessionStart after a compaction), its systemMessage ``hook_system_message``; a compaction is
a ``system`` line of subtype ``compact_boundary``; a skill Claude Code preloaded itself is a
user message holding ``<command-name>NAME</command-name>``. A refused spawn has no subagent
file: the parent's ``Agent`` tool_use, then its error tool_result, which quotes the deny reason.
The Claude Agent SDK writes the same records: its audit module can be this one.
"""
import os

from ..harnesses import HARNESSES
from . import Run, chat_sessions, foreign_version, loaded_again, older_copies, record_lines, text_or_none

KNOWN = "2."
HOOK_ERRORS = ("hook_non_blocking_error", "hook_error_during_execution", "hook_failed", "hook_blocking_error",
               "hook_cancelled")
SUB_NEEDLES = (b'"type":"attachment"', b'"compact_boundary"', b"<command-name>", b'"type":"assistant"')
MAIN_NEEDLES = SUB_NEEDLES + (b'"agent-setting"', b'"name":"Agent"', b'"name":"Task"', b"hook error: briefing")
DENIED = "hook error: "
NO_PYTHON = "no Python 3.8"
SPAWN_TOOLS = HARNESSES.record("claude").spawn_tools  # the tools the guard watches


def project_dirs(machine):
    """Claude Code's record folders of this project: one per folder it may have been started in."""
    from ..harnesses.claude import claude_slug
    base = os.path.join(machine.claude_dir, "projects")
    project = machine.project("claude")
    out = []
    for folder in [machine.cwd] + [project.folder] + list(project.folders):
        path = os.path.join(base, claude_slug(folder))
        if path not in out and os.path.isdir(path):
            out.append(path)
    return out


def sessions(machine, since, newest=None):
    return chat_sessions("claude", project_dirs(machine), lambda folder, sid: os.path.join(folder, sid, "subagents"),
                         since, newest)


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def attachment(run, value, log, path):
    """One line of an agent's record, into its Run."""
    kind = value.get("type")
    if kind == "system" and value.get("subtype") == "compact_boundary":
        run.compact()
        return
    if kind == "assistant":
        run.started = True
        return
    if kind == "user" and not getattr(run, "started", False):
        message = value.get("message") if isinstance(value.get("message"), dict) else {}
        text = text_of(message.get("content"))
        at = text.find("<command-name>")
        if at >= 0 and text.startswith("<command-message>"):
            end = text.find("</command-name>", at)
            if end > at:
                run.native.append(text[at + len("<command-name>"):end].lstrip("/"))
        return
    if kind != "attachment":
        return
    data = value.get("attachment") if isinstance(value.get("attachment"), dict) else {}
    what = data.get("type")
    if what == "hook_additional_context":
        content = data.get("content")
        run.deliver(data.get("hookEvent") or "SubagentStart", content if isinstance(content, list) else [content])
    elif what == "hook_system_message":
        text = data.get("content")
        if isinstance(text, str) and NO_PYTHON in text:
            run.hook_errors.append(text)
    elif what in HOOK_ERRORS and str(data.get("hookName", "")).startswith(("SubagentStart", "SessionStart")):
        command = data.get("command")
        if command is None or "briefing" in str(command):
            detail = data.get("stderr") or data.get("content") or data.get("error") or what
            run.hook_errors.append("%s (%s)" % (str(detail).strip().splitlines()[0][:200] if str(detail).strip()
                                                else what, data.get("hookName")))


def check_version(run, value, log, path):
    if run.version is None and isinstance(value.get("version"), str):
        run.version = value["version"]
        why = foreign_version(run.version, KNOWN)
        if why:
            log.problem("claude", path, why)
            return False
    return True


def read_agent(machine, session, path, log):
    from ..files import read_json
    agent_id = os.path.basename(path)[len("agent-"):-len(".jsonl")]
    meta = read_json(path[:-len(".jsonl")] + ".meta.json")
    name = meta.get("agentType") if isinstance(meta, dict) else None
    # An agent-team teammate's meta.json names it (``name``); a plain subagent's does not.
    teammate = isinstance(meta, dict) and isinstance(meta.get("name"), str)
    run = Run("claude", session.id, name if isinstance(name, str) else None, agent_id,
              kind="teammate" if teammate else "subagent")
    run.file = path
    run.tool_use = text_or_none(meta.get("toolUseId")) if isinstance(meta, dict) else None
    for _, value in record_lines(path, SUB_NEEDLES + (b'"version"',), log, "claude"):
        if run.time is None and isinstance(value.get("timestamp"), str):
            run.time = value["timestamp"]
        if not check_version(run, value, log, path):
            return None
        attachment(run, value, log, path)
    if run.time is None:
        try:
            run.time = iso(os.stat(path).st_mtime)
        except OSError:
            pass
    return run


def iso(seconds):
    from . import iso_time
    return iso_time(seconds)


def read(machine, session, log):
    runs = []
    main = Run("claude", session.id, None, None, kind="session")
    main.file = session.path
    spawns = {}  # tool_use id -> (agent, time, kind)
    no_python = {}  # tool_use id (None: the session's start) -> the fallback's message
    for _, value in record_lines(session.path, MAIN_NEEDLES + (b'"version"',), log, "claude"):
        if not check_version(main, value, log, session.path):
            return []
        kind = value.get("type")
        if kind == "agent-setting" and isinstance(value.get("agentSetting"), str):
            main.agent = value["agentSetting"]
            continue
        if value.get("teamName") and main.kind == "session":
            main.kind = "teammate"  # a pane teammate: a claude process of its own, run as an agent
        if kind == "attachment":
            data = value.get("attachment") if isinstance(value.get("attachment"), dict) else {}
            text = data.get("content")
            if data.get("type") == "hook_system_message" and isinstance(text, str) and NO_PYTHON in text:
                # hooks/briefing-python's message, at SessionStart and at each spawn's guard (the
                # spawn's tool_use id, which its subagent's meta.json names).
                no_python[text_or_none(data.get("toolUseID")) if data.get("hookEvent") == "PreToolUse" else None] = text
        if main.time is None and isinstance(value.get("timestamp"), str):
            main.time = value["timestamp"]
        message = value.get("message") if isinstance(value.get("message"), dict) else {}
        content = message.get("content") if isinstance(message.get("content"), list) else []
        if kind == "assistant":
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in SPAWN_TOOLS:
                    tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
                    # A teammate's spawn names the member (``name``), as its meta.json does.
                    kind_of = "teammate" if isinstance(tool_input.get("name"), str) else "subagent"
                    spawns[text_or_none(block.get("id"))] = (tool_input.get("subagent_type"),
                                                             value.get("timestamp"), kind_of)
            continue
        if kind == "user" and content:
            for block in content:
                if not (isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")):
                    continue
                text = text_of(block.get("content"))
                at = text.find(DENIED)  # "PreToolUse:Agent hook error: briefing: agent '…' …"
                spawn = spawns.get(text_or_none(block.get("tool_use_id")))
                if at >= 0 and text.startswith("briefing:", at + len(DENIED)) and spawn:
                    agent, when, kind = spawn
                    refused = Run("claude", session.id, agent, None, when or value.get("timestamp"), kind)
                    refused.refused = text[at + len(DENIED):]
                    runs.append(refused)
            continue
        attachment(main, value, log, session.path)
    if main.agent is not None:
        runs.append(main)
    elif loaded_again(main):
        # A plain session, audited for the skills it loaded and got back (issue 45) only: what its
        # user typed as /commands is no preload of an agent's.
        main.kind, main.native = "main", []
        runs.append(main)
    for path in agent_files(session):
        run = read_agent(machine, session, path, log)
        if run is not None and run.agent:
            message = no_python.get(run.tool_use) or no_python.get(None)
            if message and not run.timeline:
                run.hook_errors.append(message)
            runs.append(run)
    return runs


def agent_files(session):
    """The session's subagents' records, ``agent-<id>.jsonl``, sorted."""
    try:
        return sorted(e.path for e in os.scandir(session.extra) if e.name.startswith("agent-")
                      and e.name.endswith(".jsonl"))
    except OSError:
        return []


def causes(machine, run):
    """Claude Code: is briefing enabled for this project at all (a --plugin-dir leaves no trace)."""
    from ..harnesses.claude import claude_plugins, enabled_plugins
    plugins = enabled_plugins(machine)
    ours = [key for key in plugins if key.split("@")[0] == "briefing"]
    if ours and not any(plugins[key] for key in ours):
        return ["the briefing plugin is disabled for this project in Claude Code's settings (%s)" % ", ".join(ours)]
    if not ours:
        return ["no Claude Code settings enable the briefing plugin for this project (a --plugin-dir "
                "session leaves no record of it)"]
    return older_copies("Claude Code", [root for name, root in claude_plugins(machine) if name == "briefing"])

