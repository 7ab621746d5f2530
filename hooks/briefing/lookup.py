"""Discovery that more than one harness shares: agent files and skill candidates.

The lookup order inside one folder of agent files (the fast path by file name,
then the walk), loading a Markdown agent with frontmatter, the first usable of
a list of SKILL.md candidates, and the skill folders of a plugin.
"""
import os

from .files import (is_dir, is_file, path_kind, read_json, read_text, top_level_files, walk_files,
                    warn)
from .names import dedupe, valid_skill_name
from .records import Agent, ParseError, Project, Skill, Unreadable
from .yaml_subset import (frontmatter_name, may_spell, meta_value, parse_frontmatter, parse_skill_meta,
                          skill_meta_of, split_frontmatter)


def plugin_skill_dirs(root, manifest_dir=".claude-plugin"):
    """Folders in which a plugin's skills live: ``skills/`` plus the manifest's ``skills`` paths.

    Yields (folder, is_single_skill). A manifest path is one skill folder or a
    folder of them. The line is drawn at the manifest's own words: a path
    that leaves the plugin root (absolute, or climbing with ``..``) is ignored,
    because a plugin must not be able to point us at arbitrary files. A
    symlinked skill folder *inside* the root is followed: people link their
    skills in, and the link was placed by whoever controls that root.
    """
    yield os.path.join(root, "skills"), False
    data = read_json(os.path.join(root, manifest_dir, "plugin.json"))
    for norm, folder in listed_paths(root, data.get("skills") if isinstance(data, dict) else None):
        if norm not in (".", "skills"):
            yield folder, is_file(os.path.join(folder, "SKILL.md"))


def listed_paths(root, paths, what="manifest skills path"):
    """[(normalised path, folder)] of the paths a manifest lists (one string or a list of them).

    A path that leaves ``root`` (absolute, climbing with ``..``) is dropped with a
    warning: a manifest must not point the hook at files outside its own folder.
    """
    if isinstance(paths, str):
        paths = [paths]
    out = []
    for rel in paths if isinstance(paths, list) else ():
        if not isinstance(rel, str) or not rel.strip():
            continue
        norm = relative_inside(rel)
        if norm is None:
            warn("%s: %s %r leaves the plugin root; ignored" % (root, what, rel))
            continue
        out.append((norm, os.path.join(root, norm)))
    return out


def relative_inside(rel):
    """``rel`` normalised, or None when it leaves the folder it is relative to (absolute, ``..``, NUL)."""
    norm = os.path.normpath(rel.replace("\\", "/"))
    if os.path.isabs(norm) or norm == ".." or norm.startswith(".." + os.sep) or "\0" in norm:
        return None
    return norm


def folders_to_git_root(folder):
    """(``folder`` and each one above it up to the nearest with a ``.git``, whether one was found)."""
    folders, current = [], folder
    while True:
        folders.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            return folders, True
        parent = os.path.dirname(current)
        if parent == current:
            return folders, False
        current = parent


def project_from_env(machine, variable, where, reads):
    """The Project of a harness that names its folder to every hook in ``variable`` and reads that
    folder alone, not the ones above it (Gemini CLI, Qwen Code); else the cwd, taken as that folder.
    ``where`` says what the folder is ("the folder Gemini CLI was started in")."""
    env_dir = machine.env.get(variable)
    if env_dir and os.path.isabs(env_dir) and is_dir(env_dir):
        folder, source, why = os.path.abspath(env_dir), variable, "$%s, %s" % (variable, where)
    else:
        folder, source, why = machine.cwd, "cwd", "%s is not set; the cwd, taken as %s" % (variable, where)
    return Project(folder, source, why, [folder], reads)


def extension_enabled(enablement, name, folders):
    """Whether extension ``name`` is on in the folder ``folders`` spell (as written, and resolved):
    the last of its override rules that matches one of them wins.

    ``enablement`` is an ``extension-enablement.json`` of Gemini CLI or of its fork Qwen Code,
    ``{name: {"overrides": [rule]}}``: a rule is a folder, ``!`` in front to disable, ``*`` at
    the end for its sub-folders too (ExtensionEnablementManager, Override.fromFileRule).
    """
    entry = enablement.get(name) if isinstance(enablement, dict) else None
    rules = entry.get("overrides") if isinstance(entry, dict) else None
    spelled = []
    for folder in folders:
        here = folder.replace("\\", "/").strip("/")
        spelled.append("/" + here + "/" if here else "/")
    enabled = True
    for rule in rules if isinstance(rules, list) else ():
        if not isinstance(rule, str):
            continue
        disable = rule.startswith("!")
        base = rule[1:] if disable else rule
        subfolders = base.endswith("*")
        base = base.rstrip("*").replace("\\", "/")
        base = "/" + base.strip("/") + "/" if base.strip("/") else "/"
        if any(here == base or (subfolders and here.startswith(base)) for here in spelled):
            enabled = not disable
    return enabled


# -- agent lookup -------------------------------------------------------------

def load_md_agent(path, name, harness):
    """The agent in ``path`` if its frontmatter name is ``name`` (None otherwise).

    A Markdown agent with YAML frontmatter: Claude Code's format, which Copilot
    CLI reads too and also names by frontmatter ``name`` (``harness`` says whose
    agent it is).
    """
    try:
        text = read_text(path)
    except Unreadable as exc:
        warn("%s: %s" % (path, exc.reason))
        return None
    if not may_spell(text, name):
        return None
    if text.lstrip("\ufeff").startswith("---") and split_frontmatter(text)[0] is None:
        warn("%s: frontmatter opens with --- but never closes; Claude Code cannot read this agent" % path)
        return None
    try:
        fm = parse_frontmatter(text)
    except ParseError as exc:
        # The name may be unreadable too: a raw look at it decides between "NOT briefed" and silence.
        if not (may_spell(text, "briefing") or may_spell(text, "skills")):
            return None  # whatever its name, it declares nothing
        if not key_line_mentions(split_frontmatter(text)[0] or (), "name", ":", name):
            return None
        return Agent(harness, name, path, error="cannot read frontmatter: %s" % exc)
    if fm.name != name:
        return None
    return Agent(harness, name, path, skills=dedupe(fm.skills), native=dedupe(fm.native),
                 wildcard_rules=fm.wildcard_rules, files=dedupe(fm.files))


def key_line_mentions(lines, key, separator, name):
    """A raw look, for a file the parser cannot read: does a ``key`` line (or the next) spell ``name``?

    Only used to decide between "NOT briefed" and silence for a file that
    failed to parse, so it errs towards saying something.
    """
    for index, line in enumerate(lines):
        head, sep, value = line.partition(separator)
        if sep and head.strip().strip("\"'") == key:
            nearby = value + "".join(lines[index + 1:index + 3])
            if may_spell(nearby, name):
                return True
    return False


def lookup_order(root, name, fast, walked):
    """The order in which one folder's files are tried for ``name``: precedence, stated once.

    ``<root>/<name><suffix>`` for each suffix in ``fast`` first (the fast
    path), then ``walked`` (the files of the tree in walk order). The spawn
    path (``find_in_tree``) takes the first of them whose own name agrees,
    lazily; the pre-flight and the doctor (``winners_in_tree``) pick from the
    same order, so that all of them judge the same file.
    """
    first = [os.path.join(root, name + suffix) for suffix in fast] if valid_skill_name(name) else []
    for path in first:
        if is_file(path):
            yield path
    for path in walked:
        if path not in first:
            yield path


def find_in_tree(root, name, suffix, load, walk=True, fast=None, walked=None):
    """The first file in ``lookup_order`` whose own name is ``name``, loaded; or None.

    ``walked`` replaces the recursive walk of ``root`` (Copilot's top-level-only folders).
    """
    fast = fast or (suffix,)
    if valid_skill_name(name) and is_dir(os.path.join(root, name + suffix)):
        warn("%s is a directory, not an agent file" % os.path.join(root, name + suffix))
    if walked is None:
        walked = walk_files(root, suffix) if walk else ()
    for path in lookup_order(root, name, fast, walked):
        agent = load(path, name)
        if agent is not None:
            return agent
    return None


# -- skills -------------------------------------------------------------------

def load_skill(name, source, path, origin):
    """A Skill read from ``path`` (a SKILL.md), with its problem if it cannot be used."""
    try:
        text = read_text(path)
    except Unreadable as exc:
        return Skill(name, source, path=path, size=exc.size,
                     problem="unreadable SKILL.md at %s: %s" % (path, exc.reason), origin=origin)
    return skill_from_text(name, source, path, origin, text)


def skill_from_text(name, source, path, origin, text):
    frontmatter, body = split_frontmatter(text)
    return Skill(name, source, path=path, body=body, size=len(body.encode("utf-8")), origin=origin,
                 meta=skill_meta_of(frontmatter))


def first_usable(name, source, candidates):
    """The first candidate SKILL.md that is a regular file, as a Skill.

    A harness skips an entry it cannot load (a folder, a dangling link, a
    FIFO) and goes on to the next root, so a broken nearer entry must not hide
    a good farther one. When none is usable, the first broken one explains why.
    """
    unusable = None
    for path, origin in candidates:
        kind = path_kind(path)
        if kind == "file":
            return load_skill(name, source, path, origin)
        if unusable is None and kind:
            unusable = Skill(name, source, path=path, origin=origin,
                             problem="SKILL.md at %s is not a regular file" % path)
    return unusable or Skill(name, source, problem="unknown skill")


def plugin_candidates(machine, roots, skill, manifest_dir, origin):
    """SKILL.md paths for ``skill`` inside plugin ``roots``, in order."""
    for root in roots:
        for folder, single in machine.plugin_skill_dirs(root, manifest_dir):
            if single:
                if os.path.basename(folder) == skill:
                    yield os.path.join(folder, "SKILL.md"), origin
            else:
                yield os.path.join(folder, skill, "SKILL.md"), origin


def skills_named(machine, folder, name):
    """SKILL.md files directly below ``folder`` whose frontmatter ``name`` is ``name``, in order.

    A declaration of thousands of names that miss by folder would otherwise
    read every skill of the root once per name (5,000 names against 5,000
    folders took minutes), so each folder's names are read once per payload.
    """
    return [path for path in machine.frontmatter_names(folder).get(name, ())
            if os.path.basename(os.path.dirname(path)) != name]  # found by its folder already


def index_by_name(paths, name_of):
    """{name: [paths]} of the readable regular files among ``paths``, in order, by ``name_of(text)``.

    A file that cannot be read, or whose name cannot be read, names nothing.
    """
    index = {}
    for path in paths:
        if path_kind(path) != "file":
            continue
        try:
            name = name_of(read_text(path))
        except (Unreadable, ParseError):
            continue
        if isinstance(name, str) and name:
            index.setdefault(name, []).append(path)
    return index


def frontmatter_names_below(folder):
    """{frontmatter name: [SKILL.md paths]} for the skill folders directly below ``folder``, sorted.

    Claude Code's reading of ``name:`` (parse_skill_meta), as for the skill's other keys.
    """
    try:
        entries = sorted(e.name for e in os.scandir(folder) if not e.name.startswith("."))
    except (OSError, ValueError):
        return {}
    return index_by_name((os.path.join(folder, entry, "SKILL.md") for entry in entries),
                         lambda text: meta_value(parse_skill_meta(text).get("name")))


def skill_file_named(path, name):
    """Whether the skill file at ``path`` says ``name: <name>`` in its frontmatter."""
    if not is_file(path):
        return False
    try:
        text = read_text(path)
    except Unreadable:
        return False
    return may_spell(text, name) and meta_value(parse_skill_meta(text).get("name")) == name


def named_agent_files(roots, files_of, every=False):
    """The agent files of ``roots`` [(scope, root)] in order, each as ((scope, path, text, its
    frontmatter ``name``), None), or (None, (path, why)) for one that cannot be read: those that
    may declare skills (``every``: all). Gemini CLI and its fork Qwen Code name an agent so."""
    for scope, root in roots:
        for path in files_of(root):
            try:
                text = read_text(path)
            except Unreadable as exc:
                yield None, (path, "cannot read agent file: %s" % exc.reason)
                continue
            if not every and not (may_spell(text, "briefing") or may_spell(text, "skills")):
                continue
            try:
                name = parse_frontmatter(text).name
            except ParseError as exc:
                yield None, (path, "cannot read frontmatter: %s" % exc)
                continue
            if isinstance(name, str) and name:
                yield (scope, path, text, name), None


def declaring_md_agents(harness, roots, fast=(".md",), builtins=(), fileless=(),
                        every=False):
    """The declaring agents of Markdown agent folders [(plugin or None, root, recursive)], first wins.

    The winner of a name is the file the spawn path loads (``winners_in_tree``,
    the same ``lookup_order``), even when it declares nothing and a losing file
    does. ``fast`` are the file names tried first, ``builtins`` names looked up
    by those alone, ``fileless`` names that no file can take. ``every`` also
    yields the winners that declare nothing (rules may brief them).
    """
    seen = set()
    for plugin, root, recursive in roots:
        paths = walk_files(root, ".md") if recursive else sorted(top_level_files(root, ".md"))
        named = []
        for path in paths:
            try:
                text = read_text(path)
            except Unreadable as exc:
                yield None, (path, "cannot read agent file: %s" % exc.reason)
                continue
            declares = may_spell(text, "briefing") or may_spell(text, "skills")
            try:
                fm = parse_frontmatter(text)
            except ParseError as exc:
                if declares:
                    yield None, (path, "cannot read frontmatter: %s" % exc)
                continue
            if fm.name and (plugin is not None or fm.name not in fileless):
                named.append((path, fm.name, fm))
        for local, path, fm in winners_in_tree(root, fast, named, builtins if plugin is None else ()):
            name = "%s:%s" % (plugin, local) if plugin else local
            if name in seen:
                continue
            seen.add(name)
            if fm.skills or fm.native or fm.files or every:
                yield Agent(harness, name, path, skills=dedupe(fm.skills), native=dedupe(fm.native),
                            wildcard_rules=fm.wildcard_rules, files=dedupe(fm.files)), None


def winners_in_tree(root, fast, named, builtins):
    """From ``named`` [(path, name, value)] in walk order: the file that wins each name in ``root``.

    Yields (name, path, value) in the order names were first seen. The winner
    is the first file in ``lookup_order`` that has the name, exactly as
    ``find_in_tree`` picks it at spawn (a built-in name only by its own file).
    """
    paths_of, order = {}, []
    for path, name, value in named:
        if name not in paths_of:
            paths_of[name] = {}
            order.append(name)
        paths_of[name].setdefault(path, value)
    for name in order:
        walked = list(paths_of[name]) if name not in builtins else ()
        for path in lookup_order(root, name, fast, walked):
            if path in paths_of[name]:
                yield name, path, paths_of[name][path]
                break


# -- a project's folder tree --------------------------------------------------

# Ignore-file lines that hide a private skill's folder from a harness's folder tree, as written (a
# leading "/" and a trailing "/" or "/**" dropped); {name} is the skill's folder.
HIDING_LINES = (".briefing", ".briefing/*", ".briefing/skills", ".briefing/skills/*", ".briefing/skills/{name}")


def ignore_lines(project, ignore_files):
    """The lines of the project's ``ignore_files``, as HIDING_LINES writes them."""
    found = set()
    for ignore in ignore_files:
        try:
            lines = read_text(os.path.join(project, ignore)).splitlines()
        except Unreadable:
            continue
        for line in lines:
            line = line.strip()
            for prefix in ("**/", "/"):
                line = line[len(prefix):] if line.startswith(prefix) else line
            for suffix in ("/**", "/"):
                line = line[:-len(suffix)] if line.endswith(suffix) else line
            found.add(line)
    return found


def tree_shows(machine, path, project, label, own_ignore):
    """How a harness whose every agent sees the project's folder tree names ``path`` (a private
    skill's SKILL.md), or None: unless a line of the project's ``own_ignore`` or .gitignore hides
    it (only the plain lines of HIDING_LINES are recognised: other patterns are not interpreted,
    then the doctor says so, and the user knows whether the line covers it). Gemini CLI, and its
    fork Qwen Code, measured (docs/private-skills.md)."""
    from .standing import names_in
    parts = next(names_in(machine, path, [project]), "").split("/")
    if len(parts) != 4 or parts[:2] != [".briefing", "skills"]:
        return None  # not a private skill of this project: the user folder is never in the tree
    hiding = {line.format(name=parts[2]) for line in HIDING_LINES}
    files = (own_ignore, ".gitignore")
    if hiding & machine.memo(("ignore lines", project, files), lambda: ignore_lines(project, files)):
        return None
    return ("%s's folder tree of the project, in every agent's context, names its folder "
            "(.briefing/skills/%s): add .briefing/skills/ to the project's %s to hide it" % (
                label, parts[2], own_ignore))


# -- skills named by frontmatter at any depth (Copilot CLI, Factory Droid) ---------

def skill_files(root):
    """Every SKILL.md below ``root`` at any depth, in sorted order, not descending into a skill.

    Measured on 1.0.102: ``.github/skills/g/a/b/SKILL.md`` is a skill, and a
    SKILL.md inside another skill's folder (``outer/inner/SKILL.md``) is not.
    A symlink loop is cut at its first repeat.
    """
    seen, stack = set(), [root]
    while stack:
        folder = stack.pop()
        try:
            info = os.stat(folder)
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except (OSError, ValueError):
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        subdirs = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if not entry.is_dir():
                    continue
            except OSError:
                continue
            found = os.path.join(entry.path, "SKILL.md")
            if os.path.lexists(found):
                yield found
            else:
                subdirs.append(entry.path)
        stack.extend(reversed(subdirs))


def named_skill_files(machine, root, skill):
    """SKILL.md files under ``root`` whose frontmatter ``name`` is ``skill`` (Copilot CLI's and
    Factory Droid's reading: docs/factory-droid.md).

    Copilot CLI knows a skill by its frontmatter name, not its folder (measured on
    1.0.102: ``skills: [fm-name]`` preloads ``folder-x/SKILL.md`` named ``fm-name``;
    ``skills: [folder-y]`` preloads nothing when that folder's skill has another
    name, and a SKILL.md without a name is no skill). ``<root>/<skill>/`` is tried
    first, then every skill folder at any depth (``skill_files``).
    """
    fast = os.path.join(root, skill, "SKILL.md")
    kind = path_kind(fast)
    if kind == "other":
        yield fast  # unusable: first_usable says why when nothing else is found
    elif kind == "file":
        try:
            if frontmatter_name(read_text(fast)) == skill:
                yield fast
        except Unreadable:
            yield fast
    # A declaration of thousands of names would otherwise walk the root and read every
    # skill in it once per name: the walk and the names are read once per payload.
    index = machine.memo(("frontmatter name index", root), lambda: index_by_name(skill_files(root), frontmatter_name))
    for path in index.get(skill, ()):
        if path != fast:
            yield path
