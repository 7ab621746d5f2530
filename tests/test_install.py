"""What a user installs (issue 28): no links anywhere, one template for every command, and a
Gemini CLI extension that is built from the checkout and works once the checkout is gone.
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from conftest import HOOK_PYTHON, REPO, build_gemini_extension, skill_md
from hook_commands import HOOKS_FILES, briefing_handlers, first_attempt, run_registered, script_module

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
build = build_gemini_extension


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """A second build, into a folder holding a file of the user's and a stale earlier build:
    (that folder, the extension, the archive). Two tests read it, so the build runs once."""
    out = tmp_path_factory.mktemp("gemini-again")
    (out / "keep.txt").write_text("mine")
    (out / "briefing").mkdir()
    (out / "briefing" / "stale-file").write_text("old build")
    return (out,) + build(out)


def tree(root):
    """{relative path: bytes} of every file under ``root``, __pycache__ left out."""
    out = {}
    for folder, dirs, files in os.walk(str(root)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, str(root))] = f.read()
    return out


# --------------------------------------------------------------------------------------- no links

def test_no_tracked_file_is_a_symlink():
    """A Windows checkout without developer mode turns a link into a text file holding its target."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-s"], stdout=subprocess.PIPE,
                            universal_newlines=True, check=True).stdout.splitlines()
    if not listed:
        pytest.skip("not a git checkout")
    links = [line.split("\t", 1)[1] for line in listed if line.startswith("120000 ")]
    assert links == [], links


@pytest.mark.parametrize("rel", ["bin/briefing-doctor", "hooks/briefing-preload", "hooks/briefing-python"])
def test_entry_points_are_plain_files(rel):
    path = REPO / rel
    assert path.is_file() and not path.is_symlink(), rel
    assert os.access(str(path), os.X_OK), rel


# ----------------------------------------------------------------------------------- the commands

def test_every_command_is_written_from_the_one_template():
    proc = subprocess.run([HOOK_PYTHON, str(REPO / "scripts" / "hook-commands"), "--check"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("rel", HOOKS_FILES)
def test_the_fast_path_comes_first_and_the_part_last(rel):
    for event, _, handler in briefing_handlers(REPO / rel):
        command = handler["command"]
        first = first_attempt(command)
        assert first[:4] == ["python3", "-I", "-S", "-B"] and first[4].endswith("/hooks/briefing-preload"), command
        tail = first[-2:] if rel == "hooks/hooks.json" and event not in ("PreToolUse", "PostToolUse") else []
        if tail:
            assert tail[0] == "--part", command
        # The fallback gets the first attempt's status and the same --part; a vanished folder is
        # told apart from a failing hook by the fallback's own file (issue 36).
        fallback = '/hooks/briefing-python" $s%s;' % "".join(" " + w for w in tail)
        assert fallback in command and 'if [ -f "' in command.split(" || ", 1)[1], command


@pytest.mark.parametrize("rel, key", [("hooks/hooks.codex.json", "commandWindows"),
                                      ("hooks/hooks.copilot.json", "powershell")])
def test_a_windows_command_where_the_harness_takes_one(rel, key):
    """Codex reads commandWindows, Copilot CLI powershell (both measured as known keys, see
    docs/windows.md); Claude Code has no such key, and runs its one command in Git Bash."""
    for _, _, handler in briefing_handlers(REPO / rel):
        windows = handler[key]
        assert windows.startswith("$h = $env:CLAUDE_PLUGIN_ROOT + '/hooks/briefing-preload'"), windows
        for name in ("'python3', 'python', 'py'", "@('-3')", "exit $LASTEXITCODE"):
            assert name in windows, name
    for _, _, handler in briefing_handlers(REPO / "hooks" / "hooks.json"):
        assert set(handler) <= {"type", "command", "timeout", "additionalContextLimit"}, handler


# ------------------------------------------------------------------------------ the Gemini extension

def test_the_built_folder_is_a_whole_extension_of_real_files(gemini_build):
    ext, _ = gemini_build
    manifest = json.loads((ext / "gemini-extension.json").read_text())
    source = json.loads((REPO / "gemini" / "gemini-extension.json").read_text())
    assert manifest == dict(source, version=VERSION)
    assert not [p for p in ext.rglob("*") if p.is_symlink()]
    files = tree(ext)
    assert files["hooks/hooks.json"] == (REPO / "gemini" / "hooks" / "hooks.json").read_bytes()
    for rel in ("hooks/briefing-preload", "hooks/briefing-python", "LICENSE"):
        assert files[rel] == (REPO / rel).read_bytes(), rel
    package = {k: v for k, v in tree(REPO / "hooks" / "briefing").items() if k.endswith(".py")}
    assert {k[len("hooks/briefing/"):]: v for k, v in files.items() if k.startswith("hooks/briefing/")} == package
    assert {k[len("skills/"):]: v for k, v in files.items() if k.startswith("skills/")} == tree(REPO / "skills")
    assert os.access(str(ext / "hooks" / "briefing-preload"), os.X_OK)


def test_the_built_bytecode_is_current_and_checked(gemini_build):
    ext, _ = gemini_build
    source = ext / "hooks" / "briefing" / "main.py"
    # beside the source (cache_from_source would answer the tests' own pycache_prefix)
    pyc = str(source.parent / "__pycache__" / ("main.%s.pyc" % sys.implementation.cache_tag))
    if not os.path.exists(pyc):
        pytest.skip("the build found no bytecode for this interpreter")
    proc = subprocess.run([HOOK_PYTHON, "-I", "-c", (
        "import importlib.util, sys; data = open(sys.argv[1], 'rb').read(); src = open(sys.argv[2], 'rb').read();"
        "print(data[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(data[4:8], 'little') == 3"
        " and data[8:16] == importlib.util.source_hash(src))"), pyc, str(source)],
        stdout=subprocess.PIPE, universal_newlines=True)
    assert proc.stdout.strip() == "True", proc


def test_the_archive_holds_the_folder_with_the_manifest_at_its_root(gemini_build, tmp_path):
    ext, tarball = gemini_build
    with tarfile.open(str(tarball)) as tar:
        names = tar.getnames()
        assert names[0] == "gemini-extension.json"
        assert not any(n.startswith(("/", "..", "briefing/")) for n in names)
        assert all(m.isfile() or m.isdir() for m in tar.getmembers()), "links or devices in the archive"
        # the "data" filter (Python 3.14's default) refuses links out, devices and odd modes
        tar.extractall(str(tmp_path / "x"), **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    got = {k: v for k, v in tree(tmp_path / "x").items()}
    assert got == tree(ext)
    assert os.access(str(tmp_path / "x" / "hooks" / "briefing-preload"), os.X_OK)


def test_the_archive_is_reproducible(gemini_build, rebuilt):
    _, tarball = gemini_build
    _, _, again = rebuilt
    assert again.read_bytes() == tarball.read_bytes()
    with gzip.open(str(again)) as f:
        assert f.read(1)


def test_the_checkouts_bytecode_is_copied_only_where_every_module_is_current(tmp_path):
    """A build copies the checkout's bytecode of a version (scripts/build-bytecode's, checked by
    tests/test_bytecode.py) instead of starting that interpreter to compile, and only when every
    module's is there and current; otherwise that version compiles, as before."""
    script = script_module("build-gemini-extension")
    package = tmp_path / "briefing"
    shutil.copytree(str(REPO / "hooks" / "briefing"), str(package),
                    ignore=shutil.ignore_patterns("__pycache__"))
    tag = sys.implementation.cache_tag
    assert script.copy_checked_bytecode(str(package), tag)
    copied = sorted(package.rglob("*.%s.pyc" % tag))
    assert copied and all(p.read_bytes() == (REPO / "hooks" / "briefing" / p.relative_to(package)).read_bytes()
                          for p in copied)
    shutil.rmtree(str(package))
    shutil.copytree(str(REPO / "hooks" / "briefing"), str(package), ignore=shutil.ignore_patterns("__pycache__"))
    with open(str(package / "text.py"), "a") as f:
        f.write("# changed after scripts/build-bytecode\n")
    assert not script.copy_checked_bytecode(str(package), tag)  # one stale module: that version compiles
    assert not list(package.rglob("*.pyc"))
    assert not script.copy_checked_bytecode(str(package), "cpython-399")  # none shipped for it


def test_the_extension_works_once_the_checkout_is_gone(gemini_build, sandbox, tmp_path):
    """A copy of the built folder, far from the checkout: its guard denies, its rewrite briefs, and
    every module it imports is its own (from its own bytecode where there is one)."""
    ext, _ = gemini_build
    copy = tmp_path / "elsewhere" / "briefing"
    shutil.copytree(str(ext), str(copy))
    sb = sandbox({"home/.gemini/skills/alpha/SKILL.md": skill_md("alpha", "ALPHA-BODY\n"),
                  "home/.gemini/agents/rev.md": "---\nname: rev\ndescription: r\n---\nReview.\n"
                  "<!-- briefing: skills = [\"alpha\"] -->\n",
                  "home/.gemini/agents/broken.md": "---\nname: broken\ndescription: b\n---\nBreak.\n"
                  "<!-- briefing: skills = [\"alpha\", \"ghost-skill\"] -->\n"})
    env = sb.env(GEMINI_SESSION_ID="g-1", GEMINI_PROJECT_DIR=str(sb.project), CLAUDE_PROJECT_DIR=str(sb.project))
    (guard,) = [h["command"] for e, _, h in briefing_handlers(copy / "hooks" / "hooks.json") if e == "BeforeTool"]

    def spawn(name):
        return {"session_id": "g-1", "cwd": str(sb.project), "hook_event_name": "BeforeTool",
                "transcript_path": str(sb.home / ".gemini" / "tmp" / "p" / "chats" / "s.jsonl"),
                "tool_name": "invoke_agent", "tool_input": {"agent_name": name, "prompt": "TASK"}}

    bash = shutil.which("bash") or "/bin/sh"
    denied = run_registered(guard, copy, spawn("broken"), env, sb.project, HOOK_PYTHON, shell=bash)
    assert denied.returncode == 0 and json.loads(denied.stdout)["decision"] == "deny", denied
    briefed = run_registered(guard.replace("python3 -I -S -B", "python3 -v -I -S -B", 1), copy, spawn("rev"),
                             env, sb.project, HOOK_PYTHON, shell=bash)
    prompt = json.loads(briefed.stdout)["hookSpecificOutput"]["tool_input"]["prompt"]
    assert "ALPHA-BODY" in prompt and prompt.endswith("\n\nTASK")
    imported = [line for line in briefed.stderr.decode().splitlines() if "briefing" in line and (
        "code object from" in line or "matches" in line)]
    assert imported and all(str(copy) in line for line in imported), imported
    assert not any(str(REPO) in line for line in briefed.stderr.decode().splitlines() if "import" in line)


def test_the_doctor_judges_the_built_extensions_hooks_file(gemini_build, tmp_path):
    from conftest import load_hook
    hook = load_hook("briefing_preload_install")
    ext, _ = gemini_build
    check = hook.gemini_hooks_check(str(ext))
    assert check["status"] == "ok" and "invoke_agent guard" in check["detail"], check
    broken = tmp_path / "briefing"
    shutil.copytree(str(ext), str(broken))
    hooks_file = broken / "hooks" / "hooks.json"
    data = json.loads(hooks_file.read_text())
    data["hooks"]["BeforeTool"][0]["matcher"] = "invoke_agent"
    hooks_file.write_text(json.dumps(data))
    assert hook.gemini_hooks_check(str(broken))["status"] == "FAIL"


def test_the_doctor_of_the_built_extension_checks_only_what_it_carries(gemini_build, tmp_path):
    """Run from an installed extension, the doctor knows its version, passes its own hooks file,
    and says the copy is no Claude Code, Codex or Copilot CLI plugin, rather than failing them."""
    ext, _ = gemini_build
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}

    def doctor(*args):
        return subprocess.run([HOOK_PYTHON, str(ext / "hooks" / "briefing-preload"), "doctor"] + list(args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=env, cwd=str(tmp_path), timeout=60)
    version = doctor("--version")
    assert (version.returncode, version.stdout) == (0, "briefing-doctor %s\n" % VERSION), version
    report = doctor("--json")
    assert report.returncode == 0, report
    checks = {c["name"]: c for c in json.loads(report.stdout)["checks"]}
    assert all(c["status"] == "ok" for c in checks.values() if c["name"] != "installed"), checks
    assert "invoke_agent guard" in checks["gemini hooks.json"]["detail"], checks
    for name, label in (("hooks.json", "Claude Code"), ("hooks.codex.json", "Codex"),
                        ("copilot-hooks", "Copilot CLI")):
        assert checks[name]["detail"].startswith("this copy of briefing is no %s plugin" % label), checks[name]


def test_the_build_replaces_only_its_own_outputs(rebuilt):
    tmp_path, ext, tarball = rebuilt
    assert (tmp_path / "keep.txt").read_text() == "mine"
    assert not (ext / "stale-file").exists() and tarball.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["keep.txt", "briefing", tarball.name])
    assert glob.glob(str(ext / "hooks" / "briefing" / "__pycache__" / "*.pyc"))


def test_the_release_workflow_attaches_the_one_archive_the_build_writes():
    """Gemini CLI takes an asset whose name names no platform only when it is the release's only one."""
    text = (REPO / ".github" / "workflows" / "release.yml").read_text()
    assert "python3 scripts/build-gemini-extension dist" in text
    uploads = [line for line in text.splitlines() if "gh release" in line and "dist/" in line]
    assert uploads and all("dist/briefing-gemini-*.tar.gz" in line and line.count("dist/") == 1
                           for line in uploads), uploads
    assert 'tags: ["v*"]' in text
