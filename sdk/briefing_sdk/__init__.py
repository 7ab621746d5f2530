"""briefing for the Claude Agent SDK (docs/agent-sdk.md).

    from briefing_sdk import with_briefing
    options = with_briefing(ClaudeAgentOptions(agents={...}), {"reviewer": {"skills": ["code-style"]}})

``with_briefing(options, briefing=None) -> options`` loads the briefing plugin
and tells its hook what the programmatic agents declare; ``plugin_path()`` is
the installed plugin folder; ``briefing_messages(messages)`` picks briefing's
own lines (pre-flight, audit, refusals, aborts) out of an SDK message stream,
without the skill text. Standard library only; Python 3.8 or newer.

Why an environment variable: the SDK sends ``options.agents`` to Claude Code
on its stdin, which no hook can read, while every key of ``options.env``
reaches the hooks unchanged. So ``with_briefing`` writes, into
``options.env[ENV_AGENTS]``, the one thing the hook needs of each agent: its
name, its native ``skills`` and briefing's own declaration. Written here and
read by the hook only; never set it by hand.
"""
import json
import os
from collections import namedtuple

__all__ = ["with_briefing", "plugin_path", "briefing_messages"]

# The environment contract (docs/agent-sdk.md "The environment contract"):
# {"version": 1, "agents": {NAME: {"defined": bool, "skills": [native...],
#                                  "briefing": {"skills": [...], "files": [...]}}}}
ENV_AGENTS = "BRIEFING_SDK_AGENTS"
CONTRACT_VERSION = 1
DECLARATION_KEYS = ("skills", "files")


def plugin_path():
    """The briefing plugin's folder: the copy installed with this module, else (a checkout) the
    repository root around it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.path.join(here, "plugin"), os.path.dirname(os.path.dirname(here))):
        if os.path.isfile(os.path.join(folder, ".claude-plugin", "plugin.json")):
            return folder
    raise RuntimeError("briefing_sdk: no briefing plugin next to %s; reinstall the briefing package" % here)


def with_briefing(options, briefing=None):
    """``options`` with the briefing plugin added to ``options.plugins`` and the environment
    contract written into ``options.env``; every other option is kept as the caller set it.

    ``briefing``: {agent name: {"skills": [...], "files": [...]}}, briefing's own declaration
    for a programmatic agent (``options.agents``, or ``--agents`` given in ``options.extra_args``),
    the counterpart of a file agent's ``briefing:`` block. The native ``skills`` of every
    programmatic agent are read from ``options.agents``. Works on the Python SDK's
    ``ClaudeAgentOptions`` and on any object (or dict) with the same fields.
    """
    agents = _field(options, "agents") or {}
    if not isinstance(agents, dict):
        raise TypeError("briefing_sdk: options.agents must be a dict of agent name -> definition")
    flagged = _flag_agents(_field(options, "extra_args") or {})
    env = dict(_field(options, "env") or {})
    contract = {}
    previous = _read_contract(env.get(ENV_AGENTS))
    for name, entry in previous.items():  # a second call keeps the first call's declarations
        if isinstance(entry, dict) and entry.get("briefing") and (name in agents or name in flagged):
            contract[name] = {"defined": False, "briefing": entry["briefing"]}
    for name, definition in agents.items():
        skills = _field(definition, "skills")
        entry = {"defined": True, "skills": _names(skills, "options.agents[%r].skills" % name)}
        if name in contract:
            entry["briefing"] = contract[name]["briefing"]
        contract[_agent_name(name)] = entry
    for name, declaration in (briefing or {}).items():
        name = _agent_name(name)
        if name not in agents and name not in flagged:
            raise ValueError("briefing_sdk: briefing names agent %r, which is not in options.agents "
                             "(nor in extra_args['agents']); a file agent declares its skills in its own "
                             "briefing: block" % name)
        if not isinstance(declaration, dict):
            raise TypeError("briefing_sdk: briefing[%r] must be a dict with 'skills' and/or 'files'" % name)
        unknown = sorted(set(declaration) - set(DECLARATION_KEYS))
        if unknown:
            raise ValueError("briefing_sdk: briefing[%r] has unknown key(s) %s (known: skills, files)" % (
                name, ", ".join(unknown)))
        own = {key: _names(declaration[key], "briefing[%r][%r]" % (name, key))
               for key in DECLARATION_KEYS if key in declaration}
        contract.setdefault(name, {"defined": False})["briefing"] = own
    env[ENV_AGENTS] = json.dumps({"version": CONTRACT_VERSION, "agents": contract}, sort_keys=True,
                                 separators=(",", ":"))
    plugins = list(_field(options, "plugins") or [])
    ours = plugin_path()
    if not any(_plugin_folder(p) and os.path.realpath(_plugin_folder(p)) == os.path.realpath(ours)
               for p in plugins):
        plugins.append({"type": "local", "path": ours})
    _set(options, "plugins", plugins)
    _set(options, "env", env)
    return options


# What briefing says, and where it sits in the SDK's message stream (docs/agent-sdk.md).
BriefingMessage = namedtuple("BriefingMessage", "kind event text")
BriefingMessage.__doc__ = """One of briefing's own messages in an SDK message stream.

kind   "preflight" (SessionStart: agents whose declarations would be refused), "audit" (a
       subagent was briefed: who got which skills), "not-briefed" (told to abort, or an
       unreadable declaration), "refusal" (the guard denied a spawn: the tool result the
       model got), or "notice" (anything else briefing said)
event  the hook event (SessionStart, SubagentStart, PreToolUse), or "tool_result"
text   briefing's words, never a skill's text
"""

DENIED = "PreToolUse:Agent hook error: "


def briefing_messages(messages):
    """briefing's messages in ``messages`` (the SDK's message objects, or their JSON as dicts), in
    order. Hook events carry briefing's ``systemMessage`` (the pre-flight always; the audit line
    with ``include_hook_events``); a refused spawn is an error tool result. The hook's
    ``additionalContext``, which holds the skill text, is never returned."""
    found = []
    for message in messages:
        for kind, event, text in _from_message(message):
            found.append(BriefingMessage(kind, event, text))
    return found


def _from_message(message):
    data = _field(message, "data")
    subtype = _field(message, "subtype")
    if isinstance(data, dict) and subtype is None:
        subtype = data.get("subtype")
    if isinstance(message, dict) and message.get("type") == "system":
        data = message
    if subtype == "hook_response" and isinstance(data, dict):
        event = data.get("hook_event") or _field(message, "hook_event_name") or ""
        for text in _system_messages(data.get("output")) or _system_messages(data.get("stdout")):
            if text.startswith("briefing"):
                yield _kind(text, event), event, text
        return
    content = _field(message, "content")
    if isinstance(message, dict) and isinstance(message.get("message"), dict):
        content = message["message"].get("content")  # stream-json: {"type": "user", "message": {...}}
    for block in content if isinstance(content, list) else ():
        if _field(block, "is_error") is not True:
            continue
        text = _text_of(_field(block, "content"))
        at = text.find(DENIED + "briefing: ")
        if at >= 0:
            yield "refusal", "tool_result", text[at + len(DENIED):]


def _system_messages(output):
    """The ``systemMessage`` of each JSON object in a hook's raw output (one object per hook run)."""
    out = []
    if not isinstance(output, str):
        return out
    for line in output.splitlines() or [output]:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("systemMessage"), str):
            out.extend(_split_lines(value["systemMessage"]))
    return out


def _split_lines(text):
    """A systemMessage may join several of briefing's messages, each starting "briefing"."""
    pieces, current = [], []
    for line in text.split("\n"):
        if line.startswith("briefing") and current:
            pieces.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        pieces.append("\n".join(current))
    return pieces


def _kind(text, event):
    if text.startswith("briefing pre-flight"):
        return "preflight"
    if text.startswith("briefing: ") and ("NOT briefed" in text[:400]):
        return "not-briefed"
    if text.startswith("briefing: ") and "\u2190" in text.split("\n", 1)[0]:
        return "audit"
    return "notice"


def _text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(_field(b, "text") if _field(b, "text") is not None else _field(b, "content"))
                         for b in content)
    return ""


# -- options, as the Python SDK's dataclass or as a plain dict ----------------

def _field(obj, name):
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _set(obj, name, value):
    if isinstance(obj, dict):
        obj[name] = value
    else:
        setattr(obj, name, value)


def _plugin_folder(plugin):
    path = _field(plugin, "path")
    return path if isinstance(path, str) else None


def _agent_name(name):
    if not isinstance(name, str) or not name:
        raise TypeError("briefing_sdk: an agent name must be a non-empty string, not %r" % (name,))
    return name


def _names(value, where):
    """A list of names as the contract holds it: strings only."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError("briefing_sdk: %s must be a list of strings, not %r" % (where, value))
    for item in value:
        if not isinstance(item, str):
            raise TypeError("briefing_sdk: %s must hold strings only, not %r" % (where, item))
    return list(value)


def _flag_agents(extra_args):
    """The agent names of ``--agents`` given as JSON in ``extra_args`` (a file path: none known)."""
    value = extra_args.get("agents") if isinstance(extra_args, dict) else None
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        if isinstance(value, str) and os.path.isfile(value):
            try:
                with open(value, encoding="utf-8") as handle:
                    value = handle.read()
            except (OSError, ValueError):
                return {}
        else:
            return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _read_contract(value):
    if not isinstance(value, str):
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    agents = parsed.get("agents") if isinstance(parsed, dict) else None
    return agents if isinstance(agents, dict) else {}
