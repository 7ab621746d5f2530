"""End-to-end, issue 32: skills from real marketplaces, judged by what the real Claude Code 2.1.328 does.

Marketplaces are built on disk and installed with Claude Code's own ``plugin
marketplace add`` and ``plugin install``: a local-folder marketplace edited
after the install, a marketplace whose plugins share one root and list their
skills in their entries, plugins with legacy commands with and without
frontmatter, one bare command name in several plugins. One ``claude -p`` run
spawns one agent per case; every skill body carries its own markers, and each
subagent's first request is searched for them: the agent must receive exactly
what Claude Code would give it (once, from Claude Code's preload or from
briefing, never both), or be refused where Claude Code has nothing to give.
"""
import json
import re

import pytest

from conftest import agent_md as unit_agent_md
from kit import Skill, claude_spawner, markers_of, ok
from runners import write_tree
from test_claude import machine, subagent_parts  # noqa: F401  (machine is a fixture)
from test_claude_native import denial_of, request_of

pytestmark = pytest.mark.e2e

PRELOADS, BRIEFS, REFUSED = "claude-code", "briefing", "refused"


def agent(name, skills=None, native=None):
    return unit_agent_md(name, skills, native, body="You are the e2e agent %s. Do the task and report.\n"
                         % name.upper())


class Case:
    """An agent declaring ``declared``; ``want`` are the skills whose text it must get, ``never``
    those it must not, ``source`` who delivers it."""

    def __init__(self, agent_name, declared, source, want=(), never=(), native=True, words=None):
        self.agent = agent_name
        self.declared = declared
        self.source = source
        self.want = list(want)
        self.never = list(never)
        self.native = native
        self.words = words

    def md(self):
        return agent(self.agent, None if self.native else [self.declared], [self.declared] if self.native else None)


def cmd(skill, frontmatter=True):
    """A legacy command file carrying ``skill``'s markers."""
    return ("---\ndescription: %s\n---\n" % skill.description if frontmatter else "") + skill.body


def marketplace_json(name, entries):
    return json.dumps({"name": name, "owner": {"name": "e2e"}, "plugins": entries})


def plugin_json(name):
    return json.dumps({"name": name, "version": "1.0.0", "description": "e2e plugin %s" % name})


def test_every_skill_arrives_from_where_claude_code_takes_it(machine, tmp_path):
    old, new = Skill("live-old"), Skill("live-new")
    xlsx, art, other = Skill("xlsx"), Skill("art"), Skill("other")
    nofm, dup1, dup2 = Skill("nofm"), Skill("dup-p1"), Skill("dup-p2")
    hidden, f1 = Skill("f1-project"), Skill("f1-plugin")
    cases = [
        # 1. a local-folder marketplace is live: the edited text, never the installed copy
        Case("live-native", "live:s", PRELOADS, [new], [old]),
        Case("live-brief", "live:s", BRIEFS, [new], [old], native=False),
        # 2. plugins sharing one root expose only the skills their entries list
        Case("shared-native", "docs:art", REFUSED, never=[art], words="unknown skill(s): docs:art"),
        Case("shared-bare", "art", PRELOADS, [art]),
        Case("shared-brief", "docs:xlsx", BRIEFS, [xlsx], native=False),
        Case("shared-other", "other", REFUSED, never=[other], native=False, words="unknown skill(s): other"),
        # 3. a plugin command without frontmatter is no skill by its bare name
        Case("cmd-nofm", "nofm", REFUSED, never=[nofm], words="unknown skill(s): nofm"),
        # 6. one bare command name in two plugins: the first with frontmatter
        Case("cmd-dup", "dup", PRELOADS, [dup2], [dup1]),
        Case("cmd-dup-brief", "dup", BRIEFS, [dup2], [dup1], native=False),
        #    and a project skill Claude Code passes over leaves the name to a plugin's
        Case("fall-native", "f1", PRELOADS, [f1], [hidden]),
        Case("fall-brief", "f1", BRIEFS, [f1], [hidden], native=False),
        # 4. built-ins: Claude Code preloads its own; one it never preloads is refused
        Case("builtin-native", "dataviz", PRELOADS),
        Case("builtin-never", "debug", REFUSED, words="never preloads"),
        Case("builtin-brief", "simplify", REFUSED, native=False, words="only Claude Code's own preload"),
    ]
    every = [old, new, xlsx, art, other, nofm, dup1, dup2, hidden, f1]
    claude = machine(claude_spawner([c.agent for c in cases], markers_of(every)))
    for case in cases:
        claude.write({"project/.claude/agents/%s.md" % case.agent: case.md()})
    claude.write({"project/.claude/skills/f1/SKILL.md": hidden.md().replace(
        "description:", "disable-model-invocation: true\ndescription:")})

    local = tmp_path / "lmkt"
    write_tree(local, {
        ".claude-plugin/marketplace.json": marketplace_json("lmkt", [
            {"name": n, "source": "./plugins/%s" % n, "description": "d", "version": "1.0.0"}
            for n in ("live", "cmds", "p1", "p2")]),
        "plugins/live/.claude-plugin/plugin.json": plugin_json("live"),
        "plugins/live/skills/s/SKILL.md": old.md().replace("name: live-old", "name: s"),
        "plugins/cmds/.claude-plugin/plugin.json": plugin_json("cmds"),
        "plugins/cmds/commands/nofm.md": cmd(nofm, frontmatter=False),
        "plugins/p1/.claude-plugin/plugin.json": plugin_json("p1"),
        "plugins/p1/commands/dup.md": cmd(dup1, frontmatter=False),
        "plugins/p2/.claude-plugin/plugin.json": plugin_json("p2"),
        "plugins/p2/commands/dup.md": cmd(dup2),
        "plugins/p2/skills/f1/SKILL.md": f1.md().replace("name: f1-plugin", "name: f1"),
    })
    shared = tmp_path / "smkt"
    write_tree(shared, {
        ".claude-plugin/marketplace.json": marketplace_json("smkt", [
            {"name": "docs", "source": "./", "strict": False, "description": "d", "skills": ["./skills/xlsx"]},
            {"name": "examples", "source": "./", "strict": False, "description": "d", "skills": ["./skills/art"]}]),
        "skills/xlsx/SKILL.md": xlsx.md(), "skills/art/SKILL.md": art.md(), "skills/other/SKILL.md": other.md(),
    })
    for market, plugins in ((local, ("live", "cmds", "p1", "p2")), (shared, ("docs", "examples"))):
        ok(claude.cli("plugin", "marketplace", "add", str(market)))
        for name in plugins:
            ok(claude.cli("plugin", "install", "%s@%s" % (name, market.name)))
    known = json.loads((claude.home / ".claude/plugins/known_marketplaces.json").read_text())
    assert known["lmkt"]["source"]["source"] == "directory", known
    installed = json.loads((claude.home / ".claude/plugins/installed_plugins.json").read_text())
    copy = installed["plugins"]["live@lmkt"][0]["installPath"]
    assert old.start in (tmp_path / copy / "skills/s/SKILL.md").read_text()
    # edited after the install, as a git pull would: the installed copy keeps the old text
    (local / "plugins/live/skills/s/SKILL.md").write_text(new.md().replace("name: live-new", "name: s"))

    result = ok(claude.run("Run every agent.", timeout=400))
    server = claude.server
    skills = result.init["skills"]
    assert "docs:xlsx" in skills and "examples:art" in skills, skills
    assert "docs:art" not in skills and "docs:other" not in skills and "examples:other" not in skills, skills
    assert "dataviz" in skills and "debug" in skills, skills

    for case in cases:
        request = request_of(server, case)
        if case.source == REFUSED:
            denial = denial_of(server, case.agent)
            assert request is None, "%s was spawned although Claude Code has nothing to give it" % case.agent
            assert denial and "PreToolUse:Agent hook error" in denial and case.words in denial, denial
            continue
        assert request is not None, "%s was not spawned: %r" % (case.agent, denial_of(server, case.agent))
        for skill in case.want:
            counts = [request.all_text.count(m) for m in skill.markers]
            assert counts == [1, 1], "%s: %s arrived %r times" % (case.agent, skill.name, counts)
        for skill in case.never:
            assert not any(m in request.all_text for m in skill.markers), "%s got %s" % (case.agent, skill.name)
        parts = "".join(subagent_parts(request))
        if case.source == BRIEFS:
            assert all(s.start in parts for s in case.want), "%s: briefing did not deliver it" % case.agent
        else:
            assert not parts, "%s: briefing injected what Claude Code preloads" % case.agent
            preload = request.message_text(0)
            assert all(s.start in preload for s in case.want), "%s: not in Claude Code's preload" % case.agent
    # the built-in came from Claude Code, whose text lives in the binary (reference files only on disk)
    preload = request_of(server, cases[-3]).message_text(0)
    base = re.search(r"Base directory for this skill: (\S+)", preload)
    assert base and "/bundled-skills/" in base.group(1), preload[:400]
    assert not list((claude.cc_tmp).rglob("SKILL.md")), "a built-in's SKILL.md is on disk after all"
    log = result.debug_log.read_text()
    assert "Preloaded skill 'live:s'" in log and "Preloaded skill 'dup'" in log, log[-2000:]
