"""Near misses (issue 44): every text that names an unknown skill or agent names the closest
existing ones, within bounds (docs/doctor.md "Near misses")."""
import json
import sys

import pytest

from conftest import REPO, agent_md, role_toml, skill_md

sys.path.insert(0, str(REPO / "hooks"))
from briefing.constants import REFUSAL_NAMES  # noqa: E402
from briefing.near import NEAR_CANDIDATES, distance, near  # noqa: E402


@pytest.mark.parametrize("name,candidates,want", [
    ("demo-magik", ["demo-magic", "demo-control", "other"], ["demo-magic"]),
    ("demo-brefed", ["demo-briefed", "demo-control"], ["demo-briefed"]),
    ("demo-briefed", ["demo_briefed", "demo_control"], ["demo_briefed"]),  # Codex's spelling
    ("Code-Style", ["code-style"], ["code-style"]),  # case does not count
    ("code-stlye", ["code-style", "code-smell", "docs"], ["code-style"]),
    ("abcd", ["abce", "xyz"], ["abce"]),  # one edit, from four characters on
    ("abc", ["abd", "xyz"], []),  # shorter: one edit is almost anything ...
    ("F", ["f", "6"], ["f"]),  # ... only case and _/- count
    ("abc", ["xyz", "abcdef"], []),  # nothing near
    ("review", ["review"], []),  # never itself
    ("a-long-skill-name", ["a-long-skill-nam", "a-long-skil-name", "a-lng-skil-nam", "b"],
     ["a-long-skil-name", "a-long-skill-nam", "a-lng-skil-nam"]),  # closest first, then by name
    ("x", [1, None, "", "X"], ["X"]),  # what is not a name is skipped
], ids=lambda v: v if isinstance(v, str) else None)
def test_near(name, candidates, want):
    assert near(name, candidates) == want


def test_near_compares_a_bounded_number_of_names():
    far = ["zzzz-%05d" % i for i in range(NEAR_CANDIDATES)]
    assert near("demo-magik", far + ["demo-magic"]) == []  # past the bound: not looked at
    assert near("demo-magik", ["demo-magic"] + far) == ["demo-magic"]


@pytest.mark.parametrize("a,b,cap,want", [
    ("kitten", "sitting", 3, 3), ("same", "same", 1, 0), ("abc", "abcdefgh", 2, 3), ("", "ab", 2, 2),
    ("cladue", "claude", 3, 1), ("ab", "ba", 2, 1), ("abcd", "badc", 3, 2),
])
def test_distance(a, b, cap, want):
    assert distance(a, b, cap) == want


CLAUDE = {"project/.claude/agents/demo-briefed.md": agent_md("demo-briefed", ["demo-magik"]),
          "project/.claude/skills/demo-magic/SKILL.md": skill_md("demo-magic", "MAGIC\n")}


def test_the_refusal_names_the_near_miss(sandbox):
    sb = sandbox(CLAUDE)
    result = sb.run(sb.guard("demo-briefed"))
    assert result.decision == "deny", result
    assert "unknown skill(s): demo-magik (did you mean demo-magic?)" in result.reason, result


def test_the_abort_names_the_near_miss(sandbox):
    sb = sandbox(CLAUDE)
    texts = [r.context or "" for r in sb.run_parts(sb.spawn("demo-briefed"))]
    assert any("demo-magik (did you mean demo-magic?)" in t for t in texts), texts


def test_a_refusal_without_a_near_miss_is_as_before(sandbox):
    sb = sandbox({"project/.claude/agents/demo-briefed.md": agent_md("demo-briefed", ["nothing-like-it"]),
                  "project/.claude/skills/demo-magic/SKILL.md": skill_md("demo-magic", "MAGIC\n")})
    result = sb.run(sb.guard("demo-briefed"))
    assert result.reason and "did you mean" not in result.reason, result


@pytest.mark.parametrize("harness,files,needle", [
    ("claude", CLAUDE, "did you mean demo-magic?"),
    ("codex", {"project/.codex/agents/demo_briefed.toml": role_toml("demo_briefed", ["demo-magik"]),
               "project/.codex/skills/demo-magic/SKILL.md": skill_md("demo-magic", "MAGIC\n")},
     "did you mean demo-magic?"),
], ids=["claude", "codex"])
def test_the_doctor_names_the_near_miss(sandbox, harness, files, needle):
    sb = sandbox(files)
    result = sb.doctor("--harness", harness)
    assert result.rc == 1 and needle in result.out, result
    data = json.loads(sb.doctor("--harness", harness, "--json").out)
    assert any(needle in p for a in data["agents"] for p in a["problems"]), data["agents"]


@pytest.mark.parametrize("harness,files,asked,needle", [
    ("claude", CLAUDE, "demo-brefed", "Claude Code: did you mean demo-briefed?"),
    # the Codex example's role is demo_briefed; the others' agent is demo-briefed
    ("codex", {"project/.codex/agents/demo_briefed.toml": role_toml("demo_briefed", ["demo-magic"]),
               "project/.codex/skills/demo-magic/SKILL.md": skill_md("demo-magic", "MAGIC\n")},
     "demo-briefed", "Codex: did you mean demo_briefed?"),
    ("kilo", {"project/.opencode/agents/demo-briefed.md": agent_md("demo-briefed", ["demo-magic"])},
     "demo-briefed", "Kilo reads agents from .kilocode/agents/ and .kilo/agents/"),
], ids=["claude", "codex-underscore", "kilo-in-opencode"])
def test_show_of_an_unknown_agent_names_the_near_miss(sandbox, harness, files, asked, needle):
    sb = sandbox(files)
    result = sb.doctor("--harness", harness, "--show", asked)
    assert result.rc == 1 and needle in result.err, result
    assert "Traceback" not in result.err


def test_a_kilo_project_in_opencode_says_where_kilo_looks(sandbox):
    sb = sandbox({"project/.opencode/agents/demo-briefed.md": agent_md("demo-briefed", ["demo-magic"])})
    result = sb.doctor("--harness", "kilo")
    assert "never from .opencode/" in result.out and ".kilo/agents/" in result.out, result
    assert "never from .opencode/" not in sb.doctor("--harness", "opencode").out


def test_a_spawn_looks_up_only_the_near_misses_its_texts_name(sandbox):
    """Thousands of missing names cost a lookup for each name a text shows (REFUSAL_NAMES), no more;
    the verdict of one agent never depends on what was resolved before it."""
    names = ["demo-magi%s" % chr(ord("a") + i % 26) + "x" * (i // 26) for i in range(40)]
    names = [n for n in names if n != "demo-magic"]
    sb = sandbox({"project/.claude/agents/many.md": agent_md("many", names),
                  "project/.claude/skills/demo-magic/SKILL.md": skill_md("demo-magic", "MAGIC\n")})
    reason = sb.run(sb.guard("many")).reason
    assert reason.count("did you mean demo-magic?") == REFUSAL_NAMES, reason
    from briefing.harnesses import HARNESSES
    from briefing.machine import Machine
    from briefing.resolution import resolve
    briefing = resolve(HARNESSES["claude"], Machine(str(sb.project), sb.env()), "many", False)
    assert len(briefing.missing) == len(names) and all(s.near is None for s in briefing.missing)
    assert briefing.reason() == reason
    assert [s.near is not None for s in briefing.missing] == [True] * REFUSAL_NAMES + [False] * (
        len(names) - REFUSAL_NAMES)
