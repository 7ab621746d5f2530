"""Every script answers --help and a wrong command line as a command should (issue 44, item 5):
``--help`` says what it does and takes (exit 0, starting nothing); a wrong argument is one line
on stderr and a non-zero exit, never a traceback; a build script told to build into a file says
so in one line; a build prints the next step."""
import json
import os
import subprocess

import pytest

from conftest import HOOK_PYTHON, REPO
from hook_commands import python_dir

SCRIPTS = sorted(str(p.relative_to(REPO)) for folder in ("scripts", "scripts/setup-e2e.d")
                 for p in (REPO / folder).iterdir() if p.is_file() and os.access(str(p), os.X_OK))
SCRIPTS += ["bench/run", "fuzz/run"]
BUILDS = ["scripts/build-gemini-extension", "scripts/build-opencode-plugin", "scripts/build-qwen-extension"]


def run(*argv, timeout=60):
    """Run a script as a person does (by its #! line), its python3 the suite's interpreter: first
    on PATH, rather than a pyenv shim, which costs a shell and pyenv's own scripts on each run."""
    env = dict(os.environ, PATH=str(python_dir(HOOK_PYTHON)) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
    return subprocess.run([str(REPO / argv[0])] + list(argv[1:]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, cwd=str(REPO), timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def test_every_script_is_listed():
    assert {"scripts/test", "scripts/build-bytecode", "scripts/setup-e2e", "scripts/hook-commands",
            "scripts/setup-e2e.d/qwen"} <= set(SCRIPTS) and set(BUILDS) <= set(SCRIPTS), SCRIPTS


# Every script with --help; -h, the same code path, on one bash and one Python script.
@pytest.mark.parametrize("script, flag", [(s, "--help") for s in SCRIPTS]
                         + [("scripts/test", "-h"), ("scripts/build-opencode-plugin", "-h")])
def test_help_says_what_it_does_and_takes(script, flag):
    proc = run(script, flag)  # scripts/test --help once started the whole unit suite: the timeout says
    assert proc.returncode == 0 and proc.stderr == "", proc
    lines = proc.stdout.strip().splitlines()
    assert len(lines) >= 3 and "Traceback" not in proc.stdout, proc
    assert any(word in proc.stdout for word in (os.path.basename(script), "usage")), proc


# An unknown option for every script; too many words where a script takes a word (OUT, a mode).
@pytest.mark.parametrize("script, argv", [(s, ["--no-such-option"]) for s in SCRIPTS]
                         + [(s, ["one", "two", "three"]) for s in BUILDS + ["scripts/test"]])
def test_a_wrong_command_line_is_one_line_and_a_non_zero_exit(script, argv):
    proc = run(script, *argv)
    assert proc.returncode != 0 and proc.stdout == "", proc
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc
    assert "--help" in proc.stderr, proc


@pytest.mark.parametrize("script", BUILDS)
def test_a_build_into_a_file_says_so(script, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("keep me\n")
    proc = run(script, str(target))
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == "%s: OUT must be a folder (made if missing), and %s is a file\n" % (script, target), proc
    assert target.read_text() == "keep me\n"


def test_the_opencode_build_prints_the_next_step(tmp_path):
    proc = subprocess.run([HOOK_PYTHON, str(REPO / "scripts" / "build-opencode-plugin"), str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc
    folder = tmp_path / "briefing-opencode"
    config_line = [line for line in proc.stdout.splitlines() if '"plugin"' in line]
    assert len(config_line) == 1, proc.stdout
    snippet = json.loads(config_line[0][config_line[0].index("{"):])
    assert snippet == {"plugin": [str(folder)]}, snippet
    assert "opencode plugin %s" % folder in proc.stdout and "kilo plugin %s" % folder in proc.stdout
    assert json.loads((folder / "package.json").read_text())["main"] == "briefing.js"
