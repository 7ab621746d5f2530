"""JSON in and out, at a fraction of the cost of ``import json``.

The C scanner of ``_json`` parses a payload without the pure-Python json package
(which pulls in ``re`` and more); ``dump_json`` writes the one object a hook run
prints. Both fall back to ``json`` where the C parts are missing. Neither recurses
per level of nesting (issue 36): what the C scanner cannot nest into, a loop reads.
"""








class _JSONContext(object):
    """Settings for the C scanner of ``_json``, as ``json.JSONDecoder`` would pass them."""

    strict = False
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"),
                      "-Infinity": float("-inf")}.__getitem__
    memo = {}


_scan_json = None


def parse_json(text):
    """Parse JSON text; ValueError when it is not JSON.

    ``import json`` pulls in ``re`` (with enum, functools and collections),
    about half of what a bare interpreter start costs. The hook reads JSON
    on every spawn, so it drives ``_json``'s C scanner directly and keeps
    the ``json`` module for the doctor and for interpreters without ``_json``.
    """
    global _scan_json
    if _scan_json is None:
        try:
            import _json
            _scan_json = _json.make_scanner(_JSONContext())
        except (ImportError, AttributeError):
            import json
            _scan_json = json.JSONDecoder(strict=False).raw_decode
    start, end = 0, len(text)
    while start < end and text[start] in SPACE:
        start += 1
    while end > start and text[end - 1] in SPACE:
        end -= 1
    try:
        value, stop = _scan_json(text[:end], start)
    except RecursionError:
        # Nested deeper than the C scanner goes (it recurses per level): a loop reads it.
        value, stop = parse_nested(text[:end], start)
    except StopIteration as exc:
        raise ValueError("invalid JSON at %s" % exc)
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError("invalid JSON: %s" % exc)
    if stop != end:
        raise ValueError("extra data at %d" % stop)
    return value


SPACE = " \t\n\r"


def parse_nested(text, at):
    """(the JSON value at ``at`` in ``text``, where it ends), in a loop: any depth, no recursion.

    Only what the C scanner gave up on comes here (issue 36: a spawn's arguments nested
    500 levels deep): the scanner still reads every scalar, this loop the containers.
    """
    end, stack = len(text), []  # stack: [container, its key awaiting a value (objects)]

    def skip(at):
        while at < end and text[at] in SPACE:
            at += 1
        return at

    def key_at(at, closing):
        """(the key at ``at`` and where its value starts), or (None, after ``closing``)."""
        at = skip(at)
        if closing and at < end and text[at] == "}":
            return None, at + 1
        if at >= end or text[at] != '"':
            raise ValueError("invalid JSON at %d: a key expected" % at)
        key, at = scalar(at)
        at = skip(at)
        if at >= end or text[at] != ":":
            raise ValueError("invalid JSON at %d: ':' expected" % at)
        return key, skip(at + 1)

    def scalar(at):
        try:
            return _scan_json(text, at)
        except StopIteration as exc:
            raise ValueError("invalid JSON at %s" % exc)

    at = skip(at)
    while True:
        char = text[at] if at < end else ""
        if char == "[":
            at = skip(at + 1)
            if at < end and text[at] == "]":
                value, at = [], at + 1
            else:
                stack.append([[], None])
                continue
        elif char == "{":
            key, at = key_at(at + 1, True)
            if key is None:
                value = {}
            else:
                stack.append([{}, key])
                continue
        else:
            value, at = scalar(at)
        while True:  # a value is complete: put it into its container, then a ',' or the container's end
            if not stack:
                return value, at
            container = stack[-1]
            if container[1] is None:
                container[0].append(value)
            else:
                container[0][container[1]] = value
            at = skip(at)
            char = text[at] if at < end else ""
            if char == ",":
                if container[1] is not None:
                    container[1], at = key_at(at + 1, False)
                else:
                    at = skip(at + 1)
                break
            if char != ("]" if container[1] is None else "}"):
                raise ValueError("invalid JSON at %d" % at)
            value, at = stack.pop()[0], at + 1


def dump_json(value):
    """Serialise dicts, lists, strings, numbers, booleans and None as ASCII JSON.

    A loop, not a recursion per level: whatever ``parse_json`` read, at any depth, is
    written back (Gemini CLI's guard echoes the spawn's arguments whole).
    """
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:
        from json.encoder import py_encode_basestring_ascii as quote
    out = []
    pending = [value]  # what is still to write: values, and text (a str inside a 1-tuple) between them
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            out.append(item[0])
        elif isinstance(item, str):
            out.append(quote(item))
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif item is None:
            out.append("null")
        elif isinstance(item, (int, float)):
            out.append(repr(item))
        elif isinstance(item, dict):
            pending.append(("}",))
            for index, (key, inner) in enumerate(reversed(list(item.items()))):
                pending.append(inner)
                pending.append(("%s%s: " % ("" if index == len(item) - 1 else ", ", quote(str(key))),))
            out.append("{")
        else:
            items = list(item)
            pending.append(("]",))
            for index in range(len(items) - 1, -1, -1):
                pending.append(items[index])
                if index:
                    pending.append((", ",))
            out.append("[")
    return "".join(out)


def nesting_deeper(value, limit):
    """Whether ``value`` holds lists or dicts nested more than ``limit`` levels deep (a loop)."""
    level = [value]
    for _ in range(limit):
        level = [inner for item in level if isinstance(item, (dict, list))
                 for inner in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return any(isinstance(item, (dict, list)) for item in level)


def json_lines_with(data, needle, start=0):
    """Each line of JSON-lines ``data`` (bytes) holding ``needle`` at or after ``start``, parsed.

    For a harness's records, read as bytes: a search finds the few lines worth parsing,
    and a line that is not a JSON object (cut at the start of a tail, or malformed) is
    skipped. Yields (offset of the line, the object).
    """
    at = data.find(needle, start)
    while at >= 0:
        begin = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        try:
            value = parse_json(data[begin:end].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            value = None
        if isinstance(value, dict):
            yield begin, value
        at = data.find(needle, end)
