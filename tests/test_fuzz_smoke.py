"""The parser fuzzer (fuzz/run) runs for a few seconds in the normal suite.

A fixed seed and a fixed number of cases (about 3 seconds on an idle machine)
keep the run the same everywhere. A longer run is
`python3 fuzz/run --seconds 300 --seed N`; any failure it prints is replayed
with `python3 fuzz/run --seed N --case K`.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FUZZ = REPO / "fuzz" / "run"
PYTHON = os.environ.get("BRIEFING_TEST_PYTHON") or sys.executable


def snapshot(folder):
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_fuzz_smoke_fixed_seed():
    hooks = REPO / "hooks"
    before = snapshot(hooks)
    proc = subprocess.run([PYTHON, str(FUZZ), "--cases", "1000", "--seed", "20261130"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          cwd=str(REPO), timeout=600)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    ran = re.search(r"fuzz: (\d+) inputs", proc.stdout)
    assert ran and int(ran.group(1)) == 1000, report
    assert "failures: 0 " in proc.stdout, report
    assert snapshot(hooks) == before, "the fuzzer wrote into %s" % hooks
