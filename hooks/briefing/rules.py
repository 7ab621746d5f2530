"""Rules files (docs/rules.md): skills for agents that nobody can edit.

``.briefing/rules.json`` in the project folders, nearest first, then the user's
under $XDG_CONFIG_HOME. A file that cannot be used contributes no rule at all;
a nearer rule overrides a farther one with the same pattern and harnesses.
"""
import os

from .constants import SHOWN_NAME
from .files import ABSENT, display_path, read_text, shown_path
from .jsontext import parse_json
from .names import dedupe, glob_match, is_glob, split_plugin_name
from .records import ParseError, Unreadable
from .text import clip


# Briefing rules (README "Rules"): skills for agents that nobody can edit. The project file lives
# in a folder of briefing's own, which no harness reads (Codex drops a role over an unknown key,
# Claude Code loads .claude/agents and .claude/skills), in every folder the harness treats as the
# project, nearest first; the user file under $XDG_CONFIG_HOME, which is no harness's either.
RULES_FILE = os.path.join(".briefing", "rules.json")


USER_RULES_FILE = os.path.join("briefing", "rules.json")


class Rule(object):
    """One rule of a rules file: agent patterns and the skills it gives every agent they match."""

    __slots__ = ("patterns", "skills", "harnesses", "path", "scope", "index", "overridden", "files")

    def __init__(self, patterns, skills, harnesses, path=None, scope=None, index=0, files=()):
        self.patterns = patterns  # exact agent names, or globs with * and ?
        self.skills = skills  # names, deduplicated, in the order written
        self.harnesses = harnesses  # harness keys it is limited to, or None: every harness
        self.path = path  # the rules file
        self.scope = scope  # "project" or "user"
        self.index = index  # 1-based position in its file
        self.overridden = {}  # pattern -> the Rule of a nearer file with that pattern and harnesses
        self.files = list(files)  # project files (paths or globs) it gives them too (docs/files.md)

    def in_harness(self, harness_key):
        return self.harnesses is None or harness_key in self.harnesses

    def applies(self, harness_key, name, wildcards=True):
        """Whether the rule briefs agent ``name`` in that harness (``wildcards``: globs count)."""
        return self.in_harness(harness_key) and any(
            pattern not in self.overridden and (wildcards or not is_glob(pattern))
            and glob_match(pattern, name) for pattern in self.patterns)

    def label(self, shown=False):
        """How messages name the rule: its patterns and file.

        ``shown``: as a refusal shows it, the patterns' head and the file's end,
        each bounded, so that a long project path never hides that it is a rule.
        """
        patterns = ", ".join("'%s'" % p for p in self.patterns)
        if shown:
            return "rule %s in %s" % (clip(patterns, SHOWN_NAME), shown_path(self.path))
        return "rule %s in %s" % (patterns, display_path(self.path))


RULES_TOP_KEYS = ("rules", "description", "keep_loaded_skills")


# Top-level switches of a rules file (docs/loaded-skills.md): true or false, the nearest file's value wins.
SWITCHES = ("keep_loaded_skills",)


RULE_KEYS = ("agents", "skills", "files", "harness", "description")


def _names(value, what, allow_empty):
    """A string or a list of strings, as a list; ParseError naming ``what`` otherwise."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseError("%s must be a name or a list of names" % what)
    if not value and not allow_empty:
        raise ParseError("%s must name at least one" % what)
    return dedupe(value)


def valid_agent_pattern(pattern):
    """An agent name or glob that could name an agent: ``name`` or ``plugin:name``, ``*`` allowed."""
    plugin, skill = split_plugin_name(pattern.replace("*", "x").replace("?", "x"))
    return skill is not None


def parse_rules(text):
    """A rules file (README "Rules") as [Rule], in the order written; ParseError otherwise.

    JSON, so that it parses with the standard library everywhere and reads the same for
    every harness. Unknown keys are errors: a misspelt ``skill`` must not quietly brief nobody.
    """
    try:
        data = parse_json(text)
    except ValueError as exc:
        line = None
        try:
            import json  # only to say on which line: the error path alone pays for it
            json.loads(text)
        except ValueError as detail:
            line = getattr(detail, "lineno", None)
            exc = getattr(detail, "msg", exc)
        except Exception:  # RecursionError on absurd nesting: parse_json's message stands
            pass
        raise ParseError("not JSON: %s" % exc, line)
    switched = isinstance(data, dict) and any(k in data for k in SWITCHES) and "rules" not in data
    if not isinstance(data, dict) or not (switched or isinstance(data.get("rules"), list)):
        raise ParseError('expected an object with a "rules" list: {"rules": [{"agents": ..., '
                         '"skills": [...]}]}', 1)
    unknown = sorted(k for k in data if k not in RULES_TOP_KEYS)
    if unknown:
        raise ParseError("unknown key(s) %s; a rules file has %s" % (
            ", ".join(map(repr, unknown)), ", ".join(RULES_TOP_KEYS)))
    for key in SWITCHES:
        if key in data and not isinstance(data[key], bool):
            raise ParseError("%s must be true or false" % key)
    if switched:
        return []
    rules = []
    for index, entry in enumerate(data["rules"], 1):
        where = "rules[%d]" % (index - 1)
        if not isinstance(entry, dict):
            raise ParseError("%s must be an object with agents and skills" % where)
        unknown = sorted(k for k in entry if k not in RULE_KEYS)
        if unknown:
            raise ParseError("%s: unknown key(s) %s; a rule has %s" % (
                where, ", ".join(map(repr, unknown)), ", ".join(RULE_KEYS)))
        if "agents" not in entry:
            raise ParseError("%s has no 'agents'" % where)
        if "skills" not in entry and "files" not in entry:
            raise ParseError("%s has no 'skills' (nor 'files')" % where)
        patterns = _names(entry["agents"], "%s.agents" % where, False)
        for pattern in patterns:
            if not valid_agent_pattern(pattern):
                raise ParseError("%s.agents: %r is not an agent name or glob (name, plugin:name, "
                                 "with * and ?)" % (where, pattern))
        skills = _names(entry.get("skills", []), "%s.skills" % where, True)
        files = _names(entry.get("files", []), "%s.files" % where, True)
        harnesses = None
        if entry.get("harness") is not None:
            harnesses = tuple(_names(entry["harness"], "%s.harness" % where, False))
        rules.append(Rule(tuple(patterns), skills, harnesses, index=index, files=files))
    return rules


def read_rules(files):
    """The rules of ``files`` in precedence order, each marked when a nearer file overrides it.

    A file that cannot be read or parsed contributes no rule at all (README "Rules": a
    half-read file would brief some agents and silently skip others); it is reported instead.
    The same pattern for the same harnesses in a nearer file overrides the farther rule.
    """
    rules, errors, first = [], [], {}
    for scope, path in files:
        try:
            text = read_text(path)
        except Unreadable as exc:
            if exc.reason not in ABSENT:
                errors.append((path, exc.reason))
            continue
        try:
            found = parse_rules(text)
        except ParseError as exc:
            errors.append((path, str(exc)))
            continue
        for rule in found:
            rule.path, rule.scope = path, scope
            for pattern in rule.patterns:
                key = (pattern, tuple(sorted(rule.harnesses)) if rule.harnesses else None)
                winner = first.setdefault(key, rule)
                if winner.path != path:
                    rule.overridden[pattern] = winner
            rules.append(rule)
    return rules, errors


def matching_rules(machine, harness, agent):
    """The rules that brief ``agent`` in ``harness``, in the order their skills are added."""
    if agent.error:
        return []  # an unreadable file: its opt-out cannot be read, and it is not briefed anyway
    return [rule for rule in machine.rules(harness.key)[0]
            if rule.applies(harness.key, agent.name, agent.wildcard_rules)]


def read_switch(files, key):
    """(the value of top-level switch ``key``, the file that set it) from the first of ``files`` that
    sets it, in precedence order ([(scope, path)], as ``read_rules`` takes them); (None, None) when
    none does. A file that cannot be read or parsed sets nothing (``read_rules`` reports it)."""
    for _, path in files:
        try:
            text = read_text(path)
        except Unreadable:
            continue
        if key not in text:
            continue  # most rules files set no switch: no parse for them
        try:
            parse_rules(text)
            value = parse_json(text).get(key)
        except (ParseError, ValueError, AttributeError):
            continue
        if isinstance(value, bool):
            return value, path
    return None, None
