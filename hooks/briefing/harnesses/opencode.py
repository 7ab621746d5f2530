"""OpenCode, and Kilo (its fork) as a variant: everything that differs for them.

Neither runs command hooks. A JavaScript plugin (``opencode/briefing.js``, built
into ``briefing-opencode/`` by ``scripts/build-opencode-plugin``) sends this hook
a payload at each point it needs an answer and acts on what it prints; it
decides nothing itself (docs/opencode.md, "The plugin's payloads"). This module
is the rest: the project (the plugin's ``directory`` up to the git root), agents
(``{agent,agents}/**/*.md`` in every config folder, the last folder wins, named
by the file's path unless a ``name:`` key says otherwise), skills (by
frontmatter ``name`` in the CLI's own roots, in the order Kilo was measured to
take them) and the
one context a briefing travels in (``experimental.chat.system.transform``).

``CLIS`` holds what differs between the two CLIs (their folder names and
variables, read in each CLI's bundled source and measured; shared/facts/opencode.md);
``harnesses/kilo.py`` is one line that builds Kilo's Harness from it.
"""
import os

from ..files import display_path, is_file, read_json, read_text, walk_files, warn
from . import HARNESSES, Harness
from ..lookup import first_usable, folders_to_git_root, index_by_name
from ..names import dedupe, split_plugin_name
from ..records import Agent, ParseError, Project, Skill, Unreadable
from ..yaml_subset import meta_value, may_spell, parse_frontmatter, parse_skill_meta


# A system.transform entry of 1,000, 100,000 and 300,000 characters reached the subagent's
# request whole and byte-exact in both CLIs (shared/facts/opencode.md §2, §8). The cap keeps
# every briefing, with its framing, under what was measured.
OPENCODE_LIMIT = 256 * 1024


class Cli(object):
    """What differs between OpenCode and Kilo, for one of them."""

    def __init__(self, key, label, config_name, dot_dirs, env, builtin_agents, plugin_key):
        self.key, self.label = key, label
        self.config_name = config_name  # the folder under $XDG_CONFIG_HOME
        self.dot_dirs = dot_dirs  # the project's (and home's) config folder names, in the CLI's order
        self.env = env  # the prefix of its variables: OPENCODE_CONFIG_DIR, KILO_CONFIG_DIR, ...
        self.builtin_agents = frozenset(builtin_agents)
        self.plugin_key = plugin_key  # the payload key only its plugin sends (harnesses.RECORDS)


CLIS = {
    # ConfigPaths.directories in opencode 1.18.33: [~/.config/opencode, .opencode up from the
    # directory to the worktree, ~/.opencode, $OPENCODE_CONFIG_DIR]. Its agents (`agent list`):
    # build and plan (primary), general and explore (subagents); compaction, summary and title
    # are the CLI's own utility agents, which no plugin payload ever names.
    "opencode": Cli("opencode", "OpenCode", "opencode", (".opencode",), "OPENCODE",
                    ("build", "plan", "general", "explore"), "opencode_plugin"),
    # Kilo 7.7.7 reads .kilocode and .kilo, never .opencode (measured, facts §8), and has code,
    # ask, debug, orchestrator and plan as primaries.
    "kilo": Cli("kilo", "Kilo", "kilo", (".kilocode", ".kilo"), "KILO",
                ("code", "ask", "debug", "orchestrator", "plan", "general", "explore"), "kilo_plugin"),
}


def env_on(machine, name):
    return (machine.env.get(name) or "").strip().lower() in ("1", "true")


def config_home(machine, cli):
    config = machine.env.get("XDG_CONFIG_HOME")
    config = config if config and os.path.isabs(config) else os.path.join(machine.home, ".config")
    return os.path.join(config, cli.config_name)


def find_project(machine, cli):
    """The project: the plugin's ``directory`` (the payload's cwd), and the folders up to the git root.

    Both CLIs read their config folders from there up to the worktree, the git
    root (``/`` when there is none).
    """
    folder = machine.cwd
    folders = folders_to_git_root(folder)[0]
    return Project(folder, "cwd", "the plugin's directory, the folder %s was started in" % cli.label,
                   folders, "%s (agents, skills), .claude/skills and .agents/skills" % "/".join(cli.dot_dirs))


def config_dirs(machine, cli):
    """The CLI's config folders in its loading order: a later folder's agent of a name wins.

    ``ConfigPaths.directories``: the user's config folder, each project config folder
    from the directory up to the worktree (nearest first, the order of its upward
    search), the home folder's own, then ``$<CLI>_CONFIG_DIR``; each once.
    """
    project = machine.project(cli.key)
    dirs = [config_home(machine, cli)]
    if not env_on(machine, cli.env + "_DISABLE_PROJECT_CONFIG"):
        dirs += [os.path.join(f, name) for f in project.folders for name in cli.dot_dirs]
    dirs += [os.path.join(machine.home, name) for name in cli.dot_dirs]
    extra = machine.env.get(cli.env + "_CONFIG_DIR")
    if extra and os.path.isabs(extra):
        dirs.append(extra)
    return [d for d in dedupe(dirs) if machine.is_dir(d)]


def agent_files(folder):
    """[(name by path, file)] of ``{agent,agents}/**/*.md`` in one config folder.

    The CLI names an agent by its path below ``agent/`` or ``agents/``, without
    ``.md`` (``agents/review/deep.md`` is ``review/deep``), unless its frontmatter
    has a ``name``, which wins (measured: facts §5).
    """
    out = []
    for sub in ("agent", "agents"):
        root = os.path.join(folder, sub)
        for path in walk_files(root, ".md"):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            out.append((rel[:-3], path))
    return out


def agent_index(machine, cli):
    """{name: (file, frontmatter or error)} of the agent that wins each name, built once per payload.

    Measured in both CLIs: the project's agent of a name wins over the user's (a later
    config folder replaces an earlier one), and of two files in one folder that a
    ``name:`` gives the same name, the first by path wins (``a-dup.md`` over ``z-dup.md``).
    """
    def build():
        index = {}
        for folder in config_dirs(machine, cli):
            here = set()  # names taken in this folder: its first file of a name wins (measured)
            for by_path, path in agent_files(folder):
                try:
                    text = read_text(path)
                except Unreadable as exc:
                    warn("%s: %s" % (path, exc.reason))
                    continue
                try:
                    fm = parse_frontmatter(text)
                except ParseError as exc:
                    # Its name is unreadable too: the file's own stands for it, and a file that
                    # declares nothing stays silent.
                    if may_spell(text, "briefing") and by_path not in here:
                        here.add(by_path)
                        index[by_path] = (path, "cannot read frontmatter: %s" % exc)
                    continue
                name = fm.name if isinstance(fm.name, str) and fm.name else by_path
                if name not in here:
                    here.add(name)
                    index[name] = (path, fm)  # a later folder replaces an earlier one
        return index
    return machine.memo(("agent index", cli.key), build)


def agent_of(cli, name, path, fm):
    if isinstance(fm, str):
        return Agent(cli.key, name, path, error=fm)
    # The CLI has no skills: key of its own (it would be sent to the provider with every request,
    # as any unknown key): briefing: skills is the declaration.
    return Agent(cli.key, name, path, skills=dedupe(fm.skills), wildcard_rules=fm.wildcard_rules,
                 files=dedupe(fm.files))


def find_agent(machine, cli, name):
    if not isinstance(name, str) or not name:
        return None
    found = agent_index(machine, cli).get(name)
    return agent_of(cli, name, found[0], found[1]) if found else None


def all_agents(machine, cli, every=False):
    for name, (path, fm) in sorted(agent_index(machine, cli).items()):
        agent = agent_of(cli, name, path, fm)
        if agent.declares or every:
            yield agent, None


def agent_names(machine, cli):
    return sorted(agent_index(machine, cli))


def skill_roots(machine, cli):
    """(origin, folder) of every skill root, the one that wins a name first.

    Measured on both CLIs with one name in two roots, for every pair of six roots:
    Kilo 7.7.7 takes, every time, the config folders' ``skill/``/``skills/`` (the
    project's before the user's ``~/.config/kilo``), then the project's ``.agents/skills``
    and ``.claude/skills``, then the user's ``~/.agents/skills`` and ``~/.claude/skills``.
    OpenCode 1.18.33 scans the same roots but loads every copy at once and keeps
    whichever it finishes last, so its choice varies from run to run (the same pair
    went both ways in four runs): briefing takes Kilo's order there too, and the doctor
    names the other copy (``Skill.passed``). A skill is known by its frontmatter
    ``name``, at any depth below a root. ``<CLI>_DISABLE_EXTERNAL_SKILLS`` leaves out
    the ``.claude`` and ``.agents`` roots, ``<CLI>_DISABLE_CLAUDE_CODE_SKILLS`` (Kilo:
    also ``KILO_DISABLE_CLAUDE_CODE``) the ``.claude`` ones.
    """
    roots = []
    project = machine.project(cli.key).folders
    for folder in reversed(config_dirs(machine, cli)):  # a later folder wins, as for agents
        origin = "project" if any(os.path.dirname(folder) == f for f in project) else "user"
        roots += [(origin, os.path.join(folder, sub)) for sub in ("skills", "skill")]
    if not env_on(machine, cli.env + "_DISABLE_EXTERNAL_SKILLS"):
        claude_off = env_on(machine, cli.env + "_DISABLE_CLAUDE_CODE_SKILLS") or (
            cli.key == "kilo" and env_on(machine, "KILO_DISABLE_CLAUDE_CODE"))
        externals = [".agents"] + ([] if claude_off else [".claude"])
        roots += [("project", os.path.join(f, ext, "skills")) for f in project for ext in externals]
        roots += [("user", os.path.join(machine.home, ext, "skills")) for ext in externals]
    return roots


def skill_name(text):
    return meta_value(parse_skill_meta(text).get("name"))


def skill_index(machine, root):
    """{frontmatter name: [SKILL.md paths]} of every SKILL.md at any depth below ``root``, once per payload."""
    def build():
        files = [p for p in walk_files(root, "SKILL.md") if os.path.basename(p) == "SKILL.md"]
        return index_by_name(files, skill_name)
    return machine.memo(("opencode skill index", root), build)


def resolve_skill(machine, cli, name, source):
    """A skill as the CLI finds it: by frontmatter name, in ``skill_roots`` order."""
    plugin, skill = split_plugin_name(name)
    if skill is None or plugin is not None:
        return Skill(name, source, problem="not a valid skill name" if skill is None else (
            "%s has no plugin skills: name the skill alone" % cli.label))
    copies = []
    for origin, root in machine.live(("%s skill roots" % cli.key), lambda: skill_roots(machine, cli)):
        copies += [(path, origin) for path in skill_index(machine, root).get(skill, ())]
    found = first_usable(name, source, copies)
    if found.path and not found.problem:
        found.passed = [(display_path(path), CLI_DUPLICATES[cli.key]) for path, _ in copies if path != found.path][:1]
    return found


# What the doctor says of another copy of a skill's name (resolve_skill, skill_roots).
CLI_DUPLICATES = {
    "opencode": "a copy of the same name, and OpenCode loads every copy at once and keeps whichever it "
                "finishes last, so a run may take that one instead (measured): keep one copy",
    "kilo": "a copy of the same name in a root Kilo ranks lower",
}


def skill_places(cli, skill):
    dots = " or ".join("%s/skills/%s/" % (d, skill) for d in cli.dot_dirs)
    return ("a skill named %s (its frontmatter name) under %s, .claude/skills/ or .agents/skills/ in the "
            "project, ~/.config/%s/skills/, ~/.claude/skills/ or ~/.agents/skills/" % (
                skill, dots, cli.config_name))


# The plugin in a checkout (opencode/) and in a built copy (its root): what the doctor checks.
PLUGIN_SOURCE = os.path.join("opencode", "briefing.js")


def plugin_check(root):
    """The OpenCode/Kilo plugin of this copy: its module, and the hook beside it."""
    built = read_json(os.path.join(root, "package.json"))
    if isinstance(built, dict) and isinstance(built.get("main"), str):
        main = os.path.join(root, built["main"])
        if not is_file(main):
            return {"name": "opencode plugin", "status": "FAIL",
                    "detail": "package.json names %s as its main, which is missing" % display_path(main)}
        return {"name": "opencode plugin", "status": "ok",
                "detail": "%s: add %s to \"plugin\" in opencode.json or kilo.json" % (
                    display_path(main), display_path(root))}
    if not is_file(os.path.join(root, PLUGIN_SOURCE)):
        return {"name": "opencode plugin", "status": "ok",
                "detail": "this copy of briefing carries no OpenCode/Kilo plugin"}
    return {"name": "opencode plugin", "status": "ok",
            "detail": "%s: install it with scripts/build-opencode-plugin OUT (docs/opencode.md)" % PLUGIN_SOURCE}


REDELIVERY = ("on every model request of the subagent's session (experimental.chat.system.transform), "
              "so again after each compaction; never in the summarizer's own request")


def delivery_check(machine, cli):
    """What the doctor says of redelivery under the CLI (there is no hook trust to check)."""
    return {"name": "%s-compaction" % cli.key, "status": "ok", "detail": "a subagent is briefed %s" % REDELIVERY}


# README.md, Install: build the plugin folder once, then name it in "plugin".
PLUGIN_INSTALL = ("%s/scripts/build-opencode-plugin ~/.local/share/briefing, then add "
                  "\"~/.local/share/briefing/briefing-opencode\" (its absolute path) to \"plugin\" in %s.json")


def config_files(machine, cli):
    """The config files whose ``plugin`` arrays the CLI merges: ``<key>.json``/``.jsonc`` in each
    config folder (config_dirs) and in each project folder, and ``$<CLI>_CONFIG``. In its config
    folders Kilo reads ``opencode.json`` too: ``kilo plugin <folder>`` writes the entry into
    ``.kilo/opencode.json`` (measured on 7.7.7)."""
    names = dedupe([cli.key, "opencode"])
    files = [os.path.join(d, "%s.%s" % (n, ext)) for d in config_dirs(machine, cli) for n in names
             for ext in ("json", "jsonc")]
    files += [os.path.join(d, "%s.%s" % (cli.key, ext)) for d in machine.project(cli.key).folders
              for ext in ("json", "jsonc")]
    extra = machine.env.get(cli.env + "_CONFIG")
    return files + ([extra] if extra and os.path.isabs(extra) else [])


def plugin_entries(machine, cli):
    """[(config file, entry)] of every string in a ``plugin`` array (an entry may also be
    [name, options]) of the CLI's config files; a .jsonc file's whole-line comments are skipped."""
    from ..jsontext import parse_json
    from ..yaml_subset import strip_comment_lines
    out = []
    for path in config_files(machine, cli):
        try:
            data = parse_json(strip_comment_lines(read_text(path)))
        except (Unreadable, ValueError):
            continue
        plugins = data.get("plugin") if isinstance(data, dict) else None
        for entry in plugins if isinstance(plugins, list) else ():
            entry = entry[0] if isinstance(entry, list) and entry else entry
            if isinstance(entry, str) and entry:
                out.append((path, entry))
    return out


def plugin_path(config, entry, home):
    """The file or folder a ``plugin`` entry names, or None for an npm package name
    ("/abs", "file:///abs", "./rel" or "../rel" from the config's folder, "~/...")."""
    if entry.startswith("file://"):
        entry = entry[len("file://"):]
    if entry.startswith("~/"):
        return os.path.join(home, entry[2:])
    if os.path.isabs(entry):
        return entry
    if entry.startswith("./") or entry.startswith("../"):
        return os.path.normpath(os.path.join(os.path.dirname(config), entry))
    return None


def installed_check(machine, cli):
    """The doctor's ``installed`` check: a ``plugin`` entry that resolves to briefing's plugin (a
    built folder, or its briefing.js), and nothing else; a path that does not exist is one the CLI
    skips without a word."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    fix = PLUGIN_INSTALL % (checkout(), cli.key)
    named = []
    for config, entry in plugin_entries(machine, cli):
        path = plugin_path(config, entry, machine.home)
        if path is None:
            if "briefing" in entry.lower():
                named.append(result(cli.key, "ok", "\"plugin\" in %s names the package %s: %s installs it itself, "
                                    "where the doctor does not look" % (display_path(config), entry, cli.label)))
            continue
        folder = os.path.dirname(path) if is_file(path) else path
        where = "%s (\"plugin\" in %s)" % (display_path(path), display_path(config))
        if not os.path.exists(path):
            if "briefing" in entry.lower():
                return result(cli.key, "FAIL", "\"plugin\" in %s names %s, which does not exist: %s loads no "
                              "plugin from it and says nothing; correct the path, or %s" % (
                                  display_path(config), display_path(path), cli.label, fix))
            continue
        if is_file(os.path.join(folder, "briefing.js")) or "briefing" in entry.lower():
            return judge_copy(cli.key, cli.label, folder, plugin_check, fix, where)
    return named[0] if named else not_installed(cli.key, cli.label, fix)


def misplaced_agents(machine, cli):
    """Kilo reads .kilocode/ and .kilo/, never .opencode/ (measured, facts §8): where a project
    keeps its agents in .opencode/ alone, say where Kilo looks instead."""
    found = [os.path.join(f, ".opencode", sub) for f in machine.project(cli.key).folders
             for sub in ("agent", "agents") if machine.is_dir(os.path.join(f, ".opencode", sub))]
    if not found:
        return None
    return ("%s reads agents from %s (and ~/.config/%s), never from .opencode/, where this project keeps "
            "them (%s): copy them to %s/agents/" % (
                cli.label, " and ".join("%s/agents/" % d for d in cli.dot_dirs), cli.config_name,
                display_path(found[0]), cli.dot_dirs[-1]))


# --------------------------------------------------------------------------
# Skills a session loaded, given back after its compaction (issue 45, docs/loaded-skills.md)
# --------------------------------------------------------------------------

def loaded_skills(machine, payload, key):
    """At the plugin's SessionStart(``compact``), asked when the CLI reports ``session.compacted``:
    the skills the session loaded before its latest compaction (loaded.Found), or None.

    Measured in OpenCode 1.18.33 and Kilo 7.7.7 (docs/loaded-skills.md): the CLI's database
    (``<data>/opencode/opencode.db``, ``<data>/kilo/kilo.db``) holds each ``skill`` tool call as a
    ``tool`` part of the session (``state.input.name``, ``state.output``: the text as the CLI put
    it into the context) and each compaction as a ``compaction`` part; a compaction drops the
    older tool results. Read-only; the payload's ``agent`` names the session's agent, so that
    what its own briefing gives it is not given twice.
    """
    session = payload.get("session_id")
    if payload.get("source") != "compact" or not (isinstance(session, str) and session.startswith("ses_")
                                                   and session.replace("_", "").isalnum()):
        return None
    from ..audit.opencode import DATABASE, SESSION_LIMIT, connect, data_dir, json_of
    try:
        db = connect(os.path.join(data_dir(machine, key), DATABASE[key]))
        try:
            rows = db.execute("SELECT time_created, data FROM part WHERE session_id = ? AND (data LIKE "
                              "'%\"compaction\"%' OR data LIKE '%\"skill\"%') ORDER BY time_created, id LIMIT ?",
                              (session, SESSION_LIMIT)).fetchall()
        finally:
            db.close()
    except Exception:  # sqlite3.Error, OSError: no database, locked, another schema
        return None
    compacted, latest = None, {}
    for created, data in rows:
        part = json_of(data) or {}
        if part.get("type") == "compaction":
            compacted = created
        state = part.get("state") if part.get("type") == "tool" and part.get("tool") == "skill" else None
        if isinstance(state, dict) and state.get("status") == "completed" and isinstance(state.get("input"), dict):
            name, output = state["input"].get("name"), state.get("output")
            folder = state.get("metadata", {}).get("dir") if isinstance(state.get("metadata"), dict) else None
            if isinstance(name, str) and isinstance(output, str) and output:
                latest[name] = (created, output, folder if isinstance(folder, str) and folder else None)
    if compacted is None:
        return None
    from ..loaded import Found, Loaded
    # the text as loaded; the path only names the folder in the framing (nothing is read there)
    loaded = [Loaded(name, text=text, path=folder and os.path.join(folder, "SKILL.md"), order=created,
                     event="skill tool")
              for name, (created, text, folder) in sorted(latest.items(), key=lambda pair: pair[1][0])
              if created < compacted]
    agent = payload.get("agent")
    return Found(loaded, agent=agent if isinstance(agent, str) and agent else None) if loaded else None


def make_harness(key):
    cli = CLIS[key]
    return Harness(
        HARNESSES.record(key),
        find_project=lambda machine: find_project(machine, cli),
        find_agent=lambda machine, name: find_agent(machine, cli, name),
        all_agents=lambda machine, every=False: all_agents(machine, cli, every),
        resolve_skill=lambda machine, name, source: resolve_skill(machine, cli, name, source),
        skill_places=lambda skill: skill_places(cli, skill),
        # One system entry, of any size the CLI takes whole.
        part_budget=None, whole_limit=OPENCODE_LIMIT,
        # The plugin keeps what the guard printed for the child (one process per spawn).
        guard_context=True,
        # One check of the shared plugin, under OpenCode's key.
        hooks_check=plugin_check if key == "opencode" else None,
        trust_check=lambda machine: delivery_check(machine, cli),
        installed_check=lambda machine: installed_check(machine, cli),
        skill_roots=lambda machine: skill_roots(machine, cli),
        agent_hint=(lambda machine: misplaced_agents(machine, cli)) if ".opencode" not in cli.dot_dirs else (
            lambda machine: None),
        preflight_warns=True,
        builtin_agents=cli.builtin_agents,
        agent_names=lambda machine: agent_names(machine, cli),
        redelivery=REDELIVERY,
        # Issue 45: the plugin asks at session.compacted; the skills come back on every request after it.
        loaded_skills=lambda machine, payload: loaded_skills(machine, payload, key))


HARNESS = make_harness("opencode")
