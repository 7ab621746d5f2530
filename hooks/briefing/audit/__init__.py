"""Proof of delivery (issue 40, docs/doctor.md "Audit"): what each agent run really received,
read from the harnesses' own records.

Doctor mode (``briefing-doctor --audit``) and the pre-flight's one-line check only; a spawn
never imports it. What differs per harness is one small module here, ``audit/<key>.py``,
imported on first use (``reader``), the way the registry imports a harness; a harness without
one is not audited. A reader module holds:

    sessions(machine, since)   -> [Session] of this project, newest first: names and times only
    read(machine, session, log) -> [Run], each agent run the session's records show, in order
    causes(machine, run)       -> [str]: what the configuration says about a run that declared
                                  skills and got none (optional)

A Run collects what the records say (deliveries, compactions, the refusal, what the harness
preloaded itself); everything else (the declaration as resolved now, the verdict, the
counts) is worked out here, the same for every harness. Records hold skill bodies and
transcripts: nothing here prints or returns any of that text, only names, sizes, times,
verdicts, and briefing's own refusal texts.
"""
import os
import sys
import time

from ..text import iso_seconds

VERDICTS = ("briefed", "refused", "lost-after-compaction", "not-briefed", "no-declaration")
FAILING = ("not-briefed", "lost-after-compaction")

# Bounds of one audit: sessions (of all harnesses together), bytes read, and the bytes read of
# one record file (its start: where a run's briefing is; compactions later in a longer file
# are not counted, and the file is reported). Past a bound, what is left is reported, not read.
AUDIT_SESSIONS = 5000
AUDIT_BYTES = 1024 * 1024 * 1024
AUDIT_FILE_BYTES = 128 * 1024 * 1024
PROGRESS_AFTER = 1.0  # seconds before the first progress line on stderr
# The longest record line the audit holds: a line past it (a pasted blob, a padded crash
# record) is skipped in bounded chunks, never read whole.
LINE_BYTES = 32 * 1024 * 1024
# The pre-flight looks at the last session only if it is this recent: older news is stale, and
# listing fewer days keeps SessionStart cheap (Codex keeps every project's rollouts in one tree).
PREFLIGHT_DAYS = 3
# And it reads the start of each record file only, where a run's briefing is (Claude Code's and
# Codex's per-agent files open with it); a run whose file is longer and shows none is not named.
PREFLIGHT_FILE_BYTES = 512 * 1024
PREFLIGHT_BYTES = 4 * 1024 * 1024
# And it lists the newest sessions only: a reader that must open records to tell this project's
# sessions from other projects' (Codex keeps every project's rollouts in one tree, Copilot CLI
# every session's folder in one) opens them newest first and at most this many, so that a busy
# history elsewhere costs no session start more than this.
LISTING_OPENS = 24


def reader(key):
    """The audit module of harness ``key``, or None when it has none."""
    try:
        return __import__("%s.%s" % (__name__, key), fromlist=["read"])
    except ImportError as exc:
        if getattr(exc, "name", None) not in (None, "%s.%s" % (__name__, key)):
            raise
        return None


class Session(object):
    """One session's records: ``path`` is its main record file, ``extra`` whatever else the reader needs."""

    __slots__ = ("harness", "id", "path", "mtime", "extra")

    def __init__(self, harness, session_id, path, mtime, extra=None):
        self.harness, self.id, self.path, self.mtime, self.extra = harness, session_id, path, mtime, extra


class Run(object):
    """One agent run as its records show it.

    ``kind``: ``subagent``, ``session`` (an agent session: ``claude --agent``) or ``teammate``.
    ``timeline`` is what happened in order: ("deliver", event, texts) (or, where the records hold
    no text, ("deliver", event, frame)) and ("compact", None, None).
    ``declared``: names the record itself keeps, or None (then they are resolved now).
    """

    def __init__(self, harness, session, agent, agent_id=None, when=None, kind="subagent"):
        # Records are untrusted: a field of the wrong type is as good as absent.
        self.harness, self.session = harness, text_or_none(session)
        self.agent, self.agent_id = text_or_none(agent), text_or_none(agent_id)
        self.time, self.kind = text_or_none(when), kind
        self.as_session = kind == "session"  # the main session runs as the agent (briefed at SessionStart)
        self.timeline, self.native, self.refused, self.declared = [], [], None, None
        self.hook_errors, self.messages, self.version, self.file = [], [], None, None

    def deliver(self, event, texts):
        self.timeline.append(("deliver", event, [t for t in texts if isinstance(t, str)]))

    def deliver_frame(self, event, frame):
        """A delivery the records give as names and sizes, not as text: ``frame`` as ``framed`` returns it."""
        self.timeline.append(("deliver", event, frame))

    def compact(self):
        self.timeline.append(("compact", None, None))

    def infer(self, event, items=()):
        """A delivery the harness does not record, inferred by the reader from what it does record
        (Qwen Code: the run started past briefing's guard): ``event`` says how, marked "(inferred)";
        ``items`` [(name, "skill" or "file")] what it carried, sizes unknown."""
        self.timeline.append(("infer", event, [{"name": n, "kind": k, "bytes": None, "parts": [1], "inferred": True}
                                               for n, k in items]))


def text_or_none(value):
    return value if isinstance(value, str) and value else None


class Log(object):
    """What one audit read, skipped and spent: the bounds, the problems, the progress line."""

    def __init__(self, sessions=AUDIT_SESSIONS, total=AUDIT_BYTES, per_file=AUDIT_FILE_BYTES, err=None,
                 quiet=False):
        self.sessions_left, self.bytes_left, self.per_file = sessions, total, per_file
        self.problems = []  # {"harness", "file", "problem"}
        self.started = self.shown = time.monotonic()
        self.err = err or sys.stderr
        self.quiet = quiet
        self.read_sessions = 0

    def problem(self, harness, path, text):
        self.problems.append({"harness": harness, "file": path, "problem": text})

    def tick(self, what):
        """A progress line on stderr once a second, from the first second on."""
        now = time.monotonic()
        if not self.quiet and now - self.started >= PROGRESS_AFTER and now - self.shown >= PROGRESS_AFTER:
            self.shown = now
            try:
                # ``what`` names a session from the records (a file name, a folder, a database id):
                # escaped like every line that carries record text, so none drives the terminal.
                from ..text import for_people
                self.err.write(for_people("briefing-doctor --audit: %d session(s) read, %s" % (
                    self.read_sessions, what.replace("\n", " "))) + "\n")
                self.err.flush()
            except (OSError, ValueError):
                pass


def open_record(path, log, harness):
    """(binary file, fstat) of a record file that is a regular file (``files.open_regular``), or
    None, reported."""
    from ..files import open_regular
    from ..records import Unreadable
    try:
        fd, info = open_regular(path)
    except Unreadable as exc:
        log.problem(harness, path, "unreadable: %s" % exc.reason)
        return None
    return os.fdopen(fd, "rb"), info


def chat_sessions(harness, folders, subagents, since, newest=None):
    """[Session] of each ``<session>.jsonl`` in ``folders`` changed since ``since``, newest first,
    its time the latest of it and of its subagents' folder ``subagents(folder, session id)``
    (Claude Code's and Qwen Code's layout: a main chat, and a folder of per-agent files)."""
    found = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            try:
                info = entry.stat()
            except OSError:
                continue
            if info.st_mtime < since or not entry.is_file():
                continue
            sub = subagents(folder, entry.name[:-6])
            latest = info.st_mtime
            try:
                latest = max([latest] + [e.stat().st_mtime for e in os.scandir(sub)])
            except OSError:
                pass
            found.append(Session(harness, entry.name[:-6], entry.path, latest, sub))
    found.sort(key=lambda s: -s.mtime)
    return found[:newest] if newest else found


def record_lines(path, needles, log, harness):
    """(line number, object) for each JSON line of ``path`` that holds one of ``needles``.

    Streams the file once, within the per-file and total byte bounds; a line that is
    not JSON (cut short at the end, or malformed) is reported and skipped. The file must
    be a regular file (``files.open_regular``), read in binary, so its size bounds the work.
    """
    from ..jsontext import parse_json
    opened = open_record(path, log, harness)
    if opened is None:
        return
    handle, info = opened
    try:
        limit = min(log.per_file, max(log.bytes_left, 0))
        if info.st_size > limit:
            log.problem(harness, path, "only its first %d of %d bytes were read (the audit's bound)" % (
                limit, info.st_size))
        used, bad, number = 0, 0, 0
        while used < limit:
            # The read itself is bounded: a line is read only up to what is left of the bound
            # (one byte more, to tell a line that ends there from one that goes on), and no
            # line is held past LINE_BYTES, so a record of one 256 MiB line costs what the
            # bounds say, not the line.
            line = handle.readline(min(limit - used, LINE_BYTES) + 1)
            if not line:
                break
            number += 1
            used += len(line)
            if used > limit:
                break
            if len(line) > LINE_BYTES and not line.endswith(b"\n"):
                log.problem(harness, path, "line %d is longer than %d bytes; skipped" % (number, LINE_BYTES))
                used += skip_line(handle, limit - used)
                continue
            if not any(n in line for n in needles):
                if not line.endswith(b"\n") and line.strip():
                    log.problem(harness, path, "truncated: its last line (%d) is cut short; skipped" % number)
                continue
            try:
                value = parse_json(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                bad += 1
                if not line.endswith(b"\n"):
                    log.problem(harness, path, "truncated: its last line (%d) is cut short; skipped" % number)
                elif bad == 1:
                    log.problem(harness, path, "line %d is not JSON; skipped" % number)
                continue
            if isinstance(value, dict):
                yield number, value
        log.bytes_left -= min(used, limit)
    except OSError as exc:
        log.problem(harness, path, "unreadable: %s" % (exc.strerror or exc))
    finally:
        handle.close()


def skip_line(handle, budget):
    """Bytes read to pass the rest of a line, in bounded chunks, at most ``budget`` + 1."""
    spent = 0
    while spent <= budget:
        chunk = handle.readline(min(budget - spent, 64 * 1024) + 1)
        spent += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            break
    return spent


def head_line(path, size=1024 * 1024):
    """The first line of a record file as an object, or None (not there, not JSON, too long)."""
    from ..files import read_head
    from ..jsontext import parse_json
    data = read_head(path, 64 * 1024)  # a Codex session_meta is about 22 kB
    if data is not None and b"\n" not in data and len(data) == 64 * 1024:
        data = read_head(path, size)
    if not data:
        return None
    line = data.split(b"\n", 1)[0]
    try:
        value = parse_json(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def foreign_version(version, known):
    """Why records of CLI ``version`` are not read, or None: another major version than ``known``
    (the major.minor prefix the formats were measured on, such as "2.")."""
    if not isinstance(version, str) or not version:
        return None
    if version.startswith(known):
        return None
    return "written by version %s; the audit reads the formats of %sx" % (version, known)


# ---------------------------------------------------------------------------------------------
# The framing, read back: names, sizes and parts, never the text.
# ---------------------------------------------------------------------------------------------

UNESCAPES = (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&#x7f;", "\x7f"))


def unescape_attr(value):
    import re
    value = re.sub(r"&#x([0-9a-f]{1,2});", lambda m: chr(int(m.group(1), 16)) if int(m.group(1), 16) < 32
                   else m.group(0), value)
    for escaped, plain in UNESCAPES:
        value = value.replace(escaped, plain)
    return value.replace("&amp;", "&")


def framed(texts):
    """What the ``<briefing …>`` elements in ``texts`` carry: {"agent", "abort", "parts", "items"}.

    ``items``: [{"name", "kind", "bytes", "parts"}] in order, fragments summed; ``parts``: the
    part numbers seen, and how many the briefing has. None when no text holds one.
    """
    import re
    opening = re.compile(r'<briefing agent="([^"]*)"(?: part="(\d+)/(\d+)")?(?: seal="([0-9a-f]+)")?'
                         r'(?: status="abort")?>')
    found, pieces = None, []
    for text in texts:
        at = text.find("<briefing agent=")
        while at >= 0:
            match = opening.match(text, at)
            if match is None:
                at = text.find("<briefing agent=", at + 1)
                continue
            if is_loaded_frame(text, match.end()):  # skills the agent loaded, given back: not its briefing
                at = text.find("<briefing agent=", match.end())
                continue
            found = found or {"agent": unescape_attr(match.group(1)), "abort": False, "parts": set(),
                              "count": 0, "items": []}
            seal = match.group(4)
            if seal is None:  # the abort instruction: no seal, no items
                found["abort"] = True
                at = text.find("<briefing agent=", match.end())
                continue
            part = int(match.group(2) or 1)
            found["parts"].add(part)
            found["count"] = max(found["count"], int(match.group(3) or 1))
            end = text.find('</briefing seal="%s">' % seal, match.end())
            end = len(text) if end < 0 else end
            pieces.append((part, text, match.end(), end, seal))
            at = text.find("<briefing agent=", end)
    if found:
        found["parts"] = sorted(found["parts"])
        # Parts arrive in whatever order their handlers finished: read them in part order.
        for part, text, start, end, seal in sorted(pieces, key=lambda piece: piece[0]):
            items_of(text, start, end, seal, part, found["items"])
    return found


def is_loaded_frame(text, at):
    """Whether the part opened just before ``at`` gives back skills the agent loaded (loaded.py)."""
    from ..loaded import LOADED_CONTINUATION, LOADED_HEADER
    at += text.startswith("\n", at)
    return text.startswith(LOADED_HEADER[:48], at) or text.startswith(LOADED_CONTINUATION[:48], at)


def loaded_again(run):
    """[{"event", "skills": [{"name", "bytes", "parts"}], "left_out": [names]}]: each time the run got
    back skills it had loaded (issue 45), read off the framing as a briefing's is, never its text."""
    import re
    from ..loaded import LEFT_OUT_NOTE
    opening = re.compile(r'<briefing agent="[^"]*" part="(\d+)/\d+" seal="([0-9a-f]+)">\n')
    note = LEFT_OUT_NOTE.split("{names}")[0]
    out = []
    for kind, event, texts in run.timeline:
        if kind == "reload":  # inferred by the reader where the records hold no copy (Copilot CLI)
            out.append(dict(texts, event=event))
            continue
        if kind != "deliver" or isinstance(texts, dict):
            continue
        skills, left_out, pieces = [], [], []
        for text in texts:
            for match in opening.finditer(text):
                if not is_loaded_frame(text, match.end()):
                    continue
                seal = match.group(2)
                end = text.find('</briefing seal="%s">' % seal, match.end())
                pieces.append((int(match.group(1)), text, match.end(), len(text) if end < 0 else end, seal))
                at = text.find(note, match.end(), text.find("<skill ", match.end()))
                if at >= 0:
                    names = text[at + len(note):text.find(".\n", at)]
                    left_out += [unescape_attr(n) for n in names.split(", ") if n]
        for part, text, start, end, seal in sorted(pieces, key=lambda piece: piece[0]):
            items_of(text, start, end, seal, part, skills)
        if skills:
            out.append({"event": event, "skills": [{"name": i["name"], "bytes": i["bytes"], "parts": i["parts"]}
                                                   for i in skills], "left_out": left_out})
    return out


def items_of(text, start, end, seal, part, items):
    import re
    item = re.compile(r'<(skill|file) (?:name="([^"]*)" dir="[^"]*"|path="([^"]*)")(?: fragment="\d+/\d+")?'
                      r' seal="%s">\n' % re.escape(seal))
    at = start
    while True:
        match = item.search(text, at, end)
        if match is None:
            return
        kind = match.group(1)
        close = text.find('\n</%s seal="%s">' % (kind, seal), match.end(), end)
        close = end if close < 0 else close
        name = unescape_attr(match.group(2) if kind == "skill" else match.group(3))
        size = len(text[match.end():close].encode("utf-8", "replace"))
        for entry in items:
            if entry["name"] == name and entry["kind"] == kind:
                entry["bytes"] += size
                if part not in entry["parts"]:
                    entry["parts"].append(part)
                break
        else:
            items.append({"name": name, "kind": kind, "bytes": size, "parts": [part]})
        at = close + 1


# ---------------------------------------------------------------------------------------------
# From runs to rows.
# ---------------------------------------------------------------------------------------------

def tally(run):
    """(first delivery's framing, refusal or None, compactions, re-deliveries, the events that re-delivered)."""
    first, refused, compactions, redelivered, via, pending = None, run.refused, 0, 0, [], False
    for kind, event, texts in run.timeline:
        if kind == "reload":  # loaded skills given back (loaded_again), no briefing
            continue
        if kind == "infer":  # no text to read back: the reader names what it carried
            first = first or {"agent": run.agent, "abort": False, "parts": [1], "count": 1, "items": texts}
            if pending:
                pending = False
                redelivered += 1
                via.append(event)
            continue
        if kind == "compact":
            compactions += 1
            pending = True
            continue
        frame = texts if isinstance(texts, dict) else framed(texts)
        if not frame:
            continue
        if frame["abort"]:
            refused = refused or "the agent got the abort instruction%s" % (
                " after a compaction" if compactions else " at its start (%s)" % event)
            if pending:
                pending = False
                redelivered += 1
                via.append(event)
            continue
        if first is None:
            first = frame
        if pending:
            pending = False
            redelivered += 1
            via.append(event)
    return first, refused, compactions, redelivered, via


def resolved_now(machine, run):
    """The run's agent's Briefing as resolved now, None (no agent, declares nothing), or the text of
    why its declaration cannot be read; one resolution per agent, however many runs."""
    from ..harnesses import HARNESSES
    from ..resolution import resolve
    if not run.agent or run.harness not in HARNESSES:
        return None
    memo = machine.state.setdefault("audit_declared", {})  # one resolution per agent, however many runs
    key = (run.harness, run.agent, run.as_session)
    if key not in memo:
        try:
            memo[key] = resolve(HARNESSES[run.harness], machine, run.agent, run.as_session)
        except Exception as exc:  # an audit reports; it never dies on one agent's files
            memo[key] = "its declaration could not be read now: %s: %s" % (type(exc).__name__, exc)
    return memo[key]


def declared_now(machine, run):
    """([{"name", "kind", "source", "from"}] the agent declares, whether briefing would deliver any of
    it), as resolved now (or as the record keeps it); ([], False) for none."""
    if run.declared is not None:
        return [{"name": n, "kind": "skill", "source": "briefing", "from": "record"} for n in run.declared], \
            bool(run.declared)
    briefing = resolved_now(machine, run)
    if isinstance(briefing, str):
        run.messages.append(briefing)
        return [], False
    if briefing is None:
        return [], False
    out = [{"name": s.name, "kind": "skill", "source": "rule" if s.rule else s.source, "from": "now"}
           for s in briefing.checked]
    for entry in briefing.files or ():
        out.append({"name": entry.text, "kind": "file",
                    "source": entry.source, "from": "now"})
    # What the hook itself would put in: a native entry the harness preloads is not briefing's.
    expects = bool(briefing.delivered or briefing.files or briefing.denies)
    return out, expects


def row_of(machine, run):
    """The JSON row of one run (docs/doctor.md "Audit")."""
    first, refused, compactions, redelivered, via = tally(run)
    declared, expects = declared_now(machine, run)
    if first is not None and not declared:
        # Delivered then, declares nothing now: the record says what it declared.
        declared = [{"name": i["name"], "kind": i["kind"], "source": "briefing", "from": "record"}
                    for i in first["items"]]
    if refused:
        verdict = "refused"
    elif first is None:
        # Nothing of briefing's arrived: the harness's own preload may be all it declares.
        verdict = "not-briefed" if expects else "briefed" if run.native else "no-declaration"
    elif compactions > redelivered:
        verdict = "lost-after-compaction"
    else:
        verdict = "briefed"
    cause = None
    if verdict in FAILING:
        cause = likely_cause(machine, run, verdict)
    return {"harness": run.harness, "session": run.session, "time": run.time, "agent": run.agent,
            "agent_id": run.agent_id, "kind": run.kind, "verdict": verdict, "declared": declared,
            "delivered": first["items"] if first else [], "parts": first["count"] if first else 0,
            "native": list(run.native), "refused": refused, "compactions": compactions,
            "redelivered": redelivered, "redelivered_by": via, "cause": cause,
            "loaded_again": loaded_again(run),
            "version": run.version, "notes": list(run.messages)}


def likely_cause(machine, run, verdict):
    """In words: why a declaring run got nothing, or lost it; from the records first, then the configuration."""
    if verdict == "lost-after-compaction":
        return ("the agent was compacted and its briefing did not come back: an older briefing without "
                "re-delivery, or its hooks for that event are missing (briefing-doctor checks them)")
    reasons = []
    for text in run.hook_errors:
        if "no Python 3.8" in text:
            reasons.append("Python is missing: the hook's fallback found no Python 3.8+")
        else:
            reasons.append("a briefing hook failed: %s" % text)
    module = reader(run.harness)
    if not reasons and module is not None and hasattr(module, "causes"):
        try:
            reasons += module.causes(machine, run)
        except Exception as exc:
            reasons.append("(the configuration could not be read: %s)" % exc)
    path = agent_path(machine, run)
    if path and run.time:
        try:
            changed = os.stat(path).st_mtime
        except OSError:
            changed = None
        started = iso_seconds(run.time)
        if changed is not None and started is not None and changed > started:
            reasons.append("the agent's file changed after this run (%s): it may have declared nothing then"
                           % path)
    from ..text import clip
    return clip("; ".join(reasons), 600) if reasons else "no hook of briefing left a trace in the records"


def version_of(root):
    """The briefing version of a copy: its .claude-plugin/plugin.json, or a built Gemini CLI extension's manifest."""
    from ..files import read_json
    for manifest in (os.path.join(".claude-plugin", "plugin.json"), "gemini-extension.json"):
        data = read_json(os.path.join(root, manifest))
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return data["version"]
    return None


def version_key(version):
    try:
        return tuple(int(part) for part in version.split("-")[0].split("."))
    except (AttributeError, ValueError):
        return None


def copies_or(label, installed, missing):
    """The causes for a harness that lists what is installed as (name, root): ``[missing]`` when
    no copy is named briefing, else what ``older_copies`` says of its copies."""
    roots = [root for name, root in installed if name == "briefing"]
    return older_copies(label, roots) if roots else [missing]


def older_copies(label, roots):
    """[str]: each installed copy of briefing older than this doctor's own (it may predate what
    this harness needs: an old briefing version)."""
    from ..files import plugin_root
    mine = version_of(plugin_root())
    out = []
    for root in roots:
        theirs = version_of(root)
        if version_key(theirs) and version_key(mine) and version_key(theirs) < version_key(mine):
            out.append("the briefing %s runs is version %s (%s), older than this doctor's %s: update it" % (
                label, theirs, root, mine))
    return out


def agent_path(machine, run):
    from ..harnesses import HARNESSES
    try:
        agent = HARNESSES[run.harness].find_agent(machine, run.agent)
    except Exception:
        return None
    return agent.path if agent is not None else None




def iso_time(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# ---------------------------------------------------------------------------------------------
# The audit.
# ---------------------------------------------------------------------------------------------

def audit(machine, harnesses, since_days=7, session=None, agent=None, log=None):
    """Every agent run of this project's recent sessions: (rows newest first, summary, log)."""
    from ..harnesses import HARNESSES
    log = log or Log()
    since = time.time() - since_days * 86400.0
    listed = []
    for key in harnesses:
        module = reader(key)
        if module is None:
            log.problem(key, None, "the audit cannot read %s's records yet (no audit/%s.py)" % (
                HARNESSES.record(key).label, key))
            continue
        try:
            for found in module.sessions(machine, since):
                if session is None or found.id == session or found.id.startswith(session):
                    listed.append((found, module))
        except Exception as exc:
            log.problem(key, None, "its sessions could not be listed: %s: %s" % (type(exc).__name__, exc))
    listed.sort(key=lambda pair: -pair[0].mtime)
    if len(listed) > log.sessions_left:
        log.problem(None, None, "%d older session(s) not read (the audit reads at most %d; narrow --since)" % (
            len(listed) - log.sessions_left, log.sessions_left))
        listed = listed[:log.sessions_left]
    rows = []
    for found, module in listed:
        if log.bytes_left <= 0:
            log.problem(found.harness, found.path, "not read: the audit's byte bound is spent")
            continue
        log.tick("reading %s %s" % (HARNESSES.record(found.harness).label, found.id))
        try:
            runs = module.read(machine, found, log)
        except Exception as exc:  # a reader's bug or a record it cannot make sense of: skip that session
            log.problem(found.harness, found.path, "skipped: %s: %s" % (type(exc).__name__, exc))
            continue
        log.read_sessions += 1
        for run in runs:
            if agent is not None and run.agent != agent:
                continue
            rows.append(row_of(machine, run))
    rows.sort(key=lambda row: row["time"] or "", reverse=True)
    summary = dict((verdict, 0) for verdict in VERDICTS)
    for row in rows:
        summary[row["verdict"]] += 1
    return rows, summary, log


def last_session_line(machine, harness, current=None):
    """The pre-flight's one line when the last session of this project (not ``current``) recorded a
    not-briefed run, else ''. Reads that one session's records only, within tight bounds."""
    module = reader(harness.key) if harness is not None else None
    if module is None:
        return ""
    log = Log(sessions=1, total=PREFLIGHT_BYTES, per_file=PREFLIGHT_FILE_BYTES, quiet=True)
    try:
        found = [s for s in module.sessions(machine, time.time() - PREFLIGHT_DAYS * 86400.0, newest=2)
                 if s.id != current][:1]
        runs = module.read(machine, found[0], log) if found else []
    except Exception:
        return ""
    bad = []
    cut = set(p["file"] for p in log.problems)  # read in part: a briefing past the bound is unknown
    for run in runs:
        first, refused, _, _, _ = tally(run)
        if first is None and not refused and run.file not in cut and declared_now(machine, run)[1]:
            bad.append(run.agent)
    if not bad:
        return ""
    from ..text import for_people, shown_name
    names = ", ".join(sorted(set(shown_name(n) for n in bad)))
    return for_people("briefing: the last %s session (%s) started %d agent run(s) that declared skills and got "
                      "none (%s); run briefing-doctor --audit" % (harness.label, shown_name(found[0].id[:8]),
                                                                  len(bad), names))
