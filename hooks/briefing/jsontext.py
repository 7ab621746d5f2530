"""JSON in and out, at a fraction of the cost of ``import json``.

The C scanner of ``_json`` parses a payload without the pure-Python json package
(which pulls in ``re`` and more); ``dump_json`` writes the one object a hook run
prints. Both fall back to ``json`` where the C parts are missing.
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
    space = " \t\n\r"
    start, end = 0, len(text)
    while start < end and text[start] in space:
        start += 1
    while end > start and text[end - 1] in space:
        end -= 1
    try:
        value, stop = _scan_json(text[:end], start)
    except (StopIteration, RecursionError) as exc:
        raise ValueError("invalid JSON at %s" % exc)
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError("invalid JSON: %s" % exc)
    if stop != end:
        raise ValueError("extra data at %d" % stop)
    return value


def dump_json(value):
    """Serialise dicts, lists, strings, numbers, booleans and None as ASCII JSON."""
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:
        from json.encoder import py_encode_basestring_ascii as quote
    if isinstance(value, str):
        return quote(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (quote(str(k)), dump_json(v)) for k, v in value.items())
    return "[%s]" % ", ".join(dump_json(v) for v in value)


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
