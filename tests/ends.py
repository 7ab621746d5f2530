"""One suite in two processes, eaten from both ends (``scripts/test`` on a machine of two cores).

``BRIEFING_TEST_ENDS=<folder>:<end>`` (end ``first`` or ``last``): both processes collect the
whole suite; the one runs it from its first test forward, the other from its last test back,
and each test is run by whichever process claims it first (an ``O_EXCL`` file named after the
test in the shared folder). The two meet wherever the work makes them meet, each having run
one unbroken stretch of the suite: balanced to the test, a module's fixtures set up once except
at the meeting point, and nothing sent between processes per test.

Why not pytest-xdist's two workers: its controller and its report per test cost about 1 ms of
CPU a test, which on two cores is 2 s of a 30 s run; measured in docs/testing.md. On more
cores ``scripts/test`` still uses pytest-xdist.
"""
import hashlib
import os

import pytest

ENDS = os.environ.get("BRIEFING_TEST_ENDS", "")


def claimed(folder, item):
    """Claim ``item`` for this process: True when no other process has it."""
    path = os.path.join(folder, hashlib.sha1(item.nodeid.encode("utf-8")).hexdigest())
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """pytest's own loop over the tests this end claims; ``nextitem`` is the next one it claimed,
    so that fixtures are torn down where this process leaves a module, as pytest would."""
    if not ENDS or session.config.option.collectonly:
        return None  # pytest's own loop
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted("%d error(s) during collection" % session.testsfailed)
    folder, _, end = ENDS.rpartition(":")
    if end not in ("first", "last") or not os.path.isdir(folder):
        raise pytest.UsageError("BRIEFING_TEST_ENDS=%r: want <an existing folder>:first or :last" % ENDS)
    order = session.items if end == "first" else session.items[::-1]
    mine = (item for item in order if claimed(folder, item))
    item = next(mine, None)
    while item is not None:
        following = next(mine, None)  # claimed before this one runs: its fixtures may be kept
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        item = following
    return True
