"""The TOML that briefing reads: Codex role files, config.toml, the comment forms.

The ``# briefing: skills = [...]`` comment (Codex) and its HTML-comment twin
(Gemini CLI), a role's ``name``, the tables of config.toml that say where roles
and plugins are, and the legacy ``[briefing]`` table (through tomllib where it
exists, else a fallback checked against tomli in the tests).
"""
from .names import dedupe
from .records import ParseError
from .yaml_subset import WILDCARD_KEY, split_frontmatter


def _toml_string(raw, pos, line):
    """Read one TOML basic or literal string starting at raw[pos]; returns (value, end)."""
    quote = raw[pos]
    if quote == "'":
        end = raw.find("'", pos + 1)
        if end < 0:
            raise ParseError("unterminated string", line)
        return raw[pos + 1:end], end + 1
    end = raw.find('"', pos + 1)
    if end > 0 and "\\" not in raw[pos + 1:end] and raw[pos + 1:end].isprintable():
        return raw[pos + 1:end], end + 1  # the usual string: no escape, no control character
    out, i = [], pos + 1
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            ch, i = _toml_escape(raw, i, line)
            out.append(ch)
            continue
        if ch < " " and ch != "\t" or ch == "\x7f":
            raise ParseError("control character in string", line)
        out.append(ch)
        i += 1
    raise ParseError("unterminated string", line)


TOML_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


def _toml_escape(raw, i, line):
    """The escape sequence at raw[i] (a backslash) in a basic string: (its character, index after it)."""
    nxt = raw[i + 1:i + 2]
    if nxt in TOML_ESCAPES:
        return TOML_ESCAPES[nxt], i + 2
    if nxt in ("u", "U"):
        width = 4 if nxt == "u" else 8
        digits = raw[i + 2:i + 2 + width]
        if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise ParseError("bad unicode escape", line)
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise ParseError("bad unicode escape", line)
        return chr(code), i + 2 + width
    raise ParseError("bad escape in string", line)


def _toml_multiline_string(text, pos, line):
    """A TOML multi-line string opening at text[pos] (three quotes); returns (value, index after it).

    ``text`` has LF line ends. As TOML says: a newline right after the opening
    quotes is dropped; a basic string's line-ending backslash eats the
    whitespace and newlines after it; up to two quotes may stand right before
    the closing three and belong to the value.
    """
    quote = text[pos]
    delim, i, out = quote * 3, pos + 3, []
    if text.startswith("\n", i):
        i += 1
    while i < len(text):
        ch = text[i]
        if ch == quote and text.startswith(delim, i):
            end = i + 3
            while end < i + 5 and text.startswith(quote, end):
                end += 1
            out.append(quote * (end - i - 3))
            return "".join(out), end
        if ch == "\\" and quote == '"':
            k = i + 1
            while k < len(text) and text[k] in " \t":
                k += 1
            if k < len(text) and text[k] == "\n":
                while k < len(text) and text[k] in " \t\n":
                    line += text[k] == "\n"
                    k += 1
                i = k
                continue
            ch, i = _toml_escape(text, i, line)
            out.append(ch)
            continue
        if ch == "\n":
            line += 1
        elif ch < " " and ch != "\t" or ch == "\x7f":
            raise ParseError("control character in string", line)
        out.append(ch)
        i += 1
    raise ParseError("unterminated multi-line string", line)


def _toml_string_array(raw, pos, line, more=None):
    """Read a TOML array of strings starting at raw[pos] == '['.

    ``more`` yields further (lineno, text) lines for arrays that span lines.
    Returns (list, rest of the last line after ']').
    """
    items, i, expect_item = [], pos + 1, True
    while True:
        while i < len(raw) and raw[i] in " \t":
            i += 1
        if i >= len(raw) or raw[i] == "#":
            if more is None:
                raise ParseError("unterminated array", line)
            try:
                line, raw = next(more)
            except StopIteration:
                raise ParseError("unterminated array", line)
            i = 0
            continue
        ch = raw[i]
        if ch == "]":
            return items, raw[i + 1:]
        if ch in "\"'":
            if not expect_item:
                raise ParseError("missing comma between array items", line)
            if raw.startswith(ch * 3, i):
                raise ParseError("multi-line strings are not supported in a skills list", line)
            value, i = _toml_string(raw, i, line)
            items.append(value)
            expect_item = False
            continue
        if ch == "," and not expect_item:
            expect_item = True
            i += 1
            continue
        raise ParseError("skills must be an array of strings", line)


def _after_value(rest, line):
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise ParseError("unexpected text after the array: %r" % rest, line)


def toml_lines(text):
    """Yield (lineno, line, in_string) for a TOML text, tracking multi-line strings.

    ``in_string`` is true for a line that starts inside a multi-line string:
    such a line is string content, never a comment or a key.
    """
    delim = None
    # Only LF (or CRLF) ends a TOML line: str.splitlines() would also break at
    # U+2028 and friends inside strings and let a string pose as a comment.
    for n, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        inside = delim is not None
        yield n, line, inside
        i = 0
        while i < len(line):
            if delim is not None:
                end = line.find(delim, i)
                if end < 0:
                    break
                if delim == '"""':
                    back = end
                    while back > 0 and line[back - 1] == "\\":
                        back -= 1
                    if (end - back) % 2:
                        i = end + 1
                        continue
                i = end + 3
                while line.startswith(delim[0], i):  # up to two quotes may close with it
                    i += 1
                delim = None
                continue
            ch = line[i]
            if ch == "#":
                break
            if line.startswith('"""', i) or line.startswith("'''", i):
                delim = line[i:i + 3]
                i += 3
                continue
            if ch in "\"'":
                try:
                    _, i = _toml_string(line, i, n)
                except ParseError:
                    break
                continue
            i += 1


# The lists a comment declaration may give (docs/files.md for "files"), read in one pass.
COMMENT_LISTS = ("skills", "files")


def parse_skills_comment(text):
    """The Codex declaration ``# briefing: skills = ["a", "b"]``, or None (see parse_comment_lists)."""
    return parse_comment_lists(text)["skills"]


def parse_comment_lists(text):
    """{key: names or None} of the Codex comment lines ``# briefing: <key> = ["a", "b"]``.

    One pass over the role for every key of COMMENT_LISTS: several lines of a key
    add up (the first line's array exactly as TOML reads it, later lines what is
    new). Lines inside multi-line strings do not count.
    """
    found, seen = dict.fromkeys(COMMENT_LISTS), {key: set() for key in COMMENT_LISTS}
    for n, line, in_string in toml_lines(text):
        if in_string:
            continue
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        declared = _comment_declaration(stripped.lstrip("#"), n, '# briefing: %s = ["a", "b"]')
        if declared is not None:
            key, items = declared
            if found[key] is None:
                found[key] = list(items)
            else:  # the set keeps the merge linear
                found[key].extend(s for s in items if s not in seen[key])
            seen[key].update(items)
    return found


def _comment_declaration(rest, n, form):
    """(key, names) of ``briefing: <key> = [...]`` inside a comment (``rest`` follows its opener).

    The one reader of the comment form, for a Codex ``#`` line and a Gemini CLI
    ``<!-- -->`` line alike, for every key of COMMENT_LISTS. None for prose that
    is no declaration ("briefing: this role reviews"); ``form`` is the line as it
    should be written, with ``%s`` for the key, for the error.
    """
    rest = rest.strip()
    if not rest.startswith("briefing"):
        return None
    rest = rest[len("briefing"):].lstrip()
    if not rest.startswith(":"):
        return None
    rest = rest[1:].strip()
    key = next((k for k in COMMENT_LISTS if rest.startswith(k)), None)
    if key is None:
        return None  # prose such as "# briefing: this role reviews", not a declaration
    written, eq, value = rest.partition("=")
    if written.strip() != key or not eq:
        raise ParseError("expected %s" % form % key, n)
    value = value.strip()
    if not value.startswith("["):
        raise ParseError('briefing: %s must be an array such as ["a", "b"]' % key, n)
    items, rest = _toml_string_array(value, 0, n)
    _after_value(rest, n)
    return key, items


def parse_skills_html_comment(text):
    """The Gemini CLI declaration ``<!-- briefing: skills = ["a", "b"] -->``, or None."""
    return parse_html_comment_lists(text)["skills"]


def parse_html_comment_lists(text):
    """{key: names or None} of the Gemini CLI body lines ``<!-- briefing: <key> = ["a", "b"] -->``.

    Gemini CLI rejects an agent whose frontmatter has a key it does not know
    (facts/gemini-cli.md §2), so the declaration lives in the body, as an HTML
    comment on a line of its own, read by the Codex comment's reader, every key
    of COMMENT_LISTS in one pass. Several such lines add up. Lines in the
    frontmatter and in fenced code blocks (an agent that shows the syntax) do not
    count; line numbers are the file's.
    """
    fm, body = split_frontmatter(text)
    first = len(fm) + 2 if fm is not None else 0  # lines before the body
    if fm is None and text.startswith("\ufeff"):
        body = text[1:]
    form = '<!-- briefing: %s = ["a", "b"] -->'
    found, fence = dict.fromkeys(COMMENT_LISTS), None
    for n, line in enumerate(body.split("\n"), first + 1):
        stripped = line.rstrip("\r").strip()
        indent = len(line) - len(line.lstrip(" "))
        if fence is not None:
            mark, length = fence
            if indent <= 3 and stripped.startswith(mark * length) and not stripped.strip(mark):
                fence = None
            continue
        if indent <= 3 and stripped[:3] in ("```", "~~~"):
            mark = stripped[0]
            fence = (mark, len(stripped) - len(stripped.lstrip(mark)))
            continue
        if not stripped.startswith("<!--"):
            continue
        inner = stripped[4:]
        closed = inner.endswith("-->")
        if closed:
            inner = inner[:-3]
        elif "-->" in inner:
            if _comment_declaration(inner[:inner.index("-->")], n, form) is not None:
                raise ParseError("the briefing comment must stand on a line of its own", n)
            continue
        declared = _comment_declaration(inner, n, form)
        if declared is None:
            continue
        key, items = declared
        if not closed:
            raise ParseError("the briefing comment must end with --> on the same line: %s" % form % key, n)
        found[key] = (found[key] or []) + items
    return {key: None if items is None else dedupe(items) for key, items in found.items()}


def parse_wildcard_comment(text):
    """``# briefing: wildcard-rules = false`` in a Codex role: False, True, or None when absent."""
    found = None
    for n, line, in_string in toml_lines(text):
        stripped = line.strip()
        if in_string or not stripped.startswith("#") or WILDCARD_KEY not in stripped:
            continue
        rest = stripped.lstrip("#").strip()
        if not rest.startswith("briefing"):
            continue
        rest = rest[len("briefing"):].lstrip()
        if not rest.startswith(":"):
            continue
        key, eq, value = rest[1:].partition("=")
        if key.strip() != WILDCARD_KEY:
            continue
        value = value.strip()
        word = value.split("#", 1)[0].strip() if eq else ""
        if word not in ("true", "false"):
            raise ParseError("expected # briefing: %s = false" % WILDCARD_KEY, n)
        found = word == "true"
    return found


def parse_wildcard_html_comment(text):
    """``<!-- briefing: wildcard-rules = false -->`` on a body line of a Gemini CLI agent, or None.

    The opt-out of glob rules beside the declaration, in the same place and form
    (``parse_skills_html_comment``); fenced code blocks do not count.
    """
    if WILDCARD_KEY not in text:
        return None
    fm, body = split_frontmatter(text)
    first = len(fm) + 2 if fm is not None else 0
    found, fence = None, None
    for n, line in enumerate(body.split("\n"), first + 1):
        stripped = line.rstrip("\r").strip()
        if stripped[:3] in ("```", "~~~"):
            fence = None if fence == stripped[:3] else (fence or stripped[:3])
            continue
        if fence or not (stripped.startswith("<!--") and stripped.endswith("-->")):
            continue
        try:
            value = parse_wildcard_comment("# " + stripped[4:-3])
        except ParseError as exc:
            raise ParseError(exc.message.replace("# briefing:", "<!-- briefing:") + " -->", n)
        found = found if value is None else value
    return found


def has_briefing_table(text):
    """True when the role has a top-level ``briefing`` key, however spelled.

    ``[briefing]`` (the legacy form), ``[briefing.x]``, ``briefing.skills = …``
    and ``briefing = {…}`` all make Codex drop the whole role ("unknown field
    `briefing`"), so all of them earn the message to migrate.
    """
    top_level = True
    for _, line, in_string in toml_lines(text):
        if in_string:
            continue
        compact = line.strip().replace(" ", "").replace("\t", "")
        if compact.startswith(("[briefing]", "[briefing.", '["briefing"]', "['briefing']")):
            return True
        if compact.startswith("["):
            top_level = False
        elif top_level and compact.startswith(("briefing=", "briefing.")):
            return True
    return False


def parse_briefing_table(text):
    """``skills`` of the legacy ``[briefing]`` table: tomllib where it exists, else the fallback."""
    try:
        import tomllib  # Python 3.11+; imported here so other paths never pay for it
    except ImportError:
        return parse_briefing_table_fallback(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError("invalid TOML: %s" % exc)
    except RecursionError:
        # tomllib recurses once per level of nested arrays and tables (issue 36).
        raise ParseError("invalid TOML: values nested deeper than Python's tomllib reads")
    table = data.get("briefing")
    if table is None:
        return None
    skills = table.get("skills") if isinstance(table, dict) else None
    if skills is None:
        raise ParseError("[briefing] has no skills array")
    if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
        raise ParseError("[briefing] skills must be an array of strings")
    return skills


def parse_briefing_table_fallback(text):
    """The legacy ``briefing`` table's ``skills``, for Python < 3.11 (no tomllib).

    Understands exactly that one table and key, in the spellings TOML allows:
    ``[briefing]`` + ``skills = [...]`` (header quoted or spaced or not),
    ``briefing.skills = [...]`` and ``briefing = { skills = [...] }`` at the top
    level. Any other use of ``briefing`` is a ParseError, as it is for tomllib.
    """
    lines = iter([(n, line) for n, line, inside in toml_lines(text) if not inside])
    top_level = True
    in_table = False
    skills = None
    seen_table = False

    def take(value, n):
        if skills is not None:
            raise ParseError("briefing skills defined twice", n)
        value = value.strip()
        if not value.startswith("["):
            raise ParseError("briefing skills must be an array of strings", n)
        items, rest = _toml_string_array(value, 0, n, lines)
        return items, rest

    for n, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            header = _table_header(stripped, n)
            top_level = False
            in_table = header == ("briefing",)
            if in_table:
                if seen_table:
                    raise ParseError("[briefing] defined twice", n)
                seen_table = True
            elif header[:1] == ("briefing",):
                seen_table = True  # [briefing.x]: fine next to a skills array, an error without one
            continue
        key, eq, value = stripped.partition("=")
        if not eq:
            if in_table:
                raise ParseError("expected key = value in [briefing]", n)
            continue  # elsewhere: the continuation of another key's multi-line array
        key = key.replace(" ", "").replace("\t", "")
        if in_table and key.strip("\"'") == "skills":
            skills, rest = take(value, n)
            _after_value(rest, n)
        elif top_level and key == "briefing.skills":
            seen_table = True
            skills, rest = take(value, n)
            _after_value(rest, n)
        elif top_level and key == "briefing":
            seen_table = True
            inner = value.strip()
            if not inner.startswith("{"):
                raise ParseError("briefing must be a table with a skills array", n)
            inner_key, inner_eq, inner_value = inner[1:].partition("=")
            if inner_key.strip() != "skills" or not inner_eq:
                raise ParseError("briefing = { skills = [...] } expected", n)
            skills, rest = take(inner_value, n)
            rest = rest.strip()
            if not rest.startswith("}"):
                raise ParseError("briefing = { skills = [...] } expected", n)
            _after_value(rest[1:], n)
        elif top_level and key.startswith("briefing."):
            raise ParseError("only briefing.skills is understood", n)
    if seen_table and skills is None:
        raise ParseError("[briefing] has no skills array")
    return skills


def parse_role_name(text):
    """A role file's top-level ``name = "..."``, or None.

    Any TOML string spells it: basic, literal, or multi-line (three double or
    single quotes around ``reviewer`` are legal TOML, and tomllib reads ``reviewer``).
    """
    for n, line, in_string in toml_lines(text):
        if in_string:
            continue
        stripped = line.strip()
        if stripped.startswith("["):
            return None  # top-level keys come before the first table
        key, eq, value = stripped.partition("=")
        if eq and key.strip().strip("\"'") == "name":
            value = value.strip()
            if value[:3] in ('"""', "'''"):
                flat = text.replace("\r\n", "\n")
                start = 0
                for _ in range(n - 1):
                    start = flat.index("\n", start) + 1
                start = flat.index(value[:3], start + line.index("=") + 1)
                name, end = _toml_multiline_string(flat, start, n)
                stop = flat.find("\n", end)
                rest = (flat[end:] if stop < 0 else flat[end:stop]).strip()
                if rest and not rest.startswith("#"):
                    raise ParseError("unexpected text after the name: %r" % rest, n)
                return name
            if value[:1] in ("\"", "'"):
                name, end = _toml_string(value, 0, n)
                return name
            return None
    return None


def parse_codex_config(text):
    """The few keys briefing needs from a Codex ``config.toml``.

    Returns {table path tuple: {key: value}} for the string and boolean values
    of every table (``[agents.<name>]``, ``[plugins."<p>@<m>"]``,
    ``[hooks.state."<key>"]`` are the ones read), including dotted keys and
    one-level inline tables. Other values (arrays, numbers, dates) are skipped
    rather than misread; a broken header or a key without a value is a
    ParseError, as Codex itself refuses such a file.
    """
    tables = {}
    current = ()
    for n, line, in_string in toml_lines(text):
        if in_string:
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            current = _table_header(stripped, n)
            continue
        if "=" not in stripped:
            continue  # the continuation of a multi-line array
        path, pos = _toml_key(stripped, 0, n)
        if pos >= len(stripped) or stripped[pos] != "=":
            continue
        value = stripped[pos + 1:].strip()
        if not value or value.startswith("#"):
            raise ParseError("a key without a value", n)
        table = current + path[:-1]
        if value.startswith("{"):
            inner = _inline_table(value, n)
            tables.setdefault(table + path[-1:], {}).update(inner)
            continue
        parsed = _toml_scalar(value, n)
        if parsed is not None:
            tables.setdefault(table, {})[path[-1]] = parsed
    return tables


def _toml_scalar(value, line):
    """A string or boolean value (trailing comment allowed), or None for other kinds."""
    if value[:1] in ("\"", "'") and not value.startswith(value[0] * 3):
        parsed, end = _toml_string(value, 0, line)
        return parsed
    word = value.split("#", 1)[0].strip()
    if word in ("true", "false"):
        return word == "true"
    return None


def _inline_table(value, line):
    """``{ a = "x", b = true }`` (one level, strings and booleans) as a dict."""
    out, pos = {}, 1
    while True:
        while pos < len(value) and value[pos] in " \t,":
            pos += 1
        if pos >= len(value) or value[pos] == "}":
            return out
        path, pos = _toml_key(value, pos, line)
        if pos >= len(value) or value[pos] != "=":
            raise ParseError("expected = in an inline table", line)
        pos += 1
        while pos < len(value) and value[pos] in " \t":
            pos += 1
        if value[pos:pos + 1] in ("\"", "'"):
            parsed, pos = _toml_string(value, pos, line)
        else:
            end = pos
            while end < len(value) and value[end] not in ",}":
                end += 1
            word, pos = value[pos:end].strip(), end
            parsed = (word == "true") if word in ("true", "false") else None
        if parsed is not None and len(path) == 1:
            out[path[0]] = parsed


def _toml_key(text, pos, line):
    """A dotted key starting at ``pos`` (bare or quoted parts); returns (parts, position after it)."""
    parts = []
    while pos < len(text):
        ch = text[pos]
        if ch in " \t":
            pos += 1
            continue
        if ch in ("\"", "'"):
            value, pos = _toml_string(text, pos, line)
            parts.append(value)
        else:
            end = pos
            while end < len(text) and (text[end].isalnum() or text[end] in "_-"):
                end += 1
            if end == pos:
                break
            parts.append(text[pos:end])
            pos = end
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == ".":
            pos += 1
            continue
        break
    if not parts:
        raise ParseError("expected a key", line)
    return tuple(parts), pos


def _table_header(stripped, line):
    """``[a."b c".d]  # comment`` as ("a", "b c", "d"); array tables ``[[…]]`` give ()."""
    if stripped.startswith("[["):
        return ()
    parts, pos = _toml_key(stripped, 1, line)
    if stripped[pos:pos + 1] != "]":
        raise ParseError("a table header without its closing ']'", line)
    rest = stripped[pos + 1:].strip()
    if rest and not rest.startswith("#"):
        raise ParseError("unexpected text after a table header", line)
    return parts
