"""hooks/briefing-marketplace-notice: a once-only SessionStart notice for users who
installed briefing from its own one-plugin marketplace, pointing them to the shared one.

Every run goes through the hook as a separate process (``sb.run(..., program=NOTICE)``),
and every run must exit 0 with nothing at all on stderr.
"""
import importlib.machinery
import importlib.util
import json
import os
import subprocess

import pytest

from conftest import DIR, Fifo, NOTICE, REPO

OWN_MARKETPLACE = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["name"]
VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]


def _load_notice():
    loader = importlib.machinery.SourceFileLoader("briefing_marketplace_notice", str(NOTICE))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


RECOMMENDED = _load_notice().RECOMMENDED_MARKETPLACE


def cache_root(base, marketplace, plugin="briefing", version=VERSION):
    """Relative sandbox path of an installed copy under ``base`` (a Claude Code or Codex dir)."""
    return "%s/plugins/cache/%s/%s/%s" % (base, marketplace, plugin, version)


def install(sb, marketplace=OWN_MARKETPLACE, base="home/.claude", with_manifest=True):
    """Lay out an installed copy and return its absolute root (what CLAUDE_PLUGIN_ROOT holds)."""
    rel = cache_root(base, marketplace)
    files = {rel + "/.claude-plugin/plugin.json": (REPO / ".claude-plugin" / "plugin.json").read_text(),
             rel + "/hooks/hooks.json": (REPO / "hooks" / "hooks.json").read_text()}
    if with_manifest:
        files[rel + "/.claude-plugin/marketplace.json"] = (
            REPO / ".claude-plugin" / "marketplace.json").read_text()
    sb.write(files)
    return str(sb.path(rel))


def notice(sb, payload=None, env=None, **kwargs):
    """Run the notice hook; assert the never-fails contract."""
    if payload is None:
        payload = sb.payload("SessionStart", source="startup")
    result = sb.run(payload, program=NOTICE, env=env, **kwargs)
    assert result.rc == 0, result
    assert result.err == "", result
    return result


def assert_notice(result, install_step=True):
    assert result.data is not None, result
    assert set(result.data) == {"systemMessage"}, result  # top-level only, never model context
    message = result.system_message
    assert "briefing@%s" % RECOMMENDED in message, message
    if install_step:
        assert "/plugin install briefing@%s" % RECOMMENDED in message, message
    assert "briefing@%s" % OWN_MARKETPLACE in message, message
    return message


def assert_silent(result):
    assert result.out == "", result


def state_file(sb, base="home/.claude"):
    return sb.path(base + "/plugins/data/briefing/marketplace-notice.json")


# --- who sees it, and only once ---------------------------------------------------------

@pytest.mark.parametrize("source", ["startup", "resume"])
def test_own_marketplace_install_is_told_once(sandbox, source):
    sb = sandbox()
    root = install(sb)
    env = {"CLAUDE_PLUGIN_ROOT": root}
    first = notice(sb, sb.payload("SessionStart", source=source), env=env)
    message = assert_notice(first)
    assert "once" in message
    assert state_file(sb).is_file()
    # Any later session, whatever its source, hears nothing.
    for again in ("startup", "resume", "startup"):
        assert_silent(notice(sb, sb.payload("SessionStart", source=again), env=env))


def test_notice_names_the_add_command_for_the_recommended_marketplace(sandbox):
    sb = sandbox()
    module = _load_notice()
    message = assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb)}))
    assert module.RECOMMENDED_MARKETPLACE_ADD in message
    assert "/plugin uninstall briefing@%s" % OWN_MARKETPLACE in message


def test_add_step_is_skipped_when_the_recommended_marketplace_is_already_known(sandbox):
    sb = sandbox({"home/.claude/plugins/known_marketplaces.json": json.dumps(
        {RECOMMENDED: {"source": {"source": "directory", "path": "/x"}, "installLocation": "/x"}})})
    module = _load_notice()
    message = assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb)}))
    assert module.RECOMMENDED_MARKETPLACE_ADD not in message


def test_both_installed_says_which_copy_to_remove(sandbox):
    sb = sandbox()
    root = install(sb)
    getty = install(sb, RECOMMENDED)
    sb.write({"home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {
        "briefing@%s" % OWN_MARKETPLACE: [{"scope": "user", "installPath": root, "version": VERSION}],
        "briefing@%s" % RECOMMENDED: [{"scope": "user", "installPath": getty, "version": VERSION}],
    }})})
    message = assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": root}), install_step=False)
    assert "/plugin uninstall briefing@%s" % OWN_MARKETPLACE in message
    assert "/plugin install" not in message
    # The getty copy itself stays silent.
    assert_silent(notice(sb, env={"CLAUDE_PLUGIN_ROOT": getty}))


def test_install_without_marketplace_manifest_still_counts_as_own(sandbox):
    sb = sandbox()
    assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb, with_manifest=False)}))


def test_installed_plugins_json_decides_the_marketplace(sandbox):
    """The registry entry whose installPath is this copy names its marketplace."""
    sb = sandbox()
    root = install(sb, "renamed-dir")
    sb.write({"home/.claude/plugins/installed_plugins.json": json.dumps({"version": 2, "plugins": {
        "briefing@%s" % OWN_MARKETPLACE: [{"scope": "user", "installPath": root + "/"}]}})})
    assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": root}))


def test_claude_config_dir_holds_the_state(sandbox):
    sb = sandbox()
    root = install(sb, base="cfg")
    env = {"CLAUDE_PLUGIN_ROOT": root, "CLAUDE_CONFIG_DIR": str(sb.path("cfg"))}
    assert_notice(notice(sb, env=env))
    assert state_file(sb, "cfg").is_file()
    assert not state_file(sb).exists()
    assert_silent(notice(sb, env=env))


def test_state_is_per_user_not_per_session(sandbox):
    """A shown notice stays shown across versions of the install and other projects."""
    sb = sandbox()
    assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb)}))
    newer = str(sb.path(cache_root("home/.claude", OWN_MARKETPLACE, version="9.9.9")))
    os.makedirs(newer)
    other = sb.path("elsewhere")
    other.mkdir()
    payload = sb.payload("SessionStart", source="startup", cwd=str(other))
    assert_silent(notice(sb, payload, env={"CLAUDE_PLUGIN_ROOT": newer}, cwd=other))


def test_corrupt_state_file_shows_and_repairs(sandbox):
    sb = sandbox({"home/.claude/plugins/data/briefing/marketplace-notice.json": "{not json"})
    env = {"CLAUDE_PLUGIN_ROOT": install(sb)}
    assert_notice(notice(sb, env=env))
    assert json.loads(state_file(sb).read_text())["shown"] is True
    assert_silent(notice(sb, env=env))


# --- when it is silent ------------------------------------------------------------------

def _silent_cases():
    return [
        # (id, how to set up: returns env overrides, payload harness)
        ("plugin-dir checkout", lambda sb: {"CLAUDE_PLUGIN_ROOT": str(REPO)}, "claude"),
        ("plugin-dir elsewhere", lambda sb: {"CLAUDE_PLUGIN_ROOT": str(
            sb.write({"work/briefing/.claude-plugin/plugin.json": "{}"}).path("work/briefing"))}, "claude"),
        ("no CLAUDE_PLUGIN_ROOT (run from the checkout)", lambda sb: {"CLAUDE_PLUGIN_ROOT": None}, "claude"),
        ("recommended marketplace", lambda sb: {"CLAUDE_PLUGIN_ROOT": install(sb, RECOMMENDED)}, "claude"),
        ("some other marketplace", lambda sb: {"CLAUDE_PLUGIN_ROOT": install(sb, "acme-tools")}, "claude"),
        ("codex install", lambda sb: {"CLAUDE_PLUGIN_ROOT": install(sb, OWN_MARKETPLACE, "home/.codex"),
                                      "PLUGIN_ROOT": str(sb.path(cache_root("home/.codex", OWN_MARKETPLACE)))},
         "codex"),
        ("codex install, claude-looking transcript", lambda sb: {
            "CLAUDE_PLUGIN_ROOT": install(sb, OWN_MARKETPLACE, "home/.codex")}, "claude"),
        ("codex install under CODEX_HOME", lambda sb: {
            "CLAUDE_PLUGIN_ROOT": install(sb, OWN_MARKETPLACE, "ch"), "CODEX_HOME": str(sb.path("ch"))}, "claude"),
        ("codex transcript", lambda sb: {"CLAUDE_PLUGIN_ROOT": install(sb)}, "codex"),
    ]


@pytest.mark.parametrize("setup,harness", [c[1:] for c in _silent_cases()], ids=[c[0] for c in _silent_cases()])
def test_silent_and_leaves_no_state(sandbox, setup, harness):
    sb = sandbox()
    env = setup(sb)
    result = notice(sb, sb.payload("SessionStart", harness, source="startup"), env=env)
    assert_silent(result)
    # Staying silent must not use up the one showing.
    assert not state_file(sb).exists()
    assert not sb.path("home/.claude/plugins/data").exists()


def test_codex_transcript_under_custom_codex_home_is_silent(sandbox):
    sb = sandbox()
    payload = sb.payload("SessionStart", source="startup",
                         transcript_path=str(sb.path("ch/sessions/2026/11/30/rollout-x.jsonl")))
    assert_silent(notice(sb, payload, env={"CLAUDE_PLUGIN_ROOT": install(sb),
                                           "CODEX_HOME": str(sb.path("ch"))}))
    assert not state_file(sb).exists()


@pytest.mark.parametrize("source", ["compact", "clear", "", None, 7, ["startup"]])
def test_silent_for_other_sources(sandbox, source):
    sb = sandbox()
    payload = sb.payload("SessionStart")
    if source is not None:
        payload["source"] = source
    assert_silent(notice(sb, payload, env={"CLAUDE_PLUGIN_ROOT": install(sb)}))
    assert not state_file(sb).exists()


@pytest.mark.parametrize("event", ["SubagentStart", "PreToolUse", "UserPromptSubmit", "Stop", None])
def test_silent_for_other_events(sandbox, event):
    sb = sandbox()
    payload = sb.payload(event or "SessionStart", source="startup", agent_type="x")
    if event is None:
        del payload["hook_event_name"]
    assert_silent(notice(sb, payload, env={"CLAUDE_PLUGIN_ROOT": install(sb)}))
    assert not state_file(sb).exists()


# --- the state cannot be written: the notice still shows, every time ---------------------

def _block_with_file(sb):
    sb.write({"home/.claude/plugins/data": "a regular file where a directory belongs\n"})


def _block_with_dir_at_state(sb):
    sb.write({"home/.claude/plugins/data/briefing/marketplace-notice.json": DIR})


def _block_with_dangling_link(sb):
    from conftest import Symlink
    sb.write({"home/.claude/plugins/data/briefing": Symlink(str(sb.path("nowhere/at/all")))})


@pytest.mark.parametrize("block", [_block_with_file, _block_with_dir_at_state, _block_with_dangling_link],
                         ids=["parent-is-a-file", "state-is-a-directory", "dangling-symlink-parent"])
def test_unwritable_state_still_shows_every_time(sandbox, block):
    sb = sandbox()
    env = {"CLAUDE_PLUGIN_ROOT": install(sb)}
    block(sb)
    for _ in range(3):
        message = assert_notice(notice(sb, env=env))
        assert "again" in message  # tells the user why they see it more than once


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_claude_dir_still_shows(sandbox):
    sb = sandbox({"home/.claude/plugins/data": DIR})
    env = {"CLAUDE_PLUGIN_ROOT": install(sb)}
    data = sb.path("home/.claude/plugins/data")
    os.chmod(str(data), 0o500)
    try:
        for _ in range(2):
            assert_notice(notice(sb, env=env))
    finally:
        os.chmod(str(data), 0o700)


def test_state_file_that_is_a_fifo_does_not_hang(sandbox):
    sb = sandbox({"home/.claude/plugins/data/briefing/marketplace-notice.json": Fifo()})
    assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb)}, timeout=10))


@pytest.mark.parametrize("name", ["installed_plugins.json", "known_marketplaces.json"])
def test_registry_fifo_does_not_hang(sandbox, name):
    sb = sandbox({"home/.claude/plugins/" + name: Fifo()})
    assert_notice(notice(sb, env={"CLAUDE_PLUGIN_ROOT": install(sb)}, timeout=10))


# --- never fails ------------------------------------------------------------------------

@pytest.mark.parametrize("stdin", [
    b"", b"   \n", b"{", b"null", b"[]", b"42", b'"SessionStart"', b"\xff\xfe\x00garbage",
    b'{"hook_event_name": "SessionStart", "source": "startup", "transcript_path": 5}',
    b'{"hook_event_name": "SessionStart", "source": "startup", "cwd": null, "transcript_path": null}',
    b'{"hook_event_name": ["SessionStart"], "source": "startup"}',
    b"{" * 100000, b"[" * 100000,
], ids=lambda s: repr(s[:24]))
def test_any_stdin_exits_zero_quietly(sandbox, stdin):
    sb = sandbox()
    result = sb.run(stdin=stdin, program=NOTICE, env={"CLAUDE_PLUGIN_ROOT": install(sb)})
    assert result.rc == 0 and result.err == "", result
    if result.out:  # a payload that still reads as SessionStart/startup may show the notice
        assert_notice(result)


@pytest.mark.parametrize("env", [
    {"HOME": None, "CLAUDE_CONFIG_DIR": "{root}/cfg"},
    {"CLAUDE_PLUGIN_ROOT": ""},
    {"CLAUDE_PLUGIN_ROOT": "relative/plugins/cache/briefing/briefing/1"},
    {"CLAUDE_PLUGIN_ROOT": "/"},
    {"CLAUDE_PLUGIN_ROOT": "/plugins/cache"},
    {"CLAUDE_CONFIG_DIR": "/proc/definitely/not/writable"},
    {"CODEX_HOME": ""},
], ids=lambda e: repr(e))
def test_odd_environment_exits_zero_quietly(sandbox, env):
    sb = sandbox()
    merged = {"CLAUDE_PLUGIN_ROOT": install(sb)}
    merged.update({k: v.replace("{root}", str(sb.root)) if isinstance(v, str) else v for k, v in env.items()})
    result = sb.run(sb.payload("SessionStart", source="startup"), program=NOTICE, env=merged)
    assert result.rc == 0 and result.err == "", result
    if result.out:
        assert_notice(result)


def test_closed_stdout_is_not_an_error(sandbox):
    sb = sandbox()
    argv = [__import__("conftest").HOOK_PYTHON, str(NOTICE)]
    proc = subprocess.run(argv, input=json.dumps(sb.payload("SessionStart", source="startup")).encode(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=sb.env(CLAUDE_PLUGIN_ROOT=install(sb)), cwd=str(sb.project), timeout=30)
    assert proc.returncode == 0 and proc.stderr == b""


# --- packaging --------------------------------------------------------------------------

def test_notice_is_executable_and_registered_on_session_start():
    assert os.access(str(NOTICE), os.X_OK)
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for group in hooks["SessionStart"] for h in group["hooks"]]
    assert any("briefing-marketplace-notice" in c and "${CLAUDE_PLUGIN_ROOT}" in c for c in commands)
    for event, groups in hooks.items():
        if event != "SessionStart":
            assert not any("briefing-marketplace-notice" in h["command"] for g in groups for h in g["hooks"])


def test_recommended_marketplace_is_defined_in_exactly_one_place():
    definers = []
    for path in REPO.rglob("*"):
        parts = set(path.relative_to(REPO).parts)
        if parts & {".git", ".venv", ".e2e", "node_modules", "__pycache__", ".pytest_cache"}:
            continue
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "RECOMMENDED_MARKETPLACE = " in text and path.suffix != ".md":
            definers.append(path)
    definers = [p for p in definers if p.resolve() != (REPO / "tests" / "test_marketplace_notice.py").resolve()]
    assert definers == [NOTICE]
