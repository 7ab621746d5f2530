"""Factory Droid: everything that differs for it (facts/factory-droid.md, docs/factory-droid.md;
measured on 0.225.2).

Droid installs the Claude Code plugin as it is (``droid plugin marketplace add``, ``droid plugin
install``) and runs its ``hooks/hooks.json``, but it has no SubagentStart: a custom droid
(``.factory/droids/*.md``, spawned through its ``Task`` tool) is a session of its own whose
hooks name no droid. The guard refuses in the parent (PreToolUse on ``Task``); the sub-droid's
own UserPromptSubmit delivers, once it knows which droid it is from Droid's transcripts: the
sub-droid's transcript begins with ``callingSessionId``/``callingToolUseId``, and the parent's
transcript already holds that ``Task`` call with its ``subagent_type``.

Compaction (measured in the binary and the e2e suite): Droid keeps the newest messages that fit
and summarizes the rest, removing at least the first message. A one-line SessionStart note in
front of the briefing is that first message, so the briefing survives the compactions whose
kept part reaches back to it (docs/factory-droid.md says where that ends).
"""
import os

from ..files import Unreadable, is_dir, is_file, is_inside, open_regular, read_json, read_tail, shown_path, top_level_files
from . import HARNESSES, Harness
from ..lookup import declaring_md_agents, find_in_tree, first_usable, load_md_agent, named_skill_files
from ..names import split_plugin_name
from ..records import Project, Skill

# Droid takes one additionalContext of any size from UserPromptSubmit (100,000 characters
# arrived whole, facts §3); the cap of the other one-context harnesses.
DROID_LIMIT = 512 * 1024

# Built-in sub-droid types, with no file (facts §6); a custom droid of the same name is not measured.
DROID_BUILTIN_AGENTS = frozenset(("worker", "explorer"))

# The note in front of the briefing (SessionStart, the sub-droid's first message): the message a
# compaction removes first. It carries nothing the droid needs.
DROID_NOTE = "briefing: this droid's declared skills follow in the next message."

# How much of a transcript the hook reads: the first line of the sub-droid's own, the end of
# its parent's (where the Task call that started it is, parallel calls included).
FIRST_LINE_BYTES = 64 * 1024
PARENT_TAIL = 4 * 1024 * 1024


def factory_dir(machine):
    return os.path.join(machine.home, ".factory")


def find_droid_project(machine):
    """Droid's project: the folder every hook gets as DROID_PROJECT_DIR (FACTORY_PROJECT_DIR too).

    Droid reads ``.factory/droids`` and ``.factory/skills`` of that folder (facts §6).
    """
    for variable in ("DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"):
        env_dir = machine.env.get(variable)
        if env_dir and os.path.isabs(env_dir) and is_dir(env_dir):
            folder = os.path.abspath(env_dir)
            return Project(folder, variable, "$%s, the folder Droid runs in (every hook gets it)" % variable,
                           [folder], ".factory/droids, .factory/skills and .agents/skills")
    return Project(machine.cwd, "cwd", "DROID_PROJECT_DIR is not set; the cwd, taken as the folder Droid runs in",
                   [machine.cwd], ".factory/droids, .factory/skills and .agents/skills")


def droid_plugins(machine):
    """Installed and enabled Droid plugins as [(name, root)]: ``~/.factory/plugins/installed_plugins/
    *.json`` (one per install, ``pluginId`` and ``entry.installPath``), enabled in
    ``enabledPlugins`` of the user's or the project's ``.factory/settings.json``."""
    if machine.state.get("droid_plugins") is not None:
        return machine.state["droid_plugins"]
    enabled = {}
    for settings in (os.path.join(factory_dir(machine), "settings.json"),
                     os.path.join(machine.project("droid").folder, ".factory", "settings.json")):
        data = read_json(settings) if is_file(settings) else None
        flags = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(flags, dict):
            enabled.update((k, v) for k, v in flags.items() if isinstance(k, str))
    found = []
    base = os.path.join(factory_dir(machine), "plugins", "installed_plugins")
    try:
        records = sorted(e.path for e in os.scandir(base) if e.name.endswith(".json"))
    except OSError:
        records = []
    for path in records:
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("entry"), dict):
            continue
        plugin_id, root = data.get("pluginId"), data["entry"].get("installPath")
        if isinstance(plugin_id, str) and enabled.get(plugin_id) is True and isinstance(root, str) \
                and os.path.isabs(root):
            found.append((plugin_id.split("@", 1)[0], root))
    machine.state["droid_plugins"] = found
    return found


def droid_agent_roots(machine):
    """Droid folders in the order in which the first wins: the project's, the personal ones, then
    each plugin's ``droids/`` (its ``agents/``, renamed at install). Top level only (facts §6)."""
    roots = [(None, os.path.join(machine.project("droid").folder, ".factory", "droids")),
             (None, os.path.join(factory_dir(machine), "droids"))]
    return roots + [(name, os.path.join(root, "droids")) for name, root in droid_plugins(machine)]


def load_droid(path, name):
    return load_md_agent(path, name, "droid")


def find_droid(machine, name):
    """The droid Droid would start for a Task's ``subagent_type``: the frontmatter ``name``
    (a file ``file-a.md`` named ``fm-name`` is ``fm-name``), project over personal (facts §6)."""
    if not isinstance(name, str) or not name or name in DROID_BUILTIN_AGENTS:
        return None
    for _, root in droid_agent_roots(machine):
        agent = find_in_tree(root, name, ".md", load_droid, walked=sorted(top_level_files(root, ".md")))
        if agent is not None:
            return agent
    return None


def all_droids(machine, every=False):
    roots = [(None, root, False) for _, root in droid_agent_roots(machine)]
    return declaring_md_agents("droid", roots, (".md",), (), DROID_BUILTIN_AGENTS, every=every)


def droid_skill_roots(machine):
    # Listed in Droid's "Available skills" (facts §6): the project's and the personal .factory and
    # .agents skills, at any depth, by frontmatter name; .claude/ is not read.
    project = machine.project("droid").folder
    return [("project", os.path.join(project, ".factory", "skills")),
            ("project", os.path.join(project, ".agents", "skills")),
            ("user", os.path.join(factory_dir(machine), "skills")),
            ("user", os.path.join(machine.home, ".agents", "skills"))]


def resolve_droid_skill(machine, name, source):
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")

    def candidates():
        if plugin is None:
            for origin, root in droid_skill_roots(machine):
                for path in named_skill_files(machine, root, skill):
                    yield path, origin
        for plugin_name, root in droid_plugins(machine):
            if plugin is None or plugin_name == plugin:
                for path in named_skill_files(machine, os.path.join(root, "skills"), skill):
                    yield path, "plugin %s" % plugin_name

    return first_usable(name, source, candidates())


def droid_skill_places(skill):
    return ("a skill named %s (its frontmatter name) under .factory/skills/ or .agents/skills/ in the "
            "project, ~/.factory/skills/, ~/.agents/skills/, or an installed Droid plugin" % skill)


# -- which droid a sub-droid is ------------------------------------------------

def first_record(path):
    """The first JSON line of a Droid transcript, or None."""
    from ..jsontext import parse_json
    data = read_head(path, FIRST_LINE_BYTES)
    if not data:
        return None
    line = data.split(b"\n", 1)[0]
    try:
        value = parse_json(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def read_head(path, size):
    try:
        fd, _ = open_regular(path)
    except Unreadable:
        return None
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def safe_id(value):
    return isinstance(value, str) and 0 < len(value) <= 128 and value.isascii() \
        and value.replace("-", "").replace("_", "").isalnum()


def droid_spawned(machine, payload):
    """The droid a sub-droid's hook runs in (its ``subagent_type``), or None for a main session.

    Read from Droid's own records (facts §5): the sub-droid's transcript, under
    ``~/.factory/sessions``, begins with ``callingSessionId`` and ``callingToolUseId``; the
    parent's transcript beside it already holds that ``Task`` call.
    """
    transcript = payload.get("transcript_path")
    sessions = os.path.join(factory_dir(machine), "sessions")
    if not isinstance(transcript, str) or "\0" in transcript or not is_inside(transcript, sessions):
        return None
    head = first_record(transcript)
    if head is None:
        return None
    parent, call = head.get("callingSessionId"), head.get("callingToolUseId")
    if not (safe_id(parent) and safe_id(call)):
        return None
    tail = read_tail(os.path.join(os.path.dirname(transcript), parent + ".jsonl"), PARENT_TAIL)
    name = task_call_agent(tail, call) if tail else None
    return name or prompt_agent(payload.get("prompt"))


# The head of the prompt Droid renders for a sub-droid (facts §5): the parent model writes only the
# task between the BEGIN/END markers below it. Read only where the sub-droid's own transcript says
# it is one and the parent's record of the call cannot be found.
TASK_HEADER = "# Task Tool Invocation\n\nSubagent type: "


def prompt_agent(prompt):
    if not isinstance(prompt, str) or not prompt.startswith(TASK_HEADER):
        return None
    name = prompt[len(TASK_HEADER):].split("\n", 1)[0]
    return name if 0 < len(name) <= 256 else None


def task_call_agent(tail, call):
    """The ``subagent_type`` of the Task tool_use ``call`` in the end of a parent transcript."""
    from ..jsontext import parse_json
    needle = ('"%s"' % call).encode("ascii")
    for line in reversed(tail.split(b"\n")):
        if needle not in line:
            continue
        try:
            record = parse_json(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        message = record.get("message") if isinstance(record, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == call \
                    and block.get("name") == "Task" and isinstance(block.get("input"), dict):
                name = block["input"].get("subagent_type")
                return name if isinstance(name, str) and name else None
    return None


# -- the hooks file, and the doctor --------------------------------------------

def droid_hooks_check(root):
    """hooks/hooks.json as Droid reads it: a PreToolUse handler whose matcher takes ``Task``, and
    SessionStart and UserPromptSubmit handlers running the hook (Droid reads no other file)."""
    path = os.path.join(root, "hooks", "hooks.json")
    data = read_json(path)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return {"name": "hooks.json (Droid)", "status": "FAIL",
                "detail": "%s is missing or has no hooks: Droid runs no briefing hook" % shown_path(path)}

    def runs(event, matches=None):
        for group in hooks.get(event) or ():
            if not isinstance(group, dict):
                continue
            if matches and not matches(group.get("matcher")):
                continue
            for hook in group.get("hooks") or ():
                if isinstance(hook, dict) and "briefing-preload" in str(hook.get("command", "")):
                    return True
        return False

    missing = [what for what, ok in (
        ("a PreToolUse handler matching Task (the guard)",
         runs("PreToolUse", lambda m: isinstance(m, str) and "Task" in m.split("|"))),
        ("a SessionStart handler", runs("SessionStart")),
        ("a UserPromptSubmit handler (the delivery)", runs("UserPromptSubmit"))) if not ok]
    if missing:
        return {"name": "hooks.json (Droid)", "status": "FAIL",
                "detail": "%s lacks %s: Droid %s" % (shown_path(path), "; ".join(missing),
                                                     "spawns declaring droids unguarded or unbriefed")}
    return {"name": "hooks.json (Droid)", "status": "ok",
            "detail": "%s: guard on Task, delivery at the sub-droid's UserPromptSubmit" % shown_path(path)}


DROID_INSTALL = "droid plugin marketplace add %s && droid plugin install briefing@%s"


def droid_installed_check(machine):
    """The doctor's ``installed`` check: briefing installed as a Droid plugin and enabled."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    folder = checkout()
    fix = DROID_INSTALL % (folder, os.path.basename(folder.rstrip("/")) or "briefing")
    for name, root in droid_plugins(machine):
        if name == "briefing":
            return judge_copy("droid", "Droid", root, droid_hooks_check, fix)
    base = os.path.join(factory_dir(machine), "plugins", "installed_plugins")
    try:
        records = sorted(e.path for e in os.scandir(base) if e.name.startswith("briefing-"))
    except OSError:
        records = []
    if records:
        # Droid 0.225.2 has no `plugin enable`: install again (it enables), or set enabledPlugins.
        ids = [data.get("pluginId") for data in map(read_json, records) if isinstance(data, dict)]
        plugin_id = next((i for i in ids if isinstance(i, str)), "briefing@<marketplace>")
        return result("droid", "WARN", "briefing is installed in Droid (%s) but not enabled for this project: "
                      "droid plugin install %s, or \"enabledPlugins\": {\"%s\": true} in ~/.factory/settings.json"
                      % (shown_path(records[0]), plugin_id, plugin_id))
    return not_installed("droid", "Droid", fix)


HARNESS = Harness(
    HARNESSES.record("droid"),
    find_project=find_droid_project,
    find_agent=find_droid,
    all_agents=all_droids,
    resolve_skill=resolve_droid_skill,
    skill_places=droid_skill_places,
    skill_roots=droid_skill_roots,
    part_budget=None, whole_limit=DROID_LIMIT,
    hooks_check=droid_hooks_check,
    installed_check=droid_installed_check,
    builtin_agents=DROID_BUILTIN_AGENTS,
    agent_names=lambda machine: [a for a, _ in all_droids(machine, every=True) if a],
    spawned_agent=droid_spawned, spawn_note=DROID_NOTE,
    # Droid makes ~/.factory on its first run: without it, its built-ins are nobody's concern here.
    in_use=lambda machine: is_dir(factory_dir(machine)),
    unused_why=lambda machine: "%s does not exist (Droid makes it on its first run); --harness droid checks it "
                               "anyway" % shown_path(factory_dir(machine)),
    redelivery="at spawn, at the sub-droid's UserPromptSubmit (a one-line SessionStart note in front of it "
               "is what Droid's compaction removes first)")
