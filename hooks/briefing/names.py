"""Names: what a skill or agent name may be, plugin names, globs, de-duplication.
"""








def dedupe(items):
    """``items`` in order, each once; linear, since a declaration may hold tens of thousands."""
    out, seen = [], set()
    for item in items or ():
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def valid_skill_name(name):
    """A skill name that can only name a folder directly inside a skill root.

    Names are untrusted: no separators, no dot names, no control characters,
    so ``<root>/<name>`` can never leave ``<root>``.
    """
    if not isinstance(name, str) or not name or len(name) > 255:
        return False
    if name in (".", "..") or name.startswith(".") or not name.isprintable():
        return False  # isprintable() also rules out C1 controls, U+2028/9 and other line breaks
    return "/" not in name and "\\" not in name and ":" not in name


def split_plugin_name(name):
    """``plugin:skill`` as (plugin, skill); a bare name as (None, name); invalid as (None, None)."""
    if not isinstance(name, str):
        return None, None
    plugin, colon, skill = name.partition(":")
    if not colon:
        return (None, name) if valid_skill_name(name) else (None, None)
    if valid_skill_name(plugin) and valid_skill_name(skill):
        return plugin, skill
    return None, None


def is_glob(pattern):
    return "*" in pattern or "?" in pattern


def glob_match(pattern, name):
    """``name`` matches ``pattern``, in which ``*`` is any run of characters and ``?`` any one.

    Nothing else is special (no ranges): agent names hold no brackets worth matching. ``*``
    crosses the ``:`` of ``plugin:agent``, so ``*`` is every agent. Case-sensitive, as agent
    names are. Linear backtracking to the last star, no ``re`` (start-up cost; README "Rules").
    """
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] != "*" and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)
