"""Copilot CLI's records for the audit (facts/records.md, facts/compaction.md; measured on 1.0.102).

``$COPILOT_HOME/session-state/<session>/events.jsonl``, the session's ``cwd`` in
``workspace.yaml`` beside it. A subagent is ``subagent.started`` (its ``agentId`` and
``agentName``); what reached it is its first ``user.message``, whose ``transformedContent``
holds the subagentStart context; each ``skill.invoked`` of that agent before it is Copilot's
own preload. A ``copilot --agent NAME`` session is ``subagent.selected`` without an agent id,
briefed by the sessionStart ``hook.end`` output; its events carry no agent id either. A
compaction is ``session.compaction_complete`` (applied) with the agent's id.
Copilot keeps no preToolUse output, which is where a compacted agent's briefing comes back:
the audit counts it back at the agent's first preToolUse run past the settle delay after the
compaction, the run the hook delivers from (``copilot_compacted``), marked "(inferred)".
A refused spawn is the task tool's ``tool.execution_complete`` with error code ``denied``.
"""
import os

from ..harnesses.copilot import COPILOT_SPAWN_NAMES as SPAWN_TOOLS  # the hook's own
from . import (LISTING_OPENS, Run, Session, foreign_version, framed, iso_seconds, copies_or, record_lines,
               text_or_none)

KNOWN = "1."
NEEDLES = (b'"session.start"', b'"subagent.started"', b'"subagent.selected"', b'"user.message"', b'"skill.invoked"',
           b'"session.compaction_complete"', b'"hookType":"preToolUse"', b'"tool.execution_start"',
           b'"tool.execution_complete"', b'"hookType":"sessionStart"', b'"session.resume"')


def workspace_cwd(folder):
    """The ``cwd:`` of a session's workspace.yaml, or None."""
    from ..files import read_text
    from ..records import Unreadable
    try:
        text = read_text(os.path.join(folder, "workspace.yaml"))
    except Unreadable:
        return None
    for line in text.splitlines():
        if line.startswith("cwd:"):
            value = line[4:].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            return value or None
    return None


def sessions(machine, since, newest=None):
    from ..files import is_inside
    base = os.path.join(machine.copilot_home, "session-state")
    project = machine.project("copilot").folder
    found = []
    try:
        entries = [e for e in os.scandir(base) if e.is_dir() and not e.name.startswith(".")]
    except OSError:
        entries = []
    recent = []
    for entry in entries:
        path = os.path.join(entry.path, "events.jsonl")
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if mtime >= since:
            recent.append((mtime, entry, path))
    # Newest first, and with ``newest`` (the pre-flight) no more workspace files opened than
    # LISTING_OPENS: every project's sessions share this folder.
    recent.sort(key=lambda found: -found[0])
    for opened, (mtime, entry, path) in enumerate(recent):
        if newest and (len(found) >= newest or opened >= LISTING_OPENS):
            break
        cwd = workspace_cwd(entry.path)
        if isinstance(cwd, str) and is_inside(cwd, project):
            found.append(Session("copilot", entry.name, path, mtime))
    return found


def read(machine, session, log):
    runs, by_id, spawns, compacted, version = [], {}, {}, {}, None
    loaded = LoadedAgain(machine, session, by_id, runs)
    for _, event in record_lines(session.path, NEEDLES, log, "copilot"):
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        agent_id = text_or_none(event.get("agentId"))
        loaded.see(kind, data, agent_id, event, version)
        if kind == "session.start":
            why = foreign_version(data.get("copilotVersion"), KNOWN)
            if why:
                log.problem("copilot", session.path, why)
                return []
            version = data.get("copilotVersion")
            continue
        if kind == "subagent.selected" and agent_id is None and None not in by_id and isinstance(
                data.get("agentName"), str):
            # `copilot --agent NAME`: the session itself runs as the agent, briefed at sessionStart.
            run = by_id[None] = Run("copilot", session.id, data["agentName"], None, event.get("timestamp"),
                                    kind="session")
            run.file, run.version, run.seen_message = session.path, version, True
            run.as_session = False  # briefed like a subagent: Copilot preloads its skills: field itself
            runs.append(run)
        elif kind == "hook.end" and data.get("hookType") == "sessionStart" and None in by_id:
            output = data.get("output") if isinstance(data.get("output"), dict) else {}
            context = output.get("additionalContext")
            if isinstance(context, str) and "<briefing agent=" in context:
                by_id[None].deliver("sessionStart", [context])
        elif kind == "subagent.started" and isinstance(agent_id, str):
            run = by_id[agent_id] = Run("copilot", session.id, data.get("agentName"), agent_id,
                                        event.get("timestamp"))
            run.file, run.version = session.path, version
            run.seen_message = False
            runs.append(run)
        elif kind == "skill.invoked" and agent_id in by_id and not by_id[agent_id].seen_message:
            if isinstance(data.get("name"), str):
                by_id[agent_id].native.append(data["name"])
        elif kind == "user.message" and agent_id in by_id and not by_id[agent_id].seen_message:
            run = by_id[agent_id]
            run.seen_message = True
            text = data.get("transformedContent")
            run.deliver("subagentStart", [text[text.find("<briefing agent="):]] if isinstance(text, str)
                        and "<briefing agent=" in text else [])
        elif kind == "session.compaction_complete" and agent_id in by_id:
            if data.get("success") is True and data.get("outcome", "applied") == "applied":
                by_id[agent_id].compact()
                compacted[agent_id] = iso_seconds(event.get("timestamp"))
        elif kind == "hook.start" and data.get("hookType") == "preToolUse" and compacted.get(agent_id) \
                and agent_id in by_id:
            calls = data.get("input", {}).get("toolCalls") if isinstance(data.get("input"), dict) else None
            calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
            if any(c.get("name") not in SPAWN_TOOLS for c in calls):
                # Copilot keeps no preToolUse output. The hook delivers at the first tool call of the
                # agent whose run sees the compaction in events.jsonl (copilot_compacted), which is
                # this one unless Copilot had not yet written the compaction out (it lags by up to
                # about 0.2 s): so the first call after it is taken as the one, marked inferred.
                run = by_id[agent_id]
                run.deliver("PreToolUse (inferred)", run_briefing(run))
                compacted[agent_id] = None
        elif kind == "tool.execution_start" and data.get("toolName") in SPAWN_TOOLS:
            arguments = data.get("arguments") if isinstance(data.get("arguments"), dict) else {}
            spawns[text_or_none(data.get("toolCallId"))] = (arguments.get("agent_type"), event.get("timestamp"))
        elif kind == "tool.execution_complete" and text_or_none(data.get("toolCallId")) in spawns \
                and data.get("success") is False:
            error = data.get("error") if isinstance(data.get("error"), dict) else {}
            message = error.get("message")
            if error.get("code") == "denied" and isinstance(message, str) and "briefing:" in message:
                agent, when = spawns[data["toolCallId"]]
                run = Run("copilot", session.id, agent, None, when)
                run.refused = message[message.find("briefing:"):]
                runs.append(run)
    return runs


class LoadedAgain(object):
    """Skills each agent loaded (``skill.invoked``), given back after its compaction (issue 45).

    Copilot keeps no preToolUse output: the hook gives them back at the same tool call as a
    briefing (``copilot_compacted``), so they are counted at the agent's first preToolUse run
    after the compaction, as the briefing is, with the sizes of the recorded bodies, marked
    "(inferred)". A skill Copilot preloaded for a subagent (its ``skills:`` field) is declared,
    not loaded: briefing's briefing brings that one back.
    """

    def __init__(self, machine, session, by_id, runs):
        self.machine, self.session, self.by_id, self.runs = machine, session, by_id, runs
        self.invoked, self.pending, self.on = {}, set(), None
        self.restored = None  # the main session's skill Copilot itself brings back after a resume
        self.last = None  # the main session's latest skill.invoked: (name, characters)

    def see(self, kind, data, agent_id, event, version):
        if kind == "skill.invoked" and isinstance(data.get("name"), str) and isinstance(data.get("content"), str):
            run = self.by_id.get(agent_id)
            if run is not None and agent_id is not None and not run.seen_message:
                return  # the subagent's native preload
            invoked = self.invoked.setdefault(agent_id, {})
            invoked.pop(data["name"], None)  # its latest load counts
            invoked[data["name"]] = len(data["content"].encode("utf-8"))
            if agent_id is None:
                self.restored = None  # invoked after the resume: Copilot's own rule not measured
                self.last = (data["name"], len(data["content"]))
        elif kind == "session.resume" and self.invoked.get(None):
            from ..harnesses.copilot import COPILOT_RESTORED_CHARS  # as the hook decides it
            name, chars = self.last
            self.restored = name if chars <= COPILOT_RESTORED_CHARS else None
        elif kind == "session.compaction_complete" and self.invoked.get(agent_id) \
                and data.get("success") is True and data.get("outcome", "applied") == "applied":
            self.pending.add(agent_id)
        elif kind == "hook.start" and data.get("hookType") == "preToolUse" and agent_id in self.pending:
            calls = data.get("input", {}).get("toolCalls") if isinstance(data.get("input"), dict) else None
            if not any(isinstance(c, dict) and c.get("name") not in SPAWN_TOOLS
                       for c in (calls if isinstance(calls, list) else ())):
                return
            self.pending.discard(agent_id)
            if self.on is None:  # the switch as it is now (the records cannot say how it was)
                from ..harnesses import HARNESSES
                from ..loaded import enabled
                self.on = enabled(self.machine, HARNESSES["copilot"])
            run = self.by_id.get(agent_id)
            declared = set(run.native) if run is not None else set()
            if run is not None:
                declared |= {i["name"] for i in (framed(run_briefing(run)) or {}).get("items", [])}
            if agent_id is None and self.restored:
                declared.add(self.restored)
            latest = [(n, b) for n, b in list(self.invoked[agent_id].items())[::-1] if n not in declared]
            if not self.on or not latest:
                return
            if run is None:  # the main session, which runs as no agent
                run = self.by_id[agent_id] = Run("copilot", self.session.id, None, None, event.get("timestamp"),
                                                 kind="main")
                run.file, run.version, run.seen_message = self.session.path, version, True
                self.runs.append(run)
            # Most recent first, as delivered; audit.loaded_again reports it.
            run.timeline.append(("reload", "PreToolUse (inferred)", {
                "skills": [{"name": n, "bytes": b, "parts": [1]} for n, b in latest], "left_out": []}))


def run_briefing(run):
    """The texts of the run's first delivery: what the hook delivers again (the records hold no copy)."""
    for kind, _, texts in run.timeline:
        if kind == "deliver" and texts:
            return texts
    return []


def causes(machine, run):
    """Copilot CLI: is briefing installed (a --plugin-dir plugin is recorded nowhere)."""
    from ..harnesses.copilot import copilot_plugins
    return copies_or("Copilot CLI", copilot_plugins(machine),
                     "briefing is not installed as a Copilot CLI plugin (config.json installedPlugins)")
