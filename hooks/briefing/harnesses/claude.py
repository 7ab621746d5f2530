"""Claude Code: everything that differs for it.

Its project (CLAUDE_PROJECT_DIR, else the transcript's folder, else the cwd),
agents (.claude/agents, then the user's, then plugins), skills (folders,
frontmatter names, legacy commands, plugins, skillOverrides), the entries its
native ``skills:`` preload skips, its process's own flags, and its hooks-file check.
"""
import os

from ..constants import PARTS, PART_BUDGET
from ..files import display_path, is_dir, is_file, is_inside, read_json, read_text, warn
from . import HARNESSES, Harness
from ..jsontext import parse_json
from ..lookup import (declaring_md_agents, find_in_tree, first_usable, load_md_agent,
                      plugin_candidates, skill_file_named, skills_named)
from ..names import split_plugin_name, valid_skill_name
from ..process import ancestor_named, flag_values, process_argv
from ..records import ParseError, Project, Skill, Unreadable
from ..yaml_subset import meta_value, yaml_present, yaml_true


CLAUDE_BUILTIN_AGENTS = frozenset(
    ("general-purpose", "Explore", "Plan", "statusline-setup", "claude", "fork"))


def claude_agent_roots(machine):
    # Precedence: the project folders' agents, nearest first, then the user's (measured, see
    # claude_project_folders).
    folders = machine.project("claude").folders
    return [os.path.join(f, ".claude", "agents") for f in folders] + [
        os.path.join(machine.claude_dir, "agents")]


def claude_skill_roots(machine):
    # Precedence: project folders, nearest first, then user; installed plugins come after both.
    folders = machine.project("claude").folders
    return [("project", os.path.join(f, ".claude", "skills")) for f in folders] + [
        ("user", os.path.join(machine.claude_dir, "skills"))]


def claude_command_roots(machine):
    # Precedence: as for skills, project folders nearest first, then the user's. Legacy commands
    # (.claude/commands/NAME.md) are skills to Claude Code's native preload (claude-code.md §5.1).
    folders = machine.project("claude").folders
    return [("project", os.path.join(f, ".claude", "commands")) for f in folders] + [
        ("user", os.path.join(machine.claude_dir, "commands"))]


def claude_settings_files(machine):
    """User, project and local settings, in the order in which later files win per key.

    Measured on 2.1.328, started in a sub-folder of a repository: the project's
    ``settings.json`` counts only in the project folder, ``settings.local.json``
    there and in the repository root, whose file wins.
    """
    project = machine.project("claude")
    files = [os.path.join(machine.claude_dir, "settings.json"),
             os.path.join(project.folder, ".claude", "settings.json"),
             os.path.join(project.folder, ".claude", "settings.local.json")]
    top = project.folders[-1]
    if top != project.folder and os.path.exists(os.path.join(top, ".git")):
        files.append(os.path.join(top, ".claude", "settings.local.json"))
    return files


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
    """Enabled installed plugins as [(manifest name, root)], project/local scope first."""
    if machine.state.get("claude_plugins") is not None:
        return machine.state["claude_plugins"]
    found = []
    ids = machine.state["claude_plugin_ids"] = {}  # root -> the plugin's id (claude_plugin_data)
    registry = read_json(os.path.join(machine.claude_dir, "plugins", "installed_plugins.json"))
    entries = registry.get("plugins") if isinstance(registry, dict) else None
    if isinstance(entries, dict) and entries:
        enabled = enabled_plugins(machine)
        scoped, user = [], []
        for key, installs in sorted(entries.items()):
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
        for key, root in scoped + user:
            found.append((plugin_manifest_name(root, key.partition("@")[0]), root))
            ids.setdefault(root, key)
    # Plugins loaded with --plugin-dir (facts/claude-code.md §5.1: their skills resolve for
    # skills:, and they are absent from installed_plugins.json), the hook's own plugin among
    # them, after the installed ones (their precedence among each other was not measured).
    for extra in claude_plugin_dirs(machine) + [machine.own_plugin_root]:
        if extra and is_dir(extra) and all(os.path.realpath(r) != os.path.realpath(extra)
                                           for _, r in found):
            found.append((plugin_manifest_name(extra, os.path.basename(extra)), extra))
            ids[extra] = "%s@inline" % found[-1][0]  # what Claude Code calls a --plugin-dir plugin
    machine.state["claude_plugins"] = found
    return found


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
                if claude_slug(folder) == slug:
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
        return None
    for root in claude_agent_roots(machine):
        agent = find_in_tree(root, agent_type, ".md", load_claude_agent, walk)
        if agent is not None:
            return agent
    return None


def claude_skill_candidates(machine, plugin, skill):
    """Every file Claude Code would take for ``skill`` (in ``plugin`` only, when given), in order.

    Precedence, measured on 2.1.328 as far as facts/claude-code.md §5.1 goes: a
    skill is found by its folder name and by its frontmatter ``name`` alike, and a
    legacy command ``.claude/commands/NAME.md`` counts as a skill. Which of two
    such files wins was not measured; briefing takes (1) a folder called NAME in
    every root (project folders nearest first, the user's, then plugins), then
    (2) a skill whose frontmatter name is NAME, in the same roots, then (3) a
    command NAME.md (project folders, the user's ``commands/``, plugins'
    ``commands/``). The files found later are read only when the earlier ones
    are not there, so a hit costs what it always did.
    """
    roots = machine.live("claude", (lambda: claude_skill_roots(machine))) if plugin is None else []
    plugins = [(n, r) for n, r in claude_plugins(machine) if plugin is None or n == plugin]
    for origin, root in roots:
        yield os.path.join(root, skill, "SKILL.md"), origin
    for manifest_name, root in plugins:
        for found in plugin_candidates(machine, [root], skill, ".claude-plugin", "plugin %s" % manifest_name):
            yield found
    for origin, root in roots:
        for path in skills_named(machine, root, skill):
            yield path, origin
    for manifest_name, root in plugins:
        for folder, single in machine.plugin_skill_dirs(root):
            if not single:
                for path in skills_named(machine, folder, skill):
                    yield path, "plugin %s" % manifest_name
            elif os.path.basename(folder) != skill and skill_file_named(os.path.join(folder, "SKILL.md"), skill):
                yield os.path.join(folder, "SKILL.md"), "plugin %s" % manifest_name
    if plugin is None:
        for origin, root in machine.live("claude commands", (lambda: claude_command_roots(machine))):
            yield os.path.join(root, skill + ".md"), origin
    for manifest_name, root in plugins:
        if machine.is_dir(os.path.join(root, "commands")):
            yield os.path.join(root, "commands", skill + ".md"), "plugin %s" % manifest_name


def resolve_claude_skill(machine, name, source):
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")
    found = first_usable(name, source, claude_skill_candidates(machine, plugin, skill))
    if not found.problem:
        claude_skill_override(machine, found, plugin, skill)
    return found


def claude_skill_override(machine, skill, plugin, bare):
    """Apply ``skillOverrides`` from the settings (facts/claude-code.md §5.1) to a resolved skill.

    Measured: ``"off"`` and ``"user-invocable-only"`` keep Claude Code from
    preloading it, ``"name-only"`` does not. ``"off"`` is someone's decision that
    the skill must not be used: briefing refuses it like a missing skill, in
    either list, naming the setting and the file. Which name the key must be was
    not measured for every kind of skill, so every name the skill goes by counts:
    as declared, its folder, its frontmatter name, and ``plugin:`` each of those.
    """
    overrides = skill_overrides(machine)
    if not overrides:
        return
    folder = os.path.basename(os.path.dirname(skill.path))
    if not skill.path.endswith("SKILL.md"):
        folder = os.path.basename(skill.path)[:-3]  # a legacy command NAME.md
    names = [skill.name, bare, folder, meta_value(skill.meta.get("name"))]
    owner = plugin or (skill.origin[len("plugin "):] if (skill.origin or "").startswith("plugin ") else None)
    if owner:
        names += ["%s:%s" % (owner, n) for n in names[1:]]
    for key in names:
        if key and key in overrides:
            value, where = overrides[key]
            skill.override = (key, value, where)
            if value == "off":
                skill.problem = 'turned off by skillOverrides "%s": "off" in %s' % (key, display_path(where))
            return


def claude_native_skip(machine, skill):
    """Why Claude Code will not preload this native ``skills:`` entry although it exists, or None.

    One rule per row of facts/claude-code.md §5.1 (measured on 2.1.328): the
    native preload takes only skills the model itself may invoke, and skips
    every other entry with nothing but a debug-log line. Each signal, and where
    it can be wrong:
    - ``--disable-slash-commands``: the harness's own command line
      (Machine.claude_process); unseen where there is no /proc.
    - ``disable-model-invocation``: the skill's own frontmatter.
    - ``skillOverrides`` ``user-invocable-only``: the settings files and
      ``--settings`` (claude_skill_override); managed settings are not read.
    - a plugin skill with neither ``description:`` nor ``when_to_use:``.
    - ``paths:``: Claude Code preloads a conditional skill only once the session
      has touched a matching file. A hook cannot know that reliably, so it
      always counts as skipped: a duplicate costs tokens, a hole breaks the promise.
    """
    if claude_flag(machine, "--disable-slash-commands"):
        return "claude runs with --disable-slash-commands, which preloads no skill"
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
    if own and machine.env.get("CLAUDE_PLUGIN_DATA") and os.path.realpath(own) == os.path.realpath(root):
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
    roots = [(None, r, True) for r in claude_agent_roots(machine)]
    roots += [(name, os.path.join(root, "agents"), True) for name, root in claude_plugins(machine)]
    return declaring_md_agents("claude", roots, builtins=CLAUDE_BUILTIN_AGENTS, every=every)


def claude_agent_names(machine):
    return [agent for agent, _ in all_claude_agents(machine, every=True) if agent is not None]


def claude_skill_places(skill):
    return ".claude/skills/%s/ in the project, ~/.claude/skills/%s/, or an enabled plugin" % (
        skill, skill)


def claude_hooks_check(path):
    """hooks/hooks.json, read by Claude Code: the guard and --part 1..PARTS on both events."""
    from ..hooks_files import part_of, read_hooks  # the doctor's checks only
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
    hooks_check=lambda root: claude_hooks_check(os.path.join(root, "hooks", "hooks.json")),
    # The Agent tool's own text: an omitted subagent_type is general-purpose (claude-code.md 2).
    builtin_agents=CLAUDE_BUILTIN_AGENTS, default_agent="general-purpose",
    agent_names=claude_agent_names,
    # A compacted subagent gets SessionStart(compact) with its agent_id and agent_type, and a
    # `claude --agent` session with agent_type (facts/compaction.md): handlers.handle_session_start.
    redelivery="at spawn (SubagentStart; a `claude --agent` session at SessionStart), and again after "
               "every compaction: Claude Code sends the compacted agent SessionStart (source compact), "
               "whose context reaches its first request after the compaction")
