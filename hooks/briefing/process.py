"""The harness's own process: its command line, read from /proc.

Some facts reach a hook in no payload and no variable: which plugins
``claude --plugin-dir`` loaded, which agent ``copilot --agent NAME`` runs as.
The harness's own command line is the one reliable place they are written.
Read from /proc, so where there is none (macOS, Windows) nothing is seen.
"""
import os


def process_argv(pid):
    """The command line of process ``pid`` as a list, or None when it cannot be read."""
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as handle:
            raw = handle.read(256 * 1024)
    except (OSError, ValueError):
        return None
    argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0")]
    if argv and argv[-1] == "":
        argv.pop()
    return argv or None


def process_parent(pid):
    """The parent of process ``pid`` (from /proc/<pid>/stat), or None."""
    try:
        with open("/proc/%s/stat" % pid, "rb") as handle:
            stat_line = handle.read(4096)
    except (OSError, ValueError):
        return None
    fields = stat_line.rpartition(b")")[2].split()  # the name in (...) may hold spaces
    return fields[1].decode("ascii", "replace") if len(fields) > 1 and fields[1].isdigit() else None


def ancestor_named(programs, depth=8):
    """(pid, argv) of the nearest ancestor process whose program is one of ``programs``, or (None, None)."""
    pid = str(os.getppid())
    for _ in range(depth):
        if not pid or pid in ("0", "1"):
            return None, None
        argv = process_argv(pid)
        if argv and os.path.basename(argv[0]) in programs:
            return pid, argv
        pid = process_parent(pid)
    return None, None


def flag_values(argv, flag):
    """The values of ``flag VALUE`` and ``flag=VALUE`` in a command line, in order."""
    values = []
    args = list(argv or [])[1:]
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg == flag and index + 1 < len(args):
            values.append(args[index + 1])
        elif arg.startswith(flag + "="):
            values.append(arg[len(flag) + 1:])
    return values
