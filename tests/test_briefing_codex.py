"""The Codex side of hooks/briefing-preload (issue 3).

Every behaviour is driven through the hook as a separate process, with a
sandboxed HOME, CODEX_HOME and project (conftest ``sandbox``). The hook's
interpreter is ``BRIEFING_TEST_PYTHON`` (3.8, 3.10 and the newest one here);
pytest itself may run elsewhere. The one exception is the cross-check of the
legacy-table fallback parser against tomli, which loads the hook as a module,
but again in the hook's interpreter (a subprocess), so that it runs on 3.8 too.

Covered, in file order:
 1. which harness sent a SubagentStart (transcript_path, then turn_id, then which
    harness has the agent), incl. a Claude agent and a Codex role sharing a name;
 2. role lookup layers (.codex/ from project root down to cwd, $CODEX_HOME,
    config.toml [agents.<name>] config_file, agents/**/*.toml by name, fast path,
    Markdown is not a role);
 3. declaration: comment form, multi-line strings, legacy [briefing] table with a
    migration systemMessage, the fallback parser (forced by a tomllib shim and
    cross-checked against tomli), [[skills.config]] is not a declaration;
 4. skill resolution roots and plugin:skill through the plugin cache;
 5. output: same framing as Claude Code, the whole briefing once from part 1,
    additionalContextLimit 0 in hooks.json;
 6. missing skill: abort instruction + systemMessage; the spawn_agent guard;
 7. hook mode never fails.
"""
import json
import os
import re
import subprocess

import pytest

from conftest import (
    DIR, HOOK, HOOK_PYTHON, PARTS, REPO, Fifo, Symlink, agent_md, role_toml, skill_md)
from framing import ABORT_OPEN, PART_OPEN, rebuild

HOOK_VERSION = tuple(json.loads(subprocess.check_output(
    [HOOK_PYTHON, "-c", "import json, sys; print(json.dumps(list(sys.version_info[:2])))"])))
BUILTIN_TYPES = ("default", "explorer", "worker")


# --------------------------------------------------------------------------- helpers

def body(tag):
    """A skill body that identifies where it came from."""
    return "Body of %s.\nSECRET-%s: only this skill knows it.\n" % (tag, tag)


def skill(rel_dir, name, tag=None):
    """{<rel_dir>/<name>/SKILL.md: a skill whose body is body(tag or name)}."""
    return {"%s/%s/SKILL.md" % (rel_dir, name): skill_md(name, body(tag or name))}


def pool(*tags):
    """Skills under ~/.agents/skills: found from any cwd and with any CODEX_HOME."""
    files = {}
    for tag in tags:
        files.update(skill("home/.agents/skills", tag))
    return files


def codex_config(plugins=(), agents=(), extra=""):
    """A config.toml shaped like the one Codex writes, with plugin and role entries.

    ``plugins``: (plugin@marketplace, enabled) pairs; ``agents``: (name, config_file).
    """
    lines = [
        'model = "fake-model"',
        'model_provider = "fake"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.fake]",
        'name = "fake"',
        'base_url = "http://127.0.0.1:9/v1"',
        'wire_api = "responses"',
        "",
        "[features]",
        "plugins = true",
        "",
    ]
    for name, config_file in agents:
        lines += ["[agents.%s]" % name, 'description = "declared role %s"' % name,
                  "config_file = %s" % json.dumps(config_file), ""]
    for marketplace in sorted({plugin_id.split("@", 1)[1] for plugin_id, _ in plugins}):
        lines += ["[marketplaces.%s]" % marketplace, 'source_type = "local"',
                  'source = "/srv/%s"' % marketplace, ""]
    for plugin_id, enabled in plugins:
        lines += ['[plugins."%s"]' % plugin_id, "enabled = %s" % ("true" if enabled else "false"), ""]
        # trust entries carry the plugin id too; they are not the plugin's table
        lines += ['[hooks.state."%s:hooks/hooks.json:subagent_start:0:0"]' % plugin_id,
                  'trusted_hash = "sha256:00"', ""]
    lines += ['[projects."/srv/project"]', 'trust_level = "trusted"', ""]
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


def declared_role(skills, instructions="You are a declared role."):
    """A role file referenced by config_file: may hold only developer_instructions."""
    return "# briefing: skills = [%s]\ndeveloper_instructions = %s\n" % (
        ", ".join(json.dumps(s) for s in skills), json.dumps(instructions))


SHIM = (
    "open(%r, 'a').close()\n"
    "raise ModuleNotFoundError(\"No module named 'tomllib'\", name='tomllib')\n"
)


def shim_env(sb):
    """PYTHONPATH with a tomllib.py that fails like on 3.10 (and leaves a marker)."""
    shim = sb.path("shim")
    shim.mkdir(exist_ok=True)
    (shim / "tomllib.py").write_text(SHIM % str(sb.path("shim-was-imported")))
    return {"PYTHONPATH": str(shim), "PYTHONDONTWRITEBYTECODE": "1"}


def codex_run(sb, agent, cwd="project", codex_home=None, no_tomllib=False, part=1, env=None,
              payload_fields=None, event="SubagentStart", **kwargs):
    """Run one Codex handler for a spawn of ``agent`` (role name) from ``cwd`` (sandbox-relative)."""
    run_env = dict(env or {})
    cwd_path = sb.path(cwd)
    cwd_path.mkdir(parents=True, exist_ok=True)
    if codex_home is not None:
        run_env["CODEX_HOME"] = str(sb.path(codex_home))
    if no_tomllib:
        run_env.update(shim_env(sb))
    if event == "SubagentStart":
        payload = sb.spawn(agent, harness="codex")
    else:
        payload = sb.guard(agent, harness="codex")
    payload["cwd"] = str(cwd_path)
    if codex_home is not None:
        payload["transcript_path"] = str(
            sb.path(codex_home) / "sessions" / "2026" / "11" / "30" / "rollout-child.jsonl")
    payload.update(payload_fields or {})
    args = ("--part", part) if part is not None else ()
    return sb.run(payload, args=args, env=run_env, cwd=cwd_path, **kwargs)


def outcome(result):
    """None (printed nothing), "ABORT", or the Rebuilt briefing of one Codex part-1 output."""
    if not result.out.strip():
        return None
    context = result.context
    assert context is not None, result
    if ABORT_OPEN.match(context):
        return "ABORT"
    return rebuild([context])


def assert_briefed(result, expected, agent=None):
    """``expected``: list of (skill name, body) in order; the part-1 output of a Codex spawn."""
    got = outcome(result)
    assert got not in (None, "ABORT"), result
    assert got.order == [name for name, _ in expected], result
    assert got.skills == dict(expected), result
    assert got.parts == {1: 1}, "Codex gets one part labelled 1/1: %r" % got.parts
    if agent is not None:
        assert got.agent == agent
    return got


def assert_nothing(result):
    assert result.out.strip() == "", result


def assert_abort(result, agent, missing, absent_bodies=()):
    context = result.context
    assert context is not None, result
    head = ABORT_OPEN.match(context)
    assert head, "not an abort: %r" % context[:300]
    assert head.group("agent") == agent
    assert "<skill " not in context, context
    assert re.search(r"\bnot\b.{0,40}\battempt", context, re.I | re.S), context
    assert re.search(r"\breport\b", context, re.I), context
    for name in missing:
        assert name in context, (name, context)
    for text in absent_bodies:
        assert text not in result.out, "abort carries a resolved skill's text: %r" % text
    message = result.system_message
    assert message, result
    for name in missing:
        assert name in message, (name, message)


def audit_re(agent, skills):
    return re.compile(r"^briefing: %s ← %s \(\d+(?:[.,]\d+)? kB\)" % (
        re.escape(agent), re.escape(", ".join(skills))))


def realpath(path):
    return os.path.realpath(str(path))


# =========================================================================== 1. harness

TWIN = {
    "project/.claude/agents/twin.md": agent_md("twin", ["cc-skill"]),
    "project/.claude/agents/solo-cc.md": agent_md("solo-cc", ["cc-skill"]),
    "project/.claude/agents/cc-wants-cx.md": agent_md("cc-wants-cx", ["cx-skill"]),
    "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", body("cc-skill")),
    "project/.codex/agents/twin.toml": role_toml("twin", ["cx-skill"]),
    "project/.codex/agents/solo-cx.toml": role_toml("solo-cx", ["cx-skill"]),
    "project/.codex/agents/cx-wants-cc.toml": role_toml("cx-wants-cc", ["cc-skill"]),
    "project/.agents/skills/cx-skill/SKILL.md": skill_md("cx-skill", body("cx-skill")),
}
CC = {"cc-skill": body("cc-skill")}
CX = {"cx-skill": body("cx-skill")}


def harness_payload(sb, agent, transcript, turn_id):
    payload = sb.spawn(agent, harness="claude")  # neutral: no turn_id, no model
    env = {}
    if transcript == "codex":
        payload["transcript_path"] = sb.transcript("codex")
    elif transcript == "claude":
        payload["transcript_path"] = sb.transcript("claude")
    elif transcript == "codex-home":  # $CODEX_HOME without /.codex/ in it
        env["CODEX_HOME"] = str(sb.path("ch"))
        payload["transcript_path"] = str(sb.path("ch/sessions/2026/11/30/rollout-child.jsonl"))
    elif transcript == "dot-codex-elsewhere":
        payload["transcript_path"] = str(sb.path("elsewhere/.codex/sessions/rollout-child.jsonl"))
    elif transcript == "other":
        payload["transcript_path"] = str(sb.path("logs/child.jsonl"))
    elif transcript == "empty":
        payload["transcript_path"] = ""
    elif transcript == "null":
        payload["transcript_path"] = None
    elif transcript == "absent":
        del payload["transcript_path"]
    else:
        raise AssertionError(transcript)
    if turn_id:
        payload["turn_id"] = "01a22b38-0bdf-7c72-95b9-9bf5a61ef9a6"
    return payload, env


@pytest.mark.parametrize("transcript, turn_id, agent, expected", [
    # turn_id, which only Codex sends, decides first; then transcript_path
    ("codex", True, "twin", "cx"),
    ("codex", False, "twin", "cx"),
    ("claude", False, "twin", "cc"),
    ("claude", True, "twin", "cx"),  # turn_id beats a transcript path: it cannot be inherited
    ("codex-home", False, "twin", "cx"),
    ("dot-codex-elsewhere", False, "twin", "cx"),
    # turn_id alone
    ("other", True, "twin", "cx"),
    ("empty", True, "twin", "cx"),
    ("null", True, "twin", "cx"),
    ("absent", True, "twin", "cx"),
    # then which harness has an agent of that name
    ("other", False, "solo-cc", "cc"),
    ("other", False, "solo-cx", "cx"),
    ("absent", False, "solo-cc", "cc"),
    ("absent", False, "solo-cx", "cx"),
    # a decided harness never borrows the other one's agent
    ("codex", True, "solo-cc", None),
    ("claude", False, "solo-cx", None),
    ("other", True, "solo-cc", None),
    # ... nor the other one's skills
    ("claude", False, "cc-wants-cx", "abort"),
    ("codex", True, "cx-wants-cc", "abort"),
])
def test_harness_of_subagent_start(sandbox, transcript, turn_id, agent, expected):
    sb = sandbox(TWIN)
    payload, env = harness_payload(sb, agent, transcript, turn_id)
    results = sb.run_parts(payload, env=env)
    contexts = [r.context for r in results if r.context is not None]
    if expected is None:
        assert all(not r.out.strip() for r in results), results
    elif expected == "abort":
        assert_abort(results[0], agent, ["cx-skill" if agent == "cc-wants-cx" else "cc-skill"],
                     absent_bodies=["SECRET-"])
        assert all(not r.out.strip() for r in results[1:]), results
    elif expected == "cc":
        assert rebuild(contexts).skills == CC, results
        assert "SECRET-cx-skill" not in "".join(r.out for r in results)
    else:
        assert_briefed(results[0], list(CX.items()), agent=agent)
        assert all(not r.out.strip() for r in results[1:]), results
        assert "SECRET-cc-skill" not in results[0].out


def test_shared_name_without_any_harness_signal_is_never_mixed(sandbox):
    sb = sandbox(TWIN)
    payload, env = harness_payload(sb, "twin", "other", False)
    results = sb.run_parts(payload, env=env)
    everything = "".join(r.out for r in results)
    assert not ("SECRET-cc-skill" in everything and "SECRET-cx-skill" in everything), results


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_shared_name_realistic_payloads(sandbox, harness):
    """The payloads each harness really sends, for one name that both define."""
    sb = sandbox(TWIN)
    results = sb.run_parts(sb.spawn("twin", harness=harness))
    contexts = [r.context for r in results if r.context is not None]
    mine, theirs = (CC, "SECRET-cx-skill") if harness == "claude" else (CX, "SECRET-cc-skill")
    assert rebuild(contexts).skills == mine, results
    assert theirs not in "".join(r.out for r in results)


# =========================================================================== 2. role lookup

ROLE_CASES = [
    # id, files, cwd, codex_home, agent, expected tag (None: no briefing at all)
    ("project-layer", {"project/.codex/agents/r.toml": role_toml("r", ["proj"])},
     "project", None, "r", "proj"),
    ("cwd-below-root-sees-root-layer", {"project/.codex/agents/r.toml": role_toml("r", ["proj"])},
     "project/sub/deep", None, "r", "proj"),
    ("nearest-layer-first", {"project/.codex/agents/r.toml": role_toml("r", ["proj"]),
                             "project/sub/.codex/agents/r.toml": role_toml("r", ["sub"])},
     "project/sub/deep", None, "r", "sub"),
    ("layer-below-cwd-unused", {"project/.codex/agents/r.toml": role_toml("r", ["proj"]),
                                "project/sub/.codex/agents/r.toml": role_toml("r", ["sub"])},
     "project", None, "r", "proj"),
    ("sibling-layer-unused", {"project/other/.codex/agents/r.toml": role_toml("r", ["other"])},
     "project/sub", None, "r", None),
    ("above-project-root-unused", {".codex/agents/r.toml": role_toml("r", ["above"])},
     "project", None, "r", None),
    ("nested-git-is-project-root", {"project/.codex/agents/r.toml": role_toml("r", ["proj"]),
                                    "project/sub/.git": DIR},
     "project/sub", None, "r", None),
    ("nested-git-own-layer", {"project/.codex/agents/r.toml": role_toml("r", ["proj"]),
                              "project/sub/.git": DIR,
                              "project/sub/.codex/agents/r.toml": role_toml("r", ["sub"])},
     "project/sub/deep", None, "r", "sub"),
    ("git-file-marks-root", {"project/.codex/agents/r.toml": role_toml("r", ["proj"]),
                             "project/sub/.git": "gitdir: /srv/worktrees/sub\n"},
     "project/sub", None, "r", None),
    ("codex-home-default", {"home/.codex/agents/r.toml": role_toml("r", ["home"])},
     "project", None, "r", "home"),
    ("project-before-codex-home", {"home/.codex/agents/r.toml": role_toml("r", ["home"]),
                                   "project/.codex/agents/r.toml": role_toml("r", ["proj"])},
     "project", None, "r", "proj"),
    ("codex-home-override", {"home/.codex/agents/r.toml": role_toml("r", ["home"]),
                             "ch/agents/r.toml": role_toml("r", ["ch"])},
     "project", "ch", "r", "ch"),
    ("codex-home-override-hides-default", {"home/.codex/agents/r.toml": role_toml("r", ["home"])},
     "project", "ch", "r", None),
    # agents/**/*.toml named by `name`
    ("recursive-by-name", {"project/.codex/agents/team/x/foo.toml": role_toml("bar", ["bar"])},
     "project", None, "bar", "bar"),
    ("file-name-is-not-the-name", {"project/.codex/agents/team/x/foo.toml": role_toml("bar", ["bar"])},
     "project", None, "foo", None),
    ("fast-path-skipped-on-name-mismatch",
     {"project/.codex/agents/r.toml": role_toml("other", ["wrong"]),
      "project/.codex/agents/team/real.toml": role_toml("r", ["right"])},
     "project", None, "r", "right"),
    ("fast-path-file-still-its-own-role",
     {"project/.codex/agents/r.toml": role_toml("other", ["wrong"]),
      "project/.codex/agents/team/real.toml": role_toml("r", ["right"])},
     "project", None, "other", "wrong"),
    ("fast-path-mismatch-only", {"project/.codex/agents/r.toml": role_toml("other", ["wrong"])},
     "project", None, "r", None),
    ("codex-home-recursive", {"home/.codex/agents/deep/er/x.toml": role_toml("r", ["home"])},
     "project", None, "r", "home"),
    # Markdown under agents/ is not a role
    ("markdown-not-a-role", {"project/.codex/agents/r.md": agent_md("r", ["md"])},
     "project", None, "r", None),
    ("markdown-in-codex-home-not-a-role", {"home/.codex/agents/r.md": agent_md("r", ["md"])},
     "project", None, "r", None),
    ("markdown-does-not-shadow", {"project/.codex/agents/r.md": agent_md("r", ["md"]),
                                  "home/.codex/agents/r.toml": role_toml("r", ["home"])},
     "project", None, "r", "home"),
    # config.toml [agents.<name>] config_file, relative to that .codex/
    ("declared-role", {"project/.codex/config.toml": codex_config(agents=[("r", "roles/r.toml")]),
                       "project/.codex/roles/r.toml": declared_role(["decl"])},
     "project", None, "r", "decl"),
    ("declared-dot-slash", {"project/.codex/config.toml": codex_config(agents=[("r", "./roles/r.toml")]),
                            "project/.codex/roles/r.toml": declared_role(["decl"])},
     "project", None, "r", "decl"),
    ("declared-preferred-within-layer",
     {"project/.codex/config.toml": codex_config(agents=[("r", "roles/r.toml")]),
      "project/.codex/roles/r.toml": declared_role(["decl"]),
      "project/.codex/agents/r.toml": role_toml("r", ["disc"])},
     "project", None, "r", "decl"),
    ("declared-relative-to-its-own-layer",
     {"project/sub/.codex/config.toml": codex_config(agents=[("r", "roles/r.toml")]),
      "project/sub/.codex/roles/r.toml": declared_role(["sub"]),
      "project/.codex/roles/r.toml": declared_role(["decoy"]),
      "project/sub/roles/r.toml": declared_role(["decoy"])},
     "project/sub", None, "r", "sub"),
    ("declared-in-codex-home", {"home/.codex/config.toml": codex_config(agents=[("r", "roles/r.toml")]),
                                "home/.codex/roles/r.toml": declared_role(["home"])},
     "project", None, "r", "home"),
    ("declared-in-codex-home-override", {"ch/config.toml": codex_config(agents=[("r", "extra/r.toml")]),
                                         "ch/extra/r.toml": declared_role(["ch"])},
     "project", "ch", "r", "ch"),
    ("nearer-discovered-beats-farther-declared",
     {"home/.codex/config.toml": codex_config(agents=[("r", "roles/r.toml")]),
      "home/.codex/roles/r.toml": declared_role(["home"]),
      "project/.codex/agents/x.toml": role_toml("r", ["proj"])},
     "project", None, "r", "proj"),
    ("no-git-cwd-layer", {"nogit/.codex/agents/r.toml": role_toml("r", ["nogit"])},
     "nogit", None, "r", "nogit"),
]
ALL_TAGS = ("proj", "sub", "other", "above", "home", "ch", "bar", "wrong", "right", "md",
            "decl", "disc", "decoy", "nogit")


@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
@pytest.mark.parametrize("files, cwd, codex_home, agent, expected",
                         [case[1:] for case in ROLE_CASES], ids=[case[0] for case in ROLE_CASES])
def test_role_lookup(sandbox, files, cwd, codex_home, agent, expected, no_tomllib):
    sb = sandbox(dict(pool(*ALL_TAGS), **files))
    result = codex_run(sb, agent, cwd=cwd, codex_home=codex_home, no_tomllib=no_tomllib)
    if expected is None:
        assert_nothing(result)
    else:
        assert_briefed(result, [(expected, body(expected))], agent=agent)


def test_etc_codex_layer_does_not_break_lookup(sandbox):
    """/etc/codex needs root to set up; whatever is (not) there, the user's roles still work."""
    sb = sandbox(dict(pool("proj"), **{"project/.codex/agents/r.toml": role_toml("r", ["proj"])}))
    assert_briefed(codex_run(sb, "r"), [("proj", body("proj"))])
    assert_nothing(codex_run(sb, "no-such-role-anywhere"))


# =========================================================================== 3. declaration

def role_text(*lines):
    return "\n".join(lines) + "\n"


NAME = 'name = "r"'
DESC = 'description = "test role r"'
DECL_CASES = [
    ("comment-first", role_text('# briefing: skills = ["a", "b"]', NAME, DESC), ["a", "b"]),
    ("comment-last", role_text(NAME, DESC, 'developer_instructions = "x"', '# briefing: skills = ["a", "b"]'),
     ["a", "b"]),
    ("comment-between-keys", role_text(NAME, '# briefing: skills = ["a"]', DESC), ["a"]),
    ("order-kept", role_text('# briefing: skills = ["b", "a"]', NAME, DESC), ["b", "a"]),
    ("crlf", role_text('# briefing: skills = ["a", "b"]', NAME, DESC).replace("\n", "\r\n"), ["a", "b"]),
    ("no-declaration", role_text(NAME, DESC, 'developer_instructions = "x"'), None),
    ("inside-basic-multiline", role_text(
        NAME, DESC, 'developer_instructions = """', '# briefing: skills = ["ghost"]', '"""'), None),
    ("inside-literal-multiline", role_text(
        NAME, DESC, "developer_instructions = '''", '# briefing: skills = ["ghost"]', "'''"), None),
    ("after-multiline-closes", role_text(
        NAME, DESC, 'developer_instructions = """', 'Text.', '# briefing: skills = ["ghost"]', 'More."""',
        '# briefing: skills = ["a"]'), ["a"]),
    ("literal-quotes-inside-basic-multiline", role_text(
        NAME, DESC, 'developer_instructions = """', "it's ''' here", '# briefing: skills = ["ghost"]', '"""',
        '# briefing: skills = ["a"]'), ["a"]),
    ("basic-quotes-inside-literal-multiline", role_text(
        NAME, DESC, "developer_instructions = '''", 'say """ here', '# briefing: skills = ["ghost"]', "'''",
        '# briefing: skills = ["a"]'), ["a"]),
    ("escaped-quote-does-not-close", role_text(
        NAME, DESC, 'developer_instructions = """', 'say \\"""', '# briefing: skills = ["ghost"]', '"""',
        '# briefing: skills = ["a"]'), ["a"]),
    ("one-line-triple-quoted", role_text(
        NAME, DESC, 'developer_instructions = """one line"""', '# briefing: skills = ["a"]'), ["a"]),
    ("triple-quotes-inside-plain-string", role_text(
        NAME, DESC, "developer_instructions = 'He wrote \"\"\" once'", '# briefing: skills = ["a"]'), ["a"]),
    # Codex's own [[skills.config]] means "visible to this role", never "preloaded"
    ("skills-config-is-not-a-declaration", role_text(
        NAME, DESC, "", "[[skills.config]]", 'path = "SKILLPATH_b"', "enabled = true"), None),
    ("skills-config-beside-a-declaration", role_text(
        '# briefing: skills = ["a"]', NAME, DESC, "", "[[skills.config]]", 'path = "SKILLPATH_b"',
        "enabled = true", "", "[[skills.config]]", 'path = "SKILLPATH_ghost"', "enabled = false"), ["a"]),
]


@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
@pytest.mark.parametrize("text, expected", [c[1:] for c in DECL_CASES], ids=[c[0] for c in DECL_CASES])
def test_declaration(sandbox, text, expected, no_tomllib):
    sb = sandbox(pool("a", "b"))
    text = text.replace("SKILLPATH_b", str(sb.path("home/.agents/skills/b/SKILL.md")))
    text = text.replace("SKILLPATH_ghost", str(sb.path("home/.agents/skills/ghost/SKILL.md")))
    sb.write({"project/.codex/agents/r.toml": text})
    results = [codex_run(sb, "r", no_tomllib=no_tomllib, part=i) for i in (1, 2, PARTS)]
    if expected is None:
        for r in results:
            assert_nothing(r)
        return
    assert_briefed(results[0], [(s, body(s)) for s in expected], agent="r")
    assert audit_re("r", expected).match(results[0].system_message), results[0]
    for r in results[1:]:
        assert_nothing(r)


def test_declaration_fixtures_are_valid_toml():
    """Guards the table above: every role text is TOML Codex would load (a test-side check)."""
    tomli = pytest.importorskip("tomli")
    for case_id, text, _ in DECL_CASES:
        doc = tomli.loads(text.replace("SKILLPATH_b", "/x").replace("SKILLPATH_ghost", "/y"))
        assert doc["name"] == "r", case_id
        assert "briefing" not in doc, case_id


LEGACY_CASES = [
    ("table-last", role_text(NAME, DESC, "", "[briefing]", 'skills = ["a", "b"]'), ["a", "b"]),
    ("multiline-array-with-comments", role_text(
        NAME, DESC, "", "[briefing]", "skills = [  # what this role needs", '  "b",', "  'a',  # literal",
        "]"), ["b", "a"]),
    ("followed-by-other-tables", role_text(
        NAME, DESC, "", "[briefing]", "skills = ['a']", "", "[[skills.config]]", 'path = "/x/SKILL.md"',
        "enabled = false", "", "[mcp_servers.docs]", 'command = "docs"'), ["a"]),
    ("crlf", role_text(NAME, DESC, "[briefing]", 'skills = ["a"]').replace("\n", "\r\n"), ["a"]),
    ("table-inside-multiline-string", role_text(
        NAME, DESC, 'developer_instructions = """', "[briefing]", 'skills = ["ghost"]', '"""'), None),
    ("other-table-skills", role_text(NAME, DESC, "", "[other]", 'skills = ["ghost"]'), None),
]


@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
@pytest.mark.parametrize("text, expected", [c[1:] for c in LEGACY_CASES], ids=[c[0] for c in LEGACY_CASES])
def test_legacy_briefing_table(sandbox, text, expected, no_tomllib):
    sb = sandbox(dict(pool("a", "b"), **{"project/.codex/agents/r.toml": text}))
    results = [codex_run(sb, "r", no_tomllib=no_tomllib, part=i) for i in (1, PARTS)]
    for r in results[1:]:
        assert_nothing(r)
    if expected is None:
        assert_nothing(results[0])
        return
    assert_briefed(results[0], [(s, body(s)) for s in expected], agent="r")
    message = results[0].system_message
    assert audit_re("r", expected).match(message), message
    # the owner is told to switch to the comment form, and why
    assert "# briefing:" in message, message
    assert re.search(r"drop|ignor", message, re.I), message


@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
def test_legacy_table_missing_skill_aborts(sandbox, no_tomllib):
    sb = sandbox(dict(pool("a"), **{
        "project/.codex/agents/r.toml": role_text(NAME, DESC, "[briefing]", 'skills = ["a", "gone"]')}))
    assert_abort(codex_run(sb, "r", no_tomllib=no_tomllib), "r", ["gone"], absent_bodies=[body("a")])


def test_shim_really_hides_tomllib(sandbox):
    """The fallback tests only mean something if the shim is what the hook's import finds."""
    sb = sandbox()
    env = sb.env(**shim_env(sb))
    proc = subprocess.run([HOOK_PYTHON, "-c", "import tomllib"], env=env, stderr=subprocess.PIPE)
    assert proc.returncode != 0
    assert b"ModuleNotFoundError" in proc.stderr
    assert sb.path("shim-was-imported").exists()


@pytest.mark.skipif(HOOK_VERSION < (3, 11), reason="no tomllib to fall back from")
def test_legacy_table_with_shim_takes_the_fallback(sandbox):
    sb = sandbox(dict(pool("a"), **{"project/.codex/agents/r.toml":
                                    role_text(NAME, DESC, "[briefing]", 'skills = ["a"]')}))
    assert_briefed(codex_run(sb, "r", no_tomllib=True), [("a", body("a"))])
    assert sb.path("shim-was-imported").exists(), "the hook never tried tomllib"


@pytest.mark.parametrize("what", ["claude-spawn", "claude-guard", "claude-abort"])
def test_claude_code_path_never_imports_tomllib(sandbox, what):
    sb = sandbox({
        "project/.claude/agents/cc.md": agent_md("cc", ["cc-skill"]),
        "project/.claude/agents/broken.md": agent_md("broken", ["gone"]),
        "project/.claude/skills/cc-skill/SKILL.md": skill_md("cc-skill", body("cc-skill")),
        # a Codex side that would need TOML, to tempt the hook
        "project/.codex/config.toml": codex_config(agents=[("cc", "roles/cc.toml")]),
        "project/.codex/roles/cc.toml": role_text("[briefing]", 'skills = ["cc-skill"]'),
    })
    env = shim_env(sb)
    if what == "claude-spawn":
        results = sb.run_parts(sb.spawn("cc"), env=env)
        assert rebuild([r.context for r in results if r.context]).skills == {"cc-skill": body("cc-skill")}
    elif what == "claude-guard":
        assert sb.run(sb.guard("broken"), env=env).decision == "deny"
    else:
        assert ABORT_OPEN.match(sb.run(sb.spawn("broken"), args=("--part", 1), env=env).context or "")
    assert not sb.path("shim-was-imported").exists(), "the Claude Code path imported tomllib"


# ---- the fallback parser, cross-checked against tomli (in the hook's interpreter)

FALLBACK_VALID = [
    ("basic", '[briefing]\nskills = ["a", "b"]\n'),
    ("literal", "[briefing]\nskills = ['a', 'b']\n"),
    ("mixed-quotes", "[briefing]\nskills = [\"a\", 'b']\n"),
    ("no-spaces", '[briefing]\nskills=["a","b"]\n'),
    ("extra-spaces-tabs", '[briefing]\n  skills \t=\t [ "a" ,\t"b" ]  \n'),
    ("trailing-comma", '[briefing]\nskills = ["a", "b",]\n'),
    ("multiline", '[briefing]\nskills = [\n  "a",\n  "b",\n]\n'),
    ("multiline-comments", '[briefing]\nskills = [ # first\n  "a", # the a skill\n  # "ghost",\n  "b"\n] # end\n'),
    ("empty-list", "[briefing]\nskills = []\n"),
    ("plugin-names", '[briefing]\nskills = ["tools:lint", "my-plugin:x_y.z"]\n'),
    ("unicode", '[briefing]\nskills = ["café", "日本"]\n'),
    ("hash-in-string", '[briefing]\nskills = ["a#b", \'c # d\']\n'),
    ("bracket-in-string", '[briefing]\nskills = ["a]", "[b"]\n'),
    ("comma-in-string", '[briefing]\nskills = ["a,b"]\n'),
    ("escaped-quote", '[briefing]\nskills = ["a\\"b"]\n'),
    ("escaped-backslash", '[briefing]\nskills = ["a\\\\b"]\n'),
    ("crlf", '[briefing]\r\nskills = [\r\n  "a",\r\n  "b"\r\n]\r\n'),
    ("header-spaces", '[ briefing ]\nskills = ["a"]\n'),
    ("header-comment", '[briefing] # legacy\nskills = ["a"]\n'),
    ("other-key-first", '[briefing]\nnote = "x"\nskills = ["a"]\nafter = 1\n'),
    ("role-around", 'name = "r"\ndescription = "d"\ndeveloper_instructions = """\nDo [briefing] things.\n"""\n\n'
                    '[briefing]\nskills = ["a"]\n\n[mcp_servers.x]\ncommand = "y"\nskills = ["ghost"]\n'),
    ("skills-config-around", '[[skills.config]]\npath = "/x"\nenabled = true\n\n[briefing]\nskills = ["a"]\n\n'
                             '[[skills.config]]\npath = "/y"\nenabled = false\n'),
    ("no-table", 'name = "r"\nskills = ["ghost"]\n'),
    ("no-skills-key", '[briefing]\nnote = "x"\n'),
    ("other-table", '[other]\nskills = ["ghost"]\n'),
    ("table-then-subtable", '[briefing]\nskills = ["a"]\n\n[briefing.extra]\nx = 1\n'),
    ("array-of-tables-skills", '[[skills]]\nname = "ghost"\n'),
    ("skills-config-only", '[[skills.config]]\npath = "/x/SKILL.md"\nenabled = true\n'),
    ("table-in-basic-multiline", 'x = """\n[briefing]\nskills = ["ghost"]\n"""\n'),
    ("table-in-literal-multiline", "x = '''\n[briefing]\nskills = [\"ghost\"]\n'''\n"),
    ("key-in-multiline-after-table", '[briefing]\nnote = """\nskills = ["ghost"]\n"""\nskills = ["a"]\n'),
    ("commented-out", '# [briefing]\n# skills = ["ghost"]\n'),
    ("commented-key", '[briefing]\n# skills = ["ghost"]\nskills = ["a"]\n'),
    ("key-after-table-ends", '[briefing]\nnote = 1\n\n[other]\nskills = ["ghost"]\n'),
    ("comment-declaration-only", '# briefing: skills = ["a"]\nname = "r"\n'),
]
FALLBACK_MALFORMED = [
    ("unterminated-array", '[briefing]\nskills = ["a"\n'),
    ("unterminated-string", '[briefing]\nskills = ["a]\n'),
    ("bare-word", "[briefing]\nskills = [a]\n"),
    ("missing-comma", '[briefing]\nskills = ["a" "b"]\n'),
    ("double-comma", '[briefing]\nskills = ["a",, "b"]\n'),
    ("no-value", "[briefing]\nskills =\n"),
    ("duplicate-key", '[briefing]\nskills = ["a"]\nskills = ["b"]\n'),
    ("garbage-after-array", '[briefing]\nskills = ["a"] x\n'),
]


@pytest.fixture(scope="module")
def fallback_results(tmp_path_factory):
    """Run parse_briefing_table_fallback on every case, in the hook's interpreter."""
    texts = [text for _, text in FALLBACK_VALID + FALLBACK_MALFORMED]
    folder = tmp_path_factory.mktemp("fallback")
    cases = folder / "cases.json"
    cases.write_text(json.dumps(texts))
    script = (
        "import json, os, sys\n"
        "sys.dont_write_bytecode = True\n"
        "sys.path.insert(0, os.path.dirname(sys.argv[1]))\n"
        "from briefing import toml_subset as mod\n"
        "out = []\n"
        "for text in json.load(open(sys.argv[2], encoding='utf-8')):\n"
        "    try:\n"
        "        out.append({'ok': mod.parse_briefing_table_fallback(text)})\n"
        "    except mod.ParseError as exc:\n"
        "        out.append({'parse_error': str(exc)})\n"
        "    except Exception as exc:\n"
        "        out.append({'crash': repr(exc)})\n"
        "sys.stdout.write(json.dumps(out))\n"
    )
    proc = subprocess.run([HOOK_PYTHON, "-B", "-c", script, str(HOOK), str(cases)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                               "HOME": str(folder)}, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    return dict(zip(texts, json.loads(proc.stdout.decode("utf-8"))))


ERROR = "ParseError"


def tomli_reference(text):
    """What the tomllib path makes of a role: skills, None (no [briefing] table) or ERROR.

    A [briefing] table whose ``skills`` is absent or not an array of strings is
    an error on the tomllib path too (parse_briefing_table), so it is here.
    """
    tomli = pytest.importorskip("tomli")
    doc = tomli.loads(text)
    if "briefing" not in doc:
        return None
    table = doc["briefing"]
    skills = table.get("skills") if isinstance(table, dict) else None
    if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
        return ERROR
    return skills


@pytest.mark.parametrize("text", [t for _, t in FALLBACK_VALID], ids=[i for i, _ in FALLBACK_VALID])
def test_fallback_matches_tomli(fallback_results, text):
    expected = tomli_reference(text)
    got = fallback_results[text]
    if expected == ERROR:
        assert "parse_error" in got, got
    else:
        assert got == {"ok": expected}


# Spellings of the table that are not the legacy "[briefing]" line. Whatever the hook
# makes of them, it must make the same of them with and without tomllib.
ODD_SPELLINGS = [
    ("quoted-header", '["briefing"]\nskills = ["a"]\n'),
    ("tab-in-header", '[\tbriefing]\nskills = ["a"]\n'),
    ("subtable-only", '[briefing.sub]\nskills = ["a"]\n'),
    ("dotted-key", 'briefing.skills = ["a"]\n'),
    ("inline-table", 'briefing = { skills = ["a"] }\n'),
]


@pytest.mark.parametrize("text", [t for _, t in ODD_SPELLINGS], ids=[i for i, _ in ODD_SPELLINGS])
def test_odd_spellings_same_with_and_without_tomllib(sandbox, text):
    sb = sandbox(dict(pool("a"), **{"project/.codex/agents/r.toml": NAME + "\n" + DESC + "\n" + text}))
    with_lib = codex_run(sb, "r")
    without = codex_run(sb, "r", no_tomllib=True)
    assert (with_lib.data, with_lib.rc) == (without.data, without.rc)


@pytest.mark.parametrize("text", [t for _, t in FALLBACK_MALFORMED], ids=[i for i, _ in FALLBACK_MALFORMED])
def test_fallback_rejects_what_tomli_rejects(fallback_results, text):
    tomli = pytest.importorskip("tomli")
    with pytest.raises(tomli.TOMLDecodeError):
        tomli.loads(text)
    assert "parse_error" in fallback_results[text], fallback_results[text]


@pytest.mark.parametrize("text", [t for _, t in FALLBACK_MALFORMED], ids=[i for i, _ in FALLBACK_MALFORMED])
@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
def test_malformed_legacy_table_never_fails_the_hook(sandbox, text, no_tomllib):
    sb = sandbox(dict(pool("a", "b"), **{"project/.codex/agents/r.toml": NAME + "\n" + text}))
    for part in (1, 2):
        result = codex_run(sb, "r", no_tomllib=no_tomllib, part=part)
        assert result.data is not None or not result.out.strip(), result
    assert codex_run(sb, "r", no_tomllib=no_tomllib, part=None, event="PreToolUse").rc == 0


# =========================================================================== 4. skill resolution

# cwd = project/sub; nearest first
SKILL_ROOTS = [
    "project/sub/.codex/skills",
    "project/sub/.agents/skills",
    "project/.codex/skills",
    "project/.agents/skills",
    "home/.codex/skills",          # $CODEX_HOME/skills
    "home/.agents/skills",         # ~/.agents/skills
    "home/.codex/skills/.system",  # $CODEX_HOME/skills/.system
]


@pytest.mark.parametrize("first", range(len(SKILL_ROOTS)), ids=SKILL_ROOTS)
def test_skill_root_order(sandbox, first):
    files = {"project/.codex/agents/r.toml": role_toml("r", ["s"])}
    for root in SKILL_ROOTS[first:]:
        files.update(skill(root, "s", tag=root))
    sb = sandbox(files)
    got = assert_briefed(codex_run(sb, "r", cwd="project/sub"), [("s", body(SKILL_ROOTS[first]))])
    assert realpath(got.dirs["s"]) == realpath(sb.path(SKILL_ROOTS[first]) / "s")


@pytest.mark.parametrize("files, cwd, codex_home, expected", [
    ({"ch/skills/s/SKILL.md": skill_md("s", body("ch"))}, "project", "ch", "ch"),
    ({"ch/skills/.system/s/SKILL.md": skill_md("s", body("ch-system"))}, "project", "ch", "ch-system"),
    ({"ch/skills/.system/s/SKILL.md": skill_md("s", body("ch-system")),
      "home/.agents/skills/s/SKILL.md": skill_md("s", body("agents"))}, "project", "ch", "agents"),
    ({"ch/skills/s/SKILL.md": skill_md("s", body("ch")),
      "home/.agents/skills/s/SKILL.md": skill_md("s", body("agents"))}, "project", "ch", "ch"),
    ({"home/.codex/skills/s/SKILL.md": skill_md("s", body("home"))}, "project", "ch", None),
    ({"home/.codex/skills/.system/s/SKILL.md": skill_md("s", body("home"))}, "project", "ch", None),
    # only from cwd up to the project root
    ({".codex/skills/s/SKILL.md": skill_md("s", body("above")),
      ".agents/skills/s/SKILL.md": skill_md("s", body("above"))}, "project", None, None),
    ({"project/other/.codex/skills/s/SKILL.md": skill_md("s", body("sibling"))}, "project/sub", None, None),
    ({"project/sub/deep/.agents/skills/s/SKILL.md": skill_md("s", body("below"))}, "project/sub", None, None),
    ({"project/.agents/skills/s/SKILL.md": skill_md("s", body("outer")),
      "project/sub/.git": DIR}, "project/sub", None, None),
    # Claude Code's folders are not Codex roots
    ({"project/.claude/skills/s/SKILL.md": skill_md("s", body("claude")),
      "home/.claude/skills/s/SKILL.md": skill_md("s", body("claude"))}, "project", None, None),
], ids=["codex-home-skills", "codex-home-system", "agents-before-system", "codex-home-before-agents",
        "override-hides-default", "override-hides-default-system", "above-project-root",
        "sibling-dir", "below-cwd", "outside-nested-git", "claude-folders"])
def test_skill_roots_table(sandbox, files, cwd, codex_home, expected):
    sb = sandbox(dict(files, **{"project/.codex/agents/r.toml": role_toml("r", ["s"]),
                                "project/sub/.codex/agents/r.toml": role_toml("r", ["s"])}))
    result = codex_run(sb, "r", cwd=cwd, codex_home=codex_home)
    if expected is None:
        assert_abort(result, "r", ["s"], absent_bodies=["SECRET-"])
    else:
        assert_briefed(result, [("s", body(expected))])


def plugin_files(codex_home="home/.codex", marketplace="mkt", plugin="tools", version="0.1.0",
                 skills=("lint",), tag=None):
    base = "%s/plugins/cache/%s/%s/%s" % (codex_home, marketplace, plugin, version)
    files = {base + "/.codex-plugin/plugin.json": json.dumps(
        {"name": plugin, "version": version, "description": "test plugin"})}
    for name in skills:
        files.update(skill(base + "/skills", name, tag=tag or "%s@%s/%s" % (plugin, marketplace, version)))
    return files


PLUGIN_CASES = [
    # id, files, codex_home, declared, expected tag (None: missing)
    ("enabled", dict(plugin_files(), **{"home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)])}),
     None, "tools:lint", "tools@mkt/0.1.0"),
    ("disabled", dict(plugin_files(), **{"home/.codex/config.toml": codex_config(plugins=[("tools@mkt", False)])}),
     None, "tools:lint", None),
    ("not-in-config", dict(plugin_files(), **{"home/.codex/config.toml": codex_config()}),
     None, "tools:lint", None),
    ("no-config", plugin_files(), None, "tools:lint", None),
    ("enabled-elsewhere-only", dict(plugin_files(), **{
        "home/.codex/config.toml": codex_config(plugins=[("tools@other", True)])}), None, "tools:lint", None),
    ("the-enabled-marketplace", dict(
        plugin_files(marketplace="mkt-a"), **dict(plugin_files(marketplace="mkt-b"), **{
            "home/.codex/config.toml": codex_config(plugins=[("tools@mkt-a", False), ("tools@mkt-b", True)])})),
     None, "tools:lint", "tools@mkt-b/0.1.0"),
    ("skill-not-in-plugin", dict(plugin_files(), **{
        "home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)])}), None, "tools:nope", None),
    ("bare-name-not-from-plugins", dict(plugin_files(), **{
        "home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)])}), None, "lint", None),
    ("namespaced-ignores-roots", dict(plugin_files(), **dict(skill("home/.agents/skills", "lint", tag="root"), **{
        "home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)])})),
     None, "tools:lint", "tools@mkt/0.1.0"),
    ("other-plugin-name", dict(plugin_files(plugin="other"), **{
        "home/.codex/config.toml": codex_config(plugins=[("other@mkt", True), ("tools@mkt", True)])}),
     None, "tools:lint", None),
    ("codex-home-override", dict(plugin_files(codex_home="ch"), **{
        "ch/config.toml": codex_config(plugins=[("tools@mkt", True)])}), "ch", "tools:lint", "tools@mkt/0.1.0"),
    ("codex-home-override-hides-default", dict(plugin_files(), **{
        "home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)])}), "ch", "tools:lint", None),
    ("enabled-with-comment", dict(plugin_files(), **{"home/.codex/config.toml": codex_config().replace(
        "[projects.", '[plugins."tools@mkt"]\nenabled = true  # installed by codex plugin add\n\n[projects.')}),
     None, "tools:lint", "tools@mkt/0.1.0"),
]


@pytest.mark.parametrize("no_tomllib", [False, True], ids=["tomllib", "no-tomllib"])
@pytest.mark.parametrize("files, codex_home, declared, expected",
                         [c[1:] for c in PLUGIN_CASES], ids=[c[0] for c in PLUGIN_CASES])
def test_plugin_skill(sandbox, files, codex_home, declared, expected, no_tomllib):
    sb = sandbox(dict(files, **{"project/.codex/agents/r.toml": role_toml("r", [declared])}))
    result = codex_run(sb, "r", codex_home=codex_home, no_tomllib=no_tomllib)
    if expected is None:
        assert_abort(result, "r", [declared], absent_bodies=["SECRET-"])
        return
    got = outcome(result)
    assert got not in (None, "ABORT"), result
    assert list(got.skills.values()) == [body(expected)], result
    (dir_attr,) = got.dirs.values()
    marketplace_plugin, version = expected.split("/")
    plugin, marketplace = marketplace_plugin.split("@")
    assert realpath(dir_attr) == realpath(sb.path(codex_home or "home/.codex") / "plugins" / "cache" / marketplace
                                          / plugin / version / "skills" / declared.split(":")[1])


def set_tree_mtime(path, when):
    for folder, dirs, files in os.walk(str(path)):
        for name in files + dirs:
            os.utime(os.path.join(folder, name), (when, when))
    os.utime(str(path), (when, when))


@pytest.mark.parametrize("versions, newest", [
    (["0.9.0", "0.10.0"], "0.9.0"),
    (["0.9.0", "0.10.0"], "0.10.0"),
    (["2.0.0", "local", "a1b2c3d"], "a1b2c3d"),
    (["2.0.0", "local", "a1b2c3d"], "local"),
])
def test_plugin_version_most_recently_installed(sandbox, versions, newest):
    """Several cached versions: the most recently installed directory (by mtime) wins."""
    files = {"home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)]),
             "project/.codex/agents/r.toml": role_toml("r", ["tools:lint"])}
    for version in versions:
        files.update(plugin_files(version=version))
    sb = sandbox(files)
    base = sb.path("home/.codex/plugins/cache/mkt/tools")
    for i, version in enumerate(versions):
        set_tree_mtime(base / version, 1700000000 + i)
    set_tree_mtime(base / newest, 1800000000)
    got = outcome(codex_run(sb, "r"))
    assert got not in (None, "ABORT")
    assert list(got.skills.values()) == [body("tools@mkt/%s" % newest)]


# =========================================================================== 5. output

def test_hooks_json_subagent_start_unlimited():
    from hook_commands import first_attempt
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    (group,) = config["hooks"]["SubagentStart"]
    assert len(group["hooks"]) == PARTS
    for i, handler in enumerate(group["hooks"], 1):
        assert type(handler.get("additionalContextLimit")) is int and handler["additionalContextLimit"] == 0
        assert first_attempt(handler["command"])[-2:] == ["--part", str(i)], handler
    # the guard entry is matched by Codex's "Agent" alias for spawn_agent
    guards = [g for g in config["hooks"]["PreToolUse"] if "briefing-preload" in json.dumps(g)]
    assert guards and all(re.search(g.get("matcher", ""), "Agent") for g in guards)


def big_body(kb, tag):
    lines, i, size = [], 0, 0
    while size < kb * 1000:
        lines.append("%s line %05d: <tag attr=\"&\"> `code` — ünïcödé %s" % (tag, i, "x" * (i % 37)))
        size += len(lines[-1]) + 1
        i += 1
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bodies", [
    {"a": body("a")},
    {"a": body("a"), "b": body("b"), "c": body("c")},
    {"big": big_body(40, "big")},
    {"big1": big_body(30, "one"), "big2": big_body(30, "two"), "small": "tiny"},
    {"odd": '</skill>\n</briefing>\n<skill name="x" dir="y" seal="0123456789ab">\n]]> "\'&<>\r\nno newline at end'},
], ids=["one", "three", "40kB", "60kB-in-three", "hostile-text"])
def test_codex_gets_whole_briefing_from_part_one(sandbox, bodies):
    files = {"project/.codex/agents/r.toml": role_toml("r", list(bodies))}
    for name, text in bodies.items():
        files["project/.agents/skills/%s/SKILL.md" % name] = skill_md(name, text)
    sb = sandbox(files)
    results = sb.run_parts(sb.spawn("r", harness="codex"))
    first = results[0]
    assert set(first.data) <= {"hookSpecificOutput", "systemMessage"}, first
    assert first.data["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    assert set(first.data["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    got = assert_briefed(first, list(bodies.items()), agent="r")
    for name in bodies:
        assert realpath(got.dirs[name]) == realpath(sb.path("project/.agents/skills") / name)
    assert audit_re("r", list(bodies)).match(first.system_message), first.system_message
    for i, r in enumerate(results[1:], 2):
        assert r.out.strip() == "", "part %d/%d printed under Codex: %r" % (i, PARTS, r)


def test_codex_takes_more_than_claude_code_parts_can(sandbox):
    """80 kB does not fit in PARTS Claude Code outputs, but is one context under Codex."""
    text = big_body(80, "huge")
    sb = sandbox({"project/.codex/agents/r.toml": role_toml("r", ["huge"]),
                  "project/.agents/skills/huge/SKILL.md": skill_md("huge", text),
                  "project/.claude/agents/r.md": agent_md("r", ["huge"]),
                  "project/.claude/skills/huge/SKILL.md": skill_md("huge", text)})
    assert_nothing(sb.run(sb.guard("r", harness="codex")))
    assert_briefed(sb.run(sb.spawn("r", harness="codex"), args=("--part", 1)), [("huge", text)])
    assert sb.run(sb.guard("r", harness="claude")).decision == "deny"  # the control


def test_codex_briefing_over_its_cap_is_refused(sandbox):
    bodies = {"big1": big_body(300, "one"), "big2": big_body(300, "two")}
    files = {"project/.codex/agents/r.toml": role_toml("r", list(bodies))}
    for name, text in bodies.items():
        files["project/.agents/skills/%s/SKILL.md" % name] = skill_md(name, text)
    sb = sandbox(files)
    total = sum(len(text.encode("utf-8")) for text in bodies.values())
    reason = deny_reason(sb.run(sb.guard("r", harness="codex")))
    assert reason.startswith("briefing: agent 'r' "), reason
    numbers = [int(n) for n in re.findall(r"\d+", reason)]
    assert total in numbers, (total, reason)
    assert any(0 < n < total for n in numbers), "the limit is named: %r" % reason
    results = sb.run_parts(sb.spawn("r", harness="codex"))
    assert_abort(results[0], "r", [], absent_bodies=["line 00000"])
    for r in results[1:]:
        assert_nothing(r)


def test_codex_parts_in_any_order_still_once(sandbox):
    """Handlers may finish in any order; only part 1 ever prints under Codex."""
    sb = sandbox(dict(pool("a"), **{"project/.codex/agents/r.toml": role_toml("r", ["a"])}))
    payload = sb.spawn("r", harness="codex")
    outs = {i: sb.run(payload, args=("--part", i)).out for i in reversed(range(1, PARTS + 1))}
    assert [i for i, out in outs.items() if out.strip()] == [1]


def test_same_framing_as_claude_code(sandbox):
    text = "Shared body.\nWith two lines & <markup>.\n"
    sb = sandbox({
        "project/.claude/agents/same.md": agent_md("same", ["hs"]),
        "project/.claude/skills/hs/SKILL.md": skill_md("hs", text),
        "project/.codex/agents/same.toml": role_toml("same", ["hs"]),
        "project/.codex/skills/hs/SKILL.md": skill_md("hs", text),
    })
    claude = [r.context for r in sb.run_parts(sb.spawn("same", harness="claude")) if r.context]
    codex = sb.run(sb.spawn("same", harness="codex"), args=("--part", 1)).context
    assert len(claude) == 1, "a small briefing is one part under Claude Code too"

    def normal(context, skill_dir):
        seal = PART_OPEN.match(context).group("seal")
        return context.replace(seal, "SEAL").replace(str(skill_dir), "DIR")

    assert normal(codex, sb.path("project/.codex/skills/hs")) == normal(
        claude[0], sb.path("project/.claude/skills/hs"))


def test_skill_dir_attribute_is_escaped(sandbox):
    cwd = 'project/we&"i<r>d'
    sb = sandbox({"project/.codex/agents/r.toml": role_toml("r", ["s"])})
    sb.write(skill(cwd + "/.codex/skills", "s"))
    result = codex_run(sb, "r", cwd=cwd)
    got = assert_briefed(result, [("s", body("s"))])
    assert realpath(got.dirs["s"]) == realpath(sb.path(cwd) / ".codex" / "skills" / "s")
    assert '&"i<r>' not in result.context.split("<skill ", 1)[1].split("\n", 1)[0]


# =========================================================================== 6. missing skills

@pytest.mark.parametrize("declared, present", [
    (["ok", "gone1", "gone2"], ["ok"]),
    (["gone1"], []),
    (["gone1", "ok", "tools:gone2"], ["ok"]),
])
def test_missing_skill_aborts(sandbox, declared, present):
    missing = [s for s in declared if s not in present]
    sb = sandbox(dict(pool(*present), **{"project/.codex/agents/r.toml": role_toml("r", declared)}))
    results = sb.run_parts(sb.spawn("r", harness="codex"))
    assert_abort(results[0], "r", missing, absent_bodies=[body(s) for s in present] + ["SECRET-"])
    assert set(results[0].data["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert results[0].data["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    for r in results[1:]:
        assert_nothing(r)


def deny_reason(result):
    hso = (result.data or {}).get("hookSpecificOutput") or {}
    assert hso.get("hookEventName") == "PreToolUse", result
    assert hso.get("permissionDecision") == "deny", result
    assert "updatedInput" not in hso and "updatedInput" not in (result.data or {}), result
    assert set(hso) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}, result
    return hso["permissionDecisionReason"]


GUARD_FILES = {
    "project/.codex/agents/broken.toml": role_toml("broken", ["ok", "gone1", "gone2"]),
    "project/.codex/agents/fine.toml": role_toml("fine", ["ok"]),
    "project/.codex/agents/team/x.toml": role_toml("renamed", ["gone1"]),
    "project/.codex/agents/plugin.toml": role_toml("plugin", ["tools:lint"]),
    "project/.claude/agents/broken.md": agent_md("broken", ["ok", "gone1", "gone2"]),
    "project/.claude/agents/cc-only.md": agent_md("cc-only", ["gone1"]),
    "project/.claude/skills/ok/SKILL.md": skill_md("ok", body("ok")),
    "home/.agents/skills/ok/SKILL.md": skill_md("ok", body("ok")),
    "home/.codex/config.toml": codex_config(plugins=[("tools@mkt", False)]),
}


@pytest.mark.parametrize("tool_name", ["spawn_agent", "collaborationspawn_agent"])
@pytest.mark.parametrize("agent, missing", [
    ("broken", ["gone1", "gone2"]),
    ("renamed", ["gone1"]),
    ("plugin", ["tools:lint"]),
])
def test_guard_denies_spawn_agent(sandbox, tool_name, agent, missing):
    sb = sandbox(dict(GUARD_FILES, **plugin_files()))
    payload = sb.guard(agent, harness="codex")
    payload["tool_name"] = tool_name
    reason = deny_reason(sb.run(payload))
    assert reason.startswith("briefing: agent '%s' references unknown skill(s): %s" % (agent, ", ".join(missing))), reason


def test_guard_reason_same_as_claude_code(sandbox):
    sb = sandbox(GUARD_FILES)
    codex = deny_reason(sb.run(sb.guard("broken", harness="codex")))
    claude = deny_reason(sb.run(sb.guard("broken", harness="claude")))
    prefix = "briefing: agent 'broken' references unknown skill(s): gone1, gone2"
    assert codex.startswith(prefix) and claude.startswith(prefix), (codex, claude)


@pytest.mark.parametrize("tool_input", [
    {"agent_type": "fine", "message": "do it"},
    {"agent_type": "default", "message": "do it"},
    {"agent_type": "explorer", "message": "do it"},
    {"agent_type": "worker", "message": "do it"},
    {"message": "no agent_type means default"},
    {"agent_type": None, "message": "x"},
    {"agent_type": "no-such-role", "message": "x"},
    {"agent_type": "cc-only", "message": "a Claude Code agent is not a Codex role"},
    {"task_name": "t", "message": "V2 without agent_type"},
    {"items": [{"type": "text", "text": "x"}], "agent_type": "fine"},
], ids=["healthy", "default", "explorer", "worker", "none", "null", "unknown", "claude-only", "v2-no-type",
        "items"])
def test_guard_lets_spawn_through(sandbox, tool_input):
    sb = sandbox(GUARD_FILES)
    for tool_name in ("spawn_agent", "collaborationspawn_agent"):
        payload = sb.guard("x", harness="codex")
        payload.update(tool_name=tool_name, tool_input=tool_input)
        assert_nothing(sb.run(payload))


@pytest.mark.parametrize("broken_side", ["claude", "codex"])
def test_guard_shared_name_checks_only_its_own_harness(sandbox, broken_side):
    """A Claude agent and a Codex role called "twin"; only one of them declares a missing skill."""
    sb = sandbox({
        "project/.claude/agents/twin.md": agent_md("twin", ["gone"] if broken_side == "claude" else ["ok"]),
        "project/.claude/skills/ok/SKILL.md": skill_md("ok", body("ok")),
        "project/.codex/agents/twin.toml": role_toml("twin", ["gone"] if broken_side == "codex" else ["ok"]),
        "home/.agents/skills/ok/SKILL.md": skill_md("ok", body("ok")),
    })
    for harness in ("claude", "codex"):
        result = sb.run(sb.guard("twin", harness=harness))
        if harness == broken_side:
            assert deny_reason(result).startswith("briefing: agent 'twin' references unknown skill(s): gone")
        else:
            assert_nothing(result)


def test_claude_guard_ignores_codex_roles(sandbox):
    sb = sandbox(dict(GUARD_FILES, **{"project/.codex/agents/cx-only.toml": role_toml("cx-only", ["gone1"])}))
    assert_nothing(sb.run(sb.guard("cx-only", harness="claude")))


@pytest.mark.parametrize("agent_type", list(BUILTIN_TYPES) + [None, "", "no-such-role"])
def test_builtin_or_unknown_spawn_gets_nothing(sandbox, agent_type):
    sb = sandbox(GUARD_FILES)
    payload = sb.spawn(agent_type, harness="codex")
    for part in (1, PARTS):
        assert_nothing(sb.run(payload, args=("--part", part)))


# =========================================================================== 7. never fails

RAW_STDIN = ["", "not json", "[]", "null", '"SubagentStart"', "{}", b"\xff\xfe{\x00",
             '{"hook_event_name": "SubagentStart"}', '{"hook_event_name": "PreToolUse", "tool_name": "spawn_agent"}']


@pytest.mark.parametrize("stdin", RAW_STDIN)
@pytest.mark.parametrize("args", [(), ("--part", 1), ("--part", 2), ("--part", 0), ("--part", 99), ("--part", "x")])
def test_never_fails_on_bad_stdin(sandbox, stdin, args):
    sb = sandbox({"project/.codex/agents/r.toml": role_toml("r", ["a"])})
    result = sb.run(stdin=stdin, args=args, timeout=20)
    assert result.data is not None or not result.out.strip(), result


PAYLOAD_MUTATIONS = [
    ("agent-int", {"agent_type": 123}),
    ("agent-list", {"agent_type": ["r"]}),
    ("agent-dict", {"agent_type": {"name": "r"}}),
    ("agent-traversal", {"agent_type": "../../../etc/passwd"}),
    ("agent-nul", {"agent_type": "r\x00x"}),
    ("agent-long", {"agent_type": "r" * 5000}),
    ("cwd-missing", {"cwd": None}),
    ("cwd-int", {"cwd": 5}),
    ("cwd-relative", {"cwd": "relative/dir"}),
    ("cwd-nonexistent", {"cwd": "/nonexistent/briefing/xyz"}),
    ("cwd-is-file", {"cwd": "FILE"}),
    ("transcript-int", {"transcript_path": 5}),
    ("transcript-list", {"transcript_path": ["/x/.codex/y"]}),
    ("turn-id-dict", {"turn_id": {}}),
    ("event-int", {"hook_event_name": 7}),
]


@pytest.mark.parametrize("fields", [m[1] for m in PAYLOAD_MUTATIONS], ids=[m[0] for m in PAYLOAD_MUTATIONS])
def test_never_fails_on_odd_payload(sandbox, fields):
    sb = sandbox(dict(pool("a"), **{"project/.codex/agents/r.toml": role_toml("r", ["a"]),
                                    "project/afile": "x"}))
    fields = dict(fields)
    if fields.get("cwd") == "FILE":
        fields["cwd"] = str(sb.path("project/afile"))
    for base in (sb.spawn("r", harness="codex"), sb.guard("r", harness="codex")):
        payload = dict(base)
        for key, value in fields.items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        for args in ((), ("--part", 1)):
            result = sb.run(payload, args=args, timeout=20)
            assert result.data is not None or not result.out.strip(), result


BAD_TREES = [
    ("role-invalid-utf8", {"project/.codex/agents/r.toml": b'# briefing: skills = ["a"]\nname = "r"\n\xff\xfe\n'}),
    ("role-nul-bytes", {"project/.codex/agents/r.toml": b'name = "r"\x00\x00\n# briefing: skills = ["a"]\n'}),
    ("role-is-dir", {"project/.codex/agents/r.toml": DIR}),
    ("role-is-fifo", {"project/.codex/agents/r.toml": Fifo()}),
    ("other-role-is-fifo", {"project/.codex/agents/a.toml": Fifo()}),
    ("agents-symlink-loop", {"project/.codex/agents/loop": Symlink(".")}),
    ("agents-dangling", {"project/.codex/agents/d.toml": Symlink("/nonexistent/briefing.toml")}),
    ("agents-is-file", {"project/.codex/agents": "not a dir"}),
    ("codex-is-file", {"project/.codex": "not a dir"}),
    ("config-malformed", {"project/.codex/config.toml": "[agents.r\nconfig_file = \n"}),
    ("config-binary", {"project/.codex/config.toml": b"\xff\x00\xfe[agents]"}),
    ("config-file-missing", {"project/.codex/config.toml": codex_config(agents=[("r", "nowhere/r.toml")])}),
    ("config-file-dir", {"project/.codex/config.toml": codex_config(agents=[("r", "roles")]),
                         "project/.codex/roles": DIR}),
    ("config-file-fifo", {"project/.codex/config.toml": codex_config(agents=[("r", "r.fifo")]),
                          "project/.codex/r.fifo": Fifo()}),
    ("config-file-wrong-type", {"project/.codex/config.toml": "[agents.r]\nconfig_file = 5\n"}),
    ("config-agents-wrong-type", {"project/.codex/config.toml": 'agents = "r"\n'}),
    ("config-agent-wrong-type", {"project/.codex/config.toml": '[agents]\nr = "x"\n'}),
    ("home-config-malformed", {"home/.codex/config.toml": '[plugins."tools@mkt"\nenabled = tru\n'}),
    ("home-config-enabled-string", {"home/.codex/config.toml": '[plugins."tools@mkt"]\nenabled = "yes"\n'}),
    ("home-config-is-dir", {"home/.codex/config.toml": DIR}),
    ("home-config-fifo", {"home/.codex/config.toml": Fifo()}),
    ("legacy-skills-string", {"project/.codex/agents/r.toml": 'name = "r"\n[briefing]\nskills = "a"\n'}),
    ("legacy-skills-ints", {"project/.codex/agents/r.toml": 'name = "r"\n[briefing]\nskills = [1, 2]\n'}),
    ("legacy-skills-nested", {"project/.codex/agents/r.toml": 'name = "r"\n[briefing]\nskills = [["a"]]\n'}),
    ("legacy-skills-table", {"project/.codex/agents/r.toml": 'name = "r"\n[briefing.skills]\na = 1\n'}),
    ("comment-unterminated", {"project/.codex/agents/r.toml": 'name = "r"\n# briefing: skills = ["a"\n'}),
    ("comment-bare-words", {"project/.codex/agents/r.toml": 'name = "r"\n# briefing: skills = [a, b]\n'}),
    ("comment-not-a-list", {"project/.codex/agents/r.toml": 'name = "r"\n# briefing: skills = 5\n'}),
    ("comment-traversal", {"project/.codex/agents/r.toml": role_toml("r", ["../../../../etc", "/etc/passwd"])}),
    ("comment-empty-name", {"project/.codex/agents/r.toml": role_toml("r", ["", " "])}),
    ("comment-many", {"project/.codex/agents/r.toml": role_toml("r", ["s%d" % i for i in range(500)])}),
    ("name-not-string", {"project/.codex/agents/r.toml": '# briefing: skills = ["a"]\nname = 5\n'}),
    ("unclosed-multiline", {"project/.codex/agents/r.toml": 'name = "r"\nx = """\n# briefing: skills = ["a"]\n'}),
    ("skill-md-is-dir", {"home/.agents/skills/a/SKILL.md": DIR}),
    ("skill-md-fifo", {"home/.agents/skills/a/SKILL.md": Fifo()}),
    ("skill-md-invalid-utf8", {"home/.agents/skills/a/SKILL.md": b"---\nname: a\n---\n\xff\xfe body\n"}),
    ("skill-md-dangling", {"home/.agents/skills/a/SKILL.md": Symlink("/nonexistent/SKILL.md")}),
    ("skill-no-frontmatter-end", {"home/.agents/skills/a/SKILL.md": "---\nname: a\nbody without end\n"}),
    ("plugin-cache-version-is-file", {"home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)]),
                                      "home/.codex/plugins/cache/mkt/tools/0.1.0": "file"}),
    ("plugin-cache-symlink-loop", {"home/.codex/config.toml": codex_config(plugins=[("tools@mkt", True)]),
                                   "home/.codex/plugins/cache/mkt/tools/0.1.0/skills/loop": Symlink(".")}),
]


def run_everything(sb, env=None):
    payloads = [(sb.spawn("r", harness="codex"), ("--part", 1)),
                (sb.spawn("fine", harness="codex"), ("--part", 1)),
                (sb.guard("r", harness="codex"), ())]
    for payload, args in payloads:
        result = sb.run(payload, args=args, env=env, timeout=15)
        assert result.data is not None or not result.out.strip(), result


@pytest.mark.parametrize("tree", [t[1] for t in BAD_TREES], ids=[t[0] for t in BAD_TREES])
def test_never_fails_on_odd_files(sandbox, tree):
    files = {"home/.codex/agents/fine.toml": role_toml("fine", ["ok"]),
             "home/.agents/skills/ok/SKILL.md": skill_md("ok", body("ok")),
             "home/.agents/skills/a/SKILL.md": skill_md("a", body("a"))}
    blocked = {"project/.codex", "project/.codex/agents", "project/.codex/agents/r.toml"}
    if not blocked & set(tree):
        files["project/.codex/agents/r.toml"] = role_toml("r", ["a", "tools:lint"])
    for key in tree:
        files.pop(key, None)
    files.update(tree)
    run_everything(sandbox(files))


@pytest.mark.parametrize("env", [{"CODEX_HOME": ""}, {"CODEX_HOME": "rel/ch"},
                                 {"CODEX_HOME": "/nonexistent/codex-home"}, {"CODEX_HOME": "FILE"},
                                 {"HOME": None}, {"HOME": ""}, {"HOME": "/nonexistent/home"}],
                         ids=["codex-home-empty", "codex-home-relative", "codex-home-missing", "codex-home-file",
                              "no-home", "home-empty", "home-missing"])
def test_never_fails_on_odd_environment(sandbox, env):
    sb = sandbox({"home/.codex/agents/fine.toml": role_toml("fine", ["ok"]),
                  "home/.agents/skills/ok/SKILL.md": skill_md("ok", body("ok")),
                  "project/.codex/agents/r.toml": role_toml("r", ["ok", "tools:lint"]),
                  "project/afile": "x"})
    env = dict(env)
    if env.get("CODEX_HOME") == "FILE":
        env["CODEX_HOME"] = str(sb.path("project/afile"))
    run_everything(sb, env=env)
