"""Resolving by frontmatter name reads each skill folder once per payload, not once per name.

A declaration of N names that all miss by folder, against a root of M skill
folders, used to read N x M SKILL.md files (5,000 x 5,000 took minutes for one
guard). The hook's own read_text is counted, in-process.
"""
import os

import pytest

from conftest import agent_md, load_hook, skill_md


@pytest.mark.parametrize("names,folders", [(50, 60), (400, 300)])
def test_each_skill_file_is_read_once_however_many_names_miss(sandbox, monkeypatch, names, folders):
    hook = load_hook("briefing_preload_index")
    sb = sandbox()
    files = {"project/.claude/skills/folder-%04d/SKILL.md" % i: skill_md("named-%04d" % i, "body %d\n" % i)
             for i in range(folders)}
    declared = ["named-%04d" % i for i in range(0, folders, 7)] + ["gone-%04d" % i for i in range(names)]
    files["project/.claude/agents/many.md"] = agent_md("many", skills=declared)
    sb.write(files)
    reads = hook.count_reads(monkeypatch)
    briefing = hook.claude_briefing("many", str(sb.root / "project"), str(sb.root / "home"))
    skill_reads = [p for p in reads if os.path.basename(p) == "SKILL.md"]
    # every folder read once for the index, and each skill found by name read once more to load it
    assert len(skill_reads) <= folders + len(range(0, folders, 7)), len(skill_reads)
    found = {s.name for s in briefing.checked if not s.problem}
    assert found == {"named-%04d" % i for i in range(0, folders, 7)}
    assert {s.name for s in briefing.missing} == {"gone-%04d" % i for i in range(names)}
