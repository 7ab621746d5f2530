"""scripts/test's two processes from both ends of the suite (tests/ends.py): every test runs
once, in one of them; each runs one unbroken stretch; a failure fails the process that ran it."""
import os
import subprocess
import sys
import textwrap

from conftest import REPO

CONFTEST = textwrap.dedent("""\
    import sys
    sys.path.insert(0, %r)
    from ends import pytest_runtestloop  # noqa: F401
""" % str(REPO / "tests"))

MODULE = textwrap.dedent("""\
    import os
    import time
    import pytest

    LOG = os.environ["ENDS_LOG"]

    def note(text):
        with open(LOG, "a") as log:
            log.write("%d %s\\n" % (os.getpid(), text))

    @pytest.fixture(scope="module")
    def once():
        note("setup " + __name__)

    @pytest.mark.parametrize("i", range(30))
    def test_one(once, i):
        time.sleep(0.002)
        note("ran %s %d" % (__name__, i))
        assert not (os.environ.get("ENDS_FAIL") == __name__ and i == 7)
""")


def two_ends(tmp_path, fail=None):
    """Both ends of a suite of three modules of 30 tests: (their exit codes, the log's lines)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    for name in ("test_a", "test_b", "test_c"):
        (suite / (name + ".py")).write_text(MODULE)
    claims = tmp_path / "claims"
    claims.mkdir()
    log = tmp_path / "log"
    procs = []
    for end in ("first", "last"):
        env = dict(os.environ, BRIEFING_TEST_ENDS="%s:%s" % (claims, end), ENDS_LOG=str(log),
                   ENDS_FAIL=fail or "")
        procs.append(subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                       "-p", "no:xdist", str(suite)], cwd=str(tmp_path), env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = [p.communicate(timeout=120)[0].decode() for p in procs]
    return [p.returncode for p in procs], outs, [line.split(" ", 1) for line in log.read_text().splitlines()]


def test_every_test_runs_once_and_each_end_runs_one_stretch(tmp_path):
    codes, outs, lines = two_ends(tmp_path)
    assert codes == [0, 0], outs
    ran = [(pid, text) for pid, text in lines if text.startswith("ran ")]
    assert sorted(text for _, text in ran) == sorted("ran test_%s %d" % (m, i) for m in "abc" for i in range(30))
    order = ["ran test_%s %d" % (m, i) for m in "abc" for i in range(30)]
    first_pid = next(pid for pid, text in ran if text == order[0])
    owners = [pid for text in order for pid, t in ran if t == text]
    # one stretch each: the first end's tests, then the last end's, never interleaved
    switch = owners.index(next(pid for pid in owners if pid != first_pid)) if len(set(owners)) > 1 else len(owners)
    assert set(owners[:switch]) == {first_pid} and first_pid not in owners[switch:], owners
    setups = [text for _, text in lines if text.startswith("setup ")]
    assert len(setups) <= 4, setups  # each module once, and the one where they met twice at most
    totals = sum(int(out.split(" passed")[0].split()[-1]) for out in outs if " passed" in out)
    assert totals == 90, outs


def test_a_failure_fails_the_end_that_ran_it(tmp_path):
    codes, outs, lines = two_ends(tmp_path, fail="test_b")
    failed = [code for code, out in zip(codes, outs) if "test_b.py::test_one[7]" in out]
    assert failed == [1] and sorted(codes) == [0, 1], (codes, outs)
