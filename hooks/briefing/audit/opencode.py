"""OpenCode's (and Kilo's) records for the audit (docs/doctor.md "Audit"; measured on OpenCode
1.18.33 and Kilo 7.7.7).

Both keep every session of every project in one SQLite database, ``$XDG_DATA_HOME/opencode/
opencode.db`` (Kilo: ``kilo/kilo.db``), read here read-only, creating no file (``connect``). A main session is a
``session`` row without ``parent_id`` whose ``directory`` is this project; each child session
(a task call's subagent) has the parent's id, its ``agent`` and ``time_created``; a compaction
is a ``part`` of type ``compaction`` in the child's session; a spawn briefing refused is the
parent's ``task`` tool part with ``state.status: error`` and briefing's reason.

Neither CLI stores the system entries a plugin adds (``experimental.chat.system.transform``):
what reached a child is read from the CLI's own log, ``$XDG_DATA_HOME/<cli>/log/*.log``
(appended, never rotated, one ``timestamp=… level=… run=<process> message=…`` line each), where
the plugin logs briefing's audit line ``briefing: <agent> ← <names> (<size> kB)`` (or ``NOT
briefed, told to abort``, for a child it cannot refuse) at the session's first message in that
process, before the session's first step there (``loop``/``stream … session.id=<id>``): the
line goes to a session of the agent it names that the process ``created`` and had not started
yet (the CLI may exit before it logs the last child's first step), else the next one to start.
It holds the names and the total size only: the delivery is marked "(inferred)". The plugin
then adds the briefing to every request of that session in that process: after a compaction,
the session's next request (a ``stream`` line of the agent, not of ``compaction``) from a
process that briefed it is counted as briefed again, "(inferred)" too. The plugin's line for skills
a session loaded, given back after its compaction (issue 45), is read apart (loaded_of).
"""
import os
import re

from . import Run, Session, foreign_version, iso_seconds, iso_time, open_record

KNOWN = {"opencode": "1.", "kilo": "7."}
DATABASE = {"opencode": "opencode.db", "kilo": "kilo.db"}
LOG_NEEDLES = (b"message=created id=", b"message=loop ", b"message=stream ", b'message="briefing: ')
# A plugin line belongs to a session whose first request in that process follows it; of the next
# few such sessions, the one of the agent the line names (parallel task calls start together).
CANDIDATES = 8
# The plugin's refusals of a task call: a declaration's, and those of a hook run that could not
# happen (its folder gone, briefing.js alone, a crash, a timeout, an answer that is not JSON).
REFUSALS = ("briefing:", "briefing cannot run:", "briefing could not check this spawn")
SESSION_LIMIT = 200000  # rows of one session's parts read at most (a bound, like the byte bound)


def data_dir(machine, key):
    data = machine.env.get("XDG_DATA_HOME")
    data = data if data and os.path.isabs(data) else os.path.join(machine.home, ".local", "share")
    return os.path.join(data, key)


def connect(path):
    """A read-only connection to the CLI's database that creates no file beside it, or raise
    sqlite3.Error / OSError.

    ``mode=ro`` on a WAL database (both CLIs keep theirs in WAL mode) with no ``-wal`` beside it
    creates ``-wal`` and ``-shm`` and leaves them (measured, SQLite 3.40), in another program's
    folder; ``immutable=1`` reads the file as it is and creates nothing. That is only right while
    no ``-wal`` exists (nothing newer than the file itself): with one (the CLI is running, or died),
    ``mode=ro`` reads it through its ``-shm``; a ``-wal`` without its ``-shm`` could be read only by
    creating one, and is reported instead. A CLI starting between the check and the read can change
    the file under an immutable reader: what fails then is reported like any unreadable database.
    """
    import sqlite3
    from urllib.parse import quote
    if not os.path.isfile(path):
        raise OSError("no such file")
    wal, shm, journal = (os.path.lexists(path + suffix) for suffix in ("-wal", "-shm", "-journal"))
    if wal and not shm:
        raise OSError("its write-ahead log (%s-wal) has no -shm beside it, and reading it would create one; "
                      "it is read after the CLI's next start" % os.path.basename(path))
    flags = "mode=ro" if wal or journal else "mode=ro&immutable=1"
    db = sqlite3.connect("file:%s?%s" % (quote(os.path.abspath(path)), flags), uri=True, timeout=2.0)
    db.text_factory = lambda data: data.decode("utf-8", "replace")
    return db


def json_of(text):
    from ..jsontext import parse_json
    try:
        value = parse_json(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def sessions_of(key, machine, since, newest=None):
    from ..files import is_inside
    path = os.path.join(data_dir(machine, key), DATABASE[key])
    project = machine.project(key).folder
    if not os.path.exists(path):
        return []
    db = connect(path)  # a database it cannot read is reported by the audit
    try:
        rows = db.execute("SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL "
                          "AND time_updated >= ? ORDER BY time_updated DESC", (int(since * 1000),)).fetchall()
    finally:
        db.close()
    found = []
    for sid, directory, updated in rows:
        if isinstance(sid, str) and isinstance(directory, str) and isinstance(updated, (int, float)) \
                and is_inside(directory, project):
            found.append(Session(key, sid, path, updated / 1000.0))
    return found[:newest] if newest else found


def sessions(machine, since, newest=None):
    return sessions_of("opencode", machine, since, newest)


def read_of(key, machine, session, log):
    try:
        db = connect(session.path)
    except Exception as exc:
        log.problem(key, session.path, "unreadable: %s" % exc)
        return []
    try:
        return runs_of(key, machine, session, db, log)
    finally:
        db.close()


def read(machine, session, log):
    return read_of("opencode", machine, session, log)


def runs_of(key, machine, session, db, log):
    main = db.execute("SELECT agent, time_created, version FROM session WHERE id = ?", (session.id,)).fetchone()
    if main is None:
        return []
    why = foreign_version(main[2], KNOWN[key])
    if why:
        log.problem(key, session.path, why)
        return []
    children = db.execute("SELECT id, agent, time_created, version FROM session WHERE parent_id = ? "
                          "ORDER BY time_created", (session.id,)).fetchall()
    logged = log_lines(key, machine, log)
    agents = dict((sid, agent) for sid, agent, _, _ in children)
    agents[session.id] = main[0]
    briefing = {}  # session id -> [(seconds, process, frame)]: the log's lines of its agent
    taken = set()  # (session, process): one line per session's first message in a process
    for when, process, frame, candidates in logged.get("lines", ()):
        mine = [c for c in candidates if c in agents and agents[c] == frame["agent"]]
        sid = next((c for c in mine if (c, process) not in taken), None)
        if sid is not None:
            taken.add((sid, process))
            briefing.setdefault(sid, []).append((when, process, frame))
    reloads = loaded_of(logged, agents, session.id)
    runs = []
    main_run = Run(key, session.id, main[0], session.id, ms_time(main[1]), kind="session")
    for sid, agent, created, version in [(session.id, main[0], main[1], main[2])] + list(children):
        run = main_run if sid == session.id else Run(key, session.id, agent, sid, ms_time(created))
        run.file, run.version = session.path, version if isinstance(version, str) else None
        events = [(when, 0, process, frame) for when, process, frame in briefing.get(sid, ())]
        streams = logged.get(sid, {}).get("stream", [])
        for at in compactions_of(db, sid):
            later = [s for s in streams if s[0] > at and s[2] != "compaction"]
            if later:  # with no request after it, nothing went without the briefing
                events += [(at, 1, None, "compact"), (later[0][0], 2, later[0][1], "request")]
        briefed_in = set()  # the processes that briefed this session: they add it to each request
        for when, _, process, what in sorted(events, key=lambda e: (e[0], e[1])):
            if what == "compact":
                run.compact()
            elif what == "request":
                if process in briefed_in:
                    run.deliver_frame("system.transform (inferred)", run_frame(run))
            elif what.get("refusal"):
                run.refused = run.refused or what["refusal"]
            else:
                run.deliver_frame("chat.message (inferred)", what)
                if not briefed_in:
                    run.messages.append("what reached it is inferred from the plugin's line in the CLI's log, "
                                        "%s (the CLI does not store the system entry itself)" % iso_time(when))
                    if len(what["items"]) > 1:
                        run.messages.append("%.1f kB delivered in all: the log records the total size only" % (
                            what["total"] / 1000.0))
                briefed_in.add(process)
        for event in reloads.get(sid, ()):
            run.timeline.append(("reload", "session.compacted (inferred)", event))
        if sid != session.id or run.timeline or run.refused:
            runs.append(run)
    runs += refusals(key, db, session, log)
    for run in runs:
        if logged.get("cut") and not run.timeline and not run.refused:
            run.file = logged["cut"]  # its line may be in the part of the log not read
    if not logged.get(None):
        for run in runs:
            if run.agent_id:
                run.messages.append("no log of %s was found (%s): what reached the agents is unknown" % (
                    key, os.path.join(data_dir(machine, key), "log")))
    return runs


def loaded_of(logged, agents, main):
    """{session id: [{"skills", "left_out"}]}: the plugin's lines of loaded skills given back (issue 45).

    The plugin asks the hook at ``session.compacted`` and logs its audit line when the answer comes,
    with the agent's name but no session id (``main`` for a session it had not briefed): the line
    goes to the session of that agent whose summariser request (``stream … agent=compaction``) in
    the same process came last before it, one line per compaction. The plugin adds the skills to
    each later request of the session in that process: with none after the compaction, none carried
    them, and the line is not counted. The log holds names and sizes rounded to 0.1 kB."""
    out, taken = {}, set()
    for when, process, agent, skills, left_out in logged.get("loaded", ()):
        best = None
        for sid in agents:
            if agents[sid] != agent and not (agent == "main" and sid == main):
                continue
            streams = [s for s in logged.get(sid, {}).get("stream", ()) if s[1] == process]
            summaries = [s[0] for s in streams if s[2] == "compaction" and s[0] <= when]
            if not summaries or (sid, max(summaries)) in taken:
                continue
            if not any(s[0] > max(summaries) and s[2] != "compaction" for s in streams):
                continue  # no request after the compaction carried them
            if best is None or max(summaries) > best[1]:
                best = (sid, max(summaries))
        if best is not None:
            taken.add(best)
            out.setdefault(best[0], []).append({"skills": skills, "left_out": left_out})
    return out


def run_frame(run):
    for kind, _, frame in run.timeline:
        if kind == "deliver" and isinstance(frame, dict):
            return frame
    return {}


def compactions_of(db, sid):
    """The times (seconds) of the session's compaction parts."""
    out = []
    rows = db.execute("SELECT time_created, data FROM part WHERE session_id = ? AND data LIKE '%\"compaction\"%' "
                      "ORDER BY time_created LIMIT ?", (sid, SESSION_LIMIT))
    for created, data in rows:
        value = json_of(data)
        if value is not None and value.get("type") == "compaction" and isinstance(created, (int, float)):
            out.append(created / 1000.0)
    return out


def refusals(key, db, session, log):
    """A run per task call of the session that briefing refused (no child session was made)."""
    runs = []
    reasons = " OR ".join(["data LIKE ?"] * len(REFUSALS))
    rows = db.execute("SELECT time_created, data FROM part WHERE session_id = ? AND data LIKE '%\"task\"%' "
                      "AND (" + reasons + ") ORDER BY time_created LIMIT ?",
                      (session.id,) + tuple("%" + r + "%" for r in REFUSALS) + (SESSION_LIMIT,))
    for created, data in rows:
        value = json_of(data)
        state = value.get("state") if value and value.get("type") == "tool" and value.get("tool") == "task" else None
        if not isinstance(state, dict) or state.get("status") != "error":
            continue
        error, args = state.get("error"), state.get("input") if isinstance(state.get("input"), dict) else {}
        at = min([error.find(r) for r in REFUSALS if r in error] or [-1]) if isinstance(error, str) else -1
        if at >= 0:
            run = Run(key, session.id, args.get("subagent_type"), None,
                      ms_time(created) if isinstance(created, (int, float)) else None)
            run.refused, run.file = error[at:], session.path
            runs.append(run)
    return runs


def ms_time(value):
    return iso_time(value / 1000.0) if isinstance(value, (int, float)) else None


# ---------------------------------------------------------------------------------------------
# The CLI's log: what the plugin logged for each session, read once per audit.
# ---------------------------------------------------------------------------------------------

# Every pattern here is applied to log text anyone can append to (the model's own shell can), so
# each must take time linear in it: each is deterministic (a character has one way to match, and
# a repeat's characters differ from what follows it: no backtracking into it), and a search never
# rescans what a failed attempt read (tests/test_audit_opencode_log.py checks both on the parsed
# patterns). Fields are ``name=value`` (logfmt: the value a JSON string, or up to the next space).
NAME_RUN = re.compile(r"[\w.]+")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
BARE = re.compile(r"\S*")
ABORT = "briefing: NOT briefed, told to abort: agent '"
# The audit line: ``briefing: <agent> ← <names> (<size> kB)``, then the end or ``;`` (audit_line).
AUDIT_START = "briefing: "
ARROW = u" \u2190 "
SIZE = re.compile(r" \((\d+(?:\.\d+)?) kB\)")


def fields(line):
    r"""The line's fields, the first of each name kept: what ``findall`` of
    ``(\w[\w.]*)=("(?:[^"\\]|\\.)*"|\S*)`` finds, without its quadratic rescans of a long word
    that has no ``=``. Each scan starts where the last one ended; the only one that can read past
    its end is an unclosed string's, once a line at most (a later ``="`` would have closed it)."""
    from ..jsontext import parse_json
    out, pos, end = {}, 0, len(line)
    while True:
        run = NAME_RUN.search(line, pos)
        if run is None:
            return out
        pos = run.end()
        name = run.group().lstrip(".")
        if pos >= end or line[pos] != "=" or not name:
            continue
        value = QUOTED.match(line, pos + 1) if line.startswith('"', pos + 1) else None
        value = value or BARE.match(line, pos + 1)
        pos, value = value.end(), value.group()
        if value.startswith('"'):
            try:
                value = parse_json(value)
            except ValueError:
                continue
        out.setdefault(name, value)


def audit_line(message):
    r"""(agent, names, size) of the plugin's audit line, or None: what ``^briefing: (.*) ← (.*?)
    \((\d+(?:\.\d+)?) kB\)(?:;|$)`` matches, in linear time. The greedy agent runs to the last
    arrow before the last size that ends the line or a ``;``; the names, to the first such size
    after that arrow. ``.`` stops at a newline, and ``$`` matches before a final one."""
    if not message.startswith(AUDIT_START):
        return None
    newline = message.find("\n")
    text = message if newline < 0 else message[:newline]
    at_end = newline in (-1, len(message) - 1)
    sizes = [m for m in SIZE.finditer(text, len(AUDIT_START))
             if text.startswith(";", m.end()) or (m.end() == len(text) and at_end)]
    if not sizes:
        return None
    arrow = text.rfind(ARROW, len(AUDIT_START), sizes[-1].start())
    if arrow < 0:
        return None
    size = next(m for m in sizes if m.start() >= arrow + len(ARROW))
    return text[len(AUDIT_START):arrow], text[arrow + len(ARROW):size.start()], size.group(1)


def log_lines(key, machine, log):
    """{session id: {"stream": [(seconds, process, agent)]}, "lines": [(seconds, process, frame,
    [the sessions whose first request in that process came next])], None: True when a log was
    read, "cut": a log read in part}, from every log file of the CLI, within the audit's bounds."""
    memo = machine.state.setdefault("audit_opencode_logs", {})
    if key in memo:
        return memo[key]
    folder = os.path.join(data_dir(machine, key), "log")
    out = memo[key] = {}
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".log"))
    except OSError:
        return out
    for name in names:
        read_log(key, os.path.join(folder, name), log, out)
    return out


# The log is read in chunks, never a line at a time: a single line of any length (a pasted blob,
# a padded crash) costs at most the bytes the bound lets it read, and memory of CHUNK + LINE_BYTES.
# Every line the reader parses is far shorter than LINE_BYTES; a longer one is read past, unparsed.
CHUNK = 64 * 1024
LINE_BYTES = 64 * 1024


def bounded_lines(handle, limit, cut=False):
    """Each line (bytes, with its newline but for the last) of the next ``limit`` bytes of
    ``handle``, read CHUNK bytes at a time; None for a line longer than LINE_BYTES, read past and
    dropped. ``cut``: the read starts inside a line, which is dropped too."""
    left, carry, held, skipping = limit, [], 0, cut
    while left > 0:
        chunk = handle.read(min(CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        start = 0
        while True:
            stop = chunk.find(b"\n", start)
            if stop < 0:
                break
            if not skipping:
                carry.append(chunk[start:stop + 1])
                yield b"".join(carry) if held + stop + 1 - start <= LINE_BYTES else None
            elif not cut:
                yield None
            cut, skipping, carry, held, start = False, False, [], 0, stop + 1
        if not skipping and start < len(chunk):
            held += len(chunk) - start
            if held > LINE_BYTES:
                skipping, carry = True, []
            else:
                carry.append(chunk[start:])
    if carry or (skipping and not cut):
        yield b"".join(carry) if carry else None


def read_log(key, path, log, out):
    opened = open_record(path, log, key)
    if opened is None:
        return
    handle, info = opened
    # Per process: the sessions created and not yet active, those active (a loop step or a
    # request), and its plugin lines still taking candidates.
    waiting, active, pending = {}, {}, {}
    try:
        limit = min(log.per_file, max(log.bytes_left, 0))
        cut = info.st_size > limit
        if cut:
            # The log is appended to: its end holds the recent sessions, the ones audited.
            log.problem(key, path, "only its last %d of %d bytes were read (the audit's bound)" % (
                limit, info.st_size))
            out["cut"] = path
            handle.seek(info.st_size - limit)
        log.bytes_left -= limit if cut else min(info.st_size, limit)
        long_lines = 0
        for raw in bounded_lines(handle, limit, cut):
            if raw is None:
                long_lines += 1
                continue
            if not raw.startswith(b"timestamp=") or not any(n in raw for n in LOG_NEEDLES):
                continue
            out[None] = True
            line = fields(raw.decode("utf-8", "replace").rstrip("\n"))
            when, process, message = iso_seconds(line.get("timestamp")), line.get("run"), line.get("message")
            if when is None or not isinstance(message, str):
                continue
            sid = line.get("session.id") if message in ("stream", "loop") else None
            if message == "created" and isinstance(line.get("id"), str):
                waiting.setdefault(process, []).append(line["id"])
            elif isinstance(sid, str):
                if message == "stream":
                    out.setdefault(sid, {}).setdefault("stream", []).append((when, process, line.get("agent")))
                if sid not in active.setdefault(process, set()):
                    # The session's first step in this process: the plugin's line for it came before.
                    active[process].add(sid)
                    if sid in waiting.get(process, ()):
                        waiting[process].remove(sid)
                    for candidates in pending.get(process, ()):
                        if sid not in candidates:
                            candidates.append(sid)
                    pending[process] = [c for c in pending.get(process, ()) if len(c) < CANDIDATES]
            elif message.startswith("briefing: ") and loaded_line(message) is not None:
                out.setdefault("loaded", []).append((when, process) + loaded_line(message))
            elif message.startswith("briefing: "):
                frame = frame_of(message)
                if frame is not None:
                    # A child created and not yet active (the CLI may exit before it logs the
                    # child's first step), then the next sessions to start in this process.
                    candidates = list(waiting.get(process, ()))
                    pending.setdefault(process, []).append(candidates)
                    out.setdefault("lines", []).append((when, process, frame, candidates))
        if long_lines:
            log.problem(key, path, "%d line(s) longer than %d bytes were read past, not parsed" % (
                long_lines, LINE_BYTES))
    except OSError as exc:
        log.problem(key, path, "unreadable: %s" % (exc.strerror or exc))
    finally:
        handle.close()


LEFT_OUT = "left out for lack of room: "


def loaded_line(message):
    """(agent, [{"name", "bytes", "parts"}], [names left out]) of the plugin's line for loaded skills
    given back (loaded.Redelivery.audit), or None: ``briefing: <agent> ← loaded skills again after
    compaction: a (1.2 kB), b (0.4 kB)[; loaded by …][; left out for lack of room: c, d]``. Skill
    names hold no space, comma or semicolon (loaded.valid_loaded_name); an item that is no such
    name and size is dropped."""
    from ..loaded import AUDIT_PREFIX, valid_loaded_name
    text = message.split("\n", 1)[0]
    at = text.rfind(ARROW + AUDIT_PREFIX)
    if not text.startswith(AUDIT_START) or at < len(AUDIT_START):
        return None
    segments = text[at + len(ARROW + AUDIT_PREFIX):].split("; ")
    skills, left_out = [], []
    for item in segments[0].split(", "):  # "name (1.2 kB)"
        name, _, size = item[:-len(" kB)")].partition(" (") if item.endswith(" kB)") else ("", "", "")
        if valid_loaded_name(name) and size.replace(".", "", 1).isdigit() and size.isascii():
            skills.append({"name": name, "bytes": int(round(float(size) * 1000)), "parts": [1]})
    for segment in segments[1:]:
        if segment.startswith(LEFT_OUT):
            left_out += [n for n in segment[len(LEFT_OUT):].split(", ") if valid_loaded_name(n)]
    return (text[len(AUDIT_START):at], skills, left_out) if skills else None


def frame_of(message):
    """What an audit line of the plugin says was delivered, as ``framed`` gives it; a refusal
    (the abort instruction the child got) as {"refusal"}; None for another line."""
    match = audit_line(message)
    if match:
        names = [n for n in match[1].split(", ") if n]
        total = int(round(float(match[2]) * 1000))
        items = [{"name": n, "kind": "skill", "bytes": total if len(names) == 1 else None, "parts": [1]}
                 for n in names]
        return {"agent": match[0], "abort": False, "parts": [1], "count": 1, "items": items,
                "total": total}
    if message.startswith(ABORT):
        # The child told to abort (a command's subtask, which cannot be refused; docs/opencode.md).
        return {"agent": message[len(ABORT):].split("'", 1)[0],
                "refusal": "the agent got the abort instruction at its start (chat.message): briefing: "
                + message[len(ABORT) - len("agent '"):]}
    return None


def causes_of(key, machine, run):
    from ..harnesses.opencode import CLIS, config_home, plugin_entries
    cli = CLIS[key]
    folder = os.path.join(data_dir(machine, key), "log")
    if not os.path.isdir(folder):
        return ["%s keeps no log in %s: what the plugin did cannot be read" % (cli.label, folder)]
    # The config files the doctor's installed check reads (harnesses/opencode.py plugin_entries).
    for path, entry in plugin_entries(machine, cli):
        if "briefing" in entry:
            return ["%s's log shows no briefing line for this run: the plugin (%s) did not run, or did not "
                    "brief it" % (cli.label, path)]
    configs = [os.path.join(machine.project(key).folder, "%s.json" % key),
               os.path.join(config_home(machine, cli), "%s.json" % key)]
    return ["briefing's plugin is not in \"plugin\" of %s" % " or ".join(configs)]


def causes(machine, run):
    return causes_of("opencode", machine, run)
