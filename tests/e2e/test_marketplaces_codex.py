"""End-to-end, issue 32: skills from real marketplaces, named as the real Codex 0.169.0 names them.

Marketplaces are built on disk and installed with Codex's own ``plugin
marketplace add`` and ``plugin add``: a Claude-format marketplace whose plugins
share one root and list their skills (Codex writes each list into a synthesized
``.codex-plugin/plugin.json``), a plugin whose command Codex turns into a skill
at install, a plugin skill whose frontmatter name differs from its folder, and
a folder of skills linked into ``~/.agents/skills`` below a plugin manifest. The
local marketplace is edited after the install: Codex reads its installed copy.
One ``codex exec`` spawns one role per case. Codex's own skill catalog (in the
main agent's first request) is the truth: a role is briefed with exactly the
file Codex lists under the declared name, or refused when Codex lists none.
"""
import json
import os
import re

import pytest

from kit import Skill, codex_outputs, codex_spawner, markers_of, ok
from runners import write_tree
from test_codex import child_requests, machine, plugin_source, role_toml  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


def catalog(request):
    """{skill name: SKILL.md path} of the skills catalog Codex gives the model."""
    text = request.all_text
    roots = dict(re.findall(r"- `(r\d+)` = `([^`]+)`", text))
    out = {}
    for name, short in re.findall(r"^- ([^\n:][^\n]*?): .*\(file: ([^)]+)\)$", text, re.M):
        root, _, rest = short.partition("/")
        out[name] = os.path.join(roots.get(root, root), rest)
    return out


def test_each_role_gets_the_file_codex_calls_by_that_name(machine, tmp_path):
    xlsx, other = Skill("xlsx"), Skill("other")
    migrated, pg = Skill("withfm"), Skill("postgresql-table-design")
    brainstorm, old, new = Skill("brainstorming"), Skill("edited-old"), Skill("edited-new")
    cases = [  # role, declared, delivered skill (None: refused)
        ("r_listed", "docs:xlsx", xlsx),
        ("r_unlisted", "docs:other", None),
        ("r_migrated", "cmdp:source-command-withfm", migrated),
        ("r_command", "cmdp:withfm", None),
        ("r_named", "db:postgresql-table-design", pg),
        ("r_folder", "db:postgresql", None),
        ("r_namespaced", "superpowers:brainstorming", brainstorm),
        ("r_bare", "brainstorming", None),
        ("r_edited", "edit:s", old),
    ]
    codex = machine(codex_spawner([c[0] for c in cases], markers_of([xlsx, migrated, pg, brainstorm, old])))
    for role, declared, _ in cases:
        codex.write({"project/.codex/agents/%s.toml" % role: role_toml(role, [declared])})

    mkt = tmp_path / "smkt"
    write_tree(mkt, {
        ".claude-plugin/marketplace.json": json.dumps({"name": "smkt", "owner": {"name": "e2e"}, "plugins": [
            {"name": "docs", "source": "./", "strict": False, "description": "d", "skills": ["./skills/xlsx"]},
            {"name": "cmdp", "source": "./plugins/cmdp", "description": "d", "version": "1.0.0"},
            {"name": "db", "source": "./plugins/db", "description": "d", "version": "1.0.0"},
            {"name": "edit", "source": "./plugins/edit", "description": "d", "version": "1.0.0"}]}),
        "skills/xlsx/SKILL.md": xlsx.md(), "skills/other/SKILL.md": other.md(),
        "plugins/cmdp/.claude-plugin/plugin.json": json.dumps({"name": "cmdp", "version": "1.0.0"}),
        "plugins/cmdp/commands/withfm.md": "---\ndescription: a command\n---\n" + migrated.body,
        "plugins/db/.claude-plugin/plugin.json": json.dumps({"name": "db", "version": "1.0.0"}),
        "plugins/db/skills/postgresql/SKILL.md": pg.md(),
        "plugins/edit/.claude-plugin/plugin.json": json.dumps({"name": "edit", "version": "1.0.0"}),
        "plugins/edit/skills/s/SKILL.md": old.md().replace("name: edited-old", "name: s"),
    })
    added = codex.cli("plugin", "marketplace", "add", str(mkt), timeout=60)
    assert added.rc == 0, added
    roots = {}
    for name in ("docs", "cmdp", "db", "edit"):
        installed = ok(codex.cli("plugin", "add", "%s@smkt" % name, "--json", timeout=60))
        roots[name] = json.loads(installed.stdout[installed.stdout.index("{"):])["installedPath"]
    synthesized = json.loads(open(os.path.join(roots["docs"], ".codex-plugin", "plugin.json")).read())
    assert synthesized["skills"] == ["./skills/xlsx"], synthesized
    assert os.path.isfile(os.path.join(roots["cmdp"], ".codex-plugin", "migrated-command-skills",
                                       "source-command-withfm", "SKILL.md"))
    (mkt / "plugins/edit/skills/s/SKILL.md").write_text(new.md().replace("name: edited-new", "name: s"))
    # a folder of skills linked in, below a plugin manifest: Codex namespaces it
    write_tree(tmp_path / "superpowers", {
        ".claude-plugin/plugin.json": json.dumps({"name": "superpowers", "version": "1.0.0"}),
        "skills/brainstorming/SKILL.md": brainstorm.md()})
    (codex.home / ".agents" / "skills").mkdir(parents=True, exist_ok=True)
    os.symlink(str(tmp_path / "superpowers" / "skills"), str(codex.home / ".agents" / "skills" / "superpowers"))

    ok(codex.run("Run every role.", timeout=300))
    server = codex.server
    listed = catalog(server.main_requests()[0])
    children = child_requests(server)
    outputs = codex_outputs(server.main_requests()[-1], "spawn_agent")
    assert len(outputs) == len(cases), outputs
    assert {"docs:xlsx", "cmdp:source-command-withfm", "db:postgresql-table-design",
            "superpowers:brainstorming", "edit:s"} <= set(listed), sorted(listed)
    for (role, declared, skill), output in zip(cases, outputs):
        if skill is None:
            assert declared not in listed, "Codex lists %s: %r" % (declared, listed.get(declared))
            assert output.startswith("Tool call blocked by PreToolUse hook: briefing: agent '%s' references "
                                     "unknown skill(s): %s" % (role, declared)), output
            continue
        assert declared in listed, "Codex does not list %s: %r" % (declared, sorted(listed))
        mine = [r for r in children if '<briefing agent="%s"' % role in "".join(r.briefing_parts())]
        assert mine, "%s was not briefed: %r" % (role, output)
        text = "".join(mine[0].briefing_parts())
        assert [text.count(m) for m in skill.markers] == [1, 1], (role, text[:300])
        # the very file Codex lists under that name
        folder = re.search(r'<skill name="%s"[^>]*\bdir="([^"]+)"' % re.escape(declared), text)
        assert folder and os.path.realpath(folder.group(1)) == os.path.realpath(
            os.path.dirname(listed[declared])), (folder and folder.group(1), listed[declared])
    edited = [r for r in children if '<briefing agent="r_edited"' in "".join(r.briefing_parts())][0]
    assert not any(m in edited.all_text for m in new.markers), "the edit reached the agent, not Codex's copy"
