"""Reading files safely, and paths as people see them.

Every file the hook reads goes through ``read_text``: regular files only,
opened non-blocking, size-capped, never on a pseudo-filesystem, UTF-8. Also
where the plugin's own root is, and ``warn``, the one writer of stderr.
"""
import os
import stat
import sys

from .constants import MAX_FILE_BYTES, SHOWN_PATH
from .jsontext import parse_json
from .records import Unreadable
from .text import clip, for_people


def warn(message):
    """A diagnostic for people: stderr only, never stdout."""
    try:
        sys.stderr.write("briefing: %s\n" % for_people(message))
    except Exception:
        pass


# Kernel pseudo-filesystems: their files pass for regular files and hold the machine's state
# (/proc/self/environ is the hook's own environment, tokens included). Looked up once per process.
PSEUDO_MOUNTS = ("/proc", "/sys")


_pseudo_devices = None


def pseudo_filesystem(device):
    """The mount point of the pseudo-filesystem on ``device``, or None."""
    global _pseudo_devices
    if _pseudo_devices is None:
        _pseudo_devices = {}
        for mount in PSEUDO_MOUNTS:
            try:
                _pseudo_devices.setdefault(os.stat(mount).st_dev, mount)
            except OSError:
                pass
    return _pseudo_devices.get(device)


ABSENT = ("No such file or directory", "Not a directory")  # an Unreadable that is only not there


def open_regular(path):
    """(fd, fstat) of ``path`` opened for reading, if it is a regular file anyone wrote.

    FIFOs, devices and directories are refused without blocking: the file is
    opened non-blocking and checked with fstat before any read; so is a file on a
    pseudo-filesystem. Raises Unreadable; the caller closes the fd.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc))
    except (ValueError, TypeError):
        raise Unreadable("not a usable path")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        pseudo = pseudo_filesystem(info.st_dev)
        if pseudo:
            raise Unreadable("a file on a pseudo-filesystem (%s), not a file anyone wrote" % pseudo)
    except OSError as exc:
        os.close(fd)
        raise Unreadable(exc.strerror or str(exc))
    except Unreadable:
        os.close(fd)
        raise
    return fd, info


def read_text(path, cap=MAX_FILE_BYTES):
    """Read a regular file (``open_regular``) as UTF-8 (BOM allowed), at most ``cap`` bytes."""
    fd, info = open_regular(path)
    try:
        if info.st_size > cap:
            raise Unreadable("%d bytes, over the %d-byte limit" % (info.st_size, cap), info.st_size)
        chunks, total = [], 0
        while True:
            wanted = min(65536, info.st_size + 1 - total)
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            total += len(chunk)
            if total > info.st_size:
                # procfs, sysfs and friends report a size they do not have (/proc/self/environ: 0)
                raise Unreadable("holds more than the %d bytes it reports: its size cannot be trusted "
                                 "(a pseudo-filesystem file?)" % info.st_size)
            chunks.append(chunk)
            if len(chunk) < wanted and total == info.st_size:
                break  # a regular file reads short only at its end: no read more to learn it
        if total != info.st_size:
            raise Unreadable("%d bytes read of the %d it reports: its size cannot be trusted "
                             "(a pseudo-filesystem file, or one being written?)" % (total, info.st_size))
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable("not UTF-8 (byte %d)" % exc.start)
    return text[1:] if text.startswith("\ufeff") else text


def read_tail(path, size):
    """The last ``size`` bytes of a harness's own record file, or None when it cannot be read.

    For a Codex rollout or Copilot CLI's events.jsonl, which grow without bound: a
    regular file (``open_regular``), read with one ``pread`` at its end, so the cost
    does not grow with the file. A file that is not there is None quietly; any other
    trouble is None with a diagnostic.
    """
    try:
        fd, info = open_regular(path)
    except Unreadable as exc:
        if exc.reason not in ABSENT:
            warn("%s: %s" % (path, exc.reason))
        return None
    try:
        start = max(0, info.st_size - size)
        chunks, at = [], start
        while at < info.st_size:
            chunk = os.pread(fd, min(info.st_size - at, 4 * 1024 * 1024), at)
            if not chunk:
                break
            chunks.append(chunk)
            at += len(chunk)
    except OSError as exc:
        warn("%s: %s" % (path, exc.strerror or exc))
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_head(path, size):
    """The first ``size`` bytes of a harness's own record file, or None when it cannot be read
    (a regular file, ``open_regular``; one ``pread``, so the cost does not grow with the file)."""
    try:
        fd, _ = open_regular(path)
    except Unreadable:
        return None
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_json(path):
    """A JSON file as a value, or None when absent; malformed files are reported and skipped."""
    try:
        text = read_text(path)
    except Unreadable as exc:
        if exc.reason not in ABSENT:
            warn("%s: %s" % (path, exc.reason))
        return None
    try:
        return parse_json(text)
    except ValueError as exc:
        warn("%s: invalid JSON (%s)" % (path, exc))
        return None


def is_file(path):
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def path_kind(path):
    """"file" for a regular file (through a symlink), "other" for anything else there, None for nothing.

    One lstat answers the common cases (nothing there, a plain file); only a
    symlink costs a second call. Same verdicts as ``is_file`` and ``os.path.lexists``.
    """
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            return "other"  # a dangling link
    return "file" if stat.S_ISREG(mode) else "other"


def is_dir(path):
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def walk_files(root, suffix):
    """Every ``*suffix`` file under ``root``, at any depth, in a stable order.

    Symlinked folders are followed once: a loop is cut at the first repeat.
    """
    seen = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            info = os.stat(folder)
        except (OSError, ValueError):
            continue
        if (info.st_dev, info.st_ino) in seen:
            warn("%s: symlink loop, not followed again" % folder)
            continue
        seen.add((info.st_dev, info.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.is_dir():
                    if not entry.name.startswith("."):
                        subdirs.append(entry.path)
                elif entry.name.endswith(suffix):
                    yield entry.path
            except OSError as exc:
                warn("%s: %s, skipped" % (entry.path, exc.strerror or exc))
        stack.extend(reversed(subdirs))


# How many links deep ``real_path`` follows a link whose target holds a link, and so on. Every
# kernel gives up sooner (Linux after 40 links in one lookup, macOS and the BSDs after 32, Windows
# after 63 reparse points), so a chain this deep could not be opened anyway: past it, the rest of
# the path is left unresolved, as os.path.realpath leaves a link loop, and reading it fails.
LINK_DEPTH = 64


def real_path(path):
    """``os.path.realpath(path)``, in a loop instead of a recursion per nested link.

    Before Python 3.13, posixpath resolves a link whose target is another link by
    recursing, so a chain of about a thousand links (a project can hold one) raised
    RecursionError inside the hook. This is the same algorithm (3.8's
    ``_joinrealpath``, loops and all) with its stack made explicit and bounded by
    LINK_DEPTH. Elsewhere (Windows) it is ``os.path.realpath``, which does not recurse.
    """
    if os.path.sep != "/" or os.path.altsep:
        return os.path.realpath(path)
    path, rest, seen, outer = "", os.fspath(path), {}, []
    if rest.startswith("/"):
        path, rest = "/", rest[1:]
    while True:
        while rest:
            name, _, rest = rest.partition("/")
            if not name or name == ".":
                continue
            if name == "..":
                if path:
                    path, name = os.path.split(path)
                    if name == "..":
                        path = os.path.join(path, "..", "..")
                else:
                    path = ".."
                continue
            link = os.path.join(path, name)
            if not os.path.islink(link):
                path = link
                continue
            if link in seen and seen[link] is not None:
                path = seen[link]
                continue
            if link in seen or len(outer) >= LINK_DEPTH:
                # A loop, or a chain no kernel follows: the rest stays as written.
                path = os.path.join(link, rest)
                for outer_rest, _ in reversed(outer):
                    path = os.path.join(path, outer_rest)
                return os.path.abspath(path)
            seen[link] = None  # being resolved: meeting it again is a loop
            outer.append((rest, link))
            rest = os.readlink(link)
            if rest.startswith("/"):
                path, rest = "/", rest[1:]
        if not outer:
            return os.path.abspath(path)
        rest, link = outer.pop()
        seen[link] = path


def is_inside(path, folder):
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def top_level_files(root, suffix):
    """``*suffix`` regular files directly in ``root``."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    return [e.path for e in entries if e.name.endswith(suffix) and is_file(e.path)]


def read_text_or_empty(path):
    try:
        return read_text(path)
    except Unreadable:
        return ""


def display_path(path):
    home = os.environ.get("HOME")
    if path and home and is_inside(path, home) and path != home:
        return "~" + path[len(home.rstrip(os.sep)):]
    return path or "?"


def shown_path(path):
    """A path as a refusal shows it: its end, which names the file, within SHOWN_PATH bytes."""
    return clip(display_path(path), SHOWN_PATH, keep_end=True)


# The commands that run this code, both one folder below the plugin root.
ENTRY_POINTS = ("briefing-preload", "briefing-doctor")


def plugin_root():
    """The root of the plugin this run belongs to: the folder above the command that started it.

    ``hooks/briefing-preload`` (every hooks file) and ``bin/briefing-doctor`` both sit one
    folder below the root; a copy of the plugin finds its own root through its own command.
    Started any other way, the root is the one around this package (``hooks/briefing/``).
    """
    program = sys.argv[0] if sys.argv else ""
    if os.path.basename(program) in ENTRY_POINTS:
        return os.path.dirname(os.path.dirname(os.path.realpath(program)))
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
