"""Framing, sealing and splitting a briefing into parts.

Each skill stands between ``<skill ... seal="S">`` and ``</skill seal="S">``; the
seal is chosen so that it occurs in no skill's text. Under Claude Code a
briefing is packed into at most PARTS parts of at most one hook output each,
a skill too large for one part going in labelled fragments.
"""
from .constants import MIN_FRAGMENT, PARTS
from .text import _utf8_len, escape_attr


HEADER = (
    "The skills below were loaded for you before your first turn: use them as they are, "
    "and do not look them up or load them again. Each skill's text stands between "
    '<skill … seal="{seal}"> and </skill seal="{seal}">. The seal never occurs inside any '
    "skill's text, so everything between those two tags belongs to that skill, even text that "
    "looks like a tag. A skill too large for one part comes in fragments (fragment=\"i/n\") that "
    "may arrive in any order: read them in order. Relative paths in a skill (references/, "
    "scripts/) are relative to its dir."
)


# Added to the header (and to every continuation) only when the briefing carries project files
# (docs/files.md), so that a briefing of skills alone reads exactly as before.
FILES_NOTE = (
    "Project files follow the skills, each between <file path=\"…\" seal=\"{seal}\"> and "
    "</file seal=\"{seal}\">, path relative to the project folder: they are the project's standing "
    "instructions, delivered as written; follow them, and do not read them again. The seal never "
    "occurs inside a file's text either, and a large file comes in fragments like a skill."
)


FILES_ONLY_HEADER = (
    "The project files below were loaded for you before your first turn: they are the project's "
    "standing instructions, delivered as written; follow them, and do not read them again. Each "
    "file's text stands between <file path=\"…\" seal=\"{seal}\"> and </file seal=\"{seal}\">, path "
    "relative to the project folder. The seal never occurs inside any file's text, so everything "
    "between those two tags belongs to that file, even text that looks like a tag. A file too large "
    "for one part comes in fragments (fragment=\"i/n\") that may arrive in any order: read them in order."
)


# Parts after the first arrive next to part 1, in whatever order the handlers finish.
CONTINUATION = ("This part continues the briefing; part 1 says how to read it: a skill's text "
                'stands between <skill … seal="{seal}"> and </skill seal="{seal}">.')


ABORT = (
    "STOP. Do not attempt the task you were given. This agent must work with skills that "
    "could not be loaded ({why}), and working without them is exactly what it must not do. "
    "Reply only with a short failure report: say that you were started without the skills you "
    "need, name them ({names}), and that the owner must fix {where}; `briefing-doctor` shows "
    "the details."
)


def make_seal(agent, skills):
    """A hex token that occurs in no skill's text, derived from the content.

    Every part handler renders the same briefing independently, so the seal
    must be deterministic; it is then lengthened until no body contains it,
    which makes a forged closing tag impossible rather than unlikely.
    """
    import zlib
    data = "\0".join([agent] + [s.name + "\0" + s.body for s in skills]).encode("utf-8", "replace")
    salt = zlib.crc32(data)
    seal = "%08x" % salt
    while True:
        salt = zlib.crc32(data, salt)
        seal += "%08x" % salt
        if len(seal) >= 12 and not any(seal[:len(seal)] in s.body for s in skills):
            return seal


def _cut(text, budget):
    """The longest prefix of ``text`` within ``budget`` UTF-8 bytes, ending at a newline if one is near."""
    if _utf8_len(text) <= budget:
        return text, ""
    lo, hi = 0, min(len(text), budget)
    while lo < hi:  # largest k with utf8_len(text[:k]) <= budget
        mid = (lo + hi + 1) // 2
        if _utf8_len(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    newline = text.rfind("\n", 0, lo)
    if newline >= lo - 200:  # a line break close by reads better, and costs little room
        lo = newline + 1
    lo = max(lo, 1)
    return text[:lo], text[lo:]


def is_file(item):
    """A project file (standing.StandingFile) rather than a skill: framed as <file path=…>."""
    return item.element == "file"


def item_open(item, seal, fragment=None):
    """The opening tag of what ``item.element`` names: <skill name= dir=> or <file path=>."""
    where = ('path="%s"' % escape_attr(item.name) if is_file(item) else
             'name="%s" dir="%s"' % (escape_attr(item.name), escape_attr(item.dir)))
    return '<%s %s%s seal="%s">\n' % (item.element, where, ' fragment="%s"' % fragment if fragment else "", seal)


def item_close(item, seal):
    return '\n</%s seal="%s">\n' % (item.element, seal)


def part_open(agent, index, count, seal):
    return '<briefing agent="%s" part="%s/%s" seal="%s">\n' % (escape_attr(agent), index, count, seal)


def part_close(seal):
    return '</briefing seal="%s">' % seal


def render_parts(agent, skills, budget, header=HEADER, continuation=CONTINUATION, limit=PARTS):
    """Split a briefing into labelled parts of at most ``budget`` UTF-8 bytes each.

    With ``budget`` None everything goes into one part. Skills are kept whole
    where they fit; a skill too large for one part is cut into fragments.
    Returns None when more than ``limit`` (PARTS) parts would be needed.
    ``header``/``continuation``: other templates ({seal}) for the same framing
    (loaded.py: the skills an agent loaded, given back after a compaction).
    """
    if not skills:
        return []
    seal = make_seal(agent, skills)
    header, continuation = header.format(seal=seal), continuation.format(seal=seal)
    if any(is_file(s) for s in skills):
        note = FILES_NOTE.format(seal=seal)
        header = "%s %s" % (header, note) if not all(is_file(s) for s in skills) else \
            FILES_ONLY_HEADER.format(seal=seal)
        continuation = "%s %s" % (continuation, note)
    header, continuation = header + "\n", continuation + "\n"
    if budget is None:
        layout = [[(s, None, s.body) for s in skills]]
    else:
        room = budget - _utf8_len(part_open(agent, 99, 99, seal) + part_close(seal))
        rooms = (room - _utf8_len(header), room - _utf8_len(continuation))
        if sum(s.size for s in skills) > rooms[0] + (limit - 1) * rooms[1]:
            return None  # the texts alone are more than every part holds: no need to lay them out
        layout = _pack(skills, seal, rooms, keep_whole=True)
        if layout is None or len(layout) > limit:
            layout = _pack(skills, seal, rooms, keep_whole=False)
        if layout is None or len(layout) > limit:
            return None
    count = len(layout)
    pieces_of = {}
    for part in layout:
        for skill, _, _ in part:
            pieces_of[id(skill)] = pieces_of.get(id(skill), 0) + 1
    seen = {}
    out = []
    for index, part in enumerate(layout, 1):
        chunks = [part_open(agent, index, count, seal), header if index == 1 else continuation]
        for skill, _, text in part:
            total = pieces_of[id(skill)]
            seen[id(skill)] = seen.get(id(skill), 0) + 1
            fragment = "%d/%d" % (seen[id(skill)], total) if total > 1 else None
            chunks += [item_open(skill, seal, fragment), text, item_close(skill, seal)]
        chunks.append(part_close(seal))
        out.append("".join(chunks))
    return out


def _pack(skills, seal, rooms, keep_whole):
    """Lay skills out in parts: [[(skill, is_fragment, text)]], or None past PARTS.

    ``rooms`` is the space of the first part and of every later one. With
    ``keep_whole`` a skill that fits in a fresh part starts one rather than
    being cut; otherwise every part is filled before the next begins.
    """
    first, room = rooms
    parts, left = [[]], first

    def next_part():
        parts.append([])
        return room

    for skill in skills:
        overhead = _utf8_len(item_open(skill, seal, "99/99") + item_close(skill, seal))
        if overhead + MIN_FRAGMENT > min(first, room):
            return None  # a dir so long that not even a fragment fits
        need = overhead + skill.size
        if need > left and parts[-1] and (keep_whole and need <= room or left - overhead < MIN_FRAGMENT):
            left = next_part()
            if len(parts) > PARTS:
                return None
        if need <= left:
            parts[-1].append((skill, False, skill.body))
            left -= need
            continue
        rest = skill.body
        while rest:
            if left - overhead < min(MIN_FRAGMENT, _utf8_len(rest)):
                left = next_part()
            piece, rest = _cut(rest, left - overhead)
            parts[-1].append((skill, True, piece))
            left -= overhead + _utf8_len(piece)
        if len(parts) > PARTS:
            return None
    return parts


def split_capacity(agent, skills, budget):
    """Bytes of skill text that PARTS parts of ``budget`` always carry: a lower bound, for messages.

    It pays for the labels, the header, the framing of every skill and of up
    to PARTS - 1 extra fragments, and a line break's worth of room per cut.
    """
    seal = "0" * 16
    fixed = PARTS * _utf8_len(part_open(agent, 99, 99, seal) + part_close(seal))
    note = _utf8_len(" " + FILES_NOTE.format(seal=seal)) if any(is_file(s) for s in skills) else 0
    fixed += _utf8_len(HEADER.format(seal=seal)) + (PARTS - 1) * _utf8_len(CONTINUATION.format(seal=seal))
    fixed += PARTS * note
    framing = [_utf8_len(item_open(s, seal, "99/99") + item_close(s, seal)) for s in skills] or [0]
    cuts = (PARTS - 1) * (max(framing) + 200)
    return PARTS * budget - fixed - PARTS - sum(framing) - cuts


def render_abort(briefing):
    """The instruction an agent gets instead of a partial briefing."""
    agent = briefing.agent
    failing = briefing.missing + briefing.file_problems
    if briefing.blocked and not failing:
        names, why = "the skills its definition declares", "its definition cannot be read"
    elif failing:
        names = briefing.listed(failing)
        why = "%d of the %d it declares" % (len(failing), len(briefing.checked) + sum(
            len(entry.files) for entry in briefing.files))
    elif briefing.unreachable and not briefing.too_large:
        # Never delivered (no context reaches such an agent): what the doctor shows says why.
        names, why = briefing.listed(briefing.items, problems=False), "no hook reaches it before its first turn"
    else:
        names = briefing.listed(briefing.items, problems=False)
        why = "the briefing is %d bytes, %s" % (briefing.total_bytes, briefing.size_limit())
    body = ABORT.format(why=why, names=names, where=briefing.where(failing or briefing.items, shown=True))
    return '<briefing agent="%s" status="abort">\n%s\n</briefing>' % (escape_attr(agent.name), body)
