"""Read a briefing back out of hook output, the way an agent is told to.

This is the test-side reader of the framing that ``hooks/briefing-preload``
writes. It is deliberately independent of the hook's own code, so that a
change to the framing has to be made twice, on purpose.

A briefing arrives as one or more parts (one per SubagentStart handler under
Claude Code, which joins them in the order the handlers *finish*). Every part
is labelled::

    <briefing agent="reviewer" part="2/3" seal="3f9a1c0b7d2e">
    ...header...
    <skill name="alpha" dir="/abs/alpha" fragment="2/2" seal="3f9a1c0b7d2e">
    ...text...
    </skill seal="3f9a1c0b7d2e">
    </briefing seal="3f9a1c0b7d2e">

The seal never occurs inside any skill text, so the first closing tag that
carries it ends the element. ``fragment`` appears only on a skill split
across parts; the fragments, joined in order, are the body exactly.

Project files (docs/files.md) come after the skills, framed the same way by
their project-relative path: ``<file path="CLAUDE.md" seal="…">`` … ``</file
seal="…">``, fragments included; ``Rebuilt.files`` holds them by path.
"""
import re

PART_OPEN = re.compile(
    r'<briefing agent="(?P<agent>[^"]*)" part="(?P<i>\d+)/(?P<n>\d+)" seal="(?P<seal>[0-9a-f]+)">\n'
)
ABORT_OPEN = re.compile(r'<briefing agent="(?P<agent>[^"]*)" status="abort"')
SKILL_OPEN = re.compile(
    r'<skill name="(?P<name>[^"]*)" dir="(?P<dir>[^"]*)"'
    r'(?: fragment="(?P<j>\d+)/(?P<m>\d+)")? seal="(?P<seal>[0-9a-f]+)">\n'
)

FILE_OPEN = re.compile(
    r'<file path="(?P<name>[^"]*)"'
    r'(?: fragment="(?P<j>\d+)/(?P<m>\d+)")? seal="(?P<seal>[0-9a-f]+)">\n'
)

ATTR_ENTITY = re.compile(r"&(?:(amp|quot|lt|gt)|#x([0-9a-f]+));")


def unescape(value):
    """An attribute value as written: the four named entities and ``&#xN;`` for control characters.

    Not ``html.unescape``, which drops the C0 controls an escaped path may carry.
    """
    named = {"amp": "&", "quot": '"', "lt": "<", "gt": ">"}
    return ATTR_ENTITY.sub(lambda m: named[m.group(1)] if m.group(1) else chr(int(m.group(2), 16)), value)


class Rebuilt:
    """What a reader recovers from a set of parts, in any order."""

    def __init__(self):
        self.agent = None
        self.seal = None
        self.parts = {}  # part index -> part count
        self.skills = {}  # name -> body, rebuilt from its fragments
        self.dirs = {}  # name -> dir attribute (unescaped)
        self.order = []  # skill names in the order of their first fragment
        self.files = {}  # project-relative path -> file text, rebuilt from its fragments
        self.file_order = []  # file paths in the order of their first fragment
        self.aborted = False


def rebuild(contexts):
    """Rebuild every skill body from the given additionalContext strings.

    Raises AssertionError on anything an honest reader could not rebuild:
    mixed seals, missing parts or fragments, an element without its end.
    """
    result = Rebuilt()
    fragments = {}  # (kind, name) -> {j: (m, text, part_index, position in the part)}
    for text in contexts:
        if ABORT_OPEN.match(text):
            result.aborted = True
            result.agent = unescape(ABORT_OPEN.match(text).group("agent"))
            continue
        head = PART_OPEN.match(text)
        assert head, "part does not start with a <briefing … part=… seal=…> line: %r" % text[:200]
        seal = head.group("seal")
        assert result.seal in (None, seal), "parts carry different seals"
        result.seal = seal
        result.agent = unescape(head.group("agent"))
        i, n = int(head.group("i")), int(head.group("n"))
        assert i not in result.parts, "part %d arrived twice" % i
        result.parts[i] = n
        end_of_part = '</briefing seal="%s">' % seal
        assert text.rstrip("\n").endswith(end_of_part), "part %d lacks its closing line" % i
        pos = head.end()
        while True:
            # The next element, a skill or a file, whichever opens first.
            opens = [(m.start(), kind, m) for kind, m in (("skill", SKILL_OPEN.search(text, pos)),
                                                          ("file", FILE_OPEN.search(text, pos))) if m]
            if not opens:
                break
            _, kind, found = min(opens, key=lambda t: t[0])
            if found.start() >= text.rindex(end_of_part):
                break
            assert found.group("seal") == seal, "%s element with a foreign seal" % kind
            close = '\n</%s seal="%s">' % (kind, seal)
            stop = text.find(close, found.end())
            assert stop >= 0, "%s element without its closing tag" % kind
            name = unescape(found.group("name"))
            j, m = int(found.group("j") or 1), int(found.group("m") or 1)
            key = (kind, name)
            assert j not in fragments.setdefault(key, {}), "fragment %d of %s twice" % (j, name)
            fragments[key][j] = (m, text[found.end():stop], i, found.start())
            if kind == "skill":
                result.dirs[name] = unescape(found.group("dir"))
            pos = stop + len(close)
    counts = set(result.parts.values())
    assert len(counts) <= 1, "parts disagree on how many there are: %r" % counts
    if counts:
        (n,) = counts
        assert sorted(result.parts) == list(range(1, n + 1)), "parts missing: have %r of %d" % (
            sorted(result.parts), n)
    firsts = []
    for (kind, name), pieces in fragments.items():
        (m,) = {piece[0] for piece in pieces.values()}
        assert sorted(pieces) == list(range(1, m + 1)), "fragments of %s missing" % name
        (result.skills if kind == "skill" else result.files)[name] = "".join(
            pieces[j][1] for j in range(1, m + 1))
        firsts.append((pieces[1][2], pieces[1][3], kind, name))
    firsts.sort(key=lambda t: t[:2])
    result.order = [name for _, _, kind, name in firsts if kind == "skill"]
    result.file_order = [name for _, _, kind, name in firsts if kind == "file"]
    if result.order and result.file_order:
        last_skill = max(t[:2] for t in firsts if t[2] == "skill")
        assert all(t[:2] > last_skill for t in firsts if t[2] == "file"), "a file before a skill"
    return result
