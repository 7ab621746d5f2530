"""Skills an agent loaded while it worked, kept loaded after a compaction (issue 45, docs/loaded-skills.md).

A briefing covers the skills an agent *declares*. An agent also *loads* skills
while it works (Claude Code's ``Skill`` tool and ``/skill`` commands, Codex's
``$skill`` and reads of a ``SKILL.md``, Copilot CLI's ``skill`` tool), and a
compaction drops them: the harness keeps at most a cut copy, or nothing
(facts/invoked-skills.md). This module puts them back, once, whole, framed
and sealed like a briefing, within the same caps.

The API, in the order a hook uses it:

- A harness's record reader finds what was loaded: ``Harness.loaded_skills``
  ``(machine, payload) -> Found or None`` (in ``harnesses/<key>.py``, the one
  module that knows the harness's records). It returns None when this payload
  is not the moment to re-deliver (no compaction since the loads, or the
  harness's own rule says a hook already did), else a ``Found``:
  ``loaded`` the ``Loaded`` skills in the order the records show them
  (oldest first; a name loaded twice counts once, at its latest load),
  ``restored`` the names the harness itself brought back whole after this
  compaction, ``agent`` the agent's name for the framing (None: the main
  session), ``briefed`` the names briefing's own briefing already gives this
  agent (declared or by rule), when the reader knows them.
- ``Loaded(name, text=…, path=…, order=…, event=…)``: ``text`` the skill's text
  exactly as the harness put it into the context; or ``path``, a ``SKILL.md``
  the reader has checked lies under a skill root the harness searches, re-read
  here (its body after the frontmatter). ``event`` says what loaded it, in
  words for people and the audit ("Skill tool", "/name", "skill.invoked").
- ``enabled(machine, harness)``: the switch, ``"keep_loaded_skills": false`` in
  a rules file (rules.read_switch: the project's nearest file, then the user's;
  default on). Read only once something was found: nothing loaded, nothing read.
- ``redelivery(harness, machine, found, parts=PARTS)`` -> ``Redelivery`` or None:
  drops what the agent already holds (``briefed``, never twice; ``restored``),
  keeps the latest load of each name, and fits the rest into ``parts`` hook
  outputs of the harness's ``part_budget`` (or its ``whole_limit`` in one part),
  **most recent first**; what does not fit is left out and named, to the agent
  (in the framing's header) and to people (``audit()``).
- ``Redelivery.parts()`` the rendered parts (rendering.render_parts with
  ``LOADED_HEADER``), ``Redelivery.audit()`` the human's line, which
  audit/<key>.py reads back: ``briefing: <agent> ← loaded skills again after
  compaction: a (1.2 kB), b (0.4 kB)[; left out for lack of room: c]``.
- ``output(harness, machine, payload, part, event)``: all of it for one hook
  run: part ``part`` of the re-delivery as the harness's context output, with
  the audit line on the first part; None when there is nothing to print.

Imported only on the paths that may re-deliver (tests/test_lazy_imports.py).
"""
import os

from .constants import PARTS
from .names import valid_skill_name
from .text import _utf8_len, escape_attr, shown_name


SWITCH = "keep_loaded_skills"


LOADED_HEADER = (
    "You loaded the skills below earlier in this session; a compaction of your context dropped their "
    "text or cut it short, so here each one is again, whole, exactly as it was loaded: use them as "
    "before, and do not load them again. (Where a shortened copy of one is also in your context, "
    "this whole text is the one to follow.) Each skill's text stands between <skill … seal=\"{seal}\"> "
    "and </skill seal=\"{seal}\">. The seal never occurs inside any skill's text, so everything between "
    "those two tags belongs to that skill, even text that looks like a tag. A skill too large for one "
    "part comes in fragments (fragment=\"i/n\") that may arrive in any order: read them in order."
)


LOADED_CONTINUATION = ("This part continues the skills you loaded earlier; part 1 says how to read it: a "
                       'skill\'s text stands between <skill … seal="{seal}"> and </skill seal="{seal}">.')


# Appended to part 1's header when some loaded skills did not fit: the agent must know to load them again.
LEFT_OUT_NOTE = (" Not repeated here for lack of room, so load them again yourself if you still need "
                 "them: {names}.")


AUDIT_PREFIX = "loaded skills again after compaction: "


class Loaded(object):
    """One skill an agent loaded, as the harness's records show it."""

    __slots__ = ("name", "text", "path", "order", "event")

    def __init__(self, name, text=None, path=None, order=0, event=None):
        self.name = name  # as the harness named it (Claude Code: ``skill`` or ``plugin:skill``)
        self.text = text  # the text exactly as it was loaded, or None: re-read ``path``
        self.path = path  # the SKILL.md under one of the harness's skill roots, or None
        self.order = order  # where in the records it was loaded: larger is later
        self.event = event  # what loaded it, in words ("Skill tool", "/name", "skill.invoked")

    def __repr__(self):
        return "Loaded(%r, order=%r, event=%r)" % (self.name, self.order, self.event)


class Found(object):
    """What a harness's records show about one agent at one hook run (``Harness.loaded_skills``)."""

    __slots__ = ("loaded", "restored", "agent", "briefed")

    def __init__(self, loaded, restored=(), agent=None, briefed=None):
        self.loaded = list(loaded)  # [Loaded], oldest first
        self.restored = set(restored)  # names the harness brought back whole itself
        self.agent = agent  # the agent's name, or None: the main session
        self.briefed = briefed  # names briefing's own briefing gives it, or None: ask resolution


class Item(object):
    """A loaded skill as rendering frames it (the shape of records.Skill that rendering reads)."""

    __slots__ = ("name", "dir", "path", "body", "size", "loaded", "problem")
    element = "skill"

    def __init__(self, loaded, body):
        self.loaded = loaded
        self.name = loaded.name
        self.path = loaded.path
        self.dir = os.path.dirname(loaded.path) if loaded.path else (skill_dir_of(body) or "")
        self.body = body
        self.size = _utf8_len(body)
        self.problem = None


def skill_dir_of(text):
    """The folder Claude Code names on a loaded skill's first line (``Base directory for this skill: D``)."""
    head = "Base directory for this skill: "
    if text.startswith(head):
        return text[len(head):].split("\n", 1)[0].strip()
    return None


def enabled(machine, harness):
    """Whether loaded skills are kept in this project for this user (default: yes).

    ``"keep_loaded_skills": false`` (or true) at the top of a rules file; the
    project's files, nearest first, win over the user's, in the scopes the
    harness loads (``Harness.loads_scope``).
    """
    from .rules import read_switch
    files = [(scope, path) for scope, path in machine.rules_files(harness.key)
             if harness.loads_scope(machine, scope)]
    value, _ = read_switch(files, SWITCH)
    return value is not False


def briefed_names(harness, machine, agent):
    """The names briefing's own briefing gives ``agent`` (declared, native or by rule), or an empty set."""
    if not agent:
        return set()
    from .resolution import resolve
    briefing = resolve(harness, machine, agent, session=True)
    if briefing is None:
        return set()
    return {s.name for s in briefing.checked}


def body_of(loaded):
    """The text to deliver for ``loaded``: as loaded, else its file's body re-read; None if unreadable."""
    if loaded.text is not None:
        return loaded.text
    if not loaded.path:
        return None
    from .files import read_text
    from .records import Unreadable
    from .yaml_subset import split_frontmatter
    try:
        text = read_text(loaded.path)
    except Unreadable:
        return None
    try:
        return split_frontmatter(text)[1]
    except Exception:  # a frontmatter the harness would not load either: deliver the file as written
        return text


class Redelivery(object):
    """The loaded skills one agent gets back: ``items`` (most recent first), ``left_out`` (names)."""

    def __init__(self, harness, agent, items, left_out, parts):
        self.harness = harness
        self.agent = agent or "main"
        self.items = items
        self.left_out = left_out
        self._parts = parts

    def parts(self):
        return self._parts

    @property
    def total_bytes(self):
        return sum(i.size for i in self.items)

    def audit(self):
        line = "briefing: %s \u2190 %s%s" % (self.agent, AUDIT_PREFIX, ", ".join(
            "%s (%.1f kB)" % (i.name, i.size / 1000.0) for i in self.items) or "none")
        events = sorted({i.loaded.event for i in self.items if i.loaded.event})
        if events:
            line += "; loaded by %s" % ", ".join(events)
        if self.left_out:
            line += "; left out for lack of room: %s" % ", ".join(self.left_out)
        return line


def render(harness, agent, items, left_out, parts):
    """The framed parts for ``items`` under the harness's caps, or None when they do not fit."""
    from .rendering import render_parts
    header = LOADED_HEADER
    if left_out:  # names are untrusted: escaped, and their braces kept out of the seal's format()
        names = ", ".join(escape_attr(shown_name(n)) for n in left_out).replace("{", "{{").replace("}", "}}")
        header += LEFT_OUT_NOTE.format(names=names)
    budget = harness.part_budget
    if budget is None:
        if harness.whole_limit is not None and sum(i.size for i in items) > harness.whole_limit:
            return None
        parts = 1
    return render_parts(agent or "main", items, budget, header=header, continuation=LOADED_CONTINUATION,
                        limit=parts)


def redelivery(harness, machine, found, parts=PARTS):
    """The Redelivery of ``found`` in at most ``parts`` hook outputs, or None: nothing to give back."""
    briefed = found.briefed if found.briefed is not None else briefed_names(harness, machine, found.agent)
    latest = {}
    for index, loaded in enumerate(found.loaded):
        if not valid_loaded_name(loaded.name):
            continue  # an untrusted name that could not name a skill: never framed
        key = loaded.name
        if key in latest and (latest[key][0].order, latest[key][1]) > (loaded.order, index):
            continue
        latest[key] = (loaded, index)
    wanted = sorted((pair for name, pair in latest.items()
                     if name not in briefed and name not in found.restored),
                    key=lambda pair: (pair[0].order, pair[1]), reverse=True)  # most recent first
    items, left_out = [], []
    for loaded, _ in wanted:
        body = body_of(loaded)
        if body:
            items.append(Item(loaded, body))
    if not items or parts < 1:
        return None
    # Most recent first: each skill goes in if it still fits beside the more recent ones; what does not
    # is left out and named (an older small one may still fit after a large one was left out).
    kept = []
    for item in items:
        if render(harness, found.agent, kept + [item], left_out, parts):
            kept.append(item)
        else:
            left_out.append(item.name)
    while kept:
        rendered = render(harness, found.agent, kept, left_out, parts)  # the note of left-out names grew
        if rendered:
            return Redelivery(harness, found.agent, kept, left_out, rendered)
        left_out.append(kept.pop().name)
    return None


def valid_loaded_name(name):
    """A name as a harness names a loaded skill: a skill name, or ``plugin:skill``."""
    if not isinstance(name, str):
        return False
    plugin, colon, skill = name.rpartition(":")
    return valid_skill_name(skill) and (not colon or valid_skill_name(plugin))


def output(harness, machine, payload, part, event, first_part=1, parts=PARTS):
    """Part ``part`` of what ``payload``'s agent gets back, as ``harness``'s context output, or None.

    The re-delivery takes the hook outputs ``first_part`` .. ``first_part + parts - 1``
    (Claude Code: the parts a subagent's own briefing leaves free); its first one
    also carries the audit line, as the human's ``systemMessage``.
    """
    if harness.loaded_skills is None or part < first_part or part >= first_part + parts:
        return None
    found = harness.loaded_skills(machine, payload)
    if not found or not found.loaded or not enabled(machine, harness):
        return None
    again = redelivery(harness, machine, found, parts)
    if again is None:
        return None
    rendered = again.parts()
    index = part - first_part
    if index >= len(rendered):
        return None
    out = harness.context_output(event, rendered[index])
    if index == 0:
        out["systemMessage"] = again.audit()
    return out


def doctor_loaded(machine, harnesses, session, as_json, out):
    """``briefing-doctor --loaded [SESSION]``: what each agent of a session would get back at its next
    compaction (the harness's own rule for what it restores itself applies as in a new process: a
    doctor runs in none). 0, or 1 when no session was found."""
    import json
    from .harnesses import HARNESSES
    from .text import for_people
    rows = []
    for key in harnesses:
        harness = HARNESSES[key]
        if harness.loaded_payloads is None:
            continue
        on = enabled(machine, harness)
        for who, payload in harness.loaded_payloads(machine, session):
            found = harness.loaded_skills(machine, payload) if harness.loaded_skills else None
            again = redelivery(harness, machine, found) if found and found.loaded else None
            rows.append({"harness": key, "who": who, "enabled": on,
                         "loaded": [{"name": l.name, "event": l.event, "bytes": _utf8_len(body_of(l) or "")}
                                    for l in (found.loaded if found else [])],
                         "back": [{"name": i.name, "bytes": i.size} for i in again.items] if again else [],
                         "left_out": list(again.left_out) if again else [],
                         "parts": len(again.parts()) if again else 0})
    if as_json:
        out.write(json.dumps({"version": 1, "loaded": rows}, indent=2) + "\n")
        return 0 if rows else 1
    if not rows:
        out.write("briefing-doctor --loaded: no session found%s\n" % (
            " with id %s" % for_people(session) if session else ""))
        return 1
    out.write("briefing-doctor --loaded: what each agent would get back at its next compaction, as in a "
              "new process (--resume); what a harness brings back whole itself is never given twice "
              "(docs/loaded-skills.md)\n")
    for row in rows:
        out.write(for_people("%s %s\n" % (HARNESSES[row["harness"]].label, row["who"])))
        if not row["loaded"]:
            out.write("    loaded no skill\n")
            continue
        out.write(for_people("    loaded: %s\n" % ", ".join("%s (%s, %.1f kB)" % (
            l["name"], l["event"] or "?", l["bytes"] / 1000.0) for l in row["loaded"])))
        if not row["enabled"]:
            out.write("    gets nothing back: keep_loaded_skills is false in a rules file\n")
        elif row["back"]:
            out.write(for_people("    gets back at its next compaction, in %d part(s): %s%s\n" % (
                row["parts"], ", ".join("%s %.1f kB" % (b["name"], b["bytes"] / 1000.0) for b in row["back"]),
                "; left out for lack of room: %s" % ", ".join(row["left_out"]) if row["left_out"] else "")))
        else:
            out.write("    gets nothing back: its briefing already gives it every one of them\n")
    return 0
