"""Gemini CLI: everything that differs for it.

Its project (GEMINI_PROJECT_DIR), agents (project, user, extensions; a project
agent only once acknowledged), skills (by frontmatter name, the last root
loaded wins), delivery in front of the spawn's prompt, and its hooks-file check.
"""
import os

from ..files import display_path, is_file, path_kind, read_json, read_text, real_path, warn
from . import HARNESSES, Harness
from ..lookup import (extension_enabled, index_by_name, key_line_mentions, load_skill, named_agent_files,
                      project_from_env, skill_from_text, tree_shows)
from ..names import dedupe, split_plugin_name, valid_skill_name
from ..records import Agent, ParseError, Skill, Unreadable
from ..toml_subset import parse_html_comment_lists, parse_wildcard_html_comment
from ..yaml_subset import _unquote, parse_frontmatter, split_frontmatter


# Gemini CLI takes the briefing inside the spawn's rewritten prompt; a 660,367-character
# prompt reached the subagent whole (facts/gemini-cli.md §14). The same cap as Codex keeps
# every briefing, with its framing and the original prompt, below what was measured.
GEMINI_LIMIT = 512 * 1024


# Gemini CLI registers these before any file, and ignores a file agent of the same name
# ("Duplicate agent name", facts/gemini-cli.md §3).
GEMINI_BUILTIN_AGENTS = frozenset(("codebase_investigator", "cli_help", "generalist", "browser_agent"))


def gemini_agent_roots(machine):
    # Precedence: the first registration of a name wins ("Duplicate agent name ... The later
    # definition will be ignored"), in Gemini CLI's loading order: project, user, extensions.
    folder = machine.project("gemini").folder
    return ([("project", os.path.join(folder, ".gemini", "agents")),
             ("user", os.path.join(machine.gemini_dir, "agents"))] +
            [("extension %s" % name, os.path.join(root, "agents"))
             for name, root in gemini_extensions(machine)])


def gemini_skill_roots(machine):
    # Precedence: the last one loaded wins (addSkillsWithPrecedence), and Gemini CLI loads
    # extensions, then ~/.gemini/skills, ~/.agents/skills, .gemini/skills, .agents/skills.
    folder = machine.project("gemini").folder
    roots = [("project", os.path.join(folder, ".agents", "skills")),
             ("project", os.path.join(folder, ".gemini", "skills")),
             ("user", os.path.join(machine.gemini_home, ".agents", "skills")),
             ("user", os.path.join(machine.gemini_dir, "skills"))]
    return roots + [("extension %s" % name, os.path.join(root, "skills"))
                    for name, root in reversed(gemini_extensions(machine))]


def gemini_extensions(machine):
    """Enabled Gemini CLI extensions as [(manifest name, root)], in loading order.

    Each lives in ``~/.gemini/extensions/<folder>/``; a linked one's files
    stay at the ``source`` its install metadata names. ``-e`` on the
    command line is beyond a hook's reach, like Claude Code's --settings.
    """
    if machine.state.get("gemini_extensions") is not None:
        return machine.state["gemini_extensions"]
    found = []
    base = os.path.join(machine.gemini_dir, "extensions")
    try:
        folders = sorted(e.name for e in os.scandir(base) if e.is_dir())
    except OSError:
        folders = []
    enablement = read_json(os.path.join(base, "extension-enablement.json")) if folders else None
    for folder in folders:
        root = os.path.join(base, folder)
        meta = read_json(os.path.join(root, ".gemini-extension-install.json"))
        if isinstance(meta, dict) and meta.get("type") == "link" and isinstance(meta.get("source"), str):
            root = meta["source"]
        manifest = read_json(os.path.join(root, "gemini-extension.json"))
        name = manifest.get("name") if isinstance(manifest, dict) else None
        if not isinstance(name, str) or not name or any(name == n for n, _ in found):
            continue
        if gemini_extension_enabled(enablement, name, machine.project("gemini").folder):
            found.append((name, root))
    machine.state["gemini_extensions"] = found
    return found


def gemini_acknowledged(machine):
    """``~/.gemini/acknowledgments/agents.json``: {project folder: {agent name: sha256}}."""
    data = read_json(os.path.join(machine.gemini_dir, "acknowledgments", "agents.json"))
    return data if isinstance(data, dict) else {}


def gemini_extension_enabled(enablement, name, folder):
    """Whether extension ``name`` is on in ``folder`` (ExtensionEnablementManager in Gemini CLI
    0.61.0): ``extension_enabled`` with the folder as written."""
    return extension_enabled(enablement, name, [folder])


def find_gemini_project(machine):
    """Gemini CLI's project: the folder it was started in, which every hook gets as GEMINI_PROJECT_DIR.

    Gemini CLI reads ``.gemini/`` and ``.agents/skills`` of that folder only,
    not of the folders above it (facts/gemini-cli.md §1, §17).
    """
    return project_from_env(machine, "GEMINI_PROJECT_DIR", "the folder Gemini CLI was started in",
                            ".gemini/agents, .gemini/skills and .agents/skills")


def gemini_agent_files(root):
    """The agent files Gemini CLI reads in ``root``: regular ``*.md`` right in it, none starting with ``_``.

    Gemini CLI lists the folder itself (no sub-folders) and takes only entries
    that are files, so a symbolic link is skipped (loadAgentsFromDirectory).
    """
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (OSError, ValueError):
        return []
    out = []
    for entry in entries:
        try:
            if entry.name.endswith(".md") and not entry.name.startswith("_") and \
                    entry.is_file(follow_symlinks=False):
                out.append(entry.path)
        except OSError:
            continue
    return out


def load_gemini_agent(path, name, scope, machine, text=None):
    """The Gemini CLI agent in ``path`` if its frontmatter name is ``name`` (None otherwise)."""
    if text is None:
        try:
            text = read_text(path)
        except Unreadable as exc:
            warn("%s: %s" % (path, exc.reason))
            return None
    if name not in text:
        return None
    try:
        fm = parse_frontmatter(text)
    except ParseError as exc:
        if not key_line_mentions(split_frontmatter(text)[0] or (), "name", ":", name):
            return None
        return Agent("gemini", name, path, error="cannot read frontmatter: %s" % exc)
    if fm.name != name:
        return None
    if fm.skills is not None or fm.native is not None:
        return Agent("gemini", name, path, error=(
            "its frontmatter has a %s key, and Gemini CLI rejects an agent whose frontmatter has a key "
            "it does not know: declare the skills in the body instead, on a line of its own: "
            '<!-- briefing: skills = ["a", "b"] -->' % ("briefing:" if fm.skills is not None else "skills:")))
    try:
        declared = parse_html_comment_lists(text)
        skills, files = declared["skills"], declared["files"]
    except ParseError as exc:
        return Agent("gemini", name, path, error="cannot read the briefing comment: %s" % exc)
    try:
        wildcard = parse_wildcard_html_comment(text) is not False
    except ParseError as exc:
        return Agent("gemini", name, path, error="cannot read the briefing comment: %s" % exc)
    agent = Agent("gemini", name, path, skills=dedupe(skills), wildcard_rules=wildcard, files=dedupe(files))
    if scope == "project":
        agent.warnings = gemini_acknowledgement(machine, agent, text)
    return agent


def gemini_acknowledgement(machine, agent, text):
    """[] when Gemini CLI loads this project agent, else what the user must do first.

    A project agent is registered only once the user acknowledged it: the
    sha256 of its text, stored per project folder and agent name in
    ``~/.gemini/acknowledgments/agents.json`` (facts/gemini-cli.md §5). Until
    then, and again after every edit, spawning it fails before any hook runs.
    """
    folder = machine.project("gemini").folder
    acks = gemini_acknowledged(machine)
    project = acks.get(folder)
    if not isinstance(project, dict):
        project = acks.get(real_path(folder))
    stored = project.get(agent.name) if isinstance(project, dict) else None
    if stored == sha256_hex(text.encode("utf-8")):
        return []
    state = "has changed since it was acknowledged" if stored else "has not been acknowledged"
    return ["this project agent %s, so Gemini CLI does not load it: spawning it fails with "
            "\"Subagent '%s' not found\" before briefing can run. Start `gemini` in %s and accept "
            "the agent when it asks (the hash goes into %s)" % (
                state, agent.name, display_path(folder),
                display_path(os.path.join(machine.gemini_dir, "acknowledgments", "agents.json")))]


def sha256_hex(data):
    """sha256 of ``data`` in hex. ``hashlib`` loads OpenSSL and blake2 (about a third of the
    floor, bench/run --profile); the built-in sha256 module alone is a fraction of that."""
    try:
        from _sha256 import sha256  # CPython 3.8-3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


def find_gemini_agent(machine, agent_name):
    """The file Gemini CLI would run for ``agent_name``, as an Agent, or None.

    A project agent that is not acknowledged is not loaded, so the name falls
    to the next root, as in Gemini CLI.
    """
    if not isinstance(agent_name, str) or not valid_skill_name(agent_name):
        return None
    if agent_name in GEMINI_BUILTIN_AGENTS:
        return None
    for scope, root in gemini_agent_roots(machine):
        fast = os.path.join(root, agent_name + ".md")
        files = gemini_agent_files(root)
        for path in ([fast] if fast in files else []) + [f for f in files if f != fast]:
            agent = load_gemini_agent(path, agent_name, scope, machine)
            if agent is not None and not agent.warnings:
                return agent
    return None


def gemini_skill_name(text):
    """The name Gemini CLI gives the skill in a SKILL.md text, or None when it skips the file.

    Its frontmatter needs a ``name`` and a ``description``; characters that
    cannot be in a file name become ``-`` (loadSkillFromFile).
    """
    fm, _ = split_frontmatter(text)
    name, described = None, False
    for line in fm or ():
        key, colon, value = line.partition(":")
        if not colon or line[:1] in " \t":
            continue
        if key.strip() == "name":
            try:
                name = _unquote(value, None)
            except ParseError:
                name = value.strip()
        elif key.strip() == "description":
            described = True
    if not name or not described:
        return None
    return "".join("-" if c in ':\\/<>*?"|' else c for c in name)


def resolve_gemini_skill(machine, name, source):
    """A skill by its frontmatter name, in Gemini CLI's roots, the winning root first.

    Gemini CLI knows a skill by the ``name`` in its frontmatter, case-blind,
    found as ``SKILL.md`` or ``*/SKILL.md`` under each root: the folder named
    after it is tried first, then every other one. ``ext:skill`` looks only in
    the skills of the enabled extension ``ext``.
    """
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")
    if plugin is None:
        roots = gemini_skill_roots(machine)
    else:
        roots = [("extension %s" % n, os.path.join(r, "skills"))
                 for n, r in gemini_extensions(machine) if n == plugin]
    wanted = skill.lower()
    unusable = None
    for origin, root in roots:
        fast = os.path.join(root, skill, "SKILL.md")
        kind = path_kind(fast)
        if kind == "other" and unusable is None:
            unusable = Skill(name, source, path=fast, origin=origin,
                             problem="SKILL.md at %s is not a regular file" % fast)
        elif kind == "file":
            try:
                text = read_text(fast)
            except Unreadable as exc:
                text = None
                if unusable is None:
                    unusable = Skill(name, source, path=fast, size=exc.size, origin=origin,
                                     problem="unreadable SKILL.md at %s: %s" % (fast, exc.reason))
            found = gemini_skill_name(text) if text is not None else None
            if found is not None and found.lower() == wanted:
                return skill_from_text(name, source, path=fast, origin=origin, text=text)
        # Every other skill of the root by its name, read once per payload: a declaration of
        # thousands of names would otherwise read the whole root again for each.
        index = machine.memo(("gemini skill index", root), lambda: gemini_skill_index(root))
        for path in index.get(wanted, ()):
            if path != fast:
                return load_skill(name, source, path, origin)
    return unusable or Skill(name, source, problem="unknown skill")


def gemini_skill_index(root):
    """{lower-cased name: [paths]} of ``root``'s SKILL.md and ``*/SKILL.md`` (by folder name; no
    hidden folder), as Gemini CLI reads them (gemini_skill_name)."""
    paths = [os.path.join(root, "SKILL.md")]
    try:
        paths += [os.path.join(e.path, "SKILL.md") for e in sorted(os.scandir(root), key=lambda e: e.name)
                  if not e.name.startswith(".") and e.is_dir()]
    except (OSError, ValueError):
        pass
    return index_by_name(paths, lambda text: (gemini_skill_name(text) or "").lower())


def all_gemini_agents(machine):
    """Every declaring Gemini CLI agent that wins its name: (Agent, None) or (None, (path, why)).

    A project agent that is not acknowledged is listed with its warning, and
    leaves its name to the next root, as Gemini CLI does.
    """
    seen = set(GEMINI_BUILTIN_AGENTS)
    for found, error in named_agent_files(gemini_agent_roots(machine), gemini_agent_files):
        if error:
            yield None, error
            continue
        scope, path, text, name = found
        if name in seen:
            continue
        agent = load_gemini_agent(path, name, scope, machine, text)
        if agent is None:
            continue
        if not agent.warnings:
            seen.add(name)
        if agent.declares:
            yield agent, None


def gemini_skill_places(skill):
    return (".gemini/skills/%s/ or .agents/skills/%s/ in the project, ~/.gemini/skills/%s/ or "
            "~/.agents/skills/%s/, or an enabled extension's skills/ (named in its frontmatter)" % (
                skill, skill, skill, skill))


def render_gemini_skill(machine, skill):
    """An extension's skill as Gemini CLI hands it over (a Rendering), or None: as written.

    Measured on 0.61.0: Gemini CLI fills ``${…}`` into the skills of an
    extension (hydrateString), and into no other skill: ``${extensionPath}``,
    ``${workspacePath}``, ``${/}`` and ``${pathSeparator}``, then whatever the
    extension's settings hold: the keys of ``~/.gemini/extensions/<name>/.env``
    and of the project's own ``.env``, and the keychain's sensitive settings.
    briefing copies no value out of those: a skill that uses one of their keys
    is refused, naming the file.
    """
    origin = skill.origin or ""
    if not origin.startswith("extension ") or "${" not in skill.body:
        return None
    name = origin[len("extension "):]
    root = next((r for n, r in gemini_extensions(machine) if n == name), None)
    if root is None:
        return None
    from ..substitution import gemini_hydrate, in_file
    workspace = machine.project("gemini").folder
    sources = [(path, dotenv_keys(path)) for path in (
        os.path.join(machine.gemini_dir, "extensions", name, ".env"), os.path.join(workspace, ".env"))]
    manifest = read_json(os.path.join(root, "gemini-extension.json"))
    settings = manifest.get("settings") if isinstance(manifest, dict) else None
    secret = {s.get("envVar") for s in settings if isinstance(s, dict) and s.get("sensitive")} if (
        isinstance(settings, list)) else set()
    sources.append(("the keychain (a sensitive setting of %s)" % name, secret))

    def unknown(key):
        for where, keys in sources:
            if key in keys:
                return "which Gemini CLI fills in from %s, whose values briefing does not copy" % (
                    display_path(where) if os.path.isabs(where) else where)
        return None

    context = {"extensionPath": root, "workspacePath": workspace, "/": os.sep, "pathSeparator": os.sep}
    return in_file(gemini_hydrate(skill.body, context, unknown), skill.path, skill.body)


def dotenv_keys(path):
    """The keys a ``.env`` file may set (read as dotenv does, or a few more: never its values)."""
    try:
        text = read_text(path)
    except Unreadable:
        return set()
    keys = set()
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export ") or line.startswith("export\t"):
            line = line[7:].lstrip()
        key = ""
        for ch in line:
            if not (ch.isalnum() or ch in "_.-"):
                break
            key += ch
        rest = line[len(key):].lstrip()
        if key and (rest.startswith("=") or rest.startswith(":")):
            keys.add(key)
    return keys


GEMINI_EXTENSION = "gemini"  # the Gemini CLI extension's own root, inside the repository


def gemini_hooks_check(root):
    """The extension's hooks/hooks.json, read by Gemini CLI: the spawn guard and the pre-flight.

    Gemini CLI reads an extension's hooks only from ``<extension>/hooks/hooks.json``,
    the file Claude Code reads at a plugin root, so the extension has a root of
    its own: ``gemini/`` in the repository, the root itself in a copy that has
    ``gemini-extension.json`` there.
    """
    from ..hooks_files import extension_hooks, one_handler_each  # the doctor's checks only
    import re
    ext, hooks, result = extension_hooks(root, "gemini-extension.json", GEMINI_EXTENSION, "gemini hooks.json",
                                         "Gemini CLI")
    if result:
        return result
    problems = []
    for event, (matcher, hook) in one_handler_each(hooks, ("BeforeTool", "SessionStart"), problems).items():
        if event == "BeforeTool":
            # Gemini CLI tests the matcher as an unanchored regex (facts/gemini-cli.md §8):
            # "invoke_agent" alone would also match any tool with that in its name.
            try:
                exact = isinstance(matcher, str) and all(
                    bool(re.search(matcher, tool)) == (tool == "invoke_agent")
                    for tool in ("invoke_agent", "invoke_agent_x", "mcp_invoke_agent", "read_file"))
            except re.error:
                exact = False
            if not exact:
                problems.append('BeforeTool needs the matcher "^invoke_agent$", found %r' % (matcher,))
    return {"name": "gemini hooks.json", "status": "FAIL" if problems else "ok",
            "detail": "; ".join(problems) or "registers the invoke_agent guard and the pre-flight"}


def gemini_compaction_check(machine):
    """What the doctor says of compression under Gemini CLI: the briefing is not given back."""
    return {"name": "gemini-compression", "status": "ok",
            "detail": "a subagent is briefed %s" % HARNESS.redelivery}


def gemini_loads_file(machine, agent, path, session):
    """Why Gemini CLI already loads the project file ``path`` into ``agent``, or None.

    Gemini CLI 0.61.0 puts the project folder's GEMINI.md into every subagent's requests,
    its own and the built-in generalist and codebase_investigator alike; .gemini/GEMINI.md
    it does not (measured, docs/files.md). A context.fileName setting that renames the file
    is not read: briefing then delivers it (a duplicate costs tokens, a hole breaks the promise).
    """
    from ..standing import names_in
    if any(rel == "GEMINI.md" for rel in names_in(machine, path, [machine.project("gemini").folder])):
        return "Gemini CLI loads GEMINI.md into every agent"
    return None


def gemini_shows_path(machine, path):
    """How Gemini CLI names the project path ``path`` (a private skill's SKILL.md) to every agent.

    Measured on 0.61.0 (docs/private-skills.md): every agent's context holds the project's
    folder tree ("Directory Structure"), which honours .gitignore and .geminiignore and so names
    a project private skill's folder, its name and nothing else of it (``tree_shows``).
    """
    return tree_shows(machine, path, machine.project("gemini").folder, "Gemini CLI", ".geminiignore")


# README.md, Install (from a checkout; the release archive installs the same built folder).
GEMINI_INSTALL = ("%s/scripts/build-gemini-extension /tmp/briefing-gemini && gemini extensions install "
                  "/tmp/briefing-gemini/briefing --consent")


def gemini_installed_check(machine):
    """The doctor's ``installed`` check: the briefing extension installed, enabled for this project
    (gemini_extensions), and built, not the repository's gemini/ source folder."""
    from ..installed import checkout, extension_installed  # the doctor's checks only
    return extension_installed(machine, "gemini", "Gemini CLI", gemini_extensions(machine),
                               os.path.join(machine.gemini_dir, "extensions"), "gemini-extension.json",
                               gemini_hooks_check, GEMINI_INSTALL % checkout(), "gemini")


HARNESS = Harness(
    HARNESSES.record("gemini"),
    find_project=find_gemini_project,
    find_agent=find_gemini_agent,
    all_agents=all_gemini_agents,
    resolve_skill=resolve_gemini_skill,
    skill_places=gemini_skill_places,
    # No subagent start event: the BeforeTool guard puts the briefing in front of the
    # spawn's prompt, which becomes the subagent's first message (§13), whole (§14).
    part_budget=None, whole_limit=GEMINI_LIMIT, brief_field="prompt",
    deny=lambda reason: {"decision": "deny", "reason": reason},
    hooks_check=gemini_hooks_check,
    installed_check=gemini_installed_check,
    skill_roots=gemini_skill_roots,
    preflight_warns=True,
    # Gemini CLI fills ${…} into an extension's skills (docs/gemini-cli.md): briefing does too.
    render_skill=render_gemini_skill,
    # invoke_agent requires agent_name (§4): no default agent.
    builtin_agents=GEMINI_BUILTIN_AGENTS,
    # Shown by `briefing-doctor --harness gemini` (there is no hook trust to check).
    trust_check=gemini_compaction_check,
    loads_file=gemini_loads_file,
    shows_path=gemini_shows_path,
    # facts/compaction.md: Gemini CLI compresses a subagent's chat only on its final-warning
    # recovery turn, keeping nothing of its first message; BeforeModel is the only hook that
    # reaches that request, and no hook payload names the agent a request is for.
    redelivery="at spawn only, in front of the spawn's prompt: Gemini CLI compresses a subagent only "
               "on its final-warning recovery turn, and the compressed history keeps nothing of its "
               "first message, the briefing with it; no hook payload names the agent a model request "
               "belongs to, so briefing cannot give it back (a compressed Gemini subagent works on "
               "unbriefed)")
