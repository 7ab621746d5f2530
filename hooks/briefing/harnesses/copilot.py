"""GitHub Copilot CLI: everything that differs for it.

Its project (COPILOT_PROJECT_DIR up to the git root), agents (by frontmatter
name in ~/.copilot, .github and .claude agent folders, plugins), skills (by
frontmatter name, at any depth), its native preload, and its hooks-file check.
"""
import os

from ..constants import PARTS
from ..files import (ABSENT, is_dir, is_file, is_inside, read_json, read_tail,
                     read_text, read_text_or_empty, real_path, top_level_files, warn)
from . import HARNESSES, Harness
from ..jsontext import json_lines_with, parse_json
from ..lookup import (declaring_md_agents, find_in_tree, first_usable, folders_to_git_root, load_md_agent,
                      named_skill_files)
from ..names import split_plugin_name, valid_skill_name
from ..process import ancestor_named, flag_values
from ..records import Project, Skill, Unreadable
from ..yaml_subset import frontmatter_name, strip_comment_lines
from ..text import iso_seconds


# Copilot CLI took 100 kB and 1 MB of context whole, but a subagent whose first
# request exceeds the model's prompt budget fails (111,616 tokens for the BYOK
# model measured, copilot-cli.md fact 14): 256 KiB of skill text leaves room for
# the agent's own prompt, tools and work.
COPILOT_LIMIT = 256 * 1024


# Copilot CLI bounds one hook invocation's output at 10 MiB (its changelog, 1.0.76; not measured):
# 256 KiB of skill text prints as at most about 1.5 MiB of escaped JSON, so this never binds today, but
# the bound is kept on what is printed all the same (Briefing.over_output).
COPILOT_OUTPUT_LIMIT = 10 * 1024 * 1024


# The task tool's built-in agent types in Copilot CLI 1.0.102 (its agent_type enum), and the
# hidden rubber-duck, which the task tool accepts outside its enum (facts/rendering.md).
COPILOT_BUILTIN_AGENTS = frozenset(
    ("explore", "task", "general-purpose", "code-review", "research", "security-review", "rubber-duck"))


def copilot_agent_roots(machine):
    """(root, recursive) per agent folder Copilot CLI reads, in the order in which the first wins.

    Measured on 1.0.102 with one name in every root: ``~/.copilot/agents``
    wins over the project's ``.github/agents``, which wins over its
    ``.claude/agents``; started in a sub-folder, Copilot reads both in every
    folder up to the git root, and the nearest wins. All of them are read
    at any depth (``.claude/agents/deep/x.md`` and ``~/.copilot/agents/deep/x.md``
    were offered too).
    """
    folders = machine.project("copilot").folders
    return ([(os.path.join(machine.copilot_home, "agents"), True)]
            + [(os.path.join(f, ".github", "agents"), True) for f in folders]
            + [(os.path.join(f, ".claude", "agents"), True) for f in folders])


def copilot_skill_roots(machine):
    # Precedence (measured on 1.0.102, one name in every root): per folder from the project up
    # to the git root, .github/skills, then .agents/skills, then .claude/skills; then the
    # personal ~/.copilot/skills and ~/.agents/skills (fact 15). Plugins come after all of them.
    roots = []
    for folder in machine.project("copilot").folders:
        for sub in (".github", ".agents", ".claude"):
            roots.append(("project", os.path.join(folder, sub, "skills")))
    return roots + [("user", os.path.join(machine.copilot_home, "skills")),
                    ("user", os.path.join(machine.home, ".agents", "skills"))]


def copilot_plugins(machine):
    """Enabled Copilot CLI plugins as [(name, root)]: installed ones, then the running one.

    ``copilot plugin install`` records each plugin in ``$COPILOT_HOME/config.json``
    (``installedPlugins``: name, enabled, cache_path under ``installed-plugins/``,
    fact 18). A ``--plugin-dir`` plugin is recorded nowhere, so the only one a
    hook can see is the plugin it runs from (``COPILOT_PLUGIN_ROOT``).
    """
    if machine.state.get("copilot_plugins") is not None:
        return machine.state["copilot_plugins"]
    found = []
    for entry in copilot_installed(machine):
        if entry.get("enabled") is False:
            continue
        root, name = entry.get("cache_path"), entry.get("name")
        if isinstance(root, str) and os.path.isabs(root) and is_dir(root):
            found.append((copilot_plugin_name(root, name if isinstance(name, str) else None), root))
    own = machine.env.get("COPILOT_PLUGIN_ROOT") or machine.own_plugin_root
    if own and is_dir(own) and all(real_path(r) != real_path(own) for _, r in found):
        found.append((copilot_plugin_name(own, None), own))
    machine.state["copilot_plugins"] = found
    return found


def copilot_installed(machine):
    """The entries (objects) of ``installedPlugins`` in ``$COPILOT_HOME/config.json``, enabled or not."""
    path = os.path.join(machine.copilot_home, "config.json")
    data = None
    try:
        data = parse_json(strip_comment_lines(read_text(path)))
    except Unreadable as exc:
        if exc.reason not in ABSENT:
            warn("%s: %s" % (path, exc.reason))
    except ValueError as exc:
        warn("%s: invalid JSON (%s)" % (path, exc))
    entries = data.get("installedPlugins") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def find_copilot_project(machine):
    """Copilot CLI's project: COPILOT_PROJECT_DIR, and the folders above it up to the git root.

    A plugin hook runs with the plugin root as its working directory, so the
    process cwd says nothing; Copilot passes the session's folder as
    COPILOT_PROJECT_DIR (and as the payload ``cwd``) to every hook (fact 17).
    Skills are read in every folder from there up to the git root (fact 15).
    """
    env_dir = machine.env.get("COPILOT_PROJECT_DIR")
    if env_dir and os.path.isabs(env_dir) and is_dir(env_dir):
        folder, source = os.path.abspath(env_dir), "COPILOT_PROJECT_DIR"
        why = "$COPILOT_PROJECT_DIR, the folder Copilot CLI runs in (every hook gets it)"
    else:
        folder, source = machine.cwd, "cwd"
        why = "COPILOT_PROJECT_DIR is not set; the cwd, taken as the folder Copilot CLI runs in"
    folders, found = folders_to_git_root(folder)
    if not found:
        folders = [folder]  # no git root: Copilot reads the folder itself
    return Project(folder, source, why, folders,
                   ".github/agents, .claude/agents, and .github/.agents/.claude skills")


COPILOT_MANIFESTS = ("plugin.json", ".plugin/plugin.json", ".github/plugin/plugin.json",
                     ".claude-plugin/plugin.json")


def copilot_manifest(root):
    """(folder of the manifest relative to ``root``, its data) of the manifest Copilot CLI reads.

    Copilot looks for the manifest in this order (fact 16), so the first one present wins.
    """
    for rel in COPILOT_MANIFESTS:
        path = os.path.join(root, rel)
        if is_file(path):
            return os.path.dirname(rel), read_json(path)
    return None, None


def copilot_plugin_name(root, fallback):
    """A Copilot plugin's namespace: its manifest ``name``, else the recorded name, else the folder."""
    _, data = copilot_manifest(root)
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else (fallback or os.path.basename(root))


def load_copilot_agent(path, name):
    return load_md_agent(path, name, "copilot")


def find_copilot_agent(machine, agent_type):
    """The file Copilot CLI would load for ``agent_type`` (the task tool's agent_type), or None.

    Copilot knows an agent by its frontmatter ``name`` (measured: ``fileA.agent.md``
    with ``name: nameA`` is offered as ``nameA``); a plugin's agent is ``plugin:agent``.
    """
    if not isinstance(agent_type, str) or not agent_type or agent_type in COPILOT_BUILTIN_AGENTS:
        return None  # a built-in agent has no file (an override is not measured)
    plugin, colon, local = agent_type.partition(":")
    if colon:
        if not (valid_skill_name(plugin) and valid_skill_name(local)):
            return None
        for manifest_name, root in copilot_plugins(machine):
            if manifest_name == plugin:
                agent = find_copilot_agent_in(os.path.join(root, "agents"), local, True)
                if agent is not None:
                    agent.name = agent_type
                    return agent
        return None
    for root, recursive in copilot_agent_roots(machine):
        agent = find_copilot_agent_in(root, agent_type, recursive)
        if agent is not None:
            return agent
    return None


COPILOT_FAST = (".agent.md", ".md")


def find_copilot_agent_in(root, name, recursive):
    """``<name>.agent.md`` or ``<name>.md`` first (trusted when its name agrees), then every ``*.md``."""
    walked = None if recursive else sorted(top_level_files(root, ".md"))
    return find_in_tree(root, name, ".md", load_copilot_agent, fast=COPILOT_FAST, walked=walked)


def resolve_copilot_skill(machine, name, source):
    """A skill as Copilot CLI finds it: by frontmatter name, project roots, personal, then plugins.

    A bare name also finds a plugin's skill (measured: ``skills: [plug-skill]``
    preloads the ``--plugin-dir`` plugin's skill). ``plugin:skill`` names the
    plugin, as Copilot's own command name for a plugin skill does.
    """
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")

    def candidates():
        if plugin is None:
            for origin, root in machine.live("copilot", lambda: copilot_skill_roots(machine)):
                for path in named_skill_files(machine, root, skill):
                    yield path, origin
        for plugin_name, root in copilot_plugins(machine):
            if plugin is not None and plugin_name != plugin:
                continue
            # once per payload, not per name: a declaration may name thousands
            manifest_dir, _ = machine.memo(("copilot manifest", root), lambda: copilot_manifest(root))
            for folder, single in machine.plugin_skill_dirs(root, manifest_dir or ".claude-plugin"):
                origin = "plugin %s" % plugin_name
                if single:
                    path = os.path.join(folder, "SKILL.md")
                    if is_file(path) and frontmatter_name(read_text_or_empty(path)) == skill:
                        yield path, origin
                else:
                    for path in named_skill_files(machine, folder, skill):
                        yield path, origin

    return first_usable(name, source, candidates())


def all_copilot_agents(machine, every=False):
    """Every declaring Copilot CLI agent that wins its name, in precedence order (as above)."""
    roots = [(None, root, recursive) for root, recursive in copilot_agent_roots(machine)]
    roots += [(name, os.path.join(root, "agents"), True) for name, root in copilot_plugins(machine)]
    return declaring_md_agents("copilot", roots, COPILOT_FAST, (), COPILOT_BUILTIN_AGENTS, every=every)


def copilot_skill_places(skill):
    return ("a skill named %s (its frontmatter name) under .github/skills/, .agents/skills/ or "
            ".claude/skills/ in the project, ~/.copilot/skills/, ~/.agents/skills/, or an installed "
            "plugin" % skill)


# The task tool as a Claude-format hooks file names it, and its own names; the handler that
# briefs a compacted agent again runs for every other tool (Copilot anchors a matcher and
# honours a lookahead: measured on 1.0.102, it fired for bash and not for the task call).
COPILOT_SPAWN_NAMES = ("Agent", "task", "Task")
COPILOT_AGAIN_MATCHER = "(?!(?:Agent|Task|task)$).*"


def copilot_hooks_check(root, installed=False):
    """The hooks file Copilot CLI reads for this plugin, checked for what Copilot rejects or skips.

    Copilot reads the first manifest of COPILOT_MANIFESTS, here
    .github/plugin/plugin.json, which names hooks/hooks.copilot.json: one
    handler per event, no --part (one context of any size, fact 9). A copy
    without it falls back to the Claude Code layout's hooks/hooks.json, which
    briefs too, with 8 processes per event. In any file an empty matcher makes
    Copilot reject the whole file, a SubagentStart matcher is matched against
    the agent's name and ``"*"`` never fires (facts 7, 12), and the guard must
    match the task tool (``Agent``, ``task`` or ``Task``).
    """
    from ..hooks_files import not_this_copy, part_of, read_hooks  # the doctor's checks only
    import re
    folder, data = copilot_manifest(root)
    if folder is None:
        return not_this_copy("copilot-hooks", "Copilot CLI", " or ".join(COPILOT_MANIFESTS))
    rel = data.get("hooks") if isinstance(data, dict) and isinstance(data.get("hooks"), str) else None
    # A manifest's paths are relative to the plugin root, wherever the manifest is (measured with
    # .github/plugin/plugin.json naming "hooks/hooks.copilot.json").
    path = os.path.normpath(os.path.join(root, rel if rel else os.path.join("hooks", "hooks.json")))
    if not is_inside(path, root):
        return {"name": "copilot-hooks", "status": "FAIL",
                "detail": "the hooks path %r in the Copilot manifest leaves the plugin" % rel}
    try:
        raw = parse_json(read_text(path)).get("hooks", {})
        hooks = read_hooks(path)
    except (Unreadable, ValueError, AttributeError) as exc:
        return {"name": "copilot-hooks", "status": "FAIL", "detail": "cannot read %s: %s" % (path, exc)}
    problems = []
    for event, groups in (raw.items() if isinstance(raw, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            if isinstance(group, dict) and group.get("matcher") == "":
                problems.append("%s has an empty matcher, which makes Copilot CLI reject the whole "
                                "file: leave the matcher out" % event)
    for matcher, _, _, _ in hooks.get("SubagentStart", []):
        if matcher not in (None, ".*"):
            problems.append("SubagentStart matcher %r: Copilot CLI matches it against the agent's "
                            "name (\"*\" never fires); leave it out" % matcher)
    def matches(matcher, tools):
        try:
            return matcher in (None, "*") or (isinstance(matcher, str) and bool(matcher) and any(
                re.fullmatch(matcher, tool) for tool in tools))
        except re.error:
            return False

    entries = hooks.get("PreToolUse", [])
    guards = [e for e in entries if matches(e[0], COPILOT_SPAWN_NAMES)]
    again = [e for e in entries if matches(e[0], ("Bash", "bash", "view", "edit"))]
    if not guards:
        problems.append("PreToolUse needs the guard with a matcher for Copilot's task tool (\"Agent\")")
    elif rel and len(guards) > 1:
        problems.append("PreToolUse has %d handlers for Copilot's task tool: the guard runs twice on "
                        "every delegation" % len(guards))
    if rel and len(again) != 1:
        # A compacted agent's next tool call, whichever tool it is, brings its briefing back.
        problems.append("PreToolUse needs one handler for every other tool (matcher %r: it briefs a "
                        "compacted agent again), found %d" % (COPILOT_AGAIN_MATCHER, len(again)))
    if not hooks.get("SubagentStart"):
        problems.append("SubagentStart has no briefing handler")
    shown = os.path.relpath(path, root)
    if rel:
        for event in ("SessionStart", "PreToolUse", "SubagentStart"):
            entries = hooks.get(event, [])
            most = 2 if event == "PreToolUse" else 1  # the guard, and the handler of every other tool
            if len(entries) > most or any(part_of(h["command"]) not in (None, 1) for _, h, _, _ in entries):
                problems.append("%s must register one handler without --part in %s (it delivers the "
                                "whole briefing)" % (event, shown))
    if problems:
        return {"name": "copilot-hooks", "status": "FAIL", "detail": "; ".join(problems)}
    if not rel and folder == ".claude-plugin" and not installed:
        # A copy made for Claude Code alone (the Python distribution's): nothing of Copilot's to
        # warn about here; the copy Copilot CLI loads, if any, is judged by the installed check.
        return not_this_copy("copilot-hooks", "Copilot CLI", " or ".join(COPILOT_MANIFESTS[:3]))
    if not rel:
        return {"name": "copilot-hooks", "status": "WARN",
                "detail": "no Copilot manifest names a hooks file, so Copilot CLI reads %s: it briefs, "
                          "but starts %d processes per event instead of one, and a compacted agent is "
                          "not briefed again" % (shown, PARTS)}
    return {"name": "copilot-hooks", "status": "ok",
            "detail": "%s registers one handler per event, valid for Copilot CLI" % shown}


def copilot_native_skip(machine, skill):
    """Copilot preloads an agent's ``skills:`` entries itself, as <skill-context> blocks (fact 4),
    looking each up by bare name; a plugin:skill entry it skips (measured on 1.0.102)."""
    return "a plugin:skill entry, which Copilot CLI does not preload" if ":" in skill.name else None


# Compaction (facts/compaction.md, measured on 1.0.102): no event fires into a compacted agent,
# a subagent's or a `copilot --agent` session's, and its compaction drops every hook context
# (and a subagent's <skill-context> preload). Its next tool call runs PreToolUse, whose context
# reaches the request after that call whole (300,000 characters measured; PostToolUse's is cut
# to about 10,000). The session's events.jsonl records compaction_start/compaction_complete
# with the agent's id (none for the main session), and a hook.start for every preToolUse run
# with the agent's id and the tool calls it is for, before the hook runs. It does not record
# what a preToolUse hook printed (measured: the briefing delivered there is nowhere in
# session-state; only sessionStart, subagentStart and postToolUse outputs are kept).
#
# Compaction runs in the background from a snapshot and is applied when it completes; the
# agent works on meanwhile, and what is added after the snapshot survives. Copilot writes
# events.jsonl behind time, through a debounced writer (measured on 1.0.102, issue 36: a hook
# never saw its own run's hook.start, nor events younger than 0.02 to 0.18 s; the first call
# after a compaction, 0.02 s after it, did not see it, the next one did), so what an earlier
# run saw is read off the timestamps, and only where it is certain:
#
# - A run delivers when it sees an applied compaction of its agent and no earlier run of that
#   agent (any tool but the task tool, whose calls meet only the guard) that surely saw it:
#   one that started COPILOT_SETTLE seconds or more after the compaction completed (four times
#   the longest delay measured). However soon after the compaction this call comes, and
#   however late its hook starts, the first run that sees the compaction brings the briefing.
# - Earlier means stamped before this call's payload: Copilot stamps the payload, then records
#   the run's hook.start (2 to 31 ms later, measured), so this run's own record, and the records
#   of calls made after it, never count, however late the hook starts (a loaded machine, or
#   PowerShell probing interpreters). Without a payload timestamp, a record of a call with this
#   call's arguments counts as this run's own.
#
# A run that saw the compaction within COPILOT_SETTLE of it is not certain, so the next call
# delivers again: a second copy when tool calls follow a compaction within a second of each
# other (the fake model of the e2e suite answers at once), never none.
COPILOT_SETTLE = 1.0


# The file is the whole session's, subagents included; 4 MiB of its end holds many tool rounds
# (each hook.start carries the call's arguments, postToolUse's its result, at most ~20 kB
# before Copilot spills it to a file), and one pread of it costs about a millisecond.
COPILOT_TAIL = 4 * 1024 * 1024


def copilot_events(machine, payload):
    """The session's events.jsonl for a payload, under $COPILOT_HOME/session-state, or None.

    A subagent's tool-call payloads carry no transcript_path; its session is its
    ``parent_agent_id`` (the main session's own is ``session_id``). Only an id made of
    letters, digits, ``-`` and ``_`` names a folder.
    """
    sid = payload.get("parent_agent_id") if payload.get("agent_id") else payload.get("session_id")
    if not (isinstance(sid, str) and 0 < len(sid) <= 128 and sid.isascii()
            and sid.replace("-", "").replace("_", "").isalnum()):
        return None
    return os.path.join(machine.copilot_home, "session-state", sid, "events.jsonl")




def copilot_compacted(machine, payload, name):
    """Whether this tool call is one that brings the agent's briefing back (see above)."""
    path = copilot_events(machine, payload)
    if path is None:
        return False
    # Read once per hook run: the briefing's check and the loaded skills' (copilot_loaded) both ask.
    tail = machine.memo(("copilot tail", path), lambda: read_tail(path, COPILOT_TAIL))
    if tail is None:
        return False
    agent_id = payload.get("agent_id") or None

    def mine(event):
        return event.get("agentId") == agent_id  # the main session's events carry none

    done = None
    for at, event in json_lines_with(tail, b'"type":"session.compaction_complete"'):
        data = event.get("data")
        if (event.get("type") == "session.compaction_complete" and mine(event) and isinstance(data, dict)
                and data.get("success") is True and data.get("outcome", "applied") == "applied"):
            done = (at, iso_seconds(event.get("timestamp")))
    if done is None or done[1] is None:
        return False
    this_call = payload_seconds(payload.get("timestamp"))
    sure = done[1] + COPILOT_SETTLE
    for _, event in json_lines_with(tail, b'"hookType":"preToolUse"', done[0]):
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        calls = data.get("input", {}).get("toolCalls") if isinstance(data.get("input"), dict) else None
        calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        started = iso_seconds(event.get("timestamp"))
        if (event.get("type") != "hook.start" or not mine(event) or started is None or started < sure
                or not any(c.get("name") not in COPILOT_SPAWN_NAMES for c in calls)):
            continue
        if this_call is not None:
            earlier = started < this_call
        else:
            earlier = not any(c.get("args") == payload.get("tool_input") for c in calls)
        if earlier:
            return False  # that run surely saw the compaction: it delivered
    return True


# Skills an agent loaded while it worked (issue 45, facts/invoked-skills.md; measured on 1.0.102):
# the skill tool (the main session's and a subagent's alike) records ``skill.invoked`` with the
# agent's id (none for the main session), the skill's name, path and ``content``: the body Copilot
# put into the context, whole, without the frontmatter. Its <skill-context> message is dropped when
# a compaction is applied, and no event fires then: the first tool call that brings a compacted
# agent's briefing back (copilot_compacted) brings these back too. The body comes from the record,
# which is what the agent had, so nothing outside events.jsonl is read for it (a --plugin-dir
# plugin's skills are invisible to a hook).
#
# How much of the end: read once the compaction is seen, not on every tool call; 16 MiB holds many
# compactions' worth of rounds (COPILOT_TAIL). A skill loaded further back is not seen
# (docs/loaded-skills.md).
COPILOT_LOADED_TAIL = 16 * 1024 * 1024


def copilot_loaded(machine, payload):
    """``Harness.loaded_skills`` for Copilot CLI: a loaded.Found at the tool call that brings a
    compacted agent's briefing back (``copilot_compacted``, the same rule, so the same call), for a
    subagent and the main session alike; else None. Not on the task tool's calls (the guard's)."""
    if payload.get("tool_name") in COPILOT_SPAWN_NAMES or copilot_event_of(payload) != "PreToolUse":
        return None
    key = ("copilot loaded", copilot_events(machine, payload), repr(payload.get("agent_id")))  # one per agent
    return machine.memo(key, lambda: copilot_loaded_found(machine, payload))


def copilot_event_of(payload):
    event = payload.get("hook_event_name")
    return event if isinstance(event, str) else None


def copilot_loaded_payloads(machine, session):
    """[(who, payload)] the doctor's ``--loaded`` asks ``copilot_loaded`` with: the main session of
    session ``session`` (None: the newest of this project) and each of its subagents, as at their
    next compaction."""
    from ..audit.copilot import sessions
    found = [s for s in sessions(machine, 0) if session in (None, s.id)][:1]
    out = []
    for one in found:
        base = {"hook_event_name": "PreToolUse", "tool_name": "bash", "tool_input": {}, "next_compaction": True}
        out.append(("session %s (main session)" % one.id, dict(base, session_id=one.id)))
        tail = read_tail(one.path, COPILOT_LOADED_TAIL) or b""
        for _, event in json_lines_with(tail, b'"type":"subagent.started"'):
            data, agent_id = event.get("data"), event.get("agentId")
            name = data.get("agentName") if isinstance(data, dict) else None
            if event.get("type") == "subagent.started" and isinstance(agent_id, str) and isinstance(name, str):
                out.append(("subagent %s #%s" % (name, agent_id), dict(
                    base, session_id=agent_id, agent_id=agent_id, agent_type=name, parent_agent_id=one.id)))
    return out


def copilot_loaded_found(machine, payload):
    if payload.get("next_compaction") is not True and not copilot_compacted(machine, payload, None):
        return None
    loads = copilot_loaded_skills(machine, payload)
    if not loads:
        return None
    from ..loaded import Found, Loaded  # only once something was loaded
    agent = payload.get("agent_type") if payload.get("agent_id") else copilot_session_agent(machine, payload)
    return Found([Loaded(skill.name, text=skill.body, path=skill.path, order=order, event="the skill tool")
                  for order, skill in loads], restored=copilot_restored(machine, payload, loads),
                 agent=agent if isinstance(agent, str) and agent else None)


# What Copilot CLI 1.0.102 brings back itself (measured, tests/e2e/test_loaded_copilot.py): in a
# session resumed in a new process (``--resume``), its compaction summary carries an
# ``<invoked_skills>`` block with the most recently invoked skill whole ("## Most recent skill: N
# … Continue to follow these instructions:", a 30,000-character body arrived whole) and the others
# by name only ("## Previously used skills … Reactivate one"). In the process that invoked them it
# brings back none. So the most recent one is left out only where that was measured: the main
# session, the skill invoked before the session's last resume and none after it, its body no
# longer than what was seen whole. Anywhere else a second copy is possible, none is not.
COPILOT_RESTORED_CHARS = 30000


def copilot_restored(machine, payload, loads):
    """{name} of the skill Copilot re-attaches itself at this compaction (see above), or empty."""
    if payload.get("agent_id") or not loads:
        return set()
    order, skill = loads[-1]
    if len(skill.body) > COPILOT_RESTORED_CHARS:
        return set()
    tail = copilot_loaded_tail(machine, payload)
    if payload.get("next_compaction") is not True:  # the doctor asks as in a new process
        done = copilot_loaded_end(tail, None) if tail else None
        if done is None or not order < tail.rfind(b'"type":"session.resume"', 0, done):
            return set()
    return {skill.name}


def copilot_loaded_tail(machine, payload):
    """The last COPILOT_LOADED_TAIL bytes of the session's events.jsonl, read once per hook run, or None."""
    path = copilot_events(machine, payload)
    return machine.memo(("copilot loaded tail", path), lambda: read_tail(path, COPILOT_LOADED_TAIL)) if path else None


def copilot_loaded_end(tail, agent_id):
    """The offset of the agent's last applied compaction in ``tail``, or None."""
    done = None
    for at, event in json_lines_with(tail, b'"type":"session.compaction_complete"'):
        data = event.get("data")
        if (event.get("type") == "session.compaction_complete" and event.get("agentId") == agent_id
                and isinstance(data, dict) and data.get("success") is True
                and data.get("outcome", "applied") == "applied"):
            done = at
    return done


def copilot_loaded_skills(machine, payload):
    """[(order, Skill)]: the skills the payload's agent invoked before its last applied compaction,
    oldest first, each at its latest invocation (by name); [] when it was not compacted."""
    tail = copilot_loaded_tail(machine, payload)
    if not tail:
        return []
    agent_id = payload.get("agent_id") or None
    done = copilot_loaded_end(tail, agent_id)
    if payload.get("next_compaction") is True:  # the doctor's --loaded: as if it compacted now
        done = len(tail)
    if done is None:
        return []
    latest = {}
    for at, event in json_lines_with(tail[:done], b'"type":"skill.invoked"'):
        data = event.get("data")
        if event.get("type") != "skill.invoked" or event.get("agentId") != agent_id or not isinstance(data, dict):
            continue
        name, body, where = data.get("name"), data.get("content"), data.get("path")
        if not isinstance(name, str) or split_plugin_name(name)[1] is None or not isinstance(body, str):
            continue
        where = where if isinstance(where, str) and os.path.isabs(where) and "\0" not in where else None
        source = data.get("source")
        latest[name] = (at, Skill(name, "loaded", path=where, body=body, size=len(body.encode("utf-8")),
                                  origin=source if isinstance(source, str) else None))
    return sorted(latest.values(), key=lambda pair: pair[0])


def payload_seconds(value):
    """When Copilot made a hook payload: its ``timestamp``, ISO (Claude format) or epoch
    milliseconds (Copilot's own format), in seconds; None when absent or unreadable."""
    if isinstance(value, str):
        return iso_seconds(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value / 1000.0
    return None


def copilot_session_agent(machine, payload):
    """The agent a `copilot --agent NAME` main session runs as, from Copilot's command line.

    Its sessionStart and tool-call payloads name no agent (facts/compaction.md), and the
    hook's parent process is the copilot binary itself (measured on 1.0.102).
    """
    if payload.get("agent_id"):
        return None
    if "copilot_session_agent" not in machine.state:
        _, argv = ancestor_named(("copilot", "copilot.exe"))
        values = flag_values(argv, "--agent") if argv else []
        machine.state["copilot_session_agent"] = values[-1] if values and values[-1] else None
    return machine.state["copilot_session_agent"]


# Copilot CLI 1.0.102 gives its general-purpose subagent the project's instruction files (AGENTS.md,
# CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, .github/instructions/*.instructions.md),
# and a custom agent or the built-in explore none of them (measured, docs/files.md). Only the files
# at the project folder were measured: briefing delivers the rest.
COPILOT_INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md")


def copilot_loads_file(machine, agent, path, session):
    """Why Copilot CLI already loads the project file ``path`` into ``agent``, or None."""
    if agent.name != "general-purpose" or session:
        return None
    from ..standing import names_in
    for rel in names_in(machine, path, [machine.project("copilot").folder]):
        if rel in COPILOT_INSTRUCTION_FILES:
            return "Copilot CLI loads %s into its general-purpose agent" % rel
    return None


# README.md, Install.
COPILOT_INSTALL = "copilot plugin install %s"


def copilot_installed_check(machine):
    """The doctor's ``installed`` check: briefing in config.json's installedPlugins, enabled, the copy
    Copilot CLI loads (copilot_plugins); a ``--plugin-dir`` session is recorded nowhere."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    fix = COPILOT_INSTALL % checkout()
    for entry in copilot_installed(machine):
        root = entry.get("cache_path")
        if entry.get("name") != "briefing" or not (isinstance(root, str) and os.path.isabs(root)):
            continue
        if entry.get("enabled") is False:
            return result("copilot", "WARN", "briefing is installed but disabled in Copilot CLI: "
                          "copilot plugin enable briefing")
        return judge_copy("copilot", "Copilot CLI", root, lambda r: copilot_hooks_check(r, installed=True), fix)
    return not_installed("copilot", "Copilot CLI", fix, " (a session started with `copilot --plugin-dir` loads "
                         "it without an install, which the doctor cannot see from outside that session)")


HARNESS = Harness(
    HARNESSES.record("copilot"),
    find_project=find_copilot_project,
    find_agent=find_copilot_agent,
    all_agents=all_copilot_agents,
    resolve_skill=resolve_copilot_skill,
    skill_places=copilot_skill_places,
    preloads_native=True,
    native_skip=copilot_native_skip,
    # One flat additionalContext of any size (fact 9, 14), from part 1.
    part_budget=None, whole_limit=COPILOT_LIMIT, output_limit=COPILOT_OUTPUT_LIMIT, flat_context=True,
    # hooks/hooks.copilot.json, named by .github/plugin/plugin.json, which Copilot reads before
    # .claude-plugin/plugin.json (fact 16, measured).
    hooks_check=copilot_hooks_check,
    installed_check=copilot_installed_check,
    skill_roots=copilot_skill_roots,
    # The task tool requires agent_type (fact 1): no default agent.
    builtin_agents=COPILOT_BUILTIN_AGENTS,
    agent_names=lambda machine: [a for a, _ in all_copilot_agents(machine, every=True) if a],
    compacted=copilot_compacted, session_agent=copilot_session_agent,
    loads_file=copilot_loads_file,
    loaded_skills=copilot_loaded, loaded_payloads=copilot_loaded_payloads,
    redelivery="at spawn (subagentStart; a `copilot --agent` session at sessionStart), and again after "
               "every compaction of the agent, at its next tool call (PreToolUse), as the session's "
               "events.jsonl shows")
