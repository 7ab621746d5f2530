"""Output limits measured on the bytes really printed (issue 43, item 1).

The hook prints JSON with every non-ASCII character escaped (``\\uXXXX``): a Cyrillic letter is
2 bytes of UTF-8 and 6 printed, a CJK one 3 and 6, an emoji 4 and 12. A harness that keeps only
so much of a hook's stdout (Qwen Code: 1 MiB; Copilot CLI: 10 MiB) must be judged on what is
printed, or a briefing under briefing's limit of skill text is cut, is no longer JSON, and
vanishes without a refusal. For each capped harness and each script: a briefing exactly at the
limit that binds is delivered whole, one byte more is refused, and the guard, SubagentStart and
the doctor agree.
"""
import json

import pytest

from conftest import agent_md, hook_package, skill_md
from framing import rebuild

SCRIPTS = {"ascii": "a", "cyrillic": "\u0436", "cjk": "\u6f22", "emoji": "\U0001F600"}


def limits():
    pkg = hook_package()
    from briefing.harnesses import HARNESSES
    return pkg, HARNESSES


class Capped:
    """One capped harness: where its agent and skill go, its payloads and env."""

    def __init__(self, key, agent_path, skill_path, body=""):
        self.key, self.agent_path, self.skill_path, self.body = key, agent_path, skill_path, body

    def files(self, text):
        return {self.agent_path % "rev": agent_md("rev", ["big"], body=self.body),
                self.skill_path % "big": skill_md("big", text)}

    def env(self, sb):
        return sb.qwen_env() if self.key == "qwen" else sb.copilot_env()

    def briefing(self, sb):
        """The Briefing the hook builds for ``rev`` (in-process, as the guard and the doctor do)."""
        _, harnesses = limits()
        from briefing.machine import Machine
        from briefing.resolution import resolve
        env = dict(self.env(sb), HOME=str(sb.home))
        return resolve(harnesses[self.key], Machine(str(sb.project), env), "rev")


CAPPED = {
    "qwen": Capped("qwen", "project/.qwen/agents/%s.md", "project/.qwen/skills/%s/SKILL.md",
                   "A Qwen agent.\n${hook_context}\n"),
    "copilot": Capped("copilot", "project/.github/agents/%s.md", "project/.github/skills/%s/SKILL.md"),
}


def context_of(result):
    """The context a SubagentStart output carries (Copilot CLI's is the flat additionalContext)."""
    return result.context or (result.data or {}).get("additionalContext") if result.out else None


def body_at_limit(sandbox, capped, char):
    """(text, printed) for the longest skill text of ``char`` (padded with ASCII) that is delivered:
    exactly at the text limit, or exactly at the output limit, whichever binds first."""
    harness = limits()[1][capped.key]
    text_limit, output_limit = harness.whole_limit, harness.output_limit
    escaped = len(json.dumps(char))  - 2  # what one character prints as
    size = len(char.encode("utf-8"))
    # the longest run of char under both limits, with room for the framing
    count = min(text_limit // size, (output_limit - 16384) // escaped)
    for _ in range(3):
        text = char * count
        sb = sandbox(capped.files(text))
        briefing = capped.briefing(sb)
        room_text = text_limit - briefing.total_bytes
        room_out = output_limit - briefing.printed_bytes
        extra = min(room_text // size, room_out // escaped)
        if extra <= 0:
            break
        count += extra
    text = char * count
    sb = sandbox(capped.files(text))
    briefing = capped.briefing(sb)
    pad = min(text_limit - briefing.total_bytes, output_limit - briefing.printed_bytes)
    assert 0 <= pad < escaped * 2, pad
    return text + "a" * pad


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("key", sorted(CAPPED))
def test_a_briefing_at_the_limit_arrives_whole_and_one_byte_more_is_refused(sandbox, key, script):
    capped = CAPPED[key]
    harness = limits()[1][key]
    text = body_at_limit(sandbox, capped, SCRIPTS[script])
    for over in (False, True):
        body = text + ("a" if over else "")
        sb = sandbox(capped.files(body))
        env = capped.env(sb)
        briefing = capped.briefing(sb)
        assert (briefing.total_bytes > harness.whole_limit or briefing.printed_bytes > harness.output_limit) == over
        guard = sb.run(sb.guard("rev", key), env=env)
        start = sb.run(sb.spawn("rev", key), env=env)
        shown = sb.doctor("--show", "rev", "--harness", key)
        printed = len(start.out.encode("utf-8"))
        assert printed <= harness.output_limit, (printed, harness.output_limit)
        assert start.out.isascii()
        if not over:
            assert guard.out == "", guard
            # exactly what the hook measured, less the note a delivery after a compaction adds
            assert briefing.printed_bytes - 24 <= printed <= briefing.printed_bytes
            assert rebuild([context_of(start)]).skills == {"big": body}
            assert "[FAIL]" not in shown.out, shown.out[:400]
        else:
            assert guard.decision == "deny", guard
            reason = guard.reason
            if briefing.total_bytes > harness.whole_limit:
                assert "more than the %d bytes" % harness.whole_limit in reason, reason
            else:
                assert "prints as %d bytes of JSON" % briefing.printed_bytes in reason, reason
                assert "%d bytes of a hook's output" % harness.output_limit in reason, reason
            assert "<skill " not in context_of(start) and "STOP." in context_of(start), start.out[:300]
            assert "[FAIL]" in shown.out and reason.split(". ")[0] in shown.out, shown.out[:600]
            preflight = sb.run(sb.payload("SessionStart", key, source="startup"), env=env)
            assert "rev" in (preflight.system_message or "") or key == "copilot", preflight.out[:300]


def test_a_russian_skill_under_the_text_limit_that_prints_past_1_mib_is_refused(sandbox):
    """The issue's case: 380 KiB of Russian passes the 512 KiB limit of text, prints 1.11 MB."""
    capped = CAPPED["qwen"]
    sb = sandbox(capped.files("\u041f\u0440\u0438\u0432\u0435\u0442 " * (380 * 1024 // 13)))
    env = capped.env(sb)
    guard = sb.run(sb.guard("rev", "qwen"), env=env)
    assert guard.decision == "deny" and "of a hook's output Qwen Code reads whole" in guard.reason, guard
    start = sb.run(sb.spawn("rev", "qwen"), env=env)
    assert len(start.out) < 10000 and "STOP." in start.context  # the abort, never 1 MiB cut short


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_claude_code_parts_stay_under_10000_characters_in_every_script(sandbox, script):
    """Claude Code caps each context at 10,000 characters (JavaScript's, UTF-16 units) of the parsed
    text, not of stdout: the part budget counts UTF-8 bytes, never fewer than those units."""
    text = SCRIPTS[script] * (40000 // len(SCRIPTS[script].encode("utf-8")))
    sb = sandbox({"project/.claude/agents/rev.md": agent_md("rev", ["big"]),
                  "project/.claude/skills/big/SKILL.md": skill_md("big", text)})
    results = sb.run_parts(sb.spawn("rev"))
    contexts = [r.context for r in results if r.context]
    assert len(contexts) > 1
    assert all(len(c.encode("utf-16-le")) // 2 <= 10000 for c in contexts)
    assert rebuild(contexts).skills == {"big": text}


NAMES = ["a", "\u0436" * 40, "&<>\"" * 10, "\U0001F600" * 30, "x" * 200]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_bound_that_spares_small_briefings_a_render_is_a_bound(sandbox, script):
    """Briefing.over_output renders only a briefing whose cheap bound passes the cap: the bound must
    never be under what is printed, whatever the names, folders, rules and scripts."""
    files = {"project/.qwen/agents/rev.md": agent_md("rev", ["s%d-%s" % (i, n[:20]) for i, n in enumerate(NAMES)],
                                                     body="A Qwen agent.\n${hook_context}\n"),
             "project/.briefing/rules.json": json.dumps({"rules": [{"agents": ["rev"], "skills": ["ruled"]}]}),
             "project/.qwen/skills/ruled/SKILL.md": skill_md("ruled", SCRIPTS[script] * 100)}
    for i, n in enumerate(NAMES):
        name = "s%d-%s" % (i, n[:20])
        files["project/.qwen/skills/%s/SKILL.md" % name] = skill_md(name, (SCRIPTS[script] + n) * 50)
    sb = sandbox(files)
    briefing = CAPPED["qwen"].briefing(sb)
    assert not briefing.missing, [s.problem for s in briefing.missing]
    assert briefing.printed_bytes <= briefing.printed_bound()
