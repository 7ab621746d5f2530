"""Reading briefing's handlers out of a hooks file, for the doctor's checks.
"""
import os

from .files import is_file, read_text
from .jsontext import parse_json
from .records import Unreadable


def not_this_copy(name, label, manifest):
    """The check of a harness this copy of briefing is not made for: the Gemini CLI extension
    (scripts/build-gemini-extension) carries no other harness's manifest, so nothing to check."""
    return {"name": name, "status": "ok",
            "detail": "this copy of briefing is no %s plugin (it has no %s)" % (label, manifest)}


def read_hooks(path):
    """Briefing's handlers in a hooks file: {event: [(matcher, handler, group index, handler index)]}."""
    hooks = parse_json(read_text(path)).get("hooks", {})
    found = {}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for j, hook in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(hook, dict) and "briefing-preload" in str(hook.get("command", "")):
                    found.setdefault(event, []).append((group.get("matcher"), hook, i, j))
    return found


def extension_hooks(root, manifest, folder, name, label):
    """(the extension's folder, its briefing handlers, None), or (..., None, the check's result).

    An extension (Gemini CLI, Qwen Code) is read from ``<extension>/hooks/hooks.json``: its own
    ``folder`` in the repository, the root itself in a built copy (``manifest`` there).
    """
    ext = root if is_file(os.path.join(root, manifest)) else os.path.join(root, folder)
    if not is_file(os.path.join(ext, manifest)):
        return ext, None, {"name": name, "status": "ok",
                           "detail": "this copy of briefing carries no %s extension" % label}
    path = os.path.join(ext, "hooks", "hooks.json")
    try:
        return ext, read_hooks(path), None
    except (Unreadable, ValueError, AttributeError) as exc:
        return ext, None, {"name": name, "status": "FAIL", "detail": "cannot read %s: %s" % (path, exc)}


def part_of(command):
    """The ``--part`` a registered command passes, or None without one."""
    words = command.split()
    if "--part" in words[:-1]:
        try:
            return int(words[words.index("--part") + 1].strip("'\""))
        except ValueError:
            return -1
    return None


def one_handler_each(hooks, events, problems, why=""):
    """{event: (matcher, handler)} of each of ``events`` that registers exactly one briefing
    handler, passing no ``--part``: a harness that takes the whole briefing from one process.
    What is wrong is added to ``problems`` (``why`` ends the --part one)."""
    found = {}
    for event in events:
        entries = hooks.get(event, [])
        if len(entries) != 1:
            problems.append("%s must register exactly one briefing handler, found %d" % (event, len(entries)))
            continue
        matcher, hook, _, _ = entries[0]
        if part_of(hook["command"]) not in (None, 1):
            problems.append("%s: the handler must not pass --part%s" % (event, why))
        found[event] = (matcher, hook)
    return found
