"""Text as people see it, and as the hook measures it.

``for_people`` escapes what a terminal or a harness would interpret (controls,
bidirectional marks); ``escape_attr`` what would break a framing attribute;
``clip`` and ``shown_name`` keep every variable piece of a message bounded.
"""
from .constants import SHOWN_NAME


def clip(text, limit, keep_end=False):
    """``text`` in at most ``limit`` UTF-8 bytes, on one line, with an ellipsis where it was cut."""
    if not text.isprintable():  # a name or a path may hold a line break: a refusal line stays one
        text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text)
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - 3  # the ellipsis is 3 bytes
    if keep_end:
        return "\u2026" + data[len(data) - room:].decode("utf-8", "ignore")
    return data[:room].decode("utf-8", "ignore") + "\u2026"


def shown_name(name):
    """An agent's or a skill's name as a refusal shows it (see REFUSAL_NAMES)."""
    return clip(name if isinstance(name, str) else str(name), SHOWN_NAME)


# Bidirectional overrides and line separators reorder or break what a terminal shows.
UNSHOWN = frozenset("\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def for_people(text):
    """``text`` with every control character escaped, for a terminal or a harness's message line.

    Names, paths and bodies are untrusted: a raw ESC or BEL in a declared name
    would drive the terminal of whoever reads the doctor (``\\x1b]0;...\\x07``
    retitles it, colour codes hide text). Line breaks and tabs stay.
    """
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or not (code < 0x20 or 0x7F <= code < 0xA0 or ch in UNSHOWN):
            out.append(ch)
        elif code < 0x100:
            out.append("\\x%02x" % code)
        else:
            out.append("\\u%04x" % code)
    return "".join(out)


# One C-level pass instead of a Python loop per character: a briefing of thousands of skills
# frames each of them in every part it sizes and renders.
ATTR_ESCAPES = dict([(ord("&"), "&amp;"), (ord('"'), "&quot;"), (ord("<"), "&lt;"), (ord(">"), "&gt;"),
                     (127, "&#x7f;")] + [(code, "&#x%x;" % code) for code in range(32)])


def escape_attr(value):
    return str(value).translate(ATTR_ESCAPES)


def _utf8_len(text):
    return len(text.encode("utf-8"))


def iso_seconds(value):
    """Seconds since the epoch of an ISO 8601 UTC time as the harnesses record it
    (``2026-12-02T08:25:37.679Z``), or None. Days from the civil date (H. Hinnant's algorithm):
    no datetime or calendar import on a hook's path (Copilot CLI's compaction rule reads it)."""
    try:
        date, clock = value.rstrip("Z").split("T")
        year, month, day = (int(x) for x in date.split("-"))
        hours, minutes, seconds = clock.split(":")
        year -= month <= 2
        era = year // 400
        yoe = year - era * 400
        doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
        days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
        return days * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except (AttributeError, ValueError):
        return None
