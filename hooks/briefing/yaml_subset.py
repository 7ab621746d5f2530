"""The YAML that briefing reads: agent frontmatter and skill frontmatter.

A subset with YAML's own semantics for what it accepts (plain, quoted and
folded scalars, block and flow lists, comments, the ``briefing:`` mapping), and
a ParseError with a line for what it does not, rather than a guess.
tests/yaml_cases.json holds its cases with the results of a real YAML parser.
"""
from .records import Frontmatter, ParseError


def may_spell(text, word):
    """False only when ``text`` cannot hold ``word`` in any YAML or TOML spelling.

    A pre-filter that skips parsing must never change a verdict: every
    spelling of a string holds it verbatim except an escape (``"revi\\u0065wer"``,
    a TOML line-ending backslash), YAML's doubled single quote (``'it''s'``) or
    YAML's folding of a scalar over lines (each word is still there).
    """
    if word in text or "\\" in text or ("'" in word and "''" in text):
        return True
    # YAML folds a scalar over lines: "a b" may be written "a", newline, "  b"
    parts = word.split()
    return parts != [word] and all(part in text for part in parts)


def split_frontmatter(text):
    """Return (frontmatter lines, body) or (None, text) when there is none.

    The body keeps its bytes exactly; only the opening and closing ``---``
    lines and what lies between them are removed.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip("\r") .rstrip() != "---":
        return None, text
    pos = first_end
    while True:  # the closing line starts with --- or ...: only those lines are looked at
        found = [at for at in (text.find("\n---", pos), text.find("\n...", pos)) if at >= 0]
        if not found:
            return None, text  # no closing line: not frontmatter
        at = min(found)
        end = text.find("\n", at + 1)
        line = text[at + 1:] if end < 0 else text[at + 1:end]
        if line.rstrip("\r").rstrip() in ("---", "..."):
            inner = text[first_end + 1:at].split("\n") if at > first_end else []
            return [piece.rstrip("\r") for piece in inner], ("" if end < 0 else text[end + 1:])
        pos = at + 1


YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
                "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
                "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}


YAML_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _yaml_printable(ch):
    """A character YAML allows raw in a document (YAML 1.2 §5.1; PyYAML's NON_PRINTABLE is the rest)."""
    code = ord(ch)
    return (code == 9 or 0x20 <= code <= 0x7E or code == 0x85 or 0xA0 <= code <= 0xD7FF
            or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF)


def _yaml_double(raw, pos, line):
    """A one-line YAML double-quoted scalar opening at raw[pos]: (value, index after it).

    Every escape YAML defines is decoded as YAML decodes it (``\\x65``,
    ``\\u0065``, ``\\e``, ``\\N``...); an unknown one, or a character YAML
    does not allow raw, is a ParseError.
    """
    out, i = [], pos + 1
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            nxt = raw[i + 1:i + 2]
            if nxt in YAML_ESCAPES:
                out.append(YAML_ESCAPES[nxt])
                i += 2
                continue
            width = YAML_HEX_ESCAPES.get(nxt)
            digits = raw[i + 2:i + 2 + width] if width else ""
            if not width or len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ParseError("unsupported escape %r in a double-quoted string" % raw[i:i + 2], line)
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise ParseError("bad unicode escape in a double-quoted string", line)
            out.append(chr(code))
            i += 2 + width
            continue
        if not _yaml_printable(ch):
            raise ParseError("a control character in a double-quoted string", line)
        out.append(ch)
        i += 1
    raise ParseError("unterminated double-quoted string", line)


def strip_comment_lines(text):
    """JSON text without its whole-line ``//`` comments.

    Copilot CLI heads ``config.json`` with ``// User settings belong in
    settings.json.`` lines (measured on 1.0.102). A JSON string cannot span
    lines, so a line that starts with ``//`` is never inside one.
    """
    return "\n".join("" if line.lstrip().startswith("//") else line for line in text.split("\n"))


def frontmatter_name(text):
    """The ``name:`` of a SKILL.md's frontmatter, or None (unreadable frontmatter has none)."""
    fm, _ = split_frontmatter(text)
    for n, line in enumerate(fm or (), 2):
        key, colon, value = line.partition(":")
        if colon and key.strip().strip("\"'") == "name" and not line[:1].isspace():
            try:
                return _unquote(value, n) or None
            except ParseError:
                return None
    return None


def _unquote(raw, line):
    """A YAML scalar as written after ``key:`` or ``- `` (comments removed), as a string.

    Read exactly as YAML reads it, or refused: a plain scalar YAML reads as
    something else than a string (``~``, ``null``, ``yes``, ``true``, ``42``,
    ``2026-12-01``), or one that starts with an indicator, is a ParseError.
    """
    raw = raw.strip()
    if not raw:
        return ""
    if raw[0] in "\"'":
        value, end = _yaml_quoted(raw, 0, line)
        rest = raw[end:].strip()
        if rest and not rest.startswith("#"):
            raise ParseError("unexpected text after a quoted string: %r" % rest, line)
        return value
    if raw.startswith("#"):
        return ""
    raw = _cut_plain_comment(raw).strip()
    if raw[:1] in YAML_INDICATORS or raw[:2] in ("- ", "? ", ": ") or raw in ("-", "?", ":"):
        raise ParseError("expected a plain name, found %r" % raw, line)
    kind = _plain_kind(raw)
    if kind:
        raise ParseError("%r is %s in YAML, not a name: quote it" % (raw, kind), line)
    return raw


# A plain scalar cannot start with these (YAML 1.2 c-indicator; '-', '?' and ':' are checked apart).
YAML_INDICATORS = frozenset(",[]{}#&*!|>'\"%@`")


# Plain scalars YAML 1.1 (PyYAML) or 1.2 (core schema) resolves to something else than a string.
YAML_NOT_STRINGS = {
    "null": ("~", "null", "Null", "NULL"),
    "a boolean": ("true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES", "no", "No",
                  "NO", "on", "On", "ON", "off", "Off", "OFF"),
    "a number": (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                 ".nan", ".NaN", ".NAN"),
    "a merge key": ("<<",), "a value key": ("=",),
}


YAML_WORDS = {word: kind for kind, words in YAML_NOT_STRINGS.items() for word in words}


YAML_NUMBER = None


def _plain_kind(raw):
    """What a plain scalar is to YAML when it is not a string ("null", "a number"...), else None."""
    global YAML_NUMBER
    kind = YAML_WORDS.get(raw)
    if kind:
        return kind
    if raw[:1] not in "0123456789+-.":
        return None  # no number or date starts otherwise: names never pay for the regex below
    if YAML_NUMBER is None:
        import re  # only for the rare name that starts like a number
        YAML_NUMBER = re.compile(
            r"[-+]?(?:0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])*"
            r"(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?)"
            r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+).*)?")
    return "a number or a date" if YAML_NUMBER.fullmatch(raw) else None


def _cut_plain_comment(raw):
    """A plain scalar without its trailing comment (a '#' after a space or a tab)."""
    i = raw.find("#", 1)
    while i > 0:
        if raw[i - 1] in " \t":
            return raw[:i]
        i = raw.find("#", i + 1)
    return raw


def _yaml_quoted(raw, pos, line):
    """A one-line quoted scalar opening at raw[pos] (either quote): (value, index after it)."""
    if raw[pos] == '"':
        return _yaml_double(raw, pos, line)
    out, i = [], pos + 1
    while True:
        j = raw.find("'", i)
        if j < 0:
            raise ParseError("unterminated single-quoted string", line)
        out.append(raw[i:j])
        if raw[j + 1:j + 2] == "'":
            out.append("'")
            i = j + 2
            continue
        return "".join(out), j + 1


def _plain_key_end(text, pos):
    """Where the ':' that ends a plain key starting at text[pos] stands, or -1 when it is no key.

    A plain key ends at ': ' (or a tab, or the end of the line); a comment
    (' #') before it means the line holds no key.
    """
    i = pos
    while True:
        i = text.find(":", i)
        if i < 0:
            return -1
        if i + 1 == len(text) or text[i + 1] in " \t":
            break
        i += 1
    head = text[pos:i]
    return -1 if " #" in head or "\t#" in head else i


def _block_key(text, pos, line):
    """The key of a ``key: value`` line at text[pos]: (key, index after its ':'), or (None, pos).

    Quoted keys are decoded as YAML decodes them (``"brief\\u0069ng":`` is
    ``briefing``). What the subset cannot read exactly as a key is refused: an
    explicit ``?`` key, a tagged, anchored or aliased key, a merge key.
    """
    ch = text[pos:pos + 1]
    if ch == "?" and text[pos + 1:pos + 2] in ("", " ", "\t"):
        raise ParseError("an explicit '?' key is not supported here", line)
    if ch in ("!", "&", "*"):
        raise ParseError("a key with a tag, an anchor or an alias is not supported here", line)
    if ch in "\"'":
        key, end = _yaml_quoted(text, pos, line)
        while end < len(text) and text[end] in " \t":
            end += 1
        if text[end:end + 1] != ":" or text[end + 1:end + 2] not in ("", " ", "\t"):
            return None, pos
        return key, end + 1
    colon = _plain_key_end(text, pos)
    if colon < 0:
        return None, pos
    key = text[pos:colon].strip()
    if key == "<<":
        raise ParseError("a merge key (<<) is not supported here", line)
    return key, colon + 1


def _scan_flow_piece(text, pos, quote, depth, stop=True):
    """Scan ``text`` from ``pos`` inside flow context or a quoted scalar.

    Returns (quote still open, flow depth, index where the scan stopped,
    index of a comment or None). A quote opens a scalar only where a token
    starts (``[it's]`` is the plain ``it's``). With ``stop`` the scan ends
    once the depth is back to 0 and no quote is open; without, it reads the
    whole line (for its comment and its open quote).
    """
    if quote is None and not ("'" in text or '"' in text or "#" in text):
        # the common line of a flow list: only brackets can matter, and str.count is linear in C
        if not stop:
            return None, depth, len(text), None
        if text.find("[", pos) < 0 and text.find("{", pos) < 0:
            closes = [c for c in (text.find("]", pos), text.find("}", pos)) if c >= 0]
            if not closes:
                return None, depth, len(text), None
            if depth <= 1:
                return None, 0, min(closes) + 1, None
    token_start = True
    i = pos
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                if quote == "'" and text[i + 1:i + 2] == "'":
                    i += 2
                    continue
                quote = None
                token_start = False
                if depth == 0 and stop:
                    return None, 0, i + 1, None
            i += 1
            continue
        if ch in "\"'" and token_start:
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return None, depth, i, i
        elif ch in "[{":
            depth += 1
            token_start = True
            i += 1
            continue
        elif ch in "]}":
            depth -= 1
            if depth <= 0 and stop:
                return None, 0, i + 1, None
        elif ch in ",:":
            token_start = True
            i += 1
            continue
        if ch not in " \t":
            token_start = False
        i += 1
    return quote, depth, i, None


def _skip_properties(text, pos):
    """Past the node properties (``!tag``, ``&anchor``) at text[pos] and the blanks after them."""
    while text[pos:pos + 1] in ("!", "&"):
        end = pos
        while end < len(text) and text[end] not in " \t":
            end += 1
        pos = end
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    return pos


# Characters that can open, on one line, a node that goes on over the next ones (or a key).
YAML_OPENERS = frozenset("\"'[]{}:|>&!*?#")


def _yaml_continued(lines):
    """For each frontmatter line: does it continue a node begun on a line above?

    A quoted scalar or a flow collection may go on over lines at any
    indentation, even at column 0 (``description: "...`` then
    ``briefing: {skills: [phantom]}`` then ``..."`` is one description), a
    block scalar's text is every more-indented line, and a plain scalar goes
    on over more-indented lines. Such a line is never a key of the frontmatter.
    """
    out = []
    quote, depth, block, plain = None, 0, None, None
    for _, text in lines:
        stripped = text.strip()
        indent = len(text) - len(text.lstrip(" "))
        if quote or depth:
            out.append(True)
            if quote is None and "#" not in text and "'" not in text and '"' not in text and not (
                    "]" in text or "}" in text):
                depth += text.count("[") + text.count("{")  # the usual line of a flow list
            else:
                quote, depth, _, _ = _scan_flow_piece(text, 0, quote, depth)
            continue
        if block is not None:
            if not stripped or indent > block:
                out.append(True)
                continue
            block = None
        if plain is not None:
            if not stripped:
                out.append(False)  # a blank line neither ends nor (alone) continues a plain scalar
                continue
            if indent > plain and not stripped.startswith("#"):
                out.append(True)
                continue
            plain = None
        out.append(False)
        if stripped[:2] == "- " and YAML_OPENERS.isdisjoint(stripped):
            plain = indent  # the usual '- name' item: a plain scalar, nothing else opens
        elif stripped and not stripped.startswith("#"):
            quote, depth, block, plain = _line_opens(text, indent)
    return out


def _line_opens(text, pos):
    """What a fresh line leaves open for the lines below: (quote, flow depth, block column, plain column)."""
    column = pos
    while text[pos:pos + 2] in ("- ", "? ", ": ", "-\t") or text[pos:] in ("-", "?", ":"):
        column = pos
        pos += 1
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    if pos >= len(text):
        return None, 0, None, None
    node = pos
    pos = _skip_properties(text, pos)
    ch = text[pos:pos + 1]
    if ch in "\"'" or ch in "[{":
        if ch in "\"'":
            quote, depth, end, _ = _scan_flow_piece(text, pos + 1, ch, 0)
        else:
            quote, depth, end, _ = _scan_flow_piece(text, pos + 1, None, 1)
        if quote or depth:
            return quote, depth, None, None
        rest = text[end:].lstrip(" \t")
        if not rest.startswith(":"):
            return None, 0, None, None
        pos = end + (len(text) - end - len(rest)) + 1  # a quoted or flow key: its value follows
        key_column = node
    elif ch in "|>":
        return None, 0, column, None
    elif ch == "*":
        return None, 0, None, None
    else:
        colon = _plain_key_end(text, pos)
        if colon < 0:
            return None, 0, None, column  # a plain scalar: more-indented lines continue it
        key_column, pos = node, colon + 1
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos >= len(text) or text[pos] == "#":
        return None, 0, None, None  # the value is the block below
    pos = _skip_properties(text, pos)
    ch = text[pos:pos + 1]
    if ch in "\"'":
        quote, depth, _, _ = _scan_flow_piece(text, pos + 1, ch, 0)
        return quote, depth, None, None
    if ch in "[{":
        quote, depth, _, _ = _scan_flow_piece(text, pos + 1, None, 1)
        return quote, depth, None, None
    if ch in "|>":
        return None, 0, key_column, None
    if ch in ("*", ""):
        return None, 0, None, None
    return None, 0, None, key_column


STR_TAGS = ("!!str", "!<tag:yaml.org,2002:str>")


def _name_scalar(raw, line):
    """The ``name:`` value, read exactly: a string tag and an anchor are legal YAML around it.

    A block scalar keeps or drops its line break by its chomping indicator,
    and what a harness makes of a name that ends in one was not measured, so
    it is refused with its line rather than guessed at.
    """
    raw = raw.strip()
    while raw[:1] in ("!", "&"):
        prop, _, rest = raw.partition(" ")
        if prop[0] == "!" and prop not in STR_TAGS:
            raise ParseError("name: is tagged %s, not a string" % prop, line)
        if prop == "&":
            raise ParseError("an anchor without a name", line)
        raw = rest.strip()
    if raw[:1] in ("|", ">"):
        raise ParseError("a block scalar name (%s) is not supported: write name: <name>" % raw.split()[0], line)
    return _unquote(raw, line)


def _split_flow(inner, line):
    """Split the inside of a flow list at top-level commas, honouring quotes; each item a string.

    An item YAML reads as a mapping (``a: b``, ``a:``, ``? a``) or a nested
    collection is refused, never taken for a name.
    """
    if "'" not in inner and '"' not in inner:
        # no quoted item: the split is str.split's (a list of 1 MiB stays linear and fast)
        if "[" in inner or "]" in inner or "{" in inner or "}" in inner:
            raise ParseError("nested collections are not allowed in a skills list", line)
        return _flow_items(inner.split(","), line)
    items, start, i, quote, token_start = [], 0, 0, None, True
    while i < len(inner):
        ch = inner[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                if quote == "'" and inner[i + 1:i + 2] == "'":
                    i += 1
                else:
                    quote = None
        elif ch in "\"'" and token_start:
            quote = ch
        elif ch in "[]{}":
            raise ParseError("nested collections are not allowed in a skills list", line)
        elif ch == ",":
            items.append(inner[start:i])
            start = i + 1
            token_start = True
            i += 1
            continue
        if ch not in " \t":
            token_start = False
        i += 1
    if quote:
        raise ParseError("unterminated quoted string in a flow list", line)
    items.append(inner[start:])
    return _flow_items(items, line)


def _flow_items(items, line):
    """The raw items of a flow list, as strings (a trailing comma allowed)."""
    out = []
    for item in items:
        text = item.strip()
        if text[:1].isalpha() and ":" not in text and "#" not in text and text not in YAML_WORDS:
            out.append(text)  # the usual plain name: a string, nothing to strip or refuse
            continue
        if text[:1] not in ("\"", "'") and (_plain_key_end(text + " ", 0) >= 0 or text[:2] == "? "
                                             or text == "?"):
            raise ParseError("%r in a skills list is a mapping in YAML, not a name" % text, line)
        out.append(_unquote(text, line))
    if out and out[-1] == "" and not items[-1].strip():
        out.pop()  # a trailing comma
    if "" in out:
        raise ParseError("empty item in a skills list", line)
    return out


def _flow_list(raw, line):
    """``[a, "b"]`` with an optional trailing comment, as a list of strings."""
    raw = raw.strip()
    quote, depth, end, _ = _scan_flow_piece(raw, 1, None, 1)
    if quote or depth:
        raise ParseError("unterminated flow list (missing ']')", line)
    if raw[end - 1:end] != "]":
        raise ParseError("a skills list is [a, b], not a mapping", line)
    rest = raw[end:].strip()
    if rest and not rest.startswith("#"):
        raise ParseError("unexpected text after ']': %r" % rest, line)
    return _split_flow(raw[1:end - 1], line)


def _gather_flow(value, lines, index):
    """A flow list may span lines: join them until its ']' (returns text, last index used).

    The lines that belong to it are the ones ``_yaml_continued`` marks, so each
    is scanned once. An item that is a quoted string over lines is refused (its
    folding is YAML's business, not a guess of ours).
    """
    pieces = [value.strip()]
    while index + 1 < len(lines) and lines[index + 1][2]:
        index += 1
        pieces.append(lines[index][1].strip())
    joined = []
    for piece in pieces:
        if "#" not in piece and "'" not in piece and '"' not in piece:
            joined.append(piece)
            continue
        quote, _, _, comment = _scan_flow_piece(piece, 0, None, 1, stop=False)
        if quote:
            raise ParseError("a quoted string spanning lines in a skills list", lines[index][0])
        joined.append(piece if comment is None else piece[:comment].rstrip())
    return " ".join(joined), index


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _continues(lines, index):
    """Does the value on line ``index`` go on below it (past blank lines)?"""
    for at in range(index + 1, len(lines)):
        _, text, continued = lines[at]
        if continued or text.strip():
            return continued
    return False


def _list_value(value, lines, index, key_indent, key, comma_string):
    """Read the value of ``key:``: an inline flow list, a comma string, or a block list.

    Returns (items, next index). ``lines`` are (lineno, text, continued) triples.
    """
    lineno = lines[index][0]
    value = value.strip()
    if value and not value.startswith("#"):
        if value.startswith("["):
            value, index = _gather_flow(value, lines, index)
            return _flow_list(value, lineno), index + 1
        if _continues(lines, index):
            raise ParseError("%s spans lines: write it on one line, or one '- name' per line" % key, lineno)
        if comma_string:
            scalar = _unquote(value, lineno)
            return [s.strip() for s in scalar.split(",") if s.strip()], index + 1
        raise ParseError("%s must be a list, e.g. [a, b] or one '- name' per line" % key, lineno)
    items = []
    index += 1
    item_indent = None
    while index < len(lines):
        lineno, text, continued = lines[index]
        stripped = text.strip()
        if not stripped or (stripped.startswith("#") and not continued):
            index += 1
            continue
        if continued:
            raise ParseError("an item of %s goes on over this line: one '- name' per line" % key, lineno)
        indent = len(text) - len(text.lstrip(" "))
        if stripped.startswith("- ") or stripped == "-":
            if indent < key_indent:
                break
            if item_indent is None:
                item_indent = indent
            elif indent != item_indent:
                raise ParseError("inconsistent indentation of the items of %s" % key, lineno)
            item = _block_item(stripped[1:].strip(), lineno, key)
            if not item:
                raise ParseError("empty item in %s" % key, lineno)
            items.append(item)
            index += 1
            continue
        if indent <= key_indent:
            break
        raise ParseError("expected '- name' items under %s" % key, lineno)
    return items, index


def _block_item(raw, line, key):
    """One ``- item`` of a block list, as a string; anything YAML reads otherwise is refused."""
    if raw[:1].isalpha() and ":" not in raw and "#" not in raw and raw not in YAML_WORDS:
        return raw  # the usual plain name (see _flow_items)
    if raw[:2] in ("- ", "? ") or raw in ("-", "?"):
        raise ParseError("a nested list or mapping in %s: an item is one name" % key, line)
    if raw[:1] not in ("\"", "'") and _plain_key_end(raw, 0) >= 0:
        raise ParseError("%r in %s is a mapping in YAML, not a name" % (raw, key), line)
    return _unquote(raw, line)


OUR_KEYS = ("name", "skills", "briefing")


def parse_frontmatter(text):
    """Read ``name``, ``briefing: skills`` and native ``skills`` from an agent file.

    Only a subset of YAML is understood, and it is checked against real YAML
    (tests/yaml_cases.json). Other keys are skipped with whatever is nested
    under them or continues them; anything the subset cannot read exactly as
    YAML does in the keys that matter raises ParseError with its line.
    """
    fm, _ = split_frontmatter(text)
    if fm is None:
        return Frontmatter()
    numbered = [(n + 2, line) for n, line in enumerate(fm)]
    lines = [(n, line, cont) for (n, line), cont in zip(numbered, _yaml_continued(numbered))]
    result = Frontmatter()
    seen = set()
    first = True
    index = 0
    while index < len(lines):
        lineno, line, continued = lines[index]
        stripped = line.strip()
        if stripped and "\t" in line[:len(line) - len(line.lstrip())] and not continued:
            raise ParseError("tab used for indentation", lineno)
        if continued or not stripped or stripped.startswith("#"):
            index += 1
            continue
        if first and (_indent(line) > 0 or stripped[0] in "[{"):
            raise ParseError("the frontmatter must be a block mapping of name: value lines", lineno)
        first = False
        if _indent(line) > 0 or line.startswith("-"):
            index += 1
            continue
        key, end = _block_key(line, 0, lineno)
        if key is None:
            raise ParseError("expected 'key: value'", lineno)
        value = line[end:]
        if key in OUR_KEYS:
            if key in seen:
                raise ParseError("%s: appears twice" % key, lineno)
            seen.add(key)
        if key == "name":
            result.name = _name_scalar(value, lineno)
            if _continues(lines, index):
                result.name, index = _fold_plain(result.name, value, lines, index + 1)
                continue
            index += 1
            if not _strip_comment(value.strip()):
                below = next((t for _, t, _ in lines[index:] if t.strip() and not t.strip().startswith("#")), "")
                if _indent(below) > 0:
                    raise ParseError("a name on the line below name: is not supported", lineno)
                result.name = None
        elif key == "skills":
            result.native, index = _list_value(value, lines, index, 0, "skills", True)
        elif key == "briefing":
            result.skills, result.wildcard_rules, result.files, index = _briefing_mapping(value, lines, index)
        else:
            index += 1
    return result


def _fold_plain(head, value, lines, index):
    """A plain ``name:`` that goes on over more-indented lines, folded as YAML folds it."""
    if value.strip()[:1] in ("\"", "'") or not head:
        raise ParseError("a name spanning lines is not supported", lines[index - 1][0])
    words = [head]
    while index < len(lines):
        blanks = index
        while blanks < len(lines) and not lines[blanks][2] and not lines[blanks][1].strip():
            blanks += 1  # blank lines count only when the scalar goes on after them
        if blanks >= len(lines) or not lines[blanks][2]:
            break
        text = lines[blanks][1].strip()
        words.append("\n" * (blanks - index) if blanks > index else " ")
        index = blanks + 1
        cut = _cut_plain_comment(" " + text)[1:].strip()
        words.append(cut)
        if cut != text:
            break  # a comment ends a plain scalar
    name = "".join(words)
    kind = _plain_kind(name)
    if kind:
        raise ParseError("the name is %s in YAML" % kind, lines[index - 1][0])
    return name, index


def _briefing_mapping(value, lines, index):
    """The ``briefing:`` mapping; returns (skills list, wildcard-rules flag, files list or None, next index)."""
    lineno = lines[index][0]
    value = _strip_comment(value.strip())
    if value:
        if _continues(lines, index):
            raise ParseError("briefing: in flow style must stay on one line", lineno)
        if value.startswith("{") and value.endswith("}"):
            inner = value[1:-1].strip()
            key, end = _block_key(inner, 0, lineno)
            if key != "skills":
                raise ParseError("briefing: expected {skills: [...]}", lineno)
            rest = inner[end:]
            if not rest.strip().startswith("["):
                raise ParseError("briefing.skills must be a list", lineno)
            return _flow_list(rest, lineno), True, None, index + 1
        raise ParseError("briefing: must be a mapping with a skills: list", lineno)
    skills, wildcard, files = None, None, None
    index += 1
    child_indent = None
    while index < len(lines):
        lineno, text, continued = lines[index]
        stripped = text.strip()
        if continued or not stripped or stripped.startswith("#"):
            index += 1
            continue
        indent = _indent(text)
        if "\t" in text[:len(text) - len(text.lstrip())]:
            raise ParseError("tab used for indentation", lineno)
        if indent == 0:
            break
        if child_indent is None:
            child_indent = indent
        if indent != child_indent:
            raise ParseError("inconsistent indentation under briefing:", lineno)
        key, end = _block_key(text, indent, lineno)
        if key is None:
            raise ParseError("expected 'skills:' under briefing:", lineno)
        if key == "skills":
            if skills is not None:
                raise ParseError("briefing.skills appears twice", lineno)
            skills, index = _list_value(text[end:], lines, index, indent, "briefing.skills", False)
            continue
        if key == "files":  # project files (docs/files.md): paths and globs, read as names are
            if files is not None:
                raise ParseError("briefing.files appears twice", lineno)
            files, index = _list_value(text[end:], lines, index, indent, "briefing.files", False)
            continue
        if key.strip().strip("\"'") == WILDCARD_KEY:
            wildcard = _yaml_bool(text[end:], lineno, "briefing.%s" % WILDCARD_KEY)
        index += 1  # another key of ours from a later version: skip it and its children
        while index < len(lines) and (lines[index][2] or not lines[index][1].strip()
                                      or _indent(lines[index][1]) > child_indent):
            index += 1
    if skills is None and wildcard is None and files is None:
        raise ParseError("briefing: has no skills: list", lines[index - 1][0] if index else None)
    return skills or [], wildcard is not False, files, index


# The key by which a declaration opts out of glob rules: `wildcard-rules: false` under
# `briefing:` (YAML), `# briefing: wildcard-rules = false` in a Codex role (README "Rules").
WILDCARD_KEY = "wildcard-rules"


def _yaml_bool(raw, line, key):
    # Only the spellings YAML 1.1 and 1.2 both read as booleans; a quoted "false" is a string.
    value = _cut_plain_comment(raw.strip()).strip() if raw.strip()[:1] not in ("'", '"') else None
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    raise ParseError("%s must be true or false" % key, line)


def _strip_comment(text):
    """``text`` without a trailing YAML comment ('#' after a space or tab, outside quotes)."""
    _, _, _, comment = _scan_flow_piece(text, 0, None, 1, stop=False)
    return text if comment is None else text[:comment].rstrip()


# The keys of a SKILL.md (or legacy command) frontmatter that decide whether Claude Code's
# native preload takes it (facts/claude-code.md §5.1) and under which names it resolves.
SKILL_META_KEYS = ("name", "description", "when_to_use", "disable-model-invocation", "paths")


def parse_skill_meta(text):
    """{key: raw value} for the SKILL_META_KEYS at the top level of a skill's frontmatter.

    A value is kept as written after ``key:`` (a trailing comment removed), so
    that ``true`` and ``"true"`` stay apart; a key whose value is nested below
    it (a block list, a block scalar) maps to that nested text. A skill file is
    someone else's and briefing only reads these few keys from it, so nothing
    here is an error: a file without readable frontmatter has none of them.
    """
    return skill_meta_of(split_frontmatter(text)[0])


def skill_meta_of(frontmatter):
    """``parse_skill_meta`` of the lines ``split_frontmatter`` gave (None: no frontmatter)."""
    meta = {}
    lines = frontmatter or []
    for index, line in enumerate(lines):
        if not line or line[0] in " \t#-":
            continue
        key, colon, value = line.partition(":")
        key = key.strip().strip("\"'")
        if not colon or key not in SKILL_META_KEYS or key in meta:
            continue
        value = _strip_comment(value.strip())
        if value in ("", "|", ">", "|-", ">-", "|+", ">+"):
            nested = []
            for below in lines[index + 1:]:
                if below.strip() and not below[:1].isspace() and not below.startswith("-"):
                    break
                nested.append(below.strip())
            value = "\n".join(n for n in nested if n)
        meta[key] = value
    return meta


def yaml_true(raw):
    """Whether a raw frontmatter value reads as true the way Claude Code takes it.

    YAML's boolean (true, True, TRUE) and, measured on 2.1.328, the string
    "true" too (facts/claude-code.md §5.1).
    """
    return raw in ("true", "True", "TRUE", '"true"', "'true'")


def yaml_present(raw):
    """Whether a raw frontmatter value says anything (not absent, empty or null)."""
    return raw is not None and raw not in ("", "~", "null", "Null", "NULL", '""', "''", "[]", "{}")


def meta_value(raw):
    """A raw frontmatter value as the plain string it stands for ('' when it is not one)."""
    try:
        return _unquote(raw or "", None)
    except ParseError:
        return ""
