"""Resolving by frontmatter name reads each skill folder once per payload, not once per name.

A declaration of N names that all miss by folder, against a root of M skill
folders, used to read N x M SKILL.md files (5,000 x 5,000 took minutes for one
guard). The hook's own read_text is counted, in-process.
"""
import json
import os

import pytest

from conftest import ALWAYS_SUBPROCESS, PARTS, agent_md, hook_package, load_hook, skill_md


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


# Where each harness reads the user's skills (the one root every one of them has).
USER_ROOTS = [
    ("claude", "home/.claude/skills"),
    ("codex", "home/.agents/skills"),
    ("copilot", "home/.agents/skills"),
    ("gemini", "home/.agents/skills"),
    ("qwen", "home/.agents/skills"),
    ("opencode", "home/.agents/skills"),
    ("kilo", "home/.agents/skills"),
    ("droid", "home/.agents/skills"),
]


@pytest.mark.parametrize("harness, root", USER_ROOTS, ids=[h for h, _ in USER_ROOTS])
def test_in_every_harness_a_skill_file_is_read_once_for_the_names_and_once_to_load(sandbox, monkeypatch,
                                                                                    harness, root):
    """300 names that miss and 30 found by frontmatter name, against 60 skill folders: each
    SKILL.md is read once for the index of names, and once more when a name takes it (Gemini
    CLI's lookup read the whole root again for every name: 300 x 60 reads)."""
    hook = load_hook()
    sb = sandbox({"%s/folder-%04d/SKILL.md" % (root, i): skill_md("named-%04d" % i, "body %d\n" % i)
                  for i in range(60)})
    sb.write({"project/.git/HEAD": "ref: refs/heads/main\n"})
    declared = ["named-%04d" % i for i in range(0, 60, 2)] + ["gone-%04d" % i for i in range(300)]
    machine = hook.Machine(str(sb.project), {"HOME": str(sb.home)})
    reads = hook.count_reads(monkeypatch)
    skills = [hook.resolve_skill(hook.HARNESSES[harness], machine, name, "briefing") for name in declared]
    assert [s.name for s in skills if not s.problem] == declared[:30], [s.problem for s in skills[:3]]
    assert all(s.body == "body %d\n" % (2 * i) for i, s in enumerate(skills[:30]))
    skill_reads = [p for p in reads if os.path.basename(p) == "SKILL.md"]
    assert len(skill_reads) <= 60 + 30, len(skill_reads)


def test_a_copilot_plugin_manifest_is_read_once_however_many_names(sandbox, monkeypatch):
    hook = load_hook()
    sb = sandbox({"plugin/.github/plugin/plugin.json": json.dumps({"name": "tools"}),
                  "plugin/skills/s/SKILL.md": skill_md("s", "S BODY\n")})
    sb.write({"home/.copilot/config.json": json.dumps({"installedPlugins": [
        {"name": "tools", "enabled": True, "cache_path": str(sb.path("plugin"))}]})})
    machine = hook.Machine(str(sb.project), {"HOME": str(sb.home)})
    reads = hook.count_reads(monkeypatch)
    skills = [hook.resolve_skill(hook.HARNESSES["copilot"], machine, name, "briefing")
              for name in ["tools:s"] + ["gone-%04d" % i for i in range(300)]]
    assert skills[0].body == "S BODY\n" and all(s.problem == "unknown skill" for s in skills[1:])
    manifest_reads = [p for p in reads if os.path.basename(p) == "plugin.json"]
    assert len(manifest_reads) <= 3, manifest_reads  # its name, its skill folders, its layout: not per name


# ------------------------------------------------------------------ a refused spawn's later parts

@pytest.mark.skipif(ALWAYS_SUBPROCESS, reason="counts calls in this process")
@pytest.mark.parametrize("event", ["SubagentStart", "compacted agent's SessionStart"])
def test_a_refused_spawns_later_parts_stop_at_the_first_missing_name(sandbox, monkeypatch, event):
    """Parts 2..8 say nothing when the spawn is refused, so each resolves names only until the
    first that is missing: 2,000 missing names cost part 1 2,000 lookups and the others one each."""
    hook_package()
    import briefing.resolution as resolution
    sb = sandbox({"project/.claude/skills/here/SKILL.md": skill_md("here", "HERE\n"),
                  "project/.claude/agents/many.md": agent_md(
                      "many", skills=["here"] + ["gone-%04d" % i for i in range(2000)])})
    import briefing.near as near
    looked_up, real = [], resolution.resolve_skill
    monkeypatch.setattr(resolution, "resolve_skill",
                        lambda *args: looked_up.append(args[2]) or real(*args))
    listed, real_listing = [], near.near_skills  # the names a near miss is picked from
    monkeypatch.setattr(near, "near_skills", lambda *args: listed.append(1) or real_listing(*args))
    payload = (sb.spawn("many") if event == "SubagentStart" else
               sb.payload("SessionStart", source="compact", agent_id="a1", agent_type="many"))
    counts, listings = [], []
    for part in range(1, PARTS + 1):
        del looked_up[:], listed[:]
        result = sb.run(payload, args=("--part", part))
        counts.append(len(looked_up))
        listings.append(len(listed))
        if part == 1:
            assert "gone-0000" in result.context and 'status="abort"' in result.context, result
        else:
            assert result.out == "", result
    assert counts == [2001] + [2] * (PARTS - 1), counts
    assert listings == [1] + [0] * (PARTS - 1), listings  # only the part that names them lists near misses


def test_a_briefing_whose_texts_alone_overflow_every_part_is_not_laid_out(monkeypatch):
    """Too large is known from the sizes before any frame is drawn: 5,000 small skills over
    the PARTS parts' room cost no layout (it drew every frame twice)."""
    hook = load_hook()
    import briefing.rendering as rendering

    class Item(object):
        element, dir, body = "skill", "/d", "x" * 30

        def __init__(self, i):
            self.name, self.size = "s-%04d" % i, 30

    monkeypatch.setattr(rendering, "_pack", lambda *args: pytest.fail("laid out"))
    assert hook.render_parts("a", [Item(i) for i in range(5000)], 10000) is None
    monkeypatch.undo()
    assert hook.render_parts("a", [Item(i) for i in range(5000)], 10000) is None
    assert len(hook.render_parts("a", [Item(i) for i in range(300)], 10000)) == 5  # frames and all
