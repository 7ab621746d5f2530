"""Nine defects an adversarial review found in the hook (issue 19).

Each block below pins one defect with files a teammate, a cloned repository or
another plugin could write. Defect 5 (harness detection) lives in
``test_detection.py``; defect 7 (the YAML subset against real YAML) in
``test_yaml_subset.py`` with its data file ``yaml_cases.json``.
"""
import json
import os
import re
import sys

import pytest

from conftest import Symlink, agent_md, load_hook, role_toml, skill_md

try:
    import tomllib as toml_ref
except ImportError:  # Python < 3.11
    import tomli as toml_ref

HARNESSES = ("claude", "codex")
# Generous bounds against a hang, not timings: the quadratic parsers took minutes on these inputs.
HANG_TIMEOUT = 20
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def hook():
    return load_hook()


def guard_denies(sb, name, harness, needle="nope"):
    result = sb.run(sb.guard(name, harness))
    assert result.decision == "deny", result
    assert needle in result.reason, result
    return result


def not_briefed(sb, name, harness):
    """SubagentStart says NOT briefed, puts no skill into the context, and the doctor FAILs."""
    result = sb.run(sb.spawn(name, harness), args=("--part", 1))
    assert "NOT briefed" in (result.system_message or ""), result
    assert "<skill " not in (result.context or ""), result
    doctor = sb.doctor("--harness", harness)
    assert doctor.rc == 1 and "FAIL" in doctor.out, doctor
    return result, doctor


# =========================================================================== defect 1
# A name spelled with an escape means the same name to the harness and to
# briefing's parsers; the spawn path's cheap pre-filter must not drop the file.

ESCAPED_NAMES = [
    ("claude", "reviewer", "project/.claude/agents/a.md",
     '---\nname: "revi\\u0065wer"\nbriefing:\n  skills: [nope]\n---\nbody\n'),
    ("claude", "reviewer", "project/.claude/agents/reviewer.md",
     '---\nname: "revi\\x65wer"\nbriefing:\n  skills: [nope]\n---\nbody\n'),
    ("claude", "it's", "project/.claude/agents/a.md",
     "---\nname: 'it''s'\nbriefing:\n  skills: [nope]\n---\nbody\n"),
    ("claude", "revi ewer", "project/.claude/agents/a.md",
     "---\nname: revi\n  ewer\nbriefing:\n  skills: [nope]\n---\nbody\n"),
    ("codex", "reviewer", "project/.codex/agents/a.toml",
     '# briefing: skills = ["nope"]\nname = "revi\\u0065wer"\ndescription = "d"\n'),
    ("codex", "reviewer", "project/.codex/agents/reviewer.toml",
     '# briefing: skills = ["nope"]\nname = "revi\\U00000065wer"\ndescription = "d"\n'),
]


@pytest.mark.parametrize("harness,name,path,text", ESCAPED_NAMES,
                         ids=["yaml-u", "yaml-x-fast-path", "yaml-single-quote", "yaml-folded",
                              "toml-u", "toml-U"])
def test_an_escaped_name_is_the_same_agent_on_every_path(sandbox, harness, name, path, text):
    sb = sandbox({path: text})
    guard_denies(sb, name, harness)
    start = sb.run(sb.spawn(name, harness), args=("--part", 1))
    assert "NOT briefed" in start.system_message, start
    doctor = sb.doctor("--harness", harness)
    assert doctor.rc == 1 and "nope" in doctor.out, doctor


# =========================================================================== defect 2
# Every parser is linear. The inputs sit at the 1 MiB cap; before the fix the
# guard took minutes on the first two (the bound below only catches a hang).

def flow_list_file(size=MIB - 4096):
    head, tail = "---\nname: big\nbriefing:\n  skills: [\n", "    nope\n  ]\n---\n"
    line = "    s%06d,\n"
    count = (size - len(head) - len(tail)) // len(line % 0)
    return head + "".join(line % i for i in range(count)) + tail


def comment_merge_file(size=MIB - 4096):
    first = "# briefing: skills = [%s]\n" % ", ".join('"s%06d"' % i for i in range(50000))
    line = '# briefing: skills = ["x%06d"]\n'
    count = (size - len(first) - 200) // len(line % 0)
    return (first + "".join(line % i for i in range(count)) + '# briefing: skills = ["nope"]\n'
            + 'name = "big"\ndescription = "d"\n')


def block_list_file(size=MIB - 4096):
    head, tail = "---\nname: big\nbriefing:\n  skills:\n", "    - nope\n---\n"
    line = "    - s%06d\n"
    count = (size - len(head) - len(tail)) // len(line % 0)
    return head + "".join(line % i for i in range(count)) + tail


BIG_FILES = [
    ("claude", "project/.claude/agents/big.md", flow_list_file),
    ("claude", "project/.claude/agents/big.md", block_list_file),
    ("codex", "project/.codex/agents/big.toml", comment_merge_file),
]


@pytest.mark.parametrize("harness,path,make", BIG_FILES, ids=["flow-list", "block-list", "comment-merge"])
def test_a_one_mebibyte_adversarial_agent_file_is_judged_without_hanging(sandbox, hook, harness, path, make):
    text = make()
    assert MIB - 8192 < len(text.encode()) <= MIB
    sb = sandbox({path: text})
    result = sb.run(sb.guard("big", harness), timeout=HANG_TIMEOUT)
    assert result.decision == "deny", result
    # Read to the end: the refusal counts every declaration, the last ("nope") included,
    # though it names only the first REFUSAL_NAMES (issue 17).
    declared = len(re.findall(r"\b[sx]\d{6}\b", text)) + 1
    more = re.search(r"\u2026 and (\d+) more", result.reason)
    assert more and int(more.group(1)) == declared - hook.REFUSAL_NAMES, (declared, result.reason[-300:])


class Counted(str):
    """A string that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other):
        Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_dedupe_is_linear(hook):
    items = [Counted("s%d" % i) for i in range(4000)] + [Counted("s1"), Counted("s2")]
    Counted.compared = 0
    assert hook.dedupe(items) == ["s%d" % i for i in range(4000)]
    assert Counted.compared < 3 * len(items), Counted.compared


def line_events(func, arg):
    """How many Python lines ``func(arg)`` executes: a deterministic measure of its work."""
    count = [0]

    def tracer(frame, event, _):
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        func(arg)
    finally:
        sys.settrace(None)
    return count[0]


@pytest.mark.parametrize("shape", [
    lambda n: "---\nname: a\nbriefing:\n  skills: [\n" + "    s,\n" * n + "  ]\n---\n",
    lambda n: "---\nname: a\nskills: [\n" + "  s,\n" * n + "]\n---\n",
    lambda n: "---\nname: a\nbriefing:\n  skills:\n" + "    - s\n" * n + "---\n",
    lambda n: "---\nname: a\ndescription: \"x\n" + "  y\n" * n + "  \"\n---\n",
], ids=["flow-briefing", "flow-native", "block", "multi-line-quoted"])
def test_frontmatter_work_grows_linearly(hook, shape):
    small, large = (line_events(hook.parse_frontmatter, shape(n)) for n in (200, 800))
    assert large < 5 * small, (small, large)


# =========================================================================== defect 3
# Legal YAML in name: is either read exactly or reported; never silence.

LEGAL_NAMES = [
    "name: !!str reviewer",
    "name: &n reviewer",
    "name: !!str &n reviewer",
    "name: |-\n  reviewer",
    "name: >-\n  reviewer",
    "name: |\n  reviewer",
]


@pytest.mark.parametrize("line", LEGAL_NAMES)
def test_legal_yaml_in_name_is_never_silence(sandbox, line):
    text = "---\n%s\ndescription: d\nbriefing:\n  skills: [nope]\n---\nbody\n" % line
    sb = sandbox({"project/.claude/agents/reviewer.md": text})
    not_briefed(sb, "reviewer", "claude")
    guard = sb.run(sb.guard("reviewer"))
    assert guard.decision == "deny" or "reviewer" in guard.err, guard


# =========================================================================== defect 4
# The doctor and the pre-flight judge the file the spawn path uses.

SHADOWS = [
    # (files, spawn denies?)
    ({"project/.claude/agents/reviewer.md": agent_md("reviewer"),
      "home/.claude/agents/reviewer.md": agent_md("reviewer", ["nope"])}, "claude", False),
    ({"project/.claude/agents/reviewer.md": agent_md("reviewer"),
      "project/.claude/agents/a-reviewer.md": agent_md("reviewer", ["nope"])}, "claude", False),
    ({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["nope"]),
      "home/.claude/agents/reviewer.md": agent_md("reviewer")}, "claude", True),
    ({"project/.claude/agents/reviewer.md": agent_md("reviewer", ["nope"]),
      "project/.claude/agents/a-reviewer.md": agent_md("reviewer")}, "claude", True),
    ({"project/.codex/agents/reviewer.toml": role_toml("reviewer"),
      "project/.codex/agents/a-reviewer.toml": role_toml("reviewer", ["nope"])}, "codex", False),
    ({"project/.codex/agents/reviewer.toml": role_toml("reviewer", ["nope"]),
      "project/.codex/agents/a-reviewer.toml": role_toml("reviewer")}, "codex", True),
    ({"project/.codex/agents/reviewer.toml": role_toml("reviewer"),
      "home/.codex/agents/reviewer.toml": role_toml("reviewer", ["nope"])}, "codex", False),
]


@pytest.mark.parametrize("files,harness,denies", SHADOWS,
                         ids=["user-shadowed", "same-folder-shadowed", "user-shadows-nothing",
                              "same-folder-winner-fails", "codex-same-folder-shadowed",
                              "codex-same-folder-winner-fails", "codex-user-shadowed"])
def test_doctor_and_preflight_judge_the_winning_file(sandbox, files, harness, denies):
    sb = sandbox(files)
    guard = sb.run(sb.guard("reviewer", harness))
    assert (guard.decision == "deny") == denies, guard
    start = sb.run(sb.payload("SessionStart", harness, source="startup"), args=("--part", 1))
    assert ("nope" in (start.system_message or "")) == denies, start
    doctor = sb.doctor("--harness", harness)
    assert (doctor.rc == 1) == denies, doctor
    assert ("nope" in doctor.out) == denies, doctor
    show = sb.doctor("--harness", harness, "--show", "reviewer")
    if denies:
        assert show.rc == 1 and "nope" in show.out, show
    else:
        assert "nope" not in show.out + show.err, show
        assert "declares no skills" in show.err, show


def test_one_lookup_order_for_spawn_and_survey(hook, tmp_path):
    """``lookup_order`` is the one statement of precedence inside one folder."""
    root = str(tmp_path)
    walked = [os.path.join(root, "a.md"), os.path.join(root, "reviewer.md"), os.path.join(root, "z.md")]
    open(walked[1], "w").close()
    order = list(hook.lookup_order(root, "reviewer", (".md",), iter(walked)))
    assert order == [walked[1], walked[0], walked[2]]


# =========================================================================== defect 6
# Codex role names as multi-line TOML strings.

MULTILINE_NAMES = [
    'name = """reviewer"""',
    "name = '''reviewer'''",
    'name = """\nreviewer"""',
    "name = '''\nreviewer'''",
    'name = """revi\\\n    ewer"""',
    'name = """revi\\u0065wer"""  # a comment',
]


@pytest.mark.parametrize("line", MULTILINE_NAMES)
def test_a_role_named_by_a_multi_line_string_is_seen(sandbox, line):
    text = '# briefing: skills = ["nope"]\n%s\ndescription = "d"\n' % line
    assert toml_ref.loads(text)["name"] == "reviewer"
    sb = sandbox({"project/.codex/agents/a.toml": text})
    guard_denies(sb, "reviewer", "codex")
    start = sb.run(sb.spawn("reviewer", "codex"))
    assert "NOT briefed" in start.system_message, start
    doctor = sb.doctor("--harness", "codex")
    assert doctor.rc == 1 and "reviewer" in doctor.out and "nope" in doctor.out, doctor


ROLE_NAME_TEXTS = [t % (q, q) for q in ('"""', "'''") for t in (
    "name = %sa\nb%s\n", "name = %s\n\nb%s\n", "name = %sa\"b%s\n", "name = %sab%s  # c\n",
    "name = %sx%s\n[t]\nname = 'y'\n")] + [
    'name = """a""""\n', 'name = """a"""""\n', "name = '''a''''\n", 'name = """a\\tb"""\n',
    'name = """a\\\n\n   b"""\n', 'name = """a \\  \n b"""\n', 'x = """\nname = "no"\n"""\nname = "yes"\n',
]


@pytest.mark.parametrize("text", ROLE_NAME_TEXTS)
def test_parse_role_name_agrees_with_toml(hook, text):
    truth = toml_ref.loads(text).get("name")
    assert hook.parse_role_name(text) == truth


# =========================================================================== defect 8
# Files on pseudo-filesystems look regular and report a size they do not have.

PSEUDO = [p for p in ("/proc/self/environ", "/proc/self/status", "/proc/version",
                      "/sys/kernel/mm/transparent_hugepage/enabled") if os.path.exists(p)]


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("target", PSEUDO)
def test_a_skill_on_a_pseudo_filesystem_is_refused(sandbox, harness, target):
    skills = "project/.claude/skills" if harness == "claude" else "project/.codex/skills"
    agent = ({"project/.claude/agents/t.md": agent_md("t", ["leak"])} if harness == "claude"
             else {"project/.codex/agents/t.toml": role_toml("t", ["leak"])})
    sb = sandbox(dict(agent, **{skills + "/leak/SKILL.md": Symlink(target)}))
    with open(target, "rb") as f:
        secret = f.read(4096).decode("utf-8", "replace").split("\n")[0].split("\0")[0][:40]
    guard = sb.run(sb.guard("t", harness))
    assert guard.decision == "deny" and "pseudo-filesystem" in guard.reason, guard
    outputs = [r.out for r in sb.run_parts(sb.spawn("t", harness))]
    assert "NOT briefed" in outputs[0], outputs
    doctor = sb.doctor("--harness", harness)
    assert doctor.rc == 1 and "pseudo-filesystem" in doctor.out, doctor
    if secret.strip():
        assert all(secret not in out for out in outputs + [guard.out, doctor.out]), secret


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_ordinary_symlinked_skill_file_is_still_followed(sandbox, harness):
    skills = "project/.claude/skills" if harness == "claude" else "project/.codex/skills"
    agent = ({"project/.claude/agents/t.md": agent_md("t", ["linked"])} if harness == "claude"
             else {"project/.codex/agents/t.toml": role_toml("t", ["linked"])})
    sb = sandbox(dict(agent, **{"elsewhere/linked.md": skill_md("linked", "LINKED-BODY\n"),
                                skills + "/linked/SKILL.md": Symlink("../../../../elsewhere/linked.md")}))
    assert sb.run(sb.guard("t", harness)).decision is None
    assert "LINKED-BODY" in sb.run(sb.spawn("t", harness), args=("--part", 1)).context


@pytest.mark.parametrize("said", [2, 20], ids=["more-than-it-says", "less-than-it-says"])
def test_read_text_refuses_a_file_whose_size_is_not_what_it_says(hook, tmp_path, monkeypatch, said):
    """A size that cannot be trusted: fstat says one thing, read() delivers more, or less (a
    short read ends the file only where it reads to the size it says)."""
    path = tmp_path / "f"
    path.write_text("0123456789")
    real = os.fstat

    class Lying(object):
        def __init__(self, info):
            self._info = info

        def __getattr__(self, key):
            return said if key == "st_size" else getattr(self._info, key)

    monkeypatch.setattr(hook.os, "fstat", lambda fd: Lying(real(fd)))
    with pytest.raises(hook.Unreadable) as exc:
        hook.read_text(str(path))
    assert "size" in exc.value.reason


# =========================================================================== defect 9
# Names and bodies with terminal control sequences never reach a terminal raw.

ESC_NAME = "\u001b]0;pwned\u0007\u001b[31mred"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b")


def raw_controls(text):
    return [c for c in RAW_CONTROLS if c in text]


@pytest.mark.parametrize("harness", HARNESSES)
def test_control_characters_are_escaped_for_people(sandbox, harness):
    if harness == "claude":
        files = {"project/.claude/agents/t.md": "---\nname: t\nbriefing:\n  skills: [%s]\n---\n"
                 % json.dumps(ESC_NAME)}
    else:
        files = {"project/.codex/agents/t.toml": role_toml("t", [ESC_NAME])}
    sb = sandbox(files)
    doctor = sb.doctor("--harness", harness)
    assert doctor.rc == 1 and "pwned" in doctor.out, doctor
    assert not raw_controls(doctor.out + doctor.err), doctor
    assert "\\x1b" in doctor.out or "\\u001b" in doctor.out, doctor
    start = sb.run(sb.payload("SessionStart", harness, source="startup"), args=("--part", 1))
    assert "pwned" in start.system_message and not raw_controls(start.system_message), start
    spawn = sb.run(sb.spawn("t", harness), args=("--part", 1))
    assert "pwned" in spawn.system_message and not raw_controls(spawn.system_message), spawn
    guard = sb.run(sb.guard("t", harness))
    assert "pwned" in guard.reason and not raw_controls(guard.reason + guard.err), guard


def test_an_agent_name_with_escapes_is_escaped_in_the_doctor(sandbox):
    sb = sandbox({"project/.claude/agents/t.md":
                  "---\nname: %s\nbriefing:\n  skills: [nope]\n---\n" % json.dumps("ag" + ESC_NAME)})
    doctor = sb.doctor()
    assert doctor.rc == 1 and "pwned" in doctor.out and not raw_controls(doctor.out), doctor


def test_show_escapes_a_body_for_the_terminal_and_keeps_it_exact_in_json(sandbox):
    body = "clear \x1b[2J screen\tand a tab\n"
    sb = sandbox({"project/.claude/agents/t.md": agent_md("t", ["s"]),
                  "project/.claude/skills/s/SKILL.md": skill_md("s", body)})
    text = sb.doctor("--harness", "claude", "--show", "t")
    assert text.rc == 0 and not raw_controls(text.out) and "\\x1b[2J" in text.out, text
    assert "\tand a tab" in text.out, text
    data = json.loads(sb.doctor("--harness", "claude", "--show", "t", "--json").out)
    assert body in data["shows"][0]["parts"][0]["text"]
