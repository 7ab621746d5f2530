"""Real marketplaces (issue 32): every skill is found exactly where the real CLI finds it.

Each layout below was measured in the real Claude Code 2.1.328 and Codex 0.169.0
(docs/claude-code.md "How a name resolves", docs/codex.md "How Codex names a
skill"), and is built here as a fixture the way the CLIs' own ``plugin
marketplace add`` and ``plugin install`` leave it. One agent declares one name;
the case says what must happen, in both directions, and it is checked at every
place a verdict shows: the guard, the spawn (what briefing injects), the doctor
and the pre-flight, which all read one Briefing.

  PRELOADS  Claude Code delivers it itself: briefing injects nothing, refuses nothing
  BRIEFS    briefing delivers it, with exactly this body (the file the CLI would take)
  REFUSED   nobody can give the agent this skill: the spawn is refused, saying so
"""
import json
import os

import pytest

from conftest import Symlink, agent_md, role_toml, skill_md
from test_briefing import INSTALLED, PA, PS, SETTINGS, US, aborted, brief, contexts, delivered, guard, nothing
from test_briefing_codex import codex_config, codex_run, outcome

PRELOADS, BRIEFS, REFUSED = "preloads", "briefs", "refused"
KNOWN = "home/.claude/plugins/known_marketplaces.json"
D = "---\ndescription: a command\n---\n"


def sk(name, body, **meta):
    lines = ["---", "name: %s" % name] + ["%s: %s" % (k.replace("_", "-"), v) for k, v in meta.items()]
    return "\n".join(lines + ["description: Use when %s is needed." % name, "---", body])


def marketplace(root, market, entries, files, live=True, cache=None, enabled=None, scope="user"):
    """A Claude Code marketplace with its plugins installed and enabled, as the CLI records them.

    ``live``: added from a local folder (known_marketplaces.json ``"directory"``),
    which Claude Code reads live; else a git marketplace cloned into
    ``~/.claude/plugins/marketplaces/``. ``files`` are the marketplace folder's;
    ``cache`` {plugin: {rel: text}} the installed copies (``installPath``).
    ``enabled``: the enabledPlugins order (default: the entries' order).
    """
    loc = "mkts/%s" % market if live else "home/.claude/plugins/marketplaces/%s" % market
    out = {"%s/.claude-plugin/marketplace.json" % loc: json.dumps(
        {"name": market, "owner": {"name": "t"}, "plugins": entries})}
    out.update({"%s/%s" % (loc, rel): text for rel, text in files.items()})
    source = ({"source": "directory", "path": str(root / loc)} if live else
              {"source": "git", "url": "http://127.0.0.1:9/%s.git" % market})
    out[KNOWN] = json.dumps({market: {"source": source, "installLocation": str(root / loc),
                                      "lastUpdated": "2026-12-02T00:00:00.000Z"}})
    table = {}
    for entry in entries:
        rel = "home/.claude/plugins/cache/%s/%s/1.0.0" % (market, entry["name"])
        for path, text in (cache or {}).get(entry["name"], {}).items():
            out["%s/%s" % (rel, path)] = text
        table["%s@%s" % (entry["name"], market)] = [{"scope": scope, "installPath": str(root / rel),
                                                     "version": "1.0.0"}]
    out[INSTALLED] = json.dumps({"version": 2, "plugins": table})
    keys = ["%s@%s" % (n, market) for n in (enabled or [e["name"] for e in entries])]
    out[SETTINGS["home"]] = json.dumps({"enabledPlugins": {k: True for k in keys}})
    return out


def entry(name, source=None, **extra):
    return dict({"name": name, "source": source or "./plugins/%s" % name, "description": "d"}, **extra)


def manifest(name, **extra):
    return json.dumps(dict({"name": name, "version": "1.0.0"}, **extra))


def plugin(name, files, **manifest_keys):
    """{rel: text} of plugin ``name`` inside a marketplace folder (./plugins/<name>/)."""
    out = {"plugins/%s/.claude-plugin/plugin.json" % name: manifest(name, **manifest_keys)}
    out.update({"plugins/%s/%s" % (name, rel): text for rel, text in files.items()})
    return out


def merged(*parts):
    out = {}
    for part in parts:
        out.update(part)
    return out


# -- the layouts ------------------------------------------------------------------------------

def local_folder(root, gone=False):
    """Cause 1: a local-folder marketplace, edited after install (the copy is stale)."""
    files = plugin("live", {"skills/s/SKILL.md": sk("s", "LIVE BODY\n")})
    cache = {"live": {".claude-plugin/plugin.json": manifest("live"),
                      "skills/s/SKILL.md": sk("s", "STALE COPY\n"),
                      "skills/only-in-copy/SKILL.md": sk("only-in-copy", "STALE COPY\n")}}
    out = marketplace(root, "lmkt", [entry("live")], {} if gone else files, cache=cache)
    return out


def git_marketplace(root):
    """A marketplace from git: Claude Code loads the installed copy."""
    cache = {"gp": {".claude-plugin/plugin.json": manifest("gp"), "skills/s/SKILL.md": sk("s", "COPY BODY\n")}}
    return marketplace(root, "gmkt", [entry("gp")], plugin("gp", {"skills/s/SKILL.md": sk("s", "CLONE\n")}),
                       live=False, cache=cache)


SHARED_FILES = {"skills/%s/SKILL.md" % n: sk(n, "%s BODY\n" % n.upper()) for n in ("xlsx", "pdf", "art", "other")}
SHARED = [entry("docs", "./", strict=False, skills=["./skills/xlsx", "./skills/pdf"]),
          entry("examples", "./", strict=False, skills=["./skills/art"])]


def shared_root(root, live=True, entries=SHARED):
    """Cause 2: plugins sharing one root (source "./", strict false), each listing its skills."""
    cache = None
    if not live:  # the installed copies hold the whole root, every skill of it
        cache = {e["name"]: dict(SHARED_FILES) for e in entries}
    return marketplace(root, "smkt", entries, SHARED_FILES, live=live, cache=cache)


def manifest_lists(root):
    """A plugin.json skills list adds to skills/ (Claude Code); an entry without plugin.json is the manifest."""
    files = merged(plugin("mf", {"skills/a/SKILL.md": sk("a", "MF A\n"), "skills/b/SKILL.md": sk("b", "MF B\n")},
                          skills=["./skills/a"]),
                   {"plugins/mixed/skills/mx/SKILL.md": sk("mx", "MX BODY\n"),
                    "plugins/mixed/extra/ex1/SKILL.md": sk("ex1", "EX1 BODY\n")})
    return marketplace(root, "mm", [entry("mf"), entry("mixed", strict=False, skills=["./extra/ex1"])], files)


def commands(root):
    """Causes 3 and 6: legacy commands with and without frontmatter, one bare name in several plugins."""
    files = merged(
        plugin("cmds", {"commands/nofm.md": "NOFM BODY\n", "commands/withfm.md": D + "WITHFM BODY\n",
                        "commands/named.md": "---\nname: alias-name\ndescription: d\n---\nNAMED BODY\n"}),
        plugin("p1", {"commands/dup.md": "DUP P1 NO FRONTMATTER\n"}),
        plugin("p2", {"commands/dup.md": D + "DUP P2\n", "commands/both.md": D + "BOTH P2\n"}),
        plugin("p3", {"commands/dup.md": D + "DUP P3\n", "commands/both.md": D + "BOTH P3\n"}))
    out = marketplace(root, "cm", [entry(p) for p in ("cmds", "p1", "p2", "p3")], files,
                      enabled=["cmds", "p1", "p3", "p2"])
    out["project/.claude/commands/pnofm.md"] = "PROJECT COMMAND, NO FRONTMATTER\n"
    return out


def fall_through(root):
    """Cause 6, generalised: Claude Code takes the first candidate it preloads, in any root."""
    files = merged(
        plugin("qa", {"skills/f1/SKILL.md": sk("f1", "F1 PLUGIN\n"), "skills/c5/SKILL.md": sk("c5", "C5 PLUGIN\n"),
                      "commands/c3.md": D + "C3 QA COMMAND\n", "skills/o6/SKILL.md": sk("o6", "O6 SKILL\n"),
                      "commands/o6.md": D + "O6 COMMAND\n", "skills/g1/SKILL.md": sk("g1", "G1 PLUGIN\n"),
                      "skills/debug/SKILL.md": sk("debug", "DEBUG PLUGIN\n"),
                      "skills/dataviz/SKILL.md": sk("dataviz", "DATAVIZ PLUGIN\n")}),
        plugin("rb", {"skills/c3/SKILL.md": sk("c3", "C3 RB SKILL\n"),
                      "skills/c2/SKILL.md": sk("c2", "C2 RB\n")}),
        plugin("ra", {"skills/c2/SKILL.md": "---\nname: c2\n---\nC2 RA NO DESCRIPTION\n"}))
    out = marketplace(root, "fm", [entry(p) for p in ("qa", "rb", "ra")], files, enabled=["qa", "ra", "rb"])
    out[PS % "f1"] = sk("f1", "F1 PROJECT HIDDEN\n", disable_model_invocation="true")
    out[PS % "g1"] = sk("g1", "G1 PROJECT OFF\n")
    out["project/.claude/commands/c5.md"] = "C5 PROJECT COMMAND\n"
    out[PS % "simplify"] = sk("simplify", "PROJECT SIMPLIFY\n")
    out["project/.claude/settings.json"] = json.dumps({"skillOverrides": {"g1": "off"}})
    return out


def builtins(root):
    """Cause 4: Claude Code's built-ins, whose text no hook can read."""
    return {}


def rel_of(root, sb_path):
    return os.path.relpath(str(sb_path), str(root))


# case, layout(root), source ("native" or "briefing"), declared, verdict, body or words
CLAUDE = [
    # 1. local folder, live
    ("local folder: the live folder's text, never the stale copy", local_folder, "briefing", "live:s",
     BRIEFS, "LIVE BODY\n"),
    ("local folder: natively, Claude Code preloads it", local_folder, "native", "live:s", PRELOADS, "mkts/lmkt"),
    ("local folder: a skill only the stale copy has", local_folder, "briefing", "live:only-in-copy",
     REFUSED, "unknown"),
    ("local folder gone: Claude Code loads nothing, nor does briefing",
     lambda r: local_folder(r, gone=True), "briefing", "live:s", REFUSED, "unknown"),
    ("git marketplace: the installed copy", git_marketplace, "briefing", "gp:s", BRIEFS, "COPY BODY\n"),
    # 2. shared root, skills listed per plugin
    ("shared root: a listed skill", shared_root, "briefing", "docs:xlsx", BRIEFS, "XLSX BODY\n"),
    ("shared root: another plugin's skill (guarantee 2)", shared_root, "native", "docs:art", REFUSED, "unknown"),
    ("shared root: a skill nobody lists", shared_root, "native", "other", REFUSED, "unknown"),
    ("shared root: by bare name, the plugin that lists it", shared_root, "native", "art", PRELOADS, "skills/art"),
    ("shared root from git: the list from the marketplace's clone, on the copy",
     lambda r: shared_root(r, live=False), "briefing", "docs:other", REFUSED, "unknown"),
    ("shared root from git: a listed skill from the copy",
     lambda r: shared_root(r, live=False), "briefing", "docs:pdf", BRIEFS, "PDF BODY\n"),
    ("shared root listing ./skills: all of skills/",
     lambda r: shared_root(r, entries=[entry("docs", "./", strict=False, skills=["./skills"])]),
     "briefing", "docs:other", BRIEFS, "OTHER BODY\n"),
    ("shared root whose only path leaves it: nothing",
     lambda r: shared_root(r, entries=[entry("docs", "./", strict=False, skills=["../elsewhere"])]),
     "briefing", "docs:xlsx", REFUSED, "unknown"),
    ("plugin.json skills add to skills/", manifest_lists, "native", "mf:b", PRELOADS, "skills/b"),
    ("an entry without plugin.json is the manifest: its paths add to skills/", manifest_lists,
     "briefing", "mixed:ex1", BRIEFS, "EX1 BODY\n"),
    ("... and skills/ still counts", manifest_lists, "briefing", "mixed:mx", BRIEFS, "MX BODY\n"),
    # 3. legacy commands
    ("plugin command without frontmatter, bare name: no skill", commands, "native", "nofm", REFUSED, "unknown"),
    ("... nor for briefing:", commands, "briefing", "nofm", REFUSED, "unknown"),
    ("... by plugin:name it is one, which Claude Code skips", commands, "native", "cmds:nofm",
     BRIEFS, "NOFM BODY\n"),
    ("plugin command with frontmatter, bare name", commands, "native", "withfm", PRELOADS, "commands/withfm.md"),
    ("a command's frontmatter name", commands, "native", "alias-name", PRELOADS, "commands/named.md"),
    ("project command without frontmatter", commands, "native", "pnofm", PRELOADS, ".claude/commands/pnofm.md"),
    # 6. one bare command name, several plugins: the first with frontmatter, in enabledPlugins order
    ("one bare name, several plugins", commands, "native", "dup", PRELOADS, "plugins/p3/commands/dup.md"),
    ("... briefing: takes the same file", commands, "briefing", "dup", BRIEFS, "DUP P3\n"),
    ("... enabledPlugins order, not the name's", commands, "briefing", "both", BRIEFS, "BOTH P3\n"),
    ("a project skill Claude Code skips leaves the name to a plugin's", fall_through, "native", "f1",
     PRELOADS, "plugins/qa/skills/f1"),
    ("... and briefing: gets that same text", fall_through, "briefing", "f1", BRIEFS, "F1 PLUGIN\n"),
    ("a project skill turned off leaves the name to a plugin's", fall_through, "native", "g1",
     PRELOADS, "plugins/qa/skills/g1"),
    ("a plugin skill without description is passed over for the next plugin's", fall_through, "native", "c2",
     PRELOADS, "plugins/rb/skills/c2"),
    ("a project command comes before a plugin's skill", fall_through, "briefing", "c5", BRIEFS,
     "C5 PROJECT COMMAND\n"),
    ("a plugin skill comes before another plugin's command", fall_through, "briefing", "c3", BRIEFS,
     "C3 RB SKILL\n"),
    ("plugin:name: its command before its skill folder", fall_through, "briefing", "qa:o6", BRIEFS,
     "O6 COMMAND\n"),
    ("... a bare name: its skill", fall_through, "briefing", "o6", BRIEFS, "O6 SKILL\n"),
    # 4. built-ins
    ("a built-in under skills:", builtins, "native", "dataviz", PRELOADS, None),
    ("a built-in Claude Code never preloads", builtins, "native", "debug", REFUSED, "never preloads"),
    ("a built-in under briefing:", builtins, "briefing", "simplify", REFUSED, "only Claude Code's own preload delivers it"),
    ("a project skill shadows the built-in", fall_through, "briefing", "simplify", BRIEFS, "PROJECT SIMPLIFY\n"),
    ("a built-in comes before a plugin's skill", fall_through, "native", "dataviz", PRELOADS, None),
    ("a built-in it never preloads leaves the name to a plugin's", fall_through, "briefing", "debug", BRIEFS,
     "DEBUG PLUGIN\n"),
]


def claude_case(sandbox, layout, source, declared):
    sb = sandbox({})
    sb.write(layout(sb.root))
    native = [declared] if source == "native" else None
    sb.write({PA % "a": agent_md("a", [declared] if source == "briefing" else None, native)})
    return sb


def doctor_row(sb, harness, agent="a"):
    result = sb.doctor("--json", "--harness", harness)
    assert result.rc in (0, 1), result
    rows = [row for row in json.loads(result.out)["agents"] if row["agent"] == agent]
    assert len(rows) == 1, result
    return rows[0]


def preflight(sb, harness):
    """The pre-flight's words at session start ('' when it has nothing to say)."""
    if harness == "codex":
        r = sb.run(sb.payload("SessionStart", "codex", source="startup"))
    else:
        r = sb.run(sb.payload("SessionStart", source="startup"), args=("--part", 1))
    return (r.system_message or "") + (r.context or "")


@pytest.mark.parametrize("layout, source, declared, expect, detail", [c[1:] for c in CLAUDE],
                         ids=[c[0] for c in CLAUDE])
def test_claude_code_finds_it_where_claude_code_does(sandbox, layout, source, declared, expect, detail):
    sb = claude_case(sandbox, layout, source, declared)
    r = guard(sb, "a")
    results = brief(sb, "a")
    row = doctor_row(sb, "claude")
    (skill,) = [s for s in row["skills"] if s["name"] == declared]
    words = preflight(sb, "claude")
    if expect == PRELOADS:
        assert r.out == "", r
        nothing(results)
        assert row["status"] == "ok" and skill["delivered_by"] == "claude-code", skill
        assert skill["verdict"].startswith("native (Claude Code preloads"), skill
        if detail:  # the file Claude Code takes
            assert skill["path"] and detail in skill["path"], skill
        else:
            assert skill["path"] is None and "built-in" in skill["verdict"], skill
        assert "'a'" not in words, words
    elif expect == BRIEFS:
        assert r.out == "", r
        got = delivered(results)
        assert got.skills == {declared: detail}, got.skills
        assert row["status"] == "ok" and skill["delivered_by"] == "briefing", skill
        assert "'a'" not in words, words
    else:
        assert r.decision == "deny", r
        assert "agent 'a'" in r.reason and declared in r.reason, r.reason
        if detail != "unknown":
            assert detail in r.reason, r.reason
        aborted(results, "a", [declared])
        assert row["status"] == "FAIL" and skill["status"] in ("missing", "unreadable"), skill
        assert any(detail in p if detail != "unknown" else "unknown" in p or "missing" in p or
                   "install it" in p for p in row["problems"]), row
        assert "'a'" in words, words


def test_a_built_in_in_both_lists_is_left_to_claude_code(sandbox):
    sb = sandbox({PA % "a": agent_md("a", ["dataviz"], ["dataviz"])})
    assert guard(sb, "a").out == ""
    nothing(brief(sb, "a"))
    verdicts = {s["source"]: s["verdict"] for s in doctor_row(sb, "claude")["skills"]}
    assert verdicts["briefing"] == "briefing, preloaded by Claude Code (also in skills:)", verdicts


def test_a_built_in_cannot_reach_an_agent_session(sandbox):
    """``claude --agent`` preloads nothing: a built-in there reaches nobody, and the doctor says so."""
    sb = sandbox({PA % "a": agent_md("a", None, ["dataviz"])})
    shows = json.loads(sb.doctor("--show", "a", "--harness", "claude", "--json").out)["shows"]
    subagent, session = shows
    assert subagent["status"] == "ok" and session["status"] == "FAIL", shows
    assert "preloads nothing into an agent session" in session["reason"], session


def test_a_local_folder_is_read_live_for_agents_too(sandbox):
    sb = sandbox({})
    files = local_folder(sb.root)
    files["mkts/lmkt/plugins/live/agents/helper.md"] = agent_md("helper", ["live:s"])
    sb.write(files)
    assert delivered(brief(sb, "live:helper")).skills == {"live:s": "LIVE BODY\n"}


def test_a_marketplace_source_leaving_its_folder_is_not_followed(sandbox):
    sb = sandbox({})
    sb.write(marketplace(sb.root, "bad", [entry("evil", "../../home/.claude")], {}))
    sb.write({US % "s": sk("s", "USER\n"), PA % "a": agent_md("a", ["evil:s"])})
    r = guard(sb, "a")
    assert r.decision == "deny" and "unknown" in r.reason, r


def test_a_miss_reads_each_plugin_command_once(sandbox, monkeypatch):
    """The frontmatter names of a plugin's commands are read once per payload, however many names miss."""
    from conftest import load_hook
    hook = load_hook()
    sb = sandbox({})
    sb.write(commands(sb.root))
    names = ["gone-%03d" % i for i in range(40)]
    sb.write({PA % "many": agent_md("many", names)})
    reads = hook.count_reads(monkeypatch)
    briefing = hook.claude_briefing("many", str(sb.project), str(sb.home))
    assert {s.name for s in briefing.missing} == set(names)
    command_reads = [p for p in reads if "/commands/" in p]
    assert len(command_reads) == len(set(command_reads)), sorted(command_reads)


# --------------------------------------------------------------------------------------------
# Codex
# --------------------------------------------------------------------------------------------

def codex_plugin(market, name, files, version="1.0.0"):
    """An installed Codex plugin: its cache copy (as `codex plugin add` leaves it)."""
    base = "home/.codex/plugins/cache/%s/%s/%s" % (market, name, version)
    return {"%s/%s" % (base, rel): text for rel, text in files.items()}


def codex_layout(root):
    files = {}
    # 5. a folder of skills linked into ~/.agents/skills: namespaced by the manifest above it
    files["x/superpowers/.claude-plugin/plugin.json"] = manifest("superpowers")
    files["x/superpowers/skills/brainstorming/SKILL.md"] = skill_md("brainstorming", "BRAINSTORMING\n")
    files["home/.agents/skills/superpowers"] = Symlink(str(root / "x/superpowers/skills"))
    files["x/plain/skills/nested/SKILL.md"] = skill_md("nested", "NESTED\n")
    files["home/.agents/skills/plainlink"] = Symlink(str(root / "x/plain/skills"))
    files["home/.agents/skills/a/b/c/d/e/deep6/SKILL.md"] = skill_md("deep6", "DEEP6\n")
    files["home/.agents/skills/a/b/c/d/e/f/deep7/SKILL.md"] = skill_md("deep7", "DEEP7\n")
    files["home/.agents/skills/.hidden/h/SKILL.md"] = skill_md("hidden-one", "HIDDEN\n")
    # 8. a root skill by its frontmatter name
    files["project/.agents/skills/folderx/SKILL.md"] = skill_md("root-named", "ROOT NAMED\n")
    # plugins: 7. migrated commands; 8. frontmatter names; 2. a listed skills path replaces skills/
    files.update(codex_plugin("m", "cmdp", {
        ".claude-plugin/plugin.json": manifest("cmdp"),
        "commands/withfm.md": D + "WITHFM\n",
        ".codex-plugin/migrated-command-skills/source-command-withfm/SKILL.md":
            '---\nname: "source-command-withfm"\ndescription: "a command"\n---\nMIGRATED WITHFM\n'}))
    files.update(codex_plugin("m", "db", {
        ".claude-plugin/plugin.json": manifest("db"),
        "skills/postgresql/SKILL.md": skill_md("postgresql-table-design", "PG TABLES\n"),
        "skills/group/inner/SKILL.md": skill_md("inner", "INNER\n")}))
    files.update(codex_plugin("m", "docs", {
        ".codex-plugin/plugin.json": json.dumps({"strict": False, "description": "d", "name": "docs",
                                                  "skills": ["./skills/xlsx"]}),
        "skills/xlsx/SKILL.md": skill_md("xlsx", "XLSX\n"),
        "skills/other/SKILL.md": skill_md("other", "OTHER\n")}, version="local"))
    files.update(codex_plugin("m", "listed", {
        ".claude-plugin/plugin.json": manifest("listed", skills=["./skills/la"]),
        "skills/la/SKILL.md": skill_md("la", "LA\n"), "skills/lb/SKILL.md": skill_md("lb", "LB\n")}))
    files.update(codex_plugin("m", "two", {
        ".codex-plugin/plugin.json": manifest("two", skills=["./custom", "../../../../../../.agents"]),
        ".claude-plugin/plugin.json": manifest("two", skills=["./skills/tb"]),
        "custom/tc/SKILL.md": skill_md("tc", "TC\n"), "skills/tb/SKILL.md": skill_md("tb", "TB\n")}))
    files["home/.codex/config.toml"] = codex_config(plugins=[(p + "@m", True) for p in
                                                            ("cmdp", "db", "docs", "listed", "two")])
    return files


CODEX = [
    ("a namespaced folder of skills", "superpowers:brainstorming", "BRAINSTORMING\n"),
    ("... not by its bare name", "brainstorming", None),
    ("a folder of skills without a manifest: bare names, any depth", "nested", "NESTED\n"),
    ("six folders down", "deep6", "DEEP6\n"),
    ("seven is too deep", "deep7", None),
    ("hidden folders are skipped", "hidden-one", None),
    ("a root skill by its frontmatter name", "root-named", "ROOT NAMED\n"),
    ("... not by its folder", "folderx", None),
    ("a command migrated at install", "cmdp:source-command-withfm", "MIGRATED WITHFM\n"),
    ("... not by the command's name", "cmdp:withfm", None),
    ("a plugin skill by its frontmatter name", "db:postgresql-table-design", "PG TABLES\n"),
    ("... not by its folder", "db:postgresql", None),
    ("a plugin skill in a nested folder", "db:inner", "INNER\n"),
    ("the synthesized manifest's list", "docs:xlsx", "XLSX\n"),
    ("... replaces skills/", "docs:other", None),
    (".claude-plugin/plugin.json's list, without a Codex manifest", "listed:la", "LA\n"),
    ("... replaces skills/ too", "listed:lb", None),
    ("the Codex manifest before Claude's", "two:tc", "TC\n"),
    ("... whose list is the one read", "two:tb", None),
]


@pytest.mark.parametrize("declared, body", [c[1:] for c in CODEX], ids=[c[0] for c in CODEX])
def test_codex_names_it_as_codex_does(sandbox, declared, body):
    sb = sandbox({})
    sb.write(codex_layout(sb.root))
    sb.write({"project/.codex/agents/r.toml": role_toml("r", [declared])})
    got = outcome(codex_run(sb, "r"))
    g = codex_run(sb, "r", event="PreToolUse", part=None)
    row = doctor_row(sb, "codex", "r")
    words = preflight(sb, "codex")
    if body is None:
        assert got == "ABORT", got
        assert g.decision == "deny" and "unknown skill(s): %s" % declared in g.reason, g
        assert row["status"] == "FAIL", row
        assert "'r'" in words, words
    else:
        assert got not in (None, "ABORT") and got.skills == {declared: body}, got
        assert g.out == "", g
        assert row["status"] == "ok", row
        assert "'r'" not in words, words


def test_codex_project_inside_a_plugin_is_namespaced(sandbox):
    """Measured: a project whose root holds .codex-plugin/plugin.json has its skills as NAME:skill."""
    sb = sandbox({"project/.codex-plugin/plugin.json": manifest("proj"),
                  "project/.codex/skills/pc/SKILL.md": skill_md("pc", "PC\n"),
                  "project/.codex/agents/r.toml": role_toml("r", ["pc"]),
                  "project/.codex/agents/q.toml": role_toml("q", ["proj:pc"])})
    assert outcome(codex_run(sb, "r")) == "ABORT"
    assert outcome(codex_run(sb, "q")).skills == {"proj:pc": "PC\n"}


def test_codex_hit_reads_no_index(sandbox, monkeypatch):
    """The common path stays cheap: a skill found by its folder reads no other SKILL.md."""
    from conftest import load_hook
    hook = load_hook()
    files = {"project/.agents/skills/s%02d/SKILL.md" % i: skill_md("s%02d" % i, "B\n") for i in range(30)}
    sb = sandbox(files)
    reads = hook.count_reads(monkeypatch)
    machine = hook.Machine(str(sb.project), {"HOME": str(sb.home)})
    skill = hook.resolve_codex_skill(machine, "s07", "briefing")
    assert not skill.problem and skill.body == "B\n"
    assert [p for p in reads if p.endswith("SKILL.md")] == [str(sb.project / ".agents/skills/s07/SKILL.md")]


def test_the_doctor_says_which_candidate_claude_code_passes_over_and_why(sandbox):
    """A conditional project skill counts as skipped (a hook cannot see whether the session
    activated it): Claude Code then takes the plugin's, and the doctor names the one passed over."""
    sb = sandbox({})
    sb.write(fall_through(sb.root))
    sb.write({PS % "c9": sk("c9", "C9 PROJECT\n", paths="src/**"),
              "mkts/fm/plugins/qa/skills/c9/SKILL.md": sk("c9", "C9 PLUGIN\n"),
              PA % "a": agent_md("a", None, ["c9"])})
    nothing(brief(sb, "a"))
    (skill,) = doctor_row(sb, "claude")["skills"]
    assert "plugins/qa/skills/c9" in skill["path"], skill
    assert "Claude Code passes over" in skill["verdict"] and "conditional skill (paths:)" in skill["verdict"], skill


def test_the_doctor_says_what_a_name_that_misses_is_called_instead(sandbox):
    sb = sandbox({"project/.codex-plugin/plugin.json": manifest("proj"),
                  "project/.codex/skills/pc/SKILL.md": skill_md("pc", "PC\n"),
                  "project/.agents/skills/folderx/SKILL.md": skill_md("root-named", "R\n"),
                  "project/.codex/agents/r.toml": role_toml("r", ["pc"])})
    (problem,) = doctor_row(sb, "codex", "r")["problems"]
    assert "Codex calls it proj:pc" in problem, problem
    sb = sandbox({})
    sb.write(commands(sb.root))
    sb.write({PA % "a": agent_md("a", None, ["nofm"])})
    row = doctor_row(sb, "claude")
    assert "a plugin command without frontmatter is a skill only as cmds:nofm" in row["problems"][0], row
    assert "cmds:nofm" in row["skills"][0]["verdict"], row
