"""main(argv): the one entry. Hook mode reads a payload; doctor mode runs the doctor.

Hook mode exits 0 on every input and never lets an exception out: whatever
goes wrong is a line on stderr and no output, so the harness goes on.
"""
import os
import sys

from .constants import PARTS
from .files import warn
from .handlers import DISPATCH, emit, payload_event
from .jsontext import parse_json


def parse_part(argv):
    """``--part I`` (1..PARTS); anything else means part 1, with a diagnostic."""
    if len(argv) >= 2 and argv[0] == "--part":
        try:
            part = int(argv[1])
        except ValueError:
            part = 0
        if 1 <= part <= PARTS:
            return part
        warn("ignoring bad --part %r" % argv[1])
        return None
    if argv:
        warn("ignoring unexpected arguments %r" % (argv,))
    return 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    invoked = os.path.basename(sys.argv[0] if sys.argv else "")
    if invoked == "briefing-doctor" or (argv and argv[0] == "doctor"):
        from .doctor import doctor  # doctor mode only: a hook run never loads it
        try:
            return doctor(argv[1:] if argv and argv[0] == "doctor" else argv)
        except KeyboardInterrupt:
            return 2
        except BrokenPipeError:
            return 0
    try:
        part = parse_part(argv)
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        if part is None:
            return 0
        # Cheap exits before any JSON: parts beyond 1 only ever serve a named agent, or an agent
        # just compacted (SessionStart ``"source": "compact"``: the skills it loaded, issue 45).
        if part > 1 and b"agent_type" not in raw and b'"compact"' not in raw:
            return 0
        try:
            payload = parse_json(raw.decode("utf-8", "replace")) if raw.strip() else None
        except ValueError:
            warn("stdin is not JSON; nothing to do")
            return 0
        if not isinstance(payload, dict):
            return 0
        handler = DISPATCH.get(payload_event(payload))
        if handler is not None:
            emit(handler(payload, part))
    except Exception as exc:  # the client must never fail because of us
        warn("internal error, no action taken: %s: %s" % (type(exc).__name__, exc))
    return 0
