"""An audit that finds nothing says why (issue 44): where it read per harness, and, when --agent or
--session matched nothing, what it did see (docs/doctor.md "An empty audit")."""
import pytest

from test_audit import audit, load


def places(report):
    return {entry["harness"]: entry for entry in report["empty"]["read"]}


def test_an_empty_home_names_where_it_read(sandbox):
    sb = sandbox()
    rc, report = audit(sb)
    assert rc == 0 and report["audit"] == []
    read = places(report)
    assert set(read) == {"claude", "codex", "copilot", "gemini", "opencode", "kilo"}, read
    assert read["claude"]["places"][0]["path"].startswith(str(sb.path("home/.claude/projects")))
    assert all(p["exists"] is False for e in read.values() for p in e["places"]) and report["empty"]["seen"] is None
    assert report["skipped_harnesses"] and report["skipped_harnesses"][0]["harness"] == "qwen"
    text = sb.doctor("--audit").out
    assert "no agent run found; the audit read:" in text and "~/.claude/projects/" in text, text
    assert "Qwen Code   not read: ~/.qwen does not exist" in text, text


def test_every_harness_the_audit_reads_names_where(sandbox):
    """Each harness with a reader has its record places: an empty audit never answers '-' for one."""
    from briefing.audit.report import RECORD_PLACES
    from briefing.harnesses import HARNESSES
    assert set(RECORD_PLACES) == {r.key for r in HARNESSES.records()}
    sb = sandbox()
    text = sb.doctor("--audit", "--harness", "droid").out
    assert "Droid       0 session(s): ~/.factory/sessions/" in text and "transcripts of this project" in text, text


@pytest.mark.parametrize("args,needles", [
    (("--agent", "revewer"), ["--agent revewer matched none; agents seen: broken, checker, compactor, plain, "
                              "reviewer, solo (did you mean reviewer?)"]),
    (("--session", "nope"), ["--session nope matched none; sessions seen: "]),
], ids=["agent", "session"])
def test_a_filter_that_matched_nothing_says_what_it_saw(sandbox, args, needles):
    sb = load(sandbox(), "claude")
    rc, report = audit(sb, "--harness", "claude", *args)
    assert rc == 0 and report["audit"] == [], report
    seen = report["empty"]["seen"]
    assert "reviewer" in seen["agents"] and seen["sessions"], seen
    assert places(report)["claude"]["sessions"] >= 1 and places(report)["claude"]["places"][0]["exists"]
    text = sb.doctor("--audit", "--since", "3650", "--harness", "claude", *args).out
    for needle in needles:
        assert needle in text, text


def test_runs_found_print_no_empty_answer(sandbox):
    sb = load(sandbox(), "gemini")
    rc, report = audit(sb, "--harness", "gemini")
    assert report["audit"] and "empty" not in report
