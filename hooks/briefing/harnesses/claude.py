"""Claude Code: everything that differs for it.

Its project (CLAUDE_PROJECT_DIR, else the transcript's folder, else the cwd),
agents (.claude/agents, then the user's, then plugins), skills (folders,
frontmatter names, legacy commands, plugins, skillOverrides), the entries its
native ``skills:`` preload skips, its process's own flags, and its hooks-file check.
"""
import os

from ..constants import PARTS, PART_BUDGET
from ..files import (display_path, is_dir, is_file, is_inside, path_kind, read_json, read_text,
                     real_path, top_level_files, warn)
from . import HARNESSES, Harness
from ..jsontext import parse_json
from ..lookup import (declaring_md_agents, find_in_tree, index_by_name, listed_paths, load_md_agent,
                      load_skill, relative_inside, skill_file_named, skill_from_text, skills_named)
from ..names import dedupe, split_plugin_name, valid_skill_name
from ..process import ancestor_named, flag_values, process_argv
from ..records import Agent, ParseError, Project, Skill, Unreadable
from ..yaml_subset import meta_value, parse_skill_meta, split_frontmatter, yaml_present, yaml_true


CLAUDE_BUILTIN_AGENTS = frozenset(
    ("general-purpose", "Explore", "Plan", "statusline-setup", "claude", "fork"))


def claude_agent_roots(machine):
    # Precedence: the project folders' agents, nearest first, then the user's (measured, see
    # claude_project_folders); only the sources Claude Code loads (claude_setting_sources).
    return [root for origin, root in claude_roots(machine, "agents")]


def claude_roots(machine, kind, loaded=True):
    """[(origin, folder)] of ``.claude/<kind>`` in the project folders (nearest first), then the
    user's: those of the setting sources Claude Code loads, or (``loaded`` False) the others."""
    folders = machine.project("claude").folders
    roots = [("project", os.path.join(f, ".claude", kind)) for f in folders] + [
        ("user", os.path.join(machine.claude_dir, kind))]
    return [(origin, root) for origin, root in roots if claude_loads(machine, origin) == loaded]


def claude_skill_roots(machine, loaded=True):
    # Precedence: project folders, nearest first, then user; installed plugins come after both.
    return claude_roots(machine, "skills", loaded)


def claude_command_roots(machine, loaded=True):
    # Precedence: as for skills, project folders nearest first, then the user's. Legacy commands
    # (.claude/commands/NAME.md) are skills to Claude Code's native preload (claude-code.md §5.1).
    return claude_roots(machine, "commands", loaded)


def claude_settings_files(machine):
    """User, project and local settings, in the order in which later files win per key.

    Measured on 2.1.328, started in a sub-folder of a repository: the project's
    ``settings.json`` counts only in the project folder, ``settings.local.json``
    there and in the repository root, whose file wins.
    """
    project = machine.project("claude")
    files = [("user", os.path.join(machine.claude_dir, "settings.json")),
             ("project", os.path.join(project.folder, ".claude", "settings.json")),
             ("local", os.path.join(project.folder, ".claude", "settings.local.json"))]
    top = project.folders[-1]
    if top != project.folder and os.path.exists(os.path.join(top, ".git")):
        files.append(("local", os.path.join(top, ".claude", "settings.local.json")))
    # `claude --setting-sources` leaves out the files of every source it does not name.
    return [path for source, path in files if claude_loads(machine, source)]


def claude_settings(machine):
    """[(where, settings dict)] in the order in which later ones win per key.

    The settings files, then what ``claude --settings`` was given (a file or
    inline JSON, read from the harness's own arguments: claude_process), which
    sits above the local settings. Managed (policy) settings are not read.
    """
    if machine.state.get("claude_settings") is None:
        found = [(path, read_json(path)) for path in claude_settings_files(machine)]
        argv, cwd = claude_process(machine)
        for value in flag_values(argv, "--settings"):
            if value.lstrip().startswith("{"):
                try:
                    found.append(("claude --settings", parse_json(value)))
                except ValueError:
                    warn("claude --settings: invalid JSON, not read")
            else:
                path = os.path.join(cwd or machine.project("claude").folder, value)
                found.append((path, read_json(path)))
        machine.state["claude_settings"] = [(where, data) for where, data in found if isinstance(data, dict)]
    return machine.state["claude_settings"]


# -- what Claude Code runs besides files: --setting-sources and programmatic agents (issue 37) ------

# The three setting sources `claude --setting-sources` names (facts/agent-sdk.md).
SETTING_SOURCES = ("user", "project", "local")


def claude_setting_sources(machine):
    """The setting sources Claude Code loads, as a frozenset, or None: every one.

    ``claude --setting-sources a,b`` (the Agent SDK writes ``--setting-sources=...`` for
    ``setting_sources``, and ``--setting-sources=`` for ``[]``), read from its command line.
    Measured with the SDK's Claude Code 2.1.332 (docs/agent-sdk.md): without ``user`` no
    ``~/.claude`` agent, skill or settings file is loaded; without ``project`` none of the
    project's; plugins given with ``--plugin-dir`` load whatever the sources say.
    """
    if "claude_setting_sources" not in machine.state:
        argv, _ = claude_process(machine)
        values = flag_values(argv, "--setting-sources")
        machine.state["claude_setting_sources"] = None if not values else frozenset(
            v.strip() for v in values[-1].split(",") if v.strip())
    return machine.state["claude_setting_sources"]


def claude_loads(machine, source):
    """Whether Claude Code loads setting source ``source`` ("user", "project", "local")."""
    sources = claude_setting_sources(machine)
    return sources is None or source in sources


def claude_sources_text(machine):
    """The setting sources in force, in words (the doctor, skip reasons)."""
    sources = claude_setting_sources(machine)
    if sources is None:
        return "all setting sources (user, project, local)"
    named = [s for s in SETTING_SOURCES if s in sources] + sorted(sources - set(SETTING_SOURCES))
    return "--setting-sources=%s" % ",".join(named)


# The environment contract written by briefing_sdk.with_briefing (sdk/briefing_sdk, docs/agent-sdk.md):
# {"version": 1, "agents": {NAME: {"defined": bool, "skills": [native], "briefing": {"skills", "files"}}}}.
SDK_AGENTS_ENV = "BRIEFING_SDK_AGENTS"
SDK_AGENTS_WHERE = "options.agents (briefing_sdk.with_briefing: $%s)" % SDK_AGENTS_ENV
AGENTS_FLAG_WHERE = "claude --agents (inline JSON)"


def claude_programmatic(machine):
    """({name: Agent}, [(where, why)], [(where, why, raw)]): the agents Claude Code runs from
    definitions in no file, the sources that cannot be read, and those sources' raw text.

    Two places a hook can read (facts/agent-sdk.md): ``claude --agents`` on Claude
    Code's command line (a JSON object, or else a file path, as Claude Code reads
    it), and the Agent SDK's definitions as ``briefing_sdk.with_briefing`` wrote
    them into ``$BRIEFING_SDK_AGENTS``. Measured: an SDK definition wins over a
    ``--agents`` one of the same name, and either over every agent file. A
    definition that cannot be read is an Agent with an ``error``; one that
    certainly declares skills (or whose name a value that is no JSON at all
    spells) is refused rather than let through unbriefed (``Agent.refuses``).
    """
    if machine.state.get("claude_programmatic") is not None:
        return machine.state["claude_programmatic"]
    agents, problems, unreadable = {}, [], []
    argv, cwd = claude_process(machine)
    values = flag_values(argv, "--agents")
    if values:
        value, where = values[-1], AGENTS_FLAG_WHERE
        if not value.lstrip().startswith("{"):
            where = os.path.join(cwd or machine.project("claude").folder, value)
            try:
                value = read_text(where)
            except Unreadable as exc:
                value = None
                problems.append((where, "claude --agents: cannot read the file: %s" % exc.reason))
        if value is not None:
            definitions = programmatic_json(value, where, problems, unreadable)
            for name, definition in definitions.items():
                agents[name] = programmatic_agent(name, where, definition)
    raw = machine.env.get(SDK_AGENTS_ENV)
    if isinstance(raw, str):
        contract = programmatic_json(raw, SDK_AGENTS_WHERE, problems, unreadable, contract=True)
        for name, entry in contract.items():
            flagged = agents.get(name)
            if isinstance(entry, dict) and entry.get("defined") is False and flagged is not None:
                agent = flagged  # briefing's own declaration for a --agents definition
            else:
                agent = agents[name] = programmatic_agent(name, SDK_AGENTS_WHERE, entry)
                if not isinstance(entry, dict):
                    continue
            declaration = entry.get("briefing") if isinstance(entry, dict) else None
            if declaration is None:
                continue
            if not isinstance(declaration, dict):  # it names skills or files, in a shape no one reads
                fail_programmatic(agent, "briefing is not a mapping of skills and files", refuses=True)
                continue
            for key in ("skills", "files"):
                if key in declaration:
                    names, why = programmatic_names(declaration[key])
                    if why:
                        fail_programmatic(agent, "briefing %s %s" % (key, why), refuses=True)
                    elif key == "skills":
                        agent.skills = dedupe(names)
                    else:
                        agent.files = dedupe(names)
    machine.state["claude_programmatic"] = (agents, problems, unreadable)
    return machine.state["claude_programmatic"]


def programmatic_json(value, where, problems, unreadable, contract=False):
    """{name: definition} of one source; a value that cannot be read is noted in ``problems``, and
    its raw text kept in ``unreadable`` (the spawn path then refuses any name it spells)."""
    try:
        data = parse_json(value)
    except ValueError as exc:
        data, why = None, "not JSON (%s)" % exc
    else:
        why = None if isinstance(data, dict) else "not a JSON object"
        if contract and why is None:
            if data.get("version") != 1:
                why = "version %r, which this briefing does not read (it reads version 1)" % (data.get("version"),)
            else:
                data = data.get("agents")
                why = None if isinstance(data, dict) else '"agents" is not a JSON object'
    if why is not None:
        problems.append((where, "%s cannot be read: %s; a programmatic agent it defines is refused where "
                         "its name appears in it, and briefed by nothing else" % (where, why)))
        unreadable.append((where, why, value))
        return {}
    return data


def programmatic_agent(name, where, definition):
    """The Agent of one programmatic definition: its native ``skills``."""
    agent = Agent("claude", name, where)
    # A definition has no file, so no file-name check applies: Claude Code runs a definition of any
    # name it is given (measured on 2.1.332: qa:reviewer, a/b, .dot, a\\b, a tab, 300 characters;
    # docs/agent-sdk.md "Agent names"), and so briefing judges every one. Only the empty name is no
    # agent: a spawn without a subagent_type starts general-purpose.
    if not name:
        fail_programmatic(agent, "its name is empty", refuses=False)
    elif not isinstance(definition, dict):
        fail_programmatic(agent, "its definition is not a JSON object", refuses=False)
    elif definition.get("skills") is not None:
        names, why = programmatic_names(definition["skills"])
        if why:
            fail_programmatic(agent, "skills %s" % why, refuses=True)
        else:
            agent.native = dedupe(names)
    return agent


def programmatic_names(value):
    """(names, None), or (None, why) for a value that is not a list of names."""
    if not isinstance(value, list):
        return None, "is not a list of names"
    if not all(isinstance(v, str) for v in value):
        return None, "holds something other than names"
    return value, None


def fail_programmatic(agent, why, refuses):
    """Mark a definition briefing cannot read (the doctor's FAIL); ``refuses``: it names skills."""
    agent.error = "the programmatic definition in %s cannot be read: %s" % (agent.path, why)
    agent.refuses = agent.refuses or refuses  # it names skills briefing cannot read: never unbriefed


def find_programmatic(machine, name):
    """The programmatic Agent Claude Code runs for ``name`` (it shadows any file), or None."""
    agents, _, unreadable = claude_programmatic(machine)
    if name in agents:
        return agents[name]
    for where, why, raw in unreadable:
        # A value that is no JSON at all: an agent whose name it spells may declare skills in it.
        if '"%s"' % name in raw:
            agent = Agent("claude", name, where)
            agent.error = "the programmatic definition in %s cannot be read: %s" % (where, why)
            agent.refuses = True
            return agent
    return None


def enabled_plugins(machine):
    """``enabledPlugins`` merged over user, project and local settings; later files win per key."""
    merged = {}
    for _, data in claude_settings(machine):
        plugins = data.get("enabledPlugins")
        if isinstance(plugins, dict):
            merged.update(plugins)
    return merged


def skill_overrides(machine):
    """``skillOverrides`` merged like every setting: {skill name: (value, where it was set)}."""
    if machine.state.get("skill_overrides") is None:
        merged = {}
        for where, data in claude_settings(machine):
            overrides = data.get("skillOverrides")
            if isinstance(overrides, dict):
                for key, value in overrides.items():
                    if isinstance(value, str):
                        merged[key] = (value, where)
        machine.state["skill_overrides"] = merged
    return machine.state["skill_overrides"]


def claude_process(machine):
    """(argv, cwd) of the Claude Code process that runs this hook, or (None, None).

    Options such as ``--disable-slash-commands`` and ``--plugin-dir`` reach a hook
    in no payload and no variable; the harness's own command line is the one
    reliable place they are written. Claude Code names its process in
    ``CLAUDE_PID`` for every hook (facts/claude-code.md §3.7); without it, inside
    a Claude Code hook (``CLAUDECODE=1``), the nearest ancestor process whose
    program is called claude. Read from /proc, so where there is none (macOS,
    Windows), or for a doctor run outside a session, no option is seen.
    """
    if machine.state.get("claude_process") is None:
        machine.state["claude_process"] = (None, None)
        pid = machine.env.get("CLAUDE_PID")
        if not (isinstance(pid, str) and pid.isdigit()):
            pid = claude_ancestor() if machine.env.get("CLAUDECODE") == "1" else None
        argv = process_argv(pid) if pid else None
        if argv:
            try:
                cwd = os.readlink("/proc/%s/cwd" % pid)
            except (OSError, ValueError):
                cwd = None
            machine.state["claude_process"] = (argv, cwd)
    return machine.state["claude_process"]


def claude_flag(machine, flag):
    """Whether the Claude Code process was started with ``flag``."""
    argv, _ = claude_process(machine)
    return bool(argv) and flag in argv[1:]


def claude_plugin_dirs(machine):
    """The plugin folders ``claude --plugin-dir`` loaded, absolute; they are in no registry (§5.1).

    ``--plugin-dir`` names a plugin, or (its --help says) a folder of plugins, each
    child loaded; a ``.zip`` is not read.
    """
    argv, cwd = claude_process(machine)
    base = cwd or machine.project("claude").folder
    out = []
    for value in flag_values(argv, "--plugin-dir"):
        folder = os.path.normpath(os.path.join(base, value)) if value else None
        if not folder or not is_dir(folder):
            continue
        if any(os.path.exists(os.path.join(folder, d)) for d in
               (".claude-plugin", "skills", "agents", "commands", "hooks")):
            out.append(folder)
            continue
        try:
            children = sorted(e.path for e in os.scandir(folder)
                              if not e.name.startswith(".") and e.is_dir())
        except OSError:
            children = []
        out.extend(c for c in children if is_file(os.path.join(c, ".claude-plugin", "plugin.json")))
    return out


def claude_plugins(machine):
    """Enabled installed plugins as [(manifest name, root)], project/local scope first.

    Measured on 2.1.328 (docs/claude-code.md, "Skills in plugins"): Claude Code
    takes plugins in the order of ``enabledPlugins`` (a bare name that two plugins
    share goes to the first), and reads a plugin of a marketplace added from a
    local folder (known_marketplaces.json ``"source": "directory"``) from that
    folder, live, not from installed_plugins.json's copy; when the folder is gone
    it loads nothing of the plugin. The root is the one Claude Code reads.
    """
    if machine.state.get("claude_plugins") is not None:
        return machine.state["claude_plugins"]
    found = []
    ids = machine.state["claude_plugin_ids"] = {}  # root -> the plugin's id (claude_plugin_data)
    registry = read_json(os.path.join(machine.claude_dir, "plugins", "installed_plugins.json"))
    entries = registry.get("plugins") if isinstance(registry, dict) else None
    if isinstance(entries, dict) and entries:
        enabled = enabled_plugins(machine)
        order = {key: index for index, key in enumerate(enabled)}
        scoped, user = [], []
        for key, installs in sorted(entries.items(), key=lambda item: (order.get(item[0], len(order)),
                                                                       item[0])):
            # Absent or false means disabled: Claude Code loads a disabled plugin's skills for no one.
            if enabled.get(key) is not True or not isinstance(installs, list):
                continue
            for install in installs:
                if not isinstance(install, dict) or not isinstance(install.get("installPath"), str):
                    continue
                scope = install.get("scope")
                if scope in ("project", "local"):
                    project = install.get("projectPath")
                    # Claude Code's project, not the payload cwd, which follows the model's cd.
                    here = machine.project("claude").folder
                    if isinstance(project, str) and is_inside(here, project):
                        scoped.append((key, install["installPath"]))
                else:
                    user.append((key, install["installPath"]))
        # Precedence: entries scoped to this project come before user-wide ones.
        for key, install_path in scoped + user:
            root, dirs = claude_install_root(machine, key, install_path)
            if root is None:
                continue
            found.append((plugin_manifest_name(root, key.partition("@")[0]), root))
            if dirs is not None:  # plugins sharing one root differ by their entries alone
                machine.state.setdefault("claude_entry_dirs", {})[found[-1]] = dirs
            ids.setdefault(root, key)
    # Plugins loaded with --plugin-dir (facts/claude-code.md §5.1: their skills resolve for
    # skills:, and they are absent from installed_plugins.json), the hook's own plugin among
    # them, after the installed ones (their precedence among each other was not measured).
    for extra in claude_plugin_dirs(machine) + [machine.own_plugin_root]:
        if extra and is_dir(extra) and all(real_path(r) != real_path(extra)
                                           for _, r in found):
            found.append((plugin_manifest_name(extra, os.path.basename(extra)), extra))
            ids[extra] = "%s@inline" % found[-1][0]  # what Claude Code calls a --plugin-dir plugin
    machine.state["claude_plugins"] = found
    return found


def claude_marketplace(machine, market):
    """What Claude Code recorded of marketplace ``market``: (folder, live, {plugin: entry}), or None.

    known_marketplaces.json (Claude Code's own record) names the folder it keeps
    the marketplace in, ``installLocation``; for a ``"directory"`` source that is
    the folder it was added from, which Claude Code reads live (``live``). The
    entries come from that folder's ``.claude-plugin/marketplace.json``: a
    shared-root entry's ``skills`` list decides what its plugin exposes. Read once
    per payload, and only when a plugin lookup needs it.
    """
    cache = machine.state.setdefault("claude_marketplaces", {})
    if market not in cache:
        cache[market] = None
        known = machine.state.get("claude_known_marketplaces")
        if known is None:
            known = read_json(os.path.join(machine.claude_dir, "plugins", "known_marketplaces.json"))
            known = machine.state["claude_known_marketplaces"] = known if isinstance(known, dict) else {}
        record = known.get(market)
        record = record if isinstance(record, dict) else {}
        source = record.get("source") if isinstance(record.get("source"), dict) else {}
        live = source.get("source") == "directory"
        folder = source.get("path") if live else record.get("installLocation")
        if not isinstance(folder, str):
            folder = record.get("installLocation")
        if isinstance(folder, str) and os.path.isabs(folder) and is_dir(folder):
            data = read_json(os.path.join(folder, ".claude-plugin", "marketplace.json"))
            plugins = data.get("plugins") if isinstance(data, dict) else None
            named = {}
            for entry in plugins if isinstance(plugins, list) else ():
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    named.setdefault(entry["name"], entry)
            cache[market] = (folder, live, named)
    return cache[market]


def claude_install_root(machine, key, install_path):
    """(root, entry dirs): the folder Claude Code loads installed plugin ``key`` from (None when it
    loads nothing), and the skill folders its marketplace entry decides (claude_entry_dirs).

    installed_plugins.json's ``installPath`` (absolute), except for a plugin that a
    local-folder marketplace lists by a relative path: that folder, inside the
    marketplace's, as it is now.
    """
    plugin, _, market = key.partition("@")
    root = install_path if os.path.isabs(install_path) else None
    record = claude_marketplace(machine, market) if market else None
    entry = record[2].get(plugin) if record else None
    if entry is None:
        return root, None
    folder, live, _ = record
    source = entry.get("source")
    if live and isinstance(source, str):
        rel = relative_inside(source)
        if rel is None:
            warn("%s: the marketplace's source %r for %s leaves the marketplace folder; not read" % (
                folder, source, plugin))
            return None, None
        root = os.path.normpath(os.path.join(folder, rel))
        if not is_dir(root):
            return None, None  # Claude Code: "Plugin directory not found": nothing of it loads
    return root, (claude_entry_dirs(root, entry) if root is not None else None)


def claude_entry_dirs(root, entry):
    """The skill folders a marketplace entry gives the plugin at ``root`` [(folder, single)], or None.

    Measured on 2.1.328 (and read in its loader): an entry whose ``source`` is the
    marketplace's own folder (``"./"``) and which lists ``skills`` exposes exactly
    the listed skills, and ``skills/`` as a whole only when it or ``./`` is listed;
    when every listed path leaves the folder, none. Plugins sharing one root each
    list theirs so. Any other entry's ``skills`` count only for a plugin without a
    ``.claude-plugin/plugin.json`` (the entry is then its manifest), and add to
    ``skills/``, as a manifest's do. None: the plugin's own folders decide.
    """
    listed = entry.get("skills")
    if listed is None or listed == []:
        return None
    source = entry.get("source")
    shared = isinstance(source, str) and all(
        part in ("", ".") for part in source.replace("\\", "/").split("/"))
    if not shared and is_file(os.path.join(root, ".claude-plugin", "plugin.json")):
        return None
    paths = listed_paths(root, listed, "marketplace entry skills path")
    valid = [(norm, folder) for norm, folder in paths if is_dir(folder)]
    skills = os.path.join(root, "skills")
    extra = [(folder, is_file(os.path.join(folder, "SKILL.md"))) for norm, folder in valid
             if norm not in (".", "skills")]
    if not shared:
        return [(skills, False)] + extra
    if not valid:
        named = [listed] if isinstance(listed, str) else listed if isinstance(listed, list) else []
        left = len(paths) < len([p for p in named if isinstance(p, str) and p.strip()])
        return [] if left else None
    keep = any(norm in (".", "skills") for norm, _ in valid)
    return ([(skills, False)] if keep else []) + extra


def claude_plugin_skill_dirs(machine, name, root):
    """[(folder, is_single_skill)] in which Claude Code finds the skills of plugin ``name`` at ``root``."""
    decided = machine.state.get("claude_entry_dirs", {}).get((name, root))
    return decided if decided is not None else machine.plugin_skill_dirs(root)


def claude_ancestor():
    """The nearest ancestor process whose program is called claude (or claude.exe), or None."""
    return ancestor_named(("claude", "claude.exe"))[0]


# Where is the project? One answer per harness, each resting on what that harness was measured to do.

def find_claude_project(machine):
    """Claude Code's project: the folder it was started in, kept for the whole session.

    Every hook gets it as CLAUDE_PROJECT_DIR (claude-code.md 3.7). The payload's
    ``cwd``, and the hook's own working directory, follow the model's Bash ``cd``
    instead, while Claude Code goes on spawning the project's agents (3.7.1), so
    the payload ``cwd`` is only the last resort. Without the variable (a hook run
    by hand), the transcript names the project: it lives in
    ``~/.claude/projects/<slug>/``, the slug being the project path with every
    character but ASCII letters and digits replaced by ``-`` (3.1). The slug is
    lossy, so it only picks among the cwd and its ancestors, where no two folders
    share one.
    """
    env_dir = machine.env.get("CLAUDE_PROJECT_DIR")
    if env_dir and os.path.isabs(env_dir) and is_dir(env_dir):
        return claude_project(os.path.abspath(env_dir), "CLAUDE_PROJECT_DIR",
                              "$CLAUDE_PROJECT_DIR, the folder Claude Code was started in: every hook "
                              "gets it, and it stays there after a cd", machine.home)
    transcript = machine.transcript
    if transcript and "\0" not in transcript:
        slug_dir = os.path.dirname(os.path.abspath(transcript))
        if os.path.basename(os.path.dirname(slug_dir)) == "projects":
            slug = os.path.basename(slug_dir)
            folder = machine.cwd
            while True:
                # A slug has a character for each of the path's: only a folder of its length can match.
                if len(folder) == len(slug) and claude_slug(folder) == slug:
                    return claude_project(folder, "transcript",
                                          "CLAUDE_PROJECT_DIR is not set; the session transcript's "
                                          "project folder (%s) names it" % slug, machine.home)
                parent = os.path.dirname(folder)
                if parent == folder:
                    break
                folder = parent
    return claude_project(machine.cwd, "cwd",
                          "CLAUDE_PROJECT_DIR is not set; the cwd, taken as the folder Claude Code "
                          "was started in", machine.home)


def claude_project(folder, source, why, home):
    return Project(folder, source, why, claude_project_folders(folder, home),
                   ".claude/agents and .claude/skills")


def claude_slug(path):
    """Claude Code's name for a project's folder under ~/.claude/projects (claude-code.md 3.1)."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def claude_project_folders(project, home):
    """The folders whose ``.claude/agents`` and ``.claude/skills`` Claude Code reads, nearest first.

    Measured on 2.1.328: started in a sub-folder, Claude Code reads the
    ``.claude/`` of the project and of every folder above it up to the one
    holding ``.git``, and the nearest wins for agents and skills alike. Folders
    *between* the project and the cwd after a ``cd`` are not read (skills there
    appear only once the session reads a file below them, which a hook cannot
    see). Without a ``.git`` it read above the project too; where it stops was
    not measured, so briefing stops below $HOME, whose ``.claude`` is the user's.
    """
    folder, out = project, []
    while True:
        out.append(folder)
        if folder == home or os.path.exists(os.path.join(folder, ".git")):
            return out
        parent = os.path.dirname(folder)
        if parent == folder or parent == home:
            return out
        folder = parent


def plugin_manifest_name(root, fallback):
    """The plugin's namespace is its manifest ``name``, which may differ from its folder."""
    data = read_json(os.path.join(root, ".claude-plugin", "plugin.json"))
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else fallback


def load_claude_agent(path, name):
    return load_md_agent(path, name, "claude")


def find_claude_agent(machine, agent_type):
    """The file Claude Code would load for ``agent_type``, as an Agent, or None."""
    if not isinstance(agent_type, str) or not agent_type:
        return None
    programmatic = find_programmatic(machine, agent_type)
    if programmatic is not None:
        return programmatic  # Claude Code runs the definition it was given over any file (measured)
    # A built-in type is spawned often and rarely overridden: only its own file name is tried,
    # so that each such spawn costs a few stat calls instead of a scan of every agent file.
    walk = agent_type not in CLAUDE_BUILTIN_AGENTS
    plugin, colon, local = agent_type.partition(":")
    if colon:
        if not (valid_skill_name(plugin) and valid_skill_name(local)):
            return None
        for manifest_name, root in claude_plugins(machine):
            if manifest_name == plugin:
                agent = find_in_tree(os.path.join(root, "agents"), local, ".md", load_claude_agent)
                if agent is not None:
                    agent.name = agent_type
                    return agent
        return claude_folded_agent(machine, agent_type)
    for root in claude_agent_roots(machine):
        agent = find_in_tree(root, agent_type, ".md", load_claude_agent, walk)
        if agent is not None:
            return agent
    return claude_folded_agent(machine, agent_type)


def claude_fold(name):
    """Claude Code's spelling-blind key of an agent type (2.1.328, the Agent tool: NFKC, lower case,
    every run of whitespace, dashes and underscores removed)."""
    import unicodedata  # only for a name no agent has exactly
    text = unicodedata.normalize("NFKC", name).lower()
    return "".join(ch for ch in text if not (ch.isspace() or ch == "_" or unicodedata.category(ch) == "Pd"))


def claude_fold_target(machine, agent_type):
    """The agent type Claude Code runs for ``agent_type`` when no agent has that exact name, or None.

    Measured on 2.1.332 (docs/claude-code.md "Which agent a name starts"): ``folded`` starts
    ``Folded``, ``FILECASE`` the file agent ``filecase``, ``general_purpose`` general-purpose; the
    SubagentStart payload then names the agent started. Two agents of one folded name are an
    "ambiguous" error and none starts. Only a name no agent has exactly pays for listing them all.
    """
    memo = machine.state.setdefault("claude_fold", {})
    if agent_type not in memo:
        memo[agent_type] = None  # also while listing: no agent is looked up by its folded name twice
        key = claude_fold(agent_type)
        names = set(CLAUDE_BUILTIN_AGENTS) | set(claude_programmatic(machine)[0]) | {
            agent.name for agent in claude_agent_names(machine)}
        found = [name for name in names if claude_fold(name) == key] if key else []
        if len(found) == 1 and found[0] != agent_type:
            memo[agent_type] = found[0]
    return memo[agent_type]


def claude_folded_agent(machine, agent_type):
    """The agent file or definition Claude Code runs for a spelling no agent has exactly, or None
    (a built-in: ``claude_builtin_name``)."""
    if agent_type in CLAUDE_BUILTIN_AGENTS:
        return None  # a built-in's own name: the common spawn lists nothing
    target = claude_fold_target(machine, agent_type)
    if target is None or target in CLAUDE_BUILTIN_AGENTS:
        return None
    return find_claude_agent(machine, target)


def claude_builtin_name(machine, agent_type):
    """The built-in Claude Code runs for ``agent_type`` (no file answered it), as it spells it."""
    if agent_type in CLAUDE_BUILTIN_AGENTS:
        return agent_type
    target = claude_fold_target(machine, agent_type)
    return target if target in CLAUDE_BUILTIN_AGENTS else agent_type


# Claude Code's own skills, measured on 2.1.328: the init event lists sixteen with nothing
# installed, and an agent naming each under skills: gets these ten preloaded. Their text is inside
# Claude Code: some keep reference files under $CLAUDE_CODE_TMPDIR/claude-<uid>/bundled-skills/
# <version>/<hash>/<name>/, but none a SKILL.md, so no hook can read a body (docs/claude-code.md).
CLAUDE_BUILTIN_SKILLS = frozenset((
    "claude-api", "code-review", "dataviz", "fewer-permission-prompts", "loop", "plugin-authoring",
    "run", "simplify", "update-config", "workflow-authoring"))
# Listed too, but never preloaded ("not found"; the Skill tool: "cannot be used ... due to
# disable-model-invocation"): only a person runs them, as /NAME.
CLAUDE_BUILTIN_UNPRELOADED = frozenset((
    "batch", "debug", "deep-research", "doctor", "run-skill-generator", "verify"))
CLAUDE_BUILTIN_ORIGIN = "Claude Code built-in"
CLAUDE_BUILTIN_HELD = ("a Claude Code built-in, whose text is inside Claude Code where no hook can read "
                       "it: list it under skills:, which Claude Code preloads")


def claude_skill_candidates(machine, plugin, skill):
    """Where Claude Code looks for ``skill`` (in ``plugin`` only, when given), in its order.

    Yields (path, origin, bare): ``path`` None stands for Claude Code's built-in of
    that name; ``bare`` marks a plugin command found by a bare name, which counts
    only when it has frontmatter. Measured on 2.1.328 (docs/claude-code.md, "How a
    name resolves"): a bare name goes to the project folders (nearest first) and
    the user's ``~/.claude`` first (a skill folder, then a legacy command
    ``commands/NAME.md``), then to the built-ins, then to plugins in enabledPlugins
    order (a skill folder), then to a frontmatter name (the project's and the
    user's, then the plugins'), then to a plugin's ``commands/NAME.md`` with
    frontmatter, then to a command's frontmatter name. One measured precedence is
    not kept, for cost: in Claude Code a project or user skill whose frontmatter
    name is NAME comes before a plugin's folder NAME.
    ``plugin:NAME`` names that plugin's ``commands/NAME.md`` (frontmatter or not)
    before its skill folder. The files found later are read only when the
    earlier ones are not there or Claude Code passes them over.
    """
    plugins = [(n, r) for n, r in claude_plugins(machine) if n == plugin] if plugin is not None else None
    if plugin is not None:
        for manifest_name, root in plugins:
            origin = "plugin %s" % manifest_name
            if machine.is_dir(os.path.join(root, "commands")):
                yield os.path.join(root, "commands", skill + ".md"), origin, False
            for found in claude_plugin_skills(machine, root, skill, origin):
                yield found
            for path in claude_commands_named(machine, root, skill):
                yield path, origin, False
        return
    roots = machine.live("claude", (lambda: claude_skill_roots(machine)))
    for origin, root in roots:
        yield os.path.join(root, skill, "SKILL.md"), origin, False
    for origin, root in machine.live("claude commands", (lambda: claude_command_roots(machine))):
        yield os.path.join(root, skill + ".md"), origin, False
    if skill in CLAUDE_BUILTIN_SKILLS or skill in CLAUDE_BUILTIN_UNPRELOADED:
        yield None, CLAUDE_BUILTIN_ORIGIN, False
    plugins = claude_plugins(machine)
    for manifest_name, root in plugins:
        for folder, single in claude_plugin_skill_dirs(machine, manifest_name, root):
            if not single:
                yield os.path.join(folder, skill, "SKILL.md"), "plugin %s" % manifest_name, False
            elif os.path.basename(folder) == skill:
                yield os.path.join(folder, "SKILL.md"), "plugin %s" % manifest_name, False
    # Claude Code gives a project's or the user's frontmatter name precedence over a plugin's
    # skill folder too (measured); looking for one means reading every skill of those roots, so
    # it is done only when no folder, command or built-in has the name (docs/claude-code.md).
    for origin, root in roots:
        for path in skills_named(machine, root, skill):
            yield path, origin, False
    for manifest_name, root in plugins:
        for found in claude_plugin_skills(machine, root, skill, "plugin %s" % manifest_name, by_folder=False):
            yield found
    for manifest_name, root in plugins:
        if machine.is_dir(os.path.join(root, "commands")):
            yield os.path.join(root, "commands", skill + ".md"), "plugin %s" % manifest_name, True
    for manifest_name, root in plugins:
        for path in claude_commands_named(machine, root, skill):
            yield path, "plugin %s" % manifest_name, False


def claude_plugin_skills(machine, root, skill, origin, by_folder=True):
    """SKILL.md paths for ``skill`` in one plugin: by folder (unless not ``by_folder``), then by
    frontmatter name, as (path, origin, False)."""
    dirs = claude_plugin_skill_dirs(machine, origin[len("plugin "):], root)
    if by_folder:
        for folder, single in dirs:
            if not single:
                yield os.path.join(folder, skill, "SKILL.md"), origin, False
            elif os.path.basename(folder) == skill:
                yield os.path.join(folder, "SKILL.md"), origin, False
    for folder, single in dirs:
        if not single:
            for path in skills_named(machine, folder, skill):
                yield path, origin, False
        elif os.path.basename(folder) != skill and skill_file_named(os.path.join(folder, "SKILL.md"), skill):
            yield os.path.join(folder, "SKILL.md"), origin, False


def claude_commands_named(machine, root, name):
    """A plugin's ``commands/*.md`` whose frontmatter ``name`` is ``name`` (a command answers to it
    too, measured), other than ``NAME.md`` itself; read once per payload, only on a miss."""
    folder = os.path.join(root, "commands")
    if not machine.is_dir(folder):
        return []
    index = machine.memo(("claude command names", folder), lambda: index_by_name(
        sorted(top_level_files(folder, ".md")),
        lambda text: meta_value(parse_skill_meta(text).get("name")) if split_frontmatter(text)[0] else None))
    return [p for p in index.get(name, ()) if os.path.basename(p) != name + ".md"]


def resolve_claude_skill(machine, name, source):
    """The skill Claude Code's preload would take for ``name``, as a Skill.

    Measured on 2.1.328: the preload passes over every candidate it would not
    preload (disable-model-invocation, user-invocable-only, turned off, a plugin
    skill without a description, a conditional one, a built-in it never preloads)
    and takes the next one, in any root: a project skill with
    ``disable-model-invocation: true`` leaves the name to a plugin's skill. So the
    first candidate Claude Code preloads wins; when it preloads none, the first
    candidate, which it skips and briefing delivers (or, turned off, refuses). Both
    lists resolve so, so that one name is one text. A regular file that cannot be
    read stops the search, and says why.
    """
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")
    first = unusable = None
    passed = []
    for path, origin, bare in claude_skill_candidates(machine, plugin, skill):
        if path is None:
            found = claude_builtin_skill(name, source, skill)
        else:
            kind = path_kind(path)
            if kind != "file":
                if unusable is None and kind:
                    unusable = Skill(name, source, path=path, origin=origin,
                                     problem="SKILL.md at %s is not a regular file" % path)
                continue
            found = claude_load_skill(name, source, path, origin, bare)
            if found is None:  # a plugin command without frontmatter: no skill by its bare name
                passed.append((display_path(path), "a plugin command without frontmatter is a skill only "
                               "as %s:%s" % (origin[len("plugin "):], skill)))
                continue
        if not found.problem:
            claude_skill_override(machine, found, plugin)
        if found.problem and not claude_passed_over(found):
            return found
        why = found.problem or claude_skill_skip(machine, found)
        if why is None:
            if first is None or not claude_flag(machine, "--disable-slash-commands"):
                found.passed = passed
                return found  # the first one Claude Code's preload takes
            return first  # with --disable-slash-commands it takes none: the first candidate
        passed.append((display_path(found.path) if found.path else found.origin, why))
        if first is None:
            first = found
    if first or unusable:
        return first or unusable
    unloaded = claude_unloaded_skill(machine, plugin, skill, name, source)
    if unloaded is not None and source in ("native", "briefing"):
        return unloaded
    missing = Skill(name, source, problem="unknown skill")
    missing.passed = passed  # what has the name but is no skill by it, for the doctor
    if unloaded is not None:
        missing.passed.append((display_path(unloaded.path), unloaded.problem or isolated_words(
            machine, unloaded.origin, "a rule")))
    return missing


def claude_unloaded_skill(machine, plugin, skill, name, source):
    """The skill ``name`` in a setting source Claude Code does not load (``--setting-sources``), or None.

    Claude Code's preload skips such a native entry, as it skips any name it does
    not know (measured, docs/agent-sdk.md). A user skill is then delivered by
    briefing, like every skipped entry; a project skill only when briefing's own
    declaration names it: a session isolated from the project gets nothing of the
    project from briefing that the user did not ask for by name.
    """
    if plugin is not None or claude_setting_sources(machine) is None:
        return None
    for origin, root in machine.live("claude unloaded", lambda: claude_skill_roots(machine, False)):
        for path in [os.path.join(root, skill, "SKILL.md")] + skills_named(machine, root, skill):
            if path_kind(path) == "file":
                return unloaded_as(machine, load_skill(name, source, path, origin), source)
    for origin, root in machine.live("claude unloaded commands", lambda: claude_command_roots(machine, False)):
        path = os.path.join(root, skill + ".md")
        if path_kind(path) == "file":
            return unloaded_as(machine, load_skill(name, source, path, origin), source)
    return None


def unloaded_as(machine, found, source):
    if source == "native" and found.origin == "project" and not found.problem:
        found.problem = isolated_words(machine, found.origin, "a native skills: entry")
    return found


def isolated_words(machine, origin, who):
    """Why briefing does not deliver a project skill that ``who`` names into an isolated session."""
    return ("a %s skill, which Claude Code does not load (it runs with %s); briefing delivers a %s skill "
            "there only when briefing's own declaration names it, not %s" % (
                origin, claude_sources_text(machine), origin, who))


def claude_load_skill(name, source, path, origin, bare):
    """The Skill at ``path``; None for a plugin command reached by a bare name without frontmatter."""
    if not bare:
        return load_skill(name, source, path, origin)
    try:
        text = read_text(path)
    except Unreadable:
        return load_skill(name, source, path, origin)  # says why
    if split_frontmatter(text)[0] is None:
        return None
    return skill_from_text(name, source, path, origin, text)


def claude_builtin_skill(name, source, bare):
    """Claude Code's built-in ``bare`` as a Skill: no file, held by Claude Code (or never preloaded)."""
    skill = Skill(name, source, origin=CLAUDE_BUILTIN_ORIGIN)
    if bare in CLAUDE_BUILTIN_UNPRELOADED:
        skill.problem = ("a Claude Code built-in that Claude Code never preloads (a person runs it, as /%s) "
                         "and whose text no hook can read" % bare)
    else:
        skill.held = CLAUDE_BUILTIN_HELD
        if source == "rule":
            skill.problem = "only Claude Code's own preload delivers it, not a rule (%s)" % CLAUDE_BUILTIN_HELD
    return skill


def claude_passed_over(skill):
    """A candidate with a problem that Claude Code skips for the next one: turned off, or a built-in
    it never preloads (an unreadable file is not passed over: it is refused, saying why)."""
    return (skill.path is None and skill.held is None) or bool(skill.override and skill.override[1] == "off")


def claude_skill_override(machine, skill, plugin=None):
    """Apply ``skillOverrides`` from the settings (facts/claude-code.md §5.1) to a resolved skill.

    Measured: ``"off"`` and ``"user-invocable-only"`` keep Claude Code from
    preloading it, ``"name-only"`` does not. ``"off"`` is someone's decision that
    the skill must not be used: briefing refuses it like a missing skill, in
    either list, naming the setting and the file. The key is the skill's own name:
    its folder (a frontmatter name that differs does not count), a legacy
    command's file name, a built-in's name. No key was found that turns a plugin's
    skill off (``plugin:skill``, the bare name and the frontmatter name do not,
    measured on 2.1.328): Claude Code preloads it whatever they say.
    """
    overrides = skill_overrides(machine)
    if not overrides or (skill.origin or "").startswith("plugin "):
        return
    if skill.path is None:
        key = skill.name.rpartition(":")[2]
    elif os.path.basename(skill.path) == "SKILL.md":
        key = os.path.basename(os.path.dirname(skill.path))
    else:
        key = os.path.basename(skill.path)[:-3]  # a legacy command NAME.md
    if key in overrides:
        value, where = overrides[key]
        skill.override = (key, value, where)
        if value == "off":
            skill.problem = 'turned off by skillOverrides "%s": "off" in %s' % (key, display_path(where))


def claude_native_skip(machine, skill):
    """Why Claude Code will not preload this native ``skills:`` entry although it exists, or None.

    One rule per row of facts/claude-code.md §5.1 (measured on 2.1.328): the
    native preload takes only skills the model itself may invoke, and skips
    every other entry with nothing but a debug-log line. Each signal, and where
    it can be wrong:
    - ``--disable-slash-commands``: the harness's own command line
      (Machine.claude_process); unseen where there is no /proc.
    - the skill's own (claude_skill_skip).
    """
    if claude_flag(machine, "--disable-slash-commands"):
        return "claude runs with --disable-slash-commands, which preloads no skill"
    if skill.origin in SETTING_SOURCES and not claude_loads(machine, skill.origin):
        return "a %s skill, and claude runs with %s, which loads none" % (skill.origin, claude_sources_text(machine))
    return claude_skill_skip(machine, skill)


def claude_skill_skip(machine, skill):
    """Why Claude Code's preload passes over this resolved skill, from the skill and the settings alone.

    - ``disable-model-invocation``: the skill's own frontmatter.
    - ``skillOverrides`` ``user-invocable-only``: the settings files and
      ``--settings`` (claude_skill_override); managed settings are not read.
    - a plugin skill (or command) with neither ``description:`` nor ``when_to_use:``.
    - ``paths:``: Claude Code preloads a conditional skill only once the session
      has touched a matching file. A hook cannot know that reliably, so it
      always counts as skipped: a duplicate costs tokens, a hole breaks the promise.
    """
    meta = skill.meta
    if yaml_true(meta.get("disable-model-invocation")):
        return "disable-model-invocation: true in %s" % display_path(skill.path)
    if skill.override and skill.override[1] == "user-invocable-only":
        return 'skillOverrides "%s": "user-invocable-only" in %s' % (
            skill.override[0], display_path(skill.override[2]))
    if (skill.origin or "").startswith("plugin ") and not (
            yaml_present(meta.get("description")) or yaml_present(meta.get("when_to_use"))):
        return "a plugin skill with neither description: nor when_to_use:"
    if yaml_present(meta.get("paths")):
        return ("a conditional skill (paths:), which Claude Code preloads only after the session "
                "read a matching file; briefing cannot see that, so it may arrive twice")
    return None


# How Claude Code renders a skill it preloads itself (facts/rendering.md, docs/claude-code.md):
# briefing delivers the same text, substituted by substitution.claude_skill.

CLAUDE_EFFORT_UNKNOWN = ("the effort level Claude Code works out for the spawn (from its model and "
                         "settings), which a hook cannot see")


def render_claude_skill(machine, skill):
    """The body of a resolved skill as Claude Code's own preload delivers it (a Rendering), or
    None when Claude Code changes nothing in it.

    Measured on 2.1.328, token by token and per kind of skill: a skill folder's
    SKILL.md gets ``${CLAUDE_SKILL_DIR}``, a legacy command ``NAME.md`` does not;
    every kind gets ``${CLAUDE_PROJECT_DIR}`` and ``${CLAUDE_SESSION_ID}`` (the
    payload's; the doctor, which has none, shows SESSION_PLACEHOLDER); a plugin's
    also ``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}`` and, where its manifest
    declares ``userConfig``, a sensitive option's notice. A preload's arguments are
    empty. ``!`` commands are found, never run: with ``disableSkillShellExecution``
    Claude Code puts a notice in their place, and so does briefing.
    """
    body = skill.body
    if "$" not in body and "!" not in body and "\ufffe" not in body and "\uffff" not in body and (
            "!" not in (skill.dir or "")):
        return None
    from ..substitution import SESSION_PLACEHOLDER, claude_skill, in_file
    plugin = claude_plugin_of(machine, skill)
    name = os.path.basename(skill.path)
    if plugin is None:
        folder_skill = name.lower() == "skill.md"  # a command named SKILL.md is one too (any case)
    else:
        folder_skill = os.path.dirname(skill.path) != os.path.join(plugin[1], "commands")
    base = skill.dir if folder_skill else None
    values = [("${CLAUDE_SKILL_DIR}", base)] if base is not None else []
    values += [("${CLAUDE_PROJECT_DIR}", machine.project("claude").folder),
               ("${CLAUDE_SESSION_ID}", machine.session or SESSION_PLACEHOLDER)]
    options = None
    if plugin is not None:
        plugin_id, root = plugin
        values = [("${CLAUDE_PLUGIN_ROOT}", root),
                  ("${CLAUDE_PLUGIN_DATA}", claude_plugin_data(machine, plugin_id, root))] + values
        options = claude_plugin_options(root)
    names = claude_skill_arguments(skill.path) if "$" in body else ()
    rendering = claude_skill(body, base, values, names, options, claude_shell_disabled(machine),
                             [("${CLAUDE_EFFORT}", CLAUDE_EFFORT_UNKNOWN)])
    return in_file(rendering, skill.path, body)


def claude_plugin_of(machine, skill):
    """(plugin id, root) of the enabled plugin a resolved skill comes from, or None."""
    origin = skill.origin or ""
    if not origin.startswith("plugin "):
        return None
    ids = machine.state.get("claude_plugin_ids") or {}
    for manifest_name, root in claude_plugins(machine):
        if manifest_name == origin[len("plugin "):] and skill.path.startswith(os.path.join(root, "")):
            return ids.get(root) or "%s@inline" % manifest_name, root
    return None


def claude_plugin_data(machine, plugin_id, root):
    """The plugin's data folder, as Claude Code names it (it creates it; briefing only names it).

    ``<plugins folder>/data/<id>``, every character of the id but ASCII letters,
    digits, ``-`` and ``_`` made ``-`` (``briefing@inline`` -> ``briefing-inline``);
    the plugins folder is ``$CLAUDE_CODE_PLUGIN_CACHE_DIR`` or ``~/.claude/plugins``.
    For its own plugin a hook is told the folder in ``$CLAUDE_PLUGIN_DATA``.
    """
    own = machine.own_plugin_root
    if own and machine.env.get("CLAUDE_PLUGIN_DATA") and real_path(own) == real_path(root):
        return machine.env["CLAUDE_PLUGIN_DATA"]
    base = machine.env.get("CLAUDE_CODE_PLUGIN_CACHE_DIR")
    base = os.path.expanduser(base) if base else os.path.join(machine.claude_dir, "plugins")
    # JavaScript replaces each UTF-16 unit: a character beyond the BMP becomes two dashes.
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "--" if ord(c) > 0xFFFF else "-"
                   for c in plugin_id)
    return os.path.join(base, "data", safe)


def claude_plugin_options(root):
    """{option: None if sensitive else ""} of the plugin manifest's ``userConfig``, or None without one."""
    data = read_json(os.path.join(root, ".claude-plugin", "plugin.json"))
    config = data.get("userConfig") if isinstance(data, dict) else None
    if not isinstance(config, dict) or not config:
        return None
    return {key: None if isinstance(spec, dict) and spec.get("sensitive") is True else ""
            for key, spec in config.items()}


def claude_shell_disabled(machine):
    """``disableSkillShellExecution: true`` in the settings (the last file that sets it wins), or
    ``$CLAUDE_CODE_IS_COWORK``: Claude Code then runs no skill command and puts a notice in its place.
    Managed (policy) settings are not read, as everywhere."""
    if machine.env.get("CLAUDE_CODE_IS_COWORK"):
        return True
    value = None
    for _, data in claude_settings(machine):
        if "disableSkillShellExecution" in data:
            value = data["disableSkillShellExecution"]
    return value is True


def claude_skill_arguments(path):
    """The names in the skill's ``arguments:`` frontmatter, as Claude Code reads them.

    A list, or one string split at whitespace; a name that is blank or all
    digits is dropped; anything else (a number, a mapping) names none.
    """
    from ..yaml_subset import _plain_kind, _strip_comment, _unquote, split_frontmatter
    try:
        lines = split_frontmatter(read_text(path))[0] or []
    except Unreadable:
        return []
    for index, line in enumerate(lines):
        key, colon, value = line.partition(":")
        if not colon or line[:1] in " \t#-" or key.strip().strip("\"'") != "arguments":
            continue
        value = _strip_comment(value.strip()).strip()
        value = "" if value.startswith("#") else value
        items = None
        if value.startswith("[") and value.endswith("]"):
            items = [v.strip() for v in value[1:-1].split(",")]
        elif value in ("", "|", ">", "|-", ">-", "|+", ">+"):
            below = []
            for more in lines[index + 1:]:
                if more.strip() and not more[:1].isspace() and not more.startswith("-"):
                    break
                below.append(more.strip())
            listed = [b[1:].strip() for b in below if b.startswith("-")]
            if value.startswith(("|", ">")):
                return [w for w in " ".join(below).split() if not w.isdigit()]
            items = listed if listed else None
        else:
            try:
                text = _unquote(value, None)
            except ParseError:
                return []
            return [w for w in text.split() if not w.isdigit()]
        names = []
        for item in items or ():
            if item and item[0] not in "\"'" and _plain_kind(item):
                continue  # a number, a boolean, null: not a string
            try:
                name = _unquote(item, None)
            except ParseError:
                continue
            if name.strip() and not name.isdigit():
                names.append(name)
        return names
    return []



def all_claude_agents(machine, every=False):
    """Every declaring Claude Code agent that wins its name, in precedence order.

    Yields (Agent, None) or, for a file whose declaration cannot be read,
    (None, (path, why)). Each file is read and parsed once. The winner of a
    name is the file the spawn path would load (``winners_in_tree``), even when
    it declares nothing and a losing file does. ``every`` also yields the
    winners that declare nothing (rules may brief them).
    """
    agents, problems, unreadable = claude_programmatic(machine)
    for problem in problems:
        yield None, problem
    for agent in agents.values():
        if agent.declares or every:
            yield agent, None
    roots = [(None, r, True) for r in claude_agent_roots(machine)]
    roots += [(name, os.path.join(root, "agents"), True) for name, root in claude_plugins(machine)]
    # A programmatic definition shadows the files of its name (measured): they are not judged.
    for agent, error in declaring_md_agents("claude", roots, builtins=CLAUDE_BUILTIN_AGENTS,
                                            every=every or bool(unreadable), fileless=frozenset(agents)):
        if agent is not None and unreadable:
            # A source that is no JSON may define this name: judged as the spawn path judges it.
            stand_in = find_programmatic(machine, agent.name)
            if stand_in is not None:
                yield stand_in, None
                continue
            if not (agent.declares or every):
                continue
        yield agent, error


def claude_agent_names(machine):
    return [agent for agent, _ in all_claude_agents(machine, every=True) if agent is not None]


def claude_skill_places(skill):
    return ".claude/skills/%s/ in the project, ~/.claude/skills/%s/, or an enabled plugin" % (
        skill, skill)


def claude_hooks_check(root):
    """hooks/hooks.json, read by Claude Code: the guard and --part 1..PARTS on both events."""
    from ..hooks_files import not_this_copy, part_of, read_hooks  # the doctor's checks only
    if not is_file(os.path.join(root, ".claude-plugin", "plugin.json")):
        return not_this_copy("hooks.json", "Claude Code", ".claude-plugin/plugin.json")
    path = os.path.join(root, "hooks", "hooks.json")
    try:
        hooks = read_hooks(path)
    except (Unreadable, ValueError, AttributeError) as exc:
        return {"name": "hooks.json", "status": "FAIL", "detail": "cannot read %s: %s" % (path, exc)}
    problems = []
    for event in ("SubagentStart", "SessionStart"):
        entries = hooks.get(event, [])
        parts = sorted(part_of(h["command"]) or 0 for _, h, _, _ in entries)
        if parts != list(range(1, PARTS + 1)):
            problems.append("%s must register --part 1..%d, found %s" % (event, PARTS, parts))
        if any(h.get("additionalContextLimit") != 0 for _, h, _, _ in entries):
            problems.append("%s entries need \"additionalContextLimit\": 0 (Codex otherwise sends a preview)"
                            % event)
    if not any(m == "Agent" for m, _, _, _ in hooks.get("PreToolUse", [])):
        problems.append("PreToolUse needs the guard with matcher \"Agent\"")
    return {"name": "hooks.json", "status": "FAIL" if problems else "ok",
            "detail": "; ".join(problems) or "registers the guard and %d parts" % PARTS}


# Project files Claude Code puts into an agent's first user message itself ("Contents of <path>
# (project instructions ...)"), measured on 2.1.328 (docs/files.md): CLAUDE.md, .claude/CLAUDE.md,
# CLAUDE.local.md and every .claude/rules/**/*.md without paths: of the project's folders, for
# custom subagents, general-purpose and statusline-setup alike; for Explore and Plan, none.
CLAUDE_MEMORY_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")


CLAUDE_SKIPS_MEMORY = frozenset(("Explore", "Plan"))


def claude_loads_file(machine, agent, path, session):
    """Why Claude Code already loads the project file ``path`` into ``agent``, or None (briefing delivers it).

    A ``claude --agent Explore`` session was not measured: there, as for Explore
    and Plan, briefing delivers (a duplicate costs tokens; a hole breaks the promise).
    """
    if agent.name in CLAUDE_SKIPS_MEMORY or not claude_loads(machine, "project"):
        return None  # (without the project source, not measured: briefing delivers)
    from ..standing import names_in
    for rel in names_in(machine, path, machine.project("claude").folders):
        if rel in CLAUDE_MEMORY_FILES:
            return "Claude Code loads %s into every agent but Explore and Plan" % rel
        if rel.startswith(".claude/rules/") and rel.endswith(".md") and not claude_rule_is_scoped(path):
            return "Claude Code loads .claude/rules/ files without paths: into every agent but Explore and Plan"
    return None


def claude_rule_is_scoped(path):
    """A .claude/rules file with ``paths:``: Claude Code loads it only once a matching file is read."""
    try:
        fm, _ = split_frontmatter(read_text(path))
    except Unreadable:
        return True  # not loaded as far as a hook can tell: briefing delivers it, or says why it cannot
    return any(line.startswith("paths:") for line in fm or ())  # any form: then briefing delivers it


def claude_session_check(machine):
    """The doctor's word on what this Claude Code session loads: its setting sources and the
    programmatic agents it runs (docs/agent-sdk.md); shown whenever either is not the default."""
    agents, _, unreadable = claude_programmatic(machine)
    where = sorted({a.path for a in agents.values()} | {w for w, _, _ in unreadable})
    names = ", ".join(sorted(agents)) or "none readable"
    detail = "Claude Code loads %s; programmatic agents: %s" % (
        claude_sources_text(machine), "%s (from %s)" % (names, "; ".join(where)) if where else "none")
    argv, _ = claude_process(machine)
    if argv is None:
        detail += " (no Claude Code process seen: run it inside a session to read its command line)"
    sources = claude_setting_sources(machine)
    unread = [path for scope, path in machine.rules_files("claude") if not claude_loads(machine, scope)]
    if unread:
        detail += "; briefing's rules files of the sources not loaded are not read either: %s" % ", ".join(
            display_path(p) for p in unread)
    return {"name": "claude-session", "status": "ok", "detail": detail,
            "shown": sources is not None or bool(where),
            "setting_sources": list(SETTING_SOURCES) if sources is None else sorted(sources),
            "programmatic_agents": sorted(agents)}


# README.md, Install: the two commands from a shell (in a session: /plugin marketplace add, /plugin install).
CLAUDE_INSTALL = "claude plugin marketplace add %s && claude plugin install briefing@briefing"


def claude_installed_check(machine):
    """The doctor's ``installed`` check: briefing in installed_plugins.json, enabled for this project
    by ``enabledPlugins`` (claude_plugins reads both, as the spawn paths do), or a ``--plugin-dir``
    of the session running the doctor; a session or an Agent SDK program elsewhere cannot be seen."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    registry = read_json(os.path.join(machine.claude_dir, "plugins", "installed_plugins.json"))
    entries = registry.get("plugins") if isinstance(registry, dict) else None
    ours = sorted(k for k in entries if k.partition("@")[0] == "briefing") if isinstance(entries, dict) else []
    found = claude_plugins(machine)
    ids = machine.state.get("claude_plugin_ids", {})
    fix = CLAUDE_INSTALL % checkout()
    loaded = [root for _, root in found if ids.get(root) in ours]
    if loaded:
        return judge_copy("claude", "Claude Code", loaded[0], claude_hooks_check, fix,
                          "%s, %s" % (ids[loaded[0]], display_path(loaded[0])))
    inline = [root for name, root in found if name == "briefing" and root in claude_plugin_dirs(machine)]
    if inline:
        return judge_copy("claude", "Claude Code", inline[0], claude_hooks_check, fix,
                          "--plugin-dir %s of this session" % display_path(inline[0]))
    enabled = enabled_plugins(machine)
    if ours and not any(enabled.get(k) is True for k in ours):
        return result("claude", "WARN", "briefing is installed (%s) but not enabled for this project: "
                      "claude plugin enable %s" % (", ".join(ours), ours[0]))
    if ours:
        return result("claude", "FAIL", "%s is enabled, but Claude Code loads nothing of it here: it is "
                      "installed for another project, or its folder is gone; %s" % (", ".join(ours), fix))
    return not_installed("claude", "Claude Code", fix, " (a session started with `claude --plugin-dir`, or an "
                         "Agent SDK program's plugins=, loads it without an install, which the doctor cannot "
                         "see from outside that session)")


# --------------------------------------------------------------------------
# Skills the agent loaded while it worked (issue 45, docs/loaded-skills.md, facts/invoked-skills.md)
# --------------------------------------------------------------------------

# How much of a transcript's end is read for loaded skills: a skill loaded before it is not seen (the
# docs say so). Claude Code 2.1.328 writes whole requests into the transcript, so it grows fast.
LOADED_TAIL = 32 * 1024 * 1024

# Claude Code re-attaches a skill its process invoked cut to this many characters (UTF-16 units, as
# JavaScript counts), counted from "Base directory for this skill:" (measured: facts/invoked-skills.md).
CLAUDE_REATTACH_CHARS = 20000

LOADED_BODY = "Base directory for this skill: "


def claude_loaded_skills(machine, payload):
    """The skills the payload's agent loaded, at its SessionStart(compact) (loaded.Found), or None.

    What counts as loaded is what the transcript shows (facts/invoked-skills.md): a ``Skill``
    tool call or a ``/skill`` command is followed by an ``isMeta`` user entry whose text is the
    skill as Claude Code put it into the context, tied to its call by ``sourceToolUseID`` or to
    its command by ``parentUuid``. A subagent's are in its own ``subagents/agent-<id>.jsonl``.

    Restored whole by Claude Code itself: a skill whose latest load this very process made
    (after it started: ``/proc/<CLAUDE_PID>/stat``) and no longer than CLAUDE_REATTACH_CHARS.
    Claude Code keeps those in memory and re-attaches them (cut at that length); one a
    process before it loaded (``--resume``, a continued session) it does not re-attach at
    all. Where the process's start cannot be read (no /proc), nothing counts as restored:
    a second, whole copy rather than none.
    """
    if payload.get("source") != "compact":
        return None
    path = claude_agent_transcript(machine, payload)
    if path is None:
        return None
    loaded = claude_transcript_loads(path)
    if not loaded:
        return None
    from ..loaded import Found
    started = claude_process_started(machine)
    restored = set()
    if started is not None:
        latest = {}
        for item in loaded:
            latest[item.name] = item
        restored = {name for name, item in latest.items()
                    if item.order >= started and utf16_len(item.text) <= CLAUDE_REATTACH_CHARS}
    agent = payload.get("agent_type")
    return Found(loaded, restored, agent=agent if isinstance(agent, str) and agent else None)


def utf16_len(text):
    """The length of ``text`` as JavaScript counts it: characters outside the BMP count twice."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def claude_agent_transcript(machine, payload):
    """The transcript of the payload's agent: the session's, or a subagent's own file next to it.

    Only under Claude Code's projects folder, where it writes them: a payload names the
    path, and nothing else is read.
    """
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript.endswith(".jsonl") or "\0" in transcript:
        return None
    if not is_inside(transcript, os.path.join(machine.claude_dir, "projects")):
        return None
    agent_id = payload.get("agent_id")
    if agent_id is None:
        return transcript
    if not (isinstance(agent_id, str) and agent_id and agent_id.replace("-", "").replace("_", "").isalnum()):
        return None
    return os.path.join(transcript[:-len(".jsonl")], "subagents", "agent-%s.jsonl" % agent_id)


def claude_transcript_loads(path):
    """[loaded.Loaded] of every skill a transcript shows loaded, oldest first (``order``: when, epoch seconds).

    Reads the last LOADED_TAIL bytes once; only lines that can be one of the three
    entries involved are parsed (the ``Skill`` call, the command, the body).
    """
    from ..files import read_tail
    data = read_tail(path, LOADED_TAIL)
    if not data:
        return []
    start = data.find(b"\n") + 1 if len(data) >= LOADED_TAIL else 0  # the first line may be cut
    calls, commands, bodies = {}, {}, []
    for line in lines_with(data, LOADED_BODY.encode(), start):
        if b"isMeta" in line:
            entry = claude_entry(line)
            message = entry.get("message") if entry.get("isMeta") is True and entry.get("type") == "user" else None
            text = message_text(message.get("content")) if isinstance(message, dict) else None
            if text and text.startswith(LOADED_BODY):
                bodies.append((entry, text))
    if not bodies:
        return []  # nothing loaded: the common case costs one search of the bytes
    for line in lines_with(data, b'"Skill"', start):
        if b"tool_use" in line:
            entry = claude_entry(line)
            message = entry.get("message")
            for block in message.get("content") or () if isinstance(message, dict) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Skill":
                    name = (block.get("input") or {}).get("skill") if isinstance(block.get("input"), dict) else None
                    if isinstance(block.get("id"), str) and isinstance(name, str):
                        calls[block["id"]] = name
    for line in lines_with(data, b"<command-name>", start):
        entry = claude_entry(line)
        message = entry.get("message")
        text = message_text(message.get("content")) if isinstance(message, dict) else ""
        name = text.partition("<command-name>")[2].partition("</command-name>")[0].strip()
        if name.startswith("/") and isinstance(entry.get("uuid"), str):
            commands[entry["uuid"]] = name[1:]
    from ..loaded import Loaded
    from ..text import iso_seconds
    out = []
    for entry, text in bodies:
        name = calls.get(entry.get("sourceToolUseID"))
        event = "Skill tool"
        if name is None:
            name = commands.get(entry.get("parentUuid"))
            event = "/%s" % name if name else None
        when = iso_seconds(entry.get("timestamp"))
        if name and when is not None:
            out.append(Loaded(name, text=text, order=when, event=event))
    return out


def lines_with(data, needle, start=0):
    """Each line of ``data`` (from ``start``) that holds ``needle``, once, in order: found by searching
    the bytes, so a large transcript is never split into lines."""
    at = data.find(needle, start)
    while at >= 0:
        begin = data.rfind(b"\n", start, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        yield data[max(begin, start):end]
        at = data.find(needle, end)


def claude_entry(line):
    try:
        entry = parse_json(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return entry if isinstance(entry, dict) else {}


def message_text(content):
    """A message's text: its content string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
                       and isinstance(b.get("text"), str))
    return ""


def claude_process_started(machine):
    """When the Claude Code process running this hook started, in epoch seconds, or None (no /proc).

    ``/proc/<pid>/stat`` gives its start in clock ticks since boot, ``/proc/uptime`` the
    time since boot now, on the same clock: to within a tick or two (10 ms).
    """
    import time
    pid = machine.env.get("CLAUDE_PID")
    if not (isinstance(pid, str) and pid.isdigit()):
        pid = claude_ancestor() if machine.env.get("CLAUDECODE") == "1" else None
    if not pid:
        return None
    try:
        with open("/proc/%s/stat" % pid, "rb") as handle:
            fields = handle.read(4096).rpartition(b")")[2].split()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read(64).split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return time.time() - uptime + int(fields[19]) / float(ticks)
    except (OSError, ValueError, IndexError, ZeroDivisionError):
        return None


def claude_loaded_payloads(machine, session):
    """[(who, payload)] the doctor's ``--loaded`` asks ``claude_loaded_skills`` with: the session's
    main agent and each subagent, as their SessionStart(compact) would be, for session id ``session``
    (None: the newest of this project)."""
    from ..audit.claude import agent_files, sessions
    found = [s for s in sessions(machine, 0) if session in (None, s.id)][:1]
    out = []
    for one in found:
        out.append(("session %s (main agent)" % one.id, {"source": "compact", "transcript_path": one.path}))
        for path in agent_files(one):
            agent_id = os.path.basename(path)[len("agent-"):-len(".jsonl")]
            meta = read_json(path[:-len(".jsonl")] + ".meta.json")
            agent = meta.get("agentType") if isinstance(meta, dict) else None
            payload = {"source": "compact", "transcript_path": one.path, "agent_id": agent_id}
            if isinstance(agent, str) and agent:
                payload["agent_type"] = agent
            out.append(("subagent %s #%s" % (agent or "(unnamed)", agent_id), payload))
    return out


HARNESS = Harness(
    HARNESSES.record("claude"),
    find_project=find_claude_project,
    find_agent=find_claude_agent,
    all_agents=all_claude_agents,
    resolve_skill=resolve_claude_skill,
    skill_places=claude_skill_places,
    preloads_native=True, session_agents=True,
    native_skip=claude_native_skip,
    # Claude Code renders a skill it preloads (facts/rendering.md): briefing delivers the same text.
    render_skill=render_claude_skill,
    # Claude Code persists any single hook output over 10,000 characters and
    # sends a 2 kB preview instead: PARTS outputs, each under the cap.
    part_budget=PART_BUDGET,
    # hooks/hooks.json, which Claude Code finds by itself (claude-code.md 6.1).
    hooks_check=claude_hooks_check,
    session_check=claude_session_check,
    installed_check=claude_installed_check,
    skill_roots=claude_skill_roots,
    # briefing's own rules files follow the setting sources, as Claude Code's settings files do.
    loads_scope=claude_loads,
    # The Agent tool's own text: an omitted subagent_type is general-purpose (claude-code.md 2).
    builtin_agents=CLAUDE_BUILTIN_AGENTS, builtin_name=claude_builtin_name, default_agent="general-purpose",
    agent_names=claude_agent_names,
    loads_file=claude_loads_file,
    # Issue 45: at SessionStart(compact), the skills the agent loaded that Claude Code will not bring back whole.
    loaded_skills=claude_loaded_skills, loaded_payloads=claude_loaded_payloads,
    # A compacted subagent gets SessionStart(compact) with its agent_id and agent_type, and a
    # `claude --agent` session with agent_type (facts/compaction.md): handlers.handle_session_start.
    redelivery="at spawn (SubagentStart; a `claude --agent` session at SessionStart), and again after "
               "every compaction: Claude Code sends the compacted agent SessionStart (source compact), "
               "whose context reaches its first request after the compaction")
