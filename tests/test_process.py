"""The thin process layer: what only a real process shows.

The bulk of the suite runs the hook's ``main()`` in-process (conftest). These
tests run the same scenarios through a real interpreter, as a harness starts
the hook, on the oldest and the newest interpreter found here: exit status,
stderr free of tracebacks (empty where the contract says nothing is wrong),
and stdout identical to the in-process run, so the two runners cannot drift
apart.
"""
import glob
import os

import pytest

from conftest import DOCTOR_LINK, HOOK, HOOK_PYTHON, PARTS, agent_md, role_toml, skill_md

PYENV = os.path.expanduser("~/.pyenv/versions")


def _interpreters():
    found = sorted(glob.glob(os.path.join(PYENV, "3.*", "bin", "python3")),
                   key=lambda p: tuple(int(x) for x in p.split(os.sep)[-3].split(".")[:2]))
    found = [p for p in found if not p.split(os.sep)[-3].startswith(("3.6", "3.7"))]
    picked = [found[0], found[-1]] if found else []
    return sorted(set(picked + [HOOK_PYTHON]))


INTERPRETERS = _interpreters()

FILES = {
    "project/.claude/agents/good.md": agent_md("good", ["style"]),
    "project/.claude/agents/broken.md": agent_md("broken", ["style", "gone"]),
    "project/.claude/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
    "project/.codex/agents/role.toml": role_toml("role", ["nowhere"]),
    "project/.codex/skills/style/SKILL.md": skill_md("style", "STYLE BODY\n"),
}

# (name, how to build the run, stderr must be empty)
SCENARIOS = [
    ("guard-deny", lambda sb: dict(payload=sb.guard("broken")), True),
    ("guard-pass", lambda sb: dict(payload=sb.guard("good")), True),
    ("codex-guard-deny", lambda sb: dict(payload=sb.guard("role", "codex")), True),
    ("brief-part-1", lambda sb: dict(payload=sb.spawn("good"), args=("--part", "1")), True),
    ("brief-last-part", lambda sb: dict(payload=sb.spawn("good"), args=("--part", str(PARTS))), True),
    ("abort", lambda sb: dict(payload=sb.spawn("broken"), args=("--part", "1")), True),
    ("codex-abort", lambda sb: dict(payload=sb.spawn("role", "codex"), args=("--part", "1")), True),
    ("preflight", lambda sb: dict(payload=sb.payload("SessionStart", source="startup"),
                                  args=("--part", "1")), True),
    ("agent-session", lambda sb: dict(payload=sb.payload("SessionStart", source="startup",
                                                         agent_type="good"), args=("--part", "1")), True),
    ("garbage-stdin", lambda sb: dict(stdin=b"\xff{not json"), False),
    ("bad-part", lambda sb: dict(payload=sb.spawn("good"), args=("--part", "99")), False),
    ("doctor", lambda sb: dict(stdin="", args=("doctor",), check=False), True),
    ("doctor-json", lambda sb: dict(stdin="", args=("doctor", "--json"), check=False), True),
    ("doctor-usage", lambda sb: dict(stdin="", args=("doctor", "--bogus"), check=False), False),
    ("doctor-link", lambda sb: dict(stdin="", args=("--harness", "codex"), program=DOCTOR_LINK,
                                    check=False), True),
]


@pytest.mark.parametrize("python", INTERPRETERS)
@pytest.mark.parametrize("name,build,quiet", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_process_matches_in_process(sandbox, python, name, build, quiet):
    sb = sandbox(FILES)
    kwargs = build(sb)
    in_process = sb.run(**kwargs)
    real = sb.run(python=python, **kwargs)
    assert "Traceback" not in real.err, real
    assert real.rc == in_process.rc, (real, in_process)
    assert real.out == in_process.out, (real, in_process)
    assert real.err == in_process.err, (real, in_process)
    if quiet:
        assert real.err == "", real
    if kwargs.get("check", True):
        assert real.rc == 0, real


def test_exit_codes_are_the_contract(sandbox):
    """Doctor: 0 healthy, 1 problems, 2 usage; hook mode: 0 on every input."""
    healthy = sandbox({"project/.claude/agents/good.md": agent_md("good", ["style"]),
                       "project/.claude/skills/style/SKILL.md": skill_md("style", "x\n")})
    assert healthy.doctor(python=HOOK_PYTHON).rc == 0
    assert healthy.doctor("--bogus", python=HOOK_PYTHON).rc == 2
    healthy.write({"project/.claude/agents/broken.md": agent_md("broken", ["gone"])})
    assert healthy.doctor(python=HOOK_PYTHON).rc == 1
    assert healthy.run(stdin=b"\x00" * 10, python=HOOK_PYTHON).rc == 0


def test_in_process_runs_the_package_beside_the_hook():
    """The in-process runner runs the package that hooks/briefing-preload imports, not a copy."""
    import conftest
    assert conftest.hook_package().__file__ == str(HOOK.parent / "briefing" / "__init__.py")
