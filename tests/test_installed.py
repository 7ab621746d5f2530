"""The doctor's ``installed`` check, per harness (issue 44, docs/doctor.md "Installed").

Each case builds a home where briefing is installed as that harness records it (or not, or
broken), runs ``briefing-doctor --harness H --json`` in-process, and reads its one
``installed`` check. A copy is a folder of links to this checkout's files, plus the manifests
the harness's install leaves; the real installs are tests/e2e/test_installed.py.
"""
import json

import pytest

from conftest import REPO, Symlink

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
OLD = "0.0.1"


def read(rel):
    return (REPO / rel).read_text(encoding="utf-8")


def with_version(rel, version, **fields):
    data = json.loads(read(rel))
    data["version"] = version
    data.update(fields)
    return json.dumps(data)


def unguarded(rel):
    """A hooks file that lost its guard (PreToolUse)."""
    data = json.loads(read(rel))
    del data["hooks"]["PreToolUse"]
    return json.dumps(data)


def copy(at, manifests, hooks_json=None, hooks_src="hooks/hooks.json", built=True):
    """A copy of briefing at ``at``: ``manifests`` {rel: text}, its hooks file, and (``built``)
    the hook itself beside it; without it, a source folder of the repository."""
    files = {"%s/%s" % (at, rel): text for rel, text in manifests.items()}
    files["%s/hooks/hooks.json" % at] = hooks_json if hooks_json is not None else read(hooks_src)
    if built:
        files["%s/hooks/briefing-preload" % at] = Symlink(str(REPO / "hooks" / "briefing-preload"))
        files["%s/hooks/briefing" % at] = Symlink(str(REPO / "hooks" / "briefing"))
    return files


def claude(version=VERSION, enabled=True, hooks_json=None, gone=False, key="briefing@briefing"):
    root = "home/.claude/plugins/cache/briefing/briefing/%s" % version
    files = {} if gone else copy(root, {".claude-plugin/plugin.json": with_version(".claude-plugin/plugin.json",
                                                                                   version)}, hooks_json)
    files["home/.claude/plugins/installed_plugins.json"] = json.dumps({"version": 2, "plugins": {key: [
        {"scope": "user", "installPath": "{root}/" + root, "version": version}]}})
    files["home/.claude/settings.json"] = json.dumps({"enabledPlugins": {key: enabled}})
    return files


def codex(enabled=True, cache=True, trusted=True, hooks_json=None):
    root = "home/.codex/plugins/cache/briefing/briefing/%s" % VERSION
    files = copy(root, {".codex-plugin/plugin.json": read(".codex-plugin/plugin.json"),
                        ".claude-plugin/plugin.json": read(".claude-plugin/plugin.json")},
                 hooks_src="hooks/hooks.codex.json") if cache else {}
    if cache:
        files["%s/hooks/hooks.codex.json" % root] = hooks_json or read("hooks/hooks.codex.json")
    config = '[plugins."briefing@briefing"]\nenabled = %s\n' % ("true" if enabled else "false")
    if trusted:
        events = sorted(json.loads(read("hooks/hooks.codex.json"))["hooks"])
        for event in events:
            snake = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(event))
            config += ('\n[hooks.state."briefing@briefing:hooks/hooks.codex.json:%s:0:0"]\n'
                       'trusted_hash = "sha256:%s"\n' % (snake, "a" * 64))
    files["home/.codex/config.toml"] = config
    return files


def copilot(enabled=True, gone=False, hooks_json=None):
    root = "home/.copilot/installed-plugins/_direct/briefing"
    files = {} if gone else copy(root, {".github/plugin/plugin.json": read(".github/plugin/plugin.json"),
                                        ".claude-plugin/plugin.json": read(".claude-plugin/plugin.json")},
                                 hooks_src="hooks/hooks.copilot.json")
    if hooks_json is not None:
        files["%s/hooks/hooks.copilot.json" % root] = hooks_json
    elif not gone:
        files["%s/hooks/hooks.copilot.json" % root] = read("hooks/hooks.copilot.json")
    files["home/.copilot/config.json"] = json.dumps({"installedPlugins": [
        {"name": "briefing", "enabled": enabled, "cache_path": "{root}/" + root}]})
    return files


def extension(kind, built=True, version=VERSION, disabled=False):
    """An installed Gemini CLI or Qwen Code extension (``kind``: gemini or qwen)."""
    dot = ".gemini" if kind == "gemini" else ".qwen"
    manifest = "%s-extension.json" % kind
    root = "home/%s/extensions/briefing" % dot
    # named as the build names it (the source manifest's name says to build it first)
    files = copy(root, {manifest: with_version("%s/%s" % (kind, manifest), version, name="briefing")},
                 hooks_src="%s/hooks/hooks.json" % kind, built=built)
    if disabled:
        files["home/%s/extensions/extension-enablement.json" % dot] = json.dumps(
            {"briefing": {"overrides": ["!{root}/*"]}})
    return files


def opencode(entry, key="opencode", version=VERSION, built=True, config=None):
    root = "home/.local/share/briefing/briefing-opencode"
    files = {}
    if built:
        files = {"%s/package.json" % root: json.dumps({"name": "briefing-opencode", "version": version,
                                                       "main": "briefing.js"}),
                 "%s/briefing.js" % root: read("opencode/briefing.js"),
                 "%s/hooks/briefing-preload" % root: Symlink(str(REPO / "hooks" / "briefing-preload"))}
    files[config or "project/%s.json" % key] = json.dumps({"plugin": [entry.replace("ROOT", "{root}/" + root)]})
    return files


CASES = [
    # harness, files, status, words in the detail
    ("claude", {}, "WARN", ["not installed", "claude plugin install briefing@briefing", "--plugin-dir"]),
    ("claude", claude(), "ok", ["installed and enabled", "briefing@briefing"]),
    ("claude", claude(enabled=False), "WARN", ["not enabled", "claude plugin enable briefing@briefing"]),
    ("claude", claude(gone=True), "FAIL", ["which is gone"]),
    ("claude", claude(hooks_json=unguarded("hooks/hooks.json")), "FAIL", ["cannot work", "guard"]),
    ("claude", claude(version=OLD), "FAIL", ["older than", OLD]),
    ("codex", {}, "WARN", ["not installed", "codex plugin add briefing@briefing", "trust"]),
    ("codex", codex(), "ok", ["installed and enabled"]),
    ("codex", codex(trusted=False), "WARN", ["not trusted", "/hooks"]),
    ("codex", codex(enabled=False), "WARN", ["not enabled"]),
    ("codex", codex(cache=False), "FAIL", ["no copy of it"]),
    ("codex", codex(hooks_json=unguarded("hooks/hooks.codex.json"), trusted=False), "FAIL", ["cannot work"]),
    ("copilot", {}, "WARN", ["not installed", "copilot plugin install"]),
    ("copilot", copilot(), "ok", ["installed and enabled"]),
    ("copilot", copilot(enabled=False), "WARN", ["disabled"]),
    ("copilot", copilot(gone=True), "FAIL", ["which is gone"]),
    ("copilot", copilot(hooks_json=unguarded("hooks/hooks.copilot.json")), "FAIL", ["cannot work", "guard"]),
    ("gemini", {}, "WARN", ["not installed", "build-gemini-extension", "gemini extensions install"]),
    ("gemini", extension("gemini"), "ok", ["installed and enabled"]),
    ("gemini", extension("gemini", built=False), "FAIL", ["source folder", "gemini extensions uninstall briefing"]),
    ("gemini", extension("gemini", version=OLD), "FAIL", ["older than"]),
    ("gemini", extension("gemini", disabled=True), "WARN", ["not enabled", "gemini extensions enable briefing"]),
    ("qwen", {}, "WARN", ["not installed", "build-qwen-extension", "qwen extensions install"]),
    ("qwen", extension("qwen"), "ok", ["installed and enabled"]),
    ("qwen", extension("qwen", built=False), "FAIL", ["source folder", "build-qwen-extension"]),
    ("qwen", extension("qwen", disabled=True), "WARN", ["not enabled"]),
    ("opencode", {}, "WARN", ["not installed", "build-opencode-plugin", "opencode.json"]),
    ("opencode", opencode("ROOT"), "ok", ["installed and enabled", "opencode.json"]),
    ("opencode", opencode("file://ROOT"), "ok", ["installed and enabled"]),
    ("opencode", opencode("ROOT-typo"), "FAIL", ["does not exist", "briefing-opencode-typo"]),
    ("opencode", opencode("ROOT", version=OLD), "FAIL", ["older than"]),
    ("opencode", opencode("briefing-opencode@1.0.0"), "ok", ["package", "does not look"]),
    ("opencode", opencode("ROOT", key="kilo"), "WARN", ["not installed"]),  # kilo.json is Kilo's
    ("kilo", opencode("ROOT", key="kilo"), "ok", ["installed and enabled", "kilo.json"]),
    ("kilo", opencode("ROOT", key="opencode"), "WARN", ["not installed", "kilo.json"]),
    ("kilo", opencode("ROOT-typo", key="kilo"), "FAIL", ["does not exist"]),
    # where `kilo plugin <folder>` writes it (measured), and `opencode plugin <folder>`
    ("kilo", opencode("ROOT", config="project/.kilo/opencode.json"), "ok", [".kilo/opencode.json"]),
    ("opencode", opencode("ROOT", config="project/.opencode/opencode.json"), "ok", [".opencode/opencode.json"]),
    ("opencode", opencode("ROOT", config="project/.kilo/opencode.json"), "WARN", ["not installed"]),
]


def resolve(files, root):
    """{root} in link targets and JSON texts: the sandbox's own folder."""
    out = {}
    for rel, content in files.items():
        if isinstance(content, str):
            content = content.replace("{root}", root)
        out[rel] = content
    return out


@pytest.mark.parametrize("harness,files,status,words", CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_installed_check(sandbox, harness, files, status, words):
    sb = sandbox()
    sb.write(resolve(files, str(sb.root)))
    result = sb.doctor("--harness", harness, "--json")
    assert "Traceback" not in result.err, result
    data = json.loads(result.out)
    found = [c for c in data["checks"] if c["name"] == "installed"]
    assert len(found) == 1 and found[0]["harness"] == harness, data["checks"]
    check = found[0]
    assert check["status"] == status, check
    for word in words:
        assert word in check["detail"], (word, check)
    assert result.rc == (1 if status == "FAIL" else 0), result
    table = sb.doctor("--harness", harness)
    line = [l for l in table.out.splitlines() if "check  installed %s:" % harness in l]
    assert len(line) == 1 and line[0].startswith(status.ljust(4)), table


def test_the_default_list_is_quiet_about_harnesses_briefing_is_not_installed_in(sandbox):
    """Installed for Claude Code only: the others' installed checks are ok and not printed; installed
    nowhere, each harness says how to install it."""
    sb = sandbox()
    data = json.loads(sb.doctor("--json").out)
    assert {c["harness"]: c["status"] for c in data["checks"] if c["name"] == "installed"} == {
        h: "WARN" for h in ("claude", "codex", "copilot", "gemini", "opencode", "kilo")}, data["checks"]
    sb.write(resolve(claude(), str(sb.root)))
    data = json.loads(sb.doctor("--json").out)
    installed = {c["harness"]: c for c in data["checks"] if c["name"] == "installed"}
    assert installed["claude"]["status"] == "ok" and all(
        c["status"] == "ok" and "not installed" in c["detail"] for h, c in installed.items() if h != "claude")
    table = sb.doctor()
    assert [l for l in table.out.splitlines() if "check  installed" in l] == [
        l for l in table.out.splitlines() if l.startswith("ok    check  installed claude:")], table


@pytest.mark.parametrize("args", [("--harness", "claude"), ("--harness", "codex"), ()],
                         ids=["claude", "codex", "all"])
def test_a_copy_made_for_claude_code_does_not_warn_about_copilot(sandbox, args):
    """The Python distribution's copy carries Claude Code's files alone: no Copilot warning from it."""
    sb = sandbox()
    for rel in (".claude-plugin/plugin.json", "hooks/hooks.json"):
        sb.write({"plugin/" + rel: read(rel)})
    sb.write({"plugin/hooks/briefing-preload": read("hooks/briefing-preload"),
              "plugin/hooks/briefing": Symlink(str(REPO / "hooks" / "briefing"))})
    result = sb.run(stdin="", args=("doctor", "--json") + args, program=sb.path("plugin/hooks/briefing-preload"),
                    check=False)
    checks = json.loads(result.out)["checks"]
    assert not [c for c in checks if c["name"] == "copilot-hooks" and c["status"] != "ok"], checks
