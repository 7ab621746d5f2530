"""The records every part passes around: errors, agents, skills, projects.

Plain classes with ``__slots__`` and no behaviour beyond a property or two, so
that parsers, discovery and resolution agree on one shape. ``ParseError``
carries the line it is about; ``Unreadable`` why a file cannot be used.
"""
import os



class ParseError(ValueError):
    """A declaration that cannot be read; ``line`` is 1-based within its file."""

    def __init__(self, message, line=None):
        ValueError.__init__(self, message)
        self.message = message
        self.line = line

    def __str__(self):
        return "line %d: %s" % (self.line, self.message) if self.line else self.message


class Unreadable(Exception):
    """A file that is not a regular, readable, UTF-8 file under the size cap."""

    def __init__(self, reason, size=None):
        Exception.__init__(self, reason)
        self.reason = reason
        self.size = size


class Frontmatter(object):
    """What briefing reads from an agent's YAML frontmatter."""

    __slots__ = ("name", "skills", "native", "wildcard_rules", "files")

    def __init__(self, name=None, skills=None, native=None, wildcard_rules=True, files=None):
        self.name = name  # frontmatter `name`, or None
        self.skills = skills  # briefing.skills, or None when not declared
        self.native = native  # Claude Code's own `skills:`, or None
        self.wildcard_rules = wildcard_rules  # briefing.wildcard-rules (README "Rules")
        self.files = files  # briefing.files: project files (docs/files.md), or None


class Agent(object):
    """An agent file found for a name, with its declaration (or why it has none)."""

    __slots__ = ("harness", "name", "path", "skills", "native", "legacy", "error", "warnings",
                 "wildcard_rules", "files", "refuses")

    def __init__(self, harness, name, path, skills=None, native=None, legacy=False, error=None,
                 warnings=None, wildcard_rules=True, files=None):
        self.harness = harness
        self.name = name
        self.path = path  # None for an agent without a file (a built-in), briefed by rules alone
        self.skills = skills or []
        self.native = native or []
        self.legacy = legacy  # Codex role declared by the old [briefing] table
        self.error = error  # a ParseError/Unreadable message when unreadable
        self.warnings = warnings or []  # what stands between the file and its spawn, for the doctor
        self.wildcard_rules = wildcard_rules  # False: the declaration opts out of glob rules
        self.files = files or []  # project files the declaration names (docs/files.md)
        # An unreadable declaration that certainly names skills (a programmatic definition,
        # docs/agent-sdk.md): refused like a missing skill, where an unreadable file is only reported.
        self.refuses = False

    @property
    def declares(self):
        return bool(self.skills or self.native or self.error or self.files)


# The origin of a skill from briefing's own private folders (private.py), which no harness reads.
PRIVATE_ORIGIN = "private"


class Skill(object):
    """One declared skill name, where (or whether) it resolved, and who delivers it.

    The delivery verdict is the same small concept for every harness that
    preloads an agent's own ``skills:`` field: a native entry that resolved is
    preloaded by the harness (``skip`` None), or skipped by it although it
    exists (``skip`` says why, and briefing delivers it). A skill that a
    setting turned off has a ``problem``, like a missing one.
    """

    __slots__ = ("name", "source", "path", "body", "size", "problem", "origin", "rule", "meta",
                 "override", "skip", "held", "passed", "near", "near_pool")
    element = "skill"  # its tag in a briefing (rendering.item_open); a project file's is "file"

    def __init__(self, name, source, path=None, body=None, size=None, problem=None, origin=None,
                 meta=None):
        self.name = name
        self.source = source  # "briefing", "native", or "rule" (then ``rule`` says which)
        self.rule = None
        self.path = path  # absolute SKILL.md path (or a legacy command's NAME.md)
        self.body = body  # text after the frontmatter, exactly
        self.size = size  # bytes of the body as delivered
        self.problem = problem  # None when usable
        self.origin = origin  # which root it came from, for people
        self.meta = meta or {}  # the frontmatter keys that decide who may load it (parse_skill_meta)
        self.override = None  # (key, value, settings file) of a skillOverrides entry that names it
        self.near = None  # after a miss: the closest names there are, once asked (near.near_of)
        self.near_pool = ()  # after a miss: (harness, machine), where near.near_of lists them from
        self.skip = None  # native entry the harness skips although it exists: why, in words
        # A skill only the harness itself holds (no file: ``path`` is None, e.g. Claude Code's
        # built-ins): why no hook can deliver it, in words. Only the harness's preload can.
        self.held = None
        # Candidates for the same name that the harness passes over before this one: [(where, why)]
        # (the doctor says so: the choice may rest on what a hook cannot see, e.g. paths:).
        self.passed = []

    @property
    def dir(self):
        return os.path.dirname(self.path) if self.path else None


class Project(object):
    """The folder a harness treats as the project, how it was found, and where it reads from."""

    __slots__ = ("folder", "source", "why", "folders", "reads")

    def __init__(self, folder, source, why, folders, reads):
        self.folder = folder  # absolute
        self.source = source  # short key of the signal: "CLAUDE_PROJECT_DIR", "transcript", "cwd"
        self.why = why  # the same, in words, for the doctor
        self.folders = folders  # the folders whose project config is read, nearest first
        self.reads = reads  # what is read in each of those folders, in words
