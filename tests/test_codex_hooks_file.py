"""Codex reads a hooks file of its own: one process per event (issue 15), and the
doctor judges a legacy ``[briefing]`` role a failure (issue 14).

``.codex-plugin/plugin.json`` names ``hooks/hooks.codex.json``; Codex then reads
only that file (facts/codex.md §3.1), while Claude Code reads ``hooks/hooks.json``
and adds a manifest path only from ``.claude-plugin/plugin.json`` (facts/claude-code.md
§6.1). Codex delivers one context of any size with ``additionalContextLimit: 0``,
so each event needs one handler, registered without ``--part``. An installed copy
that still has the old single file must keep briefing exactly once.
"""
import json
import os
import shlex
import subprocess

import pytest

from conftest import HOOK_PYTHON, PARTS, REPO, role_toml, skill_md, text_of
from framing import rebuild
import hook_commands

CODEX_FILE = REPO / "hooks" / "hooks.codex.json"
CLAUDE_FILE = REPO / "hooks" / "hooks.json"
EVENTS = ("SessionStart", "PreToolUse", "SubagentStart")
# The events that bring a compacted child's briefing back (issue 26): every tool call, every turn.
AGAIN_EVENTS = ("PostToolUse", "UserPromptSubmit")

# Three skills of 12,000 characters: more than one Claude Code part could carry.
BODIES = {n: text_of(n, 12000) for n in ("big-one", "big-two", "big-three")}


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))["hooks"]


def handlers(hooks, event):
    return [(group.get("matcher"), h) for group in hooks.get(event, []) for h in group["hooks"]
            if "briefing-preload" in h["command"]]


def project(sandbox, **extra):
    files = {"project/.codex/skills/%s/SKILL.md" % n: skill_md(n, b) for n, b in BODIES.items()}
    files["project/.codex/agents/archivist.toml"] = role_toml("archivist", list(BODIES))
    files["project/.codex/agents/broken.toml"] = role_toml("broken", ["big-one", "ghost-skill"])
    files.update(extra)
    return sandbox(files)


def run_registered(sb, hooks, event, payload):
    """Run every ``event`` command of ``hooks`` exactly as registered; returns their parsed outputs."""
    outs = []
    for _, h in handlers(hooks, event):
        proc = hook_commands.run_registered(h["command"], REPO, payload, sb.env(), sb.project, HOOK_PYTHON)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc
        outs.append(json.loads(proc.stdout.decode()) if proc.stdout.strip() else None)
    return outs


def contexts(outs):
    return [(o.get("hookSpecificOutput") or {}).get("additionalContext") for o in outs if o]


# --------------------------------------------------------------------------------------------
# The registration
# --------------------------------------------------------------------------------------------

def test_codex_manifest_names_its_own_file_and_claude_manifest_names_none():
    codex = json.loads((REPO / ".codex-plugin" / "plugin.json").read_text())
    assert os.path.normpath(codex["hooks"]) == os.path.join("hooks", "hooks.codex.json")
    # Claude Code adds a manifest path to hooks/hooks.json: the Claude manifest must name none.
    assert "hooks" not in json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())


@pytest.mark.parametrize("event", EVENTS + AGAIN_EVENTS)
def test_codex_file_has_one_handler_per_event_without_part(event):
    (matcher, h), = handlers(load(CODEX_FILE), event)
    assert "--part" not in h["command"], h
    # The same launcher and hook as the Claude Code guard, so both files stay one program.
    (_, guard), = handlers(load(CLAUDE_FILE), "PreToolUse")
    assert h["command"] == guard["command"]
    if event == "PreToolUse":
        # Codex matches the whole tool name: V1 spawn_agent and V2 collaborationspawn_agent.
        assert matcher == "spawn_agent|collaborationspawn_agent"
        assert "additionalContextLimit" not in h
    else:
        assert matcher in (None, "", "*")
        assert h["additionalContextLimit"] == 0, "Codex cuts a larger context to a preview without it"


def test_codex_file_registers_nothing_else():
    assert sorted(load(CODEX_FILE)) == sorted(EVENTS + AGAIN_EVENTS)
    for event in EVENTS + AGAIN_EVENTS:
        assert len([h for g in load(CODEX_FILE)[event] for h in g["hooks"]]) == 1


# --------------------------------------------------------------------------------------------
# What the Codex commands do, run exactly as registered
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("hooks_file, processes", [(CODEX_FILE, 1), (CLAUDE_FILE, PARTS)],
                         ids=["codex-file", "old-single-file"])
def test_codex_spawn_is_briefed_exactly_once(sandbox, hooks_file, processes):
    """The new file briefs from its one handler; an installed copy with the old single
    file (8 parts) still briefs exactly once, from part 1."""
    sb = project(sandbox)
    hooks = load(hooks_file)
    assert len(handlers(hooks, "SubagentStart")) == processes
    outs = run_registered(sb, hooks, "SubagentStart", sb.spawn("archivist", "codex"))
    found = contexts(outs)
    assert len(found) == 1, found
    assert len(found[0]) > 3 * 12000  # one context, over any per-part budget
    assert rebuild(found).skills == BODIES
    assert sum(1 for o in outs if o and o.get("systemMessage")) == 1  # one audit line


def test_codex_handler_without_part_is_part_one(sandbox):
    sb = project(sandbox)
    whole = sb.run(sb.spawn("archivist", "codex"))
    first = sb.run(sb.spawn("archivist", "codex"), args=("--part", 1))
    assert whole.data == first.data and rebuild([whole.context]).skills == BODIES


@pytest.mark.parametrize("hooks_file", [CODEX_FILE, CLAUDE_FILE], ids=["codex-file", "old-single-file"])
def test_codex_guard_and_abort(sandbox, hooks_file):
    sb = project(sandbox)
    hooks = load(hooks_file)
    denied, = run_registered(sb, hooks, "PreToolUse", sb.guard("broken", "codex"))
    hso = denied["hookSpecificOutput"]
    assert hso["permissionDecision"] == "deny" and "ghost-skill" in hso["permissionDecisionReason"]
    assert run_registered(sb, hooks, "PreToolUse", sb.guard("archivist", "codex")) == [None]
    found = contexts(run_registered(sb, hooks, "SubagentStart", sb.spawn("broken", "codex")))
    assert len(found) == 1 and rebuild(found).aborted and "<skill " not in found[0]


def test_codex_session_start_runs_the_preflight_once(sandbox):
    sb = project(sandbox)
    outs = run_registered(sb, load(CODEX_FILE), "SessionStart",
                          sb.payload("SessionStart", "codex", source="startup"))
    assert len(outs) == 1 and "hookSpecificOutput" not in outs[0], outs
    assert "broken" in outs[0]["systemMessage"] and "ghost-skill" in outs[0]["systemMessage"]


# --------------------------------------------------------------------------------------------
# The doctor's check of the Codex file
# --------------------------------------------------------------------------------------------

def plugin_copy(sb, mutate=None, manifest=None):
    """A copy of the plugin with a changed hooks.codex.json or Codex manifest; returns the hook."""
    codex = json.loads(CODEX_FILE.read_text())
    if mutate:
        mutate(codex["hooks"])
    files = {
        "plugin/hooks/briefing-preload": (REPO / "hooks" / "briefing-preload").read_bytes(),
        "plugin/hooks/hooks.json": CLAUDE_FILE.read_bytes(),
        "plugin/hooks/hooks.codex.json": json.dumps(codex, indent=2),
        "plugin/.claude-plugin/plugin.json": (REPO / ".claude-plugin" / "plugin.json").read_bytes(),
    }
    data = json.loads((REPO / ".codex-plugin" / "plugin.json").read_text())
    if manifest:
        manifest(data)
    files["plugin/.codex-plugin/plugin.json"] = json.dumps(data)
    sb.write(files)
    program = sb.path("plugin/hooks/briefing-preload")
    os.chmod(str(program), 0o755)
    return program


def codex_check(sb, program):
    result = sb.run(stdin="", args=("doctor", "--json"), program=program, check=False)
    assert "Traceback" not in result.err, result
    data = json.loads(result.out)
    check, = [c for c in data["checks"] if c["name"] == "hooks.codex.json"]
    return result, data, check


def _second_subagent_start(hooks):
    hooks["SubagentStart"][0]["hooks"].append(dict(hooks["SubagentStart"][0]["hooks"][0]))


def _with_part(hooks):
    hooks["SubagentStart"][0]["hooks"][0]["command"] += " --part 2"


def _limit_default(hooks):
    hooks["SubagentStart"][0]["hooks"][0]["additionalContextLimit"] = 2500


def _session_limit_off(hooks):
    hooks["SessionStart"][0]["hooks"][0].pop("additionalContextLimit")


def _no_guard(hooks):
    del hooks["PreToolUse"]


def _guard_on_bash(hooks):
    hooks["PreToolUse"][0]["matcher"] = "Bash"


def _guard_bad_regex(hooks):
    hooks["PreToolUse"][0]["matcher"] = "spawn_agent("


def _guard_v1_only(hooks):
    hooks["PreToolUse"][0]["matcher"] = "spawn_agent"


def _guard_on_agent_alias(hooks):
    hooks["PreToolUse"][0]["matcher"] = "Agent"


@pytest.mark.parametrize("mutate, word", [
    (_second_subagent_start, "SubagentStart"),
    (_with_part, "--part"),
    (_limit_default, "additionalContextLimit"),
    (_session_limit_off, "SessionStart"),
    (_no_guard, "PreToolUse"),
    (_guard_on_bash, "spawn_agent"),
    (_guard_bad_regex, "spawn_agent"),
    (_guard_v1_only, "collaborationspawn_agent"),
    (_guard_on_agent_alias, "collaborationspawn_agent"),
], ids=["two-handlers", "part", "limit-2500", "session-limit-absent", "no-guard", "guard-on-bash", "bad-regex",
        "guard-v1-only", "guard-agent-alias"])
def test_broken_codex_file_fails_the_doctor(sandbox, mutate, word):
    sb = project(sandbox)
    result, data, check = codex_check(sb, plugin_copy(sb, mutate))
    assert check["status"] == "FAIL" and word in check["detail"], check
    assert result.rc == 1 and data["ok"] is False
    table = sb.run(stdin="", args=("doctor",), program=plugin_copy(sb, mutate), check=False)
    assert "hooks.codex.json" in table.out and word in table.out, table


@pytest.mark.parametrize("manifest, status, word", [
    (None, "ok", "one handler per event"),
    (lambda m: m.pop("hooks"), "WARN", "hooks/hooks.json"),
    (lambda m: m.update(hooks="../outside.json"), "FAIL", "leaves the plugin"),
    (lambda m: m.update(hooks="./hooks/missing.json"), "FAIL", "cannot read"),
], ids=["as-shipped", "no-hooks-key", "escapes", "missing-file"])
def test_codex_manifest_is_checked(sandbox, manifest, status, word):
    sb = project(sandbox)
    _, _, check = codex_check(sb, plugin_copy(sb, manifest=manifest))
    assert check["status"] == status and word in check["detail"], check


# --------------------------------------------------------------------------------------------
# Hook trust names the file Codex reads
# --------------------------------------------------------------------------------------------

INSTALLED = "home/.codex/plugins/cache/briefing/briefing/0.6.0"
ENABLED = '[plugins."briefing@briefing"]\nenabled = true\n'


def trust(rel, events):
    return "".join('\n[hooks.state."briefing@briefing:%s:%s:0:%d"]\ntrusted_hash = "sha256:%s"\n'
                   'trusted_content_hash = "sha256:%s"\n' % (rel, event, j, "a" * 64, "b" * 64)
                   for event, count in events for j in range(count))


NEW_KEYS = (("session_start", 1), ("pre_tool_use", 1), ("subagent_start", 1), ("post_tool_use", 1),
            ("user_prompt_submit", 1))
# hooks/hooks.json as it is now (Factory Droid's PostToolUse handler included: Codex lists it,
# though its matcher names none of Codex's tools).
OLD_KEYS = (("session_start", PARTS), ("pre_tool_use", 1), ("subagent_start", PARTS), ("post_tool_use", 1))


def installed_copy(layout):
    """The installed plugin's manifest and hooks files: the new layout, or the old single file."""
    files = {INSTALLED + "/hooks/hooks.json": CLAUDE_FILE.read_text()}
    manifest = json.loads((REPO / ".codex-plugin" / "plugin.json").read_text())
    if layout == "new":
        files[INSTALLED + "/hooks/hooks.codex.json"] = CODEX_FILE.read_text()
    else:
        manifest["hooks"] = "./hooks/hooks.json"
    files[INSTALLED + "/.codex-plugin/plugin.json"] = json.dumps(manifest)
    return files


@pytest.mark.parametrize("layout, config, untrusted", [
    ("new", trust("hooks/hooks.codex.json", NEW_KEYS), None),
    ("new", trust("hooks/hooks.json", OLD_KEYS), "hooks/hooks.codex.json"),   # trust given before the update
    ("new", trust("hooks/hooks.codex.json", NEW_KEYS[:2]), "subagent_start"),  # one hook left untrusted
    ("new", "", "hooks/hooks.codex.json"),
    ("old", trust("hooks/hooks.json", OLD_KEYS), None),
    ("old", trust("hooks/hooks.codex.json", NEW_KEYS), "hooks/hooks.json"),
], ids=["new-trusted", "new-old-keys", "new-partly", "new-none", "old-trusted", "old-new-keys"])
def test_trust_check_follows_the_installed_hooks_file(sandbox, layout, config, untrusted):
    files = installed_copy(layout)
    files["home/.codex/config.toml"] = ENABLED + config
    sb = project(sandbox, **files)
    result = sb.doctor("--json", "--harness", "codex")
    check, = [c for c in json.loads(result.out)["checks"] if c["name"] == "codex-hook-trust"]
    if untrusted is None:
        assert check["status"] == "ok", check
    else:
        assert check["status"] == "WARN" and untrusted in check["detail"], check
        assert "briefing@briefing" in check["detail"]


# --------------------------------------------------------------------------------------------
# Issue 14: a legacy [briefing] role is a failure, with the hint; older Codex still gets briefed
# --------------------------------------------------------------------------------------------

LEGACY = 'name = "old_role"\ndescription = "d"\ndeveloper_instructions = "x"\n\n[briefing]\nskills = ["big-one"]\n'


def test_doctor_fails_a_legacy_role_with_the_hint(sandbox):
    sb = project(sandbox, **{"project/.codex/agents/old.toml": LEGACY,
                             "project/.codex/agents/broken.toml": role_toml("broken", ["big-one"])})
    result = sb.doctor("--harness", "codex")
    assert result.rc == 1, result
    assert "FAIL" in result.out and ".codex/agents/old.toml" in result.out, result
    assert "# briefing: skills = [...]" in result.out and "drop" in result.out, result
    data = json.loads(sb.doctor("--json", "--harness", "codex").out)
    old, = [a for a in data["agents"] if a["agent"] == "old_role"]
    assert old["status"] == "FAIL" and any("# briefing:" in p for p in old["problems"]), old
    assert data["ok"] is False


def test_show_fails_a_legacy_role_but_shows_what_older_codex_gets(sandbox):
    sb = project(sandbox, **{"project/.codex/agents/old.toml": LEGACY})
    result = sb.doctor("--show", "old_role", "--harness", "codex", "--json")
    assert result.rc == 1, result
    show, = json.loads(result.out)["shows"]
    assert show["status"] == "FAIL" and "# briefing:" in show["reason"], show
    assert rebuild([p["text"] for p in show["parts"]]).skills == {"big-one": BODIES["big-one"]}


def test_legacy_role_is_still_briefed_at_subagent_start(sandbox):
    """Older Codex versions load the role: the hook keeps briefing it, with the migration message."""
    sb = project(sandbox, **{"project/.codex/agents/old.toml": LEGACY})
    result = sb.run(sb.spawn("old_role", "codex"))
    assert rebuild([result.context]).skills == {"big-one": BODIES["big-one"]}
    assert "# briefing: skills = [...]" in result.system_message


def test_preflight_names_a_legacy_role(sandbox):
    sb = project(sandbox, **{"project/.codex/agents/old.toml": LEGACY,
                             "project/.codex/agents/broken.toml": role_toml("broken", ["big-one"])})
    message = sb.run(sb.payload("SessionStart", "codex", source="startup")).system_message
    assert "old_role" in message and "old.toml" in message and "# briefing:" in message, message
