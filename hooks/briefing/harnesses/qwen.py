"""Qwen Code: everything that differs for it (facts/qwen-code.md, measured on 0.24.4).

Its project (QWEN_PROJECT_DIR, that folder only), agents (by frontmatter name,
case-blind: the project's .qwen/agents, the user's, the active extensions'),
skills (by frontmatter name: .qwen/skills and .agents/skills of the project and
the user, an extension's as ``<extension>:<name>``, Qwen's bundled ones), the
one channel into a subagent (``${hook_context}`` in its body) and the refusal of
a declaring agent whose body has none, and its hooks-file check.
"""
import os

from ..files import is_dir, is_file, path_kind, read_json, read_text, real_path, shown_path, warn
from . import HARNESSES, Harness, qwen_dir
from ..lookup import (extension_enabled, index_by_name, key_line_mentions, load_skill, named_agent_files,
                      project_from_env, tree_shows)
from ..names import split_plugin_name, valid_skill_name, dedupe
from ..process import ancestor_named
from ..records import Agent, ParseError, Skill, Unreadable
from ..text import shown_name
from ..yaml_subset import frontmatter_name, may_spell, parse_frontmatter, split_frontmatter


# The skill text of one briefing: the cap of the other one-context harnesses (100,000 characters
# arrived whole, facts §2).
QWEN_LIMIT = 512 * 1024


# What Qwen Code keeps of a command hook's stdout (MAX_OUTPUT_LENGTH 1 MiB, hookRunner in 0.24.4;
# measured, docs/qwen-code.md): output cut there is not JSON, and the briefing silently vanishes. The
# hook prints JSON with every non-ASCII character escaped, up to 6 bytes for one of text (a Cyrillic
# letter: 2 bytes of UTF-8, 6 printed; an emoji: 4 and 12), so this is measured on what is printed
# (Briefing.over_output). Printing UTF-8 instead would not help: Qwen Code decodes each pipe chunk on
# its own, so a character split between two chunks would arrive as U+FFFD.
QWEN_OUTPUT_LIMIT = 1024 * 1024


# The built-in agents of 0.24.4 (BuiltinAgentRegistry): every file agent of the same name wins
# over one (loadSubagent: session, project, user, extension, then built-in).
QWEN_BUILTIN_AGENTS = frozenset(("general-purpose", "Explore", "statusline-setup", "review-agent",
                                 "claude-code", "codex"))
# BuiltinAgentRegistry.getBuiltinAgent compares toLowerCase(): explore, EXPLORE and General-Purpose
# start the built-ins, so a rule naming Explore judges every spelling of it (issue 43).
QWEN_BUILTIN_LOWER = dict((name.lower(), name) for name in QWEN_BUILTIN_AGENTS)


def qwen_builtin_name(machine, name):
    """The built-in Qwen Code runs for ``name`` (no file answered it), as its registry spells it."""
    return QWEN_BUILTIN_LOWER.get(name.lower(), name)


# subagent_type "fork" (any case) spawns a copy of the parent with its conversation (AgentTool).
QWEN_FORK = "fork"


# The one place a SubagentStart context reaches a subagent: Qwen Code stores it as the template
# variable hook_context and fills the agent's body in with templateString() (facts §2).
HOOK_CONTEXT = "${hook_context}"

# The keys every spawn fills into an agent's body: the task, and the hooks' context.
QWEN_CONTEXT_KEYS = ("task_prompt", "hook_context")


def find_qwen_project(machine):
    """Qwen Code's project: the folder it runs in, which every hook gets as QWEN_PROJECT_DIR.

    It reads ``.qwen/agents``, ``.qwen/skills`` and ``.agents/skills`` of that folder
    only, and none when that folder is the home folder (SubagentManager, SkillManager).
    """
    return project_from_env(machine, "QWEN_PROJECT_DIR", "the folder Qwen Code runs in",
                            ".qwen/agents, .qwen/skills and .agents/skills")


def qwen_project_read(machine):
    """The project folder whose ``.qwen/`` Qwen Code reads, or None when it is the home folder."""
    folder = machine.project("qwen").folder
    if real_path(folder) == real_path(machine.home):
        return None
    return folder


def qwen_extensions(machine):
    """Active Qwen Code extensions as [(name, root)], in loading order.

    Each lives in ``<qwen dir>/extensions/<folder>/`` with a ``qwen-extension.json``
    (a Claude Code plugin or a Gemini CLI extension gets one when installed); a linked
    one's files stay at the ``source`` of ``.qwen-extension-install.json``. One is off
    in a folder by the rules of ``extension-enablement.json``, the lexical or the real
    path matching (ExtensionManager.isEnabled). ``-e`` on the command line is beyond a hook.
    """
    if machine.state.get("qwen_extensions") is not None:
        return machine.state["qwen_extensions"]
    found = []
    base = os.path.join(qwen_dir(machine), "extensions")
    try:
        folders = sorted(e.name for e in os.scandir(base) if e.is_dir())
    except OSError:
        folders = []
    enablement = read_json(os.path.join(base, "extension-enablement.json")) if folders else None
    folder = machine.project("qwen").folder
    here = [folder, real_path(folder)]
    for sub in folders:
        root = os.path.join(base, sub)
        meta = read_json(os.path.join(root, ".qwen-extension-install.json"))
        if isinstance(meta, dict) and meta.get("type") == "link" and isinstance(meta.get("source"), str) \
                and meta["source"]:
            root = meta["source"]
        manifest = read_json(os.path.join(root, "qwen-extension.json"))
        name = manifest.get("name") if isinstance(manifest, dict) else None
        if isinstance(name, str) and name and extension_enabled(enablement, name, here):
            found.append((name, root))
    machine.state["qwen_extensions"] = found
    return found


def qwen_agent_roots(machine):
    # Precedence: loadSubagent takes the project's agent, then the user's, then an extension's,
    # then a built-in; within a folder the first file (in name order) whose name matches.
    project = qwen_project_read(machine)
    roots = [("project", os.path.join(project, ".qwen", "agents"))] if project else []
    roots.append(("user", os.path.join(qwen_dir(machine), "agents")))
    return roots + [("extension %s" % name, os.path.join(root, "agents")) for name, root in qwen_extensions(machine)]


def qwen_agent_files(root):
    """``*.md`` directly in ``root``, in name order (readdir, as libuv sorts it), files only."""
    try:
        names = sorted(e.name for e in os.scandir(root) if e.name.endswith(".md"))
    except (OSError, ValueError):
        return []
    return [os.path.join(root, n) for n in names if is_file(os.path.join(root, n))]


def load_qwen_agent(machine, path, name, scope, text=None):
    """The agent in ``path`` if its frontmatter name is ``name``, compared case-blind as Qwen
    Code does (None otherwise). A name not given (None) takes whatever the file says."""
    if text is None:
        try:
            text = read_text(path)
        except Unreadable as exc:
            warn("%s: %s" % (path, exc.reason))
            return None
    if name is not None and not may_spell(text.lower(), name.lower()):
        return None
    try:
        fm = parse_frontmatter(text)
    except ParseError as exc:
        if name is None or not key_line_mentions(split_frontmatter(text)[0] or (), "name", ":", name):
            return None
        return Agent("qwen", name, path, error="cannot read frontmatter: %s" % exc)
    if not isinstance(fm.name, str) or not fm.name or (name is not None and fm.name.lower() != name.lower()):
        return None
    agent = Agent("qwen", fm.name, path, skills=dedupe(fm.skills), wildcard_rules=fm.wildcard_rules,
                  files=dedupe(fm.files))
    body = split_frontmatter(text)[1]
    machine.state.setdefault("qwen_hook_context", {})[path] = HOOK_CONTEXT in body
    if fm.native:
        # Qwen Code 0.24.4 accepts skills: and preloads nothing from it (facts §4).
        agent.warnings.append("its skills: field (%s) is ignored by Qwen Code, which preloads nothing "
                              "from it: list them under briefing: skills: instead" % ", ".join(fm.native))
    agent.warnings += [w for w in unknown_placeholders(body, scope)]
    return agent


def unknown_placeholders(body, scope):
    """Why Qwen Code would fail this agent's spawn over a ``${word}`` other than ``${hook_context}``.

    templateString() refuses a body naming a key its context lacks (facts §2:
    ``Missing context values for the following keys``); every spawn's context has
    QWEN_CONTEXT_KEYS (AgentTool in 0.24.4).
    """
    keys, at = [], body.find("${")
    while at >= 0:
        end = body.find("}", at)
        word = body[at + 2:end] if end > at else ""
        if word and word not in QWEN_CONTEXT_KEYS and (word[0].isalpha() or word[0] == "_") and \
                all(c.isalnum() or c == "_" for c in word) and word not in keys:
            keys.append(word)
        at = body.find("${", at + 2)
    if not keys:
        return []
    return ["its body names ${%s}, which Qwen Code cannot fill in: spawning it fails with \"Missing context "
            "values for the following keys: %s\"" % (keys[0], ", ".join(keys))]


def find_qwen_agent(machine, agent_name):
    """The file Qwen Code would run for ``agent_name``, as an Agent, or None (a built-in, or none).

    Qwen Code matches the name case-blind, and a file of a built-in's name wins over it.
    """
    if not isinstance(agent_name, str) or not valid_skill_name(agent_name):
        return None
    if agent_name.lower() == QWEN_FORK:
        # Not an agent of its own: the parent, continued with its whole conversation. briefing
        # briefs no main session, so no glob rule applies to it (a rule naming "fork" still does).
        return Agent("qwen", QWEN_FORK, None, wildcard_rules=False)
    for scope, root in qwen_agent_roots(machine):
        for path in qwen_agent_files(root):
            agent = load_qwen_agent(machine, path, agent_name, scope)
            if agent is not None:
                return agent
    return None


def all_qwen_agents(machine, every=False):
    """Every Qwen Code agent that wins its name (declaring ones; ``every``: all of them)."""
    seen = set()
    for found, error in named_agent_files(qwen_agent_roots(machine), qwen_agent_files, every):
        if error:
            yield None, error
            continue
        scope, path, text, name = found
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        agent = load_qwen_agent(machine, path, None, scope, text)
        if agent is not None and (every or agent.declares):
            yield agent, None


def qwen_skill_name(text):
    """The frontmatter ``name`` Qwen Code registers a SKILL.md under, or None when it skips the
    file: both ``name`` and ``description`` are required (SkillManager.parseSkillContent)."""
    name = frontmatter_name(text)
    if not name:
        return None
    for line in split_frontmatter(text)[0] or ():
        key, colon, value = line.partition(":")
        if colon and key.strip() == "description" and not line[:1].isspace() and value.strip() not in ("", "''", '""'):
            return name
    return None


def qwen_skill_roots(machine):
    # Precedence (SkillManager.loadSkill): project, then user, then bundled; in each level
    # .qwen/skills before .agents/skills, and within a folder the first entry in name order.
    project = qwen_project_read(machine)
    roots = []
    if project:
        roots += [("project", os.path.join(project, ".qwen", "skills")),
                  ("project", os.path.join(project, ".agents", "skills"))]
    roots += [("user", os.path.join(qwen_dir(machine), "skills")),
              ("user", os.path.join(machine.home, ".agents", "skills"))]
    return roots


def qwen_bundled_skills(machine):
    """The folder of the skills Qwen Code ships (``<package>/bundled``), or None.

    It is beside the CLI's own script, which the hook finds on the command line of
    the node process that runs it (where /proc is readable).
    """
    if "qwen_bundled" not in machine.state:
        found = None
        _, argv = ancestor_named(("node", "node.exe", "qwen"))
        for arg in (argv or [])[1:3]:
            script = real_path(arg) if os.path.isabs(arg) else None
            if script and os.path.basename(script) in ("cli.js", "cli-entry.js"):
                candidate = os.path.join(os.path.dirname(script), "bundled")
                if is_dir(candidate):
                    found = candidate
                    break
        machine.state["qwen_bundled"] = found
    return machine.state["qwen_bundled"]


def skill_folders(root):
    """SKILL.md of each folder (or link to one) directly in ``root``, in name order."""
    try:
        names = sorted(e.name for e in os.scandir(root))
    except (OSError, ValueError):
        return []
    return [os.path.join(root, n, "SKILL.md") for n in names if is_dir(os.path.join(root, n))]


def resolve_qwen_skill(machine, name, source):
    """A skill as Qwen Code finds it: by its frontmatter name, in the roots above.

    ``<extension>:<name>`` is an active extension's skill (Qwen Code registers them
    under that name only, so a bare name never finds one).
    """
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")
    if plugin is None:
        roots = qwen_skill_roots(machine)
        bundled = None
    else:
        roots = [("extension %s" % n, os.path.join(r, "skills")) for n, r in qwen_extensions(machine)
                 if n == plugin]
        bundled = False
    unusable = None
    for origin, root in roots + ([("bundled", None)] if bundled is None else []):
        if root is None:
            root = qwen_bundled_skills(machine)
            if root is None:
                break
        fast = os.path.join(root, skill, "SKILL.md")
        if unusable is None and path_kind(fast) == "other":
            unusable = Skill(name, source, path=fast, origin=origin,
                             problem="SKILL.md at %s is not a regular file" % fast)
        index = machine.memo(("qwen skill index", root),
                             lambda: index_by_name(skill_folders(root), qwen_skill_name))
        paths = index.get(skill)
        if paths:
            return load_skill(name, source, paths[0], origin)
    return unusable or Skill(name, source, problem="unknown skill")


def qwen_skill_places(skill):
    return ("a skill named %s (its frontmatter name, with a description) under .qwen/skills/ or "
            ".agents/skills/ in the project, ~/.qwen/skills/ or ~/.agents/skills/, or "
            "<extension>:%s for an extension's" % (skill, skill))


def qwen_unreachable(machine, agent):
    """Why no hook can put a briefing into ``agent`` before its first turn, with the fix; or None.

    A SubagentStart context reaches a Qwen Code subagent only where its body says
    ``${hook_context}`` (facts §2). No other hook reaches it before its first turn:
    PreToolUse's context reaches no request and its updatedInput is ignored for the
    agent tool (§3), UserPromptSubmit does not fire inside a subagent (§1), and a
    PostToolUse context arrives with its first tool result, after a first turn taken
    unbriefed, or never when it calls no tool. So the spawn is refused.
    """
    if agent.path is None:
        if agent.name.lower() == QWEN_FORK:
            return ("cannot be briefed: a fork continues the parent's own conversation and prompt, which "
                    "has no ${hook_context}, and no hook reaches it before its first turn. Keep the rule "
                    "from naming fork.")
        if agent.name.lower() not in QWEN_BUILTIN_LOWER:
            return None  # no such agent: Qwen Code itself answers "Subagent ... not found"
        name = shown_name(agent.name)
        return ("cannot be briefed: Qwen Code's built-in agent '%s' has no ${hook_context} in its prompt, "
                "and no hook reaches a subagent before its first turn any other way. Give it a file "
                "of your own, .qwen/agents/%s.md with name: %s and a line ${hook_context} in its body (a "
                "project agent wins over the built-in), or keep the rule from applying to it." % (
                    name, name, name))
    marks = machine.state.setdefault("qwen_hook_context", {})
    if agent.path not in marks:
        try:
            marks[agent.path] = HOOK_CONTEXT in split_frontmatter(read_text(agent.path))[1]
        except Unreadable:
            marks[agent.path] = False
    if marks[agent.path]:
        return None
    where = shown_path(agent.path)
    own = qwen_project_read(machine)
    if own and os.path.dirname(agent.path) == os.path.join(own, ".qwen", "agents") or \
            os.path.dirname(agent.path) == os.path.join(qwen_dir(machine), "agents"):
        fix = "Add a line ${hook_context} to the body of %s (below the frontmatter)." % where
    else:
        fix = ("It is an extension's agent: copy it to .qwen/agents/ in the project (a project agent "
               "wins over it) and add a line ${hook_context} to its body.")
    return ("cannot be briefed: Qwen Code passes a SubagentStart context to an agent only where its "
            "body says ${hook_context}, and %s has none. %s" % (where, fix))


# Measured on 0.24.4 (docs/files.md): the project folder's QWEN.md and AGENTS.md are in the system
# prompt of every agent, the main one and a custom subagent alike ("--- Context from: QWEN.md ---").
QWEN_MEMORY_FILES = ("QWEN.md", "AGENTS.md")


def qwen_loads_file(machine, agent, path, session):
    """Why Qwen Code already puts the project file ``path`` into ``agent``, or None."""
    from ..standing import names_in
    for rel in names_in(machine, path, [machine.project("qwen").folder]):
        if rel in QWEN_MEMORY_FILES:
            return "Qwen Code loads %s into every agent" % rel
    return None


def qwen_shows_path(machine, path):
    """How Qwen Code names a project private skill to every agent: its folder tree of the project, in
    each agent's first message, which honours .gitignore and .qwenignore (measured on 0.24.4)."""
    return tree_shows(machine, path, machine.project("qwen").folder, "Qwen Code", ".qwenignore")


QWEN_EXTENSION = "qwen"  # the Qwen Code extension's own root, inside the repository


def qwen_hooks_check(root):
    """The extension's hooks/hooks.json, read by Qwen Code: the guard, SubagentStart and the pre-flight.

    Its own root is ``qwen/`` in the repository, the root itself in a built copy
    (``qwen-extension.json`` there). A Claude Code plugin installed into Qwen Code
    gets a generated ``qwen-extension.json`` beside Claude Code's hooks/hooks.json:
    that briefs too, with a process per part.
    """
    from ..constants import PARTS
    from ..hooks_files import extension_hooks, one_handler_each, part_of  # the doctor's checks only
    ext, hooks, result = extension_hooks(root, "qwen-extension.json", QWEN_EXTENSION, "qwen hooks.json",
                                         "Qwen Code")
    if result:
        return result
    if is_file(os.path.join(ext, ".claude-plugin", "plugin.json")):
        # Installed as a Claude Code plugin (qwen extensions install <repo>:briefing): Qwen Code runs
        # Claude Code's file. The Agent matcher fires on its agent tool, and part 1 carries everything.
        parts = sorted(part_of(h["command"]) or 0 for _, h, _, _ in hooks.get("SubagentStart", []))
        # (Its matcher is "Agent|Task", Factory Droid's spawn tool too: it fires here, e2e-tested.)
        if parts and parts[0] == 1 and any(m in ("Agent", "agent", "^agent$", "Agent|Task") for m, _, _, _ in
                                           hooks.get("PreToolUse", [])):
            return {"name": "qwen hooks.json", "status": "WARN",
                    "detail": "installed from the Claude Code plugin: Qwen Code runs its hooks/hooks.json, "
                              "which briefs, with %d processes per event where one is enough; install the "
                              "Qwen Code extension instead (scripts/build-qwen-extension OUT, then qwen "
                              "extensions install OUT/briefing --consent)" % PARTS}
        return {"name": "qwen hooks.json", "status": "FAIL",
                "detail": "%s has no guard and SubagentStart part 1: briefing does nothing here" % (
                    os.path.join(ext, "hooks", "hooks.json"))}
    problems = []
    found = one_handler_each(hooks, ("SessionStart", "PreToolUse", "SubagentStart"), problems,
                             " (Qwen Code takes the whole briefing from one process)")
    guard = found.get("PreToolUse")
    if guard is not None and guard[0] != "^agent$":
        # Qwen Code tests a matcher as an unanchored regex after an exact match: "agent" alone also
        # matches any tool with that in its name.
        problems.append('PreToolUse needs the matcher "^agent$", found %r' % (guard[0],))
    for event in ("SessionStart", "SubagentStart"):
        if event in found and found[event][0] not in (None, "", "*"):
            problems.append("%s must have no matcher, found %r" % (event, found[event][0]))
    return {"name": "qwen hooks.json", "status": "FAIL" if problems else "ok",
            "detail": "; ".join(problems) or "registers the agent guard, SubagentStart and the pre-flight"}


def qwen_delivery_check(machine):
    """What the doctor says of how a Qwen Code agent is briefed (there is no hook trust to check)."""
    return {"name": "qwen-delivery", "status": "ok",
            "detail": "a Qwen Code agent is briefed %s" % HARNESS.redelivery}


# README.md, Install.
QWEN_INSTALL = ("%s/scripts/build-qwen-extension /tmp/briefing-qwen && qwen extensions install "
                "/tmp/briefing-qwen/briefing --consent")


def qwen_installed_check(machine):
    """The doctor's ``installed`` check: the briefing extension installed, enabled for this project
    (qwen_extensions), and built, not the repository's qwen/ source folder."""
    from ..installed import checkout, extension_installed  # the doctor's checks only
    return extension_installed(machine, "qwen", "Qwen Code", qwen_extensions(machine),
                               os.path.join(qwen_dir(machine), "extensions"), "qwen-extension.json",
                               qwen_hooks_check, QWEN_INSTALL % checkout(), "qwen")


# --------------------------------------------------------------------------
# Skills the main session loaded, given back after a compaction (issue 45, docs/loaded-skills.md)
# --------------------------------------------------------------------------

# How much of a chat record's end is read: a skill loaded before it is not seen (the docs say so).
QWEN_LOADED_TAIL = 16 * 1024 * 1024


def qwen_loaded_skills(machine, payload):
    """At SessionStart(``compact`` or ``resume``): the skills the main session loaded before its
    record's last compaction (loaded.Found), or None.

    Measured in Qwen Code 0.24.4 (docs/loaded-skills.md): the chat record
    ``<qwen dir>/projects/<project>/chats/<session>.jsonl`` holds each ``skill`` tool call
    (an ``assistant`` entry's ``functionCall {name: "skill", args: {skill}}``), its result (a
    ``tool_result`` entry's ``functionResponse.response.output``: the text as Qwen Code put it
    into the context), and a ``system`` entry ``subtype: "chat_compression"`` for each
    compaction, which drops them. A skill whose latest load lies after the last compaction is
    still in the history; one loaded before it is gone, also from a session resumed after it.
    SessionStart fires for the main session only (a compacted subagent gets none).
    """
    if payload.get("source") not in ("compact", "resume"):
        return None
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path.endswith(".jsonl") or "\0" in path:
        return None
    from ..files import is_inside, read_tail
    if not is_inside(path, os.path.join(qwen_dir(machine), "projects")):
        return None
    data = read_tail(path, QWEN_LOADED_TAIL)
    if not data or b"chat_compression" not in data:
        return None  # never compacted: every loaded skill is still in the history
    return qwen_loaded_before(data, max(qwen_compactions(data) or [-1]))


def qwen_compactions(data):
    """The offsets of the ``chat_compression`` entries in chat-record bytes ``data``."""
    from ..jsontext import json_lines_with
    return [at for at, entry in json_lines_with(data, b"chat_compression")
            if entry.get("type") == "system" and entry.get("subtype") == "chat_compression"]


def qwen_loaded_before(data, compacted):
    """loaded.Found of the skills whose latest load in ``data`` lies before offset ``compacted``, or None
    (the audit asks it for each compaction, audit/qwen.py)."""
    from ..jsontext import json_lines_with
    calls, latest = {}, {}
    for at, entry in json_lines_with(data, b'"skill"'):  # a line's offset tells the order
        for part in qwen_parts(entry):
            call = part.get("functionCall")
            response = part.get("functionResponse")
            if entry.get("type") == "assistant" and isinstance(call, dict) and call.get("name") == "skill":
                name = call.get("args", {}).get("skill") if isinstance(call.get("args"), dict) else None
                if isinstance(call.get("id"), str) and isinstance(name, str):
                    calls[call["id"]] = name
            elif entry.get("type") == "tool_result" and isinstance(response, dict) and response.get("name") == "skill":
                name = calls.get(response.get("id"))
                body = response.get("response")
                output = body.get("output") if isinstance(body, dict) else None
                result = entry.get("toolCallResult")
                if name and isinstance(output, str) and output and not (
                        isinstance(result, dict) and result.get("status") not in (None, "success")):
                    latest[name] = (at, output)
    from ..loaded import Found, Loaded
    loaded = [Loaded(name, text=text, order=at, event="skill tool")
              for name, (at, text) in sorted(latest.items(), key=lambda pair: pair[1][0]) if at < compacted]
    return Found(loaded) if loaded else None


def qwen_parts(entry):
    message = entry.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def qwen_loaded_payloads(machine, session):
    """[(who, payload)] for the doctor's ``--loaded``: the session's main agent, as at its next
    compaction, for session id ``session`` (None: the newest of this project)."""
    from ..audit.qwen import sessions
    found = [s for s in sessions(machine, 0) if session in (None, s.id)][:1]
    return [("session %s (main agent)" % one.id, {"source": "compact", "transcript_path": one.path})
            for one in found]


HARNESS = Harness(
    HARNESSES.record("qwen"),
    find_project=find_qwen_project,
    find_agent=find_qwen_agent,
    all_agents=all_qwen_agents,
    resolve_skill=resolve_qwen_skill,
    skill_places=qwen_skill_places,
    # One SubagentStart context, whole, from one process (100,000 characters measured, §2).
    part_budget=None, whole_limit=QWEN_LIMIT, output_limit=QWEN_OUTPUT_LIMIT,
    unreachable=qwen_unreachable,
    # Qwen Code makes ~/.qwen on its first run: without it, its built-ins are nobody's concern here.
    in_use=lambda machine: is_dir(qwen_dir(machine)),
    unused_why=lambda machine: "%s does not exist (Qwen Code makes it on its first run); --harness qwen checks it "
                               "anyway" % shown_path(qwen_dir(machine)),
    hooks_check=qwen_hooks_check,
    installed_check=qwen_installed_check,
    skill_roots=qwen_skill_roots,
    trust_check=qwen_delivery_check,
    loads_file=qwen_loads_file, shows_path=qwen_shows_path,
    preflight_warns=True,
    # Issue 45: the main session's loaded skills, at SessionStart(compact) and when a compacted session resumes.
    loaded_skills=qwen_loaded_skills, loaded_payloads=qwen_loaded_payloads, loaded_sources=("compact", "resume"),
    # The agent tool defaults subagent_type to general-purpose (DEFAULT_BUILTIN_SUBAGENT_TYPE).
    builtin_agents=QWEN_BUILTIN_AGENTS, builtin_name=qwen_builtin_name, default_agent="general-purpose",
    agent_names=lambda machine: [a for a, _ in all_qwen_agents(machine, every=True) if a],
    # facts §6: a subagent's compaction keeps its system prompt, the ${hook_context} text in it.
    redelivery="at spawn (SubagentStart), into its system prompt where its body says ${hook_context}, "
               "which a compaction keeps: an agent whose body has no ${hook_context} (a built-in, an "
               "extension's agent as shipped) is refused")
