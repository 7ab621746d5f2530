"""The hook events: which harness sent a payload, and what to print for it.

One handler per event (the guard, SubagentStart, SessionStart, and the tool-call
and prompt events that deliver a briefing again after a compaction), in DISPATCH.
``emit`` is the only writer of stdout. Detection reads the harnesses' records
only, so a run imports the one harness module it needs.

A briefing lasts as long as the agent (facts/compaction.md): a compaction drops
it in every harness, so it is delivered again. Claude Code sends the compacted
agent SessionStart(compact); Codex and Copilot CLI send nothing, and the next
tool call (or, under Codex, the next turn) brings it back, once per compaction,
as the harness's own records show (``Harness.compacted``).
"""
import os
import sys

from .constants import SPAWN_INPUT_DEPTH
from .files import display_path, is_inside, shown_path, warn
from .harnesses import HARNESSES
from .jsontext import dump_json, nesting_deeper
from .machine import Machine
from .rendering import render_abort
from .resolution import not_briefed_message, resolve
from .text import for_people, shown_name


def emit(data):
    """The only writer of stdout: one JSON object, or nothing."""
    if data:
        # What people read (the message line, the refusal) is escaped; the agent's context is exact.
        if "systemMessage" in data:
            data["systemMessage"] = for_people(data["systemMessage"])
        hso = data.get("hookSpecificOutput")
        if isinstance(hso, dict) and "permissionDecisionReason" in hso:
            hso["permissionDecisionReason"] = for_people(hso["permissionDecisionReason"])
        sys.stdout.write(dump_json(data))
        sys.stdout.flush()


def payload_harness(payload, machine, env=None):
    """The Harness that sent ``payload``, or None when nothing says which.

    Signals from the strongest down, because the weaker ones can overlap: a
    key only one harness sends; a variable only one harness sets for its
    hooks; the harness's own transcript folder (the deepest match wins: a
    CODEX_HOME that contains the Claude Code config folder is a dotfiles
    layout, not Codex); the transcript's path fragment (the last one wins).
    Decided from the harnesses' records alone: only the harness found is imported.
    """
    record = payload_record(payload, machine, os.environ if env is None else env)
    return HARNESSES[record.key] if record is not None else None


def payload_record(payload, machine, env):
    records = HARNESSES.records()
    for record in records:
        if any(payload.get(key) for key in record.payload_keys):
            return record
    marked = [r for r in records if any(env.get(name) for name in r.env_markers)
              and not any(key in payload for key in r.never_sends)]
    for record in marked:
        # A harness that sets another's variables for compatibility outranks it where both are set.
        if not any(record.key in other.mimics for other in marked):
            return record
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript or "\0" in transcript:
        return None
    best, depth = None, -1
    for record in records:
        root = record.transcript_root(machine)
        if root and is_inside(transcript, root) and len(os.path.abspath(root)) > depth:
            best, depth = record, len(os.path.abspath(root))
    if best is not None:
        return best
    for record in records:
        at = transcript.rfind(record.transcript_mark) if record.transcript_mark else -1
        if at > depth:
            best, depth = record, at
    return best


def machine_for(payload):
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        cwd = os.getcwd()
    # Copilot CLI's SubagentStart payload is camelCase (copilot-cli.md fact 13).
    session = payload.get("session_id", payload.get("sessionId"))
    return Machine(cwd, transcript=payload.get("transcript_path"), session=session)


def briefing_for_spawn(payload, machine, harness, session=False, until_refused=False):
    """The Briefing for the agent a payload names, in ``harness``, the one that sent it
    (``payload_harness``); None when that is inconclusive. ``until_refused``: for a part
    after the first (resolution.build_briefing)."""
    agent_type = payload.get("agent_type")
    if not isinstance(agent_type, str) or not agent_type:
        return None
    if harness is not None:
        return resolve(harness, machine, agent_type, session, until_refused=until_refused)
    # Inconclusive: the harness that has an agent of that name sent it.
    for harness in HARNESSES.values():
        agent = harness.find_agent(machine, agent_type)
        if agent is not None:
            return resolve(harness, machine, agent_type, session, agent, until_refused=until_refused)
    # No file anywhere: the one harness that ships an agent of that name.
    shipping = [h for h in HARNESSES.values() if agent_type in h.builtin_agents]
    if len(shipping) == 1:
        return resolve(shipping[0], machine, agent_type, session, until_refused=until_refused)
    return None


def rules_notice(machine, harness):
    """A systemMessage line for each rules file that could not be used, or ''."""
    if harness is None:
        return ""
    return "\n".join(
        "briefing: the rules file %s cannot be used (%s): none of its rules applies until it is "
        "fixed; `briefing-doctor` shows the details." % (display_path(path), why)
        for path, why in machine.rules(harness.key)[1])


def spawn_tool_harness(tool_name, tool_input=None, sender=None):
    """The Harness whose spawn tool is ``tool_name``, and the tool_input field naming the agent.

    Claude Code and Copilot CLI both call it ``Agent`` in a Claude-format hooks
    file, so the harness that sent the payload (``sender``) decides; failing
    that, the one whose agent field the input carries.
    """
    tools = [r for r in HARNESSES.records() if tool_name in r.spawn_tools]
    chosen = None
    if sender is not None and any(r.key == sender.key for r in tools):
        chosen = sender
    for record in tools if chosen is None else ():
        if isinstance(tool_input, dict) and record.spawn_tools[tool_name] in tool_input:
            chosen = record
            break
    if chosen is None and tools:
        chosen = tools[0]
    if chosen is None:
        return None, None
    return HARNESSES[chosen.key], chosen.spawn_tools[tool_name]


def handle_pre_tool_use(payload, part):
    tool_name = payload.get("tool_name")
    if not isinstance(tool_name, str) or not any(tool_name in r.spawn_tools for r in HARNESSES.records()):
        # Any other tool: the call of an agent that may have been compacted (Copilot CLI).
        return handle_after_compaction(payload, part)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    machine = machine_for(payload)
    harness, field = spawn_tool_harness(tool_name, tool_input, payload_harness(payload, machine))
    if harness is None:
        return None
    # A spawn that names no agent starts the harness's default one, which rules may brief.
    name = tool_input.get(field)
    if name is None:
        name = harness.default_agent
    briefing = resolve(harness, machine, name)
    for path, why in machine.rules(harness.key)[1]:
        warn("rules file %s: %s; its rules are not applied" % (path, why))
    if briefing is None:
        return None
    if briefing.denies:  # an unreadable programmatic definition naming skills too (Agent.refuses)
        return harness.deny_output(briefing.reason())
    if briefing.unreadable:
        # Someone's unreadable agent file is not a missing skill: say so, never block on it.
        warn("agent '%s' in %s: %s" % (briefing.agent.name, briefing.agent.path, briefing.unreadable))
    return spawn_output(harness, briefing, tool_input, payload.get("hook_event_name"))


def spawn_output(harness, briefing, tool_input, event):
    """What the guard prints for a spawn it lets through.

    Nothing, where the briefing arrives at SubagentStart; the briefing itself
    where the harness keeps it for the child (``guard_context``). Where the guard is
    also the delivery, the spawn's arguments whole, with the briefing in front
    of the original ``brief_field``: Gemini CLI *replaces* the arguments with
    ``tool_input`` and rejects a call that lacks one (facts/gemini-cli.md §13).
    """
    if harness.guard_context:
        return deliver(briefing, 1, event)  # the plugin keeps it for the child session
    if harness.brief_field is None:
        return None
    if briefing.unreadable:
        return {"systemMessage": not_briefed_message(briefing)}
    parts = briefing.parts()
    if not parts:
        return None
    if nesting_deeper(tool_input, SPAWN_INPUT_DEPTH):
        # Passing the arguments on is the delivery: what cannot be passed on whole is refused.
        return harness.deny_output(briefing.input_reason(
            "its spawn's arguments nest more than %d levels deep, and %s takes the briefing only %s, "
            "in arguments the hook passes on whole" % (SPAWN_INPUT_DEPTH, harness.label, harness.delivery())))
    rewritten = dict(tool_input)
    original = tool_input.get(harness.brief_field)
    rewritten[harness.brief_field] = parts[0] + "\n\n" + (original if isinstance(original, str) else "")
    out = harness.rewrite_output(event, rewritten)
    out["systemMessage"] = briefing.audit()
    return out


AGAIN = ", again after compaction"


def deliver(briefing, part, event, again=False):
    """Part ``part`` of a briefing (or its abort instruction) as a hook output.

    ``again``: a delivery after a compaction, and the human's line says so.
    """
    if briefing is None or (briefing.harness.part_budget is None and part != 1):
        return None  # this harness takes the whole briefing, in one context, from part 1
    if (briefing.unreadable or briefing.denies) and part != 1:
        return None  # what is said instead of a briefing is said once, by part 1
    if briefing.unreadable and not briefing.denies:
        warn("agent '%s' in %s: %s" % (briefing.agent.name, briefing.agent.path, briefing.unreadable))
        return {"systemMessage": not_briefed_message(briefing)}
    if briefing.unreachable:
        # No context of ours reaches it (not even the abort instruction): the human hears it.
        return {"systemMessage": briefing.reason().replace("briefing: ", "briefing: NOT briefed: ", 1)}
    if briefing.denies:
        message = briefing.reason().replace("briefing: ", "briefing: NOT briefed, told to abort: ", 1)
        if again:
            message += " (after a compaction)"
        if briefing.agent.legacy:
            message += "\n" + legacy_notice(briefing.agent)
        out = briefing.harness.context_output(event, render_abort(briefing))
        out["systemMessage"] = message
        return out
    parts = briefing.parts()
    if not parts or part > len(parts):
        return None
    out = briefing.harness.context_output(event, parts[part - 1])
    if part == 1:
        message = briefing.audit() + (AGAIN if again else "")
        if briefing.agent.legacy:
            message += "\n" + legacy_notice(briefing.agent)
        out["systemMessage"] = message
    return out


def legacy_notice(agent):
    return ("briefing: role '%s' in %s declares its skills in a [briefing] table; Codex drops "
            "the whole role over that unknown table. Replace it with the comment line "
            "# briefing: skills = [...]" % (shown_name(agent.name), shown_path(agent.path)))


def handle_subagent_start(payload, part):
    machine = machine_for(payload)
    harness = payload_harness(payload, machine)
    if part != 1 and harness is not None and harness.part_budget is None:
        return None  # as deliver() decides, but before paying for the lookup
    # A part after the first says nothing of a refused spawn: it stops at the first missing name.
    briefing = briefing_for_spawn(payload, machine, harness, until_refused=part != 1)
    out = deliver(briefing, part, "SubagentStart")
    if part == 1:
        out = with_notice(out, rules_notice(machine, briefing.harness if briefing else harness))
    return out


def with_notice(out, notice):
    """``out`` with ``notice`` added to its systemMessage (the human's), or as one."""
    if not notice:
        return out
    out = out or {}
    out["systemMessage"] = "\n".join(filter(None, [out.get("systemMessage"), notice]))
    return out


def handle_session_start(payload, part):
    """The pre-flight at startup; and the briefing of an agent that SessionStart is for.

    Claude Code sends SessionStart for three kinds of session, told apart by their
    fields (facts/compaction.md). ``agent_id`` and ``agent_type``: a subagent was
    compacted (``source: "compact"``), which dropped its briefing and the skills
    Claude Code preloaded for it, so all of it comes again. ``agent_type`` alone:
    a ``claude --agent NAME`` session, which nothing preloads, briefed at startup
    and again after ``compact``/``clear``. Neither: a plain session, not briefed.
    Copilot CLI names no agent in SessionStart: a ``copilot --agent NAME`` session
    is found on its command line (``Harness.session_agent``).
    """
    source = payload.get("source")
    agent_type = payload.get("agent_type")
    out = None
    machine = machine_for(payload)
    harness = payload_harness(payload, machine)
    if harness is not None and harness.sub_session(payload):
        return None  # a spawned session (a sub-droid): its briefing came with its spawn; no pre-flight
    briefing = None
    if isinstance(agent_type, str) and agent_type and source in ("startup", "resume", "compact", "clear"):
        # A compacted subagent or a `claude --agent` session: every skill, whatever preloaded it before.
        briefing = briefing_for_spawn(payload, machine, harness, session=True, until_refused=part != 1)
        out = deliver(briefing, part, "SessionStart", again=source == "compact")
    if (harness is not None and harness.loaded_skills is not None and out is None
            and source in harness.loaded_sources):
        out = loaded_after_compaction(payload, part, machine, harness, briefing)
    elif part == 1 and source in ("startup", "resume", "new"):
        name = harness.session_agent(machine, payload) if harness and harness.session_agent else None
        if name:
            # `copilot --agent NAME`: Copilot preloads the agent's own skills: field, briefing the rest.
            out = deliver(resolve(harness, machine, name), part, "SessionStart")
    # Copilot CLI says "new" where Claude Code and Codex say "startup" (copilot-cli.md fact 13).
    if part == 1 and source in ("startup", "resume", "new"):
        from .survey import preflight  # the whole survey, at session start only
        report = preflight(machine, harness)
        if harness is not None:
            # Issue 40: the last session of this project, from its own records, in one line.
            from .audit import last_session_line
            report = "\n".join(filter(None, [report, last_session_line(machine, harness, payload.get("session_id"))]))
        if report:
            out = out or {}
            out["systemMessage"] = "\n".join(filter(None, [out.get("systemMessage"), report]))
    return out


def loaded_after_compaction(payload, part, machine, harness, briefing):
    """Part ``part`` of the skills the compacted agent had loaded, given back (issue 45), or None.

    They take the hook outputs its own briefing leaves free, after it: a briefing in
    parts 1..n, the loaded skills in n+1..PARTS. An agent told to abort gets nothing more.
    """
    from .constants import PARTS
    used = 0
    if briefing is not None:
        if briefing.unreadable or briefing.denies:
            return None
        used = len(briefing.parts() or ()) if briefing.harness.part_budget is not None else 1
    from .loaded import output  # a compaction only: no tool call or spawn imports it
    return output(harness, machine, payload, part, "SessionStart", first_part=used + 1, parts=PARTS - used)


def handle_after_compaction(payload, part):
    """A tool call or a new turn of an agent: its briefing again if it was compacted since.

    Codex, Copilot CLI and Factory Droid send no event into a compacted agent; its next
    tool call (Codex: PostToolUse; Copilot CLI: PreToolUse; Droid: PostToolUse on its own
    tools, in the sub-droid's session) or, under Codex, its next turn (UserPromptSubmit)
    carries its ``agent_id`` (Droid: the sub-droid's transcript names it), and that hook's
    context reaches the agent. Runs on every tool call of every agent, so what has nothing to deliver
    leaves early: the main agent (no ``agent_id``, and no ``--agent`` session), a
    harness without records to decide from, no compaction since the last delivery
    (``Harness.compacted``, read off the end of the harness's own records), and only
    then an agent that declares nothing. Once delivered, the records show it, so the
    next call prints nothing: once per compaction (Copilot CLI: at least once, see
    harnesses/copilot.py).
    """
    if part != 1:
        return None
    agent_id = payload.get("agent_id")
    machine = machine_for(payload)
    harness = payload_harness(payload, machine)
    if harness is None or harness.compacted is None:
        return None
    if agent_id:
        name = payload.get("agent_type")
    else:
        name = harness.session_agent(machine, payload) if harness.session_agent else None
    briefing = None
    if isinstance(name, str) and name and harness.compacted(machine, payload, name):
        # A subagent's compaction dropped the skills the harness preloaded for it too (Copilot
        # CLI's <skill-context>): every declared skill comes again. A `--agent` session keeps
        # them in its system prompt (measured), so it gets what it got at sessionStart.
        everything = bool(agent_id) and harness.preloads_native
        briefing = resolve(harness, machine, name, everything=everything)
    out = deliver(briefing, part, payload_event(payload), again=True)
    if briefing is not None and briefing.denies:
        return out  # told to abort: nothing joins that
    return with_loaded(out, harness, machine, payload, part, payload_event(payload))


def with_loaded(out, harness, machine, payload, part, event):
    """``out``, and the skills the agent loaded before its compaction given back with it (issue 45).

    For a harness that takes one context of any size from one handler (Codex, Copilot CLI):
    the re-delivery joins the briefing's context, one hook output. The harness's reader
    (``Harness.loaded_skills``) decides from its records alone whether this payload is the
    moment; loaded.py is imported only once it found something.
    """
    if harness is None or harness.loaded_skills is None or harness.part_budget is not None or part != 1:
        return out
    if not harness.loaded_skills(machine, payload):
        return out
    from .loaded import output
    again = output(harness, machine, payload, part, event)
    if not again:
        return out
    if not out:
        return again
    mine, theirs = context_holder(out), context_holder(again)
    joined = out if mine is not None else again
    if mine is not None:
        mine["additionalContext"] += "\n\n" + theirs["additionalContext"]
    joined["systemMessage"] = "\n".join(filter(None, [out.get("systemMessage"), again.get("systemMessage")]))
    return joined


def context_holder(out):
    """The dict of a hook output that holds its ``additionalContext``, or None."""
    for holder in (out, out.get("hookSpecificOutput")):
        if isinstance(holder, dict) and isinstance(holder.get("additionalContext"), str):
            return holder
    return None


DISPATCH = {
    "PreToolUse": handle_pre_tool_use,
    "BeforeTool": handle_pre_tool_use,  # Gemini CLI's name for it
    "SubagentStart": handle_subagent_start,
    "SessionStart": handle_session_start,
    "PostToolUse": handle_after_compaction,
    "UserPromptSubmit": handle_after_compaction,
}


def payload_event(payload):
    """The event a payload is for: ``hook_event_name``, or what the harness that omits it sent."""
    event = payload.get("hook_event_name")
    if isinstance(event, str):
        return event
    for record in HARNESSES.records():
        event = record.unnamed_event(payload) if record.unnamed_event else None
        if event:
            return event
    return None
