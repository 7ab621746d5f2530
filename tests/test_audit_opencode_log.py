"""The OpenCode/Kilo audit reader against hostile records (issue 43, items 5, 6 and 7).

 5. every pattern applied to log text is linear: checked on the parsed patterns (deterministic,
    no rescans), against the patterns it replaced on random lines (same fields, same audit line),
    and by counting the characters each regex call may read on long adversarial tokens;
 6. the log is read in bounded chunks: a single huge line is never read whole;
 7. the database is read without creating a file in the CLI's folder (its listing is the same
    after the audit and after the pre-flight).
No test here times anything: work is counted, not clocked.
"""
import importlib
import io
import json
import os
import random
import re
import sqlite3
import time

import pytest

from conftest import hook_package
from test_audit import audit, load

hook_package()
reader = importlib.import_module("briefing.audit.opencode")
audit_module = importlib.import_module("briefing.audit")
machine_module = importlib.import_module("briefing.machine")

try:  # the parser and compiler of the re module: re._parser from 3.11, sre_parse before
    from re import _compiler as sre_compiler, _constants as sre_constants, _parser as sre_parse  # type: ignore
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_compile as sre_compiler
    import sre_constants
    import sre_parse

# The patterns main read the log with: quadratic on a long word without "=" (FIELD) and on a
# line of many arrows (AUDIT_LINE). The references the new code must agree with, and examples
# the structure check must reject.
OLD_FIELD = re.compile(r'(\w[\w.]*)=("(?:[^"\\]|\\.)*"|\S*)')
OLD_AUDIT_LINE = re.compile(u"^briefing: (.*) \u2190 (.*?) \\((\\d+(?:\\.\\d+)?) kB\\)(?:;|$)")


# ---------------------------------------------------------------------------------------------
# A structure check of a regular expression: linear in a backtracking engine when each repeat is
# deterministic (its characters differ from what may follow it, so the engine never gives one
# back to try another way), alternatives start differently, no unbounded repeat is nested in
# another, and a search never restarts inside what a failed attempt already read (a repeat whose
# characters can start the pattern must end it, so that an attempt reaching it cannot fail).
# ---------------------------------------------------------------------------------------------

ALPHABET = [chr(i) for i in range(128)] + list(u"\u00e9\u2190\u0661\u00a0\u3000\u00b2\u00ad")
ONE_CHAR = {sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.IN, sre_constants.ANY}
REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}


def chars(node, flags):
    """The characters of ALPHABET that one single-character node matches (the node compiled alone)."""
    state = sre_parse.State() if hasattr(sre_parse, "State") else sre_parse.Pattern()
    state.flags = flags
    compiled = sre_compiler.compile(sre_parse.SubPattern(state, [node]), flags)
    return {c for c in ALPHABET if compiled.fullmatch(c)}


def first(items, flags):
    """(the characters that can start a match of ``items``, whether it can match empty)."""
    out = set()
    for op, av in items:
        if op in ONE_CHAR:
            out |= chars((op, av), flags)
            return out, False
        if op is sre_constants.AT:
            continue
        if op is sre_constants.SUBPATTERN:
            found, empty = first(av[-1], flags)
        elif op is sre_constants.BRANCH:
            found, empty = set(), False
            for alternative in av[1]:
                f, e = first(alternative, flags)
                found, empty = found | f, empty or e
        elif op in REPEATS:
            found, empty = first(av[2], flags)
            empty = empty or av[0] == 0
        else:
            raise AssertionError("the check does not know %s" % op)
        out |= found
        if not empty:
            return out, False
    return out, True


def problems(pattern):
    """What makes ``pattern`` (compiled) not provably linear, as words; [] for none."""
    flags = pattern.flags
    tree = sre_parse.parse(pattern.pattern, flags)
    start, _ = first(list(tree), flags)
    found = []

    def walk(items, follow, nested):
        items = list(items)
        for i, (op, av) in enumerate(items):
            rest, empty = first(items[i + 1:], flags)
            after = rest | (follow if empty else set())
            if op is sre_constants.SUBPATTERN:
                walk(av[-1], after, nested)
            elif op is sre_constants.BRANCH:
                firsts = [first(alternative, flags)[0] for alternative in av[1]]
                for a in range(len(firsts)):
                    for b in range(a + 1, len(firsts)):
                        if firsts[a] & firsts[b]:
                            found.append("alternatives that start alike")
                for alternative in av[1]:
                    walk(alternative, after, nested)
            elif op in REPEATS:
                low, high, body = av
                body_first, _ = first(body, flags)
                unbounded = high > 1
                if body_first & after:
                    found.append("a repeat whose characters may also follow it")
                if unbounded and nested:
                    found.append("a repeat nested in a repeat")
                if unbounded and body_first & start and after:
                    found.append("a repeat a search would rescan from each of its characters")
                walk(body, body_first | after if unbounded else after, nested or unbounded)
            elif op not in ONE_CHAR and op is not sre_constants.AT:
                found.append("an unknown construct %s" % op)
    walk(tree, set(), False)
    return found


def test_every_pattern_of_the_reader_is_linear():
    patterns = {name: value for name, value in vars(reader).items() if isinstance(value, type(OLD_FIELD))}
    assert set(patterns) >= {"NAME_RUN", "QUOTED", "BARE", "SIZE"}, sorted(patterns)
    for name, pattern in patterns.items():
        assert problems(pattern) == [], (name, pattern.pattern, problems(pattern))


@pytest.mark.parametrize("pattern, problem", [
    (OLD_FIELD, "a repeat a search would rescan from each of its characters"),
    (OLD_AUDIT_LINE, "a repeat whose characters may also follow it"),
    (re.compile(r"(a+)+b"), "a repeat nested in a repeat"),
    (re.compile(r"(?:a\w|\wb)*"), "alternatives that start alike"),
])
def test_the_check_rejects_what_backtracks(pattern, problem):
    assert problem in problems(pattern), problems(pattern)


# ---------------------------------------------------------------------------------------------
# The same answers as the patterns they replace, on random lines and on long hostile ones.
# ---------------------------------------------------------------------------------------------

def old_fields(line):
    from briefing.jsontext import parse_json
    out = {}
    for name, value in OLD_FIELD.findall(line):
        try:
            out.setdefault(name, parse_json(value) if value.startswith('"') else value)
        except ValueError:  # a string that is not JSON: the field is left out
            pass
    return out


def test_fields_are_those_the_old_pattern_found():
    pieces = ["a", "b", ".", "=", '"', "\\", " ", "x=", 'k="v"', u"\u00e9", "\t", "1", "_", '\\"']
    rnd = random.Random(43)
    for _ in range(20000):
        line = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 16)))
        assert reader.fields(line) == old_fields(line), line


def test_the_audit_line_is_read_as_the_old_pattern_read_it():
    pieces = ["briefing: ", u" \u2190 ", u"\u2190", " (", "1", ".", " kB)", ";", "\n", "a", " ", ")", "2", ", "]
    rnd = random.Random(40)
    for _ in range(40000):
        message = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10)))
        if rnd.random() < 0.7:
            message = "briefing: " + message
        match = OLD_AUDIT_LINE.match(message)
        assert reader.audit_line(message) == (match.groups() if match else None), repr(message)


class Counting(object):
    """A compiled pattern that adds up the characters each call may read: from where it starts
    to where its match ends (a failed or missing match: to the end of the text). Every pattern of
    the reader is deterministic (test above), so that is its work, to a constant factor."""

    def __init__(self, pattern, tally):
        self.pattern, self.tally = pattern, tally

    def _count(self, found, text, pos):
        self.tally[0] += (found.end() if found else len(text)) - pos + 1
        return found

    def search(self, text, pos=0):
        return self._count(self.pattern.search(text, pos), text, pos)

    def match(self, text, pos=0):
        return self._count(self.pattern.match(text, pos), text, pos)

    def finditer(self, text, pos=0):
        for found in self.pattern.finditer(text, pos):
            self._count(found, text, pos)
            pos = found.end()
            yield found
        self.tally[0] += len(text) - pos + 1


N = 200000
HOSTILE = [
    "a" * N,  # main: n^2/2 steps (a long word with no "=")
    "a." * (N // 2),
    "x=" + "a" * N,
    'a="' * (N // 3),  # strings that never close
    'k="' + "\\" * N,
    "=" * N,
    ('a="b" ' * (N // 6)),
    u"briefing: " + u" \u2190 " * (N // 3),  # main: quadratic in the arrows
    u"briefing: a \u2190 " + " (1" * (N // 3),
    u"briefing: a \u2190 b" + " (1 kB)" * (N // 7),
    u"briefing: a \u2190 b (" + "1" * N,
]


@pytest.mark.parametrize("line", HOSTILE, ids=[repr(h[:12]) for h in HOSTILE])
def test_work_on_long_hostile_lines_is_linear(monkeypatch, line):
    tally = [0]
    for name in ("NAME_RUN", "QUOTED", "BARE", "SIZE"):
        monkeypatch.setattr(reader, name, Counting(getattr(reader, name), tally))
    reader.fields(line)
    reader.fields("timestamp=x " + line)
    reader.audit_line(line)
    assert tally[0] <= 8 * len(line) + 100, (tally[0], len(line))


def test_long_hostile_lines_give_the_fields_a_tokenizer_gives():
    # A plain reference: split at spaces, keep name=value where the name is a word.
    def reference(line):
        out = {}
        for token in line.split(" "):
            name, eq, value = token.partition("=")
            if eq and re.fullmatch(r"\w[\w.]*", name):
                out.setdefault(name, value)
        return out
    word = "w" * N
    line = "timestamp=t %s run=r message=stream session.id=s %s.%s end=1" % (word, word, word)
    assert reader.fields(line) == reference(line) == {"timestamp": "t", "run": "r", "message": "stream",
                                                       "session.id": "s", "end": "1"}
    assert reader.audit_line(u"briefing: a \u2190 b (1.5 kB); " + u" \u2190 " * N) == ("a", "b", "1.5")


# ---------------------------------------------------------------------------------------------
# Item 6: the log is read in bounded chunks.
# ---------------------------------------------------------------------------------------------

def test_bounded_lines_are_the_lines_a_split_gives():
    rnd = random.Random(6)
    chunk, longest = reader.CHUNK, reader.LINE_BYTES
    try:
        reader.CHUNK, reader.LINE_BYTES = 7, 10
        for _ in range(20000):
            data = b"".join(rnd.choice([b"a", b"\n", b"bb", b"c" * 12, b"d" * 9]) for _ in range(rnd.randint(0, 20)))
            limit, cut = rnd.randint(0, len(data) + 3), rnd.random() < 0.3
            lines = data[:limit].splitlines(True)[1 if cut else 0:]
            expected = [None if len(line) > 10 else line for line in lines]
            assert list(reader.bounded_lines(io.BytesIO(data), limit, cut)) == expected, (data, limit, cut)
    finally:
        reader.CHUNK, reader.LINE_BYTES = chunk, longest


class CountingFile(io.FileIO):
    """The log file as the reader opens it, counting the bytes it reads and the largest read."""
    read_total = 0
    largest = 0

    def readinto(self, buffer):
        n = super(CountingFile, self).readinto(buffer)
        CountingFile.read_total += n or 0
        CountingFile.largest = max(CountingFile.largest, n or 0)
        return n


@pytest.mark.parametrize("bound", ["above the log's size", "below it"])
def test_a_huge_single_line_is_not_read_whole(sandbox, monkeypatch, bound):
    sb = load(sandbox(), "opencode")
    log_file = sb.path("home/.local/share/opencode/log/opencode.log")
    recent = log_file.read_bytes()
    huge = b"timestamp=2026-12-03T13:00:00Z message=stream " + b"x" * (16 * 1024 * 1024) + b"\n"
    log_file.write_bytes(huge + recent)

    def opened(path, log, harness):
        return io.BufferedReader(CountingFile(path, "rb")), os.stat(path)
    monkeypatch.setattr(reader, "open_record", opened)
    CountingFile.read_total = CountingFile.largest = 0
    machine = machine_module.Machine(str(sb.project), {"HOME": str(sb.home)})
    limit = 32 * 1024 * 1024 if bound == "above the log's size" else 4 * 1024 * 1024
    log = audit_module.Log(per_file=limit)
    rows, _, log = audit_module.audit(machine, ("opencode",), 3650, log=log)
    # Read: what the bound lets, in chunks; never the 16 MiB line whole.
    assert CountingFile.read_total <= min(limit, len(huge) + len(recent)) + 64 * 1024, CountingFile.read_total
    assert CountingFile.largest <= reader.CHUNK + 8 * 1024, CountingFile.largest
    # The lines after it are read, and the audit is what it was.
    assert sorted((r["agent"], r["verdict"]) for r in rows) == [
        ("briefed", "briefed"), ("broken", "refused"), ("broken", "refused"), ("control", "no-declaration")]
    problems = [p["problem"] for p in log.problems]
    if bound == "below it":
        assert problems == ["only its last %d of %d bytes were read (the audit's bound)" % (
            limit, len(huge) + len(recent))], problems
    else:
        assert problems == ["1 line(s) longer than 65536 bytes were read past, not parsed"], problems


# ---------------------------------------------------------------------------------------------
# Item 7: nothing is created in the CLI's folder.
# ---------------------------------------------------------------------------------------------

def listing(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, files in os.walk(folder) for f in files)


def wal_mode(path):
    """The database in WAL mode, as both CLIs keep theirs (a clean close leaves no -wal)."""
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode=wal").fetchone()[0] == "wal"
    db.close()


@pytest.mark.parametrize("harness", ["opencode", "kilo"])
def test_the_audit_and_the_pre_flight_create_no_file_in_the_cli_s_folder(sandbox, harness):
    sb = load(sandbox(), harness)
    folder = str(sb.path("home/.local/share/%s" % harness))
    database = os.path.join(folder, "%s.db" % harness)
    wal_mode(database)
    db = sqlite3.connect(database)
    db.execute("UPDATE session SET time_updated = ?", (int(time.time() * 1000),))  # the pre-flight's window
    db.commit()
    db.close()
    before = listing(folder)
    assert before == sorted(["%s.db" % harness, "log/opencode.log"]), before
    _, report = audit(sb, "--harness", harness)
    assert sorted((r["agent"], r["verdict"]) for r in report["audit"]) == [
        ("briefed", "briefed"), ("broken", "refused"), ("broken", "refused"), ("control", "no-declaration")]
    assert listing(folder) == before
    payload = {"hook_event_name": "SessionStart", "source": "startup", harness + "_plugin": "1", "cwd": str(sb.project)}
    sb.run(payload)
    assert listing(folder) == before


def test_a_running_cli_s_write_ahead_log_is_read_and_nothing_is_created(sandbox):
    sb = load(sandbox(), "opencode")
    folder = str(sb.path("home/.local/share/opencode"))
    database = os.path.join(folder, "opencode.db")
    wal_mode(database)
    cli = sqlite3.connect(database)  # the CLI, running: its -wal holds what is not in the file yet
    try:
        cli.execute("PRAGMA wal_autocheckpoint=0")
        cli.execute("UPDATE session SET agent = 'renamed' WHERE agent = 'control'")
        cli.commit()
        before = listing(folder)
        assert "opencode.db-wal" in before and "opencode.db-shm" in before, before
        _, report = audit(sb, "--harness", "opencode")
        assert "renamed" in [r["agent"] for r in report["audit"]], report["audit"]
        assert listing(folder) == before
    finally:
        cli.close()


def test_a_write_ahead_log_without_its_shm_is_reported_not_read(sandbox):
    sb = load(sandbox(), "opencode")
    folder = str(sb.path("home/.local/share/opencode"))
    database = os.path.join(folder, "opencode.db")
    wal_mode(database)
    with open(database + "-wal", "wb"):
        pass
    before = listing(folder)
    rc, report = audit(sb, "--harness", "opencode")
    assert report["audit"] == [] and listing(folder) == before
    assert any("has no -shm beside it" in p["problem"] for p in report["skipped"]), report["skipped"]


@pytest.mark.parametrize("reason", [
    "briefing cannot run: its folder /p/briefing-opencode is gone (updated or removed while this session ran), so "
    "every agent spawn is refused. Restart the session; if this goes on, reinstall briefing.",
    "briefing could not check this spawn, so it is refused: its hook did not answer within 30 s (it was stopped). "
    "If this goes on, run briefing-doctor.",
])
def test_a_task_call_the_plugin_refused_for_a_failed_hook_run_is_refused(sandbox, reason):
    sb = load(sandbox(), "opencode")
    db = sqlite3.connect(str(sb.path("home/.local/share/opencode/opencode.db")))
    changed = db.execute("UPDATE part SET data = replace(data, ?, ?) WHERE data LIKE '%references unknown skill%'",
                         ("briefing: agent 'broken' references unknown skill(s): nope", reason)).rowcount
    db.commit()
    db.close()
    assert changed
    _, report = audit(sb, "--agent", "broken")
    refused = [row["refused"] for row in report["audit"] if row["verdict"] == "refused"]
    assert [r for r in refused if r.startswith(reason)], refused
