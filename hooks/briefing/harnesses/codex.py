"""Codex: everything that differs for it.

Its project (the session cwd up to the nearest .git), roles (config.toml
``[agents.NAME]`` and ``.codex/agents``, layer by layer), skills (``.codex`` and
``.agents`` roots, plugins from the cache), its hooks-file and hook-trust checks.
"""
import os

from ..constants import PARTS
from ..files import (ABSENT, display_path, is_file, is_inside, path_kind, plugin_root, read_json,
                     read_tail, read_text, real_path, walk_files, warn)
from . import HARNESSES, Harness
from ..jsontext import json_lines_with, parse_json
from ..lookup import (find_in_tree, folders_to_git_root, key_line_mentions, listed_paths, load_skill,
                      skill_from_text, winners_in_tree)
from ..names import dedupe, split_plugin_name, valid_skill_name
from ..records import Agent, ParseError, Project, Skill, Unreadable
from ..text import escape_attr
from ..toml_subset import (has_briefing_table, parse_briefing_table, parse_codex_config,
                           parse_comment_lists, parse_role_name, parse_wildcard_comment)
from ..yaml_subset import may_spell, meta_value, parse_skill_meta


# Codex takes one context of any size with additionalContextLimit 0; this cap
# only keeps a runaway declaration from flooding the agent.
CODEX_LIMIT = 512 * 1024


CODEX_BUILTIN_ROLES = frozenset(("default", "explorer", "worker"))


def project_root(machine):
    """The nearest ancestor of cwd holding ``.git`` (Codex's default root marker), else cwd."""
    if machine.state.get("project_root") is None:
        folders, found = folders_to_git_root(machine.cwd)
        machine.state["project_root"] = folders[-1] if found else machine.cwd
    return machine.state["project_root"]


def cwd_to_root(machine):
    """Folders from cwd up to the project root, nearest first."""
    root, folder, out = project_root(machine), machine.cwd, []
    while True:
        out.append(folder)
        if folder == root:
            return out
        parent = os.path.dirname(folder)
        if parent == folder:
            return out
        folder = parent


def codex_layers(machine):
    # Precedence: the .codex/ nearest to cwd first, up to the project root; then CODEX_HOME; then /etc/codex.
    return [os.path.join(f, ".codex") for f in cwd_to_root(machine)] + [machine.codex_home, "/etc/codex"]


def codex_skill_roots(machine):
    roots = []
    # Precedence: per folder from cwd up to the project root, .codex/skills before .agents/skills.
    for folder in cwd_to_root(machine):
        roots.append(("project", os.path.join(folder, ".codex", "skills")))
        roots.append(("project", os.path.join(folder, ".agents", "skills")))
    roots += [("user", os.path.join(machine.codex_home, "skills")),
              ("user", os.path.join(machine.home, ".agents", "skills")),
              ("system", os.path.join(machine.codex_home, "skills", ".system")),
              ("admin", "/etc/codex/skills")]
    return roots


def codex_config(machine, layer):
    configs = machine.state.setdefault("codex_config", {})
    if layer not in configs:
        path = os.path.join(layer, "config.toml")
        tables = {}
        try:
            tables = parse_codex_config(read_text(path))
        except Unreadable as exc:
            if exc.reason not in ABSENT:
                warn("%s: %s" % (path, exc.reason))
        except ParseError as exc:
            warn("%s: %s" % (path, exc))
        configs[layer] = tables
    return configs[layer]


def find_codex_project(machine):
    """Codex's project: the session cwd in the payload, and its layers up to the nearest ``.git``.

    Measured on 0.169.0: a shell ``cd`` does not move it (each command is a
    fresh process; the next ``pwd`` prints the session cwd again), and the
    spawn events' payload ``cwd`` stays the session cwd even when a command ran
    with another ``workdir``.
    """
    return Project(project_root(machine), "cwd",
                   "the session cwd (a shell cd does not move it) and the folders above it up to "
                   "the nearest .git", cwd_to_root(machine), ".codex/ and .agents/skills")


def load_codex_role(path, name, declared=False):
    """The role in ``path`` if it is ``name`` (``declared`` roles are named by config.toml)."""
    try:
        text = read_text(path)
    except Unreadable as exc:
        warn("%s: %s" % (path, exc.reason))
        return Agent("codex", name, path, error="cannot read role file: %s" % exc.reason) if declared else None
    if not declared:
        if not may_spell(text, name):
            return None
        try:
            if parse_role_name(text) != name:
                return None
        except ParseError as exc:
            if not may_spell(text, "briefing") or not key_line_mentions(text.split("\n"), "name", "=", name):
                return None  # whatever its name, it declares nothing, or it is not this role
            # It may be this role, and it may declare: say so rather than stay silent.
            return Agent("codex", name, path, error="cannot read the role's name: %s" % exc)
    return codex_role_from_text("codex", name, path, text)


def codex_role_from_text(harness, name, path, text):
    try:
        declared = parse_comment_lists(text)
        skills, files = declared["skills"], declared["files"]
        wildcard = parse_wildcard_comment(text) is not False
    except ParseError as exc:
        return Agent(harness, name, path, error="cannot read the briefing comment: %s" % exc)
    legacy = False
    if has_briefing_table(text):
        legacy = True
        try:
            table = parse_briefing_table(text)
        except ParseError as exc:
            return Agent(harness, name, path, legacy=True,
                         error="cannot read the [briefing] table: %s" % exc)
        skills = dedupe((skills or []) + (table or []))
    return Agent(harness, name, path, skills=dedupe(skills), legacy=legacy, wildcard_rules=wildcard,
                 files=dedupe(files))


def codex_declared_roles(machine, layer):
    """{name: role file} from ``[agents.<name>] config_file`` in a layer's config.toml."""
    roles = {}
    for table, values in codex_config(machine, layer).items():
        if len(table) == 2 and table[0] == "agents" and isinstance(values.get("config_file"), str):
            rel = values["config_file"]
            roles[table[1]] = os.path.normpath(os.path.join(layer, rel))
    return roles


def find_codex_role(machine, agent_type):
    """The role file Codex would load for ``agent_type``, as an Agent, or None."""
    if not isinstance(agent_type, str) or not agent_type:
        return None
    walk = agent_type not in CODEX_BUILTIN_ROLES  # as for Claude Code's built-in types
    for layer in codex_layers(machine):
        # Within a layer a role declared in config.toml wins over a file under agents/.
        declared = codex_declared_roles(machine, layer).get(agent_type)
        if declared:
            return load_codex_role(declared, agent_type, declared=True)
        role = find_in_tree(os.path.join(layer, "agents"), agent_type, ".toml", load_codex_role, walk)
        if role is not None:
            return role
    return None


def codex_plugin_roots(machine, plugin):
    """Installed, enabled Codex plugins called ``plugin``: [(marketplace, version root)]."""
    out = []
    config = codex_config(machine, machine.codex_home)
    cache = os.path.join(machine.codex_home, "plugins", "cache")
    for table, values in sorted(config.items()):
        if len(table) != 2 or table[0] != "plugins" or values.get("enabled") is not True:
            continue
        name, at, marketplace = table[1].partition("@")
        if name != plugin or not at or not valid_skill_name(marketplace):
            continue
        versions = []
        try:
            for entry in os.scandir(os.path.join(cache, marketplace, plugin)):
                if not entry.name.startswith(".") and entry.is_dir():
                    versions.append((entry.stat().st_mtime, entry.name, entry.path))
        except OSError:
            pass
        if versions:
            # Codex copies a plugin into <version>/ when it installs or upgrades it and loads
            # that copy; older folders can linger and version strings need not sort, so the
            # most recently installed folder is the one Codex loads.
            out.append((marketplace, max(versions)[2]))
    return out


# How deep below a skill folder Codex still finds a SKILL.md (measured on 0.169.0: a SKILL.md six
# folders below a root is listed, seven is not).
CODEX_SKILL_DEPTH = 6


def resolve_codex_skill(machine, name, source):
    """The SKILL.md Codex calls ``name``, as a Skill.

    Measured on 0.169.0 (docs/codex.md, "How Codex names a skill"): Codex finds
    every SKILL.md up to CODEX_SKILL_DEPTH folders below a root (hidden folders
    skipped, links followed) and names it by its frontmatter ``name`` (its folder's
    name without one), prefixed ``NS:`` when the nearest folder above it, on its
    real path, holding a plugin manifest gives a namespace (codex_namespace:
    ``~/.agents/skills/superpowers`` linked to a plugin's ``skills/`` lists
    ``superpowers:brainstorming``). A plugin's skills are ``plugin:NAME`` by the
    same frontmatter name, found in the folders its manifest lists (or
    ``skills/``) and in ``.codex-plugin/migrated-command-skills/``, where Codex
    turns its commands into skills at install. The folder named after the skill
    is tried first, and is taken when its name agrees; the index of a whole root
    is read only on a miss, once per payload.
    """
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")
    unusable, near = None, []
    for path, origin, expect, in_root in codex_skill_candidates(machine, name, plugin, skill):
        kind = path_kind(path)
        if kind != "file":
            if unusable is None and kind and expect is not None:
                unusable = Skill(name, source, path=path, origin=origin,
                                 problem="SKILL.md at %s is not a regular file" % path)
            continue
        try:
            text = read_text(path)
        except Unreadable:
            if expect is None or os.path.basename(os.path.dirname(path)) == expect:
                return load_skill(name, source, path, origin)  # says why it cannot be used
            continue
        found = skill_from_text(name, source, path, origin, text)
        if expect is not None:
            own = codex_skill_name(found.meta, path)
            space = in_root and codex_namespace(machine, machine.real_path(os.path.dirname(path)))
            if own != expect or space:
                # Codex calls it otherwise: the doctor says how, for a name that then misses.
                called = "%s:%s" % (space, own) if space else (plugin + ":" + own if plugin else own)
                near.append((display_path(path), "Codex calls it %s" % called))
                continue
        return found
    missing = Skill(name, source, problem="unknown skill")
    missing.passed = near
    return unusable or missing


def codex_skill_candidates(machine, name, plugin, skill):
    """(path, origin, expect, in_root): where Codex may call a skill ``name``, in order.

    ``expect`` is the name a folder guess must have itself (None: an index entry,
    already named ``name``); ``in_root``: it must not be under a namespace either.
    ``plugin:skill`` is first the installed plugin's, then a namespaced skill of a
    root (which comes first when both exist was not measured: Codex lists both).
    """
    roots = machine.live("codex", (lambda: codex_skill_roots(machine)))
    if plugin is not None:
        for marketplace, root in codex_plugin_roots(machine, plugin):
            origin = "plugin %s@%s" % (plugin, marketplace)
            dirs = codex_plugin_skill_dirs(machine, root)
            for folder in dirs:
                yield os.path.join(folder, skill, "SKILL.md"), origin, skill, False
                yield os.path.join(folder, "SKILL.md"), origin, skill, False  # a listed skill folder
            for folder in dirs:
                for path in codex_skill_index(machine, folder, False).get(skill, ()):
                    yield path, origin, None, False
    else:
        for origin, root in roots:
            yield os.path.join(root, skill, "SKILL.md"), origin, skill, True
    for origin, root in roots:
        for path in codex_skill_index(machine, root, True).get(name, ()):
            yield path, origin, None, True


def codex_skill_name(meta, path):
    """A SKILL.md's own name to Codex: its frontmatter ``name``, else its folder's name."""
    return meta_value(meta.get("name")) or os.path.basename(os.path.dirname(path))


def codex_skill_files(folder):
    """Every SKILL.md Codex finds below ``folder``, in a stable order (hidden folders skipped,
    links followed once, at most CODEX_SKILL_DEPTH folders down)."""
    out, seen = [], set()

    def walk(current, real, depth):
        try:
            entries = sorted((e for e in os.scandir(current) if not e.name.startswith(".")),
                             key=lambda e: e.name)
        except (OSError, ValueError):
            return
        for entry in entries:
            if entry.name == "SKILL.md":
                out.append(entry.path)
        if depth >= CODEX_SKILL_DEPTH:
            return
        for entry in entries:
            try:
                if not entry.is_dir():
                    continue
                # A plain folder's real path is its parent's plus its name: only a link is resolved.
                below = real_path(entry.path) if entry.is_symlink() else os.path.join(real, entry.name)
            except OSError:
                continue
            if below not in seen:
                seen.add(below)
                walk(entry.path, below, depth + 1)

    top = real_path(folder)
    seen.add(top)
    walk(folder, top, 0)
    return out


def codex_skill_index(machine, folder, namespaced):
    """{name Codex gives it: [SKILL.md paths]} for ``folder``, read once per payload.

    ``namespaced``: a root's skills, whose names take the namespace above them; a
    plugin's own folders are named by the plugin (its caller adds that)."""
    def build():
        index = {}
        for path in codex_skill_files(folder):
            if path_kind(path) != "file":
                continue
            try:
                own = codex_skill_name(parse_skill_meta(read_text(path)), path)
            except (Unreadable, ParseError):
                continue
            if namespaced:
                space = codex_namespace(machine, machine.real_path(os.path.dirname(path)))
                own = "%s:%s" % (space, own) if space else own
            index.setdefault(own, []).append(path)
        return index
    return machine.memo(("codex skills", folder, namespaced), build)


def codex_namespace(machine, folder):
    """The namespace Codex puts before the names of the skills in ``folder`` (a real path), or None.

    Measured on 0.169.0: the nearest folder, from the skill's own up to the
    filesystem root, that holds ``.codex-plugin/plugin.json`` or (else)
    ``.claude-plugin/plugin.json`` gives it: that manifest's ``name``, or the
    folder's name without one. It is looked for above the project and above
    $HOME alike, as Codex does. Each folder is asked once per payload.
    """
    climbed = []  # the folders asked, from ``folder`` up: a loop, not a recursion per folder (issue 36)
    while True:
        known, space = machine.known(("codex namespace", folder))
        if known:
            break
        climbed.append(folder)
        space = codex_manifest_namespace(folder)
        if space is not None:
            space = space or None  # a manifest without a name in a root folder: no namespace
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for asked in climbed:
        machine.memo(("codex namespace", asked), lambda: space)
    return space


def codex_manifest_namespace(folder):
    """The namespace the plugin manifest in ``folder`` gives ('' when it gives none), or None without one."""
    for manifest in (".codex-plugin", ".claude-plugin"):
        path = os.path.join(folder, manifest, "plugin.json")
        if is_file(path):
            data = read_json(path)
            named = data.get("name") if isinstance(data, dict) else None
            return named if isinstance(named, str) and named else os.path.basename(folder)
    return None


def codex_plugin_skill_dirs(machine, root):
    """The folders whose skills an installed Codex plugin exposes, read once per payload.

    Measured on 0.169.0: the ``skills`` of ``.codex-plugin/plugin.json`` (or, without
    that file, of ``.claude-plugin/plugin.json``) replace ``skills/``: a manifest
    listing ``./skills/a`` exposes ``a`` alone, and a marketplace entry's list,
    which Codex writes into the synthesized ``.codex-plugin/plugin.json`` of a
    shared-root plugin, does the same. ``.codex-plugin/migrated-command-skills/``
    holds its commands, turned into skills ``source-command-<name>`` at install
    (those with a ``description:``). A path leaving the plugin is not read.
    """
    def build():
        manifest = os.path.join(root, ".codex-plugin", "plugin.json")
        if not is_file(manifest):
            manifest = os.path.join(root, ".claude-plugin", "plugin.json")
        data = read_json(manifest)
        listed = data.get("skills") if isinstance(data, dict) else None
        if isinstance(listed, (str, list)):
            dirs = [folder for _, folder in listed_paths(root, listed)]
        else:
            dirs = [os.path.join(root, "skills")]
        return dirs + [os.path.join(root, ".codex-plugin", "migrated-command-skills")]
    return machine.memo(("codex plugin skill dirs", root), build)


def all_codex_roles(machine, every=False):
    """Every declaring Codex role that wins its name: (Agent, None) or (None, (path, why)).

    ``every`` also yields the roles that declare nothing (rules may brief them).
    """
    seen = set()
    for layer in codex_layers(machine):
        # Within a layer a role declared in config.toml wins over a file under agents/.
        found = [load_codex_role(path, name, declared=True)
                 for name, path in sorted(codex_declared_roles(machine, layer).items())]
        root = os.path.join(layer, "agents")
        named = []
        for path in walk_files(root, ".toml"):
            try:
                text = read_text(path)
            except Unreadable as exc:
                yield None, (path, "cannot read role file: %s" % exc.reason)
                continue
            try:
                name = parse_role_name(text)
            except ParseError as exc:
                if may_spell(text, "briefing"):
                    yield None, (path, "cannot read role file: %s" % exc)
                continue
            if name:
                named.append((path, name, text))
        found += [codex_role_from_text("codex", name, path, text)
                  for name, path, text in winners_in_tree(root, (".toml",), named, CODEX_BUILTIN_ROLES)]
        for role in found:
            if role.name in seen:
                continue
            seen.add(role.name)
            if role.declares or every:
                yield role, None


def codex_role_names(machine):
    return [role for role, _ in all_codex_roles(machine, every=True) if role is not None]


def codex_skill_places(skill):
    return ".codex/skills/%s/ or .agents/skills/%s/ in the project, or $CODEX_HOME/skills/%s/" % (
        skill, skill, skill)


CODEX_HOOKS_DEFAULT = "hooks/hooks.json"  # what Codex reads when the manifest names no file


def codex_hooks_file(root):
    """The hooks file Codex reads for the plugin at ``root``, relative to it, or None.

    A manifest ``hooks`` path replaces the auto-discovered hooks/hooks.json
    (facts/codex.md §3.1, measured 2026-12-01); without one Codex reads that file.
    None when the manifest's path leaves the plugin.
    """
    data = read_json(os.path.join(root, ".codex-plugin", "plugin.json"))
    rel = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(rel, str) or not rel.strip():
        return CODEX_HOOKS_DEFAULT
    norm = os.path.normpath(rel.replace("\\", "/"))
    if os.path.isabs(norm) or norm == ".." or norm.startswith(".." + os.sep) or "\0" in norm:
        return None
    return norm.replace(os.sep, "/")


# The events that bring a compacted child's briefing back (see codex_compacted).
CODEX_AGAIN_EVENTS = ("PostToolUse", "UserPromptSubmit")


def codex_hooks_check(root):
    """The hooks file .codex-plugin/plugin.json names: one process per event, no --part.

    Codex delivers a context of any size from one handler (additionalContextLimit 0),
    so each of SessionStart, PreToolUse (the spawn_agent guard) and SubagentStart
    needs exactly one briefing handler; every extra one is a process per spawn. So do
    PostToolUse (every tool) and UserPromptSubmit, which deliver it again after a
    compaction, and run on every tool call and turn.
    """
    from ..hooks_files import not_this_copy, one_handler_each, read_hooks  # the doctor's checks only
    import re
    if not is_file(os.path.join(root, ".codex-plugin", "plugin.json")):
        return not_this_copy("hooks.codex.json", "Codex", ".codex-plugin/plugin.json")
    rel = codex_hooks_file(root)
    if rel is None:
        return {"name": "hooks.codex.json", "status": "FAIL",
                "detail": "the hooks path in %s leaves the plugin" % os.path.join(
                    root, ".codex-plugin", "plugin.json")}
    if rel == CODEX_HOOKS_DEFAULT:
        return {"name": "hooks.codex.json", "status": "WARN",
                "detail": ".codex-plugin/plugin.json names no hooks file, so Codex reads %s: it "
                          "briefs, but starts %d processes per spawn instead of one" % (rel, PARTS)}
    path = os.path.join(root, rel)
    try:
        hooks = read_hooks(path)
    except (Unreadable, ValueError, AttributeError) as exc:
        return {"name": "hooks.codex.json", "status": "FAIL", "detail": "cannot read %s: %s" % (path, exc)}
    problems = []
    found = one_handler_each(hooks, ("SubagentStart", "SessionStart", "PreToolUse") + CODEX_AGAIN_EVENTS,
                             problems, " (it delivers the whole briefing)")
    for event, (matcher, hook) in found.items():
        if event == "PostToolUse" and matcher not in (None, "", "*", ".*"):
            # A compacted child's next tool call, whichever tool it is, brings its briefing back.
            problems.append("PostToolUse needs the handler for every tool (matcher \"*\"), found %r" % matcher)
        if event == "PreToolUse":
            # Codex matches the whole tool name (measured on 0.169.0: "spawn_agent" and "Agent" do
            # not fire for the multi-agent V2 spawn, "collaborationspawn_agent"), so the guard's
            # matcher must name both spawn tools.
            try:
                missed = [tool for tool in HARNESS.spawn_tools if not (
                    matcher in (None, "", "*") or (isinstance(matcher, str) and re.fullmatch(matcher, tool)))]
            except re.error:
                missed = list(HARNESS.spawn_tools)
            if missed:
                problems.append("PreToolUse needs the guard with a matcher for every spawn tool, "
                                "\"spawn_agent|collaborationspawn_agent\"; %r misses %s" % (
                                    matcher, ", ".join(sorted(missed))))
        elif hook.get("additionalContextLimit") != 0:
            problems.append("%s needs \"additionalContextLimit\": 0 (Codex otherwise sends a preview)"
                            % event)
    return {"name": "hooks.codex.json", "status": "FAIL" if problems else "ok",
            "detail": "; ".join(problems) or "%s registers one handler per event" % rel}


def codex_trust_key_event(event):
    """Codex's trust keys spell events in snake case: SubagentStart -> subagent_start."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(event))


def codex_trust_check(machine):
    """Whether Codex has trusted briefing's hooks, as far as config.toml says.

    Trust keys name the hooks file: ``<plugin>@<marketplace>:<file>:<event>:<group>:<handler>``
    (facts/codex.md §3.1), so trust given to another file does not count.
    """
    from ..hooks_files import read_hooks  # the doctor's checks only
    config = codex_config(machine, machine.codex_home)
    installs = [t[1] for t, v in config.items()
                if len(t) == 2 and t[0] == "plugins" and t[1].startswith("briefing@") and v.get("enabled")]
    if not installs:
        return {"name": "codex-hook-trust", "status": "ok",
                "detail": "briefing is not installed as a Codex plugin here"}
    roots = dict(codex_plugin_roots(machine, "briefing"))
    own = plugin_root()
    untrusted = []
    for plugin in installs:
        # The installed copy says which file Codex reads; without one, this copy says it.
        root = roots.get(plugin.partition("@")[2]) or own
        rel = codex_hooks_file(root) or CODEX_HOOKS_DEFAULT
        trusted = {t[2] for t, v in config.items() if len(t) == 3 and t[:2] == ("hooks", "state")
                   and t[2].startswith("%s:%s:" % (plugin, rel)) and v.get("trusted_hash")}
        try:
            wanted = ["%s:%s:%s:%d:%d" % (plugin, rel, codex_trust_key_event(event), i, j)
                      for event, entries in sorted(read_hooks(os.path.join(root, rel)).items())
                      for _, _, i, j in entries]
        except (Unreadable, ValueError, AttributeError):
            wanted = []
        missing = [key for key in wanted if key not in trusted] if wanted else ([] if trusted else [rel])
        if missing:
            untrusted.append("%s (%s)" % (plugin, ", ".join(k.split(":", 1)[-1] for k in missing)))
    if untrusted:
        return {"name": "codex-hook-trust", "status": "WARN",
                "detail": "Codex has not trusted the hooks of %s: until you do, Codex skips them silently "
                          "and briefing does nothing. Start `codex`, open /hooks and trust them "
                          "(`codex exec` cannot grant trust)." % "; ".join(untrusted)}
    return {"name": "codex-hook-trust", "status": "ok", "detail": "briefing's hooks are trusted"}


# Compaction (facts/compaction.md, measured on 0.169.0): no event fires into a compacted
# child, and its compaction drops every hook context. Its next tool call runs PostToolUse with
# its agent_id and transcript_path = its own rollout, and that context reaches the request
# after the call; a new turn from the parent runs UserPromptSubmit first. The rollout records
# both the compaction and every delivered context before the next hook runs, so whether the
# briefing must come again is read off the rollout's end.
#
# How much of the end: between a compaction and the first hook run after it Codex writes the
# "compacted" line (the summary and the kept user messages: its start is what is found),
# the ContextCompaction item, turn context, the model's next call and, for PostToolUse, that
# call's output, which Codex caps in the rollout (a 3 MB command output: a 66 kB item and a
# 10.7 kB function_call_output). 2 MiB holds that many times over, and one pread of it costs
# a fraction of a millisecond (bench/run "after a compaction" rows).
CODEX_TAIL = 2 * 1024 * 1024


# Top-level JSON structure, never the inside of a string (where every quote is escaped): the
# compaction record itself, and the item Codex completes with it.
CODEX_COMPACTION_MARKS = (b'"type":"compacted"', b'"type":"ContextCompaction"')


def codex_rollout(machine, payload, thread=None):
    """The rollout of the agent a payload is from: its transcript_path, if it is Codex's own.

    It must lie under $CODEX_HOME/sessions and be named after the agent's thread id
    (rollout-<time>-<agent_id>.jsonl; ``thread``: another id, the main session's
    ``session_id``), so a payload cannot point the hook at another file.
    """
    path, agent_id = payload.get("transcript_path"), thread or payload.get("agent_id")
    if not (isinstance(path, str) and isinstance(agent_id, str) and agent_id and path
            and "\0" not in path and os.path.isabs(path)):
        return None
    name = os.path.basename(path)
    if not (name.startswith("rollout-") and name.endswith("-%s.jsonl" % agent_id)) or os.sep in agent_id:
        return None
    sessions = real_path(os.path.join(machine.codex_home, "sessions"))
    real = real_path(path)
    return real if is_inside(real, sessions) and real != sessions else None


def codex_tail(machine, path):
    """The rollout's last CODEX_TAIL bytes, read once per hook run (the briefing's check and the
    loaded skills' both ask), or None."""
    return machine.memo(("codex tail", path), lambda: read_tail(path, CODEX_TAIL))


def codex_compacted(machine, payload, name):
    """Whether the agent's rollout shows a compaction after the last delivery of its briefing."""
    path = codex_rollout(machine, payload)
    if path is None:
        return False
    tail = codex_tail(machine, path)
    if tail is None:
        return False
    at = max(tail.rfind(mark) for mark in CODEX_COMPACTION_MARKS)
    if at < 0:
        return False
    opening = '<briefing agent="%s"' % escape_attr(name)
    for _, line in json_lines_with(tail, b'<briefing agent=\\"', at):
        item = line.get("payload")
        if line.get("type") == "response_item" and isinstance(item, dict) and item.get("role") == "developer":
            texts = [c.get("text") for c in item.get("content") or () if isinstance(c, dict)]
            if any(isinstance(t, str) and t.startswith(opening) for t in texts):
                return False  # delivered since: a briefing or its abort, as a hook context
    return True


# Skills a thread loaded while it worked (issue 45, facts/invoked-skills.md; measured on 0.169.0,
# and on 0.171.0 by the facts). Codex has no skill tool: the model reads a SKILL.md with a shell
# command, or the user names ``$skill`` and Codex injects the file as a user message
# ``<skill>\n<name>N</name>\n<path>P</path>\n<the file>\n</skill>``. A compaction drops both,
# and SessionStart(compact) runs with the rollout already holding the ``compacted`` line and,
# before it, the call with its output, or the <skill> message. What was loaded is read there,
# and the file itself from the skill root it lies in: the rollout's copy of a read is Codex's
# capped tool output, not necessarily whole.
#
# How much of the end: 16 MiB is many context windows' worth of rollout (Codex caps what it
# records of a tool output, see CODEX_TAIL), read once per compaction, not per tool call.
# A skill loaded further back, and not loaded again since, is not seen (docs/loaded-skills.md).
CODEX_LOADED_TAIL = 16 * 1024 * 1024

# What prints a file, or a part of it: a SKILL.md given to one of these was read. A command that
# only names one (ls, grep, test -f) loaded nothing.
CODEX_READERS = frozenset(("cat", "head", "tail", "sed", "nl", "less", "more", "bat", "batcat", "awk",
                           "tac", "view", "Get-Content", "gc", "type"))
# Codex's shell tools: ``exec_command {cmd, workdir}`` (0.169.0, measured), and the older
# ``shell``/``local_shell`` ``{command: [argv]}``.
CODEX_SHELL_TOOLS = frozenset(("exec_command", "shell", "shell_command", "local_shell"))
CODEX_SKILL_MESSAGE = "<skill>\n<name>"


def codex_loaded(machine, payload):
    """``Harness.loaded_skills`` for Codex: a loaded.Found at the moment a compacted thread's loaded
    skills come back, else None.

    The main thread: its SessionStart(compact) (a resumed session too: Codex appends to the same
    rollout). A subagent: Codex sends it no SessionStart (facts/compaction.md), so its first
    PostToolUse or UserPromptSubmit after the compaction, as for its briefing (``codex_compacted``),
    and joined to it (handlers.with_loaded).
    """
    event = payload.get("hook_event_name")
    if event == "SessionStart":
        if payload.get("source") != "compact" or payload.get("agent_id"):
            return None
    elif event not in CODEX_AGAIN_EVENTS or not payload.get("agent_id") or not codex_loaded_due(machine, payload):
        return None
    key = ("codex loaded", repr(payload.get("transcript_path")), repr(payload.get("session_id")),
           repr(payload.get("agent_id")))  # one per thread
    return machine.memo(key, lambda: codex_loaded_found(machine, payload))


# How loaded.LOADED_HEADER begins (a test holds them together): spelled here so that a compacted
# child's tool calls, which run this check, do not import loaded.py.
CODEX_LOADED_MARK = b"You loaded the skills below earlier in this session"


def codex_loaded_due(machine, payload):
    """Whether a subagent's tool call or turn is its first since its last compaction: the rollout's
    end holds a compaction, no loaded skills given back after it, and no earlier tool call after it
    (this PostToolUse's own call is there already), so a child that loaded nothing is asked once."""
    path = codex_rollout(machine, payload)
    tail = codex_tail(machine, path) if path else None
    if not tail:
        return False
    at = max(tail.rfind(mark) for mark in CODEX_COMPACTION_MARKS)
    if at < 0:
        return False
    for _, line in json_lines_with(tail, CODEX_LOADED_MARK, at):
        item = line.get("payload")
        if line.get("type") == "response_item" and isinstance(item, dict) and item.get("role") == "developer":
            return False  # given back since, as a hook context
    calls = sum(1 for _, line in json_lines_with(tail, b'"type":"function_call"', at)
                if (line.get("payload") or {}).get("type") == "function_call")
    return calls <= (1 if payload.get("hook_event_name") == "PostToolUse" else 0)


def codex_loaded_payloads(machine, session):
    """[(who, payload)] the doctor's ``--loaded`` asks ``codex_loaded`` with: the main thread of
    session ``session`` (None: the newest of this project), as at its next compaction."""
    from ..audit.codex import sessions
    found = [s for s in sessions(machine, 0) if session in (None, s.id)][:1]
    out = []
    for one in found:
        for path, meta in one.extra:
            if not meta.get("parent_thread_id") and isinstance(meta.get("id"), str):
                out.append(("session %s (main thread)" % meta["id"], {
                    "hook_event_name": "SessionStart", "source": "compact", "session_id": meta["id"],
                    "transcript_path": path, "next_compaction": True}))
    return out


def codex_loaded_found(machine, payload):
    loads = codex_loaded_skills(machine, payload)
    if not loads:
        return None
    from ..loaded import Found, Loaded  # only once something was loaded
    agent = payload.get("agent_type") if payload.get("agent_id") else None
    agent = agent if isinstance(agent, str) and agent else None
    # The main thread is briefed by nothing; a role's declared skills its briefing gives back.
    return Found([Loaded(skill.name, text=skill.body, path=skill.path, order=order, event=how)
                  for order, skill, how in loads], agent=agent, briefed=None if agent else set())


def codex_loaded_skills(machine, payload):
    """[(order, Skill, how)]: the skills the payload's thread loaded before its last compaction,
    oldest first, each at its latest load; [] when its rollout shows no compaction.

    ``how`` is ``a read of its SKILL.md`` (a shell command printed it) or ``$skill`` (Codex
    injected it). Only a SKILL.md under a root Codex itself searches counts (``codex_loaded_skill``);
    one that the compaction kept (its <skill> message in ``replacement_history``) is held already.
    """
    thread = payload.get("agent_id") or payload.get("session_id")
    path = codex_rollout(machine, payload, thread if isinstance(thread, str) else None)
    tail = read_tail(path, CODEX_LOADED_TAIL) if path else None
    if not tail:
        return []
    if payload.get("next_compaction") is True:  # the doctor's --loaded: as if it compacted now
        at = len(tail)
    else:
        at = tail.rfind(b'"type":"compacted"')
        if at < 0:
            return []
        at = tail.rfind(b"\n", 0, at) + 1
    held = set()
    for _, line in json_lines_with(tail, b'"type":"compacted"', at):
        kept = (line.get("payload") or {}).get("replacement_history") if line.get("type") == "compacted" else None
        for item in kept if isinstance(kept, list) else ():
            text = codex_skill_message(item)
            if text:
                held.add(codex_mentioned_path(text))
        break
    loads, calls = [], {}
    for offset, line in json_lines_with(tail[:at], b"SKILL.md"):
        item = line.get("payload")
        if line.get("type") != "response_item" or not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" and item.get("name") in CODEX_SHELL_TOOLS:
            paths = codex_read_paths(machine, item.get("arguments"), machine.cwd)
            call_id = item.get("call_id")
            if paths and isinstance(call_id, str) and call_id.isprintable() and not set('"\\') & set(call_id):
                calls[call_id] = (offset, paths)
        else:
            text = codex_skill_message(item)
            mentioned = codex_mentioned_path(text) if text else None
            if mentioned:
                loads.append((offset, mentioned, "$skill"))
    for call_id, (offset, paths) in calls.items():
        # The output need not name the file: it is found by its call's id.
        for _, line in json_lines_with(tail[:at], b'"call_id":"%s"' % call_id.encode("utf-8"), offset):
            item = line.get("payload")
            if isinstance(item, dict) and item.get("type") == "function_call_output" \
                    and item.get("call_id") == call_id:
                if codex_command_succeeded(item.get("output")):
                    loads += [(offset, p, "a read of its SKILL.md") for p in paths]
                break
    out, seen = [], set(held)
    for offset, found, how in sorted(loads, key=lambda load: -load[0]):
        if found in seen:
            continue
        seen.add(found)
        skill = codex_loaded_skill(machine, found)
        if skill is not None:
            out.append((offset, skill, how))
    return out[::-1]


def codex_skill_message(item):
    """The text of a <skill> user message Codex injected for a ``$skill`` mention, or None."""
    if not isinstance(item, dict) or item.get("type", "message") != "message" or item.get("role") != "user":
        return None
    content = item.get("content")
    texts = [c.get("text") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
    for text in texts:
        if isinstance(text, str) and text.startswith(CODEX_SKILL_MESSAGE):
            return text
    return None


def codex_mentioned_path(text):
    """The absolute SKILL.md path of a <skill> message, or None."""
    start = text.find("<path>")
    end = text.find("</path>", start)
    path = text[start + len("<path>"):end] if 0 <= start < end else ""
    if not path or "\0" in path or "\n" in path or not os.path.isabs(path):
        return None
    return os.path.normpath(path)


def codex_command_succeeded(output):
    """Whether a shell call's recorded output says it ran to exit code 0 (or says nothing of it)."""
    if not isinstance(output, str):
        return False
    at = output.find("Process exited with code ")
    if at < 0:
        return True
    return output[at + len("Process exited with code "):].split("\n", 1)[0].strip() == "0"


def codex_read_paths(machine, arguments, cwd):
    """The SKILL.md files a shell call's arguments print, as absolute paths ([] for any other call)."""
    try:
        args = parse_json(arguments) if isinstance(arguments, str) else None
    except ValueError:
        return []
    if not isinstance(args, dict):
        return []
    command, script = args.get("cmd", args.get("command")), None
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        if len(command) >= 3 and command[-2] in ("-c", "-lc"):
            script = command[-1]
        else:
            segments = [command]
    elif isinstance(command, str):
        script = command
    else:
        return []
    if script is not None:
        segments = codex_shell_segments(script)
    workdir = args.get("workdir")
    base = os.path.join(cwd, workdir) if isinstance(workdir, str) and workdir and "\0" not in workdir else cwd
    out = []
    for words in segments:
        while words and "=" in words[0] and not words[0].startswith("="):
            words = words[1:]  # VAR=value before the program
        if not words or os.path.basename(words[0]) not in CODEX_READERS:
            continue
        for word in words[1:]:
            if os.path.basename(word) != "SKILL.md" or "\0" in word:
                continue
            if word == "~" or word.startswith("~/"):
                word = os.path.join(machine.home, word[2:])
            out.append(os.path.normpath(os.path.join(base, word)))
    return out


def codex_shell_segments(script):
    """A shell script's simple commands as word lists (split at pipes, ``;``, ``&&``, ``||``)."""
    import shlex  # a compaction's path only
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segments, words = [], []
    try:
        for token in lexer:
            if token and all(c in "();<>|&" for c in token):
                segments.append(words)
                words = []
            else:
                words.append(token)
    except ValueError:
        return [script.split()]  # unbalanced quotes: the words as they stand
    return segments + [words]


def codex_loaded_roots(machine):
    """(origin, root, plugin) per folder whose SKILL.md files Codex lists: its skill roots, then the
    skill folders of the enabled plugins (their skills are ``plugin:name``)."""
    def build():
        roots = [(origin, root, None) for origin, root in codex_skill_roots(machine)]
        for table, values in sorted(codex_config(machine, machine.codex_home).items()):
            if len(table) == 2 and table[0] == "plugins" and values.get("enabled") is True:
                plugin = table[1].partition("@")[0]
                for marketplace, root in codex_plugin_roots(machine, plugin):
                    roots += [("plugin %s@%s" % (plugin, marketplace), folder, plugin)
                              for folder in codex_plugin_skill_dirs(machine, root)]
        return roots
    return machine.memo(("codex loaded roots",), build)


def codex_loaded_skill(machine, path):
    """The Skill Codex lists at ``path`` (absolute, normalised), named as Codex names it, or None
    when no root Codex searches holds it there: hidden folders are skipped, and no deeper than
    CODEX_SKILL_DEPTH, as Codex's own listing (``codex_skill_files``)."""
    if os.path.basename(path) != "SKILL.md":
        return None
    for origin, root, plugin in codex_loaded_roots(machine):
        if not is_inside(path, root) or path == root:
            continue
        folders = os.path.relpath(path, os.path.abspath(root)).split(os.sep)[:-1]
        if len(folders) > CODEX_SKILL_DEPTH or any(f.startswith(".") for f in folders):
            continue
        if path_kind(path) != "file":
            return None
        try:
            text = read_text(path)
            own = codex_skill_name(parse_skill_meta(text), path)
        except (Unreadable, ParseError):
            return None
        if plugin:
            name = "%s:%s" % (plugin, own)
        else:
            space = codex_namespace(machine, machine.real_path(os.path.dirname(path)))
            name = "%s:%s" % (space, own) if space else own
        return skill_from_text(name, "loaded", path, origin, text)
    return None


# Codex 0.169.0 puts the AGENTS.md of the project's folders (the cwd up to the nearest .git) into
# every agent's first request, its own roles and the built-in worker, explorer and default alike
# (measured, docs/files.md). Only up to project_doc_max_bytes (32 KiB by default): a longer one,
# or one beside an AGENTS.override.md (which Codex reads instead), briefing delivers itself.
CODEX_PROJECT_DOC_BYTES = 32 * 1024


def codex_loads_file(machine, agent, path, session):
    """Why Codex already loads the project file ``path`` into ``agent``, or None (briefing delivers it)."""
    from ..standing import names_in
    if not any(rel == "AGENTS.md" for rel in names_in(machine, path, machine.project("codex").folders)):
        return None
    if os.path.lexists(os.path.join(os.path.dirname(path), "AGENTS.override.md")):
        return None
    try:
        if os.stat(path).st_size > CODEX_PROJECT_DOC_BYTES:
            return None
    except OSError:
        return None
    return "Codex loads AGENTS.md into every agent"


# README.md, Install; then the hooks are trusted in interactive codex (/hooks).
CODEX_INSTALL = "codex plugin marketplace add %s && codex plugin add briefing@briefing, then trust its hooks in codex (/hooks)"


def codex_installed_check(machine):
    """The doctor's ``installed`` check: briefing added and enabled in config.toml, the copy Codex
    loads from its plugin cache (codex_plugin_roots), and its hooks trusted (codex_trust_check)."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    config = codex_config(machine, machine.codex_home)
    added = sorted(t[1] for t in config if len(t) == 2 and t[0] == "plugins" and t[1].startswith("briefing@"))
    fix = CODEX_INSTALL % checkout()
    if not added:
        return not_installed("codex", "Codex", fix)
    if not any(config[("plugins", p)].get("enabled") is True for p in added):
        return result("codex", "WARN", "briefing is added (%s) but not enabled in %s: set enabled = true in its "
                      "[plugins.\"%s\"] table, or codex plugin add %s" % (
                          ", ".join(added), display_path(os.path.join(machine.codex_home, "config.toml")),
                          added[0], added[0]))
    roots = codex_plugin_roots(machine, "briefing")
    if not roots:
        return result("codex", "FAIL", "%s is enabled, but Codex has no copy of it in %s: it loads nothing of "
                      "it; %s" % (", ".join(added), display_path(os.path.join(machine.codex_home, "plugins", "cache")),
                                  fix))
    verdict = judge_copy("codex", "Codex", roots[0][1], codex_hooks_check, fix)
    trust = codex_trust_check(machine)
    if verdict["status"] == "ok" and trust["status"] != "ok":
        return result("codex", trust["status"], "installed (%s), but %s" % (display_path(roots[0][1]), trust["detail"]))
    return verdict


HARNESS = Harness(
    HARNESSES.record("codex"),
    find_project=find_codex_project,
    find_agent=find_codex_role,
    all_agents=all_codex_roles,
    resolve_skill=resolve_codex_skill,
    skill_places=codex_skill_places,
    # Codex takes one context of any size with additionalContextLimit 0.
    part_budget=None, whole_limit=CODEX_LIMIT,
    # The file .codex-plugin/plugin.json names, one handler per event (codex.md 3.1).
    hooks_check=codex_hooks_check,
    trust_check=codex_trust_check,
    installed_check=codex_installed_check,
    skill_roots=codex_skill_roots,
    preflight_warns=True,
    # An omitted agent_type spawns "default" (codex.md 2.4).
    builtin_agents=CODEX_BUILTIN_ROLES, default_agent="default",
    agent_names=codex_role_names,
    compacted=codex_compacted,
    loads_file=codex_loads_file,
    loaded_skills=codex_loaded, loaded_payloads=codex_loaded_payloads,
    redelivery="at spawn (SubagentStart), and again after every compaction of the agent: at its next "
               "tool call (PostToolUse) or its next turn (UserPromptSubmit), whichever comes first, "
               "as its rollout shows")
