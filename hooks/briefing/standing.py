"""Standing instructions: project files that rules and declarations name (docs/files.md).

``files``, next to ``skills``, in a rule or a declaration: paths or globs
(``*``, ``?``, ``**``) relative to the project folder. Each file is delivered
whole, as written, after the skills and framed with its project-relative path.
Nothing outside the project is read: an entry is resolved lexically inside its
base folder, and the file's real path must stay inside the base folder's real
path. Imported only when a rule or a declaration names files.
"""
import os
import stat

from .files import ABSENT, display_path, is_inside, read_text, real_path
from .names import glob_match, is_glob
from .records import Unreadable


# A glob is walked within bounds: at most this many folders listed, at most this many files
# matched. Past either the entry is refused (never delivered in part): narrow it.
WALK_FOLDERS = 2000
GLOB_FILES = 256


# An entry is at most ENTRY_CHARS characters and PATH_DEPTH names long, and a glob walks at most
# PATH_DEPTH folders below the entry's base: past either, the entry is refused, saying so. Every
# loop over a path is iterative and would take any depth; the bounds keep what an entry may cost,
# and what a refusal must say, small (issue 36: 400 segments once crashed the hook).
ENTRY_CHARS = 1024
PATH_DEPTH = 64


# An agent's files come from at most this many entries (its declaration's, then its rules'): each
# may walk WALK_FOLDERS folders. Entries past it are refused, each saying so: merge them into globs.
FILE_ENTRIES = 256


# Folders a wildcard never walks into (nor does ``*`` match them): hidden ones (``.git``, ``.venv``)
# unless the pattern names them (``.claude/rules/*.md``), and these heavy trees of other people's files.
SKIPPED_FOLDERS = frozenset(("node_modules", "__pycache__", "site-packages", "bower_components"))


class StandingFile(object):
    """One project file an entry names: what the hook delivers, or why it cannot.

    Shaped like a Skill where refusals list it (``name``, ``problem``, ``path``,
    ``rule``, ``source``, ``override``), so that a refusal names files and skills alike.
    """

    __slots__ = ("name", "entry", "source", "rule", "path", "body", "size", "problem", "loaded",
                 "duplicate", "override")
    element = "file"  # its tag in a briefing: <file path="…"> (rendering.item_open)

    def __init__(self, name, entry, path=None, problem=None):
        self.name = name  # the path relative to the entry's base folder, with "/"; or the entry
        self.entry = entry  # the FileEntry it came from
        self.source = entry.source
        self.rule = entry.rule
        self.path = path  # absolute, inside the base folder; None when the entry names nothing usable
        self.body = None  # the text exactly as written
        self.size = None  # bytes of the body
        self.problem = problem  # None when usable: why the spawn is refused otherwise
        self.loaded = None  # why the harness already loads it into this agent (then not delivered)
        self.duplicate = None  # the StandingFile of an earlier entry that delivers the same file
        self.override = None  # never a setting's; read where refusals list skills


class FileEntry(object):
    """One entry of a ``files`` list as written, where it is resolved, and what it matched."""

    __slots__ = ("text", "source", "rule", "base", "files", "warning", "skipped")

    def __init__(self, text, source, rule, base):
        self.text = text
        self.source = source  # "briefing" (the agent's declaration) or "rule"
        self.rule = rule
        self.base = base  # the project folder it is relative to
        self.files = []  # StandingFile per match; one with a problem when the entry cannot be used
        self.warning = None  # a glob that matched nothing: delivers nothing, the doctor warns
        self.skipped = []  # [(relative name, why)]: what a glob matched that is not a regular file


def entry_segments(text):
    """(the entry's path segments, lexically normalised, or None; why it is refused, or None)."""
    if not isinstance(text, str) or not text.strip():
        return None, "an empty path"
    if not text.isprintable():
        return None, "a path with control characters"
    if len(text) > ENTRY_CHARS:
        return None, "a path of %d characters, over the %d-character limit" % (len(text), ENTRY_CHARS)
    if os.path.isabs(text) or text.startswith("~") or (len(text) > 1 and text[1] == ":"):
        return None, "an absolute path: a file is named relative to the project folder"
    segments = []
    for segment in text.replace("\\", "/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not segments:
                return None, "'..' leaves the project folder"
            segments.pop()
            continue
        segments.append(segment)
    if not segments:
        return None, "names the project folder itself, not a file"
    if len(segments) > PATH_DEPTH:
        return None, "a path of %d names, over the %d-name limit" % (len(segments), PATH_DEPTH)
    if segments[-1] == "**":
        segments.append("*")  # "docs/**": every file below docs
    return segments, None


def resolve_entries(machine, entries, loads_file):
    """Match every FileEntry, read what it names; return the StandingFiles to deliver, in order.

    A file two entries name is delivered once, for the first; one the harness
    already loads (``loads_file(path)`` says why) is not delivered at all.
    """
    delivered, seen = [], {}
    match_entries(machine, entries)
    for entry in entries:
        for found in entry.files:
            if found.problem:
                continue
            real = machine.real_path(found.path)
            if real in seen:
                found.duplicate = seen[real]
                continue
            seen[real] = found
            found.loaded = loads_file(found.path)
            if found.loaded:
                continue
            try:
                found.body = read_text(real)
            except Unreadable as exc:
                found.problem = exc.reason
                continue
            found.size = len(found.body.encode("utf-8"))
            delivered.append(found)
    return delivered


def match_entries(machine, entries):
    """``match_entry`` for each of ``entries``, the first FILE_ENTRIES of them; the rest are refused."""
    for index, entry in enumerate(entries):
        if index < FILE_ENTRIES:
            match_entry(machine, entry)
        else:
            entry.files = [StandingFile(entry.text, entry, problem=(
                "past the %d entries an agent's files may have: merge entries into globs" % FILE_ENTRIES))]


def match_entry(machine, entry):
    """Fill ``entry.files``: the file a plain path names, or every file a glob matches."""
    segments, problem = entry_segments(entry.text)
    if problem:
        entry.files = [StandingFile(entry.text, entry, problem=problem)]
        return
    base_real = machine.real_path(entry.base)
    rel = "/".join(segments)
    if not any(is_glob(s) for s in segments):
        path = os.path.join(entry.base, *segments)
        found = StandingFile(rel, entry, path)
        found.problem = outside(machine, path, base_real) or plain_problem(path)
        entry.files = [found]
        return
    try:
        matches, entry.skipped = walk_glob(machine, entry.base, segments, base_real)
    except GlobRefused as exc:
        entry.files = [StandingFile(entry.text, entry, problem=str(exc))]
        return
    entry.files = [StandingFile(name, entry, path, outside(machine, path, base_real)) for name, path in matches]
    if not matches:
        entry.warning = "matches no file in %s" % entry.base
        if entry.skipped:
            entry.warning += " (skipped: %s)" % ", ".join(name for name, _ in entry.skipped[:3]) + (
                ", \u2026" if len(entry.skipped) > 3 else "")


def outside(machine, path, base_real):
    """Why ``path`` is not inside the project once links are followed, or None."""
    real = machine.real_path(path)
    if is_inside(real, base_real):
        return None
    return "a link that points out of the project folder (to %s): not read" % real


def plain_problem(path):
    """Why a plain path cannot be delivered (it is missing, or a folder), or None; the read says the rest."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        # Not there; or there, but not reachable (a chain of links no kernel follows: issue 36)
        return "no such file" if exc.strerror in ABSENT or not exc.strerror else exc.strerror
    except ValueError:
        return "no such file"
    if stat.S_ISDIR(mode):
        return "a folder, not a file (name its files, e.g. folder/*.md or folder/**/*.md)"
    return None


class GlobRefused(Exception):
    """Why a glob entry is refused as a whole: it reaches too far, or through a link out of the project."""


def visible(name, segment):
    """Whether a wildcard ``segment`` may match ``name``: hidden names only when it starts with a dot."""
    return not name.startswith(".") or segment.startswith(".")


def match_kind(path):
    """What a glob found at ``path``: "file" (a regular file, through a link too), "folder", or why
    it is skipped: a glob matches regular files only, and enters no linked folder (issue 36)."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    if not stat.S_ISLNK(mode):
        return "not a regular file"
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        try:
            return "a link to nothing (%s)" % os.readlink(path)
        except (OSError, ValueError):
            return "a link to nothing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "a link to a folder (%s): a glob matches files, and enters no linked folder" % (
            display_path(real_path(path)))
    return "a link to something that is not a regular file"


def sorted_listing(folder):
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []


def walk_glob(machine, base, segments, base_real):
    """([(relative name, path)] of the files below ``base`` that ``segments`` match, sorted by name;
    [(relative name, why)] of what it matched and skipped).

    ``*`` and ``?`` match within one name, ``**`` any number of folders. A glob
    matches regular files only: a link to a folder, a link to nothing, a FIFO or a
    device is skipped, and said so. A wildcard never enters a linked folder, a hidden
    one (unless the pattern's segment starts with a dot) or a SKIPPED_FOLDERS one; a
    literal folder that is a link is followed while it stays inside the project, and
    refuses the entry when it leads out of it. Bounded: see WALK_FOLDERS and PATH_DEPTH (a
    folder is listed once per payload, however many entries walk it).
    """
    found, skipped, visited, listed = {}, {}, set(), [0]
    stack = [(base, (), 0)]

    def listing(folder):
        listed[0] += 1
        if listed[0] > WALK_FOLDERS:
            raise GlobRefused("the glob walks more than %d folders: narrow it" % WALK_FOLDERS)
        return machine.memo(("glob listing", folder), lambda: sorted_listing(folder))

    def is_folder(entry):
        try:
            return entry.is_dir(follow_symlinks=False)
        except OSError:
            return False

    def linked_folder(entry, name):
        """Whether ``entry`` is a link to a folder: a wildcard does not enter it (and says so)."""
        try:
            if entry.is_symlink() and entry.is_dir():
                skipped.setdefault(name, match_kind(entry.path))
                return True
        except OSError:
            pass
        return False

    def take(path, name):
        kind = match_kind(path)
        if kind == "file":
            found.setdefault(name, path)
        elif kind not in (None, "folder"):
            skipped.setdefault(name, kind)

    while stack:
        folder, rel, index = stack.pop()
        if (folder, index) in visited:
            continue
        visited.add((folder, index))
        segment, last = segments[index], index == len(segments) - 1
        if segment == "**":
            stack.append((folder, rel, index + 1))
            for item in listing(folder):
                if item.name.startswith(".") or item.name in SKIPPED_FOLDERS:
                    continue
                if is_folder(item):
                    if len(rel) >= PATH_DEPTH:
                        raise GlobRefused("the glob goes deeper than %d folders: narrow it" % PATH_DEPTH)
                    stack.append((item.path, rel + (item.name,), index))
                else:
                    linked_folder(item, "/".join(rel + (item.name,)))
        elif is_glob(segment):
            for item in listing(folder):
                if not (visible(item.name, segment) and glob_match(segment, item.name)):
                    continue
                name = "/".join(rel + (item.name,))
                if last:
                    if not is_folder(item):
                        take(item.path, name)
                elif is_folder(item):
                    if item.name not in SKIPPED_FOLDERS:
                        stack.append((item.path, rel + (item.name,), index + 1))
                else:
                    linked_folder(item, name)
        else:
            path = os.path.join(folder, segment)
            if last:
                take(path, "/".join(rel + (segment,)))
            elif os.path.isdir(path):
                real = real_path(path)
                if not is_inside(real, base_real):
                    # Named in the entry: a link the person wrote that leaves the project is refused.
                    raise GlobRefused("%s is a link out of the project folder (to %s): not followed" % (
                        "/".join(rel + (segment,)), display_path(real)))
                stack.append((path, rel + (segment,), index + 1))
        if len(found) > GLOB_FILES:
            raise GlobRefused("the glob matches more than %d files: narrow it" % GLOB_FILES)
    return sorted(found.items()), sorted(skipped.items())


def rule_base(rule, project):
    """The folder a rule's entries are relative to: the one holding its ``.briefing/``, or the project's."""
    if rule.scope == "project" and rule.path:
        return os.path.dirname(os.path.dirname(rule.path))
    return project


def build_entries(machine, harness, agent, rules):
    """Every FileEntry of the agent's declaration, then of each rule, in order."""
    project = machine.project(harness.key).folder
    entries = [FileEntry(text, "briefing", None, project) for text in agent.files]
    for rule in rules:
        base = rule_base(rule, project)
        entries += [FileEntry(text, "rule", rule, base) for text in rule.files]
    return entries


def file_verdict(found):
    """What happens to one matched file at a spawn, in the doctor's words."""
    if found.problem:
        return "refused: %s" % found.problem
    if found.duplicate is not None:
        return "delivered once, for %s" % (
            found.duplicate.rule.label() if found.duplicate.rule is not None else "the declaration")
    if found.loaded:
        return "not delivered: %s" % found.loaded
    return "delivered"


def file_problem_text(found, where=True):
    """A doctor problem line for a file that refuses the spawn (``where``: say which rule or declaration)."""
    entry = found.entry
    named = "'%s'" % entry.text if found.name == entry.text else "'%s' (from '%s')" % (found.name, entry.text)
    if where:
        named += " in %s" % (entry.rule.label() if entry.rule is not None else "the declaration")
    return "file %s: %s (relative to %s)" % (named, found.problem, entry.base)


def file_status(found):
    if found.problem:
        return "missing" if found.problem == "no such file" else "refused"
    if found.duplicate is not None:
        return "duplicate"
    return "loaded-by-harness" if found.loaded else "ok"


def entry_record(entry, resolved=True):
    """One ``files`` entry as the doctor's JSON carries it (docs/doctor.md).

    ``resolved``: for one agent's Briefing (read, deduplicated, checked against what the
    harness loads); otherwise a rule's entry on its own, matched only.
    """
    return {"entry": entry.text, "source": entry.source, "base": entry.base, "warning": entry.warning,
            "skipped": [{"path": name, "why": why} for name, why in entry.skipped],
            "rule": entry.rule and {"agents": list(entry.rule.patterns), "file": entry.rule.path,
                                    "index": entry.rule.index},
            "matches": [{"path": f.name if f.path else None, "file": f.path, "status": file_status(f),
                         "bytes": f.size, "problem": f.problem, "loaded": f.loaded,
                         "verdict": file_verdict(f) if resolved or f.problem else "matches"}
                        for f in entry.files]}


def rule_entries(machine, harness, rule):
    """The FileEntries of one rule on its own (no agent: what the harness loads is not known)."""
    base = rule_base(rule, machine.project(harness.key).folder)
    entries = [FileEntry(text, "rule", rule, base) for text in rule.files]
    match_entries(machine, entries)
    return entries


def entry_warning_text(entry):
    where = entry.rule.label() if entry.rule is not None else "the declaration"
    return "file '%s' in %s %s: it delivers nothing" % (entry.text, where, entry.warning)


def names_in(machine, path, folders):
    """``path`` relative to each of ``folders`` it lies in (real paths, "/" separators), nearest first."""
    real = machine.real_path(path)
    for folder in folders:
        top = machine.real_path(folder)
        if is_inside(real, top) and real != top:
            yield os.path.relpath(real, top).replace(os.sep, "/")
